/* The nn composites of specs/ops/module_nn.lua (norms, embedding, attention) against direct
 * loops written here from PyTorch's definitions: they have no kernel anywhere, so the
 * generated comparisons hold one backend's composite against the CPU's composite; these
 * hold the composite against an independent reference. Also: embedding's gradient (a
 * scatter-add into the weight, repeated indices included) and the rules' error statuses. */
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

static int64_t prod(const int64_t *dims, int from, int to)
{
    int64_t n = 1;
    for (int i = from; i < to; i++)
        n *= dims[i];
    return n;
}

/* Normalizes m contiguous values with their mean and biased variance (in place is fine). */
static void normalize(const float *x, float *y, int64_t m, float eps)
{
    double mean = 0, var = 0;
    for (int64_t i = 0; i < m; i++)
        mean += x[i];
    mean /= (double)m;
    for (int64_t i = 0; i < m; i++)
        var += (x[i] - mean) * (x[i] - mean);
    var /= (double)m;
    for (int64_t i = 0; i < m; i++)
        y[i] = (float)((x[i] - mean) / sqrt(var + eps));
}

static void test_layer_norm_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 11;
    static const struct {
        int nd, nw;
        int64_t dims[4];
    } cases[] = { { 2, 1, { 3, 7 } }, { 3, 2, { 2, 3, 4 } }, { 4, 1, { 2, 2, 3, 33 } }, { 1, 1, { 5 } },
                  { 4, 3, { 2, 3, 4, 5 } } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int nd = cases[c].nd, nw = cases[c].nw;
        const int64_t *dims = cases[c].dims, n = prod(dims, 0, nd), m = prod(dims, nd - nw, nd);
        float *x = tdt_host_randoms(n, &seed), *w = tdt_host_randoms(m, &seed), *b = tdt_host_randoms(m, &seed), *y = malloc(sizeof(float) * (size_t)n);
        const float eps = 1e-5f;
        for (int64_t r = 0; r < n / m; r++) {
            normalize(x + r * m, y + r * m, m, eps);
            for (int64_t i = 0; i < m; i++)
                y[r * m + i] = y[r * m + i] * w[i] + b[i];
        }
        td_tensor *tx = tdt_make_f32(cpu, x, dims, nd), *tw = tdt_make_f32(cpu, w, dims + nd - nw, nw), *tb = tdt_make_f32(cpu, b, dims + nd - nw, nw),
                  *ty = NULL;
        tdt_check(td_float_layer_norm(tx, tw, tb, eps, &ty), "layer_norm");
        tdt_expect(ty, TD_F32, dims, nd, y, n, 1e-4f);
        td_tensor_release(tx), td_tensor_release(tw), td_tensor_release(tb), td_tensor_release(ty);
        free(x), free(w), free(b), free(y);
    }
}

/* x [N, C, S] flattened; groups of C / G channels. */
static void test_group_and_batch_norm_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 23;
    static const struct {
        int nd;
        int64_t dims[4];
        int64_t groups;
    } cases[] = { { 2, { 3, 4 }, 2 }, { 3, { 2, 6, 5 }, 3 }, { 4, { 2, 4, 3, 5 }, 1 }, { 4, { 3, 4, 2, 2 }, 4 },
                  { 3, { 4, 8, 33 }, 2 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int nd = cases[c].nd;
        const int64_t *dims = cases[c].dims, nb = dims[0], ch = dims[1], s = prod(dims, 2, nd), n = nb * ch * s;
        const int64_t g = cases[c].groups, per = ch / g * s;
        float *x = tdt_host_randoms(n, &seed), *w = tdt_host_randoms(ch, &seed), *b = tdt_host_randoms(ch, &seed), *rm = tdt_host_randoms(ch, &seed),
              *rv = tdt_host_randoms(ch, &seed);
        for (int64_t i = 0; i < ch; i++)
            rv[i] = rv[i] * rv[i] + 0.1f;
        float *yg = malloc(sizeof(float) * (size_t)n), *yi = malloc(sizeof(float) * (size_t)n),
              *yt = malloc(sizeof(float) * (size_t)n), *tmp = malloc(sizeof(float) * (size_t)n),
              *col = malloc(sizeof(float) * (size_t)(nb * s));
        const float eps = 1e-3f;
        /* group norm: each (sample, group) block is contiguous */
        for (int64_t blk = 0; blk < nb * g; blk++)
            normalize(x + blk * per, tmp + blk * per, per, eps);
        for (int64_t i = 0; i < n; i++) {
            const int64_t k = i / s % ch;
            yg[i] = tmp[i] * w[k] + b[k];
            yi[i] = (float)((x[i] - rm[k]) / sqrt((double)rv[k] + eps)) * w[k] + b[k];
        }
        /* batch norm, training: channel k gathers N * S values */
        for (int64_t k = 0; k < ch; k++) {
            for (int64_t a = 0; a < nb; a++)
                memcpy(col + a * s, x + (a * ch + k) * s, sizeof(float) * (size_t)s);
            normalize(col, col, nb * s, eps);
            for (int64_t a = 0; a < nb; a++)
                for (int64_t e = 0; e < s; e++)
                    yt[(a * ch + k) * s + e] = col[a * s + e] * w[k] + b[k];
        }
        const int64_t sc[] = { ch };
        td_tensor *tx = tdt_make_f32(cpu, x, dims, nd), *tw = tdt_make_f32(cpu, w, sc, 1), *tb = tdt_make_f32(cpu, b, sc, 1), *trm = tdt_make_f32(cpu, rm, sc, 1),
                  *trv = tdt_make_f32(cpu, rv, sc, 1), *out = NULL;
        tdt_check(td_float_group_norm(tx, g, tw, tb, eps, &out), "group_norm");
        tdt_expect(out, TD_F32, dims, nd, yg, n, 1e-4f);
        td_tensor_release(out);
        tdt_check(td_float_batch_norm_infer(tx, trm, trv, tw, tb, eps, &out), "batch_norm_infer");
        tdt_expect(out, TD_F32, dims, nd, yi, n, 1e-4f);
        td_tensor_release(out);
        tdt_check(td_float_batch_norm_train(tx, tw, tb, eps, &out), "batch_norm_train");
        tdt_expect(out, TD_F32, dims, nd, yt, n, 1e-4f);
        td_tensor *all[] = { out, tx, tw, tb, trm, trv };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
        free(x), free(w), free(b), free(rm), free(rv), free(yg), free(yi), free(yt), free(tmp), free(col);
    }
}

static void test_attention_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 37;
    /* { B, H, L, S, E, Ev, causal, mask kind: 0 none, 1 [L, S], 2 [B, 1, 1, S] } */
    static const int64_t cases[][8] = { { 1, 1, 3, 3, 4, 2, 1, 0 }, { 2, 3, 5, 7, 8, 3, 0, 1 }, { 1, 2, 6, 4, 3, 5, 1, 1 },
                                        { 2, 2, 4, 6, 16, 4, 1, 2 }, { 1, 1, 1, 9, 2, 2, 0, 2 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t B = cases[c][0], H = cases[c][1], L = cases[c][2], S = cases[c][3], E = cases[c][4],
                      Ev = cases[c][5], causal = cases[c][6], mk = cases[c][7];
        const int64_t sq[] = { B, H, L, E }, sk[] = { B, H, S, E }, sv[] = { B, H, S, Ev }, so[] = { B, H, L, Ev };
        const int64_t sm1[] = { L, S }, sm2[] = { B, 1, 1, S };
        float *q = tdt_host_randoms(B * H * L * E, &seed), *k = tdt_host_randoms(B * H * S * E, &seed), *v = tdt_host_randoms(B * H * S * Ev, &seed);
        float *m = tdt_host_randoms(mk == 1 ? L * S : B * S, &seed);
        float *o = calloc((size_t)(B * H * L * Ev), sizeof(float)), *p = malloc(sizeof(float) * (size_t)S);
        for (int64_t bh = 0; bh < B * H; bh++)
            for (int64_t i = 0; i < L; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < S; j++) {
                    double s = 0;
                    for (int64_t e = 0; e < E; e++)
                        s += (double)q[(bh * L + i) * E + e] * k[(bh * S + j) * E + e];
                    s /= sqrt((double)E);
                    if (mk == 1)
                        s += m[i * S + j];
                    else if (mk == 2)
                        s += m[(bh / H) * S + j];
                    if (causal && j > i)
                        s = -INFINITY;
                    p[j] = (float)s;
                    mx = s > mx ? s : mx;
                }
                for (int64_t j = 0; j < S; j++)
                    sum += exp(p[j] - mx);
                for (int64_t j = 0; j < S; j++)
                    for (int64_t e = 0; e < Ev; e++)
                        o[(bh * L + i) * Ev + e] += (float)(exp(p[j] - mx) / sum * v[(bh * S + j) * Ev + e]);
            }
        td_tensor *tq = tdt_make_f32(cpu, q, sq, 4), *tk = tdt_make_f32(cpu, k, sk, 4), *tv = tdt_make_f32(cpu, v, sv, 4), *tm = NULL, *out = NULL;
        if (mk == 0) {
            tdt_check(td_float_attention(tq, tk, tv, causal, &out), "attention");
        } else {
            tm = mk == 1 ? tdt_make_f32(cpu, m, sm1, 2) : tdt_make_f32(cpu, m, sm2, 4);
            tdt_check(td_float_attention_masked(tq, tk, tv, tm, causal, &out), "attention_masked");
        }
        tdt_expect(out, TD_F32, so, 4, o, B * H * L * Ev, 1e-4f);
        td_tensor *all[] = { tq, tk, tv, tm, out };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
        free(q), free(k), free(v), free(m), free(o), free(p);
    }
}

/* d sum(embedding(weight, idx) * g) / d weight: row r collects g's rows where idx == r. */
static void test_embedding_gradient(void **state)
{
    (void)state;
    static const float w[] = { 0, 1, 10, 11, 20, 21, 30, 31 };         /* [4, 2] */
    static const int32_t idx[] = { 2, 0, 2, 2, 1, 0 };                  /* [2, 3]; row 3 unused */
    static const float g[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }; /* [2, 3, 2] */
    /* row 0: positions 1 and 5: {3 + 11, 4 + 12}; row 1: position 4: {9, 10};
     * row 2: positions 0, 2, 3: {1 + 5 + 7, 2 + 6 + 8}; row 3: none. */
    static const float want[] = { 14, 16, 9, 10, 13, 16, 0, 0 };
    static const float fwd[] = { 20, 21, 0, 1, 20, 21, 20, 21, 10, 11, 0, 1 };
    const int64_t sw[] = { 4, 2 }, si[] = { 2, 3 }, sg[] = { 2, 3, 2 };
    td_tensor *tw = NULL, *ti = NULL, *tg = NULL, *e = NULL, *eg = NULL, *s = NULL, *dw = NULL;
    tdt_check(td_float_from_data(ad, w, sw, 2, &tw), "weight");
    tdt_check(td_int_from_data(ad, idx, si, 2, &ti), "indices");
    tdt_check(td_float_from_data(ad, g, sg, 3, &tg), "g");
    tdt_check(td_require_grad(tw), "require_grad");
    tdt_check(td_float_embedding(tw, ti, &e), "embedding");
    tdt_expect(e, TD_F32, sg, 3, fwd, 12, 0.0f);
    tdt_check(td_float_mul(e, tg, &eg), "mul");
    tdt_check(td_float_sum(eg, &s), "sum");
    td_grads *grads = NULL;
    tdt_check(td_backward(s, &grads), "backward");
    tdt_check(td_grads_get(grads, tw, &dw), "grads_get");
    tdt_expect(dw, TD_F32, sw, 2, want, 8, 0.0f);
    td_grads_release(grads);
    td_tensor *all[] = { tw, ti, tg, e, eg, s, dw };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

/* Bad input fails in the rule, with the op's name (no piece runs). */
static void test_errors(void **state)
{
    (void)state;
    static const float z[64] = { 0 };
    const int64_t s24[] = { 2, 4 }, s4[] = { 4 }, s3[] = { 3 }, s13[] = { 1, 3 }, s1124[] = { 1, 1, 2, 4 },
                  s1134[] = { 1, 1, 3, 4 }, s33[] = { 3, 3 }, s124[] = { 1, 2, 4 }, s2[] = { 2 };
    td_tensor *x = tdt_make_f32(cpu, z, s24, 2), *w4 = tdt_make_f32(cpu, z, s4, 1), *w3 = tdt_make_f32(cpu, z, s3, 1), *x13 = tdt_make_f32(cpu, z, s13, 2),
              *q = tdt_make_f32(cpu, z, s1124, 4), *k3 = tdt_make_f32(cpu, z, s1134, 4), *m33 = tdt_make_f32(cpu, z, s33, 2), *q3 = tdt_make_f32(cpu, z, s124, 3),
              *w2 = tdt_make_f32(cpu, z, s2, 1), *out = NULL;
    tdt_expect_error(td_float_layer_norm(x, w4, w3, 1e-5f, &out), TD_E_SHAPE, "float_layer_norm");
    tdt_expect_error(td_float_layer_norm(x, w3, w3, 1e-5f, &out), TD_E_SHAPE, "float_layer_norm");
    tdt_expect_error(td_float_group_norm(x, 3, w4, w4, 1e-5f, &out), TD_E_SHAPE, "float_group_norm");
    tdt_expect_error(td_float_group_norm(x, 0, w4, w4, 1e-5f, &out), TD_E_INVALID, "float_group_norm");
    tdt_expect_error(td_float_group_norm(x, 2, w3, w4, 1e-5f, &out), TD_E_SHAPE, "float_group_norm");
    tdt_expect_error(td_float_batch_norm_infer(x, w4, w4, w4, w3, 1e-5f, &out), TD_E_SHAPE, "float_batch_norm_infer");
    tdt_expect_error(td_float_batch_norm_infer(w4, w4, w4, w4, w4, 1e-5f, &out), TD_E_SHAPE, "float_batch_norm_infer");
    tdt_expect_error(td_float_batch_norm_train(x13, w3, w3, 1e-5f, &out), TD_E_SHAPE, "float_batch_norm_train");
    tdt_expect_error(td_float_attention(q, q, q, 2, &out), TD_E_INVALID, "float_attention");
    tdt_expect_error(td_float_attention(q3, q3, q3, 0, &out), TD_E_SHAPE, "float_attention");
    tdt_expect_error(td_float_attention(q, k3, q, 0, &out), TD_E_SHAPE, "float_attention"); /* S 3 vs 2 */
    tdt_expect_error(td_float_attention_masked(q, q, q, m33, 0, &out), TD_E_SHAPE, "float_attention_masked");
    assert_null(out);
    /* An index outside [0, V): TD_E_RANGE, from the piece that reads it. */
    static const int32_t bad[] = { 0, 4 };
    td_tensor *ti = NULL, *tw = NULL;
    const int64_t sv[] = { 4, 2 };
    tdt_check(td_int_from_data(cpu, bad, s2, 1, &ti), "indices");
    tw = tdt_make_f32(cpu, z, sv, 2);
    tdt_expect_error(td_float_embedding(w4, ti, &out), TD_E_SHAPE, "float_embedding"); /* a 1-d table */
    assert_int_equal(td_float_embedding(tw, ti, &out), TD_E_RANGE);
    assert_null(out);
    td_tensor *all[] = { x, w4, w3, x13, q, k3, m33, q3, w2, ti, tw };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
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
        TDT_TEST(test_layer_norm_vs_loops),     TDT_TEST(test_group_and_batch_norm_vs_loops),
        TDT_TEST(test_attention_vs_loops),      TDT_TEST(test_embedding_gradient),
        TDT_TEST(test_errors),
    };
    return cmocka_run_group_tests_name("module_nn", tests, setup, teardown);
}
