/* The tape on long chains: releasing or running backward over a chain of many nodes needs
 * no deep recursion, and gradients accumulate along it. Gradient semantics (PyTorch's) of
 * max/min ties, NaN in maximum/minimum and the rounding ops, worked by hand.
 * On the backend AD_BACKEND (the CPU here; tests/backends/vulkan/ includes this file for
 * Vulkan, without the long chains). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tdt.h"

#ifndef AD_BACKEND
#define AD_BACKEND TD_BACKEND_CPU
#endif

enum { LONG_CHAIN = 200000 };

static td_device *inner, *ad; /* a device of AD_BACKEND, autodiff (NONE) over it */

#ifndef AD_NO_LONG_CHAINS
static td_tensor *chain(int steps, td_tensor **leaf)
{
    const int64_t s[] = { 1 };
    const float one = 1.0f;
    td_tensor *x = NULL;
    tdt_check(td_float_from_data(ad, &one, s, 1, &x), "leaf");
    tdt_check(td_require_grad(x), "require_grad");
    tdt_check(td_tensor_retain(x), "retain");
    *leaf = x;
    for (int i = 0; i < steps; i++) {
        td_tensor *y = NULL;
        tdt_check(td_float_add_scalar(x, 1.0f, &y), "add_scalar");
        td_tensor_release(x); /* only the tape keeps the chain alive now */
        x = y;
    }
    return x;
}

static void test_release_long_chain(void **state)
{
    (void)state;
    td_tensor *leaf = NULL, *end = chain(LONG_CHAIN, &leaf);
    td_tensor_release(end); /* drops every node of the chain */
    td_tensor_release(leaf);
}

static void test_backward_long_chain(void **state)
{
    (void)state;
    td_tensor *leaf = NULL, *end = chain(LONG_CHAIN, &leaf), *sq = NULL, *g = NULL;
    tdt_check(td_float_mul(end, end, &sq), "square");
    td_grads *grads = NULL;
    tdt_check(td_backward(sq, &grads), "backward");
    tdt_check(td_grads_get(grads, leaf, &g), "grads_get");
    float v = 0.0f;
    tdt_check(td_float_into_data(g, &v, 1), "read");
    /* d/dx (x + n)^2 at x = 1: 2 (1 + n) */
    assert_true(tdt_close(v, 2.0f * (1.0f + (float)LONG_CHAIN), 1e-6f));
    td_tensor_release(g);
    td_grads_release(grads);
    td_tensor_release(sq);
    td_tensor_release(end);
    td_tensor_release(leaf);
}

#endif

/* maximum/minimum split the gradient on a tie, as PyTorch does:
 * maximum([1, 2], [1, 3]) with upstream [g0, g1] gives a: [g0/2, 0], b: [g0/2, g1];
 * minimum([1, 2], [1, 3]) gives a: [g0/2, g1], b: [g0/2, 0]. */
static void tie(td_status (*op)(const td_tensor *, const td_tensor *, td_tensor **), const float want_a[2],
                const float want_b[2])
{
    static const float av[] = { 1, 2 }, bv[] = { 1, 3 }, gv[] = { 4, 10 };
    static const int64_t s2[] = { 2 };
    td_tensor *a = NULL, *b = NULL, *m = NULL, *seed = NULL, *ga = NULL, *gb = NULL;
    tdt_check(td_float_from_data(ad, av, s2, 1, &a), "a");
    tdt_check(td_float_from_data(ad, bv, s2, 1, &b), "b");
    tdt_check(td_require_grad(a), "require_grad a");
    tdt_check(td_require_grad(b), "require_grad b");
    tdt_check(op(a, b, &m), "op");
    tdt_check(td_float_from_data(inner, gv, s2, 1, &seed), "seed");
    td_grads *g = NULL;
    tdt_check(td_backward_seeded(m, seed, &g), "backward");
    tdt_check(td_grads_get(g, a, &ga), "grad a");
    tdt_check(td_grads_get(g, b, &gb), "grad b");
    tdt_expect(ga, TD_F32, s2, 1, want_a, 2, 0.0f);
    tdt_expect(gb, TD_F32, s2, 1, want_b, 2, 0.0f);
    td_tensor_release(ga);
    td_tensor_release(gb);
    td_grads_release(g);
    td_tensor_release(seed);
    td_tensor_release(m);
    td_tensor_release(b);
    td_tensor_release(a);
}

static void test_ties_split_the_gradient(void **state)
{
    (void)state;
    static const float max_a[] = { 2, 0 }, max_b[] = { 2, 10 };
    static const float min_a[] = { 2, 10 }, min_b[] = { 2, 0 };
    tie(td_float_maximum, max_a, max_b);
    tie(td_float_minimum, min_a, min_b);
}

/* The gradient of op(a) (one input, maybe with a dim) for a seed of ones, against want. */
typedef td_status (*dim_fn)(const td_tensor *, int64_t, td_tensor **);
typedef td_status (*pair_fn)(const td_tensor *, int64_t, td_tensor **, td_tensor **);
typedef td_status (*all_fn)(const td_tensor *, td_tensor **);

static td_tensor *leaf(const float *v, const int64_t *shape, int ndim)
{
    td_tensor *x = NULL;
    tdt_check(td_float_from_data(ad, v, shape, ndim, &x), "leaf");
    tdt_check(td_require_grad(x), "require_grad");
    return x;
}

/* Backward from y with a seed of ones (y's shape); the gradient of x, checked against want. */
static void expect_grad_of(const td_tensor *y, const td_tensor *x, const float *want, int64_t n, const char *what)
{
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    tdt_check(td_tensor_shape(y, dims, &nd), "shape");
    td_tensor *seed = NULL, *gx = NULL;
    tdt_check(td_float_ones(inner, dims, nd, &seed), "seed");
    td_grads *g = NULL;
    tdt_check(td_backward_seeded(y, seed, &g), what);
    tdt_check(td_grads_get(g, x, &gx), "grads_get");
    assert_non_null(gx);
    int64_t got_n = 0;
    float *got = tdt_read(gx, &got_n);
    assert_int_equal(got_n, n);
    for (int64_t i = 0; i < n; i++) {
        if (!(got[i] == want[i])) {
            print_error("%s: grad[%lld] = %.9g, want %.9g\n", what, (long long)i, (double)got[i], (double)want[i]);
            free(got);
            fail();
        }
    }
    free(got);
    td_tensor_release(gx);
    td_grads_release(g);
    td_tensor_release(seed);
}

/* max_dim / min_dim split the gradient evenly among tied elements, as torch.amax / amin:
 *   amax([1, 3, 3], 0)  -> grad {0, 1/2, 1/2};  amin([2, -1, -1], 0) -> {0, 1/2, 1/2};
 *   amax([[5, 5, 5], [1, 2, 0]], 1) -> {1/3, 1/3, 1/3, 0, 1, 0};
 * the full reductions max / min as torch.max(t) / min(t) (no dim), also split evenly:
 *   max([3, 1, 3]) -> {1/2, 0, 1/2}; min([0, 0, 0, 4]) -> {1/3, 1/3, 1/3, 0}. */
static void test_max_min_ties_split_evenly(void **state)
{
    (void)state;
    static const int64_t s3[] = { 3 }, s23[] = { 2, 3 }, s4[] = { 4 };
    static const float a1[] = { 1, 3, 3 }, a2[] = { 2, -1, -1 }, a3[] = { 5, 5, 5, 1, 2, 0 };
    static const float a4[] = { 3, 1, 3 }, a5[] = { 0, 0, 0, 4 };
    static const float half[] = { 0, 0.5f, 0.5f }, third[] = { 1.0f / 3, 1.0f / 3, 1.0f / 3, 0, 1, 0 };
    static const float ends[] = { 0.5f, 0, 0.5f }, first3[] = { 1.0f / 3, 1.0f / 3, 1.0f / 3, 0 };
    struct { dim_fn f; const float *a; const int64_t *s; int nd; int64_t dim; const float *want; int64_t n;
             const char *what; } dcases[] = {
        { td_float_max_dim, a1, s3, 1, 0, half, 3, "max_dim([1, 3, 3])" },
        { td_float_min_dim, a2, s3, 1, 0, half, 3, "min_dim([2, -1, -1])" },
        { td_float_max_dim, a3, s23, 2, 1, third, 6, "max_dim([[5, 5, 5], [1, 2, 0]], 1)" },
    };
    for (size_t i = 0; i < sizeof dcases / sizeof dcases[0]; i++) {
        td_tensor *x = leaf(dcases[i].a, dcases[i].s, dcases[i].nd), *y = NULL;
        tdt_check(dcases[i].f(x, dcases[i].dim, &y), dcases[i].what);
        expect_grad_of(y, x, dcases[i].want, dcases[i].n, dcases[i].what);
        td_tensor_release(y);
        td_tensor_release(x);
    }
    struct { all_fn f; const float *a; const int64_t *s; const float *want; int64_t n; const char *what; } acases[] = {
        { td_float_max, a4, s3, ends, 3, "max([3, 1, 3])" },
        { td_float_min, a5, s4, first3, 4, "min([0, 0, 0, 4])" },
    };
    for (size_t i = 0; i < sizeof acases / sizeof acases[0]; i++) {
        td_tensor *x = leaf(acases[i].a, acases[i].s, 1), *y = NULL;
        tdt_check(acases[i].f(x, &y), acases[i].what);
        expect_grad_of(y, x, acases[i].want, acases[i].n, acases[i].what);
        td_tensor_release(y);
        td_tensor_release(x);
    }
}

/* The tuple forms send the values' gradient to the returned index only, as torch.max(a,
 * dim) / torch.min(a, dim) do: max over [1, 3, 3] returns index 1 (the first maximum), so
 * the gradient is {0, 1, 0}; min over [2, -1, -1] returns 1: {0, 1, 0}; over the rows of
 * [[5, 5, 5], [1, 2, 0]]: indices {0, 1}, gradient {1, 0, 0, 0, 1, 0}. */
static void test_with_indices_grad_goes_to_the_index(void **state)
{
    (void)state;
    static const int64_t s3[] = { 3 }, s23[] = { 2, 3 };
    static const float a1[] = { 1, 3, 3 }, a2[] = { 2, -1, -1 }, a3[] = { 5, 5, 5, 1, 2, 0 };
    static const float mid[] = { 0, 1, 0 }, rows[] = { 1, 0, 0, 0, 1, 0 };
    static const int32_t i1[] = { 1 }, i3[] = { 0, 1 };
    static const int64_t s1[] = { 1 }, s21[] = { 2, 1 };
    struct { pair_fn f; const float *a; const int64_t *s; int nd; int64_t dim; const float *want; int64_t n;
             const int32_t *idx; const int64_t *is; int ind; const char *what; } cases[] = {
        { td_float_max_dim_with_indices, a1, s3, 1, 0, mid, 3, i1, s1, 1, "max_dim_with_indices([1, 3, 3])" },
        { td_float_min_dim_with_indices, a2, s3, 1, 0, mid, 3, i1, s1, 1, "min_dim_with_indices([2, -1, -1])" },
        { td_float_max_dim_with_indices, a3, s23, 2, 1, rows, 6, i3, s21, 2, "max_dim_with_indices(rows)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        td_tensor *x = leaf(cases[i].a, cases[i].s, cases[i].nd), *v = NULL, *ix = NULL;
        tdt_check(cases[i].f(x, cases[i].dim, &v, &ix), cases[i].what);
        tdt_expect(ix, TD_I32, cases[i].is, cases[i].ind, cases[i].idx, cases[i].ind == 1 ? 1 : 2, 0.0f);
        expect_grad_of(v, x, cases[i].want, cases[i].n, cases[i].what);
        td_tensor_release(v);
        td_tensor_release(ix);
        td_tensor_release(x);
    }
}

/* Where maximum / minimum give NaN, the gradient goes to both inputs, as PyTorch's
 * where(a == b, grad / 2, grad).masked_fill_(a < b, 0) (for b: a > b) does: every
 * comparison with NaN is false. a = {nan, 1, nan}, b = {2, nan, nan}, seed {4, 10, 6}:
 * both gradients are {4, 10, 6}, for maximum and for minimum. */
static void test_nan_passes_the_gradient_to_both(void **state)
{
    (void)state;
    static const float av[] = { NAN, 1, NAN }, bv[] = { 2, NAN, NAN }, gv[] = { 4, 10, 6 };
    static const int64_t s3[] = { 3 };
    td_status (*ops[])(const td_tensor *, const td_tensor *, td_tensor **) = { td_float_maximum, td_float_minimum };
    for (int k = 0; k < 2; k++) {
        td_tensor *a = leaf(av, s3, 1), *b = leaf(bv, s3, 1), *m = NULL, *seed = NULL, *ga = NULL, *gb = NULL;
        tdt_check(ops[k](a, b, &m), "op");
        tdt_check(td_float_from_data(inner, gv, s3, 1, &seed), "seed");
        td_grads *g = NULL;
        tdt_check(td_backward_seeded(m, seed, &g), "backward");
        tdt_check(td_grads_get(g, a, &ga), "grad a");
        tdt_check(td_grads_get(g, b, &gb), "grad b");
        tdt_expect(ga, TD_F32, s3, 1, gv, 3, 0.0f);
        tdt_expect(gb, TD_F32, s3, 1, gv, 3, 0.0f);
        td_tensor *all[] = { ga, gb, seed, m, a, b };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
        td_grads_release(g);
    }
}

/* ceil, floor, round, trunc and sign are differentiable with a zero gradient, as in
 * PyTorch: backward through sum(op(x)) works and gives {0, 0, 0, 0}; through
 * sum(op(x) * x) it gives op(x) (the product rule with op' = 0):
 * x = {0.25, -1.75, 2.5, 3}: floor {0, -2, 2, 3}, ceil {1, -1, 3, 3}, round (half to even)
 * {0, -2, 2, 3}, trunc {0, -1, 2, 3}, sign {1, -1, 1, 1}. */
static void test_rounding_ops_backpropagate_zeros(void **state)
{
    (void)state;
    static const float xv[] = { 0.25f, -1.75f, 2.5f, 3 }, zeros[] = { 0, 0, 0, 0 };
    static const float fl[] = { 0, -2, 2, 3 }, ce[] = { 1, -1, 3, 3 }, ro[] = { 0, -2, 2, 3 };
    static const float tr[] = { 0, -1, 2, 3 }, sg[] = { 1, -1, 1, 1 };
    static const int64_t s4[] = { 4 };
    struct { all_fn f; const float *prod; const char *what; } cases[] = {
        { td_float_floor, fl, "floor" }, { td_float_ceil, ce, "ceil" }, { td_float_round, ro, "round" },
        { td_float_trunc, tr, "trunc" }, { td_float_sign, sg, "sign" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        td_tensor *x = leaf(xv, s4, 1), *r = NULL, *y = NULL, *p = NULL, *y2 = NULL;
        tdt_check(cases[i].f(x, &r), cases[i].what);
        bool tracked = false;
        tdt_check(td_is_tracked(r, &tracked), "is_tracked");
        assert_true(tracked);
        tdt_check(td_float_sum(r, &y), "sum");
        expect_grad_of(y, x, zeros, 4, cases[i].what);
        tdt_check(cases[i].f(x, &p), cases[i].what);
        td_tensor *px = NULL;
        tdt_check(td_float_mul(p, x, &px), "mul");
        tdt_check(td_float_sum(px, &y2), "sum");
        expect_grad_of(y2, x, cases[i].prod, 4, cases[i].what);
        td_tensor *all[] = { x, r, y, p, px, y2 };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            td_tensor_release(all[k]);
    }
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(AD_BACKEND, &inner, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(inner, ad, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#ifndef AD_NO_LONG_CHAINS
        TDT_TEST(test_release_long_chain),
        TDT_TEST(test_backward_long_chain),
#endif
        TDT_TEST(test_ties_split_the_gradient),
        TDT_TEST(test_max_min_ties_split_evenly),
        TDT_TEST(test_with_indices_grad_goes_to_the_index),
        TDT_TEST(test_nan_passes_the_gradient_to_both),
        TDT_TEST(test_rounding_ops_backpropagate_zeros),
    };
    return cmocka_run_group_tests_name("autodiff_engine", tests, setup, teardown);
}
