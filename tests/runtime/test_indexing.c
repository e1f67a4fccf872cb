/* Indexing and layout ops on the backend IDX_BACKEND (the CPU here; tests/backends/vulkan/
 * includes this file for Vulkan) (issue 10): index values out of range are TD_E_RANGE with
 * no result and nothing leaked (also under autodiff); shape errors of the rules; and large
 * tensors (above the threading threshold) against naive loops written here (exact: these
 * ops only move values, and cross does the same three f32 products per element); 0-d
 * tensors taking dim 0 / -1 as PyTorch does (errors and gradients; values are in the
 * specs' examples). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

#ifndef IDX_BACKEND
#define IDX_BACKEND TD_BACKEND_CPU
#define IDX_GROUP "indexing"
#endif

static td_device *dev;    /* IDX_BACKEND:0 */
static td_device *ad_dev; /* autodiff(dev, NONE) */

static const int64_t s23[] = { 2, 3 };
static const float f23[] = { 1, 2, 3, 4, 5, 6 };
static const int32_t i23[] = { 1, 2, 3, 4, 5, 6 };
static const bool b23[] = { true, false, true, false, true, false };

/* Indices {0, bad} of shape [2, 1] (gather, scatter_add) or [2] (select, select_add), dim 1
 * of size 3: every op refuses them. */
static void expect_bad_index(int32_t bad)
{
    const int64_t s21[] = { 2, 1 }, s2[] = { 2 }, s22[] = { 2, 2 };
    const int32_t iv[] = { 0, bad };
    td_tensor *fa = tdt_make(dev, TD_F32, f23, s23, 2), *ia = tdt_make(dev, TD_I32, i23, s23, 2);
    td_tensor *ba = tdt_make(dev, TD_BOOL, b23, s23, 2);
    td_tensor *g = tdt_make(dev, TD_I32, iv, s21, 2), *sel = tdt_make(dev, TD_I32, iv, s2, 1);
    td_tensor *fv = tdt_make(dev, TD_F32, f23, s21, 2), *iv2 = tdt_make(dev, TD_I32, i23, s21, 2);
    td_tensor *fsv = tdt_make(dev, TD_F32, f23, s22, 2), *isv = tdt_make(dev, TD_I32, i23, s22, 2);
    td_tensor *out = (td_tensor *)&out;
    tdt_expect_error(td_float_gather(fa, 1, g, &out), TD_E_RANGE, "float_gather");
    assert_null(out);
    tdt_expect_error(td_int_gather(ia, 1, g, &out), TD_E_RANGE, "int_gather");
    assert_null(out);
    tdt_expect_error(td_bool_gather(ba, 1, g, &out), TD_E_RANGE, "bool_gather");
    assert_null(out);
    tdt_expect_error(td_float_scatter_add(fa, 1, g, fv, &out), TD_E_RANGE, "float_scatter_add");
    assert_null(out);
    tdt_expect_error(td_int_scatter_add(ia, 1, g, iv2, &out), TD_E_RANGE, "int_scatter_add");
    assert_null(out);
    tdt_expect_error(td_float_scatter_assign(fa, 1, g, fv, &out), TD_E_RANGE, "float_scatter_assign");
    assert_null(out);
    tdt_expect_error(td_int_scatter_assign(ia, 1, g, iv2, &out), TD_E_RANGE, "int_scatter_assign");
    assert_null(out);
    tdt_expect_error(td_int_one_hot(sel, 3, &out), TD_E_RANGE, "int_one_hot");
    assert_null(out);
    tdt_expect_error(td_float_select(fa, 1, sel, &out), TD_E_RANGE, "float_select");
    assert_null(out);
    tdt_expect_error(td_int_select(ia, -1, sel, &out), TD_E_RANGE, "int_select");
    assert_null(out);
    tdt_expect_error(td_bool_select(ba, 1, sel, &out), TD_E_RANGE, "bool_select");
    assert_null(out);
    tdt_expect_error(td_float_select_add(fa, 1, sel, fsv, &out), TD_E_RANGE, "float_select_add");
    assert_null(out);
    tdt_expect_error(td_int_select_add(ia, 1, sel, isv, &out), TD_E_RANGE, "int_select_add");
    assert_null(out);
    td_tensor *all[] = { fa, ia, ba, g, sel, fv, iv2, fsv, isv };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

static void test_index_too_large(void **state)
{
    (void)state;
    expect_bad_index(3);
    expect_bad_index(INT32_MAX);
}

static void test_index_negative(void **state)
{
    (void)state;
    expect_bad_index(-1);
    expect_bad_index(INT32_MIN);
}

/* Under autodiff the tracked input's error leaves no node and no result behind. */
static void test_index_error_under_autodiff(void **state)
{
    (void)state;
    const int64_t s21[] = { 2, 1 };
    const int32_t iv[] = { 0, 5 };
    td_tensor *a = tdt_make(ad_dev, TD_F32, f23, s23, 2), *g = tdt_make(ad_dev, TD_I32, iv, s21, 2);
    td_tensor *out = NULL;
    tdt_expect_error(td_float_gather(a, 1, g, &out), TD_E_RANGE, "float_gather");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(g);
}

static void test_rule_errors(void **state)
{
    (void)state;
    const int64_t s3[] = { 3 }, s4[] = { 4 }, s32[] = { 3, 2 };
    const int32_t zeros[6] = { 0 };
    td_tensor *a = tdt_make(dev, TD_F32, f23, s23, 2), *v = tdt_make(dev, TD_F32, f23, s3, 1);
    td_tensor *w = tdt_make(dev, TD_F32, f23, s4, 1), *i1 = tdt_make(dev, TD_I32, zeros, s3, 1);
    td_tensor *i32 = tdt_make(dev, TD_I32, zeros, s32, 2);
    td_tensor *out = NULL;
    tdt_expect_error(td_float_gather(a, 0, i1, &out), TD_E_SHAPE, "float_gather");      /* ndim */
    tdt_expect_error(td_float_gather(a, 1, i32, &out), TD_E_SHAPE, "float_gather");     /* 3 rows > 2 */
    tdt_expect_error(td_float_gather(a, 2, i32, &out), TD_E_RANGE, "float_gather");
    tdt_expect_error(td_float_select(a, 0, i32, &out), TD_E_SHAPE, "float_select");     /* 2-d indices */
    tdt_expect_error(td_float_narrow(a, 1, 2, 2, &out), TD_E_RANGE, "float_narrow");
    tdt_expect_error(td_float_narrow(a, 1, -4, 1, &out), TD_E_RANGE, "float_narrow");
    tdt_expect_error(td_float_transpose(v, &out), TD_E_SHAPE, "float_transpose");
    const int64_t dup[] = { 1, -1 }, odd[] = { 1 }, neg[] = { -1, 0 };
    tdt_expect_error(td_float_flip(a, dup, 2, &out), TD_E_INVALID, "float_flip");
    tdt_expect_error(td_float_pad(a, odd, 1, 0.0f, &out), TD_E_INVALID, "float_pad");
    tdt_expect_error(td_float_pad(a, neg, 2, 0.0f, &out), TD_E_INVALID, "float_pad");
    tdt_expect_error(td_float_unfold(a, 1, 2, 0, &out), TD_E_INVALID, "float_unfold");
    tdt_expect_error(td_float_unfold(a, 1, 4, 1, &out), TD_E_RANGE, "float_unfold");
    tdt_expect_error(td_float_repeat_dim(a, 0, -1, &out), TD_E_INVALID, "float_repeat_dim");
    tdt_expect_error(td_float_cross(a, a, 0, &out), TD_E_SHAPE, "float_cross");
    tdt_expect_error(td_float_cross(v, w, 0, &out), TD_E_SHAPE, "float_cross");
    const td_tensor *xs[] = { a, v };
    tdt_expect_error(td_float_stack(xs, 2, 0, &out), TD_E_SHAPE, "float_stack");
    tdt_expect_error(td_float_stack(xs, 1, 3, &out), TD_E_RANGE, "float_stack");
    const int64_t one[] = { 4 };
    tdt_expect_error(td_bool_tril_mask(dev, one, 1, 0, &out), TD_E_SHAPE, "bool_tril_mask");
    assert_null(out);
    td_tensor *all[] = { a, v, w, i1, i32 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

/* [3, 40000, 3] floats: gather along dim 1, select along dim 1, cross along dim 2, unfold
 * along dim 1, against loops here. */
static void test_large(void **state)
{
    (void)state;
    enum { A = 3, B = 40000, C = 3 };
    const int64_t shape[] = { A, B, C };
    const int64_t n = (int64_t)A * B * C;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    int32_t *gi = malloc(sizeof(int32_t) * (size_t)n), *si = malloc(sizeof(int32_t) * B);
    float *want = malloc(sizeof(float) * (size_t)n * 2);
    assert_non_null(x);
    assert_non_null(y);
    assert_non_null(gi);
    assert_non_null(si);
    assert_non_null(want);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)((i * 7919) % 1013) * 0.25f - 100.0f;
        y[i] = (float)((i * 104729) % 997) * 0.5f - 200.0f;
        gi[i] = (int32_t)((i * 31 + 7) % B);
    }
    for (int64_t j = 0; j < B; j++)
        si[j] = (int32_t)((j * 13 + 5) % B);
    td_tensor *tx = tdt_make(dev, TD_F32, x, shape, 3), *ty = tdt_make(dev, TD_F32, y, shape, 3);
    td_tensor *tg = tdt_make(dev, TD_I32, gi, shape, 3);
    const int64_t sb[] = { B };
    td_tensor *ts = tdt_make(dev, TD_I32, si, sb, 1);
    td_tensor *out = NULL;

    tdt_check(td_float_gather(tx, 1, tg, &out), "float_gather");
    for (int64_t i = 0; i < n; i++) {
        const int64_t a = i / ((int64_t)B * C), c = i % C;
        want[i] = x[(a * B + gi[i]) * C + c];
    }
    tdt_expect(out, TD_F32, shape, 3, want, n, 0.0f);
    td_tensor_release(out);

    tdt_check(td_float_select(tx, -2, ts, &out), "float_select");
    for (int64_t i = 0; i < n; i++) {
        const int64_t a = i / ((int64_t)B * C), b = (i / C) % B, c = i % C;
        want[i] = x[(a * B + si[b]) * C + c];
    }
    tdt_expect(out, TD_F32, shape, 3, want, n, 0.0f);
    td_tensor_release(out);

    tdt_check(td_float_cross(tx, ty, 2, &out), "float_cross");
    for (int64_t p = 0; p < n / 3; p++) {
        const float *u = x + 3 * p, *v = y + 3 * p;
        want[3 * p] = u[1] * v[2] - u[2] * v[1];
        want[3 * p + 1] = u[2] * v[0] - u[0] * v[2];
        want[3 * p + 2] = u[0] * v[1] - u[1] * v[0];
    }
    tdt_expect(out, TD_F32, shape, 3, want, n, 0.0f);
    td_tensor_release(out);

    /* windows of 2, step 3 along dim 1: (40000 - 2) / 3 + 1 = 13333 */
    const int64_t nw = (B - 2) / 3 + 1, ushape[] = { A, nw, C, 2 };
    tdt_check(td_float_unfold(tx, 1, 2, 3, &out), "float_unfold");
    for (int64_t a = 0; a < A; a++)
        for (int64_t w = 0; w < nw; w++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t k = 0; k < 2; k++)
                    want[((a * nw + w) * C + c) * 2 + k] = x[(a * B + w * 3 + k) * C + c];
    tdt_expect(out, TD_F32, ushape, 4, want, A * nw * C * 2, 0.0f);
    td_tensor_release(out);

    td_tensor_release(tx);
    td_tensor_release(ty);
    td_tensor_release(tg);
    td_tensor_release(ts);
    free(x);
    free(y);
    free(gi);
    free(si);
    free(want);
}

/* scatter_assign with repeated indices, as a fuzzing campaign met it (tests/fuzz/found_surface/
 * cmp-scatter-assign-of-argmax-index): a [6, 6, 6, 6] copy of a with value written along dim
 * -3 (1) at indices of shape [6, 6, 1, 6] that repeat within a line; the spec's rule (the last
 * in row-major order of indices wins) computed by a loop here. Exact on every backend. */
static void test_scatter_assign_repeated(void **state)
{
    (void)state;
    enum { N = 6, NA = N * N * N * N, NI = N * N * N };
    const int64_t as[] = { N, N, N, N }, is[] = { N, N, 1, N };
    float a[NA], v[NA], want[NA];
    int32_t ix[NI], iw[NA], want_i[NA];
    for (int i = 0; i < NA; i++) {
        a[i] = (float)(i % 97) * 0.5f + 100.0f;
        v[i] = (float)(i % 89) * -0.25f - 1.0f;
        iw[i] = i % 1000;
    }
    for (int i = 0; i < NI; i++)
        ix[i] = (int32_t)((i * 7 + i / 5) % 3); /* only 0..2: every line repeats */
    memcpy(want, a, sizeof a);
    memcpy(want_i, iw, sizeof iw);
    for (int i0 = 0; i0 < N; i0++)
        for (int j = 0; j < N; j++) /* row-major order of indices: j before i3 */
            for (int i3 = 0; i3 < N; i3++) {
                const int src = ((i0 * N + j) * N + 0) * N + i3, k = ix[(i0 * N + j) * N + i3];
                want[((i0 * N + k) * N + 0) * N + i3] = v[src];
                want_i[((i0 * N + k) * N + 0) * N + i3] = iw[src];
            }
    td_tensor *ta = tdt_make(dev, TD_F32, a, as, 4), *tv = tdt_make(dev, TD_F32, v, as, 4);
    td_tensor *ti = tdt_make(dev, TD_I32, ix, is, 4), *tw = tdt_make(dev, TD_I32, iw, as, 4);
    td_tensor *out = NULL;
    tdt_check(td_float_scatter_assign(ta, -3, ti, tv, &out), "float_scatter_assign");
    tdt_expect(out, TD_F32, as, 4, want, NA, 0.0f);
    td_tensor_release(out);
    tdt_check(td_int_scatter_assign(tw, -3, ti, tw, &out), "int_scatter_assign");
    int32_t got[NA];
    tdt_check(td_int_into_data(out, got, NA), "int_into_data");
    assert_memory_equal(got, want_i, sizeof got);
    td_tensor_release(out);
    td_tensor_release(ta);
    td_tensor_release(tv);
    td_tensor_release(ti);
    td_tensor_release(tw);
}

/* d sum(unfold(a, 1, size, step)) / da counts the windows holding each element: along
 * dim 1 of [2, 5, 3], windows of 2 with step 2 hold positions 0-3 once and 4 never;
 * windows of 3 with step 1 hold positions 0..4 1, 2, 3, 2, 1 times. */
static void expect_unfold_counts(int64_t size, int64_t step, const float counts[5])
{
    const int64_t shape[] = { 2, 5, 3 };
    float x[30], want[30];
    for (int i = 0; i < 30; i++) {
        x[i] = (float)i * 0.5f - 3.0f;
        want[i] = counts[(i / 3) % 5];
    }
    td_tensor *a = tdt_make(ad_dev, TD_F32, x, shape, 3), *u = NULL, *l = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(td_require_grad(a), "require_grad");
    tdt_check(td_float_unfold(a, -2, size, step, &u), "float_unfold");
    tdt_check(td_float_sum(u, &l), "float_sum");
    tdt_check(td_backward(l, &grads), "backward");
    tdt_check(td_grads_get(grads, a, &g), "grads_get");
    tdt_expect(g, TD_F32, shape, 3, want, 30, 0.0f);
    td_tensor_release(g);
    td_grads_release(grads);
    td_tensor_release(l);
    td_tensor_release(u);
    td_tensor_release(a);
}

static void test_unfold_gradient(void **state)
{
    (void)state;
    const float gaps[5] = { 1, 1, 1, 1, 0 }, overlaps[5] = { 1, 2, 3, 2, 1 };
    expect_unfold_counts(2, 2, gaps);
    expect_unfold_counts(3, 1, overlaps);
}

/* narrow with a negative start, and select with repeated indices, under autodiff. */
static void test_narrow_select_gradients(void **state)
{
    (void)state;
    const int64_t s4[] = { 4 }, s3[] = { 3 };
    const float x[] = { 1, 2, 3, 4 };
    const int32_t idx[] = { 3, 0, 3 };
    td_tensor *a = tdt_make(ad_dev, TD_F32, x, s4, 1), *i = tdt_make(ad_dev, TD_I32, idx, s3, 1);
    td_tensor *n = NULL, *s = NULL, *ln = NULL, *ls = NULL, *l = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(td_require_grad(a), "require_grad");
    tdt_check(td_float_narrow(a, 0, -3, 2, &n), "float_narrow"); /* elements 1, 2 */
    tdt_check(td_float_select(a, 0, i, &s), "float_select");      /* 3, 0, 3 */
    tdt_check(td_float_sum(n, &ln), "sum");
    tdt_check(td_float_sum(s, &ls), "sum");
    tdt_check(td_float_add(ln, ls, &l), "add");
    tdt_check(td_backward(l, &grads), "backward");
    tdt_check(td_grads_get(grads, a, &g), "grads_get");
    const float want[] = { 1, 1, 1, 2 };
    tdt_expect(g, TD_F32, s4, 1, want, 4, 0.0f);
    td_tensor *all[] = { g, l, ls, ln, s, n, i, a };
    td_grads_release(grads);
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        td_tensor_release(all[k]);
}

/* ---- 0-d tensors: dim 0 and -1 as one dim of size 1 (PyTorch's ensure_nonempty_dim) ---- */

/* The errors PyTorch gives too: a dim past -1..0, an index past 0, indices of 2 dims, more
 * than one index for index_select, a window longer than 1, a 0-d value for a 2-d a. */
static void test_zero_d_errors(void **state)
{
    (void)state;
    static const float v = 2.5f;
    static const int32_t zero = 0, one = 1, zz[] = { 0, 0 };
    static const int64_t s2[] = { 2 }, s11[] = { 1, 1 };
    td_tensor *a = tdt_make(dev, TD_F32, &v, NULL, 0), *i0 = tdt_make(dev, TD_I32, &zero, NULL, 0);
    td_tensor *i1 = tdt_make(dev, TD_I32, &one, NULL, 0), *i11 = tdt_make(dev, TD_I32, zz, s11, 2);
    td_tensor *i2 = tdt_make(dev, TD_I32, zz, s2, 1), *a23 = tdt_make(dev, TD_F32, f23, s23, 2);
    td_tensor *out = (td_tensor *)&out;
    tdt_expect_error(td_float_gather(a, 1, i0, &out), TD_E_RANGE, "float_gather"); /* dim */
    assert_null(out);
    tdt_expect_error(td_float_gather(a, -2, i0, &out), TD_E_RANGE, "float_gather");
    tdt_expect_error(td_float_gather(a, 0, i1, &out), TD_E_RANGE, "float_gather");  /* index 1 of size 1 */
    assert_null(out);
    tdt_expect_error(td_float_gather(a, 0, i11, &out), TD_E_SHAPE, "float_gather"); /* 2 dims against 1 */
    tdt_expect_error(td_float_scatter_add(a, 0, i1, a, &out), TD_E_RANGE, "float_scatter_add");
    tdt_expect_error(td_float_select(a, 0, i2, &out), TD_E_SHAPE, "float_select"); /* 2 indices */
    tdt_expect_error(td_float_select(a, 0, i1, &out), TD_E_RANGE, "float_select");
    tdt_expect_error(td_float_select_add(a23, 0, i0, a, &out), TD_E_SHAPE, "float_select_add");
    tdt_expect_error(td_float_unfold(a, 0, 2, 1, &out), TD_E_RANGE, "float_unfold");
    tdt_expect_error(td_float_repeat_dim(a, 1, 2, &out), TD_E_RANGE, "float_repeat_dim");
    assert_null(out);
    td_tensor *all[] = { a, i0, i1, i11, i2, a23 };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        td_tensor_release(all[k]);
}

static td_tensor *sum_into(td_tensor *acc, td_tensor *y)
{
    td_tensor *s = NULL, *r = NULL;
    tdt_check(td_float_sum(y, &s), "float_sum");
    td_tensor_release(y);
    if (acc == NULL)
        return s;
    tdt_check(td_float_add(acc, s, &r), "float_add");
    td_tensor_release(acc);
    td_tensor_release(s);
    return r;
}

/* d/da of sum(gather(a, 0, [0, 0, 0])) + select(a, -1, 0) + sum(repeat_dim(a, 0, 4)) +
 * sum(unfold(a, 0, 1, 1)) + scatter_add(a, 0, [0, 0], v) + select_add(a, 0, [0], w) for a
 * 0-d a: 3 + 1 + 4 + 1 + 1 + 1 = 11; v gets [1, 1] and w (0-d) 1. */
static void test_zero_d_gradients(void **state)
{
    (void)state;
    static const float av = 2.5f, vv[] = { 1, 2 }, wv = -3.0f;
    static const int32_t zero = 0, z3[] = { 0, 0, 0 };
    static const int64_t s1[] = { 1 }, s2[] = { 2 }, s3[] = { 3 };
    td_tensor *a = tdt_make(ad_dev, TD_F32, &av, NULL, 0), *v = tdt_make(ad_dev, TD_F32, vv, s2, 1);
    td_tensor *w = tdt_make(ad_dev, TD_F32, &wv, NULL, 0);
    td_tensor *i0 = tdt_make(ad_dev, TD_I32, &zero, NULL, 0), *i1 = tdt_make(ad_dev, TD_I32, z3, s1, 1);
    td_tensor *i2 = tdt_make(ad_dev, TD_I32, z3, s2, 1), *i3 = tdt_make(ad_dev, TD_I32, z3, s3, 1);
    tdt_check(td_require_grad(a), "require_grad");
    tdt_check(td_require_grad(v), "require_grad");
    tdt_check(td_require_grad(w), "require_grad");
    td_tensor *y = NULL, *l = NULL;
    tdt_check(td_float_gather(a, 0, i3, &y), "float_gather");
    l = sum_into(l, y);
    tdt_check(td_float_select(a, -1, i0, &y), "float_select");
    l = sum_into(l, y);
    tdt_check(td_float_repeat_dim(a, 0, 4, &y), "float_repeat_dim");
    l = sum_into(l, y);
    tdt_check(td_float_unfold(a, 0, 1, 1, &y), "float_unfold");
    l = sum_into(l, y);
    tdt_check(td_float_scatter_add(a, 0, i2, v, &y), "float_scatter_add");
    l = sum_into(l, y);
    tdt_check(td_float_select_add(a, 0, i1, w, &y), "float_select_add");
    l = sum_into(l, y);
    /* value: 2.5 * (3 + 1 + 4 + 1) + (2.5 + 3) + (2.5 - 3) = 27.5 */
    static const float want_l = 27.5f;
    tdt_expect(l, TD_F32, NULL, 0, &want_l, 1, 1e-5f);
    td_grads *grads = NULL;
    tdt_check(td_backward(l, &grads), "backward");
    td_tensor *ga = NULL, *gv = NULL, *gw = NULL;
    tdt_check(td_grads_get(grads, a, &ga), "grads_get");
    tdt_check(td_grads_get(grads, v, &gv), "grads_get");
    tdt_check(td_grads_get(grads, w, &gw), "grads_get");
    static const float want_a = 11.0f, want_v[] = { 1, 1 }, want_w = 1.0f;
    tdt_expect(ga, TD_F32, NULL, 0, &want_a, 1, 1e-5f);
    tdt_expect(gv, TD_F32, s2, 1, want_v, 2, 1e-5f);
    tdt_expect(gw, TD_F32, NULL, 0, &want_w, 1, 1e-5f);
    td_grads_release(grads);
    td_tensor *all[] = { ga, gv, gw, l, a, v, w, i0, i1, i2, i3 };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        td_tensor_release(all[k]);
}

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(IDX_BACKEND, &dev, &ad_dev, NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, NULL);
}

/* Index values are checked whatever the result's size: a zero-width tensor makes every
 * result below empty (no kernel runs for it), and the indices are still out of range.
 * Also on the composites (embedding, cross_entropy on Vulkan) and under autodiff. */
static void expect_range(td_status st, const char *op, td_tensor **out)
{
    tdt_expect_error(st, TD_E_RANGE, op);
    assert_null(*out);
    assert_non_null(strstr(td_last_error(), "is out of range"));
}

static void check_empty_results(td_device *d)
{
    const int64_t s50[] = { 5, 0 }, s30[] = { 3, 0 }, s1[] = { 1 }, s2[] = { 2 }, s12[] = { 1, 2 };
    const int64_t s32[] = { 3, 2 }, s12v[] = { 1, 2 };
    const int32_t seven[] = { 7 }, two_bad[] = { 0, 4 };
    const float fv[6] = { 1, 2, 3, 4, 5, 6 };
    const int32_t iv[6] = { 1, 2, 3, 4, 5, 6 };
    td_tensor *w = tdt_make(d, TD_F32, NULL, s50, 2), *iw = tdt_make(d, TD_I32, NULL, s50, 2);
    td_tensor *bw = tdt_make(d, TD_BOOL, NULL, s50, 2);
    td_tensor *a = tdt_make(d, TD_F32, NULL, s30, 2), *ia = tdt_make(d, TD_I32, NULL, s30, 2);
    td_tensor *i7 = tdt_make(d, TD_I32, seven, s1, 1), *i2 = tdt_make(d, TD_I32, two_bad, s2, 1);
    td_tensor *i12 = tdt_make(d, TD_I32, two_bad, s12, 2);
    td_tensor *v32 = tdt_make(d, TD_F32, fv, s32, 2), *iv32 = tdt_make(d, TD_I32, iv, s32, 2);
    td_tensor *v12 = tdt_make(d, TD_F32, fv, s12v, 2), *iv12 = tdt_make(d, TD_I32, iv, s12v, 2);
    td_tensor *out = (td_tensor *)&out;
    /* select along dim 0 of size 5: index 7; the result [1, 0] is empty */
    expect_range(td_float_select(w, 0, i7, &out), "float_select", &out);
    expect_range(td_int_select(iw, 0, i7, &out), "int_select", &out);
    expect_range(td_bool_select(bw, 0, i7, &out), "bool_select", &out);
    assert_non_null(strstr(td_last_error(), "index 7 (element 0 of indices) is out of range for dim 0 of size 5"));
    expect_range(td_float_embedding(w, i7, &out), "float_embedding", &out);
    /* dim 1 has size 0: every index is out of range; results [3, 0] */
    expect_range(td_float_select_add(a, 1, i2, v32, &out), "float_select_add", &out);
    expect_range(td_int_select_add(ia, 1, i2, iv32, &out), "int_select_add", &out);
    expect_range(td_float_select_assign(a, 1, i2, v32, &out), "float_select_assign", &out);
    expect_range(td_int_select_assign(ia, 1, i2, iv32, &out), "int_select_assign", &out);
    expect_range(td_float_scatter_add(a, 1, i12, v12, &out), "float_scatter_add", &out);
    expect_range(td_int_scatter_add(ia, 1, i12, iv12, &out), "int_scatter_add", &out);
    expect_range(td_float_scatter_assign(a, 1, i12, v12, &out), "float_scatter_assign", &out);
    expect_range(td_int_scatter_assign(ia, 1, i12, iv12, &out), "int_scatter_assign", &out);
    td_tensor *all[] = { w, iw, bw, a, ia, i7, i2, i12, v32, iv32, v12, iv12 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

static void test_index_checked_for_empty_results(void **state)
{
    (void)state;
    check_empty_results(dev);
    check_empty_results(ad_dev);
}

/* cross_entropy's targets on every backend (Vulkan runs it as a composite, which read
 * them only through a comparison) and float_one_hot, checked by the entry. */
static void test_targets_checked_on_every_path(void **state)
{
    (void)state;
    const float lv[6] = { 0.5f, 1, 2, -1, 0, 3 };
    const int32_t tv[2] = { 1, 3 };
    const int64_t ls[] = { 2, 3 }, ts[] = { 2 };
    td_device *devs[] = { dev, ad_dev };
    for (int k = 0; k < 2; k++) {
        td_tensor *logits = tdt_make(devs[k], TD_F32, lv, ls, 2), *t = tdt_make(devs[k], TD_I32, tv, ts, 1);
        td_tensor *out = (td_tensor *)&out;
        expect_range(td_float_cross_entropy(logits, t, &out), "float_cross_entropy", &out);
        assert_non_null(strstr(td_last_error(), "index 3 (element 1 of targets) is out of range for dim 1 of size 3"));
        expect_range(td_float_one_hot(t, 3, &out), "float_one_hot", &out);
        assert_non_null(strstr(td_last_error(), "is out of range [0, num_classes = 3)"));
        td_tensor_release(logits);
        td_tensor_release(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_index_too_large),
        TDT_TEST(test_index_negative),
        TDT_TEST(test_index_error_under_autodiff),
        TDT_TEST(test_index_checked_for_empty_results),
        TDT_TEST(test_targets_checked_on_every_path),
        TDT_TEST(test_rule_errors),
        TDT_TEST(test_large),
        TDT_TEST(test_scatter_assign_repeated),
        TDT_TEST(test_unfold_gradient),
        TDT_TEST(test_narrow_select_gradients),
        TDT_TEST(test_zero_d_errors),
        TDT_TEST(test_zero_d_gradients),
    };
    return cmocka_run_group_tests_name(IDX_GROUP, tests, group_setup, group_teardown);
}
