/* CPU backend: indexing ops (gather, scatter_add, select, select_add) and more layout ops
 * (flip, repeat_dim, transpose, narrow, stack, unfold, pad, the triangular masks, cross).
 * Shapes were checked by the rules (runtime/core/td_rules_index.c) and index values by the
 * generated entries (td_check_index_range, the op's index_range): every index is in range
 * here, whatever path reached the kernel. */
#include "cpu_internal.h"
#include "td_half.h"
#include "td_rules.h"

/* index j of the indices (any int dtype), with iv_ / idt_ in scope: IV per read (a switch,
 * for loops over rows), IVT inside TD_CPU_INDEX_CASES (per element loops: one loop per
 * index type) */
#define IV(j) td_cpu_index_at(iv_, idt_, (j))
#define IVT(j) ((int64_t)((const IT *)iv_)[(j)])
#define TD_CPU_INDEX_CASE_(TT, ...) \
    {                               \
        typedef TT IT;              \
        __VA_ARGS__                 \
    }                               \
    break;
#define TD_CPU_INDEX_CASES(DT, ...)                       \
    switch (DT) {                                         \
    case TD_I64: TD_CPU_INDEX_CASE_(int64_t, __VA_ARGS__) \
    case TD_I8: TD_CPU_INDEX_CASE_(int8_t, __VA_ARGS__)   \
    case TD_U8: TD_CPU_INDEX_CASE_(uint8_t, __VA_ARGS__)  \
    default: TD_CPU_INDEX_CASE_(int32_t, __VA_ARGS__)     \
    }

/* ---- gather / scatter_add ---- */

static td_status gather(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    const td_shape as = td_shape_nonempty(td_be_shape(a)), is = td_shape_nonempty(td_be_shape(indices));
    int64_t ast[TD_MAX_DIMS];
    td_cpu_strides(&as, ast);
    const int nd = is.ndim;
    const int64_t *idims = is.dims;
    const void *iv_ = td_be_data(indices); const td_dtype idt_ = td_be_dtype(indices);
    const size_t esz = td_dtype_size(td_be_dtype(a));
    const char *src = (const char *)td_be_data(a);
    char *dst = (char *)td_be_data(out);
    TD_CPU_INDEX_CASES(idt_, TD_CPU_FOR(i, td_be_numel(out), {
        int64_t r = i, off = 0;
        for (int d = nd - 1; d >= 0; d--) {
            const int64_t c = r % idims[d];
            r /= idims[d];
            off += (d == dim ? IVT(i) : c) * ast[d];
        }
        memcpy(dst + (size_t)i * esz, src + (size_t)off * esz, esz);
    });)
    return TD_OK;
}

/* Walks the elements of indices in row-major order: the offset of the value element and of
 * the out element each one adds to. One thread: repeated indices add in a fixed order. */
#define SCATTER_WALK(BODY)                                                      \
    do {                                                                        \
        int64_t ost[TD_MAX_DIMS], vst[TD_MAX_DIMS];                             \
        const td_shape os_ = td_shape_nonempty(td_be_shape(out));                    \
        const td_shape vs_ = td_shape_nonempty(td_be_shape(value));                  \
        const td_shape is_ = td_shape_nonempty(td_be_shape(indices));                \
        td_cpu_strides(&os_, ost);                                              \
        td_cpu_strides(&vs_, vst);                                              \
        const int nd = is_.ndim;                                                \
        const int64_t *idims = is_.dims;                                        \
        const void *iv_ = td_be_data(indices); const td_dtype idt_ = td_be_dtype(indices);                     \
        TD_CPU_INDEX_CASES(idt_, {                                              \
        for (int64_t i = 0; i < td_be_numel(indices); i++) {                    \
            int64_t r = i, oo = 0, vo = 0;                                      \
            for (int d = nd - 1; d >= 0; d--) {                                 \
                const int64_t c = r % idims[d];                                 \
                r /= idims[d];                                                  \
                vo += c * vst[d];                                               \
                oo += (d == dim ? IVT(i) : c) * ost[d];                         \
            }                                                                   \
            BODY                                                                \
        }                                                                       \
        })                                                                      \
    } while (0)

td_status td_cpu_float_gather(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    return gather(a, dim, indices, out);
}

td_status td_cpu_int_gather(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    return gather(a, dim, indices, out);
}

td_status td_cpu_bool_gather(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    return gather(a, dim, indices, out);
}

/* f32 and f64 (an f16 / bf16 destination would round after every add: via f32). */
td_status td_cpu_float_scatter_add(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                   td_tensor *out)
{
    memcpy(td_be_data(out), td_be_data(a), td_cpu_nbytes(out));
    if (td_be_dtype(a) == TD_F64) {
        double *o = (double *)td_be_data(out);
        const double *v = (const double *)td_be_data(value);
        SCATTER_WALK(o[oo] += v[vo];);
        return TD_OK;
    }
    float *o = (float *)td_be_data(out);
    const float *v = (const float *)td_be_data(value);
    SCATTER_WALK(o[oo] += v[vo];);
    return TD_OK;
}

td_status td_cpu_int_scatter_add(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                 td_tensor *out)
{
    memcpy(td_be_data(out), td_be_data(a), td_cpu_nbytes(out));
    TD_CPU_INT_CASES(td_be_dtype(a), {
        T *o = (T *)td_be_data(out);
        const T *v = (const T *)td_be_data(value);
        SCATTER_WALK(o[oo] = TD_CPU_WADD(o[oo], v[vo]););
    })
    return TD_OK;
}

/* Later elements of indices overwrite earlier ones: the last in row-major order wins. */
#define TD_CPU_SCATTER_ASSIGN(P, T) TD_CPU_SCATTER_ASSIGN_FN(td_cpu_##P##_scatter_assign, T)
#define TD_CPU_SCATTER_ASSIGN_FN(FNAME, T)                                                                   \
    td_status FNAME(const td_tensor *a, int64_t dim, const td_tensor *indices,                               \
                                          const td_tensor *value, td_tensor *out)                            \
    {                                                                                                        \
        memcpy(td_be_data(out), td_be_data(a), td_cpu_nbytes(out));                                                      \
        T *o = (T *)td_be_data(out);                                                                               \
        const T *v = (const T *)td_be_data(value);                                                                 \
        SCATTER_WALK(o[oo] = v[vo];);                                                                        \
        return TD_OK;                                                                                        \
    }

/* float_scatter_assign moves elements: one instance per element size (f16 / bf16, f32, f64). */
static TD_CPU_SCATTER_ASSIGN_FN(scatter_assign_w2, uint16_t)
static TD_CPU_SCATTER_ASSIGN_FN(scatter_assign_w4, float)
static TD_CPU_SCATTER_ASSIGN_FN(scatter_assign_w8, uint64_t)
td_status td_cpu_float_scatter_assign(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                      td_tensor *out)
{
    switch (td_dtype_size(td_be_dtype(a))) {
    case 8: return scatter_assign_w8(a, dim, indices, value, out);
    case 2: return scatter_assign_w2(a, dim, indices, value, out);
    default: return scatter_assign_w4(a, dim, indices, value, out);
    }
}

td_status td_cpu_int_scatter_assign(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                    td_tensor *out)
{
    memcpy(td_be_data(out), td_be_data(a), td_cpu_nbytes(out));
    TD_CPU_INT_CASES(td_be_dtype(a), {
        T *o = (T *)td_be_data(out);
        const T *v = (const T *)td_be_data(value);
        SCATTER_WALK(o[oo] = v[vo];);
    })
    return TD_OK;
}

/* in the indices' dtype (the result's) */
td_status td_cpu_int_one_hot(const td_tensor *indices, int64_t num_classes, td_tensor *out)
{
    const void *iv_ = td_be_data(indices);
    const td_dtype idt_ = td_be_dtype(indices);
    TD_CPU_INT_CASES(idt_, {
        T *o = (T *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), { o[i] = (T)((int64_t)((const T *)iv_)[i / num_classes] == i % num_classes); });
    })
    return TD_OK;
}

/* ---- select / select_add: a seen as [outer, n, inner], the result as [outer, k, inner] ---- */

static td_status select_rows(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    int64_t outer, n, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &n, &inner);
    const int64_t k = td_be_numel(indices);
    const void *iv_ = td_be_data(indices); const td_dtype idt_ = td_be_dtype(indices);
    const size_t esz = td_dtype_size(td_be_dtype(a)), row = (size_t)inner * esz;
    const char *src = (const char *)td_be_data(a);
    char *dst = (char *)td_be_data(out);
    TD_CPU_FOR_WORK(t, outer * k, td_be_numel(out), {
        const int64_t o = t / k, j = t % k;
        memcpy(dst + (size_t)t * row, src + (size_t)(o * n + IV(j)) * row, row);
    });
    return TD_OK;
}

td_status td_cpu_float_select(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    return select_rows(a, dim, indices, out);
}

td_status td_cpu_int_select(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    return select_rows(a, dim, indices, out);
}

td_status td_cpu_bool_select(const td_tensor *a, int64_t dim, const td_tensor *indices, td_tensor *out)
{
    return select_rows(a, dim, indices, out);
}

/* Each outer block on one thread, indices in order: repeated indices add in a fixed order.
 * With ZERO (select_assign, index_copy) the selected slices are zeroed first, so an index
 * given twice gets the sum of its values, as the decomposition does. */
#define SELECT_ADD_OR_ASSIGN(T, ADD, ZERO)                                                   \
    do {                                                                                     \
        int64_t outer, n, inner;                                                             \
        td_reduce_geometry(td_be_shape(a), dim, &outer, &n, &inner);                              \
        memcpy(td_be_data(out), td_be_data(a), td_cpu_nbytes(out));                                     \
        const int64_t k = td_be_numel(indices);                                              \
        const void *iv_ = td_be_data(indices); const td_dtype idt_ = td_be_dtype(indices);                                  \
        T *o = (T *)td_be_data(out);                                                               \
        const T *v = (const T *)td_be_data(value);                                                 \
        TD_CPU_FOR_WORK(b, outer, td_be_numel(value), {                                      \
            for (int64_t j = 0; ZERO && j < k; j++)                                          \
                memset(o + (b * n + IV(j)) * inner, 0, (size_t)inner * sizeof(T));          \
            for (int64_t j = 0; j < k; j++) {                                                \
                T *dst = o + (b * n + IV(j)) * inner;                                        \
                const T *src = v + (b * k + j) * inner;                                      \
                for (int64_t t = 0; t < inner; t++)                                          \
                    dst[t] = ADD(dst[t], src[t]);                                            \
            }                                                                                \
        });                                                                                  \
    } while (0)
#define SELECT_ADD(T, ADD) SELECT_ADD_OR_ASSIGN(T, ADD, false)

#define ADD_F32(x, y) ((x) + (y))

td_status td_cpu_float_select_add(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                  td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64)
        SELECT_ADD(double, ADD_F32);
    else
        SELECT_ADD(float, ADD_F32);
    return TD_OK;
}

td_status td_cpu_int_select_add(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), SELECT_ADD(T, TD_CPU_WADD);)
    return TD_OK;
}

/* ---- layout ---- */

static void copy_as(const td_tensor *a, const int64_t *src_st, int64_t src_off, td_tensor *out)
{
    int64_t dst_st[TD_MAX_DIMS];
    td_cpu_strides(td_be_shape(out), dst_st);
    td_cpu_strided_copy(td_be_data(out), dst_st, 0, td_be_data(a), src_st, src_off, td_dtype_size(td_be_dtype(a)), td_be_ndim(out),
                        td_be_dims(out));
}

/* Negative strides walk the flipped dims backwards from their last element. */
static td_status flip(const td_tensor *a, const int64_t *axes, int axes_len, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS], off = 0;
    td_cpu_strides(td_be_shape(a), st);
    for (int i = 0; i < axes_len; i++) {
        const int d = (int)(axes[i] < 0 ? axes[i] + td_be_ndim(a) : axes[i]);
        if (td_be_dims(a)[d] > 0)
            off += (td_be_dims(a)[d] - 1) * st[d];
        st[d] = -st[d];
    }
    copy_as(a, st, off, out);
    return TD_OK;
}

/* The result as [outer, times, block]: every repeat reads the same block of a. */
static td_status repeat_dim(const td_tensor *a, int64_t dim, int64_t times, td_tensor *out)
{
    int64_t outer, n, inner;
    td_reduce_geometry(td_be_shape(a), dim, &outer, &n, &inner);
    const int64_t blk = n * inner;
    const int64_t dims[3] = { outer, times, blk };
    const int64_t dst_st[3] = { times * blk, blk, 1 }, src_st[3] = { blk, 0, 1 };
    td_cpu_strided_copy(td_be_data(out), dst_st, 0, td_be_data(a), src_st, 0, td_dtype_size(td_be_dtype(a)), 3, dims);
    return TD_OK;
}

static td_status transpose(const td_tensor *a, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS];
    td_cpu_strides(td_be_shape(a), st);
    const int nd = td_be_ndim(a);
    const int64_t t = st[nd - 1];
    st[nd - 1] = st[nd - 2];
    st[nd - 2] = t;
    copy_as(a, st, 0, out);
    return TD_OK;
}

static td_status narrow(const td_tensor *a, int64_t dim, int64_t start, td_tensor *out)
{
    int64_t st[TD_MAX_DIMS];
    td_cpu_strides(td_be_shape(a), st);
    if (start < 0)
        start += td_be_dims(a)[dim];
    copy_as(a, st, start * st[dim], out);
    return TD_OK;
}

static td_status stack(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)
{
    int64_t ost[TD_MAX_DIMS], dst_st[TD_MAX_DIMS], src_st[TD_MAX_DIMS];
    td_cpu_strides(td_be_shape(out), ost);
    for (int d = 0, j = 0; d < td_be_ndim(out); d++)
        if (d != dim)
            dst_st[j++] = ost[d];
    const size_t esz = td_dtype_size(td_be_dtype(out));
    for (int i = 0; i < xs_len; i++) {
        td_cpu_strides(td_be_shape(xs[i]), src_st);
        td_cpu_strided_copy(td_be_data(out), dst_st, i * ost[dim], td_be_data(xs[i]), src_st, 0, esz, td_be_ndim(xs[i]),
                            td_be_dims(xs[i]));
    }
    return TD_OK;
}

#define TD_CPU_MORE_LAYOUT(P)                                                                              \
    td_status td_cpu_##P##_flip(const td_tensor *a, const int64_t *axes, int axes_len, td_tensor *out)     \
    {                                                                                                      \
        return flip(a, axes, axes_len, out);                                                               \
    }                                                                                                      \
    td_status td_cpu_##P##_repeat_dim(const td_tensor *a, int64_t dim, int64_t times, td_tensor *out)      \
    {                                                                                                      \
        return repeat_dim(a, dim, times, out);                                                             \
    }                                                                                                      \
    td_status td_cpu_##P##_transpose(const td_tensor *a, td_tensor *out)                                   \
    {                                                                                                      \
        return transpose(a, out);                                                                          \
    }                                                                                                      \
    td_status td_cpu_##P##_narrow(const td_tensor *a, int64_t dim, int64_t start, int64_t length,          \
                                  td_tensor *out)                                                          \
    {                                                                                                      \
        (void)length;                                                                                      \
        return narrow(a, dim, start, out);                                                                 \
    }                                                                                                      \
    td_status td_cpu_##P##_stack(const td_tensor *const *xs, int xs_len, int64_t dim, td_tensor *out)      \
    {                                                                                                      \
        return stack(xs, xs_len, dim, out);                                                                \
    }

TD_CPU_MORE_LAYOUT(float)
TD_CPU_MORE_LAYOUT(int)
TD_CPU_MORE_LAYOUT(bool)

/* Window w, element k along dim reads a[w * step + k]: dim strides step * st[dim], the new
 * last dim st[dim]. */
td_status td_cpu_float_unfold(const td_tensor *a, int64_t dim, int64_t size, int64_t step, td_tensor *out)
{
    (void)size;
    int64_t st[TD_MAX_DIMS];
    td_cpu_strides(td_be_shape(a), st);
    if (td_be_ndim(a) == 0) { /* one window of size 0 or 1: out is [size] */
        st[0] = 1;
        copy_as(a, st, 0, out);
        return TD_OK;
    }
    const int64_t s = st[dim];
    /* one window (step beyond the dim): its stride is never used, and step * s may overflow */
    st[dim] = (td_be_dims(out)[dim] > 1 ? step : 1) * s;
    st[td_be_ndim(a)] = s;
    copy_as(a, st, 0, out);
    return TD_OK;
}

/* Any float dtype: the value in the dtype (f16 / bf16 rounded once, f64 exactly), then a's
 * elements moved in. */
td_status td_cpu_float_pad(const td_tensor *a, const int64_t *pads, int pads_len, float value, td_tensor *out)
{
    const td_dtype dt = td_be_dtype(a);
    const size_t esz = td_dtype_size(dt);
    if (dt == TD_F64) {
        double *o = (double *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), { o[i] = (double)value; });
    } else if (esz == 2) {
        uint16_t *o = (uint16_t *)td_be_data(out);
        const uint16_t v = dt == TD_F16 ? td_f32_to_f16(value) : td_f32_to_bf16(value);
        TD_CPU_FOR(i, td_be_numel(out), { o[i] = v; });
    } else {
        float *o = (float *)td_be_data(out);
        TD_CPU_FOR(i, td_be_numel(out), { o[i] = value; });
    }
    int64_t ost[TD_MAX_DIMS], ast[TD_MAX_DIMS], off = 0;
    td_cpu_strides(td_be_shape(out), ost);
    td_cpu_strides(td_be_shape(a), ast);
    for (int i = 0; i < pads_len / 2; i++)
        off += pads[2 * i] * ost[td_be_ndim(a) - 1 - i];
    td_cpu_strided_copy(td_be_data(out), ost, off, td_be_data(a), ast, 0, esz, td_be_ndim(a), td_be_dims(a));
    return TD_OK;
}

/* tril_mask: true where column - row > offset; triu_mask: where column - row < offset. */
static td_status tri_mask(int64_t offset, bool lower, td_tensor *out)
{
    const int nd = td_be_ndim(out);
    const int64_t rows = td_be_dims(out)[nd - 2], cols = td_be_dims(out)[nd - 1];
    bool *o = (bool *)td_be_data(out);
    TD_CPU_FOR(i, td_be_numel(out), {
        const int64_t c = i % cols, r = (i / cols) % rows;
        o[i] = lower ? (c - r > offset) : (c - r < offset);
    });
    return TD_OK;
}

td_status td_cpu_bool_tril_mask(const int64_t *shape, int shape_len, int64_t offset, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return tri_mask(offset, true, out);
}

td_status td_cpu_bool_triu_mask(const int64_t *shape, int shape_len, int64_t offset, td_tensor *out)
{
    (void)shape;
    (void)shape_len;
    return tri_mask(offset, false, out);
}

/* out = a x b along dim, a and b broadcast to out's shape; f32 and f64 from one body. */
#define CROSS_FN(SUF, T)                                                                          \
    static void cross##SUF(const td_tensor *a, const td_tensor *b, int64_t dim, td_tensor *out)   \
    {                                                                                             \
        int64_t ast[TD_MAX_DIMS], bst[TD_MAX_DIMS], ost[TD_MAX_DIMS], dims[TD_MAX_DIMS];          \
        td_broadcast_strides(td_be_shape(a), td_be_shape(out), ast);                              \
        td_broadcast_strides(td_be_shape(b), td_be_shape(out), bst);                              \
        td_cpu_strides(td_be_shape(out), ost);                                                    \
        const int nd = td_be_ndim(out);                                                           \
        memcpy(dims, td_be_dims(out), sizeof(int64_t) * (size_t)nd);                              \
        dims[dim] = 1;                                                                            \
        const T *A = (const T *)td_be_data(a), *B = (const T *)td_be_data(b);                     \
        T *O = (T *)td_be_data(out);                                                              \
        const int64_t sa = ast[dim], sb = bst[dim], so = ost[dim];                                \
        TD_CPU_FOR(p, td_be_numel(out) / 3, {                                                     \
            int64_t r = p, oa = 0, ob = 0, oo = 0;                                                \
            for (int d = nd - 1; d >= 0; d--) {                                                   \
                const int64_t c = r % dims[d];                                                    \
                r /= dims[d];                                                                     \
                oa += c * ast[d];                                                                 \
                ob += c * bst[d];                                                                 \
                oo += c * ost[d];                                                                 \
            }                                                                                     \
            const T a0 = A[oa], a1 = A[oa + sa], a2 = A[oa + 2 * sa];                             \
            const T b0 = B[ob], b1 = B[ob + sb], b2 = B[ob + 2 * sb];                             \
            O[oo] = a1 * b2 - a2 * b1;                                                            \
            O[oo + so] = a2 * b0 - a0 * b2;                                                       \
            O[oo + 2 * so] = a0 * b1 - a1 * b0;                                                   \
        });                                                                                       \
    }
CROSS_FN(32, float)
CROSS_FN(64, double)

td_status td_cpu_float_cross(const td_tensor *a, const td_tensor *b, int64_t dim, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64)
        cross64(a, b, dim, out);
    else
        cross32(a, b, dim, out);
    return TD_OK;
}

/* The coordinates of the true elements, row-major; the rule counted them. */
td_status td_cpu_bool_argwhere(const td_tensor *a, td_tensor *out)
{
    return td_argwhere_fill("bool_argwhere", (const bool *)td_be_data(a), td_be_shape(a), td_be_dims(out)[0],
                            (int32_t *)td_be_data(out));
}

td_status td_cpu_float_one_hot(const td_tensor *indices, int64_t num_classes, td_tensor *out)
{
    float *o = (float *)td_be_data(out);
    const void *iv_ = td_be_data(indices); const td_dtype idt_ = td_be_dtype(indices);
    TD_CPU_INDEX_CASES(idt_, TD_CPU_FOR(i, td_be_numel(out), { o[i] = IVT(i / num_classes) == i % num_classes ? 1.0f : 0.0f; });)
    return TD_OK;
}

td_status td_cpu_float_select_assign(const td_tensor *a, int64_t dim, const td_tensor *indices,
                                     const td_tensor *value, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64)
        SELECT_ADD_OR_ASSIGN(double, ADD_F32, true);
    else
        SELECT_ADD_OR_ASSIGN(float, ADD_F32, true);
    return TD_OK;
}

td_status td_cpu_int_select_assign(const td_tensor *a, int64_t dim, const td_tensor *indices, const td_tensor *value,
                                   td_tensor *out)
{
    TD_CPU_INT_CASES(td_be_dtype(a), SELECT_ADD_OR_ASSIGN(T, TD_CPU_WADD, true);)
    return TD_OK;
}

/* The elements of a where the mask is true, both broadcast to one shape, row-major; the
 * rule counted them. */
static td_status mask_select(const char *op, const td_tensor *a, const td_tensor *mask, td_tensor *out)
{
    td_shape bs;
    TD_TRY(td_rule_broadcast(op, td_be_shape(a), td_be_shape(mask), &bs));
    int64_t ms[TD_MAX_DIMS], as[TD_MAX_DIMS];
    td_broadcast_strides(td_be_shape(mask), &bs, ms);
    td_broadcast_strides(td_be_shape(a), &bs, as);
    const int nd = bs.ndim;
    const bool *m = (const bool *)td_be_data(mask);
    const size_t esz = td_dtype_size(td_be_dtype(a));
    const char *src = (const char *)td_be_data(a);
    char *dst = (char *)td_be_data(out);
    const int64_t count = td_be_dims(out)[0];
    int64_t idx[TD_MAX_DIMS] = { 0 };
    int64_t mo = 0, ao = 0, k = 0;
    for (int64_t i = 0; i < bs.numel; i++) {
        if (m[mo]) {
            if (k == count)
                return td_error(TD_E_INTERNAL, "%s: more true mask elements than the %lld counted", op,
                                (long long)count);
            memcpy(dst + (size_t)k * esz, src + (size_t)ao * esz, esz);
            k++;
        }
        for (int d = nd - 1; d >= 0; d--) {
            mo += ms[d];
            ao += as[d];
            if (++idx[d] < bs.dims[d])
                break;
            mo -= ms[d] * idx[d];
            ao -= as[d] * idx[d];
            idx[d] = 0;
        }
    }
    if (k != count)
        return td_error(TD_E_INTERNAL, "%s: %lld true mask elements, %lld counted", op, (long long)k,
                        (long long)count);
    return TD_OK;
}

td_status td_cpu_float_mask_select(const td_tensor *a, const td_tensor *mask, td_tensor *out)
{
    return mask_select("float_mask_select", a, mask, out);
}

td_status td_cpu_int_mask_select(const td_tensor *a, const td_tensor *mask, td_tensor *out)
{
    return mask_select("int_mask_select", a, mask, out);
}

td_status td_cpu_bool_mask_select(const td_tensor *a, const td_tensor *mask, td_tensor *out)
{
    return mask_select("bool_mask_select", a, mask, out);
}
