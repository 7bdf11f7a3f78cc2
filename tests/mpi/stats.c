/* SPDX-License-Identifier: MIT */
/* Traffic with known protocol counts for FERRY_STATS (checked by
 * tests/scripts/stats.sh): rank 0 sends rank 1 ten 8-byte messages (the
 * mailbox), five of 1 KiB (eager cells) and, after rank 1 has posted its
 * receives for them, three of 1 MiB (rendezvous into receives that were
 * waiting: seed 002's write-protocol availability). Every byte checked. */
#include "mpitest.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size != 2)
        MT_FAIL("needs exactly 2 ranks");
    static unsigned char small[5][1024], big[3][BIG];
    if (mt_rank == 0) {
        for (int i = 0; i < 10; i++) {
            unsigned char b[8];
            memset(b, 'a' + i, sizeof(b));
            MT_MPI(MPI_Send(b, 8, MPI_BYTE, 1, i, MPI_COMM_WORLD));
        }
        for (int i = 0; i < 5; i++) {
            memset(small[i], 'k' + i, sizeof(small[i]));
            MT_MPI(
                MPI_Send(small[i], 1024, MPI_BYTE, 1, 100 + i, MPI_COMM_WORLD));
        }
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* they are unexpected */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* the receives are posted */
        for (int i = 0; i < 3; i++) {
            memset(big[i], 'A' + i, BIG);
            MT_MPI(MPI_Send(big[i], BIG, MPI_BYTE, 1, 200 + i, MPI_COMM_WORLD));
        }
    } else {
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        /* All 15 have been sent; probing the last one takes every packet
         * before it off the wire too (pair order), with no receive posted
         * (a shared-memory barrier need not look at the channels). */
        MT_MPI(MPI_Probe(0, 104, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 10; i++) {
            unsigned char b[8];
            MT_MPI(MPI_Recv(b, 8, MPI_BYTE, 0, i, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            for (int k = 0; k < 8; k++)
                if (b[k] != 'a' + i)
                    MT_FAIL("8-byte message %d byte %d", i, k);
        }
        for (int i = 0; i < 5; i++) {
            MT_MPI(MPI_Recv(small[i], 1024, MPI_BYTE, 0, 100 + i,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int k = 0; k < 1024; k++)
                if (small[i][k] != 'k' + i)
                    MT_FAIL("1 KiB message %d byte %d", i, k);
        }
        MPI_Request r[3];
        for (int i = 0; i < 3; i++)
            MT_MPI(MPI_Irecv(big[i], BIG, MPI_BYTE, 0, 200 + i, MPI_COMM_WORLD,
                             &r[i]));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < BIG; k++)
                if (big[i][k] != 'A' + i)
                    MT_FAIL("1 MiB message %d byte %d", i, k);
    }
    return mt_finish("stats");
}
