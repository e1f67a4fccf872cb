/* safetensors files: a writer that needs nothing, and a reader (JSON by cJSON) that treats every byte as hostile. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"
#include "td_ops.h"
#include "td_safetensors.h"

#ifdef TD_HAVE_CJSON
#include <cjson/cJSON.h>
#endif

#define OP "safetensors"
/* Names and strings from a file are cut to this many bytes in messages. */
#define NAME_IN_MSG 80

/* ---- the dtype table: one row per dtype of the format ---- */

/* Host arrays of a row's td dtype to and from the file's little-endian bytes. decode
 * returns the index of the first element it cannot take (n when all were fine). */
typedef void (*st_encode_fn)(const void *host, unsigned char *le, int64_t n);
typedef int64_t (*st_decode_fn)(const unsigned char *le, void *host, int64_t n);
typedef td_status (*st_make_fn)(td_device *d, const void *host, const int64_t *shape, int ndim, td_tensor **out);
typedef td_status (*st_read_fn)(const td_tensor *t, void *host, int64_t n);

typedef struct st_dtype {
    const char *name;   /* as the file spells it */
    size_t size;        /* bytes per element */
    bool supported;     /* tdispatch stores it: the fields below are set */
    td_dtype dtype;
    st_encode_fn encode;
    st_decode_fn decode;
    st_make_fn make;
    st_read_fn read;
} st_dtype;

static bool host_is_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void encode_32(const void *host, unsigned char *le, int64_t n)
{
    const unsigned char *src = host;
    if (host_is_little_endian()) {
        memcpy(le, src, (size_t)n * 4);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            le[4 * i + k] = src[4 * i + 3 - k];
}

static int64_t decode_32(const unsigned char *le, void *host, int64_t n)
{
    encode_32(le, host, n); /* a byte swap is its own inverse */
    return n;
}

/* 1-, 2- and 8-byte elements: the same byte order rule as encode_32. */
static void encode_w(const void *host, unsigned char *le, int64_t n, int w)
{
    const unsigned char *src = host;
    if (host_is_little_endian() || w == 1) {
        memcpy(le, src, (size_t)n * (size_t)w);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < w; k++)
            le[w * i + k] = src[w * i + w - 1 - k];
}
static void encode_8(const void *host, unsigned char *le, int64_t n) { encode_w(host, le, n, 1); }
static void encode_16(const void *host, unsigned char *le, int64_t n) { encode_w(host, le, n, 2); }
static void encode_64(const void *host, unsigned char *le, int64_t n) { encode_w(host, le, n, 8); }
static int64_t decode_8(const unsigned char *le, void *host, int64_t n)
{
    encode_w(le, host, n, 1);
    return n;
}
static int64_t decode_16(const unsigned char *le, void *host, int64_t n)
{
    encode_w(le, host, n, 2);
    return n;
}
static int64_t decode_64(const unsigned char *le, void *host, int64_t n)
{
    encode_w(le, host, n, 8);
    return n;
}

static void encode_bool(const void *host, unsigned char *le, int64_t n)
{
    const bool *src = host;
    for (int64_t i = 0; i < n; i++)
        le[i] = src[i] ? 1 : 0;
}

static int64_t decode_bool(const unsigned char *le, void *host, int64_t n)
{
    bool *dst = host;
    for (int64_t i = 0; i < n; i++) {
        if (le[i] > 1)
            return i;
        dst[i] = le[i] == 1;
    }
    return n;
}

static td_status make_f32(td_device *d, const void *host, const int64_t *shape, int ndim, td_tensor **out)
{
    return td_float_from_data(d, host, shape, ndim, out);
}
static td_status make_i32(td_device *d, const void *host, const int64_t *shape, int ndim, td_tensor **out)
{
    return td_int_from_data(d, host, shape, ndim, out);
}
static td_status make_bool(td_device *d, const void *host, const int64_t *shape, int ndim, td_tensor **out)
{
    return td_bool_from_data(d, host, shape, ndim, out);
}
static td_status read_f32(const td_tensor *t, void *host, int64_t n)
{
    return td_float_into_data(t, host, n);
}
static td_status read_i32(const td_tensor *t, void *host, int64_t n)
{
    return td_int_into_data(t, host, n);
}
static td_status read_bool(const td_tensor *t, void *host, int64_t n)
{
    return td_bool_into_data(t, host, n);
}

/* The other dtypes, through the `_dtype` twins (host data in the dtype's storage format). */
#define ST_FLOAT_ROW(NAME, DT)                                                                                    \
    static td_status make_##NAME(td_device *d, const void *host, const int64_t *shape, int ndim, td_tensor **out) \
    {                                                                                                            \
        return td_float_from_data_dtype(d, DT, host, shape, ndim, out);                                          \
    }                                                                                                            \
    static td_status read_##NAME(const td_tensor *t, void *host, int64_t n)                                      \
    {                                                                                                            \
        return td_float_into_data_dtype(t, DT, host, n);                                                         \
    }
#define ST_INT_ROW(NAME, DT)                                                                                      \
    static td_status make_##NAME(td_device *d, const void *host, const int64_t *shape, int ndim, td_tensor **out) \
    {                                                                                                            \
        return td_int_from_data_dtype(d, DT, host, shape, ndim, out);                                            \
    }                                                                                                            \
    static td_status read_##NAME(const td_tensor *t, void *host, int64_t n)                                      \
    {                                                                                                            \
        return td_int_into_data_dtype(t, DT, host, n);                                                           \
    }
ST_FLOAT_ROW(f16, TD_F16)
ST_FLOAT_ROW(bf16, TD_BF16)
ST_FLOAT_ROW(f64, TD_F64)
ST_INT_ROW(i64, TD_I64)
ST_INT_ROW(i8, TD_I8)
ST_INT_ROW(u8, TD_U8)

/* Adding a dtype tdispatch stores: fill in its row (encode/decode between the host type
 * and the file's bytes, make/read through the class's from_data/into_data). */
static const st_dtype st_dtypes[] = {
    { "F32", 4, true, TD_F32, encode_32, decode_32, make_f32, read_f32 },
    { "I32", 4, true, TD_I32, encode_32, decode_32, make_i32, read_i32 },
    { "BOOL", 1, true, TD_BOOL, encode_bool, decode_bool, make_bool, read_bool },
    { "F64", 8, true, TD_F64, encode_64, decode_64, make_f64, read_f64 },
    { "F16", 2, true, TD_F16, encode_16, decode_16, make_f16, read_f16 },
    { "BF16", 2, true, TD_BF16, encode_16, decode_16, make_bf16, read_bf16 },
    { "I64", 8, true, TD_I64, encode_64, decode_64, make_i64, read_i64 },
    { "I8", 1, true, TD_I8, encode_8, decode_8, make_i8, read_i8 },
    { "U8", 1, true, TD_U8, encode_8, decode_8, make_u8, read_u8 },
    /* the format's other dtypes, named in a clear error until tdispatch stores them */
    { "I16", 2, false, TD_F32, NULL, NULL, NULL, NULL },
    { "U64", 8, false, TD_F32, NULL, NULL, NULL, NULL },
    { "U32", 4, false, TD_F32, NULL, NULL, NULL, NULL },
    { "U16", 2, false, TD_F32, NULL, NULL, NULL, NULL },
    { "F8_E4M3", 1, false, TD_F32, NULL, NULL, NULL, NULL },
    { "F8_E5M2", 1, false, TD_F32, NULL, NULL, NULL, NULL },
};
#define ST_NDTYPES (sizeof st_dtypes / sizeof st_dtypes[0])

static const st_dtype *dtype_of_td(td_dtype dtype)
{
    for (size_t i = 0; i < ST_NDTYPES; i++)
        if (st_dtypes[i].supported && st_dtypes[i].dtype == dtype)
            return &st_dtypes[i];
    return NULL;
}

/* ---- shared helpers ---- */

/* Whether s (len bytes) is well-formed UTF-8: no overlong forms, surrogates or code points
 * past U+10FFFF (RFC 3629). */
static bool utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const unsigned c = s[i];
        size_t extra;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else {
            return false;
        }
        if (len - i <= extra)
            return false;
        for (size_t k = 1; k <= extra; k++) {
            const unsigned b = s[i + k];
            if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF))
                return false;
        }
        i += extra + 1;
    }
    return true;
}

static int cmp_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first string of names (n of them) that appears twice, or NULL. Sorts a copy. */
static td_status find_duplicate(const char *const *names, size_t n, const char **dup)
{
    *dup = NULL;
    if (n < 2)
        return TD_OK;
    const char **sorted = td_malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %zu names", OP, n);
    memcpy(sorted, names, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_strings);
    for (size_t i = 1; i < n && *dup == NULL; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0)
            *dup = sorted[i];
    td_free(sorted);
    return TD_OK;
}

/* ---- the writer ---- */

/* A growing byte buffer from td_malloc. */
typedef struct st_buf {
    char *p;
    size_t len, cap;
    bool failed;
} st_buf;

static void buf_put(st_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) {
                b->failed = true;
                return;
            }
            cap *= 2;
        }
        char *p = td_malloc(cap);
        if (p == NULL) {
            b->failed = true;
            return;
        }
        if (b->len)
            memcpy(p, b->p, b->len);
        td_free(b->p);
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void buf_puts(st_buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

/* s as a JSON string: quotes, backslashes and control characters escaped, UTF-8 as is. */
static void buf_json_string(st_buf *b, const char *s)
{
    buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            buf_put(b, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)*p);
            buf_put(b, esc, 6);
        } else {
            buf_put(b, (const char *)p, 1);
        }
    }
    buf_put(b, "\"", 1);
}

static void buf_u64(st_buf *b, uint64_t v)
{
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    buf_puts(b, num);
}

/* Checks the arguments of a save and returns each tensor's dtype row and byte size. */
static td_status check_save(const char *const *names, td_tensor *const *tensors, size_t n,
                            const char *const *kv, size_t n_meta, const st_dtype **rows, uint64_t *bytes)
{
    for (size_t i = 0; i < n; i++) {
        if (names[i] == NULL)
            return td_error(TD_E_NULL, "%s: names[%zu] is NULL", OP, i);
        if (tensors[i] == NULL)
            return td_error(TD_E_NULL, "%s: tensors[%zu] ('%.*s') is NULL", OP, i, NAME_IN_MSG, names[i]);
        if (names[i][0] == '\0')
            return td_error(TD_E_INVALID, "%s: names[%zu] is empty; every tensor needs a name", OP, i);
        if (strcmp(names[i], "__metadata__") == 0)
            return td_error(TD_E_INVALID, "%s: names[%zu] is '__metadata__', which the format keeps for metadata",
                            OP, i);
        if (!utf8_valid((const unsigned char *)names[i], strlen(names[i])))
            return td_error(TD_E_INVALID, "%s: names[%zu] is not valid UTF-8", OP, i);
        td_dtype dt;
        int64_t numel;
        TD_TRY(td_tensor_dtype(tensors[i], &dt));
        TD_TRY(td_tensor_numel(tensors[i], &numel));
        rows[i] = dtype_of_td(dt);
        if (rows[i] == NULL)
            return td_error(TD_E_UNSUPPORTED, "%s: tensor '%.*s' has dtype %s, which the writer cannot store yet",
                            OP, NAME_IN_MSG, names[i], td_dtype_name(dt));
        bytes[i] = (uint64_t)numel * rows[i]->size; /* numel <= 2^40, size <= 8 */
    }
    for (size_t i = 0; i < 2 * n_meta; i++) {
        const char *what = i % 2 ? "value" : "key";
        if (kv[i] == NULL)
            return td_error(TD_E_NULL, "%s: metadata_kv[%zu] (a %s) is NULL", OP, i, what);
        if (!utf8_valid((const unsigned char *)kv[i], strlen(kv[i])))
            return td_error(TD_E_INVALID, "%s: metadata_kv[%zu] (a %s) is not valid UTF-8", OP, i, what);
    }
    const char *dup = NULL;
    TD_TRY(find_duplicate(names, n, &dup));
    if (dup != NULL)
        return td_error(TD_E_INVALID, "%s: two tensors are named '%.*s'", OP, NAME_IN_MSG, dup);
    if (n_meta > 1) {
        const char **keys = td_malloc(n_meta * sizeof *keys);
        if (keys == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory for %zu metadata keys", OP, n_meta);
        for (size_t i = 0; i < n_meta; i++)
            keys[i] = kv[2 * i];
        const td_status st = find_duplicate(keys, n_meta, &dup);
        char first[NAME_IN_MSG + 1] = "";
        if (dup != NULL)
            snprintf(first, sizeof first, "%s", dup);
        td_free(keys);
        TD_TRY(st);
        if (dup != NULL)
            return td_error(TD_E_INVALID, "%s: the metadata key '%s' is given twice", OP, first);
    }
    return TD_OK;
}

/* The header: metadata first, then the tensors in the order given, their data one after
 * the other; padded with spaces so that the data starts at a multiple of 8 bytes. */
static td_status build_header(const char *const *names, td_tensor *const *tensors, size_t n, const char *const *kv,
                              size_t n_meta, const st_dtype *const *rows, const uint64_t *bytes, st_buf *b)
{
    buf_puts(b, "{");
    if (n_meta > 0) {
        buf_puts(b, "\"__metadata__\":{");
        for (size_t i = 0; i < n_meta; i++) {
            if (i)
                buf_puts(b, ",");
            buf_json_string(b, kv[2 * i]);
            buf_puts(b, ":");
            buf_json_string(b, kv[2 * i + 1]);
        }
        buf_puts(b, "}");
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t dims[TD_MAX_DIMS];
        int ndim = 0;
        TD_TRY(td_tensor_shape(tensors[i], dims, &ndim));
        if (n_meta > 0 || i > 0)
            buf_puts(b, ",");
        buf_json_string(b, names[i]);
        buf_puts(b, ":{\"dtype\":\"");
        buf_puts(b, rows[i]->name);
        buf_puts(b, "\",\"shape\":[");
        for (int k = 0; k < ndim; k++) {
            if (k)
                buf_puts(b, ",");
            buf_u64(b, (uint64_t)dims[k]);
        }
        buf_puts(b, "],\"data_offsets\":[");
        buf_u64(b, offset);
        buf_puts(b, ",");
        if (bytes[i] > UINT64_MAX - offset)
            return td_error(TD_E_INVALID, "%s: the tensors hold more than 2^64 bytes", OP);
        offset += bytes[i];
        buf_u64(b, offset);
        buf_puts(b, "]}");
    }
    buf_puts(b, "}");
    while (!b->failed && (8 + b->len) % 8 != 0)
        buf_puts(b, " ");
    if (b->failed)
        return td_error(TD_E_NOMEM, "%s: out of memory for the header", OP);
    if (b->len > TD_SAFETENSORS_MAX_HEADER)
        return td_error(TD_E_INVALID, "%s: the header would be %zu bytes, past the format's cap of %zu", OP, b->len,
                        TD_SAFETENSORS_MAX_HEADER);
    return TD_OK;
}

static td_status write_all(FILE *f, const void *p, size_t n, const char *path)
{
    if (n > 0 && fwrite(p, 1, n, f) != n)
        return td_error(TD_E_INVALID, "%s: writing '%s' failed: %s", OP, path, strerror(errno));
    return TD_OK;
}

/* One tensor's data as little-endian bytes, through a host staging buffer. */
static td_status write_tensor(FILE *f, const char *name, const td_tensor *t, const st_dtype *row, uint64_t bytes,
                              const char *path)
{
    if (bytes == 0)
        return TD_OK;
    const int64_t numel = (int64_t)(bytes / row->size);
    const size_t host_bytes = (size_t)numel * td_dtype_size(row->dtype);
    void *host = td_malloc(host_bytes);
    unsigned char *le = td_malloc((size_t)bytes);
    td_status st = TD_OK;
    if (host == NULL || le == NULL)
        st = td_error(TD_E_NOMEM, "%s: out of memory for the %llu bytes of tensor '%.*s'", OP,
                      (unsigned long long)bytes, NAME_IN_MSG, name);
    if (st == TD_OK) {
        st = row->read(t, host, numel);
        if (st != TD_OK) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", td_last_error());
            st = td_error(st, "%s: reading tensor '%.*s': %s", OP, NAME_IN_MSG, name, inner);
        }
    }
    if (st == TD_OK) {
        row->encode(host, le, numel);
        st = write_all(f, le, (size_t)bytes, path);
    }
    td_free(le);
    td_free(host);
    return st;
}

td_status td_safetensors_save(const char *path, const char *const *names, td_tensor *const *tensors, size_t n,
                              const char *const *metadata_kv, size_t n_meta)
{
    if (path == NULL)
        return td_err_null(OP, "path");
    if (n > 0 && names == NULL)
        return td_err_null(OP, "names");
    if (n > 0 && tensors == NULL)
        return td_err_null(OP, "tensors");
    if (n_meta > 0 && metadata_kv == NULL)
        return td_err_null(OP, "metadata_kv");
    if (n > SIZE_MAX / 64 || n_meta > SIZE_MAX / 64)
        return td_error(TD_E_INVALID, "%s: %zu tensors and %zu metadata pairs are too many", OP, n, n_meta);

    const st_dtype **rows = td_malloc((n ? n : 1) * sizeof *rows);
    uint64_t *bytes = td_malloc((n ? n : 1) * sizeof *bytes);
    size_t plen = strlen(path);
    char *tmp = td_malloc(plen + sizeof ".partial");
    st_buf header = { 0 };
    FILE *f = NULL;
    td_status st = TD_OK;
    if (rows == NULL || bytes == NULL || tmp == NULL)
        st = td_error(TD_E_NOMEM, "%s: out of memory for the bookkeeping of %zu tensors", OP, n);
    if (st == TD_OK)
        st = check_save(names, tensors, n, metadata_kv, n_meta, rows, bytes);
    if (st == TD_OK)
        st = build_header(names, tensors, n, metadata_kv, n_meta, rows, bytes, &header);
    /* Written next to path and renamed over it once complete: a failed save leaves no
     * half-written file, and an older file at path stays whole. */
    if (st == TD_OK) {
        memcpy(tmp, path, plen);
        memcpy(tmp + plen, ".partial", sizeof ".partial");
        f = fopen(tmp, "wb");
        if (f == NULL)
            st = td_error(TD_E_INVALID, "%s: cannot open '%s' for writing: %s", OP, tmp, strerror(errno));
    }
    if (st == TD_OK) {
        unsigned char len8[8];
        for (int k = 0; k < 8; k++)
            len8[k] = (unsigned char)((uint64_t)header.len >> (8 * k));
        st = write_all(f, len8, 8, tmp);
        if (st == TD_OK)
            st = write_all(f, header.p, header.len, tmp);
    }
    for (size_t i = 0; st == TD_OK && i < n; i++)
        st = write_tensor(f, names[i], tensors[i], rows[i], bytes[i], tmp);
    if (f != NULL) {
        if (fclose(f) != 0 && st == TD_OK)
            st = td_error(TD_E_INVALID, "%s: writing '%s' failed: %s", OP, tmp, strerror(errno));
        if (st == TD_OK && rename(tmp, path) != 0)
            st = td_error(TD_E_INVALID, "%s: cannot rename '%s' to '%s': %s", OP, tmp, path, strerror(errno));
        if (st != TD_OK)
            remove(tmp);
    }
    td_free(header.p);
    td_free(tmp);
    td_free(bytes);
    td_free(rows);
    return st;
}

/* ---- the loaded handle ---- */

typedef struct st_tensor {
    char *name;
    td_tensor *tensor;
    const st_dtype *dt;
    int ndim;
    int64_t dims[TD_MAX_DIMS];
    uint64_t begin, end; /* in the data buffer */
} st_tensor;

typedef struct st_name_ix {
    const char *name; /* first: sorted with cmp_strings */
    size_t index;     /* into t */
} st_name_ix;

typedef struct st_meta {
    char *key, *value;
} st_meta;

struct td_safetensors {
    size_t n;
    st_tensor *t;      /* in the order of their data */
    st_name_ix *by_name; /* sorted by name */
    size_t n_meta;
    st_meta *meta;     /* sorted by key */
};

void td_safetensors_free(td_safetensors *st)
{
    if (st == NULL)
        return;
    for (size_t i = 0; st->t != NULL && i < st->n; i++) {
        td_free(st->t[i].name);
        td_tensor_release(st->t[i].tensor);
    }
    for (size_t i = 0; st->meta != NULL && i < st->n_meta; i++) {
        td_free(st->meta[i].key);
        td_free(st->meta[i].value);
    }
    td_free(st->t);
    td_free(st->by_name);
    td_free(st->meta);
    td_free(st);
}

td_status td_safetensors_count(const td_safetensors *st, size_t *count)
{
    if (st == NULL)
        return td_err_null(OP, "st");
    if (count == NULL)
        return td_err_null(OP, "count");
    *count = st->n;
    return TD_OK;
}

td_status td_safetensors_name(const td_safetensors *st, size_t index, const char **name)
{
    if (st == NULL)
        return td_err_null(OP, "st");
    if (name == NULL)
        return td_err_null(OP, "name");
    if (index >= st->n)
        return td_error(TD_E_RANGE, "%s: index %zu is out of range (the file has %zu tensors)", OP, index, st->n);
    *name = st->t[index].name;
    return TD_OK;
}

td_status td_safetensors_tensor(const td_safetensors *st, size_t index, td_tensor **out)
{
    if (out != NULL)
        *out = NULL;
    if (st == NULL)
        return td_err_null(OP, "st");
    if (out == NULL)
        return td_err_null(OP, "out");
    if (index >= st->n)
        return td_error(TD_E_RANGE, "%s: index %zu is out of range (the file has %zu tensors)", OP, index, st->n);
    TD_TRY(td_tensor_retain(st->t[index].tensor));
    *out = st->t[index].tensor;
    return TD_OK;
}

td_status td_safetensors_get(const td_safetensors *st, const char *name, td_tensor **out)
{
    if (out != NULL)
        *out = NULL;
    if (st == NULL)
        return td_err_null(OP, "st");
    if (name == NULL)
        return td_err_null(OP, "name");
    if (out == NULL)
        return td_err_null(OP, "out");
    size_t lo = 0, hi = st->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(st->by_name[mid].name, name);
        if (c == 0)
            return td_safetensors_tensor(st, st->by_name[mid].index, out);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return td_error(TD_E_RANGE, "%s: no tensor is named '%.*s'", OP, NAME_IN_MSG, name);
}

td_status td_safetensors_metadata_count(const td_safetensors *st, size_t *count)
{
    if (st == NULL)
        return td_err_null(OP, "st");
    if (count == NULL)
        return td_err_null(OP, "count");
    *count = st->n_meta;
    return TD_OK;
}

td_status td_safetensors_metadata_at(const td_safetensors *st, size_t index, const char **key, const char **value)
{
    if (st == NULL)
        return td_err_null(OP, "st");
    if (key == NULL)
        return td_err_null(OP, "key");
    if (value == NULL)
        return td_err_null(OP, "value");
    if (index >= st->n_meta)
        return td_error(TD_E_RANGE, "%s: metadata index %zu is out of range (the file has %zu pairs)", OP, index,
                        st->n_meta);
    *key = st->meta[index].key;
    *value = st->meta[index].value;
    return TD_OK;
}

td_status td_safetensors_metadata(const td_safetensors *st, const char *key, const char **value)
{
    if (value != NULL)
        *value = NULL;
    if (st == NULL)
        return td_err_null(OP, "st");
    if (key == NULL)
        return td_err_null(OP, "key");
    if (value == NULL)
        return td_err_null(OP, "value");
    size_t lo = 0, hi = st->n_meta;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(st->meta[mid].key, key);
        if (c == 0) {
            *value = st->meta[mid].value;
            return TD_OK;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return TD_OK;
}

/* ---- the reader ---- */

#ifndef TD_HAVE_CJSON

bool td_safetensors_available(void)
{
    return false;
}

static td_status no_reader(void)
{
    return td_error(TD_E_UNSUPPORTED, "%s: this build cannot read safetensors files: it was built without cJSON "
                                      "(apt-get install libcjson-dev, then configure with -DTD_CJSON=AUTO or ON)", OP);
}

td_status td_safetensors_load(const char *path, td_device *device, td_safetensors **out)
{
    (void)path;
    (void)device;
    if (out != NULL)
        *out = NULL;
    return no_reader();
}

td_status td_safetensors_parse(const void *data, size_t size, td_device *device, td_safetensors **out)
{
    (void)data;
    (void)size;
    (void)device;
    if (out != NULL)
        *out = NULL;
    return no_reader();
}

#else

bool td_safetensors_available(void)
{
    return true;
}

/* "F32, I32, BOOL": the dtypes this build loads, for messages. */
static void supported_list(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < ST_NDTYPES && used < cap; i++) {
        if (!st_dtypes[i].supported)
            continue;
        const int k = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", st_dtypes[i].name);
        used += k > 0 ? (size_t)k : 0;
    }
}

static char *dup_string(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *d = td_malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* Where the bytes come from: memory, or an open file (the data buffer read tensor by tensor). */
typedef struct st_source {
    const unsigned char *mem; /* the whole file, or NULL */
    FILE *file;
    const char *what;         /* "'path'" or "the buffer", for messages */
    uint64_t data_start;      /* 8 + header length */
    uint64_t data_len;
} st_source;

static td_status source_read(const st_source *s, uint64_t offset, void *dst, size_t n)
{
    if (n == 0)
        return TD_OK;
    if (s->mem != NULL) {
        memcpy(dst, s->mem + offset, n);
        return TD_OK;
    }
    if (offset > (uint64_t)LONG_MAX || fseek(s->file, (long)offset, SEEK_SET) != 0)
        return td_error(TD_E_INVALID, "%s: cannot seek to byte %llu of %s: %s", OP, (unsigned long long)offset,
                        s->what, strerror(errno));
    if (fread(dst, 1, n, s->file) != n)
        return td_error(TD_E_INVALID, "%s: %s ends before byte %llu (truncated while reading?)", OP, s->what,
                        (unsigned long long)(offset + n));
    return TD_OK;
}

/* Exactly representable integers (a JSON number is a double here). */
#define JSON_INT_MAX ((double)(UINT64_C(1) << 53))

/* A JSON number that is a whole number in [0, 2^53]. */
static bool json_u64(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v))
        return false;
    const double d = v->valuedouble;
    if (!(d >= 0.0 && d <= JSON_INT_MAX))
        return false;
    const uint64_t u = (uint64_t)d;
    if ((double)u != d)
        return false;
    *out = u;
    return true;
}

static td_status bad(const char *fmt_what, const char *name, const char *detail)
{
    return td_error(TD_E_INVALID, "%s: tensor '%.*s': %s%s", OP, NAME_IN_MSG, name, fmt_what, detail);
}

/* One tensor's entry: {"dtype": string, "shape": [dims], "data_offsets": [begin, end]}, nothing else. */
static td_status parse_entry(const cJSON *e, st_tensor *t, uint64_t data_len)
{
    const char *name = t->name;
    if (!cJSON_IsObject(e))
        return bad("the entry is not an object", name, "");
    const cJSON *dtype = NULL, *shape = NULL, *offsets = NULL;
    for (const cJSON *f = e->child; f != NULL; f = f->next) {
        const cJSON **slot = NULL;
        if (strcmp(f->string, "dtype") == 0)
            slot = &dtype;
        else if (strcmp(f->string, "shape") == 0)
            slot = &shape;
        else if (strcmp(f->string, "data_offsets") == 0)
            slot = &offsets;
        if (slot == NULL)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': unexpected field '%.*s' (an entry has dtype, shape "
                            "and data_offsets)", OP, NAME_IN_MSG, name, NAME_IN_MSG, f->string);
        if (*slot != NULL)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': the field '%s' is given twice", OP, NAME_IN_MSG, name,
                            f->string);
        *slot = f;
    }
    if (dtype == NULL)
        return bad("the field 'dtype' is missing", name, "");
    if (shape == NULL)
        return bad("the field 'shape' is missing", name, "");
    if (offsets == NULL)
        return bad("the field 'data_offsets' is missing", name, "");

    if (!cJSON_IsString(dtype))
        return bad("'dtype' is not a string", name, "");
    t->dt = NULL;
    for (size_t i = 0; i < ST_NDTYPES && t->dt == NULL; i++)
        if (strcmp(st_dtypes[i].name, dtype->valuestring) == 0)
            t->dt = &st_dtypes[i];
    char supported[64];
    supported_list(supported, sizeof supported);
    if (t->dt == NULL)
        return td_error(TD_E_INVALID, "%s: tensor '%.*s': unknown dtype '%.*s' (this build loads %s)", OP,
                        NAME_IN_MSG, name, NAME_IN_MSG, dtype->valuestring, supported);
    if (!t->dt->supported)
        return td_error(TD_E_UNSUPPORTED, "%s: tensor '%.*s': dtype '%s' is not supported yet (this build loads %s)",
                        OP, NAME_IN_MSG, name, t->dt->name, supported);

    if (!cJSON_IsArray(shape))
        return bad("'shape' is not an array", name, "");
    const int ndim = cJSON_GetArraySize(shape);
    if (ndim > TD_MAX_DIMS)
        return td_error(TD_E_INVALID, "%s: tensor '%.*s': the shape has %d dims; tensors have at most %d", OP,
                        NAME_IN_MSG, name, ndim, TD_MAX_DIMS);
    t->ndim = 0;
    int64_t numel = 1;
    for (const cJSON *d = shape->child; d != NULL; d = d->next) {
        uint64_t v;
        if (!json_u64(d, &v))
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': shape dim %d is not a whole number >= 0", OP,
                            NAME_IN_MSG, name, t->ndim);
        if (v > (uint64_t)TD_MAX_NUMEL)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': shape dim %d is %llu, past the 2^40 elements a tensor "
                            "may have", OP, NAME_IN_MSG, name, t->ndim, (unsigned long long)v);
        t->dims[t->ndim++] = (int64_t)v;
        if (!td_mul_ok(numel, (int64_t)v, &numel) || numel > TD_MAX_NUMEL)
            return td_error(TD_E_INVALID, "%s: tensor '%.*s': the shape has more than 2^40 elements", OP, NAME_IN_MSG,
                            name);
    }
    const uint64_t bytes = (uint64_t)numel * t->dt->size; /* <= 2^40 * 8 */

    if (!cJSON_IsArray(offsets) || cJSON_GetArraySize(offsets) != 2)
        return bad("'data_offsets' is not an array [begin, end]", name, "");
    if (!json_u64(offsets->child, &t->begin) || !json_u64(offsets->child->next, &t->end))
        return bad("'data_offsets' are not whole numbers >= 0", name, "");
    if (t->end < t->begin)
        return td_error(TD_E_INVALID, "%s: tensor '%.*s': data_offsets [%llu, %llu] end before they begin", OP,
                        NAME_IN_MSG, name, (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > data_len)
        return td_error(TD_E_INVALID, "%s: tensor '%.*s': data_offsets [%llu, %llu] run past the %llu-byte data "
                        "buffer (a truncated file?)", OP, NAME_IN_MSG, name, (unsigned long long)t->begin,
                        (unsigned long long)t->end, (unsigned long long)data_len);
    if (t->end - t->begin != bytes)
        return td_error(TD_E_INVALID, "%s: tensor '%.*s': %s of %lld elements is %llu bytes, but data_offsets "
                        "[%llu, %llu] hold %llu", OP, NAME_IN_MSG, name, t->dt->name, (long long)numel,
                        (unsigned long long)bytes, (unsigned long long)t->begin, (unsigned long long)t->end,
                        (unsigned long long)(t->end - t->begin));
    return TD_OK;
}

static td_status parse_metadata(const cJSON *m, td_safetensors *st)
{
    if (!cJSON_IsObject(m))
        return td_error(TD_E_INVALID, "%s: '__metadata__' is not an object of strings", OP);
    const int n = cJSON_GetArraySize(m);
    st->meta = td_calloc(n > 0 ? (size_t)n : 1, sizeof *st->meta);
    if (st->meta == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for %d metadata pairs", OP, n);
    for (const cJSON *f = m->child; f != NULL; f = f->next) {
        if (!cJSON_IsString(f))
            return td_error(TD_E_INVALID, "%s: metadata '%.*s' is not a string", OP, NAME_IN_MSG, f->string);
        st_meta *p = &st->meta[st->n_meta];
        p->key = dup_string(f->string);
        p->value = dup_string(f->valuestring);
        st->n_meta++;
        if (p->key == NULL || p->value == NULL)
            return td_error(TD_E_NOMEM, "%s: out of memory for metadata", OP);
    }
    qsort(st->meta, st->n_meta, sizeof *st->meta, cmp_strings); /* key is the first member */
    for (size_t i = 1; i < st->n_meta; i++)
        if (strcmp(st->meta[i - 1].key, st->meta[i].key) == 0)
            return td_error(TD_E_INVALID, "%s: the metadata key '%.*s' appears twice", OP, NAME_IN_MSG,
                            st->meta[i].key);
    return TD_OK;
}

static int cmp_by_offset(const void *a, const void *b)
{
    const st_tensor *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The header's JSON text (len bytes at text) into st's entries and metadata. */
static td_status parse_json(const char *text, size_t len, uint64_t data_len, td_safetensors *st)
{
    if (!utf8_valid((const unsigned char *)text, len))
        return td_error(TD_E_INVALID, "%s: the header is not valid UTF-8", OP);
    if (len == 0 || text[0] != '{')
        return td_error(TD_E_INVALID, "%s: the header does not start with '{'", OP);
    if (memchr(text, '\0', len) != NULL)
        return td_error(TD_E_INVALID, "%s: the header holds a NUL byte", OP);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (root == NULL) {
        /* end is where the parse stopped (cJSON_GetErrorPtr would be a global, shared by threads) */
        const size_t where = end != NULL && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        return td_error(TD_E_INVALID, "%s: the header is not valid JSON (near byte %zu)", OP, where);
    }
    td_status rc = TD_OK;
    for (const char *p = end; p != NULL && p < text + len && rc == TD_OK; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            rc = td_error(TD_E_INVALID, "%s: the header has bytes after its JSON object (at byte %zu)", OP,
                          (size_t)(p - text));
    if (rc == TD_OK && !cJSON_IsObject(root))
        rc = td_error(TD_E_INVALID, "%s: the header is not a JSON object", OP);
    const cJSON *meta = NULL;
    size_t count = 0;
    for (const cJSON *e = rc == TD_OK ? root->child : NULL; e != NULL; e = e->next) {
        if (strcmp(e->string, "__metadata__") != 0) {
            count++;
        } else if (meta != NULL) {
            rc = td_error(TD_E_INVALID, "%s: '__metadata__' appears twice", OP);
            break;
        } else {
            meta = e;
        }
    }
    if (rc == TD_OK && meta != NULL)
        rc = parse_metadata(meta, st);
    if (rc == TD_OK) {
        st->t = td_calloc(count ? count : 1, sizeof *st->t);
        st->by_name = td_malloc((count ? count : 1) * sizeof *st->by_name);
        if (st->t == NULL || st->by_name == NULL)
            rc = td_error(TD_E_NOMEM, "%s: out of memory for %zu tensors", OP, count);
    }
    for (const cJSON *e = rc == TD_OK ? root->child : NULL; e != NULL && rc == TD_OK; e = e->next) {
        if (e == meta)
            continue;
        st_tensor *t = &st->t[st->n];
        if (e->string[0] == '\0') {
            rc = td_error(TD_E_INVALID, "%s: a tensor has an empty name", OP);
            break;
        }
        t->name = dup_string(e->string);
        if (t->name == NULL) {
            rc = td_error(TD_E_NOMEM, "%s: out of memory for a tensor name", OP);
            break;
        }
        st->n++;
        rc = parse_entry(e, t, data_len);
    }
    cJSON_Delete(root);
    if (rc != TD_OK)
        return rc;

    return TD_OK;
}

/* Sorts the tensors by their data, then checks that their names are unique and that they
 * tile the data buffer: no overlap, no byte that belongs to no tensor. */
static td_status check_layout(td_safetensors *st, uint64_t data_len)
{
    qsort(st->t, st->n, sizeof *st->t, cmp_by_offset);
    for (size_t i = 0; i < st->n; i++) {
        st->by_name[i].name = st->t[i].name;
        st->by_name[i].index = i;
    }
    qsort(st->by_name, st->n, sizeof *st->by_name, cmp_strings);
    for (size_t i = 1; i < st->n; i++)
        if (strcmp(st->by_name[i - 1].name, st->by_name[i].name) == 0)
            return td_error(TD_E_INVALID, "%s: two tensors are named '%.*s'", OP, NAME_IN_MSG, st->by_name[i].name);
    uint64_t at = 0;
    for (size_t i = 0; i < st->n; i++) {
        const st_tensor *t = &st->t[i];
        if (t->begin < at) {
            const st_tensor *p = &st->t[i - 1];
            return td_error(TD_E_INVALID, "%s: tensors '%.*s' [%llu, %llu) and '%.*s' [%llu, %llu) overlap", OP,
                            NAME_IN_MSG, p->name, (unsigned long long)p->begin, (unsigned long long)p->end,
                            NAME_IN_MSG, t->name, (unsigned long long)t->begin, (unsigned long long)t->end);
        }
        if (t->begin > at)
            return td_error(TD_E_INVALID, "%s: bytes [%llu, %llu) of the data buffer belong to no tensor", OP,
                            (unsigned long long)at, (unsigned long long)t->begin);
        at = t->end;
    }
    if (at != data_len)
        return td_error(TD_E_INVALID, "%s: bytes [%llu, %llu) of the %llu-byte data buffer belong to no tensor", OP,
                        (unsigned long long)at, (unsigned long long)data_len, (unsigned long long)data_len);
    return TD_OK;
}

/* Each tensor from its bytes onto device, in the order of the data. */
static td_status make_tensors(td_safetensors *st, const st_source *src, td_device *device)
{
    for (size_t i = 0; i < st->n; i++) {
        st_tensor *t = &st->t[i];
        const size_t bytes = (size_t)(t->end - t->begin); /* <= data_len, which is in memory or a file */
        const int64_t numel = (int64_t)(bytes / t->dt->size);
        const size_t host_bytes = (size_t)numel * td_dtype_size(t->dt->dtype);
        void *host = td_malloc(host_bytes ? host_bytes : 1);
        unsigned char *copy = NULL;
        const unsigned char *le = NULL;
        td_status rc = TD_OK;
        if (src->mem != NULL) {
            le = src->mem + src->data_start + t->begin;
        } else {
            copy = td_malloc(bytes ? bytes : 1);
            le = copy;
        }
        if (host == NULL || le == NULL)
            rc = td_error(TD_E_NOMEM, "%s: out of memory for the %zu bytes of tensor '%.*s'", OP, bytes, NAME_IN_MSG,
                          t->name);
        if (rc == TD_OK && copy != NULL)
            rc = source_read(src, src->data_start + t->begin, copy, bytes);
        if (rc == TD_OK) {
            const int64_t first_bad = t->dt->decode(le, host, numel);
            if (first_bad < numel)
                rc = td_error(TD_E_INVALID, "%s: tensor '%.*s': element %lld is the byte %u, not a %s (0 or 1)", OP,
                              NAME_IN_MSG, t->name, (long long)first_bad, (unsigned)le[first_bad], t->dt->name);
        }
        if (rc == TD_OK) {
            rc = t->dt->make(device, host, t->dims, t->ndim, &t->tensor);
            if (rc != TD_OK) {
                char inner[512];
                snprintf(inner, sizeof inner, "%s", td_last_error());
                rc = td_error(rc, "%s: tensor '%.*s': %s", OP, NAME_IN_MSG, t->name, inner);
            }
        }
        td_free(copy);
        td_free(host);
        if (rc != TD_OK)
            return rc;
    }
    return TD_OK;
}

/* The checks of the 8-byte length: avail is how many bytes follow it. */
static td_status check_header_len(uint64_t n, uint64_t avail, const char *what)
{
    if (n > TD_SAFETENSORS_MAX_HEADER)
        return td_error(TD_E_INVALID, "%s: the header length %llu is past the format's cap of %zu bytes", OP,
                        (unsigned long long)n, TD_SAFETENSORS_MAX_HEADER);
    if (n > avail)
        return td_error(TD_E_INVALID, "%s: the header length %llu runs past the end of %s (%llu bytes follow the "
                        "length)", OP, (unsigned long long)n, what, (unsigned long long)avail);
    if (n < 2)
        return td_error(TD_E_INVALID, "%s: the header length %llu is too small for a JSON object", OP,
                        (unsigned long long)n);
    return TD_OK;
}

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = (v << 8) | p[k];
    return v;
}

static td_status load_from(const st_source *src, const char *header, size_t n, td_device *device,
                           td_safetensors **out)
{
    td_safetensors *st = td_calloc(1, sizeof *st);
    if (st == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory", OP);
    td_status rc = parse_json(header, n, src->data_len, st);
    if (rc == TD_OK)
        rc = check_layout(st, src->data_len);
    if (rc == TD_OK)
        rc = make_tensors(st, src, device);
    if (rc != TD_OK) {
        td_safetensors_free(st);
        return rc;
    }
    *out = st;
    return TD_OK;
}

td_status td_safetensors_parse(const void *data, size_t size, td_device *device, td_safetensors **out)
{
    if (out == NULL)
        return td_err_null(OP, "out");
    *out = NULL;
    if (data == NULL)
        return td_err_null(OP, "data");
    if (device == NULL)
        return td_err_null(OP, "device");
    if (size < 8)
        return td_error(TD_E_INVALID, "%s: the buffer is %zu bytes, shorter than the 8-byte header length", OP, size);
    const unsigned char *bytes = data;
    const uint64_t n = le64(bytes);
    TD_TRY(check_header_len(n, (uint64_t)size - 8, "the buffer"));
    const st_source src = { bytes, NULL, "the buffer", 8 + n, (uint64_t)size - 8 - n };
    return load_from(&src, (const char *)bytes + 8, (size_t)n, device, out);
}

td_status td_safetensors_load(const char *path, td_device *device, td_safetensors **out)
{
    if (out == NULL)
        return td_err_null(OP, "out");
    *out = NULL;
    if (path == NULL)
        return td_err_null(OP, "path");
    if (device == NULL)
        return td_err_null(OP, "device");
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return td_error(TD_E_INVALID, "%s: cannot open '%s': %s", OP, path, strerror(errno));
    char what[NAME_IN_MSG + 8];
    snprintf(what, sizeof what, "'%.*s'", NAME_IN_MSG, path);
    td_status rc = TD_OK;
    long size = -1;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        rc = td_error(TD_E_INVALID, "%s: cannot find the size of %s: %s", OP, what, strerror(errno));
    unsigned char len8[8];
    if (rc == TD_OK && size < 8)
        rc = td_error(TD_E_INVALID, "%s: %s is %ld bytes, shorter than the 8-byte header length", OP, what, size);
    if (rc == TD_OK && fread(len8, 1, 8, f) != 8)
        rc = td_error(TD_E_INVALID, "%s: cannot read the header length of %s: %s", OP, what,
                      ferror(f) ? strerror(errno) : "end of file");
    const uint64_t n = rc == TD_OK ? le64(len8) : 0;
    if (rc == TD_OK)
        rc = check_header_len(n, (uint64_t)size - 8, what);
    char *header = NULL;
    if (rc == TD_OK) {
        header = td_malloc((size_t)n);
        if (header == NULL)
            rc = td_error(TD_E_NOMEM, "%s: out of memory for the %llu-byte header of %s", OP, (unsigned long long)n,
                          what);
    }
    if (rc == TD_OK && fread(header, 1, (size_t)n, f) != (size_t)n)
        rc = td_error(TD_E_INVALID, "%s: %s ends inside its header (truncated while reading?)", OP, what);
    if (rc == TD_OK) {
        const st_source src = { NULL, f, what, 8 + n, (uint64_t)size - 8 - n };
        rc = load_from(&src, header, (size_t)n, device, out);
    }
    td_free(header);
    fclose(f);
    return rc;
}

#endif /* TD_HAVE_CJSON */
