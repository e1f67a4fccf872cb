/* Vulkan backend internals shared by its source files: device state, buffers, dispatch recording. */
#ifndef TD_VK_INTERNAL_H
#define TD_VK_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "td_backend_vulkan.h"
#include "td_vulkan.h"

/* The shaders, one pipeline each (vk_dispatch.c maps each to its embedded SPIR-V by name). */
typedef enum vk_shader { VK_SH_COPY, VK_SH_EW, VK_SH_MATMUL, VK_SH_REDUCE, VK_SH_SCAN, VK_SH_UNARY,
                         VK_SH_FMATH, /* float math (issue 10) */
                         VK_SH_INDEX, /* indexing and layout (issue 10) */
                         VK_SH_IOPS,  /* int bitwise / shifts / powi, triangular masks */
                         VK_SH_IMATMUL, /* int_matmul (wrapping) */
                         VK_SH_SORT,  /* sort, argsort, topk (a merge sort in passes) */
                         VK_SH_POOL,  /* max / avg pool2d and their backward ops */
                         VK_SH_CONV,  /* conv2d and its backward ops */
                         VK_SH_MMTILE, VK_SH_IMTILE, /* float / int matmul, 64x64 register-blocked tiles */
                         VK_SH_MMWIDE, VK_SH_IMWIDE, /* the same, 128x256 tiles (software devices) */
                         VK_SH_MMTHIN, VK_SH_IMTHIN, /* float / int matmul of skinny shapes */
                         VK_SH_EWV,   /* ew.comp's ops, 16 elements per invocation (same-shape inputs) */
                         VK_SH_MMOUTER, VK_SH_IMOUTER, /* float / int matmul of a small K (outer products) */
                         VK_SH_CVT, VK_SH_CVT16, /* f32 / f16 / bf16 conversions: packed words, 16-bit storage */
                         VK_SH_EWVH, VK_SH_EWVH16, /* ewv.comp's float ops on f16 / bf16: packed words, 16-bit storage */
                         VK_SH_UNARYH, VK_SH_UNARYH16, /* unary.comp's float ops on f16 / bf16, likewise */
                         VK_SH_REDUCEH, VK_SH_REDUCEH16, /* reduce.comp reading f16 / bf16 (first passes) */
                         VK_SH_QMV, VK_SH_QDEQ, /* q8_0 / q4_0 weights: matmul_nt, dequantize (vk_kernels_quant.c) */
                         /* the float matmul shaders reading f16 / bf16 (packed words, 16-bit storage), in f64 */
                         VK_SH_MMTILEH, VK_SH_MMTILEH16, VK_SH_MMWIDEH, VK_SH_MMWIDEH16, VK_SH_MMTHINH,
                         VK_SH_MMTHINH16, VK_SH_MMOUTERH, VK_SH_MMOUTERH16, VK_SH_MMTILED, VK_SH_MMTHIND,
                         VK_SH_MMOUTERD,
                         VK_SH_COPY16, VK_SH_INDEX16, /* copy.comp, index.comp on 16-bit storage (f16 / bf16 moves) */
                         /* conv.comp, pool.comp and scan.comp on f16 / bf16 (packed words, 16-bit
                          * storage) and f64, sort.comp on f16 / bf16 (xload.glsl; vk_dispatch_dt) */
                         VK_SH_CONVH, VK_SH_CONVH16, VK_SH_CONVD, VK_SH_POOLH, VK_SH_POOLH16, VK_SH_POOLD,
                         VK_SH_SCANH, VK_SH_SCANH16, VK_SH_SCAND, VK_SH_SORTH, VK_SH_SORTH16,
                         VK_SH_EWD,   /* f64 binary ops, comparisons, float -> float unary ops (shaderFloat64) */
                         VK_SH_REDUCED, /* reduce.comp's float ops in f64 (every pass; shaderFloat64) */
                         VK_SH_SORTD,   /* sort.comp on f64 keys (every pass; shaderFloat64) */
                         VK_SH_FMATHH, VK_SH_FMATHH16, /* fmath.comp on f16 / bf16: packed words, 16-bit storage */
                         VK_SH_INDEXD,  /* index.comp's float adds (scatter_add, select_add) in f64 */
                         VK_SH_QMVH, VK_SH_QMVH16, /* qmv.comp reading f16 / bf16 activations: packed words, 16-bit storage */
                         VK_SH_COUNT } vk_shader;

/* Op codes of unary.comp and ew.comp. */
enum {
    VK_U_NEG, VK_U_ABS, VK_U_EXP, VK_U_LOG, VK_U_SQRT, VK_U_SIN, VK_U_COS, VK_U_TANH, VK_U_SIGMOID,
    VK_U_RELU, VK_U_GELU, VK_U_POWF, VK_U_CLAMP, VK_U_ADD_S, VK_U_MUL_S, VK_U_F2I, VK_U_I2F, VK_U_B2F,
    VK_U_B2I, VK_U_NOT, VK_U_FILL, VK_U_ARANGE, VK_U_COPY
};
enum {
    VK_B_FADD, VK_B_FSUB, VK_B_FMUL, VK_B_FDIV, VK_B_FPOW, VK_B_FMAX, VK_B_FMIN, VK_B_FEQ, VK_B_FGT, VK_B_FGE,
    VK_B_FLT, VK_B_FLE, VK_B_IADD, VK_B_ISUB, VK_B_IMUL, VK_B_IDIV, VK_B_IREM, VK_B_IEQ, VK_B_IGT, VK_B_ILT,
    VK_B_AND, VK_B_OR, VK_B_WHERE, VK_B_FILL
};
enum { VK_R_SUM, VK_R_MEAN, VK_R_MAX, VK_R_MIN, VK_R_ARGMAX, VK_R_ARGMIN, VK_R_ISUM,
       VK_R_ARGMAX_GATHER, VK_R_ARGMIN_GATHER, /* the gathers: later passes of argmax/argmin */
       VK_R_IPROD, VK_R_ISUM64, VK_R_ISUM64_PAIRS, VK_R_IMEAN_PAIRS, VK_R_IMEAN,
       VK_R_FPROD_PAIRS_OF, VK_R_FPROD_PAIRS, VK_R_FPROD_OF_PAIRS, VK_R_FPROD }; /* 14 .. 17 */

#define VK_EWV_OPS 24u           /* ew.comp's op codes (VK_B_*) */
#define VK_EWV_PIPES (VK_EWV_OPS * 8u)
#define VK_UNARY_OPS 23u          /* unary.comp's op codes (VK_U_*) */
#define VK_FMATH_OPS 15u          /* fmath.comp's op codes (vk_kernels_float_math.c) */
#define VK_FMATHH_PIPES (2u * 2u * VK_FMATH_OPS) /* its TD_HALF forms: storage path x dtype x op */
#define VK_IOPS_OPS 14u           /* iops.comp's op codes (vk_kernels_int.c) */
#define VK_EWVH_OPS 12u           /* ewv.comp's float ops (VK_B_FADD .. VK_B_FLE) on f16 / bf16 */
#define VK_EWVH_PIPES (2u * 2u * VK_EWVH_OPS * 4u) /* storage path x dtype x op x broadcast flags */
#define VK_UNARYH_OPS 16u         /* unary.comp's float -> float ops (VK_U_NEG .. VK_U_MUL_S) and
                                   * VK_U_F2I (float_into_int) on f16 / bf16 */
#define VK_UNARYH_PIPES (2u * 2u * VK_UNARYH_OPS) /* storage path x dtype x op */
#define VK_EWD_PIPES 61u          /* ewd.comp: binary codes 0-11, unary codes 0-15 as 32 + code,
                                   * fmath's unary ops 48-60, its binary ops 12-13 (VK_EWD_REM,
                                   * VK_EWD_ATAN2) */
#define VK_QUANT_PIPES 22u        /* vk_kernels_quant.c: 6 f32 ones, 16 of f16 / bf16 activations */
#define VK_EWD_REM 12u            /* ewd.comp's float_remainder (broadcasting as VK_B_*) */
#define VK_EWD_ATAN2 13u          /* ewd.comp's float_atan2 */
#define VK_CVT_PIPES 18u          /* cvt.comp: 2 storage paths x 3 source x 3 result dtypes */
#define VK_MMOUTER_PIPES 8u       /* mmouter / imouter x N % 4 == 0 x accumulate */
#define VK_MMX_PIPES 96u          /* float matmul on f16 / bf16 / f64: 4 kernels x 4 (mmouter's
                                   * constants) x 2 storage paths x 3 dtypes (vk_kernels_matmul.c) */
/* The shaders vk_dispatch_dt runs in the operands' dtype (f32, f16, bf16, f64). */
enum { VK_DT_CONV, VK_DT_POOL, VK_DT_SCAN, VK_DT_SORT, VK_DT_SHADERS };
#define VK_DT_PIPES (VK_DT_SHADERS * 4u) /* shader x storage path x f16 / bf16 */
#define VK_EWV_ELEMS 16           /* elements per invocation of ewv.comp: 4 vectors of 4 */
#define VK_MAX_PARAMS 64u        /* 32-bit words of parameters per dispatch (256 bytes) */
#define VK_BATCH_MAX 256u        /* dispatches per command buffer before it is submitted */
#define VK_SIZE_CLASSES 48
#define VK_DEFERRED_MAX ((VkDeviceSize)256 << 20) /* freed-but-in-flight bytes that force a submit */
#define VK_POOL_MAX ((VkDeviceSize)512 << 20)     /* free bytes kept for reuse */

typedef struct vk_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map;
    VkDeviceSize size;  /* the size class */
    long batch;         /* the batch that last used it */
    struct vk_buf *next;
} vk_buf;

/* One device state per opened Vulkan device, shared by every thread that uses it: lock (a
 * recursive mutex) is held around everything that touches the mutable state below (recording
 * into cmd, submits and fences, the params arena, descriptor pool, lazily created pipelines,
 * the buffer pools and counters) and around host reads and writes of buffers; see vk_lock. */
typedef struct vk_dev {
    pthread_mutex_t lock;
    bool locking;       /* false only with TD_VULKAN_DEVICE_LOCK=0 (for measuring the lock's cost) */
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t qfam;
    uint32_t mem_type;
    uint32_t max_groups[3];
    VkDeviceSize param_align;
    VkDeviceSize max_range; /* the largest storage buffer a shader may bind */
    VkCommandPool cpool;
    VkCommandBuffer cmd;
    VkFence fence;
    VkDescriptorPool dpool;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout playout;
    VkPipelineCache pcache;
    VkPipeline pipes[VK_SH_COUNT];
    VkPipeline ewv_pipes[VK_EWV_PIPES]; /* ewv.comp specialized by op code and broadcast flags */
    VkPipeline unary_pipes[VK_UNARY_OPS]; /* unary.comp specialized by op code */
    VkPipeline ew_pipes[VK_EWV_OPS]; /* ew.comp specialized by op code */
    VkPipeline fmath_pipes[VK_FMATH_OPS]; /* fmath.comp specialized by op code */
    VkPipeline iops_pipes[VK_IOPS_OPS];   /* iops.comp specialized by op code */
    VkPipeline mmouter_pipes[VK_MMOUTER_PIPES]; /* mmouter / imouter specialized (vk_kernels_matmul.c) */
    VkPipeline cvt_pipes[VK_CVT_PIPES]; /* cvt.comp specialized by dtypes (vk_kernels_create.c) */
    VkPipeline ewvh_pipes[VK_EWVH_PIPES]; /* ewv.comp's TD_HALF forms specialized (vk_dispatch_ewvh) */
    VkPipeline unaryh_pipes[VK_UNARYH_PIPES]; /* unary.comp's TD_HALF forms (vk_dispatch_unaryh) */
    VkPipeline reduceh_pipes[4]; /* reduce.comp's TD_HALF forms: storage path x dtype */
    VkPipeline quant_pipes[VK_QUANT_PIPES]; /* qmv.comp (x 2 lane counts), qdeq.comp by q8_0 / q4_0, then
                                             * qmv.comp's TD_HALF forms (x storage path x dtype x lanes) */
    VkPipeline mmx_pipes[VK_MMX_PIPES]; /* the matmul shaders' TD_HALF / TD_F64 forms specialized */
    VkPipeline move_pipes[4]; /* copy.comp, index.comp specialized to 2 (packed) or 8 bytes an element */
    VkPipeline dt_pipes[VK_DT_PIPES]; /* conv / pool / scan TD_HALF forms specialized (vk_dispatch_dt) */
    VkPipeline ewd_pipes[VK_EWD_PIPES]; /* ewd.comp specialized by op (vk_dispatch_ewd) */
    VkPipeline fmathh_pipes[VK_FMATHH_PIPES]; /* fmath.comp's TD_HALF forms (vk_coded_elementwise) */
    bool has_s16;       /* storageBuffer16BitAccess, enabled at device creation */
    bool has_f64;       /* shaderFloat64, enabled at device creation */
    bool use_s16;       /* the 16-bit shaders read and write uint16_t (has_s16 and not
                         * td_vulkan_set_half_storage(PACKED) / TD_VULKAN_HALF_STORAGE=packed) */
    vk_buf *params;     /* per-batch arena of dispatch parameters */
    vk_buf *dummy;      /* bound where a shader has no buffer */
    VkDeviceSize params_used;
    bool recording;
    uint32_t batch_n;   /* dispatches in the open command buffer */
    long batch;         /* id of the open batch */
    long submits, dispatches;
    bool software;      /* a VK_PHYSICAL_DEVICE_TYPE_CPU device (lavapipe) */
    uint32_t max_shared; /* maxComputeSharedMemorySize */
    int matmul_kernel;  /* td_vulkan_matmul_kernel: which matmul shaders run (AUTO by default) */
    int ew_kernel;      /* td_vulkan_elementwise_kernel: which binary elementwise shader runs */
    vk_buf *free_list[VK_SIZE_CLASSES];
    vk_buf *deferred;   /* freed while the open batch may still use them */
    VkDeviceSize deferred_bytes, pooled_bytes;
} vk_dev;

static inline vk_dev *vk_of(const td_device *d)
{
    return (vk_dev *)td_be_device_state(d);
}

/* The device lock: recursive, so a locked helper may call another (vk_buf_get flushes). */
static inline void vk_lock(vk_dev *d)
{
    if (d->locking)
        (void)pthread_mutex_lock(&d->lock);
}

static inline void vk_unlock(vk_dev *d)
{
    if (d->locking)
        (void)pthread_mutex_unlock(&d->lock);
}

static inline vk_buf *vk_buf_of(const td_tensor *t)
{
    return (vk_buf *)td_be_data(t);
}

const char *vk_result_name(VkResult r);
td_status vk_fail(const char *op, const char *what, VkResult r);
/* A reference to the shared VkInstance (created with the first), and its release. */
td_status vk_instance_get(VkInstance *out);
void vk_instance_put(void);

/* Buffers (vk_buffer.c). */
td_status vk_buf_get(vk_dev *d, const char *op, VkDeviceSize bytes, vk_buf **out);
void vk_buf_put(vk_dev *d, vk_buf *b);
void vk_buf_destroy(vk_dev *d, vk_buf *b);
void vk_pool_release(vk_dev *d);
void vk_pool_after_submit(vk_dev *d);
td_status vk_buf_raw(vk_dev *d, const char *op, VkDeviceSize bytes, vk_buf **out);

/* Dispatch recording (vk_dispatch.c). bufs are bindings 1..4 (NULL: unused). */
td_status vk_dispatch(vk_dev *d, const char *op, vk_shader sh, const uint32_t *params, uint32_t nparams,
                      vk_buf *const bufs[4], uint32_t gx, uint32_t gy, uint32_t gz);
/* One thread per element for n elements (256 per workgroup, 2-D grid when large). */
td_status vk_dispatch_n(vk_dev *d, const char *op, vk_shader sh, const uint32_t *params, uint32_t nparams,
                        vk_buf *const bufs[4], int64_t n);
/* An elementwise shader that takes an op code: the result's numel, code, ndim, a scalar and
 * dims in params[0..11], then the broadcast strides of a and b (b may be NULL) per dim. */
td_status vk_coded_elementwise(const char *op, vk_shader sh, uint32_t code, const td_tensor *a, const td_tensor *b,
                               uint32_t scalar, td_tensor *out);
/* vk_dispatch with the pipeline in *slot: sh specialized to values (constant ids 0, 1, ...;
 * at most 4), created on first use and destroyed with the device. */
td_status vk_dispatch_spec(vk_dev *d, const char *op, vk_shader sh, VkPipeline *slot, const uint32_t *values,
                           uint32_t nvalues, const uint32_t *params, uint32_t nparams, vk_buf *const bufs[4],
                           uint32_t gx, uint32_t gy, uint32_t gz);
/* vk_dispatch_n for ewv.comp specialized to op code and broadcast flags (bit k: input k is
 * one element), n invocations. */
td_status vk_dispatch_ewv(vk_dev *d, const char *op, uint32_t code, uint32_t flags, const uint32_t *params,
                          uint32_t nparams, vk_buf *const bufs[4], int64_t n);
/* vk_dispatch_ewv for f16 / bf16 inputs (dt: TD_F16 or TD_BF16; code a float op, flags as there):
 * ewv.comp's TD_HALF form, on 16-bit storage where the device uses it. */
td_status vk_dispatch_ewvh(vk_dev *d, const char *op, uint32_t code, uint32_t flags, td_dtype dt,
                           const uint32_t *params, uint32_t nparams, vk_buf *const bufs[4], int64_t n);
/* unary.comp's float op code on n f16 / bf16 elements (dt), one invocation per pair. */
td_status vk_dispatch_unaryh(vk_dev *d, const char *op, uint32_t code, td_dtype dt, const uint32_t *params,
                             uint32_t nparams, vk_buf *const bufs[4], int64_t n);
/* vk_dispatch_n for reduce.comp reading f16 / bf16 (dt) as its a. */
td_status vk_dispatch_reduceh(vk_dev *d, const char *op, td_dtype dt, const uint32_t *params, uint32_t nparams,
                              vk_buf *const bufs[4], int64_t n);
/* vk_dispatch_n for copy.comp or index.comp (sh) moving elements of esize bytes (2, 4 or 8):
 * the 16-bit-storage build for 2 where the device uses it, else sh specialized to esize. */
td_status vk_dispatch_move(vk_dev *d, const char *op, vk_shader sh, uint32_t esize, const uint32_t *params,
                           uint32_t nparams, vk_buf *const bufs[4], int64_t n);
/* vk_dispatch_n for conv.comp, pool.comp, scan.comp or sort.comp (shader: VK_DT_*) reading
 * operands of dt: the plain shader for f32, its TD_HALF form for f16 / bf16 (on 16-bit storage
 * where the device uses it; it writes an f32 result), its TD_F64 form for f64 (TD_E_UNSUPPORTED
 * naming the feature where the device lacks shaderFloat64, or where the shader has none). */
td_status vk_dispatch_dt(vk_dev *d, const char *op, int shader, td_dtype dt, const uint32_t *params,
                         uint32_t nparams, vk_buf *const bufs[4], int64_t n);
/* ewd.comp (f64, one invocation per element of n) specialized to code: a VK_B_* float op
 * (VK_B_FADD .. VK_B_FLE), VK_EWD_REM, VK_EWD_ATAN2, 32 + a VK_U_* float -> float op or one of
 * fmath's unary codes 48-60. TD_E_UNSUPPORTED, naming the feature, on a device without
 * shaderFloat64. */
td_status vk_dispatch_ewd(vk_dev *d, const char *op, uint32_t code, const uint32_t *params, uint32_t nparams,
                          vk_buf *const bufs[4], int64_t n);
/* A binary f64 op of ewd.comp (VK_B_FADD .. VK_B_FLE, VK_EWD_REM, VK_EWD_ATAN2) on a and b of
 * dtype f64, broadcast to out (vk_kernels_elementwise.c). */
td_status vk_binary_f64(const char *op, uint32_t code, const td_tensor *a, const td_tensor *b, td_tensor *out);
/* TD_OK where the device computes in f64 (shaderFloat64), else TD_E_UNSUPPORTED naming op. */
td_status vk_need_f64(vk_dev *d, const char *op);
/* vk_dispatch_n for ew.comp specialized to op code (params[1] is then ignored). */
td_status vk_dispatch_ew(vk_dev *d, const char *op, uint32_t code, const uint32_t *params, uint32_t nparams,
                         vk_buf *const bufs[4], int64_t n);
/* vk_dispatch_n for unary.comp specialized to op code (params[1] is then ignored). */
td_status vk_dispatch_unary(vk_dev *d, const char *op, uint32_t code, const uint32_t *params, uint32_t nparams,
                            vk_buf *const bufs[4], int64_t n);
/* Submits the open command buffer and waits for it. */
td_status vk_flush(vk_dev *d, const char *op);
td_status vk_pipelines_create(vk_dev *d, vk_shader sh, const char *op);
void vk_dispatch_release(vk_dev *d);

/* Shared kernel helpers. */
static inline uint32_t vk_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
td_status vk_copy_strided(const td_tensor *src, td_tensor *dst, const char *op, int ndim, const int64_t *dims,
                          const int64_t *src_st, int64_t src_off, const int64_t *dst_st, int64_t dst_off);
td_status vk_check_size(const char *op, int64_t n);
/* The bytes a kernel moves per element of t (bools are words): 2, 4 or 8, else TD_E_UNSUPPORTED. */
td_status vk_elem_size(const char *op, const td_tensor *t, uint32_t *esize);
/* Bytes of a tensor's storage: bools are 32-bit words, other dtypes their size, rounded up to
 * whole words (a 16-bit or 8-bit tensor's last word may be half used). */
VkDeviceSize vk_storage_bytes(const td_tensor *t);
/* q8_0 / q4_0 t dequantized into out (f32, t's shape) on the device (vk_kernels_quant.c). */
td_status vk_dequantize(const td_tensor *t, td_tensor *out);
/* Sets every element of out to value rounded to out's dtype (f32, f16, bf16, f64), copy.comp. */
td_status vk_fill_value(const char *op, td_tensor *out, double value);
/* out = a where the mask is false, value_t's element (or, value_t NULL, value) where it is true,
 * each broadcast to out's shape: two copy.comp dispatches, for any element size. */
td_status vk_mask_move(const char *op, const td_tensor *a, const td_tensor *mask, const td_tensor *value_t,
                       double value, td_tensor *out);
/* The results of the kernels that run in their operands' dtype (vk_dispatch_dt;
 * vk_kernels_module.c): vk_dt_check refuses a dtype without such kernels and operands (ts[k],
 * NULL ones skipped) of another dtype than dt; vk_dt_result sets *dst to the tensor the shader
 * writes, out itself or, for f16 / bf16, an f32 scratch of out's shape; vk_dt_result_done(st,
 * out, dst) rounds that scratch once into out (st TD_OK) and releases it, returning st or the
 * conversion's failure. */
td_status vk_dt_check(const char *op, const td_tensor *const *ts, int n, td_dtype dt);
td_status vk_dt_result(const char *op, td_tensor *out, td_tensor **dst);
td_status vk_dt_result_done(td_status st, td_tensor *out, td_tensor *dst);
/* Sets every element of out to the 32-bit word (no dispatch when out is empty). */
td_status vk_fill(const char *op, td_tensor *out, uint32_t word);

#endif
