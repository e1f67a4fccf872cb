/* float_attention on the CPU (the blocked kernel, docs/kernels.md) and its gradient (the
 * fused backward ops float_attention_backward_query / _key / _value) against a naive
 * reference written here in double from the textbook formulas (softmax of the scaled,
 * causally masked scores; dS = P * (dP - rowsum(P * dP))), against the decomposition's own
 * backward (float_attention_masked with a zero mask has no backward formula, so autodiff
 * differentiates its pieces: the path float_attention took before it had one), and with
 * composites forced (the backward ops by their decompositions). Shapes cross the kernel's
 * 64-row blocks, with L != S both ways and causal. Also: the tape keeps no [L, S] tensor,
 * and the backward ops' edge cases (no keys, no queries, E = 0). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *cpu, *ad;

typedef struct ref {
    float *out, *dq, *dk, *dv;
} ref;

/* The reference: out = P v, and with grad g: dv = P^T g, dP = g v^T, dS = P * (dP -
 * rowsum(P * dP)), dq = dS k / sqrt(E), dk = dS^T q / sqrt(E); per (batch, head) in double. */
static ref reference(const float *q, const float *k, const float *v, const float *g, int64_t bh, int64_t L, int64_t S,
                     int64_t E, int64_t Ev, int64_t causal)
{
    ref r = { calloc((size_t)(bh * L * Ev) + 1, sizeof(float)), calloc((size_t)(bh * L * E) + 1, sizeof(float)),
              calloc((size_t)(bh * S * E) + 1, sizeof(float)), calloc((size_t)(bh * S * Ev) + 1, sizeof(float)) };
    double *p = malloc(sizeof(double) * (size_t)(L * S + 1)), *dk = calloc((size_t)(S * E) + 1, sizeof(double)),
           *dv = calloc((size_t)(S * Ev) + 1, sizeof(double));
    const double scale = 1.0 / sqrt((double)E);
    for (int64_t h = 0; h < bh; h++) {
        const float *qh = q + h * L * E, *kh = k + h * S * E, *vh = v + h * S * Ev, *gh = g + h * L * Ev;
        memset(dk, 0, sizeof(double) * (size_t)(S * E));
        memset(dv, 0, sizeof(double) * (size_t)(S * Ev));
        for (int64_t i = 0; i < L; i++) {
            double *pi = p + i * S, mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < S; j++) {
                double s = 0;
                for (int64_t e = 0; e < E; e++)
                    s += (double)qh[i * E + e] * kh[j * E + e];
                pi[j] = causal && j > i ? -INFINITY : s * scale;
                mx = pi[j] > mx ? pi[j] : mx;
            }
            for (int64_t j = 0; j < S; j++)
                sum += pi[j] = exp(pi[j] - mx);
            for (int64_t j = 0; j < S; j++)
                pi[j] /= sum;
            double dpsum = 0;
            for (int64_t c = 0; c < Ev; c++) {
                double o = 0;
                for (int64_t j = 0; j < S; j++)
                    o += pi[j] * vh[j * Ev + c];
                r.out[(h * L + i) * Ev + c] = (float)o;
            }
            /* rowsum(P * dP), dP_ij = g_i . v_j */
            for (int64_t j = 0; j < S; j++) {
                double dp = 0;
                for (int64_t c = 0; c < Ev; c++)
                    dp += (double)gh[i * Ev + c] * vh[j * Ev + c];
                dpsum += pi[j] * dp;
            }
            for (int64_t j = 0; j < S; j++) {
                double dp = 0;
                for (int64_t c = 0; c < Ev; c++) {
                    dp += (double)gh[i * Ev + c] * vh[j * Ev + c];
                    dv[j * Ev + c] += pi[j] * gh[i * Ev + c];
                }
                const double ds = pi[j] * (dp - dpsum);
                for (int64_t e = 0; e < E; e++) {
                    r.dq[(h * L + i) * E + e] += (float)(ds * kh[j * E + e] * scale);
                    dk[j * E + e] += ds * qh[i * E + e] * scale;
                }
            }
        }
        for (int64_t x = 0; x < S * E; x++)
            r.dk[h * S * E + x] = (float)dk[x];
        for (int64_t x = 0; x < S * Ev; x++)
            r.dv[h * S * Ev + x] = (float)dv[x];
    }
    free(p), free(dk), free(dv);
    return r;
}

typedef struct got {
    td_tensor *out, *dq, *dk, *dv;
} got;

/* Forward and backward on the autodiff device with grad g as the seed: float_attention, or
 * (pieces) float_attention_masked with a 0-d zero mask, which autodiff differentiates
 * through its decomposition's pieces. */
static got run(const float *q, const float *k, const float *v, const float *g, const int64_t *sq, const int64_t *sk,
               const int64_t *sv, const int64_t *so, int64_t causal, bool pieces)
{
    got r = { 0 };
    td_tensor *tq = tdt_make_f32(ad, q, sq, 4), *tk = tdt_make_f32(ad, k, sk, 4), *tv = tdt_make_f32(ad, v, sv, 4);
    td_tensor *tg = tdt_make_f32(cpu, g, so, 4), *zero = NULL, *out = NULL;
    tdt_check(td_require_grad(tq), "require_grad");
    tdt_check(td_require_grad(tk), "require_grad");
    tdt_check(td_require_grad(tv), "require_grad");
    if (pieces) {
        const float z = 0.0f;
        tdt_check(td_float_from_data(ad, &z, NULL, 0, &zero), "zero mask");
        tdt_check(td_float_attention_masked(tq, tk, tv, zero, causal, &out), "attention_masked");
    } else {
        tdt_check(td_float_attention(tq, tk, tv, causal, &out), "attention");
    }
    td_grads *grads = NULL;
    tdt_check(td_backward_seeded(out, tg, &grads), "backward");
    tdt_check(td_tensor_value(out, &r.out), "value");
    tdt_check(td_grads_get(grads, tq, &r.dq), "dq");
    tdt_check(td_grads_get(grads, tk, &r.dk), "dk");
    tdt_check(td_grads_get(grads, tv, &r.dv), "dv");
    td_grads_release(grads);
    td_tensor *all[] = { tq, tk, tv, tg, zero, out };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    return r;
}

static void release_got(got *g)
{
    td_tensor_release(g->out), td_tensor_release(g->dq), td_tensor_release(g->dk), td_tensor_release(g->dv);
}

static void test_gradients_vs_reference_and_decomposition(void **state)
{
    (void)state;
    unsigned seed = 25;
    /* { B, H, L, S, E, Ev, causal } */
    static const int64_t cases[][7] = {
        { 1, 1, 1, 1, 1, 1, 1 },     { 1, 1, 3, 3, 2, 2, 0 },       { 2, 3, 70, 70, 16, 8, 1 },
        { 1, 2, 65, 130, 5, 7, 1 },  /* L < S */ { 1, 2, 150, 40, 8, 3, 1 }, /* L > S: rows past S see all */
        { 2, 1, 129, 67, 32, 12, 0 }, { 1, 1, 200, 200, 4, 4, 1 },   { 1, 1, 64, 128, 8, 8, 1 },
        /* past the CPU's short rows (L or S over 256): its blocked backward */
        { 1, 2, 300, 280, 6, 5, 1 }, { 1, 1, 40, 300, 4, 4, 0 },      { 1, 1, 270, 30, 8, 8, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t B = cases[c][0], H = cases[c][1], L = cases[c][2], S = cases[c][3], E = cases[c][4],
                      Ev = cases[c][5], causal = cases[c][6];
        const int64_t sq[] = { B, H, L, E }, sk[] = { B, H, S, E }, sv[] = { B, H, S, Ev }, so[] = { B, H, L, Ev };
        float *q = tdt_host_randoms(B * H * L * E, &seed), *k = tdt_host_randoms(B * H * S * E, &seed),
              *v = tdt_host_randoms(B * H * S * Ev, &seed), *g = tdt_host_randoms(B * H * L * Ev, &seed);
        for (int64_t i = 0; i < B * H * L * E; i++) /* scores of a few units: peaked rows */
            q[i] *= 4.0f;
        ref want = reference(q, k, v, g, B * H, L, S, E, Ev, causal);
        got fused = run(q, k, v, g, sq, sk, sv, so, causal, false);
        got pieces = run(q, k, v, g, sq, sk, sv, so, causal, true);
        tdt_check(td_device_set_composites(cpu, true), "composites on");
        got composite = run(q, k, v, g, sq, sk, sv, so, causal, false);
        tdt_check(td_device_set_composites(cpu, false), "composites off");
        got *all[] = { &fused, &pieces, &composite };
        for (int w = 0; w < 3; w++) {
            print_message("case %zu (B %lld H %lld L %lld S %lld E %lld Ev %lld causal %lld), %s\n", c, (long long)B,
                          (long long)H, (long long)L, (long long)S, (long long)E, (long long)Ev, (long long)causal,
                          (const char *[]){ "fused", "pieces", "composite" }[w]);
            tdt_expect(all[w]->out, TD_F32, so, 4, want.out, B * H * L * Ev, 1e-4f);
            tdt_expect(all[w]->dq, TD_F32, sq, 4, want.dq, B * H * L * E, 1e-4f);
            tdt_expect(all[w]->dk, TD_F32, sk, 4, want.dk, B * H * S * E, 1e-4f);
            tdt_expect(all[w]->dv, TD_F32, sv, 4, want.dv, B * H * S * Ev, 1e-4f);
        }
        /* the fused backward against the decomposition's, closer than either to the reference */
        tdt_expect_same(fused.dq, pieces.dq, 2e-5f);
        tdt_expect_same(fused.dk, pieces.dk, 2e-5f);
        tdt_expect_same(fused.dv, pieces.dv, 2e-5f);
        release_got(&fused), release_got(&pieces), release_got(&composite);
        free(q), free(k), free(v), free(g), free(want.out), free(want.dq), free(want.dk), free(want.dv);
    }
}

/* The tape of the fused op keeps q, k, v and the result: no [L, S] tensor, unlike the pieces. */
static void test_graph_keeps_no_scores(void **state)
{
    (void)state;
    unsigned seed = 3;
    const int64_t L = 256, E = 8, s[] = { 1, 1, L, E };
    float *x = tdt_host_randoms(L * E, &seed);
    int64_t bytes[2] = { 0, 0 };
    for (int pieces = 0; pieces < 2; pieces++) {
        td_tensor *t = tdt_make_f32(ad, x, s, 4), *zero = NULL, *out = NULL;
        tdt_check(td_require_grad(t), "require_grad");
        if (pieces) {
            const float z = 0.0f;
            tdt_check(td_float_from_data(ad, &z, NULL, 0, &zero), "zero mask");
            tdt_check(td_float_attention_masked(t, t, t, zero, 1, &out), "attention_masked");
        } else {
            tdt_check(td_float_attention(t, t, t, 1, &out), "attention");
        }
        tdt_check(td_testing_graph_bytes(out, &bytes[pieces]), "graph bytes");
        td_tensor_release(out), td_tensor_release(zero), td_tensor_release(t);
    }
    print_message("graph bytes at L = %lld: fused %lld, pieces %lld\n", (long long)L, (long long)bytes[0],
                  (long long)bytes[1]);
    /* fused: q = k = v (one storage) and the result, 2 L E floats */
    assert_true(bytes[0] <= 2 * L * E * (int64_t)sizeof(float));
    assert_true(bytes[1] >= L * L * (int64_t)sizeof(float));
    free(x);
}

/* The backward ops' edge cases, by hand: no keys (the query gradient is an empty sum: 0), no
 * queries (key and value gradients 0), E = 0 (NaN weights: a NaN value gradient). */
static void test_backward_edges(void **state)
{
    (void)state;
    const float ones[12] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, zeros[12] = { 0 }, nans[12] = { NAN, NAN, NAN, NAN,
                                                                                                  NAN, NAN };
    td_tensor *r = NULL;
    {   /* S = 0: q [1, 1, 3, 2], k [1, 1, 0, 2], v [1, 1, 0, 4], output and grad [1, 1, 3, 4] */
        const int64_t sq[] = { 1, 1, 3, 2 }, sk[] = { 1, 1, 0, 2 }, sv[] = { 1, 1, 0, 4 }, so[] = { 1, 1, 3, 4 };
        td_tensor *q = tdt_make_f32(cpu, ones, sq, 4), *k = tdt_make_f32(cpu, ones, sk, 4),
                  *v = tdt_make_f32(cpu, ones, sv, 4), *o = tdt_make_f32(cpu, ones, so, 4);
        for (int64_t causal = 0; causal < 2; causal++) {
            tdt_check(td_float_attention_backward_query(q, k, v, o, o, causal, &r), "dq");
            tdt_expect(r, TD_F32, sq, 4, zeros, 6, 0.0f);
            td_tensor_release(r);
            tdt_check(td_float_attention(q, k, v, causal, &r), "attention");
            tdt_expect(r, TD_F32, so, 4, zeros, 12, 0.0f);
            td_tensor_release(r);
        }
        td_tensor_release(q), td_tensor_release(k), td_tensor_release(v), td_tensor_release(o);
    }
    {   /* L = 0: q [1, 1, 0, 2], k [1, 1, 3, 2], v [1, 1, 3, 2], output and grad [1, 1, 0, 2] */
        const int64_t sq[] = { 1, 1, 0, 2 }, sk[] = { 1, 1, 3, 2 }, so[] = { 1, 1, 0, 2 };
        td_tensor *q = tdt_make_f32(cpu, ones, sq, 4), *k = tdt_make_f32(cpu, ones, sk, 4),
                  *o = tdt_make_f32(cpu, ones, so, 4);
        tdt_check(td_float_attention_backward_key(q, k, k, o, o, 1, &r), "dk");
        tdt_expect(r, TD_F32, sk, 4, zeros, 6, 0.0f);
        td_tensor_release(r);
        tdt_check(td_float_attention_backward_value(q, k, k, o, o, 0, &r), "dv");
        tdt_expect(r, TD_F32, sk, 4, zeros, 6, 0.0f);
        td_tensor_release(r);
        td_tensor_release(q), td_tensor_release(k), td_tensor_release(o);
    }
    {   /* E = 0: q [1, 1, 2, 0], k [1, 1, 3, 0], v [1, 1, 3, 2]: scores 0 / 0 */
        const int64_t sq[] = { 1, 1, 2, 0 }, sk[] = { 1, 1, 3, 0 }, sv[] = { 1, 1, 3, 2 }, so[] = { 1, 1, 2, 2 };
        td_tensor *q = tdt_make_f32(cpu, ones, sq, 4), *k = tdt_make_f32(cpu, ones, sk, 4),
                  *v = tdt_make_f32(cpu, ones, sv, 4), *o = tdt_make_f32(cpu, ones, so, 4);
        tdt_check(td_float_attention_backward_value(q, k, v, o, o, 1, &r), "dv");
        tdt_expect(r, TD_F32, sv, 4, nans, 6, 0.0f);
        td_tensor_release(r);
        tdt_check(td_float_attention(q, k, v, 1, &r), "attention");
        tdt_expect(r, TD_F32, so, 4, nans, 4, 0.0f);
        td_tensor_release(r);
        td_tensor_release(q), td_tensor_release(k), td_tensor_release(v), td_tensor_release(o);
    }
}

/* Out of memory anywhere in forward and backward: an error, nothing leaked (TDT_TEST checks). */
static void test_allocation_failures(void **state)
{
    (void)state;
    unsigned seed = 9;
    const int64_t s[] = { 1, 2, 70, 8 };
    float *x = tdt_host_randoms(2 * 70 * 8, &seed);
    for (long n = 0; n < 200; n++) {
        td_tensor *t = tdt_make_f32(ad, x, s, 4), *out = NULL, *loss = NULL;
        tdt_check(td_require_grad(t), "require_grad");
        td_grads *grads = NULL;
        td_testing_fail_allocations_after(n);
        td_status st = td_float_attention(t, t, t, 1, &out);
        if (st == TD_OK)
            st = td_float_sum(out, &loss);
        if (st == TD_OK)
            st = td_backward(loss, &grads);
        td_testing_fail_allocations_after(-1);
        td_grads_release(grads);
        td_tensor_release(loss), td_tensor_release(out), td_tensor_release(t);
        if (st == TD_OK)
            break;
        assert_int_equal(st, TD_E_NOMEM);
    }
    free(x);
}

/* A causal head whose values hold inf at key j0 of column 1: the decomposition weighs the
 * masked keys by 0, so rows i < j0 get NaN in that column (0 * inf) and every other output
 * is finite. At L = S = 40 and 150 the kernel takes its short-row path (at 150 the first
 * 64-row block stops at key 63, before j0, so the NaN is set by hand, not by a product), at
 * 300 its blocked one (contexts over 256, docs/kernels.md): each must give that pattern. */
static void test_masked_nonfinite_values_both_paths(void **state)
{
    (void)state;
    const int64_t sizes[] = { 40, 150, 300 };
    for (size_t z = 0; z < 3; z++) {
        const int64_t n = sizes[z], E = 4, j0 = n - 3;
        unsigned seed = 5;
        float *q = tdt_host_randoms(n * E, &seed), *k = tdt_host_randoms(n * E, &seed);
        float *v = tdt_host_randoms(n * E, &seed), *o = malloc(sizeof(float) * (size_t)(n * E));
        assert_non_null(o);
        v[j0 * E + 1] = INFINITY;
        const int64_t s[] = { 1, 1, n, E };
        td_tensor *tq = tdt_make_f32(cpu, q, s, 4), *tk = tdt_make_f32(cpu, k, s, 4), *tv = tdt_make_f32(cpu, v, s, 4);
        td_tensor *out = NULL;
        tdt_check(td_float_attention(tq, tk, tv, 1, &out), "attention");
        tdt_check(td_float_into_data(out, o, n * E), "into_data");
        td_tensor_release(out), td_tensor_release(tq), td_tensor_release(tk), td_tensor_release(tv);
        int64_t bad = -1; /* the first output off the pattern (released first: no false leak) */
        for (int64_t x = 0; x < n * E && bad < 0; x++) {
            const int64_t i = x / E, c = x % E;
            const bool want_nan = c == 1 && i < j0;
            if (want_nan != (bool)isnan(o[x]) || (!want_nan && c != 1 && !isfinite(o[x])))
                bad = x;
        }
        const float got = bad >= 0 ? o[bad] : 0.0f;
        free(q), free(k), free(v), free(o);
        if (bad >= 0)
            fail_msg("L = %lld: out[%lld][%lld] = %g; want %s", (long long)n, (long long)(bad / E),
                     (long long)(bad % E), (double)got, bad % E == 1 && bad / E < j0 ? "NaN" : "a number");
    }
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &cpu, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(cpu, ad, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_gradients_vs_reference_and_decomposition),
        TDT_TEST(test_graph_keeps_no_scores),
        TDT_TEST(test_backward_edges),
        TDT_TEST(test_allocation_failures),
        TDT_TEST(test_masked_nonfinite_values_both_paths),
    };
    return cmocka_run_group_tests_name("attention", tests, setup, teardown);
}
