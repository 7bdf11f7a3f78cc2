/* SPDX-License-Identifier: MIT */
/* The node-level collectives (coll/shm.c) against references computed
 * here: Barrier, Bcast from every root at sizes that cross the cell size
 * (32 KiB) and the single-copy threshold (64 KiB), contiguous and strided
 * datatypes; Reduce (every root) and Allreduce with MPI_SUM on int and
 * double and a non-commutative user op, at counts that cross the
 * whole-vector/slice threshold (2 KiB), the cell size and (two ranks) the
 * size from which a Reduce's two members share the combining,
 * MPI_IN_PLACE;
 * Gather, Scatter (every root), Allgather (also into a strided type) and
 * Alltoall at block sizes inside and beyond one cell, in place or not;
 * all of it on MPI_COMM_WORLD and on split communicators whose rank order
 * is reversed, interleaved; communicators freed and created again, 200
 * times (context ids are reused: a new one must never read its
 * predecessor's last publications); and a collective while a large
 * point-to-point transfer is in flight (the collective's wait must keep it
 * moving). */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>

static int n, me;

static void test_bcast(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    static const int sz[] = {1,     40,    41,    63,    32767,  32768,
                             32769, 65535, 65536, 65537, 200003, (1 << 20) + 5};
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
    static const int nvs[] = {10, 11, 20000};
    for (size_t iv = 0; iv < sizeof(nvs) / sizeof(nvs[0]); iv++) {
        int nv = nvs[iv];
        /* Strided: every third int of 3 * nv, the gaps untouched (packed
         * through the cells; 10 ints fit the tag's line, 11 do not). */
        MPI_Datatype vec;
        MT_MPI(MPI_Type_vector(nv, 1, 3, MPI_INT, &vec));
        MT_MPI(MPI_Type_commit(&vec));
        int *v = mt_malloc(sizeof(int) * 3 * nv);
        for (int root = 0; root < cn; root++) {
            for (int k = 0; k < 3 * nv; k++)
                v[k] = cme == root ? k : -1 - k;
            MT_MPI(MPI_Bcast(v, 1, vec, root, comm));
            for (int k = 0; k < 3 * nv; k++) {
                int want = k % 3 == 0 ? k : (cme == root ? k : -1 - k);
                if (v[k] != want)
                    MT_FAIL("%s strided root %d: v[%d] = %d, expected %d", what,
                            root, k, v[k], want);
            }
        }
        /* Different datatypes, one signature: the root sends every third int
         * (the vector), the others receive nv contiguous ints, and the
         * other way round. Each side's path must not depend on its type. */
        int *flat = mt_malloc(sizeof(int) * nv);
        for (int root = 0; root < cn; root++) {
            for (int k = 0; k < 3 * nv; k++)
                v[k] = cme == root ? k : -1;
            for (int k = 0; k < nv; k++)
                flat[k] = -1;
            if (cme == root)
                MT_MPI(MPI_Bcast(v, 1, vec, root, comm));
            else
                MT_MPI(MPI_Bcast(flat, nv, MPI_INT, root, comm));
            for (int k = 0; cme != root && k < nv; k++)
                if (flat[k] != 3 * k)
                    MT_FAIL("%s vector to ints, root %d: flat[%d] = %d", what,
                            root, k, flat[k]);
            for (int k = 0; k < nv; k++)
                flat[k] = cme == root ? 7 * k : -1;
            for (int k = 0; k < 3 * nv; k++)
                v[k] = -1;
            if (cme == root)
                MT_MPI(MPI_Bcast(flat, nv, MPI_INT, root, comm));
            else
                MT_MPI(MPI_Bcast(v, 1, vec, root, comm));
            for (int k = 0; cme != root && k < 3 * nv; k++)
                if (v[k] != (k % 3 ? -1 : 7 * (k / 3)))
                    MT_FAIL("%s ints to vector, root %d: v[%d] = %d", what,
                            root, k, v[k]);
        }
        free(flat);
        free(v);
        MT_MPI(MPI_Type_free(&vec));
    }
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

/* Element k of the affine maps of members 0..cn-1 composed in rank
 * order: what a reduction with the ordered op must give. */
static void aff_want(int cn, int k, uint32_t *wa, uint32_t *wb)
{
    uint32_t a = aff_a(cn - 1, k), b = aff_b(cn - 1, k);
    for (int r = cn - 2; r >= 0; r--) {
        b = aff_a(r, k) * b + aff_b(r, k);
        a = aff_a(r, k) * a;
    }
    *wa = a;
    *wb = b;
}

static void test_reduce(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    /* 100003 and 262147: between two ranks, past the size from which a
     * Reduce's two members each combine a share (384 KiB), with shares and
     * 256 KiB chunks that do not divide evenly. */
    static const int counts[] = {1,    511,  512,    513,   8191,
                                 8192, 8193, 100003, 262147};
    int maxc = 262147;
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
            uint32_t wa, wb;
            aff_want(cn, k, &wa, &wb);
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
        /* The ordered op in place: every member's own contribution must
         * survive the others' being combined into its buffer. */
        memcpy(ra, sa, sizeof(uint32_t) * 2 * (size_t)cnt);
        MT_MPI(MPI_Allreduce(MPI_IN_PLACE, ra, cnt, pair, aff, comm));
        for (int k = 0; k < cnt; k++) {
            uint32_t wa, wb;
            aff_want(cn, k, &wa, &wb);
            if (ra[2 * k] != wa || ra[2 * k + 1] != wb)
                MT_FAIL("%s Allreduce in place count %d at %d: affine (%u, "
                        "%u) want (%u, %u)",
                        what, cnt, k, ra[2 * k], ra[2 * k + 1], wa, wb);
        }
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
                uint32_t wa, wb;
                aff_want(cn, k, &wa, &wb);
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
            /* The ordered op in place: the root's own contribution must
             * survive the others' being combined into its buffer. */
            if (cme == root)
                memcpy(ra, sa, sizeof(uint32_t) * 2 * (size_t)cnt);
            MT_MPI(MPI_Reduce(cme == root ? MPI_IN_PLACE : sa,
                              cme == root ? ra : NULL, cnt, pair, aff, root,
                              comm));
            for (int k = 0; cme == root && k < cnt; k++) {
                uint32_t wa, wb;
                aff_want(cn, k, &wa, &wb);
                if (ra[2 * k] != wa || ra[2 * k + 1] != wb)
                    MT_FAIL("%s Reduce in place root %d count %d at %d: "
                            "affine (%u, %u) want (%u, %u)",
                            what, root, cnt, k, ra[2 * k], ra[2 * k + 1], wa,
                            wb);
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

/* Value of element k of the block that member 'from' sends to 'to'. */
static int val(int from, int to, int k)
{
    return from * 1000000 + to * 10000 + k;
}

/* Gather (every root, in place at the root), Scatter (every root, in
 * place), Allgather (in place) and Alltoall (in place) with int blocks of
 * 'cnt' elements, through the cells or not depending on the size, and
 * once with a strided receive type. */
static void test_moves(MPI_Comm comm, int cnt, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    size_t tot = (size_t)cn * (size_t)cnt;
    int *sb = mt_malloc(sizeof(int) * tot), *rb = mt_malloc(sizeof(int) * tot);
    for (int root = 0; root < cn; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            /* Gather: block r of the root's rbuf is what r sends. */
            for (int k = 0; k < cnt; k++)
                sb[k] = val(cme, root, k);
            for (size_t k = 0; k < tot; k++)
                rb[k] = -7;
            if (inplace && cme == root)
                memcpy(rb + (size_t)cme * cnt, sb, sizeof(int) * cnt);
            MT_MPI(MPI_Gather(inplace && cme == root ? MPI_IN_PLACE : sb, cnt,
                              MPI_INT, rb, cnt, MPI_INT, root, comm));
            for (int r = 0; cme == root && r < cn; r++)
                for (int k = 0; k < cnt; k++)
                    if (rb[(size_t)r * cnt + k] != val(r, root, k))
                        MT_FAIL("%s Gather cnt %d root %d in place %d: "
                                "block %d elem %d = %d",
                                what, cnt, root, inplace, r, k,
                                rb[(size_t)r * cnt + k]);
            /* Scatter: block r of the root's sbuf goes to r. */
            for (int r = 0; r < cn; r++)
                for (int k = 0; k < cnt; k++)
                    sb[(size_t)r * cnt + k] = val(root, r, k);
            for (int k = 0; k < cnt; k++)
                rb[k] = -7;
            bool ip = inplace && cme == root;
            MT_MPI(MPI_Scatter(sb, cnt, MPI_INT, ip ? MPI_IN_PLACE : rb, cnt,
                               MPI_INT, root, comm));
            for (int k = 0; !ip && k < cnt; k++)
                if (rb[k] != val(root, cme, k))
                    MT_FAIL("%s Scatter cnt %d root %d: elem %d = %d", what,
                            cnt, root, k, rb[k]);
        }
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        for (size_t k = 0; k < tot; k++)
            rb[k] = -7;
        for (int k = 0; k < cnt; k++)
            sb[k] = val(cme, 0, k);
        if (inplace)
            memcpy(rb + (size_t)cme * cnt, sb, sizeof(int) * cnt);
        MT_MPI(MPI_Allgather(inplace ? MPI_IN_PLACE : sb, cnt, MPI_INT, rb, cnt,
                             MPI_INT, comm));
        for (int r = 0; r < cn; r++)
            for (int k = 0; k < cnt; k++)
                if (rb[(size_t)r * cnt + k] != val(r, 0, k))
                    MT_FAIL("%s Allgather cnt %d in place %d: block %d elem "
                            "%d = %d",
                            what, cnt, inplace, r, k, rb[(size_t)r * cnt + k]);
        for (int r = 0; r < cn; r++)
            for (int k = 0; k < cnt; k++)
                (inplace ? rb : sb)[(size_t)r * cnt + k] = val(cme, r, k);
        MT_MPI(MPI_Alltoall(inplace ? MPI_IN_PLACE : sb, cnt, MPI_INT, rb, cnt,
                            MPI_INT, comm));
        for (int r = 0; r < cn; r++)
            for (int k = 0; k < cnt; k++)
                if (rb[(size_t)r * cnt + k] != val(r, cme, k))
                    MT_FAIL("%s Alltoall cnt %d in place %d: block %d elem "
                            "%d = %d",
                            what, cnt, inplace, r, k, rb[(size_t)r * cnt + k]);
    }
    /* Allgather into a strided layout: each block is cnt ints at stride 2
     * (a resized vector), the gaps untouched. */
    MPI_Datatype v, vr;
    MT_MPI(MPI_Type_vector(cnt, 1, 2, MPI_INT, &v));
    MT_MPI(
        MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * cnt) * sizeof(int), &vr));
    MT_MPI(MPI_Type_commit(&vr));
    int *wide = mt_malloc(sizeof(int) * 2 * tot);
    for (size_t k = 0; k < 2 * tot; k++)
        wide[k] = -9;
    for (int k = 0; k < cnt; k++)
        sb[k] = val(cme, 1, k);
    MT_MPI(MPI_Allgather(sb, cnt, MPI_INT, wide, 1, vr, comm));
    for (int r = 0; r < cn; r++)
        for (int k = 0; k < 2 * cnt; k++) {
            int got = wide[(size_t)r * 2 * cnt + k];
            int want = k % 2 ? -9 : val(r, 1, k / 2);
            if (got != want)
                MT_FAIL("%s strided Allgather cnt %d: block %d word %d = %d, "
                        "expected %d",
                        what, cnt, r, k, got, want);
        }
    free(wide);
    MT_MPI(MPI_Type_free(&vr));
    MT_MPI(MPI_Type_free(&v));
    free(sb);
    free(rb);
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
    test_moves(rev, 100, "reversed comm");
    MT_MPI(MPI_Comm_free(&rev));
    MT_MPI(MPI_Comm_free(&half));
}

/* Communicators freed and created again reuse context ids: the first
 * collectives of each must never see the last ones of its predecessor
 * (same context, same collective numbers), even when the freeing rank's
 * last publication was still being read. */
static void test_reuse(void)
{
    for (int i = 0; i < 200; i++) {
        MPI_Comm d;
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int root = i % n, x = me + 7 * i, y = -1, b = me == root ? i : -1;
        MT_MPI(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, root, d));
        if (me == root)
            MT_EQ(y, n * (n - 1) / 2 + 7 * i * n, "Reduce on a fresh dup");
        MT_MPI(MPI_Bcast(&b, 1, MPI_INT, root, d));
        MT_EQ(b, i, "Bcast on a fresh dup");
        MT_MPI(MPI_Comm_free(&d));
    }
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

/* Predefined ops over derived datatypes, each rank its own layout of the
 * same signature (Ferry's extension; MPI defines them on predefined types
 * only and MPICH refuses them): plain ints, a vector with holes, a
 * contiguous type of the whole vector. The algorithms choose by layout,
 * so the ranks used to part ways and wait for each other for ever; now
 * every one reduces the stream of ints. Sizes on both sides of the
 * cells and the single copy; blocking, nonblocking and persistent. */
static void test_mixed_layouts(void)
{
    static const int cnts[] = {3, 1000, 70000};
    for (size_t ci = 0; ci < sizeof(cnts) / sizeof(cnts[0]); ci++) {
        int cnt = cnts[ci], kind = me % 3, tc = cnt;
        MPI_Datatype t = MPI_INT;
        if (kind == 1) { /* every other int of a buffer twice as long */
            MT_MPI(MPI_Type_vector(cnt, 1, 2, MPI_INT, &t));
            tc = 1;
        } else if (kind == 2) {
            MT_MPI(MPI_Type_contiguous(cnt, MPI_INT, &t));
            tc = 1;
        }
        if (t != MPI_INT)
            MT_MPI(MPI_Type_commit(&t));
        size_t span = (size_t)cnt * (kind == 1 ? 2 : 1) * n; /* ints */
        int *in = mt_malloc(span * sizeof(int)),
            *out = mt_malloc(span * sizeof(int));
        int step = kind == 1 ? 2 : 1;
        for (size_t i = 0; i < span; i++)
            in[i] = (int)(i / (size_t)step) * 3 + me;
        for (int what = 0; what < 6; what++) {
            memset(out, 0x5a, span * sizeof(int));
            MPI_Request rq;
            int root = n - 1;
            if (what == 0)
                MT_MPI(MPI_Allreduce(in, out, tc, t, MPI_SUM, MPI_COMM_WORLD));
            else if (what == 1) {
                MT_MPI(MPI_Iallreduce(in, out, tc, t, MPI_SUM, MPI_COMM_WORLD,
                                      &rq));
                MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else if (what == 2) {
                MT_MPI(MPI_Allreduce_init(in, out, tc, t, MPI_SUM,
                                          MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
                for (int k = 0; k < 2; k++) {
                    MT_MPI(MPI_Start(&rq));
                    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                }
                MT_MPI(MPI_Request_free(&rq));
            } else if (what == 3)
                MT_MPI(
                    MPI_Reduce(in, out, tc, t, MPI_SUM, root, MPI_COMM_WORLD));
            else if (what == 4)
                MT_MPI(MPI_Scan(in, out, tc, t, MPI_SUM, MPI_COMM_WORLD));
            else {
                MT_MPI(
                    MPI_Iexscan(in, out, tc, t, MPI_SUM, MPI_COMM_WORLD, &rq));
                MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            }
            /* Int i of the result: sum over ranks r (all; to us; below
             * us) of 3 i + r; holes of the vector untouched. */
            int lo = 0, hi = n;
            if (what == 4)
                hi = me + 1;
            else if (what == 5)
                hi = me;
            bool got = !(what == 3 && me != root) && !(what == 5 && me == 0);
            for (int i = 0; got && i < cnt; i++) {
                int want = 0;
                for (int r = lo; r < hi; r++)
                    want += 3 * i + r;
                MT_EQ(out[(size_t)i * (size_t)step], want, "mixed-layout sum");
                if (step == 2)
                    MT_EQ(out[(size_t)i * 2 + 1], 0x5a5a5a5a, "hole");
            }
        }
        if (t != MPI_INT)
            MT_MPI(MPI_Type_free(&t));
        free(in);
        free(out);
    }
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
    /* Blocks of 4 B, 400 B, one cell's share at 8 ranks (1 KiB), a whole
     * cell (8192 ints) and beyond it. */
    static const int cnts[] = {1, 100, 256, 1024, 8192, 8193, 20000};
    for (size_t i = 0; i < sizeof(cnts) / sizeof(cnts[0]); i++)
        test_moves(MPI_COMM_WORLD, cnts[i], "world");
    test_comms();
    test_reuse();
    test_inflight();
    if (!mt_on_mpich())
        test_mixed_layouts();
    return mt_finish("coll_shm");
}
