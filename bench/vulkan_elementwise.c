/* bench/vulkan_elementwise: Vulkan float_add of 1M elements with the former generic shader
 * (td_vulkan_set_elementwise_kernel GENERIC: one element per invocation, the index computed
 * through the broadcast loop, the op a runtime switch) against the default (AUTO: the vectorized
 * shader, 16 elements per invocation with uvec4 loads and stores, a pipeline specialized to the
 * op), in one run, and where the time of one op goes:
 *   batched   iters adds recorded into one command buffer, one submit and wait at the end;
 *   synced    a submit and a fence wait after every add (a host round trip per op);
 *   4 elems   the same for a 4-element add: the fixed cost per op (recording, descriptor
 *             set, and with "synced" the submit and the fence), next to no shader work.
 * Every round times each case with each kernel, one after the other; figures are medians over
 * rounds with their range. The last rows time float_exp of 1M elements, the unary shader with its
 * op a runtime switch (GENERIC) against the pipeline specialized to it, and float_atan the same
 * way on fmath.comp (whose ops were a runtime switch only, before its per-op pipelines). It also checks that the kernels agree bit for bit (1M, an odd size
 * and a broadcast scalar). On lavapipe (software Vulkan) the figures are the CPU's.
 *   bench_vulkan_elementwise [--scale=X] [--rounds=N] [--help]
 * --scale below 0.5 shrinks the large case to 64K elements (a quick run, as the smoke test's). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_PROG "bench_vulkan_elementwise"
#include "bench_common.h"
#include "td_ops.h"
#include "td_vulkan.h"

static void set_kernel(td_device *d, td_vulkan_elementwise_kernel k)
{
    if (td_vulkan_set_elementwise_kernel(d, k) != TD_OK)
        bench_die("set kernel");
}

/* Seconds per add (b NULL: float_exp of a, or with unary 2 float_atan) over iters calls;
 * synced: a td_sync after each, else one at the end. */
static double time_add(td_device *d, td_vulkan_elementwise_kernel k, const td_tensor *a, const td_tensor *b,
                       int iters, int synced, int unary)
{
    set_kernel(d, k);
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        td_tensor *r = NULL;
        const td_status st = b != NULL    ? td_float_add(a, b, &r)
                             : unary == 2 ? td_float_atan(a, &r)
                                          : td_float_exp(a, &r);
        if (st != TD_OK)
            bench_die("add");
        td_tensor_release(r);
        if (synced && td_sync(d) != TD_OK)
            bench_die("sync");
    }
    if (td_sync(d) != TD_OK)
        bench_die("sync");
    return (bench_now() - t0) / iters;
}

/* Both kernels' results for a + b, compared bit for bit. */
static void check_agree(td_device *d, const char *label, const int64_t *sa, int na, const int64_t *sb, int nb)
{
    td_tensor *a = bench_random_on(d, sa, na, 5), *b = bench_random_on(d, sb, nb, 6), *rg = NULL, *rn = NULL;
    set_kernel(d, TD_VULKAN_ELEMENTWISE_GENERIC);
    if (td_float_add(a, b, &rg) != TD_OK)
        bench_die("generic add");
    set_kernel(d, TD_VULKAN_ELEMENTWISE_AUTO);
    if (td_float_add(a, b, &rn) != TD_OK)
        bench_die("add");
    int64_t n = 0;
    if (td_tensor_numel(rg, &n) != TD_OK)
        bench_die("numel");
    float *u = malloc(sizeof(float) * (size_t)n + 1), *v = malloc(sizeof(float) * (size_t)n + 1);
    if (u == NULL || v == NULL)
        bench_die("malloc");
    if (td_float_into_data(rg, u, n) != TD_OK || td_float_into_data(rn, v, n) != TD_OK)
        bench_die("into_data");
    if (memcmp(u, v, sizeof(float) * (size_t)n) != 0) {
        fprintf(stderr, "bench_vulkan_elementwise: %s: the kernels disagree\n", label);
        exit(1);
    }
    printf("%-26s kernels agree bit for bit (%lld elements)\n", label, (long long)n);
    free(u);
    free(v);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(rg);
    td_tensor_release(rn);
}

typedef struct ew_case {
    const char *label;
    int64_t n;
    int synced, iters, unary;
    td_tensor *a, *b;
    bench_rounds old, fresh, ratio;
} ew_case;

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, "bench_vulkan_elementwise",
                                   "Times Vulkan float_add: the former generic shader against the vectorized one.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *vk = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("bench_vulkan_elementwise: no Vulkan device here (%s)\n", td_last_error());
        return 0;
    }
    td_device_info info;
    if (td_device_info_of(vk, &info) == TD_OK)
        printf("vulkan:%d is %s (%s)%s\n", info.index, info.name, info.type,
               info.software ? ": a software implementation (the CPU's speed)" : "");
    const int64_t big = o.scale < 0.5 ? 65536 : 1048576;
    const int64_t odd[1] = { big + 3 }, one[1] = { 1 }, bs[1] = { big };
    check_agree(vk, "add, large", bs, 1, bs, 1);
    check_agree(vk, "add, odd size", odd, 1, odd, 1);
    check_agree(vk, "add, scalar broadcast", odd, 1, one, 1);
    const int base = (int)(o.scale + 0.5) > 1 ? (int)(o.scale + 0.5) : 1;
    ew_case cases[6] = {
        { .label = big == 1048576 ? "add 1M, batched" : "add 64K, batched", .n = big, .synced = 0, .iters = 10 * base },
        { .label = big == 1048576 ? "add 1M, synced" : "add 64K, synced", .n = big, .synced = 1, .iters = 10 * base },
        { .label = "add 4 elems, batched (us)", .n = 4, .synced = 0, .iters = 200 * base },
        { .label = "add 4 elems, synced (us)", .n = 4, .synced = 1, .iters = 200 * base },
        { .label = big == 1048576 ? "exp 1M, batched" : "exp 64K, batched", .n = big, .synced = 0, .iters = 10 * base,
          .unary = 1 },
        { .label = big == 1048576 ? "atan 1M, batched" : "atan 64K, batched", .n = big, .synced = 0,
          .iters = 10 * base, .unary = 2 },
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < ncases; c++) {
        ew_case *ec = &cases[c];
        ec->a = bench_random_on(vk, &ec->n, 1, 1 + (uint64_t)c);
        ec->b = ec->unary ? NULL : bench_random_on(vk, &ec->n, 1, 11 + (uint64_t)c);
        time_add(vk, TD_VULKAN_ELEMENTWISE_GENERIC, ec->a, ec->b, 1, 1, ec->unary); /* warm up: pipelines, pools */
        time_add(vk, TD_VULKAN_ELEMENTWISE_AUTO, ec->a, ec->b, 1, 1, ec->unary);
    }
    printf("ms per op (us for the 4-element cases): median [min-max] of %d rounds, each timing every case with the generic then the new "
           "shader; \"noisy\": rounds spread over %.0f%%\n",
           o.rounds, BENCH_NOISE * 100.0);
    for (int r = 0; r < o.rounds; r++)
        for (int c = 0; c < ncases; c++) {
            ew_case *ec = &cases[c];
            const double unit = ec->n == 4 ? 1e6 : 1e3; /* the 4-element cases in microseconds */
            const double tg =
                time_add(vk, TD_VULKAN_ELEMENTWISE_GENERIC, ec->a, ec->b, ec->iters, ec->synced, ec->unary) * unit;
            const double tn =
                time_add(vk, TD_VULKAN_ELEMENTWISE_AUTO, ec->a, ec->b, ec->iters, ec->synced, ec->unary) * unit;
            bench_add(&ec->old, tg);
            bench_add(&ec->fresh, tn);
            bench_add(&ec->ratio, tg / tn);
        }
    printf("%-26s %32s %32s %14s\n", "case", "generic", "new", "generic/new");
    for (int c = 0; c < ncases; c++) {
        ew_case *ec = &cases[c];
        char bg[96], bn[96];
        printf("%-26s %32s %32s %8.1fx%-6s\n", ec->label, bench_fmt(&ec->old, bg, sizeof bg),
               bench_fmt(&ec->fresh, bn, sizeof bn), bench_median(&ec->ratio), bench_noisy(&ec->ratio) ? " noisy" : "");
    }
    for (int c = 0; c < ncases; c++) {
        td_tensor_release(cases[c].a);
        if (cases[c].b != NULL)
            td_tensor_release(cases[c].b);
    }
    td_device_release(vk);
    return 0;
}
