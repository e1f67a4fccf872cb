/* The spatial module ops (specs/ops/module_spatial.lua) against direct loops written here
 * from PyTorch's definitions: conv1d, the 1-d pools, the adaptive average pools (sizes that
 * do not divide), nearest and bilinear interpolation (PyTorch's CPU index formulas, in
 * float) and conv_transpose2d (the scatter of x through the weight). Every one of these
 * ops is a decomposition, so the generated comparisons hold one backend's pieces against
 * another's; these hold the decompositions themselves against an independent reference.
 * Also: gradient checks over richer geometries than the spec examples, and the errors of
 * bad arguments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "tdt.h"

static td_device *cpu, *ad, *ad_bal;

/* ---- conv1d ---- */

typedef struct geo1 {
    int64_t n, c, l, o, k, s, p, d, groups;
} geo1;

static const geo1 CONV1 [] = {
    { 1, 1, 5, 1, 2, 1, 0, 1, 1 }, { 2, 3, 7, 4, 1, 1, 0, 1, 1 },   { 1, 2, 9, 3, 3, 2, 1, 1, 1 },
    { 3, 4, 11, 6, 3, 2, 1, 2, 2 }, { 2, 6, 10, 6, 3, 3, 2, 2, 6 }, { 4, 8, 50, 16, 5, 1, 2, 1, 1 },
};

static void test_conv1d_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 2024;
    for (size_t t = 0; t < sizeof CONV1 / sizeof CONV1[0]; t++) {
        const geo1 g = CONV1[t];
        const int64_t cg = g.c / g.groups, og = g.o / g.groups, ol = tdt_conv_out(g.l, g.k, g.s, g.p, g.d);
        const int64_t sx[] = { g.n, g.c, g.l }, sw[] = { g.o, cg, g.k }, sb[] = { g.o }, sy[] = { g.n, g.o, ol };
        const int64_t nx = g.n * g.c * g.l, nw = g.o * cg * g.k, ny = g.n * g.o * ol;
        float *x = tdt_host_randoms(nx, &seed), *w = tdt_host_randoms(nw, &seed), *b = tdt_host_randoms(g.o, &seed);
        float *y = calloc((size_t)ny, sizeof(float));
        for (int64_t n = 0; n < g.n; n++)
            for (int64_t o = 0; o < g.o; o++)
                for (int64_t i = 0; i < ol; i++) {
                    double s = b[o];
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t a = 0; a < g.k; a++) {
                            const int64_t il = i * g.s - g.p + a * g.d;
                            if (il >= 0 && il < g.l)
                                s += (double)w[(o * cg + c) * g.k + a] * x[(n * g.c + (o / og) * cg + c) * g.l + il];
                        }
                    y[(n * g.o + o) * ol + i] = (float)s;
                }
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 3), *tw = tdt_make_f32(cpu, w, sw, 3), *tb = tdt_make_f32(cpu, b, sb, 1), *ty = NULL;
        tdt_check(td_float_conv1d(tx, tw, tb, g.s, g.p, g.d, g.groups, &ty), "conv1d");
        tdt_expect(ty, TD_F32, sy, 3, y, ny, 1e-5f);
        td_tensor *all[] = { tx, tw, tb, ty };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            td_tensor_release(all[i]);
        free(x), free(w), free(b), free(y);
    }
}

/* ---- 1-d pools ---- */

static void test_pool1d_vs_loops(void **state)
{
    (void)state;
    /* { n, c, l, kernel, stride, padding, dilation } */
    static const int64_t G[][7] = { { 1, 1, 3, 2, 1, 0, 1 },  { 2, 3, 8, 2, 2, 0, 1 }, { 1, 2, 9, 3, 2, 1, 1 },
                                    { 2, 2, 10, 3, 1, 1, 2 }, { 3, 5, 11, 4, 3, 2, 1 }, { 1, 1, 1, 1, 1, 0, 1 } };
    unsigned seed = 31;
    for (size_t t = 0; t < sizeof G / sizeof G[0]; t++) {
        const int64_t n = G[t][0], c = G[t][1], l = G[t][2], k = G[t][3], s = G[t][4], p = G[t][5], d = G[t][6];
        const int64_t om = tdt_conv_out(l, k, s, p, d), oa = tdt_conv_out(l, k, s, p, 1), inc = (int64_t)(t % 2);
        const int64_t sx[] = { n, c, l }, sm[] = { n, c, om }, sa[] = { n, c, oa };
        float *x = tdt_host_randoms(n * c * l, &seed);
        float *ym = calloc((size_t)(n * c * om), sizeof(float)), *ya = calloc((size_t)(n * c * oa), sizeof(float));
        for (int64_t pl = 0; pl < n * c; pl++) {
            const float *xp = x + pl * l;
            for (int64_t i = 0; i < om; i++) {
                float m = -INFINITY;
                for (int64_t a = 0; a < k; a++) {
                    const int64_t j = i * s - p + a * d;
                    if (j >= 0 && j < l && xp[j] > m)
                        m = xp[j];
                }
                ym[pl * om + i] = m;
            }
            for (int64_t i = 0; i < oa; i++) {
                double sum = 0;
                int64_t cnt = 0;
                for (int64_t a = 0; a < k; a++) {
                    const int64_t j = i * s - p + a;
                    if (j >= 0 && j < l)
                        sum += xp[j], cnt++;
                }
                ya[pl * oa + i] = (float)(sum / (double)(inc ? k : cnt));
            }
        }
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 3), *tm = NULL, *ta = NULL;
        tdt_check(td_float_max_pool1d(tx, k, s, p, d, &tm), "max_pool1d");
        tdt_check(td_float_avg_pool1d(tx, k, s, p, inc, &ta), "avg_pool1d");
        tdt_expect(tm, TD_F32, sm, 3, ym, n * c * om, 0.0f);
        tdt_expect(ta, TD_F32, sa, 3, ya, n * c * oa, 1e-6f);
        td_tensor_release(tx), td_tensor_release(tm), td_tensor_release(ta);
        free(x), free(ym), free(ya);
    }
}

/* ---- adaptive average pools ---- */

/* { n, c, h, w, oh, ow }: dividing and not, down and up, to and from 1. */
static const int64_t RESIZES[][6] = { { 1, 1, 3, 3, 2, 2 },   { 2, 3, 8, 8, 4, 4 }, { 1, 2, 7, 9, 3, 4 },
                                      { 2, 2, 5, 7, 10, 13 }, { 1, 1, 1, 1, 3, 2 }, { 3, 5, 9, 11, 1, 1 },
                                      { 2, 4, 6, 6, 6, 6 },   { 1, 3, 13, 5, 5, 13 }, { 2, 3, 17, 10, 7, 3 } };

static double window_mean(const float *xp, int64_t w, int64_t h0, int64_t h1, int64_t w0, int64_t w1)
{
    double s = 0;
    for (int64_t a = h0; a < h1; a++)
        for (int64_t e = w0; e < w1; e++)
            s += xp[a * w + e];
    return s / (double)((h1 - h0) * (w1 - w0));
}

static void test_adaptive_avg_pools_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 4242;
    for (size_t t = 0; t < sizeof RESIZES / sizeof RESIZES[0]; t++) {
        const int64_t n = RESIZES[t][0], c = RESIZES[t][1], h = RESIZES[t][2], w = RESIZES[t][3];
        const int64_t oh = RESIZES[t][4], ow = RESIZES[t][5];
        const int64_t sx[] = { n, c, h, w }, sy[] = { n, c, oh, ow }, sx1[] = { n, c, w }, sy1[] = { n, c, ow };
        float *x = tdt_host_randoms(n * c * h * w, &seed);
        float *y = calloc((size_t)(n * c * oh * ow), sizeof(float)), *y1 = calloc((size_t)(n * c * ow), sizeof(float));
        for (int64_t pl = 0; pl < n * c; pl++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    /* [floor(i h / oh), ceil((i + 1) h / oh)) */
                    const int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh;
                    const int64_t w0 = j * w / ow, w1 = ((j + 1) * w + ow - 1) / ow;
                    y[(pl * oh + i) * ow + j] = (float)window_mean(x + pl * h * w, w, h0, h1, w0, w1);
                    if (i == 0) /* the 1-d pool of each plane's first row */
                        y1[pl * ow + j] = (float)window_mean(x + pl * h * w, w, 0, 1, w0, w1);
                }
        /* the first row of each plane as a [n, c, w] tensor */
        float *row = malloc(sizeof(float) * (size_t)(n * c * w));
        for (int64_t pl = 0; pl < n * c; pl++)
            for (int64_t e = 0; e < w; e++)
                row[pl * w + e] = x[pl * h * w + e];
        const int64_t size[] = { oh, ow };
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 4), *tr = tdt_make_f32(cpu, row, sx1, 3), *ty = NULL, *ty1 = NULL;
        tdt_check(td_float_adaptive_avg_pool2d(tx, size, 2, &ty), "adaptive_avg_pool2d");
        tdt_check(td_float_adaptive_avg_pool1d(tr, ow, &ty1), "adaptive_avg_pool1d");
        tdt_expect(ty, TD_F32, sy, 4, y, n * c * oh * ow, 1e-5f);
        tdt_expect(ty1, TD_F32, sy1, 3, y1, n * c * ow, 1e-5f);
        td_tensor_release(tx), td_tensor_release(tr), td_tensor_release(ty), td_tensor_release(ty1);
        free(x), free(y), free(y1), free(row);
    }
}

/* ---- interpolation: PyTorch's CPU formulas (UpSample.h), in float ---- */

static int64_t nearest_src(int64_t i, int64_t in, int64_t out)
{
    const float scale = (float)in / (float)out;
    const int64_t s = (int64_t)floorf((float)i * scale);
    return s < in - 1 ? s : in - 1;
}

static void linear_src(int64_t i, int64_t in, int64_t out, int ac, int64_t *i0, int64_t *i1, float *l0, float *l1)
{
    const float scale = ac ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) : (float)in / (float)out;
    float src = ac ? scale * (float)i : scale * ((float)i + 0.5f) - 0.5f;
    if (!ac && src < 0)
        src = 0;
    *i0 = (int64_t)src;
    *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
    *l1 = fminf(fmaxf(src - (float)*i0, 0.0f), 1.0f);
    *l0 = 1.0f - *l1;
}

static void test_interpolate_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 555;
    for (size_t t = 0; t < sizeof RESIZES / sizeof RESIZES[0]; t++) {
        const int64_t n = RESIZES[t][0], c = RESIZES[t][1], h = RESIZES[t][2], w = RESIZES[t][3];
        const int64_t oh = RESIZES[t][4], ow = RESIZES[t][5], ny = n * c * oh * ow;
        const int64_t sx[] = { n, c, h, w }, sy[] = { n, c, oh, ow }, size[] = { oh, ow };
        float *x = tdt_host_randoms(n * c * h * w, &seed);
        float *yn = calloc((size_t)ny, sizeof(float)), *yb[2] = { calloc((size_t)ny, sizeof(float)),
                                                                  calloc((size_t)ny, sizeof(float)) };
        for (int64_t pl = 0; pl < n * c; pl++) {
            const float *xp = x + pl * h * w;
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    const int64_t yi = (pl * oh + i) * ow + j;
                    yn[yi] = xp[nearest_src(i, h, oh) * w + nearest_src(j, w, ow)];
                    for (int ac = 0; ac < 2; ac++) {
                        int64_t h0, h1, w0, w1;
                        float a0, a1, b0, b1;
                        linear_src(i, h, oh, ac, &h0, &h1, &a0, &a1);
                        linear_src(j, w, ow, ac, &w0, &w1, &b0, &b1);
                        yb[ac][yi] = a0 * (b0 * xp[h0 * w + w0] + b1 * xp[h0 * w + w1]) +
                                     a1 * (b0 * xp[h1 * w + w0] + b1 * xp[h1 * w + w1]);
                    }
                }
        }
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 4), *tn = NULL, *tb[2] = { NULL, NULL };
        tdt_check(td_float_interpolate2d_nearest(tx, size, 2, &tn), "interpolate2d_nearest");
        tdt_expect(tn, TD_F32, sy, 4, yn, ny, 0.0f);
        for (int ac = 0; ac < 2; ac++) {
            tdt_check(td_float_interpolate2d_bilinear(tx, size, 2, ac, &tb[ac]), "interpolate2d_bilinear");
            tdt_expect(tb[ac], TD_F32, sy, 4, yb[ac], ny, 1e-5f);
        }
        td_tensor_release(tx), td_tensor_release(tn), td_tensor_release(tb[0]), td_tensor_release(tb[1]);
        free(x), free(yn), free(yb[0]), free(yb[1]);
    }
}

/* ---- conv_transpose2d: x[n][ci][i][j] w[ci][co][a][e] lands on (i sh - ph + a dh, j sw - pw + e dw) ---- */

typedef struct geot {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, oph, opw, dh, dw, groups;
} geot;

static const geot CONVT[] = {
    { 1, 1, 2, 2, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1 },  { 2, 3, 5, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1 },
    { 1, 2, 4, 4, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1 },  { 3, 4, 5, 6, 6, 3, 2, 2, 1, 1, 0, 1, 0, 1, 2, 2 },
    { 2, 6, 4, 4, 6, 3, 3, 3, 2, 2, 1, 2, 0, 2, 2, 6 },  { 4, 8, 7, 7, 3, 4, 4, 2, 2, 1, 1, 0, 0, 1, 1, 1 },
    { 2, 4, 3, 5, 2, 2, 3, 3, 2, 0, 1, 2, 1, 2, 1, 2 },
};

static int64_t tsz(int64_t in, int64_t k, int64_t s, int64_t p, int64_t op, int64_t d)
{
    return (in - 1) * s - 2 * p + d * (k - 1) + op + 1;
}

static void test_conv_transpose2d_vs_loops(void **state)
{
    (void)state;
    unsigned seed = 8080;
    for (size_t t = 0; t < sizeof CONVT / sizeof CONVT[0]; t++) {
        const geot g = CONVT[t];
        const int64_t cg = g.c / g.groups, og = g.o / g.groups;
        const int64_t oh = tsz(g.h, g.kh, g.sh, g.ph, g.oph, g.dh), ow = tsz(g.w, g.kw, g.sw, g.pw, g.opw, g.dw);
        const int64_t sx[] = { g.n, g.c, g.h, g.w }, sw[] = { g.c, og, g.kh, g.kw }, sb[] = { g.o },
                      sy[] = { g.n, g.o, oh, ow };
        const int64_t nx = g.n * g.c * g.h * g.w, nw = g.c * og * g.kh * g.kw, ny = g.n * g.o * oh * ow;
        float *x = tdt_host_randoms(nx, &seed), *w = tdt_host_randoms(nw, &seed), *b = tdt_host_randoms(g.o, &seed);
        double *acc = calloc((size_t)ny, sizeof(double));
        for (int64_t n = 0; n < g.n; n++)
            for (int64_t ci = 0; ci < g.c; ci++)
                for (int64_t i = 0; i < g.h; i++)
                    for (int64_t j = 0; j < g.w; j++)
                        for (int64_t co = 0; co < og; co++)
                            for (int64_t a = 0; a < g.kh; a++)
                                for (int64_t e = 0; e < g.kw; e++) {
                                    const int64_t p = i * g.sh - g.ph + a * g.dh, q = j * g.sw - g.pw + e * g.dw;
                                    if (p < 0 || p >= oh || q < 0 || q >= ow)
                                        continue;
                                    const int64_t o = (ci / cg) * og + co;
                                    acc[((n * g.o + o) * oh + p) * ow + q] +=
                                        (double)x[((n * g.c + ci) * g.h + i) * g.w + j] *
                                        w[((ci * og + co) * g.kh + a) * g.kw + e];
                                }
        float *y = malloc(sizeof(float) * (size_t)ny);
        for (int64_t i = 0; i < ny; i++)
            y[i] = (float)(acc[i] + b[(i / (oh * ow)) % g.o]);
        td_tensor *tx = tdt_make_f32(cpu, x, sx, 4), *tw = tdt_make_f32(cpu, w, sw, 4), *tb = tdt_make_f32(cpu, b, sb, 1), *ty = NULL;
        const int64_t st[] = { g.sh, g.sw }, pd[] = { g.ph, g.pw }, op[] = { g.oph, g.opw }, dl[] = { g.dh, g.dw };
        tdt_check(td_float_conv_transpose2d(tx, tw, tb, st, 2, pd, 2, op, 2, dl, 2, g.groups, &ty), "conv_transpose2d");
        tdt_expect(ty, TD_F32, sy, 4, y, ny, 1e-5f);
        td_tensor_release(tx), td_tensor_release(tw), td_tensor_release(tb), td_tensor_release(ty);
        free(x), free(w), free(b), free(y), free(acc);
    }
}

/* ---- gradient checks over geometries the spec examples do not reach ---- */

static td_status fwd_convt(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    static const int64_t st[] = { 2, 1 }, pd[] = { 1, 0 }, op[] = { 1, 0 }, dl[] = { 1, 2 };
    return td_float_conv_transpose2d(ins[0], ins[1], ins[2], st, 2, pd, 2, op, 2, dl, 2, 2, out);
}

static td_status fwd_conv1d(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    return td_float_conv1d(ins[0], ins[1], ins[2], 2, 1, 2, 2, out);
}

static td_status fwd_bilinear0(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    static const int64_t size[] = { 5, 3 };
    return td_float_interpolate2d_bilinear(ins[0], size, 2, 0, out);
}

static td_status fwd_bilinear1(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    static const int64_t size[] = { 2, 7 };
    return td_float_interpolate2d_bilinear(ins[0], size, 2, 1, out);
}

static td_status fwd_nearest(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    static const int64_t size[] = { 5, 2 };
    return td_float_interpolate2d_nearest(ins[0], size, 2, out);
}

static td_status fwd_adaptive2d(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    static const int64_t size[] = { 2, 4 };
    return td_float_adaptive_avg_pool2d(ins[0], size, 2, out);
}

static td_status fwd_adaptive1d(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    return td_float_adaptive_avg_pool1d(ins[0], 3, out);
}

static td_status fwd_avg1d(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    return td_float_avg_pool1d(ins[0], 3, 2, 1, 0, out);
}

static td_status fwd_max1d(td_device *d, td_tensor *const *ins, td_tensor **out)
{
    (void)d;
    return td_float_max_pool1d(ins[0], 2, 1, 1, 2, out);
}

static void test_spatial_gradchecks(void **state)
{
    (void)state;
    /* conv_transpose2d: 4 channels in 2 groups of 2, 3 outputs per group; stride, padding,
     * output_padding and dilation differing between the dims. */
    static const int64_t tx[] = { 2, 4, 3, 2 }, tw[] = { 4, 3, 3, 2 }, tb[] = { 6 };
    const tdt_input convt[] = { { tx, 4, false, false }, { tw, 4, false, false }, { tb, 1, false, false } };
    tdt_gradcheck(cpu, ad, ad_bal, fwd_convt, convt, 3, 11u);
    static const int64_t cx[] = { 2, 4, 9 }, cw[] = { 2, 2, 3 }, cb[] = { 2 };
    const tdt_input conv1[] = { { cx, 3, false, false }, { cw, 3, false, false }, { cb, 1, false, false } };
    tdt_gradcheck(cpu, ad, ad_bal, fwd_conv1d, conv1, 3, 12u);
    static const int64_t ix[] = { 2, 2, 3, 5 };
    const tdt_input img[] = { { ix, 4, false, false } };
    tdt_gradcheck(cpu, ad, ad_bal, fwd_bilinear0, img, 1, 13u);
    tdt_gradcheck(cpu, ad, ad_bal, fwd_bilinear1, img, 1, 14u);
    tdt_gradcheck(cpu, ad, ad_bal, fwd_nearest, img, 1, 15u);
    tdt_gradcheck(cpu, ad, ad_bal, fwd_adaptive2d, img, 1, 16u);
    static const int64_t lx[] = { 2, 3, 7 };
    const tdt_input line[] = { { lx, 3, false, false } };
    tdt_gradcheck(cpu, ad, ad_bal, fwd_adaptive1d, line, 1, 17u);
    tdt_gradcheck(cpu, ad, ad_bal, fwd_avg1d, line, 1, 18u);
    tdt_gradcheck(cpu, ad, ad_bal, fwd_max1d, line, 1, 19u);
}

/* ---- bad arguments: the rule's error, naming the op, before any kernel runs ---- */

static void test_spatial_errors(void **state)
{
    (void)state;
    static const int64_t s3[] = { 1, 2, 6 }, s4[] = { 1, 2, 4, 4 }, w3[] = { 2, 2, 3 }, b2[] = { 2 },
                         w4[] = { 2, 3, 2, 2 }, b6[] = { 6 }, b5[] = { 5 }, big[] = { 1, 1, 70000 };
    td_tensor *x3 = tdt_filled(cpu, TD_F32, s3, 3), *x4 = tdt_filled(cpu, TD_F32, s4, 4);
    td_tensor *wc = tdt_filled(cpu, TD_F32, w3, 3), *bc = tdt_filled(cpu, TD_F32, b2, 1);
    td_tensor *wt = tdt_filled(cpu, TD_F32, w4, 4), *bt = tdt_filled(cpu, TD_F32, b6, 1);
    td_tensor *bt5 = tdt_filled(cpu, TD_F32, b5, 1), *xl = tdt_filled(cpu, TD_F32, big, 3);
    td_tensor *out = NULL;
    /* conv1d */
    tdt_expect_error(td_float_conv1d(x4, wc, bc, 1, 0, 1, 1, &out), TD_E_SHAPE, "float_conv1d");
    tdt_expect_error(td_float_conv1d(x3, wc, bc, 0, 0, 1, 1, &out), TD_E_INVALID, "float_conv1d");
    tdt_expect_error(td_float_conv1d(x3, wc, bc, 1, -1, 1, 1, &out), TD_E_INVALID, "float_conv1d");
    tdt_expect_error(td_float_conv1d(x3, wc, bc, 1, 0, 1, 2, &out), TD_E_SHAPE, "float_conv1d");
    tdt_expect_error(td_float_conv1d(x3, wc, bc, 1, 0, 4, 1, &out), TD_E_SHAPE, "float_conv1d"); /* span 9 > 6 */
    /* pools */
    tdt_expect_error(td_float_max_pool1d(x3, 2, 1, 2, 1, &out), TD_E_INVALID, "float_max_pool1d");
    tdt_expect_error(td_float_max_pool1d(x4, 2, 1, 0, 1, &out), TD_E_SHAPE, "float_max_pool1d");
    tdt_expect_error(td_float_avg_pool1d(x3, 2, 0, 0, 1, &out), TD_E_INVALID, "float_avg_pool1d");
    tdt_expect_error(td_float_avg_pool1d(x3, 2, 1, 0, 2, &out), TD_E_INVALID, "float_avg_pool1d");
    tdt_expect_error(td_float_adaptive_avg_pool1d(x3, 0, &out), TD_E_INVALID, "float_adaptive_avg_pool1d");
    tdt_expect_error(td_float_adaptive_avg_pool1d(x4, 2, &out), TD_E_SHAPE, "float_adaptive_avg_pool1d");
    /* 40000 (70000 + 1) is past the int32 index arithmetic */
    tdt_expect_error(td_float_adaptive_avg_pool1d(xl, 40000, &out), TD_E_INVALID, "float_adaptive_avg_pool1d");
    static const int64_t size_ok[] = { 2, 2 }, size_zero[] = { 0, 2 }, size_one[] = { 2 };
    tdt_expect_error(td_float_adaptive_avg_pool2d(x4, size_zero, 2, &out), TD_E_INVALID, "float_adaptive_avg_pool2d");
    tdt_expect_error(td_float_adaptive_avg_pool2d(x4, size_one, 1, &out), TD_E_INVALID, "float_adaptive_avg_pool2d");
    tdt_expect_error(td_float_adaptive_avg_pool2d(x3, size_ok, 2, &out), TD_E_SHAPE, "float_adaptive_avg_pool2d");
    /* interpolation */
    tdt_expect_error(td_float_interpolate2d_nearest(x3, size_ok, 2, &out), TD_E_SHAPE, "float_interpolate2d_nearest");
    tdt_expect_error(td_float_interpolate2d_nearest(x4, size_zero, 2, &out), TD_E_INVALID,
                     "float_interpolate2d_nearest");
    tdt_expect_error(td_float_interpolate2d_bilinear(x4, size_ok, 2, 2, &out), TD_E_INVALID,
                     "float_interpolate2d_bilinear");
    /* interpolation computes its indices in float: no int32 bound on the sizes */
    static const int64_t wide[] = { 1, 1, 1, 70000 }, wide_size[] = { 1, 40000 };
    td_tensor *xw = tdt_filled(cpu, TD_F32, wide, 4);
    tdt_check(td_float_interpolate2d_nearest(xw, wide_size, 2, &out), "interpolate2d_nearest");
    td_tensor_release(out);
    td_tensor_release(xw);
    out = NULL;
    /* conv_transpose2d: x [1, 2, 4, 4] with weight [2, 3, 2, 2] -> 3 outputs per group */
    static const int64_t one[] = { 1, 1 }, two[] = { 2, 2 }, zero[] = { 0, 0 };
    tdt_check(td_float_conv_transpose2d(x4, wt, bt, two, 2, zero, 2, one, 2, one, 2, 2, &out), "conv_transpose2d");
    static const int64_t want[] = { 1, 6, 9, 9 };
    int64_t got[TD_MAX_DIMS];
    int nd = 0;
    tdt_check(td_tensor_shape(out, got, &nd), "shape");
    assert_int_equal(nd, 4);
    for (int d = 0; d < 4; d++)
        assert_int_equal(got[d], want[d]);
    td_tensor_release(out);
    out = NULL;
    tdt_expect_error(td_float_conv_transpose2d(x4, wt, bt, one, 2, zero, 2, one, 2, one, 2, 2, &out), TD_E_INVALID,
                     "float_conv_transpose2d"); /* output_padding 1 >= stride 1 */
    tdt_expect_error(td_float_conv_transpose2d(x4, wt, bt5, two, 2, zero, 2, zero, 2, one, 2, 2, &out), TD_E_SHAPE,
                     "float_conv_transpose2d"); /* bias [5] for 6 outputs */
    tdt_expect_error(td_float_conv_transpose2d(x4, wt, bt, two, 2, zero, 2, zero, 2, one, 2, 3, &out), TD_E_SHAPE,
                     "float_conv_transpose2d"); /* 2 channels in 3 groups */
    tdt_expect_error(td_float_conv_transpose2d(x3, wt, bt, two, 2, zero, 2, zero, 2, one, 2, 1, &out), TD_E_SHAPE,
                     "float_conv_transpose2d");
    tdt_expect_error(td_float_conv_transpose2d(x4, wt, bt, two, 1, zero, 2, zero, 2, one, 2, 1, &out), TD_E_INVALID,
                     "float_conv_transpose2d");
    static const int64_t pad_big[] = { 3, 3 };
    tdt_expect_error(td_float_conv_transpose2d(x4, wt, bt, one, 2, pad_big, 2, zero, 2, one, 2, 2, &out),
                     TD_E_SHAPE, "float_conv_transpose2d"); /* (4 - 1) - 6 + 1 + 1 = -1 */
    assert_null(out);
    td_tensor *all[] = { x3, x4, wc, bc, wt, bt, bt5, xl };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
}

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &cpu, &ad, &ad_bal);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(cpu, ad, ad_bal);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_conv1d_vs_loops),
        TDT_TEST(test_pool1d_vs_loops),
        TDT_TEST(test_adaptive_avg_pools_vs_loops),
        TDT_TEST(test_interpolate_vs_loops),
        TDT_TEST(test_conv_transpose2d_vs_loops),
        TDT_TEST(test_spatial_gradchecks),
        TDT_TEST(test_spatial_errors),
    };
    return cmocka_run_group_tests_name("module_spatial", tests, setup, teardown);
}
