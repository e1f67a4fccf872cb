/* CPU backend: batched matmul (and by a transpose) with broadcast batch dims, and the one-matrix
 * product the module ops share; oneDNN's or CBLAS's sgemm when available. */
#include <stdlib.h>

#include "cpu_internal.h"

#ifdef TD_HAVE_CBLAS
#include <cblas.h>
#endif

/* Below this many multiply-adds per matrix the portable loop beats a BLAS call (the same
 * threshold is used for oneDNN's sgemm, not measured separately). OpenBLAS's
 * small-matrix kernels are 8-15x faster than the portable loop from 4x4x4 up (64x32 @ 32x10,
 * an MLP layer's shape: 0.6 us against 5 us), and a call costs about what 30 portable
 * multiply-adds do. */
#define SMALL_GEMM 32
/* Column and depth tiles of the portable kernel: a KB x NB tile of b stays in cache. */
#define NB 256
#define KB 128

td_cpu_engine_kind td_cpu_engine(void)
{
#if defined(TD_HAVE_DNNL)
    td_cpu_engine_kind best = TD_CPU_ENGINE_DNNL;
#elif defined(TD_HAVE_CBLAS)
    td_cpu_engine_kind best = TD_CPU_ENGINE_BLAS;
#else
    td_cpu_engine_kind best = TD_CPU_ENGINE_PORTABLE;
#endif
    const char *e = getenv("TD_CPU_ENGINE");
    if (e == NULL)
        return best;
    td_cpu_engine_kind want = best;
    if (strcmp(e, "portable") == 0)
        want = TD_CPU_ENGINE_PORTABLE;
    else if (strcmp(e, "blas") == 0)
        want = TD_CPU_ENGINE_BLAS;
#ifndef TD_HAVE_CBLAS
    if (want == TD_CPU_ENGINE_BLAS)
        want = best;
#endif
    return want < best ? want : best;
}

#ifdef TD_HAVE_CBLAS
static void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                      float *c)
{
    td_cpu_blas_warn_once();
    td_cpu_apply_threads(); /* OpenBLAS sizes its team by this thread's ICV */
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                1.0f, a, ta ? (int)m : (int)k, b, tb ? (int)k : (int)n, beta, c, (int)n);
}
#endif

/* One product on the engine in use; prefer_blas puts CBLAS before oneDNN: conv2d's im2col
 * products, run one per sample inside a thread team, where OpenBLAS's sgemm measured about
 * twice as fast as dnnl_sgemm (the backward-by-weight shapes of a first layer). */
static void gemm(bool prefer_blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                 float beta, float *c)
{
    const td_cpu_engine_kind engine = td_cpu_engine();
#ifdef TD_HAVE_CBLAS
    const bool blas_ok = engine != TD_CPU_ENGINE_PORTABLE && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX;
    if (blas_ok && (prefer_blas || engine == TD_CPU_ENGINE_BLAS)) {
        blas_gemm(ta, tb, m, n, k, a, b, beta, c);
        return;
    }
#endif
#ifdef TD_HAVE_DNNL
    if (engine == TD_CPU_ENGINE_DNNL && td_cpu_dnnl_sgemm(ta, tb, m, n, k, a, b, beta, c))
        return;
#endif
#ifdef TD_HAVE_CBLAS
    if (blas_ok) { /* oneDNN failed (out of memory for its packing buffers) */
        blas_gemm(ta, tb, m, n, k, a, b, beta, c);
        return;
    }
#endif
    (void)engine;
    (void)prefer_blas;
    for (int64_t i = 0; i < m; i++) {
        float *restrict cr = c + i * n;
        if (beta == 0.0f)
            for (int64_t j = 0; j < n; j++)
                cr[j] = 0.0f;
        if (tb) {
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++)
                    s += (ta ? a[p * m + i] : a[i * k + p]) * b[j * k + p];
                cr[j] += s;
            }
        } else {
            for (int64_t p = 0; p < k; p++) {
                const float av = ta ? a[p * m + i] : a[i * k + p];
                const float *restrict br = b + p * n;
                for (int64_t j = 0; j < n; j++)
                    cr[j] += av * br[j];
            }
        }
    }
}

void td_cpu_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                 float *c)
{
    gemm(true, ta, tb, m, n, k, a, b, beta, c);
}

/* Row i of c (n floats) = row i of a' (k floats, ast apart: 1 for a, m for a^T) times b'
 * (k x n): b row-major, i-k-j order; or with tb, b^T for b n x k row-major, one dot product of
 * two contiguous rows per output. */
static void gemm_row(const float *restrict a, int64_t ast, const float *restrict b, bool tb, float *restrict c,
                     int64_t k, int64_t n)
{
    if (tb) {
        for (int64_t j = 0; j < n; j++) {
            const float *restrict br = b + j * k;
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++)
                s += a[p * ast] * br[p];
            c[j] = s;
        }
        return;
    }
    for (int64_t j0 = 0; j0 < n; j0 += NB) {
        const int64_t jn = n - j0 < NB ? n - j0 : NB;
        float *restrict cr = c + j0;
        for (int64_t j = 0; j < jn; j++)
            cr[j] = 0.0f;
        for (int64_t p0 = 0; p0 < k; p0 += KB) {
            const int64_t pn = k - p0 < KB ? k - p0 : KB;
            for (int64_t p = p0; p < p0 + pn; p++) {
                const float av = a[p * ast];
                const float *restrict br = b + p * n + j0;
                for (int64_t j = 0; j < jn; j++)
                    cr[j] += av * br[j];
            }
        }
    }
}

/* out = a' @ b', a' = a or (ta) its transpose over the last two dims, b' likewise: the
 * transposes are read in place (sgemm's flags; strided reads in the portable loop). */
static td_status matmul(const td_tensor *a, bool ta, const td_tensor *b, bool tb, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_matmul(a, ta, b, tb, out);
        return TD_OK;
    }
    td_matmul_geometry g;
    const td_shape sa = ta ? td_shape_swap_last2(td_be_shape(a)) : *td_be_shape(a);
    const td_shape sb = tb ? td_shape_swap_last2(td_be_shape(b)) : *td_be_shape(b);
    td_matmul_geometry_of(&sa, &sb, td_be_shape(out), &g);
    const int nb = g.batch.ndim;
    const int64_t m = g.m, n = g.n, k = g.k;
    const td_shape ob = g.batch;
    const int64_t *ast = g.a_stride, *bst = g.b_stride;
    int64_t idx[TD_MAX_DIMS] = { 0 };
    const int64_t batches = ob.numel;
    const float *pa = (const float *)td_be_data(a);
    const float *pb = (const float *)td_be_data(b);
    float *pc = (float *)td_be_data(out);

#if defined(TD_HAVE_CBLAS) || defined(TD_HAVE_DNNL)
    if (td_cpu_engine() != TD_CPU_ENGINE_PORTABLE && m * n * k > SMALL_GEMM && m <= INT32_MAX && n <= INT32_MAX &&
        k <= INT32_MAX) {
        /* b one matrix under every batch of a (a linear layer's [B, T, K] by [K, N]): the
         * batches of a' are consecutive rows, so one product of batches * m rows, where
         * B products of m rows each ran at about two thirds of the rate (train_gpt). */
        bool fold = !ta && batches > 1;
        int64_t want = 1;
        for (int d = nb - 1; d >= 0 && fold; d--) {
            fold = bst[d] == 0 && (ob.dims[d] == 1 || ast[d] == want);
            want *= ob.dims[d];
        }
        if (fold && batches * m <= INT32_MAX) {
            gemm(false, false, tb, batches * m, n, k, pa, pb, 0.0f, pc);
            return TD_OK;
        }
        int64_t aoff = 0, boff = 0;
        for (int64_t t = 0; t < batches; t++) {
            gemm(false, ta, tb, m, n, k, pa + aoff * m * k, pb + boff * k * n, 0.0f, pc + t * m * n);
            for (int d = nb - 1; d >= 0; d--) { /* next batch index, odometer style */
                aoff += ast[d];
                boff += bst[d];
                if (++idx[d] < ob.dims[d])
                    break;
                aoff -= ob.dims[d] * ast[d];
                boff -= ob.dims[d] * bst[d];
                idx[d] = 0;
            }
        }
        return TD_OK;
    }
#endif
    (void)idx;
    /* Portable: one work item per output row of every batch. */
    /* A multiply-add is cheap: ask for ~16x the elementwise threshold before threading. */
    TD_CPU_FOR_WORK(r, batches * m, batches * m * n * k / 16, {
        const int64_t t = r / m, i = r % m;
        int64_t aoff = 0, boff = 0, rem = t;
        for (int d = nb - 1; d >= 0 && rem > 0; d--) {
            const int64_t id = rem % ob.dims[d];
            rem /= ob.dims[d];
            aoff += id * ast[d];
            boff += id * bst[d];
        }
        /* row i of a': a's row i, or a's column i (elements m apart) */
        const float *arow = pa + aoff * m * k + (ta ? i : i * k);
        gemm_row(arow, ta ? m : 1, pb + boff * k * n, tb, pc + r * n, k, n);
    });
    return TD_OK;
}

td_status td_cpu_float_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return matmul(a, false, b, false, out);
}

td_status td_cpu_float_matmul_nt(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    if (td_be_dtype(b) == TD_Q8_0 || td_be_dtype(b) == TD_Q4_0) {
        /* f32 a [..., m, k] by quantized weights b [n, k] (the spec's quantized_arg; the entry
         * made a f32): a's leading dims flatten into m, rows of a stay contiguous. */
        if (td_be_ndim(b) != 2)
            return td_error(TD_E_UNSUPPORTED,
                            "float_matmul_nt: %s weights must be one matrix [n, k]; b has %d dims (no batches of "
                            "quantized weights)",
                            td_dtype_name(td_be_dtype(b)), td_be_ndim(b));
        const int64_t n = td_be_dims(b)[0], k = td_be_dims(b)[1];
        const int64_t m = k > 0 ? td_be_numel(a) / k : td_be_numel(out) / (n > 0 ? n : 1);
        return td_cpu_matmul_quant("float_matmul_nt", td_be_dtype(b) == TD_Q8_0 ? TD_CPU_Q8_0 : TD_CPU_Q4_0, m, n, k,
                                   td_be_data(a), td_be_data(b), td_be_data(out));
    }
    return matmul(a, false, b, true, out);
}

td_status td_cpu_float_matmul_tn(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return matmul(a, true, b, false, out);
}
