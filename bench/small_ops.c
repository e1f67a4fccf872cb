/* bench/small_ops: a driver for instruction counts of small ops under callgrind, and their
 * ns per op in one run (issue 20).
 * Each variant's loop is its own noinline function, so that callgrind can count it alone:
 *   loop_plain      1-element float_add on cpu
 *   loop_untracked  the same add on autodiff(cpu), inputs not tracked
 *   loop_tracked    the same add on autodiff(cpu), one input a leaf that requires grad
 *                   (each add records a node, and its release drops it again)
 *   loop_mlp        the MLP step of bench_autodiff (b), NONE: forward, backward, grads
 * Instructions per op:
 *   valgrind --tool=callgrind --dump-instr=no --collect-atstart=no --toggle-collect=loop_tracked \
 *       build/bench/bench_small_ops --only=tracked --iters=100000
 * then Ir of the "Collected" line / iters (the loop's own few instructions included). Or one run of
 * every loop with callgrind_annotate --inclusive=yes, each loop_* line's Ir / iters.
 * Without valgrind it times every variant in one run (median of rounds) and prints the ratios.
 *   bench_small_ops [--only=plain|untracked|tracked|mlp] [--iters=N] [--rounds=N] [--help] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define BENCH_PROG "bench_small_ops"
#include "bench_common.h"
#include "td_ops.h"

static void check(td_status st, const char *what)
{
    if (st != TD_OK)
        bench_die(what);
}

static void adds(const td_tensor *a, const td_tensor *b, long iters)
{
    for (long i = 0; i < iters; i++) {
        td_tensor *r;
        if (td_float_add(a, b, &r) != TD_OK)
            bench_die("float_add");
        td_tensor_release(r);
    }
}

enum { V_PLAIN, V_UNTRACKED, V_TRACKED, V_MLP, NVARIANTS };
static const char *const variant_names[NVARIANTS] = { "plain", "untracked", "tracked", "mlp" };

/* One function per variant: the names callgrind's --toggle-collect selects. Each counts
 * its runs, so that no two have the same body (the compiler would fold them into one). */
static volatile long loops_run[NVARIANTS];

__attribute__((noinline)) static void loop_plain(const td_tensor *a, const td_tensor *b, long iters)
{
    adds(a, b, iters);
    loops_run[V_PLAIN]++;
}

__attribute__((noinline)) static void loop_untracked(const td_tensor *a, const td_tensor *b, long iters)
{
    adds(a, b, iters);
    loops_run[V_UNTRACKED]++;
}

__attribute__((noinline)) static void loop_tracked(const td_tensor *a, const td_tensor *b, long iters)
{
    adds(a, b, iters);
    loops_run[V_TRACKED]++;
}

/* ---- the MLP step of bench_autodiff (b), matmul + add layers ---- */

enum { W1, B1, W2, B2, NPARAMS };
enum { BATCH = 64, IN = 64, HID = 32, OUT = 10 };

typedef struct mlp {
    td_tensor *x, *target;     /* autodiff, untracked */
    td_tensor *leaf[NPARAMS];  /* autodiff leaves */
} mlp;

static void mlp_init(mlp *m, td_device *ad)
{
    const int64_t sx[] = { BATCH, IN }, st[] = { BATCH, OUT };
    const int64_t shapes[NPARAMS][2] = { { IN, HID }, { 1, HID }, { HID, OUT }, { 1, OUT } };
    check(td_float_random(ad, sx, 2, TD_NORMAL, 0.0f, 1.0f, 11, &m->x), "random");
    check(td_float_random(ad, st, 2, TD_UNIFORM, 0.0f, 1.0f, 12, &m->target), "random");
    for (int i = 0; i < NPARAMS; i++) {
        check(td_float_random(ad, shapes[i], 2, TD_NORMAL, 0.0f, 0.1f, (uint64_t)(20 + i), &m->leaf[i]), "random");
        check(td_require_grad(m->leaf[i]), "require_grad");
    }
}

static void mlp_release(mlp *m)
{
    td_tensor_release(m->x);
    td_tensor_release(m->target);
    for (int i = 0; i < NPARAMS; i++)
        td_tensor_release(m->leaf[i]);
}

static void mlp_step(const mlp *m)
{
    td_tensor *t[9] = { NULL };
    check(td_float_matmul(m->x, m->leaf[W1], &t[0]), "matmul");
    check(td_float_add(t[0], m->leaf[B1], &t[1]), "add");
    check(td_float_relu(t[1], &t[2]), "relu");
    check(td_float_matmul(t[2], m->leaf[W2], &t[3]), "matmul");
    check(td_float_add(t[3], m->leaf[B2], &t[4]), "add");
    check(td_float_sub(t[4], m->target, &t[5]), "sub");
    check(td_float_mul(t[5], t[5], &t[6]), "mul");
    check(td_float_sum(t[6], &t[7]), "sum");
    check(td_float_mul_scalar(t[7], 1.0f / (float)(BATCH * OUT), &t[8]), "mul_scalar");
    td_grads *grads;
    check(td_backward(t[8], &grads), "backward");
    for (int i = 0; i < NPARAMS; i++) {
        td_tensor *g;
        check(td_grads_get(grads, m->leaf[i], &g), "grads_get");
        if (g == NULL)
            bench_die("a parameter got no gradient");
        td_tensor_release(g);
    }
    td_grads_release(grads);
    for (int i = 0; i < 9; i++)
        td_tensor_release(t[i]);
}

__attribute__((noinline)) static void loop_mlp(const mlp *m, long iters)
{
    for (long i = 0; i < iters; i++)
        mlp_step(m);
    loops_run[V_MLP]++;
}

/* ---- the run ---- */

typedef struct inputs {
    td_tensor *ca, *cb, *ua, *ub, *ta;
    mlp m;
} inputs;

static void run_variant(const inputs *in, int v, long iters)
{
    switch (v) {
    case V_PLAIN: loop_plain(in->ca, in->cb, iters); break;
    case V_UNTRACKED: loop_untracked(in->ua, in->ub, iters); break;
    case V_TRACKED: loop_tracked(in->ta, in->ub, iters); break;
    default: loop_mlp(&in->m, iters); break;
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_small_ops [--only=plain|untracked|tracked|mlp] [--iters=N] [--rounds=N] [--help]\n"
               "  Runs 1-element float_adds (cpu, autodiff untracked, autodiff tracked) and MLP steps:\n"
               "  under callgrind for instructions per op (see bench/small_ops.c), else timed.\n"
               "  --only=V     run only variant V (once, iters times: for callgrind)\n"
               "  --iters=N    adds per run of a variant (default 20000; MLP steps: N / 200 + 1)\n"
               "  --rounds=N   timing rounds, 3 to %d (default 7)\n",
            BENCH_MAX_ROUNDS);
}

int main(int argc, char **argv)
{
    int only = -1, rounds = 7;
    long iters = 20000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end = NULL;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strncmp(a, "--only=", 7) == 0) {
            for (int v = 0; v < NVARIANTS; v++)
                if (strcmp(a + 7, variant_names[v]) == 0)
                    only = v;
            if (only < 0)
                goto bad;
        } else if (strncmp(a, "--iters=", 8) == 0) {
            iters = strtol(a + 8, &end, 10);
            if (end == a + 8 || *end != '\0' || iters < 1 || iters > 1000000000L)
                goto bad;
        } else if (strncmp(a, "--rounds=", 9) == 0) {
            rounds = (int)strtol(a + 9, &end, 10);
            if (end == a + 9 || *end != '\0' || rounds < 3 || rounds > BENCH_MAX_ROUNDS)
                goto bad;
        } else if (strncmp(a, "--", 2) == 0) {
            fprintf(stderr, "bench_small_ops: unknown option '%s' (see --help)\n", a);
            return 2;
        } else {
            fprintf(stderr, "bench_small_ops: unexpected argument '%s' (options start with --; see --help)\n", a);
            return 2;
        }
        continue;
    bad:
        fprintf(stderr, "bench_small_ops: bad argument '%s'\n", a);
        usage(stderr);
        return 2;
    }

    static const float one = 1.5f, two = 2.25f;
    const int64_t s1[] = { 1 };
    td_device *cpu, *ad;
    check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "device_open");
    check(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad), "device_autodiff");
    inputs in;
    check(td_float_from_data(cpu, &one, s1, 1, &in.ca), "from_data");
    check(td_float_from_data(cpu, &two, s1, 1, &in.cb), "from_data");
    check(td_float_from_data(ad, &one, s1, 1, &in.ua), "from_data");
    check(td_float_from_data(ad, &two, s1, 1, &in.ub), "from_data");
    check(td_float_from_data(ad, &one, s1, 1, &in.ta), "from_data");
    check(td_require_grad(in.ta), "require_grad");
    mlp_init(&in.m, ad);

    const long mlp_iters = iters / 200 + 1;
    if (only >= 0) {
        /* warm the caches of handles and nodes outside the counted loop */
        run_variant(&in, only, only == V_MLP ? 1 : 16);
        const long n = only == V_MLP ? mlp_iters : iters;
        run_variant(&in, only, n);
        printf("bench_small_ops: %s: %ld %s\n", variant_names[only], n, only == V_MLP ? "steps" : "adds");
    } else {
        /* Every round times the variants in turn, first one rotating; figures are medians
         * over rounds with their range (bench_common.h). */
        bench_rounds t[NVARIANTS], rec, wrap;
        memset(t, 0, sizeof t);
        memset(&rec, 0, sizeof rec);
        memset(&wrap, 0, sizeof wrap);
        for (int v = 0; v < NVARIANTS; v++)
            run_variant(&in, v, v == V_MLP ? mlp_iters : iters);
        for (int r = 0; r < rounds; r++) {
            double ns[NVARIANTS];
            for (int j = 0; j < NVARIANTS; j++) {
                const int v = (j + r) % NVARIANTS;
                const long n = v == V_MLP ? mlp_iters : iters;
                const double t0 = bench_now();
                run_variant(&in, v, n);
                ns[v] = (bench_now() - t0) * 1e9 / (double)n;
                bench_add(&t[v], v == V_MLP ? ns[v] / 1e3 : ns[v]);
            }
            bench_add(&rec, ns[V_TRACKED] - ns[V_PLAIN]);
            bench_add(&wrap, ns[V_UNTRACKED] - ns[V_PLAIN]);
        }
        char buf[96];
        printf("1-element float_add, ns per op, median [min-max] over %d rounds of %ld adds:\n", rounds, iters);
        printf("    %-36s %s\n", "cpu", bench_fmt(&t[V_PLAIN], buf, sizeof buf));
        printf("    %-36s %s\n", "autodiff(cpu), untracked", bench_fmt(&t[V_UNTRACKED], buf, sizeof buf));
        printf("    %-36s %s\n", "autodiff(cpu), tracked (recorded)", bench_fmt(&t[V_TRACKED], buf, sizeof buf));
        printf("    %-36s %s\n", "  untracked - cpu", bench_fmt(&wrap, buf, sizeof buf));
        printf("    %-36s %s\n", "  tracked - cpu", bench_fmt(&rec, buf, sizeof buf));
        printf("    tracked / cpu: %.2f\n", bench_median(&t[V_TRACKED]) / bench_median(&t[V_PLAIN]));
        printf("MLP step (NONE, forward + backward + grads), us per step over %ld steps: %s\n", mlp_iters,
               bench_fmt(&t[V_MLP], buf, sizeof buf));
    }

    mlp_release(&in.m);
    td_tensor *all[] = { in.ca, in.cb, in.ua, in.ub, in.ta };
    for (int i = 0; i < 5; i++)
        td_tensor_release(all[i]);
    td_device_release(ad);
    td_device_release(cpu);
    if (td_testing_live_objects() != 0) {
        fprintf(stderr, "bench_small_ops: %ld handles leaked\n", td_testing_live_objects());
        return 1;
    }
    return 0;
}
