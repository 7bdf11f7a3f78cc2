/* SPDX-License-Identifier: MIT */
/* Helper for the crash clean-up scripts (tests/scripts): "crash selfkill
 * MARKER" makes the last rank SIGKILL itself after every pair of ranks has
 * moved a 1 MiB message (so shared segments and transfer paths are set up
 * and a large message is in flight); "crash hang MARKER" prints "ready"
 * from rank 0 once all ranks are up and then blocks every rank forever, so
 * the script can kill the launcher. MARKER only tags the command line. */
#include <signal.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int selfkill = argc > 1 && strcmp(argv[1], "selfkill") == 0;
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    char *sb = mt_malloc(MT_MIB), *rb = mt_malloc(MT_MIB);
    int v = 0;

    mt_fill(sb, MT_MIB, (uint32_t)mt_rank);
    MT_MPI(MPI_Sendrecv(sb, MT_MIB, MPI_BYTE, dest, 0, rb, MT_MIB, MPI_BYTE,
                        src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_VERIFY(rb, MT_MIB, (uint32_t)src, "warm-up exchange");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (selfkill) {
        /* Leave a large send pending towards the victim, then kill it. */
        MPI_Request req;
        MT_MPI(MPI_Isend(sb, MT_MIB, MPI_BYTE, dest, 5, MPI_COMM_WORLD, &req));
        if (mt_rank == mt_size - 1)
            raise(SIGKILL);
        MPI_Recv(rb, MT_MIB, MPI_BYTE, src, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        /* Survivors wait for a message the dead rank would have sent. */
        MPI_Recv(&v, 1, MPI_INT, mt_size - 1, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    } else {
        if (mt_rank == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    fprintf(stderr, "crash: rank %d was never supposed to get here\n", mt_rank);
    MPI_Finalize();
    return 0;
}
