/* SPDX-License-Identifier: MIT */
/* Non-overtaking order across protocol boundaries: one sender interleaves
 * messages from 0 bytes to 4 MiB (so eager, fastbox, pipelined and
 * single-copy paths are all mixed) on one tag and communicator, and the
 * receiver checks arrival order and every byte, with receives posted late,
 * posted early, half and half, with MPI_ANY_TAG and with MPI_ANY_SOURCE. */
#include "mpitest.h"

/* Sizes straddle every plausible threshold (cache line, fastbox, eager,
 * cell, pipeline, single copy); the order alternates large and small. */
static const int sizes[] = {
    4 * MT_MIB, 0,           MT_MIB, 8,           256 * MT_KIB,
    47,         64 * MT_KIB, 48,     16 * MT_KIB, 64,
    4096,       1000,        0,      8,           4 * MT_MIB,
    47,         MT_MIB,      48,     4096,        256 * MT_KIB,
    64,         16 * MT_KIB, 1000,   64 * MT_KIB,
};
#define NMSG ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define MAXMSG (4 * MT_MIB)
#define GUARD 64

static uint32_t seed_of(int phase, int src, int i)
{
    return (uint32_t)(phase * 100000 + src * 1000 + i);
}

/* Send buffers for one phase, filled for (phase, me). */
static char *sbuf[NMSG];

static void fill_sends(int phase)
{
    for (int i = 0; i < NMSG; i++)
        mt_fill(sbuf[i], (size_t)sizes[i], seed_of(phase, mt_rank, i));
}

/* Check a received message: status fields, count and every byte. */
static void check_msg(const char *what, const void *buf, const MPI_Status *st,
                      int want_src, int want_tag, int phase, int i)
{
    int count = -1;
    MT_EQ(st->MPI_SOURCE, want_src, what);
    MT_EQ(st->MPI_TAG, want_tag, what);
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count != sizes[i])
        MT_FAIL("%s: message %d from %d has %d bytes, expected %d (order "
                "violated?)",
                what, i, want_src, count, sizes[i]);
    MT_VERIFY(buf, (size_t)sizes[i], seed_of(phase, want_src, i), what);
}

/* Receive late: the sender has Isent everything before we post. */
static void phase_late(int phase, int dest, int src, int any_tag)
{
    MPI_Request req[NMSG];
    char *rbuf = mt_malloc(MAXMSG + GUARD);

    fill_sends(phase);
    for (int i = 0; i < NMSG; i++)
        MT_MPI(MPI_Isend(sbuf[i], sizes[i], MPI_BYTE, dest, any_tag ? i : 5,
                         MPI_COMM_WORLD, &req[i]));
    /* Make sure the whole sequence was started before receiving. */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NMSG; i++) {
        MPI_Status st;
        memset(rbuf + sizes[i], 0xA5, GUARD);
        MT_MPI(MPI_Recv(rbuf, MAXMSG, MPI_BYTE, src, any_tag ? MPI_ANY_TAG : 5,
                        MPI_COMM_WORLD, &st));
        check_msg(any_tag ? "late/ANY_TAG" : "late", rbuf, &st, src,
                  any_tag ? i : 5, phase, i);
        MT_ALL(rbuf + sizes[i], GUARD, 0xA5, "guard after message");
    }
    MT_MPI(MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE));
    free(rbuf);
}

/* Receive early: exact-size receives are all posted before any send, so a
 * message matched out of order would be truncated or carry wrong bytes.
 * 'split' posts only the first half early and the rest after the sends. */
static void phase_early(int phase, int dest, int src, int split)
{
    MPI_Request rreq[NMSG], sreq[NMSG];
    MPI_Status st[NMSG];
    char *rbuf[NMSG];
    int early = split ? NMSG / 2 : NMSG;

    fill_sends(phase);
    for (int i = 0; i < NMSG; i++)
        rbuf[i] = mt_malloc((size_t)sizes[i]);
    for (int i = 0; i < early; i++)
        MT_MPI(MPI_Irecv(rbuf[i], sizes[i], MPI_BYTE, src, 9, MPI_COMM_WORLD,
                         &rreq[i]));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (split) {
        for (int i = 0; i < NMSG; i++)
            MT_MPI(MPI_Isend(sbuf[i], sizes[i], MPI_BYTE, dest, 9,
                             MPI_COMM_WORLD, &sreq[i]));
        for (int i = early; i < NMSG; i++)
            MT_MPI(MPI_Irecv(rbuf[i], sizes[i], MPI_BYTE, src, 9,
                             MPI_COMM_WORLD, &rreq[i]));
        MT_MPI(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
    } else {
        /* Every receive is posted, so blocking sends cannot deadlock. */
        for (int i = 0; i < NMSG; i++)
            MT_MPI(
                MPI_Send(sbuf[i], sizes[i], MPI_BYTE, dest, 9, MPI_COMM_WORLD));
    }
    MT_MPI(MPI_Waitall(NMSG, rreq, st));
    for (int i = 0; i < NMSG; i++) {
        check_msg(split ? "half-early" : "early", rbuf[i], &st[i], src, 9,
                  phase, i);
        free(rbuf[i]);
    }
}

/* Every other rank sends its sequence to 'root', which receives with
 * MPI_ANY_SOURCE (and MPI_ANY_TAG when any_tag) and checks that each
 * source's messages arrive in that source's order. */
static void phase_any_source(int phase, int root, int any_tag)
{
    int n = mt_size;
    if (mt_rank != root) {
        MPI_Request req[NMSG];
        fill_sends(phase);
        for (int i = 0; i < NMSG; i++)
            MT_MPI(MPI_Isend(sbuf[i], sizes[i], MPI_BYTE, root,
                             any_tag ? 100 + i : 3, MPI_COMM_WORLD, &req[i]));
        MT_MPI(MPI_Waitall(NMSG, req, MPI_STATUSES_IGNORE));
        return;
    }
    char *rbuf = mt_malloc(MAXMSG + GUARD);
    int *next = calloc((size_t)n, sizeof(int));
    for (int k = 0; k < (n - 1) * NMSG; k++) {
        MPI_Status st;
        memset(rbuf, 0, 64);
        MT_MPI(MPI_Recv(rbuf, MAXMSG + GUARD, MPI_BYTE, MPI_ANY_SOURCE,
                        any_tag ? MPI_ANY_TAG : 3, MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE;
        MT_CHECK(s >= 0 && s < n && s != root, "bad MPI_SOURCE %d", s);
        MT_CHECK(next[s] < NMSG, "too many messages from %d", s);
        check_msg(any_tag ? "ANY_SOURCE+ANY_TAG" : "ANY_SOURCE", rbuf, &st, s,
                  any_tag ? 100 + next[s] : 3, phase, next[s]);
        next[s]++;
    }
    for (int s = 0; s < n; s++)
        if (s != root)
            MT_EQ(next[s], NMSG, "messages from each source");
    free(next);
    free(rbuf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;

    for (int i = 0; i < NMSG; i++)
        sbuf[i] = mt_malloc((size_t)sizes[i]);

    /* With one rank, dest == src == 0: the same sequences go to self. */
    phase_late(1, dest, src, 0);
    phase_late(2, dest, src, 1);
    phase_early(3, dest, src, 0);
    phase_early(4, dest, src, 1);
    phase_any_source(5, 0, 0);
    phase_any_source(6, mt_size - 1, 1);

    for (int i = 0; i < NMSG; i++)
        free(sbuf[i]);
    return mt_finish("p2p_order");
}
