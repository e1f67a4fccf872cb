/* q8_0 / q4_0 blocks (runtime/core/td_quant.c): quantizing chosen inputs gives blocks whose
 * bytes are worked out by hand below from ggml's reference rules (docs/kernels.md); the
 * dequantized values are worked out the same way; random rows round-trip within half a step;
 * the dot products of every path the machine has equal a sum done here in double over the
 * blocks' values (exactly, when the scales are 1 and the sums are integers); bad lengths,
 * odd addresses and non-finite inputs are refused with a status. */
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

#include "td_half.h"
#include "td_quant.h"

static void expect_bytes(const void *got, const unsigned char *want, size_t n, const char *what)
{
    const unsigned char *g = got;
    for (size_t i = 0; i < n; i++)
        if (g[i] != want[i])
            fail_msg("%s: byte %zu is 0x%02x, want 0x%02x", what, i, g[i], want[i]);
}

/* Four q8_0 blocks in one row of 128 values. */
static void test_q8_0_by_hand(void **state)
{
    (void)state;
    float x[128] = { 0 };
    /* A: amax 127, so d = 1 (f16 0x3c00, bytes 00 3c) and id = 1: qs = roundf(x), ties away
     * from zero (-2.5 -> -3, 2.5 -> 3, -0.5 -> -1; round-to-even would give -2, 2, 0) */
    const float a[] = { 127.0f, -2.5f, 2.5f, 0.49f, -0.5f, 100.4f };
    memcpy(x, a, sizeof a);
    /* B: amax 254, d = 2 (f16 0x4000), id = 0.5: 3 -> 1.5 -> 2, 5 -> 2.5 -> 3, -1 -> -0.5 -> -1,
     * -254 -> -127 (0x81) */
    const float b[] = { -254.0f, 3.0f, 5.0f, -1.0f };
    memcpy(x + 32, b, sizeof b);
    /* C: all zero: d = 0, id = 0, qs 0 */
    /* D: amax 1, d = 1/127 = 0.0078740..., f16: 2^-7 * (1 + 8.06/1024) -> mantissa 8, 0x2008
     * (bytes 08 20); id = 127: 1 -> 127, 0.25 -> 31.75 -> 32 (0x20), -0.1 -> -12.7 -> -13 (0xf3) */
    const float d[] = { 1.0f, 0.25f, -0.1f };
    memcpy(x + 96, d, sizeof d);
    unsigned char want[4 * 34] = { 0 };
    const unsigned char wa[] = { 0x00, 0x3c, 0x7f, 0xfd, 0x03, 0x00, 0xff, 0x64 };
    const unsigned char wb[] = { 0x00, 0x40, 0x81, 0x02, 0x03, 0xff };
    const unsigned char wd[] = { 0x08, 0x20, 0x7f, 0x20, 0xf3 };
    memcpy(want, wa, sizeof wa);
    memcpy(want + 34, wb, sizeof wb);
    memcpy(want + 102, wd, sizeof wd);
    _Alignas(2) unsigned char got[4 * 34];
    memset(got, 0x55, sizeof got);
    assert_int_equal(td_quantize_row_q8_0(x, got, 128), TD_OK);
    expect_bytes(got, want, sizeof want, "q8_0 blocks");
    assert_int_equal(td_q8_0_row_bytes(128), 136);

    /* and back: qs * d */
    float y[128];
    assert_int_equal(td_dequantize_row_q8_0(got, y, 128), TD_OK);
    const float ya[] = { 127.0f, -3.0f, 3.0f, 0.0f, -1.0f, 100.0f, 0.0f };
    const float yb[] = { -254.0f, 4.0f, 6.0f, -2.0f, 0.0f };
    /* 0x2008 is 2^-7 * 1032/1024 = 129/16384; 127 * 129/16384 = 16383/16384 exactly */
    const float yd[] = { 16383.0f / 16384.0f, 32.0f * 129.0f / 16384.0f, -13.0f * 129.0f / 16384.0f, 0.0f };
    for (size_t i = 0; i < sizeof ya / sizeof ya[0]; i++)
        assert_true(y[i] == ya[i]);
    for (size_t i = 0; i < sizeof yb / sizeof yb[0]; i++)
        assert_true(y[32 + i] == yb[i]);
    for (int i = 64; i < 96; i++)
        assert_true(y[i] == 0.0f);
    for (size_t i = 0; i < sizeof yd / sizeof yd[0]; i++)
        assert_true(y[96 + i] == yd[i]);
}

/* Three q4_0 blocks. */
static void test_q4_0_by_hand(void **state)
{
    (void)state;
    float x[96] = { 0 };
    /* E: largest magnitude -8, so m = -8, d = m / -8 = 1 (0x3c00), id = 1; nibble =
     * min(15, trunc(x + 8.5)): -8 -> 0, 7 -> 15, 0 -> 8, -0.5 -> 8, 0.5 -> 9, -3.2 -> 5.3 -> 5;
     * x[16] = 3 -> 11, x[17] = -7.9 -> 0.6 -> 0. Byte j = nibble(x[j]) | nibble(x[j+16]) << 4. */
    const float e_lo[] = { -8.0f, 7.0f, 0.0f, -0.5f, 0.5f, -3.2f };
    memcpy(x, e_lo, sizeof e_lo);
    x[16] = 3.0f;
    x[17] = -7.9f;
    /* F: largest 16 (positive), d = -2 (0xc000), id = -0.5: 16 -> -8 + 8.5 -> 0, -14 -> 15,
     * 16 -> 0, -16 -> 16.5 -> clamped to 15; x[16] = 2 -> 7.5 -> 7; zeros -> 8 */
    const float f_lo[] = { 16.0f, -14.0f, 16.0f, -16.0f };
    memcpy(x + 32, f_lo, sizeof f_lo);
    x[48] = 2.0f;
    /* G: -4 and 4 tie in magnitude: the first, -4, is m: d = 0.5 (0x3800; the last would
     * give -0.5, 0xb800), id = 2: -4 -> 0, 4 -> 16.5 -> 15 */
    x[64] = -4.0f;
    x[65] = 4.0f;
    unsigned char want[3 * 18];
    memset(want, 0x88, sizeof want);
    const unsigned char we[] = { 0x00, 0x3c, 0xb0, 0x0f, 0x88, 0x88, 0x89, 0x85 };
    const unsigned char wf[] = { 0x00, 0xc0, 0x70, 0x8f, 0x80, 0x8f };
    const unsigned char wg[] = { 0x00, 0x38, 0x80, 0x8f };
    memcpy(want, we, sizeof we);
    memcpy(want + 18, wf, sizeof wf);
    memcpy(want + 36, wg, sizeof wg);
    _Alignas(2) unsigned char got[3 * 18];
    assert_int_equal(td_quantize_row_q4_0(x, got, 96), TD_OK);
    expect_bytes(got, want, sizeof want, "q4_0 blocks");
    assert_int_equal(td_q4_0_row_bytes(96), 54);

    /* and back: (nibble - 8) * d */
    float y[96];
    assert_int_equal(td_dequantize_row_q4_0(got, y, 96), TD_OK);
    const float ye[] = { -8.0f, 7.0f, 0.0f, 0.0f, 1.0f, -3.0f, 0.0f };
    for (size_t i = 0; i < sizeof ye / sizeof ye[0]; i++)
        assert_true(y[i] == ye[i]);
    assert_true(y[16] == 3.0f && y[17] == -8.0f && y[18] == 0.0f);
    const float yf[] = { 16.0f, -14.0f, 16.0f, -14.0f, -0.0f };
    for (size_t i = 0; i < sizeof yf / sizeof yf[0]; i++)
        assert_true(y[32 + i] == yf[i]);
    assert_true(y[48] == 2.0f);
    assert_true(y[64] == -4.0f && y[65] == 3.5f && y[66] == 0.0f);
}

static uint64_t rng = 0x2545f4914f6cdd1du;
static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)(next32() >> 8) / 16777216.0f;
}

/* Random rows of several scales (some small enough that the f16 scale is subnormal and
 * coarse) round-trip within half a step of the f32 scale d plus what storing d in f16 moves
 * the largest value (127 |d - d16|) for q8_0; within one step plus 8 |d - d16| for q4_0
 * (whose largest value, -m, clamps to 7 d). d is worked out here from the row. */
static void test_round_trip(void **state)
{
    (void)state;
    enum { N = 32 * 64 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    td_block_q8_0 *q8 = malloc(td_q8_0_row_bytes(N));
    td_block_q4_0 *q4 = malloc(td_q4_0_row_bytes(N));
    assert_true(x && y && q8 && q4);
    for (int i = 0; i < N; i++)
        x[i] = uniform(-1.0f, 1.0f) * ldexpf(1.0f, (i / 32) % 20 - 14);
    assert_int_equal(td_quantize_row_q8_0(x, q8, N), TD_OK);
    assert_int_equal(td_dequantize_row_q8_0(q8, y, N), TD_OK);
    for (int i = 0; i < N; i++) {
        float amax = 0.0f;
        for (int j = i / 32 * 32; j < i / 32 * 32 + 32; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        const double d = amax / 127.0f, d16 = td_f16_to_f32(q8[i / 32].d);
        const double bound = 0.5 * d + 127.0 * fabs(d - d16) + 1e-12;
        if (!(fabs((double)x[i] - y[i]) <= bound))
            fail_msg("q8_0 value %d: %g back as %g (d %g, stored %g)", i, (double)x[i], (double)y[i], d, d16);
    }
    assert_int_equal(td_quantize_row_q4_0(x, q4, N), TD_OK);
    assert_int_equal(td_dequantize_row_q4_0(q4, y, N), TD_OK);
    for (int i = 0; i < N; i++) {
        float amax = 0.0f;
        for (int j = i / 32 * 32; j < i / 32 * 32 + 32; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        const double d = amax / 8.0f, d16 = fabs(td_f16_to_f32(q4[i / 32].d));
        const double bound = d + 8.0 * fabs(d - d16) + 1e-12;
        if (!(fabs((double)x[i] - y[i]) <= bound))
            fail_msg("q4_0 value %d: %g back as %g (d %g, stored %g)", i, (double)x[i], (double)y[i], d, d16);
    }
    free(x);
    free(y);
    free(q8);
    free(q4);
}

/* The dot product done here: sum of value products in double, from the blocks' bytes. */
static double ref_dot_q8(const td_block_q8_0 *x, const td_block_q8_0 *y, int nb, double *mag)
{
    double s = 0.0;
    *mag = 0.0;
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < 32; j++) {
            const double t = (double)x[b].qs[j] * td_f16_to_f32(x[b].d) * (double)y[b].qs[j] * td_f16_to_f32(y[b].d);
            s += t;
            *mag += fabs(t);
        }
    return s;
}

static double ref_dot_q4(const td_block_q4_0 *x, const td_block_q8_0 *y, int nb, double *mag)
{
    double s = 0.0;
    *mag = 0.0;
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < 32; j++) {
            const int nib = j < 16 ? (x[b].qs[j] & 15) : (x[b].qs[j - 16] >> 4);
            const double t = (double)(nib - 8) * td_f16_to_f32(x[b].d) * (double)y[b].qs[j] * td_f16_to_f32(y[b].d);
            s += t;
            *mag += fabs(t);
        }
    return s;
}

static void fill_random(td_block_q8_0 *a, td_block_q8_0 *b, td_block_q4_0 *c, int nb, bool unit_scales)
{
    for (int i = 0; i < nb; i++) {
        /* scales: normal f16 values of either sign, or 1.0 */
        a[i].d = unit_scales ? 0x3c00 : (uint16_t)(0x1000 + next32() % 0x4000 + (next32() & 0x8000));
        b[i].d = unit_scales ? 0x3c00 : (uint16_t)(0x1000 + next32() % 0x4000);
        c[i].d = unit_scales ? 0x3c00 : (uint16_t)(0x1000 + next32() % 0x4000 + (next32() & 0x8000));
        for (int j = 0; j < 32; j++) {
            a[i].qs[j] = (int8_t)(next32() & 0xff); /* every byte, -128 included */
            b[i].qs[j] = (int8_t)(next32() & 0xff);
        }
        for (int j = 0; j < 16; j++)
            c[i].qs[j] = (uint8_t)(next32() & 0xff);
    }
    if (nb > 0) { /* the extremes in the first block: -128 x -128 everywhere */
        memset(a[0].qs, 0x80, 32);
        memset(b[0].qs, 0x80, 32);
        memset(c[0].qs, 0x00, 16); /* nibbles 0: value -8 */
    }
}

/* TD_CPU_CAPABILITY lowers the automatic choice (ctest runs this test with it set too). */
static void test_capability_env(void **state)
{
    (void)state;
    const char *cap = getenv("TD_CPU_CAPABILITY");
    const int p = td_quant_path();
    printf("automatic path: %s (TD_CPU_CAPABILITY %s)\n", td_quant_path_name(p), cap != NULL ? cap : "unset");
    if (cap != NULL && strcmp(cap, "default") == 0)
        assert_int_equal(p, TD_QUANT_PORTABLE);
    else if (cap != NULL && strcmp(cap, "avx2") == 0)
        assert_true(p <= TD_QUANT_AVX2);
    assert_true(td_quant_path_available(p));
}

static void test_dots_every_path(void **state)
{
    (void)state;
    const int sizes[] = { 1, 2, 3, 7, 33, 128 };
    int ran = 0;
    for (int p = 0; p < TD_QUANT_PATHS; p++) {
        if (!td_quant_force(p)) {
            printf("path %s: not on this machine\n", td_quant_path_name(p));
            continue;
        }
        printf("path %s: checking\n", td_quant_path_name(p));
        ran++;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const int nb = sizes[si];
            td_block_q8_0 *a = malloc((size_t)nb * sizeof *a), *b = malloc((size_t)nb * sizeof *b);
            td_block_q4_0 *c = malloc((size_t)nb * sizeof *c);
            assert_true(a && b && c);
            for (int unit = 0; unit < 2; unit++) {
                fill_random(a, b, c, nb, unit == 1);
                float r8, r4;
                double m8, m4;
                assert_int_equal(td_vec_dot_q8_0_q8_0(nb * 32, a, b, &r8), TD_OK);
                assert_int_equal(td_vec_dot_q4_0_q8_0(nb * 32, c, b, &r4), TD_OK);
                const double w8 = ref_dot_q8(a, b, nb, &m8), w4 = ref_dot_q4(c, b, nb, &m4);
                if (unit) { /* integer sums below 2^24: exact on every path */
                    if ((double)r8 != w8 || (double)r4 != w4)
                        fail_msg("path %s, %d blocks, unit scales: q8 %.1f want %.1f, q4 %.1f want %.1f",
                                 td_quant_path_name(p), nb, (double)r8, w8, (double)r4, w4);
                } else {
                    /* float sums of nb terms: a few ulps of the magnitude per block */
                    const double tol8 = 4e-7 * (nb + 2) * m8, tol4 = 4e-7 * (nb + 2) * m4;
                    if (!(fabs(r8 - w8) <= tol8) || !(fabs(r4 - w4) <= tol4))
                        fail_msg("path %s, %d blocks: q8 %.9g want %.9g (tol %g), q4 %.9g want %.9g (tol %g)",
                                 td_quant_path_name(p), nb, (double)r8, w8, tol8, (double)r4, w4, tol4);
                }
            }
            free(a);
            free(b);
            free(c);
        }
    }
    assert_true(ran >= 1);
    assert_true(td_quant_force(-1));
    assert_false(td_quant_force(TD_QUANT_PATHS));
}

static void test_bad_arguments(void **state)
{
    (void)state;
    float x[64] = { 0 }, out = 42.0f;
    _Alignas(2) unsigned char q[4 * 34 + 2];
    const int64_t bad[] = { 1, 31, 33, 63, -32 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(td_quantize_row_q8_0(x, q, bad[i]), TD_E_INVALID);
        assert_non_null(strstr(td_last_error(), "multiple of the block size 32"));
        assert_int_equal(td_quantize_row_q4_0(x, q, bad[i]), TD_E_INVALID);
        assert_int_equal(td_dequantize_row_q8_0(q, x, bad[i]), TD_E_INVALID);
        assert_int_equal(td_dequantize_row_q4_0(q, x, bad[i]), TD_E_INVALID);
        assert_int_equal(td_vec_dot_q8_0_q8_0(bad[i], q, q, &out), TD_E_INVALID);
        assert_int_equal(td_vec_dot_q4_0_q8_0(bad[i], q, q, &out), TD_E_INVALID);
        assert_true(out == 42.0f);
    }
    assert_int_equal(td_quantize_row_q8_0(NULL, q, 32), TD_E_NULL);
    assert_int_equal(td_vec_dot_q8_0_q8_0(32, q, q, NULL), TD_E_NULL);
    assert_int_equal(td_quantize_row_q8_0(x, q + 1, 32), TD_E_INVALID); /* odd address */
    assert_non_null(strstr(td_last_error(), "odd address"));
    assert_int_equal(td_quantize_row_q8_0(NULL, NULL, 0), TD_OK);
    x[5] = INFINITY;
    assert_int_equal(td_quantize_row_q8_0(x, q, 64), TD_E_INVALID);
    assert_non_null(strstr(td_last_error(), "infinite"));
    x[5] = NAN;
    assert_int_equal(td_quantize_row_q4_0(x, q, 64), TD_E_INVALID);
    assert_non_null(strstr(td_last_error(), "NaN"));
    /* the unchecked kernels define what non-finite products give (no undefined casts): a
     * tiny amax makes d = 1e-38 / 127 subnormal and id = 1 / d infinite; x * id is then
     * +-inf (and 0 * inf NaN), which gives 0, the byte ggml's reference writes on x86 (its
     * float-to-int conversion yields 0x80000000); d itself rounds to the f16 zero. q4_0
     * likewise: its nibbles are 0. */
    float tiny[32] = { 1e-38f, 0.0f, -1e-38f, 5e-39f };
    td_block_q8_0 b8;
    td_block_q4_0 b4;
    td_quantize_q8_0_unchecked(tiny, &b8, 1);
    td_quantize_q4_0_unchecked(tiny, &b4, 1);
    assert_int_equal(b8.d, 0);
    assert_int_equal(b4.d, 0x8000); /* d = m / -8 = -1.25e-39: the f16 -0 */
    for (int j = 0; j < 32; j++)
        assert_int_equal(b8.qs[j], 0);
    for (int j = 0; j < 16; j++) /* m = 1e-38, d = m / -8 subnormal, id = -inf */
        assert_int_equal(b4.qs[j], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability_env),   cmocka_unit_test(test_q8_0_by_hand),
        cmocka_unit_test(test_q4_0_by_hand),
        cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_dots_every_path),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
