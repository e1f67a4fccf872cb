/* Dtypes on the CPU (docs/dtypes.md sections 5-7): storage of f16, bf16, f64, i64, i8, u8
 * through the `_dtype` twins, conversions bit for bit, the mixing error, the arms' dtype
 * errors, and no leaks on the error paths.
 *
 * Every expected bit pattern is worked out by hand from the IEEE formats (f16: 1 sign, 5
 * exponent bits with bias 15, 10 mantissa bits; bf16: the top 16 bits of an f32; f32: 8
 * exponent bits with bias 127, 23 mantissa bits; f64: 11 with bias 1023, 52), the reasoning
 * beside each; none comes from the library. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

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
    td_device_release(cpu);
    return 0;
}

static float fbits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double dbits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t bits64(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

#define OK(call) assert_int_equal((call), TD_OK)

/* n values of dtype `from` (host data in its storage format) converted to `to` by
 * td_float_cast / td_int_cast / the cross-class twins, read back raw into out. */
static void convert(td_dtype from, const void *src, td_dtype to, void *out, int64_t n)
{
    const int64_t shape[1] = { n };
    td_tensor *a = NULL, *b = NULL;
    const td_class fc = td_dtype_class(from), tc = td_dtype_class(to);
    if (fc == TD_CLASS_FLOAT)
        OK(td_float_from_data_dtype(cpu, from, src, shape, 1, &a));
    else if (fc == TD_CLASS_INT)
        OK(td_int_from_data_dtype(cpu, from, src, shape, 1, &a));
    else
        OK(td_bool_from_data(cpu, src, shape, 1, &a));
    td_dtype got;
    OK(td_tensor_dtype(a, &got));
    assert_int_equal(got, from);
    if (fc == TD_CLASS_FLOAT && tc == TD_CLASS_FLOAT)
        OK(td_float_cast(a, to, &b));
    else if (fc == TD_CLASS_INT && tc == TD_CLASS_INT)
        OK(td_int_cast(a, to, &b));
    else if (fc == TD_CLASS_FLOAT && tc == TD_CLASS_INT)
        OK(td_float_into_int_dtype(a, to, &b));
    else if (fc == TD_CLASS_INT && tc == TD_CLASS_FLOAT)
        OK(td_int_into_float_dtype(a, to, &b));
    else if (fc == TD_CLASS_BOOL && tc == TD_CLASS_FLOAT)
        OK(td_bool_into_float_dtype(a, to, &b));
    else
        OK(td_bool_into_int_dtype(a, to, &b));
    OK(td_tensor_dtype(b, &got));
    assert_int_equal(got, to);
    if (tc == TD_CLASS_FLOAT)
        OK(td_float_into_data_dtype(b, to, out, n));
    else
        OK(td_int_into_data_dtype(b, to, out, n));
    td_tensor_release(a);
    td_tensor_release(b);
}

/* f32 -> f16: RNE, ties to even, overflow to inf, subnormals, -0, NaN quieted. */
static void test_f32_to_f16(void **state)
{
    (void)state;
    const uint32_t in[] = {
        0x3f800000u, /* 1.0: exponent 0 -> 15, mantissa 0: 0x3c00 */
        0x477fe000u, /* 65504, the largest f16: 0x7bff */
        0x477fefffu, /* just below 65520 (65504 + half an ulp of 32): 0x7bff */
        0x477ff000u, /* 65520: a tie between 0x7bff (odd) and 2^16 (inf): inf 0x7c00 */
        0x33800000u, /* 2^-24, the smallest f16 subnormal: 0x0001 */
        0x33000000u, /* 2^-25: a tie between 0 and 2^-24: even 0x0000 */
        0x33400000u, /* 1.5 * 2^-25 = 0.75 * 2^-24: above the tie: 0x0001 */
        0x33c00000u, /* 1.5 * 2^-24: a tie between 1 and 2 (x 2^-24): even 0x0002 */
        0x3f801000u, /* 1 + 2^-11: a tie between 0x3c00 and 0x3c01: even 0x3c00 */
        0x3f803000u, /* 1 + 3 * 2^-11: a tie between 0x3c01 and 0x3c02: even 0x3c02 */
        0x80000000u, /* -0: 0x8000 */
        0x7f800000u, /* inf: 0x7c00 */
        0x7fc00000u, /* the quiet NaN: 0x7e00 */
        0x7f800001u, /* a signalling NaN whose payload is below f16's: quieted, 0x7e00 */
        0xffc02000u, /* -NaN, payload bits 22 and 13: sign, quiet bit, (0x402000 >> 13) & 0x3ff = 0x201: 0xfe01 */
        0x38800000u, /* 2^-14, the smallest normal: 0x0400 */
        0x387fe000u, /* 2^-14 - 2^-25 = 1023.5 * 2^-24: a tie between 0x03ff and 0x0400: even 0x0400 */
    };
    const uint16_t want[] = { 0x3c00, 0x7bff, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0001, 0x0002, 0x3c00, 0x3c02,
                              0x8000, 0x7c00, 0x7e00, 0x7e00, 0xfe01, 0x0400, 0x0400 };
    enum { N = sizeof in / sizeof in[0] };
    float f[N];
    for (int i = 0; i < N; i++)
        f[i] = fbits(in[i]);
    uint16_t got[N];
    convert(TD_F32, f, TD_F16, got, N);
    for (int i = 0; i < N; i++)
        if (got[i] != want[i])
            fail_msg("f32 0x%08x -> f16: got 0x%04x, want 0x%04x", in[i], got[i], want[i]);
}

/* f32 -> bf16: the top half, rounded to nearest even on the low 16 bits. */
static void test_f32_to_bf16(void **state)
{
    (void)state;
    const uint32_t in[] = {
        0x3f800000u, /* 1.0: 0x3f80 */
        0x3f808000u, /* 1 + 2^-8: a tie between 0x3f80 and 0x3f81: even 0x3f80 */
        0x3f818000u, /* a tie between 0x3f81 and 0x3f82: even 0x3f82 */
        0x3f808001u, /* just above the tie: 0x3f81 */
        0x7f7f0000u, /* the largest finite bf16: 0x7f7f */
        0x7f7f8000u, /* a tie between 0x7f7f (odd) and 0x7f80 (inf): inf */
        0x7f7fffffu, /* FLT_MAX: above that tie: inf 0x7f80 */
        0x00008000u, /* f32 subnormal at the tie between 0 and 0x0001: 0x0000 */
        0x00018000u, /* a tie between 0x0001 and 0x0002: 0x0002 */
        0x80000000u, /* -0: 0x8000 */
        0x7f800001u, /* signalling NaN, payload below bf16's: quieted, 0x7fc0 */
        0xff812345u, /* -NaN with payload 0x012345: top 7 bits 0x01 kept, quiet bit set: 0xffc1 */
    };
    const uint16_t want[] = { 0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x7f7f, 0x7f80, 0x7f80, 0x0000, 0x0002, 0x8000,
                              0x7fc0, 0xffc1 };
    enum { N = sizeof in / sizeof in[0] };
    float f[N];
    for (int i = 0; i < N; i++)
        f[i] = fbits(in[i]);
    uint16_t got[N];
    convert(TD_F32, f, TD_BF16, got, N);
    for (int i = 0; i < N; i++)
        if (got[i] != want[i])
            fail_msg("f32 0x%08x -> bf16: got 0x%04x, want 0x%04x", in[i], got[i], want[i]);
}

/* f64 -> f16 / bf16 / f32 round once: a value just above a tie must not be rounded to the
 * tie first (f64 -> f32 -> f16 would give the even neighbour). */
static void test_f64_narrowing(void **state)
{
    (void)state;
    const double in[] = {
        1.0 + 0x1p-11 + 0x1p-40, /* just above the f16 tie of 1 + 2^-11: 0x3c01 (via f32: 0x3c00) */
        1.0 + 0x1p-8 + 0x1p-40,  /* just above the bf16 tie of 1 + 2^-8: 0x3f81 (via f32: 0x3f80) */
        0.1,                     /* f32: 0x3dcccccd */
        65520.0,                 /* f16 inf */
        0x1p-24,                 /* f16 0x0001 */
        -0.0,
    };
    enum { N = sizeof in / sizeof in[0] };
    uint16_t h[N], b[N];
    float f[N];
    convert(TD_F64, in, TD_F16, h, N);
    convert(TD_F64, in, TD_BF16, b, N);
    convert(TD_F64, in, TD_F32, f, N);
    assert_int_equal(h[0], 0x3c01);
    assert_int_equal(b[1], 0x3f81);
    uint32_t u;
    memcpy(&u, &f[2], 4);
    assert_int_equal(u, 0x3dcccccdu);
    assert_int_equal(h[3], 0x7c00);
    assert_int_equal(h[4], 0x0001);
    assert_int_equal(h[5], 0x8000);
    assert_int_equal(b[5], 0x8000);
    /* f64 NaN with payload: quiet bit (bit 51) and sign kept, narrowed to the top bits */
    const double nan_in[1] = { dbits(0xfff8000000000000ull | (1ull << 50)) }; /* -NaN, payload bit 50 */
    uint16_t hn[1];
    convert(TD_F64, nan_in, TD_F16, hn, 1);
    assert_int_equal(hn[0], 0xfe00 | 0x100); /* bit 50 of f64 is bit 8 of the f16 mantissa */
}

/* Widening is exact and keeps NaN bits, a signalling NaN included. */
static void test_widening(void **state)
{
    (void)state;
    const uint16_t h[] = {
        0x0001, /* 2^-24 */
        0x7bff, /* 65504 */
        0x7c01, /* signalling NaN, payload 1 */
        0x8000, /* -0 */
    };
    double d[4];
    convert(TD_F16, h, TD_F64, d, 4);
    assert_true(d[0] == 0x1p-24);
    assert_true(d[1] == 65504.0);
    /* f16 mantissa 1 -> f32 bit 13 -> f64 bit 42; exponent all ones, quiet bit 51 clear */
    assert_int_equal(bits64(d[2]), 0x7ff0000000000000ull | (1ull << 42));
    assert_int_equal(bits64(d[3]), 0x8000000000000000ull);
    float f[4];
    convert(TD_F16, h, TD_F32, f, 4);
    uint32_t u;
    memcpy(&u, &f[2], 4);
    assert_int_equal(u, 0x7f802000u);
    const uint16_t b[] = { 0x3f81, 0x0001 }; /* 1 + 2^-7; the smallest bf16 subnormal 2^-133 */
    double bd[2];
    convert(TD_BF16, b, TD_F64, bd, 2);
    assert_true(bd[0] == 1.0 + 0x1p-7);
    assert_true(bd[1] == 0x1p-133);
}

/* float -> int: truncation toward zero, saturation to the dtype's range, NaN -> 0. */
static void test_float_to_int(void **state)
{
    (void)state;
    const float in[] = { 2.7f, -2.7f, NAN, 1e10f, -1e10f, 127.9f, -128.9f, 300.0f, -1.0f, 255.5f };
    enum { N = sizeof in / sizeof in[0] };
    int8_t i8[N];
    uint8_t u8[N];
    int64_t i64[N];
    convert(TD_F32, in, TD_I8, i8, N);
    convert(TD_F32, in, TD_U8, u8, N);
    convert(TD_F32, in, TD_I64, i64, N);
    const int8_t w8[N] = { 2, -2, 0, 127, -128, 127, -128, 127, -1, 127 };
    const uint8_t wu8[N] = { 2, 0, 0, 255, 0, 127, 0, 255, 0, 255 };
    const int64_t w64[N] = { 2, -2, 0, 10000000000ll, -10000000000ll, 127, -128, 300, -1, 255 };
    for (int i = 0; i < N; i++) {
        assert_int_equal(i8[i], w8[i]);
        assert_int_equal(u8[i], wu8[i]);
        assert_true(i64[i] == w64[i]);
    }
    const double big[] = { 1e19, -1e19, 0x1p63, -0x1p63, 0x1p62 };
    int64_t b64[5];
    convert(TD_F64, big, TD_I64, b64, 5);
    assert_true(b64[0] == INT64_MAX);
    assert_true(b64[1] == INT64_MIN);
    assert_true(b64[2] == INT64_MAX);
    assert_true(b64[3] == INT64_MIN);
    assert_true(b64[4] == ((int64_t)1 << 62));
}

/* int -> int wraps modulo 2^n; i64 values past 2^31 survive storage. */
static void test_int_wrap(void **state)
{
    (void)state;
    const int64_t in[] = { 256, 257, -1, 300, 128, 255, ((int64_t)1 << 32) + 5, (int64_t)1 << 31,
                           ((int64_t)1 << 40) + 3, INT64_MAX };
    enum { N = sizeof in / sizeof in[0] };
    uint8_t u8[N];
    int8_t i8[N];
    int32_t i32[N];
    int64_t back[N];
    convert(TD_I64, in, TD_U8, u8, N);
    convert(TD_I64, in, TD_I8, i8, N);
    convert(TD_I64, in, TD_I32, i32, N);
    convert(TD_I64, in, TD_I64, back, N);
    const uint8_t wu8[N] = { 0, 1, 255, 44, 128, 255, 5, 0, 3, 255 };
    const int8_t wi8[N] = { 0, 1, -1, 44, -128, -1, 5, 0, 3, -1 };
    const int32_t wi32[N] = { 256, 257, -1, 300, 128, 255, 5, INT32_MIN, 3, -1 };
    for (int i = 0; i < N; i++) {
        assert_int_equal(u8[i], wu8[i]);
        assert_int_equal(i8[i], wi8[i]);
        assert_int_equal(i32[i], wi32[i]);
        assert_true(back[i] == in[i]);
    }
    /* u8 -> i32 zero-extends, i8 -> i64 sign-extends */
    const uint8_t u[2] = { 200, 255 };
    int32_t ui[2];
    convert(TD_U8, u, TD_I32, ui, 2);
    assert_int_equal(ui[0], 200);
    assert_int_equal(ui[1], 255);
}

/* int -> float rounds once to nearest even. */
static void test_int_to_float(void **state)
{
    (void)state;
    const int64_t in[] = {
        (1 << 24) + 1,                               /* f32: a tie between 2^24 and 2^24 + 2: even 2^24 */
        (1 << 24) + 3,                               /* f32: a tie between +2 (odd mantissa) and +4: 2^24 + 4 */
        2049,                                        /* f16: a tie between 2048 and 2050: 2048 (0x6800) */
        2051,                                        /* f16: a tie between 2050 (odd) and 2052: 2052 (0x6802) */
        65520,                                       /* f16: inf */
        ((int64_t)1 << 32) + ((int64_t)1 << 24) + 1, /* bf16: above the tie of 2^32 + 2^24: 0x4f81 */
        -257,                                        /* bf16: a tie between -256 and -258: -256 (0xc380) */
    };
    enum { N = sizeof in / sizeof in[0] };
    float f[N];
    uint16_t h[N], b[N];
    convert(TD_I64, in, TD_F32, f, N);
    convert(TD_I64, in, TD_F16, h, N);
    convert(TD_I64, in, TD_BF16, b, N);
    assert_true(f[0] == 16777216.0f);
    assert_true(f[1] == 16777220.0f);
    assert_int_equal(h[2], 0x6800);
    assert_int_equal(h[3], 0x6802);
    assert_int_equal(h[4], 0x7c00);
    assert_int_equal(b[5], 0x4f81); /* 2^32 is 0x4f80; one ulp of 2^25 more */
    assert_int_equal(b[6], 0xc380);
}

/* Bools: to a float 0/1; floats to bool are != 0 (NaN true, -0 false, via the int twin of
 * the bool class is not offered: bool has one dtype). */
static void test_bool(void **state)
{
    (void)state;
    const bool in[3] = { true, false, true };
    uint16_t h[3];
    int64_t l[3];
    convert(TD_BOOL, in, TD_F16, h, 3);
    convert(TD_BOOL, in, TD_I64, l, 3);
    assert_int_equal(h[0], 0x3c00);
    assert_int_equal(h[1], 0x0000);
    assert_true(l[0] == 1 && l[1] == 0 && l[2] == 1);
}

/* The creation twins: zeros, ones, full (value as double / int64_t, rounded once). */
static void test_creation(void **state)
{
    (void)state;
    const int64_t shape[2] = { 2, 3 };
    td_tensor *t = NULL;
    double d[6];
    OK(td_float_full_dtype(cpu, TD_F64, shape, 2, 0.1, &t));
    OK(td_float_into_data_dtype(t, TD_F64, d, 6));
    for (int i = 0; i < 6; i++)
        assert_true(d[i] == 0.1); /* the double 0.1, not the f32 one */
    td_tensor_release(t);
    int64_t l[6];
    OK(td_int_full_dtype(cpu, TD_I64, shape, 2, ((int64_t)1 << 40) + 1, &t));
    OK(td_int_into_data_dtype(t, TD_I64, l, 6));
    for (int i = 0; i < 6; i++)
        assert_true(l[i] == ((int64_t)1 << 40) + 1);
    td_tensor_release(t);
    uint16_t h[6];
    OK(td_float_ones_dtype(cpu, TD_BF16, shape, 2, &t));
    OK(td_float_into_data_dtype(t, TD_BF16, h, 6));
    for (int i = 0; i < 6; i++)
        assert_int_equal(h[i], 0x3f80);
    td_tensor_release(t);
    uint8_t u[6];
    OK(td_int_zeros_dtype(cpu, TD_U8, shape, 2, &t));
    OK(td_int_into_data_dtype(t, TD_U8, u, 6));
    for (int i = 0; i < 6; i++)
        assert_int_equal(u[i], 0);
    td_tensor_release(t);
    /* into_data_dtype converts on the way out: bf16 ones read as f32 */
    float f[6];
    OK(td_float_ones_dtype(cpu, TD_BF16, shape, 2, &t));
    OK(td_float_into_data_dtype(t, TD_F32, f, 6));
    assert_true(f[5] == 1.0f);
    td_tensor_release(t);
    /* the default dtype is the old function */
    OK(td_float_full_dtype(cpu, TD_F32, shape, 2, 0.1, &t));
    OK(td_float_into_data(t, f, 6));
    assert_true(f[0] == 0.1f);
    td_tensor_release(t);
}

/* Bad dtype arguments. */
static void test_bad_dtype_args(void **state)
{
    (void)state;
    const int64_t shape[1] = { 2 };
    td_tensor *t = NULL;
    assert_int_equal(td_float_zeros_dtype(cpu, TD_I64, shape, 1, &t), TD_E_KIND);
    assert_string_equal(td_last_error(), "float_zeros_dtype: dtype i64 is an int dtype, not a float one");
    assert_null(t);
    assert_int_equal(td_int_zeros_dtype(cpu, (td_dtype)99, shape, 1, &t), TD_E_INVALID);
    assert_null(t);
    assert_int_equal(td_float_zeros_dtype(cpu, TD_Q8_0, shape, 1, &t), TD_E_UNSUPPORTED);
    assert_non_null(strstr(td_last_error(), "td_float_quantize"));
    OK(td_float_zeros(cpu, shape, 1, &t));
    td_tensor *u = NULL;
    assert_int_equal(td_int_cast(t, TD_I64, &u), TD_E_KIND);
    assert_null(u);
    assert_int_equal(td_float_cast(t, TD_I8, &u), TD_E_KIND);
    float small[1];
    assert_int_equal(td_float_into_data_dtype(t, TD_F32, small, 1), TD_E_INVALID);
    /* a cast to its own dtype is the tensor itself */
    OK(td_float_cast(t, TD_F32, &u));
    assert_ptr_equal(u, t);
    td_tensor_release(u);
    td_tensor_release(t);
}

/* Two dtypes of one class in one op: TD_E_DTYPE naming both and the cast to call. */
static void test_mixing(void **state)
{
    (void)state;
    const int64_t shape[1] = { 2 };
    td_tensor *a = NULL, *b = NULL, *c = NULL;
    OK(td_float_ones_dtype(cpu, TD_F16, shape, 1, &a));
    OK(td_float_ones(cpu, shape, 1, &b));
    assert_int_equal(td_float_add(a, b, &c), TD_E_DTYPE);
    assert_string_equal(td_last_error(),
                        "float_add: a is f16 and b is f32; cast one of them: td_float_cast(b, TD_F16, &t)");
    assert_null(c);
    td_tensor_release(a);
    td_tensor_release(b);
    OK(td_int_ones_dtype(cpu, TD_I8, shape, 1, &a));
    OK(td_int_ones_dtype(cpu, TD_U8, shape, 1, &b));
    assert_int_equal(td_int_add(a, b, &c), TD_E_DTYPE);
    assert_string_equal(td_last_error(),
                        "int_add: a is i8 and b is u8; cast one of them: td_int_cast(b, TD_I8, &t)");
    td_tensor_release(a);
    td_tensor_release(b);
}

/* A dtype the CPU stores but does not compute (and that has no "via f32"): a clear error. */
static void test_not_computed(void **state)
{
    (void)state;
    const int64_t shape[1] = { 2 };
    td_tensor *a = NULL, *c = NULL;
    OK(td_int_ones_dtype(cpu, TD_I8, shape, 1, &a));
    assert_int_equal(td_int_argsort(a, 0, 0, &c), TD_E_UNSUPPORTED);
    assert_string_equal(td_last_error(),
                        "int_argsort: dtype i8 is not computed by cpu: cast first (td_int_cast(t, TD_I32, &t))");
    assert_null(c);
    td_tensor_release(a);
}

/* A float kernel without f64 (the CPU's attention, convs, pools) runs the op's decomposition in
 * f64 rather than refusing: SUPPORT.md's "composite" cell (gen/tdgen/emit_support.lua). With
 * q = k = [[0, 0], [0, a]], a^2 = sqrt 2 ln 3 (scale 1/sqrt 2), the second row's scores are 0 and ln 3:
 * weights 1/4 and 3/4 of v's rows [1, 2] and [5, 10]: [4, 8]. The first row's scores are 0, 0:
 * [3, 6]. An f32 computation would miss by about 1e-7; f64 holds 1e-14. */
static void test_f64_by_decomposition(void **state)
{
    (void)state;
    const int64_t shape4[4] = { 1, 1, 2, 2 }; /* [B, H, L, E] */
    const double qk[4] = { 0.0, 0.0, 0.0, sqrt(sqrt(2.0) * log(3.0)) }, v[4] = { 1, 2, 5, 10 };
    const double want[4] = { 3, 6, 4, 8 };
    td_tensor *tq = NULL, *tv = NULL, *c = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F64, qk, shape4, 4, &tq));
    OK(td_float_from_data_dtype(cpu, TD_F64, v, shape4, 4, &tv));
    OK(td_float_attention(tq, tq, tv, 0, &c));
    td_dtype dt = TD_F32;
    OK(td_tensor_dtype(c, &dt));
    assert_int_equal(dt, TD_F64);
    double got[4];
    OK(td_float_into_data_dtype(c, TD_F64, got, 4));
    for (int i = 0; i < 4; i++)
        assert_true(fabs(got[i] - want[i]) <= 1e-14 * want[i]);
    td_tensor_release(tq);
    td_tensor_release(tv);
    td_tensor_release(c);
}

/* f16 / bf16 through an f32 kernel ("via f32"): the result has the inputs' dtype and is
 * the f32 result rounded once. */
static void test_via_f32(void **state)
{
    (void)state;
    const int64_t shape[1] = { 3 };
    /* 1 + 2^-11 is a tie: even 0x3c00; 65504 + 65504 overflows: inf; (1 + 2^-10) + 2^-11 =
     * 1 + 3 * 2^-11, a tie between 0x3c01 and 0x3c02: even 0x3c02 */
    const uint16_t a16[3] = { 0x3c00, 0x7bff, 0x3c01 }, b16[3] = { 0x1000, 0x7bff, 0x1000 };
    td_tensor *a = NULL, *b = NULL, *c = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F16, a16, shape, 1, &a));
    OK(td_float_from_data_dtype(cpu, TD_F16, b16, shape, 1, &b));
    OK(td_float_add(a, b, &c));
    td_dtype dt;
    OK(td_tensor_dtype(c, &dt));
    assert_int_equal(dt, TD_F16);
    uint16_t got[3];
    OK(td_float_into_data_dtype(c, TD_F16, got, 3));
    assert_int_equal(got[0], 0x3c00);
    assert_int_equal(got[1], 0x7c00);
    assert_int_equal(got[2], 0x3c02);
    /* the f32 entry reads f16 data through f32 */
    float f[3];
    OK(td_float_into_data(a, f, 3));
    assert_true(f[0] == 1.0f && f[1] == 65504.0f && f[2] == 1.0f + 0x1p-10f);
    td_tensor_release(c);
    /* a non-float result is not converted back: float_into_int of f16 2.5 is i32 2 */
    const uint16_t h25[1] = { 0x4100 };
    td_tensor *h = NULL, *i = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F16, h25, shape, 0, &h));
    OK(td_float_into_int(h, &i));
    OK(td_tensor_dtype(i, &dt));
    assert_int_equal(dt, TD_I32);
    int32_t iv[1];
    OK(td_int_into_data(i, iv, 1));
    assert_int_equal(iv[0], 2);
    td_tensor_release(h);
    td_tensor_release(i);
    /* bf16 exp(0) = 1: 0x3f80 */
    const int64_t s2[1] = { 2 };
    OK(td_float_zeros_dtype(cpu, TD_BF16, s2, 1, &h));
    OK(td_float_exp(h, &c));
    OK(td_tensor_dtype(c, &dt));
    assert_int_equal(dt, TD_BF16);
    uint16_t e[2];
    OK(td_float_into_data_dtype(c, TD_BF16, e, 2));
    assert_int_equal(e[0], 0x3f80);
    assert_int_equal(e[1], 0x3f80);
    td_tensor_release(h);
    td_tensor_release(c);
    /* through autodiff's arm (a device with the context enabled wraps the same arm) */
    td_device *ad = NULL;
    OK(td_device_autodiff(cpu, TD_CHECKPOINT_DEFAULT, &ad));
    td_tensor *x = NULL, *y = NULL;
    OK(td_float_from_data_dtype(ad, TD_F16, a16, shape, 1, &x));
    OK(td_float_add(x, x, &y)); /* 2, 131008 -> inf, 2 + 2^-9 */
    OK(td_tensor_dtype(y, &dt));
    assert_int_equal(dt, TD_F16);
    OK(td_float_into_data_dtype(y, TD_F16, got, 3));
    assert_int_equal(got[0], 0x4000);
    assert_int_equal(got[1], 0x7c00);
    assert_int_equal(got[2], 0x4001);
    td_tensor_release(x);
    td_tensor_release(y);
    td_device_release(ad);
    td_tensor_release(a);
    td_tensor_release(b);
}

/* Native f64 and i64 kernels (the CPU spec's op_dtypes): computed in the dtype itself. */
static void test_native_wide(void **state)
{
    (void)state;
    const int64_t shape[1] = { 2 };
    const double x[2] = { 0.1, 1.0 + 0x1p-40 }, y[2] = { 0.2, 1.0 };
    td_tensor *a = NULL, *b = NULL, *c = NULL, *g = NULL;
    OK(td_float_from_data_dtype(cpu, TD_F64, x, shape, 1, &a));
    OK(td_float_from_data_dtype(cpu, TD_F64, y, shape, 1, &b));
    OK(td_float_add(a, b, &c));
    double d[2];
    OK(td_float_into_data_dtype(c, TD_F64, d, 2));
    assert_int_equal(bits64(d[0]), 0x3fd3333333333334ull); /* 0.1 + 0.2 in binary64 */
    assert_true(d[1] == 2.0 + 0x1p-40);                    /* lost in f32 */
    OK(td_float_greater(a, b, &g));                       /* 0.1 > 0.2 false; 1 + 2^-40 > 1 true */
    bool gb[2];
    OK(td_bool_into_data(g, gb, 2));
    assert_false(gb[0]);
    assert_true(gb[1]);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_tensor_release(g);
    const int64_t p[2] = { (int64_t)1 << 40, INT64_MAX }, q[2] = { ((int64_t)1 << 40) + 7, 1 };
    OK(td_int_from_data_dtype(cpu, TD_I64, p, shape, 1, &a));
    OK(td_int_from_data_dtype(cpu, TD_I64, q, shape, 1, &b));
    OK(td_int_add(a, b, &c));
    int64_t r[2];
    OK(td_int_into_data_dtype(c, TD_I64, r, 2));
    assert_true(r[0] == ((int64_t)1 << 41) + 7);
    assert_true(r[1] == INT64_MIN); /* wraps */
    td_tensor_release(c);
    OK(td_int_mul(a, b, &c)); /* 2^40 * (2^40 + 7) mod 2^64 = 7 * 2^40; INT64_MAX * 1 */
    OK(td_int_into_data_dtype(c, TD_I64, r, 2));
    assert_true(r[0] == 7 * ((int64_t)1 << 40));
    assert_true(r[1] == INT64_MAX);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
}

/* Printing shows other dtypes: ints through i64 (exact past 2^31), floats through f32. */
static void test_print(void **state)
{
    (void)state;
    const int64_t shape[1] = { 2 };
    const int64_t v[2] = { ((int64_t)1 << 40) + 1, -5 };
    td_tensor *t = NULL;
    char buf[256];
    size_t len = 0;
    OK(td_int_from_data_dtype(cpu, TD_I64, v, shape, 1, &t));
    OK(td_tensor_format(t, buf, sizeof buf, &len));
    assert_non_null(strstr(buf, "dtype=i64"));
    assert_non_null(strstr(buf, "1099511627777"));
    assert_non_null(strstr(buf, "-5"));
    td_tensor_release(t);
    const uint16_t h[2] = { 0x3e00, 0xc000 }; /* 1.5, -2 */
    OK(td_float_from_data_dtype(cpu, TD_F16, h, shape, 1, &t));
    OK(td_tensor_format(t, buf, sizeof buf, &len));
    assert_non_null(strstr(buf, "dtype=f16"));
    assert_non_null(strstr(buf, "1.5"));
    assert_non_null(strstr(buf, "-2."));
    td_tensor_release(t);
}

/* Failing allocations on the twins' and casts' paths leak nothing. */
static void test_no_leaks(void **state)
{
    (void)state;
    const int64_t shape[1] = { 5 };
    const long live = td_testing_live_objects();
    const float v[5] = { 1, 2, 3, 4, 5 };
    for (long n = 0; n < 24; n++) {
        td_tensor *a = NULL, *b = NULL;
        td_testing_fail_allocations_after(n);
        td_status st = td_float_from_data_dtype(cpu, TD_F32, v, shape, 1, &a);
        if (st == TD_OK)
            st = td_float_cast(a, TD_BF16, &b);
        td_tensor *c = NULL;
        if (st == TD_OK)
            st = td_float_into_int_dtype(b, TD_I64, &c);
        td_tensor *d = NULL;
        if (st == TD_OK)
            st = td_float_add(b, b, &d); /* via f32 */
        td_tensor_release(d);
        td_testing_fail_allocations_after(-1);
        assert_true(st == TD_OK || st == TD_E_NOMEM);
        td_tensor_release(a);
        td_tensor_release(b);
        td_tensor_release(c);
        assert_int_equal(td_testing_live_objects(), live);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_to_f16),   cmocka_unit_test(test_f32_to_bf16),
        cmocka_unit_test(test_f64_narrowing), cmocka_unit_test(test_widening),
        cmocka_unit_test(test_float_to_int), cmocka_unit_test(test_int_wrap),
        cmocka_unit_test(test_int_to_float), cmocka_unit_test(test_bool),
        cmocka_unit_test(test_creation),     cmocka_unit_test(test_bad_dtype_args),
        cmocka_unit_test(test_mixing),       cmocka_unit_test(test_not_computed), cmocka_unit_test(test_f64_by_decomposition),
        cmocka_unit_test(test_via_f32),      cmocka_unit_test(test_native_wide),
        cmocka_unit_test(test_print),        cmocka_unit_test(test_no_leaks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
