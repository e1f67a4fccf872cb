/* The int ops of issue 10 on the CPU backend, against plain reference loops written here
 * (int64 arithmetic reduced modulo 2^32): inputs with the int32 extremes, shapes large
 * enough for the threaded paths, every dim of a 3-d reduction, broadcasting, shifts and
 * exponents outside their usual ranges; the error statuses (zero divisors, empty random
 * ranges); and int_random's documented generator, range and spread. */
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
static td_device *ad_dev; /* autodiff(cpu:0), opened by the helpers; unused */

/* Deterministic test inputs: xorshift64*, with the extremes and small values mixed in. */
static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static int32_t any_int(void)
{
    const uint64_t r = rng();
    switch (r % 8) {
    case 0: return INT32_MIN;
    case 1: return INT32_MAX;
    case 2: return (int32_t)(r >> 40) % 5 - 2; /* -2 .. 2 */
    default: return (int32_t)(uint32_t)(r >> 32);
    }
}

static int32_t *ints(int64_t n, int32_t (*gen)(void))
{
    int32_t *p = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = gen();
    return p;
}

/* int64 -> int32 modulo 2^32. */
static int32_t wrap(int64_t x)
{
    return (int32_t)(uint32_t)(uint64_t)x;
}

static td_tensor *make(const int32_t *data, const int64_t *shape, int ndim)
{
    td_tensor *t = tdt_make(dev, TD_I32, data, shape, ndim);
    assert_non_null(t);
    return t;
}

static void expect_ints(td_tensor *t, const int32_t *want, int64_t n)
{
    int64_t got_n = 0;
    int32_t *got = tdt_read(t, &got_n);
    assert_non_null(got);
    assert_int_equal(got_n, n);
    for (int64_t i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            print_error("element %lld: got %ld, want %ld\n", (long long)i, (long)got[i], (long)want[i]);
            free(got);
            fail();
        }
    }
    free(got);
}

static void expect_bools(td_tensor *t, const bool *want, int64_t n)
{
    int64_t got_n = 0;
    bool *got = tdt_read(t, &got_n);
    assert_non_null(got);
    assert_int_equal(got_n, n);
    for (int64_t i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            print_error("element %lld: got %d, want %d\n", (long long)i, got[i], want[i]);
            free(got);
            fail();
        }
    }
    free(got);
}

/* ---- references ---- */

static int32_t ref_pow(int32_t x, int32_t e)
{
    if (e < 0)
        return x == 1 ? 1 : x == -1 ? ((e % 2) ? -1 : 1) : 0;
    int64_t acc = 1;
    for (int32_t k = 0; k < e; k++) /* the tests keep e below 70 */
        acc = (int64_t)wrap(acc * (int64_t)x);
    return (int32_t)acc;
}

static int32_t ref_shl(int32_t x, int32_t s)
{
    if (s < 0 || s >= 32)
        return 0;
    int64_t v = x;
    for (int k = 0; k < s; k++)
        v = (int64_t)wrap(v * 2);
    return (int32_t)v;
}

static int32_t ref_shr(int32_t x, int32_t s)
{
    if (s < 0 || s >= 32)
        s = 31;
    int64_t v = x, d = (int64_t)1 << s;
    return (int32_t)(v >= 0 ? v / d : -((-v + d - 1) / d)); /* floor(v / 2^s) */
}

/* ---- elementwise, large and broadcasting ---- */

static int32_t small_exponent(void)
{
    return (int32_t)(rng() % 80) - 10; /* -10 .. 69: negative, past 32 and ordinary */
}

static int32_t shift_amount(void)
{
    return (int32_t)(rng() % 90) - 20; /* -20 .. 69 */
}

static void test_elementwise_against_references(void **state)
{
    (void)state;
    rng_state = 0x1234567ull;
    const int64_t n = 70001; /* above the threading threshold */
    int32_t *a = ints(n, any_int), *e = ints(n, small_exponent), *s = ints(n, shift_amount), *b = ints(n, any_int);
    int32_t *want = malloc(sizeof(int32_t) * (size_t)n);
    bool *wantb = malloc(sizeof(bool) * (size_t)n);
    assert_non_null(want);
    assert_non_null(wantb);
    td_tensor *ta = make(a, &n, 1), *te = make(e, &n, 1), *ts = make(s, &n, 1), *tb = make(b, &n, 1), *r = NULL;

    for (int64_t i = 0; i < n; i++)
        want[i] = ref_pow(a[i], e[i]);
    tdt_check(td_int_powi(ta, te, &r), "int_powi");
    expect_ints(r, want, n);
    td_tensor_release(r);

    for (int64_t i = 0; i < n; i++)
        want[i] = ref_shl(a[i], s[i]);
    tdt_check(td_int_bitwise_left_shift(ta, ts, &r), "int_bitwise_left_shift");
    expect_ints(r, want, n);
    td_tensor_release(r);

    for (int64_t i = 0; i < n; i++)
        want[i] = ref_shr(a[i], s[i]);
    tdt_check(td_int_bitwise_right_shift(ta, ts, &r), "int_bitwise_right_shift");
    expect_ints(r, want, n);
    td_tensor_release(r);

    for (int32_t sh = -3; sh <= 35; sh += 19) {
        for (int64_t i = 0; i < n; i++)
            want[i] = ref_shr(a[i], sh);
        tdt_check(td_int_bitwise_right_shift_scalar(ta, sh, &r), "int_bitwise_right_shift_scalar");
        expect_ints(r, want, n);
        td_tensor_release(r);
        for (int64_t i = 0; i < n; i++)
            want[i] = ref_shl(a[i], sh);
        tdt_check(td_int_bitwise_left_shift_scalar(ta, sh, &r), "int_bitwise_left_shift_scalar");
        expect_ints(r, want, n);
        td_tensor_release(r);
    }

    for (int32_t p = -2; p <= 40; p += 7) {
        for (int64_t i = 0; i < n; i++)
            want[i] = ref_pow(a[i], p);
        tdt_check(td_int_powi_scalar(ta, p, &r), "int_powi_scalar");
        expect_ints(r, want, n);
        td_tensor_release(r);
    }

    for (int64_t i = 0; i < n; i++)
        want[i] = a[i] < 0 ? wrap(-(int64_t)a[i]) : a[i];
    tdt_check(td_int_abs(ta, &r), "int_abs");
    expect_ints(r, want, n);
    td_tensor_release(r);

    for (int64_t i = 0; i < n; i++)
        want[i] = wrap(-(int64_t)a[i] - 1);
    tdt_check(td_int_bitwise_not(ta, &r), "int_bitwise_not");
    expect_ints(r, want, n);
    td_tensor_release(r);

    const int32_t scalars[] = { INT32_MIN, -7, -1, 1, 3, INT32_MAX };
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
        const int32_t v = scalars[k];
        for (int64_t i = 0; i < n; i++)
            want[i] = wrap((int64_t)a[i] * v);
        tdt_check(td_int_mul_scalar(ta, v, &r), "int_mul_scalar");
        expect_ints(r, want, n);
        td_tensor_release(r);
        for (int64_t i = 0; i < n; i++)
            want[i] = wrap((int64_t)a[i] / v); /* int64 division truncates; INT32_MIN / -1 wraps */
        tdt_check(td_int_div_scalar(ta, v, &r), "int_div_scalar");
        expect_ints(r, want, n);
        td_tensor_release(r);
        for (int64_t i = 0; i < n; i++) {
            const int64_t m = (int64_t)a[i] % v;
            want[i] = (int32_t)((m != 0 && ((m < 0) != (v < 0))) ? m + v : m);
        }
        tdt_check(td_int_remainder_scalar(ta, v, &r), "int_remainder_scalar");
        expect_ints(r, want, n);
        td_tensor_release(r);
        for (int64_t i = 0; i < n; i++)
            wantb[i] = a[i] >= v;
        tdt_check(td_int_greater_equal_elem(ta, v, &r), "int_greater_equal_elem");
        expect_bools(r, wantb, n);
        td_tensor_release(r);
        for (int64_t i = 0; i < n; i++) { /* min(max(x, -5), v): v < -5 gives v */
            const int32_t y = a[i] < -5 ? -5 : a[i];
            want[i] = y > v ? v : y;
        }
        tdt_check(td_int_clamp(ta, -5, v, &r), "int_clamp");
        expect_ints(r, want, n);
        td_tensor_release(r);
    }

    for (int64_t i = 0; i < n; i++)
        want[i] = a[i] > b[i] ? a[i] : b[i];
    tdt_check(td_int_maximum(ta, tb, &r), "int_maximum");
    expect_ints(r, want, n);
    td_tensor_release(r);

    td_tensor_release(ta);
    td_tensor_release(te);
    td_tensor_release(ts);
    td_tensor_release(tb);
    free(a);
    free(e);
    free(s);
    free(b);
    free(want);
    free(wantb);
}

static void test_broadcast_rows(void **state)
{
    (void)state;
    rng_state = 99;
    const int64_t sa[] = { 3, 1, 257 }, sb[] = { 5, 1 }, so[] = { 3, 5, 257 };
    int32_t *a = ints(3 * 257, any_int), *b = ints(5, shift_amount);
    int32_t want[3 * 5 * 257];
    td_tensor *ta = make(a, sa, 3), *tb = make(b, sb, 2), *r = NULL;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 257; k++)
                want[(i * 5 + j) * 257 + k] = ref_shl(a[i * 257 + k], b[j]);
    tdt_check(td_int_bitwise_left_shift(ta, tb, &r), "int_bitwise_left_shift");
    tdt_expect(r, TD_I32, so, 3, want, 3 * 5 * 257, 0);
    td_tensor_release(r);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            for (int k = 0; k < 257; k++)
                want[(i * 5 + j) * 257 + k] = a[i * 257 + k] ^ b[j];
    tdt_check(td_int_bitwise_xor(ta, tb, &r), "int_bitwise_xor");
    tdt_expect(r, TD_I32, so, 3, want, 3 * 5 * 257, 0);
    td_tensor_release(r);
    td_tensor_release(ta);
    td_tensor_release(tb);
    free(a);
    free(b);
}

/* ---- reductions: every dim of a 3-d tensor, and whole tensors ---- */

static void test_reductions_against_references(void **state)
{
    (void)state;
    rng_state = 4242;
    const int64_t shape[] = { 7, 129, 75 }; /* 67725 elements: threaded */
    const int64_t n = 7 * 129 * 75;
    int32_t *a = ints(n, any_int);
    td_tensor *ta = make(a, shape, 3), *r = NULL;
    int32_t *want = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(want);
    for (int dim = 0; dim < 3; dim++) {
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < dim; d++)
            outer *= shape[d];
        for (int d = dim + 1; d < 3; d++)
            inner *= shape[d];
        const int64_t size = shape[dim];
        for (int kind = 0; kind < 7; kind++) {
            for (int64_t o = 0; o < outer; o++) {
                for (int64_t j = 0; j < inner; j++) {
                    int64_t sum = 0;
                    uint32_t prod = 1u;
                    int32_t mx = INT32_MIN, mn = INT32_MAX, amx = 0, amn = 0;
                    for (int64_t k = 0; k < size; k++) {
                        const int32_t v = a[(o * size + k) * inner + j];
                        sum += v;
                        prod *= (uint32_t)v;
                        if (k == 0 || v > mx) { /* ties keep the first */
                            amx = (int32_t)k;
                            mx = v;
                        }
                        if (k == 0 || v < mn) {
                            amn = (int32_t)k;
                            mn = v;
                        }
                    }
                    const int32_t vals[7] = { wrap(sum), (int32_t)prod, (int32_t)(sum / size), mx, mn, amx, amn };
                    want[o * inner + j] = vals[kind];
                }
            }
            static const char *const names[7] = { "int_sum_dim", "int_prod_dim", "int_mean_dim", "int_max_dim",
                                                   "int_min_dim", "int_argmax", "int_argmin" };
            td_status st;
            switch (kind) {
            case 0: st = td_int_sum_dim(ta, dim, &r); break;
            case 1: st = td_int_prod_dim(ta, dim, &r); break;
            case 2: st = td_int_mean_dim(ta, dim, &r); break;
            case 3: st = td_int_max_dim(ta, dim, &r); break;
            case 4: st = td_int_min_dim(ta, dim, &r); break;
            case 5: st = td_int_argmax(ta, dim, &r); break;
            default: st = td_int_argmin(ta, dim, &r); break;
            }
            tdt_check(st, names[kind]);
            int64_t oshape[3] = { shape[0], shape[1], shape[2] };
            oshape[dim] = 1;
            tdt_expect(r, TD_I32, oshape, 3, want, outer * inner, 0);
            td_tensor_release(r);
        }
    }
    int64_t sum = 0;
    uint32_t prod = 1u;
    int32_t mx = INT32_MIN, mn = INT32_MAX;
    for (int64_t i = 0; i < n; i++) {
        sum += a[i];
        prod *= (uint32_t)a[i];
        mx = a[i] > mx ? a[i] : mx;
        mn = a[i] < mn ? a[i] : mn;
    }
    const int32_t whole[4] = { (int32_t)(sum / n), (int32_t)prod, mx, mn };
    for (int kind = 0; kind < 4; kind++) {
        td_status st = kind == 0   ? td_int_mean(ta, &r)
                       : kind == 1 ? td_int_prod(ta, &r)
                       : kind == 2 ? td_int_max(ta, &r)
                                   : td_int_min(ta, &r);
        tdt_check(st, "whole-tensor int reduction");
        tdt_expect(r, TD_I32, NULL, 0, &whole[kind], 1, 0);
        td_tensor_release(r);
    }
    td_tensor_release(ta);
    free(a);
    free(want);
}

/* A mean whose int32 sum would wrap many times: 100000 copies of INT32_MAX and one of 7. */
static void test_mean_never_overflows(void **state)
{
    (void)state;
    const int64_t n = 100001;
    int32_t *a = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(a);
    for (int64_t i = 0; i < n; i++)
        a[i] = i == 0 ? 7 : INT32_MAX;
    /* (100000 * (2^31 - 1) + 7) / 100001 = 2147462173.5... -> 2147462173 */
    const int64_t exact = (100000 * (int64_t)INT32_MAX + 7) / n;
    const int32_t want = (int32_t)exact;
    td_tensor *ta = make(a, &n, 1), *r = NULL;
    tdt_check(td_int_mean(ta, &r), "int_mean");
    tdt_expect(r, TD_I32, NULL, 0, &want, 1, 0);
    td_tensor_release(r);
    const int64_t one = 1;
    tdt_check(td_int_mean_dim(ta, 0, &r), "int_mean_dim");
    tdt_expect(r, TD_I32, &one, 1, &want, 1, 0);
    td_tensor_release(r);
    td_tensor_release(ta);
    free(a);
}

/* ---- matmul ---- */

static void test_matmul_against_reference(void **state)
{
    (void)state;
    rng_state = 777;
    const int64_t sa[] = { 2, 1, 33, 70 }, sb[] = { 3, 70, 65 }, so[] = { 2, 3, 33, 65 };
    int32_t *a = ints(2 * 33 * 70, any_int), *b = ints(3 * 70 * 65, any_int);
    int32_t *want = malloc(sizeof(int32_t) * 2 * 3 * 33 * 65);
    assert_non_null(want);
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 3; q++)
            for (int i = 0; i < 33; i++)
                for (int j = 0; j < 65; j++) {
                    uint32_t acc = 0;
                    for (int k = 0; k < 70; k++)
                        acc += (uint32_t)a[(p * 33 + i) * 70 + k] * (uint32_t)b[(q * 70 + k) * 65 + j];
                    want[((p * 3 + q) * 33 + i) * 65 + j] = (int32_t)acc;
                }
    td_tensor *ta = make(a, sa, 4), *tb = make(b, sb, 3), *r = NULL;
    tdt_check(td_int_matmul(ta, tb, &r), "int_matmul");
    tdt_expect(r, TD_I32, so, 4, want, 2 * 3 * 33 * 65, 0);
    td_tensor_release(r);
    td_tensor_release(ta);
    td_tensor_release(tb);
    free(a);
    free(b);
    free(want);
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    (void)state;
    const int32_t a[] = { 1, 2, 3 };
    const int64_t n = 3;
    td_tensor *ta = make(a, &n, 1), *r = NULL;
    tdt_expect_error(td_int_div_scalar(ta, 0, &r), TD_E_INVALID, "int_div_scalar");
    assert_null(r);
    tdt_expect_error(td_int_remainder_scalar(ta, 0, &r), TD_E_INVALID, "int_remainder_scalar");
    assert_null(r);
    tdt_expect_error(td_int_max_dim(ta, 1, &r), TD_E_RANGE, "int_max_dim");
    tdt_expect_error(td_int_mean_dim(ta, -2, &r), TD_E_RANGE, "int_mean_dim");
    const int64_t shape[] = { 4 };
    tdt_expect_error(td_int_random(dev, shape, 1, 5, 5, 1, &r), TD_E_INVALID, "int_random");
    tdt_expect_error(td_int_random(dev, shape, 1, 6, 5, 1, &r), TD_E_INVALID, "int_random");
    assert_null(r);
    td_tensor_release(ta);
}

/* ---- random ---- */

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void test_random_follows_the_documented_generator(void **state)
{
    (void)state;
    const int32_t ranges[][2] = { { 0, 10 }, { -5, 5 }, { INT32_MIN, INT32_MAX }, { 1000, 1001 }, { -3, 1 << 30 } };
    const int64_t n = 70000;
    int32_t *want = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(want);
    for (size_t c = 0; c < sizeof ranges / sizeof ranges[0]; c++) {
        const int32_t lo = ranges[c][0], hi = ranges[c][1];
        const uint64_t seed = 12345 + c;
        const uint64_t span = (uint64_t)((int64_t)hi - lo);
        for (int64_t i = 0; i < n; i++) {
            const uint64_t h = mix(seed ^ mix(2u * (uint64_t)i));
            want[i] = (int32_t)(lo + (int64_t)(((h >> 32) * span) >> 32));
            assert_true(want[i] >= lo && want[i] < hi);
        }
        td_tensor *r = NULL;
        tdt_check(td_int_random(dev, &n, 1, lo, hi, seed, &r), "int_random");
        expect_ints(r, want, n);
        td_tensor_release(r);
    }
    free(want);
}

/* [0, 10): 100000 draws, 10000 expected per value, standard error about 95. */
static void test_random_spread(void **state)
{
    (void)state;
    const int64_t n = 100000;
    td_tensor *r = NULL;
    tdt_check(td_int_random(dev, &n, 1, 0, 10, 7, &r), "int_random");
    int64_t got_n = 0;
    int32_t *v = tdt_read(r, &got_n);
    assert_non_null(v);
    int64_t bins[10] = { 0 };
    for (int64_t i = 0; i < got_n; i++) {
        assert_true(v[i] >= 0 && v[i] < 10);
        bins[v[i]]++;
    }
    for (int b = 0; b < 10; b++)
        assert_true(bins[b] > 9500 && bins[b] < 10500);
    free(v);
    td_tensor_release(r);
}

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad_dev, NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_elementwise_against_references),
        TDT_TEST(test_broadcast_rows),
        TDT_TEST(test_reductions_against_references),
        TDT_TEST(test_mean_never_overflows),
        TDT_TEST(test_matmul_against_reference),
        TDT_TEST(test_errors),
        TDT_TEST(test_random_follows_the_documented_generator),
        TDT_TEST(test_random_spread),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
