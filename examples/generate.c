/* examples/generate: text from a GPT that examples/train_gpt saved (--save FILE, f32
 * safetensors) or that this program converted (GGUF in f32, f16, bf16, q8_0 or q4_0), one
 * character at a time with a KV cache; and the validation loss of such a model.
 *
 *   generate --model FILE [--prompt TEXT] [--tokens N] [--temperature X] [--top-k K]
 *            [--seed S] [--check]
 *   generate --model FILE --quantize DTYPE --out FILE.gguf
 *   generate --model FILE --eval [--eval-windows N] [--chars N] [--text FILE]
 *   generate --help
 *
 * The model's shape and vocabulary come from the file's metadata (train_gpt writes them;
 * --quantize copies them into GGUF keys "tdispatch.*"). A FILE ending in .gguf is read as
 * GGUF, any other as safetensors. The model, its loading and writing and its forward pass
 * are examples/gpt_model.h (shared with train_gpt, bench/bench_generate and
 * tests/runtime/test_generate); this file is the command line over it. The linear layers
 * (q, k, v, proj, fc, fc2 and the head) of a safetensors model run as x @ W + b on its f32
 * [in, out] weights (td_float_linear); a GGUF file stores them [out, in] (ggml's layout) in
 * its dtype and they run as x @ W^T + b (td_float_matmul_nt): q8_0 / q4_0 weights stay
 * quantized in memory and run the library's quantized matmul (activations rounded to q8_0
 * per row, integer dot products: docs/dtypes.md section 8); f16 / bf16 weights are widened
 * to f32 at load. Embeddings, norms and biases are f32 in every file.
 *
 * --quantize DTYPE (f32, f16, bf16, q8_0 or q4_0) --out FILE writes the model as GGUF with
 * the linear weights in DTYPE (quantized by ggml's reference rules: td_float_quantize) and
 * exits. --eval prints the model's validation loss in bits per character over train_gpt's
 * held-out tail: the same text (--text FILE, else the KJV), the same --chars N prefix (give
 * the one the model was trained with), the last 10% held out, W windows (--eval-windows,
 * 1024) of the context's length at starts k ((nval - T - 1) / W), the mean cross entropy
 * over all their positions: train_gpt's figure for an f32 model (up to rounding).
 *
 * The prompt is run through the model once (causal attention over its positions); then
 * each new character runs one position: its key and value rows are appended to each
 * layer's cache ([1, H, p, D / H], float_cat along the positions) and its query attends to
 * the p cached positions, so a token costs work proportional to p, not p^2. When the
 * context is full, the last half of the text is run again as a new prompt. Sampling: logits
 * / temperature, only the K largest kept (--top-k, 0: all), softmax, one draw from
 * splitmix64 seeded with S (the top 53 bits as a uniform in [0, 1)); --temperature 0 takes
 * the most likely character. Prints the prompt and the characters, then tokens/s of the
 * generation (the prompt excluded). --check also recomputes every step's logits from the
 * whole text without the cache and fails unless they agree: 1e-4 absolute, 1e-2 with q8_0 /
 * q4_0 weights. Those quantize each activation row to 8 bits per block of 32 (as ggml does),
 * and the two paths' attention sums in another order: a last-bit difference that moves one
 * activation across a rounding boundary changes it by a whole step (its block's largest
 * magnitude / 127), and a logit by that step times a weight (0.003 seen; a cache that reads
 * a wrong position is off by far more). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gpt_model.h"
#include "gpt_text.h"

typedef struct options {
    const char *model, *prompt, *quantize, *out, *text, *baseline;
    long tokens, top_k, eval_windows, chars;
    double temperature, max_increase;
    uint64_t seed;
    int check, eval;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: generate --model FILE [options]\n"
               "  --model FILE         train_gpt --save's weights (safetensors), or a GGUF --quantize wrote\n"
               "  --prompt TEXT        the text to continue                 [In the beginning]\n"
               "  --tokens N           characters to generate                             [200]\n"
               "  --temperature X      sampling temperature (0: the most likely)          [0.8]\n"
               "  --top-k K            sample among the K most likely (0: all)            [0]\n"
               "  --seed S             sampling seed                                      [1]\n"
               "  --check              also recompute each step without the cache; fail unless equal\n"
               "  --quantize DTYPE     write the model as GGUF with its linear weights in DTYPE\n"
               "                       (f32, f16, bf16, q8_0, q4_0; needs --out) and exit\n"
               "  --out FILE           the GGUF file --quantize writes\n"
               "  --eval               print the validation loss (bits/char) on train_gpt's held-out tail\n"
               "  --eval-windows N     validation windows, as train_gpt's                 [1024]\n"
               "  --chars N            the text's first N characters, as given to train_gpt [all]\n"
               "  --text FILE          the text train_gpt trained on, if not the KJV\n"
               "  --baseline FILE      --eval also evaluates FILE (say, the f32 model) and prints the change\n"
               "  --max-increase PCT   with --baseline: fail unless the loss is at most PCT%% above FILE's\n"
               "  --help               this text\n"
               "q8_0 / q4_0 weights run the CPU's quantized matmul (docs/dtypes.md section 8).\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    enum { O_MODEL = 256, O_PROMPT, O_TOKENS, O_TEMP, O_TOPK, O_SEED, O_CHECK, O_QUANT, O_OUT, O_EVAL, O_WINDOWS,
           O_CHARS, O_TEXT, O_BASE, O_MAXINC };
    static const struct option longopts[] = {
        { "model", required_argument, NULL, O_MODEL },   { "prompt", required_argument, NULL, O_PROMPT },
        { "tokens", required_argument, NULL, O_TOKENS }, { "temperature", required_argument, NULL, O_TEMP },
        { "top-k", required_argument, NULL, O_TOPK },    { "seed", required_argument, NULL, O_SEED },
        { "check", no_argument, NULL, O_CHECK },         { "quantize", required_argument, NULL, O_QUANT },
        { "out", required_argument, NULL, O_OUT },       { "eval", no_argument, NULL, O_EVAL },
        { "eval-windows", required_argument, NULL, O_WINDOWS }, { "chars", required_argument, NULL, O_CHARS },
        { "text", required_argument, NULL, O_TEXT },     { "help", no_argument, NULL, 'h' },
        { "baseline", required_argument, NULL, O_BASE }, { "max-increase", required_argument, NULL, O_MAXINC },
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
        case O_QUANT: {
            td_dtype d;
            o->quantize = optarg;
            bad = td_dtype_from_name(optarg, &d) != TD_OK ||
                  (d != TD_F32 && d != TD_F16 && d != TD_BF16 && d != TD_Q8_0 && d != TD_Q4_0);
            break;
        }
        case O_OUT: o->out = optarg; break;
        case O_EVAL: o->eval = 1; break;
        case O_WINDOWS: bad = ex_parse_long(optarg, 1, 1 << 20, &o->eval_windows); break;
        case O_CHARS: bad = ex_parse_long(optarg, 1, 1L << 40, &o->chars); break;
        case O_TEXT: o->text = optarg; break;
        case O_BASE: o->baseline = optarg; break;
        case O_MAXINC: bad = ex_parse_double(optarg, 0.0, 1000.0, &o->max_increase); break;
        case ':':
            fprintf(stderr, "generate: option '%s' needs a value (see --help)\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "generate: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
        if (bad) {
            ex_bad_value("generate", argv, optind, optarg);
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
    if ((o->quantize == NULL) != (o->out == NULL)) {
        fprintf(stderr, "generate: --quantize DTYPE and --out FILE go together (see --help)\n");
        return -1;
    }
    if ((o->baseline != NULL || o->max_increase > 0.0) && !o->eval) {
        fprintf(stderr, "generate: --baseline and --max-increase go with --eval (see --help)\n");
        return -1;
    }
    if (o->max_increase > 0.0 && o->baseline == NULL) {
        fprintf(stderr, "generate: --max-increase needs --baseline FILE (see --help)\n");
        return -1;
    }
    if (o->quantize != NULL && o->eval) {
        fprintf(stderr, "generate: --quantize writes a file and exits; evaluate the file it writes (see --help)\n");
        return -1;
    }
    return 0;
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
    double u = (double)(ex_splitmix64(rng) >> 11) * 0x1.0p-53 * total;
    for (int i = 0; i < v; i++) {
        if (u < p[i])
            return i;
        u -= p[i];
    }
    return best;
}

/* The mean cross entropy (nats) of the model over train_gpt's validation windows; 77: no text. */
static int evaluate(const options *o, const gpt *g, td_device *dev, double *nats, long *windows_out, long *nval_out)
{
    long n = 0;
    char *text = ex_read_text("generate", o->text, &n);
    if (text == NULL)
        return 77;
    if (o->chars > 0 && o->chars < n)
        n = o->chars;
    int present[256] = { 0 }, id_of[256], distinct = 0;
    for (long i = 0; i < n; i++)
        present[(unsigned char)text[i]] = 1;
    for (int c = 0; c < 256; c++)
        distinct += present[c];
    for (int i = 0; i < g->vocab_size; i++)
        id_of[(unsigned char)g->vocab[i]] = i;
    /* train_gpt's vocabulary is the sorted bytes of this text: the same set, or another text */
    int same = distinct == g->vocab_size;
    for (int i = 0; same && i < g->vocab_size; i++)
        same = present[(unsigned char)g->vocab[i]] && (i == 0 || (unsigned char)g->vocab[i - 1] < (unsigned char)g->vocab[i]);
    const long nval = n / 10, ntrain = n - nval, t = g->context;
    const long windows = o->eval_windows;
    if (!same || nval < t + 2 || windows > nval - t - 1) {
        fprintf(stderr, "generate: %s; give the --text and --chars the model was trained with\n",
                !same ? "the text's characters are not the model's vocabulary"
                      : "the held-out tail is too short for the context and --eval-windows");
        free(text);
        return 2;
    }
    enum { EB = 8 };
    int32_t *x = malloc(sizeof(int32_t) * EB * (size_t)t);
    int32_t *y = malloc(sizeof(int32_t) * EB * (size_t)t);
    float *lg = malloc(sizeof(float) * EB * (size_t)t * (size_t)g->vocab_size);
    td_status st = x && y && lg ? TD_OK : TD_E_NOMEM;
    const long stride = (nval - t - 1) / windows;
    double sum = 0.0;
    for (long first = 0; first < windows && st == TD_OK; first += EB) {
        const int b = (int)(windows - first < EB ? windows - first : EB);
        for (int i = 0; i < b; i++)
            for (long j = 0; j < t; j++) {
                const long at = ntrain + (first + i) * stride + j;
                x[i * t + j] = id_of[(unsigned char)text[at]];
                y[i * t + j] = id_of[(unsigned char)text[at + 1]];
            }
        st = gpt_forward(g, dev, x, b, (int)t, 0, NULL, NULL, lg);
        for (long r = 0; r < (long)b * t && st == TD_OK; r++) { /* -log softmax(logits)[target] */
            const float *l = lg + r * g->vocab_size;
            double mx = l[0], z = 0.0;
            for (int c = 1; c < g->vocab_size; c++)
                mx = l[c] > mx ? l[c] : mx;
            for (int c = 0; c < g->vocab_size; c++)
                z += exp((double)l[c] - mx);
            sum += mx + log(z) - (double)l[y[r]];
        }
    }
    free(x);
    free(y);
    free(lg);
    free(text);
    if (st != TD_OK) {
        fprintf(stderr, "generate: %s (%s)\n", td_status_name(st), td_last_error());
        return 1;
    }
    *nats = sum / ((double)windows * (double)t);
    *windows_out = windows;
    *nval_out = nval;
    return 0;
}

int main(int argc, char **argv)
{
    options o = { .prompt = "In the beginning", .tokens = 200, .temperature = 0.8, .seed = 1, .eval_windows = 1024 };
    int parsed = parse_args(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    int rc = 1;
    td_device *dev = NULL;
    gpt g = { 0 };
    td_tensor *kc[GPT_MAX_LAYERS] = { NULL }, *vc[GPT_MAX_LAYERS] = { NULL }, *kf[GPT_MAX_LAYERS] = { NULL },
              *vf[GPT_MAX_LAYERS] = { NULL };
    int32_t *text = NULL;
    td_status st = td_device_open(TD_BACKEND_CPU, 0, &dev);
    if (st == TD_OK)
        st = gpt_load(o.model, dev, "generate", &g);
    if (st != TD_OK)
        goto fail;
    if (o.quantize != NULL) {
        td_dtype dt = TD_F32;
        td_dtype_from_name(o.quantize, &dt);
        if ((st = gpt_write_gguf(&g, o.out, dt)) != TD_OK)
            goto fail;
        FILE *f = fopen(o.out, "rb");
        long size = f != NULL && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
        if (f != NULL)
            fclose(f);
        printf("generate: wrote %s: %d layers, width %d, linear weights in %s (were %s), %ld bytes\n", o.out,
               g.layers, g.width, o.quantize, g.file_dtype ? g.file_dtype : "?", size);
        rc = 0;
        goto done;
    }
    if (o.eval) {
        double nats = 0.0;
        long windows = 0, nval = 0;
        const double t0 = ex_now_s();
        rc = evaluate(&o, &g, dev, &nats, &windows, &nval);
        if (rc == 0)
            printf("generate: %s (linear weights %s): validation %.4f bpc over %ld windows of %d of the held-out "
                   "%ld characters (%.1f s)\n",
                   o.model, g.file_dtype ? g.file_dtype : "?", nats / log(2.0), windows, g.context, nval,
                   ex_now_s() - t0);
        if (rc == 0 && o.baseline != NULL) {
            gpt base = { 0 };
            double bnats = 0.0;
            if ((st = gpt_load(o.baseline, dev, "generate", &base)) != TD_OK) {
                gpt_free(&base);
                goto fail;
            }
            rc = evaluate(&o, &base, dev, &bnats, &windows, &nval);
            if (rc == 0) {
                const double pct = 100.0 * (nats - bnats) / bnats;
                printf("generate: baseline %s (linear weights %s): validation %.4f bpc; %s is %+.3f%% from it%s\n",
                       o.baseline, base.file_dtype ? base.file_dtype : "?", bnats / log(2.0), o.model, pct,
                       o.max_increase > 0.0 ? (pct <= o.max_increase ? " (within the allowed increase)"
                                                                      : " (more than the allowed increase)")
                                            : "");
                if (o.max_increase > 0.0 && !(pct <= o.max_increase))
                    rc = 1;
            }
            gpt_free(&base);
        }
        goto done;
    }
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
            gpt_clear_cache(kc, g.layers);
            gpt_clear_cache(vc, g.layers);
            if ((st = gpt_step(&g, dev, text + start, n - start, 0, kc, vc, logits)) != TD_OK)
                goto fail;
            cached = n - start;
            if (i == 0)
                t_gen = ex_now_s();
        } else {
            if ((st = gpt_step(&g, dev, text + n - 1, 1, cached, kc, vc, logits)) != TD_OK)
                goto fail;
            cached++;
        }
        if (o.check) {
            const int start = n - cached; /* the window the cache holds */
            gpt_clear_cache(kf, g.layers);
            gpt_clear_cache(vf, g.layers);
            if ((st = gpt_step(&g, dev, text + start, n - start, 0, kf, vf, full)) != TD_OK)
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
            "context %d, linear weights %s)%s\n",
            o.tokens, elapsed, plen, o.tokens > 1 ? (double)(o.tokens - 1) / elapsed : 0.0, g.layers, g.width,
            g.context, td_dtype_name(g.wdtype),
            o.check ? "; with --check's recomputation" : "");
    rc = 0;
    if (o.check) {
        const bool quantized = g.wdtype == TD_Q8_0 || g.wdtype == TD_Q4_0;
        const double allowed = quantized ? 1e-2 : 1e-4;
        fprintf(stderr, "generate: KV cache against the full recomputation: largest logit difference %.3g (allowed "
                "%g%s)\n", worst, allowed, quantized ? ": activations quantized to 8 bits" : "");
        if (!(worst <= allowed))
            rc = 1;
    }
    goto done;
fail:
    fprintf(stderr, "generate: %s (%s)\n", td_status_name(st), td_last_error());
done:
    gpt_clear_cache(kc, GPT_MAX_LAYERS);
    gpt_clear_cache(vc, GPT_MAX_LAYERS);
    gpt_clear_cache(kf, GPT_MAX_LAYERS);
    gpt_clear_cache(vf, GPT_MAX_LAYERS);
    gpt_free(&g);
    free(text);
    td_device_release(dev);
    return rc;
}
