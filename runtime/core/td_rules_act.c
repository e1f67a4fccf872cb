/* Shape rules of the activation ops (specs/ops/activation.lua). */
#include <stdio.h>

#include "td_internal.h"

/* along_dim (softmax and friends) lives in td_rules_reduce.c with the other ops along a dim. */

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
