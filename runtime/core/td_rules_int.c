/* Shape rules of the int ops of issue 10 (specs/ops/int_ops.lua); declared in td_rules.h. */
#include "td_internal.h"
#include "td_rules.h"

/* A 0-dim result, after checking that a has at least one element (max, min, mean). */
td_status td_rule_reduce_all_nonempty(const char *op, const td_shape *a, td_shape *out)
{
    if (a->numel == 0)
        return td_error(TD_E_SHAPE, "%s: the tensor is empty; the reduction has no identity", op);
    return td_rule_reduce_all(op, a, out);
}

/* reduce_dim, after checking that the reduced dim is not empty (max, min, argmax, mean). */
td_status td_rule_reduce_dim_nonempty(const char *op, const td_shape *a, int64_t *dim, td_shape *out)
{
    const int64_t d = *dim < 0 ? *dim + a->ndim : *dim;
    if (a->ndim > 0 && d >= 0 && d < a->ndim && a->dims[d] == 0)
        return td_error(TD_E_SHAPE, "%s: dim %lld is empty (size 0); the reduction has no identity", op,
                        (long long)*dim);
    return td_rule_reduce_dim(op, a, dim, out);
}

td_status td_rule_random_int(const char *op, const int64_t *shape, int shape_len, int32_t low, int32_t high,
                             td_shape *out)
{
    if (!(low < high))
        return td_error(TD_E_INVALID, "%s: uniform needs low < high (got [%ld, %ld))", op, (long)low, (long)high);
    return td_shape_from(op, shape, shape_len, out);
}
