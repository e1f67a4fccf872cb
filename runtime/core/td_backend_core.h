/* What the in-tree backends (runtime/cpu, runtime/vulkan) use from the core beyond the
 * module interface, td_backend_api.h: declared functions, constants and the dtype table,
 * and no layout of td_tensor or td_device (those stay in td_internal.h, which no backend
 * includes: tests/CMakeLists.txt's backend_no_internal checks it). The generated
 * td_backend_<name>.h of an in-tree backend includes this header; td_internal.h includes
 * it too, so each declaration is made once. Not installed, and not part of the module ABI:
 * a loadable module gets td_backend_api.h alone. */
#ifndef TD_BACKEND_CORE_H
#define TD_BACKEND_CORE_H

#include <stdatomic.h>

#include "td_backend_api.h"
#include "td_core.h"

/* Largest element count a tensor may have: keeps byte sizes far from overflow. Every
 * shape rule checks it before it multiplies. */
#define TD_MAX_NUMEL (INT64_C(1) << 40)

/* Checked int64 arithmetic for sizes: *r = a op b, and whether it fit (false: *r is
 * unspecified). Every size a shape rule computes from its inputs goes through these, so a
 * huge dim (an empty tensor's may be 2^40) times a huge attribute is an error, never UB. */
#if defined(__GNUC__) || defined(__clang__)
static inline bool td_add_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}
static inline bool td_sub_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_sub_overflow(a, b, r);
}
static inline bool td_mul_ok(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
#else
static inline bool td_add_ok(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return false;
    *r = a + b;
    return true;
}
static inline bool td_sub_ok(int64_t a, int64_t b, int64_t *r)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
        return false;
    *r = a - b;
    return true;
}
static inline bool td_mul_ok(int64_t a, int64_t b, int64_t *r)
{
    if (a == 0 || b == 0) {
        *r = 0;
        return true;
    }
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN))
        return false;
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a) : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return false;
    *r = a * b;
    return true;
}
#endif


/* A function on every op's path that must be inlined, also where a large file (the
 * generated dispatch) has used up the compiler's inlining budget. */
#if defined(__GNUC__) || defined(__clang__)
#define TD_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define TD_ALWAYS_INLINE static inline
#endif


td_status td_err_null(const char *op, const char *arg);

void td_clear_error(void);


#define TD_TRY(expr)                       \
    do {                                   \
        td_status td_try_st_ = (expr);     \
        if (td_try_st_ != TD_OK)           \
            return td_try_st_;             \
    } while (0)


/* align-byte aligned (a power of two; TD_ALIGN is a cache line, and what any vector load or
 * store wants), freed with td_free: for large tensor storage. */
#define TD_ALIGN 64

/* The dtype table (generated from specs/dtypes.lua into td_dtypes.c): one row per id,
 * `declared` false in the gaps. */
typedef struct td_dtype_row {
    const char *name;
    td_class cls;
    int size;          /* bytes per block */
    int block;         /* values per block: 1, or 32 for q8_0 / q4_0 */
    bool is_default;   /* the class's default dtype */
    bool quantized;
    const char *safetensors; /* NULL: the format has no name for it */
    int ggml;          /* GGML_TYPE id, -1 for none */
    double nmse;       /* float dtypes: the generated comparisons' bound */
    td_dtype via;      /* the dtype a kernel lacking this one computes in; TD_DTYPE_COUNT: none */
    bool declared;
} td_dtype_row;
extern const td_dtype_row td_dtype_rows[TD_DTYPE_COUNT];

static inline bool td_dtype_valid(td_dtype d)
{
    return (unsigned)d < (unsigned)TD_DTYPE_COUNT && td_dtype_rows[d].declared;
}
/* Bytes of numel values of dtype: numel / block blocks for a block-quantized dtype (numel
 * is a multiple of the block there: td_tensor_new_on checks the last dim). */
static inline size_t td_dtype_bytes(td_dtype d, int64_t numel)
{
    if (!td_dtype_valid(d))
        return 0;
    const td_dtype_row *r = &td_dtype_rows[d];
    return (size_t)(numel / r->block) * (size_t)r->size;
}

/* Row converters (runtime/core/td_convert.c: F16C / AVX-512 / AVX-512 BF16 paths chosen at
 * run time, bit-exact with td_half.h): n elements from src to dst. */
void td_f16_to_f32_row(const void *src, void *dst, size_t n);
void td_f32_to_f16_row(const void *src, void *dst, size_t n);
void td_bf16_to_f32_row(const void *src, void *dst, size_t n);
void td_f32_to_bf16_row(const void *src, void *dst, size_t n);

/* The dtype traits (td_cast.c), keyed by td_dtype, ggml-style: what a kernel needs to
 * handle a dtype through f32. to/from_f32_row are set for the plain float dtypes. */
typedef void (*td_row_fn)(const void *src, void *dst, size_t n);
typedef struct td_dtype_traits {
    int size;  /* bytes per block */
    int block; /* values per block */
    td_row_fn to_f32_row;
    td_row_fn from_f32_row;
} td_dtype_traits;
extern const td_dtype_traits td_dtype_traits_table[TD_DTYPE_COUNT];

/* n elements of `from` to `to` by the rules of docs/dtypes.md section 7 (any two stored,
 * non-quantized dtypes; src and dst do not overlap). */
void td_convert_row(td_dtype from, const void *src, td_dtype to, void *dst, size_t n);

/* Row-major strides of s, in elements. */
void td_shape_strides(const td_shape *s, int64_t strides[TD_MAX_DIMS]);
/* Strides of `in` for reading it as if broadcast to `out` (right-aligned). */
void td_broadcast_strides(const td_shape *in, const td_shape *out, int64_t strides[TD_MAX_DIMS]);
/* s (at least 2 dims) with its last two dims swapped: a transposed matrix's shape. */
td_shape td_shape_swap_last2(const td_shape *s);


/* The geometry of a batched matmul out = a @ b (shapes checked by td_rule_matmul): the
 * matrix sizes, the broadcast batch shape, and each operand's batch strides counted in
 * matrices (0 where it is broadcast). Backends share it. */
typedef struct td_matmul_geometry {
    int64_t m, n, k;
    td_shape batch;
    int64_t a_stride[TD_MAX_DIMS], b_stride[TD_MAX_DIMS];
} td_matmul_geometry;
/* a, b and out as matmul sees them (1-d a or b promoted as torch.matmul does: the geometry
 * of the result with the dims the rule removed put back). */
void td_matmul_geometry_of(const td_shape *a, const td_shape *b, const td_shape *out, td_matmul_geometry *g);
void td_matmul_promote(const td_shape *a, const td_shape *b, const td_shape *out, td_shape *a2, td_shape *b2,
                       td_shape *out2);


/* s itself, or [1] for a 0-d s: how the index family (gather, scatter, select, ...) sees a
 * 0-d tensor, as PyTorch's ensure_nonempty_dim / ensure_nonempty_size do. */
td_shape td_shape_nonempty(const td_shape *s);
/* A reduction over dim of s seen as [outer, size, inner] (row-major). */
void td_reduce_geometry(const td_shape *s, int64_t dim, int64_t *outer, int64_t *size, int64_t *inner);
/* The region [starts, ends) of a row-major tensor of shape s (ranges given for the first
 * starts_len dims, full beyond): its shape, and the element offset of its first element. */
void td_slice_region(const td_shape *s, const int64_t *starts, int starts_len, const int64_t *ends,
                     td_shape *region, int64_t *offset);


/* argwhere's row-major coordinates of the true elements of mask (shape s), count of them
 * (the rule's count: a different one is TD_E_INTERNAL). Shared by the backends' kernels. */
td_status td_argwhere_fill(const char *op, const bool *mask, const td_shape *s, int64_t count, int32_t *out);


/* The op trace (td_trace.c): whether it is on (one relaxed load in every entry), the
 * clock, and the events the entries, the autodiff engine and backends write. */
extern atomic_bool td_trace_flag;
static inline bool td_tracing(void)
{
    return atomic_load_explicit(&td_trace_flag, memory_order_relaxed);
}
uint64_t td_trace_now(void);
void td_trace_event(const char *name, const char *cat, uint64_t t0, uint64_t t1, const char *args);
void td_trace_op(const char *op, const td_tensor *const *ins, int nins, const td_device *device, uint64_t t0,
                 td_status st);


td_status td_tensor_new_on(const char *op, td_device *device, td_dtype dtype, const td_shape *shape,
                           td_tensor **out);

/* A view: a new tensor of `shape` on a's device whose data is a's storage (the arms of
 * ops whose spec says view = true). shape must hold a's element count; a backend that
 * lists a view op keeps its storage row-major, sized by dtype and element count alone. */
td_status td_tensor_share(const char *op, const td_tensor *a, const td_shape *shape, td_autodiff_context ctx,
                          td_tensor **out);


/* Collectives on host memory, for backends that implement the distributed family. Each
 * first checks that the group is usable and that every rank passes the same op, dtype and
 * shape (td_dist_agree), so a disagreement is an error on all ranks. */
td_status td_dist_check(const char *op, const td_group *g);
int td_group_size_of(const td_group *g);
int td_group_rank_of(const td_group *g);
td_status td_dist_agree(const char *op, const td_group *g, int64_t tag, const td_tensor *t);
/* recv = reduce over ranks of send (send == recv reduces in place). */
td_status td_dist_all_reduce(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype, td_reduce_op rop);
td_status td_dist_broadcast(const char *op, const td_group *g, void *buf, int64_t count, td_dtype dtype, int root);
td_status td_dist_all_gather(const char *op, const td_group *g, const void *send, void *recv, int64_t count,
                             td_dtype dtype);

#include "td_rules.h"

#endif
