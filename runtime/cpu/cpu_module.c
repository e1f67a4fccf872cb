/* CPU backend: module ops (conv2d through oneDNN or im2col + sgemm, max/avg pooling, linear). */
#include <math.h>
#include <stdlib.h>

#include "cpu_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#define TD_POOL_SSE2 1
#endif

/* The geometry of a conv2d: x [n, c, h, w], weight [o, c / groups, kh, kw], out [n, o, oh, ow]. */
typedef struct conv {
    int64_t n, c, h, w, o, kh, kw, oh, ow, groups;
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t cg, og, kk, p; /* channels per group in and out, rows of a column (cg kh kw), pixels oh ow */
} conv;

static conv conv_of(const td_shape *x, const td_shape *w, const td_shape *y, const int64_t *stride,
                    const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    conv g = { .n = x->dims[0], .c = x->dims[1], .h = x->dims[2], .w = x->dims[3], .o = w->dims[0],
               .kh = w->dims[2], .kw = w->dims[3], .oh = y->dims[2], .ow = y->dims[3], .groups = groups,
               .sh = stride[0], .sw = stride[1], .ph = padding[0], .pw = padding[1], .dh = dilation[0],
               .dw = dilation[1] };
    g.cg = g.c / groups;
    g.og = g.o / groups;
    g.kk = g.cg * g.kh * g.kw;
    g.p = g.oh * g.ow;
    return g;
}

/* The output columns j whose input column j s - p + b d lies in [0, w): [*j0, *j1). */
static void valid_cols(const conv *g, int64_t b, int64_t *j0, int64_t *j1)
{
    const int64_t off = b * g->dw - g->pw; /* input column of output column 0 */
    int64_t lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;
    int64_t hi = g->w - off <= 0 ? 0 : (g->w - off + g->sw - 1) / g->sw;
    if (hi > g->ow)
        hi = g->ow;
    if (lo > hi)
        lo = hi;
    *j0 = lo;
    *j1 = hi;
}

/* col [cg kh kw, oh ow] = the windows of x's channels [cg] (planes of h w), zeros outside. */
static void im2col_any(const conv *g, const float *restrict x, float *restrict col)
{
    for (int64_t c = 0; c < g->cg; c++)
        for (int64_t a = 0; a < g->kh; a++)
            for (int64_t b = 0; b < g->kw; b++) {
                float *restrict row = col + ((c * g->kh + a) * g->kw + b) * g->p;
                const float *plane = x + c * g->h * g->w;
                int64_t j0, j1;
                valid_cols(g, b, &j0, &j1);
                const int64_t off = b * g->dw - g->pw;
                for (int64_t i = 0; i < g->oh; i++) {
                    const int64_t ih = i * g->sh - g->ph + a * g->dh;
                    float *restrict r = row + i * g->ow;
                    if (ih < 0 || ih >= g->h) {
                        memset(r, 0, sizeof(float) * (size_t)g->ow);
                        continue;
                    }
                    const float *xr = plane + ih * g->w + off;
                    for (int64_t j = 0; j < j0; j++)
                        r[j] = 0.0f;
                    if (g->sw == 1)
                        memcpy(r + j0, xr + j0, sizeof(float) * (size_t)(j1 - j0));
                    else
                        for (int64_t j = j0; j < j1; j++)
                            r[j] = xr[j * g->sw];
                    for (int64_t j = j1; j < g->ow; j++)
                        r[j] = 0.0f;
                }
            }
}

/* The adjoint of im2col: dx (planes [cg] of h w) += the columns scattered back. */
static void col2im_any(const conv *g, const float *restrict col, float *restrict dx)
{
    for (int64_t c = 0; c < g->cg; c++)
        for (int64_t a = 0; a < g->kh; a++)
            for (int64_t b = 0; b < g->kw; b++) {
                const float *restrict row = col + ((c * g->kh + a) * g->kw + b) * g->p;
                float *plane = dx + c * g->h * g->w;
                int64_t j0, j1;
                valid_cols(g, b, &j0, &j1);
                const int64_t off = b * g->dw - g->pw;
                for (int64_t i = 0; i < g->oh; i++) {
                    const int64_t ih = i * g->sh - g->ph + a * g->dh;
                    if (ih < 0 || ih >= g->h)
                        continue;
                    float *restrict xr = plane + ih * g->w + off;
                    const float *restrict r = row + i * g->ow;
                    for (int64_t j = j0; j < j1; j++)
                        xr[j * g->sw] += r[j];
                }
            }
}

/* Stride 1, dilation 1 across, and as many output columns as input columns (3x3 with
 * padding 1, say): then the valid rows of a row of col, read in row-major order, are its
 * plane shifted by one offset, except the columns that fall into the padding. im2col
 * copies the block in one piece and zeroes those columns; col2im zeroes them in col and
 * adds the block back in one piece (adding +0 changes no sum that starts from +0). */
static bool conv_flat(const conv *g)
{
    return g->sh == 1 && g->sw == 1 && g->dw == 1 && g->ow == g->w;
}

/* The block of row (a, b) of col (sh == 1, see conv_flat): output rows [i0, i1) are valid,
 * columns [j0, j1); element t of the block (from row i0) pairs with plane[src + t], for t
 * in [t0, t1) (the ends outside the plane only ever fall in padding columns). */
typedef struct block {
    int64_t i0, i1, j0, j1, src, t0, t1;
} block;

static block block_of(const conv *g, int64_t a, int64_t b)
{
    block k;
    const int64_t ia = a * g->dh - g->ph; /* input row of output row 0 */
    k.i0 = ia >= 0 ? 0 : -ia;
    k.i1 = g->h - ia < g->oh ? g->h - ia : g->oh;
    if (k.i1 < k.i0)
        k.i1 = k.i0;
    valid_cols(g, b, &k.j0, &k.j1);
    k.src = (k.i0 + ia) * g->w + (b - g->pw);
    k.t0 = k.src < 0 ? -k.src : 0;
    k.t1 = (k.i1 - k.i0) * g->ow;
    if (k.src + k.t1 > g->h * g->w)
        k.t1 = g->h * g->w - k.src;
    if (k.t1 < k.t0)
        k.t1 = k.t0;
    return k;
}

/* Zero the columns outside [j0, j1) of rows [i0, i1) of a row of col. */
static void zero_pad_cols(const conv *g, const block *k, float *restrict row)
{
    const int64_t ow = g->ow;
    for (int64_t j = 0; j < k->j0; j++)
        for (int64_t i = k->i0; i < k->i1; i++)
            row[i * ow + j] = 0.0f;
    for (int64_t j = k->j1; j < ow; j++)
        for (int64_t i = k->i0; i < k->i1; i++)
            row[i * ow + j] = 0.0f;
}

/* The rows of col that lie wholly in the padding are left alone: they are zero from
 * columns(), and no sample writes them. */
static void im2col_flat(const conv *g, const float *restrict x, float *restrict col)
{
    const int64_t hw = g->h * g->w;
    for (int64_t a = 0; a < g->kh; a++)
        for (int64_t b = 0; b < g->kw; b++) {
            const block k = block_of(g, a, b);
            for (int64_t c = 0; c < g->cg; c++) {
                float *restrict row = col + ((c * g->kh + a) * g->kw + b) * g->p;
                float *restrict dst = row + k.i0 * g->ow;
                const float *restrict src = x + c * hw + k.src;
                for (int64_t t = k.t0; t < k.t1; t++)
                    dst[t] = src[t];
                zero_pad_cols(g, &k, row);
            }
        }
}

/* col is scratch here: its padding columns are zeroed in place. */
static void col2im_flat(const conv *g, float *restrict col, float *restrict dx)
{
    const int64_t hw = g->h * g->w;
    /* each plane of dx gets its rows' additions in the order (a, b), as in col2im_any */
    for (int64_t a = 0; a < g->kh; a++)
        for (int64_t b = 0; b < g->kw; b++) {
            const block k = block_of(g, a, b);
            for (int64_t c = 0; c < g->cg; c++) {
                float *restrict row = col + ((c * g->kh + a) * g->kw + b) * g->p;
                zero_pad_cols(g, &k, row);
                const float *restrict r = row + k.i0 * g->ow;
                float *restrict d = dx + c * hw + k.src;
                for (int64_t t = k.t0; t < k.t1; t++)
                    d[t] += r[t];
            }
        }
}

static void im2col(const conv *g, const float *restrict x, float *restrict col)
{
    if (conv_flat(g))
        im2col_flat(g, x, col);
    else
        im2col_any(g, x, col);
}

static void col2im(const conv *g, float *restrict col, float *restrict dx)
{
    if (conv_flat(g))
        col2im_flat(g, col, dx);
    else
        col2im_any(g, col, dx);
}

#ifdef TD_HAVE_DNNL
/* Whether any of p[0, n) is infinite or NaN: an all-ones exponent, tested on the bits in
 * blocks the compiler vectorizes (isfinite's branch per element kept it scalar: a by-weight
 * call scans the whole grad, 200k floats in bench_cnn). */
static bool any_nonfinite(const float *p, int64_t n)
{
    for (int64_t i0 = 0; i0 < n; i0 += 1024) {
        const int64_t i1 = n - i0 < 1024 ? n : i0 + 1024;
        uint32_t bad = 0;
        for (int64_t i = i0; i < i1; i++) {
            uint32_t u;
            memcpy(&u, p + i, sizeof u);
            bad |= (u & 0x7f800000u) == 0x7f800000u;
        }
        if (bad)
            return true;
    }
    return false;
}

/* conv2d by oneDNN's primitives when it is the engine: TD_OK, an error, or TD_E_UNSUPPORTED
 * (no error set) when the im2col path is to do it. `padded` (n of them): the operand that
 * the im2col path multiplies by the padding's zeros (the weight forward, the grad by
 * weight): oneDNN skips the padding, so an infinity there would give inf where im2col,
 * the Vulkan backend and IEEE zero padding give NaN (0 * inf); such calls go to im2col. */
static td_status dnnl_conv(const char *op, int kind, const conv *g, const float *in0, const float *in1,
                           const float *bias, float *out, const float *padded, int64_t n)
{
    /* Few input channels and no groups (a first layer: 1 or 3 channels): im2col + sgemm
     * measured 1.1-7x faster than oneDNN 2.6's kernels plus their layout reorders, on a
     * 64-sample batch (c 1, 3, 4 into 8-32 channels, on the 2-core AVX-512 VM); from 8
     * channels, and for depthwise and grouped shapes, oneDNN was 1.1-5x faster
     * (docs/kernels.md). */
    if (td_cpu_engine() != TD_CPU_ENGINE_DNNL || (g->groups == 1 && g->c < 8))
        return TD_E_UNSUPPORTED;
    if ((g->ph > 0 || g->pw > 0) && padded != NULL && any_nonfinite(padded, n))
        return TD_E_UNSUPPORTED;
    const td_cpu_conv_shape s = { .n = g->n, .c = g->c, .h = g->h, .w = g->w, .o = g->o, .kh = g->kh, .kw = g->kw,
                                  .oh = g->oh, .ow = g->ow, .groups = g->groups, .sh = g->sh, .sw = g->sw,
                                  .ph = g->ph, .pw = g->pw, .dh = g->dh, .dw = g->dw };
    return td_cpu_dnnl_conv(op, kind, &s, in0, in1, bias, out);
}
#endif

/* Threads for a loop over the batch: one per sample up to the team size, when it pays. */
static int team(int64_t samples, int64_t work)
{
#ifdef _OPENMP
    if (work >= TD_CPU_PAR_MIN * 4 && samples > 1) {
        int64_t t = td_cpu_threads();
        return (int)(t < samples ? t : samples);
    }
#endif
    (void)samples;
    (void)work;
    return 1;
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* One column buffer per thread, zeroed when im2col fills it (im2col_flat counts on it);
 * NULL (and an error set) when out of memory. */
static float *columns(const char *op, const conv *g, int nt, bool zeroed)
{
    const size_t n = (size_t)(g->kk * g->p) * (size_t)nt + 1;
    float *col = zeroed ? calloc(n, sizeof(float)) : malloc(sizeof(float) * n);
    if (col == NULL)
        td_error(TD_E_NOMEM, "%s: out of memory for the im2col buffer", op);
    return col;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TD_CONV_DIRECT 1
#define DIRECT_FN __attribute__((target("avx512f")))

/* A direct AVX-512 conv2d for few input channels (a first layer: 1 to 7 channels, where
 * oneDNN is not used), groups 1, stride 1, dilation 1: one row of 16 output columns of 8
 * output channels at a time in registers, each input vector loaded once for the 8. The
 * im2col + sgemm path did these shapes at a fraction of the vector units' rate (a 9-deep
 * product per output column, sgemm's packing around it). Padding is multiplied in as zeros
 * (a zero-filled masked load, a zero vector for a row outside the plane), so an infinite
 * weight or gradient gives NaN there, as im2col's columns of zeros do. */
#define DIRECT_OB 8
#define DIRECT_MAX_C 8

static bool conv_direct_ok(const conv *g)
{
    return g->groups == 1 && g->c < DIRECT_MAX_C && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1 &&
           g->kh <= 7 && g->kw <= 7 && td_cpu_simd() >= TD_CPU_SIMD_AVX512 && td_cpu_engine() != TD_CPU_ENGINE_PORTABLE;
}

/* Lanes l of the 16 columns from output column j0 whose input column j0 + l + off lies in
 * [0, w) and whose output column lies in [0, ow). */
static __mmask16 direct_mask(int64_t j0, int64_t off, int64_t w, int64_t ow)
{
    int64_t lo = -(j0 + off), hi = w - (j0 + off);
    lo = lo < 0 ? 0 : lo;
    hi = hi > 16 ? 16 : hi;
    hi = hi > ow - j0 ? ow - j0 : hi;
    if (hi <= lo)
        return 0;
    return (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* x + at floats, as an address (at may be negative where the mask covers none of those lanes). */
static const float *direct_at(const float *x, int64_t at)
{
    return (const float *)((uintptr_t)x + (uintptr_t)(at * (int64_t)sizeof(float)));
}

/* What the samples share: per block of 16 output columns (chunk), the lanes each tap column
 * b reads (mask[chunk * (kw + 1) + b]) and the lanes of the output (mask[chunk * (kw + 1) +
 * kw]); a row of zeros (w + 32 floats) that stands for the rows outside the plane. */
typedef struct direct_plan {
    int64_t chunks;
    __mmask16 *mask;
    float *zeros;
} direct_plan;

static bool direct_plan_make(const conv *g, direct_plan *d)
{
    d->chunks = (g->ow + 15) / 16;
    d->mask = malloc(sizeof(__mmask16) * (size_t)(d->chunks * (g->kw + 1)));
    d->zeros = calloc((size_t)(g->w + 32), sizeof(float));
    if (d->mask == NULL || d->zeros == NULL) {
        free(d->mask);
        free(d->zeros);
        return false;
    }
    for (int64_t q = 0; q < d->chunks; q++) {
        for (int64_t b = 0; b < g->kw; b++)
            d->mask[q * (g->kw + 1) + b] = direct_mask(q * 16, b - g->pw, g->w, g->ow);
        d->mask[q * (g->kw + 1) + g->kw] = direct_mask(q * 16, 0, g->ow, g->ow);
    }
    return true;
}

static void direct_plan_free(direct_plan *d)
{
    free(d->mask);
    free(d->zeros);
}

/* The input rows of output row i, for input channel c and tap row a at rows[c kh + a]:
 * each offset by -pw (tap column b then reads from column j + b), the zero row outside the
 * plane. The offsets make addresses before a row; only lanes the masks keep are read. */
static void direct_rows(const conv *g, const direct_plan *d, const float *xs, int64_t i, const float **rows)
{
    for (int64_t c = 0; c < g->c; c++)
        for (int64_t a = 0; a < g->kh; a++) {
            const int64_t ih = i - g->ph + a;
            const float *r = ih >= 0 && ih < g->h ? xs + (c * g->h + ih) * g->w : d->zeros + 16;
            rows[c * g->kh + a] = (const float *)((uintptr_t)r - (uintptr_t)(g->pw * (int64_t)sizeof(float)));
        }
}

/* y of one sample (o planes of oh ow) from its x (c planes of h w); wp: the weights packed
 * [o / 8 blocks][c][kh][kw][8], zeros past o. */
DIRECT_FN static void direct_fwd_sample(const conv *g, const direct_plan *d, const float *restrict xs,
                                        const float *restrict wp, const float *restrict bias, float *restrict ys)
{
    const int64_t taps = g->c * g->kh * g->kw, crows = g->c * g->kh, kw = g->kw;
    const float *rows[DIRECT_MAX_C * 7];
    for (int64_t i = 0; i < g->oh; i++) {
        direct_rows(g, d, xs, i, rows);
        for (int64_t ob = 0; ob < g->o; ob += DIRECT_OB) {
            const int64_t on = g->o - ob < DIRECT_OB ? g->o - ob : DIRECT_OB;
            const float *wb = wp + (ob / DIRECT_OB) * taps * DIRECT_OB;
            for (int64_t q = 0; q < d->chunks; q++) {
                const __mmask16 *m = d->mask + q * (kw + 1);
                const int64_t j0 = q * 16;
                __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
                const float *wt = wb;
                for (int64_t r = 0; r < crows; r++) {
                    const float *xr = rows[r] + j0;
                    for (int64_t b = 0; b < kw; b++, wt += DIRECT_OB) {
                        const __m512 v = _mm512_maskz_loadu_ps(m[b], direct_at(xr, b));
                        a0 = _mm512_fmadd_ps(_mm512_set1_ps(wt[0]), v, a0);
                        a1 = _mm512_fmadd_ps(_mm512_set1_ps(wt[1]), v, a1);
                        a2 = _mm512_fmadd_ps(_mm512_set1_ps(wt[2]), v, a2);
                        a3 = _mm512_fmadd_ps(_mm512_set1_ps(wt[3]), v, a3);
                        a4 = _mm512_fmadd_ps(_mm512_set1_ps(wt[4]), v, a4);
                        a5 = _mm512_fmadd_ps(_mm512_set1_ps(wt[5]), v, a5);
                        a6 = _mm512_fmadd_ps(_mm512_set1_ps(wt[6]), v, a6);
                        a7 = _mm512_fmadd_ps(_mm512_set1_ps(wt[7]), v, a7);
                    }
                }
                const __m512 acc[DIRECT_OB] = { a0, a1, a2, a3, a4, a5, a6, a7 };
                for (int64_t k = 0; k < on; k++)
                    _mm512_mask_storeu_ps(ys + ((ob + k) * g->oh + i) * g->ow + j0, m[kw],
                                          _mm512_add_ps(acc[k], _mm512_set1_ps(bias[ob + k])));
            }
        }
    }
}

/* part [o][c][kh][kw][16] += the lane-wise products of one sample's grad (o planes of oh ow)
 * and its x's windows; the lanes are summed at the end (direct_bwd_weight). Three tap columns
 * at a time (24 accumulators), each grad vector loaded once for the three. The grad of
 * output channels past o reads as the zero row, tap columns past kw as masked-off lanes. */
#define DIRECT_TB 3
DIRECT_FN static void direct_bwd_weight_sample(const conv *g, const direct_plan *d, const float *restrict xs,
                                               const float *restrict gs, float *restrict part)
{
    const int64_t kk = g->c * g->kh * g->kw, kw = g->kw, crows = g->c * g->kh;
    const float *rows[DIRECT_MAX_C * 7];
    for (int64_t ob = 0; ob < g->o; ob += DIRECT_OB) {
        const int64_t on = g->o - ob < DIRECT_OB ? g->o - ob : DIRECT_OB;
        for (int64_t r = 0; r < crows; r++)
            for (int64_t b0 = 0; b0 < kw; b0 += DIRECT_TB) {
                const int64_t bn = kw - b0 < DIRECT_TB ? kw - b0 : DIRECT_TB;
                /* named, not an array: gcc kept an array's copy in memory up to date */
                __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c04 = c00, c05 = c00, c06 = c00,
                       c07 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00, c14 = c00, c15 = c00, c16 = c00,
                       c17 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00, c24 = c00, c25 = c00, c26 = c00,
                       c27 = c00;
                for (int64_t i = 0; i < g->oh; i++) {
                    direct_rows(g, d, xs, i, rows);
                    const float *gk[DIRECT_OB];
                    for (int64_t k = 0; k < DIRECT_OB; k++)
                        gk[k] = k < on ? gs + ((ob + k) * g->oh + i) * g->ow : d->zeros;
                    for (int64_t q = 0; q < d->chunks; q++) {
                        const __mmask16 *m = d->mask + q * (kw + 1);
                        const int64_t j0 = q * 16;
                        __m512 v[DIRECT_TB];
                        for (int t = 0; t < DIRECT_TB; t++)
                            v[t] = _mm512_maskz_loadu_ps(t < bn ? m[b0 + t] : 0, direct_at(rows[r] + j0, b0 + t));
#define DIRECT_GRAD(k)                                                 \
    do {                                                               \
        const __m512 gv = _mm512_maskz_loadu_ps(m[kw], gk[k] + j0);    \
        c0##k = _mm512_fmadd_ps(gv, v[0], c0##k);                      \
        c1##k = _mm512_fmadd_ps(gv, v[1], c1##k);                      \
        c2##k = _mm512_fmadd_ps(gv, v[2], c2##k);                      \
    } while (0)
                        DIRECT_GRAD(0);
                        DIRECT_GRAD(1);
                        DIRECT_GRAD(2);
                        DIRECT_GRAD(3);
                        DIRECT_GRAD(4);
                        DIRECT_GRAD(5);
                        DIRECT_GRAD(6);
                        DIRECT_GRAD(7);
#undef DIRECT_GRAD
                    }
                }
                const __m512 acc[DIRECT_TB][DIRECT_OB] = { { c00, c01, c02, c03, c04, c05, c06, c07 },
                                                           { c10, c11, c12, c13, c14, c15, c16, c17 },
                                                           { c20, c21, c22, c23, c24, c25, c26, c27 } };
                for (int t = 0; t < DIRECT_TB; t++)
                    for (int k = 0; k < DIRECT_OB; k++)
                        if (t < bn && k < on) {
                            float *p = part + ((ob + k) * kk + r * kw + b0 + t) * 16;
                            _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), acc[t][k]));
                        }
            }
    }
}

static td_status direct_fwd(const conv *g, const float *x, const float *w, const float *bias, float *y)
{
    const int64_t taps = g->c * g->kh * g->kw, blocks = (g->o + DIRECT_OB - 1) / DIRECT_OB;
    float *wp = calloc((size_t)(blocks * taps * DIRECT_OB), sizeof(float));
    direct_plan d;
    if (wp == NULL || !direct_plan_make(g, &d)) {
        free(wp);
        return td_error(TD_E_NOMEM, "float_conv2d: out of memory for the packed weights");
    }
    for (int64_t o = 0; o < g->o; o++)
        for (int64_t t = 0; t < taps; t++)
            wp[((o / DIRECT_OB) * taps + t) * DIRECT_OB + o % DIRECT_OB] = w[o * taps + t];
    const int nt = team(g->n, g->n * g->o * g->p * g->kk);
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
#endif
    for (int64_t s = 0; s < g->n; s++)
        direct_fwd_sample(g, &d, x + s * g->c * g->h * g->w, wp, bias, y + s * g->o * g->p);
    direct_plan_free(&d);
    free(wp);
    return TD_OK;
}

static td_status direct_bwd_weight(const conv *g, const float *x, const float *grad, float *dw)
{
    const int64_t wn = g->o * g->kk;
    const int nt = team(g->n, g->n * g->o * g->p * g->kk);
    float *part = calloc((size_t)(nt * wn * 16), sizeof(float));
    direct_plan d;
    if (part == NULL || !direct_plan_make(g, &d)) {
        free(part);
        return td_error(TD_E_NOMEM, "float_conv2d_backward_weight: out of memory");
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
#endif
    for (int64_t s = 0; s < g->n; s++)
        direct_bwd_weight_sample(g, &d, x + s * g->c * g->h * g->w, grad + s * g->o * g->p,
                                 part + (size_t)thread_id() * (size_t)(wn * 16));
    for (int64_t e = 0; e < wn; e++) {
        float sum = 0.0f;
        for (int t = 0; t < nt; t++)
            for (int l = 0; l < 16; l++)
                sum += part[((size_t)t * (size_t)wn + (size_t)e) * 16 + (size_t)l];
        dw[e] = sum;
    }
    direct_plan_free(&d);
    free(part);
    return TD_OK;
}
#endif

td_status td_cpu_float_conv2d(const td_tensor *x, const td_tensor *weight, const td_tensor *bias,
                              const int64_t *stride, int stride_len, const int64_t *padding, int padding_len,
                              const int64_t *dilation, int dilation_len, int64_t groups, td_tensor *out)
{
    (void)stride_len, (void)padding_len, (void)dilation_len;
    const conv g = conv_of(td_be_shape(x), td_be_shape(weight), td_be_shape(out), stride, padding, dilation, groups);
    if (td_be_numel(out) == 0)
        return TD_OK;
#ifdef TD_HAVE_DNNL
    if (g.kk > 0) {
        const td_status st = dnnl_conv("float_conv2d", TD_CPU_CONV_FWD, &g, td_be_data(x), td_be_data(weight), td_be_data(bias),
                                       td_be_data(out), td_be_data(weight), td_be_numel(weight));
        if (st != TD_E_UNSUPPORTED)
            return st;
    }
#endif
#ifdef TD_CONV_DIRECT
    if (g.kk > 0 && conv_direct_ok(&g))
        return direct_fwd(&g, td_be_data(x), td_be_data(weight), td_be_data(bias), td_be_data(out));
#endif
    const int nt = team(g.n, g.n * g.o * g.p * g.kk);
    float *col = columns("float_conv2d", &g, nt, true);
    if (col == NULL)
        return TD_E_NOMEM;
    const float *px = td_be_data(x), *pw = td_be_data(weight), *pb = td_be_data(bias);
    float *py = td_be_data(out);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
#endif
    for (int64_t s = 0; s < g.n; s++) {
        float *mycol = col + (size_t)thread_id() * (size_t)(g.kk * g.p);
        for (int64_t gr = 0; gr < g.groups; gr++) {
            float *y = py + (s * g.o + gr * g.og) * g.p;
            for (int64_t o = 0; o < g.og; o++)
                for (int64_t j = 0; j < g.p; j++)
                    y[o * g.p + j] = pb[gr * g.og + o];
            im2col(&g, px + (s * g.c + gr * g.cg) * g.h * g.w, mycol);
            td_cpu_gemm(false, false, g.og, g.p, g.kk, pw + gr * g.og * g.kk, mycol, 1.0f, y);
        }
    }
    free(col);
    return TD_OK;
}

td_status td_cpu_float_conv2d_backward_input(const td_tensor *grad, const td_tensor *weight, const td_tensor *x,
                                             const int64_t *stride, int stride_len, const int64_t *padding,
                                             int padding_len, const int64_t *dilation, int dilation_len,
                                             int64_t groups, td_tensor *out)
{
    (void)stride_len, (void)padding_len, (void)dilation_len;
    const conv g = conv_of(td_be_shape(x), td_be_shape(weight), td_be_shape(grad), stride, padding, dilation, groups);
    float *dx = td_be_data(out);
    if (td_be_numel(grad) == 0) {
        memset(dx, 0, td_cpu_nbytes(out));
        return TD_OK;
    }
#ifdef TD_HAVE_DNNL
    if (g.kk > 0) {
        const td_status st = dnnl_conv("float_conv2d_backward_input", TD_CPU_CONV_BWD_DATA, &g, td_be_data(grad),
                                       td_be_data(weight), NULL, dx, NULL, 0);
        if (st != TD_E_UNSUPPORTED)
            return st;
    }
#endif
    const int nt = team(g.n, g.n * g.o * g.p * g.kk);
    float *col = columns("float_conv2d_backward_input", &g, nt, false);
    if (col == NULL)
        return TD_E_NOMEM;
    const float *pg = td_be_data(grad), *pw = td_be_data(weight);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
#endif
    for (int64_t s = 0; s < g.n; s++) {
        float *mycol = col + (size_t)thread_id() * (size_t)(g.kk * g.p);
        /* each sample's dx zeroed by its thread, just before its sums (not all of it up front, on one) */
        memset(dx + s * g.c * g.h * g.w, 0, sizeof(float) * (size_t)(g.c * g.h * g.w));
        for (int64_t gr = 0; gr < g.groups; gr++) {
            /* dcol [kk, p] = W_g^T [kk, og] @ grad_g [og, p] */
            td_cpu_gemm(true, false, g.kk, g.p, g.og, pw + gr * g.og * g.kk, pg + (s * g.o + gr * g.og) * g.p, 0.0f,
                        mycol);
            col2im(&g, mycol, dx + (s * g.c + gr * g.cg) * g.h * g.w);
        }
    }
    free(col);
    return TD_OK;
}

td_status td_cpu_float_conv2d_backward_weight(const td_tensor *grad, const td_tensor *x, const td_tensor *weight,
                                              const int64_t *stride, int stride_len, const int64_t *padding,
                                              int padding_len, const int64_t *dilation, int dilation_len,
                                              int64_t groups, td_tensor *out)
{
    (void)stride_len, (void)padding_len, (void)dilation_len;
    const conv g = conv_of(td_be_shape(x), td_be_shape(weight), td_be_shape(grad), stride, padding, dilation, groups);
    float *dw = td_be_data(out);
    const int64_t wn = td_be_numel(out);
    memset(dw, 0, td_cpu_nbytes(out));
    if (td_be_numel(grad) == 0 || wn == 0)
        return TD_OK;
#ifdef TD_HAVE_DNNL
    {
        const td_status st = dnnl_conv("float_conv2d_backward_weight", TD_CPU_CONV_BWD_WEIGHTS, &g, td_be_data(x),
                                       td_be_data(grad), NULL, dw, td_be_data(grad), td_be_numel(grad));
        if (st != TD_E_UNSUPPORTED)
            return st;
    }
#endif
#ifdef TD_CONV_DIRECT
    if (conv_direct_ok(&g))
        return direct_bwd_weight(&g, td_be_data(x), td_be_data(grad), dw);
#endif
    const int nt = team(g.n, g.n * g.o * g.p * g.kk);
    float *col = columns("float_conv2d_backward_weight", &g, nt, true);
    float *part = nt > 1 ? calloc((size_t)nt * (size_t)wn, sizeof(float)) : dw;
    if (col == NULL || part == NULL) {
        free(col);
        return col == NULL ? TD_E_NOMEM : td_error(TD_E_NOMEM, "float_conv2d_backward_weight: out of memory");
    }
    const float *px = td_be_data(x), *pg = td_be_data(grad);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
#endif
    for (int64_t s = 0; s < g.n; s++) {
        const int t = thread_id();
        float *mycol = col + (size_t)t * (size_t)(g.kk * g.p);
        float *acc = part + (size_t)t * (size_t)wn;
        for (int64_t gr = 0; gr < g.groups; gr++) {
            im2col(&g, px + (s * g.c + gr * g.cg) * g.h * g.w, mycol);
            /* dW_g [og, kk] += grad_g [og, p] @ col^T [p, kk] */
            td_cpu_gemm(false, true, g.og, g.kk, g.p, pg + (s * g.o + gr * g.og) * g.p, mycol, 1.0f,
                        acc + gr * g.og * g.kk);
        }
    }
    if (nt > 1) {
        for (int t = 0; t < nt; t++)
            for (int64_t i = 0; i < wn; i++)
                dw[i] += part[(size_t)t * (size_t)wn + (size_t)i];
        free(part);
    }
    free(col);
    return TD_OK;
}

/* Pooling windows of one spatial dim: output index i starts at i s - p, steps d. */
typedef struct pool {
    int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
} pool;

static pool pool_of(const td_shape *x, const td_shape *y, const int64_t *kernel, const int64_t *stride,
                    const int64_t *padding, const int64_t *dilation)
{
    return (pool){ .planes = x->dims[0] * x->dims[1], .h = x->dims[2], .w = x->dims[3], .oh = y->dims[2],
                   .ow = y->dims[3], .kh = kernel[0], .kw = kernel[1], .sh = stride[0], .sw = stride[1],
                   .ph = padding[0], .pw = padding[1], .dh = dilation ? dilation[0] : 1,
                   .dw = dilation ? dilation[1] : 1 };
}

/* The place of the maximum of window (i, j) in a plane (as PyTorch: the first maximum in
 * row-major order; a NaN wins, the last one); -1 when the window lies wholly in the padding. */
static inline int64_t argmax_at(const pool *g, const float *plane, int64_t i, int64_t j)
{
    const int64_t ih0 = i * g->sh - g->ph, iw0 = j * g->sw - g->pw;
    if (ih0 >= 0 && iw0 >= 0 && ih0 + (g->kh - 1) * g->dh < g->h && iw0 + (g->kw - 1) * g->dw < g->w) {
        /* inside the plane: no bounds checks */
        int64_t best = ih0 * g->w + iw0;
        float m = plane[best];
        for (int64_t a = 0; a < g->kh; a++) {
            const int64_t rowp = (ih0 + a * g->dh) * g->w + iw0;
            for (int64_t b = 0; b < g->kw; b++) {
                const float v = plane[rowp + b * g->dw];
                if (v > m || v != v) {
                    m = v;
                    best = rowp + b * g->dw;
                }
            }
        }
        return best;
    }
    int64_t best = -1;
    float m = -INFINITY;
    for (int64_t a = 0; a < g->kh; a++) {
        const int64_t ih = i * g->sh - g->ph + a * g->dh;
        if (ih < 0 || ih >= g->h)
            continue;
        for (int64_t b = 0; b < g->kw; b++) {
            const int64_t iw = j * g->sw - g->pw + b * g->dw;
            if (iw < 0 || iw >= g->w)
                continue;
            const float v = plane[ih * g->w + iw];
            if (best < 0 || v > m || isnan(v)) {
                m = v;
                best = ih * g->w + iw;
            }
        }
    }
    return best;
}

/* The value of a window whose maximum is at `at`: -inf for a window that lies wholly in the
 * padding (argmax_at's -1; possible with dilation, e.g. kernel 2 dilated by 2 with padding 1
 * over a row of 1), as PyTorch's max over no element and Vulkan's pool shader. */
static inline float max_or_empty(const float *plane, int64_t at)
{
    return at >= 0 ? plane[at] : -INFINITY;
}

/* The usual pool (kernel 2, stride 2, no padding, dilation 1): windows never overlap, and
 * window (i, j) reads rows 2i, 2i + 1 and columns 2j, 2j + 1. */
static bool pool_2x2(const pool *g)
{
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->ph == 0 && g->pw == 0 && g->dh == 1 &&
           g->dw == 1;
}

#ifdef TD_POOL_SSE2
/* Four windows side by side: a, b (row 2i, columns 2j, 2j + 1), c, d (row 2i + 1), one
 * window a lane. A row whose ow is not a multiple of 4 ends with its last four windows,
 * some of them done twice (the same values written again); one with ow < 4 goes through
 * the scalar loops. */
typedef struct quad {
    __m128 a, b, c, d;
} quad;

static inline quad quad_load(const float *r0, const float *r1)
{
    const __m128 l0 = _mm_loadu_ps(r0), h0 = _mm_loadu_ps(r0 + 4);
    const __m128 l1 = _mm_loadu_ps(r1), h1 = _mm_loadu_ps(r1 + 4);
    return (quad){ _mm_shuffle_ps(l0, h0, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(l0, h0, _MM_SHUFFLE(3, 1, 3, 1)),
                   _mm_shuffle_ps(l1, h1, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(l1, h1, _MM_SHUFFLE(3, 1, 3, 1)) };
}

static inline __m128 max_quad(quad q)
{
    /* maxps(v, m) = v > m ? v : m */
    const __m128 m = _mm_max_ps(q.d, _mm_max_ps(q.c, _mm_max_ps(q.b, q.a)));
    const __m128 nan = _mm_or_ps(_mm_or_ps(_mm_cmpunord_ps(q.a, q.a), _mm_cmpunord_ps(q.b, q.b)),
                                 _mm_or_ps(_mm_cmpunord_ps(q.c, q.c), _mm_cmpunord_ps(q.d, q.d)));
    return _mm_or_ps(_mm_and_ps(nan, _mm_set1_ps(NAN)), _mm_andnot_ps(nan, m));
}

/* The gradients of a, b, c, d: g (as 0 + g) at the window's first maximum, the last NaN
 * winning, +0 elsewhere. */
static inline quad max_grad_quad(quad q, __m128 g)
{
    /* which of a, b, c, d: one all-ones mask each, exactly one set */
    __m128 gt = _mm_cmpgt_ps(q.b, q.a);
    __m128 m = _mm_max_ps(q.b, q.a);
    __m128 sa = _mm_andnot_ps(gt, _mm_castsi128_ps(_mm_set1_epi32(-1))), sb = gt;
    gt = _mm_cmpgt_ps(q.c, m);
    m = _mm_max_ps(q.c, m);
    sa = _mm_andnot_ps(gt, sa), sb = _mm_andnot_ps(gt, sb);
    __m128 sc = gt;
    gt = _mm_cmpgt_ps(q.d, m);
    sa = _mm_andnot_ps(gt, sa), sb = _mm_andnot_ps(gt, sb), sc = _mm_andnot_ps(gt, sc);
    __m128 sd = gt;
    /* the last NaN overrides */
    const __m128 na = _mm_cmpunord_ps(q.a, q.a), nb = _mm_cmpunord_ps(q.b, q.b), nc = _mm_cmpunord_ps(q.c, q.c),
                 nd = _mm_cmpunord_ps(q.d, q.d);
    const __m128 any = _mm_or_ps(_mm_or_ps(na, nb), _mm_or_ps(nc, nd));
    sa = _mm_or_ps(_mm_andnot_ps(any, sa), _mm_andnot_ps(_mm_or_ps(nb, _mm_or_ps(nc, nd)), na));
    sb = _mm_or_ps(_mm_andnot_ps(any, sb), _mm_andnot_ps(_mm_or_ps(nc, nd), nb));
    sc = _mm_or_ps(_mm_andnot_ps(any, sc), _mm_andnot_ps(nd, nc));
    sd = _mm_or_ps(_mm_andnot_ps(any, sd), nd);
    g = _mm_add_ps(g, _mm_setzero_ps());
    const __m128 ga = _mm_and_ps(sa, g), gb = _mm_and_ps(sb, g), gc = _mm_and_ps(sc, g), gd = _mm_and_ps(sd, g);
    /* back in row order: row 2i a0 b0 a1 b1 | a2 b2 a3 b3, row 2i + 1 likewise */
    return (quad){ _mm_unpacklo_ps(ga, gb), _mm_unpackhi_ps(ga, gb), _mm_unpacklo_ps(gc, gd),
                   _mm_unpackhi_ps(gc, gd) };
}
#endif

/* Windows 0 .. n - 1 of rows r0, r1, one at a time. */
static void max_pool_2x2_row(const float *r0, const float *r1, float *y, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        const float a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
        float m = a;
        m = b > m ? b : m;
        m = c > m ? c : m;
        m = d > m ? d : m;
        y[j] = ((a != a) | (b != b) | (c != c) | (d != d)) ? NAN : m;
    }
}

static void max_pool_2x2_backward_row(const float *r0, const float *r1, const float *g, float *d0, float *d1,
                                      int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        const float v[4] = { r0[2 * j], r0[2 * j + 1], r1[2 * j], r1[2 * j + 1] };
        int best = 0, nan_at = v[0] != v[0] ? 0 : -1;
        float m = v[0];
        for (int k = 1; k < 4; k++) {
            best = v[k] > m ? k : best;
            m = v[k] > m ? v[k] : m;
            nan_at = v[k] != v[k] ? k : nan_at;
        }
        best = nan_at >= 0 ? nan_at : best;
        const float gv = 0.0f + g[j];
        d0[2 * j] = best == 0 ? gv : 0.0f;
        d0[2 * j + 1] = best == 1 ? gv : 0.0f;
        d1[2 * j] = best == 2 ? gv : 0.0f;
        d1[2 * j + 1] = best == 3 ? gv : 0.0f;
    }
}

/* max_pool2d forward of one plane, 2x2 windows: the same comparisons, in the same order, as
 * the general loop below (m = v > m ? v : m over a, b, c, d; NaN if any is NaN). */
static void max_pool_2x2_plane(const pool *g, const float *restrict plane, float *restrict y)
{
    const int64_t w = g->w, ow = g->ow;
    for (int64_t i = 0; i < g->oh; i++) {
        const float *r0 = plane + 2 * i * w, *r1 = r0 + w;
        float *yr = y + i * ow;
#ifdef TD_POOL_SSE2
        /* the last four windows again when ow is not a multiple of 4: the same values */
        for (int64_t j = 0; ow >= 4 && j < ow; j += 4) {
            const int64_t at = j + 4 <= ow ? j : ow - 4;
            _mm_storeu_ps(yr + at, max_quad(quad_load(r0 + 2 * at, r1 + 2 * at)));
        }
        if (ow < 4)
            max_pool_2x2_row(r0, r1, yr, ow);
#else
        max_pool_2x2_row(r0, r1, yr, ow);
#endif
    }
}

/* max_pool2d backward of one plane, 2x2 windows: dx, all of it, written (not accumulated)
 * with each window's grad at its first maximum (a NaN wins, the last one), +0 elsewhere;
 * the grad passes as 0 + g, as the general loop's += into zeros gives it. */
static void max_pool_2x2_backward_plane(const pool *g, const float *restrict plane, const float *restrict gp,
                                        float *restrict d)
{
    const int64_t w = g->w, ow = g->ow;
    if (2 * g->oh != g->h || 2 * ow != w) /* rows or columns no window covers */
        memset(d, 0, sizeof(float) * (size_t)(g->h * w));
    for (int64_t i = 0; i < g->oh; i++) {
        const float *r0 = plane + 2 * i * w, *r1 = r0 + w;
        float *d0 = d + 2 * i * w, *d1 = d0 + w;
        const float *gr = gp + i * ow;
#ifdef TD_POOL_SSE2
        for (int64_t j = 0; ow >= 4 && j < ow; j += 4) {
            const int64_t at = j + 4 <= ow ? j : ow - 4;
            const quad o = max_grad_quad(quad_load(r0 + 2 * at, r1 + 2 * at), _mm_loadu_ps(gr + at));
            _mm_storeu_ps(d0 + 2 * at, o.a);
            _mm_storeu_ps(d0 + 2 * at + 4, o.b);
            _mm_storeu_ps(d1 + 2 * at, o.c);
            _mm_storeu_ps(d1 + 2 * at + 4, o.d);
        }
        if (ow < 4)
            max_pool_2x2_backward_row(r0, r1, gr, d0, d1, ow);
#else
        max_pool_2x2_backward_row(r0, r1, gr, d0, d1, ow);
#endif
    }
}

td_status td_cpu_float_max_pool2d(const td_tensor *x, const int64_t *kernel, int kernel_len, const int64_t *stride,
                                  int stride_len, const int64_t *padding, int padding_len, const int64_t *dilation,
                                  int dilation_len, td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len, (void)dilation_len;
    const pool g = pool_of(td_be_shape(x), td_be_shape(out), kernel, stride, padding, dilation);
    const float *px = td_be_data(x);
    float *py = td_be_data(out);
    const bool inside = g.ph == 0 && g.pw == 0; /* every window lies in the plane */
    if (pool_2x2(&g)) {
        TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(out) * 4,
                        max_pool_2x2_plane(&g, px + pl * g.h * g.w, py + pl * g.oh * g.ow););
        return TD_OK;
    }
    TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(out) * g.kh * g.kw, {
        const float *plane = px + pl * g.h * g.w;
        float *y = py + pl * g.oh * g.ow;
        if (inside) {
            const int64_t w = g.w, kh = g.kh, kw = g.kw, sh = g.sh, sw = g.sw, dh = g.dh, dw = g.dw, ow = g.ow;
            for (int64_t i = 0; i < g.oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    const float *q = plane + i * sh * w + j * sw;
                    /* max without branches (maxss), NaN tracked apart */
                    float m = q[0];
                    int nan = 0;
                    for (int64_t a = 0; a < kh; a++)
                        for (int64_t b = 0; b < kw; b++) {
                            const float v = q[a * dh * w + b * dw];
                            m = v > m ? v : m;
                            nan |= v != v;
                        }
                    y[i * ow + j] = nan ? NAN : m;
                }
        } else {
            for (int64_t i = 0; i < g.oh; i++)
                for (int64_t j = 0; j < g.ow; j++)
                    y[i * g.ow + j] = max_or_empty(plane, argmax_at(&g, plane, i, j));
        }
    });
    return TD_OK;
}

td_status td_cpu_float_max_pool2d_backward(const td_tensor *x, const td_tensor *grad, const int64_t *kernel,
                                           int kernel_len, const int64_t *stride, int stride_len,
                                           const int64_t *padding, int padding_len, const int64_t *dilation,
                                           int dilation_len, td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len, (void)dilation_len;
    const pool g = pool_of(td_be_shape(x), td_be_shape(grad), kernel, stride, padding, dilation);
    const float *px = td_be_data(x), *pg = td_be_data(grad);
    float *dx = td_be_data(out);
    if (pool_2x2(&g)) {
        TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(out) * 2,
                        max_pool_2x2_backward_plane(&g, px + pl * g.h * g.w, pg + pl * g.oh * g.ow,
                                                    dx + pl * g.h * g.w););
        return TD_OK;
    }
    memset(dx, 0, td_cpu_nbytes(out));
    const bool inside = g.ph == 0 && g.pw == 0;
    TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(grad) * g.kh * g.kw, {
        const float *plane = px + pl * g.h * g.w;
        const float *gp = pg + pl * g.oh * g.ow;
        float *d = dx + pl * g.h * g.w;
        if (inside) {
            const int64_t w = g.w, kh = g.kh, kw = g.kw, sh = g.sh, sw = g.sw, dh = g.dh, dw = g.dw, ow = g.ow;
            for (int64_t i = 0; i < g.oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    const int64_t at = i * sh * w + j * sw;
                    /* the first maximum without branches; a NaN wins (the last one) */
                    int64_t best = at, nan_at = -1;
                    float m = plane[at];
                    for (int64_t a = 0; a < kh; a++)
                        for (int64_t b = 0; b < kw; b++) {
                            const int64_t k = at + a * dh * w + b * dw;
                            const float v = plane[k];
                            const bool gt = v > m;
                            m = gt ? v : m;
                            best = gt ? k : best;
                            nan_at = v != v ? k : nan_at;
                        }
                    d[nan_at >= 0 ? nan_at : best] += gp[i * ow + j];
                }
        } else {
            for (int64_t i = 0; i < g.oh; i++)
                for (int64_t j = 0; j < g.ow; j++) {
                    const int64_t at = argmax_at(&g, plane, i, j);
                    if (at >= 0) /* a window wholly in the padding takes no gradient */
                        d[at] += gp[i * g.ow + j];
                }
        }
    });
    return TD_OK;
}

/* Window (i, j) of an average pool: its clipped bounds and its divisor (as PyTorch). */
static inline float avg_window(const pool *g, int64_t i, int64_t j, bool include_pad, int64_t *h0, int64_t *h1,
                               int64_t *w0, int64_t *w1)
{
    int64_t hs = i * g->sh - g->ph, ws = j * g->sw - g->pw;
    int64_t he = hs + g->kh, we = ws + g->kw;
    if (he > g->h + g->ph)
        he = g->h + g->ph;
    if (we > g->w + g->pw)
        we = g->w + g->pw;
    const int64_t padded = (he - hs) * (we - ws);
    *h0 = hs < 0 ? 0 : hs;
    *w0 = ws < 0 ? 0 : ws;
    *h1 = he > g->h ? g->h : he;
    *w1 = we > g->w ? g->w : we;
    return (float)(include_pad ? padded : (*h1 - *h0) * (*w1 - *w0));
}

td_status td_cpu_float_avg_pool2d(const td_tensor *x, const int64_t *kernel, int kernel_len, const int64_t *stride,
                                  int stride_len, const int64_t *padding, int padding_len, int64_t count_include_pad,
                                  td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len;
    const pool g = pool_of(td_be_shape(x), td_be_shape(out), kernel, stride, padding, NULL);
    const float *px = td_be_data(x);
    float *py = td_be_data(out);
    TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(out) * g.kh * g.kw, {
        const float *plane = px + pl * g.h * g.w;
        float *y = py + pl * g.oh * g.ow;
        for (int64_t i = 0; i < g.oh; i++)
            for (int64_t j = 0; j < g.ow; j++) {
                int64_t h0, h1, w0, w1;
                const float div = avg_window(&g, i, j, count_include_pad != 0, &h0, &h1, &w0, &w1);
                float s = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++)
                        s += plane[ih * g.w + iw];
                y[i * g.ow + j] = s / div;
            }
    });
    return TD_OK;
}

td_status td_cpu_float_avg_pool2d_backward(const td_tensor *x, const td_tensor *grad, const int64_t *kernel,
                                           int kernel_len, const int64_t *stride, int stride_len,
                                           const int64_t *padding, int padding_len, int64_t count_include_pad,
                                           td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len;
    const pool g = pool_of(td_be_shape(x), td_be_shape(grad), kernel, stride, padding, NULL);
    const float *pg = td_be_data(grad);
    float *dx = td_be_data(out);
    memset(dx, 0, td_cpu_nbytes(out));
    TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(grad) * g.kh * g.kw, {
        const float *gp = pg + pl * g.oh * g.ow;
        float *d = dx + pl * g.h * g.w;
        for (int64_t i = 0; i < g.oh; i++)
            for (int64_t j = 0; j < g.ow; j++) {
                int64_t h0, h1, w0, w1;
                const float v = gp[i * g.ow + j] / avg_window(&g, i, j, count_include_pad != 0, &h0, &h1, &w0, &w1);
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++)
                        d[ih * g.w + iw] += v;
            }
    });
    return TD_OK;
}

td_status td_cpu_float_linear(const td_tensor *x, const td_tensor *w, const td_tensor *b, td_tensor *out)
{
    TD_TRY(td_cpu_float_matmul(x, w, out));
    const int64_t n = td_be_dims(b)[0], rows = n ? td_be_numel(out) / n : 0;
    const float *pb = td_be_data(b);
    float *py = td_be_data(out);
    TD_CPU_FOR_WORK(r, rows, td_be_numel(out), {
        float *y = py + r * n;
        for (int64_t j = 0; j < n; j++)
            y[j] += pb[j];
    });
    return TD_OK;
}

td_status td_cpu_float_max_pool2d_indices(const td_tensor *x, const int64_t *kernel, int kernel_len,
                                          const int64_t *stride, int stride_len, const int64_t *padding,
                                          int padding_len, const int64_t *dilation, int dilation_len, td_tensor *out)
{
    (void)kernel_len, (void)stride_len, (void)padding_len, (void)dilation_len;
    const pool g = pool_of(td_be_shape(x), td_be_shape(out), kernel, stride, padding, dilation);
    const float *px = td_be_data(x);
    int32_t *py = td_be_data(out);
    if (g.h * g.w > INT32_MAX)
        return td_error(TD_E_RANGE, "float_max_pool2d_indices: a plane of %lld elements; int indices reach 2^31 - 1",
                        (long long)(g.h * g.w));
    TD_CPU_FOR_WORK(pl, g.planes, td_be_numel(out) * g.kh * g.kw, {
        const float *plane = px + pl * g.h * g.w;
        int32_t *y = py + pl * g.oh * g.ow;
        for (int64_t i = 0; i < g.oh; i++)
            for (int64_t j = 0; j < g.ow; j++)
                y[i * g.ow + j] = (int32_t)argmax_at(&g, plane, i, j);
    });
    return TD_OK;
}
