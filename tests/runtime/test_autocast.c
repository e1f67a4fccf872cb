/* Dtypes in autodiff (docs/dtypes.md section 9): gradients in the parameter's dtype, casts
 * on the tape, autocast, f32 master weights and dynamic loss scaling. Reference values are
 * hand computations (derivatives written out, exactly representable values) or the f32
 * run of the same graph with a stated bound; composites in f16 / bf16 compute in f32 inside. */
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

static int setup(void **state)
{
    (void)state;
    return tdt_open(TD_BACKEND_CPU, &cpu, &ad);
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(ad);
    td_device_release(cpu);
    return 0;
}

/* A tracked leaf of dtype dt on device d from f64 values (stored rounded to dt). */
static td_tensor *leaf(td_device *d, td_dtype dt, const double *v, const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    td_tensor *f = NULL, *t = NULL;
    tdt_check(td_float_from_data_dtype(d, TD_F64, v, shape, ndim, &f), "from_data f64");
    tdt_check(td_float_cast(f, dt, &t), "cast");
    td_tensor_release(f);
    tdt_check(td_require_grad(t), "require_grad");
    (void)n;
    return t;
}

static td_dtype dtype_of(const td_tensor *t)
{
    td_dtype d = TD_F32;
    tdt_check(td_tensor_dtype(t, &d), "dtype");
    return d;
}

/* The values of a float tensor of any dtype, as doubles (n of them). */
static void values(const td_tensor *t, double *out, int64_t n)
{
    tdt_check(td_float_into_data_dtype(t, TD_F64, out, n), "into_data f64");
}

static td_tensor *grad_of(const td_grads *g, const td_tensor *p)
{
    td_tensor *r = NULL;
    tdt_check(td_grads_get(g, p, &r), "grads_get");
    assert_non_null(r);
    return r;
}

/* f(x, y) = x * y + x / y - max(x, y), elementwise in f64 (its native CPU kernels), seeded
 * with ones: df/dx = y + 1/y - [x > y], df/dy = x - x/y^2 - [y >= x] (ties: none here). The
 * gradients are f64 and match the written-out derivatives and central differences of f
 * computed here in double to 1e-12 relative. */
static void f64_gradients_match_hand_and_finite_differences(void **state)
{
    (void)state;
    static const double xv[] = { 1.5, -2.0, 0.3, 7.0 }, yv[] = { 0.5, 3.0, -1.25, 2.0 };
    static const int64_t s[] = { 4 };
    td_tensor *x = leaf(ad, TD_F64, xv, s, 1), *y = leaf(ad, TD_F64, yv, s, 1);
    td_tensor *xy = NULL, *xdy = NULL, *mx = NULL, *a = NULL, *f = NULL, *seed = NULL;
    tdt_check(td_float_mul(x, y, &xy), "mul");
    tdt_check(td_float_div(x, y, &xdy), "div");
    tdt_check(td_float_maximum(x, y, &mx), "maximum");
    tdt_check(td_float_add(xy, xdy, &a), "add");
    tdt_check(td_float_sub(a, mx, &f), "sub");
    assert_int_equal(dtype_of(f), TD_F64);
    tdt_check(td_float_ones_dtype(cpu, TD_F64, s, 1, &seed), "seed");
    td_grads *g = NULL;
    tdt_check(td_backward_seeded(f, seed, &g), "backward");
    td_tensor *gx = grad_of(g, x), *gy = grad_of(g, y);
    assert_int_equal(dtype_of(gx), TD_F64);
    assert_int_equal(dtype_of(gy), TD_F64);
    double hx[4], hy[4];
    values(gx, hx, 4);
    values(gy, hy, 4);
    for (int i = 0; i < 4; i++) {
        const double X = xv[i], Y = yv[i];
        const double dx = Y + 1.0 / Y - (X > Y ? 1.0 : 0.0), dy = X - X / (Y * Y) - (X > Y ? 0.0 : 1.0);
        const double h = 1e-6;
#define F(p, q) ((p) * (q) + (p) / (q) - fmax((p), (q)))
        const double fdx = (F(X + h, Y) - F(X - h, Y)) / (2 * h), fdy = (F(X, Y + h) - F(X, Y - h)) / (2 * h);
#undef F
        assert_true(fabs(hx[i] - dx) <= 1e-12 * fmax(1.0, fabs(dx)));
        assert_true(fabs(hy[i] - dy) <= 1e-12 * fmax(1.0, fabs(dy)));
        /* central differences: truncation O(h^2 f''') and rounding O(eps / h), ~1e-9 here */
        assert_true(fabs(hx[i] - fdx) <= 1e-8 * fmax(1.0, fabs(dx)));
        assert_true(fabs(hy[i] - fdy) <= 1e-8 * fmax(1.0, fabs(dy)));
    }
    td_tensor *ts[] = { x, y, xy, xdy, mx, a, f, seed, gx, gy };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        td_tensor_release(ts[i]);
    td_grads_release(g);
}

/* A small f64 network, L = sum_r log(sum_j exp(relu(h[r][j]))) with h = x W + b: its
 * gradients, written out (dL/dh = softmax(relu(h)) where h > 0, dW = x^T dL/dh, db = the
 * column sums of dL/dh), computed here in double, agree to 1e-12. */
static void f64_network_gradients_match_hand(void **state)
{
    (void)state;
    enum { R = 3, I = 4, J = 5 };
    static const int64_t sx[] = { R, I }, sw[] = { I, J }, sb[] = { J };
    double xv[R * I], wv[I * J], bv[J];
    for (int i = 0; i < R * I; i++)
        xv[i] = sin(1.0 + i) * 1.7;
    for (int i = 0; i < I * J; i++)
        wv[i] = cos(0.5 * i) * 0.9;
    for (int j = 0; j < J; j++)
        bv[j] = 0.1 * j - 0.2;
    td_tensor *x = leaf(ad, TD_F64, xv, sx, 2), *w = leaf(ad, TD_F64, wv, sw, 2), *b = leaf(ad, TD_F64, bv, sb, 1);
    td_tensor *m = NULL, *h = NULL, *r = NULL, *e = NULL, *se = NULL, *l = NULL, *loss = NULL;
    tdt_check(td_float_matmul(x, w, &m), "matmul");
    tdt_check(td_float_add(m, b, &h), "add");
    tdt_check(td_float_relu(h, &r), "relu");
    tdt_check(td_float_exp(r, &e), "exp");
    tdt_check(td_float_sum_dim(e, 1, &se), "sum_dim");
    tdt_check(td_float_log(se, &l), "log");
    tdt_check(td_float_sum(l, &loss), "sum");
    assert_int_equal(dtype_of(loss), TD_F64);
    td_grads *g = NULL;
    tdt_check(td_backward(loss, &g), "backward");
    td_tensor *gw = grad_of(g, w), *gb = grad_of(g, b);
    assert_int_equal(dtype_of(gw), TD_F64);
    double hw[I * J], hb[J], dh[R][J], want_w[I * J] = { 0 }, want_b[J] = { 0 };
    values(gw, hw, I * J);
    values(gb, hb, J);
    for (int rr = 0; rr < R; rr++) {
        double hv[J], z = 0;
        for (int j = 0; j < J; j++) {
            hv[j] = bv[j];
            for (int i = 0; i < I; i++)
                hv[j] += xv[rr * I + i] * wv[i * J + j];
            z += exp(hv[j] > 0 ? hv[j] : 0);
        }
        for (int j = 0; j < J; j++)
            dh[rr][j] = hv[j] > 0 ? exp(hv[j]) / z : 0;
    }
    for (int i = 0; i < I; i++)
        for (int j = 0; j < J; j++)
            for (int rr = 0; rr < R; rr++)
                want_w[i * J + j] += xv[rr * I + i] * dh[rr][j];
    for (int j = 0; j < J; j++)
        for (int rr = 0; rr < R; rr++)
            want_b[j] += dh[rr][j];
    for (int i = 0; i < I * J; i++)
        assert_true(fabs(hw[i] - want_w[i]) <= 1e-12 * fmax(1.0, fabs(want_w[i])));
    for (int j = 0; j < J; j++)
        assert_true(fabs(hb[j] - want_b[j]) <= 1e-12);
    td_tensor *ts[] = { x, w, b, m, h, r, e, se, l, loss, gw, gb };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        td_tensor_release(ts[i]);
    td_grads_release(g);
}

/* A cast is on the tape: x (bf16) -> f32 -> x32 * x32 -> sum. d/dx = 2 x, computed in f32
 * and cast back to bf16; with x exact in bf16 the gradient is exact. And an f64 leaf cast
 * to f32: the gradient of sum(c * cast(x)) is c, in f64. */
static void casts_are_recorded_and_gradients_keep_the_dtype(void **state)
{
    (void)state;
    static const double xv[] = { 1.5, -2.25, 3.0, 0.0078125 };
    static const int64_t s[] = { 4 };
    for (int k = 0; k < 3; k++) {
        const td_dtype dt = k == 0 ? TD_BF16 : k == 1 ? TD_F16 : TD_F64;
        td_tensor *x = leaf(ad, dt, xv, s, 1), *x32 = NULL, *sq = NULL, *loss = NULL;
        tdt_check(td_float_cast(x, TD_F32, &x32), "cast");
        bool tracked = false;
        tdt_check(td_is_tracked(x32, &tracked), "is_tracked");
        assert_true(tracked);
        tdt_check(td_float_mul(x32, x32, &sq), "mul");
        tdt_check(td_float_sum(sq, &loss), "sum");
        td_grads *g = NULL;
        tdt_check(td_backward(loss, &g), "backward");
        td_tensor *gx = grad_of(g, x);
        assert_int_equal(dtype_of(gx), dt);
        double h[4];
        values(gx, h, 4);
        for (int i = 0; i < 4; i++)
            assert_true(h[i] == 2.0 * xv[i]);
        td_tensor_release(gx);
        td_grads_release(g);
        td_tensor_release(loss);
        td_tensor_release(sq);
        td_tensor_release(x32);
        td_tensor_release(x);
    }
    /* a cast to an int dtype is not differentiable: an untracked int result, no error */
    td_tensor *x = leaf(ad, TD_F32, xv, s, 1), *i = NULL;
    tdt_check(td_float_into_int_dtype(x, TD_I64, &i), "float_into_int_dtype");
    assert_int_equal(dtype_of(i), TD_I64);
    td_tensor_release(i);
    td_tensor_release(x);
}

/* Gradients of an f16 / bf16 parameter against the same graph in f32: y = relu(x W + b),
 * loss = sum(y * y) / n, W [8, 6]. Each op rounds its result once to the low dtype (the CPU
 * runs them via f32, accumulating in f32), so a gradient element carries a few rounding
 * errors of 2^-8 (bf16) / 2^-11 (f16) relative, plus those of its inputs: we accept
 * max |g - g32| <= 4 * 2^-8 * max |g32| for bf16 and 4 * 2^-11 * max |g32| for f16. */
static void low_precision_gradients_follow_f32(void **state)
{
    (void)state;
    static const int64_t sx[] = { 5, 8 }, sw[] = { 8, 6 }, sb[] = { 6 };
    double xv[40], wv[48], bv[6];
    unsigned r = 12345;
    for (int i = 0; i < 40; i++)
        xv[i] = ((r = r * 1103515245u + 12345u) >> 8 & 0xffff) / 32768.0 - 1.0;
    for (int i = 0; i < 48; i++)
        wv[i] = ((r = r * 1103515245u + 12345u) >> 8 & 0xffff) / 65536.0 - 0.5;
    for (int i = 0; i < 6; i++)
        bv[i] = ((r = r * 1103515245u + 12345u) >> 8 & 0xffff) / 131072.0;
    double g32[48] = { 0 }, glow[48];
    for (int k = 0; k < 3; k++) {
        const td_dtype dt = k == 0 ? TD_F32 : k == 1 ? TD_BF16 : TD_F16;
        td_tensor *x = leaf(ad, dt, xv, sx, 2), *w = leaf(ad, dt, wv, sw, 2), *b = leaf(ad, dt, bv, sb, 1);
        td_tensor *h = NULL, *y = NULL, *y2 = NULL, *s = NULL, *loss = NULL;
        tdt_check(td_float_linear(x, w, b, &h), "linear");
        tdt_check(td_float_relu(h, &y), "relu");
        tdt_check(td_float_mul(y, y, &y2), "mul");
        tdt_check(td_float_sum(y2, &s), "sum");
        tdt_check(td_float_mul_scalar(s, 0.2f, &loss), "mul_scalar");
        assert_int_equal(dtype_of(loss), dt);
        td_grads *g = NULL;
        tdt_check(td_backward(loss, &g), "backward");
        td_tensor *gw = grad_of(g, w);
        assert_int_equal(dtype_of(gw), dt);
        values(gw, k == 0 ? g32 : glow, 48);
        if (k > 0) {
            double mx = 0, err = 0;
            for (int i = 0; i < 48; i++) {
                mx = fmax(mx, fabs(g32[i]));
                err = fmax(err, fabs(glow[i] - g32[i]));
            }
            const double bound = 4.0 * (dt == TD_BF16 ? 0x1p-8 : 0x1p-11) * mx;
            print_message("%s: max |g - g32| = %.3g, bound %.3g (max |g32| %.3g)\n", dt == TD_BF16 ? "bf16" : "f16",
                          err, bound, mx);
            assert_true(mx > 0.1);
            assert_true(err <= bound);
        }
        td_tensor *ts[] = { x, w, b, h, y, y2, s, loss, gw };
        for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
            td_tensor_release(ts[i]);
        td_grads_release(g);
    }
}

/* Reductions of f16 / bf16 accumulate in f32 (docs/dtypes.md section 9): adding ones one
 * at a time stalls at 2048 in f16 (2049 is not an f16) and at 256 in bf16, so sums of
 * 4096 / 512 ones that come out exact were not rounded to 16 bits on the way. Checked for
 * float_sum, float_sum_dim, a matmul's dot products and a gradient that the engine sums
 * over a broadcast (d sum(x + zeros[n]) / dx = n). */
static void low_precision_reductions_accumulate_in_f32(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const td_dtype dt = k == 0 ? TD_F16 : TD_BF16;
        const int64_t n = k == 0 ? 4096 : 512;
        const int64_t s1[] = { n }, s2[] = { 1, n }, s3[] = { n, 1 }, one[] = { 1 };
        td_tensor *ones = NULL, *row = NULL, *col = NULL, *sum = NULL, *sd = NULL, *mm = NULL;
        tdt_check(td_float_ones_dtype(cpu, dt, s1, 1, &ones), "ones");
        tdt_check(td_float_ones_dtype(cpu, dt, s2, 2, &row), "ones");
        tdt_check(td_float_ones_dtype(cpu, dt, s3, 2, &col), "ones");
        tdt_check(td_float_sum(ones, &sum), "sum");
        tdt_check(td_float_sum_dim(row, 1, &sd), "sum_dim");
        tdt_check(td_float_matmul(row, col, &mm), "matmul");
        double v[3];
        values(sum, &v[0], 1);
        values(sd, &v[1], 1);
        values(mm, &v[2], 1);
        for (int i = 0; i < 3; i++)
            assert_true(v[i] == (double)n);
        static const double xv[] = { 0.5 };
        td_tensor *x = leaf(ad, dt, xv, one, 1), *z = NULL, *xz = NULL, *l = NULL;
        tdt_check(td_float_zeros_dtype(ad, dt, s1, 1, &z), "zeros");
        tdt_check(td_float_add(x, z, &xz), "add");
        tdt_check(td_float_sum(xz, &l), "sum");
        td_grads *g = NULL;
        tdt_check(td_backward(l, &g), "backward");
        td_tensor *gx = grad_of(g, x);
        assert_int_equal(dtype_of(gx), dt);
        double gv = 0;
        values(gx, &gv, 1);
        assert_true(gv == (double)n);
        td_tensor *ts[] = { ones, row, col, sum, sd, mm, x, z, xz, l, gx };
        for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
            td_tensor_release(ts[i]);
        td_grads_release(g);
    }
}

/* Autocast bf16 on an autodiff device: matmul (low) runs in bf16, sum (f32) in f32, an add
 * of bf16 and f32 (keep) is promoted to f32; the f32 parameters get f32 gradients. With
 * x, W exact in bf16 and sums of few terms, every value here is exact: d sum(x W) / dW[i][j]
 * = sum over rows of x[:, i]. */
static void autocast_run(td_checkpoint strategy)
{
    td_device *ac = NULL;
    tdt_check(td_device_autodiff(cpu, strategy, &ac), "autodiff device");
    td_dtype now = TD_F16;
    tdt_check(td_autodiff_autocast(ac, &now), "autocast");
    assert_int_equal(now, TD_F32);
    tdt_check(td_autodiff_set_autocast(ac, TD_BF16), "set_autocast");
    tdt_check(td_autodiff_autocast(ac, &now), "autocast");
    assert_int_equal(now, TD_BF16);
    static const double xv[] = { 1, 2, -3, 0.5, 4, -1 }, wv[] = { 0.25, -1, 2, 3 }, cv[] = { 1, 2 };
    static const int64_t sx[] = { 3, 2 }, sw[] = { 2, 2 }, sc[] = { 2 };
    td_tensor *x = leaf(ac, TD_F32, xv, sx, 2), *w = leaf(ac, TD_F32, wv, sw, 2), *c = leaf(ac, TD_F32, cv, sc, 1);
    td_tensor *m = NULL, *mc = NULL, *e = NULL, *loss = NULL;
    tdt_check(td_float_matmul(x, w, &m), "matmul");
    assert_int_equal(dtype_of(m), TD_BF16);
    tdt_check(td_float_add(m, c, &mc), "add");
    assert_int_equal(dtype_of(mc), TD_F32);
    tdt_check(td_float_exp(m, &e), "exp");
    assert_int_equal(dtype_of(e), TD_F32);
    tdt_check(td_float_sum(mc, &loss), "sum");
    assert_int_equal(dtype_of(loss), TD_F32);
    td_grads *g = NULL;
    tdt_check(td_backward(loss, &g), "backward");
    td_tensor *gw = grad_of(g, w), *gx = grad_of(g, x), *gc = grad_of(g, c);
    assert_int_equal(dtype_of(gw), TD_F32);
    assert_int_equal(dtype_of(gx), TD_F32);
    double hw[4], hx[6], hc[2];
    values(gw, hw, 4);
    values(gx, hx, 6);
    values(gc, hc, 2);
    /* dW[i][j] = x[0][i] + x[1][i] + x[2][i]: 1 - 3 + 4 = 2 and 2 + 0.5 - 1 = 1.5 */
    const double want_w[] = { 2, 2, 1.5, 1.5 };
    /* dx[r][i] = W[i][0] + W[i][1]: 0.25 - 1 and 2 + 3 */
    const double want_x[] = { -0.75, 5, -0.75, 5, -0.75, 5 };
    for (int i = 0; i < 4; i++)
        assert_true(hw[i] == want_w[i]);
    for (int i = 0; i < 6; i++)
        assert_true(hx[i] == want_x[i]);
    assert_true(hc[0] == 3 && hc[1] == 3);
    /* off again: matmul stays f32 */
    tdt_check(td_autodiff_set_autocast(ac, TD_F32), "autocast off");
    td_tensor *m2 = NULL;
    tdt_check(td_float_matmul(x, w, &m2), "matmul");
    assert_int_equal(dtype_of(m2), TD_F32);
    /* the errors */
    tdt_expect_error(td_autodiff_set_autocast(ac, TD_F64), TD_E_INVALID, "autodiff_set_autocast");
    tdt_expect_error(td_autodiff_set_autocast(ac, TD_I32), TD_E_INVALID, "autodiff_set_autocast");
    tdt_expect_error(td_autodiff_set_autocast(cpu, TD_BF16), TD_E_INVALID, "autodiff_set_autocast");
    tdt_expect_error(td_autodiff_set_autocast(NULL, TD_BF16), TD_E_NULL, "autodiff_set_autocast");
    td_tensor *ts[] = { x, w, c, m, mc, e, loss, gw, gx, gc, m2 };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        td_tensor_release(ts[i]);
    td_grads_release(g);
    td_device_release(ac);
}

/* The same under both checkpointing strategies (BALANCED keeps the casts' results). */
static void autocast_casts_by_policy(void **state)
{
    (void)state;
    autocast_run(TD_CHECKPOINT_NONE);
    autocast_run(TD_CHECKPOINT_BALANCED);
}

/* f32 master weights: a bf16 parameter at 1.0 and ten SGD steps of lr * g = 1e-3. In bf16
 * alone each step's 0.999 rounds back to 1 (the spacing below 1 is 2^-8); the master weight
 * reaches 0.99, whose nearest bf16 is 0.98828125 (0.99 - 0.98828125 = 0.00171875 <
 * 0.9921875 - 0.99). */
static void master_weights_keep_small_updates(void **state)
{
    (void)state;
    static const double one[] = { 1.0 };
    static const int64_t s[] = { 1 };
    for (int k = 0; k < 2; k++) {
        td_tensor *p = leaf(ad, TD_BF16, one, s, 1);
        td_optim *o = NULL;
        if (k == 0) {
            const td_sgd_options so = td_sgd_defaults(1.0f);
            tdt_check(td_optim_sgd(&p, 1, &so, &o), "sgd");
        } else {
            td_adam_options ao = td_adam_defaults(1e-3f);
            tdt_check(td_optim_adam(&p, 1, &ao, &o), "adam");
        }
        const float gv = 1e-3f;
        td_tensor *g = NULL;
        tdt_check(td_float_from_data(cpu, &gv, s, 1, &g), "grad");
        for (int i = 0; i < 10; i++)
            tdt_check(td_optim_step_with(o, (const td_tensor *const *)&g, 1), "step");
        assert_int_equal(dtype_of(p), TD_BF16);
        double v = 0;
        values(p, &v, 1);
        /* Adam's first steps move by lr each (m / sqrt(v) = 1 after bias correction), so
         * both reach 0.99 in f32 */
        assert_true(v == 0.98828125);
        td_tensor_release(g);
        td_optim_release(o);
        td_tensor_release(p);
    }
}

/* Loss scaling of an f16 parameter: loss = sum(w * 4) in f16. Scaled by 65536 (in f32) the
 * gradient reaching w in f16 is 65536 * 4 (its cast back from f32 overflows f16's 65504
 * already at 65536): inf, the step is skipped and the scale halved; 32768 * 4 and 16384 * 4
 * overflow too; at 8192 the gradient 32768 fits, the step runs with the unscaled gradient
 * 4: w = 1 - 0.25 * 4 = 0. */
static void loss_scaler_skips_overflowing_steps(void **state)
{
    (void)state;
    static const double one[] = { 1.0, 1.0 }, four[] = { 4.0, 4.0 };
    static const int64_t s[] = { 2 };
    td_tensor *w = leaf(ad, TD_F16, one, s, 1), *c = NULL, *c64 = NULL;
    tdt_check(td_float_from_data_dtype(ad, TD_F64, four, s, 1, &c64), "c");
    tdt_check(td_float_cast(c64, TD_F16, &c), "c16");
    td_optim *o = NULL;
    const td_sgd_options so = td_sgd_defaults(0.25f);
    tdt_check(td_optim_sgd(&w, 1, &so, &o), "sgd");
    td_grad_scaler *sc = NULL;
    tdt_check(td_grad_scaler_new(NULL, &sc), "scaler");
    const float scales[] = { 65536, 32768, 16384, 8192 };
    for (int i = 0; i < 4; i++) {
        float now = 0;
        tdt_check(td_grad_scaler_get_scale(sc, &now), "get_scale");
        assert_true(now == scales[i]);
        td_tensor *wc = NULL, *l = NULL, *ls = NULL;
        tdt_check(td_float_mul(w, c, &wc), "mul");
        tdt_check(td_float_sum(wc, &l), "sum");
        assert_int_equal(dtype_of(l), TD_F16);
        tdt_check(td_grad_scaler_scale(sc, l, &ls), "scale");
        assert_int_equal(dtype_of(ls), TD_F32);
        td_grads *g = NULL;
        tdt_check(td_backward(ls, &g), "backward");
        bool stepped = true;
        tdt_check(td_grad_scaler_step(sc, o, g, &stepped), "scaler step");
        assert_true(stepped == (i == 3));
        double v[2];
        values(w, v, 2);
        assert_true(v[0] == (i == 3 ? 0.0 : 1.0) && v[1] == v[0]);
        td_grads_release(g);
        td_tensor_release(ls);
        td_tensor_release(l);
        td_tensor_release(wc);
    }
    float now = 0;
    tdt_check(td_grad_scaler_get_scale(sc, &now), "get_scale");
    assert_true(now == 8192);
    td_grad_scaler_release(sc);
    td_optim_release(o);
    td_tensor_release(c);
    td_tensor_release(c64);
    td_tensor_release(w);
}

/* Growth: growth_interval good steps in a row double the scale (2000 by default; 3 here). */
static void loss_scaler_grows_after_the_interval(void **state)
{
    (void)state;
    static const double one[] = { 1.0 };
    static const int64_t s[] = { 1 };
    td_tensor *w = leaf(ad, TD_F16, one, s, 1);
    td_optim *o = NULL;
    const td_sgd_options so = td_sgd_defaults(1e-3f);
    tdt_check(td_optim_sgd(&w, 1, &so, &o), "sgd");
    td_grad_scaler_options opt = td_grad_scaler_defaults();
    assert_true(opt.init_scale == 65536.0f && opt.growth_factor == 2.0f && opt.backoff_factor == 0.5f &&
                opt.growth_interval == 2000);
    opt.init_scale = 8;
    opt.growth_interval = 3;
    td_grad_scaler *sc = NULL;
    tdt_check(td_grad_scaler_new(&opt, &sc), "scaler");
    const float want[] = { 8, 8, 8, 16, 16, 16, 32 };
    for (int i = 0; i < 7; i++) {
        float now = 0;
        tdt_check(td_grad_scaler_get_scale(sc, &now), "get_scale");
        assert_true(now == want[i]);
        if (i == 6)
            break;
        td_tensor *l = NULL, *ls = NULL;
        tdt_check(td_float_sum(w, &l), "sum");
        tdt_check(td_grad_scaler_scale(sc, l, &ls), "scale");
        td_grads *g = NULL;
        tdt_check(td_backward(ls, &g), "backward");
        bool stepped = false;
        tdt_check(td_grad_scaler_step(sc, o, g, &stepped), "step");
        assert_true(stepped);
        td_grads_release(g);
        td_tensor_release(ls);
        td_tensor_release(l);
    }
    /* bad options */
    td_grad_scaler *bad = NULL;
    opt.growth_interval = 0;
    tdt_expect_error(td_grad_scaler_new(&opt, &bad), TD_E_INVALID, "grad_scaler_new");
    assert_null(bad);
    opt = td_grad_scaler_defaults();
    opt.backoff_factor = 1.0f;
    tdt_expect_error(td_grad_scaler_new(&opt, &bad), TD_E_INVALID, "grad_scaler_new");
    tdt_expect_error(td_grad_scaler_step(sc, NULL, NULL, NULL), TD_E_NULL, "grad_scaler_step");
    td_grad_scaler_release(sc);
    td_optim_release(o);
    td_tensor_release(w);
}

/* Out of memory anywhere in an autocast bf16 step with an f16 loss scaler (casts on the
 * tape, the promoted add, backward through the casts, the scaler's unscaling, the master
 * weights' update): each failure is TD_E_NOMEM and leaks nothing (the teardown counts the
 * live handles), and a run with enough memory passes. */
static void out_of_memory_leaks_nothing(void **state)
{
    (void)state;
    static const double xv[] = { 1, 2, -3, 0.5 }, wv[] = { 0.25, -1, 2, 3 }, cv[] = { 1, 2 };
    static const int64_t s2[] = { 2, 2 }, sc[] = { 2 };
    bool done = false;
    for (long n = 0; n < 400 && !done; n++) {
        td_device *ac = NULL;
        tdt_check(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ac), "autodiff device");
        tdt_check(td_autodiff_set_autocast(ac, TD_BF16), "set_autocast");
        td_tensor *x = leaf(ac, TD_F32, xv, s2, 2), *w = leaf(ac, TD_F16, wv, s2, 2), *c = leaf(ac, TD_F32, cv, sc, 1);
        td_optim *o = NULL;
        const td_sgd_options so = { .lr = 0.1f, .momentum = 0.9f };
        tdt_check(td_optim_sgd(&w, 1, &so, &o), "sgd");
        td_grad_scaler *scl = NULL;
        tdt_check(td_grad_scaler_new(NULL, &scl), "scaler");
        td_tensor *m = NULL, *mc = NULL, *l = NULL, *ls = NULL;
        td_grads *g = NULL;
        td_testing_fail_allocations_after(n);
        td_status st = td_float_matmul(x, w, &m);
        if (st == TD_OK)
            st = td_float_add(m, c, &mc);
        if (st == TD_OK)
            st = td_float_sum(mc, &l);
        if (st == TD_OK)
            st = td_grad_scaler_scale(scl, l, &ls);
        if (st == TD_OK)
            st = td_backward(ls, &g);
        if (st == TD_OK)
            st = td_grad_scaler_step(scl, o, g, NULL);
        td_testing_fail_allocations_after(-1);
        if (st != TD_OK && st != TD_E_NOMEM)
            print_error("allocation %ld failing: %s (%s)\n", n, td_status_name(st), td_last_error());
        assert_true(st == TD_OK || st == TD_E_NOMEM);
        done = st == TD_OK;
        td_tensor *ts[] = { x, w, c, m, mc, l, ls };
        for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
            td_tensor_release(ts[i]);
        td_grads_release(g);
        td_grad_scaler_release(scl);
        td_optim_release(o);
        td_device_release(ac);
    }
    assert_true(done);
}

/* A composite on an autodiff device in f16 / bf16 runs its decomposition in f32 and rounds
 * once (docs/composites.md), with the casts on the tape: float_adaptive_avg_pool1d makes f32
 * tensors inside (its window masks), which failed with TD_E_DTYPE when the pieces ran in f16.
 * x = [0.3, -1.1, 2.5, 0.7, -0.2] (rounded to the dtype), 2 windows of [1, 1, 5]: [0, 3) and
 * [2, 5); y = window means of x's stored values, rounded once; d sum(y) / dx = 1/3, 1/3, 2/3,
 * 1/3, 1/3 rounded to the dtype (x2 is in both windows). */
static void composites_on_autodiff_compute_in_f32(void **state)
{
    (void)state;
    static const double xv[] = { 0.3, -1.1, 2.5, 0.7, -0.2 };
    static const int64_t s[] = { 1, 1, 5 };
    static const td_dtype dts[] = { TD_F16, TD_BF16 };
    for (int k = 0; k < 2; k++) {
        const td_dtype dt = dts[k];
        uint16_t (*bits)(float) = dt == TD_F16 ? tdt_f16_bits : tdt_bf16_bits;
        td_tensor *x = leaf(ad, dt, xv, s, 3), *y = NULL, *loss = NULL;
        tdt_check(td_float_adaptive_avg_pool1d(x, 2, &y), "adaptive_avg_pool1d");
        assert_int_equal(dtype_of(y), dt);
        double xs[5], want[2];
        values(x, xs, 5);
        want[0] = (xs[0] + xs[1] + xs[2]) / 3.0;
        want[1] = (xs[2] + xs[3] + xs[4]) / 3.0;
        uint16_t got[2];
        tdt_check(td_float_into_data_dtype(y, dt, got, 2), "into_data");
        for (int i = 0; i < 2; i++)
            assert_int_equal(got[i], bits((float)want[i]));
        tdt_check(td_float_sum(y, &loss), "sum");
        td_grads *g = NULL;
        tdt_check(td_backward(loss, &g), "backward");
        td_tensor *gx = grad_of(g, x);
        assert_int_equal(dtype_of(gx), dt);
        uint16_t gb[5];
        tdt_check(td_float_into_data_dtype(gx, dt, gb, 5), "into_data");
        for (int i = 0; i < 5; i++)
            assert_int_equal(gb[i], bits(i == 2 ? 2.0f / 3.0f : 1.0f / 3.0f));
        td_tensor_release(gx);
        td_grads_release(g);
        td_tensor_release(loss);
        td_tensor_release(y);
        td_tensor_release(x);
    }
}

/* Autocast of a list argument (docs/dtypes.md section 9): cat and stack are `keep`, so items of
 * different dtypes are promoted to the widest (bf16 with f32: f32; f16 with bf16: f32) and cast
 * on the tape, items of one dtype run in it, and without autocast the mix is TD_E_DTYPE.
 * a = [0.3, -1.1] in bf16, b = [0.7, 2.5] in f32, h = [1.5, -0.1] in f16. loss = sum(cat(a, b)
 * * w) with w = [0.1, 0.2, 0.3, 0.4] in f32 (untracked): the values are a's and b's stored
 * values in order, d loss / d a = w[0..1] rounded to bf16 (the cast's backward), d loss / d b =
 * w[2..3] in f32. stack(h, a) on dim 0 is f32 of shape [2, 2]; with loss sum(stack * w) the
 * gradients are w[0..1] in f16 and w[2..3] in bf16. Then every allocation failing in turn:
 * TD_OK or TD_E_NOMEM and nothing leaks. */
static void autocast_casts_list_items(void **state)
{
    (void)state;
    td_device *ac = NULL;
    tdt_check(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ac), "autodiff device");
    static const double av[] = { 0.3, -1.1 }, bv[] = { 0.7, 2.5 }, hv[] = { 1.5, -0.1 };
    static const float wv[] = { 0.1f, 0.2f, 0.3f, 0.4f };
    static const int64_t s2[] = { 2 }, s4[] = { 4 }, s22[] = { 2, 2 };
    td_tensor *a = leaf(ac, TD_BF16, av, s2, 1), *b = leaf(ac, TD_F32, bv, s2, 1), *h = leaf(ac, TD_F16, hv, s2, 1);
    td_tensor *w = NULL, *w22 = NULL;
    tdt_check(td_float_from_data(ac, wv, s4, 1, &w), "w");
    tdt_check(td_float_from_data(ac, wv, s22, 2, &w22), "w22");
    double sa[2], sb[2], sh[2];
    values(a, sa, 2);
    values(b, sb, 2);
    values(h, sh, 2);
    const td_tensor *ab[] = { a, b }, *ha[] = { h, a }, *aa[] = { a, a };
    td_tensor *r = NULL;
    /* without autocast the items must share a dtype */
    tdt_expect_error(td_float_cat(ab, 2, 0, &r), TD_E_DTYPE, "float_cat");
    tdt_check(td_autodiff_set_autocast(ac, TD_BF16), "set_autocast");
    /* cat(a, b): f32 */
    td_tensor *c = NULL, *cw = NULL, *loss = NULL;
    tdt_check(td_float_cat(ab, 2, 0, &c), "cat");
    assert_int_equal(dtype_of(c), TD_F32);
    double cv[4];
    values(c, cv, 4);
    const double want_c[] = { sa[0], sa[1], sb[0], sb[1] };
    for (int i = 0; i < 4; i++)
        assert_true(cv[i] == want_c[i]);
    tdt_check(td_float_mul(c, w, &cw), "mul");
    tdt_check(td_float_sum(cw, &loss), "sum");
    td_grads *g = NULL;
    tdt_check(td_backward(loss, &g), "backward");
    td_tensor *ga = grad_of(g, a), *gb = grad_of(g, b);
    assert_int_equal(dtype_of(ga), TD_BF16);
    assert_int_equal(dtype_of(gb), TD_F32);
    uint16_t gab[2];
    float gbf[2];
    tdt_check(td_float_into_data_dtype(ga, TD_BF16, gab, 2), "grad a");
    tdt_check(td_float_into_data(gb, gbf, 2), "grad b");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(gab[i], tdt_bf16_bits(wv[i]));
        assert_true(gbf[i] == wv[2 + i]);
    }
    td_grads_release(g);
    g = NULL;
    /* stack(h, a): f16 with bf16 is f32 */
    td_tensor *st = NULL, *sw = NULL, *sl = NULL;
    tdt_check(td_float_stack(ha, 2, 0, &st), "stack");
    assert_int_equal(dtype_of(st), TD_F32);
    double stv[4];
    values(st, stv, 4);
    const double want_s[] = { sh[0], sh[1], sa[0], sa[1] };
    for (int i = 0; i < 4; i++)
        assert_true(stv[i] == want_s[i]);
    tdt_check(td_float_mul(st, w22, &sw), "mul");
    tdt_check(td_float_sum(sw, &sl), "sum");
    tdt_check(td_backward(sl, &g), "backward");
    td_tensor *gh = grad_of(g, h), *ga2 = grad_of(g, a);
    assert_int_equal(dtype_of(gh), TD_F16);
    assert_int_equal(dtype_of(ga2), TD_BF16);
    uint16_t ghb[2];
    tdt_check(td_float_into_data_dtype(gh, TD_F16, ghb, 2), "grad h");
    tdt_check(td_float_into_data_dtype(ga2, TD_BF16, gab, 2), "grad a");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ghb[i], tdt_f16_bits(wv[i]));
        assert_int_equal(gab[i], tdt_bf16_bits(wv[2 + i]));
    }
    td_grads_release(g);
    /* one dtype: nothing cast, bf16 */
    td_tensor *same = NULL;
    tdt_check(td_float_cat(aa, 2, 0, &same), "cat");
    assert_int_equal(dtype_of(same), TD_BF16);
    /* allocation failures through the autocast of the items */
    const long live = td_testing_live_objects();
    td_status s = TD_E_NOMEM;
    int failures = 0;
    for (long n = 0; s != TD_OK; n++) {
        assert_true(n < 400);
        td_tensor *x = NULL, *y = NULL;
        td_testing_fail_allocations_after(n);
        s = td_float_cat(ab, 2, 0, &x);
        if (s == TD_OK)
            s = td_float_stack(ha, 2, 0, &y);
        td_testing_fail_allocations_after(-1);
        assert_true(s == TD_OK || s == TD_E_NOMEM);
        failures += s != TD_OK;
        td_tensor_release(x);
        td_tensor_release(y);
        assert_int_equal(td_testing_live_objects(), live);
    }
    assert_true(failures > 2);
    td_tensor *ts[] = { a, b, h, w, w22, c, cw, loss, ga, gb, st, sw, sl, gh, ga2, same };
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        td_tensor_release(ts[i]);
    td_device_release(ac);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(f64_gradients_match_hand_and_finite_differences),
        TDT_TEST(f64_network_gradients_match_hand),
        TDT_TEST(casts_are_recorded_and_gradients_keep_the_dtype),
        TDT_TEST(low_precision_gradients_follow_f32),
        TDT_TEST(low_precision_reductions_accumulate_in_f32),
        TDT_TEST(autocast_casts_by_policy),
        TDT_TEST(master_weights_keep_small_updates),
        TDT_TEST(loss_scaler_skips_overflowing_steps),
        TDT_TEST(loss_scaler_grows_after_the_interval),
        TDT_TEST(out_of_memory_leaks_nothing),
        TDT_TEST(composites_on_autodiff_compute_in_f32),
        TDT_TEST(autocast_casts_list_items),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
