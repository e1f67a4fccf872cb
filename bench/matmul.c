/* bench/matmul: float_matmul through the API against the CBLAS sgemm the CPU backend
 * calls, called directly on the same data, in one run. Each round times both at each size
 * one after the other; the figure is sgemm's time over the API's (1.0: no overhead; the
 * target is 0.9 or more). The API's result is allocated per call, as a user gets it; the
 * direct call writes into a buffer allocated once.
 *   bench_matmul [--scale=X] [--rounds=N] [--help] */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BENCH_PROG "bench_matmul"
#include "bench_common.h"
#include "td_ops.h"

#ifdef TD_HAVE_CBLAS
#include <cblas.h>

static double time_api(const td_tensor *a, const td_tensor *b, int iters)
{
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        td_tensor *c = NULL;
        if (td_float_matmul(a, b, &c) != TD_OK)
            bench_die("matmul");
        td_tensor_release(c);
    }
    return (bench_now() - t0) / iters;
}

static double time_sgemm(const float *a, const float *b, float *c, int n, int iters)
{
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    return (bench_now() - t0) / iters;
}
#endif

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 7 };
    const int parsed = bench_parse(argc, argv, BENCH_PROG,
                                   "Times float_matmul (128, 512, 1024 square) against cblas_sgemm called directly.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
#ifndef TD_HAVE_CBLAS
    printf("bench_matmul: this build has no CBLAS (matmul uses the portable kernel): nothing to compare\n");
    return 0;
#else
    enum { NSIZES = 3 };
    static const int sizes[NSIZES] = { 128, 512, 1024 };
    td_device *dev = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        bench_die("device_open");
    td_tensor *ta[NSIZES], *tb[NSIZES];
    float *ha[NSIZES], *hb[NSIZES], *hc[NSIZES];
    int iters[NSIZES];
    for (int s = 0; s < NSIZES; s++) {
        const int n = sizes[s];
        const int64_t shape[] = { n, n };
        ta[s] = bench_random_on(dev, shape, 2, 10 + (uint64_t)s);
        tb[s] = bench_random_on(dev, shape, 2, 20 + (uint64_t)s);
        ha[s] = malloc(sizeof(float) * (size_t)n * (size_t)n);
        hb[s] = malloc(sizeof(float) * (size_t)n * (size_t)n);
        hc[s] = malloc(sizeof(float) * (size_t)n * (size_t)n);
        if (ha[s] == NULL || hb[s] == NULL || hc[s] == NULL)
            bench_die("malloc");
        if (td_float_into_data(ta[s], ha[s], (int64_t)n * n) != TD_OK ||
            td_float_into_data(tb[s], hb[s], (int64_t)n * n) != TD_OK)
            bench_die("into_data");
        /* about 0.2 s of work per variant and round at scale 1 (at 20 GFLOP/s) */
        const double flops = 2.0 * n * n * (double)n;
        iters[s] = (int)(o.scale * 4e9 / flops) + 1;
    }
    bench_rounds ratio[NSIZES], api_ms[NSIZES], blas_ms[NSIZES];
    memset(ratio, 0, sizeof ratio);
    memset(api_ms, 0, sizeof api_ms);
    memset(blas_ms, 0, sizeof blas_ms);
    int met[NSIZES] = { 0 };
    for (int r = 0; r < o.rounds; r++) {
        for (int s = 0; s < NSIZES; s++) {
            (void)time_api(ta[s], tb[s], 1); /* warm: the pooled result block, the threads */
            (void)time_sgemm(ha[s], hb[s], hc[s], sizes[s], 1);
            const double t_api = time_api(ta[s], tb[s], iters[s]);
            const double t_blas = time_sgemm(ha[s], hb[s], hc[s], sizes[s], iters[s]);
            bench_add(&api_ms[s], t_api * 1e3);
            bench_add(&blas_ms[s], t_blas * 1e3);
            bench_add(&ratio[s], t_blas / t_api);
            met[s] += t_blas / t_api >= 0.9;
        }
    }
    printf("bench_matmul: %d rounds; sgemm time / float_matmul time (1.0: the API adds nothing)\n", o.rounds);
    for (int s = 0; s < NSIZES; s++) {
        char a[96], b[96], c[96], v[128];
        const double gflops = 2.0 * sizes[s] * sizes[s] * (double)sizes[s] / (bench_median(&api_ms[s]) * 1e6);
        printf("  %4d x %4d: float_matmul %s ms (%.1f GFLOP/s), cblas_sgemm %s ms, ratio %s; target >= 0.9: %s\n",
               sizes[s], sizes[s], bench_fmt(&api_ms[s], a, sizeof a), gflops, bench_fmt(&blas_ms[s], b, sizeof b),
               bench_fmt(&ratio[s], c, sizeof c), bench_verdict(met[s], o.rounds, v, sizeof v));
    }
    for (int s = 0; s < NSIZES; s++) {
        td_tensor_release(ta[s]);
        td_tensor_release(tb[s]);
        free(ha[s]);
        free(hb[s]);
        free(hc[s]);
    }
    td_device_release(dev);
    return 0;
#endif
}
