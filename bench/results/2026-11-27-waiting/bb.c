#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* total time per iteration of {Bcast 8 B from 0; Barrier}, and bcast share as
 * OSU measures it */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    char b[8] = {0};
    double tb = 0, t0 = 0;
    for (int i = -1000; i < iters; i++) {
        if (i == 0) {
            tb = 0;
            t0 = MPI_Wtime();
        }
        double s = MPI_Wtime();
        MPI_Bcast(b, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
        tb += MPI_Wtime() - s;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double tot = (MPI_Wtime() - t0) / iters * 1e6, bc = tb / iters * 1e6, sb;
    MPI_Reduce(&bc, &sb, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (me == 0)
        printf("loop:%.2f bcast:%.2f\n", tot, sb / p);
    MPI_Finalize();
}
