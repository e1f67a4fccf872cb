/* The cpu backend's tiled transpose path (cpu_layout.c: a permute whose last dim is strided in
 * the source and another dim is contiguous there) against index arithmetic done here, on
 * shapes that are not multiples of the tile or of the 8 x 8 register blocks, for f32, i32
 * and bool. ctest also runs it with TD_CPU_CAPABILITY=avx2 and =default (tests/backends/cpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

static td_device *dev;

static int setup(void **state)
{
    (void)state;
    return td_device_open(TD_BACKEND_CPU, 0, &dev) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(dev);
    return 0;
}

/* out[i0..i_{n-1}] = a[j] where a's index along perm[d] is i_d. */
static int64_t src_index(const int64_t *shape, int nd, const int64_t *perm, const int64_t *oidx)
{
    int64_t aidx[8] = { 0 }, off = 0;
    for (int d = 0; d < nd; d++)
        aidx[perm[d]] = oidx[d];
    for (int d = 0; d < nd; d++)
        off = off * shape[d] + aidx[d];
    return off;
}

static void check_perm(const int64_t *shape, int nd, const int64_t *perm)
{
    int64_t n = 1, oshape[8];
    for (int d = 0; d < nd; d++) {
        n *= shape[d];
        oshape[d] = shape[perm[d]];
    }
    float *f = malloc(sizeof(float) * (size_t)n), *fo = malloc(sizeof(float) * (size_t)n);
    int32_t *i = malloc(sizeof(int32_t) * (size_t)n), *io = malloc(sizeof(int32_t) * (size_t)n);
    bool *b = malloc((size_t)n), *bo = malloc((size_t)n);
    assert_true(f && fo && i && io && b && bo);
    for (int64_t k = 0; k < n; k++) {
        f[k] = (float)k * 0.5f;
        i[k] = (int32_t)(k * 7 - 3);
        b[k] = (k * 2654435761u) % 3 == 0;
    }
    td_tensor *tf = NULL, *ti = NULL, *tb = NULL, *rf = NULL, *ri = NULL, *rb = NULL;
    tdt_check(td_float_from_data(dev, f, shape, nd, &tf), "float_from_data");
    tdt_check(td_int_from_data(dev, i, shape, nd, &ti), "int_from_data");
    tdt_check(td_bool_from_data(dev, b, shape, nd, &tb), "bool_from_data");
    tdt_check(td_float_permute(tf, perm, nd, &rf), "float_permute");
    tdt_check(td_int_permute(ti, perm, nd, &ri), "int_permute");
    tdt_check(td_bool_permute(tb, perm, nd, &rb), "bool_permute");
    tdt_check(td_float_into_data(rf, fo, n), "read f");
    tdt_check(td_int_into_data(ri, io, n), "read i");
    tdt_check(td_bool_into_data(rb, bo, n), "read b");
    int64_t oidx[8] = { 0 };
    for (int64_t k = 0; k < n; k++) {
        const int64_t s = src_index(shape, nd, perm, oidx);
        if (fo[k] != f[s] || io[k] != i[s] || bo[k] != b[s])
            fail_msg("element %lld: got %g %d %d, want %g %d %d", (long long)k, (double)fo[k], io[k], bo[k],
                     (double)f[s], i[s], b[s]);
        for (int d = nd - 1; d >= 0; d--) {
            if (++oidx[d] < oshape[d])
                break;
            oidx[d] = 0;
        }
    }
    td_tensor *ts[] = { tf, ti, tb, rf, ri, rb };
    for (int k = 0; k < 6; k++)
        td_tensor_release(ts[k]);
    free(f), free(fo), free(i), free(io), free(b), free(bo);
}

static void test_transpose_2d(void **state)
{
    (void)state;
    static const int64_t shape[] = { 333, 257 }, perm[] = { 1, 0 };
    check_perm(shape, 2, perm);
}

static void test_transpose_batched(void **state)
{
    (void)state;
    static const int64_t shape[] = { 3, 70, 95 }, perm[] = { 0, 2, 1 };
    check_perm(shape, 3, perm);
}

static void test_reverse_dims(void **state)
{
    (void)state;
    static const int64_t shape[] = { 40, 3, 33 }, perm[] = { 2, 1, 0 };
    check_perm(shape, 3, perm);
}

static void test_contiguous_dim_in_the_middle(void **state)
{
    (void)state;
    static const int64_t shape[] = { 2, 45, 5, 64 }, perm[] = { 0, 3, 2, 1 };
    check_perm(shape, 4, perm);
}

/* Sides of 8 to 15 (one 8 x 8 block and a tail), and a matrix of several 256 x 256 tiles
 * with partial ones at both edges, large enough to be threaded. */
static void test_narrow_and_many_tiles(void **state)
{
    (void)state;
    static const int64_t narrow[] = { 9, 700 }, tall[] = { 700, 15 }, big[] = { 517, 1029 }, perm[] = { 1, 0 };
    check_perm(narrow, 2, perm);
    check_perm(tall, 2, perm);
    check_perm(big, 2, perm);
}

/* Results of 16 MiB and more (f32 and i32 here): written with non-temporal stores where a dst
 * row starts 32-byte aligned, two 8 x 8 blocks at a time; [1032, 4100] also has a last block
 * of 8 columns alone and 4 rows past the blocks, and the batched one an outer offset. */
static void test_large_streamed(void **state)
{
    (void)state;
    static const int64_t wide[] = { 1032, 4100 }, perm2[] = { 1, 0 };
    static const int64_t batched[] = { 2, 2056, 1032 }, perm3[] = { 0, 2, 1 };
    check_perm(wide, 2, perm2);
    check_perm(batched, 3, perm3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_2d),
        cmocka_unit_test(test_transpose_batched),
        cmocka_unit_test(test_reverse_dims),
        cmocka_unit_test(test_contiguous_dim_in_the_middle),
        cmocka_unit_test(test_narrow_and_many_tiles),
        cmocka_unit_test(test_large_streamed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
