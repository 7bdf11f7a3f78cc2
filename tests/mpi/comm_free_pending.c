/* SPDX-License-Identifier: MIT */
/* MPI_Comm_free with operations still pending on the communicator: they
 * must complete normally, and a communicator created right after must not
 * reuse the freed one's context while they do (its traffic would match the
 * pending receives). Large messages so the rendezvous is still open. */
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int pairs = mt_size / 2 * 2;
    int peer = mt_rank ^ 1;
    char *sb = mt_malloc(MT_MIB), *rb = mt_malloc(MT_MIB);
    for (int it = 0; it < 20; it++) {
        MPI_Comm d, e;
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_Request rq[2];
        int active = mt_rank < pairs;
        if (active) {
            mt_fill(sb, MT_MIB, (uint32_t)(it * 64 + mt_rank));
            MT_MPI(MPI_Irecv(rb, MT_MIB, MPI_BYTE, peer, 0, d, &rq[0]));
            MT_MPI(MPI_Isend(sb, MT_MIB, MPI_BYTE, peer, 0, d, &rq[1]));
        }
        MT_MPI(MPI_Comm_free(&d));
        MT_CHECK(d == MPI_COMM_NULL, "freed handle is MPI_COMM_NULL");
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &e));
        if (active) {
            int x = mt_rank, y = -1;
            MT_MPI(MPI_Sendrecv(&x, 1, MPI_INT, peer, 0, &y, 1, MPI_INT, peer,
                                0, e, MPI_STATUS_IGNORE));
            MT_EQ(y, peer, "new communicator's traffic stays its own");
            MT_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            MT_VERIFY(rb, MT_MIB, (uint32_t)(it * 64 + peer),
                      "message on the freed communicator");
        }
        MT_MPI(MPI_Comm_free(&e));
    }
    free(sb);
    free(rb);
    return mt_finish("comm_free_pending");
}
