/* bench/attention: causal float_attention forward + backward on the CPU at train_gpt's head
 * shape (B 8, H 4, E = Ev = 32) and contexts T of 128, 512 and 1024, three ways, one after
 * the other in every round:
 *   fused      float_attention: the blocked online-softmax kernel and the fused backward ops
 *              (cpu_attention.c), no [B, H, T, T] tensor;
 *   composite  the same with td_device_set_composites: the forward and the three backward
 *              ops run their decompositions (each builds the scores);
 *   pieces     float_attention_masked with a 0-d zero mask: autodiff through the
 *              decomposition's pieces, the path float_attention took before it had a
 *              backward (issue 25).
 * Per T: milliseconds of one forward + backward (seeded with a random gradient), the ratios
 * composite / fused and pieces / fused (above 1: fused is faster), and the bytes the tape
 * keeps for backward (td_testing_graph_bytes at the attention's result).
 * --scale=X multiplies the contexts (at least 8; the smoke test runs tiny ones).
 *   bench_attention [--scale=X] [--rounds=N] [--help] */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BENCH_PROG "bench_attention"
#include "bench_common.h"
#include "td_ops.h"

enum { B = 8, H = 4, E = 32, NT = 3, NWAYS = 3 };
static const int64_t contexts[NT] = { 128, 512, 1024 };
static const char *const ways[NWAYS] = { "fused", "composite", "pieces" };

/* One forward + backward of way w (q, k, v: leaves on ad that require grad; g on cpu):
 * seconds, and the tape's bytes into *bytes. */
static double step(td_device *cpu, td_device *ad, int w, const td_tensor *const in[3], const td_tensor *g,
                   int64_t *bytes)
{
    td_tensor *zero = NULL, *out = NULL;
    const td_tensor *lq = in[0], *lk = in[1], *lv = in[2];
    if (td_device_set_composites(cpu, w == 1) != TD_OK)
        bench_die("set_composites");
    const double t0 = bench_now();
    td_status st;
    if (w == 2) {
        if (td_float_zeros(ad, NULL, 0, &zero) != TD_OK)
            bench_die("zeros");
        st = td_float_attention_masked(lq, lk, lv, zero, 1, &out);
    } else {
        st = td_float_attention(lq, lk, lv, 1, &out);
    }
    if (st != TD_OK)
        bench_die("attention");
    if (td_testing_graph_bytes(out, bytes) != TD_OK)
        bench_die("graph_bytes");
    td_grads *grads = NULL;
    if (td_backward_seeded(out, g, &grads) != TD_OK)
        bench_die("backward");
    td_tensor *dq = NULL;
    if (td_grads_get(grads, lq, &dq) != TD_OK || dq == NULL)
        bench_die("grads_get");
    const double dt = bench_now() - t0;
    if (td_device_set_composites(cpu, false) != TD_OK)
        bench_die("set_composites");
    td_grads_release(grads);
    td_tensor *all[] = { zero, out, dq };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        td_tensor_release(all[i]);
    return dt;
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5 };
    const int parsed = bench_parse(argc, argv, BENCH_PROG,
                                   "Times causal attention forward + backward: the fused CPU kernels against the "
                                   "decomposition (composites forced) and autodiff through its pieces.",
                                   false, &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    td_device *cpu = NULL, *ad = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK || td_device_autodiff(cpu, TD_CHECKPOINT_NONE, &ad) != TD_OK)
        bench_die("device_open");
    printf("bench_attention: B %d, H %d, E = Ev = %d, causal; %d rounds of one forward + backward per way; "
           "%d threads\n",
           B, H, E, o.rounds, td_get_num_threads());
    for (int ti = 0; ti < NT; ti++) {
        const double scaled = (double)contexts[ti] * o.scale;
        const int64_t t = scaled < 8.0 ? 8 : (int64_t)scaled, s[] = { B, H, t, E };
        td_tensor *in[3] = { bench_random_on(ad, s, 4, 1), bench_random_on(ad, s, 4, 2), bench_random_on(ad, s, 4, 3) };
        td_tensor *g = bench_random_on(cpu, s, 4, 4);
        for (int i = 0; i < 3; i++)
            if (td_require_grad(in[i]) != TD_OK)
                bench_die("require_grad");
        bench_rounds ms[NWAYS] = { 0 }, ratio[NWAYS] = { 0 };
        int64_t bytes[NWAYS] = { 0 };
        for (int r = 0; r < o.rounds; r++) {
            double secs[NWAYS] = { 0 };
            for (int w = 0; w < NWAYS; w++)
                secs[w] = step(cpu, ad, w, (const td_tensor *const *)in, g, &bytes[w]);
            for (int w = 0; w < NWAYS; w++) {
                bench_add(&ms[w], secs[w] * 1e3);
                bench_add(&ratio[w], secs[w] / secs[0]);
            }
        }
        printf("T %lld:\n", (long long)t);
        for (int w = 0; w < NWAYS; w++) {
            char a[96], b[96];
            printf("  %-9s %s ms per forward + backward;  / fused %s;  tape %.1f MiB\n", ways[w],
                   bench_fmt(&ms[w], a, sizeof a), bench_fmt(&ratio[w], b, sizeof b), (double)bytes[w] / 1048576.0);
        }
        fflush(stdout);
        for (int i = 0; i < 3; i++)
            td_tensor_release(in[i]);
        td_tensor_release(g);
    }
    td_device_release(ad);
    td_device_release(cpu);
    return 0;
}
