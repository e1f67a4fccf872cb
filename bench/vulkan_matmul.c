/* bench/vulkan_matmul: the Vulkan float_matmul kernels against each other in one run: the
 * former one-output-per-invocation kernel (td_vulkan_set_matmul_kernel NAIVE) and the default
 * (AUTO: register-blocked 64x64 tiles for square shapes, the skinny kernel where one side is
 * small, the small-K kernel for an outer product), on a square matmul and two skinny ones (a batch
 * of row vectors times one shared matrix, and an outer product). Every round times each shape
 * with each kernel, one after the other, and the outer product also with the skinny-shape kernel
 * (mmthin, its kernel before mmouter); figures are medians over rounds with their range. Each
 * skinny shape's GFLOP/s is given as a fraction of the square case's in the same round; issue
 * 13's target for the outer product is at least 0.1 of it (within 10x), with its verdict. It also
 * checks that the kernels agree.
 * On lavapipe (software Vulkan) the figures are the CPU's; on a GPU, the GPU's.
 *   bench_vulkan_matmul [--scale=X] [--rounds=N] [--help]
 * --scale below 0.5 shrinks the square case to 256x256 (a quick run, as the smoke test's). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_PROG "bench_vulkan_matmul"
#include "bench_common.h"
#include "td_ops.h"
#include "td_vulkan.h"

/* Seconds per matmul over iters calls with the kernel, ending with a sync so queued work counts. */
static double time_mm(td_device *d, td_vulkan_matmul_kernel kern, const td_tensor *a, const td_tensor *b, int iters)
{
    if (td_vulkan_set_matmul_kernel(d, kern) != TD_OK)
        bench_die("set kernel");
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        td_tensor *r = NULL;
        if (td_float_matmul(a, b, &r) != TD_OK)
            bench_die("matmul");
        td_tensor_release(r);
    }
    if (td_sync(d) != TD_OK)
        bench_die("sync");
    return (bench_now() - t0) / iters;
}

/* The largest |x - y| over two results, relative to the largest |x|. */
static double max_rel_diff(td_tensor *x, td_tensor *y, int64_t n)
{
    float *u = malloc(sizeof(float) * (size_t)n), *v = malloc(sizeof(float) * (size_t)n);
    if (u == NULL || v == NULL)
        bench_die("malloc");
    if (td_float_into_data(x, u, n) != TD_OK || td_float_into_data(y, v, n) != TD_OK)
        bench_die("into_data");
    double dmax = 0.0, xmax = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double dd = fabs((double)u[i] - (double)v[i]), xx = fabs((double)u[i]);
        dmax = dd > dmax ? dd : dmax;
        xmax = xx > xmax ? xx : xmax;
    }
    free(u);
    free(v);
    return xmax > 0.0 ? dmax / xmax : dmax;
}

typedef struct mm_case {
    char label[48];
    int64_t sa[4], sb[4];
    int na, nb;
    double flops;
    int iters_naive, iters_new;
    td_tensor *a, *b;
    bench_rounds naive, fresh, ratio, vs_square;
} mm_case;

/* Issue 13: the outer product's GFLOP/s at least this fraction of the square case's. */
#define OUTER_TARGET 0.1

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, "bench_vulkan_matmul",
                                   "Times Vulkan float_matmul: the former naive kernel against the default one.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *vk = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("bench_vulkan_matmul: no Vulkan device here (%s)\n", td_last_error());
        return 0;
    }
    td_device_info info;
    if (td_device_info_of(vk, &info) == TD_OK)
        printf("vulkan:%d is %s (%s)%s\n", info.index, info.name, info.type,
               info.software ? ": a software implementation (the CPU's speed)" : "");
    const int64_t sq = o.scale < 0.5 ? 256 : 1024;
    mm_case cases[3] = {
        { .sa = { sq, sq }, .sb = { sq, sq }, .na = 2, .nb = 2 },
        { .sa = { 28, 8, 1, 129 }, .sb = { 1, 129, 256 }, .na = 4, .nb = 3 },
        { .sa = { 4096, 1 }, .sb = { 1, 512 }, .na = 2, .nb = 2 },
    };
    snprintf(cases[0].label, sizeof cases[0].label, "%lldx%lld @ %lldx%lld", (long long)sq, (long long)sq,
             (long long)sq, (long long)sq);
    snprintf(cases[1].label, sizeof cases[1].label, "[28,8,1,129] @ [1,129,256]");
    snprintf(cases[2].label, sizeof cases[2].label, "4096x1 @ 1x512");
    cases[0].flops = 2.0 * (double)(sq * sq * sq);
    cases[1].flops = 2.0 * 28 * 8 * 129 * 256;
    cases[2].flops = 2.0 * 4096 * 512;
    const int base = (int)(o.scale + 0.5) > 1 ? (int)(o.scale + 0.5) : 1;
    for (int c = 0; c < 3; c++) {
        mm_case *mc = &cases[c];
        mc->a = bench_random_on(vk, mc->sa, mc->na, 1 + (uint64_t)c);
        mc->b = bench_random_on(vk, mc->sb, mc->nb, 11 + (uint64_t)c);
        mc->iters_naive = base;
        mc->iters_new = c == 0 ? 5 * base : 20 * base;
        /* warm up (pipelines, buffer pools) and check that the kernels agree */
        td_tensor *rn = NULL, *rf = NULL;
        if (td_vulkan_set_matmul_kernel(vk, TD_VULKAN_MATMUL_NAIVE) != TD_OK || td_float_matmul(mc->a, mc->b, &rn) != TD_OK)
            bench_die("naive matmul");
        if (td_vulkan_set_matmul_kernel(vk, TD_VULKAN_MATMUL_AUTO) != TD_OK || td_float_matmul(mc->a, mc->b, &rf) != TD_OK)
            bench_die("matmul");
        int64_t n = 0;
        if (td_tensor_numel(rn, &n) != TD_OK)
            bench_die("numel");
        const double diff = max_rel_diff(rn, rf, n);
        printf("%-28s kernels agree to %.2g (largest difference / largest |value|)\n", mc->label, diff);
        if (!(diff < 1e-4)) {
            fprintf(stderr, "bench_vulkan_matmul: %s: the kernels disagree\n", mc->label);
            return 1;
        }
        td_tensor_release(rn);
        td_tensor_release(rf);
    }
    printf("ms per matmul: median [min-max] of %d rounds, each timing every shape with the naive then the new "
           "kernel; \"noisy\": rounds spread over %.0f%%\n",
           o.rounds, BENCH_NOISE * 100.0);
    bench_rounds thin = { 0 }, thin_ratio = { 0 };
    int outer_met = 0;
    for (int r = 0; r < o.rounds; r++) {
        double sq_gf = 0.0;
        for (int c = 0; c < 3; c++) {
            mm_case *mc = &cases[c];
            const double tn = time_mm(vk, TD_VULKAN_MATMUL_NAIVE, mc->a, mc->b, mc->iters_naive) * 1e3;
            const double tf = time_mm(vk, TD_VULKAN_MATMUL_AUTO, mc->a, mc->b, mc->iters_new) * 1e3;
            bench_add(&mc->naive, tn);
            bench_add(&mc->fresh, tf);
            bench_add(&mc->ratio, tn / tf);
            const double gf = mc->flops / tf / 1e6;
            if (c == 0)
                sq_gf = gf;
            bench_add(&mc->vs_square, gf / sq_gf);
            if (c == 2) {
                const double tt = time_mm(vk, TD_VULKAN_MATMUL_THIN, mc->a, mc->b, mc->iters_new) * 1e3;
                bench_add(&thin, tt);
                bench_add(&thin_ratio, tt / tf);
                outer_met += gf / sq_gf >= OUTER_TARGET;
            }
        }
    }
    printf("%-28s %30s %30s %14s %9s %9s\n", "shape", "naive ms", "new ms", "naive/new", "naive GF", "new GF");
    for (int c = 0; c < 3; c++) {
        mm_case *mc = &cases[c];
        char bn[96], bf[96];
        printf("%-28s %30s %30s %8.1fx%-6s %9.2f %9.2f\n", mc->label, bench_fmt(&mc->naive, bn, sizeof bn),
               bench_fmt(&mc->fresh, bf, sizeof bf), bench_median(&mc->ratio),
               bench_noisy(&mc->ratio) ? " noisy" : "", mc->flops / bench_median(&mc->naive) / 1e6,
               mc->flops / bench_median(&mc->fresh) / 1e6);
    }
    char bt[96], br[96], verdict[96];
    printf("%-28s mmthin (before mmouter) %s ms, %.1fx the new kernel's time%s\n", cases[2].label,
           bench_fmt(&thin, bt, sizeof bt), bench_median(&thin_ratio), bench_noisy(&thin_ratio) ? " (noisy)" : "");
    for (int c = 1; c < 3; c++) {
        const bench_rounds *v = &cases[c].vs_square;
        snprintf(br, sizeof br, "%.3f [%.3f-%.3f]%s", bench_median(v), bench_min(v), bench_max(v),
                 bench_noisy(v) ? " noisy" : "");
        printf("new kernel, %s: %s of the square case's GFLOP/s in the same round (1/%.1f)\n", cases[c].label, br,
               1.0 / bench_median(v));
    }
    printf("target (issue 13): %s within 10x of the square case's GFLOP/s (>= %.1f of it): %s\n", cases[2].label,
           OUTER_TARGET, bench_verdict(outer_met, o.rounds, verdict, sizeof verdict));
    for (int c = 0; c < 3; c++) {
        td_tensor_release(cases[c].a);
        td_tensor_release(cases[c].b);
    }
    td_device_release(vk);
    return 0;
}
