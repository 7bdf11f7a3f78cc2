/* SPDX-License-Identifier: MIT */
/* The v and w collectives, reduce-scatter and the scans (coll/shm.c's
 * described blocks and rounds; the point-to-point algorithms under
 * FERRY_COLL=p2p) against references computed here: Gatherv, Scatterv
 * (every root), Allgatherv and Alltoallv with irregular counts including
 * zeros, blocks laid out backwards with gaps (which must stay untouched),
 * sizes from a few ints to several cells (32 KiB), in place, and a
 * strided datatype on either side; Alltoallw mixing int and strided
 * blocks; Reduce_scatter_block, Reduce_scatter, Scan and Exscan with
 * MPI_SUM and a non-commutative user op, in place, at counts crossing one
 * cell; on MPI_COMM_WORLD and on a communicator with its ranks reversed;
 * then all of it again with the nonblocking forms (each waited for at
 * once). */
#include "mpitest.h"

#include <stdint.h>

static int n, me;
static MPI_Comm s_comm; /* where the collectives run; n, me in it */
static int s_nb;        /* run the nonblocking forms (then MPI_Wait) */

/* The collective 'call' (blocking) or 'icall' (its I form, then waited
 * for) by s_nb; returns the MPI return code. */
#define COLL(call, icall) (s_nb ? nb_wait(icall) : (call))
static MPI_Request s_req;
static int nb_wait(int rc)
{
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(&s_req, MPI_STATUS_IGNORE);
}

#define SENT (-7) /* what the receive buffers hold where nothing lands */

static int val(int from, int to, long k)
{
    return from * 1000003 + to * 7919 + (int)k;
}

/* One side of a transfer: MPI_INT, or 'st' (2 ints out of every 3). */
struct side {
    MPI_Datatype dt;
    int per; /* ints per element */
    int ext; /* extent in ints */
};
static struct side s_int, s_st;

/* Where int k of a run of elements of s lies, in ints. */
static long at(const struct side *s, long k)
{
    return s->per == 1 ? k : (k / 2) * 3 + (k % 2) * 2;
}

/* Ints member 'from' sends member 'to' (even, so both sides can hold
 * them; zero for some pairs). */
static int ints_of(int from, int to, int scale)
{
    return 2 * scale * ((from * 3 + to * 5 + scale) % 4);
}

static void check(const int *got, const int *want, long len, const char *what,
                  int root, int scale)
{
    for (long i = 0; i < len; i++)
        if (got[i] != want[i])
            MT_FAIL("%s root %d scale %d: int %ld is %d, expected %d", what,
                    root, scale, i, got[i], want[i]);
}

static int *fill_sent(long len)
{
    int *b = mt_malloc(sizeof(int) * (size_t)(len ? len : 1));
    for (long i = 0; i < len; i++)
        b[i] = SENT;
    return b;
}

/* Displacements (in elements of s) of P blocks of counts[] laid out from
 * the last to the first with one element's gap before each; returns the
 * buffer's length in ints. */
static long layout(const int *counts, int *displs, const struct side *s)
{
    long e = 1;
    for (int r = n - 1; r >= 0; r--) {
        displs[r] = (int)e;
        e += counts[r] + 1;
    }
    return e * s->ext;
}

static void put(int *buf, const struct side *s, int displ, int nints, int from,
                int to)
{
    int *b = buf + (long)displ * s->ext;
    for (long k = 0; k < nints; k++)
        b[at(s, k)] = val(from, to, k);
}

static void test_gatherv(int scale, const struct side *ss,
                         const struct side *rs, int inplace)
{
    int counts[64], displs[64];
    for (int r = 0; r < n; r++)
        counts[r] = ints_of(r, 0, scale) / rs->per;
    long len = layout(counts, displs, rs);
    int mine = ints_of(me, 0, scale);
    int *sb = fill_sent((long)mine / ss->per * ss->ext + 3);
    put(sb, ss, 0, mine, me, 0);
    for (int root = 0; root < n; root++) {
        int *rb = fill_sent(len), *want = fill_sent(len);
        for (int r = 0; r < n; r++)
            put(want, rs, displs[r], ints_of(r, 0, scale), r, 0);
        if (inplace && me == root)
            put(rb, rs, displs[me], mine, me, 0);
        const void *s = inplace && me == root ? MPI_IN_PLACE : sb;
        MT_MPI(COLL(MPI_Gatherv(s, mine / ss->per, ss->dt, rb, counts, displs,
                                rs->dt, root, s_comm),
                    MPI_Igatherv(s, mine / ss->per, ss->dt, rb, counts, displs,
                                 rs->dt, root, s_comm, &s_req)));
        if (me == root)
            check(rb, want, len, "Gatherv", root, scale);
        free(rb);
        free(want);
    }
    free(sb);
}

static void test_scatterv(int scale, const struct side *ss,
                          const struct side *rs, int inplace)
{
    int counts[64], displs[64];
    for (int r = 0; r < n; r++)
        counts[r] = ints_of(0, r, scale) / ss->per;
    long len = layout(counts, displs, ss);
    int mine = ints_of(0, me, scale);
    long rlen = (long)mine / rs->per * rs->ext + 3;
    for (int root = 0; root < n; root++) {
        int *sb = fill_sent(len);
        for (int r = 0; r < n; r++)
            put(sb, ss, displs[r], ints_of(0, r, scale), root, r);
        int *rb = fill_sent(rlen), *want = fill_sent(rlen);
        put(want, rs, 0, mine, root, me);
        void *r = inplace && me == root ? MPI_IN_PLACE : rb;
        MT_MPI(COLL(MPI_Scatterv(sb, counts, displs, ss->dt, r, mine / rs->per,
                                 rs->dt, root, s_comm),
                    MPI_Iscatterv(sb, counts, displs, ss->dt, r, mine / rs->per,
                                  rs->dt, root, s_comm, &s_req)));
        if (r != MPI_IN_PLACE)
            check(rb, want, rlen, "Scatterv", root, scale);
        free(sb);
        free(rb);
        free(want);
    }
}

static void test_allgatherv(int scale, const struct side *ss,
                            const struct side *rs, int inplace)
{
    int counts[64], displs[64];
    for (int r = 0; r < n; r++)
        counts[r] = ints_of(r, 0, scale) / rs->per;
    long len = layout(counts, displs, rs);
    int mine = ints_of(me, 0, scale);
    int *sb = fill_sent((long)mine / ss->per * ss->ext + 3);
    put(sb, ss, 0, mine, me, 0);
    int *rb = fill_sent(len), *want = fill_sent(len);
    for (int r = 0; r < n; r++)
        put(want, rs, displs[r], ints_of(r, 0, scale), r, 0);
    if (inplace)
        put(rb, rs, displs[me], mine, me, 0);
    MT_MPI(COLL(MPI_Allgatherv(inplace ? MPI_IN_PLACE : sb, mine / ss->per,
                               ss->dt, rb, counts, displs, rs->dt, s_comm),
                MPI_Iallgatherv(inplace ? MPI_IN_PLACE : sb, mine / ss->per,
                                ss->dt, rb, counts, displs, rs->dt, s_comm,
                                &s_req)));
    check(rb, want, len, "Allgatherv", -1, scale);
    free(sb);
    free(rb);
    free(want);
}

static void test_alltoallv(int scale, const struct side *ss,
                           const struct side *rs, int inplace)
{
    int sc[64], sd[64], rc[64], rd[64];
    for (int r = 0; r < n; r++) {
        sc[r] = ints_of(me, r, scale) / ss->per;
        rc[r] = ints_of(r, me, scale) / rs->per;
    }
    long slen = layout(sc, sd, ss), rlen = layout(rc, rd, rs);
    int *sb = fill_sent(slen), *rb = fill_sent(rlen), *want = fill_sent(rlen);
    for (int r = 0; r < n; r++) {
        put(sb, ss, sd[r], ints_of(me, r, scale), me, r);
        put(want, rs, rd[r], ints_of(r, me, scale), r, me);
    }
    if (inplace) {
        /* Symmetric counts in place: what we send to r is in rbuf. */
        for (int r = 0; r < n; r++)
            rc[r] = ints_of(me + r, 0, scale) / rs->per;
        rlen = layout(rc, rd, rs);
        free(rb);
        free(want);
        rb = fill_sent(rlen);
        want = fill_sent(rlen);
        for (int r = 0; r < n; r++) {
            put(rb, rs, rd[r], ints_of(me + r, 0, scale), me, r);
            put(want, rs, rd[r], ints_of(me + r, 0, scale), r, me);
        }
    }
    MT_MPI(COLL(MPI_Alltoallv(inplace ? MPI_IN_PLACE : sb, sc, sd, ss->dt, rb,
                              rc, rd, rs->dt, s_comm),
                MPI_Ialltoallv(inplace ? MPI_IN_PLACE : sb, sc, sd, ss->dt, rb,
                               rc, rd, rs->dt, s_comm, &s_req)));
    check(rb, want, rlen, "Alltoallv", -1, scale);
    free(sb);
    free(rb);
    free(want);
}

/* Alltoallw: blocks to/from odd members strided, byte displacements. */
static void test_alltoallw(int scale)
{
    int sc[64], sd[64], rc[64], rd[64];
    MPI_Datatype st[64], rt[64];
    long se = 1, re = 1;
    for (int r = n - 1; r >= 0; r--) {
        const struct side *ss = r % 2 ? &s_st : &s_int;
        const struct side *rs = me % 2 ? &s_st : &s_int;
        st[r] = ss->dt;
        rt[r] = rs->dt;
        sc[r] = ints_of(me, r, scale) / ss->per;
        rc[r] = ints_of(r, me, scale) / rs->per;
        sd[r] = (int)(se * sizeof(int));
        rd[r] = (int)(re * sizeof(int));
        se += (long)sc[r] * ss->ext + 1;
        re += (long)rc[r] * rs->ext + 1;
    }
    int *sb = fill_sent(se), *rb = fill_sent(re), *want = fill_sent(re);
    for (int r = 0; r < n; r++) {
        put(sb + sd[r] / (int)sizeof(int), r % 2 ? &s_st : &s_int, 0,
            ints_of(me, r, scale), me, r);
        put(want + rd[r] / (int)sizeof(int), me % 2 ? &s_st : &s_int, 0,
            ints_of(r, me, scale), r, me);
    }
    MT_MPI(
        COLL(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, s_comm),
             MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, s_comm, &s_req)));
    check(rb, want, re, "Alltoallw", -1, scale);
    free(sb);
    free(rb);
    free(want);
}

/* ---- reductions -------------------------------------------------------- */

/* (a, b) pairs composed as affine maps x -> a x + b modulo 2^32:
 * associative, not commutative (as in coll_shm.c). */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint32_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        uint32_t a1 = x[2 * i], b1 = x[2 * i + 1];
        uint32_t a2 = y[2 * i], b2 = y[2 * i + 1];
        y[2 * i] = a1 * a2;
        y[2 * i + 1] = a1 * b2 + b1;
    }
}

static MPI_Datatype s_pair;
static MPI_Op s_aff;

/* Member r's contribution at element k: an int for SUM (aff 0), a pair
 * for the affine op. */
static void contrib(uint32_t *v, int r, long k, int aff)
{
    if (!aff) {
        v[0] = (uint32_t)(r * 1000 + k % 977);
        return;
    }
    v[0] = (uint32_t)(2 * (r * 31 + k) + 1);
    v[1] = (uint32_t)r * 1000003u + (uint32_t)k * 7u;
}

/* The reduction of members [0, upto) at element k, in rank order. */
static void ref(uint32_t *v, int upto, long k, int aff)
{
    contrib(v, upto - 1, k, aff);
    for (int r = upto - 2; r >= 0; r--) {
        uint32_t c[2];
        contrib(c, r, k, aff);
        if (!aff) {
            v[0] += c[0];
        } else {
            uint32_t a = v[0], b = v[1];
            v[0] = c[0] * a;
            v[1] = c[0] * b + c[1];
        }
    }
}

static void test_reduce_scatter(int scale, int aff, int inplace, int block)
{
    int w = aff ? 2 : 1; /* uint32 per element */
    MPI_Datatype dt = aff ? s_pair : MPI_UINT32_T;
    MPI_Op op = aff ? s_aff : MPI_SUM;
    int counts[64];
    long total = 0, start = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = block ? scale : scale * ((r * 5 + scale) % 3);
        if (r < me)
            start += counts[r];
        total += counts[r];
    }
    uint32_t *sb = mt_malloc(sizeof(uint32_t) * (size_t)(total * w + 1));
    for (long k = 0; k < total; k++)
        contrib(sb + k * w, me, k, aff);
    long mine = counts[me];
    uint32_t *rb = mt_malloc(sizeof(uint32_t) * (size_t)(mine * w + 1));
    if (block)
        MT_MPI(COLL(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : sb,
                                             inplace ? sb : rb, scale, dt, op,
                                             s_comm),
                    MPI_Ireduce_scatter_block(inplace ? MPI_IN_PLACE : sb,
                                              inplace ? sb : rb, scale, dt, op,
                                              s_comm, &s_req)));
    else
        MT_MPI(COLL(
            MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : sb, inplace ? sb : rb,
                               counts, dt, op, s_comm),
            MPI_Ireduce_scatter(inplace ? MPI_IN_PLACE : sb, inplace ? sb : rb,
                                counts, dt, op, s_comm, &s_req)));
    const uint32_t *got = inplace ? sb : rb;
    for (long k = 0; k < mine; k++) {
        uint32_t v[2];
        ref(v, n, start + k, aff);
        for (int i = 0; i < w; i++)
            if (got[k * w + i] != v[i])
                MT_FAIL("Reduce_scatter%s%s%s scale %d: element %ld[%d] is "
                        "%u, expected %u",
                        block ? "_block" : "", aff ? " affine" : " sum",
                        inplace ? " in place" : "", scale, k, i, got[k * w + i],
                        v[i]);
    }
    free(sb);
    free(rb);
}

static void test_scan(int count, int aff, int inplace, int ex)
{
    int w = aff ? 2 : 1;
    MPI_Datatype dt = aff ? s_pair : MPI_UINT32_T;
    MPI_Op op = aff ? s_aff : MPI_SUM;
    uint32_t *sb = mt_malloc(sizeof(uint32_t) * (size_t)(count * w + 1));
    uint32_t *rb = mt_malloc(sizeof(uint32_t) * (size_t)(count * w + 1));
    for (long k = 0; k < count; k++)
        contrib(sb + k * w, me, k, aff);
    for (long k = 0; k < (long)count * w; k++)
        rb[k] = 0xdeadbeefu;
    const void *s = inplace ? MPI_IN_PLACE : sb;
    uint32_t *r = inplace ? sb : rb;
    if (ex)
        MT_MPI(COLL(MPI_Exscan(s, r, count, dt, op, s_comm),
                    MPI_Iexscan(s, r, count, dt, op, s_comm, &s_req)));
    else
        MT_MPI(COLL(MPI_Scan(s, r, count, dt, op, s_comm),
                    MPI_Iscan(s, r, count, dt, op, s_comm, &s_req)));
    if (ex && me == 0) {
        /* Left untouched (in place: still our own values). */
        for (long k = 0; k < count && !inplace; k++)
            for (int i = 0; i < w; i++)
                if (rb[k * w + i] != 0xdeadbeefu)
                    MT_FAIL("Exscan touched rank 0's buffer");
    } else {
        for (long k = 0; k < count; k++) {
            uint32_t v[2];
            ref(v, ex ? me : me + 1, k, aff);
            for (int i = 0; i < w; i++)
                if (r[k * w + i] != v[i])
                    MT_FAIL("%s%s%s count %d: element %ld[%d] is %u, expected "
                            "%u",
                            ex ? "Exscan" : "Scan", aff ? " affine" : " sum",
                            inplace ? " in place" : "", count, k, i,
                            r[k * w + i], v[i]);
        }
    }
    free(sb);
    free(rb);
}

/* Gatherv and Scatterv where member 1's block is twice what the other
 * side takes: that side gets MPI_ERR_TRUNCATE and what fits, nothing past
 * it; everyone else succeeds. Small and beyond a cell. */
static void test_truncate(int len)
{
    MT_MPI(MPI_Comm_set_errhandler(s_comm, MPI_ERRORS_RETURN));
    int counts[64], displs[64];
    for (int r = 0; r < n; r++) {
        counts[r] = len;
        displs[r] = r * (len + 1);
    }
    long rlen = (long)n * (len + 1);
    int *sb = fill_sent(2L * len), *rb = fill_sent(rlen);
    put(sb, &s_int, 0, 2 * len, me, 0);
    int mine = me == 1 ? 2 * len : len;
    int rc = COLL(
        MPI_Gatherv(sb, mine, MPI_INT, rb, counts, displs, MPI_INT, 0, s_comm),
        MPI_Igatherv(sb, mine, MPI_INT, rb, counts, displs, MPI_INT, 0, s_comm,
                     &s_req));
    if (me == 0) {
        MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "truncated Gatherv");
        for (long i = 0; i < rlen; i++) {
            int r = (int)(i / (len + 1)), k = (int)(i % (len + 1));
            int want = k < len ? val(r, 0, k) : SENT;
            if (rb[i] != want)
                MT_FAIL("truncated Gatherv len %d: int %ld is %d, expected "
                        "%d",
                        len, i, rb[i], want);
        }
    } else {
        MT_EQ(rc, MPI_SUCCESS, "Gatherv beside a truncated block");
    }
    /* Scatterv from 0: member 1 takes half of its block. */
    int *src = fill_sent(rlen * 2);
    for (int r = 0; r < n; r++) {
        counts[r] = r == 1 ? 2 * len : len;
        displs[r] = r * (2 * len + 1);
        if (me == 0)
            put(src, &s_int, displs[r], counts[r], 0, r);
    }
    int *got = fill_sent(2L * len);
    rc = COLL(MPI_Scatterv(src, counts, displs, MPI_INT, got, len, MPI_INT, 0,
                           s_comm),
              MPI_Iscatterv(src, counts, displs, MPI_INT, got, len, MPI_INT, 0,
                            s_comm, &s_req));
    if (me == 1)
        MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "truncated Scatterv");
    else
        MT_EQ(rc, MPI_SUCCESS, "Scatterv beside a truncated block");
    for (long k = 0; k < 2L * len; k++) {
        int want = k < len ? val(0, me, k) : SENT;
        if (got[k] != want)
            MT_FAIL("Scatterv len %d (truncated at 1): int %ld is %d, "
                    "expected %d",
                    len, k, got[k], want);
    }
    free(src);
    free(got);
    free(sb);
    free(rb);
    MT_MPI(MPI_Comm_set_errhandler(s_comm, MPI_ERRORS_ARE_FATAL));
}

/* Everything once on s_comm. */
static void run_all(void)
{
    /* Blocks of up to 6 ints, 60 (inline in a nonblocking collective's
     * slot), 120 (beyond it), 600 (beyond a slot, within a cell), and up to
     * 30000 ints (several cells, read from the owner's buffer). */
    static const int scales[] = {1, 10, 20, 100, 5000};
    const struct side *sides[][2] = {
        {&s_int, &s_int}, {&s_int, &s_st}, {&s_st, &s_int}};
    for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++) {
        for (int m = 0; m < 3; m++) {
            const struct side *ss = sides[m][0], *rs = sides[m][1];
            test_gatherv(scales[i], ss, rs, 0);
            test_scatterv(scales[i], ss, rs, 0);
            test_allgatherv(scales[i], ss, rs, 0);
            test_alltoallv(scales[i], ss, rs, 0);
        }
        test_gatherv(scales[i], &s_int, &s_st, 1);
        test_scatterv(scales[i], &s_st, &s_int, 1);
        test_allgatherv(scales[i], &s_int, &s_int, 1);
        test_allgatherv(scales[i], &s_st, &s_st, 1);
        test_alltoallv(scales[i], &s_int, &s_int, 1);
        test_alltoallw(scales[i]);
    }
    /* Per member: 1 element, a few hundred, a share of a cell at 8
     * ranks, one cell (8192 uint32) and beyond. */
    static const int rs_counts[] = {1, 300, 1024, 8192, 8193, 20000};
    for (size_t i = 0; i < sizeof(rs_counts) / sizeof(rs_counts[0]); i++)
        for (int aff = 0; aff < 2; aff++)
            for (int inplace = 0; inplace < 2; inplace++)
                for (int block = 0; block < 2; block++)
                    test_reduce_scatter(rs_counts[i], aff, inplace, block);
    /* 48 pairs and 96 uint32 fill a nonblocking collective's slot
     * (384 B), 97 goes beyond. */
    static const int scan_counts[] = {1,    48,   96,   97,   511,
                                      4096, 8192, 8193, 40000};
    for (size_t i = 0; i < sizeof(scan_counts) / sizeof(scan_counts[0]); i++)
        for (int aff = 0; aff < 2; aff++)
            for (int inplace = 0; inplace < 2; inplace++)
                for (int ex = 0; ex < 2; ex++)
                    test_scan(scan_counts[i], aff, inplace, ex);
    test_truncate(5);
    test_truncate(20000);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (mt_size > 64)
        MT_FAIL("at most 64 ranks");
    MT_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &s_st.dt));
    MT_MPI(MPI_Type_commit(&s_st.dt));
    s_st.per = 2;
    s_st.ext = 3;
    MT_MPI(MPI_Type_contiguous(2, MPI_UINT32_T, &s_pair));
    MT_MPI(MPI_Type_commit(&s_pair));
    MT_MPI(MPI_Op_create(affine, 0, &s_aff));
    s_int = (struct side){MPI_INT, 1, 1};
    s_comm = MPI_COMM_WORLD;
    n = mt_size;
    me = mt_rank;
    run_all();
    /* Again with the world's ranks in reverse order. */
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &s_comm));
    MPI_Comm_rank(s_comm, &me);
    run_all();
    MT_MPI(MPI_Comm_free(&s_comm));
    /* The nonblocking forms (coll/shm_nb.c's described blocks, or the
     * point-to-point schedules), on both. */
    s_nb = 1;
    s_comm = MPI_COMM_WORLD;
    me = mt_rank;
    run_all();
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &s_comm));
    MPI_Comm_rank(s_comm, &me);
    run_all();
    MT_MPI(MPI_Comm_free(&s_comm));

    MT_MPI(MPI_Op_free(&s_aff));
    MT_MPI(MPI_Type_free(&s_pair));
    MT_MPI(MPI_Type_free(&s_st.dt));
    return mt_finish("coll_shm_v");
}
