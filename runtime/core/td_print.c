/* Tensors as text: a header line (shape, dtype, device) and the values laid out as
 * numpy.array2string lays them out with its default options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"
#include "td_ops.h"

/* NumPy's defaults: summarize past 1000 elements, 3 edge items, lines of 75, precision 8. */
#define THRESHOLD 1000
#define EDGE 3
#define LINE_WIDTH 75
#define PRECISION 8

/* A growing string; after a failed allocation it stays as it was and oom is set. */
typedef struct sb {
    char *p;
    size_t n, cap;
    bool oom;
} sb;

static void sb_putn(sb *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = td_malloc(cap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        if (b->n)
            memcpy(p, b->p, b->n);
        td_free(b->p);
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_puts(sb *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_spaces(sb *b, int n)
{
    for (int i = 0; i < n; i++)
        sb_putn(b, " ", 1);
}

static void sb_free(sb *b)
{
    td_free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* ---- one float as digits ---- */

/* A finite float x >= 0 as its shortest decimal digits that read back as x: x = d.ddd * 10^e,
 * digits without the dot and without trailing zeros ("0" for zero). */
static void shortest_digits(float x, char digits[16], int *e)
{
    char buf[40];
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, (double)x);
        if (strtof(buf, NULL) == x)
            break;
    }
    int k = 0;
    const char *c = buf;
    for (; *c != '\0' && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9' && k < 15)
            digits[k++] = *c;
    digits[k] = '\0';
    *e = *c == 'e' ? atoi(c + 1) : 0;
    while (k > 1 && digits[k - 1] == '0')
        digits[--k] = '\0';
}

/* Positional: the integer part (with its sign) and the fraction, at most PRECISION digits. */
static void positional_parts(float x, char ip[64], char fp[64])
{
    char digits[16];
    int e;
    const float ax = fabsf(x);
    shortest_digits(ax, digits, &e);
    const int nd = (int)strlen(digits);
    char body[64];
    int bi = 0;
    if (signbit(x))
        ip[bi++] = '-';
    if (e >= 0) {
        for (int i = 0; i <= e && bi < 60; i++)
            ip[bi++] = i < nd ? digits[i] : '0';
        ip[bi] = '\0';
        snprintf(fp, 64, "%s", e + 1 < nd ? digits + e + 1 : "");
    } else {
        ip[bi++] = '0';
        ip[bi] = '\0';
        int fi = 0;
        for (int i = 0; i < -e - 1 && fi < 60; i++)
            fp[fi++] = '0';
        for (int i = 0; i < nd && fi < 62; i++)
            fp[fi++] = digits[i];
        fp[fi] = '\0';
    }
    if (strlen(fp) > PRECISION) {
        /* More digits than the precision: rounded to it, trailing zeros dropped. */
        snprintf(body, sizeof body, "%.*f", PRECISION, (double)ax);
        char *dot = strchr(body, '.');
        char *f = dot ? dot + 1 : body + strlen(body);
        if (dot)
            *dot = '\0';
        size_t fl = strlen(f);
        while (fl > 0 && f[fl - 1] == '0')
            f[--fl] = '\0';
        size_t k = 0, bl = strlen(body), fl2 = strlen(f);
        if (signbit(x))
            ip[k++] = '-';
        if (bl > 62 - k)
            bl = 62 - k;
        memcpy(ip + k, body, bl);
        ip[k + bl] = '\0';
        if (fl2 > 63)
            fl2 = 63;
        memmove(fp, f, fl2);
        fp[fl2] = '\0';
    }
}

/* Scientific: integer digit (with its sign), fraction digits, exponent. */
static void scientific_parts(float x, char ip[8], char fp[16], int *e)
{
    char digits[16];
    shortest_digits(fabsf(x), digits, e);
    snprintf(ip, 8, "%s%c", signbit(x) ? "-" : "", digits[0]);
    snprintf(fp, 16, "%s", digits + 1);
}

/* ---- the element formatter (numpy's FloatingFormat / IntegerFormat / BoolFormat) ---- */

typedef struct fmt {
    td_dtype dtype;
    const void *data;
    bool zero_d;
    /* floats */
    bool exp_mode;
    int pad_left, pad_right, precision, exp_size;
    /* ints */
    int width;
} fmt;

typedef struct walk {
    const fmt *f;
    int ndim;
    int64_t dims[TD_MAX_DIMS];
    int64_t strides[TD_MAX_DIMS];
    bool summarize;
} walk;

static int ndigits_i64(int64_t v)
{
    char buf[32];
    return snprintf(buf, sizeof buf, "%lld", (long long)v);
}

/* Calls fn on every element that is shown (all of them, or the edges when summarizing). */
typedef void (*visit_fn)(fmt *f, int64_t flat, void *acc);
static void visit(const walk *w, int axis, int64_t base, fmt *f, visit_fn fn, void *acc)
{
    if (axis == w->ndim) {
        fn(f, base, acc);
        return;
    }
    const int64_t n = w->dims[axis];
    const bool cut = w->summarize && n > 2 * EDGE;
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == EDGE)
            i = n - EDGE;
        visit(w, axis + 1, base + i * w->strides[axis], f, fn, acc);
    }
}

typedef struct float_acc {
    bool any_finite, any_nonfinite, neg_inf, any_nonzero;
    double max_abs, min_abs;
} float_acc;

static void scan_range(fmt *f, int64_t flat, void *acc)
{
    float_acc *a = acc;
    const float x = ((const float *)f->data)[flat];
    if (!isfinite(x)) {
        a->any_nonfinite = true;
        if (isinf(x) && x < 0)
            a->neg_inf = true;
        return;
    }
    a->any_finite = true;
    if (x != 0.0f) {
        const double ax = fabs((double)x);
        if (!a->any_nonzero || ax > a->max_abs)
            a->max_abs = ax;
        if (!a->any_nonzero || ax < a->min_abs)
            a->min_abs = ax;
        a->any_nonzero = true;
    }
}

static int max_int(int a, int b) { return a > b ? a : b; }

static void scan_pads(fmt *f, int64_t flat, void *acc)
{
    (void)acc;
    const float x = ((const float *)f->data)[flat];
    if (!isfinite(x))
        return;
    if (f->exp_mode) {
        char ip[8], fp[16];
        int e;
        scientific_parts(x, ip, fp, &e);
        f->pad_left = max_int(f->pad_left, (int)strlen(ip));
        f->precision = max_int(f->precision, (int)strlen(fp));
        f->exp_size = max_int(f->exp_size, max_int(2, ndigits_i64(e < 0 ? -e : e)));
    } else {
        char ip[64], fp[64];
        positional_parts(x, ip, fp);
        f->pad_left = max_int(f->pad_left, (int)strlen(ip));
        f->pad_right = max_int(f->pad_right, (int)strlen(fp));
    }
}

typedef struct int_acc {
    bool any;
    int64_t lo, hi;
} int_acc;

static void scan_ints(fmt *f, int64_t flat, void *acc)
{
    int_acc *a = acc;
    const int64_t v = f->dtype == TD_I64 ? ((const int64_t *)f->data)[flat] : ((const int32_t *)f->data)[flat];
    if (!a->any || v < a->lo)
        a->lo = v;
    if (!a->any || v > a->hi)
        a->hi = v;
    a->any = true;
}

static void fmt_prepare(fmt *f, const walk *w)
{
    if (f->dtype == TD_I32 || f->dtype == TD_I64) {
        int_acc a = { 0 };
        visit(w, 0, 0, f, scan_ints, &a);
        f->width = a.any ? max_int(ndigits_i64(a.hi), ndigits_i64(a.lo)) : 0;
        return;
    }
    if (f->dtype != TD_F32)
        return;
    float_acc a = { 0 };
    visit(w, 0, 0, f, scan_range, &a);
    f->exp_mode = a.any_nonzero && (a.max_abs >= 1e8 || a.min_abs < 1e-4 || a.max_abs / a.min_abs > 1000.0);
    if (a.any_finite)
        visit(w, 0, 0, f, scan_pads, NULL);
    if (f->exp_mode)
        f->pad_right = f->exp_size + 2 + f->precision;
    if (a.any_nonfinite) {
        /* room for "nan", "inf" and "-inf" right-aligned in the column */
        const int offset = f->pad_right + 1;
        f->pad_left = max_int(f->pad_left, max_int(3 - offset, 3 - offset + (a.neg_inf ? 1 : 0)));
    }
}

/* The text of element flat into out (room for 128). */
static void fmt_elem(const fmt *f, int64_t flat, char out[128])
{
    char local[128];
    size_t n = 0;
    if (f->dtype == TD_BOOL) {
        const bool v = ((const bool *)f->data)[flat];
        snprintf(out, 128, "%s", v ? (f->zero_d ? "True" : " True") : "False");
        return;
    }
    if (f->dtype == TD_I32) {
        snprintf(out, 128, "%*d", f->width, (int)((const int32_t *)f->data)[flat]);
        return;
    }
    if (f->dtype == TD_I64) {
        snprintf(out, 128, "%*lld", f->width, (long long)((const int64_t *)f->data)[flat]);
        return;
    }
    const float x = ((const float *)f->data)[flat];
    if (!isfinite(x)) {
        const char *s = isnan(x) ? "nan" : x < 0 ? "-inf" : "inf";
        const int w = f->pad_left + f->pad_right + 1;
        snprintf(out, 128, "%*s", w > (int)strlen(s) ? w : (int)strlen(s), s);
        return;
    }
    if (f->exp_mode) {
        char ip[8], fp[16];
        int e;
        scientific_parts(x, ip, fp, &e);
        n += (size_t)snprintf(local + n, sizeof local - n, "%*s.%s", f->pad_left, ip, fp);
        for (int i = (int)strlen(fp); i < f->precision && n < sizeof local - 1; i++)
            local[n++] = '0';
        snprintf(local + n, sizeof local - n, "e%c%0*d", e < 0 ? '-' : '+', f->exp_size, e < 0 ? -e : e);
    } else {
        char ip[64], fp[64];
        positional_parts(x, ip, fp);
        snprintf(local, sizeof local, "%*s.%-*s", f->pad_left, ip, f->pad_right, fp);
    }
    memcpy(out, local, sizeof local);
}

/* ---- the layout (numpy's _formatArray: nested brackets, wrapped rows, "...") ---- */

/* Appends word to line, first moving line to s when it would pass width. */
static void extend_line(sb *s, sb *line, const char *word, int width, int indent)
{
    const size_t wl = strlen(word);
    bool wrap = line->n + wl > (size_t)width;
    if (line->n <= (size_t)indent)
        wrap = false;
    if (wrap) {
        size_t keep = line->n;
        while (keep > 0 && line->p[keep - 1] == ' ')
            keep--;
        sb_putn(s, line->p, keep);
        sb_puts(s, "\n");
        line->n = 0;
        if (line->p)
            line->p[0] = '\0';
        sb_spaces(line, indent);
    }
    sb_puts(line, word);
}

static void layout(const walk *w, int axis, int64_t base, int indent, int width, sb *out)
{
    char word[128];
    if (axis == w->ndim) {
        fmt_elem(w->f, base, word);
        sb_puts(out, word);
        return;
    }
    const int axes_left = w->ndim - axis;
    const int64_t n = w->dims[axis], stride = w->strides[axis];
    const bool cut = w->summarize && n > 2 * EDGE;
    const int64_t lead = cut ? EDGE : 0, trail = cut ? EDGE : n;
    sb s = { 0 };
    if (axes_left == 1) {
        const int elem_width = width - 1;
        sb line = { 0 };
        sb_spaces(&line, indent);
        for (int64_t i = 0; i < lead; i++) {
            fmt_elem(w->f, base + i * stride, word);
            extend_line(&s, &line, word, elem_width, indent);
            sb_puts(&line, " ");
        }
        if (cut) {
            extend_line(&s, &line, "...", elem_width, indent);
            sb_puts(&line, " ");
        }
        for (int64_t i = trail; i > 1; i--) {
            fmt_elem(w->f, base + (n - i) * stride, word);
            extend_line(&s, &line, word, elem_width, indent);
            sb_puts(&line, " ");
        }
        fmt_elem(w->f, base + (n - 1) * stride, word);
        extend_line(&s, &line, word, elem_width, indent);
        if (line.oom)
            s.oom = true;
        else
            sb_putn(&s, line.p, line.n);
        sb_free(&line);
    } else {
        char sep[TD_MAX_DIMS + 1];
        int k = 0;
        for (; k < axes_left - 1; k++)
            sep[k] = '\n';
        sep[k] = '\0';
        for (int64_t i = 0; i < lead; i++) {
            sb_spaces(&s, indent);
            layout(w, axis + 1, base + i * stride, indent + 1, width - 1, &s);
            sb_puts(&s, sep);
        }
        if (cut) {
            sb_spaces(&s, indent);
            sb_puts(&s, "...");
            sb_puts(&s, sep);
        }
        for (int64_t i = trail; i > 1; i--) {
            sb_spaces(&s, indent);
            layout(w, axis + 1, base + (n - i) * stride, indent + 1, width - 1, &s);
            sb_puts(&s, sep);
        }
        sb_spaces(&s, indent);
        layout(w, axis + 1, base + (n - 1) * stride, indent + 1, width - 1, &s);
    }
    if (s.oom) {
        out->oom = true;
    } else {
        sb_puts(out, "[");
        if (s.n > (size_t)indent)
            sb_putn(out, s.p + indent, s.n - (size_t)indent);
        sb_puts(out, "]");
    }
    sb_free(&s);
}

/* ---- the whole text ---- */

static const char *strategy_name(td_checkpoint c)
{
    return c == TD_CHECKPOINT_BALANCED ? "balanced" : "none";
}

static void put_header(const td_tensor *t, sb *b)
{
    char shape[TD_MAX_DIMS * 24 + 4];
    char line[512];
    td_shape_format(&t->shape, shape, sizeof shape);
    const td_device *d = t->device;
    if (d->backend == TD_BACKEND_AUTODIFF) {
        bool tracked = t->kind == TD_BACKEND_AUTODIFF && t->node != NULL;
        snprintf(line, sizeof line, "tensor shape=%s dtype=%s device=autodiff(%s:%d, %s)%s", shape,
                 td_dtype_name(t->dtype), td_backend_name(d->inner->backend), d->inner->index,
                 strategy_name(d->strategy), tracked ? " tracked" : "");
    } else {
        snprintf(line, sizeof line, "tensor shape=%s dtype=%s device=%s:%d", shape, td_dtype_name(t->dtype),
                 td_backend_name(d->backend), d->index);
    }
    sb_puts(b, line);
    sb_puts(b, "\n");
}

/* The text of t into b (the data read back from its device). */
static td_status format_into(const td_tensor *t, sb *b)
{
    static const char op[] = "tensor_format";
    put_header(t, b);
    const int64_t numel = t->shape.numel;
    if (numel == 0) {
        sb_puts(b, "[]");
        return b->oom ? td_error(TD_E_NOMEM, "%s: no memory for the text", op) : TD_OK;
    }
    /* Other dtypes of a class are shown through f32 (floats: exact for f16 / bf16, f64
     * rounded for display) or i64 (ints: exact). */
    td_dtype shown = t->dtype;
    if (td_dtype_class(t->dtype) == TD_CLASS_FLOAT && t->dtype != TD_F32)
        shown = TD_F32;
    if (td_dtype_class(t->dtype) == TD_CLASS_INT && t->dtype != TD_I32)
        shown = TD_I64;
    const size_t esize = td_dtype_size(shown);
    if (esize == 0)
        return td_error(TD_E_UNSUPPORTED, "%s: cannot show %s data", op, td_dtype_name(t->dtype));
    if ((uint64_t)numel > SIZE_MAX / esize)
        return td_error(TD_E_NOMEM, "%s: %lld elements do not fit in memory", op, (long long)numel);
    void *data = td_malloc((size_t)numel * esize);
    if (data == NULL)
        return td_error(TD_E_NOMEM, "%s: no memory to read %lld elements back", op, (long long)numel);
    td_status st;
    if (t->dtype != TD_F32 && t->dtype != TD_I32 && t->dtype != TD_BOOL) {
        st = td_error(TD_E_UNSUPPORTED, "%s: cannot read %s data back in this build", op, td_dtype_name(t->dtype));
#ifdef TD_HAVE_OP_FLOAT_INTO_DATA
        if (shown == TD_F32)
            st = td_float_into_data_dtype(t, TD_F32, data, numel);
#endif
#ifdef TD_HAVE_OP_INT_INTO_DATA
        if (shown == TD_I64)
            st = td_int_into_data_dtype(t, TD_I64, data, numel);
#endif
    } else switch (t->dtype) {
#ifdef TD_HAVE_OP_FLOAT_INTO_DATA
    case TD_F32: st = td_float_into_data(t, data, numel); break;
#endif
#ifdef TD_HAVE_OP_INT_INTO_DATA
    case TD_I32: st = td_int_into_data(t, data, numel); break;
#endif
#ifdef TD_HAVE_OP_BOOL_INTO_DATA
    case TD_BOOL: st = td_bool_into_data(t, data, numel); break;
#endif
    default: /* an unknown dtype, or a selective build (TD_OPS) without its into_data */
        st = td_error(TD_E_UNSUPPORTED, "%s: cannot read %s data back in this build", op, td_dtype_name(t->dtype));
        break;
    }
    if (st != TD_OK) {
        td_free(data);
        return st;
    }
    fmt f = { .dtype = shown, .data = data, .zero_d = t->shape.ndim == 0 };
    walk w = { .f = &f, .ndim = t->shape.ndim, .summarize = numel > THRESHOLD };
    int64_t stride = 1;
    for (int i = t->shape.ndim - 1; i >= 0; i--) {
        w.dims[i] = t->shape.dims[i];
        w.strides[i] = stride;
        stride *= t->shape.dims[i];
    }
    fmt_prepare(&f, &w);
    layout(&w, 0, 0, 1, LINE_WIDTH, b);
    td_free(data);
    return b->oom ? td_error(TD_E_NOMEM, "%s: no memory for the text", op) : TD_OK;
}

td_status td_tensor_format(const td_tensor *t, char *buf, size_t cap, size_t *len)
{
    static const char op[] = "tensor_format";
    if (len != NULL)
        *len = 0;
    if (cap > 0 && buf == NULL)
        return td_err_null(op, "buf");
    if (cap > 0)
        buf[0] = '\0';
    if (t == NULL)
        return td_err_null(op, "t");
    sb b = { 0 };
    td_status st = format_into(t, &b);
    if (st == TD_OK) {
        if (len != NULL)
            *len = b.n;
        if (cap > 0) {
            const size_t m = b.n < cap - 1 ? b.n : cap - 1;
            if (m > 0)
                memcpy(buf, b.p, m);
            buf[m] = '\0';
        }
    }
    sb_free(&b);
    return st;
}

td_status td_tensor_print(const td_tensor *t, FILE *f)
{
    static const char op[] = "tensor_print";
    if (t == NULL)
        return td_err_null(op, "t");
    if (f == NULL)
        return td_err_null(op, "f");
    sb b = { 0 };
    td_status st = format_into(t, &b);
    if (st == TD_OK) {
        if (fwrite(b.p, 1, b.n, f) != b.n || fputc('\n', f) == EOF)
            st = td_error(TD_E_INVALID, "%s: writing to the stream failed", op);
    }
    sb_free(&b);
    return st;
}
