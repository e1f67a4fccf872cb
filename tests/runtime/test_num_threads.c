/* td_set_num_threads / td_get_num_threads / TD_NUM_THREADS: the count, its bad values, and
 * that a parallel loop of the kernels really runs on that many threads, from the thread that
 * set it and from other user threads. CTest also runs this program with TD_NUM_THREADS=3
 * and with bad values (tests/CMakeLists.txt); TDT_EXPECT_THREADS then says what the first
 * use must find, computed here from the environment and the affinity mask otherwise.
 * These run with TD_BUSY_THREADS=keep (set here unless given), so that a busy machine does
 * not shrink the teams they count; with TDT_SHRINK_TEST=1 (and TD_BUSY_THREADS=shrink) the
 * program instead checks that a team shrinks to one thread under a load it starts. */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

enum { BIG = 1 << 20 };

/* What OpenMP's default must be: OMP_NUM_THREADS when it is a plain count, else the
 * processors in this process's affinity mask. */
static int expected_default(void)
{
    const char *omp = getenv("OMP_NUM_THREADS");
    if (omp != NULL && *omp != '\0') {
        char *end = NULL;
        long v = strtol(omp, &end, 10);
        if (end != omp && *end == '\0' && v > 0)
            return (int)v;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    return 1;
}

/* Whether this build has OpenMP (tdinfo's cpu line): without it every count is run as 1. */
static bool have_openmp(void)
{
    td_device_info info;
    tdt_check(td_device_info_get(TD_BACKEND_CPU, 0, &info), "device_info_get");
    return strstr(info.driver, "no OpenMP") == NULL;
}

/* The count a build runs when asked for n. */
static int eff(int n)
{
    return have_openmp() ? n : 1;
}

/* Runs first: nothing has used threads yet, so this is the first use. */
static void first_use_reads_the_environment(void **state)
{
    (void)state;
    const char *want = getenv("TDT_EXPECT_THREADS");
    const int expect = eff(want != NULL ? atoi(want) : expected_default());
    assert_int_equal(td_get_num_threads(), expect);
    /* a bad TD_NUM_THREADS is named in tdinfo's cpu line */
    td_device_info info;
    tdt_check(td_device_info_get(TD_BACKEND_CPU, 0, &info), "device_info_get");
    const bool bad = getenv("TDT_BAD_ENV") != NULL;
    assert_true((strstr(info.driver, "ignored") != NULL) == bad);
    char count[32];
    snprintf(count, sizeof count, "%d thread", expect);
    assert_non_null(strstr(info.driver, count));
}

static void set_and_get(void **state)
{
    (void)state;
    for (int n = 1; n <= 4; n++) {
        tdt_check(td_set_num_threads(n), "set_num_threads");
        assert_int_equal(td_get_num_threads(), eff(n));
    }
    tdt_check(td_set_num_threads(1024), "set_num_threads 1024");
    assert_int_equal(td_get_num_threads(), eff(1024));
    tdt_check(td_set_num_threads(2), "set_num_threads");
}

static void bad_counts_fail_and_keep_the_count(void **state)
{
    (void)state;
    tdt_check(td_set_num_threads(3), "set_num_threads");
    const int bad[] = { 0, -1, 1025, INT_MAX, INT_MIN };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tdt_expect_error(td_set_num_threads(bad[i]), TD_E_INVALID, "set_num_threads");
        assert_non_null(strstr(td_last_error(), "1 to 1024"));
        assert_int_equal(td_get_num_threads(), eff(3));
    }
}

/* The team of a kernel loop is the count set, whatever it is, and 1 below the threshold. */
static void loops_run_on_that_many_threads(void **state)
{
    (void)state;
    for (int n = 1; n <= 4; n++) {
        tdt_check(td_set_num_threads(n), "set_num_threads");
        int distinct = 0;
        tdt_check(td_testing_cpu_team(BIG, &distinct), "testing_cpu_team");
        assert_int_equal(distinct, eff(n));
        tdt_check(td_testing_cpu_team(1000, &distinct), "testing_cpu_team");
        assert_int_equal(distinct, 1);
    }
    int d = 0;
    tdt_expect_error(td_testing_cpu_team(-1, &d), TD_E_INVALID, "testing_cpu_team");
    tdt_expect_error(td_testing_cpu_team(10, NULL), TD_E_INVALID, "testing_cpu_team");
}

static void *team_of_other_thread(void *arg)
{
    int *out = arg;
    if (td_testing_cpu_team(BIG, out) != TD_OK)
        *out = -1;
    return NULL;
}

/* omp_set_num_threads would have set only the calling thread: a thread started before or
 * after the change must get the same team. */
static void other_threads_see_the_count(void **state)
{
    (void)state;
    tdt_check(td_set_num_threads(3), "set_num_threads");
    int got = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, team_of_other_thread, &got), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(got, eff(3));
    tdt_check(td_set_num_threads(2), "set_num_threads");
    assert_int_equal(pthread_create(&th, NULL, team_of_other_thread, &got), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(got, eff(2));
}

/* A real kernel on several thread counts: a 1M-element add and sum against loops here. */
static void kernels_agree_on_any_count(void **state)
{
    (void)state;
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "device_open");
    float *a = malloc(sizeof(float) * BIG), *b = malloc(sizeof(float) * BIG);
    assert_non_null(a);
    assert_non_null(b);
    double want_sum = 0.0;
    for (int i = 0; i < BIG; i++) {
        a[i] = (float)(i % 1000) * 0.25f;
        b[i] = (float)(i % 7) - 3.0f;
        want_sum += (double)(a[i] + b[i]);
    }
    const int64_t shape[] = { BIG };
    td_tensor *ta = tdt_make_f32(cpu, a, shape, 1), *tb = tdt_make_f32(cpu, b, shape, 1);
    for (int n = 1; n <= 3; n++) {
        tdt_check(td_set_num_threads(n), "set_num_threads");
        td_tensor *c = NULL, *s = NULL;
        tdt_check(td_float_add(ta, tb, &c), "float_add");
        tdt_check(td_float_sum(c, &s), "float_sum");
        int64_t got_n = 0;
        float *got = tdt_read(c, &got_n);
        assert_int_equal(got_n, BIG);
        for (int i = 0; i < BIG; i++)
            if (got[i] != a[i] + b[i])
                fail_msg("add at %d with %d threads: %g, want %g", i, n, (double)got[i], (double)(a[i] + b[i]));
        float sum = 0.0f;
        tdt_check(td_float_into_data(s, &sum, 1), "into_data");
        assert_true(fabs((double)sum - want_sum) <= 1e-6 * want_sum);
        free(got);
        td_tensor_release(c);
        td_tensor_release(s);
    }
    td_tensor_release(ta);
    td_tensor_release(tb);
    td_device_release(cpu);
    free(a);
    free(b);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time (user + system, clock ticks) of every thread of this process but the calling
 * one, from /proc/self/task; -1 where /proc cannot be read. */
static long other_threads_ticks(void)
{
    const pid_t self = (pid_t)syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    long total = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == (int)self)
            continue;
        char path[320], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* the thread ended */
        const size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* after "(comm)": state is field 3, utime 14, stime 15 */
        const char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
            continue;
        total += (long)(ut + st);
    }
    closedir(d);
    return total;
}

static long own_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long)(((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9) * (double)sysconf(_SC_CLK_TCK));
}

/* A convolution run at 2 threads, then at 1: the second count must hold for the engine too.
 * oneDNN fixes a convolution's thread split when its primitive is made, so a primitive made
 * at 2 threads and reused at 1 ran its second thread anyway (cpu_dnnl.c keys its cache by
 * the count since). Measured from outside: after the count drops to 1, the threads other
 * than this one get next to no CPU time while this one runs convolutions (a second thread
 * doing its share would get about as much as this one). Any engine passes when it honours
 * the count: im2col + OpenBLAS, the portable loops. */
static void conv_follows_a_lowered_count(void **state)
{
    (void)state;
    if (!have_openmp() || other_threads_ticks() < 0)
        skip();
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "device_open");
    /* 16 -> 32 channels, 3x3, pad 1 on 16 x 28 x 28: 0.46 GFLOP a call, oneDNN's shape */
    const int64_t sx[] = { 16, 16, 28, 28 }, sw[] = { 32, 16, 3, 3 }, sb[] = { 32 }, one[] = { 1, 1 };
    td_tensor *x = NULL, *w = NULL, *b = NULL;
    tdt_check(td_float_random(cpu, sx, 4, TD_UNIFORM, -1.0f, 1.0f, 1, &x), "random");
    tdt_check(td_float_random(cpu, sw, 4, TD_UNIFORM, -0.1f, 0.1f, 2, &w), "random");
    tdt_check(td_float_random(cpu, sb, 1, TD_UNIFORM, -0.1f, 0.1f, 3, &b), "random");
    tdt_check(td_set_num_threads(2), "set_num_threads");
    for (int i = 0; i < 3; i++) {
        td_tensor *y = NULL;
        tdt_check(td_float_conv2d(x, w, b, one, 2, one, 2, one, 2, 1, &y), "conv2d");
        td_tensor_release(y);
    }
    tdt_check(td_set_num_threads(1), "set_num_threads");
    /* let OpenMP's idle workers stop spinning and sleep */
    const struct timespec pause = { 0, 300 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    const long o0 = other_threads_ticks(), m0 = own_ticks();
    const double t0 = now_s();
    long mine = 0;
    while (mine < 30 && now_s() - t0 < 20.0) { /* 0.3 s of this thread's CPU time */
        td_tensor *y = NULL;
        tdt_check(td_float_conv2d(x, w, b, one, 2, one, 2, one, 2, 1, &y), "conv2d");
        td_tensor_release(y);
        mine = own_ticks() - m0;
    }
    const long others = other_threads_ticks() - o0;
    tdt_check(td_set_num_threads(2), "set_num_threads");
    td_tensor_release(x);
    td_tensor_release(w);
    td_tensor_release(b);
    td_device_release(cpu);
    if (mine < 10)
        skip(); /* too little CPU time in 20 s to tell */
    if (others * 5 > mine)
        fail_msg("after td_set_num_threads(1), other threads took %ld ticks of CPU time while this one took %ld "
                 "running conv2d",
                 others, mine);
}

/* One spinning child per processor and one more: the calling thread is preempted, and its
 * loops run on one thread within seconds (each call is a 20 ms window at most). */
static void shrinks_while_preempted(void **state)
{
    (void)state;
    if (!have_openmp())
        skip();
    tdt_check(td_set_num_threads(2), "set_num_threads");
    enum { MAXP = 64 };
    pid_t kids[MAXP];
    int nk = expected_default() + 1;
    nk = nk > MAXP ? MAXP : nk;
    for (int i = 0; i < nk; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            volatile unsigned long x = 0;
            for (;;)
                x = x + 1;
        }
        assert_true(kids[i] > 0);
    }
    int ones = 0, calls = 0;
    const double t0 = now_s();
    while (now_s() - t0 < 5.0 && ones < 3) {
        int d = 0;
        if (td_testing_cpu_team(BIG, &d) != TD_OK)
            break;
        ones += d == 1;
        calls++;
    }
    for (int i = 0; i < nk; i++)
        kill(kids[i], SIGKILL);
    for (int i = 0; i < nk; i++)
        waitpid(kids[i], NULL, 0);
    assert_int_equal(td_get_num_threads(), 2); /* the count set does not change */
    if (ones < 3)
        fail_msg("teams of one thread: %d of %d loops in 5 s under %d spinning processes", ones, calls, nk);
}

int main(void)
{
    if (getenv("TDT_SHRINK_TEST") != NULL) {
        const struct CMUnitTest shrink[] = { TDT_TEST(shrinks_while_preempted) };
        return cmocka_run_group_tests(shrink, NULL, NULL);
    }
    setenv("TD_BUSY_THREADS", "keep", 0);
    const struct CMUnitTest tests[] = {
        TDT_TEST(first_use_reads_the_environment),
        TDT_TEST(set_and_get),
        TDT_TEST(bad_counts_fail_and_keep_the_count),
        TDT_TEST(loops_run_on_that_many_threads),
        TDT_TEST(other_threads_see_the_count),
        TDT_TEST(kernels_agree_on_any_count),
        TDT_TEST(conv_follows_a_lowered_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
