/* CPU backend internals shared by its source files: threading macros and iteration helpers. */
#ifndef TD_CPU_INTERNAL_H
#define TD_CPU_INTERNAL_H

#include <string.h>

#include "td_backend_cpu.h"

/* Below this many elements a loop runs on the calling thread: a thread team costs
 * microseconds, far more than the loop itself. */
#define TD_CPU_PAR_MIN 32768

/* The most threads td_set_num_threads / TD_NUM_THREADS accept. */
#define TD_CPU_MAX_THREADS 1024

/* The thread count of the kernels (cpu_threads.c): what td_set_num_threads set, else
 * TD_NUM_THREADS, else OpenMP's default, read once. Every parallel region of the kernels
 * names it in a num_threads clause (TD_CPU_NT), since omp_set_num_threads would set only
 * the calling thread's ICV and the library is called from any number of user threads. */
int td_cpu_threads(void);
/* Sets the calling thread's OpenMP ICV (omp_set_num_threads) to td_cpu_threads() when it
 * does not hold it yet (cheap when it does): call it before calling an OpenMP-threaded
 * library (OpenBLAS's OpenMP build, oneDNN), which sizes its team by omp_get_max_threads()
 * of the calling thread. A no-op inside a parallel region, where those run on one thread.
 * Returns the count those libraries will see (1 inside a parallel region). */
int td_cpu_apply_threads(void);
/* Why TD_NUM_THREADS was ignored ("" when it was not), for tdinfo's cpu line. */
const char *td_cpu_threads_note(void);
/* The OpenMP wait policy in effect and who chose it (cpu_threads.c), for tdinfo's cpu line. */
const char *td_cpu_wait_note(void);

#define TD_CPU_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define TD_CPU_OMP_FOR TD_CPU_PRAGMA(omp parallel for num_threads(td_cpu_threads()) schedule(static))
/* the same with reduction(OP : VAR), usable inside other macros' arguments */
#define TD_CPU_OMP_REDUCE(OP, VAR) \
    TD_CPU_PRAGMA(omp parallel for num_threads(td_cpu_threads()) reduction(OP : VAR) schedule(static))
#else
#define TD_CPU_OMP_FOR
#define TD_CPU_OMP_REDUCE(OP, VAR)
#endif

/* for (int64_t I = 0; I < N; I++) BODY, threaded when N is large. The branch (rather
 * than an OpenMP `if` clause) keeps small tensors off the OpenMP runtime entirely. */
#define TD_CPU_FOR(I, N, ...)                                 \
    do {                                                      \
        const int64_t td_n_ = (N);                            \
        if (td_n_ >= TD_CPU_PAR_MIN) {                        \
            TD_CPU_OMP_FOR                                    \
            for (int64_t I = 0; I < td_n_; I++) {             \
                __VA_ARGS__                                   \
            }                                                 \
        } else {                                              \
            for (int64_t I = 0; I < td_n_; I++) {             \
                __VA_ARGS__                                   \
            }                                                 \
        }                                                     \
    } while (0)

/* Like TD_CPU_FOR over `units` work items that each cover about `work / units` elements. */
#define TD_CPU_FOR_WORK(I, UNITS, WORK, ...)                  \
    do {                                                      \
        const int64_t td_u_ = (UNITS);                        \
        if ((WORK) >= TD_CPU_PAR_MIN && td_u_ > 1) {          \
            TD_CPU_OMP_FOR                                    \
            for (int64_t I = 0; I < td_u_; I++) {             \
                __VA_ARGS__                                   \
            }                                                 \
        } else {                                              \
            for (int64_t I = 0; I < td_u_; I++) {             \
                __VA_ARGS__                                   \
            }                                                 \
        }                                                     \
    } while (0)

/* The widest vector instructions the kernels may use (cpu_vecmath.c): what the processor
 * has, checked once, lowered by TD_CPU_CAPABILITY=default|avx2. */
enum { TD_CPU_SIMD_NONE = 0, TD_CPU_SIMD_AVX2 = 1, TD_CPU_SIMD_AVX512 = 2 };
int td_cpu_simd(void);

/* Transcendental kernels over contiguous floats (cpu_vecmath.c): SLEEF vectors where the
 * library and AVX2 or AVX-512 are there, libm otherwise; threaded in chunks. */
typedef enum td_cpu_vfn {
    TD_CPU_VEXP, TD_CPU_VLOG, TD_CPU_VSIN, TD_CPU_VCOS, TD_CPU_VTANH, TD_CPU_VSIGMOID, TD_CPU_VGELU
} td_cpu_vfn;
void td_cpu_vmath(td_cpu_vfn fn, const float *x, float *y, int64_t n);
bool td_cpu_vmath_vectorized(void);
/* gelu's gradient y = g (Phi(x) + x phi(x)) over contiguous floats in one pass (SLEEF erf and
 * exp where td_cpu_vmath has them), and the same for one element (libm). */
void td_cpu_vgelu_backward(const float *g, const float *x, float *y, int64_t n);
float td_cpu_gelu_backward1(float g, float x);

/* Whole-range float reductions (cpu_reduce.c), threaded in fixed chunks combined in order:
 * the sum (in double), and the max, min or max of |x| of n >= 1 values, NaN if any is NaN. */
typedef enum td_cpu_ext { TD_CPU_EXT_MAX, TD_CPU_EXT_MIN, TD_CPU_EXT_MAX_ABS } td_cpu_ext;
double td_cpu_sum_f32(const float *p, int64_t n);
/* The same sum over f16 / bf16 values (dt), bit for bit td_cpu_sum_f32 of their f32 widening;
 * TD_E_NOMEM when a chunk's f32 buffer cannot be had. */
td_status td_cpu_sum_half(td_dtype dt, const uint16_t *p, int64_t n, double *sum);
float td_cpu_extreme_f32(const float *p, int64_t n, td_cpu_ext kind);
/* f64 paths (cpu_f64.c) of the kernels whose CPU spec lists f64 in op_dtypes. */
typedef enum td_cpu_f64_reduce {
    TD_CPU_F64_SUM, TD_CPU_F64_MAX, TD_CPU_F64_ARGMAX, TD_CPU_F64_MIN, TD_CPU_F64_ARGMIN, TD_CPU_F64_MEAN,
    TD_CPU_F64_PROD, TD_CPU_F64_MAX_ABS, TD_CPU_F64_ANY, TD_CPU_F64_ALL
} td_cpu_f64_reduce;
void td_cpu_f64_sum(const td_tensor *a, td_tensor *out);
/* Along dim (out [outer, 1, inner]) or (reduce_all) over the whole tensor (one value):
 * double results, int32 indices (ARG*), bools (ANY, ALL). */
void td_cpu_f64_reduce_dim(const td_tensor *a, int64_t dim, td_tensor *out, td_cpu_f64_reduce kind);
void td_cpu_f64_reduce_all(const td_tensor *a, td_tensor *out, td_cpu_f64_reduce kind);
void td_cpu_f64_matmul(const td_tensor *a, bool ta, const td_tensor *b, bool tb, td_tensor *out);

/* Row-major strides of a shape, in elements. */
/* The sum of x[0, n) in 8 partial sums, a lane each (the compiler keeps them in one vector
 * register), then the lanes and the tail: the row sums of attention's softmax and of
 * layer norm. */
static inline float td_cpu_sum8(const float *restrict x, int64_t n)
{
    float s8[8] = { 0 };
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int t = 0; t < 8; t++)
            s8[t] += x[j + t];
    float s = 0.0f;
    for (int t = 0; t < 8; t++)
        s += s8[t];
    for (; j < n; j++)
        s += x[j];
    return s;
}

static inline void td_cpu_strides(const td_shape *s, int64_t strides[TD_MAX_DIMS])
{
    int64_t acc = 1;
    for (int d = s->ndim - 1; d >= 0; d--) {
        strides[d] = acc;
        acc *= s->dims[d];
    }
}

/* Broadcast iteration over an output shape in rows (the last dim), for up to 3 inputs. */
typedef struct td_cpu_bcast {
    int ndim;                          /* of the output, at least 1 */
    int64_t dims[TD_MAX_DIMS];
    int64_t inner;                     /* length of a row */
    int64_t rows;
    int64_t st[3][TD_MAX_DIMS];        /* element strides of each input, 0 on broadcast dims */
    int nin;
} td_cpu_bcast;

void td_cpu_bcast_init(td_cpu_bcast *it, const td_shape *out, int nin, const td_shape *const *ins);
/* Offsets of the first element of `row` in each input. */
static inline void td_cpu_bcast_row(const td_cpu_bcast *it, int64_t row, int64_t off[3])
{
    off[0] = off[1] = off[2] = 0;
    for (int d = it->ndim - 2; d >= 0 && row > 0; d--) {
        const int64_t idx = row % it->dims[d];
        row /= it->dims[d];
        for (int k = 0; k < it->nin; k++)
            off[k] += idx * it->st[k][d];
    }
}

/* One matrix product (cpu_matmul.c): C (m x n, row-major, ldc n) = A' B' + beta C, A' = A or
 * its transpose (m x k), B' likewise (k x n). CBLAS when found and the engine (td_cpu_engine)
 * is not the portable one, else oneDNN's sgemm, else a portable loop; called from inside a
 * thread team, where OpenBLAS's OpenMP build runs on the calling thread. */
void td_cpu_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                 float *c);

/* y[m, n] = x[m, k] W^T, x f32 row-major, W [n, k] in rows of q8_0 or q4_0 blocks (ggml's
 * layout; cpu_quant.c): x's rows are quantized to q8_0 and each output is a block-wise
 * integer dot product, threaded over n. TD_E_SHAPE when k is not a multiple of 32 (or bad
 * sizes), TD_E_INVALID for an unknown kind or weights at an odd address, TD_E_NOMEM; a row
 * of x holding inf or NaN gives NaN outputs. */
enum { TD_CPU_Q8_0 = 0, TD_CPU_Q4_0 = 1 };
/* Element types of the low-precision products (until td_dtype has them). */
enum { TD_CPU_GEMM_F32 = 0, TD_CPU_GEMM_BF16 = 1, TD_CPU_GEMM_F16 = 2 };
/* C = A B with A [m, k], B [k, n] (stored [n, k] when tb) in bf16 or f16 bits, C [m, n] in the
 * same type or f32 (cpu_quant.c): oneDNN's matmul when the engine is oneDNN and it has one for
 * the type on this CPU, else both converted to f32 (td_convert.h), td_cpu_gemm, and C rounded
 * back (nearest even). *path (may be NULL) names which ran. TD_E_INVALID / TD_E_SHAPE /
 * TD_E_NULL / TD_E_NOMEM with a message naming op. */
td_status td_cpu_gemm_lowp(const char *op, int in_type, int out_type, bool tb, int64_t m, int64_t n, int64_t k,
                           const void *a, const void *b, void *c, const char **path);
td_status td_cpu_matmul_quant(const char *op, int wkind, int64_t m, int64_t n, int64_t k, const float *x,
                              const void *w, float *y);

/* The engines behind matmul and conv2d, best first; td_cpu_engine() is the best this build
 * has, lowered by TD_CPU_ENGINE=dnnl|blas|portable (read at each call, so that a test or a
 * benchmark can compare engines in one process; a name this build lacks, or an unknown one,
 * leaves the default). */
typedef enum td_cpu_engine_kind { TD_CPU_ENGINE_PORTABLE, TD_CPU_ENGINE_BLAS, TD_CPU_ENGINE_DNNL } td_cpu_engine_kind;
td_cpu_engine_kind td_cpu_engine(void);
/* Says on stderr, once, that OpenBLAS runs an older core than the CPU has (cpu_info.c). */
void td_cpu_blas_warn_once(void);

/* Whether OpenBLAS's core (openblas_get_corename()) uses older vector instructions than a
 * CPU with these features has: then the OPENBLAS_CORETYPE value that fixes it ("SkylakeX",
 * "Haswell"), else NULL (also for a core name it does not know). A pure function, for tests. */
static inline const char *td_cpu_blas_core_fix(const char *core, bool avx2, bool avx512f)
{
    /* the cores by the widest instructions of their sgemm kernels */
    static const char *const avx512_cores[] = { "skylakex", "cooperlake", "sapphirerapids" };
    static const char *const avx2_cores[] = { "haswell", "zen", "excavator" };
    static const char *const old_cores[] = { "katmai", "coppermine", "northwood", "prescott", "banias", "atom",
                                             "core2", "penryn", "dunnington", "nehalem", "athlon", "opteron",
                                             "opteron_sse3", "barcelona", "nano", "sandybridge", "bobcat",
                                             "bulldozer", "piledriver", "steamroller" };
    if (core == NULL)
        return NULL;
    char low[32];
    size_t i = 0;
    for (; core[i] != '\0' && i + 1 < sizeof low; i++)
        low[i] = (char)(core[i] >= 'A' && core[i] <= 'Z' ? core[i] - 'A' + 'a' : core[i]);
    low[i] = '\0';
    int level = -1; /* 0: older than AVX2, 1: AVX2, 2: AVX-512 */
    for (size_t j = 0; j < sizeof avx512_cores / sizeof avx512_cores[0]; j++)
        level = strcmp(low, avx512_cores[j]) == 0 ? 2 : level;
    for (size_t j = 0; j < sizeof avx2_cores / sizeof avx2_cores[0]; j++)
        level = strcmp(low, avx2_cores[j]) == 0 ? 1 : level;
    for (size_t j = 0; j < sizeof old_cores / sizeof old_cores[0]; j++)
        level = strcmp(low, old_cores[j]) == 0 ? 0 : level;
    if (level < 0)
        return NULL;
    if (avx512f && level < 2)
        return "SkylakeX";
    if (avx2 && level < 1)
        return "Haswell";
    return NULL;
}

#ifdef TD_HAVE_DNNL
/* oneDNN (cpu_dnnl.c). dnnl_sgemm as td_cpu_gemm takes it (false when oneDNN fails: the
 * caller uses another engine); the ISA its JIT kernels use; its version. */
bool td_cpu_dnnl_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                       float *c);
const char *td_cpu_dnnl_isa(void);
void td_cpu_dnnl_version(char *buf, size_t cap);
/* A conv2d's geometry (x [n, c, h, w], weight [o, c / groups, kh, kw], out [n, o, oh, ow]),
 * the key of the primitive cache: compared bytewise, so fill every field. */
typedef struct td_cpu_conv_shape {
    int64_t n, c, h, w, o, kh, kw, oh, ow, groups, sh, sw, ph, pw, dh, dw;
} td_cpu_conv_shape;
enum { TD_CPU_CONV_FWD, TD_CPU_CONV_BWD_DATA, TD_CPU_CONV_BWD_WEIGHTS };
/* One convolution by oneDNN's primitive for its shape, cached (thread-safe; freed at exit or
 * by td_cpu_dnnl_release). fwd: in0 x, in1 weight, bias -> out y; bwd data: in0 grad, in1
 * weight -> out dx; bwd weights: in0 x, in1 grad -> out dweight (overwritten). TD_E_UNSUPPORTED
 * (no error set) when oneDNN does not take the shape; TD_E_NOMEM / TD_E_DEVICE with a message
 * naming op when it fails. */
td_status td_cpu_dnnl_conv(const char *op, int kind, const td_cpu_conv_shape *s, const float *in0, const float *in1,
                           const float *bias, float *out);
/* Frees the cached primitives and the engine (made again on next use). */
void td_cpu_dnnl_release(void);
/* C = A B by oneDNN's matmul primitive, cached by types and shape (thread-safe): A [m, k] and
 * B [k, n] (stored [n, k] when tb) row-major in bf16 or f16 bits (in_type), C [m, n] in the
 * same type or f32 (out_type); products accumulate in f32, C rounds once (nearest even).
 * m, n, k > 0. With a NULL it only builds the primitive. impl (may be NULL) receives
 * oneDNN's implementation name ("brg:avx512_core_bf16", ...), which names the ISA it uses.
 * TD_E_UNSUPPORTED when oneDNN has no such matmul on this CPU (f16 before AVX512-FP16 /
 * AMX-FP16, bf16 without AVX-512: convert and use sgemm there), TD_E_INVALID for other
 * types, TD_E_NOMEM / TD_E_DEVICE when it fails; each with a message naming op. */
td_status td_cpu_dnnl_gemm_lowp(const char *op, int in_type, int out_type, bool tb, int64_t m, int64_t n, int64_t k,
                                const void *a, const void *b, void *c, char *impl, size_t impl_cap);
#endif

/* Copies elements of size esz over the index space `dims` (ndim dims, 0 allowed):
 * dst[dst_off + sum(i_d * dst_st[d])] = src[src_off + sum(i_d * src_st[d])]. */
void td_cpu_strided_copy(void *dst, const int64_t *dst_st, int64_t dst_off, const void *src,
                         const int64_t *src_st, int64_t src_off, size_t esz, int ndim, const int64_t *dims);

/* Host memory from the tensor pool (cpu_device.c; scratch for oneDNN): `bytes` bytes, at
 * least 1, malloc-aligned; given back with the same `bytes`. TD_E_NOMEM with a message. */
td_status td_cpu_block_take(size_t bytes, void **out);
void td_cpu_block_give(void *p, size_t bytes);

static inline size_t td_cpu_nbytes(const td_tensor *t)
{
    return td_dtype_bytes(td_be_dtype(t), td_be_numel(t));
}

/* ---- the int class's dtypes (docs/dtypes.md section 7) ----
 * TD_CPU_INT_CASES(dtype, body) runs body once, in a block where T is dtype's element type
 * (int32_t for i32, the default, int64_t for i64, int8_t for i8, uint8_t for u8), U its
 * unsigned twin and A the unsigned type of at least 32 bits that sums and products
 * accumulate in (a result modulo 2^32 or 2^64 reduces to the same one modulo 2^n). One
 * body per op, so one source for every int dtype. Arithmetic wraps modulo 2^n: it runs in A
 * and converts back to T through U (TD_CPU_WRAP): unsigned arithmetic has no overflow in
 * C, and converting an out-of-range value to a signed type is implementation-defined in
 * C11 and modular on every compiler we build with. */
#define TD_CPU_INT_CASE_(TT, UU, AA, ...)              \
    {                                                  \
        typedef TT T;                                  \
        typedef UU U;                                  \
        typedef AA A;                                  \
        (void)(sizeof(T) + sizeof(U) + sizeof(A));     \
        __VA_ARGS__                                    \
    }                                                  \
    break;
#define TD_CPU_INT_CASES(DT, ...)                                          \
    switch (DT) {                                                          \
    case TD_I64: TD_CPU_INT_CASE_(int64_t, uint64_t, uint64_t, __VA_ARGS__) \
    case TD_I8: TD_CPU_INT_CASE_(int8_t, uint8_t, uint32_t, __VA_ARGS__)    \
    case TD_U8: TD_CPU_INT_CASE_(uint8_t, uint8_t, uint32_t, __VA_ARGS__)   \
    default: TD_CPU_INT_CASE_(int32_t, uint32_t, uint32_t, __VA_ARGS__)     \
    }

/* Inside TD_CPU_INT_CASES: any integer value modulo 2^n as a T; wrapping +, -, *, unary -. */
#define TD_CPU_WRAP(x) ((T)(U)(x))
#define TD_CPU_WADD(x, y) TD_CPU_WRAP((A)(x) + (A)(y))
#define TD_CPU_WSUB(x, y) TD_CPU_WRAP((A)(x) - (A)(y))
#define TD_CPU_WMUL(x, y) TD_CPU_WRAP((A)(x) * (A)(y))
#define TD_CPU_WNEG(x) TD_CPU_WRAP((A)0 - (A)(x))
/* a T as an accumulator term: its bits zero-extended, the same value modulo 2^n */
#define TD_CPU_ACC(x) ((A)(U)(x))

/* C's truncating division of two int values widened to int64_t (every int dtype's values
 * fit), y != 0; x / -1 is -x modulo 2^64, so INT64_MIN / -1 is INT64_MIN instead of a trap,
 * and INT32_MIN / -1 (2^31 here) wraps to INT32_MIN in TD_CPU_WRAP. */
static inline int64_t td_cpu_idiv(int64_t x, int64_t y)
{
    return y == -1 ? (int64_t)(0u - (uint64_t)x) : x / y;
}

/* torch.remainder: the result has the sign of the divisor; y != 0 (x % -1 is 0, also for
 * INT64_MIN, where C's % would trap). */
static inline int64_t td_cpu_irem(int64_t x, int64_t y)
{
    if (y == -1)
        return 0;
    const int64_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/* The same in 32 bits (values of i32, i8, u8): INT32_MIN / -1 is INT32_MIN. */
static inline int32_t td_cpu_idiv32(int32_t x, int32_t y)
{
    return y == -1 ? (int32_t)(0u - (uint32_t)x) : x / y;
}

static inline int32_t td_cpu_irem32(int32_t x, int32_t y)
{
    if (y == -1)
        return 0;
    const int32_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/* Element i of an index tensor of any int dtype (the int ops' indices have the data's
 * dtype: the mixing rule), as an int64. */
static inline int64_t td_cpu_index_at(const void *p, td_dtype dt, int64_t i)
{
    switch (dt) {
    case TD_I64: return ((const int64_t *)p)[i];
    case TD_I8: return ((const int8_t *)p)[i];
    case TD_U8: return ((const uint8_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

/* Inside TD_CPU_INT_CASES: x / y and torch.remainder(x, y) of two T (y != 0), in int64
 * for i64 and in int32 for the narrower dtypes (-128 / -1 fits), wrapped back to T. */
#define TD_CPU_IDIV(x, y)                                                    \
    (sizeof(T) == 8 ? TD_CPU_WRAP(td_cpu_idiv((int64_t)(x), (int64_t)(y))) \
                    : TD_CPU_WRAP(td_cpu_idiv32((int32_t)(x), (int32_t)(y))))
#define TD_CPU_IREM(x, y)                                                    \
    (sizeof(T) == 8 ? TD_CPU_WRAP(td_cpu_irem((int64_t)(x), (int64_t)(y))) \
                    : TD_CPU_WRAP(td_cpu_irem32((int32_t)(x), (int32_t)(y))))

#endif
