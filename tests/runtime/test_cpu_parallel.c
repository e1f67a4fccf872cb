/* Large tensors on the CPU backend (>= 1 << 20 elements, far above its threading threshold
 * of 32768 elements) against naive single-threaded loops written here.
 *
 * Tolerances:
 *   elementwise add: exact (the same single f32 addition per element).
 *   float_sum:        the library accumulates in double; compared with a double sum here,
 *                     |got - ref| <= 1e-6 * sum |x_i|  (one f32 rounding of the result, 6e-8
 *                     relative, plus slack for a different double summation order).
 *   sum_dim:          same, per output element, against a double sum.
 *   argmax:           exact (ties keep the first index, as the loop here does).
 *   matmul:           |got - ref| <= 2e-5 * sum_k |a_ik * b_kj| + 1e-6, ref in double: the f32
 *                     dot-product error bound k * 2^-24 * sum |a b| is 7.6e-6 for k = 128
 *                     (BLAS or the portable tiled kernel, any summation order). */
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

/* A random tensor (uniform in [lo, hi)) and its values on the host (*host, malloc'ed). */
static td_tensor *rand_tensor(const int64_t *shape, int ndim, float lo, float hi, uint64_t seed, float **host)
{
    td_tensor *t = NULL;
    tdt_check(td_float_random(dev, shape, ndim, TD_UNIFORM, lo, hi, seed, &t), "float_random");
    int64_t n;
    *host = tdt_read(t, &n);
    assert_non_null(*host);
    return t;
}

static float *read_all(const td_tensor *t, int64_t want_n)
{
    int64_t n = 0;
    float *v = tdt_read(t, &n);
    assert_non_null(v);
    assert_int_equal(n, want_n);
    return v;
}

static void expect_shape(const td_tensor *t, const int64_t *shape, int ndim)
{
    int64_t dims[TD_MAX_DIMS];
    int got;
    tdt_check(td_tensor_shape(t, dims, &got), "shape");
    assert_int_equal(got, ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(dims[i], shape[i]);
}

#define R 1024
#define C 1024

static void test_large_add_with_broadcasting(void **state)
{
    (void)state;
    static const int64_t sa[] = { R, C }, srow[] = { C }, scol[] = { R, 1 }, s1c[] = { 1, C };
    float *a, *row, *col, *r1c;
    td_tensor *ta = rand_tensor(sa, 2, -10.0f, 10.0f, 1, &a);
    td_tensor *trow = rand_tensor(srow, 1, -1.0f, 1.0f, 2, &row);
    td_tensor *tcol = rand_tensor(scol, 2, -1.0f, 1.0f, 3, &col);
    td_tensor *t1c = rand_tensor(s1c, 2, -1.0f, 1.0f, 4, &r1c);
    td_tensor *o1 = NULL, *o2 = NULL, *o3 = NULL, *o4 = NULL;

    tdt_check(td_float_add(ta, trow, &o1), "[R, C] + [C]");
    tdt_check(td_float_add(tcol, ta, &o2), "[R, 1] + [R, C]");
    tdt_check(td_float_add(tcol, t1c, &o3), "[R, 1] + [1, C]: both sides broadcast");
    tdt_check(td_float_add(ta, ta, &o4), "[R, C] + [R, C]");
    float *v1 = read_all(o1, R * C), *v2 = read_all(o2, R * C), *v3 = read_all(o3, R * C), *v4 = read_all(o4, R * C);
    expect_shape(o3, sa, 2);
    int64_t bad = 0;
    for (int64_t i = 0; i < R; i++) {
        for (int64_t j = 0; j < C; j++) {
            const int64_t k = i * C + j;
            bad += v1[k] != a[k] + row[j];
            bad += v2[k] != col[i] + a[k];
            bad += v3[k] != col[i] + r1c[j];
            bad += v4[k] != a[k] + a[k];
        }
    }
    assert_int_equal(bad, 0);
    free(a);
    free(row);
    free(col);
    free(r1c);
    free(v1);
    free(v2);
    free(v3);
    free(v4);
    td_tensor_release(ta);
    td_tensor_release(trow);
    td_tensor_release(tcol);
    td_tensor_release(t1c);
    td_tensor_release(o1);
    td_tensor_release(o2);
    td_tensor_release(o3);
    td_tensor_release(o4);
}

static void test_large_add_on_autodiff_device_matches_cpu(void **state)
{
    (void)state;
    static const int64_t sa[] = { R, C }, srow[] = { 1, C };
    float *a, *row;
    td_tensor *ta = rand_tensor(sa, 2, -10.0f, 10.0f, 5, &a), *trow = rand_tensor(srow, 2, -1.0f, 1.0f, 6, &row);
    td_tensor *aa = NULL, *arow = NULL, *out = NULL;
    tdt_check(td_float_to_device(ta, ad_dev, &aa), "to autodiff");
    tdt_check(td_float_to_device(trow, ad_dev, &arow), "to autodiff");
    tdt_check(td_float_add(aa, arow, &out), "autodiff add");
    float *v = read_all(out, R * C);
    int64_t bad = 0;
    for (int64_t k = 0; k < R * C; k++)
        bad += v[k] != a[k] + row[k % C];
    assert_int_equal(bad, 0);
    free(a);
    free(row);
    free(v);
    td_tensor_release(ta);
    td_tensor_release(trow);
    td_tensor_release(aa);
    td_tensor_release(arow);
    td_tensor_release(out);
}

static void test_large_sum_matches_double_sum(void **state)
{
    (void)state;
    /* odd sizes leave partial chunks */
    static const int64_t sizes[] = { (INT64_C(1) << 20) + 123, INT64_C(1) << 22, 32767, 32768 };
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const int64_t s[] = { sizes[c] };
        float *x;
        td_tensor *t = rand_tensor(s, 1, -0.5f, 1.0f, 10 + c, &x), *sum = NULL;
        double ref = 0.0, mag = 0.0;
        for (int64_t i = 0; i < sizes[c]; i++) {
            ref += x[i];
            mag += fabs(x[i]);
        }
        tdt_check(td_float_sum(t, &sum), "float_sum");
        float got;
        tdt_check(td_float_into_data(sum, &got, 1), "read sum");
        if (fabs((double)got - ref) > 1e-6 * mag)
            print_error("n = %lld: sum %.9g, want %.9g\n", (long long)sizes[c], (double)got, ref);
        assert_true(fabs((double)got - ref) <= 1e-6 * mag);
        free(x);
        td_tensor_release(t);
        td_tensor_release(sum);
    }
}

static void test_large_int_sum_matches_loop(void **state)
{
    (void)state;
    /* int tensors from float_random via into_int: values in [-1000, 1000) */
    static const int64_t s[] = { (INT64_C(1) << 20) + 7 };
    float *x;
    td_tensor *t = rand_tensor(s, 1, -1000.0f, 1000.0f, 21, &x), *ti = NULL, *sum = NULL;
    tdt_check(td_float_into_int(t, &ti), "into_int");
    int64_t ref = 0;
    for (int64_t i = 0; i < s[0]; i++)
        ref += (int32_t)x[i]; /* truncation toward zero */
    tdt_check(td_int_sum(ti, &sum), "int_sum");
    int32_t got;
    tdt_check(td_int_into_data(sum, &got, 1), "read");
    assert_int_equal(got, (int32_t)ref);
    free(x);
    td_tensor_release(t);
    td_tensor_release(ti);
    td_tensor_release(sum);
}

static void test_sum_dim_and_argmax_on_1024x1024(void **state)
{
    (void)state;
    static const int64_t s[] = { R, C }, s0[] = { 1, C }, s1[] = { R, 1 };
    float *x;
    td_tensor *t = rand_tensor(s, 2, -1.0f, 1.0f, 31, &x);
    td_tensor *sd0 = NULL, *sd1 = NULL, *am0 = NULL, *am1 = NULL, *sdn = NULL;
    tdt_check(td_float_sum_dim(t, 0, &sd0), "sum_dim 0");
    tdt_check(td_float_sum_dim(t, 1, &sd1), "sum_dim 1");
    tdt_check(td_float_sum_dim(t, -2, &sdn), "sum_dim -2");
    tdt_check(td_float_argmax(t, 0, &am0), "argmax 0");
    tdt_check(td_float_argmax(t, 1, &am1), "argmax 1");
    expect_shape(sd0, s0, 2);
    expect_shape(sd1, s1, 2);
    expect_shape(am0, s0, 2);
    expect_shape(am1, s1, 2);
    float *g0 = read_all(sd0, C), *g1 = read_all(sd1, R), *gn = read_all(sdn, C);
    int64_t n;
    int32_t *a0 = tdt_read(am0, &n), *a1 = tdt_read(am1, &n);
    assert_non_null(a0);
    assert_non_null(a1);

    /* along dim 0: column j */
    for (int64_t j = 0; j < C; j++) {
        double acc = 0.0, mag = 0.0;
        int32_t best = 0;
        for (int64_t i = 0; i < R; i++) {
            acc += x[i * C + j];
            mag += fabs(x[i * C + j]);
            if (x[i * C + j] > x[best * C + j])
                best = (int32_t)i;
        }
        assert_true(fabs((double)g0[j] - acc) <= 1e-6 * mag);
        assert_true(g0[j] == gn[j]);
        if (a0[j] != best)
            print_error("argmax dim 0, column %lld: %d, want %d\n", (long long)j, a0[j], best);
        assert_int_equal(a0[j], best);
    }
    /* along dim 1: row i */
    for (int64_t i = 0; i < R; i++) {
        double acc = 0.0, mag = 0.0;
        int32_t best = 0;
        for (int64_t j = 0; j < C; j++) {
            acc += x[i * C + j];
            mag += fabs(x[i * C + j]);
            if (x[i * C + j] > x[i * C + best])
                best = (int32_t)j;
        }
        assert_true(fabs((double)g1[i] - acc) <= 1e-6 * mag);
        if (a1[i] != best)
            print_error("argmax dim 1, row %lld: %d, want %d\n", (long long)i, a1[i], best);
        assert_int_equal(a1[i], best);
    }
    free(x);
    free(g0);
    free(g1);
    free(gn);
    free(a0);
    free(a1);
    td_tensor_release(t);
    td_tensor_release(sd0);
    td_tensor_release(sd1);
    td_tensor_release(sdn);
    td_tensor_release(am0);
    td_tensor_release(am1);
}

/* c[t] = a[t] @ b[t] for naive reference, with batch offsets given per output batch. */
static void check_matmul(const float *a, const float *b, const float *c, int64_t m, int64_t k, int64_t n,
                         int64_t batch)
{
    (void)batch;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            double ref = 0.0, mag = 0.0;
            for (int64_t p = 0; p < k; p++) {
                ref += (double)a[i * k + p] * (double)b[p * n + j];
                mag += fabs((double)a[i * k + p] * (double)b[p * n + j]);
            }
            const double got = c[i * n + j];
            if (fabs(got - ref) > 2e-5 * mag + 1e-6) {
                print_error("batch %lld, c[%lld][%lld] = %.9g, want %.9g\n", (long long)batch, (long long)i,
                            (long long)j, got, ref);
                fail();
            }
        }
    }
}

static void test_matmul_64x128_by_128x32(void **state)
{
    (void)state;
    static const int64_t sa[] = { 64, 128 }, sb[] = { 128, 32 }, sc[] = { 64, 32 };
    float *a, *b;
    td_tensor *ta = rand_tensor(sa, 2, -1.0f, 1.0f, 41, &a), *tb = rand_tensor(sb, 2, -1.0f, 1.0f, 42, &b);
    td_tensor *tc = NULL;
    tdt_check(td_float_matmul(ta, tb, &tc), "matmul");
    expect_shape(tc, sc, 2);
    float *c = read_all(tc, 64 * 32);
    check_matmul(a, b, c, 64, 128, 32, 0);
    free(a);
    free(b);
    free(c);
    td_tensor_release(ta);
    td_tensor_release(tb);
    td_tensor_release(tc);
}

static void test_batched_matmul_with_broadcast_batch_dims(void **state)
{
    (void)state;
    /* a [8, 1, 64, 128] @ b [3, 128, 48] -> [8, 3, 64, 48]: a repeats over b's batch of 3 and b
     * over a's batch of 8; ~4.7M multiply-adds, so the work is split across threads. */
    enum { BA = 8, BB = 3, M = 64, K = 128, N = 48 };
    static const int64_t sa[] = { BA, 1, M, K }, sb[] = { BB, K, N }, sc[] = { BA, BB, M, N };
    float *a, *b;
    td_tensor *ta = rand_tensor(sa, 4, -1.0f, 1.0f, 51, &a), *tb = rand_tensor(sb, 3, -1.0f, 1.0f, 52, &b);
    td_tensor *tc = NULL;
    tdt_check(td_float_matmul(ta, tb, &tc), "batched matmul");
    expect_shape(tc, sc, 4);
    float *c = read_all(tc, (int64_t)BA * BB * M * N);
    for (int64_t x = 0; x < BA; x++)
        for (int64_t y = 0; y < BB; y++)
            check_matmul(a + x * M * K, b + y * K * N, c + (x * BB + y) * M * N, M, K, N, x * BB + y);
    free(c);

    /* the other way round: b [1, 128, 48] broadcasts over a [8, 64, 128] */
    static const int64_t sa2[] = { BA, M, K }, sb2[] = { 1, K, N }, sc2[] = { BA, M, N };
    td_tensor *ta2 = NULL, *tb2 = NULL, *tc2 = NULL;
    tdt_check(td_float_reshape(ta, sa2, 3, &ta2), "reshape a");
    static const int64_t st[] = { 0 }, en[] = { 1 };
    tdt_check(td_float_slice(tb, st, 1, en, 1, &tb2), "first matrix of b");
    expect_shape(tb2, sb2, 3);
    tdt_check(td_float_matmul(ta2, tb2, &tc2), "matmul, b broadcast");
    expect_shape(tc2, sc2, 3);
    float *c2 = read_all(tc2, (int64_t)BA * M * N);
    for (int64_t x = 0; x < BA; x++)
        check_matmul(a + x * M * K, b, c2 + x * M * N, M, K, N, x);
    free(c2);
    free(a);
    free(b);
    td_tensor_release(ta);
    td_tensor_release(tb);
    td_tensor_release(tc);
    td_tensor_release(ta2);
    td_tensor_release(tb2);
    td_tensor_release(tc2);
}

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad_dev, NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, NULL);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_large_add_with_broadcasting),
        TDT_TEST(test_large_add_on_autodiff_device_matches_cpu),
        TDT_TEST(test_large_sum_matches_double_sum),
        TDT_TEST(test_large_int_sum_matches_loop),
        TDT_TEST(test_sum_dim_and_argmax_on_1024x1024),
        TDT_TEST(test_matmul_64x128_by_128x32),
        TDT_TEST(test_batched_matmul_with_broadcast_batch_dims),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
