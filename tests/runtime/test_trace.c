/* The op trace (td_trace_start / td_trace_stop, TD_TRACE): one Chrome-trace event per op
 * call, per backward node; a well-formed file; nothing written when it is off; errors. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "td_ops.h"
#include "tdt.h"

static char path[256];

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p != NULL; p = strstr(p + 1, what))
        n++;
    return n;
}

static void test_trace_of_ops_and_backward(void **state)
{
    (void)state;
    td_device *cpu = NULL, *ad = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "open");
    tdt_check(td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad), "autodiff");
    static const float x[] = { 1, 2, 3, 4, 5, 6 };
    static const int64_t s23[] = { 2, 3 };
    td_tensor *a = NULL, *b = NULL, *c = NULL, *l = NULL, *d = NULL, *e = NULL;
    tdt_check(td_float_from_data(ad, x, s23, 2, &a), "a");
    tdt_check(td_require_grad(a), "require_grad");

    snprintf(path, sizeof path, "/tmp/td_trace_test_%ld.json", (long)getpid());
    tdt_check(td_trace_start(path), "trace_start");
    tdt_check(td_float_exp(a, &b), "exp");             /* 1 */
    tdt_check(td_float_mul(a, b, &c), "mul");          /* 2 */
    tdt_check(td_float_sum(c, &l), "sum");             /* 3 */
    assert_int_equal(td_float_add(a, NULL, &d), TD_E_NULL); /* 4: failures are traced too */
    td_grads *g = NULL;
    tdt_check(td_backward(l, &g), "backward");        /* backward nodes: sum, mul, exp */
    tdt_check(td_trace_stop(), "trace_stop");
    tdt_check(td_float_neg(a, &e), "neg after stop"); /* not traced */

    char *s = slurp(path);
    assert_true(strncmp(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 38) == 0);
    assert_non_null(strstr(s, "\n]}\n"));
    assert_int_equal(count(s, "\"name\":\"float_exp\",\"cat\":\"autodiff(cpu)\""), 1);
    assert_int_equal(count(s, "\"name\":\"float_mul\",\"cat\":\"autodiff(cpu)\""), 1);
    assert_int_equal(count(s, "\"name\":\"float_sum\",\"cat\":\"autodiff(cpu)\""), 1);
    assert_int_equal(count(s, "\"name\":\"float_add\",\"cat\":\"autodiff(cpu)\""), 1);
    assert_non_null(strstr(s, "\"status\":0,\"inputs\":\"[2, 3] [2, 3]\""));
    char failed[64];
    snprintf(failed, sizeof failed, "\"status\":%d,\"inputs\":\"[2, 3] NULL\"", (int)TD_E_NULL);
    assert_non_null(strstr(s, failed));
    assert_int_equal(count(s, "\"name\":\"backward float_sum\""), 1);
    assert_int_equal(count(s, "\"name\":\"backward float_mul\""), 1);
    assert_int_equal(count(s, "\"name\":\"backward float_exp\""), 1);
    assert_int_equal(count(s, "\"name\":\"float_neg\",\"cat\":\"autodiff(cpu)\""), 0);
    /* every event is one object with ph X */
    assert_int_equal(count(s, "\"ph\":\"X\""), count(s, "{\"name\":"));
    free(s);
    remove(path);

    td_grads_release(g);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_tensor_release(l);
    td_tensor_release(e);
    td_device_release(ad);
    td_device_release(cpu);
}

static void test_trace_errors(void **state)
{
    (void)state;
    assert_int_equal(td_trace_start(NULL), TD_E_NULL);
    assert_int_equal(td_trace_start("/nonexistent-dir/x/trace.json"), TD_E_INVALID);
    assert_non_null(strstr(td_last_error(), "/nonexistent-dir/x/trace.json"));
    /* stopping when nothing runs is fine, and twice too */
    tdt_check(td_trace_stop(), "stop");
    tdt_check(td_trace_stop(), "stop again");
}

static void test_restart_replaces_file(void **state)
{
    (void)state;
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "open");
    char p2[256];
    snprintf(path, sizeof path, "/tmp/td_trace_a_%ld.json", (long)getpid());
    snprintf(p2, sizeof p2, "/tmp/td_trace_b_%ld.json", (long)getpid());
    td_tensor *z = NULL;
    static const int64_t s1[] = { 4 };
    tdt_check(td_trace_start(path), "start a");
    tdt_check(td_float_zeros(cpu, s1, 1, &z), "zeros");
    td_tensor_release(z);
    tdt_check(td_trace_start(p2), "start b closes a");
    tdt_check(td_float_ones(cpu, s1, 1, &z), "ones");
    td_tensor_release(z);
    tdt_check(td_trace_stop(), "stop");
    char *a = slurp(path), *b = slurp(p2);
    assert_int_equal(count(a, "\"name\":\"float_zeros\",\"cat\":\"cpu\""), 1);
    assert_int_equal(count(a, "float_ones"), 0);
    assert_non_null(strstr(a, "\n]}\n"));
    assert_int_equal(count(b, "\"name\":\"float_ones\",\"cat\":\"cpu\""), 1);
    assert_int_equal(count(b, "float_zeros"), 0);
    free(a);
    free(b);
    remove(path);
    remove(p2);
    td_device_release(cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_of_ops_and_backward),
        cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_restart_replaces_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
