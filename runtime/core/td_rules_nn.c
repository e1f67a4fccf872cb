/* Shape rules of the nn module composites (norms, embedding, attention; specs/ops/module_nn.lua).
 * Every rule checks what the op's decomposition relies on, so that a bad input is TD_E_SHAPE
 * or TD_E_INVALID here with a message naming the arguments, never a failure in a piece. */
#include <stdio.h>
#include <string.h>

#include "td_internal.h"

/* A per-channel parameter: exactly [c]. */
static td_status channel_param(const char *op, const char *what, const td_shape *p, int64_t c)
{
    if (p->ndim != 1 || p->dims[0] != c) {
        char buf[128];
        td_shape_format(p, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: %s must be [%lld] (one per channel, dim 1 of x), got %s", op, what,
                        (long long)c, buf);
    }
    return TD_OK;
}

/* x [N, C, *]: at least 2 dims. */
static td_status channels_first(const char *op, const td_shape *x)
{
    if (x->ndim < 2) {
        char buf[128];
        td_shape_format(x, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: x must have at least 2 dims [N, C, *], got %s", op, buf);
    }
    return TD_OK;
}

td_status td_rule_layer_norm(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                             td_shape *out)
{
    char sx[128], sw[128], sb[128];
    td_shape_format(x, sx, sizeof sx);
    td_shape_format(weight, sw, sizeof sw);
    td_shape_format(bias, sb, sizeof sb);
    if (weight->ndim < 1)
        return td_error(TD_E_SHAPE, "%s: weight gives the normalized shape and needs at least 1 dim, got %s", op, sw);
    bool ok = weight->ndim <= x->ndim;
    for (int i = 0; ok && i < weight->ndim; i++)
        ok = x->dims[x->ndim - weight->ndim + i] == weight->dims[i];
    if (!ok)
        return td_error(TD_E_SHAPE, "%s: the trailing dims of x %s must equal the normalized shape, weight %s", op, sx,
                        sw);
    if (!td_shape_equal(weight, bias))
        return td_error(TD_E_SHAPE, "%s: bias %s must have the shape of weight %s", op, sb, sw);
    *out = *x;
    return TD_OK;
}

/* The backward ops of layer_norm: grad has x's shape, weight is x's trailing dims; the
 * result has x's shape (the input gradient) or weight's (the weight gradient). */
static td_status layer_norm_backward(const char *op, const td_shape *grad, const td_shape *x, const td_shape *weight,
                                     const td_shape *result, td_shape *out)
{
    if (!td_shape_equal(grad, x)) {
        char sg[128], sx[128];
        td_shape_format(grad, sg, sizeof sg);
        td_shape_format(x, sx, sizeof sx);
        return td_error(TD_E_SHAPE, "%s: grad %s must have the shape of x %s", op, sg, sx);
    }
    td_shape ignored;
    TD_TRY(td_rule_layer_norm(op, x, weight, weight, &ignored));
    *out = *result;
    return TD_OK;
}

td_status td_rule_layer_norm_backward(const char *op, const td_shape *grad, const td_shape *x, const td_shape *weight,
                                      td_shape *out)
{
    return layer_norm_backward(op, grad, x, weight, x, out);
}

td_status td_rule_layer_norm_backward_weight(const char *op, const td_shape *grad, const td_shape *x,
                                             const td_shape *weight, td_shape *out)
{
    return layer_norm_backward(op, grad, x, weight, weight, out);
}

td_status td_rule_group_norm(const char *op, const td_shape *x, int64_t num_groups, const td_shape *weight,
                             const td_shape *bias, td_shape *out)
{
    if (num_groups < 1)
        return td_error(TD_E_INVALID, "%s: num_groups is %lld; it must be at least 1", op, (long long)num_groups);
    TD_TRY(channels_first(op, x));
    const int64_t c = x->dims[1];
    if (c % num_groups != 0)
        return td_error(TD_E_SHAPE, "%s: %lld channels do not divide into %lld groups", op, (long long)c,
                        (long long)num_groups);
    TD_TRY(channel_param(op, "weight", weight, c));
    TD_TRY(channel_param(op, "bias", bias, c));
    *out = *x;
    return TD_OK;
}

td_status td_rule_batch_norm_infer(const char *op, const td_shape *x, const td_shape *running_mean,
                                   const td_shape *running_var, const td_shape *weight, const td_shape *bias,
                                   td_shape *out)
{
    TD_TRY(channels_first(op, x));
    const int64_t c = x->dims[1];
    TD_TRY(channel_param(op, "running_mean", running_mean, c));
    TD_TRY(channel_param(op, "running_var", running_var, c));
    TD_TRY(channel_param(op, "weight", weight, c));
    TD_TRY(channel_param(op, "bias", bias, c));
    *out = *x;
    return TD_OK;
}

td_status td_rule_batch_norm_train(const char *op, const td_shape *x, const td_shape *weight, const td_shape *bias,
                                   td_shape *out)
{
    TD_TRY(channels_first(op, x));
    const int64_t c = x->dims[1];
    TD_TRY(channel_param(op, "weight", weight, c));
    TD_TRY(channel_param(op, "bias", bias, c));
    /* PyTorch: "Expected more than 1 value per channel when training". */
    bool one = x->dims[0] == 1; /* N times the spatial size is 1: every dim but 1 is 1 */
    for (int i = 2; one && i < x->ndim; i++)
        one = x->dims[i] == 1;
    if (one) {
        char buf[128];
        td_shape_format(x, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: x %s has 1 value per channel; training statistics need more", op, buf);
    }
    *out = *x;
    return TD_OK;
}

td_status td_rule_embedding(const char *op, const td_shape *weight, const td_shape *indices, td_shape *out)
{
    if (weight->ndim != 2) {
        char buf[128];
        td_shape_format(weight, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: weight must be 2-D [V, D], got %s", op, buf);
    }
    if (indices->ndim + 1 > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: indices have %d dims; the result would have more than %d", op, indices->ndim,
                        TD_MAX_DIMS);
    int64_t dims[TD_MAX_DIMS];
    memcpy(dims, indices->dims, sizeof(int64_t) * (size_t)indices->ndim);
    dims[indices->ndim] = weight->dims[1];
    return td_shape_from(op, dims, indices->ndim + 1, out);
}

/* q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev]; causal 0 or 1. */
static td_status attention_geometry(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                    int64_t causal)
{
    char sq[128], sk[128], sv[128];
    td_shape_format(q, sq, sizeof sq);
    td_shape_format(k, sk, sizeof sk);
    td_shape_format(v, sv, sizeof sv);
    if (causal != 0 && causal != 1)
        return td_error(TD_E_INVALID, "%s: causal is %lld; it must be 0 or 1", op, (long long)causal);
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        return td_error(TD_E_SHAPE, "%s: q, k and v must be 4-D [batch, heads, seq, dim], got %s, %s and %s", op, sq,
                        sk, sv);
    if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || k->dims[1] != q->dims[1] ||
        v->dims[1] != q->dims[1] || k->dims[3] != q->dims[3] || v->dims[2] != k->dims[2])
        return td_error(TD_E_SHAPE,
                        "%s: q %s, k %s and v %s do not fit q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev]", op, sq,
                        sk, sv);
    return TD_OK;
}

static td_status attention_out(const char *op, const td_shape *q, const td_shape *v, td_shape *out)
{
    const int64_t dims[4] = { q->dims[0], q->dims[1], q->dims[2], v->dims[3] };
    return td_shape_from(op, dims, 4, out);
}

td_status td_rule_attention(const char *op, const td_shape *q, const td_shape *k, const td_shape *v, int64_t causal,
                            td_shape *out)
{
    TD_TRY(attention_geometry(op, q, k, v, causal));
    return attention_out(op, q, v, out);
}

td_status td_rule_attention_masked(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                   const td_shape *mask, int64_t causal, td_shape *out)
{
    TD_TRY(attention_geometry(op, q, k, v, causal));
    /* The scores are [B, H, L, S]; the mask broadcasts to them without growing them. */
    const int64_t scores[4] = { q->dims[0], q->dims[1], q->dims[2], k->dims[2] };
    bool ok = mask->ndim <= 4;
    for (int i = 0; ok && i < mask->ndim; i++) {
        const int64_t m = mask->dims[mask->ndim - 1 - i], s = scores[3 - i];
        ok = m == 1 || m == s;
    }
    if (!ok) {
        char sm[128];
        td_shape_format(mask, sm, sizeof sm);
        return td_error(TD_E_SHAPE, "%s: mask %s does not broadcast to the scores [%lld, %lld, %lld, %lld]", op, sm,
                        (long long)scores[0], (long long)scores[1], (long long)scores[2], (long long)scores[3]);
    }
    return attention_out(op, q, v, out);
}

/* output and grad must both be the forward's result shape [B, H, L, Ev]. */
static td_status attention_backward(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                    const td_shape *output, const td_shape *grad, int64_t causal,
                                    const td_shape *result, td_shape *out)
{
    TD_TRY(attention_geometry(op, q, k, v, causal));
    const td_shape *pair[2] = { output, grad };
    const char *names[2] = { "output", "grad" };
    for (int t = 0; t < 2; t++) {
        const td_shape *s = pair[t];
        if (s->ndim != 4 || s->dims[0] != q->dims[0] || s->dims[1] != q->dims[1] || s->dims[2] != q->dims[2] ||
            s->dims[3] != v->dims[3]) {
            char ss[128];
            td_shape_format(s, ss, sizeof ss);
            return td_error(TD_E_SHAPE, "%s: %s %s is not the attention's result shape [%lld, %lld, %lld, %lld]", op,
                            names[t], ss, (long long)q->dims[0], (long long)q->dims[1], (long long)q->dims[2],
                            (long long)v->dims[3]);
        }
    }
    return td_shape_from(op, result->dims, result->ndim, out);
}

td_status td_rule_attention_backward_query(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                           const td_shape *output, const td_shape *grad, int64_t causal,
                                           td_shape *out)
{
    return attention_backward(op, q, k, v, output, grad, causal, q, out);
}

td_status td_rule_attention_backward_key(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                         const td_shape *output, const td_shape *grad, int64_t causal, td_shape *out)
{
    return attention_backward(op, q, k, v, output, grad, causal, k, out);
}

td_status td_rule_attention_backward_value(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                           const td_shape *output, const td_shape *grad, int64_t causal,
                                           td_shape *out)
{
    return attention_backward(op, q, k, v, output, grad, causal, v, out);
}

/* float_attention_backward: the three gradients flattened one after the other, a 1-D
 * [numel(q) + numel(k) + numel(v)] (each is its input's shape). */
td_status td_rule_attention_backward(const char *op, const td_shape *q, const td_shape *k, const td_shape *v,
                                     const td_shape *output, const td_shape *grad, int64_t causal, td_shape *out)
{
    TD_TRY(attention_backward(op, q, k, v, output, grad, causal, q, out));
    int64_t n = 0;
    if (!td_add_ok(q->numel, k->numel, &n) || !td_add_ok(n, v->numel, &n))
        return td_error(TD_E_SHAPE, "%s: the three gradients hold more than 2^63 elements", op);
    return td_shape_from(op, &n, 1, out);
}
