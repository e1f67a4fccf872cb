/* The cpu backend's vector kernels (cpu_vecmath.c, cpu_reduce.c) against plain loops in double
 * written here, on sizes that leave vector tails and partial chunks, large enough to be
 * threaded, and on reductions along inner, middle and outer dims. ctest runs this program
 * three times: at the processor's vector level, and with TD_CPU_CAPABILITY=avx2 and =default
 * (libm and scalar loops), so every path is checked on a machine that has AVX-512.
 *
 * Tolerances (docs/kernels.md has the bounds the kernels keep):
 *   exp, log, sin, cos: 1 ULP of the exact result (SLEEF _u10: 1.0 ULP; glibc: below 1)
 *   tanh: 3.5 ULP (SLEEF _u35 tanh); sigmoid: 3 ULP (exp, an addition, a division)
 *   gelu: 1e-6 * max(1, |x|) absolute; and (test_gelu_relative) 3.5 ULP for x >= -1, 1e-6
 *   relative below (Phi from its own polynomials, no 1 + erf cancelling); its gradient
 *   5e-7 |g| absolute and 2e-6 relative for x < -1
 *   sum, mean: |got - ref| <= 1e-6 * sum |x| (double accumulators, one f32 rounding)
 *   max, min, argmax, argmin: exact, first index on ties, NaN wins (the first one). */
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

#include "td_ops.h"
#include "tdt.h"

static td_device *dev;

static int setup(void **state)
{
    (void)state;
    const char *cap = getenv("TD_CPU_CAPABILITY");
    print_message("TD_CPU_CAPABILITY=%s\n", cap != NULL ? cap : "(unset: the processor's level)");
    return td_device_open(TD_BACKEND_CPU, 0, &dev) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(dev);
    return 0;
}

static uint64_t rng = 0x9E3779B97F4A7C15u;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* The spacing of floats at |r| (the smallest subnormal below the normal range). */
static double ulp_of(double r)
{
    const float f = fabsf((float)r);
    if (!(f >= 1.17549435e-38f))
        return ldexp(1.0, -149);
    int e;
    frexp(f, &e);
    return ldexp(1.0, e - 24);
}

/* ---- transcendentals ---- */

typedef td_status (*unary_fn)(const td_tensor *, td_tensor **);
typedef struct vop {
    const char *name;
    unary_fn fn;
    double (*ref)(double);
    double lo, hi;  /* random inputs in [lo, hi) */
    double ulps;    /* bound in ULP of the exact result; 0: abs_scale instead */
    double abs_scale;
} vop;

static double sigmoid_ref(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static double gelu_ref(double x)
{
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

static const vop vops[] = {
    { "exp", td_float_exp, exp, -87.0, 88.0, 1.0, 0 },
    { "log", td_float_log, log, 1e-3, 1e4, 1.0, 0 },
    { "sin", td_float_sin, sin, -100.0, 100.0, 1.0, 0 },
    { "cos", td_float_cos, cos, -100.0, 100.0, 1.0, 0 },
    { "tanh", td_float_tanh, tanh, -12.0, 12.0, 3.5, 0 },
    { "sigmoid", td_float_sigmoid, sigmoid_ref, -80.0, 30.0, 3.0, 0 },
    { "gelu", td_float_gelu, gelu_ref, -12.0, 12.0, 0, 1e-6 },
};

/* Sizes around the 8- and 16-lane vectors, the 16384-element chunks and the thread threshold. */
static const int64_t vsizes[] = { 1, 7, 8, 15, 17, 16384 + 5, 40000 + 3 };

static void check_vop(const vop *op, int64_t n)
{
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    assert_true(x != NULL && y != NULL);
    for (int64_t i = 0; i < n; i++) {
        /* a quarter of the values near 0, where relative errors show */
        const double u = uniform();
        x[i] = (float)(i % 4 == 0 && op->lo < 0 ? (u - 0.5) * 0.01 : op->lo + u * (op->hi - op->lo));
    }
    td_tensor *t = NULL, *o = NULL;
    tdt_check(td_float_from_data(dev, x, &n, 1, &t), "from_data");
    tdt_check(op->fn(t, &o), op->name);
    tdt_check(td_float_into_data(o, y, n), "into_data");
    for (int64_t i = 0; i < n; i++) {
        const double r = op->ref((double)x[i]), err = fabs((double)y[i] - r);
        const double bound = op->ulps > 0 ? op->ulps * ulp_of(r) : op->abs_scale * fmax(1.0, fabs((double)x[i]));
        if (!(err <= bound))
            fail_msg("%s(%.9g) = %.9g, want %.9g (n = %lld, element %lld)", op->name, (double)x[i], (double)y[i], r,
                     (long long)n, (long long)i);
    }
    td_tensor_release(t);
    td_tensor_release(o);
    free(x);
    free(y);
}

static void test_transcendentals_within_bounds(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof vops / sizeof vops[0]; k++)
        for (size_t s = 0; s < sizeof vsizes / sizeof vsizes[0]; s++)
            check_vop(&vops[k], vsizes[s]);
}

/* Special values through every lane position of a vector and its tail. */
static void test_transcendentals_special_values(void **state)
{
    (void)state;
    static const float in[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 100.0f, -100.0f, 20.0f, -20.0f, -1.0f, 1e-30f };
    enum { NIN = sizeof in / sizeof in[0], N = 37 };
    float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = in[i % NIN];
    int64_t n = N;
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(dev, x, &n, 1, &t), "from_data");
    for (size_t k = 0; k < sizeof vops / sizeof vops[0]; k++) {
        td_tensor *o = NULL;
        tdt_check(vops[k].fn(t, &o), vops[k].name);
        tdt_check(td_float_into_data(o, y, N), "into_data");
        for (int i = 0; i < N; i++) {
            const double r = vops[k].ref((double)x[i]);
            bool ok;
            if (isnan(r))
                ok = isnan(y[i]);
            else if (isinf(r) || fabs(r) > 3.4028234663852886e38)
                ok = (double)y[i] == (r > 0 ? INFINITY : -INFINITY);
            else
                ok = fabs((double)y[i] - r) <= fmax(4.0 * ulp_of(r), 1e-6 * fmax(1.0, fabs((double)x[i])));
            if (!ok)
                fail_msg("%s(%g) = %g, want %g", vops[k].name, (double)x[i], (double)y[i], r);
        }
        td_tensor_release(o);
    }
    td_tensor_release(t);
}

/* gelu and its gradient against the normal CDF in double (erfc, no cancellation): every path
 * keeps a relative bound in the lower tail, where 1 + erf(x / sqrt 2) used to cancel. */
static void test_gelu_relative(void **state)
{
    (void)state;
    int64_t n = 100003;
    float *x = malloc(sizeof(float) * (size_t)n), *g = malloc(sizeof(float) * (size_t)n);
    float *y = malloc(sizeof(float) * (size_t)n), *yb = malloc(sizeof(float) * (size_t)n);
    assert_true(x != NULL && g != NULL && y != NULL && yb != NULL);
    for (int64_t i = 0; i < n; i++) {
        const double u = uniform();
        x[i] = (float)(i % 3 == 0 ? -9.0 + 8.0 * u : i % 3 == 1 ? -1.0 + 13.0 * u : (u - 0.5) * 0.02);
        g[i] = (float)(4.0 * uniform() - 2.0);
    }
    td_tensor *t = NULL, *tg = NULL, *o = NULL, *ob = NULL;
    tdt_check(td_float_from_data(dev, x, &n, 1, &t), "from_data");
    tdt_check(td_float_from_data(dev, g, &n, 1, &tg), "from_data");
    tdt_check(td_float_gelu(t, &o), "gelu");
    tdt_check(td_float_gelu_backward(tg, t, &ob), "gelu_backward");
    tdt_check(td_float_into_data(o, y, n), "into_data");
    tdt_check(td_float_into_data(ob, yb, n), "into_data");
    for (int64_t i = 0; i < n; i++) {
        const double xd = x[i], cdf = 0.5 * erfc(-xd / sqrt(2.0));
        const double r = xd * cdf, err = fabs((double)y[i] - r);
        const bool ok = xd >= -1.0 ? err <= 3.5 * ulp_of(r) : err <= 1e-6 * fabs(r);
        if (!ok)
            fail_msg("gelu(%.9g) = %.9g, want %.9g", xd, (double)y[i], r);
        const double rb = g[i] * (cdf + xd * exp(-xd * xd / 2.0) / 2.5066282746310002) /* sqrt(2 pi) */, eb = fabs((double)yb[i] - rb);
        const bool okb = eb <= 5e-7 * fabs((double)g[i]) && (xd >= -1.0 || eb <= 2e-6 * fabs(rb));
        if (!okb)
            fail_msg("gelu_backward(%.9g, %.9g) = %.9g, want %.9g", (double)g[i], xd, (double)yb[i], rb);
    }
    td_tensor_release(t);
    td_tensor_release(tg);
    td_tensor_release(o);
    td_tensor_release(ob);
    free(x);
    free(g);
    free(y);
    free(yb);
}

/* ---- reductions ---- */

typedef enum rkind { K_SUM, K_MEAN, K_MAX, K_MIN, K_ARGMAX, K_ARGMIN } rkind;
static const char *const rnames[] = { "sum_dim", "mean_dim", "max_dim", "min_dim", "argmax", "argmin" };

static td_status run_dim(rkind k, const td_tensor *t, int64_t dim, td_tensor **out)
{
    switch (k) {
    case K_SUM: return td_float_sum_dim(t, dim, out);
    case K_MEAN: return td_float_mean_dim(t, dim, out);
    case K_MAX: return td_float_max_dim(t, dim, out);
    case K_MIN: return td_float_min_dim(t, dim, out);
    case K_ARGMAX: return td_float_argmax(t, dim, out);
    default: return td_float_argmin(t, dim, out);
    }
}

/* Values with many ties (a few distinct levels) and, where nans, a NaN now and then. */
static float *make_values(int64_t n, bool nans)
{
    float *x = malloc(sizeof(float) * (size_t)n);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++) {
        const double u = uniform();
        x[i] = i % 3 == 0 ? (float)(u * 2.0 - 1.0) : (float)((int)(u * 9.0) - 4);
        if (nans && uniform() < 2e-5)
            x[i] = NAN;
    }
    return x;
}

/* Every reduction of x (shape s, nd dims) along dim, against loops here. */
static void check_dims(const float *x, const int64_t *s, int nd, int64_t dim)
{
    int64_t outer = 1, inner = 1, n = 1;
    for (int d = 0; d < nd; d++) {
        n *= s[d];
        if (d < dim)
            outer *= s[d];
        if (d > dim)
            inner *= s[d];
    }
    const int64_t size = s[dim], nout = outer * inner;
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(dev, x, s, nd, &t), "from_data");
    float *gf = malloc(sizeof(float) * (size_t)nout);
    int32_t *gi = malloc(sizeof(int32_t) * (size_t)nout);
    assert_true(gf != NULL && gi != NULL);
    for (rkind k = K_SUM; k <= K_ARGMIN; k++) {
        td_tensor *o = NULL;
        tdt_check(run_dim(k, t, dim, &o), rnames[k]);
        if (k == K_ARGMAX || k == K_ARGMIN)
            tdt_check(td_int_into_data(o, gi, nout), "into_data");
        else
            tdt_check(td_float_into_data(o, gf, nout), "into_data");
        td_tensor_release(o);
        for (int64_t oo = 0; oo < outer; oo++) {
            for (int64_t j = 0; j < inner; j++) {
                const float *col = x + oo * size * inner + j;
                const int64_t at = oo * inner + j;
                double acc = 0.0, mag = 0.0;
                float best = col[0];
                int32_t bi = 0;
                for (int64_t i = 0; i < size; i++) {
                    const float v = col[i * inner];
                    acc += v;
                    mag += fabs(v);
                    const bool beats = k == K_MIN || k == K_ARGMIN ? v < best : v > best;
                    if (best == best && (beats || v != v)) {
                        best = v;
                        bi = (int32_t)i;
                    }
                }
                bool ok;
                double want;
                if (k == K_SUM || k == K_MEAN) {
                    want = k == K_MEAN ? acc / (double)size : acc;
                    const double tol = 1e-6 * (k == K_MEAN ? mag / (double)size : mag);
                    ok = isnan(want) ? isnan(gf[at]) : fabs((double)gf[at] - want) <= tol;
                } else if (k == K_MAX || k == K_MIN) {
                    want = best;
                    ok = best != best ? gf[at] != gf[at] : gf[at] == best;
                } else {
                    want = bi;
                    ok = gi[at] == bi;
                }
                if (!ok)
                    fail_msg("%s along dim %lld of [%lld, ...] (%d dims), output %lld: got %.9g, want %.9g", rnames[k],
                             (long long)dim, (long long)s[0], nd, (long long)at,
                             k >= K_ARGMAX ? (double)gi[at] : (double)gf[at], want);
            }
        }
    }
    td_tensor_release(t);
    free(gf);
    free(gi);
}

static void check_shape(const int64_t *s, int nd, bool nans)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= s[d];
    float *x = make_values(n, nans);
    for (int64_t dim = 0; dim < nd; dim++)
        check_dims(x, s, nd, dim);
    free(x);
}

/* One long row (the reduced dim cut in segments), and many short ones. */
static void test_reduce_rows(void **state)
{
    (void)state;
    static const int64_t a[] = { 3, 100003 }, b[] = { 1, 1 << 20 };
    check_shape(a, 2, false);
    check_shape(a, 2, true);
    check_shape(b, 2, false);
}

/* Few columns along a long outer dim ([n, 3] along dim 0: segments with a scalar tail). */
static void test_reduce_few_columns(void **state)
{
    (void)state;
    static const int64_t a[] = { 200001, 3 }, b[] = { 70001, 13 };
    check_shape(a, 2, false);
    check_shape(b, 2, true);
}

/* A middle dim: 69 columns are a 64-wide block and a 5-wide one (8-lane loops and a tail). */
static void test_reduce_middle_dim(void **state)
{
    (void)state;
    static const int64_t a[] = { 2, 30011, 69 }, b[] = { 5, 4001, 24 };
    check_shape(a, 3, false);
    check_shape(b, 3, true);
}

/* Wider than one block of columns (2048): along dim 0 of [300, 4100] the columns are blocks of
 * 2048, 2048 and 4 (each cut in segments of rows); [2, 5, 2049] has a 1-column last block. */
static void test_reduce_wide(void **state)
{
    (void)state;
    static const int64_t a[] = { 300, 4100 }, b[] = { 2, 5, 2049 };
    check_shape(a, 2, false);
    check_shape(b, 3, true);
}

/* Whole-tensor sum, mean, max, min, max_abs over sizes around the chunks, with and without NaN. */
static void test_reduce_whole(void **state)
{
    (void)state;
    static const int64_t sizes[] = { 1, 15, 16, 33, 32767, 32768, (INT64_C(1) << 20) + 13 };
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        for (int nan_at = -1; nan_at < 2; nan_at++) {
            const int64_t n = sizes[c];
            float *x = make_values(n, false);
            if (nan_at >= 0)
                x[nan_at == 0 ? 0 : n - 1] = NAN;
            double acc = 0.0, mag = 0.0;
            float mx = x[0], mn = x[0], ma = fabsf(x[0]);
            bool has_nan = false;
            for (int64_t i = 0; i < n; i++) {
                acc += x[i];
                mag += fabs(x[i]);
                has_nan |= x[i] != x[i];
                mx = x[i] > mx ? x[i] : mx;
                mn = x[i] < mn ? x[i] : mn;
                ma = fabsf(x[i]) > ma ? fabsf(x[i]) : ma;
            }
            td_tensor *t = NULL, *o[5] = { NULL };
            int64_t shape = n;
            tdt_check(td_float_from_data(dev, x, &shape, 1, &t), "from_data");
            tdt_check(td_float_sum(t, &o[0]), "sum");
            tdt_check(td_float_mean(t, &o[1]), "mean");
            tdt_check(td_float_max(t, &o[2]), "max");
            tdt_check(td_float_min(t, &o[3]), "min");
            tdt_check(td_float_max_abs(t, &o[4]), "max_abs");
            float g[5];
            for (int k = 0; k < 5; k++) {
                tdt_check(td_float_into_data(o[k], &g[k], 1), "into_data");
                td_tensor_release(o[k]);
            }
            td_tensor_release(t);
            if (has_nan) {
                for (int k = 0; k < 5; k++)
                    if (g[k] == g[k])
                        fail_msg("n = %lld with a NaN: result %d is %g, want NaN", (long long)n, k, (double)g[k]);
            } else {
                assert_true(fabs((double)g[0] - acc) <= 1e-6 * mag);
                assert_true(fabs((double)g[1] - acc / (double)n) <= 1e-6 * mag / (double)n);
                assert_true(g[2] == mx && g[3] == mn && g[4] == ma);
            }
            free(x);
        }
    }
}

/* The same input twice gives the same bits (the split depends on the shape only). */
static void test_reduce_repeatable(void **state)
{
    (void)state;
    static const int64_t s[] = { 7, 300007 };
    float *x = make_values(s[0] * s[1], false);
    td_tensor *t = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    tdt_check(td_float_from_data(dev, x, s, 2, &t), "from_data");
    tdt_check(td_float_sum_dim(t, 1, &a), "sum_dim");
    tdt_check(td_float_sum_dim(t, 1, &b), "sum_dim");
    tdt_check(td_float_sum(t, &c), "sum");
    tdt_check(td_float_sum(t, &d), "sum");
    float ga[7], gb[7], gc, gd;
    tdt_check(td_float_into_data(a, ga, 7), "read");
    tdt_check(td_float_into_data(b, gb, 7), "read");
    tdt_check(td_float_into_data(c, &gc, 1), "read");
    tdt_check(td_float_into_data(d, &gd, 1), "read");
    assert_memory_equal(ga, gb, sizeof ga);
    assert_memory_equal(&gc, &gd, sizeof gc);
    td_tensor *ts[] = { t, a, b, c, d };
    for (int k = 0; k < 5; k++)
        td_tensor_release(ts[k]);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transcendentals_within_bounds),
        cmocka_unit_test(test_transcendentals_special_values),
        cmocka_unit_test(test_gelu_relative),
        cmocka_unit_test(test_reduce_rows),
        cmocka_unit_test(test_reduce_few_columns),
        cmocka_unit_test(test_reduce_middle_dim),
        cmocka_unit_test(test_reduce_wide),
        cmocka_unit_test(test_reduce_whole),
        cmocka_unit_test(test_reduce_repeatable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
