/* Initializers: every value inside the formula's bounds, the sample mean and variance
 * within 5 standard errors of the formula's (for the sample size drawn), the shapes and fans
 * of the linear and conv layouts, determinism by seed, and bad arguments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *cpu, *ad;

/* U(-b, b): mean 0, variance b^2 / 3; the variance of X^2 is b^4 (1/5 - 1/9) = 4 b^4 / 45. */
static void expect_uniform(const td_tensor *t, double lo, double hi)
{
    int64_t n = 0;
    float *v = tdt_read(t, &n);
    assert_non_null(v);
    assert_true(n > 1000);
    const double mid = (lo + hi) / 2, half = (hi - lo) / 2;
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(v[i] >= (float)lo && v[i] < (float)hi);
        s += v[i];
    }
    const double mean = s / (double)n;
    for (int64_t i = 0; i < n; i++)
        s2 += (v[i] - mid) * (v[i] - mid);
    const double var = s2 / (double)n;
    const double se_mean = sqrt(half * half / 3 / (double)n);
    const double se_var = sqrt(4 * pow(half, 4) / 45 / (double)n);
    if (fabs(mean - mid) > 5 * se_mean || fabs(var - half * half / 3) > 5 * se_var)
        fail_msg("U(%g, %g): mean %g (want %g +- %g), variance %g (want %g +- %g)", lo, hi, mean, mid, 5 * se_mean,
                 var, half * half / 3, 5 * se_var);
    free(v);
}

static void expect_shape(const td_tensor *t, const int64_t *want, int ndim)
{
    int64_t d[TD_MAX_DIMS];
    int nd = -1;
    tdt_check(td_tensor_shape(t, d, &nd), "shape");
    assert_int_equal(nd, ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(d[i], want[i]);
}

static void test_linear_default(void **state)
{
    (void)state;
    td_tensor *w = NULL, *b = NULL;
    /* fan_in 400: bound 1/20 for both */
    tdt_check(td_init_linear(cpu, 400, 250, 7, &w, &b), "init_linear");
    static const int64_t ws[] = { 400, 250 }, bs[] = { 250 };
    expect_shape(w, ws, 2);
    expect_shape(b, bs, 1);
    expect_uniform(w, -0.05, 0.05);
    int64_t n = 0;
    float *bv = tdt_read(b, &n);
    assert_non_null(bv);
    for (int64_t i = 0; i < n; i++)
        assert_true(fabsf(bv[i]) <= 0.05f);
    free(bv);
    td_tensor_release(w);
    td_tensor_release(b);
    /* on an autodiff device: parameters, leaves marked for gradients */
    tdt_check(td_init_linear(ad, 3, 2, 7, &w, NULL), "init_linear ad");
    td_backend be;
    tdt_check(td_tensor_backend(w, &be), "backend");
    assert_int_equal(be, TD_BACKEND_AUTODIFF);
    bool tracked = false;
    tdt_check(td_is_tracked(w, &tracked), "is_tracked");
    assert_true(tracked);
    td_tensor_release(w);
}

static void test_conv2d_default(void **state)
{
    (void)state;
    td_tensor *w = NULL, *b = NULL;
    /* fan_in = 16 / 2 * 5 * 5 = 200: bound 1/sqrt(200) */
    tdt_check(td_init_conv2d(cpu, 16, 64, 5, 5, 2, 3, &w, &b), "init_conv2d");
    static const int64_t ws[] = { 64, 8, 5, 5 }, bs[] = { 64 };
    expect_shape(w, ws, 4);
    expect_shape(b, bs, 1);
    expect_uniform(w, -1 / sqrt(200.0), 1 / sqrt(200.0));
    td_tensor_release(w);
    td_tensor_release(b);
}

static void test_xavier_kaiming(void **state)
{
    (void)state;
    static const int64_t lin[] = { 300, 200 }, conv[] = { 32, 16, 3, 3 };
    td_tensor *t = NULL;
    /* [in 300, out 200], gain 2: b = 2 sqrt(6 / 500) */
    tdt_check(td_init_xavier_uniform(cpu, lin, 2, 2.0f, 1, &t), "xavier");
    expect_uniform(t, -2 * sqrt(6.0 / 500), 2 * sqrt(6.0 / 500));
    td_tensor_release(t);
    /* conv: fan_in 16*9 = 144, fan_out 32*9 = 288 */
    tdt_check(td_init_xavier_uniform(cpu, conv, 4, 1.0f, 1, &t), "xavier conv");
    expect_uniform(t, -sqrt(6.0 / 432), sqrt(6.0 / 432));
    td_tensor_release(t);
    /* ReLU (a = 0): b = sqrt(2) sqrt(3 / 300) = sqrt(6 / 300) */
    tdt_check(td_init_kaiming_uniform(cpu, lin, 2, 0.0f, 2, &t), "kaiming");
    expect_uniform(t, -sqrt(6.0 / 300), sqrt(6.0 / 300));
    td_tensor_release(t);
    /* a = sqrt(5) (nn.Linear's weight): b = sqrt(2/6) sqrt(3 / 144) = 1 / 12 */
    tdt_check(td_init_kaiming_uniform(cpu, conv, 4, sqrtf(5.0f), 2, &t), "kaiming conv");
    expect_uniform(t, -1.0 / 12, 1.0 / 12);
    td_tensor_release(t);
}

static void test_uniform_normal_zeros(void **state)
{
    (void)state;
    static const int64_t s[] = { 200, 300 };
    td_tensor *t = NULL;
    tdt_check(td_init_uniform(cpu, s, 2, 1.0f, 3.0f, 11, &t), "uniform");
    expect_uniform(t, 1.0, 3.0);
    td_tensor_release(t);
    /* N(2, 0.5^2): mean within 5 sqrt(0.25 / n), variance within 5 sqrt(2 / n) 0.25 */
    tdt_check(td_init_normal(cpu, s, 2, 2.0f, 0.5f, 11, &t), "normal");
    int64_t n = 0;
    float *v = tdt_read(t, &n);
    assert_non_null(v);
    double sum = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i];
    const double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++)
        s2 += (v[i] - 2.0) * (v[i] - 2.0);
    assert_true(fabs(mean - 2.0) < 5 * sqrt(0.25 / (double)n));
    assert_true(fabs(s2 / (double)n - 0.25) < 5 * sqrt(2.0 / (double)n) * 0.25);
    free(v);
    td_tensor_release(t);
    tdt_check(td_init_zeros(cpu, s, 2, &t), "zeros");
    v = tdt_read(t, &n);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        assert_true(v[i] == 0.0f);
    free(v);
    td_tensor_release(t);
    /* zero-size: an empty tensor, no draw */
    static const int64_t e[] = { 0, 4 };
    tdt_check(td_init_kaiming_uniform(cpu, e, 2, 0.0f, 1, &t), "kaiming empty");
    expect_shape(t, e, 2);
    td_tensor_release(t);
}

static void test_seeded(void **state)
{
    (void)state;
    td_tensor *a = NULL, *b = NULL, *c = NULL, *bias = NULL;
    tdt_check(td_init_linear(cpu, 20, 10, 42, &a, &bias), "a");
    tdt_check(td_init_linear(cpu, 20, 10, 42, &b, NULL), "b");
    tdt_check(td_init_linear(cpu, 20, 10, 43, &c, NULL), "c");
    int64_t n = 0;
    float *va = tdt_read(a, &n), *vb = tdt_read(b, &n), *vc = tdt_read(c, &n), *vbias = NULL;
    int64_t nb = 0;
    vbias = tdt_read(bias, &nb);
    int same_c = 0, same_bias = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(va[i] == vb[i]);
        same_c += va[i] == vc[i];
    }
    for (int64_t i = 0; i < nb; i++)
        same_bias += vbias[i] == va[i];
    assert_true(same_c < 3);
    assert_true(same_bias < 3); /* the bias does not repeat the weight's first values */
    free(va);
    free(vb);
    free(vc);
    free(vbias);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_tensor_release(bias);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    static const int64_t s[] = { 3, 4 }, v1[] = { 5 }, neg[] = { 3, -1 };
    td_tensor *t = (td_tensor *)&t, *w = (td_tensor *)&w, *b = (td_tensor *)&b;
    tdt_expect_error(td_init_uniform(cpu, s, 2, 1.0f, 0.0f, 1, &t), TD_E_INVALID, "init_uniform");
    assert_null(t);
    tdt_expect_error(td_init_uniform(cpu, s, 2, -INFINITY, 0.0f, 1, &t), TD_E_INVALID, "init_uniform");
    tdt_expect_error(td_init_normal(cpu, s, 2, 0.0f, -1.0f, 1, &t), TD_E_INVALID, "init_normal");
    tdt_expect_error(td_init_normal(cpu, s, 2, NAN, 1.0f, 1, &t), TD_E_INVALID, "init_normal");
    tdt_expect_error(td_init_xavier_uniform(cpu, s, 2, -1.0f, 1, &t), TD_E_INVALID, "init_xavier_uniform");
    tdt_expect_error(td_init_xavier_uniform(cpu, v1, 1, 1.0f, 1, &t), TD_E_SHAPE, "init_xavier_uniform");
    tdt_expect_error(td_init_kaiming_uniform(cpu, v1, 1, 0.0f, 1, &t), TD_E_SHAPE, "init_kaiming_uniform");
    tdt_expect_error(td_init_kaiming_uniform(cpu, s, 2, NAN, 1, &t), TD_E_INVALID, "init_kaiming_uniform");
    tdt_expect_error(td_init_kaiming_uniform(cpu, neg, 2, 0.0f, 1, &t), TD_E_INVALID, "init_kaiming_uniform");
    tdt_expect_error(td_init_kaiming_uniform(NULL, s, 2, 0.0f, 1, &t), TD_E_NULL, "init_kaiming_uniform");
    tdt_expect_error(td_init_kaiming_uniform(cpu, NULL, 2, 0.0f, 1, &t), TD_E_NULL, "init_kaiming_uniform");
    tdt_expect_error(td_init_kaiming_uniform(cpu, s, 9, 0.0f, 1, &t), TD_E_INVALID, "init_kaiming_uniform");
    tdt_expect_error(td_init_kaiming_uniform(cpu, s, 2, 0.0f, 1, NULL), TD_E_NULL, "init_kaiming_uniform");
    tdt_expect_error(td_init_zeros(cpu, s, -1, &t), TD_E_INVALID, "init_zeros");
    tdt_expect_error(td_init_linear(cpu, 0, 3, 1, &w, &b), TD_E_INVALID, "init_linear");
    assert_null(w);
    assert_null(b);
    tdt_expect_error(td_init_linear(NULL, 2, 3, 1, &w, &b), TD_E_NULL, "init_linear");
    tdt_expect_error(td_init_linear(cpu, 2, 3, 1, NULL, &b), TD_E_NULL, "init_linear");
    tdt_expect_error(td_init_conv2d(cpu, 3, 4, 3, 3, 2, 1, &w, &b), TD_E_INVALID, "init_conv2d");
    tdt_expect_error(td_init_conv2d(cpu, 4, 4, 0, 3, 1, 1, &w, &b), TD_E_INVALID, "init_conv2d");
    /* out of memory for the bias after the weight: nothing leaks (the teardown checks) */
    bool done = false;
    for (long k = 0; k < 20 && !done; k++) {
        td_testing_fail_allocations_after(k);
        td_status st = td_init_linear(ad, 3, 2, 1, &w, &b);
        td_testing_fail_allocations_after(-1);
        if (st == TD_OK)
            done = true;
        else {
            assert_int_equal(st, TD_E_NOMEM);
            assert_null(w);
            assert_null(b);
        }
    }
    assert_true(done);
    td_tensor_release(w);
    td_tensor_release(b);
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
        TDT_TEST(test_linear_default), TDT_TEST(test_conv2d_default), TDT_TEST(test_xavier_kaiming),
        TDT_TEST(test_uniform_normal_zeros), TDT_TEST(test_seeded), TDT_TEST(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
