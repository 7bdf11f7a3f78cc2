/* SPDX-License-Identifier: MIT */
/* The lean collectives (coll/shm.c, "Lean collectives"): with a core for
 * every rank (two ranks here, or FERRY_WAIT=spin), barriers and the
 * collectives of up to 24 bytes per member go through one flag line per
 * rank and context instead of the cells. Checked against references
 * computed here:
 * - long runs of one collective with nothing in between, so that a
 *   broadcast's root and a reduce's contributors run ahead of the readers
 *   (a payload may be rewritten only once every reader is done with it);
 * - every root; sizes 1-24 bytes and 25 (the cells) interleaved;
 * - MPI_IN_PLACE; a strided datatype; a non-commutative user op (2x2
 *   matrix product: the result depends on the rank order);
 * - communicators split with different members, each used a different
 *   number of times, then freed, 80 times: a context is reused by
 *   members whose counts in its flag lines differ, and the new
 *   communicator must neither release early nor hang;
 * - the nonblocking forms, several in flight at once, a blocking one
 *   between their start and wait, and a long run from one root. */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>

static int n, me;

static void test_bcast(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    unsigned char b[64];
    /* A fixed root, 150 in a row (it runs ahead), then rotating roots. */
    for (int it = 0; it < 300; it++) {
        int root = it < 150 ? 0 : it % cn;
        int len = 1 + it % 25;
        uint32_t seed = (uint32_t)(it * 31 + 5);
        if (cme == root)
            mt_fill(b, (size_t)len, seed);
        else
            memset(b, 0, (size_t)len);
        memset(b + len, 0x5A, sizeof(b) - (size_t)len);
        MT_MPI(MPI_Bcast(b, len, MPI_BYTE, root, comm));
        MT_VERIFY(b, (size_t)len, seed, what);
        MT_ALL(b + len, sizeof(b) - (size_t)len, 0x5A, "guard after Bcast");
    }
    /* Strided: every other int of 6 (12 bytes packed), gaps untouched. */
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    for (int root = 0; root < cn; root++) {
        int v[6];
        for (int k = 0; k < 6; k++)
            v[k] = cme == root ? 100 * root + k : -1 - k;
        MT_MPI(MPI_Bcast(v, 1, vec, root, comm));
        for (int k = 0; k < 6; k++)
            MT_EQ(v[k], k % 2 == 0 || cme == root ? 100 * root + k : -1 - k,
                  "strided Bcast element");
    }
    MT_MPI(MPI_Type_free(&vec));
}

/* inout = in * inout for 2x2 matrices of unsigned ints (mod 2^32). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof(r));
    }
}

static void mat_of(int rank, int it, unsigned m[4])
{
    m[0] = (unsigned)(rank + 2);
    m[1] = (unsigned)(it + 1);
    m[2] = (unsigned)(3 * rank + 1);
    m[3] = (unsigned)(it % 7 + 1);
}

static void test_reduce(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    /* Reduce to one root 150 times in a row: the others run ahead. */
    for (int it = 0; it < 250; it++) {
        int root = it < 150 ? cn - 1 : it % cn;
        int cnt = 1 + it % 7; /* 4-28 bytes: 28 takes the cells */
        int in[7], out[7];
        for (int k = 0; k < cnt; k++)
            in[k] = cme * 1000 + it * 10 + k;
        for (int k = 0; k < 7; k++)
            out[k] = -7;
        MT_MPI(MPI_Reduce(in, out, cnt, MPI_INT, MPI_SUM, root, comm));
        if (cme == root)
            for (int k = 0; k < cnt; k++)
                MT_EQ(out[k], 1000 * cn * (cn - 1) / 2 + cn * (it * 10 + k),
                      what);
        else
            for (int k = 0; k < cnt; k++)
                MT_EQ(out[k], -7, "Reduce wrote a non-root's rbuf");
    }
    /* Allreduce, in place every other time, doubles 8-32 bytes. */
    for (int it = 0; it < 150; it++) {
        int cnt = 1 + it % 4;
        double in[4], out[4];
        for (int k = 0; k < cnt; k++)
            out[k] = in[k] = 0.5 * cme + it + k;
        if (it % 2)
            MT_MPI(MPI_Allreduce(MPI_IN_PLACE, out, cnt, MPI_DOUBLE, MPI_SUM,
                                 comm));
        else
            MT_MPI(MPI_Allreduce(in, out, cnt, MPI_DOUBLE, MPI_SUM, comm));
        for (int k = 0; k < cnt; k++)
            MT_CHECK(out[k] == 0.25 * cn * (cn - 1) + cn * (double)(it + k),
                     "%s: Allreduce element %d: %g", what, k, out[k]);
    }
    /* Non-commutative: the product of the members' matrices in rank
     * order, at the root (Reduce) and everywhere (Allreduce). */
    MPI_Datatype m4;
    MPI_Op op;
    MT_MPI(MPI_Type_contiguous(4, MPI_UNSIGNED, &m4));
    MT_MPI(MPI_Type_commit(&m4));
    MT_MPI(MPI_Op_create(matmul, 0, &op));
    for (int it = 0; it < 60; it++) {
        unsigned mine[4], got[4], want[4];
        mat_of(cme, it, mine);
        /* The reference: M0 * M1 * ... * M(cn-1). */
        unsigned acc[4];
        mat_of(cn - 1, it, acc);
        for (int r = cn - 2; r >= 0; r--) {
            unsigned x[4];
            int one = 1;
            MPI_Datatype d = m4;
            mat_of(r, it, x);
            matmul(x, acc, &one, &d);
        }
        memcpy(want, acc, sizeof(want));
        int root = it % cn;
        if (it % 2) {
            MT_MPI(MPI_Allreduce(mine, got, 1, m4, op, comm));
            MT_CHECK(memcmp(got, want, sizeof(got)) == 0,
                     "%s: non-commutative Allreduce out of rank order", what);
        } else {
            memset(got, 0, sizeof(got));
            MT_MPI(MPI_Reduce(mine, got, 1, m4, op, root, comm));
            if (cme == root)
                MT_CHECK(memcmp(got, want, sizeof(got)) == 0,
                         "%s: non-commutative Reduce out of rank order", what);
        }
    }
    MT_MPI(MPI_Op_free(&op));
    MT_MPI(MPI_Type_free(&m4));
}

static void test_exchange(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    unsigned char *r = mt_malloc((size_t)25 * cn + 16);
    unsigned char s[25 * 8];
    for (int it = 0; it < 150; it++) {
        int len = 1 + it % 25;
        size_t tot = (size_t)len * cn;
        bool inplace = it % 3 == 0;
        memset(r, 0xEE, tot + 16);
        mt_fill(s, (size_t)len, (uint32_t)(it * 8 + cme));
        if (inplace) {
            mt_fill(r + (size_t)cme * len, (size_t)len,
                    (uint32_t)(it * 8 + cme));
            MT_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, r, len, MPI_BYTE,
                                 comm));
        } else {
            MT_MPI(MPI_Allgather(s, len, MPI_BYTE, r, len, MPI_BYTE, comm));
        }
        for (int k = 0; k < cn; k++)
            MT_VERIFY(r + (size_t)k * len, (size_t)len, (uint32_t)(it * 8 + k),
                      what);
        MT_ALL(r + tot, 16, 0xEE, "guard after Allgather");
    }
    for (int it = 0; it < 150; it++) {
        int len = 1 + it % (24 / cn + 1); /* the last one takes the cells */
        size_t tot = (size_t)len * cn;
        bool inplace = it % 3 == 1;
        memset(r, 0xEE, tot + 16);
        unsigned char *src = inplace ? r : s;
        for (int k = 0; k < cn; k++)
            mt_fill(src + (size_t)k * len, (size_t)len,
                    (uint32_t)(it * 64 + cme * 8 + k));
        if (inplace)
            MT_MPI(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_BYTE, r, len, MPI_BYTE,
                                comm));
        else
            MT_MPI(MPI_Alltoall(s, len, MPI_BYTE, r, len, MPI_BYTE, comm));
        for (int k = 0; k < cn; k++)
            MT_VERIFY(r + (size_t)k * len, (size_t)len,
                      (uint32_t)(it * 64 + k * 8 + cme), what);
        MT_ALL(r + tot, 16, 0xEE, "guard after Alltoall");
    }
    free(r);
}

/* The nonblocking ones: batches of different collectives in flight at
 * once (they run one at a time, in order), a blocking one between start
 * and wait, and long runs from one root. */
static void test_nb(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    for (int it = 0; it < 150; it++) {
        MPI_Request rq[6];
        int root = it % cn;
        unsigned char b[8], g[4 * 8], t[2 * 8], ts[2 * 8];
        int x[2] = {cme + it, 2 * cme}, sum[2] = {0, 0}, red[2] = {-1, -1};
        int xr = cme * 3 + it, blocking = 0;
        if (cme == root)
            mt_fill(b, sizeof(b), (uint32_t)it);
        else
            memset(b, 0, sizeof(b));
        uint32_t mine = (uint32_t)(it * 16 + cme);
        for (int k = 0; k < cn; k++)
            mt_fill(ts + 2 * k, 2, (uint32_t)(it * 256 + cme * 16 + k));
        MT_MPI(MPI_Ibcast(b, 8, MPI_BYTE, root, comm, &rq[0]));
        MT_MPI(MPI_Iallreduce(x, sum, 2, MPI_INT, MPI_SUM, comm, &rq[1]));
        MT_MPI(MPI_Ibarrier(comm, &rq[2]));
        MT_MPI(
            MPI_Iallgather(&mine, 4, MPI_BYTE, g, 4, MPI_BYTE, comm, &rq[3]));
        MT_MPI(MPI_Ialltoall(ts, 2, MPI_BYTE, t, 2, MPI_BYTE, comm, &rq[4]));
        MT_MPI(MPI_Ireduce(&xr, red, 1, MPI_INT, MPI_SUM, (root + 1) % cn, comm,
                           &rq[5]));
        if (it % 4 == 0)
            MT_MPI(MPI_Allreduce(&cme, &blocking, 1, MPI_INT, MPI_SUM, comm));
        MT_MPI(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
        MT_VERIFY(b, sizeof(b), (uint32_t)it, what);
        MT_EQ(sum[0], cn * (cn - 1) / 2 + cn * it, "Iallreduce [0]");
        MT_EQ(sum[1], cn * (cn - 1), "Iallreduce [1]");
        for (int k = 0; k < cn; k++) {
            uint32_t v;
            memcpy(&v, g + 4 * k, 4);
            MT_EQ(v, (uint32_t)(it * 16 + k), "Iallgather block");
            MT_VERIFY(t + 2 * k, 2, (uint32_t)(it * 256 + k * 16 + cme),
                      "Ialltoall block");
        }
        if (cme == (root + 1) % cn)
            MT_EQ(red[0], 3 * cn * (cn - 1) / 2 + cn * it, "Ireduce");
        if (it % 4 == 0)
            MT_EQ(blocking, cn * (cn - 1) / 2, "Allreduce among Ixxx");
    }
    /* One root, 150 in a row, each waited at once. */
    for (int it = 0; it < 150; it++) {
        MPI_Request rq;
        double v = cme == 0 ? it * 0.5 : -1;
        MT_MPI(MPI_Ibcast(&v, 1, MPI_DOUBLE, 0, comm, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MT_CHECK(v == it * 0.5, "%s: Ibcast %d got %g", what, it, v);
    }
}

/* Communicators with changing members, used a changing number of times:
 * contexts come back with other counts in their members' lines. */
static void test_reuse(void)
{
    for (int it = 0; it < 80; it++) {
        MPI_Comm c;
        int color = it % 3 == 0 ? me % 2 : (it % 3 == 1 ? 0 : me < n / 2);
        int key = it % 2 ? n - me : me;
        MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &c));
        int cn, cme;
        MPI_Comm_size(c, &cn);
        MPI_Comm_rank(c, &cme);
        for (int k = 0; k < 1 + it % 5; k++) {
            int x = cme + k, sum = 0;
            MT_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
            MT_EQ(sum, cn * (cn - 1) / 2 + cn * k, "Allreduce on a new comm");
            if (k % 2)
                MT_MPI(MPI_Barrier(c));
        }
        int v = cme == 0 ? it : -1;
        MT_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, c));
        MT_EQ(v, it, "Bcast on a new comm");
        if (it % 2) {
            MPI_Request rq;
            int x = cme, sum = -1;
            MT_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MT_EQ(sum, cn * (cn - 1) / 2, "Iallreduce on a new comm");
        }
        MT_MPI(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    n = mt_size;
    me = mt_rank;
    MPI_Comm rev;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rev));
    test_bcast(MPI_COMM_WORLD, "Bcast on world");
    test_bcast(rev, "Bcast on reversed");
    test_reduce(MPI_COMM_WORLD, "Reduce on world");
    test_reduce(rev, "Reduce on reversed");
    for (int i = 0; i < 100; i++)
        MT_MPI(MPI_Barrier(i % 2 ? rev : MPI_COMM_WORLD));
    test_exchange(MPI_COMM_WORLD, "exchange on world");
    test_exchange(rev, "exchange on reversed");
    test_nb(MPI_COMM_WORLD, "nonblocking on world");
    test_nb(rev, "nonblocking on reversed");
    MT_MPI(MPI_Comm_free(&rev));
    test_reuse();
    return mt_finish("coll_lean");
}
