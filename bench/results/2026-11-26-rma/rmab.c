/* SPDX-License-Identifier: MIT */
/* Throwaway microbenchmark behind bench/README.md's 2026-11-26 one-sided notes
 * (not built by CMake): build/bin/mpicc -O2 rmab.c; mpiexec -n 2 ./a.out. */
/* origin CPU time per op, 2 ranks, passive target with flush */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
#define BIG (4 << 20)
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *sb = malloc(BIG), *rb = malloc(BIG);
    memset(sb, 1, BIG);
    memset(rb, 0, BIG);
    for (int fl = 0; fl < 2; fl++) {
        char *mem;
        MPI_Win win;
        char *ub = NULL;
        if (fl) {
            ub = malloc(BIG);
            memset(ub, 0, BIG);
            MPI_Win_create(ub, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_allocate(BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
            memset(mem, 0, BIG);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            printf("%-8s", fl ? "create" : "allocate");
            long one = 1, r, c = 0;
            const char *nm[] = {"put8",  "get8",  "acc8",  "fop8", "cas8",
                                "put1M", "get1M", "put4M", "get4M"};
            MPI_Win_lock_all(0, win);
            for (int k = 0; k < 9; k++) {
                double best = 1e9;
                int it = k < 5 ? 20000 : k < 7 ? 200 : 50;
                for (int rep = 0; rep < 5; rep++) {
                    double t0 = cpu();
                    for (int i = 0; i < it; i++) {
                        switch (k) {
                        case 0:
                            MPI_Put(sb, 8, MPI_CHAR, 1, 0, 8, MPI_CHAR, win);
                            break;
                        case 1:
                            MPI_Get(rb, 8, MPI_CHAR, 1, 0, 8, MPI_CHAR, win);
                            break;
                        case 2:
                            MPI_Accumulate(sb, 8, MPI_CHAR, 1, 64, 8, MPI_CHAR,
                                           MPI_SUM, win);
                            break;
                        case 3:
                            MPI_Fetch_and_op(&one, &r, MPI_LONG, 1, 128,
                                             MPI_SUM, win);
                            break;
                        case 4:
                            MPI_Compare_and_swap(&one, &c, &r, MPI_LONG, 1, 256,
                                                 win);
                            break;
                        case 5:
                            MPI_Put(sb, 1 << 20, MPI_CHAR, 1, 0, 1 << 20,
                                    MPI_CHAR, win);
                            break;
                        case 6:
                            MPI_Get(rb, 1 << 20, MPI_CHAR, 1, 0, 1 << 20,
                                    MPI_CHAR, win);
                            break;
                        case 7:
                            MPI_Put(sb, BIG, MPI_CHAR, 1, 0, BIG, MPI_CHAR,
                                    win);
                            break;
                        case 8:
                            MPI_Get(rb, BIG, MPI_CHAR, 1, 0, BIG, MPI_CHAR,
                                    win);
                            break;
                        }
                        MPI_Win_flush(1, win);
                    }
                    double t = (cpu() - t0) / it;
                    if (t < best)
                        best = t;
                }
                if (k < 5)
                    printf(" %s %7.3f us", nm[k], best * 1e6);
                else
                    printf(" %s %6.0f MB/s", nm[k],
                           (k < 7 ? 1 << 20 : BIG) / best / 1e6);
            }
            printf("\n");
            MPI_Win_unlock_all(win);
        }
        MPI_Win_free(&win);
        free(ub);
    }
    MPI_Finalize();
    return 0;
}
