/* bench/dist_allreduce: float_all_reduce (sum) through tdispatch against MPI_Allreduce on
 * the same buffers, 1 KiB to 64 MiB, in one run. Run under mpirun -np 2 (or more; as root
 * Open MPI wants --allow-run-as-root):
 *   mpirun -np 2 build/bench/bench_dist_allreduce [--max-mib=N] [--rounds=N] [--scale=X]
 * tdispatch's call includes what a user gets: the agreement check across ranks, a fresh
 * result tensor and the dispatch; MPI's writes into a buffer allocated once. Each round
 * times both, the slowest rank's time counting; figures are medians over rounds. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_common.h"
#include "td_ops.h"

static void die(int rank, const char *what)
{
    fprintf(stderr, "bench_dist_allreduce: rank %d: %s: %s\n", rank, what, td_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    bench_opts o = { .scale = 1.0, .rounds = 5, .max_mib = 64 };
    const int parsed = bench_parse(argc, argv, "bench_dist_allreduce",
                                   "Times float_all_reduce against MPI_Allreduce, 1 KiB up (run under mpirun).", true,
                                   &o);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    if (td_dist_init(&argc, &argv) != TD_OK)
        die(-1, "dist_init");
    td_group *world = NULL;
    int rank = 0, size = 1;
    if (td_group_world(&world) != TD_OK)
        die(-1, "group_world");
    td_group_rank(world, &rank);
    td_group_size(world, &size);
    const long max_mib = o.max_mib;
    td_device *cpu = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK)
        die(rank, "device_open");
    if (rank == 0) {
        printf("all_reduce (sum) of float buffers, %d ranks; us: median [min-max] of %d rounds, each timing both;\n"
               "\"noisy\": rounds spread over %.0f%%\n",
               size, o.rounds, BENCH_NOISE * 100.0);
        printf("%10s %30s %30s %10s %10s %8s\n", "bytes", "td us", "mpi us", "td GB/s", "mpi GB/s", "ratio");
    }
    int met = 0, counted = 0;
    for (long bytes = 1024; bytes <= max_mib * 1024 * 1024; bytes *= 4) {
        int64_t n = bytes / 4;
        float *buf = malloc((size_t)bytes), *recv = malloc((size_t)bytes);
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)(i % 13);
        td_tensor *a = NULL;
        if (td_float_from_data(cpu, buf, &n, 1, &a) != TD_OK)
            die(rank, "from_data");
        int iters = (int)((bytes <= (1 << 20) ? 200 : (bytes <= (16 << 20) ? 20 : 5)) * o.scale) + 1;
        bench_rounds tdr = { 0 }, mpir = { 0 }, ratio = { 0 };
        for (int round = 0; round < o.rounds; round++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int k = 0; k < iters; k++) {
                td_tensor *r = NULL;
                if (td_float_all_reduce(a, world, TD_REDUCE_SUM, &r) != TD_OK)
                    die(rank, "all_reduce");
                td_tensor_release(r);
            }
            double t_td = (MPI_Wtime() - t0) / iters;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int k = 0; k < iters; k++)
                MPI_Allreduce(buf, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t_mpi = (MPI_Wtime() - t0) / iters;
            /* Rank 0 reports the slowest rank's time: a collective ends when all have. */
            MPI_Allreduce(MPI_IN_PLACE, &t_td, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &t_mpi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            bench_add(&tdr, t_td * 1e6);
            bench_add(&mpir, t_mpi * 1e6);
            bench_add(&ratio, t_td / t_mpi);
            if (bytes >= (1 << 20)) {
                met += t_td / t_mpi < 1.05;
                counted++;
            }
        }
        char bt[96], bm[96];
        if (rank == 0)
            printf("%10ld %30s %30s %10.2f %10.2f %8.3f%s\n", bytes, bench_fmt(&tdr, bt, sizeof bt),
                   bench_fmt(&mpir, bm, sizeof bm), (double)bytes / bench_median(&tdr) / 1e3,
                   (double)bytes / bench_median(&mpir) / 1e3, bench_median(&ratio),
                   bench_noisy(&ratio) ? " noisy" : "");
        td_tensor_release(a);
        free(buf);
        free(recv);
    }
    char v[96];
    if (rank == 0 && counted > 0)
        printf("target: ratio < 1.05 at 1 MiB and above: %s\n", bench_verdict(met, counted, v, sizeof v));
    td_device_release(cpu);
    td_group_release(world);
    td_dist_finalize();
    return 0;
}
