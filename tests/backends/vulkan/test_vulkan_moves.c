/* Vulkan moves of f16 / bf16 / f64 elements (copy.comp and index.comp by element size, issue 21):
 * transpose, slice_assign, cat, flip, pad, mask_where, mask_fill, gather, select and
 * scatter_assign against the same moves done here on the raw bits, bit for bit, through 16-bit
 * storage and through packed words (td_vulkan_set_half_storage). Shapes with odd last dims and odd
 * offsets run the packed form's half-word writes (atomics), even ones its whole-word writes. The
 * inputs hold signaling NaNs with payloads: a move keeps them, where a round trip through f32
 * (the "via f32" path) would quiet them, so the ops are shown to be native. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "td_vulkan.h"
#include "tdt.h"

static td_device *vk;

static int setup(void **state)
{
    (void)state;
    return td_device_open(TD_BACKEND_VULKAN, 0, &vk) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    return 0;
}

static int esize(td_dtype dt)
{
    return dt == TD_F64 ? 8 : 2;
}

static uint64_t get(const unsigned char *b, int es, int64_t i)
{
    uint64_t v = 0;
    memcpy(&v, b + i * es, (size_t)es); /* little-endian host */
    return v;
}

static void put(unsigned char *b, int es, int64_t i, uint64_t v)
{
    memcpy(b + i * es, &v, (size_t)es);
}

/* Element i of the inputs (seed tells tensors apart): every fifth a signaling NaN with a payload,
 * the rest finite values of assorted bits. */
static uint64_t pattern(td_dtype dt, int seed, int64_t i)
{
    const uint64_t h = (uint64_t)(i + 1) * 2654435761u + (uint64_t)seed * 40503u;
    const bool snan = i % 5 == 2;
    if (dt == TD_F16)
        return snan ? 0x7c00u | ((h & 0xffu) | 1u) | (h & 0x8000u) : h & 0xfbffu;
    if (dt == TD_BF16)
        return snan ? 0x7f80u | ((h & 0x3fu) | 1u) | (h & 0x8000u) : h & 0xff7fu;
    return snan ? 0x7ff0000000000000ull | (h & 0xffffu) | 1u : (h << 21) & 0xffefffffffffffffull;
}

/* The bits of a few exact values in dt. */
static uint64_t bits_of(td_dtype dt, double v)
{
    if (v == 1.5)
        return dt == TD_F16 ? 0x3e00u : dt == TD_BF16 ? 0x3fc0u : 0x3ff8000000000000ull;
    /* -2.0 */
    return dt == TD_F64 ? 0xc000000000000000ull : 0xc000u;
}

static unsigned char *host(td_dtype dt, int seed, int64_t n)
{
    unsigned char *b = calloc((size_t)(n > 0 ? n : 1), 8);
    assert_non_null(b);
    for (int64_t i = 0; i < n; i++)
        put(b, esize(dt), i, pattern(dt, seed, i));
    return b;
}

static td_tensor *upload(td_dtype dt, const unsigned char *b, const int64_t *shape, int nd)
{
    td_tensor *t = NULL;
    tdt_check(td_float_from_data_dtype(vk, dt, b, shape, nd, &t), "from_data_dtype");
    return t;
}

static td_tensor *input(td_dtype dt, int seed, const int64_t *shape, int nd, unsigned char **raw)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= shape[d];
    *raw = host(dt, seed, n);
    return upload(dt, *raw, shape, nd);
}

/* Reads r (n elements of dt) and compares it bit for bit with want; releases r. */
static void expect(const char *what, td_dtype dt, td_tensor *r, const unsigned char *want, int64_t n)
{
    unsigned char *got = calloc((size_t)(n > 0 ? n : 1), 8);
    assert_non_null(got);
    tdt_check(td_float_into_data_dtype(r, dt, got, n), "into_data_dtype");
    const int es = esize(dt);
    for (int64_t i = 0; i < n; i++)
        if (get(got, es, i) != get(want, es, i))
            fail_msg("%s in %s: element %lld is 0x%llx, want 0x%llx", what, td_dtype_name(dt), (long long)i,
                     (unsigned long long)get(got, es, i), (unsigned long long)get(want, es, i));
    free(got);
    td_tensor_release(r);
}

/* a [rows, cols] transposed. */
static void check_transpose(td_dtype dt, int64_t rows, int64_t cols)
{
    const int es = esize(dt);
    const int64_t s[2] = { rows, cols };
    unsigned char *a = NULL, *want = host(dt, 0, rows * cols);
    td_tensor *t = input(dt, 1, s, 2, &a), *r = NULL;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            put(want, es, j * rows + i, get(a, es, i * cols + j));
    tdt_check(td_float_transpose(t, &r), "transpose");
    expect("transpose", dt, r, want, rows * cols);
    td_tensor_release(t);
    free(a);
    free(want);
}

/* a [5, 7] with value [2, 3] at rows 1..2, columns 3..5 (an odd offset, odd widths). */
static void check_slice_assign(td_dtype dt)
{
    const int es = esize(dt);
    const int64_t as[2] = { 5, 7 }, vs[2] = { 2, 3 }, st[2] = { 1, 3 }, en[2] = { 3, 6 };
    unsigned char *a = NULL, *v = NULL, *want = host(dt, 0, 35);
    td_tensor *ta = input(dt, 2, as, 2, &a), *tv = input(dt, 3, vs, 2, &v), *r = NULL;
    memcpy(want, a, 35 * (size_t)es);
    for (int64_t i = 0; i < 2; i++)
        for (int64_t j = 0; j < 3; j++)
            put(want, es, (1 + i) * 7 + 3 + j, get(v, es, i * 3 + j));
    tdt_check(td_float_slice_assign(ta, tv, st, 2, en, 2, &r), "slice_assign");
    expect("slice_assign", dt, r, want, 35);
    td_tensor_release(ta);
    td_tensor_release(tv);
    free(a);
    free(v);
    free(want);
}

/* [3, 5] and [3, 2] along dim 1. */
static void check_cat(td_dtype dt)
{
    const int es = esize(dt);
    const int64_t s0[2] = { 3, 5 }, s1[2] = { 3, 2 };
    unsigned char *x = NULL, *y = NULL, *want = host(dt, 0, 21);
    td_tensor *tx = input(dt, 4, s0, 2, &x), *ty = input(dt, 5, s1, 2, &y), *r = NULL;
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 7; j++)
            put(want, es, i * 7 + j, j < 5 ? get(x, es, i * 5 + j) : get(y, es, i * 2 + j - 5));
    const td_tensor *xs[2] = { tx, ty };
    tdt_check(td_float_cat(xs, 2, 1, &r), "cat");
    expect("cat", dt, r, want, 21);
    td_tensor_release(tx);
    td_tensor_release(ty);
    free(x);
    free(y);
    free(want);
}

/* [5, 7] along dim 1. */
static void check_flip(td_dtype dt)
{
    const int es = esize(dt);
    const int64_t s[2] = { 5, 7 }, axes[1] = { 1 };
    unsigned char *a = NULL, *want = host(dt, 0, 35);
    td_tensor *t = input(dt, 6, s, 2, &a), *r = NULL;
    for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 7; j++)
            put(want, es, i * 7 + j, get(a, es, i * 7 + 6 - j));
    tdt_check(td_float_flip(t, axes, 1, &r), "flip");
    expect("flip", dt, r, want, 35);
    td_tensor_release(t);
    free(a);
    free(want);
}

/* [3, 5] padded by 1 before and 2 after the last dim with 1.5. */
static void check_pad(td_dtype dt)
{
    const int es = esize(dt);
    const int64_t s[2] = { 3, 5 }, pads[2] = { 1, 2 };
    unsigned char *a = NULL, *want = host(dt, 0, 24);
    td_tensor *t = input(dt, 7, s, 2, &a), *r = NULL;
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 8; j++)
            put(want, es, i * 8 + j, j >= 1 && j < 6 ? get(a, es, i * 5 + j - 1) : bits_of(dt, 1.5));
    tdt_check(td_float_pad(t, pads, 2, 1.5f, &r), "pad");
    expect("pad", dt, r, want, 24);
    td_tensor_release(t);
    free(a);
    free(want);
}

/* a [3, 5]; mask [1, 5] and value [3, 1] broadcast (mask_where); mask [3, 5] (mask_fill, -2). */
static void check_masks(td_dtype dt)
{
    const int es = esize(dt);
    const int64_t s[2] = { 3, 5 }, ms[2] = { 1, 5 }, vs[2] = { 3, 1 };
    const bool mrow[5] = { true, false, true, true, false };
    bool mfull[15];
    for (int i = 0; i < 15; i++)
        mfull[i] = i % 3 != 1;
    unsigned char *a = NULL, *v = NULL, *want = host(dt, 0, 15);
    td_tensor *ta = input(dt, 8, s, 2, &a), *tv = input(dt, 9, vs, 2, &v), *tm = NULL, *tf = NULL, *r = NULL;
    tdt_check(td_bool_from_data(vk, mrow, ms, 2, &tm), "bool_from_data");
    tdt_check(td_bool_from_data(vk, mfull, s, 2, &tf), "bool_from_data");
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 5; j++)
            put(want, es, i * 5 + j, mrow[j] ? get(v, es, i) : get(a, es, i * 5 + j));
    tdt_check(td_float_mask_where(ta, tm, tv, &r), "mask_where");
    expect("mask_where", dt, r, want, 15);
    for (int64_t i = 0; i < 15; i++)
        put(want, es, i, mfull[i] ? bits_of(dt, -2.0) : get(a, es, i));
    tdt_check(td_float_mask_fill(ta, tf, -2.0f, &r), "mask_fill");
    expect("mask_fill", dt, r, want, 15);
    td_tensor_release(ta);
    td_tensor_release(tv);
    td_tensor_release(tm);
    td_tensor_release(tf);
    free(a);
    free(v);
    free(want);
}

/* gather along dim 1 of [3, 5] by [3, 4] indices; select rows {2, 0, 2}; scatter_assign of
 * [3, 2] values along dim 1. */
static void check_indexing(td_dtype dt)
{
    const int es = esize(dt);
    const int64_t s[2] = { 3, 5 }, gs[2] = { 3, 4 }, ss[1] = { 3 }, vs[2] = { 3, 2 };
    const int32_t gi[12] = { 4, 0, 0, 3, 1, 2, 4, 4, 0, 1, 3, 2 }, si[3] = { 2, 0, 2 }, ci[6] = { 3, 0, 4, 1, 2, 0 };
    unsigned char *a = NULL, *v = NULL, *want = host(dt, 0, 15);
    td_tensor *ta = input(dt, 10, s, 2, &a), *tv = input(dt, 11, vs, 2, &v), *tg = NULL, *ts = NULL, *tc = NULL,
              *r = NULL;
    tdt_check(td_int_from_data(vk, gi, gs, 2, &tg), "int_from_data");
    tdt_check(td_int_from_data(vk, si, ss, 1, &ts), "int_from_data");
    tdt_check(td_int_from_data(vk, ci, vs, 2, &tc), "int_from_data");
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 4; j++)
            put(want, es, i * 4 + j, get(a, es, i * 5 + gi[i * 4 + j]));
    tdt_check(td_float_gather(ta, 1, tg, &r), "gather");
    expect("gather", dt, r, want, 12);
    for (int64_t k = 0; k < 3; k++)
        for (int64_t j = 0; j < 5; j++)
            put(want, es, k * 5 + j, get(a, es, si[k] * 5 + j));
    tdt_check(td_float_select(ta, 0, ts, &r), "select");
    expect("select", dt, r, want, 15);
    memcpy(want, a, 15 * (size_t)es);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 2; j++)
            put(want, es, i * 5 + ci[i * 2 + j], get(v, es, i * 2 + j));
    tdt_check(td_float_scatter_assign(ta, 1, tc, tv, &r), "scatter_assign");
    expect("scatter_assign", dt, r, want, 15);
    td_tensor_release(ta);
    td_tensor_release(tv);
    td_tensor_release(tg);
    td_tensor_release(ts);
    td_tensor_release(tc);
    free(a);
    free(v);
    free(want);
}

static void run_all(td_vulkan_half_storage mode)
{
    tdt_check(td_vulkan_set_half_storage(vk, mode), "set_half_storage");
    static const td_dtype dts[] = { TD_F16, TD_BF16, TD_F64 };
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        const td_dtype dt = dts[k];
        check_transpose(dt, 5, 7); /* odd: half-word writes */
        check_transpose(dt, 4, 6); /* even: whole words */
        check_slice_assign(dt);
        check_cat(dt);
        check_flip(dt);
        check_pad(dt);
        check_masks(dt);
        check_indexing(dt);
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "set_half_storage");
}

static void test_moves_16bit_storage(void **state)
{
    (void)state;
    run_all(TD_VULKAN_HALF_AUTO);
}

static void test_moves_packed(void **state)
{
    (void)state;
    run_all(TD_VULKAN_HALF_PACKED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moves_16bit_storage),
        cmocka_unit_test(test_moves_packed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
