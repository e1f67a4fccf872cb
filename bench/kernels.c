/* bench/kernels: cpu kernels against the machine's memory bandwidth. Each round times a
 * memcpy of 64 MiB split over the same OpenMP threads as the kernels (bytes read + written
 * per second: the reference), then each kernel over 16M floats through the API; a kernel's
 * figure is its bytes moved per second (inputs read + result written) as a fraction of the
 * memcpy rate measured in that round. A plain read of the 64 MiB (no writes) is timed in each
 * round too: the ceiling of a kernel that only reads, such as sum.
 * The reference buffers come from malloc, as a user's would (4 KiB pages). The library's large
 * tensors ask for transparent huge pages (cpu_device.c), which alone can make memory-bound
 * code faster, so each round also times the memcpy and the read on buffers that ask for huge
 * pages as the library's do, and each kernel is also given as a fraction of that memcpy: the
 * part of a figure that the page size explains, and the part that is the kernel's.
 *   bench_kernels [--scale=X] [--rounds=N] [--help] */
#define _DEFAULT_SOURCE 1 /* madvise (sys/mman.h) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define BENCH_PROG "bench_kernels"
#include "bench_common.h"
#include "td_ops.h"

enum { N = 16 * 1024 * 1024, SIDE = 4096 };

/* Reads the same 64 MiB (no writes), one part per thread, as uint64 sums the compiler
 * vectorizes: bytes read per second. What a kernel that only reads (sum) can reach at most. */
static double read_rate(const char *src, size_t bytes, int iters)
{
    uint64_t sink = 0;
    const double t0 = bench_now();
    for (int it = 0; it < iters; it++) {
#ifdef _OPENMP
#pragma omp parallel reduction(^ : sink)
#endif
        {
#ifdef _OPENMP
            const size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
#else
            const size_t nt = 1, t = 0;
#endif
            const size_t lo = bytes * t / nt / 64 * 64, hi = t + 1 == nt ? bytes : bytes * (t + 1) / nt / 64 * 64;
            const uint64_t *p = (const uint64_t *)(const void *)(src + lo);
            uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            for (size_t i = 0; i + 4 <= (hi - lo) / 8; i += 4) {
                a0 += p[i];
                a1 += p[i + 1];
                a2 += p[i + 2];
                a3 += p[i + 3];
            }
            sink ^= a0 + a1 + a2 + a3;
        }
    }
    const double rate = (double)bytes * iters / (bench_now() - t0);
    volatile uint64_t keep = sink;
    (void)keep;
    return rate;
}

/* bytes of memory aligned to 2 MiB and asked to be on transparent huge pages where the system
 * offers them (as cpu_device.c does for large tensors), filled with c. */
static char *huge_buffer(size_t bytes, int c)
{
    char *p = aligned_alloc((size_t)2 << 20, bytes);
    if (p == NULL)
        bench_die("aligned_alloc");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    memset(p, c, bytes);
    return p;
}

typedef struct kernel {
    const char *name;
    double bytes;  /* moved per call */
    double target; /* of the memcpy rate; 0: none set */
} kernel;

static td_status run(int k, const td_tensor *x, const td_tensor *sq, td_tensor **out)
{
    static const int64_t dim0 = 0, dim1 = 1;
    switch (k) {
    case 0: return td_float_exp(x, out);
    case 1: return td_float_sigmoid(x, out);
    case 2: return td_float_tanh(x, out);
    case 3: return td_float_log(x, out);
    case 4: return td_float_gelu(x, out);
    case 5: return td_float_sin(x, out);
    case 6: return td_float_add(x, x, out);
    case 7: return td_float_sum(x, out);
    case 8: return td_float_max(x, out);
    case 9: return td_float_sum_dim(sq, dim0, out);
    case 10: return td_float_argmax(sq, dim1, out);
    default: return td_float_swap_dims(sq, dim0, dim1, out);
    }
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, "bench_kernels",
                                   "Times cpu kernels over 16M floats against the memcpy bandwidth of 64 MiB.", false,
                                   &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    const double B = 4.0 * N;
    const kernel ks[] = {
        { "exp", 2 * B, 0.5 },     { "sigmoid", 2 * B, 0.5 }, { "tanh", 2 * B, 0.5 },
        { "log", 2 * B, 0 },       { "gelu", 2 * B, 0 },      { "sin", 2 * B, 0 },
        { "add", 3 * B, 0 },       { "sum", B, 1.6 },         { "max", B, 0 },
        { "sum dim 0 4096^2", B, 0 }, { "argmax dim 1 4096^2", B, 0 }, { "transpose 4096^2", 2 * B, 0.5 },
    };
    const int nk = (int)(sizeof ks / sizeof ks[0]);
    td_device *dev;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        bench_die("device_open");
    float *host = malloc(sizeof(float) * N);
    char *src = malloc((size_t)B), *dst = malloc((size_t)B);
    if (host == NULL || src == NULL || dst == NULL)
        bench_die("malloc");
    for (int64_t i = 0; i < N; i++)
        host[i] = 0.5f + (float)(i % 1000) * 0.004f; /* in (0.5, 4.5): every kernel's domain */
    memcpy(src, host, (size_t)B);
    memset(dst, 0, (size_t)B);
    char *hsrc = huge_buffer((size_t)B, 1), *hdst = huge_buffer((size_t)B, 0);
    const int64_t n = N, sq_shape[2] = { SIDE, SIDE };
    td_tensor *x = NULL, *sq = NULL;
    if (td_float_from_data(dev, host, &n, 1, &x) != TD_OK || td_float_from_data(dev, host, sq_shape, 2, &sq) != TD_OK)
        bench_die("from_data");
    const int iters = (int)(4 * o.scale) + 1;
    bench_rounds mc = { 0 }, rd = { 0 }, hmc = { 0 }, hrd = { 0 }, ratio[16], hratio[16];
    memset(ratio, 0, sizeof ratio);
    memset(hratio, 0, sizeof hratio);
    for (int r = 0; r < o.rounds; r++) {
        const double ref = bench_memcpy_rate(dst, src, (size_t)B, iters, 0);
        const double href = bench_memcpy_rate(hdst, hsrc, (size_t)B, iters, 0);
        bench_add(&mc, ref / 1e9);
        bench_add(&hmc, href / 1e9);
        bench_add(&rd, read_rate(src, (size_t)B, iters) / ref);
        bench_add(&hrd, read_rate(hsrc, (size_t)B, iters) / href);
        for (int k = 0; k < nk; k++) {
            td_tensor *warm = NULL;
            if (run(k, x, sq, &warm) != TD_OK)
                bench_die(ks[k].name);
            td_tensor_release(warm);
            const double t0 = bench_now();
            for (int it = 0; it < iters; it++) {
                td_tensor *out = NULL;
                if (run(k, x, sq, &out) != TD_OK)
                    bench_die(ks[k].name);
                if (k == 7 || k == 8) { /* sum, max: wait for the value, as a user reading it would */
                    float v;
                    if (td_float_into_data(out, &v, 1) != TD_OK)
                        bench_die("into_data");
                }
                td_tensor_release(out);
            }
            const double rate = ks[k].bytes * iters / (bench_now() - t0);
            bench_add(&ratio[k], rate / ref);
            bench_add(&hratio[k], rate / href);
        }
    }
    char buf[96];
    printf("memcpy of 64 MiB over the kernels' threads: %s GB/s (read + written), median [min-max] of %d rounds\n",
           bench_fmt(&mc, buf, sizeof buf), o.rounds);
    printf("a plain read of the same 64 MiB (no writes) over those threads: %.3f [%.3f-%.3f]%s of that round's "
           "memcpy rate, about the most a kernel that only reads (sum) can reach on such memory\n",
           bench_median(&rd), bench_min(&rd), bench_max(&rd), bench_noisy(&rd) ? " noisy" : "");
    printf("on buffers that ask for huge pages, as the library's large tensors do (unless TD_CPU_HUGE_PAGES=0): "
           "memcpy %s GB/s; a plain read "
           "%.3f [%.3f-%.3f]%s of that memcpy\n",
           bench_fmt(&hmc, buf, sizeof buf), bench_median(&hrd), bench_min(&hrd), bench_max(&hrd),
           bench_noisy(&hrd) ? " noisy" : "");
    printf("kernel over 16M floats: bytes moved per second as a fraction of that round's memcpy rate (the target's "
           "reference), [and of the memcpy on huge pages]\n");
    for (int k = 0; k < nk; k++) {
        const bench_rounds *rr = &ratio[k];
        printf("  %-20s %.3f [%.3f-%.3f]%s  [%.3f]", ks[k].name, bench_median(rr), bench_min(rr), bench_max(rr),
               bench_noisy(rr) ? " noisy" : "", bench_median(&hratio[k]));
        if (ks[k].target > 0) {
            int met = 0;
            for (int i = 0; i < rr->n; i++)
                met += rr->v[i] >= ks[k].target;
            char v[96];
            printf("   target >= %.1f: %s", ks[k].target, bench_verdict(met, rr->n, v, sizeof v));
        }
        printf("\n");
    }
    td_tensor_release(x);
    td_tensor_release(sq);
    td_device_release(dev);
    free(host);
    free(src);
    free(dst);
    free(hsrc);
    free(hdst);
    return 0;
}
