/* Vulkan backend: the ops of issue 10. The layout ones are strided copies on copy.comp
 * (flip, repeat_dim, transpose, narrow, stack, pad): elements of 2, 4 or 8 bytes (the
 * tensor's dtype; bools are words), and a flipped dim has a negative stride, which wraps around in the shader's uint
 * arithmetic to the same index (every index it reaches is in range). The indexing ones
 * (gather, select, one_hot, scatter_add/assign, select_add) run shaders/index.comp after
 * the indices were read back and checked (TD_E_RANGE, nothing dispatched). */
#include "vk_internal.h"

static td_status copy_as(const char *op, const td_tensor *a, const int64_t *src_st, int64_t src_off, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS];
    td_shape_strides(td_be_shape(out), dst_st);
    return vk_copy_strided(a, out, op, td_be_ndim(out), td_be_dims(out), src_st, src_off, dst_st, 0);
}

static td_status flip(const char *op, const td_tensor *a, const int64_t *axes, int axes_len, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS], off = 0;
    td_shape_strides(td_be_shape(a), st);
    for (int i = 0; i < axes_len; i++) {
        const int d = (int)(axes[i] < 0 ? axes[i] + td_be_ndim(a) : axes[i]);
        if (td_be_dims(a)[d] > 0)
            off += (td_be_dims(a)[d] - 1) * st[d];
        st[d] = -st[d];
    }
    return copy_as(op, a, st, off, out);
}

static td_status repeat_dim(const char *op, const td_tensor *a, int64_t dim, int64_t times, td_tensor *out)
{
    int64_t outer = 1, blk = 1;
    for (int d = 0; d < td_be_ndim(a); d++) {
        if (d < dim)
            outer *= td_be_dims(a)[d];
        else
            blk *= td_be_dims(a)[d];
    }
    const int64_t dims[3] = { outer, times, blk };
    const int64_t dst_st[3] = { times * blk, blk, 1 }, src_st[3] = { blk, 0, 1 };
    return vk_copy_strided(a, out, op, 3, dims, src_st, 0, dst_st, 0);
}

static td_status transpose(const char *op, const td_tensor *a, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(td_be_shape(a), st);
    const int nd = td_be_ndim(a);
    const int64_t t = st[nd - 1];
    st[nd - 1] = st[nd - 2];
    st[nd - 2] = t;
    return copy_as(op, a, st, 0, out);
}

static td_status narrow(const char *op, const td_tensor *a, int64_t dim, int64_t start, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(td_be_shape(a), st);
    if (start < 0)
        start += td_be_dims(a)[dim];
    return copy_as(op, a, st, start * st[dim], out);
}

static td_status stack(const char *op, const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t ost[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS];
    td_shape_strides(td_be_shape(out), ost);
    for (int d = 0, j = 0; d < td_be_ndim(out); d++)
        if (d != dim)
            dst_st[j++] = ost[d];
    for (int i = 0; i < xs_len; i++) {
        td_shape_strides(td_be_shape(xs[i]), src_st);
        TD_TRY(vk_copy_strided(xs[i], out, op, td_be_ndim(xs[i]), td_be_dims(xs[i]), src_st, 0, dst_st,
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
    TD_TRY(vk_fill_value("float_pad", out, value));
    int64_t ost[TD_MAX_DIMS], ast[TD_MAX_DIMS], off = 0;
    td_shape_strides(td_be_shape(out), ost);
    td_shape_strides(td_be_shape(a), ast);
    for (int i = 0; i < pads_len / 2; i++)
        off += pads[2 * i] * ost[td_be_ndim(a) - 1 - i];
    return vk_copy_strided(a, out, "float_pad", td_be_ndim(a), td_be_dims(a), ast, 0, ost, off);
}

/* ---- indexing: shaders/index.comp ---- */

enum { IX_GATHER, IX_SELECT, IX_ONE_HOT, IX_SCATTER_ADD_F, IX_SCATTER_ADD_I, IX_SCATTER_SET, IX_SELECT_ADD_F,
       IX_SELECT_ADD_I };

/* Index values are in range: the generated entries checked them (td_check_index_range). */

/* p: n, mode, ndim, dim, len, dims[8], A[8], B[8], C[8], j0, j1 (see index.comp). */
#define IX_PARAMS 39
static td_status ix_dispatch(const char *op, uint32_t *p, const td_tensor *src, const td_tensor *indices,
                             td_tensor *out, int64_t n)
{
    p[0] = (uint32_t)n;
    uint32_t es = 4;
    /* gather, select and scatter_assign move elements of any size; the others are 32-bit */
    if (p[1] == IX_GATHER || p[1] == IX_SELECT || p[1] == IX_SCATTER_SET)
        TD_TRY(vk_elem_size(op, out, &es));
    vk_buf *const bufs[4] = { vk_buf_of(src), vk_buf_of(indices), NULL, vk_buf_of(out) };
    if ((p[1] == IX_SCATTER_ADD_F || p[1] == IX_SELECT_ADD_F) && td_be_dtype(out) != TD_F32) {
        /* f64 adds: index.comp's TD_F64 form (doubles as word pairs); no 16-bit form: an f16 /
         * bf16 destination would round after every add, where the CPU adds in f32 and rounds once */
        if (td_be_dtype(out) != TD_F64)
            return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no kernel for %s", op, td_dtype_name(td_be_dtype(out)));
        TD_TRY(vk_need_f64(vk_of(td_be_device(out)), op));
        return vk_dispatch_n(vk_of(td_be_device(out)), op, VK_SH_INDEXD, p, IX_PARAMS, bufs, n);
    }
    return vk_dispatch_move(vk_of(td_be_device(out)), op, VK_SH_INDEX, es, p, IX_PARAMS, bufs, n);
}

/* Lines of len entries in passes of at most 4096 (in order: the passes' adds keep the
 * CPU's order). */
static td_status ix_passes(const char *op, uint32_t *p, int64_t len, const td_tensor *src, const td_tensor *indices,
                           td_tensor *out, int64_t n)
{
    for (int64_t j0 = 0; j0 < len; j0 += 4096) {
        p[37] = (uint32_t)j0;
        p[38] = (uint32_t)(len - j0 < 4096 ? len : j0 + 4096);
        TD_TRY(ix_dispatch(op, p, src, indices, out, n));
    }
    return TD_OK;
}

static void ix_put(uint32_t *p, int at, const int64_t *v, int nd)
{
    for (int d = 0; d < nd; d++)
        p[at + d] = (uint32_t)v[d];
}

/* The size of dim of a, 1 for a 0-d a (the index family sees it as [1]). */
static int64_t dim_size(const td_tensor *a, int64_t dim)
{
    return td_be_ndim(a) > 0 ? td_be_dims(a)[dim] : 1;
}

static td_status gather(const char *op, const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    const td_shape as = td_shape_nonempty(td_be_shape(a)), is = td_shape_nonempty(td_be_shape(indices));
    uint32_t p[IX_PARAMS] = { 0 };
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(&as, st);
    p[1] = IX_GATHER;
    p[2] = (uint32_t)is.ndim;
    p[3] = (uint32_t)dim;
    ix_put(p, 5, is.dims, is.ndim);
    ix_put(p, 13, st, as.ndim);
    return ix_dispatch(op, p, a, indices, out, td_be_numel(out));
}

static td_status select_rows(const char *op, const td_tensor *a, int64_t dim, const td_tensor *indices,
                             td_tensor *out)
{
    const td_shape as = td_shape_nonempty(td_be_shape(a)), os = td_shape_nonempty(td_be_shape(out));
    uint32_t p[IX_PARAMS] = { 0 };
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(&as, st);
    p[1] = IX_SELECT;
    p[2] = (uint32_t)os.ndim;
    p[3] = (uint32_t)dim;
    ix_put(p, 5, os.dims, os.ndim);
    ix_put(p, 13, st, as.ndim);
    return ix_dispatch(op, p, a, indices, out, td_be_numel(out));
}

static td_status copy_whole(const char *op, const td_tensor *a, td_tensor *out)
{
    const int64_t one = 1;
    return vk_copy_strided(a, out, op, 1, &td_be_shape(out)->numel, &one, 0, &one, 0);
}

/* One thread per line of indices along dim: dims are indices' with 1 at dim. */
static td_status scatter(const char *op, uint32_t mode, const td_tensor *a, int64_t dim, const td_tensor *indices,
                         const td_tensor *value, td_tensor *out)
{
    TD_TRY(copy_whole(op, a, out));
    const td_shape os = td_shape_nonempty(td_be_shape(out)), is = td_shape_nonempty(td_be_shape(indices)),
                   vs = td_shape_nonempty(td_be_shape(value));
    uint32_t p[IX_PARAMS] = { 0 };
    int64_t ost[TD_MAX_DIMS], ist[TD_MAX_DIMS], vst[TD_MAX_DIMS], dims[TD_MAX_DIMS];
    td_shape_strides(&os, ost);
    td_shape_strides(&is, ist);
    td_shape_strides(&vs, vst);
    const int nd = is.ndim;
    memcpy(dims, is.dims, sizeof(int64_t) * (size_t)nd);
    const int64_t len = dims[dim];
    dims[dim] = 1;
    p[1] = mode;
    p[2] = (uint32_t)nd;
    p[3] = (uint32_t)dim;
    p[4] = (uint32_t)len;
    ix_put(p, 5, dims, nd);
    ix_put(p, 13, ost, nd);
    ix_put(p, 21, ist, nd);
    ix_put(p, 29, vst, nd);
    return ix_passes(op, p, len, value, indices, out, len > 0 ? td_be_numel(indices) / len : 0);
}

/* One thread per (outer, inner) pair, indices in order. */
static td_status select_add(const char *op, uint32_t mode, const td_tensor *a, int64_t dim, const td_tensor *indices,
                            const td_tensor *value, td_tensor *out)
{
    TD_TRY(copy_whole(op, a, out));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < td_be_ndim(a); d++) {
        if (d < dim)
            outer *= td_be_dims(a)[d];
        else if (d > dim)
            inner *= td_be_dims(a)[d];
    }
    uint32_t p[IX_PARAMS] = { 0 };
    p[1] = mode;
    p[3] = (uint32_t)dim_size(a, dim);
    p[4] = (uint32_t)td_be_numel(indices);
    p[5] = (uint32_t)inner;
    return ix_passes(op, p, td_be_numel(indices), value, indices, out, outer * inner);
}

#define VK_INDEX_OPS(P)                                                                                       \
    td_status td_vulkan_##P##_gather(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out) \
    {                                                                                                         \
        return gather(#P "_gather", a, dim, indices, out);                                                    \
    }                                                                                                         \
    td_status td_vulkan_##P##_select(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out) \
    {                                                                                                         \
        return select_rows(#P "_select", a, dim, indices, out);                                               \
    }

VK_INDEX_OPS(float)
VK_INDEX_OPS(int)
VK_INDEX_OPS(bool)

td_status td_vulkan_float_scatter_add(const td_tensor *a, int64_t dim, const td_tensor *indices,
                                      const td_tensor *value, td_tensor *out)
{
    return scatter("float_scatter_add", IX_SCATTER_ADD_F, a, dim, indices, value, out);
}

td_status td_vulkan_int_scatter_add(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                    td_tensor *out)
{
    return scatter("int_scatter_add", IX_SCATTER_ADD_I, a, dim, indices, value, out);
}

td_status td_vulkan_float_scatter_assign(const td_tensor *a, int64_t dim, const td_tensor *indices,
                                         const td_tensor *value, td_tensor *out)
{
    return scatter("float_scatter_assign", IX_SCATTER_SET, a, dim, indices, value, out);
}

td_status td_vulkan_int_scatter_assign(const td_tensor *a, int64_t dim, const td_tensor *indices,
                                       const td_tensor *value, td_tensor *out)
{
    return scatter("int_scatter_assign", IX_SCATTER_SET, a, dim, indices, value, out);
}

td_status td_vulkan_float_select_add(const td_tensor *a, int64_t dim, const td_tensor *indices,
                                     const td_tensor *value, td_tensor *out)
{
    return select_add("float_select_add", IX_SELECT_ADD_F, a, dim, indices, value, out);
}

td_status td_vulkan_int_select_add(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                   td_tensor *out)
{
    return select_add("int_select_add", IX_SELECT_ADD_I, a, dim, indices, value, out);
}

td_status td_vulkan_int_one_hot(const td_tensor *indices, int64_t num_classes, td_tensor *out)
{
    uint32_t p[IX_PARAMS] = { 0 };
    p[1] = IX_ONE_HOT;
    p[3] = (uint32_t)num_classes;
    return ix_dispatch("int_one_hot", p, indices, indices, out, td_be_numel(out));
}

/* On the host: the result's size depends on the data, so the rule has read the mask to
 * size it already; a shader would need a prefix sum and a second read for nothing. */
td_status td_vulkan_bool_argwhere(const td_tensor *a, td_tensor *out)
{
    static const char op[] = "bool_argwhere";
    bool *mask = td_malloc((size_t)td_be_numel(a) * sizeof *mask);
    int32_t *idx = td_malloc((size_t)td_be_numel(out) * sizeof *idx);
    td_status st = TD_OK;
    if (mask == NULL || idx == NULL)
        st = td_error(TD_E_NOMEM, "%s: vulkan: out of memory for host staging", op);
    if (st == TD_OK)
        st = td_vulkan_read(a, mask);
    if (st == TD_OK)
        st = td_argwhere_fill(op, mask, td_be_shape(a), td_be_dims(out)[0], idx);
    if (st == TD_OK)
        st = td_vulkan_write(out, idx);
    td_free(mask);
    td_free(idx);
    return st;
}
