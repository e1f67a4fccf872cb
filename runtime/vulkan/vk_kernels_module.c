/* Vulkan backend: 2-D max and average pooling and their backward ops (shaders/pool.comp),
 * matching runtime/cpu/cpu_module.c bit for bit (same first-maximum / NaN rule, same order of
 * additions). The max pool backward runs in two dispatches: each window's argmax into a
 * scratch buffer, then one thread per element of x gathers the grads of the windows it won.
 * A window (or, backward, the set of windows one element lies in) past 32768 places is
 * refused (lavapipe ends a shader's loops after 65535 iterations in all).
 * Pools and convolutions run in their operands' dtype (vk_dispatch_dt): f32; f16 / bf16 widened
 * exactly as loaded, computed in f32 into an f32 scratch that cvt.comp rounds once into the
 * result; f64 in double where the device has shaderFloat64. */
#include "vk_internal.h"

td_status vk_dt_result(const char *op, td_tensor *out, td_tensor **dst)
{
    *dst = out;
    if (td_be_dtype(out) != TD_F16 && td_be_dtype(out) != TD_BF16)
        return TD_OK;
    return td_tensor_new_on(op, td_be_device(out), TD_F32, td_be_shape(out), dst);
}

td_status vk_dt_result_done(td_status st, td_tensor *out, td_tensor *dst)
{
    if (dst == out)
        return st;
    if (st == TD_OK)
        st = td_vulkan_convert(dst, out);
    td_tensor_release(dst);
    return st;
}

td_status vk_dt_check(const char *op, const td_tensor *const *ts, int n, td_dtype dt)
{
    if (dt != TD_F32 && dt != TD_F16 && dt != TD_BF16 && dt != TD_F64)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no kernel for %s", op, td_dtype_name(dt));
    for (int k = 0; k < n; k++)
        if (ts[k] != NULL && td_be_dtype(ts[k]) != dt)
            return td_error(TD_E_INVALID, "%s: vulkan: operands of %s and %s (one dtype expected)", op,
                            td_dtype_name(dt), td_dtype_name(td_be_dtype(ts[k])));
    return TD_OK;
}

enum { PL_MAX, PL_ARGMAX, PL_MAX_BWD, PL_AVG, PL_AVG_BWD };

#define VK_POOL_MAX_LOOP 32768

static td_status pool(const char *op, int code, const td_tensor *a, vk_buf *c, const td_shape *xs, const td_shape *ys,
                      const int64_t *kernel, const int64_t *stride, const int64_t *padding, const int64_t *dilation,
                      int64_t include_pad, vk_buf *dst)
{
    const int64_t dh = dilation ? dilation[0] : 1, dw = dilation ? dilation[1] : 1;
    const int64_t ext_h = code == PL_AVG_BWD ? kernel[0] - 1 : (kernel[0] - 1) * dh;
    const int64_t ext_w = code == PL_AVG_BWD ? kernel[1] - 1 : (kernel[1] - 1) * dw;
    const int64_t loops = code == PL_MAX_BWD || code == PL_AVG_BWD
                              ? (ext_h / stride[0] + 1) * (ext_w / stride[1] + 1)
                              : kernel[0] * (kernel[1] + 1);
    if (loops > VK_POOL_MAX_LOOP)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: a %lld x %lld window (stride %lld x %lld) is more than its "
                        "shader loops over", op, (long long)kernel[0], (long long)kernel[1], (long long)stride[0],
                        (long long)stride[1]);
    const bool bwd = code == PL_MAX_BWD || code == PL_AVG_BWD;
    const int64_t n = bwd ? xs->numel : ys->numel;
    TD_TRY(vk_check_size(op, xs->numel));
    TD_TRY(vk_check_size(op, ys->numel));
    const uint32_t p[15] = { (uint32_t)(xs->dims[0] * xs->dims[1]), (uint32_t)xs->dims[2], (uint32_t)xs->dims[3],
                             (uint32_t)ys->dims[2], (uint32_t)ys->dims[3], (uint32_t)kernel[0], (uint32_t)kernel[1],
                             (uint32_t)stride[0], (uint32_t)stride[1], (uint32_t)padding[0], (uint32_t)padding[1],
                             (uint32_t)dh, (uint32_t)dw, (uint32_t)code, include_pad != 0 };
    vk_buf *const bufs[4] = { vk_buf_of(a), NULL, c, dst };
    return vk_dispatch_dt(vk_of(td_be_device(a)), op, VK_DT_POOL, td_be_dtype(a), p, 15, bufs, n);
}

/* pool() into out (of a's dtype), through an f32 scratch for f16 / bf16. */
static td_status pool_into(const char *op, int code, const td_tensor *a, vk_buf *c, const td_shape *xs,
                           const td_shape *ys, const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                           const int64_t *dilation, int64_t include_pad, td_tensor *out)
{
    TD_TRY(vk_dt_check(op, (const td_tensor *const[]){ out }, 1, td_be_dtype(a)));
    td_tensor *dst = NULL;
    TD_TRY(vk_dt_result(op, out, &dst));
    const td_status st =
        pool(op, code, a, c, xs, ys, kernel, stride, padding, dilation, include_pad, vk_buf_of(dst));
    return vk_dt_result_done(st, out, dst);
}

td_status td_vulkan_float_max_pool2d(const td_tensor *x, const int64_t *kernel, int kernel_len, const int64_t *stride,
                                     int stride_len, const int64_t *padding, int padding_len, const int64_t *dilation,
                                     int dilation_len, td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len, (void)dilation_len;
    return pool_into("float_max_pool2d", PL_MAX, x, NULL, td_be_shape(x), td_be_shape(out), kernel, stride, padding, dilation,
                     0, out);
}

/* The argmax pass of the backward, kept: PyTorch's return_indices. */
td_status td_vulkan_float_max_pool2d_indices(const td_tensor *x, const int64_t *kernel, int kernel_len,
                                             const int64_t *stride, int stride_len, const int64_t *padding,
                                             int padding_len, const int64_t *dilation, int dilation_len,
                                             td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len, (void)dilation_len;
    TD_TRY(vk_dt_check("float_max_pool2d_indices", NULL, 0, td_be_dtype(x)));
    return pool("float_max_pool2d_indices", PL_ARGMAX, x, NULL, td_be_shape(x), td_be_shape(out), kernel, stride, padding,
                dilation, 0, vk_buf_of(out));
}

td_status td_vulkan_float_max_pool2d_backward(const td_tensor *x, const td_tensor *grad, const int64_t *kernel,
                                              int kernel_len, const int64_t *stride, int stride_len,
                                              const int64_t *padding, int padding_len, const int64_t *dilation,
                                              int dilation_len, td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len, (void)dilation_len;
    const char *op = "float_max_pool2d_backward";
    TD_TRY(vk_dt_check(op, (const td_tensor *const[]){ grad, out }, 2, td_be_dtype(x)));
    if (td_be_numel(grad) == 0)
        return vk_fill(op, out, 0u);
    vk_dev *d = vk_of(td_be_device(x));
    vk_buf *idx = NULL;
    TD_TRY(vk_buf_get(d, op, (VkDeviceSize)td_be_numel(grad) * 4u, &idx));
    td_status st = pool(op, PL_ARGMAX, x, NULL, td_be_shape(x), td_be_shape(grad), kernel, stride, padding, dilation, 0, idx);
    if (st == TD_OK)
        st = pool_into(op, PL_MAX_BWD, grad, idx, td_be_shape(x), td_be_shape(grad), kernel, stride, padding, dilation, 0,
                       out);
    vk_buf_put(d, idx); /* deferred until the batch is submitted */
    return st;
}

td_status td_vulkan_float_avg_pool2d(const td_tensor *x, const int64_t *kernel, int kernel_len, const int64_t *stride,
                                     int stride_len, const int64_t *padding, int padding_len, int64_t count_include_pad,
                                     td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len;
    return pool_into("float_avg_pool2d", PL_AVG, x, NULL, td_be_shape(x), td_be_shape(out), kernel, stride, padding, NULL,
                     count_include_pad, out);
}

td_status td_vulkan_float_avg_pool2d_backward(const td_tensor *x, const td_tensor *grad, const int64_t *kernel,
                                              int kernel_len, const int64_t *stride, int stride_len,
                                              const int64_t *padding, int padding_len, int64_t count_include_pad,
                                              td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len;
    TD_TRY(vk_dt_check("float_avg_pool2d_backward", (const td_tensor *const[]){ x, out }, 2, td_be_dtype(grad)));
    if (td_be_numel(grad) == 0)
        return vk_fill("float_avg_pool2d_backward", out, 0u);
    return pool_into("float_avg_pool2d_backward", PL_AVG_BWD, grad, NULL, td_be_shape(x), td_be_shape(grad), kernel, stride,
                     padding, NULL, count_include_pad, out);
}

/* ---- conv2d and its backward ops: shaders/conv.comp ---- */

enum { CV_FWD, CV_BWD_INPUT, CV_BWD_WEIGHT };

#define VK_CONV_RANGE 4096 /* reduction indices of one dispatch */

/* xs, ws, ys: the shapes of x, weight and the conv's output; a, b, c as conv.comp binds them. */
static td_status conv(const char *op, int code, const td_tensor *a, const td_tensor *b, const td_tensor *c,
                      const td_shape *xs, const td_shape *ws, const td_shape *ys, const int64_t *stride,
                      const int64_t *padding, const int64_t *dilation, int64_t groups, td_tensor *out)
{
    const int64_t N = xs->dims[0], C = xs->dims[1], O = ws->dims[0], kh = ws->dims[2], kw = ws->dims[3];
    const int64_t OH = ys->dims[2], OW = ys->dims[3];
    const int64_t R = code == CV_FWD ? (C / groups) * kh * kw
                    : code == CV_BWD_INPUT ? (O / groups) * kh * kw
                                           : N * OH * OW;
    TD_TRY(vk_check_size(op, xs->numel));
    TD_TRY(vk_check_size(op, ys->numel));
    TD_TRY(vk_check_size(op, ws->numel));
    TD_TRY(vk_check_size(op, R));
    TD_TRY(vk_dt_check(op, (const td_tensor *const[]){ b, c, out }, 3, td_be_dtype(a)));
    td_tensor *dst = NULL;
    TD_TRY(vk_dt_result(op, out, &dst));
    uint32_t p[19] = { (uint32_t)N, (uint32_t)C, (uint32_t)xs->dims[2], (uint32_t)xs->dims[3], (uint32_t)O,
                       (uint32_t)OH, (uint32_t)OW, (uint32_t)kh, (uint32_t)kw, (uint32_t)stride[0],
                       (uint32_t)stride[1], (uint32_t)padding[0], (uint32_t)padding[1], (uint32_t)dilation[0],
                       (uint32_t)dilation[1], (uint32_t)groups, (uint32_t)code, 0, 0 };
    vk_buf *const bufs[4] = { vk_buf_of(a), vk_buf_of(b), c ? vk_buf_of(c) : NULL, vk_buf_of(dst) };
    vk_dev *d = vk_of(td_be_device(out));
    int64_t r0 = 0;
    td_status st = TD_OK;
    do { /* one dispatch at least: an empty reduction still writes the bias, or zeros */
        const int64_t r1 = R - r0 < VK_CONV_RANGE ? R : r0 + VK_CONV_RANGE;
        p[17] = (uint32_t)r0;
        p[18] = (uint32_t)r1;
        st = vk_dispatch_dt(d, op, VK_DT_CONV, td_be_dtype(a), p, 19, bufs, td_be_numel(out));
        r0 = r1;
    } while (st == TD_OK && r0 < R);
    return vk_dt_result_done(st, out, dst);
}

td_status td_vulkan_float_conv2d(const td_tensor *x, const td_tensor *weight, const td_tensor *bias,
                                 const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                                 const int64_t *dilation, int dilation_len, int64_t groups, td_tensor *out)
{
    (void)stride_len, (void)padding_len, (void)dilation_len;
    return conv("float_conv2d", CV_FWD, x, weight, bias, td_be_shape(x), td_be_shape(weight), td_be_shape(out), stride, padding,
                dilation, groups, out);
}

td_status td_vulkan_float_conv2d_backward_input(const td_tensor *grad, const td_tensor *weight, const td_tensor *x,
                                                const int64_t *stride, int stride_len, const int64_t *padding,
                                                int padding_len, const int64_t *dilation, int dilation_len,
                                                int64_t groups, td_tensor *out)
{
    (void)stride_len, (void)padding_len, (void)dilation_len;
    return conv("float_conv2d_backward_input", CV_BWD_INPUT, grad, weight, NULL, td_be_shape(x), td_be_shape(weight),
                td_be_shape(grad), stride, padding, dilation, groups, out);
}

td_status td_vulkan_float_conv2d_backward_weight(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                                 const int64_t *stride, int stride_len, const int64_t *padding,
                                                 int padding_len, const int64_t *dilation, int dilation_len,
                                                 int64_t groups, td_tensor *out)
{
    (void)stride_len, (void)padding_len, (void)dilation_len;
    return conv("float_conv2d_backward_weight", CV_BWD_WEIGHT, grad, x, NULL, td_be_shape(x), td_be_shape(weight),
                td_be_shape(grad), stride, padding, dilation, groups, out);
}
