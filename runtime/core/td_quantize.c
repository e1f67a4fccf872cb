/* Block-quantized tensors (docs/dtypes.md section 8): td_float_quantize,
 * td_float_dequantize, the raw-block host copies of the `_dtype` twins, the shape rule of
 * block dtypes and float_matmul_nt's one deliberate dtype mix (f32 activations, quantized
 * weights). The blocks themselves are td_quant.c's (ggml's layout and reference rules).
 * Like the casts these go through host buffers (the backend's read / write hooks). */
#include <math.h>
#include <string.h>

#include "td_internal.h"
#include "td_quant.h"

static bool is_quantized(td_dtype d)
{
    return td_dtype_valid(d) && td_dtype_rows[d].quantized;
}

td_status td_dtype_check_shape(const char *op, td_dtype dtype, const td_shape *shape)
{
    const int block = td_dtype_rows[dtype].block;
    if (block <= 1)
        return TD_OK;
    if (shape->ndim == 0 || shape->dims[shape->ndim - 1] % block != 0) {
        char buf[128];
        td_shape_format(shape, buf, sizeof buf);
        return td_error(TD_E_SHAPE,
                        "%s: a %s tensor holds blocks of %d values along its last dim, which must be a multiple of "
                        "%d; got shape %s",
                        op, td_dtype_name(dtype), block, block, buf);
    }
    return TD_OK;
}

td_status td_dtype_check_storage(const char *op, td_class cls, td_dtype dtype)
{
    if (is_quantized(dtype) && cls == TD_CLASS_FLOAT)
        return TD_OK;
    return td_dtype_check_target(op, cls, dtype);
}

static td_status not_weights(const char *op, const char *name, const td_tensor *t, const char *wname)
{
    return td_error(TD_E_UNSUPPORTED,
                    "%s: %s is %s: only %s (the weights) may be block-quantized; dequantize first "
                    "(td_float_dequantize)",
                    op, name, td_dtype_name(t->dtype), wname);
}

td_status td_check_same_dtype_or_quantized(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                           const td_tensor *t)
{
    if (is_quantized(t0->dtype))
        return not_weights(op, arg0, t0, arg);
    if (is_quantized(t->dtype)) {
        /* f16 / bf16 activations: natively where the backend's kernel reads them (Vulkan's
         * qmv.comp), else via f32 (the generated arm converts them and rounds the result back) */
        if (t0->dtype != TD_F32 && t0->dtype != TD_F16 && t0->dtype != TD_BF16)
            return td_error(TD_E_DTYPE,
                            "%s: %s is %s and %s is %s; %s weights take f32, f16 or bf16 activations: "
                            "td_float_cast(%s, TD_F32, &t)",
                            op, arg0, td_dtype_name(t0->dtype), arg, td_dtype_name(t->dtype),
                            td_dtype_name(t->dtype), arg0);
        return TD_OK;
    }
    return td_check_same_dtype(op, arg0, t0, arg, t);
}

/* Values of a float tensor as f32 in a new host buffer. */
static td_status read_f32(const char *op, const td_tensor *t, float **out)
{
    *out = NULL;
    void *raw = NULL;
    TD_TRY(td_dtype_read_host(op, t, &raw));
    if (t->dtype == TD_F32) {
        *out = raw;
        return TD_OK;
    }
    const size_t n = (size_t)t->shape.numel;
    float *f = td_malloc(n ? n * sizeof *f : 1);
    if (f == NULL) {
        td_free(raw);
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu f32 values", op, n);
    }
    td_convert_row(t->dtype, raw, TD_F32, f, n);
    td_free(raw);
    *out = f;
    return TD_OK;
}

td_status td_float_quantize(const td_tensor *t, td_dtype scheme, td_tensor **out)
{
    static const char op[] = "float_quantize";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (t == NULL)
        return td_err_null(op, "t");
    if (!td_dtype_valid(scheme))
        return td_error(TD_E_INVALID, "%s: dtype %d is not a td_dtype", op, (int)scheme);
    if (!td_dtype_rows[scheme].quantized)
        return td_error(TD_E_INVALID,
                        "%s: %s is not a block-quantized dtype (TD_Q8_0, TD_Q4_0); td_float_cast converts to it", op,
                        td_dtype_name(scheme));
    if (!td_dtype_valid(t->dtype) || td_dtype_cls(t->dtype) != TD_CLASS_FLOAT)
        return td_error(TD_E_KIND, "%s: t: expected a float tensor, got a %s tensor", op, td_dtype_name(t->dtype));
    if (t->dtype == scheme) {
        TD_TRY(td_tensor_retain((td_tensor *)t));
        *out = (td_tensor *)t;
        return TD_OK;
    }
    if (is_quantized(t->dtype))
        return td_error(TD_E_UNSUPPORTED, "%s: t is %s already: dequantize it first (td_float_dequantize)", op,
                        td_dtype_name(t->dtype));
    TD_TRY(td_dtype_check_shape(op, scheme, &t->shape));
    float *x = NULL;
    TD_TRY(read_f32(op, t, &x));
    const int64_t n = t->shape.numel;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) {
            const char *what = isnan(x[i]) ? "NaN" : "infinite";
            td_free(x);
            return td_error(TD_E_INVALID, "%s: t[%lld] (flat index) is %s, which a %s block cannot hold", op,
                            (long long)i, what, td_dtype_name(scheme));
        }
    const size_t bytes = td_dtype_bytes(scheme, n);
    /* 16-bit aligned for the scales (td_malloc returns malloc's alignment) */
    void *q = td_malloc(bytes ? bytes : 1);
    if (q == NULL) {
        td_free(x);
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu bytes of blocks", op, bytes);
    }
    if (scheme == TD_Q8_0)
        td_quantize_q8_0_unchecked(x, q, n / TD_QK);
    else
        td_quantize_q4_0_unchecked(x, q, n / TD_QK);
    td_free(x);
    const td_status st = td_dtype_make(op, t->device, scheme, &t->shape, q, out);
    td_free(q);
    return st;
}

/* The values of n / 32 blocks of dtype q (q8_0 or q4_0) into f32. */
static void dequantize(td_dtype q, const void *blocks, float *y, int64_t n)
{
    if (q == TD_Q8_0)
        td_dequantize_q8_0_unchecked(blocks, y, n / TD_QK);
    else
        td_dequantize_q4_0_unchecked(blocks, y, n / TD_QK);
}

/* t's values in dtype, into dst (room for numel values of dtype). */
static td_status dequantize_into(const char *op, const td_tensor *t, td_dtype dtype, void *dst)
{
    const int64_t n = t->shape.numel;
    void *raw = NULL;
    TD_TRY(td_dtype_read_host(op, t, &raw));
    float *f = dtype == TD_F32 ? dst : td_malloc(n ? (size_t)n * sizeof *f : 1);
    if (f == NULL) {
        td_free(raw);
        return td_error(TD_E_NOMEM, "%s: out of memory for %lld f32 values", op, (long long)n);
    }
    dequantize(t->dtype, raw, f, n);
    td_free(raw);
    if (f != dst) {
        td_convert_row(TD_F32, f, dtype, dst, (size_t)n);
        td_free(f);
    }
    return TD_OK;
}

static td_status check_quantized(const char *op, const td_tensor *t)
{
    if (!is_quantized(t->dtype))
        return td_error(TD_E_INVALID, "%s: t is %s, not a block-quantized tensor (td_float_quantize makes one)", op,
                        td_dtype_name(t->dtype));
    return TD_OK;
}

/* The backend's convert hook from a block dtype (Vulkan's qdeq.comp), where it has one:
 * TD_E_UNSUPPORTED (nothing recorded, nothing made) sends the caller to the host path. */
static td_status device_dequantize(const char *op, const td_tensor *t, td_dtype dtype, td_tensor **out)
{
    if (t->kind == TD_BACKEND_AUTODIFF || t->shape.numel == 0 || (unsigned)t->device->backend >= TD_BACKEND_COUNT)
        return TD_E_UNSUPPORTED;
    const td_backend_vtable *vt = td_backend_vtables[t->device->backend];
    if (vt == NULL || vt->convert == NULL)
        return TD_E_UNSUPPORTED;
    td_tensor *r = NULL;
    TD_TRY(td_tensor_new_on(op, t->device, dtype, &t->shape, &r));
    const td_status st = vt->convert(t, r);
    if (st != TD_OK) {
        td_tensor_release(r);
        return st;
    }
    r->ctx = td_device_context(t->device);
    *out = r;
    return TD_OK;
}

td_status td_float_dequantize(const td_tensor *t, td_dtype dtype, td_tensor **out)
{
    static const char op[] = "float_dequantize";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (t == NULL)
        return td_err_null(op, "t");
    TD_TRY(check_quantized(op, t));
    TD_TRY(td_dtype_check_target(op, TD_CLASS_FLOAT, dtype));
    const td_status dev_st = device_dequantize(op, t, dtype, out);
    if (dev_st != TD_E_UNSUPPORTED)
        return dev_st;
    const size_t n = (size_t)t->shape.numel;
    const size_t bytes = td_dtype_bytes(dtype, t->shape.numel);
    void *y = td_malloc(bytes ? bytes : 1);
    if (y == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu values", op, n);
    td_status st = dequantize_into(op, t, dtype, y);
    if (st == TD_OK)
        st = td_dtype_make(op, t->device, dtype, &t->shape, y, out);
    td_free(y);
    return st;
}

td_status td_quant_into_data(const char *op, const td_tensor *t, td_dtype dtype, void *dst, int64_t dst_len)
{
    TD_TRY(check_quantized(op, t));
    if (dtype == t->dtype) { /* the raw blocks; dst_len counts bytes */
        const size_t bytes = td_dtype_bytes(t->dtype, t->shape.numel);
        if (dst_len < 0 || (uint64_t)dst_len < (uint64_t)bytes)
            return td_error(TD_E_INVALID, "%s: dst holds %lld bytes, the %s tensor's blocks take %zu", op,
                            (long long)dst_len, td_dtype_name(t->dtype), bytes);
        if (dst == NULL && bytes > 0)
            return td_err_null(op, "dst");
        if (bytes == 0)
            return TD_OK;
        void *raw = NULL;
        TD_TRY(td_dtype_read_host(op, t, &raw));
        memcpy(dst, raw, bytes);
        td_free(raw);
        return TD_OK;
    }
    if (is_quantized(dtype))
        return td_error(TD_E_UNSUPPORTED, "%s: t is %s, not %s: dequantize first (td_float_dequantize)", op,
                        td_dtype_name(t->dtype), td_dtype_name(dtype));
    TD_TRY(td_dtype_check_target(op, TD_CLASS_FLOAT, dtype));
    if (dst_len < t->shape.numel)
        return td_error(TD_E_INVALID, "%s: dst holds %lld elements, the tensor has %lld", op, (long long)dst_len,
                        (long long)t->shape.numel);
    if (dst == NULL && t->shape.numel > 0)
        return td_err_null(op, "dst");
    if (t->shape.numel == 0)
        return TD_OK;
    return dequantize_into(op, t, dtype, dst);
}
