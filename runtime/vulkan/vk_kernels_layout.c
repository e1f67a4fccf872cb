/* Vulkan backend: layout ops (permute, expand, slice, slice_assign, cat) as strided copies; reshape
 * is a view the core makes (td_tensor_share). A move is only bytes: copy.comp takes the element
 * size (2, 4 or 8 bytes), so the same kernels move f32, i32, bool, f16, bf16 and f64. */
#include "td_half.h"
#include "vk_internal.h"

td_status vk_elem_size(const char *op, const td_tensor *t, uint32_t *esize)
{
    const size_t b = td_be_dtype(t) == TD_BOOL ? 4u : td_dtype_size(td_be_dtype(t));
    if (b != 2u && b != 4u && b != 8u)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no kernel moves %s elements", op, td_dtype_name(td_be_dtype(t)));
    *esize = (uint32_t)b;
    return TD_OK;
}

/* copy.comp's parameters and flags (see there). */
enum { MV_FILL = 1, MV_MASK = 2, MV_PAIRS = 4 };
#define MV_PARAMS 38

/* Packed 16-bit results written in whole words: the last dim even and contiguous, the offset
 * and every other stride even, so each even element and the next share one word. */
static bool whole_words(int ndim, const int64_t *dims, const int64_t *dst_st, int64_t dst_off)
{
    if (ndim < 1 || dims[ndim - 1] % 2 != 0 || dst_st[ndim - 1] != 1 || dst_off % 2 != 0)
        return false;
    for (int d = 0; d < ndim - 1; d++)
        if (dims[d] > 1 && dst_st[d] % 2 != 0)
            return false;
    return true;
}

/* One copy.comp dispatch: dst[dst_off + k . dst_st] = src[src_off + k . src_st] (or the value
 * fill[] with MV_FILL; only where mask[k . mask_st] with MV_MASK) over the index space dims. */
static td_status move(const char *op, const td_tensor *src, const td_tensor *mask, td_tensor *dst, uint32_t flags,
                      const uint32_t fill[2], int ndim, const int64_t *dims, const int64_t *src_st, int64_t src_off,
                      const int64_t *dst_st, int64_t dst_off, const int64_t *mask_st)
{
    uint32_t es = 4;
    TD_TRY(vk_elem_size(op, dst, &es));
    uint32_t p[MV_PARAMS] = { 0 };
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        n *= dims[d];
        p[4 + d] = (uint32_t)dims[d];
        p[12 + d] = src_st != NULL ? (uint32_t)src_st[d] : 0u;
        p[20 + d] = (uint32_t)dst_st[d];
        p[28 + d] = mask_st != NULL ? (uint32_t)mask_st[d] : 0u;
    }
    if (es == 2u && !(flags & MV_MASK) && whole_words(ndim, dims, dst_st, dst_off))
        flags |= MV_PAIRS;
    const int64_t threads = (flags & MV_PAIRS) ? n / 2 : n;
    p[0] = (uint32_t)threads;
    p[1] = (uint32_t)ndim | flags << 8;
    p[2] = (uint32_t)src_off;
    p[3] = (uint32_t)dst_off;
    if (fill != NULL) {
        p[36] = fill[0];
        p[37] = fill[1];
    }
    vk_buf *const bufs[4] = { src != NULL ? vk_buf_of(src) : NULL, mask != NULL ? vk_buf_of(mask) : NULL, NULL,
                              vk_buf_of(dst) };
    return vk_dispatch_move(vk_of(td_be_device(dst)), op, VK_SH_COPY, es, p, MV_PARAMS, bufs, threads);
}

td_status vk_copy_strided(const td_tensor *src, td_tensor *dst, const char *op, int ndim, const int64_t *dims,
                          const int64_t *src_st, int64_t src_off, const int64_t *dst_st, int64_t dst_off)
{
    return move(op, src, NULL, dst, 0u, NULL, ndim, dims, src_st, src_off, dst_st, dst_off, NULL);
}

/* The bits of value in dst's dtype (f32, f16, bf16, f64: the low word first). */
static void value_bits(td_dtype dt, double value, uint32_t bits[2])
{
    bits[0] = bits[1] = 0;
    if (dt == TD_F64) {
        uint64_t u;
        memcpy(&u, &value, sizeof u);
        bits[0] = (uint32_t)u;
        bits[1] = (uint32_t)(u >> 32);
    } else if (dt == TD_F16) {
        bits[0] = td_f32_to_f16((float)value);
    } else if (dt == TD_BF16) {
        bits[0] = td_f32_to_bf16((float)value);
    } else {
        bits[0] = vk_f2u((float)value);
    }
}

td_status vk_fill_value(const char *op, td_tensor *out, double value)
{
    uint32_t bits[2];
    value_bits(td_be_dtype(out), value, bits);
    const int64_t one = 1;
    return move(op, NULL, NULL, out, MV_FILL, bits, 1, &td_be_shape(out)->numel, NULL, 0, &one, 0, NULL);
}

/* out = a broadcast to out's shape, then where the mask (broadcast) holds: value's element
 * (value_t) or the scalar value. */
td_status vk_mask_move(const char *op, const td_tensor *a, const td_tensor *mask, const td_tensor *value_t,
                       double value, td_tensor *out)
{
    const td_shape *s = td_be_shape(out);
    int64_t ast[TD_MAX_DIMS] = { 0 }, mst[TD_MAX_DIMS] = { 0 }, vst[TD_MAX_DIMS] = { 0 }, ost[TD_MAX_DIMS];
    td_shape_strides(s, ost);
    td_broadcast_strides(td_be_shape(a), s, ast);
    td_broadcast_strides(td_be_shape(mask), s, mst);
    TD_TRY(move(op, a, NULL, out, 0u, NULL, s->ndim, s->dims, ast, 0, ost, 0, NULL));
    if (value_t != NULL) {
        td_broadcast_strides(td_be_shape(value_t), s, vst);
        return move(op, value_t, mask, out, MV_MASK, NULL, s->ndim, s->dims, vst, 0, ost, 0, mst);
    }
    uint32_t bits[2];
    value_bits(td_be_dtype(out), value, bits);
    return move(op, NULL, mask, out, MV_FILL | MV_MASK, bits, s->ndim, s->dims, NULL, 0, ost, 0, mst);
}

static td_status copy_all(const char *op, const td_tensor *a, td_tensor *out)
{
    const int64_t one = 1;
    return vk_copy_strided(a, out, op, 1, &td_be_shape(out)->numel, &one, 0, &one, 0);
}

static td_status permute(const char *op, const td_tensor *a, const int64_t *perm, td_tensor *out)
{
    int64_t ast[TD_MAX_DIMS], src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS];
    td_shape_strides(td_be_shape(a), ast);
    td_shape_strides(td_be_shape(out), dst_st);
    for (int d = 0; d < td_be_ndim(out); d++)
        src_st[d] = ast[perm[d]];
    return vk_copy_strided(a, out, op, td_be_ndim(out), td_be_dims(out), src_st, 0, dst_st, 0);
}

static td_status swap_dims(const char *op, const td_tensor *a, int64_t dim0, int64_t dim1, td_tensor *out)
{
    int64_t perm[TD_MAX_DIMS];
    for (int d = 0; d < td_be_ndim(a); d++)
        perm[d] = d;
    perm[dim0] = dim1;
    perm[dim1] = dim0;
    return permute(op, a, perm, out);
}

static td_status expand(const char *op, const td_tensor *a, td_tensor *out)
{
    int64_t src_st[TD_MAX_DIMS] = { 0 }, dst_st[TD_MAX_DIMS];
    td_broadcast_strides(td_be_shape(a), td_be_shape(out), src_st);
    td_shape_strides(td_be_shape(out), dst_st);
    return vk_copy_strided(a, out, op, td_be_ndim(out), td_be_dims(out), src_st, 0, dst_st, 0);
}

static td_status slice(const char *op, const td_tensor *a, const int64_t *starts, int starts_len, td_tensor *out)
{
    int64_t src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], off = 0;
    td_shape_strides(td_be_shape(a), src_st);
    td_shape_strides(td_be_shape(out), dst_st);
    for (int d = 0; d < starts_len; d++)
        off += starts[d] * src_st[d];
    return vk_copy_strided(a, out, op, td_be_ndim(out), td_be_dims(out), src_st, off, dst_st, 0);
}

static td_status slice_assign(const char *op, const td_tensor *a, const td_tensor *value, const int64_t *starts,
                              int starts_len, const int64_t *ends, td_tensor *out)
{
    TD_TRY(copy_all(op, a, out));
    td_shape region;
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS] = { 0 }, off = 0;
    td_shape_strides(td_be_shape(out), dst_st);
    td_slice_region(td_be_shape(out), starts, starts_len, ends, &region, &off);
    td_broadcast_strides(td_be_shape(value), &region, src_st);
    return vk_copy_strided(value, out, op, region.ndim, region.dims, src_st, 0, dst_st, off);
}

static td_status cat(const char *op, const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS], at = 0;
    td_shape_strides(td_be_shape(out), dst_st);
    for (int i = 0; i < xs_len; i++) {
        const td_tensor *x = xs[i];
        if (td_be_numel(x) == 0)
            continue; /* empty inputs add nothing (a skipped [0] may not even have dim) */
        td_shape_strides(td_be_shape(x), src_st);
        TD_TRY(vk_copy_strided(x, out, op, td_be_ndim(x), td_be_dims(x), src_st, 0, dst_st, at * dst_st[dim]));
        at += td_be_dims(x)[dim];
    }
    return TD_OK;
}

/* copy.comp takes every element size, so one set of kernels serves all three classes. */
#define VK_LAYOUT_OPS(P)                                                                                      \
    td_status td_vulkan_##P##_swap_dims(const td_tensor *a, int64_t dim0, int64_t dim1, td_tensor *out)       \
    {                                                                                                         \
        return swap_dims(#P "_swap_dims", a, dim0, dim1, out);                                                \
    }                                                                                                         \
    td_status td_vulkan_##P##_permute(const td_tensor *a, const int64_t *perm, int perm_len, td_tensor *out)  \
    {                                                                                                         \
        (void)perm_len;                                                                                       \
        return permute(#P "_permute", a, perm, out);                                                          \
    }                                                                                                         \
    td_status td_vulkan_##P##_expand(const td_tensor *a, const int64_t *shape, int shape_len, td_tensor *out)  \
    {                                                                                                         \
        (void)shape;                                                                                          \
        (void)shape_len;                                                                                      \
        return expand(#P "_expand", a, out);                                                                  \
    }                                                                                                         \
    td_status td_vulkan_##P##_slice(const td_tensor *a, const int64_t *starts, int starts_len,                \
                                    const int64_t *ends, int ends_len, td_tensor *out)                        \
    {                                                                                                         \
        (void)ends;                                                                                           \
        (void)ends_len;                                                                                       \
        return slice(#P "_slice", a, starts, starts_len, out);                                                \
    }                                                                                                         \
    td_status td_vulkan_##P##_slice_assign(const td_tensor *a, const td_tensor *value, const int64_t *starts, \
                                           int starts_len, const int64_t *ends, int ends_len, td_tensor *out) \
    {                                                                                                         \
        (void)ends_len;                                                                                       \
        return slice_assign(#P "_slice_assign", a, value, starts, starts_len, ends, out);                     \
    }                                                                                                         \
    td_status td_vulkan_##P##_cat(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)        \
    {                                                                                                         \
        return cat(#P "_cat", xs, xs_len, dim, out);                                                          \
    }

VK_LAYOUT_OPS(float)
VK_LAYOUT_OPS(int)
VK_LAYOUT_OPS(bool)
