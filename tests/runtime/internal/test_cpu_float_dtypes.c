/* The CPU's native float elementwise kernels in f16, bf16 and f64 (runtime/cpu/cpu_float_ew.h,
 * cpu_half.c; issue 21 step 5).
 *
 * f16 / bf16: every result must be the f32 result rounded once to the dtype, which is what
 * the generated "via f32" path gives. The reference is worked out here, not by the library:
 * each input widened by td_half.h's scalar functions, the f32 arithmetic done by this file
 * (add, sub, mul, div, maximum, clamp, add_scalar, neg, sqrt, comparisons: IEEE operations
 * that C computes exactly rounded), rounded once by td_half.h. For exp, sigmoid and gelu, whose
 * f32 values come from the library's vector kernels, the reference is the library's f32
 * kernel on the widened inputs, rounded by td_half.h (bit-equality with the via-f32 path is
 * the claim there). The inputs hold +-0, subnormals, the largest finite values (sums and
 * products overflow to inf), inf, NaN with payloads, ties, and pseudo-random bit patterns;
 * 549 elements (two blocks of 256 and a tail) in one flat and two broadcast layouts, under
 * every conversion path this machine has (td_convert_force). NaN results: the reference's
 * NaN-ness, and the bits of the library's own via-f32 path (td_float_cast to f32, the f32 op,
 * td_float_cast back), which must match bit for bit (payload included).
 *
 * f64: inputs with low bits set (1 + k 2^-40 ...), results against long double functions
 * of this file, within a few double ulps: a kernel that computed in f32 is off by ~1e-8. */
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

#include "td_convert.h"
#include "td_half.h"
#include "td_ops.h"

static td_device *cpu;

static int setup(void **state)
{
    (void)state;
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_convert_force(-1);
    td_device_release(cpu);
    return 0;
}

#define OK(x) assert_int_equal((x), TD_OK)
#define N 549 /* two blocks of 256 and a tail of 37 */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float widen(td_dtype dt, uint16_t h)
{
    return dt == TD_F16 ? td_f16_to_f32(h) : td_bf16_to_f32(h);
}

static uint16_t round1(td_dtype dt, float f)
{
    return dt == TD_F16 ? td_f32_to_f16(f) : td_f32_to_bf16(f);
}

/* Special values first, then random patterns (one in 8 a small-exponent subnormal-ish one). */
static void fill(td_dtype dt, uint16_t *h, int n, int salt)
{
    static const uint16_t f16s[] = { 0x0000, 0x8000, 0x0001, 0x03ff, 0x8001, 0x3c00, 0xbc00, 0x7bff, 0xfbff,
                                     0x7c00, 0xfc00, 0x7e01, 0xfe7f, 0x3c01, 0x1000, 0x0400, 0x3800, 0x7bfe };
    static const uint16_t bf16s[] = { 0x0000, 0x8000, 0x0001, 0x007f, 0x8001, 0x3f80, 0xbf80, 0x7f7f, 0xff7f,
                                      0x7f80, 0xff80, 0x7fc1, 0xffa5, 0x3f81, 0x3b80, 0x0080, 0x3f00, 0x7f7e };
    const uint16_t *sp = dt == TD_F16 ? f16s : bf16s;
    const int ns = (int)(sizeof f16s / sizeof f16s[0]);
    for (int i = 0; i < n; i++) {
        const int k = (i + salt) % (ns * 3);
        if (k < ns) {
            h[i] = sp[k];
        } else {
            uint16_t u = (uint16_t)next32();
            if ((next32() & 7) == 0)
                u &= 0x83ff; /* tiny exponents: subnormals and their neighbours */
            h[i] = u;
        }
    }
}

typedef enum { ADD, SUB, MUL, DIV, MAXIMUM, GREATER, EQUAL } binop;

static float bin32(binop op, float x, float y)
{
    switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV: return x / y;
    case MAXIMUM: return (x != x || x > y) ? x : y;
    case GREATER: return x > y ? 1.0f : 0.0f;
    case EQUAL: return x == y ? 1.0f : 0.0f;
    }
    return 0.0f;
}

static td_status run_bin(binop op, const td_tensor *a, const td_tensor *b, td_tensor **c)
{
    switch (op) {
    case ADD: return td_float_add(a, b, c);
    case SUB: return td_float_sub(a, b, c);
    case MUL: return td_float_mul(a, b, c);
    case DIV: return td_float_div(a, b, c);
    case MAXIMUM: return td_float_maximum(a, b, c);
    case GREATER: return td_float_greater(a, b, c);
    case EQUAL: return td_float_equal(a, b, c);
    }
    return TD_E_INVALID;
}

static bool is_cmp(binop op)
{
    return op == GREATER || op == EQUAL;
}

/* The library's via-f32 path by hand: cast to f32, the f32 op, cast back once. */
static td_status via_f32(binop op, const td_tensor *a, const td_tensor *b, td_dtype dt, td_tensor **c)
{
    td_tensor *a32 = NULL, *b32 = NULL, *c32 = NULL;
    td_status st = td_float_cast(a, TD_F32, &a32);
    if (st == TD_OK)
        st = td_float_cast(b, TD_F32, &b32);
    if (st == TD_OK)
        st = run_bin(op, a32, b32, &c32);
    if (st == TD_OK)
        st = td_float_cast(c32, dt, c);
    td_tensor_release(a32);
    td_tensor_release(b32);
    td_tensor_release(c32);
    return st;
}

/* shapes: flat [N] and [N]; [3, 183] and [183] (rows); [3, 183] and [3, 1] (columns). */
static void check_binary(td_dtype dt, binop op, int layout)
{
    static const char *const names[] = { "add", "sub", "mul", "div", "maximum", "greater", "equal" };
    uint16_t ha[N], hb[N], got[N], via[N];
    bool gotb[N];
    int64_t sa[2] = { N, 0 }, sb[2] = { N, 0 };
    int na = 1, nb = 1, nbel = N;
    if (layout == 1) {
        sa[0] = 3, sa[1] = 183, na = 2;
        sb[0] = 183, nb = 1, nbel = 183;
    } else if (layout == 2) {
        sa[0] = 3, sa[1] = 183, na = 2;
        sb[0] = 3, sb[1] = 1, nb = 2, nbel = 3;
    }
    fill(dt, ha, N, (int)op);
    fill(dt, hb, nbel, 7 + (int)op);
    td_tensor *a = NULL, *b = NULL, *c = NULL, *v = NULL;
    OK(td_float_from_data_dtype(cpu, dt, ha, sa, na, &a));
    OK(td_float_from_data_dtype(cpu, dt, hb, sb, nb, &b));
    OK(run_bin(op, a, b, &c));
    if (is_cmp(op))
        OK(td_bool_into_data(c, gotb, N));
    else
        OK(td_float_into_data_dtype(c, dt, got, N));
    if (!is_cmp(op)) {
        OK(via_f32(op, a, b, dt, &v));
        OK(td_float_into_data_dtype(v, dt, via, N));
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        const int j = layout == 0 ? i : (layout == 1 ? i % 183 : i / 183);
        const float x = widen(dt, ha[i]), y = widen(dt, hb[j]);
        const float r = bin32(op, x, y);
        bool ok;
        if (is_cmp(op)) {
            ok = gotb[i] == (r != 0.0f);
        } else if (r != r) {
            /* two NaN operands: IEEE 754 leaves open whose payload the result carries, and
             * the compiler may swap a commutative operation's operands (the f32 kernel's
             * own layouts differ there); with one NaN operand its payload is kept */
            const float g = widen(dt, got[i]);
            ok = g != g && (got[i] == via[i] || (x != x && y != y));
        } else {
            ok = got[i] == round1(dt, r) && got[i] == via[i];
        }
        if (!ok && bad++ < 4)
            print_error("%s %s layout %d path %s [%d]: x %04x y %04x got %04x ref %04x via %04x\n",
                        dt == TD_F16 ? "f16" : "bf16", names[op], layout, td_convert_path_name(td_convert_path()), i,
                        ha[i], hb[j], is_cmp(op) ? gotb[i] : got[i], is_cmp(op) ? (r != 0.0f) : round1(dt, r), via[i]);
    }
    assert_int_equal(bad, 0);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_tensor_release(v);
}

typedef enum { NEG, SQRT, ADD_SCALAR, CLAMP, EXP, SIGMOID, GELU, GREATER_ELEM } unop;

static td_status run_un(unop op, const td_tensor *a, td_tensor **c)
{
    switch (op) {
    case NEG: return td_float_neg(a, c);
    case SQRT: return td_float_sqrt(a, c);
    case ADD_SCALAR: return td_float_add_scalar(a, 0.1f, c);
    case CLAMP: return td_float_clamp(a, -0.75f, 3.3f, c);
    case EXP: return td_float_exp(a, c);
    case SIGMOID: return td_float_sigmoid(a, c);
    case GELU: return td_float_gelu(a, c);
    case GREATER_ELEM: return td_float_greater_elem(a, 0.3f, c);
    }
    return TD_E_INVALID;
}

static void check_unary(td_dtype dt, unop op)
{
    uint16_t ha[N], got[N], via[N];
    float x32[N], r32[N];
    bool gotb[N];
    const int64_t shape[1] = { N };
    fill(dt, ha, N, 3 * (int)op);
    for (int i = 0; i < N; i++)
        x32[i] = widen(dt, ha[i]);
    td_tensor *a = NULL, *c = NULL, *a32 = NULL, *c32 = NULL, *v = NULL;
    OK(td_float_from_data_dtype(cpu, dt, ha, shape, 1, &a));
    OK(run_un(op, a, &c));
    if (op == GREATER_ELEM)
        OK(td_bool_into_data(c, gotb, N));
    else
        OK(td_float_into_data_dtype(c, dt, got, N));
    /* the library's f32 kernel on the widened values (the reference of exp, sigmoid; the
     * via-f32 bits of every op) */
    OK(td_float_from_data(cpu, x32, shape, 1, &a32));
    if (op != GREATER_ELEM) {
        OK(run_un(op, a32, &c32));
        OK(td_float_into_data(c32, r32, N));
        OK(td_float_cast(c32, dt, &v));
        OK(td_float_into_data_dtype(v, dt, via, N));
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        const float x = x32[i];
        float r = 0.0f;
        switch (op) {
        case NEG: r = -x; break;
        case SQRT: r = sqrtf(x); break;
        case ADD_SCALAR: r = x + 0.1f; break;
        case CLAMP: {
            const float y = x < -0.75f ? -0.75f : x;
            r = x != x ? x : (y > 3.3f ? 3.3f : y);
            break;
        }
        case EXP:
        case SIGMOID:
        case GELU: r = r32[i]; break;
        case GREATER_ELEM: r = x > 0.3f ? 1.0f : 0.0f; break;
        }
        bool ok;
        if (op == GREATER_ELEM) {
            ok = gotb[i] == (r != 0.0f);
        } else if (r != r) {
            const float g = widen(dt, got[i]);
            ok = g != g && got[i] == via[i];
        } else {
            ok = got[i] == round1(dt, r) && got[i] == via[i];
        }
        if (!ok && bad++ < 4)
            print_error("%s unary op %d path %s [%d]: x %04x got %04x ref %04x via %04x\n",
                        dt == TD_F16 ? "f16" : "bf16", (int)op, td_convert_path_name(td_convert_path()), i, ha[i],
                        op == GREATER_ELEM ? gotb[i] : got[i], round1(dt, r), via[i]);
    }
    assert_int_equal(bad, 0);
    td_tensor_release(a);
    td_tensor_release(c);
    td_tensor_release(a32);
    td_tensor_release(c32);
    td_tensor_release(v);
}

static void test_half_one_rounding(void **state)
{
    (void)state;
    int paths = 0;
    for (int p = 0; p < TD_CONVERT_PATHS; p++) {
        if (!td_convert_force(p))
            continue;
        paths++;
        for (int d = 0; d < 2; d++) {
            const td_dtype dt = d == 0 ? TD_F16 : TD_BF16;
            for (int op = ADD; op <= EQUAL; op++)
                for (int layout = 0; layout < 3; layout++)
                    check_binary(dt, (binop)op, layout);
            for (int op = NEG; op <= GREATER_ELEM; op++)
                check_unary(dt, (unop)op);
        }
    }
    assert_true(td_convert_force(-1));
    assert_true(paths >= 1);
    print_message("f16 / bf16 blocks checked under %d conversion path(s)\n", paths);
}

/* Hand-checked anchors of the rounding, independent of the loops above: f16 1 + 2^-11 is a
 * tie (even: 1.0 = 0x3c00); 65504 + 65504 overflows to inf (0x7c00); -0 + -0 is -0
 * (0x8000); the smallest subnormal 2^-24 halved is a tie with 0 (even: +0); bf16 of
 * 1 + 2^-8 (0x3f80 + 0x3b80) is a tie between 1 and 1 + 2^-7 (even: 0x3f80). */
static void test_half_anchors(void **state)
{
    (void)state;
    const int64_t shape[1] = { 4 };
    const uint16_t a16[4] = { 0x3c00, 0x7bff, 0x8000, 0x0001 }, b16[4] = { 0x1000, 0x7bff, 0x8000, 0x3800 };
    const uint16_t want_add[3] = { 0x3c00, 0x7c00, 0x8000 };
    uint16_t got[4];
    td_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F16, a16, shape, 1, &a));
    OK(td_float_from_data_dtype(cpu, TD_F16, b16, shape, 1, &b));
    OK(td_float_add(a, b, &c));
    OK(td_float_into_data_dtype(c, TD_F16, got, 4));
    for (int i = 0; i < 3; i++)
        assert_int_equal(got[i], want_add[i]);
    OK(td_float_mul(a, b, &d)); /* 2^-24 * 0.5 = 2^-25: a tie between 0 and 2^-24, even: 0 */
    OK(td_float_into_data_dtype(d, TD_F16, got, 4));
    assert_int_equal(got[3], 0x0000);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_tensor_release(d);
    const int64_t one[1] = { 1 };
    const uint16_t x16 = 0x3f80, y16 = 0x3b80;
    OK(td_float_from_data_dtype(cpu, TD_BF16, &x16, one, 1, &a));
    OK(td_float_from_data_dtype(cpu, TD_BF16, &y16, one, 1, &b));
    OK(td_float_add(a, b, &c));
    OK(td_float_into_data_dtype(c, TD_BF16, got, 1));
    assert_int_equal(got[0], 0x3f80);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
}

/* float_sum and float_mean of f16 / bf16 (chunks widened one at a time, cpu_reduce.c): the
 * f32 sum of the widened values (the library's f32 kernel on an f32 tensor: the via-f32
 * path's bits) rounded once by td_half.h; n = 549 (one chunk) and 100,003 (25 chunks, the
 * threaded path; sums that cancel). */
static void test_half_sum_mean(void **state)
{
    (void)state;
    static uint16_t h[100003];
    static float w[100003];
    const int64_t sizes[2] = { N, 100003 };
    for (int d = 0; d < 2; d++) {
        const td_dtype dt = d == 0 ? TD_F16 : TD_BF16;
        for (int si = 0; si < 2; si++) {
            const int64_t n = sizes[si];
            /* values in [0, 2) with all their bits, in runs of 4096 of alternating sign: large
             * partial sums that cancel, so a partial rounded short of f32 shows in the result */
            for (int64_t i = 0; i < n; i++) {
                const float u = (float)(next32() >> 8) / 16777216.0f * 2.0f * ((i / 4096) % 2 ? -1.0f : 1.0f);
                h[i] = round1(dt, u);
                w[i] = widen(dt, h[i]);
            }
            td_tensor *a = NULL, *a32 = NULL, *o = NULL;
            OK(td_float_from_data_dtype(cpu, dt, h, &n, 1, &a));
            OK(td_float_from_data(cpu, w, &n, 1, &a32));
            for (int mean = 0; mean < 2; mean++) {
                uint16_t got;
                float ref32;
                OK(mean ? td_float_mean(a, &o) : td_float_sum(a, &o));
                OK(td_float_into_data_dtype(o, dt, &got, 1));
                td_tensor_release(o);
                OK(mean ? td_float_mean(a32, &o) : td_float_sum(a32, &o));
                OK(td_float_into_data(o, &ref32, 1));
                td_tensor_release(o);
                long double exact = 0;
                for (int64_t i = 0; i < n; i++)
                    exact += w[i];
                if (mean)
                    exact /= n;
                if (got != round1(dt, ref32))
                    print_error("%s %s of %lld: got %04x, the f32 result rounded %04x\n", dt == TD_F16 ? "f16" : "bf16",
                                mean ? "mean" : "sum", (long long)n, got, round1(dt, ref32));
                assert_int_equal(got, round1(dt, ref32));
                /* and the f32 sum itself within a few f32 ulps of the exact one */
                assert_true(fabsl((long double)ref32 - exact) <= 4.0L * FLT_EPSILON * (fabsl(exact) + 1.0L));
            }
            td_tensor_release(a);
            td_tensor_release(a32);
        }
    }
}

/* ---- f64 ---- */

typedef long double (*ref1)(long double);
static long double l_neg(long double x) { return -x; }
static long double l_sigmoid(long double x) { return 1.0L / (1.0L + expl(-x)); }
static long double l_gelu(long double x) { return 0.5L * x * (1.0L + erfl(x / sqrtl(2.0L))); }
static long double l_recip(long double x) { return 1.0L / x; }
static long double l_square(long double x) { return x * x; }
static long double l_addsc(long double x) { return x + (long double)0.1f; }

typedef struct {
    const char *name;
    td_status (*op)(const td_tensor *, td_tensor **);
    ref1 ref;
    double lo, hi; /* the input range */
} f64_case;

static td_status k_addsc(const td_tensor *a, td_tensor **c) { return td_float_add_scalar(a, 0.1f, c); }

static const f64_case f64_cases[] = {
    { "neg", td_float_neg, l_neg, -3, 3 },         { "exp", td_float_exp, expl, -5, 5 },
    { "log", td_float_log, logl, 0.01, 50 },       { "sqrt", td_float_sqrt, sqrtl, 0.01, 50 },
    { "sin", td_float_sin, sinl, -3, 3 },          { "cos", td_float_cos, cosl, -1.4, 1.4 },
    { "tanh", td_float_tanh, tanhl, -3, 3 },       { "sigmoid", td_float_sigmoid, l_sigmoid, -6, 6 },
    { "gelu", td_float_gelu, l_gelu, 0.1, 3 },     { "acos", td_float_acos, acosl, -0.9, 0.9 },
    { "asin", td_float_asin, asinl, 0.05, 0.9 },   { "atan", td_float_atan, atanl, 0.05, 5 },
    { "cosh", td_float_cosh, coshl, -3, 3 },       { "sinh", td_float_sinh, sinhl, 0.1, 3 },
    { "tan", td_float_tan, tanl, 0.1, 1.2 },       { "asinh", td_float_asinh, asinhl, 0.1, 5 },
    { "acosh", td_float_acosh, acoshl, 1.5, 9 },   { "atanh", td_float_atanh, atanhl, 0.1, 0.9 },
    { "erf", td_float_erf, erfl, 0.1, 2 },         { "log1p", td_float_log1p, log1pl, 1e-9, 2 },
    { "recip", td_float_recip, l_recip, 0.1, 9 },  { "square", td_float_square, l_square, -9, 9 },
    { "add_scalar", k_addsc, l_addsc, 1, 2 },
};

/* Inputs 1 + k 2^-40 apart: below f32's resolution, so a kernel in f32 loses them. */
static void f64_inputs(double *x, int n, double lo, double hi)
{
    for (int i = 0; i < n; i++) {
        const double u = (double)(next32() >> 8) / 16777216.0 + (double)(next32() & 0xffff) * 0x1p-40;
        x[i] = lo + (hi - lo) * u;
    }
}

static void test_f64_unary(void **state)
{
    (void)state;
    enum { M = 64 };
    const int64_t shape[1] = { M };
    for (size_t c = 0; c < sizeof f64_cases / sizeof f64_cases[0]; c++) {
        const f64_case *k = &f64_cases[c];
        double x[M], y[M];
        f64_inputs(x, M, k->lo, k->hi);
        td_tensor *a = NULL, *o = NULL;
        OK(td_float_from_data_dtype(cpu, TD_F64, x, shape, 1, &a));
        OK(k->op(a, &o));
        td_dtype dt;
        OK(td_tensor_dtype(o, &dt));
        assert_int_equal(dt, TD_F64);
        OK(td_float_into_data_dtype(o, TD_F64, y, M));
        double worst = 0.0;
        for (int i = 0; i < M; i++) {
            const long double r = k->ref((long double)x[i]);
            const double err = (double)fabsl((long double)y[i] - r) / (double)fmaxl(fabsl(r), 1e-300L);
            worst = err > worst ? err : worst;
        }
        if (worst > 8 * DBL_EPSILON)
            print_error("f64 %s: relative error %.3g (bound %.3g)\n", k->name, worst, 8 * DBL_EPSILON);
        assert_true(worst <= 8 * DBL_EPSILON);
        td_tensor_release(a);
        td_tensor_release(o);
    }
}

static void test_f64_binary(void **state)
{
    (void)state;
    enum { M = 64 };
    const int64_t shape[1] = { M };
    double x[M], y[M], z[M];
    f64_inputs(x, M, 0.5, 4);
    f64_inputs(y, M, 0.5, 4);
    y[0] = x[0] + 0x1p-40; /* equal in f32, ordered in f64 */
    td_tensor *a = NULL, *b = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F64, x, shape, 1, &a));
    OK(td_float_from_data_dtype(cpu, TD_F64, y, shape, 1, &b));
    struct {
        const char *name;
        td_status (*op)(const td_tensor *, const td_tensor *, td_tensor **);
        int kind;
    } ops[] = { { "add", td_float_add, 0 },     { "div", td_float_div, 1 },     { "powf", td_float_powf, 2 },
                { "atan2", td_float_atan2, 3 }, { "hypot", td_float_hypot, 4 }, { "remainder", td_float_remainder, 5 },
                { "minimum", td_float_minimum, 6 } };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        td_tensor *o = NULL;
        OK(ops[k].op(a, b, &o));
        OK(td_float_into_data_dtype(o, TD_F64, z, M));
        for (int i = 0; i < M; i++) {
            const long double X = x[i], Y = y[i];
            long double r = 0;
            switch (ops[k].kind) {
            case 0: r = X + Y; break;
            case 1: r = X / Y; break;
            case 2: r = powl(X, Y); break;
            case 3: r = atan2l(X, Y); break;
            case 4: r = hypotl(X, Y); break;
            case 5: r = fmodl(X, Y); break; /* both positive: fmod */
            case 6: r = X < Y ? X : Y; break;
            }
            const double err = (double)fabsl((long double)z[i] - r) / (double)fmaxl(fabsl(r), 1e-300L);
            if (err > 8 * DBL_EPSILON)
                print_error("f64 %s [%d]: %.17g vs %.17Lg\n", ops[k].name, i, z[i], r);
            assert_true(err <= 8 * DBL_EPSILON);
        }
        td_tensor_release(o);
    }
    bool lt[M];
    td_tensor *o = NULL;
    OK(td_float_lower(a, b, &o));
    OK(td_bool_into_data(o, lt, M));
    for (int i = 0; i < M; i++)
        assert_int_equal(lt[i], x[i] < y[i]);
    assert_true(lt[0]);
    td_tensor_release(o);
    OK(td_float_clamp(a, 1.0f, 2.0f, &o)); /* x inside keeps all its bits */
    OK(td_float_into_data_dtype(o, TD_F64, z, M));
    for (int i = 0; i < M; i++)
        assert_true(z[i] == (x[i] < 1.0 ? 1.0 : (x[i] > 2.0 ? 2.0 : x[i])));
    td_tensor_release(o);
    td_tensor_release(a);
    td_tensor_release(b);
}

/* Relative to a scale (sums: the sum of the magnitudes of the terms). */
static void near(const char *what, int i, double got, long double ref, long double scale)
{
    const double err = (double)(fabsl((long double)got - ref) / fmaxl(scale, 1e-300L));
    if (err > 16 * DBL_EPSILON)
        print_error("f64 %s [%d]: %.17g vs %.17Lg (relative %.3g)\n", what, i, got, ref, err);
    assert_true(err <= 16 * DBL_EPSILON);
}

/* Matrix products (dgemm where CBLAS is found), reductions, softmax, scans, the loss and
 * layer norm in f64: [R, C] inputs with low bits set, against long double sums written here. */
static void test_f64_reduce_matmul(void **state)
{
    (void)state;
    enum { R = 3, C = 5, P = 4 };
    double x[R * C], w[C * P], z[R * P > R * C ? R * P : R * C];
    f64_inputs(x, R * C, -2, 2);
    f64_inputs(w, C * P, -2, 2);
    const int64_t sx[2] = { R, C }, sw[2] = { C, P }, sxt[2] = { C, R };
    td_tensor *a = NULL, *b = NULL, *o = NULL, *at = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F64, x, sx, 2, &a));
    OK(td_float_from_data_dtype(cpu, TD_F64, w, sw, 2, &b));
    /* matmul and matmul_tn (a stored transposed: x^T laid out [C, R]) */
    double xt[C * R];
    for (int i = 0; i < R; i++)
        for (int k = 0; k < C; k++)
            xt[k * R + i] = x[i * C + k];
    OK(td_float_from_data_dtype(cpu, TD_F64, xt, sxt, 2, &at));
    for (int tn = 0; tn < 2; tn++) {
        OK(tn ? td_float_matmul_tn(at, b, &o) : td_float_matmul(a, b, &o));
        OK(td_float_into_data_dtype(o, TD_F64, z, R * P));
        for (int i = 0; i < R; i++)
            for (int j = 0; j < P; j++) {
                long double s = 0, m = 0;
                for (int k = 0; k < C; k++) {
                    s += (long double)x[i * C + k] * w[k * P + j];
                    m += fabsl((long double)x[i * C + k] * w[k * P + j]);
                }
                near(tn ? "matmul_tn" : "matmul", i * P + j, z[i * P + j], s, m);
            }
        td_tensor_release(o);
    }
    /* mean_dim, min_dim, argmin, softmax, cumsum along dim 1 */
    OK(td_float_mean_dim(a, 1, &o));
    OK(td_float_into_data_dtype(o, TD_F64, z, R));
    td_tensor_release(o);
    for (int i = 0; i < R; i++) {
        long double s = 0, m = 0;
        for (int k = 0; k < C; k++)
            s += x[i * C + k], m += fabsl(x[i * C + k]);
        near("mean_dim", i, z[i], s / C, m / C);
    }
    OK(td_float_min_dim(a, 1, &o));
    OK(td_float_into_data_dtype(o, TD_F64, z, R));
    td_tensor_release(o);
    int32_t am[R];
    OK(td_float_argmin(a, 1, &o));
    OK(td_int_into_data(o, am, R));
    td_tensor_release(o);
    for (int i = 0; i < R; i++) {
        int best = 0;
        for (int k = 1; k < C; k++)
            best = x[i * C + k] < x[i * C + best] ? k : best;
        assert_true(z[i] == x[i * C + best]);
        assert_int_equal(am[i], best);
    }
    OK(td_float_softmax(a, 1, &o));
    OK(td_float_into_data_dtype(o, TD_F64, z, R * C));
    td_tensor_release(o);
    for (int i = 0; i < R; i++) {
        long double s = 0;
        for (int k = 0; k < C; k++)
            s += expl(x[i * C + k]);
        for (int k = 0; k < C; k++)
            near("softmax", i * C + k, z[i * C + k], expl(x[i * C + k]) / s, expl(x[i * C + k]) / s);
    }
    OK(td_float_cumsum(a, 1, &o));
    OK(td_float_into_data_dtype(o, TD_F64, z, R * C));
    td_tensor_release(o);
    for (int i = 0; i < R; i++) {
        long double s = 0, m = 0;
        for (int k = 0; k < C; k++) {
            s += x[i * C + k], m += fabsl(x[i * C + k]);
            near("cumsum", i * C + k, z[i * C + k], s, m);
        }
    }
    /* cross_entropy: mean over rows of logsumexp(x_i) - x_i[t_i] */
    const int32_t tg[R] = { 4, 0, 2 };
    const int64_t st[1] = { R };
    td_tensor *t = NULL;
    OK(td_int_from_data(cpu, tg, st, 1, &t));
    OK(td_float_cross_entropy(a, t, &o));
    OK(td_float_into_data_dtype(o, TD_F64, z, 1));
    td_tensor_release(o);
    td_tensor_release(t);
    long double loss = 0;
    for (int i = 0; i < R; i++) {
        long double s = 0;
        for (int k = 0; k < C; k++)
            s += expl(x[i * C + k]);
        loss += logl(s) - x[i * C + tg[i]];
    }
    near("cross_entropy", 0, z[0], loss / R, 1.0L);
    /* layer_norm over the rows of x, weight w[0..C), bias w[C..2C) */
    {
        const int64_t sc[1] = { C };
        td_tensor *tw = NULL, *tb = NULL;
        OK(td_float_from_data_dtype(cpu, TD_F64, w, sc, 1, &tw));
        OK(td_float_from_data_dtype(cpu, TD_F64, w + C, sc, 1, &tb));
        OK(td_float_layer_norm(a, tw, tb, 1e-5f, &o));
        OK(td_float_into_data_dtype(o, TD_F64, z, R * C));
        td_tensor_release(o);
        td_tensor_release(tw);
        td_tensor_release(tb);
        for (int i = 0; i < R; i++) {
            long double mu = 0, var = 0;
            for (int k = 0; k < C; k++)
                mu += x[i * C + k];
            mu /= C;
            for (int k = 0; k < C; k++)
                var += (x[i * C + k] - mu) * (x[i * C + k] - mu);
            var /= C;
            const long double inv = 1.0L / sqrtl(var + (long double)1e-5f);
            for (int k = 0; k < C; k++) {
                const long double r = (x[i * C + k] - mu) * inv * w[k] + w[C + k];
                near("layer_norm", i * C + k, z[i * C + k], r, fabsl((x[i * C + k] - mu) * inv * w[k]) + fabsl(w[C + k]));
            }
        }
    }
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(at);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_one_rounding),
        cmocka_unit_test(test_half_anchors),
        cmocka_unit_test(test_half_sum_mean),
        cmocka_unit_test(test_f64_unary),
        cmocka_unit_test(test_f64_binary),
        cmocka_unit_test(test_f64_reduce_matmul),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
