/* CPU backend: reductions (whole-tensor sums and per-dim sum/mean/max/min/argmax/argmin), and
 * the whole-range sum and extreme that cpu_reduce_sort.c's mean, max and min share.
 *
 * Sums accumulate in double (four or more accumulators: each covers at most a chunk of the
 * input, so the result is far more accurate than a float pairwise sum). Work is split in
 * pieces that depend only on the shape, never on the thread count, and the pieces' results
 * are combined in order: the same input gives the same result on any number of threads.
 * With AVX2 the inner loops read 8 or 16 floats at a time (td_cpu_simd()). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_float_ew.h"
#include "td_convert.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define TD_RED_AVX2 1
#include <immintrin.h>
#define AVX2_FN __attribute__((target("avx2")))
#endif

/* Whole-range reductions run in at most this many fixed chunks of at least CHUNK_MIN. */
#define MAX_CHUNKS 256
#define CHUNK_MIN 4096

static int64_t chunk_len(int64_t n)
{
    const int64_t chunk = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
    return chunk < CHUNK_MIN ? CHUNK_MIN : chunk;
}

/* ---- contiguous ranges: sum, extreme, first index of the extreme ---- */

static double sum_scalar(const float *p, int64_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)p[i];
        s1 += (double)p[i + 1];
        s2 += (double)p[i + 2];
        s3 += (double)p[i + 3];
    }
    for (; i < n; i++)
        s0 += (double)p[i];
    return (s0 + s1) + (s2 + s3);
}

/* v replaces best: NaN counts as the extreme and sticks (like PyTorch); ties keep the first. */
#define BEATS_MAX(v, best) ((best) == (best) && ((v) > (best) || (v) != (v)))
#define BEATS_MIN(v, best) ((best) == (best) && ((v) < (best) || (v) != (v)))

/* The extreme of n >= 1 values and the index of its first occurrence; NaN wins (the first). */
static float extreme_scalar(const float *p, int64_t n, td_cpu_ext kind, int64_t *at)
{
    float best = kind == TD_CPU_EXT_MAX_ABS ? fabsf(p[0]) : p[0];
    int64_t bi = 0;
    for (int64_t i = 1; i < n && best == best; i++) {
        const float v = kind == TD_CPU_EXT_MAX_ABS ? fabsf(p[i]) : p[i];
        if (kind == TD_CPU_EXT_MIN ? BEATS_MIN(v, best) : BEATS_MAX(v, best)) {
            best = v;
            bi = i;
        }
    }
    if (at != NULL)
        *at = bi;
    return best;
}

#ifdef TD_RED_AVX2
AVX2_FN static double sum_avx2(const float *p, int64_t n)
{
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 v0 = _mm256_loadu_ps(p + i), v1 = _mm256_loadu_ps(p + i + 8);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v0)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v0, 1)));
        a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm256_castps256_ps128(v1)));
        a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm256_extractf128_ps(v1, 1)));
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    double s = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; i++)
        s += (double)p[i];
    return s;
}

/* The extreme's value; NaN is looked for apart (the max/min instructions drop it) and sends
 * the range to the scalar loop, which finds the first one. */
AVX2_FN static float extreme_avx2(const float *p, int64_t n, td_cpu_ext kind)
{
    if (n < 32)
        return extreme_scalar(p, n, kind, NULL);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 b0 = _mm256_loadu_ps(p), b1 = _mm256_loadu_ps(p + 8);
    __m256 nan = _mm256_cmp_ps(b0, b1, _CMP_UNORD_Q);
    if (kind == TD_CPU_EXT_MAX_ABS) {
        b0 = _mm256_andnot_ps(sign, b0);
        b1 = _mm256_andnot_ps(sign, b1);
    }
    int64_t i = 16;
    for (; i + 16 <= n; i += 16) {
        __m256 v0 = _mm256_loadu_ps(p + i), v1 = _mm256_loadu_ps(p + i + 8);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));
        if (kind == TD_CPU_EXT_MIN) {
            b0 = _mm256_min_ps(b0, v0);
            b1 = _mm256_min_ps(b1, v1);
        } else {
            if (kind == TD_CPU_EXT_MAX_ABS) {
                v0 = _mm256_andnot_ps(sign, v0);
                v1 = _mm256_andnot_ps(sign, v1);
            }
            b0 = _mm256_max_ps(b0, v0);
            b1 = _mm256_max_ps(b1, v1);
        }
    }
    if (_mm256_movemask_ps(nan) != 0)
        return extreme_scalar(p, n, kind, NULL);
    const __m256 b = kind == TD_CPU_EXT_MIN ? _mm256_min_ps(b0, b1) : _mm256_max_ps(b0, b1);
    float lanes[8];
    _mm256_storeu_ps(lanes, b);
    float best = extreme_scalar(lanes, 8, kind == TD_CPU_EXT_MIN ? TD_CPU_EXT_MIN : TD_CPU_EXT_MAX, NULL);
    if (i < n) {
        const float tail = extreme_scalar(p + i, n - i, kind, NULL);
        if (kind == TD_CPU_EXT_MIN ? BEATS_MIN(tail, best) : BEATS_MAX(tail, best))
            best = tail;
    }
    return best;
}

/* The first i with p[i] == v (v not NaN, and present); kind MAX_ABS compares |p[i]|. */
AVX2_FN static int64_t find_avx2(const float *p, int64_t n, float v, td_cpu_ext kind)
{
    const __m256 sign = _mm256_set1_ps(-0.0f), vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(p + i);
        if (kind == TD_CPU_EXT_MAX_ABS)
            x = _mm256_andnot_ps(sign, x);
        const int m = _mm256_movemask_ps(_mm256_cmp_ps(x, vv, _CMP_EQ_OQ));
        if (m != 0)
            return i + __builtin_ctz((unsigned)m);
    }
    for (; i < n; i++)
        if ((kind == TD_CPU_EXT_MAX_ABS ? fabsf(p[i]) : p[i]) == v)
            return i;
    return 0; /* not reached: v is one of the values */
}
#endif

static double sum_range(const float *p, int64_t n)
{
#ifdef TD_RED_AVX2
    if (td_cpu_simd() >= TD_CPU_SIMD_AVX2)
        return sum_avx2(p, n);
#endif
    return sum_scalar(p, n);
}

/* The extreme of n >= 1 values, and with at != NULL the index of its first occurrence. */
static float extreme_range(const float *p, int64_t n, td_cpu_ext kind, int64_t *at)
{
#ifdef TD_RED_AVX2
    if (td_cpu_simd() >= TD_CPU_SIMD_AVX2) {
        const float best = extreme_avx2(p, n, kind);
        if (at != NULL) {
            if (best != best)
                (void)extreme_scalar(p, n, kind, at); /* the first NaN */
            else
                *at = find_avx2(p, n, best, kind);
        }
        return best;
    }
#endif
    return extreme_scalar(p, n, kind, at);
}

double td_cpu_sum_f32(const float *p, int64_t n)
{
    if (n < TD_CPU_PAR_MIN)
        return sum_range(p, n);
    const int64_t chunk = chunk_len(n), nchunks = (n + chunk - 1) / chunk;
    double part[MAX_CHUNKS] = { 0 };
    TD_CPU_FOR_WORK(c, nchunks, n, {
        const int64_t lo = c * chunk;
        part[c] = sum_range(p + lo, n - lo < chunk ? n - lo : chunk);
    });
    double total = 0.0;
    for (int64_t c = 0; c < nchunks; c++)
        total += part[c];
    return total;
}

/* The sum of n f16 / bf16 values, in double: td_cpu_sum_f32's chunks, each widened into an
 * f32 buffer of its own (at most 256 KiB: L2) by the row converters and summed by the same
 * sum_range, so the total is bit for bit what the via-f32 path (whole f32 copy, then
 * td_cpu_sum_f32) gives, without the copy. Fails only when a buffer cannot be had. */
td_status td_cpu_sum_half(td_dtype dt, const uint16_t *p, int64_t n, double *sum)
{
    void (*widen)(const void *, void *, size_t) = dt == TD_F16 ? td_f16_to_f32_row : td_bf16_to_f32_row;
    const int64_t chunk = n < TD_CPU_PAR_MIN ? (n > 0 ? n : 1) : chunk_len(n);
    const int64_t nchunks = n < TD_CPU_PAR_MIN ? 1 : (n + chunk - 1) / chunk;
    double part[MAX_CHUNKS] = { 0 };
    atomic_int failed = 0;
    TD_CPU_FOR_WORK(c, nchunks, n, {
        const int64_t lo = c * chunk, len = n - lo < chunk ? n - lo : chunk;
        float *buf = malloc(sizeof(float) * (size_t)(len > 0 ? len : 1));
        if (buf == NULL) {
            atomic_store(&failed, 1);
        } else {
            widen(p + lo, buf, (size_t)len);
            part[c] = sum_range(buf, len);
            free(buf);
        }
    });
    if (atomic_load(&failed))
        return td_error(TD_E_NOMEM, "float_sum: out of memory for a chunk of %lld values", (long long)chunk);
    double total = 0.0;
    for (int64_t c = 0; c < nchunks; c++)
        total += part[c];
    *sum = nchunks == 1 ? part[0] : total;
    return TD_OK;
}

/* A zero extreme takes the sign of the first zero of the n values at stride apart (the ops'
 * rule on a -0 / +0 tie: the element argmax / argmin pick). The vector and threaded loops
 * keep whichever zero their lanes and parts saw last, so the sign is found here, and only
 * when the extreme is a zero: the scan stops at the first one. */
static float first_zero(const float *p, int64_t n, int64_t stride, float best)
{
    if (best != 0.0f)
        return best;
    for (int64_t k = 0; k < n; k++)
        if (p[k * stride] == 0.0f)
            return p[k * stride];
    return best;
}

static float extreme_f32(const float *p, int64_t n, td_cpu_ext kind)
{
    if (n < TD_CPU_PAR_MIN)
        return extreme_range(p, n, kind, NULL);
    const int64_t chunk = chunk_len(n), nchunks = (n + chunk - 1) / chunk;
    float part[MAX_CHUNKS] = { 0 };
    TD_CPU_FOR_WORK(c, nchunks, n, {
        const int64_t lo = c * chunk;
        part[c] = extreme_range(p + lo, n - lo < chunk ? n - lo : chunk, kind, NULL);
    });
    /* the parts are already absolute values: combine them as a plain max for max_abs */
    return extreme_scalar(part, nchunks, kind == TD_CPU_EXT_MAX_ABS ? TD_CPU_EXT_MAX : kind, NULL);
}

float td_cpu_extreme_f32(const float *p, int64_t n, td_cpu_ext kind)
{
    const float best = extreme_f32(p, n, kind);
    return kind == TD_CPU_EXT_MAX_ABS ? best : first_zero(p, n, 1, best);
}

td_status td_cpu_float_sum(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_sum(a, out);
        return TD_OK;
    }
    if (td_be_dtype(a) == TD_F16 || td_be_dtype(a) == TD_BF16) {
        double s = 0.0;
        TD_TRY(td_cpu_sum_half(td_be_dtype(a), (const uint16_t *)td_be_data(a), td_be_numel(a), &s));
        ((uint16_t *)td_be_data(out))[0] = td_cpu_round_half(td_be_dtype(a), (float)s);
        return TD_OK;
    }
    ((float *)td_be_data(out))[0] = (float)td_cpu_sum_f32((const float *)td_be_data(a), td_be_numel(a));
    return TD_OK;
}

/* In every int dtype: the sum modulo 2^n, in the input's dtype (the op's result dtype:
 * docs/dtypes.md section 6; a u8 sum wraps at 256, where PyTorch gives an i64). A (32 or 64
 * bits, unsigned) wraps without UB, and the sum modulo 2^32 reduces to it modulo 2^8. */
td_status td_cpu_int_sum(const td_tensor *a, td_tensor *out)
{
    const int64_t n = td_be_numel(a);
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T *p = (const T *)td_be_data(a);
        A acc = 0;
        if (n >= TD_CPU_PAR_MIN) {
            TD_CPU_OMP_REDUCE(+, acc)
            for (int64_t i = 0; i < n; i++)
                acc = (A)(acc + TD_CPU_ACC(p[i]));
        } else {
            for (int64_t i = 0; i < n; i++)
                acc = (A)(acc + TD_CPU_ACC(p[i]));
        }
        ((T *)td_be_data(out))[0] = TD_CPU_WRAP(acc);
    })
    return TD_OK;
}

/* ---- along one dim: a viewed as [outer, size, inner], out as [outer, 1, inner] ---- */

typedef enum reduce_kind { R_SUM, R_MEAN, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN } reduce_kind;

/* Columns reduced together: the k loop then reads rows of up to RBLOCK contiguous floats
 * (8 KiB); along an outer dim of a wide tensor, narrower blocks read memory in pieces too
 * small for the prefetchers (on a 4096^2 sum along dim 0, 512 columns took about twice as
 * long as 1024, and 2048 5-15% less than 1024 in runs side by side: runs of two pages, not
 * one). The
 * partial result of a block is 32 KiB on the stack. */
#define RBLOCK 2048

/* The partial result of rows [k0, k1) of one block of w columns. */
typedef struct block_part {
    double sum[RBLOCK];
    float best[RBLOCK];
    int32_t idx[RBLOCK];
} block_part;

#define REDUCE_EXTREME(BEATS)                              \
    for (int64_t k = k0 + 1; k < k1; k++) {                \
        const float *row = base + k * inner;               \
        for (int64_t t = t0; t < w; t++) {                 \
            const float v = row[t];                        \
            if (BEATS(v, r->best[t])) {                    \
                r->best[t] = v;                            \
                r->idx[t] = (int32_t)k;                    \
            }                                              \
        }                                                  \
    }

#ifdef TD_RED_AVX2
/* The column loops take 8 rows at a time: for each 8 columns, the accumulators are loaded
 * once, 8 rows added, and stored (in L1). Eight rows are then read side by side, each one
 * front to back: the block's memory is read as 8 streams, which the prefetchers follow;
 * narrower passes (a few columns down many rows) left it latency-bound, at a third of the
 * read bandwidth. */
#define ROWS_AT_ONCE 8

/* Columns [0, w8) (w8 a multiple of 8) of the block over rows k0 .. k1-1, added to acc. */
AVX2_FN static void cols_sum_avx2(const float *base, int64_t inner, int64_t k0, int64_t k1, int64_t w8, double *acc)
{
    for (int64_t k = k0; k < k1; k += ROWS_AT_ONCE) {
        const int64_t nr = k1 - k < ROWS_AT_ONCE ? k1 - k : ROWS_AT_ONCE;
        const float *rows = base + k * inner;
        for (int64_t t = 0; t < w8; t += 8) {
            __m256d lo = _mm256_loadu_pd(acc + t), hi = _mm256_loadu_pd(acc + t + 4);
            for (int64_t r = 0; r < nr; r++) {
                const __m256 v = _mm256_loadu_ps(rows + r * inner + t);
                lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
                hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
            }
            _mm256_storeu_pd(acc + t, lo);
            _mm256_storeu_pd(acc + t + 4, hi);
        }
    }
}

/* BEATS_MAX / BEATS_MIN on columns [0, w8) over rows k0+1 .. k1-1 (best and idx hold row k0),
 * keeping the row index of each best (as bit patterns in float lanes). */
AVX2_FN static void cols_extreme_avx2(const float *base, int64_t inner, int64_t k0, int64_t k1, int64_t w8, bool is_min,
                                      float *best, int32_t *idx)
{
    float *ixf = (float *)(void *)idx;
    for (int64_t k = k0 + 1; k < k1; k += ROWS_AT_ONCE) {
        const int64_t nr = k1 - k < ROWS_AT_ONCE ? k1 - k : ROWS_AT_ONCE;
        const float *rows = base + k * inner;
        for (int64_t t = 0; t < w8; t += 8) {
            __m256 b = _mm256_loadu_ps(best + t), ix = _mm256_loadu_ps(ixf + t);
            for (int64_t r = 0; r < nr; r++) {
                const __m256 v = _mm256_loadu_ps(rows + r * inner + t);
                const __m256 kv = _mm256_castsi256_ps(_mm256_set1_epi32((int32_t)(k + r)));
                const __m256 better = is_min ? _mm256_cmp_ps(v, b, _CMP_LT_OQ) : _mm256_cmp_ps(v, b, _CMP_GT_OQ);
                const __m256 m = _mm256_and_ps(_mm256_cmp_ps(b, b, _CMP_ORD_Q),
                                               _mm256_or_ps(better, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
                b = _mm256_blendv_ps(b, v, m);
                ix = _mm256_blendv_ps(ix, kv, m);
            }
            _mm256_storeu_ps(best + t, b);
            _mm256_storeu_ps(ixf + t, ix);
        }
    }
}

/* A block that is whole rows of a narrow tensor (w == inner < 64, not a multiple of 8): its
 * rows are one contiguous run, read in spans of L = lcm(inner, 8) floats, in which lane p
 * always belongs to column p % inner. Lanes are folded per column at the end, in order. */
static int64_t span_len(int64_t inner)
{
    int64_t L = inner;
    while (L % 8 != 0)
        L += inner;
    return L;
}

/* The rows [k0, k0 + spans * L / inner) into sum[0 .. inner-1]. */
AVX2_FN static void narrow_sum_avx2(const float *base, int64_t inner, int64_t k0, int64_t spans, double *sum)
{
    const int64_t L = span_len(inner);
    double acc[8 * 64];
    for (int64_t q = 0; q < L; q++)
        acc[q] = 0.0;
    const float *p = base + k0 * inner;
    for (int64_t sp = 0; sp < spans; sp++, p += L) {
        for (int64_t q = 0; q < L; q += 8) {
            const __m256 v = _mm256_loadu_ps(p + q);
            _mm256_storeu_pd(acc + q, _mm256_add_pd(_mm256_loadu_pd(acc + q), _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
            _mm256_storeu_pd(acc + q + 4,
                             _mm256_add_pd(_mm256_loadu_pd(acc + q + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
        }
    }
    for (int64_t t = 0; t < inner; t++) {
        double s = 0.0;
        for (int64_t q = t; q < L; q += inner)
            s += acc[q];
        sum[t] = s;
    }
}

/* The same for BEATS_MAX / BEATS_MIN with row indices; spans >= 1. */
AVX2_FN static void narrow_extreme_avx2(const float *base, int64_t inner, int64_t k0, int64_t spans, bool is_min,
                                        float *best, int32_t *idx)
{
    const int64_t L = span_len(inner), rows = L / inner;
    float b[8 * 64];
    int32_t ix[8 * 64], lane_row[8 * 64];
    const float *p = base + k0 * inner;
    for (int64_t q = 0; q < L; q++) {
        lane_row[q] = (int32_t)(q / inner);
        b[q] = p[q];
        ix[q] = (int32_t)k0 + lane_row[q];
    }
    for (int64_t sp = 1; sp < spans; sp++) {
        p += L;
        const __m256i k = _mm256_set1_epi32((int32_t)(k0 + sp * rows));
        for (int64_t q = 0; q < L; q += 8) {
            const __m256 v = _mm256_loadu_ps(p + q), bb = _mm256_loadu_ps(b + q);
            const __m256 better = is_min ? _mm256_cmp_ps(v, bb, _CMP_LT_OQ) : _mm256_cmp_ps(v, bb, _CMP_GT_OQ);
            const __m256 m = _mm256_and_ps(_mm256_cmp_ps(bb, bb, _CMP_ORD_Q),
                                           _mm256_or_ps(better, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
            _mm256_storeu_ps(b + q, _mm256_blendv_ps(bb, v, m));
            const __m256 kv = _mm256_castsi256_ps(
                _mm256_add_epi32(k, _mm256_loadu_si256((const __m256i *)(const void *)(lane_row + q))));
            const __m256 old = _mm256_loadu_ps((const float *)(const void *)(ix + q));
            _mm256_storeu_ps((float *)(void *)(ix + q), _mm256_blendv_ps(old, kv, m));
        }
    }
    /* per column: the first NaN if any, else the extreme with the smallest row */
    for (int64_t t = 0; t < inner; t++) {
        float bv = b[t];
        int32_t bi = ix[t];
        for (int64_t q = t + inner; q < L; q += inner) {
            const float v = b[q];
            const bool bnan = bv != bv, vnan = v != v;
            bool take;
            if (bnan || vnan)
                take = vnan && (!bnan || ix[q] < bi);
            else if (v == bv)
                take = ix[q] < bi;
            else
                take = is_min ? v < bv : v > bv;
            if (take) {
                bv = v;
                bi = ix[q];
            }
        }
        best[t] = bv;
        idx[t] = bi;
    }
}
#endif

/* Reduces rows [k0, k1) (k1 > k0, except for sums) of the w columns at base into r. */
static void reduce_block(const float *base, int64_t inner, int64_t k0, int64_t k1, int64_t w, reduce_kind kind,
                         block_part *r)
{
    const bool avx2 = td_cpu_simd() >= TD_CPU_SIMD_AVX2;
    if (kind == R_SUM || kind == R_MEAN) {
        if (inner == 1) {
            r->sum[0] = sum_range(base + k0, k1 - k0);
            return;
        }
        for (int64_t t = 0; t < w; t++)
            r->sum[t] = 0.0;
        int64_t t0 = 0, kr = k0;
#ifdef TD_RED_AVX2
        if (avx2 && w == inner && inner < 64 && inner % 8 != 0) {
            const int64_t rows = span_len(inner) / inner, spans = (k1 - k0) / rows;
            narrow_sum_avx2(base, inner, k0, spans, r->sum);
            kr = k0 + spans * rows; /* the rows left over: all columns below */
        } else if (avx2) {
            t0 = w - w % 8;
            cols_sum_avx2(base, inner, k0, k1, t0, r->sum);
        }
#endif
        for (int64_t k = kr; k < k1; k++) {
            const float *row = base + k * inner;
            for (int64_t t = t0; t < w; t++)
                r->sum[t] += (double)row[t];
        }
        return;
    }
    const bool is_min = kind == R_MIN || kind == R_ARGMIN;
    if (inner == 1) {
        int64_t at = 0;
        r->best[0] = extreme_range(base + k0, k1 - k0, is_min ? TD_CPU_EXT_MIN : TD_CPU_EXT_MAX,
                                   kind == R_ARGMAX || kind == R_ARGMIN ? &at : NULL);
        r->idx[0] = (int32_t)(k0 + at);
        return;
    }
#ifdef TD_RED_AVX2
    if (avx2 && w == inner && inner < 64 && inner % 8 != 0 && (k1 - k0) >= span_len(inner) / inner) {
        const int64_t rows = span_len(inner) / inner, spans = (k1 - k0) / rows;
        narrow_extreme_avx2(base, inner, k0, spans, is_min, r->best, r->idx);
        const int64_t t0 = 0; /* the rows left over, all columns */
        k0 = k0 + spans * rows - 1; /* REDUCE_EXTREME starts at k0 + 1 */
        if (is_min)
            REDUCE_EXTREME(BEATS_MIN)
        else
            REDUCE_EXTREME(BEATS_MAX)
        return;
    }
#endif
    for (int64_t t = 0; t < w; t++) {
        r->best[t] = base[k0 * inner + t];
        r->idx[t] = (int32_t)k0;
    }
    int64_t t0 = 0;
#ifdef TD_RED_AVX2
    if (avx2) {
        t0 = w - w % 8;
        cols_extreme_avx2(base, inner, k0, k1, t0, is_min, r->best, r->idx);
    }
#endif
    if (t0 < w) {
        if (is_min)
            REDUCE_EXTREME(BEATS_MIN)
        else
            REDUCE_EXTREME(BEATS_MAX)
    }
    (void)avx2;
}

/* Folds part p (later rows) into r. */
static void fold_part(block_part *r, const block_part *p, int64_t w, reduce_kind kind)
{
    const bool is_min = kind == R_MIN || kind == R_ARGMIN;
    for (int64_t t = 0; t < w; t++) {
        if (kind == R_SUM || kind == R_MEAN) {
            r->sum[t] += p->sum[t];
        } else if (is_min ? BEATS_MIN(p->best[t], r->best[t]) : BEATS_MAX(p->best[t], r->best[t])) {
            r->best[t] = p->best[t];
            r->idx[t] = p->idx[t];
        }
    }
}

static void write_part(const block_part *r, int64_t w, int64_t size, reduce_kind kind, void *out, int64_t dst)
{
    if (kind == R_SUM || kind == R_MEAN) {
        const double div = kind == R_MEAN ? (double)size : 1.0;
        float *po = (float *)out + dst;
        for (int64_t t = 0; t < w; t++)
            po[t] = (float)(r->sum[t] / div);
    } else if (kind == R_MAX || kind == R_MIN) {
        float *po = (float *)out + dst;
        for (int64_t t = 0; t < w; t++)
            po[t] = r->best[t];
    } else {
        int32_t *po = (int32_t *)out + dst;
        for (int64_t t = 0; t < w; t++)
            po[t] = r->idx[t];
    }
}

/* Below this many blocks the reduced dim is cut in segments too, so that a long dim with few
 * columns (a whole row, a [n, 3] tensor along dim 0) still spreads over the threads. */
#define FEW_BLOCKS 64
#define MAX_SEGMENTS 64
#define MAX_PARTS 128     /* blocks x segments: the partial results take at most 4 MiB */
#define SEGMENT_MIN 16384 /* elements */

static td_status reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, reduce_kind kind)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const int64_t nblocks = (inner + RBLOCK - 1) / RBLOCK, units = outer * nblocks;
    if (units == 0)
        return TD_OK;
    const float *pa = (const float *)td_be_data(a);
    void *po = td_be_data(out);
    const int64_t wmax = inner < RBLOCK ? inner : RBLOCK;
    int64_t nseg = 1;
    if (units < FEW_BLOCKS && td_be_numel(a) >= 4 * TD_CPU_PAR_MIN) {
        nseg = size * wmax / SEGMENT_MIN;
        nseg = nseg > MAX_SEGMENTS ? MAX_SEGMENTS : nseg;
        nseg = nseg > MAX_PARTS / units ? MAX_PARTS / units : nseg;
        nseg = nseg < 1 ? 1 : nseg;
    }
    if (nseg == 1) {
        TD_CPU_FOR_WORK(u, units, td_be_numel(a), {
            const int64_t o = u / nblocks, j0 = (u % nblocks) * RBLOCK;
            const int64_t w = inner - j0 < RBLOCK ? inner - j0 : RBLOCK;
            block_part r;
            reduce_block(pa + o * size * inner + j0, inner, 0, size, w, kind, &r);
            write_part(&r, w, size, kind, po, o * inner + j0);
        });
        return TD_OK;
    }
    /* units * nseg parts, each rows [s * seg, (s + 1) * seg) of one block, folded in order */
    const int64_t seg = (size + nseg - 1) / nseg;
    nseg = (size + seg - 1) / seg;
    block_part *parts = malloc(sizeof(block_part) * (size_t)(units * nseg));
    if (parts == NULL)
        return td_error(TD_E_NOMEM, "cpu: out of memory for the partial results of a reduction");
    TD_CPU_FOR_WORK(q, units * nseg, td_be_numel(a), {
        const int64_t u = q / nseg, s = q % nseg;
        const int64_t o = u / nblocks, j0 = (u % nblocks) * RBLOCK;
        const int64_t w = inner - j0 < RBLOCK ? inner - j0 : RBLOCK;
        const int64_t k0 = s * seg, k1 = k0 + seg < size ? k0 + seg : size;
        reduce_block(pa + o * size * inner + j0, inner, k0, k1, w, kind, &parts[q]);
    });
    for (int64_t u = 0; u < units; u++) {
        const int64_t o = u / nblocks, j0 = (u % nblocks) * RBLOCK;
        const int64_t w = inner - j0 < RBLOCK ? inner - j0 : RBLOCK;
        block_part *r = &parts[u * nseg];
        for (int64_t s = 1; s < nseg; s++)
            fold_part(r, &parts[u * nseg + s], w, kind);
        write_part(r, w, size, kind, po, o * inner + j0);
    }
    free(parts);
    return TD_OK;
}

td_status td_cpu_float_sum_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_SUM);
        return TD_OK;
    }
    return reduce_dim(a, dim, out, R_SUM);
}

td_status td_cpu_float_mean_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_MEAN);
        return TD_OK;
    }
    return reduce_dim(a, dim, out, R_MEAN);
}

/* max_dim / min_dim, then each zero result signed as the first zero along dim (first_zero). */
static td_status extreme_dim(const td_tensor *a, int64_t dim, td_tensor *out, reduce_kind kind)
{
    TD_TRY(reduce_dim(a, dim, out, kind));
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const float *pa = (const float *)td_be_data(a);
    float *po = (float *)td_be_data(out);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++)
            if (po[o * inner + j] == 0.0f)
                po[o * inner + j] = first_zero(pa + o * size * inner + j, size, inner, po[o * inner + j]);
    return TD_OK;
}

td_status td_cpu_float_max_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_MAX);
        return TD_OK;
    }
    return extreme_dim(a, dim, out, R_MAX);
}

td_status td_cpu_float_min_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_MIN);
        return TD_OK;
    }
    return extreme_dim(a, dim, out, R_MIN);
}

td_status td_cpu_float_argmax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_ARGMAX);
        return TD_OK;
    }
    return reduce_dim(a, dim, out, R_ARGMAX);
}

td_status td_cpu_float_argmin(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_ARGMIN);
        return TD_OK;
    }
    return reduce_dim(a, dim, out, R_ARGMIN);
}
