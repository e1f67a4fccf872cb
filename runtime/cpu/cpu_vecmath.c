/* CPU backend: the processor's vector level (shared by the kernels that have vector paths), and
 * the transcendental float kernels (exp, log, sin, cos, tanh, sigmoid, gelu and gelu's gradient) through SLEEF:
 * 16 lanes at a time with AVX-512F, 8 with AVX2 and FMA, libm one element at a time without
 * either (or without SLEEF). The level is checked once, at run time, and TD_CPU_CAPABILITY
 * (default, avx2, avx512) can lower it, as ATEN_CPU_CAPABILITY does for PyTorch: the tests
 * run each path that way. Error bounds per op are in docs/kernels.md: SLEEF's _u10 functions
 * are within 1.0 ULP, tanh uses SLEEF's _u35 tanh (3.5 ULP; its _u10 one costs several
 * times as much), and sigmoid and gelu add a few roundings on top. The work is split in chunks over
 * the OpenMP threads, like the other kernels. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_internal.h"

/* ---- the vector level ---- */

static int detect_simd(void)
{
    int level = TD_CPU_SIMD_NONE;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        level = TD_CPU_SIMD_AVX2;
    /* libgcc checks that the OS saves the AVX-512 state too (XCR0) */
    if (level == TD_CPU_SIMD_AVX2 && __builtin_cpu_supports("avx512f"))
        level = TD_CPU_SIMD_AVX512;
#endif
    const char *cap = getenv("TD_CPU_CAPABILITY");
    if (cap != NULL) {
        if (strcmp(cap, "default") == 0)
            level = TD_CPU_SIMD_NONE;
        else if (strcmp(cap, "avx2") == 0 && level > TD_CPU_SIMD_AVX2)
            level = TD_CPU_SIMD_AVX2;
        /* anything else (avx512, unknown words) keeps what the processor has */
    }
    return level;
}

int td_cpu_simd(void)
{
    static atomic_int have = -1; /* every thread that races here computes the same value */
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h < 0) {
        h = detect_simd();
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h;
}

/* ---- SLEEF kernels ---- */

#if defined(TD_HAVE_SLEEF) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TD_VEC_SLEEF 1
/* immintrin.h first, outside any target pragma: each intrinsic then carries its own target,
 * and inlines into functions of either width. sleef.h declares each width's functions only
 * where the compiler targets it. */
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f")
#include <sleef.h>
#pragma GCC pop_options

/* The switch on fn sits outside the loop: each case is its own loop the compiler inlines. */
#define TD_VSWITCH(LOOP)                             \
    switch (fn) {                                    \
    case TD_CPU_VEXP: LOOP(TD_CPU_VEXP); break;      \
    case TD_CPU_VLOG: LOOP(TD_CPU_VLOG); break;      \
    case TD_CPU_VSIN: LOOP(TD_CPU_VSIN); break;      \
    case TD_CPU_VCOS: LOOP(TD_CPU_VCOS); break;      \
    case TD_CPU_VTANH: LOOP(TD_CPU_VTANH); break;    \
    case TD_CPU_VSIGMOID: LOOP(TD_CPU_VSIGMOID); break; \
    case TD_CPU_VGELU: LOOP(TD_CPU_VGELU); break;    \
    }

#pragma GCC push_options
#pragma GCC target("avx2,fma")

/* x >= 0: 1 / (1 + e^-x); otherwise (x < 0 or NaN) e^x / (1 + e^x), NaN staying NaN; e^-|x|
 * never overflows. One division of the chosen numerator. */
static inline __m256 v8_sigmoid(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    const __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), ax));
    const __m256 num = _mm256_blendv_ps(e, one, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
    return _mm256_div_ps(num, _mm256_add_ps(one, e));
}

static inline __m256 v8_gelu(__m256 x)
{
    const __m256 er = Sleef_erff8_u10avx2(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752440f)));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(_mm256_set1_ps(1.0f), er));
}

static inline __m256 v8_apply(td_cpu_vfn fn, __m256 x)
{
    switch (fn) {
    case TD_CPU_VEXP: return Sleef_expf8_u10avx2(x);
    case TD_CPU_VLOG: return Sleef_logf8_u10avx2(x);
    case TD_CPU_VSIN: return Sleef_sinf8_u10avx2(x);
    case TD_CPU_VCOS: return Sleef_cosf8_u10avx2(x);
    case TD_CPU_VTANH: return Sleef_tanhf8_u35avx2(x);
    case TD_CPU_VSIGMOID: return v8_sigmoid(x);
    case TD_CPU_VGELU: return v8_gelu(x);
    }
    return x;
}

#define TD_V8LOOP(FN)                                                       \
    do {                                                                    \
        int64_t i = 0;                                                      \
        for (; i + 8 <= n; i += 8)                                          \
            _mm256_storeu_ps(y + i, v8_apply((FN), _mm256_loadu_ps(x + i))); \
        if (i < n) {                                                        \
            float tx[8] = { 0 }, ty[8];                                     \
            for (int64_t j = i; j < n; j++)                                 \
                tx[j - i] = x[j];                                           \
            _mm256_storeu_ps(ty, v8_apply((FN), _mm256_loadu_ps(tx)));      \
            for (int64_t j = i; j < n; j++)                                 \
                y[j] = ty[j - i];                                           \
        }                                                                   \
    } while (0)

static void run_avx2(td_cpu_vfn fn, const float *restrict x, float *restrict y, int64_t n)
{
    TD_VSWITCH(TD_V8LOOP)
}

/* gelu's gradient times g: g (Phi(x) + x phi(x)), Phi = (1 + erf(x / sqrt 2)) / 2, phi =
 * e^(-x^2 / 2) / sqrt(2 pi), in the order of PyTorch's kernel. */
static inline __m256 v8_gelu_bwd(__m256 g, __m256 x)
{
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 cdf = _mm256_mul_ps(half, _mm256_add_ps(_mm256_set1_ps(1.0f),
                                     Sleef_erff8_u10avx2(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752440f)))));
    const __m256 e = Sleef_expf8_u10avx2(_mm256_mul_ps(_mm256_set1_ps(-0.5f), _mm256_mul_ps(x, x)));
    const __m256 pdf = _mm256_mul_ps(e, _mm256_set1_ps(0.39894228040143267794f));
    return _mm256_mul_ps(g, _mm256_add_ps(cdf, _mm256_mul_ps(x, pdf)));
}

static void gelu_bwd_avx2(const float *restrict g, const float *restrict x, float *restrict y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, v8_gelu_bwd(_mm256_loadu_ps(g + i), _mm256_loadu_ps(x + i)));
    if (i < n) {
        float tg[8] = { 0 }, tx[8] = { 0 }, ty[8];
        for (int64_t j = i; j < n; j++) {
            tg[j - i] = g[j];
            tx[j - i] = x[j];
        }
        _mm256_storeu_ps(ty, v8_gelu_bwd(_mm256_loadu_ps(tg), _mm256_loadu_ps(tx)));
        for (int64_t j = i; j < n; j++)
            y[j] = ty[j - i];
    }
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f")

static inline __m512 v16_sigmoid(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(x)));
    const __m512 num = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ), e, one);
    return _mm512_div_ps(num, _mm512_add_ps(one, e));
}

static inline __m512 v16_gelu(__m512 x)
{
    const __m512 er = Sleef_erff16_u10avx512f(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752440f)));
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(_mm512_set1_ps(1.0f), er));
}

static inline __m512 v16_apply(td_cpu_vfn fn, __m512 x)
{
    switch (fn) {
    case TD_CPU_VEXP: return Sleef_expf16_u10avx512f(x);
    case TD_CPU_VLOG: return Sleef_logf16_u10avx512f(x);
    case TD_CPU_VSIN: return Sleef_sinf16_u10avx512f(x);
    case TD_CPU_VCOS: return Sleef_cosf16_u10avx512f(x);
    case TD_CPU_VTANH: return Sleef_tanhf16_u35avx512f(x);
    case TD_CPU_VSIGMOID: return v16_sigmoid(x);
    case TD_CPU_VGELU: return v16_gelu(x);
    }
    return x;
}

/* The tail goes through masked loads and stores, which do not touch the lanes left out. */
#define TD_V16LOOP(FN)                                                           \
    do {                                                                         \
        int64_t i = 0;                                                           \
        for (; i + 16 <= n; i += 16)                                             \
            _mm512_storeu_ps(y + i, v16_apply((FN), _mm512_loadu_ps(x + i)));    \
        if (i < n) {                                                             \
            const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);               \
            _mm512_mask_storeu_ps(y + i, m, v16_apply((FN), _mm512_maskz_loadu_ps(m, x + i))); \
        }                                                                        \
    } while (0)

static void run_avx512(td_cpu_vfn fn, const float *restrict x, float *restrict y, int64_t n)
{
    TD_VSWITCH(TD_V16LOOP)
}

static inline __m512 v16_gelu_bwd(__m512 g, __m512 x)
{
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512 cdf = _mm512_mul_ps(half, _mm512_add_ps(_mm512_set1_ps(1.0f),
                                     Sleef_erff16_u10avx512f(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752440f)))));
    const __m512 e = Sleef_expf16_u10avx512f(_mm512_mul_ps(_mm512_set1_ps(-0.5f), _mm512_mul_ps(x, x)));
    const __m512 pdf = _mm512_mul_ps(e, _mm512_set1_ps(0.39894228040143267794f));
    return _mm512_mul_ps(g, _mm512_add_ps(cdf, _mm512_mul_ps(x, pdf)));
}

static void gelu_bwd_avx512(const float *restrict g, const float *restrict x, float *restrict y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, v16_gelu_bwd(_mm512_loadu_ps(g + i), _mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, v16_gelu_bwd(_mm512_maskz_loadu_ps(m, g + i), _mm512_maskz_loadu_ps(m, x + i)));
    }
}
#pragma GCC pop_options
#endif

static float s_sigmoid(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    const float e = expf(x); /* x < 0 or NaN: no overflow */
    return e / (1.0f + e);
}

static float s_apply(td_cpu_vfn fn, float x)
{
    switch (fn) {
    case TD_CPU_VEXP: return expf(x);
    case TD_CPU_VLOG: return logf(x);
    case TD_CPU_VSIN: return sinf(x);
    case TD_CPU_VCOS: return cosf(x);
    case TD_CPU_VTANH: return tanhf(x);
    case TD_CPU_VSIGMOID: return s_sigmoid(x);
    case TD_CPU_VGELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
    }
    return x;
}

static void run_scalar(td_cpu_vfn fn, const float *restrict x, float *restrict y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = s_apply(fn, x[i]);
}

bool td_cpu_vmath_vectorized(void)
{
#ifdef TD_VEC_SLEEF
    return td_cpu_simd() >= TD_CPU_SIMD_AVX2;
#else
    return false;
#endif
}

void td_cpu_vmath(td_cpu_vfn fn, const float *x, float *y, int64_t n)
{
    enum { CHUNK = 16384 }; /* a multiple of 16: only the last chunk has a tail */
    const int64_t chunks = (n + CHUNK - 1) / CHUNK;
    void (*run)(td_cpu_vfn, const float *restrict, float *restrict, int64_t) = run_scalar;
#ifdef TD_VEC_SLEEF
    const int simd = td_cpu_simd();
    if (simd >= TD_CPU_SIMD_AVX512)
        run = run_avx512;
    else if (simd >= TD_CPU_SIMD_AVX2)
        run = run_avx2;
#endif
    TD_CPU_FOR_WORK(c, chunks, n, {
        const int64_t lo = c * CHUNK, len = n - lo < CHUNK ? n - lo : CHUNK;
        run(fn, x + lo, y + lo, len);
    });
}

float td_cpu_gelu_backward1(float g, float x)
{
    const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752440f));
    const float pdf = expf(-0.5f * (x * x)) * 0.39894228040143267794f;
    return g * (cdf + x * pdf);
}

static void gelu_bwd_scalar(const float *restrict g, const float *restrict x, float *restrict y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = td_cpu_gelu_backward1(g[i], x[i]);
}

void td_cpu_vgelu_backward(const float *g, const float *x, float *y, int64_t n)
{
    enum { CHUNK = 16384 };
    const int64_t chunks = (n + CHUNK - 1) / CHUNK;
    void (*run)(const float *restrict, const float *restrict, float *restrict, int64_t) = gelu_bwd_scalar;
#ifdef TD_VEC_SLEEF
    const int simd = td_cpu_simd();
    if (simd >= TD_CPU_SIMD_AVX512)
        run = gelu_bwd_avx512;
    else if (simd >= TD_CPU_SIMD_AVX2)
        run = gelu_bwd_avx2;
#endif
    TD_CPU_FOR_WORK(c, chunks, n, {
        const int64_t lo = c * CHUNK, len = n - lo < CHUNK ? n - lo : CHUNK;
        run(g + lo, x + lo, y + lo, len);
    });
}
