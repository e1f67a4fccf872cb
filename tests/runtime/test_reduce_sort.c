/* The reduce / cumulative / sort group (specs/ops/reduce_sort.lua) beyond the generated
 * tests: gradients where finite differences cannot look (zeros in prod / cumprod, ties in
 * max / cummax, the routing of sort / topk), all computed by hand in the comments; long
 * and threaded sorts checked for order and stability; the rules' errors. */
#include <math.h>
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

static td_device *dev;    /* cpu:0 */
static td_device *ad_dev; /* autodiff(cpu:0, NONE) */
static td_device *ad_bal; /* autodiff(cpu:0, BALANCED) */

typedef td_status (*unary_fn)(const td_tensor *a, int64_t attr0, int64_t attr1, td_tensor **out);

/* grad of sum(op(a) * seed) with respect to a, on autodiff device d, compared with want. */
static void expect_grad(td_device *d, unary_fn op, int64_t attr0, int64_t attr1, const float *a_data,
                        const int64_t *shape, int ndim, const float *seed_data, const int64_t *out_shape,
                        int out_ndim, const float *want)
{
    td_tensor *a = tdt_make(d, TD_F32, a_data, shape, ndim);
    assert_non_null(a);
    tdt_check(td_require_grad(a), "require_grad");
    td_tensor *y = NULL, *seed = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(op(a, attr0, attr1, &y), "op");
    seed = tdt_make(dev, TD_F32, seed_data, out_shape, out_ndim);
    assert_non_null(seed);
    tdt_check(td_backward_seeded(y, seed, &grads), "backward");
    tdt_check(td_grads_get(grads, a, &g), "grads_get");
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    tdt_expect(g, TD_F32, shape, ndim, want, n, 1e-6f);
    td_tensor_release(g);
    td_grads_release(grads);
    td_tensor_release(seed);
    td_tensor_release(y);
    td_tensor_release(a);
}

static void expect_grad_both(unary_fn op, int64_t attr0, int64_t attr1, const float *a_data, const int64_t *shape,
                             int ndim, const float *seed_data, const int64_t *out_shape, int out_ndim,
                             const float *want)
{
    expect_grad(ad_dev, op, attr0, attr1, a_data, shape, ndim, seed_data, out_shape, out_ndim, want);
    expect_grad(ad_bal, op, attr0, attr1, a_data, shape, ndim, seed_data, out_shape, out_ndim, want);
}

static td_status op_prod(const td_tensor *a, int64_t x, int64_t y, td_tensor **out)
{
    (void)x;
    (void)y;
    return td_float_prod(a, out);
}
static td_status op_prod_dim(const td_tensor *a, int64_t dim, int64_t y, td_tensor **out)
{
    (void)y;
    return td_float_prod_dim(a, dim, out);
}
static td_status op_max(const td_tensor *a, int64_t x, int64_t y, td_tensor **out)
{
    (void)x;
    (void)y;
    return td_float_max(a, out);
}
static td_status op_max_abs(const td_tensor *a, int64_t x, int64_t y, td_tensor **out)
{
    (void)x;
    (void)y;
    return td_float_max_abs(a, out);
}
static td_status op_max_abs_dim(const td_tensor *a, int64_t dim, int64_t y, td_tensor **out)
{
    (void)y;
    return td_float_max_abs_dim(a, dim, out);
}
static td_status op_cumsum(const td_tensor *a, int64_t dim, int64_t y, td_tensor **out)
{
    (void)y;
    return td_float_cumsum(a, dim, out);
}
static td_status op_cumprod(const td_tensor *a, int64_t dim, int64_t y, td_tensor **out)
{
    (void)y;
    return td_float_cumprod(a, dim, out);
}
static td_status op_cummax(const td_tensor *a, int64_t dim, int64_t y, td_tensor **out)
{
    (void)y;
    return td_float_cummax(a, dim, out);
}
static td_status op_cummin(const td_tensor *a, int64_t dim, int64_t y, td_tensor **out)
{
    (void)y;
    return td_float_cummin(a, dim, out);
}
static td_status op_sort(const td_tensor *a, int64_t dim, int64_t desc, td_tensor **out)
{
    return td_float_sort(a, dim, (int32_t)desc, out);
}
static td_status op_topk(const td_tensor *a, int64_t count, int64_t dim, td_tensor **out)
{
    return td_float_topk(a, count, dim, out);
}

static const int64_t S0[] = { 0 };

/* prod: d/da_i = product of the others, also where a holds zeros. */
static void test_prod_grad_with_zeros(void **state)
{
    (void)state;
    const float one[] = { 1 };
    /* [2, 3, 4]: (12, 8, 6) */
    const int64_t s3[] = { 3 };
    expect_grad_both(op_prod, 0, 0, (const float[]){ 2, 3, 4 }, s3, 1, one, S0, 0, (const float[]){ 12, 8, 6 });
    /* one zero: only it gets the product of the others, 2 * 3 */
    expect_grad_both(op_prod, 0, 0, (const float[]){ 2, 0, 3 }, s3, 1, one, S0, 0, (const float[]){ 0, 6, 0 });
    /* two zeros: every product of the others has a zero */
    expect_grad_both(op_prod, 0, 0, (const float[]){ 0, 2, 0 }, s3, 1, one, S0, 0, (const float[]){ 0, 0, 0 });
    /* prod_dim over rows [[0, 5], [2, 3]] along dim 1 with seed (10, 1): row 0 -> (50, 0),
     * row 1 -> (3, 2) */
    const int64_t s22[] = { 2, 2 }, s21[] = { 2, 1 };
    expect_grad_both(op_prod_dim, 1, 0, (const float[]){ 0, 5, 2, 3 }, s22, 2, (const float[]){ 10, 1 }, s21, 2,
                     (const float[]){ 50, 0, 3, 2 });
}

/* cumprod with seed w = 1: dL/da_i = sum_{k >= i} prod_{j <= k, j != i} a_j. */
static void test_cumprod_grad_with_zeros(void **state)
{
    (void)state;
    const int64_t s4[] = { 4 };
    const float ones[] = { 1, 1, 1, 1 };
    /* a = [2, 0, 3, 0.5]: da0 = 1 + a1 (1 + a2 (1 + a3)) = 1; da1 = a0 (1 + a2 + a2 a3) =
     * 2 * 5.5 = 11; da2 = a0 a1 (1 + a3) = 0; da3 = a0 a1 a2 = 0 */
    expect_grad_both(op_cumprod, 0, 0, (const float[]){ 2, 0, 3, 0.5f }, s4, 1, ones, s4, 1,
                     (const float[]){ 1, 11, 0, 0 });
    /* a = [0, 2, 0, 3]: da0 = 1 + a1 + a1 a2 + a1 a2 a3 = 3; every other term has a0 = 0 */
    expect_grad_both(op_cumprod, -1, 0, (const float[]){ 0, 2, 0, 3 }, s4, 1, ones, s4, 1,
                     (const float[]){ 3, 0, 0, 0 });
    /* no zeros, seed (1, 2, 3) over [1, 2, 3]: out = (1, 2, 6); da0 = 1 + 2*2 + 3*6 = 23,
     * da1 = 2*1 + 3*3 = 11, da2 = 3*2 = 6 */
    const int64_t s3[] = { 3 };
    expect_grad_both(op_cumprod, 0, 0, (const float[]){ 1, 2, 3 }, s3, 1, (const float[]){ 1, 2, 3 }, s3, 1,
                     (const float[]){ 23, 11, 6 });
}

/* cumsum along dim 0 of [[a], [b], [c]]: a reversed cumsum of the seed. */
static void test_cumsum_grad(void **state)
{
    (void)state;
    const int64_t s32[] = { 3, 2 };
    /* seed columns (1, 2, 3) and (10, 20, 30): (6, 5, 3) and (60, 50, 30) */
    expect_grad_both(op_cumsum, 0, 0, (const float[]){ 1, 2, 3, 4, 5, 6 }, s32, 2,
                     (const float[]){ 1, 10, 2, 20, 3, 30 }, s32, 2, (const float[]){ 6, 60, 5, 50, 3, 30 });
}

/* cummax / cummin: each output's gradient goes to the index torch.cummax reports, the last
 * of equal extremes. */
static void test_cummax_cummin_grad_ties(void **state)
{
    (void)state;
    const int64_t s4[] = { 4 };
    /* [1, 3, 3, 2]: indices (0, 1, 2, 2), seed (1, 2, 4, 8) -> (1, 2, 12, 0) */
    expect_grad_both(op_cummax, 0, 0, (const float[]){ 1, 3, 3, 2 }, s4, 1, (const float[]){ 1, 2, 4, 8 }, s4, 1,
                     (const float[]){ 1, 2, 12, 0 });
    /* [2, 1, 1, 3]: indices (0, 1, 2, 2) */
    expect_grad_both(op_cummin, 0, 0, (const float[]){ 2, 1, 1, 3 }, s4, 1, (const float[]){ 1, 2, 4, 8 }, s4, 1,
                     (const float[]){ 1, 2, 12, 0 });
}

/* max / max_abs: split evenly among ties. */
static void test_max_grad_split_on_ties(void **state)
{
    (void)state;
    const int64_t s4[] = { 4 }, s3[] = { 3 };
    expect_grad_both(op_max, 0, 0, (const float[]){ 1, 5, 5, 2 }, s4, 1, (const float[]){ 1 }, S0, 0,
                     (const float[]){ 0, 0.5f, 0.5f, 0 });
    /* |-5| = |5|: halves, with the sign of each */
    expect_grad_both(op_max_abs, 0, 0, (const float[]){ -5, 5, 1 }, s3, 1, (const float[]){ 2 }, S0, 0,
                     (const float[]){ -1, 1, 0 });
    /* along dim 1 of [[-2, 2, 2], [1, -3, 0]], seed (3, 1): row 0 splits 3 in three */
    const int64_t s23[] = { 2, 3 }, s21[] = { 2, 1 };
    expect_grad_both(op_max_abs_dim, 1, 0, (const float[]){ -2, 2, 2, 1, -3, 0 }, s23, 2, (const float[]){ 3, 1 },
                     s21, 2, (const float[]){ -1, 1, 1, 0, -1, 0 });
}

/* sort / topk: the gradient goes back through the sorting indices. */
static void test_sort_topk_grad_routing(void **state)
{
    (void)state;
    const int64_t s3[] = { 3 }, s4[] = { 4 }, s2[] = { 2 };
    /* sort [3, 1, 2] ascending: positions (1, 2, 0) take seed (10, 20, 30) */
    expect_grad_both(op_sort, 0, 0, (const float[]){ 3, 1, 2 }, s3, 1, (const float[]){ 10, 20, 30 }, s3, 1,
                     (const float[]){ 30, 10, 20 });
    /* descending, with a tie (stable): [1, 2, 1] -> positions (1, 0, 2) */
    expect_grad_both(op_sort, -1, 1, (const float[]){ 1, 2, 1 }, s3, 1, (const float[]){ 10, 20, 30 }, s3, 1,
                     (const float[]){ 20, 10, 30 });
    /* topk 2 of [1, 4, 2, 3]: positions (1, 3) */
    expect_grad_both(op_topk, 2, 0, (const float[]){ 1, 4, 2, 3 }, s4, 1, (const float[]){ 10, 20 }, s2, 1,
                     (const float[]){ 0, 10, 0, 20 });
    /* along dim 0 of [[1, 5], [4, 2], [3, 0]], topk 1: rows (1, 0) of the columns */
    const int64_t s32[] = { 3, 2 }, s12[] = { 1, 2 };
    expect_grad_both(op_topk, 1, 0, (const float[]){ 1, 5, 4, 2, 3, 0 }, s32, 2, (const float[]){ 7, 9 }, s12, 2,
                     (const float[]){ 0, 9, 7, 0, 0, 0 });
}

/* A long line with many ties, and many lines across threads: sorted, and argsort stable. */
static void check_sorted_lines(const int64_t *shape, int ndim, int64_t dim, int32_t desc, unsigned seed)
{
    int64_t outer = 1, size = shape[dim], inner = 1;
    for (int d = 0; d < dim; d++)
        outer *= shape[d];
    for (int d = (int)dim + 1; d < ndim; d++)
        inner *= shape[d];
    const int64_t n = outer * size * inner;
    float *x = malloc(sizeof(float) * (size_t)n);
    assert_non_null(x);
    srand(seed);
    for (int64_t i = 0; i < n; i++) {
        const int r = rand() % 11;
        x[i] = r == 10 ? NAN : (float)(r % 5) - 2.0f; /* values -2..2 and NaN: many ties */
    }
    td_tensor *a = tdt_make(dev, TD_F32, x, shape, ndim), *s = NULL, *idx = NULL;
    assert_non_null(a);
    tdt_check(td_float_sort(a, dim, desc, &s), "sort");
    tdt_check(td_float_argsort(a, dim, desc, &idx), "argsort");
    int64_t ns = 0, ni = 0;
    float *sv = tdt_read(s, &ns);
    int32_t *iv = tdt_read(idx, &ni);
    assert_int_equal(ns, n);
    assert_int_equal(ni, n);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t t = 0; t < inner; t++) {
            for (int64_t k = 0; k < size; k++) {
                const int64_t p = (o * size + k) * inner + t;
                const int32_t j = iv[p];
                assert_true(j >= 0 && j < size);
                const float v = x[(o * size + j) * inner + t];
                /* the value at the index is the sorted value */
                assert_true((isnan(v) && isnan(sv[p])) || v == sv[p]);
                if (k > 0) {
                    const int64_t q = p - inner;
                    const float u = sv[q];
                    /* order, NaN largest */
                    bool ordered = desc ? (isnan(u) || (!isnan(v) && u >= v)) : (isnan(v) || (!isnan(u) && u <= v));
                    assert_true(ordered);
                    /* stable: equal values keep their order */
                    if ((u == v) || (isnan(u) && isnan(v)))
                        assert_true(iv[q] < j);
                }
            }
        }
    }
    free(sv);
    free(iv);
    free(x);
    td_tensor_release(s);
    td_tensor_release(idx);
    td_tensor_release(a);
}

static void test_sort_long_and_threaded(void **state)
{
    (void)state;
    const int64_t s1[] = { 70001 };
    check_sorted_lines(s1, 1, 0, 0, 1u);
    check_sorted_lines(s1, 1, 0, 1, 2u);
    const int64_t s3[] = { 3, 257, 101 };
    check_sorted_lines(s3, 3, 1, 0, 3u);
    check_sorted_lines(s3, 3, 2, 1, 4u);
    check_sorted_lines(s3, 3, 0, 0, 5u);
}

/* Long cumsum accumulates in double: 1e5 ones then the exact count. */
static void test_cumsum_long_exact(void **state)
{
    (void)state;
    const int64_t s[] = { 100000 };
    td_tensor *a = tdt_filled(dev, TD_F32, s, 1), *c = NULL;
    assert_non_null(a);
    tdt_check(td_float_cumsum(a, 0, &c), "cumsum");
    int64_t n = 0;
    float *v = tdt_read(c, &n);
    assert_int_equal(n, 100000);
    for (int64_t i = 0; i < n; i++)
        assert_true(v[i] == (float)(i + 1));
    free(v);
    td_tensor_release(c);
    td_tensor_release(a);
}

static void test_rule_errors(void **state)
{
    (void)state;
    const int64_t s[] = { 2, 3 };
    td_tensor *a = tdt_filled(dev, TD_F32, s, 2), *i = tdt_filled(dev, TD_I32, s, 2), *out = NULL;
    assert_non_null(a);
    assert_non_null(i);
    tdt_expect_error(td_float_topk(a, 4, 1, &out), TD_E_RANGE, "float_topk");
    tdt_expect_error(td_float_topk(a, -1, 1, &out), TD_E_RANGE, "float_topk");
    tdt_expect_error(td_int_topk(i, 3, 0, &out), TD_E_RANGE, "int_topk");
    tdt_expect_error(td_float_argtopk(a, 1, 2, &out), TD_E_RANGE, "float_argtopk");
    tdt_expect_error(td_float_cumsum(a, -3, &out), TD_E_RANGE, "float_cumsum");
    tdt_expect_error(td_float_sort(a, 2, 0, &out), TD_E_RANGE, "float_sort");
    tdt_expect_error(td_float_max_abs_dim(a, 2, &out), TD_E_RANGE, "float_max_abs_dim");
    tdt_expect_error(td_float_prod_dim(a, -3, &out), TD_E_RANGE, "float_prod_dim");
    assert_null(out);
    /* 0-d: dim 0 and -1 are the one element */
    const float x = 3.5f;
    td_tensor *z = tdt_make(dev, TD_F32, &x, NULL, 0);
    assert_non_null(z);
    tdt_check(td_float_sort(z, -1, 1, &out), "sort 0-d");
    tdt_expect(out, TD_F32, NULL, 0, &x, 1, 0.0f);
    td_tensor_release(out);
    tdt_check(td_float_topk(z, 1, 0, &out), "topk 0-d");
    tdt_expect(out, TD_F32, NULL, 0, &x, 1, 0.0f);
    td_tensor_release(out);
    tdt_check(td_float_max_abs_dim(z, 0, &out), "max_abs_dim 0-d");
    tdt_expect(out, TD_F32, NULL, 0, &x, 1, 0.0f);
    td_tensor_release(out);
    tdt_expect_error(td_float_cumprod(z, 1, &out), TD_E_RANGE, "float_cumprod");
    td_tensor_release(z);
    td_tensor_release(a);
    td_tensor_release(i);
}

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad_dev, &ad_bal);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, ad_bal);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_prod_grad_with_zeros),
        TDT_TEST(test_cumprod_grad_with_zeros),
        TDT_TEST(test_cumsum_grad),
        TDT_TEST(test_cummax_cummin_grad_ties),
        TDT_TEST(test_max_grad_split_on_ties),
        TDT_TEST(test_sort_topk_grad_routing),
        TDT_TEST(test_sort_long_and_threaded),
        TDT_TEST(test_cumsum_long_exact),
        TDT_TEST(test_rule_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
