/* Vulkan backend: reductions (whole-tensor and per-dim) and batched matmul. */
#include "vk_internal.h"

static td_status reduce(vk_dev *d, const char *op, uint32_t code, vk_buf *src, vk_buf *dst, int64_t outer,
                        int64_t size, int64_t inner, int64_t n)
{
    const uint32_t p[5] = { (uint32_t)outer, (uint32_t)size, (uint32_t)inner, code, (uint32_t)n };
    vk_buf *const bufs[4] = { src, NULL, NULL, dst };
    return vk_dispatch_n(d, op, VK_SH_REDUCE, p, 5, bufs, outer * inner);
}

/* Two passes when large: chunk partials into a scratch buffer, then one thread sums them. */
static td_status sum_all(const char *op, uint32_t code, const td_tensor *a, td_tensor *out)
{
    vk_dev *d = vk_of(a->device);
    const int64_t n = a->shape.numel;
    if (n <= 4096)
        return reduce(d, op, code, vk_buf_of(a), vk_buf_of(out), 1, n, 1, n);
    int64_t chunk = (n + 1023) / 1024;
    if (chunk < 64)
        chunk = 64;
    const int64_t parts = (n + chunk - 1) / chunk;
    vk_buf *tmp = NULL;
    TD_TRY(vk_buf_get(d, op, (VkDeviceSize)parts * 4u, &tmp));
    td_status st = reduce(d, op, code, vk_buf_of(a), tmp, parts, chunk, 1, n);
    if (st == TD_OK)
        st = reduce(d, op, code, tmp, vk_buf_of(out), 1, parts, 1, parts);
    vk_buf_put(d, tmp); /* deferred until the batch is submitted */
    return st;
}

td_status td_vulkan_float_sum(const td_tensor *a, td_tensor *out)
{
    return sum_all("float_sum", VK_R_SUM, a, out);
}

td_status td_vulkan_int_sum(const td_tensor *a, td_tensor *out)
{
    return sum_all("int_sum", VK_R_ISUM, a, out);
}

static td_status reduce_dim(const char *op, uint32_t code, const td_tensor *a, int64_t dim, td_tensor *out)
{
    int64_t outer, size, inner;
    td_reduce_geometry(&a->shape, dim, &outer, &size, &inner);
    return reduce(vk_of(a->device), op, code, vk_buf_of(a), vk_buf_of(out), outer, size, inner, a->shape.numel);
}

td_status td_vulkan_float_sum_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_sum_dim", VK_R_SUM, a, dim, out);
}

td_status td_vulkan_float_mean_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_mean_dim", VK_R_MEAN, a, dim, out);
}

td_status td_vulkan_float_max_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_max_dim", VK_R_MAX, a, dim, out);
}

td_status td_vulkan_float_min_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_min_dim", VK_R_MIN, a, dim, out);
}

td_status td_vulkan_float_argmax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_argmax", VK_R_ARGMAX, a, dim, out);
}

td_status td_vulkan_float_argmin(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_argmin", VK_R_ARGMIN, a, dim, out);
}

/* matmul.comp parameters: M, N, K, nb, batch dims[8], a and b batch strides[8] (in matrices), batch offset. */
td_status td_vulkan_float_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    td_matmul_geometry g;
    td_matmul_geometry_of(&a->shape, &b->shape, &out->shape, &g);
    const int nb = g.batch.ndim;
    const int64_t m = g.m, n = g.n, k = g.k;
    const td_shape ob = g.batch;
    const int64_t *ast = g.a_stride, *bst = g.b_stride;
    uint32_t p[29] = { (uint32_t)m, (uint32_t)n, (uint32_t)k, (uint32_t)nb };
    for (int d = 0; d < nb; d++) {
        p[4 + d] = (uint32_t)ob.dims[d];
        p[12 + d] = (uint32_t)ast[d];
        p[20 + d] = (uint32_t)bst[d];
    }
    vk_dev *dev = vk_of(out->device);
    vk_buf *const bufs[4] = { vk_buf_of(a), vk_buf_of(b), NULL, vk_buf_of(out) };
    const int64_t gx = (n + 15) / 16, gy = (m + 15) / 16;
    if (gx > dev->max_groups[0] || gy > dev->max_groups[1])
        return td_error(TD_E_INVALID, "float_matmul: vulkan: a %lld x %lld result needs more workgroups than the "
                        "device allows", (long long)m, (long long)n);
    for (int64_t b0 = 0; b0 < ob.numel; b0 += dev->max_groups[2]) {
        const int64_t left = ob.numel - b0;
        const uint32_t gz = left < dev->max_groups[2] ? (uint32_t)left : dev->max_groups[2];
        p[28] = (uint32_t)b0;
        TD_TRY(vk_dispatch(dev, "float_matmul", VK_SH_MATMUL, p, 29, bufs, (uint32_t)gx, (uint32_t)gy, gz));
    }
    return TD_OK;
}
