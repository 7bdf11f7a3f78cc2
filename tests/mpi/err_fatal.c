/* SPDX-License-Identifier: MIT */
/* An invalid call under the default MPI_ERRORS_ARE_FATAL: rank 0 sends to
 * rank == size while every other rank waits for a message that will never
 * come. The library must print an error naming the call ("MPI_Send") and
 * take the whole job down with a nonzero status; tests/scripts/
 * expect_fatal.sh checks both. If the call returns instead, rank 0 releases
 * the others and the job exits 0, which the script reports as a failure. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int v = 42;
    mt_init(&argc, &argv);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        int rc = MPI_Send(&v, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD);
        fprintf(stderr,
                "err_fatal: MPI_Send to an invalid rank returned %d under "
                "MPI_ERRORS_ARE_FATAL\n",
                rc);
        for (int r = 1; r < mt_size; r++)
            MPI_Send(&v, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
