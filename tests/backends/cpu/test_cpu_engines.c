/* The cpu backend's matmul and conv2d engines (oneDNN, CBLAS, portable loops), each chosen in
 * turn with TD_CPU_ENGINE in this one process, against direct loops in double written here:
 * conv2d forward, backward by input and by weight (groups, stride, padding, dilation, a
 * shape wide enough for oneDNN's blocked layouts) and batched matmul with broadcast batch
 * dims (and by a transpose). Also the OpenBLAS core check: the pure function on made-up
 * cores and CPU features, and, when ctest runs this with OPENBLAS_CORETYPE=Prescott, the
 * real library: the driver string and the one stderr warning.
 *
 * Tolerance: |got - ref| <= 1e-4 * (1 + sum |terms|) per element (f32 sums of a few hundred
 * products, in any order). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpu_internal.h"
#ifdef TD_HAVE_OPENBLAS
#include <cblas.h> /* openblas_get_corename */
#endif
#include "td_devices.h"
#include "td_ops.h"
#include "tdt.h"

static td_device *dev;

static int setup(void **state)
{
    (void)state;
    return td_device_open(TD_BACKEND_CPU, 0, &dev) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("TD_CPU_ENGINE");
    td_device_release(dev);
    return 0;
}

/* The engines this build has, and the words the driver string uses for each. */
static const char *const engines[] = {
#ifdef TD_HAVE_DNNL
    "dnnl",
#endif
#ifdef TD_HAVE_CBLAS
    "blas",
#endif
    "portable",
};
#define NENGINES ((int)(sizeof engines / sizeof engines[0]))

static const char *driver_word(const char *engine)
{
    if (strcmp(engine, "dnnl") == 0)
        return "matmul: oneDNN";
    if (strcmp(engine, "blas") == 0)
        return "BLAS sgemm";
    return "matmul: portable loop";
}

/* Selects an engine and checks that the device says it runs it. */
static void use_engine(const char *engine)
{
    setenv("TD_CPU_ENGINE", engine, 1);
    td_device_info info;
    tdt_check(td_device_info_of(dev, &info), "device_info_of");
    if (strstr(info.driver, driver_word(engine)) == NULL)
        fail_msg("TD_CPU_ENGINE=%s, but the driver string is '%s'", engine, info.driver);
}

static uint64_t rng = 0x2545F4914F6CDD1Du;

static float *randoms(int64_t n)
{
    float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        p[i] = (float)((double)(rng >> 11) / 4503599627370496.0 - 1.0);
    }
    return p;
}

static void expect_near(const char *what, const char *engine, const float *got, const double *ref,
                        const double *mag, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - ref[i]) <= 1e-4 * (1.0 + mag[i])))
            fail_msg("%s, engine %s: element %lld is %.7g, the loop in double gives %.7g", what, engine, (long long)i,
                     (double)got[i], ref[i]);
}

static float *read_all(const td_tensor *t, int64_t n)
{
    int64_t got = 0;
    float *p = tdt_read(t, &got);
    assert_non_null(p);
    assert_int_equal(got, n);
    return p;
}

typedef struct conv_case {
    int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} conv_case;

static const conv_case conv_cases[] = {
    { 2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 2, 2, 1, 2 }, /* groups, strides, paddings and dilations that differ */
    { 1, 3, 5, 5, 2, 1, 1, 1, 1, 0, 0, 1, 1, 1 }, /* 1x1 */
    { 3, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1 }, /* channels that oneDNN lays out in blocks */
    { 2, 8, 6, 5, 8, 3, 3, 2, 2, 1, 0, 1, 2, 8 }, /* depthwise */
    { 1, 8, 5, 5, 4, 2, 2, 2, 2, 0, 0, 1, 1, 1 }, /* a stride that drops the last row and column */
    { 2, 8, 9, 8, 8, 3, 3, 2, 1, 2, 1, 2, 3, 1 }, /* no groups: stride, padding, dilation */
    /* under 8 channels, stride and dilation 1: the direct AVX-512 kernels under oneDNN and
     * CBLAS where the CPU has AVX-512, im2col otherwise and under the portable engine */
    { 2, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1 },
    { 3, 1, 9, 20, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   /* a first layer: 16 columns and 4 more */
    { 2, 3, 7, 17, 11, 5, 5, 1, 1, 2, 2, 1, 1, 1 },  /* 11 outputs: a block of 8 and one of 3 */
    { 2, 2, 5, 6, 5, 2, 4, 1, 1, 0, 3, 1, 1, 1 },    /* no row padding, wide column padding */
    { 1, 1, 3, 40, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1 },   /* three blocks of columns, 3 outputs */
    { 2, 7, 9, 9, 16, 7, 7, 1, 1, 3, 3, 1, 1, 1 },   /* 7 channels, 7x7 */
    { 2, 3, 8, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1 },    /* stride 2: im2col */
};

static void check_conv(const conv_case *k)
{
    const int64_t oh = (k->h + 2 * k->ph - k->dh * (k->kh - 1) - 1) / k->sh + 1;
    const int64_t ow = (k->w + 2 * k->pw - k->dw * (k->kw - 1) - 1) / k->sw + 1;
    const int64_t cg = k->c / k->groups, og = k->o / k->groups;
    const int64_t nx = k->n * k->c * k->h * k->w, nw = k->o * cg * k->kh * k->kw, ny = k->n * k->o * oh * ow;
    float *x = randoms(nx), *w = randoms(nw), *b = randoms(k->o), *g = randoms(ny);
    double *y_ref = calloc((size_t)ny, sizeof(double)), *y_mag = calloc((size_t)ny, sizeof(double));
    double *dx_ref = calloc((size_t)nx, sizeof(double)), *dx_mag = calloc((size_t)nx, sizeof(double));
    double *dw_ref = calloc((size_t)nw, sizeof(double)), *dw_mag = calloc((size_t)nw, sizeof(double));
    assert_true(y_ref && y_mag && dx_ref && dx_mag && dw_ref && dw_mag);
    /* y[s,o,i,j] = b[o] + sum over the group's channels and the window of x * w; the two
     * gradients are the same sum read the other ways */
    for (int64_t s = 0; s < k->n; s++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    const int64_t yi = ((s * k->o + o) * oh + i) * ow + j;
                    y_ref[yi] = b[o];
                    y_mag[yi] = fabs(b[o]);
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t a = 0; a < k->kh; a++)
                            for (int64_t e = 0; e < k->kw; e++) {
                                const int64_t hi = i * k->sh - k->ph + a * k->dh, wi = j * k->sw - k->pw + e * k->dw;
                                if (hi < 0 || hi >= k->h || wi < 0 || wi >= k->w)
                                    continue;
                                const int64_t c = (o / og) * cg + ci;
                                const int64_t xi = ((s * k->c + c) * k->h + hi) * k->w + wi;
                                const int64_t wj = ((o * cg + ci) * k->kh + a) * k->kw + e;
                                y_ref[yi] += (double)x[xi] * w[wj];
                                y_mag[yi] += fabs((double)x[xi] * w[wj]);
                                dx_ref[xi] += (double)g[yi] * w[wj];
                                dx_mag[xi] += fabs((double)g[yi] * w[wj]);
                                dw_ref[wj] += (double)g[yi] * x[xi];
                                dw_mag[wj] += fabs((double)g[yi] * x[xi]);
                            }
                }
    const int64_t xs[] = { k->n, k->c, k->h, k->w }, ws[] = { k->o, cg, k->kh, k->kw }, bs[] = { k->o };
    const int64_t ys[] = { k->n, k->o, oh, ow };
    const int64_t stride[] = { k->sh, k->sw }, pad[] = { k->ph, k->pw }, dil[] = { k->dh, k->dw };
    td_tensor *tx = tdt_make(dev, TD_F32, x, xs, 4), *tw = tdt_make(dev, TD_F32, w, ws, 4);
    td_tensor *tb = tdt_make(dev, TD_F32, b, bs, 1), *tg = tdt_make(dev, TD_F32, g, ys, 4);
    char what[160];
    snprintf(what, sizeof what, "conv2d x [%lld,%lld,%lld,%lld] w [%lld,%lld,%lld,%lld] groups %lld",
             (long long)k->n, (long long)k->c, (long long)k->h, (long long)k->w, (long long)k->o, (long long)cg,
             (long long)k->kh, (long long)k->kw, (long long)k->groups);
    for (int e = 0; e < NENGINES; e++) {
        use_engine(engines[e]);
        td_tensor *y = NULL, *dx = NULL, *dw = NULL;
        tdt_check(td_float_conv2d(tx, tw, tb, stride, 2, pad, 2, dil, 2, k->groups, &y), "conv2d");
        tdt_check(td_float_conv2d_backward_input(tg, tw, tx, stride, 2, pad, 2, dil, 2, k->groups, &dx),
                  "conv2d_backward_input");
        tdt_check(td_float_conv2d_backward_weight(tg, tx, tw, stride, 2, pad, 2, dil, 2, k->groups, &dw),
                  "conv2d_backward_weight");
        /* twice: the second call runs the cached primitive */
        for (int rep = 0; rep < 2; rep++) {
            float *py = read_all(y, ny), *pdx = read_all(dx, nx), *pdw = read_all(dw, nw);
            char w2[200];
            snprintf(w2, sizeof w2, "%s forward", what);
            expect_near(w2, engines[e], py, y_ref, y_mag, ny);
            snprintf(w2, sizeof w2, "%s backward by input", what);
            expect_near(w2, engines[e], pdx, dx_ref, dx_mag, nx);
            snprintf(w2, sizeof w2, "%s backward by weight", what);
            expect_near(w2, engines[e], pdw, dw_ref, dw_mag, nw);
            free(py);
            free(pdx);
            free(pdw);
            if (rep == 0) {
                td_tensor_release(y);
                td_tensor_release(dx);
                td_tensor_release(dw);
                tdt_check(td_float_conv2d(tx, tw, tb, stride, 2, pad, 2, dil, 2, k->groups, &y), "conv2d");
                tdt_check(td_float_conv2d_backward_input(tg, tw, tx, stride, 2, pad, 2, dil, 2, k->groups, &dx),
                          "conv2d_backward_input");
                tdt_check(td_float_conv2d_backward_weight(tg, tx, tw, stride, 2, pad, 2, dil, 2, k->groups, &dw),
                          "conv2d_backward_weight");
            }
        }
        td_tensor_release(y);
        td_tensor_release(dx);
        td_tensor_release(dw);
    }
    unsetenv("TD_CPU_ENGINE");
    td_tensor_release(tx);
    td_tensor_release(tw);
    td_tensor_release(tb);
    td_tensor_release(tg);
    free(x), free(w), free(b), free(g);
    free(y_ref), free(y_mag), free(dx_ref), free(dx_mag), free(dw_ref), free(dw_mag);
}

static void test_conv2d_engines_agree_with_loops(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++)
        check_conv(&conv_cases[i]);
}

/* Zero padding times an infinity is NaN (IEEE 0 * inf), as the im2col path and the Vulkan
 * backend compute it, on every engine, with 8 input channels (oneDNN's path) and with 1 (the
 * direct kernels'): x [1, c, 3, 3] of ones, padding 1.
 * Forward: w [8, c, 3, 3] of zeros but w[0, 0, 0, 0] = inf. Output channel 0 at (i, j) meets
 * the inf tap at input (i - 1, j - 1): the padding (NaN) in row 0 and column 0, a one (inf)
 * elsewhere; the other channels 0.
 * By weight: the grad [1, 8, 3, 3] of zeros but grad[0, 0, 1, 0] = inf (in row 1: a vector
 * kernel reading past a row's 3 columns meets it there). dw[0, ci, a, b] meets it with input
 * (a, b - 1): NaN for b = 0, inf elsewhere; the other outputs 0. */
static bool nan_or_inf_as_padded(const float *p, int a, int b)
{
    const float v = p[a * 3 + b];
    return a == 0 || b == 0 ? isnan(v) : isinf(v) && v > 0;
}

static bool nan_or_inf_by_weight(const float *p, int a, int b)
{
    const float v = p[a * 3 + b];
    return b == 0 ? isnan(v) : isinf(v) && v > 0;
}

static void test_conv2d_padding_times_inf_is_nan(void **state)
{
    (void)state;
    static const int64_t channels[] = { 8, 1 };
    for (int ci = 0; ci < 2; ci++) {
        const int64_t c = channels[ci], nw = 8 * c * 9;
        float x[72], w[576] = { 0 }, b[8] = { 0 }, g[72] = { 0 };
        for (int i = 0; i < 72; i++)
            x[i] = 1.0f;
        w[0] = INFINITY;
        g[3] = INFINITY;
        const int64_t xs[] = { 1, c, 3, 3 }, ws[] = { 8, c, 3, 3 }, bs[] = { 8 }, ys[] = { 1, 8, 3, 3 };
        const int64_t stride[] = { 1, 1 }, pad[] = { 1, 1 }, dil[] = { 1, 1 };
        td_tensor *tx = tdt_make(dev, TD_F32, x, xs, 4), *tw = tdt_make(dev, TD_F32, w, ws, 4);
        td_tensor *tb = tdt_make(dev, TD_F32, b, bs, 1), *tg = tdt_make(dev, TD_F32, g, ys, 4);
        for (int e = 0; e < NENGINES; e++) {
            use_engine(engines[e]);
            td_tensor *y = NULL, *dw = NULL;
            tdt_check(td_float_conv2d(tx, tw, tb, stride, 2, pad, 2, dil, 2, 1, &y), "conv2d");
            tdt_check(td_float_conv2d_backward_weight(tg, tx, tw, stride, 2, pad, 2, dil, 2, 1, &dw),
                      "conv2d_backward_weight");
            float *py = read_all(y, 72), *pdw = read_all(dw, nw);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    if (!nan_or_inf_as_padded(py, i, j))
                        fail_msg("engine %s, %lld channels: y[0, 0, %d, %d] = %g, want %s", engines[e],
                                 (long long)c, i, j, (double)py[i * 3 + j], i == 0 || j == 0 ? "NaN" : "inf");
            for (int k = 9; k < 72; k++)
                if (py[k] != 0.0f)
                    fail_msg("engine %s, %lld channels: y element %d = %g, want 0", engines[e], (long long)c, k,
                             (double)py[k]);
            for (int64_t k = 0; k < nw; k++) {
                const bool first = k < c * 9; /* output channel 0 */
                if (first ? !nan_or_inf_by_weight(pdw + k / 9 * 9, (int)(k % 9 / 3), (int)(k % 3))
                          : pdw[k] != 0.0f)
                    fail_msg("engine %s, %lld channels: dw element %lld = %g, want %s", engines[e], (long long)c,
                             (long long)k, (double)pdw[k], !first ? "0" : k % 3 == 0 ? "NaN" : "inf");
            }
            free(py);
            free(pdw);
            td_tensor_release(y);
            td_tensor_release(dw);
        }
        unsetenv("TD_CPU_ENGINE");
        td_tensor_release(tx);
        td_tensor_release(tw);
        td_tensor_release(tb);
        td_tensor_release(tg);
    }
}

/* a [2, 1, m, k] (or its transpose [.., k, m]) @ b [3, k, n] (or [3, n, k]) -> [2, 3, m, n] */
static void check_matmul(int64_t m, int64_t k, int64_t n, bool ta, bool tb)
{
    const int64_t na = 2 * m * k, nb = 3 * k * n, nc = 6 * m * n;
    float *a = randoms(na), *b = randoms(nb);
    double *ref = calloc((size_t)nc, sizeof(double)), *mag = calloc((size_t)nc, sizeof(double));
    assert_true(ref && mag);
    for (int64_t p = 0; p < 2; p++)
        for (int64_t q = 0; q < 3; q++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    const int64_t ci = ((p * 3 + q) * m + i) * n + j;
                    for (int64_t r = 0; r < k; r++) {
                        const double av = a[p * m * k + (ta ? r * m + i : i * k + r)];
                        const double bv = b[q * k * n + (tb ? j * k + r : r * n + j)];
                        ref[ci] += av * bv;
                        mag[ci] += fabs(av * bv);
                    }
                }
    const int64_t as[] = { 2, 1, ta ? k : m, ta ? m : k }, bs[] = { 3, tb ? n : k, tb ? k : n };
    td_tensor *tta = tdt_make(dev, TD_F32, a, as, 4), *ttb = tdt_make(dev, TD_F32, b, bs, 3);
    char what[96];
    snprintf(what, sizeof what, "matmul%s [2,1,%lld,%lld] @ [3,%lld,%lld]", ta ? "_tn" : tb ? "_nt" : "",
             (long long)m, (long long)k, (long long)k, (long long)n);
    for (int e = 0; e < NENGINES; e++) {
        use_engine(engines[e]);
        td_tensor *c = NULL;
        if (ta)
            tdt_check(td_float_matmul_tn(tta, ttb, &c), "matmul_tn");
        else if (tb)
            tdt_check(td_float_matmul_nt(tta, ttb, &c), "matmul_nt");
        else
            tdt_check(td_float_matmul(tta, ttb, &c), "matmul");
        float *pc = read_all(c, nc);
        expect_near(what, engines[e], pc, ref, mag, nc);
        free(pc);
        td_tensor_release(c);
    }
    unsetenv("TD_CPU_ENGINE");
    td_tensor_release(tta);
    td_tensor_release(ttb);
    free(a), free(b), free(ref), free(mag);
}

static void test_batched_matmul_engines_agree_with_loops(void **state)
{
    (void)state;
    check_matmul(5, 7, 3, false, false);
    check_matmul(33, 70, 65, false, false);
    check_matmul(33, 70, 65, false, true);
    check_matmul(33, 70, 65, true, false);
    check_matmul(2, 2, 2, false, false); /* below the BLAS threshold: the portable loop in every engine */
}

static void test_blas_core_check_on_made_up_cpus(void **state)
{
    (void)state;
    /* an AVX-512F CPU: anything short of an AVX-512 core wants SkylakeX */
    assert_string_equal(td_cpu_blas_core_fix("Prescott", true, true), "SkylakeX");
    assert_string_equal(td_cpu_blas_core_fix("prescott", true, true), "SkylakeX"); /* any case */
    assert_string_equal(td_cpu_blas_core_fix("Nehalem", true, true), "SkylakeX");
    assert_string_equal(td_cpu_blas_core_fix("Sandybridge", true, true), "SkylakeX");
    assert_string_equal(td_cpu_blas_core_fix("Haswell", true, true), "SkylakeX");
    assert_string_equal(td_cpu_blas_core_fix("Zen", true, true), "SkylakeX");
    assert_null(td_cpu_blas_core_fix("SkylakeX", true, true));
    assert_null(td_cpu_blas_core_fix("Cooperlake", true, true));
    assert_null(td_cpu_blas_core_fix("SapphireRapids", true, true));
    /* AVX2 without AVX-512: an AVX2 core is right, older ones want Haswell */
    assert_string_equal(td_cpu_blas_core_fix("Prescott", true, false), "Haswell");
    assert_string_equal(td_cpu_blas_core_fix("Sandybridge", true, false), "Haswell");
    assert_null(td_cpu_blas_core_fix("Haswell", true, false));
    assert_null(td_cpu_blas_core_fix("Zen", true, false));
    /* an old CPU: nothing to say */
    assert_null(td_cpu_blas_core_fix("Prescott", false, false));
    assert_null(td_cpu_blas_core_fix("Nehalem", false, false));
    /* cores it does not know, and none */
    assert_null(td_cpu_blas_core_fix("Zen7", true, true));
    assert_null(td_cpu_blas_core_fix("", true, true));
    assert_null(td_cpu_blas_core_fix(NULL, true, true));
    assert_null(td_cpu_blas_core_fix("a core name far longer than any OpenBLAS has ever had", true, true));
}

/* Under OPENBLAS_CORETYPE=Prescott (the ctest entry test_cpu_engines_openblas_prescott) on a
 * CPU with AVX2 or AVX-512F: the driver string says so with the fix, and the first BLAS
 * matmul says it on stderr once. Without that environment (the plain entry) it checks that
 * nothing is said on this machine's own core. */
static void test_openblas_old_core_reported(void **state)
{
    (void)state;
#if defined(TD_HAVE_OPENBLAS) && (defined(__x86_64__) || defined(__i386__))
    const char *forced = getenv("OPENBLAS_CORETYPE");
    const bool prescott = forced != NULL && strcmp(forced, "Prescott") == 0;
    __builtin_cpu_init();
    const bool avx512f = __builtin_cpu_supports("avx512f") != 0, avx2 = __builtin_cpu_supports("avx2") != 0;
    /* Forced onto Prescott, the fix follows from the CPU's features alone. Otherwise it is the
     * machine's own: OpenBLAS 0.3.21 picks its Haswell kernels on some AVX-512 EPYCs, and then
     * the library must say so too (the pure check's cases are test_blas_core_check_on_made_up_cpus). */
    const char *fix = prescott ? (avx512f ? "SkylakeX" : avx2 ? "Haswell" : NULL)
                               : td_cpu_blas_core_fix(openblas_get_corename(), avx2, avx512f);
    char want_text[64] = "";
    if (fix != NULL)
        snprintf(want_text, sizeof want_text, "OPENBLAS_CORETYPE=%s", fix);
    const char *want = fix != NULL ? want_text : NULL;
    if (!prescott)
        print_message("OpenBLAS core %s on this CPU: %s\n", openblas_get_corename(),
                      want != NULL ? want : "nothing to report");
    if (prescott && want == NULL)
        print_message("this CPU has neither AVX2 nor AVX-512F: Prescott is not older than it, nothing to report\n");
    setenv("TD_CPU_ENGINE", "blas", 1);
    td_device_info info;
    tdt_check(td_device_info_of(dev, &info), "device_info_of");
    if (want != NULL && strstr(info.driver, want) == NULL)
        fail_msg("OPENBLAS_CORETYPE=Prescott, but the driver string does not say '%s': '%s'", want, info.driver);
    if (want == NULL && strstr(info.driver, "OPENBLAS_CORETYPE=") != NULL)
        fail_msg("the driver string reports an old core where there is none: '%s'", info.driver);
    /* stderr into a file across two BLAS matmuls: the warning comes once */
    char path[] = "/tmp/td_engines_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    const int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fd, 2) >= 0);
    const int64_t s[] = { 64, 64 };
    td_tensor *a = tdt_filled(dev, TD_F32, s, 2), *c1 = NULL, *c2 = NULL;
    const td_status st1 = td_float_matmul(a, a, &c1), st2 = td_float_matmul(a, a, &c2);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    tdt_check(st1, "matmul");
    tdt_check(st2, "matmul");
    td_tensor_release(a);
    td_tensor_release(c1);
    td_tensor_release(c2);
    char text[4096] = "";
    const ssize_t got = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    assert_true(got >= 0);
    text[got] = '\0';
    int times = 0;
    for (const char *p = text; (p = strstr(p, "OPENBLAS_CORETYPE=")) != NULL; p++)
        times++;
    if (want != NULL && (times != 1 || strstr(text, want) == NULL))
        fail_msg("stderr should say '%s' once, it said: '%s'", want, text);
    if (want == NULL && times != 0)
        fail_msg("stderr warns of an old core where there is none: '%s'", text);
    unsetenv("TD_CPU_ENGINE");
#else
    skip(); /* counted as skipped by cmocka: no OpenBLAS in this build */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: the warning comes once per process, at the first BLAS call */
        cmocka_unit_test(test_openblas_old_core_reported),
        cmocka_unit_test(test_blas_core_check_on_made_up_cpus),
        cmocka_unit_test(test_conv2d_engines_agree_with_loops),
        cmocka_unit_test(test_conv2d_padding_times_inf_is_nan),
        cmocka_unit_test(test_batched_matmul_engines_agree_with_loops),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
