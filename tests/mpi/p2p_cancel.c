/* SPDX-License-Identifier: MIT */
/* Cancelling sends (MPI 4.0 3.8.4): a send marked for cancellation either
 * is cancelled, and its message is never received, or completes normally
 * and its message is received - never both, never neither - and the wait
 * on it returns whatever the receiver does meanwhile.
 *
 * - unmatched: a send whose receiver has posted nothing (it is blocked in
 *   another receive) is cancelled, at sizes that take every protocol
 *   (mailbox, cell, push, rendezvous), standard, synchronous and buffered,
 *   nonblocking and persistent (restarted afterwards, then delivered); the
 *   receiver then gets the next message on that tag, not the cancelled one;
 * - matched: a send whose message was received is not cancelled;
 * - freed: a request freed right after its cancel still takes its message
 *   back;
 * - order: of two sends on one tag, the second cancelled: the receiver gets
 *   the first and then a third (MPICH's scancel_unmatch);
 * - self: sends to ourselves, cancelled while unmatched, kept once matched;
 * - race: every rank sends to the next and receives from the previous,
 *   the receive posted at a random moment and the cancel at another; the
 *   sender's outcome travels to the receiver, whose receive must then hold
 *   the message (byte for byte) or be cancellable itself.
 *
 * Safe with more ranks than cores: every wait is a blocking MPI call. */
#include "mpitest.h"

#define TAG 7
#define CTRL 8
#define RACE 9

static const int sizes[] = {0, 1, 100, 3000, 40000, 300000, 2 * MT_MIB};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

enum kind {
    K_ISEND,
    K_ISSEND,
    K_IBSEND,
    K_SEND_INIT,
    K_SSEND_INIT,
    K_BSEND_INIT,
    K_COUNT
};
static const char *const kind_name[K_COUNT] = {
    "Isend", "Issend", "Ibsend", "Send_init", "Ssend_init", "Bsend_init"};

static int persistent(enum kind k)
{
    return k >= K_SEND_INIT;
}

static void start_send(enum kind k, const void *buf, int n, int dest, int tag,
                       MPI_Request *req)
{
    switch (k) {
    case K_ISEND:
        MT_MPI(MPI_Isend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req));
        break;
    case K_ISSEND:
        MT_MPI(MPI_Issend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req));
        break;
    case K_IBSEND:
        MT_MPI(MPI_Ibsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req));
        break;
    case K_SEND_INIT:
        MT_MPI(MPI_Send_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req));
        MT_MPI(MPI_Start(req));
        break;
    case K_SSEND_INIT:
        MT_MPI(
            MPI_Ssend_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req));
        MT_MPI(MPI_Start(req));
        break;
    default:
        MT_MPI(
            MPI_Bsend_init(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, req));
        MT_MPI(MPI_Start(req));
        break;
    }
}

static int cancelled(const MPI_Status *st)
{
    int flag = -1;
    MT_MPI(MPI_Test_cancelled(st, &flag));
    return flag;
}

/* Receive one message from src on tag into buf (capacity cap) and check
 * it has n bytes of seed's pattern. */
static void recv_check(void *buf, int cap, int src, int tag, int n,
                       uint32_t seed, const char *what)
{
    MPI_Status st;
    int got = -1;
    MT_MPI(MPI_Recv(buf, cap, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
    MT_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    MT_EQ(got, n, what);
    MT_EQ(cancelled(&st), 0, what);
    MT_VERIFY(buf, (size_t)n, seed, what);
}

static void unmatched(uint8_t *sbuf, uint8_t *rbuf)
{
    int last = mt_size - 1;
    for (int k = 0; k < K_COUNT; k++)
        for (int i = 0; i < NSIZES; i++) {
            int n = sizes[i];
            uint32_t seed = (uint32_t)(100 + k * 16 + i);
            char what[96];
            snprintf(what, sizeof what, "unmatched %s of %d bytes",
                     kind_name[k], n);
            if (mt_rank == 0) {
                MPI_Request req;
                MPI_Status st;
                mt_fill(sbuf, (size_t)n, seed);
                start_send((enum kind)k, sbuf, n, last, TAG, &req);
                MT_MPI(MPI_Cancel(&req));
                MT_MPI(MPI_Wait(&req, &st));
                MT_EQ(cancelled(&st), 1, what);
                int flag = 1;
                MT_MPI(MPI_Send(&flag, 1, MPI_INT, last, CTRL, MPI_COMM_WORLD));
                if (persistent((enum kind)k)) {
                    /* The persistent request starts again as new. */
                    MT_MPI(MPI_Start(&req));
                    MT_MPI(MPI_Wait(&req, &st));
                    MT_EQ(cancelled(&st), 0, what);
                    MT_MPI(MPI_Request_free(&req));
                }
                uint32_t next = seed + 1000;
                mt_fill(sbuf, 8, next);
                MT_MPI(MPI_Send(sbuf, 8, MPI_BYTE, last, TAG, MPI_COMM_WORLD));
            } else if (mt_rank == last) {
                int flag = 0;
                MT_MPI(MPI_Recv(&flag, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                if (persistent((enum kind)k))
                    recv_check(rbuf, 2 * MT_MIB, 0, TAG, n, seed, what);
                recv_check(rbuf, 2 * MT_MIB, 0, TAG, 8, seed + 1000, what);
            }
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
}

static void matched(uint8_t *sbuf, uint8_t *rbuf)
{
    int last = mt_size - 1;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < NSIZES; i++) {
            int n = sizes[i];
            uint32_t seed = (uint32_t)(300 + k * 16 + i);
            char what[96];
            snprintf(what, sizeof what, "matched %s of %d bytes", kind_name[k],
                     n);
            if (mt_rank == 0) {
                MPI_Request req;
                MPI_Status st;
                mt_fill(sbuf, (size_t)n, seed);
                start_send((enum kind)k, sbuf, n, last, TAG, &req);
                int ack = 0;
                MT_MPI(MPI_Recv(&ack, 1, MPI_INT, last, CTRL, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                MT_MPI(MPI_Cancel(&req));
                MT_MPI(MPI_Cancel(&req)); /* twice: no different */
                MT_MPI(MPI_Wait(&req, &st));
                MT_EQ(cancelled(&st), 0, what);
            } else if (mt_rank == last) {
                recv_check(rbuf, 2 * MT_MIB, 0, TAG, n, seed, what);
                int ack = 1;
                MT_MPI(MPI_Send(&ack, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD));
            }
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
}

/* A request freed right after MPI_Cancel, before the receiver answered:
 * the answer finds the request gone from the program (never from the
 * library) and the message is still taken back - the receiver, blocked in
 * another receive meanwhile, handles the cancel before that message. */
static void freed(uint8_t *sbuf)
{
    int last = mt_size - 1;
    static const enum kind kinds[] = {K_ISEND, K_IBSEND, K_SEND_INIT,
                                      K_BSEND_INIT};
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < NSIZES; i++) {
            int n = sizes[i];
            char what[96];
            snprintf(what, sizeof what, "freed %s of %d bytes",
                     kind_name[kinds[j]], n);
            if (mt_rank == 0) {
                MPI_Request req;
                mt_fill(sbuf, (size_t)n, 700);
                start_send(kinds[j], sbuf, n, last, TAG, &req);
                MT_MPI(MPI_Cancel(&req));
                MT_MPI(MPI_Request_free(&req));
                MT_EQ(req, MPI_REQUEST_NULL, what);
                int go = 1;
                MT_MPI(MPI_Send(&go, 1, MPI_INT, last, CTRL, MPI_COMM_WORLD));
            } else if (mt_rank == last) {
                int go = 0, flag = 1;
                MT_MPI(MPI_Recv(&go, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
                MT_MPI(MPI_Iprobe(0, TAG, MPI_COMM_WORLD, &flag,
                                  MPI_STATUS_IGNORE));
                MT_EQ(flag, 0, what);
            }
            MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
}

static void order(uint8_t *rbuf)
{
    int last = mt_size - 1;
    uint8_t a[64], b[64], c[64];
    mt_fill(a, sizeof a, 501);
    mt_fill(b, sizeof b, 502);
    mt_fill(c, sizeof c, 503);
    if (mt_rank == 0) {
        MPI_Request req[2];
        MPI_Status st;
        MT_MPI(MPI_Isend(a, 64, MPI_BYTE, last, TAG, MPI_COMM_WORLD, &req[0]));
        MT_MPI(MPI_Isend(b, 64, MPI_BYTE, last, TAG, MPI_COMM_WORLD, &req[1]));
        MT_MPI(MPI_Cancel(&req[1]));
        MT_MPI(MPI_Wait(&req[1], &st));
        MT_EQ(cancelled(&st), 1, "order: the second of two sends");
        int go = 1;
        MT_MPI(MPI_Send(&go, 1, MPI_INT, last, CTRL, MPI_COMM_WORLD));
        MT_MPI(MPI_Send(c, 64, MPI_BYTE, last, TAG, MPI_COMM_WORLD));
        MT_MPI(MPI_Wait(&req[0], &st));
        MT_EQ(cancelled(&st), 0, "order: the first of two sends");
    } else if (mt_rank == last) {
        /* Both messages come while we wait for another. */
        int go = 0;
        MT_MPI(MPI_Recv(&go, 1, MPI_INT, 0, CTRL, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        recv_check(rbuf, 64, 0, TAG, 64, 501, "order: first message");
        recv_check(rbuf, 64, 0, TAG, 64, 503, "order: after the cancelled");
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void self(uint8_t *sbuf, uint8_t *rbuf)
{
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < NSIZES; i++) {
            int n = sizes[i];
            char what[96];
            snprintf(what, sizeof what, "self %s of %d bytes", kind_name[k], n);
            MPI_Request req, rreq;
            MPI_Status st;
            mt_fill(sbuf, (size_t)n, 600);
            start_send((enum kind)k, sbuf, n, mt_rank, TAG, &req);
            MT_MPI(MPI_Cancel(&req));
            MT_MPI(MPI_Wait(&req, &st));
            MT_EQ(cancelled(&st), 1, what);
            /* Once matched, it stays sent. */
            MT_MPI(MPI_Irecv(rbuf, 2 * MT_MIB, MPI_BYTE, mt_rank, TAG,
                             MPI_COMM_WORLD, &rreq));
            mt_fill(sbuf, (size_t)n, 601);
            start_send((enum kind)k, sbuf, n, mt_rank, TAG, &req);
            MT_MPI(MPI_Cancel(&req));
            MT_MPI(MPI_Wait(&req, &st));
            MT_EQ(cancelled(&st), 0, what);
            MT_MPI(MPI_Wait(&rreq, &st));
            int got = -1;
            MT_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
            MT_EQ(got, n, what);
            MT_VERIFY(rbuf, (size_t)n, 601, what);
        }
    int flag = 1;
    MT_MPI(MPI_Iprobe(mt_rank, TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    MT_EQ(flag, 0, "self: a cancelled message left behind");
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* A few microseconds of work, some of them inside MPI. */
static void dawdle(unsigned *rng)
{
    *rng = *rng * 1103515245u + 12345u;
    unsigned spins = (*rng >> 16) % 4000;
    double t = MPI_Wtime() + spins * 1e-8;
    while (MPI_Wtime() < t) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag,
                   MPI_STATUS_IGNORE);
    }
}

static void race(uint8_t *sbuf, uint8_t *rbuf, int iters)
{
    static const int rsizes[] = {4, 2000, 40000, 300000};
    int to = (mt_rank + 1) % mt_size, from = (mt_rank + mt_size - 1) % mt_size;
    unsigned rng = 7919u * (unsigned)(mt_rank + 1);
    int outcome[2] = {0, 0};
    for (int it = 0; it < iters; it++) {
        int n = rsizes[it % 4];
        enum kind k = (enum kind)((it / 4) % K_COUNT);
        uint32_t sseed = (uint32_t)(it * mt_size + mt_rank);
        uint32_t rseed = (uint32_t)(it * mt_size + from);
        char what[96];
        snprintf(what, sizeof what, "race %d: %s of %d bytes", it, kind_name[k],
                 n);
        MPI_Request sreq, rreq = MPI_REQUEST_NULL;
        MPI_Status st;
        int post_late = it % 5 == 4; /* the receive after the outcome */
        mt_fill(sbuf, (size_t)n, sseed);
        start_send(k, sbuf, n, to, RACE, &sreq);
        if (!post_late && (it & 1))
            MT_MPI(MPI_Irecv(rbuf, n, MPI_BYTE, from, RACE, MPI_COMM_WORLD,
                             &rreq));
        dawdle(&rng);
        MT_MPI(MPI_Cancel(&sreq));
        if (!post_late && !(it & 1))
            MT_MPI(MPI_Irecv(rbuf, n, MPI_BYTE, from, RACE, MPI_COMM_WORLD,
                             &rreq));
        if (it % 3 == 0) {
            int done = 0;
            while (!done)
                MT_CHECK(MPI_Test(&sreq, &done, &st) == MPI_SUCCESS, "%s",
                         what);
        } else {
            MT_CHECK(MPI_Wait(&sreq, &st) == MPI_SUCCESS, "%s", what);
        }
        int mine = cancelled(&st);
        if (persistent((enum kind)k))
            MT_MPI(MPI_Request_free(&sreq));
        outcome[mine]++;
        int theirs = -1;
        MT_MPI(MPI_Sendrecv(&mine, 1, MPI_INT, to, CTRL, &theirs, 1, MPI_INT,
                            from, CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (post_late && !theirs)
            MT_MPI(MPI_Irecv(rbuf, n, MPI_BYTE, from, RACE, MPI_COMM_WORLD,
                             &rreq));
        if (theirs) {
            /* Never received: our receive (if any) is still waiting. */
            if (rreq != MPI_REQUEST_NULL) {
                MT_MPI(MPI_Cancel(&rreq));
                MT_MPI(MPI_Wait(&rreq, &st));
                MT_EQ(cancelled(&st), 1, what);
            }
        } else {
            MT_CHECK(MPI_Wait(&rreq, &st) == MPI_SUCCESS, "%s (receive)", what);
            int got = -1;
            MT_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
            MT_EQ(got, n, what);
            MT_EQ(cancelled(&st), 0, what);
            MT_VERIFY(rbuf, (size_t)n, rseed, what);
        }
        /* Our sender starts its next message only now (with 3 or more
         * ranks it would not wait for us otherwise, and its next message
         * could match the receive cancelled just above). */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    int all[2];
    MT_MPI(MPI_Reduce(outcome, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("# race: %d sends cancelled, %d received\n", all[1], all[0]);
    int flag = 1;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                      MPI_STATUS_IGNORE));
    MT_EQ(flag, 0, "race: a message left behind");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    uint8_t *sbuf = mt_malloc(2 * MT_MIB), *rbuf = mt_malloc(2 * MT_MIB);
    /* Room for two buffered messages of the largest size at once. */
    int bsize = 2 * (2 * MT_MIB + MPI_BSEND_OVERHEAD);
    void *battach = mt_malloc((size_t)bsize);
    MT_MPI(MPI_Buffer_attach(battach, bsize));
    unmatched(sbuf, rbuf);
    matched(sbuf, rbuf);
    freed(sbuf);
    order(rbuf);
    self(sbuf, rbuf);
    race(sbuf, rbuf, 200);
    void *bdet;
    MT_MPI(MPI_Buffer_detach(&bdet, &bsize));
    free(battach);
    free(sbuf);
    free(rbuf);
    return mt_finish("p2p_cancel");
}
