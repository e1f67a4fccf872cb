/* CPU backend: the low-precision matrix products. td_cpu_gemm_lowp: bf16 / f16 inputs by
 * oneDNN's matmul where it has one, else converted to f32 for td_cpu_gemm. And the matrix
 * product of f32 activations by block-quantized weights (q8_0, q4_0;
 * runtime/core/td_quant.h), the inference hot path: y[M,N] = x[M,K] W^T with W [N,K] stored
 * as ggml stores it, each weight row K / 32 blocks. As ggml's CPU matvec does, each row of
 * x is quantized to q8_0 first (ggml's reference rule), then every output is the integer
 * dot product of a weight row with an activation row, block by block, scaled (td_quant.c's
 * AVX-512 VNNI / AVX2 / portable paths). Threaded over N with the kernels' thread count. */
#include <math.h>
#include <stdlib.h>

#include "cpu_internal.h"
#include "td_convert.h"
#include "td_quant.h"

/* Converts n 16-bit values of type t to f32. */
static void widen(int t, const void *src, float *dst, size_t n)
{
    if (t == TD_CPU_GEMM_BF16)
        td_bf16_to_f32_row(src, dst, n);
    else
        td_f16_to_f32_row(src, dst, n);
}

td_status td_cpu_gemm_lowp(const char *op, int in_type, int out_type, bool tb, int64_t m, int64_t n, int64_t k,
                           const void *a, const void *b, void *c, const char **path)
{
    if (path != NULL)
        *path = "f32 sgemm";
    if ((in_type != TD_CPU_GEMM_BF16 && in_type != TD_CPU_GEMM_F16) ||
        (out_type != in_type && out_type != TD_CPU_GEMM_F32))
        return td_error(TD_E_INVALID, "%s: low-precision matmul of types %d into %d", op, in_type, out_type);
    int64_t mk, kn, mn;
    if (m < 0 || n < 0 || k < 0 || !td_mul_ok(m, k, &mk) || !td_mul_ok(k, n, &kn) || !td_mul_ok(m, n, &mn) ||
        mk > TD_MAX_NUMEL || kn > TD_MAX_NUMEL || mn > TD_MAX_NUMEL)
        return td_error(TD_E_SHAPE, "%s: bad sizes M=%lld N=%lld K=%lld", op, (long long)m, (long long)n,
                        (long long)k);
    if (mn == 0)
        return TD_OK;
    if (a == NULL || b == NULL || c == NULL)
        return td_error(TD_E_NULL, "%s: NULL buffer", op);
    if (k == 0) { /* empty sums */
        memset(c, 0, (size_t)mn * (out_type == TD_CPU_GEMM_F32 ? 4u : 2u));
        return TD_OK;
    }
#ifdef TD_HAVE_DNNL
    if (td_cpu_engine() == TD_CPU_ENGINE_DNNL) {
        const td_status st = td_cpu_dnnl_gemm_lowp(op, in_type, out_type, tb, m, n, k, a, b, c, NULL, 0);
        if (st != TD_E_UNSUPPORTED) {
            if (path != NULL)
                *path = "oneDNN matmul";
            return st;
        }
    }
#endif
    /* convert, f32 product, round back (f32 accumulation as oneDNN's) */
    float *af = malloc((size_t)mk * sizeof *af), *bf = malloc((size_t)kn * sizeof *bf);
    float *cf = out_type == TD_CPU_GEMM_F32 ? c : malloc((size_t)mn * sizeof *cf);
    if (af == NULL || bf == NULL || cf == NULL) {
        free(af);
        free(bf);
        if (cf != c)
            free(cf);
        return td_error(TD_E_NOMEM, "%s: out of memory for the f32 copies of a %lld x %lld x %lld product", op,
                        (long long)m, (long long)n, (long long)k);
    }
    widen(in_type, a, af, (size_t)mk);
    widen(in_type, b, bf, (size_t)kn);
    td_cpu_gemm(false, tb, m, n, k, af, bf, 0.0f, cf);
    if (cf != c) {
        if (out_type == TD_CPU_GEMM_BF16)
            td_f32_to_bf16_row(cf, c, (size_t)mn);
        else
            td_f32_to_f16_row(cf, c, (size_t)mn);
        free(cf);
    }
    free(af);
    free(bf);
    return TD_OK;
}

td_status td_cpu_matmul_quant(const char *op, int wkind, int64_t m, int64_t n, int64_t k, const float *x,
                              const void *w, float *y)
{
    if (wkind != TD_CPU_Q8_0 && wkind != TD_CPU_Q4_0)
        return td_error(TD_E_INVALID, "%s: unknown weight block kind %d", op, wkind);
    const char *kind = wkind == TD_CPU_Q8_0 ? "q8_0" : "q4_0";
    int64_t mk, nk, mn;
    if (m < 0 || n < 0 || k < 0 || !td_mul_ok(m, k, &mk) || !td_mul_ok(n, k, &nk) || !td_mul_ok(m, n, &mn) ||
        mk > TD_MAX_NUMEL || nk > TD_MAX_NUMEL || mn > TD_MAX_NUMEL)
        return td_error(TD_E_SHAPE, "%s: bad sizes M=%lld N=%lld K=%lld", op, (long long)m, (long long)n,
                        (long long)k);
    if (k % TD_QK != 0)
        return td_error(TD_E_SHAPE, "%s: K=%lld is not a multiple of the %s block size %d", op, (long long)k, kind,
                        TD_QK);
    if (mn == 0)
        return TD_OK;
    if (x == NULL || w == NULL || y == NULL)
        return td_error(TD_E_NULL, "%s: NULL buffer", op);
    if (((uintptr_t)w & 1u) != 0)
        return td_error(TD_E_INVALID, "%s: %s weights at an odd address (blocks hold 16-bit scales)", op, kind);
    const int64_t nb = k / TD_QK;
    if (nb == 0) { /* K = 0: empty sums */
        for (int64_t i = 0; i < mn; i++)
            y[i] = 0.0f;
        return TD_OK;
    }
    td_block_q8_0 *xq = malloc((size_t)m * (size_t)nb * sizeof *xq);
    unsigned char *bad = calloc((size_t)m, 1);
    if (xq == NULL || bad == NULL) {
        free(xq);
        free(bad);
        return td_error(TD_E_NOMEM, "%s: out of memory for the q8_0 activations (%lld x %lld)", op, (long long)m,
                        (long long)k);
    }
    /* Activations to q8_0, one row each. A row holding inf or NaN cannot be quantized: its
     * outputs are NaN (a float product would give inf or NaN there). */
    TD_CPU_FOR_WORK(r, m, mk, {
        const float *xr = x + r * k;
        for (int64_t i = 0; i < k; i++)
            if (!isfinite(xr[i])) {
                bad[r] = 1;
                break;
            }
        td_quantize_q8_0_unchecked(xr, xq + r * nb, nb);
    });
    /* Each weight row against every activation row: the weights stream from memory once. */
    if (wkind == TD_CPU_Q8_0) {
        const td_block_q8_0 *wq = w;
        TD_CPU_FOR_WORK(j, n, mn * k, {
            for (int64_t r = 0; r < m; r++)
                y[r * n + j] = bad[r] ? NAN : td_dot_q8_0_q8_0_unchecked(wq + j * nb, xq + r * nb, nb);
        });
    } else {
        const td_block_q4_0 *wq = w;
        TD_CPU_FOR_WORK(j, n, mn * k, {
            for (int64_t r = 0; r < m; r++)
                y[r * n + j] = bad[r] ? NAN : td_dot_q4_0_q8_0_unchecked(wq + j * nb, xq + r * nb, nb);
        });
    }
    free(xq);
    free(bad);
    return TD_OK;
}
