/* CPU collectives: the tensors already live in host memory, so they go to MPI as they are. */
#include <string.h>

#include "td_backend_cpu.h"

static size_t bytes_of(const td_tensor *t)
{
    return (size_t)td_be_numel(t) * td_dtype_size(td_be_dtype(t));
}

static td_status all_reduce(const char *op, td_op id, const td_tensor *a, td_group *group, td_reduce_op rop,
                            td_tensor *out)
{
    TD_TRY(td_dist_agree(op, group, (int64_t)id * 16 + rop, a));
    if (rop == TD_REDUCE_MEAN && td_be_dtype(a) != TD_F32)
        return td_error(TD_E_INVALID, "%s: cpu: mean is not defined for int tensors", op);
    return td_dist_all_reduce(op, group, td_be_data(a), td_be_data(out), td_be_numel(a), td_be_dtype(a), rop);
}

td_status td_cpu_float_all_reduce(const td_tensor *a, td_group *group, td_reduce_op op, td_tensor *out)
{
    return all_reduce("float_all_reduce", TD_OP_FLOAT_ALL_REDUCE, a, group, op, out);
}

td_status td_cpu_int_all_reduce(const td_tensor *a, td_group *group, td_reduce_op op, td_tensor *out)
{
    return all_reduce("int_all_reduce", TD_OP_INT_ALL_REDUCE, a, group, op, out);
}

td_status td_cpu_float_broadcast(const td_tensor *a, td_group *group, int32_t root, td_tensor *out)
{
    static const char op[] = "float_broadcast";
    /* Agree first (root is part of the tag), so a bad root fails on every rank alike. */
    TD_TRY(td_dist_agree(op, group, (int64_t)TD_OP_FLOAT_BROADCAST * 65536 + root, a));
    if (root < 0 || root >= td_group_size_of(group))
        return td_error(TD_E_RANGE, "%s: cpu: root %d is not a rank of a group of %d", op, (int)root,
                        td_group_size_of(group));
    memcpy(td_be_data(out), td_be_data(a), bytes_of(a));
    return td_dist_broadcast(op, group, td_be_data(out), td_be_numel(a), td_be_dtype(a), (int)root);
}

td_status td_cpu_float_all_gather(const td_tensor *a, td_group *group, td_tensor *out)
{
    static const char op[] = "float_all_gather";
    TD_TRY(td_dist_agree(op, group, (int64_t)TD_OP_FLOAT_ALL_GATHER * 16, a));
    return td_dist_all_gather(op, group, td_be_data(a), td_be_data(out), td_be_numel(a), td_be_dtype(a));
}
