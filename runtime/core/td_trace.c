/* The op trace: one Chrome-trace (Trace Event Format) event per op entry, per backward
 * node and per Vulkan submit, written as a JSON file that Perfetto and chrome://tracing
 * open. Off by default; the generated entries test one relaxed atomic flag. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "td_internal.h"

atomic_bool td_trace_flag;

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;       /* under trace_lock */
static int64_t trace_events;   /* under trace_lock */
static uint64_t trace_origin;  /* the start, in ns */
static atomic_int next_tid = 1;
static _Thread_local int my_tid;

uint64_t td_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void close_locked(void)
{
    if (trace_file == NULL)
        return;
    fputs("\n]}\n", trace_file);
    fclose(trace_file);
    trace_file = NULL;
}

td_status td_trace_start(const char *path)
{
    if (path == NULL)
        return td_err_null("trace_start", "path");
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return td_error(TD_E_INVALID, "trace_start: cannot open '%s' for writing", path);
    pthread_mutex_lock(&trace_lock);
    atomic_store(&td_trace_flag, false);
    close_locked();
    trace_file = f;
    trace_events = 0;
    trace_origin = td_trace_now();
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
    atomic_store(&td_trace_flag, true);
    pthread_mutex_unlock(&trace_lock);
    return TD_OK;
}

td_status td_trace_stop(void)
{
    pthread_mutex_lock(&trace_lock);
    atomic_store(&td_trace_flag, false);
    close_locked();
    pthread_mutex_unlock(&trace_lock);
    return TD_OK;
}

/* TD_TRACE=path starts a trace with the first device opened and ends it at exit. */
static void trace_exit(void)
{
    td_trace_stop();
}

static void trace_from_env(void)
{
    const char *path = getenv("TD_TRACE");
    if (path != NULL && path[0] != '\0' && td_trace_start(path) == TD_OK)
        atexit(trace_exit);
}

void td_trace_init_from_env(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, trace_from_env);
}

/* Appends s to buf as a JSON string body (quotes and controls escaped). */
static size_t put_escaped(char *buf, size_t at, size_t cap, const char *s)
{
    for (; *s != '\0' && at + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[at++] = '\\';
            buf[at++] = (char)c;
        } else if (c < 0x20) {
            at += (size_t)snprintf(buf + at, cap - at, "\\u%04x", c);
        } else {
            buf[at++] = (char)c;
        }
    }
    buf[at] = '\0';
    return at;
}

void td_trace_event(const char *name, const char *cat, uint64_t t0, uint64_t t1, const char *args)
{
    if (my_tid == 0)
        my_tid = atomic_fetch_add(&next_tid, 1);
    char ev[1024];
    size_t n = (size_t)snprintf(ev, sizeof ev, "{\"name\":\"");
    n = put_escaped(ev, n, sizeof ev - 200, name);
    n += (size_t)snprintf(ev + n, sizeof ev - n, "\",\"cat\":\"");
    n = put_escaped(ev, n, sizeof ev - 160, cat);
    pthread_mutex_lock(&trace_lock);
    if (trace_file != NULL) {
        const uint64_t from = t0 > trace_origin ? t0 - trace_origin : 0;
        const uint64_t dur = t1 > t0 ? t1 - t0 : 0;
        /* ts and dur are in microseconds, with ns precision */
        fprintf(trace_file, "%s\n%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%" PRIu64 ".%03u,\"dur\":%" PRIu64 ".%03u%s%s%s}",
                trace_events > 0 ? "," : "", ev, my_tid, from / 1000u, (unsigned)(from % 1000u), dur / 1000u,
                (unsigned)(dur % 1000u), args != NULL ? ",\"args\":{" : "", args != NULL ? args : "",
                args != NULL ? "}" : "");
        trace_events++;
    }
    pthread_mutex_unlock(&trace_lock);
}

void td_trace_op(const char *op, const td_tensor *const *ins, int nins, const td_device *device, uint64_t t0,
                 td_status st)
{
    const uint64_t t1 = td_trace_now();
    char cat[64] = "none", args[700];
    const td_tensor *first = nins > 0 ? ins[0] : NULL;
    if (first != NULL) {
        if (first->kind == TD_BACKEND_AUTODIFF && first->inner != NULL)
            snprintf(cat, sizeof cat, "autodiff(%s)", td_backend_name(first->inner->kind));
        else
            snprintf(cat, sizeof cat, "%s", td_backend_name(first->kind));
    } else if (device != NULL) {
        if (device->backend == TD_BACKEND_AUTODIFF && device->inner != NULL)
            snprintf(cat, sizeof cat, "autodiff(%s)", td_backend_name(device->inner->backend));
        else
            snprintf(cat, sizeof cat, "%s", td_backend_name(device->backend));
    }
    size_t n = (size_t)snprintf(args, sizeof args, "\"status\":%d,\"inputs\":\"", (int)st);
    for (int i = 0; i < nins && n + 80 < sizeof args; i++) {
        char s[160];
        if (ins[i] == NULL)
            snprintf(s, sizeof s, "NULL");
        else
            td_shape_format(&ins[i]->shape, s, sizeof s);
        n += (size_t)snprintf(args + n, sizeof args - n, "%s%s", i > 0 ? " " : "", s);
    }
    if (n + 2 < sizeof args)
        snprintf(args + n, sizeof args - n, "\"");
    else
        memcpy(args + sizeof args - 2, "\"", 2);
    td_trace_event(op, cat, t0, t1, args);
}
