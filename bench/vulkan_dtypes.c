/* bench/vulkan_dtypes: Vulkan float_add and float_exp of 1M elements, float_matmul of 512x512
 * matrices, float_conv2d of x [4, 16, 32, 32] by a 3x3 weight [16, 16, 3, 3] and float_transpose
 * of a 1024x1024 matrix (a move: copy.comp by element size) in f16 and bf16 (all five also f64:
 * ewd.comp, the TD_F64 matmul and conv, the 8-byte copy) against f32, in one run: the native
 * 16-bit shaders (ewv.comp / unary.comp / the matmul shaders / conv.comp built with -DTD_HALF,
 * copy.comp with TD_S16) through
 * 16-bit storage where the device has it and through packed 32-bit words
 * (td_vulkan_set_half_storage PACKED), and "via f32" done by hand as the generated arms would
 * without those kernels (cast both inputs to f32 on the device, the f32 op, cast back: three
 * more dispatches). Plus the f32 -> f16 cast alone. Each case: iters ops recorded into one
 * command buffer, then one sync. Every round times every case, one after the other; figures
 * are medians over rounds with their range, and the ratio to the f32 op of the same round. On
 * lavapipe (software Vulkan) the figures are the CPU's.
 *   bench_vulkan_dtypes [--scale=X] [--rounds=N] [--help]
 * --scale below 0.5 shrinks the tensors to 64K elements and the matrices to 128x128 (a quick run,
 * as the smoke test's). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_PROG "bench_vulkan_dtypes"
#include "bench_common.h"
#include "td_ops.h"
#include "td_vulkan.h"

enum how { NATIVE, PACKED, VIA, CAST };

typedef struct dt_case {
    const char *label;
    td_dtype dt;
    enum how how;
    int kind; /* 0 float_add, 1 float_exp, 2 float_matmul, 3 float_conv2d (a: x, b: weight, c: bias), 4 float_transpose */
    td_tensor *a, *b, *c;
    bench_rounds ms, ratio;
} dt_case;

static td_tensor *cast(const td_tensor *t, td_dtype dt)
{
    td_tensor *r = NULL;
    if (td_float_cast(t, dt, &r) != TD_OK)
        bench_die("cast");
    return r;
}

static td_tensor *op(const dt_case *c, const td_tensor *a, const td_tensor *b, const td_tensor *bias)
{
    td_tensor *r = NULL;
    static const int64_t one[2] = { 1, 1 };
    const td_status st = c->kind == 1   ? td_float_exp(a, &r)
                         : c->kind == 2 ? td_float_matmul(a, b, &r)
                         : c->kind == 3 ? td_float_conv2d(a, b, bias, one, 2, one, 2, one, 2, 1, &r)
                         : c->kind == 4 ? td_float_transpose(a, &r)
                                        : td_float_add(a, b, &r);
    if (st != TD_OK)
        bench_die(c->kind == 1 ? "exp" : c->kind == 2 ? "matmul" : c->kind == 3 ? "conv2d" : c->kind == 4 ? "transpose" : "add");
    return r;
}

/* Milliseconds per op over iters ops, one sync at the end. */
static double time_case(td_device *d, const dt_case *c, int iters)
{
    if (td_vulkan_set_half_storage(d, c->how == PACKED ? TD_VULKAN_HALF_PACKED : TD_VULKAN_HALF_AUTO) != TD_OK)
        bench_die("set_half_storage");
    const double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
        td_tensor *r = NULL;
        if (c->how == CAST) {
            r = cast(c->a, c->dt);
        } else if (c->how == VIA) {
            td_tensor *a32 = cast(c->a, TD_F32), *b32 = c->kind == 1 || c->kind == 4 ? NULL : cast(c->b, TD_F32);
            td_tensor *c32 = c->kind == 3 ? cast(c->c, TD_F32) : NULL;
            td_tensor *r32 = op(c, a32, b32, c32);
            r = cast(r32, c->dt);
            td_tensor_release(a32);
            td_tensor_release(b32);
            td_tensor_release(c32);
            td_tensor_release(r32);
        } else {
            r = op(c, c->a, c->b, c->c);
        }
        td_tensor_release(r);
    }
    if (td_sync(d) != TD_OK)
        bench_die("sync");
    return (bench_now() - t0) / iters * 1e3;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, "bench_vulkan_dtypes",
                                   "Times Vulkan float_add / float_exp / float_matmul / float_conv2d / float_transpose in f16 and bf16 "
                                   "(native, packed words, via f32) against f32.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *vk = NULL;
    if (td_device_open(TD_BACKEND_VULKAN, 0, &vk) != TD_OK) {
        printf("bench_vulkan_dtypes: no Vulkan device here (%s)\n", td_last_error());
        return 0;
    }
    td_device_info info;
    if (td_device_info_of(vk, &info) == TD_OK)
        printf("vulkan:%d is %s (%s)%s\n", info.index, info.name, info.type,
               info.software ? ": a software implementation (the CPU's speed)" : "");
    bool s16 = false;
    if (td_vulkan_half_storage_in_use(vk, &s16) != TD_OK)
        bench_die("half_storage_in_use");
    printf("16-bit storage buffers: %s\n", s16 ? "yes (\"native\" reads uint16_t)" : "no (\"native\" is packed words)");
    const int64_t n = o.scale < 0.5 ? 65536 : 1048576;
    const int iters = 10 * ((int)(o.scale + 0.5) > 1 ? (int)(o.scale + 0.5) : 1);
    const int64_t mshape[2] = { o.scale < 0.5 ? 128 : 512, o.scale < 0.5 ? 128 : 512 };
    dt_case cases[] = {
        { .label = "add f32", .dt = TD_F32, .how = NATIVE },
        { .label = "add f16 native", .dt = TD_F16, .how = NATIVE },
        { .label = "add f16 packed words", .dt = TD_F16, .how = PACKED },
        { .label = "add f16 via f32", .dt = TD_F16, .how = VIA },
        { .label = "add bf16 native", .dt = TD_BF16, .how = NATIVE },
        { .label = "add bf16 packed words", .dt = TD_BF16, .how = PACKED },
        { .label = "add bf16 via f32", .dt = TD_BF16, .how = VIA },
        { .label = "add f64", .dt = TD_F64, .how = NATIVE },
        { .label = "exp f32", .dt = TD_F32, .how = NATIVE, .kind = 1 },
        { .label = "exp f16 native", .dt = TD_F16, .how = NATIVE, .kind = 1 },
        { .label = "exp f16 packed words", .dt = TD_F16, .how = PACKED, .kind = 1 },
        { .label = "exp f16 via f32", .dt = TD_F16, .how = VIA, .kind = 1 },
        { .label = "exp f64", .dt = TD_F64, .how = NATIVE, .kind = 1 },
        { .label = "matmul f32", .dt = TD_F32, .how = NATIVE, .kind = 2 },
        { .label = "matmul f16 native", .dt = TD_F16, .how = NATIVE, .kind = 2 },
        { .label = "matmul f16 packed words", .dt = TD_F16, .how = PACKED, .kind = 2 },
        { .label = "matmul f16 via f32", .dt = TD_F16, .how = VIA, .kind = 2 },
        { .label = "matmul bf16 native", .dt = TD_BF16, .how = NATIVE, .kind = 2 },
        { .label = "matmul bf16 packed words", .dt = TD_BF16, .how = PACKED, .kind = 2 },
        { .label = "matmul f64", .dt = TD_F64, .how = NATIVE, .kind = 2 },
        { .label = "conv2d f32", .dt = TD_F32, .how = NATIVE, .kind = 3 },
        { .label = "conv2d f16 native", .dt = TD_F16, .how = NATIVE, .kind = 3 },
        { .label = "conv2d f16 packed words", .dt = TD_F16, .how = PACKED, .kind = 3 },
        { .label = "conv2d f16 via f32", .dt = TD_F16, .how = VIA, .kind = 3 },
        { .label = "conv2d bf16 native", .dt = TD_BF16, .how = NATIVE, .kind = 3 },
        { .label = "conv2d bf16 via f32", .dt = TD_BF16, .how = VIA, .kind = 3 },
        { .label = "conv2d f64", .dt = TD_F64, .how = NATIVE, .kind = 3 },
        { .label = "transpose f32", .dt = TD_F32, .how = NATIVE, .kind = 4 },
        { .label = "transpose f16 native", .dt = TD_F16, .how = NATIVE, .kind = 4 },
        { .label = "transpose f16 packed", .dt = TD_F16, .how = PACKED, .kind = 4 },
        { .label = "transpose f16 via f32", .dt = TD_F16, .how = VIA, .kind = 4 },
        { .label = "transpose f64", .dt = TD_F64, .how = NATIVE, .kind = 4 },
        { .label = "cast f32 -> f16", .dt = TD_F16, .how = CAST },
    };
    const int64_t side = o.scale < 0.5 ? 16 : 32;
    const int64_t tshape[2] = { o.scale < 0.5 ? 256 : 1024, o.scale < 0.5 ? 256 : 1024 };
    const int64_t xshape[4] = { 4, 16, side, side }, wshape[4] = { 16, 16, 3, 3 }, bshape[1] = { 16 };
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    for (int c = 0; c < nc; c++) {
        const int kind = cases[c].kind;
        const int64_t *shape = kind == 4 ? tshape : kind == 3 ? xshape : kind == 2 ? mshape : &n;
        const int nd = kind == 3 ? 4 : kind == 2 || kind == 4 ? 2 : 1;
        td_tensor *a = bench_random_on(vk, shape, nd, 1 + (uint64_t)c);
        td_tensor *b = bench_random_on(vk, kind == 3 ? wshape : shape, nd, 31 + (uint64_t)c);
        const td_dtype in = cases[c].how == CAST ? TD_F32 : cases[c].dt;
        cases[c].a = cast(a, in);
        cases[c].b = cast(b, in);
        td_tensor_release(a);
        td_tensor_release(b);
        if (kind == 3) {
            td_tensor *bias = bench_random_on(vk, bshape, 1, 61 + (uint64_t)c);
            cases[c].c = cast(bias, in);
            td_tensor_release(bias);
        }
        time_case(vk, &cases[c], 1); /* warm up: pipelines, buffer pools */
    }
    printf("ms per op on %lld elements (matmul: %lld x %lld matrices; conv2d: x [4, 16, %lld, %lld], 3x3, padding 1; transpose: %lld x %lld), "
           "%d ops a batch: median [min-max] of %d rounds; ratio to the f32 op of the same round; \"noisy\": rounds "
           "spread over %.0f%%\n",
           (long long)n, (long long)mshape[0], (long long)mshape[1], (long long)side, (long long)side, (long long)tshape[0], (long long)tshape[1], iters, o.rounds,
           BENCH_NOISE * 100.0);
    for (int r = 0; r < o.rounds; r++) {
        double base[5] = { 0.0, 0.0, 0.0, 0.0, 0.0 };
        for (int c = 0; c < nc; c++) {
            const double t = time_case(vk, &cases[c], iters);
            if (cases[c].dt == TD_F32)
                base[cases[c].kind] = t;
            bench_add(&cases[c].ms, t);
            bench_add(&cases[c].ratio, t / base[cases[c].how == CAST ? 0 : cases[c].kind]);
        }
    }
    printf("%-24s %32s %16s\n", "case", "ms", "time / f32 op");
    for (int c = 0; c < nc; c++) {
        char buf[96];
        printf("%-24s %32s %10.2fx%-6s\n", cases[c].label, bench_fmt(&cases[c].ms, buf, sizeof buf),
               bench_median(&cases[c].ratio), bench_noisy(&cases[c].ratio) ? " noisy" : "");
        td_tensor_release(cases[c].a);
        td_tensor_release(cases[c].b);
        td_tensor_release(cases[c].c);
    }
    if (td_vulkan_set_half_storage(vk, TD_VULKAN_HALF_AUTO) != TD_OK)
        bench_die("set_half_storage");
    td_device_release(vk);
    return 0;
}
