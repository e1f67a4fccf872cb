/* bench/vulkan: elementwise add and matmul on Vulkan against the CPU, and how many queue
 * submits a chain of elementwise ops costs, in one run. On lavapipe (software Vulkan) the
 * figures show overheads only; on a GPU the same program measures the GPU. Every round times
 * the CPU and then the Vulkan run of an op; figures are medians over rounds with their range.
 * The last row is the cost of the device lock (a Vulkan device is shared between threads, its
 * recording, pools and submits under one recursive mutex): the host's time per small op
 * (add_scalar on 4 elements, batches of 200 recorded, each submitted outside the timing) on a
 * device opened as usual against one opened with TD_VULKAN_DEVICE_LOCK=0 (the lock left
 * unused), alternating which goes first; 3x the rounds of the other rows.
 *   bench_vulkan [--scale=X] [--rounds=N] [--help] */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_PROG "bench_vulkan"
#include "bench_common.h"
#include "td_ops.h"
#include "td_vulkan.h"

typedef td_status (*binary_fn)(const td_tensor *, const td_tensor *, td_tensor **);

/* Seconds per op over iters calls, ending with a sync so queued work counts. */
static double time_op(td_device *d, binary_fn f, const td_tensor *a, const td_tensor *b, int iters)
{
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        td_tensor *r = NULL;
        if (f(a, b, &r) != TD_OK)
            bench_die("op");
        td_tensor_release(r);
    }
    if (td_sync(d) != TD_OK)
        bench_die("sync");
    return (bench_now() - t0) / iters;
}

static void compare(const char *label, td_device *cpu, td_device *vk, binary_fn f, const int64_t *sa,
                    const int64_t *sb, int ndim, int iters, double flops, int rounds)
{
    td_tensor *ca = bench_random_on(cpu, sa, ndim, 1), *cb = bench_random_on(cpu, sb, ndim, 2);
    td_tensor *va = bench_random_on(vk, sa, ndim, 1), *vb = bench_random_on(vk, sb, ndim, 2);
    bench_rounds tc = { 0 }, tv = { 0 }, ratio = { 0 };
    time_op(cpu, f, ca, cb, 1); /* warm up: pools, pipelines */
    time_op(vk, f, va, vb, 1);
    for (int r = 0; r < rounds; r++) {
        const double c = time_op(cpu, f, ca, cb, iters) * 1e6, v = time_op(vk, f, va, vb, iters) * 1e6;
        bench_add(&tc, c);
        bench_add(&tv, v);
        bench_add(&ratio, v / c);
    }
    char bc[96], bv[96];
    printf("%-18s %34s %34s %8.2f%-6s", label, bench_fmt(&tc, bc, sizeof bc), bench_fmt(&tv, bv, sizeof bv),
           bench_median(&ratio), bench_noisy(&ratio) ? " noisy" : "");
    if (flops > 0)
        printf("   %7.2f %7.2f", flops / bench_median(&tc) / 1e3, flops / bench_median(&tv) / 1e3);
    printf("\n");
    td_tensor_release(ca);
    td_tensor_release(cb);
    td_tensor_release(va);
    td_tensor_release(vb);
}

/* ns per small op (add_scalar of 4 elements) on a freshly opened vulkan:0, the lock used or not:
 * the host's cost of an op (allocating its buffer, recording its dispatch, releasing it), timed
 * over batches of 200 ops (fewer than a command buffer holds, so no submit falls inside), each
 * batch then submitted and waited for outside the timing. */
static double time_small_ops(bool locked, int batches)
{
    if (locked)
        unsetenv("TD_VULKAN_DEVICE_LOCK");
    else
        setenv("TD_VULKAN_DEVICE_LOCK", "0", 1);
    td_device *d = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &d) != TD_OK)
        bench_die("vulkan");
    unsetenv("TD_VULKAN_DEVICE_LOCK");
    const int64_t s[] = { 4 };
    td_tensor *x = bench_random_on(d, s, 1, 4);
    double t = 0;
    for (int b = -2; b < batches; b++) { /* two batches of warm-up: pipeline, pools */
        if (td_sync(d) != TD_OK)
            bench_die("sync");
        const double t0 = bench_now();
        for (int i = 0; i < 200; i++) {
            td_tensor *y = NULL;
            if (td_float_add_scalar(x, 1.0f, &y) != TD_OK)
                bench_die("add_scalar");
            td_tensor_release(y);
        }
        if (b >= 0)
            t += bench_now() - t0;
    }
    if (td_sync(d) != TD_OK)
        bench_die("sync");
    td_tensor_release(x);
    td_device_release(d);
    return t / (200.0 * batches) * 1e9;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, "bench_vulkan",
                                   "Times add and matmul on Vulkan against the CPU, and the submits of a chain of ops.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *cpu = NULL, *vk = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK)
        bench_die("cpu");
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("bench_vulkan: no Vulkan device here (%s)\n", td_last_error());
        td_device_release(cpu);
        return 0;
    }
    td_device_info info;
    if (td_device_info_of(vk, &info) == TD_OK)
        printf("vulkan:%d is %s (%s)%s\n", info.index, info.name, info.type,
               info.software ? ": a software implementation, so these are overheads, not a GPU's speed" : "");
    printf("us per op: median [min-max] of %d rounds, each timing cpu then vulkan; \"noisy\": rounds spread over "
           "%.0f%%\n",
           o.rounds, BENCH_NOISE * 100.0);
    printf("%-18s %34s %34s %8s%-6s   %7s %7s\n", "op", "cpu us", "vulkan us", "vk/cpu", "", "cpu GF", "vk GF");
    const int64_t n1[] = { 1 << 20 };
    compare("add 1M elements", cpu, vk, td_float_add, n1, n1, 1, (int)(50 * o.scale) + 1, 0, o.rounds);
    for (int64_t n = 256; n <= 1024; n *= 2) {
        const int64_t s[] = { n, n };
        char label[64];
        snprintf(label, sizeof label, "matmul %lldx%lld", (long long)n, (long long)n);
        compare(label, cpu, vk, td_float_matmul, s, s, 2, (int)((n >= 1024 ? 2 : 10) * o.scale) + 1,
                2.0 * (double)(n * n * n), o.rounds);
    }

    /* Submits for a chain of 100 elementwise ops, read back at the end. */
    const int64_t s[] = { 1024 };
    td_tensor *x = bench_random_on(vk, s, 1, 3);
    long sub0, disp0, sub1, disp1;
    td_sync(vk);
    td_vulkan_stats(vk, &sub0, &disp0);
    for (int i = 0; i < 100; i++) {
        td_tensor *y = NULL;
        if ((i % 2 ? td_float_mul_scalar(x, 0.5f, &y) : td_float_add_scalar(x, 1.0f, &y)) != TD_OK)
            bench_die("chain");
        td_tensor_release(x);
        x = y;
    }
    float out[1024];
    if (td_float_into_data(x, out, 1024) != TD_OK)
        bench_die("into_data");
    td_vulkan_stats(vk, &sub1, &disp1);
    printf("chain of 100 elementwise ops + readback: %ld dispatches, %ld submits (%.3f submits per op)\n",
           disp1 - disp0, sub1 - sub0, (double)(sub1 - sub0) / 100.0);
    td_tensor_release(x);
    td_device_release(vk); /* the last reference: the lock rows open their own devices */

    bench_rounds tl = { 0 }, tu = { 0 }, ratio = { 0 };
    const int batches = (int)(50 * o.scale) + 2;
    for (int r = 0; r < 3 * o.rounds; r++) {
        const double l = time_small_ops(r % 2 == 0, batches), u = time_small_ops(r % 2 != 0, batches);
        bench_add(&tl, r % 2 == 0 ? l : u);
        bench_add(&tu, r % 2 == 0 ? u : l);
        bench_add(&ratio, r % 2 == 0 ? l / u : u / l);
    }
    char bl[64], bu[64];
    printf("device lock, add_scalar of 4 elements, host time recorded: ns per op locked %s, unlocked (TD_VULKAN_DEVICE_LOCK=0) %s, "
           "locked/unlocked %.3f [%.3f-%.3f]\n", bench_fmt(&tl, bl, sizeof bl), bench_fmt(&tu, bu, sizeof bu),
           bench_median(&ratio), bench_min(&ratio), bench_max(&ratio));
    td_device_release(cpu);
    return 0;
}
