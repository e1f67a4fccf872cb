/* Shape rules named by the op specs' `shape` field; each validates its inputs and
 * computes the result shape. The generated entry calls one before any kernel runs,
 * so kernels trust their arguments. Dim arguments are normalized in place (negative dims
 * count from the end; a 0-d tensor takes 0 and -1); a dims array (permute's perm, slice
 * ranges) comes with a TD_MAX_DIMS array the rule fills with its normalized values, which
 * the entry passes on in its place. Keep in step with M.rules in gen/tdgen/schema.lua. */
#ifndef TD_RULES_H
#define TD_RULES_H

td_status td_rule_same(const char *op, const td_shape *a, td_shape *out);
td_status td_rule_broadcast_slow(const char *op, const td_shape *a, const td_shape *b, td_shape *out);
/* Inline even where the generated dispatch has spent the compiler's inlining budget. */
TD_ALWAYS_INLINE td_status td_rule_broadcast(const char *op, const td_shape *a, const td_shape *b, td_shape *out)
{
    if (a->ndim == b->ndim && a->numel == b->numel) {
        int i = 0;
        while (i < a->ndim && a->dims[i] == b->dims[i])
            i++;
        if (i == a->ndim) {
            *out = *a;
            return TD_OK;
        }
    }
    return td_rule_broadcast_slow(op, a, b, out);
}
td_status td_rule_broadcast3(const char *op, const td_shape *a, const td_shape *b, const td_shape *c,
                             td_shape *out);
td_status td_rule_from_shape(const char *op, const int64_t *shape, int shape_len, td_shape *out);
td_status td_rule_random(const char *op, const int64_t *shape, int shape_len, td_distribution dist, float p0,
                         float p1, td_shape *out);
td_status td_rule_arange(const char *op, int64_t start, int64_t end, int64_t step, td_shape *out);
td_status td_rule_reshape(const char *op, const td_shape *a, const int64_t *shape, int shape_len,
                          td_shape *out);
td_status td_rule_swap_dims(const char *op, const td_shape *a, int64_t *dim0, int64_t *dim1, td_shape *out);
td_status td_rule_permute(const char *op, const td_shape *a, const int64_t *perm, int perm_len, int64_t *perm_out,
                          td_shape *out);
td_status td_rule_expand(const char *op, const td_shape *a, const int64_t *shape, int shape_len,
                         td_shape *out);
td_status td_rule_slice(const char *op, const td_shape *a, const int64_t *starts, int starts_len,
                        int64_t *starts_out, const int64_t *ends, int ends_len, int64_t *ends_out, td_shape *out);
td_status td_rule_slice_assign(const char *op, const td_shape *a, const td_shape *value,
                               const int64_t *starts, int starts_len, int64_t *starts_out, const int64_t *ends,
                               int ends_len, int64_t *ends_out, td_shape *out);
td_status td_rule_cat(const char *op, const td_tensor *const *xs, int xs_len, int64_t *dim, td_shape *out);
td_status td_rule_reduce_all(const char *op, const td_shape *a, td_shape *out);
td_status td_rule_reduce_dim(const char *op, const td_shape *a, int64_t *dim, td_shape *out);
/* As reduce_all / reduce_dim, for reductions without an identity (max, argmax, ...): an
 * empty input (an empty reduced dim) is an error, as in PyTorch. */
td_status td_rule_reduce_all_nonempty(const char *op, const td_shape *a, td_shape *out);
td_status td_rule_reduce_dim_nonempty(const char *op, const td_shape *a, int64_t *dim, td_shape *out);
td_status td_rule_matmul(const char *op, const td_shape *a, const td_shape *b, td_shape *out);
/* a @ b^T and a^T @ b, the transpose over the last two dims (matmul's backward). */
td_status td_rule_matmul_nt(const char *op, const td_shape *a, const td_shape *b, td_shape *out);
td_status td_rule_matmul_tn(const char *op, const td_shape *a, const td_shape *b, td_shape *out);
td_status td_rule_mask_fill(const char *op, const td_shape *a, const td_shape *mask, td_shape *out);
td_status td_rule_all_gather(const char *op, const td_shape *a, const td_group *group, td_shape *out);
td_status td_rule_host_out(const char *op, const td_shape *a, int64_t dst_len, td_shape *out);

/* indexing and layout (issue 10): runtime/core/td_rules_index.c */
td_status td_rule_gather(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices, td_shape *out);
td_status td_rule_scatter(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices,
                          const td_shape *value, td_shape *out);
td_status td_rule_select(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices, td_shape *out);
td_status td_rule_select_add(const char *op, const td_shape *a, int64_t *dim, const td_shape *indices,
                             const td_shape *value, td_shape *out);
td_status td_rule_flip(const char *op, const td_shape *a, const int64_t *dims, int dims_len, td_shape *out);
td_status td_rule_repeat_dim(const char *op, const td_shape *a, int64_t *dim, int64_t times, td_shape *out);
td_status td_rule_transpose(const char *op, const td_shape *a, td_shape *out);
td_status td_rule_narrow(const char *op, const td_shape *a, int64_t *dim, int64_t start, int64_t length,
                         td_shape *out);
td_status td_rule_stack(const char *op, const td_tensor *const *xs, int xs_len, int64_t *dim, td_shape *out);
td_status td_rule_unfold(const char *op, const td_shape *a, int64_t *dim, int64_t size, int64_t step,
                         td_shape *out);
td_status td_rule_pad(const char *op, const td_shape *a, const int64_t *pads, int pads_len, td_shape *out);
td_status td_rule_tri_mask(const char *op, const int64_t *shape, int shape_len, td_shape *out);
td_status td_rule_cross(const char *op, const td_shape *a, const td_shape *b, int64_t *dim, td_shape *out);
td_status td_rule_one_hot(const char *op, const td_shape *indices, int64_t num_classes, td_shape *out);
/* Rules that read data (schema.lua's data_rules get the tensors, not their shapes):
 * argwhere [n, ndim] and mask_select [n], n the count of true elements (broadcast mask). */
td_status td_rule_argwhere(const char *op, const td_tensor *a, td_shape *out);
td_status td_rule_mask_select(const char *op, const td_tensor *a, const td_tensor *mask, td_shape *out);
/* Index values (an op's index_range in its spec): every value of the int tensor `what`
 * lies in [0, bound), else TD_E_RANGE naming the value, where it is and either the dim of
 * that size (bound_name NULL) or the argument bound_name that gave the bound. Reads the data on any
 * backend (autodiff too), so the generated entries check before any backend runs. */
td_status td_check_index_range(const char *op, const char *what, const td_tensor *indices, int64_t bound,
                               int64_t dim, const char *bound_name);
/* activations (specs/ops/activation.lua; runtime/core/td_rules_act.c) */
/* logits [N, C], targets [N] -> a 0-dim result. */
td_status td_rule_cross_entropy(const char *op, const td_shape *logits, const td_shape *targets, td_shape *out);
/* ---- reduce / cumulative / sort group (runtime/core/td_rules_reduce.c) ---- */
/* Ops along one dim that keep the shape (cumsum, sort, softmax, ...); a 0-d tensor takes dim 0 or -1. */
td_status td_rule_along_dim(const char *op, const td_shape *a, int64_t *dim, td_shape *out);
/* topk: the shape of a with dim resized to count (0 <= count <= size of dim). */
td_status td_rule_topk(const char *op, const td_shape *a, int64_t k, int64_t *dim, td_shape *out);
/* int ops (issue 10; td_rules_int.c) */
td_status td_rule_random_int(const char *op, const int64_t *shape, int shape_len, int32_t low, int32_t high,
                             td_shape *out);
/* module: conv, pool, linear (td_rules_module.c) */
td_status td_rule_conv2d(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                         const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                         const int64_t *dilation, int dilation_len, int64_t groups, td_shape *out);
td_status td_rule_conv2d_backward_input(const char *op, const td_shape *grad, const td_shape *weight,
                                        const td_shape *x, const int64_t *stride, int stride_len,
                                        const int64_t *padding, int padding_len, const int64_t *dilation,
                                        int dilation_len, int64_t groups, td_shape *out);
td_status td_rule_conv2d_backward_weight(const char *op, const td_shape *grad, const td_shape *x,
                                         const td_shape *weight, const int64_t *stride, int stride_len,
                                         const int64_t *padding, int padding_len, const int64_t *dilation,
                                         int dilation_len, int64_t groups, td_shape *out);
td_status td_rule_max_pool2d(const char *op, const td_shape *x, const int64_t *kernel, int kernel_len,
                             const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                             const int64_t *dilation, int dilation_len, td_shape *out);
td_status td_rule_max_pool2d_backward(const char *op, const td_shape *x, const td_shape *grad, const int64_t *kernel,
                                      int kernel_len, const int64_t *stride, int stride_len, const int64_t *padding,
                                      int padding_len, const int64_t *dilation, int dilation_len, td_shape *out);
td_status td_rule_avg_pool2d(const char *op, const td_shape *x, const int64_t *kernel, int kernel_len,
                             const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                             int64_t count_include_pad, td_shape *out);
td_status td_rule_avg_pool2d_backward(const char *op, const td_shape *x, const td_shape *grad, const int64_t *kernel,
                                      int kernel_len, const int64_t *stride, int stride_len, const int64_t *padding,
                                      int padding_len, int64_t count_include_pad, td_shape *out);
td_status td_rule_linear(const char *op, const td_shape *x, const td_shape *w, const td_shape *b, td_shape *out);
/* nn module composites: norms, embedding, attention (specs/ops/module_nn.lua; td_rules_nn.c) */
/* x [..., *S] with weight and bias [*S] (S at least 1 dim) -> x's shape. */
td_status td_rule_layer_norm(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                             td_shape *out);
td_status td_rule_layer_norm_backward(const char *op, const td_shape *grad, const td_shape *x, const td_shape *weight,
                                      td_shape *out);
td_status td_rule_layer_norm_backward_weight(const char *op, const td_shape *grad, const td_shape *x,
                                             const td_shape *weight, td_shape *out);
/* x [N, C, *], num_groups >= 1 dividing C, weight and bias [C] -> x's shape. */
td_status td_rule_group_norm(const char *op, const td_shape *x, int64_t num_groups, const td_shape *weight,
                             const td_shape *bias, td_shape *out);
/* x [N, C, *] with the four statistics and parameters [C] -> x's shape. */
td_status td_rule_batch_norm_infer(const char *op, const td_shape *x, const td_shape *running_mean,
                                   const td_shape *running_var, const td_shape *weight, const td_shape *bias,
                                   td_shape *out);
/* As batch_norm_infer without statistics; one value per channel is an error (as PyTorch in training). */
td_status td_rule_batch_norm_train(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                                   td_shape *out);
/* weight [V, D], indices of any shape -> [..., D]. */
td_status td_rule_embedding(const char *op, const td_shape *weight, const td_shape *indices, td_shape *out);
/* q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev], causal 0 or 1 -> [B, H, L, Ev]. */
td_status td_rule_attention(const char *op, const td_shape *q, const td_shape *k, const td_shape *v, int64_t causal,
                            td_shape *out);
/* As attention, with a mask that broadcasts to [B, H, L, S]. */
td_status td_rule_attention_masked(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                   const td_shape *mask, int64_t causal, td_shape *out);
/* Attention's backward ops: q, k, v as attention, output and grad both [B, H, L, Ev]; the
 * gradient of q, k or v has that input's shape. */
td_status td_rule_attention_backward_query(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                           const td_shape *output, const td_shape *grad, int64_t causal,
                                           td_shape *out);
td_status td_rule_attention_backward_key(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                         const td_shape *output, const td_shape *grad, int64_t causal, td_shape *out);
td_status td_rule_attention_backward_value(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                           const td_shape *output, const td_shape *grad, int64_t causal,
                                           td_shape *out);
/* The three gradients at once, flattened one after the other: [numel(q) + numel(k) + numel(v)]. */
td_status td_rule_attention_backward(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                     const td_shape *output, const td_shape *grad, int64_t causal, td_shape *out);

/* spatial module ops: 1-d conv and pools, adaptive pools, interpolation, transposed conv
 * (specs/ops/module_spatial.lua; td_rules_spatial.c) */
td_status td_rule_conv1d(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                         int64_t stride, int64_t padding, int64_t dilation, int64_t groups, td_shape *out);
td_status td_rule_max_pool1d(const char *op, const td_shape *x, int64_t kernel, int64_t stride, int64_t padding,
                             int64_t dilation, td_shape *out);
td_status td_rule_avg_pool1d(const char *op, const td_shape *x, int64_t kernel, int64_t stride, int64_t padding,
                             int64_t count_include_pad, td_shape *out);
td_status td_rule_adaptive_avg_pool1d(const char *op, const td_shape *x, int64_t size, td_shape *out);
td_status td_rule_adaptive_avg_pool2d(const char *op, const td_shape *x, const int64_t *size, int size_len,
                                      td_shape *out);
td_status td_rule_interpolate2d(const char *op, const td_shape *x, const int64_t *size, int size_len, td_shape *out);
td_status td_rule_interpolate2d_bilinear(const char *op, const td_shape *x, const int64_t *size, int size_len,
                                         int64_t align_corners, td_shape *out);
td_status td_rule_conv_transpose2d(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                                   const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                                   const int64_t *output_padding, int output_padding_len, const int64_t *dilation,
                                   int dilation_len, int64_t groups, td_shape *out);

#endif
