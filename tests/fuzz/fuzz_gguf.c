/* libFuzzer harness of the GGUF reader: each input is a whole file's bytes, parsed by
 * td_gguf_parse.
 *
 * The reader promises a status for any bytes: TD_OK, or an error with a message, and
 * nothing leaked either way. So any of these is a crash (abort): an error without a message
 * of its own, a handle returned with an error or none with TD_OK, lookups that disagree
 * with the enumeration (a key or tensor name not found at its own index), a tensor whose
 * byte count is not its shape's, a loadable (f32/f16/bf16) tensor that does not load, tensors
 * alive after the call (ASan finds the rest), or a parsed file that does not come back the
 * same through the writer (td_gguf_writer_*) and a second parse: keys, value types and
 * values, tensor names, types, dims and bytes (unless the written file would pass 64 MiB:
 * general.alignment may be up to 2^31, and each tensor is padded to it). Build and run: tests/fuzz/CMakeLists.txt. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_gguf.h"
#include "td_ops.h"

static td_device *cpu;

/* Files the writer would make larger than this are sized, not written and parsed again. */
#define MAX_WRITTEN ((size_t)64 << 20)

static void die(const char *what)
{
    fprintf(stderr, "fuzz_gguf: %s (last error: '%s')\n", what, td_last_error());
    abort();
}

static void check(td_status st, const char *what)
{
    if (st != TD_OK)
        die(what);
}

/* Bytes of one host element of a numeric or bool value type. */
static size_t host_size(td_gguf_type t)
{
    switch (t) {
    case TD_GGUF_UINT8: case TD_GGUF_INT8: return 1;
    case TD_GGUF_BOOL: return sizeof(bool);
    case TD_GGUF_UINT16: case TD_GGUF_INT16: return 2;
    case TD_GGUF_UINT32: case TD_GGUF_INT32: case TD_GGUF_FLOAT32: return 4;
    default: return 8;
    }
}

/* A scalar value's host bytes (at most 8) through its typed getter. */
static void get_scalar(const td_gguf *g, const char *key, td_gguf_type t, unsigned char out[8])
{
    memset(out, 0, 8);
    td_status st = TD_E_INTERNAL;
    switch (t) {
    case TD_GGUF_UINT8: st = td_gguf_get_u8(g, key, (uint8_t *)out); break;
    case TD_GGUF_INT8: st = td_gguf_get_i8(g, key, (int8_t *)(void *)out); break;
    case TD_GGUF_UINT16: st = td_gguf_get_u16(g, key, (uint16_t *)(void *)out); break;
    case TD_GGUF_INT16: st = td_gguf_get_i16(g, key, (int16_t *)(void *)out); break;
    case TD_GGUF_UINT32: st = td_gguf_get_u32(g, key, (uint32_t *)(void *)out); break;
    case TD_GGUF_INT32: st = td_gguf_get_i32(g, key, (int32_t *)(void *)out); break;
    case TD_GGUF_FLOAT32: st = td_gguf_get_f32(g, key, (float *)(void *)out); break;
    case TD_GGUF_BOOL: st = td_gguf_get_bool(g, key, (bool *)(void *)out); break;
    case TD_GGUF_UINT64: st = td_gguf_get_u64(g, key, (uint64_t *)(void *)out); break;
    case TD_GGUF_INT64: st = td_gguf_get_i64(g, key, (int64_t *)(void *)out); break;
    case TD_GGUF_FLOAT64: st = td_gguf_get_f64(g, key, (double *)(void *)out); break;
    default: break;
    }
    check(st, "a typed getter of the key's own type");
}

/* Copies key/value i of g into w. */
static void copy_kv(const td_gguf *g, size_t i, td_gguf_writer *w)
{
    const char *key = NULL;
    td_gguf_type t;
    check(td_gguf_kv_at(g, i, &key, &t), "kv_at");
    size_t ix = (size_t)-1;
    check(td_gguf_find_key(g, key, &ix), "find_key of a listed key");
    if (ix != i)
        die("find_key finds another key/value");
    if (t == TD_GGUF_STRING) {
        const char *s = NULL;
        size_t len = 0;
        check(td_gguf_get_string(g, key, &s, &len), "get_string");
        if (s[len] != '\0')
            die("a string without its NUL");
        check(td_gguf_writer_add_string(w, key, s, len), "add_string");
        return;
    }
    if (t != TD_GGUF_ARRAY) {
        unsigned char v[8];
        get_scalar(g, key, t, v);
        td_status st = TD_E_INTERNAL;
        switch (t) {
        case TD_GGUF_UINT8: st = td_gguf_writer_add_u8(w, key, *(uint8_t *)v); break;
        case TD_GGUF_INT8: st = td_gguf_writer_add_i8(w, key, *(int8_t *)(void *)v); break;
        case TD_GGUF_UINT16: st = td_gguf_writer_add_u16(w, key, *(uint16_t *)(void *)v); break;
        case TD_GGUF_INT16: st = td_gguf_writer_add_i16(w, key, *(int16_t *)(void *)v); break;
        case TD_GGUF_UINT32: st = td_gguf_writer_add_u32(w, key, *(uint32_t *)(void *)v); break;
        case TD_GGUF_INT32: st = td_gguf_writer_add_i32(w, key, *(int32_t *)(void *)v); break;
        case TD_GGUF_FLOAT32: st = td_gguf_writer_add_f32(w, key, *(float *)(void *)v); break;
        case TD_GGUF_BOOL: st = td_gguf_writer_add_bool(w, key, *(bool *)(void *)v); break;
        case TD_GGUF_UINT64: st = td_gguf_writer_add_u64(w, key, *(uint64_t *)(void *)v); break;
        case TD_GGUF_INT64: st = td_gguf_writer_add_i64(w, key, *(int64_t *)(void *)v); break;
        case TD_GGUF_FLOAT64: st = td_gguf_writer_add_f64(w, key, *(double *)(void *)v); break;
        default: die("a value type the format does not have was accepted");
        }
        check(st, "add a scalar");
        return;
    }
    td_gguf_type et;
    size_t n = 0;
    check(td_gguf_get_array_info(g, key, &et, &n), "array info");
    if (et == TD_GGUF_STRING) {
        const char **strs = calloc(n + 1, sizeof *strs);
        size_t *lens = calloc(n + 1, sizeof *lens);
        if (strs == NULL || lens == NULL)
            die("out of memory in the harness");
        for (size_t k = 0; k < n; k++)
            check(td_gguf_get_array_string(g, key, k, &strs[k], &lens[k]), "array string");
        check(td_gguf_writer_add_string_array(w, key, strs, lens, n), "add_string_array");
        free(lens);
        free(strs);
        return;
    }
    if (et == TD_GGUF_ARRAY || et == TD_GGUF_STRING)
        die("an array of arrays was accepted");
    void *data = malloc(n * host_size(et) + 1);
    if (data == NULL)
        die("out of memory in the harness");
    check(td_gguf_get_array(g, key, et, data, n), "get_array");
    check(td_gguf_writer_add_array(w, key, et, data, n), "add_array");
    free(data);
}

/* The tensors agree with their lookups and their types' sizes; loadable ones load. */
static void check_tensor(const td_gguf *g, size_t i, td_gguf_tensor_info *ti)
{
    check(td_gguf_tensor_info_at(g, i, ti), "tensor_info_at");
    size_t ix = (size_t)-1;
    check(td_gguf_find_tensor(g, ti->name, &ix), "find_tensor of a listed name");
    if (ix != i)
        die("find_tensor finds another tensor");
    int64_t block = 0, numel = 1;
    size_t bb = 0;
    check(td_gguf_ggml_type_block(ti->ggml_type, &block, &bb), "the type of a parsed tensor");
    if (ti->ndim < 0 || ti->ndim > TD_GGUF_MAX_DIMS)
        die("a tensor with too many dims was accepted");
    for (int k = 0; k < ti->ndim; k++) {
        if ((uint64_t)ti->shape[ti->ndim - 1 - k] != ti->dims[k])
            die("shape is not dims reversed");
        numel *= (int64_t)ti->dims[k];
    }
    if (numel != ti->numel || numel % block != 0 || (uint64_t)(numel / block) * bb != ti->nbytes)
        die("a tensor's byte count is not its shape's");
    if (ti->nbytes > 0) { /* touch the first and last byte: ASan checks they are inside */
        volatile unsigned char x = ((const unsigned char *)ti->data)[0];
        x = ((const unsigned char *)ti->data)[ti->nbytes - 1];
        (void)x;
    }
    td_tensor *t = NULL, *own = NULL;
    const td_status st = td_gguf_load_tensor(g, ti->name, cpu, &t);
    const uint32_t ty = ti->ggml_type;
    const bool quantized = ty == TD_GGML_Q8_0 || ty == TD_GGML_Q4_0;
    const bool loadable = ty == TD_GGML_F32 || ty == TD_GGML_F16 || ty == TD_GGML_BF16 || quantized;
    if (loadable && st != TD_OK)
        die("an f32/f16/bf16/q8_0/q4_0 tensor did not load");
    if (!loadable && st != TD_E_UNSUPPORTED)
        die("another type loaded, or failed otherwise than TD_E_UNSUPPORTED");
    /* In its own dtype: every type a td_dtype has loads; a q8_0 / q4_0 one dequantizes to the
     * bits td_gguf_load_tensor gave. */
    const td_status so = td_gguf_load_tensor_dtype(g, ti->name, cpu, &own);
    const bool has_dtype = loadable || ty == TD_GGML_F64 || ty == TD_GGML_I8 || ty == TD_GGML_I32 ||
                           ty == TD_GGML_I64;
    if (has_dtype && so != TD_OK)
        die("a tensor of a td_dtype's type did not load in its dtype");
    if (!has_dtype && so != TD_E_UNSUPPORTED)
        die("a type without a td_dtype loaded, or failed otherwise than TD_E_UNSUPPORTED");
    if (quantized && so == TD_OK && ti->numel > 0) {
        float *a = malloc(sizeof(float) * (size_t)ti->numel), *b = malloc(sizeof(float) * (size_t)ti->numel);
        if (a == NULL || b == NULL)
            die("out of memory in the harness");
        check(td_float_into_data(t, a, ti->numel), "into_data of the f32 load");
        check(td_float_into_data_dtype(own, TD_F32, b, ti->numel), "into_data_dtype of the quantized load");
        if (memcmp(a, b, sizeof(float) * (size_t)ti->numel) != 0)
            die("a quantized tensor's values differ between its f32 load and its own dtype");
        free(a);
        free(b);
    }
    td_tensor_release(own);
    td_tensor_release(t);
}

/* Writes what g holds, parses it again and compares. */
static void round_trip(const td_gguf *g)
{
    size_t nkv = 0, nt = 0;
    check(td_gguf_kv_count(g, &nkv), "kv_count");
    check(td_gguf_tensor_count(g, &nt), "tensor_count");
    td_gguf_writer *w = NULL;
    check(td_gguf_writer_new(&w), "writer_new");
    for (size_t i = 0; i < nkv; i++)
        copy_kv(g, i, w);
    bool skip = false;
    for (size_t i = 0; i < nt; i++) {
        td_gguf_tensor_info ti;
        check_tensor(g, i, &ti);
        if (strlen(ti.name) >= TD_GGUF_MAX_NAME) { /* read (the format allows 64), not written (ggml reads 63) */
            if (td_gguf_writer_add_tensor(w, ti.name, ti.ggml_type, ti.shape, ti.ndim, ti.data,
                                          (size_t)ti.nbytes) != TD_E_INVALID)
                die("the writer took a 64-byte tensor name");
            skip = true;
            continue;
        }
        check(td_gguf_writer_add_tensor(w, ti.name, ti.ggml_type, ti.shape, ti.ndim, ti.data, (size_t)ti.nbytes),
              "add_tensor of a parsed tensor");
    }
    if (skip) {
        td_gguf_writer_free(w);
        return;
    }
    size_t size = 0;
    check(td_gguf_writer_size(w, &size), "writer_size");
    if (size > MAX_WRITTEN) { /* a huge alignment (legal up to 2^31) pads a small file to gigabytes */
        td_gguf_writer_free(w);
        return;
    }
    unsigned char *buf = malloc(size ? size : 1);
    if (buf == NULL)
        die("out of memory in the harness");
    check(td_gguf_writer_write_to(w, buf, size), "write_to");
    td_gguf_writer_free(w);
    td_gguf *again = NULL;
    check(td_gguf_parse(buf, size, &again), "parse of a written file");
    size_t nkv2 = 0, nt2 = 0;
    check(td_gguf_kv_count(again, &nkv2), "kv_count again");
    check(td_gguf_tensor_count(again, &nt2), "tensor_count again");
    if (nkv2 != nkv || nt2 != nt)
        die("the written file has other counts");
    uint32_t a1 = 0, a2 = 0;
    check(td_gguf_alignment(g, &a1), "alignment");
    check(td_gguf_alignment(again, &a2), "alignment again");
    if (a1 != a2)
        die("the alignment changed");
    for (size_t i = 0; i < nkv; i++) {
        const char *k1, *k2;
        td_gguf_type t1, t2;
        check(td_gguf_kv_at(g, i, &k1, &t1), "kv_at");
        check(td_gguf_kv_at(again, i, &k2, &t2), "kv_at again");
        if (strcmp(k1, k2) != 0 || t1 != t2)
            die("a key or value type changed");
        if (t1 == TD_GGUF_STRING) {
            const char *s1, *s2;
            size_t l1, l2;
            check(td_gguf_get_string(g, k1, &s1, &l1), "string");
            check(td_gguf_get_string(again, k2, &s2, &l2), "string again");
            if (l1 != l2 || memcmp(s1, s2, l1) != 0)
                die("a string changed");
        } else if (t1 == TD_GGUF_ARRAY) {
            td_gguf_type e1, e2;
            size_t n1, n2;
            check(td_gguf_get_array_info(g, k1, &e1, &n1), "array info");
            check(td_gguf_get_array_info(again, k2, &e2, &n2), "array info again");
            if (e1 != e2 || n1 != n2)
                die("an array changed type or length");
            for (size_t k = 0; e1 == TD_GGUF_STRING && k < n1; k++) {
                const char *s1, *s2;
                size_t l1, l2;
                check(td_gguf_get_array_string(g, k1, k, &s1, &l1), "array string");
                check(td_gguf_get_array_string(again, k2, k, &s2, &l2), "array string again");
                if (l1 != l2 || memcmp(s1, s2, l1) != 0)
                    die("an array string changed");
            }
            if (e1 != TD_GGUF_STRING) {
                unsigned char *d1 = malloc(n1 * host_size(e1) + 1), *d2 = malloc(n1 * host_size(e1) + 1);
                if (d1 == NULL || d2 == NULL)
                    die("out of memory in the harness");
                check(td_gguf_get_array(g, k1, e1, d1, n1), "array");
                check(td_gguf_get_array(again, k2, e1, d2, n1), "array again");
                if (memcmp(d1, d2, n1 * host_size(e1)) != 0) /* bits: NaNs compare too */
                    die("array values changed");
                free(d1);
                free(d2);
            }
        } else {
            unsigned char v1[8], v2[8];
            get_scalar(g, k1, t1, v1);
            get_scalar(again, k2, t2, v2);
            if (memcmp(v1, v2, 8) != 0)
                die("a value changed");
        }
    }
    for (size_t i = 0; i < nt; i++) {
        td_gguf_tensor_info x, y;
        check(td_gguf_tensor_info_at(g, i, &x), "info");
        check(td_gguf_tensor_info_at(again, i, &y), "info again");
        if (strcmp(x.name, y.name) != 0 || x.ggml_type != y.ggml_type || x.ndim != y.ndim ||
            memcmp(x.dims, y.dims, sizeof x.dims) != 0 || x.nbytes != y.nbytes ||
            (x.nbytes && memcmp(x.data, y.data, (size_t)x.nbytes) != 0))
            die("a tensor changed through the writer");
        if (y.offset % a2 != 0)
            die("the writer put a tensor off the alignment");
    }
    td_gguf_free(again);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (cpu == NULL)
        check(td_device_open(TD_BACKEND_CPU, 0, &cpu), "cpu device");
    const long live = td_testing_live_objects();
    /* a known message before the call, so that an error that sets none is seen */
    char before[256];
    td_gguf_kv_count(NULL, NULL);
    snprintf(before, sizeof before, "%s", td_last_error());
    td_gguf *g = (td_gguf *)&cpu;
    const td_status rc = td_gguf_parse(size ? (const void *)data : "", size, &g);
    if (rc != TD_OK) {
        if (g != NULL)
            die("an error that returned a handle");
        if (td_last_error()[0] == '\0' || strcmp(td_last_error(), before) == 0)
            die("an error without a message of its own");
    } else {
        if (g == NULL)
            die("TD_OK without a handle");
        round_trip(g);
        td_gguf_free(g);
    }
    if (td_testing_live_objects() != live)
        die("tensors left alive");
    return 0;
}
