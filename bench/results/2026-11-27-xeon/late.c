#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b)
{
    double x = *(double *)a, y = *(double *)b;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int n = argc > 1 ? atoi(argv[1]) : 32768, it = 2000;
    char *b = aligned_alloc(4096, n);
    memset(b, r, n);
    double *tr = calloc(it, sizeof(double)), *ti = calloc(it, sizeof(double)),
           *tw = calloc(it, sizeof(double));
    for (int i = 0; i < it; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0) {
            MPI_Request q;
            double t = MPI_Wtime();
            MPI_Isend(b, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &q);
            double t2 = MPI_Wtime();
            ti[i] = t2 - t;
            /* compute past the receiver's recv */ while (MPI_Wtime() - t2 <
                                                          60e-6)
                ;
            t = MPI_Wtime();
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            tw[i] = MPI_Wtime() - t;
        } else {
            double t = MPI_Wtime();
            while (MPI_Wtime() - t < 20e-6)
                ;
            t = MPI_Wtime();
            MPI_Recv(b, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            tr[i] = MPI_Wtime() - t;
        }
    }
    double *v = r == 0 ? ti : tr;
    qsort(v, it, sizeof(double), cmp);
    if (r == 0)
        qsort(tw, it, sizeof(double), cmp);
    if (r == 0)
        printf("rank0 isend %.2f us wait %.2f us\n", ti[it / 2] * 1e6,
               tw[it / 2] * 1e6);
    else
        printf("rank1 recv %.2f us\n", tr[it / 2] * 1e6);
    MPI_Finalize();
    return 0;
}
