/* CPU backend: float math (issue 10): inverse and hyperbolic trigonometry, rounding, erf,
 * log1p, integer powers, remainders, scalar arithmetic, clamps, classification and scalar
 * comparisons. PyTorch semantics; every loop is a no-op on empty tensors. */
#include <math.h>
#include <tgmath.h> /* acos(x) is acosf for float x, acos for double: cpu_float_ew.h */

#include "cpu_float_ew.h"

/* torch.remainder on floats: fmod (exact), then + b where the remainder is nonzero and
 * its sign differs from the divisor's, so the result takes the divisor's sign. One body
 * for float and double. */
#define FM_REM_FN(SUF, T)                          \
    static inline T fm_rem##SUF(T x, T y)          \
    {                                              \
        T m = fmod(x, y);                          \
        if (m != (T)0 && ((y < (T)0) != (m < (T)0))) \
            m += y;                                \
        return m;                                  \
    }
FM_REM_FN(32, float)
FM_REM_FN(64, double)
#define fm_rem(x, y) _Generic((x), float: fm_rem32, double: fm_rem64)((x), (y))

/* Every op in f32, f64, f16 and bf16 from one expression (cpu_float_ew.h); powi (an int
 * exponent tensor) in f32 and f64. */
TD_FEW_UNARY(float_acos, T, acos(x))
TD_FEW_UNARY(float_asin, T, asin(x))
TD_FEW_UNARY(float_atan, T, atan(x))
TD_FEW_UNARY(float_cosh, T, cosh(x))
TD_FEW_UNARY(float_sinh, T, sinh(x))
TD_FEW_UNARY(float_tan, T, tan(x))
TD_FEW_UNARY(float_asinh, T, asinh(x))
TD_FEW_UNARY(float_acosh, T, acosh(x))
TD_FEW_UNARY(float_atanh, T, atanh(x))
TD_FEW_UNARY(float_ceil, T, ceil(x))
TD_FEW_UNARY(float_floor, T, floor(x))
TD_FEW_UNARY(float_round, T, nearbyint(x)) /* the default rounding mode: halves to even */
TD_FEW_UNARY(float_trunc, T, trunc(x))
TD_FEW_UNARY(float_sign, T, (T)((x > (T)0) - (x < (T)0))) /* NaN -> 0, as torch.sign */
TD_FEW_UNARY(float_erf, T, erf(x))
TD_FEW_UNARY(float_log1p, T, log1p(x))
TD_FEW_UNARY(float_recip, T, (T)1 / x)
TD_FEW_UNARY(float_square, T, x * x)
TD_FEW_UNARY(float_is_nan, bool, x != x)
TD_FEW_UNARY(float_is_inf, bool, isinf(x) != 0)

TD_FEW_UNARY_S(float_powi_scalar, int32_t, T, pow(x, s))
TD_FEW_UNARY_S(float_remainder_scalar, float, T, fm_rem(x, s))
TD_FEW_UNARY_S(float_sub_scalar, float, T, x - s)
TD_FEW_UNARY_S(float_div_scalar, float, T, x / s)
/* NaN on either side wins, as float_maximum / float_minimum; a bound that ties x leaves x
 * (torch.clamp(-0., min=0.) is -0.). */
TD_FEW_UNARY_S(float_clamp_min, float, T, (x != x || x >= s) ? x : s)
TD_FEW_UNARY_S(float_clamp_max, float, T, (x != x || x <= s) ? x : s)
TD_FEW_UNARY_S(float_equal_elem, float, bool, x == s)
TD_FEW_UNARY_S(float_not_equal_elem, float, bool, x != s)
TD_FEW_UNARY_S(float_greater_elem, float, bool, x > s)
TD_FEW_UNARY_S(float_greater_equal_elem, float, bool, x >= s)
TD_FEW_UNARY_S(float_lower_elem, float, bool, x < s)
TD_FEW_UNARY_S(float_lower_equal_elem, float, bool, x <= s)

TD_FEW_BINARY(float_atan2, T, atan2(x, y))
TD_FEW_BINARY(float_hypot, T, hypot(x, y)) /* inf if either is infinite, NaN or not */
TD_FEW_BINARY_TB(float_powi, int32_t, pow(x, (T)y))
TD_FEW_BINARY(float_remainder, T, fm_rem(x, y))
TD_FEW_BINARY(float_not_equal, bool, x != y)
