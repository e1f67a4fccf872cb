/* Vulkan backend: creation ops, host transfers and copies between devices. */
#include <math.h>

#include "td_half.h"
#include "vk_internal.h"

td_status vk_fill(const char *op, td_tensor *out, uint32_t word)
{
    const uint32_t p[4] = { (uint32_t)td_be_numel(out), VK_U_FILL, word, 0 };
    vk_buf *const bufs[4] = { NULL, NULL, NULL, vk_buf_of(out) };
    return vk_dispatch_unary(vk_of(td_be_device(out)), op, p[1], p, 4, bufs, td_be_numel(out));
}

td_status td_vulkan_float_from_data(const float *data, const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return td_vulkan_write(out, data);
}

td_status td_vulkan_int_from_data(const int32_t *data, const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return td_vulkan_write(out, data);
}

td_status td_vulkan_bool_from_data(const bool *data, const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return td_vulkan_write(out, data);
}

td_status td_vulkan_float_zeros(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return vk_fill("float_zeros", out, 0u);
}

td_status td_vulkan_int_zeros(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return vk_fill("int_zeros", out, 0u);
}

td_status td_vulkan_float_ones(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return vk_fill("float_ones", out, vk_f2u(1.0f));
}

td_status td_vulkan_int_ones(const int64_t *shape, int shape_len, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return vk_fill("int_ones", out, 1u);
}

td_status td_vulkan_float_full(const int64_t *shape, int shape_len, float value, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return vk_fill("float_full", out, vk_f2u(value));
}

td_status td_vulkan_int_full(const int64_t *shape, int shape_len, int32_t value, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return vk_fill("int_full", out, (uint32_t)value);
}

td_status td_vulkan_int_arange(int64_t start, int64_t end, int64_t step, td_tensor *out)
{
    (void)end;
    /* start + i*step truncated to int32 is the same as the sum in wrapping 32-bit arithmetic. */
    const uint32_t p[4] = { (uint32_t)td_be_numel(out), VK_U_ARANGE, (uint32_t)(uint64_t)start,
                            (uint32_t)(uint64_t)step };
    vk_buf *const bufs[4] = { NULL, NULL, NULL, vk_buf_of(out) };
    return vk_dispatch_unary(vk_of(td_be_device(out)), "int_arange", p[1], p, 4, bufs, td_be_numel(out));
}

/* The CPU backend's generator (see runtime/cpu/cpu_device.c), computed on the host and uploaded
 * so that the same seed gives bit-identical values on both backends. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

td_status td_vulkan_float_random(const int64_t *shape, int shape_len, td_distribution dist, float p0, float p1,
                                 uint64_t seed, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    const int64_t n = td_be_numel(out);
    float *p = td_malloc((size_t)n * sizeof *p);
    if (p == NULL)
        return td_error(TD_E_NOMEM, "float_random: vulkan: out of memory for %lld host values", (long long)n);
    if (dist == TD_NORMAL) {
        for (int64_t i = 0; i < n; i++) {
            const uint64_t k = 2u * (uint64_t)i;
            const uint64_t h0 = mix(seed ^ mix(k));
            const uint64_t h1 = mix(seed ^ mix(k + 1u));
            const float u1 = (float)((h0 >> 40) + 1u) * 0x1p-24f;
            const float u2 = (float)(h1 >> 40) * 0x1p-24f;
            const float z = sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
            p[i] = p0 + p1 * z;
        }
    } else {
        const float below = p1 > p0 ? nextafterf(p1, p0) : p0;
        for (int64_t i = 0; i < n; i++) {
            const float u = (float)(mix(seed ^ mix(2u * (uint64_t)i)) >> 40) * 0x1p-24f;
            const float v = p0 + (p1 - p0) * u;
            p[i] = (p1 > p0 && v >= p1) ? below : v;
        }
    }
    const td_status st = td_vulkan_write(out, p);
    td_free(p);
    return st;
}

/* As td_cpu_int_random (the same splitmix64 values), computed on the host and uploaded. */
td_status td_vulkan_int_random(const int64_t *shape, int shape_len, int32_t low, int32_t high, uint64_t seed,
                               td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    const int64_t n = td_be_numel(out);
    int32_t *p = td_malloc((size_t)n * sizeof *p);
    if (p == NULL)
        return td_error(TD_E_NOMEM, "int_random: vulkan: out of memory for %lld host values", (long long)n);
    const uint64_t range = (uint64_t)((int64_t)high - (int64_t)low); /* 1 .. 2^32 - 1 */
    for (int64_t i = 0; i < n; i++) {
        const uint64_t h = mix(seed ^ mix(2u * (uint64_t)i));
        const uint64_t off = ((h >> 32) * range) >> 32;
        p[i] = (int32_t)((int64_t)low + (int64_t)off);
    }
    const td_status st = td_vulkan_write(out, p);
    td_free(p);
    return st;
}

/* f16 / bf16 / f64: the raw elements read back and converted on the host (widened exactly, f64
 * rounded once to f32), as the CPU's reads of those dtypes do. */
td_status td_vulkan_float_into_data(const td_tensor *a, float *dst)
{
    if (td_be_dtype(a) == TD_F32)
        return td_vulkan_read(a, dst);
    if (td_be_dtype(a) != TD_F16 && td_be_dtype(a) != TD_BF16 && td_be_dtype(a) != TD_F64)
        return td_error(TD_E_UNSUPPORTED, "float_into_data: vulkan: no read of %s", td_dtype_name(td_be_dtype(a)));
    const size_t n = (size_t)td_be_numel(a);
    void *raw = td_malloc(td_dtype_bytes(td_be_dtype(a), td_be_numel(a)) + 1u);
    if (raw == NULL)
        return td_error(TD_E_NOMEM, "float_into_data: vulkan: out of memory for %zu host values", n);
    const td_status st = td_vulkan_read(a, raw);
    if (st == TD_OK) {
        for (size_t i = 0; i < n; i++) {
            if (td_be_dtype(a) == TD_F64)
                dst[i] = (float)((const double *)raw)[i];
            else if (td_be_dtype(a) == TD_F16)
                dst[i] = td_f16_to_f32(((const uint16_t *)raw)[i]);
            else
                dst[i] = td_bf16_to_f32(((const uint16_t *)raw)[i]);
        }
    }
    td_free(raw);
    return st;
}

td_status td_vulkan_int_into_data(const td_tensor *a, int32_t *dst)
{
    return td_vulkan_read(a, dst);
}

td_status td_vulkan_bool_into_data(const td_tensor *a, bool *dst)
{
    return td_vulkan_read(a, dst);
}

/* Same device: a copy in the batch. Another Vulkan device: through host memory. */
static td_status to_device(const char *op, const td_tensor *a, td_tensor *out)
{
    if (td_be_device(a) == td_be_device(out)) {
        /* word by word, whatever the dtype's size (storage is whole words) */
        const int64_t words = (int64_t)(vk_storage_bytes(a) / 4u);
        const uint32_t p[4] = { (uint32_t)words, VK_U_COPY, 0, 0 };
        vk_buf *const bufs[4] = { vk_buf_of(a), NULL, NULL, vk_buf_of(out) };
        return vk_dispatch_unary(vk_of(td_be_device(a)), op, p[1], p, 4, bufs, words);
    }
    const size_t bytes = td_dtype_bytes(td_be_dtype(a), td_be_numel(a));
    void *host = td_malloc(bytes);
    if (host == NULL)
        return td_error(TD_E_NOMEM, "%s: vulkan: out of memory for %zu bytes of host staging", op, bytes);
    td_status st = td_vulkan_read(a, host);
    if (st == TD_OK)
        st = td_vulkan_write(out, host);
    td_free(host);
    return st;
}

td_status td_vulkan_float_to_device(const td_tensor *a, td_tensor *out)
{
    return to_device("float_to_device", a, out);
}

td_status td_vulkan_int_to_device(const td_tensor *a, td_tensor *out)
{
    return to_device("int_to_device", a, out);
}

td_status td_vulkan_bool_to_device(const td_tensor *a, td_tensor *out)
{
    return to_device("bool_to_device", a, out);
}

/* cvt.comp's dtype codes (half.glsl: DT_F32, DT_F16, DT_BF16); -1 for a dtype it lacks. */
static int cvt_code(td_dtype dt)
{
    return dt == TD_F32 ? 0 : dt == TD_F16 ? 1 : dt == TD_BF16 ? 2 : -1;
}

/* The convert hook (vtable): f32, f16 and bf16 into one another on the device, bit for bit as
 * the CPU's td_convert_row, and q8_0 / q4_0 into those three (td_float_dequantize; exact into
 * f32, then rounded once as the CPU's dequantize does); other pairs (f64, the int dtypes) go
 * through the host. */
td_status td_vulkan_convert(const td_tensor *t, td_tensor *out)
{
    if (td_be_dtype(t) == TD_Q8_0 || td_be_dtype(t) == TD_Q4_0) { /* float_dequantize: qdeq.comp, then cvt.comp */
        if (td_be_dtype(out) == TD_F32)
            return vk_dequantize(t, out);
        if (cvt_code(td_be_dtype(out)) < 0)
            return TD_E_UNSUPPORTED;
        td_tensor *f = NULL;
        TD_TRY(td_tensor_new_on("float_dequantize", td_be_device(t), TD_F32, td_be_shape(t), &f));
        td_status st = vk_dequantize(t, f);
        if (st == TD_OK)
            st = td_vulkan_convert(f, out);
        td_tensor_release(f);
        return st;
    }
    const int from = cvt_code(td_be_dtype(t)), to = cvt_code(td_be_dtype(out));
    if (from < 0 || to < 0 || from == to)
        return TD_E_UNSUPPORTED; /* no message: the caller converts through the host */
    TD_TRY(vk_check_size("float_cast", td_be_numel(t)));
    vk_dev *d = vk_of(td_be_device(t));
    vk_lock(d);
    const bool s16 = d->use_s16;
    vk_unlock(d);
    const uint32_t spec[2] = { (uint32_t)from, (uint32_t)to };
    VkPipeline *slot = &d->cvt_pipes[(s16 ? 9 : 0) + from * 3 + to];
    const uint32_t p[1] = { (uint32_t)td_be_numel(t) };
    vk_buf *const bufs[4] = { vk_buf_of(t), NULL, NULL, vk_buf_of(out) };
    /* one invocation per pair of elements, 256 per workgroup */
    const uint64_t pairs = ((uint64_t)td_be_numel(t) + 1u) / 2u;
    const uint64_t groups = (pairs + 255u) / 256u;
    uint32_t gx = (uint32_t)groups, gy = 1;
    if (groups > d->max_groups[0]) {
        gx = d->max_groups[0];
        gy = (uint32_t)((groups + gx - 1u) / gx);
    }
    return vk_dispatch_spec(d, "float_cast", s16 ? VK_SH_CVT16 : VK_SH_CVT, slot, spec, 2, p, 1, bufs, gx, gy, 1);
}
