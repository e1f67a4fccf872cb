/* CPU backend: layer normalization and its two backward ops (specs/ops/module_nn.lua), one
 * pass over each row where the decomposition makes ten tensors of x's size.
 *
 * A row is the m = numel(weight) trailing elements of x. Its statistics follow the
 * decomposition's steps: the mean, d = x - mean, var = mean(d * d), s = sqrt(var + eps), in
 * f32 with 8 partial sums the compiler vectorizes (the decomposition sums in the reductions'
 * own order; the generated comparisons hold the two within nmse 1e-6). */
#include <math.h>
#include <stdlib.h>

#include "cpu_internal.h"

enum { LANES = 8 };

/* The sum of (x - c)^2 over x[0, n). */
static float sqdev8(const float *restrict x, float c, int64_t n)
{
    float s8[LANES] = { 0 };
    int64_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int t = 0; t < LANES; t++) {
            const float d = x[j + t] - c;
            s8[t] += d * d;
        }
    float s = 0.0f;
    for (int t = 0; t < LANES; t++)
        s += s8[t];
    for (; j < n; j++) {
        const float d = x[j] - c;
        s += d * d;
    }
    return s;
}

/* A row's mean and 1 / sqrt(var + eps) (m >= 1). */
static void row_stats(const float *x, int64_t m, float eps, float *mean, float *inv)
{
    const float mu = td_cpu_sum8(x, m) / (float)m;
    *mean = mu;
    *inv = 1.0f / sqrtf(sqdev8(x, mu, m) / (float)m + eps);
}

/* rows and m of x for the normalized shape of weight (0 rows when weight is empty). */
static void geometry(const td_tensor *x, const td_tensor *weight, int64_t *rows, int64_t *m)
{
    *m = td_be_numel(weight);
    *rows = *m > 0 ? td_be_numel(x) / *m : 0;
}

td_status td_cpu_float_layer_norm(const td_tensor *x, const td_tensor *weight, const td_tensor *bias, float eps,
                                  td_tensor *out)
{
    int64_t rows, m;
    geometry(x, weight, &rows, &m);
    const float *px = td_be_data(x), *pw = td_be_data(weight), *pb = td_be_data(bias);
    float *py = td_be_data(out);
    TD_CPU_FOR_WORK(r, rows, rows * m, {
        const float *restrict xr = px + r * m;
        float *restrict yr = py + r * m;
        float mean, inv;
        row_stats(xr, m, eps, &mean, &inv);
        for (int64_t j = 0; j < m; j++)
            yr[j] = (xr[j] - mean) * inv * pw[j] + pb[j];
    });
    return TD_OK;
}

/* dx = (gw - mean(gw) - xhat * mean(gw * xhat)) / s per row, gw = grad * weight. */
td_status td_cpu_float_layer_norm_backward(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                           float eps, td_tensor *out)
{
    int64_t rows, m;
    geometry(x, weight, &rows, &m);
    const float *pg = td_be_data(grad), *px = td_be_data(x), *pw = td_be_data(weight);
    float *pd = td_be_data(out);
    TD_CPU_FOR_WORK(r, rows, rows * m * 2, {
        const float *restrict xr = px + r * m, *restrict gr = pg + r * m;
        float *restrict dr = pd + r * m;
        float mean, inv;
        row_stats(xr, m, eps, &mean, &inv);
        float a8[LANES] = { 0 }, b8[LANES] = { 0 };
        int64_t j = 0;
        for (; j + LANES <= m; j += LANES)
            for (int t = 0; t < LANES; t++) {
                const float gw = gr[j + t] * pw[j + t];
                a8[t] += gw;
                b8[t] += gw * ((xr[j + t] - mean) * inv);
            }
        float sa = 0.0f, sb = 0.0f;
        for (int t = 0; t < LANES; t++) {
            sa += a8[t];
            sb += b8[t];
        }
        for (; j < m; j++) {
            const float gw = gr[j] * pw[j];
            sa += gw;
            sb += gw * ((xr[j] - mean) * inv);
        }
        const float mg = sa / (float)m, mgx = sb / (float)m;
        for (int64_t k = 0; k < m; k++)
            dr[k] = (gr[k] * pw[k] - mg - (xr[k] - mean) * inv * mgx) * inv;
    });
    return TD_OK;
}

/* grad * xhat summed over the rows: chunks of CHUNK rows sum into partial rows of their
 * own (threaded), then the partials add up in chunk order (the same sums on any thread
 * count). */
td_status td_cpu_float_layer_norm_backward_weight(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                                  float eps, td_tensor *out)
{
    enum { CHUNK = 128 };
    int64_t rows, m;
    geometry(x, weight, &rows, &m);
    const float *pg = td_be_data(grad), *px = td_be_data(x);
    float *pd = td_be_data(out);
    if (m == 0)
        return TD_OK;
    const int64_t chunks = (rows + CHUNK - 1) / CHUNK;
    float *part = calloc((size_t)(chunks > 0 ? chunks : 1), sizeof(float) * (size_t)m);
    if (part == NULL)
        return td_error(TD_E_NOMEM, "float_layer_norm_backward_weight: out of memory for %lld partial sums",
                        (long long)(chunks * m));
    TD_CPU_FOR_WORK(c, chunks, rows * m, {
        float *restrict acc = part + c * m;
        const int64_t end = (c + 1) * CHUNK < rows ? (c + 1) * CHUNK : rows;
        for (int64_t r = c * CHUNK; r < end; r++) {
            const float *restrict xr = px + r * m, *restrict gr = pg + r * m;
            float mean, inv;
            row_stats(xr, m, eps, &mean, &inv);
            for (int64_t j = 0; j < m; j++)
                acc[j] += gr[j] * ((xr[j] - mean) * inv);
        }
    });
    for (int64_t j = 0; j < m; j++)
        pd[j] = 0.0f;
    for (int64_t c = 0; c < chunks; c++)
        for (int64_t j = 0; j < m; j++)
            pd[j] += part[c * m + j];
    free(part);
    return TD_OK;
}
