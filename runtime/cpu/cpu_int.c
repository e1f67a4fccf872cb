/* CPU backend: int ops of issue 10 (specs/ops/int_ops.lua): scalar arithmetic, abs/sign/powers,
 * comparisons, reductions, bitwise ops, matmul and random, in every int dtype (i32, i64,
 * i8, u8: one body per op through TD_CPU_INT_CASES, cpu_internal.h). Overflow wraps around
 * modulo 2^n (two's complement) without signed overflow in C: arithmetic that can overflow
 * runs on unsigned types and converts back (docs/dtypes.md section 7). A host scalar
 * argument (an int32) is converted to the tensor's dtype modulo 2^n, as PyTorch converts a
 * Python int (u8 > -1 compares with 255), except shift counts and exponents, which are
 * counts. Division and remainder: TD_CPU_IDIV / TD_CPU_IREM (cpu_internal.h). */
#include "cpu_internal.h"

/* torch.pow's integer kernel: square-and-multiply modulo 2^64 (so modulo 2^n) for e >= 0
 * (0^0 = 1); for e < 0, 1 for x = 1, +-1 for x = -1, else 0. */
static inline uint64_t ipow(int64_t x, int64_t e)
{
    if (e < 0) {
        if (x == 1)
            return 1u;
        if (x == -1)
            return (e & 1) ? ~(uint64_t)0 : 1u;
        return 0u;
    }
    uint64_t base = (uint64_t)x, acc = 1u, n = (uint64_t)e;
    while (n) {
        if (n & 1u)
            acc *= base;
        base *= base;
        n >>= 1;
    }
    return acc;
}

/* Shifts follow torch: left by s outside [0, bits) is 0; right by s outside [0, bits) is the
 * sign fill (0 or -1), which a right shift of the value widened to int64 by 63 gives. Left
 * shifts run on uint64_t; right shifts of negative values are written as ~(~x >> s), since
 * >> of a negative int is implementation-defined in C. */
static inline uint64_t ishl(int64_t x, int64_t s, int64_t bits)
{
    return (s < 0 || s >= bits) ? 0u : (uint64_t)x << s;
}

static inline int64_t ishr(int64_t x, int64_t s)
{
    if (s < 0 || s >= 64)
        s = 63;
    return x >= 0 ? x >> s : ~(~x >> s);
}

/* ---- unary: out[i] = EXPR(x), with x a T; with a scalar, s is the int32 argument and sv
 * the scalar in the tensor's dtype (modulo 2^n) ---- */

#define TD_INT_UNARY(NAME, TO, EXPR)                                                            \
    td_status td_cpu_##NAME(const td_tensor *a, td_tensor *out)                                 \
    {                                                                                           \
        TD_CPU_INT_CASES(td_be_dtype(a), {                                                      \
            const T *restrict pa = (const T *)td_be_data(a);                                    \
            TO *restrict po = (TO *)td_be_data(out);                                            \
            TD_CPU_FOR(i, td_be_numel(out), const T x = pa[i]; po[i] = (EXPR););                \
        })                                                                                      \
        return TD_OK;                                                                           \
    }

#define TD_INT_UNARY_S(NAME, TO, EXPR)                                                          \
    td_status td_cpu_##NAME(const td_tensor *a, int32_t s, td_tensor *out)                      \
    {                                                                                           \
        TD_CPU_INT_CASES(td_be_dtype(a), {                                                      \
            const T sv = TD_CPU_WRAP(s);                                                        \
            (void)sv;                                                                           \
            const T *restrict pa = (const T *)td_be_data(a);                                    \
            TO *restrict po = (TO *)td_be_data(out);                                            \
            TD_CPU_FOR(i, td_be_numel(out), const T x = pa[i]; po[i] = (EXPR););                \
        })                                                                                      \
        return TD_OK;                                                                           \
    }

/* the T result of an int64 or uint64 computation, modulo 2^n */
#define BITS ((int64_t)(8 * sizeof(T)))

TD_INT_UNARY(int_neg, T, TD_CPU_WNEG(x))

TD_INT_UNARY_S(int_add_scalar, T, TD_CPU_WADD(x, sv))
TD_INT_UNARY_S(int_sub_scalar, T, TD_CPU_WSUB(x, sv))
TD_INT_UNARY_S(int_mul_scalar, T, TD_CPU_WMUL(x, sv))

/* value == 0 is the error; otherwise C truncation (x / -1 wraps, see TD_CPU_IDIV). */
td_status td_cpu_int_div_scalar(const td_tensor *a, int32_t value, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T sv = TD_CPU_WRAP(value);
        if (sv == 0)
            return td_error(TD_E_INVALID, "int_div_scalar: cpu: division by zero");
        const T *restrict pa = (const T *)td_be_data(a);
        T *restrict po = (T *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), po[i] = TD_CPU_IDIV(pa[i], sv););
    })
    return TD_OK;
}

td_status td_cpu_int_remainder_scalar(const td_tensor *a, int32_t value, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T sv = TD_CPU_WRAP(value);
        if (sv == 0)
            return td_error(TD_E_INVALID, "int_remainder_scalar: cpu: division by zero");
        const T *restrict pa = (const T *)td_be_data(a);
        T *restrict po = (T *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), po[i] = TD_CPU_IREM(pa[i], sv););
    })
    return TD_OK;
}

/* ---- abs, sign, powers ---- */

/* The sign of a value widened to int64 (a call, so that the unsigned u8 case is no
 * always-false comparison to the compiler). */
static inline bool is_neg(int64_t x)
{
    return x < 0;
}

TD_INT_UNARY(int_abs, T, is_neg((int64_t)x) ? TD_CPU_WNEG(x) : x)
TD_INT_UNARY(int_square, T, TD_CPU_WMUL(x, x))
TD_INT_UNARY(int_sign, T, (T)(((int64_t)x > 0) - is_neg((int64_t)x)))
TD_INT_UNARY_S(int_powi_scalar, T, TD_CPU_WRAP(ipow((int64_t)x, (int64_t)s)))

/* ---- clamp ---- */

td_status td_cpu_int_clamp(const td_tensor *a, int32_t lo, int32_t hi, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T l = TD_CPU_WRAP(lo), h = TD_CPU_WRAP(hi);
        const T *restrict pa = (const T *)td_be_data(a);
        T *restrict po = (T *)td_be_data(out);
        /* torch.clamp: min(max(x, lo), hi), so lo > hi gives hi. */
        TD_CPU_FOR(i, td_be_numel(out), {
            const T y = pa[i] < l ? l : pa[i];
            po[i] = y > h ? h : y;
        });
    })
    return TD_OK;
}

TD_INT_UNARY_S(int_clamp_min, T, x < sv ? sv : x)
TD_INT_UNARY_S(int_clamp_max, T, x > sv ? sv : x)

/* ---- comparisons with a scalar (in the tensor's dtype, as PyTorch compares) ---- */

TD_INT_UNARY_S(int_equal_elem, bool, x == sv)
TD_INT_UNARY_S(int_not_equal_elem, bool, x != sv)
TD_INT_UNARY_S(int_greater_elem, bool, x > sv)
TD_INT_UNARY_S(int_greater_equal_elem, bool, x >= sv)
TD_INT_UNARY_S(int_lower_elem, bool, x < sv)
TD_INT_UNARY_S(int_lower_equal_elem, bool, x <= sv)

/* ---- bitwise ---- */

TD_INT_UNARY(int_bitwise_not, T, TD_CPU_WRAP(~(uint64_t)x))
TD_INT_UNARY_S(int_bitwise_and_scalar, T, TD_CPU_WRAP((uint64_t)x & (uint64_t)sv))
TD_INT_UNARY_S(int_bitwise_or_scalar, T, TD_CPU_WRAP((uint64_t)x | (uint64_t)sv))
TD_INT_UNARY_S(int_bitwise_xor_scalar, T, TD_CPU_WRAP((uint64_t)x ^ (uint64_t)sv))
TD_INT_UNARY_S(int_bitwise_left_shift_scalar, T, TD_CPU_WRAP(ishl((int64_t)x, (int64_t)s, BITS)))
TD_INT_UNARY_S(int_bitwise_right_shift_scalar, T, TD_CPU_WRAP(ishr((int64_t)x, (int64_t)s)))

/* ---- binary with broadcasting: out[i] = OP(x, y) (as TD_FEW_BINARY_LOOP in cpu_float_ew.h) ---- */

#define TD_INT_BINARY(NAME, TO, EXPR)                                                         \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)           \
    {                                                                                         \
        TD_CPU_INT_CASES(td_be_dtype(a), {                                                    \
        const T *restrict pa = (const T *)td_be_data(a);                                      \
        const T *restrict pb = (const T *)td_be_data(b);                                      \
        TO *restrict po = (TO *)td_be_data(out);                                              \
        const int64_t n = td_be_numel(out);                                                   \
        if (td_be_numel(a) == n && td_be_numel(b) == n) {                                     \
            TD_CPU_FOR(i, n, const T x = pa[i]; const T y = pb[i]; po[i] = (EXPR););          \
        } else if (td_be_numel(a) == n && td_be_numel(b) == 1) {                              \
            const T y = pb[0];                                                                \
            TD_CPU_FOR(i, n, const T x = pa[i]; po[i] = (EXPR););                             \
        } else if (td_be_numel(a) == 1 && td_be_numel(b) == n) {                              \
            const T x = pa[0];                                                                \
            TD_CPU_FOR(i, n, const T y = pb[i]; po[i] = (EXPR););                             \
        } else {                                                                              \
            td_cpu_bcast it;                                                                  \
            const td_shape *ins[2] = { td_be_shape(a), td_be_shape(b) };                      \
            td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);                                 \
            const int64_t inner = it.inner, ia = it.st[0][it.ndim - 1], ib = it.st[1][it.ndim - 1]; \
            TD_CPU_FOR_WORK(r, it.rows, n, {                                                  \
                int64_t off[3];                                                               \
                td_cpu_bcast_row(&it, r, off);                                                \
                const T *ra = pa + off[0];                                                    \
                const T *rb = pb + off[1];                                                    \
                TO *ro = po + r * inner;                                                      \
                for (int64_t j = 0; j < inner; j++) {                                         \
                    const T x = ra[j * ia], y = rb[j * ib];                                   \
                    ro[j] = (EXPR);                                                           \
                }                                                                             \
            });                                                                               \
        }                                                                                     \
        })                                                                                    \
        return TD_OK;                                                                         \
    }

TD_INT_BINARY(int_powi, T, TD_CPU_WRAP(ipow((int64_t)x, (int64_t)y)))
TD_INT_BINARY(int_maximum, T, x > y ? x : y)
TD_INT_BINARY(int_minimum, T, x < y ? x : y)
TD_INT_BINARY(int_not_equal, bool, x != y)
TD_INT_BINARY(int_greater_equal, bool, x >= y)
TD_INT_BINARY(int_lower_equal, bool, x <= y)
TD_INT_BINARY(int_bitwise_and, T, TD_CPU_WRAP((uint64_t)x & (uint64_t)y))
TD_INT_BINARY(int_bitwise_or, T, TD_CPU_WRAP((uint64_t)x | (uint64_t)y))
TD_INT_BINARY(int_bitwise_xor, T, TD_CPU_WRAP((uint64_t)x ^ (uint64_t)y))
TD_INT_BINARY(int_bitwise_left_shift, T, TD_CPU_WRAP(ishl((int64_t)x, (int64_t)y, BITS)))
TD_INT_BINARY(int_bitwise_right_shift, T, TD_CPU_WRAP(ishr((int64_t)x, (int64_t)y)))

/* ---- exact truncated mean ----
 * Sums of up to 2^31 values of at most 32 bits are exact in int64 (|sum| <= 2^62); longer
 * ones are folded, chunk by chunk, into q * n + r (|r| < 2^8 n for the 2^40 elements a
 * tensor may hold), so the mean never overflows whatever n is. i64 values fold at every
 * element (mean_add64: q += x / n, r += x % n, |r| < n kept), which no sum can overflow. */

#define MEAN_CHUNK ((int64_t)1 << 31)

typedef struct mean_acc {
    int64_t q, r, sum;
} mean_acc;

static inline void mean_fold(mean_acc *m, int64_t n)
{
    m->q += m->sum / n;
    m->r += m->sum % n;
    m->sum = 0;
}

static inline void mean_add64(mean_acc *m, int64_t x, int64_t n)
{
    m->q += x / n;
    m->r += x % n;
    if (m->r >= n) {
        m->q++;
        m->r -= n;
    } else if (m->r <= -n) {
        m->q--;
        m->r += n;
    }
}

/* trunc((q * n + r) / n), which lies in the dtype's range (a mean of its values). */
static inline int64_t mean_finish(mean_acc *m, int64_t n)
{
    mean_fold(m, n);
    int64_t t = m->q + m->r / n;
    const int64_t rr = m->r % n;
    if (t > 0 && rr < 0)
        t--;
    else if (t < 0 && rr > 0)
        t++;
    return t;
}

/* ---- whole-tensor reductions ---- */

td_status td_cpu_int_prod(const td_tensor *a, td_tensor *out)
{
    const int64_t n = td_be_numel(a);
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T *p = (const T *)td_be_data(a);
        A acc = 1u; /* unsigned: wraps without UB; the product mod 2^n is order-free */
        if (n >= TD_CPU_PAR_MIN) {
            TD_CPU_OMP_REDUCE(*, acc)
            for (int64_t i = 0; i < n; i++)
                acc = (A)(acc * TD_CPU_ACC(p[i]));
        } else {
            for (int64_t i = 0; i < n; i++)
                acc = (A)(acc * TD_CPU_ACC(p[i]));
        }
        ((T *)td_be_data(out))[0] = TD_CPU_WRAP(acc);
    })
    return TD_OK;
}

/* The rule rejects empty tensors: the first element starts the search. */
td_status td_cpu_int_max(const td_tensor *a, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T *p = (const T *)td_be_data(a);
        T best = p[0];
        for (int64_t i = 1; i < td_be_numel(a); i++)
            best = p[i] > best ? p[i] : best;
        ((T *)td_be_data(out))[0] = best;
    })
    return TD_OK;
}

td_status td_cpu_int_min(const td_tensor *a, td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T *p = (const T *)td_be_data(a);
        T best = p[0];
        for (int64_t i = 1; i < td_be_numel(a); i++)
            best = p[i] < best ? p[i] : best;
        ((T *)td_be_data(out))[0] = best;
    })
    return TD_OK;
}

td_status td_cpu_int_mean(const td_tensor *a, td_tensor *out)
{
    const int64_t n = td_be_numel(a); /* at least 1: the rule rejects empty tensors */
    TD_CPU_INT_CASES(td_be_dtype(a), {
        const T *p = (const T *)td_be_data(a);
        mean_acc m = { 0, 0, 0 };
        if (sizeof(T) == 8) {
            for (int64_t i = 0; i < n; i++)
                mean_add64(&m, (int64_t)p[i], n);
        } else {
            for (int64_t lo = 0; lo < n; lo += MEAN_CHUNK) {
                const int64_t hi = n - lo < MEAN_CHUNK ? n : lo + MEAN_CHUNK;
                for (int64_t i = lo; i < hi; i++)
                    m.sum += (int64_t)p[i];
                mean_fold(&m, n);
            }
        }
        ((T *)td_be_data(out))[0] = (T)mean_finish(&m, n);
    })
    return TD_OK;
}

/* ---- along one dim: a viewed as [outer, size, inner], out as [outer, 1, inner] ---- */

typedef enum int_reduce_kind { IR_SUM, IR_PROD, IR_MEAN, IR_MAX, IR_MIN, IR_ARGMAX, IR_ARGMIN } int_reduce_kind;

/* Columns reduced together: the k loop then reads rows of IBLOCK contiguous ints. */
#define IBLOCK 64

/* Reduces columns j0 .. j0+w-1 of slab o, in T (accumulating in A); the arg-extremes
 * write their indices in T too (the result has the input's dtype). */
#define INT_REDUCE_BLOCK(SUF, TT, UU, AA)                                                                     \
    static void int_reduce_block_##SUF(const TT *a, int64_t size, int64_t inner, int64_t o, int64_t j0,  \
                                       int64_t w, int_reduce_kind kind, TT *out)                         \
    {                                                                                                    \
        typedef TT T;                                                                                    \
        typedef UU U;                                                                                    \
        typedef AA A;                                                                                    \
        const T *base = a + o * size * inner + j0;                                                       \
        T *po = out + o * inner + j0;                                                                    \
        if (kind == IR_SUM || kind == IR_PROD) {                                                         \
            A acc[IBLOCK];                                                                               \
            for (int64_t t = 0; t < w; t++)                                                              \
                acc[t] = kind == IR_SUM ? 0u : 1u; /* an empty dim: 0 and 1 */                           \
            for (int64_t k = 0; k < size; k++) {                                                         \
                const T *row = base + k * inner;                                                         \
                if (kind == IR_SUM)                                                                      \
                    for (int64_t t = 0; t < w; t++)                                                      \
                        acc[t] = (A)(acc[t] + TD_CPU_ACC(row[t]));                                                           \
                else                                                                                     \
                    for (int64_t t = 0; t < w; t++)                                                      \
                        acc[t] = (A)(acc[t] * TD_CPU_ACC(row[t]));                                                           \
            }                                                                                            \
            for (int64_t t = 0; t < w; t++)                                                              \
                po[t] = (T)acc[t];                                                                       \
            return;                                                                                      \
        }                                                                                                \
        if (kind == IR_MEAN) {                                                                           \
            mean_acc m[IBLOCK];                                                                          \
            for (int64_t t = 0; t < w; t++)                                                              \
                m[t] = (mean_acc){ 0, 0, 0 };                                                            \
            if (sizeof(T) == 8) {                                                                        \
                for (int64_t k = 0; k < size; k++)                                                       \
                    for (int64_t t = 0; t < w; t++)                                                      \
                        mean_add64(&m[t], (int64_t)base[k * inner + t], size);                           \
            } else {                                                                                     \
                for (int64_t k0 = 0; k0 < size; k0 += MEAN_CHUNK) {                                      \
                    const int64_t k1 = size - k0 < MEAN_CHUNK ? size : k0 + MEAN_CHUNK;                  \
                    for (int64_t k = k0; k < k1; k++) {                                                  \
                        const T *row = base + k * inner;                                                 \
                        for (int64_t t = 0; t < w; t++)                                                  \
                            m[t].sum += (int64_t)row[t];                                                 \
                    }                                                                                    \
                    for (int64_t t = 0; t < w; t++)                                                      \
                        mean_fold(&m[t], size);                                                          \
                }                                                                                        \
            }                                                                                            \
            for (int64_t t = 0; t < w; t++)                                                              \
                po[t] = (T)mean_finish(&m[t], size);                                                     \
            return;                                                                                      \
        }                                                                                                \
        /* max, min and their indices: size >= 1 (the rule rejects empty dims); ties keep the first */  \
        T best[IBLOCK];                                                                                  \
        int64_t idx[IBLOCK];                                                                             \
        for (int64_t t = 0; t < w; t++) {                                                                \
            best[t] = base[t];                                                                           \
            idx[t] = 0;                                                                                  \
        }                                                                                                \
        const bool want_max = kind == IR_MAX || kind == IR_ARGMAX;                                       \
        for (int64_t k = 1; k < size; k++) {                                                             \
            const T *row = base + k * inner;                                                             \
            for (int64_t t = 0; t < w; t++) {                                                            \
                const T v = row[t];                                                                      \
                if (want_max ? v > best[t] : v < best[t]) {                                              \
                    best[t] = v;                                                                         \
                    idx[t] = k;                                                                          \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
        const bool values = kind == IR_MAX || kind == IR_MIN;                                            \
        for (int64_t t = 0; t < w; t++)                                                                  \
            po[t] = values ? best[t] : (T)idx[t];                                                        \
    }

INT_REDUCE_BLOCK(i32, int32_t, uint32_t, uint32_t)
INT_REDUCE_BLOCK(i64, int64_t, uint64_t, uint64_t)
INT_REDUCE_BLOCK(i8, int8_t, uint8_t, uint32_t)
INT_REDUCE_BLOCK(u8, uint8_t, uint8_t, uint32_t)

#define INT_REDUCE_RUN(SUF, TT)                                                   \
    {                                                                             \
        const TT *pa = (const TT *)td_be_data(a);                                 \
        TT *po = (TT *)td_be_data(out);                                           \
        TD_CPU_FOR_WORK(u, outer * nblocks, td_be_numel(a), {                     \
            const int64_t o = u / nblocks;                                        \
            const int64_t j0 = (u % nblocks) * IBLOCK;                            \
            const int64_t w = inner - j0 < IBLOCK ? inner - j0 : IBLOCK;          \
            int_reduce_block_##SUF(pa, size, inner, o, j0, w, kind, po);          \
        });                                                                       \
    }                                                                             \
    break;

static td_status int_reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, int_reduce_kind kind)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const int64_t nblocks = (inner + IBLOCK - 1) / IBLOCK;
    switch (td_be_dtype(a)) {
    case TD_I64: INT_REDUCE_RUN(i64, int64_t)
    case TD_I8: INT_REDUCE_RUN(i8, int8_t)
    case TD_U8: INT_REDUCE_RUN(u8, uint8_t)
    default: INT_REDUCE_RUN(i32, int32_t)
    }
    return TD_OK;
}

td_status td_cpu_int_sum_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_SUM);
}

td_status td_cpu_int_prod_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_PROD);
}

td_status td_cpu_int_mean_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_MEAN);
}

td_status td_cpu_int_max_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_MAX);
}

td_status td_cpu_int_min_dim(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_MIN);
}

td_status td_cpu_int_argmax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_ARGMAX);
}

td_status td_cpu_int_argmin(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return int_reduce_dim(a, dim, out, IR_ARGMIN);
}

/* ---- matmul: i-k-j order, multiply-adds modulo 2^32 (2^64 for i64), so modulo 2^n ---- */

#define INT_NB 256

#define INT_GEMM_ROW(SUF, TT, UU, AA)                                                                       \
    static void int_gemm_row_##SUF(const TT *restrict a, const TT *restrict b, TT *restrict c, int64_t k, \
                                   int64_t n)                                                           \
    {                                                                                                   \
        for (int64_t j0 = 0; j0 < n; j0 += INT_NB) {                                                    \
            const int64_t jn = n - j0 < INT_NB ? n - j0 : INT_NB;                                       \
            AA acc[INT_NB];                                                                             \
            for (int64_t j = 0; j < jn; j++)                                                            \
                acc[j] = 0u;                                                                            \
            for (int64_t p = 0; p < k; p++) {                                                           \
                const AA av = (AA)(UU)a[p];                                                                 \
                const TT *restrict br = b + p * n + j0;                                                 \
                for (int64_t j = 0; j < jn; j++)                                                        \
                    acc[j] = (AA)(acc[j] + av * (AA)(UU)br[j]);                                                         \
            }                                                                                           \
            for (int64_t j = 0; j < jn; j++)                                                            \
                c[j0 + j] = (TT)acc[j];                                                                 \
        }                                                                                               \
    }

INT_GEMM_ROW(i32, int32_t, uint32_t, uint32_t)
INT_GEMM_ROW(i64, int64_t, uint64_t, uint64_t)
INT_GEMM_ROW(i8, int8_t, uint8_t, uint32_t)
INT_GEMM_ROW(u8, uint8_t, uint8_t, uint32_t)

#define INT_GEMM_RUN(SUF, TT)                                                                      \
    {                                                                                              \
        const TT *pa = (const TT *)td_be_data(a);                                                  \
        const TT *pb = (const TT *)td_be_data(b);                                                  \
        TT *pc = (TT *)td_be_data(out);                                                            \
        TD_CPU_FOR_WORK(r, batches * m, batches * m * n * k / 16, {                                \
            const int64_t t = r / m, i = r % m;                                                    \
            int64_t aoff = 0, boff = 0, rem = t;                                                   \
            for (int d = nb - 1; d >= 0 && rem > 0; d--) {                                         \
                const int64_t id = rem % ob.dims[d];                                               \
                rem /= ob.dims[d];                                                                 \
                aoff += id * ast[d];                                                               \
                boff += id * bst[d];                                                               \
            }                                                                                      \
            int_gemm_row_##SUF(pa + aoff * m * k + i * k, pb + boff * k * n, pc + r * n, k, n);    \
        });                                                                                        \
    }                                                                                              \
    break;

td_status td_cpu_int_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    td_matmul_geometry g;
    td_matmul_geometry_of(td_be_shape(a), td_be_shape(b), td_be_shape(out), &g);
    const int nb = g.batch.ndim;
    const int64_t m = g.m, n = g.n, k = g.k;
    const td_shape ob = g.batch;
    const int64_t *ast = g.a_stride, *bst = g.b_stride;
    const int64_t batches = ob.numel;
    switch (td_be_dtype(a)) {
    case TD_I64: INT_GEMM_RUN(i64, int64_t)
    case TD_I8: INT_GEMM_RUN(i8, int8_t)
    case TD_U8: INT_GEMM_RUN(u8, uint8_t)
    default: INT_GEMM_RUN(i32, int32_t)
    }
    return TD_OK;
}

/* ---- random: float_random's generator (cpu_device.c), element i uniform in [low, high):
 *   h = mix(seed ^ mix(2 i));  value = low + ((h >> 32) * (high - low)) >> 32
 * (high - low < 2^32, so the product fits in 64 bits; bias below (high - low) / 2^32). ---- */

static uint64_t int_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

td_status td_cpu_int_random(const int64_t *shape, int shape_len, int32_t low, int32_t high, uint64_t seed,
                            td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    int32_t *p = (int32_t *)td_be_data(out);
    const uint64_t range = (uint64_t)((int64_t)high - (int64_t)low); /* 1 .. 2^32 - 1 */
    TD_CPU_FOR(i, td_be_numel(out), {
        const uint64_t h = int_mix(seed ^ int_mix(2u * (uint64_t)i));
        const uint64_t off = ((h >> 32) * range) >> 32;
        p[i] = (int32_t)((int64_t)low + (int64_t)off);
    });
    return TD_OK;
}
