/* A build without MPI: the distributed API and the collectives' arms say unsupported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static void test_api_unsupported(void **state)
{
    (void)state;
    assert_false(td_dist_available());
    assert_int_equal(td_dist_init(NULL, NULL), TD_E_UNSUPPORTED);
    assert_non_null(strstr(td_last_error(), "no MPI"));
    td_group *g = (td_group *)1;
    assert_int_equal(td_group_world(&g), TD_E_UNSUPPORTED);
    assert_null(g);
}

static void test_arms_unsupported(void **state)
{
    (void)state;
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "cpu");
    td_tensor *x = tdt_filled(cpu, TD_F32, (const int64_t[]){ 2 }, 1), *r = NULL;
    /* No group can exist without MPI; any non-NULL handle reaches the arm, which does not
     * touch it. */
    td_group *no_group = (td_group *)(void *)&r;
    assert_int_equal(td_float_all_reduce(x, no_group, TD_REDUCE_SUM, &r), TD_E_UNSUPPORTED);
    assert_string_equal(td_last_error(), "float_all_reduce: backend 'cpu' has collectives, but this build has no MPI");
    assert_int_equal(td_float_broadcast(x, no_group, 0, &r), TD_E_UNSUPPORTED);
    assert_null(r);
    /* Everything else works. */
    td_tensor *y = NULL;
    tdt_check(td_float_add(x, x, &y), "add");
    td_tensor_release(y);
    td_tensor_release(x);
    td_device_release(cpu);
    assert_int_equal(td_testing_live_objects(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_unsupported),
        cmocka_unit_test(test_arms_unsupported),
    };
    return cmocka_run_group_tests_name("dist_nompi", tests, NULL, NULL);
}
