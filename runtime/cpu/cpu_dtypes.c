/* CPU backend: the dtypes this machine runs on dedicated units (the vtable's
 * dtype_accelerated; td_backend_dtype_usage and tdinfo report it, docs/dtypes.md section 3):
 * bf16 with AVX-512 BF16 or AMX-BF16 dot products and f16 with AVX512-FP16 or AMX-FP16, when
 * oneDNN (which has kernels for them) is the matmul engine; q8_0 / q4_0 where td_quant.c's
 * AVX-512 VNNI dot products run. Read from cpuid, not from compile-time flags. */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdbool.h>

#include "cpu_internal.h"
#include "td_quant.h"

unsigned td_cpu_dtype_accelerated(const td_device *device, int index)
{
    (void)device;
    (void)index;
    unsigned mask = 0;
    bool bf16 = false, f16 = false;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") != 0; /* also says the OS saves the AVX-512 state */
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        const bool tile = (d & (1u << 24)) != 0;   /* AMX-TILE */
        bf16 = tile && (d & (1u << 22)) != 0;      /* AMX-BF16 */
        f16 = avx512 && (d & (1u << 23)) != 0;     /* AVX512-FP16 */
        if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
            bf16 = bf16 || (avx512 && (a & (1u << 5)) != 0); /* AVX512_BF16 */
            f16 = f16 || (tile && (a & (1u << 21)) != 0);    /* AMX-FP16 */
        }
    }
#endif
#ifdef TD_HAVE_DNNL
    if (td_cpu_engine() == TD_CPU_ENGINE_DNNL) {
        if (bf16)
            mask |= 1u << TD_BF16;
        if (f16)
            mask |= 1u << TD_F16;
    }
#endif
    (void)bf16;
    (void)f16;
    if (td_quant_path() == TD_QUANT_AVX512VNNI)
        mask |= (1u << TD_Q8_0) | (1u << TD_Q4_0);
    return mask;
}
