#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p, n = 20000, sz = argc > 1 ? atoi(argv[1]) : 8,
              blocking = argc > 2 ? atoi(argv[2]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    char *b = malloc(sz > 0 ? sz : 1);
    double tt = 0, tb = 0, hist[4] = {0};
    for (int i = 0; i < n + 200; i++) {
        double tb0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (blocking)
            MPI_Bcast(b, sz, MPI_BYTE, 0, MPI_COMM_WORLD);
        else {
            MPI_Request q;
            MPI_Ibcast(b, sz, MPI_BYTE, 0, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        double t1 = MPI_Wtime();
        if (i >= 200) {
            tt += t1 - t0;
            tb += t0 - tb0;
            double d = (t1 - t0) * 1e6;
            hist[d < 1 ? 0 : d < 10 ? 1 : d < 100 ? 2 : 3]++;
        }
    }
    double all[64];
    double me = tt / n * 1e6;
    MPI_Gather(&me, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    printf("rank %d: coll %.2f us barrier %.2f us  <1us %.0f <10us %.0f <100us "
           "%.0f more %.0f\n",
           r, me, tb / n * 1e6, hist[0], hist[1], hist[2], hist[3]);
    MPI_Finalize();
}
