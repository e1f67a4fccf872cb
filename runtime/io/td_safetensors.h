/* tdispatch public safetensors API: save named tensors to a .safetensors file, load one onto a device. */
#ifndef TD_SAFETENSORS_H
#define TD_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>

#include "td_core.h"

#ifdef __cplusplus
extern "C" {
#endif
TD_API_BEGIN

/* The header of a file is capped (as the reference implementation does): a larger one is an error. */
#define TD_SAFETENSORS_MAX_HEADER ((size_t)100000000)

/* A loaded file: its tensors by name (in the order of their data in the file) and its
 * __metadata__ strings. Owned by the caller; td_safetensors_free releases it. */
typedef struct td_safetensors td_safetensors;

/* Whether this build reads safetensors files (it was built with cJSON); saving needs nothing. */
bool td_safetensors_available(void);
/* Writes n named tensors (any device; autodiff tensors by value) and n_meta metadata pairs
 * (metadata_kv holds 2 * n_meta strings: key, value, key, value, ...) to path, atomically. */
td_status td_safetensors_save(const char *path, const char *const *names, td_tensor *const *tensors, size_t n, const char *const *metadata_kv, size_t n_meta);
/* Reads the file at path and makes its tensors on device. */
td_status td_safetensors_load(const char *path, td_device *device, td_safetensors **out);
/* The same from a file's bytes in memory (size bytes at data; data is not kept). */
td_status td_safetensors_parse(const void *data, size_t size, td_device *device, td_safetensors **out);
td_status td_safetensors_count(const td_safetensors *st, size_t *count);
/* Borrowed: valid until td_safetensors_free. */
td_status td_safetensors_name(const td_safetensors *st, size_t index, const char **name);
/* A new reference to the tensor at index, or of that name (TD_E_RANGE when there is none). */
td_status td_safetensors_tensor(const td_safetensors *st, size_t index, td_tensor **out);
td_status td_safetensors_get(const td_safetensors *st, const char *name, td_tensor **out);
/* __metadata__: how many pairs, the pair at index (sorted by key), the value of a key
 * (*value NULL when the file has no such key). Borrowed strings. */
td_status td_safetensors_metadata_count(const td_safetensors *st, size_t *count);
td_status td_safetensors_metadata_at(const td_safetensors *st, size_t index, const char **key, const char **value);
td_status td_safetensors_metadata(const td_safetensors *st, const char *key, const char **value);
/* Releases the handle and its references to the tensors; NULL is ignored. */
void td_safetensors_free(td_safetensors *st);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
