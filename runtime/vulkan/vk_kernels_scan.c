/* Vulkan backend: cumulative ops along a dim (scan.comp), of the reduce / cumulative / sort
 * group (specs/ops/reduce_sort.lua). float_cumprod has a double's range, as the CPU's (like
 * PyTorch's) double accumulation: a float running product would underflow to 0 hundreds of
 * rows before a double one, where a later inf then gives NaN instead of inf; so its running
 * product is m * 2^e (shaders/prod.glsl), carried between ranges in a scratch buffer.
 * The float scans run in their operands' dtype (vk_dispatch_dt): f16 / bf16 widened exactly,
 * scanned in f32 into an f32 scratch rounded once into the result; f64 in double (cumprod a
 * plain running product of doubles) where the device has shaderFloat64. */
#include "vk_internal.h"

/* Rows of a line one dispatch covers (lavapipe ends a shader's loops after 65535 iterations). */
#define VK_SCAN_CHUNK 4096

enum { VK_S_FCUMSUM, VK_S_FCUMMAX, VK_S_FCUMMIN, VK_S_ICUMSUM, VK_S_ICUMPROD, VK_S_FCUMPROD };

static td_status scan(const char *op, uint32_t code, const td_tensor *a, int64_t dim, td_tensor *out)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    if (outer * inner == 0 || size == 0)
        return TD_OK;
    TD_TRY(vk_check_size(op, td_be_numel(a)));
    const bool is_float = code != VK_S_ICUMSUM && code != VK_S_ICUMPROD;
    if (is_float)
        TD_TRY(vk_dt_check(op, (const td_tensor *const[]){ out }, 1, td_be_dtype(a)));
    vk_dev *d = vk_of(td_be_device(a));
    td_tensor *dst = out;
    if (is_float)
        TD_TRY(vk_dt_result(op, out, &dst));
    vk_buf *carry = NULL;
    td_status st = TD_OK;
    if (code == VK_S_FCUMPROD)
        st = vk_buf_get(d, op, (VkDeviceSize)(outer * inner) * 8u, &carry);
    vk_buf *const bufs[4] = { vk_buf_of(a), NULL, carry, vk_buf_of(dst) };
    for (int64_t k0 = 0; st == TD_OK && k0 < size; k0 += VK_SCAN_CHUNK) {
        const int64_t k1 = size - k0 < VK_SCAN_CHUNK ? size : k0 + VK_SCAN_CHUNK;
        const uint32_t p[6] = { (uint32_t)outer, (uint32_t)size, (uint32_t)inner, code, (uint32_t)k0, (uint32_t)k1 };
        st = is_float ? vk_dispatch_dt(d, op, VK_DT_SCAN, td_be_dtype(a), p, 6, bufs, outer * inner)
                      : vk_dispatch_n(d, op, VK_SH_SCAN, p, 6, bufs, outer * inner);
    }
    if (carry != NULL)
        vk_buf_put(d, carry); /* deferred until the batch is submitted */
    return vk_dt_result_done(st, out, dst);
}

td_status td_vulkan_float_cumsum(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return scan("float_cumsum", VK_S_FCUMSUM, a, dim, out);
}

td_status td_vulkan_float_cummax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return scan("float_cummax", VK_S_FCUMMAX, a, dim, out);
}

td_status td_vulkan_float_cummin(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return scan("float_cummin", VK_S_FCUMMIN, a, dim, out);
}

td_status td_vulkan_int_cumsum(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return scan("int_cumsum", VK_S_ICUMSUM, a, dim, out);
}

td_status td_vulkan_int_cumprod(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return scan("int_cumprod", VK_S_ICUMPROD, a, dim, out);
}

td_status td_vulkan_float_cumprod(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return scan("float_cumprod", VK_S_FCUMPROD, a, dim, out);
}
