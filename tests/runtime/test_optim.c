/* Optimizers and in-place parameter updates: one or two steps of SGD and Adam against hand
 * computations, parameters keeping their identity across steps, and the error paths. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "td_optim.h"
#include "tdt.h"

static td_device *cpu, *ad;
static const int64_t s2[] = { 2 };

static td_tensor *param(const float *v)
{
    td_tensor *p = NULL;
    tdt_check(td_float_from_data(ad, v, s2, 1, &p), "param");
    tdt_check(td_require_grad(p), "require_grad");
    return p;
}

/* loss = sum(p * c): its gradient is c. */
static td_grads *grads_of(td_tensor *p, const float *c)
{
    td_tensor *ct = NULL, *pc = NULL, *loss = NULL;
    td_grads *g = NULL;
    tdt_check(td_float_from_data(ad, c, s2, 1, &ct), "c");
    tdt_check(td_float_mul(p, ct, &pc), "mul");
    tdt_check(td_float_sum(pc, &loss), "sum");
    tdt_check(td_backward(loss, &g), "backward");
    td_tensor_release(loss);
    td_tensor_release(pc);
    td_tensor_release(ct);
    return g;
}

static void step(td_optim *o, td_tensor *p, const float *c)
{
    td_grads *g = grads_of(p, c);
    tdt_check(td_optim_step(o, g), "step");
    td_grads_release(g);
}

static void test_sgd_momentum_weight_decay(void **state)
{
    (void)state;
    static const float p0[] = { 1, -2 }, c[] = { 3, 0.5f };
    td_tensor *p = param(p0);
    td_optim *o = NULL;
    const td_sgd_options so = { .lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f };
    tdt_check(td_optim_sgd(&p, 1, &so, &o), "sgd");
    /* d = g + 0.01 p = [3.01, 0.48]; buf = d; p -= 0.1 d. */
    step(o, p, c);
    static const float want1[] = { 0.699f, -2.048f };
    tdt_expect(p, TD_F32, s2, 1, want1, 2, 1e-6f);
    /* d = [3 + 0.00699, 0.5 - 0.02048]; buf = 0.9 [3.01, 0.48] + d = [5.71599, 0.91152]. */
    step(o, p, c);
    static const float want2[] = { 0.127401f, -2.139152f };
    tdt_expect(p, TD_F32, s2, 1, want2, 2, 1e-5f);
    bool tracked = false;
    tdt_check(td_is_tracked(p, &tracked), "is_tracked");
    assert_true(tracked); /* still the same leaf */
    td_optim_release(o);
    td_tensor_release(p);
}

static void test_sgd_nesterov_dampening(void **state)
{
    (void)state;
    static const float p0[] = { 1, -2 }, c[] = { 2, -1 };
    td_tensor *p = param(p0);
    td_optim *o = NULL;
    /* Nesterov, momentum 0.5: step 1 buf = g, d = g + 0.5 g = 1.5 g; p -= 0.1 * 1.5 g. */
    const td_sgd_options so = { .lr = 0.1f, .momentum = 0.5f, .nesterov = true };
    tdt_check(td_optim_sgd(&p, 1, &so, &o), "sgd");
    step(o, p, c);
    static const float want1[] = { 0.7f, -1.85f };
    tdt_expect(p, TD_F32, s2, 1, want1, 2, 1e-6f);
    /* step 2: buf = 0.5 g + g = 1.5 g, d = g + 0.5 * 1.5 g = 1.75 g. */
    step(o, p, c);
    static const float want2[] = { 0.35f, -1.675f };
    tdt_expect(p, TD_F32, s2, 1, want2, 2, 1e-6f);
    td_optim_release(o);
    /* dampening 0.5 without Nesterov: buf = g, then 0.9 g + 0.5 g = 1.4 g. */
    static const float q0[] = { 0, 0 };
    td_tensor *q = param(q0);
    const td_sgd_options sd = { .lr = 1.0f, .momentum = 0.9f, .dampening = 0.5f };
    tdt_check(td_optim_sgd(&q, 1, &sd, &o), "sgd");
    step(o, q, c);
    step(o, q, c);
    static const float want3[] = { -4.8f, 2.4f }; /* -(1 + 1.4) g */
    tdt_expect(q, TD_F32, s2, 1, want3, 2, 1e-6f);
    td_optim_release(o);
    td_tensor_release(q);
    td_tensor_release(p);
}

static void test_adam(void **state)
{
    (void)state;
    static const float p0[] = { 1, -2 }, c1[] = { 3, 0.5f }, c2[] = { 1, 1 };
    td_tensor *p = param(p0);
    td_optim *o = NULL;
    const td_adam_options ao = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
    tdt_check(td_optim_adam(&p, 1, &ao, &o), "adam");
    /* Step 1: m / (1 - b1) = g and v / (1 - b2) = g^2, so p moves by lr * sign(g). */
    step(o, p, c1);
    static const float want1[] = { 0.99f, -2.01f };
    tdt_expect(p, TD_F32, s2, 1, want1, 2, 1e-6f);
    /* Step 2 with g = [1, 1]: m = [0.37, 0.145], v = [0.009991, 0.00124975], corrections
     * 1 - 0.9^2 and 1 - 0.999^2: p -= 0.01 * [0.871059, 0.965183]. */
    step(o, p, c2);
    static const float want2[] = { 0.981289361f, -2.019651820f };
    tdt_expect(p, TD_F32, s2, 1, want2, 2, 1e-5f);
    td_optim_release(o);
    /* AdamW: p *= 1 - lr wd first; step 1 then moves by lr * sign(g). */
    static const float q0[] = { 2, 2 };
    td_tensor *q = param(q0);
    const td_adam_options aw = { .lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.5f,
                                 .decoupled = true };
    tdt_check(td_optim_adam(&q, 1, &aw, &o), "adamw");
    step(o, q, c1);
    static const float want3[] = { 1.8f, 1.8f }; /* 2 * 0.95 - 0.1 */
    tdt_expect(q, TD_F32, s2, 1, want3, 2, 1e-6f);
    td_optim_release(o);
    td_tensor_release(q);
    td_tensor_release(p);
}

/* Many elements (the CPU's fused update threads them), three steps of AdamW and of Adam with
 * an L2 term, against torch.optim's formulas written out here in double. */
enum { BIG = 70001 };

static void adam_reference(const td_adam_options *c, double *p, double *m, double *v, const float *g, int t)
{
    const double bc1 = 1.0 - pow(c->beta1, t), bc2 = 1.0 - pow(c->beta2, t);
    for (int i = 0; i < BIG; i++) {
        double d = g[i];
        if (c->decoupled)
            p[i] *= 1.0 - (double)c->lr * c->weight_decay;
        else
            d += (double)c->weight_decay * p[i];
        m[i] = c->beta1 * m[i] + (1.0 - c->beta1) * d;
        v[i] = c->beta2 * v[i] + (1.0 - c->beta2) * d * d;
        p[i] -= (double)c->lr / bc1 * m[i] / (sqrt(v[i]) / sqrt(bc2) + c->eps);
    }
}

static void check_adam_big(const td_adam_options *c)
{
    static float p0[BIG], g[BIG], got[BIG];
    static double p[BIG], m[BIG], v[BIG];
    for (int i = 0; i < BIG; i++) {
        p0[i] = (float)sin(0.37 * i) * 2.0f;
        p[i] = p0[i];
        m[i] = v[i] = 0.0;
    }
    const int64_t shape[] = { BIG };
    td_tensor *pt = NULL;
    tdt_check(td_float_from_data(ad, p0, shape, 1, &pt), "param");
    tdt_check(td_require_grad(pt), "require_grad");
    td_optim *o = NULL;
    tdt_check(td_optim_adam(&pt, 1, c, &o), "adam");
    for (int t = 1; t <= 3; t++) {
        for (int i = 0; i < BIG; i++) /* |g| in [0.1, 0.9], its sign changing along i and t */
            g[i] = (float)((0.5 + 0.4 * cos(0.11 * i * t)) * ((i + t) % 3 == 0 ? -1.0 : 1.0));
        td_tensor *gt = NULL, *pg = NULL, *loss = NULL;
        td_grads *gr = NULL;
        tdt_check(td_float_from_data(ad, g, shape, 1, &gt), "g");
        tdt_check(td_float_mul(pt, gt, &pg), "mul");
        tdt_check(td_float_sum(pg, &loss), "sum");
        tdt_check(td_backward(loss, &gr), "backward");
        tdt_check(td_optim_step(o, gr), "step");
        td_grads_release(gr);
        td_tensor_release(loss);
        td_tensor_release(pg);
        td_tensor_release(gt);
        adam_reference(c, p, m, v, g, t);
    }
    tdt_check(td_float_into_data(pt, got, BIG), "into_data");
    double worst = 0.0;
    int at = 0;
    for (int i = 0; i < BIG; i++)
        if (fabs(got[i] - p[i]) > worst) {
            worst = fabs(got[i] - p[i]);
            at = i;
        }
    if (worst > 2e-6)
        fail_msg("adam (decoupled %d): element %d is %.9g, the reference %.9g", (int)c->decoupled, at, got[at], p[at]);
    td_optim_release(o);
    td_tensor_release(pt);
}

static void test_adam_many_elements(void **state)
{
    (void)state;
    const td_adam_options adamw = { .lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f,
                                    .decoupled = true };
    check_adam_big(&adamw);
    const td_adam_options l2 = { .lr = 0.02f, .beta1 = 0.8f, .beta2 = 0.999f, .eps = 1e-6f, .weight_decay = 0.05f };
    check_adam_big(&l2);
}

static void test_errors(void **state)
{
    (void)state;
    static const float p0[] = { 1, 2 };
    td_tensor *p = param(p0), *y = NULL, *bad = NULL;
    td_optim *o = NULL;
    const td_sgd_options zero_lr = { .lr = 0 };
    tdt_expect_error(td_optim_sgd(&p, 1, &zero_lr, &o), TD_E_INVALID, "optim_sgd");
    assert_null(o);
    const td_sgd_options nest = { .lr = 0.1f, .nesterov = true };
    tdt_expect_error(td_optim_sgd(&p, 1, &nest, &o), TD_E_INVALID, "optim_sgd");
    const td_adam_options beta = { .lr = 0.1f, .beta1 = 1.0f, .beta2 = 0.9f, .eps = 1e-8f };
    tdt_expect_error(td_optim_adam(&p, 1, &beta, &o), TD_E_INVALID, "optim_adam");
    tdt_expect_error(td_optim_sgd(&p, 1, NULL, &o), TD_E_NULL, "optim_sgd");
    /* A parameter not on an autodiff device. */
    tdt_check(td_float_from_data(cpu, p0, s2, 1, &bad), "cpu tensor");
    const td_sgd_options ok = { .lr = 0.1f };
    tdt_expect_error(td_optim_sgd(&bad, 1, &ok, &o), TD_E_INVALID, "optim");
    /* Assign: shape, a non-leaf, a plain tensor as the target. */
    static const float three[] = { 1, 2, 3 };
    static const int64_t s3[] = { 3 };
    td_tensor *v3 = NULL;
    tdt_check(td_float_from_data(cpu, three, s3, 1, &v3), "v3");
    tdt_expect_error(td_tensor_assign(p, v3), TD_E_SHAPE, "tensor_assign");
    tdt_check(td_float_mul_scalar(p, 2.0f, &y), "mul_scalar");
    tdt_expect_error(td_tensor_assign(y, bad), TD_E_AUTODIFF, "tensor_assign");
    tdt_expect_error(td_tensor_assign(bad, bad), TD_E_INVALID, "tensor_assign");
    /* A good assign keeps the leaf: the next backward finds it. */
    tdt_check(td_tensor_assign(p, bad), "assign");
    tdt_expect(p, TD_F32, s2, 1, p0, 2, 0.0f);
    tdt_check(td_optim_sgd(&p, 1, &ok, &o), "sgd");
    tdt_expect_error(td_optim_step(o, NULL), TD_E_NULL, "optim_step");
    tdt_expect_error(td_optim_step_with(o, NULL, 1), TD_E_NULL, "optim_step");
    const td_tensor *two[] = { NULL, NULL };
    tdt_expect_error(td_optim_step_with(o, two, 2), TD_E_INVALID, "optim_step");
    const td_tensor *wrong[] = { v3 };
    tdt_expect_error(td_optim_step_with(o, wrong, 1), TD_E_SHAPE, "optim_step");
    tdt_expect_error(td_optim_set_lr(o, -1.0f), TD_E_INVALID, "optim_set_lr");
    tdt_check(td_optim_set_lr(o, 0.5f), "set_lr");
    float lr = 0;
    tdt_check(td_optim_lr(o, &lr), "lr");
    assert_true(lr == 0.5f);
    td_optim_release(o);
    td_optim_release(NULL);
    td_tensor_release(v3);
    td_tensor_release(y);
    td_tensor_release(bad);
    td_tensor_release(p);
}

/* torch.optim's defaults, written out from its documentation: SGD(lr) has momentum 0,
 * dampening 0, weight_decay 0, nesterov False; Adam(lr) betas (0.9, 0.999), eps 1e-8,
 * weight_decay 0 (coupled). One Adam step from them moves each parameter by lr * sign(g)
 * (m-hat = g, v-hat = g^2, so m-hat / (sqrt(v-hat) + eps) is sign(g) up to eps). */
static void test_defaults(void **state)
{
    (void)state;
    const td_sgd_options s = td_sgd_defaults(0.25f);
    assert_true(s.lr == 0.25f && s.momentum == 0 && s.dampening == 0 && s.weight_decay == 0 && !s.nesterov);
    const td_adam_options a = td_adam_defaults(0.5f);
    assert_true(a.lr == 0.5f && a.beta1 == 0.9f && a.beta2 == 0.999f && a.eps == 1e-8f && a.weight_decay == 0 &&
                !a.decoupled);
    static const float p0[] = { 1, -2 }, c[] = { 3, -0.5f }, want[] = { 0.5f, -1.5f };
    td_tensor *p = param(p0);
    td_optim *o = NULL;
    tdt_check(td_optim_adam(&p, 1, &a, &o), "adam from defaults");
    step(o, p, c);
    tdt_expect(p, TD_F32, s2, 1, want, 2, 1e-6f);
    td_optim_release(o);
    /* Only .lr set: eps 0 is refused, and the message points at the defaults. */
    const td_adam_options only_lr = { .lr = 0.5f };
    tdt_expect_error(td_optim_adam(&p, 1, &only_lr, &o), TD_E_INVALID, "optim_adam");
    assert_non_null(strstr(td_last_error(), "td_adam_defaults"));
    td_tensor_release(p);
}

/* A tracked result is not a parameter, nor is a parameter given twice: before, the
 * optimizer took both and its step then did nothing (or updated twice). */
static void test_params_leaves_once(void **state)
{
    (void)state;
    static const float p0[] = { 1, 2 };
    td_tensor *p = param(p0), *q = param(p0), *y = NULL;
    td_optim *o = NULL;
    const td_sgd_options so = td_sgd_defaults(0.1f);
    tdt_check(td_float_mul_scalar(p, 2.0f, &y), "mul_scalar");
    td_tensor *nonleaf[] = { p, y };
    tdt_expect_error(td_optim_sgd(nonleaf, 2, &so, &o), TD_E_INVALID, "optim");
    assert_null(o);
    assert_non_null(strstr(td_last_error(), "params[1] is the result of float_mul_scalar, not a leaf"));
    td_tensor *twice[] = { p, q, p };
    const td_adam_options ao = td_adam_defaults(0.1f);
    tdt_expect_error(td_optim_adam(twice, 3, &ao, &o), TD_E_INVALID, "optim");
    assert_null(o);
    assert_non_null(strstr(td_last_error(), "params[2] is params[0] again"));
    td_tensor *fine[] = { p, q };
    tdt_check(td_optim_sgd(fine, 2, &so, &o), "two leaves");
    td_optim_release(o);
    td_tensor_release(y);
    td_tensor_release(q);
    td_tensor_release(p);
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
        TDT_TEST(test_sgd_momentum_weight_decay),
        TDT_TEST(test_sgd_nesterov_dampening),
        TDT_TEST(test_adam),
        TDT_TEST(test_adam_many_elements),
        TDT_TEST(test_errors),
        TDT_TEST(test_defaults),
        TDT_TEST(test_params_leaves_once),
    };
    return cmocka_run_group_tests_name("optim", tests, setup, teardown);
}
