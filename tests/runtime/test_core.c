/* Core API: reference counting, tensor queries, backend/op names, the autodiff device
 * (tensor kinds and contexts, conversions and to_device both ways), version and devices. */
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

static td_device *dev;    /* cpu:0 */
static td_device *ad_dev; /* autodiff(cpu:0, NONE) */
static td_device *ad_bal; /* autodiff(cpu:0, BALANCED) */

static const float F6[] = { 1.5f, -2.0f, 0.0f, 3.25f, 0.125f, -7.0f };
static const int32_t I6[] = { 1, -2, 0, 2147483647, -2147483647 - 1, 7 };
static const bool B6[] = { true, false, false, true, true, false };
static const int64_t S23[] = { 2, 3 };

static void expect_kind(const td_tensor *t, td_backend kind, td_dtype dtype, bool enabled, td_checkpoint strategy)
{
    td_backend b;
    td_dtype d;
    td_autodiff_context ctx;
    tdt_check(td_tensor_backend(t, &b), "backend");
    tdt_check(td_tensor_dtype(t, &d), "dtype");
    tdt_check(td_tensor_autodiff_context(t, &ctx), "context");
    assert_int_equal(b, kind);
    assert_int_equal(d, dtype);
    assert_int_equal(ctx.enabled, enabled);
    if (enabled)
        assert_int_equal(ctx.strategy, strategy);
}

/* ---- reference counting ---- */

static void test_tensor_retain_release(void **state)
{
    (void)state;
    td_tensor *t = tdt_make(dev, TD_F32, F6, S23, 2);
    assert_non_null(t);
    long live = td_testing_live_objects();
    assert_int_equal(live, tdt_live_baseline() + 1);
    tdt_check(td_tensor_retain(t), "retain");
    tdt_check(td_tensor_retain(t), "retain");
    assert_int_equal(td_testing_live_objects(), live); /* a retain is not a new object */
    td_tensor_release(t);
    td_tensor_release(t);
    assert_int_equal(td_testing_live_objects(), live); /* one reference left */
    tdt_expect(t, TD_F32, S23, 2, F6, 6, 0.0f);        /* still usable */
    td_tensor_release(t);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
}

static void test_device_retain_release(void **state)
{
    (void)state;
    td_device *d = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d), "open");
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 1);
    tdt_check(td_device_retain(d), "retain");
    td_device_release(d);
    td_backend b;
    tdt_check(td_device_backend(d, &b), "backend after one release");
    assert_int_equal(b, TD_BACKEND_CPU);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 1);
    td_device_release(d);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
}

/* One handle per open device: a second open of cpu:0 is the first handle (a new
 * reference), so tensors made through either handle share a device. */
static void test_open_twice_gives_one_handle(void **state)
{
    (void)state;
    td_device *d1 = NULL, *d2 = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d1), "open");
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d2), "open again");
    assert_ptr_equal(d1, d2);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 1);
    td_tensor *a = tdt_make(d1, TD_F32, F6, S23, 2), *b = tdt_make(d2, TD_F32, F6, S23, 2), *c = NULL;
    assert_non_null(a);
    assert_non_null(b);
    tdt_check(td_float_add(a, b, &c), "add across the two handles");
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_device_release(d1);
    tdt_check(td_device_backend(d2, &(td_backend){ 0 }), "the second reference still works");
    td_device_release(d2);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
    /* after the last release, an open makes a new device */
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d1), "open after close");
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 1);
    td_device_release(d1);
}

static void test_open_out_of_memory(void **state)
{
    (void)state;
    td_device *d = (td_device *)&d;
    td_testing_fail_allocations_after(0);
    const td_status st = td_device_open(TD_BACKEND_CPU, 0, &d);
    td_testing_fail_allocations_after(-1);
    tdt_expect_error(st, TD_E_NOMEM, "device_open");
    assert_null(d);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
    /* nothing half-registered: the next open works and is the only device */
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d), "open after NOMEM");
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 1);
    td_device_release(d);
}

static void test_autodiff_device_keeps_inner_device_alive(void **state)
{
    (void)state;
    td_device *d = NULL, *ad = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d), "open");
    tdt_check(td_device_autodiff(d, TD_CHECKPOINT_NONE, &ad), "autodiff");
    td_device_release(d); /* ad holds its own reference to d */
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 2);
    td_tensor *t = tdt_make(ad, TD_F32, F6, S23, 2);
    assert_non_null(t);
    tdt_expect(t, TD_F32, S23, 2, F6, 6, 0.0f);
    td_tensor_release(t);
    td_device_release(ad);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
}

static void test_tensor_keeps_device_alive(void **state)
{
    (void)state;
    td_device *d = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d), "open");
    td_tensor *t = tdt_make(d, TD_F32, F6, S23, 2);
    assert_non_null(t);
    td_device_release(d); /* the caller's reference is gone, the tensor's remains */
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline() + 2);

    td_device *got = NULL;
    tdt_check(td_tensor_device(t, &got), "device");
    assert_ptr_equal(got, d);
    td_backend b;
    tdt_check(td_device_backend(got, &b), "device backend");
    assert_int_equal(b, TD_BACKEND_CPU);
    /* the device still works: ops on the tensor and new tensors on it */
    td_tensor *twice = NULL, *z = NULL;
    tdt_check(td_float_add(t, t, &twice), "add");
    tdt_check(td_float_zeros(got, S23, 2, &z), "zeros on the borrowed device");
    static const float want[] = { 3.0f, -4.0f, 0.0f, 6.5f, 0.25f, -14.0f };
    tdt_expect(twice, TD_F32, S23, 2, want, 6, 0.0f);
    td_tensor_release(twice);
    td_tensor_release(z);
    td_tensor_release(t); /* the last reference to d goes with it */
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
}

static void test_autodiff_tensor_keeps_both_devices_alive(void **state)
{
    (void)state;
    td_device *d = NULL, *ad = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &d), "open");
    tdt_check(td_device_autodiff(d, TD_CHECKPOINT_BALANCED, &ad), "autodiff");
    td_tensor *t = tdt_make(ad, TD_F32, F6, S23, 2);
    assert_non_null(t);
    td_device_release(ad);
    td_device_release(d);
    td_tensor *e = NULL;
    tdt_check(td_float_neg(t, &e), "neg");
    static const float want[] = { -1.5f, 2.0f, -0.0f, -3.25f, -0.125f, 7.0f };
    tdt_expect(e, TD_F32, S23, 2, want, 6, 0.0f);
    expect_kind(e, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_BALANCED);
    td_tensor_release(t);
    td_tensor_release(e);
    assert_int_equal(td_testing_live_objects(), tdt_live_baseline());
}

/* ---- queries ---- */

static void test_queries_of_a_plain_tensor(void **state)
{
    (void)state;
    static const int64_t s[] = { 2, 3, 4 };
    td_tensor *t = NULL;
    tdt_check(td_float_ones(dev, s, 3, &t), "ones");
    int64_t dims[TD_MAX_DIMS];
    int ndim = -1;
    int64_t numel = 0;
    td_device *d = NULL;
    tdt_check(td_tensor_shape(t, dims, &ndim), "shape");
    assert_int_equal(ndim, 3);
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 3);
    assert_int_equal(dims[2], 4);
    tdt_check(td_tensor_numel(t, &numel), "numel");
    assert_int_equal(numel, 24);
    tdt_check(td_tensor_device(t, &d), "device");
    assert_ptr_equal(d, dev);
    expect_kind(t, TD_BACKEND_CPU, TD_F32, false, TD_CHECKPOINT_NONE);
    td_tensor_release(t);

    td_tensor *i = tdt_make(dev, TD_I32, I6, S23, 2), *b = tdt_make(dev, TD_BOOL, B6, S23, 2);
    expect_kind(i, TD_BACKEND_CPU, TD_I32, false, TD_CHECKPOINT_NONE);
    expect_kind(b, TD_BACKEND_CPU, TD_BOOL, false, TD_CHECKPOINT_NONE);
    tdt_expect(i, TD_I32, S23, 2, I6, 6, 0.0f);
    tdt_expect(b, TD_BOOL, S23, 2, B6, 6, 0.0f);
    td_tensor_release(i);
    td_tensor_release(b);
}

static void test_queries_of_zero_dim_tensors(void **state)
{
    (void)state;
    static const float v = 4.5f;
    td_tensor *s = NULL, *sum = NULL;
    tdt_check(td_float_from_data(dev, &v, NULL, 0, &s), "scalar");
    int64_t dims[TD_MAX_DIMS];
    int ndim = -1;
    int64_t numel = 0;
    tdt_check(td_tensor_shape(s, dims, &ndim), "shape");
    assert_int_equal(ndim, 0);
    tdt_check(td_tensor_numel(s, &numel), "numel");
    assert_int_equal(numel, 1);
    tdt_expect(s, TD_F32, dims, 0, &v, 1, 0.0f);

    /* whole-tensor reductions are 0-dim */
    td_tensor *t = tdt_make(dev, TD_F32, F6, S23, 2);
    tdt_check(td_float_sum(t, &sum), "sum");
    tdt_check(td_tensor_shape(sum, dims, &ndim), "shape");
    assert_int_equal(ndim, 0);
    const float want = 1.5f - 2.0f + 3.25f + 0.125f - 7.0f;
    tdt_expect(sum, TD_F32, dims, 0, &want, 1, 1e-6f);

    /* a 0-dim tensor broadcasts against anything */
    td_tensor *shifted = NULL;
    tdt_check(td_float_add(t, s, &shifted), "add a scalar");
    float w6[6];
    for (int k = 0; k < 6; k++)
        w6[k] = F6[k] + 4.5f;
    tdt_expect(shifted, TD_F32, S23, 2, w6, 6, 0.0f);
    td_tensor_release(shifted);
    td_tensor_release(t);
    td_tensor_release(s);
    td_tensor_release(sum);
}

static void test_queries_on_autodiff_device(void **state)
{
    (void)state;
    td_backend b;
    tdt_check(td_device_backend(ad_dev, &b), "device backend");
    assert_int_equal(b, TD_BACKEND_AUTODIFF);
    tdt_check(td_device_backend(dev, &b), "device backend");
    assert_int_equal(b, TD_BACKEND_CPU);

    td_tensor *t = tdt_make(ad_dev, TD_F32, F6, S23, 2), *u = tdt_make(ad_bal, TD_F32, F6, S23, 2);
    expect_kind(t, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_NONE);
    expect_kind(u, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_BALANCED);
    td_device *d = NULL;
    tdt_check(td_tensor_device(t, &d), "device");
    assert_ptr_equal(d, ad_dev);
    int64_t numel;
    tdt_check(td_tensor_numel(t, &numel), "numel");
    assert_int_equal(numel, 6);
    tdt_expect(t, TD_F32, S23, 2, F6, 6, 0.0f);
    td_tensor_release(t);
    td_tensor_release(u);
}

static void test_set_autodiff_context_round_trip(void **state)
{
    (void)state;
    td_tensor *t = tdt_make(ad_dev, TD_I32, I6, S23, 2);
    const td_autodiff_context bal = { .enabled = true, .strategy = TD_CHECKPOINT_BALANCED };
    tdt_check(td_tensor_set_autodiff_context(t, bal), "set");
    expect_kind(t, TD_BACKEND_AUTODIFF, TD_I32, true, TD_CHECKPOINT_BALANCED);
    const td_autodiff_context off = { .enabled = false, .strategy = TD_CHECKPOINT_NONE };
    tdt_check(td_tensor_set_autodiff_context(t, off), "set");
    expect_kind(t, TD_BACKEND_AUTODIFF, TD_I32, false, TD_CHECKPOINT_NONE);
    td_tensor_release(t);
}

/* ---- names and capabilities ---- */

static void test_backend_names_and_enabled(void **state)
{
    (void)state;
    assert_string_equal(td_backend_name(TD_BACKEND_CPU), "cpu");
    assert_string_equal(td_backend_name(TD_BACKEND_AUTODIFF), "autodiff");
    assert_string_equal(td_backend_name(TD_BACKEND_COUNT), "unknown");
    assert_string_equal(td_backend_name((td_backend)-1), "unknown");
    assert_true(td_backend_enabled(TD_BACKEND_CPU));
    assert_true(td_backend_enabled(TD_BACKEND_AUTODIFF));
    assert_false(td_backend_enabled(TD_BACKEND_COUNT));
    assert_false(td_backend_enabled((td_backend)-1));
    /* ids are stable (from the specs): cpu 0, vulkan 1, autodiff 63; unused ids have no name */
    assert_int_equal(TD_BACKEND_CPU, 0);
    assert_int_equal(TD_BACKEND_VULKAN, 1);
    assert_int_equal(TD_BACKEND_AUTODIFF, 63);
    assert_string_equal(td_backend_name((td_backend)40), "unknown");
    /* every declared backend has a distinct name */
    for (int i = 0; i < TD_BACKEND_COUNT; i++)
        for (int j = i + 1; j < TD_BACKEND_COUNT; j++)
            if (strcmp(td_backend_name((td_backend)i), "unknown") != 0)
                assert_string_not_equal(td_backend_name((td_backend)i), td_backend_name((td_backend)j));
}

static void test_backend_supports(void **state)
{
    (void)state;
    assert_true(td_backend_supports(TD_BACKEND_CPU, TD_OP_FLOAT_ADD));
    assert_true(td_backend_supports(TD_BACKEND_CPU, TD_OP_FLOAT_MATMUL));
    assert_true(td_backend_supports(TD_BACKEND_CPU, TD_OP_SYNC));
    assert_true(td_backend_supports(TD_BACKEND_AUTODIFF, TD_OP_FLOAT_ADD));
    assert_false(td_backend_supports(TD_BACKEND_CPU, TD_OP_COUNT));
    assert_false(td_backend_supports(TD_BACKEND_CPU, (td_op)-1));
    assert_false(td_backend_supports(TD_BACKEND_COUNT, TD_OP_FLOAT_ADD));
    assert_false(td_backend_supports((td_backend)-1, TD_OP_FLOAT_ADD));
    /* autodiff supports exactly what some enabled inner backend supports */
    for (int op = 0; op < TD_OP_COUNT; op++) {
        bool any = false;
        for (int b = 0; b < TD_BACKEND_AUTODIFF; b++)
            any = any || td_backend_supports((td_backend)b, (td_op)op);
        assert_int_equal(td_backend_supports(TD_BACKEND_AUTODIFF, (td_op)op), any);
    }
}

static void test_op_names(void **state)
{
    (void)state;
    assert_string_equal(td_op_name(TD_OP_FLOAT_ADD), "float_add");
    assert_string_equal(td_op_name(TD_OP_FLOAT_FROM_DATA), "float_from_data");
    assert_string_equal(td_op_name(TD_OP_INT_ARANGE), "int_arange");
    assert_string_equal(td_op_name(TD_OP_SYNC), "sync");
    assert_string_equal(td_op_name(TD_OP_COUNT), "unknown");
    assert_string_equal(td_op_name((td_op)-1), "unknown");
    /* op ids come from the specs and may leave gaps, which have no name */
    for (int i = 0; i < TD_OP_COUNT; i++) {
        const char *n = td_op_name((td_op)i);
        assert_non_null(n);
        assert_true(strlen(n) > 0);
        if (strcmp(n, "unknown") == 0)
            continue;
        for (int j = i + 1; j < TD_OP_COUNT; j++)
            assert_string_not_equal(n, td_op_name((td_op)j));
    }
}

/* ---- the autodiff device ---- */

static void test_int_and_bool_on_autodiff_device_keep_context(void **state)
{
    (void)state;
    td_tensor *i = tdt_make(ad_bal, TD_I32, I6, S23, 2), *b = tdt_make(ad_bal, TD_BOOL, B6, S23, 2);
    assert_non_null(i);
    assert_non_null(b);
    expect_kind(i, TD_BACKEND_AUTODIFF, TD_I32, true, TD_CHECKPOINT_BALANCED);
    expect_kind(b, TD_BACKEND_AUTODIFF, TD_BOOL, true, TD_CHECKPOINT_BALANCED);
    tdt_expect(i, TD_I32, S23, 2, I6, 6, 0.0f);
    tdt_expect(b, TD_BOOL, S23, 2, B6, 6, 0.0f);

    /* results of int/bool ops keep the context too */
    td_tensor *eq = NULL, *nb = NULL, *r = NULL, *ar = NULL;
    tdt_check(td_int_equal(i, i, &eq), "int_equal");
    expect_kind(eq, TD_BACKEND_AUTODIFF, TD_BOOL, true, TD_CHECKPOINT_BALANCED);
    tdt_check(td_bool_not(b, &nb), "bool_not");
    expect_kind(nb, TD_BACKEND_AUTODIFF, TD_BOOL, true, TD_CHECKPOINT_BALANCED);
    static const int64_t s32[] = { 3, 2 };
    tdt_check(td_int_reshape(i, s32, 2, &r), "int_reshape");
    expect_kind(r, TD_BACKEND_AUTODIFF, TD_I32, true, TD_CHECKPOINT_BALANCED);
    tdt_expect(r, TD_I32, s32, 2, I6, 6, 0.0f);
    tdt_check(td_int_arange(ad_dev, 0, 4, 1, &ar), "int_arange");
    expect_kind(ar, TD_BACKEND_AUTODIFF, TD_I32, true, TD_CHECKPOINT_NONE);
    td_tensor_release(i);
    td_tensor_release(b);
    td_tensor_release(eq);
    td_tensor_release(nb);
    td_tensor_release(r);
    td_tensor_release(ar);
}

static void test_int_into_float_on_autodiff_device_gives_autodiff_float(void **state)
{
    (void)state;
    static const int32_t v[] = { -3, 0, 5, 16777216 };
    static const int64_t s4[] = { 4 };
    td_tensor *i = tdt_make(ad_bal, TD_I32, v, s4, 1), *f = NULL, *fb = NULL;
    tdt_check(td_int_into_float(i, &f), "int_into_float");
    expect_kind(f, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_BALANCED);
    static const float want[] = { -3.0f, 0.0f, 5.0f, 16777216.0f };
    tdt_expect(f, TD_F32, s4, 1, want, 4, 0.0f);
    /* the result is a usable float leaf: float ops accept it */
    td_tensor *e = NULL;
    tdt_check(td_float_mul(f, f, &e), "float_mul on the converted tensor");
    expect_kind(e, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_BALANCED);

    static const bool bv[] = { true, false, true, true };
    td_tensor *b = tdt_make(ad_dev, TD_BOOL, bv, s4, 1);
    tdt_check(td_bool_into_float(b, &fb), "bool_into_float");
    expect_kind(fb, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_NONE);
    static const float bwant[] = { 1, 0, 1, 1 };
    tdt_expect(fb, TD_F32, s4, 1, bwant, 4, 0.0f);
    td_tensor_release(i);
    td_tensor_release(f);
    td_tensor_release(e);
    td_tensor_release(b);
    td_tensor_release(fb);
}

static void test_float_ops_on_autodiff_device(void **state)
{
    (void)state;
    td_tensor *a = tdt_make(ad_dev, TD_F32, F6, S23, 2), *s = NULL, *m = NULL, *c = NULL;
    tdt_check(td_float_add(a, a, &s), "add");
    expect_kind(s, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_NONE);
    static const int64_t s32[] = { 3, 2 }, s22[] = { 2, 2 };
    td_tensor *bt = NULL;
    tdt_check(td_float_reshape(a, s32, 2, &bt), "reshape");
    tdt_check(td_float_matmul(a, bt, &m), "matmul");
    expect_kind(m, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_NONE);
    /* [[1.5,-2,0],[3.25,0.125,-7]] @ [[1.5,-2],[0,3.25],[0.125,-7]] */
    static const float want[] = { 2.25f, -9.5f, 4.0f, 42.90625f };
    tdt_expect(m, TD_F32, s22, 2, want, 4, 1e-6f);
    const td_tensor *xs[] = { a, s };
    tdt_check(td_float_cat(xs, 2, 0, &c), "cat");
    expect_kind(c, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_NONE);
    td_tensor_release(a);
    td_tensor_release(s);
    td_tensor_release(bt);
    td_tensor_release(m);
    td_tensor_release(c);
}

static void test_to_device_between_cpu_and_autodiff(void **state)
{
    (void)state;
    td_tensor *f = tdt_make(dev, TD_F32, F6, S23, 2), *i = tdt_make(dev, TD_I32, I6, S23, 2);
    td_tensor *b = tdt_make(dev, TD_BOOL, B6, S23, 2);
    td_tensor *fa = NULL, *ia = NULL, *ba = NULL, *fc = NULL, *ic = NULL, *bc = NULL, *fbal = NULL;

    /* cpu -> autodiff(cpu) */
    tdt_check(td_float_to_device(f, ad_dev, &fa), "float cpu -> autodiff");
    tdt_check(td_int_to_device(i, ad_dev, &ia), "int cpu -> autodiff");
    tdt_check(td_bool_to_device(b, ad_bal, &ba), "bool cpu -> autodiff");
    expect_kind(fa, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_NONE);
    expect_kind(ia, TD_BACKEND_AUTODIFF, TD_I32, true, TD_CHECKPOINT_NONE);
    expect_kind(ba, TD_BACKEND_AUTODIFF, TD_BOOL, true, TD_CHECKPOINT_BALANCED);
    td_device *d = NULL;
    tdt_check(td_tensor_device(fa, &d), "device");
    assert_ptr_equal(d, ad_dev);
    tdt_expect(fa, TD_F32, S23, 2, F6, 6, 0.0f);
    tdt_expect(ia, TD_I32, S23, 2, I6, 6, 0.0f);
    tdt_expect(ba, TD_BOOL, S23, 2, B6, 6, 0.0f);

    /* autodiff(cpu) -> cpu: plain tensors again */
    tdt_check(td_float_to_device(fa, dev, &fc), "float autodiff -> cpu");
    tdt_check(td_int_to_device(ia, dev, &ic), "int autodiff -> cpu");
    tdt_check(td_bool_to_device(ba, dev, &bc), "bool autodiff -> cpu");
    expect_kind(fc, TD_BACKEND_CPU, TD_F32, false, TD_CHECKPOINT_NONE);
    expect_kind(ic, TD_BACKEND_CPU, TD_I32, false, TD_CHECKPOINT_NONE);
    expect_kind(bc, TD_BACKEND_CPU, TD_BOOL, false, TD_CHECKPOINT_NONE);
    tdt_check(td_tensor_device(fc, &d), "device");
    assert_ptr_equal(d, dev);
    tdt_expect(fc, TD_F32, S23, 2, F6, 6, 0.0f);
    tdt_expect(ic, TD_I32, S23, 2, I6, 6, 0.0f);
    tdt_expect(bc, TD_BOOL, S23, 2, B6, 6, 0.0f);

    /* autodiff(NONE) -> autodiff(BALANCED): the target device decides the context */
    tdt_check(td_float_to_device(fa, ad_bal, &fbal), "float autodiff -> autodiff");
    expect_kind(fbal, TD_BACKEND_AUTODIFF, TD_F32, true, TD_CHECKPOINT_BALANCED);
    tdt_expect(fbal, TD_F32, S23, 2, F6, 6, 0.0f);

    /* the copies are independent of the source */
    td_tensor_release(f);
    tdt_expect(fa, TD_F32, S23, 2, F6, 6, 0.0f);

    td_tensor_release(i);
    td_tensor_release(b);
    td_tensor_release(fa);
    td_tensor_release(ia);
    td_tensor_release(ba);
    td_tensor_release(fc);
    td_tensor_release(ic);
    td_tensor_release(bc);
    td_tensor_release(fbal);
}
/* ---- version and device enumeration ---- */

static void test_version(void **state)
{
    (void)state;
    assert_string_equal(td_version(), TD_VERSION_STRING);
    assert_true(TD_VERSION_MAJOR >= 1);
    assert_int_equal(TD_VERSION, TD_VERSION_MAJOR * 10000 + TD_VERSION_MINOR * 100 + TD_VERSION_PATCH);
}

static void test_cpu_device_enumeration(void **state)
{
    (void)state;
    int n = -1;
    tdt_check(td_device_count(TD_BACKEND_CPU, &n), "device_count");
    assert_int_equal(n, 1);
    td_device_info info;
    tdt_check(td_device_info_get(TD_BACKEND_CPU, 0, &info), "device_info_get");
    assert_int_equal(info.backend, TD_BACKEND_CPU);
    assert_int_equal(info.index, 0);
    assert_true(info.name[0] != '\0');
    assert_non_null(strstr(info.driver, "tdispatch cpu kernels"));
    assert_string_equal(info.type, "cpu");
    assert_false(info.software);
    assert_true(info.memory_bytes > 0);
    /* an open device, plain or wrapped by autodiff, is described the same way */
    td_device_info of;
    tdt_check(td_device_info_of(ad_dev, &of), "device_info_of");
    assert_int_equal(of.backend, TD_BACKEND_CPU);
    assert_string_equal(of.name, info.name);
}

static void test_device_enumeration_errors(void **state)
{
    (void)state;
    int n = -1;
    td_device_info info;
    tdt_expect_error(td_device_count(TD_BACKEND_CPU, NULL), TD_E_NULL, "device_count");
    tdt_expect_error(td_device_count(TD_BACKEND_AUTODIFF, &n), TD_E_INVALID, "device_count");
    assert_int_equal(n, 0);
    tdt_expect_error(td_device_count((td_backend)99, &n), TD_E_INVALID, "device_count");
    tdt_expect_error(td_device_info_get(TD_BACKEND_CPU, 1, &info), TD_E_DEVICE, "device_info_get");
    assert_non_null(strstr(td_last_error(), "no device 1 (1 cpu device found)"));
    assert_int_equal(info.name[0], '\0');
    tdt_expect_error(td_device_info_get(TD_BACKEND_CPU, -1, &info), TD_E_DEVICE, "device_info_get");
    tdt_expect_error(td_device_info_get(TD_BACKEND_CPU, 0, NULL), TD_E_NULL, "device_info_get");
    tdt_expect_error(td_device_info_of(NULL, &info), TD_E_NULL, "device_info_of");
    tdt_expect_error(td_device_info_of(dev, NULL), TD_E_NULL, "device_info_of");
}

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &dev, &ad_dev, &ad_bal);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad_dev, ad_bal);
}


int main(void)
{
    /* Device lifetimes, with no device held by the group, so each open makes a new one. */
    const struct CMUnitTest lifetimes[] = {
        TDT_TEST(test_device_retain_release),
        TDT_TEST(test_open_twice_gives_one_handle),
        TDT_TEST(test_open_out_of_memory),
        TDT_TEST(test_autodiff_device_keeps_inner_device_alive),
        TDT_TEST(test_tensor_keeps_device_alive),
        TDT_TEST(test_autodiff_tensor_keeps_both_devices_alive),
    };
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_tensor_retain_release),
        TDT_TEST(test_queries_of_a_plain_tensor),
        TDT_TEST(test_queries_of_zero_dim_tensors),
        TDT_TEST(test_queries_on_autodiff_device),
        TDT_TEST(test_set_autodiff_context_round_trip),
        TDT_TEST(test_backend_names_and_enabled),
        TDT_TEST(test_backend_supports),
        TDT_TEST(test_op_names),
        TDT_TEST(test_int_and_bool_on_autodiff_device_keep_context),
        TDT_TEST(test_int_into_float_on_autodiff_device_gives_autodiff_float),
        TDT_TEST(test_float_ops_on_autodiff_device),
        TDT_TEST(test_to_device_between_cpu_and_autodiff),
        TDT_TEST(test_version),
        TDT_TEST(test_cpu_device_enumeration),
        TDT_TEST(test_device_enumeration_errors),
    };
    const int failed = cmocka_run_group_tests_name("device_lifetimes", lifetimes, NULL, NULL);
    return failed + cmocka_run_group_tests_name("core", tests, group_setup, group_teardown);
}
