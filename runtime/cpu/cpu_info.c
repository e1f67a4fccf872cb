/* CPU backend: device enumeration (one device: the host) for td_device_count / td_device_info_*. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "cpu_internal.h"

#ifdef TD_HAVE_CBLAS
#include <cblas.h>
#endif

/* The OPENBLAS_CORETYPE that would make OpenBLAS use this CPU's vector units, when the core
 * it picked is older (Debian 12's 0.3.21 does not know newer Intel CPUs and falls back to
 * Prescott's SSE3 kernels); NULL when it is fine or this is not OpenBLAS. */
static const char *blas_core_fix(const char **core)
{
    *core = NULL;
#if defined(TD_HAVE_OPENBLAS) && (defined(__x86_64__) || defined(__i386__))
    *core = openblas_get_corename();
    __builtin_cpu_init();
    return td_cpu_blas_core_fix(*core, __builtin_cpu_supports("avx2") != 0, __builtin_cpu_supports("avx512f") != 0);
#else
    return NULL;
#endif
}

void td_cpu_blas_warn_once(void)
{
    static atomic_int said;
    if (atomic_load_explicit(&said, memory_order_relaxed) || atomic_exchange(&said, 1))
        return;
    const char *core;
    const char *fix = blas_core_fix(&core);
    if (fix != NULL)
        fprintf(stderr,
                "tdispatch: OpenBLAS runs its %s kernels, older than this CPU's vector units (sgemm at a fraction "
                "of its speed): set OPENBLAS_CORETYPE=%s\n",
                core, fix);
}

td_status td_cpu_device_count(int *count)
{
    *count = 1;
    return TD_OK;
}

/* The model name from /proc/cpuinfo where there is one (x86 Linux); "host CPU" otherwise. */
static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "host CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (v == NULL)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, cap, "%.*s", (int)strcspn(v, "\n"), v);
        break;
    }
    fclose(f);
}

td_status td_cpu_device_info(const td_device *device, int index, td_device_info *out)
{
    (void)device;
    out->index = index;
    cpu_model(out->name, sizeof out->name);
#ifdef _OPENMP
    const int threads = td_cpu_threads();
    const char *threading = "OpenMP";
#else
    const int threads = 1;
    const char *threading = "no OpenMP";
#endif
    /* the engines that run now (TD_CPU_ENGINE may lower them) and what they run on */
    char engines[160] = "matmul: portable loop, conv2d: im2col + portable loop";
    const td_cpu_engine_kind engine = td_cpu_engine();
    const char *core = NULL, *fix = NULL;
#ifdef TD_HAVE_CBLAS
    fix = blas_core_fix(&core);
    if (engine == TD_CPU_ENGINE_BLAS) {
        if (core != NULL)
            snprintf(engines, sizeof engines, "matmul: OpenBLAS sgemm (core %s), conv2d: im2col + OpenBLAS", core);
        else
            snprintf(engines, sizeof engines, "matmul: CBLAS sgemm, conv2d: im2col + CBLAS");
    }
#endif
#ifdef TD_HAVE_DNNL
    if (engine == TD_CPU_ENGINE_DNNL) {
        char v[32];
        td_cpu_dnnl_version(v, sizeof v);
        snprintf(engines, sizeof engines, "matmul: oneDNN %s sgemm, conv2d: oneDNN %s (ISA %s)", v, v,
                 td_cpu_dnnl_isa());
    }
#endif
    char warn[96] = "";
    if (fix != NULL && engine == TD_CPU_ENGINE_BLAS)
        snprintf(warn, sizeof warn, "; OpenBLAS core %s is older than this CPU: set OPENBLAS_CORETYPE=%s", core,
                 fix);
    else if (fix != NULL)
        snprintf(warn, sizeof warn, "; OpenBLAS (unused) core %s is older than this CPU", core);
    const char *note = td_cpu_threads_note();
    const char *wait = td_cpu_wait_note();
    char text[512];
    snprintf(text, sizeof text, "tdispatch cpu kernels: %s, %d thread%s (td_set_num_threads, TD_NUM_THREADS)%s%s, %s%s%s%s",
             threading, threads, threads == 1 ? "" : "s", *note ? "; " : "", note, engines, warn, *wait ? "; " : "",
             wait);
    snprintf(out->driver, sizeof out->driver, "%.255s", text);
    snprintf(out->type, sizeof out->type, "cpu");
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    out->software = false;
    return TD_OK;
}
