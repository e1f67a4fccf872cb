/* td_external.h: CPU tensors over memory the library did not allocate (the Python module's
 * DLPack import) and the host address of CPU tensors (its buffer protocol and export). The
 * release callback runs exactly once, after the last tensor or view over the memory; at
 * once for zero elements and on every error; ops read the memory in place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_external.h"
#include "td_ops.h"
#include "tdt.h"

static td_device *cpu, *ad;

typedef struct owner {
    int releases;
    float data[6];
} owner;

static void release_cb(void *ctx)
{
    ((owner *)ctx)->releases++;
}

static void test_wrap_read_and_release(void **state)
{
    (void)state;
    owner o = { 0, { 1, 2, 3, 4, 5, 6 } };
    const int64_t s23[] = { 2, 3 }, s6[] = { 6 };
    td_tensor *t = NULL, *v = NULL, *sum = NULL;
    tdt_check(td_tensor_from_external(cpu, TD_F32, s23, 2, o.data, release_cb, &o, &t), "from_external");
    void *p = NULL;
    tdt_check(td_tensor_host_data(t, &p), "host_data");
    assert_ptr_equal(p, o.data); /* no copy */
    o.data[5] = 60; /* written by the owner: seen by the tensor */
    tdt_check(td_float_sum(t, &sum), "sum");
    const float want = 1 + 2 + 3 + 4 + 5 + 60;
    tdt_expect(sum, TD_F32, NULL, 0, &want, 1, 0);
    tdt_check(td_float_reshape(t, s6, 1, &v), "reshape"); /* a view shares the memory */
    td_tensor_release(t);
    assert_int_equal(o.releases, 0); /* the view still holds it */
    tdt_check(td_tensor_host_data(v, &p), "host_data of the view");
    assert_ptr_equal(p, o.data);
    td_tensor_release(v);
    assert_int_equal(o.releases, 1);
    td_tensor_release(sum);
    assert_int_equal(o.releases, 1);
}

static void test_empty_and_errors_release_at_once(void **state)
{
    (void)state;
    owner o = { 0, { 0 } };
    const int64_t s0[] = { 0, 3 }, s2[] = { 2 }, bad[] = { -1 };
    td_tensor *t = NULL;
    tdt_check(td_tensor_from_external(cpu, TD_F32, s0, 2, NULL, release_cb, &o, &t), "empty");
    assert_int_equal(o.releases, 1);
    int64_t n = -1;
    tdt_check(td_tensor_numel(t, &n), "numel");
    assert_int_equal(n, 0);
    td_tensor_release(t);
    assert_int_equal(o.releases, 1);

    tdt_expect_error(td_tensor_from_external(ad, TD_F32, s2, 1, o.data, release_cb, &o, &t), TD_E_INVALID,
                     "tensor_from_external");
    assert_null(t);
    assert_int_equal(o.releases, 2);
    tdt_expect_error(td_tensor_from_external(cpu, TD_F32, s2, 1, NULL, release_cb, &o, &t), TD_E_INVALID,
                     "tensor_from_external");
    assert_int_equal(o.releases, 3);
    tdt_expect_error(td_tensor_from_external(cpu, TD_F32, s2, 1, (char *)o.data + 1, release_cb, &o, &t),
                     TD_E_INVALID, "tensor_from_external");
    assert_int_equal(o.releases, 4);
    tdt_expect_error(td_tensor_from_external(cpu, TD_F32, bad, 1, o.data, release_cb, &o, &t), TD_E_SHAPE,
                     "tensor_from_external");
    assert_int_equal(o.releases, 5);
    tdt_expect_error(td_tensor_from_external(cpu, TD_F32, s2, 1, o.data, release_cb, &o, NULL), TD_E_NULL,
                     "tensor_from_external");
    assert_int_equal(o.releases, 6);
    /* no callback: the memory stays the caller's */
    tdt_check(td_tensor_from_external(cpu, TD_F32, s2, 1, o.data, NULL, NULL, &t), "no callback");
    td_tensor_release(t);
    assert_int_equal(o.releases, 6);
}

static void test_on_the_tape(void **state)
{
    (void)state;
    owner o = { 0, { 1, 2, 3 } };
    const int64_t s3[] = { 3 };
    td_tensor *x = NULL, *xa = NULL, *w = NULL, *y = NULL, *loss = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(td_tensor_from_external(cpu, TD_F32, s3, 1, o.data, release_cb, &o, &x), "from_external");
    tdt_check(td_float_to_device(x, ad, &xa), "to autodiff");
    const float wv[] = { 2, 2, 2 };
    w = tdt_make_f32(ad, wv, s3, 1);
    tdt_check(td_require_grad(w), "require_grad");
    tdt_check(td_float_mul(w, xa, &y), "mul");
    tdt_check(td_float_sum(y, &loss), "sum");
    td_tensor_release(x);
    tdt_check(td_backward(loss, &grads), "backward");
    tdt_check(td_grads_get(grads, w, &g), "grads_get");
    tdt_expect(g, TD_F32, s3, 1, o.data, 3, 0); /* d(sum(w x))/dw = x */
    td_tensor_release(g);
    td_grads_release(grads);
    td_tensor_release(loss);
    td_tensor_release(y);
    td_tensor_release(w);
    void *p = NULL;
    tdt_check(td_tensor_host_data(xa, &p), "host_data of an autodiff tensor over the cpu");
    assert_non_null(p);
    td_tensor_release(xa);
    assert_int_equal(o.releases, 1);
}

static void test_host_data_errors(void **state)
{
    (void)state;
    void *p = (void *)&p;
    tdt_expect_error(td_tensor_host_data(NULL, &p), TD_E_NULL, "tensor_host_data");
    assert_null(p);
    const int64_t s1[] = { 1 };
    const float one = 1;
    td_tensor *t = tdt_make_f32(cpu, &one, s1, 1);
    tdt_expect_error(td_tensor_host_data(t, NULL), TD_E_NULL, "tensor_host_data");
    td_tensor_release(t);
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
        TDT_TEST(test_wrap_read_and_release),
        TDT_TEST(test_empty_and_errors_release_at_once),
        TDT_TEST(test_on_the_tape),
        TDT_TEST(test_host_data_errors),
    };
    return cmocka_run_group_tests_name("external", tests, setup, teardown);
}
