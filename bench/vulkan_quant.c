/* bench/vulkan_quant: the decode matrix x vector on Vulkan with block-quantized weights, in one
 * run: y[1, N] = x[1, K] @ w^T with w q8_0 / q4_0 [N, K] (float_matmul_nt, shaders/qmv.comp:
 * the blocks dequantized on the fly, one workgroup per output reducing over K) against the f32
 * matrix x vector (float_matmul of x by the f32 weights stored [K, N], mmthin's row-vector
 * path). The quantized product runs with 64 invocations a column (a workgroup reducing over
 * K) and with 1 (64 columns a workgroup, no barriers; the default on software devices), set by
 * TD_VULKAN_QMV_LANES. Each case: iters products recorded into one command buffer, then one sync. Every
 * round times every case; figures are medians over rounds with their range, the weight bytes
 * read per second, and the ratio of the time to the f32 product's of the same round. On
 * lavapipe (software Vulkan) the figures are the CPU's.
 *   bench_vulkan_quant [--scale=X] [--rounds=N] [--help]
 * --scale below 0.5 shrinks the weights to 256 x 1024 (a quick run, as the smoke test's). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_PROG "bench_vulkan_quant"
#include "bench_common.h"
#include "td_ops.h"

typedef struct q_case {
    const char *label;
    td_dtype dt; /* the weights' dtype */
    const char *lanes; /* TD_VULKAN_QMV_LANES for the case (NULL: the default choice) */
    td_tensor *w;
    double bytes; /* of the weights */
    bench_rounds ms, gbs, ratio;
} q_case;

/* Milliseconds per product over iters products, one sync at the end. */
static double time_case(td_device *d, const q_case *c, const td_tensor *x, int iters)
{
    if (c->lanes != NULL ? setenv("TD_VULKAN_QMV_LANES", c->lanes, 1) != 0 : unsetenv("TD_VULKAN_QMV_LANES") != 0)
        bench_die("setenv");
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        td_tensor *y = NULL;
        const td_status st = c->dt == TD_F32 ? td_float_matmul(x, c->w, &y) : td_float_matmul_nt(x, c->w, &y);
        if (st != TD_OK)
            bench_die(c->label);
        td_tensor_release(y);
    }
    if (td_sync(d) != TD_OK)
        bench_die("sync");
    return (bench_now() - t0) / iters * 1e3;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, "bench_vulkan_quant",
                                   "Times the Vulkan matrix x vector with q8_0 / q4_0 weights (float_matmul_nt) "
                                   "against f32 weights (float_matmul).",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *vk = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("bench_vulkan_quant: no Vulkan device here (%s)\n", td_last_error());
        return 0;
    }
    td_device_info info;
    if (td_device_info_of(vk, &info) == TD_OK)
        printf("vulkan:%d is %s (%s)%s\n", info.index, info.name, info.type,
               info.software ? ": a software implementation (the CPU's speed)" : "");
    const int64_t n = o.scale < 0.5 ? 256 : 2048, k = o.scale < 0.5 ? 1024 : 4096;
    const int iters = 10 * ((int)(o.scale + 0.5) > 1 ? (int)(o.scale + 0.5) : 1);
    const int64_t xs[2] = { 1, k }, ws[2] = { n, k };
    td_tensor *x = bench_random_on(vk, xs, 2, 1), *w = bench_random_on(vk, ws, 2, 2), *wt = NULL;
    if (td_float_swap_dims(w, 0, 1, &wt) != TD_OK)
        bench_die("swap_dims");
    td_tensor *wkn = NULL; /* [K, N], contiguous */
    if (td_float_add_scalar(wt, 0.0, &wkn) != TD_OK)
        bench_die("add_scalar");
    td_tensor_release(wt);
    q_case cases[] = {
        { .label = "f32 (float_matmul)", .dt = TD_F32 },
        { .label = "q8_0, 64 lanes a column", .dt = TD_Q8_0, .lanes = "64" },
        { .label = "q8_0, 1 lane a column", .dt = TD_Q8_0, .lanes = "1" },
        { .label = "q4_0, 64 lanes a column", .dt = TD_Q4_0, .lanes = "64" },
        { .label = "q4_0, 1 lane a column", .dt = TD_Q4_0, .lanes = "1" },
    };
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < nc; c++) {
        if (cases[c].dt == TD_F32) {
            cases[c].w = wkn;
            cases[c].bytes = (double)(n * k) * 4.0;
        } else {
            if (td_float_quantize(w, cases[c].dt, &cases[c].w) != TD_OK)
                bench_die("quantize");
            cases[c].bytes = (double)(n * k / 32) * (cases[c].dt == TD_Q8_0 ? 34.0 : 18.0);
        }
        time_case(vk, &cases[c], x, 1); /* warm up: pipelines, buffer pools */
    }
    printf("y[1, %lld] = x[1, %lld] @ w^T: ms per product, %d a batch: median [min-max] of %d rounds; weight GB/s "
           "(median); ratio to the f32 product of the same round; \"noisy\": rounds spread over %.0f%%\n",
           (long long)n, (long long)k, iters, o.rounds, BENCH_NOISE * 100.0);
    for (int r = 0; r < o.rounds; r++) {
        double base = 0.0;
        for (int c = 0; c < nc; c++) {
            const double t = time_case(vk, &cases[c], x, iters);
            if (cases[c].dt == TD_F32)
                base = t;
            bench_add(&cases[c].ms, t);
            bench_add(&cases[c].gbs, cases[c].bytes / (t * 1e-3) / 1e9);
            bench_add(&cases[c].ratio, t / base);
        }
    }
    printf("%-24s %12s %32s %10s %16s\n", "weights", "MB", "ms", "GB/s", "time / f32");
    for (int c = 0; c < nc; c++) {
        char buf[96];
        printf("%-24s %12.2f %32s %10.2f %10.2fx%-6s\n", cases[c].label, cases[c].bytes / 1e6,
               bench_fmt(&cases[c].ms, buf, sizeof buf), bench_median(&cases[c].gbs), bench_median(&cases[c].ratio),
               bench_noisy(&cases[c].ratio) ? " noisy" : "");
        td_tensor_release(cases[c].w);
    }
    td_tensor_release(x);
    td_tensor_release(w);
    td_device_release(vk);
    return 0;
}
