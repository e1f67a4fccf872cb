/* The cpu matmul of f32 activations by q8_0 / q4_0 weight rows (runtime/cpu/cpu_quant.c):
 * y[M,N] = x[M,K] W^T against plain loops written here, over the weights dequantized:
 *  - with the activations as the kernel sees them (x's rows quantized to q8_0 and back):
 *    equal up to float rounding;
 *  - with x itself: within the q8_0 rounding of the activations (a loose bound);
 * on shapes with N not a multiple of anything and K of 1 to 130 blocks, on every dot path,
 * with 1 and 3 threads (bit-identical: each output is one thread's); and its refusals. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpu_internal.h"
#include "td_half.h"
#include "td_quant.h"

static uint64_t rng = 0x853c49e6748fea9bu;
static float uniform(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (float)(rng >> 40) / 16777216.0f * 2.0f - 1.0f;
}

static void run_case(int wkind, int64_t m, int64_t n, int64_t k)
{
    const int64_t nb = k / 32;
    const size_t wbytes = (size_t)n * (wkind == TD_CPU_Q8_0 ? td_q8_0_row_bytes(k) : td_q4_0_row_bytes(k));
    float *x = malloc((size_t)(m * k) * sizeof *x), *wf = malloc((size_t)(n * k) * sizeof *wf);
    float *xd = malloc((size_t)(m * k) * sizeof *xd), *wd = malloc((size_t)(n * k) * sizeof *wd);
    float *y1 = malloc((size_t)(m * n) * sizeof *y1), *y3 = malloc((size_t)(m * n) * sizeof *y3);
    td_block_q8_0 *xq = malloc((size_t)(m * nb) * sizeof *xq);
    void *w = malloc(wbytes);
    assert_true(x && wf && xd && wd && y1 && y3 && xq && w);
    for (int64_t i = 0; i < m * k; i++)
        x[i] = uniform() * (1.0f + (float)(i % 7));
    for (int64_t i = 0; i < n * k; i++)
        wf[i] = uniform() * 0.05f;
    /* the weights, quantized row by row, and what they hold */
    for (int64_t j = 0; j < n; j++) {
        if (wkind == TD_CPU_Q8_0) {
            assert_int_equal(td_quantize_row_q8_0(wf + j * k, (td_block_q8_0 *)w + j * nb, k), TD_OK);
            assert_int_equal(td_dequantize_row_q8_0((td_block_q8_0 *)w + j * nb, wd + j * k, k), TD_OK);
        } else {
            assert_int_equal(td_quantize_row_q4_0(wf + j * k, (td_block_q4_0 *)w + j * nb, k), TD_OK);
            assert_int_equal(td_dequantize_row_q4_0((td_block_q4_0 *)w + j * nb, wd + j * k, k), TD_OK);
        }
    }
    for (int64_t r = 0; r < m; r++) {
        assert_int_equal(td_quantize_row_q8_0(x + r * k, xq + r * nb, k), TD_OK);
        assert_int_equal(td_dequantize_row_q8_0(xq + r * nb, xd + r * k, k), TD_OK);
    }
    for (int p = 0; p < TD_QUANT_PATHS; p++) {
        if (!td_quant_force(p))
            continue;
        assert_int_equal(td_set_num_threads(1), TD_OK);
        assert_int_equal(td_cpu_matmul_quant("test", wkind, m, n, k, x, w, y1), TD_OK);
        assert_int_equal(td_set_num_threads(3), TD_OK);
        assert_int_equal(td_cpu_matmul_quant("test", wkind, m, n, k, x, w, y3), TD_OK);
        assert_memory_equal(y1, y3, (size_t)(m * n) * sizeof *y1);
        for (int64_t r = 0; r < m; r++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0.0, mag = 0.0, sx = 0.0, magx = 0.0;
                for (int64_t i = 0; i < k; i++) {
                    s += (double)xd[r * k + i] * wd[j * k + i];
                    mag += fabs((double)xd[r * k + i] * wd[j * k + i]);
                    sx += (double)x[r * k + i] * wd[j * k + i];
                    magx += fabs((double)x[r * k + i] * wd[j * k + i]);
                }
                const double got = y1[r * n + j];
                if (!(fabs(got - s) <= 1e-6 * (double)(nb + 2) * mag + 1e-30))
                    fail_msg("%s path %s M=%lld N=%lld K=%lld: y[%lld,%lld] = %.9g, loop %.9g",
                             wkind == TD_CPU_Q8_0 ? "q8_0" : "q4_0", td_quant_path_name(p), (long long)m,
                             (long long)n, (long long)k, (long long)r, (long long)j, got, s);
                /* against unquantized activations: each within half a step, 1/254 of its
                 * block's largest, so within 1/127 of the magnitude */
                if (!(fabs(got - sx) <= magx / 127.0 + 1e-6 * mag))
                    fail_msg("y[%lld,%lld] = %.9g, with f32 activations %.9g", (long long)r, (long long)j, got, sx);
            }
    }
    td_quant_force(-1);
    td_set_num_threads(-1);
    free(x);
    free(wf);
    free(xd);
    free(wd);
    free(y1);
    free(y3);
    free(xq);
    free(w);
}

static void test_shapes(void **state)
{
    (void)state;
    const int64_t shapes[][3] = { { 1, 1, 32 }, { 1, 37, 96 }, { 3, 5, 32 * 7 }, { 1, 300, 4160 }, { 17, 33, 256 },
                                  { 4, 129, 512 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        run_case(TD_CPU_Q8_0, shapes[s][0], shapes[s][1], shapes[s][2]);
        run_case(TD_CPU_Q4_0, shapes[s][0], shapes[s][1], shapes[s][2]);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    float x[64] = { 0 }, y[4] = { 1, 2, 3, 4 };
    _Alignas(2) unsigned char w[2 * 2 * 34 + 2] = { 0 };
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, 1, 1, 33, x, w, y), TD_E_SHAPE);
    assert_non_null(strstr(td_last_error(), "K=33 is not a multiple of the q8_0 block size 32"));
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q4_0, 1, 1, 48, x, w, y), TD_E_SHAPE);
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, -1, 1, 32, x, w, y), TD_E_SHAPE);
    assert_int_equal(td_cpu_matmul_quant("matmul", 7, 1, 1, 32, x, w, y), TD_E_INVALID);
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, 1, 1, 32, x, w + 1, y), TD_E_INVALID);
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, 1, 1, 32, NULL, w, y), TD_E_NULL);
    assert_true(y[0] == 1.0f); /* nothing written on a refusal */
    /* empty sizes: nothing to do; K = 0: zeros */
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, 0, 5, 32, NULL, NULL, NULL), TD_OK);
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, 2, 2, 0, x, w, y), TD_OK);
    assert_true(y[0] == 0.0f && y[3] == 0.0f);
    /* a NaN in row 1 of x: that row's outputs are NaN, row 0's are not */
    for (int i = 0; i < 64; i++)
        x[i] = 1.0f;
    x[40] = NAN;
    for (int j = 0; j < 2; j++) { /* two q8_0 weight rows of 32: d = 1, qs = 1 */
        w[j * 34] = 0x00;
        w[j * 34 + 1] = 0x3c;
        memset(w + j * 34 + 2, 1, 32);
    }
    assert_int_equal(td_cpu_matmul_quant("matmul", TD_CPU_Q8_0, 2, 2, 32, x, w, y), TD_OK);
    /* x quantized: amax 1, d = 1/127 stored as f16 0x2008 = 129/16384, qs 127; each output
     * 32 * 127 * 1 (integer sum) * (129/16384 * 1) = 524256/16384 = 31.998046875, exact */
    assert_true(y[0] == 31.998046875f && y[1] == 31.998046875f);
    assert_true(isnan(y[2]) && isnan(y[3]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
