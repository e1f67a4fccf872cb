/* Vulkan backend extras beyond the generated API: batching counters for tests and benchmarks. */
#ifndef TD_VULKAN_H
#define TD_VULKAN_H

#include "td_core.h"

#ifdef __cplusplus
extern "C" {
#endif
TD_API_BEGIN

/* Command-buffer submissions and compute dispatches recorded on a Vulkan device so far
 * (either pointer may be NULL). TD_E_BACKEND_MISMATCH when d is not a Vulkan device. */
td_status td_vulkan_stats(const td_device *d, long *submits, long *dispatches);

/* Which shaders float_matmul and int_matmul run on a Vulkan device: AUTO (the default) picks
 * by shape, TILED register-blocked 64x64 tiles, THIN the skinny-shape kernel (no shared
 * memory), NAIVE the former one-output-per-invocation 16x16 kernel (kept for bench_vulkan_matmul
 * and for tests comparing the kernels), OUTER the small-K kernel (outer products: 4 rows by 32
 * columns of C per invocation, vec4 stores). Every choice gives the same results within
 * rounding, on every shape.
 * TD_E_BACKEND_MISMATCH when d is not a Vulkan device, TD_E_INVALID for an unknown kernel. */
typedef enum td_vulkan_matmul_kernel {
    TD_VULKAN_MATMUL_AUTO,
    TD_VULKAN_MATMUL_TILED,
    TD_VULKAN_MATMUL_THIN,
    TD_VULKAN_MATMUL_NAIVE,
    TD_VULKAN_MATMUL_OUTER
} td_vulkan_matmul_kernel;
td_status td_vulkan_set_matmul_kernel(td_device *d, td_vulkan_matmul_kernel kernel);

/* Which shader the broadcasting binary ops (float/int arithmetic, comparisons, bool and/or)
 * run: AUTO (the default) runs the vectorized one (16 elements per invocation, uvec4 loads and
 * stores, a pipeline specialized to the op) where every input has the result's shape or a
 * single element, and otherwise the generic one-element-per-invocation shader (which
 * broadcasts) specialized to the op; GENERIC always runs the generic shader with the op a
 * runtime switch, as before (kept for bench_vulkan_elementwise and for tests comparing the two). The switch also covers the unary ops (math, casts, scalar arithmetic), the float math
 * of fmath.comp (inverse trigonometry, tan, rounding, erf, log1p, is_nan/is_inf, remainders) and
 * the int ops of iops.comp (bitwise, shifts, powi, triangular masks): AUTO runs each shader
 * specialized to the op, GENERIC with the op a runtime switch. Both give the same results.
 * TD_E_BACKEND_MISMATCH when d is not a Vulkan device, TD_E_INVALID for an unknown kernel. */
typedef enum td_vulkan_elementwise_kernel {
    TD_VULKAN_ELEMENTWISE_AUTO,
    TD_VULKAN_ELEMENTWISE_GENERIC
} td_vulkan_elementwise_kernel;
td_status td_vulkan_set_elementwise_kernel(td_device *d, td_vulkan_elementwise_kernel kernel);

/* How the f16 / bf16 shaders reach their 2-byte elements (the storage layout is the same: 2
 * bytes an element, packed): AUTO (the default) as uint16_t where the device has
 * storageBuffer16BitAccess, PACKED always as 32-bit words holding two elements (what a device
 * without it runs; TD_VULKAN_HALF_STORAGE=packed at device open selects it too). Both give the
 * same bits; tests run both. td_vulkan_half_storage_in_use says which one runs.
 * TD_E_BACKEND_MISMATCH when d is not a Vulkan device, TD_E_INVALID for an unknown mode. */
typedef enum td_vulkan_half_storage {
    TD_VULKAN_HALF_AUTO,
    TD_VULKAN_HALF_PACKED
} td_vulkan_half_storage;
td_status td_vulkan_set_half_storage(td_device *d, td_vulkan_half_storage mode);
td_status td_vulkan_half_storage_in_use(const td_device *d, bool *uses_16bit);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
