/* SPDX-License-Identifier: MIT */
/* Exchanges between pairs of ranks (0-1, 2-3, ...; an odd last rank only
 * joins the barriers), every byte checked, at sizes across the eager
 * limit, the push and shared-copy thresholds and the 4 MiB pull piece:
 * - MPI_Irecv, MPI_Send, MPI_Wait on both sides, and the same with
 *   MPI_Isend + MPI_Waitall and with MPI_Sendrecv, where one side is
 *   late in some rounds so its receive matches a message that arrived
 *   first: MPI_Irecv then queues the read for the progress engine
 *   instead of copying inside the call (p2p/p2p.c, proto/rndv.c), and
 *   the two ranks read each other's messages at once;
 * - a receive matched that way, then MPI_Barrier before MPI_Wait: the
 *   sender, blocked in MPI_Send, is released by the barrier's progress;
 * - MPI_Cancel of such a receive fails (it is matched), and its bytes
 *   arrive whole;
 * - MPI_Test in a loop completes such a receive. */
#include <unistd.h>

#include "mpitest.h"

static const int sizes[] = {0,
                            1,
                            4096,
                            4097,
                            32768,
                            65536,
                            65537,
                            131072,
                            300001,
                            1 << 20,
                            (1 << 20) + 4096,
                            (5 << 20) + 3};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define CAP ((5 << 20) + 3)

enum shape { BLOCKING, NONBLOCKING, SENDRECV, NSHAPES };

static uint32_t seed_of(int round, int shape, int size, int from)
{
    return (uint32_t)(round * 7919 + shape * 104729 + size * 31 + from);
}

static void one(unsigned char *sb, unsigned char *rb, int peer, int round,
                int shape, int size)
{
    /* Rounds 1 and 2: one side arrives late, so its receive matches a
     * message already there. */
    int late = (round % 3 == 1 && mt_rank < peer) ||
               (round % 3 == 2 && mt_rank > peer);
    mt_fill(sb, (size_t)size, seed_of(round, shape, size, mt_rank));
    memset(rb, 0xa5, (size_t)size + 1);
    if (late)
        usleep(2000);
    MPI_Status st;
    int count = -1;
    if (shape == SENDRECV) {
        MT_MPI(MPI_Sendrecv(sb, size, MPI_BYTE, peer, 3, rb, CAP, MPI_BYTE,
                            peer, 3, MPI_COMM_WORLD, &st));
    } else {
        MPI_Request q[2];
        MT_MPI(MPI_Irecv(rb, CAP, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &q[0]));
        if (shape == BLOCKING) {
            MT_MPI(MPI_Send(sb, size, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
            MT_MPI(MPI_Wait(&q[0], &st));
        } else {
            MPI_Status sts[2];
            MT_MPI(
                MPI_Isend(sb, size, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &q[1]));
            MT_MPI(MPI_Waitall(2, q, sts));
            st = sts[0];
        }
    }
    MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_EQ(count, size, "exchange count");
    MT_EQ(st.MPI_SOURCE, peer, "exchange source");
    MT_VERIFY(rb, (size_t)size, seed_of(round, shape, size, peer),
              "exchanged bytes");
    MT_EQ(rb[size], 0xa5, "byte past the message");
}

static void exchanges(unsigned char *sb, unsigned char *rb, int peer)
{
    for (int round = 0; round < 3; round++)
        for (int shape = 0; shape < NSHAPES; shape++)
            for (int i = 0; i < NSIZES; i++) {
                if (peer >= 0)
                    one(sb, rb, peer, round, shape, sizes[i]);
                MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            }
}

/* The lower rank of the pair receives what the upper one sent first. */
static void matched_then(unsigned char *sb, unsigned char *rb, int peer,
                         int size, int how)
{
    uint32_t seed = (uint32_t)(size + how * 977);
    if (peer < 0) {
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    if (mt_rank > peer) {
        mt_fill(sb, (size_t)size, seed);
        MT_MPI(MPI_Send(sb, size, MPI_BYTE, peer, 9, MPI_COMM_WORLD));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    /* The message (its RTS, for the large ones) has arrived first. */
    MPI_Request q;
    MPI_Status st;
    MT_MPI(MPI_Probe(peer, 9, MPI_COMM_WORLD, &st));
    memset(rb, 0, (size_t)size);
    MT_MPI(MPI_Irecv(rb, CAP, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &q));
    if (how == 0) {
        /* The sender stays in MPI_Send until our barrier progresses. */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Wait(&q, &st));
    } else if (how == 1) {
        MT_MPI(MPI_Cancel(&q));
        MT_MPI(MPI_Wait(&q, &st));
        int cancelled = 1;
        MT_MPI(MPI_Test_cancelled(&st, &cancelled));
        MT_EQ(cancelled, 0, "a matched receive cancelled");
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        int flag = 0;
        while (!flag)
            MT_MPI(MPI_Test(&q, &flag, &st));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    int count = -1;
    MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
    MT_EQ(count, size, "matched receive count");
    MT_VERIFY(rb, (size_t)size, seed, "matched receive bytes");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    unsigned char *sb = mt_malloc(CAP), *rb = mt_malloc(CAP + 1);
    int peer = mt_rank ^ 1;
    if (peer >= mt_size)
        peer = -1;
    exchanges(sb, rb, peer);
    static const int msizes[] = {1000, 65536, 300001, (5 << 20) + 3};
    for (int how = 0; how < 3; how++)
        for (int i = 0; i < 4; i++)
            matched_then(sb, rb, peer, msizes[i], how);
    free(sb);
    free(rb);
    return mt_finish("p2p_exchange");
}
