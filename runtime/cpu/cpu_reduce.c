/* CPU backend: reductions (whole-tensor sums and per-dim sum/mean/max/min/argmax/argmin). */
#include "cpu_internal.h"

/* Four double accumulators: precise, and independent of how the work is split. */
static double sum_range(const float *p, int64_t n)
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

#define SUM_MAX_CHUNKS 256

/* Fixed chunks combined in order, so the result does not depend on the thread count. */
td_status td_cpu_float_sum(const td_tensor *a, td_tensor *out)
{
    const float *p = (const float *)a->data;
    const int64_t n = a->shape.numel;
    double total = 0.0;
    if (n < TD_CPU_PAR_MIN) {
        total = sum_range(p, n);
    } else {
        int64_t chunk = (n + SUM_MAX_CHUNKS - 1) / SUM_MAX_CHUNKS;
        if (chunk < 4096)
            chunk = 4096;
        const int64_t nchunks = (n + chunk - 1) / chunk;
        double part[SUM_MAX_CHUNKS];
        TD_CPU_FOR_WORK(c, nchunks, n, {
            const int64_t lo = c * chunk;
            const int64_t len = n - lo < chunk ? n - lo : chunk;
            part[c] = sum_range(p + lo, len);
        });
        for (int64_t c = 0; c < nchunks; c++)
            total += part[c];
    }
    ((float *)out->data)[0] = (float)total;
    return TD_OK;
}

td_status td_cpu_int_sum(const td_tensor *a, td_tensor *out)
{
    const int32_t *p = (const int32_t *)a->data;
    const int64_t n = a->shape.numel;
    uint32_t acc = 0; /* unsigned: wraps without UB */
    if (n >= TD_CPU_PAR_MIN) {
#ifdef _OPENMP
        TD_CPU_PRAGMA(omp parallel for reduction(+ : acc) schedule(static))
#endif
        for (int64_t i = 0; i < n; i++)
            acc += (uint32_t)p[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            acc += (uint32_t)p[i];
    }
    ((int32_t *)out->data)[0] = (int32_t)acc;
    return TD_OK;
}

/* ---- along one dim: a viewed as [outer, size, inner], out as [outer, 1, inner] ---- */

typedef enum reduce_kind { R_SUM, R_MEAN, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN } reduce_kind;

/* Columns reduced together: the k loop then reads rows of RBLOCK contiguous floats. */
#define RBLOCK 64

/* v replaces best: NaN counts as the extreme and sticks (like PyTorch); ties keep the first. */
#define BEATS_MAX(v, best) ((best) == (best) && ((v) > (best) || (v) != (v)))
#define BEATS_MIN(v, best) ((best) == (best) && ((v) < (best) || (v) != (v)))

#define REDUCE_EXTREME(BEATS)                              \
    for (int64_t k = 1; k < size; k++) {                   \
        const float *row = base + k * inner;               \
        for (int64_t t = 0; t < w; t++) {                  \
            const float v = row[t];                        \
            if (BEATS(v, best[t])) {                       \
                best[t] = v;                               \
                idx[t] = k;                                \
            }                                              \
        }                                                  \
    }

/* Reduces columns j0 .. j0+w-1 of slab o. */
static void reduce_block(const float *a, int64_t size, int64_t inner, int64_t o, int64_t j0, int64_t w,
                         reduce_kind kind, void *out)
{
    const float *base = a + o * size * inner + j0;
    const int64_t dst = o * inner + j0;
    if (kind == R_SUM || kind == R_MEAN) {
        double acc[RBLOCK];
        if (inner == 1) {
            acc[0] = sum_range(base, size);
        } else {
            for (int64_t t = 0; t < w; t++)
                acc[t] = 0.0;
            for (int64_t k = 0; k < size; k++) {
                const float *row = base + k * inner;
                for (int64_t t = 0; t < w; t++)
                    acc[t] += (double)row[t];
            }
        }
        const double div = kind == R_MEAN ? (double)size : 1.0;
        float *po = (float *)out + dst;
        for (int64_t t = 0; t < w; t++)
            po[t] = (float)(acc[t] / div);
        return;
    }
    float best[RBLOCK];
    int64_t idx[RBLOCK];
    for (int64_t t = 0; t < w; t++) {
        best[t] = base[t];
        idx[t] = 0;
    }
    if (kind == R_MAX || kind == R_ARGMAX)
        REDUCE_EXTREME(BEATS_MAX)
    else
        REDUCE_EXTREME(BEATS_MIN)
    if (kind == R_MAX || kind == R_MIN) {
        float *po = (float *)out + dst;
        for (int64_t t = 0; t < w; t++)
            po[t] = best[t];
    } else {
        int32_t *po = (int32_t *)out + dst;
        for (int64_t t = 0; t < w; t++)
            po[t] = (int32_t)idx[t];
    }
}

static td_status reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, reduce_kind kind)
{
    int64_t outer, size, inner;
    td_reduce_geometry(&a->shape, dim, &outer, &size, &inner);
    const int64_t nblocks = (inner + RBLOCK - 1) / RBLOCK;
    const float *pa = (const float *)a->data;
    void *po = out->data;
    TD_CPU_FOR_WORK(u, outer * nblocks, a->shape.numel, {
        const int64_t o = u / nblocks;
        const int64_t j0 = (u % nblocks) * RBLOCK;
        const int64_t w = inner - j0 < RBLOCK ? inner - j0 : RBLOCK;
        reduce_block(pa, size, inner, o, j0, w, kind, po);
    });
    return TD_OK;
}

td_status td_cpu_float_sum_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim(a, dim, out, R_SUM);
}

td_status td_cpu_float_mean_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim(a, dim, out, R_MEAN);
}

td_status td_cpu_float_max_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim(a, dim, out, R_MAX);
}

td_status td_cpu_float_min_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim(a, dim, out, R_MIN);
}

td_status td_cpu_float_argmax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim(a, dim, out, R_ARGMAX);
}

td_status td_cpu_float_argmin(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim(a, dim, out, R_ARGMIN);
}
