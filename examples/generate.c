/* examples/generate: text from a GPT that examples/train_gpt saved (--save FILE, f32
 * safetensors), one character at a time with a KV cache.
 *
 *   generate --model FILE [--prompt TEXT] [--tokens N] [--temperature X] [--top-k K]
 *            [--seed S] [--check]
 *   generate --help
 *
 * The model's shape and vocabulary come from the file's metadata (train_gpt writes them).
 * The prompt is run through the model once (causal attention over its positions); then
 * each new character runs one position: its key and value rows are appended to each
 * layer's cache ([1, H, p, D / H], float_cat along the positions) and its query attends to
 * the p cached positions, so a token costs work proportional to p, not p^2. When the
 * context is full, the last half of the text is run again as a new prompt. Sampling: logits
 * / temperature, only the K largest kept (--top-k, 0: all), softmax, one draw from
 * splitmix64 seeded with S (the top 53 bits as a uniform in [0, 1)); --temperature 0 takes
 * the most likely character. Prints the prompt and the characters, then tokens/s of the
 * generation (the prompt excluded). --check also recomputes every step's logits from the
 * whole text without the cache and fails unless they agree (1e-4 absolute). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "td_ops.h"
#include "td_safetensors.h"

#define MAX_LAYERS 64
enum { LN1_W, LN1_B, WQ, BQ, WK, BK, WV, BV, PROJ_W, PROJ_B, LN2_W, LN2_B, FC_W, FC_B, FC2_W, FC2_B, PER_BLOCK };
static const char *const block_names[PER_BLOCK] = { "ln1.weight", "ln1.bias", "attn.q.weight", "attn.q.bias",
                                                    "attn.k.weight", "attn.k.bias", "attn.v.weight", "attn.v.bias",
                                                    "attn.proj.weight", "attn.proj.bias", "ln2.weight", "ln2.bias",
                                                    "mlp.fc.weight", "mlp.fc.bias", "mlp.fc2.weight", "mlp.fc2.bias" };
enum { WTE, WPE, LNF_W, LNF_B, HEAD, TAIL };
static const char *const tail_names[TAIL] = { "wte", "wpe", "ln_f.weight", "ln_f.bias", "head.weight" };

typedef struct options {
    const char *model, *prompt;
    long tokens, top_k;
    double temperature;
    uint64_t seed;
    int check;
} options;

typedef struct gpt {
    int vocab_size, context, layers, heads, width;
    char vocab[257];
    td_tensor *block[MAX_LAYERS][PER_BLOCK];
    td_tensor *tail[TAIL];
} gpt;

static void usage(FILE *f)
{
    fprintf(f, "usage: generate --model FILE [options]\n"
               "  --model FILE         weights train_gpt --save wrote (f32 safetensors)\n"
               "  --prompt TEXT        the text to continue                 [In the beginning]\n"
               "  --tokens N           characters to generate                             [200]\n"
               "  --temperature X      sampling temperature (0: the most likely)          [0.8]\n"
               "  --top-k K            sample among the K most likely (0: all)            [0]\n"
               "  --seed S             sampling seed                                      [1]\n"
               "  --check              also recompute each step without the cache; fail unless equal\n"
               "  --help               this text\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    enum { O_MODEL = 256, O_PROMPT, O_TOKENS, O_TEMP, O_TOPK, O_SEED, O_CHECK };
    static const struct option longopts[] = {
        { "model", required_argument, NULL, O_MODEL },   { "prompt", required_argument, NULL, O_PROMPT },
        { "tokens", required_argument, NULL, O_TOKENS }, { "temperature", required_argument, NULL, O_TEMP },
        { "top-k", required_argument, NULL, O_TOPK },    { "seed", required_argument, NULL, O_SEED },
        { "check", no_argument, NULL, O_CHECK },         { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        char *end = NULL;
        int bad = 0;
        switch (c) {
        case 'h': usage(stdout); return 1;
        case O_MODEL: o->model = optarg; break;
        case O_PROMPT: o->prompt = optarg; break;
        case O_TOKENS:
            o->tokens = strtol(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || o->tokens < 1 || o->tokens > 100000000;
            break;
        case O_TOPK:
            o->top_k = strtol(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || o->top_k < 0 || o->top_k > 256;
            break;
        case O_TEMP:
            o->temperature = strtod(optarg, &end);
            bad = end == optarg || *end != '\0' || !(o->temperature >= 0.0 && o->temperature <= 100.0);
            break;
        case O_SEED:
            o->seed = (uint64_t)strtoull(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || optarg[0] == '-';
            break;
        case O_CHECK: o->check = 1; break;
        case ':':
            fprintf(stderr, "generate: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "generate: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "generate: bad value for '%s': '%s' (see --help)\n", argv[optind - 1], optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "generate: unexpected argument '%s' (options start with --; see --help)\n", argv[optind]);
        return -1;
    }
    if (o->model == NULL) {
        fprintf(stderr, "generate: --model FILE is needed (see --help)\n");
        return -1;
    }
    return 0;
}

static int meta_int(const td_safetensors *sf, const char *key, int lo, int hi, int *out)
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

/* The weights and shape of a file train_gpt saved; says what is wrong otherwise. */
static td_status load_gpt(const char *path, td_device *dev, gpt *g)
{
    td_safetensors *sf = NULL;
    td_status st = td_safetensors_load(path, dev, &sf);
    if (st != TD_OK)
        return st;
    const char *vocab = NULL;
    if (meta_int(sf, "vocab_size", 1, 256, &g->vocab_size) || meta_int(sf, "context", 1, 1 << 20, &g->context) ||
        meta_int(sf, "layers", 1, MAX_LAYERS, &g->layers) || meta_int(sf, "heads", 1, 1 << 16, &g->heads) ||
        meta_int(sf, "width", 1, 1 << 20, &g->width) || td_safetensors_metadata(sf, "vocab", &vocab) != TD_OK ||
        vocab == NULL || strlen(vocab) != (size_t)g->vocab_size || g->width % g->heads != 0) {
        fprintf(stderr, "generate: %s lacks train_gpt's metadata (vocab_size, context, layers, heads, width, vocab)\n",
                path);
        td_safetensors_free(sf);
        return TD_E_INVALID;
    }
    memcpy(g->vocab, vocab, (size_t)g->vocab_size + 1);
    char name[64];
    for (int l = 0; l < g->layers && st == TD_OK; l++)
        for (int k = 0; k < PER_BLOCK && st == TD_OK; k++) {
            snprintf(name, sizeof name, "blocks.%d.%s", l, block_names[k]);
            st = td_safetensors_get(sf, name, &g->block[l][k]);
        }
    for (int t = 0; t < TAIL && st == TD_OK; t++)
        st = td_safetensors_get(sf, tail_names[t], &g->tail[t]);
    td_safetensors_free(sf);
    return st;
}

static void free_gpt(gpt *g)
{
    for (int l = 0; l < MAX_LAYERS; l++)
        for (int k = 0; k < PER_BLOCK; k++)
            td_tensor_release(g->block[l][k]);
    for (int t = 0; t < TAIL; t++)
        td_tensor_release(g->tail[t]);
}

typedef struct temps {
    td_tensor *t[64];
    int n;
} temps;

static void drop(temps *ts)
{
    for (int i = 0; i < ts->n; i++)
        td_tensor_release(ts->t[i]);
    ts->n = 0;
}

/* OP(var, td_float_xxx(args..., &r_)): var = the result, kept in ts. */
#define OP(var, call)                    \
    td_tensor *var = NULL;               \
    do {                                 \
        td_tensor *r_ = NULL;            \
        if ((st = (call)) != TD_OK)      \
            goto out;                    \
        ts.t[ts.n++] = var = r_;         \
    } while (0)

/* Runs tokens[0..n) at positions p .. p + n - 1 (p = 0 when n > 1: a prompt), appending to the
 * caches k_cache[l], v_cache[l] (NULL when empty); logits receives the last position's. */
static td_status run(const gpt *g, td_device *dev, const int32_t *tokens, int n, int p, td_tensor **k_cache,
                     td_tensor **v_cache, float *logits)
{
    td_status st = TD_OK;
    temps ts = { .n = 0 };
    const int64_t d = g->width, h = g->heads;
    const int64_t s_idx[] = { 1, n }, s_heads[] = { 1, n, h, d / h }, s_rows[] = { 1, n, d }, s_last[] = { 1, d };
    OP(idx, td_int_from_data(dev, tokens, s_idx, 2, &r_));
    OP(tok, td_float_embedding(g->tail[WTE], idx, &r_));
    OP(pos, td_float_narrow(g->tail[WPE], 0, p, n, &r_));
    OP(x0, td_float_add(tok, pos, &r_));
    td_tensor *x = x0;
    for (int l = 0; l < g->layers; l++) {
        td_tensor *const *w = g->block[l];
        OP(hn, td_float_layer_norm(x, w[LN1_W], w[LN1_B], 1e-5f, &r_));
        OP(q, td_float_linear(hn, w[WQ], w[BQ], &r_));
        OP(k, td_float_linear(hn, w[WK], w[BK], &r_));
        OP(v, td_float_linear(hn, w[WV], w[BV], &r_));
        OP(q4, td_float_reshape(q, s_heads, 4, &r_));
        OP(k4, td_float_reshape(k, s_heads, 4, &r_));
        OP(v4, td_float_reshape(v, s_heads, 4, &r_));
        OP(qh, td_float_swap_dims(q4, 1, 2, &r_));
        OP(kh, td_float_swap_dims(k4, 1, 2, &r_));
        OP(vh, td_float_swap_dims(v4, 1, 2, &r_));
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
        OP(a, td_float_attention(qh, nk, nv, n > 1, &r_));
        OP(at, td_float_swap_dims(a, 1, 2, &r_));
        OP(ar, td_float_reshape(at, s_rows, 3, &r_));
        OP(pr, td_float_linear(ar, w[PROJ_W], w[PROJ_B], &r_));
        OP(x1, td_float_add(x, pr, &r_));
        OP(h2, td_float_layer_norm(x1, w[LN2_W], w[LN2_B], 1e-5f, &r_));
        OP(f, td_float_linear(h2, w[FC_W], w[FC_B], &r_));
        OP(gl, td_float_gelu(f, &r_));
        OP(f2, td_float_linear(gl, w[FC2_W], w[FC2_B], &r_));
        OP(x2, td_float_add(x1, f2, &r_));
        x = x2;
        if (ts.n > 40) { /* keep only x alive between layers */
            if ((st = td_tensor_retain(x)) != TD_OK)
                goto out;
            drop(&ts);
            ts.t[ts.n++] = x;
        }
    }
    OP(last, td_float_narrow(x, 1, n - 1, 1, &r_));
    OP(lr, td_float_reshape(last, s_last, 2, &r_));
    OP(hf, td_float_layer_norm(lr, g->tail[LNF_W], g->tail[LNF_B], 1e-5f, &r_));
    OP(lg, td_float_matmul(hf, g->tail[HEAD], &r_));
    st = td_float_into_data(lg, logits, g->vocab_size);
out:
    drop(&ts);
    return st;
}

#undef OP

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int sample(const float *logits, int v, const options *o, uint64_t *rng)
{
    int best = 0;
    for (int i = 1; i < v; i++)
        if (logits[i] > logits[best])
            best = i;
    if (o->temperature == 0.0)
        return best;
    double cut = -INFINITY; /* the K-th largest logit */
    if (o->top_k > 0 && o->top_k < v) {
        float sorted[256];
        memcpy(sorted, logits, sizeof(float) * (size_t)v);
        for (int i = 0; i < o->top_k; i++) /* partial selection sort, descending */
            for (int j = i + 1; j < v; j++)
                if (sorted[j] > sorted[i]) {
                    float t = sorted[i];
                    sorted[i] = sorted[j];
                    sorted[j] = t;
                }
        cut = sorted[o->top_k - 1];
    }
    double p[256], total = 0.0;
    for (int i = 0; i < v; i++) {
        p[i] = logits[i] >= cut ? exp(((double)logits[i] - logits[best]) / o->temperature) : 0.0;
        total += p[i];
    }
    double u = (double)(splitmix64(rng) >> 11) * 0x1.0p-53 * total;
    for (int i = 0; i < v; i++) {
        if (u < p[i])
            return i;
        u -= p[i];
    }
    return best;
}

static void clear(td_tensor **c, int n)
{
    for (int i = 0; i < n; i++) {
        td_tensor_release(c[i]);
        c[i] = NULL;
    }
}

int main(int argc, char **argv)
{
    options o = { .prompt = "In the beginning", .tokens = 200, .temperature = 0.8, .seed = 1 };
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    int rc = 1;
    td_device *dev = NULL;
    gpt g = { 0 };
    td_tensor *kc[MAX_LAYERS] = { NULL }, *vc[MAX_LAYERS] = { NULL }, *kf[MAX_LAYERS] = { NULL },
              *vf[MAX_LAYERS] = { NULL };
    int32_t *text = NULL;
    td_status st = td_device_open(TD_BACKEND_CPU, 0, &dev);
    if (st == TD_OK)
        st = load_gpt(o.model, dev, &g);
    if (st != TD_OK)
        goto fail;
    const size_t plen = strlen(o.prompt);
    text = malloc(sizeof(int32_t) * (plen + (size_t)o.tokens + 1));
    if (text == NULL)
        goto fail;
    int n = 0;
    for (size_t i = 0; i < plen; i++) {
        const char *at = memchr(g.vocab, o.prompt[i], (size_t)g.vocab_size);
        if (at == NULL || o.prompt[i] == '\0') {
            fprintf(stderr, "generate: the prompt's character '%c' is not in the model's vocabulary\n", o.prompt[i]);
            rc = 2;
            goto done;
        }
        text[n++] = (int32_t)(at - g.vocab);
    }
    if (n == 0) { /* an empty prompt starts from a newline when there is one, else the first character */
        const char *nl = memchr(g.vocab, '\n', (size_t)g.vocab_size);
        text[n++] = nl ? (int32_t)(nl - g.vocab) : 0;
    }
    if (n > g.context) {
        fprintf(stderr, "generate: the prompt is longer than the model's context (%d)\n", g.context);
        rc = 2;
        goto done;
    }
    float logits[256], full[256];
    uint64_t rng = o.seed;
    double worst = 0.0;
    int cached = 0; /* positions in the caches */
    fwrite(o.prompt, 1, plen, stdout);
    fflush(stdout);
    double t_gen = ex_now_s();
    for (long i = 0; i < o.tokens; i++) {
        if (cached == 0 || cached == g.context) { /* the prompt, or the last half again */
            int start = cached == 0 ? 0 : n - g.context / 2;
            clear(kc, g.layers);
            clear(vc, g.layers);
            if ((st = run(&g, dev, text + start, n - start, 0, kc, vc, logits)) != TD_OK)
                goto fail;
            cached = n - start;
            if (i == 0)
                t_gen = ex_now_s();
        } else {
            if ((st = run(&g, dev, text + n - 1, 1, cached, kc, vc, logits)) != TD_OK)
                goto fail;
            cached++;
        }
        if (o.check) {
            const int start = n - cached; /* the window the cache holds */
            clear(kf, g.layers);
            clear(vf, g.layers);
            if ((st = run(&g, dev, text + start, n - start, 0, kf, vf, full)) != TD_OK)
                goto fail;
            for (int j = 0; j < g.vocab_size; j++)
                if (fabs((double)logits[j] - full[j]) > worst)
                    worst = fabs((double)logits[j] - full[j]);
        }
        const int next = sample(logits, g.vocab_size, &o, &rng);
        text[n++] = next;
        putchar(g.vocab[next]);
    }
    const double elapsed = ex_now_s() - t_gen; /* the tokens after the first (which the prompt's run gives) */
    printf("\n");
    fprintf(stderr, "generate: %ld characters in %.3f s after the prompt's %zu: %.1f tokens/s (%d layers, width %d, "
            "context %d)%s\n",
            o.tokens, elapsed, plen, o.tokens > 1 ? (double)(o.tokens - 1) / elapsed : 0.0, g.layers, g.width,
            g.context,
            o.check ? "; with --check's recomputation" : "");
    rc = 0;
    if (o.check) {
        fprintf(stderr, "generate: KV cache against the full recomputation: largest logit difference %.3g (allowed "
                "1e-4)\n", worst);
        if (!(worst <= 1e-4))
            rc = 1;
    }
    goto done;
fail:
    fprintf(stderr, "generate: %s (%s)\n", td_status_name(st), td_last_error());
done:
    clear(kc, MAX_LAYERS);
    clear(vc, MAX_LAYERS);
    clear(kf, MAX_LAYERS);
    clear(vf, MAX_LAYERS);
    free_gpt(&g);
    free(text);
    td_device_release(dev);
    return rc;
}
