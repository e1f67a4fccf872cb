/* Helpers the derivative formulas call (masks, shape adjoints), built from public ops. */
#include "td_autodiff.h"
#include "td_ops.h"

/* Each helper is compiled when the ops it calls are in the build (TD_HAVE_OP_*, from
 * td_kinds.h): a selective build (TD_OPS) has only the helpers its formulas name. */
#if defined(__GNUC__)
#define TD_AD_MAYBE_UNUSED __attribute__((unused))
#else
#define TD_AD_MAYBE_UNUSED
#endif

/* Runs a comparison against a scalar broadcast as a 0-dim tensor, as a float 0/1 mask. */
#if defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_FULL)
TD_AD_MAYBE_UNUSED static td_status compare_scalar(const td_tensor *x, float v,
                                td_status (*cmp)(const td_tensor *, const td_tensor *, td_tensor **),
                                td_tensor **out)
{
    td_tensor *s = NULL, *m = NULL;
    td_status st = td_float_full_dtype(x->device, x->dtype, NULL, 0, v, &s);
    if (st == TD_OK)
        st = cmp(x, s, &m);
    if (st == TD_OK)
        st = td_bool_into_float_dtype(m, x->dtype, out);
    td_tensor_release(s);
    td_tensor_release(m);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_GREATER) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_FULL)
td_status td_ad_positive(const td_tensor *x, td_tensor **out)
{
    return compare_scalar(x, 0.0f, td_float_greater, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_GREATER) && defined(TD_HAVE_OP_FLOAT_LOWER) && defined(TD_HAVE_OP_FLOAT_SUB) && \
    defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_FULL)
td_status td_ad_sign(const td_tensor *x, td_tensor **out)
{
    td_tensor *p = NULL, *n = NULL;
    td_status st = compare_scalar(x, 0.0f, td_float_greater, &p);
    if (st == TD_OK)
        st = compare_scalar(x, 0.0f, td_float_lower, &n);
    if (st == TD_OK)
        st = td_float_sub(p, n, out);
    td_tensor_release(p);
    td_tensor_release(n);
    return st;
}
#endif

#if defined(TD_HAVE_OP_BOOL_INTO_FLOAT)
TD_AD_MAYBE_UNUSED static td_status mask_of(td_status (*cmp)(const td_tensor *, const td_tensor *, td_tensor **), const td_tensor *x,
                         const td_tensor *y, td_tensor **out)
{
    td_tensor *m = NULL;
    td_status st = cmp(x, y, &m);
    if (st == TD_OK)
        st = td_bool_into_float_dtype(m, x->dtype, out);
    td_tensor_release(m);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_GREATER_EQUAL) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT)
td_status td_ad_ge(const td_tensor *x, const td_tensor *y, td_tensor **out)
{
    return mask_of(td_float_greater_equal, x, y, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_GREATER) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT)
td_status td_ad_gt(const td_tensor *x, const td_tensor *y, td_tensor **out)
{
    return mask_of(td_float_greater, x, y, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_GREATER_EQUAL) && defined(TD_HAVE_OP_FLOAT_LOWER_EQUAL) && defined(TD_HAVE_OP_FLOAT_MUL) && \
    defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_FULL)
td_status td_ad_inside(const td_tensor *x, float lo, float hi, td_tensor **out)
{
    td_tensor *a = NULL, *b = NULL;
    td_status st = compare_scalar(x, lo, td_float_greater_equal, &a);
    if (st == TD_OK)
        st = compare_scalar(x, hi, td_float_lower_equal, &b);
    if (st == TD_OK)
        st = td_float_mul(a, b, out);
    td_tensor_release(a);
    td_tensor_release(b);
    return st;
}
#endif

/* t with 0 where the comparison of x with the scalar v holds; elsewhere t as it is (NaN
 * in x compares false, so it keeps t). Like PyTorch's where(cond, 0, t): masked elements
 * are 0 even where t is NaN or infinite. x's shape broadcasts to t's. */
#if defined(TD_HAVE_OP_FLOAT_FULL) && defined(TD_HAVE_OP_FLOAT_MASK_FILL)
TD_AD_MAYBE_UNUSED static td_status zero_where_cmp(const td_tensor *t, const td_tensor *x, float v,
                                                   td_status (*cmp)(const td_tensor *, const td_tensor *,
                                                                    td_tensor **),
                                                   td_tensor **out)
{
    td_tensor *s = NULL, *m = NULL;
    td_status st = td_float_full_dtype(x->device, x->dtype, NULL, 0, v, &s);
    if (st == TD_OK)
        st = cmp(x, s, &m);
    if (st == TD_OK)
        st = td_float_mask_fill(t, m, 0.0f, out);
    td_tensor_release(s);
    td_tensor_release(m);
    return st;
}
#endif

/* relu: the gradient is 0 where x <= 0 and passes elsewhere, NaN included. */
#if defined(TD_HAVE_OP_FLOAT_FULL) && defined(TD_HAVE_OP_FLOAT_MASK_FILL) && defined(TD_HAVE_OP_FLOAT_LOWER_EQUAL)
td_status td_ad_zero_where_le(const td_tensor *t, const td_tensor *x, float v, td_tensor **out)
{
    return zero_where_cmp(t, x, v, td_float_lower_equal, out);
}
#endif

/* powf's base gradient: 0 where the exponent is 0 (PyTorch's pow_backward_self). */
#if defined(TD_HAVE_OP_FLOAT_FULL) && defined(TD_HAVE_OP_FLOAT_MASK_FILL) && defined(TD_HAVE_OP_FLOAT_EQUAL)
td_status td_ad_zero_where_eq(const td_tensor *t, const td_tensor *x, float v, td_tensor **out)
{
    return zero_where_cmp(t, x, v, td_float_equal, out);
}
#endif

/* powf's exponent gradient: 0 where the base a is 0 and the exponent b >= 0, where
 * a^b * log(a) would be 0 * -inf (PyTorch's pow_backward_exponent). */
#if defined(TD_HAVE_OP_FLOAT_FULL) && defined(TD_HAVE_OP_FLOAT_MASK_FILL) && defined(TD_HAVE_OP_FLOAT_EQUAL) && defined(TD_HAVE_OP_FLOAT_GREATER_EQUAL) && defined(TD_HAVE_OP_BOOL_AND)
td_status td_ad_zero_where_zero_base(const td_tensor *t, const td_tensor *a, const td_tensor *b, td_tensor **out)
{
    td_tensor *zero = NULL, *az = NULL, *bn = NULL, *m = NULL;
    td_status st = td_float_full_dtype(a->device, a->dtype, NULL, 0, 0.0f, &zero);
    if (st == TD_OK)
        st = td_float_equal(a, zero, &az);
    if (st == TD_OK)
        st = td_float_greater_equal(b, zero, &bn);
    if (st == TD_OK)
        st = td_bool_and(az, bn, &m);
    if (st == TD_OK)
        st = td_float_mask_fill(t, m, 0.0f, out);
    td_tensor_release(zero);
    td_tensor_release(az);
    td_tensor_release(bn);
    td_tensor_release(m);
    return st;
}
#endif

/* powf_scalar's gradient: zeros when the exponent is 0, whatever t holds (PyTorch's
 * pow_backward); t otherwise. */
#if defined(TD_HAVE_OP_FLOAT_ZEROS)
td_status td_ad_zeros_if_zero(const td_tensor *t, float s, td_tensor **out)
{
    if (s == 0.0f)
        return td_float_zeros_dtype(t->device, t->dtype, t->shape.dims, t->shape.ndim, out);
    td_status st = td_tensor_retain((td_tensor *)t);
    if (st == TD_OK)
        *out = (td_tensor *)t;
    return st;
}
#endif

/* gelu'(x) = Phi(x) + x phi(x). erf is not an op, so Phi(x) is recovered as gelu(x) / x
 * (1/2 at x = 0) and phi(x) = exp(-x^2 / 2) / sqrt(2 pi). */
#if defined(TD_HAVE_OP_FLOAT_ADD) && defined(TD_HAVE_OP_FLOAT_DIV) && defined(TD_HAVE_OP_FLOAT_EQUAL) && defined(TD_HAVE_OP_FLOAT_EXP) && defined(TD_HAVE_OP_FLOAT_FULL) && defined(TD_HAVE_OP_FLOAT_GELU) && defined(TD_HAVE_OP_FLOAT_MASK_FILL) && defined(TD_HAVE_OP_FLOAT_MUL) && defined(TD_HAVE_OP_FLOAT_MUL_SCALAR)
td_status td_ad_gelu_grad(const td_tensor *x, td_tensor **out)
{
    td_tensor *g = NULL, *safe = NULL, *phi_big = NULL, *x2 = NULL, *e = NULL, *xe = NULL, *zero = NULL, *isz = NULL;
    td_tensor *half = NULL, *cdf = NULL, *nz = NULL;
    /* cdf = where(x == 0, 1/2, gelu(x) / x) */
    td_status st = td_float_gelu(x, &g);
    if (st == TD_OK)
        st = td_float_full_dtype(x->device, x->dtype, NULL, 0, 0.0f, &zero);
    if (st == TD_OK)
        st = td_float_equal(x, zero, &isz);
    if (st == TD_OK)
        st = td_float_mask_fill(x, isz, 1.0f, &safe);
    if (st == TD_OK)
        st = td_float_div(g, safe, &nz);
    if (st == TD_OK)
        st = td_float_mask_fill(nz, isz, 0.5f, &cdf);
    /* pdf term: x * exp(-x^2 / 2) / sqrt(2 pi) */
    if (st == TD_OK)
        st = td_float_mul(x, x, &x2);
    if (st == TD_OK)
        st = td_float_mul_scalar(x2, -0.5f, &half);
    if (st == TD_OK)
        st = td_float_exp(half, &e);
    if (st == TD_OK)
        st = td_float_mul(x, e, &xe);
    if (st == TD_OK)
        st = td_float_mul_scalar(xe, 0.398942280f, &phi_big);
    if (st == TD_OK)
        st = td_float_add(cdf, phi_big, out);
    td_tensor *all[] = { g, safe, phi_big, x2, e, xe, zero, isz, half, cdf, nz };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ZEROS)
td_status td_ad_zeros_as(const td_tensor *like_device, const td_shape *shape, td_tensor **out)
{
    return td_float_zeros_dtype(like_device->device, like_device->dtype, shape->dims, shape->ndim, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_EXPAND) && defined(TD_HAVE_OP_FLOAT_MUL_SCALAR)
td_status td_ad_mean_grad(const td_tensor *g, const td_shape *shape, int64_t dim, td_tensor **out)
{
    td_tensor *e = NULL;
    td_status st = td_float_expand(g, shape->dims, shape->ndim, &e);
    if (st == TD_OK)
        st = td_float_mul_scalar(e, 1.0f / (float)(shape->ndim > 0 ? shape->dims[dim] : 1), out); /* 0-d: 1 */
    td_tensor_release(e);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_EXPAND)
td_status td_ad_expand_as(const td_tensor *g, const td_shape *shape, td_tensor **out)
{
    return td_float_expand(g, shape->dims, shape->ndim, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_RESHAPE)
td_status td_ad_reshape_as(const td_tensor *g, const td_shape *shape, td_tensor **out)
{
    return td_float_reshape(g, shape->dims, shape->ndim, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_PERMUTE)
td_status td_ad_inverse_permute(const td_tensor *g, const int64_t *perm, int perm_len, td_tensor **out)
{
    int64_t inv[TD_MAX_DIMS];
    for (int i = 0; i < perm_len; i++)
        inv[perm[i]] = i;
    return td_float_permute(g, inv, perm_len, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_SLICE_ASSIGN) && defined(TD_HAVE_OP_FLOAT_ZEROS)
td_status td_ad_slice_grad(const td_tensor *g, const td_shape *shape, const int64_t *starts, int starts_len,
                           const int64_t *ends, int ends_len, td_tensor **out)
{
    td_tensor *z = NULL;
    td_status st = td_float_zeros_dtype(g->device, g->dtype, shape->dims, shape->ndim, &z);
    if (st == TD_OK)
        st = td_float_slice_assign(z, g, starts, starts_len, ends, ends_len, out);
    td_tensor_release(z);
    return st;
}
#endif

/* max_dim / min_dim: the gradient goes to the elements equal to the extreme. */
#if defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_EQUAL) && defined(TD_HAVE_OP_FLOAT_MUL)
td_status td_ad_extreme_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, td_tensor **out)
{
    td_tensor *eq = NULL, *m = NULL;
    td_status st = td_float_equal(a, result, &eq);
    if (st == TD_OK)
        st = td_bool_into_float_dtype(eq, g->dtype, &m);
    if (st == TD_OK)
        st = td_float_mul(m, g, out);
    td_tensor_release(eq);
    td_tensor_release(m);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_SLICE) && defined(TD_HAVE_OP_FLOAT_ZEROS)
td_status td_ad_cat_slice(const td_ad_node *n, int i, const td_tensor *g, int64_t dim, td_tensor **out)
{
    /* An empty input (cat skips a [0] whatever the other shapes) gets an empty gradient of its shape. */
    if (n->in_shapes[i].numel == 0)
        return td_float_zeros_dtype(g->device, g->dtype, n->in_shapes[i].dims, n->in_shapes[i].ndim, out);
    int64_t starts[TD_MAX_DIMS] = { 0 }, ends[TD_MAX_DIMS];
    int64_t off = 0;
    for (int k = 0; k < i; k++)
        if (n->in_shapes[k].numel > 0)
            off += n->in_shapes[k].dims[dim];
    for (int d = 0; d <= dim; d++)
        ends[d] = g->shape.dims[d];
    starts[dim] = off;
    ends[dim] = off + n->in_shapes[i].dims[dim];
    return td_float_slice(g, starts, (int)dim + 1, ends, (int)dim + 1, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_NARROW) && defined(TD_HAVE_OP_FLOAT_RESHAPE)
/* Input i's part of a value that holds every input's gradient flattened one after the other
 * (a `shared` line's op, float_attention_backward): a view of its elements in its shape. */
td_status td_ad_unpacked(const td_ad_node *n, int i, const td_tensor *all, td_tensor **out)
{
    int64_t off = 0;
    for (int k = 0; k < i; k++)
        off += n->in_shapes[k].numel;
    const td_shape *s = &n->in_shapes[i];
    if (all->shape.ndim != 1 || all->shape.dims[0] - off < s->numel)
        return td_error(TD_E_INTERNAL, "%s backward: the packed gradients hold %lld elements, input %d needs [%lld, %lld)",
                        n->op, (long long)all->shape.numel, i, (long long)off, (long long)(off + s->numel));
    td_tensor *part = NULL;
    td_status st = td_float_narrow(all, 0, off, s->numel, &part);
    if (st == TD_OK)
        st = td_float_reshape(part, s->dims, s->ndim, out);
    td_tensor_release(part);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_TO_DEVICE)
td_status td_ad_to_input_device(const td_ad_node *n, int i, const td_tensor *g, td_tensor **out)
{
    return td_float_to_device(g, n->in_devices[i], out);
}
#endif

/* Every rank's loss depends on the reduced result, so a rank's input collects the sum of
 * all ranks' gradients: as is for sum, over the group size for mean, and only where the
 * input held the extreme for max and min. */
#if defined(TD_HAVE_OP_FLOAT_ALL_REDUCE)
td_status td_ad_all_reduce_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, td_group *group,
                                td_reduce_op op, td_tensor **out)
{
    if (op == TD_REDUCE_SUM || op == TD_REDUCE_MEAN)
        return td_float_all_reduce(g, group, op, out);
    td_tensor *s = NULL;
    td_status st = td_float_all_reduce(g, group, TD_REDUCE_SUM, &s);
    if (st == TD_OK)
        st = td_ad_extreme_grad(s, a, result, out);
    td_tensor_release(s);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ALL_REDUCE) && defined(TD_HAVE_OP_FLOAT_MUL_SCALAR)
td_status td_ad_broadcast_grad(const td_tensor *g, td_group *group, int64_t root, td_tensor **out)
{
    td_tensor *s = NULL;
    td_status st = td_float_all_reduce(g, group, TD_REDUCE_SUM, &s);
    if (st == TD_OK)
        st = td_float_mul_scalar(s, td_group_rank_of(group) == root ? 1.0f : 0.0f, out);
    td_tensor_release(s);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ALL_REDUCE) && defined(TD_HAVE_OP_FLOAT_SLICE)
td_status td_ad_all_gather_grad(const td_tensor *g, td_group *group, td_tensor **out)
{
    td_tensor *s = NULL;
    td_status st = td_float_all_reduce(g, group, TD_REDUCE_SUM, &s);
    int64_t part = g->shape.dims[0] / td_group_size_of(group), rank = td_group_rank_of(group);
    int64_t starts[1] = { rank * part }, ends[1] = { (rank + 1) * part };
    if (st == TD_OK)
        st = td_float_slice(s, starts, 1, ends, 1, out);
    td_tensor_release(s);
    return st;
}
#endif

/* ---- indexing and layout (issue 10) ---- */

/* gather: the gradient of a adds grad at the gathered positions (scatter_add into zeros). */
#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SCATTER_ADD)
td_status td_ad_gather_grad(const td_tensor *g, const td_shape *shape, int64_t dim, const td_tensor *indices,
                            td_tensor **out)
{
    td_tensor *z = NULL;
    td_status st = td_float_zeros_dtype(g->device, g->dtype, shape->dims, shape->ndim, &z);
    if (st == TD_OK)
        st = td_float_scatter_add(z, dim, indices, g, out);
    td_tensor_release(z);
    return st;
}
#endif

/* scatter_add: value's gradient gathers grad where indices point; value elements beyond
 * indices' shape were unused and get 0. */
#if defined(TD_HAVE_OP_FLOAT_GATHER) && defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SLICE_ASSIGN)
td_status td_ad_scatter_value_grad(const td_tensor *g, const td_shape *shape, int64_t dim, const td_tensor *indices,
                                   td_tensor **out)
{
    td_tensor *got = NULL, *z = NULL;
    td_status st = td_float_gather(g, dim, indices, &got);
    if (st != TD_OK || td_shape_equal(&got->shape, shape)) {
        if (st == TD_OK)
            *out = got;
        else
            td_tensor_release(got);
        return st;
    }
    int64_t starts[TD_MAX_DIMS] = { 0 };
    st = td_float_zeros_dtype(g->device, g->dtype, shape->dims, shape->ndim, &z);
    if (st == TD_OK)
        st = td_float_slice_assign(z, got, starts, shape->ndim, got->shape.dims, shape->ndim, out);
    td_tensor_release(z);
    td_tensor_release(got);
    return st;
}
#endif

/* select: the gradient of a adds grad's slices at the selected indices (select_add into zeros). */
#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SELECT_ADD)
td_status td_ad_select_grad(const td_tensor *g, const td_shape *shape, int64_t dim, const td_tensor *indices,
                            td_tensor **out)
{
    td_tensor *z = NULL;
    td_status st = td_float_zeros_dtype(g->device, g->dtype, shape->dims, shape->ndim, &z);
    if (st == TD_OK)
        st = td_float_select_add(z, dim, indices, g, out);
    td_tensor_release(z);
    return st;
}
#endif

/* repeat_dim: grad seen as [outer, times, n * inner], summed over the times dim. */
#if defined(TD_HAVE_OP_FLOAT_RESHAPE) && defined(TD_HAVE_OP_FLOAT_SUM_DIM)
td_status td_ad_repeat_dim_grad(const td_tensor *g, const td_shape *shape, int64_t dim, int64_t times,
                                td_tensor **out)
{
    int64_t outer = 1, blk = 1;
    for (int d = 0; d < shape->ndim; d++) {
        if (d < dim)
            outer *= shape->dims[d];
        else
            blk *= shape->dims[d];
    }
    const int64_t dims[3] = { outer, times, blk };
    td_tensor *r = NULL, *s = NULL;
    td_status st = td_float_reshape(g, dims, 3, &r);
    if (st == TD_OK)
        st = td_float_sum_dim(r, 1, &s);
    if (st == TD_OK)
        st = td_float_reshape(s, shape->dims, shape->ndim, out);
    td_tensor_release(r);
    td_tensor_release(s);
    return st;
}
#endif

/* narrow: grad in zeros of a's shape at [start, start + length) of dim. */
#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SLICE_ASSIGN)
td_status td_ad_narrow_grad(const td_tensor *g, const td_shape *shape, int64_t dim, int64_t start, td_tensor **out)
{
    int64_t starts[TD_MAX_DIMS], ends[TD_MAX_DIMS];
    if (start < 0)
        start += shape->dims[dim];
    for (int d = 0; d <= dim; d++) {
        starts[d] = 0;
        ends[d] = shape->dims[d];
    }
    starts[dim] = start;
    ends[dim] = start + g->shape.dims[dim];
    td_tensor *z = NULL;
    td_status st = td_float_zeros_dtype(g->device, g->dtype, shape->dims, shape->ndim, &z);
    if (st == TD_OK)
        st = td_float_slice_assign(z, g, starts, (int)dim + 1, ends, (int)dim + 1, out);
    td_tensor_release(z);
    return st;
}
#endif

/* stack: input i's gradient is entry i of grad along dim, in the input's shape. */
#if defined(TD_HAVE_OP_FLOAT_SLICE) && defined(TD_HAVE_OP_FLOAT_RESHAPE)
td_status td_ad_stack_slice(const td_ad_node *n, int i, const td_tensor *g, int64_t dim, td_tensor **out)
{
    int64_t starts[TD_MAX_DIMS] = { 0 }, ends[TD_MAX_DIMS];
    for (int d = 0; d <= dim; d++)
        ends[d] = g->shape.dims[d];
    starts[dim] = i;
    ends[dim] = i + 1;
    td_tensor *s = NULL;
    td_status st = td_float_slice(g, starts, (int)dim + 1, ends, (int)dim + 1, &s);
    if (st == TD_OK)
        st = td_float_reshape(s, n->in_shapes[i].dims, n->in_shapes[i].ndim, out);
    td_tensor_release(s);
    return st;
}
#endif

/* unfold: grad has a's dims with dim holding the nw windows and a last dim of size; window
 * w, element k came from position w * step + k of dim. Move the last dim next to dim,
 * flatten (w, k) and select_add into zeros with those positions as indices. */
#if defined(TD_HAVE_OP_FLOAT_PERMUTE) && defined(TD_HAVE_OP_FLOAT_RESHAPE) && defined(TD_HAVE_OP_INT_FROM_DATA) && defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SELECT_ADD)
td_status td_ad_unfold_grad(const td_tensor *g, const td_shape *shape, int64_t dim, int64_t size, int64_t step,
                            td_tensor **out)
{
    const int nd = shape->ndim;
    if (nd == 0) { /* a 0-d a: one window of size 0 (no gradient) or 1 (grad itself) */
        if (size == 0)
            return td_float_zeros_dtype(g->device, g->dtype, NULL, 0, out);
        return td_float_reshape(g, NULL, 0, out);
    }
    const int64_t nw = g->shape.dims[dim];
    int64_t perm[TD_MAX_DIMS], dims[TD_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++) {
        perm[j++] = d;
        if (d == dim)
            perm[j++] = nd;
    }
    for (int d = 0; d < nd; d++)
        dims[d] = d == dim ? nw * size : shape->dims[d];
    const int64_t count = nw * size;
    if (count > INT32_MAX)
        return td_error(TD_E_UNSUPPORTED, "float_unfold: the gradient of more than 2^31 window elements is not supported");
    int32_t *pos = td_malloc(sizeof(int32_t) * (size_t)(count > 0 ? count : 1));
    if (pos == NULL)
        return td_error(TD_E_NOMEM, "float_unfold: out of memory for the gradient");
    for (int64_t w = 0; w < nw; w++)
        for (int64_t k = 0; k < size; k++)
            pos[w * size + k] = (int32_t)(w * step + k);
    td_tensor *p = NULL, *r = NULL, *idx = NULL, *z = NULL;
    td_status st = td_float_permute(g, perm, nd + 1, &p);
    if (st == TD_OK)
        st = td_float_reshape(p, dims, nd, &r);
    if (st == TD_OK)
        st = td_int_from_data(g->device, pos, &count, 1, &idx);
    if (st == TD_OK)
        st = td_float_zeros_dtype(g->device, g->dtype, shape->dims, nd, &z);
    if (st == TD_OK)
        st = td_float_select_add(z, dim, idx, r, out);
    td_free(pos);
    td_tensor_release(p);
    td_tensor_release(r);
    td_tensor_release(idx);
    td_tensor_release(z);
    return st;
}
#endif

/* pad: the gradient of a is grad without the padding. */
#if defined(TD_HAVE_OP_FLOAT_SLICE)
td_status td_ad_pad_grad(const td_tensor *g, const td_shape *shape, const int64_t *pads, int pads_len,
                         td_tensor **out)
{
    int64_t starts[TD_MAX_DIMS], ends[TD_MAX_DIMS];
    for (int d = 0; d < shape->ndim; d++) {
        starts[d] = 0;
        ends[d] = shape->dims[d];
    }
    for (int i = 0; i < pads_len / 2; i++) {
        const int d = shape->ndim - 1 - i;
        starts[d] = pads[2 * i];
        ends[d] = pads[2 * i] + shape->dims[d];
    }
    return td_float_slice(g, starts, shape->ndim, ends, shape->ndim, out);
}
#endif

/* scatter_assign: a's gradient is grad where nothing was written, 0 where value was. */
#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SCATTER_ASSIGN)
td_status td_ad_scatter_assign_grad(const td_tensor *g, int64_t dim, const td_tensor *indices, td_tensor **out)
{
    td_tensor *z = NULL;
    td_status st = td_float_zeros_dtype(g->device, g->dtype, indices->shape.dims, indices->shape.ndim, &z);
    if (st == TD_OK)
        st = td_float_scatter_assign(g, dim, indices, z, out);
    td_tensor_release(z);
    return st;
}
#endif

/* ---- matmul with 1-d operands (torch.matmul) ---- */

/* r, the gradient of a 1-d operand of length k promoted to a matrix and broadcast over the
 * batch, summed over everything but its k elements: [..., k] or [..., k, 1] -> [k]. */
#if defined(TD_HAVE_OP_FLOAT_RESHAPE) && defined(TD_HAVE_OP_FLOAT_SUM_DIM)
TD_MAYBE_UNUSED static td_status matmul_vector_grad(td_tensor *r, int64_t k, td_tensor **out)
{
    const int64_t rows = k > 0 ? r->shape.numel / k : 0, flat[2] = { rows, k };
    td_tensor *f = NULL, *s = NULL;
    td_status st = td_float_reshape(r, flat, 2, &f);
    if (st == TD_OK)
        st = td_float_sum_dim(f, 0, &s);
    if (st == TD_OK)
        st = td_float_reshape(s, &k, 1, out);
    td_tensor_release(f);
    td_tensor_release(s);
    return st;
}

/* The operands as torch.matmul promotes them, and grad in the promoted result's shape. */
TD_MAYBE_UNUSED static td_status matmul_promoted(const td_tensor *g, const td_tensor *a, const td_tensor *b,
                                                 td_tensor **g2, td_tensor **a2, td_tensor **b2)
{
    td_shape sa, sb, so;
    td_matmul_promote(&a->shape, &b->shape, &g->shape, &sa, &sb, &so);
    td_status st = td_float_reshape(g, so.dims, so.ndim, g2);
    if (st == TD_OK)
        st = td_float_reshape(a, sa.dims, sa.ndim, a2);
    if (st == TD_OK)
        st = td_float_reshape(b, sb.dims, sb.ndim, b2);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_MATMUL_NT) && defined(TD_HAVE_OP_FLOAT_RESHAPE) && defined(TD_HAVE_OP_FLOAT_SUM_DIM)
td_status td_ad_matmul_grad_a(const td_tensor *g, const td_tensor *a, const td_tensor *b, td_tensor **out)
{
    if (a->shape.ndim >= 2 && b->shape.ndim >= 2)
        return td_float_matmul_nt(g, b, out);
    td_tensor *g2 = NULL, *a2 = NULL, *b2 = NULL, *r = NULL;
    td_status st = matmul_promoted(g, a, b, &g2, &a2, &b2);
    if (st == TD_OK)
        st = td_float_matmul_nt(g2, b2, &r);
    if (st == TD_OK) {
        if (a->shape.ndim == 1) { /* [..., 1, k] -> [k] */
            st = matmul_vector_grad(r, a->shape.dims[0], out);
        } else { /* b was 1-d: no batch of its own, so r has a's shape */
            *out = r;
            r = NULL;
        }
    }
    td_tensor_release(g2);
    td_tensor_release(a2);
    td_tensor_release(b2);
    td_tensor_release(r);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_MATMUL_TN) && defined(TD_HAVE_OP_FLOAT_RESHAPE) && defined(TD_HAVE_OP_FLOAT_SUM_DIM)
td_status td_ad_matmul_grad_b(const td_tensor *g, const td_tensor *a, const td_tensor *b, td_tensor **out)
{
    if (a->shape.ndim >= 2 && b->shape.ndim >= 2)
        return td_float_matmul_tn(a, g, out);
    td_tensor *g2 = NULL, *a2 = NULL, *b2 = NULL, *r = NULL;
    td_status st = matmul_promoted(g, a, b, &g2, &a2, &b2);
    if (st == TD_OK)
        st = td_float_matmul_tn(a2, g2, &r);
    if (st == TD_OK) {
        if (b->shape.ndim == 1) { /* [..., k, 1] -> [k] */
            st = matmul_vector_grad(r, b->shape.dims[0], out);
        } else { /* a was 1-d: no batch of its own, so r has b's shape */
            *out = r;
            r = NULL;
        }
    }
    td_tensor_release(g2);
    td_tensor_release(a2);
    td_tensor_release(b2);
    td_tensor_release(r);
    return st;
}
#endif

/* ---- conv_transpose2d with any output_padding below max(stride, dilation) ---- */

/* The forward is F, the transposed convolution without padding or output_padding
 * ([N, O, fh, fw], fh = (H - 1) stride + dilation (kh - 1) + 1), padded by output_padding
 * at the end and cut to [padding, padding + out) in each spatial dim. Its adjoint takes
 * grad [N, O, oh, ow] back to F's shape: grad at offset padding, zeros elsewhere, cut at
 * F's end (the places output_padding added). */
#if defined(TD_HAVE_OP_FLOAT_PAD) && defined(TD_HAVE_OP_FLOAT_SLICE)
TD_MAYBE_UNUSED static td_status conv_transpose2d_full_grad(const td_tensor *g, const td_tensor *x,
                                                            const td_tensor *weight, const int64_t *stride,
                                                            const int64_t *padding, const int64_t *output_padding,
                                                            const int64_t *dilation, td_tensor **out)
{
    int64_t full[2], pads[4], starts[4] = { 0 }, ends[4] = { g->shape.dims[0], g->shape.dims[1], 0, 0 };
    for (int i = 0; i < 2; i++) {
        full[i] = (x->shape.dims[2 + i] - 1) * stride[i] + dilation[i] * (weight->shape.dims[2 + i] - 1) + 1;
        const int64_t after = padding[i] - output_padding[i]; /* full = padding + out + after */
        pads[2 * (1 - i)] = padding[i];
        pads[2 * (1 - i) + 1] = after > 0 ? after : 0;
        ends[2 + i] = full[i];
    }
    td_tensor *p = NULL;
    td_status st = td_float_pad(g, pads, 4, 0.0f, &p);
    if (st == TD_OK)
        st = td_float_slice(p, starts, 4, ends, 4, out);
    td_tensor_release(p);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_PAD) && defined(TD_HAVE_OP_FLOAT_SLICE) && defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_CONV2D)
td_status td_ad_conv_transpose2d_grad_x(const td_tensor *g, const td_tensor *x, const td_tensor *weight,
                                        const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                                        const int64_t *output_padding, int output_padding_len,
                                        const int64_t *dilation, int dilation_len, int64_t groups, td_tensor **out)
{
    (void)padding_len, (void)output_padding_len;
    static const int64_t zero[2] = { 0, 0 };
    td_tensor *gf = NULL, *z = NULL;
    const int64_t c = weight->shape.dims[0];
    td_status st = conv_transpose2d_full_grad(g, x, weight, stride, padding, output_padding, dilation, &gf);
    if (st == TD_OK)
        st = td_float_zeros_dtype(g->device, g->dtype, &c, 1, &z);
    if (st == TD_OK)
        st = td_float_conv2d(gf, weight, z, stride, stride_len, zero, 2, dilation, dilation_len, groups, out);
    td_tensor_release(gf);
    td_tensor_release(z);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_PAD) && defined(TD_HAVE_OP_FLOAT_SLICE) && defined(TD_HAVE_OP_FLOAT_CONV2D_BACKWARD_WEIGHT)
td_status td_ad_conv_transpose2d_grad_weight(const td_tensor *g, const td_tensor *x, const td_tensor *weight,
                                             const int64_t *stride, int stride_len, const int64_t *padding,
                                             int padding_len, const int64_t *output_padding, int output_padding_len,
                                             const int64_t *dilation, int dilation_len, int64_t groups,
                                             td_tensor **out)
{
    (void)padding_len, (void)output_padding_len;
    static const int64_t zero[2] = { 0, 0 };
    td_tensor *gf = NULL;
    td_status st = conv_transpose2d_full_grad(g, x, weight, stride, padding, output_padding, dilation, &gf);
    if (st == TD_OK) /* conv2d's weight gradient with x and grad in each other's roles */
        st = td_float_conv2d_backward_weight(x, gf, weight, stride, stride_len, zero, 2, dilation, dilation_len,
                                             groups, out);
    td_tensor_release(gf);
    return st;
}
#endif

/* ---- activations (specs/ops/activation.lua) ---- */

/* d loss / d logits of float_cross_entropy: (softmax(logits, 1) - one_hot(targets)) * grad / N,
 * the softmax from max_dim / exp / sum_dim and the one-hot from comparing targets [N, 1]
 * with arange(C), so that every backend with those primitives can run it. */
#if defined(TD_HAVE_OP_FLOAT_MAX_DIM) && defined(TD_HAVE_OP_FLOAT_SUB) && defined(TD_HAVE_OP_FLOAT_EXP) &&        \
    defined(TD_HAVE_OP_FLOAT_SUM_DIM) && defined(TD_HAVE_OP_FLOAT_DIV) && defined(TD_HAVE_OP_INT_RESHAPE) &&     \
    defined(TD_HAVE_OP_INT_ARANGE) && defined(TD_HAVE_OP_INT_EQUAL) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) &&   \
    defined(TD_HAVE_OP_FLOAT_MUL) && defined(TD_HAVE_OP_FLOAT_MUL_SCALAR)
td_status td_ad_cross_entropy_grad(const td_tensor *g, const td_tensor *logits, const td_tensor *targets,
                                   td_tensor **out)
{
    const int64_t n = logits->shape.dims[0], c = logits->shape.dims[1];
    const int64_t col[2] = { n, 1 };
    td_tensor *m = NULL, *d = NULL, *e = NULL, *s = NULL, *p = NULL, *t = NULL, *ar = NULL, *eq = NULL,
              *oh = NULL, *diff = NULL, *r = NULL;
    td_status st = td_float_max_dim(logits, 1, &m);
    if (st == TD_OK)
        st = td_float_sub(logits, m, &d);
    if (st == TD_OK)
        st = td_float_exp(d, &e);
    if (st == TD_OK)
        st = td_float_sum_dim(e, 1, &s);
    if (st == TD_OK)
        st = td_float_div(e, s, &p);
    if (st == TD_OK)
        st = td_int_reshape(targets, col, 2, &t);
    if (st == TD_OK)
        st = td_int_arange(logits->device, 0, c, 1, &ar);
    if (st == TD_OK)
        st = td_int_equal(t, ar, &eq);
    if (st == TD_OK)
        st = td_bool_into_float_dtype(eq, logits->dtype, &oh);
    if (st == TD_OK)
        st = td_float_sub(p, oh, &diff);
    if (st == TD_OK)
        st = td_float_mul(diff, g, &r);
    if (st == TD_OK)
        st = td_float_mul_scalar(r, 1.0f / (float)n, out);
    td_tensor *all[] = { m, d, e, s, p, t, ar, eq, oh, diff, r };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    return st;
}
#endif

/* ---- float math (issue 10) ---- */

#if defined(TD_HAVE_OP_FLOAT_GREATER_EQUAL) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_FULL)
/* 1 where x >= s, else 0 (NaN: 0). */
td_status td_ad_at_least(const td_tensor *x, float s, td_tensor **out)
{
    return compare_scalar(x, s, td_float_greater_equal, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_LOWER_EQUAL) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_FULL)
/* 1 where x <= s, else 0 (NaN: 0). */
td_status td_ad_at_most(const td_tensor *x, float s, td_tensor **out)
{
    return compare_scalar(x, s, td_float_lower_equal, out);
}
#endif

#if defined(TD_HAVE_OP_INT_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_ADD_SCALAR) && defined(TD_HAVE_OP_FLOAT_POWF) && \
    defined(TD_HAVE_OP_FLOAT_MUL) && defined(TD_HAVE_OP_FLOAT_FULL) && defined(TD_HAVE_OP_FLOAT_EQUAL) &&          \
    defined(TD_HAVE_OP_FLOAT_MASK_FILL)
/* d/da a^b = b * a^(b - 1) for an int tensor b (broadcast with a), and 0 where b = 0 as in
 * PyTorch's pow_backward (so 0^0 does not give 0 * 0^-1 = NaN). */
td_status td_ad_powi_grad(const td_tensor *a, const td_tensor *b, td_tensor **out)
{
    td_tensor *bf = NULL, *bm1 = NULL, *p = NULL, *r = NULL, *zero = NULL, *is0 = NULL;
    td_status st = td_int_into_float_dtype(b, a->dtype, &bf);
    if (st == TD_OK)
        st = td_float_add_scalar(bf, -1.0f, &bm1);
    if (st == TD_OK)
        st = td_float_powf(a, bm1, &p);
    if (st == TD_OK)
        st = td_float_mul(p, bf, &r);
    if (st == TD_OK)
        st = td_float_full_dtype(b->device, a->dtype, NULL, 0, 0.0f, &zero);
    if (st == TD_OK)
        st = td_float_equal(bf, zero, &is0);
    if (st == TD_OK)
        st = td_float_mask_fill(r, is0, 0.0f, out);
    td_tensor_release(bf);
    td_tensor_release(bm1);
    td_tensor_release(p);
    td_tensor_release(r);
    td_tensor_release(zero);
    td_tensor_release(is0);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_POWI_SCALAR) && defined(TD_HAVE_OP_FLOAT_MUL_SCALAR)
/* d/da a^n = n * a^(n - 1), and 0 for n = 0 (PyTorch). */
td_status td_ad_powi_scalar_grad(const td_tensor *a, int64_t n, td_tensor **out)
{
    if (n == 0)
        return td_float_zeros_dtype(a->device, a->dtype, a->shape.dims, a->shape.ndim, out);
    td_tensor *p = NULL;
    td_status st = td_float_powi_scalar(a, (int32_t)(n - 1), &p);
    if (st == TD_OK)
        st = td_float_mul_scalar(p, (float)n, out);
    td_tensor_release(p);
    return st;
}
#endif

/* ---- reduce / cumulative / sort group (specs/ops/reduce_sort.lua) ---- */

#include <stdlib.h>

/* mean over all elements: grad / numel everywhere. */
#if defined(TD_HAVE_OP_FLOAT_EXPAND) && defined(TD_HAVE_OP_FLOAT_MUL_SCALAR)
td_status td_ad_mean_all_grad(const td_tensor *g, const td_shape *shape, td_tensor **out)
{
    td_tensor *e = NULL;
    td_status st = td_float_expand(g, shape->dims, shape->ndim, &e);
    if (st == TD_OK)
        st = td_float_mul_scalar(e, shape->numel > 0 ? 1.0f / (float)shape->numel : 0.0f, out);
    td_tensor_release(e);
    return st;
}
#endif

/* max / min / max_abs (and along a dim): the gradient is split evenly among the elements
 * equal to the extreme, as PyTorch's amax / amin and max() / min() without a dim do; where
 * the extreme is NaN, among the NaN elements. dim < 0: the extreme of the whole tensor. */
#if defined(TD_HAVE_OP_FLOAT_EQUAL) && defined(TD_HAVE_OP_BOOL_NOT) && defined(TD_HAVE_OP_BOOL_AND) && defined(TD_HAVE_OP_BOOL_OR) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_DIV) && defined(TD_HAVE_OP_FLOAT_MUL) && (defined(TD_HAVE_OP_FLOAT_SUM) || defined(TD_HAVE_OP_FLOAT_SUM_DIM))
static td_status even_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, int64_t dim,
                           td_tensor **out)
{
    td_tensor *eq = NULL, *a_num = NULL, *r_num = NULL, *a_nan = NULL, *r_nan = NULL, *both = NULL, *mask = NULL;
    td_tensor *m = NULL, *cnt = NULL, *share = NULL;
    td_status st = td_float_equal(a, result, &eq);
    if (st == TD_OK)
        st = td_float_equal(a, a, &a_num);
    if (st == TD_OK)
        st = td_float_equal(result, result, &r_num);
    if (st == TD_OK)
        st = td_bool_not(a_num, &a_nan);
    if (st == TD_OK)
        st = td_bool_not(r_num, &r_nan);
    if (st == TD_OK)
        st = td_bool_and(a_nan, r_nan, &both);
    if (st == TD_OK)
        st = td_bool_or(eq, both, &mask);
    if (st == TD_OK)
        st = td_bool_into_float_dtype(mask, g->dtype, &m);
#if defined(TD_HAVE_OP_FLOAT_SUM)
    if (st == TD_OK && dim < 0)
        st = td_float_sum(m, &cnt);
#endif
#if defined(TD_HAVE_OP_FLOAT_SUM_DIM)
    if (st == TD_OK && dim >= 0)
        st = td_float_sum_dim(m, dim, &cnt);
#endif
    if (st == TD_OK && cnt == NULL)
        st = td_error(TD_E_UNSUPPORTED, "even_grad: the build lacks the sum it needs");
    if (st == TD_OK)
        st = td_float_div(g, cnt, &share);
    if (st == TD_OK)
        st = td_float_mul(m, share, out);
    td_tensor *all[] = { eq, a_num, r_num, a_nan, r_nan, both, mask, m, cnt, share };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_EQUAL) && defined(TD_HAVE_OP_BOOL_NOT) && defined(TD_HAVE_OP_BOOL_AND) && defined(TD_HAVE_OP_BOOL_OR) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_DIV) && defined(TD_HAVE_OP_FLOAT_MUL) && defined(TD_HAVE_OP_FLOAT_SUM)
td_status td_ad_even_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, td_tensor **out)
{
    return even_grad(g, a, result, -1, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_EQUAL) && defined(TD_HAVE_OP_BOOL_NOT) && defined(TD_HAVE_OP_BOOL_AND) && defined(TD_HAVE_OP_BOOL_OR) && defined(TD_HAVE_OP_BOOL_INTO_FLOAT) && defined(TD_HAVE_OP_FLOAT_DIV) && defined(TD_HAVE_OP_FLOAT_MUL) && defined(TD_HAVE_OP_FLOAT_SUM_DIM)
td_status td_ad_even_grad_dim(const td_tensor *g, const td_tensor *a, const td_tensor *result, int64_t dim,
                              td_tensor **out)
{
    /* a 0-d input (dim 0 of a 0-d tensor): one element, which takes the whole gradient */
    return even_grad(g, a, result, a->shape.ndim > 0 ? dim : -1, out);
}
#endif

/* The values of max / min along dim with their index (torch.max(a, dim)): the whole
 * gradient goes to the index argmax / argmin returns (the first extreme), scattered into
 * zeros of a's shape. A 0-d input is its own extreme: it takes the gradient. */
#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SCATTER_ADD) && (defined(TD_HAVE_OP_FLOAT_ARGMAX) || defined(TD_HAVE_OP_FLOAT_ARGMIN))
TD_AD_MAYBE_UNUSED static td_status index_grad(const td_tensor *g, const td_tensor *a, int64_t dim,
                                               td_status (*arg)(const td_tensor *, int64_t, td_tensor **),
                                               td_tensor **out)
{
    if (a->shape.ndim == 0) {
        td_tensor_retain((td_tensor *)g);
        *out = (td_tensor *)g;
        return TD_OK;
    }
    td_tensor *idx = NULL;
    td_status st = arg(a, dim, &idx);
    if (st == TD_OK)
        st = td_ad_gather_grad(g, &a->shape, dim, idx, out);
    td_tensor_release(idx);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SCATTER_ADD) && defined(TD_HAVE_OP_FLOAT_ARGMAX)
td_status td_ad_argmax_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out)
{
    return index_grad(g, a, dim, td_float_argmax, out);
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ZEROS) && defined(TD_HAVE_OP_FLOAT_SCATTER_ADD) && defined(TD_HAVE_OP_FLOAT_ARGMIN)
td_status td_ad_argmin_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out)
{
    return index_grad(g, a, dim, td_float_argmin, out);
}
#endif

/* The gradients of products, scans and permutations are sequential along the dim, so these
 * run on the host: the tensors are read back (float_into_data), the loops below run over
 * each line along the dim (a viewed as [outer, size, inner]), and the result is made on the
 * gradient's device (float_from_data). */
#if defined(TD_HAVE_OP_FLOAT_INTO_DATA) && defined(TD_HAVE_OP_FLOAT_FROM_DATA)
TD_AD_MAYBE_UNUSED static td_status host_floats(const td_tensor *t, float **out)
{
    const int64_t n = t->shape.numel;
    *out = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (*out == NULL)
        return td_error(TD_E_NOMEM, "autodiff: out of memory for a host copy of %lld floats", (long long)n);
    td_status st = td_float_into_data_dtype(t, TD_F32, *out, n); /* any float dtype, as f32 */
    if (st != TD_OK) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* A zero-filled host buffer of n floats (at least one) and n doubles of scratch when asked. */
TD_AD_MAYBE_UNUSED static td_status host_zeros(int64_t n, float **out, int64_t nscratch, double **scratch)
{
    *out = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    if (scratch != NULL)
        *scratch = malloc(sizeof(double) * (size_t)(nscratch > 0 ? nscratch : 1));
    if (*out == NULL || (scratch != NULL && *scratch == NULL)) {
        free(*out);
        *out = NULL;
        if (scratch != NULL) {
            free(*scratch);
            *scratch = NULL;
        }
        return td_error(TD_E_NOMEM, "autodiff: out of memory for a gradient of %lld elements", (long long)n);
    }
    return TD_OK;
}

TD_AD_MAYBE_UNUSED static td_status host_upload(const td_tensor *like, const float *data, const td_shape *shape,
                                                td_tensor **out)
{
    /* f32 data, stored in like's dtype (rounded once) */
    if (like->dtype == TD_F32)
        return td_float_from_data(like->device, data, shape->dims, shape->ndim, out);
    td_tensor *f = NULL;
    td_status st = td_float_from_data(like->device, data, shape->dims, shape->ndim, &f);
    if (st == TD_OK)
        st = td_float_cast(f, like->dtype, out);
    td_tensor_release(f);
    return st;
}

typedef enum line_grad { LG_PROD, LG_REV_CUMSUM, LG_CUMPROD, LG_CUMMAX, LG_CUMMIN } line_grad;

/* One line: a (may be NULL for LG_REV_CUMSUM) and the result r at stride `inner`, g at
 * stride gstride (0: one value for the line, a reduction's gradient), pre `size` doubles. */
static void grad_line(line_grad kind, const float *a, const float *g, int64_t gstride, float *r, int64_t size,
                      int64_t inner, double *pre)
{
    switch (kind) {
    case LG_PROD: {
        /* d prod / d a_i = (prod_{j < i} a_j) * (prod_{j > i} a_j): no division by a_i */
        double p = 1.0;
        for (int64_t k = 0; k < size; k++) {
            pre[k] = p;
            p *= (double)a[k * inner];
        }
        double s = 1.0;
        for (int64_t k = size - 1; k >= 0; k--) {
            r[k * inner] = (float)((double)g[0] * pre[k] * s);
            s *= (double)a[k * inner];
        }
        break;
    }
    case LG_REV_CUMSUM: {
        double s = 0.0;
        for (int64_t k = size - 1; k >= 0; k--) {
            s += (double)g[k * gstride];
            r[k * inner] = (float)s;
        }
        break;
    }
    case LG_CUMPROD: {
        /* grad_i = (prod_{j < i} a_j) * S_i, S_i = g_i + a_{i+1} * S_{i+1} */
        double p = 1.0;
        for (int64_t k = 0; k < size; k++) {
            pre[k] = p;
            p *= (double)a[k * inner];
        }
        double s = 0.0;
        for (int64_t k = size - 1; k >= 0; k--) {
            s = (double)g[k * gstride] + (k + 1 < size ? (double)a[(k + 1) * inner] * s : 0.0);
            r[k * inner] = (float)(pre[k] * s);
        }
        break;
    }
    case LG_CUMMAX:
    case LG_CUMMIN: {
        /* each output takes its gradient to the index torch.cummax / cummin reports: the
         * last element that took over (a NaN, or a value at least as large / small) */
        float best = a[0];
        int64_t at = 0;
        for (int64_t k = 0; k < size; k++) {
            const float x = a[k * inner];
            const bool takes = x != x || (best == best && (kind == LG_CUMMAX ? x >= best : x <= best));
            if (takes) {
                best = x;
                at = k;
            }
            r[at * inner] += g[k * gstride];
        }
        break;
    }
    }
}

/* Runs grad_line over every line of a (shape `shape`) along dim (dim < 0: the whole
 * tensor as one line); g has a's shape, or the reduced one when `reduced`. */
static td_status grad_lines(line_grad kind, const td_tensor *g, const td_tensor *a, const td_shape *shape,
                            int64_t dim, bool reduced, td_tensor **out)
{
    int64_t outer = 1, size = shape->numel, inner = 1;
    if (dim >= 0)
        td_reduce_geometry(shape, dim, &outer, &size, &inner);
    float *ha = NULL, *hg = NULL, *hr = NULL;
    double *pre = NULL;
    td_status st = a != NULL ? host_floats(a, &ha) : TD_OK;
    if (st == TD_OK)
        st = host_floats(g, &hg);
    if (st == TD_OK)
        st = host_zeros(shape->numel, &hr, size, &pre);
    if (st == TD_OK) {
        for (int64_t o = 0; o < outer; o++) {
            for (int64_t t = 0; t < inner; t++) {
                const int64_t off = o * size * inner + t;
                const float *gl = reduced ? hg + o * inner + t : hg + off;
                grad_line(kind, ha != NULL ? ha + off : NULL, gl, reduced ? 0 : inner, hr + off, size, inner, pre);
            }
        }
        st = host_upload(g, hr, shape, out);
    }
    free(ha);
    free(hg);
    free(hr);
    free(pre);
    return st;
}

td_status td_ad_prod_grad(const td_tensor *g, const td_tensor *a, td_tensor **out)
{
    return grad_lines(LG_PROD, g, a, &a->shape, -1, true, out);
}

td_status td_ad_prod_dim_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out)
{
    return grad_lines(LG_PROD, g, a, &a->shape, dim, true, out);
}

td_status td_ad_rev_cumsum(const td_tensor *g, int64_t dim, td_tensor **out)
{
    return grad_lines(LG_REV_CUMSUM, g, NULL, &g->shape, dim, false, out);
}

td_status td_ad_cumprod_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out)
{
    return grad_lines(LG_CUMPROD, g, a, &a->shape, dim, false, out);
}

td_status td_ad_cummax_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out)
{
    return grad_lines(LG_CUMMAX, g, a, &a->shape, dim, false, out);
}

td_status td_ad_cummin_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out)
{
    return grad_lines(LG_CUMMIN, g, a, &a->shape, dim, false, out);
}
#endif

/* sort / topk: g (the result's shape, `keep` along dim) goes back to the positions of a that
 * the indices name: out[..., idx[..., k, ...], ...] += g[..., k, ...]. */
#if defined(TD_HAVE_OP_FLOAT_INTO_DATA) && defined(TD_HAVE_OP_FLOAT_FROM_DATA) && defined(TD_HAVE_OP_INT_INTO_DATA)
TD_AD_MAYBE_UNUSED static td_status scatter_back(const td_tensor *g, const td_tensor *idx, const td_shape *shape,
                                                 int64_t dim, td_tensor **out)
{
    int64_t outer, size, inner;
    td_reduce_geometry(shape, dim, &outer, &size, &inner);
    const int64_t keep = g->shape.ndim > 0 ? g->shape.dims[dim] : 1;
    const int64_t n = g->shape.numel;
    float *hg = NULL, *hr = NULL;
    int32_t *hi = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    td_status st = hi != NULL ? TD_OK : td_error(TD_E_NOMEM, "autodiff: out of memory for %lld indices", (long long)n);
    if (st == TD_OK)
        st = td_int_into_data(idx, hi, n);
    if (st == TD_OK)
        st = host_floats(g, &hg);
    if (st == TD_OK)
        st = host_zeros(shape->numel, &hr, 0, NULL);
    for (int64_t o = 0; o < outer && st == TD_OK; o++) {
        for (int64_t k = 0; k < keep && st == TD_OK; k++) {
            for (int64_t t = 0; t < inner; t++) {
                const int64_t src = (o * keep + k) * inner + t;
                const int32_t j = hi[src];
                if (j < 0 || j >= size) {
                    st = td_error(TD_E_INTERNAL, "autodiff: sort index %d out of range [0, %lld)", (int)j,
                                  (long long)size);
                    break;
                }
                hr[(o * size + j) * inner + t] += hg[src];
            }
        }
    }
    if (st == TD_OK)
        st = host_upload(g, hr, shape, out);
    free(hi);
    free(hg);
    free(hr);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ARGSORT) && defined(TD_HAVE_OP_FLOAT_INTO_DATA) && defined(TD_HAVE_OP_FLOAT_FROM_DATA) && defined(TD_HAVE_OP_INT_INTO_DATA)
td_status td_ad_sort_grad(const td_tensor *g, const td_tensor *a, int64_t dim, int64_t descending, td_tensor **out)
{
    td_tensor *idx = NULL;
    td_status st = td_float_argsort(a, dim, (int32_t)(descending != 0), &idx);
    if (st == TD_OK)
        st = scatter_back(g, idx, &a->shape, dim, out);
    td_tensor_release(idx);
    return st;
}
#endif

#if defined(TD_HAVE_OP_FLOAT_ARGTOPK) && defined(TD_HAVE_OP_FLOAT_INTO_DATA) && defined(TD_HAVE_OP_FLOAT_FROM_DATA) && defined(TD_HAVE_OP_INT_INTO_DATA)
td_status td_ad_topk_grad(const td_tensor *g, const td_tensor *a, int64_t count, int64_t dim, td_tensor **out)
{
    td_tensor *idx = NULL;
    td_status st = td_float_argtopk(a, count, dim, &idx);
    if (st == TD_OK)
        st = scatter_back(g, idx, &a->shape, dim, out);
    td_tensor_release(idx);
    return st;
}
#endif

/* spatial module ops (specs/ops/module_spatial.lua) */
#if defined(TD_HAVE_OP_FLOAT_ZEROS)
td_status td_ad_zeros_dim0(const td_tensor *t, td_tensor **out)
{
    const int64_t n = t->shape.ndim > 0 ? t->shape.dims[0] : 1;
    return td_float_zeros_dtype(t->device, t->dtype, &n, 1, out);
}
#endif
