/* Shared by the benchmarks that time under load: a competing load that the bench itself
 * starts and stops (one child process spinning per processor this process may run on),
 * always reaped (at exit, on SIGINT/SIGTERM, and a child dies with its parent), the --load
 * option, and the PyTorch reference (bench/torch_ref.py) run when /usr/bin/python3 has torch.
 * One copy per program: the state is static. The program defines _GNU_SOURCE before its
 * first include (sched_getaffinity, CPU_COUNT). */
#ifndef BENCH_LOAD_H
#define BENCH_LOAD_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_LOAD_MAX 256

static pid_t bench_load_pids[BENCH_LOAD_MAX];
static volatile sig_atomic_t bench_load_n;
static bool bench_load_hooked;
/* Whether the spinners stay in this process's session (--load-same-session) instead of each
 * starting its own (setsid), as another user's jobs run. Linux's autogroup scheduling
 * (/proc/sys/kernel/sched_autogroup_enabled) shares the processors between sessions first:
 * spinners in the bench's own session take their time out of the bench's share. */
static bool bench_load_same_session;

/* How the load runs, for the benches' output lines. */
static inline const char *bench_load_kind(void)
{
    return bench_load_same_session ? "in this process's session" : "each in its own session";
}

/* The processors this process may run on. */
static inline int bench_load_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Stops the load: kills and reaps every child (async-signal-safe). */
static inline void bench_load_stop(void)
{
    const int n = (int)bench_load_n;
    for (int i = 0; i < n; i++)
        kill(bench_load_pids[i], SIGKILL);
    for (int i = 0; i < n; i++)
        while (waitpid(bench_load_pids[i], NULL, 0) < 0 && errno == EINTR) {
        }
    bench_load_n = 0;
}

static inline void bench_load_on_signal(int sig)
{
    bench_load_stop();
    signal(sig, SIG_DFL);
    raise(sig);
}

static inline void bench_load_atexit(void)
{
    bench_load_stop();
}

/* Starts one spinning child per processor, then waits 50 ms so they are running. Returns
 * the number started (0 and a message on stderr if fork failed; what was started is
 * stopped again). */
static inline int bench_load_start(void)
{
    if (!bench_load_hooked) {
        atexit(bench_load_atexit);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = bench_load_on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        bench_load_hooked = true;
    }
    bench_load_stop();
    int want = bench_load_cpus();
    want = want > BENCH_LOAD_MAX ? BENCH_LOAD_MAX : want;
    const pid_t parent = getpid();
    fflush(NULL);
    for (int i = 0; i < want; i++) {
        const pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "bench: fork for the load failed: %s\n", strerror(errno));
            bench_load_stop();
            return 0;
        }
        if (pid == 0) {
            /* the child: die with the parent, then spin; nothing else of the program runs here */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(0);
            if (!bench_load_same_session)
                (void)setsid();
            volatile unsigned long x = 0;
            for (;;)
                x = x + 1;
        }
        bench_load_pids[i] = pid;
        bench_load_n = i + 1;
    }
    const struct timespec ramp = { 0, 50 * 1000 * 1000 };
    nanosleep(&ramp, NULL);
    return want;
}

/* Takes --load and --load-same-session out of argv (so bench_parse does not see them);
 * returns whether either was there. */
/* After a loaded round the library may keep its parallel regions on one thread for a while
 * (runtime/cpu/cpu_threads.c: 250 ms holds, renewed while the windows behind them were
 * busy). A bench calls this before each "no load" round after the first: it runs `step`
 * untimed for BENCH_LOAD_SETTLE_MS, so "no load" is the step on the threads the library
 * takes when nothing competes, not a one-thread step that flatters the ratio. */
#define BENCH_LOAD_SETTLE_MS 1000.0
static inline void bench_load_settle(void (*step)(void *), void *arg)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        step(arg);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6 < BENCH_LOAD_SETTLE_MS);
}

static inline bool bench_load_flag(int *argc, char **argv)
{
    bool found = false;
    int j = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--load") == 0) {
            found = true;
            continue;
        }
        if (strcmp(argv[i], "--load-same-session") == 0) {
            found = true;
            bench_load_same_session = true;
            continue;
        }
        argv[j++] = argv[i];
    }
    *argc = j;
    argv[j] = NULL;
    return found;
}

/* For --help: the line of --load. */
static inline void bench_load_help(void)
{
    printf("  --load       also time under a competing load (one spinning process per processor,\n"
           "               started and stopped here) and print loaded / unloaded; with torch for\n"
           "               /usr/bin/python3, PyTorch's same step too (bench/torch_ref.py); each\n"
           "               spinner in its own session, as other users' jobs are\n"
           "  --load-same-session  the same, the spinners in this process's session (under\n"
           "               autogroup scheduling they then share this process's part of the CPUs)\n");
}

/* ---- the PyTorch reference ---- */

#define BENCH_TORCH_PY "/usr/bin/python3"

/* Whether /usr/bin/python3 imports torch. */
static inline bool bench_torch_available(void)
{
    if (access(BENCH_TORCH_PY, X_OK) != 0)
        return false;
    return system(BENCH_TORCH_PY " -c 'import torch' >/dev/null 2>&1") == 0;
}

/* Runs cmd (torch_ref.py) and reads its line for model. */
static inline bool bench_torch_cmd(const char *cmd, const char *model, double *median_ms)
{
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        fprintf(stderr, "bench: cannot run %s\n", cmd);
        return false;
    }
    char line[512];
    bool got = false;
    while (fgets(line, sizeof line, p) != NULL) {
        char m[16];
        int th = 0;
        double med = 0, lo = 0, hi = 0;
        if (sscanf(line, "torch_ref %15s %d step_ms %lf %lf %lf", m, &th, &med, &lo, &hi) == 5 &&
            strcmp(m, model) == 0) {
            *median_ms = med;
            got = true;
        }
    }
    const int st = pclose(p);
    if (st != 0 || !got) {
        fprintf(stderr, "bench: %s failed (status %d) or printed no result\n", cmd, st);
        return false;
    }
    return true;
}

/* Runs torch_ref.py for model ("cnn" or "mlp") with `rounds` rounds of `iters` steps and
 * reads its "torch_ref <model> <threads> step_ms <median> <min> <max>" line into *median_ms.
 * Returns false (and says why on stderr) when the script failed or printed no such line. */
static inline bool bench_torch_run(const char *script, const char *model, int rounds, long iters,
                                   double *median_ms)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, BENCH_TORCH_PY " '%s' --model=%s --rounds=%d --iters=%ld --threads=2", script, model,
             rounds, iters);
    return bench_torch_cmd(cmd, model, median_ms);
}

/* The same with OMP_WAIT_POLICY=passive for PyTorch's libgomp (its best setting on a busy
 * machine, as ours), the environment otherwise as given. */
static inline bool bench_torch_run_passive(const char *script, const char *model, int rounds, long iters,
                                           double *median_ms)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "OMP_WAIT_POLICY=passive " BENCH_TORCH_PY " '%s' --model=%s --rounds=%d --iters=%ld "
             "--threads=2", script, model, rounds, iters);
    return bench_torch_cmd(cmd, model, median_ms);
}

/* PyTorch's step in ms: libgomp's default wait policy and passive, each without the load and
 * under it. False when a run failed (said on stderr). */
typedef struct bench_torch_figs {
    double def_un, def_lo, pas_un, pas_lo;
} bench_torch_figs;

static inline bool bench_torch_figures(const char *script, const char *model, int rounds, long iters,
                                       bench_torch_figs *f)
{
    if (!bench_torch_run(script, model, rounds, iters, &f->def_un) ||
        !bench_torch_run_passive(script, model, rounds, iters, &f->pas_un))
        return false;
    if (bench_load_start() == 0)
        return false;
    const bool ok = bench_torch_run(script, model, rounds, iters, &f->def_lo) &&
                    bench_torch_run_passive(script, model, rounds, iters, &f->pas_lo);
    bench_load_stop();
    return ok;
}
#endif
