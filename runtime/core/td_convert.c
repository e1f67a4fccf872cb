/* Row conversions f16 / bf16 <-> f32: a portable loop over td_half.h and vector paths for
 * x86-64 compiled with target attributes and picked at run time (td_convert.h). Each vector
 * path gives the scalar functions' bits for every input; tests/runtime/internal/test_convert.c checks
 * all 65,536 16-bit patterns, the f32 edges and the adds on every path the machine has. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "td_convert.h"
#include "td_half.h"

typedef void (*row_fn)(const void *src, void *dst, size_t n);

typedef void (*add_fn)(const void *a, const void *b, void *c, size_t n);

typedef struct convert_path {
    row_fn f16_to_f32, f32_to_f16, bf16_to_f32, f32_to_bf16;
    add_fn f16_add, bf16_add;
} convert_path;

/* ---- portable ---- */

static void f16_to_f32_portable(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2 * i, 2);
        const float f = td_f16_to_f32(h);
        memcpy(d + 4 * i, &f, 4);
    }
}

static void f32_to_f16_portable(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, s + 4 * i, 4);
        const uint16_t h = td_f32_to_f16(f);
        memcpy(d + 2 * i, &h, 2);
    }
}

static void bf16_to_f32_portable(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, s + 2 * i, 2);
        const float f = td_bf16_to_f32(h);
        memcpy(d + 4 * i, &f, 4);
    }
}

static void f32_to_bf16_portable(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, s + 4 * i, 4);
        const uint16_t h = td_f32_to_bf16(f);
        memcpy(d + 2 * i, &h, 2);
    }
}

static void f16_add_portable(const void *a, const void *b, void *c, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char *z = c;
    for (size_t i = 0; i < n; i++) {
        uint16_t p, q;
        memcpy(&p, x + 2 * i, 2);
        memcpy(&q, y + 2 * i, 2);
        const uint16_t r = td_f32_to_f16(td_f16_to_f32(p) + td_f16_to_f32(q));
        memcpy(z + 2 * i, &r, 2);
    }
}

static void bf16_add_portable(const void *a, const void *b, void *c, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char *z = c;
    for (size_t i = 0; i < n; i++) {
        uint16_t p, q;
        memcpy(&p, x + 2 * i, 2);
        memcpy(&q, y + 2 * i, 2);
        const uint16_t r = td_f32_to_bf16(td_bf16_to_f32(p) + td_bf16_to_f32(q));
        memcpy(z + 2 * i, &r, 2);
    }
}

static const convert_path portable = { f16_to_f32_portable, f32_to_f16_portable, bf16_to_f32_portable,
                                       f32_to_bf16_portable, f16_add_portable,    bf16_add_portable };

#if defined(__x86_64__) && defined(__GNUC__)
#define TD_CONVERT_X86 1
#include <cpuid.h>
#include <immintrin.h>

#define AVX2_FN __attribute__((target("avx2,f16c")))
#define AVX512_FN __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl")))
#define AVX512BF16_FN __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512bf16")))

/* F16C from cpuid leaf 1 (ECX bit 29): clang's __builtin_cpu_supports has no "f16c". */
static bool has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
}

/* Each path is built from loads of 16-bit values into f32 registers and stores of f32
 * registers as 16-bit values, with td_half.h's bits; the row conversions and the adds
 * (convert, add in f32, round once, all in registers) use the same ones. */

/* ---- AVX2 + F16C, 8 lanes; tails by the portable loops ---- */

/* vcvtph2ps gives a signalling NaN back quiet; td_f16_to_f32 keeps the payload bit for bit,
 * so NaN lanes (rare: checked on the 16-bit values first) are rebuilt with integers: sign,
 * all-ones exponent, payload << 13. */
AVX2_FN static inline __m256 f16x8_nan_fix(__m256 f, __m128i h)
{
    const __m256i w = _mm256_cvtepu16_epi32(h);
    const __m256i mag = _mm256_and_si256(w, _mm256_set1_epi32(0x7fff));
    const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7c00));
    const __m256i bits = _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16),
                                         _mm256_add_epi32(_mm256_slli_epi32(mag, 13), _mm256_set1_epi32(0x70000000)));
    return _mm256_blendv_ps(f, _mm256_castsi256_ps(bits), _mm256_castsi256_ps(nan));
}

AVX2_FN static inline __m256 ld8_f16(const unsigned char *p)
{
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m256 f = _mm256_cvtph_ps(h);
    /* any lane with |h| > 0x7c00 (a signed 16-bit compare: |h| is below 0x8000) */
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
    return _mm_movemask_epi8(nan) == 0 ? f : f16x8_nan_fix(f, h);
}

AVX2_FN static inline void st8_f16(unsigned char *p, __m256 v)
{
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

AVX2_FN static inline __m256 ld8_bf16(const unsigned char *p)
{
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* td_f32_to_bf16 on 8 lanes, as 32-bit words (the result in the low half): round the low 16
 * bits to nearest even; NaN lanes keep their top half with the quiet bit set. */
AVX2_FN static inline __m256i bf16x8_rne(__m256i x)
{
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i mag = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
    const __m256i q = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(r, q, nan);
}

/* 16 values from two registers: packus works per 128-bit lane (a0-3 b0-3 a4-7 b4-7), then
 * the 64-bit quarters are put in order */
AVX2_FN static inline void st2x8_bf16(unsigned char *p, __m256 a, __m256 b)
{
    const __m256i ra = bf16x8_rne(_mm256_castps_si256(a)), rb = bf16x8_rne(_mm256_castps_si256(b));
    _mm256_storeu_si256((__m256i *)(void *)p, _mm256_permute4x64_epi64(_mm256_packus_epi32(ra, rb), 0xd8));
}

AVX2_FN static void f16_to_f32_avx2(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps((float *)(void *)(d + 4 * i), ld8_f16(s + 2 * i));
    f16_to_f32_portable(s + 2 * i, d + 4 * i, n - i);
}

AVX2_FN static void f32_to_f16_avx2(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        st8_f16(d + 2 * i, _mm256_loadu_ps((const float *)(const void *)(s + 4 * i)));
    f32_to_f16_portable(s + 4 * i, d + 2 * i, n - i);
}

AVX2_FN static void bf16_to_f32_avx2(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps((float *)(void *)(d + 4 * i), ld8_bf16(s + 2 * i));
    bf16_to_f32_portable(s + 2 * i, d + 4 * i, n - i);
}

AVX2_FN static void f32_to_bf16_avx2(const void *src, void *dst, size_t n)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        st2x8_bf16(d + 2 * i, _mm256_loadu_ps((const float *)(const void *)(s + 4 * i)),
                  _mm256_loadu_ps((const float *)(const void *)(s + 4 * i + 32)));
    f32_to_bf16_portable(s + 4 * i, d + 2 * i, n - i);
}

AVX2_FN static void f16_add_avx2(const void *a, const void *b, void *c, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char *z = c;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        st8_f16(z + 2 * i, _mm256_add_ps(ld8_f16(x + 2 * i), ld8_f16(y + 2 * i)));
    f16_add_portable(x + 2 * i, y + 2 * i, z + 2 * i, n - i);
}

AVX2_FN static void bf16_add_avx2(const void *a, const void *b, void *c, size_t n)
{
    const unsigned char *x = a, *y = b;
    unsigned char *z = c;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        st2x8_bf16(z + 2 * i, _mm256_add_ps(ld8_bf16(x + 2 * i), ld8_bf16(y + 2 * i)),
                  _mm256_add_ps(ld8_bf16(x + 2 * i + 16), ld8_bf16(y + 2 * i + 16)));
    bf16_add_portable(x + 2 * i, y + 2 * i, z + 2 * i, n - i);
}

static const convert_path avx2 = { f16_to_f32_avx2, f32_to_f16_avx2, bf16_to_f32_avx2,
                                   f32_to_bf16_avx2, f16_add_avx2,    bf16_add_avx2 };

/* ---- AVX-512, 16 lanes: whole vectors, then one masked tail ---- */

static inline __mmask16 tail_mask(size_t left) /* left < 16 */
{
    const unsigned m = (1u << left) - 1u;
    return (__mmask16)m;
}

AVX512_FN static inline __m512 f16x16_to_f32(__m256i h)
{
    const __m512 f = _mm512_cvtph_ps(h);
    const __mmask16 nan = _mm256_cmpgt_epi16_mask(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                                  _mm256_set1_epi16(0x7c00));
    if (nan == 0) /* NaN lanes are rare: rebuilt as in f16x8_nan_fix */
        return f;
    const __m512i w = _mm512_cvtepu16_epi32(h);
    const __m512i mag = _mm512_and_si512(w, _mm512_set1_epi32(0x7fff));
    const __m512i bits = _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16),
                                         _mm512_add_epi32(_mm512_slli_epi32(mag, 13), _mm512_set1_epi32(0x70000000)));
    return _mm512_mask_blend_ps(nan, f, _mm512_castsi512_ps(bits));
}

AVX512_FN static inline __m512 ld16_f16(const unsigned char *p, __mmask16 m)
{
    return f16x16_to_f32(_mm256_maskz_loadu_epi16(m, p));
}

AVX512_FN static inline __m512 ld16_bf16(const unsigned char *p, __mmask16 m)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

/* Without optimization GCC's _mm512_cvtps_ph is a macro that passes -1 as an unsigned mask. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-conversion"
AVX512_FN static inline void st16_f16(unsigned char *p, __mmask16 m, __m512 v)
{
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
#pragma GCC diagnostic pop

AVX512_FN static inline __m512i bf16x16_rne(__m512i x)
{
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __m512i mag = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7f800000));
    const __m512i q = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
    return _mm512_mask_blend_epi32(nan, r, q);
}

AVX512_FN static inline void st16_bf16(unsigned char *p, __mmask16 m, __m512 v)
{
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtepi32_epi16(bf16x16_rne(_mm512_castps_si512(v))));
}

/* vcvtneps2bf16 rounds to nearest even and quiets NaNs as td_f32_to_bf16 does, but reads
 * subnormal inputs as signed zeros (td_f32_to_bf16 rounds them: the largest ones round up to
 * the smallest normal bf16); those lanes, rare, are redone with the integer rounding. */
AVX512BF16_FN static inline void st16_bf16_ne(unsigned char *p, __mmask16 m, __m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    __m256i r = (__m256i)_mm512_cvtneps_pbh(v);
    const __mmask16 sub = _mm512_mask_cmpeq_epi32_mask(_mm512_test_epi32_mask(x, _mm512_set1_epi32(0x7fffff)),
                                                        _mm512_and_si512(x, _mm512_set1_epi32(0x7f800000)),
                                                        _mm512_setzero_si512());
    if (sub != 0)
        r = _mm256_mask_blend_epi16(sub, r, _mm512_cvtepi32_epi16(bf16x16_rne(x)));
    _mm256_mask_storeu_epi16(p, m, r);
}

/* The loops: whole vectors of 16 with an all-ones mask, then the tail under its mask. */
#define ROW16(ATTR, NAME, IN, OUT, BODY)                                                 \
    ATTR static void NAME(const void *src, void *dst, size_t n)                          \
    {                                                                                    \
        const unsigned char *s = src;                                                    \
        unsigned char *d = dst;                                                          \
        size_t i = 0;                                                                    \
        for (; i + 16 <= n; i += 16) {                                                   \
            const __mmask16 m = (__mmask16)0xffff;                                       \
            const unsigned char *sp = s + (IN) * i;                                      \
            unsigned char *dp = d + (OUT) * i;                                           \
            BODY;                                                                        \
        }                                                                                \
        if (i < n) {                                                                     \
            const __mmask16 m = tail_mask(n - i);                                        \
            const unsigned char *sp = s + (IN) * i;                                      \
            unsigned char *dp = d + (OUT) * i;                                           \
            BODY;                                                                        \
        }                                                                                \
    }

ROW16(AVX512_FN, f16_to_f32_avx512, 2, 4, _mm512_mask_storeu_ps(dp, m, ld16_f16(sp, m)))
ROW16(AVX512_FN, f32_to_f16_avx512, 4, 2, st16_f16(dp, m, _mm512_maskz_loadu_ps(m, sp)))
ROW16(AVX512_FN, bf16_to_f32_avx512, 2, 4, _mm512_mask_storeu_ps(dp, m, ld16_bf16(sp, m)))
ROW16(AVX512_FN, f32_to_bf16_avx512, 4, 2, st16_bf16(dp, m, _mm512_maskz_loadu_ps(m, sp)))
ROW16(AVX512BF16_FN, f32_to_bf16_avx512bf16, 4, 2, st16_bf16_ne(dp, m, _mm512_maskz_loadu_ps(m, sp)))

#define ADD16(ATTR, NAME, LD, ST)                                                        \
    ATTR static void NAME(const void *a, const void *b, void *c, size_t n)               \
    {                                                                                    \
        const unsigned char *x = a, *y = b;                                              \
        unsigned char *z = c;                                                            \
        size_t i = 0;                                                                    \
        for (; i + 16 <= n; i += 16) {                                                   \
            const __mmask16 m = (__mmask16)0xffff;                                       \
            ST(z + 2 * i, m, _mm512_add_ps(LD(x + 2 * i, m), LD(y + 2 * i, m)));         \
        }                                                                                \
        if (i < n) {                                                                     \
            const __mmask16 m = tail_mask(n - i);                                        \
            ST(z + 2 * i, m, _mm512_add_ps(LD(x + 2 * i, m), LD(y + 2 * i, m)));         \
        }                                                                                \
    }

ADD16(AVX512_FN, f16_add_avx512, ld16_f16, st16_f16)
ADD16(AVX512_FN, bf16_add_avx512, ld16_bf16, st16_bf16)
ADD16(AVX512BF16_FN, bf16_add_avx512bf16, ld16_bf16, st16_bf16_ne)

static const convert_path avx512 = { f16_to_f32_avx512, f32_to_f16_avx512, bf16_to_f32_avx512,
                                     f32_to_bf16_avx512, f16_add_avx512,    bf16_add_avx512 };
static const convert_path avx512bf16 = { f16_to_f32_avx512,      f32_to_f16_avx512, bf16_to_f32_avx512,
                                         f32_to_bf16_avx512bf16, f16_add_avx512,    bf16_add_avx512bf16 };
#endif

/* ---- selection ---- */

static const convert_path *path_table(int path)
{
    switch (path) {
#ifdef TD_CONVERT_X86
    case TD_CONVERT_AVX2: return &avx2;
    case TD_CONVERT_AVX512: return &avx512;
    case TD_CONVERT_AVX512BF16: return &avx512bf16;
#endif
    default: return &portable;
    }
}

bool td_convert_path_available(int path)
{
    if (path == TD_CONVERT_PORTABLE)
        return true;
#ifdef TD_CONVERT_X86
    __builtin_cpu_init();
    const bool a2 = __builtin_cpu_supports("avx2") && has_f16c();
    /* libgcc checks that the OS saves the AVX-512 state too (XCR0) */
    const bool a512 = a2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
    switch (path) {
    case TD_CONVERT_AVX2: return a2;
    case TD_CONVERT_AVX512: return a512;
    case TD_CONVERT_AVX512BF16: return a512 && __builtin_cpu_supports("avx512bf16");
    default: return false;
    }
#else
    return false;
#endif
}

static int best_path(void)
{
    int best = TD_CONVERT_PORTABLE;
    for (int p = TD_CONVERT_PATHS - 1; p > TD_CONVERT_PORTABLE; p--)
        if (td_convert_path_available(p)) {
            best = p;
            break;
        }
    const char *cap = getenv("TD_CPU_CAPABILITY");
    if (cap != NULL && strcmp(cap, "default") == 0)
        best = TD_CONVERT_PORTABLE;
    else if (cap != NULL && strcmp(cap, "avx2") == 0 && best > TD_CONVERT_AVX2)
        best = TD_CONVERT_AVX2;
    return best;
}

static atomic_int g_path = -1;   /* the automatic choice, once known */
static atomic_int g_forced = -1; /* td_convert_force's, or -1 */

int td_convert_path(void)
{
    int f = atomic_load_explicit(&g_forced, memory_order_relaxed);
    if (f >= 0)
        return f;
    int p = atomic_load_explicit(&g_path, memory_order_relaxed);
    if (p < 0) { /* every thread that races here computes the same value */
        p = best_path();
        atomic_store_explicit(&g_path, p, memory_order_relaxed);
    }
    return p;
}

bool td_convert_force(int path)
{
    if (path < 0) {
        atomic_store(&g_forced, -1);
        return true;
    }
    if (path >= TD_CONVERT_PATHS || !td_convert_path_available(path))
        return false;
    atomic_store(&g_forced, path);
    return true;
}

const char *td_convert_path_name(int path)
{
    static const char *const names[TD_CONVERT_PATHS] = { "portable", "avx2+f16c", "avx512", "avx512_bf16" };
    return path >= 0 && path < TD_CONVERT_PATHS ? names[path] : "?";
}

void td_f16_to_f32_row(const void *src, void *dst, size_t n)
{
    path_table(td_convert_path())->f16_to_f32(src, dst, n);
}

void td_f32_to_f16_row(const void *src, void *dst, size_t n)
{
    path_table(td_convert_path())->f32_to_f16(src, dst, n);
}

void td_bf16_to_f32_row(const void *src, void *dst, size_t n)
{
    path_table(td_convert_path())->bf16_to_f32(src, dst, n);
}

void td_f32_to_bf16_row(const void *src, void *dst, size_t n)
{
    path_table(td_convert_path())->f32_to_bf16(src, dst, n);
}

void td_f16_add_row(const void *a, const void *b, void *c, size_t n)
{
    path_table(td_convert_path())->f16_add(a, b, c, n);
}

void td_bf16_add_row(const void *a, const void *b, void *c, size_t n)
{
    path_table(td_convert_path())->bf16_add(a, b, c, n);
}
