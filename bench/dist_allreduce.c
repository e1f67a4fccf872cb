/* bench/dist_allreduce: float_all_reduce (sum) through tdispatch against MPI_Allreduce on
 * the same buffers, 1 KiB to 64 MiB, in one run. Run under mpirun -np 2 (or more):
 *   mpirun -np 2 build/bench/bench_dist_allreduce [max_mib]
 * tdispatch's call includes what a user gets: the agreement check across ranks, a fresh
 * result tensor and the dispatch; MPI's writes into a buffer allocated once. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "td_ops.h"

static void die(int rank, const char *what)
{
    fprintf(stderr, "bench_dist_allreduce: rank %d: %s: %s\n", rank, what, td_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    if (td_dist_init(&argc, &argv) != TD_OK)
        die(-1, "dist_init");
    td_group *world = NULL;
    int rank = 0, size = 1;
    if (td_group_world(&world) != TD_OK)
        die(-1, "group_world");
    td_group_rank(world, &rank);
    td_group_size(world, &size);
    long max_mib = argc > 1 ? atol(argv[1]) : 64;
    td_device *cpu = NULL;
    if (td_device_open(TD_BACKEND_CPU, 0, &cpu) != TD_OK)
        die(rank, "device_open");
    if (rank == 0) {
        printf("all_reduce (sum) of float buffers, %d ranks; best of rounds, one run\n", size);
        printf("%10s %12s %12s %12s %12s %8s\n", "bytes", "td us", "mpi us", "td GB/s", "mpi GB/s", "ratio");
    }
    for (long bytes = 1024; bytes <= max_mib * 1024 * 1024; bytes *= 4) {
        int64_t n = bytes / 4;
        float *buf = malloc((size_t)bytes), *recv = malloc((size_t)bytes);
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)(i % 13);
        td_tensor *a = NULL;
        if (td_float_from_data(cpu, buf, &n, 1, &a) != TD_OK)
            die(rank, "from_data");
        int iters = bytes <= (1 << 20) ? 200 : (bytes <= (16 << 20) ? 20 : 5);
        double best_td = 1e300, best_mpi = 1e300;
        for (int round = 0; round < 5; round++) {
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
            best_td = t_td < best_td ? t_td : best_td;
            best_mpi = t_mpi < best_mpi ? t_mpi : best_mpi;
        }
        if (rank == 0)
            printf("%10ld %12.1f %12.1f %12.2f %12.2f %8.3f\n", bytes, best_td * 1e6, best_mpi * 1e6,
                   (double)bytes / best_td / 1e9, (double)bytes / best_mpi / 1e9, best_td / best_mpi);
        td_tensor_release(a);
        free(buf);
        free(recv);
    }
    if (rank == 0)
        printf("target: ratio < 1.05 at 1 MiB and above\n");
    td_device_release(cpu);
    td_group_release(world);
    td_dist_finalize();
    return 0;
}
