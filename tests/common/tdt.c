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

int tdt_remember_live(void **state)
{
    (void)state;
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
    assert_int_equal(td_testing_live_objects(), live_baseline);
    return 0;
}

static td_status from_data(td_device *d, td_dtype dtype, const void *data, const int64_t *shape, int ndim,
                           td_tensor **out)
{
    switch (dtype) {
    case TD_F32: return td_float_from_data(d, data, shape, ndim, out);
    case TD_I32: return td_int_from_data(d, data, shape, ndim, out);
    case TD_BOOL: return td_bool_from_data(d, data, shape, ndim, out);
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

void tdt_expect_host_impl(td_dtype dtype, const void *got, const void *want, int64_t n, float tol, const char *file,
                          int line)
{
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        double g, w;
        if (dtype == TD_F32) {
            g = ((const float *)got)[i];
            w = ((const float *)want)[i];
            ok = tdt_close((float)g, (float)w, tol);
        } else if (dtype == TD_I32) {
            g = ((const int32_t *)got)[i];
            w = ((const int32_t *)want)[i];
            ok = g == w;
        } else {
            g = ((const bool *)got)[i];
            w = ((const bool *)want)[i];
            ok = g == w;
        }
        if (!ok) {
            print_error("element %lld: got %.9g, want %.9g (tolerance %g)\n", (long long)i, g, w, (double)tol);
            _fail(file, line);
        }
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
    tdt_expect_host_impl(dtype, got, want, n, tol, file, line);
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

static void fill_input(float *v, int64_t n, bool positive, unsigned *state)
{
    for (int64_t i = 0; i < n; i++) {
        float u = next_uniform(state);
        if (positive) {
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
        if (st == TD_OK && gi == NULL)
            memset(grads[i], 0, sizeof(float) * (size_t)gn);
        else if (st == TD_OK)
            st = td_float_into_data(gi, grads[i], gn);
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
        data[i] = malloc(sizeof(float) * (size_t)k);
        ana[i] = malloc(sizeof(float) * (size_t)k);
        bal[i] = malloc(sizeof(float) * (size_t)k);
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
    float *w = malloc(sizeof(float) * (size_t)on);
    for (int64_t j = 0; j < on; j++)
        w[j] = 2.0f * next_uniform(&state) - 1.0f;
    float loss;
    if (st == TD_OK)
        st = loss_on(ad_none, fwd, ins, data, n, w, &loss, true, ana);
    if (st == TD_OK)
        st = loss_on(ad_bal, fwd, ins, data, n, w, &loss, true, bal);
    char msg[256] = "";
    const float h = 1e-2f;
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
            if (fabsf(num - ana[i][j]) > 1e-2f + 1e-2f * fabsf(ana[i][j]))
                snprintf(msg, sizeof msg, "input %d element %lld: analytic %.6g, numeric %.6g", i, (long long)j,
                         (double)ana[i][j], (double)num);
            else if (fabsf(bal[i][j] - ana[i][j]) > 1e-7f + 1e-6f * fabsf(ana[i][j]))
                snprintf(msg, sizeof msg, "input %d element %lld: NONE %.9g, BALANCED %.9g", i, (long long)j,
                         (double)ana[i][j], (double)bal[i][j]);
        }
    }
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
