/* Generation with a KV cache (examples/gpt_model.h, what examples/generate and
 * bench/bench_generate run): for a tiny random GPT, every step's logits from the cache equal
 * (1) the library's forward over the whole text without a cache (another path: causal
 * attention over all positions, no float_cat), and (2) a forward written here in plain C in
 * double precision from the weights' values, which shares no code with the library. Plus the
 * step's refusals of calls it cannot serve. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../examples/gpt_model.h"
#include "tdt.h"

static td_device *dev, *ad;

enum { V = 13, T = 12, L = 2, H = 2, D = 8, E = D / H, F = 4 * D, PROMPT = 3 };

/* The weights' values, as the reference reads them. */
typedef struct ref_model {
    float ln1w[L][D], ln1b[L][D], wq[L][D][D], bq[L][D], wk[L][D][D], bk[L][D], wv[L][D][D], bv[L][D];
    float wp[L][D][D], bp[L][D], ln2w[L][D], ln2b[L][D], wfc[L][D][F], bfc[L][F], wfc2[L][F][D], bfc2[L][D];
    float wte[V][D], wpe[T][D], lnfw[D], lnfb[D], head[D][V];
} ref_model;

#define tdt_check_ok(call) tdt_check((call), #call)

static void fetch(const td_tensor *t, float *dst, int64_t n)
{
    tdt_check_ok(td_float_into_data(t, dst, n));
}

static void read_model(const gpt *g, ref_model *r)
{
    for (int l = 0; l < L; l++) {
        float *dst[GPT_PER_BLOCK] = { r->ln1w[l],    r->ln1b[l],  &r->wq[l][0][0],  r->bq[l],     &r->wk[l][0][0],
                                      r->bk[l],      &r->wv[l][0][0], r->bv[l],     &r->wp[l][0][0], r->bp[l],
                                      r->ln2w[l],    r->ln2b[l],  &r->wfc[l][0][0], r->bfc[l],    &r->wfc2[l][0][0],
                                      r->bfc2[l] };
        const int64_t n[GPT_PER_BLOCK] = { D, D, D * D, D, D * D, D, D * D, D, D * D, D, D, D, D * F, F, F * D, D };
        for (int k = 0; k < GPT_PER_BLOCK; k++)
            fetch(g->block[l][k], dst[k], n[k]);
    }
    fetch(g->tail[GPT_WTE], &r->wte[0][0], V * D);
    fetch(g->tail[GPT_WPE], &r->wpe[0][0], T * D);
    fetch(g->tail[GPT_LNF_W], r->lnfw, D);
    fetch(g->tail[GPT_LNF_B], r->lnfb, D);
    fetch(g->tail[GPT_HEAD], &r->head[0][0], D * V);
}

static void layer_norm(const double *x, const float *w, const float *b, double *y)
{
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < D; i++)
        mean += x[i];
    mean /= D;
    for (int i = 0; i < D; i++)
        var += (x[i] - mean) * (x[i] - mean);
    var /= D;
    for (int i = 0; i < D; i++)
        y[i] = (x[i] - mean) / sqrt(var + 1e-5) * w[i] + b[i];
}

/* y[0..out) = x[0..in) @ w (row-major [in][out]) + b (b may be NULL) */
static void matvec(const double *x, const float *w, const float *b, int in, int out, double *y)
{
    for (int j = 0; j < out; j++) {
        double s = b ? b[j] : 0.0;
        for (int i = 0; i < in; i++)
            s += x[i] * w[i * out + j];
        y[j] = s;
    }
}

/* The logits of the last of tokens[0..n), by the model's definition (train_gpt.c's comment). */
static void ref_logits(const ref_model *r, const int32_t *tok, int n, double *logits)
{
    static double x[T][D], h[T][D], q[T][D], k[T][D], v[T][D], a[T][D], o[D], f[F];
    for (int t = 0; t < n; t++)
        for (int i = 0; i < D; i++)
            x[t][i] = (double)r->wte[tok[t]][i] + r->wpe[t][i];
    for (int l = 0; l < L; l++) {
        for (int t = 0; t < n; t++) {
            layer_norm(x[t], r->ln1w[l], r->ln1b[l], h[t]);
            matvec(h[t], &r->wq[l][0][0], r->bq[l], D, D, q[t]);
            matvec(h[t], &r->wk[l][0][0], r->bk[l], D, D, k[t]);
            matvec(h[t], &r->wv[l][0][0], r->bv[l], D, D, v[t]);
        }
        for (int t = 0; t < n; t++)
            for (int hh = 0; hh < H; hh++) {
                double s[T], mx = -INFINITY, sum = 0.0;
                for (int j = 0; j <= t; j++) { /* causal: position t sees 0..t */
                    s[j] = 0.0;
                    for (int e = 0; e < E; e++)
                        s[j] += q[t][hh * E + e] * k[j][hh * E + e];
                    s[j] /= sqrt((double)E);
                    mx = s[j] > mx ? s[j] : mx;
                }
                for (int j = 0; j <= t; j++)
                    sum += (s[j] = exp(s[j] - mx));
                for (int e = 0; e < E; e++) {
                    double acc = 0.0;
                    for (int j = 0; j <= t; j++)
                        acc += s[j] / sum * v[j][hh * E + e];
                    a[t][hh * E + e] = acc;
                }
            }
        for (int t = 0; t < n; t++) {
            matvec(a[t], &r->wp[l][0][0], r->bp[l], D, D, o);
            for (int i = 0; i < D; i++)
                x[t][i] += o[i];
            layer_norm(x[t], r->ln2w[l], r->ln2b[l], h[t]);
            matvec(h[t], &r->wfc[l][0][0], r->bfc[l], D, F, f);
            for (int i = 0; i < F; i++)
                f[i] = 0.5 * f[i] * (1.0 + erf(f[i] / sqrt(2.0)));
            matvec(f, &r->wfc2[l][0][0], r->bfc2[l], F, D, o);
            for (int i = 0; i < D; i++)
                x[t][i] += o[i];
        }
    }
    layer_norm(x[n - 1], r->lnfw, r->lnfb, h[0]);
    matvec(h[0], &r->head[0][0], NULL, D, V, logits);
}

static void test_cache_matches_recomputation_and_reference(void **state)
{
    (void)state;
    gpt g;
    tdt_check_ok(gpt_random(dev, V, T, L, H, D, 5, &g));
    static ref_model r;
    read_model(&g, &r);
    const int32_t text[T] = { 3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8 };
    td_tensor *kc[L] = { NULL }, *vc[L] = { NULL }, *kf[L] = { NULL }, *vf[L] = { NULL };
    float cached[V], full[V];
    double ref[V], worst_full = 0.0, worst_ref = 0.0, spread = 0.0;
    /* the step's attention for one token (matmul_nt), then td_float_attention's (bench_generate's "via op") */
    for (int via_op = 0; via_op < 2; via_op++) {
        g.decode_attention_op = via_op;
        gpt_clear_cache(kc, L);
        gpt_clear_cache(vc, L);
        for (int n = PROMPT; n <= T; n++) {
            /* the prompt once, then one token a step at position n - 1 */
            if (n == PROMPT)
                tdt_check_ok(gpt_step(&g, dev, text, n, 0, kc, vc, cached));
            else
                tdt_check_ok(gpt_step(&g, dev, text + n - 1, 1, n - 1, kc, vc, cached));
            gpt_clear_cache(kf, L);
            gpt_clear_cache(vf, L);
            tdt_check_ok(gpt_step(&g, dev, text, n, 0, kf, vf, full));
            ref_logits(&r, text, n, ref);
            for (int j = 0; j < V; j++) {
                worst_full = fmax(worst_full, fabs((double)cached[j] - full[j]));
                worst_ref = fmax(worst_ref, fabs((double)cached[j] - ref[j]));
                spread = fmax(spread, fabs(ref[j] - ref[0]));
            }
        }
    }
    gpt_clear_cache(kc, L);
    gpt_clear_cache(vc, L);
    gpt_clear_cache(kf, L);
    gpt_clear_cache(vf, L);
    gpt_free(&g);
    print_message("cached logits against the recomputation: %.3g, against the plain C reference: %.3g (logits "
                  "spread %.3g)\n", worst_full, worst_ref, spread);
    /* the logits are far from constant (a broken cache would show), the paths agree */
    assert_true(spread > 1.0);
    if (!(worst_full <= 1e-4 && worst_ref <= 1e-4))
        fail_msg("cached logits differ: from the recomputation by %g, from the plain C reference by %g", worst_full,
                 worst_ref);
}

static void test_step_refuses_what_it_cannot_serve(void **state)
{
    (void)state;
    gpt g;
    tdt_check_ok(gpt_random(dev, V, T, L, H, D, 6, &g));
    td_tensor *kc[L] = { NULL }, *vc[L] = { NULL };
    float logits[V];
    const int32_t text[T + 1] = { 0 };
    assert_int_equal(gpt_step(&g, dev, text, T + 1, 0, kc, vc, logits), TD_E_INVALID); /* past the context */
    assert_int_equal(gpt_step(&g, dev, text, 1, 2, kc, vc, logits), TD_E_INVALID);     /* p > 0, empty cache */
    tdt_check_ok(gpt_step(&g, dev, text, 4, 0, kc, vc, logits));
    assert_int_equal(gpt_step(&g, dev, text, 2, 4, kc, vc, logits), TD_E_INVALID); /* two tokens after a cache */
    assert_int_equal(gpt_step(&g, dev, text, 1, 0, kc, vc, logits), TD_E_INVALID); /* p = 0, full cache */
    tdt_check_ok(gpt_step(&g, dev, text, 1, 4, kc, vc, logits));
    gpt_clear_cache(kc, L);
    gpt_clear_cache(vc, L);
    gpt_free(&g);
    assert_int_equal(gpt_random(dev, V, T, L, 3, D, 1, &g), TD_E_INVALID); /* 3 heads do not divide 8 */
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_cache_matches_recomputation_and_reference),
        TDT_TEST(test_step_refuses_what_it_cannot_serve),
    };
    return cmocka_run_group_tests_name("generate", tests, setup, teardown);
}
