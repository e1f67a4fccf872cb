/* CPU backend: device enumeration (one device: the host) for td_device_count / td_device_info_*. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <unistd.h>
#include "cpu_internal.h"

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
#ifdef TD_HAVE_CBLAS
    const char *gemm = "CBLAS sgemm";
#else
    const char *gemm = "portable matmul";
#endif
    const char *note = td_cpu_threads_note();
    const char *wait = td_cpu_wait_note();
    snprintf(out->driver, sizeof out->driver, "tdispatch cpu kernels: %s, %d thread%s (td_set_num_threads, "
             "TD_NUM_THREADS)%s%s, %s%s%s", threading, threads, threads == 1 ? "" : "s", *note ? "; " : "", note, gemm,
             *wait ? "; " : "", wait);
    snprintf(out->type, sizeof out->type, "cpu");
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    out->software = false;
    return TD_OK;
}
