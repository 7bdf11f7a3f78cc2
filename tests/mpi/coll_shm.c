/* SPDX-License-Identifier: MIT */
/* The node-level collectives (coll/shm.c) against references computed
 * here: Barrier, Bcast from every root at sizes that cross the cell size
 * (32 KiB) and the single-copy threshold (64 KiB), contiguous and strided
 * datatypes; Reduce (every root) and Allreduce with MPI_SUM on int and
 * double and a non-commutative user op, at counts that cross the
 * whole-vector/slice threshold (2 KiB) and the cell size, MPI_IN_PLACE;
 * all of it on MPI_COMM_WORLD and on split communicators whose rank order
 * is reversed, interleaved; and a collective while a large point-to-point
 * transfer is in flight (the collective's wait must keep it moving). */
#include "mpitest.h"

#include <stdint.h>

static int n, me;

static void test_bcast(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    static const int sz[] = {1,     63,    32767, 32768,  32769,
                             65535, 65536, 65537, 200003, (1 << 20) + 5};
    size_t max = (1 << 20) + 5;
    char *b = mt_malloc(max + 64);
    for (int root = 0; root < cn; root++) {
        for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
            uint32_t seed = (uint32_t)(root * 100 + (int)i + 7);
            if (cme == root)
                mt_fill(b, (size_t)sz[i], seed);
            else
                memset(b, 0, (size_t)sz[i]);
            memset(b + sz[i], 0x6B, 64);
            MT_MPI(MPI_Bcast(b, sz[i], MPI_BYTE, root, comm));
            MT_VERIFY(b, (size_t)sz[i], seed, what);
            MT_ALL(b + sz[i], 64, 0x6B, "guard after Bcast buffer");
        }
    }
    /* Strided: every other int of 3 * 20000 (packed through the cells),
     * the gaps untouched. */
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(20000, 1, 3, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    int *v = mt_malloc(sizeof(int) * 3 * 20000);
    for (int root = 0; root < cn; root++) {
        for (int k = 0; k < 3 * 20000; k++)
            v[k] = cme == root ? k : -1 - k;
        MT_MPI(MPI_Bcast(v, 1, vec, root, comm));
        for (int k = 0; k < 3 * 20000; k++) {
            int want = k % 3 == 0 ? k : (cme == root ? k : -1 - k);
            if (v[k] != want)
                MT_FAIL("%s strided root %d: v[%d] = %d, expected %d", what,
                        root, k, v[k], want);
        }
    }
    free(v);
    MT_MPI(MPI_Type_free(&vec));
    free(b);
}

/* (a, b) pairs composed as affine maps x -> a x + b modulo 2^32:
 * associative, not commutative. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint32_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        uint32_t a1 = x[2 * i], b1 = x[2 * i + 1];
        uint32_t a2 = y[2 * i], b2 = y[2 * i + 1];
        /* inout = in o inout: apply inout first, then in. */
        y[2 * i] = a1 * a2;
        y[2 * i + 1] = a1 * b2 + b1;
    }
}

static uint32_t aff_a(int r, int k)
{
    return (uint32_t)(2 * (r * 31 + k) + 1);
}
static uint32_t aff_b(int r, int k)
{
    return (uint32_t)(r * 1000003u + (uint32_t)k * 7u);
}

static void test_reduce(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    static const int counts[] = {1, 511, 512, 513, 8191, 8192, 8193, 100003};
    int maxc = 100003;
    int *si = mt_malloc(sizeof(int) * (size_t)maxc);
    int *ri = mt_malloc(sizeof(int) * (size_t)maxc);
    double *sd = mt_malloc(sizeof(double) * (size_t)maxc);
    double *rd = mt_malloc(sizeof(double) * (size_t)maxc);
    uint32_t *sa = mt_malloc(sizeof(uint32_t) * 2 * (size_t)maxc);
    uint32_t *ra = mt_malloc(sizeof(uint32_t) * 2 * (size_t)maxc);
    MPI_Datatype pair;
    MT_MPI(MPI_Type_contiguous(2, MPI_UINT32_T, &pair));
    MT_MPI(MPI_Type_commit(&pair));
    MPI_Op aff;
    MT_MPI(MPI_Op_create(affine, 0, &aff));

    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int cnt = counts[ci];
        for (int k = 0; k < cnt; k++) {
            si[k] = cme * 1000 + k;
            sd[k] = cme * 0.25 + k;
            sa[2 * k] = aff_a(cme, k);
            sa[2 * k + 1] = aff_b(cme, k);
        }
        /* Allreduce, SUM on int and double (exact: small integers and
         * quarters), and the affine composition in rank order. */
        MT_MPI(MPI_Allreduce(si, ri, cnt, MPI_INT, MPI_SUM, comm));
        MT_MPI(MPI_Allreduce(sd, rd, cnt, MPI_DOUBLE, MPI_SUM, comm));
        MT_MPI(MPI_Allreduce(sa, ra, cnt, pair, aff, comm));
        for (int k = 0; k < cnt; k++) {
            long long want = 0;
            double wd = 0;
            for (int r = 0; r < cn; r++) {
                want += r * 1000 + k;
                wd += r * 0.25 + k;
            }
            uint32_t wa = aff_a(cn - 1, k), wb = aff_b(cn - 1, k);
            for (int r = cn - 2; r >= 0; r--) {
                wb = aff_a(r, k) * wb + aff_b(r, k);
                wa = aff_a(r, k) * wa;
            }
            if (ri[k] != (int)want || rd[k] != wd || ra[2 * k] != wa ||
                ra[2 * k + 1] != wb)
                MT_FAIL("%s Allreduce count %d at %d: int %d (want %lld), "
                        "double %g (want %g), affine (%u, %u) want (%u, %u)",
                        what, cnt, k, ri[k], want, rd[k], wd, ra[2 * k],
                        ra[2 * k + 1], wa, wb);
        }
        /* In place. */
        memcpy(ri, si, sizeof(int) * (size_t)cnt);
        MT_MPI(MPI_Allreduce(MPI_IN_PLACE, ri, cnt, MPI_INT, MPI_MAX, comm));
        for (int k = 0; k < cnt; k++)
            if (ri[k] != (cn - 1) * 1000 + k)
                MT_FAIL("%s Allreduce in place count %d at %d: %d", what, cnt,
                        k, ri[k]);
        /* Reduce to every root; non-roots' rbuf must stay untouched. */
        for (int root = 0; root < cn; root++) {
            for (int k = 0; k < cnt; k++) {
                ra[2 * k] = 0xdead;
                ra[2 * k + 1] = 0xbeef;
            }
            if (cme == root)
                memcpy(ri, si, sizeof(int) * (size_t)cnt);
            MT_MPI(MPI_Reduce(sa, ra, cnt, pair, aff, root, comm));
            MT_MPI(MPI_Reduce(cme == root ? MPI_IN_PLACE : si,
                              cme == root ? ri : NULL, cnt, MPI_INT, MPI_SUM,
                              root, comm));
            for (int k = 0; k < cnt; k++) {
                uint32_t wa = aff_a(cn - 1, k), wb = aff_b(cn - 1, k);
                for (int r = cn - 2; r >= 0; r--) {
                    wb = aff_a(r, k) * wb + aff_b(r, k);
                    wa = aff_a(r, k) * wa;
                }
                if (cme != root) {
                    if (ra[2 * k] != 0xdead || ra[2 * k + 1] != 0xbeef)
                        MT_FAIL("%s Reduce root %d wrote a non-root's rbuf",
                                what, root);
                    continue;
                }
                long long want = 0;
                for (int r = 0; r < cn; r++)
                    want += r * 1000 + k;
                if (ra[2 * k] != wa || ra[2 * k + 1] != wb ||
                    ri[k] != (int)want)
                    MT_FAIL("%s Reduce root %d count %d at %d: affine (%u, "
                            "%u) want (%u, %u), int %d want %lld",
                            what, root, cnt, k, ra[2 * k], ra[2 * k + 1], wa,
                            wb, ri[k], want);
            }
        }
    }
    MT_MPI(MPI_Op_free(&aff));
    MT_MPI(MPI_Type_free(&pair));
    free(si);
    free(ri);
    free(sd);
    free(rd);
    free(sa);
    free(ra);
}

/* Collectives on two communicators, interleaved; the split one has the
 * world's ranks in reverse order. */
static void test_comms(void)
{
    MPI_Comm rev, half;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rev));
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    for (int i = 0; i < 50; i++) {
        int x = me + i, sum = 0, hsum = 0;
        MT_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, rev));
        MT_MPI(MPI_Barrier(half));
        MT_MPI(MPI_Allreduce(&x, &hsum, 1, MPI_INT, MPI_SUM, half));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_EQ(sum, n * (n - 1) / 2 + n * i, "Allreduce on reversed comm");
        int want = 0;
        for (int r = me % 2; r < n; r += 2)
            want += r + i;
        MT_EQ(hsum, want, "Allreduce on half comm");
    }
    test_bcast(rev, "Bcast reversed comm");
    test_reduce(half, "half comm");
    MT_MPI(MPI_Comm_free(&rev));
    MT_MPI(MPI_Comm_free(&half));
}

/* A large transfer in flight across a collective: rank 0 starts a 4 MiB
 * Isend to the last rank, everyone runs a barrier and an allreduce, and
 * only then does the last rank receive. With a two-sided mechanism the
 * sender's engine must run inside the collectives' waits. */
static void test_inflight(void)
{
    size_t len = 4u << 20;
    char *b = mt_malloc(len);
    MPI_Request r = MPI_REQUEST_NULL;
    if (me == 0) {
        mt_fill(b, len, 99);
        MT_MPI(MPI_Isend(b, (int)len, MPI_BYTE, n - 1, 5, MPI_COMM_WORLD, &r));
    }
    for (int i = 0; i < 3; i++) {
        int x = 1, s = 0;
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        MT_EQ(s, n, "Allreduce with a transfer in flight");
    }
    if (me == n - 1) {
        memset(b, 0, len);
        MT_MPI(MPI_Recv(b, (int)len, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MT_VERIFY(b, len, 99, "message across collectives");
    }
    MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    n = mt_size;
    me = mt_rank;
    for (int i = 0; i < 200; i++)
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    test_bcast(MPI_COMM_WORLD, "Bcast");
    test_reduce(MPI_COMM_WORLD, "world");
    test_comms();
    test_inflight();
    return mt_finish("coll_shm");
}
