/* examples/train_mlp: a 2-layer MLP trained with SGD and momentum on a synthetic two-spirals
 * set, on an autodiff device over a backend picked by name.
 *
 *   train_mlp [--device=NAME[:INDEX]] [--epochs=N] [--hidden=H] [--lr=X] [--momentum=M] [--warmup=N]
 *             [--seed=S] [--csv=PATH] [--no-plot] [--strategy=none|balanced] [--distributed]
 *             [--final-loss=PATH] [--expect-loss=PATH] [--max-rise=F] [--dtype=f32|f64]
 *   train_mlp --list-devices   (backends of this build whose device 0 opens)
 *   train_mlp --help
 *
 * The model is logits = relu(x W1 + b1) W2 + b2, the loss the mean softmax cross-entropy
 * written from the ops (a stable logsumexp through max_dim). Each epoch runs forward and
 * backward on the full batch, then updates every parameter in place with td_optim's SGD
 * (heavy-ball momentum: v = momentum * v + grad, param -= lr_t * v, where lr_t grows
 * linearly to lr over the first --warmup epochs); the parameters keep their identity. These
 * defaults give a loss curve that falls without a spike; plain SGD at lr 0.3 (the old
 * default) jumped from 0.75 to 5.4 by epoch 10 and oscillated until about epoch 250.
 * The loss curve goes to a CSV file (epoch,loss,accuracy,lr) and, with gnuplot, to a PNG
 * beside it. Exits non-zero when the final training accuracy is below 95%, a handle leaked,
 * or (with --max-rise F) the loss ever rose by more than F times the first epoch's loss.
 *
 * --distributed (under mpirun -np N, N dividing 400): data-parallel training. Each rank
 * takes its shard of the points, computes the mean loss on it, and the gradients are
 * all-reduced (mean) every step, so the update equals the full batch's; the parameters are
 * checked to be identical on every rank each epoch. --final-loss writes the last loss to a
 * file, --expect-loss compares with one written earlier (1e-4 relative).
 *
 * --dtype=f64 trains in f64: the parameters, inputs and every op (CPU: the native f64
 * kernels of docs/dtypes.md; gradients come back in f64, docs/dtypes.md section 9); the
 * initial values are the f32 ones widened, so both dtypes start from the same point. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "plot.h"
#include "td_ops.h"
#include "td_optim.h"

#define CLASSES 2
#define PER_CLASS 200
#define POINTS (CLASSES * PER_CLASS)
#define TARGET_ACCURACY 0.95

typedef struct options {
    const char *device;        /* --device as given; NULL: the default device (TD_DEVICE, else the best) */
    td_device_choice choice;   /* what it names */
    int epochs;
    int hidden;
    float lr;
    float momentum;
    int warmup;
    uint64_t seed;
    const char *csv;
    int plot;
    td_checkpoint strategy;
    int distributed;
    const char *final_loss;  /* write the final loss here */
    const char *expect_loss; /* compare the final loss with the one in this file */
    double max_rise;         /* > 0: fail when the loss rises by more than this times the first loss */
    td_dtype dtype;          /* of the parameters and inputs: f32 or f64 */
} options;

/* A parameter: an autodiff leaf that keeps its identity across steps (td_optim updates
 * its value in place). */
typedef struct param {
    const char *name;
    td_tensor *leaf; /* autodiff, require_grad */
} param;

enum { W1, B1, W2, B2, NPARAMS };

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
    fprintf(f, "usage: train_mlp [options]\n"
               "  --device=NAME[:I]    device to train on, e.g. cpu, vulkan:1 (autodiff over it)\n"
               "                       [TD_DEVICE, else the best device: a GPU, the cpu, software]\n"
               "  --epochs=N           full-batch steps                                   [1000]\n"
               "  --hidden=H           hidden units                                       [64]\n"
               "  --lr=X               learning rate after the warmup                     [0.1]\n"
               "  --momentum=M         heavy-ball momentum, 0 for plain SGD               [0.8]\n"
               "  --warmup=N           epochs over which the learning rate grows to --lr  [50]\n"
               "  --seed=S             data and initialisation seed                       [1]\n"
               "  --csv=PATH           loss curve (epoch,loss,accuracy,lr); with gnuplot also\n"
               "                       PATH.png (PATH without .csv)                       [train_mlp_loss.csv]\n"
               "  --no-plot            no PNG\n"
               "  --strategy=none|balanced   autodiff checkpointing                       [none]\n"
               "  --distributed        data parallel, under mpirun -np N (N divides 400)\n"
               "  --final-loss=PATH    write the final loss to PATH\n"
               "  --expect-loss=PATH   fail unless the final loss is within 1e-4 of PATH's\n"
               "  --max-rise=F         fail if the loss ever rises by more than F x the first loss\n"
               "  --dtype=f32|f64      dtype of the parameters, inputs and ops              [f32]\n"
               "  --list-devices       the backends whose device 0 opens here, one a line\n"
               "  --help               this text\n"
               "The defaults are tuned together: with another --hidden, lower --lr if the loss diverges.\n"
               "Backends in this build:");
    ex_print_backends(f);
}

static void list_devices(void)
{
    /* the backends of this build with a device 0 that opens, one name a line */
    for (int b = 0; b < (int)TD_BACKEND_AUTODIFF; b++) {
        td_device *d = NULL;
        if (td_backend_enabled((td_backend)b) && td_device_open((td_backend)b, 0, &d) == TD_OK)
            printf("%s\n", td_backend_name((td_backend)b));
        td_device_release(d);
    }
}

/* 0: parsed; 1: done (--help, --list-devices); -1: a usage error, said on stderr. */
static int parse_args(int argc, char **argv, options *o)
{
    enum { O_DEVICE = 256, O_EPOCHS, O_HIDDEN, O_LR, O_MOMENTUM, O_WARMUP, O_SEED, O_CSV, O_NO_PLOT, O_STRATEGY,
           O_DISTRIBUTED, O_FINAL, O_EXPECT, O_MAX_RISE, O_LIST, O_DTYPE };
    static const struct option longopts[] = {
        { "device", required_argument, NULL, O_DEVICE },
        { "epochs", required_argument, NULL, O_EPOCHS },
        { "hidden", required_argument, NULL, O_HIDDEN },
        { "lr", required_argument, NULL, O_LR },
        { "momentum", required_argument, NULL, O_MOMENTUM },
        { "warmup", required_argument, NULL, O_WARMUP },
        { "seed", required_argument, NULL, O_SEED },
        { "csv", required_argument, NULL, O_CSV },
        { "no-plot", no_argument, NULL, O_NO_PLOT },
        { "strategy", required_argument, NULL, O_STRATEGY },
        { "distributed", no_argument, NULL, O_DISTRIBUTED },
        { "final-loss", required_argument, NULL, O_FINAL },
        { "expect-loss", required_argument, NULL, O_EXPECT },
        { "max-rise", required_argument, NULL, O_MAX_RISE },
        { "dtype", required_argument, NULL, O_DTYPE },
        { "list-devices", no_argument, NULL, O_LIST },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        long n = 0;
        double x = 0.0;
        int bad = 0;
        switch (c) {
        case 'h': usage(stdout); return 1;
        case O_LIST: list_devices(); return 1;
        case O_DTYPE:
            if (strcmp(optarg, "f32") == 0)
                o->dtype = TD_F32;
            else if (strcmp(optarg, "f64") == 0)
                o->dtype = TD_F64;
            else
                bad = 1;
            break;
        case O_DEVICE: o->device = optarg; break;
        case O_EPOCHS: bad = ex_parse_long(optarg, 1, 1000000, &n); o->epochs = (int)n; break;
        case O_HIDDEN: bad = ex_parse_long(optarg, 1, 65536, &n); o->hidden = (int)n; break;
        case O_LR: bad = ex_parse_double(optarg, 1e-9, 1e3, &x); o->lr = (float)x; break;
        case O_MOMENTUM: bad = ex_parse_double(optarg, 0.0, 0.999, &x); o->momentum = (float)x; break;
        case O_WARMUP: bad = ex_parse_long(optarg, 0, 1000000, &n); o->warmup = (int)n; break;
        case O_SEED: {
            char *end = NULL;
            unsigned long long sd = strtoull(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || optarg[0] == '-';
            o->seed = (uint64_t)sd;
            break;
        }
        case O_CSV: o->csv = optarg; break;
        case O_NO_PLOT: o->plot = 0; break;
        case O_STRATEGY:
            if (strcmp(optarg, "none") == 0)
                o->strategy = TD_CHECKPOINT_NONE;
            else if (strcmp(optarg, "balanced") == 0)
                o->strategy = TD_CHECKPOINT_BALANCED;
            else
                bad = 1;
            break;
        case O_DISTRIBUTED: o->distributed = 1; break;
        case O_FINAL: o->final_loss = optarg; break;
        case O_EXPECT: o->expect_loss = optarg; break;
        case O_MAX_RISE: bad = ex_parse_double(optarg, 0.0, 1e9, &o->max_rise); break;
        case ':':
            fprintf(stderr, "train_mlp: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "train_mlp: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
        if (bad) {
            ex_bad_value("train_mlp", argv, optind, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "train_mlp: unexpected argument '%s' (options start with --; see --help)\n", argv[optind]);
        return -1;
    }
    if (o->device != NULL && td_device_parse(o->device, &o->choice) != TD_OK) {
        fprintf(stderr, "train_mlp: --device: %s (see --help)\n", td_last_error());
        return -1;
    }
    if (o->distributed && o->dtype != TD_F32) {
        fprintf(stderr, "train_mlp: --distributed trains in f32 only (the collectives are f32)\n");
        return -1;
    }
    return 0;
}

/* Opens the device --device named, or the default one (td_default_device_choice: TD_DEVICE,
 * else the best device of any backend of the build or loaded module). */
static td_status open_chosen(options *o, td_device **out)
{
    *out = NULL;
    if (o->device == NULL) {
        td_status st = td_default_device_choice(&o->choice);
        if (st != TD_OK) {
            fprintf(stderr, "train_mlp: no default device: %s (%s)\n", td_status_name(st), td_last_error());
            return st;
        }
    }
    const char *name = td_backend_name(o->choice.backend);
    td_status st = td_device_open(o->choice.backend, o->choice.index, out);
    if (st != TD_OK) /* the message names the device index (TD_<BACKEND>_DEVICE may have picked it) */
        fprintf(stderr, "train_mlp: cannot open a %s device: %s (%s)\n", name, td_status_name(st), td_last_error());
    return st;
}

/* ---- data: two interleaved spirals, deterministic for a seed ---- */

static float uniform01(uint64_t *state)
{
    return (float)(ex_splitmix64(state) >> 40) / (float)(1u << 24);
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

/* p->leaf = a leaf on ad holding value (released) in dtype. */
static td_status make_leaf(param *p, td_tensor *value, td_device *ad, td_dtype dtype)
{
    td_tensor *v = NULL;
    td_status st = td_float_cast(value, dtype, &v);
    td_tensor_release(value);
    if (st == TD_OK)
        st = td_float_to_device(v, ad, &p->leaf);
    td_tensor_release(v);
    if (st == TD_OK)
        st = td_require_grad(p->leaf);
    return st;
}

static td_status init_params(param ps[NPARAMS], td_device *inner, td_device *ad, int hidden, uint64_t seed,
                             td_dtype dtype)
{
    const int64_t s_w1[] = { 2, hidden }, s_b1[] = { 1, hidden }, s_w2[] = { hidden, CLASSES }, s_b2[] = { 1, CLASSES };
    static const char *names[NPARAMS] = { "W1", "b1", "W2", "b2" };
    for (int i = 0; i < NPARAMS; i++)
        ps[i].name = names[i];
    /* W1 wider than He initialisation: the spirals need many different directions. */
    td_tensor *v[NPARAMS] = { NULL };
    RETURN_IF_FAILED(td_float_random(inner, s_w1, 2, TD_NORMAL, 0.0f, 3.0f, seed * 4 + 1, &v[W1]));
    RETURN_IF_FAILED(make_leaf(&ps[W1], v[W1], ad, dtype));
    RETURN_IF_FAILED(td_float_random(inner, s_b1, 2, TD_UNIFORM, -1.0f, 1.0f, seed * 4 + 2, &v[B1]));
    RETURN_IF_FAILED(make_leaf(&ps[B1], v[B1], ad, dtype));
    RETURN_IF_FAILED(td_float_random(inner, s_w2, 2, TD_NORMAL, 0.0f, sqrtf(1.0f / (float)hidden), seed * 4 + 3,
                           &v[W2]));
    RETURN_IF_FAILED(make_leaf(&ps[W2], v[W2], ad, dtype));
    RETURN_IF_FAILED(td_float_zeros(inner, s_b2, 2, &v[B2]));
    RETURN_IF_FAILED(make_leaf(&ps[B2], v[B2], ad, dtype));
    return TD_OK;
}

static void release_params(param ps[NPARAMS])
{
    for (int i = 0; i < NPARAMS; i++) {
        td_tensor_release(ps[i].leaf);
        ps[i].leaf = NULL;
    }
}

/* One step on this process's n points: forward, loss, backward, update (SGD with heavy-ball
 * momentum). With a group, the gradients are averaged over its ranks before the update.
 * Reports the mean loss on the n points and how many of them the forward pass (before the
 * update) got right. */
static td_status train_step(param ps[NPARAMS], td_optim *opt, td_group *group, const td_tensor *x,
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
    if ((st = td_float_into_data_dtype(loss, TD_F32, loss_out, 1)) != TD_OK)
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
    /* v = momentum * v + g; param -= lr * v, in place (td_optim). */
    td_tensor *gs[NPARAMS] = { NULL };
    for (int i = 0; i < NPARAMS && st == TD_OK; i++) {
        st = td_grads_get(grads, ps[i].leaf, &gs[i]);
        if (st == TD_OK && gs[i] == NULL) {
            fprintf(stderr, "train_mlp: no gradient for %s\n", ps[i].name);
            st = TD_E_INTERNAL;
        }
        if (st == TD_OK && group != NULL) {
            /* data parallel: every rank applies the mean of the ranks' gradients */
            td_tensor *mean = NULL;
            st = td_float_all_reduce(gs[i], group, TD_REDUCE_MEAN, &mean);
            td_tensor_release(gs[i]);
            gs[i] = mean;
        }
    }
    if (st == TD_OK)
        st = td_optim_set_lr(opt, lr);
    if (st == TD_OK)
        st = td_optim_step_with(opt, (const td_tensor *const *)gs, NPARAMS);
    for (int i = 0; i < NPARAMS; i++)
        td_tensor_release(gs[i]);

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

/* Renders the CSV's loss and accuracy curves as PATH.png (PATH without .csv) with gnuplot,
 * and says where it is; says why when it cannot. */
static void plot(const char *csv, const char *device)
{
    plot_csv(csv,
             "set title 'train_mlp: two spirals on autodiff(%s)'\n"
             "set xlabel 'epoch'\n"
             "set ylabel 'loss'\n"
             "set y2label 'training accuracy'\n"
             /* room above an accuracy of 1, and the legend where neither curve runs: the
              * accuracy ends along the top, the loss along the bottom */
             "set y2range [0:1.08]\n"
             "set y2tics 0, 0.2, 1\n"
             "set key right center\n"
             "set ytics nomirror\n"
             "plot '%s' every ::1 using 1:2 with lines title 'loss', "
             "'' every ::1 using 1:3 axes x1y2 with lines title 'accuracy'\n",
             device, csv);
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
        td_tensor *hi = NULL, *lo = NULL, *diff = NULL, *sum = NULL, *value = NULL;
        td_status st = td_tensor_value(ps[i].leaf, &value);
        if (st == TD_OK)
            st = td_float_all_reduce(value, group, TD_REDUCE_MAX, &hi);
        if (st == TD_OK)
            st = td_float_all_reduce(value, group, TD_REDUCE_MIN, &lo);
        td_tensor_release(value);
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
    options o = { .device = NULL, .epochs = 1000, .hidden = 64, .lr = 0.1f, .momentum = 0.8f, .warmup = 50,
                  .seed = 1, .csv = "train_mlp_loss.csv", .plot = 1, .strategy = TD_CHECKPOINT_NONE };
    const int parsed = parse_args(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;

    long baseline = td_testing_live_objects();
    int rc = 1;
    td_device *inner = NULL, *ad = NULL;
    param ps[NPARAMS] = { { 0 } };
    td_optim *opt = NULL;
    td_tensor *x = NULL, *onehot = NULL;
    FILE *csv = NULL;
    static float xs[POINTS * 2], ys[POINTS * CLASSES];
    static int32_t labels[POINTS];
    const int64_t s_x[] = { POINTS, 2 }, s_y[] = { POINTS, CLASSES };
    double acc = 0.0;
    float loss = 0.0f, first_loss = 0.0f, prev_loss = 0.0f, worst_rise = 0.0f;
    int worst_rise_epoch = 0;

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
    if (open_chosen(&o, &inner) != TD_OK) /* says why */
        goto done;
    TRY(td_device_autodiff(inner, o.strategy, &ad));
    td_device_info info;
    TRY(td_device_info_of(inner, &info));
    if (rank == 0) {
        printf("device: autodiff(%s:%d), checkpointing %s%s, %s\n", td_backend_name(info.backend), info.index,
               o.strategy == TD_CHECKPOINT_BALANCED ? "balanced" : "none", o.distributed ? ", data parallel" : "",
               td_dtype_name(o.dtype));
        printf("        %s (%s; %s)\n", info.name, info.type, info.driver);
        printf("        chosen: %s\n", o.choice.reason);
        int devices = 0;
        if (td_device_count(info.backend, &devices) != TD_OK)
            devices = 0;
        if (info.software && devices > 1) /* the hint only where there is another device */
            printf("        a software implementation: correct but slow; TD_%s_DEVICE=<index> selects another "
                   "device (tdinfo lists them)\n", info.backend == TD_BACKEND_VULKAN ? "VULKAN" : "<BACKEND>");
        else if (info.software)
            printf("        a software implementation: correct but slow\n");
    }
    if (o.distributed && rank == 0)
        printf("ranks: %d, %d points each; gradients all-reduced (mean) every step\n", ranks, shard);
    if (rank == 0)
        printf("data: two spirals, %d classes x %d points, seed %llu; model 2 -> %d (relu) -> %d; %d epochs of SGD, "
               "lr %g (warmup %d epochs), momentum %g\n",
               CLASSES, PER_CLASS, (unsigned long long)o.seed, o.hidden, CLASSES, o.epochs, (double)o.lr, o.warmup,
               (double)o.momentum);

    make_spirals(o.seed, xs, ys, labels);
    /* Inputs and targets live on the autodiff device but take no gradient. */
    const int64_t s_xs[] = { shard, 2 }, s_ys[] = { shard, CLASSES };
    (void)s_x;
    (void)s_y;
    {
        td_tensor *x32 = NULL, *y32 = NULL;
        TRY(td_float_from_data(ad, xs + (size_t)first * 2, s_xs, 2, &x32));
        td_status cst = td_float_from_data(ad, ys + (size_t)first * CLASSES, s_ys, 2, &y32);
        if (cst == TD_OK)
            cst = td_float_cast(x32, o.dtype, &x); /* untracked: no gradient goes back */
        if (cst == TD_OK)
            cst = td_float_cast(y32, o.dtype, &onehot);
        td_tensor_release(x32);
        td_tensor_release(y32);
        TRY(cst);
    }
    TRY(init_params(ps, inner, ad, o.hidden, o.seed, o.dtype));
    {
        td_tensor *leaves[NPARAMS];
        for (int i = 0; i < NPARAMS; i++)
            leaves[i] = ps[i].leaf;
        const td_sgd_options so = { .lr = o.lr, .momentum = o.momentum };
        TRY(td_optim_sgd(leaves, NPARAMS, &so, &opt));
    }

    if (o.csv != NULL) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            perror(o.csv);
            goto done;
        }
        fprintf(csv, "epoch,loss,accuracy,lr\n");
    }

    int every = o.epochs >= 20 ? o.epochs / 20 : 1;
    double t0 = ex_now_s();
    for (int epoch = 1; epoch <= o.epochs; epoch++) {
        int correct = 0;
        const float lr = epoch <= o.warmup ? o.lr * (float)epoch / (float)o.warmup : o.lr;
        if (train_step(ps, opt, group, x, onehot, labels + first, shard, lr, &loss, &correct) != TD_OK)
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
        if (epoch == 1)
            first_loss = loss;
        else if (loss - prev_loss > worst_rise) {
            worst_rise = loss - prev_loss;
            worst_rise_epoch = epoch;
        }
        prev_loss = loss;
        if (csv != NULL)
            fprintf(csv, "%d,%.6f,%.4f,%.6g\n", epoch, (double)loss, acc, (double)lr);
        if (rank == 0 && (epoch % every == 0 || epoch == 1 || epoch == o.epochs))
            printf("epoch %5d  loss %.4f  accuracy %5.1f%%\n", epoch, (double)loss, acc * 100.0);
    }
    double elapsed = ex_now_s() - t0;
    if (csv != NULL) {
        if (fclose(csv) != 0) {
            csv = NULL;
            perror(o.csv);
            goto done;
        }
        csv = NULL;
        printf("trained in %.2f s (%.0f us per epoch); loss curve: %s\n", elapsed, elapsed * 1e6 / o.epochs,
               o.csv);
        if (o.plot)
            plot(o.csv, td_backend_name(o.choice.backend));
    }
    if (o.distributed && rank == 0)
        printf("parameters identical on all %d ranks after every epoch\n", ranks);
    if (rank == 0)
        printf("final loss %.9g, training accuracy: %.1f%% (target %.0f%%)\n", (double)loss, acc * 100.0,
               TARGET_ACCURACY * 100.0);
    rc = acc >= TARGET_ACCURACY ? 0 : 1;
    if (rc != 0 && rank == 0)
        fprintf(stderr, "train_mlp: below the target accuracy (try more --epochs or a larger --hidden)\n");
    if (rank == 0 && worst_rise_epoch > 0)
        printf("largest rise of the loss between epochs: %.4g at epoch %d (%.2f%% of the first loss)\n",
               (double)worst_rise, worst_rise_epoch, 100.0 * (double)worst_rise / (double)first_loss);
    else if (rank == 0)
        printf("the loss fell at every epoch\n");
    if (o.max_rise > 0.0 && (double)worst_rise > o.max_rise * (double)first_loss) {
        if (rank == 0)
            fprintf(stderr, "train_mlp: the loss rose by more than %g x the first loss (a spike)\n", o.max_rise);
        rc = 1;
    }
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
    td_optim_release(opt);
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
