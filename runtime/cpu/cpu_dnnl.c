/* CPU backend: oneDNN (libdnnl) as the matmul (dnnl_sgemm) and conv2d engine, and the bf16 /
 * f16 matrix product (its matmul primitive), its primitives cached by shape. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <oneapi/dnnl/dnnl.h>

#include "cpu_internal.h"

/* At most this many convolution shapes keep their primitives; past it a call builds and
 * frees its own (a training loop has a handful of shapes). */
#define CACHE_MAX 128

/* One cached convolution: the primitive in oneDNN's preferred layouts, and the reorders
 * between those and our plain ones (NULL where the layouts agree). */
typedef struct conv_prim {
    int kind;
    int nthr;   /* the thread count it was made under (see conv_prim_get) */
    bool plain; /* the primitive on our layouts (no reorders) */
    td_cpu_conv_shape shape;
    dnnl_primitive_t prim;
    /* in[0], in[1]: the two inputs (fwd: src, weights; bwd data: diff_dst, weights; bwd
     * weights: src, diff_dst) into the primitive's layout; out: its result into ours */
    dnnl_primitive_t in_reorder[2], out_reorder;
    dnnl_memory_desc_t user_in[2], prim_in[2], user_out, prim_out, bias;
    size_t in_bytes[2], out_bytes, scratch_bytes;
    dnnl_memory_desc_t scratch;
} conv_prim;

/* One cached low-precision matmul primitive (td_cpu_dnnl_gemm_lowp), by types and shape. */
typedef struct gemm_prim {
    int in_type, out_type;
    bool tb;
    int64_t m, n, k;
    int nthr; /* the thread count it was made under (see conv_prim_get) */
    dnnl_primitive_t prim;
    dnnl_memory_desc_t a, b, c, scratch;
    size_t scratch_bytes;
    char impl[64]; /* oneDNN's implementation name, e.g. "brg:avx512_core_bf16" */
} gemm_prim;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dnnl_engine_t engine;   /* created once, under lock; freed at exit */
static dnnl_status_t engine_status = dnnl_success;
static conv_prim *cache[CACHE_MAX];
static int cached;
static gemm_prim *gemm_cache[CACHE_MAX];
static int gemm_cached;

static void conv_prim_free(conv_prim *c)
{
    if (c == NULL)
        return;
    dnnl_primitive_destroy(c->prim);
    dnnl_primitive_destroy(c->in_reorder[0]);
    dnnl_primitive_destroy(c->in_reorder[1]);
    dnnl_primitive_destroy(c->out_reorder);
    free(c);
}

void td_cpu_dnnl_release(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < cached; i++)
        conv_prim_free(cache[i]);
    cached = 0;
    for (int i = 0; i < gemm_cached; i++) {
        dnnl_primitive_destroy(gemm_cache[i]->prim);
        free(gemm_cache[i]);
    }
    gemm_cached = 0;
    if (engine != NULL)
        dnnl_engine_destroy(engine);
    engine = NULL;
    pthread_mutex_unlock(&lock);
}

static void at_exit(void)
{
    td_cpu_dnnl_release();
}

/* The engine, created on first use (lock held). */
static dnnl_engine_t get_engine(void)
{
    static bool registered;
    if (engine == NULL && engine_status == dnnl_success) {
        engine_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
        if (engine_status != dnnl_success)
            engine = NULL;
        else if (!registered) {
            registered = true;
            atexit(at_exit);
        }
    }
    return engine;
}

bool td_cpu_dnnl_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                       float *c)
{
    td_cpu_apply_threads(); /* oneDNN sizes its OpenMP team by this thread's ICV */
    return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, beta, c, n) ==
           dnnl_success;
}

const char *td_cpu_dnnl_isa(void)
{
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "no JIT ISA";
    }
}

void td_cpu_dnnl_version(char *buf, size_t cap)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, cap, "%d.%d.%d", v->major, v->minor, v->patch);
}

static bool same_shape(const conv_prim *c, int kind, int nthr, bool plain, const td_cpu_conv_shape *s)
{
    return c->kind == kind && c->nthr == nthr && c->plain == plain && memcmp(&c->shape, s, sizeof *s) == 0;
}

static bool want_plain(const td_cpu_conv_shape *s)
{
    const char *e = getenv("TD_DNNL_CONV_LAYOUT");
    if (e != NULL && strcmp(e, "plain") == 0)
        return true;
    if (e != NULL && strcmp(e, "any") == 0)
        return false;
    (void)s;
    return false;
}

/* A plain (row-major) descriptor of dims, or one oneDNN may lay out as it likes. */
static dnnl_status_t md_of(dnnl_memory_desc_t *md, int ndims, const int64_t *dims, bool any)
{
    static const dnnl_format_tag_t plain[] = { dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde };
    dnnl_dims_t d;
    for (int i = 0; i < ndims; i++)
        d[i] = dims[i];
    return dnnl_memory_desc_init_by_tag(md, ndims, d, dnnl_f32, any ? dnnl_format_tag_any : plain[ndims]);
}

/* The reorder from `from` to `to`, or NULL when they are the same layout. */
static dnnl_status_t reorder_of(dnnl_primitive_t *out, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to)
{
    *out = NULL;
    if (dnnl_memory_desc_equal(from, to))
        return dnnl_success;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, NULL);
    if (st == dnnl_success)
        st = dnnl_primitive_create(out, pd);
    dnnl_primitive_desc_destroy(pd);
    return st;
}

/* Builds the primitive of one convolution (lock held, engine made). */
static dnnl_status_t conv_prim_make(int kind, int nthr, bool plain, const td_cpu_conv_shape *s, conv_prim **out)
{
    *out = NULL;
    conv_prim *c = calloc(1, sizeof *c);
    if (c == NULL)
        return dnnl_out_of_memory;
    c->kind = kind;
    c->nthr = nthr;
    c->plain = plain;
    c->shape = *s;
    const bool grouped = s->groups > 1;
    const int64_t xd[4] = { s->n, s->c, s->h, s->w }, yd[4] = { s->n, s->o, s->oh, s->ow };
    const int64_t wd[5] = { s->groups, s->o / s->groups, s->c / s->groups, s->kh, s->kw };
    const int64_t wd4[4] = { s->o, s->c / s->groups, s->kh, s->kw };
    const int64_t bd[1] = { s->o };
    dnnl_memory_desc_t x_user, x_any, y_user, y_any, w_user, w_any;
    dnnl_status_t st = md_of(&x_user, 4, xd, false);
    if (st == dnnl_success) st = md_of(&x_any, 4, xd, !plain);
    if (st == dnnl_success) st = md_of(&y_user, 4, yd, false);
    if (st == dnnl_success) st = md_of(&y_any, 4, yd, !plain);
    if (st == dnnl_success) st = md_of(&w_user, grouped ? 5 : 4, grouped ? wd : wd4, false);
    if (st == dnnl_success) st = md_of(&w_any, grouped ? 5 : 4, grouped ? wd : wd4, !plain);
    if (st == dnnl_success) st = md_of(&c->bias, 1, bd, false);
    const dnnl_dims_t strides = { s->sh, s->sw }, dil = { s->dh - 1, s->dw - 1 }, pad = { s->ph, s->pw };
    /* oneDNN's output size is floor((h + pl + pr - (kh - 1) dh - 1) / sh) + 1, ours with
     * pr = pl: the same. */
    dnnl_primitive_attr_t attr = NULL;
    if (st == dnnl_success) st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success) st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_convolution_desc_t fwd_d, bwd_d;
    dnnl_primitive_desc_t fwd_pd = NULL, pd = NULL;
    if (st == dnnl_success)
        st = dnnl_dilated_convolution_forward_desc_init(&fwd_d, dnnl_forward_training, dnnl_convolution_direct, &x_any,
                                                        &w_any, &c->bias, &y_any, strides, dil, pad, pad);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&fwd_pd, &fwd_d, attr, engine, NULL);
    if (st == dnnl_success && kind == TD_CPU_CONV_FWD) {
        pd = fwd_pd;
        fwd_pd = NULL;
    } else if (st == dnnl_success && kind == TD_CPU_CONV_BWD_DATA) {
        st = dnnl_dilated_convolution_backward_data_desc_init(&bwd_d, dnnl_convolution_direct, &x_any, &w_any, &y_any,
                                                              strides, dil, pad, pad);
        if (st == dnnl_success)
            st = dnnl_primitive_desc_create(&pd, &bwd_d, attr, engine, fwd_pd);
    } else if (st == dnnl_success) {
        st = dnnl_dilated_convolution_backward_weights_desc_init(&bwd_d, dnnl_convolution_direct, &x_any, &w_any, NULL,
                                                                 &y_any, strides, dil, pad, pad);
        if (st == dnnl_success)
            st = dnnl_primitive_desc_create(&pd, &bwd_d, attr, engine, fwd_pd);
    }
    if (st == dnnl_success) {
        /* what each argument is, in our layout and in the primitive's */
        dnnl_query_t q_in[2], q_out;
        const dnnl_memory_desc_t *u_in[2], *u_out;
        if (kind == TD_CPU_CONV_FWD) {
            q_in[0] = dnnl_query_src_md, q_in[1] = dnnl_query_weights_md, q_out = dnnl_query_dst_md;
            u_in[0] = &x_user, u_in[1] = &w_user, u_out = &y_user;
        } else if (kind == TD_CPU_CONV_BWD_DATA) {
            q_in[0] = dnnl_query_diff_dst_md, q_in[1] = dnnl_query_weights_md, q_out = dnnl_query_diff_src_md;
            u_in[0] = &y_user, u_in[1] = &w_user, u_out = &x_user;
        } else {
            q_in[0] = dnnl_query_src_md, q_in[1] = dnnl_query_diff_dst_md, q_out = dnnl_query_diff_weights_md;
            u_in[0] = &x_user, u_in[1] = &y_user, u_out = &w_user;
        }
        for (int i = 0; i < 2; i++) {
            c->user_in[i] = *u_in[i];
            c->prim_in[i] = *dnnl_primitive_desc_query_md(pd, q_in[i], 0);
        }
        c->user_out = *u_out;
        c->prim_out = *dnnl_primitive_desc_query_md(pd, q_out, 0);
        c->scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        c->scratch_bytes = dnnl_memory_desc_get_size(&c->scratch);
        st = dnnl_primitive_create(&c->prim, pd);
    }
    for (int i = 0; i < 2 && st == dnnl_success; i++) {
        st = reorder_of(&c->in_reorder[i], &c->user_in[i], &c->prim_in[i]);
        c->in_bytes[i] = c->in_reorder[i] != NULL ? dnnl_memory_desc_get_size(&c->prim_in[i]) : 0;
    }
    if (st == dnnl_success) {
        st = reorder_of(&c->out_reorder, &c->prim_out, &c->user_out);
        c->out_bytes = c->out_reorder != NULL ? dnnl_memory_desc_get_size(&c->prim_out) : 0;
    }
    dnnl_primitive_desc_destroy(fwd_pd);
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) {
        conv_prim_free(c);
        return st;
    }
    *out = c;
    return dnnl_success;
}

/* The cached primitive of a shape and thread count, made on first use; *owned when it is not
 * cached (the cache is full) and the caller frees it. The thread count is part of the key:
 * oneDNN's convolutions split their work when the primitive is made, by the calling thread's
 * omp_get_max_threads() then, and run that many threads on every execution whatever the ICV
 * says later. Keyed by shape alone, a primitive made on a quiet machine kept running two
 * threads while td_cpu_threads() said one (a preempted caller, cpu_threads.c): both threads
 * spun in libgomp's barriers for 80% of the step's CPU time (perf record, bench_cnn under a
 * busy machine), and the step took 48 ms where one thread took 7. */
static dnnl_status_t conv_prim_get(int kind, const td_cpu_conv_shape *s, conv_prim **out, bool *owned)
{
    *owned = false;
    *out = NULL;
    const bool plain = want_plain(s);
    const int nthr = td_cpu_apply_threads(); /* the ICV the primitive is made under */
    pthread_mutex_lock(&lock);
    dnnl_status_t st = dnnl_success;
    if (get_engine() == NULL)
        st = engine_status != dnnl_success ? engine_status : dnnl_runtime_error;
    for (int i = 0; st == dnnl_success && i < cached; i++)
        if (same_shape(cache[i], kind, nthr, plain, s)) {
            *out = cache[i];
            break;
        }
    if (st == dnnl_success && *out == NULL) {
        st = conv_prim_make(kind, nthr, plain, s, out);
        if (st == dnnl_success) {
            if (cached < CACHE_MAX)
                cache[cached++] = *out;
            else
                *owned = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return st;
}

static const char *status_name(dnnl_status_t st)
{
    switch (st) {
    case dnnl_out_of_memory: return "out of memory";
    case dnnl_invalid_arguments: return "invalid arguments";
    case dnnl_unimplemented: return "unimplemented";
    case dnnl_runtime_error: return "runtime error";
    default: return "error";
    }
}

/* A memory object over our buffer (oneDNN reads inputs through it, never writes them). */
static dnnl_status_t wrap(dnnl_memory_t *m, const dnnl_memory_desc_t *md, const void *p)
{
    return dnnl_memory_create(m, md, engine, (void *)(uintptr_t)p);
}

static dnnl_status_t run(dnnl_stream_t stream, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *args)
{
    td_cpu_apply_threads(); /* oneDNN sizes its OpenMP team by this thread's ICV */
    dnnl_status_t st = dnnl_primitive_execute(p, stream, nargs, args);
    return st == dnnl_success ? dnnl_stream_wait(stream) : st;
}

static dnnl_status_t conv_exec(const conv_prim *c, const float *in0, const float *in1, const float *bias, float *out)
{
    const size_t a0 = (c->in_bytes[0] + 63) & ~(size_t)63, a1 = (c->in_bytes[1] + 63) & ~(size_t)63;
    const size_t ao = (c->out_bytes + 63) & ~(size_t)63;
    const size_t total = a0 + a1 + ao + c->scratch_bytes;
    /* The buffers from the cpu tensor pool: a fresh malloc of this size would be fresh pages
     * from the system, a page fault per 4 KiB on every call (in a small CNN's training step
     * that cost more than the convolutions). Aligned to 64 bytes by hand: a small block is
     * malloc's. */
    void *block = NULL;
    if (total > 0 && td_cpu_block_take(total + 64, &block) != TD_OK)
        return dnnl_out_of_memory;
    char *buf = total > 0 ? (char *)(((uintptr_t)block + 63) & ~(uintptr_t)63) : NULL;
    dnnl_memory_t u_in[2] = { NULL, NULL }, p_in[2] = { NULL, NULL }, u_out = NULL, p_out = NULL, m_bias = NULL,
                  m_scratch = NULL;
    dnnl_stream_t stream = NULL;
    const float *ins[2] = { in0, in1 };
    char *at[2] = { buf, buf + a0 };
    dnnl_status_t st = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
    for (int i = 0; i < 2 && st == dnnl_success; i++) {
        st = wrap(&u_in[i], &c->user_in[i], ins[i]);
        if (st == dnnl_success && c->in_reorder[i] != NULL) {
            st = wrap(&p_in[i], &c->prim_in[i], at[i]);
            const dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, u_in[i] }, { DNNL_ARG_TO, p_in[i] } };
            if (st == dnnl_success)
                st = run(stream, c->in_reorder[i], 2, args);
        }
    }
    if (st == dnnl_success)
        st = wrap(&u_out, &c->user_out, out);
    if (st == dnnl_success && c->out_reorder != NULL)
        st = wrap(&p_out, &c->prim_out, buf + a0 + a1);
    if (st == dnnl_success)
        st = wrap(&m_scratch, &c->scratch, c->scratch_bytes > 0 ? buf + a0 + a1 + ao : NULL);
    if (st == dnnl_success && c->kind == TD_CPU_CONV_FWD)
        st = wrap(&m_bias, &c->bias, bias);
    if (st == dnnl_success) {
        dnnl_memory_t i0 = p_in[0] != NULL ? p_in[0] : u_in[0], i1 = p_in[1] != NULL ? p_in[1] : u_in[1];
        dnnl_memory_t o = p_out != NULL ? p_out : u_out;
        dnnl_exec_arg_t args[5];
        int n = 0;
        if (c->kind == TD_CPU_CONV_FWD) {
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SRC, i0 };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_WEIGHTS, i1 };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, m_bias };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DST, o };
        } else if (c->kind == TD_CPU_CONV_BWD_DATA) {
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_DST, i0 };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_WEIGHTS, i1 };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_SRC, o };
        } else {
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SRC, i0 };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_DST, i1 };
            args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DIFF_WEIGHTS, o };
        }
        args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, m_scratch };
        st = run(stream, c->prim, n, args);
    }
    if (st == dnnl_success && c->out_reorder != NULL) {
        const dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, p_out }, { DNNL_ARG_TO, u_out } };
        st = run(stream, c->out_reorder, 2, args);
    }
    for (int i = 0; i < 2; i++) {
        dnnl_memory_destroy(u_in[i]);
        dnnl_memory_destroy(p_in[i]);
    }
    dnnl_memory_destroy(u_out);
    dnnl_memory_destroy(p_out);
    dnnl_memory_destroy(m_bias);
    dnnl_memory_destroy(m_scratch);
    dnnl_stream_destroy(stream);
    if (total > 0)
        td_cpu_block_give(block, total + 64);
    return st;
}

td_status td_cpu_dnnl_conv(const char *op, int kind, const td_cpu_conv_shape *s, const float *in0, const float *in1,
                           const float *bias, float *out)
{
    conv_prim *c = NULL;
    bool owned = false;
    dnnl_status_t st = conv_prim_get(kind, s, &c, &owned);
    if (st == dnnl_unimplemented || st == dnnl_invalid_arguments)
        return TD_E_UNSUPPORTED; /* not a shape oneDNN takes: the caller's im2col path does it */
    if (st == dnnl_success)
        st = conv_exec(c, in0, in1, bias, out);
    if (owned)
        conv_prim_free(c);
    if (st == dnnl_success)
        return TD_OK;
    return td_error(st == dnnl_out_of_memory ? TD_E_NOMEM : TD_E_DEVICE, "%s: oneDNN convolution failed: %s", op,
                    status_name(st));
}

/* ---- bf16 / f16 matmul ---- */

static dnnl_data_type_t dnnl_type_of(int t)
{
    return t == TD_CPU_GEMM_BF16 ? dnnl_bf16 : t == TD_CPU_GEMM_F16 ? dnnl_f16 : dnnl_f32;
}

static const char *gemm_type_name(int t)
{
    return t == TD_CPU_GEMM_BF16 ? "bf16" : t == TD_CPU_GEMM_F16 ? "f16" : "f32";
}

static void gemm_prim_free(gemm_prim *g)
{
    if (g != NULL) {
        dnnl_primitive_destroy(g->prim);
        free(g);
    }
}

/* Builds the matmul primitive of one shape on plain row-major memory (lock held, engine made):
 * a [m, k], b [k, n] (or stored [n, k] when tb), c [m, n]; oneDNN accumulates in f32. */
static dnnl_status_t gemm_prim_make(int in_type, int out_type, bool tb, int64_t m, int64_t n, int64_t k,
                                    gemm_prim **out)
{
    *out = NULL;
    gemm_prim *g = calloc(1, sizeof *g);
    if (g == NULL)
        return dnnl_out_of_memory;
    g->in_type = in_type, g->out_type = out_type, g->tb = tb, g->m = m, g->n = n, g->k = k;
    const dnnl_dims_t ad = { m, k }, bd = { k, n }, cd = { m, n };
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&g->a, 2, ad, dnnl_type_of(in_type), dnnl_ab);
    if (st == dnnl_success)
        st = dnnl_memory_desc_init_by_tag(&g->b, 2, bd, dnnl_type_of(in_type), tb ? dnnl_ba : dnnl_ab);
    if (st == dnnl_success)
        st = dnnl_memory_desc_init_by_tag(&g->c, 2, cd, dnnl_type_of(out_type), dnnl_ab);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_matmul_desc_t desc;
    if (st == dnnl_success)
        st = dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success)
        st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success)
        st = dnnl_matmul_desc_init(&desc, &g->a, &g->b, NULL, &g->c);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
    if (st == dnnl_success) {
        const char *impl = NULL;
        if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl != NULL)
            snprintf(g->impl, sizeof g->impl, "%s", impl);
        g->scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        g->scratch_bytes = dnnl_memory_desc_get_size(&g->scratch);
        st = dnnl_primitive_create(&g->prim, pd);
    }
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) {
        gemm_prim_free(g);
        return st;
    }
    *out = g;
    return dnnl_success;
}

static dnnl_status_t gemm_prim_get(int in_type, int out_type, bool tb, int64_t m, int64_t n, int64_t k,
                                   gemm_prim **out, bool *owned)
{
    *owned = false;
    *out = NULL;
    /* Keyed by thread count too, as the convolutions are: a primitive keeps the team size it
     * was made under (conv_prim_get says why that matters on a busy machine). */
    const int nthr = td_cpu_apply_threads();
    pthread_mutex_lock(&lock);
    dnnl_status_t st = dnnl_success;
    if (get_engine() == NULL)
        st = engine_status != dnnl_success ? engine_status : dnnl_runtime_error;
    for (int i = 0; st == dnnl_success && i < gemm_cached; i++) {
        const gemm_prim *g = gemm_cache[i];
        if (g->in_type == in_type && g->out_type == out_type && g->tb == tb && g->m == m && g->n == n && g->k == k &&
            g->nthr == nthr) {
            *out = gemm_cache[i];
            break;
        }
    }
    if (st == dnnl_success && *out == NULL) {
        st = gemm_prim_make(in_type, out_type, tb, m, n, k, out);
        if (st == dnnl_success) {
            (*out)->nthr = nthr;
            if (gemm_cached < CACHE_MAX)
                gemm_cache[gemm_cached++] = *out;
            else
                *owned = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return st;
}

static dnnl_status_t gemm_exec(const gemm_prim *g, const void *a, const void *b, void *c)
{
    void *block = NULL;
    if (g->scratch_bytes > 0 && td_cpu_block_take(g->scratch_bytes + 64, &block) != TD_OK)
        return dnnl_out_of_memory;
    char *buf = g->scratch_bytes > 0 ? (char *)(((uintptr_t)block + 63) & ~(uintptr_t)63) : NULL;
    dnnl_memory_t ma = NULL, mb = NULL, mc = NULL, ms = NULL;
    dnnl_stream_t stream = NULL;
    dnnl_status_t st = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
    if (st == dnnl_success)
        st = wrap(&ma, &g->a, a);
    if (st == dnnl_success)
        st = wrap(&mb, &g->b, b);
    if (st == dnnl_success)
        st = wrap(&mc, &g->c, c);
    if (st == dnnl_success)
        st = wrap(&ms, &g->scratch, buf);
    if (st == dnnl_success) {
        const dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, ma }, { DNNL_ARG_WEIGHTS, mb }, { DNNL_ARG_DST, mc },
                                         { DNNL_ARG_SCRATCHPAD, ms } };
        st = run(stream, g->prim, 4, args);
    }
    dnnl_memory_destroy(ma);
    dnnl_memory_destroy(mb);
    dnnl_memory_destroy(mc);
    dnnl_memory_destroy(ms);
    dnnl_stream_destroy(stream);
    if (g->scratch_bytes > 0)
        td_cpu_block_give(block, g->scratch_bytes + 64);
    return st;
}

td_status td_cpu_dnnl_gemm_lowp(const char *op, int in_type, int out_type, bool tb, int64_t m, int64_t n, int64_t k,
                                const void *a, const void *b, void *c, char *impl, size_t impl_cap)
{
    if (impl != NULL && impl_cap > 0)
        impl[0] = '\0';
    if ((in_type != TD_CPU_GEMM_BF16 && in_type != TD_CPU_GEMM_F16) ||
        (out_type != in_type && out_type != TD_CPU_GEMM_F32))
        return td_error(TD_E_INVALID, "%s: oneDNN matmul of %s inputs into %s is not one this library asks for", op,
                        gemm_type_name(in_type), gemm_type_name(out_type));
    if (m <= 0 || n <= 0 || k <= 0)
        return td_error(TD_E_SHAPE, "%s: oneDNN matmul needs positive sizes, not M=%lld N=%lld K=%lld", op,
                        (long long)m, (long long)n, (long long)k);
    gemm_prim *g = NULL;
    bool owned = false;
    dnnl_status_t st = gemm_prim_get(in_type, out_type, tb, m, n, k, &g, &owned);
    if (st == dnnl_unimplemented)
        return td_error(TD_E_UNSUPPORTED, "%s: oneDNN has no %s matmul on this CPU (ISA %s)", op,
                        gemm_type_name(in_type), td_cpu_dnnl_isa());
    if (st == dnnl_success && impl != NULL && impl_cap > 0)
        snprintf(impl, impl_cap, "%s", g->impl);
    if (st == dnnl_success && a != NULL)
        st = gemm_exec(g, a, b, c);
    if (owned)
        gemm_prim_free(g);
    if (st == dnnl_success)
        return TD_OK;
    return td_error(st == dnnl_out_of_memory ? TD_E_NOMEM : TD_E_DEVICE, "%s: oneDNN %s matmul failed: %s", op,
                    gemm_type_name(in_type), status_name(st));
}
