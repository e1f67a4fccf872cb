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

/* gelu and its gradient need Phi(x), the normal CDF, and e^(-x^2 / 2). SLEEF's 1-ULP erf
 * carries its own double-float arithmetic and cost several times an exp, so the vector
 * paths compute Phi from two polynomials fitted for this file (weighted least squares on
 * Chebyshev nodes against erfc in double; docs/kernels.md has the errors measured):
 *   |x| <= GELU_B:  Phi(x) = 1/2 + x Q(x^2), Q of degree 5 (relative error of Q 9e-9);
 *   |x| > GELU_B:   Phi(-|x|) = e^(-x^2/2) S(t), t = 1 / (1 + GELU_C |x|), S of degree 9
 *                   (relative error 3e-9; Phi(|x|) = 1 - that), so Phi stays accurate in
 *                   relative terms far into the lower tail, where 1 + erf cancelled.
 * e^(-x^2/2) takes x^2 as hi + lo (lo by an fma, exact) and corrects exp(-hi/2) by
 * (1 - lo/2); |x| is capped at 20 there (exp is 0 well before), so inf gives 0, not
 * 0 * inf. The same e is the density's, so the gradient costs one exp. NaN comes through
 * the final multiplications by x. */
#define GELU_B 1.2374368670764582f /* 0.875 sqrt 2 */
#define GELU_C 0.35355339059327379f /* 1 / (2 sqrt 2) */
#define GELU_Q0 3.989422917e-01f
#define GELU_Q1 -6.649022549e-02f
#define GELU_Q2 9.972376749e-03f
#define GELU_Q3 -1.184027991e-03f
#define GELU_Q4 1.111974780e-04f
#define GELU_Q5 -6.853911145e-06f
#define GELU_S0 6.237941648e-07f
#define GELU_S1 1.410247087e-01f
#define GELU_S2 1.414026767e-01f
#define GELU_S3 1.202647090e-01f
#define GELU_S4 1.056401953e-01f
#define GELU_S5 -2.115699649e-02f
#define GELU_S6 1.453170180e-01f
#define GELU_S7 -2.420297414e-01f
#define GELU_S8 1.361870766e-01f
#define GELU_S9 -2.660265565e-02f

/* The polynomial steps of both widths: r = r * u + c, for the coefficients high to low. */
#define GELU_Q_POLY(FMA, SET1, u)                                                              \
    FMA(FMA(FMA(FMA(FMA(SET1(GELU_Q5), u, SET1(GELU_Q4)), u, SET1(GELU_Q3)), u, SET1(GELU_Q2)), \
            u, SET1(GELU_Q1)), u, SET1(GELU_Q0))
#define GELU_S_POLY(FMA, SET1, t)                                                              \
    FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(FMA(SET1(GELU_S9), t, SET1(GELU_S8)), t, SET1(GELU_S7)), t, \
        SET1(GELU_S6)), t, SET1(GELU_S5)), t, SET1(GELU_S4)), t, SET1(GELU_S3)), t, SET1(GELU_S2)), \
        t, SET1(GELU_S1)), t, SET1(GELU_S0))

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

/* Phi(x) and e^(-x^2 / 2) (into *e), as described above GELU_B. */
static inline __m256 v8_phi(__m256 x, __m256 *e)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 ax0 = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    const __m256 ax = _mm256_min_ps(ax0, _mm256_set1_ps(20.0f)); /* NaN gives 20 */
    const __m256 central = _mm256_fmadd_ps(x, GELU_Q_POLY(_mm256_fmadd_ps, _mm256_set1_ps, _mm256_mul_ps(x, x)),
                                           _mm256_set1_ps(0.5f));
    const __m256 hi = _mm256_mul_ps(ax, ax), lo = _mm256_fmsub_ps(ax, ax, hi);
    const __m256 e0 = Sleef_expf8_u10avx2(_mm256_mul_ps(hi, _mm256_set1_ps(-0.5f)));
    *e = _mm256_fnmadd_ps(e0, _mm256_mul_ps(lo, _mm256_set1_ps(0.5f)), e0);
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(GELU_C), ax, one));
    const __m256 lower = _mm256_mul_ps(*e, GELU_S_POLY(_mm256_fmadd_ps, _mm256_set1_ps, t));
    const __m256 tail = _mm256_blendv_ps(lower, _mm256_sub_ps(one, lower),
                                         _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ));
    return _mm256_blendv_ps(tail, central, _mm256_cmp_ps(ax0, _mm256_set1_ps(GELU_B), _CMP_LE_OQ));
}

static inline __m256 v8_gelu(__m256 x)
{
    __m256 e;
    return _mm256_mul_ps(x, v8_phi(x, &e));
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

/* gelu's gradient times g: g (Phi(x) + x phi(x)), Phi the normal CDF (v8_phi), phi =
 * e^(-x^2 / 2) / sqrt(2 pi), in the order of PyTorch's kernel. */
static inline __m256 v8_gelu_bwd(__m256 g, __m256 x)
{
    __m256 e;
    const __m256 cdf = v8_phi(x, &e);
    const __m256 pdf = _mm256_mul_ps(e, _mm256_set1_ps(0.39894228040143267794f));
    return _mm256_mul_ps(g, _mm256_fmadd_ps(x, pdf, cdf));
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

static inline __m512 v16_phi(__m512 x, __m512 *e)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 ax0 = _mm512_abs_ps(x);
    const __m512 ax = _mm512_min_ps(ax0, _mm512_set1_ps(20.0f)); /* NaN gives 20 */
    const __m512 central = _mm512_fmadd_ps(x, GELU_Q_POLY(_mm512_fmadd_ps, _mm512_set1_ps, _mm512_mul_ps(x, x)),
                                           _mm512_set1_ps(0.5f));
    const __m512 hi = _mm512_mul_ps(ax, ax), lo = _mm512_fmsub_ps(ax, ax, hi);
    const __m512 e0 = Sleef_expf16_u10avx512f(_mm512_mul_ps(hi, _mm512_set1_ps(-0.5f)));
    *e = _mm512_fnmadd_ps(e0, _mm512_mul_ps(lo, _mm512_set1_ps(0.5f)), e0);
    const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(GELU_C), ax, one));
    const __m512 lower = _mm512_mul_ps(*e, GELU_S_POLY(_mm512_fmadd_ps, _mm512_set1_ps, t));
    const __m512 tail = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), lower,
                                             _mm512_sub_ps(one, lower));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax0, _mm512_set1_ps(GELU_B), _CMP_LE_OQ), tail, central);
}

static inline __m512 v16_gelu(__m512 x)
{
    __m512 e;
    return _mm512_mul_ps(x, v16_phi(x, &e));
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
    __m512 e;
    const __m512 cdf = v16_phi(x, &e);
    const __m512 pdf = _mm512_mul_ps(e, _mm512_set1_ps(0.39894228040143267794f));
    return _mm512_mul_ps(g, _mm512_fmadd_ps(x, pdf, cdf));
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

/* Phi(x) and e^(-x^2 / 2) one element at a time, the vector paths' formulas (above GELU_B),
 * so every path keeps the same bounds. */
static float s_phi(float x, float *e)
{
    const float ax0 = fabsf(x), ax = ax0 < 20.0f ? ax0 : 20.0f; /* NaN gives 20, as the vectors */
    const float u = x * x;
    const float q = fmaf(fmaf(fmaf(fmaf(fmaf(GELU_Q5, u, GELU_Q4), u, GELU_Q3), u, GELU_Q2), u, GELU_Q1), u, GELU_Q0);
    const float central = fmaf(x, q, 0.5f);
    const float hi = ax * ax, lo = fmaf(ax, ax, -hi);
    const float e0 = expf(-0.5f * hi);
    *e = fmaf(-e0, 0.5f * lo, e0);
    const float t = 1.0f / fmaf(GELU_C, ax, 1.0f);
    float sp = GELU_S9;
    static const float sc[] = { GELU_S8, GELU_S7, GELU_S6, GELU_S5, GELU_S4, GELU_S3, GELU_S2, GELU_S1, GELU_S0 };
    for (int k = 0; k < 9; k++)
        sp = fmaf(sp, t, sc[k]);
    const float lower = *e * sp;
    if (ax0 <= GELU_B)
        return central;
    return x > 0.0f ? 1.0f - lower : lower;
}

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
    case TD_CPU_VGELU: {
        float e;
        return x * s_phi(x, &e);
    }
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
    float e;
    const float cdf = s_phi(x, &e);
    return g * fmaf(x, e * 0.39894228040143267794f, cdf);
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
