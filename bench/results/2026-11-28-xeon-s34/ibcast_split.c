#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n = 40000, sz = 65536;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    char *b = malloc(sz);
    double ti = 0, tw = 0, tt = 0, a[2][3] = {{0}};
    int cnt[2] = {0};
    for (int i = 0; i < n + 100; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Request q;
        MPI_Ibcast(b, sz, MPI_BYTE, 0, MPI_COMM_WORLD, &q);
        double t1 = MPI_Wtime();
        while (MPI_Wtime() - t1 < 3.5e-6)
            ;
        double t2 = MPI_Wtime();
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        double t3 = MPI_Wtime();
        if (i >= 100) {
            ti += t1 - t0;
            tw += t3 - t2;
            tt += t3 - t0;
            int k = (t1 - t0) > 1e-6;
            cnt[k]++;
            a[k][0] += t1 - t0;
            a[k][1] += t3 - t2;
            a[k][2] += t3 - t0;
        }
    }
    for (int k = 0; k < 2; k++)
        if (cnt[k])
            printf("rank %d class %d (%d): init %.2f wait %.2f total %.2f\n", r,
                   k, cnt[k], a[k][0] / cnt[k] * 1e6, a[k][1] / cnt[k] * 1e6,
                   a[k][2] / cnt[k] * 1e6);
    printf("rank %d: init %.2f wait %.2f total %.2f us\n", r, ti / n * 1e6,
           tw / n * 1e6, tt / n * 1e6);
    MPI_Finalize();
}
