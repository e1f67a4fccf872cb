/* Vulkan backend: unary math, casts, broadcasting binary ops, comparisons and masks. */
#include "vk_internal.h"

/* The ops ewd.comp computes on f64 (mathd.glsl: sin and cos with their own range reduction,
 * gelu with its own erf / erfc): the float -> float ones and float_into_int. */
static bool f64_unary(uint32_t code)
{
    return code <= VK_U_MUL_S || code == VK_U_F2I;
}

static td_status unary(const char *op, uint32_t code, const td_tensor *a, float s0, float s1, td_tensor *out)
{
    const uint32_t p[4] = { (uint32_t)td_be_numel(out), code, vk_f2u(s0), vk_f2u(s1) };
    vk_buf *const bufs[4] = { vk_buf_of(a), NULL, NULL, vk_buf_of(out) };
    vk_dev *d = vk_of(td_be_device(out));
    if (td_be_dtype(a) == TD_F64) {
        if (!f64_unary(code))
            return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no f64 kernel", op);
        return vk_dispatch_ewd(d, op, 32u + code, p, 4, bufs, td_be_numel(out));
    }
    if (td_be_dtype(a) == TD_F16 || td_be_dtype(a) == TD_BF16) { /* unary.comp's TD_HALF form (specialized either way) */
        if (code > VK_U_MUL_S && code != VK_U_F2I)
            return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no %s kernel", op, td_dtype_name(td_be_dtype(a)));
        return vk_dispatch_unaryh(d, op, code, td_be_dtype(a), p, 4, bufs, td_be_numel(out));
    }
    if (d->ew_kernel == TD_VULKAN_ELEMENTWISE_GENERIC)
        return vk_dispatch_n(d, op, VK_SH_UNARY, p, 4, bufs, td_be_numel(out));
    return vk_dispatch_unary(d, op, code, p, 4, bufs, td_be_numel(out));
}

#define VK_UNARY(NAME, CODE)                                           \
    td_status td_vulkan_##NAME(const td_tensor *a, td_tensor *out)     \
    {                                                                  \
        return unary(#NAME, CODE, a, 0.0f, 0.0f, out);                 \
    }

VK_UNARY(float_neg, VK_U_NEG)
VK_UNARY(float_abs, VK_U_ABS)
VK_UNARY(float_exp, VK_U_EXP)
VK_UNARY(float_log, VK_U_LOG)
VK_UNARY(float_sqrt, VK_U_SQRT)
VK_UNARY(float_sin, VK_U_SIN)
VK_UNARY(float_cos, VK_U_COS)
VK_UNARY(float_tanh, VK_U_TANH)
VK_UNARY(float_sigmoid, VK_U_SIGMOID)
VK_UNARY(float_relu, VK_U_RELU)
VK_UNARY(float_gelu, VK_U_GELU)
VK_UNARY(float_into_int, VK_U_F2I)
VK_UNARY(int_into_float, VK_U_I2F)
VK_UNARY(bool_into_float, VK_U_B2F)
VK_UNARY(bool_into_int, VK_U_B2I)
VK_UNARY(bool_not, VK_U_NOT)

td_status td_vulkan_float_powf_scalar(const td_tensor *a, float exponent, td_tensor *out)
{
    return unary("float_powf_scalar", VK_U_POWF, a, exponent, 0.0f, out);
}

td_status td_vulkan_float_clamp(const td_tensor *a, float lo, float hi, td_tensor *out)
{
    return unary("float_clamp", VK_U_CLAMP, a, lo, hi, out);
}

td_status td_vulkan_float_add_scalar(const td_tensor *a, float value, td_tensor *out)
{
    return unary("float_add_scalar", VK_U_ADD_S, a, value, 0.0f, out);
}

td_status td_vulkan_float_mul_scalar(const td_tensor *a, float value, td_tensor *out)
{
    return unary("float_mul_scalar", VK_U_MUL_S, a, value, 0.0f, out);
}

/* ewv.comp, where every input has the result's shape or one element: VK_EWV_ELEMS elements per
 * invocation, no index math, a pipeline specialized to the op and to which inputs are one
 * element. Parameters: n, op, 0, scalar. */
static td_status elementwise_vec(const char *op, uint32_t code, const td_tensor *const ins[3], uint32_t scalar,
                                 td_tensor *out)
{
    const int64_t n = td_be_numel(out);
    const uint32_t p[4] = { (uint32_t)n, code, 0u, scalar };
    uint32_t flags = 0;
    vk_buf *bufs[4] = { NULL, NULL, NULL, vk_buf_of(out) };
    for (int k = 0; k < 3; k++) {
        if (ins[k] == NULL)
            continue;
        if (td_be_numel(ins[k]) == 1 && n != 1)
            flags |= 1u << k;
        bufs[k] = vk_buf_of(ins[k]);
    }
    TD_TRY(vk_check_size(op, n));
    return vk_dispatch_ewv(vk_of(td_be_device(out)), op, code, flags, p, 4, bufs, (n + VK_EWV_ELEMS - 1) / VK_EWV_ELEMS);
}

/* Whether every input has out's shape (the same element order) or a single element. Under
 * broadcasting each input dim equals out's or is 1, so an equal numel means equal dims (up to
 * leading 1s). */
static bool same_or_scalar(const td_tensor *const ins[3], const td_tensor *out)
{
    const td_shape *s = td_be_shape(out);
    for (int k = 0; k < 3; k++) {
        const td_tensor *t = ins[k];
        if (t == NULL || td_be_numel(t) == 1)
            continue;
        if (td_be_numel(t) != s->numel)
            return false;
    }
    return true;
}

static td_status elementwise(const char *op, uint32_t code, const td_tensor *const ins[3], uint32_t scalar,
                             td_tensor *out);

/* A float binary op or comparison on f64 a and b: ewd.comp, one element per invocation, the
 * broadcast through strides as ew.comp's (one dim of stride 1 where both have out's element order). */
static td_status elementwise_f64(const char *op, uint32_t code, const td_tensor *const ins[3], td_tensor *out)
{
    if ((code > VK_B_FLE && code != VK_EWD_REM && code != VK_EWD_ATAN2) || td_be_dtype(ins[1]) != TD_F64)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no f64 kernel", op);
    uint32_t p[28] = { 0 };
    const td_shape *s = td_be_shape(out);
    p[0] = (uint32_t)s->numel;
    if (td_be_numel(ins[0]) != s->numel || td_be_numel(ins[1]) != s->numel) {
        p[1] = (uint32_t)s->ndim;
        for (int d = 0; d < s->ndim; d++)
            p[4 + d] = (uint32_t)s->dims[d];
        for (int k = 0; k < 2; k++) {
            int64_t st[TD_MAX_DIMS] = { 0 };
            td_broadcast_strides(td_be_shape(ins[k]), s, st);
            for (int d = 0; d < s->ndim; d++)
                p[12 + 8 * k + d] = (uint32_t)st[d];
        }
    } else { /* same element order: one dim of stride 1 */
        p[1] = 1u;
        p[4] = (uint32_t)s->numel;
        p[12] = p[20] = 1u;
    }
    vk_buf *bufs[4] = { vk_buf_of(ins[0]), vk_buf_of(ins[1]), NULL, vk_buf_of(out) };
    return vk_dispatch_ewd(vk_of(td_be_device(out)), op, code, p, 28, bufs, s->numel);
}

td_status vk_binary_f64(const char *op, uint32_t code, const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    if (td_be_numel(out) == 0)
        return TD_OK;
    const td_tensor *const ins[3] = { a, b, NULL };
    return elementwise_f64(op, code, ins, out);
}

/* A float op (a, b of one dtype, f16 or bf16): ewv.comp's TD_HALF form where the inputs have the
 * result's shape or one element, computing in f32 and rounding once; otherwise (a broadcast, or
 * the GENERIC switch) the same on f32 copies made on the device. Both round as the CPU's via f32. */
static td_status elementwise_half(const char *op, uint32_t code, const td_tensor *const ins[3], td_tensor *out)
{
    const td_dtype dt = td_be_dtype(ins[0]);
    vk_dev *d = vk_of(td_be_device(out));
    const int64_t n = td_be_numel(out);
    if (d->ew_kernel == TD_VULKAN_ELEMENTWISE_AUTO && same_or_scalar(ins, out)) {
        const uint32_t p[4] = { (uint32_t)n, code, 0u, 0u };
        uint32_t flags = 0;
        vk_buf *bufs[4] = { vk_buf_of(ins[0]), vk_buf_of(ins[1]), NULL, vk_buf_of(out) };
        for (int k = 0; k < 2; k++)
            if (td_be_numel(ins[k]) == 1 && n != 1)
                flags |= 1u << k;
        TD_TRY(vk_check_size(op, n));
        return vk_dispatch_ewvh(d, op, code, flags, dt, p, 4, bufs, (n + VK_EWV_ELEMS - 1) / VK_EWV_ELEMS);
    }
    td_tensor *w[3] = { NULL, NULL, NULL }; /* f32 copies of a and b, and of the result */
    td_status st = TD_OK;
    for (int k = 0; k < 2 && st == TD_OK; k++) {
        st = td_tensor_new_on(op, td_be_device(out), TD_F32, td_be_shape(ins[k]), &w[k]);
        if (st == TD_OK)
            st = td_vulkan_convert(ins[k], w[k]);
    }
    const bool low = td_be_dtype(out) == dt; /* arithmetic; a comparison's bools are written directly */
    if (st == TD_OK && low)
        st = td_tensor_new_on(op, td_be_device(out), TD_F32, td_be_shape(out), &w[2]);
    if (st == TD_OK) {
        const td_tensor *const wins[3] = { w[0], w[1], NULL };
        st = elementwise(op, code, wins, 0u, low ? w[2] : out);
    }
    if (st == TD_OK && low)
        st = td_vulkan_convert(w[2], out);
    for (int k = 0; k < 3; k++)
        td_tensor_release(w[k]);
    return st;
}

/* ew.comp parameters: n, op, ndim, scalar, dims[8], then 8 strides per input (0 on broadcast dims). */
static td_status elementwise(const char *op, uint32_t code, const td_tensor *const ins[3], uint32_t scalar,
                             td_tensor *out)
{
    if (td_be_numel(out) == 0)
        return TD_OK;
    if (td_be_dtype(ins[0]) == TD_F16 || td_be_dtype(ins[0]) == TD_BF16)
        return elementwise_half(op, code, ins, out);
    if (td_be_dtype(ins[0]) == TD_F64)
        return elementwise_f64(op, code, ins, out);
    if (vk_of(td_be_device(out))->ew_kernel == TD_VULKAN_ELEMENTWISE_AUTO && same_or_scalar(ins, out))
        return elementwise_vec(op, code, ins, scalar, out);
    uint32_t p[36] = { 0 };
    const td_shape *s = td_be_shape(out);
    p[0] = (uint32_t)s->numel;
    p[1] = code;
    p[2] = (uint32_t)s->ndim;
    p[3] = scalar;
    for (int d = 0; d < s->ndim; d++)
        p[4 + d] = (uint32_t)s->dims[d];
    vk_buf *bufs[4] = { NULL, NULL, NULL, vk_buf_of(out) };
    for (int k = 0; k < 3; k++) {
        if (ins[k] == NULL)
            continue;
        int64_t st[TD_MAX_DIMS] = { 0 };
        td_broadcast_strides(td_be_shape(ins[k]), s, st);
        for (int d = 0; d < s->ndim; d++)
            p[12 + 8 * k + d] = (uint32_t)st[d];
        bufs[k] = vk_buf_of(ins[k]);
    }
    vk_dev *dev = vk_of(td_be_device(out));
    if (dev->ew_kernel == TD_VULKAN_ELEMENTWISE_GENERIC)
        return vk_dispatch_n(dev, op, VK_SH_EW, p, 36, bufs, s->numel);
    return vk_dispatch_ew(dev, op, code, p, 36, bufs, s->numel); /* a broadcast: the specialized pipeline */
}

#define VK_BINARY(NAME, CODE)                                                              \
    td_status td_vulkan_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)     \
    {                                                                                      \
        const td_tensor *const ins[3] = { a, b, NULL };                                    \
        return elementwise(#NAME, CODE, ins, 0u, out);                                     \
    }

VK_BINARY(float_add, VK_B_FADD)
VK_BINARY(float_sub, VK_B_FSUB)
VK_BINARY(float_mul, VK_B_FMUL)
VK_BINARY(float_div, VK_B_FDIV)
VK_BINARY(float_powf, VK_B_FPOW)
VK_BINARY(float_maximum, VK_B_FMAX)
VK_BINARY(float_minimum, VK_B_FMIN)
VK_BINARY(float_equal, VK_B_FEQ)
VK_BINARY(float_greater, VK_B_FGT)
VK_BINARY(float_greater_equal, VK_B_FGE)
VK_BINARY(float_lower, VK_B_FLT)
VK_BINARY(float_lower_equal, VK_B_FLE)
VK_BINARY(int_add, VK_B_IADD)
VK_BINARY(int_sub, VK_B_ISUB)
VK_BINARY(int_mul, VK_B_IMUL)
VK_BINARY(int_equal, VK_B_IEQ)
VK_BINARY(int_greater, VK_B_IGT)
VK_BINARY(int_lower, VK_B_ILT)
VK_BINARY(bool_and, VK_B_AND)
VK_BINARY(bool_or, VK_B_OR)

/* A zero divisor is detected on the host, before anything is recorded, so the op itself
 * returns TD_E_INVALID like the CPU backend. Reading b finishes the open batch (one submit). */
static td_status check_divisor(const char *op, const td_tensor *b)
{
    vk_dev *d = vk_of(td_be_device(b));
    if (td_be_numel(b) == 0)
        return TD_OK; /* no buffer, and no divisor */
    vk_lock(d);
    td_status st = TD_OK;
    if (d->recording && vk_buf_of(b)->batch == d->batch)
        st = vk_flush(d, op);
    const int32_t *pb = (const int32_t *)vk_buf_of(b)->map;
    for (int64_t i = 0; st == TD_OK && i < td_be_numel(b); i++)
        if (pb[i] == 0)
            st = td_error(TD_E_INVALID, "%s: vulkan: division by zero", op);
    vk_unlock(d);
    return st;
}

td_status td_vulkan_int_div(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    TD_TRY(check_divisor("int_div", b));
    const td_tensor *const ins[3] = { a, b, NULL };
    return elementwise("int_div", VK_B_IDIV, ins, 0u, out);
}

td_status td_vulkan_int_remainder(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    TD_TRY(check_divisor("int_remainder", b));
    const td_tensor *const ins[3] = { a, b, NULL };
    return elementwise("int_remainder", VK_B_IREM, ins, 0u, out);
}

td_status td_vulkan_float_mask_where(const td_tensor *a, const td_tensor *mask, const td_tensor *value,
                                     td_tensor *out)
{
    if (td_be_dtype(out) != TD_F32) /* f16 / bf16 / f64: moves of their element size */
        return vk_mask_move("float_mask_where", a, mask, value, 0.0, out);
    const td_tensor *const ins[3] = { a, mask, value };
    return elementwise("float_mask_where", VK_B_WHERE, ins, 0u, out);
}

td_status td_vulkan_int_mask_where(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out)
{
    const td_tensor *const ins[3] = { a, mask, value };
    return elementwise("int_mask_where", VK_B_WHERE, ins, 0u, out);
}

td_status td_vulkan_float_mask_fill(const td_tensor *a, const td_tensor *mask, float value, td_tensor *out)
{
    if (td_be_dtype(out) != TD_F32) /* f16 / bf16 / f64: the value rounded once to the dtype */
        return vk_mask_move("float_mask_fill", a, mask, NULL, value, out);
    const td_tensor *const ins[3] = { a, mask, NULL };
    return elementwise("float_mask_fill", VK_B_FILL, ins, vk_f2u(value), out);
}

td_status td_vulkan_int_mask_fill(const td_tensor *a, const td_tensor *mask, int32_t value, td_tensor *out)
{
    const td_tensor *const ins[3] = { a, mask, NULL };
    return elementwise("int_mask_fill", VK_B_FILL, ins, (uint32_t)value, out);
}
