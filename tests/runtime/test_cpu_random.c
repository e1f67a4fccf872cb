/* float_random on the CPU backend: determinism per seed, the documented counter-based
 * generator, distribution moments, independence of shape and threading, and the autodiff
 * device.
 *
 * Statistical tolerances (N = 100000 samples, fixed seeds, so the tests are deterministic;
 * the bounds are still chosen at >= 5 standard errors so a change of seed would pass too):
 *   uniform [a, b) = [-2, 3):  mean 0.5, se = sqrt(25/12 / N) = 0.0046      -> |mean - 0.5| < 0.03
 *                              var 25/12 = 2.0833, se = sqrt((mu4 - s^4)/N) with mu4 = 5^4/80,
 *                              = 0.0059                                      -> |var - 2.0833| < 0.04
 *                              10 equal bins of 10000 expected, se = 95      -> each within 500
 *                              min/max within 1e-3 * (b - a) of a and b (expected gap 5e-5)
 *   normal (1.5, 2):           mean se = 2 / sqrt(N) = 0.0063                -> |mean - 1.5| < 0.04
 *                              std se = 2 / sqrt(2N) = 0.0045                -> |std - 2| < 0.03
 *                              P(|z| < 1) = 0.6827, se 0.0015                -> within 0.01
 *                              P(|z| < 2) = 0.9545, se 0.0007                -> within 0.005 */
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
#include "tdt.h"

static td_device *dev;    /* cpu:0 */
static td_device *ad_dev; /* autodiff(cpu:0, NONE) */

#define N_STAT 100000

/* Values of float_random(d, shape, dist, p0, p1, seed), read back (malloc'ed, n elements). */
static float *random_values(td_device *d, const int64_t *shape, int ndim, td_distribution dist, float p0, float p1,
                            uint64_t seed, int64_t *n)
{
    td_tensor *t = NULL;
    tdt_check(td_float_random(d, shape, ndim, dist, p0, p1, seed, &t), "float_random");
    float *v = tdt_read(t, n);
    assert_non_null(v);
    td_tensor_release(t);
    return v;
}

/* The generator documented in runtime/cpu/cpu_device.c (and promised on every backend). */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static float ref_unit(uint64_t seed, uint64_t i)
{
    return (float)(mix(seed ^ mix(2u * i)) >> 40) * 0x1p-24f;
}

static float ref_normal(uint64_t seed, uint64_t i, float mean, float std)
{
    const uint64_t h0 = mix(seed ^ mix(2u * i)), h1 = mix(seed ^ mix(2u * i + 1u));
    const float u1 = (float)((h0 >> 40) + 1u) * 0x1p-24f;
    const float u2 = (float)(h1 >> 40) * 0x1p-24f;
    return mean + std * (sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2));
}

static void test_same_seed_gives_identical_values(void **state)
{
    (void)state;
    static const int64_t s[] = { 1000 };
    int64_t n1, n2;
    for (int dist = TD_UNIFORM; dist <= TD_NORMAL; dist++) {
        float *a = random_values(dev, s, 1, (td_distribution)dist, -1.0f, 2.0f, 12345, &n1);
        float *b = random_values(dev, s, 1, (td_distribution)dist, -1.0f, 2.0f, 12345, &n2);
        assert_int_equal(n1, 1000);
        assert_int_equal(n2, 1000);
        assert_memory_equal(a, b, sizeof(float) * 1000);
        free(a);
        free(b);
    }
}

static void test_different_seeds_give_different_values(void **state)
{
    (void)state;
    static const int64_t s[] = { 1000 };
    static const uint64_t seeds[] = { 0, 1, 2, UINT64_MAX, 0x8000000000000000ull };
    const int ns = (int)(sizeof seeds / sizeof seeds[0]);
    for (int dist = TD_UNIFORM; dist <= TD_NORMAL; dist++) {
        for (int x = 0; x < ns; x++) {
            for (int y = x + 1; y < ns; y++) {
                int64_t n;
                float *a = random_values(dev, s, 1, (td_distribution)dist, 0.0f, 1.0f, seeds[x], &n);
                float *b = random_values(dev, s, 1, (td_distribution)dist, 0.0f, 1.0f, seeds[y], &n);
                int same = 0;
                for (int64_t i = 0; i < n; i++)
                    same += a[i] == b[i];
                /* 24-bit values: a coincidence has probability ~6e-8 per element */
                if (same > 2)
                    print_error("seeds %llu and %llu agree on %d of 1000 values\n", (unsigned long long)seeds[x],
                                (unsigned long long)seeds[y], same);
                assert_true(same <= 2);
                free(a);
                free(b);
            }
        }
    }
}

static void test_values_follow_the_documented_generator(void **state)
{
    (void)state;
    static const int64_t s[] = { 4096 };
    int64_t n;
    /* On [0, 1) the value is the 24-bit unit number itself, exactly. */
    float *u = random_values(dev, s, 1, TD_UNIFORM, 0.0f, 1.0f, 42, &n);
    for (int64_t i = 0; i < n; i++) {
        if (u[i] != ref_unit(42, (uint64_t)i))
            print_error("element %lld: %.9g, want %.9g\n", (long long)i, (double)u[i], (double)ref_unit(42, (uint64_t)i));
        assert_true(u[i] == ref_unit(42, (uint64_t)i));
    }
    free(u);
    /* Scaled: p0 + (p1 - p0) * u, up to rounding (an FMA may be used). */
    float *v = random_values(dev, s, 1, TD_UNIFORM, -2.0f, 3.0f, 7, &n);
    for (int64_t i = 0; i < n; i++)
        assert_true(tdt_close(v[i], -2.0f + 5.0f * ref_unit(7, (uint64_t)i), 1e-6f));
    free(v);
    /* Normal: Box-Muller on two hashes per element; libm differences allowed. */
    float *z = random_values(dev, s, 1, TD_NORMAL, 1.5f, 2.0f, 99, &n);
    for (int64_t i = 0; i < n; i++)
        assert_true(tdt_close(z[i], ref_normal(99, (uint64_t)i, 1.5f, 2.0f), 1e-5f));
    free(z);
}

static void test_uniform_range_and_moments(void **state)
{
    (void)state;
    static const int64_t s[] = { N_STAT };
    const float a = -2.0f, b = 3.0f;
    int64_t n;
    float *v = random_values(dev, s, 1, TD_UNIFORM, a, b, 2024, &n);
    assert_int_equal(n, N_STAT);
    double sum = 0.0, sq = 0.0;
    float lo = INFINITY, hi = -INFINITY;
    int64_t bins[10] = { 0 };
    for (int64_t i = 0; i < n; i++) {
        assert_true(v[i] >= a && v[i] < b);
        sum += v[i];
        lo = fminf(lo, v[i]);
        hi = fmaxf(hi, v[i]);
        int k = (int)((v[i] - a) / (b - a) * 10.0f);
        bins[k < 10 ? k : 9]++;
    }
    const double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    const double var = sq / (double)(n - 1);
    print_message("uniform[-2, 3): mean %.5f (0.5), variance %.5f (2.08333), min %.6f, max %.6f\n", mean, var,
                  (double)lo, (double)hi);
    assert_true(fabs(mean - 0.5) < 0.03);
    assert_true(fabs(var - 25.0 / 12.0) < 0.04);
    assert_true(lo < a + 1e-3f * (b - a));
    assert_true(hi > b - 1e-3f * (b - a));
    for (int k = 0; k < 10; k++) {
        if (llabs(bins[k] - N_STAT / 10) >= 500)
            print_error("bin %d holds %lld values, want about %d\n", k, (long long)bins[k], N_STAT / 10);
        assert_true(llabs(bins[k] - N_STAT / 10) < 500);
    }
    free(v);
}

static void test_uniform_never_reaches_p1(void **state)
{
    (void)state;
    static const int64_t s[] = { 50000 };
    int64_t n;
    /* p1 is the next float after p0: every value must be p0. */
    const float p0 = 1.0f, p1 = nextafterf(1.0f, 2.0f);
    float *v = random_values(dev, s, 1, TD_UNIFORM, p0, p1, 5, &n);
    for (int64_t i = 0; i < n; i++)
        assert_true(v[i] == p0);
    free(v);
    /* a coarse range where p0 + (p1 - p0) * u rounds up to p1 for u close to 1 */
    const float q0 = 1.0e6f, q1 = 1.0e6f + 0.5f;
    v = random_values(dev, s, 1, TD_UNIFORM, q0, q1, 6, &n);
    for (int64_t i = 0; i < n; i++)
        assert_true(v[i] >= q0 && v[i] < q1);
    free(v);
}

static void test_normal_moments(void **state)
{
    (void)state;
    static const int64_t s[] = { N_STAT };
    const double mu = 1.5, sigma = 2.0;
    int64_t n;
    float *v = random_values(dev, s, 1, TD_NORMAL, (float)mu, (float)sigma, 77, &n);
    double sum = 0.0, sq = 0.0;
    int64_t in1 = 0, in2 = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(isfinite(v[i]));
        sum += v[i];
        const double z = fabs((v[i] - mu) / sigma);
        in1 += z < 1.0;
        in2 += z < 2.0;
    }
    const double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
    const double std = sqrt(sq / (double)(n - 1));
    const double p1 = (double)in1 / (double)n, p2 = (double)in2 / (double)n;
    print_message("normal(1.5, 2): mean %.5f, std %.5f, P(|z|<1) %.4f, P(|z|<2) %.4f\n", mean, std, p1, p2);
    assert_true(fabs(mean - mu) < 0.04);
    assert_true(fabs(std - sigma) < 0.03);
    assert_true(fabs(p1 - 0.6827) < 0.01);
    assert_true(fabs(p2 - 0.9545) < 0.005);
    free(v);
}

static void test_values_do_not_depend_on_shape(void **state)
{
    (void)state;
    static const int64_t flat[] = { 4096 }, rows[] = { 1024, 4 }, cube[] = { 16, 16, 16 };
    for (int dist = TD_UNIFORM; dist <= TD_NORMAL; dist++) {
        int64_t n1, n2, n3;
        float *a = random_values(dev, flat, 1, (td_distribution)dist, 0.0f, 1.0f, 31, &n1);
        float *b = random_values(dev, rows, 2, (td_distribution)dist, 0.0f, 1.0f, 31, &n2);
        float *c = random_values(dev, cube, 3, (td_distribution)dist, 0.0f, 1.0f, 31, &n3);
        assert_int_equal(n1, 4096);
        assert_int_equal(n2, 4096);
        assert_int_equal(n3, 4096);
        assert_memory_equal(a, b, sizeof(float) * 4096);
        assert_memory_equal(a, c, sizeof(float) * 4096);
        free(a);
        free(b);
        free(c);
    }
}

static void test_values_do_not_depend_on_size_or_threading(void **state)
{
    (void)state;
    /* element i is the same in a small (single-thread) and a large (threaded) tensor */
    static const int64_t small[] = { 1000 }, large[] = { 1 << 18 }, large2[] = { 1 << 16, 4 };
    for (int dist = TD_UNIFORM; dist <= TD_NORMAL; dist++) {
        int64_t ns, nl, nl2;
        float *a = random_values(dev, small, 1, (td_distribution)dist, -1.0f, 1.0f, 8, &ns);
        float *b = random_values(dev, large, 1, (td_distribution)dist, -1.0f, 1.0f, 8, &nl);
        float *c = random_values(dev, large2, 2, (td_distribution)dist, -1.0f, 1.0f, 8, &nl2);
        assert_int_equal(nl, 1 << 18);
        assert_memory_equal(a, b, sizeof(float) * 1000);
        assert_memory_equal(b, c, sizeof(float) * (size_t)nl);
        free(a);
        free(b);
        free(c);
    }
}

static void test_random_on_autodiff_device(void **state)
{
    (void)state;
    static const int64_t s[] = { 64, 8 };
    td_tensor *t = NULL;
    tdt_check(td_float_random(ad_dev, s, 2, TD_NORMAL, 0.0f, 1.0f, 3, &t), "float_random on autodiff");
    td_backend b;
    td_autodiff_context ctx;
    tdt_check(td_tensor_backend(t, &b), "backend");
    tdt_check(td_tensor_autodiff_context(t, &ctx), "context");
    assert_int_equal(b, TD_BACKEND_AUTODIFF);
    assert_true(ctx.enabled);
    assert_int_equal(ctx.strategy, TD_CHECKPOINT_NONE);
    int64_t n, nc;
    float *v = tdt_read(t, &n);
    assert_non_null(v);
    float *c = random_values(dev, s, 2, TD_NORMAL, 0.0f, 1.0f, 3, &nc);
    assert_int_equal(n, nc);
    assert_memory_equal(v, c, sizeof(float) * (size_t)n);
    /* the result is a usable float on the autodiff device */
    td_tensor *e = NULL;
    tdt_check(td_float_exp(t, &e), "exp of a random autodiff tensor");
    td_tensor_release(e);
    td_tensor_release(t);
    free(v);
    free(c);
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
        TDT_TEST(test_same_seed_gives_identical_values),
        TDT_TEST(test_different_seeds_give_different_values),
        TDT_TEST(test_values_follow_the_documented_generator),
        TDT_TEST(test_uniform_range_and_moments),
        TDT_TEST(test_uniform_never_reaches_p1),
        TDT_TEST(test_normal_moments),
        TDT_TEST(test_values_do_not_depend_on_shape),
        TDT_TEST(test_values_do_not_depend_on_size_or_threading),
        TDT_TEST(test_random_on_autodiff_device),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
