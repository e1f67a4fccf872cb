/* Devices and tensor handles: lifetime, queries, and the boundary checks of the dispatch. */
#include <stdio.h>
#include <string.h>

#include "td_internal.h"
#include "../autodiff/td_autodiff.h"

static atomic_long live_objects;

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

td_status td_device_open(td_backend backend, int index, td_device **out)
{
    if (out == NULL)
        return td_err_null("device_open", "out");
    *out = NULL;
    if (backend == TD_BACKEND_AUTODIFF)
        return td_error(TD_E_INVALID, "device_open: autodiff devices wrap another device: use td_device_autodiff");
    const td_backend_vtable *vt = vtable_of(backend);
    if (vt == NULL)
        return td_error(TD_E_DEVICE, "device_open: backend %s is not enabled in this build", td_backend_name(backend));
    if (index < 0)
        return td_error(TD_E_DEVICE, "device_open: %s: negative device index %d", vt->name, index);
    td_device *d = td_calloc(1, sizeof *d);
    if (d == NULL)
        return td_error(TD_E_NOMEM, "device_open: %s: out of memory", vt->name);
    atomic_init(&d->rc, 1);
    d->backend = backend;
    d->index = index;
    td_status st = vt->device_open(d);
    if (st != TD_OK) {
        td_free(d);
        return st;
    }
    atomic_fetch_add(&live_objects, 1);
    *out = d;
    return TD_OK;
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

void td_device_release(td_device *device)
{
    if (device == NULL || atomic_fetch_sub(&device->rc, 1) != 1)
        return;
    if (device->backend == TD_BACKEND_AUTODIFF)
        td_device_release(device->inner);
    else
        td_backend_vtables[device->backend]->device_close(device);
    td_free(device);
    atomic_fetch_sub(&live_objects, 1);
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

td_status td_tensor_new_on(const char *op, td_device *device, td_dtype dtype, const td_shape *shape,
                           td_tensor **out)
{
    TD_TRY(td_check_backend_dtype(op, device->backend, dtype));
    td_tensor *t = td_malloc(sizeof *t);
    if (t == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for a tensor", op);
    atomic_init(&t->rc, 1);
    t->kind = device->backend;
    t->dtype = dtype;
    t->shape = *shape;
    t->ctx = (td_autodiff_context){ .enabled = false, .strategy = TD_CHECKPOINT_NONE };
    t->device = device;
    t->data = NULL;
    t->inner = NULL;
    t->node = NULL;
    td_status st = td_backend_vtables[device->backend]->alloc(t);
    if (st != TD_OK) {
        td_free(t);
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
    td_tensor *t = td_malloc(sizeof *t);
    if (t == NULL) {
        td_tensor_release(inner);
        return td_error(TD_E_NOMEM, "%s: out of memory for a tensor", op);
    }
    atomic_init(&t->rc, 1);
    t->kind = TD_BACKEND_AUTODIFF;
    t->dtype = inner->dtype;
    t->shape = inner->shape;
    t->ctx = ctx;
    t->device = ad_device;
    t->data = NULL;
    t->inner = inner;
    t->node = NULL;
    atomic_fetch_add(&ad_device->rc, 1);
    atomic_fetch_add(&live_objects, 1);
    *out = t;
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
    if (t == NULL || atomic_fetch_sub(&t->rc, 1) != 1)
        return;
    if (t->kind == TD_BACKEND_AUTODIFF) {
        td_ad_node_release(t->node);
        td_tensor_release(t->inner);
    } else if (t->data != NULL) {
        td_backend_vtables[t->kind]->free(t);
    }
    td_device_release(t->device);
    td_free(t);
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
    if (ctx.strategy != TD_CHECKPOINT_NONE && ctx.strategy != TD_CHECKPOINT_BALANCED)
        return td_error(TD_E_INVALID, "tensor_set_autodiff_context: unknown strategy %d", (int)ctx.strategy);
    t->ctx = ctx;
    return TD_OK;
}

/* ---- boundary checks ---- */

/* The primitive class with its article: "a float", "an int", "a bool". */
static const char *class_name(td_dtype d)
{
    switch (d) {
    case TD_F32: return "a float";
    case TD_I32: return "an int";
    case TD_BOOL: return "a bool";
    }
    return "an unknown";
}

td_status td_check_class_slow(const char *op, const char *arg, const td_tensor *t, td_dtype want)
{
    if (t->dtype != want)
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
    if (t0->kind == t->kind && p0->kind == p->kind && p0->device->index == p->device->index)
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

td_status td_guard(const char *op, const td_tensor *t)
{
    (void)op;
    if (t->kind == TD_BACKEND_AUTODIFF && t->dtype == TD_F32 && !t->ctx.enabled)
        return td_error(TD_E_AUTODIFF_CONTEXT, "an autodiff float primitive must have an enabled autodiff context");
    return TD_OK;
}

td_status td_stage_to_device(const char *op, const td_tensor *a, td_device *device, td_tensor **out)
{
    td_device *target = device->backend == TD_BACKEND_AUTODIFF ? device->inner : device;
    size_t bytes = (size_t)a->shape.numel * td_dtype_size(a->dtype);
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
