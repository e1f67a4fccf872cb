/* examples/train_cnn: a small CNN trained on Fashion-MNIST on an autodiff device over a
 * backend picked by name.
 *
 *   train_cnn [--device cpu|vulkan] [--epochs N] [--limit N] [--strategy none|balanced]
 *             [--csv FILE] [--no-plot] [--data DIR] [--seed S] [--expect-fall]
 *             [--write-losses FILE] [--expect-losses FILE] [--dtype f32|bf16|f16]
 *   train_cnn --help
 *
 * Data: the IDX files of Debian's dataset-fashion-mnist (gzip, read with zlib) under
 * /usr/share/datasets/fashion-mnist, pixels scaled to [0, 1].
 * Model (as issue 11 fixes it, to compare with other implementations): 1x28x28 ->
 * conv2d 1->8 3x3 padding 1 -> relu -> max_pool 2 -> conv2d 8->16 3x3 padding 1 -> relu ->
 * max_pool 2 -> flatten (784) -> linear 784->10 -> mean cross-entropy. He-normal convs,
 * linear weights uniform in +-1/sqrt(784) (PyTorch's default), zero biases. SGD lr 0.05,
 * momentum 0.9, batch 64, one fixed shuffle per epoch from the seed; the parameters are
 * updated in place (td_optim). The loss is float_cross_entropy (mean over the batch).
 * Prints a progress line (steps/s, running loss) during an epoch, `test accuracy: XX.XX%`
 * after each, and `step median: X.XXX ms` (forward + backward + update, median over the
 * steps of the last epoch) at the end. --limit N: at most N steps per epoch and the first
 * N * 64 test images. --dtype bf16 or f16 trains under autocast (docs/dtypes.md section 9):
 * the parameters stay f32, convs and the linear layer run in that dtype, the loss in f32;
 * f16 adds dynamic loss scaling (td_grad_scaler); the test accuracy is then measured under
 * the same autocast. --expect-fall: exit 1 unless the mean loss of the last 10 steps is
 * below that of the first 10. --write-losses writes every step's loss, one a line;
 * --expect-losses fails unless the first (up to 20) steps' losses match a file written so
 * (relative 1e-3: another backend runs the same steps). Exits 77 when the data files are
 * missing.
 *
 * Checked against PyTorch (Debian's python3-torch 1.13.1, a script outside the repo that
 * rebuilds this file's initial values from td_float_random's generator and its shuffle):
 * with the same weights and order the first 20 losses agree to 4e-7 relative, after which
 * rounding makes the runs drift apart, the mean loss over the epoch staying within 0.1%.
 * One epoch, test accuracy here / in PyTorch from the same start: seed 1 85.74% / 85.37%,
 * seed 2 85.67% / 85.59%, seed 3 84.49% / 84.97%; PyTorch with its own default init (and
 * this order) 86.39%, 85.69%, 83.62%; inputs standardised instead of [0, 1]: 85.08%,
 * 80.51%, 82.94%. So this recipe ends its first epoch around 85% +- 1 in either library:
 * the spread between seeds is that of the last few hundred steps at lr 0.05 momentum 0.9. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "plot.h"
#include "td_ops.h"
#include "td_optim.h"

#define SIDE 28
#define PIXELS (SIDE * SIDE)
#define CLASSES 10
#define BATCH 64
#define EVAL_BATCH 500
#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
#define NO_DATA 77 /* the exit status when the data set is missing (CTest: skipped) */

typedef struct options {
    const char *device;
    int epochs;
    long limit; /* 0: no limit */
    td_checkpoint strategy;
    const char *csv;
    int plot;
    const char *data;
    uint64_t seed;
    int expect_fall;
    const char *write_losses;
    const char *expect_losses;
    td_dtype dtype; /* TD_F32: no autocast */
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: train_cnn [options]\n"
               "  --device NAME        backend to train on (autodiff over its device 0)   [cpu]\n"
               "  --epochs N           passes over the training set                       [1]\n"
               "  --limit N            at most N steps per epoch, N * 64 test images      [no limit]\n"
               "  --strategy none|balanced   autodiff checkpointing                       [none]\n"
               "  --csv FILE           loss curve (step,epoch,loss,test_accuracy); with gnuplot\n"
               "                       also FILE.png (FILE without .csv)\n"
               "  --no-plot            no PNG\n"
               "  --data DIR           the gzip'd IDX files                 [" DEFAULT_DATA "]\n"
               "  --seed S             initialisation and shuffle seed                    [1]\n"
               "  --expect-fall        fail unless the last 10 steps' loss is below the first 10's\n"
               "  --write-losses FILE  every step's loss, one a line\n"
               "  --expect-losses FILE fail unless the first 20 steps' losses match FILE's (1e-3)\n"
               "  --dtype f32|bf16|f16 autocast dtype of the convs and the linear layer     [f32]\n"
               "  --help               this text\n"
               "Data: apt-get install dataset-fashion-mnist. Backends in this build:");
    ex_print_backends(f);
}

/* 0: parsed; 1: done (--help); -1: a usage error, said on stderr. */
static int parse_args(int argc, char **argv, options *o)
{
    enum { O_DEVICE = 256, O_EPOCHS, O_LIMIT, O_STRATEGY, O_CSV, O_NO_PLOT, O_DATA, O_SEED, O_FALL, O_WRITE, O_EXPECT, O_DTYPE };
    static const struct option longopts[] = {
        { "device", required_argument, NULL, O_DEVICE },
        { "epochs", required_argument, NULL, O_EPOCHS },
        { "limit", required_argument, NULL, O_LIMIT },
        { "strategy", required_argument, NULL, O_STRATEGY },
        { "csv", required_argument, NULL, O_CSV },
        { "no-plot", no_argument, NULL, O_NO_PLOT },
        { "data", required_argument, NULL, O_DATA },
        { "seed", required_argument, NULL, O_SEED },
        { "expect-fall", no_argument, NULL, O_FALL },
        { "write-losses", required_argument, NULL, O_WRITE },
        { "expect-losses", required_argument, NULL, O_EXPECT },
        { "dtype", required_argument, NULL, O_DTYPE },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        long n = 0;
        int bad = 0;
        switch (c) {
        case 'h': usage(stdout); return 1;
        case O_DEVICE: o->device = optarg; break;
        case O_EPOCHS: bad = ex_parse_long(optarg, 1, 1000, &n); o->epochs = (int)n; break;
        case O_LIMIT: bad = ex_parse_long(optarg, 1, 1000000, &n); o->limit = n; break;
        case O_STRATEGY:
            if (strcmp(optarg, "none") == 0)
                o->strategy = TD_CHECKPOINT_NONE;
            else if (strcmp(optarg, "balanced") == 0)
                o->strategy = TD_CHECKPOINT_BALANCED;
            else
                bad = 1;
            break;
        case O_CSV: o->csv = optarg; break;
        case O_NO_PLOT: o->plot = 0; break;
        case O_DATA: o->data = optarg; break;
        case O_SEED: {
            char *end = NULL;
            unsigned long long sd = strtoull(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || optarg[0] == '-';
            o->seed = (uint64_t)sd;
            break;
        }
        case O_FALL: o->expect_fall = 1; break;
        case O_WRITE: o->write_losses = optarg; break;
        case O_EXPECT: o->expect_losses = optarg; break;
        case O_DTYPE:
            if (strcmp(optarg, "f32") == 0)
                o->dtype = TD_F32;
            else if (strcmp(optarg, "bf16") == 0)
                o->dtype = TD_BF16;
            else if (strcmp(optarg, "f16") == 0)
                o->dtype = TD_F16;
            else
                bad = 1;
            break;
        case ':':
            fprintf(stderr, "train_cnn: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "train_cnn: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
        if (bad) {
            ex_bad_value("train_cnn", argv, optind, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "train_cnn: unexpected argument '%s' (options start with --; see --help)\n", argv[optind]);
        return -1;
    }
    if (!ex_backend_known("train_cnn", o->device))
        return -1;
    return 0;
}

static td_status open_backend(const char *name, td_device **out)
{
    *out = NULL;
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        td_backend be = (td_backend)b;
        if (be == TD_BACKEND_AUTODIFF || strcmp(td_backend_name(be), name) != 0)
            continue;
        if (!td_backend_enabled(be)) {
            fprintf(stderr, "train_cnn: backend %s is not enabled in this build\n", name);
            return TD_E_UNSUPPORTED;
        }
        td_status st = td_device_open(be, 0, out);
        if (st != TD_OK)
            fprintf(stderr, "train_cnn: cannot open a %s device: %s (%s)\n", name, td_status_name(st), td_last_error());
        return st;
    }
    fprintf(stderr, "train_cnn: no backend called %s\n", name);
    usage(stderr);
    return TD_E_DEVICE;
}

/* ---- data ---- */

typedef struct dataset {
    int n;
    float *images; /* [n, 784] in [0, 1] */
    int32_t *labels;
} dataset;

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Reads a gzip'd IDX file: magic (0x801 labels, 0x803 images), its dims, then bytes.
 * Returns a malloc'd buffer of *count items of item_bytes each, NULL (said) on failure. */
static unsigned char *read_idx(const char *dir, const char *name, uint32_t magic, int64_t item_bytes, int *count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gzFile f = gzopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "train_cnn: cannot open %s (apt-get install dataset-fashion-mnist, or --data DIR)\n", path);
        return NULL;
    }
    unsigned char head[16];
    const int head_len = magic == 0x803 ? 16 : 8;
    unsigned char *buf = NULL;
    if (gzread(f, head, (unsigned)head_len) != head_len || be32(head) != magic ||
        (magic == 0x803 && (be32(head + 8) != SIDE || be32(head + 12) != SIDE)) || be32(head + 4) > 1000000) {
        fprintf(stderr, "train_cnn: %s is not an IDX file of %s\n", path, magic == 0x803 ? "28x28 images" : "labels");
        gzclose(f);
        return NULL;
    }
    const int n = (int)be32(head + 4);
    const size_t bytes = (size_t)n * (size_t)item_bytes;
    buf = malloc(bytes ? bytes : 1);
    if (buf == NULL || gzread(f, buf, (unsigned)bytes) != (int)bytes) {
        fprintf(stderr, "train_cnn: %s is truncated or unreadable\n", path);
        free(buf);
        gzclose(f);
        return NULL;
    }
    gzclose(f);
    *count = n;
    return buf;
}

static int load(const char *dir, const char *images, const char *labels, dataset *d)
{
    int ni = 0, nl = 0;
    unsigned char *px = read_idx(dir, images, 0x803, PIXELS, &ni);
    unsigned char *lb = px ? read_idx(dir, labels, 0x801, 1, &nl) : NULL;
    if (lb == NULL || ni != nl) {
        if (lb != NULL)
            fprintf(stderr, "train_cnn: %s has %d images but %s %d labels\n", images, ni, labels, nl);
        free(px);
        free(lb);
        return -1;
    }
    d->n = ni;
    d->images = malloc(sizeof(float) * (size_t)ni * PIXELS + 1);
    d->labels = malloc(sizeof(int32_t) * (size_t)ni + 1);
    if (d->images == NULL || d->labels == NULL) {
        free(px);
        free(lb);
        fprintf(stderr, "train_cnn: out of memory for the data\n");
        return -1;
    }
    for (size_t i = 0; i < (size_t)ni * PIXELS; i++)
        d->images[i] = (float)px[i] / 255.0f;
    for (int i = 0; i < ni; i++)
        d->labels[i] = lb[i] < CLASSES ? lb[i] : 0;
    free(px);
    free(lb);
    return 0;
}

/* The fixed shuffle of an epoch: Fisher-Yates from (seed, epoch). */
static void shuffle(int *order, int n, uint64_t seed, int epoch)
{
    uint64_t state = seed * UINT64_C(0x100000001B3) + (uint64_t)epoch;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(ex_splitmix64(&state) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* ---- model ---- */

enum { W1, B1, W2, B2, W3, B3, NPARAMS };

/* Releases every tensor of a NULL-terminated scratch list. */
#define MAX_TEMPS 32
typedef struct temps {
    td_tensor *t[MAX_TEMPS];
    int n;
} temps;

static td_tensor *tmp(temps *ts, td_tensor *t)
{
    ts->t[ts->n++] = t;
    return t;
}

static void drop(temps *ts)
{
    for (int i = 0; i < ts->n; i++)
        td_tensor_release(ts->t[i]);
    ts->n = 0;
}

#define STEP(call)                 \
    do {                           \
        if ((st = (call)) != TD_OK) \
            return st;             \
    } while (0)

/* logits [n, 10] of images x [n, 1, 28, 28] with parameters p (leaves on an autodiff
 * device while training, plain tensors when evaluating). Intermediates go to ts. */
static td_status forward(td_tensor *const *p, const td_tensor *x, temps *ts, td_tensor **logits)
{
    static const int64_t one[] = { 1, 1 }, two[] = { 2, 2 }, zero[] = { 0, 0 };
    td_status st;
    td_tensor *t = NULL;
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    STEP(td_tensor_shape(x, dims, &nd));
    const int64_t flat[] = { dims[0], 16 * 7 * 7 };
    STEP(td_float_conv2d(x, p[W1], p[B1], one, 2, one, 2, one, 2, 1, &t));
    const td_tensor *c1 = tmp(ts, t);
    STEP(td_float_relu(c1, &t));
    const td_tensor *r1 = tmp(ts, t);
    STEP(td_float_max_pool2d(r1, two, 2, two, 2, zero, 2, one, 2, &t));
    const td_tensor *p1 = tmp(ts, t);
    STEP(td_float_conv2d(p1, p[W2], p[B2], one, 2, one, 2, one, 2, 1, &t));
    const td_tensor *c2 = tmp(ts, t);
    STEP(td_float_relu(c2, &t));
    const td_tensor *r2 = tmp(ts, t);
    STEP(td_float_max_pool2d(r2, two, 2, two, 2, zero, 2, one, 2, &t));
    const td_tensor *p2 = tmp(ts, t);
    STEP(td_float_reshape(p2, flat, 2, &t));
    const td_tensor *f = tmp(ts, t);
    STEP(td_float_linear(f, p[W3], p[B3], &t));
    *logits = tmp(ts, t);
    return TD_OK;
}

static td_status init_params(td_tensor *p[NPARAMS], td_device *ad, uint64_t seed)
{
    static const int64_t s_w1[] = { 8, 1, 3, 3 }, s_b1[] = { 8 }, s_w2[] = { 16, 8, 3, 3 }, s_b2[] = { 16 };
    static const int64_t s_w3[] = { 784, CLASSES }, s_b3[] = { CLASSES };
    td_status st;
    /* He normal: std sqrt(2 / fan_in), fan_in = in channels x 3 x 3. */
    STEP(td_float_random(ad, s_w1, 4, TD_NORMAL, 0.0f, sqrtf(2.0f / 9.0f), seed * 8 + 1, &p[W1]));
    STEP(td_float_zeros(ad, s_b1, 1, &p[B1]));
    STEP(td_float_random(ad, s_w2, 4, TD_NORMAL, 0.0f, sqrtf(2.0f / 72.0f), seed * 8 + 2, &p[W2]));
    STEP(td_float_zeros(ad, s_b2, 1, &p[B2]));
    STEP(td_float_random(ad, s_w3, 2, TD_UNIFORM, -1.0f / 28.0f, 1.0f / 28.0f, seed * 8 + 3, &p[W3]));
    STEP(td_float_zeros(ad, s_b3, 1, &p[B3]));
    for (int i = 0; i < NPARAMS; i++)
        STEP(td_require_grad(p[i]));
    return TD_OK;
}

/* One training step on images idx[0..n): forward, loss, backward, in-place update. */
static td_status train_step(td_tensor *const *p, td_optim *opt, td_grad_scaler *scaler, td_device *ad,
                            const dataset *d, const int *idx, int n, float *xbuf, int32_t *ybuf, float *loss_out)
{
    temps ts = { .n = 0 };
    td_grads *grads = NULL;
    td_status st = TD_OK;
    for (int i = 0; i < n; i++) {
        memcpy(xbuf + (size_t)i * PIXELS, d->images + (size_t)idx[i] * PIXELS, sizeof(float) * PIXELS);
        ybuf[i] = d->labels[idx[i]];
    }
    const int64_t sx[] = { n, 1, SIDE, SIDE }, sy[] = { n };
    td_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL;
    st = td_float_from_data(ad, xbuf, sx, 4, &x);
    if (st == TD_OK)
        st = td_int_from_data(ad, ybuf, sy, 1, &y);
    if (st == TD_OK)
        st = forward(p, x, &ts, &logits);
    if (st == TD_OK && (st = td_float_cross_entropy(logits, y, &loss)) == TD_OK)
        tmp(&ts, loss);
    if (scaler != NULL) {
        /* f16: backward from the scaled loss; the scaler unscales and may skip the step */
        td_tensor *scaled = NULL;
        if (st == TD_OK && (st = td_grad_scaler_scale(scaler, loss, &scaled)) == TD_OK)
            tmp(&ts, scaled);
        if (st == TD_OK)
            st = td_backward(scaled, &grads);
        if (st == TD_OK)
            st = td_grad_scaler_step(scaler, opt, grads, NULL);
    } else {
        if (st == TD_OK)
            st = td_backward(loss, &grads);
        if (st == TD_OK)
            st = td_optim_step(opt, grads);
    }
    if (st == TD_OK)
        st = td_float_into_data(loss, loss_out, 1);
    td_grads_release(grads);
    td_tensor_release(x);
    td_tensor_release(y);
    drop(&ts);
    return st;
}

/* Test accuracy over the first n test images, on the inner device (nothing recorded); under
 * autocast on the autodiff device with detached parameters, so it runs as training did. */
static td_status evaluate(td_tensor *const *p, td_device *inner, td_device *ad, bool autocast, const dataset *d,
                          int n, double *acc)
{
    td_tensor *v[NPARAMS] = { NULL };
    td_status st = TD_OK;
    for (int i = 0; i < NPARAMS && st == TD_OK; i++)
        st = autocast ? td_detach(p[i], &v[i]) : td_tensor_value(p[i], &v[i]);
    if (autocast)
        inner = ad;
    int correct = 0;
    int32_t pred[EVAL_BATCH];
    for (int first = 0; first < n && st == TD_OK; first += EVAL_BATCH) {
        const int b = n - first < EVAL_BATCH ? n - first : EVAL_BATCH;
        const int64_t sx[] = { b, 1, SIDE, SIDE };
        temps ts = { .n = 0 };
        td_tensor *x = NULL, *logits = NULL, *am = NULL;
        st = td_float_from_data(inner, d->images + (size_t)first * PIXELS, sx, 4, &x);
        if (st == TD_OK)
            st = forward(v, x, &ts, &logits);
        if (st == TD_OK)
            st = td_float_argmax(logits, 1, &am);
        if (st == TD_OK)
            st = td_int_into_data(am, pred, b);
        for (int i = 0; i < b && st == TD_OK; i++)
            correct += pred[i] == d->labels[first + i];
        td_tensor_release(am);
        td_tensor_release(x);
        drop(&ts);
    }
    for (int i = 0; i < NPARAMS; i++)
        td_tensor_release(v[i]);
    *acc = n > 0 ? (double)correct / (double)n : 0.0;
    return st;
}

/* ---- output ---- */

static void plot(const char *csv, const char *device)
{
    plot_csv(csv,
             "set datafile missing 'NaN'\n"
             "set title 'train_cnn: Fashion-MNIST on autodiff(%s)'\n"
             "set xlabel 'step'\n"
             "set ylabel 'running loss'\n"
             "set y2label 'test accuracy'\n"
             "set y2range [0:1]\n"
             "set ytics nomirror\n"
             "set y2tics\n"
             "plot '%s' every ::1 using 1:3 with lines title 'loss', "
             "'' every ::1 using 1:4 axes x1y2 with linespoints title 'test accuracy'\n",
             device, csv);
}

int main(int argc, char **argv)
{
    options o = { .device = "cpu", .epochs = 1, .strategy = TD_CHECKPOINT_NONE, .plot = 1, .data = DEFAULT_DATA,
                  .seed = 1 };
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;

    int rc = 1;
    dataset train = { 0 }, test = { 0 };
    td_device *inner = NULL, *ad = NULL;
    td_tensor *p[NPARAMS] = { NULL };
    td_optim *opt = NULL;
    td_grad_scaler *scaler = NULL;
    FILE *csv = NULL;
    int *order = NULL;
    float *xbuf = NULL, *losses = NULL;
    int32_t *ybuf = NULL;
    double *times = NULL;
    td_status st = TD_OK;

    if (load(o.data, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", &train) != 0 ||
        load(o.data, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", &test) != 0) {
        rc = NO_DATA;
        goto done;
    }
    if (open_backend(o.device, &inner) != TD_OK)
        goto done;
    td_backend be = TD_BACKEND_CPU;
    if ((st = td_device_backend(inner, &be)) != TD_OK)
        goto fail;
    if ((st = td_device_autodiff(inner, o.strategy, &ad)) != TD_OK || (st = init_params(p, ad, o.seed)) != TD_OK)
        goto fail;
    const td_sgd_options so = { .lr = 0.05f, .momentum = 0.9f };
    if ((st = td_optim_sgd(p, NPARAMS, &so, &opt)) != TD_OK)
        goto fail;
    if (o.dtype != TD_F32 && (st = td_autodiff_set_autocast(ad, o.dtype)) != TD_OK)
        goto fail;
    if (o.dtype == TD_F16 && (st = td_grad_scaler_new(NULL, &scaler)) != TD_OK)
        goto fail;

    long steps = (train.n + BATCH - 1) / BATCH;
    if (o.limit > 0 && o.limit < steps)
        steps = o.limit;
    int ntest = test.n;
    if (o.limit > 0 && o.limit * BATCH < ntest)
        ntest = (int)(o.limit * BATCH);
    order = malloc(sizeof(int) * (size_t)train.n);
    xbuf = malloc(sizeof(float) * BATCH * PIXELS);
    ybuf = malloc(sizeof(int32_t) * BATCH);
    losses = malloc(sizeof(float) * (size_t)(steps * o.epochs));
    times = malloc(sizeof(double) * (size_t)steps);
    if (order == NULL || xbuf == NULL || ybuf == NULL || losses == NULL || times == NULL) {
        fprintf(stderr, "train_cnn: out of memory\n");
        goto done;
    }
    if (o.csv != NULL) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            perror(o.csv);
            goto done;
        }
        fprintf(csv, "step,epoch,loss,test_accuracy\n");
    }
    printf("train_cnn: Fashion-MNIST (%d training, %d test images) on autodiff(%s), %s; %ld steps of %d per "
           "epoch, %d epoch%s, SGD lr 0.05 momentum 0.9, seed %llu, autocast %s\n",
           train.n, ntest, o.device, o.strategy == TD_CHECKPOINT_BALANCED ? "balanced" : "none", steps, BATCH,
           o.epochs, o.epochs == 1 ? "" : "s", (unsigned long long)o.seed,
           o.dtype == TD_F32 ? "off (f32)" : td_dtype_name(o.dtype));
    fflush(stdout);

    long done_steps = 0;
    /* About 100 CSV rows per epoch, and every step of a short run (a 20-step run had one
     * row: a single dot and gnuplot's "empty x range"). */
    const long csv_every = steps / 100 < 1 ? 1 : steps / 100 > 20 ? 20 : steps / 100;
    for (int epoch = 1; epoch <= o.epochs; epoch++) {
        shuffle(order, train.n, o.seed, epoch);
        double t_epoch = ex_now_s(), t_report = t_epoch, run = 0.0;
        long run_n = 0;
        for (long s = 0; s < steps; s++) {
            const int first = (int)(s * BATCH);
            const int n = train.n - first < BATCH ? train.n - first : BATCH;
            float loss = 0.0f;
            double t0 = ex_now_s();
            if ((st = train_step(p, opt, scaler, ad, &train, order + first, n, xbuf, ybuf, &loss)) != TD_OK)
                goto fail;
            times[s] = ex_now_s() - t0;
            losses[done_steps++] = loss;
            if (!isfinite(loss)) {
                fprintf(stderr, "train_cnn: the loss diverged at step %ld\n", s + 1);
                goto done;
            }
            run = run_n == 0 ? loss : 0.98 * run + 0.02 * loss;
            run_n++;
            double t = ex_now_s();
            if (t - t_report >= 2.0 || s + 1 == steps) {
                printf("epoch %d  step %ld/%ld  %.1f steps/s  running loss %.4f\n", epoch, s + 1, steps,
                       (double)(s + 1) / (t - t_epoch), run);
                fflush(stdout);
                t_report = t;
            }
            if (csv != NULL && ((s + 1) % csv_every == 0 || s + 1 == steps))
                fprintf(csv, "%ld,%d,%.6f,NaN\n", done_steps, epoch, run);
        }
        double acc = 0.0;
        if ((st = evaluate(p, inner, ad, o.dtype != TD_F32, &test, ntest, &acc)) != TD_OK)
            goto fail;
        printf("epoch %d: test accuracy: %.2f%% (%d images), %.1f s\n", epoch, 100.0 * acc, ntest, ex_now_s() - t_epoch);
        if (csv != NULL)
            fprintf(csv, "%ld,%d,%.6f,%.6f\n", done_steps, epoch, run, acc);
    }
    qsort(times, (size_t)steps, sizeof(double), ex_cmp_double);
    printf("step median: %.3f ms\n", 1e3 * times[steps / 2]);
    if (csv != NULL) {
        fclose(csv);
        csv = NULL;
        printf("loss curve: %s\n", o.csv);
        if (o.plot)
            plot(o.csv, o.device);
    }
    rc = 0;
    if (o.expect_fall) {
        const long k = done_steps >= 20 ? 10 : done_steps / 2;
        double a = 0.0, b = 0.0;
        for (long i = 0; i < k; i++) {
            a += losses[i];
            b += losses[done_steps - 1 - i];
        }
        printf("loss fell from %.4f (first %ld steps) to %.4f (last %ld)\n", a / (double)(k ? k : 1), k,
               b / (double)(k ? k : 1), k);
        if (k == 0 || !(b < a)) {
            fprintf(stderr, "train_cnn: the loss did not fall\n");
            rc = 1;
        }
    }
    if (o.write_losses != NULL) {
        FILE *f = fopen(o.write_losses, "w");
        if (f == NULL) {
            perror(o.write_losses);
            rc = 1;
        } else {
            for (long i = 0; i < done_steps; i++)
                fprintf(f, "%.9g\n", (double)losses[i]);
            fclose(f);
        }
    }
    if (o.expect_losses != NULL) {
        FILE *f = fopen(o.expect_losses, "r");
        long i = 0, bad = 0;
        double want = 0.0;
        if (f == NULL) {
            perror(o.expect_losses);
            rc = 1;
        } else {
            for (; i < 20 && i < done_steps && fscanf(f, "%lf", &want) == 1; i++)
                if (!(fabs((double)losses[i] - want) <= 1e-3 * fabs(want))) {
                    fprintf(stderr, "train_cnn: step %ld: loss %.6f, %s has %.6f\n", i + 1, (double)losses[i],
                            o.expect_losses, want);
                    bad++;
                }
            fclose(f);
            printf("the first %ld losses %s those of %s (relative 1e-3)\n", i, bad ? "DIFFER from" : "match",
                   o.expect_losses);
            if (bad || i == 0)
                rc = 1;
        }
    }
    goto done;

fail:
    fprintf(stderr, "train_cnn: %s (%s)\n", td_status_name(st), td_last_error());
done:
    if (csv != NULL)
        fclose(csv);
    td_optim_release(opt);
    td_grad_scaler_release(scaler);
    for (int i = 0; i < NPARAMS; i++)
        td_tensor_release(p[i]);
    td_device_release(ad);
    td_device_release(inner);
    free(order);
    free(xbuf);
    free(ybuf);
    free(losses);
    free(times);
    free(train.images);
    free(train.labels);
    free(test.images);
    free(test.labels);
    return rc;
}
