/* Test helpers: making tensors on any backend, reading them back, comparing. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tdt.h"

int tdt_open(td_backend backend, td_device **dev, td_device **ad_dev)
{
    td_status st = td_device_open(backend, 0, dev);
    if (st != TD_OK) {
        fprintf(stderr, "cannot open %s device 0: %s\n", td_backend_name(backend), td_last_error());
        return -1;
    }
    st = td_device_autodiff(*dev, TD_CHECKPOINT_NONE, ad_dev);
    if (st != TD_OK) {
        fprintf(stderr, "cannot open autodiff(%s): %s\n", td_backend_name(backend), td_last_error());
        td_device_release(*dev);
        return -1;
    }
    return 0;
}

int tdt_open_devices(td_backend backend, td_device **dev, td_device **ad, td_device **ad_bal)
{
    if (td_testing_live_objects() != 0) {
        fprintf(stderr, "%ld objects alive before the tests\n", td_testing_live_objects());
        return -1;
    }
    if (tdt_open(backend, dev, ad) != 0)
        return -1;
    if (ad_bal != NULL && td_device_autodiff(*dev, TD_CHECKPOINT_BALANCED, ad_bal) != TD_OK) {
        fprintf(stderr, "cannot open autodiff(%s), BALANCED: %s\n", td_backend_name(backend), td_last_error());
        return -1;
    }
    return 0;
}

int tdt_close_devices(td_device *dev, td_device *ad, td_device *ad_bal)
{
    td_testing_fail_allocations_after(-1);
    td_device_release(ad_bal);
    td_device_release(ad);
    td_device_release(dev);
    return td_testing_live_objects() == 0 ? 0 : -1;
}

static long live_baseline;

/* The running test's owned tensors, in the order it made them (tdt_own). */
#define OWNED_MAX 256
static td_tensor *owned[OWNED_MAX];
static int n_owned;

td_tensor *tdt_own(td_tensor *t)
{
    if (t == NULL)
        return NULL;
    if (n_owned == OWNED_MAX) {
        td_tensor_release(t);
        fail_msg("tdt_own: more than %d tensors in one test", OWNED_MAX);
    }
    owned[n_owned++] = t;
    return t;
}

void tdt_release(td_tensor *t)
{
    for (int i = n_owned - 1; i >= 0; i--)
        if (owned[i] == t) {
            memmove(&owned[i], &owned[i + 1], sizeof owned[0] * (size_t)(n_owned - 1 - i));
            n_owned--;
            break;
        }
    td_tensor_release(t);
}

/* Releases what the test still owns, last made first: what a failed check left. */
static void release_owned(void)
{
    while (n_owned > 0)
        td_tensor_release(owned[--n_owned]);
}

int tdt_remember_live(void **state)
{
    (void)state;
    n_owned = 0;
    live_baseline = td_testing_live_objects();
    return 0;
}

long tdt_live_baseline(void)
{
    return live_baseline;
}

int tdt_check_no_leak(void **state)
{
    (void)state;
    release_owned();
    long live = td_testing_live_objects();
    if (live != live_baseline) {
        print_error("leak: %ld objects alive after the test, %ld before it\n", live, live_baseline);
        return -1;
    }
    return 0;
}

static td_status from_data(td_device *d, td_dtype dtype, const void *data, const int64_t *shape, int ndim,
                           td_tensor **out)
{
    switch (dtype) {
    case TD_F32: return td_float_from_data(d, data, shape, ndim, out);
    case TD_I32: return td_int_from_data(d, data, shape, ndim, out);
    case TD_BOOL: return td_bool_from_data(d, data, shape, ndim, out);
    default: break;
    }
    return TD_E_INVALID;
}

static td_status to_device(const td_tensor *t, td_device *d, td_tensor **out)
{
    td_dtype dtype;
    td_tensor_dtype(t, &dtype);
    switch (dtype) {
    case TD_F32: return td_float_to_device(t, d, out);
    case TD_I32: return td_int_to_device(t, d, out);
    case TD_BOOL: return td_bool_to_device(t, d, out);
    default: break;
    }
    return TD_E_INVALID;
}

td_tensor *tdt_make(td_device *d, td_dtype dtype, const void *data, const int64_t *shape, int ndim)
{
    td_tensor *t = NULL;
    td_status st = from_data(d, dtype, data, shape, ndim, &t);
    if (st == TD_E_UNSUPPORTED) {
        td_device *cpu = NULL;
        td_tensor *host = NULL;
        st = td_device_open(TD_BACKEND_CPU, 0, &cpu);
        if (st == TD_OK)
            st = from_data(cpu, dtype, data, shape, ndim, &host);
        if (st == TD_OK)
            st = to_device(host, d, &t);
        td_tensor_release(host);
        td_device_release(cpu);
    }
    if (st != TD_OK)
        print_error("tdt_make: %s: %s\n", td_status_name(st), td_last_error());
    return t;
}

float *tdt_host_randoms(int64_t n, unsigned *state)
{
    float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        v[i] = (float)(*state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
    }
    return v;
}

td_tensor *tdt_make_f32(td_device *d, const float *v, const int64_t *shape, int ndim)
{
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(d, v, shape, ndim, &t), "from_data");
    return t;
}

int64_t tdt_conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

td_tensor *tdt_filled(td_device *d, td_dtype dtype, const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    void *buf = calloc((size_t)n, 4);
    if (buf == NULL)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        if (dtype == TD_F32)
            ((float *)buf)[i] = 1.0f;
        else if (dtype == TD_I32)
            ((int32_t *)buf)[i] = 1;
        else
            ((bool *)buf)[i] = true;
    }
    td_tensor *t = tdt_make(d, dtype, buf, shape, ndim);
    free(buf);
    return t;
}

void *tdt_read(const td_tensor *t, int64_t *numel)
{
    td_dtype dtype;
    if (td_tensor_dtype(t, &dtype) != TD_OK || td_tensor_numel(t, numel) != TD_OK)
        return NULL;
    void *buf = calloc((size_t)*numel, 4);
    if (buf == NULL)
        return NULL;
    td_status st = TD_E_INVALID;
    switch (dtype) {
    case TD_F32: st = td_float_into_data(t, buf, *numel); break;
    case TD_I32: st = td_int_into_data(t, buf, *numel); break;
    case TD_BOOL: st = td_bool_into_data(t, buf, *numel); break;
    default: break;
    }
    if (st == TD_E_UNSUPPORTED) {
        td_device *cpu = NULL;
        td_tensor *host = NULL;
        st = td_device_open(TD_BACKEND_CPU, 0, &cpu);
        if (st == TD_OK)
            st = to_device(t, cpu, &host);
        if (st == TD_OK) {
            void *r = tdt_read(host, numel);
            td_tensor_release(host);
            td_device_release(cpu);
            free(buf);
            return r;
        }
        td_device_release(cpu);
    }
    if (st != TD_OK) {
        print_error("tdt_read: %s: %s\n", td_status_name(st), td_last_error());
        free(buf);
        return NULL;
    }
    return buf;
}

void tdt_check_impl(td_status st, const char *what, const char *file, int line)
{
    if (st != TD_OK) {
        print_error("%s: %s: %s\n", what, td_status_name(st), td_last_error());
        _fail(file, line);
    }
}

void tdt_expect_error_impl(td_status st, td_status want, const char *op, const char *file, int line)
{
    if (st != want) {
        print_error("expected %s, got %s (%s)\n", td_status_name(want), td_status_name(st),
                    st == TD_OK ? "no error" : td_last_error());
        _fail(file, line);
    }
    if (strstr(td_last_error(), op) == NULL && want != TD_E_AUTODIFF_CONTEXT) {
        print_error("the message does not name %s: '%s'\n", op, td_last_error());
        _fail(file, line);
    }
}

bool tdt_close(float got, float want, float tol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabsf(got - want) <= tol * (1.0f + fabsf(want));
}

/* Element i of host data of dtype, as a double. */
static double host_value(td_dtype dtype, const void *v, int64_t i)
{
    if (dtype == TD_F32)
        return ((const float *)v)[i];
    if (dtype == TD_I32)
        return ((const int32_t *)v)[i];
    return ((const bool *)v)[i];
}

/* The first element where got differs from want (floats within tol, as tdt_close), or -1. */
static int64_t first_mismatch(td_dtype dtype, const void *got, const void *want, int64_t n, float tol)
{
    for (int64_t i = 0; i < n; i++) {
        double g = host_value(dtype, got, i), w = host_value(dtype, want, i);
        if (dtype == TD_F32 ? !tdt_close((float)g, (float)w, tol) : g != w)
            return i;
    }
    return -1;
}

static void report_mismatch(td_dtype dtype, const void *got, const void *want, int64_t i, float tol)
{
    print_error("element %lld: got %.9g, want %.9g (tolerance %g)\n", (long long)i, host_value(dtype, got, i),
                host_value(dtype, want, i), (double)tol);
}

void tdt_expect_host_impl(td_dtype dtype, const void *got, const void *want, int64_t n, float tol, const char *file,
                          int line)
{
    int64_t bad = first_mismatch(dtype, got, want, n, tol);
    if (bad >= 0) {
        report_mismatch(dtype, got, want, bad, tol);
        _fail(file, line);
    }
}

void tdt_expect_impl(const td_tensor *t, td_dtype dtype, const int64_t *shape, int ndim, const void *want, int64_t n,
                     float tol, const char *file, int line)
{
    if (t == NULL) {
        print_error("no tensor\n");
        _fail(file, line);
    }
    td_dtype got_dtype;
    int64_t dims[TD_MAX_DIMS];
    int got_ndim;
    td_tensor_dtype(t, &got_dtype);
    td_tensor_shape(t, dims, &got_ndim);
    if (got_dtype != dtype) {
        print_error("dtype %d, want %d\n", (int)got_dtype, (int)dtype);
        _fail(file, line);
    }
    bool same = got_ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = dims[i] == shape[i];
    if (!same) {
        print_error("shape mismatch: got %d dims [%lld, %lld, ...], want %d dims\n", got_ndim,
                    got_ndim > 0 ? (long long)dims[0] : 0LL, got_ndim > 1 ? (long long)dims[1] : 0LL, ndim);
        _fail(file, line);
    }
    int64_t numel = 0;
    void *got = tdt_read(t, &numel);
    if (got == NULL)
        _fail(file, line);
    if (numel != n) {
        free(got);
        print_error("%lld elements, want %lld\n", (long long)numel, (long long)n);
        _fail(file, line);
    }
    /* The host copy is freed before a mismatch fails the test (a failure jumps out). */
    int64_t bad = first_mismatch(dtype, got, want, n, tol);
    if (bad >= 0) {
        report_mismatch(dtype, got, want, bad, tol);
        free(got);
        _fail(file, line);
    }
    free(got);
}

static float next_uniform(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / 16777216.0f;
}

td_tensor *tdt_random(td_device *d, td_dtype dtype, const int64_t *shape, int ndim, unsigned seed)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    void *buf = calloc((size_t)n, 4);
    if (buf == NULL)
        return NULL;
    unsigned state = seed;
    for (int64_t i = 0; i < n; i++) {
        float u = next_uniform(&state);
        if (dtype == TD_F32) {
            ((float *)buf)[i] = 4.0f * u - 2.0f;
        } else if (dtype == TD_I32) {
            int32_t v = 1 + (int32_t)(u * 9.0f);
            ((int32_t *)buf)[i] = next_uniform(&state) < 0.5f ? -v : v;
        } else {
            ((bool *)buf)[i] = u < 0.5f;
        }
    }
    td_tensor *t = tdt_make(d, dtype, buf, shape, ndim);
    free(buf);
    return t;
}

void tdt_expect_same_impl(const td_tensor *a, const td_tensor *b, float tol, const char *file, int line)
{
    if (a == NULL || b == NULL) {
        print_error("no tensor to compare\n");
        _fail(file, line);
    }
    td_dtype dt;
    int64_t dims[TD_MAX_DIMS];
    int nd;
    td_tensor_dtype(b, &dt);
    td_tensor_shape(b, dims, &nd);
    int64_t n = 0;
    void *want = tdt_read(b, &n);
    if (want == NULL)
        _fail(file, line);
    tdt_expect_impl(a, dt, dims, nd, want, n, tol, file, line);
    free(want);
}

/* ---- gradient checks ---- */

static void fill_input(float *v, int64_t n, int positive, unsigned *state)
{
    for (int64_t i = 0; i < n; i++) {
        float u = next_uniform(state);
        if (positive == TDT_ABOVE_ONE) {
            v[i] = 1.5f + u;
        } else if (positive) {
            v[i] = 0.5f + u;
        } else {
            float mag = 0.2f + 0.8f * next_uniform(state);
            v[i] = u < 0.5f ? -mag : mag;
        }
    }
}

static int64_t numel_of(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

/* L = sum(fwd(ins) * w) on device d; with `track`, the inputs take gradients and grads
 * (one per input, host arrays) receive them. */
static td_status loss_on(td_device *d, tdt_fwd_fn fwd, const tdt_input *ins, float *const *data, int n,
                         const float *w, float *loss, bool track, float *const *grads)
{
    td_tensor *t[16] = { NULL }, *out = NULL, *wt = NULL, *prod = NULL, *sum = NULL;
    td_grads *g = NULL;
    td_status st = TD_OK;
    for (int i = 0; i < n && st == TD_OK; i++) {
        st = td_float_from_data(d, data[i], ins[i].shape, ins[i].ndim, &t[i]);
        if (st == TD_OK && track)
            st = td_require_grad(t[i]);
    }
    if (st == TD_OK)
        st = fwd(d, t, &out);
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    if (st == TD_OK)
        st = td_tensor_shape(out, dims, &nd);
    if (st == TD_OK)
        st = td_float_from_data(d, w, dims, nd, &wt);
    if (st == TD_OK)
        st = td_float_mul(out, wt, &prod);
    if (st == TD_OK)
        st = td_float_sum(prod, &sum);
    if (st == TD_OK)
        st = td_float_into_data(sum, loss, 1);
    if (st == TD_OK && track)
        st = td_backward(sum, &g);
    for (int i = 0; track && i < n && st == TD_OK; i++) {
        td_tensor *gi = NULL;
        st = td_grads_get(g, t[i], &gi);
        int64_t gn = numel_of(ins[i].shape, ins[i].ndim);
        if (st == TD_OK && gi == NULL && ins[i].grad) {
            print_error("gradcheck: input %d got no gradient\n", i);
            st = TD_E_INTERNAL;
        } else if (st == TD_OK && gi == NULL) {
            if (gn > 0)
                memset(grads[i], 0, sizeof(float) * (size_t)gn);
        } else if (st == TD_OK) {
            /* the gradient has the input's shape (an empty one too) */
            int64_t dims[TD_MAX_DIMS];
            int nd = -1;
            td_tensor_shape(gi, dims, &nd);
            bool same = nd == ins[i].ndim;
            for (int d = 0; same && d < nd; d++)
                same = dims[d] == ins[i].shape[d];
            if (!same) {
                print_error("gradcheck: the gradient of input %d has %d dims [%lld, ...], not the input's shape\n", i,
                            nd, nd > 0 ? (long long)dims[0] : 0LL);
                st = TD_E_INTERNAL;
            } else {
                st = td_float_into_data(gi, grads[i], gn);
            }
        }
        td_tensor_release(gi);
    }
    td_grads_release(g);
    for (int i = 0; i < n; i++)
        td_tensor_release(t[i]);
    td_tensor_release(out);
    td_tensor_release(wt);
    td_tensor_release(prod);
    td_tensor_release(sum);
    return st;
}

void tdt_gradcheck_impl(td_device *inner, td_device *ad_none, td_device *ad_bal, tdt_fwd_fn fwd,
                        const tdt_input *ins, int n, unsigned seed, const char *file, int line)
{
    float *data[16], *ana[16], *bal[16];
    unsigned state = seed;
    for (int i = 0; i < n; i++) {
        int64_t k = numel_of(ins[i].shape, ins[i].ndim);
        /* an empty input's host data is NULL: from_data must take it */
        data[i] = k > 0 ? malloc(sizeof(float) * (size_t)k) : NULL;
        ana[i] = k > 0 ? malloc(sizeof(float) * (size_t)k) : NULL;
        bal[i] = k > 0 ? malloc(sizeof(float) * (size_t)k) : NULL;
        fill_input(data[i], k, ins[i].positive, &state);
    }
    /* The weights need the output's size: run once on the inner device. */
    td_tensor *t[16] = { NULL }, *out = NULL;
    td_status st = TD_OK;
    for (int i = 0; i < n && st == TD_OK; i++)
        st = td_float_from_data(inner, data[i], ins[i].shape, ins[i].ndim, &t[i]);
    if (st == TD_OK)
        st = fwd(inner, t, &out);
    int64_t on = 1;
    if (st == TD_OK)
        st = td_tensor_numel(out, &on);
    for (int i = 0; i < n; i++)
        td_tensor_release(t[i]);
    td_tensor_release(out);
    float *w = on > 0 ? malloc(sizeof(float) * (size_t)on) : NULL;
    for (int64_t j = 0; j < on; j++)
        w[j] = 2.0f * next_uniform(&state) - 1.0f;
    float loss;
    if (st == TD_OK)
        st = loss_on(ad_none, fwd, ins, data, n, w, &loss, true, ana);
    if (st == TD_OK)
        st = loss_on(ad_bal, fwd, ins, data, n, w, &loss, true, bal);
    char msg[256] = "";
    const float h = 1e-2f;
    /* The loss at the inputs, for one-sided differences where the central one disagrees. */
    float l0 = 0;
    if (st == TD_OK)
        st = loss_on(inner, fwd, ins, data, n, w, &l0, false, NULL);
    int64_t checked = 0, kinks = 0;
    for (int i = 0; i < n && st == TD_OK && !msg[0]; i++) {
        int64_t k = numel_of(ins[i].shape, ins[i].ndim);
        for (int64_t j = 0; j < k && st == TD_OK && !msg[0]; j++) {
            float keep = data[i][j], lp = 0, lm = 0;
            data[i][j] = keep + h;
            st = loss_on(inner, fwd, ins, data, n, w, &lp, false, NULL);
            data[i][j] = keep - h;
            if (st == TD_OK)
                st = loss_on(inner, fwd, ins, data, n, w, &lm, false, NULL);
            data[i][j] = keep;
            float num = (lp - lm) / (2.0f * h);
            checked++;
            const float a = ana[i][j], tol = 1e-2f + 1e-2f * fabsf(a);
            if (fabsf(num - a) > tol) {
                /* Within h of a kink (relu at 0, a tie in max or sort, a clamp bound) the
                 * central difference mixes two slopes; the gradient is then right when it
                 * is the slope of one side. Such elements are counted, and a check where
                 * most elements sit at kinks fails rather than pass on little evidence. */
                const float right = (lp - l0) / h, left = (l0 - lm) / h;
                const bool jump = fabsf(right - left) > 2.0f * tol; /* a smooth loss bends by ~h f'' only */
                if (jump && (fabsf(right - a) <= 1.5f * tol || fabsf(left - a) <= 1.5f * tol))
                    kinks++;
                else
                    snprintf(msg, sizeof msg, "input %d element %lld: analytic %.6g, numeric %.6g (one-sided %.6g, %.6g)",
                             i, (long long)j, (double)a, (double)num, (double)left, (double)right);
            }
            else if (fabsf(bal[i][j] - ana[i][j]) > 1e-7f + 1e-6f * fabsf(ana[i][j]))
                snprintf(msg, sizeof msg, "input %d element %lld: NONE %.9g, BALANCED %.9g", i, (long long)j,
                         (double)ana[i][j], (double)bal[i][j]);
        }
    }
    if (st == TD_OK && !msg[0] && kinks * 2 > checked)
        snprintf(msg, sizeof msg, "%lld of %lld elements sit within h of a kink: too few smooth points to check",
                 (long long)kinks, (long long)checked);
    for (int i = 0; i < n; i++) {
        free(data[i]);
        free(ana[i]);
        free(bal[i]);
    }
    free(w);
    if (st != TD_OK) {
        print_error("gradcheck: %s: %s\n", td_status_name(st), td_last_error());
        _fail(file, line);
    }
    if (msg[0]) {
        print_error("gradcheck: %s\n", msg);
        _fail(file, line);
    }
}

/* ---- many-shape comparisons with the CPU ---- */

/* A 32-bit generator per input: splitmix32-style mixing of the seed, then an LCG. */
static unsigned mix(unsigned x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static void fill_values(td_dtype dt, int domain, int fill, void *buf, int64_t n, unsigned seed)
{
    /* Edge values: the first 5 are nonzero (subnormals included: lavapipe once read them
     * as normal numbers in log2), the first 7 hold no -1; positive-domain ops get all 8,
     * so pow sees -inf and -1 bases with non-integer and infinite exponents. */
    static const float fedge[] = { NAN, INFINITY, -INFINITY, 1e-39f, -1e-39f, -0.0f, 0.0f, -1.0f };
    static const float fties[] = { -1.0f, 0.0f, 0.5f, 1.0f, 2.0f };
    static const float fties_pos[] = { 0.5f, 1.0f, 2.0f, 4.0f };
    static const float fties_nz[] = { -1.0f, 0.5f, 1.0f, 2.0f };
    static const int32_t iedge[] = { INT32_MIN, INT32_MAX, -1, 1, 0 };
    static const int32_t ities[] = { -1, 1, 0 };
    unsigned state = mix(seed);
    const bool pos = domain == TDT_DOMAIN_POSITIVE, nonzero = domain == TDT_DOMAIN_NONZERO;
    for (int64_t i = 0; i < n; i++) {
        float u = next_uniform(&state), v = next_uniform(&state);
        bool edge = fill == TDT_FILL_EDGES && next_uniform(&state) < 1.0f / 16.0f;
        if (dt == TD_F32) {
            float x;
            if (edge)
                x = fedge[(int)(v * (pos ? 8.0f : nonzero ? 5.0f : 7.0f))];
            else if (fill == TDT_FILL_ZEROS && !pos && !nonzero)
                x = v < 0.5f ? -0.0f : 0.0f;
            else if (fill == TDT_FILL_TIES && pos)
                x = fties_pos[(int)(v * 4.0f)];
            else if (fill == TDT_FILL_TIES && nonzero)
                x = fties_nz[(int)(v * 4.0f)];
            else if (fill == TDT_FILL_TIES) /* its zeros -0 or +0 alike (u is free here) */
                x = fties[(int)(v * 5.0f)] == 0.0f && u < 0.5f ? -0.0f : fties[(int)(v * 5.0f)];
            else if (pos)
                x = 0.125f + 3.875f * u;
            else
                x = (0.125f + 1.875f * u) * (v < 0.5f ? -1.0f : 1.0f);
            ((float *)buf)[i] = x;
        } else if (dt == TD_I32) {
            int32_t x;
            if (domain == TDT_DOMAIN_INDEX)
                x = (int32_t)(u * 7.0f) < 7 ? (int32_t)(u * 7.0f) : 6;
            else if (edge)
                x = iedge[(int)(v * (nonzero ? 4.0f : 5.0f))];
            else if (fill == TDT_FILL_TIES)
                x = ities[(int)(v * (nonzero ? 2.0f : 3.0f))];
            else if (nonzero)
                x = (1 + (int32_t)(u * 9.0f)) * (v < 0.5f ? -1 : 1);
            else
                x = (int32_t)(u * 19.0f) - 9;
            ((int32_t *)buf)[i] = x;
        } else {
            ((bool *)buf)[i] = u < (fill == TDT_FILL_TIES ? 0.9f : 0.5f);
        }
    }
}

static td_status read_into(const td_tensor *t, td_dtype dt, void *buf, int64_t n)
{
    switch (dt) {
    case TD_F32: return td_float_into_data(t, buf, n);
    case TD_I32: return td_int_into_data(t, buf, n);
    case TD_BOOL: return td_bool_into_data(t, buf, n);
    default: break;
    }
    return TD_E_INVALID;
}

/* from_data on d, else staged through the CPU (a backend without from_data). */
static td_status make_quiet(td_device *d, td_device *cpu, td_dtype dt, const void *data, const int64_t *dims, int nd,
                            td_tensor **out)
{
    td_status st = from_data(d, dt, data, dims, nd, out);
    if (st != TD_E_UNSUPPORTED)
        return st;
    td_tensor *host = NULL;
    st = from_data(cpu, dt, data, dims, nd, &host);
    if (st == TD_OK)
        st = to_device(host, d, out);
    td_tensor_release(host);
    return st;
}

/* into_data, else staged through the CPU (a backend without into_data). */
static td_status read_quiet(const td_tensor *t, td_device *cpu, td_dtype dt, void *buf, int64_t n)
{
    td_status st = read_into(t, dt, buf, n);
    if (st != TD_E_UNSUPPORTED)
        return st;
    td_tensor *host = NULL;
    st = to_device(t, cpu, &host);
    if (st == TD_OK)
        st = read_into(host, dt, buf, n);
    td_tensor_release(host);
    return st;
}

/* One side's result: what failed (stage), or the result's dtype, shape and values. */
typedef struct side {
    td_status st;
    const char *stage; /* "making input", "running", "reading the result" */
    int stage_index;
    char msg[256];
    td_dtype dtype;
    int ndim;
    int64_t dims[TD_MAX_DIMS];
    int64_t n;
    void *data;
} side;

static int64_t case_numel(const tdt_case *cs, int k)
{
    return numel_of(cs->t[k].dims, cs->t[k].ndim);
}

static void side_fail(side *s, td_status st, const char *stage, int index)
{
    s->st = st;
    s->stage = stage;
    s->stage_index = index;
    snprintf(s->msg, sizeof s->msg, "%s", td_last_error());
}

/* Calls the op with the inputs ins, the result on target, and reads the result back. */
static void call_and_read(const tdt_op_desc *op, const tdt_case *cs, td_device *target, td_device *cpu,
                          td_tensor *const *ins, const void *host_in, bool test_side, side *s)
{
    td_tensor *out = NULL;
    const int64_t cap = cs->nt > 0 ? case_numel(cs, 0) : 1;
    void *host_out = op->out_host && cap > 0 ? calloc((size_t)cap, 4) : NULL;
    const tdt_call call = { .cs = cs, .dev = target, .ins = (const td_tensor *const *)ins, .nins = cs->nt,
                            .host_in = host_in, .host_out = host_out, .host_out_len = cap, .out = &out };
    td_status st = (test_side && op->run_test != NULL ? op->run_test : op->run)(&call);
    if (st != TD_OK) {
        free(host_out);
        side_fail(s, st, "running", 0);
        return;
    }
    if (op->out_host) {
        s->dtype = op->out_dtype;
        s->ndim = cs->t[0].ndim;
        memcpy(s->dims, cs->t[0].dims, sizeof s->dims);
        s->n = cap;
        s->data = host_out;
        return;
    }
    td_tensor_dtype(out, &s->dtype);
    td_tensor_shape(out, s->dims, &s->ndim);
    td_tensor_numel(out, &s->n);
    s->data = s->n > 0 ? calloc((size_t)s->n, 4) : NULL; /* empty: into_data(t, NULL, 0) */
    st = read_quiet(out, cpu, s->dtype, s->data, s->n);
    if (st != TD_OK)
        side_fail(s, st, "reading the result", 0);
    td_tensor_release(out);
}

/* An op never writes into its inputs: each input is read back after the call and must hold
 * the bytes it was made from (a kernel that reuses an input's storage for its result, or
 * scribbles on it, fails here even when its result is right). The first changed element is
 * reported as a failure of the side ("input k changed by the call"). */
static void check_inputs_unchanged(const tdt_op_desc *op, const tdt_case *cs, td_device *cpu, td_tensor *const *ins,
                                   void *const *host, side *s)
{
    for (int k = 0; k < cs->nt; k++) {
        const int64_t n = case_numel(cs, k);
        if (n == 0 || ins[k] == NULL)
            continue;
        const size_t es = op->dtype[k] == TD_BOOL ? sizeof(bool) : 4;
        void *after = malloc((size_t)n * es);
        if (after == NULL)
            continue;
        td_status st = read_quiet(ins[k], cpu, op->dtype[k], after, n);
        if (st != TD_OK) {
            side_fail(s, st, "reading an input back after the call", k);
        } else if (memcmp(after, host[k], (size_t)n * es) != 0) {
            int64_t i = 0;
            while (i < n && memcmp((const char *)after + (size_t)i * es, (const char *)host[k] + (size_t)i * es, es) == 0)
                i++;
            uint32_t was = 0, now = 0;
            memcpy(&was, (const char *)host[k] + (size_t)i * es, es);
            memcpy(&now, (const char *)after + (size_t)i * es, es);
            s->st = TD_E_INVALID;
            s->stage = "running";
            s->stage_index = k;
            snprintf(s->msg, sizeof s->msg,
                     "the call changed its input %d (%s) at element %lld: bits 0x%08x before, 0x%08x after",
                     k, op->input_names[k] != NULL ? op->input_names[k] : "?", (long long)i, (unsigned)was,
                     (unsigned)now);
        }
        free(after);
        if (s->st != TD_OK)
            return;
    }
}

/* Runs the op once: inputs on in_dev made from host[k], the result on target. */
static void run_side(const tdt_op_desc *op, const tdt_case *cs, td_device *in_dev, td_device *target,
                     td_device *cpu, void *const *host, const void *host_in, bool test_side, side *s)
{
    td_tensor *ins[TDT_CASE_TENSORS] = { NULL };
    td_status st = TD_OK;
    memset(s, 0, sizeof *s);
    for (int k = 0; k < cs->nt && st == TD_OK; k++) {
        st = make_quiet(in_dev, cpu, op->dtype[k], host[k], cs->t[k].dims, cs->t[k].ndim, &ins[k]);
        if (st != TD_OK)
            side_fail(s, st, "making input", k);
    }
    if (st == TD_OK)
        call_and_read(op, cs, target, cpu, ins, host_in, test_side, s);
    if (s->st == TD_OK)
        check_inputs_unchanged(op, cs, cpu, ins, host, s);
    for (int k = 0; k < cs->nt; k++)
        td_tensor_release(ins[k]);
}

static const char *dtype_name(td_dtype dt)
{
    return dt == TD_F32 ? "f32" : dt == TD_I32 ? "i32" : "bool";
}

/* Appends printf-style text to buf (size bytes) at *w, never past its end. */
static void put(char *buf, size_t size, size_t *w, const char *fmt, ...)
{
    if (*w >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *w, size - *w, fmt, ap);
    va_end(ap);
    if (k > 0)
        *w = *w + (size_t)k < size ? *w + (size_t)k : size;
}

static void put_dims(char *buf, size_t size, size_t *w, const int64_t *dims, int nd)
{
    put(buf, size, w, "[");
    for (int d = 0; d < nd; d++)
        put(buf, size, w, "%s%lld", d ? "," : "", (long long)dims[d]);
    put(buf, size, w, "]");
}

/* "a f32[3,1], b f32[1,4], dim 0, value 0.5; fill edges" (a list's items: "xs[0] f32[2]") */
static void describe(const tdt_op_desc *op, const tdt_case *cs, char *buf, size_t size)
{
    static const char *const fills[] = { "clean", "edges", "ties", "zeros" };
    static const char *const routes[] = { "", "; to the cpu", "; from the cpu" };
    size_t w = 0;
    buf[0] = '\0';
    const bool list = cs->nt > 1 && op->input_names[1] == NULL;
    for (int k = 0; k < cs->nt; k++) {
        const char *sep = k ? ", " : "";
        if (list)
            put(buf, size, &w, "%s%s[%d] %s", sep, op->input_names[0], k, dtype_name(op->dtype[k]));
        else
            put(buf, size, &w, "%s%s %s", sep, op->input_names[k], dtype_name(op->dtype[k]));
        put_dims(buf, size, &w, cs->t[k].dims, cs->t[k].ndim);
    }
    for (int k = 0; k < TDT_CASE_ARRAYS && op->array_names[k]; k++) {
        put(buf, size, &w, "%s%s ", w ? ", " : "", op->array_names[k]);
        put_dims(buf, size, &w, cs->a[k], cs->alen[k]);
    }
    for (int k = 0; k < TDT_CASE_INTS && op->int_names[k]; k++)
        put(buf, size, &w, "%s%s %lld", w ? ", " : "", op->int_names[k], (long long)cs->i[k]);
    for (int k = 0; k < TDT_CASE_FLOATS && op->float_names[k]; k++)
        put(buf, size, &w, "%s%s %.9g", w ? ", " : "", op->float_names[k], (double)cs->f[k]);
    put(buf, size, &w, "; fill %s%s", fills[cs->fill], routes[cs->route]);
}

double tdt_nmse(const float *got, const float *want, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(want[i]) || !isfinite(got[i]))
            continue;
        double d = (double)got[i] - (double)want[i];
        num += d * d;
        den += (double)want[i] * (double)want[i];
    }
    if (num == 0)
        return 0;
    return den > 0 ? num / den : INFINITY;
}

/* The row-major index of element i of a tensor of shape dims, as "[i0,i1,...]". */
static void index_text(int64_t i, const int64_t *dims, int nd, char *buf, size_t size)
{
    int64_t idx[TD_MAX_DIMS];
    size_t w = 0;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = i % dims[d];
        i /= dims[d];
    }
    buf[0] = '\0';
    put_dims(buf, size, &w, idx, nd);
}

/* Compares got with want; on a difference writes why into msg and returns false. */
/* Whether got has want's shape; if not, msg says both. */
static bool same_shape(const side *got, const side *want, char *msg, size_t size)
{
    bool same = got->ndim == want->ndim;
    for (int d = 0; same && d < want->ndim; d++)
        same = got->dims[d] == want->dims[d];
    if (!same) {
        size_t w = 0;
        put(msg, size, &w, "shape ");
        put_dims(msg, size, &w, got->dims, got->ndim);
        put(msg, size, &w, ", want ");
        put_dims(msg, size, &w, want->dims, want->ndim);
    }
    return same;
}

static bool same_values(const tdt_op_desc *op, const side *got, const side *want, double *nmse, char *msg,
                        size_t size)
{
    *nmse = 0;
    if (got->dtype != want->dtype) {
        snprintf(msg, size, "dtype %s, want %s", dtype_name(got->dtype), dtype_name(want->dtype));
        return false;
    }
    if (!same_shape(got, want, msg, size))
        return false;
    const int64_t n = want->n;
    int64_t special = 0, first_special = -1, off = 0, first_off = -1;
    if (want->dtype == TD_F32) {
        const float *g = got->data, *w = want->data;
        for (int64_t i = 0; i < n; i++) {
            bool gn = isnan(g[i]), wn = isnan(w[i]);
            bool bad = gn != wn || (!wn && (isinf(g[i]) || isinf(w[i])) && g[i] != w[i]) ||
                       (op->zero_sign && w[i] == 0.0f && g[i] == 0.0f && signbit(g[i]) != signbit(w[i]));
            if (bad) {
                special++;
                first_special = first_special < 0 ? i : first_special;
            } else if (!wn && !isinf(w[i]) && !tdt_close(g[i], w[i], 1e-5f)) {
                off++;
                first_off = first_off < 0 ? i : first_off;
            }
        }
        *nmse = tdt_nmse(g, w, n);
        if (special == 0 && *nmse <= op->nmse)
            return true;
        int64_t at = special > 0 ? first_special : first_off;
        char where[128] = "";
        if (at >= 0) {
            char idx[96];
            index_text(at, want->dims, want->ndim, idx, sizeof idx);
            snprintf(where, sizeof where, "; first at element %lld %s: got %.9g, want %.9g", (long long)at, idx,
                     (double)g[at], (double)w[at]);
        }
        if (special > 0)
            snprintf(msg, size, "%lld of %lld elements differ in NaN or infinity%s%s (NMSE of the rest %.3g)",
                     (long long)special, (long long)n, op->zero_sign ? " or a zero's sign" : "", where, *nmse);
        else
            snprintf(msg, size, "NMSE %.3g > %.3g; %lld of %lld elements off by more than 1e-5 relative%s", *nmse,
                     op->nmse, (long long)off, (long long)n, where);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        bool eq = want->dtype == TD_I32 ? ((const int32_t *)got->data)[i] == ((const int32_t *)want->data)[i]
                                         : ((const bool *)got->data)[i] == ((const bool *)want->data)[i];
        if (!eq) {
            off++;
            first_off = first_off < 0 ? i : first_off;
        }
    }
    if (off == 0)
        return true;
    char idx[96];
    index_text(first_off, want->dims, want->ndim, idx, sizeof idx);
    double g = want->dtype == TD_I32 ? ((const int32_t *)got->data)[first_off] : ((const bool *)got->data)[first_off];
    double w = want->dtype == TD_I32 ? ((const int32_t *)want->data)[first_off]
                                     : ((const bool *)want->data)[first_off];
    snprintf(msg, size, "%lld of %lld elements differ; first at element %lld %s: got %.0f, want %.0f", (long long)off,
             (long long)n, (long long)first_off, idx, g, w);
    return false;
}

/* Whether the reference's result has the shape the case wants; else why. */
static bool same_dims(const side *want, const tdt_case *cs, char *msg, size_t size)
{
    bool same = want->ndim == cs->want_ndim;
    for (int d = 0; same && d < cs->want_ndim; d++)
        same = want->dims[d] == cs->want_dims[d];
    if (same)
        return true;
    size_t w = 0;
    put(msg, size, &w, "the reference's result has shape ");
    put_dims(msg, size, &w, want->dims, want->ndim);
    put(msg, size, &w, ", want ");
    put_dims(msg, size, &w, cs->want_dims, cs->want_ndim);
    return false;
}

void tdt_compare_skip(const char *op, const char *why)
{
    print_message("%s vs cpu: skipped: %s\n", op, why);
    skip();
}

void tdt_compare_impl(td_device *dev, td_device *cpu, const tdt_op_desc *op, const tdt_case *cases, int ncases,
                      const char *file, int line)
{
    td_backend be = TD_BACKEND_CPU;
    td_device_backend(dev, &be);
    char bname_buf[64];
    /* A decomposition checked against the native kernel reads "op on cpu (composite) vs cpu". */
    snprintf(bname_buf, sizeof bname_buf, "%s%s", td_backend_name(be), op->run_test != NULL ? " (composite)" : "");
    const char *bname = bname_buf;
    int failed = 0;
    int64_t elements = 0;
    double worst = 0;
    char skip_why[512] = "";
    for (int k = 0; k < ncases && !skip_why[0]; k++) {
        const tdt_case *cs = &cases[k];
        const unsigned seed = op->seed + 7919u * (unsigned)k;
        void *host[TDT_CASE_TENSORS] = { NULL }, *host_in = NULL;
        for (int j = 0; j < cs->nt; j++) {
            int64_t n = case_numel(cs, j);
            host[j] = n > 0 ? calloc((size_t)n, 4) : NULL; /* empty: NULL data must be accepted */
            fill_values(op->dtype[j], op->domain[j], cs->fill, host[j], n, seed + 31u * (unsigned)j);
        }
        if (op->host_in) {
            host_in = cs->hn > 0 ? calloc((size_t)cs->hn, 4) : NULL;
            fill_values(op->host_dtype, TDT_DOMAIN_ANY, cs->fill, host_in, cs->hn, seed + 97u);
        }
        side want, got;
        run_side(op, cs, cpu, cpu, cpu, host, host_in, false, &want);
        td_device *in_dev = cs->route == TDT_ROUTE_FROM_CPU ? cpu : dev;
        td_device *target = cs->route == TDT_ROUTE_TO_CPU ? cpu : dev;
        run_side(op, cs, in_dev, target, cpu, host, host_in, true, &got);
        char what[512], why[640] = "";
        describe(op, cs, what, sizeof what);
        double nmse = 0;
        if ((got.st == TD_E_UNSUPPORTED || got.st == TD_E_DTYPE) && strcmp(got.stage, "making input") == 0) {
            snprintf(skip_why, sizeof skip_why, "%s cannot make its %s inputs: %s", bname,
                     dtype_name(op->dtype[got.stage_index]), got.msg);
        } else if (got.st == TD_E_UNSUPPORTED && strcmp(got.stage, "reading the result") == 0) {
            snprintf(skip_why, sizeof skip_why, "%s cannot read its %s results back: %s", bname, dtype_name(got.dtype),
                     got.msg);
        } else if (cs->want_status != TD_OK || (cs->as_reference && want.st != TD_OK)) {
            /* both must fail with the status the case (or the reference) names, when running */
            const td_status ws = cs->want_status != TD_OK ? cs->want_status : want.st;
            if (want.st != ws || strcmp(want.stage, "running") != 0)
                snprintf(why, sizeof why, "the reference gave %s (%s%s%s), want %s when running",
                         td_status_name(want.st), want.st == TD_OK ? "no error" : want.stage,
                         want.st == TD_OK ? "" : ": ", want.st == TD_OK ? "" : want.msg, td_status_name(ws));
            else if (got.st != ws || strcmp(got.stage, "running") != 0)
                snprintf(why, sizeof why, "got %s (%s%s%s), want %s when running, as the reference",
                         td_status_name(got.st), got.st == TD_OK ? "no error" : got.stage, got.st == TD_OK ? "" : ": ",
                         got.st == TD_OK ? "" : got.msg, td_status_name(ws));
            else if (strstr(got.msg, op->name) == NULL)
                snprintf(why, sizeof why, "the message does not name %s: '%s'", op->name, got.msg);
        } else if (want.st != TD_OK) {
            snprintf(why, sizeof why, "the reference failed %s: %s: %s (an invalid generated case)", want.stage,
                     td_status_name(want.st), want.msg);
        } else if (got.st != TD_OK) {
            snprintf(why, sizeof why, "%s %s: %s", got.stage, td_status_name(got.st), got.msg);
        } else if (cs->want_shape && !same_dims(&want, cs, why, sizeof why)) {
            /* why says how */
        } else if (!same_values(op, &got, &want, &nmse, why, sizeof why)) {
            /* why says how */
        } else {
            worst = nmse > worst ? nmse : worst;
            elements += want.n;
        }
        if (why[0]) {
            failed++;
            print_error("%s on %s vs cpu: case %d of %d (%s): %s\n", op->name, bname, k + 1, ncases, what, why);
        }
        free(want.data);
        free(got.data);
        for (int j = 0; j < cs->nt; j++)
            free(host[j]);
        free(host_in);
    }
    if (skip_why[0]) {
        print_message("%s on %s vs cpu: skipped: %s\n", op->name, bname, skip_why);
        skip();
    }
    if (failed > 0) {
        print_error("%s on %s vs cpu: %d of %d cases differ\n", op->name, bname, failed, ncases);
        _fail(file, line);
    }
    print_message("%s on %s vs cpu: %d cases, %lld result elements, all match (worst NMSE %.3g, tolerance %.3g)\n",
                  op->name, bname, ncases, (long long)elements, worst, op->nmse);
}

/* ---- views ---- */

static size_t elem_size(td_dtype dtype)
{
    return dtype == TD_BOOL ? sizeof(bool) : 4;
}

/* The host data of t, checked to be n elements of want (dtype dt). */
static void expect_data(const td_tensor *t, td_dtype dt, const void *want, int64_t n, const char *what)
{
    int64_t got_n = -1;
    void *got = tdt_read(t, &got_n);
    if (got == NULL)
        fail_msg("%s: cannot read the tensor back: %s", what, td_last_error());
    if (got_n != n || memcmp(got, want, (size_t)n * elem_size(dt)) != 0) {
        free(got);
        fail_msg("%s: the elements differ from the base's (%lld of %lld)", what, (long long)got_n, (long long)n);
    }
    free(got);
}

static void expect_shared(const td_tensor *a, const td_tensor *b, bool want, const char *what)
{
    bool same = !want;
    tdt_check(td_testing_same_storage(a, b, &same), "testing_same_storage");
    if (same != want)
        fail_msg("%s: %s", what, want ? "the view copied its base (no shared storage)" : "the result shares storage");
}

/* A random base of dtype dt and shape on d (*a), its elements read back (*host, n of them),
 * and the view fn makes of it (returned). */
static td_tensor *make_view(td_device *d, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn, unsigned seed,
                            td_tensor **a, void **host, int64_t *n)
{
    *a = tdt_random(d, dt, shape, nd, seed);
    assert_non_null(*a);
    *host = tdt_read(*a, n);
    assert_non_null(*host);
    const td_tensor *ins[] = { *a };
    td_tensor *v = NULL;
    tdt_check(fn(ins, &v), "view");
    return v;
}

void tdt_view_checks(td_device *d, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn, tdt_reshape_fn reshape,
                     unsigned seed)
{
    td_tensor *a = NULL;
    void *host = NULL;
    int64_t n = 0;
    td_tensor *v = make_view(d, dt, shape, nd, fn, seed, &a, &host, &n);
    /* The view holds the base's storage and elements, in the same order. */
    if (n > 0)
        expect_shared(a, v, true, "view of a fresh tensor");
    expect_data(v, dt, host, n, "view");
    /* A view of the view, back in the base's shape: still the one storage. */
    td_tensor *w = NULL;
    tdt_check(reshape(v, shape, nd, &w), "reshape of the view");
    if (n > 0) {
        expect_shared(a, w, true, "view of a view");
        expect_shared(v, w, true, "view of a view");
    }
    /* The base goes first: the views keep the storage alive and unchanged. */
    td_tensor_release(a);
    expect_data(v, dt, host, n, "view after its base was released");
    expect_data(w, dt, host, n, "view of a view after the base was released");
    /* Then the first view; the last holder still reads the elements. */
    td_tensor_release(v);
    expect_data(w, dt, host, n, "the last view");
    td_tensor_release(w);
    free(host);
}

void tdt_view_write_checks(td_device *d, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn,
                           tdt_assign_fn assign, unsigned seed)
{
    td_tensor *a = NULL;
    void *host = NULL;
    int64_t n = 0;
    td_tensor *v = make_view(d, dt, shape, nd, fn, seed, &a, &host, &n);
    int64_t vdims[TD_MAX_DIMS];
    int vnd = 0;
    tdt_check(td_tensor_shape(v, vdims, &vnd), "tensor_shape");
    if (vnd == 0 || vdims[0] == 0) { /* nothing to write into: a 0-d or empty view */
        td_tensor_release(v);
        td_tensor_release(a);
        free(host);
        return;
    }
    /* Writing through the view (ones over [0, 1) of its dim 0) makes a new tensor: the view
     * and its base keep their elements. */
    static const int64_t first[] = { 0 }, second[] = { 1 };
    vdims[0] = 1;
    td_tensor *ones = tdt_filled(d, dt, vdims, vnd);
    assert_non_null(ones);
    td_tensor *r = NULL;
    tdt_check(assign(v, ones, first, 1, second, 1, &r), "slice_assign through the view");
    expect_shared(r, v, false, "slice_assign's result");
    int64_t rn = 0;
    void *got = tdt_read(r, &rn);
    assert_non_null(got);
    int64_t row = 1;
    for (int i = 1; i < vnd; i++)
        row *= vdims[i];
    for (int64_t i = 0; i < rn; i++) {
        const char *g = (const char *)got + (size_t)i * elem_size(dt);
        const char *h = (const char *)host + (size_t)i * elem_size(dt);
        bool ok;
        if (i >= row)
            ok = memcmp(g, h, elem_size(dt)) == 0;
        else if (dt == TD_F32)
            ok = *(const float *)g == 1.0f;
        else if (dt == TD_I32)
            ok = *(const int32_t *)g == 1;
        else
            ok = *(const bool *)g;
        if (!ok) {
            free(got);
            fail_msg("slice_assign through a view: element %lld is wrong", (long long)i);
        }
    }
    free(got);
    expect_data(v, dt, host, n, "the view after a write through it");
    expect_data(a, dt, host, n, "the base after a write through its view");
    /* And the other way: writing into the base leaves the view alone. */
    td_tensor *abase = NULL;
    td_tensor_release(r);
    r = NULL;
    int64_t adims[TD_MAX_DIMS];
    int and_ = 0;
    tdt_check(td_tensor_shape(a, adims, &and_), "tensor_shape");
    if (and_ > 0 && adims[0] > 0) {
        adims[0] = 1;
        td_tensor *aones = tdt_filled(d, dt, adims, and_);
        assert_non_null(aones);
        tdt_check(assign(a, aones, first, 1, second, 1, &abase), "slice_assign into the base");
        expect_data(v, dt, host, n, "the view after a write into its base");
        td_tensor_release(aones);
        td_tensor_release(abase);
    }
    td_tensor_release(ones);
    td_tensor_release(v);
    td_tensor_release(a);
    free(host);
}

void tdt_view_move_checks(td_device *d, td_device *other, td_dtype dt, const int64_t *shape, int nd, tdt_view_fn fn,
                          unsigned seed)
{
    td_tensor *a = NULL;
    void *host = NULL;
    int64_t n = 0;
    td_tensor *v = make_view(d, dt, shape, nd, fn, seed, &a, &host, &n);
    td_tensor_release(a); /* the view alone holds the storage when it moves */
    td_tensor *m = NULL;
    tdt_check(to_device(v, other, &m), "to_device of a view");
    expect_data(m, dt, host, n, "a view moved to another device");
    td_tensor *back = NULL;
    tdt_check(to_device(m, d, &back), "to_device back");
    expect_data(back, dt, host, n, "a view moved there and back");
    td_tensor_release(back);
    td_tensor_release(m);
    td_tensor_release(v);
    free(host);
}

/* ---- per-dtype comparisons (the generated test_dtypes_<backend>.c) ---- */

uint16_t tdt_f16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    const uint32_t sign = (u >> 16) & 0x8000u, ax = u & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, sign and the top payload bits that fit kept */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* 65520 (half an ulp past 65504; the tie goes to the even inf) and up */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: a multiple of 2^-24 (subnormal), or 0 */
        float a;
        memcpy(&a, &ax, sizeof a);
        return (uint16_t)(sign | (uint32_t)nearbyint((double)a * 16777216.0)); /* exact product, RNE */
    }
    uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu); /* rebias 127 -> 15 */
    const uint32_t rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is right, up to inf */
    return (uint16_t)(sign | h);
}

double tdt_f16_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000u) ? -v : v;
}

uint16_t tdt_bf16_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

double tdt_bf16_value(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static td_status from_data_any(td_device *d, td_dtype dt, const void *data, const int64_t *dims, int nd,
                               td_tensor **out)
{
    switch (td_dtype_class(dt)) {
    case TD_CLASS_FLOAT: return td_float_from_data_dtype(d, dt, data, dims, nd, out);
    case TD_CLASS_INT: return td_int_from_data_dtype(d, dt, data, dims, nd, out);
    default: return td_bool_from_data(d, data, dims, nd, out);
    }
}

static td_status to_device_any(const td_tensor *t, td_device *d, td_tensor **out)
{
    td_dtype dt = TD_F32;
    td_tensor_dtype(t, &dt);
    switch (td_dtype_class(dt)) {
    case TD_CLASS_FLOAT: return td_float_to_device(t, d, out);
    case TD_CLASS_INT: return td_int_to_device(t, d, out);
    default: return td_bool_to_device(t, d, out);
    }
}

/* from_data in dtype dt on d, else made on the CPU and moved. */
static td_status make_any(td_device *d, td_device *cpu, td_dtype dt, const void *data, const int64_t *dims, int nd,
                          td_tensor **out)
{
    td_status st = from_data_any(d, dt, data, dims, nd, out);
    if (st != TD_E_UNSUPPORTED || d == cpu)
        return st;
    td_tensor *host = NULL;
    st = from_data_any(cpu, dt, data, dims, nd, &host);
    if (st == TD_OK)
        st = to_device_any(host, d, out);
    td_tensor_release(host);
    return st;
}

/* t's elements as the bytes of its own dtype dt (into_data_dtype, else through the CPU). */
static td_status raw_into(const td_tensor *t, td_device *cpu, td_dtype dt, void *raw, int64_t n)
{
    td_status st;
    switch (td_dtype_class(dt)) {
    case TD_CLASS_FLOAT: st = td_float_into_data_dtype(t, dt, raw, n); break;
    case TD_CLASS_INT: st = td_int_into_data_dtype(t, dt, raw, n); break;
    default: st = td_bool_into_data(t, raw, n); break;
    }
    if (st != TD_E_UNSUPPORTED)
        return st;
    td_tensor *host = NULL;
    st = to_device_any(t, cpu, &host);
    if (st == TD_OK)
        st = raw_into(host, cpu, dt, raw, n);
    td_tensor_release(host);
    return st;
}

/* n elements of dtype dt (its bytes in raw) as doubles (floats), int64s (ints) or bools,
 * 8 bytes apart in buf; converted here, not by the library. */
static td_status widen(td_dtype dt, const void *raw, void *buf, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double *f = (double *)buf + i;
        int64_t *k = (int64_t *)buf + i;
        switch (dt) {
        case TD_F32: *f = ((const float *)raw)[i]; break;
        case TD_F16: *f = tdt_f16_value(((const uint16_t *)raw)[i]); break;
        case TD_BF16: *f = tdt_bf16_value(((const uint16_t *)raw)[i]); break;
        case TD_F64: *f = ((const double *)raw)[i]; break;
        case TD_I32: *k = ((const int32_t *)raw)[i]; break;
        case TD_I64: *k = ((const int64_t *)raw)[i]; break;
        case TD_I8: *k = ((const int8_t *)raw)[i]; break;
        case TD_U8: *k = ((const uint8_t *)raw)[i]; break;
        case TD_BOOL: *(bool *)f = ((const bool *)raw)[i]; break;
        default: return TD_E_INVALID; /* quantized: no comparison is generated for them */
        }
    }
    return TD_OK;
}

static td_status read_wide(const td_tensor *t, td_device *cpu, td_dtype dt, void *buf, int64_t n)
{
    if (n == 0)
        return raw_into(t, cpu, dt, NULL, 0);
    void *raw = malloc((size_t)n * td_dtype_size(dt));
    if (raw == NULL)
        return TD_E_NOMEM;
    td_status st = raw_into(t, cpu, dt, raw, n);
    if (st == TD_OK)
        st = widen(dt, raw, buf, n);
    free(raw);
    return st;
}

/* Brings n filled values v (f32 or i32, as op->dtype says) of an input of dd's class into
 * dd->dtype: writes the dtype's bytes to `bytes` and replaces v by what they hold (the
 * values the reference runs on). */
/* An i32 test value as the 8 bits of an i8 / u8: modulo 2^8, as a cast does, except the
 * edge values INT32_MIN and INT32_MAX, which become the dtype's own extremes' patterns
 * (0x80 and 0x7f for i8: -128 and 127; 0x80 and 0xff for u8), where wrapping would give 0
 * and -1; so the edge fill exercises -x, |x| and x / -1 at -128 and sums past 127 / 255. */
static int small_int_bits(int32_t v, td_dtype dt)
{
    if (v == INT32_MIN)
        return 0x80;
    if (v == INT32_MAX)
        return dt == TD_I8 ? 0x7f : 0xff;
    return (int)((uint32_t)v & 0xffu);
}

static void into_dtype(const tdt_dtype_desc *dd, void *v, void *bytes, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float *f = (float *)v + i;
        int32_t *k = (int32_t *)v + i;
        switch (dd->dtype) {
        case TD_F16: {
            const uint16_t h = tdt_f16_bits(*f);
            ((uint16_t *)bytes)[i] = h;
            *f = (float)tdt_f16_value(h);
            break;
        }
        case TD_BF16: {
            const uint16_t h = tdt_bf16_bits(*f);
            ((uint16_t *)bytes)[i] = h;
            *f = (float)tdt_bf16_value(h);
            break;
        }
        case TD_F64: ((double *)bytes)[i] = *f; break;
        case TD_I64: ((int64_t *)bytes)[i] = (int64_t)((uint64_t)(int64_t)*k << dd->shift); break;
        case TD_I8: {
            const int b = small_int_bits(*k, TD_I8);
            *k = b < 128 ? b : b - 256;
            ((int8_t *)bytes)[i] = (int8_t)*k;
            break;
        }
        case TD_U8: *k = small_int_bits(*k, TD_U8); ((uint8_t *)bytes)[i] = (uint8_t)*k; break;
        default: memcpy((char *)bytes + 4 * i, (char *)v + 4 * i, 4); break;
        }
    }
}

/* One side of a dtype comparison: input k made on in_dev in dt[k] from bytes[k], the op
 * run with its result on target, the result read back widened (s->data, 8 bytes an
 * element); on the side under test, the inputs must still hold their bytes. */
static void dtype_side(const tdt_op_desc *op, const tdt_case *cs, td_device *in_dev, td_device *target,
                       td_device *cpu, const td_dtype *dt, void *const *bytes, const void *host_in, bool test_side,
                       side *s)
{
    td_tensor *ins[TDT_CASE_TENSORS] = { NULL }, *out = NULL;
    td_status st = TD_OK;
    memset(s, 0, sizeof *s);
    for (int k = 0; k < cs->nt && st == TD_OK; k++) {
        st = make_any(in_dev, cpu, dt[k], bytes[k], cs->t[k].dims, cs->t[k].ndim, &ins[k]);
        if (st != TD_OK)
            side_fail(s, st, "making input", k);
    }
    if (st == TD_OK) {
        const int64_t cap = cs->nt > 0 ? case_numel(cs, 0) : 1;
        void *host_out = op->out_host && cap > 0 ? calloc((size_t)cap, 4) : NULL;
        const tdt_call call = { .cs = cs, .dev = target, .ins = (const td_tensor *const *)ins, .nins = cs->nt,
                                .host_in = host_in, .host_out = host_out, .host_out_len = cap, .out = &out };
        st = (test_side && op->run_test != NULL ? op->run_test : op->run)(&call);
        if (st != TD_OK) {
            side_fail(s, st, "running", 0);
        } else if (op->out_host) {
            s->dtype = op->out_dtype;
            s->ndim = cs->t[0].ndim;
            memcpy(s->dims, cs->t[0].dims, sizeof s->dims);
            s->n = cap;
            s->data = calloc((size_t)(cap > 0 ? cap : 1), 8);
            widen(op->out_dtype, host_out, s->data, cap);
        } else {
            td_tensor_dtype(out, &s->dtype);
            td_tensor_shape(out, s->dims, &s->ndim);
            td_tensor_numel(out, &s->n);
            s->data = calloc((size_t)(s->n > 0 ? s->n : 1), 8);
            st = read_wide(out, cpu, s->dtype, s->data, s->n);
            if (st != TD_OK)
                side_fail(s, st, "reading the result", 0);
        }
        free(host_out);
    }
    for (int k = 0; test_side && s->st == TD_OK && k < cs->nt; k++) {
        const int64_t n = case_numel(cs, k);
        const size_t es = td_dtype_size(dt[k]);
        void *after = n > 0 ? malloc((size_t)n * es) : NULL;
        if (after == NULL)
            continue;
        st = raw_into(ins[k], cpu, dt[k], after, n);
        if (st != TD_OK) {
            side_fail(s, st, "reading an input back after the call", k);
        } else if (memcmp(after, bytes[k], (size_t)n * es) != 0) {
            int64_t i = 0;
            while (i < n && memcmp((const char *)after + (size_t)i * es, (const char *)bytes[k] + (size_t)i * es, es) == 0)
                i++;
            s->st = TD_E_INVALID;
            s->stage = "running";
            s->stage_index = k;
            snprintf(s->msg, sizeof s->msg, "the call changed its input %d (%s, %s) at element %lld", k,
                     op->input_names[k] != NULL ? op->input_names[k] : "?", td_dtype_name(dt[k]), (long long)i);
        }
        free(after);
    }
    td_tensor_release(out);
    for (int k = 0; k < cs->nt; k++)
        td_tensor_release(ins[k]);
}

/* The reference's f32 results (widened to doubles) rounded to dt (f16, bf16) by the test's
 * own converters: what a correct kernel stores, ±inf past the dtype's range included. */
static void round_reference(td_dtype dt, void *data, int64_t n)
{
    double *w = data;
    for (int64_t i = 0; i < n; i++)
        w[i] = dt == TD_F16 ? tdt_f16_value(tdt_f16_bits((float)w[i])) : tdt_bf16_value(tdt_bf16_bits((float)w[i]));
}

static int dtype_bits(td_dtype dt)
{
    return dt == TD_I8 || dt == TD_U8 ? 8 : dt == TD_I64 ? 64 : 32;
}

/* A case's NMSE may exceed the op's bound (which holds for all its cases pooled) this many
 * times: in a case of one element, a result 1 ulp off the rounded reference (a kernel whose
 * f32 value differs in its last bit next to an f16 rounding boundary) is off by up to 2^-10
 * relative, NMSE 9.5e-7 in f16 (6.1e-5 in bf16), which 64 times the bound still admits; a
 * systematic error shows in the pooled NMSE, which the larger cases dominate. */
#define TDT_CASE_FACTOR 64.0

/* Compares the widened results; on a difference writes why into msg and returns false.
 * Adds the float squared errors and squares to *num and *den (the op's pooled NMSE). */
static bool dtype_same_values(const tdt_op_desc *op, const tdt_dtype_desc *dd, const side *got, const side *want,
                              double *nmse, double *pnum, double *pden, char *msg, size_t size)
{
    *nmse = 0;
    if (got->dtype != dd->out || want->dtype != dd->ref_out) {
        snprintf(msg, size, "the result is %s (the reference's %s), want %s (%s)", td_dtype_name(got->dtype),
                 td_dtype_name(want->dtype), td_dtype_name(dd->out), td_dtype_name(dd->ref_out));
        return false;
    }
    if (!same_shape(got, want, msg, size))
        return false;
    const int64_t n = want->n;
    int64_t bad = 0, first = -1;
    char idx[96] = "";
    const td_class cls = td_dtype_class(want->dtype);
    if (cls == TD_CLASS_FLOAT) {
        const double *g = got->data, *w = want->data;
        double num = 0, den = 0;
        /* an f64 result against the CPU's f32 (no f64 kernel there): where the f32 reference
         * overflowed to +-inf, a finite f64 result that rounds to the same infinity in f32 is
         * the same answer (e.g. powi_scalar(1e-39, -2) = 1e78) */
        const bool f32_ref = dd->out == TD_F64 && dd->ref_out == TD_F32;
        for (int64_t i = 0; i < n; i++) {
            if (f32_ref && isinf(w[i]) && isfinite(g[i]) && fabs(g[i]) >= 0x1.ffffffp+127 &&
                signbit(g[i]) == signbit(w[i]))
                continue; /* |g| at least FLT_MAX + half its ULP: rounds to inf in f32 */
            const bool gn = isnan(g[i]), wn = isnan(w[i]);
            if (gn != wn || (!wn && (isinf(g[i]) || isinf(w[i])) && g[i] != w[i]) ||
                (op->zero_sign && w[i] == 0.0 && g[i] == 0.0 && signbit(g[i]) != signbit(w[i]))) {
                bad++;
                first = first < 0 ? i : first;
            } else if (isfinite(w[i])) {
                num += (g[i] - w[i]) * (g[i] - w[i]);
                den += w[i] * w[i];
            }
        }
        *nmse = num == 0 ? 0 : den > 0 ? num / den : INFINITY;
        *pnum += num;
        *pden += den;
        if (bad == 0 && *nmse <= TDT_CASE_FACTOR * dd->nmse)
            return true;
        if (bad == 0) { /* the element farthest off, relative to the result's scale */
            double far = -1;
            for (int64_t i = 0; i < n; i++)
                if (isfinite(w[i]) && fabs(g[i] - w[i]) > far) {
                    far = fabs(g[i] - w[i]);
                    first = i;
                }
        }
        index_text(first, want->dims, want->ndim, idx, sizeof idx);
        if (bad > 0)
            snprintf(msg, size, "%lld of %lld elements differ in NaN or infinity%s; first at element %lld %s: got "
                     "%.17g, want %.17g (NMSE of the rest %.3g)", (long long)bad, (long long)n,
                     op->zero_sign ? " or a zero's sign" : "", (long long)first, idx, g[first], w[first], *nmse);
        else
            snprintf(msg, size, "NMSE %.3g > %.3g (%g times the %s bound); farthest at element %lld %s: got %.17g, "
                     "want %.17g", *nmse, TDT_CASE_FACTOR * dd->nmse, TDT_CASE_FACTOR, td_dtype_name(dd->dtype),
                     (long long)first, idx, g[first], w[first]);
        return false;
    }
    if (cls == TD_CLASS_INT) {
        const int64_t *g = got->data, *w = want->data;
        const bool scaled = dd->shift > 0 && got->dtype == TD_I64;
        const int bits = dtype_bits(got->dtype) < dtype_bits(want->dtype) ? dtype_bits(got->dtype)
                                                                           : dtype_bits(want->dtype);
        const uint64_t mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1u);
        for (int64_t i = 0; i < n; i++) {
            const bool eq = scaled ? (uint64_t)g[i] == (uint64_t)w[i] << 32
                                   : (((uint64_t)g[i] - (uint64_t)w[i]) & mask) == 0;
            if (!eq) {
                bad++;
                first = first < 0 ? i : first;
            }
        }
        if (bad == 0)
            return true;
        index_text(first, want->dims, want->ndim, idx, sizeof idx);
        snprintf(msg, size, "%lld of %lld elements differ; first at element %lld %s: got %lld, want %lld%s",
                 (long long)bad, (long long)n, (long long)first, idx, (long long)g[first], (long long)w[first],
                 scaled ? " (times 2^32)" : bits < 64 ? " (in the low bits)" : "");
        return false;
    }
    const bool *g = got->data, *w = want->data;
    for (int64_t i = 0; i < n; i++) {
        if (g[8 * i] != w[8 * i]) {
            bad++;
            first = first < 0 ? i : first;
        }
    }
    if (bad == 0)
        return true;
    index_text(first, want->dims, want->ndim, idx, sizeof idx);
    snprintf(msg, size, "%lld of %lld elements differ; first at element %lld %s: got %d, want %d", (long long)bad,
             (long long)n, (long long)first, idx, (int)g[8 * first], (int)w[8 * first]);
    return false;
}

void tdt_compare_dtype_impl(td_device *dev, td_device *cpu, const tdt_op_desc *op, const tdt_dtype_desc *dd,
                            const tdt_case *cases, int ncases, const char *file, int line)
{
    td_backend be = TD_BACKEND_CPU;
    td_device_backend(dev, &be);
    const char *bname = td_backend_name(be), *dname = td_dtype_name(dd->dtype);
    int failed = 0;
    int64_t elements = 0;
    double worst = 0, pnum = 0, pden = 0;
    char skip_why[512] = "";
    for (int k = 0; k < ncases && !skip_why[0]; k++) {
        tdt_case wrapped = cases[k];
        for (int j = 0; j < TDT_CASE_INTS; j++) /* int values in the dtype, as the op converts them */
            if ((dd->wrap_ints >> j) & 1u) {
                const int b = (int)((uint64_t)wrapped.i[j] & 0xffu);
                wrapped.i[j] = dd->dtype == TD_I8 && b >= 128 ? b - 256 : b;
            }
        const tdt_case *cs = &wrapped;
        const unsigned seed = op->seed + 7919u * (unsigned)k;
        void *host[TDT_CASE_TENSORS] = { NULL }, *tb[TDT_CASE_TENSORS] = { NULL }, *rb[TDT_CASE_TENSORS] = { NULL };
        void *tmk[TDT_CASE_TENSORS], *rmk[TDT_CASE_TENSORS], *host_in = NULL;
        td_dtype tdt[TDT_CASE_TENSORS], rdt[TDT_CASE_TENSORS];
        for (int j = 0; j < cs->nt; j++) {
            const int64_t n = case_numel(cs, j);
            host[j] = n > 0 ? calloc((size_t)n, 8) : NULL;
            fill_values(op->dtype[j], op->domain[j], cs->fill, host[j], n, seed + 31u * (unsigned)j);
            tdt[j] = rdt[j] = op->dtype[j];
            tmk[j] = rmk[j] = host[j];
            if (td_dtype_class(op->dtype[j]) == td_dtype_class(dd->dtype)) {
                tb[j] = n > 0 ? calloc((size_t)n, 8) : NULL;
                into_dtype(dd, host[j], tb[j], n);
                tdt[j] = dd->dtype;
                tmk[j] = tb[j];
                if (dd->ref == TD_F64) {
                    rb[j] = n > 0 ? calloc((size_t)n, 8) : NULL;
                    for (int64_t i = 0; i < n; i++)
                        ((double *)rb[j])[i] = ((const float *)host[j])[i];
                    rdt[j] = TD_F64;
                    rmk[j] = rb[j];
                }
            }
        }
        if (op->host_in) {
            host_in = cs->hn > 0 ? calloc((size_t)cs->hn, 4) : NULL;
            fill_values(op->host_dtype, TDT_DOMAIN_ANY, cs->fill, host_in, cs->hn, seed + 97u);
        }
        side want, got;
        dtype_side(op, cs, cpu, cpu, cpu, rdt, rmk, host_in, false, &want);
        if (want.st == TD_OK && want.dtype == TD_F32 && (dd->out == TD_F16 || dd->out == TD_BF16))
            round_reference(dd->out, want.data, want.n);
        td_device *in_dev = cs->route == TDT_ROUTE_FROM_CPU ? cpu : dev;
        td_device *target = cs->route == TDT_ROUTE_TO_CPU ? cpu : dev;
        dtype_side(op, cs, in_dev, target, cpu, tdt, tmk, host_in, true, &got);
        char what[512], why[768] = "";
        describe(op, cs, what, sizeof what);
        double nmse = 0;
        if ((got.st == TD_E_UNSUPPORTED || got.st == TD_E_DTYPE) && strcmp(got.stage, "making input") == 0) {
            snprintf(skip_why, sizeof skip_why, "%s cannot make its %s inputs: %s", bname,
                     td_dtype_name(tdt[got.stage_index]), got.msg);
        } else if (got.st == TD_E_UNSUPPORTED && strcmp(got.stage, "reading the result") == 0) {
            snprintf(skip_why, sizeof skip_why, "%s cannot read its %s results back: %s", bname,
                     td_dtype_name(got.dtype), got.msg);
        } else if (want.st != TD_OK) {
            snprintf(why, sizeof why, "the reference (cpu, %s) failed %s: %s: %s (an invalid generated case)",
                     td_dtype_name(dd->ref), want.stage, td_status_name(want.st), want.msg);
        } else if (got.st != TD_OK) {
            snprintf(why, sizeof why, "%s %s: %s", got.stage, td_status_name(got.st), got.msg);
        } else if (dtype_same_values(op, dd, &got, &want, &nmse, &pnum, &pden, why, sizeof why)) {
            worst = nmse > worst ? nmse : worst;
            elements += want.n;
        }
        if (why[0]) {
            failed++;
            print_error("%s in %s on %s vs cpu in %s: case %d of %d (%s): %s\n", op->name, dname, bname,
                        td_dtype_name(dd->ref), k + 1, ncases, what, why);
        }
        free(want.data);
        free(got.data);
        for (int j = 0; j < cs->nt; j++) {
            free(host[j]);
            free(tb[j]);
            free(rb[j]);
        }
        free(host_in);
    }
    if (skip_why[0]) {
        print_message("%s in %s on %s vs cpu: skipped: %s\n", op->name, dname, bname, skip_why);
        skip();
    }
    /* the bound holds for the cases pooled: sum((got - want)^2) / sum(want^2) over them all */
    const double pooled = pnum == 0 ? 0 : pden > 0 ? pnum / pden : INFINITY;
    if (failed == 0 && pooled > dd->nmse) {
        failed = ncases;
        print_error("%s in %s on %s vs cpu in %s: the NMSE of the %d cases pooled, %.3g, exceeds the %s bound %.3g "
                    "(worst case %.3g)\n", op->name, dname, bname, td_dtype_name(dd->ref), ncases, pooled, dname,
                    dd->nmse, worst);
    }
    if (failed > 0) {
        print_error("%s in %s on %s vs cpu in %s: %d of %d cases differ\n", op->name, dname, bname,
                    td_dtype_name(dd->ref), failed, ncases);
        _fail(file, line);
    }
    print_message("%s in %s on %s vs cpu in %s: %d cases, %lld result elements, all match (NMSE pooled %.3g, worst "
                  "case %.3g; bound %.3g)\n", op->name, dname, bname, td_dtype_name(dd->ref), ncases,
                  (long long)elements, pooled, worst, dd->nmse);
}
