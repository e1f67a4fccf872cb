/* Vulkan backend: batched matmul (float_matmul, and the wrapping int_matmul on uint words).
 * Five kernels, the same parameters and semantics (broadcast batch dims, one dispatch per
 * k range that adds to C after the first), picked by shape and device (choose()):
 *   mmtile / imtile: 8x8 invocations, each computing 8x8 outputs of a 64x64 tile of C, A and B
 *     staged through shared memory in k slices of 16, read as aligned vec4s where K and N allow
 *     (the square path);
 *   mmwide / imwide: the same shader with 16x32 outputs per invocation (128x256 tiles), for
 *     software devices (lavapipe), where every load costs a loop over the SIMD lanes and only
 *     arithmetic is vectorized, so multiply-adds per load set the speed;
 *   mmthin / imthin: no shared memory, each invocation a 4x16, 1x4 (M = 1) or 4x1 (N = 1)
 *     block straight from A and B (skinny shapes: M or N under 32, K under 8, where tiles or k
 *     slices of 16 would mostly compute padding);
 *   mmouter / imouter: a small K (an outer product when K is 1), where the work is C's stores:
 *     each invocation 4 rows of C (64 apart) by 32 columns (32 vec4 stores), the invocations of
 *     a workgroup on rows of the same columns, N % 4 and accumulation specialization constants
 *     (a pipeline each, made on first use);
 *   matmul / imatmul: the former kernel, one output per invocation in 16x16 tiles, run only
 *     when td_vulkan_set_matmul_kernel asks for it (bench_vulkan_matmul compares against it).
 * f16 / bf16 operands run the same float shaders built with TD_HALF (mmload.glsl: elements
 * widened exactly to f32 as they are loaded, products summed in f32 into an f32 C, which
 * cvt.comp then rounds once into the 16-bit result: the CPU's "convert, sgemm, round" with
 * another order of additions), f64 operands their TD_F64 builds (double throughout; only where
 * the device has shaderFloat64, TD_E_UNSUPPORTED naming the feature otherwise). Neither has
 * the former kernel nor, for f64, mmwide (mmtile runs instead).
 * A batch whose B is the same matrix for every batch and whose A is not broadcast is one
 * [batch * M, K] x [K, N] product (C is laid out alike), so it runs as a single matrix: a batch
 * of row vectors times one matrix becomes a matrix product. */
#include "vk_internal.h"

/* The longest k range of one dispatch: lavapipe ends a shader's loops after 65535 iterations
 * in all (a longer K was silently cut). matmul.comp's loop runs K / 16 times per range; mmtile's
 * K / 16 times, with inner loops of up to 16 x 8 should the compiler keep them (it unrolls them);
 * mmthin's K (or K / 4) times, with an inner loop of 4 (test_vulkan_matmul runs K = 20001). */
#define VK_MATMUL_KCHUNK_NAIVE 32768
#define VK_MATMUL_KCHUNK_TILED 1024
#define VK_MATMUL_KCHUNK_THIN 8192
/* mmouter's k loop runs the range once, with inner loops of up to 32 + 4 x 33 iterations per k
 * should the compiler keep them (word by word, N not a multiple of 4): 256 x 165 stay under the
 * limit (a K this long only runs there when td_vulkan_set_matmul_kernel forces it). */
#define VK_MATMUL_KCHUNK_OUTER 256

/* The tiles of C of mmtile and mmwide (8 RB rows by 32 CQ columns, RB and CQ as in the shaders),
 * and mmwide's shared memory. */
#define VK_MMTILE_ROWS 64
#define VK_MMTILE_COLS 64
#define VK_MMWIDE_ROWS 128
#define VK_MMWIDE_COLS 256
#define VK_MMWIDE_SHARED ((128 * 4 + 16 * 64) * 16)

/* mmthin's block of 4 rows: 4 CW columns (CW as in mmthin.glsl) */
#define VK_MMTHIN_COLS 16

/* Below this many rows or columns of C the tiled kernel mostly computes padding; below this K
 * most of its k slices of 16. */
#define VK_MATMUL_THIN_MN 32
#define VK_MATMUL_THIN_K 8

/* mmouter's block: 4 x 64 rows (4 per invocation, 64 invocations) by 32 columns (RB, the local
 * size and QB of mmouter.glsl). Chosen for a K up to VK_MATMUL_OUTER_K where C has at least
 * VK_MATMUL_OUTER_M rows and VK_MATMUL_OUTER_N columns (fewer leave most of a workgroup's
 * invocations, or of an invocation's columns, idle): on lavapipe it beat mmthin, and for K = 8
 * mmwide, on every such shape tried (4096 x K @ K x 512 for K = 1, 2, 4, 8; 32 or 64 rows; 16
 * or 32 columns), by 1.4x to 4x on a busy machine; bench_vulkan_matmul times K = 1. */
#define VK_MMOUTER_ROWS 256
#define VK_MMOUTER_COLS 32
#define VK_MATMUL_OUTER_K 8
#define VK_MATMUL_OUTER_M 32
#define VK_MATMUL_OUTER_N 16

typedef enum { MM_NAIVE, MM_TILE, MM_WIDE, MM_THIN, MM_OUTER } mm_kind;

static mm_kind choose(const vk_dev *dev, td_dtype dt, int64_t m, int64_t n, int64_t k)
{
    const bool word = dt == TD_F32 || dt == TD_I32; /* the former kernel exists for these only */
    if (dev->matmul_kernel == TD_VULKAN_MATMUL_NAIVE && word)
        return MM_NAIVE;
    if (dev->matmul_kernel == TD_VULKAN_MATMUL_OUTER)
        return MM_OUTER;
    if (dev->matmul_kernel == TD_VULKAN_MATMUL_AUTO && k <= VK_MATMUL_OUTER_K && m >= VK_MATMUL_OUTER_M &&
        n >= VK_MATMUL_OUTER_N)
        return MM_OUTER;
    const bool thin = m < VK_MATMUL_THIN_MN || n < VK_MATMUL_THIN_MN || k < VK_MATMUL_THIN_K;
    if (dev->matmul_kernel == TD_VULKAN_MATMUL_THIN || (dev->matmul_kernel == TD_VULKAN_MATMUL_AUTO && thin))
        return MM_THIN;
    /* mmwide on a software device, where its tile is not mostly padding */
    const bool wide = dev->software && dev->max_shared >= VK_MMWIDE_SHARED && m > VK_MMWIDE_ROWS / 2 &&
                      n > VK_MMWIDE_COLS / 2;
    return wide && dt != TD_F64 ? MM_WIDE : MM_TILE;
}

/* The TD_HALF / TD_F64 builds of each kernel (f16 and bf16 share one, the dtype a constant):
 * [kind - MM_TILE][16-bit storage], f64 in the second column being unused. */
static const vk_shader mmx_half[4][2] = { { VK_SH_MMTILEH, VK_SH_MMTILEH16 }, { VK_SH_MMWIDEH, VK_SH_MMWIDEH16 },
                                          { VK_SH_MMTHINH, VK_SH_MMTHINH16 }, { VK_SH_MMOUTERH, VK_SH_MMOUTERH16 } };
static const vk_shader mmx_f64[4] = { VK_SH_MMTILED, VK_SH_MMTILED, VK_SH_MMTHIND, VK_SH_MMOUTERD };

/* One dispatch of kernel `kind` (not MM_NAIVE) on operands of dtype dt: f32 / i32 on the plain
 * shaders (sh, or mmouter's specialized pipelines), f16 / bf16 / f64 on their builds,
 * specialized to (N % 4 == 0, accumulate: mmouter only) and the 16-bit dtype (mmload.glsl's DT,
 * constant 2). s16: the device reads 16-bit storage (vk_dev.use_s16, read once per op). */
static td_status mm_dispatch(vk_dev *dev, const char *op, mm_kind kind, td_dtype dt, bool s16, vk_shader sh,
                             uint32_t quads, uint32_t acc, const uint32_t *p, uint32_t np, vk_buf *const bufs[4],
                             uint32_t gx, uint32_t gy, uint32_t gz)
{
    const bool is_int = dt == TD_I32;
    if (dt == TD_F32 || is_int) {
        if (kind != MM_OUTER)
            return vk_dispatch(dev, op, sh, p, np, bufs, gx, gy, gz);
        const uint32_t values[2] = { quads, acc };
        VkPipeline *slot = &dev->mmouter_pipes[(is_int ? 4u : 0u) + 2u * quads + acc];
        return vk_dispatch_spec(dev, op, sh, slot, values, 2, p, np, bufs, gx, gy, gz);
    }
    const uint32_t ki = (uint32_t)(kind - MM_TILE), spec = kind == MM_OUTER ? 2u * quads + acc : 0u;
    const uint32_t di = dt == TD_F16 ? 0u : dt == TD_BF16 ? 1u : 2u, si = dt != TD_F64 && s16 ? 1u : 0u;
    const uint32_t values[3] = { quads, acc, dt == TD_BF16 ? 2u : 1u }; /* half.glsl's DT_F16, DT_BF16 */
    const vk_shader xsh = dt == TD_F64 ? mmx_f64[ki] : mmx_half[ki][si];
    VkPipeline *slot = &dev->mmx_pipes[((ki * 4u + spec) * 2u + si) * 3u + di];
    return vk_dispatch_spec(dev, op, xsh, slot, values, 3, p, np, bufs, gx, gy, gz);
}

/* mmouter: grids of 256-row by 32-column blocks, offset (p[32] rows, p[33] column blocks, p[28]
 * batches) where the device's grid limits cut them, and one dispatch per k range, each with the
 * pipeline specialized to N % 4 == 0 and to whether it adds to C. */
static td_status outer(vk_dev *dev, const char *op, td_dtype dt, bool s16, uint32_t *p, int64_t m, int64_t n,
                       int64_t k, int64_t batches, vk_buf *const bufs[4])
{
    const bool is_int = dt == TD_I32;
    const int64_t gy_all = (m + VK_MMOUTER_ROWS - 1) / VK_MMOUTER_ROWS, gx_all = (n + VK_MMOUTER_COLS - 1) / VK_MMOUTER_COLS;
    const uint32_t quads = n % 4 == 0;
    const vk_shader sh = is_int ? VK_SH_IMOUTER : VK_SH_MMOUTER;
    for (int64_t b0 = 0; b0 < batches; b0 += dev->max_groups[2])
        for (int64_t y0 = 0; y0 < gy_all; y0 += dev->max_groups[1])
            for (int64_t x0 = 0; x0 < gx_all; x0 += dev->max_groups[0]) {
                const int64_t bl = batches - b0, yl = gy_all - y0, xl = gx_all - x0;
                const uint32_t gz = bl < dev->max_groups[2] ? (uint32_t)bl : dev->max_groups[2];
                const uint32_t gy = yl < dev->max_groups[1] ? (uint32_t)yl : dev->max_groups[1];
                const uint32_t gx = xl < dev->max_groups[0] ? (uint32_t)xl : dev->max_groups[0];
                p[28] = (uint32_t)b0;
                p[32] = (uint32_t)(y0 * VK_MMOUTER_ROWS);
                p[33] = (uint32_t)x0;
                for (int64_t k0 = 0; k0 < k; k0 += VK_MATMUL_KCHUNK_OUTER) {
                    const uint32_t acc = k0 > 0;
                    p[29] = (uint32_t)k0;
                    p[30] = (uint32_t)(k - k0 < VK_MATMUL_KCHUNK_OUTER ? k : k0 + VK_MATMUL_KCHUNK_OUTER);
                    p[31] = acc;
                    TD_TRY(mm_dispatch(dev, op, MM_OUTER, dt, s16, sh, quads, acc, p, 34, bufs, gx, gy, gz));
                }
            }
    return TD_OK;
}

/* Parameters: M, N, K, nb, batch dims[8], a and b batch strides[8] (in matrices), batch offset,
 * k begin, k end, accumulate; mmtile and mmthin add whether K and N (mmthin: N) are multiples
 * of 4 (the kernels then read and write aligned quads), and mmthin its block shape, blocks per
 * row of C, block count and whether K is a multiple of 4 (A's rows read in quads). */
static td_status matmul(const char *op, const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    const td_dtype dt = td_be_dtype(a);
    const bool is_int = dt == TD_I32;
    td_matmul_geometry g;
    td_matmul_geometry_of(td_be_shape(a), td_be_shape(b), td_be_shape(out), &g);
    int nb = g.batch.ndim;
    int64_t m = g.m, batches = g.batch.numel;
    const int64_t n = g.n, k = g.k;
    vk_dev *dev = vk_of(td_be_device(out));
    if (k == 0) { /* an empty inner dim: a sum of nothing, as in PyTorch (+0.0 is all-zero words) */
        const int64_t words = td_be_numel(out) * (dt == TD_F64 ? 2 : 1);
        const uint32_t fp[4] = { (uint32_t)words, VK_U_FILL, 0u, 0u };
        vk_buf *const fbufs[4] = { NULL, NULL, NULL, vk_buf_of(out) };
        return vk_dispatch_unary(dev, op, VK_U_FILL, fp, 4, fbufs, words);
    }
    if (td_be_numel(out) == 0)
        return TD_OK;
    if (dev->matmul_kernel != TD_VULKAN_MATMUL_NAIVE && nb > 0) {
        bool b_shared = true;
        for (int d = 0; d < nb; d++)
            b_shared = b_shared && g.b_stride[d] == 0;
        if (b_shared && td_be_numel(a) == batches * m * k) { /* A not broadcast: its batches are in order */
            m *= batches;
            batches = 1;
            nb = 0;
        }
    }
    const mm_kind kind = choose(dev, dt, m, n, k);
    vk_lock(dev);
    const bool s16 = dev->use_s16;
    vk_unlock(dev);
    uint32_t p[37] = { (uint32_t)m, (uint32_t)n, (uint32_t)k, (uint32_t)nb };
    for (int d = 0; d < nb; d++) {
        p[4 + d] = (uint32_t)g.batch.dims[d];
        p[12 + d] = (uint32_t)g.a_stride[d];
        p[20 + d] = (uint32_t)g.b_stride[d];
    }
    vk_buf *const bufs[4] = { vk_buf_of(a), vk_buf_of(b), NULL, vk_buf_of(out) };
    if (kind == MM_OUTER)
        return outer(dev, op, dt, s16, p, m, n, k, batches, bufs);
    vk_shader sh;
    int64_t gx, gy, kchunk = VK_MATMUL_KCHUNK_TILED;
    uint32_t np = 33;
    p[32] = k % 4 == 0 && n % 4 == 0;
    switch (kind) {
    case MM_NAIVE:
        sh = is_int ? VK_SH_IMATMUL : VK_SH_MATMUL;
        gx = (n + 15) / 16;
        gy = (m + 15) / 16;
        kchunk = VK_MATMUL_KCHUNK_NAIVE;
        np = 32;
        break;
    case MM_TILE:
        sh = is_int ? VK_SH_IMTILE : VK_SH_MMTILE;
        gx = (n + VK_MMTILE_COLS - 1) / VK_MMTILE_COLS;
        gy = (m + VK_MMTILE_ROWS - 1) / VK_MMTILE_ROWS;
        break;
    case MM_WIDE:
        sh = is_int ? VK_SH_IMWIDE : VK_SH_MMWIDE;
        gx = (n + VK_MMWIDE_COLS - 1) / VK_MMWIDE_COLS;
        gy = (m + VK_MMWIDE_ROWS - 1) / VK_MMWIDE_ROWS;
        break;
    default: {
        sh = is_int ? VK_SH_IMTHIN : VK_SH_MMTHIN;
        kchunk = VK_MATMUL_KCHUNK_THIN;
        /* 4x16 blocks; 1x4 for a row vector, 4x1 for a column vector */
        const uint32_t shape = m == 1 && n > 1 ? 1u : n == 1 && m > 1 ? 2u : 0u;
        const int64_t rows = shape == 1u ? m : (m + 3) / 4;
        const int64_t per_row = shape == 2u ? n : shape == 1u ? (n + 3) / 4 : (n + VK_MMTHIN_COLS - 1) / VK_MMTHIN_COLS;
        const int64_t blocks = rows * per_row, groups = (blocks + 63) / 64;
        p[32] = n % 4 == 0;
        p[33] = shape;
        p[34] = (uint32_t)per_row;
        p[35] = (uint32_t)blocks;
        p[36] = k % 4 == 0;
        np = 37;
        gx = groups < dev->max_groups[0] ? groups : dev->max_groups[0];
        gy = (groups + gx - 1) / gx;
        break;
    }
    }
    if (gx > dev->max_groups[0] || gy > dev->max_groups[1])
        return td_error(TD_E_INVALID, "%s: vulkan: a %lld x %lld result needs more workgroups than the "
                        "device allows", op, (long long)m, (long long)n);
    for (int64_t b0 = 0; b0 < batches; b0 += dev->max_groups[2]) {
        const int64_t left = batches - b0;
        const uint32_t gz = left < dev->max_groups[2] ? (uint32_t)left : dev->max_groups[2];
        p[28] = (uint32_t)b0;
        for (int64_t k0 = 0; k0 < k; k0 += kchunk) {
            p[29] = (uint32_t)k0;
            p[30] = (uint32_t)(k - k0 < kchunk ? k : k0 + kchunk);
            p[31] = k0 > 0;
            TD_TRY(kind == MM_NAIVE ? vk_dispatch(dev, op, sh, p, np, bufs, (uint32_t)gx, (uint32_t)gy, gz)
                                    : mm_dispatch(dev, op, kind, dt, s16, sh, 0u, 0u, p, np, bufs, (uint32_t)gx,
                                                  (uint32_t)gy, gz));
        }
    }
    return TD_OK;
}

td_status td_vulkan_float_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    static const char op[] = "float_matmul";
    const td_dtype dt = td_be_dtype(a);
    if (td_be_dtype(b) != dt || td_be_dtype(out) != dt)
        return td_error(TD_E_INVALID, "%s: vulkan: operands of %s, %s and a result of %s (one dtype expected)", op,
                        td_dtype_name(dt), td_dtype_name(td_be_dtype(b)), td_dtype_name(td_be_dtype(out)));
    if (dt == TD_F32)
        return matmul(op, a, b, out);
    if (dt == TD_F64) {
        if (!vk_of(td_be_device(out))->has_f64)
            return td_error(TD_E_UNSUPPORTED, "%s: vulkan: f64 needs the device feature shaderFloat64, which this "
                            "device lacks", op);
        return matmul(op, a, b, out);
    }
    if (dt != TD_F16 && dt != TD_BF16)
        return td_error(TD_E_UNSUPPORTED, "%s: vulkan: no matmul kernel for %s", op, td_dtype_name(dt));
    /* f32 sums into a scratch C, rounded once into out on the device */
    td_tensor *tmp = NULL;
    TD_TRY(td_tensor_new_on(op, td_be_device(out), TD_F32, td_be_shape(out), &tmp));
    td_status st = matmul(op, a, b, tmp);
    if (st == TD_OK)
        st = td_vulkan_convert(tmp, out);
    td_tensor_release(tmp);
    return st;
}

/* Wrapping, as cpu_int.c (uint words: the product of two int32s mod 2^32 is the same). */
td_status td_vulkan_int_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return matmul("int_matmul", a, b, out);
}
