/* tdispatch internals shared by the core, the backends and the generated dispatch. */
#ifndef TD_INTERNAL_H
#define TD_INTERNAL_H

#include <stdatomic.h>

#include "td_core.h"
/* First, so that what it declares (td_error, td_malloc, ...) is exported from a shared
 * libtdispatch: backend modules call them. */
#include "td_backend_api.h"
/* What the in-tree backends may use too (declarations only): moved there from here. */
#include "td_backend_core.h"

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

/* A device and a tensor begin with their public heads (td_backend_api.h), the part a
 * backend reads: the anonymous union names the head's members directly (d->state,
 * t->shape) and as the head object a backend's accessors read (d->head, t->head). */
struct td_device {
    union {
        td_be_device_head head;
        struct {
            TD_BE_DEVICE_HEAD_MEMBERS /* state (backend-owned), index */
        };
    };
    atomic_long rc;
    td_backend backend; /* TD_BACKEND_AUTODIFF for autodiff devices */
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
    union {
        td_be_tensor_head head;
        struct {
            /* data: backend storage (backend kinds only); device: an owned reference */
            TD_BE_TENSOR_HEAD_MEMBERS
        };
    };
    atomic_long rc;
    td_backend kind;      /* the backend, or TD_BACKEND_AUTODIFF */
    td_autodiff_context ctx;
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
/* TD_E_UNSUPPORTED for op on backend; implementers lists the backends whose specs implement
 * it ("cpu, vulkan"), and the message marks those this build lacks. */
td_status td_err_unsupported(const char *op, td_backend backend, const char *implementers);

/* Allocation through one place so tests can inject failures. */
void *td_malloc(size_t size);
void *td_calloc(size_t n, size_t size);
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
/* float_random_dtype: f32 is td_float_random (p0, p1 rounded to f32), f16 / bf16 its values
 * rounded once (td_float_cast), f64 the same counter-based stream with 53-bit uniforms, made on
 * the host (any backend that stores f64). */
td_status td_twin_random(const char *op, td_device *device, td_dtype dtype, const int64_t *shape, int shape_len,
                         td_distribution dist, double p0, double p1, uint64_t seed, td_tensor **out);
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
td_status td_dim_size(const char *op, const td_shape *s, int64_t dim, int64_t *out);
/* Decomposition builtins: at(arr, i) (negative i counts from the end) and idiv(a, b)
 * (floor division; b = 0 is TD_E_INVALID). */
td_status td_array_at(const char *op, const int64_t *arr, int64_t len, int64_t i, int64_t *out);
td_status td_idiv(const char *op, int64_t a, int64_t b, int64_t *out);

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


/* Moves a tensor between backends through host memory. */
td_status td_stage_to_device(const char *op, const td_tensor *a, td_device *device, td_tensor **out);

#endif
