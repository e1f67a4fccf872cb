/* safetensors: round trips, the bytes the writer makes, and one test per kind of hostile
 * file, each checking the status, the message and that nothing leaked. The files are
 * written here byte by byte (JSON text in the tests, with ' for "), never by the library. */
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

static td_device *cpu, *ad;

static int setup(void **state)
{
    (void)state;
    return tdt_open_devices(TD_BACKEND_CPU, &cpu, &ad, NULL);
}

static int teardown(void **state)
{
    (void)state;
    return tdt_close_devices(cpu, ad, NULL);
}

/* ---- files made by hand ---- */

typedef struct blob {
    unsigned char *p;
    size_t len;
} blob;

/* 8-byte little-endian declared_len, then json (' becomes "), then data_len bytes of data. */
static blob file_with_len(uint64_t declared_len, const char *json, const void *data, size_t data_len)
{
    const size_t jlen = strlen(json);
    blob b = { malloc(8 + jlen + data_len + 1), 8 + jlen + data_len };
    assert_non_null(b.p);
    for (int k = 0; k < 8; k++)
        b.p[k] = (unsigned char)(declared_len >> (8 * k));
    for (size_t i = 0; i < jlen; i++)
        b.p[8 + i] = (unsigned char)(json[i] == '\'' ? '"' : json[i]);
    if (data_len)
        memcpy(b.p + 8 + jlen, data, data_len);
    return b;
}

static blob file_of(const char *json, const void *data, size_t data_len)
{
    return file_with_len(strlen(json), json, data, data_len);
}

/* Whether needle (n bytes) occurs in b. */
static bool blob_has(blob b, const char *needle, size_t n)
{
    for (size_t i = 0; i + n <= b.len; i++)
        if (memcmp(b.p + i, needle, n) == 0)
            return true;
    return false;
}

static void write_blob(const char *path, blob b)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.p, 1, b.len, f), b.len);
    assert_int_equal(fclose(f), 0);
}

static blob read_blob(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    blob b = { malloc(1 << 16), 0 };
    assert_non_null(b.p);
    b.len = fread(b.p, 1, 1 << 16, f);
    fclose(f);
    return b;
}

/* Parses b on the cpu and expects status want with msg (and a second piece, when not NULL)
 * in the message, and no handle. */
static void expect_parse_error(blob b, td_status want, const char *msg, const char *msg2)
{
    td_safetensors *st = (td_safetensors *)&st;
    const td_status got = td_safetensors_parse(b.p, b.len, cpu, &st);
    if (got != want || strstr(td_last_error(), msg) == NULL || (msg2 && strstr(td_last_error(), msg2) == NULL))
        fail_msg("got %s '%s', want %s with '%s'%s%s", td_status_name(got), td_last_error(), td_status_name(want),
                 msg, msg2 ? " and " : "", msg2 ? msg2 : "");
    assert_null(st);
    free(b.p);
}

#define ENTRY_F32_2 "{'dtype':'F32','shape':[2],'data_offsets':[0,8]}"
static const unsigned char eight[8] = { 0 };

/* ---- round trips ---- */

static const float f23[6] = { 1.5f, -2.0f, 0.0f, -0.0f, 3.25f, 1e-3f };
static const int32_t i4[4] = { INT32_MIN, -1, 0, INT32_MAX };
static const bool b22[4] = { true, false, false, true };
static const float scalar = 42.0f;

static const char *const names5[5] = { "weights", "ids", "mask", "scale", "empty" };
static const char *const meta[4] = { "format", "pt", "author", "tdispatch test" };

static void save_five(const char *path, td_device *d)
{
    static const int64_t s23[] = { 2, 3 }, s4[] = { 4 }, s22[] = { 2, 2 }, s03[] = { 0, 3 };
    td_tensor *t[5] = { NULL };
    tdt_check(td_float_from_data(d, f23, s23, 2, &t[0]), "f32");
    tdt_check(td_int_from_data(d, i4, s4, 1, &t[1]), "i32");
    tdt_check(td_bool_from_data(d, b22, s22, 2, &t[2]), "bool");
    tdt_check(td_float_from_data(d, &scalar, NULL, 0, &t[3]), "scalar");
    tdt_check(td_int_from_data(d, NULL, s03, 2, &t[4]), "empty");
    tdt_check(td_safetensors_save(path, names5, t, 5, meta, 2), "save");
    for (int i = 0; i < 5; i++)
        td_tensor_release(t[i]);
}

static void expect_five(const td_safetensors *st, td_backend float_kind)
{
    static const int64_t s23[] = { 2, 3 }, s4[] = { 4 }, s22[] = { 2, 2 }, s03[] = { 0, 3 };
    size_t n = 0;
    tdt_check(td_safetensors_count(st, &n), "count");
    assert_int_equal(n, 5);
    for (size_t i = 0; i < 5; i++) { /* in the order of the data: the order saved */
        const char *name = NULL;
        tdt_check(td_safetensors_name(st, i, &name), "name");
        assert_string_equal(name, names5[i]);
    }
    td_tensor *t = NULL;
    tdt_check(td_safetensors_get(st, "weights", &t), "get weights");
    tdt_expect(t, TD_F32, s23, 2, f23, 6, 0.0f);
    td_backend kind;
    tdt_check(td_tensor_backend(t, &kind), "backend");
    assert_int_equal(kind, float_kind);
    td_tensor_release(t);
    tdt_check(td_safetensors_get(st, "ids", &t), "get ids");
    tdt_expect(t, TD_I32, s4, 1, i4, 4, 0.0f);
    td_tensor_release(t);
    tdt_check(td_safetensors_get(st, "mask", &t), "get mask");
    tdt_expect(t, TD_BOOL, s22, 2, b22, 4, 0.0f);
    td_tensor_release(t);
    tdt_check(td_safetensors_tensor(st, 3, &t), "tensor 3");
    tdt_expect(t, TD_F32, NULL, 0, &scalar, 1, 0.0f);
    td_tensor_release(t);
    tdt_check(td_safetensors_get(st, "empty", &t), "get empty");
    tdt_expect(t, TD_I32, s03, 2, NULL, 0, 0.0f);
    td_tensor_release(t);

    const char *v = NULL, *k = NULL;
    tdt_check(td_safetensors_metadata_count(st, &n), "metadata count");
    assert_int_equal(n, 2);
    tdt_check(td_safetensors_metadata(st, "format", &v), "metadata");
    assert_string_equal(v, "pt");
    tdt_check(td_safetensors_metadata(st, "nope", &v), "metadata nope");
    assert_null(v);
    tdt_check(td_safetensors_metadata_at(st, 0, &k, &v), "metadata_at 0"); /* sorted by key */
    assert_string_equal(k, "author");
    assert_string_equal(v, "tdispatch test");
}

static void round_trip_cpu(void **state)
{
    (void)state;
    save_five("st_round_trip_cpu.safetensors", cpu);
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_load("st_round_trip_cpu.safetensors", cpu, &st), "load");
    expect_five(st, TD_BACKEND_CPU);
    td_safetensors_free(st);
    /* the same bytes through the memory entry */
    blob b = read_blob("st_round_trip_cpu.safetensors");
    tdt_check(td_safetensors_parse(b.p, b.len, cpu, &st), "parse");
    expect_five(st, TD_BACKEND_CPU);
    td_safetensors_free(st);
    free(b.p);
}

/* Saved from an autodiff device, loaded onto one: float tensors come back as autodiff
 * tensors (leaves), with the same values. */
static void round_trip_autodiff(void **state)
{
    (void)state;
    save_five("st_round_trip_ad.safetensors", ad);
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_load("st_round_trip_ad.safetensors", ad, &st), "load");
    expect_five(st, TD_BACKEND_AUTODIFF);
    td_safetensors_free(st);
}

/* The writer's bytes for x = [1, -2] (F32), by hand: the length, the header padded with
 * spaces so that the data starts at a multiple of 8, then 1.0f = 0x3f800000 and -2.0f =
 * 0xc0000000 little-endian. */
static void writer_bytes(void **state)
{
    (void)state;
    static const float v[2] = { 1.0f, -2.0f };
    static const int64_t s2[] = { 2 };
    static const char *const name[1] = { "x" };
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t), "x");
    tdt_check(td_safetensors_save("st_writer_bytes.safetensors", name, &t, 1, NULL, 0), "save");
    td_tensor_release(t);
    const char *json = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"; /* 54 bytes */
    const size_t padded = 56;                                                        /* 8 + 56 = 64 */
    blob b = read_blob("st_writer_bytes.safetensors");
    assert_int_equal(b.len, 8 + padded + 8);
    static const unsigned char len8[8] = { 56, 0, 0, 0, 0, 0, 0, 0 };
    assert_memory_equal(b.p, len8, 8);
    assert_memory_equal(b.p + 8, json, strlen(json));
    assert_memory_equal(b.p + 8 + strlen(json), "  ", 2);
    static const unsigned char data[8] = { 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0 };
    assert_memory_equal(b.p + 8 + padded, data, 8);
    free(b.p);
}

/* Names and metadata with quotes, backslashes, a control character and UTF-8 survive. */
static void writer_escapes(void **state)
{
    (void)state;
    static const int64_t s1[] = { 1 };
    static const int32_t one = 7;
    static const char *const name[1] = { "a\"b\\c\nd\xc3\xa9" };
    static const char *const kv[2] = { "k\"ey", "v\\al\t" };
    td_tensor *t = NULL;
    tdt_check(td_int_from_data(cpu, &one, s1, 1, &t), "t");
    tdt_check(td_safetensors_save("st_escapes.safetensors", name, &t, 1, kv, 1), "save");
    td_tensor_release(t);
    blob b = read_blob("st_escapes.safetensors");
    const char *want = "\"a\\\"b\\\\c\\u000ad\xc3\xa9\"";
    assert_true(blob_has(b, want, strlen(want)));
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_parse(b.p, b.len, cpu, &st), "parse");
    tdt_check(td_safetensors_get(st, name[0], &t), "get");
    tdt_expect(t, TD_I32, s1, 1, &one, 1, 0.0f);
    td_tensor_release(t);
    const char *v = NULL;
    tdt_check(td_safetensors_metadata(st, "k\"ey", &v), "metadata");
    assert_string_equal(v, "v\\al\t");
    td_safetensors_free(st);
    free(b.p);
}

/* A file by hand with header padding, tensors listed out of data order, an empty tensor
 * between two others and a 0-d one. */
static void hand_made_file_loads(void **state)
{
    (void)state;
    /* b = int32 [2] {5, -6} at [4, 12); a = F32 0-d 0.5 at [0, 4); e = BOOL [0] at [12, 12) */
    static const unsigned char data[12] = { 0x00, 0x00, 0x00, 0x3f, 5, 0, 0, 0, 0xfa, 0xff, 0xff, 0xff };
    blob b = file_of("{'b':{'shape':[2],'dtype':'I32','data_offsets':[4,12]},"
                     "'e':{'dtype':'BOOL','shape':[0],'data_offsets':[12,12]},"
                     "'a':{'dtype':'F32','shape':[],'data_offsets':[0,4]}}      ",
                     data, sizeof data);
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_parse(b.p, b.len, cpu, &st), "parse");
    const char *name = NULL;
    tdt_check(td_safetensors_name(st, 0, &name), "name 0");
    assert_string_equal(name, "a");
    tdt_check(td_safetensors_name(st, 2, &name), "name 2");
    assert_string_equal(name, "e");
    td_tensor *t = NULL;
    static const int32_t want_b[2] = { 5, -6 };
    static const int64_t s2[] = { 2 }, s0[] = { 0 };
    static const float half = 0.5f;
    tdt_check(td_safetensors_get(st, "b", &t), "b");
    tdt_expect(t, TD_I32, s2, 1, want_b, 2, 0.0f);
    td_tensor_release(t);
    tdt_check(td_safetensors_get(st, "a", &t), "a");
    tdt_expect(t, TD_F32, NULL, 0, &half, 1, 0.0f);
    td_tensor_release(t);
    tdt_check(td_safetensors_get(st, "e", &t), "e");
    tdt_expect(t, TD_BOOL, s0, 1, NULL, 0, 0.0f);
    td_tensor_release(t);
    size_t n = 1;
    tdt_check(td_safetensors_metadata_count(st, &n), "metadata count");
    assert_int_equal(n, 0);
    td_safetensors_free(st);
    free(b.p);
}

static void lookups_out_of_range(void **state)
{
    (void)state;
    blob b = file_of("{'x':" ENTRY_F32_2 "}", eight, 8);
    td_safetensors *st = NULL;
    tdt_check(td_safetensors_parse(b.p, b.len, cpu, &st), "parse");
    td_tensor *t = (td_tensor *)&t;
    const char *s = NULL, *s2 = NULL;
    tdt_expect_error(td_safetensors_get(st, "y", &t), TD_E_RANGE, "no tensor is named 'y'");
    assert_null(t);
    tdt_expect_error(td_safetensors_tensor(st, 1, &t), TD_E_RANGE, "index 1 is out of range");
    tdt_expect_error(td_safetensors_name(st, 1, &s), TD_E_RANGE, "index 1 is out of range");
    tdt_expect_error(td_safetensors_metadata_at(st, 0, &s, &s2), TD_E_RANGE, "metadata index 0");
    tdt_expect_error(td_safetensors_get(NULL, "x", &t), TD_E_NULL, "st is NULL");
    tdt_expect_error(td_safetensors_get(st, NULL, &t), TD_E_NULL, "name is NULL");
    tdt_expect_error(td_safetensors_count(st, NULL), TD_E_NULL, "count is NULL");
    tdt_expect_error(td_safetensors_metadata(st, NULL, &s), TD_E_NULL, "key is NULL");
    td_safetensors_free(st);
    td_safetensors_free(NULL);
    free(b.p);
}

/* ---- hostile files, one kind per test ---- */

static void too_short_for_the_length(void **state)
{
    (void)state;
    blob b = { malloc(5), 5 };
    memset(b.p, 0, 5);
    expect_parse_error(b, TD_E_INVALID, "the buffer is 5 bytes, shorter than the 8-byte header length", NULL);
}

static void header_length_past_the_file(void **state)
{
    (void)state;
    expect_parse_error(file_with_len(1000, "{'x':" ENTRY_F32_2 "}", eight, 8), TD_E_INVALID,
                       "the header length 1000 runs past the end of the buffer", NULL);
}

static void header_over_the_cap(void **state)
{
    (void)state;
    expect_parse_error(file_with_len(100000001, "{}", NULL, 0), TD_E_INVALID,
                       "the header length 100000001 is past the format's cap of 100000000 bytes", NULL);
    expect_parse_error(file_with_len(UINT64_MAX, "{}", NULL, 0), TD_E_INVALID, "is past the format's cap", NULL);
}

static void bad_json(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':", NULL, 0), TD_E_INVALID, "the header is not valid JSON", NULL);
    expect_parse_error(file_of("{'x' 3}", NULL, 0), TD_E_INVALID, "not valid JSON (near byte 5)", NULL);
    expect_parse_error(file_of("{} {}", NULL, 0), TD_E_INVALID, "bytes after its JSON object (at byte 3)", NULL);
    expect_parse_error(file_of("{}\x01", NULL, 0), TD_E_INVALID, "bytes after its JSON object", NULL);
    expect_parse_error(file_of("{'\xc3\x28':1}", NULL, 0), TD_E_INVALID, "not valid UTF-8", NULL);
    expect_parse_error(file_of("{'\xed\xa0\x80':1}", NULL, 0), TD_E_INVALID, "not valid UTF-8", NULL); /* surrogate */
    /* a NUL inside the header would hide what follows from a C-string parser */
    blob b = file_of("{}  ", NULL, 0);
    b.p[8 + 2] = '\0';
    b.p[8 + 3] = 'x';
    expect_parse_error(b, TD_E_INVALID, "NUL byte", NULL);
    expect_parse_error(file_with_len(1, "{", NULL, 0), TD_E_INVALID, "too small for a JSON object", NULL);
}

static void not_an_object(void **state)
{
    (void)state;
    expect_parse_error(file_of("[1,2]", NULL, 0), TD_E_INVALID, "the header does not start with '{'", NULL);
    expect_parse_error(file_of(" {}", NULL, 0), TD_E_INVALID, "does not start with '{'", NULL);
    expect_parse_error(file_of("{'x':[0,8]}", eight, 8), TD_E_INVALID, "tensor 'x': the entry is not an object",
                       NULL);
    expect_parse_error(file_of("{'__metadata__':[1]}", NULL, 0), TD_E_INVALID, "'__metadata__' is not an object",
                       NULL);
}

static void missing_fields(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'shape':[2],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': the field 'dtype' is missing", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': the field 'shape' is missing", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': the field 'data_offsets' is missing", NULL);
}

static void extra_and_repeated_fields(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2],'data_offsets':[0,8],'strides':[1]}}", eight, 8),
                       TD_E_INVALID, "tensor 'x': unexpected field 'strides'", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','dtype':'F32','shape':[2],'data_offsets':[0,8]}}", eight, 8),
                       TD_E_INVALID, "tensor 'x': the field 'dtype' is given twice", NULL);
}

static void wrong_field_types(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':4,'shape':[2],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "'dtype' is not a string", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':2,'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "'shape' is not an array", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2],'data_offsets':[0,4,8]}}", eight, 8), TD_E_INVALID,
                       "'data_offsets' is not an array [begin, end]", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2],'data_offsets':[0,'8']}}", eight, 8), TD_E_INVALID,
                       "'data_offsets' are not whole numbers", NULL);
}

static void unknown_dtype(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':'Q9','shape':[2],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': unknown dtype 'Q9'", "F32, I32, BOOL");
    expect_parse_error(file_of("{'x':{'dtype':'f32','shape':[2],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "unknown dtype 'f32'", NULL);
}

/* A dtype of the format tdispatch does not store yet: its own status and message. */
static void unsupported_dtype(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'h':{'dtype':'I16','shape':[4],'data_offsets':[0,8]}}", eight, 8),
                       TD_E_UNSUPPORTED, "tensor 'h': dtype 'I16' is not supported yet",
                       "loads F32, I32, BOOL, F64, F16, BF16, I64, I8, U8");
    expect_parse_error(file_of("{'w':{'dtype':'U64','shape':[1],'data_offsets':[0,8]}}", eight, 8),
                       TD_E_UNSUPPORTED, "tensor 'w': dtype 'U64' is not supported yet", NULL);
}

/* F16, BF16, F64, I64, I8, U8 (docs/dtypes.md): a file whose little-endian bytes are
 * written out by hand loads with those dtypes and those bits, and saving it again gives
 * a file that loads to the same. */
static void other_dtypes(void **state)
{
    (void)state;
    static const unsigned char data[] = {
        0x00, 0x3c, 0x01, 0x00,                         /* h F16 [2]: 1.0, 2^-24 */
        0x80, 0x3f, 0xc0, 0xff,                         /* b BF16 [2]: 1.0, -NaN (quiet) */
        0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f, /* d F64 [1]: 0.1 = 0x3fb999999999999a */
        0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, /* l I64 [1]: 2^40 + 3 */
        0xff, 0x80,                                     /* c I8 [2]: -1, -128 */
        0xff, 0x00,                                     /* u U8 [2]: 255, 0 */
    };
    blob b = file_of("{'h':{'dtype':'F16','shape':[2],'data_offsets':[0,4]},"
                     "'b':{'dtype':'BF16','shape':[2],'data_offsets':[4,8]},"
                     "'d':{'dtype':'F64','shape':[1],'data_offsets':[8,16]},"
                     "'l':{'dtype':'I64','shape':[1],'data_offsets':[16,24]},"
                     "'c':{'dtype':'I8','shape':[2],'data_offsets':[24,26]},"
                     "'u':{'dtype':'U8','shape':[2],'data_offsets':[26,28]}}",
                     data, sizeof data);
    const char *names[6] = { "h", "b", "d", "l", "c", "u" };
    const td_dtype want_dt[6] = { TD_F16, TD_BF16, TD_F64, TD_I64, TD_I8, TD_U8 };
    const size_t off[7] = { 0, 4, 8, 16, 24, 26, 28 };
    const char *path = "st_other_dtypes.safetensors";
    for (int round = 0; round < 2; round++) {
        td_safetensors *st = NULL;
        if (round == 0)
            tdt_check(td_safetensors_parse(b.p, b.len, cpu, &st), "parse");
        else
            tdt_check(td_safetensors_load(path, cpu, &st), "load the saved file");
        td_tensor *t[6] = { NULL };
        for (int i = 0; i < 6; i++) {
            tdt_check(td_safetensors_get(st, names[i], &t[i]), names[i]);
            td_dtype dt;
            tdt_check(td_tensor_dtype(t[i], &dt), "dtype");
            assert_int_equal(dt, want_dt[i]);
            unsigned char raw[8];
            const int64_t n = (int64_t)((off[i + 1] - off[i]) / td_dtype_size(dt));
            if (td_dtype_class(dt) == TD_CLASS_FLOAT)
                tdt_check(td_float_into_data_dtype(t[i], dt, raw, n), "float into_data_dtype");
            else
                tdt_check(td_int_into_data_dtype(t[i], dt, raw, n), "int into_data_dtype");
            if (memcmp(raw, data + off[i], off[i + 1] - off[i]) != 0)
                fail_msg("%s (round %d): the bits differ from the file's", names[i], round);
        }
        td_safetensors_free(st);
        if (round == 0)
            tdt_check(td_safetensors_save(path, names, t, 6, NULL, 0), "save");
        for (int i = 0; i < 6; i++)
            td_tensor_release(t[i]);
    }
    remove(path);
    free(b.p);
}

static void bad_dims(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[-2],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': shape dim 0 is not a whole number >= 0", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[1,1.5],'data_offsets':[0,8]}}", eight, 8),
                       TD_E_INVALID, "shape dim 1 is not a whole number", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2199023255553,0],'data_offsets':[0,0]}}", NULL, 0),
                       TD_E_INVALID, "shape dim 0 is 2199023255553, past the 2^40", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[1e300],'data_offsets':[0,8]}}", eight, 8),
                       TD_E_INVALID, "shape dim 0 is not a whole number", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[1,1,1,1,1,1,1,1,2],'data_offsets':[0,8]}}", eight, 8),
                       TD_E_INVALID, "the shape has 9 dims; tensors have at most 8", NULL);
}

/* 2^20 x 2^20 x 2^20 wraps nothing: the product is checked at every step. */
static void shape_product_overflow(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[1048576,1048576,1048576],'data_offsets':[0,8]}}",
                               eight, 8),
                       TD_E_INVALID, "tensor 'x': the shape has more than 2^40 elements", NULL);
    /* 2^32 * 2^32 = 2^64 wraps to 0 in 64-bit arithmetic: caught too */
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[4294967296,4294967296],'data_offsets':[0,0]}}", NULL,
                               0),
                       TD_E_INVALID, "the shape has more than 2^40 elements", NULL);
}

static void size_does_not_match_range(void **state)
{
    (void)state;
    /* F32 [3] is 12 bytes; [0, 8] holds 8 */
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[3],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': F32 of 3 elements is 12 bytes, but data_offsets [0, 8] hold 8", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'BOOL','shape':[2,2],'data_offsets':[0,8]}}", eight, 8), TD_E_INVALID,
                       "BOOL of 4 elements is 4 bytes", NULL);
}

static void offsets_outside_the_buffer(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[4],'data_offsets':[0,16]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': data_offsets [0, 16] run past the 8-byte data buffer", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[0],'data_offsets':[9,9]}}", eight, 8), TD_E_INVALID,
                       "run past the 8-byte data buffer", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2],'data_offsets':[-8,0]}}", eight, 8), TD_E_INVALID,
                       "'data_offsets' are not whole numbers >= 0", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2],'data_offsets':[18446744073709551608,0]}}", eight, 8),
                       TD_E_INVALID, "'data_offsets' are not whole numbers", NULL);
}

static void end_before_begin(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[2],'data_offsets':[8,0]}}", eight, 8), TD_E_INVALID,
                       "tensor 'x': data_offsets [8, 0] end before they begin", NULL);
}

static void overlapping_tensors(void **state)
{
    (void)state;
    static const unsigned char twelve[12] = { 0 };
    expect_parse_error(file_of("{'a':" ENTRY_F32_2 ",'b':{'dtype':'F32','shape':[2],'data_offsets':[4,12]}}",
                               twelve, 12),
                       TD_E_INVALID, "tensors 'a' [0, 8) and 'b' [4, 12) overlap", NULL);
    /* the same range twice */
    expect_parse_error(file_of("{'a':" ENTRY_F32_2 ",'b':" ENTRY_F32_2 "}", eight, 8), TD_E_INVALID,
                       "tensors 'a' [0, 8) and 'b' [0, 8) overlap", NULL);
}

static void buffer_not_covered(void **state)
{
    (void)state;
    static const unsigned char twelve[12] = { 0 };
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[1],'data_offsets':[0,4]}}", eight, 8), TD_E_INVALID,
                       "bytes [4, 8) of the 8-byte data buffer belong to no tensor", NULL);
    expect_parse_error(file_of("{'x':{'dtype':'F32','shape':[1],'data_offsets':[4,8]}}", eight, 8), TD_E_INVALID,
                       "bytes [0, 4) of the data buffer belong to no tensor", NULL);
    expect_parse_error(file_of("{'a':{'dtype':'F32','shape':[1],'data_offsets':[0,4]},"
                               "'b':{'dtype':'F32','shape':[1],'data_offsets':[8,12]}}",
                               twelve, 12),
                       TD_E_INVALID, "bytes [4, 8) of the data buffer belong to no tensor", NULL);
    expect_parse_error(file_of("{}", eight, 8), TD_E_INVALID, "bytes [0, 8) of the 8-byte data buffer", NULL);
}

static void duplicate_names(void **state)
{
    (void)state;
    static const unsigned char sixteen[16] = { 0 };
    expect_parse_error(file_of("{'a':" ENTRY_F32_2 ",'a':{'dtype':'F32','shape':[2],'data_offsets':[8,16]}}",
                               sixteen, 16),
                       TD_E_INVALID, "two tensors are named 'a'", NULL);
    expect_parse_error(file_of("{'__metadata__':{},'__metadata__':{}}", NULL, 0), TD_E_INVALID,
                       "'__metadata__' appears twice", NULL);
}

static void empty_name(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'':" ENTRY_F32_2 "}", eight, 8), TD_E_INVALID, "a tensor has an empty name", NULL);
}

static void bad_metadata(void **state)
{
    (void)state;
    expect_parse_error(file_of("{'__metadata__':{'k':1}}", NULL, 0), TD_E_INVALID, "metadata 'k' is not a string",
                       NULL);
    expect_parse_error(file_of("{'__metadata__':{'k':'a','j':'b','k':'c'}}", NULL, 0), TD_E_INVALID,
                       "the metadata key 'k' appears twice", NULL);
}

/* A BOOL byte other than 0 or 1 is no bool. */
static void bool_byte_not_0_or_1(void **state)
{
    (void)state;
    static const unsigned char bytes[4] = { 1, 0, 2, 1 };
    expect_parse_error(file_of("{'m':{'dtype':'BOOL','shape':[4],'data_offsets':[0,4]}}", bytes, 4), TD_E_INVALID,
                       "tensor 'm': element 2 is the byte 2, not a BOOL (0 or 1)", NULL);
}

/* A good file cut short, in its data and in its header. */
static void truncated_file(void **state)
{
    (void)state;
    blob b = file_of("{'x':" ENTRY_F32_2 "}", eight, 8);
    blob cut = { b.p, b.len - 3 };
    write_blob("st_truncated.safetensors", cut);
    td_safetensors *st = (td_safetensors *)&st;
    tdt_expect_error(td_safetensors_load("st_truncated.safetensors", cpu, &st), TD_E_INVALID,
                     "data_offsets [0, 8] run past the 5-byte data buffer (a truncated file?)");
    assert_null(st);
    cut.len = 8 + 10;
    write_blob("st_truncated.safetensors", cut);
    tdt_expect_error(td_safetensors_load("st_truncated.safetensors", cpu, &st), TD_E_INVALID,
                     "runs past the end of 'st_truncated.safetensors' (10 bytes follow the length)");
    cut.len = 3;
    write_blob("st_truncated.safetensors", cut);
    tdt_expect_error(td_safetensors_load("st_truncated.safetensors", cpu, &st), TD_E_INVALID,
                     "is 3 bytes, shorter than the 8-byte header length");
    free(b.p);
}

static void path_cannot_be_opened(void **state)
{
    (void)state;
    td_safetensors *st = (td_safetensors *)&st;
    tdt_expect_error(td_safetensors_load("no/such/dir/x.safetensors", cpu, &st), TD_E_INVALID,
                     "cannot open 'no/such/dir/x.safetensors'");
    assert_null(st);
    /* a directory opens on Linux, but cannot be read */
    st = (td_safetensors *)&st;
    const td_status got = td_safetensors_load(".", cpu, &st);
    assert_int_equal(got, TD_E_INVALID);
    assert_null(st);
    if (strstr(td_last_error(), "'.'") == NULL)
        fail_msg("the message does not name the path: '%s'", td_last_error());
}

static void null_arguments(void **state)
{
    (void)state;
    blob b = file_of("{}", NULL, 0);
    td_safetensors *st = (td_safetensors *)&st;
    tdt_expect_error(td_safetensors_parse(b.p, b.len, cpu, NULL), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_safetensors_parse(NULL, b.len, cpu, &st), TD_E_NULL, "data is NULL");
    assert_null(st);
    tdt_expect_error(td_safetensors_parse(b.p, b.len, NULL, &st), TD_E_NULL, "device is NULL");
    tdt_expect_error(td_safetensors_load(NULL, cpu, &st), TD_E_NULL, "path is NULL");
    tdt_expect_error(td_safetensors_load("x", NULL, &st), TD_E_NULL, "device is NULL");
    /* the smallest good file: no tensors */
    tdt_check(td_safetensors_parse(b.p, b.len, cpu, &st), "empty file");
    size_t n = 1;
    tdt_check(td_safetensors_count(st, &n), "count");
    assert_int_equal(n, 0);
    td_safetensors_free(st);
    free(b.p);
}

/* ---- the writer's errors ---- */

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f != NULL)
        fclose(f);
    return f != NULL;
}

static void save_errors(void **state)
{
    (void)state;
    static const int64_t s2[] = { 2 };
    static const float v[2] = { 1, 2 };
    td_tensor *t[2] = { NULL, NULL };
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t[0]), "t0");
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t[1]), "t1");
    const char *dup[2] = { "w", "w" }, *empty[2] = { "w", "" }, *reserved[1] = { "__metadata__" };
    const char *with_null[2] = { "w", NULL }, *ok[2] = { "a", "b" }, *bad_utf8[1] = { "\xff" };
    const char *kv_dup[4] = { "k", "1", "k", "2" }, *kv_null[2] = { "k", NULL };
    td_tensor *null_t[2] = { t[0], NULL };
    const char *p = "st_save_errors.safetensors";
    remove(p);
    tdt_expect_error(td_safetensors_save(NULL, ok, t, 2, NULL, 0), TD_E_NULL, "path is NULL");
    tdt_expect_error(td_safetensors_save(p, NULL, t, 2, NULL, 0), TD_E_NULL, "names is NULL");
    tdt_expect_error(td_safetensors_save(p, ok, NULL, 2, NULL, 0), TD_E_NULL, "tensors is NULL");
    tdt_expect_error(td_safetensors_save(p, ok, t, 2, NULL, 1), TD_E_NULL, "metadata_kv is NULL");
    tdt_expect_error(td_safetensors_save(p, with_null, t, 2, NULL, 0), TD_E_NULL, "names[1] is NULL");
    tdt_expect_error(td_safetensors_save(p, ok, null_t, 2, NULL, 0), TD_E_NULL, "tensors[1] ('b') is NULL");
    tdt_expect_error(td_safetensors_save(p, dup, t, 2, NULL, 0), TD_E_INVALID, "two tensors are named 'w'");
    tdt_expect_error(td_safetensors_save(p, empty, t, 2, NULL, 0), TD_E_INVALID, "names[1] is empty");
    tdt_expect_error(td_safetensors_save(p, reserved, t, 1, NULL, 0), TD_E_INVALID, "keeps for metadata");
    tdt_expect_error(td_safetensors_save(p, bad_utf8, t, 1, NULL, 0), TD_E_INVALID, "names[0] is not valid UTF-8");
    tdt_expect_error(td_safetensors_save(p, ok, t, 2, kv_dup, 2), TD_E_INVALID, "metadata key 'k' is given twice");
    tdt_expect_error(td_safetensors_save(p, ok, t, 2, kv_null, 1), TD_E_NULL, "metadata_kv[1] (a value) is NULL");
    assert_false(file_exists(p));
    assert_false(file_exists("st_save_errors.safetensors.partial"));
    tdt_expect_error(td_safetensors_save("no/such/dir/x.safetensors", ok, t, 2, NULL, 0), TD_E_INVALID,
                     "cannot open 'no/such/dir/x.safetensors.partial' for writing");
    /* no tensors at all is a good file: {} padded to 8 */
    tdt_check(td_safetensors_save(p, NULL, NULL, 0, NULL, 0), "empty save");
    blob b = read_blob(p);
    assert_int_equal(b.len, 16);
    assert_memory_equal(b.p + 8, "{}      ", 8);
    free(b.p);
    td_tensor_release(t[0]);
    td_tensor_release(t[1]);
}

/* Every allocation of save and of load failing in turn: TD_E_NOMEM, nothing leaked (the
 * per-test check counts tensors and devices; ASan the rest), no file left half-written. */
static void allocation_failures(void **state)
{
    (void)state;
    const char *p = "st_alloc.safetensors";
    save_five(p, cpu);
    blob b = read_blob(p);
    bool loaded = false, saved = false;
    for (long n = 0; n < 200 && !loaded; n++) {
        td_safetensors *st = NULL;
        td_testing_fail_allocations_after(n);
        const td_status got = td_safetensors_parse(b.p, b.len, cpu, &st);
        td_testing_fail_allocations_after(-1);
        if (got == TD_OK) {
            expect_five(st, TD_BACKEND_CPU);
            td_safetensors_free(st);
            loaded = true;
        } else {
            assert_int_equal(got, TD_E_NOMEM);
            assert_null(st);
        }
    }
    assert_true(loaded);
    static const int64_t s2[] = { 2 };
    static const float v[2] = { 1, 2 };
    static const char *const names[2] = { "a", "b" };
    td_tensor *t[2] = { NULL, NULL };
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t[0]), "t0");
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t[1]), "t1");
    remove("st_alloc2.safetensors");
    for (long n = 0; n < 200 && !saved; n++) {
        td_testing_fail_allocations_after(n);
        const td_status got = td_safetensors_save("st_alloc2.safetensors", names, t, 2, meta, 2);
        td_testing_fail_allocations_after(-1);
        if (got == TD_OK) {
            saved = true;
        } else {
            assert_int_equal(got, TD_E_NOMEM);
            assert_false(file_exists("st_alloc2.safetensors"));
            assert_false(file_exists("st_alloc2.safetensors.partial"));
        }
    }
    assert_true(saved);
    td_tensor_release(t[0]);
    td_tensor_release(t[1]);
    free(b.p);
}

/* ---- a build without cJSON ---- */

static void reader_unavailable(void **state)
{
    (void)state;
    blob b = file_of("{}", NULL, 0);
    td_safetensors *st = (td_safetensors *)&st;
    tdt_expect_error(td_safetensors_parse(b.p, b.len, cpu, &st), TD_E_UNSUPPORTED, "built without cJSON");
    assert_null(st);
    tdt_expect_error(td_safetensors_load("x", cpu, &st), TD_E_UNSUPPORTED, "built without cJSON");
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest with_reader[] = {
        TDT_TEST(round_trip_cpu),
        TDT_TEST(round_trip_autodiff),
        TDT_TEST(writer_bytes),
        TDT_TEST(writer_escapes),
        TDT_TEST(hand_made_file_loads),
        TDT_TEST(lookups_out_of_range),
        TDT_TEST(too_short_for_the_length),
        TDT_TEST(header_length_past_the_file),
        TDT_TEST(header_over_the_cap),
        TDT_TEST(bad_json),
        TDT_TEST(not_an_object),
        TDT_TEST(missing_fields),
        TDT_TEST(extra_and_repeated_fields),
        TDT_TEST(wrong_field_types),
        TDT_TEST(unknown_dtype),
        TDT_TEST(unsupported_dtype),
        TDT_TEST(other_dtypes),
        TDT_TEST(bad_dims),
        TDT_TEST(shape_product_overflow),
        TDT_TEST(size_does_not_match_range),
        TDT_TEST(offsets_outside_the_buffer),
        TDT_TEST(end_before_begin),
        TDT_TEST(overlapping_tensors),
        TDT_TEST(buffer_not_covered),
        TDT_TEST(duplicate_names),
        TDT_TEST(empty_name),
        TDT_TEST(bad_metadata),
        TDT_TEST(bool_byte_not_0_or_1),
        TDT_TEST(truncated_file),
        TDT_TEST(path_cannot_be_opened),
        TDT_TEST(null_arguments),
        TDT_TEST(save_errors),
        TDT_TEST(allocation_failures),
    };
    const struct CMUnitTest without_reader[] = {
        TDT_TEST(writer_bytes),
        TDT_TEST(save_errors),
        TDT_TEST(reader_unavailable),
    };
    if (td_safetensors_available())
        return cmocka_run_group_tests_name("safetensors", with_reader, setup, teardown);
    printf("safetensors: this build has no reader (no cJSON): the writer's tests and the reader's "
           "TD_E_UNSUPPORTED only\n");
    return cmocka_run_group_tests_name("safetensors (writer only)", without_reader, setup, teardown);
}
