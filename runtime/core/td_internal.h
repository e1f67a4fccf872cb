/* tdispatch internals shared by the core, the backends and the generated dispatch. */
#ifndef TD_INTERNAL_H
#define TD_INTERNAL_H

#include <stdatomic.h>

#include "td_core.h"
/* First, so that what it declares (td_error, td_malloc, ...) is exported from a shared
 * libtdispatch: backend modules call them. */
#include "td_backend_api.h"

/* Largest element count a tensor may have: keeps byte sizes far from overflow. Every
 * shape rule checks it before it multiplies. */
#define TD_MAX_NUMEL (INT64_C(1) << 40)

/* Checked int64 arithmetic for sizes: *r = a op b, and whether it fit (false: *r is
 * unspecified). Every size a shape rule computes from its inputs goes through these, so a
 * huge dim (an empty tensor's may be 2^40) times a huge attribute is an error, never UB. */
#if defined(__GNUC__) || defined(__clang__)
static inline bool td_add_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}
static inline bool td_sub_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_sub_overflow(a, b, r);
}
static inline bool td_mul_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
#else
static inline bool td_add_ok(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return false;
    *r = a + b;
    return true;
}
static inline bool td_sub_ok(int64_t a, int64_t b, int64_t *r)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
        return false;
    *r = a - b;
    return true;
}
static inline bool td_mul_ok(int64_t a, int64_t b, int64_t *r)
{
    if (a == 0 || b == 0) {
        *r = 0;
        return true;
    }
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN))
        return false;
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a) : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return false;
    *r = a * b;
    return true;
}
#endif

typedef struct td_shape {
    int ndim;
    int64_t dims[TD_MAX_DIMS];
    int64_t numel;
} td_shape;

/* A function on every op's path that must be inlined, also where a large file (the
 * generated dispatch) has used up the compiler's inlining budget. */
#if defined(__GNUC__) || defined(__clang__)
#define TD_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define TD_ALWAYS_INLINE static inline
#endif

/* *dst = *src for what is read of a shape: ndim, numel and the dims in use (past ndim
 * they are never read). The first four dims are copied whatever ndim, a fixed size that
 * compiles to two vector moves rather than a call to memcpy. */
TD_ALWAYS_INLINE void td_shape_copy(td_shape *dst, const td_shape *src)
{
    dst->ndim = src->ndim;
    dst->numel = src->numel;
    for (int k = 0; k < 4; k++)
        dst->dims[k] = src->dims[k];
    if (src->ndim > 4)
        for (int k = 4; k < TD_MAX_DIMS; k++)
            dst->dims[k] = src->dims[k];
}

struct td_device {
    atomic_long rc;
    td_backend backend; /* TD_BACKEND_AUTODIFF for autodiff devices */
    int index;
    void *state;        /* backend-owned */
    td_device *inner;   /* autodiff: the wrapped device */
    td_checkpoint strategy;
    td_device *next_open; /* backend devices: the list of open devices (one per backend and index) */
    _Atomic(td_fallback) fallback;  /* backend devices: td_device_set_fallback */
    atomic_llong *fallback_counts;  /* [TD_OP_COUNT], made with the first policy set */
    atomic_bool prefer_composite;   /* backend devices: td_device_set_composites */
    _Atomic(td_dtype) autocast;     /* autodiff devices: td_autodiff_set_autocast (TD_F32: off) */
};

struct td_ad_node;

/* Releases a tape node. The autodiff engine installs it when it makes its first node, so
 * the core never calls into autodiff and a tensor with a node always finds it set. */
typedef void (*td_node_release_fn)(struct td_ad_node *node);
extern _Atomic(td_node_release_fn) td_node_release_hook;
/* Casts a tracked float tensor and records the cast on the tape (backward: the gradient
 * cast back to t's dtype). Installed with td_node_release_hook: a tracked tensor has a
 * node, so the engine has made one and installed both. */
typedef td_status (*td_cast_record_fn)(const char *op, const td_tensor *t, td_dtype dtype, td_tensor **out);
extern _Atomic(td_cast_record_fn) td_cast_record_hook;

/* Storage shared by views: how many tensors' data is the same storage. A tensor gets one
 * with its first view (td_tensor_share); until then it alone owns its data, and tensors
 * that never have a view pay nothing for sharing. */
typedef struct td_share {
    atomic_long rc;
    /* Storage the library did not allocate (td_tensor_from_external, td_external.h): the
     * last holder calls release(release_ctx) instead of the backend's free. NULL otherwise. */
    void (*release)(void *release_ctx);
    void *release_ctx;
} td_share;

/* A CPU tensor handle over external storage (td_external.c): one reference, counted like
 * any tensor, holding share (rc 1, its release set) which it frees with the storage. */
td_status td_tensor_new_external(const char *op, td_device *device, td_dtype dtype, const td_shape *shape, void *data,
                                 td_share *share, td_tensor **out);

struct td_tensor {
    atomic_long rc;
    td_backend kind;      /* the backend, or TD_BACKEND_AUTODIFF */
    td_dtype dtype;
    td_shape shape;
    td_autodiff_context ctx;
    td_device *device;    /* owned reference */
    void *data;           /* backend storage (backend kinds only) */
    _Atomic(td_share *) share; /* NULL: data is this tensor's alone; else counts its holders */
    td_tensor *inner;     /* autodiff kind: the wrapped primitive (owned) */
    struct td_ad_node *node; /* autodiff kind: tape node; NULL when not tracked */
};

/* The hooks every backend provides (prototypes are generated per backend). */
typedef struct td_backend_vtable {
    const char *name;
    unsigned dtypes; /* bit (1u << td_dtype) per supported dtype */
    td_status (*device_open)(td_device *device);
    void (*device_close)(td_device *device);
    td_status (*device_count)(int *count);
    /* device: an open device to describe, or NULL for device `index` (in range) */
    td_status (*device_info)(const td_device *device, int index, td_device_info *out);
    /* storage for t->shape.numel elements of t->dtype; for 0 elements a backend may leave
     * t->data NULL (free is only called for non-NULL data) */
    td_status (*alloc)(td_tensor *t);
    void (*free)(td_tensor *t);
    td_status (*read)(const td_tensor *t, void *host);  /* whole tensor, row-major */
    td_status (*write)(td_tensor *t, const void *host); /* whole tensor, row-major */
    /* Optional (a backend spec's convert = true): converts t into out, allocated with t's
     * shape, the target dtype and t's device, on the device. TD_E_UNSUPPORTED, with no error
     * recorded and nothing written, for a pair of dtypes it has no kernel for: the core then
     * converts through host memory (td_dtype_convert). */
    td_status (*convert)(const td_tensor *t, td_tensor *out);
    void (*const *kernels)(void); /* [TD_OP_COUNT]; NULL where the op is not implemented */
    /* Optional (NULL: none; the spec's `accelerated = true` sets it): the dtypes, as bits
     * 1u << td_dtype, that device (an open one, or device `index` when NULL) runs on
     * dedicated units; td_backend_dtype_usage keeps those the spec says it stores and computes. */
    unsigned (*dtype_accelerated)(const td_device *device, int index);
} td_backend_vtable;

/* Generated: the vtable of each enabled backend, NULL for disabled ones and autodiff; the
 * loader fills the out-of-tree slots (32-62) of the modules it loads. */
extern const td_backend_vtable *td_backend_vtables[TD_BACKEND_COUNT];

/* Loaded backend modules (td_loader.c). The vtables of the ids 32-62 that td_backend_load
 * filled are set in td_backend_vtables; td_backend_is_loaded says which. TD_BACKEND_PATH
 * is read once, by the first call of td_backend_autoload (device open and enumeration). */
bool td_backend_is_loaded(td_backend backend);
void td_backend_autoload(void);
/* Generated: whether op is a view (its spec says view = true): a module lists it without a kernel. */
bool td_op_is_view(td_op op);

/* Errors: record a message for td_last_error() and return the status. */
td_status td_error(td_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
td_status td_err_null(const char *op, const char *arg);
/* TD_E_UNSUPPORTED for op on backend; implementers lists the backends whose specs implement
 * it ("cpu, vulkan"), and the message marks those this build lacks. */
td_status td_err_unsupported(const char *op, td_backend backend, const char *implementers);
void td_clear_error(void);

#define TD_TRY(expr)                       \
    do {                                   \
        td_status td_try_st_ = (expr);     \
        if (td_try_st_ != TD_OK)           \
            return td_try_st_;             \
    } while (0)

/* Allocation through one place so tests can inject failures. */
void *td_malloc(size_t size);
void *td_calloc(size_t n, size_t size);
/* align-byte aligned (a power of two; TD_ALIGN is a cache line, and what any vector load or
 * store wants), freed with td_free: for large tensor storage. */
#define TD_ALIGN 64
void *td_malloc_aligned(size_t align, size_t size);
void td_free(void *p);
/* Whether the failure injection (td_testing_fail_allocations_after) fails this allocation:
 * for allocators that reuse memory instead of calling td_malloc (td_block_cache.c). The
 * usual answer, injection off (td_alloc_fail_after < 0), is inline. */
extern long td_alloc_fail_after;
bool td_alloc_should_fail_slow(void);
static inline bool td_alloc_should_fail(void)
{
    return td_alloc_fail_after >= 0 && td_alloc_should_fail_slow();
}
/* Thread-local caches of equal-sized blocks (td_block_cache.c): td_cache_take returns a
 * cached block of `bytes` or td_malloc's; td_cache_give keeps p (of `bytes`) for reuse on
 * this thread, up to cap blocks, else frees it. NULL is ignored. The usual cases, a block
 * taken from or given to a warm cache, are inline: every op's result handle passes here. */
typedef enum td_cache_kind { TD_CACHE_TENSOR, TD_CACHE_AD_NODE, TD_CACHE_SMALL, TD_CACHE_COUNT } td_cache_kind;
typedef struct td_cache_block {
    struct td_cache_block *next;
} td_cache_block;
typedef struct td_block_cache {
    td_cache_block *head;
    size_t bytes; /* of every block in the list */
    int count;
} td_block_cache;
typedef struct td_thread_caches {
    td_block_cache c[TD_CACHE_COUNT];
    bool registered; /* the key's destructor will free this thread's caches */
    bool closed;     /* freed (thread exit, process exit): blocks go straight to free */
} td_thread_caches;
extern _Thread_local td_thread_caches td_thread_cache;
void *td_cache_take_slow(td_cache_kind kind, size_t bytes);
/* td_malloc / td_free of the smallest heap blocks (a 1-element tensor's storage), through
 * the same thread caches (TD_CACHE_SMALL): td_small_take returns a cached block of
 * TD_SMALL_BYTES usable bytes or NULL; td_small_give keeps p when it is such a block and
 * the cache has room, and reports whether it did. Only where the C library tells a
 * block's size (glibc's malloc_usable_size) and not under AddressSanitizer; elsewhere
 * they take and keep nothing. */
#define TD_SMALL_BYTES 24
void *td_small_take(void);
bool td_small_give(void *p);
void td_cache_give_slow(td_cache_kind kind, void *p, size_t bytes, int cap);
#if defined(__SANITIZE_ADDRESS__)
#define TD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TD_ASAN 1
#endif
#endif
TD_ALWAYS_INLINE void *td_cache_take(td_cache_kind kind, size_t bytes)
{
#ifndef TD_ASAN /* under ASan a cached block is poisoned: the slow path unpoisons it */
    td_block_cache *c = &td_thread_cache.c[kind];
    td_cache_block *b = c->head;
    if (b != NULL && c->bytes == bytes && td_alloc_fail_after < 0) {
        c->head = b->next;
        c->count--;
        return b;
    }
#endif
    return td_cache_take_slow(kind, bytes);
}
TD_ALWAYS_INLINE void td_cache_give(td_cache_kind kind, void *p, size_t bytes, int cap)
{
#ifndef TD_ASAN
    td_thread_caches *t = &td_thread_cache;
    td_block_cache *c = &t->c[kind];
    if (p != NULL && t->registered && !t->closed && c->count < cap && c->bytes == bytes) {
        td_cache_block *b = p;
        b->next = c->head;
        c->head = b;
        c->count++;
        return;
    }
#endif
    td_cache_give_slow(kind, p, bytes, cap);
}
/* The dtype table (generated from specs/dtypes.lua into td_dtypes.c): one row per id,
 * `declared` false in the gaps. */
typedef struct td_dtype_row {
    const char *name;
    td_class cls;
    int size;          /* bytes per block */
    int block;         /* values per block: 1, or 32 for q8_0 / q4_0 */
    bool is_default;   /* the class's default dtype */
    bool quantized;
    const char *safetensors; /* NULL: the format has no name for it */
    int ggml;          /* GGML_TYPE id, -1 for none */
    double nmse;       /* float dtypes: the generated comparisons' bound */
    td_dtype via;      /* the dtype a kernel lacking this one computes in; TD_DTYPE_COUNT: none */
    bool declared;
} td_dtype_row;
extern const td_dtype_row td_dtype_rows[TD_DTYPE_COUNT];

static inline bool td_dtype_valid(td_dtype d)
{
    return (unsigned)d < (unsigned)TD_DTYPE_COUNT && td_dtype_rows[d].declared;
}
/* Bytes of numel values of dtype: numel / block blocks for a block-quantized dtype (numel
 * is a multiple of the block there: td_tensor_new_on checks the last dim). */
static inline size_t td_dtype_bytes(td_dtype d, int64_t numel)
{
    if (!td_dtype_valid(d))
        return 0;
    const td_dtype_row *r = &td_dtype_rows[d];
    return (size_t)(numel / r->block) * (size_t)r->size;
}
/* TD_E_SHAPE unless shape can hold values of dtype: a block-quantized dtype needs at least
 * one dim and a last dim that is a multiple of its block (blocks never straddle rows). */
td_status td_dtype_check_shape(const char *op, td_dtype dtype, const td_shape *shape);
/* The quantized twins' checks: a dtype a host buffer may hold (any stored dtype of cls,
 * block-quantized ones included: raw blocks). */
td_status td_dtype_check_storage(const char *op, td_class cls, td_dtype dtype);
/* t's storage (the inner tensor's for an autodiff one) read into a new td_malloc'd host
 * buffer of td_dtype_bytes(dtype, numel) bytes. */
td_status td_dtype_read_host(const char *op, const td_tensor *t, void **host);
/* float_into_data_dtype of a quantized t: dtype t's own (raw blocks, dst_len in bytes) or a
 * plain float dtype (dequantized values, dst_len in elements). */
td_status td_quant_into_data(const char *op, const td_tensor *t, td_dtype dtype, void *dst, int64_t dst_len);
/* float_matmul_nt's mixing check (its spec's quantized_arg): b may be q8_0 / q4_0 when a
 * is f32; otherwise a and b share a dtype (td_check_same_dtype). */
td_status td_check_same_dtype_or_quantized(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                           const td_tensor *t);
/* Row converters (runtime/core/td_convert.c: F16C / AVX-512 / AVX-512 BF16 paths chosen at
 * run time, bit-exact with td_half.h): n elements from src to dst. */
void td_f16_to_f32_row(const void *src, void *dst, size_t n);
void td_f32_to_f16_row(const void *src, void *dst, size_t n);
void td_bf16_to_f32_row(const void *src, void *dst, size_t n);
void td_f32_to_bf16_row(const void *src, void *dst, size_t n);

/* The dtype traits (td_cast.c), keyed by td_dtype, ggml-style: what a kernel needs to
 * handle a dtype through f32. to/from_f32_row are set for the plain float dtypes. */
typedef void (*td_row_fn)(const void *src, void *dst, size_t n);
typedef struct td_dtype_traits {
    int size;  /* bytes per block */
    int block; /* values per block */
    td_row_fn to_f32_row;
    td_row_fn from_f32_row;
} td_dtype_traits;
extern const td_dtype_traits td_dtype_traits_table[TD_DTYPE_COUNT];

/* n elements of `from` to `to` by the rules of docs/dtypes.md section 7 (any two stored,
 * non-quantized dtypes; src and dst do not overlap). */
void td_convert_row(td_dtype from, const void *src, td_dtype to, void *dst, size_t n);
bool td_dtype_convertible(td_dtype d);
/* dtype is a valid, non-quantized dtype of class cls (the target of a cast or a twin). */
td_status td_dtype_check_target(const char *op, td_class cls, td_dtype dtype);
/* A new tensor of dtype on device (an autodiff device: on its inner one, wrapped) holding
 * host, numel elements in the dtype's storage format. */
td_status td_dtype_make(const char *op, td_device *device, td_dtype dtype, const td_shape *shape, const void *host,
                        td_tensor **out);
/* t (of class from_cls) converted to dtype (any class): a new tensor on t's device, or t
 * itself retained when it has the dtype already. */
td_status td_dtype_convert(const char *op, const td_tensor *t, td_class from_cls, td_dtype dtype, td_tensor **out);
/* Bodies of the generated `_dtype` twins (the twin has checked out and the dtype's class). */
td_status td_twin_from_data(const char *op, td_device *device, td_dtype dtype, const void *data, const int64_t *shape,
                            int shape_len, td_tensor **out);
td_status td_twin_fill(const char *op, td_device *device, td_dtype dtype, const int64_t *shape, int shape_len,
                       double fvalue, int64_t ivalue, td_tensor **out);
td_status td_twin_into_data(const char *op, td_class cls, const td_tensor *t, td_dtype dtype, void *dst,
                            int64_t dst_len);
/* The mixing check (docs/dtypes.md section 6): two tensors of one class share a dtype. */
td_status td_check_same_dtype_slow(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                   const td_tensor *t);
static inline td_status td_check_same_dtype(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                            const td_tensor *t)
{
    return t0->dtype == t->dtype ? TD_OK : td_check_same_dtype_slow(op, arg0, t0, arg, t);
}
/* "via f32" (docs/dtypes.md section 4): whether a dtype the kernel does not compute runs
 * on f32 copies; the input's copy (t itself, retained, when computed); the result
 * converted back to the inputs' float dtype (r itself, retained, when it is not float or
 * already has it). */
bool td_dtype_via_f32(td_dtype d, unsigned computed);
td_status td_via_in(const char *op, const td_tensor *t, unsigned computed, td_tensor **out);
td_status td_via_out(const char *op, td_tensor *r, td_dtype dtype, td_autodiff_context ctx, td_tensor **out);
/* "f32 inside" (opmath, docs/composites.md): a composite whose float inputs are of a dtype
 * whose `via` is f32 (f16, bf16; not the block-quantized ones) runs its decomposition on f32
 * copies of them (td_opmath_in: t itself, retained, when its dtype is not one) and rounds a
 * float result once (td_via_out). */
static inline bool td_opmath_f32(td_dtype d)
{
    return td_dtype_rows[d].via == TD_F32 && !td_dtype_rows[d].quantized;
}
td_status td_opmath_in(const char *op, const td_tensor *t, td_tensor **out);
/* An arm's answer for a dtype its backend neither computes nor runs via f32. */
td_status td_err_dtype_unsupported(const char *op, const char *backend, const td_tensor *t);

/* The class of a valid dtype (no check: the hot path of the class checks). */
static inline td_class td_dtype_cls(td_dtype d)
{
    return td_dtype_rows[d].cls;
}

/* Shapes. */
td_status td_shape_from(const char *op, const int64_t *dims, int ndim, td_shape *out);
void td_shape_format(const td_shape *s, char *buf, size_t cap);
bool td_shape_equal(const td_shape *a, const td_shape *b);
/* Whether dims (n of them, NULL allowed) hold a 0: the tensor they describe is empty, so
 * its host data may be NULL (the generated from_data entries). */
static inline bool td_dims_have_zero(const int64_t *dims, int n)
{
    for (int i = 0; dims != NULL && i < n; i++)
        if (dims[i] == 0)
            return true;
    return false;
}
/* Row-major strides of s, in elements. */
void td_shape_strides(const td_shape *s, int64_t strides[TD_MAX_DIMS]);
/* Strides of `in` for reading it as if broadcast to `out` (right-aligned). */
void td_broadcast_strides(const td_shape *in, const td_shape *out, int64_t strides[TD_MAX_DIMS]);
/* s (at least 2 dims) with its last two dims swapped: a transposed matrix's shape. */
td_shape td_shape_swap_last2(const td_shape *s);

/* The geometry of a batched matmul out = a @ b (shapes checked by td_rule_matmul): the
 * matrix sizes, the broadcast batch shape, and each operand's batch strides counted in
 * matrices (0 where it is broadcast). Backends share it. */
typedef struct td_matmul_geometry {
    int64_t m, n, k;
    td_shape batch;
    int64_t a_stride[TD_MAX_DIMS], b_stride[TD_MAX_DIMS];
} td_matmul_geometry;
/* a, b and out as matmul sees them (1-d a or b promoted as torch.matmul does: the geometry
 * of the result with the dims the rule removed put back). */
void td_matmul_geometry_of(const td_shape *a, const td_shape *b, const td_shape *out, td_matmul_geometry *g);
void td_matmul_promote(const td_shape *a, const td_shape *b, const td_shape *out, td_shape *a2, td_shape *b2,
                       td_shape *out2);

/* s itself, or [1] for a 0-d s: how the index family (gather, scatter, select, ...) sees a
 * 0-d tensor, as PyTorch's ensure_nonempty_dim / ensure_nonempty_size do. */
td_shape td_shape_nonempty(const td_shape *s);
/* A reduction over dim of s seen as [outer, size, inner] (row-major). */
void td_reduce_geometry(const td_shape *s, int64_t dim, int64_t *outer, int64_t *size, int64_t *inner);
/* The region [starts, ends) of a row-major tensor of shape s (ranges given for the first
 * starts_len dims, full beyond): its shape, and the element offset of its first element. */
void td_slice_region(const td_shape *s, const int64_t *starts, int starts_len, const int64_t *ends,
                     td_shape *region, int64_t *offset);

/* Tensor construction (storage through the backend's alloc hook). */
/* CPU fallback, called by generated arms of ops a backend lacks: whether device (a
 * backend device) has the CPU policy; then the CPU device to run on (a new reference),
 * the op counted and logged once. */
static inline bool td_fallback_enabled(const td_device *device)
{
    return atomic_load_explicit(&device->fallback, memory_order_relaxed) == TD_FALLBACK_CPU;
}
td_status td_fallback_begin(const char *op, td_op id, td_device *device, td_device **cpu);

/* Composites (ops run by their decomposition): whether a native arm should run the
 * decomposition instead (td_device_set_composites); the result of a decomposition, checked
 * against the shape rule's and handed to *out (owned: res is taken; otherwise retained). */
static inline bool td_prefer_composite(const td_device *device)
{
    return atomic_load_explicit(&device->prefer_composite, memory_order_relaxed);
}
td_status td_composite_finish(const char *op, td_tensor *res, bool owned, const td_shape *want,
                              td_autodiff_context ctx, td_tensor **out);
/* The size of dim (negative counts from the end; a 0-d shape has one dim of size 1 at 0
 * and -1, as in PyTorch), for decompositions' size(x, d). */
/* Prefixes the current message with op (a composite naming the part that failed):
 * "float_max_dim_with_indices: float_max_dim: a is NULL". Returns status. */
td_status td_error_within(td_status status, const char *op);
/* argwhere's row-major coordinates of the true elements of mask (shape s), count of them
 * (the rule's count: a different one is TD_E_INTERNAL). Shared by the backends' kernels. */
td_status td_argwhere_fill(const char *op, const bool *mask, const td_shape *s, int64_t count, int32_t *out);
td_status td_dim_size(const char *op, const td_shape *s, int64_t dim, int64_t *out);
/* Decomposition builtins: at(arr, i) (negative i counts from the end) and idiv(a, b)
 * (floor division; b = 0 is TD_E_INVALID). */
td_status td_array_at(const char *op, const int64_t *arr, int64_t len, int64_t i, int64_t *out);
td_status td_idiv(const char *op, int64_t a, int64_t b, int64_t *out);

/* The op trace (td_trace.c): whether it is on (one relaxed load in every entry), the
 * clock, and the events the entries, the autodiff engine and backends write. */
extern atomic_bool td_trace_flag;
static inline bool td_tracing(void)
{
    return atomic_load_explicit(&td_trace_flag, memory_order_relaxed);
}
uint64_t td_trace_now(void);
void td_trace_event(const char *name, const char *cat, uint64_t t0, uint64_t t1, const char *args);
void td_trace_op(const char *op, const td_tensor *const *ins, int nins, const td_device *device, uint64_t t0,
                 td_status st);
void td_trace_init_from_env(void);

/* A function off the usual path (the traced entries): kept out of line and out of the way. */
#if defined(__GNUC__) || defined(__clang__)
#define TD_COLD __attribute__((cold, noinline))
#else
#define TD_COLD
#endif

/* Generated functions a build may leave unused (composites no enabled backend needs). */
#if defined(__GNUC__) || defined(__clang__)
#define TD_MAYBE_UNUSED __attribute__((unused))
#else
#define TD_MAYBE_UNUSED
#endif

td_status td_tensor_new_on(const char *op, td_device *device, td_dtype dtype, const td_shape *shape,
                           td_tensor **out);
/* A view: a new tensor of `shape` on a's device whose data is a's storage (the arms of
 * ops whose spec says view = true). shape must hold a's element count; a backend that
 * lists a view op keeps its storage row-major, sized by dtype and element count alone. */
td_status td_tensor_share(const char *op, const td_tensor *a, const td_shape *shape, td_autodiff_context ctx,
                          td_tensor **out);
/* A shell with no storage; used by autodiff to wrap an inner tensor (takes ownership of inner). */
td_status td_tensor_wrap(const char *op, td_device *ad_device, td_tensor *inner, td_autodiff_context ctx,
                         td_tensor **out);

/* Checks done once, at the boundary (the generated entry functions). The common,
 * passing case is inline; the out-of-line *_slow functions decide and explain. */
td_status td_check_class_slow(const char *op, const char *arg, const td_tensor *t, td_dtype want);
td_status td_check_same_place_slow(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                   const td_tensor *t);
td_status td_ctx_merge_slow(const char *op, td_autodiff_context a, td_autodiff_context b,
                            td_autodiff_context *out);
td_status td_check_backend_dtype(const char *op, td_backend backend, td_dtype dtype);

static inline td_status td_check_class(const char *op, const char *arg, const td_tensor *t, td_dtype want)
{
    return t->dtype == want ? TD_OK : td_check_class_slow(op, arg, t, want);
}

static inline td_status td_check_same_place(const char *op, const char *arg0, const td_tensor *t0,
                                            const char *arg, const td_tensor *t)
{
    if (t0->kind == t->kind && t0->device == t->device)
        return TD_OK;
    return td_check_same_place_slow(op, arg0, t0, arg, t);
}

static inline td_status td_ctx_merge(const char *op, td_autodiff_context a, td_autodiff_context b,
                                     td_autodiff_context *out)
{
    /* Also inline: two enabled contexts of one strategy, every op of a tracked graph. */
    if (!b.enabled || (a.enabled && a.strategy == b.strategy)) {
        *out = a;
        return TD_OK;
    }
    return td_ctx_merge_slow(op, a, b, out);
}
/* The autodiff guard (DESIGN.md): the passing case inline, as for the checks above. */
td_status td_guard_slow(const char *op, const td_tensor *t);
static inline td_status td_guard(const char *op, const td_tensor *t)
{
    if (t->kind == TD_BACKEND_AUTODIFF && !t->ctx.enabled && td_dtype_cls(t->dtype) == TD_CLASS_FLOAT)
        return td_guard_slow(op, t);
    return TD_OK;
}
td_autodiff_context td_device_context(const td_device *d);

/* Collectives on host memory, for backends that implement the distributed family. Each
 * first checks that the group is usable and that every rank passes the same op, dtype and
 * shape (td_dist_agree), so a disagreement is an error on all ranks. */
td_status td_dist_check(const char *op, const td_group *g);
int td_group_size_of(const td_group *g);
int td_group_rank_of(const td_group *g);
td_status td_dist_agree(const char *op, const td_group *g, int64_t tag, const td_tensor *t);
/* recv = reduce over ranks of send (send == recv reduces in place). */
td_status td_dist_all_reduce(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype, td_reduce_op rop);
td_status td_dist_broadcast(const char *op, const td_group *g, void *buf, int64_t count, td_dtype dtype, int root);
td_status td_dist_all_gather(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype);

/* Moves a tensor between backends through host memory. */
td_status td_stage_to_device(const char *op, const td_tensor *a, td_device *device, td_tensor **out);

#include "td_rules.h"

#endif
