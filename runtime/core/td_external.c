/* CPU tensors over external memory, and host addresses of CPU tensors (td_external.h). */
#include "td_external.h"

#include "td_internal.h"

/* The release of memory whose owner asked for no callback: the share still marks the
 * storage external, so the backend's free never sees it. */
static void release_nothing(void *ctx)
{
    (void)ctx;
}

static size_t dtype_size(td_dtype dtype)
{
    return dtype == TD_BOOL ? sizeof(bool) : 4;
}

td_status td_tensor_from_external(td_device *device, td_dtype dtype, const int64_t *shape, int ndim, void *data,
                                  td_external_release_fn release, void *ctx, td_tensor **out)
{
    static const char op[] = "tensor_from_external";
    td_status st = TD_OK;
    td_shape sh = { 0 };
    if (out == NULL)
        st = td_err_null(op, "out");
    else
        *out = NULL;
    if (st == TD_OK && device == NULL)
        st = td_err_null(op, "device");
    if (st == TD_OK && device->backend != TD_BACKEND_CPU)
        st = td_error(TD_E_INVALID, "%s: external memory is wrapped on a cpu device, not on %s", op,
                      td_backend_name(device->backend));
    if (st == TD_OK && (int)dtype != TD_F32 && (int)dtype != TD_I32 && (int)dtype != TD_BOOL)
        st = td_error(TD_E_INVALID, "%s: unknown dtype %d", op, (int)dtype);
    if (st == TD_OK)
        st = td_shape_from(op, shape, ndim, &sh);
    if (st == TD_OK && sh.numel > 0 && data == NULL)
        st = td_error(TD_E_INVALID, "%s: data is NULL for %lld elements", op, (long long)sh.numel);
    if (st == TD_OK && sh.numel > 0 && (uintptr_t)data % dtype_size(dtype) != 0)
        st = td_error(TD_E_INVALID, "%s: data %p is not aligned to its %zu-byte elements", op, data,
                      dtype_size(dtype));
    if (st == TD_OK && sh.numel == 0) {
        /* Nothing to share: an ordinary empty tensor, and the memory goes back now. */
        st = td_tensor_new_on(op, device, dtype, &sh, out);
        if (release != NULL)
            release(ctx);
        return st;
    }
    td_share *share = NULL;
    if (st == TD_OK) {
        share = td_malloc(sizeof *share);
        if (share == NULL)
            st = td_error(TD_E_NOMEM, "%s: out of memory", op);
    }
    if (st == TD_OK) {
        atomic_init(&share->rc, 1);
        share->release = release != NULL ? release : release_nothing;
        share->release_ctx = ctx;
        st = td_tensor_new_external(op, device, dtype, &sh, data, share, out);
        if (st != TD_OK)
            td_free(share);
    }
    if (st != TD_OK && release != NULL)
        release(ctx);
    return st;
}

td_status td_tensor_host_data(const td_tensor *t, void **data)
{
    static const char op[] = "tensor_host_data";
    if (data == NULL)
        return td_err_null(op, "data");
    *data = NULL;
    if (t == NULL)
        return td_err_null(op, "t");
    const td_tensor *v = t->kind == TD_BACKEND_AUTODIFF ? t->inner : t;
    if (v->kind != TD_BACKEND_CPU)
        return td_error(TD_E_UNSUPPORTED, "%s: the tensor is on %s; only cpu tensors have host memory", op,
                        td_backend_name(v->kind));
    *data = v->data;
    return TD_OK;
}
