/* bench/dispatch: cost of the generated dispatch against calling the CPU kernel directly.
 * "direct" does the same allocation and kernel call as the cpu arm, minus the entry
 * function's checks, shape rule and switch; the difference is what dispatch adds. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "td_backend_cpu.h"
#include "td_ops.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_dispatch: %s: %s\n", what, td_last_error());
    exit(1);
}

typedef struct case_ {
    td_tensor *a, *b;
} case_;

static double run_api(case_ *c, long iters)
{
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        td_tensor *r;
        if (td_float_add(c->a, c->b, &r) != TD_OK)
            die("float_add");
        td_tensor_release(r);
    }
    return (now_ns() - t0) / (double)iters;
}

static double run_direct(case_ *c, long iters)
{
    double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        td_tensor *r;
        if (td_tensor_new_on("float_add", c->a->device, TD_F32, &c->a->shape, &r) != TD_OK)
            die("alloc");
        if (td_cpu_float_add(c->a, c->b, r) != TD_OK)
            die("kernel");
        td_tensor_release(r);
    }
    return (now_ns() - t0) / (double)iters;
}

/* Best of several rounds, alternating the two variants so drift hits both alike. */
static void measure(const char *label, case_ *c, long iters, int rounds)
{
    double api = 1e300, direct = 1e300;
    run_api(c, iters / 10 + 1);
    run_direct(c, iters / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        double x = run_api(c, iters), y = run_direct(c, iters);
        api = x < api ? x : api;
        direct = y < direct ? y : direct;
    }
    printf("%-28s %12.1f %12.1f %10.1f %8.3f\n", label, api, direct, api - direct, api / direct);
}

static case_ make_case(td_device *dev, int64_t n)
{
    float *data = malloc(sizeof(float) * (size_t)n);
    if (data == NULL)
        die("malloc");
    for (int64_t i = 0; i < n; i++)
        data[i] = (float)(i % 97) * 0.25f;
    case_ c;
    if (td_float_from_data(dev, data, &n, 1, &c.a) != TD_OK || td_float_from_data(dev, data, &n, 1, &c.b) != TD_OK)
        die("from_data");
    free(data);
    return c;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    td_device *dev;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        die("device_open");
    printf("float_add on cpu: ns per op, best of 7 rounds\n");
    printf("%-28s %12s %12s %10s %8s\n", "case", "dispatch", "direct", "added", "ratio");
    case_ small = make_case(dev, 1), big = make_case(dev, 1 << 20);
    measure("1 element", &small, (long)(2000000 * scale) + 1, 7);
    measure("1M elements (1048576)", &big, (long)(200 * scale) + 1, 7);
    td_tensor_release(small.a);
    td_tensor_release(small.b);
    td_tensor_release(big.a);
    td_tensor_release(big.b);
    td_device_release(dev);
    printf("targets: 1-element dispatch < 150 ns; added < 10 ns\n");
    return 0;
}
