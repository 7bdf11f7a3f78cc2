/* SPDX-License-Identifier: MIT */
/* Collectives whose counts differ between ranks (erroneous programs, as
 * MPICH's test/mpi/errors/coll tests write them): the ranks that can see
 * the mismatch get an error - MPI_ERR_TRUNCATE where more data was sent
 * than their count takes (they get what fits), MPI_ERR_COUNT where less
 * (they get what was sent) - nothing is written past a receive count,
 * and every rank finishes the collective, so the communicator keeps
 * working. Bcast (the root's count against the others'), Reduce (the
 * root against the others), Allreduce (rank 0 against the others),
 * Allgather (rank 0's send count against everyone's receive count),
 * Scatter (the root's send count against the others' receive count),
 * Gather (the others' send count against the root's receive count), at
 * sizes on either side of each shared-memory layout (flag lines, inline
 * in a cell, a cell's data, read from the root's buffer, several cells),
 * but never on both sides of a size where the algorithm changes (coll/
 * shm.h: such a mismatch is not caught). Argument "nb": the nonblocking
 * forms, each waited for at once. Default collective settings only (the
 * point-to-point trees forward what a truncated rank received). */
#include "mpitest.h"

static int n, me;
static int s_nb;
static MPI_Request s_req;

#define COLL(call, icall) (s_nb ? nb_wait(icall) : (call))
static int nb_wait(int rc)
{
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(&s_req, MPI_STATUS_IGNORE);
}

#define SENT (-7)

static int val(int from, long k)
{
    return from * 1000003 + (int)k * 7 + 1;
}

static int *filled(long len, int from)
{
    int *b = mt_malloc(sizeof(int) * (size_t)(len + 1));
    for (long k = 0; k < len; k++)
        b[k] = val(from, k);
    b[len] = SENT;
    return b;
}

static int *sent(long len)
{
    int *b = mt_malloc(sizeof(int) * (size_t)(len + 1));
    for (long k = 0; k <= len; k++)
        b[k] = SENT;
    return b;
}

/* What a rank that receives 'theirs' ints into 'mine' must report. */
static int want_class(long theirs, long mine)
{
    return theirs == mine  ? MPI_SUCCESS
           : theirs > mine ? MPI_ERR_TRUNCATE
                           : MPI_ERR_COUNT;
}

static void expect(int rc, int cls, const char *what, long a, long b)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "%s%s (%ld against %ld ints) on rank %d", what,
             s_nb ? " (nonblocking)" : "", a, b, me);
    if (cls == MPI_SUCCESS)
        MT_EQ(rc, MPI_SUCCESS, msg);
    else
        MT_ERRCLASS(rc, cls, msg);
}

/* Whether this rank reported a mismatch since the last in_step(). */
static int s_seen;

/* A rank that reads mismatched data: class cls. In the nonblocking forms
 * a point-to-point schedule may run (sizes between a slot and
 * FERRY_COLL_CMA_MIN), whose trees forward what a rank received: there
 * only one rank that can see the mismatch is sure to report it, so
 * success is allowed and in_step() checks that some rank reported. */
static void reader(int rc, int cls, const char *what, long a, long b)
{
    if (rc != MPI_SUCCESS)
        s_seen = 1;
    if (s_nb && cls != MPI_SUCCESS && rc == MPI_SUCCESS)
        return;
    expect(rc, cls, what, a, b);
}

/* Either success or class cls (a rank that may or may not look at the
 * mismatched data, by algorithm). */
static void expect_maybe(int rc, int cls, const char *what, long a, long b)
{
    if (rc != MPI_SUCCESS) {
        s_seen = 1;
        expect(rc, cls, what, a, b);
    }
}

/* got[0..have) from 'from', got[have..cap] untouched. */
static void check_data(const int *got, long have, long cap, int from,
                       const char *what, long a, long b)
{
    for (long k = 0; k <= cap; k++) {
        int w = k < have ? val(from, k) : SENT;
        if (got[k] != w)
            MT_FAIL("%s%s (%ld against %ld ints) rank %d: int %ld is %d, "
                    "expected %d",
                    what, s_nb ? " (nonblocking)" : "", a, b, me, k, got[k], w);
    }
}

static long min_l(long a, long b)
{
    return a < b ? a : b;
}

/* A rooted collective's outcome: the root (count a) succeeds with its a
 * ints; a receiver (count b) reports the mismatch and holds what both
 * counts allow of the ints from 'from', nothing past them. */
static void check_rooted(int rc, const int *buf, int root, int from, long a,
                         long b, const char *what)
{
    char rwhat[64];
    snprintf(rwhat, sizeof(rwhat), "%s root", what);
    if (me == root) {
        expect(rc, MPI_SUCCESS, rwhat, a, b);
        check_data(buf, a, a, from, rwhat, a, b);
    } else {
        reader(rc, want_class(a, b), what, a, b);
        check_data(buf, min_l(a, b), b, from, what, a, b);
    }
}

/* Root count a, everyone else b. */
static void test_bcast(long a, long b, int root)
{
    long mine = me == root ? a : b;
    int *buf = me == root ? filled(mine, root) : sent(mine);
    int rc =
        COLL(MPI_Bcast(buf, (int)mine, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Ibcast(buf, (int)mine, MPI_INT, root, MPI_COMM_WORLD, &s_req));
    check_rooted(rc, buf, root, root, a, b, "Bcast");
    free(buf);
}

/* Reduce to root with count a there, b elsewhere (MPI_SUM of ints). */
static void test_reduce(long a, long b, int root)
{
    long mine = me == root ? a : b;
    int *in = filled(mine, 0), *out = sent(mine);
    int rc = COLL(
        MPI_Reduce(in, out, (int)mine, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
        MPI_Ireduce(in, out, (int)mine, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
                    &s_req));
    if (me == root) {
        reader(rc, want_class(b, a), "Reduce root", a, b);
        MT_EQ(out[mine], SENT, "Reduce root: the int past the count");
    } else {
        expect_maybe(rc, want_class(a, b), "Reduce", a, b);
    }
    free(in);
    free(out);
}

/* Allreduce with count a at rank 0, b elsewhere. */
static void test_allreduce(long a, long b)
{
    long mine = me == 0 ? a : b;
    int *in = filled(mine, 0), *out = sent(mine);
    int rc = COLL(
        MPI_Allreduce(in, out, (int)mine, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Iallreduce(in, out, (int)mine, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                       &s_req));
    reader(rc, me == 0 ? want_class(b, a) : want_class(a, b), "Allreduce", a,
           b);
    MT_EQ(out[mine], SENT, "Allreduce: the int past the count");
    free(in);
    free(out);
}

/* Allgather: rank 0 sends a ints, the others b; every rank takes blocks
 * of b. */
static void test_allgather(long a, long b)
{
    long s = me == 0 ? a : b;
    int *in = filled(s, me), *out = sent(b * n);
    int rc = COLL(MPI_Allgather(in, (int)s, MPI_INT, out, (int)b, MPI_INT,
                                MPI_COMM_WORLD),
                  MPI_Iallgather(in, (int)s, MPI_INT, out, (int)b, MPI_INT,
                                 MPI_COMM_WORLD, &s_req));
    if (me == 0) {
        if (a > b)
            reader(rc, MPI_ERR_TRUNCATE, "Allgather rank 0", a, b);
        else
            expect_maybe(rc, MPI_ERR_COUNT, "Allgather rank 0", a, b);
    } else {
        reader(rc, want_class(a, b), "Allgather", a, b);
    }
    /* Block 0 holds what rank 0 sent (what fits); the others are whole. */
    for (int r = 0; r < n; r++) {
        long have = r == 0 ? min_l(a, b) : b;
        for (long k = 0; k < b; k++) {
            int w = k < have ? val(r, k) : SENT;
            if (out[r * b + k] != w)
                MT_FAIL("Allgather%s (%ld against %ld) rank %d: block %d "
                        "int %ld is %d, expected %d",
                        s_nb ? " (nonblocking)" : "", a, b, me, r, k,
                        out[r * b + k], w);
        }
    }
    MT_EQ(out[b * n], SENT, "Allgather: the int past the blocks");
    free(in);
    free(out);
}

/* Scatter from root: blocks of a there, received into b elsewhere. */
static void test_scatter(long a, long b, int root)
{
    int *src = NULL;
    if (me == root) {
        src = mt_malloc(sizeof(int) * (size_t)(a * n + 1));
        for (int r = 0; r < n; r++)
            for (long k = 0; k < a; k++)
                src[r * a + k] = val(r, k);
    }
    long mine = me == root ? a : b;
    int *out = sent(mine);
    int rc = COLL(MPI_Scatter(src, (int)a, MPI_INT, out, (int)mine, MPI_INT,
                              root, MPI_COMM_WORLD),
                  MPI_Iscatter(src, (int)a, MPI_INT, out, (int)mine, MPI_INT,
                               root, MPI_COMM_WORLD, &s_req));
    check_rooted(rc, out, root, me, a, b, "Scatter");
    free(src);
    free(out);
}

/* Gather to root: it takes blocks of a, the others send b. */
static void test_gather(long a, long b, int root)
{
    long s = me == root ? a : b;
    int *in = filled(s, me), *out = me == root ? sent(a * n) : NULL;
    int rc = COLL(MPI_Gather(in, (int)s, MPI_INT, out, (int)a, MPI_INT, root,
                             MPI_COMM_WORLD),
                  MPI_Igather(in, (int)s, MPI_INT, out, (int)a, MPI_INT, root,
                              MPI_COMM_WORLD, &s_req));
    if (me == root) {
        reader(rc, want_class(b, a), "Gather root", a, b);
        for (int r = 0; r < n; r++) {
            long have = r == root ? a : min_l(a, b);
            for (long k = 0; k < a; k++) {
                int w = k < have ? val(r, k) : SENT;
                if (out[r * a + k] != w)
                    MT_FAIL("Gather%s (%ld against %ld) root: block %d int "
                            "%ld is %d, expected %d",
                            s_nb ? " (nonblocking)" : "", a, b, r, k,
                            out[r * a + k], w);
            }
        }
        MT_EQ(out[a * n], SENT, "Gather: the int past the blocks");
    } else if (b > a) {
        expect_maybe(rc, MPI_ERR_TRUNCATE, "Gather", a, b);
    } else {
        expect(rc, MPI_SUCCESS, "Gather", a, b);
    }
    free(in);
    free(out);
}

/* A correct collective after each mismatched one: the communicator still
 * works, and every rank is at the same collective. */
static void in_step(int round)
{
    int x[2] = {round, s_seen}, sum[2] = {0, 0};
    MT_MPI(MPI_Allreduce(x, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ(sum[0], round * n, "Allreduce after a mismatched collective");
    if (n > 1 && sum[1] == 0)
        MT_FAIL("round %d%s: no rank reported the mismatch", round,
                s_nb ? " (nonblocking)" : "");
    s_seen = 0;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    n = mt_size;
    me = mt_rank;
    s_nb = argc > 1 && strcmp(argv[1], "nb") == 0;
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Pairs of counts (ints) on one side of every algorithm change:
     * flag lines (up to 24 bytes), inline in a cell (up to 40), a cell's
     * data, within one reduction round (8192 ints) on the same side of
     * the slice size (2049 bytes). */
    static const long pairs[][2] = {{2, 5}, {10, 12}, {100, 300}, {5000, 7000}};
    int round = 0;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        for (int swap = 0; swap < 2; swap++) {
            long a = pairs[i][swap], b = pairs[i][1 - swap];
            for (int root = 0; root<n; root += n - 1> 0 ? n - 1 : 1) {
                test_bcast(a, b, root);
                in_step(++round);
                test_reduce(a, b, root);
                in_step(++round);
                test_scatter(a, b, root);
                in_step(++round);
                test_gather(a, b, root);
                in_step(++round);
            }
            test_allreduce(a, b);
            in_step(++round);
            test_allgather(a, b);
            in_step(++round);
        }
    }
    /* A blocking gather whose root and other members disagree across the
     * cell (32 KiB): beyond it the root asks the others to write their
     * blocks into its buffer, and a member whose block fits a cell never
     * reads that ask (20000 bytes against 280000); the root takes what
     * both hold either way. Not the nonblocking form, which is still
     * subject to coll/shm.h's limit above. */
    for (int swap = 0; swap < 2 && !s_nb; swap++)
        for (int root = 0; root < n; root++) {
            test_gather(swap ? 70000 : 5000, swap ? 5000 : 70000, root);
            in_step(++round);
        }
    /* Broadcasts of several cells and read from the root's buffer (from
     * 64 KiB by default): blocking, the receivers follow the root's
     * choice even across that size (40000 and 80000 bytes); the
     * nonblocking ones change algorithm there, so both sizes on one
     * side (80000 and 120000). */
    if (!s_nb) {
        test_bcast(10000, 20000, 0);
        in_step(++round);
        test_bcast(20000, 10000, n - 1);
        in_step(++round);
    }
    test_bcast(20000, 30000, 0);
    in_step(++round);
    test_bcast(30000, 20000, n - 1);
    in_step(++round);
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return mt_finish("coll_mismatch");
}
