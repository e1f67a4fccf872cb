/* bench/vulkan: elementwise add and matmul on Vulkan against the CPU, and how many queue
 * submits a chain of elementwise ops costs, in one run. On lavapipe (software Vulkan) the
 * figures show overheads only; on a GPU the same program measures the GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "td_ops.h"
#include "td_vulkan.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_vulkan: %s: %s\n", what, td_last_error());
    exit(1);
}

static td_tensor *random_on(td_device *d, const int64_t *shape, int ndim, uint64_t seed)
{
    td_tensor *t = NULL;
    if (td_float_random(d, shape, ndim, TD_UNIFORM, -1.0f, 1.0f, seed, &t) != TD_OK)
        die("random");
    return t;
}

typedef td_status (*binary_fn)(const td_tensor *, const td_tensor *, td_tensor **);

/* Seconds per op, best of rounds; each round ends with a sync so queued work counts. */
static double time_op(td_device *d, binary_fn f, const td_tensor *a, const td_tensor *b, int iters)
{
    double best = 1e300;
    for (int round = 0; round < 5; round++) {
        double t0 = now_s();
        for (int i = 0; i < iters; i++) {
            td_tensor *r = NULL;
            if (f(a, b, &r) != TD_OK)
                die("op");
            td_tensor_release(r);
        }
        if (td_sync(d) != TD_OK)
            die("sync");
        double t = (now_s() - t0) / iters;
        best = t < best ? t : best;
    }
    return best;
}

static void compare(const char *label, td_device *cpu, td_device *vk, binary_fn f, const int64_t *sa,
                    const int64_t *sb, int ndim, int iters, double flops)
{
    td_tensor *ca = random_on(cpu, sa, ndim, 1), *cb = random_on(cpu, sb, ndim, 2);
    td_tensor *va = random_on(vk, sa, ndim, 1), *vb = random_on(vk, sb, ndim, 2);
    double tc = time_op(cpu, f, ca, cb, iters), tv = time_op(vk, f, va, vb, iters);
    printf("%-22s %12.1f %12.1f %10.2f", label, tc * 1e6, tv * 1e6, tv / tc);
    if (flops > 0)
        printf("   %7.2f %7.2f", flops / tc / 1e9, flops / tv / 1e9);
    printf("\n");
    td_tensor_release(ca);
    td_tensor_release(cb);
    td_tensor_release(va);
    td_tensor_release(vb);
}

int main(void)
{
    td_device *cpu = NULL, *vk = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK)
        die("cpu");
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("bench_vulkan: no Vulkan device here (%s)\n", td_last_error());
        td_device_release(cpu);
        return 0;
    }
    printf("%-22s %12s %12s %10s   %7s %7s\n", "op", "cpu us", "vulkan us", "vk/cpu", "cpu GF", "vk GF");
    const int64_t n1[] = { 1 << 20 };
    compare("add 1M elements", cpu, vk, td_float_add, n1, n1, 1, 50, 0);
    for (int64_t n = 256; n <= 1024; n *= 2) {
        const int64_t s[] = { n, n };
        char label[64];
        snprintf(label, sizeof label, "matmul %lldx%lld", (long long)n, (long long)n);
        compare(label, cpu, vk, td_float_matmul, s, s, 2, n >= 1024 ? 2 : 10, 2.0 * (double)(n * n * n));
    }

    /* Submits for a chain of 100 elementwise ops, read back at the end. */
    const int64_t s[] = { 1024 };
    td_tensor *x = random_on(vk, s, 1, 3);
    long sub0, disp0, sub1, disp1;
    td_sync(vk);
    td_vulkan_stats(vk, &sub0, &disp0);
    for (int i = 0; i < 100; i++) {
        td_tensor *y = NULL;
        if ((i % 2 ? td_float_mul_scalar(x, 0.5f, &y) : td_float_add_scalar(x, 1.0f, &y)) != TD_OK)
            die("chain");
        td_tensor_release(x);
        x = y;
    }
    float out[1024];
    if (td_float_into_data(x, out, 1024) != TD_OK)
        die("into_data");
    td_vulkan_stats(vk, &sub1, &disp1);
    printf("chain of 100 elementwise ops + readback: %ld dispatches, %ld submits (%.3f submits per op)\n",
           disp1 - disp0, sub1 - sub0, (double)(sub1 - sub0) / 100.0);
    td_tensor_release(x);
    td_device_release(vk);
    td_device_release(cpu);
    return 0;
}
