/* SPDX-License-Identifier: MIT */
/* MPI_Comm_idup does not block: ranks post Comm_idup on two communicators
 * in opposite orders and wait on each in the order they posted it (the
 * program that deadlocked when the context agreement was a blocking
 * collective), with MPI_Wait, MPI_Waitall and MPI_Test loops; an idup
 * pending while a blocking MPI_Comm_dup of another communicator runs in
 * the opposite order; many idups in rank-dependent orders; idup on
 * communicators of different groups; collectives on the parent while its
 * idup is pending. Every new communicator is congruent to its parent,
 * carries a collective and point-to-point traffic, and is isolated from
 * the others (same source and tag on all of them, received in a different
 * order than sent). Attributes are copied as they were at the call. When
 * context ids run out, every rank gets the error, and freeing one makes
 * room again. */
#include "mpitest.h"

/* The new communicator works and is its parent's twin. */
static void check_new(MPI_Comm parent, MPI_Comm nc, const char *what)
{
    int cmp = -1, ps = -1, ns = -2, pr = -1, nr = -2;
    MT_CHECK(nc != MPI_COMM_NULL, "%s: new communicator is null", what);
    MT_MPI(MPI_Comm_compare(parent, nc, &cmp));
    MT_EQ(cmp, MPI_CONGRUENT, what);
    MT_MPI(MPI_Comm_size(parent, &ps));
    MT_MPI(MPI_Comm_size(nc, &ns));
    MT_MPI(MPI_Comm_rank(parent, &pr));
    MT_MPI(MPI_Comm_rank(nc, &nr));
    MT_EQ(ns, ps, "size of the duplicate");
    MT_EQ(nr, pr, "rank in the duplicate");
    /* A collective: the sum of ranks. */
    int sum = -1;
    MT_MPI(MPI_Allreduce(&nr, &sum, 1, MPI_INT, MPI_SUM, nc));
    MT_EQ(sum, ns * (ns - 1) / 2, "Allreduce on the duplicate");
    /* Point to point around a ring. */
    int right = (nr + 1) % ns, left = (nr + ns - 1) % ns, got = -1;
    int token = 1000 + nr;
    MT_MPI(MPI_Sendrecv(&token, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7,
                        nc, MPI_STATUS_IGNORE));
    MT_EQ(got, 1000 + left, "ring message on the duplicate");
}

/* The communicators in cs[0..n) do not share a context: rank r sends
 * value (k, r) on every cs[k] to its right neighbour with one tag, the
 * neighbour receives them in reverse order with wildcards. */
static void check_isolated(MPI_Comm *cs, int n)
{
    int size, rank;
    MT_MPI(MPI_Comm_size(cs[0], &size));
    MT_MPI(MPI_Comm_rank(cs[0], &rank));
    if (size == 1)
        return;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request *req = mt_malloc((size_t)n * sizeof(*req));
    int *out = mt_malloc((size_t)n * 2 * sizeof(int));
    for (int k = 0; k < n; k++) {
        out[2 * k] = k;
        out[2 * k + 1] = rank;
        MT_MPI(MPI_Isend(&out[2 * k], 2, MPI_INT, right, 5, cs[k], &req[k]));
    }
    for (int k = n - 1; k >= 0; k--) {
        int in[2] = {-1, -1};
        MPI_Status st;
        MT_MPI(
            MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cs[k], &st));
        MT_EQ(in[0], k, "message arrived on the communicator it was sent on");
        MT_EQ(in[1], left, "sender");
    }
    MT_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    free(req);
    free(out);
}

enum wait_mode { WAIT_EACH, WAIT_ALL, TEST_LOOP };

/* The reported deadlock: even ranks idup a then b, odd ranks b then a;
 * each waits on its first request first. */
static void crossed(MPI_Comm a, MPI_Comm b, enum wait_mode mode)
{
    MPI_Comm na = MPI_COMM_NULL, nb = MPI_COMM_NULL;
    MPI_Request r[2];
    if (mt_rank % 2 == 0) {
        MT_MPI(MPI_Comm_idup(a, &na, &r[0]));
        MT_MPI(MPI_Comm_idup(b, &nb, &r[1]));
    } else {
        MT_MPI(MPI_Comm_idup(b, &nb, &r[0]));
        MT_MPI(MPI_Comm_idup(a, &na, &r[1]));
    }
    switch (mode) {
    case WAIT_EACH:
        MT_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        MT_MPI(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        break;
    case WAIT_ALL:
        MT_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        break;
    case TEST_LOOP:
        for (int k = 0; k < 2; k++) {
            int flag = 0;
            while (!flag)
                MT_MPI(MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE));
        }
        break;
    }
    MT_CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL,
             "requests freed by completion");
    check_new(a, na, "crossed idup of a");
    check_new(b, nb, "crossed idup of b");
    MPI_Comm all[4] = {a, b, na, nb};
    check_isolated(all, 4);
    MT_MPI(MPI_Comm_free(&na));
    MT_MPI(MPI_Comm_free(&nb));
}

/* An idup pending on one communicator while a blocking dup of another
 * runs, in opposite orders: the dup must not wait for the idup. */
static void idup_then_blocking(MPI_Comm a, MPI_Comm b)
{
    MPI_Comm na, nb;
    MPI_Request r;
    if (mt_rank % 2 == 0) {
        MT_MPI(MPI_Comm_idup(a, &na, &r));
        MT_MPI(MPI_Comm_dup(b, &nb));
    } else {
        MT_MPI(MPI_Comm_dup(b, &nb));
        MT_MPI(MPI_Comm_idup(a, &na, &r));
    }
    MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_new(a, na, "idup beside a blocking dup");
    check_new(b, nb, "blocking dup beside an idup");
    MPI_Comm all[3] = {a, na, nb};
    check_isolated(all, 3);
    MT_MPI(MPI_Comm_free(&na));
    MT_MPI(MPI_Comm_free(&nb));
}

/* K idups on K communicators, each rank in its own rotation, waited for
 * in reverse order; then on the parent's collectives meanwhile. */
#define K 6
static void many(MPI_Comm *par)
{
    MPI_Comm nc[K];
    MPI_Request r[K];
    for (int j = 0; j < K; j++) {
        int k = (j + mt_rank) % K;
        if (mt_rank % 2)
            k = K - 1 - k;
        MT_MPI(MPI_Comm_idup(par[k], &nc[k], &r[k]));
    }
    /* The parents' own collectives while their idups are pending. */
    for (int k = 0; k < K; k++) {
        int one = 1, n = 0;
        MT_MPI(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, par[k]));
        MT_EQ(n, mt_size, "Allreduce on a parent with an idup pending");
    }
    for (int k = K - 1; k >= 0; k--)
        MT_MPI(MPI_Wait(&r[k], MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++)
        check_new(par[k], nc[k], "one of many idups");
    MPI_Comm all[2 * K];
    for (int k = 0; k < K; k++) {
        all[k] = par[k];
        all[K + k] = nc[k];
    }
    check_isolated(all, 2 * K);
    for (int k = 0; k < K; k++)
        MT_MPI(MPI_Comm_free(&nc[k]));
}

/* Communicators of different groups: a half of the world and the world,
 * in opposite orders on the two halves; also MPI_COMM_SELF and
 * Comm_idup_with_info. */
static void groups(void)
{
    MPI_Comm half, nh, nw, ns, ni;
    MPI_Request r[4];
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &half));
    if (mt_rank % 2 == 0) {
        MT_MPI(MPI_Comm_idup(half, &nh, &r[0]));
        MT_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &nw, &r[1]));
    } else {
        MT_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &nw, &r[1]));
        MT_MPI(MPI_Comm_idup(half, &nh, &r[0]));
    }
    MT_MPI(MPI_Comm_idup(MPI_COMM_SELF, &ns, &r[2]));
    MT_MPI(MPI_Comm_idup_with_info(half, MPI_INFO_NULL, &ni, &r[3]));
    MT_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MT_MPI(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    MT_MPI(MPI_Waitall(2, &r[2], MPI_STATUSES_IGNORE));
    check_new(half, nh, "idup of a half");
    check_new(MPI_COMM_WORLD, nw, "idup of the world beside a half");
    check_new(MPI_COMM_SELF, ns, "idup of MPI_COMM_SELF");
    check_new(half, ni, "Comm_idup_with_info");
    MPI_Comm hs[3] = {half, nh, ni};
    check_isolated(hs, 3);
    MPI_Comm ws[2] = {MPI_COMM_WORLD, nw};
    check_isolated(ws, 2);
    MT_MPI(MPI_Comm_free(&nh));
    MT_MPI(MPI_Comm_free(&nw));
    MT_MPI(MPI_Comm_free(&ns));
    MT_MPI(MPI_Comm_free(&ni));
    MT_MPI(MPI_Comm_free(&half));
}

/* MPI 4.0: as if Comm_dup ran at the call. An attribute changed after the
 * call is not the one copied. */
static void attributes(void)
{
    int key;
    static int before = 1, after = 2;
    MT_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN,
                                  &key, NULL));
    MPI_Comm parent, nc;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    MT_MPI(MPI_Comm_set_attr(parent, key, &before));
    MPI_Request r;
    MT_MPI(MPI_Comm_idup(parent, &nc, &r));
    MT_MPI(MPI_Comm_set_attr(parent, key, &after));
    MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int *v = NULL, flag = 0;
    MT_MPI(MPI_Comm_get_attr(nc, key, &v, &flag));
    MT_CHECK(flag && v == &before, "attribute copied as at the call (%p)",
             (void *)v);
    check_new(parent, nc, "idup with an attribute");
    MT_MPI(MPI_Comm_free(&nc));
    MT_MPI(MPI_Comm_free(&parent));
    MT_MPI(MPI_Comm_free_keyval(&key));
}

/* Use up the context ids: every rank fails on the same call, with the
 * error class MPI_ERR_OTHER, for Comm_dup and for Comm_idup (at Wait);
 * one freed id makes room again. */
static void exhaustion(void)
{
    enum { MAXC = 4096 };
    MPI_Comm *cs = mt_malloc(MAXC * sizeof(*cs));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int n = 0, rc = MPI_SUCCESS;
    while (n < MAXC) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &cs[n]);
        if (rc != MPI_SUCCESS)
            break;
        n++;
    }
    MT_ERRCLASS(rc, MPI_ERR_OTHER, "Comm_dup with every id in use");
    int lo = -1, hi = -1;
    MT_MPI(MPI_Allreduce(&n, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    MT_MPI(MPI_Allreduce(&n, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    MT_CHECK(lo == hi && n > 1000, "ran out after %d dups (all: %d..%d)", n, lo,
             hi);
    MPI_Comm extra;
    MPI_Request r;
    MT_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &extra, &r));
    MT_ERRCLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_OTHER,
                "Comm_idup with every id in use");
    MT_MPI(MPI_Comm_free(&cs[n / 2]));
    MT_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &cs[n / 2], &r));
    MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_new(MPI_COMM_WORLD, cs[n / 2], "idup into the freed id");
    for (int i = 0; i < n; i++)
        MT_MPI(MPI_Comm_free(&cs[i]));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(cs);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm a, b;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    for (int it = 0; it < 20; it++) {
        crossed(a, b, WAIT_EACH);
        crossed(a, b, WAIT_ALL);
        crossed(a, b, TEST_LOOP);
        idup_then_blocking(a, b);
    }
    MPI_Comm par[K];
    for (int k = 0; k < K; k++)
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &par[k]));
    for (int it = 0; it < 5; it++)
        many(par);
    for (int k = 0; k < K; k++)
        MT_MPI(MPI_Comm_free(&par[k]));
    groups();
    attributes();
    exhaustion();
    MT_MPI(MPI_Comm_free(&a));
    MT_MPI(MPI_Comm_free(&b));
    return mt_finish("comm_idup");
}
