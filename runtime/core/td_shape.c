/* Shapes and the shape rules named by the op specs (validation + result shape). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "td_internal.h"

void td_shape_format(const td_shape *s, char *buf, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (int i = 0; i < s->ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)s->dims[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

bool td_shape_equal(const td_shape *a, const td_shape *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

/* The helpers below multiply dims of shapes the rules made (td_shape_from, set_numel):
 * the product of the non-zero dims of any subset is at most TD_MAX_NUMEL, so they need no
 * checks; what the rules compute from their arguments is checked (td_add_ok, td_mul_ok). */
void td_shape_strides(const td_shape *s, int64_t strides[TD_MAX_DIMS])
{
    int64_t st = 1;
    for (int i = s->ndim - 1; i >= 0; i--) {
        strides[i] = st;
        st *= s->dims[i];
    }
}

void td_broadcast_strides(const td_shape *in, const td_shape *out, int64_t strides[TD_MAX_DIMS])
{
    int64_t own[TD_MAX_DIMS];
    td_shape_strides(in, own);
    int off = out->ndim - in->ndim;
    for (int i = 0; i < out->ndim; i++) {
        int j = i - off;
        strides[i] = (j < 0 || in->dims[j] == 1) ? 0 : own[j];
    }
}


/* The element count of dims (0 when a dim is 0); false when the product of the non-zero
 * dims passes TD_MAX_NUMEL. The limit holds for the non-zero dims even when a dim is 0, so
 * strides and byte offsets computed over any subset of the dims never overflow. Checked
 * before every product, so no rule can overflow however its dims were combined. */
static bool numel_of(const int64_t *dims, int ndim, int64_t *numel)
{
    int64_t nonzero = 1;
    bool zero = false;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] == 0) {
            zero = true;
            continue;
        }
        if (!td_mul_ok(nonzero, dims[i], &nonzero) || nonzero > TD_MAX_NUMEL)
            return false;
    }
    *numel = zero ? 0 : nonzero;
    return true;
}

/* Sets s->numel from s->dims (each at least 0). */
static td_status set_numel(const char *op, td_shape *s)
{
    if (!numel_of(s->dims, s->ndim, &s->numel)) {
        char buf[256];
        td_shape_format(s, buf, sizeof buf);
        return td_error(TD_E_SHAPE, "%s: the result shape %s has more than 2^40 elements", op, buf);
    }
    return TD_OK;
}

td_status td_shape_from(const char *op, const int64_t *dims, int ndim, td_shape *out)
{
    if (ndim < 0 || ndim > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: %d dims given; tensors have 0 to %d", op, ndim, TD_MAX_DIMS);
    out->ndim = ndim;
    out->numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0)
            return td_error(TD_E_SHAPE, "%s: dim %d has size %lld; sizes cannot be negative", op, i,
                            (long long)dims[i]);
        out->dims[i] = dims[i];
    }
    if (!numel_of(dims, ndim, &out->numel))
        return td_error(TD_E_SHAPE, "%s: shape too large", op);
    return TD_OK;
}

/* A dim argument, as in PyTorch: -ndim <= dim < ndim, a negative one counting from the end;
 * a 0-d tensor takes 0 and -1, its one element seen as a dim of size 1. */
static td_status norm_dim(const char *op, const char *what, int64_t *dim, int ndim)
{
    const int n = ndim > 0 ? ndim : 1;
    if (*dim < -n || *dim >= n)
        return td_error(TD_E_RANGE, "%s: %s %lld is out of range for a tensor of %d dims (expected %d to %d)", op,
                        what, (long long)*dim, ndim, -n, n - 1);
    if (*dim < 0)
        *dim += n;
    return TD_OK;
}

td_status td_rule_same(const char *op, const td_shape *a, td_shape *out)
{
    (void)op;
    *out = *a;
    return TD_OK;
}

td_status td_rule_broadcast_slow(const char *op, const td_shape *a, const td_shape *b, td_shape *out)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    out->ndim = n;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->ndim), ib = i - (n - b->ndim);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[128], sb[128];
            td_shape_format(a, sa, sizeof sa);
            td_shape_format(b, sb, sizeof sb);
            return td_error(TD_E_SHAPE, "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", op, sa, sb,
                            i, (long long)da, (long long)db);
        }
        out->dims[i] = da == 1 ? db : da;
    }
    return set_numel(op, out);
}

td_status td_rule_broadcast3(const char *op, const td_shape *a, const td_shape *b, const td_shape *c,
                             td_shape *out)
{
    td_shape ab;
    TD_TRY(td_rule_broadcast(op, a, b, &ab));
    return td_rule_broadcast(op, &ab, c, out);
}

td_status td_rule_from_shape(const char *op, const int64_t *shape, int shape_len, td_shape *out)
{
    return td_shape_from(op, shape, shape_len, out);
}

td_status td_rule_random(const char *op, const int64_t *shape, int shape_len, td_distribution dist, float p0,
                         float p1, td_shape *out)
{
    if (!isfinite(p0) || !isfinite(p1))
        return td_error(TD_E_INVALID, "%s: the parameters must be finite (got %g and %g)", op, (double)p0, (double)p1);
    if (dist == TD_UNIFORM && !(p0 <= p1 && isfinite(p1 - p0)))
        return td_error(TD_E_INVALID, "%s: uniform needs low <= high and a finite range (got [%g, %g))", op,
                        (double)p0, (double)p1);
    if (dist == TD_NORMAL && p1 < 0)
        return td_error(TD_E_INVALID, "%s: normal needs a standard deviation >= 0 (got %g)", op, (double)p1);
    return td_shape_from(op, shape, shape_len, out);
}

td_status td_rule_arange(const char *op, int64_t start, int64_t end, int64_t step, td_shape *out)
{
    if (step == 0)
        return td_error(TD_E_INVALID, "%s: step must not be 0", op);
    if ((step > 0 && start > end) || (step < 0 && start < end))
        return td_error(TD_E_SHAPE, "%s: range [%lld, %lld) goes against the sign of step %lld", op,
                        (long long)start, (long long)end, (long long)step);
    if (start == end) { /* empty, as in PyTorch */
        const int64_t zero = 0;
        return td_shape_from(op, &zero, 1, out);
    }
    /* The elements are int32: start and the last element start + (n - 1) * step must be in
     * range; end need not be (arange(0, 2^40, 2^40) is [0]). Unsigned arithmetic: end - start
     * and (n - 1) * |step| are below 2^64 whatever the int64 arguments. */
    if (start < INT32_MIN || start > INT32_MAX)
        return td_error(TD_E_RANGE, "%s: start %lld is outside the int32 range", op, (long long)start);
    const uint64_t span = step > 0 ? (uint64_t)end - (uint64_t)start : (uint64_t)start - (uint64_t)end;
    const uint64_t mag = step > 0 ? (uint64_t)step : 0u - (uint64_t)step;
    const uint64_t steps = (span - 1) / mag; /* n - 1 */
    const uint64_t room = step > 0 ? (uint64_t)(INT32_MAX - start) : (uint64_t)(start - INT32_MIN);
    if (steps > room / mag)
        return td_error(TD_E_RANGE, "%s: range [%lld, %lld) with step %lld leaves the int32 range", op,
                        (long long)start, (long long)end, (long long)step);
    int64_t n = (int64_t)steps + 1;
    return td_shape_from(op, &n, 1, out);
}

td_status td_rule_reshape(const char *op, const td_shape *a, const int64_t *shape, int shape_len, td_shape *out)
{
    if (shape_len < 0 || shape_len > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: %d dims given; tensors have 0 to %d", op, shape_len, TD_MAX_DIMS);
    int64_t dims[TD_MAX_DIMS];
    int infer = -1;
    int64_t known = 1; /* product of the given dims, 0 when one is 0 */
    int64_t nonzero = 1;
    for (int i = 0; i < shape_len; i++) {
        dims[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0)
                return td_error(TD_E_SHAPE, "%s: only one dim may be -1", op);
            infer = i;
        } else if (shape[i] < 0) {
            return td_error(TD_E_SHAPE, "%s: dim %d has size %lld", op, i, (long long)shape[i]);
        } else if (shape[i] == 0) {
            known = 0;
        } else {
            if (!td_mul_ok(nonzero, shape[i], &nonzero) || nonzero > TD_MAX_NUMEL)
                return td_error(TD_E_SHAPE, "%s: shape too large", op);
            known = known == 0 ? 0 : nonzero;
        }
    }
    if (infer >= 0 && known == 0) {
        /* PyTorch: with a 0 among the given dims, any size of the -1 dim fits. */
        char sa[128];
        td_shape_format(a, sa, sizeof sa);
        return td_error(TD_E_SHAPE,
                        "%s: cannot reshape %s into a shape with a 0 and a -1: the size of the -1 dim is ambiguous",
                        op, sa);
    }
    if (infer >= 0) {
        if (a->numel % known != 0)
            return td_error(TD_E_SHAPE, "%s: cannot infer the -1 dim: %lld elements are not a multiple of %lld", op,
                            (long long)a->numel, (long long)known);
        dims[infer] = a->numel / known;
        known = a->numel;
    }
    if (known != a->numel) {
        char sa[128];
        td_shape_format(a, sa, sizeof sa);
        return td_error(TD_E_SHAPE, "%s: cannot reshape %s (%lld elements) into %lld elements", op, sa,
                        (long long)a->numel, (long long)known);
    }
    return td_shape_from(op, dims, shape_len, out);
}

td_status td_rule_swap_dims(const char *op, const td_shape *a, int64_t *dim0, int64_t *dim1, td_shape *out)
{
    TD_TRY(norm_dim(op, "dim0", dim0, a->ndim));
    TD_TRY(norm_dim(op, "dim1", dim1, a->ndim));
    *out = *a;
    if (a->ndim == 0)
        return TD_OK;
    out->dims[*dim0] = a->dims[*dim1];
    out->dims[*dim1] = a->dims[*dim0];
    return TD_OK;
}

td_status td_rule_permute(const char *op, const td_shape *a, const int64_t *perm, int perm_len, int64_t *perm_out,
                          td_shape *out)
{
    if (perm_len != a->ndim)
        return td_error(TD_E_SHAPE, "%s: perm has %d entries for a tensor of %d dims", op, perm_len, a->ndim);
    bool seen[TD_MAX_DIMS] = { false };
    *out = *a;
    for (int i = 0; i < perm_len; i++) {
        const int64_t p = perm[i] < 0 && perm[i] >= -a->ndim ? perm[i] + a->ndim : perm[i];
        if (p < 0 || p >= a->ndim)
            return td_error(TD_E_RANGE, "%s: perm[%d] = %lld is out of range [%d, %d)", op, i, (long long)perm[i],
                            -a->ndim, a->ndim);
        if (seen[p])
            return td_error(TD_E_INVALID, "%s: perm repeats dim %lld", op, (long long)p);
        seen[p] = true;
        perm_out[i] = p;
        out->dims[i] = a->dims[p];
    }
    return TD_OK;
}

td_status td_rule_expand(const char *op, const td_shape *a, const int64_t *shape, int shape_len, td_shape *out)
{
    if (shape_len < a->ndim || shape_len > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: cannot expand a tensor of %d dims to %d dims", op, a->ndim, shape_len);
    int64_t dims[TD_MAX_DIMS];
    int off = shape_len - a->ndim;
    for (int i = 0; i < shape_len; i++) {
        int64_t have = i >= off ? a->dims[i - off] : -2;
        int64_t want = shape[i];
        if (want == -1) {
            if (have == -2)
                return td_error(TD_E_SHAPE, "%s: -1 is not allowed for the new leading dim %d", op, i);
            want = have;
        }
        if (have != -2 && have != 1 && have != want)
            return td_error(TD_E_SHAPE, "%s: dim %d of size %lld cannot expand to %lld", op, i, (long long)have,
                            (long long)want);
        dims[i] = want;
    }
    return td_shape_from(op, dims, shape_len, out);
}

/* A range bound: a negative one counts from the end of the dim, as in PyTorch and burn. */
static int64_t norm_bound(int64_t b, int64_t size)
{
    return b < 0 && b >= -size ? b + size : b;
}

/* Checks the ranges and writes them, normalized, to starts_out and ends_out. */
static td_status check_ranges(const char *op, const td_shape *a, const int64_t *starts, int starts_len,
                              const int64_t *ends, int ends_len, int64_t *starts_out, int64_t *ends_out,
                              td_shape *out)
{
    if (starts_len != ends_len)
        return td_error(TD_E_SHAPE, "%s: %d starts but %d ends", op, starts_len, ends_len);
    if (starts_len > a->ndim)
        return td_error(TD_E_RANGE, "%s: %d ranges for a tensor of %d dims", op, starts_len, a->ndim);
    *out = *a;
    for (int i = 0; i < starts_len; i++) {
        const int64_t s = norm_bound(starts[i], a->dims[i]), e = norm_bound(ends[i], a->dims[i]);
        if (s < 0 || s > e || e > a->dims[i]) /* start == end: empty */
            return td_error(TD_E_RANGE, "%s: range [%lld, %lld) is out of range for dim %d of size %lld", op,
                            (long long)starts[i], (long long)ends[i], i, (long long)a->dims[i]);
        starts_out[i] = s;
        ends_out[i] = e;
        out->dims[i] = e - s;
    }
    return set_numel(op, out);
}

td_status td_rule_slice(const char *op, const td_shape *a, const int64_t *starts, int starts_len,
                        int64_t *starts_out, const int64_t *ends, int ends_len, int64_t *ends_out, td_shape *out)
{
    return check_ranges(op, a, starts, starts_len, ends, ends_len, starts_out, ends_out, out);
}

td_status td_rule_slice_assign(const char *op, const td_shape *a, const td_shape *value, const int64_t *starts,
                               int starts_len, int64_t *starts_out, const int64_t *ends, int ends_len,
                               int64_t *ends_out, td_shape *out)
{
    td_shape sl = { 0 };
    TD_TRY(check_ranges(op, a, starts, starts_len, ends, ends_len, starts_out, ends_out, &sl));
    if (!td_shape_equal(&sl, value)) {
        char s1[128], s2[128];
        td_shape_format(&sl, s1, sizeof s1);
        td_shape_format(value, s2, sizeof s2);
        return td_error(TD_E_SHAPE, "%s: the slice has shape %s but value has shape %s", op, s1, s2);
    }
    *out = *a;
    return TD_OK;
}

/* PyTorch's legacy rule: a 1-d tensor of shape [0] is skipped whatever the other shapes. */
static bool cat_skipped(const td_shape *s)
{
    return s->ndim == 1 && s->dims[0] == 0;
}

td_status td_rule_cat(const char *op, const td_tensor *const *xs, int xs_len, int64_t *dim, td_shape *out)
{
    int r = 0; /* the reference: the first input not skipped (xs[0] when all are) */
    while (r < xs_len - 1 && cat_skipped(&xs[r]->shape))
        r++;
    const td_shape *s0 = &xs[r]->shape;
    const bool all_skipped = cat_skipped(s0);
    if (s0->ndim == 0)
        return td_error(TD_E_SHAPE, "%s: 0-d tensors cannot be concatenated (they have no dim to join along)", op);
    TD_TRY(norm_dim(op, "dim", dim, s0->ndim));
    *out = *s0;
    out->dims[*dim] = 0;
    for (int k = 0; k < xs_len; k++) {
        const td_shape *s = &xs[k]->shape;
        if (!all_skipped && cat_skipped(s))
            continue;
        if (s->ndim != s0->ndim)
            return td_error(TD_E_SHAPE, "%s: xs[%d] has %d dims, xs[%d] has %d", op, k, s->ndim, r, s0->ndim);
        for (int i = 0; i < s0->ndim; i++)
            if (i != *dim && s->dims[i] != s0->dims[i])
                return td_error(TD_E_SHAPE, "%s: xs[%d] has size %lld in dim %d, xs[%d] has %lld", op, k,
                                (long long)s->dims[i], i, r, (long long)s0->dims[i]);
        if (!td_add_ok(out->dims[*dim], s->dims[*dim], &out->dims[*dim]) || out->dims[*dim] > TD_MAX_NUMEL)
            return td_error(TD_E_SHAPE, "%s: the result would have more than 2^40 elements", op);
    }
    return set_numel(op, out);
}

td_status td_rule_reduce_all(const char *op, const td_shape *a, td_shape *out)
{
    (void)a;
    return td_shape_from(op, NULL, 0, out);
}

td_status td_rule_reduce_all_nonempty(const char *op, const td_shape *a, td_shape *out)
{
    if (a->numel == 0) {
        char sa[128];
        td_shape_format(a, sa, sizeof sa);
        return td_error(TD_E_SHAPE, "%s: cannot reduce %s: it has no elements, and the reduction has no identity",
                        op, sa);
    }
    return td_shape_from(op, NULL, 0, out);
}

td_status td_rule_reduce_dim(const char *op, const td_shape *a, int64_t *dim, td_shape *out)
{
    TD_TRY(norm_dim(op, "dim", dim, a->ndim));
    *out = *a;
    if (a->ndim == 0)
        return TD_OK; /* a 0-d tensor's one element is the whole dim: the result is 0-d */
    out->dims[*dim] = 1;
    return set_numel(op, out);
}

td_status td_rule_reduce_dim_nonempty(const char *op, const td_shape *a, int64_t *dim, td_shape *out)
{
    TD_TRY(td_rule_reduce_dim(op, a, dim, out));
    if (a->numel == 0 && a->dims[*dim] == 0) {
        char sa[128];
        td_shape_format(a, sa, sizeof sa);
        return td_error(TD_E_SHAPE, "%s: cannot reduce dim %lld of %s: it has size 0, and the reduction has no "
                        "identity", op, (long long)*dim, sa);
    }
    return TD_OK;
}

/* torch.matmul's 1-d operands: a [k] is [1, k] and b [k] is [k, 1], and the 1 each adds
 * is removed from the result: the result of the promoted operands as out2. */
static td_shape matmul_promote_a(const td_shape *a)
{
    td_shape r = *a;
    if (a->ndim == 1) {
        r.ndim = 2;
        r.dims[0] = 1;
        r.dims[1] = a->dims[0];
    }
    return r;
}

static td_shape matmul_promote_b(const td_shape *b)
{
    td_shape r = *b;
    if (b->ndim == 1) {
        r.ndim = 2;
        r.dims[1] = 1;
    }
    return r;
}

void td_matmul_promote(const td_shape *a, const td_shape *b, const td_shape *out, td_shape *a2, td_shape *b2,
                       td_shape *out2)
{
    *a2 = matmul_promote_a(a);
    *b2 = matmul_promote_b(b);
    *out2 = *out;
    if (b->ndim == 1)
        out2->dims[out2->ndim++] = 1;
    if (a->ndim == 1) {
        out2->dims[out2->ndim] = out2->dims[out2->ndim - 1];
        out2->dims[out2->ndim - 1] = 1;
        out2->ndim++;
    }
}

static td_status rule_matmul2(const char *op, const td_shape *a, const td_shape *b, td_shape *out);

/* torch.matmul: 1-d operands are promoted (a [k] -> [1, k], b [k] -> [k, 1]) and the
 * added dims removed from the result: vector @ matrix, matrix @ vector, dot (0-d). */
td_status td_rule_matmul(const char *op, const td_shape *a, const td_shape *b, td_shape *out)
{
    if (a->ndim < 1 || b->ndim < 1)
        return td_error(TD_E_SHAPE, "%s: both inputs need at least 1 dim (got %d and %d)", op, a->ndim, b->ndim);
    if (a->ndim >= 2 && b->ndim >= 2)
        return rule_matmul2(op, a, b, out);
    const int64_t k = a->dims[a->ndim - 1], k2 = b->dims[b->ndim == 1 ? 0 : b->ndim - 2];
    if (k != k2) { /* named with the shapes as given */
        char sa[128], sb[128];
        td_shape_format(a, sa, sizeof sa);
        td_shape_format(b, sb, sizeof sb);
        return td_error(TD_E_SHAPE, "%s: %s @ %s: inner sizes %lld and %lld differ", op, sa, sb, (long long)k,
                        (long long)k2);
    }
    const td_shape a2 = matmul_promote_a(a), b2 = matmul_promote_b(b);
    td_shape o2;
    TD_TRY(rule_matmul2(op, &a2, &b2, &o2));
    int64_t dims[TD_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < o2.ndim; d++)
        if (!(a->ndim == 1 && d == o2.ndim - 2) && !(b->ndim == 1 && d == o2.ndim - 1))
            dims[nd++] = o2.dims[d];
    return td_shape_from(op, dims, nd, out);
}

static td_status rule_matmul2(const char *op, const td_shape *a, const td_shape *b, td_shape *out)
{
    if (a->ndim < 2 || b->ndim < 2)
        return td_error(TD_E_SHAPE, "%s: both inputs need at least 2 dims (got %d and %d)", op, a->ndim, b->ndim);
    int64_t m = a->dims[a->ndim - 2], k = a->dims[a->ndim - 1];
    int64_t k2 = b->dims[b->ndim - 2], n = b->dims[b->ndim - 1];
    if (k != k2) {
        char sa[128], sb[128];
        td_shape_format(a, sa, sizeof sa);
        td_shape_format(b, sb, sizeof sb);
        return td_error(TD_E_SHAPE, "%s: %s @ %s: inner sizes %lld and %lld differ", op, sa, sb, (long long)k,
                        (long long)k2);
    }
    td_shape ba = { .ndim = a->ndim - 2 }, bb = { .ndim = b->ndim - 2 }, batch;
    memcpy(ba.dims, a->dims, sizeof(int64_t) * (size_t)ba.ndim);
    memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.ndim);
    TD_TRY(td_rule_broadcast(op, &ba, &bb, &batch));
    int64_t dims[TD_MAX_DIMS];
    if (batch.ndim + 2 > TD_MAX_DIMS)
        return td_error(TD_E_SHAPE, "%s: result would have more than %d dims", op, TD_MAX_DIMS);
    memcpy(dims, batch.dims, sizeof(int64_t) * (size_t)batch.ndim);
    dims[batch.ndim] = m;
    dims[batch.ndim + 1] = n;
    return td_shape_from(op, dims, batch.ndim + 2, out);
}

td_shape td_shape_swap_last2(const td_shape *s)
{
    td_shape t = *s;
    t.dims[t.ndim - 2] = s->dims[s->ndim - 1];
    t.dims[t.ndim - 1] = s->dims[s->ndim - 2];
    return t;
}

/* matmul of a' and b' (a or b transposed over its last two dims); errors name the shapes as
 * given, with the ^T the op applies. */
static td_status rule_matmul_t(const char *op, const td_shape *a, const td_shape *b, bool ta, bool tb, td_shape *out)
{
    if (a->ndim < 2 || b->ndim < 2)
        return td_error(TD_E_SHAPE, "%s: both inputs need at least 2 dims (got %d and %d)", op, a->ndim, b->ndim);
    const td_shape at = ta ? td_shape_swap_last2(a) : *a, bt = tb ? td_shape_swap_last2(b) : *b;
    const int64_t k = at.dims[at.ndim - 1], k2 = bt.dims[bt.ndim - 2];
    if (k != k2) {
        char sa[128], sb[128];
        td_shape_format(a, sa, sizeof sa);
        td_shape_format(b, sb, sizeof sb);
        return td_error(TD_E_SHAPE, "%s: %s%s @ %s%s: inner sizes %lld and %lld differ", op, sa, ta ? "^T" : "", sb,
                        tb ? "^T" : "", (long long)k, (long long)k2);
    }
    return rule_matmul2(op, &at, &bt, out);
}

td_status td_rule_matmul_nt(const char *op, const td_shape *a, const td_shape *b, td_shape *out)
{
    return rule_matmul_t(op, a, b, false, true, out);
}

td_status td_rule_matmul_tn(const char *op, const td_shape *a, const td_shape *b, td_shape *out)
{
    return rule_matmul_t(op, a, b, true, false, out);
}

td_status td_rule_mask_fill(const char *op, const td_shape *a, const td_shape *mask, td_shape *out)
{
    TD_TRY(td_rule_broadcast(op, a, mask, out));
    if (!td_shape_equal(out, a)) {
        char sa[128], sm[128];
        td_shape_format(a, sa, sizeof sa);
        td_shape_format(mask, sm, sizeof sm);
        return td_error(TD_E_SHAPE, "%s: mask of shape %s does not broadcast to a's shape %s", op, sm, sa);
    }
    return TD_OK;
}

td_status td_rule_host_out(const char *op, const td_shape *a, int64_t dst_len, td_shape *out)
{
    if (dst_len < a->numel)
        return td_error(TD_E_INVALID, "%s: dst holds %lld elements but the tensor has %lld", op, (long long)dst_len,
                        (long long)a->numel);
    *out = *a;
    return TD_OK;
}

static td_shape leading(const td_shape *s, int ndim)
{
    td_shape r = { .ndim = ndim, .numel = 1 };
    for (int d = 0; d < ndim; d++) {
        r.dims[d] = s->dims[d];
        r.numel *= s->dims[d];
    }
    return r;
}

void td_matmul_geometry_of(const td_shape *a1, const td_shape *b1, const td_shape *out1, td_matmul_geometry *g)
{
    td_shape a2, b2, o2; /* 1-d operands as torch.matmul promotes them */
    td_matmul_promote(a1, b1, out1, &a2, &b2, &o2);
    const td_shape *a = &a2, *b = &b2, *out = &o2;
    const int nb = out->ndim - 2;
    g->m = out->dims[nb];
    g->n = out->dims[nb + 1];
    g->k = a->dims[a->ndim - 1];
    g->batch = leading(out, nb);
    td_shape ab = leading(a, a->ndim - 2), bb = leading(b, b->ndim - 2);
    memset(g->a_stride, 0, sizeof g->a_stride);
    memset(g->b_stride, 0, sizeof g->b_stride);
    if (nb > 0) {
        td_broadcast_strides(&ab, &g->batch, g->a_stride);
        td_broadcast_strides(&bb, &g->batch, g->b_stride);
    }
}

td_shape td_shape_nonempty(const td_shape *s)
{
    td_shape r = *s;
    if (r.ndim == 0) {
        r.ndim = 1;
        r.dims[0] = 1;
        r.numel = 1;
    }
    return r;
}

void td_reduce_geometry(const td_shape *s, int64_t dim, int64_t *outer, int64_t *size, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int d = 0; d < (int)dim; d++)
        *outer *= s->dims[d];
    for (int d = (int)dim + 1; d < s->ndim; d++)
        *inner *= s->dims[d];
    *size = s->ndim > 0 ? s->dims[dim] : 1;
}

void td_slice_region(const td_shape *s, const int64_t *starts, int starts_len, const int64_t *ends,
                     td_shape *region, int64_t *offset)
{
    int64_t st[TD_MAX_DIMS];
    td_shape_strides(s, st);
    *region = *s;
    region->numel = 1;
    *offset = 0;
    for (int d = 0; d < s->ndim; d++) {
        if (d < starts_len) {
            region->dims[d] = ends[d] - starts[d];
            *offset += starts[d] * st[d];
        }
        region->numel *= region->dims[d];
    }
}

td_status td_array_at(const char *op, const int64_t *arr, int64_t len, int64_t i, int64_t *out)
{
    int64_t j = i;
    if (i < 0 && !td_add_ok(i, len, &j))
        j = -1;
    if (arr == NULL || j < 0 || j >= len)
        return td_error(TD_E_RANGE, "%s: element %lld of an array of %lld", op, (long long)i, (long long)len);
    *out = arr[j];
    return TD_OK;
}

td_status td_idiv(const char *op, int64_t a, int64_t b, int64_t *out)
{
    if (b == 0)
        return td_error(TD_E_INVALID, "%s: division of %lld by 0", op, (long long)a);
    if (b == -1) {
        if (a == INT64_MIN)
            return td_error(TD_E_RANGE, "%s: %lld / -1 overflows", op, (long long)a);
        *out = -a;
        return TD_OK;
    }
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q -= 1;
    *out = q;
    return TD_OK;
}

td_status td_dim_size(const char *op, const td_shape *s, int64_t dim, int64_t *out)
{
    if (s->ndim == 0 && (dim == 0 || dim == -1)) {
        *out = 1;
        return TD_OK;
    }
    TD_TRY(norm_dim(op, "dim", &dim, s->ndim));
    *out = s->dims[dim];
    return TD_OK;
}
