/* The Vulkan conv / pool / scan kernels in f16, bf16 and f64 (conv.comp, pool.comp and scan.comp
 * built with TD_HALF and TD_F64, shaders/xload.glsl) on the paths the generated per-dtype
 * comparisons (test_dtypes_vulkan, small shapes) do not reach: a convolution whose reduction
 * (4800 terms) takes two dispatches and scans of 5000 rows (two ranges, the carry read back
 * from the f32 scratch, or the cumprod's (m, e) carry). Inputs are multiples of 2^-4, so
 * every product and partial sum is exact in f32 (and double): the f16 / bf16 result must be
 * that exact value rounded once (within half an ulp of the dtype, by the hand computation
 * here), f64 must equal it bit for bit. And sort / argsort / topk of f16 / bf16 lines of 1000
 * (four merge passes) with ties and NaNs against a stable sort written here. Both 16-bit
 * storage forms; the dispatch count shows the ops run natively (no conversions of the operands
 * to f32 before them). */
#include <math.h>
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

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* A multiple of 2^-4 in [-2, 2]: exact in f16 and bf16. */
static float sixteenth(void)
{
    return (float)((int)(next32() % 65u) - 32) / 16.0f;
}

static td_dtype dtype_of(const td_tensor *t)
{
    td_dtype d = TD_F32;
    tdt_check(td_tensor_dtype(t, &d), "tensor_dtype");
    return d;
}

/* A tensor of dt on the device holding v (values exact in dt): f64 written as is, f16 / bf16 cast
 * on the device from f32. */
static td_tensor *make(td_dtype dt, const double *v, const int64_t *shape, int ndim, int64_t n)
{
    td_tensor *t = NULL, *c = NULL;
    if (dt == TD_F64) {
        tdt_check(td_float_from_data_dtype(vk, TD_F64, v, shape, ndim, &t), "from_data");
        return t;
    }
    float *f = malloc((size_t)n * sizeof *f);
    assert_non_null(f);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    tdt_check(td_float_from_data(vk, f, shape, ndim, &t), "from_data");
    free(f);
    tdt_check(td_float_cast(t, dt, &c), "cast");
    td_tensor_release(t);
    return c;
}

/* The n elements of r (f16 / bf16 read through f32, f64 as is) into got. */
static void read_all(const td_tensor *r, double *got, int64_t n)
{
    if (dtype_of(r) == TD_F64) {
        tdt_check(td_float_into_data_dtype(r, TD_F64, got, n), "read");
        return;
    }
    td_tensor *c = NULL;
    tdt_check(td_float_cast(r, TD_F32, &c), "cast");
    float *f = malloc((size_t)n * sizeof *f);
    assert_non_null(f);
    tdt_check(td_float_into_data_dtype(c, TD_F32, f, n), "read");
    for (int64_t i = 0; i < n; i++)
        got[i] = f[i];
    free(f);
    td_tensor_release(c);
}

/* A device without shaderFloat64 refuses f64, naming the feature: true then (the case is done). */
static bool refused_f64(td_dtype dt, td_status st)
{
    if (dt != TD_F64 || st != TD_E_UNSUPPORTED)
        return false;
    assert_non_null(strstr(td_last_error(), "shaderFloat64"));
    return true;
}

static long dispatches(void)
{
    long n = 0;
    tdt_check(td_vulkan_stats(vk, NULL, &n), "stats");
    return n;
}

/* The exact value v rounded once to dt (f16, bf16) must be got: |got - v| at most half an ulp of
 * dt at v (mant: its stored mantissa bits; emin: its least normal exponent), or an infinity
 * where v lies past the largest finite value (maxf) by half an ulp or more. */
static void expect_rounded(td_dtype dt, double got, double v, const char *what, int64_t at)
{
    const int mant = dt == TD_F16 ? 10 : 7, emin = dt == TD_F16 ? -14 : -126;
    const double maxf = dt == TD_F16 ? 65504.0 : ldexp(255.0 / 128.0, 127);
    int e = 0;
    (void)frexp(v, &e); /* |v| in [2^(e-1), 2^e) */
    const int ex = e - 1 < emin ? emin : e - 1;
    const double half_ulp = ldexp(1.0, ex - mant - 1);
    if (fabs(v) >= maxf + half_ulp) {
        if (!(isinf(got) && (got > 0) == (v > 0)))
            fail_msg("%s [%lld]: got %.9g, exact %.17g (past the largest %s)", what, (long long)at, got, v,
                     dt == TD_F16 ? "f16" : "bf16");
        return;
    }
    if (!(fabs(got - v) <= half_ulp))
        fail_msg("%s [%lld]: got %.9g, exact %.17g (half an ulp: %.3g)", what, (long long)at, got, v, half_ulp);
}

/* float_conv2d of x [2, 300, 3, 3] with weight [2, 300, 4, 4], padding 1: 300 x 16 = 4800 terms
 * per output, two dispatches of at most 4096 summed in f32 into the scratch, then one rounding. */
static void conv_case(td_dtype dt)
{
    const int64_t xs[4] = { 2, 300, 3, 3 }, ws[4] = { 2, 300, 4, 4 }, bs[1] = { 2 };
    enum { NX = 2 * 300 * 9, NW = 2 * 300 * 16, OH = 2, NO = 2 * 2 * OH * OH };
    static double x[NX], w[NW], want[NO], got[NO];
    double bias[2];
    for (int i = 0; i < NX; i++)
        x[i] = sixteenth();
    for (int i = 0; i < NW; i++)
        w[i] = sixteenth();
    bias[0] = 0.5;
    bias[1] = -0.25;
    for (int n = 0; n < 2; n++)
        for (int o = 0; o < 2; o++)
            for (int y = 0; y < OH; y++)
                for (int xx = 0; xx < OH; xx++) {
                    double s = bias[o]; /* exact: multiples of 2^-8 below 2^14 */
                    for (int c = 0; c < 300; c++)
                        for (int ka = 0; ka < 4; ka++)
                            for (int kb = 0; kb < 4; kb++) {
                                const int ih = y - 1 + ka, iw = xx - 1 + kb;
                                if (ih >= 0 && ih < 3 && iw >= 0 && iw < 3)
                                    s += x[((n * 300 + c) * 3 + ih) * 3 + iw] * w[((o * 300 + c) * 4 + ka) * 4 + kb];
                            }
                    want[((n * 2 + o) * OH + y) * OH + xx] = s;
                }
    td_tensor *tx = make(dt, x, xs, 4, NX), *tw = make(dt, w, ws, 4, NW), *tb = make(dt, bias, bs, 1, 2), *r = NULL;
    const int64_t one[2] = { 1, 1 }, pad[2] = { 1, 1 };
    const long d0 = dispatches();
    const td_status st = td_float_conv2d(tx, tw, tb, one, 2, pad, 2, one, 2, 1, &r);
    if (!refused_f64(dt, st)) {
        tdt_check(st, "conv2d");
        /* two conv dispatches, then (f16 / bf16) the rounding of the f32 scratch */
        assert_int_equal(dispatches() - d0, dt == TD_F64 ? 2 : 3);
        assert_int_equal(dtype_of(r), dt);
        read_all(r, got, NO);
    }
    for (int i = 0; r != NULL && i < NO; i++) {
        if (dt == TD_F64) {
            if (memcmp(&got[i], &want[i], 8) != 0)
                fail_msg("conv2d f64 [%d]: got %.17g, exact %.17g", i, got[i], want[i]);
        } else {
            expect_rounded(dt, got[i], want[i], "conv2d", i);
        }
    }
    td_tensor *ts[] = { tx, tw, tb, r };
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        td_tensor_release(ts[i]);
}

/* The scans along 5000 rows of a [2, 5000, 3] tensor (dim 1): two ranges of rows. cumsum of
 * sixteenths (exact partial sums), cummax (exact), cumprod of {2, 1/2, 1, -1} (exact powers of
 * two until the dtype's range ends: overflow to infinity, underflow to zero). */
static void scan_case(td_dtype dt)
{
    enum { S = 5000, N = 2 * S * 3 };
    const int64_t shape[3] = { 2, S, 3 };
    static double in[3][N], want[3][N], got[N];
    static const double factors[4] = { 2.0, 0.5, 1.0, -1.0 };
    for (int i = 0; i < N; i++) {
        in[0][i] = sixteenth();
        in[1][i] = sixteenth();
        in[2][i] = factors[next32() % 4u];
    }
    for (int o = 0; o < 2; o++)
        for (int c = 0; c < 3; c++) {
            double s = 0.0, m = -INFINITY;
            int sign = 1, e = 0;
            for (int k = 0; k < S; k++) {
                const int at = (o * S + k) * 3 + c;
                s += in[0][at];
                m = in[1][at] > m ? in[1][at] : m;
                const double f = in[2][at];
                sign = f < 0 ? -sign : sign;
                e += f == 2.0 ? 1 : f == 0.5 ? -1 : 0;
                want[0][at] = s;
                want[1][at] = m;
                /* f32's range bounds the f16 / bf16 result too: the product is rounded to f32 first */
                const int emax = dt == TD_F64 ? 1023 : 127, emin = dt == TD_F64 ? -1074 : -149;
                want[2][at] = e > emax ? sign * INFINITY : e < emin ? sign * 0.0 : sign * ldexp(1.0, e);
            }
        }
    static const char *const names[3] = { "cumsum", "cummax", "cumprod" };
    for (int op = 0; op < 3; op++) {
        td_tensor *a = make(dt, in[op], shape, 3, N), *r = NULL;
        const long d0 = dispatches();
        const td_status st =
            op == 0 ? td_float_cumsum(a, 1, &r) : op == 1 ? td_float_cummax(a, 1, &r) : td_float_cumprod(a, 1, &r);
        if (refused_f64(dt, st)) {
            td_tensor_release(a);
            return;
        }
        tdt_check(st, names[op]);
        /* two ranges of rows, then (f16 / bf16) the rounding of the f32 scratch */
        assert_int_equal(dispatches() - d0, dt == TD_F64 ? 2 : 3);
        assert_int_equal(dtype_of(r), dt);
        read_all(r, got, N);
        for (int i = 0; i < N; i++) {
            const double v = want[op][i];
            if (dt == TD_F64 || op == 1 || v == 0.0 || isinf(v) || op == 2) {
                /* exact: f64 throughout, maxima, and the powers of two (zero and infinity
                 * where f16 / bf16 cannot hold them) */
                double w = v;
                if (dt == TD_F16 && op == 2)
                    w = fabs(v) > 65504.0 ? copysign(INFINITY, v) : fabs(v) < ldexp(1.0, -24) ? copysign(0.0, v) : v;
                if (dt == TD_BF16 && op == 2 && fabs(v) < ldexp(1.0, -133))
                    w = copysign(0.0, v);
                if (memcmp(&got[i], &w, 8) != 0)
                    fail_msg("%s %s [%d]: got %.17g, exact %.17g", names[op], td_dtype_name(dt), i, got[i], w);
            } else {
                expect_rounded(dt, got[i], v, names[op], i);
            }
        }
        td_tensor_release(a);
        td_tensor_release(r);
    }
}

/* Stable order of line values (NaN largest), descending or not: true when i goes before j. */
static bool goes_before(const double *v, int i, int j, bool desc)
{
    const bool ni = isnan(v[i]), nj = isnan(v[j]);
    if (ni || nj) {
        if (ni && nj)
            return i < j;
        return desc ? ni : nj;
    }
    if (v[i] != v[j])
        return desc ? v[i] > v[j] : v[i] < v[j];
    return i < j;
}

/* float_sort (both ways), float_argsort and float_topk of x [3, 1000] along dim 1: sixteenths
 * (many ties) and NaNs, against an insertion sort here (stable). */
static void sort_case(td_dtype dt)
{
    enum { L = 1000, N = 3 * L, K = 300 };
    const int64_t shape[2] = { 3, L };
    static double x[N], got[N];
    static int order[N];
    for (int i = 0; i < N; i++)
        x[i] = next32() % 50u == 0 ? NAN : sixteenth();
    td_tensor *a = make(dt, x, shape, 2, N);
    for (int desc = 0; desc < 2; desc++) {
        for (int l = 0; l < 3; l++) {
            int *o = order + l * L;
            for (int k = 0; k < L; k++) {
                int at = k;
                while (at > 0 && goes_before(x + l * L, k, o[at - 1], desc != 0)) {
                    o[at] = o[at - 1];
                    at--;
                }
                o[at] = k;
            }
        }
        td_tensor *r = NULL, *ix = NULL, *tk = NULL;
        const long d0 = dispatches();
        tdt_check(td_float_sort(a, 1, desc, &r), "sort");
        /* the ranking pass, merges of 256, 512: two (1000 < 1024), the kept keys, their rounding */
        assert_int_equal(dispatches() - d0, 5);
        assert_int_equal(dtype_of(r), dt);
        tdt_check(td_float_argsort(a, 1, desc, &ix), "argsort");
        read_all(r, got, N);
        int32_t idx[N];
        tdt_check(td_int_into_data(ix, idx, N), "read");
        for (int i = 0; i < N; i++) {
            const int l = i / L, want = order[i];
            const double w = x[l * L + want];
            if (idx[i] != want || !(got[i] == w || (isnan(got[i]) && isnan(w))))
                fail_msg("sort %s desc %d [%d]: got %.9g (index %d), want %.9g (index %d)", td_dtype_name(dt), desc, i,
                         got[i], (int)idx[i], w, want);
        }
        td_tensor_release(r);
        td_tensor_release(ix);
        if (desc) {
            tdt_check(td_float_topk(a, K, 1, &tk), "topk");
            static double top[3 * K];
            read_all(tk, top, 3 * K);
            for (int l = 0; l < 3; l++)
                for (int k = 0; k < K; k++) {
                    const double w = x[l * L + order[l * L + k]], g = top[l * K + k];
                    if (!(g == w || (isnan(g) && isnan(w))))
                        fail_msg("topk %s [%d][%d]: got %.9g, want %.9g", td_dtype_name(dt), l, k, g, w);
                }
            td_tensor_release(tk);
        }
    }
    td_tensor_release(a);
}

static void test_sort_half(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        sort_case(TD_F16);
        sort_case(TD_BF16);
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
}

/* float_prod_dim and float_prod of f16 / bf16 x [2, 9000] of {2, 1/2, 1, -1}: 9000 values a
 * line, so the first pass (the TD_HALF form) makes m * 2^e pairs that a second pass multiplies;
 * the exact power of two (zero or infinity past f32's range, then past the dtype's) against
 * the one here. */
static void prod_case(td_dtype dt)
{
    enum { S = 9000, N = 2 * S };
    const int64_t shape[2] = { 2, S };
    static double x[N];
    static const double factors[4] = { 2.0, 0.5, 1.0, -1.0 };
    double want[3];
    int sign[3] = { 1, 1, 1 }, e[3] = { 0, 0, 0 };
    for (int i = 0; i < N; i++) {
        x[i] = factors[next32() % 4u];
        for (int w = 0; w < 3; w++)
            if (w == i / S || w == 2) {
                sign[w] = x[i] < 0 ? -sign[w] : sign[w];
                e[w] += x[i] == 2.0 ? 1 : x[i] == 0.5 ? -1 : 0;
            }
    }
    const double top = dt == TD_F16 ? 65504.0 : ldexp(255.0 / 128.0, 127);
    const double tiny = dt == TD_F16 ? ldexp(1.0, -24) : ldexp(1.0, -133);
    for (int w = 0; w < 3; w++) {
        const double v = e[w] > 127 ? INFINITY : e[w] < -149 ? 0.0 : ldexp(1.0, e[w]);
        want[w] = sign[w] * (v > top ? INFINITY : v < tiny ? 0.0 : v);
    }
    td_tensor *a = make(dt, x, shape, 2, N), *r = NULL, *all = NULL;
    tdt_check(td_float_prod_dim(a, 1, &r), "prod_dim");
    tdt_check(td_float_prod(a, &all), "prod");
    assert_int_equal(dtype_of(r), dt);
    double got[3];
    read_all(r, got, 2);
    read_all(all, got + 2, 1);
    for (int w = 0; w < 3; w++)
        if (memcmp(&got[w], &want[w], 8) != 0)
            fail_msg("prod %s [%d]: got %.17g, exact %.17g (2^%d)", td_dtype_name(dt), w, got[w], want[w], e[w]);
    td_tensor_release(a);
    td_tensor_release(r);
    td_tensor_release(all);
}

static void test_prod_half(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        for (int round = 0; round < 4; round++) {
            prod_case(TD_F16);
            prod_case(TD_BF16);
        }
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
}

static void test_conv_two_ranges(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        conv_case(TD_F16);
        conv_case(TD_BF16);
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    conv_case(TD_F64);
}

static void test_scans_two_ranges(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        tdt_check(td_vulkan_set_half_storage(vk, pass ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO), "storage");
        scan_case(TD_F16);
        scan_case(TD_BF16);
    }
    tdt_check(td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO), "storage");
    scan_case(TD_F64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_two_ranges),
        cmocka_unit_test(test_scans_two_ranges),
        cmocka_unit_test(test_sort_half),
        cmocka_unit_test(test_prod_half),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
