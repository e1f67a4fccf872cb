/* CPU backend: scaled dot-product attention and its backward ops (specs/ops/module_nn.lua),
 * blocked so that no [L, S] score matrix is ever built (docs/kernels.md, "Attention").
 *
 * Per (batch, head) the queries go in blocks of ATT_BQ rows and the keys in blocks of ATT_BK:
 * a block of scores (ATT_BQ x ATT_BK floats, on the stack) is one td_cpu_gemm, exponentiated
 * in place and multiplied into the next product. The forward keeps a running max and sum
 * per query row (the online softmax): when a block raises a row's max, what the row has
 * summed and accumulated so far is scaled by exp(old max - new max). The backward ops
 * recompute the weights block by block from each row's logsumexp (FlashAttention-2):
 * P = exp(s - lse), dS = P * (dP - D), D = rowsum(grad * output). Causal attention skips the
 * key blocks a query block cannot see, and the query blocks that cannot see a key block.
 * The work items are (batch, head, query block), or (batch, head, key block) for the key and
 * value gradients, spread over the backend's thread team (TD_CPU_FOR_WORK).
 *
 * At short contexts (L and S at most ATT_SHORT: train_gpt's 128) every op takes whole heads
 * instead ("short rows" below): one product for a head's scores, each row's softmax over the
 * keys it sees only (a causal row skips the rest, element by element), in loops the compiler
 * vectorizes, then one product per result: the weights are computed once per op, not twice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

enum { ATT_BQ = 64, ATT_BK = 64 };

typedef struct att {
    int64_t bh, l, s, e, ev;
    bool causal;
    float scale;
    const float *q, *k, *v;
} att;

static att att_of(const td_tensor *q, const td_tensor *k, const td_tensor *v, int64_t causal)
{
    att a;
    a.bh = td_be_dims(q)[0] * td_be_dims(q)[1];
    a.l = td_be_dims(q)[2];
    a.s = td_be_dims(k)[2];
    a.e = td_be_dims(q)[3];
    a.ev = td_be_dims(v)[3];
    a.causal = causal != 0;
    a.scale = 1.0f / sqrtf((float)a.e);
    a.q = td_be_data(q);
    a.k = td_be_data(k);
    a.v = td_be_data(v);
    return a;
}

/* c (m x n) = a' b' + beta c, as td_cpu_gemm, and an empty inner dim (k = 0) gives zeros
 * without calling it (CBLAS wants leading dims of at least 1). */
static void mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta, float *c)
{
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        if (beta == 0.0f)
            memset(c, 0, sizeof(float) * (size_t)(m * n));
        return;
    }
    td_cpu_gemm(ta, tb, m, n, k, a, b, beta, c);
}

/* The keys query row i sees: [0, S), or [0, min(S, i + 1)) when causal (top-left aligned). */
static int64_t keys_seen(const att *a, int64_t i)
{
    if (!a->causal)
        return a->s;
    return i + 1 < a->s ? i + 1 : a->s;
}

/* The scores of query rows [i0, i0 + bq) against keys [j0, j0 + bk) into s (bq x bk),
 * scaled, with -inf where causal masks a key. */
static void scores(const att *a, int64_t h, int64_t i0, int64_t bq, int64_t j0, int64_t bk, float *s)
{
    mm(false, true, bq, bk, a->e, a->q + (h * a->l + i0) * a->e, a->k + (h * a->s + j0) * a->e, 0.0f, s);
    for (int64_t r = 0; r < bq; r++) {
        float *row = s + r * bk;
        const int64_t seen = keys_seen(a, i0 + r) - j0; /* keys [0, seen) of the block are seen */
        for (int64_t jj = 0; jj < bk; jj++)
            row[jj] = jj < seen ? row[jj] * a->scale : -INFINITY;
    }
}

/* Online softmax over one block of scores: folds s (bq x bk) into the rows' running max m and
 * sum l, rescaling acc (bq x n, may be NULL) when a max grows; leaves exp(s - m) in s. The max
 * skips NaN (a NaN score makes its weight, the sum and the row NaN, as the decomposition);
 * a row whose max is still -inf uses 0, so its -inf scores weigh 0, not exp(-inf + inf). */
static void online_block(float *s, int64_t bq, int64_t bk, float *m, float *l, float *acc, int64_t n)
{
    for (int64_t r = 0; r < bq; r++) {
        float *row = s + r * bk;
        float bm = -INFINITY;
        for (int64_t jj = 0; jj < bk; jj++)
            if (row[jj] > bm)
                bm = row[jj];
        if (bm > m[r]) {
            const float alpha = expf(m[r] - bm);
            l[r] *= alpha;
            if (acc != NULL)
                for (int64_t c = 0; c < n; c++)
                    acc[r * n + c] *= alpha;
            m[r] = bm;
        }
        const float base = m[r] == -INFINITY ? 0.0f : m[r];
        for (int64_t jj = 0; jj < bk; jj++)
            row[jj] -= base;
    }
    td_cpu_vmath(TD_CPU_VEXP, s, s, bq * bk);
    for (int64_t r = 0; r < bq; r++) {
        const float *row = s + r * bk;
        float sum = 0.0f;
        for (int64_t jj = 0; jj < bk; jj++)
            sum += row[jj];
        l[r] += sum;
    }
}

/* The keys a block of queries [i0, i0 + bq) sees: [0, kend). */
static int64_t block_keys(const att *a, int64_t i0, int64_t bq)
{
    return keys_seen(a, i0 + bq - 1);
}

/* Causal rows [i0, i0 + bq) of head h: the decomposition multiplies the masked keys' values
 * by weight 0, so a value that is NaN or infinite there makes its column NaN (0 * inf) in
 * the rows it is masked from; the kernels skip those keys and set the same NaNs here. */
static void masked_nonfinite(const att *a, int64_t h, int64_t i0, int64_t bq, float *o)
{
    for (int64_t c = 0; c < a->ev; c++) {
        int64_t last = -1;
        for (int64_t j = a->s - 1; j > i0; j--)
            if (!isfinite(a->v[(h * a->s + j) * a->ev + c])) {
                last = j;
                break;
            }
        for (int64_t r = 0; r < bq && i0 + r < last; r++)
            o[r * a->ev + c] = NAN;
    }
}

/* The forward of query rows [i0, i0 + bq) of head h into o (bq x Ev). */
static void forward_block(const att *a, int64_t h, int64_t i0, int64_t bq, float *o)
{
    float s[ATT_BQ * ATT_BK], m[ATT_BQ], l[ATT_BQ];
    memset(o, 0, sizeof(float) * (size_t)(bq * a->ev));
    for (int64_t r = 0; r < bq; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    const int64_t kend = block_keys(a, i0, bq);
    for (int64_t j0 = 0; j0 < kend; j0 += ATT_BK) {
        const int64_t bk = kend - j0 < ATT_BK ? kend - j0 : ATT_BK;
        scores(a, h, i0, bq, j0, bk, s);
        online_block(s, bq, bk, m, l, o, a->ev);
        mm(false, false, bq, a->ev, bk, s, a->v + (h * a->s + j0) * a->ev, 1.0f, o);
    }
    for (int64_t r = 0; r < bq; r++)
        for (int64_t c = 0; c < a->ev; c++)
            o[r * a->ev + c] = o[r * a->ev + c] / l[r]; /* l = 0 (every score -inf): NaN */
    if (a->causal)
        masked_nonfinite(a, h, i0, bq, o);
}

static void fill(float *p, int64_t n, float x)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = x;
}

/* Work units of size `block` over n rows per head, and the multiply-adds of one head. */
static int64_t blocks(int64_t n, int64_t block)
{
    return (n + block - 1) / block;
}

static int64_t head_work(const att *a)
{
    return a->l * a->s * (a->e + a->ev) + 1;
}

/* ---- short rows: whole heads (L, S <= ATT_SHORT) ----
 *
 * A head's weights P [L, S] live in a buffer of the work unit's own (L S floats; the backward
 * ops take twice that for dS), and each op does a head in a few whole-matrix products and
 * row passes. Row passes stop at the keys the row sees, so a causal head exponentiates the
 * lower triangle only. The reductions keep 8 partial lanes, which the compiler turns into
 * vector instructions (a plain `sum += x` loop stays scalar without -ffast-math). */
enum { ATT_SHORT = 256, LANES = 8 };

static bool short_rows(const att *a)
{
    return a->l <= ATT_SHORT && a->s <= ATT_SHORT;
}

/* The max of x[0, n), skipping NaN (-inf when every element is NaN or n = 0). */
static float row_max(const float *restrict x, int64_t n)
{
    float m8[LANES];
    for (int t = 0; t < LANES; t++)
        m8[t] = -INFINITY;
    int64_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int t = 0; t < LANES; t++)
            m8[t] = x[j + t] > m8[t] ? x[j + t] : m8[t];
    float m = -INFINITY;
    for (int t = 0; t < LANES; t++)
        m = m8[t] > m ? m8[t] : m;
    for (; j < n; j++)
        m = x[j] > m ? x[j] : m;
    return m;
}

/* A head's weights in blocks of ATT_BQ query rows: block [i0, i0 + bq) holds its rows' weights
 * for keys [0, kend) (kend = block_keys: a causal block stops at its last row's keys), bq x
 * kend floats, the blocks one after the other (at most L S floats in all). */
static int64_t block_rows(const att *a, int64_t i0)
{
    return a->l - i0 < ATT_BQ ? a->l - i0 : ATT_BQ;
}

/* P of head h into p, by blocks as above: each row's softmax over the scaled scores of the
 * keys it sees, e / rowsum(e) with e = exp(s - rowmax(s)), and 0 for the block's keys it does
 * not see. NaN and inf behave as in online_block: the max skips NaN, a NaN or +inf score
 * makes the row NaN, a row whose scores are all -inf subtracts 0 and divides 0 by 0 (NaN, as
 * the forward's l = 0). */
static void head_weights(const att *a, int64_t h, float *p)
{
    const float scale = a->scale;
    for (int64_t i0 = 0; i0 < a->l; i0 += ATT_BQ) {
        const int64_t bq = block_rows(a, i0), kend = block_keys(a, i0, bq);
        mm(false, true, bq, kend, a->e, a->q + (h * a->l + i0) * a->e, a->k + h * a->s * a->e, 0.0f, p);
        for (int64_t r = 0; r < bq; r++) {
            float *restrict row = p + r * kend;
            const int64_t seen = keys_seen(a, i0 + r);
            /* scale > 0, so the max of the scaled scores is the scaled max (rounding is monotone) */
            const float mx = row_max(row, seen);
            const float base = mx == -INFINITY ? 0.0f : mx * scale;
            for (int64_t j = 0; j < seen; j++)
                row[j] = row[j] * scale - base;
            td_cpu_vmath(TD_CPU_VEXP, row, row, seen);
            const float inv = 1.0f / td_cpu_sum8(row, seen);
            for (int64_t j = 0; j < seen; j++)
                row[j] *= inv;
            for (int64_t j = seen; j < kend; j++)
                row[j] = 0.0f;
        }
        p += bq * kend;
    }
}

/* The forward of head h into o (L x Ev): P V. */
static void head_forward(const att *a, int64_t h, float *p, float *o)
{
    head_weights(a, h, p);
    for (int64_t i0 = 0; i0 < a->l; i0 += ATT_BQ) {
        const int64_t bq = block_rows(a, i0), kend = block_keys(a, i0, bq);
        mm(false, false, bq, a->ev, kend, p, a->v + h * a->s * a->ev, 0.0f, o + i0 * a->ev);
        p += bq * kend;
    }
    if (a->causal)
        masked_nonfinite(a, h, 0, a->l, o);
}

typedef enum att_want { WANT_FORWARD, WANT_QUERY, WANT_KEY, WANT_VALUE, WANT_ALL } att_want;

/* ---- backward ---- */

typedef struct att_bwd {
    att a;
    const float *out, *grad; /* [bh, L, Ev] */
} att_bwd;

/* Each row's logsumexp lse (of its scaled, masked scores) and D = rowsum(grad * output), for
 * query rows [i0, i0 + bq) of head h. */
static void row_stats(const att_bwd *b, int64_t h, int64_t i0, int64_t bq, float *lse, float *d)
{
    const att *a = &b->a;
    float s[ATT_BQ * ATT_BK], m[ATT_BQ], l[ATT_BQ];
    for (int64_t r = 0; r < bq; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    const int64_t kend = block_keys(a, i0, bq);
    for (int64_t j0 = 0; j0 < kend; j0 += ATT_BK) {
        const int64_t bk = kend - j0 < ATT_BK ? kend - j0 : ATT_BK;
        scores(a, h, i0, bq, j0, bk, s);
        online_block(s, bq, bk, m, l, NULL, 0);
    }
    for (int64_t r = 0; r < bq; r++) {
        lse[r] = m[r] + logf(l[r]);
        const float *g = b->grad + (h * a->l + i0 + r) * a->ev, *o = b->out + (h * a->l + i0 + r) * a->ev;
        float acc = 0.0f;
        for (int64_t c = 0; c < a->ev; c++)
            acc += g[c] * o[c];
        d[r] = acc;
    }
}

/* The weights P = exp(s - lse) of a block of scores (masked scores are -inf: weight 0). */
static void weights(float *s, int64_t bq, int64_t bk, const float *lse)
{
    for (int64_t r = 0; r < bq; r++)
        for (int64_t jj = 0; jj < bk; jj++)
            s[r * bk + jj] -= lse[r];
    td_cpu_vmath(TD_CPU_VEXP, s, s, bq * bk);
}

/* dS = P * (dP - D) in place of dp, dP = grad_rows value_block^T. */
static void dscores(const att_bwd *b, int64_t h, int64_t i0, int64_t bq, int64_t j0, int64_t bk, const float *p,
                    const float *d, float *dp)
{
    const att *a = &b->a;
    mm(false, true, bq, bk, a->ev, b->grad + (h * a->l + i0) * a->ev, a->v + (h * a->s + j0) * a->ev, 0.0f, dp);
    for (int64_t r = 0; r < bq; r++)
        for (int64_t jj = 0; jj < bk; jj++)
            dp[r * bk + jj] = p[r * bk + jj] * (dp[r * bk + jj] - d[r]);
}

/* dq for query rows [i0, i0 + bq) of head h into dq (bq x E). */
static void dq_block(const att_bwd *b, int64_t h, int64_t i0, int64_t bq, float *dq)
{
    const att *a = &b->a;
    float s[ATT_BQ * ATT_BK], dp[ATT_BQ * ATT_BK], lse[ATT_BQ], d[ATT_BQ];
    row_stats(b, h, i0, bq, lse, d);
    memset(dq, 0, sizeof(float) * (size_t)(bq * a->e));
    const int64_t kend = block_keys(a, i0, bq);
    for (int64_t j0 = 0; j0 < kend; j0 += ATT_BK) {
        const int64_t bk = kend - j0 < ATT_BK ? kend - j0 : ATT_BK;
        scores(a, h, i0, bq, j0, bk, s);
        weights(s, bq, bk, lse);
        dscores(b, h, i0, bq, j0, bk, s, d, dp);
        mm(false, false, bq, a->e, bk, dp, a->k + (h * a->s + j0) * a->e, 1.0f, dq);
    }
    for (int64_t i = 0; i < bq * a->e; i++)
        dq[i] *= a->scale;
}

/* dk (want_key) or dv for keys [j0, j0 + bk) of head h into res (bk x E or bk x Ev), from
 * every row's lse and D (stats: lse then D, L floats each per head). */
static void dkv_block(const att_bwd *b, bool want_key, int64_t h, int64_t j0, int64_t bk, const float *lse,
                      const float *d, float *res)
{
    const att *a = &b->a;
    const int64_t n = want_key ? a->e : a->ev;
    float s[ATT_BQ * ATT_BK], dp[ATT_BQ * ATT_BK];
    memset(res, 0, sizeof(float) * (size_t)(bk * n));
    /* causal: rows before j0 see none of these keys */
    for (int64_t i0 = a->causal ? j0 : 0; i0 < a->l; i0 += ATT_BQ) {
        const int64_t bq = a->l - i0 < ATT_BQ ? a->l - i0 : ATT_BQ;
        scores(a, h, i0, bq, j0, bk, s);
        weights(s, bq, bk, lse + h * a->l + i0);
        if (want_key) {
            dscores(b, h, i0, bq, j0, bk, s, d + h * a->l + i0, dp);
            mm(true, false, bk, a->e, bq, dp, a->q + (h * a->l + i0) * a->e, 1.0f, res);
        } else {
            mm(true, false, bk, a->ev, bq, s, b->grad + (h * a->l + i0) * a->ev, 1.0f, res);
        }
    }
    if (want_key)
        for (int64_t i = 0; i < bk * a->e; i++)
            res[i] *= a->scale;
}

static att_bwd bwd_of(const td_tensor *q, const td_tensor *k, const td_tensor *v, const td_tensor *output,
                      const td_tensor *grad, int64_t causal)
{
    att_bwd b;
    b.a = att_of(q, k, v, causal);
    b.out = td_be_data(output);
    b.grad = td_be_data(grad);
    return b;
}

/* dS of query rows [i0, i0 + bq) of head h against keys [0, kend), into ds (bq x kend), from
 * their weights p (the same layout): P * (grad v^T - D) / sqrt(E), D = rowsum(grad * output);
 * 0 for the keys a row does not see. */
static void block_ds(const att_bwd *b, int64_t h, int64_t i0, int64_t bq, int64_t kend, const float *p, float *ds)
{
    const att *a = &b->a;
    const float *gi = b->grad + (h * a->l + i0) * a->ev;
    mm(false, true, bq, kend, a->ev, gi, a->v + h * a->s * a->ev, 0.0f, ds);
    for (int64_t r = 0; r < bq; r++) {
        const float *g = gi + r * a->ev, *o = b->out + (h * a->l + i0 + r) * a->ev;
        float d = 0.0f;
        for (int64_t c = 0; c < a->ev; c++)
            d += g[c] * o[c];
        const float *restrict pr = p + r * kend;
        float *restrict dr = ds + r * kend;
        const int64_t seen = keys_seen(a, i0 + r);
        for (int64_t j = 0; j < seen; j++)
            dr[j] = pr[j] * (dr[j] - d) * a->scale;
        for (int64_t j = seen; j < kend; j++)
            dr[j] = 0.0f;
    }
}

/* One head's gradient into res ([L, E], [S, E] or [S, Ev]; p and ds: L S floats each, the
 * blocks of head_weights): dv = P^T grad; dS = P * (grad v^T - D) / sqrt(E) with D =
 * rowsum(grad * output), then dq = dS k or dk = dS^T q (the scale folded into dS). The key
 * and value gradients sum over the query blocks (keys no block sees stay 0). */
static void head_grad(const att_bwd *b, att_want want, int64_t h, float *p, float *ds, float *res)
{
    const att *a = &b->a;
    head_weights(a, h, p);
    const float *grad = b->grad + h * a->l * a->ev;
    if (want != WANT_QUERY)
        memset(res, 0, sizeof(float) * (size_t)(a->s * (want == WANT_VALUE ? a->ev : a->e)));
    for (int64_t i0 = 0; i0 < a->l; i0 += ATT_BQ) {
        const int64_t bq = block_rows(a, i0), kend = block_keys(a, i0, bq);
        const float *gi = grad + i0 * a->ev;
        if (want == WANT_VALUE) {
            mm(true, false, kend, a->ev, bq, p, gi, 1.0f, res);
            p += bq * kend;
            continue;
        }
        block_ds(b, h, i0, bq, kend, p, ds);
        if (want == WANT_QUERY)
            mm(false, false, bq, a->e, kend, ds, a->k + h * a->s * a->e, 0.0f, res + i0 * a->e);
        else
            mm(true, false, kend, a->e, bq, ds, a->q + (h * a->l + i0) * a->e, 1.0f, res);
        p += bq * kend;
        ds += bq * kend;
    }
}

/* All three gradients of head h at once (float_attention_backward): the weights, dP and dS
 * once, then dv = P^T grad, dq = dS k and dk = dS^T q (the scale folded into dS), into dq
 * [L, E], dk [S, E] and dv [S, Ev]: five products where the three ops take eight. */
static void head_grad_all(const att_bwd *b, int64_t h, float *p, float *ds, float *dq, float *dk, float *dv)
{
    const att *a = &b->a;
    head_weights(a, h, p);
    const float *grad = b->grad + h * a->l * a->ev;
    memset(dk, 0, sizeof(float) * (size_t)(a->s * a->e));
    memset(dv, 0, sizeof(float) * (size_t)(a->s * a->ev));
    for (int64_t i0 = 0; i0 < a->l; i0 += ATT_BQ) {
        const int64_t bq = block_rows(a, i0), kend = block_keys(a, i0, bq);
        const float *gi = grad + i0 * a->ev;
        mm(true, false, kend, a->ev, bq, p, gi, 1.0f, dv);
        block_ds(b, h, i0, bq, kend, p, ds);
        mm(false, false, bq, a->e, kend, ds, a->k + h * a->s * a->e, 0.0f, dq + i0 * a->e);
        mm(true, false, kend, a->e, bq, ds, a->q + (h * a->l + i0) * a->e, 1.0f, dk);
        p += bq * kend;
        ds += bq * kend;
    }
}

/* Every head of the forward (b->out unused) or of one gradient, whole heads per work unit:
 * as many units as threads, each with one buffer for its consecutive heads. */
static td_status heads(const char *op, const att_bwd *b, att_want want, float *po)
{
    const att *a = &b->a;
    const int64_t nt = td_cpu_threads(), units = a->bh < nt ? a->bh : nt;
    const int64_t per = (want == WANT_FORWARD || want == WANT_VALUE ? 1 : 2) * a->l * a->s;
    const int64_t rows = want == WANT_FORWARD || want == WANT_QUERY ? a->l : a->s;
    const int64_t n = want == WANT_FORWARD || want == WANT_VALUE ? a->ev : a->e;
    if (units <= 0 || per <= 0)
        return TD_OK;
    float *buf = malloc(sizeof(float) * (size_t)(units * per));
    if (buf == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for the heads' attention weights (%lld floats)", op,
                        (long long)(units * per));
    TD_CPU_FOR_WORK(u, units, a->bh * head_work(a) * (want == WANT_FORWARD ? 1 : 2), {
        float *p = buf + u * per;
        for (int64_t h = u * a->bh / units; h < (u + 1) * a->bh / units; h++) {
            if (want == WANT_FORWARD)
                head_forward(a, h, p, po + h * rows * n);
            else if (want == WANT_ALL)
                head_grad_all(b, h, p, p + a->l * a->s, po + h * a->l * a->e,
                              po + a->bh * a->l * a->e + h * a->s * a->e,
                              po + a->bh * (a->l + a->s) * a->e + h * a->s * a->ev);
            else
                head_grad(b, want, h, p, p + a->l * a->s, po + h * rows * n);
        }
    });
    free(buf);
    return TD_OK;
}

td_status td_cpu_float_attention(const td_tensor *query, const td_tensor *key, const td_tensor *value, int64_t causal,
                                 td_tensor *out)
{
    const att a = att_of(query, key, value, causal);
    float *po = td_be_data(out);
    if (a.s == 0 || a.e == 0) { /* no keys: an empty sum; E = 0: 0 / sqrt(0) scores */
        fill(po, td_be_numel(out), a.s == 0 ? 0.0f : NAN);
        return TD_OK;
    }
    if (short_rows(&a)) {
        const att_bwd b = { .a = a, .out = NULL, .grad = NULL };
        return heads("float_attention", &b, WANT_FORWARD, po);
    }
    const int64_t nq = blocks(a.l, ATT_BQ);
    TD_CPU_FOR_WORK(u, a.bh * nq, a.bh * head_work(&a), {
        const int64_t h = u / nq, i0 = (u % nq) * ATT_BQ;
        const int64_t bq = a.l - i0 < ATT_BQ ? a.l - i0 : ATT_BQ;
        forward_block(&a, h, i0, bq, po + (h * a.l + i0) * a.ev);
    });
    return TD_OK;
}

/* The query gradient into po (bh L E floats). */
static td_status bwd_query(const char *op, const att_bwd *b, float *po, int64_t numel)
{
    if (b->a.s == 0) { /* an empty sum over the keys (E > 0: the result is not empty) */
        fill(po, numel, 0.0f);
        return TD_OK;
    }
    if (short_rows(&b->a))
        return heads(op, b, WANT_QUERY, po);
    const int64_t nq = blocks(b->a.l, ATT_BQ);
    TD_CPU_FOR_WORK(u, b->a.bh * nq, b->a.bh * head_work(&b->a) * 3, {
        const int64_t h = u / nq, i0 = (u % nq) * ATT_BQ;
        const int64_t bq = b->a.l - i0 < ATT_BQ ? b->a.l - i0 : ATT_BQ;
        dq_block(b, h, i0, bq, po + (h * b->a.l + i0) * b->a.e);
    });
    return TD_OK;
}

td_status td_cpu_float_attention_backward_query(const td_tensor *query, const td_tensor *key, const td_tensor *value,
                                                const td_tensor *output, const td_tensor *grad, int64_t causal,
                                                td_tensor *out)
{
    const att_bwd b = bwd_of(query, key, value, output, grad, causal);
    return bwd_query("float_attention_backward_query", &b, td_be_data(out), td_be_numel(out));
}

/* The key or value gradient: every row's lse and D first (2 L floats per head, the only
 * buffer), then one work unit per key block. */
static td_status dkv(const char *op, const att_bwd *b, bool want_key, float *po, int64_t numel)
{
    const att *a = &b->a;
    if (a->l == 0) { /* no queries: an empty sum */
        fill(po, numel, 0.0f);
        return TD_OK;
    }
    if (a->e == 0) { /* the value gradient (the key's is empty): weights of 0 / sqrt(0) scores */
        fill(po, numel, NAN);
        return TD_OK;
    }
    if (short_rows(a))
        return heads(op, b, want_key ? WANT_KEY : WANT_VALUE, po);
    float *stats = malloc(sizeof(float) * (size_t)(2 * a->bh * a->l));
    if (stats == NULL)
        return td_error(TD_E_NOMEM, "%s: out of memory for the rows' logsumexp (%lld floats)", op,
                        (long long)(2 * a->bh * a->l));
    float *lse = stats, *d = stats + a->bh * a->l;
    const int64_t nq = blocks(a->l, ATT_BQ), nk = blocks(a->s, ATT_BK);
    TD_CPU_FOR_WORK(u, a->bh * nq, a->bh * head_work(a), {
        const int64_t h = u / nq, i0 = (u % nq) * ATT_BQ;
        const int64_t bq = a->l - i0 < ATT_BQ ? a->l - i0 : ATT_BQ;
        row_stats(b, h, i0, bq, lse + h * a->l + i0, d + h * a->l + i0);
    });
    const int64_t n = want_key ? a->e : a->ev;
    TD_CPU_FOR_WORK(u, a->bh * nk, a->bh * head_work(a) * 2, {
        const int64_t h = u / nk, j0 = (u % nk) * ATT_BK;
        const int64_t bk = a->s - j0 < ATT_BK ? a->s - j0 : ATT_BK;
        dkv_block(b, want_key, h, j0, bk, lse, d, po + (h * a->s + j0) * n);
    });
    free(stats);
    return TD_OK;
}

td_status td_cpu_float_attention_backward_key(const td_tensor *query, const td_tensor *key, const td_tensor *value,
                                              const td_tensor *output, const td_tensor *grad, int64_t causal,
                                              td_tensor *out)
{
    const att_bwd b = bwd_of(query, key, value, output, grad, causal);
    return dkv("float_attention_backward_key", &b, true, td_be_data(out), td_be_numel(out));
}

td_status td_cpu_float_attention_backward_value(const td_tensor *query, const td_tensor *key, const td_tensor *value,
                                                const td_tensor *output, const td_tensor *grad, int64_t causal,
                                                td_tensor *out)
{
    const att_bwd b = bwd_of(query, key, value, output, grad, causal);
    return dkv("float_attention_backward_value", &b, false, td_be_data(out), td_be_numel(out));
}

/* All three gradients, flattened one after the other (dq, dk, dv): whole heads in one pass
 * at short contexts (head_grad_all); otherwise, and for the empty edge cases, the three
 * blocked paths above one after the other, each into its part. */
td_status td_cpu_float_attention_backward(const td_tensor *query, const td_tensor *key, const td_tensor *value,
                                          const td_tensor *output, const td_tensor *grad, int64_t causal,
                                          td_tensor *out)
{
    static const char op[] = "float_attention_backward";
    const att_bwd b = bwd_of(query, key, value, output, grad, causal);
    const att *a = &b.a;
    float *po = td_be_data(out);
    const int64_t nq = a->bh * a->l * a->e, nk = a->bh * a->s * a->e, nv = a->bh * a->s * a->ev;
    if (short_rows(a) && a->l > 0 && a->s > 0 && a->e > 0)
        return heads(op, &b, WANT_ALL, po);
    td_status st = bwd_query(op, &b, po, nq);
    if (st == TD_OK)
        st = dkv(op, &b, true, po + nq, nk);
    if (st == TD_OK)
        st = dkv(op, &b, false, po + nq + nk, nv);
    return st;
}
