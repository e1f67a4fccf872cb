/* GGUF: the writer's bytes against files written out by hand, hand-made files read back,
 * and one test per kind of hostile file, each checking the status, the message and that
 * nothing leaked. Files are built here byte by byte (a little builder below), never by the
 * library. Layout facts used (from the format's specification): "GGUF", u32 version 3, u64
 * tensor count, u64 key/value count; a string is a u64 length and its bytes; a key/value
 * is a string, a u32 value type and the value (arrays: u32 element type, u64 count,
 * elements); a tensor info is a string, a u32 dim count, u64 dims innermost first, a u32
 * ggml type and a u64 offset into the data section, which starts at the next multiple of
 * the alignment (general.alignment, default 32). */
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

#include "td_gguf.h"
#include "td_ops.h"
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

/* ---- a byte builder for hand-made files ---- */

typedef struct blob {
    unsigned char *p;
    size_t len, cap;
} blob;

static void put(blob *b, const void *p, size_t n)
{
    if (b->cap - b->len < n) {
        b->cap = (b->cap + n) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void le(blob *b, uint64_t v, int n)
{
    unsigned char x[8];
    for (int k = 0; k < n; k++)
        x[k] = (unsigned char)(v >> (8 * k));
    put(b, x, (size_t)n);
}
#define U8(b, v) le((b), (uint64_t)(v), 1)
#define U16(b, v) le((b), (uint64_t)(v), 2)
#define U32(b, v) le((b), (uint64_t)(v), 4)
#define U64(b, v) le((b), (uint64_t)(v), 8)

static void str(blob *b, const char *s)
{
    U64(b, strlen(s));
    put(b, s, strlen(s));
}

static void header(blob *b, uint64_t n_tensors, uint64_t n_kv)
{
    put(b, "GGUF", 4);
    U32(b, 3);
    U64(b, n_tensors);
    U64(b, n_kv);
}

static void pad_to(blob *b, size_t alignment)
{
    while (b->len % alignment)
        U8(b, 0);
}

/* A tensor info: ndim dims (innermost first, as the file lists them). */
static void info(blob *b, const char *name, int ndim, const uint64_t *dims, uint32_t type, uint64_t offset)
{
    str(b, name);
    U32(b, ndim);
    for (int k = 0; k < ndim; k++)
        U64(b, dims[k]);
    U32(b, type);
    U64(b, offset);
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Parses b and expects status want with msg in the message, and no handle; frees b. */
static void expect_parse_error(blob *b, td_status want, const char *msg)
{
    td_gguf *g = (td_gguf *)&g;
    const td_status got = td_gguf_parse(b->p ? (const void *)b->p : "", b->len, &g);
    if (got != want || strstr(td_last_error(), msg) == NULL)
        fail_msg("got %s '%s', want %s with '%s'", td_status_name(got), td_last_error(), td_status_name(want), msg);
    assert_null(g);
    free(b->p);
    *b = (blob){ 0 };
}

static td_gguf *parse_ok(blob *b)
{
    td_gguf *g = NULL;
    tdt_check(td_gguf_parse(b->p, b->len, &g), "parse");
    assert_non_null(g);
    return g;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static blob read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    blob b = { malloc(1 << 20), 0, 1 << 20 };
    assert_non_null(b.p);
    b.len = fread(b.p, 1, b.cap, f);
    fclose(f);
    return b;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f != NULL)
        fclose(f);
    return f != NULL;
}

/* ---- the writer's bytes ---- */

/* One u32 key/value and one f32 tensor [2] = {1, -2}, every byte written out: 24 bytes of
 * header, a 29-byte key/value, a 33-byte tensor info (86 so far), padding to 96, then 8 bytes
 * of data padded to 32. */
static void writer_bytes_by_hand(void **state)
{
    (void)state;
    static const unsigned char want[128] = {
        'G', 'G', 'U', 'F', 3, 0, 0, 0,     /* magic, version 3 */
        1, 0, 0, 0, 0, 0, 0, 0,             /* 1 tensor */
        1, 0, 0, 0, 0, 0, 0, 0,             /* 1 key/value */
        13, 0, 0, 0, 0, 0, 0, 0,            /* key: 13 bytes */
        'g', 'e', 'n', 'e', 'r', 'a', 'l', '.', 'l', 'a', 'y', 'e', 'r',
        4, 0, 0, 0,                         /* uint32 */
        0x2a, 0, 0, 0,                      /* 42 */
        1, 0, 0, 0, 0, 0, 0, 0, 'w',        /* name "w" */
        1, 0, 0, 0,                         /* 1 dim */
        2, 0, 0, 0, 0, 0, 0, 0,             /* of 2 */
        0, 0, 0, 0,                         /* f32 */
        0, 0, 0, 0, 0, 0, 0, 0,             /* offset 0 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0,       /* padding 86 -> 96 */
        0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, /* 1.0f, -2.0f */
        /* 24 bytes of padding to 128 */
    };
    static const float v[2] = { 1.0f, -2.0f };
    static const int64_t s2[] = { 2 };
    td_gguf_writer *w = NULL;
    tdt_check(td_gguf_writer_new(&w), "new");
    tdt_check(td_gguf_writer_add_u32(w, "general.layer", 42), "u32");
    tdt_check(td_gguf_writer_add_tensor(w, "w", TD_GGML_F32, s2, 1, v, 8), "tensor");
    size_t size = 0;
    tdt_check(td_gguf_writer_size(w, &size), "size");
    assert_int_equal(size, 128);
    unsigned char got[128];
    tdt_check(td_gguf_writer_write_to(w, got, sizeof got), "write_to");
    assert_memory_equal(got, want, 128);
    /* the same through a file, and through td_gguf_save from a td_tensor */
    tdt_check(td_gguf_writer_write(w, "gguf_by_hand.gguf"), "write");
    blob b = read_file("gguf_by_hand.gguf");
    assert_int_equal(b.len, 128);
    assert_memory_equal(b.p, want, 128);
    free(b.p);
    td_gguf_writer_free(w);

    td_tensor *t = NULL;
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t), "x");
    static const char *const names[1] = { "w" };
    tdt_check(td_gguf_save("gguf_save.gguf", names, &t, 1), "save");
    td_tensor_release(t);
    /* no key/values: 24 + 33 = 57 bytes padded to 64, then the data padded to 32 */
    unsigned char want2[96];
    memset(want2, 0, sizeof want2);
    memcpy(want2, want, 16);
    want2[16] = 0; /* 0 key/values */
    memcpy(want2 + 24, want + 24 + 29, 33);
    memcpy(want2 + 64, want + 96, 8);
    b = read_file("gguf_save.gguf");
    assert_int_equal(b.len, 96);
    assert_memory_equal(b.p, want2, 96);
    free(b.p);
}

/* Every value type once, and arrays, against bytes built here; the alignment key changes the
 * padding. */
static void writer_every_type(void **state)
{
    (void)state;
    td_gguf_writer *w = NULL;
    tdt_check(td_gguf_writer_new(&w), "new");
    static const int32_t ai[3] = { 1, -2, 3 };
    static const bool ab[2] = { true, false };
    static const char *const as[3] = { "a", "", "ccc" };
    tdt_check(td_gguf_writer_add_u8(w, "a.u8", 200), "u8");
    tdt_check(td_gguf_writer_add_i8(w, "a.i8", -100), "i8");
    tdt_check(td_gguf_writer_add_u16(w, "a.u16", 60000), "u16");
    tdt_check(td_gguf_writer_add_i16(w, "a.i16", -30000), "i16");
    tdt_check(td_gguf_writer_add_u32(w, "general.alignment", 64), "alignment");
    tdt_check(td_gguf_writer_add_i32(w, "a.i32", -2000000000), "i32");
    tdt_check(td_gguf_writer_add_f32(w, "a.f32", 1.5f), "f32");
    tdt_check(td_gguf_writer_add_bool(w, "a.bool", true), "bool");
    tdt_check(td_gguf_writer_add_string(w, "a.str", "h\xc3\xa9", 3), "string");
    tdt_check(td_gguf_writer_add_u64(w, "a.u64", UINT64_C(9223372036854775813)), "u64");
    tdt_check(td_gguf_writer_add_i64(w, "a.i64", -INT64_C(4611686018427387904)), "i64");
    tdt_check(td_gguf_writer_add_f64(w, "a.f64", -0.1), "f64");
    tdt_check(td_gguf_writer_add_array(w, "a.ai32", TD_GGUF_INT32, ai, 3), "array i32");
    tdt_check(td_gguf_writer_add_array(w, "a.abool", TD_GGUF_BOOL, ab, 2), "array bool");
    tdt_check(td_gguf_writer_add_string_array(w, "a.astr", as, NULL, 3), "array string");
    tdt_check(td_gguf_writer_add_array(w, "a.empty", TD_GGUF_UINT8, NULL, 0), "empty array");
    static const unsigned char q4[18] = { 0x00, 0x3c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    static const int64_t s32[] = { 32 };
    tdt_check(td_gguf_writer_add_tensor(w, "q", TD_GGML_Q4_0, s32, 1, q4, 18), "q4_0");

    blob b = { 0 };
    header(&b, 1, 16);
    str(&b, "a.u8"), U32(&b, 0), U8(&b, 200);
    str(&b, "a.i8"), U32(&b, 1), U8(&b, 0x9c);
    str(&b, "a.u16"), U32(&b, 2), U16(&b, 60000);
    str(&b, "a.i16"), U32(&b, 3), U16(&b, 0x8ad0);
    str(&b, "general.alignment"), U32(&b, 4), U32(&b, 64);
    str(&b, "a.i32"), U32(&b, 5), U32(&b, 0x88ca6c00);
    str(&b, "a.f32"), U32(&b, 6), U32(&b, 0x3fc00000);
    str(&b, "a.bool"), U32(&b, 7), U8(&b, 1);
    str(&b, "a.str"), U32(&b, 8), str(&b, "h\xc3\xa9");
    str(&b, "a.u64"), U32(&b, 10), U64(&b, UINT64_C(0x8000000000000005));
    str(&b, "a.i64"), U32(&b, 11), U64(&b, UINT64_C(0xc000000000000000));
    str(&b, "a.f64"), U32(&b, 12), U64(&b, UINT64_C(0xbfb999999999999a));
    str(&b, "a.ai32"), U32(&b, 9), U32(&b, 5), U64(&b, 3), U32(&b, 1), U32(&b, 0xfffffffe), U32(&b, 3);
    str(&b, "a.abool"), U32(&b, 9), U32(&b, 7), U64(&b, 2), U8(&b, 1), U8(&b, 0);
    str(&b, "a.astr"), U32(&b, 9), U32(&b, 8), U64(&b, 3), str(&b, "a"), str(&b, ""), str(&b, "ccc");
    str(&b, "a.empty"), U32(&b, 9), U32(&b, 0), U64(&b, 0);
    static const uint64_t d32[] = { 32 };
    info(&b, "q", 1, d32, 2, 0);
    pad_to(&b, 64);
    put(&b, q4, 18);
    pad_to(&b, 64);

    size_t size = 0;
    tdt_check(td_gguf_writer_size(w, &size), "size");
    assert_int_equal(size, b.len);
    unsigned char *got = malloc(size);
    tdt_check(td_gguf_writer_write_to(w, got, size), "write_to");
    assert_memory_equal(got, b.p, size);
    free(got);
    td_gguf_writer_free(w);

    /* and the reader reads every value back from those (hand-built) bytes */
    td_gguf *g = parse_ok(&b);
    uint8_t u8 = 0;
    int8_t i8 = 0;
    uint16_t u16 = 0;
    int16_t i16 = 0;
    uint32_t u32 = 0;
    int32_t i32 = 0;
    uint64_t u64 = 0;
    int64_t i64 = 0, any = 0;
    float f32 = 0;
    double f64 = 0;
    bool bo = false;
    tdt_check(td_gguf_get_u8(g, "a.u8", &u8), "u8");
    tdt_check(td_gguf_get_i8(g, "a.i8", &i8), "i8");
    tdt_check(td_gguf_get_u16(g, "a.u16", &u16), "u16");
    tdt_check(td_gguf_get_i16(g, "a.i16", &i16), "i16");
    tdt_check(td_gguf_get_u32(g, "general.alignment", &u32), "u32");
    tdt_check(td_gguf_get_i32(g, "a.i32", &i32), "i32");
    tdt_check(td_gguf_get_f32(g, "a.f32", &f32), "f32");
    tdt_check(td_gguf_get_bool(g, "a.bool", &bo), "bool");
    tdt_check(td_gguf_get_u64(g, "a.u64", &u64), "u64");
    tdt_check(td_gguf_get_i64(g, "a.i64", &i64), "i64");
    tdt_check(td_gguf_get_f64(g, "a.f64", &f64), "f64");
    assert_int_equal(u8, 200);
    assert_int_equal(i8, -100);
    assert_int_equal(u16, 60000);
    assert_int_equal(i16, -30000);
    assert_int_equal(u32, 64);
    assert_int_equal(i32, -2000000000);
    assert_true(f32 == 1.5f);
    assert_true(bo);
    assert_true(u64 == UINT64_C(9223372036854775813));
    assert_true(i64 == -INT64_C(4611686018427387904));
    assert_true(f64 == -0.1);
    tdt_check(td_gguf_get_int(g, "a.i16", &any), "int of i16");
    assert_true(any == -30000);
    tdt_check(td_gguf_get_int(g, "a.i8", &any), "int of i8");
    assert_true(any == -100);
    tdt_check(td_gguf_get_int(g, "a.u8", &any), "int of u8");
    assert_true(any == 200);
    tdt_expect_error(td_gguf_get_int(g, "a.u64", &any), TD_E_RANGE, "holds 9223372036854775813, past an int64");
    tdt_expect_error(td_gguf_get_int(g, "a.f32", &any), TD_E_DTYPE, "holds a float32, not an integer");
    const char *s = NULL;
    size_t len = 0;
    tdt_check(td_gguf_get_string(g, "a.str", &s, &len), "string");
    assert_int_equal(len, 3);
    assert_string_equal(s, "h\xc3\xa9");
    td_gguf_type et;
    size_t n = 0;
    tdt_check(td_gguf_get_array_info(g, "a.ai32", &et, &n), "array info");
    assert_int_equal(et, TD_GGUF_INT32);
    assert_int_equal(n, 3);
    int32_t gi[3] = { 0 };
    tdt_check(td_gguf_get_array(g, "a.ai32", TD_GGUF_INT32, gi, 3), "array i32");
    assert_memory_equal(gi, ai, sizeof ai);
    bool gb[2] = { false, true };
    tdt_check(td_gguf_get_array(g, "a.abool", TD_GGUF_BOOL, gb, 2), "array bool");
    assert_true(gb[0] && !gb[1]);
    tdt_check(td_gguf_get_array_string(g, "a.astr", 2, &s, &len), "array string");
    assert_string_equal(s, "ccc");
    tdt_check(td_gguf_get_array_string(g, "a.astr", 1, &s, &len), "array string 1");
    assert_int_equal(len, 0);
    assert_string_equal(s, "");
    tdt_check(td_gguf_get_array_info(g, "a.empty", &et, &n), "empty array");
    assert_int_equal(n, 0);
    assert_int_equal(et, TD_GGUF_UINT8);
    uint32_t align = 0;
    tdt_check(td_gguf_alignment(g, &align), "alignment");
    assert_int_equal(align, 64);
    /* the types are checked, never converted */
    tdt_expect_error(td_gguf_get_u32(g, "a.i32", &u32), TD_E_DTYPE, "key 'a.i32' holds an int32, not a uint32");
    tdt_expect_error(td_gguf_get_string(g, "a.astr", &s, &len), TD_E_DTYPE, "holds an array of string, not a string");
    tdt_expect_error(td_gguf_get_array(g, "a.ai32", TD_GGUF_UINT32, gi, 3), TD_E_DTYPE, "array of int32, not of uint32");
    tdt_expect_error(td_gguf_get_array(g, "a.ai32", TD_GGUF_INT32, gi, 2), TD_E_INVALID, "has 3 elements; n is 2");
    tdt_expect_error(td_gguf_get_array(g, "a.astr", TD_GGUF_STRING, gi, 3), TD_E_DTYPE, "td_gguf_get_array_string");
    tdt_expect_error(td_gguf_get_array_string(g, "a.ai32", 0, &s, &len), TD_E_DTYPE, "array of int32, not of string");
    tdt_expect_error(td_gguf_get_array_string(g, "a.astr", 3, &s, &len), TD_E_RANGE, "index 3 is out of range");
    tdt_expect_error(td_gguf_get_array_info(g, "a.u8", &et, &n), TD_E_DTYPE, "holds a uint8, not an array");
    tdt_expect_error(td_gguf_get_f32(g, "nope", &f32), TD_E_RANGE, "the file has no key 'nope'");
    /* the key/values in file order */
    tdt_check(td_gguf_kv_count(g, &n), "kv count");
    assert_int_equal(n, 16);
    const char *key = NULL;
    td_gguf_type type;
    tdt_check(td_gguf_kv_at(g, 4, &key, &type), "kv_at");
    assert_string_equal(key, "general.alignment");
    assert_int_equal(type, TD_GGUF_UINT32);
    tdt_expect_error(td_gguf_kv_at(g, 16, &key, &type), TD_E_RANGE, "key/value index 16 is out of range");
    size_t ix = 0;
    tdt_check(td_gguf_find_key(g, "a.empty", &ix), "find");
    assert_int_equal(ix, 15);
    td_gguf_free(g);
    free(b.p);
}

/* ---- tensors ---- */

/* A hand-made file with an f32 matrix, an f16 and a bf16 vector, a q8_0 matrix and a 0-d
 * f32, at offsets that leave gaps (allowed), listed out of data order. */
static blob tensors_file(void)
{
    blob b = { 0 };
    header(&b, 5, 0);
    static const uint64_t d23[] = { 3, 2 }, d4[] = { 4 }, dq[] = { 64, 2 };
    info(&b, "m", 2, d23, 0, 0);    /* shape [2, 3], 24 bytes at 0 */
    info(&b, "q", 2, dq, 8, 64);    /* shape [2, 64]: 4 blocks, 136 bytes at 64 */
    info(&b, "h", 1, d4, 1, 32);    /* 8 bytes at 32 */
    info(&b, "b", 1, d4, 30, 224);  /* 8 bytes at 224 */
    info(&b, "s", 0, NULL, 0, 256); /* 4 bytes at 256 */
    pad_to(&b, 32);
    const size_t base = b.len;
    for (int i = 0; i < 6; i++)
        U32(&b, f32_bits((float)i - 2.5f));
    pad_to(&b, 32);
    U16(&b, 0x3c00), U16(&b, 0xc000), U16(&b, 0x3800), U16(&b, 0x7c00); /* f16 1, -2, 0.5, inf */
    while (b.len < base + 64)
        U8(&b, 0);
    for (int blk = 0; blk < 4; blk++) {
        U16(&b, 0x3c00 + blk); /* d */
        for (int i = 0; i < 32; i++)
            U8(&b, (unsigned)(blk * 32 + i));
    }
    while (b.len < base + 224)
        U8(&b, 0);
    U16(&b, 0x3f80), U16(&b, 0xbfc0), U16(&b, 0x4049), U16(&b, 0x0001); /* bf16 1, -1.5, 3.140625, 2^-133 */
    while (b.len < base + 256)
        U8(&b, 0);
    U32(&b, f32_bits(7.0f));
    return b;
}

static void tensor_infos(void **state)
{
    (void)state;
    blob b = tensors_file();
    td_gguf *g = parse_ok(&b);
    size_t n = 0, ix = 9;
    tdt_check(td_gguf_tensor_count(g, &n), "count");
    assert_int_equal(n, 5);
    uint64_t data = 0;
    tdt_check(td_gguf_data_offset(g, &data), "data offset");
    /* 24 + infos (8+1+4+16+4+8=41, 41, 33, 33, 25) = 197 -> 224 */
    assert_int_equal(data, 224);
    td_gguf_tensor_info ti;
    tdt_check(td_gguf_find_tensor(g, "q", &ix), "find q");
    assert_int_equal(ix, 1);
    tdt_check(td_gguf_tensor_info_at(g, ix, &ti), "info q");
    assert_string_equal(ti.name, "q");
    assert_int_equal(ti.ggml_type, TD_GGML_Q8_0);
    assert_int_equal(ti.ndim, 2);
    assert_true(ti.dims[0] == 64 && ti.dims[1] == 2);
    assert_true(ti.shape[0] == 2 && ti.shape[1] == 64);
    assert_int_equal(ti.numel, 128);
    assert_int_equal(ti.offset, 64);
    assert_int_equal(ti.nbytes, 4 * 34);
    assert_memory_equal(ti.data, b.p + 224 + 64, 136); /* the blocks as the file has them */
    assert_int_equal(((const unsigned char *)ti.data)[34], 0x01); /* block 1's d: 0x3c01, little-endian */
    tdt_check(td_gguf_tensor_info_at(g, 4, &ti), "info s");
    assert_string_equal(ti.name, "s");
    assert_int_equal(ti.ndim, 0);
    assert_int_equal(ti.numel, 1);
    assert_int_equal(ti.nbytes, 4);
    tdt_check(td_gguf_tensor_info_at(g, 0, &ti), "info m");
    assert_true(ti.shape[0] == 2 && ti.shape[1] == 3 && ti.dims[0] == 3);
    tdt_expect_error(td_gguf_tensor_info_at(g, 5, &ti), TD_E_RANGE, "tensor index 5 is out of range");
    tdt_expect_error(td_gguf_find_tensor(g, "nope", &ix), TD_E_RANGE, "no tensor named 'nope'");
    td_gguf_free(g);
    free(b.p);
}

/* f32 as is, f16 and bf16 widened: values worked out by hand from the bits. */
static void load_tensors(void **state)
{
    (void)state;
    blob b = tensors_file();
    td_gguf *g = parse_ok(&b);
    td_tensor *t = NULL;
    static const int64_t s23[] = { 2, 3 }, s4[] = { 4 };
    static const float m[6] = { -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f };
    static const float h[4] = { 1.0f, -2.0f, 0.5f, INFINITY };
    const float bf[4] = { 1.0f, -1.5f, 3.140625f, 0x1p-133f };
    static const float seven = 7.0f;
    tdt_check(td_gguf_load_tensor(g, "m", cpu, &t), "m");
    tdt_expect(t, TD_F32, s23, 2, m, 6, 0.0f);
    td_tensor_release(t);
    tdt_check(td_gguf_load_tensor(g, "h", cpu, &t), "h");
    tdt_expect(t, TD_F32, s4, 1, h, 4, 0.0f);
    td_tensor_release(t);
    tdt_check(td_gguf_load_tensor(g, "b", ad, &t), "b on autodiff");
    tdt_expect(t, TD_F32, s4, 1, bf, 4, 0.0f);
    td_backend kind;
    tdt_check(td_tensor_backend(t, &kind), "backend");
    assert_int_equal(kind, TD_BACKEND_AUTODIFF);
    td_tensor_release(t);
    tdt_check(td_gguf_load_tensor(g, "s", cpu, &t), "s");
    tdt_expect(t, TD_F32, NULL, 0, &seven, 1, 0.0f);
    td_tensor_release(t);
    /* q8_0 dequantized: block b's d is f16 0x3c00 + b = 1 + b 2^-10, its qs the bytes
     * 32 b .. 32 b + 31 (all below 128, so positive int8): value = byte * d, exact in f32 */
    float qv[128];
    for (int i = 0; i < 128; i++)
        qv[i] = (float)i * (1.0f + (float)(i / 32) * 0x1p-10f);
    static const int64_t s264[] = { 2, 64 };
    tdt_check(td_gguf_load_tensor(g, "q", cpu, &t), "q");
    tdt_expect(t, TD_F32, s264, 2, qv, 128, 0.0f);
    td_tensor_release(t);
    /* in its own dtype: the blocks as the file holds them, and the same values */
    tdt_check(td_gguf_load_tensor_dtype(g, "q", cpu, &t), "q as q8_0");
    td_dtype dt;
    tdt_check(td_tensor_dtype(t, &dt), "dtype");
    assert_int_equal(dt, TD_Q8_0);
    unsigned char raw[136];
    tdt_check(td_float_into_data_dtype(t, TD_Q8_0, raw, 136), "raw");
    assert_memory_equal(raw, b.p + 224 + 64, 136);
    float back[128];
    tdt_check(td_float_into_data_dtype(t, TD_F32, back, 128), "values");
    assert_memory_equal(back, qv, sizeof back);
    td_tensor_release(t);
    tdt_check(td_gguf_load_tensor_dtype(g, "h", cpu, &t), "h as f16");
    tdt_check(td_tensor_dtype(t, &dt), "dtype");
    assert_int_equal(dt, TD_F16);
    uint16_t hb[4];
    tdt_check(td_float_into_data_dtype(t, TD_F16, hb, 4), "f16 bits");
    assert_true(hb[0] == 0x3c00 && hb[1] == 0xc000 && hb[2] == 0x3800 && hb[3] == 0x7c00);
    td_tensor_release(t);
    tdt_check(td_gguf_load_tensor_dtype(g, "b", cpu, &t), "b as bf16");
    tdt_check(td_tensor_dtype(t, &dt), "dtype");
    assert_int_equal(dt, TD_BF16);
    td_tensor_release(t);
    t = (td_tensor *)&t;
    tdt_expect_error(td_gguf_load_tensor_dtype(g, "zz", cpu, &t), TD_E_RANGE, "no tensor named 'zz'");
    assert_null(t);
    tdt_expect_error(td_gguf_load_tensor(g, "zz", cpu, &t), TD_E_RANGE, "no tensor named 'zz'");
    td_gguf_free(g);
    free(b.p);
}

/* td_tensors saved as f32, f16 and bf16 and read back; f16/bf16 bytes worked out by hand. */
static void td_tensor_round_trip(void **state)
{
    (void)state;
    static const float v[6] = { 1.0f, -2.0f, 0.5f, 65504.0f, 1.0f / 3.0f, -0.0f };
    static const int64_t s32[] = { 3, 2 };
    /* f16: 1 = 3c00, -2 = c000, .5 = 3800, 65504 = 7bff, 1/3 = 3555 (0x3eaaaaab rounds down), -0 = 8000 */
    static const uint16_t f16[6] = { 0x3c00, 0xc000, 0x3800, 0x7bff, 0x3555, 0x8000 };
    /* bf16: 65504 = 0x477fe000 rounds to 0x4780; 1/3 = 0x3eaaaaab rounds to 0x3eab */
    static const uint16_t bf16[6] = { 0x3f80, 0xc000, 0x3f00, 0x4780, 0x3eab, 0x8000 };
    td_device *devs[2] = { cpu, ad };
    for (int d = 0; d < 2; d++) {
        td_tensor *t = NULL;
        tdt_check(td_float_from_data(devs[d], v, s32, 2, &t), "t");
        td_gguf_writer *w = NULL;
        tdt_check(td_gguf_writer_new(&w), "new");
        tdt_check(td_gguf_writer_add_td_tensor(w, "f", t, TD_GGML_F32), "f32");
        tdt_check(td_gguf_writer_add_td_tensor(w, "h", t, TD_GGML_F16), "f16");
        tdt_check(td_gguf_writer_add_td_tensor(w, "b", t, TD_GGML_BF16), "bf16");
        tdt_expect_error(td_gguf_writer_add_td_tensor(w, "q", t, TD_GGML_Q4_1), TD_E_UNSUPPORTED,
                         "has dtype f32 and cannot be written as q4_1");
        /* [3, 2] has no whole blocks of 32 */
        tdt_expect_error(td_gguf_writer_add_td_tensor(w, "q", t, TD_GGML_Q8_0), TD_E_INVALID, "tensor 'q'");
        tdt_check(td_gguf_writer_write(w, "gguf_rt.gguf"), "write");
        td_gguf_writer_free(w);
        td_tensor_release(t);
        td_gguf *g = NULL;
        tdt_check(td_gguf_open("gguf_rt.gguf", &g), "open");
        td_gguf_tensor_info ti;
        tdt_check(td_gguf_tensor_info_at(g, 1, &ti), "h info");
        assert_true(ti.dims[0] == 2 && ti.dims[1] == 3);
        unsigned char want[12];
        for (int i = 0; i < 6; i++)
            want[2 * i] = (unsigned char)f16[i], want[2 * i + 1] = (unsigned char)(f16[i] >> 8);
        assert_memory_equal(ti.data, want, 12);
        tdt_check(td_gguf_tensor_info_at(g, 2, &ti), "b info");
        for (int i = 0; i < 6; i++)
            want[2 * i] = (unsigned char)bf16[i], want[2 * i + 1] = (unsigned char)(bf16[i] >> 8);
        assert_memory_equal(ti.data, want, 12);
        assert_int_equal(ti.offset, 64); /* f32: 24 bytes padded to 32, f16: 12 padded to 32 */
        tdt_check(td_gguf_load_tensor(g, "f", cpu, &t), "load f");
        tdt_expect(t, TD_F32, s32, 2, v, 6, 0.0f);
        td_tensor_release(t);
        static const float hv[6] = { 1.0f, -2.0f, 0.5f, 65504.0f, 0.333251953125f, -0.0f };
        tdt_check(td_gguf_load_tensor(g, "h", cpu, &t), "load h");
        tdt_expect(t, TD_F32, s32, 2, hv, 6, 0.0f);
        td_tensor_release(t);
        td_gguf_free(g);
    }
}

/* An f32 td_tensor written as q8_0 / q4_0 (quantized on the way) and read back in its own
 * dtype: the blocks worked out by hand from ggml's reference rules.
 * q8_0 row: x[0] = 127, x[j] = j - 16: max |x| = 127, d = 1 (f16 3c00), qs = x.
 * q4_0 row: x[j] = j - 8 (j < 16), x[16 + j] = 7 - j (j < 15), x[31] = 7.6: m = -8, d = 1,
 * nibble = min(15, (int)(x + 8.5)): byte j = j | (15 - j) << 4, byte 15 = 0xff. */
static void quantized_td_tensors(void **state)
{
    (void)state;
    float x8[32], x4[32];
    unsigned char b8[34] = { 0x00, 0x3c }, b4[18] = { 0x00, 0x3c };
    for (int j = 0; j < 32; j++) {
        x8[j] = j == 0 ? 127.0f : (float)(j - 16);
        const int8_t q = (int8_t)x8[j];
        memcpy(&b8[2 + j], &q, 1);
    }
    for (int j = 0; j < 16; j++) {
        x4[j] = (float)(j - 8);
        x4[16 + j] = j < 15 ? (float)(7 - j) : 7.6f;
        b4[2 + j] = (unsigned char)(j | (15 - j) << 4);
    }
    b4[17] = 0xff;
    static const int64_t s[] = { 1, 32 };
    td_tensor *t8 = NULL, *t4 = NULL, *t = NULL;
    tdt_check(td_float_from_data(cpu, x8, s, 2, &t8), "x8");
    tdt_check(td_float_from_data(ad, x4, s, 2, &t4), "x4 on autodiff");
    td_gguf_writer *w = NULL;
    tdt_check(td_gguf_writer_new(&w), "new");
    tdt_check(td_gguf_writer_add_td_tensor(w, "w8", t8, TD_GGML_Q8_0), "q8_0");
    tdt_check(td_gguf_writer_add_td_tensor(w, "w4", t4, TD_GGML_Q4_0), "q4_0");
    size_t size = 0;
    tdt_check(td_gguf_writer_size(w, &size), "size");
    unsigned char *buf = malloc(size);
    assert_non_null(buf);
    tdt_check(td_gguf_writer_write_to(w, buf, size), "write");
    td_gguf_writer_free(w);
    td_gguf *g = NULL;
    tdt_check(td_gguf_parse(buf, size, &g), "parse");
    free(buf);
    td_gguf_tensor_info ti;
    tdt_check(td_gguf_tensor_info_at(g, 0, &ti), "w8 info");
    assert_int_equal(ti.ggml_type, TD_GGML_Q8_0);
    assert_memory_equal(ti.data, b8, 34);
    tdt_check(td_gguf_tensor_info_at(g, 1, &ti), "w4 info");
    assert_int_equal(ti.ggml_type, TD_GGML_Q4_0);
    assert_memory_equal(ti.data, b4, 18);
    /* back as q4_0, written again from the quantized tensor: the same blocks */
    tdt_check(td_gguf_load_tensor_dtype(g, "w4", cpu, &t), "w4 as q4_0");
    tdt_check(td_gguf_writer_new(&w), "new");
    tdt_check(td_gguf_writer_add_td_tensor(w, "again", t, TD_GGML_Q4_0), "q4_0 tensor as q4_0");
    tdt_expect_error(td_gguf_writer_add_td_tensor(w, "no", t, TD_GGML_F32), TD_E_UNSUPPORTED,
                     "has dtype q4_0 and cannot be written as f32");
    tdt_check(td_gguf_writer_size(w, &size), "size");
    buf = malloc(size);
    assert_non_null(buf);
    tdt_check(td_gguf_writer_write_to(w, buf, size), "write");
    td_gguf_writer_free(w);
    td_gguf *g2 = NULL;
    tdt_check(td_gguf_parse(buf, size, &g2), "parse");
    free(buf);
    tdt_check(td_gguf_tensor_info_at(g2, 0, &ti), "again info");
    assert_memory_equal(ti.data, b4, 18);
    td_gguf_free(g2);
    td_tensor_release(t);
    td_gguf_free(g);
    td_tensor_release(t8);
    td_tensor_release(t4);
}

/* q8_0 and q4_0 go in and out as raw bytes with ggml's block sizes: 34 and 18 bytes per 32
 * values, the block along the innermost dim. */
static void quantized_raw(void **state)
{
    (void)state;
    int64_t block = 0;
    size_t bytes = 0;
    tdt_check(td_gguf_ggml_type_block(TD_GGML_Q8_0, &block, &bytes), "q8_0");
    assert_true(block == 32 && bytes == 34);
    tdt_check(td_gguf_ggml_type_block(TD_GGML_Q4_0, &block, &bytes), "q4_0");
    assert_true(block == 32 && bytes == 18);
    tdt_check(td_gguf_ggml_type_block(TD_GGML_BF16, &block, &bytes), "bf16");
    assert_true(block == 1 && bytes == 2);
    assert_string_equal(td_gguf_ggml_type_name(TD_GGML_Q4_0), "q4_0");
    assert_null(td_gguf_ggml_type_name(4));
    assert_null(td_gguf_ggml_type_name(1000));
    assert_string_equal(td_gguf_type_name(TD_GGUF_FLOAT64), "float64");
    assert_null(td_gguf_type_name((td_gguf_type)13));
    tdt_expect_error(td_gguf_ggml_type_block(31, &block, &bytes), TD_E_INVALID, "31 is not a ggml type id");
    /* a q8_0 [3, 64]: 6 blocks, 204 bytes; a block: f16 d = 0.5 (0x3800), then 32 int8 */
    unsigned char q[204];
    for (int i = 0; i < 204; i++)
        q[i] = (unsigned char)(i % 34 == 0 ? 0x00 : i % 34 == 1 ? 0x38 : (i * 7) & 0xff);
    static const int64_t s[] = { 3, 64 };
    td_gguf_writer *w = NULL;
    tdt_check(td_gguf_writer_new(&w), "new");
    tdt_check(td_gguf_writer_add_tensor(w, "q", TD_GGML_Q8_0, s, 2, q, 204), "add q8_0");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "q2", TD_GGML_Q8_0, s, 2, q, 203), TD_E_INVALID,
                     "q8_0 of 2 dims takes 204 bytes; nbytes is 203");
    static const int64_t bad[] = { 2, 48 };
    tdt_expect_error(td_gguf_writer_add_tensor(w, "q3", TD_GGML_Q4_0, bad, 2, q, 54), TD_E_INVALID,
                     "q4_0 packs 32 values per block, but the last dim is 48");
    size_t size = 0;
    tdt_check(td_gguf_writer_size(w, &size), "size");
    unsigned char *buf = malloc(size);
    tdt_check(td_gguf_writer_write_to(w, buf, size), "write_to");
    td_gguf_writer_free(w);
    td_gguf *g = NULL;
    tdt_check(td_gguf_parse(buf, size, &g), "parse");
    td_gguf_tensor_info ti;
    tdt_check(td_gguf_tensor_info_at(g, 0, &ti), "info");
    assert_int_equal(ti.ggml_type, TD_GGML_Q8_0);
    assert_true(ti.dims[0] == 64 && ti.dims[1] == 3);
    assert_int_equal(ti.nbytes, 204);
    assert_memory_equal(ti.data, q, 204);
    td_gguf_free(g);
    free(buf);
}

/* ---- hostile files, one kind per test ---- */

static void short_and_not_gguf(void **state)
{
    (void)state;
    blob b = { 0 };
    put(&b, "GGUF", 4);
    U32(&b, 3);
    expect_parse_error(&b, TD_E_INVALID, "the buffer is 8 bytes, shorter than the 24-byte GGUF header");
    expect_parse_error(&b, TD_E_INVALID, "the buffer is 0 bytes");
    header(&b, 0, 0);
    b.p[3] = 'G';
    expect_parse_error(&b, TD_E_INVALID, "does not start with the magic 'GGUF' (47 47 55 46) but with 47 47 55 47");
}

static void versions(void **state)
{
    (void)state;
    blob b = { 0 };
    header(&b, 0, 0);
    b.p[4] = 2;
    expect_parse_error(&b, TD_E_UNSUPPORTED, "the buffer is GGUF version 2; this reader reads version 3");
    header(&b, 0, 0);
    b.p[4] = 0, b.p[7] = 3;
    expect_parse_error(&b, TD_E_UNSUPPORTED, "a big-endian GGUF file");
    header(&b, 0, 0);
    b.p[4] = 4;
    expect_parse_error(&b, TD_E_INVALID, "has GGUF version 4, not 3");
    /* the smallest good file */
    header(&b, 0, 0);
    td_gguf *g = parse_ok(&b);
    size_t n = 1;
    tdt_check(td_gguf_kv_count(g, &n), "kv count");
    assert_int_equal(n, 0);
    td_gguf_free(g);
    free(b.p);
}

static void absurd_counts(void **state)
{
    (void)state;
    blob b = { 0 };
    header(&b, 0, UINT64_C(1) << 62);
    expect_parse_error(&b, TD_E_INVALID, "claims 4611686018427387904 key/values, more than its 0 remaining bytes");
    header(&b, UINT64_MAX, 0);
    put(&b, "0123456789abcdef0123456789abcdef", 32);
    expect_parse_error(&b, TD_E_INVALID, "claims 18446744073709551615 tensors, more than its 32 remaining bytes");
    header(&b, 2, 0); /* 2 infos need 48 bytes at least */
    put(&b, "0123456789abcdef0123456789abcdef", 32);
    expect_parse_error(&b, TD_E_INVALID, "claims 2 tensors");
    /* an array that claims more elements than the file has bytes */
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 9), U32(&b, 6), U64(&b, UINT64_C(1) << 61);
    U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "key 'k' claims 2305843009213693952 elements of float32, more than the 4 bytes");
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 9), U32(&b, 8), U64(&b, 3), str(&b, "a"), str(&b, "b");
    expect_parse_error(&b, TD_E_INVALID, "key 'k' claims 3 elements of string, more than the 18 bytes");
}

static void bad_strings(void **state)
{
    (void)state;
    blob b = { 0 };
    header(&b, 0, 1);
    U64(&b, UINT64_MAX); /* a key of 2^64 - 1 bytes */
    put(&b, "abcdef", 6);
    expect_parse_error(&b, TD_E_INVALID, "the key of key/value 0 is 18446744073709551615 bytes long, past the format's limit of 65535");
    header(&b, 0, 1);
    U64(&b, 100);
    put(&b, "general.name-and-more", 21);
    expect_parse_error(&b, TD_E_INVALID, "the key of key/value 0 is 100 bytes long, but only 21 bytes of the buffer remain");
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 8), U64(&b, UINT64_C(1) << 40), put(&b, "xyz", 3);
    expect_parse_error(&b, TD_E_INVALID, "the value of key 'k' is 1099511627776 bytes long, but only 3 bytes");
    header(&b, 0, 1);
    str(&b, ""), U32(&b, 0), U8(&b, 1), U8(&b, 0); /* (14 bytes, or the count check comes first) */
    expect_parse_error(&b, TD_E_INVALID, "key/value 0 has an empty key");
    header(&b, 0, 1);
    str(&b, "gen\xc3\xa9ral"), U32(&b, 0), U8(&b, 1);
    expect_parse_error(&b, TD_E_INVALID, "holds the byte 0xc3 at 3; keys are ASCII without NUL");
    header(&b, 0, 1);
    U64(&b, 3), put(&b, "a\0b", 3), U32(&b, 0), U8(&b, 1);
    expect_parse_error(&b, TD_E_INVALID, "holds the byte 0x00 at 1");
    /* truncated inside a value */
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 10), U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "the value of key 'k': 8 bytes needed at byte 37, but the buffer ends at byte 41");
}

static void bad_values(void **state)
{
    (void)state;
    blob b = { 0 };
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 13), U8(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "key 'k' has value type 13, which the format does not have");
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 9), U32(&b, 77), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "key 'k' is an array of value type 77");
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 9), U32(&b, 9), U64(&b, 1), U32(&b, 0), U64(&b, 0);
    expect_parse_error(&b, TD_E_UNSUPPORTED, "key 'k' is an array of arrays");
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 7), U8(&b, 2);
    expect_parse_error(&b, TD_E_INVALID, "key 'k': bool 0 is the byte 2, not 0 or 1");
    header(&b, 0, 1);
    str(&b, "k"), U32(&b, 9), U32(&b, 7), U64(&b, 3), U8(&b, 1), U8(&b, 0), U8(&b, 255);
    expect_parse_error(&b, TD_E_INVALID, "key 'k': bool 2 is the byte 255");
    header(&b, 0, 3);
    str(&b, "a"), U32(&b, 0), U8(&b, 1);
    str(&b, "b"), U32(&b, 0), U8(&b, 1);
    str(&b, "a"), U32(&b, 1), U8(&b, 1);
    expect_parse_error(&b, TD_E_INVALID, "the key 'a' appears twice");
}

static void bad_alignment(void **state)
{
    (void)state;
    blob b = { 0 };
    header(&b, 0, 1);
    str(&b, "general.alignment"), U32(&b, 10), U64(&b, 32);
    expect_parse_error(&b, TD_E_INVALID, "'general.alignment' is a uint64, not a uint32");
    const uint32_t bad[] = { 0, 12, 4, 48, 0x80000001u };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        header(&b, 0, 1);
        str(&b, "general.alignment"), U32(&b, 4), U32(&b, bad[i]);
        char msg[96];
        snprintf(msg, sizeof msg, "'general.alignment' is %u, not a power of two and a multiple of 8", bad[i]);
        expect_parse_error(&b, TD_E_INVALID, msg);
    }
    /* the largest legal alignment: fine without tensors, a data section past the end with one */
    header(&b, 0, 1);
    str(&b, "general.alignment"), U32(&b, 4), U32(&b, 0x80000000u);
    td_gguf *g = parse_ok(&b);
    uint32_t a = 0;
    tdt_check(td_gguf_alignment(g, &a), "alignment");
    assert_int_equal(a, 0x80000000u);
    td_gguf_free(g);
    free(b.p);
    b = (blob){ 0 };
    static const uint64_t d0[] = { 0 };
    header(&b, 1, 1);
    str(&b, "general.alignment"), U32(&b, 4), U32(&b, 0x80000000u);
    info(&b, "t", 1, d0, 0, 0);
    expect_parse_error(&b, TD_E_INVALID, "the data section would start at byte 2147483648, past the end of the buffer");
    /* offsets must be multiples of it */
    header(&b, 1, 1);
    str(&b, "general.alignment"), U32(&b, 4), U32(&b, 16);
    static const uint64_t d1[] = { 1 };
    info(&b, "t", 1, d1, 0, 8);
    pad_to(&b, 16);
    put(&b, "0123456789abcdef", 16);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't': offset 8 is not a multiple of the alignment 16");
}

static void bad_tensor_infos(void **state)
{
    (void)state;
    static const uint64_t d1[] = { 1 }, d5[] = { 1, 1, 1, 1, 1 }, dbig[] = { (UINT64_C(1) << 40) + 1 };
    static const uint64_t dwrap[] = { UINT64_C(1) << 32, UINT64_C(1) << 32 }, d33[] = { 33 };
    static const uint64_t dprod[] = { UINT64_C(1) << 20, UINT64_C(1) << 20, 2 };
    blob b = { 0 };
    const char *const long_name = "a_name_of_65_bytes_is_one_byte_past_the_limit_of_the_format_12345";
    assert_int_equal(strlen(long_name), 65);
    header(&b, 1, 0), info(&b, long_name, 1, d1, 0, 0), pad_to(&b, 32), U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "the name of tensor 0 is 65 bytes long, past the format's limit of 64");
    header(&b, 1, 0), U64(&b, 3), put(&b, "a\0b", 3), U32(&b, 1), U64(&b, 1), U32(&b, 0), U64(&b, 0);
    pad_to(&b, 32), U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "the name of tensor 0 holds a NUL byte");
    header(&b, 1, 0), info(&b, "t", 5, d5, 0, 0), pad_to(&b, 32), U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't' has 5 dims; the format allows at most 4");
    header(&b, 1, 0), info(&b, "t", 1, dbig, 0, 0), pad_to(&b, 32);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't': dim 0 is 1099511627777, past the 2^40 elements");
    header(&b, 1, 0), info(&b, "t", 2, dwrap, 0, 0), pad_to(&b, 32); /* 2^64 wraps to 0: caught */
    expect_parse_error(&b, TD_E_INVALID, "tensor 't' has more than 2^40 elements");
    header(&b, 1, 0), info(&b, "t", 3, dprod, 0, 0), pad_to(&b, 32);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't' has more than 2^40 elements");
    /* a 0 among the dims does not make the others' product fine (tdispatch's shapes refuse it too) */
    static const uint64_t dzero[] = { 0, UINT64_C(1) << 40, 2 };
    header(&b, 1, 0), info(&b, "t", 3, dzero, 0, 0), pad_to(&b, 32);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't' has more than 2^40 elements");
    const uint32_t unknown[] = { 4, 5, 31, 36, 38, 43, 1000, UINT32_MAX };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        header(&b, 1, 0), info(&b, "t", 1, d1, unknown[i], 0), pad_to(&b, 32), U64(&b, 0);
        char msg[80];
        snprintf(msg, sizeof msg, "tensor 't' has ggml type %u, which is not a ggml type", unknown[i]);
        expect_parse_error(&b, TD_E_INVALID, msg);
    }
    header(&b, 1, 0), info(&b, "t", 1, d33, 8, 0), pad_to(&b, 32);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't': q8_0 packs 32 values per block, but the innermost dim is 33");
    header(&b, 1, 0), info(&b, "t", 0, NULL, 2, 0), pad_to(&b, 32); /* a 0-d q4_0: 1 value, no whole block */
    expect_parse_error(&b, TD_E_INVALID, "q4_0 packs 32 values per block, but the innermost dim is 1");
    /* truncated inside an info */
    header(&b, 1, 0), str(&b, "t"), U32(&b, 1), U64(&b, 1), U32(&b, 0), U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't': 8 bytes needed at byte 49, but the buffer ends at byte 53");
}

static void bad_data_layout(void **state)
{
    (void)state;
    static const uint64_t d2[] = { 2 }, d4[] = { 4 }, d0[] = { 0 };
    blob b = { 0 };
    /* f32 [4] is 16 bytes, 8 are there: a truncated file */
    header(&b, 1, 0), info(&b, "t", 1, d4, 0, 0), pad_to(&b, 32), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "tensor 't': its 16 bytes at offset 0 run past the end of the 8-byte data section");
    /* an offset far outside the file */
    header(&b, 1, 0), info(&b, "t", 1, d2, 0, UINT64_C(1) << 62), pad_to(&b, 32), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "its 8 bytes at offset 4611686018427387904 run past the end");
    /* offset + size wraps 2^64: still caught */
    header(&b, 1, 0), info(&b, "t", 1, d4, 0, UINT64_MAX - 31), pad_to(&b, 32), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "run past the end of the 8-byte data section");
    /* an empty tensor past the end */
    header(&b, 1, 0), info(&b, "t", 1, d0, 0, 64), pad_to(&b, 32), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "its 0 bytes at offset 64 run past the end");
    /* the infos end where the data should start: no data section at all */
    header(&b, 1, 0), info(&b, "t", 1, d0, 0, 0);
    expect_parse_error(&b, TD_E_INVALID, "the data section would start at byte 64, past the end of the buffer (57 bytes");
    /* two tensors on the same bytes, and two that partly overlap */
    header(&b, 2, 0), info(&b, "a", 1, d2, 0, 0), info(&b, "b", 1, d2, 0, 0), pad_to(&b, 32), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "tensors 'a' [0, 8) and 'b' [0, 8) overlap");
    static const uint64_t d12[] = { 12 };
    header(&b, 2, 0), info(&b, "a", 1, d12, 0, 0), info(&b, "b", 1, d4, 0, 32), pad_to(&b, 32);
    for (int i = 0; i < 16; i++)
        U32(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "tensors 'a' [0, 48) and 'b' [32, 48) overlap");
    /* two tensors with one name */
    header(&b, 2, 0), info(&b, "a", 1, d2, 0, 0), info(&b, "a", 1, d2, 0, 32), pad_to(&b, 32), U64(&b, 0);
    U64(&b, 0), U64(&b, 0), U64(&b, 0), U64(&b, 0);
    expect_parse_error(&b, TD_E_INVALID, "two tensors are named 'a'");
    /* gaps, trailing bytes and empty tensors anywhere inside are fine */
    header(&b, 3, 0), info(&b, "a", 1, d2, 0, 32), info(&b, "e", 1, d0, 0, 32), info(&b, "f", 1, d0, 0, 0);
    pad_to(&b, 32);
    for (int i = 0; i < 20; i++)
        U32(&b, 0);
    td_gguf *g = parse_ok(&b);
    td_gguf_free(g);
    free(b.p);
}

/* A good file cut at every length: always an error with a message, never a crash. */
static void every_truncation(void **state)
{
    (void)state;
    td_gguf_writer *w = NULL;
    tdt_check(td_gguf_writer_new(&w), "new");
    static const char *const strs[2] = { "x", "yy" };
    static const float v[3] = { 1, 2, 3 };
    static const int64_t s3[] = { 3 };
    tdt_check(td_gguf_writer_add_string(w, "general.name", "m", 1), "string");
    tdt_check(td_gguf_writer_add_string_array(w, "t.toks", strs, NULL, 2), "strings");
    tdt_check(td_gguf_writer_add_tensor(w, "w", TD_GGML_F32, s3, 1, v, 12), "tensor");
    size_t size = 0;
    tdt_check(td_gguf_writer_size(w, &size), "size");
    unsigned char *buf = malloc(size);
    tdt_check(td_gguf_writer_write_to(w, buf, size), "write_to");
    td_gguf_writer_free(w);
    /* the data ends at 12 of its 32 padded bytes: a file cut anywhere before that fails */
    const size_t data_end = size - 32 + 12;
    for (size_t cut = 0; cut < data_end; cut++) {
        td_gguf *g = (td_gguf *)&g;
        const td_status st = td_gguf_parse(buf, cut, &g);
        if (st != TD_E_INVALID || td_last_error()[0] == '\0')
            fail_msg("a file cut at %zu of %zu: %s '%s'", cut, size, td_status_name(st), td_last_error());
        assert_null(g);
    }
    write_file("gguf_cut.gguf", buf, data_end - 1);
    td_gguf *g = NULL;
    tdt_expect_error(td_gguf_open("gguf_cut.gguf", &g), TD_E_INVALID,
                     "tensor 'w': its 12 bytes at offset 0 run past the end of the 11-byte data section");
    assert_null(g);
    write_file("gguf_cut.gguf", buf, 10);
    tdt_expect_error(td_gguf_open("gguf_cut.gguf", &g), TD_E_INVALID, "'gguf_cut.gguf' is 10 bytes, shorter");
    write_file("gguf_cut.gguf", buf, 0);
    tdt_expect_error(td_gguf_open("gguf_cut.gguf", &g), TD_E_INVALID, "'gguf_cut.gguf' is 0 bytes");
    tdt_check(td_gguf_parse(buf, data_end, &g), "the file up to its last data byte");
    td_gguf_free(g);
    free(buf);
}

static void path_errors(void **state)
{
    (void)state;
    td_gguf *g = (td_gguf *)&g;
    tdt_expect_error(td_gguf_open("no/such/dir/x.gguf", &g), TD_E_INVALID, "cannot open 'no/such/dir/x.gguf'");
    assert_null(g);
    tdt_expect_error(td_gguf_open(".", &g), TD_E_INVALID, "'.' is not a regular file");
    assert_null(g);
}

/* ---- arguments ---- */

static void null_arguments(void **state)
{
    (void)state;
    blob b = tensors_file();
    td_gguf *g = NULL;
    tdt_expect_error(td_gguf_parse(b.p, b.len, NULL), TD_E_NULL, "out is NULL");
    g = (td_gguf *)&g;
    tdt_expect_error(td_gguf_parse(NULL, 4, &g), TD_E_NULL, "data is NULL");
    assert_null(g);
    tdt_expect_error(td_gguf_open(NULL, &g), TD_E_NULL, "path is NULL");
    tdt_expect_error(td_gguf_open("x", NULL), TD_E_NULL, "out is NULL");
    g = parse_ok(&b);
    size_t n, ix;
    const char *s;
    td_gguf_type ty;
    uint32_t u32;
    uint64_t u64;
    float f;
    int64_t i64;
    td_gguf_tensor_info ti;
    td_tensor *t;
    tdt_expect_error(td_gguf_kv_count(NULL, &n), TD_E_NULL, "g is NULL");
    tdt_expect_error(td_gguf_kv_count(g, NULL), TD_E_NULL, "count is NULL");
    tdt_expect_error(td_gguf_kv_at(g, 0, NULL, &ty), TD_E_NULL, "key is NULL");
    tdt_expect_error(td_gguf_kv_at(g, 0, &s, NULL), TD_E_NULL, "type is NULL");
    tdt_expect_error(td_gguf_find_key(g, NULL, &ix), TD_E_NULL, "key is NULL");
    tdt_expect_error(td_gguf_find_key(g, "k", NULL), TD_E_NULL, "index is NULL");
    tdt_expect_error(td_gguf_get_u32(NULL, "k", &u32), TD_E_NULL, "g is NULL");
    tdt_expect_error(td_gguf_get_u32(g, NULL, &u32), TD_E_NULL, "key is NULL");
    tdt_expect_error(td_gguf_get_f32(g, "k", NULL), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_gguf_get_int(g, "k", NULL), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_gguf_get_string(g, "k", NULL, &n), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_gguf_get_array_info(g, "k", &ty, NULL), TD_E_NULL, "count is NULL");
    tdt_expect_error(td_gguf_get_array(g, "k", TD_GGUF_INT32, NULL, 0), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_gguf_get_array_string(g, "k", 0, NULL, NULL), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_gguf_alignment(g, NULL), TD_E_NULL, "alignment is NULL");
    tdt_expect_error(td_gguf_data_offset(NULL, &u64), TD_E_NULL, "g is NULL");
    tdt_expect_error(td_gguf_tensor_count(g, NULL), TD_E_NULL, "count is NULL");
    tdt_expect_error(td_gguf_tensor_info_at(g, 0, NULL), TD_E_NULL, "info is NULL");
    tdt_expect_error(td_gguf_find_tensor(g, NULL, &ix), TD_E_NULL, "name is NULL");
    tdt_expect_error(td_gguf_load_tensor(g, "m", NULL, &t), TD_E_NULL, "device is NULL");
    tdt_expect_error(td_gguf_load_tensor(g, "m", cpu, NULL), TD_E_NULL, "out is NULL");
    tdt_expect_error(td_gguf_load_tensor(NULL, "m", cpu, &t), TD_E_NULL, "g is NULL");
    tdt_expect_error(td_gguf_ggml_type_block(0, NULL, &n), TD_E_NULL, "block is NULL");
    tdt_expect_error(td_gguf_get_i64(g, "k", &i64), TD_E_RANGE, "no key 'k'");
    (void)f;
    (void)ti;
    td_gguf_free(g);
    td_gguf_free(NULL);
    free(b.p);
    tdt_expect_error(td_gguf_writer_new(NULL), TD_E_NULL, "out is NULL");
    td_gguf_writer_free(NULL);
}

static void writer_errors(void **state)
{
    (void)state;
    td_gguf_writer *w = NULL;
    tdt_check(td_gguf_writer_new(&w), "new");
    static const float v[2] = { 1, 2 };
    static const int64_t s2[] = { 2 }, s5[] = { 1, 1, 1, 1, 2 }, sneg[] = { -2 };
    tdt_expect_error(td_gguf_writer_add_u8(NULL, "k", 1), TD_E_NULL, "w is NULL");
    tdt_expect_error(td_gguf_writer_add_u8(w, NULL, 1), TD_E_NULL, "key is NULL");
    tdt_expect_error(td_gguf_writer_add_u8(w, "", 1), TD_E_INVALID, "a key is empty");
    tdt_expect_error(td_gguf_writer_add_u8(w, "k\xc3\xa9", 1), TD_E_INVALID, "key 'k\xc3\xa9' is not ASCII (byte 1 is 0xc3)");
    tdt_check(td_gguf_writer_add_u8(w, "k", 1), "k");
    tdt_expect_error(td_gguf_writer_add_f64(w, "k", 1), TD_E_INVALID, "the key 'k' is added twice");
    tdt_expect_error(td_gguf_writer_add_u32(w, "general.alignment", 12), TD_E_INVALID,
                     "'general.alignment' 12 is not a power of two and a multiple of 8");
    tdt_expect_error(td_gguf_writer_add_u64(w, "general.alignment", 64), TD_E_INVALID, "must be a uint32");
    tdt_expect_error(td_gguf_writer_add_string(w, "general.alignment", "64", 2), TD_E_INVALID, "must be a uint32");
    tdt_expect_error(td_gguf_writer_add_string(w, "s", NULL, 2), TD_E_NULL, "s is NULL");
    tdt_expect_error(td_gguf_writer_add_array(w, "a", TD_GGUF_INT32, NULL, 2), TD_E_NULL, "data is NULL");
    tdt_expect_error(td_gguf_writer_add_array(w, "a", TD_GGUF_ARRAY, v, 2), TD_E_INVALID, "arrays of arrays");
    tdt_expect_error(td_gguf_writer_add_array(w, "a", TD_GGUF_STRING, v, 2), TD_E_INVALID, "td_gguf_writer_add_string_array");
    tdt_expect_error(td_gguf_writer_add_string_array(w, "a", NULL, NULL, 2), TD_E_NULL, "strs is NULL");
    static const char *const with_null[2] = { "a", NULL };
    tdt_expect_error(td_gguf_writer_add_string_array(w, "a", with_null, NULL, 2), TD_E_NULL, "key 'a': string 1 is NULL");
    tdt_check(td_gguf_writer_add_tensor(w, "t", TD_GGML_F32, s2, 1, v, 8), "t");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "t", TD_GGML_F32, s2, 1, v, 8), TD_E_INVALID, "two tensors are named 't'");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "a_name_of_64_bytes_is_one_byte_past_what_ggml_reads_0123456789ab",
                                               TD_GGML_F32, s2, 1, v, 8), TD_E_INVALID, "is 64 bytes; ggml reads names of at most 63");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "u", 4, s2, 1, v, 8), TD_E_INVALID, "tensor 'u': 4 is not a ggml type id");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "u", TD_GGML_F32, s5, 5, v, 8), TD_E_INVALID, "has 5 dims; the format allows 0 to 4");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "u", TD_GGML_F32, sneg, 1, v, 8), TD_E_INVALID, "dim 0 is -2");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "u", TD_GGML_F32, s2, 1, NULL, 8), TD_E_NULL, "data is NULL");
    tdt_expect_error(td_gguf_writer_add_tensor(w, "u", TD_GGML_F32, NULL, 1, v, 8), TD_E_NULL, "shape is NULL");
    tdt_expect_error(td_gguf_writer_add_tensor(w, NULL, TD_GGML_F32, s2, 1, v, 8), TD_E_NULL, "name is NULL");
    tdt_expect_error(td_gguf_writer_add_td_tensor(w, "u", NULL, TD_GGML_F32), TD_E_NULL, "t is NULL");
    td_tensor *it = NULL;
    static const int32_t iv[2] = { 1, 2 };
    tdt_check(td_int_from_data(cpu, iv, s2, 1, &it), "int tensor");
    tdt_expect_error(td_gguf_writer_add_td_tensor(w, "u", it, TD_GGML_F32), TD_E_UNSUPPORTED, "has dtype i32 and cannot be written as f32");
    td_tensor_release(it);
    size_t size = 0;
    tdt_check(td_gguf_writer_size(w, &size), "size");
    unsigned char *buf = malloc(size + 1);
    tdt_expect_error(td_gguf_writer_write_to(w, buf, size + 1), TD_E_INVALID, "size is");
    tdt_expect_error(td_gguf_writer_write_to(w, NULL, size), TD_E_NULL, "buf is NULL");
    tdt_expect_error(td_gguf_writer_size(w, NULL), TD_E_NULL, "size is NULL");
    free(buf);
    remove("no_such_dir_x.gguf");
    tdt_expect_error(td_gguf_writer_write(w, "no/such/dir/x.gguf"), TD_E_INVALID,
                     "cannot open 'no/such/dir/x.gguf.partial' for writing");
    tdt_expect_error(td_gguf_writer_write(w, NULL), TD_E_NULL, "path is NULL");
    td_gguf_writer_free(w);
    /* td_gguf_save's own checks; no file left behind */
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t), "t");
    td_tensor *ts[2] = { t, t };
    const char *dup[2] = { "w", "w" }, *nul[2] = { "w", NULL };
    remove("gguf_save_err.gguf");
    tdt_expect_error(td_gguf_save("gguf_save_err.gguf", dup, ts, 2), TD_E_INVALID, "two tensors are named 'w'");
    tdt_expect_error(td_gguf_save("gguf_save_err.gguf", nul, ts, 2), TD_E_NULL, "names[1] is NULL");
    tdt_expect_error(td_gguf_save("gguf_save_err.gguf", NULL, ts, 2), TD_E_NULL, "names is NULL");
    tdt_expect_error(td_gguf_save(NULL, dup, ts, 2), TD_E_NULL, "path is NULL");
    assert_false(file_exists("gguf_save_err.gguf"));
    assert_false(file_exists("gguf_save_err.gguf.partial"));
    td_tensor_release(t);
}

/* Every allocation of a parse, of the writer and of td_gguf_save failing in turn:
 * TD_E_NOMEM, nothing leaked (ASan and the per-test object count), no file left. */
static void allocation_failures(void **state)
{
    (void)state;
    blob b = tensors_file();
    bool done = false;
    for (long n = 0; n < 100 && !done; n++) {
        td_gguf *g = NULL;
        td_testing_fail_allocations_after(n);
        const td_status got = td_gguf_parse(b.p, b.len, &g);
        td_testing_fail_allocations_after(-1);
        if (got == TD_OK) {
            size_t count = 0;
            tdt_check(td_gguf_tensor_count(g, &count), "count");
            assert_int_equal(count, 5);
            td_gguf_free(g);
            done = true;
        } else {
            assert_int_equal(got, TD_E_NOMEM);
            assert_null(g);
        }
    }
    assert_true(done);
    free(b.p);
    static const float v[2] = { 1, 2 };
    static const int64_t s2[] = { 2 };
    static const char *const names[2] = { "a", "b" };
    static const char *const strs[2] = { "x", "y" };
    td_tensor *t = NULL;
    tdt_check(td_float_from_data(cpu, v, s2, 1, &t), "t");
    td_tensor *ts[2] = { t, t };
    done = false;
    remove("gguf_alloc.gguf");
    for (long n = 0; n < 100 && !done; n++) {
        td_testing_fail_allocations_after(n);
        const td_status got = td_gguf_save("gguf_alloc.gguf", names, ts, 2);
        td_testing_fail_allocations_after(-1);
        if (got == TD_OK) {
            done = true;
        } else {
            assert_int_equal(got, TD_E_NOMEM);
            assert_false(file_exists("gguf_alloc.gguf"));
            assert_false(file_exists("gguf_alloc.gguf.partial"));
        }
    }
    assert_true(done);
    done = false;
    for (long n = 0; n < 100 && !done; n++) {
        td_gguf_writer *w = NULL;
        td_testing_fail_allocations_after(n);
        td_status got = td_gguf_writer_new(&w);
        if (got == TD_OK)
            got = td_gguf_writer_add_string_array(w, "k.s", strs, NULL, 2);
        if (got == TD_OK)
            got = td_gguf_writer_add_td_tensor(w, "t", t, TD_GGML_BF16);
        td_testing_fail_allocations_after(-1);
        if (got == TD_OK)
            done = true;
        else
            assert_int_equal(got, TD_E_NOMEM);
        td_gguf_writer_free(w);
    }
    assert_true(done);
    td_tensor_release(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TDT_TEST(writer_bytes_by_hand),
        TDT_TEST(writer_every_type),
        TDT_TEST(tensor_infos),
        TDT_TEST(load_tensors),
        TDT_TEST(td_tensor_round_trip),
        TDT_TEST(quantized_raw),
        TDT_TEST(quantized_td_tensors),
        TDT_TEST(short_and_not_gguf),
        TDT_TEST(versions),
        TDT_TEST(absurd_counts),
        TDT_TEST(bad_strings),
        TDT_TEST(bad_values),
        TDT_TEST(bad_alignment),
        TDT_TEST(bad_tensor_infos),
        TDT_TEST(bad_data_layout),
        TDT_TEST(every_truncation),
        TDT_TEST(path_errors),
        TDT_TEST(null_arguments),
        TDT_TEST(writer_errors),
        TDT_TEST(allocation_failures),
    };
    return cmocka_run_group_tests_name("gguf", tests, setup, teardown);
}
