/* The GPT of examples/train_gpt for inference: its weights (from a file train_gpt --save
 * wrote, or random ones of any shape), and one forward pass over new positions with a KV
 * cache. Shared by examples/generate, bench/bench_generate and tests/runtime/test_generate.
 *
 * Model (train_gpt.c's top comment has it all): token + position embeddings; blocks of
 * x += proj(attention(q, k, v of ln1(x))), x += fc2(gelu(fc(ln2(x)))); ln_f; head (no bias).
 * Weights are [in, out] (x @ w); layer norms with eps 1e-5; H heads of D / H.
 *
 * gpt_step runs tokens at positions p .. p + n - 1 and appends their keys and values to each
 * layer's cache ([1, H, positions, D / H], float_cat along the positions: a copy of the
 * cache, O(p) per token like the attention itself). Either a whole prompt from an empty cache
 * (p = 0, causal attention over its n positions) or one new token (n = 1) whose query attends
 * to the p + 1 cached positions: a token costs O(D^2) in the linear layers plus O(p D) in the
 * attention and the append, never a recomputation of the earlier positions. One token's
 * attention is matmul_nt, softmax, matmul (no transposed copy of the key cache, which
 * td_float_attention's decomposition makes: bench_generate compares the two). */
#ifndef EXAMPLES_GPT_MODEL_H
#define EXAMPLES_GPT_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_ops.h"
#include "td_safetensors.h"

#define GPT_MAX_LAYERS 64
enum { GPT_LN1_W, GPT_LN1_B, GPT_WQ, GPT_BQ, GPT_WK, GPT_BK, GPT_WV, GPT_BV, GPT_PROJ_W, GPT_PROJ_B, GPT_LN2_W,
       GPT_LN2_B, GPT_FC_W, GPT_FC_B, GPT_FC2_W, GPT_FC2_B, GPT_PER_BLOCK };
enum { GPT_WTE, GPT_WPE, GPT_LNF_W, GPT_LNF_B, GPT_HEAD, GPT_TAIL };
static const char *const gpt_block_names[GPT_PER_BLOCK] = {
    "ln1.weight",    "ln1.bias",    "attn.q.weight",    "attn.q.bias",    "attn.k.weight", "attn.k.bias",
    "attn.v.weight", "attn.v.bias", "attn.proj.weight", "attn.proj.bias", "ln2.weight",    "ln2.bias",
    "mlp.fc.weight", "mlp.fc.bias", "mlp.fc2.weight",   "mlp.fc2.bias"
};
static const char *const gpt_tail_names[GPT_TAIL] = { "wte", "wpe", "ln_f.weight", "ln_f.bias", "head.weight" };

/* A linear layer of a step done another way (bench_generate's quantized rows): y = x @ w + b
 * for x [rows, in], where w is block weight `which` (GPT_WQ, GPT_WK, GPT_WV, GPT_PROJ_W,
 * GPT_FC_W, GPT_FC2_W) of `layer`, or the head (layer -1, which GPT_HEAD, b NULL). NULL in the
 * model: td_float_linear / td_float_matmul on the f32 weights. */
typedef td_status (*gpt_linear_fn)(void *ctx, const td_tensor *x, int layer, int which, const td_tensor *w,
                                   const td_tensor *b, td_tensor **y);

typedef struct gpt {
    int vocab_size, context, layers, heads, width;
    char vocab[257];
    td_tensor *block[GPT_MAX_LAYERS][GPT_PER_BLOCK];
    td_tensor *tail[GPT_TAIL];
    gpt_linear_fn linear; /* NULL: the f32 weights */
    void *linear_ctx;
    int decode_attention_op; /* 1: one token's attention by td_float_attention too (bench_generate's comparison) */
} gpt;

static inline int gpt_meta_int(const td_safetensors *sf, const char *key, int lo, int hi, int *out)
{
    const char *v = NULL;
    char *end = NULL;
    if (td_safetensors_metadata(sf, key, &v) != TD_OK || v == NULL)
        return -1;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi)
        return -1;
    *out = (int)n;
    return 0;
}

static inline void gpt_free(gpt *g)
{
    for (int l = 0; l < GPT_MAX_LAYERS; l++)
        for (int k = 0; k < GPT_PER_BLOCK; k++) {
            td_tensor_release(g->block[l][k]);
            g->block[l][k] = NULL;
        }
    for (int t = 0; t < GPT_TAIL; t++) {
        td_tensor_release(g->tail[t]);
        g->tail[t] = NULL;
    }
}

/* The shape of weight k of a block (k < GPT_PER_BLOCK), or of tail tensor t (k = GPT_PER_BLOCK + t). */
static inline int gpt_param_shape(const gpt *g, int k, int64_t s[2])
{
    const int64_t d = g->width;
    switch (k) {
    case GPT_WQ: case GPT_WK: case GPT_WV: case GPT_PROJ_W: s[0] = d; s[1] = d; return 2;
    case GPT_FC_W: s[0] = d; s[1] = 4 * d; return 2;
    case GPT_FC_B: s[0] = 4 * d; return 1;
    case GPT_FC2_W: s[0] = 4 * d; s[1] = d; return 2;
    case GPT_PER_BLOCK + GPT_WTE: s[0] = g->vocab_size; s[1] = d; return 2;
    case GPT_PER_BLOCK + GPT_WPE: s[0] = g->context; s[1] = d; return 2;
    case GPT_PER_BLOCK + GPT_HEAD: s[0] = d; s[1] = g->vocab_size; return 2;
    default: s[0] = d; return 1;
    }
}

/* The tensor of weight k as gpt_param_shape numbers them. */
static inline td_tensor **gpt_param(gpt *g, int layer, int k)
{
    return k < GPT_PER_BLOCK ? &g->block[layer][k] : &g->tail[k - GPT_PER_BLOCK];
}

/* Whether every weight has its shape (a file with others would fail inside a step). */
static inline td_status gpt_check_shapes(gpt *g, const char *prog)
{
    for (int l = 0; l < g->layers; l++)
        for (int k = 0; k < GPT_PER_BLOCK + GPT_TAIL; k++) {
            if (k >= GPT_PER_BLOCK && l > 0)
                break;
            int64_t want[2], got[TD_MAX_DIMS];
            int nd = gpt_param_shape(g, k, want), gnd = 0;
            td_status st = td_tensor_shape(*gpt_param(g, l, k), got, &gnd);
            if (st != TD_OK)
                return st;
            if (gnd != nd || got[0] != want[0] || (nd == 2 && got[1] != want[1])) {
                fprintf(stderr, "%s: %s%s has another shape than the metadata's model\n", prog,
                        k < GPT_PER_BLOCK ? "a block's " : "", k < GPT_PER_BLOCK ? gpt_block_names[k]
                                                                                 : gpt_tail_names[k - GPT_PER_BLOCK]);
                return TD_E_SHAPE;
            }
        }
    return TD_OK;
}

/* The weights and shape of a file train_gpt saved, on dev; says what is wrong otherwise
 * (on stderr, after prog). On failure *g holds nothing (gpt_free is still safe). */
static inline td_status gpt_load(const char *path, td_device *dev, const char *prog, gpt *g)
{
    td_safetensors *sf = NULL;
    memset(g, 0, sizeof *g);
    td_status st = td_safetensors_load(path, dev, &sf);
    if (st != TD_OK)
        return st;
    const char *vocab = NULL;
    if (gpt_meta_int(sf, "vocab_size", 1, 256, &g->vocab_size) || gpt_meta_int(sf, "context", 1, 1 << 20, &g->context) ||
        gpt_meta_int(sf, "layers", 1, GPT_MAX_LAYERS, &g->layers) || gpt_meta_int(sf, "heads", 1, 1 << 16, &g->heads) ||
        gpt_meta_int(sf, "width", 1, 1 << 20, &g->width) || td_safetensors_metadata(sf, "vocab", &vocab) != TD_OK ||
        vocab == NULL || strlen(vocab) != (size_t)g->vocab_size || g->width % g->heads != 0) {
        fprintf(stderr, "%s: %s lacks train_gpt's metadata (vocab_size, context, layers, heads, width, vocab)\n",
                prog, path);
        td_safetensors_free(sf);
        return TD_E_INVALID;
    }
    memcpy(g->vocab, vocab, (size_t)g->vocab_size + 1);
    char name[64];
    for (int l = 0; l < g->layers && st == TD_OK; l++)
        for (int k = 0; k < GPT_PER_BLOCK && st == TD_OK; k++) {
            snprintf(name, sizeof name, "blocks.%d.%s", l, gpt_block_names[k]);
            st = td_safetensors_get(sf, name, &g->block[l][k]);
        }
    for (int t = 0; t < GPT_TAIL && st == TD_OK; t++)
        st = td_safetensors_get(sf, gpt_tail_names[t], &g->tail[t]);
    td_safetensors_free(sf);
    if (st == TD_OK)
        st = gpt_check_shapes(g, prog);
    if (st != TD_OK)
        gpt_free(g);
    return st;
}

/* A model of the given shape with random weights drawn from seed (td_float_random): matrices
 * normal(0, 1 / sqrt(in)), the head normal(0, 4 / sqrt(width)) (logits a few units apart, so
 * greedy choices are not near ties), embeddings normal(0, 1), biases normal(0, 0.1), layer
 * norm weights uniform in [0.5, 1.5]. The vocabulary: the characters from ' ' on. */
static inline td_status gpt_random(td_device *dev, int vocab_size, int context, int layers, int heads, int width,
                                   uint64_t seed, gpt *g)
{
    memset(g, 0, sizeof *g);
    if (vocab_size < 1 || vocab_size > 95 || context < 1 || layers < 1 || layers > GPT_MAX_LAYERS || heads < 1 ||
        width < 1 || width % heads != 0)
        return TD_E_INVALID;
    *g = (gpt){ .vocab_size = vocab_size, .context = context, .layers = layers, .heads = heads, .width = width };
    for (int i = 0; i < vocab_size; i++)
        g->vocab[i] = (char)(' ' + i);
    td_status st = TD_OK;
    uint64_t n = 0;
    for (int l = 0; l < layers && st == TD_OK; l++)
        for (int k = 0; k < GPT_PER_BLOCK + GPT_TAIL && st == TD_OK; k++) {
            if (k >= GPT_PER_BLOCK && l != layers - 1)
                break;
            int64_t s[2];
            const int nd = gpt_param_shape(g, k, s);
            td_tensor **t = gpt_param(g, l, k);
            const uint64_t sd = seed * 100003u + n++;
            if (k == GPT_LN1_W || k == GPT_LN2_W || k == GPT_PER_BLOCK + GPT_LNF_W)
                st = td_float_random(dev, s, nd, TD_UNIFORM, 0.5f, 1.5f, sd, t);
            else if (nd == 1)
                st = td_float_random(dev, s, nd, TD_NORMAL, 0.0f, 0.1f, sd, t);
            else if (k == GPT_PER_BLOCK + GPT_WTE || k == GPT_PER_BLOCK + GPT_WPE)
                st = td_float_random(dev, s, nd, TD_NORMAL, 0.0f, 1.0f, sd, t);
            else
                st = td_float_random(dev, s, nd, TD_NORMAL, 0.0f,
                                     (k == GPT_PER_BLOCK + GPT_HEAD ? 4.0f : 1.0f) / sqrtf((float)s[0]), sd, t);
        }
    if (st != TD_OK)
        gpt_free(g);
    return st;
}

/* Writes the model as train_gpt --save does (names, metadata), for generate and PyTorch. */
static inline td_status gpt_save(const gpt *g, const char *path)
{
    const int n = g->layers * GPT_PER_BLOCK + GPT_TAIL;
    char meta[5][32];
    snprintf(meta[0], sizeof meta[0], "%d", g->vocab_size);
    snprintf(meta[1], sizeof meta[1], "%d", g->context);
    snprintf(meta[2], sizeof meta[2], "%d", g->layers);
    snprintf(meta[3], sizeof meta[3], "%d", g->heads);
    snprintf(meta[4], sizeof meta[4], "%d", g->width);
    const char *kv[] = { "format", "tdispatch train_gpt", "vocab_size", meta[0], "context", meta[1],
                         "layers", meta[2], "heads", meta[3], "width", meta[4], "vocab", g->vocab };
    const char **names = malloc(sizeof *names * (size_t)n);
    td_tensor **ts = malloc(sizeof *ts * (size_t)n);
    char (*buf)[64] = malloc(sizeof *buf * (size_t)n);
    td_status st = TD_E_NOMEM;
    if (names != NULL && ts != NULL && buf != NULL) {
        for (int i = 0; i < n; i++) {
            if (i < g->layers * GPT_PER_BLOCK) {
                snprintf(buf[i], sizeof buf[i], "blocks.%d.%s", i / GPT_PER_BLOCK, gpt_block_names[i % GPT_PER_BLOCK]);
                ts[i] = g->block[i / GPT_PER_BLOCK][i % GPT_PER_BLOCK];
            } else {
                snprintf(buf[i], sizeof buf[i], "%s", gpt_tail_names[i - g->layers * GPT_PER_BLOCK]);
                ts[i] = g->tail[i - g->layers * GPT_PER_BLOCK];
            }
            names[i] = buf[i];
        }
        st = td_safetensors_save(path, names, ts, (size_t)n, kv, 7);
    }
    free(names);
    free(ts);
    free(buf);
    return st;
}

/* The bytes of weights one generated token reads: every block matrix and bias, the layer
 * norms, the head, and one row of each embedding (f32). */
static inline double gpt_step_weight_bytes(const gpt *g)
{
    const double d = g->width;
    const double block = 12.0 * d * d + 13.0 * d; /* q k v proj (4 d^2), fc, fc2 (8 d^2); biases 9 d; norms 4 d */
    return 4.0 * (g->layers * block + d * g->vocab_size + 2.0 * d + 2.0 * d);
}

typedef struct gpt_temps {
    td_tensor *t[128]; /* a layer makes 23; gpt_step drops them past 40 */
    int n;
} gpt_temps;

static inline void gpt_drop(gpt_temps *ts)
{
    for (int i = 0; i < ts->n; i++)
        td_tensor_release(ts->t[i]);
    ts->n = 0;
}

static inline void gpt_clear_cache(td_tensor **c, int n)
{
    for (int i = 0; i < n; i++) {
        td_tensor_release(c[i]);
        c[i] = NULL;
    }
}

static inline td_status gpt_linear(const gpt *g, const td_tensor *x, int layer, int which, td_tensor **y)
{
    const td_tensor *w = layer < 0 ? g->tail[GPT_HEAD] : g->block[layer][which];
    const td_tensor *b = layer < 0 ? NULL : g->block[layer][which + 1];
    if (g->linear != NULL)
        return g->linear(g->linear_ctx, x, layer, which, w, b, y);
    return b == NULL ? td_float_matmul(x, w, y) : td_float_linear(x, w, b, y);
}

/* GPT_OP(var, td_float_xxx(args..., &r_)): var = the result, kept in ts until gpt_drop. */
#define GPT_OP(var, call)                \
    td_tensor *var = NULL;               \
    do {                                 \
        td_tensor *r_ = NULL;            \
        if ((st = (call)) != TD_OK)      \
            goto out;                    \
        ts.t[ts.n++] = var = r_;         \
    } while (0)

/* Runs tokens[0..n) at positions p .. p + n - 1, appending their keys and values to the
 * caches k_cache[l], v_cache[l] (NULL when empty); logits receives the last position's
 * vocab_size logits. Either a prompt (p = 0, empty caches) or one token (n = 1, p cached
 * positions); p + n must fit the context. */
static inline td_status gpt_step(const gpt *g, td_device *dev, const int32_t *tokens, int n, int p,
                                 td_tensor **k_cache, td_tensor **v_cache, float *logits)
{
    if (n < 1 || p < 0 || (n > 1 && p != 0) || (int64_t)p + n > g->context || (p == 0) != (k_cache[0] == NULL))
        return TD_E_INVALID;
    td_status st = TD_OK;
    gpt_temps ts = { .n = 0 };
    const int64_t d = g->width, h = g->heads;
    const int64_t s_idx[] = { 1, n }, s_heads[] = { 1, n, h, d / h }, s_rows[] = { 1, n, d }, s_last[] = { 1, d };
    GPT_OP(idx, td_int_from_data(dev, tokens, s_idx, 2, &r_));
    GPT_OP(tok, td_float_embedding(g->tail[GPT_WTE], idx, &r_));
    GPT_OP(pos, td_float_narrow(g->tail[GPT_WPE], 0, p, n, &r_));
    GPT_OP(x0, td_float_add(tok, pos, &r_));
    td_tensor *x = x0;
    for (int l = 0; l < g->layers; l++) {
        td_tensor *const *w = g->block[l];
        GPT_OP(hn, td_float_layer_norm(x, w[GPT_LN1_W], w[GPT_LN1_B], 1e-5f, &r_));
        GPT_OP(q, gpt_linear(g, hn, l, GPT_WQ, &r_));
        GPT_OP(k, gpt_linear(g, hn, l, GPT_WK, &r_));
        GPT_OP(v, gpt_linear(g, hn, l, GPT_WV, &r_));
        GPT_OP(q4, td_float_reshape(q, s_heads, 4, &r_));
        GPT_OP(k4, td_float_reshape(k, s_heads, 4, &r_));
        GPT_OP(v4, td_float_reshape(v, s_heads, 4, &r_));
        GPT_OP(qh, td_float_swap_dims(q4, 1, 2, &r_));
        GPT_OP(kh, td_float_swap_dims(k4, 1, 2, &r_));
        GPT_OP(vh, td_float_swap_dims(v4, 1, 2, &r_));
        td_tensor *nk = NULL, *nv = NULL;
        if (k_cache[l] == NULL) {
            st = td_tensor_retain(kh);
            if (st == TD_OK)
                nk = kh;
            if (st == TD_OK && (st = td_tensor_retain(vh)) == TD_OK)
                nv = vh;
        } else {
            const td_tensor *kk[] = { k_cache[l], kh }, *vv[] = { v_cache[l], vh };
            st = td_float_cat(kk, 2, 2, &nk);
            if (st == TD_OK)
                st = td_float_cat(vv, 2, 2, &nv);
        }
        if (st != TD_OK) {
            td_tensor_release(nk);
            td_tensor_release(nv);
            goto out;
        }
        td_tensor_release(k_cache[l]);
        td_tensor_release(v_cache[l]);
        k_cache[l] = nk;
        v_cache[l] = nv;
        /* A prompt: causal attention over its positions. One token: its query sees every cached
         * position, softmax(q k^T / sqrt(E)) v with k^T by matmul_nt's transpose flag:
         * td_float_attention's decomposition would copy the whole transposed key cache first. */
        td_tensor *a = NULL;
        if (n > 1 || g->decode_attention_op) {
            GPT_OP(att, td_float_attention(qh, nk, nv, n > 1, &r_));
            a = att;
        } else {
            GPT_OP(sc, td_float_matmul_nt(qh, nk, &r_));
            GPT_OP(ss, td_float_mul_scalar(sc, 1.0f / sqrtf((float)(d / h)), &r_));
            GPT_OP(sm, td_float_softmax(ss, -1, &r_));
            GPT_OP(av, td_float_matmul(sm, nv, &r_));
            a = av;
        }
        GPT_OP(at, td_float_swap_dims(a, 1, 2, &r_));
        GPT_OP(ar, td_float_reshape(at, s_rows, 3, &r_));
        GPT_OP(pr, gpt_linear(g, ar, l, GPT_PROJ_W, &r_));
        GPT_OP(x1, td_float_add(x, pr, &r_));
        GPT_OP(h2, td_float_layer_norm(x1, w[GPT_LN2_W], w[GPT_LN2_B], 1e-5f, &r_));
        GPT_OP(f, gpt_linear(g, h2, l, GPT_FC_W, &r_));
        GPT_OP(gl, td_float_gelu(f, &r_));
        GPT_OP(f2, gpt_linear(g, gl, l, GPT_FC2_W, &r_));
        GPT_OP(x2, td_float_add(x1, f2, &r_));
        x = x2;
        if (ts.n > 40) { /* keep only x alive between layers */
            if ((st = td_tensor_retain(x)) != TD_OK)
                goto out;
            gpt_drop(&ts);
            ts.t[ts.n++] = x;
        }
    }
    GPT_OP(last, td_float_narrow(x, 1, n - 1, 1, &r_));
    GPT_OP(lr, td_float_reshape(last, s_last, 2, &r_));
    GPT_OP(hf, td_float_layer_norm(lr, g->tail[GPT_LNF_W], g->tail[GPT_LNF_B], 1e-5f, &r_));
    GPT_OP(lg, gpt_linear(g, hf, -1, GPT_HEAD, &r_));
    st = td_float_into_data(lg, logits, g->vocab_size);
out:
    gpt_drop(&ts);
    return st;
}

#undef GPT_OP

#endif
