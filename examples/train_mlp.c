/* examples/train_mlp: a 2-layer MLP trained with plain SGD on a synthetic two-spirals set,
 * on an autodiff device over a backend picked by name.
 *
 *   train_mlp [--device cpu] [--epochs N] [--hidden H] [--lr X] [--seed S] [--csv PATH]
 *             [--strategy none|balanced] [--distributed] [--final-loss PATH] [--expect-loss PATH]
 *   train_mlp --list-devices   (backends of this build whose device 0 opens)
 *
 * The model is logits = relu(x W1 + b1) W2 + b2, the loss the mean softmax cross-entropy
 * written from the ops (a stable logsumexp through max_dim). Each epoch runs forward and
 * backward on the full batch, then updates every parameter on the inner device
 * (new = param - lr * grad) and moves the result into a fresh autodiff leaf. The loss curve
 * goes to a CSV file (epoch,loss,accuracy) and, when gnuplot is on PATH, to a PNG beside it.
 * Exits non-zero when the final training accuracy is below 95% or a handle leaked.
 *
 * --distributed (under mpirun -np N, N dividing 400): data-parallel training. Each rank
 * takes its shard of the points, computes the mean loss on it, and the gradients are
 * all-reduced (mean) every step, so the update equals the full batch's; the parameters are
 * checked to be identical on every rank each epoch. --final-loss writes the last loss to a
 * file, --expect-loss compares with one written earlier (1e-4 relative). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "td_ops.h"

#define CLASSES 2
#define PER_CLASS 200
#define POINTS (CLASSES * PER_CLASS)
#define TARGET_ACCURACY 0.95

typedef struct options {
    const char *device;
    int epochs;
    int hidden;
    float lr;
    uint64_t seed;
    const char *csv;
    td_checkpoint strategy;
    int distributed;
    const char *final_loss;  /* write the final loss here */
    const char *expect_loss; /* compare the final loss with the one in this file */
} options;

/* A parameter: its value on the inner device and the autodiff leaf made from it. */
typedef struct param {
    const char *name;
    td_tensor *value; /* inner backend (plain tensor) */
    td_tensor *leaf;  /* autodiff, require_grad */
} param;

enum { W1, B1, W2, B2, NPARAMS };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reports a failed call with the library's message; returns whether st is TD_OK. */
static int ok(td_status st, const char *what)
{
    if (st != TD_OK)
        fprintf(stderr, "train_mlp: %s failed: %s (%s)\n", what, td_status_name(st), td_last_error());
    return st == TD_OK;
}
#define TRY(call)                \
    do {                         \
        if (!ok((call), #call))  \
            goto done;           \
    } while (0)

static void usage(FILE *f)
{
    fprintf(f, "usage: train_mlp [--device NAME] [--epochs N] [--hidden H] [--lr X] [--seed S] [--csv PATH]\n"
               "                 [--strategy none|balanced]\n"
               "defaults: --device cpu --epochs 1000 --hidden 64 --lr 0.3 --seed 1 --csv train_mlp_loss.csv\n"
               "          --strategy none (tuned together: with another --hidden, lower --lr if the loss diverges)\n"
               "          --distributed: data-parallel under mpirun; --final-loss PATH / --expect-loss PATH\n"
               "          --list-devices: the backends whose device 0 opens here\n"
               "devices in this build:");
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++)
        if (b != (int)TD_BACKEND_AUTODIFF)
            fprintf(f, " %s%s", td_backend_name((td_backend)b), td_backend_enabled((td_backend)b) ? "" : " (disabled)");
    fprintf(f, "\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--distributed") == 0) {
            o->distributed = 1;
            continue;
        }
        if (strcmp(a, "--list-devices") == 0) {
            /* the backends of this build with a device 0 that opens, one name a line */
            for (int b = 0; b < (int)TD_BACKEND_AUTODIFF; b++) {
                td_device *d = NULL;
                if (td_backend_enabled((td_backend)b) && td_device_open((td_backend)b, 0, &d) == TD_OK)
                    printf("%s\n", td_backend_name((td_backend)b));
                td_device_release(d);
            }
            exit(0);
        }
        if (v == NULL) {
            fprintf(stderr, "train_mlp: %s needs a value\n", a);
            return -1;
        }
        char *end = NULL;
        if (strcmp(a, "--device") == 0) {
            o->device = v;
        } else if (strcmp(a, "--epochs") == 0) {
            long n = strtol(v, &end, 10);
            if (*end != '\0' || n < 1 || n > 1000000)
                goto bad;
            o->epochs = (int)n;
        } else if (strcmp(a, "--hidden") == 0) {
            long n = strtol(v, &end, 10);
            if (*end != '\0' || n < 1 || n > 65536)
                goto bad;
            o->hidden = (int)n;
        } else if (strcmp(a, "--lr") == 0) {
            double x = strtod(v, &end);
            if (*end != '\0' || !(x > 0.0) || x > 1e3)
                goto bad;
            o->lr = (float)x;
        } else if (strcmp(a, "--seed") == 0) {
            unsigned long long s = strtoull(v, &end, 10);
            if (*end != '\0')
                goto bad;
            o->seed = (uint64_t)s;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = v;
        } else if (strcmp(a, "--final-loss") == 0) {
            o->final_loss = v;
        } else if (strcmp(a, "--expect-loss") == 0) {
            o->expect_loss = v;
        } else if (strcmp(a, "--strategy") == 0) {
            if (strcmp(v, "none") == 0)
                o->strategy = TD_CHECKPOINT_NONE;
            else if (strcmp(v, "balanced") == 0)
                o->strategy = TD_CHECKPOINT_BALANCED;
            else
                goto bad;
        } else {
            fprintf(stderr, "train_mlp: unknown option %s\n", a);
            usage(stderr);
            return -1;
        }
        i++;
        continue;
    bad:
        fprintf(stderr, "train_mlp: bad value for %s: %s\n", a, v);
        return -1;
    }
    return 0;
}

/* Opens device 0 of the backend called name (any backend of the build but the autodiff
 * wrapper: a new backend such as vulkan becomes selectable once it is compiled in). */
static td_status open_backend(const char *name, td_device **out)
{
    *out = NULL;
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        td_backend be = (td_backend)b;
        if (be == TD_BACKEND_AUTODIFF || strcmp(td_backend_name(be), name) != 0)
            continue;
        if (!td_backend_enabled(be)) {
            fprintf(stderr, "train_mlp: backend %s is not enabled in this build\n", name);
            return TD_E_DEVICE;
        }
        td_status st = td_device_open(be, 0, out);
        if (st != TD_OK) /* the message names the device index (TD_<BACKEND>_DEVICE may have picked it) */
            fprintf(stderr, "train_mlp: cannot open a %s device: %s (%s)\n", name, td_status_name(st), td_last_error());
        return st;
    }
    fprintf(stderr, "train_mlp: no backend called %s\n", name);
    usage(stderr);
    return TD_E_DEVICE;
}

/* ---- data: two interleaved spirals, deterministic for a seed ---- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform01(uint64_t *state)
{
    return (float)(splitmix64(state) >> 40) / (float)(1u << 24);
}

/* Class c point i: radius growing from 0.15 to 1 over 1.5 turns, the second spiral turned
 * by half a turn, plus a little uniform noise. x is [POINTS, 2], onehot [POINTS, 2]. */
static void make_spirals(uint64_t seed, float *x, float *onehot, int32_t *labels)
{
    uint64_t state = seed ^ 0x53504952414C53ull;
    const float pi = 3.14159265358979f;
    for (int c = 0; c < CLASSES; c++) {
        for (int i = 0; i < PER_CLASS; i++) {
            int k = c * PER_CLASS + i;
            float t = (float)i / (float)(PER_CLASS - 1);
            float r = 0.15f + 0.85f * t;
            float theta = 3.0f * pi * t + (float)c * pi;
            x[2 * k] = r * cosf(theta) + 0.04f * (uniform01(&state) - 0.5f);
            x[2 * k + 1] = r * sinf(theta) + 0.04f * (uniform01(&state) - 0.5f);
            for (int j = 0; j < CLASSES; j++)
                onehot[CLASSES * k + j] = j == c ? 1.0f : 0.0f;
            labels[k] = c;
        }
    }
}

/* ---- model ---- */

#define RETURN_IF_FAILED(call)        \
    do {                              \
        td_status st_ = (call);       \
        if (st_ != TD_OK)             \
            return st_;               \
    } while (0)

/* value = a fresh leaf on ad made from p->value; the old leaf is released. */
static td_status refresh_leaf(param *p, td_device *ad)
{
    td_tensor_release(p->leaf);
    p->leaf = NULL;
    td_status st = td_float_to_device(p->value, ad, &p->leaf);
    if (st == TD_OK)
        st = td_require_grad(p->leaf);
    return st;
}

static td_status init_params(param ps[NPARAMS], td_device *inner, td_device *ad, int hidden, uint64_t seed)
{
    const int64_t s_w1[] = { 2, hidden }, s_b1[] = { 1, hidden }, s_w2[] = { hidden, CLASSES }, s_b2[] = { 1, CLASSES };
    static const char *names[NPARAMS] = { "W1", "b1", "W2", "b2" };
    for (int i = 0; i < NPARAMS; i++)
        ps[i].name = names[i];
    /* W1 wider than He initialisation: the spirals need many different directions. */
    RETURN_IF_FAILED(td_float_random(inner, s_w1, 2, TD_NORMAL, 0.0f, 3.0f, seed * 4 + 1, &ps[W1].value));
    RETURN_IF_FAILED(td_float_random(inner, s_b1, 2, TD_UNIFORM, -1.0f, 1.0f, seed * 4 + 2, &ps[B1].value));
    RETURN_IF_FAILED(td_float_random(inner, s_w2, 2, TD_NORMAL, 0.0f, sqrtf(1.0f / (float)hidden), seed * 4 + 3,
                           &ps[W2].value));
    RETURN_IF_FAILED(td_float_zeros(inner, s_b2, 2, &ps[B2].value));
    for (int i = 0; i < NPARAMS; i++)
        RETURN_IF_FAILED(refresh_leaf(&ps[i], ad));
    return TD_OK;
}

static void release_params(param ps[NPARAMS])
{
    for (int i = 0; i < NPARAMS; i++) {
        td_tensor_release(ps[i].value);
        td_tensor_release(ps[i].leaf);
        ps[i].value = ps[i].leaf = NULL;
    }
}

/* One SGD step on this process's n points: forward, loss, backward, update. With a group,
 * the gradients are averaged over its ranks before the update. Reports the mean loss on
 * the n points and how many of them the forward pass (before the update) got right. */
static td_status train_step(param ps[NPARAMS], td_device *ad, td_group *group, const td_tensor *x,
                            const td_tensor *onehot, const int32_t *labels, int n, float lr, float *loss_out,
                            int *correct_out)
{
    td_tensor *pre1 = NULL, *h1 = NULL, *act = NULL, *pre2 = NULL, *logits = NULL, *m = NULL, *mc = NULL;
    td_tensor *shifted = NULL, *e = NULL, *se = NULL, *lse = NULL, *logp = NULL, *picked = NULL, *total = NULL;
    td_tensor *loss = NULL, *pred = NULL;
    td_grads *grads = NULL;
    td_status st = TD_OK;
    int32_t predicted[POINTS];

    /* logits = relu(x W1 + b1) W2 + b2 */
    if ((st = td_float_matmul(x, ps[W1].leaf, &pre1)) != TD_OK)
        goto done;
    if ((st = td_float_add(pre1, ps[B1].leaf, &h1)) != TD_OK)
        goto done;
    if ((st = td_float_relu(h1, &act)) != TD_OK)
        goto done;
    if ((st = td_float_matmul(act, ps[W2].leaf, &pre2)) != TD_OK)
        goto done;
    if ((st = td_float_add(pre2, ps[B2].leaf, &logits)) != TD_OK)
        goto done;
    /* log softmax = (logits - m) - log(sum(exp(logits - m))), m = max over classes, detached:
     * the result does not depend on m, so no gradient needs to go through it. */
    if ((st = td_float_max_dim(logits, 1, &m)) != TD_OK)
        goto done;
    if ((st = td_detach(m, &mc)) != TD_OK)
        goto done;
    if ((st = td_float_sub(logits, mc, &shifted)) != TD_OK)
        goto done;
    if ((st = td_float_exp(shifted, &e)) != TD_OK)
        goto done;
    if ((st = td_float_sum_dim(e, 1, &se)) != TD_OK)
        goto done;
    if ((st = td_float_log(se, &lse)) != TD_OK)
        goto done;
    if ((st = td_float_sub(shifted, lse, &logp)) != TD_OK)
        goto done;
    /* loss = -mean over points of log p(label) */
    if ((st = td_float_mul(logp, onehot, &picked)) != TD_OK)
        goto done;
    if ((st = td_float_sum(picked, &total)) != TD_OK)
        goto done;
    if ((st = td_float_mul_scalar(total, -1.0f / (float)n, &loss)) != TD_OK)
        goto done;
    if ((st = td_float_into_data(loss, loss_out, 1)) != TD_OK)
        goto done;

    /* training accuracy of this forward pass */
    if ((st = td_float_argmax(logits, 1, &pred)) != TD_OK)
        goto done;
    if ((st = td_int_into_data(pred, predicted, n)) != TD_OK)
        goto done;
    int correct = 0;
    for (int i = 0; i < n; i++)
        correct += predicted[i] == labels[i];
    *correct_out = correct;

    if ((st = td_backward(loss, &grads)) != TD_OK)
        goto done;
    /* SGD on the inner device, then a fresh leaf per parameter. */
    for (int i = 0; i < NPARAMS; i++) {
        td_tensor *g = NULL, *step = NULL, *next = NULL;
        st = td_grads_get(grads, ps[i].leaf, &g);
        if (st == TD_OK && g == NULL) {
            fprintf(stderr, "train_mlp: no gradient for %s\n", ps[i].name);
            st = TD_E_INTERNAL;
        }
        if (st == TD_OK && group != NULL) {
            /* data parallel: every rank applies the mean of the ranks' gradients */
            td_tensor *mean = NULL;
            st = td_float_all_reduce(g, group, TD_REDUCE_MEAN, &mean);
            td_tensor_release(g);
            g = mean;
        }
        if (st == TD_OK)
            st = td_float_mul_scalar(g, lr, &step);
        if (st == TD_OK)
            st = td_float_sub(ps[i].value, step, &next);
        td_tensor_release(g);
        td_tensor_release(step);
        if (st != TD_OK) {
            td_tensor_release(next);
            goto done;
        }
        td_tensor_release(ps[i].value);
        ps[i].value = next;
        if ((st = refresh_leaf(&ps[i], ad)) != TD_OK)
            goto done;
    }

done:
    if (st != TD_OK)
        fprintf(stderr, "train_mlp: step failed: %s (%s)\n", td_status_name(st), td_last_error());
    td_grads_release(grads);
    td_tensor *all[] = { pre1, h1, act, pre2, logits, m, mc, shifted, e, se, lse, logp, picked, total, loss, pred };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    return st;
}

/* ---- output ---- */

/* Whether an executable called name is in a directory of PATH. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    char buf[4096];
    while (*path != '\0') {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + strlen(name) + 2 < sizeof buf) {
            memcpy(buf, path, len);
            buf[len] = '/';
            strcpy(buf + len + 1, name);
            if (access(buf, X_OK) == 0)
                return 1;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

/* Renders the CSV's loss and accuracy curves as PATH.png (PATH without .csv) with gnuplot,
 * when gnuplot is on PATH; silent otherwise. */
static void plot(const char *csv)
{
    if (!on_path("gnuplot"))
        return;
    if (strchr(csv, '\'') != NULL || strchr(csv, '\n') != NULL) {
        printf("not plotting: the CSV path has a quote or newline in it\n");
        return;
    }
    char png[4096];
    size_t n = strlen(csv);
    if (n + 5 > sizeof png)
        return;
    strcpy(png, csv);
    if (n > 4 && strcmp(png + n - 4, ".csv") == 0)
        png[n - 4] = '\0';
    strcat(png, ".png");
    FILE *gp = popen("gnuplot", "w");
    if (gp == NULL)
        return;
    fprintf(gp,
            "set terminal png noenhanced size 800,500\n"
            "set output '%s'\n"
            "set datafile separator ','\n"
            "set title 'train_mlp: two spirals'\n"
            "set xlabel 'epoch'\n"
            "set ylabel 'loss'\n"
            "set y2label 'training accuracy'\n"
            "set y2range [0:1]\n"
            "set ytics nomirror\n"
            "set y2tics\n"
            "plot '%s' every ::1 using 1:2 with lines title 'loss', "
            "'' every ::1 using 1:3 axes x1y2 with lines title 'accuracy'\n",
            png, csv);
    if (pclose(gp) == 0)
        printf("plot: %s\n", png);
    else
        printf("gnuplot failed; no plot\n");
}

/* Combines a host float over the group's ranks. */
static td_status reduce_float(td_device *inner, td_group *group, float *v, td_reduce_op op)
{
    int64_t one = 1;
    td_tensor *t = NULL, *r = NULL;
    td_status st = td_float_from_data(inner, v, &one, 1, &t);
    if (st == TD_OK)
        st = td_float_all_reduce(t, group, op, &r);
    if (st == TD_OK)
        st = td_float_into_data(r, v, 1);
    td_tensor_release(t);
    td_tensor_release(r);
    return st;
}

/* Whether every rank holds exactly the same parameters: max and min over ranks agree. */
static td_status params_identical(param ps[NPARAMS], td_group *group, int *same)
{
    *same = 1;
    for (int i = 0; i < NPARAMS; i++) {
        td_tensor *hi = NULL, *lo = NULL, *diff = NULL, *sum = NULL;
        td_status st = td_float_all_reduce(ps[i].value, group, TD_REDUCE_MAX, &hi);
        if (st == TD_OK)
            st = td_float_all_reduce(ps[i].value, group, TD_REDUCE_MIN, &lo);
        if (st == TD_OK)
            st = td_float_sub(hi, lo, &diff);
        if (st == TD_OK)
            st = td_float_sum(diff, &sum);
        float d = 1.0f;
        if (st == TD_OK)
            st = td_float_into_data(sum, &d, 1);
        td_tensor_release(hi);
        td_tensor_release(lo);
        td_tensor_release(diff);
        td_tensor_release(sum);
        if (st != TD_OK)
            return st;
        if (d != 0.0f)
            *same = 0;
    }
    return TD_OK;
}

int main(int argc, char **argv)
{
    options o = { .device = "cpu", .epochs = 1000, .hidden = 64, .lr = 0.3f, .seed = 1,
                  .csv = "train_mlp_loss.csv", .strategy = TD_CHECKPOINT_NONE };
    if (parse_args(argc, argv, &o) != 0)
        return 2;

    long baseline = td_testing_live_objects();
    int rc = 1;
    td_device *inner = NULL, *ad = NULL;
    td_tensor *x = NULL, *onehot = NULL;
    param ps[NPARAMS] = { { 0 } };
    FILE *csv = NULL;
    static float xs[POINTS * 2], ys[POINTS * CLASSES];
    static int32_t labels[POINTS];
    const int64_t s_x[] = { POINTS, 2 }, s_y[] = { POINTS, CLASSES };
    double acc = 0.0;
    float loss = 0.0f;

    td_group *group = NULL;
    int rank = 0, ranks = 1;
    if (o.distributed) {
        TRY(td_dist_init(&argc, &argv));
        TRY(td_group_world(&group));
        TRY(td_group_rank(group, &rank));
        TRY(td_group_size(group, &ranks));
        if (POINTS % ranks != 0) {
            fprintf(stderr, "train_mlp: %d ranks do not divide the %d points evenly\n", ranks, POINTS);
            goto done;
        }
        if (rank != 0) /* one voice: rank 0 prints and writes */
            o.csv = NULL;
    }
    const int shard = POINTS / ranks, first = rank * shard;
    if (open_backend(o.device, &inner) != TD_OK) /* says why */
        goto done;
    TRY(td_device_autodiff(inner, o.strategy, &ad));
    td_device_info info;
    TRY(td_device_info_of(inner, &info));
    if (rank == 0) {
        printf("device: autodiff(%s:%d), checkpointing %s%s\n", o.device, info.index,
               o.strategy == TD_CHECKPOINT_BALANCED ? "balanced" : "none", o.distributed ? ", data parallel" : "");
        printf("        %s (%s; %s)\n", info.name, info.type, info.driver);
        if (info.software)
            printf("        a software implementation: correct but slow; TD_%s_DEVICE=<index> selects another "
                   "device (tdinfo lists them)\n", info.backend == TD_BACKEND_VULKAN ? "VULKAN" : "<BACKEND>");
    }
    if (o.distributed && rank == 0)
        printf("ranks: %d, %d points each; gradients all-reduced (mean) every step\n", ranks, shard);
    if (rank == 0)
        printf("data: two spirals, %d classes x %d points, seed %llu; model 2 -> %d (relu) -> %d, SGD lr %g, "
               "%d epochs\n",
               CLASSES, PER_CLASS, (unsigned long long)o.seed, o.hidden, CLASSES, (double)o.lr, o.epochs);

    make_spirals(o.seed, xs, ys, labels);
    /* Inputs and targets live on the autodiff device but take no gradient. */
    const int64_t s_xs[] = { shard, 2 }, s_ys[] = { shard, CLASSES };
    (void)s_x;
    (void)s_y;
    TRY(td_float_from_data(ad, xs + (size_t)first * 2, s_xs, 2, &x));
    TRY(td_float_from_data(ad, ys + (size_t)first * CLASSES, s_ys, 2, &onehot));
    TRY(init_params(ps, inner, ad, o.hidden, o.seed));

    if (o.csv != NULL) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            perror(o.csv);
            goto done;
        }
        fprintf(csv, "epoch,loss,accuracy\n");
    }

    int every = o.epochs >= 20 ? o.epochs / 20 : 1;
    double t0 = now_s();
    for (int epoch = 1; epoch <= o.epochs; epoch++) {
        int correct = 0;
        if (train_step(ps, ad, group, x, onehot, labels + first, shard, o.lr, &loss, &correct) != TD_OK)
            goto done;
        float right = (float)correct;
        if (group != NULL) {
            /* the full batch's loss and accuracy, and one set of parameters everywhere */
            int same = 0;
            TRY(reduce_float(inner, group, &loss, TD_REDUCE_MEAN));
            TRY(reduce_float(inner, group, &right, TD_REDUCE_SUM));
            TRY(params_identical(ps, group, &same));
            if (!same) {
                fprintf(stderr, "train_mlp: rank %d: the parameters differ between ranks at epoch %d\n", rank,
                        epoch);
                goto done;
            }
        }
        acc = (double)right / POINTS;
        if (!isfinite(loss)) {
            fprintf(stderr, "train_mlp: the loss diverged at epoch %d (try a smaller --lr)\n", epoch);
            goto done;
        }
        if (csv != NULL)
            fprintf(csv, "%d,%.6f,%.4f\n", epoch, (double)loss, acc);
        if (rank == 0 && (epoch % every == 0 || epoch == 1 || epoch == o.epochs))
            printf("epoch %5d  loss %.4f  accuracy %5.1f%%\n", epoch, (double)loss, acc * 100.0);
    }
    double elapsed = now_s() - t0;
    if (csv != NULL) {
        if (fclose(csv) != 0) {
            csv = NULL;
            perror(o.csv);
            goto done;
        }
        csv = NULL;
        printf("trained in %.2f s (%.0f us per epoch); loss curve: %s\n", elapsed, elapsed * 1e6 / o.epochs,
               o.csv);
        plot(o.csv);
    }
    if (o.distributed && rank == 0)
        printf("parameters identical on all %d ranks after every epoch\n", ranks);
    if (rank == 0)
        printf("final loss %.9g, training accuracy: %.1f%% (target %.0f%%)\n", (double)loss, acc * 100.0,
               TARGET_ACCURACY * 100.0);
    rc = acc >= TARGET_ACCURACY ? 0 : 1;
    if (rc != 0 && rank == 0)
        fprintf(stderr, "train_mlp: below the target accuracy (try more --epochs or a larger --hidden)\n");
    if (o.final_loss != NULL && rank == 0) {
        FILE *f = fopen(o.final_loss, "w");
        if (f == NULL || fprintf(f, "%.9g\n", (double)loss) < 0 || fclose(f) != 0) {
            perror(o.final_loss);
            rc = 1;
        }
    }
    if (o.expect_loss != NULL) {
        FILE *f = fopen(o.expect_loss, "r");
        double want = 0.0;
        if (f == NULL || fscanf(f, "%lf", &want) != 1) {
            perror(o.expect_loss);
            rc = 1;
        } else {
            double rel = fabs((double)loss - want) / fabs(want);
            if (rank == 0)
                printf("final loss %.9g vs expected %.9g: relative difference %.3g (allowed 1e-4)\n", (double)loss,
                       want, rel);
            if (!(rel <= 1e-4)) {
                fprintf(stderr, "train_mlp: rank %d: the final loss differs from the expected one\n", rank);
                rc = 1;
            }
        }
        if (f != NULL)
            fclose(f);
    }


done:
    if (csv != NULL)
        fclose(csv);
    release_params(ps);
    td_tensor_release(x);
    td_tensor_release(onehot);
    td_device_release(ad);
    td_device_release(inner);
    td_group_release(group);
    if (o.distributed)
        td_dist_finalize();
    long live = td_testing_live_objects() - baseline;
    if (rank == 0)
        printf("live objects at exit: %ld\n", live);
    if (live != 0) {
        fprintf(stderr, "train_mlp: %ld handles leaked\n", live);
        rc = 1;
    }
    return rc;
}
