/* Checkpointing on a multi-layer network: 4 layers of linear + bias + activation (relu,
 * tanh, sigmoid, relu), batch 32, width 64, built from the same data and parameters on
 * autodiff(cpu) under NONE and under BALANCED.
 *  - BALANCED keeps fewer bytes for backward than NONE, and both give the same gradients;
 *  - backward releases the graph: a second backward on the same loss is TD_E_AUTODIFF;
 *  - an error in the middle of a forward pass (a shape mismatch, or an allocation failure
 *    at any point of the forward or of backward) leaks nothing once the handles made so
 *    far are released;
 *  - a graph recorded before a leaf is changed (td_tensor_assign, an optimizer step)
 *    gives the gradient of the value the leaf had when the graph was recorded, under both
 *    strategies. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "td_optim.h"
#include "tdt.h"

#define LAYERS 4
#define BATCH 32
#define WIDTH 64
#define MAX_TMP 64
#define MAX_INJECT 5000 /* far above the allocations of one forward or backward */

static td_device *dev;    /* cpu:0 */
static td_device *ad_dev; /* autodiff(cpu:0, NONE) */
static td_device *ad_bal; /* autodiff(cpu:0, BALANCED) */

/* Host data shared by every network: the input and each layer's weight and bias. */
static float host_x[BATCH * WIDTH];
static float host_w[LAYERS][WIDTH * WIDTH];
static float host_b[LAYERS][WIDTH];

static void fill_host_data(void)
{
    uint64_t s = 0x1234567ull;
    for (size_t i = 0; i < BATCH * WIDTH; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        host_x[i] = (float)((s >> 40) & 0xFFFF) / 32768.0f - 1.0f;
    }
    for (int l = 0; l < LAYERS; l++) {
        for (size_t i = 0; i < WIDTH * WIDTH; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            host_w[l][i] = ((float)((s >> 40) & 0xFFFF) / 32768.0f - 1.0f) * 0.2f;
        }
        for (size_t i = 0; i < WIDTH; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            host_b[l][i] = ((float)((s >> 40) & 0xFFFF) / 32768.0f - 1.0f) * 0.1f;
        }
    }
}

/* A network on one autodiff device: input, leaves, the intermediates of the last forward. */
typedef struct net {
    td_device *ad;
    td_tensor *x;
    td_tensor *w[LAYERS], *b[LAYERS];
    td_tensor *tmp[MAX_TMP];
    int ntmp;
    td_tensor *loss;
} net;

static void net_release(net *n)
{
    td_tensor_release(n->x);
    for (int l = 0; l < LAYERS; l++) {
        td_tensor_release(n->w[l]);
        td_tensor_release(n->b[l]);
    }
    for (int i = 0; i < n->ntmp; i++)
        td_tensor_release(n->tmp[i]);
    td_tensor_release(n->loss);
    memset(n, 0, sizeof *n);
}

/* Keeps *t (NULL after an error) for release; passes st on. t is read here, after the call
 * that is keep's argument has set it. */
static td_status keep(net *n, td_status st, td_tensor **t)
{
    assert_true(n->ntmp < MAX_TMP);
    if (st != TD_OK)
        assert_null(*t);
    n->tmp[n->ntmp++] = *t;
    return st;
}

/* Makes the input and the leaves on ad. bad_w, when in [0, LAYERS), gets a weight of the wrong
 * shape (WIDTH - 1 rows). Stops at the first error; what was made is in n. */
static td_status net_make(net *n, td_device *ad, int bad_w)
{
    const int64_t sx[] = { BATCH, WIDTH }, sw[] = { WIDTH, WIDTH }, sw_bad[] = { WIDTH - 1, WIDTH };
    const int64_t sb[] = { 1, WIDTH };
    memset(n, 0, sizeof *n);
    n->ad = ad;
    td_status st = td_float_from_data(ad, host_x, sx, 2, &n->x);
    for (int l = 0; l < LAYERS && st == TD_OK; l++) {
        st = td_float_from_data(ad, host_w[l], l == bad_w ? sw_bad : sw, 2, &n->w[l]);
        if (st == TD_OK)
            st = td_require_grad(n->w[l]);
        if (st == TD_OK)
            st = td_float_from_data(ad, host_b[l], sb, 2, &n->b[l]);
        if (st == TD_OK)
            st = td_require_grad(n->b[l]);
    }
    return st;
}

/* loss = sum(h4 * h4) / (BATCH * WIDTH), h_l = act_l(h_{l-1} W_l + b_l), acts relu, tanh,
 * sigmoid, relu. Stops at the first error; the intermediates made are in n->tmp. */
static td_status net_forward(net *n)
{
    const td_tensor *h = n->x;
    td_status st = TD_OK;
    for (int l = 0; l < LAYERS && st == TD_OK; l++) {
        td_tensor *a = NULL, *z = NULL, *y = NULL;
        st = keep(n, td_float_matmul(h, n->w[l], &a), &a);
        if (st == TD_OK)
            st = keep(n, td_float_add(a, n->b[l], &z), &z);
        if (st == TD_OK) {
            switch (l % 4) {
            case 0: st = keep(n, td_float_relu(z, &y), &y); break;
            case 1: st = keep(n, td_float_tanh(z, &y), &y); break;
            case 2: st = keep(n, td_float_sigmoid(z, &y), &y); break;
            default: st = keep(n, td_float_relu(z, &y), &y); break;
            }
        }
        h = y;
    }
    td_tensor *sq = NULL, *total = NULL;
    if (st == TD_OK)
        st = keep(n, td_float_mul(h, h, &sq), &sq);
    if (st == TD_OK)
        st = keep(n, td_float_sum(sq, &total), &total);
    if (st == TD_OK)
        st = td_float_mul_scalar(total, 1.0f / (float)(BATCH * WIDTH), &n->loss);
    return st;
}

static void build(net *n, td_device *ad)
{
    tdt_check(net_make(n, ad, -1), "net_make");
    tdt_check(net_forward(n), "net_forward");
}

static float *grad_of(const td_grads *g, const td_tensor *leaf, int64_t want_numel)
{
    td_tensor *t = NULL;
    tdt_check(td_grads_get(g, leaf, &t), "grads_get");
    assert_non_null(t);
    td_backend kind;
    tdt_check(td_tensor_backend(t, &kind), "backend");
    assert_int_equal(kind, TD_BACKEND_CPU); /* gradients are tensors of the inner backend */
    int64_t numel = 0;
    float *data = tdt_read(t, &numel);
    td_tensor_release(t);
    assert_non_null(data);
    assert_int_equal(numel, want_numel);
    return data;
}

/* Fails unless every element agrees within 1e-6 relative + 1e-7 absolute. */
static void expect_same_grads(const char *what, const float *a, const float *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double tol = 1e-6 * fmax(fabs((double)a[i]), fabs((double)b[i])) + 1e-7;
        if (!(d <= tol)) {
            print_error("%s[%lld]: NONE %.9g, BALANCED %.9g\n", what, (long long)i, (double)a[i], (double)b[i]);
            fail();
        }
    }
}

/* ---- (a), (b), (c) ---- */

static void test_balanced_keeps_less_and_gives_the_same_gradients(void **state)
{
    (void)state;
    net none, bal;
    build(&none, ad_dev);
    build(&bal, ad_bal);

    int64_t bytes_none = 0, bytes_bal = 0;
    tdt_check(td_testing_graph_bytes(none.loss, &bytes_none), "graph_bytes");
    tdt_check(td_testing_graph_bytes(bal.loss, &bytes_bal), "graph_bytes");
    print_message("graph bytes at the start of backward: NONE %lld, BALANCED %lld (%.0f%%)\n",
                  (long long)bytes_none, (long long)bytes_bal, 100.0 * (double)bytes_bal / (double)bytes_none);
    assert_true(bytes_none > 0);
    assert_true(bytes_bal > 0);
    assert_true(bytes_bal < bytes_none);

    float lv_none, lv_bal;
    tdt_check(td_float_into_data(none.loss, &lv_none, 1), "into_data");
    tdt_check(td_float_into_data(bal.loss, &lv_bal, 1), "into_data");
    assert_true(lv_none == lv_bal);

    td_grads *g_none = NULL, *g_bal = NULL;
    tdt_check(td_backward(none.loss, &g_none), "backward NONE");
    tdt_check(td_backward(bal.loss, &g_bal), "backward BALANCED");
    for (int l = 0; l < LAYERS; l++) {
        char what[32];
        float *a = grad_of(g_none, none.w[l], WIDTH * WIDTH), *b = grad_of(g_bal, bal.w[l], WIDTH * WIDTH);
        snprintf(what, sizeof what, "dW%d", l + 1);
        expect_same_grads(what, a, b, WIDTH * WIDTH);
        bool nonzero = false;
        for (int i = 0; i < WIDTH * WIDTH && !nonzero; i++)
            nonzero = a[i] != 0.0f;
        assert_true(nonzero);
        free(a);
        free(b);
        a = grad_of(g_none, none.b[l], WIDTH);
        b = grad_of(g_bal, bal.b[l], WIDTH);
        snprintf(what, sizeof what, "db%d", l + 1);
        expect_same_grads(what, a, b, WIDTH);
        free(a);
        free(b);
    }
    /* The input took no gradient. */
    td_tensor *gx = (td_tensor *)1;
    tdt_check(td_grads_get(g_none, none.x, &gx), "grads_get");
    assert_null(gx);
    td_grads_release(g_none);
    td_grads_release(g_bal);

    /* (c) the graph is gone: a second backward fails, and keeps nothing. */
    int64_t after = -1;
    tdt_check(td_testing_graph_bytes(none.loss, &after), "graph_bytes");
    assert_int_equal(after, 0);
    tdt_check(td_testing_graph_bytes(bal.loss, &after), "graph_bytes");
    assert_int_equal(after, 0);
    td_grads *again = (td_grads *)1;
    assert_int_equal(td_backward(none.loss, &again), TD_E_AUTODIFF);
    assert_null(again);
    assert_non_null(strstr(td_last_error(), "backward"));
    again = (td_grads *)1;
    assert_int_equal(td_backward(bal.loss, &again), TD_E_AUTODIFF);
    assert_null(again);

    net_release(&none);
    net_release(&bal);
}

/* The intermediates may go before backward: the graph keeps what it needs. */
static void test_backward_after_intermediates_released(void **state)
{
    (void)state;
    td_device *devs[] = { ad_dev, ad_bal };
    float *ref = NULL;
    for (int d = 0; d < 2; d++) {
        net n;
        build(&n, devs[d]);
        for (int i = 0; i < n.ntmp; i++) {
            td_tensor_release(n.tmp[i]);
            n.tmp[i] = NULL;
        }
        td_grads *g = NULL;
        tdt_check(td_backward(n.loss, &g), "backward");
        float *w1 = grad_of(g, n.w[0], WIDTH * WIDTH);
        if (ref == NULL)
            ref = w1;
        else {
            expect_same_grads("dW1", ref, w1, WIDTH * WIDTH);
            free(w1);
        }
        td_grads_release(g);
        net_release(&n);
    }
    free(ref);
}

/* ---- (d) errors in the middle ---- */

static void test_shape_mismatch_in_layer_3_leaks_nothing(void **state)
{
    (void)state;
    td_device *devs[] = { ad_dev, ad_bal };
    for (int d = 0; d < 2; d++) {
        net n;
        tdt_check(net_make(&n, devs[d], 2), "net_make");
        td_status st = net_forward(&n);
        assert_int_equal(st, TD_E_SHAPE);
        assert_non_null(strstr(td_last_error(), "matmul"));
        assert_null(n.loss);
        /* layers 1 and 2 ran (3 tensors each), layer 3's matmul failed */
        assert_int_equal(n.ntmp, 7);
        assert_null(n.tmp[6]);
        net_release(&n);
        assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
    }
}

/* Allocation n fails, for every n from 0 until the whole build (leaves and forward) succeeds. */
static void test_allocation_failure_during_forward_leaks_nothing(void **state)
{
    (void)state;
    td_device *devs[] = { ad_dev, ad_bal };
    for (int d = 0; d < 2; d++) {
        long n_ok = -1;
        for (long k = 0; k < MAX_INJECT && n_ok < 0; k++) {
            net n;
            td_testing_fail_allocations_after(k);
            td_status st = net_make(&n, devs[d], -1);
            if (st == TD_OK)
                st = net_forward(&n);
            td_testing_fail_allocations_after(-1);
            if (st == TD_OK) {
                n_ok = k;
                /* what was built works */
                td_grads *g = NULL;
                tdt_check(td_backward(n.loss, &g), "backward");
                td_grads_release(g);
            } else if (st != TD_E_NOMEM) {
                print_error("allocation %ld: expected TD_E_NOMEM, got %s (%s)\n", k, td_status_name(st),
                            td_last_error());
                fail();
            }
            net_release(&n);
            if (td_testing_live_objects() != tdt_live_baseline()) {
                print_error("allocation %ld failing in the forward (%s): %ld objects leaked\n", k,
                            d == 0 ? "NONE" : "BALANCED", td_testing_live_objects() - tdt_live_baseline());
                fail();
            }
        }
        assert_true(n_ok > 0);
        print_message("%s: forward needs %ld allocations; every failure point leaks nothing\n",
                      d == 0 ? "NONE" : "BALANCED", n_ok);
    }
}

/* Allocation n of backward fails, for every n until backward succeeds: the graph is released
 * either way, a second backward is TD_E_AUTODIFF, nothing leaks. */
static void test_allocation_failure_during_backward_leaks_nothing(void **state)
{
    (void)state;
    td_device *devs[] = { ad_dev, ad_bal };
    for (int d = 0; d < 2; d++) {
        float *ref = NULL;
        {
            net n;
            build(&n, devs[d]);
            td_grads *g = NULL;
            tdt_check(td_backward(n.loss, &g), "backward");
            ref = grad_of(g, n.w[0], WIDTH * WIDTH);
            td_grads_release(g);
            net_release(&n);
        }
        long n_ok = -1, retry_ok = 0, retry_released = 0;
        for (long k = 0; k < MAX_INJECT && n_ok < 0; k++) {
            net n;
            build(&n, devs[d]);
            td_grads *g = (td_grads *)1;
            td_testing_fail_allocations_after(k);
            td_status st = td_backward(n.loss, &g);
            td_testing_fail_allocations_after(-1);
            if (st == TD_OK) {
                n_ok = k;
                float *w1 = grad_of(g, n.w[0], WIDTH * WIDTH);
                expect_same_grads("dW1", ref, w1, WIDTH * WIDTH);
                free(w1);
                td_grads_release(g);
            } else {
                if (st != TD_E_NOMEM) {
                    print_error("allocation %ld: expected TD_E_NOMEM, got %s (%s)\n", k, td_status_name(st),
                                td_last_error());
                    fail();
                }
                assert_null(g);
                /* A failure once backward has started releases the graph: a retry is
                 * TD_E_AUTODIFF. A failure before it starts (the seed, the node list, the
                 * gradient set) leaves the graph whole: a retry must then give the right
                 * gradients, never ones from a half-run pass. */
                td_grads *again = (td_grads *)1;
                td_status st2 = td_backward(n.loss, &again);
                if (st2 == TD_OK) {
                    retry_ok++;
                    float *w1 = grad_of(again, n.w[0], WIDTH * WIDTH);
                    expect_same_grads("dW1 (retry)", ref, w1, WIDTH * WIDTH);
                    free(w1);
                    td_grads_release(again);
                } else {
                    assert_int_equal(st2, TD_E_AUTODIFF);
                    assert_null(again);
                    retry_released++;
                }
            }
            net_release(&n);
            if (td_testing_live_objects() != tdt_live_baseline()) {
                print_error("allocation %ld failing in backward (%s): %ld objects leaked\n", k,
                            d == 0 ? "NONE" : "BALANCED", td_testing_live_objects() - tdt_live_baseline());
                fail();
            }
        }
        free(ref);
        assert_true(n_ok > 0);
        print_message("%s: backward needs %ld allocations; every failure point leaks nothing (after the "
                      "failure the graph was released %ld times, left whole for a retry %ld times)\n",
                      d == 0 ? "NONE" : "BALANCED", n_ok, retry_released, retry_ok);
    }
}

/* ---- (e) leaves changed between record and backward ---- */

static td_tensor *leaf3(td_device *ad, const float v[3])
{
    static const int64_t s3[] = { 3 };
    td_tensor *x = NULL;
    tdt_check(td_float_from_data(ad, v, s3, 1, &x), "leaf");
    tdt_check(td_require_grad(x), "require_grad");
    return x;
}

static void expect_grad3(const td_grads *g, const td_tensor *leaf, const float want[3], const char *what,
                         const char *strategy)
{
    float *got = grad_of(g, leaf, 3);
    for (int i = 0; i < 3; i++) {
        if (!tdt_close(got[i], want[i], 1e-6f)) {
            print_error("%s (%s)[%d]: got %.9g, want %.9g (the value at record time)\n", what, strategy, i,
                        (double)got[i], (double)want[i]);
            free(got);
            fail();
        }
    }
    free(got);
}

/* x = {1, 2, -3} is recorded, then assigned {10, 20, 30} before backward.
 *  y1 = sum(x * x):        dy1/dx = 2 x_old       = {2, 4, -6}
 *  y2 = sum((x + 1)^2):    dy2/dx = 2 (x_old + 1) = {4, 6, -4}
 *    (x + 1 is memory-bound: BALANCED recomputes it in backward from what it saved)
 *  y3 = sum((x * 2) * x):  dy3/dx = 4 x_old   = {4, 8, -12}
 * With the new value the gradients would be {20, 40, 60}, {22, 42, 62}, {40, 80, 120}. */
static void test_assign_after_record_keeps_the_old_value(void **state)
{
    (void)state;
    static const float x0[] = { 1, 2, -3 }, x1[] = { 10, 20, 30 };
    static const float want1[] = { 2, 4, -6 }, want2[] = { 4, 6, -4 }, want3[] = { 4, 8, -12 };
    static const int64_t s3[] = { 3 };
    td_device *devs[] = { ad_dev, ad_bal };
    const char *names[] = { "NONE", "BALANCED" };
    for (int d = 0; d < 2; d++) {
        td_tensor *x = leaf3(devs[d], x0), *sq = NULL, *y1 = NULL, *p1 = NULL, *sq2 = NULL, *y2 = NULL;
        td_tensor *x2 = NULL, *q = NULL, *y3 = NULL, *nv = NULL;
        tdt_check(td_float_mul(x, x, &sq), "mul");
        tdt_check(td_float_sum(sq, &y1), "sum");
        tdt_check(td_float_add_scalar(x, 1.0f, &p1), "add_scalar");
        tdt_check(td_float_mul(p1, p1, &sq2), "mul");
        tdt_check(td_float_sum(sq2, &y2), "sum");
        tdt_check(td_float_mul_scalar(x, 2.0f, &x2), "mul_scalar");
        tdt_check(td_float_mul(x2, x, &q), "mul");
        tdt_check(td_float_sum(q, &y3), "sum");
        tdt_check(td_float_from_data(dev, x1, s3, 1, &nv), "new value");
        tdt_check(td_tensor_assign(x, nv), "assign");
        td_grads *g = NULL;
        tdt_check(td_backward(y1, &g), "backward y1");
        expect_grad3(g, x, want1, "d sum(x*x)/dx", names[d]);
        td_grads_release(g);
        tdt_check(td_backward(y2, &g), "backward y2");
        expect_grad3(g, x, want2, "d sum((x+1)^2)/dx", names[d]);
        td_grads_release(g);
        tdt_check(td_backward(y3, &g), "backward y3");
        expect_grad3(g, x, want3, "d sum(2x*x)/dx", names[d]);
        td_grads_release(g);
        /* The leaf has the new value; a graph recorded now uses it: d sum(x*x)/dx = 2 x_new. */
        static const float want_new[] = { 20, 40, 60 };
        td_tensor *sqn = NULL, *yn = NULL;
        tdt_check(td_float_mul(x, x, &sqn), "mul");
        tdt_check(td_float_sum(sqn, &yn), "sum");
        tdt_check(td_backward(yn, &g), "backward new");
        expect_grad3(g, x, want_new, "d sum(x*x)/dx after assign", names[d]);
        td_grads_release(g);
        td_tensor *all[] = { x, sq, y1, p1, sq2, y2, x2, q, y3, nv, sqn, yn };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
    }
}

/* An optimizer step (SGD, lr 0.25) between recording and backward: p = {1, 2, -3},
 * la = sum(p * p) and lb = sum((p + 1)^2) are recorded; backward(la) gives {2, 4, -6}, the
 * step makes p = p - 0.25 * 2p = {0.5, 1, -1.5}; backward(lb) must give 2 (p_old + 1) =
 * {4, 6, -4} (with the stepped value it would be {3, 4, -1}). */
static void test_optimizer_step_after_record_keeps_the_old_value(void **state)
{
    (void)state;
    static const float p0[] = { 1, 2, -3 }, want_a[] = { 2, 4, -6 }, want_b[] = { 4, 6, -4 };
    static const float stepped[] = { 0.5f, 1, -1.5f };
    static const int64_t s3[] = { 3 };
    td_device *devs[] = { ad_dev, ad_bal };
    const char *names[] = { "NONE", "BALANCED" };
    for (int d = 0; d < 2; d++) {
        td_tensor *p = leaf3(devs[d], p0), *sq = NULL, *la = NULL, *p1 = NULL, *sq2 = NULL, *lb = NULL;
        tdt_check(td_float_mul(p, p, &sq), "mul");
        tdt_check(td_float_sum(sq, &la), "sum");
        tdt_check(td_float_add_scalar(p, 1.0f, &p1), "add_scalar");
        tdt_check(td_float_mul(p1, p1, &sq2), "mul");
        tdt_check(td_float_sum(sq2, &lb), "sum");
        td_grads *g = NULL;
        tdt_check(td_backward(la, &g), "backward la");
        expect_grad3(g, p, want_a, "d la/dp", names[d]);
        td_optim *o = NULL;
        const td_sgd_options opts = { .lr = 0.25f };
        tdt_check(td_optim_sgd(&p, 1, &opts, &o), "sgd");
        tdt_check(td_optim_step(o, g), "step");
        td_grads_release(g);
        tdt_expect(p, TD_F32, s3, 1, stepped, 3, 0.0f);
        tdt_check(td_backward(lb, &g), "backward lb");
        expect_grad3(g, p, want_b, "d lb/dp after a step", names[d]);
        td_grads_release(g);
        td_optim_release(o);
        td_tensor *all[] = { p, sq, la, p1, sq2, lb };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
    }
}

/* ---- fixtures ---- */

static int group_setup(void **state)
{
    (void)state;
    fill_host_data();
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad_dev, &ad_bal);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, ad_bal);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_balanced_keeps_less_and_gives_the_same_gradients),
        TDT_TEST(test_backward_after_intermediates_released),
        TDT_TEST(test_shape_mismatch_in_layer_3_leaks_nothing),
        TDT_TEST(test_allocation_failure_during_forward_leaks_nothing),
        TDT_TEST(test_allocation_failure_during_backward_leaks_nothing),
        TDT_TEST(test_assign_after_record_keeps_the_old_value),
        TDT_TEST(test_optimizer_step_after_record_keeps_the_old_value),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
