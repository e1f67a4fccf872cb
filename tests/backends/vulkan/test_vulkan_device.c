/* Vulkan backend: device selection, the no-driver error, transfers, batching, random parity
 * and a few large-shape comparisons with the CPU backend (tiles, two-pass sums, 2-D grids). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "td_ops.h"
#include "td_vulkan.h"
#include "tdt.h"

static td_device *vk;
static td_device *cpu;
static const char *self_path;

static int setup(void **state)
{
    (void)state;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        fprintf(stderr, "no Vulkan device: %s\n", td_last_error());
        return -1;
    }
    return td_device_open(TD_BACKEND_CPU, 0, &cpu) == TD_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(vk);
    td_device_release(cpu);
    return td_testing_live_objects() == 0 ? 0 : -1;
}

static void test_device_selection(void **state)
{
    (void)state;
    td_device *d = NULL;
    unsetenv("TD_VULKAN_DEVICE");
    tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &d), "device_open 0");
    td_device_release(d);
    d = NULL;
    tdt_expect_error(td_device_open(TD_BACKEND_VULKAN, 100000, &d), TD_E_DEVICE, "device_open");
    assert_null(d);
    setenv("TD_VULKAN_DEVICE", "0", 1);
    tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &d), "device_open with TD_VULKAN_DEVICE=0");
    td_device_release(d);
    d = NULL;
    setenv("TD_VULKAN_DEVICE", "4096", 1);
    tdt_expect_error(td_device_open(TD_BACKEND_VULKAN, 0, &d), TD_E_DEVICE, "device_open");
    assert_non_null(strstr(td_last_error(), "4096"));
    setenv("TD_VULKAN_DEVICE", "gpu", 1);
    tdt_expect_error(td_device_open(TD_BACKEND_VULKAN, 0, &d), TD_E_DEVICE, "device_open");
    assert_null(d);
    unsetenv("TD_VULKAN_DEVICE");
}

/* Child mode: the loader is first used with the driver list already overridden. Without
 * a driver there are no devices to count, and opening one fails. */
static int child_no_driver(void)
{
    int n = -1;
    const td_status cst = td_device_count(TD_BACKEND_VULKAN, &n);
    printf("no-driver child: device_count: %s, %d devices\n", td_status_name(cst), n);
    td_device *d = NULL;
    const td_status st = td_device_open(TD_BACKEND_VULKAN, 0, &d);
    printf("no-driver child: %s: %s\n", td_status_name(st), td_last_error());
    return cst == TD_OK && n == 0 && st == TD_E_DEVICE && d == NULL ? 0 : 1;
}

/* Enumeration: every device described; the open device (TD_VULKAN_DEVICE=0 included) is
 * the one its index names; a software device (lavapipe) says so. */
static void test_device_enumeration(void **state)
{
    (void)state;
    int n = 0;
    tdt_check(td_device_count(TD_BACKEND_VULKAN, &n), "device_count");
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
        td_device_info info;
        tdt_check(td_device_info_get(TD_BACKEND_VULKAN, i, &info), "device_info_get");
        assert_int_equal(info.backend, TD_BACKEND_VULKAN);
        assert_int_equal(info.index, i);
        assert_true(info.name[0] != '\0' && info.driver[0] != '\0' && info.type[0] != '\0');
        assert_true(info.memory_bytes > 0);
        assert_int_equal(info.software, strcmp(info.type, "software (CPU)") == 0);
        if (strstr(info.name, "llvmpipe") != NULL)
            assert_true(info.software);
    }
    td_device_info first, of;
    tdt_check(td_device_info_get(TD_BACKEND_VULKAN, 0, &first), "device_info_get 0");
    setenv("TD_VULKAN_DEVICE", "0", 1);
    td_device *d = NULL;
    tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &d), "device_open");
    unsetenv("TD_VULKAN_DEVICE");
    tdt_check(td_device_info_of(d, &of), "device_info_of");
    assert_int_equal(of.index, 0);
    assert_string_equal(of.name, first.name);
    td_device_release(d);
    tdt_expect_error(td_device_info_get(TD_BACKEND_VULKAN, n, &of), TD_E_DEVICE, "device_info_get");
}

static void run_child(const char *driver_files)
{
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("VK_DRIVER_FILES", driver_files, 1);
        setenv("VK_ICD_FILENAMES", driver_files, 1);
        execl(self_path, self_path, "--no-driver", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status)); /* not killed by a signal: no crash */
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_no_driver(void **state)
{
    (void)state;
    run_child("/nonexistent/tdispatch_no_such_icd.json");
    char path[] = "/tmp/td_vk_icdXXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char json[] = "{ \"file_format_version\": \"1.0.0\", \"ICD\": { \"library_path\": "
                               "\"/nonexistent/libtd_no_such_driver.so\", \"api_version\": \"1.1.0\" } }\n";
    assert_int_equal(write(fd, json, sizeof json - 1), (ssize_t)(sizeof json - 1));
    close(fd);
    run_child(path);
    unlink(path);
}

static void roundtrip(td_dtype dtype, const void *data, size_t esz)
{
    static const int64_t shape[] = { 2, 3 };
    td_tensor *c = tdt_make(cpu, dtype, data, shape, 2), *v = NULL, *back = NULL;
    assert_non_null(c);
    switch (dtype) {
    case TD_F32: tdt_check(td_float_to_device(c, vk, &v), "to vulkan"); break;
    case TD_I32: tdt_check(td_int_to_device(c, vk, &v), "to vulkan"); break;
    case TD_BOOL: tdt_check(td_bool_to_device(c, vk, &v), "to vulkan"); break;
    default: fail_msg("roundtrip: dtype %d is not one this test makes", (int)dtype);
    }
    td_backend be;
    tdt_check(td_tensor_backend(v, &be), "backend");
    assert_int_equal(be, TD_BACKEND_VULKAN);
    switch (dtype) {
    case TD_F32: tdt_check(td_float_to_device(v, cpu, &back), "to cpu"); break;
    case TD_I32: tdt_check(td_int_to_device(v, cpu, &back), "to cpu"); break;
    case TD_BOOL: tdt_check(td_bool_to_device(v, cpu, &back), "to cpu"); break;
    default: fail_msg("dtype %d is not one this test makes", (int)dtype);
    }
    int64_t n = 0;
    void *got = tdt_read(back, &n);
    assert_int_equal(n, 6);
    assert_memory_equal(got, data, 6 * esz);
    free(got);
    got = tdt_read(v, &n);
    assert_memory_equal(got, data, 6 * esz);
    free(got);
    td_tensor_release(c);
    td_tensor_release(v);
    td_tensor_release(back);
}

static void test_to_device(void **state)
{
    (void)state;
    static const float f[] = { 1.5f, -2.0f, 0.0f, INFINITY, 1e-30f, -7.25f };
    static const int32_t i[] = { 1, -2, 0, INT32_MAX, INT32_MIN, 42 };
    static const bool b[] = { true, false, false, true, true, false };
    roundtrip(TD_F32, f, sizeof f[0]);
    roundtrip(TD_I32, i, sizeof i[0]);
    roundtrip(TD_BOOL, b, sizeof b[0]);
}

static void test_to_other_vulkan_device(void **state)
{
    (void)state;
    static const float f[] = { 1, 2, 3, 4 };
    static const int64_t shape[] = { 4 };
    td_device *vk2 = NULL;
    tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &vk2), "a second handle (the same device)");
    td_tensor *a = tdt_make(vk, TD_F32, f, shape, 1), *b = NULL, *c = NULL;
    tdt_check(td_float_mul_scalar(a, 2.0f, &b), "mul_scalar"); /* pending in the batch */
    tdt_check(td_float_to_device(b, vk2, &c), "to_device");
    static const float want[] = { 2, 4, 6, 8 };
    tdt_expect(c, TD_F32, shape, 1, want, 4, 0.0f);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_device_release(vk2);
}

/* Two opens of device 0 are one handle: an op may combine their tensors. Before, they were
 * two VkDevices that passed the same-device check by index, and float_add bound one
 * device's buffers on the other (a crash inside the validation layer). */
static void test_two_opens_share_a_device(void **state)
{
    (void)state;
    static const float f[] = { 1, 2, 3, 4 };
    static const int64_t shape[] = { 4 };
    td_device *again = NULL;
    tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &again), "open vulkan:0 again");
    assert_ptr_equal(again, vk);
    td_tensor *a = tdt_make(vk, TD_F32, f, shape, 1), *b = tdt_make(again, TD_F32, f, shape, 1), *c = NULL;
    tdt_check(td_float_add(a, b, &c), "add across the two handles");
    static const float want[] = { 2, 4, 6, 8 };
    tdt_expect(c, TD_F32, shape, 1, want, 4, 0.0f);
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
    td_device_release(again);
}

static void test_backend_mismatch(void **state)
{
    (void)state;
    static const float f[] = { 1, 2, 3 };
    static const int64_t shape[] = { 3 };
    td_tensor *a = tdt_make(cpu, TD_F32, f, shape, 1), *b = tdt_make(vk, TD_F32, f, shape, 1), *out = NULL;
    tdt_expect_error(td_float_add(a, b, &out), TD_E_BACKEND_MISMATCH, "float_add");
    assert_null(out);
    tdt_expect_error(td_float_add(b, a, &out), TD_E_BACKEND_MISMATCH, "float_add");
    long s = 0;
    assert_int_equal(td_vulkan_stats(cpu, &s, NULL), TD_E_BACKEND_MISMATCH);
    td_tensor_release(a);
    td_tensor_release(b);
}

static void test_batching(void **state)
{
    (void)state;
    static const int64_t shape[] = { 64, 33 };
    td_tensor *x = NULL;
    tdt_check(td_float_full(vk, shape, 2, 1.0f, &x), "full");
    long s0 = 0, d0 = 0, s1 = 0, d1 = 0;
    tdt_check(td_vulkan_stats(vk, &s0, &d0), "stats");
    for (int i = 0; i < 100; i++) {
        td_tensor *y = NULL;
        tdt_check(i % 2 ? td_float_add_scalar(x, 1.0f, &y) : td_float_mul(x, x, &y), "chain");
        td_tensor_release(x);
        x = y;
    }
    float *host = malloc(64 * 33 * sizeof *host);
    tdt_check(td_float_into_data(x, host, 64 * 33), "into_data");
    tdt_check(td_vulkan_stats(vk, &s1, &d1), "stats");
    assert_true(d1 - d0 >= 100);
    assert_true(s1 - s0 <= 2);
    /* (x*x + 1) fifty times from 1: grows to inf; the point is that every element agrees. */
    for (int i = 1; i < 64 * 33; i++)
        assert_memory_equal(&host[i], &host[0], sizeof host[0]);
    free(host);
    tdt_check(td_sync(vk), "sync");
    tdt_check(td_vulkan_stats(vk, &s0, NULL), "stats");
    assert_int_equal(s0, s1); /* nothing pending: sync does not submit */
    td_tensor_release(x);
}

static void test_random_matches_cpu(void **state)
{
    (void)state;
    static const int64_t shape[] = { 1000, 7 };
    for (int dist = 0; dist < 2; dist++) {
        td_tensor *a = NULL, *b = NULL;
        tdt_check(td_float_random(vk, shape, 2, (td_distribution)dist, -1.0f, 3.0f, 1234u, &a), "random vk");
        tdt_check(td_float_random(cpu, shape, 2, (td_distribution)dist, -1.0f, 3.0f, 1234u, &b), "random cpu");
        int64_t na = 0, nb = 0;
        float *va = tdt_read(a, &na), *vb = tdt_read(b, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(va, vb, (size_t)na * sizeof *va);
        free(va);
        free(vb);
        td_tensor_release(a);
        td_tensor_release(b);
    }
}

/* The same random float inputs on both backends. */
static void pair(const int64_t *shape, int ndim, unsigned seed, td_tensor **c, td_tensor **v)
{
    tdt_check(td_float_random(cpu, shape, ndim, TD_UNIFORM, -2.0f, 2.0f, seed, c), "random");
    tdt_check(td_float_to_device(*c, vk, v), "to vulkan");
}

static void expect_same_as_cpu(td_tensor *c, td_tensor *v, float tol)
{
    td_tensor *back = NULL;
    td_dtype dt;
    tdt_check(td_tensor_dtype(v, &dt), "dtype");
    switch (dt) {
    case TD_F32: tdt_check(td_float_to_device(v, cpu, &back), "to cpu"); break;
    case TD_I32: tdt_check(td_int_to_device(v, cpu, &back), "to cpu"); break;
    case TD_BOOL: tdt_check(td_bool_to_device(v, cpu, &back), "to cpu"); break;
    default: fail_msg("dtype %d is not one this test makes", (int)dt);
    }
    tdt_expect_same(back, c, tol);
    td_tensor_release(back);
    td_tensor_release(c);
    td_tensor_release(v);
}

static void test_large_matmul(void **state)
{
    (void)state;
    static const int64_t sa[] = { 3, 1, 37, 53 }, sb[] = { 2, 53, 29 };
    td_tensor *ac, *av, *bc, *bv, *oc = NULL, *ov = NULL;
    pair(sa, 4, 1, &ac, &av);
    pair(sb, 3, 2, &bc, &bv);
    tdt_check(td_float_matmul(ac, bc, &oc), "matmul cpu");
    tdt_check(td_float_matmul(av, bv, &ov), "matmul vk");
    expect_same_as_cpu(oc, ov, 1e-4f);
    td_tensor_release(ac);
    td_tensor_release(av);
    td_tensor_release(bc);
    td_tensor_release(bv);
}

static void test_large_reductions(void **state)
{
    (void)state;
    static const int64_t s[] = { 300, 257, 3 };
    td_tensor *ac, *av, *oc = NULL, *ov = NULL;
    pair(s, 3, 3, &ac, &av);
    tdt_check(td_float_sum(ac, &oc), "sum cpu");
    tdt_check(td_float_sum(av, &ov), "sum vk");
    expect_same_as_cpu(oc, ov, 1e-5f);
    for (int64_t dim = 0; dim < 3; dim++) {
        tdt_check(td_float_mean_dim(ac, dim, &oc), "mean_dim cpu");
        tdt_check(td_float_mean_dim(av, dim, &ov), "mean_dim vk");
        expect_same_as_cpu(oc, ov, 1e-5f);
        tdt_check(td_float_argmax(ac, dim, &oc), "argmax cpu");
        tdt_check(td_float_argmax(av, dim, &ov), "argmax vk");
        expect_same_as_cpu(oc, ov, 0.0f);
    }
    td_tensor *ic = NULL, *iv = NULL;
    tdt_check(td_float_into_int(ac, &ic), "into_int");
    tdt_check(td_float_into_int(av, &iv), "into_int");
    tdt_check(td_int_sum(ic, &oc), "int_sum cpu");
    tdt_check(td_int_sum(iv, &ov), "int_sum vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    td_tensor_release(ic);
    td_tensor_release(iv);
    td_tensor_release(ac);
    td_tensor_release(av);
}

/* Int reductions over dims longer than a reduce chunk (4096), in passes: wrapping sums and
 * products, and the exact mean (int64 partial sums as word pairs) of extreme values; and a
 * wrapping int_matmul over a K longer than one dispatch's k range. */
static void test_large_int_reductions(void **state)
{
    (void)state;
    static const int64_t s[] = { 70001, 3 };
    const int64_t n = s[0] * s[1];
    int32_t *data = malloc(sizeof(int32_t) * (size_t)n);
    assert_non_null(data);
    uint32_t x = 12345u;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        /* column 0: INT32_MAX mostly (a sum far beyond int32), 1: INT32_MIN mostly, 2: odd noise */
        const int c = (int)(i % 3);
        data[i] = c == 0 ? ((x >> 28) ? INT32_MAX : -5) : c == 1 ? ((x >> 28) ? INT32_MIN : 7) : (int32_t)(x | 1u);
    }
    td_tensor *ac = NULL, *av = NULL, *oc = NULL, *ov = NULL;
    tdt_check(td_int_from_data(cpu, data, s, 2, &ac), "from_data");
    tdt_check(td_int_to_device(ac, vk, &av), "to vulkan");
    free(data);
    tdt_check(td_int_mean(ac, &oc), "int_mean cpu");
    tdt_check(td_int_mean(av, &ov), "int_mean vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    tdt_check(td_int_prod(ac, &oc), "int_prod cpu");
    tdt_check(td_int_prod(av, &ov), "int_prod vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    for (int64_t dim = 0; dim < 2; dim++) {
        tdt_check(td_int_mean_dim(ac, dim, &oc), "int_mean_dim cpu");
        tdt_check(td_int_mean_dim(av, dim, &ov), "int_mean_dim vk");
        expect_same_as_cpu(oc, ov, 0.0f);
        tdt_check(td_int_sum_dim(ac, dim, &oc), "int_sum_dim cpu");
        tdt_check(td_int_sum_dim(av, dim, &ov), "int_sum_dim vk");
        expect_same_as_cpu(oc, ov, 0.0f);
        tdt_check(td_int_prod_dim(ac, dim, &oc), "int_prod_dim cpu");
        tdt_check(td_int_prod_dim(av, dim, &ov), "int_prod_dim vk");
        expect_same_as_cpu(oc, ov, 0.0f);
    }
    /* a^T a: K = 70001 (more than one k chunk), products and sums wrapping */
    td_tensor *tc = NULL, *tv = NULL;
    tdt_check(td_int_swap_dims(ac, 0, 1, &tc), "swap cpu");
    tdt_check(td_int_swap_dims(av, 0, 1, &tv), "swap vk");
    tdt_check(td_int_matmul(tc, ac, &oc), "int_matmul cpu");
    tdt_check(td_int_matmul(tv, av, &ov), "int_matmul vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    td_tensor_release(tc);
    td_tensor_release(tv);
    td_tensor_release(ac);
    td_tensor_release(av);
}

/* float_prod multiplies with a double's range, as the CPU: column 0 passes 2^900 and comes
 * back (a float product would stay inf), column 1 passes 2^1100 (inf for good, as a double),
 * column 2 goes down to 2^-1000 and back; along a dim longer than a reduce chunk (partial
 * products in passes), over the whole tensor, and running (cumprod, its (m, e) carried from
 * one range of rows to the next). */
static void test_float_prod_range(void **state)
{
    (void)state;
    static const int64_t s[] = { 6001, 3 };
    float *data = malloc(sizeof(float) * 6001 * 3);
    assert_non_null(data);
    for (int k = 0; k < 6001; k++) {
        data[3 * k] = k < 900 ? 2.0f : k < 1800 ? 0.5f : k == 1800 ? 1.5f : 1.0f;
        data[3 * k + 1] = k < 1100 ? 2.0f : k < 2200 ? 0.5f : 1.0f;
        data[3 * k + 2] = k < 1000 ? 0.5f : k < 2000 ? 2.0f : k == 2000 ? -3.0f : 1.0f;
    }
    td_tensor *ac = NULL, *av = NULL, *oc = NULL, *ov = NULL;
    tdt_check(td_float_from_data(cpu, data, s, 2, &ac), "from_data");
    tdt_check(td_float_to_device(ac, vk, &av), "to vulkan");
    free(data);
    tdt_check(td_float_prod_dim(ac, 0, &oc), "prod_dim cpu");
    tdt_check(td_float_prod_dim(av, 0, &ov), "prod_dim vk");
    float got[3];
    td_tensor *back = NULL;
    tdt_check(td_float_to_device(ov, cpu, &back), "to cpu");
    tdt_check(td_float_into_data(back, got, 3), "into_data");
    td_tensor_release(back);
    assert_true(got[0] == 1.5f && isinf(got[1]) && got[1] > 0 && got[2] == -3.0f);
    expect_same_as_cpu(oc, ov, 0.0f);
    tdt_check(td_float_prod(ac, &oc), "prod cpu");
    tdt_check(td_float_prod(av, &ov), "prod vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    tdt_check(td_float_cumprod(ac, 0, &oc), "cumprod cpu");
    tdt_check(td_float_cumprod(av, 0, &ov), "cumprod vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    td_tensor_release(ac);
    td_tensor_release(av);
}

/* More than 65535 workgroups of 256: the 2-D grid, with broadcasting and a layout op. */
static void test_large_elementwise(void **state)
{
    (void)state;
    static const int64_t sa[] = { 4100, 4100 }, sb[] = { 4100, 1 };
    td_tensor *ac, *av, *bc, *bv, *oc = NULL, *ov = NULL;
    pair(sa, 2, 4, &ac, &av);
    pair(sb, 2, 5, &bc, &bv);
    tdt_check(td_float_sub(ac, bc, &oc), "sub cpu");
    tdt_check(td_float_sub(av, bv, &ov), "sub vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    tdt_check(td_float_swap_dims(ac, 0, 1, &oc), "swap cpu");
    tdt_check(td_float_swap_dims(av, 0, 1, &ov), "swap vk");
    expect_same_as_cpu(oc, ov, 0.0f);
    td_tensor_release(ac);
    td_tensor_release(av);
    td_tensor_release(bc);
    td_tensor_release(bv);
}

static void test_int_div_by_zero(void **state)
{
    (void)state;
    static const int32_t a[] = { 7, -7, 9 }, b[] = { 2, 0, 3 };
    static const int64_t shape[] = { 3 };
    td_tensor *ta = tdt_make(vk, TD_I32, a, shape, 1), *tb = tdt_make(vk, TD_I32, b, shape, 1), *out = NULL;
    td_tensor *tb2 = NULL;
    tdt_check(td_int_add(tb, tb, &tb2), "add"); /* the divisor is still pending in the batch */
    tdt_expect_error(td_int_div(ta, tb2, &out), TD_E_INVALID, "int_div");
    assert_null(out);
    tdt_expect_error(td_int_remainder(ta, tb2, &out), TD_E_INVALID, "int_remainder");
    tdt_check(td_int_mul(ta, ta, &out), "device still usable");
    static const int32_t want[] = { 49, 49, 81 };
    tdt_expect(out, TD_I32, shape, 1, want, 3, 0.0f);
    td_tensor_release(out);
    td_tensor_release(ta);
    td_tensor_release(tb);
    td_tensor_release(tb2);
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--no-driver") == 0)
        return child_no_driver();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_selection),
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_device_enumeration),
        cmocka_unit_test(test_to_device),
        cmocka_unit_test(test_to_other_vulkan_device),
        cmocka_unit_test(test_two_opens_share_a_device),
        cmocka_unit_test(test_backend_mismatch),
        cmocka_unit_test(test_batching),
        cmocka_unit_test(test_random_matches_cpu),
        cmocka_unit_test(test_large_matmul),
        cmocka_unit_test(test_large_reductions),
        cmocka_unit_test(test_large_int_reductions),
        cmocka_unit_test(test_float_prod_range),
        cmocka_unit_test(test_large_elementwise),
        cmocka_unit_test(test_int_div_by_zero),
    };
    return cmocka_run_group_tests_name("vulkan_device", tests, setup, teardown);
}
