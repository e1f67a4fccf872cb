/* bench/trace_cost: what the op trace costs each entry when it is off, measured in one run.
 * The library is built twice as loadable modules from the same sources: with the entries'
 * trace branch (a relaxed load of the trace flag and a predicted branch, as in libtdispatch)
 * and with -DTD_NO_TRACE, which compiles that branch out. Both are dlopen()ed (RTLD_LOCAL:
 * each keeps its own devices and caches), and a 1-element float_add on cpu is timed through
 * each, alternating many times within every round, so drift and load hit both alike; the
 * difference is what the trace branch costs when the trace is off.
 * Where a module lands in memory moves a 1-element op by a few ns either way (the same two
 * files measured in separate runs differ by -0.4 to +3 ns), so each build is loaded as
 * COPIES copies of its file, each at its own address, and every slice times them all: the
 * figures average over COPIES placements of each build instead of drawing one.
 *   bench_trace_cost [--scale=X] [--rounds=N] [--help] */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "td_ops.h"

#ifndef TD_TRACE_ON_MODULE
#error "TD_TRACE_ON_MODULE (path of the library module with the trace branch) is set by bench/CMakeLists.txt"
#endif
#ifndef TD_TRACE_OFF_MODULE
#error "TD_TRACE_OFF_MODULE (path of the library module built with TD_NO_TRACE) is set by bench/CMakeLists.txt"
#endif

/* The target of issue 13: tracing off costs less than this per dispatch. */
#define TARGET_NS 2.0
/* Loaded copies of each build. */
enum { COPIES = 4 };

/* One loaded build of the library: the functions the bench calls, and its tensors. */
typedef struct lib {
    const char *label, *path;
    void *handle;
    __typeof__(td_last_error) *last_error;
    __typeof__(td_device_open) *device_open;
    __typeof__(td_device_release) *device_release;
    __typeof__(td_float_from_data) *from_data;
    __typeof__(td_float_add) *add;
    __typeof__(td_tensor_release) *release;
    __typeof__(td_testing_live_objects) *live_objects;
    td_device *dev;
    td_tensor *a, *b;
} lib;

static void die_lib(const lib *l, const char *what)
{
    fprintf(stderr, "bench_trace_cost: %s (%s): %s\n", what, l->label, l->last_error());
    exit(1);
}

static void *sym(const lib *l, const char *name)
{
    void *p = dlsym(l->handle, name);
    if (p == NULL) {
        fprintf(stderr, "bench_trace_cost: %s has no symbol %s: %s\n", l->path, name, dlerror());
        exit(1);
    }
    return p;
}

/* Copies the file at from to to; 0 on success. */
static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in != NULL ? fopen(to, "wb") : NULL;
    int bad = in == NULL || out == NULL;
    char buf[1 << 16];
    size_t n;
    while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0)
        bad = fwrite(buf, 1, n, out) != n;
    bad |= in != NULL && ferror(in);
    if (in != NULL)
        fclose(in);
    if (out != NULL)
        bad |= fclose(out) != 0;
    return bad;
}

/* Loads l->path (a copy of the module: the loader maps one file once, however often it is
 * opened) and makes the bench's tensors with it. */
static void load(lib *l)
{
    l->handle = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
    if (l->handle == NULL) {
        fprintf(stderr, "bench_trace_cost: cannot load %s: %s\n", l->path, dlerror());
        exit(1);
    }
    /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
    *(void **)&l->last_error = sym(l, "td_last_error");
    *(void **)&l->device_open = sym(l, "td_device_open");
    *(void **)&l->device_release = sym(l, "td_device_release");
    *(void **)&l->from_data = sym(l, "td_float_from_data");
    *(void **)&l->add = sym(l, "td_float_add");
    *(void **)&l->release = sym(l, "td_tensor_release");
    *(void **)&l->live_objects = sym(l, "td_testing_live_objects");
    static const float one = 1.5f, two = 2.25f;
    const int64_t s1[] = { 1 };
    if (l->device_open(TD_BACKEND_CPU, 0, &l->dev) != TD_OK)
        die_lib(l, "device_open");
    if (l->from_data(l->dev, &one, s1, 1, &l->a) != TD_OK || l->from_data(l->dev, &two, s1, 1, &l->b) != TD_OK)
        die_lib(l, "from_data");
}

/* Releases what load made; 1 when something of this build leaked. */
static int unload(lib *l)
{
    l->release(l->a);
    l->release(l->b);
    l->device_release(l->dev);
    const long live = l->live_objects();
    if (live != 0) {
        fprintf(stderr, "bench_trace_cost: %ld handles leaked (%s)\n", live, l->label);
        return 1;
    }
    /* Not dlclose()d: the modules stay loaded until exit, as a linked library would. */
    return 0;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Total ns of iters 1-element adds through l. */
static double time_adds(const lib *l, long iters)
{
    const double t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        td_tensor *r;
        if (l->add(l->a, l->b, &r) != TD_OK)
            die_lib(l, "float_add");
        l->release(r);
    }
    return now_ns() - t0;
}

static void line(const char *what, const bench_rounds *r)
{
    char buf[96];
    printf("    %-44s %s\n", what, bench_fmt(r, buf, sizeof buf));
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 9 };
    const int parsed = bench_parse(argc, argv, "bench_trace_cost",
                                   "Times a 1-element float_add through the library with and without the entries' "
                                   "trace branch (TD_NO_TRACE); the difference is what tracing off costs.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    /* A trace started from the environment would be on in one build only. */
    unsetenv("TD_TRACE");
    char dir[] = "/tmp/bench_trace_cost.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("bench_trace_cost: mkdtemp");
        return 1;
    }
    static char paths[2 * COPIES][sizeof dir + 32];
    lib on[COPIES], off[COPIES];
    for (int c = 0; c < COPIES; c++) {
        snprintf(paths[2 * c], sizeof paths[0], "%s/on%d.so", dir, c);
        snprintf(paths[2 * c + 1], sizeof paths[0], "%s/off%d.so", dir, c);
        on[c] = (lib){ .label = "trace branch", .path = paths[2 * c] };
        off[c] = (lib){ .label = "TD_NO_TRACE", .path = paths[2 * c + 1] };
        if (copy_file(TD_TRACE_ON_MODULE, on[c].path) != 0 || copy_file(TD_TRACE_OFF_MODULE, off[c].path) != 0) {
            fprintf(stderr, "bench_trace_cost: cannot copy the modules into %s\n", dir);
            return 1;
        }
        load(&on[c]);
        load(&off[c]);
    }
    /* Mapped now: the files can go. */
    for (int c = 0; c < 2 * COPIES; c++)
        unlink(paths[c]);
    rmdir(dir);

    /* Each round: SLICES alternations of a slice of adds through each build, the order
     * flipping every slice; the round's figures are the medians over its slices (of each
     * build, and of the paired differences), so a burst of load that hits a few slices
     * does not move them. */
    enum { SLICES = 100 };
    const long slice = (long)(5000 * o.scale) + 1;
    for (int c = 0; c < COPIES; c++) {
        time_adds(&on[c], slice);
        time_adds(&off[c], slice);
    }
    bench_rounds t_on = { 0 }, t_off = { 0 }, diff = { 0 };
    int met = 0;
    for (int r = 0; r < o.rounds; r++) {
        bench_rounds s_on = { 0 }, s_off = { 0 }, s_diff = { 0 };
        for (int k = 0; k < SLICES; k++) {
            double x = 0.0, y = 0.0;
            for (int c = 0; c < COPIES; c++) {
                if ((k + r + c) % 2 == 0) {
                    x += time_adds(&on[c], slice);
                    y += time_adds(&off[c], slice);
                } else {
                    y += time_adds(&off[c], slice);
                    x += time_adds(&on[c], slice);
                }
            }
            const double per = (double)slice * COPIES;
            bench_add(&s_on, x / per);
            bench_add(&s_off, y / per);
            bench_add(&s_diff, (x - y) / per);
        }
        const double d = bench_median(&s_diff);
        bench_add(&t_on, bench_median(&s_on));
        bench_add(&t_off, bench_median(&s_off));
        bench_add(&diff, d);
        met += d < TARGET_NS;
    }
    printf("1-element float_add on cpu, ns per op: median [min-max] over %d rounds of the median of %d slices of "
           "%ld per copy, %d loaded copies of each build;\n\"noisy\" marks a figure whose rounds spread over %.0f%% of "
           "its median\n",
           o.rounds, SLICES, slice, COPIES, BENCH_NOISE * 100.0);
    line("with the trace branch, tracing off", &t_on);
    line("trace branch compiled out (TD_NO_TRACE)", &t_off);
    line("  tracing off costs (difference)", &diff);
    char v[96];
    printf("    target (issue 13): tracing off costs < %.0f ns per dispatch: %s\n", TARGET_NS,
           bench_verdict(met, o.rounds, v, sizeof v));
    int leaked = 0;
    for (int c = 0; c < COPIES; c++) {
        leaked |= unload(&on[c]);
        leaked |= unload(&off[c]);
    }
    return leaked;
}
