/* Activations, cross-entropy and bool masks (specs/ops/activation.lua, bool_ops.lua):
 * the error paths the generated tests do not reach, and gradients checked against values
 * worked out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

static td_device *dev;    /* cpu:0 */
static td_device *ad_dev; /* autodiff(cpu:0, NONE) */

static void expect_error(td_status st, td_status want, const char *op, td_tensor *out)
{
    tdt_expect_error(st, want, op);
    assert_null(out);
}

static void test_cross_entropy_targets_out_of_range(void **state)
{
    (void)state;
    const float lv[] = { 1, 2, 3, 0, 0, -1 };
    const int64_t ls[] = { 2, 3 }, ts[] = { 2 };
    td_tensor *logits = tdt_make(dev, TD_F32, lv, ls, 2);
    const int32_t bad[][2] = { { 0, 3 }, { -1, 0 }, { 2, INT32_MIN } };
    for (int k = 0; k < 3; k++) {
        td_tensor *t = tdt_make(dev, TD_I32, bad[k], ts, 1), *out = NULL;
        expect_error(td_float_cross_entropy(logits, t, &out), TD_E_RANGE, "float_cross_entropy", out);
        assert_non_null(strstr(td_last_error(), "of targets) is out of range for dim 1 of size 3"));
        td_tensor_release(t);
    }
    td_tensor_release(logits);
}

static void test_cross_entropy_shapes(void **state)
{
    (void)state;
    const float lv[12] = { 0 };
    const int32_t tv[4] = { 0 };
    const int64_t s1[] = { 6 }, s2[] = { 2, 3 }, s3[] = { 2, 3, 2 }, t1[] = { 2 }, t3[] = { 3 }, t22[] = { 2, 2 };
    td_tensor *l1 = tdt_make(dev, TD_F32, lv, s1, 1), *l2 = tdt_make(dev, TD_F32, lv, s2, 2);
    td_tensor *l3 = tdt_make(dev, TD_F32, lv, s3, 3);
    td_tensor *ta = tdt_make(dev, TD_I32, tv, t1, 1), *tb = tdt_make(dev, TD_I32, tv, t3, 1);
    td_tensor *tc = tdt_make(dev, TD_I32, tv, t22, 2), *out = NULL;
    expect_error(td_float_cross_entropy(l1, ta, &out), TD_E_SHAPE, "float_cross_entropy", out);
    expect_error(td_float_cross_entropy(l3, ta, &out), TD_E_SHAPE, "float_cross_entropy", out);
    expect_error(td_float_cross_entropy(l2, tb, &out), TD_E_SHAPE, "float_cross_entropy", out);
    expect_error(td_float_cross_entropy(l2, tc, &out), TD_E_SHAPE, "float_cross_entropy", out);
    td_tensor *all[] = { l1, l2, l3, ta, tb, tc };
    for (int i = 0; i < 6; i++)
        td_tensor_release(all[i]);
}

static void test_softmax_dims_out_of_range(void **state)
{
    (void)state;
    const float v[6] = { 1, 2, 3, 4, 5, 6 };
    const int64_t s[] = { 2, 3 };
    td_tensor *a = tdt_make(dev, TD_F32, v, s, 2), *z = tdt_make(dev, TD_F32, v, NULL, 0), *out = NULL;
    const int64_t dims[] = { 2, -3, 100 };
    for (int k = 0; k < 3; k++) {
        expect_error(td_float_softmax(a, dims[k], &out), TD_E_RANGE, "float_softmax", out);
        expect_error(td_float_log_softmax(a, dims[k], &out), TD_E_RANGE, "float_log_softmax", out);
        expect_error(td_float_softmin(a, dims[k], &out), TD_E_RANGE, "float_softmin", out);
    }
    /* a 0-dim tensor takes dim 0 or -1 (one element: softmax 1, as in PyTorch), no other */
    expect_error(td_float_softmax(z, 1, &out), TD_E_RANGE, "float_softmax", out);
    const float one = 1.0f;
    tdt_check(td_float_softmax(z, -1, &out), "softmax of a 0-d tensor");
    tdt_expect(out, TD_F32, NULL, 0, &one, 1, 0.0f);
    td_tensor_release(out);
    td_tensor_release(a);
    td_tensor_release(z);
}

static void test_prelu_and_mask_fill_shapes(void **state)
{
    (void)state;
    const float v[24] = { 0 };
    const bool m[24] = { false };
    const int64_t s[] = { 2, 3 }, w1[] = { 2 }, w2[] = { 4, 2, 3 };
    td_tensor *a = tdt_make(dev, TD_F32, v, s, 2), *wa = tdt_make(dev, TD_F32, v, w1, 1);
    td_tensor *wb = tdt_make(dev, TD_F32, v, w2, 3), *out = NULL;
    expect_error(td_float_prelu(a, wa, &out), TD_E_SHAPE, "float_prelu", out);
    expect_error(td_float_prelu(a, wb, &out), TD_E_SHAPE, "float_prelu", out);
    td_tensor *b = tdt_make(dev, TD_BOOL, m, s, 2), *ma = tdt_make(dev, TD_BOOL, m, w1, 1);
    td_tensor *mb = tdt_make(dev, TD_BOOL, m, w2, 3);
    expect_error(td_bool_mask_fill(b, ma, 1, &out), TD_E_SHAPE, "bool_mask_fill", out);
    expect_error(td_bool_mask_fill(b, mb, 1, &out), TD_E_SHAPE, "bool_mask_fill", out);
    expect_error(td_bool_xor(b, ma, &out), TD_E_SHAPE, "bool_xor", out);
    td_tensor *all[] = { a, wa, wb, b, ma, mb };
    for (int i = 0; i < 6; i++)
        td_tensor_release(all[i]);
}

/* d/dlogits of cross-entropy: (softmax(logits) - one_hot(targets)) / N. Logits [2, 2] =
 * [[0, 0], [0, ln 3]], targets (1, 0): softmax rows (1/2, 1/2) and (1/4, 3/4), so the
 * gradient is [[1/2, -1/2], [1/4 - 1, 3/4]] / 2. */
static void test_cross_entropy_gradient(void **state)
{
    (void)state;
    const float lv[] = { 0, 0, 0, logf(3.0f) };
    const int32_t tv[] = { 1, 0 };
    const int64_t ls[] = { 2, 2 }, ts[] = { 2 };
    td_tensor *logits = tdt_make(ad_dev, TD_F32, lv, ls, 2), *t = tdt_make(ad_dev, TD_I32, tv, ts, 1);
    td_tensor *loss = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(td_require_grad(logits), "require_grad");
    tdt_check(td_float_cross_entropy(logits, t, &loss), "cross_entropy");
    tdt_check(td_backward(loss, &grads), "backward");
    tdt_check(td_grads_get(grads, logits, &g), "grads_get");
    const float want[] = { 0.25f, -0.25f, -0.375f, 0.375f };
    tdt_expect(g, TD_F32, ls, 2, want, 4, 1e-6f);
    /* the loss: (-log(1/2) - log(1/4)) / 2 */
    float l = 0;
    tdt_check(td_float_into_data(loss, &l, 1), "into_data");
    assert_true(tdt_close(l, (logf(2.0f) + logf(4.0f)) / 2.0f, 1e-6f));
    td_grads_release(grads);
    td_tensor *all[] = { logits, t, loss, g };
    for (int i = 0; i < 4; i++)
        td_tensor_release(all[i]);
}

/* softmax's gradient y * (g - sum(g * y)): with y = (1/4, 3/4) (logits (0, ln 3)) and the
 * seed g = (1, 0), it is (1/4 * (1 - 1/4), 3/4 * (0 - 1/4)) = (3/16, -3/16). */
static void test_softmax_gradient(void **state)
{
    (void)state;
    const float lv[] = { 0, logf(3.0f) };
    const float sv[] = { 1, 0 };
    const int64_t s[] = { 2 };
    td_tensor *x = tdt_make(ad_dev, TD_F32, lv, s, 1), *seed = tdt_make(dev, TD_F32, sv, s, 1);
    td_tensor *y = NULL, *g = NULL;
    td_grads *grads = NULL;
    tdt_check(td_require_grad(x), "require_grad");
    tdt_check(td_float_softmax(x, -1, &y), "softmax");
    tdt_check(td_backward_seeded(y, seed, &grads), "backward");
    tdt_check(td_grads_get(grads, x, &g), "grads_get");
    const float want[] = { 0.1875f, -0.1875f };
    tdt_expect(g, TD_F32, s, 1, want, 2, 1e-6f);
    td_grads_release(grads);
    td_tensor *all[] = { x, seed, y, g };
    for (int i = 0; i < 4; i++)
        td_tensor_release(all[i]);
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
        TDT_TEST(test_cross_entropy_targets_out_of_range),
        TDT_TEST(test_cross_entropy_shapes),
        TDT_TEST(test_softmax_dims_out_of_range),
        TDT_TEST(test_prelu_and_mask_fill_shapes),
        TDT_TEST(test_cross_entropy_gradient),
        TDT_TEST(test_softmax_gradient),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
