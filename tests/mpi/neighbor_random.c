/* SPDX-License-Identifier: MIT */
/* Random neighbourhood collectives against an oracle of the test's own:
 * each round, from a seed every rank shares, a topology - a distributed
 * graph of random directed edges (self loops too, built with
 * MPI_Dist_graph_create_adjacent, or with MPI_Dist_graph_create from
 * edges each rank names for others, whose neighbour order the library
 * chooses and MPI_Dist_graph_neighbors reports), or a Cartesian grid of
 * random dimensions and periods (MPI_PROC_NULL neighbours at open ends)
 * - and a collective: Neighbor_allgather, _allgatherv, _alltoall,
 * _alltoallv, _alltoallw (a random derived datatype per block, from
 * tests/mpi/dtype_gen.h), blocking, nonblocking or persistent (started
 * twice), blocks of 0 ints to 64 Ki ints. Every block received is
 * checked against what its sender put in the block for that edge, and
 * the bytes between blocks and the guards around them stay untouched.
 * --rounds N (default 60), --seed S. */
#include "dtype_gen.h"

enum { K_AG, K_AGV, K_A2A, K_A2AV, K_A2AW, NKINDS };
enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT, NMODES };

static uint64_t s_seed = 1;
static int s_rounds = 60;

static int32_t val(uint32_t round, int src, int dst, int nth, long i)
{
    return (int32_t)((uint32_t)i * 2654435761u ^ round * 40503u ^
                     (uint32_t)(src + 1) * 0x9e3779b9u ^
                     (uint32_t)(dst + 2) * 0x85ebca6bu ^
                     (uint32_t)nth * 0xc2b2ae35u);
}

/* Block length (ints) of the edge src -> dst (its nth such edge). */
static long len_of(uint32_t round, int src, int dst, int nth, long m, bool v)
{
    if (!v)
        return m;
    uint64_t x = (uint64_t)round * 7919 + (uint64_t)src * 104729 +
                 (uint64_t)dst * 1299709 + (uint64_t)nth * 15485863 + s_seed;
    return (long)(mt_splitmix(&x) % (uint64_t)(m + 1));
}

static void one_round(uint32_t round)
{
    dg_rng = s_seed * 0x100000001b3ull ^ round;
    int P = mt_size, me = mt_rank;
    int topo = (int)dg_rnd(0, 2); /* adjacent, general graph, Cartesian */
    int kind = (int)dg_rnd(0, NKINDS - 1), mode = (int)dg_rnd(0, NMODES - 1);
    long m = dg_rnd(0, 3) ? dg_rnd(0, 48) : dg_rnd(0, 1 << 16);
    bool v = kind == K_AGV || kind == K_A2AV || kind == K_A2AW;
    MPI_Comm comm;
    int indeg = 0, outdeg = 0, *src = NULL, *dst = NULL;
    if (topo < 2) {
        /* edge[r * P + d]: r -> d, at most one per pair. */
        bool *edge = mt_malloc((size_t)P * (size_t)P * sizeof(bool));
        int pct = (int)dg_rnd(10, 80);
        for (int i = 0; i < P * P; i++)
            edge[i] = dg_rnd(0, 99) < pct;
        src = mt_malloc(sizeof(int) * (size_t)P);
        dst = mt_malloc(sizeof(int) * (size_t)P);
        /* Our lists in a random order of the plan (the same on every
         * rank, drawn for all). */
        int *order = mt_malloc(sizeof(int) * (size_t)P);
        for (int r = 0; r < P; r++) {
            for (int i = 0; i < P; i++)
                order[i] = i;
            for (int i = P - 1; i > 0; i--) {
                int k = (int)dg_rnd(0, i), x = order[i];
                order[i] = order[k];
                order[k] = x;
            }
            if (r != me)
                continue;
            for (int i = 0; i < P; i++) {
                if (edge[(size_t)me * P + order[i]])
                    dst[outdeg++] = order[i];
                if (edge[(size_t)order[i] * P + me])
                    src[indeg++] = order[i];
            }
        }
        free(order);
        if (topo == 0) {
            MT_MPI(MPI_Dist_graph_create_adjacent(
                MPI_COMM_WORLD, indeg, src, MPI_UNWEIGHTED, outdeg, dst,
                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm));
        } else {
            /* Each rank names the out-edges of rank (me + 1) % P. */
            int who = (me + 1) % P, n = 0;
            int *d = mt_malloc(sizeof(int) * (size_t)P);
            for (int x = 0; x < P; x++)
                if (edge[(size_t)who * P + x])
                    d[n++] = x;
            int one = n;
            MT_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n > 0 ? 1 : 0, &who,
                                         &one, d, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                         0, &comm));
            free(d);
            /* The library's order: ask it. */
            int wi = -1, wo = -1, w = -1;
            MT_MPI(MPI_Dist_graph_neighbors_count(comm, &wi, &wo, &w));
            MT_EQ(wi, indeg, "in-degree");
            MT_EQ(wo, outdeg, "out-degree");
            MT_MPI(MPI_Dist_graph_neighbors(comm, indeg, src, MPI_UNWEIGHTED,
                                            outdeg, dst, MPI_UNWEIGHTED));
        }
        free(edge);
    } else {
        int nd = (int)dg_rnd(1, 3), dims[3] = {0, 0, 0}, per[3];
        for (int i = 0; i < nd; i++)
            per[i] = (int)dg_rnd(0, 1);
        MT_MPI(MPI_Dims_create(P, nd, dims));
        MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, per, 0, &comm));
        indeg = outdeg = 2 * nd;
        src = mt_malloc(sizeof(int) * (size_t)indeg);
        dst = mt_malloc(sizeof(int) * (size_t)outdeg);
        for (int i = 0; i < nd; i++) /* MPI's order: -1 then +1 per dim */
            MT_MPI(MPI_Cart_shift(comm, i, 1, &src[2 * i], &src[2 * i + 1]));
        for (int i = 0; i < 2 * nd; i++)
            dst[i] = src[i];
    }
    /* Which edge of the sender a block travels: graphs have one edge per
     * pair (0); a Cartesian rank's out-edge k (dimension k / 2, -1 then
     * +1) lands in the receiver's slot k ^ 1 (its neighbour on the other
     * side), and with two ranks along a periodic dimension both edges join
     * the same pair. */
    bool cart = topo == 2, gather = kind == K_AG || kind == K_AGV;
#define SEND_NTH(k) (cart ? (k) : 0)
#define RECV_NTH(k) (cart ? (k) ^ 1 : 0)
    /* Block lengths: allgather(v) one block per sender, else per edge. */
    long sblock = gather ? len_of(round, me, -1, 0, m, v) : 0;
    long *scnt = mt_malloc(sizeof(long) * (size_t)(outdeg + 1));
    long *rcnt = mt_malloc(sizeof(long) * (size_t)(indeg + 1));
    for (int k = 0; k < outdeg; k++)
        scnt[k] =
            gather ? sblock : len_of(round, me, dst[k], SEND_NTH(k), m, v);
    for (int k = 0; k < indeg; k++)
        rcnt[k] = src[k] == MPI_PROC_NULL ? (v ? 0 : m)
                  : gather                ? len_of(round, src[k], -1, 0, m, v)
                           : len_of(round, src[k], me, RECV_NTH(k), m, v);
    /* Displacements in ints with random gaps (uniform forms: packed). */
    int nsb = gather ? 1 : outdeg;
    int *sd = mt_malloc(sizeof(int) * (size_t)(nsb + 1));
    int *rd = mt_malloc(sizeof(int) * (size_t)(indeg + 1));
    bool packed = kind == K_AG || kind == K_A2A;
    long stot = 0, rtot = 0;
    for (int k = 0; k < nsb; k++) {
        stot += packed ? 0 : dg_rnd(0, 3);
        sd[k] = (int)stot;
        stot += gather ? sblock : scnt[k];
    }
    for (int k = 0; k < indeg; k++) {
        rtot += packed ? 0 : dg_rnd(0, 3);
        rd[k] = (int)rtot;
        rtot += rcnt[k];
    }
    if (nsb == 0)
        sd[0] = 0;
    int32_t *sbuf = mt_malloc(sizeof(int32_t) * (size_t)(stot + 1));
    int32_t *rbuf = mt_malloc(sizeof(int32_t) * (size_t)(rtot + 2 * DG_GUARD));
    int32_t *rb = rbuf + DG_GUARD;
    memset(rbuf, 0xEE, sizeof(int32_t) * (size_t)(rtot + 2 * DG_GUARD));
    for (int k = 0; k < nsb; k++)
        for (long i = 0; i < (gather ? sblock : scnt[k]); i++)
            sbuf[sd[k] + i] = gather ? val(round, me, -1, 0, i)
                                     : val(round, me, dst[k], SEND_NTH(k), i);
    int *sci = mt_malloc(sizeof(int) * (size_t)(outdeg + 1));
    int *rci = mt_malloc(sizeof(int) * (size_t)(indeg + 1));
    for (int k = 0; k < outdeg; k++)
        sci[k] = (int)scnt[k];
    for (int k = 0; k < indeg; k++)
        rci[k] = (int)rcnt[k];
    /* Alltoallw: byte displacements and a type per block (plain ints or
     * one contiguous run of the block's ints). */
    MPI_Aint *sdw = mt_malloc(sizeof(MPI_Aint) * (size_t)(outdeg + 1));
    MPI_Aint *rdw = mt_malloc(sizeof(MPI_Aint) * (size_t)(indeg + 1));
    MPI_Datatype *st = mt_malloc(sizeof(MPI_Datatype) * (size_t)(outdeg + 1));
    MPI_Datatype *rt = mt_malloc(sizeof(MPI_Datatype) * (size_t)(indeg + 1));
    int *swc = mt_malloc(sizeof(int) * (size_t)(outdeg + 1));
    int *rwc = mt_malloc(sizeof(int) * (size_t)(indeg + 1));
    for (int k = 0; k < outdeg; k++) {
        sdw[k] = 4 * (MPI_Aint)(gather ? sd[0] : sd[k]);
        st[k] = MPI_INT;
        swc[k] = sci[k];
        if (scnt[k] > 0 && dg_rnd(0, 1)) {
            MT_MPI(MPI_Type_contiguous(sci[k], MPI_INT, &st[k]));
            MT_MPI(MPI_Type_commit(&st[k]));
            swc[k] = 1;
        }
    }
    for (int k = 0; k < indeg; k++) {
        rdw[k] = 4 * (MPI_Aint)rd[k];
        rt[k] = MPI_INT;
        rwc[k] = rci[k];
    }
    MPI_Request rq = MPI_REQUEST_NULL, *q = mode == M_BLOCKING ? NULL : &rq;
    bool pers = mode == M_PERSISTENT;
    const int32_t *s0 = sbuf + sd[0];
    switch (kind) {
    case K_AG:
        if (!q)
            MT_MPI(MPI_Neighbor_allgather(s0, (int)m, MPI_INT, rb, (int)m,
                                          MPI_INT, comm));
        else if (pers)
            MT_MPI(MPI_Neighbor_allgather_init(s0, (int)m, MPI_INT, rb, (int)m,
                                               MPI_INT, comm, MPI_INFO_NULL,
                                               q));
        else
            MT_MPI(MPI_Ineighbor_allgather(s0, (int)m, MPI_INT, rb, (int)m,
                                           MPI_INT, comm, q));
        break;
    case K_AGV:
        if (!q)
            MT_MPI(MPI_Neighbor_allgatherv(s0, (int)sblock, MPI_INT, rb, rci,
                                           rd, MPI_INT, comm));
        else if (pers)
            MT_MPI(MPI_Neighbor_allgatherv_init(s0, (int)sblock, MPI_INT, rb,
                                                rci, rd, MPI_INT, comm,
                                                MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ineighbor_allgatherv(s0, (int)sblock, MPI_INT, rb, rci,
                                            rd, MPI_INT, comm, q));
        break;
    case K_A2A:
        if (!q)
            MT_MPI(MPI_Neighbor_alltoall(sbuf, (int)m, MPI_INT, rb, (int)m,
                                         MPI_INT, comm));
        else if (pers)
            MT_MPI(MPI_Neighbor_alltoall_init(sbuf, (int)m, MPI_INT, rb, (int)m,
                                              MPI_INT, comm, MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ineighbor_alltoall(sbuf, (int)m, MPI_INT, rb, (int)m,
                                          MPI_INT, comm, q));
        break;
    case K_A2AV:
        if (!q)
            MT_MPI(MPI_Neighbor_alltoallv(sbuf, sci, sd, MPI_INT, rb, rci, rd,
                                          MPI_INT, comm));
        else if (pers)
            MT_MPI(MPI_Neighbor_alltoallv_init(sbuf, sci, sd, MPI_INT, rb, rci,
                                               rd, MPI_INT, comm, MPI_INFO_NULL,
                                               q));
        else
            MT_MPI(MPI_Ineighbor_alltoallv(sbuf, sci, sd, MPI_INT, rb, rci, rd,
                                           MPI_INT, comm, q));
        break;
    default:
        if (!q)
            MT_MPI(MPI_Neighbor_alltoallw(sbuf, swc, sdw, st, rb, rwc, rdw, rt,
                                          comm));
        else if (pers)
            MT_MPI(MPI_Neighbor_alltoallw_init(sbuf, swc, sdw, st, rb, rwc, rdw,
                                               rt, comm, MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ineighbor_alltoallw(sbuf, swc, sdw, st, rb, rwc, rdw, rt,
                                           comm, q));
        break;
    }
    if (q) {
        int times = pers ? 2 : 1;
        for (int t = 0; t < times; t++) {
            if (pers)
                MT_MPI(MPI_Start(q));
            MT_MPI(MPI_Wait(q, MPI_STATUS_IGNORE));
        }
        if (pers)
            MT_MPI(MPI_Request_free(q));
    }
    /* The oracle: block k from in-neighbour src[k] (MPI_PROC_NULL: left
     * alone), then nothing else touched. */
    char ctx[160];
    snprintf(ctx, sizeof ctx, "round %u: kind %d mode %d topo %d, m %ld, %d in",
             round, kind, mode, topo, m, indeg);
    for (int k = 0; k < indeg; k++) {
        if (src[k] == MPI_PROC_NULL)
            continue;
        for (long i = 0; i < rcnt[k]; i++) {
            int32_t want = gather ? val(round, src[k], -1, 0, i)
                                  : val(round, src[k], me, RECV_NTH(k), i);
            if (rb[rd[k] + i] != want)
                MT_FAIL("%s: block %d (from %d) int %ld is %d, expected %d",
                        ctx, k, src[k], i, rb[rd[k] + i], want);
            memset(&rb[rd[k] + i], 0xEE, 4);
        }
    }
    MT_ALL(rbuf, sizeof(int32_t) * (size_t)(rtot + 2 * DG_GUARD), 0xEE, ctx);
    for (int k = 0; k < outdeg; k++)
        if (st[k] != MPI_INT)
            MT_MPI(MPI_Type_free(&st[k]));
    free(sbuf);
    free(rbuf);
    free(src);
    free(dst);
    free(scnt);
    free(rcnt);
    free(sd);
    free(rd);
    free(sci);
    free(rci);
    free(sdw);
    free(rdw);
    free(st);
    free(rt);
    free(swc);
    free(rwc);
    MT_MPI(MPI_Comm_free(&comm));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (!dg_common_opt(argc, argv, &i, &s_rounds, &s_seed))
            MT_FAIL("usage: neighbor_random [--rounds N] [--seed S]");
    for (int r = 0; r < s_rounds; r++)
        one_round((uint32_t)r);
    return mt_finish("neighbor_random");
}
