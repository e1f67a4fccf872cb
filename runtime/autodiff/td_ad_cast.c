/* Dtypes on the tape (docs/dtypes.md section 9): recorded float casts and autocast. */
#include "td_autodiff.h"
#include "td_ops.h"

/* The gradient of a cast is the incoming gradient cast back to the input's dtype. */
static td_status bw_cast(const td_ad_node *n, const td_tensor *grad, const td_tensor *const *vals,
                         const td_tensor *res, td_tensor **grads)
{
    (void)vals;
    (void)res;
    if (n->parents[0] == NULL)
        return TD_OK;
    return td_float_cast(grad, (td_dtype)n->iattrs[0], &grads[0]);
}

td_status td_ad_cast_record(const char *op, const td_tensor *t, td_dtype dtype, td_tensor **out)
{
    *out = NULL;
    td_tensor *r = NULL;
    TD_TRY(td_float_cast(t->inner, dtype, &r));
    /* Compute-bound for BALANCED (no forward): the node keeps its cast result there. */
    td_ad_node *n = td_ad_node_new("float_cast", 1, bw_cast, NULL, t->ctx.strategy, false, false, false);
    if (n == NULL) {
        td_tensor_release(r);
        return td_error(TD_E_NOMEM, "%s: out of memory for the tape", op);
    }
    td_ad_node_input(n, 0, t);
    n->iattrs[0] = (int64_t)t->dtype;
    td_ad_node_keep_result(n, r);
    const td_status st = td_tensor_wrap(op, t->device, r, t->ctx, out);
    if (st != TD_OK) {
        td_ad_node_release(n);
        return st;
    }
    (*out)->node = n;
    return TD_OK;
}

/* ---- autocast ---- */

td_status td_autodiff_set_autocast(td_device *device, td_dtype dtype)
{
    static const char op[] = "autodiff_set_autocast";
    if (device == NULL)
        return td_err_null(op, "device");
    if (device->backend != TD_BACKEND_AUTODIFF)
        return td_error(TD_E_INVALID, "%s: the device is a %s device; autocast is a setting of autodiff devices", op,
                        td_backend_name(device->backend));
    if (dtype != TD_F32 && dtype != TD_BF16 && dtype != TD_F16)
        return td_error(TD_E_INVALID, "%s: dtype %s: autocast runs in bf16 or f16, or is off (f32)", op,
                        td_dtype_valid(dtype) ? td_dtype_name(dtype) : "(not a td_dtype)");
    atomic_store(&device->autocast, dtype);
    return TD_OK;
}

td_status td_autodiff_autocast(const td_device *device, td_dtype *out)
{
    if (device == NULL)
        return td_err_null("autodiff_autocast", "device");
    if (out == NULL)
        return td_err_null("autodiff_autocast", "out");
    *out = device->backend == TD_BACKEND_AUTODIFF ? atomic_load(&((td_device *)device)->autocast) : TD_F32;
    return TD_OK;
}

static bool castable(const td_tensor *t)
{
    /* f64 and quantized tensors are left alone (as PyTorch's autocast leaves f64). */
    return t->dtype == TD_F32 || t->dtype == TD_F16 || t->dtype == TD_BF16;
}

/* The dtype that f16 and bf16 inputs of a "keep" op meet in, or the widest one. */
static int width_rank(td_dtype d)
{
    return d == TD_F64 ? 3 : d == TD_F32 ? 2 : 1;
}

td_status td_ad_autocast(const char *op, int policy, const td_tensor *const *ins, int n, td_tensor **casts,
                         bool *any)
{
    *any = false;
    const td_tensor *first = NULL;
    for (int i = 0; i < n && first == NULL; i++)
        if (ins[i] != NULL && ins[i]->kind == TD_BACKEND_AUTODIFF)
            first = ins[i];
    if (first == NULL)
        return TD_OK;
    const td_dtype low = atomic_load(&first->device->autocast);
    if (low == TD_F32)
        return TD_OK;
    td_dtype to = low;
    if (policy == TD_AUTOCAST_F32) {
        to = TD_F32;
    } else if (policy == TD_AUTOCAST_KEEP) {
        /* Inputs of one dtype run in it; mixed ones (a bf16 matmul result plus an f32
         * bias) are promoted to the widest, and f16 with bf16 to f32, as PyTorch's
         * autocast promotes: our ops do not mix dtypes (section 6). */
        bool mixed = false;
        td_dtype w = TD_F32;
        int rank = 0;
        for (int i = 0; i < n; i++) {
            if (ins[i] == NULL)
                continue;
            if (rank == 0) {
                w = ins[i]->dtype;
                rank = width_rank(w);
                continue;
            }
            if (ins[i]->dtype == w)
                continue;
            mixed = true;
            const int r = width_rank(ins[i]->dtype);
            if (r > rank || (r == rank && r == 1)) {
                w = r == 1 ? TD_F32 : ins[i]->dtype;
                rank = width_rank(w);
            }
        }
        if (!mixed)
            return TD_OK;
        to = w;
    }
    bool need = false;
    for (int i = 0; i < n && !need; i++)
        need = ins[i] != NULL && castable(ins[i]) && ins[i]->dtype != to;
    if (!need)
        return TD_OK;
    for (int i = 0; i < n; i++)
        casts[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (ins[i] == NULL)
            continue;
        td_status st = TD_OK;
        if (castable(ins[i]) && ins[i]->dtype != to) {
            st = td_float_cast(ins[i], to, &casts[i]);
        } else {
            td_tensor_retain((td_tensor *)ins[i]);
            casts[i] = (td_tensor *)ins[i];
        }
        if (st != TD_OK) {
            td_ad_autocast_release(casts, n);
            return td_error_within(st, op);
        }
    }
    *any = true;
    return TD_OK;
}

void td_ad_autocast_release(td_tensor **casts, int n)
{
    for (int i = 0; i < n; i++) {
        td_tensor_release(casts[i]);
        casts[i] = NULL;
    }
}
