#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int n = argc > 1 ? atoi(argv[1]) : 1048576;
    int it = argc > 2 ? atoi(argv[2]) : 200;
    int all = argc > 3 ? atoi(argv[3]) : 0;
    float *s = malloc(n), *r = malloc(n);
    for (int i = 0; i < n / 4; i++)
        s[i] = 1.0f;
    double t = 0, w0 = 0;
    for (int i = 0; i < it + 20; i++) {
        if (i == 20) {
            MPI_Barrier(MPI_COMM_WORLD);
            w0 = MPI_Wtime();
            t = 0;
        }
        double a = MPI_Wtime();
        MPI_Request q;
        if (all == 2) {
            MPI_Ireduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (all == 3) {
            MPI_Iallreduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (all)
            MPI_Allreduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Reduce(s, r, n / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        t += MPI_Wtime() - a;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double w = MPI_Wtime() - w0;
    double ts[64];
    MPI_Gather(&t, 1, MPI_DOUBLE, ts, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        double avg = 0;
        printf("per-rank us:");
        for (int i = 0; i < P; i++) {
            printf(" %.0f", ts[i] / it * 1e6);
            avg += ts[i];
        }
        printf("  avg %.0f  iter %.0f\n", avg / P / it * 1e6, w / it * 1e6);
    }
    MPI_Finalize();
    return 0;
}
