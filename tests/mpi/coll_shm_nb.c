/* SPDX-License-Identifier: MIT */
/* The nonblocking collectives over shared memory (coll/shm_nb.c), and the
 * point-to-point schedules they fall back to, against references: every
 * value is a function of (rank, index) computed here, and the reductions'
 * references are also gathered with point-to-point messages and combined
 * in rank order. Ibcast from every root, Ireduce at every root and
 * Iallreduce (MPI_SUM on int, a non-commutative user op), Iallgather,
 * Ialltoall, Igather and Iscatter (every root), Ialltoallw with its
 * datatypes freed before the wait, Ireduce_scatter(_block)
 * (uneven counts, a zero one), in place and not, at sizes on
 * both sides of the slot's inline limit (384 B) and well beyond (single copy);
 * Ibarrier checked through a shared window. Then several collectives
 * outstanding at once on one communicator, waited in reverse order, with
 * MPI_Waitall and with MPI_Testany loops; on two communicators started in
 * different orders on even and odd ranks; mixed with blocking collectives and a
 * large point-to-point transfer in flight; persistent collectives; and
 * communicators freed with nonblocking collectives just completed. Guard
 * bytes after every receive buffer must stay untouched. */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>

static int n, me;

#define GUARD 64
#define GV 0x5A

static int ival(int r, int k)
{
    return (int)((uint32_t)r * 2654435761u + (uint32_t)k * 40503u) % 100000;
}

static void guard_set(void *b, size_t len)
{
    memset((char *)b + len, GV, GUARD);
}

static void guard_check(const void *b, size_t len, const char *what)
{
    MT_ALL((const char *)b + len, GUARD, GV, what);
}

/* ---- Ibcast ----------------------------------------------------------- */

static void test_ibcast(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    static const size_t sz[] = {1, 383, 384, 385, 4000, 65537, (1 << 20) + 3};
    size_t max = (1 << 20) + 3;
    char *b = mt_malloc(max + GUARD);
    for (int root = 0; root < cn; root++) {
        for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
            uint32_t seed = (uint32_t)(root * 31 + (int)i + 11);
            if (cme == root)
                mt_fill(b, sz[i], seed);
            else
                memset(b, 0, sz[i]);
            guard_set(b, sz[i]);
            MPI_Request r;
            MT_MPI(MPI_Ibcast(b, (int)sz[i], MPI_BYTE, root, comm, &r));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            MT_VERIFY(b, sz[i], seed, what);
            guard_check(b, sz[i], "guard after Ibcast buffer");
        }
    }
    /* Strided (packed by the root, unpacked by the readers): every other
     * int of 2 * m, the gaps untouched; below and above the slot. */
    static const int ms[] = {50, 5000};
    for (size_t j = 0; j < 2; j++) {
        int m = ms[j];
        MPI_Datatype vec;
        MT_MPI(MPI_Type_vector(m, 1, 2, MPI_INT, &vec));
        MT_MPI(MPI_Type_commit(&vec));
        int *v = mt_malloc(sizeof(int) * 2 * (size_t)m);
        for (int root = 0; root < cn; root++) {
            for (int k = 0; k < 2 * m; k++)
                v[k] = cme == root ? k : -1 - k;
            MPI_Request r;
            MT_MPI(MPI_Ibcast(v, 1, vec, root, comm, &r));
            /* The type may go before the operation completes. */
            if (root == cn - 1)
                MT_MPI(MPI_Type_free(&vec));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int k = 0; k < 2 * m; k++) {
                int want = k % 2 == 0 ? k : (cme == root ? k : -1 - k);
                if (v[k] != want)
                    MT_FAIL("%s strided Ibcast root %d: v[%d] = %d, "
                            "expected %d",
                            what, root, k, v[k], want);
            }
        }
        free(v);
    }
    free(b);
}

/* ---- reductions -------------------------------------------------------- */

/* (a, b) pairs composed as affine maps x -> a x + b mod 2^32: associative,
 * not commutative. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    /* *len elements of *dt, each a run of (a, b) pairs. */
    int size;
    MPI_Type_size(*dt, &size);
    uint32_t *x = in, *y = inout;
    for (int i = 0; i < *len * (size / 8); i++) {
        uint32_t a1 = x[2 * i], b1 = x[2 * i + 1];
        uint32_t a2 = y[2 * i], b2 = y[2 * i + 1];
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

/* The rank-order reduction of everyone's 'in' (cnt elements of 'dt', esz
 * bytes each), computed by gathering the inputs with point-to-point
 * messages at every member: out = in_0 op (in_1 op ... in_{P-1}). */
static void p2p_reference(const void *in, void *out, int cnt, size_t esz,
                          MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    size_t bytes = (size_t)cnt * esz;
    char *all = mt_malloc(bytes * (size_t)cn);
    MPI_Request *rq = mt_malloc(sizeof(MPI_Request) * 2 * (size_t)cn);
    int nr = 0;
    for (int r = 0; r < cn; r++) {
        if (r == cme) {
            memcpy(all + bytes * (size_t)r, in, bytes);
            continue;
        }
        MT_MPI(MPI_Irecv(all + bytes * (size_t)r, cnt, dt, r, 77, comm,
                         &rq[nr++]));
        MT_MPI(MPI_Isend(in, cnt, dt, r, 77, comm, &rq[nr++]));
    }
    MT_MPI(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
    memcpy(out, all + bytes * (size_t)(cn - 1), bytes);
    for (int r = cn - 2; r >= 0; r--)
        MT_MPI(MPI_Reduce_local(all + bytes * (size_t)r, out, cnt, dt, op));
    free(rq);
    free(all);
}

static void test_ireduce(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    /* Ints: 96 fill a slot exactly. */
    static const int cnts[] = {1, 3, 95, 96, 97, 1000, 100003};
    for (size_t i = 0; i < sizeof(cnts) / sizeof(cnts[0]); i++) {
        int m = cnts[i];
        size_t bytes = sizeof(int) * (size_t)m;
        int *in = mt_malloc(bytes), *out = mt_malloc(bytes + GUARD);
        int *ref = mt_malloc(bytes);
        for (int k = 0; k < m; k++) {
            in[k] = ival(cme, k);
            int s = 0;
            for (int r = 0; r < cn; r++)
                s += ival(r, k);
            ref[k] = s;
        }
        for (int inplace = 0; inplace < 2; inplace++) {
            /* Iallreduce. */
            if (inplace)
                memcpy(out, in, bytes);
            else
                memset(out, 0, bytes);
            guard_set(out, bytes);
            MPI_Request r;
            MT_MPI(MPI_Iallreduce(inplace ? MPI_IN_PLACE : in, out, m, MPI_INT,
                                  MPI_SUM, comm, &r));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int k = 0; k < m; k++)
                if (out[k] != ref[k])
                    MT_FAIL("%s Iallreduce%s count %d: [%d] = %d, expected %d",
                            what, inplace ? " in place" : "", m, k, out[k],
                            ref[k]);
            guard_check(out, bytes, "guard after Iallreduce");
            /* Ireduce at every root (in place only at the root). */
            for (int root = 0; root < cn; root++) {
                bool ip = inplace && cme == root;
                if (ip)
                    memcpy(out, in, bytes);
                else
                    memset(out, 0, bytes);
                guard_set(out, bytes);
                MT_MPI(MPI_Ireduce(ip ? MPI_IN_PLACE : in, out, m, MPI_INT,
                                   MPI_SUM, root, comm, &r));
                MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
                for (int k = 0; cme == root && k < m; k++)
                    if (out[k] != ref[k])
                        MT_FAIL("%s Ireduce%s root %d count %d: [%d] = %d, "
                                "expected %d",
                                what, ip ? " in place" : "", root, m, k, out[k],
                                ref[k]);
                for (int k = 0; cme != root && !ip && k < m; k++)
                    if (out[k] != 0)
                        MT_FAIL("%s Ireduce: non-root %d's recvbuf written",
                                what, cme);
                guard_check(out, bytes, "guard after Ireduce");
            }
        }
        free(in);
        free(out);
        free(ref);
    }
    /* Non-commutative: rank order, checked against the point-to-point
     * reference. 8 bytes per element; 48 fill a slot; from 8192 slices. */
    MPI_Op aff;
    MPI_Datatype pair;
    MT_MPI(MPI_Op_create(affine, 0, &aff));
    MT_MPI(MPI_Type_contiguous(2, MPI_UINT32_T, &pair));
    MT_MPI(MPI_Type_commit(&pair));
    static const int acnts[] = {1, 48, 49, 5003, 9001};
    for (size_t i = 0; i < sizeof(acnts) / sizeof(acnts[0]); i++) {
        int m = acnts[i];
        size_t bytes = 8 * (size_t)m;
        uint32_t *in = mt_malloc(bytes), *out = mt_malloc(bytes + GUARD);
        uint32_t *ref = mt_malloc(bytes);
        for (int k = 0; k < m; k++) {
            in[2 * k] = aff_a(cme, k);
            in[2 * k + 1] = aff_b(cme, k);
        }
        p2p_reference(in, ref, m, 8, pair, aff, comm);
        MPI_Request r;
        memset(out, 0, bytes);
        guard_set(out, bytes);
        MT_MPI(MPI_Iallreduce(in, out, m, pair, aff, comm, &r));
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (memcmp(out, ref, bytes) != 0)
            MT_FAIL("%s Iallreduce non-commutative count %d differs from "
                    "the rank-order reference",
                    what, m);
        guard_check(out, bytes, "guard after non-commutative Iallreduce");
        for (int root = 0; root < cn; root++) {
            memset(out, 0, bytes);
            MT_MPI(MPI_Ireduce(in, out, m, pair, aff, root, comm, &r));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            if (cme == root && memcmp(out, ref, bytes) != 0)
                MT_FAIL("%s Ireduce non-commutative root %d count %d "
                        "differs from the reference",
                        what, root, m);
        }
        free(in);
        free(out);
        free(ref);
    }
    /* Elements of 50 pairs (400 bytes, more than a slot holds), fewer
     * than members or barely more: beyond a slot and spread over the
     * members (FERRY_COLL_CMA_MIN=0 FERRY_COLL_DIRECT_MIN=0), some
     * members' slices are empty. */
    MPI_Datatype blk;
    MT_MPI(MPI_Type_contiguous(50, pair, &blk));
    MT_MPI(MPI_Type_commit(&blk));
    for (int m = 1; m <= cn + 1; m++) {
        size_t bytes = 400 * (size_t)m;
        uint32_t *in = mt_malloc(bytes), *out = mt_malloc(bytes + GUARD);
        uint32_t *ref = mt_malloc(bytes);
        for (int k = 0; k < 100 * m; k += 2) {
            in[k] = aff_a(cme, k);
            in[k + 1] = aff_b(cme, k);
        }
        p2p_reference(in, ref, m, 400, blk, aff, comm);
        for (int root = 0; root < cn; root++) {
            MPI_Request r;
            memset(out, 0, bytes);
            guard_set(out, bytes);
            MT_MPI(MPI_Ireduce(in, out, m, blk, aff, root, comm, &r));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            if (cme == root && memcmp(out, ref, bytes) != 0)
                MT_FAIL("%s Ireduce of %d 400-byte elements at root %d "
                        "differs from the reference",
                        what, m, root);
            guard_check(out, bytes, "guard after Ireduce of 400-byte elements");
        }
        free(in);
        free(out);
        free(ref);
    }
    MT_MPI(MPI_Type_free(&blk));
    MT_MPI(MPI_Op_free(&aff));
    MT_MPI(MPI_Type_free(&pair));
}

/* Ireduce_scatter (counts differ by rank, one of them 0) and
 * Ireduce_scatter_block with the non-commutative op, in place and not,
 * totals inline in a slot (up to 48 pairs), beyond (the point-to-point
 * schedule) and from 64 KiB (by address: 9000 pairs per block); each
 * block checked against the rank-order reference of the whole vector,
 * and nothing written past the block. */
static void test_ireduce_scatter(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    MPI_Op aff;
    MPI_Datatype pair;
    MT_MPI(MPI_Op_create(affine, 0, &aff));
    MT_MPI(MPI_Type_contiguous(2, MPI_UINT32_T, &pair));
    MT_MPI(MPI_Type_commit(&pair));
    int *counts = mt_malloc(sizeof(int) * (size_t)cn);
    static const int scale[] = {1, 3, 40, 9000};
    for (size_t si = 0; si < sizeof(scale) / sizeof(scale[0]); si++) {
        for (int block = 0; block < 2; block++) {
            int total = 0, start = 0;
            for (int r = 0; r < cn; r++) {
                /* _block: the same everywhere; else 0 for the last rank. */
                counts[r] = block ? scale[si]
                                  : (r == cn - 1 ? 0 : scale[si] * (r % 3 + 1));
                start += r < cme ? counts[r] : 0;
                total += counts[r];
            }
            int mine = counts[cme];
            size_t tb = 8 * (size_t)total, mb = 8 * (size_t)mine;
            uint32_t *in = mt_malloc(tb + 8), *ref = mt_malloc(tb + 8);
            uint32_t *out = mt_malloc(tb + GUARD + 8);
            for (int k = 0; k < total; k++) {
                in[2 * k] = aff_a(cme, k);
                in[2 * k + 1] = aff_b(cme, k);
            }
            p2p_reference(in, ref, total, 8, pair, aff, comm);
            for (int inplace = 0; inplace < 2; inplace++) {
                if (inplace)
                    memcpy(out, in, tb);
                else
                    memset(out, 0, tb);
                guard_set(out, inplace ? tb : mb);
                MPI_Request r;
                const void *sb = inplace ? MPI_IN_PLACE : (const void *)in;
                if (block)
                    MT_MPI(MPI_Ireduce_scatter_block(sb, out, mine, pair, aff,
                                                     comm, &r));
                else
                    MT_MPI(MPI_Ireduce_scatter(sb, out, counts, pair, aff, comm,
                                               &r));
                MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
                if (memcmp(out, ref + 2 * start, mb) != 0)
                    MT_FAIL("%s Ireduce_scatter%s%s total %d: rank %d's "
                            "block differs from the rank-order reference",
                            what, block ? "_block" : "",
                            inplace ? " in place" : "", total, cme);
                if (!inplace)
                    guard_check(out, mb, "guard after Ireduce_scatter");
                else
                    guard_check(out, tb, "guard after Ireduce_scatter");
            }
            free(in);
            free(ref);
            free(out);
        }
    }
    free(counts);
    MT_MPI(MPI_Op_free(&aff));
    MT_MPI(MPI_Type_free(&pair));
}

/* ---- allgather, alltoall ----------------------------------------------- */

static int mval(int from, int to, int k)
{
    return from * 1000003 + to * 1009 + k;
}

/* Ialltoallw with a strided type the program frees right after the call
 * (MPI lets it): the collective keeps the type until it completes. Each
 * member sends member r a block of r + 1 ints taken every other int and
 * receives contiguous ints. */
static void test_ialltoallw_freed(MPI_Comm comm, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    int *sc = mt_malloc(sizeof(int) * (size_t)cn * 4);
    int *sd = sc + cn, *rc = sd + cn, *rd = rc + cn;
    MPI_Datatype *st = mt_malloc(sizeof(MPI_Datatype) * 2 * (size_t)cn);
    MPI_Datatype *rt = st + cn, every2;
    MT_MPI(MPI_Type_vector(cn, 1, 2, MPI_INT, &every2));
    MT_MPI(MPI_Type_commit(&every2));
    size_t sints = (size_t)cn * 2 * (size_t)cn, rints = (size_t)cn * cn;
    int *sb = mt_malloc(sizeof(int) * sints),
        *rb = mt_malloc(sizeof(int) * rints + GUARD);
    for (size_t k = 0; k < sints; k++)
        sb[k] = -1;
    for (int r = 0; r < cn; r++) {
        /* Block r: the first r + 1 elements of 'every2' at int 2 cn r. */
        for (int k = 0; k <= r; k++)
            sb[(size_t)2 * cn * r + 2 * (size_t)k] = mval(cme, r, k);
        sc[r] = 1;
        sd[r] = (int)(sizeof(int) * (size_t)2 * cn * r);
        st[r] = every2;
        rc[r] = cme + 1;
        rd[r] = (int)(sizeof(int) * (size_t)cn * r);
        rt[r] = MPI_INT;
    }
    /* 'every2' holds cn elements; members below the last get fewer: a
     * type of r + 1 elements for each. */
    MPI_Datatype *own = mt_malloc(sizeof(MPI_Datatype) * (size_t)cn);
    for (int r = 0; r < cn; r++) {
        MT_MPI(MPI_Type_vector(r + 1, 1, 2, MPI_INT, &own[r]));
        MT_MPI(MPI_Type_commit(&own[r]));
        st[r] = own[r];
    }
    memset(rb, 0, sizeof(int) * rints);
    guard_set(rb, sizeof(int) * rints);
    MPI_Request q;
    MT_MPI(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, &q));
    for (int r = 0; r < cn; r++)
        MT_MPI(MPI_Type_free(&own[r]));
    MT_MPI(MPI_Type_free(&every2));
    MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int r = 0; r < cn; r++)
        for (int k = 0; k <= cme; k++)
            if (rb[(size_t)cn * r + (size_t)k] != mval(r, cme, k))
                MT_FAIL("%s Ialltoallw (types freed): block from %d [%d] = "
                        "%d, expected %d",
                        what, r, k, rb[(size_t)cn * r + (size_t)k],
                        mval(r, cme, k));
    guard_check(rb, sizeof(int) * rints, "guard after Ialltoallw");
    free(own);
    free(sb);
    free(rb);
    free(st);
    free(sc);
}

static void test_moves(MPI_Comm comm, int m, const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    size_t blk = sizeof(int) * (size_t)m, all = blk * (size_t)cn;
    int *s = mt_malloc(all), *rb = mt_malloc(all + GUARD);
    for (int inplace = 0; inplace < 2; inplace++) {
        /* Iallgather. */
        for (int k = 0; k < m; k++)
            s[k] = mval(cme, 0, k);
        memset(rb, 0, all);
        if (inplace)
            memcpy(rb + (size_t)m * (size_t)cme, s, blk);
        guard_set(rb, all);
        MPI_Request r;
        MT_MPI(MPI_Iallgather(inplace ? MPI_IN_PLACE : s, m, MPI_INT, rb, m,
                              MPI_INT, comm, &r));
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int f = 0; f < cn; f++)
            for (int k = 0; k < m; k++)
                if (rb[(size_t)f * (size_t)m + (size_t)k] != mval(f, 0, k))
                    MT_FAIL("%s Iallgather%s block %d: [%d] = %d", what,
                            inplace ? " in place" : "", f, k,
                            rb[(size_t)f * (size_t)m + (size_t)k]);
        guard_check(rb, all, "guard after Iallgather");
        /* Ialltoall. */
        for (int t = 0; t < cn; t++)
            for (int k = 0; k < m; k++)
                (inplace ? rb : s)[(size_t)t * (size_t)m + (size_t)k] =
                    mval(cme, t, k);
        if (!inplace)
            memset(rb, 0, all);
        guard_set(rb, all);
        MT_MPI(MPI_Ialltoall(inplace ? MPI_IN_PLACE : s, m, MPI_INT, rb, m,
                             MPI_INT, comm, &r));
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int f = 0; f < cn; f++)
            for (int k = 0; k < m; k++)
                if (rb[(size_t)f * (size_t)m + (size_t)k] != mval(f, cme, k))
                    MT_FAIL("%s Ialltoall%s count %d from %d: [%d] = %d", what,
                            inplace ? " in place" : "", m, f, k,
                            rb[(size_t)f * (size_t)m + (size_t)k]);
        guard_check(rb, all, "guard after Ialltoall");
        /* Igather and Iscatter at every root (in place at the root). */
        for (int root = 0; root < cn; root++) {
            bool ip = inplace && cme == root;
            for (int k = 0; k < m; k++)
                s[k] = mval(cme, root, k);
            memset(rb, 0, all);
            if (ip)
                memcpy(rb + (size_t)m * (size_t)cme, s, blk);
            guard_set(rb, all);
            MT_MPI(MPI_Igather(ip ? MPI_IN_PLACE : s, m, MPI_INT, rb, m,
                               MPI_INT, root, comm, &r));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int f = 0; cme == root && f < cn; f++)
                for (int k = 0; k < m; k++)
                    if (rb[(size_t)f * (size_t)m + (size_t)k] !=
                        mval(f, root, k))
                        MT_FAIL("%s Igather%s root %d count %d from %d: "
                                "[%d] = %d",
                                what, ip ? " in place" : "", root, m, f, k,
                                rb[(size_t)f * (size_t)m + (size_t)k]);
            if (cme != root)
                MT_ALL(rb, all, 0, "Igather: a non-root's recvbuf written");
            guard_check(rb, all, "guard after Igather");
            /* Scatter block t of the root's buffer to member t. */
            if (cme == root)
                for (int t = 0; t < cn; t++)
                    for (int k = 0; k < m; k++)
                        s[(size_t)t * (size_t)m + (size_t)k] = mval(root, t, k);
            memset(rb, 0, blk);
            guard_set(rb, blk);
            MT_MPI(MPI_Iscatter(s, m, MPI_INT, ip ? MPI_IN_PLACE : rb, m,
                                MPI_INT, root, comm, &r));
            MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int k = 0; !ip && k < m; k++)
                if (rb[k] != mval(root, cme, k))
                    MT_FAIL("%s Iscatter root %d count %d: [%d] = %d", what,
                            root, m, k, rb[k]);
            if (ip)
                MT_ALL(rb, blk, 0, "Iscatter in place: rbuf written");
            guard_check(rb, blk, "guard after Iscatter");
            for (int k = 0; cme == root && k < m; k++)
                if (s[(size_t)cme * (size_t)m + (size_t)k] !=
                    mval(root, cme, k))
                    MT_FAIL("%s Iscatter: the root's own block changed", what);
        }
    }
    free(s);
    free(rb);
}

/* ---- Ibarrier through a shared window ---------------------------------- */

static void test_ibarrier(void)
{
    MPI_Comm node;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    int nn, nme;
    MPI_Comm_size(node, &nn);
    MPI_Comm_rank(node, &nme);
    volatile int *base;
    MPI_Win win;
    MT_MPI(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL,
                                   node, (void *)&base, &win));
    volatile int *slot0;
    MPI_Aint sz;
    int du;
    MT_MPI(MPI_Win_shared_query(win, 0, &sz, &du, (void *)&slot0));
    MT_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int k = 1; k <= 30; k++) {
        *base = k;
        MT_MPI(MPI_Win_sync(win));
        MPI_Request r;
        MT_MPI(MPI_Ibarrier(node, &r));
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Win_sync(win));
        for (int i = 0; i < nn; i++)
            if (slot0[i] != k)
                MT_FAIL("Ibarrier round %d: rank %d's flag is %d", k, i,
                        slot0[i]);
        /* Nobody writes round k+1 before everyone checked round k. */
        MT_MPI(MPI_Ibarrier(node, &r));
        int done = 0;
        while (!done)
            MT_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
    }
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Win_free(&win));
    MT_MPI(MPI_Comm_free(&node));
}

/* ---- several at once ------------------------------------------------- */

/* Six collectives on comm, started back to back; their buffers. */
struct batch {
    int m, root;
    int *ar_in, *ar_out, *bc, *ag_out, *aa_in, *aa_out, *rd_out;
    MPI_Request r[7];
};

static void batch_start(struct batch *b, MPI_Comm comm, int m, int root,
                        int salt)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    size_t blk = sizeof(int) * (size_t)m;
    b->m = m;
    b->root = root;
    b->ar_in = mt_malloc(blk);
    b->ar_out = mt_malloc(blk);
    b->bc = mt_malloc(blk);
    b->ag_out = mt_malloc(blk * (size_t)cn);
    b->aa_in = mt_malloc(blk * (size_t)cn);
    b->aa_out = mt_malloc(blk * (size_t)cn);
    b->rd_out = mt_malloc(blk);
    for (int k = 0; k < m; k++) {
        b->ar_in[k] = ival(cme, k + salt);
        b->bc[k] = cme == root ? k * 3 + salt : -1;
    }
    for (int t = 0; t < cn; t++)
        for (int k = 0; k < m; k++)
            b->aa_in[(size_t)t * (size_t)m + (size_t)k] =
                mval(cme, t, k + salt);
    MT_MPI(MPI_Iallreduce(b->ar_in, b->ar_out, m, MPI_INT, MPI_SUM, comm,
                          &b->r[0]));
    MT_MPI(MPI_Ibcast(b->bc, m, MPI_INT, root, comm, &b->r[1]));
    MT_MPI(MPI_Iallgather(b->ar_in, m, MPI_INT, b->ag_out, m, MPI_INT, comm,
                          &b->r[2]));
    MT_MPI(MPI_Ibarrier(comm, &b->r[3]));
    MT_MPI(MPI_Ialltoall(b->aa_in, m, MPI_INT, b->aa_out, m, MPI_INT, comm,
                         &b->r[4]));
    MT_MPI(MPI_Ireduce(b->ar_in, b->rd_out, m, MPI_INT, MPI_MAX, root, comm,
                       &b->r[5]));
    MT_MPI(MPI_Ibarrier(comm, &b->r[6]));
}

static void batch_check(struct batch *b, MPI_Comm comm, int salt,
                        const char *what)
{
    int cn, cme;
    MPI_Comm_size(comm, &cn);
    MPI_Comm_rank(comm, &cme);
    int m = b->m;
    for (int k = 0; k < m; k++) {
        int s = 0, mx = ival(0, k + salt);
        for (int r = 0; r < cn; r++) {
            s += ival(r, k + salt);
            mx = ival(r, k + salt) > mx ? ival(r, k + salt) : mx;
        }
        if (b->ar_out[k] != s)
            MT_FAIL("%s: Iallreduce [%d] = %d, expected %d", what, k,
                    b->ar_out[k], s);
        if (b->bc[k] != k * 3 + salt)
            MT_FAIL("%s: Ibcast [%d] = %d", what, k, b->bc[k]);
        if (cme == b->root && b->rd_out[k] != mx)
            MT_FAIL("%s: Ireduce max [%d] = %d, expected %d", what, k,
                    b->rd_out[k], mx);
        for (int f = 0; f < cn; f++) {
            size_t at = (size_t)f * (size_t)m + (size_t)k;
            if (b->ag_out[at] != ival(f, k + salt))
                MT_FAIL("%s: Iallgather from %d [%d] = %d", what, f, k,
                        b->ag_out[at]);
            if (b->aa_out[at] != mval(f, cme, k + salt))
                MT_FAIL("%s: Ialltoall from %d [%d] = %d", what, f, k,
                        b->aa_out[at]);
        }
    }
    free(b->ar_in);
    free(b->ar_out);
    free(b->bc);
    free(b->ag_out);
    free(b->aa_in);
    free(b->aa_out);
    free(b->rd_out);
}

static void wait_reverse(MPI_Request *r, int cnt)
{
    for (int i = cnt - 1; i >= 0; i--)
        MT_MPI(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
}

static void wait_testany(MPI_Request *r, int cnt)
{
    for (int left = cnt; left > 0;) {
        int idx, flag;
        MT_MPI(MPI_Testany(cnt, r, &idx, &flag, MPI_STATUS_IGNORE));
        if (flag && idx != MPI_UNDEFINED)
            left--;
    }
}

static void test_outstanding(void)
{
    static const int ms[] = {1, 20, 97, 3000};
    MPI_Comm dup;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
        int m = ms[i];
        for (int how = 0; how < 3; how++) {
            /* One communicator, several at once. */
            struct batch a;
            batch_start(&a, MPI_COMM_WORLD, m, (how + (int)i) % n, how);
            if (how == 0)
                wait_reverse(a.r, 7);
            else if (how == 1)
                MT_MPI(MPI_Waitall(7, a.r, MPI_STATUSES_IGNORE));
            else
                wait_testany(a.r, 7);
            batch_check(&a, MPI_COMM_WORLD, how, "one comm");
            /* Two communicators, started in different orders on even and
             * odd ranks (MPI orders collectives per communicator only),
             * all fourteen waited together or in reverse. */
            struct batch x, y;
            if (me % 2 == 0) {
                batch_start(&x, MPI_COMM_WORLD, m, 0, 5 + how);
                batch_start(&y, dup, m, n - 1, 9 + how);
            } else {
                batch_start(&y, dup, m, n - 1, 9 + how);
                batch_start(&x, MPI_COMM_WORLD, m, 0, 5 + how);
            }
            MPI_Request rr[14];
            for (int k = 0; k < 7; k++) {
                rr[k] = x.r[k];
                rr[7 + k] = y.r[k];
            }
            if (how == 0)
                wait_reverse(rr, 14);
            else if (how == 1)
                MT_MPI(MPI_Waitall(14, rr, MPI_STATUSES_IGNORE));
            else
                wait_testany(rr, 14);
            batch_check(&x, MPI_COMM_WORLD, 5 + how, "two comms (world)");
            batch_check(&y, dup, 9 + how, "two comms (dup)");
        }
    }
    MT_MPI(MPI_Comm_free(&dup));
}

/* A nonblocking collective in flight across blocking collectives on
 * another communicator and on its own, and a large point-to-point
 * transfer in flight across all of them. */
static void test_mixed(void)
{
    MPI_Comm dup;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    size_t len = 4u << 20;
    char *big = mt_malloc(len);
    MPI_Request pr = MPI_REQUEST_NULL;
    int to = (me + 1) % n, from = (me + n - 1) % n;
    if (me % 2 == 0) {
        mt_fill(big, len, 123u + (uint32_t)me);
        MT_MPI(MPI_Isend(big, (int)len, MPI_BYTE, to, 5, MPI_COMM_WORLD, &pr));
    }
    for (int i = 0; i < 20; i++) {
        int x = me + i, s = -1, t = -1, u = -1, b = me == i % n ? i : -1;
        MPI_Request r[3];
        MT_MPI(
            MPI_Iallreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]));
        MT_MPI(MPI_Allreduce(&x, &t, 1, MPI_INT, MPI_SUM, dup));
        MT_MPI(MPI_Ibcast(&b, 1, MPI_INT, i % n, MPI_COMM_WORLD, &r[1]));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Iallreduce(&x, &u, 1, MPI_INT, MPI_MAX, dup, &r[2]));
        MT_MPI(MPI_Bcast(&t, 1, MPI_INT, 0, MPI_COMM_WORLD));
        MT_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        MT_EQ(s, n * (n - 1) / 2 + n * i, "Iallreduce across blocking ones");
        MT_EQ(t, n * (n - 1) / 2 + n * i, "Allreduce with one in flight");
        MT_EQ(b, i, "Ibcast across blocking ones");
        MT_EQ(u, n - 1 + i, "Iallreduce max on dup");
    }
    if (from % 2 == 0) { /* even ranks sent to their right neighbour */
        char *rb = mt_malloc(len);
        MT_MPI(MPI_Recv(rb, (int)len, MPI_BYTE, from, 5, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        MT_VERIFY(rb, len, 123u + (uint32_t)from, "transfer across NB colls");
        free(rb);
    }
    MT_MPI(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    free(big);
    MT_MPI(MPI_Comm_free(&dup));
}

/* Persistent collectives start the same machines. */
static void test_persistent(void)
{
    int m = 200;
    int *in = mt_malloc(sizeof(int) * (size_t)m);
    int *out = mt_malloc(sizeof(int) * (size_t)m);
    int bc[4];
    MPI_Request r[2];
    MT_MPI(MPI_Allreduce_init(in, out, m, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &r[0]));
    MT_MPI(MPI_Bcast_init(bc, 4, MPI_INT, n - 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &r[1]));
    for (int it = 0; it < 10; it++) {
        for (int k = 0; k < m; k++)
            in[k] = ival(me, k + it);
        for (int k = 0; k < 4; k++)
            bc[k] = me == n - 1 ? it * 10 + k : -1;
        MT_MPI(MPI_Startall(2, r));
        MT_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int k = 0; k < m; k++) {
            int s = 0;
            for (int q = 0; q < n; q++)
                s += ival(q, k + it);
            if (out[k] != s)
                MT_FAIL("Allreduce_init round %d: [%d] = %d, expected %d", it,
                        k, out[k], s);
        }
        for (int k = 0; k < 4; k++)
            MT_EQ(bc[k], it * 10 + k, "Bcast_init");
    }
    MT_MPI(MPI_Request_free(&r[0]));
    MT_MPI(MPI_Request_free(&r[1]));
    free(in);
    free(out);
}

/* Fresh communicators reuse context ids (and slots): each dup's first
 * nonblocking collectives must not see its predecessor's last inline
 * publications, freed right after they completed. */
static void test_reuse(void)
{
    for (int i = 0; i < 100; i++) {
        MPI_Comm d;
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int root = i % n, x = me + 7 * i, y = -1, b = me == root ? i : -1;
        MPI_Request r[3];
        MT_MPI(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, d, &r[0]));
        MT_MPI(MPI_Ibcast(&b, 1, MPI_INT, root, d, &r[1]));
        MT_MPI(MPI_Ibarrier(d, &r[2]));
        MT_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        MT_EQ(y, n * (n - 1) / 2 + 7 * i * n, "Iallreduce on a fresh dup");
        MT_EQ(b, i, "Ibcast on a fresh dup");
        /* Freed with the last ones maybe still in flight elsewhere. */
        if (i % 2)
            MT_MPI(MPI_Ibarrier(d, &r[0]));
        MT_MPI(MPI_Comm_free(&d));
        if (i % 2)
            MT_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    n = mt_size;
    me = mt_rank;
    if (n < 2)
        return mt_finish("coll_shm_nb");
    MPI_Comm rev;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rev));
    test_ibcast(MPI_COMM_WORLD, "world");
    test_ireduce(MPI_COMM_WORLD, "world");
    test_ireduce_scatter(MPI_COMM_WORLD, "world");
    test_ialltoallw_freed(MPI_COMM_WORLD, "world");
    /* Blocks: 4 B; inline at 8 ranks (12 ints); a slot's worth at 2
     * ranks (48 ints); beyond (single copy or point-to-point). */
    static const int cnts[] = {1, 12, 48, 97, 20000};
    for (size_t i = 0; i < sizeof(cnts) / sizeof(cnts[0]); i++)
        test_moves(MPI_COMM_WORLD, cnts[i], "world");
    test_ibcast(rev, "reversed");
    test_ireduce(rev, "reversed");
    test_ireduce_scatter(rev, "reversed");
    test_moves(rev, 12, "reversed");
    test_moves(rev, 3000, "reversed");
    MT_MPI(MPI_Comm_free(&rev));
    test_ibarrier();
    test_outstanding();
    test_mixed();
    test_persistent();
    test_reuse();
    return mt_finish("coll_shm_nb");
}
