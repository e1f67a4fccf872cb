/* Views (ops whose spec says view = true, the reshapes): beyond the generated checks of
 * every view op on every backend, a large tensor (the CPU's pooled storage), a view on
 * the tape with every handle but the loss released before backward, a failed allocation
 * of the storage count, empty tensors, and the testing hook's own errors. */
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

static td_device *cpu, *ad;

static bool same(const td_tensor *a, const td_tensor *b)
{
    bool s = false;
    tdt_check(td_testing_same_storage(a, b, &s), "testing_same_storage");
    return s;
}

/* 4M floats (16 MiB: the CPU keeps such blocks in its size-class pool): a view of a view,
 * the base released first, the storage back in the pool with the last holder, and the
 * pool's next block of that class handed to a new tensor that must not see the view's
 * storage as its own while the view lives. */
static void test_large_view(void **state)
{
    (void)state;
    enum { N = 4 << 20 };
    float *host = malloc(sizeof(float) * N);
    float *back = malloc(sizeof(float) * N);
    assert_non_null(host);
    assert_non_null(back);
    for (int i = 0; i < N; i++)
        host[i] = (float)(i % 1021) - 510.0f;
    const int64_t n = N, s2[] = { 2048, 2048 }, s3[] = { 16, -1, 128 };
    td_tensor *a = NULL, *v = NULL, *w = NULL, *other = NULL;
    tdt_check(td_float_from_data(cpu, host, &n, 1, &a), "from_data");
    tdt_check(td_float_reshape(a, s2, 2, &v), "reshape");
    tdt_check(td_float_reshape(v, s3, 3, &w), "reshape of the view");
    assert_true(same(a, v));
    assert_true(same(v, w));
    td_tensor_release(a);
    td_tensor_release(v);
    for (int i = 0; i < N; i++)
        back[i] = -host[i]; /* other elements: a block handed out twice would show */
    tdt_check(td_float_from_data(cpu, back, &n, 1, &other), "from_data");
    assert_false(same(other, w));
    memset(back, 0, sizeof(float) * N);
    tdt_check(td_float_into_data(w, back, n), "into_data");
    assert_memory_equal(back, host, sizeof(float) * N);
    td_tensor_release(w);
    td_tensor_release(other);
    free(back);
    free(host);
}

/* On the tape: y = sum(reshape(x) * reshape(x)); the view and the product are released
 * before backward, so the tape alone keeps them. dy/dx = 2x, in x's shape. */
static void test_view_on_the_tape(void **state)
{
    (void)state;
    const float xs[] = { 1, -2, 3, 0.5f, -1, 4 };
    const int64_t s23[] = { 2, 3 }, s6[] = { 6 };
    td_tensor *x = NULL, *v = NULL, *sq = NULL, *y = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(td_float_from_data(ad, xs, s23, 2, &x), "from_data");
    tdt_check(td_require_grad(x), "require_grad");
    tdt_check(td_float_reshape(x, s6, 1, &v), "reshape");
    assert_true(same(x, v));
    tdt_check(td_float_mul(v, v, &sq), "mul");
    tdt_check(td_float_sum(sq, &y), "sum");
    td_tensor_release(v);
    td_tensor_release(sq);
    tdt_check(td_backward(y, &grads), "backward");
    tdt_check(td_grads_get(grads, x, &g), "grads_get");
    const float want[] = { 2, -4, 6, 1, -2, 8 };
    tdt_expect(g, TD_F32, s23, 2, want, 6, 0.0f);
    td_tensor_release(g);
    td_grads_release(grads);
    td_tensor_release(y);
    td_tensor_release(x);
}

/* The first view of a tensor allocates its storage count: when that fails the reshape
 * says so and nothing leaks (the per-test check counts tensors; ASan counts bytes), and
 * the base is untouched. Then the count exists and later views need no allocation for it. */
static void test_view_allocation_failure(void **state)
{
    (void)state;
    const float xs[] = { 1, 2, 3, 4 };
    const int64_t s4[] = { 4 }, s22[] = { 2, 2 };
    td_tensor *a = NULL, *v = NULL;
    tdt_check(td_float_from_data(cpu, xs, s4, 1, &a), "from_data");
    int failures = 0;
    for (long k = 0; k < 3; k++) {
        td_testing_fail_allocations_after(k);
        const td_status st = td_float_reshape(a, s22, 2, &v);
        td_testing_fail_allocations_after(-1);
        if (st == TD_OK) {
            assert_true(same(a, v));
            td_tensor_release(v);
            v = NULL;
            break;
        }
        assert_int_equal(st, TD_E_NOMEM);
        failures++;
        assert_null(v);
        assert_non_null(strstr(td_last_error(), "float_reshape"));
    }
    assert_true(failures > 0); /* the first allocation failed: the view's count */
    const float want[] = { 1, 2, 3, 4 };
    tdt_expect(a, TD_F32, s4, 1, want, 4, 0.0f);
    td_tensor_release(a);
}

/* Empty tensors reshape like any other (the data the backend keeps for them, if any, is
 * shared), and a 0-d view of a one-element tensor reads its element. */
static void test_empty_and_scalar_views(void **state)
{
    (void)state;
    const int64_t s203[] = { 2, 0, 3 }, s03[] = { 0, 3 }, s11[] = { 1, 1 };
    td_tensor *e = NULL, *ev = NULL, *one = NULL, *sc = NULL;
    tdt_check(td_float_from_data(cpu, NULL, s203, 3, &e), "from_data (empty)");
    tdt_check(td_float_reshape(e, s03, 2, &ev), "reshape (empty)");
    td_tensor_release(e);
    tdt_expect(ev, TD_F32, s03, 2, NULL, 0, 0.0f);
    td_tensor_release(ev);
    const float v = 2.5f;
    tdt_check(td_float_from_data(cpu, &v, s11, 2, &one), "from_data");
    tdt_check(td_float_reshape(one, NULL, 0, &sc), "reshape to 0-d");
    td_tensor_release(one);
    tdt_expect(sc, TD_F32, NULL, 0, &v, 1, 0.0f);
    td_tensor_release(sc);
}

static void test_same_storage_errors(void **state)
{
    (void)state;
    const float xs[] = { 1, 2 };
    const int64_t s2[] = { 2 };
    td_tensor *a = NULL, *b = NULL;
    bool s = true;
    tdt_check(td_float_from_data(cpu, xs, s2, 1, &a), "from_data");
    tdt_check(td_float_from_data(cpu, xs, s2, 1, &b), "from_data");
    tdt_expect_error(td_testing_same_storage(NULL, a, &s), TD_E_NULL, "testing_same_storage");
    tdt_expect_error(td_testing_same_storage(a, NULL, &s), TD_E_NULL, "testing_same_storage");
    tdt_expect_error(td_testing_same_storage(a, a, NULL), TD_E_NULL, "testing_same_storage");
    assert_false(same(a, b)); /* equal elements, two storages */
    assert_true(same(a, a));
    td_tensor_release(a);
    td_tensor_release(b);
}

static int setup(void **state)
{
    (void)state;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK)
        return -1;
    return td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(ad);
    td_device_release(cpu);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_large_view),
        TDT_TEST(test_view_on_the_tape),
        TDT_TEST(test_view_allocation_failure),
        TDT_TEST(test_empty_and_scalar_views),
        TDT_TEST(test_same_storage_errors),
    };
    return cmocka_run_group_tests_name("views", tests, setup, teardown);
}
