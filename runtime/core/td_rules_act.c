/* Shape rules of the activation ops (specs/ops/activation.lua). */
#include <stdio.h>

#include "td_internal.h"

td_status td_rule_along_dim(const char *op, const td_shape *a, int64_t *dim, td_shape *out)
{
    const int n = a->ndim > 0 ? a->ndim : 1; /* a 0-d tensor takes dim 0 or -1, as in PyTorch */
    if (*dim < -n || *dim >= n)
        return td_error(TD_E_RANGE, "%s: dim %lld is out of range for a tensor of %d dims", op, (long long)*dim,
                        a->ndim);
    if (*dim < 0)
        *dim += n;
    *out = *a;
    return TD_OK;
}

td_status td_rule_cross_entropy(const char *op, const td_shape *logits, const td_shape *targets, td_shape *out)
{
    char sl[128], st[128];
    td_shape_format(logits, sl, sizeof sl);
    td_shape_format(targets, st, sizeof st);
    if (logits->ndim != 2)
        return td_error(TD_E_SHAPE, "%s: logits must be 2-D [N, C], got %s", op, sl);
    if (targets->ndim != 1 || targets->dims[0] != logits->dims[0])
        return td_error(TD_E_SHAPE, "%s: targets must be 1-D [N] with N = %lld (the rows of logits %s), got %s", op,
                        (long long)logits->dims[0], sl, st);
    out->ndim = 0;
    out->numel = 1;
    return TD_OK;
}
