/* The CPU's module kernels (im2col + sgemm conv2d, pooling) against direct loops written
 * here from the definitions, over geometries with stride, padding, dilation and groups,
 * including batches large enough for the threaded paths. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *cpu, *ad;

typedef struct geo {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} geo;

static const geo GEOS[] = {
    { 1, 1, 3, 3, 1, 2, 2, 1, 1, 0, 0, 1, 1, 1 },   { 2, 3, 7, 5, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1 },
    { 1, 2, 9, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   { 3, 4, 11, 8, 6, 3, 2, 2, 1, 1, 0, 1, 2, 2 },
    { 2, 6, 10, 10, 6, 3, 3, 2, 2, 2, 1, 2, 2, 6 }, { 1, 1, 5, 5, 2, 5, 5, 1, 1, 0, 0, 1, 1, 1 },
    { 4, 3, 16, 16, 8, 3, 3, 3, 3, 1, 1, 1, 1, 1 }, { 2, 2, 6, 7, 2, 2, 3, 3, 2, 3, 2, 1, 2, 1 },
    { 16, 8, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1 },
    /* 2x2 windows, stride 2 (the pools' SSE2 path): ow 5 (a last group of four redone),
     * and ow 3 with an odd height and width (a row and a column no window covers) */
    { 3, 4, 12, 10, 4, 2, 2, 2, 2, 0, 0, 1, 1, 1 },  { 2, 3, 7, 7, 3, 2, 2, 2, 2, 0, 0, 1, 1, 1 },
};

static void test_conv2d_and_gradients(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (size_t t = 0; t < sizeof GEOS / sizeof GEOS[0]; t++) {
        const geo g = GEOS[t];
        const int64_t cg = g.c / g.groups, og = g.o / g.groups;
        const int64_t oh = tdt_conv_out(g.h, g.kh, g.sh, g.ph, g.dh), ow = tdt_conv_out(g.w, g.kw, g.sw, g.pw, g.dw);
        const int64_t sx[] = { g.n, g.c, g.h, g.w }, sw[] = { g.o, cg, g.kh, g.kw }, sb[] = { g.o },
                      sy[] = { g.n, g.o, oh, ow };
        const int64_t nx = g.n * g.c * g.h * g.w, nw = g.o * cg * g.kh * g.kw, ny = g.n * g.o * oh * ow;
        float *x = tdt_host_randoms(nx, &seed), *w = tdt_host_randoms(nw, &seed), *b = tdt_host_randoms(g.o, &seed), *gy = tdt_host_randoms(ny, &seed);
        float *y = calloc((size_t)ny, sizeof(float)), *dx = calloc((size_t)nx, sizeof(float)),
              *dw = calloc((size_t)nw, sizeof(float));
        /* Direct loops: y = sum over the window of w x + b; dx and dw by the chain rule. */
        for (int64_t n = 0; n < g.n; n++)
            for (int64_t o = 0; o < g.o; o++)
                for (int64_t i = 0; i < oh; i++)
                    for (int64_t j = 0; j < ow; j++) {
                        const int64_t yi = ((n * g.o + o) * oh + i) * ow + j;
                        double s = b[o];
                        for (int64_t c = 0; c < cg; c++)
                            for (int64_t a = 0; a < g.kh; a++)
                                for (int64_t e = 0; e < g.kw; e++) {
                                    const int64_t ih = i * g.sh - g.ph + a * g.dh, iw = j * g.sw - g.pw + e * g.dw;
                                    if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
                                        continue;
                                    const int64_t xc = (o / og) * cg + c;
                                    const int64_t xi = ((n * g.c + xc) * g.h + ih) * g.w + iw;
                                    const int64_t wi = ((o * cg + c) * g.kh + a) * g.kw + e;
                                    s += (double)w[wi] * x[xi];
                                    dx[xi] += w[wi] * gy[yi];
                                    dw[wi] += x[xi] * gy[yi];
                                }
                        y[yi] = (float)s;
                    }
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 4), *tw = tdt_make_f32(cpu, w, sw, 4), *tb = tdt_make_f32(cpu, b, sb, 1), *tg = tdt_make_f32(cpu, gy, sy, 4);
        td_tensor *ty = NULL, *tdx = NULL, *tdw = NULL;
        const int64_t st[] = { g.sh, g.sw }, pd[] = { g.ph, g.pw }, dl[] = { g.dh, g.dw };
        tdt_check(td_float_conv2d(tx, tw, tb, st, 2, pd, 2, dl, 2, g.groups, &ty), "conv2d");
        tdt_check(td_float_conv2d_backward_input(tg, tw, tx, st, 2, pd, 2, dl, 2, g.groups, &tdx), "backward_input");
        tdt_check(td_float_conv2d_backward_weight(tg, tx, tw, st, 2, pd, 2, dl, 2, g.groups, &tdw), "backward_weight");
        tdt_expect(ty, TD_F32, sy, 4, y, ny, 1e-4f);
        tdt_expect(tdx, TD_F32, sx, 4, dx, nx, 1e-4f);
        tdt_expect(tdw, TD_F32, sw, 4, dw, nw, 1e-3f);
        td_tensor *all[] = { tx, tw, tb, tg, ty, tdx, tdw };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
        free(x), free(w), free(b), free(gy), free(y), free(dx), free(dw);
    }
}

static void test_pools_and_gradients(void **state)
{
    (void)state;
    unsigned seed = 777;
    for (size_t t = 0; t < sizeof GEOS / sizeof GEOS[0]; t++) {
        geo g = GEOS[t];
        if (2 * g.ph > g.kh || 2 * g.pw > g.kw)
            continue; /* pooling pads at most half the kernel */
        const int64_t oh = tdt_conv_out(g.h, g.kh, g.sh, g.ph, g.dh), ow = tdt_conv_out(g.w, g.kw, g.sw, g.pw, g.dw);
        const int64_t ah = tdt_conv_out(g.h, g.kh, g.sh, g.ph, 1), aw = tdt_conv_out(g.w, g.kw, g.sw, g.pw, 1);
        const int64_t sx[] = { g.n, g.c, g.h, g.w }, sy[] = { g.n, g.c, oh, ow }, sa[] = { g.n, g.c, ah, aw };
        const int64_t nx = g.n * g.c * g.h * g.w, ny = g.n * g.c * oh * ow, na = g.n * g.c * ah * aw;
        float *x = tdt_host_randoms(nx, &seed), *gy = tdt_host_randoms(ny > na ? ny : na, &seed);
        float *y = calloc((size_t)ny, sizeof(float)), *dx = calloc((size_t)nx, sizeof(float));
        float *ya = calloc((size_t)na, sizeof(float)), *dxa = calloc((size_t)nx, sizeof(float));
        const int inc = (int)(t % 2);
        for (int64_t pl = 0; pl < g.n * g.c; pl++) {
            const float *xp = x + pl * g.h * g.w;
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    int64_t arg = -1;
                    for (int64_t a = 0; a < g.kh; a++)
                        for (int64_t e = 0; e < g.kw; e++) {
                            const int64_t ih = i * g.sh - g.ph + a * g.dh, iw = j * g.sw - g.pw + e * g.dw;
                            if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w && (arg < 0 || xp[ih * g.w + iw] > xp[arg]))
                                arg = ih * g.w + iw;
                        }
                    y[(pl * oh + i) * ow + j] = xp[arg];
                    dx[pl * g.h * g.w + arg] += gy[(pl * oh + i) * ow + j];
                }
            for (int64_t i = 0; i < ah; i++)
                for (int64_t j = 0; j < aw; j++) {
                    double s = 0;
                    int cnt = 0;
                    for (int64_t a = 0; a < g.kh; a++)
                        for (int64_t e = 0; e < g.kw; e++) {
                            const int64_t ih = i * g.sh - g.ph + a, iw = j * g.sw - g.pw + e;
                            if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) {
                                s += xp[ih * g.w + iw];
                                cnt++;
                            }
                        }
                    const int64_t div = inc ? g.kh * g.kw : cnt;
                    ya[(pl * ah + i) * aw + j] = (float)(s / (double)div);
                    for (int64_t a = 0; a < g.kh; a++)
                        for (int64_t e = 0; e < g.kw; e++) {
                            const int64_t ih = i * g.sh - g.ph + a, iw = j * g.sw - g.pw + e;
                            if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w)
                                dxa[pl * g.h * g.w + ih * g.w + iw] += gy[(pl * ah + i) * aw + j] / (float)div;
                        }
                }
        }
        const int64_t k[] = { g.kh, g.kw }, st[] = { g.sh, g.sw }, pd[] = { g.ph, g.pw }, dl[] = { g.dh, g.dw };
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 4), *tg = tdt_make_f32(cpu, gy, sy, 4), *tga = tdt_make_f32(cpu, gy, sa, 4);
        td_tensor *ty = NULL, *tdx = NULL, *tya = NULL, *tdxa = NULL;
        tdt_check(td_float_max_pool2d(tx, k, 2, st, 2, pd, 2, dl, 2, &ty), "max_pool2d");
        tdt_check(td_float_max_pool2d_backward(tx, tg, k, 2, st, 2, pd, 2, dl, 2, &tdx), "max_pool2d_backward");
        tdt_check(td_float_avg_pool2d(tx, k, 2, st, 2, pd, 2, inc, &tya), "avg_pool2d");
        tdt_check(td_float_avg_pool2d_backward(tx, tga, k, 2, st, 2, pd, 2, inc, &tdxa), "avg_pool2d_backward");
        tdt_expect(ty, TD_F32, sy, 4, y, ny, 0.0f);
        tdt_expect(tdx, TD_F32, sx, 4, dx, nx, 1e-6f);
        tdt_expect(tya, TD_F32, sa, 4, ya, na, 1e-6f);
        tdt_expect(tdxa, TD_F32, sx, 4, dxa, nx, 1e-5f);
        td_tensor *all[] = { tx, tg, tga, ty, tdx, tya, tdxa };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
        free(x), free(gy), free(y), free(dx), free(ya), free(dxa);
    }
}

/* One training step's worth of autodiff through conv, pool and linear: the gradient of
 * sum(linear(flatten(max_pool(conv(x))))) reaches every parameter with its shape. */
static void test_autodiff_chain(void **state)
{
    (void)state;
    unsigned seed = 99;
    const int64_t sx[] = { 2, 1, 6, 6 }, sw[] = { 4, 1, 3, 3 }, sb[] = { 4 }, sl[] = { 36, 3 }, sc[] = { 3 };
    float *x = tdt_host_randoms(72, &seed), *w = tdt_host_randoms(36, &seed), *b = tdt_host_randoms(4, &seed), *l = tdt_host_randoms(108, &seed),
          *c = tdt_host_randoms(3, &seed);
    td_tensor *tx = NULL, *tw = NULL, *tb = NULL, *tl = NULL, *tc = NULL, *y = NULL, *p = NULL, *f = NULL, *z = NULL,
              *s = NULL;
    tdt_check(td_float_from_data(ad, x, sx, 4, &tx), "x");
    tdt_check(td_float_from_data(ad, w, sw, 4, &tw), "w");
    tdt_check(td_float_from_data(ad, b, sb, 1, &tb), "b");
    tdt_check(td_float_from_data(ad, l, sl, 2, &tl), "l");
    tdt_check(td_float_from_data(ad, c, sc, 1, &tc), "c");
    td_tensor *leaves[] = { tw, tb, tl, tc };
    for (int i = 0; i < 4; i++)
        tdt_check(td_require_grad(leaves[i]), "require_grad");
    const int64_t one[] = { 1, 1 }, two[] = { 2, 2 }, zero[] = { 0, 0 }, flat[] = { 2, 36 };
    tdt_check(td_float_conv2d(tx, tw, tb, one, 2, one, 2, one, 2, 1, &y), "conv2d");
    tdt_check(td_float_max_pool2d(y, two, 2, two, 2, zero, 2, one, 2, &p), "max_pool2d");
    tdt_check(td_float_reshape(p, flat, 2, &f), "reshape");
    tdt_check(td_float_linear(f, tl, tc, &z), "linear");
    tdt_check(td_float_sum(z, &s), "sum");
    td_grads *g = NULL;
    tdt_check(td_backward(s, &g), "backward");
    for (int i = 0; i < 4; i++) {
        td_tensor *gi = NULL;
        tdt_check(td_grads_get(g, leaves[i], &gi), "grads_get");
        assert_non_null(gi);
        int64_t a[TD_MAX_DIMS], bdims[TD_MAX_DIMS];
        int na = 0, nb = 0;
        tdt_check(td_tensor_shape(gi, a, &na), "shape");
        tdt_check(td_tensor_shape(leaves[i], bdims, &nb), "shape");
        assert_int_equal(na, nb);
        for (int d = 0; d < na; d++)
            assert_int_equal(a[d], bdims[d]);
        td_tensor_release(gi);
    }
    /* d sum / d c = the number of rows (2) for every output. */
    td_tensor *gc = NULL;
    tdt_check(td_grads_get(g, tc, &gc), "grads_get");
    static const float two_each[] = { 2, 2, 2 };
    tdt_expect(gc, TD_F32, sc, 1, two_each, 3, 1e-6f);
    td_tensor_release(gc);
    td_grads_release(g);
    td_tensor *all[] = { tx, tw, tb, tl, tc, y, p, f, z, s };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    free(x), free(w), free(b), free(l), free(c);
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
        TDT_TEST(test_conv2d_and_gradients),
        TDT_TEST(test_pools_and_gradients),
        TDT_TEST(test_autodiff_chain),
    };
    return cmocka_run_group_tests_name("module_ops", tests, setup, teardown);
}
