/* SPDX-License-Identifier: MIT */
/* Completion calls over mixed nonblocking traffic: Waitall, Waitany,
 * Waitsome, Testall, Testany, Testsome and Test loops over Isend/Irecv/
 * Issend of mixed sizes, each request completed exactly once, statuses
 * filled, inactive (MPI_REQUEST_NULL) entries handled as the standard says
 * (empty status, MPI_UNDEFINED index/outcount), and Issend not completing
 * before its receive is matched. */
#include "mpitest.h"

#define NR 8 /* receives (and sends) per round */

static const int sizes[NR] = {0,    8,      1000, 64 * MT_KIB,
                              4096, MT_MIB, 48,   300 * MT_KIB};

static int dest, src;
static char *sb[NR], *rb[NR];

static uint32_t seed_of(int round, int s, int i)
{
    return (uint32_t)(round * 1000 + s * 10 + i);
}

/* Post NR receives (tags 0..NR-1) and NR sends; 'sync' uses Issend.
 * req[0..NR) are the receives, req[NR..2NR) the sends. */
static void post(int round, MPI_Request *req, int sync)
{
    for (int i = 0; i < NR; i++) {
        memset(rb[i], 0, (size_t)sizes[i]);
        MT_MPI(MPI_Irecv(rb[i], sizes[i], MPI_BYTE, src, i, MPI_COMM_WORLD,
                         &req[i]));
    }
    for (int i = NR - 1; i >= 0; i--) {
        mt_fill(sb[i], (size_t)sizes[i], seed_of(round, mt_rank, i));
        if (sync)
            MT_MPI(MPI_Issend(sb[i], sizes[i], MPI_BYTE, dest, i,
                              MPI_COMM_WORLD, &req[NR + i]));
        else
            MT_MPI(MPI_Isend(sb[i], sizes[i], MPI_BYTE, dest, i, MPI_COMM_WORLD,
                             &req[NR + i]));
    }
}

/* Check completion index i (status st) of round 'round'. */
static void check_done(int round, int i, const MPI_Status *st, const char *what)
{
    MT_CHECK(i >= 0 && i < 2 * NR, "%s: index %d out of range", what, i);
    if (i >= NR)
        return; /* a send: nothing to verify in its status */
    int c = -1;
    MT_EQ(st->MPI_SOURCE, src, what);
    MT_EQ(st->MPI_TAG, i, what);
    MPI_Get_count(st, MPI_BYTE, &c);
    MT_EQ(c, sizes[i], what);
    MT_VERIFY(rb[i], (size_t)sizes[i], seed_of(round, src, i), what);
}

/* The status of an inactive request is "empty". */
static void check_empty(const MPI_Status *st, const char *what)
{
    int c = -1;
    MT_EQ(st->MPI_SOURCE, MPI_ANY_SOURCE, what);
    MT_EQ(st->MPI_TAG, MPI_ANY_TAG, what);
    MPI_Get_count(st, MPI_BYTE, &c);
    MT_EQ(c, 0, what);
}

static void round_waitall(int round)
{
    MPI_Request req[2 * NR];
    MPI_Status st[2 * NR];
    post(round, req, 0);
    MT_MPI(MPI_Waitall(2 * NR, req, st));
    for (int i = 0; i < 2 * NR; i++) {
        MT_EQ(req[i], MPI_REQUEST_NULL, "Waitall frees requests");
        check_done(round, i, &st[i], "Waitall");
    }
}

static void round_waitany(int round, int sync)
{
    MPI_Request req[2 * NR];
    int seen[2 * NR] = {0};
    post(round, req, sync);
    for (int k = 0; k < 2 * NR; k++) {
        MPI_Status st;
        int idx = -1;
        MT_MPI(MPI_Waitany(2 * NR, req, &idx, &st));
        MT_CHECK(idx >= 0 && idx < 2 * NR && !seen[idx],
                 "Waitany index %d repeated or out of range", idx);
        seen[idx] = 1;
        MT_EQ(req[idx], MPI_REQUEST_NULL, "Waitany frees the request");
        check_done(round, idx, &st, sync ? "Waitany/Issend" : "Waitany");
    }
    MPI_Status st;
    int idx = 0;
    MT_MPI(MPI_Waitany(2 * NR, req, &idx, &st));
    MT_EQ(idx, MPI_UNDEFINED, "Waitany over inactive requests");
}

static void round_waitsome(int round)
{
    MPI_Request req[2 * NR];
    MPI_Status st[2 * NR];
    int idx[2 * NR], seen[2 * NR] = {0}, done = 0, out = -1;
    post(round, req, 0);
    while (done < 2 * NR) {
        MT_MPI(MPI_Waitsome(2 * NR, req, &out, idx, st));
        MT_CHECK(out >= 1 && out <= 2 * NR - done, "Waitsome outcount %d", out);
        for (int k = 0; k < out; k++) {
            MT_CHECK(!seen[idx[k]], "Waitsome index %d twice", idx[k]);
            seen[idx[k]] = 1;
            check_done(round, idx[k], &st[k], "Waitsome");
        }
        done += out;
    }
    MT_MPI(MPI_Waitsome(2 * NR, req, &out, idx, st));
    MT_EQ(out, MPI_UNDEFINED, "Waitsome over inactive requests");
}

static void round_testall(int round)
{
    MPI_Request req[2 * NR];
    MPI_Status st[2 * NR];
    int flag = 0;
    post(round, req, 0);
    while (!flag)
        MT_MPI(MPI_Testall(2 * NR, req, &flag, st));
    for (int i = 0; i < 2 * NR; i++) {
        MT_EQ(req[i], MPI_REQUEST_NULL, "Testall frees requests");
        check_done(round, i, &st[i], "Testall");
    }
}

static void round_testany(int round)
{
    MPI_Request req[2 * NR];
    int seen[2 * NR] = {0}, done = 0;
    post(round, req, 0);
    while (done < 2 * NR) {
        MPI_Status st;
        int idx = -1, flag = 0;
        MT_MPI(MPI_Testany(2 * NR, req, &idx, &flag, &st));
        if (!flag) {
            MT_EQ(idx, MPI_UNDEFINED, "Testany index without completion");
            continue;
        }
        MT_CHECK(idx >= 0 && idx < 2 * NR && !seen[idx],
                 "Testany index %d repeated or out of range", idx);
        seen[idx] = 1;
        check_done(round, idx, &st, "Testany");
        done++;
    }
    MPI_Status st;
    int idx = 0, flag = 0;
    MT_MPI(MPI_Testany(2 * NR, req, &idx, &flag, &st));
    MT_EQ(flag, 1, "Testany over inactive requests sets flag");
    MT_EQ(idx, MPI_UNDEFINED, "Testany over inactive requests");
}

static void round_testsome(int round)
{
    MPI_Request req[2 * NR];
    MPI_Status st[2 * NR];
    int idx[2 * NR], seen[2 * NR] = {0}, done = 0, out = -1;
    post(round, req, 0);
    while (done < 2 * NR) {
        MT_MPI(MPI_Testsome(2 * NR, req, &out, idx, st));
        MT_CHECK(out >= 0 && out <= 2 * NR - done, "Testsome outcount %d", out);
        for (int k = 0; k < out; k++) {
            MT_CHECK(!seen[idx[k]], "Testsome index %d twice", idx[k]);
            seen[idx[k]] = 1;
            check_done(round, idx[k], &st[k], "Testsome");
        }
        done += out;
    }
    MT_MPI(MPI_Testsome(2 * NR, req, &out, idx, st));
    MT_EQ(out, MPI_UNDEFINED, "Testsome over inactive requests");
}

/* Test loop per request, in reverse order of posting. */
static void round_test(int round)
{
    MPI_Request req[2 * NR];
    post(round, req, 0);
    for (int i = 2 * NR - 1; i >= 0; i--) {
        MPI_Status st;
        int flag = 0;
        while (!flag)
            MT_MPI(MPI_Test(&req[i], &flag, &st));
        MT_EQ(req[i], MPI_REQUEST_NULL, "Test frees the request");
        check_done(round, i, &st, "Test");
    }
}

/* Issend must not complete before the receiver matches it. The receiver
 * posts its receive only after getting a token this rank sends after
 * testing, so a successful Test here would be a real bug, not a race. */
static void issend_sync(void)
{
    int v = mt_rank + 100, got = -1, tok = 1, t = 0, flag = 1;
    MPI_Request sreq, treq;
    MT_MPI(MPI_Issend(&v, 1, MPI_INT, dest, 50, MPI_COMM_WORLD, &sreq));
    for (int k = 0; k < 100; k++) {
        MT_MPI(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
        MT_EQ(flag, 0, "Issend complete before the receive was posted");
    }
    MT_MPI(MPI_Isend(&tok, 1, MPI_INT, dest, 51, MPI_COMM_WORLD, &treq));
    MT_MPI(
        MPI_Recv(&t, 1, MPI_INT, src, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_MPI(
        MPI_Recv(&got, 1, MPI_INT, src, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_EQ(got, src + 100, "Issend payload");
    MT_MPI(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MT_MPI(MPI_Wait(&treq, MPI_STATUS_IGNORE));
}

static void null_requests(void)
{
    MPI_Request r = MPI_REQUEST_NULL,
                rs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];
    int flag = 0;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    MT_MPI(MPI_Wait(&r, &st));
    check_empty(&st, "Wait(MPI_REQUEST_NULL)");
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    MT_MPI(MPI_Test(&r, &flag, &st));
    MT_EQ(flag, 1, "Test(MPI_REQUEST_NULL) flag");
    check_empty(&st, "Test(MPI_REQUEST_NULL)");
    MT_MPI(MPI_Waitall(3, rs, sts));
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Waitall over MPI_REQUEST_NULL");
    flag = 0;
    MT_MPI(MPI_Testall(3, rs, &flag, sts));
    MT_EQ(flag, 1, "Testall over MPI_REQUEST_NULL");
    MT_MPI(MPI_Waitall(0, NULL, NULL));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(mt_size >= 2, "needs at least 2 ranks");
    dest = (mt_rank + 1) % mt_size;
    src = (mt_rank + mt_size - 1) % mt_size;
    for (int i = 0; i < NR; i++) {
        sb[i] = mt_malloc((size_t)sizes[i]);
        rb[i] = mt_malloc((size_t)sizes[i]);
    }
    null_requests();
    for (int rep = 0; rep < 2; rep++) {
        int r = rep * 10;
        round_waitall(r + 1);
        round_waitany(r + 2, 0);
        round_waitany(r + 3, 1);
        round_waitsome(r + 4);
        round_testall(r + 5);
        round_testany(r + 6);
        round_testsome(r + 7);
        round_test(r + 8);
        issend_sync();
    }
    for (int i = 0; i < NR; i++) {
        free(sb[i]);
        free(rb[i]);
    }
    return mt_finish("nb_wait");
}
