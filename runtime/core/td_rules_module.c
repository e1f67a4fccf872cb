/* Shape rules of the module ops (conv, pool, linear; specs/ops/module.lua). */
#include <stdio.h>
#include <string.h>

#include "td_internal.h"

/* A {h, w} pair of an attribute: exactly two values, each at least `min`. */
static td_status pair(const char *op, const char *what, const int64_t *v, int len, int64_t min)
{
    if (v == NULL || len != 2)
        return td_error(TD_E_INVALID, "%s: %s takes 2 values {h, w}, got %d", op, what, len);
    for (int i = 0; i < 2; i++)
        if (v[i] < min || v[i] > (INT64_C(1) << 30))
            return td_error(TD_E_INVALID, "%s: %s[%d] is %lld; it must lie in [%lld, 2^30]", op, what, i,
                            (long long)v[i], (long long)min);
    return TD_OK;
}

static td_status four_dims(const char *op, const char *what, const char *layout, const td_shape *s)
{
    if (s->ndim != 4) {
        char buf[128];
        td_shape_format(s, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: %s must have 4 dims %s, got %s", op, what, layout, buf);
    }
    return TD_OK;
}

/* Output size of one spatial dim: floor((in + 2 pad - dil (k - 1) - 1) / stride) + 1.
 * stride, pad and dil are at most 2^30 (pair) but in and k may be up to 2^40 (a dim of an
 * empty tensor), so the dilated span dil (k - 1) + 1 can pass int64: checked. */
static td_status out_size(const char *op, int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil,
                          int64_t *out)
{
    int64_t span, padded;
    if (!td_mul_ok(dil, k - 1, &span) || !td_add_ok(span, 1, &span))
        return td_error(TD_E_SHAPE, "%s: a kernel of size %lld dilated by %lld spans more than 2^63 - 1 elements",
                        op, (long long)k, (long long)dil);
    if (!td_mul_ok(pad, 2, &padded) || !td_add_ok(in, padded, &padded))
        return td_error(TD_E_SHAPE, "%s: an input of size %lld padded by %lld on each side overflows", op,
                        (long long)in, (long long)pad);
    if (padded < span)
        return td_error(TD_E_SHAPE, "%s: the kernel spans %lld but the padded input has only %lld", op,
                        (long long)span, (long long)padded);
    /* span <= padded <= 2^40 + 2^31 and span >= 1 - 2^30 (k = 0): padded - span fits */
    *out = (padded - span) / stride + 1;
    return TD_OK;
}

static td_status conv_geometry(const char *op, const td_shape *x, const td_shape *w, const int64_t *stride,
                               int stride_len, const int64_t *padding, int padding_len, const int64_t *dilation,
                               int dilation_len, int64_t groups, int64_t oh_ow[2])
{
    TD_TRY(four_dims(op, "x", "[N, C, H, W]", x));
    TD_TRY(four_dims(op, "weight", "[O, C / groups, kH, kW]", w));
    TD_TRY(pair(op, "stride", stride, stride_len, 1));
    TD_TRY(pair(op, "padding", padding, padding_len, 0));
    TD_TRY(pair(op, "dilation", dilation, dilation_len, 1));
    if (groups < 1)
        return td_error(TD_E_INVALID, "%s: groups is %lld; it must be at least 1", op, (long long)groups);
    const int64_t c = x->dims[1], o = w->dims[0];
    /* PyTorch: "expected weight to be at least groups at dimension 0" (no empty output channels). */
    if (o < groups)
        return td_error(TD_E_SHAPE, "%s: weight has %lld output channels; %lld groups need at least as many", op,
                        (long long)o, (long long)groups);
    if (c % groups != 0 || o % groups != 0)
        return td_error(TD_E_SHAPE, "%s: %lld input and %lld output channels do not divide into %lld groups", op,
                        (long long)c, (long long)o, (long long)groups);
    if (w->dims[1] != c / groups)
        return td_error(TD_E_SHAPE, "%s: weight has %lld input channels per group, x has %lld / %lld groups", op,
                        (long long)w->dims[1], (long long)c, (long long)groups);
    for (int i = 0; i < 2; i++)
        TD_TRY(out_size(op, x->dims[2 + i], w->dims[2 + i], stride[i], padding[i], dilation[i], &oh_ow[i]));
    return TD_OK;
}

td_status td_rule_conv2d(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                         const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                         const int64_t *dilation, int dilation_len, int64_t groups, td_shape *out)
{
    int64_t ohw[2];
    TD_TRY(conv_geometry(op, x, weight, stride, stride_len, padding, padding_len, dilation, dilation_len, groups,
                         ohw));
    if (bias->ndim != 1 || bias->dims[0] != weight->dims[0]) {
        char buf[128];
        td_shape_format(bias, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: bias must be [%lld] (one per output channel), got %s", op,
                        (long long)weight->dims[0], buf);
    }
    const int64_t dims[4] = { x->dims[0], weight->dims[0], ohw[0], ohw[1] };
    return td_shape_from(op, dims, 4, out);
}

/* grad must be the shape float_conv2d gives for x and weight. */
static td_status check_grad(const char *op, const td_shape *grad, const int64_t *want, int n)
{
    bool ok = grad->ndim == n;
    for (int i = 0; ok && i < n; i++)
        ok = grad->dims[i] == want[i];
    if (!ok) {
        char g[128], w[128];
        td_shape wsh = { .ndim = n };
        memcpy(wsh.dims, want, sizeof(int64_t) * (size_t)n);
        td_shape_format(grad, g, sizeof g);
        td_shape_format(&wsh, w, sizeof w);
        return td_error(TD_E_SHAPE, "%s: grad has shape %s, the forward result has %s", op, g, w);
    }
    return TD_OK;
}

td_status td_rule_conv2d_backward_input(const char *op, const td_shape *grad, const td_shape *weight,
                                        const td_shape *x, const int64_t *stride, int stride_len,
                                        const int64_t *padding, int padding_len, const int64_t *dilation,
                                        int dilation_len, int64_t groups, td_shape *out)
{
    int64_t ohw[2];
    TD_TRY(conv_geometry(op, x, weight, stride, stride_len, padding, padding_len, dilation, dilation_len, groups,
                         ohw));
    const int64_t want[4] = { x->dims[0], weight->dims[0], ohw[0], ohw[1] };
    TD_TRY(check_grad(op, grad, want, 4));
    *out = *x;
    return TD_OK;
}

td_status td_rule_conv2d_backward_weight(const char *op, const td_shape *grad, const td_shape *x,
                                         const td_shape *weight, const int64_t *stride, int stride_len,
                                         const int64_t *padding, int padding_len, const int64_t *dilation,
                                         int dilation_len, int64_t groups, td_shape *out)
{
    int64_t ohw[2];
    TD_TRY(conv_geometry(op, x, weight, stride, stride_len, padding, padding_len, dilation, dilation_len, groups,
                         ohw));
    const int64_t want[4] = { x->dims[0], weight->dims[0], ohw[0], ohw[1] };
    TD_TRY(check_grad(op, grad, want, 4));
    *out = *weight;
    return TD_OK;
}

/* Pooling windows: padding at most half the kernel, so every window holds an input element. */
static td_status pool_geometry(const char *op, const td_shape *x, const int64_t *kernel, int kernel_len,
                               const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                               const int64_t *dilation, int dilation_len, int64_t dims[4])
{
    static const int64_t one[2] = { 1, 1 };
    TD_TRY(four_dims(op, "x", "[N, C, H, W]", x));
    /* PyTorch pools take an empty batch only ("optional 0 dim batch size"). */
    if (x->dims[1] == 0 || x->dims[2] == 0 || x->dims[3] == 0) {
        char buf[128];
        td_shape_format(x, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: x %s has an empty channel or spatial dim; only the batch may be empty", op,
                        buf);
    }
    TD_TRY(pair(op, "kernel", kernel, kernel_len, 1));
    TD_TRY(pair(op, "stride", stride, stride_len, 1));
    TD_TRY(pair(op, "padding", padding, padding_len, 0));
    if (dilation == NULL && dilation_len == 0)
        dilation = one, dilation_len = 2;
    TD_TRY(pair(op, "dilation", dilation, dilation_len, 1));
    /* kernel, padding and dilation are at most 2^30 (pair): 2 padding and the dilated
     * kernel cannot overflow, and out_size checks them anyway. */
    for (int i = 0; i < 2; i++)
        if (padding[i] > kernel[i] / 2)
            return td_error(TD_E_INVALID, "%s: padding[%d] is %lld; it must be at most half the kernel (%lld)", op,
                            i, (long long)padding[i], (long long)kernel[i]);
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int i = 0; i < 2; i++)
        TD_TRY(out_size(op, x->dims[2 + i], kernel[i], stride[i], padding[i], dilation[i], &dims[2 + i]));
    return TD_OK;
}

td_status td_rule_max_pool2d(const char *op, const td_shape *x, const int64_t *kernel, int kernel_len,
                             const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                             const int64_t *dilation, int dilation_len, td_shape *out)
{
    int64_t dims[4];
    TD_TRY(pool_geometry(op, x, kernel, kernel_len, stride, stride_len, padding, padding_len, dilation, dilation_len,
                         dims));
    return td_shape_from(op, dims, 4, out);
}

td_status td_rule_max_pool2d_backward(const char *op, const td_shape *x, const td_shape *grad, const int64_t *kernel,
                                      int kernel_len, const int64_t *stride, int stride_len, const int64_t *padding,
                                      int padding_len, const int64_t *dilation, int dilation_len, td_shape *out)
{
    int64_t dims[4];
    TD_TRY(pool_geometry(op, x, kernel, kernel_len, stride, stride_len, padding, padding_len, dilation, dilation_len,
                         dims));
    TD_TRY(check_grad(op, grad, dims, 4));
    *out = *x;
    return TD_OK;
}

static td_status check_flag(const char *op, int64_t count_include_pad)
{
    if (count_include_pad != 0 && count_include_pad != 1)
        return td_error(TD_E_INVALID, "%s: count_include_pad is %lld; it must be 0 or 1", op,
                        (long long)count_include_pad);
    return TD_OK;
}

td_status td_rule_avg_pool2d(const char *op, const td_shape *x, const int64_t *kernel, int kernel_len,
                             const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                             int64_t count_include_pad, td_shape *out)
{
    int64_t dims[4];
    TD_TRY(check_flag(op, count_include_pad));
    TD_TRY(pool_geometry(op, x, kernel, kernel_len, stride, stride_len, padding, padding_len, NULL, 0, dims));
    return td_shape_from(op, dims, 4, out);
}

td_status td_rule_avg_pool2d_backward(const char *op, const td_shape *x, const td_shape *grad, const int64_t *kernel,
                                      int kernel_len, const int64_t *stride, int stride_len, const int64_t *padding,
                                      int padding_len, int64_t count_include_pad, td_shape *out)
{
    int64_t dims[4];
    TD_TRY(check_flag(op, count_include_pad));
    TD_TRY(pool_geometry(op, x, kernel, kernel_len, stride, stride_len, padding, padding_len, NULL, 0, dims));
    TD_TRY(check_grad(op, grad, dims, 4));
    *out = *x;
    return TD_OK;
}

td_status td_rule_linear(const char *op, const td_shape *x, const td_shape *w, const td_shape *b, td_shape *out)
{
    char sx[128], sw[128], sb[128];
    td_shape_format(x, sx, sizeof sx);
    td_shape_format(w, sw, sizeof sw);
    td_shape_format(b, sb, sizeof sb);
    if (x->ndim < 1 || w->ndim != 2 || b->ndim != 1)
        return td_error(TD_E_SHAPE, "%s: x needs at least 1 dim, w 2 and b 1 (got %s, %s, %s)", op, sx, sw, sb);
    if (x->dims[x->ndim - 1] != w->dims[0] || b->dims[0] != w->dims[1])
        return td_error(TD_E_SHAPE, "%s: x %s, w %s and b %s do not fit x [..., in], w [in, out], b [out]", op, sx,
                        sw, sb);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->ndim);
    dims[x->ndim - 1] = w->dims[1];
    return td_shape_from(op, dims, x->ndim, out);
}
