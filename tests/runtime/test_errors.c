/* Every error status provoked through the public API: the status, the message (op name and
 * cause), *out left NULL, and nothing leaked (checked after every test). */
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
static td_device *ad_bal; /* autodiff(cpu:0, BALANCED) */

#define GUARD_MESSAGE "an autodiff float primitive must have an enabled autodiff context"

/* Fails unless st == want and td_last_error() contains every string of the NULL-terminated list. */
static void expect_err_impl(td_status st, td_status want, const char *file, int line, ...)
{
    if (st != want) {
        print_error("expected %s, got %s (%s)\n", td_status_name(want), td_status_name(st),
                    st == TD_OK ? "no error" : td_last_error());
        _fail(file, line);
    }
    const char *msg = td_last_error();
    va_list ap;
    va_start(ap, line);
    for (const char *s = va_arg(ap, const char *); s != NULL; s = va_arg(ap, const char *)) {
        if (strstr(msg, s) == NULL) {
            va_end(ap);
            print_error("the %s message '%s' does not contain '%s'\n", td_status_name(want), msg, s);
            _fail(file, line);
        }
    }
    va_end(ap);
}
#define EXPECT_ERR(st, want, ...) \
    expect_err_impl((st), (want), __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)

/* Float tensor of the given shape on d holding 1, 2, 3, ... */
static td_tensor *mkf(td_device *d, const int64_t *shape, int ndim)
{
    float buf[256];
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    assert_true(n <= 256);
    for (int64_t i = 0; i < n; i++)
        buf[i] = (float)(i + 1);
    td_tensor *t = tdt_make(d, TD_F32, buf, shape, ndim);
    assert_non_null(t);
    return t;
}

/* Int tensor of the given shape on d holding 1, 2, 3, ... */
static td_tensor *mki(td_device *d, const int64_t *shape, int ndim)
{
    int32_t buf[256];
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    assert_true(n <= 256);
    for (int64_t i = 0; i < n; i++)
        buf[i] = (int32_t)(i + 1);
    td_tensor *t = tdt_make(d, TD_I32, buf, shape, ndim);
    assert_non_null(t);
    return t;
}

static td_tensor *mkb(td_device *d, const int64_t *shape, int ndim)
{
    td_tensor *t = tdt_filled(d, TD_BOOL, shape, ndim);
    assert_non_null(t);
    return t;
}

static const td_autodiff_context DISABLED = { .enabled = false, .strategy = TD_CHECKPOINT_NONE };

/* ---- NULL arguments ---- */

static void test_null_tensor_and_out_arguments(void **state)
{
    (void)state;
    static const int64_t s[] = { 2, 3 };
    td_tensor *a = mkf(dev, s, 2);
    td_tensor *out = (td_tensor *)&out; /* must be reset to NULL */

    EXPECT_ERR(td_float_add(NULL, a, &out), TD_E_NULL, "float_add", "a is NULL");
    assert_null(out);
    out = (td_tensor *)&out;
    EXPECT_ERR(td_float_add(a, NULL, &out), TD_E_NULL, "float_add", "b is NULL");
    assert_null(out);
    EXPECT_ERR(td_float_add(a, a, NULL), TD_E_NULL, "float_add", "out is NULL");
    EXPECT_ERR(td_float_exp(NULL, &out), TD_E_NULL, "float_exp", "a is NULL");
    assert_null(out);
    EXPECT_ERR(td_float_mask_where(a, NULL, a, &out), TD_E_NULL, "float_mask_where", "mask is NULL");
    EXPECT_ERR(td_float_to_device(a, NULL, &out), TD_E_NULL, "float_to_device", "device is NULL");
    assert_null(out);
    float dst[6];
    EXPECT_ERR(td_float_into_data(a, NULL, 6), TD_E_NULL, "float_into_data", "dst is NULL");
    EXPECT_ERR(td_float_into_data(NULL, dst, 6), TD_E_NULL, "float_into_data", "a is NULL");
    EXPECT_ERR(td_sync(NULL), TD_E_NULL, "sync", "device is NULL");
    td_tensor_release(a);
}

static void test_null_creation_arguments(void **state)
{
    (void)state;
    static const float data[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s[] = { 2, 3 };
    td_tensor *out = (td_tensor *)&out;

    EXPECT_ERR(td_float_from_data(NULL, data, s, 2, &out), TD_E_NULL, "float_from_data", "device is NULL");
    assert_null(out);
    EXPECT_ERR(td_float_from_data(dev, NULL, s, 2, &out), TD_E_NULL, "float_from_data", "data is NULL");
    assert_null(out);
    EXPECT_ERR(td_float_from_data(dev, data, NULL, 2, &out), TD_E_NULL, "float_from_data", "shape is NULL");
    assert_null(out);
    EXPECT_ERR(td_float_from_data(dev, data, s, 2, NULL), TD_E_NULL, "float_from_data", "out is NULL");
    EXPECT_ERR(td_float_zeros(dev, NULL, 1, &out), TD_E_NULL, "float_zeros", "shape is NULL");
    EXPECT_ERR(td_int_arange(NULL, 0, 4, 1, &out), TD_E_NULL, "int_arange", "device is NULL");
    assert_null(out);

    /* A NULL shape with length 0 is a scalar, not an error. */
    tdt_check(td_float_from_data(dev, data, NULL, 0, &out), "float_from_data scalar");
    td_tensor_release(out);
}

static void test_null_and_empty_cat_lists(void **state)
{
    (void)state;
    static const int64_t s[] = { 2 };
    td_tensor *a = mkf(dev, s, 1);
    td_tensor *out = (td_tensor *)&out;

    EXPECT_ERR(td_float_cat(NULL, 2, 0, &out), TD_E_NULL, "float_cat", "xs is NULL");
    assert_null(out);
    const td_tensor *with_null[] = { a, NULL, a };
    out = (td_tensor *)&out;
    EXPECT_ERR(td_float_cat(with_null, 3, 0, &out), TD_E_NULL, "float_cat", "xs[1] is NULL");
    assert_null(out);
    const td_tensor *one[] = { a };
    out = (td_tensor *)&out;
    EXPECT_ERR(td_float_cat(one, 0, 0, &out), TD_E_INVALID, "float_cat", "at least one tensor");
    assert_null(out);
    EXPECT_ERR(td_int_cat(one, -1, 0, &out), TD_E_INVALID, "int_cat", "at least one tensor");
    EXPECT_ERR(td_float_cat(one, 1, 0, NULL), TD_E_NULL, "float_cat", "out is NULL");
    td_tensor_release(a);
}

static void test_null_core_arguments(void **state)
{
    (void)state;
    int64_t dims[TD_MAX_DIMS];
    int ndim;
    int64_t numel;
    td_dtype dtype;
    td_device *d;
    td_backend b;
    td_autodiff_context ctx;
    static const int64_t s[] = { 2 };
    td_tensor *a = mkf(dev, s, 1);

    EXPECT_ERR(td_tensor_shape(NULL, dims, &ndim), TD_E_NULL, "tensor_shape", "t is NULL");
    EXPECT_ERR(td_tensor_shape(a, NULL, &ndim), TD_E_NULL, "tensor_shape", "dims is NULL");
    EXPECT_ERR(td_tensor_shape(a, dims, NULL), TD_E_NULL, "tensor_shape", "ndim is NULL");
    EXPECT_ERR(td_tensor_numel(NULL, &numel), TD_E_NULL, "tensor_numel");
    EXPECT_ERR(td_tensor_numel(a, NULL), TD_E_NULL, "tensor_numel");
    EXPECT_ERR(td_tensor_dtype(NULL, &dtype), TD_E_NULL, "tensor_dtype");
    EXPECT_ERR(td_tensor_device(NULL, &d), TD_E_NULL, "tensor_device");
    EXPECT_ERR(td_tensor_backend(NULL, &b), TD_E_NULL, "tensor_backend");
    EXPECT_ERR(td_tensor_autodiff_context(NULL, &ctx), TD_E_NULL, "tensor_autodiff_context");
    EXPECT_ERR(td_tensor_set_autodiff_context(NULL, DISABLED), TD_E_NULL, "tensor_set_autodiff_context");
    EXPECT_ERR(td_tensor_retain(NULL), TD_E_NULL, "tensor_retain");
    EXPECT_ERR(td_device_retain(NULL), TD_E_NULL, "device_retain");
    EXPECT_ERR(td_device_backend(NULL, &b), TD_E_NULL, "device_backend");
    EXPECT_ERR(td_device_backend(dev, NULL), TD_E_NULL, "device_backend");
    EXPECT_ERR(td_device_open(TD_BACKEND_CPU, 0, NULL), TD_E_NULL, "device_open", "out is NULL");
    d = (td_device *)&d;
    EXPECT_ERR(td_device_autodiff(NULL, TD_CHECKPOINT_NONE, &d), TD_E_NULL, "device_autodiff", "inner is NULL");
    assert_null(d);
    EXPECT_ERR(td_device_autodiff(dev, TD_CHECKPOINT_NONE, NULL), TD_E_NULL, "device_autodiff", "out is NULL");
    /* Releasing NULL is a no-op. */
    td_tensor_release(NULL);
    td_device_release(NULL);
    td_tensor_release(a);
}

/* ---- wrong primitive kind ---- */

static void test_wrong_primitive_kind(void **state)
{
    (void)state;
    static const int64_t s[] = { 2, 2 };
    td_tensor *f = mkf(dev, s, 2);
    td_tensor *i = mki(dev, s, 2);
    td_tensor *m = mkb(dev, s, 2);
    td_tensor *out = (td_tensor *)&out;

    EXPECT_ERR(td_float_exp(i, &out), TD_E_KIND, "float_exp", "expected a float tensor, got an int tensor");
    assert_null(out);
    EXPECT_ERR(td_float_add(f, i, &out), TD_E_KIND, "float_add", "b: expected a float tensor");
    EXPECT_ERR(td_int_add(f, i, &out), TD_E_KIND, "int_add", "a: expected an int tensor, got a float tensor");
    assert_null(out);
    EXPECT_ERR(td_float_mask_where(f, f, f, &out), TD_E_KIND, "float_mask_where",
               "mask: expected a bool tensor, got a float tensor");
    assert_null(out);
    EXPECT_ERR(td_float_mask_fill(f, i, 0.0f, &out), TD_E_KIND, "float_mask_fill", "mask");
    EXPECT_ERR(td_bool_not(f, &out), TD_E_KIND, "bool_not", "expected a bool tensor");
    EXPECT_ERR(td_float_sum(m, &out), TD_E_KIND, "float_sum", "got a bool tensor");
    const td_tensor *xs[] = { f, i };
    EXPECT_ERR(td_float_cat(xs, 2, 0, &out), TD_E_KIND, "float_cat", "expected a float tensor, got an int");
    int32_t idst[4];
    EXPECT_ERR(td_int_into_data(f, idst, 4), TD_E_KIND, "int_into_data", "expected an int tensor");
    EXPECT_ERR(td_int_to_device(f, dev, &out), TD_E_KIND, "int_to_device");
    assert_null(out);
    td_tensor_release(f);
    td_tensor_release(i);
    td_tensor_release(m);
}

/* ---- shapes ---- */

static void test_shapes_that_do_not_broadcast(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 }, s4[] = { 4 };
    td_tensor *a = mkf(dev, s23, 2), *b = mkf(dev, s4, 1);
    td_tensor *out = (td_tensor *)&out;
    EXPECT_ERR(td_float_add(a, b, &out), TD_E_SHAPE, "float_add", "[2, 3]", "[4]", "do not broadcast");
    assert_null(out);
    td_tensor *ia = mki(dev, s23, 2), *ib = mki(dev, s4, 1);
    EXPECT_ERR(td_int_mul(ia, ib, &out), TD_E_SHAPE, "int_mul", "do not broadcast");
    td_tensor *m = mkb(dev, s4, 1);
    EXPECT_ERR(td_float_mask_where(a, m, a, &out), TD_E_SHAPE, "float_mask_where", "do not broadcast");
    /* mask_fill: the mask must broadcast *to a's shape*, not just with it. */
    static const int64_t s223[] = { 2, 2, 3 };
    td_tensor *big = mkb(dev, s223, 3);
    EXPECT_ERR(td_float_mask_fill(a, big, 0.0f, &out), TD_E_SHAPE, "float_mask_fill", "does not broadcast to");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(ia);
    td_tensor_release(ib);
    td_tensor_release(m);
    td_tensor_release(big);
}

static void test_matmul_shape_errors(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 }, s42[] = { 4, 2 }, s3[] = { 3 }, s32[] = { 3, 2 };
    static const int64_t s223[] = { 2, 2, 3 }, s332[] = { 3, 3, 2 };
    td_tensor *a = mkf(dev, s23, 2), *b = mkf(dev, s42, 2), *v = mkf(dev, s3, 1), *c = mkf(dev, s32, 2);
    td_tensor *ba = mkf(dev, s223, 3), *bb = mkf(dev, s332, 3);
    td_tensor *out = (td_tensor *)&out;

    EXPECT_ERR(td_float_matmul(a, b, &out), TD_E_SHAPE, "float_matmul", "inner sizes 3 and 4 differ");
    assert_null(out);
    /* 1-d operands as torch.matmul: [3] @ [3, 2] is [2]; [3, 2] @ [3] ([3, 1]) does not fit */
    tdt_check(td_float_matmul(v, c, &out), "float_matmul");
    td_tensor_release(out);
    EXPECT_ERR(td_float_matmul(c, v, &out), TD_E_SHAPE, "float_matmul", "inner sizes 2 and 3 differ");
    td_tensor *z = mkf(dev, NULL, 0); /* 0-d: no matrix at all, as in PyTorch */
    EXPECT_ERR(td_float_matmul(z, c, &out), TD_E_SHAPE, "float_matmul", "at least 1 dim");
    td_tensor_release(z);
    /* batch dims 2 and 3 do not broadcast */
    EXPECT_ERR(td_float_matmul(ba, bb, &out), TD_E_SHAPE, "float_matmul", "do not broadcast");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(v);
    td_tensor_release(c);
    td_tensor_release(ba);
    td_tensor_release(bb);
}

static void test_dims_out_of_range(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 };
    td_tensor *a = mkf(dev, s23, 2), *i = mki(dev, s23, 2), *scalar = NULL;
    td_tensor *out = (td_tensor *)&out;
    static const float one = 1.0f;
    tdt_check(td_float_from_data(dev, &one, NULL, 0, &scalar), "scalar");

    EXPECT_ERR(td_float_sum_dim(a, 2, &out), TD_E_RANGE, "float_sum_dim", "dim 2 is out of range", "2 dims");
    assert_null(out);
    EXPECT_ERR(td_float_sum_dim(a, -3, &out), TD_E_RANGE, "float_sum_dim", "dim -3 is out of range");
    EXPECT_ERR(td_float_argmax(a, 5, &out), TD_E_RANGE, "float_argmax", "dim 5");
    /* A 0-d tensor takes dims 0 and -1 only (as in PyTorch). */
    EXPECT_ERR(td_float_mean_dim(scalar, 1, &out), TD_E_RANGE, "float_mean_dim", "0 dims", "expected -1 to 0");
    EXPECT_ERR(td_float_mean_dim(scalar, -2, &out), TD_E_RANGE, "float_mean_dim", "dim -2");
    EXPECT_ERR(td_float_swap_dims(scalar, 0, 1, &out), TD_E_RANGE, "float_swap_dims", "dim1 1");
    EXPECT_ERR(td_float_cat((const td_tensor *const[]){ scalar, scalar }, 2, 0, &out), TD_E_SHAPE, "float_cat",
               "0-d tensors cannot be concatenated");
    EXPECT_ERR(td_float_swap_dims(a, 0, 2, &out), TD_E_RANGE, "float_swap_dims", "dim1 2 is out of range");
    EXPECT_ERR(td_int_swap_dims(i, -3, 0, &out), TD_E_RANGE, "int_swap_dims", "dim0 -3");
    assert_null(out);
    const td_tensor *xs[] = { a, a };
    EXPECT_ERR(td_float_cat(xs, 2, 2, &out), TD_E_RANGE, "float_cat", "dim 2 is out of range");
    EXPECT_ERR(td_float_cat(xs, 2, -3, &out), TD_E_RANGE, "float_cat", "dim -3");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(i);
    td_tensor_release(scalar);
}

static void test_cat_sizes_must_agree(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 }, s24[] = { 2, 4 }, s6[] = { 6 };
    td_tensor *a = mkf(dev, s23, 2), *b = mkf(dev, s24, 2), *c = mkf(dev, s6, 1);
    td_tensor *out = (td_tensor *)&out;
    const td_tensor *ab[] = { a, b };
    EXPECT_ERR(td_float_cat(ab, 2, 0, &out), TD_E_SHAPE, "float_cat", "xs[1] has size 4 in dim 1");
    assert_null(out);
    const td_tensor *ac[] = { a, c };
    EXPECT_ERR(td_float_cat(ac, 2, 0, &out), TD_E_SHAPE, "float_cat", "xs[1] has 1 dims");
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
}

static void test_slices_out_of_range(void **state)
{
    (void)state;
    static const int64_t s34[] = { 3, 4 };
    td_tensor *a = mkf(dev, s34, 2), *i = mki(dev, s34, 2);
    td_tensor *out = (td_tensor *)&out;

    static const int64_t st0[] = { 0, 0 }, end_past[] = { 3, 5 };
    EXPECT_ERR(td_float_slice(a, st0, 2, end_past, 2, &out), TD_E_RANGE, "float_slice", "range [0, 5)",
               "dim 1 of size 4");
    assert_null(out);
    static const int64_t st_past[] = { 5 }, end_past2[] = { 5 }; /* empty, but past the end */
    EXPECT_ERR(td_float_slice(a, st_past, 1, end_past2, 1, &out), TD_E_RANGE, "float_slice", "range [5, 5)");
    static const int64_t st_gt[] = { 2 }, end_gt[] = { 1 };
    EXPECT_ERR(td_int_slice(i, st_gt, 1, end_gt, 1, &out), TD_E_RANGE, "int_slice", "range [2, 1)");
    static const int64_t st_neg[] = { -1 }, end_neg[] = { 1 }; /* -1 is 2, past the end 1 */
    EXPECT_ERR(td_float_slice(a, st_neg, 1, end_neg, 1, &out), TD_E_RANGE, "float_slice", "range [-1, 1)");
    /* negative bounds count from the end: -1 is 2 above (empty), -4 is before the start of a size-3 dim */
    static const int64_t st_far[] = { -4 }, end_far[] = { 2 };
    EXPECT_ERR(td_float_slice(a, st_far, 1, end_far, 1, &out), TD_E_RANGE, "float_slice", "range [-4, 2)");
    static const int64_t st3[] = { 0, 0, 0 }, end3[] = { 1, 1, 1 };
    EXPECT_ERR(td_float_slice(a, st3, 3, end3, 3, &out), TD_E_RANGE, "float_slice", "3 ranges", "2 dims");
    assert_null(out);
    /* starts and ends of different lengths */
    EXPECT_ERR(td_float_slice(a, st3, 2, end3, 1, &out), TD_E_SHAPE, "float_slice", "2 starts but 1 ends");
    /* the same ranges are checked by slice_assign */
    EXPECT_ERR(td_float_slice_assign(a, a, st0, 2, end_past, 2, &out), TD_E_RANGE, "float_slice_assign",
               "range [0, 5)");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(i);
}

static void test_slice_assign_value_shape_mismatch(void **state)
{
    (void)state;
    static const int64_t s34[] = { 3, 4 }, s22[] = { 2, 2 };
    td_tensor *a = mkf(dev, s34, 2), *v = mkf(dev, s22, 2);
    td_tensor *ia = mki(dev, s34, 2), *iv = mki(dev, s22, 2);
    td_tensor *out = (td_tensor *)&out;
    static const int64_t st[] = { 0, 0 }, en[] = { 2, 3 };
    EXPECT_ERR(td_float_slice_assign(a, v, st, 2, en, 2, &out), TD_E_SHAPE, "float_slice_assign",
               "the slice has shape [2, 3] but value has shape [2, 2]");
    assert_null(out);
    EXPECT_ERR(td_int_slice_assign(ia, iv, st, 2, en, 2, &out), TD_E_SHAPE, "int_slice_assign", "[2, 3]");
    assert_null(out);
    td_tensor_release(a);
    td_tensor_release(v);
    td_tensor_release(ia);
    td_tensor_release(iv);
}

static void test_reshape_errors(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 };
    td_tensor *a = mkf(dev, s23, 2);
    td_tensor *out = (td_tensor *)&out;
    static const int64_t four[] = { 4 };
    EXPECT_ERR(td_float_reshape(a, four, 1, &out), TD_E_SHAPE, "float_reshape", "cannot reshape [2, 3]",
               "6 elements", "4 elements");
    assert_null(out);
    static const int64_t two_infer[] = { -1, -1 };
    EXPECT_ERR(td_float_reshape(a, two_infer, 2, &out), TD_E_SHAPE, "float_reshape", "only one dim may be -1");
    static const int64_t bad_infer[] = { -1, 4 };
    EXPECT_ERR(td_float_reshape(a, bad_infer, 2, &out), TD_E_SHAPE, "float_reshape", "cannot infer the -1 dim");
    static const int64_t zero[] = { 0, 6 };
    EXPECT_ERR(td_float_reshape(a, zero, 2, &out), TD_E_SHAPE, "float_reshape", "cannot reshape [2, 3]",
               "into 0 elements");
    static const int64_t negative[] = { -2, -3 };
    EXPECT_ERR(td_float_reshape(a, negative, 2, &out), TD_E_SHAPE, "float_reshape", "dim 0 has size -2");
    static const int64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 2, 3 };
    EXPECT_ERR(td_float_reshape(a, nine, 9, &out), TD_E_SHAPE, "float_reshape", "9 dims");
    assert_null(out);
    td_tensor_release(a);
}

static void test_expand_incompatible(void **state)
{
    (void)state;
    static const int64_t s31[] = { 3, 1 };
    td_tensor *a = mkf(dev, s31, 2);
    td_tensor *out = (td_tensor *)&out;
    static const int64_t to_bad[] = { 2, 4, 2 };
    EXPECT_ERR(td_float_expand(a, to_bad, 3, &out), TD_E_SHAPE, "float_expand", "size 3 cannot expand to 4");
    assert_null(out);
    static const int64_t fewer[] = { 3 };
    EXPECT_ERR(td_float_expand(a, fewer, 1, &out), TD_E_SHAPE, "float_expand", "2 dims to 1 dims");
    static const int64_t lead_infer[] = { -1, 3, 1 };
    EXPECT_ERR(td_float_expand(a, lead_infer, 3, &out), TD_E_SHAPE, "float_expand", "-1 is not allowed");
    assert_null(out);
    td_tensor_release(a);
}

static void test_permute_errors(void **state)
{
    (void)state;
    static const int64_t s234[] = { 2, 3, 4 };
    td_tensor *a = mkf(dev, s234, 3);
    td_tensor *out = (td_tensor *)&out;
    static const int64_t repeated[] = { 0, 0, 1 };
    EXPECT_ERR(td_float_permute(a, repeated, 3, &out), TD_E_INVALID, "float_permute", "repeats dim 0");
    assert_null(out);
    static const int64_t past[] = { 0, 3, 1 };
    EXPECT_ERR(td_float_permute(a, past, 3, &out), TD_E_RANGE, "float_permute", "perm[1] = 3 is out of range");
    static const int64_t negative[] = { -4, 0, 1 }; /* -3 to -1 count from the end */
    EXPECT_ERR(td_float_permute(a, negative, 3, &out), TD_E_RANGE, "float_permute", "perm[0] = -4",
               "out of range [-3, 3)");
    static const int64_t negative_repeat[] = { -1, 0, 2 };
    EXPECT_ERR(td_float_permute(a, negative_repeat, 3, &out), TD_E_INVALID, "float_permute", "repeats dim 2");
    static const int64_t short_perm[] = { 1, 0 };
    EXPECT_ERR(td_float_permute(a, short_perm, 2, &out), TD_E_SHAPE, "float_permute", "2 entries", "3 dims");
    assert_null(out);
    td_tensor_release(a);
}

static void test_from_data_bad_shapes(void **state)
{
    (void)state;
    static const float data[64] = { 0 };
    td_tensor *out = (td_tensor *)&out;
    static const int64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    EXPECT_ERR(td_float_from_data(dev, data, nine, 9, &out), TD_E_SHAPE, "float_from_data", "9 dims given");
    assert_null(out);
    static const int64_t zero[] = { 2, 0 };
    static const int64_t negative[] = { -2, 3 };
    EXPECT_ERR(td_float_from_data(dev, data, negative, 2, &out), TD_E_SHAPE, "float_from_data",
               "dim 0 has size -2", "cannot be negative");
    EXPECT_ERR(td_float_from_data(dev, data, zero, -1, &out), TD_E_INVALID, "float_from_data",
               "shape_len is -1; a length cannot be negative");
    static const int32_t idata[4] = { 0 };
    static const int64_t negative1[] = { 3, -1 };
    EXPECT_ERR(td_int_from_data(ad_dev, idata, negative1, 2, &out), TD_E_SHAPE, "int_from_data", "size -1");
    EXPECT_ERR(td_float_zeros(dev, negative, 2, &out), TD_E_SHAPE, "float_zeros", "size -2");
    EXPECT_ERR(td_float_random(dev, negative1, 2, TD_UNIFORM, 0, 1, 1, &out), TD_E_SHAPE, "float_random",
               "size -1");
    /* a dim of 0 makes an empty tensor (tests/runtime/test_zero_size.c), and NULL data is fine then */
    tdt_check(td_float_from_data(dev, NULL, zero, 2, &out), "float_from_data of [2, 0]");
    td_tensor_release(out);
    out = (td_tensor *)&out;
    static const int64_t nine0[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 0 };
    EXPECT_ERR(td_float_from_data(dev, NULL, nine0, 9, &out), TD_E_SHAPE, "float_from_data", "9 dims given");
    /* too many elements to address, counting the non-zero dims even beside a 0 */
    static const int64_t huge[] = { INT64_C(1) << 30, INT64_C(1) << 30 };
    EXPECT_ERR(td_float_zeros(dev, huge, 2, &out), TD_E_SHAPE, "float_zeros", "too large");
    static const int64_t huge0[] = { INT64_C(1) << 30, 0, INT64_C(1) << 30 };
    EXPECT_ERR(td_float_zeros(dev, huge0, 3, &out), TD_E_SHAPE, "float_zeros", "too large");
    assert_null(out);
}

static void test_into_data_small_dst(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 };
    td_tensor *a = mkf(dev, s23, 2), *i = mki(dev, s23, 2), *b = mkb(dev, s23, 2);
    td_tensor *ad = mkf(ad_dev, s23, 2);
    float f[6];
    int32_t n[6];
    bool m[6];
    EXPECT_ERR(td_float_into_data(a, f, 5), TD_E_INVALID, "float_into_data", "dst holds 5 elements",
               "has 6");
    EXPECT_ERR(td_int_into_data(i, n, 0), TD_E_INVALID, "int_into_data", "dst holds 0 elements");
    EXPECT_ERR(td_bool_into_data(b, m, -1), TD_E_INVALID, "bool_into_data", "dst holds -1 elements");
    EXPECT_ERR(td_float_into_data(ad, f, 5), TD_E_INVALID, "float_into_data", "dst holds 5 elements");
    /* exactly numel is enough */
    tdt_check(td_float_into_data(a, f, 6), "into_data");
    td_tensor_release(a);
    td_tensor_release(i);
    td_tensor_release(b);
    td_tensor_release(ad);
}

/* ---- bad values ---- */

static void test_int_division_by_zero(void **state)
{
    (void)state;
    static const int32_t av[] = { 7, -7, 9, 4 }, bv[] = { 2, 0, 3, 1 }, zero = 0;
    static const int64_t s4[] = { 4 };
    td_device *devs[] = { dev, ad_dev };
    for (int k = 0; k < 2; k++) {
        td_tensor *a = tdt_make(devs[k], TD_I32, av, s4, 1);
        td_tensor *b = tdt_make(devs[k], TD_I32, bv, s4, 1);
        td_tensor *z = tdt_make(devs[k], TD_I32, &zero, NULL, 0); /* broadcast scalar 0 */
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(z);
        long live = td_testing_live_objects();
        td_tensor *out = (td_tensor *)&out;
        EXPECT_ERR(td_int_div(a, b, &out), TD_E_INVALID, "int_div", "division by zero");
        assert_null(out);
        out = (td_tensor *)&out;
        EXPECT_ERR(td_int_remainder(a, b, &out), TD_E_INVALID, "int_remainder", "division by zero");
        assert_null(out);
        EXPECT_ERR(td_int_div(a, z, &out), TD_E_INVALID, "int_div", "division by zero");
        EXPECT_ERR(td_int_remainder(a, z, &out), TD_E_INVALID, "int_remainder", "division by zero");
        assert_null(out);
        assert_int_equal(td_testing_live_objects(), live); /* the result made for the kernel was freed */
        /* a zero dividend is fine */
        tdt_check(td_int_div(z, a, &out), "0 / a");
        static const int32_t zeros[4] = { 0 };
        tdt_expect(out, TD_I32, s4, 1, zeros, 4, 0.0f);
        td_tensor_release(out);
        td_tensor_release(a);
        td_tensor_release(b);
        td_tensor_release(z);
    }
}

static void test_arange_errors(void **state)
{
    (void)state;
    td_tensor *out = (td_tensor *)&out;
    EXPECT_ERR(td_int_arange(dev, 0, 5, 0, &out), TD_E_INVALID, "int_arange", "step must not be 0");
    assert_null(out);
    /* start == end is an empty range (as in PyTorch: tests/runtime/test_zero_size.c); an end
     * on the wrong side of start is an error. */
    EXPECT_ERR(td_int_arange(dev, 5, 0, 1, &out), TD_E_SHAPE, "int_arange", "[5, 0)", "against the sign of step 1");
    EXPECT_ERR(td_int_arange(dev, 0, 5, -1, &out), TD_E_SHAPE, "int_arange", "step -1");
    EXPECT_ERR(td_int_arange(ad_dev, 0, -1, 2, &out), TD_E_SHAPE, "int_arange", "against the sign");
    EXPECT_ERR(td_int_arange(dev, 0, INT64_C(1) << 33, 1, &out), TD_E_RANGE, "int_arange", "int32 range");
    assert_null(out);
}

static void test_bad_enum_values(void **state)
{
    (void)state;
    static const int64_t s[] = { 4 };
    td_tensor *out = (td_tensor *)&out;
    EXPECT_ERR(td_float_random(dev, s, 1, (td_distribution)7, 0, 1, 1, &out), TD_E_INVALID, "float_random",
               "unknown value 7");
    assert_null(out);
    EXPECT_ERR(td_float_random(ad_dev, s, 1, (td_distribution)-1, 0, 1, 1, &out), TD_E_INVALID, "float_random",
               "unknown value -1");
    td_device *d = (td_device *)&d;
    EXPECT_ERR(td_device_autodiff(dev, (td_checkpoint)5, &d), TD_E_INVALID, "device_autodiff",
               "unknown checkpointing strategy 5");
    assert_null(d);
    td_tensor *a = mkf(dev, s, 1);
    td_autodiff_context bad = { .enabled = true, .strategy = (td_checkpoint)9 };
    EXPECT_ERR(td_tensor_set_autodiff_context(a, bad), TD_E_INVALID, "tensor_set_autodiff_context",
               "unknown strategy 9");
    td_autodiff_context ctx;
    tdt_check(td_tensor_autodiff_context(a, &ctx), "context");
    assert_false(ctx.enabled); /* unchanged */
    td_tensor_release(a);
}

/* ---- backends and devices ---- */

static void test_backend_mismatch_plain_vs_autodiff(void **state)
{
    (void)state;
    static const int64_t s[] = { 2, 2 };
    td_tensor *f = mkf(dev, s, 2), *fa = mkf(ad_dev, s, 2);
    td_tensor *i = mki(dev, s, 2), *ia = mki(ad_dev, s, 2);
    td_tensor *ma = mkb(ad_dev, s, 2);
    td_tensor *out = (td_tensor *)&out;
    const char *cause = "an autodiff tensor cannot be combined with a plain one";

    EXPECT_ERR(td_float_add(f, fa, &out), TD_E_BACKEND_MISMATCH, "float_add", "cpu:0", "autodiff(cpu:0)", cause);
    assert_null(out);
    EXPECT_ERR(td_float_add(fa, f, &out), TD_E_BACKEND_MISMATCH, "float_add", cause);
    EXPECT_ERR(td_float_matmul(f, fa, &out), TD_E_BACKEND_MISMATCH, "float_matmul", cause);
    EXPECT_ERR(td_int_add(i, ia, &out), TD_E_BACKEND_MISMATCH, "int_add", cause);
    EXPECT_ERR(td_float_mask_where(f, ma, f, &out), TD_E_BACKEND_MISMATCH, "float_mask_where", "mask", cause);
    EXPECT_ERR(td_float_mask_fill(f, ma, 0.0f, &out), TD_E_BACKEND_MISMATCH, "float_mask_fill", cause);
    EXPECT_ERR(td_float_slice_assign(f, fa, (const int64_t[]){ 0 }, 1, (const int64_t[]){ 2 }, 1, &out),
               TD_E_BACKEND_MISMATCH, "float_slice_assign", cause);
    const td_tensor *xs[] = { f, f, fa };
    EXPECT_ERR(td_float_cat(xs, 3, 0, &out), TD_E_BACKEND_MISMATCH, "float_cat", cause);
    assert_null(out);
    td_tensor_release(f);
    td_tensor_release(fa);
    td_tensor_release(i);
    td_tensor_release(ia);
    td_tensor_release(ma);
}

static void test_device_open_errors(void **state)
{
    (void)state;
    td_device *d = (td_device *)&d;
    EXPECT_ERR(td_device_open(TD_BACKEND_CPU, 1, &d), TD_E_DEVICE, "device_open", "cpu", "1");
    assert_null(d);
    d = (td_device *)&d;
    EXPECT_ERR(td_device_open(TD_BACKEND_CPU, -1, &d), TD_E_DEVICE, "device_open", "negative device index -1");
    assert_null(d);
    EXPECT_ERR(td_device_open(TD_BACKEND_AUTODIFF, 0, &d), TD_E_INVALID, "device_open", "td_device_autodiff");
    assert_null(d);
    EXPECT_ERR(td_device_open(TD_BACKEND_COUNT, 0, &d), TD_E_DEVICE, "device_open", "not enabled");
    EXPECT_ERR(td_device_open((td_backend)-3, 0, &d), TD_E_DEVICE, "device_open", "not enabled");
    assert_null(d);
    d = (td_device *)&d;
    EXPECT_ERR(td_device_autodiff(ad_dev, TD_CHECKPOINT_NONE, &d), TD_E_INVALID, "device_autodiff",
               "already an autodiff device");
    assert_null(d);
}

/* ---- autodiff contexts ---- */

static void test_context_merge_two_strategies_fails(void **state)
{
    (void)state;
    static const int64_t s[] = { 3 };
    td_tensor *n = mkf(ad_dev, s, 1), *b = mkf(ad_bal, s, 1);
    td_tensor *in = mki(ad_dev, s, 1), *ib = mki(ad_bal, s, 1);
    td_tensor *out = (td_tensor *)&out;
    EXPECT_ERR(td_float_add(n, b, &out), TD_E_AUTODIFF_CONTEXT, "float_add", "ENABLED(NONE)", "ENABLED(BALANCED)");
    assert_null(out);
    EXPECT_ERR(td_float_mul(b, n, &out), TD_E_AUTODIFF_CONTEXT, "float_mul", "ENABLED(BALANCED)", "ENABLED(NONE)");
    /* int tensors keep their context, so the merge rejects them too */
    EXPECT_ERR(td_int_add(in, ib, &out), TD_E_AUTODIFF_CONTEXT, "int_add", "NONE", "BALANCED");
    const td_tensor *xs[] = { n, n, b };
    EXPECT_ERR(td_float_cat(xs, 3, 0, &out), TD_E_AUTODIFF_CONTEXT, "float_cat", "NONE", "BALANCED");
    assert_null(out);
    td_tensor_release(n);
    td_tensor_release(b);
    td_tensor_release(in);
    td_tensor_release(ib);
}

static void test_context_merge_disabled_joins_enabled(void **state)
{
    (void)state;
    static const int64_t s[] = { 3 };
    td_tensor *x = mki(ad_dev, s, 1), *y = mki(ad_bal, s, 1);
    tdt_check(td_tensor_set_autodiff_context(x, DISABLED), "disable");
    td_autodiff_context ctx;
    for (int order = 0; order < 2; order++) {
        td_tensor *out = NULL;
        tdt_check(order == 0 ? td_int_add(x, y, &out) : td_int_add(y, x, &out), "DISABLED + ENABLED");
        tdt_check(td_tensor_autodiff_context(out, &ctx), "context");
        assert_true(ctx.enabled);
        assert_int_equal(ctx.strategy, TD_CHECKPOINT_BALANCED);
        static const int32_t want[] = { 2, 4, 6 };
        tdt_expect(out, TD_I32, s, 1, want, 3, 0.0f);
        td_tensor_release(out);
    }
    /* DISABLED + DISABLED stays DISABLED */
    td_tensor *out = NULL;
    tdt_check(td_int_add(x, x, &out), "DISABLED + DISABLED");
    tdt_check(td_tensor_autodiff_context(out, &ctx), "context");
    assert_false(ctx.enabled);
    td_tensor_release(out);
    td_tensor_release(x);
    td_tensor_release(y);
}

static void test_guard_rejects_disabled_autodiff_float(void **state)
{
    (void)state;
    static const int64_t s[] = { 3 };
    td_tensor *x = mkf(ad_dev, s, 1), *y = mkf(ad_dev, s, 1);
    tdt_check(td_tensor_set_autodiff_context(x, DISABLED), "disable");
    td_tensor *out = (td_tensor *)&out;

    assert_int_equal(td_float_exp(x, &out), TD_E_AUTODIFF_CONTEXT);
    assert_string_equal(td_last_error(), GUARD_MESSAGE);
    assert_null(out);
    out = (td_tensor *)&out;
    assert_int_equal(td_float_add(x, y, &out), TD_E_AUTODIFF_CONTEXT);
    assert_string_equal(td_last_error(), GUARD_MESSAGE);
    assert_null(out);
    assert_int_equal(td_float_add(y, x, &out), TD_E_AUTODIFF_CONTEXT);
    assert_string_equal(td_last_error(), GUARD_MESSAGE);
    assert_null(out);
    float dst[3];
    assert_int_equal(td_float_into_data(x, dst, 3), TD_E_AUTODIFF_CONTEXT);
    assert_string_equal(td_last_error(), GUARD_MESSAGE);

    /* Enabled again, the same tensor passes. */
    const td_autodiff_context on = { .enabled = true, .strategy = TD_CHECKPOINT_NONE };
    tdt_check(td_tensor_set_autodiff_context(x, on), "enable");
    tdt_check(td_float_add(x, y, &out), "enabled again");
    td_tensor_release(out);
    td_tensor_release(x);
    td_tensor_release(y);
}

static void test_guard_ignores_int_on_autodiff_device(void **state)
{
    (void)state;
    static const int64_t s[] = { 3 };
    td_tensor *x = mki(ad_dev, s, 1), *y = mki(ad_dev, s, 1);
    tdt_check(td_tensor_set_autodiff_context(x, DISABLED), "disable");
    tdt_check(td_tensor_set_autodiff_context(y, DISABLED), "disable");
    td_tensor *out = NULL;
    tdt_check(td_int_add(x, y, &out), "int_add with a disabled context");
    static const int32_t want[] = { 2, 4, 6 };
    tdt_expect(out, TD_I32, s, 1, want, 3, 0.0f);
    td_tensor_release(out);
    td_tensor_release(x);
    td_tensor_release(y);
}

/* ---- allocation failure ---- */

typedef td_status (*op_fn)(void *ctx, td_tensor **out);

/* Runs op with allocation n failing, for n = 0, 1, 2, ... until it succeeds: each failure must
 * return TD_E_NOMEM naming `name`, leave *out NULL and leak nothing. Returns the failures seen. */
static int run_until_allocations_suffice(const char *name, op_fn op, void *ctx)
{
    for (long n = 0; n < 64; n++) {
        long live = td_testing_live_objects();
        td_tensor *out = (td_tensor *)&out;
        td_testing_fail_allocations_after(n);
        td_status st = op(ctx, &out);
        td_testing_fail_allocations_after(-1);
        if (st == TD_OK) {
            assert_non_null(out);
            assert_true(td_testing_live_objects() > live); /* autodiff results hold an inner tensor too */
            td_tensor_release(out);
            assert_int_equal(td_testing_live_objects(), live);
            return (int)n;
        }
        if (st != TD_E_NOMEM)
            print_error("%s with allocation %ld failing: %s (%s)\n", name, n, td_status_name(st), td_last_error());
        assert_int_equal(st, TD_E_NOMEM);
        if (strstr(td_last_error(), name) == NULL)
            print_error("%s: the NOMEM message '%s' does not name the op\n", name, td_last_error());
        assert_non_null(strstr(td_last_error(), name));
        assert_null(out);
        assert_int_equal(td_testing_live_objects(), live);
    }
    fail_msg("%s still fails after 64 allocations", name);
    return -1;
}

typedef struct bin_ctx {
    td_tensor *a, *b;
} bin_ctx;

static td_status do_float_add(void *c, td_tensor **out)
{
    return td_float_add(((bin_ctx *)c)->a, ((bin_ctx *)c)->b, out);
}

static td_status do_float_matmul(void *c, td_tensor **out)
{
    return td_float_matmul(((bin_ctx *)c)->a, ((bin_ctx *)c)->b, out);
}

static td_status do_float_cat(void *c, td_tensor **out)
{
    const td_tensor *xs[] = { ((bin_ctx *)c)->a, ((bin_ctx *)c)->b };
    return td_float_cat(xs, 2, 0, out);
}

typedef struct to_dev_ctx {
    td_tensor *a;
    td_device *d;
} to_dev_ctx;

static td_status do_float_to_device(void *c, td_tensor **out)
{
    return td_float_to_device(((to_dev_ctx *)c)->a, ((to_dev_ctx *)c)->d, out);
}

static td_status do_float_from_data(void *c, td_tensor **out)
{
    static const float data[6] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s[] = { 2, 3 };
    return td_float_from_data((td_device *)c, data, s, 2, out);
}

static void test_allocation_failure_binary_ops(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 }, s3[] = { 3 }, s32[] = { 3, 2 };
    td_device *devs[] = { dev, ad_dev };
    for (int k = 0; k < 2; k++) {
        bin_ctx add = { mkf(devs[k], s23, 2), mkf(devs[k], s3, 1) };
        assert_true(run_until_allocations_suffice("float_add", do_float_add, &add) >= 2);
        bin_ctx mm = { mkf(devs[k], s23, 2), mkf(devs[k], s32, 2) };
        assert_true(run_until_allocations_suffice("float_matmul", do_float_matmul, &mm) >= 2);
        td_tensor_release(add.a);
        td_tensor_release(add.b);
        td_tensor_release(mm.a);
        td_tensor_release(mm.b);
    }
}

static void test_allocation_failure_cat_on_autodiff(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 };
    bin_ctx c = { mkf(ad_dev, s23, 2), mkf(ad_dev, s23, 2) };
    assert_true(run_until_allocations_suffice("float_cat", do_float_cat, &c) >= 3);
    td_tensor_release(c.a);
    td_tensor_release(c.b);
}

static void test_allocation_failure_to_device(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 };
    td_tensor *plain = mkf(dev, s23, 2), *tracked = mkf(ad_dev, s23, 2);
    to_dev_ctx cases[] = { { plain, ad_dev }, { tracked, dev }, { plain, dev }, { tracked, ad_bal } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        assert_true(run_until_allocations_suffice("float_to_device", do_float_to_device, &cases[k]) >= 2);
    td_tensor_release(plain);
    td_tensor_release(tracked);
}

static void test_allocation_failure_from_data(void **state)
{
    (void)state;
    assert_true(run_until_allocations_suffice("float_from_data", do_float_from_data, dev) >= 2);
    assert_true(run_until_allocations_suffice("float_from_data", do_float_from_data, ad_dev) >= 3);
}

static void test_allocation_failure_devices(void **state)
{
    (void)state;
    long live = td_testing_live_objects();
    td_device *d = (td_device *)&d;
    /* cpu:0 is open (the group's): opening it again allocates nothing and shares it. A
     * failing open of a new device is tested in test_core, where no device is open. */
    td_testing_fail_allocations_after(0);
    td_status st = td_device_open(TD_BACKEND_CPU, 0, &d);
    td_testing_fail_allocations_after(-1);
    tdt_check(st, "open an open device with allocations failing");
    assert_ptr_equal(d, dev);
    td_device_release(d);
    d = (td_device *)&d;
    td_testing_fail_allocations_after(0);
    st = td_device_autodiff(dev, TD_CHECKPOINT_NONE, &d);
    td_testing_fail_allocations_after(-1);
    EXPECT_ERR(st, TD_E_NOMEM, "device_autodiff");
    assert_null(d);
    assert_int_equal(td_testing_live_objects(), live);
    /* the device is still usable (its refcount was not disturbed) */
    td_tensor *out = NULL;
    tdt_check(do_float_from_data(dev, &out), "after NOMEM");
    td_tensor_release(out);
}

/* ---- status names ---- */

static void test_status_names(void **state)
{
    (void)state;
    static const struct {
        td_status st;
        const char *name;
    } names[] = {
        { TD_OK, "TD_OK" },
        { TD_E_NULL, "TD_E_NULL" },
        { TD_E_INVALID, "TD_E_INVALID" },
        { TD_E_KIND, "TD_E_KIND" },
        { TD_E_DTYPE, "TD_E_DTYPE" },
        { TD_E_SHAPE, "TD_E_SHAPE" },
        { TD_E_RANGE, "TD_E_RANGE" },
        { TD_E_BACKEND_MISMATCH, "TD_E_BACKEND_MISMATCH" },
        { TD_E_UNSUPPORTED, "TD_E_UNSUPPORTED" },
        { TD_E_NOMEM, "TD_E_NOMEM" },
        { TD_E_AUTODIFF_CONTEXT, "TD_E_AUTODIFF_CONTEXT" },
        { TD_E_AUTODIFF, "TD_E_AUTODIFF" },
        { TD_E_DEVICE, "TD_E_DEVICE" },
        { TD_E_DISTRIBUTED, "TD_E_DISTRIBUTED" },
        { TD_E_INTERNAL, "TD_E_INTERNAL" },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_string_equal(td_status_name(names[i].st), names[i].name);
    assert_string_equal(td_status_name((td_status)(TD_E_INTERNAL + 1)), "unknown status");
    assert_string_equal(td_status_name((td_status)-1), "unknown status");
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
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_null_tensor_and_out_arguments),
        TDT_TEST(test_null_creation_arguments),
        TDT_TEST(test_null_and_empty_cat_lists),
        TDT_TEST(test_null_core_arguments),
        TDT_TEST(test_wrong_primitive_kind),
        TDT_TEST(test_shapes_that_do_not_broadcast),
        TDT_TEST(test_matmul_shape_errors),
        TDT_TEST(test_dims_out_of_range),
        TDT_TEST(test_cat_sizes_must_agree),
        TDT_TEST(test_slices_out_of_range),
        TDT_TEST(test_slice_assign_value_shape_mismatch),
        TDT_TEST(test_reshape_errors),
        TDT_TEST(test_expand_incompatible),
        TDT_TEST(test_permute_errors),
        TDT_TEST(test_from_data_bad_shapes),
        TDT_TEST(test_into_data_small_dst),
        TDT_TEST(test_int_division_by_zero),
        TDT_TEST(test_arange_errors),
        TDT_TEST(test_bad_enum_values),
        TDT_TEST(test_backend_mismatch_plain_vs_autodiff),
        TDT_TEST(test_device_open_errors),
        TDT_TEST(test_context_merge_two_strategies_fails),
        TDT_TEST(test_context_merge_disabled_joins_enabled),
        TDT_TEST(test_guard_rejects_disabled_autodiff_float),
        TDT_TEST(test_guard_ignores_int_on_autodiff_device),
        TDT_TEST(test_allocation_failure_binary_ops),
        TDT_TEST(test_allocation_failure_cat_on_autodiff),
        TDT_TEST(test_allocation_failure_to_device),
        TDT_TEST(test_allocation_failure_from_data),
        TDT_TEST(test_allocation_failure_devices),
        TDT_TEST(test_status_names),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
