/* CPU backend: the f16 / bf16 block drivers of the float elementwise kernels
 * (cpu_float_ew.h). Each block of TD_CPU_HALF_BLOCK elements is widened to f32 by the row
 * converters (runtime/core/td_convert.c: F16C / AVX-512 / AVX-512 BF16, or portable), the
 * op's f32 row function runs on it, and the f32 results are rounded to the dtype once:
 * bit for bit the generated via-f32 path, without whole-tensor copies. */
#include "cpu_float_ew.h"
#include "td_convert.h"

enum { B = TD_CPU_HALF_BLOCK };

static void widen(td_dtype dt, const uint16_t *src, float *dst, int64_t n)
{
    if (dt == TD_F16)
        td_f16_to_f32_row(src, dst, (size_t)n);
    else
        td_bf16_to_f32_row(src, dst, (size_t)n);
}

static void narrow(td_dtype dt, const float *src, uint16_t *dst, int64_t n)
{
    if (dt == TD_F16)
        td_f32_to_f16_row(src, dst, (size_t)n);
    else
        td_f32_to_bf16_row(src, dst, (size_t)n);
}

/* n f32 values of a strided run (stride 1: the run itself; 0: one value repeated). */
static void widen_strided(td_dtype dt, const uint16_t *src, int64_t stride, float *dst, int64_t n)
{
    if (stride == 1) {
        widen(dt, src, dst, n);
    } else if (stride == 0) {
        widen(dt, src, dst, 1);
        for (int64_t i = 1; i < n; i++)
            dst[i] = dst[0];
    } else {
        uint16_t g[B];
        for (int64_t i = 0; i < n; i++)
            g[i] = src[i * stride];
        widen(dt, g, dst, n);
    }
}

/* The f32 results of a block stored: rounded once, or the bools as they are. */
static void store(td_dtype dt, bool bool_out, const void *res, void *out, int64_t at, int64_t n)
{
    if (bool_out)
        memcpy((bool *)out + at, res, (size_t)n * sizeof(bool));
    else
        narrow(dt, (const float *)res, (uint16_t *)out + at, n);
}

td_status td_cpu_half_unary(const td_tensor *a, td_tensor *out, td_cpu_row1 row, const float *s, bool bool_out)
{
    const td_dtype dt = td_be_dtype(a);
    const uint16_t *pa = (const uint16_t *)td_be_data(a);
    void *po = td_be_data(out);
    const int64_t n = td_be_numel(out), blocks = (n + B - 1) / B;
    TD_CPU_FOR_WORK(k, blocks, n, {
        float x[B], y[B];
        const int64_t lo = k * B, len = n - lo < B ? n - lo : B;
        widen(dt, pa + lo, x, len);
        if (bool_out) {
            row(x, (bool *)po + lo, len, s);
        } else {
            row(x, y, len, s);
            narrow(dt, y, (uint16_t *)po + lo, len);
        }
    });
    return TD_OK;
}

/* One run of `n` outputs at `at` from a at stride ia and b at stride ib, in blocks. */
static void binary_run(td_dtype dt, const uint16_t *ra, int64_t ia, const uint16_t *rb, int64_t ib, void *po,
                       int64_t at, int64_t n, td_cpu_row2 row, bool bool_out)
{
    float x[B], y[B], z[B];
    for (int64_t lo = 0; lo < n; lo += B) {
        const int64_t len = n - lo < B ? n - lo : B;
        widen_strided(dt, ra + lo * ia, ia, x, len);
        widen_strided(dt, rb + lo * ib, ib, y, len);
        row(x, y, z, len);
        store(dt, bool_out, z, po, at + lo, len);
    }
}

td_status td_cpu_half_binary(const td_tensor *a, const td_tensor *b, td_tensor *out, td_cpu_row2 row, bool bool_out)
{
    const td_dtype dt = td_be_dtype(a);
    const uint16_t *pa = (const uint16_t *)td_be_data(a), *pb = (const uint16_t *)td_be_data(b);
    void *po = td_be_data(out);
    const int64_t n = td_be_numel(out), na = td_be_numel(a), nb = td_be_numel(b);
    if ((na == n || na == 1) && (nb == n || nb == 1)) {
        /* equal shapes or a scalar side: one run, cut into blocks for the threads */
        const int64_t ia = na == n ? 1 : 0, ib = nb == n ? 1 : 0, blocks = (n + B - 1) / B;
        TD_CPU_FOR_WORK(k, blocks, n, {
            const int64_t lo = k * B, len = n - lo < B ? n - lo : B;
            binary_run(dt, pa + lo * ia, ia, pb + lo * ib, ib, po, lo, len, row, bool_out);
        });
        return TD_OK;
    }
    td_cpu_bcast it;
    const td_shape *ins[2] = { td_be_shape(a), td_be_shape(b) };
    td_cpu_bcast_init(&it, td_be_shape(out), 2, ins);
    const int64_t inner = it.inner, ia = it.st[0][it.ndim - 1], ib = it.st[1][it.ndim - 1];
    TD_CPU_FOR_WORK(r, it.rows, n, {
        int64_t off[3];
        td_cpu_bcast_row(&it, r, off);
        binary_run(dt, pa + off[0], ia, pb + off[1], ib, po, r * inner, inner, row, bool_out);
    });
    return TD_OK;
}
