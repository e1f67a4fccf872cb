/* CPU backend: the thread count of the kernels (td_set_num_threads, TD_NUM_THREADS) and how it
 * reaches OpenMP, OpenBLAS and other OpenMP-threaded libraries on every calling thread. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu_internal.h"

#if defined(TD_HAVE_CBLAS)
/* OpenBLAS's own setter; a weak reference, so a CBLAS without it (reference BLAS) links too. */
void openblas_set_num_threads(int n) __attribute__((weak));
#endif

/* The count every parallel region of the kernels asks for; 0 until the first use reads
 * TD_NUM_THREADS (or OpenMP's default). */
static atomic_int g_threads;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_env_note[128]; /* why TD_NUM_THREADS was ignored, "" when it was not */

/* The default wait policy, chosen by measurement (bench_cnn --load; README, "Performance").
 * libgomp's own makes a thread that waits for work or at a barrier spin first (300000
 * rounds, milliseconds). On a machine whose cores are busy with other processes those
 * spinning threads take the time slices the working ones need: the CNN step went from 36 ms
 * to 162 ms with one spinning process per core (OMP_WAIT_POLICY=passive: 3.8 and 6.1 ms;
 * one thread: 4.7 and 24.5 ms; GOMP_SPINCOUNT=1000: 6.2 and 31 ms). The library cannot pick
 * passive for the user: libgomp reads its environment once, in its constructor, before any
 * code of ours runs, and a setenv from .preinit_array does not survive either (libc's own
 * constructor, which runs next, resets environ to the one on the stack; tried). What the
 * library can do is stop asking for a team while the calling thread is being preempted:
 * then no thread of ours spins at a barrier waiting for one that has no core, the pool's
 * threads go to sleep, and the step costs what one thread on a shared core costs. Each
 * calling thread watches its own involuntary context switches (getrusage RUSAGE_THREAD)
 * over windows of BUSY_WINDOW_MS: from BUSY_ON in a window it runs its regions on one
 * thread for BUSY_HOLD_MS, and again while that time saw BUSY_STAY per window or more
 * (flipping back after every quiet window cost more than it saved). It stays off when the user chose a wait
 * policy (OMP_WAIT_POLICY, GOMP_SPINCOUNT: passive does better than this) or set
 * TD_BUSY_THREADS=keep; TD_BUSY_THREADS=shrink forces it on. Measured the same way (AMD
 * EPYC, 2 cores shared with other people's builds, so "no load" is not idle): this policy
 * 5.1 and 16.3 ms, against keep's 37.9 and 419 ms. */
#define BUSY_WINDOW_MS 20
#define BUSY_HOLD_MS 250
#define BUSY_ON 2.0
#define BUSY_STAY 1.0
/* The switch rate alone misses a heavily loaded machine, where the thread runs a slice and
 * then waits through several: test_num_threads_busy_shrink (3 spinners beside other builds,
 * load average 10-11) saw no team of one in 93-118 loops of about 45 ms each. So a window
 * also counts as busy when the thread was switched out involuntarily at least once and got
 * (its CPU time) under BUSY_SHARE_ON of the window's wall time; it stays busy under
 * BUSY_SHARE_STAY. A thread that sleeps on its own (I/O, a pause between calls) loses wall
 * time without involuntary switches and is not counted. */
#define BUSY_SHARE_ON 0.6
#define BUSY_SHARE_STAY 0.8

enum { SHRINK_UNSET = 0, SHRINK_ON, SHRINK_OFF };
static atomic_int g_shrink;
static const char *g_wait_note = "";

typedef struct busy_state {
    int64_t t0_ms;   /* start of the current window; 0 before the first */
    long nivcsw0;    /* involuntary switches at its start */
    double cpu0_ms;  /* the thread's CPU time (user + system) at its start */
    bool busy;
} busy_state;
static _Thread_local busy_state t_busy;
static atomic_int g_blas_applied;   /* the count OpenBLAS was last given */

static void init_wait_policy(void)
{
    const char *v = getenv("TD_BUSY_THREADS");
    const bool user_wait = getenv("OMP_WAIT_POLICY") != NULL || getenv("GOMP_SPINCOUNT") != NULL ||
                           getenv("KMP_BLOCKTIME") != NULL;
    int mode = user_wait ? SHRINK_OFF : SHRINK_ON;
    g_wait_note = user_wait ? "OpenMP wait policy from the environment"
                            : "one thread while preempted (TD_BUSY_THREADS; OMP_WAIT_POLICY=passive is better)";
    if (v != NULL && strcmp(v, "keep") == 0) {
        mode = SHRINK_OFF;
        g_wait_note = "TD_BUSY_THREADS=keep";
    } else if (v != NULL && strcmp(v, "shrink") == 0) {
        mode = SHRINK_ON;
        g_wait_note = "one thread while preempted (TD_BUSY_THREADS=shrink)";
    } else if (v != NULL && *v != '\0') {
        g_wait_note = "TD_BUSY_THREADS ignored (not keep or shrink)";
    }
#if !defined(_OPENMP) || !defined(RUSAGE_THREAD)
    mode = SHRINK_OFF;
#endif
#ifndef _OPENMP
    g_wait_note = "";
#endif
    atomic_store(&g_shrink, mode);
}

/* Whether the calling thread is being preempted now (see above). */
static bool preempted(void)
{
#if defined(RUSAGE_THREAD)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    const int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1;
    busy_state *b = &t_busy;
    const int64_t span = now - b->t0_ms;
    if (b->t0_ms != 0 && span < (b->busy ? BUSY_HOLD_MS : BUSY_WINDOW_MS))
        return b->busy;
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return false;
    const double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
    if (b->t0_ms != 0) {
        /* switches per BUSY_WINDOW_MS over the span measured, and the share of it run */
        const long d = ru.ru_nivcsw - b->nivcsw0;
        const double per = (double)d * BUSY_WINDOW_MS / (double)span;
        const double share = (cpu - b->cpu0_ms) / (double)span;
        b->busy = per >= (b->busy ? BUSY_STAY : BUSY_ON) ||
                  (d >= 1 && share < (b->busy ? BUSY_SHARE_STAY : BUSY_SHARE_ON));
    }
    b->t0_ms = now;
    b->nivcsw0 = ru.ru_nivcsw;
    b->cpu0_ms = cpu;
    return b->busy;
#else
    return false;
#endif
}

static int default_threads(void)
{
#ifdef _OPENMP
    /* OMP_NUM_THREADS where set, else the processors this process may run on. */
    const int n = omp_get_max_threads();
    return n >= 1 ? (n > TD_CPU_MAX_THREADS ? TD_CPU_MAX_THREADS : n) : 1;
#else
    return 1;
#endif
}

/* Parses a thread count: 1 to TD_CPU_MAX_THREADS, decimal, nothing else. */
static bool parse_count(const char *s, int *out)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < 1 || v > TD_CPU_MAX_THREADS)
        return false;
    *out = (int)v;
    return true;
}

static void apply_libraries(int n)
{
#if defined(TD_HAVE_CBLAS)
    if (openblas_set_num_threads != NULL)
        openblas_set_num_threads(n);
#endif
    (void)n;
}

static void init_once(void)
{
    init_wait_policy();
    int n = default_threads();
    const char *env = getenv("TD_NUM_THREADS");
    if (env != NULL && *env != '\0') {
        int v = 0;
        if (parse_count(env, &v))
            n = v;
        else
            snprintf(g_env_note, sizeof g_env_note, "TD_NUM_THREADS='%.40s' ignored (not 1 to %d)", env,
                     TD_CPU_MAX_THREADS);
    }
#ifndef _OPENMP
    n = 1;
#endif
    apply_libraries(n);
    atomic_store(&g_blas_applied, n);
    atomic_store(&g_threads, n);
}

/* The count set, whatever the load: td_get_num_threads. */
static int configured(void)
{
    int n = atomic_load_explicit(&g_threads, memory_order_relaxed);
    if (n > 0)
        return n;
    pthread_once(&g_once, init_once);
    return atomic_load(&g_threads);
}

int td_cpu_threads(void)
{
    const int n = configured();
    if (n > 1 && atomic_load_explicit(&g_shrink, memory_order_relaxed) == SHRINK_ON && preempted())
        return 1;
    return n;
}

int td_cpu_apply_threads(void)
{
#ifdef _OPENMP
    /* Inside a parallel region the ICV would belong to that region's task only, and a
     * library called there (OpenBLAS) runs on its calling thread anyway. */
    if (omp_in_parallel())
        return 1;
    const int n = td_cpu_threads();
    /* Read back, not remembered: libgomp does not keep what omp_set_num_threads set on this
     * thread across the regions that follow. With the last count set kept in a thread-local
     * (set only when it changed), the ICV read 2 again at 9842 of 9906 calls after one
     * omp_set_num_threads(1) (bench_cnn on a busy machine, libgomp of GCC 12), so every
     * oneDNN region ran 2 threads while the kernels ran 1, and both threads spun in libgomp
     * for most of the step. */
    if (omp_get_max_threads() != n)
        omp_set_num_threads(n);
    /* OpenBLAS's OpenMP build keeps one count for the process and follows the calling
     * thread's ICV, except that once it is 1 it stays 1: give it the count again. */
    if (atomic_exchange(&g_blas_applied, n) != n)
        apply_libraries(n);
    return n;
#else
    return 1;
#endif
}

const char *td_cpu_threads_note(void)
{
    (void)configured();
    return g_env_note;
}

td_status td_set_num_threads(int n)
{
    if (n < 1 || n > TD_CPU_MAX_THREADS)
        return td_error(TD_E_INVALID, "set_num_threads: %d threads: the count must be 1 to %d", n,
                        TD_CPU_MAX_THREADS);
    (void)configured(); /* the first use reads TD_NUM_THREADS; a later set wins over it */
#ifndef _OPENMP
    n = 1; /* accepted, but a build without OpenMP runs every kernel on the calling thread */
#endif
    atomic_store(&g_threads, n);
    td_cpu_apply_threads();
    return TD_OK;
}

int td_get_num_threads(void)
{
    return configured();
}

const char *td_cpu_wait_note(void)
{
    (void)configured();
    return g_wait_note;
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

td_status td_testing_cpu_team(int64_t n, int *distinct)
{
    if (distinct == NULL || n < 0 || n > ((int64_t)1 << 30))
        return td_error(TD_E_INVALID, "testing_cpu_team: bad arguments");
    atomic_int seen[TD_CPU_MAX_THREADS];
    for (int i = 0; i < TD_CPU_MAX_THREADS; i++)
        atomic_init(&seen[i], 0);
    /* The same macro as the kernels, so this counts the team they get. */
    TD_CPU_FOR(i, n, {
        const int id = thread_num();
        (void)i;
        if (id >= 0 && id < TD_CPU_MAX_THREADS)
            atomic_store_explicit(&seen[id], 1, memory_order_relaxed);
    });
    int c = 0;
    for (int i = 0; i < TD_CPU_MAX_THREADS; i++)
        c += atomic_load(&seen[i]);
    *distinct = c;
    return TD_OK;
}
