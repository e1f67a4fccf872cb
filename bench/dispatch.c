/* bench/dispatch: cost of the generated dispatch against calling the CPU kernel directly.
 * "direct" does the same allocation and kernel call as the cpu arm, minus the entry
 * function's checks, shape rule and switch; the difference is what dispatch adds.
 * With --load, also the 1M-element add under a competing load (bench_load.h), round by
 * round against the same add without it.
 *   bench_dispatch [--scale=X] [--rounds=N] [--load] [--help] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_common.h"
#include "bench_load.h"
#include "td_internal.h" /* the direct call builds the result as the cpu arm does */
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

typedef struct result {
    bench_rounds api, direct, added, ratio;
} result;

/* rounds x (both variants, in alternating order): drift and load hit both alike, and each
 * round gives one paired difference. */
static void measure(case_ *c, long iters, int rounds, result *res)
{
    memset(res, 0, sizeof *res);
    run_api(c, iters / 10 + 1);
    run_direct(c, iters / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        double x, y;
        if (r % 2 == 0) {
            x = run_api(c, iters);
            y = run_direct(c, iters);
        } else {
            y = run_direct(c, iters);
            x = run_api(c, iters);
        }
        bench_add(&res->api, x);
        bench_add(&res->direct, y);
        bench_add(&res->added, x - y);
        bench_add(&res->ratio, x / y);
    }
}

static void print_line(const char *what, const bench_rounds *r, double unit)
{
    bench_rounds scaled = *r;
    for (int i = 0; i < scaled.n; i++)
        scaled.v[i] /= unit;
    char buf[96];
    printf("  %-10s %s\n", what, bench_fmt(&scaled, buf, sizeof buf));
}

static void print_result(const char *label, const result *r, double unit, const char *unit_name)
{
    printf("%s, %s per op: median [min-max]\n", label, unit_name);
    print_line("dispatch", &r->api, unit);
    print_line("direct", &r->direct, unit);
    print_line("added", &r->added, unit);
    printf("  %-10s %.3f [%.3f-%.3f]%s\n", "ratio", bench_median(&r->ratio), bench_min(&r->ratio),
           bench_max(&r->ratio), bench_noisy(&r->ratio) ? " noisy" : "");
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

static void add_cb(void *c)
{
    run_api((case_ *)c, 1);
}

/* The 1M add through the API, each round without the load and then with it. */
static void under_load(case_ *c, double scale, int rounds)
{
    const long iters = (long)(100 * scale) + 1;
    bench_rounds un = { 0 }, lo = { 0 }, ratio = { 0 };
    int spinners = 0;
    run_api(c, iters / 10 + 1);
    for (int r = 0; r < rounds; r++) {
        if (r > 0)
            bench_load_settle(add_cb, c); /* the library's busy holds expire first */
        const double u = run_api(c, iters);
        spinners = bench_load_start();
        if (spinners == 0)
            return;
        const double l = run_api(c, iters);
        bench_load_stop();
        bench_add(&un, u / 1e3);
        bench_add(&lo, l / 1e3);
        bench_add(&ratio, l / u);
    }
    char b1[96], b2[96];
    printf("1M-element float_add under load: %d spinning processes (one per processor, %s), %d threads; us per op: "
           "median [min-max] of %d rounds of %ld\n",
           spinners, bench_load_kind(), td_get_num_threads(), rounds, iters);
    printf("  %-10s %s\n  %-10s %s\n", "no load", bench_fmt(&un, b1, sizeof b1), "loaded", bench_fmt(&lo, b2, sizeof b2));
    printf("  loaded / unloaded: %.2f (median of the rounds' ratios)\n", bench_median(&ratio));
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 9 };
    const bool load = bench_load_flag(&argc, argv);
    const int parsed = bench_parse(argc, argv, "bench_dispatch",
                                   "Times float_add through the API against the direct cpu kernel call.", false, &o);
    if (parsed > 0)
        bench_load_help();
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *dev;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        die("device_open");
    printf("float_add on cpu through the API (dispatch) and by a direct kernel call: %d rounds, each\n"
           "timing both; \"noisy\" marks a figure whose rounds spread over %.0f%% of its median\n",
           o.rounds, BENCH_NOISE * 100.0);
    case_ small = make_case(dev, 1), big = make_case(dev, 1 << 20);
    result r1, rbig;
    measure(&small, (long)(2000000 * o.scale) + 1, o.rounds, &r1);
    print_result("1 element", &r1, 1.0, "ns");
    measure(&big, (long)(200 * o.scale) + 1, o.rounds, &rbig);
    print_result("1M elements (1048576)", &rbig, 1e3, "us");
    if (load)
        under_load(&big, o.scale, o.rounds);
    td_tensor_release(small.a);
    td_tensor_release(small.b);
    td_tensor_release(big.a);
    td_tensor_release(big.b);
    td_device_release(dev);

    int fast = 0, cheap = 0;
    for (int i = 0; i < r1.api.n; i++) {
        fast += r1.api.v[i] < 150.0;
        cheap += r1.added.v[i] < 10.0;
    }
    char v1[96], v2[96];
    printf("target: 1-element dispatch < 150 ns: %s\n", bench_verdict(fast, r1.api.n, v1, sizeof v1));
    printf("target: dispatch adds < 10 ns: %s\n", bench_verdict(cheap, r1.added.n, v2, sizeof v2));
    return 0;
}
