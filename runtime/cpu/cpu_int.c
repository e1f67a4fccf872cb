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
        const int32_t *restrict pa = (const int32_t *)td_be_data(a);          \
        TO *restrict po = (TO *)td_be_data(out);                              \
        TD_CPU_FOR(i, td_be_numel(out), const int32_t x = pa[i]; po[i] = (EXPR);); \
        return TD_OK;                                                   \
    }

#define TD_INT_UNARY_S(NAME, TO, EXPR)                                           \
    td_status td_cpu_##NAME(const td_tensor *a, int32_t s, td_tensor *out)       \
    {                                                                            \
        const int32_t *restrict pa = (const int32_t *)td_be_data(a);                   \
        TO *restrict po = (TO *)td_be_data(out);                                       \
        TD_CPU_FOR(i, td_be_numel(out), const int32_t x = pa[i]; po[i] = (EXPR);); \
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
    const int32_t *restrict pa = (const int32_t *)td_be_data(a);
    int32_t *restrict po = (int32_t *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), po[i] = trunc_div(pa[i], value););
    return TD_OK;
}

td_status td_cpu_int_remainder_scalar(const td_tensor *a, int32_t value, td_tensor *out)
{
    if (value == 0)
        return td_error(TD_E_INVALID, "int_remainder_scalar: cpu: division by zero");
    const int32_t *restrict pa = (const int32_t *)td_be_data(a);
    int32_t *restrict po = (int32_t *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), po[i] = floor_rem(pa[i], value););
    return TD_OK;
}

/* ---- abs, sign, powers ---- */

/* torch.pow's integer kernel: square-and-multiply modulo 2^32 for e >= 0 (0^0 = 1); for
 * e < 0, 1 for x = 1, +-1 for x = -1, else 0. */
static inline int32_t powi(int32_t x, int32_t e)
{
    if (e < 0) {
        if (x == 1)
            return 1;
        if (x == -1)
            return (e & 1) ? -1 : 1;
        return 0;
    }
    uint32_t base = (uint32_t)x, acc = 1u, n = (uint32_t)e;
    while (n) {
        if (n & 1u)
            acc *= base;
        base *= base;
        n >>= 1;
    }
    return (int32_t)acc;
}

TD_INT_UNARY(int_abs, int32_t, x < 0 ? (int32_t)(0u - (uint32_t)x) : x)
TD_INT_UNARY(int_square, int32_t, (int32_t)((uint32_t)x * (uint32_t)x))
TD_INT_UNARY(int_sign, int32_t, (int32_t)(x > 0) - (int32_t)(x < 0))
TD_INT_UNARY_S(int_powi_scalar, int32_t, powi(x, s))

/* ---- clamp ---- */

td_status td_cpu_int_clamp(const td_tensor *a, int32_t lo, int32_t hi, td_tensor *out)
{
    const int32_t *restrict pa = (const int32_t *)td_be_data(a);
    int32_t *restrict po = (int32_t *)td_be_data(out);
    /* torch.clamp: min(max(x, lo), hi), so lo > hi gives hi. */
    TD_CPU_FOR(i, td_be_numel(out), {
        const int32_t y = pa[i] < lo ? lo : pa[i];
        po[i] = y > hi ? hi : y;
    });
    return TD_OK;
}

TD_INT_UNARY_S(int_clamp_min, int32_t, x < s ? s : x)
TD_INT_UNARY_S(int_clamp_max, int32_t, x > s ? s : x)

/* ---- comparisons with a scalar ---- */

TD_INT_UNARY_S(int_equal_elem, bool, x == s)
TD_INT_UNARY_S(int_not_equal_elem, bool, x != s)
TD_INT_UNARY_S(int_greater_elem, bool, x > s)
TD_INT_UNARY_S(int_greater_equal_elem, bool, x >= s)
TD_INT_UNARY_S(int_lower_elem, bool, x < s)
TD_INT_UNARY_S(int_lower_equal_elem, bool, x <= s)

/* ---- bitwise ----
 * Shifts follow torch: left by s outside [0, 32) is 0; right by s outside [0, 32) is the
 * sign fill (0 or -1). Left shifts run on uint32_t; right shifts of negative values are
 * written as ~(~x >> s), since >> of a negative int is implementation-defined in C. */

static inline int32_t shl(int32_t x, int32_t s)
{
    return (s < 0 || s >= 32) ? 0 : (int32_t)((uint32_t)x << s);
}

static inline int32_t shr(int32_t x, int32_t s)
{
    if (s < 0 || s >= 32)
        s = 31;
    return x >= 0 ? x >> s : ~(~x >> s);
}

TD_INT_UNARY(int_bitwise_not, int32_t, ~x)
TD_INT_UNARY_S(int_bitwise_and_scalar, int32_t, x & s)
TD_INT_UNARY_S(int_bitwise_or_scalar, int32_t, x | s)
TD_INT_UNARY_S(int_bitwise_xor_scalar, int32_t, x ^ s)
TD_INT_UNARY_S(int_bitwise_left_shift_scalar, int32_t, shl(x, s))
TD_INT_UNARY_S(int_bitwise_right_shift_scalar, int32_t, shr(x, s))

/* ---- binary with broadcasting: out[i] = OP(x, y) (as TD_CPU_BINARY_BODY in cpu_elementwise.c) ---- */

#define TD_INT_BINARY(NAME, TO, EXPR)                                                         \
    static inline TO op_##NAME(int32_t x, int32_t y)                                          \
    {                                                                                         \
        return (TO)(EXPR);                                                                    \
    }                                                                                         \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)           \
    {                                                                                         \
        const int32_t *restrict pa = (const int32_t *)td_be_data(a);                                \
        const int32_t *restrict pb = (const int32_t *)td_be_data(b);                                \
        TO *restrict po = (TO *)td_be_data(out);                                                    \
        const int64_t n = td_be_numel(out);                                                   \
        if (td_be_numel(a) == n && td_be_numel(b) == n) {                                     \
            TD_CPU_FOR(i, n, po[i] = op_##NAME(pa[i], pb[i]););                               \
        } else if (td_be_numel(a) == n && td_be_numel(b) == 1) {                              \
            const int32_t y = pb[0];                                                          \
            TD_CPU_FOR(i, n, po[i] = op_##NAME(pa[i], y););                                   \
        } else if (td_be_numel(a) == 1 && td_be_numel(b) == n) {                              \
            const int32_t x = pa[0];                                                          \
            TD_CPU_FOR(i, n, po[i] = op_##NAME(x, pb[i]););                                   \
        } else {                                                                              \
            td_cpu_bcast it;                                                                  \
            const td_shape *ins[2] = { td_be_shape(a), td_be_shape(b) };                                \
            td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);                                      \
            const int64_t inner = it.inner, ia = it.st[0][it.ndim - 1], ib = it.st[1][it.ndim - 1]; \
            TD_CPU_FOR_WORK(r, it.rows, n, {                                                  \
                int64_t off[3];                                                               \
                td_cpu_bcast_row(&it, r, off);                                                \
                const int32_t *ra = pa + off[0];                                              \
                const int32_t *rb = pb + off[1];                                              \
                TO *ro = po + r * inner;                                                      \
                for (int64_t j = 0; j < inner; j++)                                           \
                    ro[j] = op_##NAME(ra[j * ia], rb[j * ib]);                                \
            });                                                                               \
        }                                                                                     \
        return TD_OK;                                                                         \
    }

TD_INT_BINARY(int_powi, int32_t, powi(x, y))
TD_INT_BINARY(int_maximum, int32_t, x > y ? x : y)
TD_INT_BINARY(int_minimum, int32_t, x < y ? x : y)
TD_INT_BINARY(int_not_equal, bool, x != y)
TD_INT_BINARY(int_greater_equal, bool, x >= y)
TD_INT_BINARY(int_lower_equal, bool, x <= y)
TD_INT_BINARY(int_bitwise_and, int32_t, x & y)
TD_INT_BINARY(int_bitwise_or, int32_t, x | y)
TD_INT_BINARY(int_bitwise_xor, int32_t, x ^ y)
TD_INT_BINARY(int_bitwise_left_shift, int32_t, shl(x, y))
TD_INT_BINARY(int_bitwise_right_shift, int32_t, shr(x, y))

/* ---- exact truncated mean ----
 * Sums of up to 2^31 int32 values are exact in int64 (|sum| <= 2^62); longer ones are
 * folded, chunk by chunk, into q * n + r (|r| < 2^8 n for the 2^40 elements a tensor may
 * hold), so the mean never overflows whatever n is. */

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

/* trunc((q * n + r) / n), which lies in the int32 range (a mean of int32 values). */
static inline int32_t mean_finish(mean_acc *m, int64_t n)
{
    mean_fold(m, n);
    int64_t t = m->q + m->r / n;
    const int64_t rr = m->r % n;
    if (t > 0 && rr < 0)
        t--;
    else if (t < 0 && rr > 0)
        t++;
    return (int32_t)t;
}

/* ---- whole-tensor reductions ---- */

td_status td_cpu_int_prod(const td_tensor *a, td_tensor *out)
{
    const int32_t *p = (const int32_t *)td_be_data(a);
    const int64_t n = td_be_numel(a);
    uint32_t acc = 1u; /* unsigned: wraps without UB; the product mod 2^32 is order-free */
    if (n >= TD_CPU_PAR_MIN) {
#ifdef _OPENMP
        TD_CPU_PRAGMA(omp parallel for num_threads(td_cpu_threads()) reduction(* : acc) schedule(static))
#endif
        for (int64_t i = 0; i < n; i++)
            acc *= (uint32_t)p[i];
    } else {
        for (int64_t i = 0; i < n; i++)
            acc *= (uint32_t)p[i];
    }
    ((int32_t *)td_be_data(out))[0] = (int32_t)acc;
    return TD_OK;
}

td_status td_cpu_int_max(const td_tensor *a, td_tensor *out)
{
    const int32_t *p = (const int32_t *)td_be_data(a);
    int32_t best = INT32_MIN; /* the rule rejects empty tensors */
    for (int64_t i = 0; i < td_be_numel(a); i++)
        best = p[i] > best ? p[i] : best;
    ((int32_t *)td_be_data(out))[0] = best;
    return TD_OK;
}

td_status td_cpu_int_min(const td_tensor *a, td_tensor *out)
{
    const int32_t *p = (const int32_t *)td_be_data(a);
    int32_t best = INT32_MAX;
    for (int64_t i = 0; i < td_be_numel(a); i++)
        best = p[i] < best ? p[i] : best;
    ((int32_t *)td_be_data(out))[0] = best;
    return TD_OK;
}

td_status td_cpu_int_mean(const td_tensor *a, td_tensor *out)
{
    const int32_t *p = (const int32_t *)td_be_data(a);
    const int64_t n = td_be_numel(a); /* at least 1: the rule rejects empty tensors */
    mean_acc m = { 0, 0, 0 };
    for (int64_t lo = 0; lo < n; lo += MEAN_CHUNK) {
        const int64_t hi = n - lo < MEAN_CHUNK ? n : lo + MEAN_CHUNK;
        for (int64_t i = lo; i < hi; i++)
            m.sum += p[i];
        mean_fold(&m, n);
    }
    ((int32_t *)td_be_data(out))[0] = mean_finish(&m, n);
    return TD_OK;
}

/* ---- along one dim: a viewed as [outer, size, inner], out as [outer, 1, inner] ---- */

typedef enum int_reduce_kind { IR_SUM, IR_PROD, IR_MEAN, IR_MAX, IR_MIN, IR_ARGMAX, IR_ARGMIN } int_reduce_kind;

/* Columns reduced together: the k loop then reads rows of IBLOCK contiguous ints. */
#define IBLOCK 64

/* Reduces columns j0 .. j0+w-1 of slab o. */
static void int_reduce_block(const int32_t *a, int64_t size, int64_t inner, int64_t o, int64_t j0, int64_t w,
                             int_reduce_kind kind, int32_t *out)
{
    const int32_t *base = a + o * size * inner + j0;
    int32_t *po = out + o * inner + j0;
    if (kind == IR_SUM || kind == IR_PROD) {
        uint32_t acc[IBLOCK];
        for (int64_t t = 0; t < w; t++)
            acc[t] = kind == IR_SUM ? 0u : 1u; /* an empty dim: 0 and 1 */
        for (int64_t k = 0; k < size; k++) {
            const int32_t *row = base + k * inner;
            if (kind == IR_SUM)
                for (int64_t t = 0; t < w; t++)
                    acc[t] += (uint32_t)row[t];
            else
                for (int64_t t = 0; t < w; t++)
                    acc[t] *= (uint32_t)row[t];
        }
        for (int64_t t = 0; t < w; t++)
            po[t] = (int32_t)acc[t];
        return;
    }
    if (kind == IR_MEAN) {
        mean_acc m[IBLOCK];
        for (int64_t t = 0; t < w; t++)
            m[t] = (mean_acc){ 0, 0, 0 };
        for (int64_t k0 = 0; k0 < size; k0 += MEAN_CHUNK) {
            const int64_t k1 = size - k0 < MEAN_CHUNK ? size : k0 + MEAN_CHUNK;
            for (int64_t k = k0; k < k1; k++) {
                const int32_t *row = base + k * inner;
                for (int64_t t = 0; t < w; t++)
                    m[t].sum += row[t];
            }
            for (int64_t t = 0; t < w; t++)
                mean_fold(&m[t], size);
        }
        for (int64_t t = 0; t < w; t++)
            po[t] = mean_finish(&m[t], size);
        return;
    }
    /* max, min and their indices: size >= 1 (the rule rejects empty dims); ties keep the first */
    int32_t best[IBLOCK];
    int32_t idx[IBLOCK];
    for (int64_t t = 0; t < w; t++) {
        best[t] = base[t];
        idx[t] = 0;
    }
    const bool want_max = kind == IR_MAX || kind == IR_ARGMAX;
    for (int64_t k = 1; k < size; k++) {
        const int32_t *row = base + k * inner;
        for (int64_t t = 0; t < w; t++) {
            const int32_t v = row[t];
            if (want_max ? v > best[t] : v < best[t]) {
                best[t] = v;
                idx[t] = (int32_t)k;
            }
        }
    }
    const bool values = kind == IR_MAX || kind == IR_MIN;
    for (int64_t t = 0; t < w; t++)
        po[t] = values ? best[t] : idx[t];
}

static td_status int_reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, int_reduce_kind kind)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const int64_t nblocks = (inner + IBLOCK - 1) / IBLOCK;
    const int32_t *pa = (const int32_t *)td_be_data(a);
    int32_t *po = (int32_t *)td_be_data(out);
    TD_CPU_FOR_WORK(u, outer * nblocks, td_be_numel(a), {
        const int64_t o = u / nblocks;
        const int64_t j0 = (u % nblocks) * IBLOCK;
        const int64_t w = inner - j0 < IBLOCK ? inner - j0 : IBLOCK;
        int_reduce_block(pa, size, inner, o, j0, w, kind, po);
    });
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

/* ---- matmul: i-k-j order, multiply-adds modulo 2^32 ---- */

#define INT_NB 256

static void int_gemm_row(const int32_t *restrict a, const int32_t *restrict b, int32_t *restrict c, int64_t k,
                         int64_t n)
{
    for (int64_t j0 = 0; j0 < n; j0 += INT_NB) {
        const int64_t jn = n - j0 < INT_NB ? n - j0 : INT_NB;
        uint32_t acc[INT_NB];
        for (int64_t j = 0; j < jn; j++)
            acc[j] = 0u;
        for (int64_t p = 0; p < k; p++) {
            const uint32_t av = (uint32_t)a[p];
            const int32_t *restrict br = b + p * n + j0;
            for (int64_t j = 0; j < jn; j++)
                acc[j] += av * (uint32_t)br[j];
        }
        for (int64_t j = 0; j < jn; j++)
            c[j0 + j] = (int32_t)acc[j];
    }
}

td_status td_cpu_int_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    td_matmul_geometry g;
    td_matmul_geometry_of(td_be_shape(a), td_be_shape(b), td_be_shape(out), &g);
    const int nb = g.batch.ndim;
    const int64_t m = g.m, n = g.n, k = g.k;
    const td_shape ob = g.batch;
    const int64_t *ast = g.a_stride, *bst = g.b_stride;
    const int32_t *pa = (const int32_t *)td_be_data(a);
    const int32_t *pb = (const int32_t *)td_be_data(b);
    int32_t *pc = (int32_t *)td_be_data(out);
    const int64_t batches = ob.numel;
    TD_CPU_FOR_WORK(r, batches * m, batches * m * n * k / 16, {
        const int64_t t = r / m, i = r % m;
        int64_t aoff = 0, boff = 0, rem = t;
        for (int d = nb - 1; d >= 0 && rem > 0; d--) {
            const int64_t id = rem % ob.dims[d];
            rem /= ob.dims[d];
            aoff += id * ast[d];
            boff += id * bst[d];
        }
        int_gemm_row(pa + aoff * m * k + i * k, pb + boff * k * n, pc + r * n, k, n);
    });
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
