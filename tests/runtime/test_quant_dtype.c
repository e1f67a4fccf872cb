/* q8_0 / q4_0 as tensor dtypes on the CPU (docs/dtypes.md section 8): td_float_quantize and
 * td_float_dequantize against blocks worked out by hand from ggml's block layout and
 * reference rules (the reasoning beside each byte; none comes from the library), raw blocks
 * in and out through the `_dtype` twins, reshape of whole rows, to_device, the quantized
 * matmul (float_matmul_nt with quantized weights) against reference loops written here, and
 * the error paths with their messages and no leaks. */
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
#include "tdt.h"

static td_device *cpu;

static int setup(void **state)
{
    (void)state;
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(cpu);
    return 0;
}

#define OK(call) assert_int_equal((call), TD_OK)
#define HAS(s) assert_non_null(strstr(td_last_error(), (s)))

/* Two q8_0 rows of one block each.
 * Row 0: max |x| = 127, so d = 127 / 127 = 1 (f16 0x3c00, bytes 00 3c) and id = 1: qs is
 * x rounded half away from zero: 127, 2.5 -> 3, -2.5 -> -3, 0.49 -> 0, -127, -0.5 -> -1,
 * 100.7 -> 101, then j - 19 for j = 7..31 (exact).
 * Row 1: max |x| = 254, d = 2 (f16 0x4000, bytes 00 40), id = 0.5: -254 -> -127, then
 * 2 (j - 15) -> j - 15 for j = 0..30. */
static void q8_rows(float x[64], unsigned char blocks[68], float deq[64])
{
    const float head[7] = { 127.0f, 2.5f, -2.5f, 0.49f, -127.0f, -0.5f, 100.7f };
    const int8_t qhead[7] = { 127, 3, -3, 0, -127, -1, 101 };
    blocks[0] = 0x00;
    blocks[1] = 0x3c;
    for (int j = 0; j < 32; j++) {
        x[j] = j < 7 ? head[j] : (float)(j - 19);
        const int8_t q = j < 7 ? qhead[j] : (int8_t)(j - 19);
        memcpy(&blocks[2 + j], &q, 1);
        deq[j] = (float)q;
    }
    blocks[34] = 0x00;
    blocks[35] = 0x40;
    for (int j = 0; j < 32; j++) {
        const int8_t q = j == 0 ? -127 : (int8_t)(j - 1 - 15);
        x[32 + j] = 2.0f * (float)q;
        memcpy(&blocks[36 + j], &q, 1);
        deq[32 + j] = 2.0f * (float)q;
    }
}

/* Two q4_0 rows of one block each: nibble = min(15, (int)(x * id + 8.5)), d = m / -8 with m
 * the value of largest magnitude (sign kept); byte j = nibble(x[j]) | nibble(x[j + 16]) << 4.
 * Row 0: x[j] = j - 8 (j < 16), x[16 + j] = 7 - j (j < 15), x[31] = 7.6; m = -8 (x[0]), d = 1
 * (f16 3c00), id = 1: nibble(x[j]) = j, nibble(x[16 + j]) = 15 - j, nibble(7.6) =
 * min(15, 16) = 15, so byte j = j | (15 - j) << 4 and byte 15 = 0xff; dequantized x[31] = 7.
 * Row 1: x[0] = 16 is the largest, d = 16 / -8 = -2 (f16 c000), id = -0.5: 16 -> (int)0.5 = 0,
 * -14 -> (int)15.5 = 15, 3 -> (int)7 = 7, -3 -> (int)10 = 10, x[17] = 5 -> (int)6 = 6, zeros ->
 * 8; dequantized (n - 8) * -2: 16, -14, 2, -4, 4 and -0 (the f64 check compares bits). */
static void q4_rows(float x[64], unsigned char blocks[36], float deq[64])
{
    blocks[0] = 0x00;
    blocks[1] = 0x3c;
    for (int j = 0; j < 16; j++) {
        x[j] = (float)(j - 8);
        deq[j] = x[j];
        x[16 + j] = j < 15 ? (float)(7 - j) : 7.6f;
        deq[16 + j] = j < 15 ? (float)(7 - j) : 7.0f;
        blocks[2 + j] = (unsigned char)(j | (15 - j) << 4);
    }
    blocks[2 + 15] = 0xff;
    blocks[18] = 0x00;
    blocks[19] = 0xc0;
    for (int j = 0; j < 32; j++) /* zeros: (8 - 8) * -2 is -0 */
        x[32 + j] = 0.0f, deq[32 + j] = -0.0f;
    x[32] = 16.0f, x[33] = -14.0f, x[34] = 3.0f, x[35] = -3.0f, x[49] = 5.0f;
    deq[32] = 16.0f, deq[33] = -14.0f, deq[34] = 2.0f, deq[35] = -4.0f, deq[49] = 4.0f;
    for (int j = 0; j < 16; j++)
        blocks[20 + j] = 0x88;
    blocks[20] = 0x80;
    blocks[21] = 0x6f;
    blocks[22] = 0x87;
    blocks[23] = 0x8a;
}

static void check_scheme(td_dtype scheme, const float *x, const unsigned char *blocks, size_t nbytes,
                         const float *deq)
{
    const int64_t shape[2] = { 2, 32 };
    td_tensor *t = NULL, *q = NULL, *back = NULL, *raw = NULL;
    OK(td_float_from_data(cpu, x, shape, 2, &t));
    OK(td_float_quantize(t, scheme, &q));
    td_dtype dt;
    OK(td_tensor_dtype(q, &dt));
    assert_int_equal(dt, scheme);
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    OK(td_tensor_shape(q, dims, &nd));
    assert_int_equal(nd, 2);
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 32);
    /* raw blocks out: dst_len counts bytes */
    unsigned char got[68] = { 0 };
    OK(td_float_into_data_dtype(q, scheme, got, (int64_t)nbytes));
    assert_memory_equal(got, blocks, nbytes);
    /* dequantized, through the API and through into_data_dtype */
    OK(td_float_dequantize(q, TD_F32, &back));
    tdt_expect(back, TD_F32, shape, 2, deq, 64, 0.0f);
    float vals[64];
    OK(td_float_into_data_dtype(q, TD_F32, vals, 64));
    tdt_expect_host(TD_F32, vals, deq, 64, 0.0f);
    /* the hand blocks in: the same values */
    OK(td_float_from_data_dtype(cpu, scheme, blocks, shape, 2, &raw));
    td_tensor_release(back);
    OK(td_float_dequantize(raw, TD_F32, &back));
    tdt_expect(back, TD_F32, shape, 2, deq, 64, 0.0f);
    td_tensor_release(back);
    /* f64 out: exact (every value is a small integer) */
    OK(td_float_dequantize(raw, TD_F64, &back));
    double d64[64], w64[64];
    OK(td_float_into_data_dtype(back, TD_F64, d64, 64));
    for (int i = 0; i < 64; i++)
        w64[i] = deq[i];
    assert_memory_equal(d64, w64, sizeof d64);
    td_tensor_release(back);
    /* quantizing from f16 gives the same blocks (every x is exact in f16 but 0.49, 100.7,
     * 7.6, whose f16 roundings 0.49, 100.6875, 7.6015625 round the same) */
    td_tensor *h = NULL, *qh = NULL;
    OK(td_float_cast(t, TD_F16, &h));
    OK(td_float_quantize(h, scheme, &qh));
    memset(got, 0, sizeof got);
    OK(td_float_into_data_dtype(qh, scheme, got, (int64_t)nbytes));
    assert_memory_equal(got, blocks, nbytes);
    /* quantizing a quantized tensor to its own scheme is the tensor itself */
    td_tensor *same = NULL;
    OK(td_float_quantize(q, scheme, &same));
    assert_ptr_equal(same, q);
    td_tensor_release(same);
    td_tensor_release(h);
    td_tensor_release(qh);
    td_tensor_release(raw);
    td_tensor_release(t);
    td_tensor_release(q);
}

static void test_q8_0_blocks(void **state)
{
    (void)state;
    float x[64], deq[64];
    unsigned char blocks[68];
    q8_rows(x, blocks, deq);
    check_scheme(TD_Q8_0, x, blocks, 68, deq);
}

static void test_q4_0_blocks(void **state)
{
    (void)state;
    float x[64], deq[64];
    unsigned char blocks[36];
    q4_rows(x, blocks, deq);
    check_scheme(TD_Q4_0, x, blocks, 36, deq);
}

/* Reshapes keeping whole rows of blocks share the storage; to_device copies the blocks. */
static void test_reshape_and_move(void **state)
{
    (void)state;
    float x[64], deq[64];
    unsigned char blocks[68];
    q8_rows(x, blocks, deq);
    const int64_t shape[2] = { 2, 32 }, flat[1] = { 64 }, three[3] = { 1, 2, 32 }, halves[2] = { 4, 16 };
    td_tensor *q = NULL, *r = NULL, *m = NULL, *back = NULL;
    OK(td_float_from_data_dtype(cpu, TD_Q8_0, blocks, shape, 2, &q));
    OK(td_float_reshape(q, flat, 1, &r));
    bool same = false;
    OK(td_testing_same_storage(q, r, &same));
    assert_true(same);
    OK(td_float_dequantize(r, TD_F32, &back));
    tdt_expect(back, TD_F32, flat, 1, deq, 64, 0.0f);
    td_tensor_release(back);
    td_tensor_release(r);
    OK(td_float_reshape(q, three, 3, &r));
    td_tensor *bad = NULL;
    assert_int_equal(td_float_reshape(q, halves, 2, &bad), TD_E_SHAPE);
    HAS("float_reshape: a q8_0 tensor holds blocks of 32 values along its last dim");
    assert_null(bad);
    /* printed through its values (dequantized); the expected text is NumPy's array2string of
     * the hand values (python3 -c "...np.array2string(np.array([[row0, row1]], 'f4'))") */
    char text[512];
    OK(td_tensor_format(r, text, sizeof text, NULL));
    assert_non_null(strstr(text, "shape=[1, 2, 32] dtype=q8_0"));
    assert_non_null(strstr(text, "[[[ 127.    3.   -3.    0. -127.   -1.  101.  -12."));
    td_tensor_release(r);
    r = NULL;
    OK(td_float_to_device(q, cpu, &m));
    unsigned char got[68];
    OK(td_float_into_data_dtype(m, TD_Q8_0, got, 68));
    assert_memory_equal(got, blocks, 68);
    /* on an autodiff device: stored, never tracked */
    td_device *ad = NULL;
    OK(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad));
    td_tensor *aq = NULL;
    OK(td_float_to_device(q, ad, &aq));
    assert_int_equal(td_require_grad(aq), TD_E_AUTODIFF);
    HAS("require_grad: a q8_0 tensor is block-quantized and never tracked");
    td_tensor_release(aq);
    td_device_release(ad);
    td_tensor_release(m);
    td_tensor_release(q);
}

static double nmse(const float *got, const double *want, int64_t n)
{
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        den += want[i] * want[i];
    }
    return num / den;
}

/* y = x @ w^T with w quantized [n, k]: against the product of x by the dequantized weights
 * (the only difference is the kernel's q8_0 rounding of x: each x within 0.6 d_x of its
 * block's value, d_x = amax / 127 plus its f16 rounding, so |y - ref| <= sum 0.6 d_x |w|),
 * and against the f32 weights by the spec's NMSE bounds (specs/dtypes.lua: q8_0 1e-3, q4_0
 * 1e-2; uniform weights in [-1, 1) give about 1e-4 and 4e-3: a q4_0 step is amax / 8),
 * over a batch of 2 x 3 rows of k = 96 (3 blocks) by n = 5. */
static void check_matmul(td_dtype scheme, double nmse_bound)
{
    enum { B = 2, M = 3, K = 96, N = 5 };
    unsigned seed = 12345u + (unsigned)scheme;
    float *x = tdt_host_randoms(B * M * K, &seed), *w = tdt_host_randoms(N * K, &seed);
    const int64_t xs[3] = { B, M, K }, ws[2] = { N, K }, ys[3] = { B, M, N };
    td_tensor *tx = NULL, *tw = NULL, *q = NULL, *dq = NULL, *y = NULL;
    OK(td_float_from_data(cpu, x, xs, 3, &tx));
    OK(td_float_from_data(cpu, w, ws, 2, &tw));
    OK(td_float_quantize(tw, scheme, &q));
    OK(td_float_dequantize(q, TD_F32, &dq));
    float wd[N * K], got[B * M * N];
    OK(td_float_into_data(dq, wd, N * K));
    OK(td_float_matmul_nt(tx, q, &y));
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    OK(td_tensor_shape(y, dims, &nd));
    assert_int_equal(nd, 3);
    assert_memory_equal(dims, ys, sizeof ys);
    OK(td_float_into_data(y, got, B * M * N));
    double ref_dq[B * M * N], ref_w[B * M * N];
    for (int r = 0; r < B * M; r++)
        for (int j = 0; j < N; j++) {
            double s = 0.0, sw = 0.0, bound = 1e-5;
            for (int blk = 0; blk < K / 32; blk++) {
                double amax = 0.0;
                for (int i = 0; i < 32; i++)
                    amax = fmax(amax, fabs((double)x[r * K + blk * 32 + i]));
                for (int i = blk * 32; i < blk * 32 + 32; i++) {
                    s += (double)x[r * K + i] * wd[j * K + i];
                    sw += (double)x[r * K + i] * w[j * K + i];
                    bound += 0.6 * amax / 127.0 * fabs((double)wd[j * K + i]) +
                             1e-6 * fabs((double)x[r * K + i] * wd[j * K + i]);
                }
            }
            ref_dq[r * N + j] = s;
            ref_w[r * N + j] = sw;
            if (fabs((double)got[r * N + j] - s) > bound)
                fail_msg("%s y[%d,%d] = %.7g, x @ dequantized w^T = %.7g, bound %.3g", td_dtype_name(scheme), r, j,
                         (double)got[r * N + j], s, bound);
        }
    const double e_dq = nmse(got, ref_dq, B * M * N), e_w = nmse(got, ref_w, B * M * N);
    print_message("%s matmul: NMSE %.3g against the dequantized weights, %.3g against the f32 weights (bound %g)\n",
                  td_dtype_name(scheme), e_dq, e_w, nmse_bound);
    assert_true(e_dq < 1e-4);
    assert_true(e_w < nmse_bound);
    /* a 2-d x gives the same rows */
    td_tensor *x2 = NULL, *y2 = NULL;
    const int64_t x2s[2] = { B * M, K };
    OK(td_float_reshape(tx, x2s, 2, &x2));
    OK(td_float_matmul_nt(x2, q, &y2));
    float got2[B * M * N];
    OK(td_float_into_data(y2, got2, B * M * N));
    assert_memory_equal(got2, got, sizeof got);
    td_tensor_release(x2);
    td_tensor_release(y2);
    td_tensor_release(tx);
    td_tensor_release(tw);
    td_tensor_release(q);
    td_tensor_release(dq);
    td_tensor_release(y);
    free(x);
    free(w);
}

static void test_matmul_q8_0(void **state)
{
    (void)state;
    check_matmul(TD_Q8_0, 1e-3);
}

static void test_matmul_q4_0(void **state)
{
    (void)state;
    check_matmul(TD_Q4_0, 1e-2);
}

/* f16 / bf16 activations by quantized weights: the result has x's dtype. x is chosen so that
 * the kernel's q8_0 rounding of x is exact (each block of a row holds integers in [-127, 127]
 * with 127 or -127 among them: d_x = 1), so y is x @ dequantize(w)^T (computed here in f64
 * from the hand-built blocks of q8_rows / q4_rows) up to the f32 sum of the block dot
 * products (a few ulps) and one rounding to x's dtype (half an ulp: 2^-11 f16, 2^-8 bf16). */
static void test_matmul_half(void **state)
{
    (void)state;
    enum { M = 3, K = 32, N = 2 };
    float wx[64], deq8[64], deq4[64];
    unsigned char b8[68], b4[36];
    q8_rows(wx, b8, deq8);
    q4_rows(wx, b4, deq4);
    float x[M * K];
    for (int r = 0; r < M; r++)
        for (int i = 0; i < K; i++)
            x[r * K + i] = i == r ? (r % 2 ? -127.0f : 127.0f) : (float)((i * 37 + r * 11) % 41 - 20);
    const int64_t xs[2] = { M, K }, ws[2] = { N, K };
    td_tensor *x32 = NULL;
    OK(td_float_from_data(cpu, x, xs, 2, &x32));
    const td_dtype hs[2] = { TD_F16, TD_BF16 };
    const td_dtype qs[2] = { TD_Q8_0, TD_Q4_0 };
    for (int hi = 0; hi < 2; hi++)
        for (int qi = 0; qi < 2; qi++) {
            td_tensor *xh = NULL, *w = NULL, *y = NULL, *y32 = NULL;
            OK(td_float_cast(x32, hs[hi], &xh));
            OK(td_float_from_data_dtype(cpu, qs[qi], qi == 0 ? (const void *)b8 : (const void *)b4, ws, 2, &w));
            OK(td_float_matmul_nt(xh, w, &y));
            td_dtype dt = TD_F32;
            OK(td_tensor_dtype(y, &dt));
            assert_int_equal(dt, hs[hi]);
            OK(td_float_cast(y, TD_F32, &y32));
            float got[M * N];
            OK(td_float_into_data(y32, got, M * N));
            const float *wd = qi == 0 ? deq8 : deq4;
            const double half_ulp = hs[hi] == TD_F16 ? ldexp(1.0, -11) : ldexp(1.0, -8);
            for (int r = 0; r < M; r++)
                for (int j = 0; j < N; j++) {
                    double ref = 0.0, mag = 0.0;
                    for (int i = 0; i < K; i++) {
                        ref += (double)x[r * K + i] * wd[j * K + i];
                        mag += fabs((double)x[r * K + i] * wd[j * K + i]);
                    }
                    const double bound = half_ulp * fabs(ref) * 1.01 + 4.0 * ldexp(1.0, -24) * mag;
                    if (fabs((double)got[r * N + j] - ref) > bound)
                        fail_msg("%s x %s: y[%d,%d] = %.7g, want %.7g (bound %.3g)", td_dtype_name(hs[hi]),
                                 td_dtype_name(qs[qi]), r, j, (double)got[r * N + j], ref, bound);
                }
            td_tensor_release(xh);
            td_tensor_release(w);
            td_tensor_release(y);
            td_tensor_release(y32);
        }
    td_tensor_release(x32);
}

/* On an autodiff device, a tracked x by quantized weights: the forward runs (inference). */
static void test_matmul_autodiff(void **state)
{
    (void)state;
    td_device *ad = NULL;
    OK(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad));
    const int64_t xs[2] = { 1, 32 }, ws[2] = { 2, 32 };
    float x[32], w[64];
    for (int i = 0; i < 32; i++)
        x[i] = 1.0f, w[i] = 1.0f, w[32 + i] = -0.5f;
    td_tensor *tx = NULL, *tw = NULL, *q = NULL, *y = NULL;
    OK(td_float_from_data(ad, x, xs, 2, &tx));
    OK(td_float_from_data(ad, w, ws, 2, &tw));
    OK(td_float_quantize(tw, TD_Q4_0, &q));
    OK(td_float_matmul_nt(tx, q, &y));
    /* 32 * 1 and 32 * -0.5: the weights are exact in q4_0 (d = m / -8 = -0.125 and 0.0625,
     * nibbles 0); x's q8_0 scale 1 / 127 is rounded to f16 (relative 2^-11) */
    const float want[2] = { 32.0f, -16.0f };
    float got[2];
    OK(td_float_into_data(y, got, 2));
    tdt_expect_host(TD_F32, got, want, 2, 1e-3f);
    /* a tracked x: the forward records, the backward cannot (x's gradient is grad @ w with w
     * quantized, a mix float_matmul refuses): an error, nothing leaked */
    td_tensor *yt = NULL, *loss = NULL;
    td_grads *grads = NULL;
    OK(td_require_grad(tx));
    OK(td_float_matmul_nt(tx, q, &yt));
    OK(td_float_sum(yt, &loss));
    assert_int_equal(td_backward(loss, &grads), TD_E_DTYPE);
    HAS("float_matmul: a is f32 and b is q4_0");
    assert_null(grads);
    td_tensor_release(yt);
    td_tensor_release(loss);
    td_tensor_release(tx);
    td_tensor_release(tw);
    td_tensor_release(q);
    td_tensor_release(y);
    td_device_release(ad);
}

/* Every bad input: its status, a message naming the op, the dtype and the way out. */
static void test_errors(void **state)
{
    (void)state;
    float x[64], deq[64];
    unsigned char blocks[68];
    q8_rows(x, blocks, deq);
    const int64_t shape[2] = { 2, 32 }, odd[2] = { 2, 40 }, wshape[2] = { 3, 32 };
    td_tensor *t = NULL, *q = NULL, *r = NULL, *f = NULL;
    OK(td_float_from_data(cpu, x, shape, 2, &t));
    OK(td_float_quantize(t, TD_Q8_0, &q));

    /* a last dim that is not a multiple of 32 */
    float z[80] = { 0 };
    OK(td_float_from_data(cpu, z, odd, 2, &f));
    assert_int_equal(td_float_quantize(f, TD_Q4_0, &r), TD_E_SHAPE);
    assert_string_equal(td_last_error(), "float_quantize: a q4_0 tensor holds blocks of 32 values along its last "
                                         "dim, which must be a multiple of 32; got shape [2, 40]");
    assert_null(r);
    td_tensor_release(f);
    assert_int_equal(td_float_from_data_dtype(cpu, TD_Q8_0, blocks, odd, 2, &r), TD_E_SHAPE);
    HAS("float_from_data_dtype: a q8_0 tensor");
    assert_null(r);
    /* a scalar has no last dim */
    OK(td_float_full(cpu, NULL, 0, 1.0f, &f));
    assert_int_equal(td_float_quantize(f, TD_Q8_0, &r), TD_E_SHAPE);
    td_tensor_release(f);

    /* inf / NaN cannot be held */
    x[5] = INFINITY;
    OK(td_float_from_data(cpu, x, shape, 2, &f));
    assert_int_equal(td_float_quantize(f, TD_Q8_0, &r), TD_E_INVALID);
    assert_string_equal(td_last_error(), "float_quantize: t[5] (flat index) is infinite, which a q8_0 block cannot hold");
    td_tensor_release(f);

    /* schemes and dtypes */
    assert_int_equal(td_float_quantize(t, TD_F16, &r), TD_E_INVALID);
    HAS("f16 is not a block-quantized dtype");
    assert_int_equal(td_float_quantize(t, (td_dtype)77, &r), TD_E_INVALID);
    assert_int_equal(td_float_quantize(q, TD_Q4_0, &r), TD_E_UNSUPPORTED);
    HAS("t is q8_0 already: dequantize it first");
    assert_int_equal(td_float_dequantize(t, TD_F32, &r), TD_E_INVALID);
    assert_string_equal(td_last_error(),
                        "float_dequantize: t is f32, not a block-quantized tensor (td_float_quantize makes one)");
    assert_int_equal(td_float_dequantize(q, TD_Q4_0, &r), TD_E_UNSUPPORTED);
    assert_int_equal(td_float_dequantize(q, TD_I32, &r), TD_E_KIND);
    assert_int_equal(td_float_quantize(NULL, TD_Q8_0, &r), TD_E_NULL);
    assert_int_equal(td_float_dequantize(q, TD_F32, NULL), TD_E_NULL);
    assert_int_equal(td_float_cast(q, TD_F32, &r), TD_E_UNSUPPORTED);
    HAS("dequantize it first (td_float_dequantize)");
    assert_int_equal(td_float_zeros_dtype(cpu, TD_Q4_0, shape, 2, &r), TD_E_UNSUPPORTED);
    assert_null(r);

    /* raw blocks out: dst too small (bytes), another quantized dtype */
    unsigned char small[67];
    assert_int_equal(td_float_into_data_dtype(q, TD_Q8_0, small, 67), TD_E_INVALID);
    assert_string_equal(td_last_error(), "float_into_data_dtype: dst holds 67 bytes, the q8_0 tensor's blocks take 68");
    assert_int_equal(td_float_into_data_dtype(q, TD_Q4_0, small, 67), TD_E_UNSUPPORTED);
    float out64[64];
    assert_int_equal(td_float_into_data(q, out64, 64), TD_E_UNSUPPORTED);
    HAS("dtype q8_0 is not computed by cpu: dequantize first (td_float_dequantize)");

    /* other ops: the generated arm's message names op, dtype and td_float_dequantize */
    assert_int_equal(td_float_exp(q, &r), TD_E_UNSUPPORTED);
    assert_string_equal(td_last_error(),
                        "float_exp: dtype q8_0 is not computed by cpu: dequantize first (td_float_dequantize)");
    assert_int_equal(td_float_add(q, q, &r), TD_E_UNSUPPORTED);
    HAS("float_add: dtype q8_0");
    assert_int_equal(td_float_sum(q, &r), TD_E_UNSUPPORTED);
    assert_int_equal(td_float_swap_dims(q, 0, 1, &r), TD_E_UNSUPPORTED);
    HAS("float_swap_dims: dtype q8_0");
    const int64_t starts[2] = { 0, 0 }, ends[2] = { 1, 32 };
    assert_int_equal(td_float_slice(q, starts, 2, ends, 2, &r), TD_E_UNSUPPORTED);
    assert_null(r);

    /* mixing: f32 with a quantized tensor anywhere but float_matmul_nt's b */
    assert_int_equal(td_float_add(t, q, &r), TD_E_DTYPE);
    assert_string_equal(td_last_error(), "float_add: a is f32 and b is q8_0; a block-quantized tensor takes part only "
                                         "in float_matmul_nt (as its b): dequantize it first (td_float_dequantize)");
    float ones[96];
    for (int i = 0; i < 96; i++)
        ones[i] = 1.0f;
    OK(td_float_from_data(cpu, ones, wshape, 2, &f));
    assert_int_equal(td_float_matmul(f, q, &r), TD_E_DTYPE);
    HAS("float_matmul: a is f32 and b is q8_0");
    assert_int_equal(td_float_matmul_nt(q, f, &r), TD_E_UNSUPPORTED);
    assert_string_equal(td_last_error(), "float_matmul_nt: a is q8_0: only b (the weights) may be block-quantized; "
                                         "dequantize first (td_float_dequantize)");
    td_tensor *h = NULL;
    OK(td_float_cast(f, TD_F64, &h)); /* f16 / bf16 run (test_matmul_half); f64 would lose precision */
    assert_int_equal(td_float_matmul_nt(h, q, &r), TD_E_DTYPE);
    assert_string_equal(td_last_error(), "float_matmul_nt: a is f64 and b is q8_0; q8_0 weights take f32, f16 or "
                                         "bf16 activations: td_float_cast(a, TD_F32, &t)");
    td_tensor_release(h);
    /* inner dims that disagree: the shape rule's error */
    const int64_t wide[2] = { 2, 64 };
    td_tensor *qw = NULL;
    unsigned char blocks4[136]; /* [2, 64]: four blocks */
    memcpy(blocks4, blocks, 68);
    memcpy(blocks4 + 68, blocks, 68);
    OK(td_float_from_data_dtype(cpu, TD_Q8_0, blocks4, wide, 2, &qw));
    assert_int_equal(td_float_matmul_nt(f, qw, &r), TD_E_SHAPE);
    td_tensor_release(qw);
    /* quantized weights with batch dims */
    const int64_t batched[3] = { 1, 2, 32 };
    OK(td_float_from_data_dtype(cpu, TD_Q8_0, blocks, batched, 3, &qw));
    assert_int_equal(td_float_matmul_nt(f, qw, &r), TD_E_UNSUPPORTED);
    HAS("weights must be one matrix [n, k]");
    assert_null(r);
    td_tensor_release(qw);
    td_tensor_release(f);
    td_tensor_release(t);
    td_tensor_release(q);
}

/* Every allocation of quantize, dequantize and the matmul failing in turn: an error, no leak. */
static void test_no_leaks_on_failed_allocations(void **state)
{
    (void)state;
    float x[64], deq[64];
    unsigned char blocks[68];
    q8_rows(x, blocks, deq);
    const int64_t shape[2] = { 2, 32 };
    td_tensor *t = NULL, *q = NULL;
    OK(td_float_from_data(cpu, x, shape, 2, &t));
    OK(td_float_quantize(t, TD_Q4_0, &q));
    const long base = td_testing_live_objects();
    for (int n = 0; n < 40; n++) {
        td_tensor *a = NULL, *b = NULL, *c = NULL;
        td_testing_fail_allocations_after(n);
        const td_status s1 = td_float_quantize(t, TD_Q8_0, &a);
        const td_status s2 = td_float_dequantize(q, TD_BF16, &b);
        const td_status s3 = td_float_matmul_nt(t, q, &c);
        td_testing_fail_allocations_after(-1);
        assert_true(s1 == TD_OK || s1 == TD_E_NOMEM);
        assert_true(s2 == TD_OK || s2 == TD_E_NOMEM);
        assert_true(s3 == TD_OK || s3 == TD_E_NOMEM);
        td_tensor_release(a);
        td_tensor_release(b);
        td_tensor_release(c);
        assert_int_equal(td_testing_live_objects(), base);
    }
    td_tensor_release(t);
    td_tensor_release(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_q8_0_blocks),        TDT_TEST(test_q4_0_blocks),   TDT_TEST(test_reshape_and_move),
        TDT_TEST(test_matmul_q8_0),        TDT_TEST(test_matmul_q4_0),   TDT_TEST(test_matmul_autodiff), TDT_TEST(test_matmul_half),
        TDT_TEST(test_errors),             TDT_TEST(test_no_leaks_on_failed_allocations),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
