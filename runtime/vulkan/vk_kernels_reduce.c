/* Vulkan backend: reductions (whole-tensor and per-dim). */
#include <math.h>
#include <string.h>

#include "vk_internal.h"

/* The most elements one thread reduces. Lavapipe ends a shader's loops after 65535
 * iterations in all (silently: the rest of a longer slab was left out), so a long dim is
 * reduced in passes: chunks into partial results, then the partials, until one is left. */
#define VK_REDUCE_CHUNK 4096

/* One pass: a as [outer, size, inner] into [outer, ceil(size / chunk), inner]. total: the
 * original size, which a mean divides by (an f32 for the f32 / f16 / bf16 forms, a uint for
 * f64's). sdt: the dtype of src's values (f64 partials stay f64: every pass on reduce.comp's
 * TD_F64 form). */
static td_status reduce_pass(vk_dev *d, const char *op, uint32_t code, vk_buf *src, td_dtype sdt, vk_buf *idx,
                             vk_buf *dst, int64_t outer, int64_t size, int64_t inner, int64_t chunk, int64_t total)
{
    const int64_t parts = (size + chunk - 1) / chunk;
    const float divisor = (float)total;
    uint32_t div_bits;
    memcpy(&div_bits, &divisor, sizeof div_bits);
    if (sdt == TD_F64)
        div_bits = (uint32_t)total;
    const uint32_t p[7] = { (uint32_t)outer, (uint32_t)size, (uint32_t)inner, code,
                            (uint32_t)chunk, (uint32_t)parts, div_bits };
    vk_buf *const bufs[4] = { src, idx, NULL, dst };
    if (sdt == TD_F16 || sdt == TD_BF16) /* reduce.comp's TD_HALF form: a is 16-bit */
        return vk_dispatch_reduceh(d, op, sdt, p, 7, bufs, outer * parts * inner);
    if (sdt == TD_F64) {
        TD_TRY(vk_need_f64(d, op));
        return vk_dispatch_n(d, op, VK_SH_REDUCED, p, 7, bufs, outer * parts * inner);
    }
    return vk_dispatch_n(d, op, VK_SH_REDUCE, p, 7, bufs, outer * parts * inner);
}

/* a as [outer, size, inner] reduced over size into out ([outer, inner]). A long size takes
 * several passes through scratch buffers; a slab of size <= 4096 is one thread's, a longer
 * one is cut into up to ~1024 chunks of at least 64 (so a whole-tensor sum runs wide). */
static td_status reduce(vk_dev *d, const char *op, uint32_t code, vk_buf *src, td_dtype sdt, vk_buf *dst,
                        int64_t outer, int64_t size, int64_t inner)
{
    const bool arg = code == VK_R_ARGMAX || code == VK_R_ARGMIN;
    const int64_t total = size;
    /* the partials' dtype and bytes: f32 words, or doubles for f64 */
    const td_dtype pdt = sdt == TD_F64 ? TD_F64 : TD_F32;
    const VkDeviceSize pbytes = sdt == TD_F64 ? 8u : 4u;
    vk_buf *vals = src, *idx = NULL; /* the current level: values, and (arg ops) their indices */
    td_status st = TD_OK;
    while (st == TD_OK && size > VK_REDUCE_CHUNK) {
        int64_t chunk = (size + 1023) / 1024;
        chunk = chunk < 64 ? 64 : chunk > VK_REDUCE_CHUNK ? VK_REDUCE_CHUNK : chunk;
        const int64_t parts = (size + chunk - 1) / chunk;
        const VkDeviceSize bytes = (VkDeviceSize)(outer * parts * inner) * pbytes;
        vk_buf *nv = NULL, *ni = NULL;
        /* sums and means add partial sums; extremes keep partial extremes (and where they are) */
        const uint32_t vcode = code == VK_R_MEAN ? VK_R_SUM : arg ? (code == VK_R_ARGMAX ? VK_R_MAX : VK_R_MIN) : code;
        st = vk_buf_get(d, op, bytes, &nv);
        if (st == TD_OK && arg)
            st = vk_buf_get(d, op, (VkDeviceSize)(outer * parts * inner) * 4u, &ni);
        if (st == TD_OK)
            st = reduce_pass(d, op, vcode, vals, vals == src ? sdt : pdt, NULL, nv, outer, size, inner, chunk,
                             total);
        if (st == TD_OK && arg)
            st = reduce_pass(d, op, idx ? code + (VK_R_ARGMAX_GATHER - VK_R_ARGMAX) : code, vals,
                             vals == src ? sdt : pdt, idx, ni, outer, size, inner, chunk, total);
        if (vals != src)
            vk_buf_put(d, vals); /* deferred until the batch is submitted */
        if (idx != NULL)
            vk_buf_put(d, idx);
        vals = nv;
        idx = ni;
        size = parts;
    }
    if (st == TD_OK) {
        const uint32_t fcode = arg && idx ? code + (VK_R_ARGMAX_GATHER - VK_R_ARGMAX) : code;
        st = reduce_pass(d, op, fcode, vals, vals == src ? sdt : pdt, idx, dst, outer, size, inner, size, total);
    }
    if (vals != src && vals != NULL)
        vk_buf_put(d, vals);
    if (idx != NULL)
        vk_buf_put(d, idx);
    return st;
}

/* A reduction over an empty dim (only sums and means: the rules reject the extremes):
 * 0, or NaN for a mean (0 / 0), as PyTorch gives. */
static td_status reduce_empty(const char *op, uint32_t code, td_tensor *out)
{
    if (td_be_dtype(out) == TD_F64)
        return vk_fill_value(op, out, code == VK_R_MEAN ? (double)NAN : code == VK_R_FPROD ? 1.0 : 0.0);
    return vk_fill(op, out, code == VK_R_MEAN ? vk_f2u(NAN) : code == VK_R_IPROD ? 1u
                                                            : code == VK_R_FPROD ? vk_f2u(1.0f) : 0u);
}

/* Reductions whose partial results are word pairs (codes[0]: values -> pairs, [1]: pairs ->
 * pairs, [2]: pairs -> result, [3]: values -> result): the exact int mean (int64 partial sums;
 * p[6] is the original size, which the sum is divided by, truncated toward zero, as
 * cpu_int.c) and the float product (m * 2^e partials with a double's range, as the CPU's
 * double product). Pairs while size > a chunk, then one pass into dst. src holds sdt: f16 /
 * bf16 (the float product only) read by reduce.comp's TD_HALF form in the first pass, whose
 * codes read a value's word through its LA; the pairs after it are f32 words. */
static td_status paired_pass(vk_dev *d, const char *op, bool first, td_dtype sdt, const uint32_t p[7],
                             vk_buf *const bufs[4], int64_t n)
{
    if (first && (sdt == TD_F16 || sdt == TD_BF16))
        return vk_dispatch_reduceh(d, op, sdt, p, 7, bufs, n);
    if (sdt == TD_F64) { /* every pass in double: the partials are doubles (8 bytes, as a pair) */
        TD_TRY(vk_need_f64(d, op));
        return vk_dispatch_n(d, op, VK_SH_REDUCED, p, 7, bufs, n);
    }
    return vk_dispatch_n(d, op, VK_SH_REDUCE, p, 7, bufs, n);
}

static td_status paired_reduce(vk_dev *d, const char *op, const uint32_t codes[4], vk_buf *src, td_dtype sdt,
                               vk_buf *dst, int64_t outer, int64_t size, int64_t inner)
{
    const uint32_t n = (uint32_t)size;
    vk_buf *vals = src;
    bool pairs = false;
    td_status st = TD_OK;
    while (st == TD_OK && size > VK_REDUCE_CHUNK) {
        int64_t chunk = (size + 1023) / 1024;
        chunk = chunk < 64 ? 64 : chunk > VK_REDUCE_CHUNK ? VK_REDUCE_CHUNK : chunk;
        const int64_t parts = (size + chunk - 1) / chunk;
        vk_buf *nv = NULL;
        st = vk_buf_get(d, op, (VkDeviceSize)(outer * parts * inner) * 8u, &nv);
        if (st == TD_OK) {
            const uint32_t p[7] = { (uint32_t)outer, (uint32_t)size, (uint32_t)inner, pairs ? codes[1] : codes[0],
                                    (uint32_t)chunk, (uint32_t)parts, n };
            vk_buf *const bufs[4] = { vals, NULL, NULL, nv };
            st = paired_pass(d, op, vals == src, sdt, p, bufs, outer * parts * inner);
        }
        if (vals != src)
            vk_buf_put(d, vals);
        vals = nv;
        pairs = true;
        size = parts;
    }
    if (st == TD_OK) {
        const uint32_t p[7] = { (uint32_t)outer, (uint32_t)size, (uint32_t)inner, pairs ? codes[2] : codes[3],
                                (uint32_t)size, 1u, n };
        vk_buf *const bufs[4] = { vals, NULL, NULL, dst };
        st = paired_pass(d, op, vals == src, sdt, p, bufs, outer * inner);
    }
    if (vals != src && vals != NULL)
        vk_buf_put(d, vals);
    return st;
}

static const uint32_t imean_codes[4] = { VK_R_ISUM64, VK_R_ISUM64_PAIRS, VK_R_IMEAN_PAIRS, VK_R_IMEAN };
static const uint32_t fprod_codes[4] = { VK_R_FPROD_PAIRS_OF, VK_R_FPROD_PAIRS, VK_R_FPROD_OF_PAIRS, VK_R_FPROD };

/* A float sum, mean, extreme or arg-extreme of an f16 / bf16 tensor: the first pass reads the
 * 16-bit values (reduce.comp's TD_HALF form), partials and the result are f32, and a value
 * result is rounded once into out on the device (cvt.comp), as the CPU's via f32 rounds. */
static td_status reduce_half(const char *op, uint32_t code, const td_tensor *a, int64_t outer, int64_t size,
                             int64_t inner, td_tensor *out)
{
    const bool arg = code == VK_R_ARGMAX || code == VK_R_ARGMIN;
    td_tensor *tmp = NULL;
    if (!arg)
        TD_TRY(td_tensor_new_on(op, td_be_device(out), TD_F32, td_be_shape(out), &tmp));
    td_tensor *dst = arg ? out : tmp;
    td_status st = size == 0 ? reduce_empty(op, code, dst)
                             : reduce(vk_of(td_be_device(a)), op, code, vk_buf_of(a), td_be_dtype(a), vk_buf_of(dst), outer, size,
                                      inner);
    if (st == TD_OK && !arg)
        st = td_vulkan_convert(tmp, out);
    td_tensor_release(tmp);
    return st;
}

static td_status sum_all(const char *op, uint32_t code, const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F16 || td_be_dtype(a) == TD_BF16)
        return reduce_half(op, code, a, 1, td_be_numel(a), 1, out);
    if (td_be_numel(a) == 0)
        return reduce_empty(op, code, out);
    return reduce(vk_of(td_be_device(a)), op, code, vk_buf_of(a), td_be_dtype(a), vk_buf_of(out), 1, td_be_numel(a), 1);
}

td_status td_vulkan_float_sum(const td_tensor *a, td_tensor *out)
{
    return sum_all("float_sum", VK_R_SUM, a, out);
}

td_status td_vulkan_int_sum(const td_tensor *a, td_tensor *out)
{
    return sum_all("int_sum", VK_R_ISUM, a, out);
}

td_status td_vulkan_int_prod(const td_tensor *a, td_tensor *out)
{
    return sum_all("int_prod", VK_R_IPROD, a, out);
}

td_status td_vulkan_int_mean(const td_tensor *a, td_tensor *out)
{
    return paired_reduce(vk_of(td_be_device(a)), "int_mean", imean_codes, vk_buf_of(a), TD_I32, vk_buf_of(out), 1, td_be_numel(a),
                         1);
}

/* The float product of a as [outer, size, inner] over size: f16 / bf16 read in the first pass
 * (widened exactly), the m * 2^e product as for f32, its f32 result rounded once into out. */
static td_status float_prod(const char *op, const td_tensor *a, int64_t outer, int64_t size, int64_t inner,
                            td_tensor *out)
{
    TD_TRY(vk_dt_check(op, (const td_tensor *const[]){ out }, 1, td_be_dtype(a)));
    td_tensor *dst = NULL;
    TD_TRY(vk_dt_result(op, out, &dst));
    const td_status st = size == 0 ? reduce_empty(op, VK_R_FPROD, dst)
                                   : paired_reduce(vk_of(td_be_device(a)), op, fprod_codes, vk_buf_of(a), td_be_dtype(a),
                                                   vk_buf_of(dst), outer, size, inner);
    return vk_dt_result_done(st, out, dst);
}

td_status td_vulkan_float_prod(const td_tensor *a, td_tensor *out)
{
    return float_prod("float_prod", a, 1, td_be_numel(a), 1, out);
}

static td_status reduce_dim(const char *op, uint32_t code, const td_tensor *a, int64_t dim, td_tensor *out)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    if (code == VK_R_FPROD)
        return float_prod(op, a, outer, size, inner, out);
    if (td_be_dtype(a) == TD_F16 || td_be_dtype(a) == TD_BF16)
        return reduce_half(op, code, a, outer, size, inner, out);
    if (size == 0)
        return reduce_empty(op, code, out);
    if (code == VK_R_IMEAN)
        return paired_reduce(vk_of(td_be_device(a)), op, imean_codes, vk_buf_of(a), TD_I32, vk_buf_of(out), outer, size,
                             inner);
    return reduce(vk_of(td_be_device(a)), op, code, vk_buf_of(a), td_be_dtype(a), vk_buf_of(out), outer, size, inner);
}

td_status td_vulkan_float_sum_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_sum_dim", VK_R_SUM, a, dim, out);
}

td_status td_vulkan_float_mean_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_mean_dim", VK_R_MEAN, a, dim, out);
}

td_status td_vulkan_int_sum_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("int_sum_dim", VK_R_ISUM, a, dim, out);
}

td_status td_vulkan_int_prod_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("int_prod_dim", VK_R_IPROD, a, dim, out);
}

td_status td_vulkan_int_mean_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("int_mean_dim", VK_R_IMEAN, a, dim, out);
}

td_status td_vulkan_float_prod_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return reduce_dim("float_prod_dim", VK_R_FPROD, a, dim, out);
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
