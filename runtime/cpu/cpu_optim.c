/* CPU backend: the fused Adam / AdamW update (td_cpu_optim.h). Each element goes through the
 * same float operations, in the same order, as the op-by-op update of runtime/optim/td_optim.c
 * (mul_scalar, add, mul, sqrt, add_scalar, div), so both give the same bits; the library is
 * built as ISO C, where GCC contracts no a * b + c into a fused multiply-add. */
#include "cpu_internal.h"
#include "td_cpu_optim.h"

#include <math.h>

static inline float adam_elem(const td_cpu_adam_coef *c, float p, float g, const float *m, const float *v,
                              int64_t i, float *nm, float *nv)
{
    if (c->decay_p)
        p = p * c->p_scale;
    const float d = c->grad_wd != 0.0f ? g + p * c->grad_wd : g;
    /* beta 0 or no moment yet: the op-by-op update adds no beta * old term */
    const float mm = m != NULL && c->beta1 != 0.0f ? d * c->one_minus_beta1 + m[i] * c->beta1 : d * c->one_minus_beta1;
    const float d2 = d * d;
    const float vv = v != NULL && c->beta2 != 0.0f ? d2 * c->one_minus_beta2 + v[i] * c->beta2 : d2 * c->one_minus_beta2;
    *nm = mm;
    *nv = vv;
    const float den = sqrtf(vv) * c->inv_sqrt_bc2 + c->eps;
    return c->step == 0.0f ? p : p + (mm / den) * c->step;
}

void td_cpu_adam_f32(int64_t n, const float *p, const float *g, const float *m, const float *v,
                     const td_cpu_adam_coef *c, float *np, float *nm, float *nv)
{
    TD_CPU_FOR(i, n, np[i] = adam_elem(c, p[i], g[i], m, v, i, &nm[i], &nv[i]););
}
