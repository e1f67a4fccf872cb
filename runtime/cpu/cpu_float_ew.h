/* CPU backend: float elementwise kernels over every float dtype they compute, from one
 * source per op (issue 21, step 5; docs/dtypes.md section 10, docs/kernels.md).
 *
 * An op is written once as an expression of x (and y, s, lo, hi) in a type T, and the
 * macros below instantiate it twice: with T = float (the f32 kernel, and the f16 / bf16
 * block path) and with T = double (the f64 kernel). The file that includes this header
 * includes <tgmath.h>, so exp(x), fmod(x, y), ... call expf / fmod... for float x and the
 * double functions for double x; constants are written (T)c so the f32 kernel computes in
 * f32 as before and the f64 kernel gets the double constant.
 *
 * f16 / bf16 run in blocks of TD_CPU_HALF_BLOCK elements: each input block is widened to
 * f32 by the row converters of runtime/core/td_convert.c (F16C / AVX-512 / AVX-512 BF16
 * where present, portable otherwise; bit for bit td_half.h), the f32 code of the op runs on
 * the block (the same row function the f32 kernel's values come from), and the f32 results
 * are rounded to the dtype once. So the result equals the generated "via f32" path (whole
 * copies in f32, the f32 kernel, one rounding) bit for bit, without the copies. */
#ifndef TD_CPU_FLOAT_EW_H
#define TD_CPU_FLOAT_EW_H

#include "cpu_internal.h"
#include "td_half.h"

/* 256 floats a buffer: a few buffers stay in L1; a multiple of 16, so cpu_vecmath.c's
 * vector lanes fall on the same elements as in one call over the whole tensor. */
#define TD_CPU_HALF_BLOCK 256

static inline bool td_cpu_is_half(td_dtype dt)
{
    return dt == TD_F16 || dt == TD_BF16;
}

/* One f32 value rounded to f16 / bf16 (dt), as the via-f32 path rounds a result. */
static inline uint16_t td_cpu_round_half(td_dtype dt, float x)
{
    return dt == TD_F16 ? td_f32_to_f16(x) : td_f32_to_bf16(x);
}

/* f32 code over a block: y[i] = f(x[i]) (out: n floats, or n bools for `bool_out`). */
typedef void (*td_cpu_row1)(const float *x, void *out, int64_t n, const float *s);
/* out[i] = f(x[i], y[i]). */
typedef void (*td_cpu_row2)(const float *x, const float *y, void *out, int64_t n);

/* The block drivers (cpu_half.c): a's dtype is f16 or bf16 (b's too); out has a's dtype,
 * or bool where bool_out. */
td_status td_cpu_half_unary(const td_tensor *a, td_tensor *out, td_cpu_row1 row, const float *s, bool bool_out);
td_status td_cpu_half_binary(const td_tensor *a, const td_tensor *b, td_tensor *out, td_cpu_row2 row, bool bool_out);

/* ---- unary: out = EXPR(x); TO is T (a float result) or bool ---- */

/* TO reaches the inner macros as `bool`, or as `_Bool` once stdbool.h's macro expanded it. */
#define TD_FEW_BOOL_bool 1
#define TD_FEW_BOOL__Bool 1
#define TD_FEW_BOOL_T 0
#define TD_FEW_CAT(a, b) a##b
#define TD_FEW_ISBOOL(TO) TD_FEW_CAT(TD_FEW_BOOL_, TO)

/* The per-element functions of one op in f32 and f64, the f32 row function, and the
 * f64 loop; S_DECL / S_ARGS carry the scalar parameters. */
#define TD_FEW_UNARY_FNS(NAME, TO, EXPR)                                                \
    static inline TD_FEW_TY32_##TO fe32_##NAME(float x, const float *s_)                \
    {                                                                                   \
        typedef float T;                                                                \
        const T s = s_ ? (T)s_[0] : (T)0, s2 = s_ ? (T)s_[1] : (T)0;                    \
        (void)s;                                                                        \
        (void)s2;                                                                       \
        return (TD_FEW_TY32_##TO)(EXPR);                                                \
    }                                                                                   \
    static inline TD_FEW_TY64_##TO fe64_##NAME(double x, const double *s_)              \
    {                                                                                   \
        typedef double T;                                                               \
        const T s = s_ ? s_[0] : (T)0, s2 = s_ ? s_[1] : (T)0;                          \
        (void)s;                                                                        \
        (void)s2;                                                                       \
        return (TD_FEW_TY64_##TO)(EXPR);                                                \
    }                                                                                   \
    static void row32_##NAME(const float *x, void *out, int64_t n, const float *s)      \
    {                                                                                   \
        TD_FEW_TY32_##TO *y = (TD_FEW_TY32_##TO *)out;                                  \
        for (int64_t i = 0; i < n; i++)                                                 \
            y[i] = fe32_##NAME(x[i], s);                                                \
    }

#define TD_FEW_TY32_T float
#define TD_FEW_TY64_T double
#define TD_FEW_TY32_bool bool
#define TD_FEW_TY64_bool bool
#define TD_FEW_TY32__Bool bool
#define TD_FEW_TY64__Bool bool

/* The f64 and f16 / bf16 branches of a kernel with scalar parameters: s64[] (for f64:
 * the parameters exactly) and s32[] (f32 and the blocks: as the f32 kernel takes them). */
#define TD_FEW_UNARY_BODY(NAME, TO, ROW32)                                                        \
    {                                                                                             \
        const td_dtype dt_ = td_be_dtype(a);                                                      \
        if (dt_ == TD_F64) {                                                                      \
            const double *restrict pa = (const double *)td_be_data(a);                            \
            TD_FEW_TY64_##TO *restrict po = (TD_FEW_TY64_##TO *)td_be_data(out);                  \
            TD_CPU_FOR(i, td_be_numel(out), po[i] = fe64_##NAME(pa[i], s64););                     \
            return TD_OK;                                                                         \
        }                                                                                         \
        if (td_cpu_is_half(dt_))                                                                  \
            return td_cpu_half_unary(a, out, ROW32, s32, TD_FEW_ISBOOL(TO));                      \
    }

/* out = EXPR(x), f32 / f64 / f16 / bf16. */
#define TD_FEW_UNARY(NAME, TO, EXPR)                                             \
    TD_FEW_UNARY_FNS(NAME, TO, EXPR)                                             \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)                  \
    {                                                                            \
        const float *s32 = NULL;                                                 \
        const double *s64 = NULL;                                                \
        TD_FEW_UNARY_BODY(NAME, TO, row32_##NAME)                                \
        const float *restrict pa = (const float *)td_be_data(a);                 \
        TD_FEW_TY32_##TO *restrict po = (TD_FEW_TY32_##TO *)td_be_data(out);     \
        TD_CPU_FOR(i, td_be_numel(out), po[i] = fe32_##NAME(pa[i], NULL););       \
        return TD_OK;                                                            \
    }

/* The same where the f32 kernel runs through cpu_vecmath.c (FN); EXPR is the f64 form. */
#define TD_FEW_UNARY_V(NAME, FN, EXPR)                                                    \
    static inline double fe64_##NAME(double x, const double *s_)                          \
    {                                                                                     \
        typedef double T;                                                                 \
        (void)s_;                                                                         \
        return (T)(EXPR);                                                                 \
    }                                                                                     \
    static void row32_##NAME(const float *x, void *out, int64_t n, const float *s)        \
    {                                                                                     \
        (void)s;                                                                          \
        td_cpu_vmath((FN), x, (float *)out, n);                                           \
    }                                                                                     \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)                           \
    {                                                                                     \
        const td_dtype dt_ = td_be_dtype(a);                                              \
        if (dt_ == TD_F64) {                                                              \
            const double *restrict pa = (const double *)td_be_data(a);                    \
            double *restrict po = (double *)td_be_data(out);                              \
            TD_CPU_FOR(i, td_be_numel(out), po[i] = fe64_##NAME(pa[i], NULL););            \
            return TD_OK;                                                                 \
        }                                                                                 \
        if (td_cpu_is_half(dt_))                                                          \
            return td_cpu_half_unary(a, out, row32_##NAME, NULL, false);                  \
        td_cpu_vmath((FN), (const float *)td_be_data(a), (float *)td_be_data(out), td_be_numel(out)); \
        return TD_OK;                                                                     \
    }

/* out = EXPR(x, s) with one scalar parameter s of the C type TS (float or int32_t),
 * converted to T (exactly for f64; as the f32 kernel always did for f32). */
#define TD_FEW_UNARY_S(NAME, TS, TO, EXPR)                                           \
    TD_FEW_UNARY_FNS(NAME, TO, EXPR)                                                 \
    td_status td_cpu_##NAME(const td_tensor *a, TS sv, td_tensor *out)               \
    {                                                                                \
        const float s32[2] = { (float)sv, 0.0f };                                    \
        const double s64[2] = { (double)sv, 0.0 };                                   \
        TD_FEW_UNARY_BODY(NAME, TO, row32_##NAME)                                 \
        const float *restrict pa = (const float *)td_be_data(a);                     \
        TD_FEW_TY32_##TO *restrict po = (TD_FEW_TY32_##TO *)td_be_data(out);         \
        TD_CPU_FOR(i, td_be_numel(out), po[i] = fe32_##NAME(pa[i], s32););            \
        return TD_OK;                                                                \
    }

/* out = EXPR(x, s, s2) with two float parameters (clamp's lo, hi). */
#define TD_FEW_UNARY_S2(NAME, EXPR)                                                  \
    TD_FEW_UNARY_FNS(NAME, T, EXPR)                                                  \
    td_status td_cpu_##NAME(const td_tensor *a, float lo, float hi, td_tensor *out)  \
    {                                                                                \
        const float s32[2] = { lo, hi };                                             \
        const double s64[2] = { lo, hi };                                            \
        TD_FEW_UNARY_BODY(NAME, T, row32_##NAME)                                  \
        const float *restrict pa = (const float *)td_be_data(a);                     \
        float *restrict po = (float *)td_be_data(out);                               \
        TD_CPU_FOR(i, td_be_numel(out), po[i] = fe32_##NAME(pa[i], s32););            \
        return TD_OK;                                                                \
    }

/* ---- binary with broadcasting: out = EXPR(x, y), a and b of one float dtype ---- */

/* Equal shapes, scalar on either side, else rows of the output with strided inputs (the
 * binary loops of every CPU dtype, cpu_elementwise.c's int ones too). */
#define TD_FEW_BINARY_LOOP(TA, TB, TO, OP)                                                   \
    const TA *restrict pa = (const TA *)td_be_data(a);                                       \
    const TB *restrict pb = (const TB *)td_be_data(b);                                       \
    TO *restrict po = (TO *)td_be_data(out);                                                 \
    const int64_t n = td_be_numel(out);                                                      \
    if (td_be_numel(a) == n && td_be_numel(b) == n) {                                        \
        TD_CPU_FOR(i, n, po[i] = OP(pa[i], pb[i]););                                         \
    } else if (td_be_numel(a) == n && td_be_numel(b) == 1) {                                 \
        const TB y = pb[0];                                                                  \
        TD_CPU_FOR(i, n, po[i] = OP(pa[i], y););                                             \
    } else if (td_be_numel(a) == 1 && td_be_numel(b) == n) {                                 \
        const TA x = pa[0];                                                                  \
        TD_CPU_FOR(i, n, po[i] = OP(x, pb[i]););                                             \
    } else if (n > 0) {                                                                      \
        td_cpu_bcast it;                                                                     \
        const td_shape *ins[2] = { td_be_shape(a), td_be_shape(b) };                         \
        td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);                                    \
        const int64_t inner = it.inner, ia = it.st[0][it.ndim - 1], ib = it.st[1][it.ndim - 1]; \
        TD_CPU_FOR_WORK(r, it.rows, n, {                                                     \
            int64_t off[3];                                                                  \
            td_cpu_bcast_row(&it, r, off);                                                   \
            const TA *ra = pa + off[0];                                                      \
            const TB *rb = pb + off[1];                                                      \
            TO *ro = po + r * inner;                                                         \
            if (ia == 1 && ib == 1)                                                          \
                for (int64_t j = 0; j < inner; j++)                                          \
                    ro[j] = OP(ra[j], rb[j]);                                                \
            else if (ia == 1 && ib == 0)                                                     \
                for (int64_t j = 0; j < inner; j++)                                          \
                    ro[j] = OP(ra[j], rb[0]);                                                \
            else if (ia == 0 && ib == 1)                                                     \
                for (int64_t j = 0; j < inner; j++)                                          \
                    ro[j] = OP(ra[0], rb[j]);                                                \
            else                                                                             \
                for (int64_t j = 0; j < inner; j++)                                          \
                    ro[j] = OP(ra[j * ia], rb[j * ib]);                                      \
        });                                                                                  \
    }

/* TO is T or bool. */
#define TD_FEW_BINARY(NAME, TO, EXPR)                                                 \
    static inline TD_FEW_TY32_##TO fb32_##NAME(float x, float y)                      \
    {                                                                                 \
        typedef float T; (void)(T)0;                                                   \
        return (TD_FEW_TY32_##TO)(EXPR);                                              \
    }                                                                                 \
    static inline TD_FEW_TY64_##TO fb64_##NAME(double x, double y)                    \
    {                                                                                 \
        typedef double T; (void)(T)0;                                                  \
        return (TD_FEW_TY64_##TO)(EXPR);                                              \
    }                                                                                 \
    static void rowb32_##NAME(const float *x, const float *y, void *out, int64_t n)   \
    {                                                                                 \
        TD_FEW_TY32_##TO *o = (TD_FEW_TY32_##TO *)out;                                \
        for (int64_t i = 0; i < n; i++)                                               \
            o[i] = fb32_##NAME(x[i], y[i]);                                           \
    }                                                                                 \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)   \
    {                                                                                 \
        const td_dtype dt_ = td_be_dtype(a);                                          \
        if (dt_ == TD_F64) {                                                          \
            TD_FEW_BINARY_LOOP(double, double, TD_FEW_TY64_##TO, fb64_##NAME)         \
            return TD_OK;                                                             \
        }                                                                             \
        if (td_cpu_is_half(dt_))                                                      \
            return td_cpu_half_binary(a, b, out, rowb32_##NAME, TD_FEW_ISBOOL(TO));   \
        TD_FEW_BINARY_LOOP(float, float, TD_FEW_TY32_##TO, fb32_##NAME)               \
        return TD_OK;                                                                 \
    }

/* b of another class (powi's int exponent): f32 and f64 only (f16 / bf16 run via f32). */
#define TD_FEW_BINARY_TB(NAME, TB, EXPR)                                              \
    static inline float fb32_##NAME(float x, TB y)                                    \
    {                                                                                 \
        typedef float T; (void)(T)0;                                                   \
        return (T)(EXPR);                                                             \
    }                                                                                 \
    static inline double fb64_##NAME(double x, TB y)                                  \
    {                                                                                 \
        typedef double T; (void)(T)0;                                                  \
        return (T)(EXPR);                                                             \
    }                                                                                 \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)   \
    {                                                                                 \
        if (td_be_dtype(a) == TD_F64) {                                               \
            TD_FEW_BINARY_LOOP(double, TB, double, fb64_##NAME)                       \
            return TD_OK;                                                             \
        }                                                                             \
        TD_FEW_BINARY_LOOP(float, TB, float, fb32_##NAME)                             \
        return TD_OK;                                                                 \
    }

#endif
