/* Vulkan backend: block-quantized weights (q8_0, q4_0; docs/dtypes.md section 8). They are
 * stored as ggml's blocks, packed into 32-bit words (vk_storage_bytes: td_dtype_bytes rounded
 * up to a word), so from_data / into_data / to_device copy bytes. Two shaders read them through
 * shaders/qblock.glsl: qdeq.comp (float_dequantize, the convert hook of vk_kernels_create.c)
 * and qmv.comp (float_matmul_nt of f32 activations by quantized weights [N, K], dequantized on
 * the fly and accumulated in f32: x is not rounded to q8_0 as the CPU's kernel does, so the
 * result is x @ dequantize(w)^T up to f32 summation). Each is specialized to the block kind
 * (a pipeline each in quant_pipes, made on first use). f16 / bf16 activations: qmv.comp's
 * TD_HALF forms read them (widened exactly) into an f32 result, rounded once into the 16-bit
 * one (cvt.comp), as the CPU's via f32. float_matmul_nt with float weights (f32, f16, bf16, f64:
 * the activations' dtype) runs as a transposed copy of b and float_matmul in that dtype. */
#include <stdlib.h>

#include "vk_internal.h"

/* qmv.comp's rows of x per workgroup; qdeq.comp's blocks per workgroup. */
#define VK_QMV_ROWS 4
#define VK_QDEQ_LOCAL 64
/* qmv.comp's block loop runs K / 32 / LANES times (inner loops of at most 4 x 8 each time):
 * lavapipe ends a loop after 65535 iterations, silently, so a row of more blocks than this
 * per invocation runs with 64 lanes, and one of more than 64 times this is refused. */
#define VK_QMV_MAX_LOOP 65535

static uint32_t kind_of(td_dtype dt)
{
    return dt == TD_Q4_0 ? 1u : 0u;
}

td_status vk_dequantize(const td_tensor *t, td_tensor *out)
{
    static const char op[] = "float_dequantize";
    if ((td_be_dtype(t) != TD_Q8_0 && td_be_dtype(t) != TD_Q4_0) || td_be_dtype(out) != TD_F32)
        return td_error(TD_E_INTERNAL, "%s: vulkan: %s into %s", op, td_dtype_name(td_be_dtype(t)),
                        td_dtype_name(td_be_dtype(out)));
    const int64_t blocks = td_be_numel(t) / 32;
    if (blocks == 0)
        return TD_OK;
    TD_TRY(vk_check_size(op, td_be_numel(t)));
    vk_dev *d = vk_of(td_be_device(t));
    const uint32_t kind = kind_of(td_be_dtype(t));
    const uint32_t spec[1] = { kind };
    const uint32_t p[2] = { (uint32_t)blocks, 0 };
    vk_buf *const bufs[4] = { vk_buf_of(t), NULL, NULL, vk_buf_of(out) };
    const int64_t groups = (blocks + VK_QDEQ_LOCAL - 1) / VK_QDEQ_LOCAL;
    uint32_t gx = (uint32_t)groups, gy = 1;
    if (groups > d->max_groups[0]) {
        gx = d->max_groups[0];
        gy = (uint32_t)((groups + gx - 1) / gx);
    }
    return vk_dispatch_spec(d, op, VK_SH_QDEQ, &d->quant_pipes[4u + kind], spec, 1, p, 2, bufs, gx, gy, 1);
}

/* out = a @ b^T for float b (f32, f16, bf16 or f64, a's dtype): b's last two dims swapped into
 * a new tensor of its dtype (copy.comp moves any element size), then float_matmul. */
static td_status matmul_nt_float(const char *op, const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    const int nd = td_be_ndim(b);
    td_shape ts = *td_be_shape(b);
    ts.dims[nd - 1] = td_be_dims(b)[nd - 2];
    ts.dims[nd - 2] = td_be_dims(b)[nd - 1];
    int64_t src_st[TD_MAX_DIMS], dst_st[TD_MAX_DIMS];
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        src_st[i] = s;
        s *= td_be_dims(b)[i];
    }
    s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        dst_st[i] = s;
        s *= ts.dims[i];
    }
    /* walk the result's dims; read b with its two last strides swapped */
    const int64_t t = src_st[nd - 1];
    src_st[nd - 1] = src_st[nd - 2];
    src_st[nd - 2] = t;
    td_tensor *bt = NULL;
    TD_TRY(td_tensor_new_on(op, td_be_device(b), td_be_dtype(b), &ts, &bt));
    td_status st = ts.numel == 0 ? TD_OK : vk_copy_strided(b, bt, op, nd, ts.dims, src_st, 0, dst_st, 0);
    if (st == TD_OK)
        st = td_vulkan_float_matmul(a, bt, out);
    td_tensor_release(bt);
    return st;
}

/* qmv.comp's invocations per output column: 64 (a workgroup reduces over K) on a hardware
 * device, 1 (64 columns a workgroup, no barriers) on a software one, where lavapipe runs the
 * SIMD lanes across invocations and a barrier switches every invocation (bench_vulkan_quant:
 * the decode matrix x vector about 3x faster with 1). TD_VULKAN_QMV_LANES=1 or 64 overrides
 * the choice (the tests and the bench run both). */
static uint32_t qmv_lanes(const vk_dev *d)
{
    const char *e = getenv("TD_VULKAN_QMV_LANES");
    if (e != NULL && strcmp(e, "1") == 0)
        return 1u;
    if (e != NULL && strcmp(e, "64") == 0)
        return 64u;
    return d->software ? 1u : 64u;
}

td_status td_vulkan_float_matmul_nt(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    static const char op[] = "float_matmul_nt";
    if (td_be_dtype(b) != TD_Q8_0 && td_be_dtype(b) != TD_Q4_0)
        return matmul_nt_float(op, a, b, out);
    if (td_be_ndim(b) != 2)
        return td_error(TD_E_UNSUPPORTED,
                        "%s: %s weights must be one matrix [n, k]; b has %d dims (no batches of quantized weights)",
                        op, td_dtype_name(td_be_dtype(b)), td_be_ndim(b));
    const td_dtype adt = td_be_dtype(a);
    if (adt != TD_F32 && adt != TD_F16 && adt != TD_BF16)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no %s activations by %s weights (f32, f16, bf16)", op,
                        td_dtype_name(adt), td_dtype_name(td_be_dtype(b)));
    const int64_t k = td_be_dims(b)[1], n = td_be_dims(b)[0];
    const int64_t m = k == 0 ? 0 : td_be_numel(a) / k; /* a's leading dims flattened into rows */
    if (td_be_numel(out) == 0)
        return TD_OK;
    if (k == 0) /* empty sums */
        return vk_fill(op, out, 0u);
    TD_TRY(vk_check_size(op, td_be_numel(a)));
    TD_TRY(vk_check_size(op, td_be_numel(out)));
    vk_dev *d = vk_of(td_be_device(out));
    const uint32_t kind = kind_of(td_be_dtype(b));
    uint32_t lanes = qmv_lanes(d);
    if (k / 32 > (int64_t)VK_QMV_MAX_LOOP * lanes)
        lanes = 64u;
    if (k / 32 > (int64_t)VK_QMV_MAX_LOOP * 64)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: rows of %lld %s blocks are more than the shader's loop "
                        "takes (%lld)", op, (long long)(k / 32), td_dtype_name(td_be_dtype(b)),
                        (long long)VK_QMV_MAX_LOOP * 64);
    const uint32_t per_group = 64u / lanes;
    const bool half = adt != TD_F32;
    const uint32_t spec[3] = { kind, lanes, adt == TD_F16 ? 1u : 2u }; /* DT: half.glsl's DT_F16 / DT_BF16 */
    VkPipeline *slot = &d->quant_pipes[(lanes == 1u ? 2u : 0u) + kind];
    vk_shader sh = VK_SH_QMV;
    td_tensor *y = out; /* f16 / bf16: the f32 sums first */
    if (half) {
        vk_lock(d);
        const bool s16 = d->use_s16;
        vk_unlock(d);
        sh = s16 ? VK_SH_QMVH16 : VK_SH_QMVH;
        slot = &d->quant_pipes[6u + (((s16 ? 2u : 0u) + (adt == TD_F16 ? 0u : 1u)) * 2u + (lanes == 1u ? 1u : 0u)) * 2u +
                               kind];
        y = NULL;
        TD_TRY(td_tensor_new_on(op, td_be_device(out), TD_F32, td_be_shape(out), &y));
    }
    vk_buf *const bufs[4] = { vk_buf_of(a), vk_buf_of(b), NULL, vk_buf_of(y) };
    td_status st = TD_OK;
    /* column groups over x and y of the grid (offset by p[4] where the device's limits cut
     * them), groups of VK_QMV_ROWS rows over z (offset by p[3]) */
    const int64_t col_groups = (n + per_group - 1) / per_group;
    const int64_t col_per = (int64_t)d->max_groups[0] * d->max_groups[1];
    const int64_t rgroups = (m + VK_QMV_ROWS - 1) / VK_QMV_ROWS;
    for (int64_t c0 = 0; c0 < col_groups && st == TD_OK; c0 += col_per) {
        const int64_t cols = col_groups - c0 < col_per ? col_groups - c0 : col_per;
        const uint32_t gx = cols < d->max_groups[0] ? (uint32_t)cols : d->max_groups[0];
        const uint32_t gy = (uint32_t)((cols + gx - 1) / gx);
        for (int64_t g0 = 0; g0 < rgroups && st == TD_OK; g0 += d->max_groups[2]) {
            const int64_t gl = rgroups - g0;
            const uint32_t gz = gl < d->max_groups[2] ? (uint32_t)gl : d->max_groups[2];
            const uint32_t p[5] = { (uint32_t)m, (uint32_t)n, (uint32_t)k, (uint32_t)(g0 * VK_QMV_ROWS),
                                    (uint32_t)(c0 * per_group) };
            st = vk_dispatch_spec(d, op, sh, slot, spec, half ? 3u : 2u, p, 5, bufs, gx, gy, gz);
        }
    }
    if (half) {
        if (st == TD_OK)
            st = td_vulkan_convert(y, out);
        td_tensor_release(y);
    }
    return st;
}
