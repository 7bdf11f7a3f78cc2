/* Allgather and Bcast between malloc'd buffers (sbuf = malloc(n); rbuf =
 * malloc(P * n)), as a program would allocate them: time per call, us. */
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
    size_t n = argc > 1 ? strtoul(argv[1], 0, 0) : 65536;
    int iters = argc > 2 ? atoi(argv[2]) : 500;
    char *sbuf = malloc(n), *rbuf = malloc(n * (size_t)P);
    memset(sbuf, me + 1, n);
    memset(rbuf, 0, n * (size_t)P);
    double ta = 0, tb = 0;
    for (int i = -20; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Allgather(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE,
                      MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        MPI_Bcast(me == 0 ? sbuf : rbuf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        double t3 = MPI_Wtime();
        if (i >= 0) {
            ta += t1 - t0;
            tb += t3 - t2;
        }
    }
    for (int r = 0; r < P; r++)
        if (rbuf[(size_t)r * n] != r + 1 && r != me) {
            fprintf(stderr, "bad\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    double a[2] = {ta / iters * 1e6, tb / iters * 1e6}, m[2];
    MPI_Reduce(a, m, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("n=%zu P=%d allgather %.2f us bcast %.2f us (rbuf-sbuf mod 4096 "
               "= %ld)\n",
               n, P, m[0], m[1], (long)((rbuf - sbuf) & 4095));
    MPI_Finalize();
    return 0;
}
