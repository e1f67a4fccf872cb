/* The sign of a zero result where -0 and +0 tie (the rules in the ops' docs, specs/ops/),
 * pinned by hand with signbit on the CPU and on Vulkan (where a device opens):
 *  - float_max / float_min / float_max_dim / float_min_dim: the first of the tied zeros
 *    along the reduction (in row-major order for the whole tensor) gives the sign, the same
 *    element float_argmax / float_argmin pick (torch.max(a, dim)'s value, a[index]);
 *  - float_clamp / float_clamp_min / float_clamp_max: a bound that ties the input leaves the
 *    input (torch.clamp(-0., min=0.) is -0.);
 *  - float_maximum / float_minimum: a tie gives b.
 * Sizes take every path of the CPU kernels: short scalar loops, the vector loops (32 and
 * more), the threaded ones (past TD_CPU_PAR_MIN, 32,768 elements), columns and rows. */
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

static td_device *dev;
static td_backend backend;

static td_tensor *mk(const float *data, const int64_t *dims, int n)
{
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(dev, data, dims, n, &t), "float_from_data");
    return t;
}

/* Reads t's n elements and checks each is a zero of the sign want_neg[i] (or all want_neg[0]). */
static void expect_zeros(const char *what, td_tensor *t, int64_t n, const bool *want_neg, bool all_same)
{
    float *got = malloc((size_t)n * sizeof *got);
    assert_non_null(got);
    tdt_check(td_float_into_data(t, got, n), "into_data");
    for (int64_t i = 0; i < n; i++) {
        const bool neg = all_same ? want_neg[0] : want_neg[i];
        if (got[i] != 0.0f || (signbit(got[i]) != 0) != neg) {
            const float g = got[i];
            free(got);
            fail_msg("%s on %s: element %lld is %s%g, want %s0", what, td_backend_name(backend), (long long)i,
                     signbit(g) ? "-" : "+", (double)fabsf(g), neg ? "-" : "+");
        }
    }
    free(got);
    td_tensor_release(t);
}

static void expect_zero(const char *what, td_tensor *t, bool neg)
{
    expect_zeros(what, t, 1, &neg, true);
}

/* n zeros: the first k of sign first_neg, the rest of the other sign (k >= 1). */
static float *zeros_split(int64_t n, int64_t k, bool first_neg)
{
    float *p = malloc((size_t)n * sizeof *p);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = (i < k) == first_neg ? -0.0f : 0.0f;
    return p;
}

static void test_whole_tensor_max_min(void **state)
{
    (void)state;
    static const int64_t sizes[] = { 2, 3, 17, 33, 100, 1000, 40001 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int64_t n = sizes[s];
        for (int first_neg = 0; first_neg < 2; first_neg++) {
            /* one zero of the first sign first, the rest the other sign; then half and half */
            for (int split = 0; split < 2; split++) {
                const int64_t k = split ? (n + 1) / 2 : 1;
                float *p = zeros_split(n, k, first_neg);
                td_tensor *a = mk(p, &n, 1), *r = NULL;
                char what[96];
                snprintf(what, sizeof what, "float_max of %lld zeros (first %lld %s)", (long long)n, (long long)k,
                         first_neg ? "-0" : "+0");
                tdt_check(td_float_max(a, &r), "float_max");
                expect_zero(what, r, first_neg);
                what[7] = 'i', what[8] = 'n'; /* float_min */
                tdt_check(td_float_min(a, &r), "float_min");
                expect_zero(what, r, first_neg);
                td_tensor_release(a);
                free(p);
            }
        }
    }
    /* zeros tie below a larger value elsewhere: the max is that value, the min the first zero */
    const float mixed[] = { 1.0f, 0.0f, -0.0f, 0.0f };
    const int64_t four = 4;
    td_tensor *a = mk(mixed, &four, 1), *r = NULL;
    tdt_check(td_float_min(a, &r), "float_min");
    expect_zero("float_min of {1, +0, -0, +0}", r, false);
    td_tensor_release(a);
}

/* Along dim 0 of [rows, cols] (columns) and dim 1 (rows): column j / row j has its first
 * zero of sign (j % 2 == 1) at position j % (len), the others of the other sign. */
static void test_dim_max_min(void **state)
{
    (void)state;
    static const int64_t shapes[][2] = { { 2, 3 }, { 33, 9 }, { 100, 40 }, { 5, 1000 }, { 300, 300 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int64_t dim = 0; dim < 2; dim++) {
            const int64_t rows = shapes[s][0], cols = shapes[s][1];
            const int64_t len = dim == 0 ? rows : cols, outs = dim == 0 ? cols : rows;
            float *p = malloc((size_t)(rows * cols) * sizeof *p);
            bool *want = malloc((size_t)outs * sizeof *want);
            assert_non_null(p);
            assert_non_null(want);
            for (int64_t j = 0; j < outs; j++) {
                const bool neg = j % 2 == 1;
                const int64_t at = j % len; /* zeros before it are of its sign too */
                want[j] = neg;
                for (int64_t k = 0; k < len; k++) {
                    const float v = k <= at ? (neg ? -0.0f : 0.0f) : (neg ? 0.0f : -0.0f);
                    p[dim == 0 ? k * cols + j : j * cols + k] = v;
                }
            }
            const int64_t dims[] = { rows, cols };
            td_tensor *a = mk(p, dims, 2), *r = NULL;
            char what[96];
            snprintf(what, sizeof what, "float_max_dim %lld of [%lld, %lld]", (long long)dim, (long long)rows,
                     (long long)cols);
            tdt_check(td_float_max_dim(a, dim, &r), "float_max_dim");
            expect_zeros(what, r, outs, want, false);
            snprintf(what, sizeof what, "float_min_dim %lld of [%lld, %lld]", (long long)dim, (long long)rows,
                     (long long)cols);
            tdt_check(td_float_min_dim(a, dim, &r), "float_min_dim");
            expect_zeros(what, r, outs, want, false);
            /* the tuple: the value is the element its index names */
            td_tensor *v = NULL, *idx = NULL;
            tdt_check(td_float_max_dim_with_indices(a, dim, &v, &idx), "max_dim_with_indices");
            td_tensor_release(idx);
            expect_zeros("float_max_dim_with_indices", v, outs, want, false);
            td_tensor_release(a);
            free(p);
            free(want);
        }
    }
}

static void test_clamps(void **state)
{
    (void)state;
    static const float zs[] = { -0.0f, 0.0f };
    const int64_t two = 2;
    static const bool same[] = { true, false }; /* the input's signs */
    td_tensor *a = mk(zs, &two, 1), *r = NULL;
    const float bounds[] = { 0.0f, -0.0f };
    for (int b = 0; b < 2; b++) {
        char what[64];
        snprintf(what, sizeof what, "float_clamp({-0, +0}, %s0, 1)", b ? "-" : "+");
        tdt_check(td_float_clamp(a, bounds[b], 1.0f, &r), "float_clamp");
        expect_zeros(what, r, 2, same, false);
        snprintf(what, sizeof what, "float_clamp({-0, +0}, -1, %s0)", b ? "-" : "+");
        tdt_check(td_float_clamp(a, -1.0f, bounds[b], &r), "float_clamp");
        expect_zeros(what, r, 2, same, false);
        snprintf(what, sizeof what, "float_clamp_min({-0, +0}, %s0)", b ? "-" : "+");
        tdt_check(td_float_clamp_min(a, bounds[b], &r), "float_clamp_min");
        expect_zeros(what, r, 2, same, false);
        snprintf(what, sizeof what, "float_clamp_max({-0, +0}, %s0)", b ? "-" : "+");
        tdt_check(td_float_clamp_max(a, bounds[b], &r), "float_clamp_max");
        expect_zeros(what, r, 2, same, false);
    }
    td_tensor_release(a);
}

static void test_maximum_minimum(void **state)
{
    (void)state;
    static const float xa[] = { -0.0f, 0.0f, -0.0f, 0.0f }, xb[] = { 0.0f, -0.0f, -0.0f, 0.0f };
    static const bool b_signs[] = { false, true, true, false };
    const int64_t four = 4;
    td_tensor *a = mk(xa, &four, 1), *b = mk(xb, &four, 1), *r = NULL;
    tdt_check(td_float_maximum(a, b, &r), "float_maximum");
    expect_zeros("float_maximum", r, 4, b_signs, false);
    tdt_check(td_float_minimum(a, b, &r), "float_minimum");
    expect_zeros("float_minimum", r, 4, b_signs, false);
    td_tensor_release(a);
    td_tensor_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_tensor_max_min),
        cmocka_unit_test(test_dim_max_min),
        cmocka_unit_test(test_clamps),
        cmocka_unit_test(test_maximum_minimum),
    };
    static const td_backend backends[] = { TD_BACKEND_CPU, TD_BACKEND_VULKAN };
    static const char *const names[] = { "signed_zero_cpu", "signed_zero_vulkan" };
    int failed = 0;
    for (size_t k = 0; k < 2; k++) {
        backend = backends[k];
        if (!td_backend_enabled(backend)) {
            printf("%s: skipped: backend %s is not in this build\n", names[k], td_backend_name(backend));
            continue;
        }
        if (td_device_open(backend, 0, &dev) != TD_OK) {
            if (backend == TD_BACKEND_CPU)
                return 1;
            printf("%s: skipped: no %s device (%s)\n", names[k], td_backend_name(backend), td_last_error());
            continue;
        }
        failed += _cmocka_run_group_tests(names[k], tests, sizeof tests / sizeof tests[0], NULL, NULL);
        td_device_release(dev);
        dev = NULL;
    }
    return failed != 0;
}
