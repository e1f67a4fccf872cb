/* bench_cnn: one training step of examples/train_cnn's CNN (batch 64, 1x28x28, conv 1->8,
 * pool, conv 8->16, pool, linear 784->10, cross-entropy; forward + backward + SGD update in
 * place) on autodiff(cpu), and the share of its time in the conv ops (forward, input and
 * weight gradients), the pool ops (forward and backward) and the rest. Random inputs.
 * With --load, also the step under a competing load (bench_load.h) against the step
 * without, round by round, and PyTorch's same step (bench/torch_ref.py) in both states.
 * With --dtype bf16 or f16, also the step under autocast in that dtype (docs/dtypes.md
 * section 9: the parameters stay f32) against the f32 step, interleaved round by round in
 * one run, and their ratio (the median of the rounds' ratios). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "bench_load.h"
#include "td_ops.h"
#include "td_optim.h"

#define BATCH 64

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* CPU time of the process (all its threads): on a busy machine, with one thread, close to
 * what the wall clock would show on a quiet one. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void check(td_status st, const char *what)
{
    if (st != TD_OK) {
        fprintf(stderr, "bench_cnn: %s: %s\n", what, td_last_error());
        exit(1);
    }
}

static const int64_t ONE[] = { 1, 1 }, TWO[] = { 2, 2 }, ZERO[] = { 0, 0 };

enum { W1, B1, W2, B2, W3, B3, NPARAMS };

typedef struct net {
    td_tensor *p[NPARAMS];
    td_tensor *x, *y; /* autodiff device, untracked */
    td_optim *opt;
} net;

static void step(net *m)
{
    td_tensor *t[20] = { NULL };
    const int64_t flat[] = { BATCH, 784 };
    int k = 0;
    check(td_float_conv2d(m->x, m->p[W1], m->p[B1], ONE, 2, ONE, 2, ONE, 2, 1, &t[k]), "conv2d"), k++;
    check(td_float_relu(t[k - 1], &t[k]), "relu"), k++;
    check(td_float_max_pool2d(t[k - 1], TWO, 2, TWO, 2, ZERO, 2, ONE, 2, &t[k]), "max_pool2d"), k++;
    check(td_float_conv2d(t[k - 1], m->p[W2], m->p[B2], ONE, 2, ONE, 2, ONE, 2, 1, &t[k]), "conv2d"), k++;
    check(td_float_relu(t[k - 1], &t[k]), "relu"), k++;
    check(td_float_max_pool2d(t[k - 1], TWO, 2, TWO, 2, ZERO, 2, ONE, 2, &t[k]), "max_pool2d"), k++;
    check(td_float_reshape(t[k - 1], flat, 2, &t[k]), "reshape"), k++;
    check(td_float_linear(t[k - 1], m->p[W3], m->p[B3], &t[k]), "linear"), k++;
    const int logits = k - 1;
    check(td_float_max_dim(t[logits], 1, &t[k]), "max_dim"), k++;
    check(td_detach(t[k - 1], &t[k]), "detach"), k++;
    check(td_float_sub(t[logits], t[k - 1], &t[k]), "sub"), k++;
    const int shifted = k - 1;
    check(td_float_exp(t[shifted], &t[k]), "exp"), k++;
    check(td_float_sum_dim(t[k - 1], 1, &t[k]), "sum_dim"), k++;
    check(td_float_log(t[k - 1], &t[k]), "log"), k++;
    check(td_float_sub(t[shifted], t[k - 1], &t[k]), "sub"), k++;
    check(td_float_mul(t[k - 1], m->y, &t[k]), "mul"), k++;
    check(td_float_sum(t[k - 1], &t[k]), "sum"), k++;
    check(td_float_mul_scalar(t[k - 1], -1.0f / BATCH, &t[k]), "mul_scalar"), k++;
    td_grads *g = NULL;
    check(td_backward(t[k - 1], &g), "backward");
    check(td_optim_step(m->opt, g), "optim_step");
    float loss;
    check(td_float_into_data(t[k - 1], &loss, 1), "into_data");
    td_grads_release(g);
    for (int i = 0; i < k; i++)
        td_tensor_release(t[i]);
}

/* The module ops of one step, run on the inner device with the step's shapes. */
typedef struct parts {
    td_tensor *x, *w1, *b1, *c1, *g1, *w2, *b2, *p1, *c2, *g2, *g1p, *g2p;
} parts;

static double time_conv(const parts *q, double *cpu)
{
    double t0 = now_ms(), c0 = cpu_ms();
    td_tensor *r[5] = { NULL };
    check(td_float_conv2d(q->x, q->w1, q->b1, ONE, 2, ONE, 2, ONE, 2, 1, &r[0]), "conv2d");
    check(td_float_conv2d(q->p1, q->w2, q->b2, ONE, 2, ONE, 2, ONE, 2, 1, &r[1]), "conv2d");
    check(td_float_conv2d_backward_weight(q->g1, q->x, q->w1, ONE, 2, ONE, 2, ONE, 2, 1, &r[2]), "backward_weight");
    check(td_float_conv2d_backward_weight(q->g2, q->p1, q->w2, ONE, 2, ONE, 2, ONE, 2, 1, &r[3]), "backward_weight");
    check(td_float_conv2d_backward_input(q->g2, q->w2, q->p1, ONE, 2, ONE, 2, ONE, 2, 1, &r[4]), "backward_input");
    double t = now_ms() - t0;
    *cpu += cpu_ms() - c0;
    for (int i = 0; i < 5; i++)
        td_tensor_release(r[i]);
    return t;
}

static double time_pool(const parts *q, double *cpu)
{
    double t0 = now_ms(), c0 = cpu_ms();
    td_tensor *r[4] = { NULL };
    check(td_float_max_pool2d(q->c1, TWO, 2, TWO, 2, ZERO, 2, ONE, 2, &r[0]), "max_pool2d");
    check(td_float_max_pool2d(q->c2, TWO, 2, TWO, 2, ZERO, 2, ONE, 2, &r[1]), "max_pool2d");
    check(td_float_max_pool2d_backward(q->c1, q->g1p, TWO, 2, TWO, 2, ZERO, 2, ONE, 2, &r[2]), "pool_backward");
    check(td_float_max_pool2d_backward(q->c2, q->g2p, TWO, 2, TWO, 2, ZERO, 2, ONE, 2, &r[3]), "pool_backward");
    double t = now_ms() - t0;
    *cpu += cpu_ms() - c0;
    for (int i = 0; i < 4; i++)
        td_tensor_release(r[i]);
    return t;
}

static td_tensor *rnd(td_device *d, const int64_t *s, int nd, float lo, float hi, uint64_t seed)
{
    td_tensor *t = NULL;
    check(td_float_random(d, s, nd, TD_UNIFORM, lo, hi, seed, &t), "random");
    return t;
}

/* --dtype D (or --dtype=D), taken out of argv: TD_F32 when absent, -1 when bad. */
static int dtype_flag(int *argc, char **argv)
{
    int found = TD_F32, j = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--dtype") == 0 && i + 1 < *argc)
            v = argv[++i];
        else if (strncmp(argv[i], "--dtype=", 8) == 0)
            v = argv[i] + 8;
        else if (strcmp(argv[i], "--dtype") == 0)
            v = "";
        if (v == NULL) {
            argv[j++] = argv[i];
            continue;
        }
        found = strcmp(v, "bf16") == 0 ? TD_BF16 : strcmp(v, "f16") == 0 ? TD_F16 : -1;
    }
    *argc = j;
    argv[j] = NULL;
    return found;
}

static void line(const char *what, const bench_rounds *r);

/* The step with autocast off (f32) and on (dt), alternating round by round. */
static void autocast_rows(net *m, td_device *ad, td_dtype dt, const bench_opts *o)
{
    const long iters = (long)(50 * o->scale) + 1;
    bench_rounds f = { 0 }, l = { 0 }, ratio = { 0 };
    check(td_autodiff_set_autocast(ad, dt), "set_autocast");
    for (long i = 0; i < iters / 5 + 1; i++) /* warm up the other dtype's buffers too */
        step(m);
    for (int r = 0; r < o->rounds; r++) {
        check(td_autodiff_set_autocast(ad, TD_F32), "set_autocast");
        double t0 = now_ms();
        for (long i = 0; i < iters; i++)
            step(m);
        const double a = (now_ms() - t0) / (double)iters;
        check(td_autodiff_set_autocast(ad, dt), "set_autocast");
        t0 = now_ms();
        for (long i = 0; i < iters; i++)
            step(m);
        const double b = (now_ms() - t0) / (double)iters;
        bench_add(&f, a);
        bench_add(&l, b);
        bench_add(&ratio, b / a);
    }
    check(td_autodiff_set_autocast(ad, TD_F32), "set_autocast");
    double load[3] = { 0 };
    FILE *la = fopen("/proc/loadavg", "r");
    if (la == NULL || fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
        load[0] = load[1] = load[2] = -1;
    if (la != NULL)
        fclose(la);
    printf("autocast %s against f32, the same step, rounds alternating (load average %.2f %.2f %.2f); ms:\n",
           td_dtype_name(dt), load[0], load[1], load[2]);
    line("step, f32", &f);
    char what[64];
    snprintf(what, sizeof what, "step, autocast %s", td_dtype_name(dt));
    line(what, &l);
    printf("    autocast %s / f32: %.2f (median of the rounds' ratios; the CPU runs %s convs and matmuls "
           "via f32, so the casts are extra work)\n",
           td_dtype_name(dt), bench_median(&ratio), td_dtype_name(dt));
}

static void line(const char *what, const bench_rounds *r)
{
    char buf[96];
    printf("    %-44s %s\n", what, bench_fmt(r, buf, sizeof buf));
}

static void step_cb(void *m)
{
    step((net *)m);
}

/* Rounds of `iters` steps, each round without the load and then with it; the figures are
 * medians over rounds, the ratio loaded / unloaded the median of each round's ratio. Then
 * PyTorch's step (torch_ref.py, 2 threads) without and with the same load. */
static void under_load(net *m, const bench_opts *o)
{
    const long iters = (long)(20 * o->scale) + 1;
    bench_rounds un = { 0 }, lo = { 0 }, ratio = { 0 };
    int spinners = 0, met = 0;
    for (int r = 0; r < o->rounds; r++) {
        if (r > 0)
            bench_load_settle(step_cb, m); /* the library's busy holds expire first */
        double t0 = now_ms();
        for (long i = 0; i < iters; i++)
            step(m);
        const double u = (now_ms() - t0) / (double)iters;
        spinners = bench_load_start();
        if (spinners == 0)
            return;
        t0 = now_ms();
        for (long i = 0; i < iters; i++)
            step(m);
        const double l = (now_ms() - t0) / (double)iters;
        bench_load_stop();
        bench_add(&un, u);
        bench_add(&lo, l);
        bench_add(&ratio, l / u);
        met += l <= 3.0 * u;
    }
    printf("under load: %d spinning processes (one per processor, %s), %d threads (td_get_num_threads); ms per step: "
           "median [min-max] of %d rounds of %ld\n",
           spinners, bench_load_kind(), td_get_num_threads(), o->rounds, iters);
    line("step, no load", &un);
    line("step, loaded", &lo);
    char v[96];
    printf("    loaded / unloaded: %.2f (median of the rounds' ratios); target <= 3: %s\n", bench_median(&ratio),
           bench_verdict(met, o->rounds, v, sizeof v));
    if (!bench_torch_available()) {
        printf("PyTorch reference: skipped (" BENCH_TORCH_PY " cannot import torch)\n");
        return;
    }
    bench_torch_figs f;
    if (!bench_torch_figures(TD_TORCH_REF, "cnn", o->rounds, iters, &f)) {
        printf("PyTorch reference: failed (see stderr)\n");
        return;
    }
    const double ou = bench_median(&un), ol = bench_median(&lo);
    printf("PyTorch 1.13 (torch_ref.py, 2 threads), same step, ms: no load %.3f, loaded %.3f; with "
           "OMP_WAIT_POLICY=passive: %.3f, %.3f\n",
           f.def_un, f.def_lo, f.pas_un, f.pas_lo);
    const double bu = f.def_un < f.pas_un ? f.def_un : f.pas_un, bl = f.def_lo < f.pas_lo ? f.def_lo : f.pas_lo;
    printf("    ours / PyTorch as it comes: no load %.2f, loaded %.2f; ours / PyTorch's better of the two: %.2f, %.2f; "
           "target <= 0.5 (against the better): %s no load, %s loaded\n",
           ou / f.def_un, ol / f.def_lo, ou / bu, ol / bl, ou <= 0.5 * bu ? "met" : "NOT met",
           ol <= 0.5 * bl ? "met" : "NOT met");
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 7 };
    const bool load = bench_load_flag(&argc, argv);
    const int autocast = dtype_flag(&argc, argv);
    if (autocast < 0) {
        fprintf(stderr, "bench_cnn: --dtype takes bf16 or f16 (see --help)\n");
        return 2;
    }
    const int parsed = bench_parse(argc, argv, "bench_cnn",
                                   "Times one training step of the Fashion-MNIST CNN (batch 64) on autodiff(cpu), "
                                   "and its conv and pool ops alone.",
                                   false, &o);
    if (parsed > 0) {
        bench_load_help();
        printf("  --dtype D    also the step under autocast D (bf16 or f16) against the f32 step, and\n"
               "               their ratio\n");
    }
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *cpu = NULL, *ad = NULL;
    check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "device_open");
    check(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad), "device_autodiff");

    static const int64_t sx[] = { BATCH, 1, 28, 28 }, sw1[] = { 8, 1, 3, 3 }, sb1[] = { 8 }, sw2[] = { 16, 8, 3, 3 },
                         sb2[] = { 16 }, sw3[] = { 784, 10 }, sb3[] = { 10 }, sy[] = { BATCH, 10 };
    net m = { .opt = NULL };
    m.p[W1] = rnd(ad, sw1, 4, -0.4f, 0.4f, 1);
    m.p[B1] = rnd(ad, sb1, 1, -0.1f, 0.1f, 2);
    m.p[W2] = rnd(ad, sw2, 4, -0.15f, 0.15f, 3);
    m.p[B2] = rnd(ad, sb2, 1, -0.1f, 0.1f, 4);
    m.p[W3] = rnd(ad, sw3, 2, -0.035f, 0.035f, 5);
    m.p[B3] = rnd(ad, sb3, 1, -0.1f, 0.1f, 6);
    for (int i = 0; i < NPARAMS; i++)
        check(td_require_grad(m.p[i]), "require_grad");
    m.x = rnd(ad, sx, 4, 0.0f, 1.0f, 7);
    float onehot[BATCH * 10] = { 0 };
    for (int i = 0; i < BATCH; i++)
        onehot[i * 10 + i % 10] = 1.0f;
    check(td_float_from_data(ad, onehot, sy, 2, &m.y), "from_data");
    const td_sgd_options so = { .lr = 0.01f, .momentum = 0.9f };
    check(td_optim_sgd(m.p, NPARAMS, &so, &m.opt), "optim_sgd");

    static const int64_t s_c1[] = { BATCH, 8, 28, 28 }, s_p1[] = { BATCH, 8, 14, 14 }, s_c2[] = { BATCH, 16, 14, 14 },
                         s_p2[] = { BATCH, 16, 7, 7 };
    parts q = { .x = NULL };
    q.x = rnd(cpu, sx, 4, 0.0f, 1.0f, 11);
    q.w1 = rnd(cpu, sw1, 4, -0.4f, 0.4f, 12);
    q.b1 = rnd(cpu, sb1, 1, -0.1f, 0.1f, 13);
    q.c1 = rnd(cpu, s_c1, 4, -1.0f, 1.0f, 14);
    q.g1 = rnd(cpu, s_c1, 4, -1.0f, 1.0f, 15);
    q.w2 = rnd(cpu, sw2, 4, -0.15f, 0.15f, 16);
    q.b2 = rnd(cpu, sb2, 1, -0.1f, 0.1f, 17);
    q.p1 = rnd(cpu, s_p1, 4, -1.0f, 1.0f, 18);
    q.c2 = rnd(cpu, s_c2, 4, -1.0f, 1.0f, 19);
    q.g2 = rnd(cpu, s_c2, 4, -1.0f, 1.0f, 20);
    q.g1p = rnd(cpu, s_p1, 4, -1.0f, 1.0f, 21);
    q.g2p = rnd(cpu, s_p2, 4, -1.0f, 1.0f, 22);

    const long iters = (long)(50 * o.scale) + 1;
    for (long i = 0; i < iters / 5 + 1; i++) /* warm up */
        step(&m);
    bench_rounds ts = { 0 }, tc = { 0 }, tp = { 0 }, tcpu = { 0 }, tcc = { 0 }, tpc = { 0 };
    int met = 0;
    for (int r = 0; r < o.rounds; r++) {
        double t0 = now_ms(), c0 = cpu_ms();
        for (long i = 0; i < iters; i++)
            step(&m);
        const double per = (now_ms() - t0) / (double)iters;
        bench_add(&tcpu, (cpu_ms() - c0) / (double)iters);
        double c = 0, p = 0, cc = 0, pc = 0;
        for (long i = 0; i < iters; i++) {
            c += time_conv(&q, &cc);
            p += time_pool(&q, &pc);
        }
        bench_add(&tcc, cc / (double)iters);
        bench_add(&tpc, pc / (double)iters);
        bench_add(&ts, per);
        bench_add(&tc, c / (double)iters);
        bench_add(&tp, p / (double)iters);
        met += per <= 3.75 / 2.0;
    }
    const double s = bench_median(&ts), c = bench_median(&tc), p = bench_median(&tp);
    printf("\"noisy\" marks a figure whose rounds spread over %.0f%% of its median\n", BENCH_NOISE * 100.0);
    printf("CNN training step, batch %d (forward + backward + SGD update); ms: median [min-max] of %d rounds of %ld\n",
           BATCH, o.rounds, iters);
    line("step", &ts);
    line("step, CPU time of all threads", &tcpu);
    line("  conv2d: 2 forward, 2 weight grads, 1 input grad", &tc);
    line("  max_pool2d: 2 forward, 2 backward", &tp);
    printf("    share of the step: conv %.0f%%, pool %.0f%%, the rest %.0f%%\n", 100.0 * c / s, 100.0 * p / s,
           100.0 * (s - c - p) / s);
    const double sc = bench_median(&tcpu), cc = bench_median(&tcc), pc = bench_median(&tpc);
    printf("    in CPU time (steadier on a busy machine): step %.3f, conv %.3f, pool %.3f ms: conv %.0f%%, pool "
           "%.0f%%, the rest %.0f%%\n",
           sc, cc, pc, 100.0 * cc / sc, 100.0 * pc / sc, 100.0 * (sc - cc - pc) / sc);
    char v[96];
    printf("    target: step <= half of PyTorch 1.13's 3.75 ms (given; Debian's 1.13.1 with 2 threads, this "
           "step: 3.73 and 3.83 ms, medians of 500, on the 2-core machine): %s\n",
           bench_verdict(met, o.rounds, v, sizeof v));

    if (autocast != TD_F32)
        autocast_rows(&m, ad, (td_dtype)autocast, &o);
    if (load)
        under_load(&m, &o);

    td_tensor *all[] = { q.x, q.w1, q.b1, q.c1, q.g1, q.w2, q.b2, q.p1, q.c2, q.g2, q.g1p, q.g2p, m.x, m.y };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    td_optim_release(m.opt);
    for (int i = 0; i < NPARAMS; i++)
        td_tensor_release(m.p[i]);
    td_device_release(ad);
    td_device_release(cpu);
    long live = td_testing_live_objects();
    if (live != 0) {
        fprintf(stderr, "bench_cnn: %ld handles leaked\n", live);
        return 1;
    }
    return 0;
}
