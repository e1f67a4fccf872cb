/* bench/matmul: float_matmul through the API (on the engine the cpu backend picks, or the one
 * TD_CPU_ENGINE names) against the sgemm engines called directly on the same data, in one
 * run: oneDNN's dnnl_sgemm and CBLAS's cblas_sgemm, where the build has them. Each round
 * times every variant at each size one after the other; the figure is the best direct
 * engine's time over the API's (1.0: the API is as fast as the fastest sgemm here; the target
 * is 0.9 or more). The API's result is allocated per call, as a user gets it; the direct
 * calls write into a buffer allocated once. Run it again with OPENBLAS_CORETYPE=Prescott to
 * see what a mis-detected OpenBLAS costs.
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
#endif
#ifdef TD_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

/* m x k @ k x n */
typedef struct size3 {
    int m, k, n;
} size3;

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

enum { DIRECT_DNNL, DIRECT_CBLAS, NDIRECT };
static const char *const direct_name[NDIRECT] = { "dnnl_sgemm", "cblas_sgemm" };

static bool direct_built(int e)
{
#ifdef TD_HAVE_DNNL
    if (e == DIRECT_DNNL)
        return true;
#endif
#ifdef TD_HAVE_CBLAS
    if (e == DIRECT_CBLAS)
        return true;
#endif
    (void)e;
    return false;
}

static double time_direct(int e, const float *a, const float *b, float *c, size3 s, int iters)
{
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
#ifdef TD_HAVE_DNNL
        if (e == DIRECT_DNNL && dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c, s.n) != dnnl_success)
            bench_die("dnnl_sgemm");
#endif
#ifdef TD_HAVE_CBLAS
        if (e == DIRECT_CBLAS)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c, s.n);
#endif
    }
    (void)a, (void)b, (void)c, (void)s, (void)e;
    return (bench_now() - t0) / iters;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 7 };
    const int parsed = bench_parse(argc, argv, BENCH_PROG,
                                   "Times float_matmul (128, 512, 1024 square; 64x784 @ 784x128, 1024x64 @ 64x1024) "
                                   "against dnnl_sgemm and cblas_sgemm called directly.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    if (!direct_built(DIRECT_DNNL) && !direct_built(DIRECT_CBLAS)) {
        printf("bench_matmul: this build has neither oneDNN nor CBLAS (matmul uses the portable kernel): nothing to "
               "compare\n");
        return 0;
    }
    enum { NSIZES = 5 };
    static const size3 sizes[NSIZES] = { { 128, 128, 128 }, { 512, 512, 512 }, { 1024, 1024, 1024 },
                                         { 64, 784, 128 },   { 1024, 64, 1024 } };
    td_device *dev = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        bench_die("device_open");
    td_tensor *ta[NSIZES], *tb[NSIZES];
    float *ha[NSIZES], *hb[NSIZES], *hc[NSIZES];
    int iters[NSIZES];
    for (int s = 0; s < NSIZES; s++) {
        const size3 z = sizes[s];
        const int64_t sa[] = { z.m, z.k }, sb[] = { z.k, z.n };
        ta[s] = bench_random_on(dev, sa, 2, 10 + (uint64_t)s);
        tb[s] = bench_random_on(dev, sb, 2, 20 + (uint64_t)s);
        ha[s] = malloc(sizeof(float) * (size_t)z.m * (size_t)z.k);
        hb[s] = malloc(sizeof(float) * (size_t)z.k * (size_t)z.n);
        hc[s] = malloc(sizeof(float) * (size_t)z.m * (size_t)z.n);
        if (ha[s] == NULL || hb[s] == NULL || hc[s] == NULL)
            bench_die("malloc");
        if (td_float_into_data(ta[s], ha[s], (int64_t)z.m * z.k) != TD_OK ||
            td_float_into_data(tb[s], hb[s], (int64_t)z.k * z.n) != TD_OK)
            bench_die("into_data");
        /* about 0.2 s of work per variant and round at scale 1 (at 20 GFLOP/s) */
        const double flops = 2.0 * z.m * z.n * (double)z.k;
        iters[s] = (int)(o.scale * 4e9 / flops) + 1;
    }
    bench_rounds ratio[NSIZES], api_us[NSIZES], direct_us[NDIRECT][NSIZES];
    memset(ratio, 0, sizeof ratio);
    memset(api_us, 0, sizeof api_us);
    memset(direct_us, 0, sizeof direct_us);
    int met[NSIZES] = { 0 };
    for (int r = 0; r < o.rounds; r++) {
        for (int s = 0; s < NSIZES; s++) {
            (void)time_api(ta[s], tb[s], 1); /* warm: the pooled result block, the threads */
            const double t_api = time_api(ta[s], tb[s], iters[s]);
            double best = 0.0;
            for (int e = 0; e < NDIRECT; e++) {
                if (!direct_built(e))
                    continue;
                (void)time_direct(e, ha[s], hb[s], hc[s], sizes[s], 1);
                const double t = time_direct(e, ha[s], hb[s], hc[s], sizes[s], iters[s]);
                bench_add(&direct_us[e][s], t * 1e6);
                best = best == 0.0 || t < best ? t : best;
            }
            bench_add(&api_us[s], t_api * 1e6);
            bench_add(&ratio[s], best / t_api);
            met[s] += best / t_api >= 0.9;
        }
    }
    printf("bench_matmul: %d rounds; us: median [min-max]; ratio: the best direct sgemm's time / float_matmul's "
           "(1.0: the API is as fast as the fastest engine)\n",
           o.rounds);
    for (int s = 0; s < NSIZES; s++) {
        const size3 z = sizes[s];
        char a[96], c[96], v[128], d[2][96];
        const double gflops = 2.0 * z.m * z.n * (double)z.k / (bench_median(&api_us[s]) * 1e3);
        printf("  %4d x %4d @ %4d x %4d: float_matmul %s us (%.1f GFLOP/s)", z.m, z.k, z.k, z.n,
               bench_fmt(&api_us[s], a, sizeof a), gflops);
        for (int e = 0; e < NDIRECT; e++)
            if (direct_built(e))
                printf(", %s %s us", direct_name[e], bench_fmt(&direct_us[e][s], d[e], sizeof d[e]));
        printf(", ratio %s; target >= 0.9: %s\n", bench_fmt(&ratio[s], c, sizeof c),
               bench_verdict(met[s], o.rounds, v, sizeof v));
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
}
