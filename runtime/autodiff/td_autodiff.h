/* The autodiff engine's internal interface: tape nodes, recording and helpers that the
 * generated autodiff arms and backward functions call. */
#ifndef TD_AUTODIFF_H
#define TD_AUTODIFF_H

#include "../core/td_internal.h"

typedef struct td_ad_node td_ad_node;

/* Computes the gradient of each input i whose parents[i] is not NULL into grads[i]
 * (new references, in the op's result shape broadcast as the op broadcast; the engine
 * reduces them to the input's shape). vals are the saved tensors (materialized), res the
 * op's result when the formulas use it. */
typedef td_status (*td_ad_backward_fn)(const td_ad_node *n, const td_tensor *grad, const td_tensor *const *vals,
                                       const td_tensor *res, td_tensor **grads);
/* Runs the op again on the saved tensors: how BALANCED recomputes a result it did not keep. */
typedef td_status (*td_ad_forward_fn)(const td_ad_node *n, const td_tensor *const *vals, td_tensor **out);

#define TD_AD_MAX_SAVED 4
#define TD_AD_MAX_ATTRS 4
#define TD_AD_MAX_ARRAYS 4 /* dims/shape attributes: conv2d has stride, padding, dilation */

struct td_ad_node {
    atomic_long rc;
    uint64_t id;               /* 1 + the largest id of its parents (1 for leaves): a topological
                                * order that needs no counter shared by every thread */
    const char *op;
    td_ad_backward_fn backward; /* NULL for leaves and for released nodes */
    td_ad_forward_fn forward;   /* NULL when the op cannot be re-run (lists, moves) */
    td_checkpoint strategy;
    bool memory_bound;
    bool uses_result;
    bool leaf;
    bool keeps_devices;        /* in_devices is filled (backward moves gradients back) */
    int ninputs;
    td_ad_node **parents;      /* [ninputs], owned; NULL where the input is not tracked */
    td_shape *in_shapes;       /* [ninputs] */
    td_device **in_devices;    /* [ninputs], owned; only when keeps_devices */
    /* Saved tensor slot k holds a tensor (saved[k]) or, under BALANCED, the node that
     * produced it (saved_nodes[k]), whose output is kept or recomputed in backward. */
    td_tensor *saved[TD_AD_MAX_SAVED];
    td_ad_node *saved_nodes[TD_AD_MAX_SAVED];
    td_tensor *output;         /* kept result: checkpoints, leaves, results the formulas use */
    float fattrs[TD_AD_MAX_ATTRS];
    int64_t iattrs[TD_AD_MAX_ATTRS];
    int arr_lens[TD_AD_MAX_ARRAYS];
    td_group *group;           /* collectives: the process group (owned reference) */
    uint64_t visit;            /* backward pass that last reached this node */
    td_tensor *grad;           /* accumulated during backward */
    /* Last, and not cleared by td_ad_node_new (most ops have none): only the first
     * arr_lens[k] entries of arrs[k] are ever written or read. */
    int64_t arrs[TD_AD_MAX_ARRAYS][TD_MAX_DIMS];
};

/* Drops one reference to a tape node; NULL is ignored. */
void td_ad_node_release(td_ad_node *node);
/* td_cast_record_hook (td_internal.h): a float cast of a tracked tensor, on the tape. */
td_status td_ad_cast_record(const char *op, const td_tensor *t, td_dtype dtype, td_tensor **out);
/* Autocast (docs/dtypes.md section 9), called by the generated entries when an autodiff
 * tensor's device has autocast on. policy: TD_AUTOCAST_LOW, _F32 or _KEEP (the op spec's
 * `autocast`). ins are the op's float tensor arguments (NULL for an absent optional one);
 * casts[i] gets a new reference to ins[i] cast as the policy wants (recorded on the
 * tape), or to ins[i] itself. *any tells whether anything was cast: if not, the caller
 * runs the op as usual (casts[] then holds nothing). */
enum { TD_AUTOCAST_KEEP, TD_AUTOCAST_LOW, TD_AUTOCAST_F32 };
td_status td_ad_autocast(const char *op, int policy, const td_tensor *const *ins, int n, td_tensor **casts,
                         bool *any);
/* Releases the n tensors of casts (NULL ignored). */
void td_ad_autocast_release(td_tensor **casts, int n);
/* Whether t is on an autodiff device with autocast on: the generated entries' test, one
 * load more for an autodiff tensor, nothing for another. */
TD_ALWAYS_INLINE bool td_ad_autocast_on(const td_tensor *t)
{
    return t->kind == TD_BACKEND_AUTODIFF &&
           atomic_load_explicit(&((td_device *)t->device)->autocast, memory_order_relaxed) != TD_F32;
}

/* Nodes of up to TD_AD_POOL_INPUTS inputs share one block size, reused through the
 * calling thread's block cache (runtime/core/td_block_cache.c) instead of a malloc/free
 * pair per recorded op; the tail after the struct holds parents, in_shapes and in_devices
 * for at least that many inputs. */
#define TD_AD_POOL_INPUTS 4
#define TD_AD_POOL_CAP 256
static inline size_t td_ad_node_bytes(int ninputs)
{
    const size_t n = (size_t)(ninputs < TD_AD_POOL_INPUTS ? TD_AD_POOL_INPUTS : ninputs);
    return sizeof(td_ad_node) + n * (sizeof(td_ad_node *) + sizeof(td_shape) + sizeof(td_device *));
}

/* Fills a new node. Cleared: what release and backward read whatever the op. Left as they
 * come: the attributes and arrays (the generated arm writes every one its formulas read),
 * parents (td_ad_node_input sets each of the ninputs), in_devices (only read when
 * keeps_devices, and then each is set by td_ad_node_input). Field by field: a memset of
 * the struct compiles to rep stos, slower at this size than the stores. */
TD_ALWAYS_INLINE void td_ad_node_init(td_ad_node *node, const char *op, int ninputs, td_ad_backward_fn backward,
                                      td_ad_forward_fn forward, td_checkpoint strategy, bool memory_bound,
                                      bool uses_result, bool keeps_devices)
{
    const size_t n = (size_t)(ninputs < TD_AD_POOL_INPUTS ? TD_AD_POOL_INPUTS : ninputs);
    if (atomic_load_explicit(&td_node_release_hook, memory_order_relaxed) != td_ad_node_release) {
        atomic_store_explicit(&td_cast_record_hook, td_ad_cast_record, memory_order_relaxed);
        atomic_store_explicit(&td_node_release_hook, td_ad_node_release, memory_order_relaxed);
    }
    atomic_init(&node->rc, 1);
    for (int k = 0; k < TD_AD_MAX_SAVED; k++) {
        node->saved[k] = NULL;
        node->saved_nodes[k] = NULL;
    }
    node->output = NULL;
    node->group = NULL;
    node->visit = 0;
    node->grad = NULL;
    node->id = 1; /* raised above each parent's by td_ad_node_input */
    node->op = op;
    node->backward = backward;
    node->forward = forward;
    node->strategy = strategy;
    node->memory_bound = memory_bound;
    node->uses_result = uses_result;
    node->keeps_devices = keeps_devices;
    node->leaf = backward == NULL;
    node->ninputs = ninputs;
    char *tail = (char *)(node + 1);
    node->parents = (td_ad_node **)(void *)tail;
    node->in_shapes = (td_shape *)(void *)(tail + n * sizeof(td_ad_node *));
    node->in_devices = (td_device **)(void *)(tail + n * (sizeof(td_ad_node *) + sizeof(td_shape)));
}

/* td_ad_node_new for more than TD_AD_POOL_INPUTS inputs (cat, stack of many): malloc'd. */
td_ad_node *td_ad_node_new_large(const char *op, int ninputs, td_ad_backward_fn backward, td_ad_forward_fn forward,
                                 td_checkpoint strategy, bool memory_bound, bool uses_result, bool keeps_devices);

/* A node for op with ninputs inputs; NULL on allocation failure. Inline: every recorded op
 * makes one, and the generated arm's constant arguments fold into the stores. */
TD_ALWAYS_INLINE td_ad_node *td_ad_node_new(const char *op, int ninputs, td_ad_backward_fn backward,
                                            td_ad_forward_fn forward, td_checkpoint strategy, bool memory_bound,
                                            bool uses_result, bool keeps_devices)
{
    if (ninputs > TD_AD_POOL_INPUTS)
        return td_ad_node_new_large(op, ninputs, backward, forward, strategy, memory_bound, uses_result,
                                    keeps_devices);
    td_ad_node *node = td_cache_take(TD_CACHE_AD_NODE, td_ad_node_bytes(TD_AD_POOL_INPUTS));
    if (node != NULL)
        td_ad_node_init(node, op, ninputs, backward, forward, strategy, memory_bound, uses_result, keeps_devices);
    return node;
}
/* Whether any of the n tensors is tracked (an autodiff float with a node). Inline, like
 * the other small steps of recording an op: each is on the path of every recorded op. */
TD_ALWAYS_INLINE bool td_ad_any_tracked(const td_tensor *const *ts, int n)
{
    for (int i = 0; i < n; i++)
        if (ts[i]->kind == TD_BACKEND_AUTODIFF && ts[i]->node != NULL)
            return true;
    return false;
}
/* Sets input i of node n from the autodiff tensor t (its node, shape, device). Inline:
 * every recorded op calls it once per input. */
TD_ALWAYS_INLINE void td_ad_node_input(td_ad_node *n, int i, const td_tensor *t)
{
    td_ad_node *p = t->node;
    n->parents[i] = p;
    if (p != NULL) {
        atomic_fetch_add(&p->rc, 1);
        if (p->id >= n->id)
            n->id = p->id + 1;
    }
    td_shape_copy(&n->in_shapes[i], &t->shape);
    if (n->keeps_devices) {
        n->in_devices[i] = t->kind == TD_BACKEND_AUTODIFF ? t->inner->device : t->device;
        td_device_retain(n->in_devices[i]);
    }
}
/* Whether the node must save every input to re-run its op (BALANCED, memory-bound). */
TD_ALWAYS_INLINE bool td_ad_node_recomputes(const td_ad_node *n)
{
    return n->strategy == TD_CHECKPOINT_BALANCED && n->memory_bound && n->forward != NULL;
}
/* Saves the autodiff tensor t in slot: under BALANCED as its node when that node can
 * give the value back and is not a leaf (td_tensor_assign changes a leaf's value), else
 * its inner tensor: the value at record time. */
void td_ad_node_save(td_ad_node *n, int slot, const td_tensor *t);
/* Keeps a reference to the process group of a collective. */
void td_ad_node_set_group(td_ad_node *n, td_group *group);
/* Keeps the op's inner result when the strategy wants it kept. */
TD_ALWAYS_INLINE void td_ad_node_keep_result(td_ad_node *n, td_tensor *inner_result)
{
    const bool keep = n->strategy == TD_CHECKPOINT_BALANCED ? !td_ad_node_recomputes(n) : n->uses_result;
    if (keep) {
        td_tensor_retain(inner_result);
        n->output = inner_result;
    }
}

/* Helpers named by the derivative formulas (gen/tdgen/schema.lua, M.helpers). */
td_status td_ad_positive(const td_tensor *x, td_tensor **out);
td_status td_ad_sign(const td_tensor *x, td_tensor **out);
td_status td_ad_ge(const td_tensor *x, const td_tensor *y, td_tensor **out);
td_status td_ad_gt(const td_tensor *x, const td_tensor *y, td_tensor **out);
td_status td_ad_inside(const td_tensor *x, float lo, float hi, td_tensor **out);
td_status td_ad_gelu_grad(const td_tensor *x, td_tensor **out);
td_status td_ad_zero_where_le(const td_tensor *t, const td_tensor *x, float v, td_tensor **out);
td_status td_ad_zero_where_eq(const td_tensor *t, const td_tensor *x, float v, td_tensor **out);
td_status td_ad_zero_where_zero_base(const td_tensor *t, const td_tensor *a, const td_tensor *b, td_tensor **out);
td_status td_ad_zeros_if_zero(const td_tensor *t, float s, td_tensor **out);
td_status td_ad_zeros_as(const td_tensor *like_device, const td_shape *shape, td_tensor **out);
td_status td_ad_mean_grad(const td_tensor *g, const td_shape *shape, int64_t dim, td_tensor **out);
td_status td_ad_expand_as(const td_tensor *g, const td_shape *shape, td_tensor **out);
td_status td_ad_reshape_as(const td_tensor *g, const td_shape *shape, td_tensor **out);
td_status td_ad_inverse_permute(const td_tensor *g, const int64_t *perm, int perm_len, td_tensor **out);
td_status td_ad_slice_grad(const td_tensor *g, const td_shape *shape, const int64_t *starts, int starts_len,
                           const int64_t *ends, int ends_len, td_tensor **out);
td_status td_ad_extreme_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, td_tensor **out);
td_status td_ad_cat_slice(const td_ad_node *n, int i, const td_tensor *g, int64_t dim, td_tensor **out);
td_status td_ad_unpacked(const td_ad_node *n, int i, const td_tensor *all, td_tensor **out);
td_status td_ad_all_reduce_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, td_group *group,
                                td_reduce_op op, td_tensor **out);
td_status td_ad_broadcast_grad(const td_tensor *g, td_group *group, int64_t root, td_tensor **out);
td_status td_ad_all_gather_grad(const td_tensor *g, td_group *group, td_tensor **out);
td_status td_ad_to_input_device(const td_ad_node *n, int i, const td_tensor *g, td_tensor **out);
/* matmul's 1-d operands (torch.matmul): runtime/autodiff/td_ad_helpers.c */
td_status td_ad_matmul_grad_a(const td_tensor *g, const td_tensor *a, const td_tensor *b, td_tensor **out);
td_status td_ad_matmul_grad_b(const td_tensor *g, const td_tensor *a, const td_tensor *b, td_tensor **out);
/* conv_transpose2d's x and weight gradients (any output_padding): runtime/autodiff/td_ad_helpers.c */
td_status td_ad_conv_transpose2d_grad_x(const td_tensor *g, const td_tensor *x, const td_tensor *weight,
                                        const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                                        const int64_t *output_padding, int output_padding_len,
                                        const int64_t *dilation, int dilation_len, int64_t groups, td_tensor **out);
td_status td_ad_conv_transpose2d_grad_weight(const td_tensor *g, const td_tensor *x, const td_tensor *weight,
                                             const int64_t *stride, int stride_len, const int64_t *padding,
                                             int padding_len, const int64_t *output_padding, int output_padding_len,
                                             const int64_t *dilation, int dilation_len, int64_t groups,
                                             td_tensor **out);
/* indexing and layout (issue 10): runtime/autodiff/td_ad_helpers.c */
td_status td_ad_gather_grad(const td_tensor *g, const td_shape *shape, int64_t dim, const td_tensor *indices,
                            td_tensor **out);
td_status td_ad_scatter_value_grad(const td_tensor *g, const td_shape *shape, int64_t dim, const td_tensor *indices,
                                   td_tensor **out);
td_status td_ad_select_grad(const td_tensor *g, const td_shape *shape, int64_t dim, const td_tensor *indices,
                            td_tensor **out);
td_status td_ad_repeat_dim_grad(const td_tensor *g, const td_shape *shape, int64_t dim, int64_t times,
                                td_tensor **out);
td_status td_ad_narrow_grad(const td_tensor *g, const td_shape *shape, int64_t dim, int64_t start, td_tensor **out);
td_status td_ad_stack_slice(const td_ad_node *n, int i, const td_tensor *g, int64_t dim, td_tensor **out);
td_status td_ad_unfold_grad(const td_tensor *g, const td_shape *shape, int64_t dim, int64_t size, int64_t step,
                            td_tensor **out);
td_status td_ad_scatter_assign_grad(const td_tensor *g, int64_t dim, const td_tensor *indices, td_tensor **out);
td_status td_ad_pad_grad(const td_tensor *g, const td_shape *shape, const int64_t *pads, int pads_len,
                         td_tensor **out);
/* activations (specs/ops/activation.lua) */
td_status td_ad_cross_entropy_grad(const td_tensor *g, const td_tensor *logits, const td_tensor *targets,
                                   td_tensor **out);
/* float math (issue 10) */
td_status td_ad_at_least(const td_tensor *x, float s, td_tensor **out);
td_status td_ad_at_most(const td_tensor *x, float s, td_tensor **out);
td_status td_ad_powi_grad(const td_tensor *a, const td_tensor *b, td_tensor **out);
td_status td_ad_powi_scalar_grad(const td_tensor *a, int64_t n, td_tensor **out);

/* reduce / cumulative / sort group (specs/ops/reduce_sort.lua) */
td_status td_ad_mean_all_grad(const td_tensor *g, const td_shape *shape, td_tensor **out);
td_status td_ad_even_grad(const td_tensor *g, const td_tensor *a, const td_tensor *result, td_tensor **out);
td_status td_ad_even_grad_dim(const td_tensor *g, const td_tensor *a, const td_tensor *result, int64_t dim,
                              td_tensor **out);
td_status td_ad_argmax_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out);
td_status td_ad_argmin_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out);
td_status td_ad_prod_grad(const td_tensor *g, const td_tensor *a, td_tensor **out);
td_status td_ad_prod_dim_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out);
td_status td_ad_rev_cumsum(const td_tensor *g, int64_t dim, td_tensor **out);
td_status td_ad_cumprod_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out);
td_status td_ad_cummax_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out);
td_status td_ad_cummin_grad(const td_tensor *g, const td_tensor *a, int64_t dim, td_tensor **out);
td_status td_ad_sort_grad(const td_tensor *g, const td_tensor *a, int64_t dim, int64_t descending, td_tensor **out);
td_status td_ad_topk_grad(const td_tensor *g, const td_tensor *a, int64_t count, int64_t dim, td_tensor **out);

/* spatial module ops (specs/ops/module_spatial.lua) */
td_status td_ad_zeros_dim0(const td_tensor *t, td_tensor **out);

#endif
