#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* MPI_Scan / MPI_Exscan of n doubles (MPI_SUM), OSU-style: mean over ranks of
 * the per-call time, us. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long n = argc > 1 ? atol(argv[1]) : 131072;
    int iters = argc > 2 ? atoi(argv[2]) : 100,
        ex = argc > 3 ? atoi(argv[3]) : 0;
    double *s = malloc(n * sizeof(double)), *r = malloc(n * sizeof(double));
    for (long i = 0; i < n; i++)
        s[i] = me + i;
    double t = 0;
    for (int i = 0; i < iters + 10; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (ex)
            MPI_Exscan(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Scan(s, r, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (i >= 10)
            t += MPI_Wtime() - t0;
    }
    double mine = t / iters * 1e6, sum;
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s %ld doubles: %.1f us\n", ex ? "exscan" : "scan", n, sum / P);
    MPI_Finalize();
    return 0;
}
