/* Zero-size tensors (dims of size 0), with PyTorch's semantics, on every backend of the
 * build and on autodiff over each (Vulkan where a device opens; its group is skipped
 * otherwise):
 *  - creation: zeros/ones/full/from_data (NULL data) of shapes with a 0, random, arange
 *    with start == end;
 *  - into_data copies nothing (NULL with length 0 is fine);
 *  - elementwise and broadcasting: empty results; a 0 broadcasts with 1, not with 3;
 *  - sum of an empty tensor is 0, mean over an empty dim NaN; max/min/argmax/argmin over
 *    an empty dim are an error that names the op;
 *  - matmul with an empty inner dim gives zeros of shape [m, n];
 *  - cat skips empty inputs ([0] whatever the other shapes);
 *  - slices of length 0, reshape (a -1 beside a 0 is ambiguous), expand, permute;
 *  - autodiff: empty leaves get empty gradients, non-empty inputs of empty results get
 *    zero gradients of their shape.
 * The generated tests (test_<op>_empty, test_<op>_gradcheck_empty) cover every op; these
 * pin the values by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

typedef struct place {
    td_backend backend;
    bool autodiff;
    td_device *dev; /* what tensors are made on: the backend device, or autodiff over it */
    td_device *inner;
} place;

static place places[] = {
    { TD_BACKEND_CPU, false, NULL, NULL },
    { TD_BACKEND_CPU, true, NULL, NULL },
    { TD_BACKEND_VULKAN, false, NULL, NULL },
    { TD_BACKEND_VULKAN, true, NULL, NULL },
};

static place *cur; /* the place of the running group */

static int open_place(void **state)
{
    (void)state;
    place *p = cur;
    if (!td_backend_enabled(p->backend))
        return -1;
    if (td_device_open(p->backend, 0, &p->inner) != TD_OK) {
        fprintf(stderr, "no %s device: %s\n", td_backend_name(p->backend), td_last_error());
        return -1;
    }
    if (!p->autodiff) {
        p->dev = p->inner;
        td_device_retain(p->dev);
        return 0;
    }
    return td_device_autodiff(p->inner, TD_CHECKPOINT_NONE, &p->dev) == TD_OK ? 0 : -1;
}

static int close_place(void **state)
{
    (void)state;
    place *p = cur;
    td_device_release(p->dev);
    td_device_release(p->inner);
    p->dev = p->inner = NULL;
    return 0;
}

#define D (cur->dev)

/* A float tensor of shape dims (n dims) from data (NULL allowed when empty). */
static td_tensor *mkf(const float *data, const int64_t *dims, int n)
{
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(D, data, dims, n, &t), "float_from_data");
    return t;
}

/* Fails unless t is a float tensor of the shape with these values. */
static void expect_f(const td_tensor *t, const int64_t *dims, int n, const float *want, int64_t count)
{
    tdt_expect(t, TD_F32, dims, n, want, count, 1e-6f);
}

static void expect_shape(const td_tensor *t, const int64_t *dims, int n)
{
    int64_t got[TD_MAX_DIMS];
    int nd = -1;
    tdt_check(td_tensor_shape(t, got, &nd), "shape");
    assert_int_equal(nd, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(got[i], dims[i]);
    int64_t numel = -1;
    tdt_check(td_tensor_numel(t, &numel), "numel");
    int64_t want = 1;
    for (int i = 0; i < n; i++)
        want *= dims[i];
    assert_int_equal(numel, want);
}

static const int64_t s0[] = { 0 }, s203[] = { 2, 0, 3 }, s03[] = { 0, 3 }, s3[] = { 3 };

static void test_creation(void **state)
{
    (void)state;
    td_tensor *t = NULL;
    tdt_check(td_float_zeros(D, s203, 3, &t), "zeros");
    expect_f(t, s203, 3, NULL, 0);
    td_tensor_release(t);
    tdt_check(td_float_full(D, s0, 1, 2.5f, &t), "full");
    expect_f(t, s0, 1, NULL, 0);
    td_tensor_release(t);
    tdt_check(td_int_ones(D, s03, 2, &t), "int_ones");
    tdt_expect(t, TD_I32, s03, 2, NULL, 0, 0.0f);
    td_tensor_release(t);
    tdt_check(td_bool_from_data(D, NULL, s203, 3, &t), "bool_from_data NULL");
    tdt_expect(t, TD_BOOL, s203, 3, NULL, 0, 0.0f);
    td_tensor_release(t);
    tdt_check(td_float_random(D, s203, 3, TD_NORMAL, 0, 1, 7, &t), "random");
    expect_shape(t, s203, 3);
    td_tensor_release(t);
    /* NULL data is only fine without elements */
    tdt_expect_error(td_float_from_data(D, NULL, s3, 1, &t), TD_E_NULL, "float_from_data");
    /* arange: start == end is empty; an end on the wrong side of start is an error */
    tdt_check(td_int_arange(D, 4, 4, 1, &t), "arange(4, 4)");
    tdt_expect(t, TD_I32, s0, 1, NULL, 0, 0.0f);
    td_tensor_release(t);
    tdt_check(td_int_arange(D, -3, -3, -2, &t), "arange(-3, -3, -2)");
    expect_shape(t, s0, 1);
    td_tensor_release(t);
    tdt_expect_error(td_int_arange(D, 4, 3, 1, &t), TD_E_SHAPE, "int_arange");
    assert_null(t);
}

static void test_into_data(void **state)
{
    (void)state;
    td_tensor *t = mkf(NULL, s203, 3);
    tdt_check(td_float_into_data(t, NULL, 0), "into_data(NULL, 0)");
    float buf[4] = { 7, 7, 7, 7 };
    tdt_check(td_float_into_data(t, buf, 4), "into_data(buf, 4)");
    for (int i = 0; i < 4; i++)
        assert_true(buf[i] == 7.0f); /* nothing copied */
    td_tensor_release(t);
    /* a non-empty tensor still needs a destination */
    static const float one = 1;
    t = mkf(&one, NULL, 0);
    tdt_expect_error(td_float_into_data(t, NULL, 0), TD_E_INVALID, "float_into_data");
    tdt_expect_error(td_float_into_data(t, NULL, 1), TD_E_NULL, "float_into_data");
    td_tensor_release(t);
    /* moved between backends (and to the CPU from wherever it is) */
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "open cpu");
    td_tensor *e = NULL, *back = NULL;
    tdt_check(td_int_zeros(D, s203, 3, &e), "int_zeros");
    tdt_check(td_int_to_device(e, cpu, &back), "to cpu");
    tdt_expect(back, TD_I32, s203, 3, NULL, 0, 0.0f);
    td_tensor_release(back);
    tdt_check(td_int_to_device(e, D, &back), "to the same device");
    expect_shape(back, s203, 3);
    td_tensor_release(back);
    td_tensor_release(e);
    td_device_release(cpu);
}

static void test_elementwise_broadcast(void **state)
{
    (void)state;
    static const int64_t s01[] = { 0, 1 }, s14[] = { 1, 4 }, s04[] = { 0, 4 };
    static const float four[] = { 1, 2, 3, 4 }, three[] = { 1, 2, 3 };
    td_tensor *a = mkf(NULL, s01, 2), *b = mkf(four, s14, 2), *c = mkf(three, s3, 1), *e = mkf(NULL, s0, 1);
    td_tensor *out = NULL;
    tdt_check(td_float_add(a, b, &out), "[0,1] + [1,4]");
    expect_f(out, s04, 2, NULL, 0);
    td_tensor_release(out);
    tdt_check(td_float_mul(b, a, &out), "[1,4] * [0,1]");
    expect_shape(out, s04, 2);
    td_tensor_release(out);
    tdt_expect_error(td_float_sub(e, c, &out), TD_E_SHAPE, "float_sub"); /* 0 against 3 */
    assert_null(out);
    tdt_check(td_float_exp(e, &out), "exp");
    expect_f(out, s0, 1, NULL, 0);
    td_tensor_release(out);
    td_tensor *m = NULL;
    tdt_check(td_float_greater(a, b, &m), "greater");
    tdt_expect(m, TD_BOOL, s04, 2, NULL, 0, 0.0f);
    tdt_check(td_float_mask_where(a, m, b, &out), "mask_where");
    expect_shape(out, s04, 2);
    td_tensor_release(out);
    td_tensor_release(m);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_tensor_release(e);
}

static void test_reductions(void **state)
{
    (void)state;
    static const int64_t s20[] = { 2, 0 }, s21[] = { 2, 1 }, s10[] = { 1, 0 };
    td_tensor *a = mkf(NULL, s20, 2), *out = NULL;
    static const float zero = 0, zeros2[] = { 0, 0 };
    tdt_check(td_float_sum(a, &out), "sum");
    expect_f(out, NULL, 0, &zero, 1);
    td_tensor_release(out);
    tdt_check(td_float_sum_dim(a, 1, &out), "sum_dim over the empty dim");
    expect_f(out, s21, 2, zeros2, 2);
    td_tensor_release(out);
    tdt_check(td_float_sum_dim(a, 0, &out), "sum_dim over a full dim");
    expect_f(out, s10, 2, NULL, 0);
    td_tensor_release(out);
    tdt_check(td_float_mean_dim(a, -1, &out), "mean_dim");
    static const float nans[] = { NAN, NAN };
    expect_f(out, s21, 2, nans, 2);
    td_tensor_release(out);
    /* no identity: an error from the shape rule, naming the op */
    tdt_expect_error(td_float_max_dim(a, 1, &out), TD_E_SHAPE, "float_max_dim");
    assert_non_null(strstr(td_last_error(), "size 0"));
    tdt_expect_error(td_float_min_dim(a, -1, &out), TD_E_SHAPE, "float_min_dim");
    tdt_expect_error(td_float_argmax(a, 1, &out), TD_E_SHAPE, "float_argmax");
    tdt_expect_error(td_float_argmin(a, 1, &out), TD_E_SHAPE, "float_argmin");
    assert_null(out);
    /* over a dim that is not empty, an empty tensor reduces to an empty one */
    tdt_check(td_float_max_dim(a, 0, &out), "max_dim over a full dim");
    expect_f(out, s10, 2, NULL, 0);
    td_tensor_release(out);
    tdt_check(td_float_argmax(a, 0, &out), "argmax over a full dim");
    tdt_expect(out, TD_I32, s10, 2, NULL, 0, 0.0f);
    td_tensor_release(out);
    td_tensor *i = NULL;
    tdt_check(td_int_zeros(D, s203, 3, &i), "int_zeros");
    tdt_check(td_int_sum(i, &out), "int_sum");
    static const int32_t izero = 0;
    tdt_expect(out, TD_I32, NULL, 0, &izero, 1, 0.0f);
    td_tensor_release(out);
    td_tensor_release(i);
    td_tensor_release(a);
}

static void test_matmul(void **state)
{
    (void)state;
    static const int64_t s20[] = { 2, 0 }, s03b[] = { 0, 3 }, s23[] = { 2, 3 }, s04[] = { 0, 4 }, s45[] = { 4, 5 },
                         s05[] = { 0, 5 }, s230[] = { 2, 3, 0 }, s234[] = { 2, 3, 4 };
    td_tensor *a = mkf(NULL, s20, 2), *b = mkf(NULL, s03b, 2), *out = NULL;
    tdt_check(td_float_matmul(a, b, &out), "[2,0] @ [0,3]");
    static const float zeros6[6] = { 0 }, zeros24[24] = { 0 };
    expect_f(out, s23, 2, zeros6, 6);
    td_tensor_release(out);
    td_tensor_release(a);
    td_tensor_release(b);
    static float ones20[20];
    for (int k = 0; k < 20; k++)
        ones20[k] = 1;
    a = mkf(NULL, s04, 2);
    b = mkf(ones20, s45, 2);
    tdt_check(td_float_matmul(a, b, &out), "[0,4] @ [4,5]");
    expect_f(out, s05, 2, NULL, 0);
    td_tensor_release(out);
    td_tensor_release(a);
    td_tensor_release(b);
    a = mkf(NULL, s230, 3); /* batched, the inner dim empty */
    static const int64_t s0x4[] = { 0, 4 };
    b = mkf(NULL, s0x4, 2);
    tdt_check(td_float_matmul(a, b, &out), "[2,3,0] @ [0,4]");
    expect_f(out, s234, 3, zeros24, 24);
    td_tensor_release(out);
    td_tensor_release(b);
    static const int64_t s34[] = { 3, 4 };
    b = mkf(ones20, s34, 2);
    tdt_expect_error(td_float_matmul(a, b, &out), TD_E_SHAPE, "float_matmul"); /* inner 0 vs 3 */
    td_tensor_release(b);
    td_tensor_release(a);
}

static void test_cat(void **state)
{
    (void)state;
    static const int64_t s23[] = { 2, 3 }, s13[] = { 1, 3 }, s33[] = { 3, 3 }, s20[] = { 2, 0 }, s02[] = { 0, 2 };
    static const float x[] = { 1, 2, 3, 4, 5, 6 }, y[] = { 7, 8, 9 };
    td_tensor *a = mkf(x, s23, 2), *e = mkf(NULL, s0, 1), *c = mkf(y, s13, 2), *out = NULL;
    /* [0] is skipped whatever the other shapes */
    const td_tensor *xs[] = { a, e, c };
    tdt_check(td_float_cat(xs, 3, 0, &out), "cat([2,3], [0], [1,3])");
    static const float want[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    expect_f(out, s33, 2, want, 9);
    td_tensor_release(out);
    const td_tensor *xs2[] = { e, a };
    tdt_check(td_float_cat(xs2, 2, -1, &out), "cat([0], [2,3]) along -1");
    expect_f(out, s23, 2, x, 6);
    td_tensor_release(out);
    /* otherwise the shapes match but along dim */
    td_tensor *z = mkf(NULL, s20, 2);
    const td_tensor *xs3[] = { z, a };
    tdt_check(td_float_cat(xs3, 2, 1, &out), "cat([2,0], [2,3]) along 1");
    expect_f(out, s23, 2, x, 6);
    td_tensor_release(out);
    td_tensor *w = mkf(NULL, s02, 2);
    const td_tensor *xs4[] = { w, a };
    tdt_expect_error(td_float_cat(xs4, 2, 0, &out), TD_E_SHAPE, "float_cat");
    const td_tensor *xs5[] = { e, e };
    tdt_check(td_float_cat(xs5, 2, 0, &out), "cat([0], [0])");
    expect_f(out, s0, 1, NULL, 0);
    td_tensor_release(out);
    td_tensor_release(w);
    td_tensor_release(z);
    td_tensor_release(a);
    td_tensor_release(e);
    td_tensor_release(c);
}

static void test_layout(void **state)
{
    (void)state;
    static const int64_t s34[] = { 3, 4 }, s04[] = { 0, 4 }, s30[] = { 3, 0 };
    static float x12[12];
    for (int k = 0; k < 12; k++)
        x12[k] = (float)k;
    td_tensor *a = mkf(x12, s34, 2), *out = NULL;
    /* slices of length 0; start past end is still an error */
    static const int64_t st1[] = { 1 }, en1[] = { 1 };
    tdt_check(td_float_slice(a, st1, 1, en1, 1, &out), "slice [1, 1)");
    expect_f(out, s04, 2, NULL, 0);
    td_tensor *v = out;
    static const int64_t st2[] = { 2 }, en2[] = { 1 };
    tdt_expect_error(td_float_slice(a, st2, 1, en2, 1, &out), TD_E_RANGE, "float_slice");
    tdt_check(td_float_slice_assign(a, v, st1, 1, en1, 1, &out), "slice_assign of nothing");
    expect_f(out, s34, 2, x12, 12);
    td_tensor_release(out);
    td_tensor_release(v);
    static const int64_t st02[] = { 0, 4 }, en02[] = { 3, 4 };
    tdt_check(td_float_slice(a, st02, 2, en02, 2, &out), "slice [0,3) x [4,4)");
    expect_shape(out, s30, 2);
    td_tensor_release(out);
    td_tensor_release(a);

    /* reshape: to and from shapes with a 0; -1 is inferred when the others have no 0 */
    td_tensor *e = mkf(NULL, s203, 3);
    static const int64_t r06[] = { 0, 6 }, rm3[] = { -1, 3 }, rm0[] = { 4, -1, 0 }, s06[] = { 0, 6 };
    tdt_check(td_float_reshape(e, r06, 2, &out), "reshape to [0,6]");
    expect_shape(out, s06, 2);
    td_tensor_release(out);
    tdt_check(td_float_reshape(e, rm3, 2, &out), "reshape to [-1,3]");
    expect_shape(out, s03, 2);
    td_tensor_release(out);
    tdt_expect_error(td_float_reshape(e, rm0, 3, &out), TD_E_SHAPE, "float_reshape");
    assert_non_null(strstr(td_last_error(), "ambiguous"));
    /* permute, swap_dims, expand */
    static const int64_t perm[] = { 2, 0, 1 }, s320[] = { 3, 2, 0 }, s023[] = { 0, 2, 3 };
    tdt_check(td_float_permute(e, perm, 3, &out), "permute");
    expect_shape(out, s320, 3);
    td_tensor_release(out);
    tdt_check(td_float_swap_dims(e, 0, 1, &out), "swap_dims");
    expect_shape(out, s023, 3);
    td_tensor_release(out);
    td_tensor_release(e);
    static const float three[] = { 1, 2, 3 };
    static const int64_t s13[] = { 1, 3 }, x03[] = { 0, 3 }, x3[] = { 3 };
    td_tensor *r = mkf(three, s13, 2);
    tdt_check(td_float_expand(r, x03, 2, &out), "expand [1,3] to [0,3]");
    expect_f(out, s03, 2, NULL, 0);
    td_tensor_release(out);
    td_tensor_release(r);
    e = mkf(NULL, s0, 1);
    tdt_expect_error(td_float_expand(e, x3, 1, &out), TD_E_SHAPE, "float_expand"); /* 0 cannot grow */
    td_tensor_release(e);
}

/* Autodiff: an empty leaf gets an empty gradient; a non-empty input whose result is empty
 * gets zeros of its shape; matmul over an empty inner dim gives empty gradients. */
static void test_gradients(void **state)
{
    (void)state;
    if (!cur->autodiff) {
        skip();
        return;
    }
    td_tensor *x = mkf(NULL, s203, 3), *y = NULL, *loss = NULL;
    td_grads *g = NULL;
    td_tensor *gx = NULL;
    tdt_check(td_require_grad(x), "require_grad");
    tdt_check(td_float_mul_scalar(x, 2.0f, &y), "mul_scalar");
    tdt_check(td_float_sum(y, &loss), "sum");
    tdt_check(td_backward(loss, &g), "backward");
    tdt_check(td_grads_get(g, x, &gx), "grads_get");
    expect_f(gx, s203, 3, NULL, 0);
    td_tensor_release(gx);
    td_grads_release(g);
    td_tensor_release(loss);
    td_tensor_release(y);
    td_tensor_release(x);

    static const float three[] = { 1, 2, 3 }, zeros3[] = { 0, 0, 0 };
    x = mkf(three, s3, 1);
    tdt_check(td_require_grad(x), "require_grad");
    static const int64_t st[] = { 1 }, en[] = { 1 };
    tdt_check(td_float_slice(x, st, 1, en, 1, &y), "empty slice");
    tdt_check(td_float_sum(y, &loss), "sum");
    tdt_check(td_backward(loss, &g), "backward");
    tdt_check(td_grads_get(g, x, &gx), "grads_get");
    expect_f(gx, s3, 1, zeros3, 3);
    td_tensor_release(gx);
    td_grads_release(g);
    td_tensor_release(loss);
    td_tensor_release(y);

    /* cat with a skipped [0]: its gradient is empty, the others' are sliced as usual */
    td_tensor *e = mkf(NULL, s0, 1);
    tdt_check(td_require_grad(e), "require_grad");
    const td_tensor *xs[] = { e, x, e };
    tdt_check(td_float_cat(xs, 3, 0, &y), "cat");
    tdt_check(td_float_sum(y, &loss), "sum");
    tdt_check(td_backward(loss, &g), "backward");
    static const float ones3[] = { 1, 1, 1 };
    tdt_check(td_grads_get(g, x, &gx), "grads_get x");
    expect_f(gx, s3, 1, ones3, 3);
    td_tensor_release(gx);
    tdt_check(td_grads_get(g, e, &gx), "grads_get e");
    assert_non_null(gx);
    expect_f(gx, s0, 1, NULL, 0);
    td_tensor_release(gx);
    td_grads_release(g);
    td_tensor_release(loss);
    td_tensor_release(y);
    td_tensor_release(e);
    td_tensor_release(x);

    static const int64_t s20[] = { 2, 0 }, s03b[] = { 0, 3 };
    td_tensor *a = mkf(NULL, s20, 2), *b = mkf(NULL, s03b, 2);
    tdt_check(td_require_grad(a), "require_grad a");
    tdt_check(td_require_grad(b), "require_grad b");
    tdt_check(td_float_matmul(a, b, &y), "matmul");
    tdt_check(td_float_sum(y, &loss), "sum");
    tdt_check(td_backward(loss, &g), "backward");
    td_tensor *ga = NULL, *gb = NULL;
    tdt_check(td_grads_get(g, a, &ga), "grads_get a");
    tdt_check(td_grads_get(g, b, &gb), "grads_get b");
    expect_f(ga, s20, 2, NULL, 0);
    expect_f(gb, s03b, 2, NULL, 0);
    td_tensor_release(ga);
    td_tensor_release(gb);
    td_grads_release(g);
    td_tensor_release(loss);
    td_tensor_release(y);
    td_tensor_release(a);
    td_tensor_release(b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tdt_remember_live, tdt_check_no_leak)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_creation), T(test_into_data), T(test_elementwise_broadcast), T(test_reductions),
        T(test_matmul),   T(test_cat),       T(test_layout),                T(test_gradients),
    };
    static const char *const names[] = { "zero_size_cpu", "zero_size_autodiff_cpu", "zero_size_vulkan",
                                         "zero_size_autodiff_vulkan" };
    int failed = 0;
    for (size_t k = 0; k < sizeof places / sizeof places[0]; k++) {
        place *p = &places[k];
        if (!td_backend_enabled(p->backend)) {
            printf("%s: skipped: backend %s is not in this build\n", names[k], td_backend_name(p->backend));
            continue;
        }
        cur = p;
        if (open_place(NULL) != 0) {
            close_place(NULL);
            if (p->backend == TD_BACKEND_CPU)
                return 1;
            printf("%s: skipped: no %s device\n", names[k], td_backend_name(p->backend));
            continue;
        }
        close_place(NULL);
        /* the group fixtures open the place again, so each group leaves nothing behind */
        failed += _cmocka_run_group_tests(names[k], tests, sizeof tests / sizeof tests[0], open_place, close_place);
    }
    return failed != 0;
}
