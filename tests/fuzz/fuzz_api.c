/* libFuzzer harness for the public API: each input is a short program of API calls, checked call by call against a model.
 *
 * The program runs over a cpu device and three autodiff(cpu) devices made for each input:
 * NONE, BALANCED and a second NONE one (another handle, the same place); OP_DROP_DEVICE
 * releases the program's handle on one early, so only its tensors keep it alive. The
 * program keeps a register file of NSLOTS tensor handles and NGRADS gradient sets. Each
 * instruction is one opcode byte (taken modulo OP_COUNT) followed by the bytes its operands
 * and attributes need (slots, shapes, dims, ranges, scalars); a missing byte reads as 0.
 * Operands and attributes are often invalid on purpose: an empty slot is a NULL argument,
 * dims fall out of range, shapes do not broadcast, sizes are too large to exist.
 *
 * The model is written from the documentation only (td_core.h, td_ops.h, the specs' shape
 * rules and docs, docs/design.md), never from the library's code. For every call it
 * predicts the statuses it accepts (TD_OK, or the error causes it sees; "either" only
 * where the docs leave it open) and, on OK, the result's shape, dtype, kind, autodiff
 * context and whether it is tracked. It mirrors the autodiff graph (leaves, recorded nodes,
 * which ones a backward released) to predict backward and td_grads_get. Beyond that:
 *  - on error *out is NULL and td_last_error() is non-empty and names the op;
 *  - an op's result is a new handle (td_grads_get may return one the program holds);
 *  - results are read back with into_data (bools must be 0 or 1, arg indices in range);
 *  - no call may change a live tensor: after every instruction each slot's metadata is
 *    checked again, after every backward and at the end its data too (a hash);
 *  - at the end every handle is released and td_testing_live_objects() must be back to
 *    its value at the start.
 * Values are not otherwise checked (the generated tests do that). Any disagreement prints
 * what the model expected and calls abort().
 *
 * Tensors stay small (at most SMALL elements): a call the model expects to succeed with a
 * bigger result is skipped; shapes far too large to exist (>= TOO_BIG elements) are sent on
 * purpose and must fail. OP_PROBE makes a few big-but-real inputs whose broadcast is huge,
 * or a graph far deeper than a program could build. OP_LOOP repeats an instruction (long
 * chains, wide graphs). OP_OOM makes the allocations of the next call fail after n.
 *
 * Run for hours, from the repository root after building with -DTD_FUZZ=ON (new inputs go
 * to the first directory, crash files to the current one):
 *   mkdir -p fuzz-work && ./build-fuzz/tests/fuzz/fuzz_api -max_total_time=14400 \
 *       -jobs=2 -workers=2 fuzz-work tests/fuzz/corpus_api
 * Reproduce a crash with every call printed:
 *   FUZZ_API_TRACE=1 ./build-fuzz/tests/fuzz/fuzz_api crash-<hash>
 * The opcodes and byte layouts below are what tests/fuzz/make_corpus_api.lua writes. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_ops.h"

#define NSLOTS 8
#define NGRADS 2
#define SMALL 4096                   /* every tensor the program keeps has at most this many elements */
#define TOO_BIG (UINT64_C(1) << 41)  /* element counts from here on cannot be allocated: must fail */
#define MAX_MACS (INT64_C(1) << 21)  /* bigger matmuls are skipped (time) */
#define MAX_INSTR 1024               /* instructions executed per input, loops included */
#define DEEP_CHAIN 50000             /* OP_PROBE's deep graph: nodes in one chain */
#define MAX_NODES 2048
#define MAX_PARENTS 4

/* Opcodes; the numbers are the input format (make_corpus_api.lua uses them). */
enum {
    OP_CREATE = 0,       /* sub dev shape... extras dst */
    OP_UNARY_FLOAT = 1,  /* sub a [scalars] dst */
    OP_UNARY_OTHER = 2,  /* sub a dst */
    OP_BINARY_FLOAT = 3, /* sub a b dst */
    OP_BINARY_INT = 4,   /* sub a b dst */
    OP_MASK = 5,         /* sub a mask (value | scalar) dst */
    OP_REDUCE_DIM = 6,   /* sub a dim dst */
    OP_RESHAPE = 7,      /* cls a target... dst */
    OP_SWAP_DIMS = 8,    /* cls a dim0 dim1 dst */
    OP_PERMUTE = 9,      /* cls a perm... dst */
    OP_EXPAND = 10,      /* cls a target... dst */
    OP_SLICE = 11,       /* cls a ranges... dst */
    OP_SLICE_ASSIGN = 12,/* cls a value mode ranges... dst */
    OP_CAT = 13,         /* cls n x0..x(n-1) dim dst */
    OP_MATMUL = 14,      /* a b dst */
    OP_TO_DEVICE = 15,   /* cls a dev dst */
    OP_REQUIRE_GRAD = 16,/* a */
    OP_BACKWARD = 17,    /* mode root [seed] gslot (mode: plain, seeded, or td_backward_ex) */
    OP_GRADS_GET = 18,   /* gslot t dst */
    OP_RELEASE = 19,     /* which */
    OP_DETACH = 20,      /* a dst */
    OP_INTO_DATA = 21,   /* cls a lenmode */
    OP_SET_CONTEXT = 22, /* a mode */
    OP_DUP = 23,         /* a dst */
    OP_OOM = 24,         /* n: the next instruction's call fails allocations after n */
    OP_SYNC = 25,        /* dev */
    OP_PROBE = 26,       /* sub dev */
    OP_DROP_DEVICE = 27, /* which: release the program's handle on an autodiff device */
    OP_LOOP = 28,        /* n: run the next instruction 2 + n % 127 times, from the same bytes */
    OP_MATMUL_T = 29,    /* mode a b dst (mode: float_matmul_nt, float_matmul_tn) */
    OP_COUNT
};

/* ------------------------------------------------------------------ failure and tracing */

static int pc;                  /* instruction number within the input */
static const char *cur_op = ""; /* the API call being checked */
static bool trace_on;

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nfuzz_api: MODEL MISMATCH at instruction %d, %s: ", pc, cur_op);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const char *m = td_last_error();
    fprintf(stderr, "\nfuzz_api: td_last_error() = \"%s\"\n", m ? m : "(NULL)");
    fprintf(stderr, "fuzz_api: run the input again with FUZZ_API_TRACE=1 to see every call\n");
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
                                 -1e30f, INFINITY, -INFINITY, NAN, 1e-40f, -0.0f, 100.0f, 2.0f };
static const int32_t ivals[16] = { 0, 1, -1, 2, -2, 3, 7, -7, 100, INT32_MAX, INT32_MIN, 65536, -65536, 46341, 5, -3 };

static float rd_float(void)
{
    return fvals[u8() % 16];
}

static int32_t rd_int(void)
{
    return ivals[u8() % 16];
}

/* A dim argument: mostly near the valid range [-nd, nd), sometimes extreme. */
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

/* An i64 for arange: small values, sometimes boundaries of int32 and int64. */
static int64_t rd_i64(void)
{
    static const int64_t edge[32] = {
        INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1,
        INT64_C(1) << 40, -(INT64_C(1) << 40), 4096, 4097, -4096, INT64_C(1) << 31, 1000, -1000, 3000, -3000,
        INT64_MAX - 1, INT64_MIN + 1, 2147483000, -2147483000, 1 << 20, -(1 << 20), 100000, 7, 0, 1, -1, 2, 3,
        INT64_C(1) << 62, -(INT64_C(1) << 62), 4095 };
    unsigned b = u8();
    if (b < 0xE0)
        return (int64_t)(b % 64) - 32;
    return edge[b - 0xE0];
}

/* ------------------------------------------------------------------ the model's tensors */

enum { ZS_UNKNOWN = 0, ZS_NONZERO, ZS_HASZERO }; /* int tensors: is one element 0? (int_div) */

__extension__ typedef __int128 i128; /* arange's arithmetic, free of overflow */

typedef struct mshape {
    int nd;
    int64_t d[TD_MAX_DIMS];
} mshape;

typedef struct mtensor {
    bool used;
    int refs;       /* slots holding it; each holds one library reference to h */
    td_tensor *h;
    td_dtype dtype;
    td_backend kind; /* TD_BACKEND_CPU or TD_BACKEND_AUTODIFF */
    td_autodiff_context ctx;
    mshape s;
    int node;       /* model graph node, -1 when untracked */
    int zeros;
    bool hashed;    /* hash holds its data as read back when it was made */
    uint64_t hash;
} mtensor;

typedef struct mnode {
    bool leaf, released, maybe_released;
    bool balanced; /* recorded under ENABLED(BALANCED) */
    int np;
    int parents[MAX_PARENTS];
} mnode;

typedef struct mgrads {
    td_grads *h;
    bool unknown;       /* the model cannot tell which leaves have a gradient */
    bool seed_ctx_any;  /* seeded with a plain tensor: a gradient may be that tensor, with its context */
    td_autodiff_context seed_ctx;
    uint64_t has[MAX_NODES / 64];
} mgrads;

static mtensor pool[2 * NSLOTS + 2];
static int slot[NSLOTS];
static mnode nodes[MAX_NODES];
static int nnodes;
static mgrads grads[NGRADS];

#define NDEV 4
static td_device *dev[NDEV]; /* cpu (for the whole run), then per input: ad(NONE), ad(BALANCED), ad(NONE) */
static const td_backend dev_kind[NDEV] = { TD_BACKEND_CPU, TD_BACKEND_AUTODIFF, TD_BACKEND_AUTODIFF,
                                           TD_BACKEND_AUTODIFF };
static const td_autodiff_context dev_ctx[NDEV] = { { false, TD_CHECKPOINT_NONE },
                                                   { true, TD_CHECKPOINT_NONE },
                                                   { true, TD_CHECKPOINT_BALANCED },
                                                   { true, TD_CHECKPOINT_NONE } };
static const char *const dev_name[NDEV] = { "cpu", "ad(NONE)", "ad(BALANCED)", "ad(NONE)#2" };

static const mtensor *T(int s)
{
    return (s >= 0 && s < NSLOTS && slot[s] >= 0) ? &pool[slot[s]] : NULL;
}

static td_tensor *H(int s)
{
    const mtensor *t = T(s);
    return t ? t->h : NULL;
}

static int new_rec(void)
{
    for (int i = 0; i < (int)(sizeof pool / sizeof pool[0]); i++)
        if (!pool[i].used) {
            memset(&pool[i], 0, sizeof pool[i]);
            pool[i].used = true;
            pool[i].node = -1;
            return i;
        }
    fail("harness: record pool exhausted");
    return -1;
}

static void drop_ref(int r)
{
    td_tensor_release(pool[r].h);
    if (--pool[r].refs == 0)
        pool[r].used = false;
}

static void put_slot(int s, int r)
{
    pool[r].refs++;
    int old = slot[s];
    slot[s] = r;
    if (old >= 0)
        drop_ref(old);
}

static int new_node(bool leaf, int np, const int *parents)
{
    if (nnodes >= MAX_NODES)
        fail("harness: node table full");
    mnode *n = &nodes[nnodes];
    memset(n, 0, sizeof *n);
    n->leaf = leaf;
    n->np = np;
    for (int i = 0; i < np; i++)
        n->parents[i] = parents[i];
    return nnodes++;
}

static int64_t numel_of(const mshape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->nd; i++)
        n *= s->d[i];
    return n;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r > (UINT64_C(1) << 62))
        return UINT64_C(1) << 62;
    return r;
}

static void fmt_shape(char *buf, size_t cap, const mshape *s)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < s->nd && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)s->d[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

static const char *dtype_name(td_dtype d)
{
    return d == TD_F32 ? "f32" : d == TD_I32 ? "i32" : d == TD_BOOL ? "bool" : "?";
}

static const char *ctx_name(td_autodiff_context c)
{
    if (!c.enabled)
        return "DISABLED";
    return c.strategy == TD_CHECKPOINT_BALANCED ? "ENABLED(BALANCED)" : "ENABLED(NONE)";
}

static bool ctx_eq(td_autodiff_context a, td_autodiff_context b)
{
    return a.enabled == b.enabled && (!a.enabled || a.strategy == b.strategy);
}

static void describe(char *buf, size_t cap, int s)
{
    const mtensor *t = T(s);
    if (t == NULL) {
        snprintf(buf, cap, "s%d:NULL", s);
        return;
    }
    char sh[160];
    fmt_shape(sh, sizeof sh, &t->s);
    snprintf(buf, cap, "s%d:%s %s %s %s%s", s, dtype_name(t->dtype), t->kind == TD_BACKEND_CPU ? "cpu" : "ad", sh,
             ctx_name(t->ctx), t->node >= 0 ? (nodes[t->node].leaf ? " leaf" : " tracked") : "");
}

/* ------------------------------------------------------------------ expectations */

#define E(s) (1u << (s))
#define ES_BADSIZE (E(TD_E_SHAPE) | E(TD_E_INVALID))                 /* a size < 1, a bad dim count */
#define ES_HUGE (E(TD_E_SHAPE) | E(TD_E_INVALID) | E(TD_E_RANGE) | E(TD_E_NOMEM)) /* cannot exist */

typedef struct expect {
    unsigned errs;  /* causes the model sees: the call must fail with one of these */
    unsigned maybe; /* errors the model cannot rule out (OK stays acceptable when errs is 0) */
    bool skip;      /* the result would be over SMALL elements: the call is not made */
    bool diff;      /* a differentiable float op: the result is tracked when a float input is */
    mtensor res;    /* the result on OK (h, node unused) */
    int np;
    int parents[MAX_PARENTS];
    bool ctx_either; /* the model cannot tell between res.ctx and ctx2 */
    td_autodiff_context ctx2;
} expect;

static void exp_init(expect *e, td_dtype dtype)
{
    memset(e, 0, sizeof *e);
    e->res.dtype = dtype;
    e->res.kind = TD_BACKEND_CPU;
    e->res.node = -1;
}

static void size_check(expect *e, uint64_t n)
{
    if (n >= TOO_BIG)
        e->errs |= ES_HUGE;
    else if (n > SMALL)
        e->skip = true;
}

typedef struct arg {
    const mtensor *t;
    td_dtype want;
} arg;

/* What every tensor op's boundary does: NULLs, classes, one place, context merge, the guard. */
static void check_args(expect *e, const arg *args, int n)
{
    const mtensor *first = NULL;
    td_autodiff_context ctx = { false, TD_CHECKPOINT_NONE };
    for (int i = 0; i < n; i++) {
        const mtensor *t = args[i].t;
        if (t == NULL) {
            e->errs |= E(TD_E_NULL);
            continue;
        }
        if (t->dtype != args[i].want)
            e->errs |= E(TD_E_KIND);
        if (first == NULL) {
            first = t;
            ctx = t->ctx;
        } else {
            if (t->kind != first->kind)
                e->errs |= E(TD_E_BACKEND_MISMATCH);
            if (t->ctx.enabled) {
                if (!ctx.enabled)
                    ctx = t->ctx;
                else if (ctx.strategy != t->ctx.strategy)
                    e->errs |= E(TD_E_AUTODIFF_CONTEXT);
            }
        }
        /* The guard: an autodiff float primitive needs an enabled context. */
        if (args[i].want == TD_F32 && t->dtype == TD_F32 && t->kind == TD_BACKEND_AUTODIFF && !t->ctx.enabled)
            e->errs |= E(TD_E_AUTODIFF_CONTEXT);
        if (args[i].want == TD_F32 && t->node >= 0 && e->np < MAX_PARENTS)
            e->parents[e->np++] = t->node;
    }
    if (first != NULL)
        e->res.kind = first->kind;
    e->res.ctx = ctx;
}

static bool broadcast(const mshape *a, const mshape *b, mshape *out)
{
    int n = a->nd > b->nd ? a->nd : b->nd;
    out->nd = n;
    for (int i = 0; i < n; i++) {
        int ia = i - (n - a->nd), ib = i - (n - b->nd);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        out->d[i] = da == 1 ? db : da;
    }
    return true;
}

static uint64_t count_of(const mshape *s)
{
    uint64_t n = 1;
    for (int i = 0; i < s->nd; i++)
        n = sat_mul(n, (uint64_t)s->d[i]);
    return n;
}

/* A dim argument normalized (negative counts from the end; a 0-d tensor takes 0 and -1,
 * as a dim of size 1); false when out of range. */
static bool norm_dim(int64_t d, int nd, int *out)
{
    const int n = nd > 0 ? nd : 1;
    if (d < -n || d >= n)
        return false;
    *out = (int)(d < 0 ? d + n : d);
    return true;
}

/* ------------------------------------------------------------------ calls and their checks */

static long oom_pending = -1; /* set by OP_OOM: allocations fail after this many in the next call */
static bool oom_now;
static int probes_left;
static char sentinel_storage[16]; /* preset into out pointers: the call must overwrite it */
#define SENTINEL ((td_tensor *)(void *)sentinel_storage)

/* Around the first call of an instruction that follows OP_OOM. */
static void arm(void)
{
    oom_now = oom_pending >= 0;
    if (oom_now)
        td_testing_fail_allocations_after(oom_pending);
    oom_pending = -1;
}

static void disarm(void)
{
    if (oom_now)
        td_testing_fail_allocations_after(-1);
}

static char *mask_names(unsigned m, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (int s = 1; s <= TD_E_INTERNAL && n < cap; s++)
        if (m & E(s))
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "|" : "", td_status_name((td_status)s));
    if (n == 0)
        snprintf(buf, cap, "none");
    return buf;
}

#define GUARD_MESSAGE "an autodiff float primitive must have an enabled autodiff context"

/* The status against the expectation; true when the call succeeded. */
static bool check_status(td_status st, const expect *e)
{
    char b1[256];
    unsigned acceptable = e->errs | e->maybe | (oom_now ? E(TD_E_NOMEM) : 0u);
    if (st == TD_OK) {
        if (e->errs)
            fail("returned TD_OK but the model expects an error: %s", mask_names(e->errs, b1, sizeof b1));
        return true;
    }
    if ((unsigned)st > TD_E_INTERNAL || !(acceptable & E(st))) {
        if (e->errs == 0 && e->maybe == 0)
            fail("returned %s but the model expects TD_OK", td_status_name(st));
        fail("returned %s but the model expects %s%s", td_status_name(st), e->errs ? "" : "TD_OK or ",
             mask_names(acceptable, b1, sizeof b1));
    }
    const char *m = td_last_error();
    if (m == NULL || m[0] == 0)
        fail("returned %s with an empty td_last_error()", td_status_name(st));
    /* The message names the op (the guard's fixed text aside; backward's say "backward"). */
    char op[64];
    size_t n = strcspn(cur_op, " ");
    snprintf(op, sizeof op, "%.*s", (int)n, cur_op);
    if (strncmp(op, "backward", 8) != 0 && strstr(m, op) == NULL &&
        !(st == TD_E_AUTODIFF_CONTEXT && strcmp(m, GUARD_MESSAGE) == 0))
        fail("returned %s with a message that does not name %s", td_status_name(st), op);
    return false;
}

/* The handle's queries against the model record. */
static void verify(td_tensor *h, mtensor *m, const expect *e)
{
    int64_t dims[TD_MAX_DIMS];
    int nd = -1;
    char b1[160], b2[160];
    if (td_tensor_shape(h, dims, &nd) != TD_OK)
        fail("td_tensor_shape failed on a result");
    mshape got = { .nd = nd };
    if (nd < 0 || nd > TD_MAX_DIMS)
        fail("result has %d dims", nd);
    memcpy(got.d, dims, sizeof(int64_t) * (size_t)nd);
    if (nd != m->s.nd || memcmp(got.d, m->s.d, sizeof(int64_t) * (size_t)nd) != 0) {
        fmt_shape(b1, sizeof b1, &got);
        fmt_shape(b2, sizeof b2, &m->s);
        fail("result shape %s, the model expects %s", b1, b2);
    }
    int64_t n = -1;
    if (td_tensor_numel(h, &n) != TD_OK || n != numel_of(&m->s))
        fail("td_tensor_numel gives %lld, the model expects %lld", (long long)n, (long long)numel_of(&m->s));
    td_dtype dt;
    if (td_tensor_dtype(h, &dt) != TD_OK || dt != m->dtype)
        fail("result dtype %s, the model expects %s", dtype_name(dt), dtype_name(m->dtype));
    td_backend k;
    if (td_tensor_backend(h, &k) != TD_OK || k != m->kind)
        fail("result kind %s, the model expects %s", td_backend_name(k), td_backend_name(m->kind));
    td_autodiff_context c;
    if (td_tensor_autodiff_context(h, &c) != TD_OK)
        fail("td_tensor_autodiff_context failed on a result");
    if (!ctx_eq(c, m->ctx)) {
        if (e != NULL && e->ctx_either && ctx_eq(c, e->ctx2))
            m->ctx = c;
        else
            fail("result context %s, the model expects %s", ctx_name(c), ctx_name(m->ctx));
    }
    bool tr = false;
    if (td_is_tracked(h, &tr) != TD_OK || tr != (m->node >= 0))
        fail("td_is_tracked says %d, the model expects %d", (int)tr, (int)(m->node >= 0));
}

static float fbuf[SMALL + 64];
static int32_t ibuf[SMALL + 64];
static bool bbuf[SMALL + 64];

/* into_data of any class, with dst_len = numel + delta (NULL dst when null_dst). */
static td_status read_into(td_dtype cls, const td_tensor *h, int64_t dst_len, bool null_dst)
{
    switch (cls) {
    case TD_F32:
        return td_float_into_data(h, null_dst ? NULL : fbuf, dst_len);
    case TD_I32:
        return td_int_into_data(h, null_dst ? NULL : ibuf, dst_len);
    default:
        return td_bool_into_data(h, null_dst ? NULL : bbuf, dst_len);
    }
}

static void read_back(const mtensor *t, int cls, int lenmode)
{
    const char *names[3] = { "float_into_data", "int_into_data", "bool_into_data" };
    cur_op = names[cls];
    expect e;
    exp_init(&e, TD_F32);
    arg a = { t, (td_dtype)cls };
    check_args(&e, &a, 1);
    e.np = 0;
    int64_t numel = t ? numel_of(&t->s) : 0;
    static const int64_t delta[6] = { 0, 5, -1, 0, 0, 0 };
    int64_t len = lenmode == 3 ? 0 : lenmode == 4 ? -5 : numel + delta[lenmode];
    if (lenmode == 5)
        e.errs |= E(TD_E_NULL);
    if (t != NULL && t->dtype == (td_dtype)cls && len < numel)
        e.errs |= E(TD_E_INVALID);
    arm();
    td_status st = read_into((td_dtype)cls, t ? t->h : NULL, len, lenmode == 5);
    disarm();
    trace("    %s(len %lld) -> %s\n", cur_op, (long long)len, td_status_name(st));
    if (!check_status(st, &e) || cls != TD_BOOL)
        return;
    for (int64_t i = 0; i < numel; i++) {
        uint8_t byte;
        memcpy(&byte, &bbuf[i], 1);
        if (byte > 1)
            fail("bool_into_data wrote byte %u at %lld (bools are 0 or 1)", byte, (long long)i);
    }
}

/* A hash of t's data as into_data gives it; false when it cannot be read (the guard). */
static bool data_hash(const mtensor *t, uint64_t *out)
{
    int64_t n = numel_of(&t->s);
    size_t bytes = (size_t)n * (t->dtype == TD_BOOL ? sizeof(bool) : 4);
    const void *p = t->dtype == TD_F32 ? (const void *)fbuf : t->dtype == TD_I32 ? (const void *)ibuf : (const void *)bbuf;
    if (read_into(t->dtype, t->h, n, false) != TD_OK)
        return false;
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * UINT64_C(1099511628211);
    *out = h;
    return true;
}

/* Ops are functional: no call may change a live tensor's shape, context or data. */
static void verify_all(bool data)
{
    const char *op = cur_op;
    cur_op = "checking the live tensors";
    for (int i = 0; i < NSLOTS; i++) {
        if (slot[i] < 0)
            continue;
        mtensor *t = &pool[slot[i]];
        verify(t->h, t, NULL);
        uint64_t h;
        if (data && t->hashed && data_hash(t, &h) && h != t->hash)
            fail("the data of slot %d changed after it was made", i);
    }
    cur_op = op;
}

/* The record of a live handle, or -1. */
static int find_live(const td_tensor *h)
{
    for (int i = 0; i < (int)(sizeof pool / sizeof pool[0]); i++)
        if (pool[i].used && pool[i].refs > 0 && pool[i].h == h)
            return i;
    return -1;
}

/* After the call: the status, the out pointer, then the result's record into slot dst.
 * An op's result is a new tensor; td_grads_get may hand out another reference to a
 * tensor the program holds already (the same gradient twice, or the seed). */
static mtensor *finish_ex(td_status st, td_tensor *out, expect *e, int dst, bool may_alias)
{
    if (!check_status(st, e)) {
        if (out != NULL)
            fail("returned %s but *out is %p, not NULL", td_status_name(st), (void *)out);
        trace("    -> %s: %s\n", td_status_name(st), td_last_error());
        return NULL;
    }
    if (out == NULL || out == SENTINEL)
        fail("returned TD_OK without a result");
    int old = find_live(out);
    if (old >= 0) {
        if (!may_alias)
            fail("returned a handle the program already holds: *out must own a new tensor");
        verify(out, &pool[old], NULL);
        put_slot(dst, old);
        trace("    -> OK: another reference to a tensor already held\n");
        return &pool[old];
    }
    int r = new_rec();
    mtensor *m = &pool[r];
    *m = e->res;
    m->used = true;
    m->refs = 0;
    m->h = out;
    m->node = -1;
    if (m->dtype != TD_I32)
        m->zeros = ZS_UNKNOWN;
    if (e->diff && m->dtype == TD_F32 && m->kind == TD_BACKEND_AUTODIFF && e->np > 0) {
        m->node = new_node(false, e->np, e->parents);
        nodes[m->node].balanced = m->ctx.enabled && m->ctx.strategy == TD_CHECKPOINT_BALANCED;
    }
    verify(out, m, e);
    put_slot(dst, r);
    if (trace_on) {
        char b[256];
        describe(b, sizeof b, dst);
        trace("    -> OK %s\n", b);
    }
    const char *op = cur_op;
    read_back(m, (int)m->dtype, 0);
    m->hashed = data_hash(m, &m->hash);
    cur_op = op;
    if (numel_of(&m->s) == 0) {
        /* A valid call can give an empty result (a slice whose normalized bounds meet).
         * The model generates no zero sizes and its operand readers assume none, so the
         * result is checked above and then let go. */
        trace("    zero-size result checked and released: the model follows no empty tensors\n");
        slot[dst] = -1;
        drop_ref(r);
        return NULL;
    }
    return m;
}

static mtensor *finish(td_status st, td_tensor *out, expect *e, int dst)
{
    return finish_ex(st, out, e, dst, false);
}

/* Call `call` unless the model skips it; the result goes to slot dst. */
#define RUN(name, e, dst, call)                                                                                    \
    do {                                                                                                           \
        cur_op = (name);                                                                                           \
        if ((e).skip) {                                                                                            \
            trace("    %s skipped: the result would be over %d elements\n", cur_op, SMALL);                        \
            break;                                                                                                 \
        }                                                                                                          \
        td_tensor *out = SENTINEL;                                                                                 \
        arm();                                                                                                     \
        td_status st = (call);                                                                                     \
        disarm();                                                                                                  \
        finish(st, out, &(e), (dst));                                                                              \
    } while (0)

/* ------------------------------------------------------------------ operand bytes */

/* A slot operand: >= 0xF8 is NULL; bit 3 looks for a slot of class want from slot b & 7. */
static int rd_operand(int want)
{
    unsigned b = u8();
    if (b >= 0xF8)
        return -1;
    int s = (int)(b & 7);
    if ((b & 8) && want >= 0)
        for (int k = 0; k < NSLOTS; k++) {
            int j = (s + k) % NSLOTS;
            if (T(j) != NULL && (int)T(j)->dtype == want)
                return j;
        }
    return s;
}

/* A class byte followed by the operand: < 0xC0 takes the operand's class. */
static int rd_class_operand(int *cls)
{
    unsigned b = u8();
    if (b < 0xC0) {
        int s = rd_operand(-1);
        *cls = T(s) ? (int)T(s)->dtype : TD_F32;
        return s;
    }
    *cls = (int)((b - 0xC0) % 3);
    return rd_operand(*cls);
}

/* A device: cpu, ad(NONE), ad(BALANCED), the second ad(NONE), or NULL (-1). A dropped
 * device reads as NULL too. */
static int rd_dev(void)
{
    unsigned b = u8();
    int d = (int)(b % 4);
    if (d == 3 && (b & 0x80))
        return -1;
    return dev[d] ? d : -1;
}

static int rd_dst(void)
{
    return (int)(u8() % NSLOTS);
}

/* A shape argument: the array, its length, and whether the pointer is NULL. */
typedef struct gshape {
    int len;
    int64_t d[10];
    bool null_ptr;
} gshape;

static void rd_shape(gshape *g)
{
    memset(g, 0, sizeof *g);
    unsigned m = u8();
    if (m < 0x90 || m >= 0xF0) { /* small: 0..4 dims of 1..8 */
        g->len = (int)(m % 5);
        for (int i = 0; i < g->len; i++)
            g->d[i] = 1 + u8() % 8;
    } else if (m < 0xA0) { /* 1..2 dims of 1..64 */
        g->len = 1 + (int)(m & 1);
        for (int i = 0; i < g->len; i++)
            g->d[i] = 1 + u8() % 64;
    } else if (m < 0xB0) { /* like slot m & 7, maybe changed */
        const mtensor *h = T((int)(m & 7));
        if (h != NULL) {
            g->len = h->s.nd;
            memcpy(g->d, h->s.d, sizeof h->s.d);
        }
        if (m & 8) {
            unsigned b = u8(), k = b / 4;
            switch (b % 4) {
            case 0: /* one dim to 1: broadcasts back */
                if (g->len > 0)
                    g->d[k % (unsigned)g->len] = 1;
                break;
            case 1: /* a new leading dim */
                if (g->len < TD_MAX_DIMS) {
                    memmove(g->d + 1, g->d, sizeof(int64_t) * (size_t)g->len);
                    g->d[0] = 1 + k % 3;
                    g->len++;
                }
                break;
            case 2: /* drop the leading dim */
                if (g->len > 0) {
                    memmove(g->d, g->d + 1, sizeof(int64_t) * (size_t)(g->len - 1));
                    g->len--;
                }
                break;
            default: /* a matmul partner: [..., k, n] where k is the last dim */
                if (g->len >= 2) {
                    g->d[g->len - 2] = g->d[g->len - 1];
                    g->d[g->len - 1] = 1 + k % 4;
                } else if (g->len == 1) {
                    g->d[1] = 1 + k % 4;
                    g->len = 2;
                }
                break;
            }
        }
    } else if (m < 0xC0) { /* 5..8 dims of 1..2 */
        g->len = 5 + (int)(m & 3);
        for (int i = 0; i < g->len; i++)
            g->d[i] = 1 + u8() % 2;
    } else if (m < 0xD0) { /* a negative size */
        /* (sizes of 0 are valid, but the model does not follow empty tensors through its
         * other rules: tests/runtime/test_zero_size.c and the generated test_<op>_empty do) */
        static const int64_t bad[4] = { -2, -1, -7, INT64_MIN };
        g->len = 1 + (int)(m & 3);
        for (int i = 0; i < g->len; i++)
            g->d[i] = 1 + u8() % 8;
        g->d[u8() % (unsigned)g->len] = bad[(m >> 2) & 3];
    } else if (m < 0xE0) { /* far too many elements (or overflowing int64) */
        static const int64_t big[6] = { INT64_C(1) << 21, INT64_C(1) << 31, INT64_C(1) << 40,
                                        INT64_C(1) << 62, INT64_MAX, 3 };
        g->len = 2 + (int)(m & 1);
        for (int i = 0; i < g->len; i++)
            g->d[i] = big[u8() % 6];
    } else { /* a bad length, or a NULL array */
        if (m & 2) {
            g->len = 2;
            g->d[0] = g->d[1] = 1;
            g->null_ptr = true;
        } else if (m & 1) {
            g->len = 9;
            for (int i = 0; i < 9; i++)
                g->d[i] = 1;
        } else {
            g->len = -1;
        }
    }
}

/* The from_shape rule: 0..8 dims, none negative, not too many elements (the model makes
 * no sizes of 0). */
static void model_from_shape(expect *e, const gshape *g)
{
    if (g->null_ptr && g->len > 0)
        e->errs |= E(TD_E_NULL);
    if (g->len < 0 || g->len > TD_MAX_DIMS) {
        e->errs |= ES_BADSIZE;
        return;
    }
    uint64_t n = 1;
    bool bad = false;
    for (int i = 0; i < g->len; i++) {
        if (g->d[i] < 1)
            bad = true;
        else
            n = sat_mul(n, (uint64_t)g->d[i]);
    }
    if (bad) {
        e->errs |= ES_BADSIZE;
        return;
    }
    size_check(e, n);
    e->res.s.nd = g->len;
    memcpy(e->res.s.d, g->d, sizeof(int64_t) * (size_t)g->len);
}

static const int64_t *shape_ptr(const gshape *g)
{
    return g->null_ptr ? NULL : g->d;
}

/* ------------------------------------------------------------------ instructions */

static void device_args(expect *e, int d)
{
    if (d < 0) {
        e->errs |= E(TD_E_NULL);
        return;
    }
    e->res.kind = dev_kind[d];
    e->res.ctx = dev_ctx[d];
}

static td_device *D(int d)
{
    return d < 0 ? NULL : dev[d];
}

static int zeros_of_ints(const int32_t *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (v[i] == 0)
            return ZS_HASZERO;
    return ZS_NONZERO;
}

static void op_create(void)
{
    static const char *const names[11] = { "float_from_data", "int_from_data", "bool_from_data", "float_zeros",
                                            "int_zeros", "float_ones", "int_ones", "float_full", "int_full",
                                            "float_random", "int_arange" };
    static const td_dtype types[11] = { TD_F32, TD_I32, TD_BOOL, TD_F32, TD_I32, TD_F32,
                                        TD_I32, TD_F32, TD_I32, TD_F32, TD_I32 };
    int sub = (int)(u8() % 11);
    int d = rd_dev();
    expect e;
    exp_init(&e, types[sub]);
    device_args(&e, d);
    gshape g;
    memset(&g, 0, sizeof g);
    if (sub != 10) {
        rd_shape(&g);
        model_from_shape(&e, &g);
    }
    int64_t n = (!e.errs && !e.skip) ? numel_of(&e.res.s) : 0;
    trace("[%d] create %s on %s len %d\n", pc, names[sub], d < 0 ? "NULL" : dev_name[d], g.len);
    switch (sub) {
    case 0:
    case 1:
    case 2: {
        unsigned p = u8();
        bool null_data = p == 0xFF;
        if (null_data)
            e.errs |= E(TD_E_NULL);
        for (int64_t i = 0; i < n; i++) {
            fbuf[i] = fvals[(p + (unsigned)i) % 16];
            ibuf[i] = (p & 0x80) ? (int32_t)(1 + (p + (unsigned)i) % 7) : (int32_t)((p + (unsigned)i) % 5) - 2;
            bbuf[i] = ((p >> (i % 8)) & 1) != 0;
        }
        e.res.zeros = zeros_of_ints(ibuf, n);
        int dst = rd_dst();
        if (sub == 0)
            RUN(names[sub], e, dst, td_float_from_data(D(d), null_data ? NULL : fbuf, shape_ptr(&g), g.len, &out));
        else if (sub == 1)
            RUN(names[sub], e, dst, td_int_from_data(D(d), null_data ? NULL : ibuf, shape_ptr(&g), g.len, &out));
        else
            RUN(names[sub], e, dst, td_bool_from_data(D(d), null_data ? NULL : bbuf, shape_ptr(&g), g.len, &out));
        break;
    }
    case 3:
        e.res.zeros = ZS_HASZERO;
        RUN(names[sub], e, rd_dst(), td_float_zeros(D(d), shape_ptr(&g), g.len, &out));
        break;
    case 4:
        e.res.zeros = ZS_HASZERO;
        RUN(names[sub], e, rd_dst(), td_int_zeros(D(d), shape_ptr(&g), g.len, &out));
        break;
    case 5:
        RUN(names[sub], e, rd_dst(), td_float_ones(D(d), shape_ptr(&g), g.len, &out));
        break;
    case 6:
        e.res.zeros = ZS_NONZERO;
        RUN(names[sub], e, rd_dst(), td_int_ones(D(d), shape_ptr(&g), g.len, &out));
        break;
    case 7: {
        float v = rd_float();
        RUN(names[sub], e, rd_dst(), td_float_full(D(d), shape_ptr(&g), g.len, v, &out));
        break;
    }
    case 8: {
        int32_t v = rd_int();
        e.res.zeros = v == 0 ? ZS_HASZERO : ZS_NONZERO;
        RUN(names[sub], e, rd_dst(), td_int_full(D(d), shape_ptr(&g), g.len, v, &out));
        break;
    }
    case 9: {
        /* uniform in [p0, p1): finite p0 < p1; normal: finite mean, finite std >= 0. */
        static const int dists[4] = { TD_UNIFORM, TD_NORMAL, 2, 0x7fffffff };
        int dist = dists[u8() % 4];
        float p0 = rd_float(), p1 = rd_float();
        uint64_t seed = u8();
        trace("    dist %d p0 %g p1 %g\n", dist, (double)p0, (double)p1);
        const unsigned bad = E(TD_E_INVALID) | E(TD_E_RANGE);
        if (dist != TD_UNIFORM && dist != TD_NORMAL)
            e.errs |= bad;
        else if (!isfinite(p0) || !isfinite(p1))
            e.errs |= bad;
        else if (dist == TD_UNIFORM && p0 > p1)
            e.errs |= bad;
        else if (dist == TD_UNIFORM && p0 == p1)
            e.maybe |= bad; /* [p, p) is empty; a library may also return p */
        else if (dist == TD_NORMAL && p1 < 0)
            e.errs |= bad;
        else if (dist == TD_NORMAL && p1 == 0)
            e.maybe |= bad; /* a degenerate normal */
        RUN(names[sub], e, rd_dst(),
            td_float_random(D(d), shape_ptr(&g), g.len, (td_distribution)dist, p0, p1, seed, &out));
        break;
    }
    default: {
        int64_t start = rd_i64(), end = rd_i64(), step = rd_i64();
        if (end == start && step != 0) {
            /* an empty range is valid, but the model follows no empty tensors: put end on
             * the wrong side of start instead (an error either way) */
            const bool up = step > 0;
            if (up ? start > INT64_MIN : start < INT64_MAX) {
                end = up ? start - 1 : start + 1;
            } else {
                end = up ? start + 1 : start - 1;
                step = up ? -1 : 1;
            }
        }
        trace("    arange(%lld, %lld, %lld)\n", (long long)start, (long long)end, (long long)step);
        /* start, start + step, ... before end: at least one element, every one an int32. */
        if (step == 0) {
            e.errs |= E(TD_E_INVALID);
        } else {
            i128 span = step > 0 ? (i128)end - start : (i128)start - end;
            i128 mag = step > 0 ? (i128)step : -(i128)step;
            if (span <= 0) {
                e.errs |= ES_BADSIZE | E(TD_E_RANGE);
            } else {
                i128 cnt = (span + mag - 1) / mag;
                i128 last = (i128)start + (cnt - 1) * (i128)step;
                if (start < INT32_MIN || start > INT32_MAX || last < INT32_MIN || last > INT32_MAX) {
                    e.errs |= E(TD_E_RANGE) | E(TD_E_INVALID) | E(TD_E_SHAPE);
                } else if (cnt > SMALL) {
                    e.skip = true;
                } else {
                    e.res.s.nd = 1;
                    e.res.s.d[0] = (int64_t)cnt;
                    e.res.zeros = ZS_NONZERO;
                    if ((-(i128)start) % step == 0) {
                        i128 k = -(i128)start / step;
                        if (k >= 0 && k < cnt)
                            e.res.zeros = ZS_HASZERO;
                    }
                }
            }
        }
        RUN(names[sub], e, rd_dst(), td_int_arange(D(d), start, end, step, &out));
        break;
    }
    }
}

static void op_unary_float(void)
{
    static const char *const names[17] = { "float_neg", "float_abs", "float_exp", "float_log", "float_sqrt",
                                           "float_sin", "float_cos", "float_tanh", "float_sigmoid", "float_relu",
                                           "float_gelu", "float_powf_scalar", "float_clamp", "float_add_scalar",
                                           "float_mul_scalar", "float_sum", "float_into_int" };
    int sub = (int)(u8() % 17);
    int a = rd_operand(TD_F32);
    float x = 0, y = 0;
    if (sub >= 11 && sub <= 14)
        x = rd_float();
    if (sub == 12)
        y = rd_float();
    int dst = rd_dst();
    char b[256];
    describe(b, sizeof b, a);
    trace("[%d] %s(%s, %g, %g) -> s%d\n", pc, names[sub], b, (double)x, (double)y, dst);
    expect e;
    exp_init(&e, sub == 16 ? TD_I32 : TD_F32);
    arg args[1] = { { T(a), TD_F32 } };
    check_args(&e, args, 1);
    e.diff = sub != 16;
    if (T(a))
        e.res.s = T(a)->s;
    if (sub == 15)
        e.res.s.nd = 0;
    const td_tensor *h = H(a);
    switch (sub) {
    case 0: RUN(names[sub], e, dst, td_float_neg(h, &out)); break;
    case 1: RUN(names[sub], e, dst, td_float_abs(h, &out)); break;
    case 2: RUN(names[sub], e, dst, td_float_exp(h, &out)); break;
    case 3: RUN(names[sub], e, dst, td_float_log(h, &out)); break;
    case 4: RUN(names[sub], e, dst, td_float_sqrt(h, &out)); break;
    case 5: RUN(names[sub], e, dst, td_float_sin(h, &out)); break;
    case 6: RUN(names[sub], e, dst, td_float_cos(h, &out)); break;
    case 7: RUN(names[sub], e, dst, td_float_tanh(h, &out)); break;
    case 8: RUN(names[sub], e, dst, td_float_sigmoid(h, &out)); break;
    case 9: RUN(names[sub], e, dst, td_float_relu(h, &out)); break;
    case 10: RUN(names[sub], e, dst, td_float_gelu(h, &out)); break;
    case 11: RUN(names[sub], e, dst, td_float_powf_scalar(h, x, &out)); break;
    case 12: RUN(names[sub], e, dst, td_float_clamp(h, x, y, &out)); break;
    case 13: RUN(names[sub], e, dst, td_float_add_scalar(h, x, &out)); break;
    case 14: RUN(names[sub], e, dst, td_float_mul_scalar(h, x, &out)); break;
    case 15: RUN(names[sub], e, dst, td_float_sum(h, &out)); break;
    default: RUN(names[sub], e, dst, td_float_into_int(h, &out)); break;
    }
}

static void op_unary_other(void)
{
    static const char *const names[5] = { "int_sum", "int_into_float", "bool_into_float", "bool_into_int",
                                          "bool_not" };
    static const td_dtype in[5] = { TD_I32, TD_I32, TD_BOOL, TD_BOOL, TD_BOOL };
    static const td_dtype outt[5] = { TD_I32, TD_F32, TD_F32, TD_I32, TD_BOOL };
    int sub = (int)(u8() % 5);
    int a = rd_operand((int)in[sub]);
    int dst = rd_dst();
    char b[256];
    describe(b, sizeof b, a);
    trace("[%d] %s(%s) -> s%d\n", pc, names[sub], b, dst);
    expect e;
    exp_init(&e, outt[sub]);
    arg args[1] = { { T(a), in[sub] } };
    check_args(&e, args, 1);
    if (T(a))
        e.res.s = T(a)->s;
    if (sub == 0)
        e.res.s.nd = 0;
    const td_tensor *h = H(a);
    switch (sub) {
    case 0: RUN(names[sub], e, dst, td_int_sum(h, &out)); break;
    case 1: RUN(names[sub], e, dst, td_int_into_float(h, &out)); break;
    case 2: RUN(names[sub], e, dst, td_bool_into_float(h, &out)); break;
    case 3: RUN(names[sub], e, dst, td_bool_into_int(h, &out)); break;
    default: RUN(names[sub], e, dst, td_bool_not(h, &out)); break;
    }
}

static void model_broadcast(expect *e, const mtensor *a, const mtensor *b)
{
    if (a == NULL || b == NULL)
        return;
    if (!broadcast(&a->s, &b->s, &e->res.s))
        e->errs |= E(TD_E_SHAPE);
    else
        size_check(e, count_of(&e->res.s));
}

static void op_binary_float(void)
{
    static const char *const names[12] = { "float_add", "float_sub", "float_mul", "float_div", "float_powf",
                                           "float_maximum", "float_minimum", "float_equal", "float_greater",
                                           "float_greater_equal", "float_lower", "float_lower_equal" };
    typedef td_status (*fn)(const td_tensor *, const td_tensor *, td_tensor **);
    static const fn fns[12] = { td_float_add, td_float_sub, td_float_mul, td_float_div, td_float_powf,
                                td_float_maximum, td_float_minimum, td_float_equal, td_float_greater,
                                td_float_greater_equal, td_float_lower, td_float_lower_equal };
    int sub = (int)(u8() % 12);
    int a = rd_operand(TD_F32), b = rd_operand(TD_F32);
    int dst = rd_dst();
    char s1[256], s2[256];
    describe(s1, sizeof s1, a);
    describe(s2, sizeof s2, b);
    trace("[%d] %s(%s, %s) -> s%d\n", pc, names[sub], s1, s2, dst);
    expect e;
    exp_init(&e, sub < 7 ? TD_F32 : TD_BOOL);
    arg args[2] = { { T(a), TD_F32 }, { T(b), TD_F32 } };
    check_args(&e, args, 2);
    e.diff = sub < 7;
    model_broadcast(&e, T(a), T(b));
    RUN(names[sub], e, dst, fns[sub](H(a), H(b), &out));
}

static void op_binary_int(void)
{
    static const char *const names[10] = { "int_add", "int_sub", "int_mul", "int_div", "int_remainder",
                                           "int_equal", "int_greater", "int_lower", "bool_and", "bool_or" };
    typedef td_status (*fn)(const td_tensor *, const td_tensor *, td_tensor **);
    static const fn fns[10] = { td_int_add, td_int_sub, td_int_mul, td_int_div, td_int_remainder,
                                td_int_equal, td_int_greater, td_int_lower, td_bool_and, td_bool_or };
    int sub = (int)(u8() % 10);
    td_dtype in = sub < 8 ? TD_I32 : TD_BOOL;
    int a = rd_operand((int)in), b = rd_operand((int)in);
    int dst = rd_dst();
    char s1[256], s2[256];
    describe(s1, sizeof s1, a);
    describe(s2, sizeof s2, b);
    trace("[%d] %s(%s, %s) -> s%d\n", pc, names[sub], s1, s2, dst);
    expect e;
    exp_init(&e, sub < 5 ? TD_I32 : TD_BOOL);
    arg args[2] = { { T(a), in }, { T(b), in } };
    check_args(&e, args, 2);
    model_broadcast(&e, T(a), T(b));
    if ((sub == 3 || sub == 4) && T(b) && T(b)->dtype == TD_I32) {
        /* "a zero divisor is an error": every element of b takes part after broadcasting. */
        if (T(b)->zeros == ZS_HASZERO)
            e.errs |= E(TD_E_INVALID);
        else if (T(b)->zeros == ZS_UNKNOWN)
            e.maybe |= E(TD_E_INVALID);
    }
    RUN(names[sub], e, dst, fns[sub](H(a), H(b), &out));
}

static void op_mask(void)
{
    static const char *const names[4] = { "float_mask_fill", "int_mask_fill", "float_mask_where",
                                          "int_mask_where" };
    int sub = (int)(u8() % 4);
    td_dtype cls = (sub & 1) ? TD_I32 : TD_F32;
    int a = rd_operand((int)cls), mask = rd_operand(TD_BOOL), v = -1;
    float fv = 0;
    int32_t iv = 0;
    if (sub >= 2)
        v = rd_operand((int)cls);
    else if (sub == 0)
        fv = rd_float();
    else
        iv = rd_int();
    int dst = rd_dst();
    char s1[256], s2[256], s3[256];
    describe(s1, sizeof s1, a);
    describe(s2, sizeof s2, mask);
    describe(s3, sizeof s3, v);
    trace("[%d] %s(%s, %s, %s) -> s%d\n", pc, names[sub], s1, s2, sub >= 2 ? s3 : "scalar", dst);
    expect e;
    exp_init(&e, cls);
    arg args[3] = { { T(a), cls }, { T(mask), TD_BOOL }, { T(v), cls } };
    check_args(&e, args, sub >= 2 ? 3 : 2);
    e.diff = true;
    if (sub < 2) {
        /* mask broadcasts to a's shape: the result has a's shape. */
        if (T(a) && T(mask)) {
            mshape r;
            if (!broadcast(&T(a)->s, &T(mask)->s, &r) || r.nd != T(a)->s.nd ||
                memcmp(r.d, T(a)->s.d, sizeof(int64_t) * (size_t)r.nd) != 0)
                e.errs |= E(TD_E_SHAPE);
            e.res.s = T(a)->s;
        }
    } else if (T(a) && T(mask) && T(v)) {
        mshape ab;
        if (!broadcast(&T(a)->s, &T(mask)->s, &ab) || !broadcast(&ab, &T(v)->s, &e.res.s))
            e.errs |= E(TD_E_SHAPE);
        else
            size_check(&e, count_of(&e.res.s));
    }
    if (cls == TD_I32 && T(a)) {
        int za = T(a)->zeros;
        if (sub == 1)
            e.res.zeros = za == ZS_NONZERO && iv != 0 ? ZS_NONZERO : ZS_UNKNOWN;
        else
            e.res.zeros = za == ZS_NONZERO && T(v) && T(v)->zeros == ZS_NONZERO ? ZS_NONZERO : ZS_UNKNOWN;
    }
    switch (sub) {
    case 0: RUN(names[sub], e, dst, td_float_mask_fill(H(a), H(mask), fv, &out)); break;
    case 1: RUN(names[sub], e, dst, td_int_mask_fill(H(a), H(mask), iv, &out)); break;
    case 2: RUN(names[sub], e, dst, td_float_mask_where(H(a), H(mask), H(v), &out)); break;
    default: RUN(names[sub], e, dst, td_int_mask_where(H(a), H(mask), H(v), &out)); break;
    }
}

static void op_reduce_dim(void)
{
    static const char *const names[6] = { "float_sum_dim", "float_mean_dim", "float_max_dim", "float_min_dim",
                                          "float_argmax", "float_argmin" };
    typedef td_status (*fn)(const td_tensor *, int64_t, td_tensor **);
    static const fn fns[6] = { td_float_sum_dim, td_float_mean_dim, td_float_max_dim, td_float_min_dim,
                               td_float_argmax, td_float_argmin };
    int sub = (int)(u8() % 6);
    int a = rd_operand(TD_F32);
    int nd = T(a) ? T(a)->s.nd : 2;
    int64_t dim = rd_dim(nd);
    int dst = rd_dst();
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s, dim %lld) -> s%d\n", pc, names[sub], s1, (long long)dim, dst);
    expect e;
    exp_init(&e, sub < 4 ? TD_F32 : TD_I32);
    arg args[1] = { { T(a), TD_F32 } };
    check_args(&e, args, 1);
    e.diff = sub < 4;
    int k = 0;
    int64_t size = 1;
    if (T(a)) {
        e.res.s = T(a)->s;
        if (!norm_dim(dim, nd, &k)) {
            e.errs |= E(TD_E_RANGE);
        } else if (nd > 0) { /* a 0-d tensor gives a 0-d result (size 1) */
            size = e.res.s.d[k];
            e.res.s.d[k] = 1;
        }
    }
    const char *name = names[sub];
    cur_op = name;
    if (e.skip)
        return;
    td_tensor *out = SENTINEL;
    arm();
    td_status st = fns[sub](H(a), dim, &out);
    disarm();
    mtensor *m = finish(st, out, &e, dst);
    if (m == NULL || sub < 4 || m->dtype != TD_I32)
        return;
    /* An index along dim: 0 <= i < size (read back by finish into ibuf). */
    cur_op = name;
    if (td_int_into_data(m->h, ibuf, SMALL) == TD_OK)
        for (int64_t i = 0; i < numel_of(&m->s); i++)
            if (ibuf[i] < 0 || ibuf[i] >= size)
                fail("index %d at %lld is outside [0, %lld)", ibuf[i], (long long)i, (long long)size);
}

/* The reshape rule: one -1 at most, other sizes >= 1, the same element count. */
static void op_reshape(void)
{
    static const char *const names[3] = { "float_reshape", "int_reshape", "bool_reshape" };
    int cls;
    int a = rd_class_operand(&cls);
    const mtensor *t = T(a);
    gshape g;
    memset(&g, 0, sizeof g);
    unsigned m = u8();
    int64_t n = t ? numel_of(&t->s) : 1;
    if (m < 0x80) { /* a factorization of n, maybe with a -1 */
        g.len = (int)(m % 5);
        int64_t rem = n;
        for (int i = 0; i + 1 < g.len; i++) {
            int64_t divs[64];
            int nd = 0;
            for (int64_t q = 1; q <= rem && nd < 64; q++)
                if (rem % q == 0)
                    divs[nd++] = q;
            g.d[i] = divs[u8() % (unsigned)nd];
            rem /= g.d[i];
        }
        if (g.len > 0)
            g.d[g.len - 1] = rem;
        unsigned b = u8();
        if ((b & 0x80) && g.len > 0)
            g.d[b % (unsigned)g.len] = -1;
    } else {
        rd_shape(&g);
        unsigned b = u8();
        if ((b & 1) && g.len >= 1 && g.len <= 9)
            g.d[0] = -1;
        if ((b & 2) && g.len >= 2 && g.len <= 9)
            g.d[1] = -1;
    }
    int dst = rd_dst();
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s, len %d [%lld,%lld,%lld,..]) -> s%d\n", pc, names[cls], s1, g.len, (long long)g.d[0],
          (long long)g.d[1], (long long)g.d[2], dst);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[1] = { { t, (td_dtype)cls } };
    check_args(&e, args, 1);
    e.diff = true;
    if (t)
        e.res.zeros = t->zeros;
    if (g.null_ptr && g.len > 0)
        e.errs |= E(TD_E_NULL);
    if (g.len < 0 || g.len > TD_MAX_DIMS) {
        e.errs |= ES_BADSIZE;
    } else {
        int infer = -1;
        uint64_t known = 1;
        bool bad = false;
        for (int i = 0; i < g.len; i++) {
            if (g.d[i] == -1) {
                if (infer >= 0)
                    bad = true;
                infer = i;
            } else if (g.d[i] < 1) {
                bad = true;
            } else {
                known = sat_mul(known, (uint64_t)g.d[i]);
            }
        }
        e.res.s.nd = g.len;
        memcpy(e.res.s.d, g.d, sizeof(int64_t) * (size_t)g.len);
        if (bad)
            e.errs |= ES_BADSIZE;
        else if (t && infer >= 0 && (uint64_t)n % known != 0)
            e.errs |= E(TD_E_SHAPE);
        else if (t && infer >= 0)
            e.res.s.d[infer] = n / (int64_t)known;
        else if (t && known != (uint64_t)n)
            e.errs |= E(TD_E_SHAPE);
    }
    const int64_t *p = shape_ptr(&g);
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_reshape(H(a), p, g.len, &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_reshape(H(a), p, g.len, &out)); break;
    default: RUN(names[cls], e, dst, td_bool_reshape(H(a), p, g.len, &out)); break;
    }
}

static void op_swap_dims(void)
{
    static const char *const names[3] = { "float_swap_dims", "int_swap_dims", "bool_swap_dims" };
    int cls;
    int a = rd_class_operand(&cls);
    const mtensor *t = T(a);
    int nd = t ? t->s.nd : 2;
    int64_t d0 = rd_dim(nd), d1 = rd_dim(nd);
    int dst = rd_dst();
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s, %lld, %lld) -> s%d\n", pc, names[cls], s1, (long long)d0, (long long)d1, dst);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[1] = { { t, (td_dtype)cls } };
    check_args(&e, args, 1);
    e.diff = true;
    if (t) {
        e.res.zeros = t->zeros;
        e.res.s = t->s;
        int k0, k1;
        if (!norm_dim(d0, nd, &k0) || !norm_dim(d1, nd, &k1)) {
            e.errs |= E(TD_E_RANGE);
        } else if (nd > 0) {
            e.res.s.d[k0] = t->s.d[k1];
            e.res.s.d[k1] = t->s.d[k0];
        }
    }
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_swap_dims(H(a), d0, d1, &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_swap_dims(H(a), d0, d1, &out)); break;
    default: RUN(names[cls], e, dst, td_bool_swap_dims(H(a), d0, d1, &out)); break;
    }
}

/* dim i of the result is dim perm[i] of a: perm is a permutation of 0..nd-1. */
static void op_permute(void)
{
    static const char *const names[3] = { "float_permute", "int_permute", "bool_permute" };
    int cls;
    int a = rd_class_operand(&cls);
    const mtensor *t = T(a);
    int nd = t ? t->s.nd : 0;
    int64_t perm[TD_MAX_DIMS + 2];
    int len = nd;
    for (int i = 0; i < nd; i++)
        perm[i] = i;
    for (int i = nd - 1; i > 0; i--) {
        int j = (int)(u8() % (unsigned)(i + 1));
        int64_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    unsigned mb = u8();
    if (mb >= 0xD0) {
        int i = nd > 0 ? (int)((mb >> 3) % (unsigned)nd) : 0;
        switch (mb & 7) {
        case 0: if (nd > 1) perm[i] = perm[(i + 1) % nd]; break;
        case 1: if (nd > 0) perm[i] = nd; break;
        case 2: if (nd > 0) perm[i] = -1; break;
        case 3: perm[len] = 0; len++; break;
        case 4: if (len > 0) len--; break;
        default: if (nd > 0) perm[i] = INT64_MIN; break;
        }
    }
    int dst = rd_dst();
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s, len %d) -> s%d\n", pc, names[cls], s1, len, dst);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[1] = { { t, (td_dtype)cls } };
    check_args(&e, args, 1);
    e.diff = true;
    if (t) {
        e.res.zeros = t->zeros;
        if (len != nd) {
            e.errs |= E(TD_E_SHAPE) | E(TD_E_INVALID);
        } else {
            bool seen[TD_MAX_DIMS] = { false };
            e.res.s.nd = nd;
            for (int i = 0; i < len; i++) {
                /* a negative entry counts from the end */
                const int64_t p = perm[i] < 0 && perm[i] >= -nd ? perm[i] + nd : perm[i];
                if (p < 0 || p >= nd) {
                    e.errs |= E(TD_E_RANGE);
                    continue;
                }
                if (seen[p])
                    e.errs |= E(TD_E_INVALID);
                seen[p] = true;
                e.res.s.d[i] = t->s.d[p];
            }
        }
    }
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_permute(H(a), perm, len, &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_permute(H(a), perm, len, &out)); break;
    default: RUN(names[cls], e, dst, td_bool_permute(H(a), perm, len, &out)); break;
    }
}

/* expand: aligned right, size-1 dims repeat, -1 keeps a size, new dims go in front (no -1 there). */
static void op_expand(void)
{
    static const char *const names[3] = { "float_expand", "int_expand", "bool_expand" };
    int cls;
    int a = rd_class_operand(&cls);
    const mtensor *t = T(a);
    int nd = t ? t->s.nd : 0;
    gshape g;
    memset(&g, 0, sizeof g);
    unsigned m = u8();
    if (m < 0xC0) {
        int extra = (int)(m % 3);
        if (nd + extra > TD_MAX_DIMS)
            extra = TD_MAX_DIMS - nd;
        g.len = nd + extra;
        for (int i = 0; i < extra; i++)
            g.d[i] = 1 + u8() % 3;
        for (int i = 0; i < nd; i++) {
            unsigned b = u8();
            int64_t have = t->s.d[i];
            g.d[extra + i] = b % 4 == 0 ? -1 : have == 1 ? 1 + b % 4 : have;
        }
        unsigned mb = u8();
        if (mb >= 0xE0 && g.len > 0) {
            /* (not 0: a 0 is a valid size, but the model follows no empty tensors; see rd_shape) */
            static const int64_t bad[4] = { -2, -1, 7, INT64_C(1) << 41 };
            g.d[(mb >> 2) % (unsigned)g.len] = bad[mb & 3];
        }
    } else {
        rd_shape(&g);
    }
    int dst = rd_dst();
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s, len %d [%lld,%lld,%lld,..]) -> s%d\n", pc, names[cls], s1, g.len, (long long)g.d[0],
          (long long)g.d[1], (long long)g.d[2], dst);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[1] = { { t, (td_dtype)cls } };
    check_args(&e, args, 1);
    e.diff = true;
    if (g.null_ptr && g.len > 0)
        e.errs |= E(TD_E_NULL);
    if (t) {
        e.res.zeros = t->zeros;
        if (g.len < nd || g.len > TD_MAX_DIMS) {
            e.errs |= ES_BADSIZE;
        } else {
            int off = g.len - nd;
            uint64_t cnt = 1;
            bool bad = false;
            for (int i = 0; i < g.len; i++) {
                bool old = i >= off;
                int64_t have = old ? t->s.d[i - off] : 0, want = g.d[i];
                if (want == -1) {
                    if (!old)
                        bad = true;
                    want = have;
                }
                if (want < 1 && !bad) {
                    bad = true;
                } else if (old && have != 1 && have != want) {
                    e.errs |= E(TD_E_SHAPE);
                }
                e.res.s.d[i] = want;
                if (want >= 1)
                    cnt = sat_mul(cnt, (uint64_t)want);
            }
            e.res.s.nd = g.len;
            if (bad)
                e.errs |= ES_BADSIZE;
            else
                size_check(&e, cnt);
        }
    }
    const int64_t *p = shape_ptr(&g);
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_expand(H(a), p, g.len, &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_expand(H(a), p, g.len, &out)); break;
    default: RUN(names[cls], e, dst, td_bool_expand(H(a), p, g.len, &out)); break;
    }
}

/* Ranges [starts[i], ends[i]) over the first k dims. */
typedef struct granges {
    int slen, elen;
    int64_t starts[TD_MAX_DIMS + 2], ends[TD_MAX_DIMS + 2];
} granges;

static void rd_ranges(granges *r, const mshape *s)
{
    memset(r, 0, sizeof *r);
    unsigned m = u8();
    int nd = s ? s->nd : 0;
    int k = m >= 0xF0 ? nd + 1 : (int)(m % (unsigned)(nd + 1));
    for (int i = 0; i < k; i++) {
        int64_t d = (s && i < nd && s->d[i] > 0) ? s->d[i] : 1;
        unsigned sb = u8(), eb = u8();
        r->starts[i] = (int64_t)(sb % (uint64_t)d);
        r->ends[i] = r->starts[i] + 1 + (int64_t)(eb % (uint64_t)(d - r->starts[i]));
    }
    r->slen = r->elen = k;
    unsigned mb = u8();
    if (mb >= 0xD0) {
        int i = k > 0 ? (int)((mb >> 3) % (unsigned)k) : 0;
        int64_t d = (s && i < nd) ? s->d[i] : 1;
        switch (mb & 7) {
        case 0: if (k) r->ends[i] = r->starts[i] - 2; break;      /* end before start (an empty range
                                                                     is valid, but the model follows no
                                                                     empty tensors) */
        case 1: if (k) r->ends[i] = r->starts[i] - 1; break;      /* end before start */
        case 2: if (k) r->ends[i] = d + 1; break;                 /* past the end */
        case 3: if (k) r->starts[i] = -1; break;                  /* negative */
        case 4: r->starts[k] = 0; r->ends[k] = 1; r->slen = k + 1; break; /* more starts than ends */
        case 5: if (k) r->elen = k - 1; break;                    /* fewer ends */
        case 6: if (k) r->starts[i] = INT64_MIN; break;
        default: if (k) r->ends[i] = INT64_MAX; break;
        }
    }
}

/* The slice rule; fills out with the slice's shape. */
static void model_ranges(expect *e, const mshape *s, const granges *r, mshape *out)
{
    if (r->slen != r->elen)
        e->errs |= E(TD_E_SHAPE) | E(TD_E_INVALID) | E(TD_E_RANGE);
    int k = r->slen < r->elen ? r->slen : r->elen;
    if (k > s->nd)
        e->errs |= E(TD_E_RANGE) | E(TD_E_SHAPE) | E(TD_E_INVALID);
    *out = *s;
    for (int i = 0; i < k && i < s->nd; i++) {
        /* a negative bound counts from the end of its dim */
        const int64_t st = r->starts[i] < 0 && r->starts[i] >= -s->d[i] ? r->starts[i] + s->d[i] : r->starts[i];
        const int64_t en = r->ends[i] < 0 && r->ends[i] >= -s->d[i] ? r->ends[i] + s->d[i] : r->ends[i];
        if (st < 0 || en > s->d[i] || st > en)
            e->errs |= E(TD_E_RANGE);
        else
            out->d[i] = en - st;
    }
}

static void trace_ranges(const granges *r)
{
    if (!trace_on)
        return;
    trace("    ranges (%d starts, %d ends):", r->slen, r->elen);
    for (int i = 0; i < r->slen || i < r->elen; i++)
        trace(" [%lld,%lld)", (long long)r->starts[i], (long long)r->ends[i]);
    trace("\n");
}

static void op_slice(void)
{
    static const char *const names[3] = { "float_slice", "int_slice", "bool_slice" };
    int cls;
    int a = rd_class_operand(&cls);
    const mtensor *t = T(a);
    granges r;
    rd_ranges(&r, t ? &t->s : NULL);
    int dst = rd_dst();
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s) -> s%d\n", pc, names[cls], s1, dst);
    trace_ranges(&r);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[1] = { { t, (td_dtype)cls } };
    check_args(&e, args, 1);
    e.diff = true;
    if (t) {
        model_ranges(&e, &t->s, &r, &e.res.s);
        e.res.zeros = t->zeros == ZS_NONZERO ? ZS_NONZERO : ZS_UNKNOWN;
    }
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_slice(H(a), r.starts, r.slen, r.ends, r.elen, &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_slice(H(a), r.starts, r.slen, r.ends, r.elen, &out)); break;
    default: RUN(names[cls], e, dst, td_bool_slice(H(a), r.starts, r.slen, r.ends, r.elen, &out)); break;
    }
}

/* a with its slice [starts, ends) replaced by value, whose shape is the slice's. */
static void op_slice_assign(void)
{
    static const char *const names[3] = { "float_slice_assign", "int_slice_assign", "bool_slice_assign" };
    int cls;
    int a = rd_class_operand(&cls);
    int v = rd_operand(cls);
    const mtensor *t = T(a), *val = T(v);
    granges r;
    unsigned mode = u8();
    if (mode < 0x80 && t && val && t->s.nd == val->s.nd) {
        /* ranges that fit value where they can */
        memset(&r, 0, sizeof r);
        r.slen = r.elen = t->s.nd;
        for (int i = 0; i < t->s.nd; i++) {
            int64_t ad = t->s.d[i], vd = val->s.d[i];
            unsigned b = u8();
            r.starts[i] = vd <= ad ? (int64_t)(b % (uint64_t)(ad - vd + 1)) : 0;
            r.ends[i] = r.starts[i] + vd;
        }
    } else {
        rd_ranges(&r, t ? &t->s : NULL);
    }
    int dst = rd_dst();
    char s1[256], s2[256];
    describe(s1, sizeof s1, a);
    describe(s2, sizeof s2, v);
    trace("[%d] %s(%s, %s) -> s%d\n", pc, names[cls], s1, s2, dst);
    trace_ranges(&r);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[2] = { { t, (td_dtype)cls }, { val, (td_dtype)cls } };
    check_args(&e, args, 2);
    e.diff = true;
    if (t) {
        mshape sl;
        model_ranges(&e, &t->s, &r, &sl);
        if (val && (sl.nd != val->s.nd || memcmp(sl.d, val->s.d, sizeof(int64_t) * (size_t)sl.nd) != 0))
            e.errs |= E(TD_E_SHAPE);
        e.res.s = t->s;
        e.res.zeros = t->zeros == ZS_NONZERO && val && val->zeros == ZS_NONZERO ? ZS_NONZERO : ZS_UNKNOWN;
    }
    switch (cls) {
    case TD_F32:
        RUN(names[cls], e, dst, td_float_slice_assign(H(a), H(v), r.starts, r.slen, r.ends, r.elen, &out));
        break;
    case TD_I32:
        RUN(names[cls], e, dst, td_int_slice_assign(H(a), H(v), r.starts, r.slen, r.ends, r.elen, &out));
        break;
    default:
        RUN(names[cls], e, dst, td_bool_slice_assign(H(a), H(v), r.starts, r.slen, r.ends, r.elen, &out));
        break;
    }
}

/* cat along dim: one tensor at least, same dims count, equal sizes except along dim. */
static void op_cat(void)
{
    static const char *const names[3] = { "float_cat", "int_cat", "bool_cat" };
    unsigned cb = u8();
    int cls = cb < 0xC0 ? -1 : (int)((cb - 0xC0) % 3);
    unsigned nb = u8();
    bool null_xs = nb >= 0xF8;
    int n = null_xs ? 2 : (int)(nb % 5);
    int xs[4];
    for (int i = 0; i < n; i++)
        xs[i] = rd_operand(cls);
    if (cls < 0)
        cls = (n > 0 && T(xs[0])) ? (int)T(xs[0])->dtype : TD_F32;
    const mtensor *t0 = n > 0 ? T(xs[0]) : NULL;
    int64_t dim = rd_dim(t0 ? t0->s.nd : 2);
    int dst = rd_dst();
    trace("[%d] %s(%d tensors%s, dim %lld) -> s%d\n", pc, names[cls], n, null_xs ? ", NULL array" : "",
          (long long)dim, dst);
    for (int i = 0; i < n && trace_on; i++) {
        char b[256];
        describe(b, sizeof b, xs[i]);
        trace("    xs[%d] = %s\n", i, b);
    }
    expect e;
    exp_init(&e, (td_dtype)cls);
    e.diff = true;
    const td_tensor *hs[4];
    arg args[4];
    for (int i = 0; i < n; i++) {
        args[i].t = T(xs[i]);
        args[i].want = (td_dtype)cls;
        hs[i] = H(xs[i]);
    }
    if (null_xs) {
        e.errs |= E(TD_E_NULL);
    } else if (n < 1) {
        e.errs |= E(TD_E_INVALID);
    } else {
        check_args(&e, args, n);
        bool all = true;
        for (int i = 0; i < n; i++)
            all = all && args[i].t != NULL;
        int k;
        if (all && t0->s.nd == 0) {
            e.errs |= E(TD_E_SHAPE); /* 0-d tensors cannot be concatenated */
        } else if (all && !norm_dim(dim, t0->s.nd, &k)) {
            e.errs |= E(TD_E_RANGE);
        } else if (all) {
            e.res.s = t0->s;
            uint64_t along = (uint64_t)t0->s.d[k];
            int zs = t0->zeros;
            for (int i = 1; i < n; i++) {
                const mshape *s = &args[i].t->s;
                if (s->nd != t0->s.nd) {
                    e.errs |= E(TD_E_SHAPE);
                    continue;
                }
                for (int j = 0; j < s->nd; j++)
                    if (j != k && s->d[j] != t0->s.d[j])
                        e.errs |= E(TD_E_SHAPE);
                along += (uint64_t)s->d[k];
                if (args[i].t->zeros == ZS_HASZERO || zs == ZS_HASZERO)
                    zs = ZS_HASZERO;
                else if (args[i].t->zeros != ZS_NONZERO)
                    zs = ZS_UNKNOWN;
            }
            e.res.s.d[k] = (int64_t)along;
            e.res.zeros = zs;
            size_check(&e, count_of(&e.res.s));
        }
    }
    const td_tensor *const *p = null_xs ? NULL : hs;
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_cat(p, n, dim, &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_cat(p, n, dim, &out)); break;
    default: RUN(names[cls], e, dst, td_bool_cat(p, n, dim, &out)); break;
    }
}

/* matmul over the last two dims (both >= 2 dims), batch dims broadcast; with ta (tb) a's (b's)
 * last two dims are read transposed: float_matmul_tn (float_matmul_nt). float_matmul also
 * takes 1-d operands as torch.matmul: a [k] as [1, k], b [k] as [k, 1], the added dims removed. */
static void matmul_model(const char *name, bool ta, bool tb)
{
    int a = rd_operand(TD_F32), b = rd_operand(TD_F32);
    int dst = rd_dst();
    char s1[256], s2[256];
    describe(s1, sizeof s1, a);
    describe(s2, sizeof s2, b);
    trace("[%d] %s(%s, %s) -> s%d\n", pc, name, s1, s2, dst);
    expect e;
    exp_init(&e, TD_F32);
    arg args[2] = { { T(a), TD_F32 }, { T(b), TD_F32 } };
    check_args(&e, args, 2);
    e.diff = true;
    const mtensor *ta_ = T(a), *tb_ = T(b);
    if (ta_ && tb_) {
        const bool plain = !ta && !tb;
        mshape sa = ta_->s, sb = tb_->s;
        const bool va = plain && sa.nd == 1, vb = plain && sb.nd == 1;
        if (va) { /* [k] -> [1, k] */
            sa.d[1] = sa.d[0];
            sa.d[0] = 1;
            sa.nd = 2;
        }
        if (vb) { /* [k] -> [k, 1] */
            sb.d[1] = 1;
            sb.nd = 2;
        }
        if (sa.nd < 2 || sb.nd < 2) {
            e.errs |= E(TD_E_SHAPE);
        } else {
            const int64_t *da = sa.d + sa.nd - 2, *db = sb.d + sb.nd - 2;
            int64_t m = da[ta ? 1 : 0], k = da[ta ? 0 : 1];
            int64_t k2 = db[tb ? 1 : 0], nn = db[tb ? 0 : 1];
            mshape ba = { .nd = sa.nd - 2 }, bb = { .nd = sb.nd - 2 }, batch;
            memcpy(ba.d, sa.d, sizeof(int64_t) * (size_t)ba.nd);
            memcpy(bb.d, sb.d, sizeof(int64_t) * (size_t)bb.nd);
            if (k != k2)
                e.errs |= E(TD_E_SHAPE);
            if (!broadcast(&ba, &bb, &batch)) {
                e.errs |= E(TD_E_SHAPE);
            } else {
                e.res.s = batch;
                e.res.s.nd = batch.nd;
                if (!va)
                    e.res.s.d[e.res.s.nd++] = m;
                if (!vb)
                    e.res.s.d[e.res.s.nd++] = nn;
                size_check(&e, count_of(&e.res.s));
                if (!e.errs && (int64_t)count_of(&batch) * m * nn * k > MAX_MACS)
                    e.skip = true;
            }
        }
    }
    if (ta)
        RUN(name, e, dst, td_float_matmul_tn(H(a), H(b), &out));
    else if (tb)
        RUN(name, e, dst, td_float_matmul_nt(H(a), H(b), &out));
    else
        RUN(name, e, dst, td_float_matmul(H(a), H(b), &out));
}

static void op_matmul(void)
{
    matmul_model("float_matmul", false, false);
}

static void op_matmul_t(void)
{
    if (u8() % 2 == 0)
        matmul_model("float_matmul_nt", false, true);
    else
        matmul_model("float_matmul_tn", true, false);
}

static void op_to_device(void)
{
    static const char *const names[3] = { "float_to_device", "int_to_device", "bool_to_device" };
    int cls;
    int a = rd_class_operand(&cls);
    int d = rd_dev();
    int dst = rd_dst();
    const mtensor *t = T(a);
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] %s(%s, %s) -> s%d\n", pc, names[cls], s1, d < 0 ? "NULL" : dev_name[d], dst);
    expect e;
    exp_init(&e, (td_dtype)cls);
    arg args[1] = { { t, (td_dtype)cls } };
    check_args(&e, args, 1);
    if (d < 0)
        e.errs |= E(TD_E_NULL);
    if (t) {
        e.res.s = t->s;
        e.res.zeros = t->zeros;
    }
    if (d >= 0) {
        e.res.kind = dev_kind[d];
        if (dev_kind[d] == TD_BACKEND_AUTODIFF) {
            e.res.ctx = dev_ctx[d]; /* made on an autodiff device */
            e.diff = true;          /* tracked when a tracked float moves between autodiff devices */
        } else if (t && t->kind == TD_BACKEND_AUTODIFF) {
            e.res.ctx = dev_ctx[0]; /* leaving autodiff: a plain tensor */
            e.np = 0;
        } else {
            /* plain to plain: the docs do not say whether the copy keeps a's context */
            e.ctx_either = true;
            e.ctx2 = dev_ctx[0];
        }
    }
    const td_tensor *h = H(a);
    switch (cls) {
    case TD_F32: RUN(names[cls], e, dst, td_float_to_device(h, D(d), &out)); break;
    case TD_I32: RUN(names[cls], e, dst, td_int_to_device(h, D(d), &out)); break;
    default: RUN(names[cls], e, dst, td_bool_to_device(h, D(d), &out)); break;
    }
}

static void op_require_grad(void)
{
    int a = rd_operand(TD_F32);
    const mtensor *ct = T(a);
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] require_grad(%s)\n", pc, s1);
    cur_op = "require_grad";
    expect e;
    exp_init(&e, TD_F32);
    if (ct == NULL) {
        e.errs |= E(TD_E_NULL);
    } else if (ct->kind != TD_BACKEND_AUTODIFF || ct->dtype != TD_F32) {
        e.errs |= E(TD_E_AUTODIFF);
    } else {
        if (!ct->ctx.enabled)
            e.errs |= E(TD_E_AUTODIFF_CONTEXT);
        if (ct->node >= 0 && !nodes[ct->node].leaf)
            e.errs |= E(TD_E_AUTODIFF); /* not a leaf */
    }
    arm();
    td_status st = td_require_grad(H(a));
    disarm();
    trace("    -> %s\n", td_status_name(st));
    if (!check_status(st, &e))
        return;
    mtensor *t = &pool[slot[a]];
    if (t->node < 0)
        t->node = new_node(true, 0, NULL);
    verify(t->h, t, NULL);
}

/* The nodes backward would walk from root (through parents), in mark[]. */
static void reach(int root, bool *mark)
{
    static int stack[MAX_NODES];
    int top = 0;
    memset(mark, 0, sizeof(bool) * (size_t)nnodes);
    mark[root] = true;
    stack[top++] = root;
    while (top > 0) {
        int x = stack[--top];
        if (nodes[x].released && !nodes[x].leaf)
            continue; /* a backward dropped its edges */
        for (int i = 0; i < nodes[x].np; i++) {
            int p = nodes[x].parents[i];
            if (!mark[p]) {
                mark[p] = true;
                stack[top++] = p;
            }
        }
    }
}

/* mode & 7: 0, 7 td_backward; 1 td_backward_seeded; td_backward_ex with 2 NULL options,
 * 3 no seed, 4 a seed, 5 no seed and retain_graph, 6 a seed and retain_graph. */
static void op_backward(void)
{
    static bool mark[MAX_NODES];
    static const char *const names[8] = { "backward", "backward_seeded", "backward_ex", "backward_ex",
                                          "backward_ex", "backward_ex", "backward_ex", "backward" };
    unsigned mode = u8() % 8;
    bool seeded = mode == 1 || mode == 4 || mode == 6, retain = mode == 5 || mode == 6;
    int r = rd_operand(TD_F32);
    int s = seeded ? rd_operand(TD_F32) : -1;
    int gs = (int)(u8() % NGRADS);
    const mtensor *root = T(r), *seed = T(s);
    if (mode == 4 || mode == 6)
        seeded = seed != NULL; /* td_backward_ex: a NULL seed is a seed of ones */
    char s1[256], s2[256];
    describe(s1, sizeof s1, r);
    describe(s2, sizeof s2, s);
    trace("[%d] %s(%s%s%s%s) -> g%d\n", pc, names[mode], s1, seeded ? ", seed " : "", seeded ? s2 : "",
          retain ? ", retain_graph" : mode == 2 ? ", NULL options" : "", gs);
    cur_op = names[mode];
    expect e;
    exp_init(&e, TD_F32);
    if (root == NULL) {
        e.errs |= E(TD_E_NULL);
    } else if (root->kind != TD_BACKEND_AUTODIFF || root->dtype != TD_F32) {
        e.errs |= E(TD_E_AUTODIFF);
    } else {
        if (!root->ctx.enabled)
            e.errs |= E(TD_E_AUTODIFF_CONTEXT);
        if (root->node < 0)
            e.errs |= E(TD_E_AUTODIFF); /* nothing required a gradient */
        if (!seeded && numel_of(&root->s) != 1)
            e.errs |= E(TD_E_AUTODIFF); /* a one-element loss, or a seed */
    }
    if (seeded) {
        if (seed == NULL) {
            e.errs |= E(TD_E_NULL);
        } else {
            if (seed->dtype != TD_F32)
                e.errs |= E(TD_E_SHAPE) | E(TD_E_KIND) | E(TD_E_DTYPE);
            if (root && (seed->s.nd != root->s.nd ||
                         memcmp(seed->s.d, root->s.d, sizeof(int64_t) * (size_t)seed->s.nd) != 0))
                e.errs |= E(TD_E_SHAPE);
            if (seed->kind == TD_BACKEND_AUTODIFF && seed->dtype == TD_F32 && !seed->ctx.enabled)
                e.maybe |= E(TD_E_AUTODIFF_CONTEXT);
        }
    }
    /* The graph behind root: a released node in it (an earlier backward without
     * retain_graph went through it) makes backward fail before it changes anything. */
    int rn = root ? root->node : -1;
    bool unsure = false;
    if (rn >= 0) {
        reach(rn, mark);
        for (int i = 0; i < nnodes; i++) {
            if (!mark[i] || nodes[i].leaf)
                continue;
            if (nodes[i].released)
                e.errs |= E(TD_E_AUTODIFF);
            else if (nodes[i].maybe_released)
                unsure = true;
        }
        if (unsure) /* an earlier backward failed after starting, maybe */
            e.maybe |= E(TD_E_AUTODIFF);
    }
    td_grads *g = (td_grads *)(void *)sentinel_storage;
    td_backward_options opt = { .seed = seed ? seed->h : NULL, .retain_graph = retain };
    const td_tensor *rh = root ? root->h : NULL;
    arm();
    td_status st;
    if (mode == 1)
        st = td_backward_seeded(rh, seed ? seed->h : NULL, &g);
    else if (mode == 0 || mode == 7)
        st = td_backward(rh, &g);
    else
        st = td_backward_ex(rh, mode == 2 ? NULL : &opt, &g);
    disarm();
    trace("    -> %s\n", td_status_name(st));
    if (!check_status(st, &e)) {
        if (g != NULL)
            fail("returned %s but *out is not NULL", td_status_name(st));
        if (rn >= 0 && !e.errs) /* it may have failed after starting: the graph may be gone */
            for (int i = 0; i < nnodes; i++)
                if (mark[i] && !nodes[i].leaf)
                    nodes[i].maybe_released = true;
        return;
    }
    if (g == NULL || (void *)g == (void *)sentinel_storage)
        fail("returned TD_OK without a gradient set");
    mgrads *mg = &grads[gs];
    td_grads_release(mg->h);
    memset(mg, 0, sizeof *mg);
    mg->h = g;
    mg->unknown = unsure;
    if (seeded && seed->kind == TD_BACKEND_CPU) {
        mg->seed_ctx_any = true;
        mg->seed_ctx = seed->ctx;
    }
    for (int i = 0; i < nnodes; i++) {
        if (!mark[i])
            continue;
        if (nodes[i].leaf)
            mg->has[i / 64] |= UINT64_C(1) << (i % 64);
        else if (!retain)
            nodes[i].released = true;
        else
            nodes[i].maybe_released = false; /* it went through: the graph is whole */
    }
}

static void op_grads_get(void)
{
    int gs = (int)(u8() % NGRADS);
    int a = rd_operand(TD_F32);
    int dst = rd_dst();
    const mtensor *t = T(a);
    mgrads *mg = &grads[gs];
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] grads_get(g%d%s, %s) -> s%d\n", pc, gs, mg->h ? "" : " NULL", s1, dst);
    cur_op = "grads_get";
    expect e;
    exp_init(&e, TD_F32);
    if (mg->h == NULL || t == NULL)
        e.errs |= E(TD_E_NULL);
    bool has = t && t->node >= 0 && nodes[t->node].leaf && (mg->has[t->node / 64] >> (t->node % 64) & 1);
    td_tensor *out = SENTINEL;
    arm();
    td_status st = td_grads_get(mg->h, t ? t->h : NULL, &out);
    disarm();
    trace("    -> %s %s\n", td_status_name(st), st == TD_OK && out ? "a gradient" : "");
    if (!check_status(st, &e)) {
        if (out != NULL)
            fail("returned %s but *out is not NULL", td_status_name(st));
        return;
    }
    if (out == SENTINEL)
        fail("returned TD_OK without setting *out");
    if (out == NULL) {
        if (has && !mg->unknown)
            fail("no gradient for a leaf that took part in the loss");
        return;
    }
    if (!has && !mg->unknown)
        fail("a gradient for a tensor that is no leaf of the loss");
    /* A tensor of the inner backend with the leaf's shape. */
    e.res.s = t->s;
    e.res.kind = TD_BACKEND_CPU;
    e.res.ctx = dev_ctx[0];
    if (mg->seed_ctx_any) {
        e.ctx_either = true;
        e.ctx2 = mg->seed_ctx;
    }
    finish_ex(st, out, &e, dst, true);
}

static void op_release(void)
{
    unsigned b = u8();
    if (b & 8) {
        int gs = (int)(b & 1);
        trace("[%d] grads_release(g%d)\n", pc, gs);
        td_grads_release(grads[gs].h);
        memset(&grads[gs], 0, sizeof grads[gs]);
        return;
    }
    int s = (int)(b & 7);
    trace("[%d] release(s%d)\n", pc, s);
    if (slot[s] < 0) {
        td_tensor_release(NULL); /* ignored */
        return;
    }
    int r = slot[s];
    slot[s] = -1;
    drop_ref(r);
}

static void op_detach(void)
{
    int a = rd_operand(TD_F32);
    int dst = rd_dst();
    const mtensor *t = T(a);
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] detach(%s) -> s%d\n", pc, s1, dst);
    expect e;
    exp_init(&e, t ? t->dtype : TD_F32);
    if (t == NULL) {
        e.errs |= E(TD_E_NULL);
    } else {
        if (t->kind != TD_BACKEND_AUTODIFF)
            e.errs |= E(TD_E_AUTODIFF);
        e.res.kind = TD_BACKEND_AUTODIFF;
        e.res.ctx = t->ctx;
        e.res.s = t->s;
        e.res.zeros = t->zeros;
    }
    RUN("detach", e, dst, td_detach(H(a), &out));
}

static void op_into_data(void)
{
    int cls;
    int a = rd_class_operand(&cls);
    int lenmode = (int)(u8() % 6);
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] into_data(%s as %s, lenmode %d)\n", pc, s1, dtype_name((td_dtype)cls), lenmode);
    read_back(T(a), cls, lenmode);
}

static void op_set_context(void)
{
    int a = rd_operand(-1);
    unsigned m = u8() % 5;
    static const td_autodiff_context ctxs[5] = { { false, TD_CHECKPOINT_NONE }, { true, TD_CHECKPOINT_NONE },
                                                 { true, TD_CHECKPOINT_BALANCED }, { false, TD_CHECKPOINT_BALANCED },
                                                 { true, (td_checkpoint)5 } };
    char s1[256];
    describe(s1, sizeof s1, a);
    trace("[%d] set_autodiff_context(%s, mode %u)\n", pc, s1, m);
    cur_op = "tensor_set_autodiff_context";
    expect e;
    exp_init(&e, TD_F32);
    if (T(a) == NULL)
        e.errs |= E(TD_E_NULL);
    if (m == 4)
        e.errs |= E(TD_E_INVALID);
    td_status st = td_tensor_set_autodiff_context(H(a), ctxs[m]);
    if (!check_status(st, &e))
        return;
    mtensor *t = &pool[slot[a]];
    t->ctx = ctxs[m];
    verify(t->h, t, NULL);
}

static void op_dup(void)
{
    int a = (int)(u8() % NSLOTS);
    int dst = rd_dst();
    trace("[%d] retain(s%d) -> s%d\n", pc, a, dst);
    cur_op = "tensor_retain";
    expect e;
    exp_init(&e, TD_F32);
    if (T(a) == NULL)
        e.errs |= E(TD_E_NULL);
    td_status st = td_tensor_retain(H(a));
    if (!check_status(st, &e))
        return;
    put_slot(dst, slot[a]);
}

static void op_sync(void)
{
    int d = rd_dev();
    trace("[%d] sync(%s)\n", pc, d < 0 ? "NULL" : dev_name[d]);
    cur_op = "sync";
    expect e;
    exp_init(&e, TD_F32);
    if (d < 0)
        e.errs |= E(TD_E_NULL);
    arm();
    td_status st = td_sync(D(d));
    disarm();
    check_status(st, &e);
}

/* Probes: inputs that exist (a few MiB) whose broadcast result cannot: the call must fail
 * and allocate nothing that big. */
static td_tensor *probe_input(int d, td_dtype dt, int64_t k, int pos, int nd)
{
    int64_t shape[4] = { 1, 1, 1, 1 };
    shape[pos] = k;
    td_tensor *t = NULL;
    td_status st;
    cur_op = "probe input";
    if (dt == TD_F32) {
        st = td_float_zeros(dev[d], shape, nd, &t);
    } else if (dt == TD_I32) {
        st = td_int_zeros(dev[d], shape, nd, &t); /* zeros: a memset, cheap at this size */
    } else {
        bool *data = calloc((size_t)k, sizeof *data);
        if (data == NULL)
            return NULL;
        st = td_bool_from_data(dev[d], data, shape, nd, &t);
        free(data);
    }
    if (st != TD_OK)
        fail("could not make a probe input of %lld elements: %s", (long long)k, td_status_name(st));
    return t;
}

static void probe_expect(const char *name, td_status st, td_tensor *out)
{
    cur_op = name;
    expect e;
    exp_init(&e, TD_F32);
    e.errs = ES_HUGE;
    trace("    %s -> %s\n", name, td_status_name(st));
    if (check_status(st, &e))
        td_tensor_release(out);
    else if (out != NULL)
        fail("returned %s but *out is not NULL", td_status_name(st));
}

/* A chain of DEEP_CHAIN memory-bound nodes under BALANCED, then backward: backward
 * recomputes what the formulas need along the whole chain. Must succeed. */
static void probe_deep_chain(void)
{
    static const int64_t one[1] = { 1 };
    td_device *ad = NULL;
    td_tensor *x = NULL, *y = NULL, *loss = NULL, *gx = NULL;
    td_grads *g = NULL;
    expect e;
    exp_init(&e, TD_F32);
    cur_op = "device_autodiff";
    if (td_device_autodiff(dev[0], TD_CHECKPOINT_BALANCED, &ad) != TD_OK)
        fail("cannot make an autodiff device");
    cur_op = "float_full";
    check_status(td_float_full(ad, one, 1, 0.5f, &x), &e);
    cur_op = "require_grad";
    check_status(td_require_grad(x), &e);
    td_tensor_retain(x);
    y = x;
    cur_op = "float_sin";
    for (int i = 0; i < DEEP_CHAIN; i++) {
        td_tensor *z = NULL;
        check_status(td_float_sin(y, &z), &e);
        td_tensor_release(y);
        y = z;
    }
    cur_op = "float_sum";
    check_status(td_float_sum(y, &loss), &e);
    cur_op = "backward (a deep BALANCED chain)";
    trace("    backward over %d nodes\n", DEEP_CHAIN + 1);
    check_status(td_backward(loss, &g), &e);
    cur_op = "grads_get";
    check_status(td_grads_get(g, x, &gx), &e);
    if (gx == NULL)
        fail("no gradient for the leaf of a deep chain");
    td_tensor_release(gx);
    td_grads_release(g);
    td_tensor_release(loss);
    td_tensor_release(y);
    td_tensor_release(x);
    td_device_release(ad);
}

static void op_probe(void)
{
    unsigned sub = u8() % 6;
    int d = rd_dev();
    if (d < 0)
        d = 0; /* never NULL here */
    trace("[%d] probe %u on %s\n", pc, sub, dev_name[d]);
    if (probes_left <= 0)
        return;
    probes_left--;
    const int64_t K21 = INT64_C(1) << 21, K14 = INT64_C(1) << 14;
    td_tensor *a = NULL, *b = NULL, *c = NULL, *out = SENTINEL;
    td_status st;
    switch (sub) {
    case 0: /* [K,1] + [1,K]: 2^42 elements */
        a = probe_input(d, TD_F32, K21, 0, 2);
        b = probe_input(d, TD_F32, K21, 1, 2);
        st = td_float_add(a, b, &out);
        probe_expect("float_add (huge broadcast)", st, out);
        break;
    case 1: /* mask_where over [K,1,1], [1,K,1], [1,1,K]: 2^42 */
        a = probe_input(d, TD_F32, K14, 0, 3);
        b = probe_input(d, TD_BOOL, K14, 1, 3);
        c = probe_input(d, TD_F32, K14, 2, 3);
        st = td_float_mask_where(a, b, c, &out);
        probe_expect("float_mask_where (huge broadcast)", st, out);
        break;
    case 2: /* the same with 2^21: 2^63 elements overflow int64 */
        a = probe_input(d, TD_I32, K21, 0, 3);
        b = probe_input(d, TD_BOOL, K21, 1, 3);
        c = probe_input(d, TD_I32, K21, 2, 3);
        st = td_int_mask_where(a, b, c, &out);
        probe_expect("int_mask_where (int64-overflowing broadcast)", st, out);
        break;
    case 3: /* matmul batch dims [K,1] and [1,K]: 2^42 products */
        a = probe_input(d, TD_F32, K21, 0, 4);
        b = probe_input(d, TD_F32, K21, 1, 4);
        st = td_float_matmul(a, b, &out);
        probe_expect("float_matmul (huge batch broadcast)", st, out);
        break;
    case 5:
        probe_deep_chain();
        break;
    default: { /* int_equal over [K,1] and [1,K] */
        a = probe_input(d, TD_I32, K21, 0, 2);
        b = probe_input(d, TD_I32, K21, 1, 2);
        st = td_int_equal(a, b, &out);
        probe_expect("int_equal (huge broadcast)", st, out);
        break;
    }
    }
    td_tensor_release(a);
    td_tensor_release(b);
    td_tensor_release(c);
}

static void op_drop_device(void)
{
    int which = 1 + (int)(u8() % (NDEV - 1));
    trace("[%d] device_release(%s)%s\n", pc, dev_name[which], dev[which] ? "" : ": already released");
    td_device_release(dev[which]);
    dev[which] = NULL;
}

/* ------------------------------------------------------------------ the driver */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One instruction (its opcode already read), then the checks every instruction ends with. */
static void step(unsigned op)
{
    bool keep_oom = false;
    oom_now = false;
    switch (op) {
    case OP_CREATE: op_create(); break;
    case OP_UNARY_FLOAT: op_unary_float(); break;
    case OP_UNARY_OTHER: op_unary_other(); break;
    case OP_BINARY_FLOAT: op_binary_float(); break;
    case OP_BINARY_INT: op_binary_int(); break;
    case OP_MASK: op_mask(); break;
    case OP_REDUCE_DIM: op_reduce_dim(); break;
    case OP_RESHAPE: op_reshape(); break;
    case OP_SWAP_DIMS: op_swap_dims(); break;
    case OP_PERMUTE: op_permute(); break;
    case OP_EXPAND: op_expand(); break;
    case OP_SLICE: op_slice(); break;
    case OP_SLICE_ASSIGN: op_slice_assign(); break;
    case OP_CAT: op_cat(); break;
    case OP_MATMUL: op_matmul(); break;
    case OP_MATMUL_T: op_matmul_t(); break;
    case OP_TO_DEVICE: op_to_device(); break;
    case OP_REQUIRE_GRAD: op_require_grad(); break;
    case OP_BACKWARD: op_backward(); break;
    case OP_GRADS_GET: op_grads_get(); break;
    case OP_RELEASE: op_release(); break;
    case OP_DETACH: op_detach(); break;
    case OP_INTO_DATA: op_into_data(); break;
    case OP_SET_CONTEXT: op_set_context(); break;
    case OP_DUP: op_dup(); break;
    case OP_OOM:
        oom_pending = (long)(u8() % 24);
        trace("[%d] the next call fails allocations after %ld\n", pc, oom_pending);
        keep_oom = true;
        break;
    case OP_SYNC: op_sync(); break;
    case OP_PROBE: op_probe(); break;
    default: op_drop_device(); break;
    }
    if (!keep_oom)
        oom_pending = -1;
    verify_all(op == OP_BACKWARD);
    pc++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    trace_on = getenv("FUZZ_API_TRACE") != NULL;
    cur_op = "device setup";
    if (td_device_open(TD_BACKEND_CPU, 0, &dev[0]) != TD_OK)
        fail("cannot open the cpu device");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (dev[0] == NULL)
        LLVMFuzzerInitialize(NULL, NULL);
    in_p = data;
    in_n = size;
    in_i = 0;
    memset(pool, 0, sizeof pool);
    for (int i = 0; i < NSLOTS; i++)
        slot[i] = -1;
    memset(grads, 0, sizeof grads);
    nnodes = 0;
    oom_pending = -1;
    probes_left = 1;
    const long live0 = td_testing_live_objects();
    trace("---- input of %zu bytes, %ld live objects\n", size, live0);
    cur_op = "device setup";
    for (int d = 1; d < NDEV; d++)
        if (td_device_autodiff(dev[0], dev_ctx[d].strategy, &dev[d]) != TD_OK)
            fail("cannot make the autodiff devices");

    for (pc = 0; in_i < in_n && pc < MAX_INSTR && nnodes < MAX_NODES - 1;) {
        unsigned op = u8() % OP_COUNT;
        if (op != OP_LOOP) {
            step(op);
            continue;
        }
        /* The next instruction, count times over the same bytes (one level: a loop
         * inside a loop is a no-op). */
        int count = 2 + (int)(u8() % 127);
        size_t at = in_i;
        trace("[%d] loop x%d\n", pc, count);
        for (int k = 0; k < count && pc < MAX_INSTR && nnodes < MAX_NODES - 1; k++) {
            in_i = at;
            unsigned inner = u8() % OP_COUNT;
            if (inner == OP_LOOP) {
                u8();
                break;
            }
            step(inner);
        }
        if (in_i == at) /* at the end of the input */
            break;
    }
    verify_all(true);

    /* Release everything: nothing may stay alive. */
    for (int i = 0; i < NSLOTS; i++)
        if (slot[i] >= 0) {
            int r = slot[i];
            slot[i] = -1;
            drop_ref(r);
        }
    for (int g = 0; g < NGRADS; g++) {
        td_grads_release(grads[g].h);
        grads[g].h = NULL;
    }
    for (int d = 1; d < NDEV; d++) {
        td_device_release(dev[d]);
        dev[d] = NULL;
    }
    const long live1 = td_testing_live_objects();
    cur_op = "end of input";
    if (live1 != live0)
        fail("%ld objects alive after releasing everything, %ld at the start: a leak", live1, live0);
    return 0;
}
