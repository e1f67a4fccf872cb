/* The scalar f32 <-> f16 / bf16 conversions (runtime/core/td_half.h), bit for bit.
 *
 * Three kinds of reference, none of them the converter itself:
 *  - values worked out by hand from the IEEE formats (f16: 1 sign, 5 exponent bits with
 *    bias 15, 10 mantissa bits; bf16: 1 sign, 8 exponent bits with bias 127, 7 mantissa
 *    bits, i.e. the top half of an f32), with the reasoning beside each;
 *  - an independent rounder written with double arithmetic (frexp, ldexp, nearbyint in the
 *    default round-to-nearest-even mode), run over every 16-bit pattern, over the midpoints
 *    between neighbouring 16-bit values and their f32 neighbours, and over a stride through
 *    all 2^32 f32 patterns;
 *  - where the compiler has _Float16 (GCC 12 on x86-64), its float -> _Float16 conversion. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "td_half.h"

static float fb(uint32_t u) { return td_f32_from_bits(u); }

/* The rounder by double arithmetic: mbits mantissa bits, exponents emin..emax (bias emax).
 * No NaN here; callers handle NaNs. */
static uint16_t ref_narrow(float v, int mbits, int emin, int emax)
{
    uint16_t sign = signbit(v) ? 0x8000u : 0u;
    uint16_t inf = (uint16_t)((2 * emax + 1) << mbits);
    double a = fabs((double)v);
    if (isinf(a))
        return (uint16_t)(sign | inf);
    if (a == 0.0)
        return sign;
    int k;
    (void)frexp(a, &k); /* a = f * 2^k, f in [0.5, 1): the binade is 2^(k-1) */
    int e = k - 1 < emin ? emin : k - 1;
    double q = nearbyint(ldexp(a, mbits - e)); /* exact scaling, then ties to even */
    if (q == ldexp(1.0, mbits + 1)) { /* rounded up into the next binade */
        q = ldexp(1.0, mbits);
        e++;
    }
    if (e > emax)
        return (uint16_t)(sign | inf);
    if (q < ldexp(1.0, mbits)) /* subnormal (only when e == emin) */
        return (uint16_t)(sign | (uint16_t)q);
    return (uint16_t)(sign | ((e + emax) << mbits) | ((int)q - (1 << mbits)));
}

static uint16_t ref_f16(float v) { return ref_narrow(v, 10, -14, 15); }
static uint16_t ref_bf16(float v) { return ref_narrow(v, 7, -126, 127); }

/* The value of a 16-bit pattern by double arithmetic (non-NaN). */
static double ref_value(uint16_t h, int mbits, int ebits)
{
    int bias = (1 << (ebits - 1)) - 1;
    int e = (h >> mbits) & ((1 << ebits) - 1);
    int m = h & ((1 << mbits) - 1);
    double s = (h & 0x8000u) ? -1.0 : 1.0;
    if (e == (1 << ebits) - 1)
        return s * INFINITY;
    if (e == 0)
        return s * ldexp((double)m, 1 - bias - mbits);
    return s * ldexp((double)(m + (1 << mbits)), e - bias - mbits);
}

static bool f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }
static bool bf16_is_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu); }

struct case16 { uint32_t f32; uint16_t want; const char *why; };

static void test_f32_to_f16_by_hand(void **state)
{
    (void)state;
    static const struct case16 cases[] = {
        { 0x3f800000u, 0x3c00u, "1.0: exponent 0 -> biased 15 (01111), mantissa 0" },
        { 0xbf800000u, 0xbc00u, "-1.0: the same with the sign bit" },
        { 0xc0000000u, 0xc000u, "-2.0: biased exponent 16 (10000)" },
        { 0x3dcccccdu, 0x2e66u, "0.1f = 1.6000000238 * 2^-4: biased 11, .6000000238*1024 = 614.4 -> 614 (0x266)" },
        { 0x00000000u, 0x0000u, "+0" },
        { 0x80000000u, 0x8000u, "-0 keeps its sign" },
        { 0x7f800000u, 0x7c00u, "+inf: exponent all ones, mantissa 0" },
        { 0xff800000u, 0xfc00u, "-inf" },
        { 0x477fe000u, 0x7bffu, "65504 = (2 - 2^-10) * 2^15, the largest finite f16" },
        { 0x477fef00u, 0x7bffu, "65519: below the midpoint 65520 to 2^16, rounds down" },
        { 0x477ff000u, 0x7c00u, "65520: the tie between 0x7bff (odd) and 2^16 goes to even, i.e. overflow to inf" },
        { 0xc77ff000u, 0xfc00u, "-65520 -> -inf" },
        { 0x7f7fffffu, 0x7c00u, "FLT_MAX -> inf" },
        { 0x38800000u, 0x0400u, "2^-14, the smallest normal: biased exponent 1, mantissa 0" },
        { 0x387fc000u, 0x03ffu, "1023 * 2^-24, the largest subnormal" },
        { 0x387fe000u, 0x0400u, "2^-14 - 2^-25: tie between 0x3ff (odd) and 0x400 -> 0x400 (subnormal rounds into normal)" },
        { 0x33800000u, 0x0001u, "2^-24, the smallest subnormal" },
        { 0x33000000u, 0x0000u, "2^-25: tie between 0 and 2^-24 -> 0 (even)" },
        { 0x33000001u, 0x0001u, "just above 2^-25 -> 2^-24" },
        { 0xb3000000u, 0x8000u, "-2^-25 -> -0" },
        { 0x33c00000u, 0x0002u, "3 * 2^-25 = 1.5 ulp: tie between 1 and 2 -> 2" },
        { 0x33a00000u, 0x0001u, "1.25 * 2^-24 -> 1" },
        { 0x00000001u, 0x0000u, "the smallest f32 subnormal -> +0" },
        { 0x80000001u, 0x8000u, "its negative -> -0" },
        { 0x3f801000u, 0x3c00u, "1 + 2^-11: tie between 0x3c00 (even) and 0x3c01 -> 0x3c00" },
        { 0x3f801001u, 0x3c01u, "1 + 2^-11 + 2^-23: above the tie -> 0x3c01" },
        { 0x3f803000u, 0x3c02u, "1 + 3 * 2^-11: tie between 0x3c01 (odd) and 0x3c02 -> 0x3c02" },
        { 0x3ffff000u, 0x4000u, "2 - 2^-11: tie between 0x3fff (2 - 2^-10, odd) and 2.0 -> carry into the exponent, 0x4000" },
        { 0x7fc00000u, 0x7e00u, "quiet NaN: exponent all ones, quiet bit (bit 9)" },
        { 0xffc00001u, 0xfe00u, "negative quiet NaN: the sign is kept, payload bits below bit 13 of the f32 are dropped" },
        { 0x7f800001u, 0x7e00u, "signalling NaN with payload only in the low bits: quieted, never turned into inf" },
        { 0x7fa00000u, 0x7f00u, "signalling NaN with f32 payload bit 21: quieted, the bit kept as f16 bit 8" },
        { 0xff802000u, 0xfe01u, "negative signalling NaN with f32 bit 13: f16 bit 0 kept, quiet bit set" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = td_f32_to_f16(fb(cases[i].f32));
        if (got != cases[i].want)
            fail_msg("f32 0x%08x -> f16 0x%04x, want 0x%04x (%s)", (unsigned)cases[i].f32,
                     (unsigned)got, (unsigned)cases[i].want, cases[i].why);
    }
}

struct case32 { uint16_t h; uint32_t want; const char *why; };

static void test_f16_to_f32_by_hand(void **state)
{
    (void)state;
    static const struct case32 cases[] = {
        { 0x3c00u, 0x3f800000u, "1.0" },
        { 0x0001u, 0x33800000u, "2^-24: f32 biased exponent -24 + 127 = 103 (0x67)" },
        { 0x03ffu, 0x387fc000u, "1023 * 2^-24 = 1.111111111b * 2^-15: exponent 112, nine mantissa ones" },
        { 0x0400u, 0x38800000u, "2^-14" },
        { 0x7bffu, 0x477fe000u, "65504" },
        { 0x8000u, 0x80000000u, "-0" },
        { 0xfc00u, 0xff800000u, "-inf" },
        { 0x7e00u, 0x7fc00000u, "quiet NaN" },
        { 0x7c01u, 0x7f802000u, "signalling NaN: payload moved up 13 bits, kept signalling" },
        { 0xfe01u, 0xffc02000u, "negative quiet NaN with payload" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint32_t got = td_f32_bits(td_f16_to_f32(cases[i].h));
        if (got != cases[i].want)
            fail_msg("f16 0x%04x -> f32 0x%08x, want 0x%08x (%s)", (unsigned)cases[i].h,
                     (unsigned)got, (unsigned)cases[i].want, cases[i].why);
    }
}

static void test_bf16_by_hand(void **state)
{
    (void)state;
    static const struct case16 cases[] = {
        { 0x3f800000u, 0x3f80u, "1.0: the top half of the f32" },
        { 0x3f808000u, 0x3f80u, "1 + 2^-8: tie between 0x3f80 (even) and 0x3f81 -> 0x3f80" },
        { 0x3f808001u, 0x3f81u, "1 + 2^-8 + 2^-23: above the tie" },
        { 0x3f818000u, 0x3f82u, "1 + 3 * 2^-8: tie between 0x3f81 (odd) and 0x3f82 -> 0x3f82" },
        { 0x3f80ffffu, 0x3f81u, "just below 1 + 2^-7 -> 0x3f81" },
        { 0x7f7f7fffu, 0x7f7fu, "below the midpoint past the largest finite bf16" },
        { 0x7f7f8000u, 0x7f80u, "tie between 0x7f7f (odd) and 2^128 -> inf" },
        { 0x7f7fffffu, 0x7f80u, "FLT_MAX -> inf" },
        { 0xff7fffffu, 0xff80u, "-FLT_MAX -> -inf" },
        { 0x7f800000u, 0x7f80u, "+inf" },
        { 0x80000000u, 0x8000u, "-0" },
        { 0x00008000u, 0x0000u, "f32 subnormal 2^-134: tie between 0 and 2^-133 -> 0" },
        { 0x00018000u, 0x0002u, "3 * 2^-134: tie between 1 and 2 (units of 2^-133) -> 2" },
        { 0x80008001u, 0x8001u, "just above -2^-134 in magnitude -> the smallest negative subnormal" },
        { 0x007fffffu, 0x0080u, "the largest f32 subnormal rounds up to the smallest normal 2^-126" },
        { 0x7fc00000u, 0x7fc0u, "quiet NaN" },
        { 0x7f800001u, 0x7fc0u, "signalling NaN with a low payload: quieted (plain rounding would give inf)" },
        { 0x7f80ffffu, 0x7fc0u, "signalling NaN whose low bits would carry: still a NaN, not 0x7f81" },
        { 0xff810000u, 0xffc1u, "negative signalling NaN: sign and payload bit 16 kept, quiet bit set" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = td_f32_to_bf16(fb(cases[i].f32));
        if (got != cases[i].want)
            fail_msg("f32 0x%08x -> bf16 0x%04x, want 0x%04x (%s)", (unsigned)cases[i].f32,
                     (unsigned)got, (unsigned)cases[i].want, cases[i].why);
    }
    static const struct case32 back[] = {
        { 0x3f80u, 0x3f800000u, "1.0" },
        { 0x0001u, 0x00010000u, "2^-133, an f32 subnormal" },
        { 0x7f81u, 0x7f810000u, "signalling NaN kept bit for bit" },
        { 0xff80u, 0xff800000u, "-inf" },
    };
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++) {
        uint32_t got = td_f32_bits(td_bf16_to_f32(back[i].h));
        if (got != back[i].want)
            fail_msg("bf16 0x%04x -> f32 0x%08x, want 0x%08x (%s)", (unsigned)back[i].h,
                     (unsigned)got, (unsigned)back[i].want, back[i].why);
    }
}

/* Every f16 pattern: the widening equals the double-arithmetic value, and narrowing it back
 * gives the pattern again (a NaN comes back a NaN with its sign and payload, quieted). */
static void test_f16_every_pattern(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 0x10000u; i++) {
        uint16_t h = (uint16_t)i;
        float f = td_f16_to_f32(h);
        uint16_t back = td_f32_to_f16(f);
        if (f16_is_nan(h)) {
            if (!isnan(f) || (signbit(f) != 0) != ((h & 0x8000u) != 0))
                fail_msg("f16 NaN 0x%04x widened to a non-NaN or lost its sign", (unsigned)h);
            if (back != (h | 0x0200u))
                fail_msg("f16 NaN 0x%04x -> 0x%04x, want 0x%04x", (unsigned)h, (unsigned)back,
                         (unsigned)(h | 0x0200u));
            continue;
        }
        float want = (float)ref_value(h, 10, 5);
        if (td_f32_bits(f) != td_f32_bits(want))
            fail_msg("f16 0x%04x -> f32 0x%08x, want 0x%08x", (unsigned)h,
                     (unsigned)td_f32_bits(f), (unsigned)td_f32_bits(want));
        if (back != h)
            fail_msg("f16 0x%04x does not round-trip (0x%04x)", (unsigned)h, (unsigned)back);
    }
}

static void test_bf16_every_pattern(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < 0x10000u; i++) {
        uint16_t h = (uint16_t)i;
        float f = td_bf16_to_f32(h);
        uint16_t back = td_f32_to_bf16(f);
        if (bf16_is_nan(h)) {
            if (!isnan(f) || (signbit(f) != 0) != ((h & 0x8000u) != 0))
                fail_msg("bf16 NaN 0x%04x widened to a non-NaN or lost its sign", (unsigned)h);
            if (back != (h | 0x0040u))
                fail_msg("bf16 NaN 0x%04x -> 0x%04x, want 0x%04x", (unsigned)h, (unsigned)back,
                         (unsigned)(h | 0x0040u));
            continue;
        }
        float want = (float)ref_value(h, 7, 8);
        if (td_f32_bits(f) != td_f32_bits(want))
            fail_msg("bf16 0x%04x -> f32 0x%08x, want 0x%08x", (unsigned)h,
                     (unsigned)td_f32_bits(f), (unsigned)td_f32_bits(want));
        if (back != h)
            fail_msg("bf16 0x%04x does not round-trip (0x%04x)", (unsigned)h, (unsigned)back);
    }
}

#if defined(__FLT16_MAX__)
#define HAVE_FLOAT16 1
__extension__ typedef _Float16 cc_f16;
static uint16_t cc_to_f16(float f)
{
    volatile cc_f16 h = (cc_f16)f;
    cc_f16 v = h;
    uint16_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}
#endif

static long compiler_checked;

/* One f32 against both references; NaNs: a NaN with the sign and the documented payload. */
static void check_one(uint32_t u)
{
    float f = fb(u);
    uint16_t h = td_f32_to_f16(f);
    uint16_t b = td_f32_to_bf16(f);
    if (isnan(f)) {
        uint16_t wh = (uint16_t)(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
        uint16_t wb = (uint16_t)((u >> 16) | 0x0040u);
        if (h != wh || b != wb)
            fail_msg("NaN 0x%08x -> f16 0x%04x / bf16 0x%04x, want 0x%04x / 0x%04x",
                     (unsigned)u, (unsigned)h, (unsigned)b, (unsigned)wh, (unsigned)wb);
#ifdef HAVE_FLOAT16
        if (!f16_is_nan(cc_to_f16(f)))
            fail_msg("_Float16 gave a non-NaN for NaN 0x%08x", (unsigned)u);
        compiler_checked++;
#endif
        return;
    }
    uint16_t rh = ref_f16(f), rb = ref_bf16(f);
    if (h != rh)
        fail_msg("f32 0x%08x -> f16 0x%04x, double reference 0x%04x", (unsigned)u, (unsigned)h,
                 (unsigned)rh);
    if (b != rb)
        fail_msg("f32 0x%08x -> bf16 0x%04x, double reference 0x%04x", (unsigned)u,
                 (unsigned)b, (unsigned)rb);
#ifdef HAVE_FLOAT16
    uint16_t ch = cc_to_f16(f);
    if (h != ch)
        fail_msg("f32 0x%08x -> f16 0x%04x, _Float16 0x%04x", (unsigned)u, (unsigned)h,
                 (unsigned)ch);
    compiler_checked++;
#endif
}

/* Midpoints between neighbouring 16-bit values (exact in f32: 12 significant bits for f16,
 * 9 for bf16) and the f32 on each side of them, both signs: every tie and near-tie. */
static void test_midpoints(void **state)
{
    (void)state;
    long n = 0;
    for (uint32_t i = 0; i < 0x7c00u; i++) { /* every finite positive f16 and the next one */
        double mid = (ref_value((uint16_t)i, 10, 5) + ref_value((uint16_t)(i + 1), 10, 5)) / 2;
        if (i + 1 == 0x7c00u)
            mid = 65520.0; /* the midpoint to 2^16, where inf starts */
        uint32_t m = td_f32_bits((float)mid);
        for (int s = 0; s < 2; s++) {
            uint32_t sg = s ? 0x80000000u : 0u;
            check_one(sg | m);
            check_one(sg | (m - 1u));
            check_one(sg | (m + 1u));
            n += 3;
        }
    }
    for (uint32_t i = 0; i < 0x7f80u; i++) {
        uint32_t m = (i << 16) | 0x8000u; /* halfway between bf16 i and i + 1 */
        for (int s = 0; s < 2; s++) {
            uint32_t sg = s ? 0x80000000u : 0u;
            check_one(sg | m);
            check_one(sg | (m - 1u));
            check_one(sg | (m + 1u));
            n += 3;
        }
    }
    print_message("midpoints: %ld f32 values checked\n", n);
}

/* A stride through all 2^32 f32 patterns (an odd stride reaches every residue of the low
 * bits, so ties, NaN payloads and subnormals are sampled too). */
static void test_f32_sample(void **state)
{
    (void)state;
    long n = 0;
    compiler_checked = 0;
    for (uint64_t u = 0; u < 0x100000000ull; u += 509u, n++)
        check_one((uint32_t)u);
    print_message("sample: %ld f32 values checked against the double reference, %ld against "
                  "_Float16%s\n", n, compiler_checked,
#ifdef HAVE_FLOAT16
                  ""
#else
                  " (no _Float16 in this compiler: that reference did not run)"
#endif
    );
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_to_f16_by_hand),
        cmocka_unit_test(test_f16_to_f32_by_hand),
        cmocka_unit_test(test_bf16_by_hand),
        cmocka_unit_test(test_f16_every_pattern),
        cmocka_unit_test(test_bf16_every_pattern),
        cmocka_unit_test(test_midpoints),
        cmocka_unit_test(test_f32_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
