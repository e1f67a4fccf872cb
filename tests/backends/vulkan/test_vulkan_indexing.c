/* Indexing ops on Vulkan (issue 10): index values out of range are TD_E_RANGE with no
 * result and nothing leaked; the indices are read back and checked before any dispatch. */
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

static td_device *dev;    /* vulkan:0 */
static td_device *ad_dev; /* autodiff(vulkan:0, NONE) */

static const int64_t s23[] = { 2, 3 };
static const float f23[] = { 1, 2, 3, 4, 5, 6 };
static const int32_t i23[] = { 1, 2, 3, 4, 5, 6 };
static const bool b23[] = { true, false, true, false, true, false };

/* Indices {0, bad} of shape [2, 1] (gather, scatter_add) or [2] (select, select_add), dim 1
 * of size 3: every op refuses them. */
static void expect_bad_index(int32_t bad)
{
    const int64_t s21[] = { 2, 1 }, s2[] = { 2 }, s22[] = { 2, 2 };
    const int32_t iv[] = { 0, bad };
    td_tensor *fa = tdt_make(dev, TD_F32, f23, s23, 2), *ia = tdt_make(dev, TD_I32, i23, s23, 2);
    td_tensor *ba = tdt_make(dev, TD_BOOL, b23, s23, 2);
    td_tensor *g = tdt_make(dev, TD_I32, iv, s21, 2), *sel = tdt_make(dev, TD_I32, iv, s2, 1);
    td_tensor *fv = tdt_make(dev, TD_F32, f23, s21, 2), *iv2 = tdt_make(dev, TD_I32, i23, s21, 2);
    td_tensor *fsv = tdt_make(dev, TD_F32, f23, s22, 2), *isv = tdt_make(dev, TD_I32, i23, s22, 2);
    td_tensor *out = (td_tensor *)&out;
    tdt_expect_error(td_float_gather(fa, 1, g, &out), TD_E_RANGE, "float_gather");
    assert_null(out);
    tdt_expect_error(td_int_gather(ia, 1, g, &out), TD_E_RANGE, "int_gather");
    assert_null(out);
    tdt_expect_error(td_bool_gather(ba, 1, g, &out), TD_E_RANGE, "bool_gather");
    assert_null(out);
    tdt_expect_error(td_float_scatter_add(fa, 1, g, fv, &out), TD_E_RANGE, "float_scatter_add");
    assert_null(out);
    tdt_expect_error(td_int_scatter_add(ia, 1, g, iv2, &out), TD_E_RANGE, "int_scatter_add");
    assert_null(out);
    tdt_expect_error(td_float_scatter_assign(fa, 1, g, fv, &out), TD_E_RANGE, "float_scatter_assign");
    assert_null(out);
    tdt_expect_error(td_int_scatter_assign(ia, 1, g, iv2, &out), TD_E_RANGE, "int_scatter_assign");
    assert_null(out);
    tdt_expect_error(td_int_one_hot(sel, 3, &out), TD_E_RANGE, "int_one_hot");
    assert_null(out);
    tdt_expect_error(td_float_select(fa, 1, sel, &out), TD_E_RANGE, "float_select");
    assert_null(out);
    tdt_expect_error(td_int_select(ia, -1, sel, &out), TD_E_RANGE, "int_select");
    assert_null(out);
    tdt_expect_error(td_bool_select(ba, 1, sel, &out), TD_E_RANGE, "bool_select");
    assert_null(out);
    tdt_expect_error(td_float_select_add(fa, 1, sel, fsv, &out), TD_E_RANGE, "float_select_add");
    assert_null(out);
    tdt_expect_error(td_int_select_add(ia, 1, sel, isv, &out), TD_E_RANGE, "int_select_add");
    assert_null(out);
    td_tensor *all[] = { fa, ia, ba, g, sel, fv, iv2, fsv, isv };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

static void test_index_too_large(void **state)
{
    (void)state;
    expect_bad_index(3);
    expect_bad_index(INT32_MAX);
}

static void test_index_negative(void **state)
{
    (void)state;
    expect_bad_index(-1);
    expect_bad_index(INT32_MIN);
}

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_VULKAN, &dev, &ad_dev, NULL);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_index_too_large),
        TDT_TEST(test_index_negative),
    };
    return cmocka_run_group_tests_name("vulkan_indexing", tests, group_setup, group_teardown);
}
