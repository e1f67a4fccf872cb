/* CPU backend: float math (issue 10): inverse and hyperbolic trigonometry, rounding, erf,
 * log1p, integer powers, remainders, scalar arithmetic, clamps, classification and scalar
 * comparisons. PyTorch semantics; every loop is a no-op on empty tensors. */
#include <math.h>

#include "cpu_internal.h"

/* ---- unary: out[i] = EXPR(x) ---- */

#define FM_UNARY(NAME, TO, EXPR)                                                \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)                 \
    {                                                                           \
        const float *restrict pa = (const float *)td_be_data(a);                      \
        TO *restrict po = (TO *)td_be_data(out);                                      \
        TD_CPU_FOR(i, td_be_numel(out), const float x = pa[i]; po[i] = (EXPR);); \
        return TD_OK;                                                           \
    }

/* With one scalar parameter s of type TS. */
#define FM_UNARY_S(NAME, TS, TO, EXPR)                                          \
    td_status td_cpu_##NAME(const td_tensor *a, TS s, td_tensor *out)           \
    {                                                                           \
        const float *restrict pa = (const float *)td_be_data(a);                      \
        TO *restrict po = (TO *)td_be_data(out);                                      \
        TD_CPU_FOR(i, td_be_numel(out), const float x = pa[i]; po[i] = (EXPR);); \
        return TD_OK;                                                           \
    }

/* torch.remainder on floats: fmod (exact), then + b where the remainder is nonzero and
 * its sign differs from the divisor's, so the result takes the divisor's sign. */
static inline float fm_rem(float x, float y)
{
    float m = fmodf(x, y);
    if (m != 0.0f && ((y < 0.0f) != (m < 0.0f)))
        m += y;
    return m;
}

FM_UNARY(float_acos, float, acosf(x))
FM_UNARY(float_asin, float, asinf(x))
FM_UNARY(float_atan, float, atanf(x))
FM_UNARY(float_cosh, float, coshf(x))
FM_UNARY(float_sinh, float, sinhf(x))
FM_UNARY(float_tan, float, tanf(x))
FM_UNARY(float_asinh, float, asinhf(x))
FM_UNARY(float_acosh, float, acoshf(x))
FM_UNARY(float_atanh, float, atanhf(x))
FM_UNARY(float_ceil, float, ceilf(x))
FM_UNARY(float_floor, float, floorf(x))
FM_UNARY(float_round, float, nearbyintf(x)) /* the default rounding mode: halves to even */
FM_UNARY(float_trunc, float, truncf(x))
FM_UNARY(float_sign, float, (float)((x > 0.0f) - (x < 0.0f))) /* NaN -> 0, as torch.sign */
FM_UNARY(float_erf, float, erff(x))
FM_UNARY(float_log1p, float, log1pf(x))
FM_UNARY(float_recip, float, 1.0f / x)
FM_UNARY(float_square, float, x * x)
FM_UNARY(float_is_nan, bool, x != x)
FM_UNARY(float_is_inf, bool, isinf(x) != 0)

FM_UNARY_S(float_powi_scalar, int32_t, float, powf(x, (float)s))
FM_UNARY_S(float_remainder_scalar, float, float, fm_rem(x, s))
FM_UNARY_S(float_sub_scalar, float, float, x - s)
FM_UNARY_S(float_div_scalar, float, float, x / s)
/* NaN on either side wins, as float_maximum / float_minimum; a bound that ties x leaves x
 * (torch.clamp(-0., min=0.) is -0.). */
FM_UNARY_S(float_clamp_min, float, float, (x != x || x >= s) ? x : s)
FM_UNARY_S(float_clamp_max, float, float, (x != x || x <= s) ? x : s)
FM_UNARY_S(float_equal_elem, float, bool, x == s)
FM_UNARY_S(float_not_equal_elem, float, bool, x != s)
FM_UNARY_S(float_greater_elem, float, bool, x > s)
FM_UNARY_S(float_greater_equal_elem, float, bool, x >= s)
FM_UNARY_S(float_lower_elem, float, bool, x < s)
FM_UNARY_S(float_lower_equal_elem, float, bool, x <= s)

/* ---- binary with broadcasting: out[i] = OP(x, y) ---- */

/* Equal shapes, scalar on either side, else rows of the output with strided inputs (as
 * in cpu_elementwise.c). */
#define FM_BINARY(NAME, TB, TO, EXPR)                                                        \
    static inline TO fm_##NAME(float x, TB y)                                                \
    {                                                                                        \
        return (TO)(EXPR);                                                                   \
    }                                                                                        \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)          \
    {                                                                                        \
        const float *restrict pa = (const float *)td_be_data(a);                                   \
        const TB *restrict pb = (const TB *)td_be_data(b);                                         \
        TO *restrict po = (TO *)td_be_data(out);                                                   \
        const int64_t n = td_be_numel(out);                                                  \
        if (td_be_numel(a) == n && td_be_numel(b) == n) {                                    \
            TD_CPU_FOR(i, n, po[i] = fm_##NAME(pa[i], pb[i]););                              \
        } else if (td_be_numel(a) == n && td_be_numel(b) == 1) {                             \
            const TB y = pb[0];                                                              \
            TD_CPU_FOR(i, n, po[i] = fm_##NAME(pa[i], y););                                  \
        } else if (td_be_numel(a) == 1 && td_be_numel(b) == n) {                             \
            const float x = pa[0];                                                           \
            TD_CPU_FOR(i, n, po[i] = fm_##NAME(x, pb[i]););                                  \
        } else if (n > 0) {                                                                  \
            td_cpu_bcast it;                                                                 \
            const td_shape *ins[2] = { td_be_shape(a), td_be_shape(b) };                               \
            td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);                                     \
            const int64_t inner = it.inner, ia = it.st[0][it.ndim - 1];                      \
            const int64_t ib = it.st[1][it.ndim - 1];                                        \
            TD_CPU_FOR_WORK(r, it.rows, n, {                                                 \
                int64_t off[3];                                                              \
                td_cpu_bcast_row(&it, r, off);                                               \
                const float *ra = pa + off[0];                                               \
                const TB *rb = pb + off[1];                                                  \
                TO *ro = po + r * inner;                                                     \
                for (int64_t j = 0; j < inner; j++)                                          \
                    ro[j] = fm_##NAME(ra[j * ia], rb[j * ib]);                               \
            });                                                                              \
        }                                                                                    \
        return TD_OK;                                                                        \
    }

FM_BINARY(float_atan2, float, float, atan2f(x, y))
FM_BINARY(float_hypot, float, float, hypotf(x, y)) /* inf if either is infinite, NaN or not */
FM_BINARY(float_powi, int32_t, float, powf(x, (float)y))
FM_BINARY(float_remainder, float, float, fm_rem(x, y))
FM_BINARY(float_not_equal, float, bool, x != y)
