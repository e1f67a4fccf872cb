/* Tensor printing: the values laid out as NumPy 1.24's numpy.array2string prints the same
 * data (the expected texts below are its output, pasted in), the header line, cutting
 * short into a small buffer, autodiff tensors, and the error paths. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *cpu, *ad;

/* NumPy's output for the data each test makes. */
static const char want_f2x3[] =
    "[[1. 2. 3.]\n"
    " [4. 5. 6.]]";
static const char want_0d[] =
    "1.5";
static const char want_empty[] =
    "[]";
static const char want_arange2000[] =
    "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]";
static const char want_i40x50[] =
    "[[-1000  -999  -998 ...  -953  -952  -951]\n"
    " [ -950  -949  -948 ...  -903  -902  -901]\n"
    " [ -900  -899  -898 ...  -853  -852  -851]\n"
    " ...\n"
    " [  850   851   852 ...   897   898   899]\n"
    " [  900   901   902 ...   947   948   949]\n"
    " [  950   951   952 ...   997   998   999]]";
static const char want_special[] =
    "[ nan  inf -inf -0.   1.5]";
static const char want_nonfinite[] =
    "[ nan -inf]";
static const char want_bool[] =
    "[[ True False]\n"
    " [False  True]]";
static const char want_bool0d[] =
    "True";
static const char want_wrap[] =
    "[0.         0.1        0.2        0.3        0.4        0.5\n"
    " 0.6        0.7        0.8        0.90000004 1.         1.1\n"
    " 1.2        1.3000001  1.4        1.5        1.6        1.7\n"
    " 1.8000001  1.9        2.         2.1000001  2.2        2.3\n"
    " 2.4        2.5        2.6000001  2.7        2.8        2.9       ]";
static const char want_i3d[] =
    "[[[0 1]\n"
    "  [2 3]]\n"
    "\n"
    " [[4 5]\n"
    "  [6 7]]]";
static const char want_exp[] =
    "[ 1.0e-05  1.5e+00 -2.5e+02]";
static const char want_frac[] =
    "[[  0.1         -0.25      ]\n"
    " [  0.33333334 100.        ]]";
static const char want_big3d[] =
    "[[[0.00000e+00 1.25000e-01 2.50000e-01 ... 1.12500e+00 1.25000e+00\n"
    "   1.37500e+00]\n"
    "  [1.50000e+00 1.62500e+00 1.75000e+00 ... 2.62500e+00 2.75000e+00\n"
    "   2.87500e+00]\n"
    "  [3.00000e+00 3.12500e+00 3.25000e+00 ... 4.12500e+00 4.25000e+00\n"
    "   4.37500e+00]\n"
    "  ...\n"
    "  [1.05000e+01 1.06250e+01 1.07500e+01 ... 1.16250e+01 1.17500e+01\n"
    "   1.18750e+01]\n"
    "  [1.20000e+01 1.21250e+01 1.22500e+01 ... 1.31250e+01 1.32500e+01\n"
    "   1.33750e+01]\n"
    "  [1.35000e+01 1.36250e+01 1.37500e+01 ... 1.46250e+01 1.47500e+01\n"
    "   1.48750e+01]]\n"
    "\n"
    " [[1.50000e+01 1.51250e+01 1.52500e+01 ... 1.61250e+01 1.62500e+01\n"
    "   1.63750e+01]\n"
    "  [1.65000e+01 1.66250e+01 1.67500e+01 ... 1.76250e+01 1.77500e+01\n"
    "   1.78750e+01]\n"
    "  [1.80000e+01 1.81250e+01 1.82500e+01 ... 1.91250e+01 1.92500e+01\n"
    "   1.93750e+01]\n"
    "  ...\n"
    "  [2.55000e+01 2.56250e+01 2.57500e+01 ... 2.66250e+01 2.67500e+01\n"
    "   2.68750e+01]\n"
    "  [2.70000e+01 2.71250e+01 2.72500e+01 ... 2.81250e+01 2.82500e+01\n"
    "   2.83750e+01]\n"
    "  [2.85000e+01 2.86250e+01 2.87500e+01 ... 2.96250e+01 2.97500e+01\n"
    "   2.98750e+01]]\n"
    "\n"
    " [[3.00000e+01 3.01250e+01 3.02500e+01 ... 3.11250e+01 3.12500e+01\n"
    "   3.13750e+01]\n"
    "  [3.15000e+01 3.16250e+01 3.17500e+01 ... 3.26250e+01 3.27500e+01\n"
    "   3.28750e+01]\n"
    "  [3.30000e+01 3.31250e+01 3.32500e+01 ... 3.41250e+01 3.42500e+01\n"
    "   3.43750e+01]\n"
    "  ...\n"
    "  [4.05000e+01 4.06250e+01 4.07500e+01 ... 4.16250e+01 4.17500e+01\n"
    "   4.18750e+01]\n"
    "  [4.20000e+01 4.21250e+01 4.22500e+01 ... 4.31250e+01 4.32500e+01\n"
    "   4.33750e+01]\n"
    "  [4.35000e+01 4.36250e+01 4.37500e+01 ... 4.46250e+01 4.47500e+01\n"
    "   4.48750e+01]]\n"
    "\n"
    " ...\n"
    "\n"
    " [[1.05000e+02 1.05125e+02 1.05250e+02 ... 1.06125e+02 1.06250e+02\n"
    "   1.06375e+02]\n"
    "  [1.06500e+02 1.06625e+02 1.06750e+02 ... 1.07625e+02 1.07750e+02\n"
    "   1.07875e+02]\n"
    "  [1.08000e+02 1.08125e+02 1.08250e+02 ... 1.09125e+02 1.09250e+02\n"
    "   1.09375e+02]\n"
    "  ...\n"
    "  [1.15500e+02 1.15625e+02 1.15750e+02 ... 1.16625e+02 1.16750e+02\n"
    "   1.16875e+02]\n"
    "  [1.17000e+02 1.17125e+02 1.17250e+02 ... 1.18125e+02 1.18250e+02\n"
    "   1.18375e+02]\n"
    "  [1.18500e+02 1.18625e+02 1.18750e+02 ... 1.19625e+02 1.19750e+02\n"
    "   1.19875e+02]]\n"
    "\n"
    " [[1.20000e+02 1.20125e+02 1.20250e+02 ... 1.21125e+02 1.21250e+02\n"
    "   1.21375e+02]\n"
    "  [1.21500e+02 1.21625e+02 1.21750e+02 ... 1.22625e+02 1.22750e+02\n"
    "   1.22875e+02]\n"
    "  [1.23000e+02 1.23125e+02 1.23250e+02 ... 1.24125e+02 1.24250e+02\n"
    "   1.24375e+02]\n"
    "  ...\n"
    "  [1.30500e+02 1.30625e+02 1.30750e+02 ... 1.31625e+02 1.31750e+02\n"
    "   1.31875e+02]\n"
    "  [1.32000e+02 1.32125e+02 1.32250e+02 ... 1.33125e+02 1.33250e+02\n"
    "   1.33375e+02]\n"
    "  [1.33500e+02 1.33625e+02 1.33750e+02 ... 1.34625e+02 1.34750e+02\n"
    "   1.34875e+02]]\n"
    "\n"
    " [[1.35000e+02 1.35125e+02 1.35250e+02 ... 1.36125e+02 1.36250e+02\n"
    "   1.36375e+02]\n"
    "  [1.36500e+02 1.36625e+02 1.36750e+02 ... 1.37625e+02 1.37750e+02\n"
    "   1.37875e+02]\n"
    "  [1.38000e+02 1.38125e+02 1.38250e+02 ... 1.39125e+02 1.39250e+02\n"
    "   1.39375e+02]\n"
    "  ...\n"
    "  [1.45500e+02 1.45625e+02 1.45750e+02 ... 1.46625e+02 1.46750e+02\n"
    "   1.46875e+02]\n"
    "  [1.47000e+02 1.47125e+02 1.47250e+02 ... 1.48125e+02 1.48250e+02\n"
    "   1.48375e+02]\n"
    "  [1.48500e+02 1.48625e+02 1.48750e+02 ... 1.49625e+02 1.49750e+02\n"
    "   1.49875e+02]]]";

/* Fails unless t prints as header, a newline, then body. */
static void expect_text(const td_tensor *t, const char *header, const char *body)
{
    size_t len = 0;
    tdt_check(td_tensor_format(t, NULL, 0, &len), "format (length)");
    char *buf = malloc(len + 1);
    assert_non_null(buf);
    size_t len2 = 0;
    tdt_check(td_tensor_format(t, buf, len + 1, &len2), "format");
    char *want = malloc(strlen(header) + strlen(body) + 2);
    assert_non_null(want);
    sprintf(want, "%s\n%s", header, body);
    if (strcmp(buf, want) != 0)
        fprintf(stderr, "got:\n%s\nwant:\n%s\n", buf, want);
    assert_string_equal(buf, want);
    assert_int_equal(len, strlen(want));
    assert_int_equal(len2, len);
    free(want);
    free(buf);
}

static td_tensor *floats(td_device *d, const float *v, const int64_t *shape, int ndim)
{
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(d, v, shape, ndim, &t), "float_from_data");
    return t;
}

static void test_float_2x3(void **state)
{
    (void)state;
    static const float v[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s[] = { 2, 3 };
    td_tensor *t = floats(cpu, v, s, 2);
    expect_text(t, "tensor shape=[2, 3] dtype=f32 device=cpu:0", want_f2x3);
    td_tensor_release(t);
}

static void test_zero_d_and_empty(void **state)
{
    (void)state;
    static const float v[] = { 1.5f };
    td_tensor *t = floats(cpu, v, NULL, 0);
    expect_text(t, "tensor shape=[] dtype=f32 device=cpu:0", want_0d);
    td_tensor_release(t);
    static const int64_t s[] = { 0, 3 };
    td_tensor *e = NULL;
    tdt_check(td_float_zeros(cpu, s, 2, &e), "zeros");
    expect_text(e, "tensor shape=[0, 3] dtype=f32 device=cpu:0", want_empty);
    td_tensor_release(e);
    static const bool b[] = { true };
    td_tensor *tb = NULL;
    tdt_check(td_bool_from_data(cpu, b, NULL, 0, &tb), "bool_from_data");
    expect_text(tb, "tensor shape=[] dtype=bool device=cpu:0", want_bool0d);
    td_tensor_release(tb);
}

static void test_summarized(void **state)
{
    (void)state;
    float *v = malloc(2000 * sizeof *v);
    int32_t *iv = malloc(2000 * sizeof *iv);
    assert_non_null(v);
    assert_non_null(iv);
    for (int i = 0; i < 2000; i++) {
        v[i] = (float)i;
        iv[i] = i - 1000;
    }
    static const int64_t s1[] = { 2000 }, s2[] = { 40, 50 };
    td_tensor *t = floats(cpu, v, s1, 1);
    expect_text(t, "tensor shape=[2000] dtype=f32 device=cpu:0", want_arange2000);
    td_tensor_release(t);
    td_tensor *ti = NULL;
    tdt_check(td_int_from_data(cpu, iv, s2, 2, &ti), "int_from_data");
    expect_text(ti, "tensor shape=[40, 50] dtype=i32 device=cpu:0", want_i40x50);
    td_tensor_release(ti);
    /* 1200 elements over three dims: every dim cut, rows wrapped at 75 columns */
    static const int64_t s3[] = { 10, 10, 12 };
    for (int i = 0; i < 1200; i++)
        v[i] = (float)i / 8.0f;
    td_tensor *t3 = floats(cpu, v, s3, 3);
    expect_text(t3, "tensor shape=[10, 10, 12] dtype=f32 device=cpu:0", want_big3d);
    td_tensor_release(t3);
    free(iv);
    free(v);
}

static void test_special_values(void **state)
{
    (void)state;
    const float v[] = { NAN, INFINITY, -INFINITY, -0.0f, 1.5f };
    static const int64_t s[] = { 5 }, s2[] = { 2 };
    td_tensor *t = floats(cpu, v, s, 1);
    expect_text(t, "tensor shape=[5] dtype=f32 device=cpu:0", want_special);
    td_tensor_release(t);
    const float w[] = { NAN, -INFINITY };
    td_tensor *u = floats(cpu, w, s2, 1);
    expect_text(u, "tensor shape=[2] dtype=f32 device=cpu:0", want_nonfinite);
    td_tensor_release(u);
}

static void test_digits_and_wrapping(void **state)
{
    (void)state;
    float v[30];
    for (int i = 0; i < 30; i++)
        v[i] = (float)i * 0.1f;
    static const int64_t s30[] = { 30 }, s3[] = { 3 }, s22[] = { 2, 2 };
    td_tensor *t = floats(cpu, v, s30, 1);
    expect_text(t, "tensor shape=[30] dtype=f32 device=cpu:0", want_wrap);
    td_tensor_release(t);
    const float e[] = { 1e-5f, 1.5f, -250.0f };
    t = floats(cpu, e, s3, 1);
    expect_text(t, "tensor shape=[3] dtype=f32 device=cpu:0", want_exp);
    td_tensor_release(t);
    const float fr[] = { 0.1f, -0.25f, (float)(1.0 / 3.0), 100.0f };
    t = floats(cpu, fr, s22, 2);
    expect_text(t, "tensor shape=[2, 2] dtype=f32 device=cpu:0", want_frac);
    td_tensor_release(t);
    /* more than 8 decimals: rounded to 8 */
    const float r8[] = { 0.0012345679f, -1.0f, 0.123456789f };
    t = floats(cpu, r8, s3, 1);
    expect_text(t, "tensor shape=[3] dtype=f32 device=cpu:0", "[ 0.00123457 -1.          0.12345679]");
    td_tensor_release(t);
}

static void test_int_and_bool(void **state)
{
    (void)state;
    static const int32_t iv[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    static const bool bv[] = { true, false, false, true };
    static const int64_t s3[] = { 2, 2, 2 }, s2[] = { 2, 2 };
    td_tensor *t = NULL;
    tdt_check(td_int_from_data(cpu, iv, s3, 3, &t), "int_from_data");
    expect_text(t, "tensor shape=[2, 2, 2] dtype=i32 device=cpu:0", want_i3d);
    td_tensor_release(t);
    tdt_check(td_bool_from_data(cpu, bv, s2, 2, &t), "bool_from_data");
    expect_text(t, "tensor shape=[2, 2] dtype=bool device=cpu:0", want_bool);
    td_tensor_release(t);
}

static void test_autodiff(void **state)
{
    (void)state;
    static const float v[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s[] = { 2, 3 };
    td_tensor *p = floats(ad, v, s, 2);
    expect_text(p, "tensor shape=[2, 3] dtype=f32 device=autodiff(cpu:0, none)", want_f2x3);
    tdt_check(td_require_grad(p), "require_grad");
    td_tensor *q = NULL;
    tdt_check(td_float_mul_scalar(p, 1.0f, &q), "mul_scalar");
    expect_text(q, "tensor shape=[2, 3] dtype=f32 device=autodiff(cpu:0, none) tracked", want_f2x3);
    td_tensor_release(q);
    td_tensor_release(p);
}

static void test_cut_short_and_print(void **state)
{
    (void)state;
    static const float v[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s[] = { 2, 3 };
    td_tensor *t = floats(cpu, v, s, 2);
    char small[8];
    size_t len = 0;
    tdt_check(td_tensor_format(t, small, sizeof small, &len), "format");
    assert_string_equal(small, "tensor ");
    assert_int_equal(len, strlen("tensor shape=[2, 3] dtype=f32 device=cpu:0\n") + strlen(want_f2x3));
    FILE *f = tmpfile();
    assert_non_null(f);
    tdt_check(td_tensor_print(t, f), "print");
    rewind(f);
    char got[256] = { 0 };
    size_t n = fread(got, 1, sizeof got - 1, f);
    fclose(f);
    got[n] = '\0';
    assert_string_equal(got, "tensor shape=[2, 3] dtype=f32 device=cpu:0\n[[1. 2. 3.]\n [4. 5. 6.]]\n");
    td_tensor_release(t);
}

static void test_errors(void **state)
{
    (void)state;
    static const float v[] = { 1, 2 };
    static const int64_t s[] = { 2 };
    td_tensor *t = floats(cpu, v, s, 1);
    char buf[64];
    size_t len = 7;
    tdt_expect_error(td_tensor_format(NULL, buf, sizeof buf, &len), TD_E_NULL, "tensor_format");
    assert_int_equal(len, 0);
    tdt_expect_error(td_tensor_format(t, NULL, 4, NULL), TD_E_NULL, "tensor_format");
    tdt_expect_error(td_tensor_print(NULL, stdout), TD_E_NULL, "tensor_print");
    tdt_expect_error(td_tensor_print(t, NULL), TD_E_NULL, "tensor_print");
    /* out of memory at every allocation in turn: an error or the text, never a leak */
    bool done = false;
    for (long k = 0; k < 20 && !done; k++) {
        td_testing_fail_allocations_after(k);
        td_status st = td_tensor_format(t, buf, sizeof buf, &len);
        td_testing_fail_allocations_after(-1);
        if (st == TD_OK)
            done = true;
        else
            tdt_expect_error(st, TD_E_NOMEM, "tensor_format");
    }
    assert_true(done);
    /* a tracked tensor whose context was turned off: the guard's error */
    td_tensor *p = floats(ad, v, s, 1);
    tdt_check(td_tensor_set_autodiff_context(p, (td_autodiff_context){ .enabled = false }), "set context");
    tdt_expect_error(td_tensor_format(p, buf, sizeof buf, NULL), TD_E_AUTODIFF_CONTEXT, "into_data");
    td_tensor_release(p);
    td_tensor_release(t);
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
        TDT_TEST(test_float_2x3),         TDT_TEST(test_zero_d_and_empty), TDT_TEST(test_summarized),
        TDT_TEST(test_special_values),    TDT_TEST(test_digits_and_wrapping), TDT_TEST(test_int_and_bool),
        TDT_TEST(test_autodiff),          TDT_TEST(test_cut_short_and_print), TDT_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
