/* GGUF v3 files (ggml's model format), read and written from the format's specification.
 * The reader treats every byte as hostile: each count, length and offset is checked against
 * the bytes that remain before anything is allocated or read from it. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define GG_HAVE_MMAP 1
#endif

#include "td_gguf.h"
#include "td_half.h"
#include "td_internal.h"
#include "td_ops.h"
#include "td_quant.h"

#define OP "gguf"
/* Names, keys and paths are cut to this many bytes in messages. */
#define NAME_IN_MSG 80
/* magic + version + tensor_count + kv_count */
#define HEADER_BYTES 24
/* The fewest bytes a key/value can take: a 1-byte key (8 + 1), the type (4), a 1-byte value. */
#define MIN_KV_BYTES 14
/* The fewest bytes a tensor info can take: an empty name (8), n_dims (4), type (4), offset (8). */
#define MIN_INFO_BYTES 24

/* ---- the type tables ---- */

typedef struct gg_ggml_type {
    const char *name; /* NULL: no such type */
    int64_t block;
    size_t block_bytes;
} gg_ggml_type;

/* ggml's types: values per block and bytes per block (ggml.c's type traits). */
static const gg_ggml_type ggml_types[] = {
    [TD_GGML_F32] = { "f32", 1, 4 },
    [TD_GGML_F16] = { "f16", 1, 2 },
    [TD_GGML_Q4_0] = { "q4_0", 32, 18 },
    [TD_GGML_Q4_1] = { "q4_1", 32, 20 },
    [TD_GGML_Q5_0] = { "q5_0", 32, 22 },
    [TD_GGML_Q5_1] = { "q5_1", 32, 24 },
    [TD_GGML_Q8_0] = { "q8_0", 32, 34 },
    [TD_GGML_Q8_1] = { "q8_1", 32, 36 },
    [TD_GGML_Q2_K] = { "q2_K", 256, 84 },
    [TD_GGML_Q3_K] = { "q3_K", 256, 110 },
    [TD_GGML_Q4_K] = { "q4_K", 256, 144 },
    [TD_GGML_Q5_K] = { "q5_K", 256, 176 },
    [TD_GGML_Q6_K] = { "q6_K", 256, 210 },
    [TD_GGML_Q8_K] = { "q8_K", 256, 292 },
    [TD_GGML_IQ2_XXS] = { "iq2_xxs", 256, 66 },
    [TD_GGML_IQ2_XS] = { "iq2_xs", 256, 74 },
    [TD_GGML_IQ3_XXS] = { "iq3_xxs", 256, 98 },
    [TD_GGML_IQ1_S] = { "iq1_s", 256, 50 },
    [TD_GGML_IQ4_NL] = { "iq4_nl", 32, 18 },
    [TD_GGML_IQ3_S] = { "iq3_s", 256, 110 },
    [TD_GGML_IQ2_S] = { "iq2_s", 256, 82 },
    [TD_GGML_IQ4_XS] = { "iq4_xs", 256, 136 },
    [TD_GGML_I8] = { "i8", 1, 1 },
    [TD_GGML_I16] = { "i16", 1, 2 },
    [TD_GGML_I32] = { "i32", 1, 4 },
    [TD_GGML_I64] = { "i64", 1, 8 },
    [TD_GGML_F64] = { "f64", 1, 8 },
    [TD_GGML_IQ1_M] = { "iq1_m", 256, 56 },
    [TD_GGML_BF16] = { "bf16", 1, 2 },
    [TD_GGML_TQ1_0] = { "tq1_0", 256, 54 },
    [TD_GGML_TQ2_0] = { "tq2_0", 256, 66 },
    [TD_GGML_MXFP4] = { "mxfp4", 32, 17 },
    [TD_GGML_NVFP4] = { "nvfp4", 64, 36 },
    [TD_GGML_Q1_0] = { "q1_0", 128, 18 },
    [TD_GGML_Q2_0] = { "q2_0", 64, 18 },
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof ggml_types[0])

static const gg_ggml_type *ggml_type_of(uint32_t id)
{
    return id < N_GGML_TYPES && ggml_types[id].name != NULL ? &ggml_types[id] : NULL;
}

const char *td_gguf_ggml_type_name(uint32_t ggml_type)
{
    const gg_ggml_type *t = ggml_type_of(ggml_type);
    return t ? t->name : NULL;
}

td_status td_gguf_ggml_type_block(uint32_t ggml_type, int64_t *block, size_t *block_bytes)
{
    if (block == NULL)
        return td_err_null(OP, "block");
    if (block_bytes == NULL)
        return td_err_null(OP, "block_bytes");
    const gg_ggml_type *t = ggml_type_of(ggml_type);
    if (t == NULL)
        return td_error(TD_E_INVALID, "%s: %u is not a ggml type id", OP, (unsigned)ggml_type);
    *block = t->block;
    *block_bytes = t->block_bytes;
    return TD_OK;
}

/* The value types: their names and the bytes of one value in a file (0: variable). */
static const char *const value_type_names[] = { "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
                                                "bool", "string", "array", "uint64", "int64", "float64" };
static const size_t value_type_bytes[] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
#define N_VALUE_TYPES 13

const char *td_gguf_type_name(td_gguf_type type)
{
    return (unsigned)type < N_VALUE_TYPES ? value_type_names[type] : NULL;
}

/* Bytes of one element of type on the host side (td_gguf_get_array, td_gguf_writer_add_array). */
static size_t host_bytes(td_gguf_type type)
{
    return type == TD_GGUF_BOOL ? sizeof(bool) : value_type_bytes[type];
}

static bool is_numeric(td_gguf_type type)
{
    return (unsigned)type < N_VALUE_TYPES && type != TD_GGUF_STRING && type != TD_GGUF_ARRAY;
}

/* ---- little-endian bytes ---- */

static uint64_t get_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t k = n; k-- > 0;)
        v = (v << 8) | p[k];
    return v;
}

static void put_le(unsigned char *p, uint64_t v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

/* One file value (n bytes, little-endian) into a host value of type (host_bytes(type)). */
static void decode_value(td_gguf_type type, const unsigned char *le, void *host)
{
    const uint64_t v = get_le(le, value_type_bytes[type]);
    switch (type) {
    case TD_GGUF_UINT8: { uint8_t x = (uint8_t)v; memcpy(host, &x, 1); break; }
    case TD_GGUF_INT8: { int8_t x = (int8_t)(uint8_t)v; memcpy(host, &x, 1); break; }
    case TD_GGUF_UINT16: { uint16_t x = (uint16_t)v; memcpy(host, &x, 2); break; }
    case TD_GGUF_INT16: { int16_t x = (int16_t)(uint16_t)v; memcpy(host, &x, 2); break; }
    case TD_GGUF_UINT32: { uint32_t x = (uint32_t)v; memcpy(host, &x, 4); break; }
    case TD_GGUF_INT32: { int32_t x = (int32_t)(uint32_t)v; memcpy(host, &x, 4); break; }
    case TD_GGUF_FLOAT32: { float x = td_f32_from_bits((uint32_t)v); memcpy(host, &x, 4); break; }
    case TD_GGUF_BOOL: { bool x = v != 0; memcpy(host, &x, sizeof x); break; }
    case TD_GGUF_UINT64: memcpy(host, &v, 8); break;
    case TD_GGUF_INT64: { int64_t x = (int64_t)v; memcpy(host, &x, 8); break; }
    case TD_GGUF_FLOAT64: { double x; memcpy(&x, &v, 8); memcpy(host, &x, 8); break; }
    default: break;
    }
}

/* A host value of a numeric type into its file bytes. */
static void encode_value(td_gguf_type type, const void *host, unsigned char *le)
{
    uint64_t v = 0;
    switch (type) {
    case TD_GGUF_UINT8: { uint8_t x; memcpy(&x, host, 1); v = x; break; }
    case TD_GGUF_INT8: { int8_t x; memcpy(&x, host, 1); v = (uint8_t)x; break; }
    case TD_GGUF_UINT16: { uint16_t x; memcpy(&x, host, 2); v = x; break; }
    case TD_GGUF_INT16: { int16_t x; memcpy(&x, host, 2); v = (uint16_t)x; break; }
    case TD_GGUF_UINT32: { uint32_t x; memcpy(&x, host, 4); v = x; break; }
    case TD_GGUF_INT32: { int32_t x; memcpy(&x, host, 4); v = (uint32_t)x; break; }
    case TD_GGUF_FLOAT32: { float x; memcpy(&x, host, 4); v = td_f32_bits(x); break; }
    case TD_GGUF_BOOL: { bool x; memcpy(&x, host, sizeof x); v = x ? 1 : 0; break; }
    case TD_GGUF_UINT64: memcpy(&v, host, 8); break;
    case TD_GGUF_INT64: { int64_t x; memcpy(&x, host, 8); v = (uint64_t)x; break; }
    case TD_GGUF_FLOAT64: { double x; memcpy(&x, host, 8); memcpy(&v, &x, 8); break; }
    default: break;
    }
    put_le(le, v, value_type_bytes[type]);
}

static uint64_t align_up(uint64_t x, uint64_t alignment)
{
    return x + (alignment - x % alignment) % alignment;
}

/* ---- the parsed file ---- */

typedef struct gg_str {
    uint64_t off, len; /* in the arena; NUL-terminated there */
} gg_str;

typedef struct gg_kv {
    gg_str key;
    td_gguf_type type;
    td_gguf_type elem;        /* arrays */
    uint64_t n;               /* arrays: elements */
    const unsigned char *raw; /* numeric values and arrays: the bytes in the file */
    gg_str *strs;             /* strings: 1, string arrays: n */
} gg_kv;

typedef struct gg_tensor {
    gg_str name;
    uint32_t type;
    int ndim;
    uint64_t dims[TD_GGUF_MAX_DIMS];
    int64_t numel;
    uint64_t offset, nbytes;
} gg_tensor;

struct td_gguf {
    unsigned char *buf;
    size_t size;
    bool mapped;
    char *arena;
    size_t arena_len, arena_cap;
    size_t n_kv, n_t;
    gg_kv *kv;
    gg_tensor *t;
    size_t *kv_by_key;  /* indices into kv, sorted by key */
    size_t *t_by_name;  /* indices into t, sorted by name */
    uint32_t alignment;
    uint64_t data_offset;
};

void td_gguf_free(td_gguf *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; g->kv != NULL && i < g->n_kv; i++)
        td_free(g->kv[i].strs);
    td_free(g->kv);
    td_free(g->t);
    td_free(g->kv_by_key);
    td_free(g->t_by_name);
    td_free(g->arena);
#ifdef GG_HAVE_MMAP
    if (g->mapped)
        munmap(g->buf, g->size);
    else
#endif
        td_free(g->buf);
    td_free(g);
}

static const char *str_of(const td_gguf *g, gg_str s)
{
    return g->arena + s.off;
}

/* ---- the reader ---- */

typedef struct gg_cursor {
    const unsigned char *p;
    uint64_t size, pos;
    const char *what; /* "the buffer", or the path quoted */
} gg_cursor;

static uint64_t remaining(const gg_cursor *c)
{
    return c->size - c->pos;
}

/* n bytes at the cursor, or a truncation error naming what was being read. */
static td_status take(gg_cursor *c, uint64_t n, const unsigned char **out, const char *ctx)
{
    if (n > remaining(c))
        return td_error(TD_E_INVALID, "%s: %s: %llu bytes needed at byte %llu, but %s ends at byte %llu (truncated?)",
                        OP, ctx, (unsigned long long)n, (unsigned long long)c->pos, c->what,
                        (unsigned long long)c->size);
    *out = c->p + c->pos;
    c->pos += n;
    return TD_OK;
}

static td_status take_u32(gg_cursor *c, uint32_t *v, const char *ctx)
{
    const unsigned char *p = NULL;
    TD_TRY(take(c, 4, &p, ctx));
    *v = (uint32_t)get_le(p, 4);
    return TD_OK;
}

static td_status take_u64(gg_cursor *c, uint64_t *v, const char *ctx)
{
    const unsigned char *p = NULL;
    TD_TRY(take(c, 8, &p, ctx));
    *v = get_le(p, 8);
    return TD_OK;
}

/* Copies len bytes and a NUL into the arena; *off is where they start. */
static td_status arena_put(td_gguf *g, const unsigned char *s, uint64_t len, uint64_t *off)
{
    /* len <= the file's size, which is in memory: len + 1 fits a size_t */
    const size_t need = (size_t)len + 1;
    if (g->arena_cap - g->arena_len < need) {
        size_t cap = g->arena_cap ? g->arena_cap : 256;
        while (cap - g->arena_len < need) {
            if (cap > SIZE_MAX / 2)
                return td_error(TD_E_NOMEM, "%s: the strings of the file do not fit in memory", OP);
            cap *= 2;
        }
        char *p = td_malloc(cap);
        if (p == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory for the %zu bytes of the file's strings", OP, cap);
        if (g->arena_len)
            memcpy(p, g->arena, g->arena_len);
        td_free(g->arena);
        g->arena = p;
        g->arena_cap = cap;
    }
    if (len)
        memcpy(g->arena + g->arena_len, s, (size_t)len);
    g->arena[g->arena_len + (size_t)len] = '\0';
    *off = g->arena_len;
    g->arena_len += need;
    return TD_OK;
}

/* A string (u64 length, then its bytes) into the arena. max_len bounds it where the format
 * does (keys, names), else UINT64_MAX. */
static td_status take_string(gg_cursor *c, td_gguf *g, gg_str *s, uint64_t max_len, const char *ctx)
{
    uint64_t len = 0;
    TD_TRY(take_u64(c, &len, ctx));
    if (len > max_len)
        return td_error(TD_E_INVALID, "%s: %s is %llu bytes long, past the format's limit of %llu", OP, ctx,
                        (unsigned long long)len, (unsigned long long)max_len);
    if (len > remaining(c))
        return td_error(TD_E_INVALID, "%s: %s is %llu bytes long, but only %llu bytes of %s remain (truncated?)", OP,
                        ctx, (unsigned long long)len, (unsigned long long)remaining(c), c->what);
    const unsigned char *p = NULL;
    TD_TRY(take(c, len, &p, ctx));
    s->len = len;
    return arena_put(g, p, len, &s->off);
}

/* One key/value at the cursor into kv (its key already read). */
static td_status take_value(gg_cursor *c, td_gguf *g, gg_kv *kv)
{
    /* a copy for the messages: reading a string value may move the arena */
    char key[NAME_IN_MSG + 1];
    snprintf(key, sizeof key, "%s", str_of(g, kv->key));
    char ctx[NAME_IN_MSG + 64];
    snprintf(ctx, sizeof ctx, "the value of key '%.*s'", NAME_IN_MSG, key);
    uint32_t type = 0;
    TD_TRY(take_u32(c, &type, ctx));
    if (type >= N_VALUE_TYPES)
        return td_error(TD_E_INVALID, "%s: key '%.*s' has value type %u, which the format does not have (0 to 12)",
                        OP, NAME_IN_MSG, key, (unsigned)type);
    kv->type = (td_gguf_type)type;
    td_gguf_type elem = kv->type;
    uint64_t n = 1;
    if (kv->type == TD_GGUF_ARRAY) {
        uint32_t et = 0;
        TD_TRY(take_u32(c, &et, ctx));
        if (et >= N_VALUE_TYPES)
            return td_error(TD_E_INVALID, "%s: key '%.*s' is an array of value type %u, which the format does not "
                            "have (0 to 12)", OP, NAME_IN_MSG, key, (unsigned)et);
        if (et == TD_GGUF_ARRAY)
            return td_error(TD_E_UNSUPPORTED, "%s: key '%.*s' is an array of arrays, which this reader (as ggml's) "
                            "does not read", OP, NAME_IN_MSG, key);
        TD_TRY(take_u64(c, &n, ctx));
        elem = (td_gguf_type)et;
        kv->elem = elem;
        kv->n = n;
        /* every element takes at least a byte (8 for a string's length): the count is
         * bounded by the bytes that remain before anything is allocated for it */
        const uint64_t each = elem == TD_GGUF_STRING ? 8 : value_type_bytes[elem];
        if (n > remaining(c) / each)
            return td_error(TD_E_INVALID, "%s: key '%.*s' claims %llu elements of %s, more than the %llu bytes left "
                            "in %s can hold", OP, NAME_IN_MSG, key, (unsigned long long)n, value_type_names[elem],
                            (unsigned long long)remaining(c), c->what);
    }
    if (elem == TD_GGUF_STRING) {
        kv->strs = td_malloc((n ? (size_t)n : 1) * sizeof *kv->strs);
        if (kv->strs == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory for the %llu strings of key '%.*s'", OP,
                            (unsigned long long)n, NAME_IN_MSG, key);
        for (uint64_t i = 0; i < n; i++)
            TD_TRY(take_string(c, g, &kv->strs[i], UINT64_MAX, ctx));
        return TD_OK;
    }
    const size_t each = value_type_bytes[elem];
    TD_TRY(take(c, n * each, &kv->raw, ctx)); /* n * each <= remaining: checked above */
    if (elem == TD_GGUF_BOOL)
        for (uint64_t i = 0; i < n; i++)
            if (kv->raw[i] > 1)
                return td_error(TD_E_INVALID, "%s: key '%.*s': bool %llu is the byte %u, not 0 or 1", OP, NAME_IN_MSG,
                                key, (unsigned long long)i, (unsigned)kv->raw[i]);
    return TD_OK;
}

static td_status take_kvs(gg_cursor *c, td_gguf *g)
{
    for (uint64_t i = 0; i < g->n_kv; i++) {
        gg_kv *kv = &g->kv[i];
        char ctx[64];
        snprintf(ctx, sizeof ctx, "the key of key/value %llu", (unsigned long long)i);
        TD_TRY(take_string(c, g, &kv->key, TD_GGUF_MAX_KEY, ctx));
        const unsigned char *k = (const unsigned char *)str_of(g, kv->key);
        if (kv->key.len == 0)
            return td_error(TD_E_INVALID, "%s: key/value %llu has an empty key", OP, (unsigned long long)i);
        for (uint64_t j = 0; j < kv->key.len; j++)
            if (k[j] == 0 || k[j] > 0x7f)
                return td_error(TD_E_INVALID, "%s: the key of key/value %llu holds the byte 0x%02x at %llu; keys are "
                                "ASCII without NUL", OP, (unsigned long long)i, (unsigned)k[j], (unsigned long long)j);
        TD_TRY(take_value(c, g, kv));
    }
    return TD_OK;
}

/* qsort has no context argument: the comparisons read the file being indexed here. */
static _Thread_local const td_gguf *cmp_file;

/* An index 0..n-1 sorted by cmp (which reads the file through cmp_file). */
static td_status sort_by(size_t n, size_t **out, int (*cmp)(const void *, const void *))
{
    *out = td_malloc((n ? n : 1) * sizeof **out);
    if (*out == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for an index of %zu entries", OP, n);
    for (size_t i = 0; i < n; i++)
        (*out)[i] = i;
    qsort(*out, n, sizeof **out, cmp);
    return TD_OK;
}

static int cmp_kv_key(const void *a, const void *b)
{
    const td_gguf *g = cmp_file;
    return strcmp(str_of(g, g->kv[*(const size_t *)a].key), str_of(g, g->kv[*(const size_t *)b].key));
}

static int cmp_t_name(const void *a, const void *b)
{
    const td_gguf *g = cmp_file;
    return strcmp(str_of(g, g->t[*(const size_t *)a].name), str_of(g, g->t[*(const size_t *)b].name));
}

static int cmp_t_offset(const void *a, const void *b)
{
    const td_gguf *g = cmp_file;
    const gg_tensor *x = &g->t[*(const size_t *)a], *y = &g->t[*(const size_t *)b];
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    if (x->nbytes != y->nbytes)
        return x->nbytes < y->nbytes ? -1 : 1;
    return 0;
}

/* Binary search of a sorted index by a name. */
static bool search(const td_gguf *g, const size_t *sorted, size_t n, bool keys, const char *name, size_t *index)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const char *s = keys ? str_of(g, g->kv[sorted[mid]].key) : str_of(g, g->t[sorted[mid]].name);
        const int c = strcmp(name, s);
        if (c == 0) {
            *index = sorted[mid];
            return true;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

/* Indexes keys (no key twice) and finds the alignment. */
static td_status check_kvs(td_gguf *g)
{
    cmp_file = g;
    TD_TRY(sort_by(g->n_kv, &g->kv_by_key, cmp_kv_key));
    for (size_t i = 1; i < g->n_kv; i++) {
        const char *a = str_of(g, g->kv[g->kv_by_key[i - 1]].key), *b = str_of(g, g->kv[g->kv_by_key[i]].key);
        if (strcmp(a, b) == 0)
            return td_error(TD_E_INVALID, "%s: the key '%.*s' appears twice", OP, NAME_IN_MSG, a);
    }
    g->alignment = TD_GGUF_DEFAULT_ALIGNMENT;
    size_t ix = 0;
    if (search(g, g->kv_by_key, g->n_kv, true, "general.alignment", &ix)) {
        const gg_kv *kv = &g->kv[ix];
        if (kv->type != TD_GGUF_UINT32)
            return td_error(TD_E_INVALID, "%s: 'general.alignment' is a %s, not a uint32", OP,
                            value_type_names[kv->type]);
        const uint32_t a = (uint32_t)get_le(kv->raw, 4);
        if (a == 0 || (a & (a - 1)) != 0 || a % 8 != 0)
            return td_error(TD_E_INVALID, "%s: 'general.alignment' is %u, not a power of two and a multiple of 8", OP,
                            (unsigned)a);
        g->alignment = a;
    }
    return TD_OK;
}

static td_status take_infos(gg_cursor *c, td_gguf *g)
{
    for (uint64_t i = 0; i < g->n_t; i++) {
        gg_tensor *t = &g->t[i];
        char ctx[NAME_IN_MSG + 64];
        snprintf(ctx, sizeof ctx, "the name of tensor %llu", (unsigned long long)i);
        TD_TRY(take_string(c, g, &t->name, TD_GGUF_MAX_NAME, ctx));
        const char *name = str_of(g, t->name);
        if (memchr(name, '\0', (size_t)t->name.len) != NULL)
            return td_error(TD_E_INVALID, "%s: the name of tensor %llu holds a NUL byte", OP, (unsigned long long)i);
        snprintf(ctx, sizeof ctx, "tensor '%.*s'", NAME_IN_MSG, name);
        uint32_t ndim = 0, type = 0;
        TD_TRY(take_u32(c, &ndim, ctx));
        if (ndim > TD_GGUF_MAX_DIMS)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s' has %u dims; the format allows at most %d", OP,
                            NAME_IN_MSG, name, (unsigned)ndim, TD_GGUF_MAX_DIMS);
        t->ndim = (int)ndim;
        /* as tdispatch's shapes: the product of the nonzero dims is at most 2^40, so that an
         * empty tensor cannot hide absurd dims behind a 0 */
        int64_t nonzero = 1;
        bool empty = false;
        for (int k = 0; k < t->ndim; k++) {
            TD_TRY(take_u64(c, &t->dims[k], ctx));
            if (t->dims[k] > (uint64_t)TD_MAX_NUMEL)
                return td_error(TD_E_INVALID, "%s: tensor '%.*s': dim %d is %llu, past the 2^40 elements a tensor may "
                                "have", OP, NAME_IN_MSG, name, k, (unsigned long long)t->dims[k]);
            if (t->dims[k] == 0)
                empty = true;
            else if (!td_mul_ok(nonzero, (int64_t)t->dims[k], &nonzero) || nonzero > TD_MAX_NUMEL)
                return td_error(TD_E_INVALID, "%s: tensor '%.*s' has more than 2^40 elements", OP, NAME_IN_MSG, name);
        }
        t->numel = empty ? 0 : nonzero;
        TD_TRY(take_u32(c, &type, ctx));
        const gg_ggml_type *gt = ggml_type_of(type);
        if (gt == NULL)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s' has ggml type %u, which is not a ggml type", OP,
                            NAME_IN_MSG, name, (unsigned)type);
        t->type = type;
        const uint64_t inner = t->ndim > 0 ? t->dims[0] : 1;
        if (inner % (uint64_t)gt->block != 0)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': %s packs %lld values per block, but the innermost dim is "
                            "%llu", OP, NAME_IN_MSG, name, gt->name, (long long)gt->block, (unsigned long long)inner);
        /* numel <= 2^40 and block_bytes / block <= 8: no overflow */
        t->nbytes = (uint64_t)(t->numel / gt->block) * gt->block_bytes;
        TD_TRY(take_u64(c, &t->offset, ctx));
        if (t->offset % g->alignment != 0)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': offset %llu is not a multiple of the alignment %u", OP,
                            NAME_IN_MSG, name, (unsigned long long)t->offset, (unsigned)g->alignment);
    }
    return TD_OK;
}

/* Names unique, every tensor inside the data section, no two overlapping. */
static td_status check_tensors(td_gguf *g, const gg_cursor *c)
{
    cmp_file = g;
    TD_TRY(sort_by(g->n_t, &g->t_by_name, cmp_t_name));
    for (size_t i = 1; i < g->n_t; i++) {
        const char *a = str_of(g, g->t[g->t_by_name[i - 1]].name), *b = str_of(g, g->t[g->t_by_name[i]].name);
        if (strcmp(a, b) == 0)
            return td_error(TD_E_INVALID, "%s: two tensors are named '%.*s'", OP, NAME_IN_MSG, a);
    }
    if (g->n_t == 0)
        return TD_OK;
    if (g->data_offset > c->size)
        return td_error(TD_E_INVALID, "%s: the data section would start at byte %llu, past the end of %s (%llu bytes; "
                        "truncated?)", OP, (unsigned long long)g->data_offset, c->what, (unsigned long long)c->size);
    const uint64_t data_len = c->size - g->data_offset;
    for (size_t i = 0; i < g->n_t; i++) {
        const gg_tensor *t = &g->t[i];
        if (t->offset > data_len || t->nbytes > data_len - t->offset)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': its %llu bytes at offset %llu run past the end of the "
                            "%llu-byte data section (a truncated file, or a lying offset)", OP, NAME_IN_MSG,
                            str_of(g, t->name), (unsigned long long)t->nbytes, (unsigned long long)t->offset,
                            (unsigned long long)data_len);
    }
    size_t *by_offset = NULL;
    TD_TRY(sort_by(g->n_t, &by_offset, cmp_t_offset));
    td_status rc = TD_OK;
    uint64_t end = 0;
    const gg_tensor *prev = NULL;
    for (size_t i = 0; i < g->n_t && rc == TD_OK; i++) {
        const gg_tensor *t = &g->t[by_offset[i]];
        if (t->nbytes == 0)
            continue;
        if (prev != NULL && t->offset < end)
            rc = td_error(TD_E_INVALID, "%s: tensors '%.*s' [%llu, %llu) and '%.*s' [%llu, %llu) overlap", OP,
                          NAME_IN_MSG, str_of(g, prev->name), (unsigned long long)prev->offset,
                          (unsigned long long)end, NAME_IN_MSG, str_of(g, t->name), (unsigned long long)t->offset,
                          (unsigned long long)(t->offset + t->nbytes));
        prev = t;
        end = t->offset + t->nbytes;
    }
    td_free(by_offset);
    return rc;
}

/* Parses g->buf (g->size bytes); what names it in messages. */
static td_status parse(td_gguf *g, const char *what)
{
    gg_cursor c = { g->buf, g->size, 0, what };
    if (g->size < HEADER_BYTES)
        return td_error(TD_E_INVALID, "%s: %s is %zu bytes, shorter than the %d-byte GGUF header", OP, what, g->size,
                        HEADER_BYTES);
    if (memcmp(g->buf, "GGUF", 4) != 0)
        return td_error(TD_E_INVALID, "%s: %s does not start with the magic 'GGUF' (47 47 55 46) but with %02x %02x "
                        "%02x %02x: not a GGUF file", OP, what, g->buf[0], g->buf[1], g->buf[2], g->buf[3]);
    c.pos = 4;
    uint32_t version = 0;
    uint64_t n_t = 0, n_kv = 0;
    TD_TRY(take_u32(&c, &version, "the version"));
    if (version != TD_GGUF_VERSION) {
        if (version == 1 || version == 2)
            return td_error(TD_E_UNSUPPORTED, "%s: %s is GGUF version %u; this reader reads version 3", OP, what,
                            (unsigned)version);
        if (version == 0x03000000u)
            return td_error(TD_E_UNSUPPORTED, "%s: %s has version 0x03000000: a big-endian GGUF file, which this "
                            "reader does not read", OP, what);
        return td_error(TD_E_INVALID, "%s: %s has GGUF version %u, not 3", OP, what, (unsigned)version);
    }
    TD_TRY(take_u64(&c, &n_t, "the tensor count"));
    TD_TRY(take_u64(&c, &n_kv, "the key/value count"));
    /* the counts are bounded by the bytes left before anything is sized by them */
    if (n_kv > remaining(&c) / MIN_KV_BYTES)
        return td_error(TD_E_INVALID, "%s: %s claims %llu key/values, more than its %llu remaining bytes can hold", OP,
                        what, (unsigned long long)n_kv, (unsigned long long)remaining(&c));
    if (n_t > remaining(&c) / MIN_INFO_BYTES)
        return td_error(TD_E_INVALID, "%s: %s claims %llu tensors, more than its %llu remaining bytes can hold", OP,
                        what, (unsigned long long)n_t, (unsigned long long)remaining(&c));
    g->n_kv = (size_t)n_kv;
    g->n_t = (size_t)n_t;
    g->kv = td_calloc(g->n_kv ? g->n_kv : 1, sizeof *g->kv);
    g->t = td_calloc(g->n_t ? g->n_t : 1, sizeof *g->t);
    if (g->kv == NULL || g->t == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu key/values and %zu tensors", OP, g->n_kv, g->n_t);
    TD_TRY(take_kvs(&c, g));
    TD_TRY(check_kvs(g));
    TD_TRY(take_infos(&c, g));
    g->data_offset = align_up(c.pos, g->alignment);
    return check_tensors(g, &c);
}

/* Parses the bytes g holds; frees g on an error. */
static td_status finish(td_gguf *g, const char *what, td_gguf **out)
{
    const td_status rc = parse(g, what);
    if (rc != TD_OK) {
        td_gguf_free(g);
        return rc;
    }
    *out = g;
    return TD_OK;
}

td_status td_gguf_parse(const void *data, size_t size, td_gguf **out)
{
    if (out == NULL)
        return td_err_null(OP, "out");
    *out = NULL;
    if (data == NULL)
        return td_err_null(OP, "data");
    td_gguf *g = td_calloc(1, sizeof *g);
    if (g == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory", OP);
    /* aligned, so that tensor data at aligned offsets is aligned in memory too */
    g->buf = td_malloc_aligned(TD_ALIGN, size ? size : 1);
    if (g->buf == NULL) {
        td_free(g);
        return td_error(TD_E_NOMEM, "%s: out of memory for a copy of the %zu-byte buffer", OP, size);
    }
    if (size)
        memcpy(g->buf, data, size);
    g->size = size;
    return finish(g, "the buffer", out);
}

td_status td_gguf_open(const char *path, td_gguf **out)
{
    if (out == NULL)
        return td_err_null(OP, "out");
    *out = NULL;
    if (path == NULL)
        return td_err_null(OP, "path");
    char what[NAME_IN_MSG + 8];
    snprintf(what, sizeof what, "'%.*s'", NAME_IN_MSG, path);
    td_gguf *g = td_calloc(1, sizeof *g);
    if (g == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory", OP);
#ifdef GG_HAVE_MMAP
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        td_free(g);
        return td_error(TD_E_INVALID, "%s: cannot open %s: %s", OP, what, strerror(errno));
    }
    struct stat sb;
    td_status rc = TD_OK;
    if (fstat(fd, &sb) != 0)
        rc = td_error(TD_E_INVALID, "%s: cannot find the size of %s: %s", OP, what, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        rc = td_error(TD_E_INVALID, "%s: %s is not a regular file", OP, what);
    else if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX)
        rc = td_error(TD_E_INVALID, "%s: %s is too large to map", OP, what);
    if (rc == TD_OK && sb.st_size > 0) {
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            rc = td_error(TD_E_INVALID, "%s: cannot map %s: %s", OP, what, strerror(errno));
        } else {
            g->buf = p;
            g->size = (size_t)sb.st_size;
            g->mapped = true;
        }
    }
    close(fd);
    if (rc != TD_OK) {
        td_free(g);
        return rc;
    }
    return finish(g, what, out);
#else
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        td_free(g);
        return td_error(TD_E_INVALID, "%s: cannot open %s: %s", OP, what, strerror(errno));
    }
    td_status rc = TD_OK;
    long size = -1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        rc = td_error(TD_E_INVALID, "%s: cannot find the size of %s: %s", OP, what, strerror(errno));
    if (rc == TD_OK) {
        g->buf = td_malloc_aligned(TD_ALIGN, size ? (size_t)size : 1);
        if (g->buf == NULL)
            rc = td_error(TD_E_NOMEM, "%s: out of memory for the %ld bytes of %s", OP, size, what);
    }
    if (rc == TD_OK && fread(g->buf, 1, (size_t)size, f) != (size_t)size)
        rc = td_error(TD_E_INVALID, "%s: cannot read %s", OP, what);
    fclose(f);
    g->size = (size_t)size;
    if (rc != TD_OK) {
        td_gguf_free(g);
        return rc;
    }
    return finish(g, what, out);
#endif
}

/* ---- lookups ---- */

td_status td_gguf_alignment(const td_gguf *g, uint32_t *alignment)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (alignment == NULL)
        return td_err_null(OP, "alignment");
    *alignment = g->alignment;
    return TD_OK;
}

td_status td_gguf_data_offset(const td_gguf *g, uint64_t *offset)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (offset == NULL)
        return td_err_null(OP, "offset");
    *offset = g->data_offset;
    return TD_OK;
}

td_status td_gguf_kv_count(const td_gguf *g, size_t *count)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (count == NULL)
        return td_err_null(OP, "count");
    *count = g->n_kv;
    return TD_OK;
}

td_status td_gguf_kv_at(const td_gguf *g, size_t index, const char **key, td_gguf_type *type)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (key == NULL)
        return td_err_null(OP, "key");
    if (type == NULL)
        return td_err_null(OP, "type");
    if (index >= g->n_kv)
        return td_error(TD_E_RANGE, "%s: key/value index %zu is out of range (the file has %zu)", OP, index, g->n_kv);
    *key = str_of(g, g->kv[index].key);
    *type = g->kv[index].type;
    return TD_OK;
}

td_status td_gguf_find_key(const td_gguf *g, const char *key, size_t *index)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (key == NULL)
        return td_err_null(OP, "key");
    if (index == NULL)
        return td_err_null(OP, "index");
    if (!search(g, g->kv_by_key, g->n_kv, true, key, index))
        return td_error(TD_E_RANGE, "%s: the file has no key '%.*s'", OP, NAME_IN_MSG, key);
    return TD_OK;
}

/* "an" before "int32" and "array", else "a" ("a uint32", "a string"). */
static const char *article(const char *word)
{
    return word[0] == 'a' || word[0] == 'i' ? "an" : "a";
}

/* The key/value of key, checked to have type (and, for arrays, to be one). */
static td_status kv_typed(const td_gguf *g, const char *key, const void *out, td_gguf_type type, const gg_kv **kv)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (key == NULL)
        return td_err_null(OP, "key");
    if (out == NULL)
        return td_err_null(OP, "out");
    size_t ix = 0;
    TD_TRY(td_gguf_find_key(g, key, &ix));
    *kv = &g->kv[ix];
    if ((*kv)->type != type) {
        const char *want = value_type_names[type];
        if ((*kv)->type == TD_GGUF_ARRAY)
            return td_error(TD_E_DTYPE, "%s: key '%.*s' holds an array of %s, not %s %s", OP, NAME_IN_MSG, key,
                            value_type_names[(*kv)->elem], article(want), want);
        const char *has = value_type_names[(*kv)->type];
        return td_error(TD_E_DTYPE, "%s: key '%.*s' holds %s %s, not %s %s", OP, NAME_IN_MSG, key, article(has), has,
                        article(want), want);
    }
    return TD_OK;
}

#define GG_GETTER(fn, ctype, gtype)                                           \
    td_status fn(const td_gguf *g, const char *key, ctype *out)               \
    {                                                                         \
        const gg_kv *kv = NULL;                                               \
        TD_TRY(kv_typed(g, key, out, gtype, &kv));                            \
        decode_value(gtype, kv->raw, out);                                    \
        return TD_OK;                                                         \
    }
GG_GETTER(td_gguf_get_u8, uint8_t, TD_GGUF_UINT8)
GG_GETTER(td_gguf_get_i8, int8_t, TD_GGUF_INT8)
GG_GETTER(td_gguf_get_u16, uint16_t, TD_GGUF_UINT16)
GG_GETTER(td_gguf_get_i16, int16_t, TD_GGUF_INT16)
GG_GETTER(td_gguf_get_u32, uint32_t, TD_GGUF_UINT32)
GG_GETTER(td_gguf_get_i32, int32_t, TD_GGUF_INT32)
GG_GETTER(td_gguf_get_u64, uint64_t, TD_GGUF_UINT64)
GG_GETTER(td_gguf_get_i64, int64_t, TD_GGUF_INT64)
GG_GETTER(td_gguf_get_f32, float, TD_GGUF_FLOAT32)
GG_GETTER(td_gguf_get_f64, double, TD_GGUF_FLOAT64)
GG_GETTER(td_gguf_get_bool, bool, TD_GGUF_BOOL)

td_status td_gguf_get_int(const td_gguf *g, const char *key, int64_t *out)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (key == NULL)
        return td_err_null(OP, "key");
    if (out == NULL)
        return td_err_null(OP, "out");
    size_t ix = 0;
    TD_TRY(td_gguf_find_key(g, key, &ix));
    const gg_kv *kv = &g->kv[ix];
    const td_gguf_type t = kv->type;
    if (t > TD_GGUF_INT32 && t != TD_GGUF_UINT64 && t != TD_GGUF_INT64)
        return td_error(TD_E_DTYPE, "%s: key '%.*s' holds %s %s, not an integer", OP, NAME_IN_MSG, key,
                        article(value_type_names[t]), value_type_names[t]);
    const size_t n = value_type_bytes[t];
    const uint64_t u = get_le(kv->raw, n);
    const bool is_signed = t == TD_GGUF_INT8 || t == TD_GGUF_INT16 || t == TD_GGUF_INT32 || t == TD_GGUF_INT64;
    if (!is_signed) {
        if (u > (uint64_t)INT64_MAX)
            return td_error(TD_E_RANGE, "%s: key '%.*s' holds %llu, past an int64", OP, NAME_IN_MSG, key,
                            (unsigned long long)u);
        *out = (int64_t)u;
    } else if (n == 8) {
        *out = (int64_t)u;
    } else {
        const uint64_t sign = UINT64_C(1) << (8 * n - 1);
        *out = (int64_t)((u ^ sign) - sign); /* sign-extends the n-byte value */
    }
    return TD_OK;
}

td_status td_gguf_get_string(const td_gguf *g, const char *key, const char **s, size_t *len)
{
    const gg_kv *kv = NULL;
    TD_TRY(kv_typed(g, key, s, TD_GGUF_STRING, &kv));
    *s = str_of(g, kv->strs[0]);
    if (len != NULL)
        *len = (size_t)kv->strs[0].len;
    return TD_OK;
}

td_status td_gguf_get_array_info(const td_gguf *g, const char *key, td_gguf_type *elem_type, size_t *count)
{
    if (count == NULL)
        return td_err_null(OP, "count");
    const gg_kv *kv = NULL;
    TD_TRY(kv_typed(g, key, elem_type, TD_GGUF_ARRAY, &kv));
    *elem_type = kv->elem;
    *count = (size_t)kv->n;
    return TD_OK;
}

td_status td_gguf_get_array(const td_gguf *g, const char *key, td_gguf_type elem_type, void *out, size_t n)
{
    const gg_kv *kv = NULL;
    TD_TRY(kv_typed(g, key, out, TD_GGUF_ARRAY, &kv));
    if (kv->elem != elem_type)
        return td_error(TD_E_DTYPE, "%s: key '%.*s' is an array of %s, not of %s", OP, NAME_IN_MSG, key,
                        value_type_names[kv->elem],
                        (unsigned)elem_type < N_VALUE_TYPES ? value_type_names[elem_type] : "(no such type)");
    if (elem_type == TD_GGUF_STRING)
        return td_error(TD_E_DTYPE, "%s: key '%.*s' is an array of strings: read them with td_gguf_get_array_string",
                        OP, NAME_IN_MSG, key);
    if ((uint64_t)n != kv->n)
        return td_error(TD_E_INVALID, "%s: key '%.*s' has %llu elements; n is %zu", OP, NAME_IN_MSG, key,
                        (unsigned long long)kv->n, n);
    const size_t each = value_type_bytes[elem_type], hb = host_bytes(elem_type);
    for (size_t i = 0; i < n; i++)
        decode_value(elem_type, kv->raw + i * each, (unsigned char *)out + i * hb);
    return TD_OK;
}

td_status td_gguf_get_array_string(const td_gguf *g, const char *key, size_t index, const char **s, size_t *len)
{
    const gg_kv *kv = NULL;
    TD_TRY(kv_typed(g, key, s, TD_GGUF_ARRAY, &kv));
    if (kv->elem != TD_GGUF_STRING)
        return td_error(TD_E_DTYPE, "%s: key '%.*s' is an array of %s, not of string", OP, NAME_IN_MSG, key,
                        value_type_names[kv->elem]);
    if ((uint64_t)index >= kv->n)
        return td_error(TD_E_RANGE, "%s: key '%.*s': index %zu is out of range (the array has %llu strings)", OP,
                        NAME_IN_MSG, key, index, (unsigned long long)kv->n);
    *s = str_of(g, kv->strs[index]);
    if (len != NULL)
        *len = (size_t)kv->strs[index].len;
    return TD_OK;
}

td_status td_gguf_tensor_count(const td_gguf *g, size_t *count)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (count == NULL)
        return td_err_null(OP, "count");
    *count = g->n_t;
    return TD_OK;
}

td_status td_gguf_tensor_info_at(const td_gguf *g, size_t index, td_gguf_tensor_info *info)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (info == NULL)
        return td_err_null(OP, "info");
    if (index >= g->n_t)
        return td_error(TD_E_RANGE, "%s: tensor index %zu is out of range (the file has %zu tensors)", OP, index,
                        g->n_t);
    const gg_tensor *t = &g->t[index];
    memset(info, 0, sizeof *info);
    info->name = str_of(g, t->name);
    info->ggml_type = t->type;
    info->ndim = t->ndim;
    for (int k = 0; k < t->ndim; k++) {
        info->dims[k] = t->dims[k];
        info->shape[t->ndim - 1 - k] = (int64_t)t->dims[k];
    }
    info->numel = t->numel;
    info->offset = t->offset;
    info->nbytes = t->nbytes;
    info->data = g->buf + g->data_offset + t->offset; /* checked inside the buffer by the parse */
    return TD_OK;
}

td_status td_gguf_find_tensor(const td_gguf *g, const char *name, size_t *index)
{
    if (g == NULL)
        return td_err_null(OP, "g");
    if (name == NULL)
        return td_err_null(OP, "name");
    if (index == NULL)
        return td_err_null(OP, "index");
    if (!search(g, g->t_by_name, g->n_t, false, name, index))
        return td_error(TD_E_RANGE, "%s: the file has no tensor named '%.*s'", OP, NAME_IN_MSG, name);
    return TD_OK;
}

/* What both tensor loads check first: the arguments, then the tensor's info by name. */
static td_status load_begin(const td_gguf *g, const char *name, const td_device *device, td_tensor **out,
                            td_gguf_tensor_info *info)
{
    if (out != NULL)
        *out = NULL;
    if (g == NULL)
        return td_err_null(OP, "g");
    if (name == NULL)
        return td_err_null(OP, "name");
    if (device == NULL)
        return td_err_null(OP, "device");
    if (out == NULL)
        return td_err_null(OP, "out");
    size_t ix = 0;
    TD_TRY(td_gguf_find_tensor(g, name, &ix));
    return td_gguf_tensor_info_at(g, ix, info);
}

td_status td_gguf_load_tensor(const td_gguf *g, const char *name, td_device *device, td_tensor **out)
{
    td_gguf_tensor_info info;
    TD_TRY(load_begin(g, name, device, out, &info));
    const uint32_t type = info.ggml_type;
    if (type != TD_GGML_F32 && type != TD_GGML_F16 && type != TD_GGML_BF16 && type != TD_GGML_Q8_0 &&
        type != TD_GGML_Q4_0)
        return td_error(TD_E_UNSUPPORTED, "%s: tensor '%.*s' is %s; tensors load as f32 from f32, f16, bf16, q8_0 "
                        "and q4_0 only (read other types as raw bytes with td_gguf_tensor_info_at)", OP, NAME_IN_MSG,
                        name, ggml_types[type].name);
    /* numel * 4 <= 2 * nbytes (f16, bf16) or < 8 * nbytes (q8_0, q4_0): a bounded multiple of
     * bytes that lie inside the file */
    float *host = td_malloc(info.numel ? (size_t)info.numel * sizeof(float) : 1);
    if (host == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for the %lld values of tensor '%.*s'", OP,
                        (long long)info.numel, NAME_IN_MSG, name);
    const unsigned char *p = info.data;
    if (type == TD_GGML_Q8_0 || type == TD_GGML_Q4_0) {
        /* blocks by value (the file's data need not be 2-byte aligned for the scales) */
        const int64_t nb = info.numel / TD_QK;
        const size_t bb = type == TD_GGML_Q8_0 ? sizeof(td_block_q8_0) : sizeof(td_block_q4_0);
        for (int64_t b = 0; b < nb; b++) {
            if (type == TD_GGML_Q8_0) {
                td_block_q8_0 blk;
                memcpy(&blk, p + (size_t)b * bb, bb);
                blk.d = (uint16_t)get_le(p + (size_t)b * bb, 2);
                td_dequantize_q8_0_unchecked(&blk, host + b * TD_QK, 1);
            } else {
                td_block_q4_0 blk;
                memcpy(&blk, p + (size_t)b * bb, bb);
                blk.d = (uint16_t)get_le(p + (size_t)b * bb, 2);
                td_dequantize_q4_0_unchecked(&blk, host + b * TD_QK, 1);
            }
        }
    }
    for (int64_t i = 0; i < info.numel && type != TD_GGML_Q8_0 && type != TD_GGML_Q4_0; i++) {
        if (type == TD_GGML_F32)
            host[i] = td_f32_from_bits((uint32_t)get_le(p + 4 * i, 4));
        else if (type == TD_GGML_F16)
            host[i] = td_f16_to_f32((uint16_t)get_le(p + 2 * i, 2));
        else
            host[i] = td_bf16_to_f32((uint16_t)get_le(p + 2 * i, 2));
    }
    td_status rc = td_float_from_data(device, host, info.shape, info.ndim, out);
    td_free(host);
    if (rc != TD_OK) {
        char inner[512];
        snprintf(inner, sizeof inner, "%s", td_last_error());
        rc = td_error(rc, "%s: tensor '%.*s': %s", OP, NAME_IN_MSG, name, inner);
    }
    return rc;
}

/* The td_dtype whose GGML_TYPE id is type (specs/dtypes.lua's ggml column), or -1. */
static int dtype_of_ggml(uint32_t type)
{
    for (int d = 0; d < TD_DTYPE_COUNT; d++)
        if (td_dtype_valid((td_dtype)d) && td_dtype_rows[d].ggml >= 0 && (uint32_t)td_dtype_rows[d].ggml == type)
            return d;
    return -1;
}

td_status td_gguf_load_tensor_dtype(const td_gguf *g, const char *name, td_device *device, td_tensor **out)
{
    td_gguf_tensor_info info;
    TD_TRY(load_begin(g, name, device, out, &info));
    const int d = dtype_of_ggml(info.ggml_type);
    if (d < 0)
        return td_error(TD_E_UNSUPPORTED, "%s: tensor '%.*s' is %s, which no td_dtype stores (read it as raw bytes "
                        "with td_gguf_tensor_info_at)", OP, NAME_IN_MSG, name, ggml_types[info.ggml_type].name);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return td_error(TD_E_UNSUPPORTED, "%s: tensor '%.*s': raw loading needs a little-endian host", OP, NAME_IN_MSG,
                    name);
#else
    /* a copy: the tensor's storage is the backend's, and the file's bytes need not be aligned */
    void *host = td_malloc(info.nbytes ? (size_t)info.nbytes : 1);
    if (host == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for the %llu bytes of tensor '%.*s'", OP,
                        (unsigned long long)info.nbytes, NAME_IN_MSG, name);
    if (info.nbytes > 0)
        memcpy(host, info.data, (size_t)info.nbytes);
    td_status rc;
    if (td_dtype_rows[d].cls == TD_CLASS_FLOAT)
        rc = td_float_from_data_dtype(device, (td_dtype)d, host, info.shape, info.ndim, out);
    else
        rc = td_int_from_data_dtype(device, (td_dtype)d, host, info.shape, info.ndim, out);
    td_free(host);
    if (rc != TD_OK) {
        char inner[512];
        snprintf(inner, sizeof inner, "%s", td_last_error());
        rc = td_error(rc, "%s: tensor '%.*s': %s", OP, NAME_IN_MSG, name, inner);
    }
    return rc;
#endif
}

/* ---- the writer ---- */

typedef struct gw_kv {
    char *key;            /* NUL-terminated copy */
    unsigned char *bytes; /* the whole serialized key/value */
    size_t nbytes;
} gw_kv;

typedef struct gw_tensor {
    char *name;
    uint32_t type;
    int ndim;
    uint64_t dims[TD_GGUF_MAX_DIMS]; /* file order */
    unsigned char *data;
    size_t nbytes;
} gw_tensor;

struct td_gguf_writer {
    gw_kv *kv;
    size_t n_kv, cap_kv;
    gw_tensor *t;
    size_t n_t, cap_t;
    uint32_t alignment;
};

td_status td_gguf_writer_new(td_gguf_writer **out)
{
    if (out == NULL)
        return td_err_null(OP, "out");
    *out = td_calloc(1, sizeof **out);
    if (*out == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for a writer", OP);
    (*out)->alignment = TD_GGUF_DEFAULT_ALIGNMENT;
    return TD_OK;
}

void td_gguf_writer_free(td_gguf_writer *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; i < w->n_kv; i++) {
        td_free(w->kv[i].key);
        td_free(w->kv[i].bytes);
    }
    for (size_t i = 0; i < w->n_t; i++) {
        td_free(w->t[i].name);
        td_free(w->t[i].data);
    }
    td_free(w->kv);
    td_free(w->t);
    td_free(w);
}

/* Room for one more entry in an array of *cap entries of size each. */
static td_status grow(void **arr, size_t n, size_t *cap, size_t each)
{
    if (n < *cap)
        return TD_OK;
    const size_t ncap = *cap ? 2 * *cap : 8;
    if (ncap > SIZE_MAX / each)
        return td_error(TD_E_NOMEM, "%s: too many entries", OP);
    void *p = td_malloc(ncap * each);
    if (p == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu entries", OP, ncap);
    if (n)
        memcpy(p, *arr, n * each);
    td_free(*arr);
    *arr = p;
    *cap = ncap;
    return TD_OK;
}

static char *dup_cstr(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *p = td_malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

static td_status check_key(const td_gguf_writer *w, const char *key)
{
    if (w == NULL)
        return td_err_null(OP, "w");
    if (key == NULL)
        return td_err_null(OP, "key");
    const size_t len = strlen(key);
    if (len == 0)
        return td_error(TD_E_INVALID, "%s: a key is empty", OP);
    if (len > TD_GGUF_MAX_KEY)
        return td_error(TD_E_INVALID, "%s: a key is %zu bytes long, past the format's limit of %d", OP, len,
                        TD_GGUF_MAX_KEY);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)key[i] > 0x7f)
            return td_error(TD_E_INVALID, "%s: key '%.*s' is not ASCII (byte %zu is 0x%02x)", OP, NAME_IN_MSG, key, i,
                            (unsigned)(unsigned char)key[i]);
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].key, key) == 0)
            return td_error(TD_E_INVALID, "%s: the key '%.*s' is added twice", OP, NAME_IN_MSG, key);
    return TD_OK;
}

/* Serializes key, type (and array header) and the value bytes made by fill into a new
 * entry. value_bytes: the value's size after the type field. */
typedef void (*gw_fill_fn)(unsigned char *dst, const void *ctx);

static td_status add_kv(td_gguf_writer *w, const char *key, uint32_t type, uint64_t value_bytes, gw_fill_fn fill,
                        const void *ctx)
{
    TD_TRY(check_key(w, key));
    const size_t klen = strlen(key);
    if (value_bytes > SIZE_MAX - 12 - klen)
        return td_error(TD_E_NOMEM, "%s: key '%.*s': the value is too large", OP, NAME_IN_MSG, key);
    const size_t total = 8 + klen + 4 + (size_t)value_bytes;
    void *kvs = w->kv;
    TD_TRY(grow(&kvs, w->n_kv, &w->cap_kv, sizeof *w->kv));
    w->kv = kvs;
    gw_kv e = { dup_cstr(key), td_malloc(total), total };
    if (e.key == NULL || e.bytes == NULL) {
        td_free(e.key);
        td_free(e.bytes);
        return td_error(TD_E_NOMEM, "%s: out of memory for key '%.*s' (%zu bytes)", OP, NAME_IN_MSG, key, total);
    }
    put_le(e.bytes, klen, 8);
    memcpy(e.bytes + 8, key, klen);
    put_le(e.bytes + 8 + klen, type, 4);
    fill(e.bytes + 12 + klen, ctx);
    w->kv[w->n_kv++] = e;
    return TD_OK;
}

typedef struct gw_scalar {
    td_gguf_type type;
    const void *host;
} gw_scalar;

static void fill_scalar(unsigned char *dst, const void *ctx)
{
    const gw_scalar *s = ctx;
    encode_value(s->type, s->host, dst);
}

static td_status not_alignment(const char *key, const char *what);

static td_status add_scalar(td_gguf_writer *w, const char *key, td_gguf_type type, const void *host)
{
    if (type != TD_GGUF_UINT32)
        TD_TRY(not_alignment(key, value_type_names[type]));
    const gw_scalar s = { type, host };
    return add_kv(w, key, type, value_type_bytes[type], fill_scalar, &s);
}

td_status td_gguf_writer_add_u8(td_gguf_writer *w, const char *key, uint8_t v)
{
    return add_scalar(w, key, TD_GGUF_UINT8, &v);
}
td_status td_gguf_writer_add_i8(td_gguf_writer *w, const char *key, int8_t v)
{
    return add_scalar(w, key, TD_GGUF_INT8, &v);
}
td_status td_gguf_writer_add_u16(td_gguf_writer *w, const char *key, uint16_t v)
{
    return add_scalar(w, key, TD_GGUF_UINT16, &v);
}
td_status td_gguf_writer_add_i16(td_gguf_writer *w, const char *key, int16_t v)
{
    return add_scalar(w, key, TD_GGUF_INT16, &v);
}
td_status td_gguf_writer_add_u32(td_gguf_writer *w, const char *key, uint32_t v)
{
    if (w != NULL && key != NULL && strcmp(key, "general.alignment") == 0) {
        if (v == 0 || (v & (v - 1)) != 0 || v % 8 != 0)
            return td_error(TD_E_INVALID, "%s: 'general.alignment' %u is not a power of two and a multiple of 8", OP,
                            (unsigned)v);
        TD_TRY(add_scalar(w, key, TD_GGUF_UINT32, &v));
        w->alignment = v;
        return TD_OK;
    }
    return add_scalar(w, key, TD_GGUF_UINT32, &v);
}
td_status td_gguf_writer_add_i32(td_gguf_writer *w, const char *key, int32_t v)
{
    return add_scalar(w, key, TD_GGUF_INT32, &v);
}
td_status td_gguf_writer_add_u64(td_gguf_writer *w, const char *key, uint64_t v)
{
    return add_scalar(w, key, TD_GGUF_UINT64, &v);
}
td_status td_gguf_writer_add_i64(td_gguf_writer *w, const char *key, int64_t v)
{
    return add_scalar(w, key, TD_GGUF_INT64, &v);
}
td_status td_gguf_writer_add_f32(td_gguf_writer *w, const char *key, float v)
{
    return add_scalar(w, key, TD_GGUF_FLOAT32, &v);
}
td_status td_gguf_writer_add_f64(td_gguf_writer *w, const char *key, double v)
{
    return add_scalar(w, key, TD_GGUF_FLOAT64, &v);
}
td_status td_gguf_writer_add_bool(td_gguf_writer *w, const char *key, bool v)
{
    return add_scalar(w, key, TD_GGUF_BOOL, &v);
}

/* "general.alignment" only as a u32 (td_gguf_writer_add_u32 checks its value). */
static td_status not_alignment(const char *key, const char *what)
{
    if (key != NULL && strcmp(key, "general.alignment") == 0)
        return td_error(TD_E_INVALID, "%s: 'general.alignment' must be a uint32, not %s %s", OP, article(what),
                        what);
    return TD_OK;
}

typedef struct gw_strings {
    const char *const *strs;
    const size_t *lens;
    size_t n;
    bool array;
} gw_strings;

static size_t str_len(const gw_strings *s, size_t i)
{
    return s->lens ? s->lens[i] : strlen(s->strs[i]);
}

static void fill_strings(unsigned char *dst, const void *ctx)
{
    const gw_strings *s = ctx;
    if (s->array) {
        put_le(dst, TD_GGUF_STRING, 4);
        put_le(dst + 4, s->n, 8);
        dst += 12;
    }
    for (size_t i = 0; i < s->n; i++) {
        const size_t len = str_len(s, i);
        put_le(dst, len, 8);
        if (len)
            memcpy(dst + 8, s->strs[i], len);
        dst += 8 + len;
    }
}

static td_status add_strings(td_gguf_writer *w, const char *key, const gw_strings *s)
{
    uint64_t bytes = s->array ? 12 : 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->strs[i] == NULL && (s->lens == NULL || s->lens[i] > 0))
            return td_error(TD_E_NULL, "%s: key '%.*s': string %zu is NULL", OP, NAME_IN_MSG, key, i);
        const uint64_t len = str_len(s, i);
        if (len > UINT64_MAX - 8 - bytes || 8 + len + bytes > (uint64_t)SIZE_MAX / 2)
            return td_error(TD_E_INVALID, "%s: key '%.*s': the strings are too large", OP, NAME_IN_MSG, key);
        bytes += 8 + len;
    }
    return add_kv(w, key, s->array ? TD_GGUF_ARRAY : TD_GGUF_STRING, bytes, fill_strings, s);
}

td_status td_gguf_writer_add_string(td_gguf_writer *w, const char *key, const char *s, size_t len)
{
    TD_TRY(check_key(w, key));
    TD_TRY(not_alignment(key, "string"));
    if (s == NULL && len > 0)
        return td_err_null(OP, "s");
    const char *one[1] = { s };
    const gw_strings ss = { one, &len, 1, false };
    return add_strings(w, key, &ss);
}

td_status td_gguf_writer_add_string_array(td_gguf_writer *w, const char *key, const char *const *strs,
                                          const size_t *lens, size_t n)
{
    TD_TRY(check_key(w, key));
    TD_TRY(not_alignment(key, "array"));
    if (strs == NULL && n > 0)
        return td_err_null(OP, "strs");
    const gw_strings ss = { strs, lens, n, true };
    return add_strings(w, key, &ss);
}

typedef struct gw_array {
    td_gguf_type elem;
    const unsigned char *host;
    size_t n;
} gw_array;

static void fill_array(unsigned char *dst, const void *ctx)
{
    const gw_array *a = ctx;
    put_le(dst, a->elem, 4);
    put_le(dst + 4, a->n, 8);
    const size_t each = value_type_bytes[a->elem], hb = host_bytes(a->elem);
    for (size_t i = 0; i < a->n; i++)
        encode_value(a->elem, a->host + i * hb, dst + 12 + i * each);
}

td_status td_gguf_writer_add_array(td_gguf_writer *w, const char *key, td_gguf_type elem_type, const void *data,
                                   size_t n)
{
    TD_TRY(check_key(w, key));
    TD_TRY(not_alignment(key, "array"));
    if (elem_type == TD_GGUF_STRING)
        return td_error(TD_E_INVALID, "%s: key '%.*s': add string arrays with td_gguf_writer_add_string_array", OP,
                        NAME_IN_MSG, key);
    if (!is_numeric(elem_type))
        return td_error(TD_E_INVALID, "%s: key '%.*s': %d is not a numeric or bool value type (arrays of arrays are "
                        "not written)", OP, NAME_IN_MSG, key, (int)elem_type);
    if (data == NULL && n > 0)
        return td_err_null(OP, "data");
    const size_t each = value_type_bytes[elem_type];
    if (n > (SIZE_MAX / 2 - 12) / each)
        return td_error(TD_E_INVALID, "%s: key '%.*s': %zu elements are too many", OP, NAME_IN_MSG, key, n);
    const gw_array a = { elem_type, data, n };
    return add_kv(w, key, TD_GGUF_ARRAY, 12 + (uint64_t)n * each, fill_array, &a);
}

/* Checks a tensor's name, type and shape; *bytes is its size. */
static td_status check_tensor(const td_gguf_writer *w, const char *name, uint32_t type, const int64_t *shape, int ndim,
                              uint64_t *bytes)
{
    if (w == NULL)
        return td_err_null(OP, "w");
    if (name == NULL)
        return td_err_null(OP, "name");
    if (ndim > 0 && shape == NULL)
        return td_err_null(OP, "shape");
    const size_t len = strlen(name);
    if (len >= TD_GGUF_MAX_NAME)
        return td_error(TD_E_INVALID, "%s: tensor name '%.*s' is %zu bytes; ggml reads names of at most %d", OP,
                        NAME_IN_MSG, name, len, TD_GGUF_MAX_NAME - 1);
    for (size_t i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return td_error(TD_E_INVALID, "%s: two tensors are named '%s'", OP, name);
    const gg_ggml_type *gt = ggml_type_of(type);
    if (gt == NULL)
        return td_error(TD_E_INVALID, "%s: tensor '%s': %u is not a ggml type id", OP, name, (unsigned)type);
    if (ndim < 0 || ndim > TD_GGUF_MAX_DIMS)
        return td_error(TD_E_INVALID, "%s: tensor '%s' has %d dims; the format allows 0 to %d", OP, name, ndim,
                        TD_GGUF_MAX_DIMS);
    int64_t nonzero = 1;
    bool empty = false;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0)
            return td_error(TD_E_INVALID, "%s: tensor '%s': dim %d is %lld", OP, name, k, (long long)shape[k]);
        if (shape[k] == 0)
            empty = true;
        else if (!td_mul_ok(nonzero, shape[k], &nonzero) || nonzero > TD_MAX_NUMEL)
            return td_error(TD_E_INVALID, "%s: tensor '%s' has more than 2^40 elements", OP, name);
    }
    const int64_t numel = empty ? 0 : nonzero;
    const int64_t inner = ndim > 0 ? shape[ndim - 1] : 1;
    if (inner % gt->block != 0)
        return td_error(TD_E_INVALID, "%s: tensor '%s': %s packs %lld values per block, but the last dim is %lld", OP,
                        name, gt->name, (long long)gt->block, (long long)inner);
    *bytes = (uint64_t)(numel / gt->block) * gt->block_bytes;
    return TD_OK;
}

/* Adds a checked tensor, taking data (td_malloc'd, nbytes) on success and on failure. */
static td_status add_tensor_owned(td_gguf_writer *w, const char *name, uint32_t type, const int64_t *shape, int ndim,
                                  unsigned char *data, size_t nbytes)
{
    void *ts = w->t;
    td_status rc = grow(&ts, w->n_t, &w->cap_t, sizeof *w->t);
    w->t = ts;
    gw_tensor e = { NULL, type, ndim, { 0 }, data, nbytes };
    if (rc == TD_OK) {
        e.name = dup_cstr(name);
        if (e.name == NULL)
            rc = td_error(TD_E_NOMEM, "%s: out of memory for a tensor name", OP);
    }
    if (rc != TD_OK) {
        td_free(data);
        return rc;
    }
    for (int k = 0; k < ndim; k++)
        e.dims[k] = (uint64_t)shape[ndim - 1 - k];
    w->t[w->n_t++] = e;
    return TD_OK;
}

td_status td_gguf_writer_add_tensor(td_gguf_writer *w, const char *name, uint32_t ggml_type, const int64_t *shape,
                                    int ndim, const void *data, size_t nbytes)
{
    uint64_t want = 0;
    TD_TRY(check_tensor(w, name, ggml_type, shape, ndim, &want));
    if (want != (uint64_t)nbytes)
        return td_error(TD_E_INVALID, "%s: tensor '%s': %s of %d dims takes %llu bytes; nbytes is %zu", OP, name,
                        ggml_types[ggml_type].name, ndim, (unsigned long long)want, nbytes);
    if (data == NULL && nbytes > 0)
        return td_err_null(OP, "data");
    unsigned char *copy = td_malloc(nbytes ? nbytes : 1);
    if (copy == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for the %zu bytes of tensor '%s'", OP, nbytes, name);
    if (nbytes)
        memcpy(copy, data, nbytes);
    return add_tensor_owned(w, name, ggml_type, shape, ndim, copy, nbytes);
}

td_status td_gguf_writer_add_td_tensor(td_gguf_writer *w, const char *name, const td_tensor *t, uint32_t ggml_type)
{
    if (t == NULL)
        return td_err_null(OP, "t");
    const int want = dtype_of_ggml(ggml_type);
    td_dtype dt = TD_F32;
    TD_TRY(td_tensor_dtype(t, &dt));
    const bool quantize = want >= 0 && td_dtype_rows[want].quantized && td_dtype_cls(dt) == TD_CLASS_FLOAT &&
                          !td_dtype_rows[dt].quantized;
    const bool convert = want >= 0 && td_dtype_cls(dt) == TD_CLASS_FLOAT && !td_dtype_rows[dt].quantized &&
                         td_dtype_cls((td_dtype)want) == TD_CLASS_FLOAT && !td_dtype_rows[want].quantized;
    if (want < 0 || (want != (int)dt && !quantize && !convert))
        return td_error(TD_E_UNSUPPORTED, "%s: tensor '%.*s' has dtype %s and cannot be written as %s%s: the writer "
                        "stores a tensor's own dtype, converts between plain float dtypes and quantizes plain floats "
                        "to q8_0 / q4_0", OP, NAME_IN_MSG, name ? name : "(null)", td_dtype_name(dt),
                        ggml_type_of(ggml_type) ? "" : "ggml type id ",
                        ggml_type_of(ggml_type) ? ggml_types[ggml_type].name : "?");
    int64_t shape[TD_MAX_DIMS];
    int ndim = 0;
    TD_TRY(td_tensor_shape(t, shape, &ndim));
    uint64_t bytes = 0;
    TD_TRY(check_tensor(w, name, ggml_type, shape, ndim, &bytes));
    td_tensor *q = NULL;
    if (quantize) {
        const td_status st = td_float_quantize(t, (td_dtype)want, &q);
        if (st != TD_OK) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", td_last_error());
            return td_error(st, "%s: quantizing tensor '%s': %s", OP, name, inner);
        }
    }
    unsigned char *le = td_malloc(bytes ? (size_t)bytes : 1);
    td_status rc = TD_OK;
    if (le == NULL)
        rc = td_error(TD_E_NOMEM, "%s: out of memory for the %llu bytes of tensor '%s'", OP,
                      (unsigned long long)bytes, name);
    /* the host's byte order is the file's (little-endian; td_gguf_load_tensor_dtype refuses
     * others); a quantized tensor's into_data counts bytes, a plain one elements */
    if (rc == TD_OK && bytes > 0) {
        const int64_t len = td_dtype_rows[want].quantized ? (int64_t)bytes
                                                         : (int64_t)(bytes / (uint64_t)td_dtype_rows[want].size);
        rc = td_float_into_data_dtype(q != NULL ? q : t, (td_dtype)want, le, len);
        if (rc != TD_OK) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", td_last_error());
            rc = td_error(rc, "%s: reading tensor '%s': %s", OP, name, inner);
        }
    }
    td_tensor_release(q);
    if (rc != TD_OK) {
        td_free(le);
        return rc;
    }
    return add_tensor_owned(w, name, ggml_type, shape, ndim, le, (size_t)bytes);
}

/* ---- serializing ---- */

/* Where the bytes go: a buffer of cap bytes, or a FILE. */
typedef struct gw_sink {
    unsigned char *buf;
    size_t len, cap;
    FILE *f;
    const char *path;
    td_status st;
} gw_sink;

static void sink_put(gw_sink *s, const void *p, size_t n)
{
    if (s->st != TD_OK || n == 0)
        return;
    if (s->f != NULL) {
        if (fwrite(p, 1, n, s->f) != n)
            s->st = td_error(TD_E_INVALID, "%s: writing '%s' failed: %s", OP, s->path, strerror(errno));
        return;
    }
    if (s->cap - s->len < n) {
        s->st = td_error(TD_E_INTERNAL, "%s: the file outgrew its computed size", OP);
        return;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static void sink_le(gw_sink *s, uint64_t v, size_t n)
{
    unsigned char b[8];
    put_le(b, v, n);
    sink_put(s, b, n);
}

static void sink_pad(gw_sink *s, uint64_t *at, uint32_t alignment)
{
    static const unsigned char zeros[64] = { 0 };
    uint64_t pad = align_up(*at, alignment) - *at;
    *at += pad;
    while (pad > 0) {
        const size_t k = pad < sizeof zeros ? (size_t)pad : sizeof zeros;
        sink_put(s, zeros, k);
        pad -= k;
    }
}

/* The bytes up to the data section (header, key/values, tensor infos), unpadded. */
static uint64_t meta_bytes(const td_gguf_writer *w)
{
    uint64_t n = HEADER_BYTES;
    for (size_t i = 0; i < w->n_kv; i++)
        n += w->kv[i].nbytes;
    for (size_t i = 0; i < w->n_t; i++)
        n += 8 + strlen(w->t[i].name) + 4 + 8 * (uint64_t)w->t[i].ndim + 4 + 8;
    return n;
}

static td_status total_size(const td_gguf_writer *w, uint64_t *size)
{
    uint64_t n = align_up(meta_bytes(w), w->alignment);
    for (size_t i = 0; i < w->n_t; i++) {
        const uint64_t padded = align_up(w->t[i].nbytes, w->alignment);
        if (padded > UINT64_MAX - n)
            return td_error(TD_E_INVALID, "%s: the file would be larger than 2^64 bytes", OP);
        n += padded;
    }
    *size = n;
    return TD_OK;
}

static void emit(const td_gguf_writer *w, gw_sink *s)
{
    sink_put(s, "GGUF", 4);
    sink_le(s, TD_GGUF_VERSION, 4);
    sink_le(s, w->n_t, 8);
    sink_le(s, w->n_kv, 8);
    for (size_t i = 0; i < w->n_kv; i++)
        sink_put(s, w->kv[i].bytes, w->kv[i].nbytes);
    uint64_t offset = 0;
    for (size_t i = 0; i < w->n_t; i++) {
        const gw_tensor *t = &w->t[i];
        const size_t len = strlen(t->name);
        sink_le(s, len, 8);
        sink_put(s, t->name, len);
        sink_le(s, (uint64_t)t->ndim, 4);
        for (int k = 0; k < t->ndim; k++)
            sink_le(s, t->dims[k], 8);
        sink_le(s, t->type, 4);
        sink_le(s, offset, 8);
        offset += align_up(t->nbytes, w->alignment);
    }
    uint64_t at = meta_bytes(w);
    sink_pad(s, &at, w->alignment);
    for (size_t i = 0; i < w->n_t; i++) {
        sink_put(s, w->t[i].data, w->t[i].nbytes);
        at += w->t[i].nbytes;
        sink_pad(s, &at, w->alignment);
    }
}

td_status td_gguf_writer_size(const td_gguf_writer *w, size_t *size)
{
    if (w == NULL)
        return td_err_null(OP, "w");
    if (size == NULL)
        return td_err_null(OP, "size");
    uint64_t n = 0;
    TD_TRY(total_size(w, &n));
    if (n > (uint64_t)SIZE_MAX)
        return td_error(TD_E_INVALID, "%s: the file would be %llu bytes, past what a size_t holds", OP,
                        (unsigned long long)n);
    *size = (size_t)n;
    return TD_OK;
}

td_status td_gguf_writer_write_to(const td_gguf_writer *w, void *buf, size_t size)
{
    if (w == NULL)
        return td_err_null(OP, "w");
    if (buf == NULL)
        return td_err_null(OP, "buf");
    size_t want = 0;
    TD_TRY(td_gguf_writer_size(w, &want));
    if (size != want)
        return td_error(TD_E_INVALID, "%s: the file is %zu bytes; size is %zu", OP, want, size);
    gw_sink s = { buf, 0, size, NULL, NULL, TD_OK };
    emit(w, &s);
    if (s.st == TD_OK && s.len != size)
        return td_error(TD_E_INTERNAL, "%s: wrote %zu bytes of a %zu-byte file", OP, s.len, size);
    return s.st;
}

td_status td_gguf_writer_write(const td_gguf_writer *w, const char *path)
{
    if (w == NULL)
        return td_err_null(OP, "w");
    if (path == NULL)
        return td_err_null(OP, "path");
    uint64_t size = 0;
    TD_TRY(total_size(w, &size));
    const size_t plen = strlen(path);
    char *tmp = td_malloc(plen + sizeof ".partial");
    if (tmp == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for a path", OP);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".partial", sizeof ".partial");
    /* Written next to path and renamed over it once complete: a failed write leaves no
     * half-written file, and an older file at path stays whole. */
    FILE *f = fopen(tmp, "wb");
    td_status st = TD_OK;
    if (f == NULL) {
        st = td_error(TD_E_INVALID, "%s: cannot open '%s' for writing: %s", OP, tmp, strerror(errno));
    } else {
        gw_sink s = { NULL, 0, 0, f, tmp, TD_OK };
        emit(w, &s);
        st = s.st;
        if (fclose(f) != 0 && st == TD_OK)
            st = td_error(TD_E_INVALID, "%s: writing '%s' failed: %s", OP, tmp, strerror(errno));
        if (st == TD_OK && rename(tmp, path) != 0)
            st = td_error(TD_E_INVALID, "%s: cannot rename '%s' to '%s': %s", OP, tmp, path, strerror(errno));
        if (st != TD_OK)
            remove(tmp);
    }
    td_free(tmp);
    return st;
}

td_status td_gguf_save(const char *path, const char *const *names, td_tensor *const *tensors, size_t n)
{
    if (path == NULL)
        return td_err_null(OP, "path");
    if (n > 0 && names == NULL)
        return td_err_null(OP, "names");
    if (n > 0 && tensors == NULL)
        return td_err_null(OP, "tensors");
    td_gguf_writer *w = NULL;
    TD_TRY(td_gguf_writer_new(&w));
    td_status st = TD_OK;
    for (size_t i = 0; i < n && st == TD_OK; i++) {
        if (names[i] == NULL)
            st = td_error(TD_E_NULL, "%s: names[%zu] is NULL", OP, i);
        else if (tensors[i] == NULL)
            st = td_error(TD_E_NULL, "%s: tensors[%zu] ('%.*s') is NULL", OP, i, NAME_IN_MSG, names[i]);
        else
            st = td_gguf_writer_add_td_tensor(w, names[i], tensors[i], TD_GGML_F32);
    }
    if (st == TD_OK)
        st = td_gguf_writer_write(w, path);
    td_gguf_writer_free(w);
    return st;
}
