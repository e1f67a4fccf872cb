/* TD_CHECKPOINT_DEFAULT: an autodiff device for a user with no opinion on checkpointing is
 * a NONE device: its tensors carry NONE, mix with a NONE device's, clash with a BALANCED
 * one's, and keep what a NONE graph keeps; unknown strategies stay errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *cpu, *ad_none, *ad_bal;

static void test_default_is_none(void **state)
{
    (void)state;
    td_device *ad = NULL;
    tdt_check(td_device_autodiff(cpu, TD_CHECKPOINT_DEFAULT, &ad), "device_autodiff(DEFAULT)");
    static const float v[] = { 1, 2, 3 };
    static const int64_t s[] = { 3 };
    td_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    tdt_check(td_float_from_data(ad, v, s, 1, &a), "a");
    td_autodiff_context ctx = { 0 };
    tdt_check(td_tensor_autodiff_context(a, &ctx), "context");
    assert_true(ctx.enabled);
    assert_int_equal(ctx.strategy, TD_CHECKPOINT_NONE);
    /* mixes with a NONE device's tensor, clashes with a BALANCED one's */
    tdt_check(td_float_from_data(ad_none, v, s, 1, &b), "b");
    tdt_check(td_float_add(a, b, &c), "DEFAULT + NONE");
    td_tensor_release(c);
    tdt_check(td_float_from_data(ad_bal, v, s, 1, &d), "d");
    c = NULL;
    tdt_expect_error(td_float_add(a, d, &c), TD_E_AUTODIFF_CONTEXT, "float_add");
    /* the graph keeps what NONE keeps: exp's result, for its backward */
    tdt_check(td_require_grad(a), "require_grad");
    tdt_check(td_require_grad(b), "require_grad");
    td_tensor *ea = NULL, *eb = NULL, *sa = NULL, *sb = NULL;
    tdt_check(td_float_exp(a, &ea), "exp");
    tdt_check(td_float_exp(b, &eb), "exp");
    tdt_check(td_float_sin(ea, &sa), "sin");
    tdt_check(td_float_sin(eb, &sb), "sin");
    int64_t bytes_default = -1, bytes_none = -2;
    tdt_check(td_testing_graph_bytes(sa, &bytes_default), "graph bytes");
    tdt_check(td_testing_graph_bytes(sb, &bytes_none), "graph bytes");
    assert_int_equal(bytes_default, bytes_none);
    td_tensor_release(sa);
    td_tensor_release(sb);
    td_tensor_release(ea);
    td_tensor_release(eb);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(d);
    td_device_release(ad);
}

static void test_set_context_default(void **state)
{
    (void)state;
    static const float v[] = { 1 };
    td_tensor *a = NULL;
    tdt_check(td_float_from_data(ad_bal, v, NULL, 0, &a), "a");
    tdt_check(td_tensor_set_autodiff_context(a, (td_autodiff_context){ .enabled = true,
                                                                       .strategy = TD_CHECKPOINT_DEFAULT }),
              "set DEFAULT");
    td_autodiff_context ctx = { 0 };
    tdt_check(td_tensor_autodiff_context(a, &ctx), "context");
    assert_int_equal(ctx.strategy, TD_CHECKPOINT_NONE);
    tdt_expect_error(td_tensor_set_autodiff_context(a, (td_autodiff_context){ .enabled = true, .strategy = 7 }),
                     TD_E_INVALID, "tensor_set_autodiff_context");
    td_tensor_release(a);
}

static void test_unknown_strategy(void **state)
{
    (void)state;
    td_device *ad = (td_device *)&ad;
    tdt_expect_error(td_device_autodiff(cpu, (td_checkpoint)3, &ad), TD_E_INVALID, "device_autodiff");
    assert_null(ad);
    tdt_expect_error(td_device_autodiff(cpu, (td_checkpoint)-1, &ad), TD_E_INVALID, "device_autodiff");
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &cpu, &ad_none, &ad_bal);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(cpu, ad_none, ad_bal);
}

int main(void)
{
    const struct CMUnitTest tests[] = { TDT_TEST(test_default_is_none), TDT_TEST(test_set_context_default),
                                        TDT_TEST(test_unknown_strategy) };
    return cmocka_run_group_tests(tests, setup, teardown);
}
