/* CPU backend: activations, gelu's gradient and the cross-entropy loss (specs/ops/activation.lua,
 * specs/ops/unary_float.lua). Each kernel follows the steps of the op's decomposition (max subtraction,
 * float exp/log, double sums) so that the backends that run the decomposition agree with it closely. */
#include <math.h>

#include "cpu_internal.h"

static inline float sigmoid(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    const float e = expf(x); /* x < 0 or NaN: no overflow */
    return e / (1.0f + e);
}

/* ---- softmax family: a viewed as [outer, size, inner], one column (o, j) per work unit ---- */

typedef enum sm_kind { SM_SOFTMAX, SM_LOG_SOFTMAX, SM_SOFTMIN } sm_kind;

/* The max of the column, NaN sticking (like float_max_dim); sign flips the inputs (softmin). */
static float column_max(const float *p, int64_t size, int64_t stride, float sign)
{
    float m = sign * p[0];
    for (int64_t k = 1; k < size; k++) {
        const float v = sign * p[k * stride];
        if (m == m && (v > m || v != v))
            m = v;
    }
    return m;
}

static void softmax_column(const float *p, float *o, int64_t size, int64_t stride, sm_kind kind)
{
    if (size == 0)
        return;
    const float sign = kind == SM_SOFTMIN ? -1.0f : 1.0f;
    const float m = column_max(p, size, stride, sign);
    double s = 0.0;
    for (int64_t k = 0; k < size; k++) {
        const float e = expf(sign * p[k * stride] - m);
        s += (double)e;
        if (kind != SM_LOG_SOFTMAX)
            o[k * stride] = e;
    }
    const float sf = (float)s;
    if (kind == SM_LOG_SOFTMAX) {
        const float ls = logf(sf);
        for (int64_t k = 0; k < size; k++)
            o[k * stride] = (p[k * stride] - m) - ls;
    } else {
        for (int64_t k = 0; k < size; k++)
            o[k * stride] = o[k * stride] / sf;
    }
}

static td_status softmax_dim(const td_tensor *a, int64_t dim, td_tensor *out, sm_kind kind)
{
    if (td_be_numel(a) == 0)
        return TD_OK;
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const float *pa = (const float *)td_be_data(a);
    float *po = (float *)td_be_data(out);
    TD_CPU_FOR_WORK(u, outer * inner, td_be_numel(a), {
        const int64_t o = u / inner, j = u % inner;
        const int64_t base = o * size * inner + j;
        softmax_column(pa + base, po + base, size, inner, kind);
    });
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

/* ---- elementwise ---- */

/* min(x, 0) - log1p(e^-|x|): no overflow for any x; NaN stays NaN. */
static inline float log_sigmoid(float x)
{
    const float lo = x < 0.0f ? x : 0.0f;
    return lo - log1pf(expf(-fabsf(x)));
}

td_status td_cpu_float_log_sigmoid(const td_tensor *a, td_tensor *out)
{
    const float *restrict pa = (const float *)td_be_data(a);
    float *restrict po = (float *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), po[i] = log_sigmoid(pa[i]););
    return TD_OK;
}

td_status td_cpu_float_silu(const td_tensor *a, td_tensor *out)
{
    const float *restrict pa = (const float *)td_be_data(a);
    float *restrict po = (float *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), const float x = pa[i]; po[i] = x * sigmoid(x););
    return TD_OK;
}

td_status td_cpu_float_leaky_relu(const td_tensor *a, float negative_slope, td_tensor *out)
{
    const float *restrict pa = (const float *)td_be_data(a);
    float *restrict po = (float *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), const float x = pa[i]; po[i] = x > 0.0f ? x : x * negative_slope;);
    return TD_OK;
}

td_status td_cpu_float_hard_sigmoid(const td_tensor *a, float alpha, float beta, td_tensor *out)
{
    const float *restrict pa = (const float *)td_be_data(a);
    float *restrict po = (float *)td_be_data(out);
    /* clamp(alpha * x + beta, 0, 1) with float_clamp's rules: NaN stays NaN. */
    TD_CPU_FOR(i, td_be_numel(out), {
        const float p = pa[i] * alpha;
        const float t = p + beta;
        const float y = t < 0.0f ? 0.0f : t;
        po[i] = t != t ? t : (y > 1.0f ? 1.0f : y);
    });
    return TD_OK;
}

/* weight broadcasts to a's shape (the shape of out). */
td_status td_cpu_float_prelu(const td_tensor *a, const td_tensor *weight, td_tensor *out)
{
    const int64_t n = td_be_numel(out);
    if (n == 0)
        return TD_OK;
    const float *pa = (const float *)td_be_data(a), *pw = (const float *)td_be_data(weight);
    float *po = (float *)td_be_data(out);
    if (td_be_numel(weight) == n) {
        TD_CPU_FOR(i, n, const float x = pa[i]; po[i] = x > 0.0f ? x : pw[i] * x;);
        return TD_OK;
    }
    td_cpu_bcast it;
    const td_shape *ins[2] = { td_be_shape(a), td_be_shape(weight) };
    td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);
    const int64_t inner = it.inner, sw = it.st[1][it.ndim - 1];
    TD_CPU_FOR_WORK(r, it.rows, n, {
        int64_t off[3];
        td_cpu_bcast_row(&it, r, off);
        const float *ra = pa + off[0];
        const float *rw = pw + off[1];
        float *ro = po + r * inner;
        for (int64_t j = 0; j < inner; j++) {
            const float x = ra[j];
            ro[j] = x > 0.0f ? x : rw[j * sw] * x;
        }
    });
    return TD_OK;
}

/* ---- cross-entropy ---- */

td_status td_cpu_float_cross_entropy(const td_tensor *logits, const td_tensor *targets, td_tensor *out)
{
    const int64_t n = td_be_dims(logits)[0], c = td_be_dims(logits)[1];
    const float *pl = (const float *)td_be_data(logits);
    const int32_t *pt = (const int32_t *)td_be_data(targets);
    /* targets lie in [0, c): the entry checked them (the op's index_range) */
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float *row = pl + i * c;
        const float m = column_max(row, c, 1, 1.0f);
        double s = 0.0;
        for (int64_t k = 0; k < c; k++)
            s += (double)expf(row[k] - m);
        total += (double)((row[pt[i]] - m) - logf((float)s));
    }
    ((float *)td_be_data(out))[0] = (float)(-total / (double)n);
    return TD_OK;
}

/* ---- gelu's gradient (specs/ops/unary_float.lua): one pass where grad and a have the
 * result's shape (the backward of float_gelu always), else rows of the broadcast ---- */

td_status td_cpu_float_gelu_backward(const td_tensor *grad, const td_tensor *a, td_tensor *out)
{
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
