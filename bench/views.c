/* bench/views: reshape is a view (its spec says view = true): the result shares the
 * input's storage, so reshaping 16M floats costs what reshaping 16 does. Each round times
 * float_reshape of a 16-element and of a 16M-element tensor (make the view, release it),
 * and, for scale, one float_add_scalar of the 16M tensor (a kernel that has to move the
 * bytes, as a copying reshape did). Verdict: the 16M reshape within 2x of the 16-element
 * one, i.e. constant in the size.
 *   bench_views [--scale=X] [--rounds=N] [--help] */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BENCH_PROG "bench_views"
#include "bench_common.h"
#include "td_ops.h"

enum { BIG = 16 * 1024 * 1024, SMALL = 16 };

/* ns per reshape of t to `to` (ndim dims), over iters views made and released. */
static double time_reshape(const td_tensor *t, const int64_t *to, int ndim, long iters)
{
    const double t0 = bench_now();
    for (long i = 0; i < iters; i++) {
        td_tensor *v = NULL;
        if (td_float_reshape(t, to, ndim, &v) != TD_OK)
            bench_die("reshape");
        td_tensor_release(v);
    }
    return (bench_now() - t0) * 1e9 / (double)iters;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 7 };
    const int parsed = bench_parse(argc, argv, BENCH_PROG,
                                   "Times float_reshape (a view) of 16 and of 16M floats, and a 16M kernel for scale.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *dev = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        bench_die("device_open");
    const int64_t big1[] = { BIG }, big2[] = { 4096, 4096 }, small1[] = { SMALL }, small2[] = { 4, 4 };
    td_tensor *big = bench_random_on(dev, big1, 1, 1), *small = bench_random_on(dev, small1, 1, 2);
    const long iters = (long)(200000 * o.scale) + 1;
    const int copies = (int)(4 * o.scale) + 1;
    bench_rounds r_small = { 0 }, r_big = { 0 }, r_ratio = { 0 }, r_copy = { 0 };
    int met = 0;
    for (int r = 0; r < o.rounds; r++) {
        const double ns_small = time_reshape(small, small2, 2, iters);
        const double ns_big = time_reshape(big, big2, 2, iters);
        const double t0 = bench_now();
        for (int i = 0; i < copies; i++) {
            td_tensor *c = NULL;
            if (td_float_add_scalar(big, 1.0f, &c) != TD_OK)
                bench_die("add_scalar");
            td_tensor_release(c);
        }
        const double ns_copy = (bench_now() - t0) * 1e9 / copies;
        bench_add(&r_small, ns_small);
        bench_add(&r_big, ns_big);
        bench_add(&r_ratio, ns_big / ns_small);
        bench_add(&r_copy, ns_copy / 1e3);
        met += ns_big <= 2.0 * ns_small;
    }
    char a[96], b[96], c[96], d[96], v[128];
    printf("bench_views: %d rounds, %ld reshapes each (make the view, release it)\n", o.rounds, iters);
    printf("  reshape of 16 floats:            %s ns\n", bench_fmt(&r_small, a, sizeof a));
    printf("  reshape of 16M floats:           %s ns\n", bench_fmt(&r_big, b, sizeof b));
    printf("  16M / 16 (1.0: constant time):   %s\n", bench_fmt(&r_ratio, c, sizeof c));
    printf("  add_scalar over the 16M (moves the bytes a copy would): %s us\n", bench_fmt(&r_copy, d, sizeof d));
    printf("  target: the 16M reshape within 2x of the 16-element one: %s\n",
           bench_verdict(met, o.rounds, v, sizeof v));
    td_tensor_release(big);
    td_tensor_release(small);
    td_device_release(dev);
    return 0;
}
