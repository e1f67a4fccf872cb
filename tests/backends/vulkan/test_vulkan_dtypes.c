/* Vulkan storage of the other dtypes (docs/dtypes.md step 7): f16 / bf16 / f64 / i64 / i8 / u8
 * written, read back, filled and moved between the CPU and the device byte for byte; the device
 * conversions of cvt.comp (td_float_cast between f32, f16 and bf16) bit for bit against the
 * CPU's (td_half.h) over all 65536 f16 and bf16 patterns and over about a million f32 patterns
 * (every exponent with the mantissas around both rounding points, ties, subnormals, overflow,
 * NaN payloads, plus a stride through all 2^32), on both storage paths (16-bit storage and
 * packed words, td_vulkan_set_half_storage); hand-computed values for the rounding edges;
 * the native f16 / bf16 kernels (ewv.comp, unary.comp built with -DTD_HALF) and the "via f32"
 * arms (the f32 kernel on copies converted on the device; for cat and stack, each item of the
 * list) against the CPU's, and f64 refused by
 * ops with TD_E_UNSUPPORTED; native f16 / bf16 / f64 float_matmul against exact products and
 * the CPU's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "td_vulkan.h"
#include "tdt.h"

static td_device *vk, *cpu;

static int setup(void **state)
{
    (void)state;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK)
        return -1;
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    td_device_release(cpu);
    return 0;
}

static td_dtype dtype_of(const td_tensor *t)
{
    td_dtype d = TD_F32;
    tdt_check(td_tensor_dtype(t, &d), "tensor_dtype");
    return d;
}

/* Converts n values of `from` (raw host data) to `to` with td_float_cast on device d; returns the
 * raw result (malloc'd; free it). */
static void *cast_on(td_device *d, td_dtype from, const void *src, int64_t n, td_dtype to)
{
    td_tensor *a = NULL, *b = NULL;
    tdt_check(td_float_from_data_dtype(d, from, src, &n, 1, &a), "from_data_dtype");
    tdt_check(td_float_cast(a, to, &b), "float_cast");
    assert_int_equal(dtype_of(b), to);
    void *out = malloc((size_t)n * td_dtype_size(to));
    assert_non_null(out);
    tdt_check(td_float_into_data_dtype(b, to, out, n), "into_data_dtype");
    td_tensor_release(a);
    td_tensor_release(b);
    return out;
}

/* The device's conversion equals the CPU's bit for bit; says where it does not. */
static void same_as_cpu(td_dtype from, const void *src, int64_t n, td_dtype to)
{
    unsigned char *g = cast_on(vk, from, src, n, to);
    unsigned char *w = cast_on(cpu, from, src, n, to);
    const size_t es = td_dtype_size(to), fs = td_dtype_size(from);
    for (int64_t i = 0; i < n; i++) {
        if (memcmp(g + (size_t)i * es, w + (size_t)i * es, es) != 0) {
            uint32_t in = 0, gv = 0, wv = 0;
            memcpy(&in, (const unsigned char *)src + (size_t)i * fs, fs);
            memcpy(&gv, g + (size_t)i * es, es);
            memcpy(&wv, w + (size_t)i * es, es);
            fail_msg("%s -> %s, element %lld (input 0x%08x): vulkan 0x%08x, cpu 0x%08x", td_dtype_name(from),
                     td_dtype_name(to), (long long)i, in, gv, wv);
        }
    }
    free(g);
    free(w);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* f32 patterns: for each sign and exponent, mantissas at and around the f16 and bf16 rounding
 * points (ties, one below, one above, odd and even kept bits), then random mantissas, then a
 * stride through every 32-bit pattern. An odd count, so the last packed word is half used. */
static uint32_t *f32_patterns(int64_t *n)
{
    static const uint32_t mant[] = { 0x000000u, 0x000001u, 0x000fffu, 0x001000u, 0x001001u, 0x002000u, 0x003000u,
                                     0x002fffu, 0x003001u, 0x007fffu, 0x008000u, 0x008001u, 0x018000u, 0x017fffu,
                                     0x400000u, 0x7fffffu, 0x7ff000u, 0x7fefffu, 0x7fe000u, 0x7f8000u, 0x7f7fffu,
                                     0x200000u, 0x000800u, 0x1ff000u };
    const int64_t nm = (int64_t)(sizeof mant / sizeof mant[0]);
    const int64_t cap = 2 * 256 * (nm + 64) + (1 << 20) + 1;
    uint32_t *p = malloc((size_t)cap * sizeof *p);
    assert_non_null(p);
    int64_t k = 0;
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t e = 0; e < 256; e++) {
            for (int64_t m = 0; m < nm; m++)
                p[k++] = (s << 31) | (e << 23) | mant[m];
            for (int r = 0; r < 64; r++)
                p[k++] = (s << 31) | (e << 23) | (next32() & 0x7fffffu);
        }
    for (uint32_t i = 0; i < (1u << 20); i++)
        p[k++] = i * 4099u + 17u;
    p[k++] = 0x477ff000u; /* 65520: the first value that overflows f16 */
    assert_true(k <= cap);
    *n = k;
    return p;
}

static void conversions(void)
{
    uint16_t *h = malloc(65536 * sizeof *h);
    assert_non_null(h);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    /* every f16 and bf16 pattern widened, and into the other 16-bit dtype */
    same_as_cpu(TD_F16, h, 65536, TD_F32);
    same_as_cpu(TD_BF16, h, 65536, TD_F32);
    same_as_cpu(TD_F16, h, 65536, TD_BF16);
    same_as_cpu(TD_BF16, h, 65536, TD_F16);
    same_as_cpu(TD_F16, h, 65535, TD_F32); /* odd counts: a half-used last word */
    same_as_cpu(TD_BF16, h + 1, 3, TD_F16);
    free(h);
    int64_t n = 0;
    uint32_t *f = f32_patterns(&n);
    same_as_cpu(TD_F32, f, n, TD_F16);
    same_as_cpu(TD_F32, f, n, TD_BF16);
    same_as_cpu(TD_F32, f, 1, TD_F16);
    same_as_cpu(TD_F32, f + 5, 3, TD_BF16);
    free(f);
}

/* Hand-computed results at the rounding edges (IEEE 754 binary16 / bfloat16). */
static void hand_values(void)
{
    static const uint32_t in[] = {
        0x3f800000u, /* 1.0 -> f16 0x3c00, bf16 0x3f80 */
        0x3f801000u, /* 1 + 2^-11: a tie, even 0x3c00; bf16 exact below its tie: 0x3f80 */
        0x3f803000u, /* 1 + 3 * 2^-11: tie, rounds up to even 0x3c02; bf16 0x3f80 */
        0x3f808000u, /* 1 + 2^-8: bf16 tie, even 0x3f80; f16 exact 0x3c04 */
        0x3f818000u, /* 1 + 3 * 2^-8: bf16 tie up to 0x3f82; f16 exact 0x3c0c */
        0x477fe000u, /* 65504, the largest f16 */
        0x477ff000u, /* 65520: half an ulp past it, a tie to odd 0x7bff, rounds to inf */
        0x477fefffu, /* just below 65520: 0x7bff */
        0x33000000u, /* 2^-25: tie between 0 and the smallest subnormal: 0 */
        0x33400000u, /* 1.5 * 2^-25: the smallest subnormal 0x0001 */
        0x387fc000u, /* 2^-14 - 2^-24: subnormal 0x03ff */
        0x387fe000u, /* 2^-14 - 2^-25: tie, rounds up into the smallest normal 0x0400 */
        0x80000000u, /* -0 */
        0x7f800000u, /* inf */
        0xff800001u, /* -sNaN payload 1: quiet, sign kept: f16 0xfe00, bf16 0xffc0 */
        0x7fa02000u, /* NaN with payload bits: f16 0x7f01, bf16 0x7fe0 */
        0x7f7fffffu, /* FLT_MAX: f16 inf, bf16 rounds up to inf 0x7f80 */
        0x00000001u, /* smallest f32 subnormal: f16 0, bf16 0 (a tie? no: below half, 0) */
        0x00008000u, /* f32 subnormal at the bf16 tie: even 0x0000 */
        0x00018000u, /* bf16 tie up to 0x0002 */
    };
    static const uint16_t want16[] = { 0x3c00, 0x3c00, 0x3c02, 0x3c04, 0x3c0c, 0x7bff, 0x7c00, 0x7bff, 0x0000, 0x0001,
                                       0x03ff, 0x0400, 0x8000, 0x7c00, 0xfe00, 0x7f01, 0x7c00, 0x0000, 0x0000, 0x0000 };
    static const uint16_t wantb[] = { 0x3f80, 0x3f80, 0x3f80, 0x3f80, 0x3f82, 0x4780, 0x4780, 0x4780, 0x3300, 0x3340,
                                      0x3880, 0x3880, 0x8000, 0x7f80, 0xffc0, 0x7fe0, 0x7f80, 0x0000, 0x0000, 0x0002 };
    const int64_t n = (int64_t)(sizeof in / sizeof in[0]);
    uint16_t *g = cast_on(vk, TD_F32, in, n, TD_F16);
    for (int64_t i = 0; i < n; i++)
        if (g[i] != want16[i])
            fail_msg("f32 0x%08x -> f16: got 0x%04x, want 0x%04x", in[i], g[i], want16[i]);
    free(g);
    g = cast_on(vk, TD_F32, in, n, TD_BF16);
    for (int64_t i = 0; i < n; i++)
        if (g[i] != wantb[i])
            fail_msg("f32 0x%08x -> bf16: got 0x%04x, want 0x%04x", in[i], g[i], wantb[i]);
    free(g);
    /* widening: f16 0x0001 is 2^-24 = f32 0x33800000; 0x03ff is 0x387fc000; sNaN 0x7c01 keeps its payload */
    static const uint16_t hs[] = { 0x0001, 0x03ff, 0x7c01, 0xfc00, 0x8000, 0x3555 };
    static const uint32_t hw[] = { 0x33800000u, 0x387fc000u, 0x7f802000u, 0xff800000u, 0x80000000u, 0x3eaaa000u };
    uint32_t *w = cast_on(vk, TD_F16, hs, 6, TD_F32);
    for (int i = 0; i < 6; i++)
        if (w[i] != hw[i])
            fail_msg("f16 0x%04x -> f32: got 0x%08x, want 0x%08x", hs[i], w[i], hw[i]);
    free(w);
}

static void test_conversions_16bit_storage(void **state)
{
    (void)state;
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "set_half_storage");
    bool s16 = false;
    tdt_check(td_vulkan_half_storage_in_use(vk, &s16), "half_storage_in_use");
    if (!s16)
        print_message("this device has no 16-bit storage buffers: AUTO runs the packed-word path\n");
    conversions();
    hand_values();
}

static void test_conversions_packed_words(void **state)
{
    (void)state;
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_PACKED), "set_half_storage");
    bool s16 = true;
    tdt_check(td_vulkan_half_storage_in_use(vk, &s16), "half_storage_in_use");
    assert_false(s16);
    conversions();
    hand_values();
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "set_half_storage");
}

/* Every stored dtype: written and read back, moved to and from the CPU and within the device,
 * filled; byte for byte against what was written or a hand-made fill. */
static void test_storage_round_trip(void **state)
{
    (void)state;
    static const td_dtype dts[] = { TD_F16, TD_BF16, TD_F64, TD_I64, TD_I8, TD_U8 };
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        const td_dtype dt = dts[k];
        const size_t es = td_dtype_size(dt);
        const int64_t shape[2] = { 3, 7 }; /* 21 elements: odd, a partial last word */
        unsigned char src[21 * 8];
        for (size_t i = 0; i < sizeof src; i++)
            src[i] = (unsigned char)(next32() & 0x7fu); /* no NaN patterns that a move could not keep */
        const bool fl = td_dtype_class(dt) == TD_CLASS_FLOAT;
        td_tensor *a = NULL, *c = NULL, *back = NULL, *same = NULL;
        tdt_check(fl ? td_float_from_data_dtype(vk, dt, src, shape, 2, &a)
                     : td_int_from_data_dtype(vk, dt, src, shape, 2, &a),
                  "from_data_dtype");
        assert_int_equal(dtype_of(a), dt);
        tdt_check(fl ? td_float_to_device(a, cpu, &c) : td_int_to_device(a, cpu, &c), "to cpu");
        tdt_check(fl ? td_float_to_device(c, vk, &back) : td_int_to_device(c, vk, &back), "to vulkan");
        tdt_check(fl ? td_float_reshape(back, (const int64_t[]){ 21 }, 1, &same)
                     : td_int_reshape(back, (const int64_t[]){ 21 }, 1, &same),
                  "reshape");
        unsigned char got[21 * 8];
        tdt_check(fl ? td_float_into_data_dtype(same, dt, got, 21) : td_int_into_data_dtype(same, dt, got, 21),
                  "into_data_dtype");
        assert_memory_equal(got, src, 21 * es);
        td_tensor_release(a);
        td_tensor_release(c);
        td_tensor_release(back);
        td_tensor_release(same);
        /* ones: f16 1.0 is 0x3c00, bf16 0x3f80, f64 0x3ff0000000000000, ints 1 */
        td_tensor *o = NULL;
        tdt_check(fl ? td_float_ones_dtype(vk, dt, shape, 2, &o) : td_int_ones_dtype(vk, dt, shape, 2, &o), "ones");
        tdt_check(fl ? td_float_into_data_dtype(o, dt, got, 21) : td_int_into_data_dtype(o, dt, got, 21), "read");
        const uint64_t one = dt == TD_F16 ? 0x3c00u : dt == TD_BF16 ? 0x3f80u : dt == TD_F64 ? 0x3ff0000000000000ull : 1u;
        for (int i = 0; i < 21; i++)
            assert_memory_equal(got + (size_t)i * es, &one, es); /* little-endian */
        td_tensor_release(o);
    }
}

/* float_into_int of f16 / bf16 runs natively on the device (unary.comp's TD_HALF form: one
 * dispatch, no f32 copy; it ran via f32, two dispatches, before): the values widened exactly, so
 * the result equals the CPU's (which runs it via f32). f64 has no via: f64 activations by q8_0
 * weights (qmv.comp reads f32, f16 and bf16) are refused, naming the cast. */
static void test_via_f32_and_f64(void **state)
{
    (void)state;
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    const int64_t shape[1] = { 1001 };
    float *x = tdt_host_randoms(1001, &(unsigned){ 7 });
    float *y = tdt_host_randoms(1001, &(unsigned){ 8 });
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int k = 0; k < 2; k++) {
            td_tensor *r[2] = { NULL, NULL };
            td_device *ds[2] = { vk, cpu };
            for (int j = 0; j < 2; j++) {
                td_tensor *a = NULL, *b = NULL, *a16 = NULL, *b16 = NULL, *s = NULL, *s2 = NULL;
                tdt_check(td_float_from_data(ds[j], x, shape, 1, &a), "from_data");
                tdt_check(td_float_from_data(ds[j], y, shape, 1, &b), "from_data");
                tdt_check(td_float_cast(a, dts[k], &a16), "cast");
                tdt_check(td_float_cast(b, dts[k], &b16), "cast");
                tdt_check(td_float_mul(a16, b16, &s), "mul");
                tdt_check(td_float_mul_scalar(s, 1000.0f, &s2), "mul_scalar");
                long d0 = 0, d1 = 0;
                if (j == 0)
                    tdt_check(td_vulkan_stats(vk, NULL, &d0), "stats");
                tdt_check(td_float_into_int(s2, &r[j]), "into_int");
                if (j == 0) {
                    tdt_check(td_vulkan_stats(vk, NULL, &d1), "stats");
                    assert_int_equal(d1 - d0, 1); /* the cast to int of the 16-bit values itself */
                }
                assert_int_equal(dtype_of(r[j]), TD_I32);
                td_tensor_release(a);
                td_tensor_release(b);
                td_tensor_release(a16);
                td_tensor_release(b16);
                td_tensor_release(s);
                td_tensor_release(s2);
            }
            int32_t g[1001], w[1001];
            tdt_check(td_int_into_data(r[0], g, 1001), "read");
            tdt_check(td_int_into_data(r[1], w, 1001), "read");
            /* mul and mul_scalar round once each on both, the casts are exact: equal values,
             * not all zero */
            int nonzero = 0;
            for (int i = 0; i < 1001; i++) {
                assert_int_equal(g[i], w[i]);
                nonzero += g[i] != 0;
            }
            assert_true(nonzero > 500);
            td_tensor_release(r[0]);
            td_tensor_release(r[1]);
        }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    free(x);
    free(y);
    td_tensor *a = NULL, *d = NULL, *s = NULL, *q = NULL;
    const int64_t xs[2] = { 1, 32 }, ws[2] = { 1, 32 };
    unsigned char blk[34] = { 0x00, 0x3c }; /* one q8_0 block: scale 1.0 (f16), 32 zero quants */
    tdt_check(td_float_ones(vk, xs, 2, &a), "ones");
    tdt_check(td_float_cast(a, TD_F64, &d), "cast to f64");
    tdt_check(td_float_from_data_dtype(vk, TD_Q8_0, blk, ws, 2, &q), "q8_0 weights");
    assert_int_equal(td_float_matmul_nt(d, q, &s), TD_E_DTYPE);
    assert_non_null(strstr(td_last_error(), "f64"));
    assert_non_null(strstr(td_last_error(), "td_float_cast"));
    assert_null(s);
    td_tensor_release(a);
    td_tensor_release(d);
    td_tensor_release(q);
}

/* float_into_int of f16 / bf16 special values, natively in both storage forms (an odd count: the
 * last packed word's upper half is not an element), against values worked out by hand from the
 * bits: NaN 0, +-inf and out-of-range saturated, the rest truncated toward zero. */
static void test_into_int_specials(void **state)
{
    (void)state;
    /* f16: NaN, inf, -inf, -3.75, 2.5, 65504, -0, 1 subnormal, -65504 */
    static const uint16_t h[9] = { 0x7e00, 0x7c00, 0xfc00, 0xc380, 0x4100, 0x7bff, 0x8000, 0x0001, 0xfbff };
    static const int32_t hw[9] = { 0, INT32_MAX, INT32_MIN, -3, 2, 65504, 0, 0, -65504 };
    /* bf16: NaN, inf, -inf, -3.75, 1e10 (0x5015 = 9999220736), -2^31 exactly, 2^31, -0.5, 123 */
    static const uint16_t b[9] = { 0x7fc0, 0x7f80, 0xff80, 0xc070, 0x5015, 0xcf00, 0x4f00, 0xbf00, 0x42f6 };
    static const int32_t bw[9] = { 0, INT32_MAX, INT32_MIN, -3, INT32_MAX, INT32_MIN, INT32_MAX, 0, 123 };
    const int64_t shape[1] = { 9 };
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int k = 0; k < 2; k++) {
            td_tensor *a = NULL, *r = NULL;
            tdt_check(td_float_from_data_dtype(vk, k ? TD_BF16 : TD_F16, k ? b : h, shape, 1, &a), "from_data");
            tdt_check(td_float_into_int(a, &r), "into_int");
            int32_t g[9];
            tdt_check(td_int_into_data(r, g, 9), "read");
            for (int i = 0; i < 9; i++)
                if (g[i] != (k ? bw : hw)[i])
                    fail_msg("%s into_int [%d] (storage pass %d): vulkan %d, want %d", k ? "bf16" : "f16", i, pass,
                             g[i], (k ? bw : hw)[i]);
            td_tensor_release(a);
            td_tensor_release(r);
        }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
}

/* The stream of float_random as documented (specs/ops/creation.lua, docs/dtypes.md section 5),
 * written here: h(j) = splitmix64's finalizer of seed ^ finalizer(j); element i takes h(2 i)
 * (and h(2 i + 1) for normal); f64 keeps 53 bits of it where f32 keeps 24. */
static uint64_t fin(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* td_float_random_dtype on the Vulkan device and the CPU: f64 uniform [-2, 3) and normal (mean
 * 0.5, std 2) against the stream computed here (uniform exactly; normal within 4 ULP, libm's
 * log / cos), bit-identical on both devices; each f32 uniform u is the f64 one's truncated to 24
 * bits (the same stream); f16 / bf16 are the f32 values rounded once (the CPU's cast); an
 * invalid range is refused in f64 too. 1001 elements, a few dispatches. */
static void test_random_dtypes(void **state)
{
    (void)state;
    enum { N = 1001 };
    const int64_t shape[2] = { 7, 143 };
    const uint64_t seed = 0x1234abcdull;
    static double g64[2][N];
    static float g32[N], c32[N];
    for (int dist = 0; dist < 2; dist++) {
        const td_distribution di = dist ? TD_NORMAL : TD_UNIFORM;
        const double p0 = dist ? 0.5 : -2.0, p1 = dist ? 2.0 : 3.0;
        for (int dv = 0; dv < 2; dv++) {
            td_tensor *r = NULL;
            tdt_check(td_float_random_dtype(dv ? cpu : vk, TD_F64, shape, 2, di, p0, p1, seed, &r), "random f64");
            assert_int_equal(dtype_of(r), TD_F64);
            tdt_check(td_float_into_data_dtype(r, TD_F64, g64[dv], N), "read");
            td_tensor_release(r);
        }
        assert_memory_equal(g64[0], g64[1], sizeof g64[0]);
        for (int i = 0; i < N; i++) {
            const uint64_t h0 = fin(seed ^ fin(2u * (uint64_t)i));
            double want;
            if (dist) {
                const uint64_t h1 = fin(seed ^ fin(2u * (uint64_t)i + 1u));
                const double u1 = ldexp((double)((h0 >> 11) + 1u), -53), u2 = ldexp((double)(h1 >> 11), -53);
                want = p0 + p1 * (sqrt(-2.0 * log(u1)) * cos(6.283185307179586477 * u2));
                if (fabs(g64[0][i] - want) > 4.0 * fabs(nextafter(want, INFINITY) - want) + 1e-300)
                    fail_msg("normal f64 [%d]: vulkan %.17g, want %.17g", i, g64[0][i], want);
            } else {
                want = p0 + (p1 - p0) * ldexp((double)(h0 >> 11), -53);
                if (g64[0][i] != want)
                    fail_msg("uniform f64 [%d]: vulkan %.17g, want %.17g", i, g64[0][i], want);
            }
        }
    }
    /* f32 uniform [0, 1): u = (h >> 40) 2^-24, the f64 u's top 24 bits */
    td_tensor *r = NULL;
    tdt_check(td_float_random_dtype(vk, TD_F64, shape, 2, TD_UNIFORM, 0.0, 1.0, seed, &r), "random f64");
    tdt_check(td_float_into_data_dtype(r, TD_F64, g64[0], N), "read");
    td_tensor_release(r);
    tdt_check(td_float_random_dtype(vk, TD_F32, shape, 2, TD_UNIFORM, 0.0, 1.0, seed, &r), "random f32");
    tdt_check(td_float_into_data(r, g32, N), "read");
    td_tensor_release(r);
    for (int i = 0; i < N; i++)
        if ((double)g32[i] != floor(g64[0][i] * 0x1p24) * 0x1p-24)
            fail_msg("f32 [%d] = %.9g is not the f64 %.17g cut to 24 bits", i, (double)g32[i], g64[0][i]);
    /* f16 / bf16: the f32 stream rounded once */
    td_tensor *c = NULL, *c16 = NULL;
    tdt_check(td_float_random(cpu, shape, 2, TD_NORMAL, 0.5f, 2.0f, seed, &c), "random f32 cpu");
    for (int k = 0; k < 2; k++) {
        const td_dtype dt = k ? TD_BF16 : TD_F16;
        tdt_check(td_float_cast(c, dt, &c16), "cast");
        tdt_check(td_float_into_data(c16, c32, N), "read");
        td_tensor_release(c16);
        tdt_check(td_float_random_dtype(vk, dt, shape, 2, TD_NORMAL, 0.5, 2.0, seed, &r), "random 16-bit");
        assert_int_equal(dtype_of(r), dt);
        tdt_check(td_float_into_data(r, g32, N), "read");
        td_tensor_release(r);
        assert_memory_equal(g32, c32, sizeof g32);
    }
    td_tensor_release(c);
    assert_int_equal(td_float_random_dtype(vk, TD_F64, shape, 2, TD_UNIFORM, 3.0, -2.0, seed, &r), TD_E_INVALID);
    assert_null(r);
    assert_int_equal(td_float_random_dtype(vk, TD_F64, shape, 2, TD_NORMAL, 0.0, INFINITY, seed, &r), TD_E_INVALID);
    assert_null(r);
    assert_int_equal(td_float_random_dtype(vk, TD_Q8_0, shape, 2, TD_NORMAL, 0.0, 1.0, seed, &r), TD_E_UNSUPPORTED);
    assert_null(r);
}

/* Inputs of dtype dt with special values among random ones: NaN, infinities, zeros of both signs,
 * subnormals, the largest finite value, values that overflow when added or multiplied. */
static void half_inputs(td_dtype dt, uint16_t *h, int64_t n, unsigned seed)
{
    static const uint16_t f16s[] = { 0x7e00, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x3c00, 0x5bf0 };
    static const uint16_t bf16s[] = { 0x7fc0, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x3f80, 0x7f00 };
    float *r = tdt_host_randoms(n, &seed);
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(cpu, r, &n, 1, &t), "from_data");
    td_tensor *c = NULL;
    tdt_check(td_float_mul_scalar(t, 8.0f, &c), "scale");
    td_tensor *l = NULL;
    tdt_check(td_float_cast(c, dt, &l), "cast");
    tdt_check(td_float_into_data_dtype(l, dt, h, n), "read");
    for (int64_t i = 0; i < n; i += 3)
        h[i] = (dt == TD_F16 ? f16s : bf16s)[(i / 3 + seed) % 11];
    free(r);
    td_tensor_release(t);
    td_tensor_release(c);
    td_tensor_release(l);
}

typedef td_status (*bin_fn)(const td_tensor *, const td_tensor *, td_tensor **);

/* The native f16 / bf16 ops of ewv.comp against the CPU's (via f32: one rounding of the f32
 * result), on same-shape inputs of sizes around its vectors, one-element inputs and a true
 * broadcast, both storage paths. Every op but powf is exact in f32 on both, so the bits are
 * equal; powf (math.glsl, within 1 ulp of glibc in f32) may differ by 1 ulp of the 16-bit
 * result. A same-shape op is one dispatch (native, no conversions). */
static void test_native_elementwise(void **state)
{
    (void)state;
    static const struct { const char *name; bin_fn fn; bool cmp; } ops[] = {
        { "add", td_float_add, false },        { "sub", td_float_sub, false },
        { "mul", td_float_mul, false },        { "div", td_float_div, false },
        { "powf", td_float_powf, false },      { "maximum", td_float_maximum, false },
        { "minimum", td_float_minimum, false }, { "equal", td_float_equal, true },
        { "greater", td_float_greater, true }, { "greater_equal", td_float_greater_equal, true },
        { "lower", td_float_lower, true },     { "lower_equal", td_float_lower_equal, true },
    };
    static const int64_t shapes[][4] = {
        /* a dims, b dims (ndim 2 each) */
        { 1, 1, 1, 1 }, { 1, 3, 1, 3 }, { 1, 4, 1, 4 }, { 1, 5, 1, 5 }, { 1, 17, 1, 17 }, { 61, 67, 61, 67 },
        { 5, 7, 1, 1 }, { 1, 1, 3, 9 }, { 3, 1, 1, 5 }, { 4, 6, 1, 6 },
    };
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    uint16_t *ha = malloc(61 * 67 * sizeof *ha), *hb = malloc(61 * 67 * sizeof *hb);
    uint16_t *g = malloc(61 * 67 * sizeof *g), *w = malloc(61 * 67 * sizeof *w);
    bool *gb = malloc(61 * 67), *wb = malloc(61 * 67);
    assert_true(ha && hb && g && w && gb && wb);
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (size_t di = 0; di < 2; di++)
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                const td_dtype dt = dts[di];
                const int64_t *sa = shapes[si], *sb = shapes[si] + 2;
                const int64_t na = sa[0] * sa[1], nb = sb[0] * sb[1];
                half_inputs(dt, ha, na, (unsigned)(si * 7 + di));
                half_inputs(dt, hb, nb, (unsigned)(si * 7 + di + 3));
                td_tensor *va = NULL, *vb = NULL, *ca = NULL, *cb = NULL;
                tdt_check(td_float_from_data_dtype(vk, dt, ha, sa, 2, &va), "from_data");
                tdt_check(td_float_from_data_dtype(vk, dt, hb, sb, 2, &vb), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, ha, sa, 2, &ca), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, hb, sb, 2, &cb), "from_data");
                for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
                    td_tensor *rv = NULL, *rc = NULL;
                    long d0 = 0, d1 = 0;
                    tdt_check(td_vulkan_stats(vk, NULL, &d0), "stats");
                    tdt_check(ops[oi].fn(va, vb, &rv), ops[oi].name);
                    tdt_check(td_vulkan_stats(vk, NULL, &d1), "stats");
                    if (na == nb || na == 1 || nb == 1)
                        assert_int_equal(d1 - d0, 1);
                    tdt_check(ops[oi].fn(ca, cb, &rc), ops[oi].name);
                    const int64_t n = (sa[0] > sb[0] ? sa[0] : sb[0]) * (sa[1] > sb[1] ? sa[1] : sb[1]);
                    if (ops[oi].cmp) {
                        tdt_check(td_bool_into_data(rv, gb, n), "read");
                        tdt_check(td_bool_into_data(rc, wb, n), "read");
                        for (int64_t i = 0; i < n; i++)
                            if (gb[i] != wb[i])
                                fail_msg("%s %s [%lld]: vulkan %d, cpu %d", td_dtype_name(dt), ops[oi].name,
                                         (long long)i, gb[i], wb[i]);
                    } else {
                        assert_int_equal(dtype_of(rv), dt);
                        tdt_check(td_float_into_data_dtype(rv, dt, g, n), "read");
                        tdt_check(td_float_into_data_dtype(rc, dt, w, n), "read");
                        const int tol = oi == 4 ? 1 : 0; /* powf */
                        for (int64_t i = 0; i < n; i++) {
                            const int dl = (int)g[i] - (int)w[i];
                            const bool nan_g = (dt == TD_F16 ? (g[i] & 0x7fff) > 0x7c00 : (g[i] & 0x7fff) > 0x7f80);
                            const bool nan_w = (dt == TD_F16 ? (w[i] & 0x7fff) > 0x7c00 : (w[i] & 0x7fff) > 0x7f80);
                            if (nan_g && nan_w && oi == 4)
                                continue; /* powf's NaN: either payload */
                            if (dl < -tol || dl > tol)
                                fail_msg("%s %s [%lld] (pass %d, shape %zu): vulkan 0x%04x, cpu 0x%04x",
                                         td_dtype_name(dt), ops[oi].name, (long long)i, pass, si, g[i], w[i]);
                        }
                    }
                    td_tensor_release(rv);
                    td_tensor_release(rc);
                }
                td_tensor_release(va);
                td_tensor_release(vb);
                td_tensor_release(ca);
                td_tensor_release(cb);
            }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    /* the GENERIC switch takes the f32 copies: the same bits */
    tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_GENERIC), "generic");
    const int64_t s1 = 1001;
    half_inputs(TD_F16, ha, s1, 5);
    half_inputs(TD_F16, hb, s1, 6);
    td_tensor *va = NULL, *vb = NULL, *ca = NULL, *cb = NULL, *rv = NULL, *rc = NULL;
    tdt_check(td_float_from_data_dtype(vk, TD_F16, ha, &s1, 1, &va), "from_data");
    tdt_check(td_float_from_data_dtype(vk, TD_F16, hb, &s1, 1, &vb), "from_data");
    tdt_check(td_float_from_data_dtype(cpu, TD_F16, ha, &s1, 1, &ca), "from_data");
    tdt_check(td_float_from_data_dtype(cpu, TD_F16, hb, &s1, 1, &cb), "from_data");
    tdt_check(td_float_div(va, vb, &rv), "div");
    tdt_check(td_float_div(ca, cb, &rc), "div");
    tdt_check(td_float_into_data_dtype(rv, TD_F16, g, s1), "read");
    tdt_check(td_float_into_data_dtype(rc, TD_F16, w, s1), "read");
    assert_memory_equal(g, w, (size_t)s1 * 2);
    tdt_check(td_vulkan_set_elementwise_kernel(vk, TD_VULKAN_ELEMENTWISE_AUTO), "auto");
    td_tensor *ts[] = { va, vb, ca, cb, rv, rc };
    for (int i = 0; i < 6; i++)
        td_tensor_release(ts[i]);
    free(ha);
    free(hb);
    free(g);
    free(w);
    free(gb);
    free(wb);
}

typedef td_status (*un_fn)(const td_tensor *, td_tensor **);
static td_status powf_3(const td_tensor *a, td_tensor **out) { return td_float_powf_scalar(a, 3.0f, out); }
static td_status clamp_1(const td_tensor *a, td_tensor **out) { return td_float_clamp(a, -1.0f, 0.5f, out); }
static td_status add_01(const td_tensor *a, td_tensor **out) { return td_float_add_scalar(a, 0.1f, out); }
static td_status mul_3(const td_tensor *a, td_tensor **out) { return td_float_mul_scalar(a, 3.0f, out); }

/* unary.comp's native f16 / bf16 ops against the CPU's via f32, both storage paths, odd and
 * even sizes. neg, abs, relu, clamp and the scalar add / mul are exact in f32 on both: equal
 * bits. The others differ in f32 by a few ulp at most (math.glsl within 1-3 ulp of glibc; sqrt,
 * sin, cos the driver's), so the 16-bit results may differ by 1 ulp; sin / cos are compared on
 * |x| < 1000 only (the driver's range reduction, runtime/vulkan/README.md). One dispatch each. */
static void test_native_unary(void **state)
{
    (void)state;
    static const struct { const char *name; un_fn fn; int tol; } ops[] = {
        { "neg", td_float_neg, 0 },         { "abs", td_float_abs, 0 },   { "exp", td_float_exp, 1 },
        { "log", td_float_log, 1 },         { "sqrt", td_float_sqrt, 1 }, { "sin", td_float_sin, 1 },
        { "cos", td_float_cos, 1 },         { "tanh", td_float_tanh, 1 }, { "sigmoid", td_float_sigmoid, 1 },
        { "relu", td_float_relu, 0 },       { "gelu", td_float_gelu, 1 }, { "powf_scalar", powf_3, 1 },
        { "clamp", clamp_1, 0 },            { "add_scalar", add_01, 0 },  { "mul_scalar", mul_3, 0 },
    };
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    static const int64_t sizes[] = { 1, 2, 3, 1001, 4096 };
    uint16_t *h = malloc(4096 * 2), *g = malloc(4096 * 2), *w = malloc(4096 * 2);
    float *x = malloc(4096 * sizeof *x);
    assert_true(h && g && w && x);
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int di = 0; di < 2; di++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                const td_dtype dt = dts[di];
                const int64_t n = sizes[si];
                half_inputs(dt, h, n, (unsigned)(si + 11 * (unsigned)di));
                td_tensor *va = NULL, *ca = NULL, *ca32 = NULL;
                tdt_check(td_float_from_data_dtype(vk, dt, h, &n, 1, &va), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, h, &n, 1, &ca), "from_data");
                tdt_check(td_float_cast(ca, TD_F32, &ca32), "cast");
                tdt_check(td_float_into_data(ca32, x, n), "read");
                for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
                    td_tensor *rv = NULL, *rc = NULL;
                    long d0 = 0, d1 = 0;
                    tdt_check(td_vulkan_stats(vk, NULL, &d0), "stats");
                    tdt_check(ops[oi].fn(va, &rv), ops[oi].name);
                    tdt_check(td_vulkan_stats(vk, NULL, &d1), "stats");
                    assert_int_equal(d1 - d0, 1);
                    assert_int_equal(dtype_of(rv), dt);
                    tdt_check(ops[oi].fn(ca, &rc), ops[oi].name);
                    tdt_check(td_float_into_data_dtype(rv, dt, g, n), "read");
                    tdt_check(td_float_into_data_dtype(rc, dt, w, n), "read");
                    const uint16_t inf = dt == TD_F16 ? 0x7c00 : 0x7f80;
                    for (int64_t i = 0; i < n; i++) {
                        const bool nan_g = (g[i] & 0x7fff) > inf, nan_w = (w[i] & 0x7fff) > inf;
                        if (ops[oi].tol && nan_g && nan_w)
                            continue; /* either NaN payload */
                        if ((oi == 5 || oi == 6) && !(fabsf(x[i]) < 1000.0f))
                            continue;
                        const int dl = (int)g[i] - (int)w[i];
                        if (dl < -ops[oi].tol || dl > ops[oi].tol)
                            fail_msg("%s %s [%lld] (pass %d, x = %g): vulkan 0x%04x, cpu 0x%04x", td_dtype_name(dt),
                                     ops[oi].name, (long long)i, pass, (double)x[i], g[i], w[i]);
                    }
                    td_tensor_release(rv);
                    td_tensor_release(rc);
                }
                td_tensor_release(va);
                td_tensor_release(ca);
                td_tensor_release(ca32);
            }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    free(h);
    free(g);
    free(w);
    free(x);
}

static td_status rem_07(const td_tensor *a, td_tensor **out) { return td_float_remainder_scalar(a, 0.7f, out); }
static td_status atan2_self(const td_tensor *a, td_tensor **out) { return td_float_atan2(a, a, out); }
static td_status rem_self(const td_tensor *a, td_tensor **out) { return td_float_remainder(a, a, out); }

/* fmath.comp's native f16 / bf16 forms (two elements an invocation: odd sizes leave half a
 * word) against the CPU's via f32, both storage paths (the generated comparisons run every
 * fmath op on the default path; here one of each kind, as each pipeline costs a compile): one
 * dispatch each, the 16-bit result
 * within 1 ulp for the approximated functions (fmath.comp's and the CPU's f32 may differ by an
 * f32 ulp or two), equal bits for the exact ones (rounding, remainders, and atan2 / remainder of
 * the tensor by itself through b). */
static void test_native_fmath(void **state)
{
    (void)state;
    static const struct { const char *name; un_fn fn; int tol; } ops[] = {
        { "acos", td_float_acos, 1 }, { "round", td_float_round, 0 }, { "remainder_scalar", rem_07, 0 },
        { "atan2", atan2_self, 1 },   { "remainder", rem_self, 0 },
    };
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    static const int64_t sizes[] = { 3, 1001 };
    uint16_t *h = malloc(1001 * 2), *g = malloc(1001 * 2), *w = malloc(1001 * 2);
    assert_true(h && g && w);
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int di = 0; di < 2; di++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                const td_dtype dt = dts[di];
                const int64_t n = sizes[si];
                half_inputs(dt, h, n, (unsigned)(si + 7 * (unsigned)di + 3));
                td_tensor *va = NULL, *ca = NULL;
                tdt_check(td_float_from_data_dtype(vk, dt, h, &n, 1, &va), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, h, &n, 1, &ca), "from_data");
                for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
                    td_tensor *rv = NULL, *rc = NULL;
                    long d0 = 0, d1 = 0;
                    tdt_check(td_vulkan_stats(vk, NULL, &d0), "stats");
                    tdt_check(ops[oi].fn(va, &rv), ops[oi].name);
                    tdt_check(td_vulkan_stats(vk, NULL, &d1), "stats");
                    assert_int_equal(d1 - d0, 1);
                    assert_int_equal(dtype_of(rv), dt);
                    tdt_check(ops[oi].fn(ca, &rc), ops[oi].name);
                    tdt_check(td_float_into_data_dtype(rv, dt, g, n), "read");
                    tdt_check(td_float_into_data_dtype(rc, dt, w, n), "read");
                    const uint16_t inf = dt == TD_F16 ? 0x7c00 : 0x7f80;
                    for (int64_t i = 0; i < n; i++) {
                        if ((g[i] & 0x7fff) > inf && (w[i] & 0x7fff) > inf)
                            continue; /* either NaN payload */
                        const int dl = (int)g[i] - (int)w[i];
                        if (dl < -ops[oi].tol || dl > ops[oi].tol)
                            fail_msg("%s %s [%lld] (pass %d, x = 0x%04x): vulkan 0x%04x, cpu 0x%04x", td_dtype_name(dt),
                                     ops[oi].name, (long long)i, pass, h[i], g[i], w[i]);
                    }
                    td_tensor_release(rv);
                    td_tensor_release(rc);
                }
                td_tensor_release(va);
                td_tensor_release(ca);
            }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    free(h);
    free(g);
    free(w);
}

typedef td_status (*red_fn)(const td_tensor *, int64_t, td_tensor **);
static td_status sum_all(const td_tensor *a, int64_t dim, td_tensor **out)
{
    (void)dim;
    return td_float_sum(a, out);
}

/* reduce.comp's native f16 / bf16 reductions (the first pass reads 16-bit values, f32 partials,
 * one rounding on the device) against the CPU's via f32, on every dim of [5, 7, 3], a dim of
 * 9000 (two passes), the whole tensor and an empty dim; both storage paths. max, min, argmax and
 * argmin are exact: equal. A sum or mean may differ by 1 ulp of the 16-bit result (Kahan-
 * compensated f32 here, the CPU's f32 order there: both within an f32 ulp or so of the exact
 * sum, then one rounding). Native: one reduce dispatch (plus one rounding dispatch for a value
 * result) where via f32 would convert the whole input first. */
static void test_native_reduce(void **state)
{
    (void)state;
    static const struct { const char *name; red_fn fn; bool arg; int tol; } ops[] = {
        { "sum_dim", td_float_sum_dim, false, 1 }, { "mean_dim", td_float_mean_dim, false, 1 },
        { "max_dim", td_float_max_dim, false, 0 }, { "min_dim", td_float_min_dim, false, 0 },
        { "argmax", td_float_argmax, true, 0 },    { "argmin", td_float_argmin, true, 0 },
        { "sum", sum_all, false, 1 },
    };
    static const struct { int64_t dims[3]; int nd; } shapes[] = { { { 5, 7, 3 }, 3 }, { { 2, 9000, 1 }, 2 }, { { 4, 0, 1 }, 2 } };
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    uint16_t *h = malloc(18000 * 2), *g = malloc(18000 * 2), *w = malloc(18000 * 2);
    int32_t *gi = malloc(18000 * 4), *wi = malloc(18000 * 4);
    assert_true(h && g && w && gi && wi);
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int di = 0; di < 2; di++)
            for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
                const td_dtype dt = dts[di];
                const int64_t *sh = shapes[si].dims;
                const int nd = shapes[si].nd;
                int64_t n = 1;
                for (int k = 0; k < nd; k++)
                    n *= sh[k];
                /* finite values only: a NaN or inf in a slab makes every reduction of it trivially equal */
                half_inputs(dt, h, n, (unsigned)(si + 5 * (unsigned)di));
                for (int64_t i = 0; i < n; i++)
                    if ((h[i] & 0x7fff) >= (dt == TD_F16 ? 0x7c00 : 0x7f80) || (h[i] & 0x7fff) == 0x7bff ||
                        (h[i] & 0x7fff) == 0x7f7f || (h[i] & 0x7fff) == 0x7f00)
                        h[i] = (uint16_t)(h[i] & 0x8000u) | (dt == TD_F16 ? 0x3e00u : 0x3fc0u); /* +-1.5 */
                td_tensor *va = NULL, *ca = NULL;
                tdt_check(td_float_from_data_dtype(vk, dt, h, sh, nd, &va), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, h, sh, nd, &ca), "from_data");
                for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
                    for (int dim = 0; dim < nd; dim++) {
                        if (ops[oi].fn == sum_all && dim > 0)
                            break;
                        if (sh[1] == 0 && (oi >= 2 && oi <= 5))
                            continue; /* extremes of an empty dim: the rules refuse them */
                        td_tensor *rv = NULL, *rc = NULL;
                        long d0 = 0, d1 = 0;
                        tdt_check(td_vulkan_stats(vk, NULL, &d0), "stats");
                        tdt_check(ops[oi].fn(va, dim, &rv), ops[oi].name);
                        tdt_check(td_vulkan_stats(vk, NULL, &d1), "stats");
                        if (n > 0 && n < 4096 && ops[oi].fn != sum_all)
                            assert_int_equal(d1 - d0, ops[oi].arg ? 1 : 2);
                        tdt_check(ops[oi].fn(ca, dim, &rc), ops[oi].name);
                        int64_t m = 0;
                        tdt_check(td_tensor_numel(rv, &m), "numel");
                        if (ops[oi].arg) {
                            tdt_check(td_int_into_data(rv, gi, m), "read");
                            tdt_check(td_int_into_data(rc, wi, m), "read");
                            assert_memory_equal(gi, wi, (size_t)m * 4);
                        } else {
                            assert_int_equal(dtype_of(rv), dt);
                            tdt_check(td_float_into_data_dtype(rv, dt, g, m), "read");
                            tdt_check(td_float_into_data_dtype(rc, dt, w, m), "read");
                            const uint16_t inf = dt == TD_F16 ? 0x7c00 : 0x7f80;
                            for (int64_t i = 0; i < m; i++) {
                                const int dl = (int)g[i] - (int)w[i];
                                if ((g[i] & 0x7fff) > inf && (w[i] & 0x7fff) > inf)
                                    continue; /* the mean of an empty dim, 0 / 0: the CPU's NaN is negative */
                                if (g[i] != w[i] && (dl < -ops[oi].tol || dl > ops[oi].tol))
                                    fail_msg("%s %s dim %d [%lld] (pass %d, shape %zu): vulkan 0x%04x, cpu 0x%04x",
                                             td_dtype_name(dt), ops[oi].name, dim, (long long)i, pass, si, g[i], w[i]);
                            }
                        }
                        td_tensor_release(rv);
                        td_tensor_release(rc);
                    }
                td_tensor_release(va);
                td_tensor_release(ca);
            }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    free(h);
    free(g);
    free(w);
    free(gi);
    free(wi);
}

/* f16 / bf16 bits as a double, decoded here (not by the library): sign, exponent, mantissa. */
static double half_value(td_dtype dt, uint16_t h)
{
    if (dt == TD_BF16) {
        const uint32_t w = (uint32_t)h << 16;
        float f;
        memcpy(&f, &w, sizeof f);
        return f;
    }
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

/* The spacing of dt's values at magnitude x (the subnormal spacing below the normal range). */
static double half_ulp(td_dtype dt, double x)
{
    const int mant = dt == TD_F16 ? 10 : 7, emin = dt == TD_F16 ? -14 : -126;
    int e = emin;
    if (x >= ldexp(1.0, emin)) {
        (void)frexp(x, &e); /* x = f 2^e, f in [0.5, 1) */
        e -= 1;
    }
    return ldexp(1.0, e - mant);
}

/* Random finite 16-bit values with full random mantissas: magnitudes 2^-5 .. 2^3 (f16 exponent
 * fields 10 .. 17, bf16 122 .. 129), every 7th element zero, every 11th a subnormal. */
static void mm_inputs(td_dtype dt, uint16_t *h, int64_t n, uint32_t seed)
{
    rng = 0x9E3779B97F4A7C15ull ^ seed;
    for (int64_t i = 0; i < n; i++) {
        const uint32_t r = next32();
        const uint16_t sign = (uint16_t)((r & 1u) << 15);
        if (dt == TD_F16) {
            const uint32_t e = i % 11 == 10 ? 0u : 10u + (r >> 1) % 8u;
            h[i] = (uint16_t)(sign | (e << 10) | ((r >> 4) & 0x3ffu));
        } else {
            const uint32_t e = i % 11 == 10 ? 0u : 122u + (r >> 1) % 8u;
            h[i] = (uint16_t)(sign | (e << 7) | ((r >> 4) & 0x7fu));
        }
        if (i % 7 == 6)
            h[i] = sign;
    }
}

/* float_matmul on f16 / bf16 (mmtile / mmwide / mmthin / mmouter built with TD_HALF: widened
 * loads, f32 sums, one rounding) against the exact product computed here in double, and the
 * CPU's (convert to f32, sgemm, round once) against the same: each result g must satisfy
 *   |g - exact| <= 1.01 K 2^-24 sum_k |a_ik b_kj| + ulp(max(|g|, |exact|)) / 2
 * (an f32 sum of K products in any order, then one rounding to the 16-bit type). The two
 * backends add in different orders, so their bits may differ by about an ulp of the 16-bit
 * result; each is held to this bound rather than to the other's bits. Shapes: each kernel as
 * chosen on its own (tile or wide, thin row / column / block, outer with N % 4 == 0 and not),
 * K not a multiple of 4 or of 16, a K past one dispatch's range (1024: C accumulates across
 * dispatches), broadcast batches, a batch of A against one B (run as one matrix), and the
 * former kernel asked for (it has no 16-bit form: mmtile runs); both storage paths. Native:
 * one unbatched single-range product is 2 dispatches (the matmul, the rounding cvt), not the 4
 * of via f32. */
static void test_native_matmul(void **state)
{
    (void)state;
    static const struct { int64_t a[4], b[4]; int na, nb; td_vulkan_matmul_kernel kern; } cases[] = {
        { { 70, 37 }, { 37, 45 }, 2, 2, TD_VULKAN_MATMUL_AUTO },         /* tile, K % 4 != 0 */
        { { 130, 64 }, { 64, 260 }, 2, 2, TD_VULKAN_MATMUL_AUTO },       /* wide on a software device, quads */
        { { 72, 48 }, { 48, 68 }, 2, 2, TD_VULKAN_MATMUL_TILED },         /* tile, quads */
        { { 1, 33 }, { 33, 50 }, 2, 2, TD_VULKAN_MATMUL_AUTO },          /* thin, a row vector */
        { { 50, 19 }, { 19, 1 }, 2, 2, TD_VULKAN_MATMUL_AUTO },          /* thin, a column vector */
        { { 17, 20 }, { 20, 24 }, 2, 2, TD_VULKAN_MATMUL_AUTO },         /* thin blocks, K and N quads */
        { { 40, 5 }, { 5, 3 }, 2, 2, TD_VULKAN_MATMUL_AUTO },            /* thin blocks, word by word */
        { { 300, 3 }, { 3, 40 }, 2, 2, TD_VULKAN_MATMUL_AUTO },          /* outer, N % 4 == 0 */
        { { 260, 1 }, { 1, 37 }, 2, 2, TD_VULKAN_MATMUL_AUTO },          /* outer product, N % 4 != 0 */
        { { 64, 1100 }, { 1100, 20 }, 2, 2, TD_VULKAN_MATMUL_AUTO },     /* thin: one k range */
        { { 64, 1100 }, { 1100, 64 }, 2, 2, TD_VULKAN_MATMUL_TILED },     /* two k ranges (1024 + 76) */
        { { 300, 270 }, { 270, 40 }, 2, 2, TD_VULKAN_MATMUL_OUTER },     /* forced outer: two k ranges */
        { { 3, 20, 33 }, { 3, 33, 18 }, 3, 3, TD_VULKAN_MATMUL_AUTO },   /* a batch */
        { { 2, 1, 9, 16 }, { 1, 3, 16, 12 }, 4, 4, TD_VULKAN_MATMUL_AUTO }, /* broadcast batch dims */
        { { 4, 10, 16 }, { 16, 40 }, 3, 2, TD_VULKAN_MATMUL_AUTO },      /* batch of A, one B: one matrix */
        { { 33, 21 }, { 21, 35 }, 2, 2, TD_VULKAN_MATMUL_NAIVE },        /* no 16-bit former kernel */
    };
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int di = 0; di < 2; di++)
            for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
                const td_dtype dt = dts[di];
                const int na = cases[ci].na, nb = cases[ci].nb;
                const int64_t *as = cases[ci].a, *bs = cases[ci].b;
                const int64_t m = as[na - 2], k = as[na - 1], n = bs[nb - 1];
                int64_t ab = 1, bb = 1; /* batches of A and B (batch dims right-aligned, 4 at most here) */
                int64_t bd[2] = { 1, 1 }, ad[2] = { 1, 1 }, od[2];
                for (int d = 0; d < na - 2; d++)
                    ad[2 - (na - 2) + d] = as[d];
                for (int d = 0; d < nb - 2; d++)
                    bd[2 - (nb - 2) + d] = bs[d];
                od[0] = ad[0] > bd[0] ? ad[0] : bd[0];
                od[1] = ad[1] > bd[1] ? ad[1] : bd[1];
                ab = ad[0] * ad[1];
                bb = bd[0] * bd[1];
                const int64_t nbatch = od[0] * od[1];
                uint16_t *ha = malloc((size_t)(ab * m * k) * 2), *hb = malloc((size_t)(bb * k * n) * 2);
                uint16_t *g = malloc((size_t)(nbatch * m * n) * 2), *w = malloc((size_t)(nbatch * m * n) * 2);
                assert_true(ha && hb && g && w);
                mm_inputs(dt, ha, ab * m * k, (uint32_t)(3 * ci + 1));
                mm_inputs(dt, hb, bb * k * n, (uint32_t)(3 * ci + 2));
                td_tensor *va = NULL, *vb = NULL, *ca = NULL, *cb = NULL, *rv = NULL, *rc = NULL;
                tdt_check(td_float_from_data_dtype(vk, dt, ha, as, na, &va), "from_data");
                tdt_check(td_float_from_data_dtype(vk, dt, hb, bs, nb, &vb), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, ha, as, na, &ca), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, dt, hb, bs, nb, &cb), "from_data");
                tdt_check(td_vulkan_set_matmul_kernel(vk, cases[ci].kern), "kernel");
                long d0 = 0, d1 = 0;
                tdt_check(td_vulkan_stats(vk, NULL, &d0), "stats");
                tdt_check(td_float_matmul(va, vb, &rv), "matmul");
                tdt_check(td_vulkan_stats(vk, NULL, &d1), "stats");
                tdt_check(td_vulkan_set_matmul_kernel(vk, TD_VULKAN_MATMUL_AUTO), "kernel");
                if (ci == 0 || ci == 3)
                    assert_int_equal(d1 - d0, 2);
                tdt_check(td_float_matmul(ca, cb, &rc), "matmul");
                assert_int_equal(dtype_of(rv), dt);
                tdt_check(td_float_into_data_dtype(rv, dt, g, nbatch * m * n), "read");
                tdt_check(td_float_into_data_dtype(rc, dt, w, nbatch * m * n), "read");
                int differ = 0;
                for (int64_t bi = 0; bi < nbatch; bi++) {
                    const int64_t i0 = bi / od[1], i1 = bi % od[1];
                    const int64_t ai = (ad[0] > 1 ? i0 : 0) * ad[1] + (ad[1] > 1 ? i1 : 0);
                    const int64_t bj = (bd[0] > 1 ? i0 : 0) * bd[1] + (bd[1] > 1 ? i1 : 0);
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = 0; j < n; j++) {
                            double exact = 0.0, mag = 0.0; /* each product is exact in double */
                            for (int64_t q = 0; q < k; q++) {
                                const double p = half_value(dt, ha[(ai * m + i) * k + q]) *
                                                 half_value(dt, hb[(bj * k + q) * n + j]);
                                exact += p;
                                mag += fabs(p);
                            }
                            const int64_t at = (bi * m + i) * n + j;
                            const double gv = half_value(dt, g[at]), wv = half_value(dt, w[at]);
                            const double f32err = 1.01 * (double)k * ldexp(mag, -24);
                            const double bg = f32err + half_ulp(dt, fmax(fabs(gv), fabs(exact))) / 2;
                            const double bw = f32err + half_ulp(dt, fmax(fabs(wv), fabs(exact))) / 2;
                            if (!(fabs(gv - exact) <= bg))
                                fail_msg("%s case %zu pass %d [%lld][%lld][%lld]: vulkan %.9g (0x%04x), exact %.9g, "
                                         "bound %.3g", td_dtype_name(dt), ci, pass, (long long)bi, (long long)i,
                                         (long long)j, gv, g[at], exact, bg);
                            if (!(fabs(wv - exact) <= bw))
                                fail_msg("%s case %zu: cpu %.9g, exact %.9g", td_dtype_name(dt), ci, wv, exact);
                            differ += g[at] != w[at];
                        }
                }
                (void)differ;
                td_tensor_release(va);
                td_tensor_release(vb);
                td_tensor_release(ca);
                td_tensor_release(cb);
                td_tensor_release(rv);
                td_tensor_release(rc);
                free(ha);
                free(hb);
                free(g);
                free(w);
            }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
}

/* One rounding, hand values: [1, 1, 1] . [1, e, e] with e half an ulp of 1 (f16 2^-11, bf16
 * 2^-8) sums to 1 + 2e exactly in f32, which is representable: 1 + 2^-10 (0x3c01) and 1 + 2^-7
 * (0x3f81). Rounding after each addition would give 1 (1 + e is a tie, to even). And
 * 65504 + 65504 = 131008 in f32 rounds to f16 inf (0x7c00); 0 * inf is NaN. */
static void test_native_matmul_rounding(void **state)
{
    (void)state;
    const int64_t as[2] = { 1, 3 }, bs[2] = { 3, 1 }, as2[2] = { 1, 2 }, bs2[2] = { 2, 2 };
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int di = 0; di < 2; di++) {
            const td_dtype dt = di ? TD_BF16 : TD_F16;
            const uint16_t one = di ? 0x3f80 : 0x3c00, e = di ? 0x3b80 : 0x1000, want = di ? 0x3f81 : 0x3c01;
            const uint16_t a[3] = { one, one, one }, b[3] = { one, e, e };
            td_tensor *ta = NULL, *tb = NULL, *r = NULL;
            tdt_check(td_float_from_data_dtype(vk, dt, a, as, 2, &ta), "from_data");
            tdt_check(td_float_from_data_dtype(vk, dt, b, bs, 2, &tb), "from_data");
            tdt_check(td_float_matmul(ta, tb, &r), "matmul");
            uint16_t got = 0;
            tdt_check(td_float_into_data_dtype(r, dt, &got, 1), "read");
            assert_int_equal(got, want);
            td_tensor_release(ta);
            td_tensor_release(tb);
            td_tensor_release(r);
        }
        const uint16_t a2[2] = { 0x3c00, 0x3c00 }, b2[4] = { 0x7bff, 0x0000, 0x7bff, 0x7c00 };
        td_tensor *ta = NULL, *tb = NULL, *r = NULL;
        tdt_check(td_float_from_data_dtype(vk, TD_F16, a2, as2, 2, &ta), "from_data");
        tdt_check(td_float_from_data_dtype(vk, TD_F16, b2, bs2, 2, &tb), "from_data");
        tdt_check(td_float_matmul(ta, tb, &r), "matmul");
        uint16_t got[2] = { 0, 0 };
        tdt_check(td_float_into_data_dtype(r, TD_F16, got, 2), "read");
        assert_int_equal(got[0], 0x7c00);
        assert_int_equal(got[1], 0x7c00); /* 1 * 0 + 1 * inf */
        td_tensor_release(ta);
        td_tensor_release(tb);
        td_tensor_release(r);
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
}

/* float_matmul in f64 (the matmul shaders built with TD_F64: double loads, products and sums),
 * where the device has shaderFloat64 (TD_E_UNSUPPORTED naming it where not). Inputs that are
 * multiples of 2^-6 below 8 in magnitude: every product and partial sum is exact in double, so
 * the result must equal, bit for bit, the sum computed here in int64 units of 2^-12; then full
 * 53-bit random inputs against the CPU's f64 matmul (double sums in another order), within
 * 2 K 2^-53 sum_k |a_ik b_kj|. Shapes for each kernel (tile; mmwide has no f64 form), thin,
 * outer, two k ranges and a batch. */
static void test_native_matmul_f64(void **state)
{
    (void)state;
    /* A device without shaderFloat64 refuses, naming it; lavapipe (llvmpipe) has it. */
    td_device_info info;
    tdt_check(td_device_info_of(vk, &info), "device info");
    const bool lavapipe = strstr(info.name, "llvmpipe") != NULL;
    static const struct { int64_t m, k, n, batch; td_vulkan_matmul_kernel kern; } cases[] = {
        { 70, 37, 45, 1, TD_VULKAN_MATMUL_AUTO }, { 130, 64, 260, 1, TD_VULKAN_MATMUL_AUTO },
        { 1, 33, 50, 1, TD_VULKAN_MATMUL_AUTO },  { 50, 19, 1, 1, TD_VULKAN_MATMUL_AUTO },
        { 17, 20, 24, 1, TD_VULKAN_MATMUL_AUTO }, { 300, 3, 40, 1, TD_VULKAN_MATMUL_AUTO },
        { 260, 1, 37, 1, TD_VULKAN_MATMUL_AUTO }, { 64, 1100, 64, 1, TD_VULKAN_MATMUL_TILED },
        { 300, 270, 40, 1, TD_VULKAN_MATMUL_OUTER }, { 20, 33, 18, 3, TD_VULKAN_MATMUL_AUTO },
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const int64_t m = cases[ci].m, k = cases[ci].k, n = cases[ci].n, nb = cases[ci].batch;
        const int64_t as[3] = { nb, m, k }, bs[3] = { nb, k, n };
        const int64_t na = nb * m * k, nbn = nb * k * n, no = nb * m * n;
        double *a = malloc((size_t)na * 8), *b = malloc((size_t)nbn * 8), *g = malloc((size_t)no * 8),
               *w = malloc((size_t)no * 8);
        int64_t *ia = malloc((size_t)na * 8), *ib = malloc((size_t)nbn * 8);
        assert_true(a && b && g && w && ia && ib);
        for (int round = 0; round < 2; round++) {
            rng = 0x51ED270B27BA5E13ull + ci;
            for (int64_t i = 0; i < na + nbn; i++) {
                const uint32_t r = next32();
                int64_t *iv = i < na ? &ia[i] : &ib[i - na];
                double *v = i < na ? &a[i] : &b[i - na];
                *iv = (int64_t)(r % 1023u) - 511; /* units of 2^-6 */
                if (round == 0)
                    *v = ldexp((double)*iv, -6);
                else
                    *v = ((double)next32() * 4294967296.0 + (double)next32()) / 18446744073709551616.0 * 16.0 - 8.0;
            }
            td_tensor *ta = NULL, *tb = NULL, *r = NULL, *ca = NULL, *cb = NULL, *rc = NULL;
            tdt_check(td_float_from_data_dtype(vk, TD_F64, a, as, 3, &ta), "from_data");
            tdt_check(td_float_from_data_dtype(vk, TD_F64, b, bs, 3, &tb), "from_data");
            tdt_check(td_vulkan_set_matmul_kernel(vk, cases[ci].kern), "kernel");
            const td_status st = td_float_matmul(ta, tb, &r);
            tdt_check(td_vulkan_set_matmul_kernel(vk, TD_VULKAN_MATMUL_AUTO), "kernel");
            if (st == TD_E_UNSUPPORTED && !lavapipe) {
                assert_non_null(strstr(td_last_error(), "shaderFloat64"));
                td_tensor_release(ta);
                td_tensor_release(tb);
                break;
            }
            tdt_check(st, "matmul f64");
            tdt_check(td_float_into_data_dtype(r, TD_F64, g, no), "read");
            if (round == 0) {
                for (int64_t bi = 0; bi < nb; bi++)
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = 0; j < n; j++) {
                            int64_t sum = 0;
                            for (int64_t q = 0; q < k; q++)
                                sum += ia[(bi * m + i) * k + q] * ib[(bi * k + q) * n + j];
                            const double want = ldexp((double)sum, -12), got = g[(bi * m + i) * n + j];
                            if (memcmp(&want, &got, 8) != 0)
                                fail_msg("f64 case %zu [%lld][%lld][%lld]: vulkan %.17g, exact %.17g", ci, (long long)bi,
                                         (long long)i, (long long)j, got, want);
                        }
            } else {
                tdt_check(td_float_from_data_dtype(cpu, TD_F64, a, as, 3, &ca), "from_data");
                tdt_check(td_float_from_data_dtype(cpu, TD_F64, b, bs, 3, &cb), "from_data");
                tdt_check(td_float_matmul(ca, cb, &rc), "matmul");
                tdt_check(td_float_into_data_dtype(rc, TD_F64, w, no), "read");
                for (int64_t bi = 0; bi < nb; bi++)
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = 0; j < n; j++) {
                            double mag = 0.0;
                            for (int64_t q = 0; q < k; q++)
                                mag += fabs(a[(bi * m + i) * k + q] * b[(bi * k + q) * n + j]);
                            const int64_t at = (bi * m + i) * n + j;
                            const double bound = 2.0 * (double)k * ldexp(mag, -53);
                            if (!(fabs(g[at] - w[at]) <= bound))
                                fail_msg("f64 case %zu [%lld]: vulkan %.17g, cpu %.17g, bound %.3g", ci, (long long)at,
                                         g[at], w[at], bound);
                        }
            }
            td_tensor_release(ta);
            td_tensor_release(tb);
            td_tensor_release(r);
            td_tensor_release(ca);
            td_tensor_release(cb);
            td_tensor_release(rc);
        }
        free(a);
        free(b);
        free(g);
        free(w);
        free(ia);
        free(ib);
    }
}

/* Through autodiff's arm on a Vulkan device: an f16 tensor made there, a native add (hand values:
 * 1 + 1 = 2, 65504 + 65504 overflows to inf, (1 + 2^-10) * 2 = 2 + 2^-9) and a via-f32 op. */
static void test_autodiff_device(void **state)
{
    (void)state;
    td_device *ad = NULL;
    tdt_check(td_device_autodiff(vk, TD_CHECKPOINT_DEFAULT, &ad), "autodiff device");
    const uint16_t a16[3] = { 0x3c00, 0x7bff, 0x3c01 };
    const int64_t shape[1] = { 3 };
    td_tensor *x = NULL, *y = NULL, *z = NULL;
    tdt_check(td_float_from_data_dtype(ad, TD_F16, a16, shape, 1, &x), "from_data");
    tdt_check(td_float_add(x, x, &y), "add");
    assert_int_equal(dtype_of(y), TD_F16);
    uint16_t got[3];
    tdt_check(td_float_into_data_dtype(y, TD_F16, got, 3), "read");
    assert_int_equal(got[0], 0x4000);
    assert_int_equal(got[1], 0x7c00);
    assert_int_equal(got[2], 0x4001);
    tdt_check(td_float_floor(x, &z), "floor"); /* via f32: 1, 65504, 1 */
    tdt_check(td_float_into_data_dtype(z, TD_F16, got, 3), "read");
    assert_int_equal(got[0], 0x3c00);
    assert_int_equal(got[1], 0x7bff);
    assert_int_equal(got[2], 0x3c00);
    td_tensor *ts[] = { x, y, z };
    for (int i = 0; i < 3; i++)
        td_tensor_release(ts[i]);
    td_device_release(ad);
}

/* Every allocation of the device paths failing in turn (the cast's result, the via-f32 and
 * reduction temporaries): TD_OK or TD_E_NOMEM, and nothing leaks. */
static void test_allocation_failures(void **state)
{
    (void)state;
    const float v[5] = { 1.0f, -2.5f, 0.1f, 65504.0f, 3.0f };
    const int64_t shape[1] = { 5 };
    const long live = td_testing_live_objects();
    td_status st = TD_E_NOMEM;
    for (long n = 0; st != TD_OK; n++) { /* until every allocation succeeds */
        assert_true(n < 200);
        td_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
        td_testing_fail_allocations_after(n);
        st = td_float_from_data(vk, v, shape, 1, &a);
        if (st == TD_OK)
            st = td_float_cast(a, TD_F16, &b); /* cvt.comp */
        if (st == TD_OK)
            st = td_float_atan(b, &c); /* via f32 */
        if (st == TD_OK)
            st = td_float_sum(b, &d); /* reduce.comp's 16-bit form and an f32 temporary */
        if (st == TD_OK)
            st = td_float_add(b, d, &e); /* native, a one-element input */
        td_testing_fail_allocations_after(-1);
        assert_true(st == TD_OK || st == TD_E_NOMEM);
        td_tensor *ts[] = { a, b, c, d, e };
        for (int i = 0; i < 5; i++)
            td_tensor_release(ts[i]);
        assert_int_equal(td_testing_live_objects(), live);
    }
}

/* "via f32" for list arguments (docs/dtypes.md section 4): cat and stack of bf16 / f16 items,
 * which the Vulkan kernels compute only in f32 (and the CPU's stack too), run on f32 copies of
 * every item and round back. Moves are exact, so the result is the items' bits in the layout
 * written out here (item k, row i, column j), and the Vulkan result equals the CPU's bit for
 * bit; then every allocation failing in turn: TD_OK or TD_E_NOMEM and nothing leaks (the
 * copies of the items are freed on every path). */
static void test_list_via_f32(void **state)
{
    (void)state;
    static const td_dtype dts[] = { TD_BF16, TD_F16 };
    enum { K = 3, R = 2, C = 3, N = R * C };
    const int64_t shape[2] = { R, C };
    for (int di = 0; di < 2; di++) {
        const td_dtype dt = dts[di];
        uint16_t bits[K][N];
        for (int k = 0; k < K; k++)
            for (int e = 0; e < N; e++) { /* halves and small integers: exact in both dtypes */
                const float v = (float)(k * N + e) * 0.5f - 4.0f;
                bits[k][e] = dt == TD_BF16 ? tdt_bf16_bits(v) : tdt_f16_bits(v);
            }
        uint16_t want_stack[R * K * C], want_cat[K * R * C];
        for (int i = 0; i < R; i++)
            for (int k = 0; k < K; k++)
                for (int j = 0; j < C; j++)
                    want_stack[(i * K + k) * C + j] = bits[k][i * C + j]; /* stack on dim 1: [R, K, C] */
        for (int k = 0; k < K; k++)
            for (int e = 0; e < N; e++)
                want_cat[k * N + e] = bits[k][e]; /* cat on dim 0: [K * R, C] */
        uint16_t got[2][2][R * K * C];
        td_device *ds[2] = { vk, cpu };
        for (int j = 0; j < 2; j++) {
            td_tensor *xs[K] = { NULL };
            for (int k = 0; k < K; k++)
                tdt_check(td_float_from_data_dtype(ds[j], dt, bits[k], shape, 2, &xs[k]), "from_data_dtype");
            td_tensor *st = NULL, *ct = NULL;
            tdt_check(td_float_stack((const td_tensor *const *)xs, K, 1, &st), "stack");
            tdt_check(td_float_cat((const td_tensor *const *)xs, K, 0, &ct), "cat");
            assert_int_equal(dtype_of(st), dt);
            assert_int_equal(dtype_of(ct), dt);
            int64_t sshape[TD_MAX_DIMS];
            int nd = 0;
            tdt_check(td_tensor_shape(st, sshape, &nd), "shape");
            assert_int_equal(nd, 3);
            assert_true(sshape[0] == R && sshape[1] == K && sshape[2] == C);
            tdt_check(td_float_into_data_dtype(st, dt, got[j][0], R * K * C), "read stack");
            tdt_check(td_float_into_data_dtype(ct, dt, got[j][1], K * R * C), "read cat");
            for (int e = 0; e < R * K * C; e++) {
                if (got[j][0][e] != want_stack[e])
                    fail_msg("%s stack of %s, element %d: 0x%04x, want 0x%04x", j ? "cpu" : "vulkan",
                             td_dtype_name(dt), e, got[j][0][e], want_stack[e]);
                if (got[j][1][e] != want_cat[e])
                    fail_msg("%s cat of %s, element %d: 0x%04x, want 0x%04x", j ? "cpu" : "vulkan",
                             td_dtype_name(dt), e, got[j][1][e], want_cat[e]);
            }
            td_tensor_release(st);
            td_tensor_release(ct);
            for (int k = 0; k < K; k++)
                td_tensor_release(xs[k]);
        }
        assert_memory_equal(got[0], got[1], sizeof got[0]);
    }
    /* allocation failures through the conversions of the items, both devices */
    const uint16_t one[2] = { 0x3f80, 0xc000 }; /* bf16 1, -2 */
    const int64_t s2[1] = { 2 };
    const long live = td_testing_live_objects();
    for (int j = 0; j < 2; j++) {
        td_device *d = j ? cpu : vk;
        int failures = 0;
        td_status st = TD_E_NOMEM;
        for (long n = 0; st != TD_OK; n++) {
            assert_true(n < 400);
            td_tensor *xs[K] = { NULL }, *r = NULL, *c = NULL;
            td_testing_fail_allocations_after(n);
            st = TD_OK;
            for (int k = 0; k < K && st == TD_OK; k++)
                st = td_float_from_data_dtype(d, TD_BF16, one, s2, 1, &xs[k]);
            if (st == TD_OK)
                st = td_float_stack((const td_tensor *const *)xs, K, 0, &r);
            if (st == TD_OK && d == vk)
                st = td_float_cat((const td_tensor *const *)xs, K, 0, &c);
            td_testing_fail_allocations_after(-1);
            assert_true(st == TD_OK || st == TD_E_NOMEM);
            if (st != TD_OK)
                failures++;
            td_tensor_release(r);
            td_tensor_release(c);
            for (int k = 0; k < K; k++)
                td_tensor_release(xs[k]);
            assert_int_equal(td_testing_live_objects(), live);
        }
        assert_true(failures > K); /* at least one allocation of each item failed, and later ones */
    }
}

static void test_errors(void **state)
{
    (void)state;
    assert_int_equal(td_vulkan_set_half_storage(cpu, TD_VULKAN_HALF_AUTO), TD_E_BACKEND_MISMATCH);
    assert_int_equal(td_vulkan_set_half_storage(vk, (td_vulkan_half_storage)7), TD_E_INVALID);
    assert_int_equal(td_vulkan_set_half_storage(NULL, TD_VULKAN_HALF_AUTO), TD_E_NULL);
    assert_int_equal(td_vulkan_half_storage_in_use(vk, NULL), TD_E_NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conversions_16bit_storage),
        cmocka_unit_test(test_conversions_packed_words),
        cmocka_unit_test(test_storage_round_trip),
        cmocka_unit_test(test_via_f32_and_f64),
        cmocka_unit_test(test_into_int_specials),
        cmocka_unit_test(test_random_dtypes),
        cmocka_unit_test(test_native_elementwise),
        cmocka_unit_test(test_native_unary),
        cmocka_unit_test(test_native_fmath),
        cmocka_unit_test(test_native_reduce),
        cmocka_unit_test(test_native_matmul),
        cmocka_unit_test(test_native_matmul_rounding),
        cmocka_unit_test(test_native_matmul_f64),
        cmocka_unit_test(test_autodiff_device),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_list_via_f32),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
