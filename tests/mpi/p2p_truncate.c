/* SPDX-License-Identifier: MIT */
/* Truncation: under MPI_ERRORS_RETURN a message longer than the receive
 * buffer yields MPI_ERR_TRUNCATE, not a byte is written outside the buffer
 * (guard zones on both sides, small, medium and >= 1 MiB messages, receive
 * posted before and after the send), the sender's side completes normally,
 * and the job carries on: the next message on the same pair is intact.
 * Also Irecv+Wait, Waitall (MPI_ERR_IN_STATUS with per-request MPI_ERROR)
 * and an MPI_ANY_SOURCE receive. */
#include "mpitest.h"

#define GUARD 4096
#define FILL 0x5A

struct tcase {
    int msg;  /* bytes sent */
    int room; /* bytes the receiver offers */
};

static const struct tcase cases[] = {
    {100, 64}, /* small, eager/fastbox */
    {49, 48},  /* one byte over a cache line */
    {64 * MT_KIB, 16 * MT_KIB + 3},
    {MT_MIB + 5, MT_MIB}, /* large: single-copy / rendezvous */
    {4 * MT_MIB, MT_MIB + 17},
    {4 * MT_MIB, 1},
};
#define NC ((int)(sizeof(cases) / sizeof(cases[0])))

/* A receive area with guard zones: [GUARD][room][GUARD], all FILL. */
static char *area_new(int room)
{
    char *a = mt_malloc((size_t)room + 2 * GUARD);
    memset(a, FILL, (size_t)room + 2 * GUARD);
    return a;
}

static void area_check(const char *a, int room, const char *what)
{
    MT_ALL(a, GUARD, FILL, what);
    MT_ALL(a + GUARD + room, GUARD, FILL, what);
}

/* One case, receive posted 'early' (before a barrier the sender waits for)
 * or late (sender's Isend is started before the barrier). Then a follow-up
 * message of exactly 'room' bytes must arrive intact. */
static void one_case(const struct tcase *c, int early, int dest, int src,
                     int idx)
{
    char *sb = mt_malloc((size_t)c->msg), *a = area_new(c->room);
    char *follow = mt_malloc((size_t)c->room);
    uint32_t seed = (uint32_t)(idx * 10 + early);
    MPI_Request sreq[2], rreq = MPI_REQUEST_NULL;
    MPI_Status st;
    int rc;

    mt_fill(sb, (size_t)c->msg, seed);
    mt_fill(follow, (size_t)c->room, seed + 5000);
    if (early)
        MT_MPI(MPI_Irecv(a + GUARD, c->room, MPI_BYTE, src, 11, MPI_COMM_WORLD,
                         &rreq));
    else
        MT_MPI(MPI_Isend(sb, c->msg, MPI_BYTE, dest, 11, MPI_COMM_WORLD,
                         &sreq[0]));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (early) {
        MT_MPI(MPI_Isend(sb, c->msg, MPI_BYTE, dest, 11, MPI_COMM_WORLD,
                         &sreq[0]));
        rc = MPI_Wait(&rreq, &st);
        MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "pre-posted Irecv + Wait");
    } else {
        rc = MPI_Recv(a + GUARD, c->room, MPI_BYTE, src, 11, MPI_COMM_WORLD,
                      &st);
        MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "late Recv");
    }
    area_check(a, c->room, "guard around truncated receive");
    MT_MPI(MPI_Isend(follow, c->room, MPI_BYTE, dest, 11, MPI_COMM_WORLD,
                     &sreq[1]));
    memset(a, FILL, (size_t)c->room + 2 * GUARD);
    MT_MPI(
        MPI_Recv(a + GUARD, c->room, MPI_BYTE, src, 11, MPI_COMM_WORLD, &st));
    /* The truncated message is the receiver's error; the sender's requests
     * complete without one. */
    MT_MPI(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE));
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    MT_EQ(n, c->room, "follow-up message count");
    MT_VERIFY(a + GUARD, (size_t)c->room, seed + 5000, "follow-up message");
    area_check(a, c->room, "guard around follow-up receive");
    free(sb);
    free(a);
    free(follow);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* Waitall over three receives, the middle one truncated: MPI_ERR_IN_STATUS,
 * MPI_ERROR set per request, neighbours received intact. */
static void waitall_case(int dest, int src)
{
    const int big = 2 * MT_MIB, room = MT_MIB;
    char *sb = mt_malloc((size_t)big), *a = area_new(room);
    char r0[32], r2[32];
    MPI_Request rq[3], sq[3];
    MPI_Status st[3];

    mt_fill(sb, (size_t)big, 77);
    MT_MPI(MPI_Irecv(r0, 32, MPI_BYTE, src, 12, MPI_COMM_WORLD, &rq[0]));
    MT_MPI(
        MPI_Irecv(a + GUARD, room, MPI_BYTE, src, 12, MPI_COMM_WORLD, &rq[1]));
    MT_MPI(MPI_Irecv(r2, 32, MPI_BYTE, src, 12, MPI_COMM_WORLD, &rq[2]));
    MT_MPI(MPI_Isend(sb, 32, MPI_BYTE, dest, 12, MPI_COMM_WORLD, &sq[0]));
    MT_MPI(MPI_Isend(sb, big, MPI_BYTE, dest, 12, MPI_COMM_WORLD, &sq[1]));
    MT_MPI(MPI_Isend(sb, 32, MPI_BYTE, dest, 12, MPI_COMM_WORLD, &sq[2]));
    for (int i = 0; i < 3; i++)
        st[i].MPI_ERROR = -12345;
    int rc = MPI_Waitall(3, rq, st);
    MT_ERRCLASS(rc, MPI_ERR_IN_STATUS, "Waitall with a truncated receive");
    MT_ERRCLASS(st[1].MPI_ERROR, MPI_ERR_TRUNCATE, "status[1].MPI_ERROR");
    /* The others either completed (MPI_SUCCESS) or, as the standard allows,
     * were left pending (MPI_ERR_PENDING, request still active): finish
     * those with MPI_Wait. Either way they must not fail. */
    for (int i = 0; i < 3; i += 2) {
        if (st[i].MPI_ERROR == MPI_ERR_PENDING) {
            MT_CHECK(rq[i] != MPI_REQUEST_NULL, "pending request was freed");
            MT_MPI(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
        } else {
            MT_EQ(st[i].MPI_ERROR, MPI_SUCCESS, "neighbour's MPI_ERROR");
            MT_CHECK(rq[i] == MPI_REQUEST_NULL, "completed request not freed");
        }
    }
    MT_CHECK(rq[1] == MPI_REQUEST_NULL, "failed request not freed");
    MT_VERIFY(r0, 32, 77, "first message beside the truncated one");
    MT_VERIFY(r2, 32, 77, "last message beside the truncated one");
    area_check(a, room, "guard in Waitall case");
    MT_MPI(MPI_Waitall(3, sq, MPI_STATUSES_IGNORE));
    free(sb);
    free(a);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* MPI_ANY_SOURCE receive that truncates: status still names the source. */
static void any_source_case(int dest, int src)
{
    const int msg = 300 * MT_KIB, room = 1000;
    char *sb = mt_malloc((size_t)msg), *a = area_new(room);
    MPI_Request sq;
    MPI_Status st;
    mt_fill(sb, (size_t)msg, 99);
    MT_MPI(MPI_Isend(sb, msg, MPI_BYTE, dest, 13, MPI_COMM_WORLD, &sq));
    st.MPI_SOURCE = -3;
    int rc = MPI_Recv(a + GUARD, room, MPI_BYTE, MPI_ANY_SOURCE, 13,
                      MPI_COMM_WORLD, &st);
    MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "ANY_SOURCE Recv");
    MT_EQ(st.MPI_SOURCE, src, "truncated ANY_SOURCE status source");
    MT_EQ(st.MPI_TAG, 13, "truncated ANY_SOURCE status tag");
    area_check(a, room, "guard around ANY_SOURCE truncation");
    MT_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    free(sb);
    free(a);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int dest = (mt_rank + 1) % mt_size, src = (mt_rank + mt_size - 1) % mt_size;
    for (int i = 0; i < NC; i++) {
        one_case(&cases[i], 0, dest, src, i);
        one_case(&cases[i], 1, dest, src, i);
    }
    waitall_case(dest, src);
    any_source_case(dest, src);
    return mt_finish("p2p_truncate");
}
