/* q8_0 / q4_0 blocks: ggml's reference quantizers, dequantizers, and the dot products of a
 * quantized row with a q8_0 row, portable and in AVX2 and AVX-512 VNNI paths picked at run
 * time (td_quant.h). The vector dot products compute each block's integer sum exactly, for
 * every byte value (the -128 that ggml's sign trick would saturate included), and differ
 * from the portable one only in the order of the float additions. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "td_half.h"
#include "td_internal.h"
#include "td_quant.h"

/* ---- quantize / dequantize (scalar: ggml's reference rules) ---- */

/* roundf(v) as an int8: v is in [-127.5, 127.5] when the inputs are finite and d is normal.
 * Where ggml's reference casts a non-finite float to an integer (undefined behaviour: a
 * non-finite input, or a subnormal d whose inverse is infinite), x86 gives 0 (the integer
 * conversion yields 0x80000000, whose low byte is kept); we define the same 0, so our bytes
 * equal what ggml writes on x86 there too. */
static inline int8_t q8_of(float v)
{
    const float r = roundf(v);
    if (!isfinite(r))
        return 0;
    return (int8_t)(r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r);
}

/* min(15, trunc(v)): v is in [0.5, 16.5] for finite inputs; non-finite gives 0 as above. */
static inline uint8_t q4_of(float v)
{
    if (!isfinite(v) || v < 0.0f)
        return 0;
    if (v >= 15.0f)
        return 15;
    return (uint8_t)v;
}

void td_quantize_q8_0_unchecked(const float *x, td_block_q8_0 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += TD_QK) {
        float amax = 0.0f;
        for (int j = 0; j < TD_QK; j++) {
            const float a = fabsf(x[j]);
            amax = amax > a ? amax : a;
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = td_f32_to_f16(d);
        for (int j = 0; j < TD_QK; j++)
            y[b].qs[j] = q8_of(x[j] * id);
    }
}

void td_quantize_q4_0_unchecked(const float *x, td_block_q4_0 *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, x += TD_QK) {
        float amax = 0.0f, m = 0.0f;
        for (int j = 0; j < TD_QK; j++)
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                m = x[j];
            }
        const float d = m / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = td_f32_to_f16(d);
        for (int j = 0; j < TD_QK / 2; j++) {
            const uint8_t lo = q4_of(x[j] * id + 8.5f), hi = q4_of(x[j + TD_QK / 2] * id + 8.5f);
            y[b].qs[j] = (uint8_t)(lo | hi << 4);
        }
    }
}

void td_dequantize_q8_0_unchecked(const td_block_q8_0 *x, float *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, y += TD_QK) {
        const float d = td_f16_to_f32(x[b].d);
        for (int j = 0; j < TD_QK; j++)
            y[j] = (float)x[b].qs[j] * d;
    }
}

void td_dequantize_q4_0_unchecked(const td_block_q4_0 *x, float *y, int64_t nb)
{
    for (int64_t b = 0; b < nb; b++, y += TD_QK) {
        const float d = td_f16_to_f32(x[b].d);
        for (int j = 0; j < TD_QK / 2; j++) {
            y[j] = (float)((x[b].qs[j] & 0x0f) - 8) * d;
            y[j + TD_QK / 2] = (float)((x[b].qs[j] >> 4) - 8) * d;
        }
    }
}

/* ---- dot products ---- */

static float dot_q8_q8_portable(const td_block_q8_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; b++) {
        int32_t s = 0;
        for (int j = 0; j < TD_QK; j++)
            s += (int32_t)x[b].qs[j] * (int32_t)y[b].qs[j];
        sum += (float)s * (td_f16_to_f32(x[b].d) * td_f16_to_f32(y[b].d));
    }
    return sum;
}

static float dot_q4_q8_portable(const td_block_q4_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; b++) {
        int32_t s = 0;
        for (int j = 0; j < TD_QK / 2; j++) {
            s += ((x[b].qs[j] & 0x0f) - 8) * (int32_t)y[b].qs[j];
            s += ((x[b].qs[j] >> 4) - 8) * (int32_t)y[b].qs[j + TD_QK / 2];
        }
        sum += (float)s * (td_f16_to_f32(x[b].d) * td_f16_to_f32(y[b].d));
    }
    return sum;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define TD_QUANT_X86 1
#include <cpuid.h>
#include <immintrin.h>

#define AVX2_FN __attribute__((target("avx2,fma,f16c")))
#define VNNI_FN __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512dq,avx512vnni")))

/* F16C from cpuid leaf 1 (ECX bit 29): clang's __builtin_cpu_supports has no "f16c". */
static bool has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
}

/* The block's scale product, as ggml: f32 of each f16, then their product. */
AVX2_FN static inline float scale_of(uint16_t a, uint16_t b)
{
    return _cvtsh_ss(a) * _cvtsh_ss(b);
}

AVX2_FN static inline float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* the 32 values of a q4_0 block as bytes 0..15, in the order of y's 32 values */
AVX2_FN static inline __m256i nibbles(const uint8_t *qs)
{
    const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)qs);
    const __m128i m = _mm_set1_epi8(0x0f);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
}

/* q8 x q8: both sides sign-extended to 16 bits, vpmaddwd: exact for any bytes */
AVX2_FN static inline __m256i isum_q8_avx2(const int8_t *a, const int8_t *b)
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)a);
    const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)b);
    const __m256i xl = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(x));
    const __m256i xh = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1));
    const __m256i yl = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(y));
    const __m256i yh = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(y, 1));
    return _mm256_add_epi32(_mm256_madd_epi16(xl, yl), _mm256_madd_epi16(xh, yh));
}

AVX2_FN static float dot_q8_q8_avx2(const td_block_q8_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const __m256i p0 = isum_q8_avx2(x[b].qs, y[b].qs), p1 = isum_q8_avx2(x[b + 1].qs, y[b + 1].qs);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(scale_of(x[b].d, y[b].d)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(scale_of(x[b + 1].d, y[b + 1].d)), acc1);
    }
    for (; b < nb; b++)
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum_q8_avx2(x[b].qs, y[b].qs)),
                               _mm256_set1_ps(scale_of(x[b].d, y[b].d)), acc0);
    return hsum8(_mm256_add_ps(acc0, acc1));
}

/* q4 x q8: nibbles (unsigned, 0..15) times y by vpmaddubsw (at most 2 * 15 * 128: no
 * saturation), minus 8 * sum(y) */
AVX2_FN static inline __m256i isum_q4_avx2(const uint8_t *qs, const int8_t *b)
{
    const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)b);
    const __m256i ones16 = _mm256_set1_epi16(1);
    const __m256i nx = _mm256_madd_epi16(_mm256_maddubs_epi16(nibbles(qs), y), ones16);
    const __m256i sy = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), y), ones16);
    return _mm256_sub_epi32(nx, _mm256_slli_epi32(sy, 3));
}

AVX2_FN static float dot_q4_q8_avx2(const td_block_q4_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const __m256i p0 = isum_q4_avx2(x[b].qs, y[b].qs), p1 = isum_q4_avx2(x[b + 1].qs, y[b + 1].qs);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(scale_of(x[b].d, y[b].d)), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(scale_of(x[b + 1].d, y[b + 1].d)), acc1);
    }
    for (; b < nb; b++)
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum_q4_avx2(x[b].qs, y[b].qs)),
                               _mm256_set1_ps(scale_of(x[b].d, y[b].d)), acc0);
    return hsum8(_mm256_add_ps(acc0, acc1));
}

/* VNNI's vpdpbusd multiplies unsigned by signed bytes: x + 128 (x xor 0x80) times y, minus
 * 128 * sum(y); exact in the 32-bit lanes. */
VNNI_FN static inline __m256i isum_q8_vnni(const int8_t *a, const int8_t *b)
{
    const __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)a);
    const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)b);
    const __m256i off = _mm256_set1_epi8((char)0x80);
    const __m256i z = _mm256_setzero_si256();
    return _mm256_sub_epi32(_mm256_dpbusd_epi32(z, _mm256_xor_si256(x, off), y), _mm256_dpbusd_epi32(z, off, y));
}

VNNI_FN static inline __m256i isum_q4_vnni(const uint8_t *qs, const int8_t *b)
{
    const __m256i y = _mm256_loadu_si256((const __m256i *)(const void *)b);
    const __m256i z = _mm256_setzero_si256();
    return _mm256_sub_epi32(_mm256_dpbusd_epi32(z, nibbles(qs), y), _mm256_dpbusd_epi32(z, _mm256_set1_epi8(8), y));
}

/* Two blocks' 32 bytes side by side in a zmm, and their two scales in its halves. */
VNNI_FN static inline __m512i two_blocks(const int8_t *a, const int8_t *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)a)),
                              _mm256_loadu_si256((const __m256i *)(const void *)b), 1);
}

/* The scale products of blocks b..b+3 (f16 -> f32 of x's and y's scales by one vcvtph2ps,
 * then x * y), spread as {s0 x8, s1 x8} in *lo and {s2 x8, s3 x8} in *hi. */
VNNI_FN static inline void four_scales(uint16_t x0, uint16_t x1, uint16_t x2, uint16_t x3, const td_block_q8_0 *y,
                                       __m512 *lo, __m512 *hi)
{
    const __m128i h = _mm_set_epi16((short)y[3].d, (short)y[2].d, (short)y[1].d, (short)y[0].d, (short)x3, (short)x2,
                                    (short)x1, (short)x0);
    const __m256 f = _mm256_cvtph_ps(h);
    const __m512 s4 = _mm512_castps128_ps512(_mm_mul_ps(_mm256_castps256_ps128(f), _mm256_extractf128_ps(f, 1)));
    *lo = _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), s4);
    *hi = _mm512_permutexvar_ps(_mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2), s4);
}

VNNI_FN static inline __m512i two_nibbles(const uint8_t *a, const uint8_t *b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(nibbles(a)), nibbles(b), 1);
}

/* 2 blocks per 512-bit vpdpbusd, 4 per round with two accumulators; the odd last block on 256 bits. */
VNNI_FN static float dot_q8_q8_vnni(const td_block_q8_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    const __m512i off = _mm512_set1_epi8((char)0x80), z = _mm512_setzero_si512();
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4) {
        const __m512i x0 = two_blocks(x[b].qs, x[b + 1].qs), y0 = two_blocks(y[b].qs, y[b + 1].qs);
        const __m512i x1 = two_blocks(x[b + 2].qs, x[b + 3].qs), y1 = two_blocks(y[b + 2].qs, y[b + 3].qs);
        const __m512i p0 = _mm512_sub_epi32(_mm512_dpbusd_epi32(z, _mm512_xor_si512(x0, off), y0),
                                            _mm512_dpbusd_epi32(z, off, y0));
        const __m512i p1 = _mm512_sub_epi32(_mm512_dpbusd_epi32(z, _mm512_xor_si512(x1, off), y1),
                                            _mm512_dpbusd_epi32(z, off, y1));
        __m512 s0, s1;
        four_scales(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d, y + b, &s0, &s1);
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), s0, acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), s1, acc1);
    }
    __m256 acc = _mm256_add_ps(_mm512_castps512_ps256(_mm512_add_ps(acc0, acc1)),
                               _mm512_extractf32x8_ps(_mm512_add_ps(acc0, acc1), 1));
    for (; b < nb; b++)
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum_q8_vnni(x[b].qs, y[b].qs)),
                              _mm256_set1_ps(scale_of(x[b].d, y[b].d)), acc);
    return hsum8(acc);
}

VNNI_FN static float dot_q4_q8_vnni(const td_block_q4_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    const __m512i eight = _mm512_set1_epi8(8), z = _mm512_setzero_si512();
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= nb; b += 4) {
        const __m512i x0 = two_nibbles(x[b].qs, x[b + 1].qs), y0 = two_blocks(y[b].qs, y[b + 1].qs);
        const __m512i x1 = two_nibbles(x[b + 2].qs, x[b + 3].qs), y1 = two_blocks(y[b + 2].qs, y[b + 3].qs);
        const __m512i p0 = _mm512_sub_epi32(_mm512_dpbusd_epi32(z, x0, y0), _mm512_dpbusd_epi32(z, eight, y0));
        const __m512i p1 = _mm512_sub_epi32(_mm512_dpbusd_epi32(z, x1, y1), _mm512_dpbusd_epi32(z, eight, y1));
        __m512 s0, s1;
        four_scales(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d, y + b, &s0, &s1);
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), s0, acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), s1, acc1);
    }
    __m256 acc = _mm256_add_ps(_mm512_castps512_ps256(_mm512_add_ps(acc0, acc1)),
                               _mm512_extractf32x8_ps(_mm512_add_ps(acc0, acc1), 1));
    for (; b < nb; b++)
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum_q4_vnni(x[b].qs, y[b].qs)),
                              _mm256_set1_ps(scale_of(x[b].d, y[b].d)), acc);
    return hsum8(acc);
}
#endif

/* ---- selection ---- */

bool td_quant_path_available(int path)
{
    if (path == TD_QUANT_PORTABLE)
        return true;
#ifdef TD_QUANT_X86
    __builtin_cpu_init();
    const bool a2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
    if (path == TD_QUANT_AVX2)
        return a2;
    if (path == TD_QUANT_AVX512VNNI)
        return a2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
#endif
    return false;
}

static atomic_int g_path = -1, g_forced = -1;

int td_quant_path(void)
{
    const int f = atomic_load_explicit(&g_forced, memory_order_relaxed);
    if (f >= 0)
        return f;
    int p = atomic_load_explicit(&g_path, memory_order_relaxed);
    if (p < 0) {
        p = TD_QUANT_PORTABLE;
        for (int q = TD_QUANT_PATHS - 1; q > TD_QUANT_PORTABLE; q--)
            if (td_quant_path_available(q)) {
                p = q;
                break;
            }
        const char *cap = getenv("TD_CPU_CAPABILITY");
        if (cap != NULL && strcmp(cap, "default") == 0)
            p = TD_QUANT_PORTABLE;
        else if (cap != NULL && strcmp(cap, "avx2") == 0 && p > TD_QUANT_AVX2)
            p = TD_QUANT_AVX2;
        atomic_store_explicit(&g_path, p, memory_order_relaxed);
    }
    return p;
}

bool td_quant_force(int path)
{
    if (path < 0) {
        atomic_store(&g_forced, -1);
        return true;
    }
    if (path >= TD_QUANT_PATHS || !td_quant_path_available(path))
        return false;
    atomic_store(&g_forced, path);
    return true;
}

const char *td_quant_path_name(int path)
{
    static const char *const names[TD_QUANT_PATHS] = { "portable", "avx2", "avx512_vnni" };
    return path >= 0 && path < TD_QUANT_PATHS ? names[path] : "?";
}

float td_dot_q8_0_q8_0_unchecked(const td_block_q8_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    switch (td_quant_path()) {
#ifdef TD_QUANT_X86
    case TD_QUANT_AVX2: return dot_q8_q8_avx2(x, y, nb);
    case TD_QUANT_AVX512VNNI: return dot_q8_q8_vnni(x, y, nb);
#endif
    default: return dot_q8_q8_portable(x, y, nb);
    }
}

float td_dot_q4_0_q8_0_unchecked(const td_block_q4_0 *x, const td_block_q8_0 *y, int64_t nb)
{
    switch (td_quant_path()) {
#ifdef TD_QUANT_X86
    case TD_QUANT_AVX2: return dot_q4_q8_avx2(x, y, nb);
    case TD_QUANT_AVX512VNNI: return dot_q4_q8_vnni(x, y, nb);
#endif
    default: return dot_q4_q8_portable(x, y, nb);
    }
}

/* ---- the checked entry points ---- */

static td_status check_len(const char *fn, int64_t n, bool null)
{
    if (n < 0 || n % TD_QK != 0)
        return td_error(TD_E_INVALID, "%s: length %lld is not a multiple of the block size %d", fn, (long long)n,
                        TD_QK);
    if (n > 0 && null)
        return td_error(TD_E_NULL, "%s: NULL buffer", fn);
    return TD_OK;
}

/* Blocks start with a uint16_t: their buffer must be 2-byte aligned. */
static td_status check_blocks(const char *fn, const void *p)
{
    if (((uintptr_t)p & 1u) != 0)
        return td_error(TD_E_INVALID, "%s: blocks at an odd address (they hold 16-bit scales)", fn);
    return TD_OK;
}

static td_status check_finite(const char *fn, const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return td_error(TD_E_INVALID, "%s: value %lld is %s, which a block cannot hold", fn, (long long)i,
                            isnan(x[i]) ? "NaN" : "infinite");
    return TD_OK;
}

td_status td_quantize_row_q8_0(const float *x, void *dst, int64_t n)
{
    td_status st = check_len("quantize q8_0", n, x == NULL || dst == NULL);
    if (st == TD_OK)
        st = check_blocks("quantize q8_0", dst);
    if (st == TD_OK)
        st = check_finite("quantize q8_0", x, n);
    if (st == TD_OK)
        td_quantize_q8_0_unchecked(x, dst, n / TD_QK);
    return st;
}

td_status td_quantize_row_q4_0(const float *x, void *dst, int64_t n)
{
    td_status st = check_len("quantize q4_0", n, x == NULL || dst == NULL);
    if (st == TD_OK)
        st = check_blocks("quantize q4_0", dst);
    if (st == TD_OK)
        st = check_finite("quantize q4_0", x, n);
    if (st == TD_OK)
        td_quantize_q4_0_unchecked(x, dst, n / TD_QK);
    return st;
}

td_status td_dequantize_row_q8_0(const void *src, float *y, int64_t n)
{
    td_status st = check_len("dequantize q8_0", n, src == NULL || y == NULL);
    if (st == TD_OK)
        st = check_blocks("dequantize q8_0", src);
    if (st == TD_OK)
        td_dequantize_q8_0_unchecked(src, y, n / TD_QK);
    return st;
}

td_status td_dequantize_row_q4_0(const void *src, float *y, int64_t n)
{
    td_status st = check_len("dequantize q4_0", n, src == NULL || y == NULL);
    if (st == TD_OK)
        st = check_blocks("dequantize q4_0", src);
    if (st == TD_OK)
        td_dequantize_q4_0_unchecked(src, y, n / TD_QK);
    return st;
}

td_status td_vec_dot_q8_0_q8_0(int64_t n, const void *x, const void *y, float *out)
{
    td_status st = check_len("dot q8_0 x q8_0", n, x == NULL || y == NULL);
    if (st == TD_OK)
        st = check_blocks("dot q8_0 x q8_0", x);
    if (st == TD_OK)
        st = check_blocks("dot q8_0 x q8_0", y);
    if (st == TD_OK && out == NULL)
        st = td_error(TD_E_NULL, "dot q8_0 x q8_0: NULL result");
    if (st == TD_OK)
        *out = td_dot_q8_0_q8_0_unchecked(x, y, n / TD_QK);
    return st;
}

td_status td_vec_dot_q4_0_q8_0(int64_t n, const void *x, const void *y, float *out)
{
    td_status st = check_len("dot q4_0 x q8_0", n, x == NULL || y == NULL);
    if (st == TD_OK)
        st = check_blocks("dot q4_0 x q8_0", x);
    if (st == TD_OK)
        st = check_blocks("dot q4_0 x q8_0", y);
    if (st == TD_OK && out == NULL)
        st = td_error(TD_E_NULL, "dot q4_0 x q8_0: NULL result");
    if (st == TD_OK)
        *out = td_dot_q4_0_q8_0_unchecked(x, y, n / TD_QK);
    return st;
}
