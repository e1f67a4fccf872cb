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

/* ---- parameter lists: the tensors an optimizer updates, gathered one by one ---- */

struct td_param_list {
    int n, cap;
    td_tensor **items; /* owned references */
};

td_status td_param_list_new(td_param_list **out)
{
    if (out == NULL)
        return td_err_null("param_list_new", "out");
    *out = NULL;
    td_param_list *l = td_calloc(1, sizeof *l);
    if (l == NULL)
        return td_error(TD_E_NOMEM, "param_list_new: out of memory");
    *out = l;
    return TD_OK;
}

td_status td_param_list_add(td_param_list *list, td_tensor *param)
{
    static const char op[] = "param_list_add";
    if (list == NULL)
        return td_err_null(op, "list");
    if (param == NULL)
        return td_err_null(op, "param");
    if (param->kind != TD_BACKEND_AUTODIFF || td_dtype_cls(param->dtype) != TD_CLASS_FLOAT ||
        td_dtype_rows[param->dtype].quantized)
        return td_error(TD_E_INVALID, "%s: the parameter is a %s %s tensor, not a float tensor on an autodiff device",
                        op, td_backend_name(param->kind), td_dtype_name(param->dtype));
    if (param->node != NULL && !param->node->leaf)
        return td_error(TD_E_INVALID,
                        "%s: the parameter is the result of %s, not a leaf: add the tensors you called "
                        "td_require_grad on",
                        op, param->node->op != NULL ? param->node->op : "a tracked op");
    for (int i = 0; i < list->n; i++)
        if (list->items[i] == param)
            return td_error(TD_E_INVALID, "%s: the parameter is already in the list (index %d): add each once", op,
                            i);
    if (list->n == list->cap) {
        if (list->cap > INT32_MAX / 2)
            return td_error(TD_E_INVALID, "%s: the list holds %d parameters, the most it can", op, list->n);
        const int cap = list->cap ? list->cap * 2 : 8;
        td_tensor **items = td_malloc((size_t)cap * sizeof *items);
        if (items == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory", op);
        for (int i = 0; i < list->n; i++)
            items[i] = list->items[i];
        td_free(list->items);
        list->items = items;
        list->cap = cap;
    }
    TD_TRY(td_tensor_retain(param));
    list->items[list->n++] = param;
    return TD_OK;
}

td_status td_param_list_count(const td_param_list *list, int *count)
{
    if (count == NULL)
        return td_err_null("param_list_count", "count");
    *count = 0;
    if (list == NULL)
        return td_err_null("param_list_count", "list");
    *count = list->n;
    return TD_OK;
}

td_status td_param_list_get(const td_param_list *list, int index, td_tensor **out)
{
    static const char op[] = "param_list_get";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (list == NULL)
        return td_err_null(op, "list");
    if (index < 0 || index >= list->n)
        return td_error(TD_E_RANGE, "%s: index %d is outside the list's %d parameters", op, index, list->n);
    *out = list->items[index];
    return TD_OK;
}

void td_param_list_free(td_param_list *list)
{
    if (list == NULL)
        return;
    for (int i = 0; i < list->n; i++)
        td_tensor_release(list->items[i]);
    td_free(list->items);
    td_free(list);
}
