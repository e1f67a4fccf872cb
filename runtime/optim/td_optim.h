/* Optimizers: SGD (momentum, dampening, Nesterov, weight decay) and Adam (AdamW-style
 * decoupled weight decay optional), updating parameters in place (td_tensor_assign). */
#ifndef TD_OPTIM_H
#define TD_OPTIM_H

#include "td_core.h"

TD_API_BEGIN

typedef struct td_optim td_optim;

/* As torch.optim.SGD: g += weight_decay * p; with momentum, buf = g on the first step and
 * momentum * buf + (1 - dampening) * g after, g = buf (Nesterov: g + momentum * buf);
 * p -= lr * g. */
typedef struct td_sgd_options {
    float lr;
    float momentum;
    float dampening;
    float weight_decay;
    bool nesterov;
} td_sgd_options;

/* As torch.optim.Adam (decoupled = false: g += weight_decay * p) or AdamW (decoupled = true:
 * p -= lr * weight_decay * p first): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
 * p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). */
typedef struct td_adam_options {
    float lr;
    float beta1, beta2;
    float eps;
    float weight_decay;
    bool decoupled;
} td_adam_options;

/* torch.optim's defaults with the given learning rate: SGD without momentum, dampening,
 * weight decay or Nesterov; Adam with betas 0.9 and 0.999, eps 1e-8, no weight decay,
 * coupled (decoupled = false). Start from these and change the fields you need:
 *     td_adam_options o = td_adam_defaults(1e-3f); o.weight_decay = 0.01f; */
td_sgd_options td_sgd_defaults(float lr);
td_adam_options td_adam_defaults(float lr);

/* An optimizer over n parameters (float tensors on an autodiff device, retained): each a
 * leaf (a tensor made or loaded by the user, not the result of a tracked op) and each given
 * once; else TD_E_INVALID naming the parameter. Options are checked: lr > 0 finite,
 * momentum/dampening/betas in [0, 1), eps > 0, weight_decay >= 0, Nesterov needs
 * momentum > 0 and dampening 0 (a zero-initialized td_adam_options has eps 0: start from
 * td_adam_defaults). */
td_status td_optim_sgd(td_tensor *const *params, int n, const td_sgd_options *options, td_optim **out);
td_status td_optim_adam(td_tensor *const *params, int n, const td_adam_options *options, td_optim **out);
/* The same over the parameters of a list, in its order (the optimizer takes its own
 * references: the list may be freed or grow afterwards without changing it). */
td_status td_optim_sgd_list(const td_param_list *params, const td_sgd_options *options, td_optim **out);
td_status td_optim_adam_list(const td_param_list *params, const td_adam_options *options, td_optim **out);
/* One update of every parameter from its gradient in grads (parameters without one are
 * left alone and their state does not advance). Nothing is recorded. */
td_status td_optim_step(td_optim *opt, const td_grads *grads);
/* The same from gradients given in parameter order (grads[i] NULL: no gradient), tensors
 * of the parameters' inner backend: e.g. gradients averaged over processes first. */
td_status td_optim_step_with(td_optim *opt, const td_tensor *const *grads, int n);
td_status td_optim_set_lr(td_optim *opt, float lr);
td_status td_optim_lr(const td_optim *opt, float *out);
void td_optim_release(td_optim *opt); /* NULL is ignored */

/* Low-precision parameters (docs/dtypes.md section 9): an optimizer over f16 or bf16
 * parameters keeps an f32 copy of each (its master weights, made from the parameter's
 * value when the optimizer is made), runs the update and keeps its state (momentum,
 * moments) in f32, and assigns the update rounded to the parameter's dtype. Gradients may
 * be of the parameter's dtype or any other float dtype (cast to the update's). Other
 * dtypes (f32, f64) update in their own.
 *
 * Dynamic loss scaling for f16 (PyTorch's torch.cuda.amp.GradScaler): multiply the loss
 * by the scale before backward (td_grad_scaler_scale), then td_grad_scaler_step: the
 * gradients are unscaled in f32 (f64 ones in f64); if any element is inf or NaN the step
 * is skipped and the scale multiplied by backoff_factor, else the optimizer steps and
 * after growth_interval steps in a row without one the scale is multiplied by
 * growth_factor. bf16 has f32's range and needs none. */
typedef struct td_grad_scaler_options {
    float init_scale;     /* 65536 (2^16) */
    float growth_factor;  /* 2 */
    float backoff_factor; /* 0.5 */
    int growth_interval;  /* 2000 */
} td_grad_scaler_options;
typedef struct td_grad_scaler td_grad_scaler;
/* PyTorch's defaults, the values above. */
td_grad_scaler_options td_grad_scaler_defaults(void);
/* options NULL: the defaults. Checked: init_scale > 0 finite, growth_factor > 1,
 * backoff_factor in (0, 1), growth_interval >= 1; else TD_E_INVALID. */
td_status td_grad_scaler_new(const td_grad_scaler_options *options, td_grad_scaler **out);
/* loss times the scale, recorded (an f16 or bf16 loss is cast to f32 first). */
td_status td_grad_scaler_scale(const td_grad_scaler *scaler, const td_tensor *loss, td_tensor **out);
/* Unscales the gradients of opt's parameters in grads and steps opt unless one is not
 * finite; *stepped (may be NULL) says which; updates the scale as above. */
td_status td_grad_scaler_step(td_grad_scaler *scaler, td_optim *opt, const td_grads *grads, bool *stepped);
td_status td_grad_scaler_get_scale(const td_grad_scaler *scaler, float *out);
void td_grad_scaler_release(td_grad_scaler *scaler); /* NULL is ignored */

TD_API_END

#endif
