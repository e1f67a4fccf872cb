/* CPU backend: the thread count of the kernels (td_set_num_threads, TD_NUM_THREADS) and how it
 * reaches OpenMP, OpenBLAS and other OpenMP-threaded libraries on every calling thread. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu_internal.h"
#include "td_internal.h"

#if defined(TD_HAVE_CBLAS)
/* OpenBLAS's own setter; a weak reference, so a CBLAS without it (reference BLAS) links too. */
void openblas_set_num_threads(int n) __attribute__((weak));
#endif

/* The count every parallel region of the kernels asks for; 0 until the first use reads
 * TD_NUM_THREADS (or OpenMP's default). Bumping `generation` tells each calling thread that
 * its own OpenMP ICV (omp_set_num_threads is per thread) must be set again. */
static atomic_int g_threads;
static atomic_int g_generation;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_env_note[128]; /* why TD_NUM_THREADS was ignored, "" when it was not */
static _Thread_local int t_generation = -1;

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
    atomic_store(&g_threads, n);
}

int td_cpu_threads(void)
{
    int n = atomic_load_explicit(&g_threads, memory_order_relaxed);
    if (n > 0)
        return n;
    pthread_once(&g_once, init_once);
    return atomic_load(&g_threads);
}

void td_cpu_apply_threads(void)
{
    const int n = td_cpu_threads();
    const int gen = atomic_load_explicit(&g_generation, memory_order_relaxed);
    if (t_generation == gen)
        return;
#ifdef _OPENMP
    /* Inside a parallel region the ICV would belong to that region's task only, and a
     * library called there (OpenBLAS) runs on its calling thread anyway. */
    if (omp_in_parallel())
        return;
    omp_set_num_threads(n);
#endif
    t_generation = gen;
}

const char *td_cpu_threads_note(void)
{
    (void)td_cpu_threads();
    return g_env_note;
}

td_status td_set_num_threads(int n)
{
    if (n < 1 || n > TD_CPU_MAX_THREADS)
        return td_error(TD_E_INVALID, "set_num_threads: %d threads: the count must be 1 to %d", n,
                        TD_CPU_MAX_THREADS);
    (void)td_cpu_threads(); /* the first use reads TD_NUM_THREADS; a later set wins over it */
#ifndef _OPENMP
    n = 1; /* accepted, but a build without OpenMP runs every kernel on the calling thread */
#endif
    atomic_store(&g_threads, n);
    atomic_fetch_add(&g_generation, 1);
    apply_libraries(n);
    td_cpu_apply_threads();
    return TD_OK;
}

int td_get_num_threads(void)
{
    return td_cpu_threads();
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
