/* examples/train_gpt: a character-level GPT trained on the King James Bible.
 *
 *   train_gpt [--device cpu|vulkan] [--steps N] [--seed S] [--batch-seed S] [--batch N] [--context N]
 *             [--layers N] [--heads N] [--width N] [--lr X] [--warmup N] [--text FILE] [--chars N]
 *             [--eval-every N] [--eval-windows N] [--csv FILE] [--no-plot] [--distributed]
 *             [--save FILE] [--init-out FILE] [--init-in FILE] [--write-losses FILE]
 *             [--expect-losses FILE] [--expect-bpc X] [--attention fused|pieces]
 *   train_gpt --help
 *
 * Data: `bible -f Gen1:1-Rev22:21` (Debian's bible-kjv, with its text bible-kjv-text), one
 * verse a line, the reference before the first space of each line stripped: 4,137,850
 * characters, 62 distinct. --text FILE reads a plain file instead (taken as it is); --chars N
 * keeps the first N characters. The vocabulary is the sorted set of bytes of the text; the
 * last 10% of the text is held out for validation.
 *
 * Model (nanoGPT's, character level): token embedding [V, D] + position embedding [T, D];
 * N blocks of x += proj(causal_attention(q, k, v of ln1(x))), x += fc2(gelu(fc(ln2(x))))
 * (pre-norm, layer norms with eps 1e-5, q, k, v and proj D x D, fc D x 4D, fc2 4D x D, all
 * with biases, exact erf GELU, H heads of D / H); a final layer norm; an untied head D x V
 * without bias; mean cross entropy. Weights are [in, out] (x @ w). Init: embeddings and
 * weights normal(0, 0.02), proj and fc2 normal(0, 0.02 / sqrt(2 N)) (GPT-2's), biases 0, layer
 * norm weights 1; each tensor from td_float_random with seed S * 1000 + its index.
 * Recipe: AdamW (betas 0.9, 0.99, eps 1e-8, decoupled weight decay 0.1 on the 2-d tensors,
 * none on biases and norms), lr X (1e-3) warmed up linearly over the first W (--warmup, 100)
 * steps (X * s / W at step s, whatever --steps) then cosine-decayed to X / 10 at the last step;
 * no dropout, no gradient clipping.
 *
 * Batches: B windows of T + 1 characters of the training part, inputs the first T and
 * targets the last T. The window starts come from splitmix64 (the state advances by
 * 0x9E3779B97F4A7C15, then the usual two xor-shift-multiply rounds) seeded with S: window b
 * of step s (both from 0) starts at next() mod (ntrain - T - 1), drawn in order, b fastest.
 * bench/gpt_torch.py draws the same. Validation: W windows (1024) of the held-out part at
 * starts k * ((nval - T - 1) / W), the mean loss over all their positions.
 *
 * Losses are printed in bits per character (nats / ln 2). --distributed (under mpirun -np
 * R, R dividing B): every rank draws the same windows and takes its B / R of them; the
 * gradients are averaged over the ranks (td_float_all_reduce) before each update, so the run
 * is the single-process one up to rounding; rank 0 prints, evaluates and writes.
 * --init-out FILE saves the initial weights (safetensors, names as in --save), --init-in
 * FILE starts from such a file instead; --save FILE writes the trained weights with the
 * model's shape in the metadata. Exits 77 when the text cannot be read (no bible-kjv). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gpt_model.h"
#include "gpt_text.h"
#include "plot.h"
#include "td_ops.h"
#include "td_optim.h"
#include "td_safetensors.h"

#define NO_DATA 77
#define MAX_LAYERS 32
#define EVAL_BATCH 32

typedef struct options {
    const char *device;
    long steps;
    uint64_t seed, batch_seed;
    int has_batch_seed;
    int batch, context, layers, heads, width;
    float lr;
    long warmup;
    const char *text;
    long chars;
    long eval_every, eval_windows;
    const char *csv;
    int plot;
    int distributed;
    const char *save, *init_out, *init_in;
    const char *write_losses, *expect_losses;
    double expect_bpc;
    int attn_pieces; /* --attention pieces */
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: train_gpt [options]\n"
               "  --device NAME        backend to train on (autodiff over its device 0)   [cpu]\n"
               "  --steps N            training steps                                     [1000]\n"
               "  --seed S             initialisation and batch seed                      [1]\n"
               "  --batch-seed S       another seed for the batches only                  [--seed]\n"
               "  --batch N            windows per step                                   [16]\n"
               "  --context N          characters per window (T)                          [128]\n"
               "  --layers N           transformer blocks                                 [4]\n"
               "  --heads N            attention heads (divides the width)                [4]\n"
               "  --width N            model width D                                      [128]\n"
               "  --lr X               peak AdamW learning rate                           [1e-3]\n"
               "  --warmup N           steps of linear warmup (then cosine to lr / 10)    [100]\n"
               "  --text FILE          train on FILE instead of the KJV from `bible`\n"
               "  --chars N            only the first N characters of the text            [all]\n"
               "  --eval-every N       validation every N steps (0: only at the end)      [250]\n"
               "  --eval-windows N     validation windows of the held-out tail            [1024]\n"
               "  --csv FILE           loss curve (step,train_bpc,val_bpc,lr); with gnuplot also\n"
               "                       FILE.png (FILE without .csv)                  [train_gpt_loss.csv]\n"
               "  --no-plot            no PNG\n"
               "  --distributed        data parallel, under mpirun -np R (R divides the batch)\n"
               "  --save FILE          write the trained weights (safetensors)\n"
               "  --init-out FILE      write the initial weights (safetensors)\n"
               "  --init-in FILE       start from the weights of FILE (as --init-out writes)\n"
               "  --write-losses FILE  every step's training loss (nats), one a line\n"
               "  --expect-losses FILE fail unless the first (up to 20) losses match FILE's (1e-3)\n"
               "  --expect-bpc X       fail unless the final validation loss is below X bits/char\n"
               "  --attention fused|pieces  float_attention (its kernel and fused backward where the\n"
               "                       device has them), or float_attention_masked with a zero mask,\n"
               "                       differentiated through its decomposition's [B, H, T, T] pieces,\n"
               "                       to compare the memory of a step                  [fused]\n"
               "  --help               this text\n"
               "Data: apt-get install bible-kjv. Backends in this build:");
    ex_print_backends(f);
}

/* 0: parsed; 1: done (--help); -1: a usage error, said on stderr. */
static int parse_args(int argc, char **argv, options *o)
{
    enum {
        O_DEVICE = 256, O_STEPS, O_SEED, O_BATCH, O_CONTEXT, O_LAYERS, O_HEADS, O_WIDTH, O_LR, O_WARMUP, O_TEXT,
        O_CHARS, O_BATCH_SEED,
        O_EVAL_EVERY, O_EVAL_WINDOWS, O_CSV, O_NO_PLOT, O_DIST, O_SAVE, O_INIT_OUT, O_INIT_IN, O_WRITE, O_EXPECT,
        O_EXPECT_BPC, O_ATTENTION
    };
    static const struct option longopts[] = {
        { "device", required_argument, NULL, O_DEVICE },
        { "steps", required_argument, NULL, O_STEPS },
        { "seed", required_argument, NULL, O_SEED },
        { "batch-seed", required_argument, NULL, O_BATCH_SEED },
        { "batch", required_argument, NULL, O_BATCH },
        { "context", required_argument, NULL, O_CONTEXT },
        { "layers", required_argument, NULL, O_LAYERS },
        { "heads", required_argument, NULL, O_HEADS },
        { "width", required_argument, NULL, O_WIDTH },
        { "lr", required_argument, NULL, O_LR },
        { "warmup", required_argument, NULL, O_WARMUP },
        { "text", required_argument, NULL, O_TEXT },
        { "chars", required_argument, NULL, O_CHARS },
        { "eval-every", required_argument, NULL, O_EVAL_EVERY },
        { "eval-windows", required_argument, NULL, O_EVAL_WINDOWS },
        { "csv", required_argument, NULL, O_CSV },
        { "no-plot", no_argument, NULL, O_NO_PLOT },
        { "distributed", no_argument, NULL, O_DIST },
        { "save", required_argument, NULL, O_SAVE },
        { "init-out", required_argument, NULL, O_INIT_OUT },
        { "init-in", required_argument, NULL, O_INIT_IN },
        { "write-losses", required_argument, NULL, O_WRITE },
        { "expect-losses", required_argument, NULL, O_EXPECT },
        { "expect-bpc", required_argument, NULL, O_EXPECT_BPC },
        { "attention", required_argument, NULL, O_ATTENTION },
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
        case O_DEVICE: o->device = optarg; break;
        case O_STEPS: bad = ex_parse_long(optarg, 1, 100000000, &o->steps); break;
        case O_SEED:
        case O_BATCH_SEED: {
            char *end = NULL;
            unsigned long long sd = strtoull(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || optarg[0] == '-';
            if (c == O_SEED) {
                o->seed = (uint64_t)sd;
            } else {
                o->batch_seed = (uint64_t)sd;
                o->has_batch_seed = 1;
            }
            break;
        }
        case O_BATCH: bad = ex_parse_long(optarg, 1, 4096, &n); o->batch = (int)n; break;
        case O_CONTEXT: bad = ex_parse_long(optarg, 1, 65536, &n); o->context = (int)n; break;
        case O_LAYERS: bad = ex_parse_long(optarg, 1, MAX_LAYERS, &n); o->layers = (int)n; break;
        case O_HEADS: bad = ex_parse_long(optarg, 1, 1024, &n); o->heads = (int)n; break;
        case O_WIDTH: bad = ex_parse_long(optarg, 1, 65536, &n); o->width = (int)n; break;
        case O_LR: bad = ex_parse_double(optarg, 1e-9, 10.0, &x); o->lr = (float)x; break;
        case O_WARMUP: bad = ex_parse_long(optarg, 1, 100000000, &o->warmup); break;
        case O_TEXT: o->text = optarg; break;
        case O_CHARS: bad = ex_parse_long(optarg, 16, 1000000000, &o->chars); break;
        case O_EVAL_EVERY: bad = ex_parse_long(optarg, 0, 100000000, &o->eval_every); break;
        case O_EVAL_WINDOWS: bad = ex_parse_long(optarg, 1, 1000000, &o->eval_windows); break;
        case O_CSV: o->csv = optarg; break;
        case O_NO_PLOT: o->plot = 0; break;
        case O_DIST: o->distributed = 1; break;
        case O_SAVE: o->save = optarg; break;
        case O_INIT_OUT: o->init_out = optarg; break;
        case O_INIT_IN: o->init_in = optarg; break;
        case O_WRITE: o->write_losses = optarg; break;
        case O_EXPECT: o->expect_losses = optarg; break;
        case O_EXPECT_BPC: bad = ex_parse_double(optarg, 0.0, 100.0, &o->expect_bpc); break;
        case O_ATTENTION:
            bad = strcmp(optarg, "fused") != 0 && strcmp(optarg, "pieces") != 0;
            o->attn_pieces = strcmp(optarg, "pieces") == 0;
            break;
        case ':':
            fprintf(stderr, "train_gpt: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "train_gpt: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
        if (bad) {
            ex_bad_value("train_gpt", argv, optind, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "train_gpt: unexpected argument '%s' (options start with --; see --help)\n", argv[optind]);
        return -1;
    }
    if (o->width % o->heads != 0) {
        fprintf(stderr, "train_gpt: %d heads do not divide the width %d (see --help)\n", o->heads, o->width);
        return -1;
    }
    if (!ex_backend_known("train_gpt", o->device))
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
        td_status st = td_device_open(be, 0, out);
        if (st != TD_OK)
            fprintf(stderr, "train_gpt: cannot open a %s device: %s (%s)\n", name, td_status_name(st), td_last_error());
        return st;
    }
    return TD_E_DEVICE;
}

/* ---- data ---- */

/* ---- model ---- */

/* The parameters per block, then the embeddings, the final norm and the head: their names,
 * order and shapes are examples/gpt_model.h's (what generate and bench_generate read). */
typedef struct model {
    int vocab_size, context, layers, heads, width;
    int attn_pieces;         /* --attention pieces */
    int n;                   /* layers * GPT_PER_BLOCK + GPT_TAIL */
    char vocab[257];         /* the characters of the token ids, in order */
    td_tensor **p;           /* the parameters (leaves on the autodiff device) */
    char (*names)[48];
} model;

/* Shape of parameter i; returns its number of dims. */
static int param_shape(const model *m, int i, int64_t s[2])
{
    int l = 0;
    return gpt_shape_of(m->vocab_size, m->context, m->width, gpt_param_at(m->layers, i, &l), s);
}

static td_status init_model(model *m, td_device *ad, uint64_t seed)
{
    m->n = m->layers * GPT_PER_BLOCK + GPT_TAIL;
    m->p = calloc((size_t)m->n, sizeof *m->p);
    m->names = calloc((size_t)m->n, sizeof *m->names);
    if (m->p == NULL || m->names == NULL)
        return TD_E_NOMEM;
    const float resid_std = 0.02f / sqrtf(2.0f * (float)m->layers);
    for (int i = 0; i < m->n; i++) {
        int64_t s[2];
        const int nd = param_shape(m, i, s);
        td_status st;
        int l = 0;
        const int k = gpt_param_at(m->layers, i, &l); /* the tail's: GPT_PER_BLOCK + its index */
        gpt_param_name(l, k, m->names[i], sizeof m->names[i]);
        if (k == GPT_LN1_W || k == GPT_LN2_W || k == GPT_PER_BLOCK + GPT_LNF_W)
            st = td_float_ones(ad, s, nd, &m->p[i]);
        else if (nd == 1)
            st = td_float_zeros(ad, s, nd, &m->p[i]);
        else
            st = td_float_random(ad, s, nd, TD_NORMAL, 0.0f, k == GPT_PROJ_W || k == GPT_FC2_W ? resid_std : 0.02f,
                                 seed * 1000 + (uint64_t)i, &m->p[i]);
        if (st == TD_OK)
            st = td_require_grad(m->p[i]);
        if (st != TD_OK)
            return st;
    }
    return TD_OK;
}

/* Replaces the initial values by those of a file --init-out wrote (names and shapes must match). */
static td_status load_init(model *m, td_device *inner, const char *path)
{
    td_safetensors *sf = NULL;
    td_status st = td_safetensors_load(path, inner, &sf);
    for (int i = 0; i < m->n && st == TD_OK; i++) {
        td_tensor *t = NULL;
        int64_t want[2], got[TD_MAX_DIMS];
        int nd = param_shape(m, i, want), gnd = 0;
        st = td_safetensors_get(sf, m->names[i], &t);
        if (st == TD_OK)
            st = td_tensor_shape(t, got, &gnd);
        if (st == TD_OK && (gnd != nd || got[0] != want[0] || (nd == 2 && got[1] != want[1]))) {
            fprintf(stderr, "train_gpt: %s: %s has another shape than this model's\n", path, m->names[i]);
            st = TD_E_SHAPE;
        }
        if (st == TD_OK)
            st = td_tensor_assign(m->p[i], t);
        td_tensor_release(t);
    }
    td_safetensors_free(sf);
    return st;
}

static td_status save_model(const model *m, const char *path)
{
    char meta[5][32];
    const char *kv[14];
    gpt_metadata(m->vocab_size, m->context, m->layers, m->heads, m->width, m->vocab, meta, kv);
    const char **names = malloc(sizeof *names * (size_t)m->n);
    if (names == NULL)
        return TD_E_NOMEM;
    for (int i = 0; i < m->n; i++)
        names[i] = m->names[i];
    td_status st = td_safetensors_save(path, names, m->p, (size_t)m->n, kv, 7);
    free(names);
    return st;
}

/* Scratch tensors of one forward pass, released together. */
typedef struct temps {
    td_tensor **t;
    int n, cap;
} temps;

static td_status keep(temps *ts, td_tensor *t)
{
    if (ts->n == ts->cap) {
        int cap = ts->cap ? ts->cap * 2 : 256;
        td_tensor **more = realloc(ts->t, sizeof *more * (size_t)cap);
        if (more == NULL) {
            td_tensor_release(t);
            return TD_E_NOMEM;
        }
        ts->t = more;
        ts->cap = cap;
    }
    ts->t[ts->n++] = t;
    return TD_OK;
}

static void drop(temps *ts)
{
    for (int i = 0; i < ts->n; i++)
        td_tensor_release(ts->t[i]);
    ts->n = 0;
}

/* OP(var, td_float_xxx(args..., &r_)): var = the result, kept in ts (returns on error). */
#define OP(var, call)                                               \
    td_tensor *var = NULL;                                          \
    do {                                                            \
        td_tensor *r_ = NULL;                                       \
        if ((st = (call)) != TD_OK || (st = keep(ts, r_)) != TD_OK) \
            return st;                                              \
        var = r_;                                                   \
    } while (0)

/* q, k or v [B, T, D] -> [B, H, T, D / H]. */
static td_status heads_split(const model *m, temps *ts, const td_tensor *x, int64_t b, int64_t t, td_tensor **out)
{
    td_status st;
    const int64_t s[] = { b, t, m->heads, m->width / m->heads };
    OP(r, td_float_reshape(x, s, 4, &r_));
    OP(y, td_float_swap_dims(r, 1, 2, &r_));
    *out = y;
    return TD_OK;
}

/* The mean cross entropy (nats) of the model p on inputs idx [B, T] against targets [B * T]. */
static td_status forward(const model *m, td_tensor *const *p, const td_tensor *idx, const td_tensor *targets,
                         int64_t b, int64_t t, temps *ts, td_tensor **loss)
{
    td_status st;
    const int64_t d = m->width;
    const int base = m->layers * GPT_PER_BLOCK;
    OP(tok, td_float_embedding(p[base + GPT_WTE], idx, &r_));
    OP(pos, td_float_narrow(p[base + GPT_WPE], 0, 0, t, &r_));
    OP(x0, td_float_add(tok, pos, &r_));
    td_tensor *x = x0;
    for (int l = 0; l < m->layers; l++) {
        td_tensor *const *w = p + l * GPT_PER_BLOCK;
        OP(h, td_float_layer_norm(x, w[GPT_LN1_W], w[GPT_LN1_B], 1e-5f, &r_));
        OP(q, td_float_linear(h, w[GPT_WQ], w[GPT_BQ], &r_));
        OP(k, td_float_linear(h, w[GPT_WK], w[GPT_BK], &r_));
        OP(v, td_float_linear(h, w[GPT_WV], w[GPT_BV], &r_));
        td_tensor *qh = NULL, *kh = NULL, *vh = NULL;
        if ((st = heads_split(m, ts, q, b, t, &qh)) != TD_OK || (st = heads_split(m, ts, k, b, t, &kh)) != TD_OK ||
            (st = heads_split(m, ts, v, b, t, &vh)) != TD_OK)
            return st;
        td_tensor *a = NULL;
        if (m->attn_pieces) {
            td_device *dev = NULL;
            if ((st = td_tensor_device(qh, &dev)) != TD_OK)
                return st;
            OP(zero, td_float_zeros(dev, NULL, 0, &r_)); /* a 0-d zero mask: the same attention */
            OP(am, td_float_attention_masked(qh, kh, vh, zero, 1, &r_));
            a = am;
        } else {
            OP(af, td_float_attention(qh, kh, vh, 1, &r_));
            a = af;
        }
        OP(at, td_float_swap_dims(a, 1, 2, &r_));
        const int64_t s3[] = { b, t, d };
        OP(ar, td_float_reshape(at, s3, 3, &r_));
        OP(pr, td_float_linear(ar, w[GPT_PROJ_W], w[GPT_PROJ_B], &r_));
        OP(x1, td_float_add(x, pr, &r_));
        OP(h2, td_float_layer_norm(x1, w[GPT_LN2_W], w[GPT_LN2_B], 1e-5f, &r_));
        OP(f, td_float_linear(h2, w[GPT_FC_W], w[GPT_FC_B], &r_));
        OP(g, td_float_gelu(f, &r_));
        OP(f2, td_float_linear(g, w[GPT_FC2_W], w[GPT_FC2_B], &r_));
        OP(x2, td_float_add(x1, f2, &r_));
        x = x2;
    }
    OP(hf, td_float_layer_norm(x, p[base + GPT_LNF_W], p[base + GPT_LNF_B], 1e-5f, &r_));
    const int64_t s2[] = { b * t, d };
    OP(hr, td_float_reshape(hf, s2, 2, &r_));
    OP(logits, td_float_matmul(hr, p[base + GPT_HEAD], &r_));
    OP(l, td_float_cross_entropy(logits, targets, &r_));
    *loss = l;
    return TD_OK;
}

#undef OP

/* Inputs [B, T] and targets [B * T] of the windows starting at starts[0..b). */
static void fill_batch(const int32_t *tokens, const long *starts, int b, int t, int32_t *xin, int32_t *yout)
{
    for (int i = 0; i < b; i++)
        for (int j = 0; j < t; j++) {
            xin[(size_t)i * (size_t)t + (size_t)j] = tokens[starts[i] + j];
            yout[(size_t)i * (size_t)t + (size_t)j] = tokens[starts[i] + j + 1];
        }
}

/* Mean validation loss (nats) over the windows, on the inner device (nothing recorded). */
static td_status evaluate(const model *m, td_device *inner, const int32_t *val, long nval, long windows, double *out)
{
    const int t = m->context;
    td_tensor **v = calloc((size_t)m->n, sizeof *v);
    int32_t *xin = malloc(sizeof(int32_t) * EVAL_BATCH * (size_t)t);
    int32_t *yout = malloc(sizeof(int32_t) * EVAL_BATCH * (size_t)t);
    long starts[EVAL_BATCH];
    td_status st = v && xin && yout ? TD_OK : TD_E_NOMEM;
    for (int i = 0; i < m->n && st == TD_OK; i++)
        st = td_tensor_value(m->p[i], &v[i]);
    const long stride = (nval - t - 1) / windows;
    double sum = 0.0;
    for (long first = 0; first < windows && st == TD_OK; first += EVAL_BATCH) {
        const int b = (int)(windows - first < EVAL_BATCH ? windows - first : EVAL_BATCH);
        for (int i = 0; i < b; i++)
            starts[i] = (first + i) * stride;
        fill_batch(val, starts, b, t, xin, yout);
        const int64_t sx[] = { b, t }, sy[] = { (int64_t)b * t };
        temps ts = { 0 };
        td_tensor *x = NULL, *y = NULL, *loss = NULL;
        float l = 0.0f;
        st = td_int_from_data(inner, xin, sx, 2, &x);
        if (st == TD_OK)
            st = td_int_from_data(inner, yout, sy, 1, &y);
        if (st == TD_OK)
            st = forward(m, v, x, y, b, t, &ts, &loss);
        if (st == TD_OK)
            st = td_float_into_data(loss, &l, 1);
        sum += (double)l * b;
        td_tensor_release(x);
        td_tensor_release(y);
        drop(&ts);
        free(ts.t);
    }
    for (int i = 0; v != NULL && i < m->n; i++)
        td_tensor_release(v[i]);
    free(v);
    free(xin);
    free(yout);
    *out = sum / (double)windows;
    return st;
}

/* ---- output ---- */

static void plot(const char *csv, const char *device)
{
    plot_csv(csv,
             "set datafile missing 'NaN'\n"
             "set title 'train_gpt: KJV characters on autodiff(%s)'\n"
             "set xlabel 'step'\n"
             "set ylabel 'bits per character'\n"
             "plot '%s' every ::1 using 1:2 with lines title 'train (running mean)', "
             "'' every ::1 using 1:3 with linespoints title 'validation'\n",
             device, csv);
}

/* The learning rate of step (from 1): the warmup does not depend on --steps, so a short run
 * takes the first steps of a long one. */
static float lr_at(const options *o, long step)
{
    if (step <= o->warmup)
        return o->lr * (float)step / (float)o->warmup;
    const double frac = (double)(step - o->warmup) / (double)(o->steps - o->warmup);
    const double lo = o->lr / 10.0;
    return (float)(lo + 0.5 * ((double)o->lr - lo) * (1.0 + cos(3.14159265358979323846 * frac)));
}

static td_status reduce_float(td_device *inner, td_group *group, float *v)
{
    int64_t one = 1;
    td_tensor *t = NULL, *r = NULL;
    td_status st = td_float_from_data(inner, v, &one, 1, &t);
    if (st == TD_OK)
        st = td_float_all_reduce(t, group, TD_REDUCE_MEAN, &r);
    if (st == TD_OK)
        st = td_float_into_data(r, v, 1);
    td_tensor_release(t);
    td_tensor_release(r);
    return st;
}

/* One step on windows starts[0..b): forward, backward, (all-reduce), AdamW on both groups. */
static td_status train_step(const model *m, td_optim *decay, td_optim *no_decay, const int *is_decay,
                            td_device *ad, td_group *group, const int32_t *train, const long *starts, int b,
                            int32_t *xin, int32_t *yout, float lr, float *loss_out, int64_t *graph_bytes)
{
    const int t = m->context;
    temps ts = { 0 };
    td_grads *grads = NULL;
    td_tensor *x = NULL, *y = NULL, *loss = NULL;
    td_tensor **gd = calloc((size_t)m->n, sizeof *gd), **gn = calloc((size_t)m->n, sizeof *gn);
    td_status st = gd && gn ? TD_OK : TD_E_NOMEM;
    fill_batch(train, starts, b, t, xin, yout);
    const int64_t sx[] = { b, t }, sy[] = { (int64_t)b * t };
    if (st == TD_OK)
        st = td_int_from_data(ad, xin, sx, 2, &x);
    if (st == TD_OK)
        st = td_int_from_data(ad, yout, sy, 1, &y);
    if (st == TD_OK)
        st = forward(m, m->p, x, y, b, t, &ts, &loss);
    if (st == TD_OK)
        st = td_float_into_data(loss, loss_out, 1);
    if (st == TD_OK && graph_bytes != NULL)
        st = td_testing_graph_bytes(loss, graph_bytes);
    if (st == TD_OK)
        st = td_backward(loss, &grads);
    int nd = 0, nn = 0;
    for (int i = 0; i < m->n && st == TD_OK; i++) {
        td_tensor *g = NULL;
        st = td_grads_get(grads, m->p[i], &g);
        if (st == TD_OK && group != NULL) {
            td_tensor *mean = NULL;
            st = td_float_all_reduce(g, group, TD_REDUCE_MEAN, &mean);
            td_tensor_release(g);
            g = mean;
        }
        if (is_decay[i])
            gd[nd++] = g;
        else
            gn[nn++] = g;
    }
    td_grads_release(grads);
    grads = NULL;
    if (st == TD_OK)
        st = td_optim_set_lr(decay, lr);
    if (st == TD_OK)
        st = td_optim_set_lr(no_decay, lr);
    if (st == TD_OK)
        st = td_optim_step_with(decay, (const td_tensor *const *)gd, nd);
    if (st == TD_OK)
        st = td_optim_step_with(no_decay, (const td_tensor *const *)gn, nn);
    for (int i = 0; gd != NULL && i < nd; i++)
        td_tensor_release(gd[i]);
    for (int i = 0; gn != NULL && i < nn; i++)
        td_tensor_release(gn[i]);
    free(gd);
    free(gn);
    td_tensor_release(x);
    td_tensor_release(y);
    drop(&ts);
    free(ts.t);
    return st;
}

int main(int argc, char **argv)
{
    options o = { .device = "cpu", .steps = 1000, .seed = 1, .batch = 16, .context = 128, .layers = 4, .heads = 4,
                  .width = 128, .lr = 1e-3f, .warmup = 100, .eval_every = 250, .eval_windows = 1024,
                  .csv = "train_gpt_loss.csv",
                  .plot = 1 };
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;

    int rc = 1;
    td_status st = TD_OK;
    td_group *group = NULL;
    td_device *inner = NULL, *ad = NULL;
    model m = { 0 };
    td_optim *decay = NULL, *no_decay = NULL;
    FILE *csv = NULL;
    char *text = NULL;
    int32_t *tokens = NULL, *xin = NULL, *yout = NULL;
    int *is_decay = NULL;
    long *starts = NULL;
    float *losses = NULL;
    double *times = NULL;
    int rank = 0, ranks = 1;

    if (o.distributed) {
        if ((st = td_dist_init(&argc, &argv)) != TD_OK || (st = td_group_world(&group)) != TD_OK ||
            (st = td_group_rank(group, &rank)) != TD_OK || (st = td_group_size(group, &ranks)) != TD_OK)
            goto fail;
        if (o.batch % ranks != 0) {
            fprintf(stderr, "train_gpt: %d ranks do not divide the batch of %d\n", ranks, o.batch);
            goto done;
        }
        if (rank != 0)
            o.csv = NULL;
    }

    long n = 0;
    text = ex_read_text("train_gpt", o.text, &n);
    if (text == NULL) {
        rc = NO_DATA;
        goto done;
    }
    if (o.chars > 0 && o.chars < n)
        n = o.chars;
    int present[256] = { 0 }, id_of[256];
    for (long i = 0; i < n; i++)
        present[(unsigned char)text[i]] = 1;
    char vocab[256];
    int nvocab = 0;
    for (int c = 0; c < 256; c++)
        if (present[c]) {
            id_of[c] = nvocab;
            vocab[nvocab++] = (char)c;
        }
    tokens = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    if (tokens == NULL)
        goto nomem;
    for (long i = 0; i < n; i++)
        tokens[i] = id_of[(unsigned char)text[i]];
    const long ntrain = n - n / 10, nval = n / 10;
    const int t = o.context;
    if (ntrain < t + 2 || nval < t + 2) {
        fprintf(stderr, "train_gpt: %ld characters are too few for a context of %d\n", n, t);
        goto done;
    }
    if (o.eval_windows > (nval - t - 1))
        o.eval_windows = nval - t - 1;

    if (open_backend(o.device, &inner) != TD_OK)
        goto done;
    if ((st = td_device_autodiff(inner, TD_CHECKPOINT_NONE, &ad)) != TD_OK)
        goto fail;
    m = (model){ .vocab_size = nvocab, .context = t, .layers = o.layers, .heads = o.heads, .width = o.width,
                 .attn_pieces = o.attn_pieces };
    memcpy(m.vocab, vocab, (size_t)nvocab);
    if ((st = init_model(&m, ad, o.seed)) != TD_OK)
        goto fail;
    if (o.init_in != NULL && (st = load_init(&m, inner, o.init_in)) != TD_OK)
        goto fail;
    if (o.init_out != NULL && rank == 0) {
        if ((st = save_model(&m, o.init_out)) != TD_OK)
            goto fail;
        printf("initial weights: %s\n", o.init_out);
    }
    is_decay = calloc((size_t)m.n, sizeof *is_decay);
    td_tensor **pd = calloc((size_t)m.n, sizeof *pd), **pn = calloc((size_t)m.n, sizeof *pn);
    int nd = 0, nn = 0;
    long nparams = 0;
    if (is_decay == NULL || pd == NULL || pn == NULL) {
        free(pd);
        free(pn);
        goto nomem;
    }
    for (int i = 0; i < m.n; i++) {
        int64_t s[2];
        const int dims = param_shape(&m, i, s);
        nparams += dims == 2 ? (long)(s[0] * s[1]) : (long)s[0];
        is_decay[i] = dims == 2;
        if (is_decay[i])
            pd[nd++] = m.p[i];
        else
            pn[nn++] = m.p[i];
    }
    td_adam_options ao = td_adam_defaults(o.lr);
    ao.beta2 = 0.99f;
    ao.weight_decay = 0.1f;
    ao.decoupled = true;
    st = td_optim_adam(pd, nd, &ao, &decay);
    ao.weight_decay = 0.0f;
    if (st == TD_OK)
        st = td_optim_adam(pn, nn, &ao, &no_decay);
    free(pd);
    free(pn);
    if (st != TD_OK)
        goto fail;

    const int b_local = o.batch / ranks;
    xin = malloc(sizeof(int32_t) * (size_t)o.batch * (size_t)t);
    yout = malloc(sizeof(int32_t) * (size_t)o.batch * (size_t)t);
    starts = malloc(sizeof(long) * (size_t)o.batch);
    losses = malloc(sizeof(float) * (size_t)o.steps);
    times = malloc(sizeof(double) * (size_t)o.steps);
    if (xin == NULL || yout == NULL || starts == NULL || losses == NULL || times == NULL)
        goto nomem;
    if (o.csv != NULL) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            perror(o.csv);
            goto done;
        }
        fprintf(csv, "step,train_bpc,val_bpc,lr\n");
    }
    if (rank == 0) {
        printf("train_gpt: %s, %ld characters (%ld training, %ld validation), vocabulary %d; uniform loss %.3f "
               "bits/char\n",
               o.text ? o.text : "KJV (bible -f Gen1:1-Rev22:21)", n, ntrain, nval, nvocab, log2((double)nvocab));
        printf("model: %d layers, %d heads, width %d, context %d, %ld parameters (untied head); autodiff(%s)%s\n",
               o.layers, o.heads, o.width, t, nparams, o.device, o.distributed ? ", data parallel" : "");
        printf("recipe: %ld steps of %d windows%s, AdamW lr %g (warmup %ld, cosine to %g), betas 0.9 0.99, weight "
               "decay 0.1 on matrices, seed %llu, %d threads\n",
               o.steps, o.batch, o.distributed ? " split over the ranks" : "", (double)o.lr, o.warmup,
               (double)o.lr / 10.0, (unsigned long long)o.seed, td_get_num_threads());
        fflush(stdout);
    }

    const double ln2 = log(2.0);
    uint64_t rng = o.has_batch_seed ? o.batch_seed : o.seed;
    int64_t graph_bytes = 0;
    double t_start = ex_now_s(), t_report = t_start, run = 0.0, val = NAN;
    for (long s = 0; s < o.steps; s++) {
        for (int i = 0; i < o.batch; i++)
            starts[i] = (long)(ex_splitmix64(&rng) % (uint64_t)(ntrain - t - 1));
        const float lr = lr_at(&o, s + 1);
        float loss = 0.0f;
        double t0 = ex_now_s();
        if ((st = train_step(&m, decay, no_decay, is_decay, ad, group, tokens, starts + rank * b_local, b_local, xin,
                             yout, lr, &loss, s == 0 ? &graph_bytes : NULL)) != TD_OK)
            goto fail;
        if (s == 0 && rank == 0) {
            printf("memory: the autodiff graph of a step keeps %.1f MiB for the backward pass (%d windows of %d; "
                   "attention %s)\n",
                   (double)graph_bytes / 1048576.0, b_local, t, o.attn_pieces ? "pieces" : "fused");
        }
        times[s] = ex_now_s() - t0;
        if (group != NULL && (st = reduce_float(inner, group, &loss)) != TD_OK)
            goto fail;
        losses[s] = loss;
        if (!isfinite(loss)) {
            fprintf(stderr, "train_gpt: the loss diverged at step %ld (try a smaller --lr)\n", s + 1);
            goto done;
        }
        run = s == 0 ? loss : 0.95 * run + 0.05 * loss;
        const int last = s + 1 == o.steps;
        const int eval = last || (o.eval_every > 0 && (s + 1) % o.eval_every == 0);
        if (eval && rank == 0) {
            double vl = 0.0;
            if ((st = evaluate(&m, inner, tokens + ntrain, nval, o.eval_windows, &vl)) != TD_OK)
                goto fail;
            val = vl / ln2;
        }
        double now = ex_now_s();
        if (rank == 0 && (eval || now - t_report >= 5.0 || s < 5)) {
            printf("step %ld/%ld  loss %.4f bpc  running %.4f bpc", s + 1, o.steps, loss / ln2, run / ln2);
            if (eval)
                printf("  validation %.4f bpc", val);
            printf("  %.0f ms/step\n", 1e3 * (now - t_start) / (double)(s + 1));
            fflush(stdout);
            t_report = now;
        }
        if (csv != NULL && (eval || (s + 1) % 10 == 0))
        {
            char vs[32] = "NaN";
            if (eval)
                snprintf(vs, sizeof vs, "%.6f", val);
            fprintf(csv, "%ld,%.6f,%s,%.6g\n", s + 1, run / ln2, vs, (double)lr);
        }
    }
    double total = ex_now_s() - t_start;
    qsort(times, (size_t)o.steps, sizeof(double), ex_cmp_double);
    if (rank == 0) {
        printf("final: train (running) %.4f bpc, validation %.4f bpc over %ld windows\n", run / ln2, val,
               o.eval_windows);
        printf("trained in %.1f s; step median: %.3f ms\n", total, 1e3 * times[o.steps / 2]);
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            printf("memory: peak resident set %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    }
    if (csv != NULL) {
        fclose(csv);
        csv = NULL;
        printf("loss curve: %s\n", o.csv);
        if (o.plot)
            plot(o.csv, o.device);
    }
    if (o.save != NULL && rank == 0) {
        if ((st = save_model(&m, o.save)) != TD_OK)
            goto fail;
        printf("weights: %s (vocabulary: the sorted bytes of the text)\n", o.save);
    }
    rc = 0;
    if (o.expect_bpc > 0.0 && rank == 0) {
        if (!(val < o.expect_bpc)) {
            fprintf(stderr, "train_gpt: validation %.4f bpc is not below %.4f\n", val, o.expect_bpc);
            rc = 1;
        } else {
            printf("validation %.4f bpc is below %.4f (uniform %.4f)\n", val, o.expect_bpc, log2((double)nvocab));
        }
    }
    if (o.write_losses != NULL && rank == 0) {
        FILE *f = fopen(o.write_losses, "w");
        if (f == NULL) {
            perror(o.write_losses);
            rc = 1;
        } else {
            for (long i = 0; i < o.steps; i++)
                fprintf(f, "%.9g\n", (double)losses[i]);
            fclose(f);
        }
    }
    if (o.expect_losses != NULL && rank == 0) {
        FILE *f = fopen(o.expect_losses, "r");
        long i = 0, bad = 0;
        double want = 0.0;
        if (f == NULL) {
            perror(o.expect_losses);
            rc = 1;
        } else {
            for (; i < 20 && i < o.steps && fscanf(f, "%lf", &want) == 1; i++)
                if (!(fabs((double)losses[i] - want) <= 1e-3 * fabs(want))) {
                    fprintf(stderr, "train_gpt: step %ld: loss %.6f, %s has %.6f\n", i + 1, (double)losses[i],
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

nomem:
    fprintf(stderr, "train_gpt: out of memory\n");
    goto done;
fail:
    fprintf(stderr, "train_gpt: %s (%s)\n", td_status_name(st), td_last_error());
done:
    if (csv != NULL)
        fclose(csv);
    td_optim_release(decay);
    td_optim_release(no_decay);
    for (int i = 0; m.p != NULL && i < m.n; i++)
        td_tensor_release(m.p[i]);
    free(m.p);
    free(m.names);
    td_device_release(ad);
    td_device_release(inner);
    td_group_release(group);
    if (o.distributed)
        td_dist_finalize();
    free(text);
    free(tokens);
    free(xin);
    free(yout);
    free(starts);
    free(is_decay);
    free(losses);
    free(times);
    return rc;
}
