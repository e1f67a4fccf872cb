/* tdispatch public API: CPU tensors over memory the library did not allocate, and the
 * address of a CPU tensor's elements, for zero-copy exchange with other libraries (the
 * Python binding's buffer protocol and DLPack: python/). */
#ifndef TD_EXTERNAL_H
#define TD_EXTERNAL_H

#include "td_core.h"

#ifdef __cplusplus
extern "C" {
#endif
TD_API_BEGIN

/* Called once, by whichever thread releases the last tensor (or view) over the memory. */
typedef void (*td_external_release_fn)(void *ctx);

/* A tensor on a CPU device whose elements are data: row-major, contiguous, aligned to its
 * element size, of shape[0..ndim). The tensor does not copy data; release(ctx) is called
 * when the last tensor over it is released (at once, before returning, for zero elements,
 * and on every error: the memory is then the caller's again). Like any tensor's, the
 * elements must not be changed while an op reads them. TD_E_INVALID for a device other
 * than a CPU one (autodiff included), a NULL or misaligned data of a non-empty shape, a bad
 * shape; TD_E_NULL for a NULL out. release may be NULL (nothing to call). */
td_status td_tensor_from_external(td_device *device, td_dtype dtype, const int64_t *shape, int ndim, void *data, td_external_release_fn release, void *ctx, td_tensor **out);

/* The address of t's elements (row-major, contiguous, td_tensor_numel of them) where they
 * are host memory: a CPU tensor, or an autodiff tensor whose value is one (its current
 * value: td_tensor_assign replaces it). Valid while t (or a view of the same storage)
 * lives; NULL is possible for zero elements. TD_E_UNSUPPORTED for other backends. */
td_status td_tensor_host_data(const td_tensor *t, void **data);

TD_API_END
#ifdef __cplusplus
}
#endif
#endif
