/* safetensors interop: loads the files tests/safetensors_interop.py wrote (stdlib struct +
 * json) onto a device and checks them against values computed here; saves tensors made
 * here, from that device, for the script to check byte by byte.
 *   test_safetensors_interop DIR cpu|autodiff|vulkan
 * Exits 77 (skipped) when the device does not exist here; without a reader (no cJSON) only
 * the saving runs. Run by tests/safetensors_interop.sh. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "td_ops.h"
#include "td_safetensors.h"
#include "tdt.h"

static const char *dir;
static const char *which;
static td_device *dev, *inner;

/* ---- the values, as safetensors_interop.py defines them ---- */

static float f32_value(int64_t i)
{
    switch (i) {
    case 0: return -0.0f;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return NAN;
    case 4: return 1e-45f; /* the smallest subnormal, bits 0x00000001 */
    case 5: return 3.4028234663852886e38f;
    default: return (float)(i - 7) * 0.375f;
    }
}

static int32_t i32_value(int64_t i)
{
    if (i == 0)
        return INT32_MIN;
    if (i == 1)
        return INT32_MAX;
    return (int32_t)(uint32_t)((uint64_t)i * UINT64_C(2654435761));
}

static bool bool_value(int64_t i)
{
    return i % 3 == 0;
}

static float scalar_value(int64_t i)
{
    (void)i;
    return 2.5f;
}

typedef struct want {
    const char *name;
    td_dtype dtype;
    int ndim;
    int64_t dims[3];
    float (*f)(int64_t);
    int32_t (*i)(int64_t);
    bool (*b)(int64_t);
} want;

static const want tensors[] = {
    { "f32", TD_F32, 2, { 3, 5 }, f32_value, NULL, NULL },
    { "i32", TD_I32, 3, { 2, 2, 3 }, NULL, i32_value, NULL },
    { "bool", TD_BOOL, 1, { 7 }, NULL, NULL, bool_value },
    { "scalar", TD_F32, 0, { 0 }, scalar_value, NULL, NULL },
    { "empty_f32", TD_F32, 2, { 0, 4 }, f32_value, NULL, NULL },
    { "empty_bool", TD_BOOL, 2, { 3, 0 }, NULL, NULL, bool_value },
};
#define NT (sizeof tensors / sizeof tensors[0])

static int64_t numel_of(const want *w)
{
    int64_t n = 1;
    for (int k = 0; k < w->ndim; k++)
        n *= w->dims[k];
    return n;
}

/* The host values of w: float, int32_t or bool, malloc'ed (at least 1 byte). */
static void *values_of(const want *w, int64_t n)
{
    unsigned char *p = malloc((size_t)(n > 0 ? n : 1) * 4);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++) {
        if (w->f)
            ((float *)p)[i] = w->f(i);
        else if (w->i)
            ((int32_t *)p)[i] = w->i(i);
        else
            ((bool *)p)[i] = w->b(i);
    }
    return p;
}

/* t has w's dtype, shape and values, floats bit for bit (NaN as NaN). */
static void expect_tensor(const td_tensor *t, const want *w)
{
    td_dtype dt;
    int64_t dims[TD_MAX_DIMS];
    int ndim = -1;
    tdt_check(td_tensor_dtype(t, &dt), "dtype");
    tdt_check(td_tensor_shape(t, dims, &ndim), "shape");
    if (dt != w->dtype || ndim != w->ndim)
        fail_msg("%s: dtype %d with %d dims, want %d with %d", w->name, (int)dt, ndim, (int)w->dtype, w->ndim);
    for (int k = 0; k < ndim; k++)
        if (dims[k] != w->dims[k])
            fail_msg("%s: dim %d is %lld, want %lld", w->name, k, (long long)dims[k], (long long)w->dims[k]);
    const int64_t n = numel_of(w);
    void *want_v = values_of(w, n);
    void *got = calloc((size_t)(n > 0 ? n : 1), 4);
    assert_non_null(got);
    if (w->f)
        tdt_check(td_float_into_data(t, got, n), "into_data");
    else if (w->i)
        tdt_check(td_int_into_data(t, got, n), "into_data");
    else
        tdt_check(td_bool_into_data(t, got, n), "into_data");
    for (int64_t i = 0; i < n; i++) {
        if (w->f) {
            const float g = ((float *)got)[i], e = ((float *)want_v)[i];
            if (isnan(e) ? !isnan(g) : memcmp(&g, &e, 4) != 0)
                fail_msg("%s[%lld] = %a, want %a", w->name, (long long)i, (double)g, (double)e);
        } else if (w->i) {
            if (((int32_t *)got)[i] != ((int32_t *)want_v)[i])
                fail_msg("%s[%lld] = %d, want %d", w->name, (long long)i, ((int32_t *)got)[i],
                         ((int32_t *)want_v)[i]);
        } else if (((bool *)got)[i] != ((bool *)want_v)[i]) {
            fail_msg("%s[%lld] = %d, want %d", w->name, (long long)i, ((bool *)got)[i], ((bool *)want_v)[i]);
        }
    }
    free(got);
    free(want_v);
}

static void expect_file(const char *file, bool with_metadata)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_load(path, dev, &st), path);
    size_t n = 0;
    tdt_check(td_safetensors_count(st, &n), "count");
    assert_int_equal(n, NT);
    for (size_t k = 0; k < NT; k++) {
        td_tensor *t = NULL;
        tdt_check(td_safetensors_get(st, tensors[k].name, &t), tensors[k].name);
        expect_tensor(t, &tensors[k]);
        td_backend kind, want_kind;
        tdt_check(td_tensor_backend(t, &kind), "backend");
        tdt_check(td_device_backend(inner, &want_kind), "device backend");
        if (strcmp(which, "autodiff") == 0 && (tensors[k].dtype == TD_F32 || kind == TD_BACKEND_AUTODIFF))
            want_kind = TD_BACKEND_AUTODIFF;
        if (kind != want_kind)
            fail_msg("%s is on backend %s, want %s", tensors[k].name, td_backend_name(kind),
                     td_backend_name(want_kind));
        td_tensor_release(t);
    }
    const char *v = NULL;
    tdt_check(td_safetensors_metadata_count(st, &n), "metadata count");
    assert_int_equal(n, with_metadata ? 3 : 0);
    if (with_metadata) {
        tdt_check(td_safetensors_metadata(st, "format", &v), "format");
        assert_string_equal(v, "pt");
        tdt_check(td_safetensors_metadata(st, "unicode", &v), "unicode");
        assert_string_equal(v, "h\xc3\xa9llo \xe2\x9c\x93");
    }
    td_safetensors_free(st);
}

/* ---- the tests ---- */

static void loads_python_files(void **state)
{
    (void)state;
    expect_file("py_all.safetensors", true);
    expect_file("py_reordered.safetensors", false);
}

static const char *const lib_meta[4] = { "writer", "tdispatch", "quote\"key", "back\\slash" };

/* Tensors made here on the device, saved for the script (lib_<device>.safetensors), and
 * loaded back. */
static void saves_for_python(void **state)
{
    (void)state;
    td_tensor *t[NT] = { NULL };
    const char *names[NT];
    for (size_t k = 0; k < NT; k++) {
        const want *w = &tensors[k];
        const int64_t n = numel_of(w);
        void *v = values_of(w, n);
        names[k] = w->name;
        if (w->f)
            tdt_check(td_float_from_data(dev, v, w->dims, w->ndim, &t[k]), w->name);
        else if (w->i)
            tdt_check(td_int_from_data(dev, v, w->dims, w->ndim, &t[k]), w->name);
        else
            tdt_check(td_bool_from_data(dev, v, w->dims, w->ndim, &t[k]), w->name);
        free(v);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/lib_%s.safetensors", dir, which);
    tdt_check(td_safetensors_save(path, names, t, NT, lib_meta, 2), "save");
    for (size_t k = 0; k < NT; k++)
        td_tensor_release(t[k]);
    if (!td_safetensors_available())
        return;
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_load(path, dev, &st), "load back");
    for (size_t k = 0; k < NT; k++) {
        td_tensor *x = NULL;
        tdt_check(td_safetensors_get(st, tensors[k].name, &x), tensors[k].name);
        expect_tensor(x, &tensors[k]);
        td_tensor_release(x);
    }
    const char *v = NULL;
    tdt_check(td_safetensors_metadata(st, "quote\"key", &v), "metadata");
    assert_string_equal(v, "back\\slash");
    td_safetensors_free(st);
}

/* The tensors of the script's file, loaded onto the device, saved again from there in the
 * order of the file (lib_<device>_resaved.safetensors). */
static void resaves_python_file(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/py_reordered.safetensors", dir);
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_load(path, dev, &st), path);
    td_tensor *t[NT] = { NULL };
    const char *names[NT];
    for (size_t k = 0; k < NT; k++) {
        tdt_check(td_safetensors_name(st, k, &names[k]), "name");
        tdt_check(td_safetensors_tensor(st, k, &t[k]), "tensor");
    }
    snprintf(path, sizeof path, "%s/lib_%s_resaved.safetensors", dir, which);
    tdt_check(td_safetensors_save(path, names, t, NT, lib_meta, 2), "save");
    for (size_t k = 0; k < NT; k++)
        td_tensor_release(t[k]);
    td_safetensors_free(st);
}

static int setup(void **state)
{
    (void)state;
    if (strcmp(which, "cpu") == 0 || strcmp(which, "autodiff") == 0) {
        tdt_check(td_device_open(TD_BACKEND_CPU, 0, &inner), "cpu");
    } else {
        tdt_check(td_device_open(TD_BACKEND_VULKAN, 0, &inner), "vulkan");
    }
    if (strcmp(which, "autodiff") == 0)
        tdt_check(td_device_autodiff(inner, TD_CHECKPOINT_NONE, &dev), "autodiff");
    else
        tdt_check(td_device_retain(dev = inner), "retain");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    td_device_release(dev);
    td_device_release(inner);
    return td_testing_live_objects() == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "cpu") != 0 && strcmp(argv[2], "autodiff") != 0 &&
                      strcmp(argv[2], "vulkan") != 0)) {
        fprintf(stderr, "usage: test_safetensors_interop DIR cpu|autodiff|vulkan\n");
        return 2;
    }
    dir = argv[1];
    which = argv[2];
    if (strcmp(which, "vulkan") == 0) {
        int count = 0;
        if (!td_backend_enabled(TD_BACKEND_VULKAN) || td_device_count(TD_BACKEND_VULKAN, &count) != TD_OK ||
            count == 0) {
            printf("test_safetensors_interop: SKIPPED: no Vulkan device here\n");
            return 77;
        }
    }
    const struct CMUnitTest tests[] = {
        TDT_TEST(loads_python_files),
        TDT_TEST(saves_for_python),
        TDT_TEST(resaves_python_file),
    };
    const struct CMUnitTest writer_only[] = {
        TDT_TEST(saves_for_python),
    };
    if (td_safetensors_available())
        return cmocka_run_group_tests_name(which, tests, setup, teardown);
    printf("test_safetensors_interop: this build has no safetensors reader (no cJSON): the writer is checked "
           "by the script, loading is not tested\n");
    return cmocka_run_group_tests_name(which, writer_only, setup, teardown);
}
