/* CPU backend: layer normalization and its two backward ops (specs/ops/module_nn.lua), one
 * pass over each row where the decomposition makes ten tensors of x's size.
 *
 * A row is the m = numel(weight) trailing elements of x. Its statistics follow the
 * decomposition's steps: the mean, d = x - mean, var = mean(d * d), s = sqrt(var + eps), in
 * f32 with 8 partial sums the compiler vectorizes (the decomposition sums in the reductions'
 * own order; the generated comparisons hold the two within nmse 1e-6). f32 and f64 from one
 * source, cpu_norm_t.h (f16 / bf16 run via f32). */
#include <math.h>
#include <stdlib.h>
#include <tgmath.h>

#include "cpu_internal.h"

enum { LANES = 8 };

/* rows and m of x for the normalized shape of weight (0 rows when weight is empty). */
static void geometry(const td_tensor *x, const td_tensor *weight, int64_t *rows, int64_t *m)
{
    *m = td_be_numel(weight);
    *rows = *m > 0 ? td_be_numel(x) / *m : 0;
}

/* The f64 row sum in 8 lanes, as td_cpu_sum8 in float. */
static inline double sum8_64(const double *restrict x, int64_t n)
{
    double s8[8] = { 0 };
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int t = 0; t < 8; t++)
            s8[t] += x[j + t];
    double s = 0.0;
    for (int t = 0; t < 8; t++)
        s += s8[t];
    for (; j < n; j++)
        s += x[j];
    return s;
}

/* The kernels in f32 (as before) and f64, from one source (cpu_norm_t.h). */
#define T float
#define LN(name) name##32
#define LN_SUM8 td_cpu_sum8
#include "cpu_norm_t.h"
#undef T
#undef LN
#undef LN_SUM8
#define T double
#define LN(name) name##64
#define LN_SUM8 sum8_64
#include "cpu_norm_t.h"
#undef T
#undef LN
#undef LN_SUM8

td_status td_cpu_float_layer_norm(const td_tensor *x, const td_tensor *weight, const td_tensor *bias, float eps,
                                  td_tensor *out)
{
    if (td_be_dtype(x) == TD_F64)
        return layer_norm64(x, weight, bias, (double)eps, out);
    return layer_norm32(x, weight, bias, eps, out);
}

td_status td_cpu_float_layer_norm_backward(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                           float eps, td_tensor *out)
{
    if (td_be_dtype(x) == TD_F64)
        return layer_norm_backward64(grad, x, weight, (double)eps, out);
    return layer_norm_backward32(grad, x, weight, eps, out);
}

td_status td_cpu_float_layer_norm_backward_weight(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                                  float eps, td_tensor *out)
{
    if (td_be_dtype(x) == TD_F64)
        return layer_norm_backward_weight64(grad, x, weight, (double)eps, out);
    return layer_norm_backward_weight32(grad, x, weight, eps, out);
}
