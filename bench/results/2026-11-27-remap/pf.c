#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    char buf[8] = {1};
    int N = 2000000;
    const char *mode = argc > 1 ? argv[1] : "putflush";
    int dofl = strstr(mode, "flush") != NULL;
    char m0 = mode[0];
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int r = 0; r < 3; r++) {
            double t = MPI_Wtime();
            for (int i = 0; i < N; i++) {
                if (m0 == 112)
                    MPI_Put(buf, 8, MPI_CHAR, 1, 0, 8, MPI_CHAR, win);
                else if (m0 == 103)
                    MPI_Get(buf, 8, MPI_CHAR, 1, 0, 8, MPI_CHAR, win);
                if (dofl)
                    MPI_Win_flush(1, win);
            }
            printf("%s %.1f ns\n", mode, (MPI_Wtime() - t) / N * 1e9);
        }
        MPI_Win_unlock(1, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
}
