/* SPDX-License-Identifier: MIT */
/* Send modes and request management: Ssend, Rsend/Irsend (receive posted
 * first), Bsend/Ibsend through MPI_Buffer_attach/detach, MPI_Request_free
 * on an active send, MPI_Cancel of an unmatched receive (which must not
 * steal a later message), MPI_PROC_NULL peers on every call, and
 * MPI_Sendrecv_replace, all for small and large sizes. */
#include "mpitest.h"

static int dest, src;

static uint32_t seed_of(int phase, int s, int i)
{
    return (uint32_t)(phase * 1000 + s * 10 + i);
}

/* Ring of blocking synchronous sends: rank 0 sends first, everyone else
 * receives first, so there is no cycle of Ssends waiting on each other. */
static void ssend_ring(void)
{
    static const int sz[] = {0, 100, 64 * MT_KIB, MT_MIB};
    char *sb = mt_malloc(MT_MIB), *rb = mt_malloc(MT_MIB);
    for (int i = 0; i < 4; i++) {
        int n = sz[i], c = -1;
        MPI_Status st;
        mt_fill(sb, (size_t)n, seed_of(1, mt_rank, i));
        if (mt_rank == 0) {
            MT_MPI(MPI_Ssend(sb, n, MPI_BYTE, dest, 1, MPI_COMM_WORLD));
            MT_MPI(MPI_Recv(rb, n, MPI_BYTE, src, 1, MPI_COMM_WORLD, &st));
        } else {
            MT_MPI(MPI_Recv(rb, n, MPI_BYTE, src, 1, MPI_COMM_WORLD, &st));
            MT_MPI(MPI_Ssend(sb, n, MPI_BYTE, dest, 1, MPI_COMM_WORLD));
        }
        MPI_Get_count(&st, MPI_BYTE, &c);
        MT_EQ(c, n, "Ssend count");
        MT_VERIFY(rb, (size_t)n, seed_of(1, src, i), "Ssend ring");
    }
    free(sb);
    free(rb);
}

/* Ready mode: the receive is posted before a barrier, the Rsend after. */
static void rsend_ring(void)
{
    static const int sz[] = {8, 4096, MT_MIB};
    char *sb = mt_malloc(MT_MIB), *rb = mt_malloc(MT_MIB);
    for (int i = 0; i < 3; i++) {
        int n = sz[i];
        MPI_Request rr, sr;
        mt_fill(sb, (size_t)n, seed_of(2, mt_rank, i));
        MT_MPI(MPI_Irecv(rb, n, MPI_BYTE, src, 2, MPI_COMM_WORLD, &rr));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (i % 2) {
            MT_MPI(MPI_Irsend(sb, n, MPI_BYTE, dest, 2, MPI_COMM_WORLD, &sr));
            MT_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        } else {
            MT_MPI(MPI_Rsend(sb, n, MPI_BYTE, dest, 2, MPI_COMM_WORLD));
        }
        MT_MPI(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        MT_VERIFY(rb, (size_t)n, seed_of(2, src, i), "Rsend ring");
    }
    free(sb);
    free(rb);
}

/* Buffered mode: every Bsend completes locally before the receiver has
 * posted anything (receives come after a barrier); detach waits for the
 * buffered messages to leave and hands back the attached buffer. */
static void bsend_ring(void)
{
    static const int sz[] = {10, 1000, 64 * MT_KIB, MT_MIB, 0};
    enum { NB = 5 };
    int total = 0, psz = 0;
    for (int i = 0; i < NB; i++) {
        MT_MPI(MPI_Pack_size(sz[i], MPI_BYTE, MPI_COMM_WORLD, &psz));
        total += psz + MPI_BSEND_OVERHEAD;
    }
    total += MPI_BSEND_OVERHEAD; /* the Ibsend below */
    MT_MPI(MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &psz));
    total += psz;
    char *att = mt_malloc((size_t)total), *sb = mt_malloc(MT_MIB);
    char *rb = mt_malloc(MT_MIB);
    MT_MPI(MPI_Buffer_attach(att, total));
    for (int i = 0; i < NB; i++) {
        mt_fill(sb, (size_t)sz[i], seed_of(3, mt_rank, i));
        MT_MPI(MPI_Bsend(sb, sz[i], MPI_BYTE, dest, 3, MPI_COMM_WORLD));
        /* The message was copied out: scribbling on sb must not matter. */
        memset(sb, 0xEE, (size_t)sz[i]);
    }
    int four[4] = {mt_rank, 1, 2, 3};
    MPI_Request br;
    MT_MPI(MPI_Ibsend(four, 4, MPI_INT, dest, 4, MPI_COMM_WORLD, &br));
    MT_MPI(MPI_Wait(&br, MPI_STATUS_IGNORE));
    four[0] = -1;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NB; i++) {
        MPI_Status st;
        int c = -1;
        MT_MPI(MPI_Recv(rb, MT_MIB, MPI_BYTE, src, 3, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &c);
        MT_EQ(c, sz[i], "Bsend count");
        MT_VERIFY(rb, (size_t)sz[i], seed_of(3, src, i), "Bsend ring");
    }
    int in[4] = {0};
    MT_MPI(MPI_Recv(in, 4, MPI_INT, src, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_EQ(in[0], src, "Ibsend payload");
    MT_EQ(in[3], 3, "Ibsend payload");
    void *back = NULL;
    int backsz = -1;
    MT_MPI(MPI_Buffer_detach(&back, &backsz));
    MT_CHECK(back == att, "Buffer_detach returned %p, attached %p", back,
             (void *)att);
    MT_EQ(backsz, total, "Buffer_detach size");
    free(att);
    free(sb);
    free(rb);
}

/* Request_free on active sends; the sender learns of delivery from an
 * acknowledgement, the only safe point to reuse the buffers. */
static void request_free(void)
{
    char *big = mt_malloc(MT_MIB), *rb = mt_malloc(MT_MIB);
    char small[64], rs[64];
    MPI_Request r;
    int ack = 0;
    mt_fill(big, MT_MIB, seed_of(5, mt_rank, 0));
    mt_fill(small, 64, seed_of(5, mt_rank, 1));
    MT_MPI(MPI_Isend(big, MT_MIB, MPI_BYTE, dest, 5, MPI_COMM_WORLD, &r));
    MT_MPI(MPI_Request_free(&r));
    MT_EQ(r, MPI_REQUEST_NULL, "Request_free sets MPI_REQUEST_NULL");
    MT_MPI(MPI_Isend(small, 64, MPI_BYTE, dest, 5, MPI_COMM_WORLD, &r));
    MT_MPI(MPI_Request_free(&r));
    MT_MPI(MPI_Recv(rb, MT_MIB, MPI_BYTE, src, 5, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    MT_VERIFY(rb, MT_MIB, seed_of(5, src, 0), "freed large Isend");
    MT_MPI(
        MPI_Recv(rs, 64, MPI_BYTE, src, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_VERIFY(rs, 64, seed_of(5, src, 1), "freed small Isend");
    MT_MPI(MPI_Sendrecv(&ack, 1, MPI_INT, src, 6, &ack, 1, MPI_INT, dest, 6,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    free(big);
    free(rb);
}

/* Cancel an unmatched receive (specific and wildcard source): Wait returns,
 * Test_cancelled is true, and a message sent afterwards with the same tag
 * goes to a fresh receive, not to the cancelled one. */
static void cancel_recv(void)
{
    int a = -1, b = -1, v = mt_rank + 7, flag = 0;
    MPI_Request r1, r2, sr;
    MPI_Status st;
    MT_MPI(MPI_Irecv(&a, 1, MPI_INT, src, 77, MPI_COMM_WORLD, &r1));
    MT_MPI(MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r2));
    MT_MPI(MPI_Cancel(&r1));
    MT_MPI(MPI_Wait(&r1, &st));
    MT_MPI(MPI_Test_cancelled(&st, &flag));
    MT_EQ(flag, 1, "cancelled specific-source receive");
    MT_MPI(MPI_Cancel(&r2));
    MT_MPI(MPI_Wait(&r2, &st));
    MT_MPI(MPI_Test_cancelled(&st, &flag));
    MT_EQ(flag, 1, "cancelled ANY_SOURCE receive");
    MT_EQ(a, -1, "cancelled receive buffer untouched");
    MT_EQ(b, -1, "cancelled receive buffer untouched");
    /* Nobody may send tag 77 until every rank has cancelled. */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Isend(&v, 1, MPI_INT, dest, 77, MPI_COMM_WORLD, &sr));
    MT_MPI(MPI_Recv(&a, 1, MPI_INT, src, 77, MPI_COMM_WORLD, &st));
    MT_EQ(a, src + 7, "message after cancel");
    MT_MPI(MPI_Test_cancelled(&st, &flag));
    MT_EQ(flag, 0, "a completed receive is not cancelled");
    MT_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MT_EQ(b, -1, "cancelled receive still untouched");
}

/* MPI_PROC_NULL: everything completes at once, receives report source
 * MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, and leave the buffer alone. */
static void proc_null(void)
{
    int buf[4] = {1, 2, 3, 4}, c = -1, flag = 0;
    MPI_Status st;
    MPI_Request r[2];
    MT_MPI(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MT_MPI(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MT_MPI(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL Recv source");
    MT_EQ(st.MPI_TAG, MPI_ANY_TAG, "PROC_NULL Recv tag");
    MPI_Get_count(&st, MPI_INT, &c);
    MT_EQ(c, 0, "PROC_NULL Recv count");
    MT_EQ(buf[0] + buf[3], 5, "PROC_NULL Recv left the buffer alone");
    MT_MPI(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[0]));
    MT_MPI(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[1]));
    MT_MPI(MPI_Test(&r[1], &flag, &st));
    MT_EQ(flag, 1, "PROC_NULL Irecv completes immediately");
    /* MPICH 4.0.2 leaves source and tag 0 here, against the standard. */
    if (!mt_on_mpich())
        MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL Irecv source");
    MT_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MT_MPI(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT,
                        MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL Sendrecv source");
    MT_MPI(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MT_EQ(st.MPI_SOURCE, MPI_PROC_NULL, "PROC_NULL Probe source");
    /* A chain with open ends: rank 0 has no left neighbour, the last rank
     * no right one, expressed with MPI_PROC_NULL. */
    int left = mt_rank == 0 ? MPI_PROC_NULL : mt_rank - 1;
    int right = mt_rank == mt_size - 1 ? MPI_PROC_NULL : mt_rank + 1;
    int out = mt_rank * 3, in = -99;
    MT_MPI(MPI_Sendrecv(&out, 1, MPI_INT, right, 2, &in, 1, MPI_INT, left, 2,
                        MPI_COMM_WORLD, &st));
    MT_EQ(in, left == MPI_PROC_NULL ? -99 : left * 3, "open chain");
}

static void sendrecv_replace(void)
{
    static const int sz[] = {8, 64 * MT_KIB, MT_MIB, 4 * MT_MIB};
    char *b = mt_malloc(4 * MT_MIB);
    for (int i = 0; i < 4; i++) {
        MPI_Status st;
        int c = -1;
        mt_fill(b, (size_t)sz[i], seed_of(8, mt_rank, i));
        MT_MPI(MPI_Sendrecv_replace(b, sz[i], MPI_BYTE, dest, 8, src, 8,
                                    MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &c);
        MT_EQ(c, sz[i], "Sendrecv_replace count");
        MT_EQ(st.MPI_SOURCE, src, "Sendrecv_replace source");
        MT_VERIFY(b, (size_t)sz[i], seed_of(8, src, i), "Sendrecv_replace");
    }
    free(b);
}

/* Empty messages with MPI_DATATYPE_NULL (count 0: nothing to move, any
 * datatype will do, as MPICH and Open MPI accept): blocking, nonblocking,
 * synchronous, persistent and Sendrecv around the ring; each arrives with
 * its tag and a count of 0. A null datatype with a nonzero count is still
 * MPI_ERR_TYPE. */
static void null_type_empty(void)
{
    MPI_Status st;
    int n = -1;
    if (mt_rank == 0) {
        MT_MPI(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, dest, 31, MPI_COMM_WORLD));
        MT_MPI(MPI_Ssend(NULL, 0, MPI_DATATYPE_NULL, dest, 32, MPI_COMM_WORLD));
    } else if (mt_rank == 1) {
        MT_MPI(
            MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, src, 31, MPI_COMM_WORLD, &st));
        MT_EQ(st.MPI_TAG, 31, "tag of an empty MPI_DATATYPE_NULL message");
        MT_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
        MT_EQ(n, 0, "count of an empty MPI_DATATYPE_NULL message");
        MPI_Request r;
        MT_MPI(
            MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, src, 32, MPI_COMM_WORLD, &r));
        MT_MPI(MPI_Wait(&r, &st));
        MT_EQ(st.MPI_TAG, 32, "tag of an empty synchronous message");
    }
    MPI_Request rq[2];
    MT_MPI(MPI_Send_init(NULL, 0, MPI_DATATYPE_NULL, dest, 33, MPI_COMM_WORLD,
                         &rq[0]));
    MT_MPI(MPI_Recv_init(NULL, 0, MPI_DATATYPE_NULL, src, 33, MPI_COMM_WORLD,
                         &rq[1]));
    MT_MPI(MPI_Startall(2, rq));
    MT_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MT_MPI(MPI_Request_free(&rq[0]));
    MT_MPI(MPI_Request_free(&rq[1]));
    MT_MPI(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, dest, 34, NULL, 0,
                        MPI_DATATYPE_NULL, src, 34, MPI_COMM_WORLD, &st));
    MT_EQ(st.MPI_SOURCE, src, "source of an empty Sendrecv");
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 0;
    MT_ERRCLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, dest, 35, MPI_COMM_WORLD),
                MPI_ERR_TYPE, "MPI_DATATYPE_NULL with count 1");
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    dest = (mt_rank + 1) % mt_size;
    src = (mt_rank + mt_size - 1) % mt_size;
    ssend_ring();
    rsend_ring();
    bsend_ring();
    request_free();
    cancel_recv();
    proc_null();
    sendrecv_replace();
    null_type_empty();
    return mt_finish("p2p_modes");
}
