/* The row conversions f16 / bf16 <-> f32 and the 16-bit add rows (runtime/core/td_convert.c) on every path this
 * machine has, each forced in turn: bit for bit equal to td_half.h's scalar functions (which
 * tests/runtime/test_half.c checks against the IEEE formats) over all 65,536 16-bit patterns
 * and over f32 samples holding every rounding edge (each 16-bit top half with low halves at
 * and around the f16 and bf16 ties, subnormals, overflow, NaNs with payloads, signalling
 * NaNs) plus pseudo-random patterns; at odd lengths and at unaligned addresses. */
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

/* low halves that sit on and around both rounding points (f16 drops 13 bits, bf16 16) */
static const uint32_t lows[] = { 0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x3000,
                                 0x7fff, 0x8000, 0x8001, 0x9000, 0xefff, 0xf000, 0xffff };
#define NLOWS (sizeof lows / sizeof lows[0])
#define NRAND 200000u

static uint32_t *f32_sample(size_t *n)
{
    const size_t cap = 65536 * NLOWS + NRAND;
    uint32_t *u = malloc(cap * sizeof *u);
    assert_non_null(u);
    size_t k = 0;
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (size_t l = 0; l < NLOWS; l++)
            u[k++] = hi << 16 | lows[l];
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (uint32_t i = 0; i < NRAND; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        u[k++] = (uint32_t)(s >> 32);
    }
    *n = k;
    return u;
}

/* Converts n items with fn from src (copied to an address off by `off` bytes) and compares
 * with the scalar results; out_size is 2 or 4. */
static void check_run(void (*fn)(const void *, void *, size_t), const void *src, size_t in_size, const void *want,
                      size_t out_size, size_t n, size_t off, const char *what, int path)
{
    unsigned char *ib = malloc(n * in_size + 8), *ob = malloc(n * out_size + 8 + 4);
    assert_non_null(ib);
    assert_non_null(ob);
    memcpy(ib + off, src, n * in_size);
    memset(ob, 0xa5, n * out_size + 8 + 4);
    fn(ib + off, ob + off, n);
    if (memcmp(ob + off, want, n * out_size) != 0) {
        for (size_t i = 0; i < n; i++)
            if (memcmp(ob + off + i * out_size, (const unsigned char *)want + i * out_size, out_size) != 0) {
                uint32_t in = 0, got = 0, exp = 0;
                memcpy(&in, ib + off + i * in_size, in_size);
                memcpy(&got, ob + off + i * out_size, out_size);
                memcpy(&exp, (const unsigned char *)want + i * out_size, out_size);
                fail_msg("%s on path %s: item %zu of %zu (offset %zu): input 0x%08x gives 0x%08x, want 0x%08x", what,
                         td_convert_path_name(path), i, n, off, in, got, exp);
            }
    }
    /* nothing written past the end */
    for (size_t i = n * out_size + off; i < n * out_size + 8 + 4; i++)
        assert_int_equal(ob[i], 0xa5);
    free(ib);
    free(ob);
}

/* The whole array, then every length 0..70 at offsets 0..3 from a few starting points. */
static void check_all(void (*fn)(const void *, void *, size_t), const void *src, size_t in_size, const void *want,
                      size_t out_size, size_t n, const char *what, int path)
{
    check_run(fn, src, in_size, want, out_size, n, 0, what, path);
    check_run(fn, src, in_size, want, out_size, n, 3, what, path);
    const size_t starts[] = { 0, 0x7bf0, 0x7c00 - 3, 0xfc00 - 5, n > 100 ? n - 80 : 0 };
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
        for (size_t len = 0; len <= 70 && starts[s] + len <= n; len++)
            for (size_t off = 0; off < 4; off++)
                check_run(fn, (const unsigned char *)src + starts[s] * in_size, in_size,
                          (const unsigned char *)want + starts[s] * out_size, out_size, len, off, what, path);
}

static int paths_run;

/* TD_CPU_CAPABILITY lowers the automatic choice (ctest runs this test with it set too). */
static void test_capability_env(void **state)
{
    (void)state;
    const char *cap = getenv("TD_CPU_CAPABILITY");
    const int p = td_convert_path();
    printf("automatic path: %s (TD_CPU_CAPABILITY %s)\n", td_convert_path_name(p), cap != NULL ? cap : "unset");
    if (cap != NULL && strcmp(cap, "default") == 0)
        assert_int_equal(p, TD_CONVERT_PORTABLE);
    else if (cap != NULL && strcmp(cap, "avx2") == 0)
        assert_true(p <= TD_CONVERT_AVX2);
    assert_true(td_convert_path_available(p));
}

static void test_every_path(void **state)
{
    (void)state;
    uint16_t *h = malloc(65536 * sizeof *h);
    uint32_t *f16w = malloc(65536 * sizeof *f16w), *bf16w = malloc(65536 * sizeof *bf16w);
    assert_non_null(h);
    assert_non_null(f16w);
    assert_non_null(bf16w);
    for (uint32_t i = 0; i < 65536; i++) {
        h[i] = (uint16_t)i;
        f16w[i] = td_f32_bits(td_f16_to_f32((uint16_t)i));
        bf16w[i] = td_f32_bits(td_bf16_to_f32((uint16_t)i));
    }
    size_t n;
    uint32_t *f = f32_sample(&n);
    uint16_t *to16 = malloc(n * sizeof *to16), *tobf = malloc(n * sizeof *tobf);
    assert_non_null(to16);
    assert_non_null(tobf);
    for (size_t i = 0; i < n; i++) {
        to16[i] = td_f32_to_f16(td_f32_from_bits(f[i]));
        tobf[i] = td_f32_to_bf16(td_f32_from_bits(f[i]));
    }
    for (int p = 0; p < TD_CONVERT_PATHS; p++) {
        if (!td_convert_force(p)) {
            printf("path %s: not on this machine\n", td_convert_path_name(p));
            continue;
        }
        assert_int_equal(td_convert_path(), p);
        printf("path %s: checking\n", td_convert_path_name(p));
        check_all(td_f16_to_f32_row, h, 2, f16w, 4, 65536, "f16 -> f32", p);
        check_all(td_bf16_to_f32_row, h, 2, bf16w, 4, 65536, "bf16 -> f32", p);
        check_all(td_f32_to_f16_row, f, 4, to16, 2, n, "f32 -> f16", p);
        check_all(td_f32_to_bf16_row, f, 4, tobf, 2, n, "f32 -> bf16", p);
        paths_run++;
    }
    assert_true(td_convert_force(-1));
    assert_false(td_convert_force(TD_CONVERT_PATHS));
    assert_true(td_convert_path_available(TD_CONVERT_PORTABLE));
    assert_true(paths_run >= 1);
    free(h);
    free(f16w);
    free(bf16w);
    free(f);
    free(to16);
    free(tobf);
}

/* A few results worked out by hand from the formats, through the automatic path, so the
 * row functions are tied to the IEEE values and not only to td_half.h. */
static void test_hand_values(void **state)
{
    (void)state;
    const uint32_t in[] = {
        0x3f800000u, /* 1.0: f16 0x3c00, bf16 0x3f80 */
        0x3f808000u, /* 1 + 2^-8: bf16 tie between 0x3f80 and 0x3f81, even -> 0x3f80; f16 exact 0x3c04 */
        0x3f818000u, /* 1 + 3*2^-8: bf16 tie, even -> 0x3f82; f16 exact 0x3c0c */
        0x477ff000u, /* 65520: f16 overflows to inf 0x7c00; bf16 0x4780 (rounds up to 65536) */
        0x33800000u, /* 2^-24: f16 smallest subnormal 0x0001; bf16 0x3380 */
        0x00400000u, /* f32 subnormal 2^-127: f16 0x0000; bf16 exact 0x0040 (vcvtneps2bf16 gives 0) */
        0x007fffffu, /* largest f32 subnormal: bf16 rounds up to 0x0080 (smallest normal) */
        0x7f800001u, /* signalling NaN, payload 1: f16 0x7e00; bf16 0x7fc0 */
        0xffa12345u, /* negative signalling NaN: f16 0x8000 | 0x7e00 | (0x7fa12345 >> 13 & 0x3ff = 0x109) = 0xff09; bf16 0xffa1 | 0x40 = 0xffe1 */
    };
    const uint16_t w16[] = { 0x3c00, 0x3c04, 0x3c0c, 0x7c00, 0x0001, 0x0000, 0x0000, 0x7e00, 0xff09 };
    const uint16_t wbf[] = { 0x3f80, 0x3f80, 0x3f82, 0x4780, 0x3380, 0x0040, 0x0080, 0x7fc0, 0xffe1 };
    enum { N = sizeof in / sizeof in[0] };
    for (int p = 0; p < TD_CONVERT_PATHS; p++) {
        if (!td_convert_force(p))
            continue;
        /* 3 copies, so the vector bodies and the tails both see them */
        uint32_t src[3 * N];
        uint16_t got16[3 * N], gotbf[3 * N];
        for (int r = 0; r < 3; r++)
            memcpy(src + r * N, in, sizeof in);
        td_f32_to_f16_row(src, got16, 3 * N);
        td_f32_to_bf16_row(src, gotbf, 3 * N);
        for (int i = 0; i < 3 * N; i++) {
            if (got16[i] != w16[i % N])
                fail_msg("path %s: f16 of 0x%08x is 0x%04x, want 0x%04x", td_convert_path_name(p), in[i % N],
                         got16[i], w16[i % N]);
            if (gotbf[i] != wbf[i % N])
                fail_msg("path %s: bf16 of 0x%08x is 0x%04x, want 0x%04x", td_convert_path_name(p), in[i % N],
                         gotbf[i], wbf[i % N]);
        }
        /* f16 signalling NaN 0x7d01 widens keeping its payload: 0x7f800000 | 0x101 << 13 */
        uint16_t hs[17];
        uint32_t wide[17];
        for (int i = 0; i < 17; i++)
            hs[i] = 0x7d01;
        td_f16_to_f32_row(hs, wide, 17);
        for (int i = 0; i < 17; i++)
            assert_int_equal(wide[i], 0x7fa02000u);
    }
    td_convert_force(-1);
}

/* c = a + b for 16-bit rows against the scalar functions around an f32 add, done here: every
 * f16 / bf16 pattern as a against three pairings of b (a permutation of all patterns, b = a,
 * and a fixed set of edges: zeros, smallest subnormals, largest finite, inf, NaNs), bit for
 * bit except where both are NaN (which NaN an add returns then is the compiler's operand
 * order: only NaN-ness is checked); odd lengths at unaligned addresses, and in place. */
static bool is_nan16(bool bf, uint16_t h)
{
    return bf ? (h & 0x7fffu) > 0x7f80u : (h & 0x7fffu) > 0x7c00u;
}

static uint16_t ref_add(bool bf, uint16_t a, uint16_t b)
{
    return bf ? td_f32_to_bf16(td_bf16_to_f32(a) + td_bf16_to_f32(b))
              : td_f32_to_f16(td_f16_to_f32(a) + td_f16_to_f32(b));
}

static void check_add(bool bf, const uint16_t *a, const uint16_t *b, size_t n, size_t off, int path)
{
    unsigned char *ba = malloc(2 * n + 8), *bb = malloc(2 * n + 8), *bc = malloc(2 * n + 12);
    assert_true(ba && bb && bc);
    memcpy(ba + off, a, 2 * n);
    memcpy(bb + off, b, 2 * n);
    memset(bc, 0xa5, 2 * n + 12);
    (bf ? td_bf16_add_row : td_f16_add_row)(ba + off, bb + off, bc + off, n);
    for (size_t i = 0; i < n; i++) {
        uint16_t got;
        memcpy(&got, bc + off + 2 * i, 2);
        const uint16_t want = ref_add(bf, a[i], b[i]);
        const bool ok = is_nan16(bf, a[i]) && is_nan16(bf, b[i]) ? is_nan16(bf, got) : got == want;
        if (!ok)
            fail_msg("%s add on path %s: item %zu of %zu (offset %zu): 0x%04x + 0x%04x gives 0x%04x, want 0x%04x",
                     bf ? "bf16" : "f16", td_convert_path_name(path), i, n, off, a[i], b[i], got, want);
    }
    for (size_t i = 2 * n + off; i < 2 * n + 12; i++)
        assert_int_equal(bc[i], 0xa5);
    /* in place: c is a */
    (bf ? td_bf16_add_row : td_f16_add_row)(ba + off, bb + off, ba + off, n);
    assert_memory_equal(ba + off, bc + off, 2 * n);
    free(ba);
    free(bb);
    free(bc);
}

static void test_add_rows(void **state)
{
    (void)state;
    uint16_t *a = malloc(65536 * 2), *b = malloc(65536 * 2), *e = malloc(65536 * 2);
    assert_true(a && b && e);
    const uint16_t edges_f16[] = { 0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff,
                                   0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe55, 0x3c00, 0xbc00, 0x3c01 };
    const uint16_t edges_bf16[] = { 0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x7f7f, 0xff7f,
                                    0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffd5, 0x3f80, 0xbf80, 0x3f81 };
    for (uint32_t i = 0; i < 65536; i++)
        a[i] = (uint16_t)i;
    for (int bfi = 0; bfi < 2; bfi++) {
        const bool bf = bfi == 1;
        for (uint32_t i = 0; i < 65536; i++) {
            b[i] = (uint16_t)(i * 40503u + 12345u); /* odd multiplier: a permutation */
            e[i] = (bf ? edges_bf16 : edges_f16)[i % 16];
        }
        for (int p = 0; p < TD_CONVERT_PATHS; p++) {
            if (!td_convert_force(p))
                continue;
            check_add(bf, a, b, 65536, 0, p);
            check_add(bf, a, a, 65536, 1, p);
            check_add(bf, a, e, 65536, 2, p);
            for (size_t len = 0; len <= 40; len++)
                for (size_t off = 0; off < 4; off++)
                    check_add(bf, a + 0x7bf0, e + 3, len, off, p);
        }
    }
    td_convert_force(-1);
    free(a);
    free(b);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability_env),
        cmocka_unit_test(test_every_path),
        cmocka_unit_test(test_hand_values),
        cmocka_unit_test(test_add_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
