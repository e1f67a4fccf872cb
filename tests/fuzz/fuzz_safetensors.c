/* libFuzzer harness of the safetensors reader: each input is a whole file's bytes, parsed
 * by td_safetensors_parse onto the cpu device.
 *
 * The reader promises a status for any bytes: TD_OK, or an error with a message, and
 * nothing leaked either way. So any of these is a crash (abort): an error without a
 * message, a handle returned with an error or none with TD_OK, objects alive after the
 * handle is freed (ASan finds the rest), a loaded handle whose lookups disagree (a name not
 * found by td_safetensors_get, two tensors with one name, metadata out of order), or a
 * loaded file that does not come back the same through td_safetensors_save and a second
 * parse (names, dtypes, shapes and bytes). Build and run: tests/fuzz/CMakeLists.txt. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_ops.h"
#include "td_safetensors.h"

static td_device *cpu;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_safetensors: %s (last error: '%s')\n", what, td_last_error());
    abort();
}

static void check(td_status st, const char *what)
{
    if (st != TD_OK)
        die(what);
}

/* The tensor's bytes as the file holds them, in its own dtype (td_dtype_size bytes each). */
static unsigned char *bytes_of(const td_tensor *t, size_t *len)
{
    td_dtype dt;
    int64_t n = 0;
    check(td_tensor_dtype(t, &dt), "dtype");
    check(td_tensor_numel(t, &n), "numel");
    const size_t each = td_dtype_size(dt);
    unsigned char *p = malloc((size_t)n * each + 1);
    if (p == NULL)
        die("out of memory in the harness");
    td_status st;
    switch (td_dtype_class(dt)) {
    case TD_CLASS_FLOAT: st = td_float_into_data_dtype(t, dt, p, n); break;
    case TD_CLASS_INT: st = td_int_into_data_dtype(t, dt, p, n); break;
    default: st = td_bool_into_data(t, (bool *)(void *)p, n); break;
    }
    check(st, "into_data");
    *len = (size_t)n * each;
    return p;
}

static void expect_same_tensor(const td_tensor *a, const td_tensor *b)
{
    td_dtype da, db;
    int64_t sa[TD_MAX_DIMS], sb[TD_MAX_DIMS];
    int na = 0, nb = 0;
    check(td_tensor_dtype(a, &da), "dtype a");
    check(td_tensor_dtype(b, &db), "dtype b");
    check(td_tensor_shape(a, sa, &na), "shape a");
    check(td_tensor_shape(b, sb, &nb), "shape b");
    if (da != db || na != nb || memcmp(sa, sb, (size_t)na * sizeof sa[0]) != 0)
        die("a tensor changed dtype or shape through save and parse");
    size_t la = 0, lb = 0;
    unsigned char *pa = bytes_of(a, &la), *pb = bytes_of(b, &lb);
    if (la != lb || memcmp(pa, pb, la) != 0)
        die("a tensor changed its bytes through save and parse");
    free(pa);
    free(pb);
}

/* The handle's lookups agree with each other. */
static void check_handle(const td_safetensors *st)
{
    size_t n = 0, nm = 0;
    check(td_safetensors_count(st, &n), "count");
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL;
        td_tensor *by_index = NULL, *by_name = NULL;
        check(td_safetensors_name(st, i, &name), "name");
        if (name[0] == '\0')
            die("a tensor with an empty name was accepted");
        check(td_safetensors_tensor(st, i, &by_index), "tensor");
        check(td_safetensors_get(st, name, &by_name), "get by the name at the index");
        if (by_index != by_name)
            die("two tensors share a name, or get finds another tensor");
        td_tensor_release(by_index);
        td_tensor_release(by_name);
    }
    check(td_safetensors_metadata_count(st, &nm), "metadata count");
    const char *prev = NULL;
    for (size_t i = 0; i < nm; i++) {
        const char *k = NULL, *v = NULL, *found = NULL;
        check(td_safetensors_metadata_at(st, i, &k, &v), "metadata_at");
        if (prev != NULL && strcmp(prev, k) >= 0)
            die("metadata keys out of order or repeated");
        check(td_safetensors_metadata(st, k, &found), "metadata");
        if (found != v)
            die("metadata lookup finds another value");
        prev = k;
    }
}

/* Saves what was loaded, parses the file again and compares. */
static void round_trip(const td_safetensors *st)
{
    size_t n = 0, nm = 0;
    check(td_safetensors_count(st, &n), "count");
    check(td_safetensors_metadata_count(st, &nm), "metadata count");
    const char **names = calloc(n + 1, sizeof *names);
    td_tensor **ts = calloc(n + 1, sizeof *ts);
    const char **kv = calloc(2 * nm + 1, sizeof *kv);
    if (names == NULL || ts == NULL || kv == NULL)
        die("out of memory in the harness");
    for (size_t i = 0; i < n; i++) {
        check(td_safetensors_name(st, i, &names[i]), "name");
        check(td_safetensors_tensor(st, i, &ts[i]), "tensor");
    }
    for (size_t i = 0; i < nm; i++)
        check(td_safetensors_metadata_at(st, i, &kv[2 * i], &kv[2 * i + 1]), "metadata_at");
    const char *path = "fuzz_safetensors_round_trip.safetensors";
    check(td_safetensors_save(path, names, ts, n, kv, nm), "save of a loaded file");
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        die("the saved file is missing");
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
    if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size)
        die("cannot read the saved file back");
    fclose(f);
    td_safetensors *again = NULL;
    check(td_safetensors_parse(buf, (size_t)size, cpu, &again), "parse of a saved file");
    size_t n2 = 0, nm2 = 0;
    check(td_safetensors_count(again, &n2), "count again");
    check(td_safetensors_metadata_count(again, &nm2), "metadata count again");
    if (n2 != n || nm2 != nm)
        die("the saved file has other counts");
    for (size_t i = 0; i < n; i++) {
        td_tensor *t = NULL;
        check(td_safetensors_get(again, names[i], &t), "get again");
        expect_same_tensor(ts[i], t);
        td_tensor_release(t);
    }
    for (size_t i = 0; i < nm; i++) {
        const char *v = NULL;
        check(td_safetensors_metadata(again, kv[2 * i], &v), "metadata again");
        if (v == NULL || strcmp(v, kv[2 * i + 1]) != 0)
            die("a metadata value changed through save and parse");
    }
    td_safetensors_free(again);
    for (size_t i = 0; i < n; i++)
        td_tensor_release(ts[i]);
    free(buf);
    free(kv);
    free(ts);
    free(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (cpu == NULL)
        check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "cpu device");
    const long live = td_testing_live_objects();
    /* a known message before the call, so that an error that sets none is seen */
    char before[256];
    td_safetensors_count(NULL, NULL);
    snprintf(before, sizeof before, "%s", td_last_error());
    td_safetensors *st = (td_safetensors *)&cpu;
    const td_status rc = td_safetensors_parse(data, size, cpu, &st);
    if (rc != TD_OK) {
        if (st != NULL)
            die("an error that returned a handle");
        if (td_last_error()[0] == '\0' || strcmp(td_last_error(), before) == 0)
            die("an error without a message of its own");
    } else {
        if (st == NULL)
            die("TD_OK without a handle");
        check_handle(st);
        round_trip(st);
        td_safetensors_free(st);
    }
    if (td_testing_live_objects() != live)
        die("tensors left alive");
    return 0;
}
