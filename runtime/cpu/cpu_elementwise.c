/* CPU backend: elementwise kernels (unary math, casts, broadcasting binary ops, masks). */
#include <math.h>
#include <tgmath.h> /* exp(x) is expf for float x, exp for double: cpu_float_ew.h */

#include "cpu_float_ew.h"
#include "td_half.h"

void td_cpu_bcast_init(td_cpu_bcast *it, const td_shape *out, int nin, const td_shape *const *ins)
{
    it->ndim = out->ndim > 0 ? out->ndim : 1;
    it->nin = nin;
    for (int d = 0; d < TD_MAX_DIMS; d++)
        it->dims[d] = 1;
    for (int d = 0; d < out->ndim; d++)
        it->dims[d] = out->dims[d];
    for (int k = 0; k < nin; k++) {
        for (int d = 0; d < TD_MAX_DIMS; d++)
            it->st[k][d] = 0;
        td_broadcast_strides(ins[k], out, it->st[k]);
    }
    it->inner = it->dims[it->ndim - 1];
    it->rows = out->numel / it->inner;
}

/* ---- unary: out[i] = EXPR(x) ---- */

static td_status td_cpu_float_into_int32(const td_tensor *a, td_tensor *out); /* below: the f32 instance */
static td_status td_cpu_float_mask_where_w4(const td_tensor *a, const td_tensor *mask, const td_tensor *value,
                                            td_tensor *out); /* below: the 4-byte instance */

#define TD_CPU_UNARY(NAME, TI, TO, EXPR)                                \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)         \
    {                                                                   \
        const TI *restrict pa = (const TI *)td_be_data(a);                    \
        TO *restrict po = (TO *)td_be_data(out);                              \
        TD_CPU_FOR(i, td_be_numel(out), const TI x = pa[i]; po[i] = (EXPR););  \
        return TD_OK;                                                   \
    }

/* Through the transcendental kernels of cpu_vecmath.c. */
#define TD_CPU_UNARY_V(NAME, FN)                                                          \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)                           \
    {                                                                                     \
        td_cpu_vmath((FN), (const float *)td_be_data(a), (float *)td_be_data(out), td_be_numel(out)); \
        return TD_OK;                                                                     \
    }

/* Truncation toward zero with NaN -> 0 and saturation: the plain cast is UB out of range. */
static inline int32_t f2i(float x)
{
    if (x != x)
        return 0;
    if (x >= 2147483648.0f)
        return INT32_MAX;
    if (x <= -2147483648.0f)
        return INT32_MIN;
    return (int32_t)x;
}

/* Float ops in f32, f64, f16 and bf16 from one expression each (cpu_float_ew.h). */
TD_FEW_UNARY(float_neg, T, -x)
TD_FEW_UNARY(float_abs, T, fabs(x))
TD_FEW_UNARY_V(float_exp, TD_CPU_VEXP, exp(x))
TD_FEW_UNARY_V(float_log, TD_CPU_VLOG, log(x))
TD_FEW_UNARY(float_sqrt, T, sqrt(x))
TD_FEW_UNARY_V(float_sin, TD_CPU_VSIN, sin(x))
TD_FEW_UNARY_V(float_cos, TD_CPU_VCOS, cos(x))
TD_FEW_UNARY_V(float_tanh, TD_CPU_VTANH, tanh(x))
TD_FEW_UNARY_V(float_sigmoid, TD_CPU_VSIGMOID, (T)1 / ((T)1 + exp(-x)))
TD_FEW_UNARY(float_relu, T, x < (T)0 ? (T)0 : x) /* NaN stays NaN */
TD_FEW_UNARY_V(float_gelu, TD_CPU_VGELU, (T)0.5 * x * erfc(-x * (T)0.70710678118654752440)) /* no 1 + erf cancelling */
/* The same from a double (f64 tensors): exact truncation, then the i32 range. */
static inline int32_t d2i(double x)
{
    if (x != x)
        return 0;
    if (x >= 2147483648.0)
        return INT32_MAX;
    if (x <= -2147483649.0)
        return INT32_MIN;
    return (int32_t)x;
}

TD_CPU_UNARY(float_into_int32, float, int32_t, f2i(x))
td_status td_cpu_float_into_int(const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        const double *restrict pa = (const double *)td_be_data(a);
        int32_t *restrict po = (int32_t *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), po[i] = d2i(pa[i]););
        return TD_OK;
    }
    return td_cpu_float_into_int32(a, out);
}
TD_CPU_UNARY(bool_into_float, bool, float, x ? 1.0f : 0.0f)
TD_CPU_UNARY(bool_into_int, bool, int32_t, x ? 1 : 0)
TD_CPU_UNARY(bool_not, bool, bool, !x)

/* Any int dtype into f32: round to nearest even (C's conversion; exact for i8, u8 and up to
 * 2^24 in magnitude). */
td_status td_cpu_int_into_float(const td_tensor *a, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T *restrict pa = (const T *)td_be_data(a);
        float *restrict po = (float *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), po[i] = (float)pa[i];);
    })
    return TD_OK;
}

TD_FEW_UNARY_S(float_add_scalar, float, T, x + s)
TD_FEW_UNARY_S(float_mul_scalar, float, T, x * s)
/* x^2 and x^1 exactly (a product, a copy), else pow */
TD_FEW_UNARY_S(float_powf_scalar, float, T, s == (T)2 ? x * x : (s == (T)1 ? x : pow(x, s)))
/* torch.clamp: NaN input stays NaN; lo > hi gives hi. */
TD_FEW_UNARY_S2(float_clamp, x != x ? x : ((x < s ? s : x) > s2 ? s2 : (x < s ? s : x)))

/* ---- binary with broadcasting: out[i] = OP(x, y) ---- */

/* The loops are cpu_float_ew.h's TD_FEW_BINARY_LOOP, for every dtype. */

#define TD_CPU_BINARY(NAME, TA, TB, TO, EXPR)                                         \
    static inline TO op_##NAME(TA x, TB y)                                            \
    {                                                                                 \
        return (TO)(EXPR);                                                            \
    }                                                                                 \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)   \
    {                                                                                 \
        TD_FEW_BINARY_LOOP(TA, TB, TO, op_##NAME)                                     \
        return TD_OK;                                                                 \
    }

/* The same op over two element types, chosen by the inputs' dtype (the generated arm
 * calls the kernel only for the dtypes the spec's op_dtypes lists: f32 and f64, or i32
 * and i64; the mixing check gives both inputs one dtype). */
#define TD_CPU_BINARY2(NAME, WIDE, TA, TB, TO, WA, WB, WO, EXPR)                      \
    static inline TO op_##NAME(TA x, TB y)                                            \
    {                                                                                 \
        return (TO)(EXPR);                                                            \
    }                                                                                 \
    static inline WO op64_##NAME(WA x, WB y)                                          \
    {                                                                                 \
        return (WO)(EXPR);                                                            \
    }                                                                                 \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)   \
    {                                                                                 \
        if (td_be_dtype(a) == WIDE) {                                                       \
            TD_FEW_BINARY_LOOP(WA, WB, WO, op64_##NAME)                               \
        } else {                                                                      \
            TD_FEW_BINARY_LOOP(TA, TB, TO, op_##NAME)                                 \
        }                                                                             \
        return TD_OK;                                                                 \
    }

/* The int ops in every int dtype (TD_CPU_INT_CASES, cpu_internal.h): OP(x, y) over two T,
 * giving TO (T or bool); +, -, * wrap modulo 2^n. */
#define TD_CPU_INT_BINARY(NAME, TO, OP)                                             \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out) \
    {                                                                               \
        TD_CPU_INT_CASES(td_be_dtype(a), TD_FEW_BINARY_LOOP(T, T, TO, OP))          \
        return TD_OK;                                                               \
    }
#define INT_EQ(x, y) ((x) == (y))
#define INT_GT(x, y) ((x) > (y))
#define INT_LT(x, y) ((x) < (y))
#define INT_DIV(x, y) TD_CPU_IDIV(x, y)
#define INT_REM(x, y) TD_CPU_IREM(x, y)

TD_FEW_BINARY(float_add, T, x + y)
TD_FEW_BINARY(float_sub, T, x - y)
TD_FEW_BINARY(float_mul, T, x * y)
TD_FEW_BINARY(float_div, T, x / y)
TD_FEW_BINARY(float_powf, T, pow(x, y))
TD_FEW_BINARY(float_maximum, T, (x != x || x > y) ? x : y) /* NaN on either side wins */
TD_FEW_BINARY(float_minimum, T, (x != x || x < y) ? x : y)

TD_FEW_BINARY(float_equal, bool, x == y)
TD_FEW_BINARY(float_greater, bool, x > y)
TD_FEW_BINARY(float_greater_equal, bool, x >= y)
TD_FEW_BINARY(float_lower, bool, x < y)
TD_FEW_BINARY(float_lower_equal, bool, x <= y)

TD_CPU_INT_BINARY(int_equal, bool, INT_EQ)
TD_CPU_INT_BINARY(int_greater, bool, INT_GT)
TD_CPU_INT_BINARY(int_lower, bool, INT_LT)

TD_CPU_INT_BINARY(int_add, T, TD_CPU_WADD)
TD_CPU_INT_BINARY(int_sub, T, TD_CPU_WSUB)
TD_CPU_INT_BINARY(int_mul, T, TD_CPU_WMUL)

TD_CPU_BINARY(bool_and, bool, bool, bool, x && y)
TD_CPU_BINARY(bool_or, bool, bool, bool, x || y)

/* Every element of b is used (no zero-size dims), so one zero anywhere in b is an error. */
static bool has_zero(const td_tensor *b)
{
    bool zero = false;
    TD_CPU_INT_CASES(td_be_dtype(b), {
        const T *pb = (const T *)td_be_data(b);
        for (int64_t i = 0; i < td_be_numel(b) && !zero; i++)
            zero = pb[i] == 0;
    })
    return zero;
}

td_status td_cpu_int_div(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    if (has_zero(b))
        return td_error(TD_E_INVALID, "int_div: cpu: division by zero");
    TD_CPU_INT_CASES(td_be_dtype(a), TD_FEW_BINARY_LOOP(T, T, T, INT_DIV))
    return TD_OK;
}

td_status td_cpu_int_remainder(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    if (has_zero(b))
        return td_error(TD_E_INVALID, "int_remainder: cpu: division by zero");
    TD_CPU_INT_CASES(td_be_dtype(a), TD_FEW_BINARY_LOOP(T, T, T, INT_REM))
    return TD_OK;
}

/* ---- masks ---- */

/* out = mask ? value : a, all three broadcast to out. */
#define TD_CPU_MASK_WHERE(NAME, T)                                                                      \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out) \
    {                                                                                                   \
        TD_CPU_MASK_WHERE_BODY(T)                                                                       \
        return TD_OK;                                                                                   \
    }
#define TD_CPU_MASK_WHERE_BODY(T)                                                                       \
    {                                                                                                   \
        const T *restrict pa = (const T *)td_be_data(a);                                                      \
        const bool *restrict pm = (const bool *)td_be_data(mask);                                             \
        const T *restrict pv = (const T *)td_be_data(value);                                                  \
        T *restrict po = (T *)td_be_data(out);                                                                \
        const int64_t n = td_be_numel(out);                                                             \
        if (td_be_numel(a) == n && td_be_numel(mask) == n && td_be_numel(value) == n) {                 \
            TD_CPU_FOR(i, n, po[i] = pm[i] ? pv[i] : pa[i];);                                           \
        } else if (td_be_numel(a) == n && td_be_numel(mask) == n && td_be_numel(value) == 1) {          \
            const T v = pv[0];                                                                          \
            TD_CPU_FOR(i, n, po[i] = pm[i] ? v : pa[i];);                                               \
        } else {                                                                                        \
            td_cpu_bcast it;                                                                            \
            const td_shape *ins[3] = { td_be_shape(a), td_be_shape(mask), td_be_shape(value) };                        \
            td_cpu_bcast_init(&it, td_be_shape(out), 3, ins);                                                \
            const int64_t inner = it.inner;                                                             \
            const int64_t ia = it.st[0][it.ndim - 1], im = it.st[1][it.ndim - 1], iv = it.st[2][it.ndim - 1]; \
            TD_CPU_FOR_WORK(r, it.rows, n, {                                                            \
                int64_t off[3];                                                                         \
                td_cpu_bcast_row(&it, r, off);                                                          \
                T *ro = po + r * inner;                                                                 \
                for (int64_t j = 0; j < inner; j++)                                                     \
                    ro[j] = pm[off[1] + j * im] ? pv[off[2] + j * iv] : pa[off[0] + j * ia];            \
            });                                                                                         \
        }                                                                                               \
    }

/* The selecting loops of mask_fill for elements of type T, the scalar V already in T: mask
 * broadcasts to a (== out). BCAST is the broadcast loop alone (pa, pm, po, n, value in scope). */
#define TD_CPU_MASK_FILL_BCAST_LOOP                                                 \
    do {                                                                            \
        td_cpu_bcast it;                                                            \
        const td_shape *ins[1] = { td_be_shape(mask) };                             \
        td_cpu_bcast_init(&it, td_be_shape(out), 1, ins);                           \
        const int64_t inner = it.inner, im = it.st[0][it.ndim - 1];                 \
        TD_CPU_FOR_WORK(r, it.rows, n, {                                            \
            int64_t off[3];                                                         \
            td_cpu_bcast_row(&it, r, off);                                          \
            const int64_t base = r * inner;                                         \
            for (int64_t j = 0; j < inner; j++)                                     \
                po[base + j] = pm[off[0] + j * im] ? value : pa[base + j];          \
        });                                                                         \
    } while (0)
#define TD_CPU_MASK_FILL_LOOPS(T, V)                                                \
    do {                                                                            \
        const T value = (V);                                                        \
        const T *restrict pa = (const T *)td_be_data(a);                            \
        const bool *restrict pm = (const bool *)td_be_data(mask);                   \
        T *restrict po = (T *)td_be_data(out);                                      \
        const int64_t n = td_be_numel(out);                                         \
        if (td_be_numel(mask) == n)                                                 \
            TD_CPU_FOR(i, n, po[i] = pm[i] ? value : pa[i];);                       \
        else                                                                        \
            TD_CPU_MASK_FILL_BCAST_LOOP;                                            \
    } while (0)

/* mask_fill of an f64 tensor (the CPU spec lists f64 for float_mask_fill). */
static td_status mask_fill_f64(const td_tensor *a, const td_tensor *mask, double value64, td_tensor *out)
{
    TD_CPU_MASK_FILL_LOOPS(double, value64);
    return TD_OK;
}

/* The int dtypes other than i32: the value converted to the dtype modulo 2^n. */
static td_status int_mask_fill_other(const td_tensor *a, const td_tensor *mask, int32_t value32, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), { TD_CPU_MASK_FILL_LOOPS(T, TD_CPU_WRAP(value32)); })
    return TD_OK;
}

/* mask_fill of f16 / bf16 tensors: the value rounded to the dtype once, as the f32
 * kernel's result rounded by the via-f32 path, then 2-byte selects. */
static td_status mask_fill_u16(const td_tensor *a, const td_tensor *mask, uint16_t value16, td_tensor *out)
{
    TD_CPU_MASK_FILL_LOOPS(uint16_t, value16);
    return TD_OK;
}

/* float_mask_fill of a dtype other than f32: f64, f16, bf16. */
static td_status float_mask_fill_other(const td_tensor *a, const td_tensor *mask, float value, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F16)
        return mask_fill_u16(a, mask, td_f32_to_f16(value), out);
    if (td_be_dtype(a) == TD_BF16)
        return mask_fill_u16(a, mask, td_f32_to_bf16(value), out);
    return mask_fill_f64(a, mask, (double)value, out);
}

/* out = mask ? value : a with a scalar value; mask broadcasts to a (== out). The same-shape
 * loop selects the 4-byte patterns as integers, which GCC turns into vector selects: the
 * plain float ?: compiled to a branch, and a mask from relu's input is a coin toss per
 * element, where the mispredictions cost ten times the work.
 * DEF: the dtype of the 4-byte path; every other dtype goes to OTHER (f64, or the other
 * int dtypes). */
#define TD_CPU_MASK_FILL(NAME, T, DEF, OTHER)                                                       \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *mask, T value, td_tensor *out)     \
    {                                                                                               \
        if (td_be_dtype(a) != DEF)                                                                  \
            return OTHER(a, mask, value, out);                                                      \
        _Static_assert(sizeof(T) == sizeof(uint32_t), "mask_fill selects 4-byte values");           \
        const T *restrict pa = (const T *)td_be_data(a);                                                  \
        const bool *restrict pm = (const bool *)td_be_data(mask);                                         \
        T *restrict po = (T *)td_be_data(out);                                                            \
        const int64_t n = td_be_numel(out);                                                         \
        if (td_be_numel(mask) == n) {                                                               \
            const unsigned char *restrict pc = (const unsigned char *)td_be_data(mask);                   \
            uint32_t uv;                                                                            \
            memcpy(&uv, &value, sizeof uv);                                                         \
            TD_CPU_FOR(i, n, {                                                                      \
                uint32_t x;                                                                         \
                memcpy(&x, pa + i, sizeof x);                                                       \
                x = pc[i] ? uv : x;                                                                 \
                memcpy(po + i, &x, sizeof x);                                                       \
            });                                                                                     \
        } else {                                                                                    \
            TD_CPU_MASK_FILL_BCAST_LOOP;                                                            \
        }                                                                                           \
        return TD_OK;                                                                               \
    }

/* float_mask_where moves elements: one instance per element size (f16 / bf16, f32, f64). */
static td_status mask_where_w2(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out)
{
    TD_CPU_MASK_WHERE_BODY(uint16_t)
    return TD_OK;
}
static td_status mask_where_w8(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out)
{
    TD_CPU_MASK_WHERE_BODY(uint64_t)
    return TD_OK;
}
TD_CPU_MASK_WHERE(float_mask_where_w4, float)
td_status td_cpu_float_mask_where(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out)
{
    switch (td_dtype_size(td_be_dtype(a))) {
    case 8: return mask_where_w8(a, mask, value, out);
    case 2: return mask_where_w2(a, mask, value, out);
    default: return td_cpu_float_mask_where_w4(a, mask, value, out);
    }
}
td_status td_cpu_int_mask_where(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), TD_CPU_MASK_WHERE_BODY(T))
    return TD_OK;
}
TD_CPU_MASK_FILL(float_mask_fill, float, TD_F32, float_mask_fill_other)
TD_CPU_MASK_FILL(int_mask_fill, int32_t, TD_I32, int_mask_fill_other)
