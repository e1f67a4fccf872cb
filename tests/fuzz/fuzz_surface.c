/* The whole public surface under fuzzing: every op and tuple of the specs, through the
 * generated op table (<build>/generated/fuzz_ops.c, gen/tdgen/emit_fuzz.lua), plus
 * autodiff (require grad, backward, grads), td_tensor_assign, detach, tensor_value,
 * context changes, the CPU fallback, composites, sync and injected allocation failures.
 *
 * An input is a program over a register file of NSLOTS tensors and three devices (the base
 * device, autodiff(base, NONE), autodiff(base, BALANCED)). Each instruction is an opcode
 * byte (modulo 8) and the bytes its operands need; a missing byte reads as 0:
 *   0 MAKE     class dev nd dim.. fill [fill bytes] dst   a tensor of up to 4 dims of 0..8
 *   1,7 CALL   idlo idhi args.. dst..   the table entry with that id (a td_op value, or
 *              FZ_TUPLE_ID0 + n for the n-th tuple; another id picks id % entries), its
 *              arguments decoded by kind (see rd_arg), one destination slot per result
 *   2 GRAD     slot                      td_require_grad
 *   3 BACKWARD mode root seed [slot]..   td_backward / _seeded / _ex, then td_grads_get
 *   4 RELEASE  slot
 *   5 ASSIGN   dst src                   td_tensor_assign
 *   6 MISC     sub ...                   fallback, composites, detach, value, context, OOM, sync, dup
 * Arguments are often wrong on purpose: an empty slot is NULL, a slot byte from 0xC0 on
 * takes the slot whatever its class (below, the next slot of the right class), dims
 * fall out of range, arrays have the wrong length or are NULL, enums are one past the end.
 *
 * The contract checked on every call, whatever the op (no model of its semantics): a valid
 * status; on error every result is NULL and td_last_error() is non-empty and names the op
 * (the tuple, for a tuple); TD_E_INTERNAL never; on success every result is non-NULL, of
 * the class the spec returns, with a sane shape, and its data can be read back (bools are
 * 0 or 1). At the end every handle is released and td_testing_live_objects() must be back
 * where it was. ASan and UBSan catch the rest. Any breach prints the op and aborts.
 *
 * FZ_COMPARE (fuzz_surface_vulkan, a replay driver: main() over files and directories) runs
 * each program on cpu and again on vulkan (with the CPU fallback on) and compares the
 * statuses of every call and the results: float values within a loose tolerance, ints and
 * bools exactly. It stops comparing a program at the first status that differs (the two
 * register files then differ) and reports it. Values that may differ legitimately (a step,
 * periodic or index-picking op on arguments that differ by rounding) are not compared, nor
 * anything made from them (see divergent).
 *
 * FUZZ_COMPOSITES=1 (the libFuzzer harness) runs each program twice on cpu, with native
 * kernels and then with td_device_set_composites on, and compares the same way: a check
 * that lives only in a native kernel (not at the boundary) shows up as a status that differs.
 *
 * Seeds: tests/fuzz/make_corpus_surface.lua writes one program per spec example (every op
 * that has one) into tests/fuzz/corpus_surface. Rerun an input with every call printed
 * (its arguments: slot, shape, small tensors' values, dims and scalars):
 *   FUZZ_TRACE=1 ./build-fuzz/tests/fuzz/fuzz_surface FILE */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_ops.h"

#define NSLOTS 12
#define SMALL 4096       /* tensors kept in slots have at most this many elements */
#define MAX_INSTR 256
#define MAX_ARR 8
#define HOST_MAX 65536   /* host data buffers (creation from data) */

static bool trace_on;
static const char *cur = "";
static int pc;

_Noreturn static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nfuzz_surface: CONTRACT BREACH at instruction %d, %s: ", pc, cur);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *m = td_last_error();
    fprintf(stderr, "\nfuzz_surface: td_last_error() = \"%s\"\n", m ? m : "(NULL)");
    fflush(stderr);
    abort();
}

static void trace(const char *fmt, ...)
{
    if (!trace_on)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ input bytes */

static const uint8_t *in_p;
static size_t in_n, in_i;

static unsigned u8(void)
{
    return in_i < in_n ? in_p[in_i++] : 0u;
}

static const float fvals[16] = { 0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 3.0f, 1e-3f, 1e30f,
                                 -1e30f, INFINITY, -INFINITY, NAN, 1e-40f, -0.0f, 2.0f, 0.25f };
static const int32_t ivals[16] = { 0, 1, -1, 2, -2, 3, 7, -7, 100, INT32_MAX, INT32_MIN, 65536, -65536, 46341, 5, -3 };

/* A small integer -8..39 (byte b < 0xF0: b % 48 - 8), or an edge far beyond any real size
 * (so no call the fuzzer makes can ask for a huge but valid allocation). */
static int64_t rd_small(void)
{
    static const int64_t edge[16] = { INT64_MIN, INT64_MAX, INT64_C(1) << 50, -(INT64_C(1) << 50), INT64_C(1) << 62,
                                      -(INT64_C(1) << 62), INT64_MIN + 1, INT64_MAX - 1, INT64_C(1) << 52,
                                      -(INT64_C(1) << 52), INT64_C(1) << 60, INT64_MIN / 2, INT64_MAX / 2,
                                      INT64_C(1) << 55, -(INT64_C(1) << 55), INT64_C(1) << 61 };
    unsigned b = u8();
    if (b < 0xF0)
        return (int64_t)(b % 48) - 8;
    return edge[b - 0xF0];
}

/* Array elements (shapes, strides, paddings, permutations): -4..19, or an edge. */
static int64_t rd_elem(void)
{
    unsigned b = u8();
    if (b < 0xF0)
        return (int64_t)(b % 24) - 4;
    in_i--;
    return rd_small();
}

static int64_t rd_dim(int nd)
{
    unsigned b = u8();
    switch (b >> 5) {
    case 6:
        return (b & 1) ? INT64_MIN : INT64_MAX;
    case 7:
        return (b & 1) ? (INT64_C(1) << 32) : -(INT64_C(1) << 31);
    default:
        return (int64_t)(b % (unsigned)(2 * nd + 4)) - nd - 2;
    }
}

/* ------------------------------------------------------------------ state */

static td_device *devs[3];
static td_tensor *slots[NSLOTS];
static td_backend base_backend = TD_BACKEND_CPU;
static bool compare_mode;
static bool use_composites; /* the base device runs decompositions (FUZZ_COMPOSITES) */
static int oom_state; /* 1: armed by MISC for the next instruction; 2: that one ran */

/* FZ_COMPARE: what each call returned, to compare the two runs. */
#define MAX_SRC 8
typedef struct rec {
    int entry;
    td_status st;
    int nd[FZ_MAX_OUTS];
    int64_t d[FZ_MAX_OUTS][TD_MAX_DIMS];
    int64_t n[FZ_MAX_OUTS];
    float *vals[FZ_MAX_OUTS]; /* the data read back as float (ints and bools converted) */
    bool periodic;            /* sin, cos, tan, rounding: values compared only when ... */
    bool kink;                /* relu, max, ...: gradients through it compared only when ... */
    uint64_t in_hash;         /* ... the argument's bits were the same in both runs (0: unread) */
    int src[MAX_SRC];         /* the records that made the tensor arguments (-1: none) */
    int pc;                   /* the instruction (FUZZ_TRACE numbers them) */
    float *ins[2];            /* atan2: its arguments, broadcast to the result (see has_cut) */
    double mag;               /* sums: the size of the largest term times their count (see sum_kind) */
} rec;
#define MAX_REC (MAX_INSTR * 8)
static rec recs[2][MAX_REC];
static int nrec[2];
static int run_no;

/* The record that made the tensor in each slot (-1: none, or not comparing): the comparison
 * follows the data from an op whose values it did not compare to the ops that used them. */
static int slot_origin[NSLOTS];

static int origin_of(const td_tensor *t)
{
    for (int i = 0; t != NULL && i < NSLOTS; i++)
        if (slots[i] == t)
            return slot_origin[i];
    return -1;
}

/* origin: the record that made t; without one, a tensor already in another slot keeps that
 * slot's. */
static void put_slot_from(unsigned s, td_tensor *t, int origin)
{
    s %= NSLOTS;
    for (int i = 0; t != NULL && origin < 0 && i < NSLOTS; i++)
        if (slots[i] == t && (unsigned)i != s)
            origin = slot_origin[i];
    td_tensor_release(slots[s]);
    slots[s] = t;
    slot_origin[s] = t != NULL ? origin : -1;
}

static void put_slot(unsigned s, td_tensor *t)
{
    put_slot_from(s, t, -1);
}

/* The record just made in this run, or -1. */
static int rec_index(const void *r)
{
    return r != NULL ? nrec[run_no] - 1 : -1;
}

static td_tensor *slot(unsigned b)
{
    if (b == 0xFF)
        return NULL;
    return slots[b % NSLOTS];
}

/* A tensor argument of class dt: a byte below 0xC0 takes the first slot from b % NSLOTS on
 * that holds a tensor of the class (else that slot, whatever it holds); 0xC0..0xFE a slot
 * as it is (empty: NULL, any class); 0xFF NULL. */
static td_tensor *slot_of(unsigned b, td_dtype dt)
{
    if (b >= 0xC0)
        return slot(b);
    for (unsigned k = 0; k < NSLOTS; k++) {
        td_tensor *t = slots[(b + k) % NSLOTS];
        td_dtype d;
        if (t && td_tensor_dtype(t, &d) == TD_OK && d == dt)
            return t;
    }
    return slots[b % NSLOTS];
}

static int ndim_of(const td_tensor *t)
{
    int64_t d[TD_MAX_DIMS];
    int nd = 0;
    if (t == NULL || td_tensor_shape(t, d, &nd) != TD_OK)
        return 0;
    return nd;
}

/* The error contract: a message, non-empty, naming the call. */
static void check_error(td_status st, const char *name)
{
    if (st == TD_E_INTERNAL)
        fail("TD_E_INTERNAL (%s)", td_status_name(st));
    if ((int)st < 0 || (int)st > (int)TD_E_INTERNAL)
        fail("status %d is not a td_status", (int)st);
    const char *m = td_last_error();
    if (m == NULL || m[0] == '\0')
        fail("%s with an empty td_last_error()", td_status_name(st));
    /* the guard's message is fixed by the design and names no op */
    if (name && strstr(m, name) == NULL &&
        !(st == TD_E_AUTODIFF_CONTEXT && strcmp(m, "an autodiff float primitive must have an enabled autodiff context") == 0))
        fail("%s: the message does not name %s", td_status_name(st), name);
}

/* A result: sane shape, class, data readable. Returns its element count (-1: unreadable). */
static int64_t check_result(td_tensor *t, char cls, rec *r, int k)
{
    int64_t d[TD_MAX_DIMS];
    int nd = -1;
    if (td_tensor_shape(t, d, &nd) != TD_OK)
        fail("td_tensor_shape of a result failed");
    if (nd < 0 || nd > TD_MAX_DIMS)
        fail("a result of %d dims", nd);
    int64_t n = 1;
    for (int i = 0; i < nd; i++) {
        if (d[i] < 0)
            fail("a result with dim %d of size %lld", i, (long long)d[i]);
        if (d[i] > 0 && n > (INT64_C(1) << 40) / d[i])
            fail("a result with more than 2^40 elements");
        n *= d[i];
    }
    int64_t n2 = -1;
    if (td_tensor_numel(t, &n2) != TD_OK || n2 != n)
        fail("td_tensor_numel %lld, the shape says %lld", (long long)n2, (long long)n);
    td_dtype dt;
    if (td_tensor_dtype(t, &dt) != TD_OK)
        fail("td_tensor_dtype of a result failed");
    td_dtype want = cls == 'f' ? TD_F32 : cls == 'i' ? TD_I32 : TD_BOOL;
    if (cls != 0 && dt != want)
        fail("a result of dtype %d, the spec returns %c", (int)dt, cls);
    /* The other queries answer on any live tensor; a tracked one is a float autodiff one. */
    td_backend kind;
    td_autodiff_context ctx;
    td_device *dev = NULL;
    td_backend dkind;
    bool tracked = false;
    if (td_tensor_backend(t, &kind) != TD_OK || td_tensor_autodiff_context(t, &ctx) != TD_OK ||
        td_is_tracked(t, &tracked) != TD_OK || td_tensor_device(t, &dev) != TD_OK || dev == NULL ||
        td_device_backend(dev, &dkind) != TD_OK)
        fail("a query on a result failed");
    if (tracked && (kind != TD_BACKEND_AUTODIFF || dt != TD_F32))
        fail("a tracked result of kind %d, dtype %d", (int)kind, (int)dt);
    if ((kind == TD_BACKEND_AUTODIFF) != (dkind == TD_BACKEND_AUTODIFF) && dt == TD_F32)
        fail("a float result of kind %d on a device of kind %d", (int)kind, (int)dkind);
    trace("  -> [%d]%s", nd, nd ? "" : " ");
    for (int i = 0; i < nd; i++)
        trace("%s%lld", i ? "x" : "", (long long)d[i]);
    trace("\n");
    if (r) {
        r->nd[k] = nd;
        memcpy(r->d[k], d, sizeof d);
        r->n[k] = n;
    }
    if (n > SMALL)
        return n;
    size_t bytes = (size_t)(n ? n : 1) * 4;
    void *buf = malloc(bytes);
    td_status st;
    if (dt == TD_F32)
        st = td_float_into_data(t, (float *)buf, n);
    else if (dt == TD_I32)
        st = td_int_into_data(t, (int32_t *)buf, n);
    else
        st = td_bool_into_data(t, (bool *)buf, n);
    if (st != TD_OK) {
        /* An injected allocation failure may stop a read-back, and the guard that of an
         * autodiff tensor whose context the program disabled (detach keeps it); nothing else. */
        check_error(st, "into_data");
        if (st != TD_E_NOMEM && st != TD_E_AUTODIFF_CONTEXT)
            fail("reading a result back: %s", td_status_name(st));
        free(buf);
        return -1;
    }
    if (dt == TD_BOOL)
        for (int64_t i = 0; i < n; i++)
            if (((unsigned char *)buf)[i] > 1)
                fail("bool result element %lld is %u", (long long)i, ((unsigned char *)buf)[i]);
    if (r) {
        float *v = malloc((size_t)(n ? n : 1) * sizeof(float));
        for (int64_t i = 0; i < n; i++)
            v[i] = dt == TD_F32 ? ((float *)buf)[i]
                 : dt == TD_I32 ? (float)((int32_t *)buf)[i] : (float)((unsigned char *)buf)[i];
        r->vals[k] = v;
    }
    free(buf);
    return n;
}

/* ------------------------------------------------------------------ the table */

static int16_t by_id[FZ_TUPLE_ID0 + 256];

static void index_table(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (size_t i = 0; i < sizeof by_id / sizeof by_id[0]; i++)
        by_id[i] = -1;
    for (int i = 0; i < fz_nops; i++)
        if (fz_ops[i].id >= 0 && fz_ops[i].id < (int)(sizeof by_id / sizeof by_id[0]))
            by_id[fz_ops[i].id] = (int16_t)i;
}

/* Per-call scratch: arrays and host buffers the arguments point into. */
typedef struct scratch {
    int64_t arr[8][MAX_ARR];
    const td_tensor *list[8][8];
    void *host[8];
} scratch;

static int64_t arr_numel(const fz_arg *a)
{
    if (a->arr == NULL || a->len < 0)
        return -1;
    int64_t n = 1;
    for (int i = 0; i < a->len; i++) {
        if (a->arr[i] < 0 || a->arr[i] > HOST_MAX)
            return -1;
        n *= a->arr[i];
        if (n > HOST_MAX)
            return -1;
    }
    return n;
}

/* Decodes argument i of kind k; ref is the first tensor argument (for dims). */
static void rd_arg(int i, fz_kind k, fz_arg *a, scratch *s, const td_tensor *ref)
{
    memset(a, 0, sizeof *a);
    unsigned b;
    switch (k) {
    case FZ_K_FLOAT:
    case FZ_K_INT:
    case FZ_K_BOOL:
        a->t = slot_of(u8(), k == FZ_K_FLOAT ? TD_F32 : k == FZ_K_INT ? TD_I32 : TD_BOOL);
        break;
    case FZ_K_FLOATS:
    case FZ_K_INTS:
    case FZ_K_BOOLS:
        b = u8();
        a->len = (int)(b % 6);
        for (int j = 0; j < a->len; j++)
            s->list[i][j] = slot_of(u8(), k == FZ_K_FLOATS ? TD_F32 : k == FZ_K_INTS ? TD_I32 : TD_BOOL);
        a->list = b == 0xFF ? NULL : s->list[i];
        break;
    case FZ_K_DIMS:
    case FZ_K_SHAPE:
        b = u8();
        if (b == 0xFF) { /* NULL with a length */
            a->arr = NULL;
            a->len = 2;
            break;
        }
        a->len = (int)(b % (MAX_ARR + 1));
        if (b >= 0xF0) /* a length that is not one */
            a->len = (b & 1) ? -1 : TD_MAX_DIMS + 1;
        for (int j = 0; j < MAX_ARR && j < (a->len > 0 ? a->len : 0); j++)
            s->arr[i][j] = rd_elem();
        a->arr = s->arr[i];
        break;
    case FZ_K_DIM:
        a->i = rd_dim(ndim_of(ref));
        break;
    case FZ_K_I64:
    case FZ_K_I32:
        b = u8();
        if (b < 0xF0)
            a->i = (int64_t)(b % 48) - 8;
        else if (k == FZ_K_I32)
            a->i = ivals[b - 0xF0];
        else {
            in_i--;
            a->i = rd_small();
        }
        break;
    case FZ_K_U64:
        a->u = u8();
        break;
    case FZ_K_F32:
        a->f = fvals[u8() % 16];
        if (compare_mode && isfinite(a->f) && fabs(a->f) > 1e4)
            a->f = 3.0; /* as in op_make: the replay keeps values moderate */
        break;
    case FZ_K_DISTRIBUTION:
    case FZ_K_REDUCE_OP:
        a->e = (int)(u8() % (unsigned)(fz_kind_enum_count[k] + 1));
        break;
    case FZ_K_DEVICE:
        b = u8();
        a->dev = (b % 8 == 7) ? NULL : devs[b % 3];
        break;
    case FZ_K_GROUP:
        a->group = NULL; /* no MPI in the fuzz builds */
        break;
    case FZ_K_F32_DATA:
    case FZ_K_I32_DATA:
    case FZ_K_BOOL_DATA:
        /* filled in by the caller once the shape is known (fill_host) */
        a->e = (int)u8();
        break;
    case FZ_K_F32_OUT:
    case FZ_K_I32_OUT:
    case FZ_K_BOOL_OUT: {
        /* a capacity: the first tensor's size, one less, more, or NULL */
        b = u8();
        int64_t n = 0;
        if (ref)
            td_tensor_numel(ref, &n);
        if (n > SMALL)
            n = SMALL;
        int64_t cap = n;
        switch (b % 6) {
        case 1: cap = n > 0 ? n - 1 : 0; break;
        case 2: cap = n + 3; break;
        case 3: cap = -1; break;
        default: break;
        }
        a->cap = cap;
        if (b % 6 == 4)
            a->ptr = NULL;
        else {
            s->host[i] = malloc((size_t)(cap > 0 ? cap : 1) * 4);
            a->ptr = s->host[i];
        }
        break;
    }
    default:
        break; /* a kind this harness does not know yet: passed zeroed */
    }
}

/* Host input data: as many elements as the op's shape argument asks for. */
static bool fill_host(const fz_op *op, fz_arg *v, scratch *s)
{
    int64_t need = 1;
    for (int i = 0; i < op->nargs; i++)
        if (op->kinds[i] == FZ_K_SHAPE) {
            need = arr_numel(&v[i]);
            break;
        }
    for (int i = 0; i < op->nargs; i++) {
        fz_kind k = (fz_kind)op->kinds[i];
        if (k != FZ_K_F32_DATA && k != FZ_K_I32_DATA && k != FZ_K_BOOL_DATA)
            continue;
        if (v[i].e == 0xFF) {
            v[i].ptr = NULL;
            continue;
        }
        if (need < 0)
            return false; /* a shape the library must reject, or too big to fill: skip */
        size_t n = (size_t)(need ? need : 1);
        s->host[i] = malloc(n * 4);
        for (size_t j = 0; j < n; j++) {
            if (k == FZ_K_F32_DATA)
                ((float *)s->host[i])[j] = (float)((int)((j * 7 + (unsigned)v[i].e) % 13) - 6) * 0.5f;
            else if (k == FZ_K_I32_DATA)
                ((int32_t *)s->host[i])[j] = (int32_t)((j * 5 + (unsigned)v[i].e) % 11) - 5;
            else
                ((bool *)s->host[i])[j] = ((j + (unsigned)v[i].e) % 3) == 0;
        }
        v[i].ptr = s->host[i];
    }
    return true;
}

/* A call that could ask for a huge but valid result (a shape, expand or pad array of real
 * sizes whose product passes ARR_BUDGET elements) is skipped: it would only measure memory.
 * Elements from 2^40 on count as 1: a shape holding one is too big to exist and must fail. */
#define ARR_BUDGET (INT64_C(1) << 20)
static bool too_big(const fz_op *op, const fz_arg *v)
{
    for (int i = 0; i < op->nargs; i++) {
        if ((op->kinds[i] != FZ_K_SHAPE && op->kinds[i] != FZ_K_DIMS) || v[i].arr == NULL)
            continue;
        int64_t n = 1;
        for (int j = 0; j < v[i].len && j < MAX_ARR; j++) {
            int64_t x = v[i].arr[j];
            if (x > 1 && x < (INT64_C(1) << 40))
                n *= x;
            if (n > ARR_BUDGET)
                return true;
        }
    }
    return false;
}

/* sin, cos and tan of an argument that already differs between the two runs (within the
 * tolerance an earlier op was allowed, e.g. atan then powi_scalar to 1e6) differ by up to 2,
 * and the rounding ops and sign of one an ULP either side of a step (hypot's 8 against
 * 7.9999995) by a whole step: a difference of the inputs, amplified, not of the op. Their
 * values are compared only when the argument was bit for bit the same on both backends;
 * likewise the ops that pick an index among values, remainder (a jump at every multiple)
 * and every op that maps float tensors to ints or bools only (float_into_int of hypot's 8
 * against 7.9999995: 8 against 7). (atan2 stays compared: its branch cut is how a wrong sign
 * of zero upstream shows.) */
static bool is_periodic(const fz_op *op)
{
    const char *name = op->name;
    bool float_in = false, float_out = false;
    for (int i = 0; i < op->nargs; i++)
        float_in |= op->kinds[i] == FZ_K_FLOAT || op->kinds[i] == FZ_K_FLOATS;
    for (int k = 0; k < op->nouts; k++)
        float_out |= op->rets[k] == 'f';
    if (float_in && op->nouts > 0 && !float_out)
        return true;
    if (strstr(name, "remainder") != NULL || strstr(name, "pool2d_backward") != NULL)
        return true;
    static const char *const ops[] = { "float_sin",  "float_cos",   "float_tan",   "float_trunc",
                                       "float_ceil", "float_floor", "float_round", "float_sign" };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(name, ops[i]) == 0)
            return true;
    /* the index results of argmax, sort, topk and the pools with indices: which of two
     * nearly equal values wins (tanh saturating to 1 on one backend, 0.99999994 on the other) */
    if (strstr(name, "arg") != NULL || strstr(name, "sort") != NULL || strstr(name, "topk") != NULL ||
        strstr(name, "indices") != NULL || strstr(name, "_dim_values") != NULL)
        return true;
    /* float comparisons: two matmul results an ULP apart compare either way */
    return strncmp(name, "float_", 6) == 0 &&
           (strstr(name, "greater") != NULL || strstr(name, "lower") != NULL || strstr(name, "equal") != NULL);
}

/* Ops whose values are continuous but whose gradient jumps (relu at 0, max among near ties,
 * clamp at a bound, a pool's window maximum): on arguments an ULP apart their values are
 * compared, but a gradient through them may differ by a whole step, so a gradient whose graph
 * holds one on arguments that were not bit for bit the same is not compared. */
static bool has_kink(const char *name)
{
    static const char *const parts[] = { "relu", "abs", "hard_sigmoid", "clamp", "maximum", "minimum",
                                         "_max", "_min", "pool", "cummax", "cummin", "sort", "topk" };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(name, parts[i]) != NULL)
            return true;
    return false;
}

/* atan2 jumps across its branch cut (y = 0, x < 0) and at the origin: a cancellation that
 * leaves -6e-8 on one backend and 0 on the other (a matmul's sum in another order, within the
 * tolerance) gives -3pi/4 against 0. Its elements are compared where the arguments were
 * equal in both runs (a zero's sign apart: +0 against -0 is still compared, the cut is how a
 * wrong sign of zero upstream shows), and skipped where they differed. */
static bool has_cut(const char *name)
{
    return strcmp(name, "float_atan2") == 0;
}

/* Ops whose elements are sums of many terms: a cancellation leaves a residue of the order of
 * the terms' rounding, not of the result (a matmul of 8x8x8 operands with products near 2^41
 * left -262144 on cpu and -524288 on vulkan, an ULP of the terms apart). Their tolerance
 * adds 4 FLT_EPSILON times a bound of the terms' sum: the largest |argument| (the product of
 * two for products) times the largest argument's number of elements. 1: sums of one tensor's
 * elements (or of two, as add/sub), 2: sums of products. */
static int sum_kind(const char *name)
{
    static const char *const prods[] = { "matmul", "linear", "conv", "cross", "attention" };
    static const char *const sums[] = { "_sum", "_mean", "cumsum", "float_add", "float_sub", "avg_pool" };
    for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++)
        if (strstr(name, prods[i]) != NULL)
            return 2;
    for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++)
        if (strstr(name, sums[i]) != NULL)
            return 1;
    return 0;
}

/* The largest finite |element| of a float tensor and its numel; false when unreadable. */
static bool max_abs(const td_tensor *t, double *m, int64_t *numel)
{
    int64_t n = 0;
    td_dtype dt;
    if (t == NULL || td_tensor_numel(t, &n) != TD_OK || td_tensor_dtype(t, &dt) != TD_OK || dt != TD_F32 ||
        n > SMALL)
        return false;
    float *buf = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (buf == NULL || td_float_into_data(t, buf, n) != TD_OK) {
        free(buf);
        return false;
    }
    *m = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(buf[i]) && fabs((double)buf[i]) > *m)
            *m = fabs((double)buf[i]);
    *numel = n;
    free(buf);
    return true;
}

/* sum_kind's bound for a call's arguments (0 when none or unreadable). */
static double sum_bound(const fz_op *op, const fz_arg *v, int nargs)
{
    const int kind = sum_kind(op->name);
    double mags[2] = { 0, 0 };
    int64_t count = 1;
    int nt = 0;
    for (int i = 0; i < nargs && nt < 2 && kind; i++) {
        int64_t n = 0;
        if (op->kinds[i] != FZ_K_FLOAT || v[i].t == NULL)
            continue;
        if (!max_abs(v[i].t, &mags[nt], &n))
            return 0;
        count = n > count ? n : count;
        nt++;
    }
    if (nt == 0)
        return 0;
    const double m = kind == 2 && nt == 2 ? mags[0] * mags[1] : fmax(mags[0], mags[1]);
    return m * (double)count;
}

/* A float tensor's values broadcast to the shape od (right-aligned, as the binary ops do);
 * NULL when it cannot be read or is too big. */
static float *broadcast_read(const td_tensor *t, int ond, const int64_t *od)
{
    int64_t d[TD_MAX_DIMS], n = 0, on = 1;
    int nd = 0;
    td_dtype dt;
    for (int i = 0; i < ond; i++)
        on *= od[i];
    if (t == NULL || td_tensor_shape(t, d, &nd) != TD_OK || td_tensor_numel(t, &n) != TD_OK ||
        td_tensor_dtype(t, &dt) != TD_OK || dt != TD_F32 || n > SMALL || on > SMALL || nd > ond)
        return NULL;
    float *src = malloc((size_t)(n ? n : 1) * sizeof(float)), *out = malloc((size_t)(on ? on : 1) * sizeof(float));
    if (src == NULL || out == NULL || td_float_into_data(t, src, n) != TD_OK) {
        free(src);
        free(out);
        return NULL;
    }
    for (int64_t j = 0; j < on; j++) {
        int64_t r = j, at = 0, st = 1;
        for (int a = ond - 1; a >= 0; a--) {
            const int64_t c = r % od[a];
            r /= od[a];
            const int ta = a - (ond - nd);
            if (ta >= 0) {
                at += (d[ta] == 1 ? 0 : c) * st;
                st *= d[ta];
            }
        }
        out[j] = src[at];
    }
    free(src);
    return out;
}

/* FNV-1a over a float tensor's bits, read back; 0 when it cannot be read (the values are
 * then compared). */
static uint64_t float_hash(const td_tensor *t)
{
    int64_t n = 0;
    td_dtype dt;
    if (t == NULL || td_tensor_numel(t, &n) != TD_OK || td_tensor_dtype(t, &dt) != TD_OK || dt != TD_F32 ||
        n > SMALL)
        return 0;
    float *buf = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (buf == NULL || td_float_into_data(t, buf, n) != TD_OK) {
        free(buf);
        return 0;
    }
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)buf;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211ull;
    free(buf);
    return h ? h : 1;
}

/* FUZZ_TRACE: the arguments of a call (tensor shapes and the first values, dims, scalars). */
static void trace_args(const fz_op *op, const fz_arg *v, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        fz_kind k = (fz_kind)op->kinds[i];
        if (k == FZ_K_FLOAT || k == FZ_K_INT || k == FZ_K_BOOL) {
            int64_t d[TD_MAX_DIMS], n = 0;
            int nd = 0;
            if (v[i].t == NULL || td_tensor_shape(v[i].t, d, &nd) != TD_OK || td_tensor_numel(v[i].t, &n) != TD_OK) {
                trace(" (null)");
                continue;
            }
            int at = -1;
            for (int j = 0; j < NSLOTS; j++)
                if (slots[j] == v[i].t)
                    at = j;
            trace(" s%d[", at);
            for (int j = 0; j < nd; j++)
                trace("%s%lld", j ? "x" : "", (long long)d[j]);
            trace("]");
            if (k == FZ_K_INT && n > 0 && n <= 256) {
                int32_t buf[256];
                if (td_int_into_data(v[i].t, buf, n) == TD_OK)
                    for (int64_t j = 0; j < n; j++)
                        trace("%s%d", j ? "," : "{", buf[j]);
                trace("}");
            }
            if (k == FZ_K_FLOAT && n > 0 && n <= 8) {
                float buf[8];
                if (td_float_into_data(v[i].t, buf, n) == TD_OK)
                    for (int64_t j = 0; j < n; j++)
                        trace("%s%.9g", j ? "," : "{", (double)buf[j]);
                trace("}");
            }
        } else if (k == FZ_K_DIM || k == FZ_K_I64 || k == FZ_K_I32)
            trace(" %lld", (long long)v[i].i);
        else if (k == FZ_K_F32)
            trace(" %g", v[i].f);
        else
            trace(" kind%d", (int)k);
    }
    trace("\n");
}

static void op_call(unsigned idlo, unsigned idhi)
{
    index_table();
    unsigned id = idlo | (idhi << 8);
    int e = id < sizeof by_id / sizeof by_id[0] ? by_id[id] : -1;
    if (e < 0)
        e = (int)(id % (unsigned)fz_nops);
    const fz_op *op = &fz_ops[e];
    cur = op->name;
    fz_arg v[16];
    scratch s;
    memset(&s, 0, sizeof s);
    const td_tensor *ref = NULL;
    int nargs = op->nargs < 16 ? op->nargs : 16;
    for (int i = 0; i < nargs; i++) {
        rd_arg(i < 8 ? i : 7, (fz_kind)op->kinds[i], &v[i], &s, ref);
        if (ref == NULL && v[i].t)
            ref = v[i].t;
        if (ref == NULL && v[i].list && v[i].len > 0)
            ref = v[i].list[0];
    }
    unsigned dst[FZ_MAX_OUTS];
    for (int k = 0; k < op->nouts && k < FZ_MAX_OUTS; k++)
        dst[k] = u8();
    bool ok = fill_host(op, v, &s) && !too_big(op, v);
    if (ok) {
        td_tensor *outs[FZ_MAX_OUTS];
        for (int k = 0; k < FZ_MAX_OUTS; k++)
            outs[k] = (td_tensor *)(uintptr_t)0x1; /* must be overwritten: NULL on error */
        trace("%3d call %s", pc, op->name);
        if (trace_on)
            trace_args(op, v, nargs);
        td_status st = op->call(v, outs);
        trace("  = %s\n", td_status_name(st));
        rec *r = NULL;
        if (compare_mode && nrec[run_no] < MAX_REC) {
            r = &recs[run_no][nrec[run_no]++];
            memset(r, 0, sizeof *r);
            r->pc = pc;
            r->entry = e;
            r->st = st;
            r->periodic = is_periodic(op);
            r->kink = has_kink(op->name);
            int ns = 0;
            for (int i = 0; i < MAX_SRC; i++)
                r->src[i] = -1;
            for (int i = 0; i < nargs && ns < MAX_SRC; i++) {
                if (v[i].t != NULL)
                    r->src[ns++] = origin_of(v[i].t);
                for (int j = 0; v[i].list != NULL && j < v[i].len && ns < MAX_SRC; j++)
                    r->src[ns++] = origin_of(v[i].list[j]);
            }
            if ((r->periodic || r->kink) && st == TD_OK && oom_state == 0)
                for (int i = 0; i < nargs; i++) /* every tensor argument (comparisons have two) */
                    if (v[i].t != NULL)
                        r->in_hash = r->in_hash * 1099511628211ull + float_hash(v[i].t);
        }
        if (st != TD_OK) {
            check_error(st, op->name);
            for (int k = 0; k < op->nouts; k++)
                if (outs[k] != NULL)
                    fail("%s but result %d is not NULL", td_status_name(st), k);
        } else {
            int64_t od[TD_MAX_DIMS];
            int ond = 0;
            /* before the results take their slots (which may release an argument) */
            if (r != NULL && oom_state == 0)
                r->mag = sum_bound(op, v, nargs);
            if (r != NULL && has_cut(op->name) && outs[0] != NULL && td_tensor_shape(outs[0], od, &ond) == TD_OK)
                for (int k = 0; k < 2; k++)
                    r->ins[k] = broadcast_read(v[k].t, ond, od);
            for (int k = 0; k < op->nouts; k++) {
                if (k < FZ_MAX_OUTS)
                    trace("  -> s%u\n", dst[k] % NSLOTS);
                if (outs[k] == NULL || outs[k] == (td_tensor *)(uintptr_t)0x1)
                    fail("TD_OK without result %d", k);
                int64_t n = check_result(outs[k], op->rets[k], r, k);
                if (n < 0 || n > SMALL)
                    td_tensor_release(outs[k]);
                else
                    put_slot_from(dst[k], outs[k], rec_index(r));
            }
        }
    }
    for (int i = 0; i < 8; i++)
        free(s.host[i]);
}

/* ------------------------------------------------------------------ the other instructions */

static const float make_f[8] = { 0.5f, -1.0f, 2.0f, 0.0f, 3.0f, -0.25f, 1.5f, -2.0f };

static void op_make(void)
{
    unsigned cls = u8() % 3, dv = u8() % 3, nd = u8() % 5;
    int64_t d[4];
    int64_t n = 1;
    for (unsigned i = 0; i < nd; i++) {
        d[i] = u8() % 9;
        n *= d[i];
    }
    unsigned fill = u8(), seed = 0;
    if (fill % 4 == 1)
        seed = u8();
    size_t cnt = (size_t)(n ? n : 1);
    float *f = malloc(cnt * sizeof(float));
    int32_t *iv = malloc(cnt * sizeof(int32_t));
    bool *bv = malloc(cnt * sizeof(bool));
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t j = 0; j < (size_t)n; j++) {
        unsigned byte;
        switch (fill % 4) {
        case 0: byte = (unsigned)(j * 3 + fill / 4); break;
        case 1: x = x * 1664525u + 1013904223u; byte = x >> 24; break;
        case 2: byte = u8(); break; /* explicit: one byte per element */
        default: byte = 0x100u | (unsigned)(j + fill / 4); break;
        }
        if (byte & 0x100u) { /* edge values */
            f[j] = fvals[byte % 16];
            /* the replay compares values: huge finite inputs only measure how a backend's
             * sin or exp loses precision, so it keeps them moderate */
            if (compare_mode && isfinite(f[j]) && fabsf(f[j]) > 1e4f)
                f[j] = 3.0f;
            iv[j] = ivals[byte % 16];
        } else if (fill % 4 == 2) {
            f[j] = (float)(int8_t)byte * 0.25f;
            iv[j] = (int8_t)byte;
        } else {
            f[j] = make_f[byte % 8] * (float)(1 + (byte >> 6));
            iv[j] = (int32_t)(byte % 9) - 4;
        }
        bv[j] = byte & 1;
    }
    unsigned dst = u8();
    cur = "make";
    td_tensor *t = NULL;
    td_status st;
    if (cls == 0)
        st = td_float_from_data(devs[dv], f, d, (int)nd, &t);
    else if (cls == 1)
        st = td_int_from_data(devs[dv], iv, d, (int)nd, &t);
    else
        st = td_bool_from_data(devs[dv], bv, d, (int)nd, &t);
    trace("%3d make %c dev%u [%u dims, %lld] -> s%u: %s\n", pc, "fib"[cls], dv, nd, (long long)n, dst % NSLOTS,
          td_status_name(st));
    if (st == TD_OK)
        put_slot(dst, t);
    else
        check_error(st, NULL); /* only an injected allocation failure */
    if (compare_mode && nrec[run_no] < MAX_REC) {
        rec *r = &recs[run_no][nrec[run_no]++];
        memset(r, 0, sizeof *r);
            r->pc = pc;
        r->entry = -1;
        r->st = st;
        for (int i = 0; i < MAX_SRC; i++)
            r->src[i] = -1;
    }
    free(f);
    free(iv);
    free(bv);
}

static void op_backward(void)
{
    unsigned mode = u8() % 3;
    const td_tensor *root = slot(u8());
    const td_tensor *seed = slot(u8());
    const int root_origin = origin_of(root), seed_origin = origin_of(seed);
    td_grads *g = NULL;
    td_status st;
    cur = "backward";
    if (mode == 0)
        st = td_backward(root, &g);
    else if (mode == 1)
        st = td_backward_seeded(root, seed, &g);
    else {
        td_backward_options o = { 0 };
        o.seed = (u8() & 1) ? seed : NULL;
        o.retain_graph = true;
        st = td_backward_ex(root, &o, &g);
    }
    trace("%3d backward mode %u: %s\n", pc, mode, td_status_name(st));
    if (st != TD_OK) {
        check_error(st, NULL);
        if (g != NULL)
            fail("backward failed but returned grads");
        return;
    }
    if (g == NULL)
        fail("backward TD_OK without grads");
    /* The gradient of every slot, some of them kept (a byte per slot: bit 0 keeps it). */
    cur = "grads_get";
    for (int i = 0; i < NSLOTS; i++) {
        unsigned keep = u8();
        td_tensor *gt = NULL;
        td_status gs = td_grads_get(g, slots[i], &gt);
        if (gs != TD_OK) {
            check_error(gs, NULL);
            if (gt != NULL)
                fail("td_grads_get failed but returned a tensor");
            continue;
        }
        rec *r = NULL;
        if (compare_mode && nrec[run_no] < MAX_REC) {
            r = &recs[run_no][nrec[run_no]++];
            memset(r, 0, sizeof *r);
            r->pc = pc;
            r->entry = gt ? -2 : -3; /* a gradient, or none */
            for (int k = 0; k < MAX_SRC; k++)
                r->src[k] = -1;
            /* the graph behind the root: a gradient through an op whose values differed may
             * differ too */
            r->src[0] = root_origin;
            r->src[1] = seed_origin;
        }
        if (gt == NULL)
            continue;
        int64_t n = check_result(gt, 'f', r, 0);
        if ((keep & 1) && n >= 0 && n <= SMALL)
            put_slot_from(keep >> 1, gt, rec_index(r));
        else
            td_tensor_release(gt);
    }
    td_grads_release(g);
}

static void op_misc(void)
{
    unsigned sub = u8() % 8, a = u8(), b = u8();
    td_status st = TD_OK;
    td_tensor *t = NULL;
    const int origin = origin_of(slot(a)); /* detach and value keep the data */
    switch (sub) {
    case 0:
        cur = "set_fallback";
        if (compare_mode)
            return; /* the replay keeps vulkan's fallback on: unsupported ops run on cpu */
        st = td_device_set_fallback(devs[a % 3], (b % 3 == 2) ? (td_fallback)7 : (td_fallback)(b % 2));
        break;
    case 1:
        cur = "set_composites";
        if (compare_mode)
            return; /* each run keeps its own setting */
        st = td_device_set_composites(devs[a % 3], b & 1);
        break;
    case 2:
        cur = "detach";
        st = td_detach(slot(a), &t);
        break;
    case 3:
        cur = "tensor_value";
        st = td_tensor_value(slot(a), &t);
        break;
    case 4: {
        cur = "set_autodiff_context";
        td_autodiff_context c = { (b & 1) != 0, (td_checkpoint)((b >> 1) % 3) };
        st = td_tensor_set_autodiff_context(slot(a), c);
        break;
    }
    case 5:
        /* allocation failures from the next instruction's n-th allocation on */
        if (!compare_mode) {
            trace("%3d oom after %u\n", pc, a % 16);
            td_testing_fail_allocations_after((long)(a % 16));
            oom_state = 1;
        }
        return;
    case 6:
        cur = "sync";
        st = td_sync(devs[a % 3]);
        break;
    default:
        cur = "retain";
        if (slot(a)) {
            st = td_tensor_retain(slot(a));
            if (st == TD_OK)
                put_slot(b, slot(a));
        }
        break;
    }
    trace("%3d %s: %s\n", pc, cur, td_status_name(st));
    if (st != TD_OK) {
        check_error(st, NULL);
        if (t != NULL)
            fail("failed but returned a tensor");
    } else if (t != NULL) {
        int64_t n = check_result(t, 0, NULL, 0); /* detach and value keep the class */
        if (n >= 0 && n <= SMALL)
            put_slot_from(b, t, origin);
        else
            td_tensor_release(t);
    }
}

static void run_program(const uint8_t *data, size_t size)
{
    in_p = data;
    in_n = size;
    in_i = 0;
    long live0 = td_testing_live_objects();
    td_device *base = NULL;
    if (td_device_open(base_backend, 0, &base) != TD_OK)
        return;
    devs[0] = base;
    if (td_device_autodiff(base, TD_CHECKPOINT_NONE, &devs[1]) != TD_OK ||
        td_device_autodiff(base, TD_CHECKPOINT_BALANCED, &devs[2]) != TD_OK)
        fail("cannot open the autodiff devices");
    if (compare_mode && base_backend != TD_BACKEND_CPU)
        td_device_set_fallback(base, TD_FALLBACK_CPU);
    if (use_composites)
        td_device_set_composites(base, true);
    oom_state = 0;
    for (pc = 0; pc < MAX_INSTR && in_i < in_n; pc++) {
        unsigned opc = u8();
        switch (opc % 8) {
        case 0:
            op_make();
            break;
        case 1:
        case 7: {
            unsigned lo = u8(), hi = u8();
            op_call(lo, hi);
            break;
        }
        case 2: {
            td_tensor *t = slot(u8());
            cur = "require_grad";
            td_status st = td_require_grad(t);
            trace("%3d require_grad: %s\n", pc, td_status_name(st));
            if (st != TD_OK)
                check_error(st, NULL);
            break;
        }
        case 3:
            op_backward();
            break;
        case 4:
            put_slot(u8(), NULL);
            break;
        case 5: {
            td_tensor *t = slot(u8());
            const td_tensor *val = slot(u8());
            cur = "tensor_assign";
            td_status st = td_tensor_assign(t, val);
            trace("%3d tensor_assign: %s\n", pc, td_status_name(st));
            if (st != TD_OK)
                check_error(st, NULL);
            else { /* t now holds val's data, in every slot that holds it */
                const int origin = origin_of(val);
                for (int i = 0; i < NSLOTS; i++)
                    if (slots[i] == t)
                        slot_origin[i] = origin;
            }
            break;
        }
        default:
            op_misc();
            break;
        }
        if (oom_state == 2) {
            td_testing_fail_allocations_after(-1);
            oom_state = 0;
        } else if (oom_state == 1) {
            oom_state = 2;
        }
    }
    td_testing_fail_allocations_after(-1);
    cur = "cleanup";
    for (int i = 0; i < NSLOTS; i++)
        put_slot((unsigned)i, NULL);
    for (int i = 0; i < 3; i++) {
        td_device_release(devs[i]);
        devs[i] = NULL;
    }
    long live = td_testing_live_objects();
    if (live != live0)
        fail("%ld objects alive after the program, %ld before (a leak or a double release)", live, live0);
}

/* ------------------------------------------------------------------ comparing two runs */

static int mismatches;
static const char *run_names[2] = { "cpu", "vulkan" };

static bool close_enough(float a, float b, double mag)
{
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b) || fabsf(a) > 1e15f || fabsf(b) > 1e15f)
        return true; /* edge values: kernels may overflow differently; not compared */
    return fabsf(a - b) <= 1e-3f + 1e-2f * fmaxf(fabsf(a), fabsf(b)) + 4.0 * FLT_EPSILON * mag;
}

/* A record whose values differed legitimately (an op of is_periodic on arguments that were
 * not bit for bit the same), or that used a tensor such a record made, directly or through
 * others: its values are not compared and what it made is divergent in turn. argmax of two
 * values an ULP apart picks another index, and a gather, scatter or where through that index
 * moves whole values: a difference of the inputs, carried, not of the op. */
static bool divergent[MAX_REC];
/* A record whose graph holds an op of has_kink on arguments not bit for bit the same (or a
 * divergent record): gradients from it are divergent. */
static bool grad_divergent[MAX_REC];

static bool from_set(const bool *set, const rec *a, const rec *b, int i)
{
    for (int k = 0; k < MAX_SRC; k++)
        if ((a->src[k] >= 0 && a->src[k] < i && set[a->src[k]]) ||
            (b->src[k] >= 0 && b->src[k] < i && set[b->src[k]]))
            return true;
    return false;
}

static void compare_runs(const char *file)
{
    int n = nrec[0] < nrec[1] ? nrec[0] : nrec[1];
    for (int i = 0; i < n; i++) {
        rec *a = &recs[0][i], *b = &recs[1][i];
        const char *name = a->entry >= 0 ? fz_ops[a->entry].name : a->entry == -1 ? "make" : "grads_get";
        const bool args_differ = a->in_hash != 0 && b->in_hash != 0 && a->in_hash != b->in_hash;
        /* a gradient (its sources: the root and seed of backward) follows the graph */
        divergent[i] = from_set(a->entry == -2 || a->entry == -3 ? grad_divergent : divergent, a, b, i);
        grad_divergent[i] = divergent[i] || from_set(grad_divergent, a, b, i) || (a->kink && args_differ);
        if (divergent[i]) {
            if (a->entry != b->entry || a->st != b->st) {
                /* a status that depends on the diverged data (a value-checked argument): the
                 * two runs no longer correspond from here on */
                trace("%s: record %d (%s) used diverged data; statuses %s, %s: not compared further\n", file,
                      i, name, td_status_name(a->st), td_status_name(b->st));
                return;
            }
            continue;
        }
        if (a->entry != b->entry) {
            fprintf(stderr, "%s: record %d (%s): %s and %s differ (%d, %d: a gradient on one only?)\n", file, i,
                    name, run_names[0], run_names[1], a->entry, b->entry);
            mismatches++;
            return;
        }
        if (a->st != b->st) {
            fprintf(stderr, "%s: call %d (%s): %s %s, %s %s\n", file, i, name, run_names[0], td_status_name(a->st),
                    run_names[1], td_status_name(b->st));
            mismatches++;
            return;
        }
        if (a->st != TD_OK || a->entry == -1 || a->entry == -3)
            continue;
        if (a->periodic && args_differ) {
            divergent[i] = grad_divergent[i] = true; /* the argument differed already (see is_periodic) */
            continue;
        }
        int nouts = a->entry >= 0 ? fz_ops[a->entry].nouts : 1;
        for (int k = 0; k < nouts; k++) {
            if (a->nd[k] != b->nd[k] || memcmp(a->d[k], b->d[k], sizeof(int64_t) * (size_t)a->nd[k]) != 0) {
                fprintf(stderr, "%s: call %d (%s): result %d shapes differ\n", file, i, name, k);
                mismatches++;
                return;
            }
            if (!a->vals[k] || !b->vals[k])
                continue;
            bool exact = a->entry >= 0 && fz_ops[a->entry].rets[k] != 'f';
            bool cut = k == 0 && a->ins[0] && a->ins[1] && b->ins[0] && b->ins[1];
            for (int64_t j = 0; j < a->n[k]; j++) {
                float x = a->vals[k][j], y = b->vals[k][j];
                if (exact ? (x != y) : !close_enough(x, y, fmax(a->mag, b->mag))) {
                    if (cut && (a->ins[0][j] != b->ins[0][j] || a->ins[1][j] != b->ins[1][j])) {
                        divergent[i] = grad_divergent[i] = true; /* see has_cut */
                        continue;
                    }
                    fprintf(stderr, "%s: call %d (%s, instruction %d): result %d element %lld: %s %g, %s %g\n", file,
                            i, name, a->pc, k, (long long)j, run_names[0], (double)x, run_names[1], (double)y);
                    mismatches++;
                    return;
                }
            }
        }
    }
}

static void clear_recs(void)
{
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < nrec[r]; i++)
            for (int k = 0; k < FZ_MAX_OUTS; k++)
                free(recs[r][i].vals[k]);
        for (int i = 0; i < nrec[r]; i++)
            for (int k = 0; k < 2; k++)
                free(recs[r][i].ins[k]);
        nrec[r] = 0;
    }
}

#ifndef FZ_COMPARE
static bool composites_mode; /* FUZZ_COMPOSITES: native vs composite runs */
static bool vulkan_mode;     /* FUZZ_VULKAN: cpu vs vulkan runs */
static td_device *vulkan_keep; /* held for the whole campaign: one VkDevice, not one per input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool init;
    if (!init) {
        init = true;
        trace_on = getenv("FUZZ_TRACE") != NULL;
        composites_mode = getenv("FUZZ_COMPOSITES") != NULL && strcmp(getenv("FUZZ_COMPOSITES"), "0") != 0;
        vulkan_mode = getenv("FUZZ_VULKAN") != NULL && strcmp(getenv("FUZZ_VULKAN"), "0") != 0;
        if (composites_mode && vulkan_mode)
            fail("FUZZ_COMPOSITES and FUZZ_VULKAN cannot be combined");
        if (composites_mode) {
            run_names[0] = "native";
            run_names[1] = "composite";
        }
        if (vulkan_mode && td_device_open(TD_BACKEND_VULKAN, 0, &vulkan_keep) != TD_OK)
            fail("FUZZ_VULKAN: no Vulkan device (%s); configure build-fuzz where Vulkan is found",
                 td_last_error());
    }
    if (vulkan_mode) {
        /* FUZZ_VULKAN=1: each program on cpu, then on vulkan (with the CPU fallback on, as
         * the replay driver), compared call by call; coverage guides the search through both
         * backends' code, so inputs that reach new Vulkan paths are kept. */
        compare_mode = true;
        for (run_no = 0; run_no < 2; run_no++) {
            base_backend = run_no == 0 ? TD_BACKEND_CPU : TD_BACKEND_VULKAN;
            run_program(data, size);
        }
        base_backend = TD_BACKEND_CPU;
        compare_runs("input");
        clear_recs();
        if (mismatches)
            fail("cpu and vulkan runs differ (above)");
        return 0;
    }
    if (!composites_mode) {
        run_program(data, size);
        return 0;
    }
    /* FUZZ_COMPOSITES=1: each program twice on cpu, native kernels then every op that has
     * a decomposition run by it (td_device_set_composites); statuses and results must agree,
     * so a check that lives only in a kernel shows up. */
    compare_mode = true;
    for (run_no = 0; run_no < 2; run_no++) {
        use_composites = run_no == 1;
        run_program(data, size);
    }
    compare_runs("input");
    clear_recs();
    if (mismatches)
        fail("native and composite runs differ (above)");
    return 0;
}
#else
#include <dirent.h>

static int nfiles;

static void replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    nfiles++;
    trace("== %s (cpu)\n", path);
    run_no = 0;
    base_backend = TD_BACKEND_CPU;
    run_program(buf, n);
    trace("== %s (vulkan)\n", path);
    run_no = 1;
    base_backend = TD_BACKEND_VULKAN;
    run_program(buf, n);
    compare_runs(path);
    clear_recs();
    if (nfiles % 500 == 0)
        fprintf(stderr, "fuzz_surface_vulkan: %d programs, %d mismatches so far\n", nfiles, mismatches);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_path(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        replay_file(path);
        return;
    }
    char **names = NULL;
    size_t cnt = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        names = realloc(names, (cnt + 1) * sizeof *names);
        size_t len = strlen(de->d_name) + 1;
        names[cnt] = malloc(len);
        memcpy(names[cnt++], de->d_name, len);
    }
    closedir(d);
    qsort(names, cnt, sizeof *names, cmp_str);
    for (size_t i = 0; i < cnt; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, names[i]);
        replay_file(p);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    trace_on = getenv("FUZZ_TRACE") != NULL;
    compare_mode = true;
    td_device *v = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &v) != TD_OK) {
        printf("fuzz_surface_vulkan: no Vulkan device (%s); skipped\n", td_last_error());
        return 77;
    }
    td_device_release(v);
    for (int i = 1; i < argc; i++)
        replay_path(argv[i]);
    printf("fuzz_surface_vulkan: %d programs replayed on cpu and vulkan, %d mismatches\n", nfiles, mismatches);
    return mismatches ? 1 : 0;
}
#endif
