/* CPU backend: bool logic and masks (specs/ops/bool_ops.lua). */
#include "cpu_internal.h"

/* out[i] = OP over up to three bool inputs broadcast to out's shape, row by row. */
#define TD_CPU_BOOL_BCAST(NIN, INS, EXPR)                                                   \
    do {                                                                                    \
        const int64_t n_ = td_be_numel(out);                                                \
        if (n_ == 0)                                                                        \
            return TD_OK;                                                                   \
        td_cpu_bcast it;                                                                    \
        td_cpu_bcast_init(&it, td_be_shape(out), NIN, INS);                                      \
        const int64_t inner = it.inner;                                                     \
        const int64_t s0 = it.st[0][it.ndim - 1], s1 = it.st[1][it.ndim - 1];               \
        const int64_t s2 = NIN > 2 ? it.st[2][it.ndim - 1] : 0;                             \
        TD_CPU_FOR_WORK(r, it.rows, n_, {                                                   \
            int64_t off[3];                                                                 \
            td_cpu_bcast_row(&it, r, off);                                                  \
            bool *ro = po + r * inner;                                                      \
            for (int64_t j = 0; j < inner; j++) {                                           \
                const bool x = p0[off[0] + j * s0];                                         \
                const bool y = p1[off[1] + j * s1];                                         \
                const bool z = NIN > 2 ? p2[off[2] + j * s2] : false;                       \
                (void)z;                                                                    \
                ro[j] = (EXPR);                                                             \
            }                                                                               \
        });                                                                                 \
    } while (0)

#define TD_CPU_BOOL_BINARY(NAME, EXPR)                                                      \
    td_status td_cpu_##NAME(const td_tensor *a, const td_tensor *b, td_tensor *out)         \
    {                                                                                       \
        const bool *p0 = (const bool *)td_be_data(a), *p1 = (const bool *)td_be_data(b), *p2 = NULL;    \
        bool *po = (bool *)td_be_data(out);                                                       \
        const td_shape *ins[2] = { td_be_shape(a), td_be_shape(b) };                                  \
        (void)p2;                                                                           \
        TD_CPU_BOOL_BCAST(2, ins, EXPR);                                                    \
        return TD_OK;                                                                       \
    }

TD_CPU_BOOL_BINARY(bool_xor, x != y)
TD_CPU_BOOL_BINARY(bool_equal, x == y)
TD_CPU_BOOL_BINARY(bool_not_equal, x != y)

/* out = mask ? value : a, all three broadcast to out. */
td_status td_cpu_bool_mask_where(const td_tensor *a, const td_tensor *mask, const td_tensor *value, td_tensor *out)
{
    const bool *p0 = (const bool *)td_be_data(a), *p1 = (const bool *)td_be_data(mask), *p2 = (const bool *)td_be_data(value);
    bool *po = (bool *)td_be_data(out);
    const td_shape *ins[3] = { td_be_shape(a), td_be_shape(mask), td_be_shape(value) };
    TD_CPU_BOOL_BCAST(3, ins, y ? z : x);
    return TD_OK;
}

/* out = mask ? (value != 0) : a; mask broadcasts to a's shape (the shape of out). */
td_status td_cpu_bool_mask_fill(const td_tensor *a, const td_tensor *mask, int32_t value, td_tensor *out)
{
    const bool *p0 = (const bool *)td_be_data(a), *p1 = (const bool *)td_be_data(mask), *p2 = NULL;
    bool *po = (bool *)td_be_data(out);
    const bool v = value != 0;
    const td_shape *ins[2] = { td_be_shape(a), td_be_shape(mask) };
    (void)p2;
    TD_CPU_BOOL_BCAST(2, ins, y ? v : x);
    return TD_OK;
}
