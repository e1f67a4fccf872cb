/* Shape rules of the int ops of issue 10 (specs/ops/int_ops.lua); declared in td_rules.h. */
#include "td_internal.h"
#include "td_rules.h"

/* reduce_all_nonempty / reduce_dim_nonempty: td_rules_reduce.c. */

td_status td_rule_random_int(const char *op, const int64_t *shape, int shape_len, int32_t low, int32_t high,
                             td_shape *out)
{
    if (!(low < high))
        return td_error(TD_E_INVALID, "%s: uniform needs low < high (got [%ld, %ld))", op, (long)low, (long)high);
    return td_shape_from(op, shape, shape_len, out);
}
