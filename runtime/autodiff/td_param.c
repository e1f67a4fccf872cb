/* In-place parameter updates: a tensor handle that keeps its identity (and its leaf node,
 * so td_grads_get keeps finding it) while its value is replaced, without recording. */
#include "td_autodiff.h"

td_status td_tensor_assign(td_tensor *t, const td_tensor *value)
{
    static const char op[] = "tensor_assign";
    if (t == NULL)
        return td_err_null(op, "t");
    if (value == NULL)
        return td_err_null(op, "value");
    if (t->kind != TD_BACKEND_AUTODIFF)
        return td_error(TD_E_INVALID, "%s: t must be a tensor on an autodiff device (a parameter)", op);
    if (t->node != NULL && !t->node->leaf)
        return td_error(TD_E_AUTODIFF, "%s: t is the result of %s, not a leaf; only leaves are assigned", op,
                        t->node->op);
    /* value: an autodiff tensor on t's device, or a tensor of t's inner device. */
    const td_tensor *v = value->kind == TD_BACKEND_AUTODIFF ? value->inner : value;
    if (v->kind != t->inner->kind)
        return td_error(TD_E_BACKEND_MISMATCH, "%s: t holds a %s tensor, value a %s one", op,
                        td_backend_name(t->inner->kind), td_backend_name(v->kind));
    if (v->dtype != t->dtype)
        return td_error(TD_E_DTYPE, "%s: t is %s, value is %s", op, td_dtype_name(t->dtype), td_dtype_name(v->dtype));
    if (!td_shape_equal(&v->shape, &t->shape)) {
        char a[128], b[128];
        td_shape_format(&t->shape, a, sizeof a);
        td_shape_format(&v->shape, b, sizeof b);
        return td_error(TD_E_SHAPE, "%s: t is %s %s, value is %s %s", op, td_dtype_name(t->dtype), a,
                        td_dtype_name(v->dtype), b);
    }
    if (v == t->inner)
        return TD_OK;
    td_tensor *nv = (td_tensor *)v;
    td_tensor_retain(nv);
    td_tensor_release(t->inner);
    t->inner = nv;
    /* The leaf's node takes the new value for graphs recorded from now on. Graphs recorded
     * before saved the old inner tensor itself (td_ad_node_save never saves a leaf as its
     * node), which stays alive, unchanged, as long as they hold it. */
    if (t->node != NULL) {
        td_tensor_retain(nv);
        td_tensor_release(t->node->output);
        t->node->output = nv;
    }
    return TD_OK;
}

td_status td_tensor_value(const td_tensor *t, td_tensor **out)
{
    if (out == NULL)
        return td_err_null("tensor_value", "out");
    *out = NULL;
    if (t == NULL)
        return td_err_null("tensor_value", "t");
    td_tensor *v = t->kind == TD_BACKEND_AUTODIFF ? t->inner : (td_tensor *)t;
    TD_TRY(td_tensor_retain(v));
    *out = v;
    return TD_OK;
}
