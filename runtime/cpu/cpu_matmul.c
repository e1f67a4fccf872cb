/* CPU backend: batched matmul (and by a transpose) with broadcast batch dims, and the one-matrix
 * product the module ops share; oneDNN's or CBLAS's sgemm when available. */
#include <stdlib.h>

#include "cpu_internal.h"
#include "td_convert.h"

#ifdef TD_HAVE_CBLAS
#include <cblas.h>
#endif

/* Below this many multiply-adds per matrix the portable loop beats a BLAS call (the same
 * threshold is used for oneDNN's sgemm, not measured separately). OpenBLAS's
 * small-matrix kernels are 8-15x faster than the portable loop from 4x4x4 up (64x32 @ 32x10,
 * an MLP layer's shape: 0.6 us against 5 us), and a call costs about what 30 portable
 * multiply-adds do. */
#define SMALL_GEMM 32
/* Column and depth tiles of the portable kernel: a KB x NB tile of b stays in cache. */
#define NB 256
#define KB 128

td_cpu_engine_kind td_cpu_engine(void)
{
#if defined(TD_HAVE_DNNL)
    td_cpu_engine_kind best = TD_CPU_ENGINE_DNNL;
#elif defined(TD_HAVE_CBLAS)
    td_cpu_engine_kind best = TD_CPU_ENGINE_BLAS;
#else
    td_cpu_engine_kind best = TD_CPU_ENGINE_PORTABLE;
#endif
    const char *e = getenv("TD_CPU_ENGINE");
    if (e == NULL)
        return best;
    td_cpu_engine_kind want = best;
    if (strcmp(e, "portable") == 0)
        want = TD_CPU_ENGINE_PORTABLE;
    else if (strcmp(e, "blas") == 0)
        want = TD_CPU_ENGINE_BLAS;
#ifndef TD_HAVE_CBLAS
    if (want == TD_CPU_ENGINE_BLAS)
        want = best;
#endif
    return want < best ? want : best;
}

#ifdef TD_HAVE_CBLAS
static void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                      float *c)
{
    td_cpu_blas_warn_once();
    td_cpu_apply_threads(); /* OpenBLAS sizes its team by this thread's ICV */
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                1.0f, a, ta ? (int)m : (int)k, b, tb ? (int)k : (int)n, beta, c, (int)n);
}
#endif

/* One product on the engine in use; prefer_blas puts CBLAS before oneDNN: conv2d's im2col
 * products, run one per sample inside a thread team, where OpenBLAS's sgemm measured about
 * twice as fast as dnnl_sgemm (the backward-by-weight shapes of a first layer). */
static void gemm(bool prefer_blas, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                 float beta, float *c)
{
    const td_cpu_engine_kind engine = td_cpu_engine();
#ifdef TD_HAVE_CBLAS
    const bool blas_ok = engine != TD_CPU_ENGINE_PORTABLE && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX;
    if (blas_ok && (prefer_blas || engine == TD_CPU_ENGINE_BLAS)) {
        blas_gemm(ta, tb, m, n, k, a, b, beta, c);
        return;
    }
#endif
#ifdef TD_HAVE_DNNL
    if (engine == TD_CPU_ENGINE_DNNL && td_cpu_dnnl_sgemm(ta, tb, m, n, k, a, b, beta, c))
        return;
#endif
#ifdef TD_HAVE_CBLAS
    if (blas_ok) { /* oneDNN failed (out of memory for its packing buffers) */
        blas_gemm(ta, tb, m, n, k, a, b, beta, c);
        return;
    }
#endif
    (void)engine;
    (void)prefer_blas;
    for (int64_t i = 0; i < m; i++) {
        float *restrict cr = c + i * n;
        if (beta == 0.0f)
            for (int64_t j = 0; j < n; j++)
                cr[j] = 0.0f;
        if (tb) {
            for (int64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (int64_t p = 0; p < k; p++)
                    s += (ta ? a[p * m + i] : a[i * k + p]) * b[j * k + p];
                cr[j] += s;
            }
        } else {
            for (int64_t p = 0; p < k; p++) {
                const float av = ta ? a[p * m + i] : a[i * k + p];
                const float *restrict br = b + p * n;
                for (int64_t j = 0; j < n; j++)
                    cr[j] += av * br[j];
            }
        }
    }
}

void td_cpu_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                 float *c)
{
    gemm(true, ta, tb, m, n, k, a, b, beta, c);
}

/* Row i of c (n floats) = row i of a' (k floats, ast apart: 1 for a, m for a^T) times b'
 * (k x n): b row-major, i-k-j order; or with tb, b^T for b n x k row-major, one dot product of
 * two contiguous rows per output. */
static void gemm_row(const float *restrict a, int64_t ast, const float *restrict b, bool tb, float *restrict c,
                     int64_t k, int64_t n)
{
    if (tb) {
        for (int64_t j = 0; j < n; j++) {
            const float *restrict br = b + j * k;
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++)
                s += a[p * ast] * br[p];
            c[j] = s;
        }
        return;
    }
    for (int64_t j0 = 0; j0 < n; j0 += NB) {
        const int64_t jn = n - j0 < NB ? n - j0 : NB;
        float *restrict cr = c + j0;
        for (int64_t j = 0; j < jn; j++)
            cr[j] = 0.0f;
        for (int64_t p0 = 0; p0 < k; p0 += KB) {
            const int64_t pn = k - p0 < KB ? k - p0 : KB;
            for (int64_t p = p0; p < p0 + pn; p++) {
                const float av = a[p * ast];
                const float *restrict br = b + p * n + j0;
                for (int64_t j = 0; j < jn; j++)
                    cr[j] += av * br[j];
            }
        }
    }
}

/* One product of the batched loop: c = a' b' (a' = a or its transpose), a, b and c of the
 * element types the caller reads and writes. false when it could not run (the caller takes
 * another way). */
typedef bool (*batch_gemm_fn)(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                              void *c);

static bool sgemm_fn(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *c)
{
    gemm(false, ta, tb, m, n, k, (const float *)a, (const float *)b, 0.0f, (float *)c);
    return true;
}

/* The batches of a' @ b' as one engine product each (esz bytes an element of a and b, csz of
 * c), or one product of batches * m rows when b is one matrix under contiguous batches of a (a
 * linear layer's [B, T, K] by [K, N]: B products of m rows each ran at about two thirds of the
 * rate, train_gpt). false when f refused a product. */
static bool batched(const td_matmul_geometry *g, bool ta, bool tb, size_t esz, size_t csz, const void *pa,
                    const void *pb, void *pc, batch_gemm_fn f)
{
    const int nb = g->batch.ndim;
    const int64_t m = g->m, n = g->n, k = g->k, batches = g->batch.numel;
    const int64_t *ast = g->a_stride, *bst = g->b_stride;
    const char *ca = pa, *cb = pb;
    char *cc = pc;
    bool fold = !ta && batches > 1;
    int64_t want = 1;
    for (int d = nb - 1; d >= 0 && fold; d--) {
        fold = bst[d] == 0 && (g->batch.dims[d] == 1 || ast[d] == want);
        want *= g->batch.dims[d];
    }
    if (fold && batches * m <= INT32_MAX)
        return f(false, tb, batches * m, n, k, pa, pb, pc);
    int64_t idx[TD_MAX_DIMS] = { 0 };
    int64_t aoff = 0, boff = 0;
    for (int64_t t = 0; t < batches; t++) {
        if (!f(ta, tb, m, n, k, ca + (size_t)(aoff * m * k) * esz, cb + (size_t)(boff * k * n) * esz,
               cc + (size_t)(t * m * n) * csz))
            return false;
        for (int d = nb - 1; d >= 0; d--) { /* next batch index, odometer style */
            aoff += ast[d];
            boff += bst[d];
            if (++idx[d] < g->batch.dims[d])
                break;
            aoff -= g->batch.dims[d] * ast[d];
            boff -= g->batch.dims[d] * bst[d];
            idx[d] = 0;
        }
    }
    return true;
}

static void geometry(const td_tensor *a, bool ta, const td_tensor *b, bool tb, const td_tensor *out,
                     td_matmul_geometry *g)
{
    const td_shape sa = ta ? td_shape_swap_last2(td_be_shape(a)) : *td_be_shape(a);
    const td_shape sb = tb ? td_shape_swap_last2(td_be_shape(b)) : *td_be_shape(b);
    td_matmul_geometry_of(&sa, &sb, td_be_shape(out), g);
}

/* out = a' @ b' in f32 on the data pa, pb, pc (a's, b's and out's own, or f32 copies of them):
 * a' = a or (ta) its transpose over the last two dims, b' likewise; the transposes are read in
 * place (sgemm's flags; strided reads in the portable loop). */
static void matmul_f32(const td_tensor *a, bool ta, const td_tensor *b, bool tb, const td_tensor *out,
                       const float *pa, const float *pb, float *pc)
{
    td_matmul_geometry g;
    geometry(a, ta, b, tb, out, &g);
    const int nb = g.batch.ndim;
    const int64_t m = g.m, n = g.n, k = g.k;
    const td_shape ob = g.batch;
    const int64_t *ast = g.a_stride, *bst = g.b_stride;
    const int64_t batches = ob.numel;
#if defined(TD_HAVE_CBLAS) || defined(TD_HAVE_DNNL)
    if (td_cpu_engine() != TD_CPU_ENGINE_PORTABLE && m * n * k > SMALL_GEMM && m <= INT32_MAX && n <= INT32_MAX &&
        k <= INT32_MAX) {
        (void)batched(&g, ta, tb, sizeof(float), sizeof(float), pa, pb, pc, sgemm_fn);
        return;
    }
#endif
    /* Portable: one work item per output row of every batch. */
    /* A multiply-add is cheap: ask for ~16x the elementwise threshold before threading. */
    TD_CPU_FOR_WORK(r, batches * m, batches * m * n * k / 16, {
        const int64_t t = r / m, i = r % m;
        int64_t aoff = 0, boff = 0, rem = t;
        for (int d = nb - 1; d >= 0 && rem > 0; d--) {
            const int64_t id = rem % ob.dims[d];
            rem /= ob.dims[d];
            aoff += id * ast[d];
            boff += id * bst[d];
        }
        /* row i of a': a's row i, or a's column i (elements m apart) */
        const float *arow = pa + aoff * m * k + (ta ? i : i * k);
        gemm_row(arow, ta ? m : 1, pb + boff * k * n, tb, pc + r * n, k, n);
    });
}

#ifdef TD_HAVE_DNNL
/* Whether n bf16 values are all finite and none is subnormal: the inputs oneDNN's bf16
 * product takes (its AVX512_BF16 dot products read subnormals as zero, and an inf gave NaN
 * where the f32 product gives inf: the per-dtype comparisons' edge fill). */
static bool bf16_plain(const uint16_t *p, int64_t n)
{
    unsigned bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const unsigned e = (p[i] >> 7) & 0xFFu;
        bad |= (unsigned)(e == 0xFFu) | ((unsigned)(e == 0u) & (unsigned)((p[i] & 0x7Fu) != 0u));
    }
    return bad == 0;
}

static bool dnnl_bf16_fn(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void *a, const void *b, void *c)
{
    if (ta || m * n * k <= SMALL_GEMM)
        return false;
    return td_cpu_dnnl_gemm_lowp("float_matmul", TD_CPU_GEMM_BF16, TD_CPU_GEMM_BF16, tb, m, n, k, a, b, c, NULL, 0) ==
           TD_OK;
}
#endif

/* bf16 a' @ b': f32 sums, the result rounded once to bf16. Where oneDNN has a bf16 matmul
 * (AVX512_BF16, AMX: td_cpu_dnnl_gemm_lowp) and the inputs are finite without subnormals, it
 * multiplies the bf16 values themselves into the bf16 result (f32 accumulation, rounded to
 * nearest even); otherwise (a transposed a, inf / NaN / subnormal inputs, no oneDNN, a
 * product it refused) the inputs are widened to f32 (exact) for the f32 product, rounded by
 * td_f32_to_bf16_row (subnormal results kept). Either way every product of two bf16 values is
 * exact in f32 and the sums are f32's, as the "via f32" path's were. The deviation, documented
 * (docs/kernels.md): oneDNN's AVX512_BF16 dot products and its rounding flush f32 subnormals,
 * so from normal inputs a result below 2^-126 in magnitude (or a partial sum there) may come
 * out 0 where the f32 product keeps it. */
static td_status matmul_bf16(const td_tensor *a, bool ta, const td_tensor *b, bool tb, td_tensor *out)
{
    const int64_t na = td_be_numel(a), nb = td_be_numel(b), no = td_be_numel(out);
    const uint16_t *ha = (const uint16_t *)td_be_data(a), *hb = (const uint16_t *)td_be_data(b);
#ifdef TD_HAVE_DNNL
    if (!ta && td_cpu_engine() == TD_CPU_ENGINE_DNNL && bf16_plain(ha, na) && bf16_plain(hb, nb)) {
        td_matmul_geometry g;
        geometry(a, ta, b, tb, out, &g);
        /* a refusal part-way (out of memory in oneDNN) leaves the rest to the f32 path below,
         * which writes every element */
        if (g.m <= INT32_MAX && g.n <= INT32_MAX && g.k <= INT32_MAX &&
            batched(&g, ta, tb, sizeof(uint16_t), sizeof(uint16_t), ha, hb, td_be_data(out), dnnl_bf16_fn))
            return TD_OK;
    }
#endif
    float *af = malloc((size_t)(na > 0 ? na : 1) * sizeof *af), *bf = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *bf);
    float *cf = malloc((size_t)(no > 0 ? no : 1) * sizeof *cf);
    if (af == NULL || bf == NULL || cf == NULL) {
        free(af);
        free(bf);
        free(cf);
        return td_error(TD_E_NOMEM, "float_matmul: out of memory for the f32 copies of bf16 operands");
    }
    td_bf16_to_f32_row(ha, af, (size_t)na);
    td_bf16_to_f32_row(hb, bf, (size_t)nb);
    matmul_f32(a, ta, b, tb, out, af, bf, cf);
    td_f32_to_bf16_row(cf, td_be_data(out), (size_t)no);
    free(af);
    free(bf);
    free(cf);
    return TD_OK;
}

/* out = a' @ b' in the operands' dtype (f32, f64, bf16). */
static td_status matmul(const td_tensor *a, bool ta, const td_tensor *b, bool tb, td_tensor *out)
{
    if (td_be_dtype(a) == TD_F64) {
        td_cpu_f64_matmul(a, ta, b, tb, out);
        return TD_OK;
    }
    if (td_be_dtype(a) == TD_BF16)
        return matmul_bf16(a, ta, b, tb, out);
    matmul_f32(a, ta, b, tb, out, (const float *)td_be_data(a), (const float *)td_be_data(b),
               (float *)td_be_data(out));
    return TD_OK;
}

td_status td_cpu_float_matmul(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return matmul(a, false, b, false, out);
}

td_status td_cpu_float_matmul_nt(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    if (td_be_dtype(b) == TD_Q8_0 || td_be_dtype(b) == TD_Q4_0) {
        /* f32 a [..., m, k] by quantized weights b [n, k] (the spec's quantized_arg; the entry
         * made a f32): a's leading dims flatten into m, rows of a stay contiguous. */
        if (td_be_ndim(b) != 2)
            return td_error(TD_E_UNSUPPORTED,
                            "float_matmul_nt: %s weights must be one matrix [n, k]; b has %d dims (no batches of "
                            "quantized weights)",
                            td_dtype_name(td_be_dtype(b)), td_be_ndim(b));
        const int64_t n = td_be_dims(b)[0], k = td_be_dims(b)[1];
        const int64_t m = k > 0 ? td_be_numel(a) / k : td_be_numel(out) / (n > 0 ? n : 1);
        const int q = td_be_dtype(b) == TD_Q8_0 ? TD_CPU_Q8_0 : TD_CPU_Q4_0;
        if (td_be_dtype(a) != TD_BF16)
            return td_cpu_matmul_quant("float_matmul_nt", q, m, n, k, td_be_data(a), td_be_data(b), td_be_data(out));
        /* bf16 activations (the kernel claims bf16 for its bf16 product): widened exactly,
         * the f32 result rounded once, as the "via f32" path of f16 ones does */
        const int64_t na = td_be_numel(a), no = td_be_numel(out);
        float *af = malloc((size_t)(na > 0 ? na : 1) * sizeof *af), *cf = malloc((size_t)(no > 0 ? no : 1) * sizeof *cf);
        td_status st = TD_OK;
        if (af == NULL || cf == NULL)
            st = td_error(TD_E_NOMEM, "float_matmul_nt: out of memory for the f32 copies of bf16 activations");
        if (st == TD_OK) {
            td_bf16_to_f32_row(td_be_data(a), af, (size_t)na);
            st = td_cpu_matmul_quant("float_matmul_nt", q, m, n, k, af, td_be_data(b), cf);
        }
        if (st == TD_OK)
            td_f32_to_bf16_row(cf, td_be_data(out), (size_t)no);
        free(af);
        free(cf);
        return st;
    }
    return matmul(a, false, b, true, out);
}

td_status td_cpu_float_matmul_tn(const td_tensor *a, const td_tensor *b, td_tensor *out)
{
    return matmul(a, true, b, false, out);
}
