/* bench/composite_opmath: what "f32 inside" costs a composite in f16 / bf16 (docs/composites.md).
 * On Vulkan float_silu (a * sigmoid(a)), float_cosh ((exp(a) + exp(-a)) * 0.5) and
 * float_softmax (max_dim, sub, exp, sum_dim, div) are composites; in f16 / bf16 the generated
 * composite converts the input to f32 on the device, runs the pieces in f32 and rounds the
 * result once. The former way, "piecewise", ran the same pieces on the 16-bit tensors (each
 * piece's native 16-bit shader, or its own via f32 where it has none), rounding after every
 * piece: this program calls those pieces by hand. Per op it times the op in f32, the op in
 * f16 / bf16 (f32 inside) and the pieces in f16 / bf16, in one run, each case iters ops
 * recorded, then one sync; figures are medians over rounds with their range and the ratio to
 * the f32 op of the same round. It also prints each 16-bit result's NMSE against the f32
 * op's result rounded to the dtype (0: the same values as one rounding of the f32 result).
 * On lavapipe (software Vulkan) the figures are the CPU's.
 *   bench_composite_opmath [--scale=X] [--rounds=N] [--help]
 * --scale below 0.5 shrinks the tensors to 64K elements (a quick run, as the smoke test's). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_PROG "bench_composite_opmath"
#include "bench_common.h"
#include "td_ops.h"

enum opk { SILU, COSH, SOFTMAX, NOPS };
static const char *const op_names[NOPS] = { "silu", "cosh", "softmax" };
enum how { F32, INSIDE, PIECEWISE, NHOW };
static const char *const how_names[NHOW] = { "f32", "f32 inside", "piecewise" };

static void ok(td_status st, const char *what)
{
    if (st != TD_OK)
        bench_die(what);
}

/* The op itself (its generated entry: the composite, f32 inside for 16-bit inputs). */
static td_tensor *run_op(enum opk k, const td_tensor *a)
{
    td_tensor *r = NULL;
    if (k == SILU)
        ok(td_float_silu(a, &r), "silu");
    else if (k == COSH)
        ok(td_float_cosh(a, &r), "cosh");
    else
        ok(td_float_softmax(a, -1, &r), "softmax");
    return r;
}

/* The decomposition's pieces (specs/ops), each called on the tensors as they are. */
static td_tensor *run_pieces(enum opk k, const td_tensor *a)
{
    td_tensor *t[6] = { NULL }, *r = NULL;
    if (k == SILU) {
        ok(td_float_sigmoid(a, &t[0]), "sigmoid");
        ok(td_float_mul(a, t[0], &r), "mul");
    } else if (k == COSH) {
        ok(td_float_exp(a, &t[0]), "exp");
        ok(td_float_neg(a, &t[1]), "neg");
        ok(td_float_exp(t[1], &t[2]), "exp");
        ok(td_float_add(t[0], t[2], &t[3]), "add");
        ok(td_float_mul_scalar(t[3], 0.5f, &r), "mul_scalar");
    } else {
        ok(td_float_max_dim(a, -1, &t[0]), "max_dim");
        ok(td_float_sub(a, t[0], &t[1]), "sub");
        ok(td_float_exp(t[1], &t[2]), "exp");
        ok(td_float_sum_dim(t[2], -1, &t[3]), "sum_dim");
        ok(td_float_div(t[2], t[3], &r), "div");
    }
    for (int i = 0; i < 6; i++)
        td_tensor_release(t[i]);
    return r;
}

static td_tensor *run(enum opk k, enum how h, const td_tensor *a)
{
    return h == PIECEWISE ? run_pieces(k, a) : run_op(k, a);
}

/* Milliseconds per op over iters ops, one sync at the end. */
static double time_case(td_device *d, enum opk k, enum how h, const td_tensor *a, int iters)
{
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++)
        td_tensor_release(run(k, h, a));
    ok(td_sync(d), "sync");
    return (bench_now() - t0) / iters * 1e3;
}

/* The values of t as f32 (host). */
static float *values(const td_tensor *t, int64_t n)
{
    float *v = malloc((size_t)n * sizeof *v);
    if (v == NULL)
        bench_die("malloc");
    ok(td_float_into_data_dtype(t, TD_F32, v, n), "into_data");
    return v;
}

/* NMSE of the 16-bit result of (k, h) on a16 against the f32 op on the same values, rounded
 * to a16's dtype. */
static double nmse_of(enum opk k, enum how h, const td_tensor *a16, int64_t n)
{
    td_tensor *up = NULL, *rr = NULL, *r = run(k, h, a16);
    ok(td_float_cast(a16, TD_F32, &up), "cast");
    td_tensor *ref32 = run_op(k, up);
    td_dtype dt = TD_F32;
    ok(td_tensor_dtype(a16, &dt), "dtype");
    ok(td_float_cast(ref32, dt, &rr), "cast");
    td_tensor_release(up);
    td_tensor_release(ref32);
    float *got = values(r, n), *want = values(rr, n);
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)got[i] - (double)want[i];
        num += d * d;
        den += (double)want[i] * (double)want[i];
    }
    free(got);
    free(want);
    td_tensor_release(r);
    td_tensor_release(rr);
    return den > 0.0 ? num / den : num;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, BENCH_PROG,
                                   "Times Vulkan composites (silu, cosh, softmax) in f16 / bf16 computed in f32 "
                                   "inside against their pieces run in f16 / bf16, and the f32 op.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *vk = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("%s: no Vulkan device here (%s)\n", BENCH_PROG, td_last_error());
        return 0;
    }
    td_device_info info;
    if (td_device_info_of(vk, &info) == TD_OK)
        printf("vulkan:%d is %s (%s)%s\n", info.index, info.name, info.type,
               info.software ? ": a software implementation (the CPU's speed)" : "");
    const int64_t n = o.scale < 0.5 ? 65536 : 1048576;
    const int64_t shape[2] = { n / 1024, 1024 }; /* softmax along rows of 1024 */
    const int iters = 10 * ((int)(o.scale + 0.5) > 1 ? (int)(o.scale + 0.5) : 1);
    static const td_dtype dts[2] = { TD_F16, TD_BF16 };
    td_tensor *a32 = bench_random_on(vk, shape, 2, 7), *a16[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++)
        ok(td_float_cast(a32, dts[i], &a16[i]), "cast");
    /* warm up every case (pipelines, buffer pools) */
    for (int k = 0; k < NOPS; k++)
        for (int h = 0; h < NHOW; h++)
            for (int i = 0; i < (h == F32 ? 1 : 2); i++)
                time_case(vk, (enum opk)k, (enum how)h, h == F32 ? a32 : a16[i], 1);
    printf("ms per op on [%lld, %lld] (%lld elements), %d ops a batch: median [min-max] of %d rounds; ratio to the "
           "f32 op of the same round; \"noisy\": rounds spread over %.0f%%\n",
           (long long)shape[0], (long long)shape[1], (long long)n, iters, o.rounds, BENCH_NOISE * 100.0);
    /* [op][dtype 0 f32, 1 f16, 2 bf16][how] */
    static bench_rounds ms[NOPS][3][NHOW], ratio[NOPS][3][NHOW];
    for (int r = 0; r < o.rounds; r++)
        for (int k = 0; k < NOPS; k++) {
            const double base = time_case(vk, (enum opk)k, F32, a32, iters);
            bench_add(&ms[k][0][F32], base);
            bench_add(&ratio[k][0][F32], 1.0);
            for (int i = 0; i < 2; i++)
                for (int h = INSIDE; h < NHOW; h++) {
                    const double t = time_case(vk, (enum opk)k, (enum how)h, a16[i], iters);
                    bench_add(&ms[k][1 + i][h], t);
                    bench_add(&ratio[k][1 + i][h], t / base);
                }
        }
    printf("%-30s %32s %14s %12s\n", "case", "ms", "time / f32 op", "NMSE");
    for (int k = 0; k < NOPS; k++) {
        for (int di = 0; di < 3; di++)
            for (int h = 0; h < NHOW; h++) {
                if ((di == 0) != (h == F32))
                    continue;
                char label[64], buf[96], nm[32] = "-";
                snprintf(label, sizeof label, "%s %s %s", op_names[k], di == 0 ? "f32" : di == 1 ? "f16" : "bf16",
                         di == 0 ? "" : how_names[h]);
                if (di > 0)
                    snprintf(nm, sizeof nm, "%.3g", nmse_of((enum opk)k, (enum how)h, a16[di - 1], n));
                printf("%-30s %32s %10.2fx%-4s %12s\n", label, bench_fmt(&ms[k][di][h], buf, sizeof buf),
                       bench_median(&ratio[k][di][h]), bench_noisy(&ratio[k][di][h]) ? " noisy" : "", nm);
            }
    }
    td_tensor_release(a32);
    td_tensor_release(a16[0]);
    td_tensor_release(a16[1]);
    td_device_release(vk);
    return 0;
}
