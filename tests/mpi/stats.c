/* SPDX-License-Identifier: MIT */
/* Traffic with known protocol counts for FERRY_STATS (checked by
 * tests/scripts/stats.sh): rank 0 sends rank 1 ten 8-byte messages (the
 * mailbox), five of 1 KiB (eager cells) and, after rank 1 has posted its
 * receives for them and said so (an empty message to rank 0, through the
 * mailbox), three of 1 MiB (rendezvous into receives that were waiting:
 * seed 002's write-protocol availability). Every byte checked.
 *
 * With the argument "burst": the shapes auto's push of nonblocking sends
 * tells apart. Rank 1 sends rank 0 one byte; rank 0 then streams four
 * 32 KiB MPI_Isends to rank 1 (nothing from rank 1 in between: the first
 * two are pushed, the other two take the rendezvous); then three rounds of
 * a 32 KiB ping-pong by MPI_Isend: rank 0's first ping still follows the
 * stream (rendezvous), every other send is the first since its peer's
 * message (pushed). */
#include "mpitest.h"

#define BIG (1 << 20)
#define MID (32 << 10)

static void fill_mid(unsigned char *b, int k)
{
    for (int i = 0; i < MID; i++)
        b[i] = (unsigned char)(i * 7 + k);
}

static void check_mid(const unsigned char *b, int k, const char *what)
{
    for (int i = 0; i < MID; i++)
        if (b[i] != (unsigned char)(i * 7 + k))
            MT_FAIL("%s %d: byte %d", what, k, i);
}

static int burst(void)
{
    static unsigned char m[4][MID];
    MPI_Request r[4];
    unsigned char one = 1;
    int peer = 1 - mt_rank;
    if (mt_rank == 1)
        MT_MPI(MPI_Send(&one, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
    else
        MT_MPI(MPI_Recv(&one, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) {
        if (mt_rank == 0) {
            fill_mid(m[i], i);
            MT_MPI(MPI_Isend(m[i], MID, MPI_BYTE, 1, 10 + i, MPI_COMM_WORLD,
                             &r[i]));
        } else {
            MT_MPI(MPI_Irecv(m[i], MID, MPI_BYTE, 0, 10 + i, MPI_COMM_WORLD,
                             &r[i]));
        }
    }
    MT_MPI(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    if (mt_rank == 1)
        for (int i = 0; i < 4; i++)
            check_mid(m[i], i, "streamed message");
    for (int round = 0; round < 3; round++) {
        for (int turn = 0; turn < 2; turn++) {
            int k = 100 + round * 2 + turn;
            if (mt_rank == turn) {
                fill_mid(m[0], k);
                MT_MPI(MPI_Isend(m[0], MID, MPI_BYTE, peer, k, MPI_COMM_WORLD,
                                 &r[0]));
                MT_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
            } else {
                MT_MPI(MPI_Recv(m[1], MID, MPI_BYTE, peer, k, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                check_mid(m[1], k, "ping-pong message");
            }
        }
    }
    return mt_finish("stats burst");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size != 2)
        MT_FAIL("needs exactly 2 ranks");
    if (argc > 1 && !strcmp(argv[1], "burst"))
        return burst();
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
        /* The receives are posted: rank 1's empty message, after its
         * offers in the pair's order. A barrier here would send rank 1 a
         * message that may still be in flight when it posts them, which
         * makes the offers stale (write.c, W2) - by timing. */
        MT_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, 300, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
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
        MT_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, 300, MPI_COMM_WORLD));
        MT_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < BIG; k++)
                if (big[i][k] != 'A' + i)
                    MT_FAIL("1 MiB message %d byte %d", i, k);
    }
    return mt_finish("stats");
}
