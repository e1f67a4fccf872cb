/* Shared by the benchmarks: command-line options, and the statistics of timing rounds
 * (median, range, and whether the rounds agree enough for a verdict). Each benchmark times
 * the variants it compares inside every round, one after the other, so a load that comes
 * and goes hits them alike; it reports medians over rounds and the range, calls a figure
 * "noisy" when its rounds spread too far, and prints a target's verdict only when every
 * round agrees on it. Each benchmark's first line names the CPU and the engines its kernels
 * run on (the cpu device's driver string), and that the machine may be shared. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bench_trace_cost (the one benchmark built with TD_TRACE_ON_MODULE) loads two builds of the
 * library with dlopen and links none: it has no device to describe. */
#ifndef TD_TRACE_ON_MODULE
#include "td_devices.h"
#endif
#include "../examples/cli.h" /* ex_bad_value */

#define BENCH_MAX_ROUNDS 101
/* Rounds whose range exceeds this fraction of their median are noisy. */
#define BENCH_NOISE 0.25

/* "bench_x: cpu AMD EPYC: tdispatch cpu kernels: OpenMP, 16 threads, matmul: oneDNN ...": the
 * CPU model and the engines (TD_CPU_ENGINE, OPENBLAS_CORETYPE change them), once per run. */
static inline void bench_print_cpu(const char *prog)
{
#ifndef TD_TRACE_ON_MODULE
    td_device_info info;
    if (td_device_info_get(TD_BACKEND_CPU, 0, &info) == TD_OK)
        printf("%s: cpu %s: %s (figures from a machine that may be shared: noisy)\n", prog, info.name, info.driver);
    else
        printf("%s: cpu device not described: %s\n", prog, td_last_error());
#else
    printf("%s: cpu engine not described (this benchmark loads the library as modules)\n", prog);
#endif
}

typedef struct bench_opts {
    double scale;  /* multiplies the iterations of a round */
    int rounds;
    long max_mib;  /* bench_dist_allreduce: the largest buffer */
} bench_opts;

/* Parses --scale=X, --rounds=N, --max-mib=N (when max_mib is wanted) and --help. Returns 0
 * to run, 1 after --help, -1 after a usage error (said on stderr). */
static inline int bench_parse(int argc, char **argv, const char *prog, const char *what, bool max_mib,
                              bench_opts *o)
{
    static const struct option longopts[] = {
        { "scale", required_argument, NULL, 's' },
        { "rounds", required_argument, NULL, 'r' },
        { "max-mib", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 's':
            o->scale = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(o->scale > 0.0) || o->scale > 1e6)
                goto bad;
            break;
        case 'r':
            o->rounds = (int)strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0' || o->rounds < 3 || o->rounds > BENCH_MAX_ROUNDS)
                goto bad;
            break;
        case 'm':
            if (!max_mib)
                goto unknown;
            o->max_mib = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0' || o->max_mib < 1 || o->max_mib > 4096)
                goto bad;
            break;
        case 'h':
            printf("usage: %s [--scale=X] [--rounds=N]%s [--help]\n  %s\n"
                   "  --scale=X    multiply the iterations of each round by X (default 1)\n"
                   "  --rounds=N   timing rounds, 3 to %d (default %d); figures are medians over them\n"
                   "%s"
                   "  --help       this text\n",
                   prog, max_mib ? " [--max-mib=N]" : "", what, BENCH_MAX_ROUNDS, o->rounds,
                   max_mib ? "  --max-mib=N  the largest buffer, in MiB (default 64)\n" : "");
            return 1;
        case ':':
            fprintf(stderr, "%s: option '%s' needs a value (see --help)\n", prog, argv[optind - 1]);
            return -1;
        default:
        unknown:
            fprintf(stderr, "%s: unknown option '%s' (see --help)\n", prog, argv[optind - 1]);
            return -1;
        }
        continue;
    bad:
        ex_bad_value(prog, argv, optind, optarg);
        return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s' (options start with --; see --help)\n", prog, argv[optind]);
        return -1;
    }
    bench_print_cpu(prog);
    return 0;
}

/* The values of one figure, one per round. */
typedef struct bench_rounds {
    int n;
    double v[BENCH_MAX_ROUNDS];
} bench_rounds;

static inline void bench_add(bench_rounds *r, double x)
{
    if (r->n < BENCH_MAX_ROUNDS)
        r->v[r->n++] = x;
}

static inline int bench_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(const bench_rounds *r)
{
    double s[BENCH_MAX_ROUNDS];
    memcpy(s, r->v, sizeof(double) * (size_t)r->n);
    qsort(s, (size_t)r->n, sizeof s[0], bench_cmp);
    return r->n % 2 ? s[r->n / 2] : 0.5 * (s[r->n / 2 - 1] + s[r->n / 2]);
}

static inline double bench_min(const bench_rounds *r)
{
    double m = r->v[0];
    for (int i = 1; i < r->n; i++)
        m = r->v[i] < m ? r->v[i] : m;
    return m;
}

static inline double bench_max(const bench_rounds *r)
{
    double m = r->v[0];
    for (int i = 1; i < r->n; i++)
        m = r->v[i] > m ? r->v[i] : m;
    return m;
}

/* Whether the rounds spread over more than BENCH_NOISE of their median (or change sign). */
static inline bool bench_noisy(const bench_rounds *r)
{
    const double lo = bench_min(r), hi = bench_max(r), med = bench_median(r);
    if (lo < 0.0 && hi > 0.0)
        return true;
    return hi - lo > BENCH_NOISE * fabs(med);
}

/* "53.1 [52.0-60.3]" (median [min-max]), with " noisy" when the rounds disagree. */
static inline const char *bench_fmt(const bench_rounds *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.1f [%.1f-%.1f]%s", bench_median(r), bench_min(r), bench_max(r),
             bench_noisy(r) ? " noisy" : "");
    return buf;
}

/* A target's verdict from the rounds that met it: "met" or "NOT met" when every round
 * agrees, otherwise "noisy: k of n rounds met it (a busy machine? run again)". */
static inline const char *bench_verdict(int met, int n, char *buf, size_t cap)
{
    if (met == n)
        snprintf(buf, cap, "met (all %d rounds)", n);
    else if (met == 0)
        snprintf(buf, cap, "NOT met (all %d rounds)", n);
    else
        snprintf(buf, cap, "noisy: %d of %d rounds met it (a busy machine? run again)", met, n);
    return buf;
}

/* For benchmarks that define BENCH_PROG (their name, for messages) before including this:
 * a monotonic clock, dying on a library error, and a uniform random float tensor. */
#ifdef BENCH_PROG
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "td_ops.h"

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", BENCH_PROG, what, td_last_error());
    exit(1);
}

static inline td_tensor *bench_random_on(td_device *d, const int64_t *shape, int ndim, uint64_t seed)
{
    td_tensor *t = NULL;
    if (td_float_random(d, shape, ndim, TD_UNIFORM, -1.0f, 1.0f, seed, &t) != TD_OK)
        bench_die("random");
    return t;
}

/* memcpy of `bytes` in one chunk per thread (threads <= 0: OpenMP's default team), iters
 * times; bytes read + written per second: the bandwidth the elementwise, dtype and decode
 * benchmarks set their rates against. */
static inline double bench_memcpy_rate(char *dst, const char *src, size_t bytes, int iters, int threads)
{
    const double t0 = bench_now();
    for (int it = 0; it < iters; it++) {
#ifdef _OPENMP
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads())
        {
            const size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
            const size_t lo = bytes * t / nt, hi = bytes * (t + 1) / nt;
            memcpy(dst + lo, src + lo, hi - lo);
        }
#else
        (void)threads;
        memcpy(dst, src, bytes);
#endif
    }
    return 2.0 * (double)bytes * iters / (bench_now() - t0);
}
#endif

#endif
