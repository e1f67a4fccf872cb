/* Vulkan backend: layout ops (permute, expand, slice, slice_assign, cat) as strided copies; reshape
 * is a view the core makes (td_tensor_share). */
#include "vk_internal.h"

/* copy.comp parameters: n, ndim, src_off, dst_off, dims[8], src strides[8], dst strides[8]. */
td_status vk_copy_strided(const td_tensor *src, td_tensor *dst, const char *op, int ndim, const int64_t *dims,
                          const int64_t *src_st, int64_t src_off, const int64_t *dst_st, int64_t dst_off)
{
    uint32_t p[28] = { 0 };
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        n *= dims[d];
        p[4 + d] = (uint32_t)dims[d];
        p[12 + d] = (uint32_t)src_st[d];
        p[20 + d] = (uint32_t)dst_st[d];
    }
    p[0] = (uint32_t)n;
    p[1] = (uint32_t)ndim;
    p[2] = (uint32_t)src_off;
    p[3] = (uint32_t)dst_off;
    vk_buf *const bufs[4] = { vk_buf_of(src), NULL, NULL, vk_buf_of(dst) };
    return vk_dispatch_n(vk_of(dst->device), op, VK_SH_COPY, p, 28, bufs, n);
}

static td_status copy_all(const char *op, const td_tensor *a, td_tensor *out)
{
    const int64_t one = 1;
    return vk_copy_strided(a, out, op, 1, &out->shape.numel, &one, 0, &one, 0);
}

static td_status permute(const char *op, const td_tensor *a, const int64_t *perm, td_tensor *out)
{
    int64_t ast[TD_MAX_DIMS], src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS];
    td_shape_strides(&a->shape, ast);
    td_shape_strides(&out->shape, dst_st);
    for (int d = 0; d < out->shape.ndim; d++)
        src_st[d] = ast[perm[d]];
    return vk_copy_strided(a, out, op, out->shape.ndim, out->shape.dims, src_st, 0, dst_st, 0);
}

static td_status swap_dims(const char *op, const td_tensor *a, int64_t dim0, int64_t dim1, td_tensor *out)
{
    int64_t perm[TD_MAX_DIMS];
    for (int d = 0; d < a->shape.ndim; d++)
        perm[d] = d;
    perm[dim0] = dim1;
    perm[dim1] = dim0;
    return permute(op, a, perm, out);
}

static td_status expand(const char *op, const td_tensor *a, td_tensor *out)
{
    int64_t src_st[TD_MAX_DIMS] = { 0 }, dst_st[TD_MAX_DIMS];
    td_broadcast_strides(&a->shape, &out->shape, src_st);
    td_shape_strides(&out->shape, dst_st);
    return vk_copy_strided(a, out, op, out->shape.ndim, out->shape.dims, src_st, 0, dst_st, 0);
}

static td_status slice(const char *op, const td_tensor *a, const int64_t *starts, int starts_len, td_tensor *out)
{
    int64_t src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], off = 0;
    td_shape_strides(&a->shape, src_st);
    td_shape_strides(&out->shape, dst_st);
    for (int d = 0; d < starts_len; d++)
        off += starts[d] * src_st[d];
    return vk_copy_strided(a, out, op, out->shape.ndim, out->shape.dims, src_st, off, dst_st, 0);
}

static td_status slice_assign(const char *op, const td_tensor *a, const td_tensor *value, const int64_t *starts,
                              int starts_len, const int64_t *ends, td_tensor *out)
{
    TD_TRY(copy_all(op, a, out));
    td_shape region;
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS] = { 0 }, off = 0;
    td_shape_strides(&out->shape, dst_st);
    td_slice_region(&out->shape, starts, starts_len, ends, &region, &off);
    td_broadcast_strides(&value->shape, &region, src_st);
    return vk_copy_strided(value, out, op, region.ndim, region.dims, src_st, 0, dst_st, off);
}

static td_status cat(const char *op, const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS], at = 0;
    td_shape_strides(&out->shape, dst_st);
    for (int i = 0; i < xs_len; i++) {
        const td_tensor *x = xs[i];
        if (x->shape.numel == 0)
            continue; /* empty inputs add nothing (a skipped [0] may not even have dim) */
        td_shape_strides(&x->shape, src_st);
        TD_TRY(vk_copy_strided(x, out, op, x->shape.ndim, x->shape.dims, src_st, 0, dst_st, at * dst_st[dim]));
        at += x->shape.dims[dim];
    }
    return TD_OK;
}

/* Elements are 32-bit words for every dtype, so one set of kernels serves all three. */
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
