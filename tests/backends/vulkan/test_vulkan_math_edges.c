/* Vulkan float math at the edges of the domain (signed zeros, subnormals, infinities, NaN,
 * overflow and underflow) against the C library computed here, and against the CPU backend.
 *
 * Every expected value comes from <math.h> in this file (powf, logf, expf, ...; sigmoid and
 * gelu from their formulas in double), never from the library under test. A NaN result must
 * be a NaN, an infinite or zero result must match bit for bit (so the sign of a zero or an
 * infinity is checked), and any other result must be within the op's tolerance: a few ULP
 * (ULP distance counts subnormals as steps too), or, for the ops whose precision is only an
 * absolute error (gelu's erf approximation), that absolute error; sin and cos are held to ULPs
 * over the whole float range, huge arguments included (the shaders reduce the argument
 * exactly). The CPU backend is held to the same reference, and Vulkan to the CPU's result as
 * well. Every mismatch is printed before the
 * test fails. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *vk;
static td_device *cpu;

static int setup(void **state)
{
    (void)state;
    if (td_testing_live_objects() != 0)
        return -1;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        fprintf(stderr, "no Vulkan device: %s\n", td_last_error());
        return -1;
    }
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    td_device_release(cpu);
    return td_testing_live_objects() == 0 ? 0 : -1;
}

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Inputs of the unary ops: zeros, subnormals (the smallest, 1e-39, 1e-38), the normal
 * bounds, values whose exp or log overflows or underflows, infinities and NaN. */
static const float unary_in[] = {
    0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 1e-45f, 3e-45f, 1e-40f, 1e-39f, -1e-39f, 5.877472e-39f,
    1e-38f, -1e-38f, 0x1.fffffcp-127f, FLT_MIN, -FLT_MIN, 1e-30f, 1e-7f, 0.25f, 0.5f, -0.5f,
    0.75f, 1.0f, -1.0f, 1.5f, 2.0f, -2.0f, 3.0f, 10.0f, -10.0f, 20.0f, -20.0f, 80.0f, 88.0f,
    88.72f, 89.0f, -87.0f, -88.0f, -95.0f, -100.0f, -103.0f, -104.0f, -110.0f, 1e6f, 1e30f,
    -1e30f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN,
};

/* Bases and exponents of powf: every base with every exponent. */
static const float pow_base[] = {
    -INFINITY, -FLT_MAX, -1e20f, -3.0f, -2.0f, -1.0f, -0.5f, -1e-39f, -0.0f, 0.0f, 0x1p-149f,
    1e-39f, 1e-38f, FLT_MIN, 1e-20f, 0.5f, 0.9f, 1.0f, 1.1f, 2.0f, 3.0f, 10.0f, 1e20f, FLT_MAX,
    INFINITY, NAN,
};
/* Exponents: +-0, +-inf, NaN, subnormal, non-integer, odd and even integers (8388609 and
 * 16777215 are odd, 16777216 is even, 1e10 an even integer). */
static const float pow_exp[] = {
    -INFINITY, -1e10f, -16777216.0f, -16777215.0f, -150.0f, -65.0f, -64.0f, -3.0f, -2.5f, -2.0f,
    -1.0f, -0.5f, -1e-39f, -0.0f, 0.0f, 1e-39f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 7.0f, 10.0f,
    64.0f, 65.0f, 127.0f, 128.5f, 150.0f, 8388609.0f, 16777215.0f, 16777216.0f, 1e10f, INFINITY,
    NAN,
};

/* Extra (base, exponent) pairs: subnormal and overflowing results, exact powers of two. */
static const float pow_pairs[][2] = {
    { 2.0f, -149.0f }, { 2.0f, -150.0f }, { 2.0f, -126.0f }, { 2.0f, -127.0f }, { 2.0f, -140.5f },
    { 0.5f, 140.0f }, { 2.0f, 127.0f }, { 2.0f, 128.0f }, { 2.0f, 127.5f }, { 10.0f, 38.0f },
    { 10.0f, 39.0f }, { 10.0f, -38.0f }, { 10.0f, -40.0f }, { 10.0f, -45.0f }, { 1e20f, -2.0f },
    { 1e20f, -1.9f }, { -1e20f, -2.0f }, { -1e20f, -3.0f }, { 1e-20f, 2.0f }, { 1e-20f, -1.9f },
    { 1e-19f, -2.0f }, { 3e-20f, 2.0f }, { 1e-39f, 0.5f }, { 1e-39f, -0.5f }, { 1e-39f, -1.0f },
    { 1e-45f, -1.0f }, { 1e-45f, 0.25f }, { -1e-39f, 3.0f }, { -1e-39f, -1.0f }, { 1e-39f, 1.0f },
    { 4.0f, 0.5f }, { 8.0f, 1.0f / 3.0f }, { 7.0f, 3.0f }, { 1.5f, 100.0f }, { 0.999f, 1e5f },
    { 1.0001f, -1e6f }, { 3.0f, 80.7f }, { -8.0f, 31.0f }, { -1.0f, 16777216.0f },
    { -1.0f, 8388609.0f }, { -1.0f, 1e30f }, { -2.0f, 1e30f }, { -0.5f, -1e30f },
};

/* Exponents of powf_scalar (each run over unary_in and pow_base). */
static const float pows_exp[] = {
    -INFINITY, -3.0f, -2.5f, -2.0f, -1.0f, -0.5f, -0.0f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f,
    10.0f, 64.0f, 65.0f, 128.5f, INFINITY, NAN,
};

/* ---- comparison ---- */

static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Position on the line of floats ordered by value (-0 and +0 one apart). */
static int64_t ordinal(float x)
{
    const uint32_t u = bits(x);
    return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) - 1 : (int64_t)u;
}

typedef struct tol {
    double ulps;    /* finite nonzero results: ULP distance allowed */
    double abs;     /* ... or this absolute error (0: none) */
    double range;   /* finite inputs above this magnitude: class checked only (0: all) */
} tol;

static bool matches(float got, float want, tol t, bool class_only)
{
    if (isnan(want))
        return isnan(got);
    if (isnan(got))
        return false;
    if (isinf(want) || want == 0.0f) {
        if (bits(got) == bits(want))
            return true;
        /* A zero within an absolute tolerance still needs the right sign. */
        return want == 0.0f && t.abs > 0.0 && fabs((double)got) <= t.abs && signbit(got) == signbit(want);
    }
    if (isinf(got))
        return false;
    if (class_only)
        return true;
    const int64_t d = ordinal(got) - ordinal(want);
    if ((double)(d < 0 ? -d : d) <= t.ulps)
        return true;
    return t.abs > 0.0 && fabs((double)got - (double)want) <= t.abs;
}

static int failures;

static void report(const char *who, const char *op, const float *in, int nin, float got, float want)
{
    if (failures++ >= 200)
        return;
    if (nin == 2)
        printf("  %-18s %-7s (%a, %a): got %a (%.9g), want %a (%.9g)\n", op, who, (double)in[0],
               (double)in[1], (double)got, (double)got, (double)want, (double)want);
    else
        printf("  %-18s %-7s (%a): got %a (%.9g), want %a (%.9g)\n", op, who, (double)in[0], (double)got,
               (double)got, (double)want, (double)want);
}

/* Checks one element: Vulkan and the CPU against the C library, and Vulkan against the CPU. */
static void check(const char *op, const float *in, int nin, float v, float c, float want, tol t)
{
    bool class_only = false;
    for (int k = 0; k < nin; k++)
        if (t.range > 0.0 && isfinite(in[k]) && fabs((double)in[k]) > t.range)
            class_only = true;
    if (!matches(v, want, t, class_only))
        report("vulkan", op, in, nin, v, want);
    if (!matches(c, want, t, class_only))
        report("cpu", op, in, nin, c, want);
    if (!matches(v, c, t, class_only))
        report("vk/cpu", op, in, nin, v, c);
}

/* ---- running ops on both devices ---- */

typedef td_status (*unary_fn)(const td_tensor *a, td_tensor **out);
typedef td_status (*binary_fn)(const td_tensor *a, const td_tensor *b, td_tensor **out);

/* Runs op on x (n elements) on d; result into out. */
static void run_unary(td_device *d, unary_fn op, const float *x, int n, float *out)
{
    const int64_t shape[] = { n };
    td_tensor *a = NULL, *r = NULL;
    tdt_check(td_float_from_data(d, x, shape, 1, &a), "from_data");
    tdt_check(op(a, &r), "unary op");
    tdt_check(td_float_into_data(r, out, n), "into_data");
    td_tensor_release(a);
    td_tensor_release(r);
}

static void run_pows(td_device *d, const float *x, int n, float e, float *out)
{
    const int64_t shape[] = { n };
    td_tensor *a = NULL, *r = NULL;
    tdt_check(td_float_from_data(d, x, shape, 1, &a), "from_data");
    tdt_check(td_float_powf_scalar(a, e, &r), "powf_scalar");
    tdt_check(td_float_into_data(r, out, n), "into_data");
    td_tensor_release(a);
    td_tensor_release(r);
}

/* out[i][j] = op(x[i], y[j]) through broadcasting [nx, 1] with [1, ny]. */
static void run_grid(td_device *d, binary_fn op, const float *x, int nx, const float *y, int ny, float *out)
{
    const int64_t sx[] = { nx, 1 }, sy[] = { 1, ny };
    td_tensor *a = NULL, *b = NULL, *r = NULL;
    tdt_check(td_float_from_data(d, x, sx, 2, &a), "from_data");
    tdt_check(td_float_from_data(d, y, sy, 2, &b), "from_data");
    tdt_check(op(a, b, &r), "binary op");
    tdt_check(td_float_into_data(r, out, (int64_t)nx * ny), "into_data");
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(r);
}

/* out[i] = op(x[i], y[i]). */
static void run_pairs(td_device *d, binary_fn op, const float *x, const float *y, int n, float *out)
{
    const int64_t shape[] = { n };
    td_tensor *a = NULL, *b = NULL, *r = NULL;
    tdt_check(td_float_from_data(d, x, shape, 1, &a), "from_data");
    tdt_check(td_float_from_data(d, y, shape, 1, &b), "from_data");
    tdt_check(op(a, b, &r), "binary op");
    tdt_check(td_float_into_data(r, out, n), "into_data");
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(r);
}

/* ---- the C references ---- */

static float ref_neg(float x) { return -x; }
static float ref_abs(float x) { return fabsf(x); }
static float ref_relu(float x) { return x < 0.0f ? 0.0f : x; }
static float ref_sigmoid(float x) { return (float)(1.0 / (1.0 + exp(-(double)x))); }
static float ref_gelu(float x) { return (float)(0.5 * (double)x * (1.0 + erf((double)x * 0.70710678118654752440))); }

typedef struct unary_case {
    const char *name;
    unary_fn op;
    float (*ref)(float);
    tol t;
} unary_case;

/* The shaders compute exp, log and pow themselves in float arithmetic (about 1 ULP) and tanh
 * from a series or exp (up to 3 ULP); sin and cos reduce the argument exactly (Payne-Hanek)
 * and use polynomials (about 1 ULP at any argument: the builtins' error is unbounded beyond
 * pi); sqrt is the driver's builtin, held to Vulkan's precision rules (inherited from
 * 1/inversesqrt); sigmoid is built on exp, and gelu
 * on a rational erfc approximation (fractional error below 1.2e-7). */
static const unary_case unary_cases[] = {
    { "float_neg", td_float_neg, ref_neg, { 0, 0, 0 } },
    { "float_abs", td_float_abs, ref_abs, { 0, 0, 0 } },
    { "float_relu", td_float_relu, ref_relu, { 0, 0, 0 } },
    { "float_exp", td_float_exp, expf, { 2, 0, 0 } },
    { "float_log", td_float_log, logf, { 2, 0, 0 } },
    { "float_sqrt", td_float_sqrt, sqrtf, { 4, 0, 0 } },
    { "float_sin", td_float_sin, sinf, { 2, 0, 0 } },
    { "float_cos", td_float_cos, cosf, { 2, 0, 0 } },
    { "float_tanh", td_float_tanh, tanhf, { 4, 0, 0 } },
    { "float_sigmoid", td_float_sigmoid, ref_sigmoid, { 4, 0, 0 } },
    { "float_gelu", td_float_gelu, ref_gelu, { 8, 1e-6, 0 } },
    /* appended (the indices above are used by test_random_dense): exact rounding, zeros
     * with the sign of the input (lavapipe had ceil(-1e-40) = +0 and floor(1e-40) = -0);
     * asinh is a composite on Vulkan (asinh(-0) was +0); erf of a subnormal was x itself */
    { "float_ceil", td_float_ceil, ceilf, { 0, 0, 0 } },
    { "float_floor", td_float_floor, floorf, { 0, 0, 0 } },
    { "float_trunc", td_float_trunc, truncf, { 0, 0, 0 } },
    { "float_round", td_float_round, rintf, { 0, 0, 0 } },
    { "float_asinh", td_float_asinh, asinhf, { 4, 0, 0 } },
    { "float_erf", td_float_erf, erff, { 4, 0, 0 } },
};

static void test_unary(void **state)
{
    (void)state;
    const int n = N_OF(unary_in);
    float v[N_OF(unary_in)], c[N_OF(unary_in)];
    failures = 0;
    for (int k = 0; k < N_OF(unary_cases); k++) {
        const unary_case *u = &unary_cases[k];
        run_unary(vk, u->op, unary_in, n, v);
        run_unary(cpu, u->op, unary_in, n, c);
        for (int i = 0; i < n; i++)
            check(u->name, &unary_in[i], 1, v[i], c[i], u->ref(unary_in[i]), u->t);
    }
    if (failures)
        printf("%d mismatches\n", failures);
    assert_int_equal(failures, 0);
}

/* powf: 2 ULP for every finite nonzero result (subnormal and huge ones included). */
static const tol pow_tol = { 2, 0, 0 };

static void test_powf(void **state)
{
    (void)state;
    enum { NB = N_OF(pow_base), NE = N_OF(pow_exp), NP = N_OF(pow_pairs) };
    static float v[NB * NE], c[NB * NE];
    failures = 0;
    run_grid(vk, td_float_powf, pow_base, NB, pow_exp, NE, v);
    run_grid(cpu, td_float_powf, pow_base, NB, pow_exp, NE, c);
    for (int i = 0; i < NB; i++)
        for (int j = 0; j < NE; j++) {
            const float in[2] = { pow_base[i], pow_exp[j] };
            check("float_powf", in, 2, v[i * NE + j], c[i * NE + j], powf(in[0], in[1]), pow_tol);
        }
    float px[NP], py[NP];
    for (int i = 0; i < NP; i++) {
        px[i] = pow_pairs[i][0];
        py[i] = pow_pairs[i][1];
    }
    run_pairs(vk, td_float_powf, px, py, NP, v);
    run_pairs(cpu, td_float_powf, px, py, NP, c);
    for (int i = 0; i < NP; i++)
        check("float_powf", pow_pairs[i], 2, v[i], c[i], powf(px[i], py[i]), pow_tol);
    if (failures)
        printf("%d mismatches\n", failures);
    assert_int_equal(failures, 0);
}

static void pows_over(const float *x, int n)
{
    float v[64], c[64];
    assert_true(n <= 64);
    for (int k = 0; k < N_OF(pows_exp); k++) {
        const float e = pows_exp[k];
        run_pows(vk, x, n, e, v);
        run_pows(cpu, x, n, e, c);
        for (int i = 0; i < n; i++) {
            const float in[2] = { x[i], e };
            check("float_powf_scalar", in, 2, v[i], c[i], powf(x[i], e), pow_tol);
        }
    }
}

static void test_powf_scalar(void **state)
{
    (void)state;
    failures = 0;
    pows_over(unary_in, N_OF(unary_in));
    pows_over(pow_base, N_OF(pow_base));
    float px[N_OF(pow_pairs)];
    for (int i = 0; i < N_OF(pow_pairs); i++) {
        px[0] = pow_pairs[i][0];
        float v = 0.0f, c = 0.0f;
        run_pows(vk, px, 1, pow_pairs[i][1], &v);
        run_pows(cpu, px, 1, pow_pairs[i][1], &c);
        check("float_powf_scalar", pow_pairs[i], 2, v, c, powf(px[0], pow_pairs[i][1]), pow_tol);
    }
    if (failures)
        printf("%d mismatches\n", failures);
    assert_int_equal(failures, 0);
}

/* Many pseudo-random arguments across the whole range: log over every binade (subnormals
 * too), exp and tanh over [-104, 89], pow with results from 2^-150 to overflow, negative bases
 * with integer exponents. Same tolerances as above. */
static uint32_t lcg_next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_random_dense(void **state)
{
    (void)state;
    enum { N = 1 << 15 };
    static float x[N], y[N], v[N], c[N];
    uint32_t seed = 12345u;
    failures = 0;
    for (int i = 0; i < N; i++)
        x[i] = from_bits(1u + lcg_next(&seed) % 0x7f7fffffu); /* positive finite */
    run_unary(vk, td_float_log, x, N, v);
    run_unary(cpu, td_float_log, x, N, c);
    for (int i = 0; i < N; i++)
        check("float_log", &x[i], 1, v[i], c[i], logf(x[i]), unary_cases[4].t);
    /* sin and cos over every finite float (1e9: lavapipe's builtin sin was 0.03 off) */
    for (int i = 0; i < N; i++) {
        x[i] = from_bits(lcg_next(&seed) % 0x7f800000u) * ((i & 1) ? -1.0f : 1.0f);
        if (i < 4)
            x[i] = (float[]){ 1e9f, -1e9f, 1.5707964f, 3.1415927f }[i];
    }
    run_unary(vk, td_float_sin, x, N, v);
    run_unary(cpu, td_float_sin, x, N, c);
    for (int i = 0; i < N; i++)
        check("float_sin", &x[i], 1, v[i], c[i], sinf(x[i]), unary_cases[6].t);
    run_unary(vk, td_float_cos, x, N, v);
    run_unary(cpu, td_float_cos, x, N, c);
    for (int i = 0; i < N; i++)
        check("float_cos", &x[i], 1, v[i], c[i], cosf(x[i]), unary_cases[7].t);
    for (int i = 0; i < N; i++)
        x[i] = -104.0f + 193.0f * (float)(lcg_next(&seed) >> 8) * 0x1p-24f;
    run_unary(vk, td_float_exp, x, N, v);
    run_unary(cpu, td_float_exp, x, N, c);
    for (int i = 0; i < N; i++)
        check("float_exp", &x[i], 1, v[i], c[i], expf(x[i]), unary_cases[3].t);
    for (int i = 0; i < N; i++)
        x[i] = ldexpf((float)(lcg_next(&seed) >> 8) * 0x1p-24f, (int)(lcg_next(&seed) % 12u) - 10) *
               ((i & 1) ? -1.0f : 1.0f);
    run_unary(vk, td_float_tanh, x, N, v);
    run_unary(cpu, td_float_tanh, x, N, c);
    for (int i = 0; i < N; i++)
        check("float_tanh", &x[i], 1, v[i], c[i], tanhf(x[i]), unary_cases[8].t);
    for (int i = 0; i < N; i++) {
        const float t = -104.0f + 194.0f * (float)(lcg_next(&seed) >> 8) * 0x1p-24f;
        float b = from_bits(1u + lcg_next(&seed) % 0x7f7fffffu);
        if (b == 1.0f)
            b = 2.0f;
        float e = t / logf(b);
        if (i % 4 == 1) { /* negative base, integer exponent */
            b = -b;
            e = rintf(e);
        }
        x[i] = b;
        y[i] = e;
    }
    run_pairs(vk, td_float_powf, x, y, N, v);
    run_pairs(cpu, td_float_powf, x, y, N, c);
    for (int i = 0; i < N; i++) {
        const float in[2] = { x[i], y[i] };
        check("float_powf", in, 2, v[i], c[i], powf(x[i], y[i]), pow_tol);
    }
    if (failures)
        printf("%d mismatches\n", failures);
    assert_int_equal(failures, 0);
}

/* Arithmetic on subnormals: scalar ops, clamp, and the binary ops (exactly rounded in C;
 * division within Vulkan's 2.5 ULP). */
static const float arith_x[] = {
    0x1p-149f, -0x1p-149f, 1e-39f, -1e-39f, 1e-38f, FLT_MIN, 0x1p-100f, 1.0f, 3.0f, 1e30f, FLT_MAX,
    -0.0f, 0.0f, INFINITY, NAN,
};

static void test_arith_subnormal(void **state)
{
    (void)state;
    enum { N = N_OF(arith_x) };
    const tol exact = { 0, 0, 0 }, div = { 3, 0, 0 };
    static float v[N * N], c[N * N];
    failures = 0;
    const struct {
        const char *name;
        binary_fn op;
        int kind;
        tol t;
    } bins[] = {
        { "float_add", td_float_add, 0, exact }, { "float_sub", td_float_sub, 1, exact },
        { "float_mul", td_float_mul, 2, exact }, { "float_div", td_float_div, 3, div },
        { "float_maximum", td_float_maximum, 4, exact }, { "float_minimum", td_float_minimum, 5, exact },
    };
    for (int k = 0; k < N_OF(bins); k++) {
        run_grid(vk, bins[k].op, arith_x, N, arith_x, N, v);
        run_grid(cpu, bins[k].op, arith_x, N, arith_x, N, c);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                const float x = arith_x[i], y = arith_x[j], in[2] = { x, y };
                float want = 0.0f;
                switch (bins[k].kind) {
                case 0: want = x + y; break;
                case 1: want = x - y; break;
                case 2: want = x * y; break;
                case 3: want = x / y; break;
                case 4: want = (isnan(x) || x > y) ? x : y; break;
                default: want = (isnan(x) || x < y) ? x : y; break;
                }
                check(bins[k].name, in, 2, v[i * N + j], c[i * N + j], want, bins[k].t);
            }
    }
    /* Scalar ops and clamp, scalars from the same table. */
    for (int j = 0; j < N; j++) {
        const float s = arith_x[j];
        const int64_t shape[] = { N };
        td_tensor *a[2] = { NULL, NULL }, *r[2][3] = { { NULL } };
        td_device *devs[2] = { vk, cpu };
        float out[2][3][N];
        for (int d = 0; d < 2; d++) {
            tdt_check(td_float_from_data(devs[d], arith_x, shape, 1, &a[d]), "from_data");
            tdt_check(td_float_add_scalar(a[d], s, &r[d][0]), "add_scalar");
            tdt_check(td_float_mul_scalar(a[d], s, &r[d][1]), "mul_scalar");
            tdt_check(td_float_clamp(a[d], -fabsf(s), fabsf(s), &r[d][2]), "clamp");
            for (int m = 0; m < 3; m++) {
                tdt_check(td_float_into_data(r[d][m], out[d][m], N), "into_data");
                td_tensor_release(r[d][m]);
            }
            td_tensor_release(a[d]);
        }
        for (int i = 0; i < N; i++) {
            const float x = arith_x[i], in[2] = { x, s }, lo = -fabsf(s), hi = fabsf(s);
            const float y = x < lo ? lo : x;
            check("float_add_scalar", in, 2, out[0][0][i], out[1][0][i], x + s, exact);
            check("float_mul_scalar", in, 2, out[0][1][i], out[1][1][i], x * s, exact);
            check("float_clamp", in, 2, out[0][2][i], out[1][2][i], isnan(x) ? x : (y > hi ? hi : y), exact);
        }
    }
    if (failures)
        printf("%d mismatches\n", failures);
    assert_int_equal(failures, 0);
}

/* float_into_int truncates toward zero on both backends (PyTorch's .to(torch.int32)): one
 * ULP under a whole number is the number below it (a fuzzing campaign's input,
 * tests/fuzz/found_surface/cmp-into-int-of-hypot: hypot's 8 on cpu against 7.9999995 on
 * vulkan, both within its ULPs, gave 8 against 7). The expected ints are written here. */
static void test_into_int_steps(void **state)
{
    (void)state;
    const float x[] = { 8.0f, 7.99999952f, -7.99999952f, -8.0f, 2.5f, -2.5f, 0.99999994f, -0.0f, 1e-45f };
    const int32_t want[] = { 8, 7, -7, -8, 2, -2, 0, 0, 0 };
    const int64_t shape[] = { N_OF(x) };
    td_device *devs[2] = { vk, cpu };
    for (int d = 0; d < 2; d++) {
        td_tensor *a = NULL, *r = NULL;
        int32_t got[N_OF(x)];
        tdt_check(td_float_from_data(devs[d], x, shape, 1, &a), "from_data");
        tdt_check(td_float_into_int(a, &r), "float_into_int");
        tdt_check(td_int_into_data(r, got, N_OF(x)), "int_into_data");
        for (int i = 0; i < N_OF(x); i++)
            if (got[i] != want[i])
                printf("%s: float_into_int(%.9g) = %d, want %d\n", d ? "cpu" : "vulkan", (double)x[i], got[i],
                       want[i]);
        assert_memory_equal(got, want, sizeof got);
        td_tensor_release(a);
        td_tensor_release(r);
    }
}

/* atan2 on and near its branch cut and the origin, against atan2f here, on both backends
 * (a fuzzing campaign's input, tests/fuzz/found_surface/cmp-atan2-of-cancelled-matmul: a
 * matmul's cancellation left -6e-8 on cpu and 0 on vulkan, and atan2(x, x) gave -3pi/4
 * against 0). The signs of zero and of the tiny residues pick the quadrant: exact match of
 * the quadrant, the value within 2 ULP. */
static void test_atan2_cut(void **state)
{
    (void)state;
    const float y[] = { -5.96046448e-08f, 0.0f, -0.0f, 0.0f, -0.0f, 1e-30f, -1e-30f, 5.96046448e-08f, -1.0f, 1.0f };
    const float x[] = { -5.96046448e-08f, 0.0f, -0.0f, -0.0f, 0.0f, -1.0f, -1.0f, 5.96046448e-08f, -0.0f, -1e-30f };
    const int64_t shape[] = { N_OF(y) };
    td_device *devs[2] = { vk, cpu };
    for (int d = 0; d < 2; d++) {
        td_tensor *ty = NULL, *tx = NULL, *r = NULL;
        float got[N_OF(y)];
        tdt_check(td_float_from_data(devs[d], y, shape, 1, &ty), "from_data");
        tdt_check(td_float_from_data(devs[d], x, shape, 1, &tx), "from_data");
        tdt_check(td_float_atan2(ty, tx, &r), "float_atan2");
        tdt_check(td_float_into_data(r, got, N_OF(y)), "into_data");
        for (int i = 0; i < N_OF(y); i++) {
            const float want = atan2f(y[i], x[i]);
            const bool ok =
                signbit(got[i]) == signbit(want) && fabsf(got[i] - want) <= 2.0f * FLT_EPSILON * fabsf(want);
            if (!ok)
                printf("%s: atan2(%g, %g) = %.9g, want %.9g\n", d ? "cpu" : "vulkan", (double)y[i], (double)x[i],
                       (double)got[i], (double)want);
            assert_true(ok);
        }
        td_tensor_release(ty);
        td_tensor_release(tx);
        td_tensor_release(r);
    }
}

/* A matmul whose sums cancel (a fuzzing campaign's input, tests/fuzz/found_surface/
 * cmp-matmul-cancellation-of-sinh: products near 2^41 left -262144 on cpu and -524288 on
 * vulkan): each backend within the float dot product's error bound, K FLT_EPSILON times the
 * sum of |a||b|, of the sum in double computed here. */
static void test_matmul_cancellation(void **state)
{
    (void)state;
    enum { K = 8 };
    float a[K * K], b[K * K];
    for (int i = 0; i < K * K; i++) {
        a[i] = (float)((i * 37) % 17 - 8) * 1000.0f + (float)(i % 3) * 0.125f;
        b[i] = (float)((i * 53) % 19 - 9) * 1.0e8f * ((i / K) % 2 ? -1.0f : 1.0f);
    }
    const int64_t shape[] = { K, K };
    td_device *devs[2] = { vk, cpu };
    for (int d = 0; d < 2; d++) {
        td_tensor *ta = NULL, *tb = NULL, *r = NULL;
        float got[K * K];
        tdt_check(td_float_from_data(devs[d], a, shape, 2, &ta), "from_data");
        tdt_check(td_float_from_data(devs[d], b, shape, 2, &tb), "from_data");
        tdt_check(td_float_matmul(ta, tb, &r), "float_matmul");
        tdt_check(td_float_into_data(r, got, K * K), "into_data");
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++) {
                double want = 0, terms = 0;
                for (int k = 0; k < K; k++) {
                    want += (double)a[i * K + k] * (double)b[k * K + j];
                    terms += fabs((double)a[i * K + k] * (double)b[k * K + j]);
                }
                const bool ok = fabs((double)got[i * K + j] - want) <= K * FLT_EPSILON * terms;
                if (!ok)
                    printf("%s: matmul[%d][%d] = %.9g, want %.9g within %g\n", d ? "cpu" : "vulkan", i, j,
                           (double)got[i * K + j], want, K * FLT_EPSILON * terms);
                assert_true(ok);
            }
        td_tensor_release(ta);
        td_tensor_release(tb);
        td_tensor_release(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_unary),
        TDT_TEST(test_powf),
        TDT_TEST(test_powf_scalar),
        TDT_TEST(test_random_dense),
        TDT_TEST(test_arith_subnormal),
        TDT_TEST(test_into_int_steps),
        TDT_TEST(test_atan2_cut),
        TDT_TEST(test_matmul_cancellation),
    };
    return cmocka_run_group_tests_name("vulkan_math_edges", tests, setup, teardown);
}
