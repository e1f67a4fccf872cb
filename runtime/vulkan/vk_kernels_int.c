/* Vulkan backend: int bitwise ops, shifts and powi (tensor and scalar forms), the triangular
 * bool masks (shaders/iops.comp), float_unfold (a strided copy on copy.comp), and stable
 * sort / argsort / topk of floats and ints (shaders/sort.comp). */
#include "vk_internal.h"

/* Op codes of iops.comp: the scalar forms, then the same ops on a tensor b, then the masks. */
enum { VK_I_AND, VK_I_OR, VK_I_XOR, VK_I_SHL, VK_I_SHR, VK_I_POW, VK_I_TENSOR = 6, VK_I_TRIL = 12, VK_I_TRIU };

/* Parameters as fmath's: n, op, ndim, scalar, dims[8], then 8 strides per input (0 on
 * broadcast dims); a and b may be NULL. */
static td_status iops(const char *op, uint32_t code, const td_tensor *a, const td_tensor *b, uint32_t scalar,
                      td_tensor *out)
{
    return vk_coded_elementwise(op, VK_SH_IOPS, code, a, b, scalar, out);
}

#define VK_IOPS(NAME, CODE)                                                                \
    td_status td_vulkan_int_##NAME##_scalar(const td_tensor *a, int32_t value, td_tensor *out) \
    {                                                                                      \
        return iops("int_" #NAME "_scalar", CODE, a, NULL, (uint32_t)value, out);          \
    }                                                                                      \
    td_status td_vulkan_int_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out) \
    {                                                                                      \
        return iops("int_" #NAME, VK_I_TENSOR + CODE, a, b, 0u, out);                      \
    }

VK_IOPS(bitwise_and, VK_I_AND)
VK_IOPS(bitwise_or, VK_I_OR)
VK_IOPS(bitwise_xor, VK_I_XOR)
VK_IOPS(bitwise_left_shift, VK_I_SHL)
VK_IOPS(bitwise_right_shift, VK_I_SHR)

td_status td_vulkan_int_powi_scalar(const td_tensor *a, int32_t exponent, td_tensor *out)
{
    return iops("int_powi_scalar", VK_I_POW, a, NULL, (uint32_t)exponent, out);
}

td_status td_vulkan_int_powi(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return iops("int_powi", VK_I_TENSOR + VK_I_POW, a, b, 0u, out);
}

/* The masks compare column - row (|.| < 2^31) with the offset clamped to int32, which keeps
 * every comparison's result. */
static uint32_t clamp_offset(int64_t offset)
{
    if (offset > INT32_MAX)
        offset = INT32_MAX;
    if (offset < -INT32_MAX)
        offset = -INT32_MAX;
    return (uint32_t)(int32_t)offset;
}

td_status td_vulkan_bool_tril_mask(const int64_t *shape, int shape_len, int64_t offset, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return iops("bool_tril_mask", VK_I_TRIL, NULL, NULL, clamp_offset(offset), out);
}

td_status td_vulkan_bool_triu_mask(const int64_t *shape, int shape_len, int64_t offset, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return iops("bool_triu_mask", VK_I_TRIU, NULL, NULL, clamp_offset(offset), out);
}

/* Windows of a along dim: out dim `dim` steps by step * st[dim], the new last dim by st[dim]. */
td_status td_vulkan_float_unfold(const td_tensor *a, int64_t dim, int64_t size, int64_t step, td_tensor *out)
{
    (void)size;
    int64_t st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS];
    td_shape_strides(td_be_shape(a), st);
    const int64_t s = td_be_ndim(a) > 0 ? st[dim] : 1; /* 0-d: one window of size 0 or 1 */
    /* one window (step beyond the dim): its stride is never used, and step * s may overflow */
    if (td_be_ndim(a) > 0)
        st[dim] = (td_be_dims(out)[dim] > 1 ? step : 1) * s;
    st[td_be_ndim(a)] = s;
    td_shape_strides(td_be_shape(out), dst_st);
    return vk_copy_strided(a, out, "float_unfold", td_be_ndim(out), td_be_dims(out), st, 0, dst_st, 0);
}

/* ---- sort, argsort, topk: shaders/sort.comp (a merge sort in passes) ---- */

#define VK_SORT_BLOCK 256 /* as sort.comp's BLOCK */

static td_status sort_lines(const char *op, const td_tensor *a, int64_t dim, bool is_float, bool descending,
                            int64_t keep, bool indices, td_tensor *out)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    if (indices && size > INT32_MAX)
        return td_error(TD_E_INVALID, "%s: dim of size %lld: indices past int32 range", op, (long long)size);
    const int64_t n = td_be_numel(a);
    if (n == 0 || keep == 0)
        return TD_OK;
    /* f16 / bf16 keys: sort.comp's TD_HALF form widens them (exactly) in the first pass; the
     * kept keys, f32, go through a scratch rounded (exactly) into out. f64 keys: every pass on
     * its TD_F64 form, entries of three words (the key's two, the index) */
    const td_dtype dt = is_float ? td_be_dtype(a) : TD_F32;
    const td_dtype pdt = dt == TD_F64 ? TD_F64 : TD_F32; /* the later passes' form */
    const int64_t ewords = dt == TD_F64 ? 3 : 2;
    TD_TRY(vk_check_size(op, ewords * n));
    if (is_float)
        TD_TRY(vk_dt_check(op, indices ? NULL : (const td_tensor *const[]){ out }, indices ? 0 : 1, dt));
    td_tensor *dst = out;
    if (is_float && !indices)
        TD_TRY(vk_dt_result(op, out, &dst));
    vk_dev *d = vk_of(td_be_device(a));
    vk_buf *cur = NULL, *next = NULL; /* (key, index) entries, line-major */
    td_status st = vk_buf_get(d, op, (VkDeviceSize)(n * ewords) * 4u, &cur);
    if (st == TD_OK)
        st = vk_buf_get(d, op, (VkDeviceSize)(n * ewords) * 4u, &next);
    uint32_t p[7] = { (uint32_t)outer, (uint32_t)size, (uint32_t)inner,
                      (is_float ? 1u : 0u) | (descending ? 2u : 0u) | (indices ? 4u : 0u), 0, 0, (uint32_t)keep };
    if (st == TD_OK) {
        vk_buf *const bufs[4] = { vk_buf_of(a), NULL, NULL, cur };
        st = vk_dispatch_dt(d, op, VK_DT_SORT, dt, p, 7, bufs, n);
    }
    for (int64_t w = VK_SORT_BLOCK; st == TD_OK && w < size; w *= 2) {
        p[4] = (uint32_t)w;
        p[5] = 1;
        vk_buf *const bufs[4] = { NULL, cur, NULL, next };
        st = vk_dispatch_dt(d, op, VK_DT_SORT, pdt, p, 7, bufs, n);
        vk_buf *const tmp = cur;
        cur = next;
        next = tmp;
    }
    if (st == TD_OK) {
        p[5] = 2;
        vk_buf *const bufs[4] = { NULL, cur, NULL, vk_buf_of(dst) };
        st = vk_dispatch_dt(d, op, VK_DT_SORT, pdt, p, 7, bufs, outer * inner * keep);
    }
    if (cur != NULL)
        vk_buf_put(d, cur); /* deferred until the batch is submitted */
    if (next != NULL)
        vk_buf_put(d, next);
    return vk_dt_result_done(st, out, dst);
}

static int64_t dim_size(const td_tensor *a, int64_t dim)
{
    return td_be_ndim(a) > 0 ? td_be_dims(a)[dim] : 1;
}

td_status td_vulkan_float_sort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines("float_sort", a, dim, true, descending != 0, dim_size(a, dim), false, out);
}

td_status td_vulkan_float_argsort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines("float_argsort", a, dim, true, descending != 0, dim_size(a, dim), true, out);
}

td_status td_vulkan_float_topk(const td_tensor *a, int64_t count, int64_t dim, td_tensor *out)
{
    return sort_lines("float_topk", a, dim, true, true, count, false, out);
}

td_status td_vulkan_float_argtopk(const td_tensor *a, int64_t count, int64_t dim, td_tensor *out)
{
    return sort_lines("float_argtopk", a, dim, true, true, count, true, out);
}

td_status td_vulkan_int_sort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines("int_sort", a, dim, false, descending != 0, dim_size(a, dim), false, out);
}

td_status td_vulkan_int_argsort(const td_tensor *a, int64_t dim, int32_t descending, td_tensor *out)
{
    return sort_lines("int_argsort", a, dim, false, descending != 0, dim_size(a, dim), true, out);
}

td_status td_vulkan_int_topk(const td_tensor *a, int64_t count, int64_t dim, td_tensor *out)
{
    return sort_lines("int_topk", a, dim, false, true, count, false, out);
}
