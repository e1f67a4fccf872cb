/* Shape rules of the reduce / cumulative / sort group (specs/ops/reduce_sort.lua). */
#include <stdio.h>

#include "td_internal.h"

/* Normalizes *dim for a tensor of ndim dims; a 0-d tensor takes dim 0 or -1 (PyTorch
 * treats it as one dim of size 1). */
static td_status norm_dim_0d(const char *op, int64_t *dim, int ndim)
{
    const int n = ndim > 0 ? ndim : 1;
    if (*dim < -n || *dim >= n)
        return td_error(TD_E_RANGE, "%s: dim %lld is out of range for a tensor of %d dims", op, (long long)*dim,
                        ndim);
    if (*dim < 0)
        *dim += n;
    return TD_OK;
}

/* reduce_all_nonempty and reduce_dim_nonempty are core rules (td_shape.c). */

td_status td_rule_along_dim(const char *op, const td_shape *a, int64_t *dim, td_shape *out)
{
    TD_TRY(norm_dim_0d(op, dim, a->ndim));
    *out = *a;
    return TD_OK;
}

td_status td_rule_topk(const char *op, const td_shape *a, int64_t k, int64_t *dim, td_shape *out)
{
    TD_TRY(norm_dim_0d(op, dim, a->ndim));
    const int64_t size = a->ndim > 0 ? a->dims[*dim] : 1;
    if (k < 0 || k > size)
        return td_error(TD_E_RANGE, "%s: count = %lld is out of range for dim %lld of size %lld (0 <= count <= size)", op,
                        (long long)k, (long long)*dim, (long long)size);
    if (a->ndim == 0) {
        if (k == 1) {
            *out = *a;
            return TD_OK;
        }
        /* The result keeps the input's 0-d shape, as in PyTorch, and a 0-d tensor holds
         * exactly one element, so it cannot be the top 0. PyTorch returns the element for
         * k = 0 there; tdispatch refuses it (gen/tdgen/emit_compare.lua, Z.topk). */
        return td_error(TD_E_SHAPE,
                        "%s: count = 0 of a 0-d tensor: the result is 0-d like the input and holds exactly one "
                        "element, so count must be 1",
                        op);
    }
    int64_t dims[TD_MAX_DIMS];
    for (int d = 0; d < a->ndim; d++)
        dims[d] = a->dims[d];
    dims[*dim] = k;
    /* td_shape_from checks the sizes (k = 0 gives an empty tensor where those are allowed). */
    return td_shape_from(op, dims, a->ndim, out);
}
