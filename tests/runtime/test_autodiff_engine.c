/* The tape on long chains: releasing or running backward over a chain of many nodes needs
 * no deep recursion, and gradients accumulate along it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tdt.h"

enum { LONG_CHAIN = 200000 };

static td_device *cpu, *ad;

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
    tdt_check(td_float_from_data(cpu, gv, s2, 1, &seed), "seed");
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

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &cpu, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(cpu, ad, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_release_long_chain),
        TDT_TEST(test_backward_long_chain),
        TDT_TEST(test_ties_split_the_gradient),
    };
    return cmocka_run_group_tests_name("autodiff_engine", tests, setup, teardown);
}
