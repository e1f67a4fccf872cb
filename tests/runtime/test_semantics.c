/* Semantics pinned to PyTorch's where the two used to disagree (issue 10, section 4); every
 * expected value is worked out by hand from PyTorch's documented rules, not read from the
 * library:
 *  - relu's gradient passes at NaN (PyTorch's threshold_backward zeroes it only where the
 *    input is <= 0);
 *  - powf / powf_scalar gradients at the base 0 (pow_backward, pow_backward_self and
 *    pow_backward_exponent: where(b == 0, 0, ...) for the base, where(a == 0 and b >= 0,
 *    0, ...) for the exponent, zeros for a scalar exponent 0);
 *  - a 0-d tensor takes dim 0 and -1 (a dim of size 1; the result stays 0-d);
 *  - negative dims count from the end: permute's perm, slice bounds;
 *  - torch.matmul's 1-d operands (vector @ matrix, matrix @ vector, dot) and F.linear's
 *    1-d x, with their gradients; torch.masked_select broadcasting a against the mask;
 *  - conv_transpose2d's output_padding below max(stride, dilation), with its gradients;
 *  - and where the specs document a difference, that behaviour: pools in floor mode only
 *    (no ceil_mode).
 * Values on the backend SEM_BACKEND (the CPU here; tests/backends/vulkan/ includes this
 * file for Vulkan), gradients on autodiff over it under NONE and BALANCED. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

#ifndef SEM_BACKEND
#define SEM_BACKEND TD_BACKEND_CPU
#endif

static td_device *dev, *ad, *ad_bal;

static int group_setup(void **state)
{
    (void)state;
    return tdt_open_devices(SEM_BACKEND, &dev, &ad, &ad_bal);
}

static int group_teardown(void **state)
{
    (void)state;
    return tdt_close_devices(dev, ad, ad_bal);
}

#define F32(t, shape, nd, ...)                                                                            \
    do {                                                                                                  \
        static const float want_[] = { __VA_ARGS__ };                                                     \
        tdt_expect((t), TD_F32, (shape), (nd), want_, (int64_t)(sizeof want_ / sizeof want_[0]), 1e-5f); \
    } while (0)

/* A tracked leaf on the autodiff device d. */
static td_tensor *leaf(td_device *d, const float *data, const int64_t *shape, int nd)
{
    td_tensor *t = tdt_make(d, TD_F32, data, shape, nd);
    assert_non_null(t);
    tdt_check(td_require_grad(t), "require_grad");
    return t;
}

/* Backward from y with a seed of ones (or seed_data when not NULL) of y's shape. */
static td_grads *backward(const td_tensor *y, const int64_t *shape, int nd, const float *seed_data)
{
    td_tensor *seed = seed_data ? tdt_make(dev, TD_F32, seed_data, shape, nd) : tdt_filled(dev, TD_F32, shape, nd);
    assert_non_null(seed);
    td_grads *g = NULL;
    tdt_check(td_backward_seeded(y, seed, &g), "backward");
    td_tensor_release(seed);
    return g;
}

static td_tensor *grad_of(const td_grads *g, const td_tensor *x)
{
    td_tensor *t = NULL;
    tdt_check(td_grads_get(g, x, &t), "grads_get");
    assert_non_null(t);
    return t;
}

/* ---- relu ---- */

static void test_relu_nan_passes_the_gradient(void **state)
{
    (void)state;
    static const float x[] = { NAN, -1.0f, 0.0f, -0.0f, 2.0f, INFINITY, -INFINITY };
    static const int64_t s[] = { 7 };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        td_tensor *a = leaf(ads[k], x, s, 1), *y = NULL;
        tdt_check(td_float_relu(a, &y), "relu");
        F32(y, s, 1, NAN, 0, 0, 0, 2, INFINITY, 0);
        td_grads *g = backward(y, s, 1, NULL);
        td_tensor *ga = grad_of(g, a);
        /* where(a <= 0, 0, grad): NaN <= 0 is false, so NaN passes; 0 and -0 stop it */
        F32(ga, s, 1, 1, 0, 0, 0, 1, 1, 0);
        td_tensor_release(ga);
        td_grads_release(g);
        td_tensor_release(y);
        td_tensor_release(a);
    }
}

/* ---- powf ---- */

static void test_powf_gradients_at_base_zero(void **state)
{
    (void)state;
    /* a^b at (0,0) (0,2) (0,0.5) (0,-1) (2,3) */
    static const float av[] = { 0, 0, 0, 0, 2 }, bv[] = { 0, 2, 0.5f, -1, 3 };
    static const int64_t s[] = { 5 };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        td_tensor *a = leaf(ads[k], av, s, 1), *b = leaf(ads[k], bv, s, 1), *y = NULL;
        tdt_check(td_float_powf(a, b, &y), "powf");
        F32(y, s, 1, 1, 0, 0, INFINITY, 8);
        td_grads *g = backward(y, s, 1, NULL);
        td_tensor *ga = grad_of(g, a), *gb = grad_of(g, b);
        /* grad_a = where(b == 0, 0, b * a^(b-1)): 0; 2 * 0^1; 0.5 * 0^-0.5; -1 * 0^-2; 3 * 2^2 */
        F32(ga, s, 1, 0, 0, INFINITY, -INFINITY, 12);
        /* grad_b = where(a == 0 and b >= 0, 0, a^b * log(a)): 0, 0, 0; inf * -inf; 8 * ln 2 */
        F32(gb, s, 1, 0, 0, 0, -INFINITY, 5.5451774f);
        td_tensor_release(ga);
        td_tensor_release(gb);
        td_grads_release(g);
        td_tensor_release(y);
        td_tensor_release(a);
        td_tensor_release(b);
    }
}

/* The masks broadcast: a 0-d exponent 0 against a base with zeros, and back. */
static void test_powf_gradients_at_base_zero_broadcast(void **state)
{
    (void)state;
    static const float av[] = { 0, 3 }, zero = 0.0f;
    static const int64_t s[] = { 2 };
    td_tensor *a = leaf(ad, av, s, 1), *b = leaf(ad, &zero, NULL, 0), *y = NULL;
    tdt_check(td_float_powf(a, b, &y), "powf");
    F32(y, s, 1, 1, 1);
    td_grads *g = backward(y, s, 1, NULL);
    td_tensor *ga = grad_of(g, a), *gb = grad_of(g, b);
    F32(ga, s, 1, 0, 0);                 /* b == 0 */
    F32(gb, NULL, 0, 1.0986123f);        /* 0 (a = 0, b >= 0) + 3^0 * ln 3 */
    td_tensor_release(ga);
    td_tensor_release(gb);
    td_grads_release(g);
    td_tensor_release(y);
    td_tensor_release(b);

    /* a 0-d base 0 with exponents [2, -1]: grad_b = [0, inf * -inf] */
    static const float ev[] = { 2, -1 };
    td_tensor *z = leaf(ad, &zero, NULL, 0), *e = leaf(ad, ev, s, 1);
    tdt_check(td_float_powf(z, e, &y), "powf");
    F32(y, s, 1, 0, INFINITY);
    g = backward(y, s, 1, NULL);
    td_tensor *gz = grad_of(g, z), *ge = grad_of(g, e);
    F32(gz, NULL, 0, -INFINITY);         /* 2 * 0^1 + -1 * 0^-2 */
    F32(ge, s, 1, 0, -INFINITY);
    td_tensor_release(gz);
    td_tensor_release(ge);
    td_grads_release(g);
    td_tensor_release(y);
    td_tensor_release(z);
    td_tensor_release(e);
    td_tensor_release(a);
}

static void test_powf_scalar_gradients_at_zero(void **state)
{
    (void)state;
    static const float x[] = { 0, 2, -3, 4 };
    static const int64_t s[] = { 4 };
    /* exponent -> grad: exponent * a^(exponent - 1), or zeros for the exponent 0 */
    static const struct {
        float e;
        float want[4];
    } cases[] = {
        { 0.0f, { 0, 0, 0, 0 } },                  /* PyTorch: zeros, not 0 * 0^-1 = NaN */
        { 2.0f, { 0, 4, -6, 8 } },
        { 1.0f, { 1, 1, 1, 1 } },                  /* 1 * a^0, 0^0 = 1 */
        { 0.5f, { INFINITY, 0.35355339f, NAN, 0.25f } }, /* 0.5 * a^-0.5 */
    };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            td_tensor *a = leaf(ads[k], x, s, 1), *y = NULL;
            tdt_check(td_float_powf_scalar(a, cases[c].e, &y), "powf_scalar");
            td_grads *g = backward(y, s, 1, NULL);
            td_tensor *ga = grad_of(g, a);
            tdt_expect(ga, TD_F32, s, 1, cases[c].want, 4, 1e-5f);
            td_tensor_release(ga);
            td_grads_release(g);
            td_tensor_release(y);
            td_tensor_release(a);
        }
    }
}

/* ---- 0-d tensors take dim 0 and -1 ---- */

static void test_zero_d_dims(void **state)
{
    (void)state;
    static const float v = 3.5f;
    static const int32_t iv = -7;
    static const bool bv = true;
    td_tensor *x = tdt_make(dev, TD_F32, &v, NULL, 0);
    td_tensor *xi = tdt_make(dev, TD_I32, &iv, NULL, 0), *xb = tdt_make(dev, TD_BOOL, &bv, NULL, 0);
    assert_non_null(x);
    assert_non_null(xi);
    assert_non_null(xb);
    td_status (*const reduce[])(const td_tensor *, int64_t, td_tensor **) = { td_float_sum_dim, td_float_mean_dim,
                                                                              td_float_max_dim, td_float_min_dim };
    for (int dim = -1; dim <= 0; dim++) {
        for (size_t r = 0; r < sizeof reduce / sizeof reduce[0]; r++) {
            td_tensor *y = NULL;
            tdt_check(reduce[r](x, dim, &y), "reduce");
            F32(y, NULL, 0, 3.5f);
            td_tensor_release(y);
        }
        td_tensor *y = NULL;
        static const int32_t zero = 0;
        tdt_check(td_float_argmax(x, dim, &y), "argmax");
        tdt_expect(y, TD_I32, NULL, 0, &zero, 1, 0);
        td_tensor_release(y);
        tdt_check(td_float_argmin(x, dim, &y), "argmin");
        tdt_expect(y, TD_I32, NULL, 0, &zero, 1, 0);
        td_tensor_release(y);
        for (int d1 = -1; d1 <= 0; d1++) {
            tdt_check(td_float_swap_dims(x, dim, d1, &y), "swap_dims");
            F32(y, NULL, 0, 3.5f);
            td_tensor_release(y);
            tdt_check(td_int_swap_dims(xi, dim, d1, &y), "int_swap_dims");
            tdt_expect(y, TD_I32, NULL, 0, &iv, 1, 0);
            td_tensor_release(y);
            tdt_check(td_bool_swap_dims(xb, dim, d1, &y), "bool_swap_dims");
            tdt_expect(y, TD_BOOL, NULL, 0, &bv, 1, 0);
            td_tensor_release(y);
        }
    }
    td_tensor *y = (td_tensor *)&y;
    tdt_expect_error(td_float_sum_dim(x, 1, &y), TD_E_RANGE, "float_sum_dim");
    assert_null(y);
    tdt_expect_error(td_float_argmax(x, -2, &y), TD_E_RANGE, "float_argmax");
    tdt_expect_error(td_int_swap_dims(xi, 0, 1, &y), TD_E_RANGE, "int_swap_dims");
    const td_tensor *xs[] = { x, x };
    tdt_expect_error(td_float_cat(xs, 2, 0, &y), TD_E_SHAPE, "float_cat"); /* as in PyTorch */
    td_tensor_release(x);
    td_tensor_release(xi);
    td_tensor_release(xb);
}

/* Gradients through the dim ops of a 0-d tensor: each passes the seed 2 back as it is. */
static void test_zero_d_dims_gradients(void **state)
{
    (void)state;
    static const float v = -1.25f, two = 2.0f;
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        td_tensor *x = leaf(ads[k], &v, NULL, 0), *s = NULL, *m = NULL, *mx = NULL, *mn = NULL, *sw = NULL;
        tdt_check(td_float_sum_dim(x, -1, &s), "sum_dim");
        tdt_check(td_float_mean_dim(s, 0, &m), "mean_dim");
        tdt_check(td_float_max_dim(m, -1, &mx), "max_dim");
        tdt_check(td_float_min_dim(mx, 0, &mn), "min_dim");
        tdt_check(td_float_swap_dims(mn, 0, -1, &sw), "swap_dims");
        F32(sw, NULL, 0, -1.25f);
        td_grads *g = backward(sw, NULL, 0, &two);
        td_tensor *gx = grad_of(g, x);
        F32(gx, NULL, 0, 2.0f);
        td_tensor_release(gx);
        td_grads_release(g);
        td_tensor *all[] = { x, s, m, mx, mn, sw };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
    }
}

/* ---- torch.matmul's 1-d operands, F.linear's 1-d x, masked_select broadcasting a ---- */

/* a [2] @ b [2, 2, 3] (a vector against a batch): y[t][j] = sum_p a[p] b[t][p][j]; with a
 * seed of ones, a's gradient sums b over the batch and j, b's is a[p] everywhere. */
static void test_matmul_vector_gradients(void **state)
{
    (void)state;
    static const float av[] = { 1, 2 }, bv[] = { 1, 2, 3, 4, 5, 6, 0, 1, 0, -1, 0, 2 };
    static const float mv[] = { 1, 2, -1, 4 }, vv[] = { 3, 1 }, seed2[] = { 1, 2 };
    static const float d1[] = { 1, 2, 3 }, d2[] = { 4, 5, 6 }, two = 2.0f;
    static const int64_t s2[] = { 2 }, s223[] = { 2, 2, 3 }, s23[] = { 2, 3 }, s212[] = { 2, 1, 2 };
    static const int64_t s21[] = { 2, 1 }, s3[] = { 3 };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        /* vector @ batched matrix: [9, 12, 15], [-2, 1, 4] */
        td_tensor *a = leaf(ads[k], av, s2, 1), *b = leaf(ads[k], bv, s223, 3), *y = NULL;
        tdt_check(td_float_matmul(a, b, &y), "float_matmul");
        F32(y, s23, 2, 9, 12, 15, -2, 1, 4);
        td_grads *g = backward(y, s23, 2, NULL);
        td_tensor *ga = grad_of(g, a), *gb = grad_of(g, b);
        F32(ga, s2, 1, 7, 16);
        F32(gb, s223, 3, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2);
        td_tensor *all1[] = { ga, gb, y, a, b };
        td_grads_release(g);
        for (size_t i = 0; i < sizeof all1 / sizeof all1[0]; i++)
            td_tensor_release(all1[i]);
        /* batched matrix @ vector: [5], [1]; seed [1, 2]: m's gradient seed[t] v[p], v's
         * sum_t seed[t] m[t][0][p] = [1 - 2, 2 + 8] */
        td_tensor *m = leaf(ads[k], mv, s212, 3), *v = leaf(ads[k], vv, s2, 1);
        tdt_check(td_float_matmul(m, v, &y), "float_matmul");
        F32(y, s21, 2, 5, 1);
        g = backward(y, s21, 2, seed2);
        td_tensor *gm = grad_of(g, m), *gv = grad_of(g, v);
        F32(gm, s212, 3, 3, 1, 6, 2);
        F32(gv, s2, 1, -1, 10);
        td_tensor *all2[] = { gm, gv, y, m, v };
        td_grads_release(g);
        for (size_t i = 0; i < sizeof all2 / sizeof all2[0]; i++)
            td_tensor_release(all2[i]);
        /* dot: 4 + 10 + 18 = 32, 0-d; seed 2: 2 b and 2 a */
        td_tensor *x1 = leaf(ads[k], d1, s3, 1), *x2 = leaf(ads[k], d2, s3, 1);
        tdt_check(td_float_matmul(x1, x2, &y), "float_matmul");
        F32(y, NULL, 0, 32);
        g = backward(y, NULL, 0, &two);
        td_tensor *g1 = grad_of(g, x1), *g2 = grad_of(g, x2);
        F32(g1, s3, 1, 8, 10, 12);
        F32(g2, s3, 1, 2, 4, 6);
        td_tensor *all3[] = { g1, g2, y, x1, x2 };
        td_grads_release(g);
        for (size_t i = 0; i < sizeof all3 / sizeof all3[0]; i++)
            td_tensor_release(all3[i]);
    }
}

/* F.linear on a 1-d x: [1, 2] @ [[1, 0, 2], [3, 1, -1]] + [0.5, 0, -1] = [7.5, 2, -1]; with
 * a seed of ones x's gradient is w's row sums, w's is x[p] in row p, b's ones. */
static void test_linear_vector_gradients(void **state)
{
    (void)state;
    static const float xv[] = { 1, 2 }, wv[] = { 1, 0, 2, 3, 1, -1 }, bv[] = { 0.5f, 0, -1 };
    static const int64_t s2[] = { 2 }, s23[] = { 2, 3 }, s3[] = { 3 };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        td_tensor *x = leaf(ads[k], xv, s2, 1), *w = leaf(ads[k], wv, s23, 2), *b = leaf(ads[k], bv, s3, 1);
        td_tensor *y = NULL;
        tdt_check(td_float_linear(x, w, b, &y), "float_linear");
        F32(y, s3, 1, 7.5f, 2, -1);
        td_grads *g = backward(y, s3, 1, NULL);
        td_tensor *gx = grad_of(g, x), *gw = grad_of(g, w), *gb = grad_of(g, b);
        F32(gx, s2, 1, 3, 3);
        F32(gw, s23, 2, 1, 1, 1, 2, 2, 2);
        F32(gb, s3, 1, 1, 1, 1);
        td_tensor *all[] = { gx, gw, gb, y, x, w, b };
        td_grads_release(g);
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
    }
}

/* masked_select broadcasts a against the mask: a [3, 1] with mask [T, T] selects every a
 * twice, so a seed of [1, 2, 3, 4, 5, 6] gives a the gradient [1 + 2, 3 + 4, 5 + 6]. */
static void test_mask_select_broadcast_gradient(void **state)
{
    (void)state;
    static const float av[] = { 1, 2, 3 }, seed[] = { 1, 2, 3, 4, 5, 6 };
    static const bool mv[] = { true, true };
    static const int64_t s31[] = { 3, 1 }, s2[] = { 2 }, s6[] = { 6 };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        td_tensor *a = leaf(ads[k], av, s31, 2), *m = tdt_make(ads[k], TD_BOOL, mv, s2, 1), *y = NULL;
        tdt_check(td_float_mask_select(a, m, &y), "float_mask_select");
        F32(y, s6, 1, 1, 1, 2, 2, 3, 3);
        td_grads *g = backward(y, s6, 1, seed);
        td_tensor *ga = grad_of(g, a);
        F32(ga, s31, 2, 3, 7, 11);
        td_tensor *all[] = { ga, y, a, m };
        td_grads_release(g);
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
    }
}

/* ---- pools in floor mode (a documented difference), conv_transpose2d's output_padding ---- */

/* No ceil_mode: over [1, 2, 3, 4, 5] windows of 2 with stride 2 keep [1, 2] and [3, 4] and
 * drop the partial [5] (PyTorch's ceil_mode=True would add a third window, 5); in 2-d a
 * 5 x 5 plane gives 2 x 2 (ceil_mode: 3 x 3). */
static void test_pools_floor_mode(void **state)
{
    (void)state;
    static const float x1[] = { 1, 2, 3, 4, 5 };
    static const int64_t s115[] = { 1, 1, 5 }, s112[] = { 1, 1, 2 }, s1155[] = { 1, 1, 5, 5 };
    static const int64_t s1122[] = { 1, 1, 2, 2 }, k2[] = { 2, 2 }, p0[] = { 0, 0 }, d1[] = { 1, 1 };
    float x2[25];
    for (int i = 0; i < 25; i++)
        x2[i] = (float)i;
    td_tensor *a = tdt_make(dev, TD_F32, x1, s115, 3), *b = tdt_make(dev, TD_F32, x2, s1155, 4), *y = NULL;
    tdt_check(td_float_max_pool1d(a, 2, 2, 0, 1, &y), "float_max_pool1d");
    F32(y, s112, 3, 2, 4);
    td_tensor_release(y);
    tdt_check(td_float_avg_pool1d(a, 2, 2, 0, 1, &y), "float_avg_pool1d");
    F32(y, s112, 3, 1.5f, 3.5f);
    td_tensor_release(y);
    /* windows of rows 0-1 and 2-3, columns 0-1 and 2-3; row 4 and column 4 dropped */
    tdt_check(td_float_max_pool2d(b, k2, 2, k2, 2, p0, 2, d1, 2, &y), "float_max_pool2d");
    F32(y, s1122, 4, 6, 8, 16, 18);
    td_tensor_release(y);
    tdt_check(td_float_avg_pool2d(b, k2, 2, k2, 2, p0, 2, 1, &y), "float_avg_pool2d");
    F32(y, s1122, 4, 3, 5, 13, 15);
    td_tensor_release(y);
    td_tensor_release(a);
    td_tensor_release(b);
}

/* A max-pool window can lie wholly in the padding: kernel 2 dilated by 2 with padding 1 over
 * a row of height 1 reads rows -1 and 1, neither in the input (found by fuzz_surface: the
 * cpu kernel read plane[-1]). PyTorch's max over no element: -inf; its index is -1 here
 * (as the Vulkan shader had it) and the window takes no gradient. */
static void test_max_pool2d_window_wholly_in_padding(void **state)
{
    (void)state;
    static const float xv[] = { 5, -3 };
    static const int64_t s1112[] = { 1, 1, 1, 2 }, k[] = { 2, 1 }, st[] = { 1, 1 }, pad[] = { 1, 0 };
    static const int64_t dil[] = { 2, 1 };
    td_tensor *x = tdt_make(dev, TD_F32, xv, s1112, 4), *y = NULL, *idx = NULL;
    tdt_check(td_float_max_pool2d(x, k, 2, st, 2, pad, 2, dil, 2, &y), "float_max_pool2d");
    F32(y, s1112, 4, -INFINITY, -INFINITY);
    td_tensor_release(y);
    tdt_check(td_float_max_pool2d_indices(x, k, 2, st, 2, pad, 2, dil, 2, &idx), "float_max_pool2d_indices");
    static const int32_t none[] = { -1, -1 };
    tdt_expect(idx, TD_I32, s1112, 4, none, 2, 0.0f);
    td_tensor_release(idx);
    td_tensor_release(x);
    td_tensor *a = leaf(ad, xv, s1112, 4);
    tdt_check(td_float_max_pool2d(a, k, 2, st, 2, pad, 2, dil, 2, &y), "float_max_pool2d (autodiff)");
    td_grads *g = backward(y, s1112, 4, NULL);
    td_tensor *ga = grad_of(g, a);
    F32(ga, s1112, 4, 0, 0);
    td_tensor_release(ga);
    td_grads_release(g);
    td_tensor_release(y);
    td_tensor_release(a);
}

/* output_padding below max(stride, dilation), as PyTorch: 1 with stride 1 and dilation 2
 * (the spec's examples hold the values). With padding 1, x = w = [[1, 2], [3, 4]] and a
 * seed of ones on the 3 x 3 result, grad goes back into the 4 x 4 F at offset 1 (row and
 * column 0 get nothing): x's gradient sums w over the taps that land there, [4, 7, 6, 10],
 * weight's sums x likewise, [4, 7, 6, 10]; bias gets 9. output_padding 2 is past both. */
static void test_conv_transpose2d_output_padding_below_dilation(void **state)
{
    (void)state;
    static const float xv[] = { 1, 2, 3, 4 }, bv = 1.0f;
    static const int64_t s1122[] = { 1, 1, 2, 2 }, s1133[] = { 1, 1, 3, 3 }, s1[] = { 1 }, one[] = { 1, 1 };
    static const int64_t two[] = { 2, 2 };
    td_device *ads[] = { ad, ad_bal };
    for (int k = 0; k < 2; k++) {
        td_tensor *x = leaf(ads[k], xv, s1122, 4), *w = leaf(ads[k], xv, s1122, 4), *b = leaf(ads[k], &bv, s1, 1);
        td_tensor *y = (td_tensor *)&y;
        tdt_expect_error(td_float_conv_transpose2d(x, w, b, one, 2, one, 2, two, 2, two, 2, 1, &y), TD_E_INVALID,
                         "float_conv_transpose2d");
        assert_null(y);
        tdt_check(td_float_conv_transpose2d(x, w, b, one, 2, one, 2, one, 2, two, 2, 1, &y),
                  "float_conv_transpose2d");
        F32(y, s1133, 4, 5, 7, 9, 7, 5, 9, 13, 13, 17);
        td_grads *g = backward(y, s1133, 4, NULL);
        td_tensor *gx = grad_of(g, x), *gw = grad_of(g, w), *gb = grad_of(g, b);
        F32(gx, s1122, 4, 4, 7, 6, 10);
        F32(gw, s1122, 4, 4, 7, 6, 10);
        F32(gb, s1, 1, 9);
        td_tensor *all[] = { gx, gw, gb, y, x, w, b };
        td_grads_release(g);
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
    }
}

/* ---- negative dims ---- */

/* want[out index] = a[source index] of permute(a, perm) with perm given non-negative:
 * dim i of the result is dim perm[i] of a, as PyTorch defines it. */
static void permuted(const float *a, const int64_t *shape, int nd, const int *perm, float *want, int64_t *out_shape)
{
    int64_t st[8], n = 1;
    for (int d = nd - 1; d >= 0; d--) {
        st[d] = n;
        n *= shape[d];
    }
    for (int i = 0; i < nd; i++)
        out_shape[i] = shape[perm[i]];
    for (int64_t o = 0; o < n; o++) {
        int64_t rem = o, src = 0;
        for (int i = nd - 1; i >= 0; i--) {
            src += (rem % out_shape[i]) * st[perm[i]];
            rem /= out_shape[i];
        }
        want[o] = a[src];
    }
}

static void test_negative_permute(void **state)
{
    (void)state;
    /* the axes [0, -2, -1, 1] on a 4-d tensor are [0, 2, 3, 1] */
    static const int64_t shape[] = { 2, 3, 2, 2 }, perm[] = { 0, -2, -1, 1 };
    static const int pos[] = { 0, 2, 3, 1 };
    float a[24], want[24];
    int32_t ai[24], wanti[24];
    bool ab[24], wantb[24];
    for (int i = 0; i < 24; i++) {
        a[i] = (float)i * 0.5f - 3.0f;
        ai[i] = i - 11;
        ab[i] = i % 3 == 0;
    }
    int64_t out_shape[4];
    permuted(a, shape, 4, pos, want, out_shape);
    for (int i = 0; i < 24; i++) {
        wanti[i] = (int32_t)(want[i] * 2.0f + 6.0f) - 11;
        wantb[i] = ((int)(want[i] * 2.0f + 6.0f)) % 3 == 0;
    }
    td_tensor *x = tdt_make(dev, TD_F32, a, shape, 4), *xi = tdt_make(dev, TD_I32, ai, shape, 4);
    td_tensor *xb = tdt_make(dev, TD_BOOL, ab, shape, 4), *y = NULL;
    tdt_check(td_float_permute(x, perm, 4, &y), "permute");
    tdt_expect(y, TD_F32, out_shape, 4, want, 24, 0);
    td_tensor_release(y);
    tdt_check(td_int_permute(xi, perm, 4, &y), "int_permute");
    tdt_expect(y, TD_I32, out_shape, 4, wanti, 24, 0);
    td_tensor_release(y);
    tdt_check(td_bool_permute(xb, perm, 4, &y), "bool_permute");
    tdt_expect(y, TD_BOOL, out_shape, 4, wantb, 24, 0);
    td_tensor_release(y);
    static const int64_t bad[] = { 0, -5, 1, 2 }, rep[] = { 0, -4, 1, 2 };
    y = (td_tensor *)&y;
    tdt_expect_error(td_float_permute(x, bad, 4, &y), TD_E_RANGE, "float_permute");
    tdt_expect_error(td_float_permute(x, rep, 4, &y), TD_E_INVALID, "float_permute"); /* -4 is 0 again */
    assert_null(y);
    td_tensor_release(x);
    td_tensor_release(xi);
    td_tensor_release(xb);
}

/* Backward of permute with negative entries: the seed permuted back (the tape keeps the
 * normalized perm), under NONE and BALANCED (which re-runs the forward). */
static void test_negative_permute_gradient(void **state)
{
    (void)state;
    static const int64_t shape[] = { 2, 3, 2 }, perm[] = { -1, 0, -2 };
    float a[12], seed[12], want[12];
    for (int i = 0; i < 12; i++) {
        a[i] = (float)i;
        seed[i] = (float)(i * i) - 5.0f;
    }
    /* y = permute(a, [2, 0, 1]) has shape [2, 2, 3]; d a[j][k][i] = seed[i][j][k] */
    static const int64_t yshape[] = { 2, 2, 3 };
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 2; i++)
                want[j * 6 + k * 2 + i] = seed[i * 6 + j * 3 + k];
    td_device *ads[] = { ad, ad_bal };
    for (int d = 0; d < 2; d++) {
        td_tensor *x = leaf(ads[d], a, shape, 3), *y = NULL, *z = NULL;
        tdt_check(td_float_permute(x, perm, 3, &y), "permute");
        tdt_check(td_float_mul_scalar(y, 1.0f, &z), "mul_scalar"); /* a node after it, so BALANCED re-runs it */
        F32(y, yshape, 3, 0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11);
        td_grads *g = backward(z, yshape, 3, seed);
        td_tensor *gx = grad_of(g, x);
        tdt_expect(gx, TD_F32, shape, 3, want, 12, 0);
        td_tensor_release(gx);
        td_grads_release(g);
        td_tensor_release(z);
        td_tensor_release(y);
        td_tensor_release(x);
    }
}

/* Negative slice bounds count from the end of their dim (x[-2:3, 1:-1] in PyTorch). */
static void test_negative_slice_bounds(void **state)
{
    (void)state;
    static const int64_t s34[] = { 3, 4 }, s22[] = { 2, 2 }, starts[] = { -2, 1 }, ends[] = { 3, -1 };
    static const float a[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, v[] = { -1, -2, -3, -4 };
    static const int32_t ai[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, wi[] = { 5, 6, 9, 10 };
    td_tensor *x = tdt_make(dev, TD_F32, a, s34, 2), *xi = tdt_make(dev, TD_I32, ai, s34, 2);
    td_tensor *val = tdt_make(dev, TD_F32, v, s22, 2), *y = NULL;
    tdt_check(td_float_slice(x, starts, 2, ends, 2, &y), "slice");
    F32(y, s22, 2, 5, 6, 9, 10);
    td_tensor_release(y);
    tdt_check(td_int_slice(xi, starts, 2, ends, 2, &y), "int_slice");
    tdt_expect(y, TD_I32, s22, 2, wi, 4, 0);
    td_tensor_release(y);
    tdt_check(td_float_slice_assign(x, val, starts, 2, ends, 2, &y), "slice_assign");
    F32(y, s34, 2, 0, 1, 2, 3, 4, -1, -2, 7, 8, -3, -4, 11);
    td_tensor_release(y);
    td_tensor_release(x);
    td_tensor_release(xi);
    td_tensor_release(val);

    /* The gradient lands where the slice was taken (the tape keeps the normalized bounds). */
    td_device *ads[] = { ad, ad_bal };
    for (int d = 0; d < 2; d++) {
        td_tensor *l = leaf(ads[d], a, s34, 2), *z = NULL, *w = NULL;
        tdt_check(td_float_slice(l, starts, 2, ends, 2, &z), "slice");
        tdt_check(td_float_mul_scalar(z, 1.0f, &w), "mul_scalar");
        td_grads *g = backward(w, s22, 2, v);
        td_tensor *gl = grad_of(g, l);
        F32(gl, s34, 2, 0, 0, 0, 0, 0, -1, -2, 0, 0, -3, -4, 0);
        td_tensor_release(gl);
        td_grads_release(g);
        td_tensor_release(w);
        td_tensor_release(z);
        td_tensor_release(l);
    }
}

/* Negative dims of cat and swap_dims count from the end too (they always did; kept here). */
static void test_negative_cat_and_swap(void **state)
{
    (void)state;
    static const int64_t s12[] = { 1, 2 }, s22[] = { 2, 2 }, s14[] = { 1, 4 };
    static const float a[] = { 1, 2 }, b[] = { 3, 4 };
    td_tensor *x = tdt_make(dev, TD_F32, a, s12, 2), *z = tdt_make(dev, TD_F32, b, s12, 2), *y = NULL;
    const td_tensor *xs[] = { x, z };
    tdt_check(td_float_cat(xs, 2, -2, &y), "cat");
    F32(y, s22, 2, 1, 2, 3, 4);
    td_tensor_release(y);
    tdt_check(td_float_cat(xs, 2, -1, &y), "cat");
    F32(y, s14, 2, 1, 2, 3, 4);
    td_tensor_release(y);
    static const int64_t s21[] = { 2, 1 };
    tdt_check(td_float_swap_dims(x, -1, -2, &y), "swap_dims");
    F32(y, s21, 2, 1, 2);
    td_tensor_release(y);
    td_tensor_release(x);
    td_tensor_release(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_relu_nan_passes_the_gradient),
        TDT_TEST(test_powf_gradients_at_base_zero),
        TDT_TEST(test_powf_gradients_at_base_zero_broadcast),
        TDT_TEST(test_powf_scalar_gradients_at_zero),
        TDT_TEST(test_zero_d_dims),
        TDT_TEST(test_zero_d_dims_gradients),
        TDT_TEST(test_matmul_vector_gradients),
        TDT_TEST(test_linear_vector_gradients),
        TDT_TEST(test_mask_select_broadcast_gradient),
        TDT_TEST(test_pools_floor_mode),
        TDT_TEST(test_max_pool2d_window_wholly_in_padding),
        TDT_TEST(test_conv_transpose2d_output_padding_below_dilation),
        TDT_TEST(test_negative_permute),
        TDT_TEST(test_negative_permute_gradient),
        TDT_TEST(test_negative_slice_bounds),
        TDT_TEST(test_negative_cat_and_swap),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
