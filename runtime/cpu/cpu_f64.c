/* CPU backend: the f64 paths of the reductions and matrix products whose CPU spec lists f64
 * in op_dtypes (the elementwise ones are in their macros). Portable loops that accumulate
 * in double; single products here are small (training a model in f64 is for checking, not
 * speed), and the rows of a product run on the thread team. */
#include "cpu_internal.h"

void td_cpu_f64_sum(const td_tensor *a, td_tensor *out)
{
    const double *p = (const double *)td_be_data(a);
    double s = 0.0;
    for (int64_t i = 0; i < td_be_numel(a); i++)
        s += p[i];
    ((double *)td_be_data(out))[0] = s;
}

void td_cpu_f64_reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, td_cpu_f64_reduce kind)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const double *pa = (const double *)td_be_data(a);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            const double *x = pa + o * size * inner + j;
            double best = size > 0 ? x[0] : 0.0;
            int64_t at = 0;
            if (kind == TD_CPU_F64_SUM) {
                double s = 0.0;
                for (int64_t k = 0; k < size; k++)
                    s += x[k * inner];
                best = s;
            } else {
                /* the first NaN wins; else the first of the largest (ties of -0 and +0
                 * keep the first zero, as the f32 kernels do) */
                for (int64_t k = 1; k < size && best == best; k++) {
                    const double v = x[k * inner];
                    if (v != v || v > best) {
                        best = v;
                        at = k;
                    }
                }
            }
            if (kind == TD_CPU_F64_ARGMAX)
                ((int32_t *)td_be_data(out))[o * inner + j] = (int32_t)at;
            else
                ((double *)td_be_data(out))[o * inner + j] = best;
        }
    }
}

void td_cpu_f64_matmul(const td_tensor *a, bool ta, const td_tensor *b, bool tb, td_tensor *out)
{
    td_matmul_geometry g;
    const td_shape sa = ta ? td_shape_swap_last2(td_be_shape(a)) : *td_be_shape(a);
    const td_shape sb = tb ? td_shape_swap_last2(td_be_shape(b)) : *td_be_shape(b);
    td_matmul_geometry_of(&sa, &sb, td_be_shape(out), &g);
    const int nb = g.batch.ndim;
    const int64_t m = g.m, n = g.n, k = g.k, batches = g.batch.numel;
    const double *pa = (const double *)td_be_data(a), *pb = (const double *)td_be_data(b);
    double *pc = (double *)td_be_data(out);
    TD_CPU_FOR_WORK(r, batches * m, batches * m * n * k / 16, {
        const int64_t t = r / m, i = r % m;
        int64_t aoff = 0, boff = 0, rem = t;
        for (int d = nb - 1; d >= 0 && rem > 0; d--) {
            const int64_t id = rem % g.batch.dims[d];
            rem /= g.batch.dims[d];
            aoff += id * g.a_stride[d];
            boff += id * g.b_stride[d];
        }
        const double *A = pa + aoff * m * k, *B = pb + boff * k * n;
        double *C = pc + r * n;
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++)
                s += (ta ? A[p * m + i] : A[i * k + p]) * (tb ? B[j * k + p] : B[p * n + j]);
            C[j] = s;
        }
    });
}
