/* Vulkan backend: the float math of issue 10 that has no sound decomposition into other
 * ops (shaders/fmath.comp): acos, asin, atan, atan2, tan (accurate where the driver's sin / cos
 * need not be), ceil, floor, round, trunc, erf, log1p,
 * is_nan, is_inf, remainder, remainder_scalar; on f16 / bf16 fmath.comp's TD_HALF forms, on f64
 * ewd.comp (mathd.glsl: every one of them, in double arithmetic). */
#include "vk_internal.h"

/* Op codes of fmath.comp. */
enum {
    VK_M_ACOS, VK_M_ASIN, VK_M_ATAN, VK_M_CEIL, VK_M_FLOOR, VK_M_ROUND, VK_M_TRUNC, VK_M_ERF, VK_M_LOG1P,
    VK_M_IS_NAN, VK_M_IS_INF, VK_M_REM_S, VK_M_ATAN2, VK_M_TAN, VK_M_REM
};

/* Parameters as ew.comp's: n, op, ndim, scalar, dims[8], then 8 strides per input (0 on
 * broadcast dims); b may be NULL (unary ops). */
static td_status fmath(const char *op, uint32_t code, const td_tensor *a, const td_tensor *b, uint32_t scalar,
                       td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        /* ewd.comp's codes 48-60 for the unary ops (mathd.glsl; remainder_scalar's divisor, an f32
         * widened exactly, as its s0) and its broadcasting binary codes for atan2, remainder */
        static const uint32_t ewd[VK_FMATH_OPS] = {
            [VK_M_CEIL] = 48u,   [VK_M_FLOOR] = 49u,  [VK_M_ROUND] = 50u, [VK_M_TRUNC] = 51u,
            [VK_M_ERF] = 52u,    [VK_M_LOG1P] = 53u,  [VK_M_IS_NAN] = 54u, [VK_M_IS_INF] = 55u,
            [VK_M_TAN] = 56u,    [VK_M_ACOS] = 57u,   [VK_M_ASIN] = 58u,  [VK_M_ATAN] = 59u,
            [VK_M_REM_S] = 60u,  [VK_M_ATAN2] = VK_EWD_ATAN2, [VK_M_REM] = VK_EWD_REM,
        };
        if (code >= VK_FMATH_OPS || ewd[code] == 0u)
            return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no f64 kernel", op);
        if (b != NULL)
            return vk_binary_f64(op, ewd[code], a, b, out);
        const uint32_t p[4] = { (uint32_t)td_be_numel(out), ewd[code], scalar, 0u };
        vk_buf *const bufs[4] = { vk_buf_of(a), NULL, NULL, vk_buf_of(out) };
        return vk_dispatch_ewd(vk_of(td_be_device(out)), op, ewd[code], p, 4, bufs, td_be_numel(out));
    }
    return vk_coded_elementwise(op, VK_SH_FMATH, code, a, b, scalar, out);
}

#define VK_FMATH_UNARY(NAME, CODE)                                      \
    td_status td_vulkan_##NAME(const td_tensor *a, td_tensor *out)      \
    {                                                                   \
        return fmath(#NAME, CODE, a, NULL, 0u, out);                    \
    }

VK_FMATH_UNARY(float_acos, VK_M_ACOS)
VK_FMATH_UNARY(float_asin, VK_M_ASIN)
VK_FMATH_UNARY(float_atan, VK_M_ATAN)
VK_FMATH_UNARY(float_tan, VK_M_TAN)
VK_FMATH_UNARY(float_ceil, VK_M_CEIL)
VK_FMATH_UNARY(float_floor, VK_M_FLOOR)
VK_FMATH_UNARY(float_round, VK_M_ROUND)
VK_FMATH_UNARY(float_trunc, VK_M_TRUNC)
VK_FMATH_UNARY(float_erf, VK_M_ERF)
VK_FMATH_UNARY(float_log1p, VK_M_LOG1P)
VK_FMATH_UNARY(float_is_nan, VK_M_IS_NAN)
VK_FMATH_UNARY(float_is_inf, VK_M_IS_INF)

td_status td_vulkan_float_remainder_scalar(const td_tensor *a, float value, td_tensor *out)
{
    return fmath("float_remainder_scalar", VK_M_REM_S, a, NULL, vk_f2u(value), out);
}

td_status td_vulkan_float_atan2(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return fmath("float_atan2", VK_M_ATAN2, a, b, 0u, out);
}

td_status td_vulkan_float_remainder(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return fmath("float_remainder", VK_M_REM, a, b, 0u, out);
}
