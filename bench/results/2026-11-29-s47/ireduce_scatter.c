#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* MPI_Reduce_scatter_block in place (and not), floats, per-rank average us. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long bytes = argc > 1 ? atol(argv[1]) : 1048576;
    int it = argc > 2 ? atoi(argv[2]) : 200,
        inplace = argc > 3 ? atoi(argv[3]) : 1;
    int n = (int)(bytes / 4), blk = n / P;
    float *s = malloc(bytes), *r = malloc(bytes);
    double t = 0;
    for (int i = 0; i < it + 10; i++) {
        for (int k = 0; k < n; k++)
            r[k] = s[k] = (float)(k % 7);
        MPI_Barrier(MPI_COMM_WORLD);
        double a = MPI_Wtime();
        {
            MPI_Request q;
            MPI_Ireduce_scatter_block(inplace ? MPI_IN_PLACE : s, r, blk,
                                      MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        if (i >= 10)
            t += MPI_Wtime() - a;
        for (int k = 0; k < blk; k++)
            if (r[k] != (float)(((long)me * blk + k) % 7) * P) {
                printf("bad %d %d\n", me, k);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
    double avg;
    t = t / it * 1e6;
    MPI_Reduce(&t, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("ireduce_scatter_block %s %ld B, %d ranks: %.1f us\n",
               inplace ? "in place" : "", bytes, P, avg / P);
    MPI_Finalize();
    return 0;
}
