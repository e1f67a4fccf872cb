/* bench_generate: decoding a GPT one token at a time with a KV cache (examples/gpt_model.h, the
 * step examples/generate runs), against PyTorch's same loop (bench/generate_torch.py) in the
 * same run, and what the cache buys.
 *
 * The model: a file train_gpt --save wrote (--model FILE), else random weights of the shape
 * asked (default 4 layers, 4 heads, width 128, context 1024, 64 tokens; tokens/s do not depend
 * on training), saved to a temporary safetensors file that the PyTorch script reads by name.
 * Each round: ours generates greedily from an 8-token prompt until the text holds --positions
 * tokens, timing every step; then PyTorch (/usr/bin/python3, torch.set_num_threads as ours)
 * does the same from the same file in a fresh process (after 32 untimed steps); then ours
 * again with td_float_attention for the token's attention ("via op": the step before issue
 * 25, which copied the transposed key cache). Per position bucket p (64, 128, ... up to
 * --positions): the median step time over the 16 steps ending at p, medians over rounds;
 * tokens/s of the whole generation up to p; ours / PyTorch; via op / ours.
 *
 * Linearity: t(2p) / t(p) of the whole step (dominated by the O(D^2) linear layers at small p),
 * a least-squares fit t = a + b p over every position (a: the part that does not grow, b: the
 * attention and cache append per position), and the attention part measured alone (one
 * layer's float_cat of k and v plus float_attention at p cached positions), whose ratio is 2
 * when it is linear. Against it, the no-cache loop's step: the whole prefix run again (a
 * forward of p positions, causal) each token.
 *
 * Agreement: the first --greedy tokens (64) of both greedy decodes, and the largest logit
 * difference over the steps where they agree; --check exits 1 unless all agree and the
 * logits are within 1e-3 (77 when PyTorch is absent).
 *
 * Bandwidth: a decode step reads every weight once, so at small contexts it is bound by how
 * fast the weights stream: the f32 row prints weight bytes/s against a memcpy (read + written,
 * 64 MiB, on the same threads) measured in the same rounds, and says when the weights fit in
 * the L3 (then the rate is the cache's, not memory's). --dtype q8_0,q4_0 add rows where the
 * model's linear weights are the library's q8_0 / q4_0 tensors (gpt_quantized:
 * td_float_quantize of the [out, in] weights, run by td_float_matmul_nt, as examples/generate
 * runs a GGUF file --quantize wrote), timed at the first bucket; their weight bytes count
 * the blocks (34 / 18 bytes per 32 weights). */
#define _GNU_SOURCE
#define BENCH_PROG "bench_generate"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../examples/gpt_model.h"
#include "bench_common.h"
#include "bench_load.h"
#include "cpu_internal.h" /* td_cpu_threads: the memcpy reference runs on the kernels' threads */

#define MAX_BUCKETS 16
#define WINDOW 16
#define PROMPT 8

typedef struct opts {
    const char *model;
    int layers, heads, width, context, vocab, positions, rounds, threads, greedy;
    bool torch, check, q8, q4;
} opts;

static void usage(void)
{
    printf("usage: bench_generate [options]\n"
           "  Greedy decoding with a KV cache, ours against PyTorch's, per position; linearity in the\n"
           "  context, the no-cache loop, weight bytes/s against memcpy (see the top of bench/generate.c).\n"
           "  --model FILE     a GPT train_gpt --save wrote (default: random weights of the shape below)\n"
           "  --layers N       random model: blocks                          [4]\n"
           "  --heads N        random model: attention heads                 [4]\n"
           "  --width N        random model: width                           [128]\n"
           "  --context N      random model: context                         [1024]\n"
           "  --vocab N        random model: tokens (1-95)                   [64]\n"
           "  --positions N    generate until the text holds N tokens (>= 64, <= the context) [1024]\n"
           "  --rounds N       timing rounds, 1 to %d                        [3]\n"
           "  --threads N      threads, ours and PyTorch's                   [2]\n"
           "  --greedy N       greedy tokens compared with PyTorch's          [64]\n"
           "  --dtype LIST     rows besides f32: q8_0, q4_0, both comma-separated, or none [q8_0,q4_0]\n"
           "  --no-torch       do not run PyTorch\n"
           "  --check          exit 1 unless PyTorch's greedy tokens are ours (logits within 1e-3); 77 without it\n"
           "  --help           this text\n",
           BENCH_MAX_ROUNDS);
}

static int parse(int argc, char **argv, opts *o)
{
    enum { O_MODEL = 256, O_LAYERS, O_HEADS, O_WIDTH, O_CONTEXT, O_VOCAB, O_POS, O_ROUNDS, O_THREADS, O_GREEDY,
           O_DTYPE, O_NOTORCH, O_CHECK };
    static const struct option longopts[] = {
        { "model", required_argument, NULL, O_MODEL },     { "layers", required_argument, NULL, O_LAYERS },
        { "heads", required_argument, NULL, O_HEADS },     { "width", required_argument, NULL, O_WIDTH },
        { "context", required_argument, NULL, O_CONTEXT }, { "vocab", required_argument, NULL, O_VOCAB },
        { "positions", required_argument, NULL, O_POS },   { "rounds", required_argument, NULL, O_ROUNDS },
        { "threads", required_argument, NULL, O_THREADS }, { "greedy", required_argument, NULL, O_GREEDY },
        { "dtype", required_argument, NULL, O_DTYPE },     { "no-torch", no_argument, NULL, O_NOTORCH },
        { "check", no_argument, NULL, O_CHECK },           { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        char *end = NULL;
        long v = 0;
        bool bad = false;
        if (c >= O_LAYERS && c <= O_GREEDY) {
            errno = 0;
            v = strtol(optarg, &end, 10);
            bad = end == optarg || *end != '\0' || errno != 0 || v < 1 || v > (1 << 20);
        }
        switch (c) {
        case 'h': usage(); return 1;
        case O_MODEL: o->model = optarg; break;
        case O_LAYERS: bad = bad || v > GPT_MAX_LAYERS; o->layers = (int)v; break;
        case O_HEADS: o->heads = (int)v; break;
        case O_WIDTH: o->width = (int)v; break;
        case O_CONTEXT: o->context = (int)v; break;
        case O_VOCAB: bad = bad || v > 95; o->vocab = (int)v; break;
        case O_POS: bad = bad || v < 64; o->positions = (int)v; break;
        case O_ROUNDS: bad = bad || v > BENCH_MAX_ROUNDS; o->rounds = (int)v; break;
        case O_THREADS: bad = bad || v > 1024; o->threads = (int)v; break;
        case O_GREEDY: o->greedy = (int)v; break;
        case O_DTYPE:
            o->q8 = o->q4 = false;
            if (strcmp(optarg, "none") != 0) {
                char buf[64];
                snprintf(buf, sizeof buf, "%s", optarg);
                for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
                    if (strcmp(t, "q8_0") == 0)
                        o->q8 = true;
                    else if (strcmp(t, "q4_0") == 0)
                        o->q4 = true;
                    else if (strcmp(t, "f32") != 0)
                        bad = true;
                }
            }
            break;
        case O_NOTORCH: o->torch = false; break;
        case O_CHECK: o->check = true; break;
        case ':': fprintf(stderr, "bench_generate: option '%s' needs a value (see --help)\n", argv[optind - 1]); return -1;
        default: fprintf(stderr, "bench_generate: unknown option '%s' (see --help)\n", argv[optind - 1]); return -1;
        }
        if (bad) {
            ex_bad_value("bench_generate", argv, optind, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bench_generate: unexpected argument '%s' (options start with --; see --help)\n", argv[optind]);
        return -1;
    }
    if (o->check && !o->torch) {
        fprintf(stderr, "bench_generate: --check compares with PyTorch: drop --no-torch\n");
        return -1;
    }
    return 0;
}

/* ---- greedy generation, timed per step ---- */

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

/* Greedy from text[0..PROMPT) until text holds positions + 1 tokens: steps at positions PROMPT
 * .. positions - 1, step_s[p] their times. The logits choosing the first `keep` tokens after
 * the prompt go to logits_out (keep x vocab). */
static void generate(const gpt *g, td_device *dev, int32_t *text, int positions, double *step_s, float *logits_out,
                     int keep)
{
    td_tensor *kc[GPT_MAX_LAYERS] = { NULL }, *vc[GPT_MAX_LAYERS] = { NULL };
    float logits[256];
    if (gpt_step(g, dev, text, PROMPT, 0, kc, vc, logits) != TD_OK)
        bench_die("the prompt's step");
    for (int n = PROMPT;; n++) {
        if (n - PROMPT < keep)
            memcpy(logits_out + (size_t)(n - PROMPT) * (size_t)g->vocab_size, logits, sizeof(float) * (size_t)g->vocab_size);
        text[n] = argmax(logits, g->vocab_size);
        if (n >= positions)
            break;
        const double t0 = bench_now();
        if (gpt_step(g, dev, text + n, 1, n, kc, vc, logits) != TD_OK)
            bench_die("a decode step");
        step_s[n] = bench_now() - t0;
    }
    gpt_clear_cache(kc, g->layers);
    gpt_clear_cache(vc, g->layers);
}

/* The no-cache loop's step at position p - 1: the whole prefix of p tokens again. */
static double nocache_step(const gpt *g, td_device *dev, const int32_t *text, int p)
{
    td_tensor *kc[GPT_MAX_LAYERS] = { NULL }, *vc[GPT_MAX_LAYERS] = { NULL };
    float logits[256];
    const double t0 = bench_now();
    if (gpt_step(g, dev, text, p, 0, kc, vc, logits) != TD_OK)
        bench_die("a forward without the cache");
    const double t = bench_now() - t0;
    gpt_clear_cache(kc, g->layers);
    gpt_clear_cache(vc, g->layers);
    return t;
}

/* One layer's attention part of a step at p cached positions: append k and v, attend; by
 * td_float_attention (op = 1) or as gpt_step does (matmul_nt, softmax, matmul). */
static double attention_part(td_device *dev, int heads, int e, int p, int op)
{
    const int64_t sc[] = { 1, heads, p - 1, e }, s1[] = { 1, heads, 1, e };
    td_tensor *kc = bench_random_on(dev, sc, 4, 1), *vc = bench_random_on(dev, sc, 4, 2);
    td_tensor *k = bench_random_on(dev, s1, 4, 3), *v = bench_random_on(dev, s1, 4, 4), *q = bench_random_on(dev, s1, 4, 5);
    const int reps = 1 + 65536 / p;
    double t0 = 0.0;
    for (int r = -2; r < reps; r++) {
        if (r == 0)
            t0 = bench_now();
        const td_tensor *kk[] = { kc, k }, *vv[] = { vc, v };
        td_tensor *nk = NULL, *nv = NULL, *a = NULL, *s = NULL, *ss = NULL, *sm = NULL;
        td_status st = td_float_cat(kk, 2, 2, &nk);
        if (st == TD_OK)
            st = td_float_cat(vv, 2, 2, &nv);
        if (st == TD_OK && op)
            st = td_float_attention(q, nk, nv, 0, &a);
        else if (st == TD_OK) {
            st = td_float_matmul_nt(q, nk, &s);
            if (st == TD_OK)
                st = td_float_mul_scalar(s, 1.0f / sqrtf((float)e), &ss);
            if (st == TD_OK)
                st = td_float_softmax(ss, -1, &sm);
            if (st == TD_OK)
                st = td_float_matmul(sm, nv, &a);
        }
        if (st != TD_OK)
            bench_die("the attention part");
        td_tensor *all[] = { nk, nv, a, s, ss, sm };
        for (int i = 0; i < 6; i++)
            td_tensor_release(all[i]);
    }
    const double t = (bench_now() - t0) / reps;
    td_tensor *all[] = { kc, vc, k, v, q };
    for (int i = 0; i < 5; i++)
        td_tensor_release(all[i]);
    return t;
}

/* ---- memcpy, on the library's threads ---- */

/* The L3's size from sysfs (glibc's sysconf reported 10x too much on this VM), 0 if unknown. */
static double l3_bytes(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    long kib = 0;
    char unit = 0;
    if (f == NULL)
        return 0.0;
    if (fscanf(f, "%ld%c", &kib, &unit) != 2 || unit != 'K')
        kib = 0;
    fclose(f);
    return 1024.0 * (double)kib;
}

/* ---- PyTorch's side ---- */

typedef struct torch_run {
    bool ok, missing; /* missing: the script said it has no torch (exit 77) */
    int agree, compared;
    double worst;
} torch_run;

static torch_run run_torch(const char *model, const int32_t *prompt, const opts *o, const char *compare, double *step_s)
{
    torch_run r = { .ok = false };
    char cmd[4096], ids[256] = "";
    for (int i = 0; i < PROMPT; i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", i ? "," : "", (int)prompt[i]);
    snprintf(cmd, sizeof cmd, BENCH_TORCH_PY " '%s' --model '%s' --prompt %s --positions %d --threads %d%s%s%s",
             TD_GENERATE_TORCH, model, ids, o->positions, o->threads, compare ? " --compare '" : "",
             compare ? compare : "", compare ? "'" : "");
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return r;
    char line[512];
    int steps = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        int pos = 0, a = 0, n = 0;
        double s = 0.0, w = 0.0;
        if (sscanf(line, "generate_torch step %d %lf", &pos, &s) == 2 && pos >= 0 && pos < o->positions) {
            step_s[pos] = s;
            steps++;
        } else if (sscanf(line, "generate_torch greedy %d %d %lf", &a, &n, &w) == 3) {
            r.agree = a;
            r.compared = n;
            r.worst = w;
        } else if (strncmp(line, "torch ", 6) == 0 && compare != NULL) {
            printf("PyTorch: %s", line);
        }
    }
    const int st = pclose(p);
    r.ok = st == 0 && steps == o->positions - PROMPT;
    r.missing = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 77;
    if (!r.ok && !r.missing)
        fprintf(stderr, "bench_generate: %s failed (status %d) or printed %d of %d steps\n", cmd, st, steps,
                o->positions - PROMPT);
    return r;
}

/* ---- the temporary files ---- */

static char tmp_dir[] = "/tmp/bench_generate.XXXXXX", tmp_model[64], tmp_cmp[64];

static void remove_tmp(void)
{
    if (tmp_model[0] != '\0')
        unlink(tmp_model);
    if (tmp_cmp[0] != '\0')
        unlink(tmp_cmp);
    rmdir(tmp_dir);
}

/* ---- figures ---- */

/* The median over rounds of the median step time over the WINDOW steps ending at p. */
static double bucket(double *const *steps, int rounds, int p)
{
    bench_rounds r = { .n = 0 };
    for (int k = 0; k < rounds; k++) {
        bench_rounds w = { .n = 0 };
        for (int q = p - WINDOW; q < p; q++)
            bench_add(&w, steps[k][q]);
        bench_add(&r, bench_median(&w));
    }
    return bench_median(&r);
}

/* Tokens/s of the generation up to position p (the steps before it), median over rounds. */
static double upto(double *const *steps, int rounds, int p)
{
    bench_rounds r = { .n = 0 };
    for (int k = 0; k < rounds; k++) {
        double s = 0.0;
        for (int q = PROMPT; q < p; q++)
            s += steps[k][q];
        bench_add(&r, (p - PROMPT) / s);
    }
    return bench_median(&r);
}

/* Least squares t = a + b p over the medians of consecutive windows of WINDOW steps (each the
 * median over rounds of the window's median: robust to the odd slow step of a busy machine). */
static void fit(double *const *steps, int rounds, int positions, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (int p = PROMPT + WINDOW; p <= positions; p += WINDOW) {
        const double x = p - 0.5 * (WINDOW + 1), y = bucket(steps, rounds, p);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        n++;
    }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
}

int main(int argc, char **argv)
{
    opts o = { .layers = 4, .heads = 4, .width = 128, .context = 1024, .vocab = 64, .positions = 1024, .rounds = 3,
               .threads = 2, .greedy = 64, .torch = true, .q8 = true, .q4 = true };
    const int parsed = parse(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    bench_print_cpu(BENCH_PROG);
    if (td_set_num_threads(o.threads) != TD_OK)
        bench_die("td_set_num_threads");
    double load[3] = { 0, 0, 0 };
    if (getloadavg(load, 3) != 3)
        load[0] = load[1] = load[2] = -1;
    td_device *dev = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        bench_die("cpu device");
    gpt g;
    if (o.model != NULL) {
        if (gpt_load(o.model, dev, BENCH_PROG, &g) != TD_OK)
            bench_die(o.model);
    } else if (gpt_random(dev, o.vocab, o.context, o.layers, o.heads, o.width, 1, &g) != TD_OK) {
        fprintf(stderr, "bench_generate: no model of %d tokens, %d heads, width %d\n", o.vocab, o.heads, o.width);
        td_device_release(dev);
        return 2;
    }
    if (o.positions > g.context) {
        fprintf(stderr, "bench_generate: --positions %d exceeds the model's context %d\n", o.positions, g.context);
        gpt_free(&g);
        td_device_release(dev);
        return 2;
    }
    /* the files PyTorch reads: removed at exit, however the program ends */
    if (mkdtemp(tmp_dir) == NULL) {
        perror("bench_generate: mkdtemp");
        return 1;
    }
    atexit(remove_tmp);
    snprintf(tmp_cmp, sizeof tmp_cmp, "%s/compare.bin", tmp_dir);
    const char *path = o.model;
    if (path == NULL) {
        snprintf(tmp_model, sizeof tmp_model, "%s/model.safetensors", tmp_dir);
        if (gpt_save(&g, tmp_model) != TD_OK)
            bench_die("saving the model");
        path = tmp_model;
    }
    const char *cmp = tmp_cmp;
    /* whether torch imports, the script says (exit 77): importing it takes seconds */
    bool torch = o.torch && !g.nt && access(BENCH_TORCH_PY, X_OK) == 0; /* the script reads safetensors only */
    const int e = g.width / g.heads, greedy = o.greedy < o.positions - PROMPT ? o.greedy : o.positions - PROMPT;
    const char *wait = getenv("OMP_WAIT_POLICY");
    printf("load average at start (uptime): %.2f %.2f %.2f; %d threads; OMP_WAIT_POLICY %s (both inherit it); model: "
           "%s; %d layers, %d heads, width %d, context %d, vocabulary %d; %d rounds\n",
           load[0], load[1], load[2], o.threads, wait ? wait : "unset", o.model ? o.model : "random weights", g.layers, g.heads, g.width,
           g.context, g.vocab_size, o.rounds);

    int buckets[MAX_BUCKETS], nb = 0;
    for (int p = 64; p <= o.positions && nb < MAX_BUCKETS; p *= 2)
        buckets[nb++] = p;
    if (buckets[nb - 1] != o.positions && nb < MAX_BUCKETS)
        buckets[nb++] = o.positions;

    const bool quant = (o.q8 || o.q4) && g.width % 32 == 0;
    if ((o.q8 || o.q4) && !quant)
        printf("q8_0/q4_0 rows: skipped (the width %d is not a multiple of the block size 32)\n", g.width);
    /* the same model with its linear weights as the library's q8_0 / q4_0 tensors ([out, in],
     * td_float_quantize), run by td_float_matmul_nt as generate runs a quantized GGUF file */
    gpt gq[2] = { { .layers = 0 }, { .layers = 0 } };
    const td_dtype qdt[2] = { TD_Q8_0, TD_Q4_0 };
    const bool qon[2] = { quant && o.q8, quant && o.q4 };
    for (int i = 0; i < 2; i++)
        if (qon[i] && gpt_quantized(&g, qdt[i], &gq[i]) != TD_OK)
            bench_die("quantizing the model's linear weights (td_float_quantize)");

    const size_t vsz = (size_t)g.vocab_size;
    int32_t *text = calloc((size_t)o.positions + 1, sizeof *text);
    float *our_logits = malloc(sizeof(float) * vsz * (size_t)(greedy + 1)), *qlog = malloc(sizeof(float) * vsz);
    double *ours[BENCH_MAX_ROUNDS], *theirs[BENCH_MAX_ROUNDS], *viaop[BENCH_MAX_ROUNDS], *qsteps = calloc((size_t)o.positions + 1, sizeof(double));
    const size_t mbytes = (size_t)64 << 20;
    char *msrc = malloc(mbytes), *mdst = malloc(mbytes);
    if (text == NULL || our_logits == NULL || qlog == NULL || qsteps == NULL || msrc == NULL || mdst == NULL)
        bench_die("out of memory");
    memset(msrc, 1, mbytes);
    memset(mdst, 0, mbytes);
    for (int k = 0; k < o.rounds; k++) {
        ours[k] = calloc((size_t)o.positions + 1, sizeof(double));
        theirs[k] = calloc((size_t)o.positions + 1, sizeof(double));
        viaop[k] = calloc((size_t)o.positions + 1, sizeof(double));
        if (ours[k] == NULL || theirs[k] == NULL || viaop[k] == NULL)
            bench_die("out of memory");
    }
    bench_rounds nocache[MAX_BUCKETS] = { 0 }, attn[MAX_BUCKETS] = { 0 }, attn_op[MAX_BUCKETS] = { 0 }, mem = { 0 },
                 qtok[2] = { 0 };
    torch_run agreement = { .ok = false };
    int rc = 0;
    bool torch_ok = torch;
    for (int i = 0; i < PROMPT; i++)
        text[i] = (int32_t)((i * 7 + 3) % g.vocab_size);

    for (int k = 0; k < o.rounds; k++) {
        generate(&g, dev, text, o.positions, ours[k], our_logits, greedy);
        if (k == 0 && torch_ok) { /* our greedy tokens and logits for the comparison */
            FILE *f = fopen(cmp, "wb");
            const int32_t hdr[2] = { greedy, g.vocab_size };
            if (f == NULL || fwrite(hdr, sizeof hdr, 1, f) != 1 ||
                fwrite(text + PROMPT, sizeof(int32_t), (size_t)greedy, f) != (size_t)greedy ||
                fwrite(our_logits, sizeof(float) * vsz, (size_t)greedy, f) != (size_t)greedy || fclose(f) != 0)
                bench_die("writing the comparison file");
        }
        if (torch_ok) {
            torch_run r = run_torch(path, text, &o, k == 0 ? cmp : NULL, theirs[k]);
            torch_ok = r.ok;
            if (k == 0)
                agreement = r;
            if (r.missing)
                torch = false;
        }
        { /* the same decode with td_float_attention for the one token (the step before issue 25) */
            int32_t *t2 = malloc(sizeof(int32_t) * ((size_t)o.positions + 1));
            if (t2 == NULL)
                bench_die("out of memory");
            memcpy(t2, text, sizeof(int32_t) * PROMPT);
            g.decode_attention_op = 1;
            generate(&g, dev, t2, o.positions, viaop[k], NULL, 0);
            g.decode_attention_op = 0;
            free(t2);
        }
        for (int b = 0; b < nb; b++) {
            bench_add(&nocache[b], nocache_step(&g, dev, text, buckets[b]));
            bench_add(&attn[b], attention_part(dev, g.heads, e, buckets[b], 0));
            bench_add(&attn_op[b], attention_part(dev, g.heads, e, buckets[b], 1));
        }
        (void)bench_memcpy_rate(mdst, msrc, mbytes, 1, td_cpu_threads());
        bench_add(&mem, bench_memcpy_rate(mdst, msrc, mbytes, 4, td_cpu_threads()));
        for (int i = 0; i < 2; i++)
            if (qon[i]) { /* the first bucket's steps */
                int32_t qtext[128];
                memcpy(qtext, text, sizeof(int32_t) * PROMPT);
                generate(&gq[i], dev, qtext, buckets[0], qsteps, qlog, k == 0 ? 1 : 0);
                double *one[] = { qsteps };
                bench_add(&qtok[i], bucket(one, 1, buckets[0]));
                if (k == 0) {
                    double worst = 0.0;
                    for (size_t j = 0; j < vsz; j++)
                        worst = fmax(worst, fabs((double)qlog[j] - our_logits[j]));
                    printf("%s: the prompt's logits differ from the %s model's by %.3g at most (quantization error)\n",
                           i == 0 ? "q8_0" : "q4_0", td_dtype_name(g.wdtype), worst);
                }
            }
    }

    if (o.torch && g.nt)
        printf("PyTorch: skipped (bench/generate_torch.py reads safetensors; %s is GGUF)\n", o.model);
    else if (o.torch && !torch)
        printf("PyTorch: skipped (" BENCH_TORCH_PY " cannot import torch)\n");
    if (o.check && !torch) {
        printf("bench_generate: --check skipped: no PyTorch\n");
        rc = 77;
    }

    /* ---- per position ---- */
    printf("\nper-token time at position p: median of the %d steps ending at p, median over rounds (ms)\n", WINDOW);
    printf("%9s %10s %10s %8s | %12s %12s %8s | %12s %9s | %9s %8s | %13s %8s\n", "position", "ours", "PyTorch",
           "ours/PT", "ours tok/s", "PT tok/s", "x PT", "no-cache ms", "/cached", "via op", "/ours", "attention us",
           "via op");
    for (int b = 0; b < nb; b++) {
        const int p = buckets[b];
        const double to = bucket(ours, o.rounds, p), tt = torch_ok ? bucket(theirs, o.rounds, p) : NAN;
        const double uo = upto(ours, o.rounds, p), ut = torch_ok ? upto(theirs, o.rounds, p) : NAN;
        const double nc = bench_median(&nocache[b]), tv = bucket(viaop, o.rounds, p);
        printf("%9d %10.3f %10.3f %8.2f | %12.1f %12.1f %8.2f | %12.3f %9.1f | %9.3f %8.2f | %13.2f %8.2f\n", p,
               1e3 * to, 1e3 * tt, to / tt, uo, ut, uo / ut, 1e3 * nc, nc / to, 1e3 * tv, tv / to,
               1e6 * bench_median(&attn[b]), 1e6 * bench_median(&attn_op[b]));
    }
    printf("(ours/PT: time per token, < 1: ours faster; tok/s: the whole generation from the %d-token prompt up "
           "to p, x PT: ours / PyTorch's, > 1: ours faster; no-cache: a forward over all p positions, what a loop "
           "without the cache pays per token; via op: the step with td_float_attention for the token's attention "
           "(it copies the transposed key cache), ms and / ours; attention: one layer's float_cat of k and v plus "
           "matmul_nt, softmax, matmul as the step does, us, and the same via td_float_attention)\n",
           PROMPT);

    /* ---- linearity ---- */
    printf("\nlinearity: time(2p) / time(p)\n%9s %10s %10s %12s %12s\n", "p -> 2p", "ours", "PyTorch", "attention",
           "no-cache");
    for (int b = 0; b + 1 < nb; b++) {
        if (buckets[b + 1] != 2 * buckets[b])
            continue;
        const double r_o = bucket(ours, o.rounds, buckets[b + 1]) / bucket(ours, o.rounds, buckets[b]);
        const double r_t = torch_ok ? bucket(theirs, o.rounds, buckets[b + 1]) / bucket(theirs, o.rounds, buckets[b])
                                    : NAN;
        printf("%4d->%-4d %10.2f %10.2f %12.2f %12.2f\n", buckets[b], buckets[b + 1], r_o, r_t,
               bench_median(&attn[b + 1]) / bench_median(&attn[b]),
               bench_median(&nocache[b + 1]) / bench_median(&nocache[b]));
    }
    if (nb > 1) { /* a fit over more than the first bucket's windows */
        double a = 0, slope = 0;
        fit(ours, o.rounds, o.positions, &a, &slope);
        const double tmax = a + slope * o.positions;
        const double attn_slope = (bench_median(&attn[nb - 1]) - bench_median(&attn[0])) / (buckets[nb - 1] - buckets[0]);
        printf("ours, least squares over the %d-step windows from position %d to %d: t = %.3f ms + %.3f us x p: at p = "
               "%d the part growing with p is %.0f%% of the step; one layer's attention part alone grows %.3f us per "
               "position (x %d layers = %.3f)\n",
               WINDOW, PROMPT, o.positions - 1, 1e3 * a, 1e6 * slope, o.positions, 100.0 * slope * o.positions / tmax,
               1e6 * attn_slope, g.layers, 1e6 * g.layers * attn_slope);
        if (torch_ok) {
            double ta = 0, tslope = 0;
            fit(theirs, o.rounds, o.positions, &ta, &tslope);
            printf("PyTorch, the same fit: t = %.3f ms + %.3f us x p\n", 1e3 * ta, 1e6 * tslope);
        }
    } else {
        printf("(one bucket: no ratios or fit; --positions 128 or more for them)\n");
    }

    /* ---- agreement ---- */
    if (torch) {
        if (agreement.compared > 0) {
            printf("\ngreedy decode from the same prompt: the first %d of %d tokens agree with PyTorch's; largest "
                   "logit difference over them %.3g\n", agreement.agree, agreement.compared, agreement.worst);
            if (o.check && !(agreement.agree == agreement.compared && agreement.worst <= 1e-3)) {
                printf("bench_generate: --check: NOT met\n");
                rc = 1;
            }
        } else {
            printf("\ngreedy decode: PyTorch's run failed (see above)\n");
            rc = o.check ? 1 : rc;
        }
    }

    /* ---- bandwidth ---- */
    const double memr = bench_median(&mem), wb = gpt_step_weight_bytes(&g), t0 = bucket(ours, o.rounds, buckets[0]);
    const double l3 = l3_bytes();
    printf("\nweights per token at position %d (a decode step reads every weight once), against memcpy (64 MiB, read "
           "+ written, %d threads) %.2f GB/s [%.2f-%.2f]; L3 %s%.0f MiB\n",
           buckets[0], o.threads, memr / 1e9, bench_min(&mem) / 1e9, bench_max(&mem) / 1e9, l3 > 0 ? "" : "unknown, ",
           l3 > 0 ? l3 / 1048576.0 : 0.0);
    printf("%6s %14s %12s %14s %12s %10s\n", "dtype", "weight bytes", "tokens/s", "weight GB/s", "of memcpy", "");
    printf("%6s %14.0f %12.1f %14.2f %12.3f %10s\n", td_dtype_name(g.wdtype), wb, 1.0 / t0, wb / t0 / 1e9, wb / t0 / memr,
           l3 > 0 && wb < l3 ? "(in L3)" : "");
    for (int i = 0; i < 2; i++)
        if (qon[i]) {
            const double qb = gpt_step_weight_bytes(&gq[i]);
            const double tq = bench_median(&qtok[i]);
            printf("%6s %14.0f %12.1f %14.2f %12.3f %10s\n", i == 0 ? "q8_0" : "q4_0", qb, 1.0 / tq, qb / tq / 1e9,
                   qb / tq / memr, l3 > 0 && qb < l3 ? "(in L3)" : "");
        }
    if (getloadavg(load, 3) == 3)
        printf("load average at the end: %.2f %.2f %.2f\n", load[0], load[1], load[2]);

    for (int k = 0; k < o.rounds; k++) {
        free(ours[k]);
        free(theirs[k]);
        free(viaop[k]);
    }
    for (int i = 0; i < 2; i++)
        gpt_free(&gq[i]);
    free(text);
    free(our_logits);
    free(qlog);
    free(qsteps);
    free(msrc);
    free(mdst);
    gpt_free(&g);
    td_device_release(dev);
    return rc;
}
