/* tdispatch public GGUF API: read and write GGUF v3 model files (ggml's format).
 *
 * A file is a header (magic "GGUF", version 3, tensor and key/value counts), typed
 * key/values (metadata), tensor infos (name, dims, ggml type, offset) and the tensor data,
 * each tensor at a multiple of the file's alignment (the u32 key "general.alignment",
 * 32 when absent). Everything is little-endian.
 *
 * Dims: GGUF lists a tensor's dims innermost first (ggml's ne[0] is the contiguous one, the
 * row length); tdispatch shapes are row-major, outermost first. td_gguf_tensor_info gives
 * both (dims as the file has them, shape reversed), and the writer takes tdispatch shapes.
 * So a [rows, cols] tensor is stored with dims {cols, rows}, as ggml stores a matrix.
 *
 * Tensor types: every ggml type (ids below) is read and written as raw bytes with its type
 * id; their byte layout is ggml's (q8_0: 32 values in 34 bytes, an f16 scale then 32 int8;
 * q4_0: 32 values in 18 bytes, an f16 scale then 16 bytes of 4-bit pairs). Today's tensor
 * API reads a tensor as f32 (td_gguf_load_tensor: f32, f16, bf16, q8_0, q4_0) or in its own
 * dtype (td_gguf_load_tensor_dtype: every type a td_dtype has, q8_0 / q4_0 as raw blocks),
 * and writes a td_tensor in its dtype, converted or quantized; the other types are raw
 * bytes + type.
 *
 * Every count, length and offset of a file is checked before it is used: a truncated,
 * oversized or lying file is TD_E_INVALID with a message, and nothing is kept or leaked. */
#ifndef TD_GGUF_H
#define TD_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "td_core.h"

#ifdef __cplusplus
extern "C" {
#endif
TD_API_BEGIN

#define TD_GGUF_VERSION 3
#define TD_GGUF_DEFAULT_ALIGNMENT 32
/* At most this many dims per tensor (the format's "currently at most 4", ggml's limit). */
#define TD_GGUF_MAX_DIMS 4
/* Tensor names are at most this many bytes (the format's limit; ggml reads up to 63). */
#define TD_GGUF_MAX_NAME 64
/* Keys are at most this many bytes (the format's limit). */
#define TD_GGUF_MAX_KEY 65535

/* The value types of key/values (the format's ids). */
typedef enum td_gguf_type {
    TD_GGUF_UINT8 = 0,
    TD_GGUF_INT8 = 1,
    TD_GGUF_UINT16 = 2,
    TD_GGUF_INT16 = 3,
    TD_GGUF_UINT32 = 4,
    TD_GGUF_INT32 = 5,
    TD_GGUF_FLOAT32 = 6,
    TD_GGUF_BOOL = 7, /* one byte, 0 or 1; bool on the host */
    TD_GGUF_STRING = 8,
    TD_GGUF_ARRAY = 9,
    TD_GGUF_UINT64 = 10,
    TD_GGUF_INT64 = 11,
    TD_GGUF_FLOAT64 = 12
} td_gguf_type;

/* ggml tensor type ids (ggml.h's enum ggml_type; 4, 5, 31-33 and 36-38 are retired there). */
enum {
    TD_GGML_F32 = 0,
    TD_GGML_F16 = 1,
    TD_GGML_Q4_0 = 2,
    TD_GGML_Q4_1 = 3,
    TD_GGML_Q5_0 = 6,
    TD_GGML_Q5_1 = 7,
    TD_GGML_Q8_0 = 8,
    TD_GGML_Q8_1 = 9,
    TD_GGML_Q2_K = 10,
    TD_GGML_Q3_K = 11,
    TD_GGML_Q4_K = 12,
    TD_GGML_Q5_K = 13,
    TD_GGML_Q6_K = 14,
    TD_GGML_Q8_K = 15,
    TD_GGML_IQ2_XXS = 16,
    TD_GGML_IQ2_XS = 17,
    TD_GGML_IQ3_XXS = 18,
    TD_GGML_IQ1_S = 19,
    TD_GGML_IQ4_NL = 20,
    TD_GGML_IQ3_S = 21,
    TD_GGML_IQ2_S = 22,
    TD_GGML_IQ4_XS = 23,
    TD_GGML_I8 = 24,
    TD_GGML_I16 = 25,
    TD_GGML_I32 = 26,
    TD_GGML_I64 = 27,
    TD_GGML_F64 = 28,
    TD_GGML_IQ1_M = 29,
    TD_GGML_BF16 = 30,
    TD_GGML_TQ1_0 = 34,
    TD_GGML_TQ2_0 = 35,
    TD_GGML_MXFP4 = 39,
    TD_GGML_NVFP4 = 40,
    TD_GGML_Q1_0 = 41,
    TD_GGML_Q2_0 = 42
};

/* A ggml type's name ("f32", "q8_0", ...; NULL for an id ggml does not have), and its block:
 * *block values take *block_bytes bytes (f32: 1 and 4; q8_0: 32 and 34; q4_0: 32 and 18).
 * TD_E_INVALID for an unknown id. */
const char *td_gguf_ggml_type_name(uint32_t ggml_type);
td_status td_gguf_ggml_type_block(uint32_t ggml_type, int64_t *block, size_t *block_bytes);
/* A value type's name ("uint32", "string", ...; NULL for an id the format does not have). */
const char *td_gguf_type_name(td_gguf_type type);

/* ---- reading ---- */

/* A parsed file: its key/values and tensor infos, and the bytes they point into. */
typedef struct td_gguf td_gguf;

/* One tensor of a file. Pointers are borrowed: valid until td_gguf_free. */
typedef struct td_gguf_tensor_info {
    const char *name;                 /* NUL-terminated (the reader refuses names holding a NUL) */
    uint32_t ggml_type;               /* a TD_GGML_* id */
    int ndim;                         /* 0..TD_GGUF_MAX_DIMS */
    uint64_t dims[TD_GGUF_MAX_DIMS];  /* as the file lists them: innermost (contiguous) first */
    int64_t shape[TD_GGUF_MAX_DIMS];  /* tdispatch's order: outermost first (dims reversed) */
    int64_t numel;                    /* values (1 for ndim 0) */
    uint64_t offset;                  /* of the data, relative to the data section, as in the file */
    uint64_t nbytes;                  /* numel / block * block bytes */
    const void *data;                 /* the nbytes bytes, as the file holds them */
} td_gguf_tensor_info;

/* Parses size bytes at data (copied: data is not kept). */
td_status td_gguf_parse(const void *data, size_t size, td_gguf **out);
/* Opens and parses the file at path (mapped read-only where the system has mmap, else read). */
td_status td_gguf_open(const char *path, td_gguf **out);
/* Releases the file; NULL is ignored. */
void td_gguf_free(td_gguf *g);

/* The file's alignment (general.alignment, or 32) and where its data section starts. */
td_status td_gguf_alignment(const td_gguf *g, uint32_t *alignment);
td_status td_gguf_data_offset(const td_gguf *g, uint64_t *offset);

/* Key/values in file order: how many, the key and value type at index (borrowed key). */
td_status td_gguf_kv_count(const td_gguf *g, size_t *count);
td_status td_gguf_kv_at(const td_gguf *g, size_t index, const char **key, td_gguf_type *type);
/* The index of key; TD_E_RANGE when the file has no such key. */
td_status td_gguf_find_key(const td_gguf *g, const char *key, size_t *index);
/* Typed values by key: TD_E_RANGE for a missing key, TD_E_DTYPE when the value has another
 * type (no conversion, except td_gguf_get_int: any integer type that fits an int64_t). */
td_status td_gguf_get_u8(const td_gguf *g, const char *key, uint8_t *out);
td_status td_gguf_get_i8(const td_gguf *g, const char *key, int8_t *out);
td_status td_gguf_get_u16(const td_gguf *g, const char *key, uint16_t *out);
td_status td_gguf_get_i16(const td_gguf *g, const char *key, int16_t *out);
td_status td_gguf_get_u32(const td_gguf *g, const char *key, uint32_t *out);
td_status td_gguf_get_i32(const td_gguf *g, const char *key, int32_t *out);
td_status td_gguf_get_u64(const td_gguf *g, const char *key, uint64_t *out);
td_status td_gguf_get_i64(const td_gguf *g, const char *key, int64_t *out);
td_status td_gguf_get_f32(const td_gguf *g, const char *key, float *out);
td_status td_gguf_get_f64(const td_gguf *g, const char *key, double *out);
td_status td_gguf_get_bool(const td_gguf *g, const char *key, bool *out);
td_status td_gguf_get_int(const td_gguf *g, const char *key, int64_t *out);
/* A string value: NUL-terminated, *len bytes (it may hold NUL bytes; len may be NULL). */
td_status td_gguf_get_string(const td_gguf *g, const char *key, const char **s, size_t *len);
/* An array value: its element type and count. Arrays of arrays are refused by the reader. */
td_status td_gguf_get_array_info(const td_gguf *g, const char *key, td_gguf_type *elem_type, size_t *count);
/* Copies the n elements of a numeric or bool array into out (uint32_t for TD_GGUF_UINT32,
 * float for TD_GGUF_FLOAT32, bool for TD_GGUF_BOOL, ...); elem_type and n must be the
 * array's. */
td_status td_gguf_get_array(const td_gguf *g, const char *key, td_gguf_type elem_type, void *out, size_t n);
/* Element index of a string array (borrowed, NUL-terminated, *len bytes; len may be NULL). */
td_status td_gguf_get_array_string(const td_gguf *g, const char *key, size_t index, const char **s, size_t *len);

/* Tensors in file order: how many, the info at index, the index of a name (TD_E_RANGE when
 * none has it). */
td_status td_gguf_tensor_count(const td_gguf *g, size_t *count);
td_status td_gguf_tensor_info_at(const td_gguf *g, size_t index, td_gguf_tensor_info *info);
td_status td_gguf_find_tensor(const td_gguf *g, const char *name, size_t *index);
/* The tensor of that name as a new f32 td_tensor on device, in tdispatch's shape: f32 as
 * is, f16 and bf16 widened exactly, q8_0 and q4_0 dequantized (exactly: each value is its
 * block's integer times the f16 scale). Other types: TD_E_UNSUPPORTED naming the type. */
td_status td_gguf_load_tensor(const td_gguf *g, const char *name, td_device *device, td_tensor **out);
/* The tensor of that name in its own type: a td_tensor of the td_dtype with that ggml id
 * (f32, f16, bf16, f64, q8_0, q4_0 float; i8, i32, i64 int), its bytes copied as the file
 * holds them (a q8_0 / q4_0 tensor is raw blocks: td_float_matmul_nt takes it as weights).
 * TD_E_UNSUPPORTED for a type no td_dtype stores, or a device that does not store it. */
td_status td_gguf_load_tensor_dtype(const td_gguf *g, const char *name, td_device *device, td_tensor **out);

/* ---- writing ---- */

/* A file being put together: key/values and tensors in the order added, then written. */
typedef struct td_gguf_writer td_gguf_writer;

td_status td_gguf_writer_new(td_gguf_writer **out);
/* Releases the writer and its copies; NULL is ignored. */
void td_gguf_writer_free(td_gguf_writer *w);
/* Key/values: a key is 1 to 65535 ASCII bytes, added once. "general.alignment" must be a
 * u32, a power of two and a multiple of 8; it sets the alignment of the data (else 32). */
td_status td_gguf_writer_add_u8(td_gguf_writer *w, const char *key, uint8_t v);
td_status td_gguf_writer_add_i8(td_gguf_writer *w, const char *key, int8_t v);
td_status td_gguf_writer_add_u16(td_gguf_writer *w, const char *key, uint16_t v);
td_status td_gguf_writer_add_i16(td_gguf_writer *w, const char *key, int16_t v);
td_status td_gguf_writer_add_u32(td_gguf_writer *w, const char *key, uint32_t v);
td_status td_gguf_writer_add_i32(td_gguf_writer *w, const char *key, int32_t v);
td_status td_gguf_writer_add_u64(td_gguf_writer *w, const char *key, uint64_t v);
td_status td_gguf_writer_add_i64(td_gguf_writer *w, const char *key, int64_t v);
td_status td_gguf_writer_add_f32(td_gguf_writer *w, const char *key, float v);
td_status td_gguf_writer_add_f64(td_gguf_writer *w, const char *key, double v);
td_status td_gguf_writer_add_bool(td_gguf_writer *w, const char *key, bool v);
/* len bytes of s (copied; any bytes). */
td_status td_gguf_writer_add_string(td_gguf_writer *w, const char *key, const char *s, size_t len);
/* n elements of a numeric or bool type from host memory (copied), as td_gguf_get_array reads them. */
td_status td_gguf_writer_add_array(td_gguf_writer *w, const char *key, td_gguf_type elem_type, const void *data, size_t n);
/* n strings; lens[i] bytes of strs[i], or strlen when lens is NULL (copied). */
td_status td_gguf_writer_add_string_array(td_gguf_writer *w, const char *key, const char *const *strs, const size_t *lens, size_t n);
/* A tensor as raw bytes (copied): a ggml type, a tdispatch (row-major) shape of at most
 * TD_GGUF_MAX_DIMS dims whose last dim is a multiple of the type's block, and nbytes equal
 * to the size that shape has in that type. Names are 0 to 63 bytes, no NUL, unique. */
td_status td_gguf_writer_add_tensor(td_gguf_writer *w, const char *name, uint32_t ggml_type, const int64_t *shape, int ndim, const void *data, size_t nbytes);
/* A float td_tensor (any device; autodiff by value) stored as ggml_type: its own dtype's
 * type as is (q8_0 / q4_0 tensors as their blocks); a plain float dtype (f32, f16, bf16,
 * f64) as another plain float type (rounded to nearest even) or as TD_GGML_Q8_0 /
 * TD_GGML_Q4_0 (td_float_quantize: the last dim must be a multiple of 32). Others:
 * TD_E_UNSUPPORTED. */
td_status td_gguf_writer_add_td_tensor(td_gguf_writer *w, const char *name, const td_tensor *t, uint32_t ggml_type);
/* The file's size in bytes, and the file into size bytes at buf (TD_E_INVALID when size differs). */
td_status td_gguf_writer_size(const td_gguf_writer *w, size_t *size);
td_status td_gguf_writer_write_to(const td_gguf_writer *w, void *buf, size_t size);
/* Writes the file to path, atomically (path.partial renamed once whole). */
td_status td_gguf_writer_write(const td_gguf_writer *w, const char *path);

/* Writes n f32 tensors under their names as TD_GGML_F32, with no key/values (alignment 32):
 * the shortest way to save. */
td_status td_gguf_save(const char *path, const char *const *names, td_tensor *const *tensors, size_t n);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
