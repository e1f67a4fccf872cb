/* CPU backend: layout ops (permute, expand, slice, slice_assign, cat) on any dtype; reshape is a
 * view the core makes (td_tensor_share). */
#include "cpu_internal.h"

typedef struct copy_plan {
    int nd;                    /* at least 1 */
    int64_t dims[TD_MAX_DIMS];
    int64_t dst_st[TD_MAX_DIMS];
    int64_t src_st[TD_MAX_DIMS];
    char *dst;
    const char *src;
    size_t esz;
    bool stream; /* a large copy: the blocked path may write dst with non-temporal stores */
} copy_plan;

static inline void copy_row(const copy_plan *p, int64_t doff, int64_t soff)
{
    const int64_t n = p->dims[p->nd - 1];
    const int64_t ds = p->dst_st[p->nd - 1], ss = p->src_st[p->nd - 1];
    char *d = p->dst + (size_t)doff * p->esz;
    const char *s = p->src + (size_t)soff * p->esz;
    if (ds == 1 && ss == 1) {
        memcpy(d, s, (size_t)n * p->esz);
    } else if (p->esz == 4) {
        uint32_t *d4 = (uint32_t *)(void *)d;
        const uint32_t *s4 = (const uint32_t *)(const void *)s;
        for (int64_t j = 0; j < n; j++)
            d4[j * ds] = s4[j * ss];
    } else if (p->esz == 1) {
        for (int64_t j = 0; j < n; j++)
            d[j * ds] = s[j * ss];
    } else {
        for (int64_t j = 0; j < n; j++)
            memcpy(d + (size_t)(j * ds) * p->esz, s + (size_t)(j * ss) * p->esz, p->esz);
    }
}

/* Rows lo .. hi-1 (a row is the last dim); counters walk the outer dims. */
static void copy_rows(const copy_plan *p, int64_t doff0, int64_t soff0, int64_t lo, int64_t hi)
{
    const int outer = p->nd - 1;
    int64_t idx[TD_MAX_DIMS] = { 0 };
    int64_t doff = doff0, soff = soff0, r = lo;
    for (int d = outer - 1; d >= 0 && r > 0; d--) {
        idx[d] = r % p->dims[d];
        r /= p->dims[d];
        doff += idx[d] * p->dst_st[d];
        soff += idx[d] * p->src_st[d];
    }
    for (int64_t row = lo; row < hi; row++) {
        copy_row(p, doff, soff);
        for (int d = outer - 1; d >= 0; d--) {
            doff += p->dst_st[d];
            soff += p->src_st[d];
            if (++idx[d] < p->dims[d])
                break;
            doff -= p->dims[d] * p->dst_st[d];
            soff -= p->dims[d] * p->src_st[d];
            idx[d] = 0;
        }
    }
}

/* A transpose-like copy: the last dim is contiguous in dst but strided in src, and dim k is
 * contiguous in src. Copying row by row would read src one element per cache line; instead
 * tiles of TILE x TILE elements of the (k, last) plane are copied whole, so both sides stay
 * in cache, and each visit to a row of either side moves TILE * esz contiguous bytes. With
 * 4-byte elements and AVX2, 8 x 8 blocks of a tile go through registers (8 loads, a transpose
 * in 24 shuffles, 8 stores). Each tile is a work unit, so a small matrix still has several. */
enum { TILE = 256 };
#define STREAM_MIN ((size_t)16 << 20)

#if defined(__x86_64__) && defined(__GNUC__)
#define TD_LAYOUT_AVX2 1
#include <immintrin.h>

/* The 8 x 8 block at src (rows src_st apart) transposed into r: r[c][i] = src[i * src_st + c]. */
__attribute__((target("avx2"))) static inline void transpose8x8(__m256 r[8], const uint32_t *src, int64_t src_st)
{
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps((const float *)(const void *)(src + i * src_st));
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* The tile's whole 8 x 8 blocks: rows k0 .. k0+nk8-1, columns j0 .. j0+jn8-1 of dst. With
 * stream (dst's rows 32-byte aligned), two blocks side by side go out together, each dst row's
 * 64 contiguous bytes as two non-temporal stores: the lines are written whole without being
 * read first (as a plain store must), which is a third of a large transpose's memory
 * traffic; a last odd block takes plain stores. */
__attribute__((target("avx2"))) static void tile_avx2(uint32_t *d, int64_t dk, const uint32_t *s, int64_t sj,
                                                       int64_t nk8, int64_t jn8, bool stream)
{
    __m256 a[8], b[8];
    int64_t jb = 0;
    if (stream) {
        for (; jb + 16 <= jn8; jb += 16)
            for (int64_t kb = 0; kb < nk8; kb += 8) {
                transpose8x8(a, s + kb + jb * sj, sj);
                transpose8x8(b, s + kb + (jb + 8) * sj, sj);
                for (int i = 0; i < 8; i++) {
                    float *row = (float *)(void *)(d + (kb + i) * dk + jb);
                    _mm256_stream_ps(row, a[i]);
                    _mm256_stream_ps(row + 8, b[i]);
                }
            }
    }
    for (; jb < jn8; jb += 8)
        for (int64_t kb = 0; kb < nk8; kb += 8) {
            transpose8x8(a, s + kb + jb * sj, sj);
            for (int i = 0; i < 8; i++)
                _mm256_storeu_ps((float *)(void *)(d + (kb + i) * dk + jb), a[i]);
        }
    if (stream)
        _mm_sfence(); /* the streamed lines reach memory before the tile's unit ends */
}
#endif

static void copy_tile(const copy_plan *p, int k, int64_t doff, int64_t soff, int64_t k0, int64_t nk, int64_t nj)
{
    const int64_t dk = p->dst_st[k], sj = p->src_st[p->nd - 1]; /* src_st[k] is 1 */
#ifdef TD_LAYOUT_AVX2
    const bool avx2 = p->esz == 4 && td_cpu_simd() >= TD_CPU_SIMD_AVX2;
#else
    const bool avx2 = false;
#endif
    for (int64_t j0 = 0; j0 < nj; j0 += TILE) {
        const int64_t jn = nj - j0 < TILE ? nj - j0 : TILE;
        /* with AVX2 the 8 x 8 blocks go first; the loops below then do the rest: rows past
         * nk8, and in the rows before it, the columns past jn8 */
        int64_t nk8 = 0, jn8 = 0;
#ifdef TD_LAYOUT_AVX2
        if (avx2) {
            nk8 = nk - nk % 8;
            jn8 = jn - jn % 8;
            uint32_t *d = (uint32_t *)(void *)p->dst + doff + k0 * dk + j0;
            const bool aligned = (uintptr_t)(void *)d % 32 == 0 && dk % 8 == 0;
            tile_avx2(d, dk, (const uint32_t *)(const void *)p->src + soff + k0 + j0 * sj, sj, nk8, jn8,
                      p->stream && aligned);
        }
#endif
        for (int64_t kk = k0; kk < k0 + nk; kk++) {
            const int64_t jlo = kk - k0 < nk8 ? jn8 : 0;
            const int64_t d = doff + kk * dk + j0, s = soff + kk + j0 * sj;
            if (p->esz == 4) {
                uint32_t *restrict d4 = (uint32_t *)(void *)p->dst + d;
                const uint32_t *restrict s4 = (const uint32_t *)(const void *)p->src + s;
                for (int64_t j = jlo; j < jn; j++)
                    d4[j] = s4[j * sj];
            } else if (p->esz == 1) {
                for (int64_t j = jlo; j < jn; j++)
                    p->dst[d + j] = p->src[s + j * sj];
            } else {
                for (int64_t j = jlo; j < jn; j++)
                    memcpy(p->dst + (size_t)(d + j) * p->esz, p->src + (size_t)(s + j * sj) * p->esz, p->esz);
            }
        }
    }
    (void)avx2;
}

static void copy_blocked(const copy_plan *p, int k, int64_t dst_off, int64_t src_off)
{
    const int last = p->nd - 1;
    int64_t outer = 1;
    for (int d = 0; d < last; d++)
        if (d != k)
            outer *= p->dims[d];
    const int64_t nk = p->dims[k], nj = p->dims[last];
    const int64_t kbands = (nk + TILE - 1) / TILE, jbands = (nj + TILE - 1) / TILE;
    const int64_t units = outer * kbands * jbands, total = outer * nk * nj;
    /* one tile per unit; a thread's run of units writes dst's rows left to right */
    TD_CPU_FOR_WORK(u, units, total, {
        const int64_t jb = u % jbands, kb = (u / jbands) % kbands;
        int64_t o = u / jbands / kbands, doff = dst_off, soff = src_off;
        for (int d = last - 1; d >= 0; d--) {
            if (d == k)
                continue;
            const int64_t i = o % p->dims[d];
            o /= p->dims[d];
            doff += i * p->dst_st[d];
            soff += i * p->src_st[d];
        }
        const int64_t k0 = kb * TILE, j0 = jb * TILE;
        copy_tile(p, k, doff + j0, soff + j0 * p->src_st[last], k0, nk - k0 < TILE ? nk - k0 : TILE,
                  nj - j0 < TILE ? nj - j0 : TILE);
    });
}

void td_cpu_strided_copy(void *dst, const int64_t *dst_st, int64_t dst_off, const void *src,
                         const int64_t *src_st, int64_t src_off, size_t esz, int ndim, const int64_t *dims)
{
    for (int d = 0; d < ndim; d++)
        if (dims[d] == 0)
            return; /* an empty region: nothing to copy */
    copy_plan p = { .nd = 0, .dst = (char *)dst, .src = (const char *)src, .esz = esz };
    /* Drop size-1 dims and merge dims that are contiguous in both, so that e.g. a slice of
     * the leading dim becomes one memcpy. */
    for (int d = 0; d < ndim; d++) {
        if (dims[d] == 1)
            continue;
        if (p.nd > 0 && p.dst_st[p.nd - 1] == dst_st[d] * dims[d] && p.src_st[p.nd - 1] == src_st[d] * dims[d]) {
            p.dims[p.nd - 1] *= dims[d];
        } else {
            p.dims[p.nd] = dims[d];
            p.nd++;
        }
        p.dst_st[p.nd - 1] = dst_st[d];
        p.src_st[p.nd - 1] = src_st[d];
    }
    if (p.nd == 0) {
        p.nd = 1;
        p.dims[0] = 1;
        p.dst_st[0] = p.src_st[0] = 1;
    }
    int64_t rows = 1;
    for (int d = 0; d < p.nd - 1; d++)
        rows *= p.dims[d];
    const int64_t total = rows * p.dims[p.nd - 1];
    /* Past this size the result would not stay in cache for the next op anyway, so writing it
     * around the cache costs nothing later and saves reading every line before writing it. */
    p.stream = (size_t)total * esz >= STREAM_MIN;
    /* Transpose-like (dst contiguous along the last dim, src along another): tiles, once
     * both sides of the plane have room for at least one 8 x 8 block. */
    if (p.nd >= 2 && p.dst_st[p.nd - 1] == 1 && p.src_st[p.nd - 1] != 1 && total >= 4096) {
        for (int k = p.nd - 2; k >= 0; k--) {
            if (p.src_st[k] == 1 && p.dims[k] >= 8 && p.dims[p.nd - 1] >= 8) {
                copy_blocked(&p, k, dst_off, src_off);
                return;
            }
        }
    }
    if (total < TD_CPU_PAR_MIN || rows == 1) {
        copy_rows(&p, dst_off, src_off, 0, rows);
        return;
    }
    const int64_t nchunks = rows < 256 ? rows : 256;
    const int64_t per = (rows + nchunks - 1) / nchunks;
    TD_CPU_FOR_WORK(c, nchunks, total, {
        const int64_t lo = c * per;
        const int64_t hi = lo + per < rows ? lo + per : rows;
        if (lo < hi)
            copy_rows(&p, dst_off, src_off, lo, hi);
    });
}

static td_status copy_all(const td_tensor *a, td_tensor *out)
{
    memcpy(td_be_data(out), td_be_data(a), td_cpu_nbytes(out));
    return TD_OK;
}

static td_status permute(const td_tensor *a, const int64_t *perm, td_tensor *out)
{
    int64_t ast[TD_MAX_DIMS], src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS];
    td_cpu_strides(td_be_shape(a), ast);
    td_cpu_strides(td_be_shape(out), dst_st);
    for (int d = 0; d < td_be_ndim(out); d++)
        src_st[d] = ast[perm[d]];
    td_cpu_strided_copy(td_be_data(out), dst_st, 0, td_be_data(a), src_st, 0, td_dtype_size(td_be_dtype(a)), td_be_ndim(out),
                        td_be_dims(out));
    return TD_OK;
}

static td_status swap_dims(const td_tensor *a, int64_t dim0, int64_t dim1, td_tensor *out)
{
    int64_t perm[TD_MAX_DIMS];
    for (int d = 0; d < td_be_ndim(a); d++)
        perm[d] = d;
    perm[dim0] = dim1;
    perm[dim1] = dim0;
    return permute(a, perm, out);
}

static td_status expand(const td_tensor *a, td_tensor *out)
{
    if (td_be_numel(a) == td_be_numel(out))
        return copy_all(a, out);
    int64_t src_st[TD_MAX_DIMS] = { 0 }, dst_st[TD_MAX_DIMS];
    td_broadcast_strides(td_be_shape(a), td_be_shape(out), src_st);
    td_cpu_strides(td_be_shape(out), dst_st);
    td_cpu_strided_copy(td_be_data(out), dst_st, 0, td_be_data(a), src_st, 0, td_dtype_size(td_be_dtype(a)), td_be_ndim(out),
                        td_be_dims(out));
    return TD_OK;
}

static td_status slice(const td_tensor *a, const int64_t *starts, int starts_len, td_tensor *out)
{
    int64_t src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], off = 0;
    td_cpu_strides(td_be_shape(a), src_st);
    td_cpu_strides(td_be_shape(out), dst_st);
    for (int d = 0; d < starts_len; d++)
        off += starts[d] * src_st[d];
    td_cpu_strided_copy(td_be_data(out), dst_st, 0, td_be_data(a), src_st, off, td_dtype_size(td_be_dtype(a)), td_be_ndim(out),
                        td_be_dims(out));
    return TD_OK;
}

static td_status slice_assign(const td_tensor *a, const td_tensor *value, const int64_t *starts, int starts_len,
                              const int64_t *ends, td_tensor *out)
{
    copy_all(a, out);
    td_shape region;
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS] = { 0 }, off = 0;
    td_cpu_strides(td_be_shape(out), dst_st);
    td_slice_region(td_be_shape(out), starts, starts_len, ends, &region, &off);
    /* value normally has the region's shape; broadcast strides also cover a broadcastable one. */
    td_broadcast_strides(td_be_shape(value), &region, src_st);
    td_cpu_strided_copy(td_be_data(out), dst_st, off, td_be_data(value), src_st, 0, td_dtype_size(td_be_dtype(a)), region.ndim,
                        region.dims);
    return TD_OK;
}

static td_status cat(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS], at = 0;
    td_cpu_strides(td_be_shape(out), dst_st);
    const size_t esz = td_dtype_size(td_be_dtype(out));
    for (int i = 0; i < xs_len; i++) {
        const td_tensor *x = xs[i];
        if (td_be_numel(x) == 0)
            continue; /* empty inputs add nothing (a skipped [0] may not even have dim) */
        td_cpu_strides(td_be_shape(x), src_st);
        td_cpu_strided_copy(td_be_data(out), dst_st, at * dst_st[dim], td_be_data(x), src_st, 0, esz, td_be_ndim(x),
                            td_be_dims(x));
        at += td_be_dims(x)[dim];
    }
    return TD_OK;
}

/* The same kernels for every primitive class: they only move element bytes. */
#define TD_CPU_LAYOUT_OPS(P)                                                                                \
    td_status td_cpu_##P##_swap_dims(const td_tensor *a, int64_t dim0, int64_t dim1, td_tensor *out)       \
    {                                                                                                      \
        return swap_dims(a, dim0, dim1, out);                                                              \
    }                                                                                                      \
    td_status td_cpu_##P##_permute(const td_tensor *a, const int64_t *perm, int perm_len, td_tensor *out)  \
    {                                                                                                      \
        (void)perm_len;                                                                                    \
        return permute(a, perm, out);                                                                      \
    }                                                                                                      \
    td_status td_cpu_##P##_expand(const td_tensor *a, const int64_t *shape, int shape_len, td_tensor *out)  \
    {                                                                                                      \
        (void)shape;                                                                                       \
        (void)shape_len;                                                                                   \
        return expand(a, out);                                                                             \
    }                                                                                                      \
    td_status td_cpu_##P##_slice(const td_tensor *a, const int64_t *starts, int starts_len,                \
                                 const int64_t *ends, int ends_len, td_tensor *out)                        \
    {                                                                                                      \
        (void)ends;                                                                                        \
        (void)ends_len;                                                                                    \
        return slice(a, starts, starts_len, out);                                                          \
    }                                                                                                      \
    td_status td_cpu_##P##_slice_assign(const td_tensor *a, const td_tensor *value, const int64_t *starts, \
                                        int starts_len, const int64_t *ends, int ends_len, td_tensor *out) \
    {                                                                                                      \
        (void)ends_len;                                                                                    \
        return slice_assign(a, value, starts, starts_len, ends, out);                                      \
    }                                                                                                      \
    td_status td_cpu_##P##_cat(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)        \
    {                                                                                                      \
        return cat(xs, xs_len, dim, out);                                                                  \
    }

TD_CPU_LAYOUT_OPS(float)
TD_CPU_LAYOUT_OPS(int)
TD_CPU_LAYOUT_OPS(bool)
