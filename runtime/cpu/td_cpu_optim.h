/* The CPU's fused optimizer updates, which runtime/optim calls directly for f32 parameters
 * on the CPU (one pass per parameter instead of about ten elementwise ops); other backends
 * and dtypes run the op-by-op update. Defined in cpu_optim.c. */
#ifndef TD_CPU_OPTIM_H
#define TD_CPU_OPTIM_H

#include <stdbool.h>
#include <stdint.h>

/* The scalars of one Adam / AdamW step, each computed in float exactly as the op-by-op
 * update computes it, so that the two give the same bits (docs/api-runtime.md, "Optimizers"). */
typedef struct td_cpu_adam_coef {
    float p_scale;      /* AdamW's decay p * (1 - lr wd), applied when decay_p */
    bool decay_p;
    float grad_wd;      /* Adam's L2 term g + wd p, added when nonzero */
    float beta1, one_minus_beta1, beta2, one_minus_beta2;
    float inv_sqrt_bc2; /* 1 / sqrt(1 - beta2^t) */
    float eps;
    float step;         /* -lr / (1 - beta1^t) */
} td_cpu_adam_coef;

/* n elements: parameter p, gradient g, moments m and v (NULL before the first step) into
 * np, nm, nv (fresh buffers). */
void td_cpu_adam_f32(int64_t n, const float *p, const float *g, const float *m, const float *v,
                     const td_cpu_adam_coef *c, float *np, float *nm, float *nv);

#endif
