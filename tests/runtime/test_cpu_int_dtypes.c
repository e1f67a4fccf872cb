/* The CPU's int kernels in i64, i8 and u8 (docs/dtypes.md section 7: arithmetic wraps
 * modulo 2^n; host scalars are converted to the dtype modulo 2^n), against values worked
 * out by hand (and checked against PyTorch 1.13 where it defines them: it traps on
 * INT64_MIN / -1, which we define as INT64_MIN). i64 values past 2^31 everywhere, so a
 * kernel that computed in 32 bits fails; u8 wraparound (250 + 10 = 4); i8 wraparound
 * (127 + 1 = -128, -(-128) = -128). float -> i8 / u8 saturation and NaN -> 0 through the
 * casts: tests/runtime/test_dtype.c (test_float_to_int). */
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

static td_device *dev;    /* cpu:0 */
static td_device *ad_dev; /* unused */

#define OK(x) assert_int_equal((x), TD_OK)
#define N_OF(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static td_tensor *make(td_dtype dt, const void *data, int64_t n)
{
    const int64_t shape[1] = { n };
    td_tensor *t = NULL;
    OK(td_int_from_data_dtype(dev, dt, data, shape, 1, &t));
    return t;
}

/* Fails unless t is an int tensor of dtype dt holding the n values of want (dt's C type);
 * releases t. */
static void expect(td_tensor *t, td_dtype dt, const void *want, int64_t n)
{
    assert_non_null(t);
    td_dtype got_dt;
    OK(td_tensor_dtype(t, &got_dt));
    assert_int_equal(got_dt, dt);
    int64_t numel = -1;
    OK(td_tensor_numel(t, &numel));
    assert_int_equal(numel, n);
    const size_t es = td_dtype_size(dt);
    void *got = calloc((size_t)n, es);
    assert_non_null(got);
    OK(td_int_into_data_dtype(t, dt, got, n));
    for (int64_t i = 0; i < n; i++) {
        int64_t g = 0, w = 0;
        switch (dt) {
        case TD_I64: g = ((const int64_t *)got)[i]; w = ((const int64_t *)want)[i]; break;
        case TD_I8: g = ((const int8_t *)got)[i]; w = ((const int8_t *)want)[i]; break;
        case TD_U8: g = ((const uint8_t *)got)[i]; w = ((const uint8_t *)want)[i]; break;
        default: fail_msg("unexpected dtype");
        }
        if (g != w)
            fail_msg("%s element %lld: got %lld, want %lld", td_dtype_name(dt), (long long)i, (long long)g,
                     (long long)w);
    }
    free(got);
    td_tensor_release(t);
}

static void expect_bools(td_tensor *t, const bool *want, int64_t n)
{
    bool got[8];
    assert_true(n <= 8);
    OK(td_bool_into_data(t, got, n));
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(got[i], want[i]);
    td_tensor_release(t);
}

#define P31 ((int64_t)1 << 31)
#define P32 ((int64_t)1 << 32)
#define P40 ((int64_t)1 << 40)

/* i64: +, -, * past 2^31 and wrapping at 2^63; division and remainder past 2^31 with
 * C truncation, torch.remainder's sign, and INT64_MIN / -1 defined. */
static void test_i64_arithmetic(void **state)
{
    (void)state;
    const int64_t a[] = { 3000000000, -5000000000, INT64_MAX };
    const int64_t b[] = { 4000000000, 2, 1 };
    td_tensor *ta = make(TD_I64, a, 3), *tb = make(TD_I64, b, 3), *r = NULL;
    OK(td_int_add(ta, tb, &r));
    expect(r, TD_I64, (const int64_t[]){ 7000000000, -4999999998, INT64_MIN }, 3);
    OK(td_int_sub(ta, tb, &r));
    expect(r, TD_I64, (const int64_t[]){ -1000000000, -5000000002, INT64_MAX - 1 }, 3);
    td_tensor_release(ta);
    td_tensor_release(tb);

    /* 2^32 * 2^32 = 2^64 = 0; (2^62 + 1) * 4 = 2^64 + 4 = 4; (2^63 - 1) * 2 = 2^64 - 2 = -2 */
    const int64_t m[] = { P32, ((int64_t)1 << 62) + 1, 3000000000, -P32, INT64_MAX };
    const int64_t k[] = { P32, 4, 3, 3, 2 };
    ta = make(TD_I64, m, 5);
    tb = make(TD_I64, k, 5);
    OK(td_int_mul(ta, tb, &r));
    expect(r, TD_I64, (const int64_t[]){ 0, 4, 9000000000, -12884901888, -2 }, 5);
    td_tensor_release(ta);
    td_tensor_release(tb);

    /* trunc(-9000000001 / 2) = -4500000000; INT64_MIN / -1 wraps to INT64_MIN */
    const int64_t n[] = { 9000000000, -9000000001, INT64_MIN, 7 };
    const int64_t d[] = { 4, 2, -1, -2 };
    ta = make(TD_I64, n, 4);
    tb = make(TD_I64, d, 4);
    OK(td_int_div(ta, tb, &r));
    expect(r, TD_I64, (const int64_t[]){ 2250000000, -4500000000, INT64_MIN, -3 }, 4);
    td_tensor_release(ta);
    td_tensor_release(tb);

    /* -7000000001 = -3 * 3e9 + 1999999999; 7000000001 = -3 * -3e9 - 1999999999 */
    const int64_t x[] = { -7000000001, 7000000001, -5000000000, INT64_MIN };
    const int64_t y[] = { 3000000000, -3000000000, 5000000000, -1 };
    ta = make(TD_I64, x, 4);
    tb = make(TD_I64, y, 4);
    OK(td_int_remainder(ta, tb, &r));
    expect(r, TD_I64, (const int64_t[]){ 1999999999, -1999999999, 0, 0 }, 4);
    td_tensor_release(tb);

    /* scalars are int32: sign-extended into i64 */
    OK(td_int_div_scalar(ta, -2, &r));
    expect(r, TD_I64, (const int64_t[]){ 3500000000, -3500000000, 2500000000, (int64_t)1 << 62 }, 4);
    OK(td_int_remainder_scalar(ta, 1000000007, &r));
    /* -7000000001 + 7 * 1000000007 = 48; 7000000001 - 6 * 1000000007 = 999999959;
     * -5000000000 + 5 * 1000000007 = 35; -2^63 mod 1000000007 = 708828003 (Python's %) */
    expect(r, TD_I64, (const int64_t[]){ 48, 999999959, 35, 708828003 }, 4);
    OK(td_int_mul_scalar(ta, -1, &r));
    expect(r, TD_I64, (const int64_t[]){ 7000000001, -7000000001, 5000000000, INT64_MIN }, 4);
    OK(td_int_abs(ta, &r));
    expect(r, TD_I64, (const int64_t[]){ 7000000001, 7000000001, 5000000000, INT64_MIN }, 4);
    assert_int_equal(td_int_div_scalar(ta, 0, &r), TD_E_INVALID);
    td_tensor_release(ta);

    /* 3^40 = 12157665459056928801 = 2^64 - 6289078614652622815; shifts past 32 bits */
    const int64_t three[] = { 3 };
    ta = make(TD_I64, three, 1);
    OK(td_int_powi_scalar(ta, 40, &r));
    expect(r, TD_I64, (const int64_t[]){ -6289078614652622815 }, 1);
    OK(td_int_bitwise_left_shift_scalar(ta, 40, &r));
    expect(r, TD_I64, (const int64_t[]){ 3 * P40 }, 1);
    OK(td_int_bitwise_left_shift_scalar(ta, 64, &r));
    expect(r, TD_I64, (const int64_t[]){ 0 }, 1);
    td_tensor_release(ta);
    const int64_t neg[] = { -P40 };
    ta = make(TD_I64, neg, 1);
    OK(td_int_bitwise_right_shift_scalar(ta, 38, &r));
    expect(r, TD_I64, (const int64_t[]){ -4 }, 1);
    td_tensor_release(ta);
}

/* i64 comparisons, masks, reductions and conversions on values whose low 32 bits mislead. */
static void test_i64_compare_reduce(void **state)
{
    (void)state;
    /* 2^32 > 1 (its low 32 bits are 0); 2^31 is positive (as an int32 it is INT32_MIN) */
    const int64_t a[] = { P32, P31, -P32, 5 };
    const int64_t b[] = { 1, 0, -1, 5 };
    td_tensor *ta = make(TD_I64, a, 4), *tb = make(TD_I64, b, 4), *r = NULL;
    OK(td_int_greater(ta, tb, &r));
    expect_bools(r, (const bool[]){ true, true, false, false }, 4);
    OK(td_int_greater_elem(ta, 0, &r));
    expect_bools(r, (const bool[]){ true, true, false, true }, 4);
    OK(td_int_maximum(ta, tb, &r));
    expect(r, TD_I64, (const int64_t[]){ P32, P31, -1, 5 }, 4);

    td_tensor *mask = NULL;
    OK(td_int_lower(ta, tb, &mask));
    OK(td_int_mask_where(ta, mask, tb, &r)); /* -2^32 < -1: takes -1 */
    expect(r, TD_I64, (const int64_t[]){ P32, P31, -1, 5 }, 4);
    OK(td_int_mask_fill(ta, mask, -5, &r));
    expect(r, TD_I64, (const int64_t[]){ P32, P31, -5, 5 }, 4);
    td_tensor_release(mask);

    /* sum past 2^31 and past 2^63 (wraps); cumsum; extremes and their first index */
    const int64_t s[] = { 3000000000, 3000000000, -1000000000, P40 };
    td_tensor *ts = make(TD_I64, s, 4);
    OK(td_int_sum(ts, &r));
    expect(r, TD_I64, (const int64_t[]){ 1104511627776 }, 1);
    OK(td_int_sum_dim(ts, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ 1104511627776 }, 1);
    OK(td_int_cumsum(ts, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ 3000000000, 6000000000, 5000000000, 1104511627776 }, 4);
    OK(td_int_max(ts, &r));
    expect(r, TD_I64, (const int64_t[]){ P40 }, 1);
    OK(td_int_argmin(ts, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ 2 }, 1);
    td_tensor_release(ts);
    const int64_t big[] = { INT64_MAX, 1 };
    ts = make(TD_I64, big, 2);
    OK(td_int_sum(ts, &r));
    expect(r, TD_I64, (const int64_t[]){ INT64_MIN }, 1);
    td_tensor_release(ts);

    /* means whose sums overflow int64: trunc((2^64 - 3) / 2) = 2^63 - 2, trunc(-(2^64 - 1) / 2)
     * = -(2^63 - 1) */
    const int64_t hi[] = { INT64_MAX, INT64_MAX - 1 }, lo[] = { INT64_MIN, INT64_MIN + 1 };
    ts = make(TD_I64, hi, 2);
    OK(td_int_mean(ts, &r));
    expect(r, TD_I64, (const int64_t[]){ INT64_MAX - 1 }, 1);
    OK(td_int_mean_dim(ts, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ INT64_MAX - 1 }, 1);
    td_tensor_release(ts);
    ts = make(TD_I64, lo, 2);
    OK(td_int_mean(ts, &r));
    expect(r, TD_I64, (const int64_t[]){ INT64_MIN + 1 }, 1);
    td_tensor_release(ts);

    /* [1, 2] @ [2, 1]: 2^32 * 2^31 + 3 * 5e9 = 2^63 + 1.5e10, which wraps */
    const int64_t ma[] = { P32, 3 }, mb[] = { P31, 5000000000 };
    const int64_t sa[2] = { 1, 2 }, sb[2] = { 2, 1 };
    td_tensor *xa = NULL, *xb = NULL;
    OK(td_int_from_data_dtype(dev, TD_I64, ma, sa, 2, &xa));
    OK(td_int_from_data_dtype(dev, TD_I64, mb, sb, 2, &xb));
    OK(td_int_matmul(xa, xb, &r));
    expect(r, TD_I64, (const int64_t[]){ INT64_MIN + 15000000000 }, 1);
    td_tensor_release(xa);
    td_tensor_release(xb);

    /* into f32: round to nearest even (2^40 + 1 -> 2^40, 2^24 + 1 -> 2^24) */
    const int64_t f[] = { P40 + 1, 16777217, -P32 };
    td_tensor *tf = make(TD_I64, f, 3), *fl = NULL;
    OK(td_int_into_float(tf, &fl));
    float got[3];
    OK(td_float_into_data(fl, got, 3));
    assert_true(got[0] == 0x1p40f && got[1] == 16777216.0f && got[2] == -0x1p32f);
    td_tensor_release(fl);
    td_tensor_release(tf);
    td_tensor_release(ta);
    td_tensor_release(tb);
}

/* A sum long enough for the threaded path (TD_CPU_PAR_MIN is 32768): 2^16 values of 2^33. */
static void test_i64_long_sum(void **state)
{
    (void)state;
    const int64_t n = (int64_t)1 << 16;
    int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (int64_t)1 << 33;
    td_tensor *t = make(TD_I64, v, n), *r = NULL;
    OK(td_int_sum(t, &r));
    expect(r, TD_I64, (const int64_t[]){ (int64_t)1 << 49 }, 1);
    OK(td_int_prod(t, &r)); /* (2^33)^65536 = 0 modulo 2^64 */
    expect(r, TD_I64, (const int64_t[]){ 0 }, 1);
    td_tensor_release(t);
    free(v);
}

/* u8 wraps modulo 256; comparisons are unsigned; scalars are converted modulo 256. */
static void test_u8(void **state)
{
    (void)state;
    const uint8_t a[] = { 250, 3, 16, 200 }, b[] = { 10, 5, 16, 2 };
    td_tensor *ta = make(TD_U8, a, 4), *tb = make(TD_U8, b, 4), *r = NULL;
    OK(td_int_add(ta, tb, &r));
    expect(r, TD_U8, (const uint8_t[]){ 4, 8, 32, 202 }, 4);
    OK(td_int_sub(ta, tb, &r));
    expect(r, TD_U8, (const uint8_t[]){ 240, 254, 0, 198 }, 4);
    OK(td_int_mul(ta, tb, &r)); /* 2500 = 9 * 256 + 196; 16 * 16 = 256 */
    expect(r, TD_U8, (const uint8_t[]){ 196, 15, 0, 144 }, 4);
    OK(td_int_div(ta, tb, &r));
    expect(r, TD_U8, (const uint8_t[]){ 25, 0, 1, 100 }, 4);
    OK(td_int_remainder_scalar(ta, 7, &r));
    expect(r, TD_U8, (const uint8_t[]){ 5, 3, 2, 4 }, 4);
    OK(td_int_neg(ta, &r));
    expect(r, TD_U8, (const uint8_t[]){ 6, 253, 240, 56 }, 4);
    OK(td_int_add_scalar(ta, 10, &r));
    expect(r, TD_U8, (const uint8_t[]){ 4, 13, 26, 210 }, 4);
    OK(td_int_add_scalar(ta, -1, &r)); /* -1 is 255: x + 255 = x - 1 */
    expect(r, TD_U8, (const uint8_t[]){ 249, 2, 15, 199 }, 4);
    OK(td_int_greater(ta, tb, &r)); /* 200 > 2: unsigned (as i8, -56 < 2) */
    expect_bools(r, (const bool[]){ true, false, false, true }, 4);
    OK(td_int_greater_elem(ta, -1, &r)); /* -1 is 255: nothing is greater */
    expect_bools(r, (const bool[]){ false, false, false, false }, 4);
    OK(td_int_clamp_min(ta, -5, &r)); /* -5 is 251, as torch.clamp(u8, min=-5) */
    expect(r, TD_U8, (const uint8_t[]){ 251, 251, 251, 251 }, 4);
    OK(td_int_sum(ta, &r)); /* 469 = 256 + 213: the sum in u8, wrapped */
    expect(r, TD_U8, (const uint8_t[]){ 213 }, 1);
    OK(td_int_cumsum(ta, 0, &r));
    expect(r, TD_U8, (const uint8_t[]){ 250, 253, 13, 213 }, 4);
    td_tensor *mask = NULL;
    OK(td_int_lower(ta, tb, &mask));
    OK(td_int_mask_fill(ta, mask, 300, &r)); /* 300 is 44 */
    expect(r, TD_U8, (const uint8_t[]){ 250, 44, 16, 200 }, 4);
    td_tensor_release(mask);
    td_tensor *fl = NULL;
    OK(td_int_into_float(ta, &fl));
    float got[4];
    OK(td_float_into_data(fl, got, 4));
    assert_true(got[0] == 250.0f && got[3] == 200.0f);
    td_tensor_release(fl);
    td_tensor_release(ta);
    td_tensor_release(tb);
}

/* i8 wraps modulo 256 in two's complement: 127 + 1 = -128, -(-128) = |-128| = -128,
 * -128 / -1 = -128. */
static void test_i8(void **state)
{
    (void)state;
    const int8_t a[] = { 127, -128, 64, -7, 100 }, b[] = { 1, -1, 2, 2, 100 };
    td_tensor *ta = make(TD_I8, a, 5), *tb = make(TD_I8, b, 5), *r = NULL;
    OK(td_int_add(ta, tb, &r));
    expect(r, TD_I8, (const int8_t[]){ -128, 127, 66, -5, -56 }, 5);
    OK(td_int_sub(ta, tb, &r));
    expect(r, TD_I8, (const int8_t[]){ 126, -127, 62, -9, 0 }, 5);
    OK(td_int_mul(ta, tb, &r)); /* 64 * 2 = 128 = -128; 100 * 100 = 10000 = 39 * 256 + 16 */
    expect(r, TD_I8, (const int8_t[]){ 127, -128, -128, -14, 16 }, 5);
    OK(td_int_div(ta, tb, &r));
    expect(r, TD_I8, (const int8_t[]){ 127, -128, 32, -3, 1 }, 5);
    OK(td_int_remainder(ta, tb, &r));
    expect(r, TD_I8, (const int8_t[]){ 0, 0, 0, 1, 0 }, 5);
    OK(td_int_neg(ta, &r));
    expect(r, TD_I8, (const int8_t[]){ -127, -128, -64, 7, -100 }, 5);
    OK(td_int_abs(ta, &r));
    expect(r, TD_I8, (const int8_t[]){ 127, -128, 64, 7, 100 }, 5);
    OK(td_int_lower(ta, tb, &r)); /* signed */
    expect_bools(r, (const bool[]){ false, true, false, true, false }, 5);
    OK(td_int_sum(ta, &r)); /* 156 = -100 modulo 256 */
    expect(r, TD_I8, (const int8_t[]){ -100 }, 1);
    OK(td_int_mean(ta, &r)); /* trunc(156 / 5) = 31: the mean does not wrap */
    expect(r, TD_I8, (const int8_t[]){ 31 }, 1);
    OK(td_int_add_scalar(ta, 129, &r)); /* 129 is -127 */
    expect(r, TD_I8, (const int8_t[]){ 0, 1, -63, 122, -27 }, 5);
    td_tensor_release(ta);
    td_tensor_release(tb);
}

/* Sorts order by value in the dtype (signed i64 / i8, unsigned u8); any / all see every
 * bit (2^32's low 32 bits are 0). */
static void test_sort_any(void **state)
{
    (void)state;
    const int64_t a[] = { P32, -1, P31, -P40 };
    td_tensor *ta = make(TD_I64, a, 4), *r = NULL;
    OK(td_int_sort(ta, 0, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ -P40, -1, P31, P32 }, 4);
    OK(td_int_argsort(ta, 0, 1, &r)); /* descending; indices in the input's dtype */
    expect(r, TD_I64, (const int64_t[]){ 0, 2, 1, 3 }, 4);
    OK(td_int_topk(ta, 2, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ P32, P31 }, 2);
    td_tensor_release(ta);
    const int64_t z[] = { 0, P32 };
    ta = make(TD_I64, z, 2);
    OK(td_int_any(ta, &r));
    expect_bools(r, (const bool[]){ true }, 1);
    OK(td_int_all(ta, &r));
    expect_bools(r, (const bool[]){ false }, 1);
    OK(td_int_any_dim(ta, 0, &r));
    expect_bools(r, (const bool[]){ true }, 1);
    td_tensor_release(ta);
    const uint8_t u[] = { 200, 3, 255 };
    ta = make(TD_U8, u, 3);
    OK(td_int_sort(ta, 0, 0, &r));
    expect(r, TD_U8, (const uint8_t[]){ 3, 200, 255 }, 3);
    td_tensor_release(ta);
    const int8_t i[] = { 127, -128, 0 };
    ta = make(TD_I8, i, 3);
    OK(td_int_sort(ta, 0, 0, &r));
    expect(r, TD_I8, (const int8_t[]){ -128, 0, 127 }, 3);
    OK(td_int_all_dim(ta, 0, &r));
    expect_bools(r, (const bool[]){ false }, 1);
    td_tensor_release(ta);
}

/* Indices of the data's dtype (the mixing rule): read as i64 / u8, checked in range as
 * such (2^32 is out of range; read as an int32 it would be 0). */
static void test_indices(void **state)
{
    (void)state;
    const int64_t a[] = { P40, -P32, 7 };
    td_tensor *ta = make(TD_I64, a, 3), *r = NULL;
    const int64_t ix[] = { 2, 0, 1, 0 };
    td_tensor *ti = make(TD_I64, ix, 4);
    OK(td_int_gather(ta, 0, ti, &r));
    expect(r, TD_I64, (const int64_t[]){ 7, P40, -P32, P40 }, 4);
    OK(td_int_select(ta, 0, ti, &r));
    expect(r, TD_I64, (const int64_t[]){ 7, P40, -P32, P40 }, 4);
    const int64_t vals[] = { P32, P32, P32, P32 };
    td_tensor *tv = make(TD_I64, vals, 4);
    OK(td_int_scatter_add(ta, 0, ti, tv, &r)); /* index 0 twice */
    expect(r, TD_I64, (const int64_t[]){ P40 + 2 * P32, 0, 7 + P32 }, 3);
    OK(td_int_one_hot(ti, 3, &r));
    expect(r, TD_I64, (const int64_t[]){ 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0 }, 12);
    td_tensor_release(ti);
    td_tensor_release(tv);
    const int64_t far[] = { P32 };
    ti = make(TD_I64, far, 1);
    assert_int_equal(td_int_gather(ta, 0, ti, &r), TD_E_RANGE);
    assert_string_equal(td_last_error(),
                        "int_gather: index 4294967296 (element 0 of indices) is out of range for dim 0 of size 3");
    td_tensor_release(ti);
    td_tensor_release(ta);

    const uint8_t u[] = { 10, 20, 250 }, ui[] = { 2, 2 };
    td_tensor *tu = make(TD_U8, u, 3), *tui = make(TD_U8, ui, 2);
    OK(td_int_select(tu, 0, tui, &r));
    expect(r, TD_U8, (const uint8_t[]){ 250, 250 }, 2);
    /* a float op's indices stay i32: u8 ones are read as u8 to check them, then refused */
    const float f[] = { 1.0f, 2.0f, 3.0f };
    const int64_t s3[1] = { 3 };
    td_tensor *tf = NULL;
    OK(td_float_from_data(dev, f, s3, 1, &tf));
    assert_int_equal(td_float_select(tf, 0, tui, &r), TD_E_UNSUPPORTED);
    td_tensor_release(tf);
    td_tensor_release(tu);
    td_tensor_release(tui);
}

/* Moves copy element bytes of every int dtype; mixing int dtypes is TD_E_DTYPE. */
static void test_moves_and_mixing(void **state)
{
    (void)state;
    const int64_t a[] = { P40 + 1, -P32, 7 };
    td_tensor *ta = make(TD_I64, a, 3), *r = NULL;
    const int64_t axes[1] = { 0 };
    OK(td_int_flip(ta, axes, 1, &r));
    expect(r, TD_I64, (const int64_t[]){ 7, -P32, P40 + 1 }, 3);
    const td_tensor *xs[2] = { ta, ta };
    OK(td_int_cat(xs, 2, 0, &r));
    expect(r, TD_I64, (const int64_t[]){ P40 + 1, -P32, 7, P40 + 1, -P32, 7 }, 6);
    const uint8_t u[] = { 1, 2 };
    td_tensor *tu = make(TD_U8, u, 2);
    OK(td_int_repeat_dim(tu, 0, 2, &r));
    expect(r, TD_U8, (const uint8_t[]){ 1, 2, 1, 2 }, 4);
    assert_int_equal(td_int_add(ta, tu, &r), TD_E_DTYPE);
    assert_null(r);
    td_tensor_release(ta);
    td_tensor_release(tu);
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad_dev, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_i64_arithmetic),  TDT_TEST(test_i64_compare_reduce), TDT_TEST(test_i64_long_sum),
        TDT_TEST(test_u8),              TDT_TEST(test_i8),                 TDT_TEST(test_sort_any),
        TDT_TEST(test_indices),            TDT_TEST(test_moves_and_mixing),
    };
    return cmocka_run_group_tests_name("cpu_int_dtypes", tests, setup, teardown);
}
