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
 * in cache. Work units are (the other dims' index, a band of TILE along k). */
enum { TILE = 32 };

static void copy_tile(const copy_plan *p, int k, int64_t doff, int64_t soff, int64_t k0, int64_t nk, int64_t nj)
{
    const int64_t dk = p->dst_st[k], sk_ = p->src_st[k], sj = p->src_st[p->nd - 1];
    (void)sk_; /* 1: dim k is contiguous in src */
    for (int64_t j0 = 0; j0 < nj; j0 += TILE) {
        const int64_t jn = nj - j0 < TILE ? nj - j0 : TILE;
        for (int64_t kk = k0; kk < k0 + nk; kk++) {
            const int64_t d = doff + kk * dk + j0, s = soff + kk + j0 * sj;
            if (p->esz == 4) {
                uint32_t *restrict d4 = (uint32_t *)(void *)p->dst + d;
                const uint32_t *restrict s4 = (const uint32_t *)(const void *)p->src + s;
                for (int64_t j = 0; j < jn; j++)
                    d4[j] = s4[j * sj];
            } else if (p->esz == 1) {
                for (int64_t j = 0; j < jn; j++)
                    p->dst[d + j] = p->src[s + j * sj];
            } else {
                for (int64_t j = 0; j < jn; j++)
                    memcpy(p->dst + (size_t)(d + j) * p->esz, p->src + (size_t)(s + j * sj) * p->esz, p->esz);
            }
        }
    }
}

static void copy_blocked(const copy_plan *p, int k, int64_t dst_off, int64_t src_off)
{
    const int last = p->nd - 1;
    int64_t outer = 1;
    for (int d = 0; d < last; d++)
        if (d != k)
            outer *= p->dims[d];
    const int64_t nk = p->dims[k], bands = (nk + TILE - 1) / TILE;
    const int64_t units = outer * bands, total = outer * nk * p->dims[last];
    TD_CPU_FOR_WORK(u, units, total, {
        int64_t o = u / bands, doff = dst_off, soff = src_off;
        const int64_t k0 = (u % bands) * TILE;
        for (int d = last - 1; d >= 0; d--) {
            if (d == k)
                continue;
            const int64_t i = o % p->dims[d];
            o /= p->dims[d];
            doff += i * p->dst_st[d];
            soff += i * p->src_st[d];
        }
        copy_tile(p, k, doff, soff, k0, nk - k0 < TILE ? nk - k0 : TILE, p->dims[last]);
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
    /* Transpose-like (dst contiguous along the last dim, src along another): tiles. */
    if (p.nd >= 2 && p.dst_st[p.nd - 1] == 1 && p.src_st[p.nd - 1] != 1 && total >= 4096) {
        for (int k = p.nd - 2; k >= 0; k--) {
            if (p.src_st[k] == 1 && p.dims[k] >= TILE && p.dims[p.nd - 1] >= TILE) {
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
    memcpy(out->data, a->data, td_cpu_nbytes(out));
    return TD_OK;
}

static td_status permute(const td_tensor *a, const int64_t *perm, td_tensor *out)
{
    int64_t ast[TD_MAX_DIMS], src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS];
    td_cpu_strides(&a->shape, ast);
    td_cpu_strides(&out->shape, dst_st);
    for (int d = 0; d < out->shape.ndim; d++)
        src_st[d] = ast[perm[d]];
    td_cpu_strided_copy(out->data, dst_st, 0, a->data, src_st, 0, td_dtype_size(a->dtype), out->shape.ndim,
                        out->shape.dims);
    return TD_OK;
}

static td_status swap_dims(const td_tensor *a, int64_t dim0, int64_t dim1, td_tensor *out)
{
    int64_t perm[TD_MAX_DIMS];
    for (int d = 0; d < a->shape.ndim; d++)
        perm[d] = d;
    perm[dim0] = dim1;
    perm[dim1] = dim0;
    return permute(a, perm, out);
}

static td_status expand(const td_tensor *a, td_tensor *out)
{
    if (a->shape.numel == out->shape.numel)
        return copy_all(a, out);
    int64_t src_st[TD_MAX_DIMS] = { 0 }, dst_st[TD_MAX_DIMS];
    td_broadcast_strides(&a->shape, &out->shape, src_st);
    td_cpu_strides(&out->shape, dst_st);
    td_cpu_strided_copy(out->data, dst_st, 0, a->data, src_st, 0, td_dtype_size(a->dtype), out->shape.ndim,
                        out->shape.dims);
    return TD_OK;
}

static td_status slice(const td_tensor *a, const int64_t *starts, int starts_len, td_tensor *out)
{
    int64_t src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], off = 0;
    td_cpu_strides(&a->shape, src_st);
    td_cpu_strides(&out->shape, dst_st);
    for (int d = 0; d < starts_len; d++)
        off += starts[d] * src_st[d];
    td_cpu_strided_copy(out->data, dst_st, 0, a->data, src_st, off, td_dtype_size(a->dtype), out->shape.ndim,
                        out->shape.dims);
    return TD_OK;
}

static td_status slice_assign(const td_tensor *a, const td_tensor *value, const int64_t *starts, int starts_len,
                              const int64_t *ends, td_tensor *out)
{
    copy_all(a, out);
    td_shape region;
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS] = { 0 }, off = 0;
    td_cpu_strides(&out->shape, dst_st);
    td_slice_region(&out->shape, starts, starts_len, ends, &region, &off);
    /* value normally has the region's shape; broadcast strides also cover a broadcastable one. */
    td_broadcast_strides(&value->shape, &region, src_st);
    td_cpu_strided_copy(out->data, dst_st, off, value->data, src_st, 0, td_dtype_size(a->dtype), region.ndim,
                        region.dims);
    return TD_OK;
}

static td_status cat(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS], at = 0;
    td_cpu_strides(&out->shape, dst_st);
    const size_t esz = td_dtype_size(out->dtype);
    for (int i = 0; i < xs_len; i++) {
        const td_tensor *x = xs[i];
        if (x->shape.numel == 0)
            continue; /* empty inputs add nothing (a skipped [0] may not even have dim) */
        td_cpu_strides(&x->shape, src_st);
        td_cpu_strided_copy(out->data, dst_st, at * dst_st[dim], x->data, src_st, 0, esz, x->shape.ndim,
                            x->shape.dims);
        at += x->shape.dims[dim];
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
