/* The gradients of one MLP step on autodiff(vulkan) match autodiff(cpu): same data, same
 * parameters, linear -> relu -> linear -> softmax cross-entropy. Tolerance for f32 on two
 * backends: |vk - cpu| <= 1e-5 + 1e-4 |cpu|. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

enum { N = 32, IN = 2, HID = 16, OUT = 3 };

/* loss = -mean(sum(onehot * log_softmax(relu(x W1 + b1) W2 + b2), 1)); grads of W1 b1 W2 b2. */
static void mlp_grads(td_device *inner, const float *xs, const float *ys, const float *const *init,
                      const int64_t *const *shapes, float **grads, const int64_t *sizes)
{
    td_device *ad = NULL;
    tdt_check(td_device_autodiff(inner, TD_CHECKPOINT_NONE, &ad), "autodiff");
    const int64_t sx[] = { N, IN }, sy[] = { N, OUT };
    td_tensor *x = NULL, *y = NULL, *p[4] = { NULL };
    tdt_check(td_float_from_data(ad, xs, sx, 2, &x), "x");
    tdt_check(td_float_from_data(ad, ys, sy, 2, &y), "y");
    for (int i = 0; i < 4; i++) {
        tdt_check(td_float_from_data(ad, init[i], shapes[i], 2, &p[i]), "param");
        tdt_check(td_require_grad(p[i]), "require_grad");
    }
    td_tensor *t[13] = { NULL };
    tdt_check(td_float_matmul(x, p[0], &t[0]), "matmul");
    tdt_check(td_float_add(t[0], p[1], &t[1]), "add");
    tdt_check(td_float_relu(t[1], &t[2]), "relu");
    tdt_check(td_float_matmul(t[2], p[2], &t[3]), "matmul");
    tdt_check(td_float_add(t[3], p[3], &t[4]), "add");
    tdt_check(td_float_max_dim(t[4], 1, &t[5]), "max");
    tdt_check(td_detach(t[5], &t[6]), "detach");
    tdt_check(td_float_sub(t[4], t[6], &t[7]), "shift");
    tdt_check(td_float_exp(t[7], &t[8]), "exp");
    tdt_check(td_float_sum_dim(t[8], 1, &t[9]), "sum_dim");
    tdt_check(td_float_log(t[9], &t[10]), "log");
    tdt_check(td_float_sub(t[7], t[10], &t[11]), "log_softmax");
    td_tensor *picked = NULL, *total = NULL, *loss = NULL;
    tdt_check(td_float_mul(t[11], y, &picked), "pick");
    tdt_check(td_float_sum(picked, &total), "sum");
    tdt_check(td_float_mul_scalar(total, -1.0f / N, &loss), "mean");
    td_grads *g = NULL;
    tdt_check(td_backward(loss, &g), "backward");
    for (int i = 0; i < 4; i++) {
        td_tensor *gi = NULL;
        tdt_check(td_grads_get(g, p[i], &gi), "grads_get");
        assert_non_null(gi);
        td_backend kind;
        tdt_check(td_tensor_backend(gi, &kind), "backend");
        td_backend want;
        tdt_check(td_device_backend(inner, &want), "device backend");
        assert_int_equal(kind, want); /* gradients live on the inner backend */
        tdt_check(td_float_into_data(gi, grads[i], sizes[i]), "read grad");
        td_tensor_release(gi);
    }
    td_grads_release(g);
    for (int i = 0; i < 13; i++)
        td_tensor_release(t[i]);
    for (int i = 0; i < 4; i++)
        td_tensor_release(p[i]);
    td_tensor *rest[] = { x, y, picked, total, loss };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        td_tensor_release(rest[i]);
    td_device_release(ad);
}

static float next(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static void test_mlp_gradients_match_cpu(void **state)
{
    (void)state;
    static float xs[N * IN], ys[N * OUT], w1[IN * HID], b1[HID], w2[HID * OUT], b2[OUT];
    unsigned s = 7;
    for (int i = 0; i < N * IN; i++)
        xs[i] = next(&s);
    memset(ys, 0, sizeof ys);
    for (int i = 0; i < N; i++)
        ys[i * OUT + i % OUT] = 1.0f;
    float *inits[] = { w1, b1, w2, b2 };
    const int64_t sizes[] = { IN * HID, HID, HID * OUT, OUT };
    for (int k = 0; k < 4; k++)
        for (int64_t i = 0; i < sizes[k]; i++)
            inits[k][i] = next(&s);
    static const int64_t s1[] = { IN, HID }, s2[] = { 1, HID }, s3[] = { HID, OUT }, s4[] = { 1, OUT };
    const int64_t *shapes[] = { s1, s2, s3, s4 };
    static float gc[4][IN * HID + HID * OUT], gv[4][IN * HID + HID * OUT];
    float *gcp[] = { gc[0], gc[1], gc[2], gc[3] }, *gvp[] = { gv[0], gv[1], gv[2], gv[3] };
    td_device *cpu = NULL, *vk = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "cpu");
    tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &vk), "vulkan");
    mlp_grads(cpu, xs, ys, (const float *const *)inits, shapes, gcp, sizes);
    mlp_grads(vk, xs, ys, (const float *const *)inits, shapes, gvp, sizes);
    double worst = 0.0;
    for (int k = 0; k < 4; k++) {
        for (int64_t i = 0; i < sizes[k]; i++) {
            float c = gc[k][i], v = gv[k][i];
            double err = fabs((double)v - (double)c) / (1e-5 + 1e-4 * fabs((double)c));
            worst = err > worst ? err : worst;
            if (err > 1.0)
                fail_msg("parameter %d element %lld: cpu %.9g, vulkan %.9g", k, (long long)i, (double)c, (double)v);
        }
    }
    print_message("worst gradient difference: %.3g of the tolerance\n", worst);
    td_device_release(vk);
    td_device_release(cpu);
    assert_int_equal(td_testing_live_objects(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_mlp_gradients_match_cpu) };
    return cmocka_run_group_tests_name("vulkan_mlp_grads", tests, NULL, NULL);
}
