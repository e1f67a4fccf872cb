/* examples/generate: text from a GPT that examples/train_gpt saved (--save FILE, f32
 * safetensors), one character at a time with a KV cache.
 *
 *   generate --model FILE [--prompt TEXT] [--tokens N] [--temperature X] [--top-k K]
 *            [--seed S] [--check]
 *   generate --help
 *
 * The model's shape and vocabulary come from the file's metadata (train_gpt writes them).
 * The model and its step are examples/gpt_model.h (shared with bench/bench_generate and
 * tests/runtime/test_generate). The prompt is run through the model once (causal attention
 * over its positions); then each new character runs one position: its key and value rows
 * are appended to each layer's cache ([1, H, p, D / H], float_cat along the positions) and
 * its query attends to the p cached positions, so a token costs work proportional to p, not
 * p^2 (bench_generate measures it: docs/generate.md). When the
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
#include "gpt_model.h"

typedef struct options {
    const char *model, *prompt;
    long tokens, top_k;
    double temperature;
    uint64_t seed;
    int check;
} options;

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

int main(int argc, char **argv)
{
    options o = { .prompt = "In the beginning", .tokens = 200, .temperature = 0.8, .seed = 1 };
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
    gpt_clear_cache(kc, GPT_MAX_LAYERS);
    gpt_clear_cache(vc, GPT_MAX_LAYERS);
    gpt_clear_cache(kf, GPT_MAX_LAYERS);
    gpt_clear_cache(vf, GPT_MAX_LAYERS);
    gpt_free(&g);
    free(text);
    td_device_release(dev);
    return rc;
}
