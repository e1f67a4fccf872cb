/* Printing reads a Vulkan tensor back: the same text as NumPy's numpy.array2string of the
 * data (pasted in), with the Vulkan device in the header, for float, int, bool and autodiff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *vk, *ad;

static void expect_text(const td_tensor *t, const char *want)
{
    char buf[512];
    size_t len = 0;
    tdt_check(td_tensor_format(t, buf, sizeof buf, &len), "format");
    assert_string_equal(buf, want);
    assert_int_equal(len, strlen(want));
}

static void test_print_vulkan(void **state)
{
    (void)state;
    static const float v[] = { 1, 2.5f, -3, 4, 5, 6 };
    static const int32_t iv[] = { -7, 12, 3 };
    static const bool bv[] = { false, true };
    static const int64_t s23[] = { 2, 3 }, s3[] = { 3 }, s2[] = { 2 };
    td_tensor *t = tdt_make(vk, TD_F32, v, s23, 2);
    assert_non_null(t);
    expect_text(t, "tensor shape=[2, 3] dtype=f32 device=vulkan:0\n[[ 1.   2.5 -3. ]\n [ 4.   5.   6. ]]");
    td_tensor_release(t);
    t = tdt_make(vk, TD_I32, iv, s3, 1);
    assert_non_null(t);
    expect_text(t, "tensor shape=[3] dtype=i32 device=vulkan:0\n[-7 12  3]");
    td_tensor_release(t);
    t = tdt_make(vk, TD_BOOL, bv, s2, 1);
    assert_non_null(t);
    expect_text(t, "tensor shape=[2] dtype=bool device=vulkan:0\n[False  True]");
    td_tensor_release(t);
    t = tdt_make(ad, TD_F32, v, s23, 2);
    assert_non_null(t);
    expect_text(t, "tensor shape=[2, 3] dtype=f32 device=autodiff(vulkan:0, none)\n"
                   "[[ 1.   2.5 -3. ]\n [ 4.   5.   6. ]]");
    td_tensor_release(t);
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_VULKAN, &vk, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(vk, ad, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = { TDT_TEST(test_print_vulkan) };
    return cmocka_run_group_tests(tests, setup, teardown);
}
