/* bench_dtypes: the kernels of the low-precision dtypes (issue 21) against what bounds them,
 * all in one run, round by round:
 *  - f16 / bf16 <-> f32 row conversions (runtime/core/td_convert.c) and the add of two
 *    16-bit rows done as convert - add - convert in registers (td_f16_add_row /
 *    td_bf16_add_row), in bytes read + written per second of their own bytes, as a fraction
 *    of the memcpy rate
 *    (64 MiB, read + written, over the same OpenMP threads; the work is split the same way);
 *  - the API on 16-bit tensors of the same n values: td_float_add of two f16 (bf16) tensors
 *    (cpu_half.c's blocks: widen 256 values, add in f32, round once; a fresh result tensor
 *    each call, as a caller gets it) and td_float_sum of one (chunks widened into an L2
 *    buffer), in their own bytes (add 6, sum 2 per value) as a fraction of the same round's
 *    memcpy rate, and the add as the generated via-f32 path ran it before (td_float_cast to
 *    f32, the f32 add, td_float_cast back) against the native call, in one round;
 *  - q8_0 and q4_0 matrix x vector (runtime/cpu/cpu_quant.c, 4096 x 4096, cycling through
 *    enough copies of the weights that they come from memory, not the 32 MiB L3) in weight
 *    bytes per second, as a fraction of the same memcpy rate;
 *  - bf16 matmul 1024 through the API (td_float_matmul of two bf16 tensors: cpu_matmul.c's
 *    matmul_bf16, oneDNN's bf16 matmul writing the bf16 result, after its scan of the inputs
 *    for inf / NaN / subnormals), the engine alone (td_cpu_gemm_lowp, bf16 result, no scan) and f16 matmul 1024 (td_cpu_gemm_lowp: oneDNN where it
 *    has f16, else convert + sgemm) against our f32 td_float_matmul of the same shape, and,
 *    when /usr/bin/python3 imports torch, PyTorch's bf16 and f32 matmul (bench/torch_ref.py,
 *    2 threads) timed in each round right after.
 * Issue 21's targets: add >= 0.8 of memcpy; q8_0 matvec >= 0.5 of memcpy; bf16 matmul >= 1.5x
 * our f32 and >= 0.8 of PyTorch's bf16. The first lines name the CPU, the engines and the
 * paths each kernel runs (ISA), and the load average at the start. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define BENCH_PROG "bench_dtypes"
#include "bench_common.h"
#include "bench_load.h"
#include "cpu_internal.h"
#include "td_convert.h"
#include "td_ops.h"
#include "td_quant.h"

#ifndef TD_TORCH_REF
#define TD_TORCH_REF "bench/torch_ref.py"
#endif

static int nthreads(void)
{
#ifdef _OPENMP
    return td_cpu_threads();
#else
    return 1;
#endif
}

typedef void (*row_fn)(const void *, void *, size_t);

/* A row conversion of n values over the threads; bytes read + written per second. */
static double convert_rate(row_fn fn, const void *src, size_t in_size, void *dst, size_t out_size, size_t n,
                           int iters)
{
    const double t0 = bench_now();
    for (int it = 0; it < iters; it++) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads())
        {
            const size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
            const size_t lo = n * t / nt / 64 * 64, hi = t + 1 == nt ? n : n * (t + 1) / nt / 64 * 64;
            fn((const char *)src + lo * in_size, (char *)dst + lo * out_size, hi - lo);
        }
#else
        fn(src, dst, n);
#endif
    }
    return (double)(in_size + out_size) * (double)n * iters / (bench_now() - t0);
}

typedef void (*add_fn)(const void *, const void *, void *, size_t);

/* c = a + b over 16-bit rows by td_f16_add_row / td_bf16_add_row (widen in registers, add in
 * f32, round once), split over the threads; bytes read + written (6 per value) per second. */
static double add16_rate(add_fn add, const uint16_t *a, const uint16_t *b, uint16_t *c, size_t n, int iters)
{
    const double t0 = bench_now();
    for (int it = 0; it < iters; it++) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads())
        {
            const size_t nt = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
            const size_t lo = n * t / nt / 64 * 64, hi = t + 1 == nt ? n : n * (t + 1) / nt / 64 * 64;
            add(a + lo, b + lo, c + lo, hi - lo);
        }
#else
        add(a, b, c, n);
#endif
    }
    return 6.0 * (double)n * iters / (bench_now() - t0);
}

/* td_float_add of two 16-bit tensors, iters times (the result released each time): bytes
 * read + written (6 per value) per second. via: the same through f32 copies, as the
 * generated via-f32 path did it (cast both, f32 add, cast the result back). */
static double api_add_rate(const td_tensor *a, const td_tensor *b, td_dtype dt, bool via, size_t n, int iters)
{
    const double t0 = bench_now();
    for (int it = 0; it < iters; it++) {
        td_tensor *c = NULL;
        if (via) {
            td_tensor *a32 = NULL, *b32 = NULL, *c32 = NULL;
            if (td_float_cast(a, TD_F32, &a32) != TD_OK || td_float_cast(b, TD_F32, &b32) != TD_OK ||
                td_float_add(a32, b32, &c32) != TD_OK || td_float_cast(c32, dt, &c) != TD_OK)
                bench_die("via-f32 add");
            td_tensor_release(a32);
            td_tensor_release(b32);
            td_tensor_release(c32);
        } else if (td_float_add(a, b, &c) != TD_OK) {
            bench_die("td_float_add");
        }
        td_tensor_release(c);
    }
    return 6.0 * (double)n * iters / (bench_now() - t0);
}

/* td_float_sum of a 16-bit tensor: bytes read (2 per value) per second. */
static double api_sum_rate(const td_tensor *a, size_t n, int iters)
{
    const double t0 = bench_now();
    for (int it = 0; it < iters; it++) {
        td_tensor *c = NULL;
        if (td_float_sum(a, &c) != TD_OK)
            bench_die("td_float_sum");
        td_tensor_release(c);
    }
    return 2.0 * (double)n * iters / (bench_now() - t0);
}

static void *big_alloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == NULL) {
        fprintf(stderr, "bench_dtypes: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    memset(p, 0, bytes); /* pages touched before timing */
    return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static float uniform(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (float)(rng >> 40) / 16777216.0f * 2.0f - 1.0f;
}

/* Rounds of one figure and, for a ratio, the rounds meeting a target. */
typedef struct fig {
    const char *name;
    bench_rounds r;
    double target; /* 0: none */
    int met;
} fig;

static void fig_add(fig *f, double v)
{
    bench_add(&f->r, v);
    if (f->target > 0.0 && v >= f->target)
        f->met++;
}

static void fig_print(const fig *f, const char *unit)
{
    char b[96], v[128];
    if (f->target > 0.0)
        printf("  %-46s %s%s   target >= %.2f: %s\n", f->name, bench_fmt(&f->r, b, sizeof b), unit, f->target,
               bench_verdict(f->met, f->r.n, v, sizeof v));
    else
        printf("  %-46s %s%s\n", f->name, bench_fmt(&f->r, b, sizeof b), unit);
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 7 };
    const int pr = bench_parse(argc, argv, "bench_dtypes",
                               "Times f16/bf16 conversions and add, q8_0/q4_0 matrix x vector and bf16/f16 matmul "
                               "against memcpy, our f32 matmul and PyTorch.",
                               false, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    double load[3] = { 0, 0, 0 };
    FILE *la = fopen("/proc/loadavg", "r");
    if (la != NULL) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = -1;
        fclose(la);
    }
    printf("load average at start (uptime): %.2f %.2f %.2f; %d thread%s; conversions: %s; q8_0/q4_0 dots: %s\n",
           load[0], load[1], load[2], nthreads(), nthreads() == 1 ? "" : "s", td_convert_path_name(td_convert_path()),
           td_quant_path_name(td_quant_path()));

    const bool small = o.scale < 0.1; /* the smoke run: small sizes */
    const size_t n = small ? (size_t)1 << 16 : (size_t)16 << 20;       /* values per conversion */
    const size_t mbytes = small ? (size_t)1 << 18 : (size_t)64 << 20;  /* memcpy */
    const int64_t side = small ? 256 : 4096;                           /* matvec */
    const int64_t mm = small ? 64 : 1024;                              /* matmul */
    const int it_conv = small ? 2 : (int)ceil(4 * o.scale), it_mv = small ? 2 : (int)ceil(30 * o.scale);
    const int it_mm = small ? 2 : (int)ceil(5 * o.scale);

    /* buffers */
    char *msrc = big_alloc(mbytes), *mdst = big_alloc(mbytes);
    float *f32 = big_alloc(n * 4), *f32b = big_alloc(n * 4);
    uint16_t *h = big_alloc(n * 2), *hb = big_alloc(n * 2), *hc = big_alloc(n * 2);
    for (size_t i = 0; i < n; i++)
        f32[i] = uniform() * 100.0f;
    memset(msrc, 1, mbytes);
    td_f32_to_f16_row(f32, h, n);
    td_f32_to_f16_row(f32, hb, n);
    /* matvec: copies of the weights enough to exceed the L3 (>= 96 MiB in all) */
    const int64_t nb = side / 32;
    const size_t q8_bytes = (size_t)side * (size_t)nb * sizeof(td_block_q8_0);
    const size_t q4_bytes = (size_t)side * (size_t)nb * sizeof(td_block_q4_0);
    const int copies = small ? 1 : (int)((((size_t)96 << 20) + q4_bytes - 1) / q4_bytes);
    float *wrow = big_alloc((size_t)side * 4), *xv = big_alloc((size_t)side * 4), *yv = big_alloc((size_t)side * 4);
    char **w8 = calloc((size_t)copies, sizeof *w8), **w4 = calloc((size_t)copies, sizeof *w4);
    if (w8 == NULL || w4 == NULL)
        return 1;
    for (int c = 0; c < copies; c++) {
        w8[c] = big_alloc(q8_bytes);
        w4[c] = big_alloc(q4_bytes);
        for (int64_t j = 0; j < side; j++) {
            for (int64_t i = 0; i < side; i++)
                wrow[i] = uniform();
            td_quantize_q8_0_unchecked(wrow, (td_block_q8_0 *)(void *)w8[c] + j * nb, nb);
            td_quantize_q4_0_unchecked(wrow, (td_block_q4_0 *)(void *)w4[c] + j * nb, nb);
        }
    }
    for (int64_t i = 0; i < side; i++)
        xv[i] = uniform();
    /* matmul operands */
    const size_t mmn = (size_t)(mm * mm);
    uint16_t *ab = big_alloc(mmn * 2), *bb = big_alloc(mmn * 2), *cb = big_alloc(mmn * 2);
    uint16_t *ah = big_alloc(mmn * 2), *bh = big_alloc(mmn * 2), *ch = big_alloc(mmn * 2);
    float *tmp = big_alloc(mmn * 4);
    for (size_t i = 0; i < mmn; i++)
        tmp[i] = uniform();
    td_f32_to_bf16_row(tmp, ab, mmn);
    td_f32_to_f16_row(tmp, ah, mmn);
    for (size_t i = 0; i < mmn; i++)
        tmp[i] = uniform();
    td_f32_to_bf16_row(tmp, bb, mmn);
    td_f32_to_f16_row(tmp, bh, mmn);
    td_device *dev = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &dev) != TD_OK)
        bench_die("open cpu");
    const int64_t shp[2] = { mm, mm };
    td_tensor *ta = bench_random_on(dev, shp, 2, 1), *tb = bench_random_on(dev, shp, 2, 2);
    td_tensor *tabf = NULL, *tbbf = NULL;
    if (td_float_from_data_dtype(dev, TD_BF16, ab, shp, 2, &tabf) != TD_OK ||
        td_float_from_data_dtype(dev, TD_BF16, bb, shp, 2, &tbbf) != TD_OK)
        bench_die("bf16 matrices");
    /* the API rows: f16 and bf16 tensors of the n values (h, hb hold f16 bits; the bf16 ones
     * are the same values rounded to bf16) */
    const int64_t nshape[1] = { (int64_t)n };
    td_tensor *t16a = NULL, *t16b = NULL, *tbfa = NULL, *tbfb = NULL;
    td_f32_to_bf16_row(f32, hc, n);
    if (td_float_from_data_dtype(dev, TD_F16, h, nshape, 1, &t16a) != TD_OK ||
        td_float_from_data_dtype(dev, TD_F16, hb, nshape, 1, &t16b) != TD_OK ||
        td_float_from_data_dtype(dev, TD_BF16, hc, nshape, 1, &tbfa) != TD_OK ||
        td_float_from_data_dtype(dev, TD_BF16, hc, nshape, 1, &tbfb) != TD_OK)
        bench_die("16-bit tensors");

    /* what runs */
    const char *bf16_path = "?", *f16_path = "?";
#ifdef TD_HAVE_DNNL
    char impl[64] = "";
    if (td_cpu_dnnl_gemm_lowp("bench", TD_CPU_GEMM_BF16, TD_CPU_GEMM_BF16, false, mm, mm, mm, NULL, NULL, NULL, impl,
                              sizeof impl) != TD_OK)
        snprintf(impl, sizeof impl, "none: %s", td_last_error());
    char v[32];
    td_cpu_dnnl_version(v, sizeof v);
    printf("oneDNN %s, ISA %s; its bf16 matmul implementation: %s\n", v, td_cpu_dnnl_isa(), impl);
#else
    printf("no oneDNN in this build\n");
#endif
    if (td_cpu_gemm_lowp("bench", TD_CPU_GEMM_BF16, TD_CPU_GEMM_BF16, false, mm, mm, mm, ab, bb, cb, &bf16_path) !=
            TD_OK ||
        td_cpu_gemm_lowp("bench", TD_CPU_GEMM_F16, TD_CPU_GEMM_F16, false, mm, mm, mm, ah, bh, ch, &f16_path) != TD_OK)
        bench_die("low-precision matmul");
    printf("bf16 engine: %s (td_float_matmul of bf16 tensors: the same where the inputs are finite without subnormals); f16 matmul: %s\n", bf16_path, f16_path);

    fig mem = { .name = "memcpy (read + written), GB/s" };
    fig conv[4] = { { .name = "f16 -> f32 row, of memcpy" }, { .name = "f32 -> f16 row, of memcpy" },
                    { .name = "bf16 -> f32 row, of memcpy" }, { .name = "f32 -> bf16 row, of memcpy" } };
    fig add16 = { .name = "f16 add (convert-add-convert), of memcpy", .target = 0.8 };
    fig addbf = { .name = "bf16 add (convert-add-convert), of memcpy", .target = 0.8 };
    fig api16 = { .name = "td_float_add f16 tensors, of memcpy", .target = 0.8 };
    fig apibf = { .name = "td_float_add bf16 tensors, of memcpy", .target = 0.8 };
    fig apivia = { .name = "td_float_add f16 native, of via f32 copies" };
    fig sum16 = { .name = "td_float_sum f16 tensor, of memcpy" };
    fig sumbf = { .name = "td_float_sum bf16 tensor, of memcpy" };
    fig q8 = { .name = "q8_0 matvec, weight bytes/s of memcpy", .target = 0.5 };
    fig q4 = { .name = "q4_0 matvec, weight bytes/s of memcpy" };
    fig q8g = { .name = "q8_0 matvec, weight GB/s" }, q4g = { .name = "q4_0 matvec, weight GB/s" };
    fig gf32 = { .name = "f32 td_float_matmul, GFLOP/s" }, gbf = { .name = "bf16 td_float_matmul, GFLOP/s" };
    fig gbfe = { .name = "bf16 engine alone (td_cpu_gemm_lowp), GFLOP/s" };
    fig gf16 = { .name = "f16 matmul, GFLOP/s" };
    fig rbf = { .name = "bf16 matmul / our f32", .target = 1.5 }, rf16 = { .name = "f16 matmul / our f32" };

    const double flops = 2.0 * (double)mm * (double)mm * (double)mm;
    /* PyTorch's bf16 and f32 matmul, timed inside each round (a process per figure) */
    const bool torch = !small && bench_torch_available();
    fig tbf = { .name = "PyTorch bf16 matmul, GFLOP/s" }, tf32 = { .name = "PyTorch f32 matmul, GFLOP/s" };
    fig rtorch = { .name = "bf16 matmul / PyTorch's bf16", .target = 0.8 };
    int cyc = 0;
    { /* warm-up: thread pools, oneDNN's JIT kernels, first touches */
        td_tensor *c = NULL;
        if (td_float_matmul(ta, tb, &c) != TD_OK)
            bench_die("f32 matmul");
        td_tensor_release(c);
        if (td_float_matmul(tabf, tbbf, &c) != TD_OK)
            bench_die("bf16 matmul");
        td_tensor_release(c);
        (void)bench_memcpy_rate(mdst, msrc, mbytes, 1, nthreads());
        (void)add16_rate(td_f16_add_row, h, hb, hc, n, 1);
        if (td_cpu_matmul_quant("bench", TD_CPU_Q8_0, 1, side, side, xv, w8[0], yv) != TD_OK)
            bench_die("q8_0 matvec");
    }
    for (int round = 0; round < o.rounds; round++) {
        const double mr = bench_memcpy_rate(mdst, msrc, mbytes, it_conv * 2, nthreads());
        fig_add(&mem, mr / 1e9);
        fig_add(&conv[0], convert_rate(td_f16_to_f32_row, h, 2, f32b, 4, n, it_conv) / mr);
        fig_add(&conv[1], convert_rate(td_f32_to_f16_row, f32, 4, hc, 2, n, it_conv) / mr);
        fig_add(&conv[2], convert_rate(td_bf16_to_f32_row, h, 2, f32b, 4, n, it_conv) / mr);
        fig_add(&conv[3], convert_rate(td_f32_to_bf16_row, f32, 4, hc, 2, n, it_conv) / mr);
        fig_add(&add16, add16_rate(td_f16_add_row, h, hb, hc, n, it_conv) / mr);
        fig_add(&addbf, add16_rate(td_bf16_add_row, h, hb, hc, n, it_conv) / mr);
        const double a16 = api_add_rate(t16a, t16b, TD_F16, false, n, it_conv);
        fig_add(&api16, a16 / mr);
        fig_add(&apibf, api_add_rate(tbfa, tbfb, TD_BF16, false, n, it_conv) / mr);
        fig_add(&apivia, a16 / api_add_rate(t16a, t16b, TD_F16, true, n, it_conv));
        fig_add(&sum16, api_sum_rate(t16a, n, it_conv) / mr);
        fig_add(&sumbf, api_sum_rate(tbfa, n, it_conv) / mr);

        double t0 = bench_now();
        for (int it = 0; it < it_mv; it++, cyc++)
            if (td_cpu_matmul_quant("bench", TD_CPU_Q8_0, 1, side, side, xv, w8[cyc % copies], yv) != TD_OK)
                bench_die("q8_0 matvec");
        const double r8 = (double)q8_bytes * it_mv / (bench_now() - t0);
        t0 = bench_now();
        for (int it = 0; it < it_mv; it++, cyc++)
            if (td_cpu_matmul_quant("bench", TD_CPU_Q4_0, 1, side, side, xv, w4[cyc % copies], yv) != TD_OK)
                bench_die("q4_0 matvec");
        const double r4 = (double)q4_bytes * it_mv / (bench_now() - t0);
        fig_add(&q8, r8 / mr);
        fig_add(&q4, r4 / mr);
        fig_add(&q8g, r8 / 1e9);
        fig_add(&q4g, r4 / 1e9);

        t0 = bench_now();
        for (int it = 0; it < it_mm; it++) {
            td_tensor *c = NULL;
            if (td_float_matmul(ta, tb, &c) != TD_OK)
                bench_die("f32 matmul");
            td_tensor_release(c);
        }
        const double g32 = flops * it_mm / (bench_now() - t0) / 1e9;
        t0 = bench_now();
        for (int it = 0; it < it_mm; it++) {
            td_tensor *c = NULL;
            if (td_float_matmul(tabf, tbbf, &c) != TD_OK)
                bench_die("bf16 matmul");
            td_tensor_release(c);
        }
        const double gb = flops * it_mm / (bench_now() - t0) / 1e9;
        t0 = bench_now();
        for (int it = 0; it < it_mm; it++)
            if (td_cpu_gemm_lowp("bench", TD_CPU_GEMM_BF16, TD_CPU_GEMM_BF16, false, mm, mm, mm, ab, bb, cb, NULL) !=
                TD_OK)
                bench_die("bf16 matmul engine");
        fig_add(&gbfe, flops * it_mm / (bench_now() - t0) / 1e9);
        t0 = bench_now();
        for (int it = 0; it < it_mm; it++)
            if (td_cpu_gemm_lowp("bench", TD_CPU_GEMM_F16, TD_CPU_GEMM_F16, false, mm, mm, mm, ah, bh, ch, NULL) !=
                TD_OK)
                bench_die("f16 matmul");
        const double gh = flops * it_mm / (bench_now() - t0) / 1e9;
        fig_add(&gf32, g32);
        fig_add(&gbf, gb);
        fig_add(&gf16, gh);
        fig_add(&rbf, gb / g32);
        fig_add(&rf16, gh / g32);
        if (torch) {
            double tb_ms = 0, tf_ms = 0;
            if (!bench_torch_run(TD_TORCH_REF, "matmul_bf16", 3, it_mm * 2, &tb_ms) ||
                !bench_torch_run(TD_TORCH_REF, "matmul_f32", 3, it_mm * 2, &tf_ms))
                bench_die("torch_ref.py");
            const double tbg = flops / (tb_ms * 1e-3) / 1e9;
            fig_add(&tbf, tbg);
            fig_add(&tf32, flops / (tf_ms * 1e-3) / 1e9);
            fig_add(&rtorch, gb / tbg);
        }
    }

    printf("median [min-max] of %d rounds; ratios are taken within each round\n", o.rounds);
    fig_print(&mem, "");
    printf("row conversions and add over %zu values (%d threads; bytes read + written):\n", n, nthreads());
    for (int i = 0; i < 4; i++)
        fig_print(&conv[i], "");
    fig_print(&add16, "");
    fig_print(&addbf, "");
    printf("the API on %zu-value tensors (a fresh result each call; own bytes: add 6, sum 2 per value):\n", n);
    fig_print(&api16, "");
    fig_print(&apibf, "");
    fig_print(&apivia, "");
    fig_print(&sum16, "");
    fig_print(&sumbf, "");
    printf("matrix x vector %lld x %lld (weights: q8_0 %.1f MiB, q4_0 %.1f MiB; %d copies cycled):\n",
           (long long)side, (long long)side, (double)q8_bytes / 1048576.0, (double)q4_bytes / 1048576.0, copies);
    fig_print(&q8, "");
    fig_print(&q4, "");
    fig_print(&q8g, "");
    fig_print(&q4g, "");
    printf("matmul %lld x %lld x %lld:\n", (long long)mm, (long long)mm, (long long)mm);
    fig_print(&gf32, "");
    fig_print(&gbf, "");
    fig_print(&gbfe, "");
    fig_print(&gf16, "");
    fig_print(&rbf, "");
    fig_print(&rf16, "");

    if (torch) {
        printf("PyTorch (bench/torch_ref.py, 2 threads, 3 rounds of its own per round, right after ours):\n");
        fig_print(&tbf, "");
        fig_print(&tf32, "");
        fig_print(&rtorch, "");
    } else {
        printf("PyTorch reference: skipped (%s)\n", small ? "small run" : BENCH_TORCH_PY " cannot import torch");
    }

    td_tensor_release(ta);
    td_tensor_release(tb);
    td_tensor_release(tabf);
    td_tensor_release(tbbf);
    td_tensor_release(t16a);
    td_tensor_release(t16b);
    td_tensor_release(tbfa);
    td_tensor_release(tbfb);
    td_device_release(dev);
    for (int c = 0; c < copies; c++) {
        free(w8[c]);
        free(w4[c]);
    }
    free(w8);
    free(w4);
    free(msrc);
    free(mdst);
    free(f32);
    free(f32b);
    free(h);
    free(hb);
    free(hc);
    free(wrow);
    free(xv);
    free(yv);
    free(ab);
    free(bb);
    free(cb);
    free(ah);
    free(bh);
    free(ch);
    free(tmp);
    return 0;
}
