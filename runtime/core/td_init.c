/* Parameter initializers: PyTorch's torch.nn.init formulas for this library's weight
 * layouts, drawn with td_float_random (so seeded, and the same on every backend). */
#include <math.h>

#include "td_internal.h"
#include "td_ops.h"

/* The bias of td_init_linear / td_init_conv2d is drawn from this mix of the seed, so it
 * does not repeat the first values of the weight. */
#define BIAS_SEED_MIX 0x9E3779B97F4A7C15ull

/* A selective build (TD_OPS, TD_HAVE_OP_* from td_kinds.h) may leave out the creation ops
 * the initializers use: then they say so with TD_E_UNSUPPORTED. */
static td_status draw(td_device *device, const int64_t *shape, int ndim, td_distribution dist, float p0, float p1,
                      uint64_t seed, td_tensor **out)
{
#ifdef TD_HAVE_OP_FLOAT_RANDOM
    return td_float_random(device, shape, ndim, dist, p0, p1, seed, out);
#else
    (void)device, (void)shape, (void)ndim, (void)dist, (void)p0, (void)p1, (void)seed, (void)out;
    return td_error(TD_E_UNSUPPORTED, "init: this build leaves out float_random (TD_OPS)");
#endif
}

static td_status zeros(td_device *device, const int64_t *shape, int ndim, td_tensor **out)
{
#ifdef TD_HAVE_OP_FLOAT_ZEROS
    return td_float_zeros(device, shape, ndim, out);
#else
    (void)device, (void)shape, (void)ndim, (void)out;
    return td_error(TD_E_UNSUPPORTED, "init: this build leaves out float_zeros (TD_OPS)");
#endif
}

static td_status check_common(const char *op, td_device *device, const int64_t *shape, int ndim, td_tensor **out)
{
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (device == NULL)
        return td_err_null(op, "device");
    if (ndim < 0 || ndim > TD_MAX_DIMS)
        return td_error(TD_E_INVALID, "%s: ndim %d is outside [0, %d]", op, ndim, TD_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        return td_err_null(op, "shape");
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return td_error(TD_E_INVALID, "%s: dim %d has negative size %lld", op, i, (long long)shape[i]);
    return TD_OK;
}

/* fan_in and fan_out of a weight: 2-d [in, out] (td_float_linear's w), 3-d and more
 * [out, in / groups, kernel...] (td_float_conv2d's weight). */
static td_status fans(const char *op, const int64_t *shape, int ndim, double *fan_in, double *fan_out)
{
    if (ndim < 2)
        return td_error(TD_E_SHAPE, "%s: a weight has at least 2 dims ([in, out] or [out, in, kernel...]), not %d",
                        op, ndim);
    if (ndim == 2) {
        *fan_in = (double)shape[0];
        *fan_out = (double)shape[1];
        return TD_OK;
    }
    double receptive = 1.0;
    for (int i = 2; i < ndim; i++)
        receptive *= (double)shape[i];
    *fan_in = (double)shape[1] * receptive;
    *fan_out = (double)shape[0] * receptive;
    return TD_OK;
}

static bool empty_shape(const int64_t *shape, int ndim)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0)
            return true;
    return false;
}

static td_status uniform(td_device *device, const int64_t *shape, int ndim, double bound, uint64_t seed,
                         td_tensor **out)
{
    if (empty_shape(shape, ndim))
        return zeros(device, shape, ndim, out);
    return draw(device, shape, ndim, TD_UNIFORM, (float)-bound, (float)bound, seed, out);
}

td_status td_init_zeros(td_device *device, const int64_t *shape, int ndim, td_tensor **out)
{
    TD_TRY(check_common("init_zeros", device, shape, ndim, out));
    return zeros(device, shape, ndim, out);
}

td_status td_init_uniform(td_device *device, const int64_t *shape, int ndim, float low, float high, uint64_t seed,
                          td_tensor **out)
{
    static const char op[] = "init_uniform";
    TD_TRY(check_common(op, device, shape, ndim, out));
    if (!isfinite(low) || !isfinite(high) || !(low <= high) || !isfinite(high - low))
        return td_error(TD_E_INVALID, "%s: low %g and high %g must be finite with low <= high", op, (double)low,
                        (double)high);
    return draw(device, shape, ndim, TD_UNIFORM, low, high, seed, out);
}

td_status td_init_normal(td_device *device, const int64_t *shape, int ndim, float mean, float std, uint64_t seed,
                         td_tensor **out)
{
    static const char op[] = "init_normal";
    TD_TRY(check_common(op, device, shape, ndim, out));
    if (!isfinite(mean) || !isfinite(std) || std < 0)
        return td_error(TD_E_INVALID, "%s: mean %g must be finite and std %g finite and >= 0", op, (double)mean,
                        (double)std);
    return draw(device, shape, ndim, TD_NORMAL, mean, std, seed, out);
}

td_status td_init_xavier_uniform(td_device *device, const int64_t *shape, int ndim, float gain, uint64_t seed,
                                 td_tensor **out)
{
    static const char op[] = "init_xavier_uniform";
    TD_TRY(check_common(op, device, shape, ndim, out));
    if (!isfinite(gain) || gain < 0)
        return td_error(TD_E_INVALID, "%s: gain %g must be finite and >= 0", op, (double)gain);
    double fi = 0, fo = 0;
    TD_TRY(fans(op, shape, ndim, &fi, &fo));
    if (empty_shape(shape, ndim))
        return zeros(device, shape, ndim, out);
    return uniform(device, shape, ndim, (double)gain * sqrt(6.0 / (fi + fo)), seed, out);
}

td_status td_init_kaiming_uniform(td_device *device, const int64_t *shape, int ndim, float a, uint64_t seed,
                                  td_tensor **out)
{
    static const char op[] = "init_kaiming_uniform";
    TD_TRY(check_common(op, device, shape, ndim, out));
    if (!isfinite(a))
        return td_error(TD_E_INVALID, "%s: the negative slope a = %g must be finite", op, (double)a);
    double fi = 0, fo = 0;
    TD_TRY(fans(op, shape, ndim, &fi, &fo));
    if (empty_shape(shape, ndim))
        return zeros(device, shape, ndim, out);
    const double gain = sqrt(2.0 / (1.0 + (double)a * (double)a));
    return uniform(device, shape, ndim, gain * sqrt(3.0 / fi), seed, out);
}

/* Weight and bias both U(-1/sqrt(fan_in), 1/sqrt(fan_in)); parameters on an autodiff device. */
static td_status layer(td_device *device, const int64_t *wshape, int wndim, int64_t nbias,
                       double fan_in, uint64_t seed, td_tensor **weight, td_tensor **bias)
{
    const double bound = fan_in > 0 ? 1.0 / sqrt(fan_in) : 0.0;
    td_tensor *w = NULL, *b = NULL;
    td_status st = uniform(device, wshape, wndim, bound, seed, &w);
    if (st == TD_OK && bias != NULL)
        st = uniform(device, &nbias, 1, bound, seed ^ BIAS_SEED_MIX, &b);
    td_backend be = TD_BACKEND_CPU;
    if (st == TD_OK)
        st = td_device_backend(device, &be);
    if (st == TD_OK && be == TD_BACKEND_AUTODIFF) {
        st = td_require_grad(w);
        if (st == TD_OK && b != NULL)
            st = td_require_grad(b);
    }
    if (st != TD_OK) {
        td_tensor_release(w);
        td_tensor_release(b);
        return st;
    }
    *weight = w;
    if (bias != NULL)
        *bias = b;
    return TD_OK;
}

td_status td_init_linear(td_device *device, int64_t in_features, int64_t out_features, uint64_t seed,
                         td_tensor **weight, td_tensor **bias)
{
    static const char op[] = "init_linear";
    if (weight == NULL)
        return td_err_null(op, "weight");
    *weight = NULL;
    if (bias != NULL)
        *bias = NULL;
    if (device == NULL)
        return td_err_null(op, "device");
    if (in_features <= 0 || out_features <= 0)
        return td_error(TD_E_INVALID, "%s: in_features %lld and out_features %lld must be > 0", op,
                        (long long)in_features, (long long)out_features);
    const int64_t ws[2] = { in_features, out_features };
    return layer(device, ws, 2, out_features, (double)in_features, seed, weight, bias);
}

td_status td_init_conv2d(td_device *device, int64_t in_channels, int64_t out_channels, int64_t kh, int64_t kw,
                         int64_t groups, uint64_t seed, td_tensor **weight, td_tensor **bias)
{
    static const char op[] = "init_conv2d";
    if (weight == NULL)
        return td_err_null(op, "weight");
    *weight = NULL;
    if (bias != NULL)
        *bias = NULL;
    if (device == NULL)
        return td_err_null(op, "device");
    if (in_channels <= 0 || out_channels <= 0 || kh <= 0 || kw <= 0 || groups <= 0)
        return td_error(TD_E_INVALID,
                        "%s: in_channels %lld, out_channels %lld, kernel %lldx%lld and groups %lld must be > 0", op,
                        (long long)in_channels, (long long)out_channels, (long long)kh, (long long)kw,
                        (long long)groups);
    if (in_channels % groups != 0 || out_channels % groups != 0)
        return td_error(TD_E_INVALID, "%s: groups %lld must divide in_channels %lld and out_channels %lld", op,
                        (long long)groups, (long long)in_channels, (long long)out_channels);
    const int64_t ws[4] = { out_channels, in_channels / groups, kh, kw };
    return layer(device, ws, 4, out_channels, (double)(in_channels / groups) * (double)kh * (double)kw, seed,
                 weight, bias);
}
