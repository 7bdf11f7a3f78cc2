/* SPDX-License-Identifier: MIT */
/* The exchange of bench/README.md's "Exchanges" (2026-11-27): two ranks,
 * each pinned to core rank % 2, repeat MPI_Irecv from the other,
 * MPI_Send to it, MPI_Wait; rank 0 prints the best of 3 repetitions of
 * the mean time per exchange for each size (us).
 * Build with any MPI's mpicc: mpicc -O2 -o halo halo.c
 * Run: mpiexec -n 2 ./halo [SIZE...] (default 8192 16384 32768 65536
 * 262144; the 64 KiB - 1 MiB runs passed 65536 131072 262144 524288
 * 1048576). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(r % 2, &set);
    sched_setaffinity(0, sizeof set, &set);
    int def[] = {8192, 16384, 32768, 65536, 262144};
    int nsizes = argc > 1 ? argc - 1 : 5;
    char *sb = malloc(1 << 20), *rb = malloc(1 << 20);
    for (int i = 0; i < 1 << 20; i++)
        sb[i] = (char)i;
    int peer = 1 - r;
    for (int k = 0; k < nsizes; k++) {
        int n = argc > 1 ? atoi(argv[k + 1]) : def[k];
        if (n < 0 || n > 1 << 20)
            n = 1 << 20;
        int it = 20000 / (1 + n / 16384);
        double best = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Request q;
                MPI_Irecv(rb, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q);
                MPI_Send(sb, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            }
            t = (MPI_Wtime() - t) / it * 1e6;
            if (t < best)
                best = t;
        }
        if (r == 0)
            printf("%d %.2f\n", n, best);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
