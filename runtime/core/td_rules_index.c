/* Shape rules of the indexing and layout ops (issue 10): gather, scatter_add, select,
 * select_add, flip, repeat_dim, transpose, narrow, stack, unfold, pad, tri_mask, cross.
 * Every rule validates all its arguments and names the op in its message; dims may be
 * negative (counting from the end) and are normalized in place; in the index family a 0-d
 * tensor takes dim 0 or -1 as if it had one dim of size 1 (PyTorch). Index values are data:
 * the kernels check them (TD_E_RANGE), the rules check only shapes. */
#include <stdio.h>
#include <string.h>

#include "td_internal.h"
#include "td_ops.h"
#include "td_rules.h"

static td_status ix_norm_dim(const char *op, const char *what, int64_t *dim, int ndim)
{
    if (ndim == 0 || *dim < -ndim || *dim >= ndim)
        return td_error(TD_E_RANGE, "%s: %s %lld is out of range for a tensor of %d dims", op, what,
                        (long long)*dim, ndim);
    if (*dim < 0)
        *dim += ndim;
    return TD_OK;
}

/* PyTorch's wrap_scalar: a 0-d tensor takes dim 0 and -1 in the index family, as if it had
 * one dim of size 1 (ATen's ensure_nonempty_dim / ensure_nonempty_size). */
static td_status ix_norm_dim0(const char *op, int64_t *dim, int ndim)
{
    return ix_norm_dim(op, "dim", dim, ndim > 0 ? ndim : 1);
}

static td_status ix_fmt_err(const char *op, const char *msg, const td_shape *x, const td_shape *y)
{
    char sx[128], sy[128];
    td_shape_format(x, sx, sizeof sx);
    td_shape_format(y, sy, sizeof sy);
    return td_error(TD_E_SHAPE, "%s: %s (%s and %s)", op, msg, sx, sy);
}

/* indices has a's number of dims and is no larger than a outside dim (torch.gather). As in
 * PyTorch, a 0-d a or indices counts as one dim of size 1 here: a 0-d a gathers with
 * 0-d or 1-d indices, and 0-d indices gather from a 1-d a; the result has indices' shape. */
td_status td_rule_gather(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices, td_shape *out)
{
    TD_TRY(ix_norm_dim0(op, dim, a->ndim));
    const td_shape a1 = td_shape_nonempty(a), i1 = td_shape_nonempty(indices);
    if (i1.ndim != a1.ndim)
        return ix_fmt_err(op, "indices must have as many dims as a", indices, a);
    for (int d = 0; d < a1.ndim; d++)
        if (d != *dim && i1.dims[d] > a1.dims[d])
            return ix_fmt_err(op, "indices may not be larger than a outside dim", indices, a);
    return td_shape_from(op, indices->dims, indices->ndim, out);
}

/* a, indices and value have as many dims; indices is no larger than value anywhere and
 * no larger than a outside dim (torch.scatter_add). A 0-d tensor among them counts as one
 * dim of size 1, as in PyTorch. The result has a's shape. */
td_status td_rule_scatter(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices,
                          const td_shape *value, td_shape *out)
{
    TD_TRY(ix_norm_dim0(op, dim, a->ndim));
    const td_shape a1 = td_shape_nonempty(a), i1 = td_shape_nonempty(indices), v1 = td_shape_nonempty(value);
    if (i1.ndim != a1.ndim)
        return ix_fmt_err(op, "indices must have as many dims as a", indices, a);
    if (v1.ndim != a1.ndim)
        return ix_fmt_err(op, "value must have as many dims as a", value, a);
    for (int d = 0; d < a1.ndim; d++) {
        if (i1.dims[d] > v1.dims[d])
            return ix_fmt_err(op, "indices may not be larger than value", indices, value);
        if (d != *dim && i1.dims[d] > a1.dims[d])
            return ix_fmt_err(op, "indices may not be larger than a outside dim", indices, a);
    }
    *out = *a;
    return TD_OK;
}

static td_status ix_index_vector(const char *op, const td_shape *indices)
{
    if (indices->ndim > 1) {
        char s[128];
        td_shape_format(indices, s, sizeof s);
        return td_error(TD_E_SHAPE, "%s: indices must be 0-d or 1-d, got shape %s", op, s);
    }
    return TD_OK;
}

/* A 0-d a (dim 0 or -1) takes exactly one index, as in PyTorch. */
static td_status ix_scalar_one_index(const char *op, const td_shape *a, const td_shape *indices)
{
    if (a->ndim == 0 && indices->numel != 1)
        return td_error(TD_E_SHAPE, "%s: a 0-d a takes exactly 1 index, got %lld", op, (long long)indices->numel);
    return TD_OK;
}

/* torch.index_select: indices is a 0-d or 1-d int tensor; dim takes its length. A 0-d a
 * takes one index and gives a 0-d result, as in PyTorch. */
td_status td_rule_select(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices, td_shape *out)
{
    TD_TRY(ix_norm_dim0(op, dim, a->ndim));
    TD_TRY(ix_index_vector(op, indices));
    TD_TRY(ix_scalar_one_index(op, a, indices));
    if (a->ndim == 0)
        return td_shape_from(op, NULL, 0, out);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->ndim);
    dims[*dim] = indices->numel;
    return td_shape_from(op, dims, a->ndim, out);
}

/* torch.index_add: value is a with dim of the length of indices. A 0-d a or value counts
 * as one dim of size 1, as in PyTorch: a 0-d a takes k indices (all 0) with a value of [k]
 * (or 0-d for k = 1), and a 1-d a with one index takes a 0-d value too. */
td_status td_rule_select_add(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices,
                             const td_shape *value, td_shape *out)
{
    TD_TRY(ix_norm_dim0(op, dim, a->ndim));
    TD_TRY(ix_index_vector(op, indices));
    const td_shape a1 = td_shape_nonempty(a), v1 = td_shape_nonempty(value);
    bool ok = v1.ndim == a1.ndim;
    for (int d = 0; ok && d < a1.ndim; d++)
        ok = v1.dims[d] == (d == *dim ? indices->numel : a1.dims[d]);
    if (!ok)
        return ix_fmt_err(op, "value must have a's shape with dim of the length of indices", value, a);
    *out = *a;
    return TD_OK;
}

/* dims: distinct dims of a (negative ones count from the end). */
td_status td_rule_flip(const char *op, const td_shape *a, const int64_t *dims, int dims_len, td_shape *out)
{
    bool seen[TD_MAX_DIMS] = { false };
    if (dims_len > TD_MAX_DIMS)
        return td_error(TD_E_INVALID, "%s: %d dims given; tensors have at most %d", op, dims_len, TD_MAX_DIMS);
    for (int i = 0; i < dims_len; i++) {
        int64_t d = dims[i];
        TD_TRY(ix_norm_dim(op, "dims entry", &d, a->ndim));
        if (seen[d])
            return td_error(TD_E_INVALID, "%s: dim %lld appears twice in dims", op, (long long)d);
        seen[d] = true;
    }
    *out = *a;
    return TD_OK;
}

/* A 0-d a (dim 0 or -1) repeats as [1]: the result is [times], as torch.tensor(x).repeat(times). */
td_status td_rule_repeat_dim(const char *op, const td_shape *a, int64_t *dim, int64_t times, td_shape *out)
{
    TD_TRY(ix_norm_dim0(op, dim, a->ndim));
    if (times < 0)
        return td_error(TD_E_INVALID, "%s: times is %lld; it cannot be negative", op, (long long)times);
    const td_shape a1 = td_shape_nonempty(a);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, a1.dims, sizeof(int64_t) * (size_t)a1.ndim);
    if (!td_mul_ok(a1.dims[*dim], times, &dims[*dim]) || dims[*dim] > TD_MAX_NUMEL)
        return td_error(TD_E_SHAPE, "%s: dim %lld of size %lld repeated %lld times would have more than 2^40 elements",
                        op, (long long)*dim, (long long)a1.dims[*dim], (long long)times);
    return td_shape_from(op, dims, a1.ndim, out);
}

/* The last two dims exchanged; a needs at least 2 dims. */
td_status td_rule_transpose(const char *op, const td_shape *a, td_shape *out)
{
    if (a->ndim < 2)
        return td_error(TD_E_SHAPE, "%s: a needs at least 2 dims, got %d", op, a->ndim);
    *out = *a;
    out->dims[a->ndim - 2] = a->dims[a->ndim - 1];
    out->dims[a->ndim - 1] = a->dims[a->ndim - 2];
    return TD_OK;
}

/* torch.narrow: start may be negative (from the end), start + length <= size. */
td_status td_rule_narrow(const char *op, const td_shape *a, int64_t *dim, int64_t start, int64_t length,
                         td_shape *out)
{
    TD_TRY(ix_norm_dim(op, "dim", dim, a->ndim));
    const int64_t n = a->dims[*dim];
    if (start < -n || start > n)
        return td_error(TD_E_RANGE, "%s: start %lld is out of range for dim %lld of size %lld", op, (long long)start,
                        (long long)*dim, (long long)n);
    if (start < 0)
        start += n;
    if (length < 0 || length > n - start)
        return td_error(TD_E_RANGE, "%s: length %lld from start %lld leaves dim %lld of size %lld", op,
                        (long long)length, (long long)start, (long long)*dim, (long long)n);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->ndim);
    dims[*dim] = length;
    return td_shape_from(op, dims, a->ndim, out);
}

/* torch.stack: equal shapes; the new dim goes at dim, in [-(ndim + 1), ndim]. */
td_status td_rule_stack(const char *op, const td_tensor *const *xs, int xs_len, int64_t *dim, td_shape *out)
{
    const td_shape *s0 = &xs[0]->shape;
    if (s0->ndim + 1 > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: the result would have more than %d dims", op, TD_MAX_DIMS);
    TD_TRY(ix_norm_dim(op, "dim", dim, s0->ndim + 1));
    for (int k = 1; k < xs_len; k++)
        if (!td_shape_equal(&xs[k]->shape, s0)) {
            char sa[128], sb[128];
            td_shape_format(&xs[k]->shape, sa, sizeof sa);
            td_shape_format(s0, sb, sizeof sb);
            return td_error(TD_E_SHAPE, "%s: xs[%d] has shape %s, xs[0] has %s", op, k, sa, sb);
        }
    int64_t dims[TD_MAX_DIMS];
    for (int d = 0, j = 0; d <= s0->ndim; d++)
        dims[d] = d == *dim ? (int64_t)xs_len : s0->dims[j++];
    return td_shape_from(op, dims, s0->ndim + 1, out);
}

/* Tensor.unfold: dim becomes the count of windows (n - size) / step + 1, and a new last
 * dim of length size holds each window. */
td_status td_rule_unfold(const char *op, const td_shape *a, int64_t *dim, int64_t size, int64_t step,
                         td_shape *out)
{
    TD_TRY(ix_norm_dim0(op, dim, a->ndim));
    if (a->ndim + 1 > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: the result would have more than %d dims", op, TD_MAX_DIMS);
    if (step < 1)
        return td_error(TD_E_INVALID, "%s: step is %lld; it must be at least 1", op, (long long)step);
    const int64_t n = a->ndim > 0 ? a->dims[*dim] : 1;
    if (size < 0 || size > n)
        return td_error(TD_E_RANGE, "%s: size %lld is out of range for dim %lld of size %lld", op, (long long)size,
                        (long long)*dim, (long long)n);
    if (a->ndim == 0) { /* PyTorch: a 0-d a has one window of size 0 or 1, shape [size] */
        const int64_t d1[1] = { size };
        return td_shape_from(op, d1, 1, out);
    }
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->ndim);
    dims[*dim] = (a->dims[*dim] - size) / step + 1; /* 0 <= size <= the dim: no overflow */
    dims[a->ndim] = size;
    return td_shape_from(op, dims, a->ndim + 1, out);
}

/* torch.nn.functional.pad order: (before, after) pairs from the last dim backwards. */
td_status td_rule_pad(const char *op, const td_shape *a, const int64_t *pads, int pads_len, td_shape *out)
{
    if (pads_len % 2 != 0 || pads_len / 2 > a->ndim)
        return td_error(TD_E_INVALID, "%s: pads has %d entries; it needs an even count of at most %d", op, pads_len,
                        2 * a->ndim);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->ndim);
    for (int i = 0; i < pads_len; i++) {
        if (pads[i] < 0 || pads[i] > TD_MAX_NUMEL)
            return td_error(TD_E_INVALID, "%s: pads[%d] is %lld; pads must be from 0 to 2^40", op, i,
                            (long long)pads[i]);
        int64_t *d = &dims[a->ndim - 1 - i / 2];
        if (!td_add_ok(*d, pads[i], d))
            return td_error(TD_E_SHAPE, "%s: pads[%d] = %lld overflows the padded size", op, i, (long long)pads[i]);
    }
    return td_shape_from(op, dims, a->ndim, out);
}

/* Triangular masks: a shape of at least 2 dims (the last two are the matrix). */
td_status td_rule_tri_mask(const char *op, const int64_t *shape, int shape_len, td_shape *out)
{
    if (shape_len < 2)
        return td_error(TD_E_SHAPE, "%s: the shape needs at least 2 dims, got %d", op, shape_len);
    return td_shape_from(op, shape, shape_len, out);
}

/* torch.linalg.cross: a and b broadcast, and both have size 3 in dim (of the result). */
td_status td_rule_cross(const char *op, const td_shape *a, const td_shape *b, int64_t *dim, td_shape *out)
{
    TD_TRY(td_rule_broadcast(op, a, b, out));
    TD_TRY(ix_norm_dim(op, "dim", dim, out->ndim));
    const int ia = (int)*dim - (out->ndim - a->ndim), ib = (int)*dim - (out->ndim - b->ndim);
    if (ia < 0 || ib < 0 || a->dims[ia] != 3 || b->dims[ib] != 3)
        return ix_fmt_err(op, "a and b need size 3 in dim", a, b);
    return TD_OK;
}

/* F.one_hot: a new last dim of num_classes (given, at least 1). */
td_status td_rule_one_hot(const char *op, const td_shape *indices, int64_t num_classes, td_shape *out)
{
    if (num_classes < 1 || num_classes > TD_MAX_NUMEL)
        return td_error(TD_E_INVALID, "%s: num_classes is %lld; it must be from 1 to 2^40", op,
                        (long long)num_classes);
    if (indices->ndim + 1 > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: the result would have more than %d dims", op, TD_MAX_DIMS);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, indices->dims, sizeof(int64_t) * (size_t)indices->ndim);
    dims[indices->ndim] = num_classes;
    return td_shape_from(op, dims, indices->ndim + 1, out);
}

/* ---- index values: data, checked by the generated entries whatever the result's size ---- */

td_status td_check_index_range(const char *op, const char *what, const td_tensor *indices, int64_t bound,
                               int64_t dim, const char *bound_name)
{
    const int64_t n = indices->shape.numel;
    if (n == 0)
        return TD_OK;
    const td_tensor *prim = indices->kind == TD_BACKEND_AUTODIFF ? indices->inner : indices;
    /* the values in the indices' own dtype (any int dtype: the int ops' indices have their
     * data's dtype), read from host memory on the CPU, else converted to int64 on the host */
    const void *raw = NULL;
    td_dtype dt = prim->dtype;
    void *host = NULL;
    if (prim->kind == TD_BACKEND_CPU) {
        raw = prim->data; /* host memory, row-major */
    } else {
        if (dt != TD_I32)
            dt = TD_I64; /* read through the converting twin */
        host = td_malloc((size_t)n * td_dtype_size(dt));
        if (host == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory for the %lld %s values read to check them", op,
                            (long long)n, what);
        td_status st = dt == TD_I32 ? td_int_into_data(indices, host, n) : td_int_into_data_dtype(indices, TD_I64, host, n);
        if (st != TD_OK) {
            td_free(host);
            return td_error_within(st, op);
        }
        raw = host;
    }
    /* the first index out of range (a loop per dtype: the check runs on every call) */
    int64_t i = 0;
#define TD_FIRST_OUT(T)                                                     \
    for (const T *p = raw; i < n && (int64_t)p[i] >= 0 && (int64_t)p[i] < bound; i++) \
        ;
    switch (dt) {
    case TD_I64: TD_FIRST_OUT(int64_t) break;
    case TD_I8: TD_FIRST_OUT(int8_t) break;
    case TD_U8: TD_FIRST_OUT(uint8_t) break;
    default: TD_FIRST_OUT(int32_t) break;
    }
#undef TD_FIRST_OUT
    td_status st = TD_OK;
    for (; i < n; i++) {
        int64_t v;
        switch (dt) {
        case TD_I64: v = ((const int64_t *)raw)[i]; break;
        case TD_I8: v = ((const int8_t *)raw)[i]; break;
        case TD_U8: v = ((const uint8_t *)raw)[i]; break;
        default: v = ((const int32_t *)raw)[i]; break;
        }
        if (v >= 0 && v < bound)
            continue;
        if (bound_name == NULL)
            st = td_error(TD_E_RANGE, "%s: index %lld (element %lld of %s) is out of range for dim %lld of size %lld",
                          op, (long long)v, (long long)i, what, (long long)dim, (long long)bound);
        else
            st = td_error(TD_E_RANGE, "%s: index %lld (element %lld of %s) is out of range [0, %s = %lld)", op,
                          (long long)v, (long long)i, what, bound_name, (long long)bound);
        break;
    }
    td_free(host);
    return st;
}

/* ---- rules that read data: the result's size is the count of true elements ---- */

/* The true elements of mask (any backend, autodiff too: through the public entry). */
static td_status count_true(const char *op, const td_tensor *mask, int64_t *count)
{
    *count = 0;
    const int64_t n = mask->shape.numel;
    if (n == 0)
        return TD_OK;
    bool *host = td_malloc((size_t)n * sizeof *host);
    if (host == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for the %lld mask values read to count the result",
                        op, (long long)n);
    td_status st = td_bool_into_data(mask, host, n);
    if (st != TD_OK) {
        td_free(host);
        return td_error_within(st, op);
    }
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += host[i] ? 1 : 0;
    td_free(host);
    *count = c;
    return TD_OK;
}

td_status td_rule_argwhere(const char *op, const td_tensor *a, td_shape *out)
{
    int64_t n = 0;
    TD_TRY(count_true(op, a, &n));
    const int64_t dims[2] = { n, a->shape.ndim };
    return td_shape_from(op, dims, 2, out);
}

/* torch.masked_select: a and mask broadcast against each other; the result is 1-d, the
 * count of true elements of the mask broadcast to that shape. */
td_status td_rule_mask_select(const char *op, const td_tensor *a, const td_tensor *mask, td_shape *out)
{
    td_shape b;
    TD_TRY(td_rule_broadcast(op, &a->shape, &mask->shape, &b));
    int64_t n = 0;
    if (b.numel > 0) {
        TD_TRY(count_true(op, mask, &n));
        /* broadcasting repeats every mask element the same number of times */
        if (!td_mul_ok(n, b.numel / mask->shape.numel, &n)) /* at most b's numel: cannot fail */
            return td_error(TD_E_INTERNAL, "%s: the selected count overflows", op);
    }
    const int64_t dims[1] = { n };
    return td_shape_from(op, dims, 1, out);
}

td_status td_argwhere_fill(const char *op, const bool *mask, const td_shape *s, int64_t count, int32_t *out)
{
    for (int d = 0; d < s->ndim; d++)
        if (s->dims[d] > INT32_MAX)
            return td_error(TD_E_RANGE, "%s: dim %d has %lld elements; int indices reach 2^31 - 1", op, d,
                            (long long)s->dims[d]);
    int64_t idx[TD_MAX_DIMS] = { 0 };
    int64_t k = 0;
    for (int64_t i = 0; i < s->numel; i++) {
        if (mask[i]) {
            if (k == count)
                return td_error(TD_E_INTERNAL, "%s: more true elements than the %lld counted", op, (long long)count);
            for (int d = 0; d < s->ndim; d++)
                out[k * s->ndim + d] = (int32_t)idx[d];
            k++;
        }
        for (int d = s->ndim - 1; d >= 0; d--) { /* the next index, row-major */
            if (++idx[d] < s->dims[d])
                break;
            idx[d] = 0;
        }
    }
    if (k != count)
        return td_error(TD_E_INTERNAL, "%s: %lld true elements, %lld counted", op, (long long)k, (long long)count);
    return TD_OK;
}
