/* Devices and tensor handles: lifetime, queries, and the boundary checks of the dispatch. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "td_internal.h"

static atomic_long live_objects;

/* Tensor handles kept per thread for reuse (td_block_cache.c). */
#define TENSOR_CACHE_CAP 256

_Atomic(td_node_release_fn) td_node_release_hook;
_Atomic(td_cast_record_fn) td_cast_record_hook;

long td_testing_live_objects(void)
{
    return atomic_load(&live_objects);
}

static const td_backend_vtable *vtable_of(td_backend b)
{
    return (unsigned)b < TD_BACKEND_COUNT ? td_backend_vtables[b] : NULL;
}

bool td_backend_enabled(td_backend backend)
{
    td_backend_autoload(); /* TD_BACKEND_PATH's modules (not on the ops' path: vtable_of) */
    if (backend == TD_BACKEND_AUTODIFF)
        return true;
    return vtable_of(backend) != NULL;
}

bool td_backend_supports(td_backend backend, td_op op)
{
    if ((unsigned)op >= TD_OP_COUNT)
        return false;
    if (backend == TD_BACKEND_AUTODIFF) {
        for (int b = 0; b < TD_BACKEND_AUTODIFF; b++)
            if (td_backend_supports((td_backend)b, op))
                return true;
        return false;
    }
    const td_backend_vtable *vt = vtable_of(backend);
    return vt != NULL && vt->kernels[op] != NULL;
}

/* ---- devices ---- */

/* One handle per open backend device: a second open of (backend, index) returns the first
 * handle, so every tensor of a device shares one td_device and the same-device check can
 * compare handles. The lock also orders the last release against a concurrent open. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static td_device *open_devices;

/* TD_<BACKEND>_DEVICE=n (TD_VULKAN_DEVICE=1, ...) makes index 0 mean device n, so an
 * unchanged program can run on another device. Read at each open; a device already open
 * under the index it resolved to is shared as usual. */
static td_status resolve_index(const char *backend, int *index)
{
    if (*index != 0)
        return TD_OK;
    char var[64] = "TD_";
    size_t n = 3;
    for (const char *c = backend; *c != '\0' && n + sizeof "_DEVICE" < sizeof var; c++)
        var[n++] = (char)((*c >= 'a' && *c <= 'z') ? *c - 'a' + 'A' : *c);
    memcpy(var + n, "_DEVICE", sizeof "_DEVICE");
    const char *env = getenv(var);
    if (env == NULL || env[0] == '\0')
        return TD_OK;
    char *end = NULL;
    errno = 0;
    const long v = strtol(env, &end, 10);
    if (end == env || *end != '\0' || v < 0 || v > INT_MAX || errno != 0)
        return td_error(TD_E_DEVICE, "device_open: %s: %s='%s' is not a device index", backend, var, env);
    *index = (int)v;
    return TD_OK;
}

td_status td_device_open(td_backend backend, int index, td_device **out)
{
    td_trace_init_from_env();
    if (out == NULL)
        return td_err_null("device_open", "out");
    *out = NULL;
    if (backend == TD_BACKEND_AUTODIFF)
        return td_error(TD_E_INVALID, "device_open: autodiff devices wrap another device: use td_device_autodiff");
    td_backend_autoload();
    const td_backend_vtable *vt = vtable_of(backend);
    if (vt == NULL)
        return td_error(TD_E_DEVICE, "device_open: backend %s is not enabled in this build", td_backend_name(backend));
    if (index < 0)
        return td_error(TD_E_DEVICE, "device_open: %s: negative device index %d", vt->name, index);
    TD_TRY(resolve_index(vt->name, &index));
    pthread_mutex_lock(&open_lock);
    for (td_device *d = open_devices; d != NULL; d = d->next_open) {
        if (d->backend == backend && d->index == index) {
            atomic_fetch_add(&d->rc, 1);
            pthread_mutex_unlock(&open_lock);
            *out = d;
            return TD_OK;
        }
    }
    td_status st = TD_OK;
    td_device *d = td_calloc(1, sizeof *d);
    if (d == NULL) {
        st = td_error(TD_E_NOMEM, "device_open: %s: out of memory", vt->name);
    } else {
        atomic_init(&d->rc, 1);
        d->backend = backend;
        d->index = index;
        st = vt->device_open(d);
        if (st != TD_OK) {
            td_free(d);
        } else {
            d->next_open = open_devices;
            open_devices = d;
            atomic_fetch_add(&live_objects, 1);
            *out = d;
        }
    }
    pthread_mutex_unlock(&open_lock);
    return st;
}

td_status td_device_autodiff(td_device *inner, td_checkpoint strategy, td_device **out)
{
    if (out == NULL)
        return td_err_null("device_autodiff", "out");
    *out = NULL;
    if (inner == NULL)
        return td_err_null("device_autodiff", "inner");
    if (inner->backend == TD_BACKEND_AUTODIFF)
        return td_error(TD_E_INVALID, "device_autodiff: the inner device is already an autodiff device");
    /* No opinion: NONE, what PyTorch does (backward recomputes nothing). */
    if (strategy == TD_CHECKPOINT_DEFAULT)
        strategy = TD_CHECKPOINT_NONE;
    if (strategy != TD_CHECKPOINT_NONE && strategy != TD_CHECKPOINT_BALANCED)
        return td_error(TD_E_INVALID, "device_autodiff: unknown checkpointing strategy %d", (int)strategy);
    td_device *d = td_calloc(1, sizeof *d);
    if (d == NULL)
        return td_error(TD_E_NOMEM, "device_autodiff: out of memory");
    atomic_init(&d->rc, 1);
    d->backend = TD_BACKEND_AUTODIFF;
    d->index = inner->index;
    d->inner = inner;
    d->strategy = strategy;
    atomic_fetch_add(&inner->rc, 1);
    atomic_fetch_add(&live_objects, 1);
    *out = d;
    return TD_OK;
}

td_status td_device_retain(td_device *device)
{
    if (device == NULL)
        return td_err_null("device_retain", "device");
    atomic_fetch_add(&device->rc, 1);
    return TD_OK;
}

/* td_device_release's usual case, inline where tensors are released: a reference that is
 * not the last (the device's other tensors and the caller's handle hold theirs). */
static void free_autodiff_device(td_device *device);
TD_ALWAYS_INLINE void device_unref(td_device *device)
{
    if (device->backend == TD_BACKEND_AUTODIFF) {
        if (atomic_fetch_sub(&device->rc, 1) == 1)
            free_autodiff_device(device);
        return;
    }
    long rc = atomic_load(&device->rc);
    if (rc > 1 && atomic_compare_exchange_weak(&device->rc, &rc, rc - 1))
        return;
    td_device_release(device); /* a failed exchange, or a reference that may be the last */
}

/* An autodiff device whose last reference went. */
static void free_autodiff_device(td_device *device)
{
    td_device_release(device->inner);
    td_free(device);
    atomic_fetch_sub(&live_objects, 1);
}

void td_device_release(td_device *device)
{
    if (device == NULL)
        return;
    if (device->backend == TD_BACKEND_AUTODIFF) {
        if (atomic_fetch_sub(&device->rc, 1) != 1)
            return;
        td_device_release(device->inner);
    } else {
        /* Tensors release their device reference on every release: only a reference that
         * may be the last takes the lock (an open under the lock may revive it). */
        long rc = atomic_load(&device->rc);
        while (rc > 1)
            if (atomic_compare_exchange_weak(&device->rc, &rc, rc - 1))
                return;
        pthread_mutex_lock(&open_lock);
        const bool last = atomic_fetch_sub(&device->rc, 1) == 1;
        if (last) {
            td_device **p = &open_devices;
            while (*p != device)
                p = &(*p)->next_open;
            *p = device->next_open;
        }
        pthread_mutex_unlock(&open_lock);
        if (!last)
            return;
        td_backend_vtables[device->backend]->device_close(device);
        td_free(device->fallback_counts);
    }
    td_free(device);
    atomic_fetch_sub(&live_objects, 1);
}

/* ---- CPU fallback ---- */

td_status td_device_set_fallback(td_device *device, td_fallback policy)
{
    if (device == NULL)
        return td_err_null("device_set_fallback", "device");
    if (device->backend == TD_BACKEND_AUTODIFF)
        device = device->inner;
    if (policy != TD_FALLBACK_NONE && policy != TD_FALLBACK_CPU)
        return td_error(TD_E_INVALID, "device_set_fallback: unknown policy %d", (int)policy);
    if (policy == TD_FALLBACK_CPU && vtable_of(TD_BACKEND_CPU) == NULL)
        return td_error(TD_E_UNSUPPORTED, "device_set_fallback: this build has no CPU backend to fall back to");
    pthread_mutex_lock(&open_lock);
    if (device->fallback_counts == NULL && policy == TD_FALLBACK_CPU) {
        device->fallback_counts = td_calloc(TD_OP_COUNT, sizeof *device->fallback_counts);
        if (device->fallback_counts == NULL) {
            pthread_mutex_unlock(&open_lock);
            return td_error(TD_E_NOMEM, "device_set_fallback: out of memory");
        }
    }
    atomic_store(&device->fallback, policy);
    pthread_mutex_unlock(&open_lock);
    return TD_OK;
}

td_status td_device_set_composites(td_device *device, bool on)
{
    if (device == NULL)
        return td_err_null("device_set_composites", "device");
    if (device->backend == TD_BACKEND_AUTODIFF)
        device = device->inner;
    atomic_store(&device->prefer_composite, on);
    return TD_OK;
}

td_status td_composite_finish(const char *op, td_tensor *res, bool owned, const td_shape *want,
                              td_autodiff_context ctx, td_tensor **out)
{
    if (want != NULL) {
        bool same = res->shape.ndim == want->ndim;
        for (int i = 0; same && i < want->ndim; i++)
            same = res->shape.dims[i] == want->dims[i];
        if (!same) {
            char got_s[128], want_s[128];
            td_shape_format(&res->shape, got_s, sizeof got_s);
            td_shape_format(want, want_s, sizeof want_s);
            if (owned)
                td_tensor_release(res);
            return td_error(TD_E_INTERNAL, "%s: its decomposition made a result of shape %s, but its shape rule says %s",
                            op, got_s, want_s);
        }
    }
    if (!owned) {
        TD_TRY(td_tensor_retain(res));
    } else if (res->kind != TD_BACKEND_AUTODIFF) {
        res->ctx = ctx; /* a plain result carries the context its arm was given, like a kernel's */
    }
    *out = res;
    return TD_OK;
}

td_status td_device_fallback_count(const td_device *device, td_op op, int64_t *count)
{
    if (device == NULL)
        return td_err_null("device_fallback_count", "device");
    if (count == NULL)
        return td_err_null("device_fallback_count", "count");
    if ((unsigned)op >= TD_OP_COUNT)
        return td_error(TD_E_INVALID, "device_fallback_count: unknown op %d", (int)op);
    if (device->backend == TD_BACKEND_AUTODIFF)
        device = device->inner;
    *count = device->fallback_counts != NULL ? (int64_t)atomic_load(&device->fallback_counts[op]) : 0;
    return TD_OK;
}

td_status td_fallback_begin(const char *op, td_op id, td_device *device, td_device **cpu)
{
    TD_TRY(td_device_open(TD_BACKEND_CPU, 0, cpu));
    if (atomic_fetch_add(&device->fallback_counts[id], 1) == 0)
        fprintf(stderr, "tdispatch: %s is not implemented by backend '%s'; running it on the CPU (fallback policy "
                        "of device %s:%d; logged once, counted by td_device_fallback_count)\n",
                op, td_backend_name(device->backend), td_backend_name(device->backend), device->index);
    return TD_OK;
}

td_status td_device_backend(const td_device *device, td_backend *out)
{
    if (device == NULL)
        return td_err_null("device_backend", "device");
    if (out == NULL)
        return td_err_null("device_backend", "out");
    *out = device->backend;
    return TD_OK;
}

td_autodiff_context td_device_context(const td_device *d)
{
    td_autodiff_context c = { .enabled = d->backend == TD_BACKEND_AUTODIFF, .strategy = TD_CHECKPOINT_NONE };
    if (c.enabled)
        c.strategy = d->strategy;
    return c;
}

/* ---- tensors ---- */

td_status td_check_backend_dtype(const char *op, td_backend backend, td_dtype dtype)
{
    const td_backend_vtable *vt = vtable_of(backend);
    if (vt == NULL)
        return td_error(TD_E_INTERNAL, "%s: backend %s has no vtable", op, td_backend_name(backend));
    if (!(vt->dtypes & (1u << dtype)))
        return td_error(TD_E_DTYPE, "%s: backend %s does not support dtype %s", op, vt->name, td_dtype_name(dtype));
    return TD_OK;
}

/* Fills a handle fresh from the tensor cache: one reference, no node. The caller counts
 * it (live_objects) and takes its device reference once it keeps it. */
static inline void init_handle(td_tensor *t, td_backend kind, td_dtype dtype, const td_shape *shape,
                               td_autodiff_context ctx, td_device *device, void *data, td_share *share,
                               td_tensor *inner)
{
    atomic_init(&t->rc, 1);
    t->kind = kind;
    t->dtype = dtype;
    td_shape_copy(&t->shape, shape); /* not the 80 bytes of a whole copy */
    t->ctx = ctx;
    t->device = device;
    t->data = data;
    atomic_init(&t->share, share);
    t->inner = inner;
    t->node = NULL;
}

td_status td_tensor_new_on(const char *op, td_device *device, td_dtype dtype, const td_shape *shape,
                           td_tensor **out)
{
    const td_backend_vtable *vt = vtable_of(device->backend);
    if (vt == NULL || !(vt->dtypes & (1u << dtype))) /* the passing case without a call */
        TD_TRY(td_check_backend_dtype(op, device->backend, dtype));
    if (td_dtype_rows[dtype].block > 1)
        TD_TRY(td_dtype_check_shape(op, dtype, shape));
    td_tensor *t = td_cache_take(TD_CACHE_TENSOR, sizeof *t);
    if (t == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for a tensor", op);
    init_handle(t, device->backend, dtype, shape,
                (td_autodiff_context){ .enabled = false, .strategy = TD_CHECKPOINT_NONE }, device, NULL, NULL, NULL);
    td_status st = vt->alloc(t);
    if (st != TD_OK) {
        td_cache_give(TD_CACHE_TENSOR, t, sizeof *t, TENSOR_CACHE_CAP);
        return td_error(st, "%s: %s: cannot allocate %lld elements of %s", op, td_backend_name(device->backend),
                        (long long)shape->numel, td_dtype_name(dtype));
    }
    atomic_fetch_add(&device->rc, 1);
    atomic_fetch_add(&live_objects, 1);
    *out = t;
    return TD_OK;
}

td_status td_tensor_wrap(const char *op, td_device *ad_device, td_tensor *inner, td_autodiff_context ctx,
                         td_tensor **out)
{
    td_tensor *t = td_cache_take(TD_CACHE_TENSOR, sizeof *t);
    if (t == NULL) {
        td_tensor_release(inner);
        return td_error(TD_E_NOMEM, "%s: out of memory for a tensor", op);
    }
    init_handle(t, TD_BACKEND_AUTODIFF, inner->dtype, &inner->shape, ctx, ad_device, NULL, NULL, inner);
    atomic_fetch_add(&ad_device->rc, 1);
    atomic_fetch_add(&live_objects, 1);
    *out = t;
    return TD_OK;
}

td_status td_tensor_new_external(const char *op, td_device *device, td_dtype dtype, const td_shape *shape, void *data,
                                 td_share *share, td_tensor **out)
{
    td_tensor *t = td_cache_take(TD_CACHE_TENSOR, sizeof *t);
    if (t == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for a tensor", op);
    init_handle(t, device->backend, dtype, shape,
                (td_autodiff_context){ .enabled = false, .strategy = TD_CHECKPOINT_NONE }, device, data, share, NULL);
    atomic_fetch_add(&device->rc, 1);
    atomic_fetch_add(&live_objects, 1);
    *out = t;
    return TD_OK;
}

td_status td_tensor_share(const char *op, const td_tensor *a, const td_shape *shape, td_autodiff_context ctx,
                          td_tensor **out)
{
    if (a->kind == TD_BACKEND_AUTODIFF || shape->numel != a->shape.numel)
        return td_error(TD_E_INTERNAL, "%s: a view of %lld elements cannot share the storage of %lld", op,
                        (long long)shape->numel, (long long)a->shape.numel);
    if (td_dtype_rows[a->dtype].block > 1) /* a reshape of whole rows of blocks only */
        TD_TRY(td_dtype_check_shape(op, a->dtype, shape));
    /* The count of a's storage: made on the first view, holding a itself. Two threads
     * making views of a at once agree on one through the exchange. */
    td_share *sh = atomic_load_explicit(&((td_tensor *)a)->share, memory_order_acquire);
    if (sh == NULL && a->data != NULL) {
        td_share *mine = td_malloc(sizeof *mine);
        if (mine == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory for a view", op);
        atomic_init(&mine->rc, 1);
        mine->release = NULL;
        mine->release_ctx = NULL;
        if (atomic_compare_exchange_strong_explicit(&((td_tensor *)a)->share, &sh, mine, memory_order_acq_rel,
                                                    memory_order_acquire))
            sh = mine;
        else
            td_free(mine); /* another thread's came first: sh holds it */
    }
    td_tensor *t = td_cache_take(TD_CACHE_TENSOR, sizeof *t);
    if (t == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for a tensor", op);
    /* a->data is NULL only where a backend leaves an empty tensor without storage. */
    init_handle(t, a->kind, a->dtype, shape, ctx, a->device, a->data, sh, NULL);
    if (sh != NULL)
        atomic_fetch_add_explicit(&sh->rc, 1, memory_order_relaxed);
    atomic_fetch_add(&t->device->rc, 1);
    atomic_fetch_add(&live_objects, 1);
    *out = t;
    return TD_OK;
}

td_status td_testing_same_storage(const td_tensor *a, const td_tensor *b, bool *out)
{
    if (a == NULL)
        return td_err_null("testing_same_storage", "a");
    if (b == NULL)
        return td_err_null("testing_same_storage", "b");
    if (out == NULL)
        return td_err_null("testing_same_storage", "out");
    while (a->kind == TD_BACKEND_AUTODIFF)
        a = a->inner;
    while (b->kind == TD_BACKEND_AUTODIFF)
        b = b->inner;
    *out = a->data != NULL && a->data == b->data;
    return TD_OK;
}

td_status td_tensor_retain(td_tensor *t)
{
    if (t == NULL)
        return td_err_null("tensor_retain", "t");
    atomic_fetch_add(&t->rc, 1);
    return TD_OK;
}

void td_tensor_release(td_tensor *t)
{
    if (t == NULL)
        return;
    /* A count of 1 read with acquire is the caller's own reference, which no other thread
     * can see to add to or drop: the last release skips the atomic read-modify-write. */
    if (atomic_load_explicit(&t->rc, memory_order_acquire) != 1 && atomic_fetch_sub(&t->rc, 1) != 1)
        return;
    if (t->kind == TD_BACKEND_AUTODIFF) {
        if (t->node != NULL)
            atomic_load_explicit(&td_node_release_hook, memory_order_relaxed)(t->node);
        td_tensor_release(t->inner);
    } else if (t->data != NULL) {
        /* Shared storage goes with its last holder; a view has the element count and dtype
         * of the tensor that allocated it, all the free hook needs. */
        td_share *sh = atomic_load_explicit(&t->share, memory_order_acquire);
        if (sh == NULL || atomic_fetch_sub_explicit(&sh->rc, 1, memory_order_acq_rel) == 1) {
            if (sh != NULL && sh->release != NULL)
                sh->release(sh->release_ctx); /* external storage goes back to its owner */
            else
                td_backend_vtables[t->kind]->free(t);
            td_free(sh);
        }
    }
    device_unref(t->device);
    td_cache_give(TD_CACHE_TENSOR, t, sizeof *t, TENSOR_CACHE_CAP);
    atomic_fetch_sub(&live_objects, 1);
}

td_status td_tensor_shape(const td_tensor *t, int64_t dims[TD_MAX_DIMS], int *ndim)
{
    if (t == NULL)
        return td_err_null("tensor_shape", "t");
    if (dims == NULL)
        return td_err_null("tensor_shape", "dims");
    if (ndim == NULL)
        return td_err_null("tensor_shape", "ndim");
    for (int i = 0; i < t->shape.ndim; i++)
        dims[i] = t->shape.dims[i];
    *ndim = t->shape.ndim;
    return TD_OK;
}

td_status td_tensor_numel(const td_tensor *t, int64_t *numel)
{
    if (t == NULL)
        return td_err_null("tensor_numel", "t");
    if (numel == NULL)
        return td_err_null("tensor_numel", "numel");
    *numel = t->shape.numel;
    return TD_OK;
}

td_status td_tensor_dtype(const td_tensor *t, td_dtype *out)
{
    if (t == NULL)
        return td_err_null("tensor_dtype", "t");
    if (out == NULL)
        return td_err_null("tensor_dtype", "out");
    *out = t->dtype;
    return TD_OK;
}

td_status td_tensor_device(const td_tensor *t, td_device **out)
{
    if (t == NULL)
        return td_err_null("tensor_device", "t");
    if (out == NULL)
        return td_err_null("tensor_device", "out");
    *out = t->device;
    return TD_OK;
}

td_status td_tensor_backend(const td_tensor *t, td_backend *out)
{
    if (t == NULL)
        return td_err_null("tensor_backend", "t");
    if (out == NULL)
        return td_err_null("tensor_backend", "out");
    *out = t->kind;
    return TD_OK;
}

td_status td_tensor_autodiff_context(const td_tensor *t, td_autodiff_context *out)
{
    if (t == NULL)
        return td_err_null("tensor_autodiff_context", "t");
    if (out == NULL)
        return td_err_null("tensor_autodiff_context", "out");
    *out = t->ctx;
    return TD_OK;
}

td_status td_tensor_set_autodiff_context(td_tensor *t, td_autodiff_context ctx)
{
    if (t == NULL)
        return td_err_null("tensor_set_autodiff_context", "t");
    if (ctx.strategy == TD_CHECKPOINT_DEFAULT)
        ctx.strategy = TD_CHECKPOINT_NONE;
    if (ctx.strategy != TD_CHECKPOINT_NONE && ctx.strategy != TD_CHECKPOINT_BALANCED)
        return td_error(TD_E_INVALID, "tensor_set_autodiff_context: unknown strategy %d", (int)ctx.strategy);
    t->ctx = ctx;
    return TD_OK;
}

/* ---- boundary checks ---- */

/* The primitive class with its article: "a float", "an int", "a bool". */
static const char *class_name(td_dtype d)
{
    switch (td_dtype_class(d)) {
    case TD_CLASS_FLOAT: return "a float";
    case TD_CLASS_INT: return "an int";
    case TD_CLASS_BOOL: return "a bool";
    default: return "an unknown";
    }
}

/* want is the class's default dtype (the generated entries pass TD_F32, TD_I32, TD_BOOL):
 * any dtype of its class passes. */
td_status td_check_class_slow(const char *op, const char *arg, const td_tensor *t, td_dtype want)
{
    if (!td_dtype_valid(t->dtype) || td_dtype_cls(t->dtype) != td_dtype_class(want))
        return td_error(TD_E_KIND, "%s: %s: expected %s tensor, got %s tensor", op, arg, class_name(want),
                        class_name(t->dtype));
    return TD_OK;
}

static void place_name(const td_tensor *t, char *buf, size_t cap)
{
    if (t->kind == TD_BACKEND_AUTODIFF)
        snprintf(buf, cap, "autodiff(%s:%d)", td_backend_name(t->inner->kind), t->inner->device->index);
    else
        snprintf(buf, cap, "%s:%d", td_backend_name(t->kind), t->device->index);
}

td_status td_check_same_place_slow(const char *op, const char *arg0, const td_tensor *t0, const char *arg,
                                   const td_tensor *t)
{
    const td_tensor *p0 = t0->kind == TD_BACKEND_AUTODIFF ? t0->inner : t0;
    const td_tensor *p = t->kind == TD_BACKEND_AUTODIFF ? t->inner : t;
    if (t0->kind == t->kind && p0->device == p->device)
        return TD_OK;
    char a[64], b[64];
    place_name(t0, a, sizeof a);
    place_name(t, b, sizeof b);
    if ((t0->kind == TD_BACKEND_AUTODIFF) != (t->kind == TD_BACKEND_AUTODIFF))
        return td_error(TD_E_BACKEND_MISMATCH,
                        "%s: %s is on %s and %s on %s: an autodiff tensor cannot be combined with a plain one "
                        "(move it with to_device first)",
                        op, arg0, a, arg, b);
    return td_error(TD_E_BACKEND_MISMATCH, "%s: %s is on %s and %s on %s: tensors of one op must share a device",
                    op, arg0, a, arg, b);
}

static const char *strategy_name(td_checkpoint s)
{
    return s == TD_CHECKPOINT_BALANCED ? "BALANCED" : "NONE";
}

td_status td_ctx_merge_slow(const char *op, td_autodiff_context a, td_autodiff_context b, td_autodiff_context *out)
{
    if (!a.enabled) {
        *out = b;
        return TD_OK;
    }
    if (!b.enabled || a.strategy == b.strategy) {
        *out = a;
        return TD_OK;
    }
    return td_error(TD_E_AUTODIFF_CONTEXT,
                    "%s: autodiff contexts ENABLED(%s) and ENABLED(%s) cannot be combined: "
                    "use one checkpointing strategy",
                    op, strategy_name(a.strategy), strategy_name(b.strategy));
}

td_status td_guard_slow(const char *op, const td_tensor *t)
{
    (void)op;
    if (t->kind == TD_BACKEND_AUTODIFF && td_dtype_cls(t->dtype) == TD_CLASS_FLOAT && !t->ctx.enabled)
        return td_error(TD_E_AUTODIFF_CONTEXT, "an autodiff float primitive must have an enabled autodiff context");
    return TD_OK;
}

td_status td_stage_to_device(const char *op, const td_tensor *a, td_device *device, td_tensor **out)
{
    td_device *target = device->backend == TD_BACKEND_AUTODIFF ? device->inner : device;
    if (a->shape.numel == 0) { /* nothing to move: no staging buffer, no reads or writes */
        td_tensor *r = NULL;
        TD_TRY(td_tensor_new_on(op, target, a->dtype, &a->shape, &r));
        if (device->backend == TD_BACKEND_AUTODIFF)
            return td_tensor_wrap(op, device, r, td_device_context(device), out);
        *out = r;
        return TD_OK;
    }
    size_t bytes = td_dtype_bytes(a->dtype, a->shape.numel);
    void *host = td_malloc(bytes);
    if (host == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu bytes of host staging", op, bytes);
    td_tensor *r = NULL;
    td_status st = td_backend_vtables[a->kind]->read(a, host);
    if (st == TD_OK)
        st = td_tensor_new_on(op, target, a->dtype, &a->shape, &r);
    if (st == TD_OK)
        st = td_backend_vtables[target->backend]->write(r, host);
    td_free(host);
    if (st != TD_OK) {
        td_tensor_release(r);
        return st;
    }
    if (device->backend == TD_BACKEND_AUTODIFF)
        return td_tensor_wrap(op, device, r, td_device_context(device), out);
    *out = r;
    return TD_OK;
}
