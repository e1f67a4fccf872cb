/* The GPT of examples/train_gpt for inference, in one place: its weights (a safetensors file
 * train_gpt --save wrote, a GGUF file generate --quantize wrote in f32, f16, bf16, q8_0 or
 * q4_0, or random ones of any shape), GGUF and safetensors writers, and the forward pass:
 * with a KV cache one new position at a time (gpt_step), or over whole windows without one
 * (gpt_forward with no cache: generate --eval, --check). Shared by examples/generate,
 * examples/train_gpt (the names and the file's metadata), bench/bench_generate and
 * tests/runtime/test_generate.
 *
 * Model (train_gpt.c's top comment has it all): token + position embeddings; blocks of
 * x += proj(attention(q, k, v of ln1(x))), x += fc2(gelu(fc(ln2(x)))); ln_f; head (no bias).
 * Layer norms with eps 1e-5; H heads of D / H.
 *
 * The linear weights (q, k, v, proj, fc, fc2 and the head) are held one of two ways (gpt.nt):
 * - nt = 0: [in, out] in f32, train_gpt's layout (x @ w: td_float_linear, td_float_matmul).
 *   A safetensors file and gpt_random give this (f16 / bf16 / f64 widened to f32).
 * - nt = 1: [out, in], ggml's layout, in f32, q8_0 or q4_0 (x @ w^T: td_float_matmul_nt;
 *   on q8_0 / q4_0 weights the library's quantized matmul, activations rounded to q8_0 per
 *   row, integer dot products: docs/dtypes.md section 8). A GGUF file gives this (its f16 /
 *   bf16 widened to f32, q8_0 / q4_0 kept as blocks), and gpt_quantized makes it from a
 *   model in memory (bench_generate's q8_0 / q4_0 rows).
 * Embeddings, norms and biases are f32 in every case.
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

#include "td_gguf.h"
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

typedef struct gpt {
    int vocab_size, context, layers, heads, width;
    char vocab[257];
    int nt;                 /* 0: linear weights [in, out] f32; 1: [out, in] in wdtype (the top comment) */
    td_dtype wdtype;        /* the linear weights' dtype in memory: f32, q8_0 or q4_0 */
    const char *file_dtype; /* the linear weights' dtype in the file read (NULL: none read) */
    td_tensor *block[GPT_MAX_LAYERS][GPT_PER_BLOCK];
    td_tensor *tail[GPT_TAIL];
    int decode_attention_op; /* 1: one token's attention by td_float_attention too (bench_generate's comparison) */
} gpt;

/* Parameter k: block weight k < GPT_PER_BLOCK, or tail tensor t as k = GPT_PER_BLOCK + t. */
static inline int gpt_is_linear(int k)
{
    return k == GPT_WQ || k == GPT_WK || k == GPT_WV || k == GPT_PROJ_W || k == GPT_FC_W || k == GPT_FC2_W ||
           k == GPT_PER_BLOCK + GPT_HEAD;
}

static inline const char *gpt_param_name(int layer, int k, char *buf, size_t size)
{
    if (k < GPT_PER_BLOCK)
        snprintf(buf, size, "blocks.%d.%s", layer, gpt_block_names[k]);
    else
        snprintf(buf, size, "%s", gpt_tail_names[k - GPT_PER_BLOCK]);
    return buf;
}

/* The shape of parameter k in train_gpt's layout ([in, out] linear weights); returns its dims. */
static inline int gpt_shape_of(int vocab_size, int context, int width, int k, int64_t s[2])
{
    const int64_t d = width;
    switch (k) {
    case GPT_WQ: case GPT_WK: case GPT_WV: case GPT_PROJ_W: s[0] = d; s[1] = d; return 2;
    case GPT_FC_W: s[0] = d; s[1] = 4 * d; return 2;
    case GPT_FC_B: s[0] = 4 * d; return 1;
    case GPT_FC2_W: s[0] = 4 * d; s[1] = d; return 2;
    case GPT_PER_BLOCK + GPT_WTE: s[0] = vocab_size; s[1] = d; return 2;
    case GPT_PER_BLOCK + GPT_WPE: s[0] = context; s[1] = d; return 2;
    case GPT_PER_BLOCK + GPT_HEAD: s[0] = d; s[1] = vocab_size; return 2;
    default: s[0] = d; return 1;
    }
}

/* The shape parameter k has in g (linear weights [out, in] when g->nt). */
static inline int gpt_param_shape(const gpt *g, int k, int64_t s[2])
{
    const int nd = gpt_shape_of(g->vocab_size, g->context, g->width, k, s);
    if (g->nt && gpt_is_linear(k)) {
        const int64_t t = s[0];
        s[0] = s[1];
        s[1] = t;
    }
    return nd;
}

static inline td_tensor **gpt_param(gpt *g, int layer, int k)
{
    return k < GPT_PER_BLOCK ? &g->block[layer][k] : &g->tail[k - GPT_PER_BLOCK];
}

/* Parameter i (0 .. layers * GPT_PER_BLOCK + GPT_TAIL - 1) in train_gpt's order, the blocks'
 * then the tail: returns its k (gpt_param's numbering), *layer its block (0 for the tail). */
static inline int gpt_param_at(int layers, int i, int *layer)
{
    const int nb = layers * GPT_PER_BLOCK;
    *layer = i < nb ? i / GPT_PER_BLOCK : 0;
    return i < nb ? i % GPT_PER_BLOCK : GPT_PER_BLOCK + i - nb;
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

/* Whether every weight has its shape (a file with others would fail inside a step). */
static inline td_status gpt_check_shapes(gpt *g, const char *prog)
{
    for (int i = 0; i < g->layers * GPT_PER_BLOCK + GPT_TAIL; i++) {
        int l = 0;
        const int k = gpt_param_at(g->layers, i, &l);
        int64_t want[2] = { 0, 0 }, got[TD_MAX_DIMS];
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

/* train_gpt's metadata as safetensors strings (kv: 7 pairs), from buffers meta[5][32]. */
static inline void gpt_metadata(int vocab_size, int context, int layers, int heads, int width, const char *vocab,
                                char meta[5][32], const char *kv[14])
{
    const int vals[5] = { vocab_size, context, layers, heads, width };
    static const char *const keys[5] = { "vocab_size", "context", "layers", "heads", "width" };
    kv[0] = "format";
    kv[1] = "tdispatch train_gpt";
    for (int i = 0; i < 5; i++) {
        snprintf(meta[i], 32, "%d", vals[i]);
        kv[2 + 2 * i] = keys[i];
        kv[3 + 2 * i] = meta[i];
    }
    kv[12] = "vocab";
    kv[13] = vocab;
}

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

static inline int gpt_gguf_int(const td_gguf *f, const char *key, int lo, int hi, int *out)
{
    int64_t v = 0;
    if (td_gguf_get_int(f, key, &v) != TD_OK || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static inline int gpt_vocab_ok(const gpt *g, const char *vocab, size_t vlen)
{
    return vocab != NULL && vlen == (size_t)g->vocab_size && strlen(vocab) == vlen && g->width % g->heads == 0;
}

static inline td_status gpt_bad_meta(const char *prog, const char *path)
{
    fprintf(stderr, "%s: %s lacks train_gpt's metadata (vocab_size, context, layers, heads, width, vocab)\n", prog,
            path);
    return TD_E_INVALID;
}

/* *t replaced by r when st is TD_OK (else r is NULL and *t kept). */
static inline td_status gpt_replace(td_tensor **t, td_tensor *r, td_status st)
{
    if (st == TD_OK) {
        td_tensor_release(*t);
        *t = r;
    }
    return st;
}

/* *t as f32 (f16 / bf16 / f64 widened; f32 and, when keep_quantized, q8_0 / q4_0 kept). */
static inline td_status gpt_to_f32(td_tensor **t, int keep_quantized)
{
    td_dtype d;
    td_status st = td_tensor_dtype(*t, &d);
    if (st != TD_OK || d == TD_F32 || (keep_quantized && (d == TD_Q8_0 || d == TD_Q4_0)))
        return st;
    td_tensor *r = NULL;
    st = d == TD_Q8_0 || d == TD_Q4_0 ? td_float_dequantize(*t, TD_F32, &r) : td_float_cast(*t, TD_F32, &r);
    return gpt_replace(t, r, st);
}

/* A safetensors file train_gpt saved: linear weights [in, out] in f32 (nt = 0). */
static inline td_status gpt_load_safetensors(const char *path, td_device *dev, const char *prog, gpt *g)
{
    td_safetensors *sf = NULL;
    td_status st = td_safetensors_load(path, dev, &sf);
    if (st != TD_OK)
        return st;
    const char *vocab = NULL;
    if (gpt_meta_int(sf, "vocab_size", 1, 256, &g->vocab_size) || gpt_meta_int(sf, "context", 1, 1 << 20, &g->context) ||
        gpt_meta_int(sf, "layers", 1, GPT_MAX_LAYERS, &g->layers) || gpt_meta_int(sf, "heads", 1, 1 << 16, &g->heads) ||
        gpt_meta_int(sf, "width", 1, 1 << 20, &g->width) || td_safetensors_metadata(sf, "vocab", &vocab) != TD_OK ||
        !gpt_vocab_ok(g, vocab, vocab ? strlen(vocab) : 0)) {
        td_safetensors_free(sf);
        return gpt_bad_meta(prog, path);
    }
    memcpy(g->vocab, vocab, (size_t)g->vocab_size + 1);
    char name[64];
    for (int i = 0; i < g->layers * GPT_PER_BLOCK + GPT_TAIL && st == TD_OK; i++) {
        int l = 0;
        const int k = gpt_param_at(g->layers, i, &l);
        td_tensor **t = gpt_param(g, l, k);
        st = td_safetensors_get(sf, gpt_param_name(l, k, name, sizeof name), t);
        if (st == TD_OK && k == GPT_WQ && l == 0) {
            td_dtype d = TD_F32;
            td_tensor_dtype(*t, &d);
            g->file_dtype = td_dtype_name(d);
        }
        if (st == TD_OK)
            st = gpt_to_f32(t, 0);
    }
    td_safetensors_free(sf);
    return st;
}

/* A GGUF file gpt_write_gguf wrote: linear weights [out, in] (nt = 1), q8_0 / q4_0 kept. */
static inline td_status gpt_load_gguf(const char *path, td_device *dev, const char *prog, gpt *g)
{
    td_gguf *f = NULL;
    td_status st = td_gguf_open(path, &f);
    if (st != TD_OK)
        return st;
    const char *vocab = NULL;
    size_t vlen = 0;
    if (gpt_gguf_int(f, "tdispatch.vocab_size", 1, 256, &g->vocab_size) ||
        gpt_gguf_int(f, "tdispatch.context", 1, 1 << 20, &g->context) ||
        gpt_gguf_int(f, "tdispatch.layers", 1, GPT_MAX_LAYERS, &g->layers) ||
        gpt_gguf_int(f, "tdispatch.heads", 1, 1 << 16, &g->heads) ||
        gpt_gguf_int(f, "tdispatch.width", 1, 1 << 20, &g->width) ||
        td_gguf_get_string(f, "tdispatch.vocab", &vocab, &vlen) != TD_OK || !gpt_vocab_ok(g, vocab, vlen)) {
        td_gguf_free(f);
        return gpt_bad_meta(prog, path);
    }
    memcpy(g->vocab, vocab, vlen + 1);
    g->nt = 1;
    char name[64];
    for (int i = 0; i < g->layers * GPT_PER_BLOCK + GPT_TAIL && st == TD_OK; i++) {
        int l = 0;
        const int k = gpt_param_at(g->layers, i, &l);
        td_tensor **t = gpt_param(g, l, k);
        gpt_param_name(l, k, name, sizeof name);
        if (!gpt_is_linear(k)) {
            st = td_gguf_load_tensor(f, name, dev, t);
            continue;
        }
        td_dtype d = TD_F32;
        st = td_gguf_load_tensor_dtype(f, name, dev, t);
        if (st == TD_OK)
            st = td_tensor_dtype(*t, &d);
        if (st == TD_OK && g->file_dtype == NULL)
            g->file_dtype = td_dtype_name(d);
        if (st == TD_OK)
            st = gpt_to_f32(t, 1);
        if (st == TD_OK && td_tensor_dtype(*t, &d) == TD_OK && d != TD_F32)
            g->wdtype = d;
    }
    td_gguf_free(f);
    return st;
}

/* The model in path (GGUF when it ends in .gguf, else safetensors) on dev; says what is wrong
 * otherwise (on stderr, after prog). On failure *g holds nothing (gpt_free is still safe). */
static inline td_status gpt_load(const char *path, td_device *dev, const char *prog, gpt *g)
{
    memset(g, 0, sizeof *g);
    g->wdtype = TD_F32;
    const size_t n = strlen(path);
    td_status st = n >= 5 && strcmp(path + n - 5, ".gguf") == 0 ? gpt_load_gguf(path, dev, prog, g)
                                                                 : gpt_load_safetensors(path, dev, prog, g);
    if (st == TD_OK)
        st = gpt_check_shapes(g, prog);
    if (st != TD_OK)
        gpt_free(g);
    return st;
}

/* A model of the given shape with random weights drawn from seed (td_float_random): matrices
 * normal(0, 1 / sqrt(in)), the head normal(0, 4 / sqrt(width)) (logits a few units apart, so
 * greedy choices are not near ties), embeddings normal(0, 1), biases normal(0, 0.1), layer
 * norm weights uniform in [0.5, 1.5]. The vocabulary: the characters from ' ' on. nt = 0. */
static inline td_status gpt_random(td_device *dev, int vocab_size, int context, int layers, int heads, int width,
                                   uint64_t seed, gpt *g)
{
    memset(g, 0, sizeof *g);
    if (vocab_size < 1 || vocab_size > 95 || context < 1 || layers < 1 || layers > GPT_MAX_LAYERS || heads < 1 ||
        width < 1 || width % heads != 0)
        return TD_E_INVALID;
    *g = (gpt){ .vocab_size = vocab_size, .context = context, .layers = layers, .heads = heads, .width = width,
                .wdtype = TD_F32 };
    for (int i = 0; i < vocab_size; i++)
        g->vocab[i] = (char)(' ' + i);
    td_status st = TD_OK;
    uint64_t n = 0;
    for (int i = 0; i < layers * GPT_PER_BLOCK + GPT_TAIL && st == TD_OK; i++) {
        int l = 0;
        const int k = gpt_param_at(layers, i, &l);
        int64_t s[2] = { 0, 0 };
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

/* Writes the model as train_gpt --save does (names, metadata), for generate and PyTorch;
 * TD_E_INVALID for a model whose linear weights are [out, in] (nt = 1). */
static inline td_status gpt_save(const gpt *g, const char *path)
{
    if (g->nt)
        return TD_E_INVALID;
    const int n = g->layers * GPT_PER_BLOCK + GPT_TAIL;
    char meta[5][32];
    const char *kv[14];
    gpt_metadata(g->vocab_size, g->context, g->layers, g->heads, g->width, g->vocab, meta, kv);
    const char **names = malloc(sizeof *names * (size_t)n);
    td_tensor **ts = malloc(sizeof *ts * (size_t)n);
    char (*buf)[64] = malloc(sizeof *buf * (size_t)n);
    td_status st = TD_E_NOMEM;
    if (names != NULL && ts != NULL && buf != NULL) {
        for (int i = 0; i < n; i++) {
            int l = 0;
            const int k = gpt_param_at(g->layers, i, &l);
            names[i] = gpt_param_name(l, k, buf[i], sizeof buf[i]);
            ts[i] = *gpt_param((gpt *)g, l, k);
        }
        st = td_safetensors_save(path, names, ts, (size_t)n, kv, 7);
    }
    free(names);
    free(ts);
    free(buf);
    return st;
}

/* Linear weight w of g as [out, in] in dtype dt (f32, q8_0 or q4_0; td_float_quantize's
 * rounding, ggml's reference rules); *out a new reference. */
static inline td_status gpt_linear_as(const gpt *g, const td_tensor *w, td_dtype dt, td_tensor **out)
{
    td_dtype have = TD_F32;
    td_status st = td_tensor_dtype(w, &have);
    if (st != TD_OK)
        return st;
    if (g->nt && have == dt) {
        if ((st = td_tensor_retain((td_tensor *)w)) == TD_OK)
            *out = (td_tensor *)w;
        return st;
    }
    td_tensor *f = NULL; /* the f32 values, [out, in] */
    if (have == TD_Q8_0 || have == TD_Q4_0)
        st = td_float_dequantize(w, TD_F32, &f);
    else if (g->nt)
        st = td_float_cast(w, TD_F32, &f);
    else
        st = td_float_transpose(w, &f);
    if (st == TD_OK)
        st = dt == TD_Q8_0 || dt == TD_Q4_0 ? td_float_quantize(f, dt, out) : td_float_cast(f, dt, out);
    td_tensor_release(f);
    return st;
}

/* *dst: src with its linear weights [out, in] in dt (f32, q8_0 or q4_0; nt = 1), the other
 * tensors shared with src (each model holds its references: gpt_free both). */
static inline td_status gpt_quantized(const gpt *src, td_dtype dt, gpt *dst)
{
    *dst = *src;
    memset(dst->block, 0, sizeof dst->block);
    memset(dst->tail, 0, sizeof dst->tail);
    if (dt != TD_F32 && dt != TD_Q8_0 && dt != TD_Q4_0)
        return TD_E_INVALID;
    dst->nt = 1;
    dst->wdtype = dt;
    td_status st = TD_OK;
    for (int i = 0; i < src->layers * GPT_PER_BLOCK + GPT_TAIL && st == TD_OK; i++) {
        int l = 0;
        const int k = gpt_param_at(src->layers, i, &l);
        td_tensor *w = *gpt_param((gpt *)src, l, k);
        if (gpt_is_linear(k))
            st = gpt_linear_as(src, w, dt, gpt_param(dst, l, k));
        else if ((st = td_tensor_retain(w)) == TD_OK)
            *gpt_param(dst, l, k) = w;
    }
    if (st != TD_OK)
        gpt_free(dst);
    return st;
}

/* The model as GGUF: metadata keys "tdispatch.*", linear weights [out, in] (ggml's layout)
 * in dt (f32, f16, bf16, q8_0 or q4_0, converted by the writer), the rest f32. */
static inline td_status gpt_write_gguf(const gpt *g, const char *path, td_dtype dt)
{
    const uint32_t ggml = dt == TD_F16 ? TD_GGML_F16 : dt == TD_BF16 ? TD_GGML_BF16 : dt == TD_Q8_0 ? TD_GGML_Q8_0
                          : dt == TD_Q4_0 ? TD_GGML_Q4_0 : TD_GGML_F32;
    td_gguf_writer *w = NULL;
    td_status st = td_gguf_writer_new(&w);
    if (st != TD_OK)
        return st;
    const char *keys[5] = { "tdispatch.vocab_size", "tdispatch.context", "tdispatch.layers", "tdispatch.heads",
                            "tdispatch.width" };
    const int vals[5] = { g->vocab_size, g->context, g->layers, g->heads, g->width };
    for (int i = 0; i < 5 && st == TD_OK; i++)
        st = td_gguf_writer_add_u32(w, keys[i], (uint32_t)vals[i]);
    if (st == TD_OK)
        st = td_gguf_writer_add_string(w, "tdispatch.vocab", g->vocab, (size_t)g->vocab_size);
    if (st == TD_OK)
        st = td_gguf_writer_add_string(w, "tdispatch.weights_dtype", td_dtype_name(dt), strlen(td_dtype_name(dt)));
    char name[64];
    for (int i = 0; i < g->layers * GPT_PER_BLOCK + GPT_TAIL && st == TD_OK; i++) {
        int l = 0;
        const int k = gpt_param_at(g->layers, i, &l);
        const td_tensor *t = *gpt_param((gpt *)g, l, k);
        gpt_param_name(l, k, name, sizeof name);
        if (!gpt_is_linear(k)) {
            st = td_gguf_writer_add_td_tensor(w, name, t, TD_GGML_F32);
            continue;
        }
        td_dtype have = TD_F32;
        td_tensor *f = NULL; /* kept in its blocks when already dt, else f32 [out, in] */
        st = td_tensor_dtype(t, &have);
        if (st == TD_OK)
            st = gpt_linear_as(g, t, have == dt && g->nt ? dt : TD_F32, &f);
        if (st == TD_OK)
            st = td_gguf_writer_add_td_tensor(w, name, f, ggml);
        td_tensor_release(f);
    }
    if (st == TD_OK)
        st = td_gguf_writer_write(w, path);
    td_gguf_writer_free(w);
    return st;
}

/* The bytes of weights one generated token reads: every block matrix and bias, the layer
 * norms, the head (in their dtype: q8_0 34 and q4_0 18 bytes a block of 32), and one row
 * of each embedding (f32). */
static inline double gpt_step_weight_bytes(const gpt *g)
{
    const double d = g->width;
    const double per = g->wdtype == TD_Q8_0 ? 34.0 / 32.0 : g->wdtype == TD_Q4_0 ? 18.0 / 32.0 : 4.0;
    const double mats = 12.0 * d * d, small = 13.0 * d; /* q k v proj (4 d^2), fc, fc2 (8 d^2); biases 9 d; norms 4 d */
    return g->layers * (per * mats + 4.0 * small) + per * d * g->vocab_size + 4.0 * (2.0 * d + 2.0 * d);
}

typedef struct gpt_temps {
    td_tensor *t[128]; /* a layer makes at most 23; gpt_forward drops them past 40 */
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

/* y = x @ w + b (nt = 0: td_float_linear, td_float_matmul) or x @ w^T + b (nt = 1:
 * td_float_matmul_nt, quantized when w is); b may be NULL. */
static inline td_status gpt_linear(const gpt *g, const td_tensor *x, const td_tensor *w, const td_tensor *b,
                                   td_tensor **y)
{
    if (!g->nt)
        return b == NULL ? td_float_matmul(x, w, y) : td_float_linear(x, w, b, y);
    if (b == NULL)
        return td_float_matmul_nt(x, w, y);
    td_tensor *m = NULL;
    td_status st = td_float_matmul_nt(x, w, &m);
    if (st == TD_OK)
        st = td_float_add(m, b, y);
    td_tensor_release(m);
    return st;
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

/* Runs b rows of tokens[0..n) (row-major [b, n]) at positions p .. p + n - 1.
 * With caches (k_cache, v_cache: g->layers entries each, NULL when empty; b = 1): either a
 * prompt (p = 0, empty caches) or one token (n = 1, p cached positions); appends the
 * positions' keys and values, and logits receives the last position's vocab_size logits.
 * With k_cache NULL: no cache, p = 0, and logits receives every position's ([b, n, vocab]).
 * p + n must fit the context; TD_E_INVALID otherwise. */
static inline td_status gpt_forward(const gpt *g, td_device *dev, const int32_t *tokens, int b, int n, int p,
                                    td_tensor **k_cache, td_tensor **v_cache, float *logits)
{
    const int cached = k_cache != NULL;
    if (b < 1 || n < 1 || p < 0 || (int64_t)p + n > g->context || (cached && b != 1) || (!cached && p != 0) ||
        (cached && ((n > 1 && p != 0) || (p == 0) != (k_cache[0] == NULL))))
        return TD_E_INVALID;
    td_status st = TD_OK;
    gpt_temps ts = { .n = 0 };
    const int64_t d = g->width, h = g->heads;
    const int64_t s_idx[] = { b, n }, s_heads[] = { b, n, h, d / h }, s_rows[] = { b, n, d };
    const int64_t s_last[] = { 1, d }, s_all[] = { (int64_t)b * n, d };
    GPT_OP(idx, td_int_from_data(dev, tokens, s_idx, 2, &r_));
    GPT_OP(tok, td_float_embedding(g->tail[GPT_WTE], idx, &r_));
    GPT_OP(pos, td_float_narrow(g->tail[GPT_WPE], 0, p, n, &r_));
    GPT_OP(x0, td_float_add(tok, pos, &r_));
    td_tensor *x = x0;
    for (int l = 0; l < g->layers; l++) {
        td_tensor *const *w = g->block[l];
        GPT_OP(hn, td_float_layer_norm(x, w[GPT_LN1_W], w[GPT_LN1_B], 1e-5f, &r_));
        GPT_OP(q, gpt_linear(g, hn, w[GPT_WQ], w[GPT_BQ], &r_));
        GPT_OP(k, gpt_linear(g, hn, w[GPT_WK], w[GPT_BK], &r_));
        GPT_OP(v, gpt_linear(g, hn, w[GPT_WV], w[GPT_BV], &r_));
        GPT_OP(q4, td_float_reshape(q, s_heads, 4, &r_));
        GPT_OP(k4, td_float_reshape(k, s_heads, 4, &r_));
        GPT_OP(v4, td_float_reshape(v, s_heads, 4, &r_));
        GPT_OP(qh, td_float_swap_dims(q4, 1, 2, &r_));
        GPT_OP(kh, td_float_swap_dims(k4, 1, 2, &r_));
        GPT_OP(vh, td_float_swap_dims(v4, 1, 2, &r_));
        td_tensor *nk = kh, *nv = vh;
        if (cached) {
            nk = nv = NULL;
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
        }
        /* Positions of a prompt or window: causal attention over them. One token: its query
         * sees every cached position, softmax(q k^T / sqrt(E)) v with k^T by matmul_nt's
         * transpose flag: td_float_attention's decomposition would copy the whole transposed
         * key cache first. */
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
        GPT_OP(pr, gpt_linear(g, ar, w[GPT_PROJ_W], w[GPT_PROJ_B], &r_));
        GPT_OP(x1, td_float_add(x, pr, &r_));
        GPT_OP(h2, td_float_layer_norm(x1, w[GPT_LN2_W], w[GPT_LN2_B], 1e-5f, &r_));
        GPT_OP(f, gpt_linear(g, h2, w[GPT_FC_W], w[GPT_FC_B], &r_));
        GPT_OP(gl, td_float_gelu(f, &r_));
        GPT_OP(f2, gpt_linear(g, gl, w[GPT_FC2_W], w[GPT_FC2_B], &r_));
        GPT_OP(x2, td_float_add(x1, f2, &r_));
        x = x2;
        if (ts.n > 40) { /* keep only x alive between layers */
            if ((st = td_tensor_retain(x)) != TD_OK)
                goto out;
            gpt_drop(&ts);
            ts.t[ts.n++] = x;
        }
    }
    if (cached) {
        GPT_OP(last, td_float_narrow(x, 1, n - 1, 1, &r_));
        GPT_OP(lr, td_float_reshape(last, s_last, 2, &r_));
        GPT_OP(hf, td_float_layer_norm(lr, g->tail[GPT_LNF_W], g->tail[GPT_LNF_B], 1e-5f, &r_));
        GPT_OP(lg, gpt_linear(g, hf, g->tail[GPT_HEAD], NULL, &r_));
        st = td_float_into_data(lg, logits, g->vocab_size);
    } else {
        GPT_OP(xr, td_float_reshape(x, s_all, 2, &r_));
        GPT_OP(hf, td_float_layer_norm(xr, g->tail[GPT_LNF_W], g->tail[GPT_LNF_B], 1e-5f, &r_));
        GPT_OP(lg, gpt_linear(g, hf, g->tail[GPT_HEAD], NULL, &r_));
        st = td_float_into_data(lg, logits, (int64_t)b * n * g->vocab_size);
    }
out:
    gpt_drop(&ts);
    return st;
}

#undef GPT_OP

/* Runs tokens[0..n) at positions p .. p + n - 1, appending their keys and values to the
 * caches k_cache[l], v_cache[l] (NULL when empty); logits receives the last position's
 * vocab_size logits. Either a prompt (p = 0, empty caches) or one token (n = 1, p cached
 * positions); p + n must fit the context. */
static inline td_status gpt_step(const gpt *g, td_device *dev, const int32_t *tokens, int n, int p,
                                 td_tensor **k_cache, td_tensor **v_cache, float *logits)
{
    if (k_cache == NULL || v_cache == NULL)
        return TD_E_INVALID;
    return gpt_forward(g, dev, tokens, 1, n, p, k_cache, v_cache, logits);
}

#endif
