/* Device choice across backends: td_device_parse ("cpu", "vulkan:1", "toy:0"), the
 * environment variable TD_DEVICE, and the default order when neither names a device.
 * The toy fixture is loaded as a module, so a second backend (with one software device)
 * is there whatever this build has. The expected ranks are written here, from the
 * documented order, not taken from the library. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "td_devices.h"
#include "tdt.h"

static td_backend toy = TD_BACKEND_COUNT;

static int setup(void **state)
{
    (void)state;
    unsetenv("TD_DEVICE");
    return td_backend_load(TOY_MODULE, &toy) == TD_OK ? 0 : -1;
}

/* status st with a message holding each of the NULL-ended fragments. */
static void fails_with(td_status st, td_status want, ...)
{
    assert_int_equal(st, want);
    const char *msg = td_last_error();
    va_list ap;
    va_start(ap, want);
    for (const char *part = va_arg(ap, const char *); part != NULL; part = va_arg(ap, const char *)) {
        if (strstr(msg, part) == NULL)
            fail_msg("message '%s' lacks '%s'", msg, part);
    }
    va_end(ap);
}

static void parse_names(void **state)
{
    (void)state;
    td_device_choice c;
    tdt_check(td_device_parse("cpu", &c), "cpu");
    assert_int_equal(c.backend, TD_BACKEND_CPU);
    assert_int_equal(c.index, 0);
    assert_string_equal(c.reason, "named: cpu");
    tdt_check(td_device_parse("cpu:0", &c), "cpu:0");
    assert_int_equal(c.backend, TD_BACKEND_CPU);
    assert_int_equal(c.index, 0);
    tdt_check(td_device_parse("toy:0", &c), "toy:0");
    assert_int_equal(c.backend, toy);
    assert_int_equal(c.index, 0);
    tdt_check(td_device_parse("toy", &c), "toy");
    assert_int_equal(c.backend, toy);
}

static void parse_errors(void **state)
{
    (void)state;
    td_device_choice c;
    /* every unknown name lists the backends there are, with their device counts */
    fails_with(td_device_parse("nope", &c), TD_E_DEVICE, "'nope': no backend 'nope'", "cpu (1 device)",
               "toy (1 device)", NULL);
    fails_with(td_device_parse("nope:1", &c), TD_E_DEVICE, "no backend 'nope'", NULL);
    fails_with(td_device_parse("autodiff", &c), TD_E_DEVICE, "no backend 'autodiff'", NULL);
    fails_with(td_device_parse("CPU", &c), TD_E_DEVICE, "no backend 'CPU'", NULL);
    /* an index out of range names the devices there are */
    fails_with(td_device_parse("toy:5", &c), TD_E_DEVICE, "'toy:5': toy has no device 5 (1 device: toy:0)", NULL);
    fails_with(td_device_parse("cpu:1", &c), TD_E_DEVICE, "cpu has no device 1 (1 device: cpu:0)", NULL);
    /* malformed text */
    fails_with(td_device_parse("", &c), TD_E_INVALID, "no backend name", NULL);
    fails_with(td_device_parse(":0", &c), TD_E_INVALID, "no backend name", NULL);
    fails_with(td_device_parse("cpu:", &c), TD_E_INVALID, "'' is not a device index", NULL);
    fails_with(td_device_parse("cpu:x", &c), TD_E_INVALID, "'x' is not a device index", NULL);
    fails_with(td_device_parse("cpu:-1", &c), TD_E_INVALID, "'-1' is not a device index", NULL);
    fails_with(td_device_parse("cpu:+0", &c), TD_E_INVALID, "'+0' is not a device index", NULL);
    fails_with(td_device_parse("cpu:0x", &c), TD_E_INVALID, "'0x' is not a device index", NULL);
    fails_with(td_device_parse("cpu:1:2", &c), TD_E_INVALID, "'1:2' is not a device index", NULL);
    fails_with(td_device_parse("cpu:99999999999999999999", &c), TD_E_INVALID, "is not a device index", NULL);
    fails_with(td_device_parse(NULL, &c), TD_E_NULL, "text", NULL);
    fails_with(td_device_parse("cpu", NULL), TD_E_NULL, "out", NULL);
    /* a failure leaves nothing half-written */
    td_device_choice z;
    memset(&z, 0, sizeof z);
    memset(&c, 0x5a, sizeof c);
    assert_int_not_equal(td_device_parse("cpu:7", &c), TD_OK);
    assert_memory_equal(&c, &z, sizeof c);
}

static void env_names_device(void **state)
{
    (void)state;
    td_device_choice c;
    setenv("TD_DEVICE", "toy:0", 1);
    tdt_check(td_default_device_choice(&c), "TD_DEVICE=toy:0");
    assert_int_equal(c.backend, toy);
    assert_int_equal(c.index, 0);
    assert_string_equal(c.reason, "TD_DEVICE=toy:0");
    td_device *d = NULL;
    tdt_check(td_default_device(&d), "open TD_DEVICE=toy:0");
    td_backend be = TD_BACKEND_COUNT;
    tdt_check(td_device_backend(d, &be), "backend");
    assert_int_equal(be, toy);
    td_device_release(d);

    setenv("TD_DEVICE", "cpu", 1);
    tdt_check(td_default_device_choice(&c), "TD_DEVICE=cpu");
    assert_int_equal(c.backend, TD_BACKEND_CPU);
    assert_string_equal(c.reason, "TD_DEVICE=cpu");

    setenv("TD_DEVICE", "toy:3", 1);
    fails_with(td_default_device_choice(&c), TD_E_DEVICE, "TD_DEVICE 'toy:3': toy has no device 3 (1 device: toy:0)",
               NULL);
    d = (td_device *)&c; /* must come back NULL */
    fails_with(td_default_device(&d), TD_E_DEVICE, "TD_DEVICE 'toy:3'", NULL);
    assert_null(d);
    setenv("TD_DEVICE", "metal", 1);
    fails_with(td_default_device_choice(&c), TD_E_DEVICE, "TD_DEVICE 'metal': no backend 'metal'", "cpu (1 device)",
               "toy (1 device)", NULL);
    setenv("TD_DEVICE", "cpu:one", 1);
    fails_with(td_default_device_choice(&c), TD_E_INVALID, "TD_DEVICE 'cpu:one': 'one' is not a device index", NULL);
    unsetenv("TD_DEVICE");
}

/* The documented order, as a rank: discrete GPU, integrated GPU, virtual GPU, other
 * hardware, the cpu backend, software. */
static int rank_of(const td_device_info *d)
{
    static const char *const gpus[] = { "virtual GPU", "integrated GPU", "discrete GPU" };
    if (d->software)
        return 0;
    if (d->backend == TD_BACKEND_CPU)
        return 1;
    for (int i = 0; i < 3; i++)
        if (strcmp(d->type, gpus[i]) == 0)
            return 3 + i;
    return 2;
}

static void default_order(void **state)
{
    (void)state;
    unsetenv("TD_DEVICE");
    /* TD_DEVICE empty counts as unset */
    setenv("TD_DEVICE", "", 1);
    td_device_choice c;
    tdt_check(td_default_device_choice(&c), "default");
    unsetenv("TD_DEVICE");
    td_device_info chosen;
    tdt_check(td_device_info_get(c.backend, c.index, &chosen), "chosen");
    /* no device of the build ranks above the chosen one; among equals it has the lowest
     * backend id, then index */
    for (int b = 0; b < (int)TD_BACKEND_COUNT; b++) {
        int n = 0;
        if (b == (int)TD_BACKEND_AUTODIFF || !td_backend_enabled((td_backend)b) ||
            td_device_count((td_backend)b, &n) != TD_OK)
            continue;
        for (int i = 0; i < n; i++) {
            td_device_info info;
            tdt_check(td_device_info_get((td_backend)b, i, &info), "info");
            assert_true(rank_of(&info) <= rank_of(&chosen));
            if (rank_of(&info) == rank_of(&chosen))
                assert_true(b > (int)c.backend || (b == (int)c.backend && i >= c.index));
        }
    }
    /* the toy module's software device never beats the cpu */
    assert_int_not_equal(c.backend, toy);
    assert_non_null(strstr(c.reason, "no TD_DEVICE: the default order"));
    td_device *d = NULL;
    tdt_check(td_default_device(&d), "open default");
    td_device_info opened;
    tdt_check(td_device_info_of(d, &opened), "opened");
    assert_int_equal(opened.backend, c.backend);
    td_device_release(d);
    fails_with(td_default_device_choice(NULL), TD_E_NULL, "out", NULL);
    fails_with(td_default_device(NULL), TD_E_NULL, "out", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_names),
        cmocka_unit_test(parse_errors),
        cmocka_unit_test(env_names_device),
        cmocka_unit_test(default_order),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
