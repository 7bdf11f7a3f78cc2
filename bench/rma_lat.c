/* SPDX-License-Identifier: MIT */
/* One-sided latency on a window of user memory (MPI_Win_create), in plain
 * standard MPI: rank 0 times Put, Get and Accumulate(SUM) of one element,
 * each followed by MPI_Win_flush, inside MPI_Win_lock_all on rank 1. The
 * target either waits in MPI_Barrier (-c mpi, as OSU's one-sided tests) or
 * computes outside MPI until rank 0 puts a stop mark (-c compute: passive
 * target, which under Ferry's active messages needs the progress thread).
 * Prints 'op size latency_us' per operation: the median of -r repeats of
 * -i timed iterations. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench_common.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_rma_lat [-i ITERS] [-r REPEATS] [-c mpi|compute]"
               "\n  -i ITERS    timed operations per repeat (default 2000)\n"
               "  -r REPEATS  repeats per operation, median printed "
               "(default 5)\n"
               "  -c MODE     mpi: the target waits in MPI_Barrier "
               "(default);\n"
               "              compute: it loops outside MPI (yielding now "
               "and then)\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int iters = 2000, repeats = 5, compute = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc &&
            !bench_parse_int(argv[i + 1], &iters) && iters > 0)
            i++;
        else if (!strcmp(argv[i], "-r") && i + 1 < argc &&
                 !bench_parse_int(argv[i + 1], &repeats) && repeats > 0 &&
                 repeats <= 64)
            i++;
        else if (!strcmp(argv[i], "-c") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "mpi") ||
                  !strcmp(argv[i + 1], "compute"))) {
            compute = !strcmp(argv[++i], "compute");
        } else {
            if (me == 0)
                usage(stderr);
            MPI_Finalize();
            return 2;
        }
    }
    if (n < 2) {
        if (me == 0)
            fprintf(stderr, "bench_rma_lat: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    static long long mem[8]; /* [7]: the stop mark */
    MPI_Win win;
    MPI_Win_create(mem, sizeof(mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        bench_lib_version(lib);
        printf("# bench_rma_lat: %s; target %s; median of %d x %d\n", lib,
               compute ? "computing outside MPI" : "in MPI_Barrier", repeats,
               iters);
        static const char *const names[3] = {"put", "get", "acc"};
        long long v = 1, r = 0;
        MPI_Win_lock_all(0, win);
        for (int k = 0; k < 3; k++) {
            double t[64];
            for (int rep = 0; rep < repeats; rep++) {
                double t0 = 0;
                int warm = iters / 10;
                for (int i = 0; i < iters + warm; i++) {
                    if (i == warm)
                        t0 = MPI_Wtime();
                    if (k == 0)
                        MPI_Put(&v, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG,
                                win);
                    else if (k == 1)
                        MPI_Get(&r, 1, MPI_LONG_LONG, 1, 8, 1, MPI_LONG_LONG,
                                win);
                    else
                        MPI_Accumulate(&v, 1, MPI_LONG_LONG, 1, 16, 1,
                                       MPI_LONG_LONG, MPI_SUM, win);
                    MPI_Win_flush(1, win);
                }
                t[rep] = (MPI_Wtime() - t0) * 1e6 / iters;
            }
            printf("%s 8 %.2f\n", names[k], bench_median(t, repeats));
            fflush(stdout);
        }
        long long one = 1;
        MPI_Put(&one, 1, MPI_LONG_LONG, 1, 7 * 8, 1, MPI_LONG_LONG, win);
        MPI_Win_unlock_all(win);
    } else if (me == 1 && compute) {
        unsigned long k = 0;
        while (!__atomic_load_n(&mem[7], __ATOMIC_ACQUIRE))
            if (++k % 4096 == 0)
                sched_yield(); /* ranks and threads may outnumber cores */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
