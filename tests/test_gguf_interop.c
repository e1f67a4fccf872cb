/* GGUF interop: reads the files tests/gguf_interop.py wrote (stdlib struct) and checks them
 * against values computed here; writes the same content with the library's writer for the
 * script to read and compare byte for byte with its own.
 *   test_gguf_interop DIR
 * Run by tests/gguf_interop.sh. Exits 1 with a message on the first difference. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_gguf.h"
#include "td_ops.h"

static const char *dir;
static int failures;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "test_gguf_interop: %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            failures++;                                                      \
        }                                                                    \
    } while (0)
#define OK(st, what) CHECK((st) == TD_OK, "%s: %s", what, td_last_error())

/* ---- the content, as gguf_interop.py defines it ---- */

static float f32_value(int64_t i)
{
    return (float)(i - 7) * 0.375f;
}
static float f16_value(int64_t i)
{
    return (float)(i - 3) * 0.5f;
}
static float bf16_value(int64_t i)
{
    return (float)i * 1.25f - 2.0f;
}

/* q8_0: block b is the f16 0.5 * (b + 1) (0x3800, 0x3c00), then bytes (i * 7 + b * 3) % 256;
 * q4_0: the f16 1.0 (0x3c00), then bytes (i * 17 + 3 + b) & 0xff. */
static void q8_0_bytes(unsigned char *out, int blocks)
{
    static const uint16_t d[2] = { 0x3800, 0x3c00 };
    for (int b = 0; b < blocks; b++) {
        out[34 * b] = (unsigned char)d[b];
        out[34 * b + 1] = (unsigned char)(d[b] >> 8);
        for (int i = 0; i < 32; i++)
            out[34 * b + 2 + i] = (unsigned char)((i * 7 + b * 3) % 256);
    }
}
static void q4_0_bytes(unsigned char *out)
{
    out[0] = 0x00, out[1] = 0x3c;
    for (int i = 0; i < 16; i++)
        out[2 + i] = (unsigned char)((i * 17 + 3) & 0xff);
}

static const char *const arr_str[3] = { "a", "", "ccc" };
static const int32_t arr_i32[3] = { 1, -2, 3 };
static const float arr_f32[2] = { 0.5f, -0.25f };
static const bool arr_bool[2] = { true, false };
#define STR_VALUE "h\xc3\xa9llo \xe2\x9c\x93"

static void add_kvs(td_gguf_writer *w)
{
    OK(td_gguf_writer_add_string(w, "general.architecture", "tdgpt", 5), "architecture");
    OK(td_gguf_writer_add_u32(w, "general.alignment", 64), "alignment");
    OK(td_gguf_writer_add_u8(w, "t.u8", 200), "u8");
    OK(td_gguf_writer_add_i8(w, "t.i8", -100), "i8");
    OK(td_gguf_writer_add_u16(w, "t.u16", 60000), "u16");
    OK(td_gguf_writer_add_i16(w, "t.i16", -30000), "i16");
    OK(td_gguf_writer_add_u32(w, "t.u32", 4000000000u), "u32");
    OK(td_gguf_writer_add_i32(w, "t.i32", -2000000000), "i32");
    OK(td_gguf_writer_add_f32(w, "t.f32", 1.5f), "f32");
    OK(td_gguf_writer_add_bool(w, "t.bool", true), "bool");
    OK(td_gguf_writer_add_string(w, "t.str", STR_VALUE, strlen(STR_VALUE)), "str");
    OK(td_gguf_writer_add_u64(w, "t.u64", UINT64_C(9223372036854775813)), "u64");
    OK(td_gguf_writer_add_i64(w, "t.i64", -INT64_C(4611686018427387904)), "i64");
    OK(td_gguf_writer_add_f64(w, "t.f64", -0.1), "f64");
    OK(td_gguf_writer_add_array(w, "t.arr_i32", TD_GGUF_INT32, arr_i32, 3), "arr_i32");
    OK(td_gguf_writer_add_array(w, "t.arr_f32", TD_GGUF_FLOAT32, arr_f32, 2), "arr_f32");
    OK(td_gguf_writer_add_string_array(w, "t.arr_str", arr_str, NULL, 3), "arr_str");
    OK(td_gguf_writer_add_array(w, "t.arr_bool", TD_GGUF_BOOL, arr_bool, 2), "arr_bool");
    OK(td_gguf_writer_add_array(w, "t.arr_u64", TD_GGUF_UINT64, NULL, 0), "arr_u64");
}

static void check_kvs(const td_gguf *g, bool all)
{
    uint8_t u8 = 0;
    int8_t i8 = 0;
    uint16_t u16 = 0;
    int16_t i16 = 0;
    OK(td_gguf_get_u8(g, "t.u8", &u8), "u8");
    OK(td_gguf_get_i8(g, "t.i8", &i8), "i8");
    OK(td_gguf_get_u16(g, "t.u16", &u16), "u16");
    OK(td_gguf_get_i16(g, "t.i16", &i16), "i16");
    CHECK(u8 == 200 && i8 == -100 && u16 == 60000 && i16 == -30000, "small ints %u %d %u %d", u8, i8, u16, i16);
    if (!all)
        return;
    const char *s = NULL;
    size_t len = 0, n = 0;
    OK(td_gguf_get_string(g, "general.architecture", &s, &len), "architecture");
    CHECK(len == 5 && strcmp(s, "tdgpt") == 0, "architecture '%s'", s);
    uint32_t u32 = 0, align = 0;
    int32_t i32 = 0;
    uint64_t u64 = 0;
    int64_t i64 = 0;
    float f32 = 0;
    double f64 = 0;
    bool b = false;
    OK(td_gguf_get_u32(g, "general.alignment", &align), "alignment");
    OK(td_gguf_get_u32(g, "t.u32", &u32), "u32");
    OK(td_gguf_get_i32(g, "t.i32", &i32), "i32");
    OK(td_gguf_get_f32(g, "t.f32", &f32), "f32");
    OK(td_gguf_get_bool(g, "t.bool", &b), "bool");
    OK(td_gguf_get_u64(g, "t.u64", &u64), "u64");
    OK(td_gguf_get_i64(g, "t.i64", &i64), "i64");
    OK(td_gguf_get_f64(g, "t.f64", &f64), "f64");
    CHECK(align == 64 && u32 == 4000000000u && i32 == -2000000000 && f32 == 1.5f && b, "scalars");
    CHECK(u64 == UINT64_C(9223372036854775813) && i64 == -INT64_C(4611686018427387904) && f64 == -0.1, "64-bit");
    OK(td_gguf_get_string(g, "t.str", &s, &len), "str");
    CHECK(len == strlen(STR_VALUE) && strcmp(s, STR_VALUE) == 0, "str '%s'", s);
    int32_t ai[3] = { 0 };
    float af[2] = { 0 };
    bool ab[2] = { false, true };
    OK(td_gguf_get_array(g, "t.arr_i32", TD_GGUF_INT32, ai, 3), "arr_i32");
    OK(td_gguf_get_array(g, "t.arr_f32", TD_GGUF_FLOAT32, af, 2), "arr_f32");
    OK(td_gguf_get_array(g, "t.arr_bool", TD_GGUF_BOOL, ab, 2), "arr_bool");
    CHECK(memcmp(ai, arr_i32, sizeof ai) == 0 && af[0] == 0.5f && af[1] == -0.25f && ab[0] && !ab[1], "arrays");
    for (size_t i = 0; i < 3; i++) {
        OK(td_gguf_get_array_string(g, "t.arr_str", i, &s, &len), "arr_str");
        CHECK(strcmp(s, arr_str[i]) == 0, "arr_str[%zu] '%s'", i, s);
    }
    td_gguf_type et;
    OK(td_gguf_get_array_info(g, "t.arr_u64", &et, &n), "arr_u64");
    CHECK(et == TD_GGUF_UINT64 && n == 0, "arr_u64: type %d, %zu elements", (int)et, n);
    OK(td_gguf_kv_count(g, &n), "kv count");
    CHECK(n == 19, "%zu key/values", n);
}

static void check_values(td_device *cpu, const td_gguf *g, const char *name, float (*fn)(int64_t), int64_t numel)
{
    td_tensor *t = NULL;
    OK(td_gguf_load_tensor(g, name, cpu, &t), name);
    float *got = malloc((size_t)numel * sizeof *got);
    OK(td_float_into_data(t, got, numel), name);
    for (int64_t i = 0; i < numel; i++)
        CHECK(got[i] == fn(i), "%s[%lld] = %g, want %g", name, (long long)i, got[i], fn(i));
    free(got);
    td_tensor_release(t);
}

static void check_tensors(td_device *cpu, const td_gguf *g)
{
    static const struct { const char *name; uint32_t type; int ndim; int64_t shape[2]; } want[] = {
        { "w.f32", TD_GGML_F32, 2, { 3, 5 } }, { "w.f16", TD_GGML_F16, 2, { 2, 4 } },
        { "w.bf16", TD_GGML_BF16, 1, { 4 } },  { "w.q8_0", TD_GGML_Q8_0, 2, { 2, 32 } },
        { "w.q4_0", TD_GGML_Q4_0, 1, { 32 } }, { "scalar", TD_GGML_F32, 0, { 0 } },
    };
    size_t n = 0;
    OK(td_gguf_tensor_count(g, &n), "tensor count");
    CHECK(n == 6, "%zu tensors", n);
    for (size_t i = 0; i < 6; i++) {
        size_t ix = 0;
        td_gguf_tensor_info ti;
        OK(td_gguf_find_tensor(g, want[i].name, &ix), want[i].name);
        OK(td_gguf_tensor_info_at(g, ix, &ti), want[i].name);
        CHECK(ti.ggml_type == want[i].type && ti.ndim == want[i].ndim, "%s: type %u, %d dims", ti.name, ti.ggml_type,
              ti.ndim);
        for (int k = 0; k < ti.ndim && k < 2; k++)
            CHECK(ti.shape[k] == want[i].shape[k] && ti.dims[ti.ndim - 1 - k] == (uint64_t)want[i].shape[k],
                  "%s: dim %d", ti.name, k);
    }
    check_values(cpu, g, "w.f32", f32_value, 15);
    check_values(cpu, g, "w.f16", f16_value, 8);
    check_values(cpu, g, "w.bf16", bf16_value, 4);
    unsigned char q8[68], q4[18];
    q8_0_bytes(q8, 2);
    q4_0_bytes(q4);
    size_t ix = 0;
    td_gguf_tensor_info ti;
    OK(td_gguf_find_tensor(g, "w.q8_0", &ix), "q8_0");
    OK(td_gguf_tensor_info_at(g, ix, &ti), "q8_0");
    CHECK(ti.nbytes == 68 && memcmp(ti.data, q8, 68) == 0, "q8_0 bytes");
    OK(td_gguf_find_tensor(g, "w.q4_0", &ix), "q4_0");
    OK(td_gguf_tensor_info_at(g, ix, &ti), "q4_0");
    CHECK(ti.nbytes == 18 && memcmp(ti.data, q4, 18) == 0, "q4_0 bytes");
    td_tensor *t = NULL;
    /* The Python-written blocks as q8_0 / q4_0 tensors (td_gguf_load_tensor_dtype) and as f32
     * (td_gguf_load_tensor): value = int8 byte * d (d = 0.5, 1), q4_0 (nibble - 8) * 1 with
     * byte i holding values i (low nibble) and i + 16 (high). */
    float want8[64], want4[32], got[64];
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 32; i++)
            want8[32 * b + i] = (float)(int8_t)q8[34 * b + 2 + i] * (b == 0 ? 0.5f : 1.0f);
    for (int i = 0; i < 16; i++) {
        want4[i] = (float)((q4[2 + i] & 0x0f) - 8);
        want4[i + 16] = (float)((q4[2 + i] >> 4) - 8);
    }
    const char *qn[2] = { "w.q8_0", "w.q4_0" };
    const td_dtype qd[2] = { TD_Q8_0, TD_Q4_0 };
    const float *qw[2] = { want8, want4 };
    const int qcount[2] = { 64, 32 };
    for (int k = 0; k < 2; k++) {
        td_dtype dt = TD_F32;
        OK(td_gguf_load_tensor_dtype(g, qn[k], cpu, &t), qn[k]);
        OK(td_tensor_dtype(t, &dt), qn[k]);
        CHECK(dt == qd[k], "%s: dtype %s", qn[k], td_dtype_name(dt));
        OK(td_float_into_data_dtype(t, TD_F32, got, qcount[k]), qn[k]);
        CHECK(memcmp(got, qw[k], sizeof(float) * (size_t)qcount[k]) == 0, "%s: dequantized values", qn[k]);
        td_tensor_release(t);
        OK(td_gguf_load_tensor(g, qn[k], cpu, &t), qn[k]);
        OK(td_float_into_data(t, got, qcount[k]), qn[k]);
        CHECK(memcmp(got, qw[k], sizeof(float) * (size_t)qcount[k]) == 0, "%s: loaded as f32", qn[k]);
        td_tensor_release(t);
    }
    float v = 0;
    OK(td_gguf_load_tensor(g, "scalar", cpu, &t), "scalar");
    OK(td_float_into_data(t, &v, 1), "scalar");
    CHECK(v == 2.5f, "scalar %g", v);
    td_tensor_release(t);
}

static td_tensor *make(td_device *cpu, const int64_t *shape, int ndim, float (*fn)(int64_t))
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= shape[k];
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = fn(i);
    td_tensor *t = NULL;
    OK(td_float_from_data(cpu, v, shape, ndim, &t), "from_data");
    free(v);
    return t;
}

static float minus_one(int64_t i)
{
    (void)i;
    return -1.0f;
}
static float two_and_a_half(int64_t i)
{
    (void)i;
    return 2.5f;
}

static void path(char *out, size_t n, const char *file)
{
    snprintf(out, n, "%s/%s", dir, file);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_gguf_interop DIR\n");
        return 2;
    }
    dir = argv[1];
    td_device *cpu = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK) {
        fprintf(stderr, "test_gguf_interop: no cpu device: %s\n", td_last_error());
        return 1;
    }
    char p[4096];
    td_gguf *g = NULL;
    /* the script's files */
    path(p, sizeof p, "py_all.gguf");
    OK(td_gguf_open(p, &g), p);
    if (g != NULL) {
        check_kvs(g, true);
        check_tensors(cpu, g);
        td_gguf_free(g);
    }
    path(p, sizeof p, "py_reordered.gguf");
    g = NULL;
    OK(td_gguf_open(p, &g), p);
    if (g != NULL) {
        uint32_t a = 0;
        OK(td_gguf_alignment(g, &a), "alignment");
        CHECK(a == 32, "py_reordered: alignment %u", a);
        check_kvs(g, false);
        check_tensors(cpu, g);
        td_gguf_free(g);
    }
    path(p, sizeof p, "py_save.gguf");
    g = NULL;
    OK(td_gguf_open(p, &g), p);
    if (g != NULL) {
        check_values(cpu, g, "a", f32_value, 6);
        check_values(cpu, g, "b", minus_one, 1);
        td_gguf_free(g);
    }

    /* ours, for the script */
    td_gguf_writer *w = NULL;
    OK(td_gguf_writer_new(&w), "writer");
    add_kvs(w);
    static const int64_t s35[] = { 3, 5 }, s24[] = { 2, 4 }, s4[] = { 4 }, s232[] = { 2, 32 }, s32[] = { 32 };
    td_tensor *tf = make(cpu, s35, 2, f32_value), *th = make(cpu, s24, 2, f16_value);
    td_tensor *tb = make(cpu, s4, 1, bf16_value), *ts = make(cpu, NULL, 0, two_and_a_half);
    unsigned char q8[68], q4[18];
    q8_0_bytes(q8, 2);
    q4_0_bytes(q4);
    OK(td_gguf_writer_add_td_tensor(w, "w.f32", tf, TD_GGML_F32), "w.f32");
    OK(td_gguf_writer_add_td_tensor(w, "w.f16", th, TD_GGML_F16), "w.f16");
    OK(td_gguf_writer_add_td_tensor(w, "w.bf16", tb, TD_GGML_BF16), "w.bf16");
    OK(td_gguf_writer_add_tensor(w, "w.q8_0", TD_GGML_Q8_0, s232, 2, q8, 68), "w.q8_0");
    OK(td_gguf_writer_add_tensor(w, "w.q4_0", TD_GGML_Q4_0, s32, 1, q4, 18), "w.q4_0");
    OK(td_gguf_writer_add_td_tensor(w, "scalar", ts, TD_GGML_F32), "scalar");
    path(p, sizeof p, "lib_all.gguf");
    OK(td_gguf_writer_write(w, p), p);
    td_gguf_writer_free(w);
    static const int64_t s23[] = { 2, 3 };
    td_tensor *sa = make(cpu, s23, 2, f32_value), *sb = make(cpu, NULL, 0, minus_one);
    static const char *const names[2] = { "a", "b" };
    td_tensor *st[2] = { sa, sb };
    path(p, sizeof p, "lib_save.gguf");
    OK(td_gguf_save(p, names, st, 2), p);
    td_tensor *all[] = { tf, th, tb, ts, sa, sb };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    td_device_release(cpu);
    if (failures) {
        fprintf(stderr, "test_gguf_interop: %d checks failed\n", failures);
        return 1;
    }
    printf("test_gguf_interop: py_all, py_reordered and py_save read as expected; lib_all and lib_save written\n");
    return 0;
}
