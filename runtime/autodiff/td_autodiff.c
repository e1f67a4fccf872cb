/* The autodiff engine: tape nodes, backward over the recorded graph, gradient sets. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "td_autodiff.h"
#include "td_ops.h"

static atomic_ullong next_visit = 1;

/* Nodes of up to TD_AD_POOL_INPUTS inputs come from the calling thread's block cache
 * (td_autodiff.h: td_ad_node_new, inline); larger ones from malloc. */
static void node_free(td_ad_node *n)
{
    if (n->ninputs > TD_AD_POOL_INPUTS)
        td_free(n);
    else
        td_cache_give(TD_CACHE_AD_NODE, n, td_ad_node_bytes(TD_AD_POOL_INPUTS), TD_AD_POOL_CAP);
}

td_ad_node *td_ad_node_new_large(const char *op, int ninputs, td_ad_backward_fn backward, td_ad_forward_fn forward,
                                 td_checkpoint strategy, bool memory_bound, bool uses_result, bool keeps_devices)
{
    td_ad_node *node = td_malloc(td_ad_node_bytes(ninputs));
    if (node != NULL)
        td_ad_node_init(node, op, ninputs, backward, forward, strategy, memory_bound, uses_result, keeps_devices);
    return node;
}

/* Whether a node can give its value back in backward (kept, or re-run from its inputs). */
static bool can_materialize(const td_ad_node *n)
{
    return n->output != NULL || td_ad_node_recomputes(n);
}

void td_ad_node_save(td_ad_node *n, int slot, const td_tensor *t)
{
    /* A leaf is saved as its value, never as its node: td_tensor_assign (and the optimizers
     * through it) gives a leaf's node a new value, and a graph recorded before must keep
     * computing with the one the leaf had then. The node of any other tensor never changes
     * value (only leaves are assigned, and nothing writes into a tensor's storage). */
    if (n->strategy == TD_CHECKPOINT_BALANCED && t->node != NULL && !t->node->leaf && can_materialize(t->node)) {
        atomic_fetch_add(&t->node->rc, 1);
        n->saved_nodes[slot] = t->node;
        return;
    }
    td_tensor *inner = t->kind == TD_BACKEND_AUTODIFF ? t->inner : (td_tensor *)t;
    td_tensor_retain(inner);
    n->saved[slot] = inner;
}

void td_ad_node_set_group(td_ad_node *n, td_group *group)
{
    td_group_retain(group);
    n->group = group;
}

_Static_assert(TD_AD_MAX_SAVED == 4, "release_values tests saved[0..3]");

/* Releases what backward needed: saved tensors, the kept result, the group (the node
 * references are drop_edges_into's). */
TD_ALWAYS_INLINE void release_values(td_ad_node *n)
{
    /* One test for all of them first: most nodes of a tape hold nothing. */
    if (((uintptr_t)n->saved[0] | (uintptr_t)n->saved[1] | (uintptr_t)n->saved[2] | (uintptr_t)n->saved[3] |
         (uintptr_t)n->output | (uintptr_t)n->group) == 0)
        return;
    for (int i = 0; i < TD_AD_MAX_SAVED; i++)
        if (n->saved[i] != NULL)
            td_tensor_release(n->saved[i]);
    if (n->output != NULL)
        td_tensor_release(n->output);
    if (n->group != NULL)
        td_group_release(n->group);
}

static void clear_values(td_ad_node *n)
{
    for (int i = 0; i < TD_AD_MAX_SAVED; i++)
        n->saved[i] = NULL;
    n->output = NULL;
    n->group = NULL;
    n->backward = NULL;
    n->forward = NULL;
}

/* A stack of nodes whose last reference went, still to destroy. */
typedef struct drop_list {
    td_ad_node **items;
    int count, cap;
    td_ad_node *local[32];
} drop_list;

static void drop_ref(drop_list *l, td_ad_node *n);

/* Drops what n holds: its tensors and group are released, its node references dropped
 * (a node whose last reference that was goes onto l, so that releasing a long chain needs
 * no recursion); the fields keep their values, for node_destroy, which frees n next. */
TD_ALWAYS_INLINE void drop_edges_into(td_ad_node *n, drop_list *l)
{
    release_values(n);
    /* One test for the saved nodes first: only BALANCED ever saves one. */
    if (((uintptr_t)n->saved_nodes[0] | (uintptr_t)n->saved_nodes[1] | (uintptr_t)n->saved_nodes[2] |
         (uintptr_t)n->saved_nodes[3]) != 0)
        for (int i = 0; i < TD_AD_MAX_SAVED; i++)
            drop_ref(l, n->saved_nodes[i]);
    for (int i = 0; i < n->ninputs; i++)
        drop_ref(l, n->parents[i]);
}

/* drop_edges_into for a node that stays alive (backward without retain_graph): it is left
 * with no edges and no values. */
static void release_edges_into(td_ad_node *n, drop_list *l)
{
    drop_edges_into(n, l);
    clear_values(n);
    for (int i = 0; i < TD_AD_MAX_SAVED; i++)
        n->saved_nodes[i] = NULL;
    for (int i = 0; i < n->ninputs; i++)
        n->parents[i] = NULL;
}

/* Drops one reference; true when it was the last. A count of 1 read with acquire is the
 * caller's own reference, which no other thread can see to add to or drop: the node is
 * freed without the atomic read-modify-write (the usual case on the tape: one result
 * tensor owns its node). */
static inline bool last_reference(td_ad_node *n)
{
    return atomic_load_explicit(&n->rc, memory_order_acquire) == 1 || atomic_fetch_sub(&n->rc, 1) == 1;
}

/* Frees a node whose last reference went; its node references go onto l. */
TD_ALWAYS_INLINE void node_destroy(td_ad_node *n, drop_list *l)
{
    drop_edges_into(n, l);
    if (n->grad != NULL)
        td_tensor_release(n->grad);
    for (int i = 0; n->keeps_devices && i < n->ninputs; i++)
        td_device_release(n->in_devices[i]);
    node_free(n);
}

static void drop_all(drop_list *l)
{
    while (l->count > 0)
        node_destroy(l->items[--l->count], l);
    if (l->items != l->local)
        free(l->items);
}

/* An empty list. Not an initializer: that would clear local[] on every release. */
#define DROP_LIST_INIT(l) ((l).items = (l).local, (l).count = 0, (l).cap = (int)(sizeof(l).local / sizeof *(l).local))

/* Drops one reference to n (NULL is ignored). The usual case, a node still referenced
 * (a leaf, an activation used twice), ends here; a node whose last reference this was is
 * put on l, to be destroyed by drop_all. */
static void drop_ref(drop_list *l, td_ad_node *n)
{
    if (n == NULL || !last_reference(n))
        return;
    if (l->count == l->cap) {
        int cap = l->cap * 2;
        td_ad_node **grown = l->items == l->local ? malloc(sizeof *grown * (size_t)cap)
                                                  : realloc(l->items, sizeof *grown * (size_t)cap);
        if (grown == NULL) {
            /* No room to defer: destroy this one now, recursing just this once. */
            drop_list now;
            DROP_LIST_INIT(now);
            node_destroy(n, &now);
            drop_all(&now);
            return;
        }
        if (l->items == l->local)
            memcpy(grown, l->local, sizeof l->local);
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->count++] = n;
}

static void release_edges(td_ad_node *n)
{
    drop_list l;
    DROP_LIST_INIT(l);
    release_edges_into(n, &l);
    drop_all(&l);
}

void td_ad_node_release(td_ad_node *node)
{
    if (node == NULL)
        return;
    /* The common case, a reference that is not the last: no list at all. */
    if (!last_reference(node))
        return;
    drop_list l;
    DROP_LIST_INIT(l);
    node_destroy(node, &l);
    drop_all(&l);
}

/* The value of a node's result: kept, or recomputed (and cached until the graph is
 * released) from its saved inputs. A new reference. */
static td_status materialize(const char *op, td_ad_node *n, td_tensor **out);

static td_status materialize_vals(const char *op, const td_ad_node *n, td_tensor *vals[TD_AD_MAX_SAVED])
{
    td_status st = TD_OK;
    for (int k = 0; k < TD_AD_MAX_SAVED; k++) {
        vals[k] = NULL;
        if (st != TD_OK)
            continue;
        if (n->saved[k] != NULL) {
            td_tensor_retain(n->saved[k]);
            vals[k] = n->saved[k];
        } else if (n->saved_nodes[k] != NULL) {
            st = materialize(op, n->saved_nodes[k], &vals[k]);
        }
    }
    if (st != TD_OK) {
        for (int k = 0; k < TD_AD_MAX_SAVED; k++) {
            td_tensor_release(vals[k]);
            vals[k] = NULL; /* the caller releases vals too: nothing twice */
        }
    }
    return st;
}

/* Re-runs the op of one node whose saved nodes all have their values. */
static td_status recompute(const char *op, td_ad_node *n)
{
    if (n->forward == NULL)
        return td_error(TD_E_INTERNAL, "%s: %s neither kept nor can recompute its result", op, n->op);
    td_tensor *vals[TD_AD_MAX_SAVED];
    TD_TRY(materialize_vals(op, n, vals));
    td_status st = n->forward(n, (const td_tensor *const *)vals, &n->output);
    for (int k = 0; k < TD_AD_MAX_SAVED; k++)
        td_tensor_release(vals[k]);
    return st;
}

/* A chain of recomputed (BALANCED, memory-bound) nodes can be as long as the graph: the
 * nodes whose values are missing are walked with an explicit stack, deepest first, so no
 * recursion depth grows with it. */
static td_status materialize(const char *op, td_ad_node *n, td_tensor **out)
{
    if (n->output == NULL) {
        td_ad_node *local[64], **stack = local;
        int top = 0, cap = 64;
        td_status st = TD_OK;
        stack[top++] = n;
        while (top > 0 && st == TD_OK) {
            td_ad_node *x = stack[top - 1];
            if (x->output != NULL) {
                top--;
                continue;
            }
            td_ad_node *missing = NULL;
            for (int k = 0; k < TD_AD_MAX_SAVED && missing == NULL; k++)
                if (x->saved_nodes[k] != NULL && x->saved_nodes[k]->output == NULL)
                    missing = x->saved_nodes[k];
            if (missing == NULL) {
                st = recompute(op, x);
                top--;
                continue;
            }
            if (top == cap) {
                td_ad_node **grown = td_malloc(sizeof *grown * (size_t)cap * 2);
                if (grown == NULL) {
                    st = td_error(TD_E_NOMEM, "%s: out of memory", op);
                    break;
                }
                memcpy(grown, stack, sizeof *grown * (size_t)cap);
                if (stack != local)
                    td_free(stack);
                stack = grown;
                cap *= 2;
            }
            stack[top++] = missing;
        }
        if (stack != local)
            td_free(stack);
        TD_TRY(st);
    }
    td_tensor_retain(n->output);
    *out = n->output;
    return TD_OK;
}

/* ---- public API ---- */

td_status td_is_tracked(const td_tensor *t, bool *out)
{
    if (t == NULL)
        return td_err_null("is_tracked", "t");
    if (out == NULL)
        return td_err_null("is_tracked", "out");
    *out = t->kind == TD_BACKEND_AUTODIFF && t->node != NULL;
    return TD_OK;
}

td_status td_require_grad(td_tensor *t)
{
    if (t == NULL)
        return td_err_null("require_grad", "t");
    if (td_dtype_valid(t->dtype) && td_dtype_rows[t->dtype].quantized)
        return td_error(TD_E_AUTODIFF, "require_grad: a %s tensor is block-quantized and never tracked (no gradient); "
                        "train in f32 and quantize after (td_float_quantize)", td_dtype_name(t->dtype));
    if (t->kind != TD_BACKEND_AUTODIFF || td_dtype_cls(t->dtype) != TD_CLASS_FLOAT)
        return td_error(TD_E_AUTODIFF, "require_grad: only float tensors on an autodiff device take gradients");
    TD_TRY(td_guard("require_grad", t));
    if (t->node != NULL) {
        if (t->node->leaf)
            return TD_OK;
        return td_error(TD_E_AUTODIFF, "require_grad: the tensor is the result of %s, not a leaf", t->node->op);
    }
    td_ad_node *n = td_ad_node_new("leaf", 0, NULL, NULL, TD_CHECKPOINT_NONE, false, false, false);
    if (n == NULL)
        return td_error(TD_E_NOMEM, "require_grad: out of memory");
    td_tensor_retain(t->inner);
    n->output = t->inner;
    t->node = n;
    return TD_OK;
}

td_status td_detach(const td_tensor *t, td_tensor **out)
{
    if (out == NULL)
        return td_err_null("detach", "out");
    *out = NULL;
    if (t == NULL)
        return td_err_null("detach", "t");
    if (t->kind != TD_BACKEND_AUTODIFF)
        return td_error(TD_E_AUTODIFF, "detach: the tensor is not on an autodiff device");
    td_tensor_retain(t->inner);
    return td_tensor_wrap("detach", t->device, t->inner, t->ctx, out);
}

struct td_grads {
    int n;
    td_ad_node **leaves;
    td_tensor **grads;
};

void td_grads_release(td_grads *g)
{
    if (g == NULL)
        return;
    for (int i = 0; i < g->n; i++) {
        td_ad_node_release(g->leaves[i]);
        td_tensor_release(g->grads[i]);
    }
    td_free(g->leaves);
    td_free(g->grads);
    td_free(g);
}

td_status td_grads_get(const td_grads *grads, const td_tensor *t, td_tensor **out)
{
    if (out == NULL)
        return td_err_null("grads_get", "out");
    *out = NULL;
    if (grads == NULL)
        return td_err_null("grads_get", "grads");
    if (t == NULL)
        return td_err_null("grads_get", "t");
    for (int i = 0; i < grads->n; i++) {
        if (t->kind == TD_BACKEND_AUTODIFF && grads->leaves[i] == t->node) {
            td_tensor_retain(grads->grads[i]);
            *out = grads->grads[i];
            return TD_OK;
        }
    }
    return TD_OK;
}

/* Sums g over the dims that were broadcast, so it gets the input's shape. */
static td_status reduce_to(const td_tensor *g, const td_shape *shape, td_tensor **out)
{
    if (td_shape_equal(&g->shape, shape)) {
        td_tensor_retain((td_tensor *)g);
        *out = (td_tensor *)g;
        return TD_OK;
    }
    /* Each run of adjacent broadcast dims becomes one dim of a view of g (row-major dims next
     * to each other merge), so a bias of [D] under a [B, T, D] gradient is one sum over B T
     * rows, not two passes. */
    const int off = g->shape.ndim - shape->ndim;
    int64_t dims[TD_MAX_DIMS];
    bool summed[TD_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < g->shape.ndim; d++) {
        const bool broadcast = d < off || (shape->dims[d - off] == 1 && g->shape.dims[d] != 1);
        if (broadcast && nd > 0 && summed[nd - 1]) {
            dims[nd - 1] *= g->shape.dims[d];
        } else {
            dims[nd] = g->shape.dims[d];
            summed[nd++] = broadcast;
        }
    }
    td_tensor *cur = NULL;
    td_status st0 = td_float_reshape(g, dims, nd, &cur);
    if (st0 != TD_OK)
        return st0;
    for (int d = 0; d < nd; d++) {
        if (!summed[d])
            continue;
        td_tensor *next = NULL;
        td_status st = td_float_sum_dim(cur, d, &next);
        td_tensor_release(cur);
        if (st != TD_OK)
            return st;
        cur = next;
    }
    td_status st = td_float_reshape(cur, shape->dims, shape->ndim, out);
    td_tensor_release(cur);
    return st;
}

static int by_id_desc(const void *x, const void *y)
{
    const td_ad_node *a = *(td_ad_node *const *)x, *b = *(td_ad_node *const *)y;
    return a->id < b->id ? 1 : (a->id > b->id ? -1 : 0);
}

/* Collects the nodes reachable from root that still hold edges. */
static td_status collect(const char *op, td_ad_node *root, td_ad_node ***nodes_out, int *count)
{
    uint64_t visit = atomic_fetch_add(&next_visit, 1);
    int cap = 64, n = 0, top = 0, scap = 64;
    td_ad_node **nodes = td_malloc(sizeof *nodes * (size_t)cap);
    td_ad_node **stack = td_malloc(sizeof *stack * (size_t)scap);
    if (nodes == NULL || stack == NULL) {
        td_free(nodes);
        td_free(stack);
        return td_error(TD_E_NOMEM, "%s: out of memory", op);
    }
    root->visit = visit;
    stack[top++] = root;
    while (top > 0) {
        td_ad_node *x = stack[--top];
        if (n == cap) {
            td_ad_node **grown = realloc(nodes, sizeof *nodes * (size_t)(cap *= 2));
            if (grown == NULL)
                goto nomem;
            nodes = grown;
        }
        /* The walk holds its own reference: releasing edges below may drop the last other one. */
        atomic_fetch_add(&x->rc, 1);
        nodes[n++] = x;
        for (int i = 0; i < x->ninputs; i++) {
            td_ad_node *p = x->parents[i];
            if (p == NULL || p->visit == visit)
                continue;
            p->visit = visit;
            if (top == scap) {
                td_ad_node **grown = realloc(stack, sizeof *stack * (size_t)(scap *= 2));
                if (grown == NULL)
                    goto nomem;
                stack = grown;
            }
            stack[top++] = p;
        }
    }
    td_free(stack);
    qsort(nodes, (size_t)n, sizeof *nodes, by_id_desc);
    *nodes_out = nodes;
    *count = n;
    return TD_OK;
nomem:
    for (int i = 0; i < n; i++)
        td_ad_node_release(nodes[i]);
    td_free(nodes);
    td_free(stack);
    return td_error(TD_E_NOMEM, "%s: out of memory", op);
}

static void release_collected(td_ad_node **nodes, int count)
{
    for (int k = 0; k < count; k++)
        td_ad_node_release(nodes[k]);
    td_free(nodes);
}

static td_status accumulate(td_ad_node *p, td_tensor *g)
{
    if (p->grad == NULL) {
        p->grad = g;
        return TD_OK;
    }
    td_tensor *sum = NULL;
    td_status st = td_float_add(p->grad, g, &sum);
    td_tensor_release(g);
    if (st != TD_OK)
        return st;
    td_tensor_release(p->grad);
    p->grad = sum;
    return TD_OK;
}

/* A node whose graph an earlier backward released: it can no longer give gradients. */
static bool released(const td_ad_node *n)
{
    return !n->leaf && n->backward == NULL;
}

/* An error of backward named after op, the function called: a failing kernel's message
 * ("float_add: out of memory") gets op in front; backward's own already start with it. */
static td_status named(const char *op, td_status st)
{
    const char *m = td_last_error();
    const size_t n = strlen(op);
    if (strncmp(m, op, n) == 0 && m[n] == ':')
        return st;
    return td_error_within(st, op);
}

static td_status run_backward(const char *op, const td_tensor *root, td_tensor *seed, bool retain, td_grads **out)
{
    td_ad_node *rn = root->node;
    if (released(rn)) {
        td_tensor_release(seed);
        return td_error(TD_E_AUTODIFF,
                        "%s: the graph behind this tensor was released by an earlier backward; to go through a "
                        "graph twice, give the first backward retain_graph (td_backward_ex)",
                        op);
    }
    td_ad_node **nodes = NULL;
    int count = 0;
    td_status st = collect(op, rn, &nodes, &count);
    if (st != TD_OK) {
        td_tensor_release(seed);
        return st;
    }
    /* A graph that shares nodes with one already backpropagated (two losses over the same
     * logits): fail before anything changes, so the caller's graph stays as it was. */
    for (int k = 0; k < count; k++) {
        const td_ad_node *n = nodes[k];
        bool gone = released(n);
        for (int s = 0; s < TD_AD_MAX_SAVED && !gone; s++)
            gone = n->saved_nodes[s] != NULL && released(n->saved_nodes[s]);
        if (gone) {
            const char *which = released(n) ? n->op : "an input it saved";
            st = td_error(TD_E_AUTODIFF,
                          "%s: this graph goes through %s, whose part of the graph was released by an earlier "
                          "backward; to go through shared nodes twice, give the first backward retain_graph "
                          "(td_backward_ex)",
                          op, which);
            release_collected(nodes, count);
            td_tensor_release(seed);
            return st;
        }
    }
    td_grads *g = td_calloc(1, sizeof *g);
    int nleaves = 0;
    for (int i = 0; i < count; i++)
        nleaves += nodes[i]->leaf;
    if (g != NULL) {
        g->leaves = td_calloc((size_t)nleaves + 1, sizeof *g->leaves);
        g->grads = td_calloc((size_t)nleaves + 1, sizeof *g->grads);
    }
    if (g == NULL || g->leaves == NULL || g->grads == NULL) {
        td_grads_release(g);
        release_collected(nodes, count);
        td_tensor_release(seed);
        return td_error(TD_E_NOMEM, "%s: out of memory", op);
    }
    rn->grad = seed;
    for (int k = 0; k < count && st == TD_OK; k++) {
        td_ad_node *n = nodes[k];
        if (n->grad == NULL)
            continue;
        if (n->leaf) {
            g->leaves[g->n] = n;
            atomic_fetch_add(&n->rc, 1);
            g->grads[g->n++] = n->grad;
            n->grad = NULL;
            continue;
        }
        td_tensor *grads_small[4] = { NULL }, **grads = grads_small;
        if (n->ninputs > 4 && (grads = td_calloc((size_t)n->ninputs, sizeof *grads)) == NULL) {
            st = td_error(TD_E_NOMEM, "%s: out of memory", op);
            break;
        }
        td_tensor *vals[TD_AD_MAX_SAVED], *res = NULL;
        st = materialize_vals(op, n, vals);
        if (st == TD_OK && n->uses_result)
            st = materialize(op, n, &res);
        if (st == TD_OK) {
            const uint64_t t0 = td_tracing() ? td_trace_now() : 0;
            st = n->backward(n, n->grad, (const td_tensor *const *)vals, res, grads);
            if (t0 != 0) {
                char name[96];
                snprintf(name, sizeof name, "backward %s", n->op);
                td_trace_event(name, "autodiff", t0, td_trace_now(), NULL);
            }
        }
        td_tensor_release(res);
        for (int j = 0; j < TD_AD_MAX_SAVED; j++)
            td_tensor_release(vals[j]);
        for (int i = 0; i < n->ninputs; i++) {
            if (grads[i] == NULL)
                continue;
            td_tensor *r = NULL;
            if (st == TD_OK && n->parents[i] != NULL)
                st = reduce_to(grads[i], &n->in_shapes[i], &r);
            td_tensor_release(grads[i]);
            if (st == TD_OK && r != NULL)
                st = accumulate(n->parents[i], r);
            else
                td_tensor_release(r);
        }
        if (grads != grads_small)
            td_free(grads);
        td_tensor_release(n->grad);
        n->grad = NULL;
    }
    /* Unless retained, the graph is released whether backward succeeded or not. */
    for (int k = 0; k < count; k++) {
        td_tensor_release(nodes[k]->grad);
        nodes[k]->grad = NULL;
        if (!retain && !nodes[k]->leaf)
            release_edges(nodes[k]);
    }
    release_collected(nodes, count);
    if (st != TD_OK) {
        td_grads_release(g);
        return named(op, st);
    }
    *out = g;
    return TD_OK;
}

static td_status check_root(const char *op, const td_tensor *root, td_grads **out)
{
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (root == NULL)
        return td_err_null(op, "loss");
    if (root->kind != TD_BACKEND_AUTODIFF || td_dtype_cls(root->dtype) != TD_CLASS_FLOAT)
        return td_error(TD_E_AUTODIFF, "%s: the loss is not a float tensor on an autodiff device", op);
    TD_TRY(td_guard(op, root));
    if (root->node == NULL)
        return td_error(TD_E_AUTODIFF, "%s: the loss is not tracked: no input required a gradient", op);
    return TD_OK;
}

td_status td_backward_ex(const td_tensor *root, const td_backward_options *options, td_grads **out)
{
    const td_tensor *seed = options != NULL ? options->seed : NULL;
    const bool retain = options != NULL && options->retain_graph;
    const char *op = seed != NULL ? "backward_seeded" : "backward";
    TD_TRY(check_root(op, root, out));
    td_tensor *s = NULL;
    if (seed == NULL) {
        if (root->shape.numel != 1)
            return td_error(TD_E_AUTODIFF,
                            "%s: the loss has %lld elements; backward needs a one-element loss or an explicit "
                            "seed gradient (td_backward_seeded)",
                            op, (long long)root->shape.numel);
        const td_status st =
            td_float_ones_dtype(root->inner->device, root->dtype, root->shape.dims, root->shape.ndim, &s);
        if (st != TD_OK)
            return named(op, st);
    } else {
        const td_tensor *inner = seed->kind == TD_BACKEND_AUTODIFF ? seed->inner : seed;
        if (inner->dtype != root->dtype)
            return td_error(TD_E_DTYPE, "%s: the seed is %s; it must be %s, the dtype of the root", op,
                            td_dtype_name(inner->dtype), td_dtype_name(root->dtype));
        if (!td_shape_equal(&inner->shape, &root->shape)) {
            char ss[128], sr[128];
            td_shape_format(&inner->shape, ss, sizeof ss);
            td_shape_format(&root->shape, sr, sizeof sr);
            return td_error(TD_E_SHAPE, "%s: the seed has shape %s; it must have the root's shape %s", op, ss, sr);
        }
        if (inner->kind != root->inner->kind)
            return td_error(TD_E_BACKEND_MISMATCH, "%s: the seed is on backend %s, the root on %s", op,
                            td_backend_name(inner->kind), td_backend_name(root->inner->kind));
        s = (td_tensor *)inner;
        td_tensor_retain(s);
    }
    return run_backward(op, root, s, retain, out);
}

td_status td_backward(const td_tensor *loss, td_grads **out)
{
    return td_backward_ex(loss, NULL, out);
}

td_status td_backward_seeded(const td_tensor *root, const td_tensor *seed, td_grads **out)
{
    if (out != NULL)
        *out = NULL;
    if (seed == NULL)
        return td_err_null("backward_seeded", "seed");
    const td_backward_options o = { .seed = seed };
    return td_backward_ex(root, &o, out);
}

td_status td_testing_graph_bytes(const td_tensor *t, int64_t *bytes)
{
    *bytes = 0;
    if (t == NULL || t->kind != TD_BACKEND_AUTODIFF || t->node == NULL)
        return TD_OK;
    td_ad_node **nodes = NULL;
    int count = 0;
    TD_TRY(collect("graph_bytes", t->node, &nodes, &count));
    /* Distinct storage only: several nodes may keep the same tensor, or views of one. */
    int cap = count * (TD_AD_MAX_SAVED + 1) + 1, seen_n = 0;
    const td_tensor **seen = td_malloc(sizeof *seen * (size_t)cap);
    if (seen == NULL) {
        release_collected(nodes, count);
        return td_error(TD_E_NOMEM, "graph_bytes: out of memory");
    }
    for (int k = 0; k < count; k++) {
        for (int i = 0; i <= TD_AD_MAX_SAVED; i++) {
            const td_tensor *s = i < TD_AD_MAX_SAVED ? nodes[k]->saved[i] : nodes[k]->output;
            if (s == NULL)
                continue;
            bool dup = false;
            for (int j = 0; j < seen_n && !dup; j++)
                dup = seen[j] == s || (s->data != NULL && seen[j]->data == s->data);
            if (dup)
                continue;
            seen[seen_n++] = s;
            *bytes += s->shape.numel * (int64_t)td_dtype_size(s->dtype);
        }
    }
    td_free(seen);
    release_collected(nodes, count);
    return TD_OK;
}
