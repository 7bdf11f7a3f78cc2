/* SPDX-License-Identifier: MIT */
/* 64 (argv[2]) gets of S (argv[1]) bytes from rank 1, then a flush, 200
 * times after 10 untimed: the time to ask each get and the flush's share.
 * Built with build/bin/mpicc, run with FERRY_NODES=2 mpiexec -n 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int S = argc > 1 ? atoi(argv[1]) : 8, N = 64, R = 200;
    char *buf;
    MPI_Win w;
    MPI_Win_allocate(S * N, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &buf, &w);
    char *o = malloc((size_t)S * N);
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w);
        double ta = 0, tf = 0;
        for (int r = 0; r < R + 10; r++) {
            if (r == 10) {
                ta = tf = 0;
            }
            double a = MPI_Wtime();
            for (int i = 0; i < N; i++)
                MPI_Get(o + (size_t)i * S, S, MPI_BYTE, 1, (MPI_Aint)i * S, S,
                        MPI_BYTE, w);
            double b = MPI_Wtime();
            MPI_Win_flush(1, w);
            double c = MPI_Wtime();
            ta += b - a;
            tf += c - b;
        }
        printf("S=%d: issue %.2f us/get, flush %.2f us/get, total %.1f MB/s\n",
               S, ta / R / N * 1e6, tf / R / N * 1e6,
               (double)S * N * R / (ta + tf) / 1e6);
        MPI_Win_unlock(1, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w);
    MPI_Finalize();
}
