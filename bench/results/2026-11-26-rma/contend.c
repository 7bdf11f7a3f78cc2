/* SPDX-License-Identifier: MIT */
/* Throwaway microbenchmark behind bench/README.md's 2026-11-26 one-sided
 * notes (not built by CMake): build/bin/mpicc -O2 contend.c. */
/* every rank: N fetch-and-op +1 (flush each) on rank 0's counter; wall and
 * CPU time per op of the slowest rank */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long *mem;
    MPI_Win win;
    const int N = 20000;
    MPI_Win_allocate(4096, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[0] = 0;
    mem[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    long one = 1, r;
    char c8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Win_lock_all(0, win);
    double t[2][2];
    for (int k = 0; k < 2; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double w0 = MPI_Wtime(), c0 = cpu();
        for (int i = 0; i < N; i++) {
            if (k == 0)
                MPI_Fetch_and_op(&one, &r, MPI_LONG, 0, 0, MPI_SUM, win);
            else
                MPI_Accumulate(c8, 8, MPI_CHAR, 0, 8, 8, MPI_CHAR, MPI_SUM,
                               win);
            MPI_Win_flush(0, win);
        }
        t[k][0] = (MPI_Wtime() - w0) / N * 1e6;
        t[k][1] = (cpu() - c0) / N * 1e6;
    }
    MPI_Win_unlock_all(win);
    double mx[4], v[4] = {t[0][0], t[0][1], t[1][0], t[1][1]};
    MPI_Reduce(v, mx, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("np%d fop wall %.3f cpu %.3f us | acc8 wall %.3f cpu %.3f us | "
               "counter %ld (want %ld)\n",
               n, mx[0], mx[1], mx[2], mx[3], mem[0], (long)N * n);
    MPI_Win_free(&win);
    MPI_Finalize();
}
