/* SPDX-License-Identifier: MIT */
/* Matched probe: MPI_Mprobe/Improbe take a message off the matching queues
 * so no other receive can steal it, for every protocol size; Mrecv/Imrecv
 * then deliver it byte-exact; MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC. */
#include "mpitest.h"

static const int sizes[] = {5, 1000, 100000, 3000000};

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_rank == 0) {
        MPI_Request rq[6];
        char *bufs[4];
        for (int i = 0; i < 4; i++) {
            bufs[i] = mt_malloc((size_t)sizes[i]);
            mt_fill(bufs[i], (size_t)sizes[i], (uint32_t)i);
            MT_MPI(MPI_Isend(bufs[i], sizes[i], MPI_CHAR, 1, 10 + i,
                             MPI_COMM_WORLD, &rq[i]));
        }
        /* Two messages with one envelope: the probed one must stay ours. */
        int a = 1, b = 2;
        MT_MPI(MPI_Isend(&a, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[4]));
        MT_MPI(MPI_Isend(&b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[5]));
        MT_MPI(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            free(bufs[i]);
    } else if (mt_rank == 1) {
        for (int i = 3; i >= 0; i--) {
            MPI_Message m;
            MPI_Status st;
            int n = -1, flag = 0;
            if (i % 2) {
                MT_MPI(MPI_Mprobe(0, 10 + i, MPI_COMM_WORLD, &m, &st));
            } else {
                while (!flag)
                    MT_MPI(MPI_Improbe(MPI_ANY_SOURCE, 10 + i, MPI_COMM_WORLD,
                                       &flag, &m, &st));
            }
            MT_EQ(st.MPI_SOURCE, 0, "probed source");
            MT_EQ(st.MPI_TAG, 10 + i, "probed tag");
            MT_MPI(MPI_Get_count(&st, MPI_CHAR, &n));
            MT_EQ(n, sizes[i], "probed size");
            char *b = mt_malloc((size_t)n);
            if (i == 2) {
                MPI_Request r;
                MT_MPI(MPI_Imrecv(b, n, MPI_CHAR, &m, &r));
                MT_MPI(MPI_Wait(&r, &st));
            } else {
                MT_MPI(MPI_Mrecv(b, n, MPI_CHAR, &m, &st));
            }
            MT_CHECK(m == MPI_MESSAGE_NULL, "message handle reset");
            MT_MPI(MPI_Get_count(&st, MPI_CHAR, &n));
            MT_EQ(n, sizes[i], "received size");
            MT_VERIFY(b, (size_t)n, (uint32_t)i, "matched receive");
            free(b);
        }
        MPI_Message m;
        MPI_Status st;
        int v = 0;
        MT_MPI(MPI_Mprobe(0, 5, MPI_COMM_WORLD, &m, &st));
        MT_MPI(
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
        MT_EQ(v, 2, "a wildcard receive after Mprobe gets the next message");
        MT_MPI(MPI_Mrecv(&v, 1, MPI_INT, &m, &st));
        MT_EQ(v, 1, "the probed message stayed reserved");
        MT_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st));
        MT_CHECK(m == MPI_MESSAGE_NO_PROC, "MPI_PROC_NULL gives NO_PROC");
        MT_MPI(MPI_Mrecv(NULL, 0, MPI_CHAR, &m, &st));
        MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "NO_PROC receive source");
        MT_CHECK(m == MPI_MESSAGE_NULL, "NO_PROC handle reset");
    }
    return mt_finish("p2p_mprobe");
}
