/* SPDX-License-Identifier: MIT */
/* Messages longer than one pull piece (4 MiB), which single-copy
 * mechanisms read a piece per progress pass: every byte arrives, a
 * truncated receive gets MPI_ERR_TRUNCATE with nothing written past its
 * buffer, and small messages between the two ranks keep flowing (and keep
 * their order) while a long copy is under way. Ring pattern, any rank
 * count. */
#include "mpitest.h"

#define LONG (13 * MT_MIB + 12345)
#define CUT (9 * MT_MIB + 7)
#define GUARD 4096

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    char *sb = mt_malloc(LONG), *rb = mt_malloc(LONG + GUARD);
    mt_fill(sb, LONG, (uint32_t)mt_rank);

    /* 1. whole message, with small ones before and after it */
    MPI_Request rq[6];
    int before = -1, after = -1, one = 1, two = 2;
    MT_MPI(MPI_Irecv(&before, 1, MPI_INT, src, 1, MPI_COMM_WORLD, &rq[0]));
    MT_MPI(MPI_Irecv(rb, LONG, MPI_BYTE, src, 2, MPI_COMM_WORLD, &rq[1]));
    MT_MPI(MPI_Irecv(&after, 1, MPI_INT, src, 3, MPI_COMM_WORLD, &rq[2]));
    MT_MPI(MPI_Isend(&one, 1, MPI_INT, dest, 1, MPI_COMM_WORLD, &rq[3]));
    MT_MPI(MPI_Isend(sb, LONG, MPI_BYTE, dest, 2, MPI_COMM_WORLD, &rq[4]));
    MT_MPI(MPI_Isend(&two, 1, MPI_INT, dest, 3, MPI_COMM_WORLD, &rq[5]));
    MT_MPI(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
    MT_EQ(before, 1, "small message before the long one");
    MT_EQ(after, 2, "small message after the long one");
    MT_VERIFY(rb, LONG, (uint32_t)src, "long message");

    /* 2. truncated: CUT bytes land, the guard stays untouched */
    memset(rb, 0x5a, LONG + GUARD);
    MPI_Status st;
    MPI_Request r2;
    MT_MPI(MPI_Isend(sb, LONG, MPI_BYTE, dest, 4, MPI_COMM_WORLD, &r2));
    int rc = MPI_Recv(rb, CUT, MPI_BYTE, src, 4, MPI_COMM_WORLD, &st);
    MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "long message into a short buffer");
    MT_MPI(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    MT_VERIFY(rb, CUT, (uint32_t)src, "truncated message's first bytes");
    for (size_t i = CUT; i < (size_t)LONG + GUARD; i++)
        MT_CHECK((unsigned char)rb[i] == 0x5a,
                 "byte %zu past the receive buffer was written", i);
    free(sb);
    free(rb);
    return mt_finish("p2p_large");
}
