/* td_backend_dtype_usage's "accelerated" (the backends' dtype_accelerated hook,
 * docs/dtypes.md section 3): the CPU's answer against the flags the kernel lists in
 * /proc/cpuinfo, read here (not through the library's cpuid), and the engine the CPU
 * device says it runs (oneDNN or not, td_device_info's driver text); every backend's
 * answer within what its spec says it stores and computes.
 *
 * The rule checked (runtime/cpu/cpu_dtypes.c): bf16 where avx512_bf16, or amx_bf16 with
 * amx_tile, and oneDNN is the matmul engine; f16 where avx512_fp16, or amx_fp16 with
 * amx_tile, and oneDNN; q8_0 / q4_0 where td_quant.c's AVX-512 VNNI path runs
 * (avx512_vnni, avx512f, avx512vl, avx512dq, avx2, fma, f16c; not lowered by
 * TD_CPU_CAPABILITY). Run with TDT_EXPECT_NO_LOWP=1 (CTest's test_dtype_usage_blas, under
 * TD_CPU_ENGINE=blas) it also requires that no 16-bit float dtype is reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"

static char flags[16384];

/* The first "flags" line of /proc/cpuinfo (x86 Linux); false when there is none. */
static bool read_flags(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return false;
    bool found = false;
    while (!found && fgets(flags, sizeof flags, f) != NULL)
        found = strncmp(flags, "flags", 5) == 0;
    fclose(f);
    return found;
}

/* Whether the flags line holds `name` as a whole word. */
static bool has(const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = strstr(flags, name); p != NULL; p = strstr(p + 1, name)) {
        const bool start = p == flags || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ':';
        const bool end = p[n] == ' ' || p[n] == '\n' || p[n] == '\0';
        if (start && end)
            return true;
    }
    return false;
}

static void test_cpu_accelerated_matches_cpuinfo(void **state)
{
    (void)state;
    if (!read_flags()) {
        print_message("no flags line in /proc/cpuinfo: nothing to check the cpu's answer against\n");
        skip();
    }
    td_device_info info;
    assert_int_equal(td_device_info_get(TD_BACKEND_CPU, 0, &info), TD_OK);
    const bool dnnl = strstr(info.driver, "matmul: oneDNN") != NULL;
    const bool bf16 = has("avx512_bf16") || (has("amx_tile") && has("amx_bf16"));
    const bool f16 = has("avx512_fp16") || (has("amx_tile") && has("amx_fp16"));
    const char *cap = getenv("TD_CPU_CAPABILITY");
    const bool lowered = cap != NULL && (strcmp(cap, "default") == 0 || strcmp(cap, "avx2") == 0);
    const bool vnni = has("avx512_vnni") && has("avx512f") && has("avx512vl") && has("avx512dq") && has("avx2") &&
                      has("fma") && has("f16c") && !lowered;
    print_message("cpuinfo: bf16 units %s, f16 units %s, VNNI path %s; oneDNN engine %s\n", bf16 ? "yes" : "no",
                  f16 ? "yes" : "no", vnni ? "yes" : "no", dnnl ? "yes" : "no");
    const bool no_lowp = getenv("TDT_EXPECT_NO_LOWP") != NULL;
    int accelerated = 0;
    for (int d = 0; d < TD_DTYPE_COUNT; d++) {
        const unsigned u = td_backend_dtype_usage(TD_BACKEND_CPU, (td_dtype)d);
        const bool hw = d == TD_BF16 ? bf16 && dnnl : d == TD_F16 ? f16 && dnnl
                      : (d == TD_Q8_0 || d == TD_Q4_0) ? vnni : false;
        const bool want = hw && (u & TD_USAGE_STORES) && (u & (TD_USAGE_COMPUTES | TD_USAGE_VIA_F32));
        const bool got = (u & TD_USAGE_ACCELERATED) != 0;
        if (got != want)
            fail_msg("cpu %s: accelerated %s, want %s (usage bits 0x%x)", td_dtype_name((td_dtype)d),
                     got ? "yes" : "no", want ? "yes" : "no", u);
        if (no_lowp && got && (d == TD_BF16 || d == TD_F16))
            fail_msg("cpu %s: accelerated with TD_CPU_ENGINE=blas (oneDNN is not the engine)",
                     td_dtype_name((td_dtype)d));
        accelerated += got;
        if (got)
            print_message("cpu %s: accelerated\n", td_dtype_name((td_dtype)d));
    }
    print_message("cpu: %d dtype%s accelerated\n", accelerated, accelerated == 1 ? "" : "s");
}

/* Every enabled backend: accelerated only where it stores the dtype and computes it
 * (natively or via f32); nothing for autodiff or a value that is no dtype. */
static void test_accelerated_within_spec(void **state)
{
    (void)state;
    for (int b = 0; b < TD_BACKEND_AUTODIFF; b++) {
        if (!td_backend_enabled((td_backend)b))
            continue;
        for (int d = 0; d < TD_DTYPE_COUNT; d++) {
            const unsigned u = td_backend_dtype_usage((td_backend)b, (td_dtype)d);
            if ((u & TD_USAGE_ACCELERATED) && !((u & TD_USAGE_STORES) && (u & (TD_USAGE_COMPUTES | TD_USAGE_VIA_F32))))
                fail_msg("%s %s: accelerated but not stored and computed (0x%x)", td_backend_name((td_backend)b),
                         td_dtype_name((td_dtype)d), u);
        }
        assert_int_equal(td_backend_dtype_usage((td_backend)b, (td_dtype)TD_DTYPE_COUNT), 0);
    }
    assert_int_equal(td_backend_dtype_usage(TD_BACKEND_AUTODIFF, TD_BF16), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_accelerated_matches_cpuinfo),
        cmocka_unit_test(test_accelerated_within_spec),
    };
    return cmocka_run_group_tests_name("dtype_usage", tests, NULL, NULL);
}
