/* SPDX-License-Identifier: MIT */
/* A late receiver that overlaps: rank 1 posts MPI_Irecv after the message
 * arrived (30 us after the barrier), computes 300 us, then MPI_Wait; rank 0
 * times its blocking MPI_Send (mean of 300). Run: mpiexec -n 2 ./late_overlap
 * SIZE (bench/README.md, "Exchanges, both ways at once"). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void spin(double us)
{
    double t = MPI_Wtime();
    while ((MPI_Wtime() - t) * 1e6 < us)
        ;
}
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(r % 2, &s);
    sched_setaffinity(0, sizeof s, &s);
    int n = atoi(argv[1]);
    char *b = malloc(n);
    for (int i = 0; i < n; i++)
        b[i] = (char)i;
    double ts = 0;
    int it = 300;
    for (int i = 0; i < it + 20; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0) {
            double t = MPI_Wtime();
            MPI_Send(b, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            if (i >= 20)
                ts += MPI_Wtime() - t;
        } else {
            MPI_Request q;
            spin(30);
            MPI_Irecv(b, n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &q);
            spin(300);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
    }
    if (r == 0)
        printf("size %d sender's MPI_Send %.1f us\n", n, ts / it * 1e6);
    MPI_Finalize();
    return 0;
}
