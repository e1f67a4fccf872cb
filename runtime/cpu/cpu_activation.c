/* CPU backend: activations, gelu's gradient and the cross-entropy loss (specs/ops/activation.lua,
 * specs/ops/unary_float.lua). Each kernel follows the steps of the op's decomposition (max subtraction,
 * float exp/log, double sums) so that the backends that run the decomposition agree with it closely. */
#include <math.h>
#include <tgmath.h> /* exp(x) is expf for float x, exp for double: one source per op */

#include "cpu_float_ew.h"

/* The helpers in f32 (SUF 32, ACC the double sums) and f64 (SUF 64): one body each. */
#define ACT_HELPERS(SUF, T)                                                                      \
    static inline T sigmoid##SUF(T x)                                                            \
    {                                                                                            \
        if (x >= (T)0)                                                                           \
            return (T)1 / ((T)1 + exp(-x));                                                      \
        const T e = exp(x); /* x < 0 or NaN: no overflow */                                      \
        return e / ((T)1 + e);                                                                   \
    }                                                                                            \
    /* min(x, 0) - log1p(e^-|x|): no overflow for any x; NaN stays NaN. */                       \
    static inline T log_sigmoid##SUF(T x)                                                        \
    {                                                                                            \
        const T lo = x < (T)0 ? x : (T)0;                                                        \
        return lo - log1p(exp(-fabs(x)));                                                        \
    }                                                                                            \
    /* clamp(alpha * x + beta, 0, 1) with float_clamp's rules: NaN stays NaN. */                 \
    static inline T hard_sigmoid##SUF(T x, T alpha, T beta)                                      \
    {                                                                                            \
        const T p = x * alpha;                                                                   \
        const T t = p + beta;                                                                    \
        const T y = t < (T)0 ? (T)0 : t;                                                         \
        return t != t ? t : (y > (T)1 ? (T)1 : y);                                               \
    }                                                                                            \
    /* The max of the column, NaN sticking (like float_max_dim); sign flips the inputs. */       \
    static T column_max##SUF(const T *p, int64_t size, int64_t stride, T sign)                   \
    {                                                                                            \
        T m = sign * p[0];                                                                       \
        for (int64_t k = 1; k < size; k++) {                                                     \
            const T v = sign * p[k * stride];                                                    \
            if (m == m && (v > m || v != v))                                                     \
                m = v;                                                                           \
        }                                                                                        \
        return m;                                                                                \
    }                                                                                            \
    static void softmax_column##SUF(const T *p, T *o, int64_t size, int64_t stride, sm_kind kind) \
    {                                                                                            \
        if (size == 0)                                                                           \
            return;                                                                              \
        const T sign = kind == SM_SOFTMIN ? (T)-1 : (T)1;                                        \
        const T m = column_max##SUF(p, size, stride, sign);                                      \
        double s = 0.0;                                                                          \
        for (int64_t k = 0; k < size; k++) {                                                     \
            const T e = exp(sign * p[k * stride] - m);                                           \
            s += (double)e;                                                                      \
            if (kind != SM_LOG_SOFTMAX)                                                          \
                o[k * stride] = e;                                                               \
        }                                                                                        \
        const T sf = (T)s;                                                                       \
        if (kind == SM_LOG_SOFTMAX) {                                                            \
            const T ls = log(sf);                                                                \
            for (int64_t k = 0; k < size; k++)                                                   \
                o[k * stride] = (p[k * stride] - m) - ls;                                        \
        } else {                                                                                 \
            for (int64_t k = 0; k < size; k++)                                                   \
                o[k * stride] = o[k * stride] / sf;                                              \
        }                                                                                        \
    }                                                                                            \
    static void softmax_dim##SUF(const td_tensor *a, int64_t dim, td_tensor *out, sm_kind kind)  \
    {                                                                                            \
        int64_t outer, size, inner;                                                              \
        td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);                          \
        const T *pa = (const T *)td_be_data(a);                                                  \
        T *po = (T *)td_be_data(out);                                                            \
        TD_CPU_FOR_WORK(u, outer * inner, td_be_numel(a), {                                      \
            const int64_t o = u / inner, j = u % inner;                                          \
            const int64_t base = o * size * inner + j;                                           \
            softmax_column##SUF(pa + base, po + base, size, inner, kind);                        \
        });                                                                                      \
    }                                                                                            \
    /* targets lie in [0, c): the entry checked them (the op's index_range) */                   \
    static void cross_entropy##SUF(const td_tensor *logits, const td_tensor *targets, td_tensor *out) \
    {                                                                                            \
        const int64_t n = td_be_dims(logits)[0], c = td_be_dims(logits)[1];                      \
        const T *pl = (const T *)td_be_data(logits);                                             \
        const int32_t *pt = (const int32_t *)td_be_data(targets);                                \
        double total = 0.0;                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                        \
            const T *row = pl + i * c;                                                           \
            const T m = column_max##SUF(row, c, 1, (T)1);                                        \
            double s = 0.0;                                                                      \
            for (int64_t k = 0; k < c; k++)                                                      \
                s += (double)exp(row[k] - m);                                                    \
            total += (double)((row[pt[i]] - m) - log((T)s));                                     \
        }                                                                                        \
        ((T *)td_be_data(out))[0] = (T)(-total / (double)n);                                     \
    }

/* ---- softmax family: a viewed as [outer, size, inner], one column (o, j) per work unit ---- */

typedef enum sm_kind { SM_SOFTMAX, SM_LOG_SOFTMAX, SM_SOFTMIN } sm_kind;

ACT_HELPERS(32, float)
ACT_HELPERS(64, double)
#define act_sigmoid(x) _Generic((x), float: sigmoid32, double: sigmoid64)(x)
#define act_log_sigmoid(x) _Generic((x), float: log_sigmoid32, double: log_sigmoid64)(x)
#define act_hard_sigmoid(x, a, b) _Generic((x), float: hard_sigmoid32, double: hard_sigmoid64)((x), (a), (b))

/* f32 and f64 (f16 / bf16 run via f32: the sums want whole columns in f32). */
static td_status softmax_dim(const td_tensor *a, int64_t dim, td_tensor *out, sm_kind kind)
{
    if (td_be_numel(a) == 0)
        return TD_OK;
    if (td_be_dtype(a) == TD_F64)
        softmax_dim64(a, dim, out, kind);
    else
        softmax_dim32(a, dim, out, kind);
    return TD_OK;
}

td_status td_cpu_float_softmax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return softmax_dim(a, dim, out, SM_SOFTMAX);
}

td_status td_cpu_float_log_softmax(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return softmax_dim(a, dim, out, SM_LOG_SOFTMAX);
}

td_status td_cpu_float_softmin(const td_tensor *a, int64_t dim, td_tensor *out)
{
    return softmax_dim(a, dim, out, SM_SOFTMIN);
}

/* ---- elementwise: f32, f64, f16 and bf16 (cpu_float_ew.h) ---- */

TD_FEW_UNARY(float_log_sigmoid, T, act_log_sigmoid(x))
TD_FEW_UNARY(float_silu, T, x * act_sigmoid(x))
TD_FEW_UNARY_S(float_leaky_relu, float, T, x > (T)0 ? x : x * s)
TD_FEW_UNARY_S2(float_hard_sigmoid, act_hard_sigmoid(x, s, s2))
/* weight (y) broadcasts to a's shape (the shape of out). */
TD_FEW_BINARY(float_prelu, T, x > (T)0 ? x : y * x)

/* ---- cross-entropy: f32 and f64 ---- */

td_status td_cpu_float_cross_entropy(const td_tensor *logits, const td_tensor *targets, td_tensor *out)
{
    if (td_be_dtype(logits) == TD_F64)
        cross_entropy64(logits, targets, out);
    else
        cross_entropy32(logits, targets, out);
    return TD_OK;
}

/* ---- gelu's gradient (specs/ops/unary_float.lua): one pass where grad and a have the
 * result's shape (the backward of float_gelu always), else rows of the broadcast ---- */

/* g (Phi(x) + x phi(x)) in double: the f64 kernel (f32 runs cpu_vecmath.c's). */
static inline double gelu_bwd64(double g, double x)
{
    const double cdf = 0.5 * erfc(-x * 0.70710678118654752440); /* no 1 + erf cancelling */
    const double pdf = exp(-0.5 * (x * x)) * 0.39894228040143267794;
    return g * (cdf + x * pdf);
}

td_status td_cpu_float_gelu_backward(const td_tensor *grad, const td_tensor *a, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        const td_tensor *b = a;
        a = grad; /* the loop's names: out = OP(a, b) */
        TD_FEW_BINARY_LOOP(double, double, double, gelu_bwd64)
        return TD_OK;
    }
    const float *pg = (const float *)td_be_data(grad), *pa = (const float *)td_be_data(a);
    float *po = (float *)td_be_data(out);
    const int64_t n = td_be_numel(out);
    if (td_be_numel(grad) == n && td_be_numel(a) == n) {
        td_cpu_vgelu_backward(pg, pa, po, n);
        return TD_OK;
    }
    td_cpu_bcast it;
    const td_shape *ins[2] = { td_be_shape(grad), td_be_shape(a) };
    td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);
    const int64_t inner = it.inner, ig = it.st[0][it.ndim - 1], ia = it.st[1][it.ndim - 1];
    TD_CPU_FOR_WORK(r, it.rows, n, {
        int64_t off[3];
        td_cpu_bcast_row(&it, r, off);
        for (int64_t j = 0; j < inner; j++)
            po[r * inner + j] = td_cpu_gelu_backward1(pg[off[0] + j * ig], pa[off[1] + j * ia]);
    });
    return TD_OK;
}
