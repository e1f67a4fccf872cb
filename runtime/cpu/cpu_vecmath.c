/* CPU backend: transcendental float kernels (exp, log, sin, cos, tanh, sigmoid, gelu), 8 lanes
 * at a time through SLEEF's AVX2 functions when the library was found and the processor has
 * AVX2 and FMA (checked once, at run time); libm one element at a time otherwise. SLEEF's
 * _u10 functions are documented within 1.0 ULP of the exact result (sigmoid and gelu add
 * one division or multiplication on top); results may differ from libm's in the last bit.
 * The work is split in chunks over the OpenMP threads, like the other kernels. */
#include <math.h>
#include <stdatomic.h>

#include "cpu_internal.h"

#if defined(TD_HAVE_SLEEF) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TD_VEC_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include <immintrin.h>
#include <sleef.h>

static __m256 v_sigmoid(__m256 x)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    const __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), ax)); /* e^-|x|: no overflow */
    const __m256 d = _mm256_add_ps(one, e);
    const __m256 pos = _mm256_div_ps(one, d), neg = _mm256_div_ps(e, d);
    /* x >= 0: 1 / (1 + e^-x); otherwise (x < 0 or NaN) e^x / (1 + e^x), NaN staying NaN */
    return _mm256_blendv_ps(neg, pos, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}

static __m256 v_gelu(__m256 x)
{
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 er = Sleef_erff8_u10avx2(_mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752440f)));
    return _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(_mm256_set1_ps(1.0f), er));
}

static __m256 v_apply(td_cpu_vfn fn, __m256 x)
{
    switch (fn) {
    case TD_CPU_VEXP: return Sleef_expf8_u10avx2(x);
    case TD_CPU_VLOG: return Sleef_logf8_u10avx2(x);
    case TD_CPU_VSIN: return Sleef_sinf8_u10avx2(x);
    case TD_CPU_VCOS: return Sleef_cosf8_u10avx2(x);
    case TD_CPU_VTANH: return Sleef_tanhf8_u10avx2(x);
    case TD_CPU_VSIGMOID: return v_sigmoid(x);
    case TD_CPU_VGELU: return v_gelu(x);
    }
    return x;
}

/* The whole switch sits outside the loop: each case is its own loop the compiler inlines. */
#define TD_VLOOP(FN)                                                      \
    do {                                                                  \
        int64_t i = 0;                                                    \
        for (; i + 8 <= n; i += 8)                                        \
            _mm256_storeu_ps(y + i, v_apply((FN), _mm256_loadu_ps(x + i))); \
        if (i < n) {                                                      \
            float tx[8] = { 0 }, ty[8];                                   \
            for (int64_t j = i; j < n; j++)                               \
                tx[j - i] = x[j];                                         \
            _mm256_storeu_ps(ty, v_apply((FN), _mm256_loadu_ps(tx)));     \
            for (int64_t j = i; j < n; j++)                               \
                y[j] = ty[j - i];                                         \
        }                                                                 \
    } while (0)

static void run_avx2(td_cpu_vfn fn, const float *restrict x, float *restrict y, int64_t n)
{
    switch (fn) {
    case TD_CPU_VEXP: TD_VLOOP(TD_CPU_VEXP); break;
    case TD_CPU_VLOG: TD_VLOOP(TD_CPU_VLOG); break;
    case TD_CPU_VSIN: TD_VLOOP(TD_CPU_VSIN); break;
    case TD_CPU_VCOS: TD_VLOOP(TD_CPU_VCOS); break;
    case TD_CPU_VTANH: TD_VLOOP(TD_CPU_VTANH); break;
    case TD_CPU_VSIGMOID: TD_VLOOP(TD_CPU_VSIGMOID); break;
    case TD_CPU_VGELU: TD_VLOOP(TD_CPU_VGELU); break;
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
#ifdef TD_VEC_AVX2
    static atomic_int have = -1; /* every thread that races here computes the same value */
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h < 0) {
        h = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h != 0;
#else
    return false;
#endif
}

void td_cpu_vmath(td_cpu_vfn fn, const float *x, float *y, int64_t n)
{
    enum { CHUNK = 16384 }; /* a multiple of 8: only the last chunk has a tail */
    const int64_t chunks = (n + CHUNK - 1) / CHUNK;
    void (*run)(td_cpu_vfn, const float *restrict, float *restrict, int64_t) = run_scalar;
#ifdef TD_VEC_AVX2
    if (td_cpu_vmath_vectorized())
        run = run_avx2;
#endif
    TD_CPU_FOR_WORK(c, chunks, n, {
        const int64_t lo = c * CHUNK, len = n - lo < CHUNK ? n - lo : CHUNK;
        run(fn, x + lo, y + lo, len);
    });
}
