/* q8_0 / q4_0 on the Vulkan backend (docs/dtypes.md section 8, runtime/vulkan/README.md):
 * storage of ggml's blocks packed into words (raw bytes in and out, to_device both ways),
 * float_dequantize on the device (qdeq.comp) and float_matmul_nt of f32 / f16 / bf16 activations
 * by quantized weights (qmv.comp). The blocks are written here (random f16 scales and quants,
 * an odd number of blocks so that a block starts in the middle of a word) and decoded here
 * (an f16 decoder of this file), so the references never come from the library: the dequantized
 * values must be exact, the product is held to x @ dequantize(w)^T computed here in double
 * within the f32 summation bound, and to the spec's NMSE bounds against f32 weights. */
#define _POSIX_C_SOURCE 200809L
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

#include "td_ops.h"
#include "td_vulkan.h"
#include "tdt.h"

static td_device *vk, *cpu;

static int setup(void **state)
{
    (void)state;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK)
        return -1;
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    td_device_release(cpu);
    return 0;
}

#define OK(call) assert_int_equal((call), TD_OK)
#define HAS(s) assert_non_null(strstr(td_last_error(), (s)))

static td_dtype dtype_of(const td_tensor *t)
{
    td_dtype d = TD_F32;
    OK(td_tensor_dtype(t, &d));
    return d;
}

static td_device *device_of(const td_tensor *t)
{
    td_device *d = NULL;
    OK(td_tensor_device(t, &d));
    return d;
}

static uint32_t rng(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* An f16's value (IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits; normals only here). */
static double f16_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* nblocks random blocks of kind q (34 or 18 bytes each, ggml's layout) into blk, and their
 * values into val (32 per block). Scales: positive or negative normals between 2^-8 and 2^-1. */
static void make_blocks(td_dtype q, int64_t nblocks, uint32_t seed, unsigned char *blk, double *val)
{
    const size_t bs = q == TD_Q8_0 ? 34 : 18;
    uint32_t s = seed;
    for (int64_t b = 0; b < nblocks; b++) {
        unsigned char *p = blk + (size_t)b * bs;
        const uint16_t h = (uint16_t)(((7 + rng(&s) % 7) << 10) | (rng(&s) & 1023) | ((rng(&s) & 1) << 15));
        p[0] = (unsigned char)(h & 0xff); /* little-endian */
        p[1] = (unsigned char)(h >> 8);
        const double d = f16_value(h);
        for (int j = 0; j < (int)bs - 2; j++)
            p[2 + j] = (unsigned char)(rng(&s) & 0xff);
        double *v = val + b * 32;
        if (q == TD_Q8_0) {
            for (int j = 0; j < 32; j++)
                v[j] = d * (double)(int8_t)p[2 + j];
        } else {
            for (int j = 0; j < 16; j++) {
                v[j] = d * (double)((p[2 + j] & 15) - 8);
                v[j + 16] = d * (double)((p[2 + j] >> 4) - 8);
            }
        }
    }
}

/* Raw blocks in, raw blocks out, to the CPU and back: the bytes unchanged; 3 blocks (102 or 54
 * bytes, not whole words). */
static void test_storage(void **state)
{
    (void)state;
    const td_dtype qs[2] = { TD_Q8_0, TD_Q4_0 };
    for (int qi = 0; qi < 2; qi++) {
        const td_dtype q = qs[qi];
        unsigned char blk[3 * 34], back[3 * 34 + 4];
        double val[96];
        make_blocks(q, 3, 11u + (uint32_t)qi, blk, val);
        const size_t bytes = q == TD_Q8_0 ? 102 : 54;
        const int64_t shape[2] = { 3, 32 };
        td_tensor *a = NULL, *c = NULL, *v2 = NULL;
        OK(td_float_from_data_dtype(vk, q, blk, shape, 2, &a));
        assert_int_equal(dtype_of(a), q);
        memset(back, 0xee, sizeof back);
        OK(td_float_into_data_dtype(a, q, back, (int64_t)bytes));
        assert_memory_equal(back, blk, bytes);
        OK(td_float_to_device(a, cpu, &c));
        OK(td_float_to_device(c, vk, &v2));
        memset(back, 0xee, sizeof back);
        OK(td_float_into_data_dtype(v2, q, back, (int64_t)bytes));
        assert_memory_equal(back, blk, bytes);
        /* the values, exactly */
        float f[96];
        OK(td_float_into_data_dtype(v2, TD_F32, f, 96));
        for (int i = 0; i < 96; i++)
            assert_true((double)f[i] == val[i]);
        /* a raw buffer one byte short */
        assert_int_equal(td_float_into_data_dtype(a, q, back, (int64_t)bytes - 1), TD_E_INVALID);
        HAS("bytes");
        td_tensor_release(a);
        td_tensor_release(c);
        td_tensor_release(v2);
    }
}

/* float_dequantize on the device: f32 exactly the blocks' values; f16 / bf16 rounded once, as
 * the CPU's (bit for bit). 21 blocks: an odd count. */
static void test_dequantize(void **state)
{
    (void)state;
    const td_dtype qs[2] = { TD_Q8_0, TD_Q4_0 };
    for (int qi = 0; qi < 2; qi++) {
        const td_dtype q = qs[qi];
        unsigned char blk[21 * 34];
        double val[21 * 32];
        make_blocks(q, 21, 7u + (uint32_t)qi, blk, val);
        const int64_t shape[2] = { 7, 96 };
        td_tensor *a = NULL, *y = NULL, *ac = NULL;
        OK(td_float_from_data_dtype(vk, q, blk, shape, 2, &a));
        OK(td_float_dequantize(a, TD_F32, &y));
        assert_int_equal(dtype_of(y), TD_F32);
        assert_true(device_of(y) == vk);
        float f[21 * 32];
        OK(td_float_into_data(y, f, 21 * 32));
        for (int i = 0; i < 21 * 32; i++)
            assert_true((double)f[i] == val[i]);
        td_tensor_release(y);
        OK(td_float_to_device(a, cpu, &ac));
        const td_dtype hs[2] = { TD_F16, TD_BF16 };
        for (int hi = 0; hi < 2; hi++) {
            td_tensor *yv = NULL, *yc = NULL;
            uint16_t gv[21 * 32], gc[21 * 32];
            OK(td_float_dequantize(a, hs[hi], &yv));
            OK(td_float_dequantize(ac, hs[hi], &yc));
            assert_int_equal(dtype_of(yv), hs[hi]);
            OK(td_float_into_data_dtype(yv, hs[hi], gv, 21 * 32));
            OK(td_float_into_data_dtype(yc, hs[hi], gc, 21 * 32));
            assert_memory_equal(gv, gc, sizeof gv);
            td_tensor_release(yv);
            td_tensor_release(yc);
        }
        td_tensor_release(ac);
        td_tensor_release(a);
    }
}

/* y = x @ w^T for x [m, k] f32 (values of dtype xdt: exact there) and w blocks [n, k]: against
 * the f64 product of x and the blocks' values, within L u sum_i |x_i w_i| (u = 2^-24), L the
 * longest chain of f32 roundings in qmv.comp's order: a block's dot (8 vec4 dots of 4, added
 * in turn: at most 4 + 8), times its scale (1), added to the invocation's partial (one per
 * block it takes: ceil(k / 32 / 64), or k / 32 with one invocation a column), the tree over
 * 64 invocations (6); L = 24 + that count
 * leaves room (any order would need k + 8). Plus half an ulp of the result's dtype for f16 /
 * bf16. */
static int qmv_lanes = 64; /* TD_VULKAN_QMV_LANES as test_matmul_against_blocks set it */

static void check_product(td_dtype q, td_dtype xdt, int64_t m, int64_t n, int64_t k, uint32_t seed)
{
    const int64_t nb = n * k / 32;
    const size_t bs = q == TD_Q8_0 ? 34 : 18;
    unsigned char *blk = malloc((size_t)nb * bs);
    double *wv = malloc((size_t)(n * k) * sizeof *wv);
    float *x = malloc((size_t)(m * k) * sizeof *x);
    float *y = malloc((size_t)(m * n) * sizeof *y);
    assert_non_null(blk);
    assert_non_null(wv);
    assert_non_null(x);
    assert_non_null(y);
    make_blocks(q, nb, seed, blk, wv);
    uint32_t s = seed * 31u + 5u;
    for (int64_t i = 0; i < m * k; i++) /* multiples of 1/64 in [-4, 4): exact in f16 and bf16 */
        x[i] = (float)((int)(rng(&s) % 512) - 256) / 64.0f;
    const int64_t ws[2] = { n, k }, xs[2] = { m, k };
    td_tensor *w = NULL, *xt = NULL, *x32 = NULL, *yt = NULL, *y32 = NULL;
    OK(td_float_from_data_dtype(vk, q, blk, ws, 2, &w));
    OK(td_float_from_data(vk, x, xs, 2, &x32));
    if (xdt == TD_F32) {
        xt = x32;
        x32 = NULL;
    } else {
        OK(td_float_cast(x32, xdt, &xt));
    }
    long d0 = 0, d1 = 0;
    OK(td_vulkan_stats(vk, NULL, &d0));
    OK(td_float_matmul_nt(xt, w, &yt));
    OK(td_vulkan_stats(vk, NULL, &d1));
    /* f16 / bf16 activations natively: qmv.comp's TD_HALF form and the rounding of its f32
     * sums (cvt.comp), no f32 copy of the activations first */
    if (xdt != TD_F32)
        assert_int_equal(d1 - d0, 2);
    assert_int_equal(dtype_of(yt), xdt);
    OK(td_float_cast(yt, TD_F32, &y32));
    OK(td_float_into_data(y32, y, m * n));
    const double u = ldexp(1.0, -24);
    const double half_ulp = xdt == TD_F16 ? ldexp(1.0, -11) : xdt == TD_BF16 ? ldexp(1.0, -8) : 0.0;
    double worst = 0.0;
    for (int64_t r = 0; r < m; r++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0.0, mag = 0.0;
            for (int64_t i = 0; i < k; i++) {
                ref += (double)x[r * k + i] * wv[j * k + i];
                mag += fabs((double)x[r * k + i] * wv[j * k + i]);
            }
            const double got = y[r * n + j];
            const double chain = 24.0 + (double)(qmv_lanes == 1 ? k / 32 : (k / 32 + 63) / 64);
            const double sum_bound = chain * u * mag * 1.01 + 1e-30;
            const double bound = sum_bound * (1.0 + half_ulp) + half_ulp * fabs(ref) * 1.01;
            if (!(fabs(got - ref) <= bound))
                fail_msg("%s x %s [%lld, %lld] @ [%lld, %lld]^T: y[%lld, %lld] = %.9g, want %.9g (bound %.3g)",
                         td_dtype_name(xdt), td_dtype_name(q), (long long)m, (long long)k, (long long)n,
                         (long long)k, (long long)r, (long long)j, got, ref, bound);
            if (xdt == TD_F32 && mag > 0 && fabs(got - ref) / (u * mag) > worst)
                worst = fabs(got - ref) / (u * mag);
        }
    if (xdt == TD_F32)
        print_message("%s [%lld x %lld] @ [%lld x %lld]^T: max |y - ref| = %.3g u sum|x w|\n",
                      td_dtype_name(q), (long long)m, (long long)k, (long long)n, (long long)k, worst);
    td_tensor_release(w);
    td_tensor_release(xt);
    td_tensor_release(x32);
    td_tensor_release(yt);
    td_tensor_release(y32);
    free(blk);
    free(wv);
    free(x);
    free(y);
}

static void test_matmul_against_blocks(void **state)
{
    (void)state;
    const td_dtype qs[2] = { TD_Q8_0, TD_Q4_0 };
    /* both forms of qmv.comp: 64 invocations a column (hardware devices), 1 (software) */
    static const char *const lanes[2] = { "64", "1" };
    for (int li = 0; li < 4; li++) {
        const int qi = li % 2;
        assert_int_equal(setenv("TD_VULKAN_QMV_LANES", lanes[li / 2], 1), 0);
        qmv_lanes = atoi(lanes[li / 2]);
        print_message("TD_VULKAN_QMV_LANES=%s\n", lanes[li / 2]);
        check_product(qs[qi], TD_F32, 1, 7, 96, 3);    /* decode: 21 blocks, odd */
        check_product(qs[qi], TD_F32, 5, 7, 96, 4);    /* rows not a multiple of 4 */
        check_product(qs[qi], TD_F32, 1, 64, 4096, 5); /* a long K: 128 blocks per row */
        check_product(qs[qi], TD_F32, 9, 33, 2080, 6); /* 65 blocks per row (more than a workgroup) */
        /* 16-bit activations in both storage forms (16-bit storage buffers where the device has
         * them, packed words) */
        for (int pk = 0; pk < 2; pk++) {
            OK(td_vulkan_set_half_storage(vk, pk ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO));
            check_product(qs[qi], TD_F16, 3, 5, 64, 7);
            check_product(qs[qi], TD_BF16, 3, 5, 64, 8);
        }
        OK(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO));
    }
    assert_int_equal(unsetenv("TD_VULKAN_QMV_LANES"), 0);
}

/* A row of 65536 blocks (K = 2^21): lavapipe ends a loop after 65535 iterations, so one
 * invocation a column cannot take the row; the kernel then uses 64 (asked for 1 here). */
static void test_matmul_long_row(void **state)
{
    (void)state;
    assert_int_equal(setenv("TD_VULKAN_QMV_LANES", "1", 1), 0);
    qmv_lanes = 64;
    check_product(TD_Q4_0, TD_F32, 1, 1, 65536 * 32, 9);
    assert_int_equal(unsetenv("TD_VULKAN_QMV_LANES"), 0);
}

/* Quantized from f32 weights (td_float_quantize on a Vulkan tensor), the product against the
 * f32 weights' product in f64: NMSE under the spec's bounds (1e-3 q8_0, 1e-2 q4_0). Also a
 * batch of activations [2, 3, k] (leading dims flattened into rows) and f32 weights through
 * the same op (the transposed copy and float_matmul). */
static void test_matmul_nmse(void **state)
{
    (void)state;
    enum { M = 6, N = 40, K = 256 };
    static float x[M * K], w[N * K], y[M * N], want[M * N];
    uint32_t s = 99u;
    for (int i = 0; i < M * K; i++)
        x[i] = (float)((double)rng(&s) / 16777216.0 * 2.0 - 1.0);
    for (int i = 0; i < N * K; i++)
        w[i] = (float)((double)rng(&s) / 16777216.0 * 2.0 - 1.0);
    for (int r = 0; r < M; r++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int i = 0; i < K; i++)
                acc += (double)x[r * K + i] * (double)w[j * K + i];
            want[r * N + j] = (float)acc;
        }
    const int64_t xs[3] = { 2, 3, K }, ws[2] = { N, K };
    td_tensor *xt = NULL, *wt = NULL;
    OK(td_float_from_data(vk, x, xs, 3, &xt));
    OK(td_float_from_data(vk, w, ws, 2, &wt));
    td_tensor *yf = NULL;
    OK(td_float_matmul_nt(xt, wt, &yf)); /* f32 weights */
    OK(td_float_into_data(yf, y, M * N));
    for (int i = 0; i < M * N; i++)
        assert_true(fabs((double)y[i] - (double)want[i]) <= 1e-4 * (1.0 + fabs((double)want[i])));
    td_tensor_release(yf);
    const td_dtype qs[2] = { TD_Q8_0, TD_Q4_0 };
    const double bound[2] = { 1e-3, 1e-2 };
    for (int qi = 0; qi < 2; qi++) {
        td_tensor *wq = NULL, *yt = NULL;
        OK(td_float_quantize(wt, qs[qi], &wq));
        assert_true(device_of(wq) == vk);
        OK(td_float_matmul_nt(xt, wq, &yt));
        int64_t d[TD_MAX_DIMS];
        int nd = 0;
        OK(td_tensor_shape(yt, d, &nd));
        assert_int_equal(nd, 3);
        assert_int_equal(d[0], 2);
        assert_int_equal(d[1], 3);
        assert_int_equal(d[2], N);
        OK(td_float_into_data(yt, y, M * N));
        const double e = tdt_nmse(y, want, M * N);
        print_message("%s: NMSE vs the f32 weights %.3g (bound %g)\n", td_dtype_name(qs[qi]), e, bound[qi]);
        assert_true(e <= bound[qi]);
        td_tensor_release(wq);
        td_tensor_release(yt);
    }
    td_tensor_release(xt);
    td_tensor_release(wt);
}

/* Empty tensors: K = 0 gives zeros (sums of nothing), N = 0 or M = 0 an empty result, and an
 * empty tensor dequantizes to an empty one. */
static void test_empty(void **state)
{
    (void)state;
    const td_dtype qs[2] = { TD_Q8_0, TD_Q4_0 };
    for (int qi = 0; qi < 2; qi++) {
        const int64_t w0k[2] = { 3, 0 }, x0k[2] = { 2, 0 }, w0n[2] = { 0, 32 }, x2[2] = { 2, 32 }, x0m[2] = { 0, 32 },
                      w2[2] = { 2, 32 };
        unsigned char blk[2 * 34];
        double val[64];
        make_blocks(qs[qi], 2, 5u, blk, val);
        td_tensor *w = NULL, *x = NULL, *y = NULL, *d = NULL;
        OK(td_float_from_data_dtype(vk, qs[qi], blk, w0k, 2, &w));
        x = tdt_filled(vk, TD_F32, x0k, 2);
        assert_non_null(x);
        OK(td_float_matmul_nt(x, w, &y));
        float z[6] = { 1, 1, 1, 1, 1, 1 };
        OK(td_float_into_data(y, z, 6));
        for (int i = 0; i < 6; i++)
            assert_true(z[i] == 0.0f);
        OK(td_float_dequantize(w, TD_F32, &d));
        int64_t dims[TD_MAX_DIMS];
        int nd = 0;
        OK(td_tensor_shape(d, dims, &nd));
        assert_int_equal(nd, 2);
        assert_int_equal(dims[0], 3);
        assert_int_equal(dims[1], 0);
        td_tensor_release(d);
        td_tensor_release(w);
        td_tensor_release(x);
        td_tensor_release(y);
        OK(td_float_from_data_dtype(vk, qs[qi], blk, w0n, 2, &w));
        x = tdt_filled(vk, TD_F32, x2, 2);
        OK(td_float_matmul_nt(x, w, &y));
        OK(td_tensor_shape(y, dims, &nd));
        assert_int_equal(dims[0], 2);
        assert_int_equal(dims[1], 0);
        td_tensor_release(w);
        td_tensor_release(x);
        td_tensor_release(y);
        OK(td_float_from_data_dtype(vk, qs[qi], blk, w2, 2, &w));
        x = tdt_filled(vk, TD_F32, x0m, 2);
        OK(td_float_matmul_nt(x, w, &y));
        OK(td_tensor_shape(y, dims, &nd));
        assert_int_equal(dims[0], 0);
        assert_int_equal(dims[1], 2);
        td_tensor_release(w);
        td_tensor_release(x);
        td_tensor_release(y);
    }
}

/* Error paths: messages, nothing made (the teardown counts live objects). */
static void test_errors(void **state)
{
    (void)state;
    unsigned char blk[4 * 34];
    double val[128];
    make_blocks(TD_Q8_0, 4, 1u, blk, val);
    const int64_t ws[2] = { 2, 64 }, w3[3] = { 1, 2, 64 }, xs[2] = { 1, 64 }, xk[2] = { 1, 32 };
    td_tensor *w = NULL, *wb = NULL, *x = NULL, *xbad = NULL, *x64 = NULL, *out = NULL;
    OK(td_float_from_data_dtype(vk, TD_Q8_0, blk, ws, 2, &w));
    OK(td_float_from_data_dtype(vk, TD_Q8_0, blk, w3, 3, &wb));
    x = tdt_filled(vk, TD_F32, xs, 2);
    xbad = tdt_filled(vk, TD_F32, xk, 2);
    assert_non_null(x);
    assert_non_null(xbad);
    /* quantized activations */
    assert_int_equal(td_float_matmul_nt(w, w, &out), TD_E_UNSUPPORTED);
    HAS("only b (the weights) may be block-quantized");
    assert_null(out);
    /* f64 activations */
    OK(td_float_cast(x, TD_F64, &x64));
    assert_int_equal(td_float_matmul_nt(x64, w, &out), TD_E_DTYPE);
    HAS("take f32, f16 or bf16 activations");
    assert_null(out);
    /* batches of quantized weights */
    assert_int_equal(td_float_matmul_nt(x, wb, &out), TD_E_UNSUPPORTED);
    HAS("must be one matrix [n, k]");
    assert_null(out);
    /* inner dims that differ */
    assert_int_equal(td_float_matmul_nt(xbad, w, &out), TD_E_SHAPE);
    assert_null(out);
    /* a last dim that is not a multiple of 32 */
    const int64_t bad[2] = { 1, 48 };
    assert_int_equal(td_float_from_data_dtype(vk, TD_Q8_0, blk, bad, 2, &out), TD_E_SHAPE);
    HAS("multiple of 32");
    assert_null(out);
    /* other ops refuse quantized tensors */
    assert_int_equal(td_float_add(w, w, &out), TD_E_UNSUPPORTED);
    assert_null(out);
    td_tensor_release(w);
    td_tensor_release(wb);
    td_tensor_release(x);
    td_tensor_release(xbad);
    td_tensor_release(x64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_storage),
        TDT_TEST(test_dequantize),
        TDT_TEST(test_matmul_against_blocks),
        TDT_TEST(test_matmul_nmse),
        TDT_TEST(test_matmul_long_row),
        TDT_TEST(test_empty),
        TDT_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
