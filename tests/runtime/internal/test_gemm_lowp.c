/* bf16 / f16 matrix products against a loop written here in double over the same inputs
 * (rounded to bf16 / f16 first, by td_half.h), with f32 and low-precision results, B plain
 * and transposed: through oneDNN's matmul primitive directly (runtime/cpu/cpu_dnnl.c,
 * td_cpu_dnnl_gemm_lowp; prints which implementation, i.e. ISA, oneDNN picked; skipped
 * without oneDNN) and through td_cpu_gemm_lowp (cpu_quant.c), on oneDNN where it has the
 * type and on the convert + sgemm path (TD_CPU_ENGINE=blas forces it). */
#define _POSIX_C_SOURCE 200809L /* setenv */
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

static uint64_t rng = 0xda942042e4dd58b5u;
static float uniform(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (float)(rng >> 40) / 16777216.0f * 2.0f - 1.0f;
}

static uint16_t to16(int type, float f)
{
    return type == TD_CPU_GEMM_BF16 ? td_f32_to_bf16(f) : td_f32_to_f16(f);
}
static float from16(int type, uint16_t h)
{
    return type == TD_CPU_GEMM_BF16 ? td_bf16_to_f32(h) : td_f16_to_f32(h);
}

static bool direct = true; /* td_cpu_dnnl_gemm_lowp, else td_cpu_gemm_lowp */

/* Returns false when oneDNN has no such matmul here (TD_E_UNSUPPORTED). */
static bool run_case(int type, int out_type, bool tb, int64_t m, int64_t n, int64_t k)
{
    uint16_t *a = malloc((size_t)(m * k) * 2), *b = malloc((size_t)(k * n) * 2);
    void *c = malloc((size_t)(m * n) * 4);
    assert_true(a && b && c);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = to16(type, uniform());
    for (int64_t i = 0; i < k * n; i++)
        b[i] = to16(type, uniform());
    char impl[64] = "";
    const char *path = "";
    td_status st;
#ifdef TD_HAVE_DNNL
    if (direct)
        st = td_cpu_dnnl_gemm_lowp("test", type, out_type, tb, m, n, k, a, b, c, impl, sizeof impl);
    else
#endif
        st = td_cpu_gemm_lowp("test", type, out_type, tb, m, n, k, a, b, c, &path);
    if (st == TD_E_UNSUPPORTED) {
        printf("  %s: %s\n", type == TD_CPU_GEMM_BF16 ? "bf16" : "f16", td_last_error());
        free(a);
        free(b);
        free(c);
        return false;
    }
    assert_int_equal(st, TD_OK);
    if (m * n * k >= 130 * 70 * 200)
        printf("  %s -> %s %s M=%lld N=%lld K=%lld: %s%s\n", type == TD_CPU_GEMM_BF16 ? "bf16" : "f16",
               out_type == TD_CPU_GEMM_F32 ? "f32" : "same", tb ? "B^T" : "B", (long long)m, (long long)n,
               (long long)k, direct ? "oneDNN implementation " : "td_cpu_gemm_lowp: ", direct ? impl : path);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0, mag = 0.0;
            for (int64_t p = 0; p < k; p++) {
                const double t = (double)from16(type, a[i * k + p]) *
                                 from16(type, tb ? b[j * k + p] : b[p * n + j]);
                s += t;
                mag += fabs(t);
            }
            double got;
            if (out_type == TD_CPU_GEMM_F32)
                got = ((const float *)c)[i * n + j];
            else
                got = from16(type, ((const uint16_t *)c)[i * n + j]);
            /* f32 accumulation (a few ulps of the magnitude per step), then the result's
             * own rounding when it is 16-bit (half an ulp: 2^-9 relative for bf16, 2^-11 f16) */
            const double rel = out_type == TD_CPU_GEMM_F32 ? 0.0 : type == TD_CPU_GEMM_BF16 ? 0x1p-8 : 0x1p-10;
            const double tol = 1e-6 * (double)(k + 4) * mag + rel * fabs(s) + 1e-30;
            if (!(fabs(got - s) <= tol))
                fail_msg("%s M=%lld N=%lld K=%lld tb=%d: c[%lld,%lld] = %.9g, loop %.9g (tol %g)",
                         type == TD_CPU_GEMM_BF16 ? "bf16" : "f16", (long long)m, (long long)n, (long long)k, tb,
                         (long long)i, (long long)j, got, s, tol);
        }
    free(a);
    free(b);
    free(c);
    return true;
}

static void all_cases(void)
{
    const int64_t shapes[][3] = { { 1, 1, 1 }, { 7, 13, 33 }, { 1, 64, 128 }, { 64, 48, 96 }, { 130, 70, 200 } };
    const int types[] = { TD_CPU_GEMM_BF16, TD_CPU_GEMM_F16 };
    for (int t = 0; t < 2; t++) {
        bool have = true;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && have; s++)
            for (int tb = 0; tb < 2 && have; tb++)
                for (int o = 0; o < 2 && have; o++)
                    have = run_case(types[t], o ? TD_CPU_GEMM_F32 : types[t], tb, shapes[s][0], shapes[s][1],
                                    shapes[s][2]);
        /* a second call on a cached shape gives the same */
        if (have)
            assert_true(run_case(types[t], TD_CPU_GEMM_F32, false, 64, 48, 96));
        /* td_cpu_gemm_lowp has every type; oneDNN has bf16 where its ISA has AVX-512 */
        if (!direct)
            assert_true(have);
#ifdef TD_HAVE_DNNL
        if (types[t] == TD_CPU_GEMM_BF16 && strncmp(td_cpu_dnnl_isa(), "avx512", 6) == 0)
            assert_true(have);
#endif
    }
}

#ifdef TD_HAVE_DNNL
static void test_dnnl(void **state)
{
    (void)state;
    direct = true;
    all_cases();
}
#else
static void test_dnnl(void **state)
{
    (void)state;
    skip();
}
#endif

static void test_lowp_default_engine(void **state)
{
    (void)state;
    direct = false;
    all_cases();
}

static void test_lowp_convert_path(void **state)
{
    (void)state;
    direct = false;
    setenv("TD_CPU_ENGINE", "blas", 1); /* read at each call; without CBLAS: the portable loop */
    all_cases();
    unsetenv("TD_CPU_ENGINE");
}

static void test_refusals(void **state)
{
    (void)state;
    uint16_t a[4] = { 0 }, b[4] = { 0 };
    float c2[4] = { 5, 5, 5, 5 };
    assert_int_equal(td_cpu_gemm_lowp("matmul", TD_CPU_GEMM_F32, TD_CPU_GEMM_F32, false, 2, 2, 2, a, b, c2, NULL),
                     TD_E_INVALID);
    assert_int_equal(td_cpu_gemm_lowp("matmul", TD_CPU_GEMM_BF16, TD_CPU_GEMM_F32, false, -1, 2, 2, a, b, c2, NULL),
                     TD_E_SHAPE);
    assert_int_equal(td_cpu_gemm_lowp("matmul", TD_CPU_GEMM_BF16, TD_CPU_GEMM_F32, false, 2, 2, 2, NULL, b, c2, NULL),
                     TD_E_NULL);
    assert_true(c2[0] == 5.0f);
    /* K = 0: zeros */
    assert_int_equal(td_cpu_gemm_lowp("matmul", TD_CPU_GEMM_BF16, TD_CPU_GEMM_F32, false, 2, 2, 0, a, b, c2, NULL),
                     TD_OK);
    assert_true(c2[0] == 0.0f && c2[3] == 0.0f);
#ifdef TD_HAVE_DNNL
    float c[4] = { 5, 5, 5, 5 };
    assert_int_equal(td_cpu_dnnl_gemm_lowp("matmul", TD_CPU_GEMM_F32, TD_CPU_GEMM_F32, false, 2, 2, 2, a, b, c, NULL, 0),
                     TD_E_INVALID);
    assert_int_equal(td_cpu_dnnl_gemm_lowp("matmul", TD_CPU_GEMM_BF16, TD_CPU_GEMM_F16, false, 2, 2, 2, a, b, c, NULL, 0),
                     TD_E_INVALID);
    assert_int_equal(td_cpu_dnnl_gemm_lowp("matmul", TD_CPU_GEMM_BF16, TD_CPU_GEMM_F32, false, 0, 2, 2, a, b, c, NULL, 0),
                     TD_E_SHAPE);
    assert_non_null(strstr(td_last_error(), "matmul"));
    assert_true(c[0] == 5.0f);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dnnl),
        cmocka_unit_test(test_lowp_default_engine),
        cmocka_unit_test(test_lowp_convert_path),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
