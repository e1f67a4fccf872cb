/* Optimizers over public ops on the parameters' inner backend; updates go through
 * td_tensor_assign, so parameters keep their identity and nothing is recorded. */
#include <math.h>

#include "td_autodiff.h"
#include "td_internal.h"
#include "td_ops.h"
#include "td_optim.h"
#ifdef TD_BACKEND_CPU_ENABLED
#include "../cpu/td_cpu_optim.h"
#endif

/* A selective build (TD_OPS) may leave out ops the updates need (TD_HAVE_OP_*, from
 * td_kinds.h): then the optimizer's step says so with TD_E_UNSUPPORTED. */
#if defined(TD_HAVE_OP_FLOAT_MUL_SCALAR) && defined(TD_HAVE_OP_FLOAT_ADD)
#define HAVE_SGD 1
#endif
#if defined(HAVE_SGD) && defined(TD_HAVE_OP_FLOAT_MUL) && defined(TD_HAVE_OP_FLOAT_SQRT) &&                      \
    defined(TD_HAVE_OP_FLOAT_ADD_SCALAR) && defined(TD_HAVE_OP_FLOAT_DIV)
#define HAVE_ADAM 1
#endif

enum { SGD, ADAM };

struct td_optim {
    int kind;
    int n;
    td_tensor **params;
    td_tensor **m;  /* SGD: momentum buffers; Adam: first moments (NULL before the first step) */
    td_tensor **v;  /* Adam: second moments */
    td_tensor **master; /* f16 / bf16 parameters: their f32 master weights (NULL for others) */
    int64_t *steps; /* per parameter (Adam's bias correction) */
    td_sgd_options sgd;
    td_adam_options adam;
};

static bool finite_in(float x, float lo, float hi) { return isfinite(x) && x >= lo && x <= hi; }

static td_status make(int kind, td_tensor *const *params, int n, td_optim **out)
{
    if (out == NULL)
        return td_err_null("optim", "out");
    *out = NULL;
    if (params == NULL && n > 0)
        return td_err_null("optim", "params");
    if (n < 0)
        return td_error(TD_E_INVALID, "optim: %d parameters", n);
    for (int i = 0; i < n; i++) {
        if (params[i] == NULL)
            return td_err_null("optim", "params[i]");
        if (params[i]->kind != TD_BACKEND_AUTODIFF || td_dtype_cls(params[i]->dtype) != TD_CLASS_FLOAT ||
            td_dtype_rows[params[i]->dtype].quantized)
            return td_error(TD_E_INVALID, "optim: params[%d] is not a float tensor on an autodiff device", i);
        /* A step assigns to each parameter: a result of a tracked op is not one (its next
         * value would be recomputed from its inputs), and a parameter given twice would
         * get two updates from one gradient. */
        const td_ad_node *node = params[i]->node;
        if (node != NULL && !node->leaf)
            return td_error(TD_E_INVALID,
                            "optim: params[%d] is the result of %s, not a leaf: give the optimizer the tensors "
                            "you called td_require_grad on",
                            i, node->op != NULL ? node->op : "a tracked op");
        for (int j = 0; j < i; j++)
            if (params[j] == params[i])
                return td_error(TD_E_INVALID, "optim: params[%d] is params[%d] again: give each parameter once", i,
                                j);
    }
    td_optim *o = td_calloc(1, sizeof *o);
    size_t k = (size_t)(n > 0 ? n : 1);
    if (o != NULL) {
        o->params = td_calloc(k, sizeof *o->params);
        o->m = td_calloc(k, sizeof *o->m);
        o->v = td_calloc(k, sizeof *o->v);
        o->master = td_calloc(k, sizeof *o->master);
        o->steps = td_calloc(k, sizeof *o->steps);
    }
    if (o == NULL || o->params == NULL || o->m == NULL || o->v == NULL || o->master == NULL || o->steps == NULL) {
        td_optim_release(o);
        return td_error(TD_E_NOMEM, "optim: out of memory");
    }
    o->kind = kind;
    o->n = n;
    for (int i = 0; i < n; i++) {
        td_tensor_retain(params[i]);
        o->params[i] = params[i];
    }
    /* Low-precision parameters are updated through f32 copies (docs/dtypes.md section 9):
     * an update smaller than half the parameter's ulp, lost in bf16, adds up in f32. */
    for (int i = 0; i < n; i++) {
        const td_dtype d = params[i]->dtype;
        if (d != TD_F16 && d != TD_BF16)
            continue;
        const td_status st = td_float_cast(params[i]->inner, TD_F32, &o->master[i]);
        if (st != TD_OK) {
            td_optim_release(o);
            return st;
        }
    }
    *out = o;
    return TD_OK;
}

td_sgd_options td_sgd_defaults(float lr)
{
    return (td_sgd_options){ .lr = lr };
}

td_adam_options td_adam_defaults(float lr)
{
    return (td_adam_options){ .lr = lr, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f };
}

/* The parameters of a list as an array (td_free it; NULL for an empty list). */
static td_status list_items(const char *op, const td_param_list *list, td_optim **out, td_tensor ***items, int *n)
{
    *items = NULL;
    *n = 0;
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (list == NULL)
        return td_err_null(op, "params");
    TD_TRY(td_param_list_count(list, n));
    if (*n == 0)
        return TD_OK;
    td_tensor **a = td_malloc((size_t)*n * sizeof *a);
    if (a == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory", op);
    for (int i = 0; i < *n; i++) {
        td_status st = td_param_list_get(list, i, &a[i]);
        if (st != TD_OK) {
            td_free(a);
            return st;
        }
    }
    *items = a;
    return TD_OK;
}

td_status td_optim_sgd(td_tensor *const *params, int n, const td_sgd_options *options, td_optim **out)
{
    if (options == NULL) {
        if (out)
            *out = NULL;
        return td_err_null("optim_sgd", "options");
    }
    const td_sgd_options s = *options;
    if (!finite_in(s.lr, 0, INFINITY) || s.lr == 0 || !finite_in(s.momentum, 0, 1) || s.momentum == 1 ||
        !finite_in(s.dampening, 0, 1) || !finite_in(s.weight_decay, 0, INFINITY) ||
        (s.nesterov && (s.momentum == 0 || s.dampening != 0))) {
        if (out)
            *out = NULL;
        return td_error(TD_E_INVALID,
                        "optim_sgd: lr %g, momentum %g, dampening %g, weight_decay %g%s: lr must be > 0, momentum in "
                        "[0, 1), dampening in [0, 1], weight_decay >= 0; Nesterov needs momentum and no dampening",
                        (double)s.lr, (double)s.momentum, (double)s.dampening, (double)s.weight_decay,
                        s.nesterov ? ", nesterov" : "");
    }
    TD_TRY(make(SGD, params, n, out));
    (*out)->sgd = s;
    return TD_OK;
}

td_status td_optim_adam(td_tensor *const *params, int n, const td_adam_options *options, td_optim **out)
{
    if (options == NULL) {
        if (out)
            *out = NULL;
        return td_err_null("optim_adam", "options");
    }
    const td_adam_options a = *options;
    if (!finite_in(a.lr, 0, INFINITY) || a.lr == 0 || !finite_in(a.beta1, 0, 1) || a.beta1 == 1 ||
        !finite_in(a.beta2, 0, 1) || a.beta2 == 1 || !finite_in(a.eps, 0, INFINITY) || a.eps == 0 ||
        !finite_in(a.weight_decay, 0, INFINITY)) {
        if (out)
            *out = NULL;
        return td_error(TD_E_INVALID,
                        "optim_adam: lr %g, betas %g %g, eps %g, weight_decay %g: lr and eps must be > 0, betas in "
                        "[0, 1), weight_decay >= 0 (td_adam_defaults(lr) gives torch.optim.Adam's)",
                        (double)a.lr, (double)a.beta1, (double)a.beta2, (double)a.eps, (double)a.weight_decay);
    }
    TD_TRY(make(ADAM, params, n, out));
    (*out)->adam = a;
    return TD_OK;
}

void td_optim_release(td_optim *o)
{
    if (o == NULL)
        return;
    for (int i = 0; i < o->n && o->params != NULL; i++) {
        td_tensor_release(o->params[i]);
        td_tensor_release(o->m[i]);
        td_tensor_release(o->v[i]);
        if (o->master != NULL)
            td_tensor_release(o->master[i]);
    }
    td_free(o->master);
    td_free(o->params);
    td_free(o->m);
    td_free(o->v);
    td_free(o->steps);
    td_free(o);
}

td_status td_optim_set_lr(td_optim *o, float lr)
{
    if (o == NULL)
        return td_err_null("optim_set_lr", "opt");
    if (!finite_in(lr, 0, INFINITY) || lr == 0)
        return td_error(TD_E_INVALID, "optim_set_lr: lr %g must be finite and > 0", (double)lr);
    if (o->kind == SGD)
        o->sgd.lr = lr;
    else
        o->adam.lr = lr;
    return TD_OK;
}

td_status td_optim_lr(const td_optim *o, float *out)
{
    if (o == NULL)
        return td_err_null("optim_lr", "opt");
    if (out == NULL)
        return td_err_null("optim_lr", "out");
    *out = o->kind == SGD ? o->sgd.lr : o->adam.lr;
    return TD_OK;
}

#ifdef HAVE_SGD
/* Temporaries of one update, released together. */
typedef struct scratch {
    td_tensor *t[32];
    int n;
} scratch;

static td_tensor *keep(scratch *s, td_tensor *t)
{
    s->t[s->n++] = t;
    return t;
}

static void drop(scratch *s)
{
    for (int i = 0; i < s->n; i++)
        td_tensor_release(s->t[i]);
    s->n = 0;
}

/* a * x + b * y into *out (b == 0: a * x). */
static td_status axpby(scratch *s, float a, const td_tensor *x, float b, const td_tensor *y, td_tensor **out)
{
    td_tensor *ax = NULL, *by = NULL;
    if (a == 1.0f)
        ax = (td_tensor *)x;
    else {
        TD_TRY(td_float_mul_scalar(x, a, &ax));
        keep(s, ax);
    }
    if (b == 0.0f || y == NULL) {
        TD_TRY(td_tensor_retain(ax));
        *out = ax;
        return TD_OK;
    }
    if (b == 1.0f)
        by = (td_tensor *)y;
    else {
        TD_TRY(td_float_mul_scalar(y, b, &by));
        keep(s, by);
    }
    return td_float_add(ax, by, out);
}

static td_status sgd_one(td_optim *o, int i, const td_tensor *p, const td_tensor *g, scratch *s, td_tensor **np)
{
    const td_sgd_options *c = &o->sgd;
    const td_tensor *d = g;
    if (c->weight_decay != 0.0f) {
        td_tensor *t;
        TD_TRY(axpby(s, 1.0f, g, c->weight_decay, p, &t));
        d = keep(s, t);
    }
    if (c->momentum != 0.0f) {
        td_tensor *buf;
        if (o->m[i] == NULL) {
            TD_TRY(td_tensor_retain((td_tensor *)d));
            buf = (td_tensor *)d;
        } else {
            TD_TRY(axpby(s, c->momentum, o->m[i], 1.0f - c->dampening, d, &buf));
        }
        td_tensor_release(o->m[i]);
        o->m[i] = buf;
        if (c->nesterov) {
            td_tensor *t;
            TD_TRY(axpby(s, 1.0f, d, c->momentum, buf, &t));
            d = keep(s, t);
        } else {
            d = buf;
        }
    }
    return axpby(s, 1.0f, p, -c->lr, d, np);
}

#ifdef HAVE_ADAM
#ifdef TD_BACKEND_CPU_ENABLED
/* The CPU's one-pass update (runtime/cpu/cpu_optim.c) for f32 parameters whose gradient and
 * moments are f32 CPU tensors too: the same float operations per element as the op-by-op
 * update below, so the same bits; every other case (other backends, f64) runs that one. */
static bool adam_fused_fits(const td_optim *o, int i, const td_tensor *p, const td_tensor *g)
{
    const td_tensor *m = o->m[i], *v = o->v[i];
    return p->kind == TD_BACKEND_CPU && p->dtype == TD_F32 && g->kind == TD_BACKEND_CPU && g->dtype == TD_F32 &&
           g->device == p->device && (m == NULL || (m->kind == TD_BACKEND_CPU && m->dtype == TD_F32)) &&
           (v == NULL || (v->kind == TD_BACKEND_CPU && v->dtype == TD_F32));
}

static td_status adam_fused(td_optim *o, int i, const td_tensor *p, const td_tensor *g, double bc1, double bc2,
                            td_tensor **np)
{
    const td_adam_options *c = &o->adam;
    td_cpu_adam_coef k;
    k.decay_p = c->weight_decay != 0.0f && c->decoupled;
    k.p_scale = 1.0f - c->lr * c->weight_decay;
    k.grad_wd = c->weight_decay != 0.0f && !c->decoupled ? c->weight_decay : 0.0f;
    k.beta1 = c->beta1;
    k.one_minus_beta1 = 1.0f - c->beta1;
    k.beta2 = c->beta2;
    k.one_minus_beta2 = 1.0f - c->beta2;
    k.inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    k.eps = c->eps;
    k.step = (float)(-(double)c->lr / bc1);
    td_tensor *t[3] = { NULL, NULL, NULL };
    td_status st = TD_OK;
    for (int j = 0; j < 3 && st == TD_OK; j++)
        st = td_tensor_new_on("optim_step", p->device, TD_F32, &p->shape, &t[j]);
    if (st != TD_OK) {
        for (int j = 0; j < 3; j++)
            td_tensor_release(t[j]);
        return st;
    }
    const td_tensor *m = o->m[i], *v = o->v[i];
    td_cpu_adam_f32(p->shape.numel, p->data, g->data, m != NULL ? m->data : NULL, v != NULL ? v->data : NULL, &k,
                    t[0]->data, t[1]->data, t[2]->data);
    td_tensor_release(o->m[i]);
    td_tensor_release(o->v[i]);
    o->m[i] = t[1];
    o->v[i] = t[2];
    *np = t[0];
    return TD_OK;
}
#endif

static td_status adam_one(td_optim *o, int i, const td_tensor *p, const td_tensor *g, scratch *s, td_tensor **np)
{
    const td_adam_options *c = &o->adam;
#ifdef TD_BACKEND_CPU_ENABLED
    if (adam_fused_fits(o, i, p, g)) {
        const int64_t t = o->steps[i] + 1;
        TD_TRY(adam_fused(o, i, p, g, 1.0 - pow((double)c->beta1, (double)t), 1.0 - pow((double)c->beta2, (double)t),
                          np));
        o->steps[i] = t;
        return TD_OK;
    }
#endif
    const td_tensor *d = g;
    if (c->weight_decay != 0.0f && !c->decoupled) {
        td_tensor *t;
        TD_TRY(axpby(s, 1.0f, g, c->weight_decay, p, &t));
        d = keep(s, t);
    }
    if (c->weight_decay != 0.0f && c->decoupled) {
        td_tensor *t;
        TD_TRY(td_float_mul_scalar(p, 1.0f - c->lr * c->weight_decay, &t));
        p = keep(s, t);
    }
    td_tensor *m, *v, *d2;
    TD_TRY(axpby(s, 1.0f - c->beta1, d, c->beta1, o->m[i], &m));
    keep(s, m);
    TD_TRY(td_float_mul(d, d, &d2));
    keep(s, d2);
    TD_TRY(axpby(s, 1.0f - c->beta2, d2, c->beta2, o->v[i], &v));
    keep(s, v);
    const int64_t t = o->steps[i] + 1;
    const double bc1 = 1.0 - pow((double)c->beta1, (double)t), bc2 = 1.0 - pow((double)c->beta2, (double)t);
    /* p - lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps) */
    td_tensor *den, *q;
    TD_TRY(td_float_sqrt(v, &den));
    keep(s, den);
    TD_TRY(td_float_mul_scalar(den, (float)(1.0 / sqrt(bc2)), &q));
    keep(s, q);
    TD_TRY(td_float_add_scalar(q, c->eps, &den));
    keep(s, den);
    TD_TRY(td_float_div(m, den, &q));
    keep(s, q);
    TD_TRY(axpby(s, 1.0f, p, (float)(-(double)c->lr / bc1), q, np));
    /* State advances only once the update exists. */
    td_tensor_retain(m);
    td_tensor_retain(v);
    td_tensor_release(o->m[i]);
    td_tensor_release(o->v[i]);
    o->m[i] = m;
    o->v[i] = v;
    o->steps[i] = t;
    return TD_OK;
}
#endif
#endif

/* One parameter's update into *np. */
static td_status update(td_optim *o, int i, const td_tensor *p, const td_tensor *g, td_tensor **np)
{
#ifdef HAVE_SGD
    scratch s = { .n = 0 };
    td_status st;
    if (o->kind == SGD)
        st = sgd_one(o, i, p, g, &s, np);
    else
#ifdef HAVE_ADAM
        st = adam_one(o, i, p, g, &s, np);
#else
        st = td_error(TD_E_UNSUPPORTED, "optim_step: Adam needs float_mul, float_sqrt, float_add_scalar and "
                                        "float_div, which this build leaves out");
#endif
    drop(&s);
    return st;
#else
    (void)o, (void)i, (void)p, (void)g, (void)np;
    return td_error(TD_E_UNSUPPORTED, "optim_step: the optimizers need float_mul_scalar and float_add, which this "
                                      "build leaves out");
#endif
}

td_status td_optim_step_with(td_optim *o, const td_tensor *const *grads, int n)
{
    if (o == NULL)
        return td_err_null("optim_step", "opt");
    if (grads == NULL && n > 0)
        return td_err_null("optim_step", "grads");
    if (n != o->n)
        return td_error(TD_E_INVALID, "optim_step: %d gradients for %d parameters", n, o->n);
    for (int i = 0; i < n; i++) {
        const td_tensor *g = grads[i];
        if (g == NULL)
            continue;
        /* The update runs in the master weights' dtype (f32) when there are some, else in
         * the parameter's; a gradient of another float dtype is cast to it. */
        const td_tensor *p = o->master[i] != NULL ? o->master[i] : o->params[i]->inner;
        if (g->kind == TD_BACKEND_AUTODIFF)
            g = g->inner;
        if (td_dtype_cls(g->dtype) != TD_CLASS_FLOAT || !td_shape_equal(&g->shape, &p->shape))
            return td_error(TD_E_SHAPE, "optim_step: the gradient of params[%d] does not have its shape", i);
        td_tensor *gc = NULL;
        if (g->dtype != p->dtype) {
            TD_TRY(td_float_cast(g, p->dtype, &gc));
            g = gc;
        }
        td_tensor *np = NULL, *low = NULL;
        td_status st = update(o, i, p, g, &np);
        td_tensor_release(gc);
        if (st == TD_OK && o->master[i] != NULL)
            st = td_float_cast(np, o->params[i]->dtype, &low);
        if (st == TD_OK)
            st = td_tensor_assign(o->params[i], low != NULL ? low : np);
        if (st == TD_OK && o->master[i] != NULL) {
            td_tensor_release(o->master[i]);
            o->master[i] = np;
            np = NULL;
        }
        td_tensor_release(low);
        td_tensor_release(np);
        TD_TRY(st);
    }
    return TD_OK;
}

td_status td_optim_step(td_optim *o, const td_grads *grads)
{
    if (o == NULL)
        return td_err_null("optim_step", "opt");
    if (grads == NULL)
        return td_err_null("optim_step", "grads");
    td_tensor *stack[16];
    td_tensor **gs = o->n <= 16 ? stack : td_calloc((size_t)o->n, sizeof *gs);
    if (gs == NULL)
        return td_error(TD_E_NOMEM, "optim_step: out of memory");
    td_status st = TD_OK;
    int got = 0;
    for (; got < o->n && st == TD_OK; got++)
        st = td_grads_get(grads, o->params[got], &gs[got]);
    if (st == TD_OK)
        st = td_optim_step_with(o, (const td_tensor *const *)gs, o->n);
    for (int i = 0; i < got; i++)
        td_tensor_release(gs[i]);
    if (gs != stack)
        td_free(gs);
    return st;
}

td_status td_optim_sgd_list(const td_param_list *params, const td_sgd_options *options, td_optim **out)
{
    td_tensor **items;
    int n;
    TD_TRY(list_items("optim_sgd_list", params, out, &items, &n));
    td_status st = td_optim_sgd(items, n, options, out);
    td_free(items);
    return st;
}

td_status td_optim_adam_list(const td_param_list *params, const td_adam_options *options, td_optim **out)
{
    td_tensor **items;
    int n;
    TD_TRY(list_items("optim_adam_list", params, out, &items, &n));
    td_status st = td_optim_adam(items, n, options, out);
    td_free(items);
    return st;
}

/* ---- dynamic loss scaling (PyTorch's GradScaler) ---- */

struct td_grad_scaler {
    td_grad_scaler_options o;
    float scale;
    int good; /* steps since the scale last changed */
};

td_grad_scaler_options td_grad_scaler_defaults(void)
{
    return (td_grad_scaler_options){ .init_scale = 65536.0f, .growth_factor = 2.0f, .backoff_factor = 0.5f,
                                     .growth_interval = 2000 };
}

td_status td_grad_scaler_new(const td_grad_scaler_options *options, td_grad_scaler **out)
{
    static const char op[] = "grad_scaler_new";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    const td_grad_scaler_options o = options != NULL ? *options : td_grad_scaler_defaults();
    if (!finite_in(o.init_scale, 0, INFINITY) || o.init_scale == 0 || !finite_in(o.growth_factor, 1, INFINITY) ||
        o.growth_factor == 1 || !finite_in(o.backoff_factor, 0, 1) || o.backoff_factor == 0 ||
        o.backoff_factor == 1 || o.growth_interval < 1)
        return td_error(TD_E_INVALID,
                        "%s: init_scale %g, growth_factor %g, backoff_factor %g, growth_interval %d: the scale must "
                        "be > 0, growth > 1, backoff in (0, 1), the interval >= 1 (td_grad_scaler_defaults)",
                        op, (double)o.init_scale, (double)o.growth_factor, (double)o.backoff_factor,
                        o.growth_interval);
    td_grad_scaler *s = td_calloc(1, sizeof *s);
    if (s == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory", op);
    s->o = o;
    s->scale = o.init_scale;
    *out = s;
    return TD_OK;
}

void td_grad_scaler_release(td_grad_scaler *s)
{
    td_free(s);
}

td_status td_grad_scaler_get_scale(const td_grad_scaler *s, float *out)
{
    if (s == NULL)
        return td_err_null("grad_scaler_get_scale", "scaler");
    if (out == NULL)
        return td_err_null("grad_scaler_get_scale", "out");
    *out = s->scale;
    return TD_OK;
}

td_status td_grad_scaler_scale(const td_grad_scaler *s, const td_tensor *loss, td_tensor **out)
{
    static const char op[] = "grad_scaler_scale";
    if (out == NULL)
        return td_err_null(op, "out");
    *out = NULL;
    if (s == NULL)
        return td_err_null(op, "scaler");
    if (loss == NULL)
        return td_err_null(op, "loss");
#if defined(HAVE_SGD)
    /* In f32 at least: 2^16 times an f16 loss overflows f16 (its largest is 65504). */
    td_tensor *l = NULL;
    if (loss->dtype == TD_F16 || loss->dtype == TD_BF16)
        TD_TRY(td_float_cast(loss, TD_F32, &l));
    const td_status st = td_float_mul_scalar(l != NULL ? l : loss, s->scale, out);
    td_tensor_release(l);
    return st;
#else
    return td_error(TD_E_UNSUPPORTED, "%s: needs float_mul_scalar, which this build leaves out", op);
#endif
}

td_status td_grad_scaler_step(td_grad_scaler *s, td_optim *opt, const td_grads *grads, bool *stepped)
{
    static const char op[] = "grad_scaler_step";
    if (stepped != NULL)
        *stepped = false;
    if (s == NULL)
        return td_err_null(op, "scaler");
    if (opt == NULL)
        return td_err_null(op, "opt");
    if (grads == NULL)
        return td_err_null(op, "grads");
#if defined(HAVE_SGD) && defined(TD_HAVE_OP_FLOAT_SUM) && defined(TD_HAVE_OP_FLOAT_INTO_DATA)
    td_tensor *stack[16];
    td_tensor **gs = opt->n <= 16 ? stack : td_calloc((size_t)opt->n, sizeof *gs);
    if (gs == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory", op);
    for (int i = 0; i < opt->n; i++)
        gs[i] = NULL;
    td_status st = TD_OK;
    bool finite = true;
    const float inv = 1.0f / s->scale;
    /* Unscaled copies of the gradients (f32 at least); one sum each tells whether any
     * element is inf or NaN (a sum of finite gradients that overflows counts as one). */
    for (int i = 0; i < opt->n && st == TD_OK; i++) {
        td_tensor *g = NULL, *g32 = NULL, *sum = NULL;
        st = td_grads_get(grads, opt->params[i], &g);
        if (st != TD_OK || g == NULL)
            continue;
        /* f16 / bf16 gradients are unscaled in f32; f32 and f64 ones in their own dtype */
        st = td_float_cast(g, g->dtype == TD_F16 || g->dtype == TD_BF16 ? TD_F32 : g->dtype, &g32);
        if (st == TD_OK)
            st = td_float_mul_scalar(g32, inv, &gs[i]);
        if (st == TD_OK && finite)
            st = td_float_sum(gs[i], &sum);
        float v = 0.0f;
        if (sum != NULL && st == TD_OK)
            st = td_float_into_data(sum, &v, 1);
        if (sum != NULL && st == TD_OK && !isfinite(v))
            finite = false;
        td_tensor_release(sum);
        td_tensor_release(g32);
        td_tensor_release(g);
    }
    if (st == TD_OK && finite)
        st = td_optim_step_with(opt, (const td_tensor *const *)gs, opt->n);
    for (int i = 0; i < opt->n; i++)
        td_tensor_release(gs[i]);
    if (gs != stack)
        td_free(gs);
    TD_TRY(st);
    if (!finite) {
        s->scale *= s->o.backoff_factor;
        s->good = 0;
        return TD_OK;
    }
    if (stepped != NULL)
        *stepped = true;
    if (++s->good >= s->o.growth_interval) {
        const float grown = s->scale * s->o.growth_factor;
        if (isfinite(grown))
            s->scale = grown;
        s->good = 0;
    }
    return TD_OK;
#else
    return td_error(TD_E_UNSUPPORTED, "%s: needs float_mul_scalar, float_add, float_sum and float_into_data, "
                                      "which this build leaves out", op);
#endif
}
