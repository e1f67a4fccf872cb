/* The backend interface: everything a backend's kernels and hooks may use, and the table a
 * loadable backend module hands to the library (docs/adding-a-backend.md, "Loadable
 * modules"). A backend includes this header (through its generated td_backend_<name>.h),
 * never runtime/core/td_internal.h: a tensor and a device are opaque here but for a small
 * public head (td_be_tensor_head, td_be_device_head), read through the inline accessors
 * below, so the rest of the library's struct layouts can change without breaking a
 * compiled module. What does change this interface changes
 * TD_BACKEND_ABI_VERSION, which the loader checks. Installed as tdispatch/td_backend_api.h. */
#ifndef TD_BACKEND_API_H
#define TD_BACKEND_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "td_core.h"
#include "td_devices.h"
#include "td_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface. A module records the value it was compiled with in its
 * table (td_backend_module.abi_version); td_backend_load refuses any other. Bumped when a
 * declaration below, the tensor or device head, td_backend_module's layout or the kernel
 * signatures change. 2: the accessors read the heads inline (1: out-of-line calls). */
#define TD_BACKEND_ABI_VERSION 2

/* The symbol every loadable module exports: a td_backend_module_fn returning its table. */
#define TD_BACKEND_MODULE_SYMBOL "td_backend_module_entry"

/* ---- Tensors and devices, as a kernel sees them (the entry function has checked them) ----
 *
 * A shape: ndim dims (row-major; those past ndim are unspecified) and their product. */
typedef struct td_shape {
    int ndim;
    int64_t dims[TD_MAX_DIMS];
    int64_t numel;
} td_shape;

/* The public head of a tensor: the first member of the library's td_tensor, the only part
 * of it a backend reads, through the inline accessors below (no call on a kernel's path).
 * Its layout is part of this interface: a change to it changes TD_BACKEND_ABI_VERSION. The
 * rest of td_tensor stays private. The member list is a macro so that the library can name
 * the same members directly (td_internal.h); a backend uses td_be_tensor_head. */
#define TD_BE_TENSOR_HEAD_MEMBERS                                                          \
    void *data;        /* the backend's storage (what its alloc hook stored) */          \
    td_device *device; /* the device the tensor lives on */                              \
    td_dtype dtype;                                                                       \
    td_shape shape;
typedef struct td_be_tensor_head {
    TD_BE_TENSOR_HEAD_MEMBERS
} td_be_tensor_head;

/* Likewise the public head of a device: the first member of td_device. */
#define TD_BE_DEVICE_HEAD_MEMBERS                                                          \
    void *state; /* what the device_open hook stored (td_be_device_set_state) */         \
    int index;   /* the device's index within its backend */
typedef struct td_be_device_head {
    TD_BE_DEVICE_HEAD_MEMBERS
} td_be_device_head;

static inline const td_be_tensor_head *td_be_head(const td_tensor *t)
{
    return (const td_be_tensor_head *)(const void *)t;
}
/* The backend's storage of t (what its alloc hook stored with td_be_set_data). */
static inline void *td_be_data(const td_tensor *t)
{
    return td_be_head(t)->data;
}
/* Stores the storage pointer: the alloc hook's job (NULL is allowed for 0 elements). */
static inline void td_be_set_data(td_tensor *t, void *data)
{
    ((td_be_tensor_head *)(void *)t)->data = data;
}
static inline td_dtype td_be_dtype(const td_tensor *t)
{
    return td_be_head(t)->dtype;
}
/* t's shape (valid while t lives). */
static inline const td_shape *td_be_shape(const td_tensor *t)
{
    return &td_be_head(t)->shape;
}
static inline int td_be_ndim(const td_tensor *t)
{
    return td_be_head(t)->shape.ndim;
}
/* The dims, ndim of them (row-major; valid while t lives). */
static inline const int64_t *td_be_dims(const td_tensor *t)
{
    return td_be_head(t)->shape.dims;
}
static inline int64_t td_be_numel(const td_tensor *t)
{
    return td_be_head(t)->shape.numel;
}
/* The device the tensor lives on, its index, and the state the device_open hook kept. */
static inline td_device *td_be_device(const td_tensor *t)
{
    return td_be_head(t)->device;
}
static inline int td_be_device_index(const td_device *device)
{
    return ((const td_be_device_head *)(const void *)device)->index;
}
static inline void *td_be_device_state(const td_device *device)
{
    return ((const td_be_device_head *)(const void *)device)->state;
}
static inline void td_be_device_set_state(td_device *device, void *state)
{
    ((td_be_device_head *)(void *)device)->state = state;
}

TD_API_BEGIN

/* A device handed to a backend's own public functions (td_vulkan_sync, ...): its backend
 * (TD_BACKEND_AUTODIFF for an autodiff device), and the device an autodiff device wraps
 * (NULL for any other). device is not NULL. */
td_backend td_be_device_backend(const td_device *device);
td_device *td_be_device_inner(const td_device *device);

/* ---- Geometry helpers ---- */

/* Row-major strides of t, in elements. */
void td_be_strides(const td_tensor *t, int64_t strides[TD_MAX_DIMS]);
/* Strides (elements) for reading `in` as if broadcast to the shape of `out`
 * (right-aligned; 0 along broadcast dims), one per dim of out. */
void td_be_broadcast_strides(const td_tensor *in, const td_tensor *out, int64_t strides[TD_MAX_DIMS]);
/* A reduction of t over dim seen as [outer, size, inner] (row-major). */
void td_be_reduce_geometry(const td_tensor *t, int64_t dim, int64_t *outer, int64_t *size, int64_t *inner);
/* The geometry of a batched matmul out = a @ b: matrix sizes, the broadcast batch shape
 * and each operand's batch strides counted in matrices (0 where broadcast). */
typedef struct td_be_matmul {
    int64_t m, n, k;
    int batch_ndim;
    int64_t batch_dims[TD_MAX_DIMS];
    int64_t batch_numel;
    int64_t a_stride[TD_MAX_DIMS], b_stride[TD_MAX_DIMS];
} td_be_matmul;
void td_be_matmul_geometry(const td_tensor *a, const td_tensor *b, const td_tensor *out, td_be_matmul *g);

/* ---- Errors and memory ---- */

/* Records a message for td_last_error() and returns status. */
td_status td_error(td_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Host allocation through the library (its tests inject failures here); td_free frees
 * all three. td_malloc_aligned: align is a power of two. */
void *td_malloc(size_t size);
void *td_calloc(size_t n, size_t size);
void *td_malloc_aligned(size_t align, size_t size);
void td_free(void *p);

TD_API_END

/* ---- Hooks and kernels ---- */

/* The hooks every backend provides (their meaning: docs/adding-a-backend.md, "The
 * contract a backend implements"). */
typedef td_status (*td_be_device_open_fn)(td_device *device);
typedef void (*td_be_device_close_fn)(td_device *device);
typedef td_status (*td_be_device_count_fn)(int *count);
typedef td_status (*td_be_device_info_fn)(const td_device *device, int index, td_device_info *out);
typedef td_status (*td_be_alloc_fn)(td_tensor *t);
typedef void (*td_be_free_fn)(td_tensor *t);
typedef td_status (*td_be_read_fn)(const td_tensor *t, void *host);
typedef td_status (*td_be_write_fn)(td_tensor *t, const void *host);

/* A kernel, named by its op ("float_add"); fn is the kernel cast to void (*)(void), with
 * the signature the generated td_backend_<name>.h declares for it. A view op (the
 * reshapes) is listed with fn NULL: the library shares the storage itself. */
typedef struct td_backend_kernel {
    const char *op;
    void (*fn)(void);
} td_backend_kernel;

/* What a loadable module hands to the library. abi_version stays the first member in
 * every version, so the loader can read it from any module. */
typedef struct td_backend_module {
    unsigned abi_version;  /* TD_BACKEND_ABI_VERSION as the module was compiled */
    const char *name;      /* the backend's name ("toy"): td_backend_name answers it */
    int id;                /* its kind, an out-of-tree id from 32 to 62 */
    unsigned dtypes;       /* bit (1u << td_dtype) per dtype it stores */
    /* Optional: run once when loaded; an error refuses the module (nothing else is
     * called then). fini: optional, at td_backend_unload_all / process teardown. */
    td_status (*init)(void);
    void (*fini)(void);
    td_be_device_open_fn device_open;
    td_be_device_close_fn device_close;
    td_be_device_count_fn device_count;
    td_be_device_info_fn device_info;
    td_be_alloc_fn alloc;
    td_be_free_fn free;
    td_be_read_fn read;
    td_be_write_fn write;
    const td_backend_kernel *kernels;
    int kernel_count;
} td_backend_module;

/* The type of TD_BACKEND_MODULE_SYMBOL. */
typedef const td_backend_module *(*td_backend_module_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
