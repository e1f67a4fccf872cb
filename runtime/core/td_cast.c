/* Dtype traits and conversions (docs/dtypes.md sections 5-7): the row converters of each
 * dtype, element conversion between any two stored dtypes, td_float_cast / td_int_cast,
 * and the helpers the generated `_dtype` twins call.
 *
 * Rounding (section 7): float -> narrower float rounds to nearest even, overflow gives
 * inf, subnormals and -0 are kept, NaN stays NaN (quiet, sign and top payload bits kept);
 * widening is exact and keeps NaN bits. float -> int truncates toward zero, saturates,
 * NaN gives 0. int -> int wraps modulo 2^n. int -> float rounds to nearest even. To bool
 * is != 0 (NaN true, -0 false); from bool is 0 / 1.
 *
 * A float goes through a double (every float dtype widens to it exactly); a narrowing
 * from the double rounds once: f32 directly, f16 / bf16 by rounding to f32 "to odd"
 * first (truncate, then set the last bit if anything was dropped), which makes the
 * following round-to-nearest-even to 11 or 8 bits exact (f32 keeps 13 or 16 more). */
#include <math.h>
#include <string.h>
#ifdef TD_PLANT_F16_TRUNCATE
#include <stdlib.h> /* getenv: the test-only plant below */
#endif

#include "td_half.h"
#include "td_internal.h"
#include "td_ops.h" /* td_float_random: the f32 stream of td_twin_random */

/* ---- the traits table ---- */

static void f32_copy_row(const void *src, void *dst, size_t n)
{
    memcpy(dst, src, n * sizeof(float));
}
static float f64_to_f32(double d);
static void f64_to_f32_row(const void *src, void *dst, size_t n)
{
    const double *s = src;
    float *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = f64_to_f32(s[i]);
}
static void f32_to_f64_row(const void *src, void *dst, size_t n);

const td_dtype_traits td_dtype_traits_table[TD_DTYPE_COUNT] = {
    [TD_F32] = { .size = 4, .block = 1, .to_f32_row = f32_copy_row, .from_f32_row = f32_copy_row },
    [TD_F16] = { .size = 2, .block = 1, .to_f32_row = td_f16_to_f32_row, .from_f32_row = td_f32_to_f16_row },
    [TD_BF16] = { .size = 2, .block = 1, .to_f32_row = td_bf16_to_f32_row, .from_f32_row = td_f32_to_bf16_row },
    [TD_F64] = { .size = 8, .block = 1, .to_f32_row = f64_to_f32_row, .from_f32_row = f32_to_f64_row },
    [TD_I32] = { .size = 4, .block = 1 },
    [TD_I64] = { .size = 8, .block = 1 },
    [TD_I8] = { .size = 1, .block = 1 },
    [TD_U8] = { .size = 1, .block = 1 },
    [TD_BOOL] = { .size = 1, .block = 1 },
    /* q8_0 / q4_0: the blocks' row converters come with the quantization work */
    [TD_Q8_0] = { .size = 34, .block = 32 },
    [TD_Q4_0] = { .size = 18, .block = 32 },
};

/* ---- scalars ---- */

/* f32 -> f64 keeping a NaN's bits (a C conversion would quiet a signalling NaN). */
static double f32_to_f64(float f)
{
    if (f == f)
        return (double)f;
    const uint32_t u = td_f32_bits(f);
    const uint64_t b = ((uint64_t)(u >> 31) << 63) | ((uint64_t)0x7ff << 52) | ((uint64_t)(u & 0x7fffffu) << 29);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static void f32_to_f64_row(const void *src, void *dst, size_t n)
{
    const float *s = src;
    double *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = f32_to_f64(s[i]);
}

/* d rounded to f32, to nearest even; a NaN by its bits (quiet, sign and top payload bits
 * kept), whatever the compiler makes of a NaN conversion. */
static float f64_to_f32(double d)
{
    if (d == d)
        return (float)d;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return td_f32_from_bits((uint32_t)((b >> 63) << 31) | 0x7fc00000u | (uint32_t)((b >> 29) & 0x7fffffu));
}

/* d rounded to f32 "to odd": exact values stay, others are truncated toward zero with the
 * last bit set. NaN narrows as the hardware does (quiet, top payload bits kept). */
static float f64_to_f32_odd(double d)
{
    const float f = f64_to_f32(d);
    if (d != d || (double)f == d)
        return f;
    uint32_t u = td_f32_bits(f);
    if (fabs((double)f) > fabs(d)) /* rounded away from zero (inf included): step back */
        u -= 1u;
    return td_f32_from_bits(u | 1u);
}

/* i64 -> f32 "to odd", for the narrowing to f16 / bf16 that follows. */
static float i64_to_f32_odd(int64_t v)
{
    uint64_t m = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
    float f;
    if (m < ((uint64_t)1 << 24)) {
        f = (float)m;
    } else {
        int sh = 0;
        while ((m >> sh) >= ((uint64_t)1 << 24))
            sh++;
        uint64_t q = m >> sh;
        if (m & (((uint64_t)1 << sh) - 1u))
            q |= 1u;
        f = ldexpf((float)q, sh); /* q < 2^24: exact */
    }
    return v < 0 ? -f : f;
}

static double load_float(td_dtype dt, const void *p, size_t i)
{
    switch (dt) {
    case TD_F32: return f32_to_f64(((const float *)p)[i]);
    case TD_F64: return ((const double *)p)[i];
    case TD_F16: return f32_to_f64(td_f16_to_f32(((const uint16_t *)p)[i]));
    case TD_BF16: return f32_to_f64(td_bf16_to_f32(((const uint16_t *)p)[i]));
    default: return 0.0;
    }
}

static int64_t load_int(td_dtype dt, const void *p, size_t i)
{
    switch (dt) {
    case TD_I32: return ((const int32_t *)p)[i];
    case TD_I64: return ((const int64_t *)p)[i];
    case TD_I8: return ((const int8_t *)p)[i];
    case TD_U8: return ((const uint8_t *)p)[i];
    case TD_BOOL: return ((const bool *)p)[i] ? 1 : 0;
    default: return 0;
    }
}

static void store_float(td_dtype dt, void *p, size_t i, double d)
{
    switch (dt) {
    case TD_F64: ((double *)p)[i] = d; break;
    case TD_F32: ((float *)p)[i] = f64_to_f32(d); break;
    case TD_F16: ((uint16_t *)p)[i] = td_f32_to_f16(f64_to_f32_odd(d)); break;
    case TD_BF16: ((uint16_t *)p)[i] = td_f32_to_bf16(f64_to_f32_odd(d)); break;
    default: break;
    }
}

/* Wraps v modulo 2^n into the int dtype (two's complement bit patterns, no overflow). */
static void store_int(td_dtype dt, void *p, size_t i, int64_t v)
{
    const uint64_t u = (uint64_t)v;
    switch (dt) {
    case TD_I64: ((int64_t *)p)[i] = v; break;
    case TD_I32: {
        const uint32_t w = (uint32_t)u;
        int32_t r;
        memcpy(&r, &w, sizeof r);
        ((int32_t *)p)[i] = r;
        break;
    }
    case TD_I8: {
        const uint8_t w = (uint8_t)u;
        int8_t r;
        memcpy(&r, &w, sizeof r);
        ((int8_t *)p)[i] = r;
        break;
    }
    case TD_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case TD_BOOL: ((bool *)p)[i] = v != 0; break;
    default: break;
    }
}

/* An int dtype's range, for the saturating float -> int conversion. */
static void int_range(td_dtype dt, double *lo, double *hi, int64_t *ilo, int64_t *ihi)
{
    switch (dt) {
    case TD_I64: *ilo = INT64_MIN; *ihi = INT64_MAX; break;
    case TD_I8: *ilo = INT8_MIN; *ihi = INT8_MAX; break;
    case TD_U8: *ilo = 0; *ihi = UINT8_MAX; break;
    default: *ilo = INT32_MIN; *ihi = INT32_MAX; break;
    }
    *lo = (double)*ilo; /* exact: -2^63, -2^31, -128, 0 */
    *hi = (double)*ihi; /* 2^63 - 1 rounds to 2^63, which no int64 reaches */
}

static int64_t float_to_int(double d, td_dtype to)
{
    double lo, hi;
    int64_t ilo, ihi;
    int_range(to, &lo, &hi, &ilo, &ihi);
    if (d != d)
        return 0;
    if (d <= lo)
        return ilo;
    if (d >= hi)
        return ihi;
    return (int64_t)d; /* truncates toward zero; in range */
}

static void store_int_as_float(td_dtype to, void *dst, size_t i, int64_t v)
{
    switch (to) {
    case TD_F32: ((float *)dst)[i] = (float)v; break;   /* one rounding, to nearest even */
    case TD_F64: ((double *)dst)[i] = (double)v; break; /* likewise */
    case TD_F16: ((uint16_t *)dst)[i] = td_f32_to_f16(i64_to_f32_odd(v)); break;
    case TD_BF16: ((uint16_t *)dst)[i] = td_f32_to_bf16(i64_to_f32_odd(v)); break;
    default: break;
    }
}

bool td_dtype_convertible(td_dtype d)
{
    return td_dtype_valid(d) && !td_dtype_rows[d].quantized;
}

void td_convert_row(td_dtype from, const void *src, td_dtype to, void *dst, size_t n)
{
    if (from == to) {
        memcpy(dst, src, n * (size_t)td_dtype_rows[from].size);
        return;
    }
    const td_class fc = td_dtype_cls(from), tc = td_dtype_cls(to);
    if (from == TD_F32 && td_dtype_traits_table[to].from_f32_row != NULL) {
        td_dtype_traits_table[to].from_f32_row(src, dst, n);
        return;
    }
    if (to == TD_F32 && (from == TD_F16 || from == TD_BF16)) {
        td_dtype_traits_table[from].to_f32_row(src, dst, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (fc == TD_CLASS_FLOAT) {
            const double d = load_float(from, src, i);
            if (tc == TD_CLASS_FLOAT)
                store_float(to, dst, i, d);
            else if (tc == TD_CLASS_BOOL)
                ((bool *)dst)[i] = d != 0.0; /* NaN != 0 */
            else
                store_int(to, dst, i, float_to_int(d, to));
        } else {
            const int64_t v = load_int(from, src, i);
            if (tc == TD_CLASS_FLOAT)
                store_int_as_float(to, dst, i, v);
            else
                store_int(to, dst, i, v);
        }
    }
}

/* ---- tensors ---- */

static const char *class_word(td_class c)
{
    return c == TD_CLASS_FLOAT ? "float" : c == TD_CLASS_INT ? "int" : "bool";
}

td_status td_dtype_check_target(const char *op, td_class cls, td_dtype dtype)
{
    if (!td_dtype_valid(dtype))
        return td_error(TD_E_INVALID, "%s: dtype %d is not a td_dtype", op, (int)dtype);
    if (td_dtype_cls(dtype) != cls)
        return td_error(TD_E_KIND, "%s: dtype %s is %s %s dtype, not %s %s one", op, td_dtype_name(dtype),
                        td_dtype_cls(dtype) == TD_CLASS_INT ? "an" : "a", class_word(td_dtype_cls(dtype)),
                        cls == TD_CLASS_INT ? "an" : "a", class_word(cls));
    if (td_dtype_rows[dtype].quantized)
        return td_error(TD_E_UNSUPPORTED, "%s: dtype %s is block-quantized: quantize with td_float_quantize", op,
                        td_dtype_name(dtype));
    return TD_OK;
}

/* The primitive a tensor's storage lives in (the inner one of an autodiff tensor). */
static const td_backend_vtable *vtable_of(const char *op, td_device *device)
{
    const td_backend_vtable *vt = (unsigned)device->backend < TD_BACKEND_COUNT ? td_backend_vtables[device->backend]
                                                                               : NULL;
    if (vt == NULL)
        td_error(TD_E_BACKEND_MISMATCH, "%s: backend %s is not enabled in this build", op,
                 td_backend_name(device->backend));
    return vt;
}

td_status td_dtype_make(const char *op, td_device *device, td_dtype dtype, const td_shape *shape, const void *host,
                        td_tensor **out)
{
    *out = NULL;
    td_device *place = device->backend == TD_BACKEND_AUTODIFF ? device->inner : device;
    const td_backend_vtable *vt = vtable_of(op, place);
    if (vt == NULL)
        return TD_E_BACKEND_MISMATCH;
    if (vt->write == NULL)
        return td_error(TD_E_UNSUPPORTED, "%s: backend %s cannot write host data", op, vt->name);
    td_tensor *r = NULL;
    const td_autodiff_context off = { .enabled = false, .strategy = TD_CHECKPOINT_NONE };
    TD_TRY(td_tensor_new_on(op, place, dtype, shape, &r));
    r->ctx = off;
    if (shape->numel > 0) {
        const td_status st = vt->write(r, host);
        if (st != TD_OK) {
            td_tensor_release(r);
            return st;
        }
    }
    if (device->backend != TD_BACKEND_AUTODIFF) {
        r->ctx = td_device_context(device);
        *out = r;
        return TD_OK;
    }
    return td_tensor_wrap(op, device, r, td_device_context(device), out);
}

/* The tensor's storage, read into a new host buffer of numel elements of its dtype. */
td_status td_dtype_read_host(const char *op, const td_tensor *t, void **host)
{
    *host = NULL;
    const td_tensor *p = t->kind == TD_BACKEND_AUTODIFF ? t->inner : t;
    const td_backend_vtable *vt = vtable_of(op, p->device);
    if (vt == NULL)
        return TD_E_BACKEND_MISMATCH;
    if (vt->read == NULL)
        return td_error(TD_E_UNSUPPORTED, "%s: backend %s cannot read data back", op, vt->name);
    const size_t bytes = td_dtype_bytes(p->dtype, p->shape.numel);
    void *buf = td_malloc(bytes ? bytes : 1);
    if (buf == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu bytes", op, bytes);
    if (p->shape.numel > 0) {
        const td_status st = vt->read(p, buf);
        if (st != TD_OK) {
            td_free(buf);
            return st;
        }
    }
    *host = buf;
    return TD_OK;
}

static td_status check_tensor(const char *op, const td_tensor *t, td_class cls)
{
    if (!td_dtype_valid(t->dtype) || td_dtype_cls(t->dtype) != cls)
        return td_error(TD_E_KIND, "%s: t: expected %s %s tensor, got a %s tensor", op, cls == TD_CLASS_INT ? "an" : "a",
                        class_word(cls), td_dtype_name(t->dtype));
    if (td_dtype_rows[t->dtype].quantized)
        return td_error(TD_E_UNSUPPORTED, "%s: t is %s (block-quantized): dequantize it first (td_float_dequantize)", op,
                        td_dtype_name(t->dtype));
    return TD_OK;
}

/* The backend's convert hook, where it has one for this pair of dtypes; TD_E_UNSUPPORTED
 * (nothing recorded, nothing made) sends the caller to the host path. */
static td_status device_convert(const char *op, const td_tensor *t, td_dtype dtype, td_tensor **out)
{
    const td_tensor *p = t->kind == TD_BACKEND_AUTODIFF ? t->inner : t;
    const td_backend_vtable *vt = (unsigned)p->device->backend < TD_BACKEND_COUNT
                                      ? td_backend_vtables[p->device->backend]
                                      : NULL;
    if (vt == NULL || vt->convert == NULL || p->shape.numel == 0)
        return TD_E_UNSUPPORTED;
    td_tensor *r = NULL;
    TD_TRY(td_tensor_new_on(op, p->device, dtype, &p->shape, &r));
    r->ctx = (td_autodiff_context){ .enabled = false, .strategy = TD_CHECKPOINT_NONE };
    const td_status st = vt->convert(p, r);
    if (st != TD_OK) {
        td_tensor_release(r);
        return st;
    }
    if (t->device->backend != TD_BACKEND_AUTODIFF) {
        r->ctx = td_device_context(t->device);
        *out = r;
        return TD_OK;
    }
    return td_tensor_wrap(op, t->device, r, td_device_context(t->device), out);
}

td_status td_dtype_convert(const char *op, const td_tensor *t, td_class from_cls, td_dtype dtype, td_tensor **out)
{
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (t == NULL)
        return td_err_null(op, "t");
    TD_TRY(check_tensor(op, t, from_cls));
    TD_TRY(td_dtype_check_target(op, td_dtype_class(dtype), dtype)); /* any class; invalid values refused */
    if (t->dtype == dtype) {
        TD_TRY(td_tensor_retain((td_tensor *)t));
        *out = (td_tensor *)t;
        return TD_OK;
    }
    if (t->kind == TD_BACKEND_AUTODIFF) {
        /* A float -> float cast of a tracked tensor goes on the tape (its gradient is cast
         * back); any other converts the inner tensor: an int or bool result is never
         * tracked, and a float made from one is a leaf (docs/dtypes.md section 9). */
        TD_TRY(td_guard(op, t));
        if (t->node != NULL && from_cls == TD_CLASS_FLOAT && td_dtype_cls(dtype) == TD_CLASS_FLOAT) {
            const td_cast_record_fn record = atomic_load_explicit(&td_cast_record_hook, memory_order_relaxed);
            if (record == NULL)
                return td_error(TD_E_INTERNAL, "%s: a tracked tensor but no autodiff engine", op);
            return record(op, t, dtype, out);
        }
        td_tensor *r = NULL;
        TD_TRY(td_dtype_convert(op, t->inner, from_cls, dtype, &r));
        return td_tensor_wrap(op, t->device, r, t->ctx, out);
    }
    const td_status dev_st = device_convert(op, t, dtype, out);
    if (dev_st != TD_E_UNSUPPORTED)
        return dev_st;
    void *src = NULL;
    TD_TRY(td_dtype_read_host(op, t, &src));
    const size_t n = (size_t)t->shape.numel;
    const size_t bytes = n * td_dtype_size(dtype);
    void *dst = td_malloc(bytes ? bytes : 1);
    if (dst == NULL) {
        td_free(src);
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu bytes", op, bytes);
    }
    td_convert_row(t->dtype, src, dtype, dst, n);
#ifdef TD_PLANT_F16_TRUNCATE
    /* Test-only (compiled into the fixture library of tests/fixture, on with TD_PLANT_F16_TRUNCATE=1 in the
     * environment): float_cumsum's f16 results in the normal range truncated toward zero
     * instead of rounded to nearest even. The per-dtype comparisons must see it
     * (docs/comparisons.md, CTest f16_planted_truncation_found). */
    if (dtype == TD_F16 && t->dtype == TD_F32 && strcmp(op, "float_cumsum") == 0 && getenv("TD_PLANT_F16_TRUNCATE") != NULL)
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, (const char *)src + 4 * i, sizeof u);
            const uint32_t ax = u & 0x7fffffffu;
            if (ax >= 0x38800000u && ax < 0x477fe000u)
                ((uint16_t *)dst)[i] = (uint16_t)(((u >> 16) & 0x8000u) | (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu));
        }
#endif
    td_free(src);
    const td_status st = td_dtype_make(op, t->device, dtype, &t->shape, dst, out);
    td_free(dst);
    return st;
}

td_status td_float_cast(const td_tensor *t, td_dtype dtype, td_tensor **out)
{
    static const char op[] = "float_cast";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    TD_TRY(td_dtype_check_target(op, TD_CLASS_FLOAT, dtype));
    return td_dtype_convert(op, t, TD_CLASS_FLOAT, dtype, out);
}

td_status td_int_cast(const td_tensor *t, td_dtype dtype, td_tensor **out)
{
    static const char op[] = "int_cast";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    TD_TRY(td_dtype_check_target(op, TD_CLASS_INT, dtype));
    return td_dtype_convert(op, t, TD_CLASS_INT, dtype, out);
}

/* ---- the generated `_dtype` twins' bodies ---- */

td_status td_twin_from_data(const char *op, td_device *device, td_dtype dtype, const void *data, const int64_t *shape,
                            int shape_len, td_tensor **out)
{
    *out = NULL;
    if (device == NULL)
        return td_err_null(op, "device");
    if (shape_len < 0)
        return td_error(TD_E_INVALID, "%s: shape_len is %d; a length cannot be negative", op, shape_len);
    if (shape == NULL && shape_len > 0)
        return td_err_null(op, "shape");
    td_shape s;
    TD_TRY(td_shape_from(op, shape, shape_len, &s));
    if (data == NULL && s.numel > 0)
        return td_err_null(op, "data");
    return td_dtype_make(op, device, dtype, &s, data, out);
}

td_status td_twin_fill(const char *op, td_device *device, td_dtype dtype, const int64_t *shape, int shape_len,
                       double fvalue, int64_t ivalue, td_tensor **out)
{
    *out = NULL;
    if (device == NULL)
        return td_err_null(op, "device");
    if (shape_len < 0)
        return td_error(TD_E_INVALID, "%s: shape_len is %d; a length cannot be negative", op, shape_len);
    if (shape == NULL && shape_len > 0)
        return td_err_null(op, "shape");
    td_shape s;
    TD_TRY(td_shape_from(op, shape, shape_len, &s));
    const size_t esz = td_dtype_size(dtype), n = (size_t)s.numel;
    unsigned char one[16];
    if (td_dtype_cls(dtype) == TD_CLASS_FLOAT)
        td_convert_row(TD_F64, &fvalue, dtype, one, 1);
    else
        td_convert_row(TD_I64, &ivalue, dtype, one, 1);
    unsigned char *buf = td_malloc(n ? n * esz : 1);
    if (buf == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu elements", op, n);
    for (size_t i = 0; i < n; i++)
        memcpy(buf + i * esz, one, esz);
    const td_status st = td_dtype_make(op, device, dtype, &s, buf, out);
    td_free(buf);
    return st;
}

/* splitmix64's finalizer: the counter-based hash of float_random (the backends' f32 kernels use
 * the same one, so that f64 draws the same stream to 53 bits). */
static uint64_t random_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

td_status td_twin_random(const char *op, td_device *device, td_dtype dtype, const int64_t *shape, int shape_len,
                         td_distribution dist, double p0, double p1, uint64_t seed, td_tensor **out)
{
    *out = NULL;
    if (dtype != TD_F64) {
        /* f32: the op itself (its checks, its kernel); f16 / bf16: those values rounded once. The
         * twin exists only where the op does (a selective build, TD_OPS, may leave both out). */
        td_tensor *t = NULL;
#ifdef TD_HAVE_OP_FLOAT_RANDOM
        TD_TRY(td_float_random(device, shape, shape_len, dist, (float)p0, (float)p1, seed, &t));
#else
        return td_error(TD_E_UNSUPPORTED, "%s: this build leaves out float_random (TD_OPS)", op);
#endif
        if (dtype == TD_F32) {
            *out = t;
            return TD_OK;
        }
        const td_status st = td_float_cast(t, dtype, out);
        td_tensor_release(t);
        return st;
    }
    if (device == NULL)
        return td_err_null(op, "device");
    if (dist != TD_UNIFORM && dist != TD_NORMAL)
        return td_error(TD_E_INVALID, "%s: dist is %d, not TD_UNIFORM or TD_NORMAL", op, (int)dist);
    if (!isfinite(p0) || !isfinite(p1))
        return td_error(TD_E_INVALID, "%s: the parameters must be finite (got %g and %g)", op, p0, p1);
    if (dist == TD_UNIFORM && !(p0 <= p1 && isfinite(p1 - p0)))
        return td_error(TD_E_INVALID, "%s: uniform needs low <= high and a finite range (got [%g, %g))", op, p0, p1);
    if (dist == TD_NORMAL && p1 < 0)
        return td_error(TD_E_INVALID, "%s: normal needs a standard deviation >= 0 (got %g)", op, p1);
    if (shape_len < 0)
        return td_error(TD_E_INVALID, "%s: shape_len is %d; a length cannot be negative", op, shape_len);
    if (shape == NULL && shape_len > 0)
        return td_err_null(op, "shape");
    td_shape s;
    TD_TRY(td_shape_from(op, shape, shape_len, &s));
    const size_t n = (size_t)s.numel;
    double *v = td_malloc(n ? n * sizeof *v : 1);
    if (v == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu elements", op, n);
    /* element i from the hashes of 2 i (and 2 i + 1 for normal) as the f32 kernels, keeping the
     * top 53 bits where they keep 24: uniform p0 + (p1 - p0) u, u in [0, 1), below p1; normal
     * p0 + p1 z by Box-Muller, u1 in (0, 1] */
    const double below = p1 > p0 ? nextafter(p1, p0) : p0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t h0 = random_mix(seed ^ random_mix(2u * (uint64_t)i));
        if (dist == TD_NORMAL) {
            const uint64_t h1 = random_mix(seed ^ random_mix(2u * (uint64_t)i + 1u));
            const double u1 = (double)((h0 >> 11) + 1u) * 0x1p-53, u2 = (double)(h1 >> 11) * 0x1p-53;
            v[i] = p0 + p1 * (sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2));
        } else {
            const double x = p0 + (p1 - p0) * ((double)(h0 >> 11) * 0x1p-53);
            v[i] = (p1 > p0 && x >= p1) ? below : x;
        }
    }
    const td_status st = td_dtype_make(op, device, TD_F64, &s, v, out);
    td_free(v);
    return st;
}

td_status td_twin_into_data(const char *op, td_class cls, const td_tensor *t, td_dtype dtype, void *dst,
                            int64_t dst_len)
{
    if (t == NULL)
        return td_err_null(op, "t");
    if (cls == TD_CLASS_FLOAT && td_dtype_valid(t->dtype) && td_dtype_rows[t->dtype].quantized)
        return td_quant_into_data(op, t, dtype, dst, dst_len);
    TD_TRY(check_tensor(op, t, cls));
    TD_TRY(td_dtype_check_target(op, cls, dtype));
    if (dst_len < t->shape.numel)
        return td_error(TD_E_INVALID, "%s: dst holds %lld elements, the tensor has %lld", op, (long long)dst_len,
                        (long long)t->shape.numel);
    if (dst == NULL && t->shape.numel > 0)
        return td_err_null(op, "dst");
    void *src = NULL;
    TD_TRY(td_dtype_read_host(op, t, &src));
    td_convert_row(t->dtype, src, dtype, dst, (size_t)t->shape.numel);
    td_free(src);
    return TD_OK;
}

/* ---- the mixing check and the arms' dtype errors ---- */

td_status td_check_same_dtype_slow(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                   const td_tensor *t)
{
    if (t0->dtype == t->dtype)
        return TD_OK;
    if (td_dtype_valid(t0->dtype) && td_dtype_valid(t->dtype) &&
        (td_dtype_rows[t0->dtype].quantized || td_dtype_rows[t->dtype].quantized))
        return td_error(TD_E_DTYPE,
                        "%s: %s is %s and %s is %s; a block-quantized tensor takes part only in float_matmul_nt "
                        "(as its b): dequantize it first (td_float_dequantize)",
                        op, arg0, td_dtype_name(t0->dtype), arg, td_dtype_name(t->dtype));
    const char *fn = td_dtype_cls(t0->dtype) == TD_CLASS_FLOAT ? "td_float_cast"
                     : td_dtype_cls(t0->dtype) == TD_CLASS_INT ? "td_int_cast"
                                                               : NULL;
    char up[16];
    size_t k = 0;
    for (const char *c = td_dtype_name(t0->dtype); *c && k + 1 < sizeof up; c++)
        up[k++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
    up[k] = '\0';
    if (fn == NULL)
        return td_error(TD_E_DTYPE, "%s: %s is %s and %s is %s", op, arg0, td_dtype_name(t0->dtype), arg,
                        td_dtype_name(t->dtype));
    return td_error(TD_E_DTYPE, "%s: %s is %s and %s is %s; cast one of them: %s(%s, TD_%s, &t)", op, arg0,
                    td_dtype_name(t0->dtype), arg, td_dtype_name(t->dtype), fn, arg, up);
}

td_status td_err_dtype_unsupported(const char *op, const char *backend, const td_tensor *t)
{
    const td_dtype d = t->dtype;
    if (td_dtype_valid(d) && td_dtype_rows[d].quantized)
        return td_error(TD_E_UNSUPPORTED, "%s: dtype %s is not computed by %s: dequantize first (td_float_dequantize)",
                        op, td_dtype_name(d), backend);
    const char *fn = td_dtype_class(d) == TD_CLASS_FLOAT ? "td_float_cast" : "td_int_cast";
    const char *def = td_dtype_class(d) == TD_CLASS_FLOAT ? "TD_F32" : "TD_I32";
    return td_error(TD_E_UNSUPPORTED, "%s: dtype %s is not computed by %s: cast first (%s(t, %s, &t))", op,
                    td_dtype_name(d), backend, fn, def);
}

/* ---- "via f32": the generated arms' path for a stored dtype the kernel lacks ---- */

bool td_dtype_via_f32(td_dtype d, unsigned computed)
{
    return td_dtype_valid(d) && td_dtype_rows[d].via == TD_F32 && !td_dtype_rows[d].quantized &&
           ((computed >> TD_F32) & 1u);
}

td_status td_via_in(const char *op, const td_tensor *t, unsigned computed, td_tensor **out)
{
    *out = NULL;
    if ((computed >> t->dtype) & 1u) {
        TD_TRY(td_tensor_retain((td_tensor *)t));
        *out = (td_tensor *)t;
        return TD_OK;
    }
    return td_dtype_convert(op, t, TD_CLASS_FLOAT, TD_F32, out);
}

td_status td_opmath_in(const char *op, const td_tensor *t, td_tensor **out)
{
    *out = NULL;
    if (!td_opmath_f32(t->dtype)) {
        TD_TRY(td_tensor_retain((td_tensor *)t));
        *out = (td_tensor *)t;
        return TD_OK;
    }
    /* an autodiff tensor's cast goes on the tape when it is tracked (td_dtype_convert) */
    return td_dtype_convert(op, t, TD_CLASS_FLOAT, TD_F32, out);
}

td_status td_via_out(const char *op, td_tensor *r, td_dtype dtype, td_autodiff_context ctx, td_tensor **out)
{
    *out = NULL;
    if (td_dtype_cls(r->dtype) != TD_CLASS_FLOAT || r->dtype == dtype) {
        TD_TRY(td_tensor_retain(r));
        *out = r;
        return TD_OK;
    }
    TD_TRY(td_dtype_convert(op, r, TD_CLASS_FLOAT, dtype, out));
    (*out)->ctx = ctx;
    return TD_OK;
}
