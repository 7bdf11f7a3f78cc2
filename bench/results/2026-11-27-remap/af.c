#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    long v = 1, r = 0;
    char cbuf[8] = {1}, cres[8];
    int N = 1000000;
    int mode = argc > 1 ? argv[1][0] : 'f';
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int k = 0; k < 3; k++) {
            double t = MPI_Wtime();
            for (int i = 0; i < N; i++) {
                if (mode == 'f')
                    MPI_Fetch_and_op(&v, &r, MPI_LONG, 1, 0, MPI_SUM, win);
                else if (mode == 'a')
                    MPI_Accumulate(cbuf, 8, MPI_CHAR, 1, 0, 8, MPI_CHAR,
                                   MPI_SUM, win);
                else
                    MPI_Compare_and_swap(&v, &r, cres, MPI_LONG, 1, 0, win);
                MPI_Win_flush(1, win);
            }
            printf("%c %.1f ns\n", mode, (MPI_Wtime() - t) / N * 1e9);
        }
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
}
