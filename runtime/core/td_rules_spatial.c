/* Shape rules of the spatial module ops (specs/ops/module_spatial.lua): 1-d convolution and
 * pools, adaptive average pools, interpolation and the transposed 2-d convolution. The 1-d
 * rules check what is particular to one spatial dim, then ask the 2-d rule of the op their
 * decomposition runs (on [N, C, 1, L]), so that a shape one accepts the other accepts too. */
#include <stdio.h>
#include <string.h>

#include "td_internal.h"

#define SPATIAL_MAX (INT64_C(1) << 30)

static td_status ndims(const char *op, const char *what, const td_shape *s, int n, const char *layout)
{
    if (s->ndim != n) {
        char buf[128];
        td_shape_format(s, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: %s must have %d dims %s, got %s", op, what, n, layout, buf);
    }
    return TD_OK;
}

/* A scalar attribute in [min, 2^30]. */
static td_status attr(const char *op, const char *what, int64_t v, int64_t min)
{
    if (v < min || v > SPATIAL_MAX)
        return td_error(TD_E_INVALID, "%s: %s is %lld; it must lie in [%lld, 2^30]", op, what, (long long)v,
                        (long long)min);
    return TD_OK;
}

/* An array attribute of n values, each in [min, 2^30]. */
static td_status attrs(const char *op, const char *what, const int64_t *v, int len, int n, int64_t min)
{
    if (v == NULL || len != n)
        return td_error(TD_E_INVALID, "%s: %s takes %d value%s, got %d", op, what, n, n == 1 ? "" : "s", len);
    for (int i = 0; i < n; i++)
        if (v[i] < min || v[i] > SPATIAL_MAX)
            return td_error(TD_E_INVALID, "%s: %s[%d] is %lld; it must lie in [%lld, 2^30]", op, what, i,
                            (long long)v[i], (long long)min);
    return TD_OK;
}

/* Pools and interpolation take an empty batch only (PyTorch: non-empty non-batch dims). */
static td_status nonempty_after_batch(const char *op, const td_shape *x)
{
    for (int i = 1; i < x->ndim; i++)
        if (x->dims[i] == 0) {
            char buf[128];
            td_shape_format(x, buf, sizeof buf);
            return td_error(TD_E_SHAPE, "%s: x %s has an empty channel or spatial dim; only the batch may be empty",
                            op, buf);
        }
    return TD_OK;
}

/* [N, C, L] -> [N, C, 1, L]. */
static td_shape as_2d(const td_shape *s)
{
    td_shape r = *s;
    r.ndim = 4;
    r.dims[3] = s->dims[2];
    r.dims[2] = 1;
    return r;
}

/* [N, C, 1, L] -> [N, C, L]. */
static td_status from_2d(const char *op, const td_shape *s, td_shape *out)
{
    const int64_t dims[3] = { s->dims[0], s->dims[1], s->dims[3] };
    return td_shape_from(op, dims, 3, out);
}

td_status td_rule_conv1d(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                         int64_t stride, int64_t padding, int64_t dilation, int64_t groups, td_shape *out)
{
    TD_TRY(ndims(op, "x", x, 3, "[N, C, L]"));
    TD_TRY(ndims(op, "weight", weight, 3, "[O, C / groups, k]"));
    TD_TRY(attr(op, "stride", stride, 1));
    TD_TRY(attr(op, "padding", padding, 0));
    TD_TRY(attr(op, "dilation", dilation, 1));
    const td_shape x2 = as_2d(x), w2 = as_2d(weight);
    const int64_t s2[2] = { 1, stride }, p2[2] = { 0, padding }, d2[2] = { 1, dilation };
    td_shape o2;
    TD_TRY(td_rule_conv2d(op, &x2, &w2, bias, s2, 2, p2, 2, d2, 2, groups, &o2));
    return from_2d(op, &o2, out);
}

static td_status pool1d_checks(const char *op, const td_shape *x, int64_t kernel, int64_t stride, int64_t padding)
{
    TD_TRY(ndims(op, "x", x, 3, "[N, C, L]"));
    TD_TRY(nonempty_after_batch(op, x));
    TD_TRY(attr(op, "kernel", kernel, 1));
    TD_TRY(attr(op, "stride", stride, 1));
    TD_TRY(attr(op, "padding", padding, 0));
    if (padding > kernel / 2) /* 2 padding > kernel, without the product */
        return td_error(TD_E_INVALID, "%s: padding is %lld; it must be at most half the kernel (%lld)", op,
                        (long long)padding, (long long)kernel);
    return TD_OK;
}

td_status td_rule_max_pool1d(const char *op, const td_shape *x, int64_t kernel, int64_t stride, int64_t padding,
                             int64_t dilation, td_shape *out)
{
    TD_TRY(pool1d_checks(op, x, kernel, stride, padding));
    TD_TRY(attr(op, "dilation", dilation, 1));
    const td_shape x2 = as_2d(x);
    const int64_t k2[2] = { 1, kernel }, s2[2] = { 1, stride }, p2[2] = { 0, padding }, d2[2] = { 1, dilation };
    td_shape o2;
    TD_TRY(td_rule_max_pool2d(op, &x2, k2, 2, s2, 2, p2, 2, d2, 2, &o2));
    return from_2d(op, &o2, out);
}

td_status td_rule_avg_pool1d(const char *op, const td_shape *x, int64_t kernel, int64_t stride, int64_t padding,
                             int64_t count_include_pad, td_shape *out)
{
    TD_TRY(pool1d_checks(op, x, kernel, stride, padding));
    const td_shape x2 = as_2d(x);
    const int64_t k2[2] = { 1, kernel }, s2[2] = { 1, stride }, p2[2] = { 0, padding };
    td_shape o2;
    TD_TRY(td_rule_avg_pool2d(op, &x2, k2, 2, s2, 2, p2, 2, count_include_pad, &o2));
    return from_2d(op, &o2, out);
}

/* Output sizes of adaptive pools and interpolation: at least 1. The adaptive pools'
 * decompositions compute window bounds in int32 tensors ((i + 1) * in + out - 1 for
 * i < out), so with `int32_bounds` out * (in + 1) must stay below 2^31. */
static td_status out_sizes(const char *op, const td_shape *x, const int64_t *size, int n, bool int32_bounds)
{
    for (int i = 0; i < n; i++) {
        const int64_t in = x->dims[x->ndim - n + i], o = size[i];
        if (o < 1 || o > SPATIAL_MAX)
            return td_error(TD_E_INVALID, "%s: output size[%d] is %lld; it must lie in [1, 2^30]", op, i,
                            (long long)o);
        /* in is at most 2^40 (a dim of a tensor), so in + 1 cannot overflow */
        if (int32_bounds && in + 1 > INT32_MAX / o)
            return td_error(TD_E_INVALID,
                            "%s: output size %lld of an input dim of %lld: out * (in + 1) must stay below 2^31", op,
                            (long long)o, (long long)in);
    }
    return TD_OK;
}

static td_status resized(const char *op, const td_shape *x, const int64_t *size, int n, td_shape *out)
{
    int64_t dims[4];
    for (int i = 0; i < x->ndim; i++)
        dims[i] = i < x->ndim - n ? x->dims[i] : size[i - (x->ndim - n)];
    return td_shape_from(op, dims, x->ndim, out);
}

td_status td_rule_adaptive_avg_pool1d(const char *op, const td_shape *x, int64_t size, td_shape *out)
{
    TD_TRY(ndims(op, "x", x, 3, "[N, C, L]"));
    TD_TRY(nonempty_after_batch(op, x));
    TD_TRY(out_sizes(op, x, &size, 1, true));
    return resized(op, x, &size, 1, out);
}

static td_status resize2d(const char *op, const td_shape *x, const int64_t *size, int size_len, bool int32_bounds,
                          td_shape *out)
{
    TD_TRY(ndims(op, "x", x, 4, "[N, C, H, W]"));
    TD_TRY(nonempty_after_batch(op, x));
    if (size == NULL || size_len != 2)
        return td_error(TD_E_INVALID, "%s: output_size takes 2 values {h, w}, got %d", op, size_len);
    TD_TRY(out_sizes(op, x, size, 2, int32_bounds));
    return resized(op, x, size, 2, out);
}

td_status td_rule_adaptive_avg_pool2d(const char *op, const td_shape *x, const int64_t *size, int size_len,
                                      td_shape *out)
{
    return resize2d(op, x, size, size_len, true, out);
}

td_status td_rule_interpolate2d(const char *op, const td_shape *x, const int64_t *size, int size_len, td_shape *out)
{
    return resize2d(op, x, size, size_len, false, out);
}

td_status td_rule_interpolate2d_bilinear(const char *op, const td_shape *x, const int64_t *size, int size_len,
                                         int64_t align_corners, td_shape *out)
{
    if (align_corners != 0 && align_corners != 1)
        return td_error(TD_E_INVALID, "%s: align_corners is %lld; it must be 0 or 1", op, (long long)align_corners);
    return resize2d(op, x, size, size_len, false, out);
}

td_status td_rule_conv_transpose2d(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                                   const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                                   const int64_t *output_padding, int output_padding_len, const int64_t *dilation,
                                   int dilation_len, int64_t groups, td_shape *out)
{
    TD_TRY(ndims(op, "x", x, 4, "[N, C, H, W]"));
    TD_TRY(ndims(op, "weight", weight, 4, "[C, O / groups, kH, kW]"));
    TD_TRY(attrs(op, "stride", stride, stride_len, 2, 1));
    TD_TRY(attrs(op, "padding", padding, padding_len, 2, 0));
    TD_TRY(attrs(op, "output_padding", output_padding, output_padding_len, 2, 0));
    TD_TRY(attrs(op, "dilation", dilation, dilation_len, 2, 1));
    if (groups < 1 || groups > SPATIAL_MAX)
        return td_error(TD_E_INVALID, "%s: groups is %lld; it must lie in [1, 2^30]", op, (long long)groups);
    for (int i = 0; i < 2; i++) /* PyTorch's bound: below stride or below dilation */
        if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])
            return td_error(TD_E_INVALID,
                            "%s: output_padding[%d] is %lld; it must be smaller than stride[%d] (%lld) or dilation[%d] (%lld)",
                            op, i, (long long)output_padding[i], i, (long long)stride[i], i, (long long)dilation[i]);
    char sx[128], sw[128];
    td_shape_format(x, sx, sizeof sx);
    td_shape_format(weight, sw, sizeof sw);
    const int64_t c = x->dims[1];
    if (weight->dims[0] != c)
        return td_error(TD_E_SHAPE, "%s: x %s has %lld channels but weight %s has %lld (weight is [C, O / groups, kH, kW])",
                        op, sx, (long long)c, sw, (long long)weight->dims[0]);
    if (c < groups || c % groups != 0)
        return td_error(TD_E_SHAPE, "%s: %lld input channels do not divide into %lld non-empty groups", op,
                        (long long)c, (long long)groups);
    if (x->dims[2] == 0 || x->dims[3] == 0)
        return td_error(TD_E_SHAPE, "%s: x %s has an empty spatial dim", op, sx);
    if (x->dims[2] > SPATIAL_MAX || x->dims[3] > SPATIAL_MAX)
        return td_error(TD_E_SHAPE, "%s: x %s has a spatial dim above 2^30", op, sx);
    int64_t o;
    if (!td_mul_ok(weight->dims[1], groups, &o))
        return td_error(TD_E_SHAPE, "%s: weight %s with %lld groups has more than 2^63 - 1 output channels", op, sw,
                        (long long)groups);
    if (bias->ndim != 1 || bias->dims[0] != o) {
        char sb[128];
        td_shape_format(bias, sb, sizeof sb);
        return td_error(TD_E_SHAPE, "%s: bias must be [%lld] (one per output channel), got %s", op, (long long)o, sb);
    }
    int64_t dims[4] = { x->dims[0], o, 0, 0 };
    for (int i = 0; i < 2; i++) {
        /* (in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1: in, stride,
         * padding and dilation are at most 2^30 but k (a dim of an empty weight) up to 2^40,
         * so the dilated kernel can pass int64: every step checked. */
        const int64_t k = weight->dims[2 + i];
        int64_t grown, pads, span, size;
        if (!td_mul_ok(dilation[i], k - 1, &span))
            return td_error(TD_E_SHAPE, "%s: a kernel of size %lld dilated by %lld in spatial dim %d spans more than "
                            "2^63 - 1 elements", op, (long long)k, (long long)dilation[i], i);
        if (!td_mul_ok(x->dims[2 + i] - 1, stride[i], &grown) || !td_mul_ok(padding[i], 2, &pads) ||
            !td_sub_ok(grown, pads, &size) || !td_add_ok(size, span, &size) ||
            !td_add_ok(size, output_padding[i], &size) || !td_add_ok(size, 1, &size))
            return td_error(TD_E_SHAPE, "%s: x %s and weight %s give an output size past 2^63 - 1 in spatial dim %d",
                            op, sx, sw, i);
        dims[2 + i] = size;
        if (k == 0 || size < 1)
            return td_error(TD_E_SHAPE, "%s: x %s and weight %s give an output size of %lld in spatial dim %d; it must be at least 1",
                            op, sx, sw, (long long)size, i);
    }
    return td_shape_from(op, dims, 4, out);
}
