/* CPU backend: int ops of issue 10 (specs/ops/int_ops.lua): scalar arithmetic, abs/sign/powers,
 * comparisons, reductions, bitwise ops, matmul and random. Overflow wraps around (two's
 * complement) without signed overflow in C: arithmetic that can overflow runs on uint32_t
 * and converts back (the conversion of an out-of-range uint32_t to int32_t is
 * implementation-defined in C11, modular on every compiler we build with). */
#include "cpu_internal.h"

static inline int32_t wrap_add(int32_t x, int32_t y)
{
    return (int32_t)((uint32_t)x + (uint32_t)y);
}

static inline int32_t wrap_sub(int32_t x, int32_t y)
{
    return (int32_t)((uint32_t)x - (uint32_t)y);
}

static inline int32_t wrap_mul(int32_t x, int32_t y)
{
    return (int32_t)((uint32_t)x * (uint32_t)y);
}

/* C truncation; INT32_MIN / -1 wraps to INT32_MIN instead of trapping. y != 0. */
static inline int32_t trunc_div(int32_t x, int32_t y)
{
    return y == -1 ? (int32_t)(0u - (uint32_t)x) : x / y;
}

/* torch.remainder: the result has the sign of the divisor. y != 0. */
static inline int32_t floor_rem(int32_t x, int32_t y)
{
    if (y == -1)
        return 0;
    const int32_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/* ---- unary: out[i] = EXPR(x), optionally with an int32 scalar s ---- */

#define TD_INT_UNARY(NAME, TO, EXPR)                                    \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)         \
    {                                                                   \
        const int32_t *restrict pa = (const int32_t *)a->data;          \
        TO *restrict po = (TO *)out->data;                              \
        TD_CPU_FOR(i, out->shape.numel, const int32_t x = pa[i]; po[i] = (EXPR);); \
        return TD_OK;                                                   \
    }

#define TD_INT_UNARY_S(NAME, TO, EXPR)                                           \
    td_status td_cpu_##NAME(const td_tensor *a, int32_t s, td_tensor *out)       \
    {                                                                            \
        const int32_t *restrict pa = (const int32_t *)a->data;                   \
        TO *restrict po = (TO *)out->data;                                       \
        TD_CPU_FOR(i, out->shape.numel, const int32_t x = pa[i]; po[i] = (EXPR);); \
        return TD_OK;                                                            \
    }

TD_INT_UNARY(int_neg, int32_t, (int32_t)(0u - (uint32_t)x))

TD_INT_UNARY_S(int_add_scalar, int32_t, wrap_add(x, s))
TD_INT_UNARY_S(int_sub_scalar, int32_t, wrap_sub(x, s))
TD_INT_UNARY_S(int_mul_scalar, int32_t, wrap_mul(x, s))

td_status td_cpu_int_div_scalar(const td_tensor *a, int32_t value, td_tensor *out)
{
    if (value == 0)
        return td_error(TD_E_INVALID, "int_div_scalar: cpu: division by zero");
    const int32_t *restrict pa = (const int32_t *)a->data;
    int32_t *restrict po = (int32_t *)out->data;
    TD_CPU_FOR(i, out->shape.numel, po[i] = trunc_div(pa[i], value););
    return TD_OK;
}
