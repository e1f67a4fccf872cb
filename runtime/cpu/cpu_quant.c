/* CPU backend: matrix product of f32 activations by block-quantized weights (q8_0, q4_0;
 * runtime/core/td_quant.h), the inference hot path: y[M,N] = x[M,K] W^T with W [N,K] stored
 * as ggml stores it, each weight row K / 32 blocks. As ggml's CPU matvec does, each row of
 * x is quantized to q8_0 first (ggml's reference rule), then every output is the integer
 * dot product of a weight row with an activation row, block by block, scaled (td_quant.c's
 * AVX-512 VNNI / AVX2 / portable paths). Threaded over N with the kernels' thread count. */
#include <math.h>
#include <stdlib.h>

#include "cpu_internal.h"
#include "td_internal.h"
#include "td_quant.h"

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
