/* Vulkan backend: the layout ops of issue 10 that are strided copies (flip, repeat_dim,
 * transpose, narrow, stack, pad) on copy.comp. Elements are 32-bit words for every dtype;
 * a flipped dim has a negative stride, which wraps around in the shader's uint arithmetic
 * to the same index (every index it reaches is in range). */
#include "vk_internal.h"

static td_status copy_as(const char *op, const td_tensor *a, const int64_t *src_st, int64_t src_off, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS];
    td_shape_strides(&out->shape, dst_st);
    return vk_copy_strided(a, out, op, out->shape.ndim, out->shape.dims, src_st, src_off, dst_st, 0);
}

static td_status flip(const char *op, const td_tensor *a, const int64_t *axes, int axes_len, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS], off = 0;
    td_shape_strides(&a->shape, st);
    for (int i = 0; i < axes_len; i++) {
        const int d = (int)(axes[i] < 0 ? axes[i] + a->shape.ndim : axes[i]);
        if (a->shape.dims[d] > 0)
            off += (a->shape.dims[d] - 1) * st[d];
        st[d] = -st[d];
    }
    return copy_as(op, a, st, off, out);
}

static td_status repeat_dim(const char *op, const td_tensor *a, int64_t dim, int64_t times, td_tensor *out)
{
    int64_t outer = 1, blk = 1;
    for (int d = 0; d < a->shape.ndim; d++) {
        if (d < dim)
            outer *= a->shape.dims[d];
        else
            blk *= a->shape.dims[d];
    }
    const int64_t dims[3] = { outer, times, blk };
    const int64_t dst_st[3] = { times * blk, blk, 1 }, src_st[3] = { blk, 0, 1 };
    return vk_copy_strided(a, out, op, 3, dims, src_st, 0, dst_st, 0);
}

static td_status transpose(const char *op, const td_tensor *a, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(&a->shape, st);
    const int nd = a->shape.ndim;
    const int64_t t = st[nd - 1];
    st[nd - 1] = st[nd - 2];
    st[nd - 2] = t;
    return copy_as(op, a, st, 0, out);
}

static td_status narrow(const char *op, const td_tensor *a, int64_t dim, int64_t start, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(&a->shape, st);
    if (start < 0)
        start += a->shape.dims[dim];
    return copy_as(op, a, st, start * st[dim], out);
}

static td_status stack(const char *op, const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t ost[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS];
    td_shape_strides(&out->shape, ost);
    for (int d = 0, j = 0; d < out->shape.ndim; d++)
        if (d != dim)
            dst_st[j++] = ost[d];
    for (int i = 0; i < xs_len; i++) {
        td_shape_strides(&xs[i]->shape, src_st);
        TD_TRY(vk_copy_strided(xs[i], out, op, xs[i]->shape.ndim, xs[i]->shape.dims, src_st, 0, dst_st,
                               i * ost[dim]));
    }
    return TD_OK;
}

#define VK_MORE_LAYOUT(P)                                                                                     \
    td_status td_vulkan_##P##_flip(const td_tensor *a, const int64_t *axes, int axes_len, td_tensor *out)     \
    {                                                                                                         \
        return flip(#P "_flip", a, axes, axes_len, out);                                                      \
    }                                                                                                         \
    td_status td_vulkan_##P##_repeat_dim(const td_tensor *a, int64_t dim, int64_t times, td_tensor *out)      \
    {                                                                                                         \
        return repeat_dim(#P "_repeat_dim", a, dim, times, out);                                              \
    }                                                                                                         \
    td_status td_vulkan_##P##_transpose(const td_tensor *a, td_tensor *out)                                   \
    {                                                                                                         \
        return transpose(#P "_transpose", a, out);                                                            \
    }                                                                                                         \
    td_status td_vulkan_##P##_narrow(const td_tensor *a, int64_t dim, int64_t start, int64_t length,          \
                                     td_tensor *out)                                                          \
    {                                                                                                         \
        (void)length;                                                                                         \
        return narrow(#P "_narrow", a, dim, start, out);                                                      \
    }                                                                                                         \
    td_status td_vulkan_##P##_stack(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)      \
    {                                                                                                         \
        return stack(#P "_stack", xs, xs_len, dim, out);                                                      \
    }

VK_MORE_LAYOUT(float)
VK_MORE_LAYOUT(int)
VK_MORE_LAYOUT(bool)

/* Fill with value, then copy a into the interior. */
td_status td_vulkan_float_pad(const td_tensor *a, const int64_t *pads, int pads_len, float value, td_tensor *out)
{
    TD_TRY(td_vulkan_float_full(out->shape.dims, out->shape.ndim, value, out));
    int64_t ost[TD_MAX_DIMS], ast[TD_MAX_DIMS], off = 0;
    td_shape_strides(&out->shape, ost);
    td_shape_strides(&a->shape, ast);
    for (int i = 0; i < pads_len / 2; i++)
        off += pads[2 * i] * ost[a->shape.ndim - 1 - i];
    return vk_copy_strided(a, out, "float_pad", a->shape.ndim, a->shape.dims, ast, 0, ost, off);
}
