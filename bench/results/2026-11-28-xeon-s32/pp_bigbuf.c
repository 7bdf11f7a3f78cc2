/* SPDX-License-Identifier: MIT */
/* An 8-byte ping-pong whose receives name a large buffer (argv[1] bytes):
 * a receive large enough to be offered to the write protocol must not
 * make small messages slower. Prints the one-way time of 3 rounds.
 * mpicc -O2 pp_bigbuf.c -o pp_bigbuf && mpiexec -n 2 ./pp_bigbuf 131072 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    int cap = atoi(argv[1]), n = 200000;
    char *b = calloc(cap, 1);
    for (int rep = 0; rep < 3; rep++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (r == 0) {
                MPI_Send(b, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(b, cap, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(b, cap, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t;
        if (r == 0)
            printf("cap %d: %.3f us\n", cap, t / n / 2 * 1e6);
    }
    MPI_Finalize();
}
