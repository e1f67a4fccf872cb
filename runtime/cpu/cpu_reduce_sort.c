/* CPU backend: the reduce / cumulative / sort group (specs/ops/reduce_sort.lua): whole-tensor
 * mean, prod, max, min, max_abs, any, all; prod, max_abs, any, all along a dim; cumsum,
 * cumprod, cummax, cummin; stable sort, argsort, topk. Every loop does nothing on an empty
 * tensor, and reductions of nothing give their identity (sum 0, prod 1, any false, all true). */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpu_float_ew.h"
#include "td_convert.h"

/* Columns handled together along a dim: the k loop then reads rows of RBLOCK contiguous elements. */
#define RBLOCK 64
/* Whole-tensor reductions run in at most this many fixed chunks, combined in order, so the
 * result does not depend on the thread count. */
#define MAX_CHUNKS 256

static int64_t chunk_len(int64_t n)
{
    int64_t chunk = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
    return chunk < 4096 ? 4096 : chunk;
}

/* ---- whole-tensor float reductions (sum and extremes: cpu_reduce.c) ---- */

static double prod_range(const float *p, int64_t n)
{
    double r = 1.0;
    for (int64_t i = 0; i < n; i++)
        r *= (double)p[i];
    return r;
}

td_status td_cpu_float_mean(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_all(a, out, TD_CPU_F64_MEAN);
        return TD_OK;
    }
    const int64_t n = td_be_numel(a);
    if (td_be_dtype(a) == TD_F16 || td_be_dtype(a) == TD_BF16) {
        double s = 0.0;
        TD_TRY(td_cpu_sum_half(td_be_dtype(a), (const uint16_t *)td_be_data(a), n, &s));
        ((uint16_t *)td_be_data(out))[0] = td_cpu_round_half(td_be_dtype(a), n > 0 ? (float)(s / (double)n) : NAN);
        return TD_OK;
    }
    const double s = td_cpu_sum_f32((const float *)td_be_data(a), n);
    ((float *)td_be_data(out))[0] = n > 0 ? (float)(s / (double)n) : NAN;
    return TD_OK;
}

td_status td_cpu_float_prod(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_all(a, out, TD_CPU_F64_PROD);
        return TD_OK;
    }
    const float *p = (const float *)td_be_data(a);
    const int64_t n = td_be_numel(a);
    double total = 1.0;
    if (n < TD_CPU_PAR_MIN) {
        total = prod_range(p, n);
    } else {
        const int64_t chunk = chunk_len(n), nchunks = (n + chunk - 1) / chunk;
        double part[MAX_CHUNKS] = { 0 };
        TD_CPU_FOR_WORK(c, nchunks, n, {
            const int64_t lo = c * chunk;
            part[c] = prod_range(p + lo, n - lo < chunk ? n - lo : chunk);
        });
        for (int64_t c = 0; c < nchunks; c++)
            total *= part[c];
    }
    ((float *)td_be_data(out))[0] = (float)total;
    return TD_OK;
}

/* a has at least 1 element: the shape rule rejects empty tensors */
td_status td_cpu_float_max(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_all(a, out, TD_CPU_F64_MAX);
        return TD_OK;
    }
    ((float *)td_be_data(out))[0] = td_cpu_extreme_f32((const float *)td_be_data(a), td_be_numel(a), TD_CPU_EXT_MAX);
    return TD_OK;
}

td_status td_cpu_float_min(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_all(a, out, TD_CPU_F64_MIN);
        return TD_OK;
    }
    ((float *)td_be_data(out))[0] = td_cpu_extreme_f32((const float *)td_be_data(a), td_be_numel(a), TD_CPU_EXT_MIN);
    return TD_OK;
}

td_status td_cpu_float_max_abs(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_all(a, out, TD_CPU_F64_MAX_ABS);
        return TD_OK;
    }
    ((float *)td_be_data(out))[0] = td_cpu_extreme_f32((const float *)td_be_data(a), td_be_numel(a), TD_CPU_EXT_MAX_ABS);
    return TD_OK;
}

/* ---- any / all over the whole tensor (NaN is nonzero: NaN != 0) ---- */

#define ANY_BODY(T)                                                           \
    {                                                                         \
        const T *p = (const T *)td_be_data(a);                                \
        bool r = false;                                                       \
        for (int64_t i = 0; i < td_be_numel(a) && !r; i++)                    \
            r = p[i] != 0;                                                    \
        ((bool *)td_be_data(out))[0] = r;                                     \
    }
#define ALL_BODY(T)                                                           \
    {                                                                         \
        const T *p = (const T *)td_be_data(a);                                \
        bool r = true;                                                        \
        for (int64_t i = 0; i < td_be_numel(a) && r; i++)                     \
            r = p[i] != 0;                                                    \
        ((bool *)td_be_data(out))[0] = r;                                     \
    }
/* BODY(T) in T, or for int in a's dtype (TD_CPU_INT_CASES) */
#define TYPED(T, BODY) BODY(T)
#define INT_TYPED(T, BODY) TD_CPU_INT_CASES(td_be_dtype(a), BODY(T))
#define ANY_ALL_ALL(NAME, T, HOW)                                             \
    td_status td_cpu_##NAME##_any(const td_tensor *a, td_tensor *out)         \
    {                                                                         \
        HOW(T, ANY_BODY)                                                      \
        return TD_OK;                                                         \
    }                                                                         \
    td_status td_cpu_##NAME##_all(const td_tensor *a, td_tensor *out)         \
    {                                                                         \
        HOW(T, ALL_BODY)                                                      \
        return TD_OK;                                                         \
    }

/* float any / all: in double for f64, else in float (f16 / bf16 run via f32) */
#define FLOAT_TYPED(T, BODY)          \
    if (td_be_dtype(a) == TD_F64)     \
        BODY(double)                  \
    else                              \
        BODY(T)
ANY_ALL_ALL(float, float, FLOAT_TYPED)
ANY_ALL_ALL(int, T, INT_TYPED)
ANY_ALL_ALL(bool, bool, TYPED)

/* ---- along one dim: a viewed as [outer, size, inner], the result as [outer, 1, inner] ---- */

/* Runs BODY for each block of up to RBLOCK columns: o (slab), j0 (first column), w (width),
 * base (a's first element of the block), dst (the result's offset of the block). */
#define FOR_DIM_BLOCKS(A, DIM, T, ...)                                                    \
    do {                                                                                  \
        int64_t outer, size, inner;                                                       \
        td_reduce_geometry(td_be_shape(A), (DIM), &outer, &size, &inner);                    \
        const int64_t nblocks = (inner + RBLOCK - 1) / RBLOCK;                            \
        const T *pa = (const T *)td_be_data(A);                                               \
        TD_CPU_FOR_WORK(u, outer * nblocks, td_be_numel(A), {                           \
            const int64_t o = u / nblocks;                                                \
            const int64_t j0 = (u % nblocks) * RBLOCK;                                    \
            const int64_t w = inner - j0 < RBLOCK ? inner - j0 : RBLOCK;                  \
            const T *base = pa + o * size * inner + j0;                                   \
            const int64_t dst = o * inner + j0;                                           \
            (void)dst;                                                                    \
            __VA_ARGS__                                                                   \
        });                                                                               \
    } while (0)

td_status td_cpu_float_prod_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_PROD);
        return TD_OK;
    }
    float *po = (float *)td_be_data(out);
    FOR_DIM_BLOCKS(a, dim, float, {
        double acc[RBLOCK];
        for (int64_t t = 0; t < w; t++)
            acc[t] = 1.0;
        for (int64_t k = 0; k < size; k++) {
            const float *row = base + k * inner;
            for (int64_t t = 0; t < w; t++)
                acc[t] *= (double)row[t];
        }
        for (int64_t t = 0; t < w; t++)
            po[dst + t] = (float)acc[t];
    });
    return TD_OK;
}

td_status td_cpu_float_max_abs_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_reduce_dim(a, dim, out, TD_CPU_F64_MAX_ABS);
        return TD_OK;
    }
    float *po = (float *)td_be_data(out);
    FOR_DIM_BLOCKS(a, dim, float, {
        float best[RBLOCK];
        for (int64_t t = 0; t < w; t++)
            best[t] = fabsf(base[t]);
        for (int64_t k = 1; k < size; k++) {
            const float *row = base + k * inner;
            for (int64_t t = 0; t < w; t++) {
                const float v = fabsf(row[t]);
                /* NaN sticks once there */
                if (best[t] == best[t] && (v > best[t] || v != v))
                    best[t] = v;
            }
        }
        for (int64_t t = 0; t < w; t++)
            po[dst + t] = best[t];
    });
    return TD_OK;
}

#define ANY_DIM_BODY(T)                                                             \
    {                                                                               \
        bool *po = (bool *)td_be_data(out);                                         \
        FOR_DIM_BLOCKS(a, dim, T, {                                                 \
            bool acc[RBLOCK];                                                       \
            for (int64_t t = 0; t < w; t++)                                         \
                acc[t] = false;                                                     \
            for (int64_t k = 0; k < size; k++) {                                    \
                const T *row = base + k * inner;                                    \
                for (int64_t t = 0; t < w; t++)                                     \
                    acc[t] = acc[t] | (row[t] != 0);                                \
            }                                                                       \
            for (int64_t t = 0; t < w; t++)                                         \
                po[dst + t] = acc[t];                                               \
        });                                                                         \
    }
#define ALL_DIM_BODY(T)                                                             \
    {                                                                               \
        bool *po = (bool *)td_be_data(out);                                         \
        FOR_DIM_BLOCKS(a, dim, T, {                                                 \
            bool acc[RBLOCK];                                                       \
            for (int64_t t = 0; t < w; t++)                                         \
                acc[t] = true;                                                      \
            for (int64_t k = 0; k < size; k++) {                                    \
                const T *row = base + k * inner;                                    \
                for (int64_t t = 0; t < w; t++)                                     \
                    acc[t] = acc[t] & (row[t] != 0);                                \
            }                                                                       \
            for (int64_t t = 0; t < w; t++)                                         \
                po[dst + t] = acc[t];                                               \
        });                                                                         \
    }
#define ANY_ALL_DIM(NAME, T, HOW)                                                   \
    td_status td_cpu_##NAME##_any_dim(const td_tensor *a, int64_t dim, td_tensor *out) \
    {                                                                               \
        HOW(T, ANY_DIM_BODY)                                                        \
        return TD_OK;                                                               \
    }                                                                               \
    td_status td_cpu_##NAME##_all_dim(const td_tensor *a, int64_t dim, td_tensor *out) \
    {                                                                               \
        HOW(T, ALL_DIM_BODY)                                                        \
        return TD_OK;                                                               \
    }

ANY_ALL_DIM(float, float, FLOAT_TYPED)
ANY_ALL_DIM(int, T, INT_TYPED)
ANY_ALL_DIM(bool, bool, TYPED)

/* ---- cumulative ops: out has a's shape; row k of a block is base + k * inner ---- */

/* ACC_T acc[t] starts as row 0 (INIT(x)), then STEP(acc, x) for rows 1.. and each row's
 * acc is written out as OUT(acc). */
#define CUMULATIVE(NAME, T, ACC_T, INIT, STEP, OUT) CUMULATIVE_FN(td_cpu_##NAME, T, ACC_T, INIT, STEP, OUT)
#define CUMULATIVE_FN(FNAME, T, ACC_T, INIT, STEP, OUT)                               \
    td_status FNAME(const td_tensor *a, int64_t dim, td_tensor *out)                  \
    {                                                                                 \
        CUMULATIVE_BODY(T, ACC_T, INIT, STEP, OUT)                                    \
        return TD_OK;                                                                 \
    }
#define CUMULATIVE_BODY(T, ACC_T, INIT, STEP, OUT)                                    \
    {                                                                                 \
        T *po_all = (T *)td_be_data(out);                                             \
        FOR_DIM_BLOCKS(a, dim, T, {                                                   \
            if (size > 0) {                                                           \
                ACC_T acc[RBLOCK];                                                    \
                T *pout = po_all + o * size * inner + j0;                             \
                for (int64_t t = 0; t < w; t++) {                                     \
                    const T x = base[t];                                              \
                    acc[t] = INIT(x);                                                 \
                    pout[t] = OUT(acc[t]);                                            \
                }                                                                     \
                for (int64_t k = 1; k < size; k++) {                                  \
                    const T *row = base + k * inner;                                  \
                    T *orow = pout + k * inner;                                       \
                    for (int64_t t = 0; t < w; t++) {                                 \
                        const T x = row[t];                                           \
                        STEP(acc[t], x);                                              \
                        orow[t] = OUT(acc[t]);                                        \
                    }                                                                 \
                }                                                                     \
            }                                                                         \
        });                                                                           \
    }

#define TO_DOUBLE(x) ((double)(x))
#define TO_FLOAT(x) ((float)(x))
#define SAME(x) (x)
#define STEP_ADD(acc, x) ((acc) += (double)(x))
#define STEP_MUL(acc, x) ((acc) *= (double)(x))
/* PyTorch's cummax / cummin rule: a NaN, or a value at least as large (small), takes over. */
#define STEP_MAX(acc, x) ((acc) = ((x) != (x) || ((acc) == (acc) && (x) >= (acc))) ? (x) : (acc))
#define STEP_MIN(acc, x) ((acc) = ((x) != (x) || ((acc) == (acc) && (x) <= (acc))) ? (x) : (acc))

/* The float ones in f32 and f64 (both accumulate sums and products in double). */
#define CUMULATIVE_FLOAT(NAME, STEP, ACC32, INIT32, OUT32)                          \
    static CUMULATIVE_FN(NAME##32, float, ACC32, INIT32, STEP, OUT32)               \
    static CUMULATIVE_FN(NAME##64, double, double, SAME, STEP, SAME)                \
    td_status td_cpu_##NAME(const td_tensor *a, int64_t dim, td_tensor *out)        \
    {                                                                               \
        return td_be_dtype(a) == TD_F64 ? NAME##64(a, dim, out) : NAME##32(a, dim, out); \
    }
CUMULATIVE_FLOAT(float_cumsum, STEP_ADD, double, TO_DOUBLE, TO_FLOAT)
CUMULATIVE_FLOAT(float_cumprod, STEP_MUL, double, TO_DOUBLE, TO_FLOAT)
CUMULATIVE_FLOAT(float_cummax, STEP_MAX, float, SAME, SAME)
CUMULATIVE_FLOAT(float_cummin, STEP_MIN, float, SAME, SAME)
/* The int ones in every int dtype (TD_CPU_INT_CASES): running sums and products in A,
 * each written back modulo 2^n. */
#define TO_A(x) TD_CPU_ACC(x)
#define A_TO_T(x) TD_CPU_WRAP(x)
#define STEP_AADD(acc, x) ((acc) = (A)((acc) + TD_CPU_ACC(x)))
#define STEP_AMUL(acc, x) ((acc) = (A)((acc) * TD_CPU_ACC(x)))
#define INT_CUMULATIVE(NAME, STEP)                                                    \
    td_status td_cpu_##NAME(const td_tensor *a, int64_t dim, td_tensor *out)          \
    {                                                                                 \
        TD_CPU_INT_CASES(td_be_dtype(a), CUMULATIVE_BODY(T, A, TO_A, STEP, A_TO_T))   \
        return TD_OK;                                                                 \
    }
INT_CUMULATIVE(int_cumsum, STEP_AADD)
INT_CUMULATIVE(int_cumprod, STEP_AMUL)


/* ---- sort, argsort, topk: a stable merge sort of (key, index) pairs per line ---- */

typedef struct fpair {
    float key;
    int64_t idx;
} fpair;

typedef struct dpair {
    double key;
    int64_t idx;
} dpair;

typedef struct ipair {
    int64_t key; /* every int dtype's values */
    int64_t idx;
} ipair;

/* Whether x goes strictly before y; NaN is the largest value. */
#define F_ASC(x, y) ((x) < (y) || ((y) != (y) && (x) == (x)))
#define F_DESC(x, y) ((x) > (y) || ((x) != (x) && (y) == (y)))
#define I_ASC(x, y) ((x) < (y))
#define I_DESC(x, y) ((x) > (y))

/* Stable: insertion sort of runs of 16, then bottom-up merges that take the right element
 * only when it goes strictly before the left one. Leaves the sorted pairs in v. */
#define DEFINE_SORT(FN, P, BEFORE)                                                    \
    static void FN(P *v, P *buf, int64_t n)                                           \
    {                                                                                 \
        const int64_t run = 16;                                                       \
        for (int64_t lo = 0; lo < n; lo += run) {                                     \
            const int64_t hi = lo + run < n ? lo + run : n;                           \
            for (int64_t i = lo + 1; i < hi; i++) {                                   \
                P x = v[i];                                                           \
                int64_t j = i;                                                        \
                while (j > lo && BEFORE(x.key, v[j - 1].key)) {                       \
                    v[j] = v[j - 1];                                                  \
                    j--;                                                              \
                }                                                                     \
                v[j] = x;                                                             \
            }                                                                         \
        }                                                                             \
        P *src = v, *dst = buf;                                                       \
        for (int64_t width = run; width < n; width *= 2) {                            \
            for (int64_t lo = 0; lo < n; lo += 2 * width) {                           \
                const int64_t mid = lo + width < n ? lo + width : n;                  \
                const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;           \
                int64_t i = lo, j = mid, k = lo;                                      \
                while (i < mid && j < hi)                                             \
                    dst[k++] = BEFORE(src[j].key, src[i].key) ? src[j++] : src[i++];  \
                while (i < mid)                                                       \
                    dst[k++] = src[i++];                                              \
                while (j < hi)                                                        \
                    dst[k++] = src[j++];                                              \
            }                                                                         \
            P *t = src;                                                               \
            src = dst;                                                                \
            dst = t;                                                                  \
        }                                                                             \
        if (src != v)                                                                 \
            memcpy(v, src, sizeof(P) * (size_t)n);                                    \
    }

DEFINE_SORT(sort_f_asc, fpair, F_ASC)
DEFINE_SORT(sort_f_desc, fpair, F_DESC)
DEFINE_SORT(sort_d_asc, dpair, F_ASC)
DEFINE_SORT(sort_d_desc, dpair, F_DESC)
DEFINE_SORT(sort_i_asc, ipair, I_ASC)
DEFINE_SORT(sort_i_desc, ipair, I_DESC)

typedef enum sort_out { S_VALUES, S_INDICES } sort_out;

/* Sorts every line of a along dim and writes the first `keep` entries of each (values or
 * indices) into out, whose dim has size keep. Lines are split in units, each with its
 * own scratch. */
/* T: the element type; IT: the indices' (int32_t for float, the input's type for int: the
 * int ops' result has their input's dtype). */
#define SORT_LINES(FN, T, IT, P, SORT_ASC, SORT_DESC)                                           \
    static td_status FN(const td_tensor *a, int64_t dim, bool descending, int64_t keep, sort_out what, \
                        td_tensor *out)                                                         \
    {                                                                                           \
        int64_t outer, size, inner;                                                             \
        td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);                              \
        if (what == S_INDICES && size > INT32_MAX)                                              \
            return td_error(TD_E_INVALID, "sort: dim of size %lld: indices past int32 range",   \
                            (long long)size);                                                   \
        const int64_t lines = outer * inner;                                                    \
        if (lines == 0 || size == 0 || keep == 0)                                               \
            return TD_OK;                                                                       \
        const int64_t nunits = lines < MAX_CHUNKS ? lines : MAX_CHUNKS;                         \
        const int64_t per = (lines + nunits - 1) / nunits;                                      \
        const T *pa = (const T *)td_be_data(a);                                                       \
        atomic_int failed = 0;                                                                  \
        TD_CPU_FOR_WORK(u, nunits, td_be_numel(a), {                                            \
            P *v = malloc(sizeof(P) * (size_t)size * 2);                                        \
            if (v == NULL) {                                                                    \
                atomic_store(&failed, 1);                                                       \
            } else {                                                                            \
                const int64_t l1 = (u + 1) * per < lines ? (u + 1) * per : lines;               \
                for (int64_t l = u * per; l < l1; l++) {                                        \
                    const int64_t o = l / inner, t = l % inner;                                 \
                    const T *src = pa + o * size * inner + t;                                   \
                    for (int64_t k = 0; k < size; k++) {                                        \
                        v[k].key = src[k * inner];                                              \
                        v[k].idx = k;                                                           \
                    }                                                                           \
                    if (descending)                                                             \
                        SORT_DESC(v, v + size, size);                                           \
                    else                                                                        \
                        SORT_ASC(v, v + size, size);                                            \
                    const int64_t off = o * keep * inner + t;                                   \
                    if (what == S_VALUES) {                                                     \
                        T *po = (T *)td_be_data(out) + off;                                           \
                        for (int64_t k = 0; k < keep; k++)                                      \
                            po[k * inner] = (T)v[k].key;                                        \
                    } else {                                                                    \
                        IT *po = (IT *)td_be_data(out) + off;                                   \
                        for (int64_t k = 0; k < keep; k++)                                      \
                            po[k * inner] = (IT)v[k].idx;                                       \
                    }                                                                           \
                }                                                                               \
                free(v);                                                                        \
            }                                                                                   \
        });                                                                                     \
        if (atomic_load(&failed))                                                               \
            return td_error(TD_E_NOMEM, "sort: out of memory for a line of %lld elements",      \
                            (long long)size);                                                   \
        return TD_OK;                                                                           \
    }

SORT_LINES(sort_lines_f32, float, int32_t, fpair, sort_f_asc, sort_f_desc)
SORT_LINES(sort_lines_f64, double, int32_t, dpair, sort_d_asc, sort_d_desc)

static td_status sort_lines_f(const td_tensor *a, int64_t dim, bool descending, int64_t keep, sort_out what,
                              td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64)
        return sort_lines_f64(a, dim, descending, keep, what, out);
    return sort_lines_f32(a, dim, descending, keep, what, out);
}
SORT_LINES(sort_lines_i32, int32_t, int32_t, ipair, sort_i_asc, sort_i_desc)
SORT_LINES(sort_lines_i64, int64_t, int64_t, ipair, sort_i_asc, sort_i_desc)
SORT_LINES(sort_lines_i8, int8_t, int8_t, ipair, sort_i_asc, sort_i_desc)
SORT_LINES(sort_lines_u8, uint8_t, uint8_t, ipair, sort_i_asc, sort_i_desc)

/* The int sort of a's dtype. */
static td_status sort_lines_i(const td_tensor *a, int64_t dim, bool descending, int64_t keep, sort_out what,
                              td_tensor *out)
{
    switch (td_be_dtype(a)) {
    case TD_I64: return sort_lines_i64(a, dim, descending, keep, what, out);
    case TD_I8: return sort_lines_i8(a, dim, descending, keep, what, out);
    case TD_U8: return sort_lines_u8(a, dim, descending, keep, what, out);
    default: return sort_lines_i32(a, dim, descending, keep, what, out);
    }
}

static int64_t dim_size(const td_tensor *a, int64_t dim)
{
    return td_be_ndim(a) > 0 ? td_be_dims(a)[dim] : 1;
}

td_status td_cpu_float_sort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines_f(a, dim, descending != 0, dim_size(a, dim), S_VALUES, out);
}

td_status td_cpu_float_argsort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines_f(a, dim, descending != 0, dim_size(a, dim), S_INDICES, out);
}

td_status td_cpu_float_topk(const td_tensor *a, int64_t count, int64_t dim, td_tensor *out)
{
    return sort_lines_f(a, dim, true, count, S_VALUES, out);
}

td_status td_cpu_float_argtopk(const td_tensor *a, int64_t count, int64_t dim, td_tensor *out)
{
    return sort_lines_f(a, dim, true, count, S_INDICES, out);
}

td_status td_cpu_int_sort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines_i(a, dim, descending != 0, dim_size(a, dim), S_VALUES, out);
}

td_status td_cpu_int_argsort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines_i(a, dim, descending != 0, dim_size(a, dim), S_INDICES, out);
}

td_status td_cpu_int_topk(const td_tensor *a, int64_t count, int64_t dim, td_tensor *out)
{
    return sort_lines_i(a, dim, true, count, S_VALUES, out);
}
