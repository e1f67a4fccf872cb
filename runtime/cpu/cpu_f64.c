/* CPU backend: the f64 paths of the reductions and matrix products whose CPU spec lists f64
 * in op_dtypes (the elementwise ones are in their macros, cpu_float_ew.h). Reductions are
 * portable loops that accumulate in double, one line per work unit; matrix products run
 * through CBLAS's dgemm where the build found it (OpenBLAS), else a portable loop whose
 * rows run on the thread team. */
#include <limits.h>
#include <math.h>

#include "cpu_internal.h"

#ifdef TD_HAVE_CBLAS
#include <cblas.h>
#endif

void td_cpu_f64_sum(const td_tensor *a, td_tensor *out)
{
    const double *p = (const double *)td_be_data(a);
    double s = 0.0;
    for (int64_t i = 0; i < td_be_numel(a); i++)
        s += p[i];
    ((double *)td_be_data(out))[0] = s;
}

/* One line of `size` values at stride `inner`. The first NaN wins the extremes; else the
 * first of the largest (smallest) (ties of -0 and +0 keep the first zero, as the f32
 * kernels do). */
static void reduce_line(const double *x, int64_t size, int64_t inner, td_cpu_f64_reduce kind, void *out, int64_t at)
{
    double best = 0.0;
    int64_t where = 0;
    switch (kind) {
    case TD_CPU_F64_SUM:
    case TD_CPU_F64_MEAN:
        for (int64_t k = 0; k < size; k++)
            best += x[k * inner];
        if (kind == TD_CPU_F64_MEAN)
            best /= (double)size;
        break;
    case TD_CPU_F64_PROD:
        best = 1.0;
        for (int64_t k = 0; k < size; k++)
            best *= x[k * inner];
        break;
    case TD_CPU_F64_ANY:
    case TD_CPU_F64_ALL: {
        bool r = kind == TD_CPU_F64_ALL;
        for (int64_t k = 0; k < size; k++)
            r = kind == TD_CPU_F64_ANY ? (r || x[k * inner] != 0.0) : (r && x[k * inner] != 0.0);
        ((bool *)out)[at] = r;
        return;
    }
    case TD_CPU_F64_MAX_ABS:
        best = size > 0 ? fabs(x[0]) : 0.0;
        for (int64_t k = 1; k < size && best == best; k++) {
            const double v = fabs(x[k * inner]);
            if (v != v || v > best)
                best = v;
        }
        break;
    case TD_CPU_F64_MAX:
    case TD_CPU_F64_ARGMAX:
    case TD_CPU_F64_MIN:
    case TD_CPU_F64_ARGMIN: {
        const bool max = kind == TD_CPU_F64_MAX || kind == TD_CPU_F64_ARGMAX;
        best = size > 0 ? x[0] : 0.0;
        for (int64_t k = 1; k < size && best == best; k++) {
            const double v = x[k * inner];
            if (v != v || (max ? v > best : v < best)) {
                best = v;
                where = k;
            }
        }
        if (kind == TD_CPU_F64_ARGMAX || kind == TD_CPU_F64_ARGMIN) {
            ((int32_t *)out)[at] = (int32_t)where;
            return;
        }
        break;
    }
    }
    ((double *)out)[at] = best;
}

void td_cpu_f64_reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, td_cpu_f64_reduce kind)
{
    int64_t outer, size, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &size, &inner);
    const double *pa = (const double *)td_be_data(a);
    void *po = td_be_data(out);
    TD_CPU_FOR_WORK(u, outer * inner, td_be_numel(a), {
        const int64_t o = u / inner, j = u % inner;
        reduce_line(pa + o * size * inner + j, size, inner, kind, po, u);
    });
}

void td_cpu_f64_reduce_all(const td_tensor *a, td_tensor *out, td_cpu_f64_reduce kind)
{
    reduce_line((const double *)td_be_data(a), td_be_numel(a), 1, kind, td_be_data(out), 0);
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
#ifdef TD_HAVE_CBLAS
    /* dgemm per matrix of the batch (BLAS threads inside); k == 0 (lda 0 is invalid to
     * BLAS) and dims past int take the loop */
    if (k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX) {
        for (int64_t t = 0; t < batches; t++) {
            int64_t aoff = 0, boff = 0, rem = t;
            for (int d = nb - 1; d >= 0 && rem > 0; d--) {
                const int64_t id = rem % g.batch.dims[d];
                rem /= g.batch.dims[d];
                aoff += id * g.a_stride[d];
                boff += id * g.b_stride[d];
            }
            cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                        (int)k, 1.0, pa + aoff * m * k, (int)(ta ? m : k), pb + boff * k * n, (int)(tb ? k : n), 0.0,
                        pc + t * m * n, (int)n);
        }
        return;
    }
#endif
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
