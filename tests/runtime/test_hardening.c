/* Regressions from a bad-input battery: each test provoked a crash, a silent wrong answer
 * or an accepted bad argument before its fix. Expected values are computed by hand in the
 * comments. */
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

static td_device *cpu, *ad_none, *ad_bal;

/* ---- two losses over one graph ---- */

/* x = [1, 2, 3] (a leaf); y = op(x); l1 = sum(y); l2 = sum(y * 3). */
typedef td_status (*unary_fn)(const td_tensor *, td_tensor **);

static td_status twice(const td_tensor *x, td_tensor **out)
{
    return td_float_mul_scalar(x, 2.0f, out);
}

static void shared_graph(td_device *ad, unary_fn op, td_tensor **x, td_tensor **y, td_tensor **l1, td_tensor **l2)
{
    static const float xs[] = { 1, 2, 3 };
    static const int64_t s3[] = { 3 };
    td_tensor *y3 = NULL;
    tdt_check(td_float_from_data(ad, xs, s3, 1, x), "x");
    tdt_check(td_require_grad(*x), "require_grad");
    tdt_check(op(*x, y), "y");
    tdt_check(td_float_sum(*y, l1), "l1");
    tdt_check(td_float_mul_scalar(*y, 3.0f, &y3), "y * 3");
    tdt_check(td_float_sum(y3, l2), "l2");
    td_tensor_release(y3);
}

/* Before the fix, the second backward dereferenced the released node's NULL backward
 * (NONE) or failed with TD_E_INTERNAL (BALANCED, exp: a node that keeps its result). */
static void second_backward_is_an_error(td_device *ad, unary_fn op)
{
    td_tensor *x = NULL, *y = NULL, *l1 = NULL, *l2 = NULL;
    shared_graph(ad, op, &x, &y, &l1, &l2);
    td_grads *g = NULL;
    tdt_check(td_backward(l1, &g), "backward l1");
    td_grads_release(g);
    g = (td_grads *)&g;
    const td_status st = td_backward(l2, &g);
    assert_int_equal(st, TD_E_AUTODIFF);
    assert_null(g);
    assert_non_null(strstr(td_last_error(), "released by an earlier backward"));
    assert_non_null(strstr(td_last_error(), "retain_graph"));
    /* and again on the root that was already backpropagated */
    assert_int_equal(td_backward(l1, &g), TD_E_AUTODIFF);
    assert_null(g);
    td_tensor_release(l2);
    td_tensor_release(l1);
    td_tensor_release(y);
    td_tensor_release(x);
}

static void test_second_backward_over_shared_nodes_none(void **state)
{
    (void)state;
    second_backward_is_an_error(ad_none, twice);
}

static void test_second_backward_over_shared_nodes_balanced(void **state)
{
    (void)state;
    second_backward_is_an_error(ad_bal, twice);
    second_backward_is_an_error(ad_bal, td_float_exp);
}

static void test_second_backward_over_saved_result(void **state)
{
    (void)state;
    second_backward_is_an_error(ad_none, td_float_exp);
}

/* With retain_graph on the first backward, both give the right gradients:
 * y = 2x: d l1/dx = 2, d l2/dx = 6; y = exp(x): d l1/dx = e^x, d l2/dx = 3 e^x. */
static void retained(td_device *ad, unary_fn op, const float want1[3], const float want2[3])
{
    td_tensor *x = NULL, *y = NULL, *l1 = NULL, *l2 = NULL, *g1 = NULL, *g2 = NULL;
    shared_graph(ad, op, &x, &y, &l1, &l2);
    td_grads *g = NULL;
    const td_backward_options keep = { .retain_graph = true };
    tdt_check(td_backward_ex(l1, &keep, &g), "backward l1, retained");
    tdt_check(td_grads_get(g, x, &g1), "grad 1");
    td_grads_release(g);
    tdt_check(td_backward(l2, &g), "backward l2");
    tdt_check(td_grads_get(g, x, &g2), "grad 2");
    td_grads_release(g);
    static const int64_t s3[] = { 3 };
    tdt_expect(g1, TD_F32, s3, 1, want1, 3, 1e-6f);
    tdt_expect(g2, TD_F32, s3, 1, want2, 3, 1e-6f);
    /* l2's backward released the graph it went through, retained or not before */
    assert_int_equal(td_backward(l1, &g), TD_E_AUTODIFF);
    td_tensor_release(g1);
    td_tensor_release(g2);
    td_tensor_release(l2);
    td_tensor_release(l1);
    td_tensor_release(y);
    td_tensor_release(x);
}

static void test_retain_graph_gives_both_gradients(void **state)
{
    (void)state;
    static const float two[] = { 2, 2, 2 }, six[] = { 6, 6, 6 };
    const float e1 = expf(1), e2 = expf(2), e3 = expf(3);
    const float ex[] = { e1, e2, e3 }, ex3[] = { 3 * e1, 3 * e2, 3 * e3 };
    retained(ad_none, twice, two, six);
    retained(ad_bal, twice, two, six);
    retained(ad_none, td_float_exp, ex, ex3);
    retained(ad_bal, td_float_exp, ex, ex3);
}

/* retain_graph with an explicit seed: y = 2x seeded with [1, 10, 100] gives [2, 20, 200]. */
static void test_retain_graph_with_seed(void **state)
{
    (void)state;
    static const float xs[] = { 1, 2, 3 }, seed_v[] = { 1, 10, 100 }, want[] = { 2, 20, 200 };
    static const int64_t s3[] = { 3 };
    td_tensor *x = NULL, *y = NULL, *seed = NULL, *gx = NULL;
    tdt_check(td_float_from_data(ad_none, xs, s3, 1, &x), "x");
    tdt_check(td_require_grad(x), "require_grad");
    tdt_check(twice(x, &y), "y");
    tdt_check(td_float_from_data(cpu, seed_v, s3, 1, &seed), "seed");
    const td_backward_options o = { .seed = seed, .retain_graph = true };
    for (int round = 0; round < 2; round++) {
        td_grads *g = NULL;
        tdt_check(td_backward_ex(y, &o, &g), "seeded backward");
        tdt_check(td_grads_get(g, x, &gx), "grad");
        tdt_expect(gx, TD_F32, s3, 1, want, 3, 0.0f);
        td_tensor_release(gx);
        td_grads_release(g);
    }
    td_tensor_release(seed);
    td_tensor_release(y);
    td_tensor_release(x);
}

/* ---- shape products that overflow ---- */

/* [2^22,1,1], [1,2^22,1], [1,1,2^22]: the three-way broadcast has 2^66 elements. Before the
 * fix mask_where returned TD_OK with numel 0 and a following sum_dim crashed. */
static void test_broadcast_overflow_is_a_shape_error(void **state)
{
    (void)state;
    const int64_t big = INT64_C(1) << 22;
    const int64_t sa[] = { big, 1, 1 }, sm[] = { 1, big, 1 }, sv[] = { 1, 1, big };
    td_tensor *a = NULL, *m = NULL, *v = NULL, *out = (td_tensor *)&out;
    tdt_check(td_float_zeros(cpu, sa, 3, &a), "a");
    tdt_check(td_float_zeros(cpu, sv, 3, &v), "v");
    td_tensor *m1 = NULL;
    tdt_check(td_float_zeros(cpu, sm, 3, &m1), "m1");
    tdt_check(td_float_greater(m1, m1, &m), "mask");
    td_tensor_release(m1);
    tdt_expect_error(td_float_mask_where(a, m, v, &out), TD_E_SHAPE, "float_mask_where");
    assert_null(out);
    assert_non_null(strstr(td_last_error(), "2^40"));
    /* a two-way broadcast past the limit (2^44 elements) */
    tdt_expect_error(td_float_add(a, v, &out), TD_E_SHAPE, "float_add");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(m);
    td_tensor_release(v);
}

/* ---- shape rules whose sizes overflow int64 (issue 19) ---- */

/* Empty tensors may have a dim of 2^40 and dilations go up to 2^30, so a dilated kernel
 * span dil (k - 1) + 1 reaches 2^70. Before the fix the conv rules computed it unchecked
 * (an UBSan abort, and in a release build a wrapped span that passed the size check). */
#define BIG_DIM (INT64_C(1) << 40)
#define BIG_DIL (INT64_C(1) << 30)

static void expect_overflow(td_status st, td_tensor *const *out, const char *op)
{
    tdt_expect_error(st, TD_E_SHAPE, op);
    assert_null(*out);
    if (strstr(td_last_error(), "dilat") == NULL)
        fail_msg("%s: '%s' does not name the dilated kernel", op, td_last_error());
}

static void test_conv_huge_dilated_kernel_is_a_shape_error(void **state)
{
    (void)state;
    static const int64_t sx[] = { 1, 0, 4, 4 }, sw[] = { 1, 0, BIG_DIM, 1 }, sb[] = { 1 };
    static const int64_t one2[] = { 1, 1 }, zero2[] = { 0, 0 }, dil[] = { BIG_DIL, 1 };
    td_tensor *x = NULL, *w = NULL, *b = NULL, *out = (td_tensor *)&out;
    tdt_check(td_float_zeros(cpu, sx, 4, &x), "x [1, 0, 4, 4]");
    tdt_check(td_float_zeros(cpu, sw, 4, &w), "weight [1, 0, 2^40, 1]");
    tdt_check(td_float_zeros(cpu, sb, 1, &b), "bias [1]");
    expect_overflow(td_float_conv2d(x, w, b, one2, 2, zero2, 2, dil, 2, 1, &out), &out, "float_conv2d");
    out = (td_tensor *)&out;
    expect_overflow(td_float_conv2d_backward_input(x, w, x, one2, 2, zero2, 2, dil, 2, 1, &out), &out,
                    "float_conv2d_backward_input");
    out = (td_tensor *)&out;
    expect_overflow(td_float_conv2d_backward_weight(x, x, w, one2, 2, zero2, 2, dil, 2, 1, &out), &out,
                    "float_conv2d_backward_weight");
    td_tensor_release(x);
    td_tensor_release(w);
    /* conv1d: x [1, 0, 4], weight [1, 0, 2^40] */
    static const int64_t sx1[] = { 1, 0, 4 }, sw1[] = { 1, 0, BIG_DIM };
    tdt_check(td_float_zeros(cpu, sx1, 3, &x), "x [1, 0, 4]");
    tdt_check(td_float_zeros(cpu, sw1, 3, &w), "weight [1, 0, 2^40]");
    out = (td_tensor *)&out;
    expect_overflow(td_float_conv1d(x, w, b, 1, 0, BIG_DIL, 1, &out), &out, "float_conv1d");
    td_tensor_release(x);
    td_tensor_release(w);
    td_tensor_release(b);
    /* conv_transpose2d: x [1, 1, 4, 4], weight [1, 0, 2^40, 1] (no output channels), bias [0] */
    static const int64_t sxt[] = { 1, 1, 4, 4 }, swt[] = { 1, 0, BIG_DIM, 1 }, sbt[] = { 0 };
    tdt_check(td_float_zeros(cpu, sxt, 4, &x), "x [1, 1, 4, 4]");
    tdt_check(td_float_zeros(cpu, swt, 4, &w), "weight [1, 0, 2^40, 1]");
    tdt_check(td_float_zeros(cpu, sbt, 1, &b), "bias [0]");
    out = (td_tensor *)&out;
    expect_overflow(td_float_conv_transpose2d(x, w, b, one2, 2, zero2, 2, zero2, 2, dil, 2, 1, &out), &out,
                    "float_conv_transpose2d");
    td_tensor_release(x);
    td_tensor_release(w);
    td_tensor_release(b);
}

/* ---- messages that named the wrong thing (issue 19) ---- */

/* The weight's rank error gave x's layout [N, C, H, W]. */
static void test_conv_weight_rank_message_gives_the_weight_layout(void **state)
{
    (void)state;
    static const int64_t sx4[] = { 1, 2, 4, 4 }, sx3[] = { 1, 2, 4 }, sw3[] = { 2, 2, 3 }, sw2[] = { 2, 2 };
    static const int64_t sb[] = { 2 }, one2[] = { 1, 1 }, zero2[] = { 0, 0 };
    td_tensor *x4 = NULL, *x3 = NULL, *w3 = NULL, *w2 = NULL, *b = NULL, *out = (td_tensor *)&out;
    tdt_check(td_float_zeros(cpu, sx4, 4, &x4), "x4");
    tdt_check(td_float_zeros(cpu, sx3, 3, &x3), "x3");
    tdt_check(td_float_zeros(cpu, sw3, 3, &w3), "w3");
    tdt_check(td_float_zeros(cpu, sw2, 2, &w2), "w2");
    tdt_check(td_float_zeros(cpu, sb, 1, &b), "b");
    tdt_expect_error(td_float_conv2d(x4, w3, b, one2, 2, zero2, 2, one2, 2, 1, &out), TD_E_SHAPE, "float_conv2d");
    assert_null(out);
    assert_non_null(strstr(td_last_error(), "weight must have 4 dims [O, C / groups, kH, kW]"));
    tdt_expect_error(td_float_conv2d(x3, w3, b, one2, 2, zero2, 2, one2, 2, 1, &out), TD_E_SHAPE, "float_conv2d");
    assert_non_null(strstr(td_last_error(), "x must have 4 dims [N, C, H, W]"));
    tdt_expect_error(td_float_conv1d(x3, w2, b, 1, 0, 1, 1, &out), TD_E_SHAPE, "float_conv1d");
    assert_non_null(strstr(td_last_error(), "weight must have 3 dims [O, C / groups, k]"));
    tdt_expect_error(td_float_conv_transpose2d(x4, w3, b, one2, 2, zero2, 2, zero2, 2, one2, 2, 1, &out), TD_E_SHAPE,
                     "float_conv_transpose2d");
    assert_non_null(strstr(td_last_error(), "weight must have 4 dims [C, O / groups, kH, kW]"));
    assert_null(out);
    td_tensor_release(x4);
    td_tensor_release(x3);
    td_tensor_release(w3);
    td_tensor_release(w2);
    td_tensor_release(b);
}

/* topk of a 0-d tensor: its result is 0-d, one element, so count must be 1. The message
 * said "zero-size results are not supported", which they are (count 0 of a dim). */
static void test_topk_0d_count_0_says_count_must_be_1(void **state)
{
    (void)state;
    const float v = 2.0f;
    td_tensor *z = tdt_make(cpu, TD_F32, &v, NULL, 0), *out = (td_tensor *)&out;
    assert_non_null(z);
    tdt_expect_error(td_float_topk(z, 0, 0, &out), TD_E_SHAPE, "float_topk");
    assert_null(out);
    if (strstr(td_last_error(), "count must be 1") == NULL || strstr(td_last_error(), "zero-size") != NULL)
        fail_msg("'%s'", td_last_error());
    td_tensor_release(z);
}

/* An assign of another dtype, and an int seed, are dtype errors, not shape errors. */
static void test_assign_and_seed_dtype_mismatch_is_a_dtype_error(void **state)
{
    (void)state;
    static const float xs[] = { 1, 2 };
    static const int32_t is[] = { 1, 2 };
    static const int64_t s2[] = { 2 };
    td_tensor *p = NULL, *iv = NULL, *y = NULL;
    tdt_check(td_float_from_data(ad_none, xs, s2, 1, &p), "p");
    tdt_check(td_require_grad(p), "require_grad");
    tdt_check(td_int_from_data(cpu, is, s2, 1, &iv), "int value");
    tdt_expect_error(td_tensor_assign(p, iv), TD_E_DTYPE, "tensor_assign");
    assert_non_null(strstr(td_last_error(), "i32"));
    tdt_check(td_float_mul_scalar(p, 2.0f, &y), "y");
    td_grads *g = (td_grads *)&g;
    tdt_expect_error(td_backward_seeded(y, iv, &g), TD_E_DTYPE, "backward_seeded");
    assert_null(g);
    assert_non_null(strstr(td_last_error(), "i32"));
    td_tensor_release(y);
    td_tensor_release(iv);
    td_tensor_release(p);
}

/* Out of memory in a seeded backward said "backward: out of memory" (or named only the
 * kernel that failed), not the function called. */
static void test_seeded_backward_errors_name_backward_seeded(void **state)
{
    (void)state;
    static const float xs[] = { 1, 2 }, ones[] = { 1, 1 };
    static const int64_t s2[] = { 2 };
    td_tensor *seed = NULL;
    tdt_check(td_float_from_data(cpu, ones, s2, 1, &seed), "seed");
    int failures = 0;
    for (long k = 0; k < 200; k++) {
        td_tensor *x = NULL, *e = NULL, *y = NULL;
        tdt_check(td_float_from_data(ad_bal, xs, s2, 1, &x), "x");
        tdt_check(td_require_grad(x), "require_grad");
        tdt_check(td_float_exp(x, &e), "exp");
        tdt_check(td_float_sin(e, &y), "sin");
        td_grads *g = NULL;
        td_testing_fail_allocations_after(k);
        const td_status st = td_backward_seeded(y, seed, &g);
        td_testing_fail_allocations_after(-1);
        if (st != TD_OK) {
            assert_int_equal(st, TD_E_NOMEM);
            assert_null(g);
            const char *m = td_last_error();
            if (strncmp(m, "backward_seeded: ", 17) != 0 || strncmp(m + 17, "backward:", 9) == 0)
                fail_msg("allocation %ld: '%s'", k, m);
            failures++;
        }
        td_grads_release(g);
        td_tensor_release(y);
        td_tensor_release(e);
        td_tensor_release(x);
        if (st == TD_OK)
            break;
    }
    assert_true(failures > 3);
    td_tensor_release(seed);
}

/* ---- slices ---- */

/* A negative array length used to skip every range check and return a full copy. */
static void test_negative_array_lengths(void **state)
{
    (void)state;
    static const float xs[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s6[] = { 6 }, st[] = { 4 }, en[] = { 2 };
    td_tensor *a = NULL, *out = (td_tensor *)&out;
    tdt_check(td_float_from_data(cpu, xs, s6, 1, &a), "a");
    tdt_expect_error(td_float_slice(a, st, -1, en, -1, &out), TD_E_INVALID, "float_slice");
    assert_null(out);
    assert_non_null(strstr(td_last_error(), "starts_len is -1"));
    tdt_expect_error(td_float_slice(a, st, 1, en, -1, &out), TD_E_INVALID, "float_slice");
    tdt_expect_error(td_float_slice_assign(a, a, st, -2, en, -2, &out), TD_E_INVALID, "float_slice_assign");
    tdt_expect_error(td_float_permute(a, st, -1, &out), TD_E_INVALID, "float_permute");
    tdt_expect_error(td_float_reshape(a, s6, -1, &out), TD_E_INVALID, "float_reshape");
    tdt_expect_error(td_float_expand(a, s6, -1, &out), TD_E_INVALID, "float_expand");
    assert_null(out);
    /* an end before its start stays an error (there are no empty tensors yet) */
    tdt_expect_error(td_float_slice(a, st, 1, en, 1, &out), TD_E_RANGE, "float_slice");
    assert_non_null(strstr(td_last_error(), "range [4, 2)"));
    td_tensor_release(a);
}

/* ---- float_random parameters ---- */

static void test_random_rejects_bad_parameters(void **state)
{
    (void)state;
    static const int64_t s4[] = { 4 };
    td_tensor *out = (td_tensor *)&out;
    const struct {
        td_distribution dist;
        float p0, p1;
        const char *says;
    } bad[] = {
        { TD_UNIFORM, 1.0f, 0.0f, "low <= high" },
        { TD_UNIFORM, NAN, 1.0f, "finite" },
        { TD_UNIFORM, 0.0f, INFINITY, "finite" },
        { TD_UNIFORM, -INFINITY, 0.0f, "finite" },
        { TD_UNIFORM, -3e38f, 3e38f, "finite range" },
        { TD_NORMAL, 0.0f, -1.0f, "standard deviation >= 0" },
        { TD_NORMAL, NAN, 1.0f, "finite" },
        { TD_NORMAL, 0.0f, INFINITY, "finite" },
        { TD_NORMAL, 0.0f, NAN, "finite" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tdt_expect_error(td_float_random(cpu, s4, 1, bad[i].dist, bad[i].p0, bad[i].p1, 7, &out), TD_E_INVALID,
                         "float_random");
        assert_null(out);
        if (strstr(td_last_error(), bad[i].says) == NULL)
            fail_msg("case %zu: '%s' does not say '%s'", i, td_last_error(), bad[i].says);
    }
    /* the edges that are fine: equal uniform bounds give that value, std 0 gives the mean */
    tdt_check(td_float_random(cpu, s4, 1, TD_UNIFORM, 2.5f, 2.5f, 7, &out), "uniform [2.5, 2.5]");
    static const float same[] = { 2.5f, 2.5f, 2.5f, 2.5f };
    tdt_expect(out, TD_F32, s4, 1, same, 4, 0.0f);
    td_tensor_release(out);
    tdt_check(td_float_random(cpu, s4, 1, TD_NORMAL, 2.5f, 0.0f, 7, &out), "normal std 0");
    tdt_expect(out, TD_F32, s4, 1, same, 4, 0.0f);
    td_tensor_release(out);
}

/* ---- found by the API fuzzer (tests/fuzz/fuzz_api.c) ---- */

/* arange checks its elements against int32, not end: arange(0, 2^40, 2^40) is [0]. */
static void test_arange_end_outside_int32(void **state)
{
    (void)state;
    static const int64_t s1[] = { 1 };
    td_tensor *t = NULL;
    tdt_check(td_int_arange(cpu, 0, INT64_C(1) << 40, INT64_C(1) << 40, &t), "arange(0, 2^40, 2^40)");
    static const int32_t zero[] = { 0 };
    tdt_expect(t, TD_I32, s1, 1, zero, 1, 0.0f);
    td_tensor_release(t);
    t = NULL;
    tdt_check(td_int_arange(cpu, -12, -(INT64_C(1) << 62), -(INT64_C(1) << 62), &t), "arange(-12, -2^62, -2^62)");
    static const int32_t m12[] = { -12 };
    tdt_expect(t, TD_I32, s1, 1, m12, 1, 0.0f);
    td_tensor_release(t);
    t = (td_tensor *)&t;
    /* elements that leave int32 are still an error */
    tdt_expect_error(td_int_arange(cpu, 0, INT64_C(1) << 40, 1, &t), TD_E_RANGE, "int_arange");
    assert_null(t);
    tdt_expect_error(td_int_arange(cpu, INT32_MAX, INT64_MAX, INT32_MAX, &t), TD_E_RANGE, "int_arange");
    tdt_expect_error(td_int_arange(cpu, INT64_C(1) << 33, INT64_C(1) << 34, 1, &t), TD_E_RANGE, "int_arange");
    static const int32_t two[] = { INT32_MAX - 1, INT32_MAX };
    static const int64_t s2[] = { 2 };
    tdt_expect_error(td_int_arange(cpu, INT32_MAX - 1, INT64_MAX, 1, &t), TD_E_RANGE, "int_arange");
    tdt_expect_error(td_int_arange(cpu, INT32_MAX - 1, INT64_C(1) << 40, 1, &t), TD_E_RANGE, "int_arange");
    assert_null(t);
    tdt_check(td_int_arange(cpu, INT32_MAX - 1, (int64_t)INT32_MAX + 1, 1, &t), "the last two int32 values");
    tdt_expect(t, TD_I32, s2, 1, two, 2, 0.0f);
    td_tensor_release(t);
}

/* BALANCED recomputes memory-bound results in backward; a long chain of them used to
 * recurse once per node (a stack overflow past ~40,000 nodes under ASan). y = sin^n(x):
 * dy/dx = prod cos(x_k), computed here along the same chain in double. The kernels' float
 * sin/cos are within 1 ULP but not libm's (SLEEF), and 200,000 chained steps turn a
 * consistent half-ULP lean into ~0.2% (sin^n(x) shrinks by only ~v^4/3 per step), so the
 * check allows 1%; a wrong or missing factor is far outside it. */
static void test_balanced_backward_long_recompute_chain(void **state)
{
    (void)state;
    enum { CHAIN = 200000 };
    static const int64_t s1[] = { 1 };
    const float x0 = 0.5f;
    td_tensor *x = NULL, *cur = NULL;
    tdt_check(td_float_from_data(ad_bal, &x0, s1, 0, &x), "x");
    tdt_check(td_require_grad(x), "require_grad");
    td_tensor_retain(x);
    cur = x;
    double v = x0, want = 1.0;
    for (int i = 0; i < CHAIN; i++) {
        td_tensor *next = NULL;
        tdt_check(td_float_sin(cur, &next), "sin");
        td_tensor_release(cur);
        cur = next;
        want *= cos(v);
        v = sin(v);
    }
    td_grads *g = NULL;
    tdt_check(td_backward(cur, &g), "backward over the chain");
    td_tensor *gx = NULL;
    tdt_check(td_grads_get(g, x, &gx), "grad");
    float got = NAN;
    tdt_check(td_float_into_data(gx, &got, 1), "read");
    if (!(fabs(got - want) <= 1e-2 * fabs(want)))
        print_message("got %.9g, want %.9g\n", got, want);
    assert_true(fabs(got - want) <= 1e-2 * fabs(want));
    td_tensor_release(gx);
    td_grads_release(g);
    td_tensor_release(cur);
    td_tensor_release(x);
}

/* Out of memory at each allocation of a BALANCED backward: every failure is a clean
 * TD_E_NOMEM, nothing is released twice (it used to free a cached value or a tensor the
 * caller held: heap-use-after-free under ASan), and nothing leaks. */
static void test_balanced_backward_out_of_memory_everywhere(void **state)
{
    (void)state;
    static const float xs[] = { 1.5f };
    static const int64_t s1[] = { 1 };
    int failures = 0;
    for (long k = 0; k < 400; k++) {
        td_tensor *x = NULL, *gl = NULL, *n = NULL, *p = NULL, *l = NULL;
        tdt_check(td_float_from_data(ad_bal, xs, s1, 1, &x), "x");
        tdt_check(td_require_grad(x), "require_grad");
        tdt_check(td_float_gelu(x, &gl), "gelu");
        tdt_check(td_float_neg(gl, &n), "neg");
        tdt_check(td_float_powf(gl, n, &p), "powf");
        tdt_check(td_tensor_retain(p), "p");
        l = p; /* backward from p itself, a one-element tensor */
        td_grads *g = NULL;
        td_testing_fail_allocations_after(k);
        const td_status st = td_backward(l, &g);
        td_testing_fail_allocations_after(-1);
        if (st != TD_OK) {
            assert_int_equal(st, TD_E_NOMEM);
            assert_null(g);
            failures++;
        }
        td_grads_release(g);
        /* the caller's tensors are intact */
        float keep[3];
        tdt_check(td_float_into_data(gl, keep, 1), "gelu(x) still readable");
        td_tensor_release(l);
        td_tensor_release(p);
        td_tensor_release(n);
        td_tensor_release(gl);
        td_tensor_release(x);
        if (st == TD_OK)
            break;
    }
    assert_true(failures > 5);
}

/* ---- devices ---- */

/* Two opens of one device are one handle, so an op may combine their tensors (before the
 * fix they were two devices that passed the same-device check by index). */
static void test_two_opens_share_a_device(void **state)
{
    (void)state;
    td_device *again = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &again), "open cpu:0 again");
    assert_ptr_equal(again, cpu);
    static const float xs[] = { 1, 2 };
    static const int64_t s2[] = { 2 };
    td_tensor *a = NULL, *b = NULL, *c = NULL;
    tdt_check(td_float_from_data(cpu, xs, s2, 1, &a), "a");
    tdt_check(td_float_from_data(again, xs, s2, 1, &b), "b");
    tdt_check(td_float_add(a, b, &c), "a + b");
    static const float want[] = { 2, 4 };
    tdt_expect(c, TD_F32, s2, 1, want, 2, 0.0f);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_device_release(again);
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

/* An argument runs only the tests whose names match it (a cmocka filter pattern). */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_second_backward_over_shared_nodes_none),
        TDT_TEST(test_second_backward_over_shared_nodes_balanced),
        TDT_TEST(test_second_backward_over_saved_result),
        TDT_TEST(test_retain_graph_gives_both_gradients),
        TDT_TEST(test_retain_graph_with_seed),
        TDT_TEST(test_broadcast_overflow_is_a_shape_error),
        TDT_TEST(test_conv_huge_dilated_kernel_is_a_shape_error),
        TDT_TEST(test_conv_weight_rank_message_gives_the_weight_layout),
        TDT_TEST(test_topk_0d_count_0_says_count_must_be_1),
        TDT_TEST(test_assign_and_seed_dtype_mismatch_is_a_dtype_error),
        TDT_TEST(test_seeded_backward_errors_name_backward_seeded),
        TDT_TEST(test_negative_array_lengths),
        TDT_TEST(test_random_rejects_bad_parameters),
        TDT_TEST(test_arange_end_outside_int32),
        TDT_TEST(test_balanced_backward_long_recompute_chain),
        TDT_TEST(test_balanced_backward_out_of_memory_everywhere),
        TDT_TEST(test_two_opens_share_a_device),
    };
    return cmocka_run_group_tests_name("hardening", tests, setup, teardown);
}
