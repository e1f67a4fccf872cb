/* Collectives under mpirun: values on every rank, autodiff gradients, the guard, ranks that
 * disagree, and use before init / after finalize. Run with any number of ranks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

static td_group *world;
static td_device *cpu, *ad_none, *ad_bal;
static int rank, size;

static void read_floats(const td_tensor *t, float *v, int64_t n)
{
    tdt_check(td_float_into_data(t, v, n), "into_data");
}

/* Rank r holds r + 1 + i at element i. */
static td_tensor *rank_tensor(td_device *d, int64_t n)
{
    float v[16];
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(rank + 1) + (float)i;
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(d, v, &n, 1, &t), "from_data");
    return t;
}

static void test_all_reduce_values(void **state)
{
    (void)state;
    td_tensor *a = rank_tensor(cpu, 3);
    const td_reduce_op ops[] = { TD_REDUCE_SUM, TD_REDUCE_MEAN, TD_REDUCE_MAX, TD_REDUCE_MIN };
    for (int k = 0; k < 4; k++) {
        td_tensor *r = NULL;
        tdt_check(td_float_all_reduce(a, world, ops[k], &r), "all_reduce");
        float got[3];
        read_floats(r, got, 3);
        for (int i = 0; i < 3; i++) {
            /* ranks hold 1+i .. size+i */
            float sum = (float)(size * (size + 1) / 2) + (float)(size * i);
            float want = ops[k] == TD_REDUCE_SUM ? sum
                         : ops[k] == TD_REDUCE_MEAN ? sum / (float)size
                         : ops[k] == TD_REDUCE_MAX ? (float)(size + i)
                                                   : (float)(1 + i);
            assert_true(tdt_close(got[i], want, 1e-6f));
        }
        td_tensor_release(r);
    }
    td_tensor_release(a);
}

static void test_int_all_reduce(void **state)
{
    (void)state;
    int32_t v[2] = { rank + 1, -(rank + 1) };
    int64_t n = 2;
    td_tensor *a = NULL, *r = NULL;
    tdt_check(td_int_from_data(cpu, v, &n, 1, &a), "from_data");
    tdt_check(td_int_all_reduce(a, world, TD_REDUCE_SUM, &r), "sum");
    int32_t got[2];
    tdt_check(td_int_into_data(r, got, 2), "into_data");
    assert_int_equal(got[0], size * (size + 1) / 2);
    assert_int_equal(got[1], -size * (size + 1) / 2);
    td_tensor_release(r);
    tdt_check(td_int_all_reduce(a, world, TD_REDUCE_MAX, &r), "max");
    tdt_check(td_int_into_data(r, got, 2), "into_data");
    assert_int_equal(got[0], size);
    assert_int_equal(got[1], -1);
    td_tensor_release(r);
    r = NULL;
    assert_int_equal(td_int_all_reduce(a, world, TD_REDUCE_MEAN, &r), TD_E_INVALID);
    assert_null(r);
    td_tensor_release(a);
}

static void test_broadcast_and_gather(void **state)
{
    (void)state;
    int root = size - 1;
    td_tensor *a = rank_tensor(cpu, 2), *b = NULL, *g = NULL;
    tdt_check(td_float_broadcast(a, world, root, &b), "broadcast");
    float got[2];
    read_floats(b, got, 2);
    assert_true(got[0] == (float)(root + 1) && got[1] == (float)(root + 2));
    td_tensor *bad = NULL;
    assert_int_equal(td_float_broadcast(a, world, size, &bad), TD_E_RANGE);
    assert_null(bad);
    tdt_check(td_float_all_gather(a, world, &g), "all_gather");
    int64_t dims[TD_MAX_DIMS];
    int nd;
    td_tensor_shape(g, dims, &nd);
    assert_int_equal(nd, 1);
    assert_int_equal(dims[0], 2 * size);
    float all[64];
    read_floats(g, all, 2 * size);
    for (int r = 0; r < size; r++) {
        assert_true(all[2 * r] == (float)(r + 1));
        assert_true(all[2 * r + 1] == (float)(r + 2));
    }
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(g);
}

static void test_ranks_disagree(void **state)
{
    (void)state;
    /* Rank 0 passes 2 elements, the others 3: every rank gets the error. */
    td_tensor *a = rank_tensor(cpu, rank == 0 ? 2 : 3), *r = NULL;
    assert_int_equal(td_float_all_reduce(a, world, TD_REDUCE_SUM, &r), size > 1 ? TD_E_DISTRIBUTED : TD_OK);
    if (size > 1)
        assert_non_null(strstr(td_last_error(), "disagree"));
    td_tensor_release(r);
    r = NULL;
    /* Rank 0 sums, the others take the max: a different collective on one rank. */
    assert_int_equal(td_float_all_reduce(a, world, rank == 0 ? TD_REDUCE_SUM : TD_REDUCE_MAX, &r),
                     size > 1 ? TD_E_DISTRIBUTED : TD_OK);
    td_tensor_release(r);
    td_tensor_release(a);
    /* Different dtypes: float on rank 0, int elsewhere. */
    int64_t n = 3;
    td_tensor *x = NULL;
    r = NULL;
    if (rank == 0) {
        x = rank_tensor(cpu, 3);
        assert_int_equal(td_float_all_reduce(x, world, TD_REDUCE_SUM, &r), size > 1 ? TD_E_DISTRIBUTED : TD_OK);
    } else {
        int32_t v[3] = { 1, 2, 3 };
        tdt_check(td_int_from_data(cpu, v, &n, 1, &x), "int");
        assert_int_equal(td_int_all_reduce(x, world, TD_REDUCE_SUM, &r), TD_E_DISTRIBUTED);
    }
    td_tensor_release(r);
    td_tensor_release(x);
}

/* L_r = sum(y * w_r), w_r = r + 1, summed over ranks by the collectives' backward. */
static void grad_of(td_device *ad, int which, float *out3)
{
    td_tensor *x = rank_tensor(ad, 3), *y = NULL, *w = NULL, *p = NULL, *l = NULL, *g = NULL;
    tdt_check(td_require_grad(x), "require_grad");
    int64_t shape = 3;
    float wv[3] = { (float)(rank + 1), (float)(rank + 1), (float)(rank + 1) };
    if (which == 0)
        tdt_check(td_float_all_reduce(x, world, TD_REDUCE_SUM, &y), "all_reduce");
    else if (which == 1)
        tdt_check(td_float_all_reduce(x, world, TD_REDUCE_MEAN, &y), "all_reduce");
    else
        tdt_check(td_float_broadcast(x, world, 0, &y), "broadcast");
    tdt_check(td_float_from_data(ad, wv, &shape, 1, &w), "w");
    tdt_check(td_float_mul(y, w, &p), "mul");
    tdt_check(td_float_sum(p, &l), "sum");
    td_grads *grads = NULL;
    tdt_check(td_backward(l, &grads), "backward");
    tdt_check(td_grads_get(grads, x, &g), "grads_get");
    read_floats(g, out3, 3);
    td_tensor *all[] = { x, y, w, p, l, g };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    td_grads_release(grads);
}

static void test_autodiff_collectives(void **state)
{
    (void)state;
    float sum_w = (float)(size * (size + 1) / 2);
    for (int which = 0; which < 3; which++) {
        float a[3], b[3];
        grad_of(ad_none, which, a);
        grad_of(ad_bal, which, b);
        float want = which == 0 ? sum_w : which == 1 ? sum_w / (float)size : (rank == 0 ? sum_w : 0.0f);
        for (int i = 0; i < 3; i++) {
            assert_true(tdt_close(a[i], want, 1e-6f));
            assert_true(a[i] == b[i]);
        }
    }
}

static void test_autodiff_all_gather(void **state)
{
    (void)state;
    td_tensor *x = rank_tensor(ad_none, 2), *y = NULL, *l = NULL, *g = NULL, *sq = NULL;
    tdt_check(td_require_grad(x), "require_grad");
    tdt_check(td_float_all_gather(x, world, &y), "all_gather");
    tdt_check(td_float_mul(y, y, &sq), "square");
    tdt_check(td_float_sum(sq, &l), "sum");
    td_grads *grads = NULL;
    tdt_check(td_backward(l, &grads), "backward");
    tdt_check(td_grads_get(grads, x, &g), "grads_get");
    float got[2];
    read_floats(g, got, 2);
    /* Every rank's loss sees x_r: d/dx_r sum_q sum(y^2) = size * 2 x_r. */
    assert_true(tdt_close(got[0], 2.0f * (float)size * (float)(rank + 1), 1e-6f));
    assert_true(tdt_close(got[1], 2.0f * (float)size * (float)(rank + 2), 1e-6f));
    td_tensor *all[] = { x, y, l, g, sq };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    td_grads_release(grads);
}

static void test_guard_on_collectives(void **state)
{
    (void)state;
    /* Every inner backend that declares collectives gets the guard. */
    for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
        if (!td_backend_supports((td_backend)b, TD_OP_FLOAT_ALL_REDUCE))
            continue;
        td_device *d = NULL, *ad = NULL;
        tdt_check(td_device_open((td_backend)b, 0, &d), "device");
        tdt_check(td_device_autodiff(d, TD_CHECKPOINT_NONE, &ad), "autodiff");
        td_tensor *x = rank_tensor(ad, 2), *r = NULL;
        td_autodiff_context off = { .enabled = false, .strategy = TD_CHECKPOINT_NONE };
        tdt_check(td_tensor_set_autodiff_context(x, off), "context");
        assert_int_equal(td_float_all_reduce(x, world, TD_REDUCE_SUM, &r), TD_E_AUTODIFF_CONTEXT);
        assert_string_equal(td_last_error(), TDT_GUARD_MESSAGE);
        assert_int_equal(td_float_broadcast(x, world, 0, &r), TD_E_AUTODIFF_CONTEXT);
        assert_int_equal(td_float_all_gather(x, world, &r), TD_E_AUTODIFF_CONTEXT);
        assert_string_equal(td_last_error(), TDT_GUARD_MESSAGE);
        assert_null(r);
        td_tensor_release(x);
        td_device_release(ad);
        td_device_release(d);
    }
}

static void test_backends_without_collectives(void **state)
{
    (void)state;
    for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
        if (!td_backend_enabled((td_backend)b) || td_backend_supports((td_backend)b, TD_OP_FLOAT_ALL_REDUCE))
            continue;
        td_device *d = NULL;
        if (td_device_open((td_backend)b, 0, &d) != TD_OK)
            fail_msg("backend %s is enabled but has no device: %s", td_backend_name((td_backend)b), td_last_error());
        td_tensor *x = tdt_filled(d, TD_F32, (const int64_t[]){ 2 }, 1), *r = NULL;
        assert_int_equal(td_float_all_reduce(x, world, TD_REDUCE_SUM, &r), TD_E_UNSUPPORTED);
        assert_non_null(strstr(td_last_error(), td_backend_name((td_backend)b)));
        td_tensor_release(x);
        td_device_release(d);
    }
}

static int setup(void **state)
{
    (void)state;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK ||
        td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad_none) != TD_OK ||
        td_device_autodiff(cpu, TD_CHECKPOINT_BALANCED, &ad_bal) != TD_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(ad_bal);
    td_device_release(ad_none);
    td_device_release(cpu);
    return 0;
}

int main(int argc, char **argv)
{
    /* Before init: no group, no collective. */
    td_group *early = NULL;
    if (td_group_world(&early) != TD_E_DISTRIBUTED || early != NULL) {
        fprintf(stderr, "group_world before init did not fail\n");
        return 1;
    }
    if (td_dist_init(&argc, &argv) != TD_OK || td_group_world(&world) != TD_OK) {
        fprintf(stderr, "cannot start: %s\n", td_last_error());
        return 1;
    }
    td_group_rank(world, &rank);
    td_group_size(world, &size);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_reduce_values),
        cmocka_unit_test(test_int_all_reduce),
        cmocka_unit_test(test_broadcast_and_gather),
        cmocka_unit_test(test_ranks_disagree),
        cmocka_unit_test(test_autodiff_collectives),
        cmocka_unit_test(test_autodiff_all_gather),
        cmocka_unit_test(test_guard_on_collectives),
        cmocka_unit_test(test_backends_without_collectives),
    };
    int failed = cmocka_run_group_tests_name("dist", tests, setup, teardown);
    /* After finalize: the old group is refused, not used. */
    td_dist_finalize();
    td_device *d = NULL;
    td_tensor *x = NULL, *r = NULL;
    int late = 0;
    if (td_device_open(TD_BACKEND_CPU, 0, &d) == TD_OK && (x = tdt_filled(d, TD_F32, (const int64_t[]){ 2 }, 1))) {
        late = td_float_all_reduce(x, world, TD_REDUCE_SUM, &r) == TD_E_DISTRIBUTED && r == NULL &&
               strstr(td_last_error(), "after td_dist_finalize") != NULL;
    }
    td_tensor_release(x);
    td_device_release(d);
    td_group_release(world);
    if (!late) {
        fprintf(stderr, "rank %d: a collective after finalize was not refused\n", rank);
        failed++;
    }
    if (td_testing_live_objects() != 0) {
        fprintf(stderr, "rank %d: %ld objects leaked\n", rank, td_testing_live_objects());
        failed++;
    }
    return failed ? 1 : 0;
}
