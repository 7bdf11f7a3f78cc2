#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int iters = argc > 1 ? atoi(argv[1]) : 200000;
    int create = argc > 2 && !strcmp(argv[2], "create");
    long long *base;
    MPI_Win win;
    if (create) {
        base = calloc(1024, 8);
        MPI_Win_create(base, 8192, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else
        MPI_Win_allocate(8192, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    long long one = 1, res = 0, cmp = 0;
    const char *names[] = {"put", "get", "acc", "fop", "cas"};
    for (int op = 0; op < (getenv("NOCAS") ? 4 : 5); op++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            double best = 1e9;
            for (int rep = 0; rep < 5; rep++) {
                double t = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    switch (op) {
                    case 0:
                        MPI_Put(&one, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG,
                                win);
                        MPI_Win_flush(1, win);
                        break;
                    case 1:
                        MPI_Get(&res, 1, MPI_LONG_LONG, 1, 0, 1, MPI_LONG_LONG,
                                win);
                        MPI_Win_flush(1, win);
                        break;
                    case 2:
                        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 1, 0, 1,
                                       MPI_LONG_LONG, MPI_SUM, win);
                        MPI_Win_flush(1, win);
                        break;
                    case 3:
                        MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, 1, 0,
                                         MPI_SUM, win);
                        MPI_Win_flush_local(1, win);
                        break;
                    case 4:
                        MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG_LONG, 1,
                                             0, win);
                        MPI_Win_flush(1, win);
                        break;
                    }
                }
                t = (MPI_Wtime() - t) / iters * 1e6;
                if (t < best)
                    best = t;
            }
            printf("%s %.4f us\n", names[op], best);
            MPI_Win_unlock(1, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
