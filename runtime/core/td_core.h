/* tdispatch public core API: status codes, devices, tensor handles and queries. */
#ifndef TD_CORE_H
#define TD_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "td_kinds.h" /* generated: td_backend, td_op */

#ifdef __cplusplus
extern "C" {
#endif

#define TD_MAX_DIMS 8

/* Every public function returns a status; TD_OK is 0. td_last_error() tells more. */
typedef enum td_status {
    TD_OK = 0,
    TD_E_NULL,              /* a required pointer argument was NULL */
    TD_E_INVALID,           /* a bad argument value (negative size, zero divisor, ...) */
    TD_E_KIND,              /* wrong primitive kind: an int tensor given to a float op, ... */
    TD_E_DTYPE,             /* dtypes that do not match */
    TD_E_SHAPE,             /* shapes that do not broadcast or do not agree */
    TD_E_RANGE,             /* a dim, slice or index out of range */
    TD_E_BACKEND_MISMATCH,  /* tensors (or tensor and device) on different backends */
    TD_E_UNSUPPORTED,       /* the backend does not implement the op */
    TD_E_NOMEM,             /* an allocation failed */
    TD_E_AUTODIFF_CONTEXT,  /* autodiff context disabled where it must be enabled, or two strategies */
    TD_E_AUTODIFF,          /* other autodiff misuse (backward on a non-scalar, ...) */
    TD_E_DEVICE,            /* no such device, or the device failed */
    TD_E_DISTRIBUTED,       /* a collective failed */
    TD_E_INTERNAL           /* a bug in tdispatch: please report it */
} td_status;

typedef enum td_dtype { TD_F32 = 0, TD_I32 = 1, TD_BOOL = 2 } td_dtype;

/* Checkpointing strategy of an autodiff context. */
typedef enum td_checkpoint {
    TD_CHECKPOINT_NONE = 0,     /* keep everything backward needs */
    TD_CHECKPOINT_BALANCED = 1  /* recompute memory-bound ops in backward */
} td_checkpoint;

/* DISABLED, or ENABLED with a checkpointing strategy. Every tensor carries one. */
typedef struct td_autodiff_context {
    bool enabled;
    td_checkpoint strategy;
} td_autodiff_context;

typedef enum td_distribution { TD_UNIFORM = 0, TD_NORMAL = 1 } td_distribution;

typedef struct td_tensor td_tensor;
typedef struct td_device td_device;
typedef struct td_group td_group;

/* How a collective combines the ranks' tensors. */
typedef enum td_reduce_op { TD_REDUCE_SUM = 0, TD_REDUCE_MEAN = 1, TD_REDUCE_MAX = 2, TD_REDUCE_MIN = 3 } td_reduce_op;

/* Errors. The message is thread-local and names op, backend and cause. */
const char *td_last_error(void);
const char *td_status_name(td_status status);

/* Backends compiled into this build. */
const char *td_backend_name(td_backend backend);
bool td_backend_enabled(td_backend backend);
/* Whether backend implements op (false for disabled backends and out-of-range values). */
bool td_backend_supports(td_backend backend, td_op op);
const char *td_op_name(td_op op);

/* Devices are reference counted; each td_device * handed out is owned by the caller. */
td_status td_device_open(td_backend backend, int index, td_device **out);
td_status td_device_autodiff(td_device *inner, td_checkpoint strategy, td_device **out);
td_status td_device_retain(td_device *device);
void td_device_release(td_device *device);
/* What a device does with an op its backend does not implement. */
typedef enum td_fallback {
    TD_FALLBACK_NONE = 0, /* the op fails with TD_E_UNSUPPORTED (the default) */
    TD_FALLBACK_CPU = 1   /* the op runs on the CPU backend: inputs are copied there and the
                           * result back; for plain and autodiff tensors, gradients included */
} td_fallback;
/* Sets the policy of a device (of the inner device, for an autodiff device). Each op that
 * falls back is logged once per device on stderr and counted. The policy belongs to the
 * device, so every handle of it shares it. TD_E_UNSUPPORTED for TD_FALLBACK_CPU in a build
 * without the CPU backend. */
td_status td_device_set_fallback(td_device *device, td_fallback policy);
/* How many times op ran on the CPU for device instead of its backend (0: never). */
td_status td_device_fallback_count(const td_device *device, td_op op, int64_t *count);
/* The backend of the device; TD_BACKEND_AUTODIFF for autodiff devices. */
td_status td_device_backend(const td_device *device, td_backend *out);

/* Tensors are reference counted; each td_tensor * returned is owned by the caller. */
td_status td_tensor_retain(td_tensor *t);
void td_tensor_release(td_tensor *t); /* NULL is ignored */

/* dims receives ndim sizes (room for TD_MAX_DIMS); ndim may be 0 for a scalar. */
td_status td_tensor_shape(const td_tensor *t, int64_t dims[TD_MAX_DIMS], int *ndim);
td_status td_tensor_numel(const td_tensor *t, int64_t *numel);
td_status td_tensor_dtype(const td_tensor *t, td_dtype *out);
/* Borrowed: valid while t is alive. */
td_status td_tensor_device(const td_tensor *t, td_device **out);
/* The tensor's kind: a backend, or TD_BACKEND_AUTODIFF. */
td_status td_tensor_backend(const td_tensor *t, td_backend *out);
td_status td_tensor_autodiff_context(const td_tensor *t, td_autodiff_context *out);
/* Overrides the context; meant for tests and advanced use (the guard rejects a
 * tracked float whose context was set to DISABLED). */
td_status td_tensor_set_autodiff_context(td_tensor *t, td_autodiff_context ctx);

/* Autodiff. Float tensors on an autodiff device are tracked primitives; leaves take part
 * in backward once td_require_grad marks them. Gradients are tensors of the inner backend. */
typedef struct td_grads td_grads;
td_status td_require_grad(td_tensor *t);
td_status td_is_tracked(const td_tensor *t, bool *out);
/* A new autodiff tensor with the same data that backward does not go through. */
td_status td_detach(const td_tensor *t, td_tensor **out);
/* Backward from a one-element loss (seed 1). As in PyTorch, backward frees the graph it
 * went through: once it has started, the graph behind loss is released whatever happens.
 * A later backward whose graph reaches a released node (a second loss over the same
 * logits) fails with TD_E_AUTODIFF before changing anything, unless the first backward
 * kept the graph (retain_graph below). When backward fails before starting (out of memory
 * for the seed or its bookkeeping, a released node) the graph stays and may be retried. */
td_status td_backward(const td_tensor *loss, td_grads **out);
/* Backward from any tracked tensor with an explicit seed gradient of its shape (a tensor
 * of the inner backend, or an autodiff tensor on the same device). */
td_status td_backward_seeded(const td_tensor *root, const td_tensor *seed, td_grads **out);
/* Options of td_backward_ex; zero-initialize, then set what you need. */
typedef struct td_backward_options {
    const td_tensor *seed; /* NULL: a seed of ones (the root must have one element) */
    bool retain_graph;     /* keep the graph, so another backward can go through it again */
} td_backward_options;
/* td_backward / td_backward_seeded with options (options may be NULL). */
td_status td_backward_ex(const td_tensor *root, const td_backward_options *options, td_grads **out);
/* The gradient of a leaf (a new reference, a tensor of the inner backend); *out is NULL
 * when the leaf took no part in the loss. */
td_status td_grads_get(const td_grads *grads, const td_tensor *t, td_tensor **out);
void td_grads_release(td_grads *grads);

/* Distributed: a process group over MPI (no MPI type leaks into this API). In a build
 * without MPI td_dist_available() is false and these return TD_E_UNSUPPORTED. */
bool td_dist_available(void);
/* Initializes MPI (argc/argv may be NULL); call once per process, before any group. */
td_status td_dist_init(int *argc, char ***argv);
/* Finalizes MPI; collectives on groups made before fail with TD_E_DISTRIBUTED afterwards. */
td_status td_dist_finalize(void);
/* The group of every process (a new reference). */
td_status td_group_world(td_group **out);
td_status td_group_rank(const td_group *g, int *rank);
td_status td_group_size(const td_group *g, int *size);
td_status td_group_retain(td_group *g);
void td_group_release(td_group *g);

/* Testing hook: the next n allocations succeed, then every one fails with
 * TD_E_NOMEM until reset with n < 0. Not thread-safe; for tests only. */
void td_testing_fail_allocations_after(long n);
/* Tensors and devices alive now (created and not yet released): leak checks in tests. */
long td_testing_live_objects(void);
/* Bytes of the distinct tensors the autodiff graph behind t keeps for backward. */
td_status td_testing_graph_bytes(const td_tensor *t, int64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
