/* SPDX-License-Identifier: MIT */
/* MPI_Abort: "abort CODE RANK" makes rank RANK (default: the last) call
 * MPI_Abort(MPI_COMM_WORLD, CODE) (default 7) while the other ranks block
 * in a receive that will never be satisfied. The launcher must exit with
 * CODE and leave no rank behind (tests/scripts/abort.sh checks). Should
 * MPI_Abort return, the program says so and exits 0 on every rank. With
 * MT_ABORT_MODE=exit in the environment the rank calls exit(CODE) without
 * MPI_Finalize instead: the job must end the same way, with CODE. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int code = argc > 1 ? atoi(argv[1]) : 7;
    int who = argc > 2 ? atoi(argv[2]) : mt_size - 1;
    int v = 0;
    if (who < 0 || who >= mt_size)
        who = mt_size - 1;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == who) {
        const char *mode = getenv("MT_ABORT_MODE");
        if (mode && strcmp(mode, "exit") == 0)
            exit(code);
        MPI_Abort(MPI_COMM_WORLD, code);
        fprintf(stderr, "abort: MPI_Abort returned\n");
        for (int r = 0; r < mt_size; r++)
            if (r != who)
                MPI_Send(&v, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, who, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
