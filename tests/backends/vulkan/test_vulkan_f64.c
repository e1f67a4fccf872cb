/* Vulkan f64 elementwise kernels (shaders/ewd.comp, mathd.glsl) held to the C library's double
 * math computed here, far tighter than the generated per-dtype comparisons' NMSE bound (1e-12,
 * which a float-precision kernel would also pass).
 *
 * Every expected value comes from <math.h> in double in this file (exp, log, sqrt, tanh, pow;
 * sigmoid from its formula), never from the library under test. A NaN must be a NaN; an
 * infinite or zero result must match bit for bit (signs included); any other result must be
 * within the op's ULP bound (ULP distance counts subnormals as steps). Arithmetic (add, sub,
 * mul, and the comparisons, max, min) must be exact, through a broadcast. On a device without
 * shaderFloat64 each op must return TD_E_UNSUPPORTED naming the feature instead. Every
 * mismatch is printed before the test fails. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *vk;
static bool has_f64; /* whether the device runs f64 (probed with one op in setup) */

static int setup(void **state)
{
    (void)state;
    if (td_testing_live_objects() != 0)
        return -1;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        fprintf(stderr, "no Vulkan device: %s\n", td_last_error());
        return -1;
    }
    const double one = 1.0;
    const int64_t shape[1] = { 1 };
    td_tensor *a = NULL, *r = NULL;
    if (td_float_from_data_dtype(vk, TD_F64, &one, shape, 1, &a) != TD_OK)
        return -1;
    const td_status st = td_float_neg(a, &r);
    has_f64 = st == TD_OK;
    if (st != TD_OK && (st != TD_E_UNSUPPORTED || strstr(td_last_error(), "shaderFloat64") == NULL)) {
        fprintf(stderr, "f64 neg: %s\n", td_last_error());
        return -1;
    }
    td_tensor_release(a);
    td_tensor_release(r);
    if (!has_f64)
        fprintf(stderr, "this device lacks shaderFloat64: only the refusals are checked\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    return td_testing_live_objects() == 0 ? 0 : -1;
}

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Doubles ordered as integers, so that the distance counts every representable step. */
static int64_t ordered(double x)
{
    int64_t i;
    memcpy(&i, &x, sizeof i);
    return i < 0 ? INT64_MIN - i : i;
}

static double ulps(double got, double want)
{
    const int64_t a = ordered(got), b = ordered(want);
    return a > b ? (double)((uint64_t)a - (uint64_t)b) : (double)((uint64_t)b - (uint64_t)a);
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Whether got is acceptable for want within bound ULP; prints the case otherwise. */
static bool close_to(const char *op, double x, double got, double want, double bound)
{
    bool ok;
    if (isnan(want))
        ok = isnan(got);
    else if (isinf(want) || want == 0.0)
        ok = same_bits(got, want);
    else
        ok = !isnan(got) && ulps(got, want) <= bound;
    if (!ok)
        print_message("%s(%.17g): vulkan %.17g, libm %.17g (%.0f ulp, bound %.0f)\n", op, x, got, want,
                      isnan(got) || isnan(want) ? -1.0 : ulps(got, want), bound);
    return ok;
}

/* Inputs of the unary ops: zeros, subnormals, the normal bounds, values near exp's overflow and
 * underflow and tanh's saturation, the series / reduction boundaries of mathd.glsl (ln2/2,
 * 0.5, sqrt(1/2)), infinities and NaN, then random values over many binades. */
static const double edge_in[] = {
    0.0, -0.0, 0x1p-1074, -0x1p-1074, 0x1p-1060, 0x1.fffffffffffffp-1023, DBL_MIN, -DBL_MIN, 1e-300,
    1e-20, 7e-9, 7.5e-9, 1e-5, 0.1, 0.25, 0.34657359027997264, 0.3465735902799727, 0.4999999999999999,
    0.5, -0.5, 0.70710678118654746, 0.70710678118654757, 0.75, 1.0, -1.0, 1.0000000000000002,
    0.9999999999999999, 1.5, 2.0, -2.0, 2.718281828459045, 3.0, 10.0, -10.0, 19.0, 19.2, -19.2, 20.0,
    88.72, 100.0, -100.0, 700.0, 709.7, 709.78, 709.79, 710.0, -700.0, -708.0, -708.4, -709.0, -720.0,
    -740.0, -745.0, -745.2, -800.0, 1e10, 1e300, -1e300, DBL_MAX, -DBL_MAX, INFINITY, -INFINITY, NAN,
    /* sin / cos: multiples of pi/2 (rounded), both sides of the reductions' switch at 2^47, large
     * arguments, and 0x1.6ac5b262ca1ffp+849 (6381956970095103 2^797), the double nearest a
     * multiple of pi/2 (its reduced argument is about 2^-61) and 0x1.000000667e10ep+45, the double
     * nearest a multiple of pi/2 among 3 million multiples above 2^45 (exact integers; r =
     * 3.5e-9, where k times pi/2's third part is 1e-11 of r); gelu: both sides of |x / sqrt 2| =
     * 1 and 2, and its tail, where erfc underflows */
    1.5707963267948966, 3.141592653589793, -4.71238898038469, 6.283185307179586, 355.0, 1e22, -1e22,
    0x1p47, 0x1.fffffffffffffp46, -0x1.0000000000001p47, 0x1p60, 0x1.6ac5b262ca1ffp+849, 0x1.000000667e10ep+45, 1.4142135623730950,
    1.4142135623730951, -1.4142135623730951, 2.8284271247461903, -2.8284271247461903, -3.0, -5.0, -26.0, -38.0,
    -38.5, -39.0, 38.6, 1e154, -1e154,
    /* acos / asin / atan: the ends of the domain and their neighbours, the series / table switch
     * of mathd.glsl's atan_unit (0.1875 and the half-way points of its 1/8 grid) and their
     * reciprocals, 2^-27 (below it atan x = x), 1 - 2^-k */
    -0.9999999999999999, 0.1875, 0.18749999999999997, 0.18750000000000003, 0.3125, 0.9375, 0.0625,
    5.333333333333333, 1.0666666666666667, 0x1p-27, 0x1.fffffffffffffp-28, 7.4505805969238281e-09,
    0.9999999, -0.9999999, 1.0 - 0x1p-20, -(1.0 - 0x1p-30), 0.8660254037844386, -0.8660254037844387,
    1e-9, -1e-9, 0x1p-1000, 1e30, -1e30,
};

enum { N_RANDOM = 4000, N_UNIT = 1000 };

static double *unary_inputs(int *n)
{
    const int ne = N_OF(edge_in);
    double *x = malloc(sizeof(double) * (size_t)(ne + N_RANDOM + N_UNIT));
    assert_non_null(x);
    memcpy(x, edge_in, sizeof edge_in);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < N_RANDOM; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double m = (double)(s >> 11) * 0x1p-53; /* [0, 1), 53 random bits */
        const int e = (int)((s >> 3) % 64u) - 40;      /* 2^-40 .. 2^23 */
        x[ne + i] = ((s & 1u) ? -1.0 : 1.0) * ldexp(1.0 + m, e);
    }
    /* uniform over [-1, 1): the domain of acos and asin */
    for (int i = 0; i < N_UNIT; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[ne + N_RANDOM + i] = (double)(s >> 11) * 0x1p-52 - 1.0;
    }
    *n = ne + N_RANDOM + N_UNIT;
    return x;
}

typedef td_status (*unary_fn)(const td_tensor *a, td_tensor **out);

static double sigmoid_ref(double x)
{
    return x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

/* x/2 (1 + erf(x / sqrt 2)) = x/2 erfc(-x / sqrt 2), in long double (x / sqrt 2 rounded to a
 * double would move erfc's far tail by 2 z^2 ULP); PyTorch's NaN at -inf, x at +inf. */
static double gelu_ref(double x)
{
    if (isinf(x))
        return x > 0.0 ? x : NAN;
    return (double)(0.5L * (long double)x * erfcl(-(long double)x * 0.70710678118654752440084436210484903928L));
}

/* torch.remainder from C's fmod (exact): plus y where the remainder is nonzero and its sign
 * differs from y's. */
static double rem_ref(double x, double y)
{
    double m = fmod(x, y);
    if (m != 0.0 && !isnan(m) && signbit(m) != signbit(y))
        m += y;
    return m;
}

/* Runs op on the inputs and returns the results (the caller frees them), or NULL after checking
 * the refusal on a device without shaderFloat64. */
static double *run_unary(const char *name, unary_fn f, float s0, float s1, int kind, const double *x, int n)
{
    const int64_t shape[1] = { n };
    td_tensor *a = NULL, *r = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, x, shape, 1, &a), "from_data");
    td_status st;
    if (kind == 1)
        st = td_float_powf_scalar(a, s0, &r);
    else if (kind == 2)
        st = td_float_clamp(a, s0, s1, &r);
    else if (kind == 3)
        st = td_float_add_scalar(a, s0, &r);
    else if (kind == 4)
        st = td_float_mul_scalar(a, s0, &r);
    else if (kind == 5)
        st = td_float_remainder_scalar(a, s0, &r);
    else
        st = f(a, &r);
    td_tensor_release(a);
    if (!has_f64) {
        assert_int_equal(st, TD_E_UNSUPPORTED);
        assert_non_null(strstr(td_last_error(), "shaderFloat64"));
        assert_null(r);
        return NULL;
    }
    tdt_check(st, name);
    double *g = malloc(sizeof(double) * (size_t)n);
    assert_non_null(g);
    tdt_check(td_float_into_data_dtype(r, TD_F64, g, n), "read");
    td_tensor_release(r);
    return g;
}

static void test_unary(void **state)
{
    (void)state;
    int n = 0;
    double *x = unary_inputs(&n);
    /* (gelu's bound: the uniform inputs of [-1, 1) added for acos and asin found 7 ULP there) */
    /* kind: 0 plain, 1 powf_scalar, 2 clamp, 3 add_scalar, 4 mul_scalar, 5 remainder_scalar
     * (exact); bounds in ULP (acos, asin, atan: the reduction's and the series' roundings, a
     * square root and a division; 2 measured on lavapipe):
     * exp and log a few rounding errors of the reduction and the polynomial; tanh and sigmoid
     * a division of two such; sqrt within 1 ULP (a Newton step whose rounding can miss a
     * near-midpoint) */
    static const struct {
        const char *name;
        unary_fn f;
        int kind;
        float s0, s1;
        double bound;
    } ops[] = {
        { "exp", td_float_exp, 0, 0, 0, 2 },          { "log", td_float_log, 0, 0, 0, 2 },
        { "sqrt", td_float_sqrt, 0, 0, 0, 1 },        { "tanh", td_float_tanh, 0, 0, 0, 4 },
        { "sigmoid", td_float_sigmoid, 0, 0, 0, 4 },  { "neg", td_float_neg, 0, 0, 0, 0 },
        { "abs", td_float_abs, 0, 0, 0, 0 },          { "relu", td_float_relu, 0, 0, 0, 0 },
        { "pow 0.5", NULL, 1, 0.5f, 0, 0 },          { "pow 3", NULL, 1, 3.0f, 0, 0 },
        { "pow -2.5", NULL, 1, -2.5f, 0, 0 },        { "pow 1e-3", NULL, 1, 1e-3f, 0, 0 },
        { "clamp", NULL, 2, -1.5f, 2.25f, 0 },       { "add_scalar", NULL, 3, 0.1f, 0, 0 },
        { "mul_scalar", NULL, 4, -3.3f, 0, 0 },
        { "sin", td_float_sin, 0, 0, 0, 2 },          { "cos", td_float_cos, 0, 0, 0, 2 },
        { "gelu", td_float_gelu, 0, 0, 0, 8 }, /* 7 measured near x = -0.95 (1 + erf z of z ~ -0.67) */
        { "tan", td_float_tan, 0, 0, 0, 4 },          { "erf", td_float_erf, 0, 0, 0, 4 },
        { "log1p", td_float_log1p, 0, 0, 0, 4 },      { "ceil", td_float_ceil, 0, 0, 0, 0 },
        { "floor", td_float_floor, 0, 0, 0, 0 },      { "round", td_float_round, 0, 0, 0, 0 },
        { "trunc", td_float_trunc, 0, 0, 0, 0 },
        { "acos", td_float_acos, 0, 0, 0, 3 },        { "asin", td_float_asin, 0, 0, 0, 3 },
        { "atan", td_float_atan, 0, 0, 0, 3 },
        { "remainder_scalar 0.7", NULL, 5, 0.7f, 0, 0 },
        { "remainder_scalar -2.5", NULL, 5, -2.5f, 0, 0 },
    };
    int bad = 0;
    for (int k = 0; k < N_OF(ops); k++) {
        double *g = run_unary(ops[k].name, ops[k].f, ops[k].s0, ops[k].s1, ops[k].kind, x, n);
        if (g == NULL)
            continue;
        const double s0 = ops[k].s0, s1 = ops[k].s1;
        int bad_op = 0;
        double worst = 0.0;
        for (int i = 0; i < n; i++) {
            const double v = x[i];
            double want = 0, bound = ops[k].bound;
            switch (ops[k].kind) {
            case 1:
                want = pow(v, s0);
                /* e^(y ln|x|), ln|x| and the product rounded (mathd.glsl): 2 |y ln|x|| ULP
                 * expected, 4 |y ln|x|| + 8 allowed */
                if (v != 0.0 && isfinite(v))
                    bound = 4.0 * fabs(s0 * log(fabs(v))) + 8.0;
                break;
            case 2: want = isnan(v) ? v : v < s0 ? s0 : v > s1 ? s1 : v; break;
            case 3: want = v + s0; break;
            case 4: want = v * s0; break;
            case 5: want = rem_ref(v, s0); break;
            default:
                if (ops[k].f == td_float_exp)
                    want = exp(v);
                else if (ops[k].f == td_float_log)
                    want = log(v);
                else if (ops[k].f == td_float_sqrt)
                    want = sqrt(v);
                else if (ops[k].f == td_float_tanh)
                    want = tanh(v);
                else if (ops[k].f == td_float_sigmoid)
                    want = sigmoid_ref(v);
                else if (ops[k].f == td_float_neg)
                    want = -v;
                else if (ops[k].f == td_float_abs)
                    want = fabs(v);
                else if (ops[k].f == td_float_sin) /* long double: glibc's double cos of the */
                    want = (double)sinl((long double)v); /* worst case below is 12 ULP off */
                else if (ops[k].f == td_float_cos)
                    want = (double)cosl((long double)v);
                else if (ops[k].f == td_float_gelu)
                    want = gelu_ref(v);
                else if (ops[k].f == td_float_tan)
                    want = (double)tanl((long double)v);
                else if (ops[k].f == td_float_erf)
                    want = erf(v);
                else if (ops[k].f == td_float_log1p)
                    want = log1p(v);
                else if (ops[k].f == td_float_ceil)
                    want = ceil(v);
                else if (ops[k].f == td_float_floor)
                    want = floor(v);
                else if (ops[k].f == td_float_round)
                    want = nearbyint(v); /* half to even, as torch.round */
                else if (ops[k].f == td_float_trunc)
                    want = trunc(v);
                else if (ops[k].f == td_float_acos)
                    want = (double)acosl((long double)v);
                else if (ops[k].f == td_float_asin)
                    want = (double)asinl((long double)v);
                else if (ops[k].f == td_float_atan)
                    want = (double)atanl((long double)v);
                else
                    want = v < 0.0 ? 0.0 : v;
            }
            if (!isnan(want) && !isinf(want) && !isnan(g[i]) && ulps(g[i], want) > worst)
                worst = ulps(g[i], want);
            if (!close_to(ops[k].name, v, g[i], want, bound) && ++bad_op > 20)
                break;
        }
        if (ops[k].bound > 0)
            print_message("%s: at most %.0f ULP from libm over %d values\n", ops[k].name, worst, n);
        bad += bad_op;
        free(g);
    }
    free(x);
    assert_int_equal(bad, 0);
}

/* Binary ops through a broadcast: a [3, 1, 5] with b [4, 1] -> [3, 4, 5], and same-shape
 * operands; the values mix specials with random ones, compared exactly (pow within its bound). */
static void test_binary(void **state)
{
    (void)state;
    static const double sp[] = { 0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 0x1p-1074, 1e308, -1e308, INFINITY, -INFINITY, NAN };
    const int64_t as[3] = { 3, 1, 5 }, bs[2] = { 4, 1 }, os[3] = { 3, 4, 5 };
    double a[15], b[60], bb[4];
    uint64_t s = 12345;
    for (int i = 0; i < 15; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = i < 6 ? sp[i * 2] : ((double)(s >> 11) * 0x1p-53 - 0.5) * 8.0;
    }
    for (int i = 0; i < 4; i++)
        bb[i] = sp[(i * 5 + 1) % N_OF(sp)];
    bb[3] = 0.7;
    for (int i = 0; i < 60; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = i < N_OF(sp) ? sp[i] : ((double)(s >> 11) * 0x1p-53 - 0.5) * 1e3;
    }
    typedef td_status (*bin_fn)(const td_tensor *, const td_tensor *, td_tensor **);
    static const struct {
        const char *name;
        bin_fn f;
        bool cmp;
    } ops[] = {
        { "add", td_float_add, false },        { "sub", td_float_sub, false },
        { "mul", td_float_mul, false },        { "div", td_float_div, false },
        { "maximum", td_float_maximum, false }, { "minimum", td_float_minimum, false },
        { "powf", td_float_powf, false },      { "equal", td_float_equal, true },
        { "greater", td_float_greater, true }, { "greater_equal", td_float_greater_equal, true },
        { "lower", td_float_lower, true },     { "lower_equal", td_float_lower_equal, true },
    };
    td_tensor *ta = NULL, *tb = NULL, *tc = NULL, *td = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, a, as, 3, &ta), "from_data");
    tdt_check(td_float_from_data_dtype(vk, TD_F64, bb, bs, 2, &tb), "from_data");
    /* same shapes: c = the broadcast of a (built on the host), d = b's 60 values */
    double c[60];
    for (int i = 0; i < 60; i++)
        c[i] = a[(i / 20) * 5 + i % 5];
    tdt_check(td_float_from_data_dtype(vk, TD_F64, c, os, 3, &tc), "from_data");
    tdt_check(td_float_from_data_dtype(vk, TD_F64, b, os, 3, &td), "from_data");
    int bad = 0;
    for (int k = 0; k < N_OF(ops); k++) {
        for (int form = 0; form < 2; form++) {
            td_tensor *r = NULL;
            const td_status st = form == 0 ? ops[k].f(ta, tb, &r) : ops[k].f(tc, td, &r);
            if (!has_f64) {
                assert_int_equal(st, TD_E_UNSUPPORTED);
                assert_non_null(strstr(td_last_error(), "shaderFloat64"));
                continue;
            }
            tdt_check(st, ops[k].name);
            double g[60];
            bool gb[60];
            if (ops[k].cmp)
                tdt_check(td_bool_into_data(r, gb, 60), "read");
            else
                tdt_check(td_float_into_data_dtype(r, TD_F64, g, 60), "read");
            td_tensor_release(r);
            for (int i = 0; i < 60; i++) {
                const double x = form == 0 ? a[(i / 20) * 5 + i % 5] : c[i];
                const double y = form == 0 ? bb[(i / 5) % 4] : b[i];
                double want = 0, bound = 0;
                bool wb = false;
                switch (k) {
                case 0: want = x + y; break;
                case 1: want = x - y; break;
                case 2: want = x * y; break;
                case 3: want = x / y; break;
                case 4: want = (isnan(x) || x > y) ? x : y; break;
                case 5: want = (isnan(x) || x < y) ? x : y; break;
                case 6:
                    want = pow(x, y);
                    if (x != 0.0 && isfinite(x) && isfinite(y))
                        bound = 4.0 * fabs(y * log(fabs(x))) + 8.0;
                    break;
                case 7: wb = x == y; break;
                case 8: wb = x > y; break;
                case 9: wb = x >= y; break;
                case 10: wb = x < y; break;
                default: wb = x <= y; break;
                }
                if (ops[k].cmp) {
                    if (gb[i] != wb) {
                        print_message("%s(%.17g, %.17g): vulkan %d, C %d\n", ops[k].name, x, y, gb[i], wb);
                        bad++;
                    }
                } else if (!close_to(ops[k].name, x, g[i], want, bound)) {
                    print_message("  (second operand %.17g, %s)\n", y, form == 0 ? "broadcast" : "same shape");
                    bad++;
                }
            }
        }
    }
    td_tensor_release(ta);
    td_tensor_release(tb);
    td_tensor_release(tc);
    td_tensor_release(td);
    assert_int_equal(bad, 0);
}

/* Reads r (f64, n elements) into got and releases it. */
static void read_f64(td_tensor *r, double *got, int n)
{
    tdt_check(td_float_into_data_dtype(r, TD_F64, got, n), "read");
    td_tensor_release(r);
}

/* The f64 reductions (reduce.comp's TD_F64 form) over rows longer than one pass's chunk (4096),
 * so that double partials are chained through a second pass. Row r of x [2, N] holds
 * 1 + (i + r) 2^-30: every partial sum is exact in double (under 2^53 in units of 2^-30) and
 * lost in float, so the sums must equal the values computed here exactly; the mean is the
 * sum divided once. Row 0 has its largest value at 6001 and again at 7000 (the first wins),
 * its smallest at 4500; the product row holds 2^100 five times and 3 once: 3 * 2^500, exact
 * in double and out of float's range. */
static void test_reduce(void **state)
{
    (void)state;
    enum { N = 9000 };
    static double x[2 * N], q[N];
    double want_sum[2] = { 0.0, 0.0 };
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++) {
            x[r * N + i] = 1.0 + (double)(i + r) * 0x1p-30;
        }
    x[6001] = 7.0;
    x[7000] = 7.0;
    x[4500] = -2.5;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < N; i++)
            want_sum[r] += x[r * N + i];
    for (int i = 0; i < N; i++)
        q[i] = 1.0;
    for (int k = 0; k < 5; k++)
        q[1000 + 1500 * k] = 0x1p100;
    q[8999] = 3.0;
    const int64_t shape[2] = { 2, N }, qshape[1] = { N };
    td_tensor *a = NULL, *b = NULL, *r = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, x, shape, 2, &a), "from_data");
    tdt_check(td_float_from_data_dtype(vk, TD_F64, q, qshape, 1, &b), "from_data");
    const td_status st = td_float_sum_dim(a, 1, &r);
    if (!has_f64) {
        assert_int_equal(st, TD_E_UNSUPPORTED);
        assert_non_null(strstr(td_last_error(), "shaderFloat64"));
        assert_null(r);
        td_tensor_release(a);
        td_tensor_release(b);
        return;
    }
    double got[2];
    int bad = 0;
    tdt_check(st, "sum_dim");
    read_f64(r, got, 2);
    for (int k = 0; k < 2; k++)
        bad += !close_to("sum_dim", (double)k, got[k], want_sum[k], 0);
    tdt_check(td_float_sum(a, &r), "sum");
    read_f64(r, got, 1);
    bad += !close_to("sum", 0.0, got[0], want_sum[0] + want_sum[1], 0);
    tdt_check(td_float_mean_dim(a, 1, &r), "mean_dim");
    read_f64(r, got, 2);
    for (int k = 0; k < 2; k++)
        bad += !close_to("mean_dim", (double)k, got[k], want_sum[k] / N, 0);
    tdt_check(td_float_max_dim(a, 1, &r), "max_dim");
    read_f64(r, got, 2);
    bad += !close_to("max_dim", 0.0, got[0], 7.0, 0);
    bad += !close_to("max_dim", 1.0, got[1], 1.0 + (double)N * 0x1p-30, 0);
    tdt_check(td_float_min_dim(a, 1, &r), "min_dim");
    read_f64(r, got, 2);
    bad += !close_to("min_dim", 0.0, got[0], -2.5, 0);
    bad += !close_to("min_dim", 1.0, got[1], 1.0 + 0x1p-30, 0);
    int32_t idx[2];
    tdt_check(td_float_argmax(a, 1, &r), "argmax");
    tdt_check(td_int_into_data(r, idx, 2), "read");
    td_tensor_release(r);
    if (idx[0] != 6001 || idx[1] != N - 1) {
        print_message("argmax: vulkan %d %d, want 6001 %d\n", idx[0], idx[1], N - 1);
        bad++;
    }
    tdt_check(td_float_argmin(a, 1, &r), "argmin");
    tdt_check(td_int_into_data(r, idx, 2), "read");
    td_tensor_release(r);
    if (idx[0] != 4500 || idx[1] != 0) {
        print_message("argmin: vulkan %d %d, want 4500 0\n", idx[0], idx[1]);
        bad++;
    }
    tdt_check(td_float_prod(b, &r), "prod");
    read_f64(r, got, 1);
    bad += !close_to("prod", 0.0, got[0], 3.0 * 0x1p500, 0);
    tdt_check(td_float_prod_dim(b, 0, &r), "prod_dim");
    read_f64(r, got, 1);
    bad += !close_to("prod_dim", 0.0, got[0], 3.0 * 0x1p500, 0);
    td_tensor_release(a);
    td_tensor_release(b);
    assert_int_equal(bad, 0);
}

/* Sort order of the reference: NaN last, ties by index (stable); descending reverses the
 * values only. */
static int sort_desc;
static const double *sort_keys;

static int cmp_index(const void *pa, const void *pb)
{
    const int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    const double x = sort_keys[a], y = sort_keys[b];
    const bool nx = isnan(x), ny = isnan(y);
    int c = 0;
    if (nx != ny)
        c = nx ? 1 : -1;
    else if (!nx && x != y)
        c = x < y ? -1 : 1;
    if (sort_desc)
        c = -c;
    return c != 0 ? c : (a > b) - (a < b);
}

/* sort.comp's TD_F64 form over a line of 1500 (six blocks of 256: three merge passes) whose
 * values differ only below float's precision (1 + j 2^-40, each three times, so ties test the
 * stability), with a NaN and -inf: argsort ascending and descending against qsort by (value,
 * index) here, the sorted values bit for bit, and argtopk's first 7. */
static void test_sort(void **state)
{
    (void)state;
    enum { N = 1500 };
    static double x[N], g[N];
    static int32_t want[N], got[N];
    for (int i = 0; i < N; i++)
        x[i] = 1.0 + (double)((i * 7919) % 500) * 0x1p-40;
    x[100] = NAN;
    x[1200] = -INFINITY;
    const int64_t shape[1] = { N };
    td_tensor *a = NULL, *r = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, x, shape, 1, &a), "from_data");
    const td_status st = td_float_argsort(a, 0, 0, &r);
    if (!has_f64) {
        assert_int_equal(st, TD_E_UNSUPPORTED);
        assert_non_null(strstr(td_last_error(), "shaderFloat64"));
        td_tensor_release(a);
        return;
    }
    tdt_check(st, "argsort");
    int bad = 0;
    sort_keys = x;
    for (int desc = 0; desc < 2; desc++) {
        if (desc)
            tdt_check(td_float_argsort(a, 0, 1, &r), "argsort descending");
        tdt_check(td_int_into_data(r, got, N), "read");
        td_tensor_release(r);
        for (int i = 0; i < N; i++)
            want[i] = i;
        sort_desc = desc;
        qsort(want, N, sizeof want[0], cmp_index);
        for (int i = 0; i < N; i++)
            if (got[i] != want[i] && bad++ < 10)
                print_message("argsort (descending %d) [%d]: vulkan %d, want %d\n", desc, i, got[i], want[i]);
        tdt_check(td_float_sort(a, 0, desc, &r), "sort");
        read_f64(r, g, N);
        for (int i = 0; i < N; i++)
            if (!same_bits(g[i], x[want[i]]) && !(isnan(g[i]) && isnan(x[want[i]])) && bad++ < 10)
                print_message("sort (descending %d) [%d]: vulkan %.17g, want %.17g\n", desc, i, g[i], x[want[i]]);
        if (desc) {
            tdt_check(td_float_argtopk(a, 7, 0, &r), "argtopk");
            tdt_check(td_int_into_data(r, got, 7), "read");
            td_tensor_release(r);
            for (int i = 0; i < 7; i++)
                if (got[i] != want[i] && bad++ < 10)
                    print_message("argtopk [%d]: vulkan %d, want %d\n", i, got[i], want[i]);
        }
    }
    td_tensor_release(a);
    assert_int_equal(bad, 0);
}

/* index.comp's f64 adds: scatter_add and select_add of 2^-40 and 3 2^-41 into ones (index 2
 * twice for scatter_add, in order), exact in double and lost in float: the hand sums exactly. */
static void test_scatter_add(void **state)
{
    (void)state;
    const double one[4] = { 1.0, 1.0, 1.0, 1.0 }, v[3] = { 0x1p-40, 3 * 0x1p-41, -0x1p-42 };
    const int32_t ix[3] = { 2, 0, 2 };
    const int64_t s4[1] = { 4 }, s3[1] = { 3 };
    td_tensor *a = NULL, *val = NULL, *ind = NULL, *r = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, one, s4, 1, &a), "from_data");
    tdt_check(td_float_from_data_dtype(vk, TD_F64, v, s3, 1, &val), "from_data");
    tdt_check(td_int_from_data(vk, ix, s3, 1, &ind), "from_data");
    const td_status st = td_float_scatter_add(a, 0, ind, val, &r);
    if (!has_f64) {
        assert_int_equal(st, TD_E_UNSUPPORTED);
        assert_non_null(strstr(td_last_error(), "shaderFloat64"));
    } else {
        tdt_check(st, "scatter_add");
        const double want[4] = { 1.0 + 3 * 0x1p-41, 1.0, 1.0 + 0x1p-40 - 0x1p-42, 1.0 };
        double got[4];
        int bad = 0;
        read_f64(r, got, 4);
        for (int k = 0; k < 4; k++)
            bad += !close_to("scatter_add", (double)k, got[k], want[k], 0);
        tdt_check(td_float_select_add(a, 0, ind, val, &r), "select_add");
        read_f64(r, got, 4);
        for (int k = 0; k < 4; k++)
            bad += !close_to("select_add", (double)k, got[k], want[k], 0);
        assert_int_equal(bad, 0);
    }
    td_tensor_release(a);
    td_tensor_release(val);
    td_tensor_release(ind);
}

/* ewd.comp's binary float math on a grid: y [NV, 1] against x [NV] (a broadcast), every pair of
 * signed zeros, subnormals, ones, huge values, infinities and NaN with random values over many
 * binades: atan2 against long-double atan2l rounded to double (within 3 ULP; every special case
 * of C99 F.9.1.4 bit for bit, signs of zero included), remainder exactly against C's fmod
 * (exact) with torch.remainder's sign rule (rem_ref). */
static void test_atan2_remainder(void **state)
{
    (void)state;
    enum { NV = 36 };
    double v[NV] = { 0.0, -0.0, 0x1p-1074, -0x1p-1070, DBL_MIN, 1e-300, 1.0, -1.0, 0.5, -2.0, 3.0, 0.7,
                     1e300, -1e300, DBL_MAX, INFINITY, -INFINITY, NAN, 1e-20, -7.25, 2.5, 1e20 };
    uint64_t s = 777;
    for (int i = 22; i < NV; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double m = (double)(s >> 11) * 0x1p-53;
        v[i] = ((s & 1u) ? -1.0 : 1.0) * ldexp(1.0 + m, (int)((s >> 3) % 120u) - 60);
    }
    const int64_t ys[2] = { NV, 1 }, xs[1] = { NV };
    td_tensor *ty = NULL, *tx = NULL, *r = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, v, ys, 2, &ty), "from_data");
    tdt_check(td_float_from_data_dtype(vk, TD_F64, v, xs, 1, &tx), "from_data");
    int bad = 0;
    for (int op = 0; op < 2; op++) {
        const td_status st = op == 0 ? td_float_atan2(ty, tx, &r) : td_float_remainder(ty, tx, &r);
        if (!has_f64) {
            assert_int_equal(st, TD_E_UNSUPPORTED);
            assert_non_null(strstr(td_last_error(), "shaderFloat64"));
            continue;
        }
        tdt_check(st, op == 0 ? "atan2" : "remainder");
        static double g[NV * NV];
        double worst = 0.0;
        read_f64(r, g, NV * NV);
        for (int i = 0; i < NV; i++)
            for (int j = 0; j < NV; j++) {
                const double y = v[i], x = v[j];
                const double want = op == 0 ? (double)atan2l((long double)y, (long double)x) : rem_ref(y, x);
                if (!isnan(want) && !isinf(want) && !isnan(g[i * NV + j]) && ulps(g[i * NV + j], want) > worst)
                    worst = ulps(g[i * NV + j], want);
                if (!close_to(op == 0 ? "atan2" : "remainder", y, g[i * NV + j], want, op == 0 ? 3.0 : 0.0)) {
                    print_message("  (second operand %.17g)\n", x);
                    bad++;
                }
            }
        print_message("%s: at most %.0f ULP from libm over %d pairs\n", op == 0 ? "atan2" : "remainder", worst, NV * NV);
    }
    td_tensor_release(ty);
    td_tensor_release(tx);
    assert_int_equal(bad, 0);
}

/* Composites in f64 (sinh, div_scalar): their decompositions make tensors from nothing
 * (float_full, int_into_float) in the input's dtype through the pieces' _dtype twins, so they
 * run in f64. Before, those tensors were f32 and met the f64 input (TD_E_DTYPE). The bound, 64
 * ULP of f64, is 2^23 times tighter than f32's precision, so a result computed in f32 fails it. */
static void test_f64_composites(void **state)
{
    (void)state;
    const double x[5] = { 0.5, 1.0, -3.0, 1e-3, 20.0 };
    const int64_t shape[1] = { 5 };
    td_tensor *a = NULL, *r = NULL, *q = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F64, x, shape, 1, &a), "from_data");
    const td_status st = td_float_sinh(a, &r);
    if (!has_f64) {
        assert_int_equal(st, TD_E_UNSUPPORTED);
        assert_null(r);
        td_tensor_release(a);
        return;
    }
    tdt_check(st, "sinh");
    tdt_check(td_float_div_scalar(a, 3.0f, &q), "div_scalar");
    td_dtype dr = TD_F32, dq = TD_F32;
    tdt_check(td_tensor_dtype(r, &dr), "dtype");
    tdt_check(td_tensor_dtype(q, &dq), "dtype");
    assert_int_equal(dr, TD_F64);
    assert_int_equal(dq, TD_F64);
    double g[5], h[5];
    tdt_check(td_float_into_data_dtype(r, TD_F64, g, 5), "read");
    tdt_check(td_float_into_data_dtype(q, TD_F64, h, 5), "read");
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        bad += !close_to("sinh", x[i], g[i], sinh(x[i]), 64.0);
        bad += !close_to("div_scalar", x[i], h[i], x[i] / 3.0, 1.0);
    }
    td_tensor_release(a);
    td_tensor_release(r);
    td_tensor_release(q);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_unary),
        TDT_TEST(test_binary),
        TDT_TEST(test_reduce),
        TDT_TEST(test_sort),
        TDT_TEST(test_scatter_add),
        TDT_TEST(test_atan2_remainder),
        TDT_TEST(test_f64_composites),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
