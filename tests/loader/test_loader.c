/* Backend modules loaded at run time (td_backend_load): the toy fixture as a module runs
 * ops natively, as composites, through the CPU fallback and under autodiff; the modules
 * the loader must refuse (missing file, loaded twice, no symbol, another ABI version, a
 * taken id, a failing init) give a message naming the file and leave the library usable.
 * The reference values are computed by hand here. */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "td_backend_api.h"
#include "td_devices.h"
#include "tdt.h"

static td_backend toy = TD_BACKEND_COUNT;

/* The toy module's kernel counter, read from the loaded module itself. */
static long toy_calls(void)
{
    void *h = dlopen(TOY_MODULE, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(h);
    long (*calls)(void) = NULL;
    void *sym = dlsym(h, "toy_kernel_calls");
    assert_non_null(sym);
    memcpy(&calls, &sym, sizeof calls);
    const long n = calls();
    dlclose(h);
    return n;
}

/* The CPU still adds: 1 + 2 = 3. */
static void cpu_still_works(void)
{
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "open cpu");
    const float a = 1.0f, b = 2.0f, want = 3.0f;
    const int64_t shape[1] = { 1 };
    td_tensor *x = NULL, *y = NULL, *z = NULL;
    tdt_check(td_float_from_data(cpu, &a, shape, 1, &x), "x");
    tdt_check(td_float_from_data(cpu, &b, shape, 1, &y), "y");
    tdt_check(td_float_add(x, y, &z), "add");
    tdt_expect(z, TD_F32, shape, 1, &want, 1, 0.0f);
    td_tensor_release(x);
    td_tensor_release(y);
    td_tensor_release(z);
    td_device_release(cpu);
}

/* Loading path fails with TD_E_INVALID (or want) and a message holding path and what. */
static void refused(const char *path, td_status want, const char *what)
{
    const int before = td_backend_module_count();
    td_backend id = TD_BACKEND_CPU;
    const td_status st = td_backend_load(path, &id);
    assert_int_equal(st, want);
    const char *msg = td_last_error();
    print_message("refused: %s\n", msg);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, what));
    assert_int_equal(td_backend_module_count(), before);
    assert_int_equal(id, TD_BACKEND_CPU); /* untouched */
    cpu_still_works();
}

static void test_load_toy(void **state)
{
    (void)state;
    assert_int_equal(td_backend_module_count(), 0);
    tdt_check(td_backend_load(TOY_MODULE, &toy), "load toy");
    assert_int_equal(toy, 32);
    assert_string_equal(td_backend_name(toy), "toy");
    assert_true(td_backend_enabled(toy));
    assert_true(td_backend_exists(toy));
    assert_int_equal(td_backend_module_count(), 1);
    td_backend_module_info info;
    tdt_check(td_backend_module_info_get(0, &info), "module info");
    assert_int_equal(info.backend, 32);
    assert_int_equal(info.abi_version, TD_BACKEND_ABI_VERSION);
    assert_string_equal(info.name, "toy");
    assert_non_null(strstr(info.path, "toy_module"));
    assert_int_equal(td_backend_module_info_get(1, &info), TD_E_RANGE);
    int n = 0;
    tdt_check(td_device_count(toy, &n), "device count");
    assert_int_equal(n, 1);
    assert_int_equal(td_backend_support(toy, TD_OP_FLOAT_ADD), TD_SUPPORT_NATIVE);
    assert_int_equal(td_backend_support(toy, TD_OP_FLOAT_EXP), TD_SUPPORT_NONE);
}

static void test_toy_ops(void **state)
{
    (void)state;
    td_device *dev = NULL;
    tdt_check(td_device_open(toy, 0, &dev), "open toy");
    const float a[6] = { 1, 2, 3, 4, 5, 6 }, b[3] = { 10, 20, 30 };
    const int64_t sa[2] = { 2, 3 }, sb[1] = { 3 };
    td_tensor *x = NULL, *y = NULL, *z = NULL, *s = NULL, *d = NULL, *r = NULL;
    const long calls0 = toy_calls();
    tdt_check(td_float_from_data(dev, a, sa, 2, &x), "x");
    tdt_check(td_float_from_data(dev, b, sb, 1, &y), "y");
    /* native, broadcast: [[11,22,33],[14,25,36]] */
    tdt_check(td_float_add(x, y, &z), "add");
    const float want_add[6] = { 11, 22, 33, 14, 25, 36 };
    tdt_expect(z, TD_F32, sa, 2, want_add, 6, 0.0f);
    td_backend k = TD_BACKEND_CPU;
    tdt_check(td_tensor_backend(z, &k), "backend");
    assert_int_equal(k, toy);
    assert_true(toy_calls() > calls0);
    /* native reduction: 1+...+6 = 21 */
    tdt_check(td_float_sum(x, &s), "sum");
    const float want_sum = 21.0f;
    tdt_expect(s, TD_F32, NULL, 0, &want_sum, 1, 0.0f);
    /* a composite: float_sub = a + (-b), toy has add and neg: [[-9,-18,-27],[-6,-15,-24]] */
    tdt_check(td_float_sub(x, y, &d), "sub");
    const float want_sub[6] = { -9, -18, -27, -6, -15, -24 };
    tdt_expect(d, TD_F32, sa, 2, want_sub, 6, 0.0f);
    /* to the CPU and back: staged through host memory by the read / write hooks */
    td_device *cpu = NULL;
    tdt_check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "open cpu");
    tdt_check(td_float_to_device(x, cpu, &r), "toy -> cpu");
    tdt_check(td_tensor_backend(r, &k), "backend");
    assert_int_equal(k, TD_BACKEND_CPU);
    tdt_expect(r, TD_F32, sa, 2, a, 6, 0.0f);
    td_tensor *back = NULL;
    tdt_check(td_float_to_device(r, dev, &back), "cpu -> toy");
    tdt_check(td_tensor_backend(back, &k), "backend");
    assert_int_equal(k, toy);
    tdt_expect(back, TD_F32, sa, 2, a, 6, 0.0f);
    td_tensor_release(back);
    td_tensor_release(r);
    td_device_release(cpu);
    /* a view: reshape shares the storage */
    const int64_t s6[1] = { 6 };
    tdt_check(td_float_reshape(x, s6, 1, &r), "reshape");
    tdt_expect(r, TD_F32, s6, 1, a, 6, 0.0f);
    td_tensor_release(r);
    /* not in toy, no decomposition: unsupported, then through the CPU fallback */
    r = NULL;
    const td_status st = td_float_exp(x, &r);
    assert_int_equal(st, TD_E_UNSUPPORTED);
    assert_non_null(strstr(td_last_error(), "toy"));
    tdt_check(td_device_set_fallback(dev, TD_FALLBACK_CPU), "fallback");
    tdt_check(td_float_exp(x, &r), "exp via the CPU");
    float want_exp[6];
    for (int i = 0; i < 6; i++)
        want_exp[i] = expf(a[i]);
    tdt_expect(r, TD_F32, sa, 2, want_exp, 6, 1e-6f);
    tdt_check(td_tensor_backend(r, &k), "backend");
    assert_int_equal(k, toy);
    tdt_check(td_device_set_fallback(dev, TD_FALLBACK_NONE), "fallback off");
    td_tensor_release(x);
    td_tensor_release(y);
    td_tensor_release(z);
    td_tensor_release(s);
    td_tensor_release(d);
    td_tensor_release(r);
    td_device_release(dev);
}

/* autodiff(toy): loss = sum(x * w + x); dloss/dx = w + 1, dloss/dw = x. */
static void test_toy_autodiff(void **state)
{
    (void)state;
    td_device *dev = NULL, *ad = NULL;
    tdt_check(td_device_open(toy, 0, &dev), "open toy");
    tdt_check(td_device_autodiff(dev, TD_CHECKPOINT_NONE, &ad), "autodiff(toy)");
    const float xv[4] = { 1, -2, 3, 0.5f }, wv[4] = { 4, 5, -6, 2 };
    const int64_t shape[1] = { 4 };
    td_tensor *x = NULL, *w = NULL, *xw = NULL, *sum = NULL, *loss = NULL, *gx = NULL, *gw = NULL;
    td_grads *grads = NULL;
    tdt_check(td_float_from_data(ad, xv, shape, 1, &x), "x");
    tdt_check(td_float_from_data(ad, wv, shape, 1, &w), "w");
    tdt_check(td_require_grad(x), "x grad");
    tdt_check(td_require_grad(w), "w grad");
    tdt_check(td_float_mul(x, w, &xw), "mul");
    tdt_check(td_float_add(xw, x, &sum), "add");
    tdt_check(td_float_sum(sum, &loss), "sum");
    const float want_loss = 1 * 4 + 1 + -2 * 5 - 2 + 3 * -6 + 3 + 0.5f * 2 + 0.5f;
    tdt_expect(loss, TD_F32, NULL, 0, &want_loss, 1, 0.0f);
    tdt_check(td_backward(loss, &grads), "backward");
    tdt_check(td_grads_get(grads, x, &gx), "grad x");
    tdt_check(td_grads_get(grads, w, &gw), "grad w");
    const float want_gx[4] = { 5, 6, -5, 3 };
    tdt_expect(gx, TD_F32, shape, 1, want_gx, 4, 0.0f);
    tdt_expect(gw, TD_F32, shape, 1, xv, 4, 0.0f);
    td_backend k = TD_BACKEND_CPU;
    tdt_check(td_tensor_backend(gx, &k), "backend");
    assert_int_equal(k, toy);
    td_grads_release(grads);
    td_tensor_release(gx);
    td_tensor_release(gw);
    td_tensor_release(x);
    td_tensor_release(w);
    td_tensor_release(xw);
    td_tensor_release(sum);
    td_tensor_release(loss);
    td_device_release(ad);
    td_device_release(dev);
}

static void test_missing_file(void **state)
{
    (void)state;
    refused("/nonexistent/td_no_module.so", TD_E_INVALID, "no such file");
}

static void test_loaded_twice(void **state)
{
    (void)state;
    refused(TOY_MODULE, TD_E_INVALID, "already loaded (backend 'toy', id 32)");
}

static void test_no_symbol(void **state)
{
    (void)state;
    refused(NO_SYMBOL_MODULE, TD_E_INVALID, "no symbol td_backend_module_entry");
}

static void test_wrong_abi(void **state)
{
    (void)state;
    refused(BAD_ABI_MODULE, TD_E_INVALID, "built for backend ABI version 999, this library has version 2");
}

static void test_id_taken(void **state)
{
    (void)state;
    refused(SAME_ID_MODULE, TD_E_INVALID, "id 32 of backend 'toy_twin' is taken by backend 'toy' loaded from");
}

static void test_init_fails(void **state)
{
    (void)state;
    refused(BAD_INIT_MODULE, TD_E_DEVICE, "backend 'bad' failed its init: bad_init: no accelerator found");
    /* nothing of it stayed: id 40 is free */
    assert_false(td_backend_enabled((td_backend)40));
}

static void test_null_path(void **state)
{
    (void)state;
    assert_int_equal(td_backend_load(NULL, NULL), TD_E_NULL);
    td_backend_module_info info;
    assert_int_equal(td_backend_module_info_get(0, NULL), TD_E_NULL);
    assert_int_equal(td_backend_module_info_get(-1, &info), TD_E_RANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(test_load_toy),     TDT_TEST(test_toy_ops),    TDT_TEST(test_toy_autodiff),
        TDT_TEST(test_missing_file), TDT_TEST(test_loaded_twice), TDT_TEST(test_no_symbol),
        TDT_TEST(test_wrong_abi),    TDT_TEST(test_id_taken),   TDT_TEST(test_init_fails),
        TDT_TEST(test_null_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
