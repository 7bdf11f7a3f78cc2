/* SPDX-License-Identifier: MIT */
/* Graph and distributed-graph topologies and the neighbourhood
 * collectives. Graphs: a ring (at 2 ranks every neighbour appears twice)
 * and a star; dist graphs with repeated edges, self edges and weights,
 * created adjacently and the general way (edges given by another rank)
 * with the neighbour lists compared; Cartesian grids, periodic (where the
 * -1 and +1 neighbours can be the same rank) and not (MPI_PROC_NULL
 * neighbours move nothing). Every neighbourhood collective, blocking and
 * nonblocking, runs on each and is checked against a reference computed
 * locally from every member's neighbour lists (gathered with
 * MPI_Allgather(v)). Then the error classes of wrong calls. */
#include "mpitest.h"

#define SENTINEL (-7)

/* This member's neighbours as the query functions give them, plus every
 * member's destinations (for the reference). */
struct nbrs {
    int kind;
    int indeg, outdeg;
    int *src, *dst;
    int size, rank;
    int *alloutdeg, *alldispl, *alldst;
};

static void nbrs_get(MPI_Comm c, struct nbrs *n)
{
    memset(n, 0, sizeof(*n));
    MT_MPI(MPI_Topo_test(c, &n->kind));
    MT_MPI(MPI_Comm_size(c, &n->size));
    MT_MPI(MPI_Comm_rank(c, &n->rank));
    if (n->kind == MPI_CART) {
        int nd;
        MT_MPI(MPI_Cartdim_get(c, &nd));
        n->indeg = n->outdeg = 2 * nd;
        n->src = mt_malloc(sizeof(int) * (size_t)(2 * nd + 1));
        n->dst = mt_malloc(sizeof(int) * (size_t)(2 * nd + 1));
        for (int d = 0; d < nd; d++) {
            int lo, hi;
            MT_MPI(MPI_Cart_shift(c, d, 1, &lo, &hi));
            n->src[2 * d] = n->dst[2 * d] = lo;
            n->src[2 * d + 1] = n->dst[2 * d + 1] = hi;
        }
    } else if (n->kind == MPI_GRAPH) {
        int k;
        MT_MPI(MPI_Graph_neighbors_count(c, n->rank, &k));
        n->indeg = n->outdeg = k;
        n->src = mt_malloc(sizeof(int) * (size_t)(k + 1));
        n->dst = mt_malloc(sizeof(int) * (size_t)(k + 1));
        MT_MPI(MPI_Graph_neighbors(c, n->rank, k, n->src));
        memcpy(n->dst, n->src, sizeof(int) * (size_t)k);
    } else {
        MT_EQ(n->kind, MPI_DIST_GRAPH, "topology kind");
        int w;
        MT_MPI(MPI_Dist_graph_neighbors_count(c, &n->indeg, &n->outdeg, &w));
        n->src = mt_malloc(sizeof(int) * (size_t)(n->indeg + 1));
        n->dst = mt_malloc(sizeof(int) * (size_t)(n->outdeg + 1));
        MT_MPI(MPI_Dist_graph_neighbors(c, n->indeg, n->src, MPI_UNWEIGHTED,
                                        n->outdeg, n->dst, MPI_UNWEIGHTED));
    }
    n->alloutdeg = mt_malloc(sizeof(int) * (size_t)n->size);
    n->alldispl = mt_malloc(sizeof(int) * (size_t)n->size);
    MT_MPI(MPI_Allgather(&n->outdeg, 1, MPI_INT, n->alloutdeg, 1, MPI_INT, c));
    int tot = 0;
    for (int r = 0; r < n->size; r++) {
        n->alldispl[r] = tot;
        tot += n->alloutdeg[r];
    }
    n->alldst = mt_malloc(sizeof(int) * (size_t)(tot + 1));
    MT_MPI(MPI_Allgatherv(n->dst, n->outdeg, MPI_INT, n->alldst, n->alloutdeg,
                          n->alldispl, MPI_INT, c));
}

static void nbrs_free(struct nbrs *n)
{
    free(n->src);
    free(n->dst);
    free(n->alloutdeg);
    free(n->alldispl);
    free(n->alldst);
}

/* Which destination index of source i sends to this member's block i, or
 * -1 for MPI_PROC_NULL. Cartesian: the opposite direction. Graphs: the
 * k-th appearance of s among my sources pairs with the k-th appearance of
 * me among s's destinations. */
static int pair_index(const struct nbrs *n, int i)
{
    int s = n->src[i];
    if (s == MPI_PROC_NULL)
        return -1;
    if (n->kind == MPI_CART)
        return i ^ 1;
    int k = 0;
    for (int x = 0; x < i; x++)
        k += n->src[x] == s;
    const int *sd = n->alldst + n->alldispl[s];
    for (int j = 0; j < n->alloutdeg[s]; j++)
        if (sd[j] == n->rank && k-- == 0)
            return j;
    MT_FAIL("source %d of rank %d has no matching destination", s, n->rank);
}

/* Element e of what rank r sends to its destination j (j -1: allgather). */
static int val(int r, int j, int e)
{
    return r * 10000 + (j + 1) * 100 + e;
}

static int vcount(int r, int j)
{
    return 1 + (r + j) % 3;
}

static MPI_Request s_req;
#define RUN(nb, coll, ...)                                                     \
    do {                                                                       \
        if (nb) {                                                              \
            MT_MPI(MPI_Ineighbor_##coll(__VA_ARGS__, &s_req));                 \
            MT_MPI(MPI_Wait(&s_req, MPI_STATUS_IGNORE));                       \
        } else {                                                               \
            MT_MPI(MPI_Neighbor_##coll(__VA_ARGS__));                          \
        }                                                                      \
    } while (0)

/* The same with the large-count form when 'big' is set (the one-count
 * collectives have one). */
#define RUN_C(nb, big, coll, ...)                                              \
    do {                                                                       \
        if (!(big)) {                                                          \
            RUN(nb, coll, __VA_ARGS__);                                        \
        } else if (nb) {                                                       \
            MT_MPI(MPI_Ineighbor_##coll##_c(__VA_ARGS__, &s_req));             \
            MT_MPI(MPI_Wait(&s_req, MPI_STATUS_IGNORE));                       \
        } else {                                                               \
            MT_MPI(MPI_Neighbor_##coll##_c(__VA_ARGS__));                      \
        }                                                                      \
    } while (0)

static void check_colls(MPI_Comm c, const char *what)
{
    struct nbrs n;
    nbrs_get(c, &n);
    const int cnt = 3;
    int in = n.indeg, out = n.outdeg;
    int *sbuf = mt_malloc(sizeof(int) * (size_t)(3 * cnt * (out + 1) + 8));
    int *rbuf = mt_malloc(sizeof(int) * (size_t)(3 * cnt * (in + 1) + 8));
    int *sc = mt_malloc(sizeof(int) * (size_t)(out + 1));
    int *sd = mt_malloc(sizeof(int) * (size_t)(out + 1));
    int *rc = mt_malloc(sizeof(int) * (size_t)(in + 1));
    int *rd = mt_malloc(sizeof(int) * (size_t)(in + 1));
    MPI_Aint *sdw = mt_malloc(sizeof(MPI_Aint) * (size_t)(out + 1));
    MPI_Aint *rdw = mt_malloc(sizeof(MPI_Aint) * (size_t)(in + 1));
    MPI_Datatype *st = mt_malloc(sizeof(MPI_Datatype) * (size_t)(out + 1));
    MPI_Datatype *rt = mt_malloc(sizeof(MPI_Datatype) * (size_t)(in + 1));
    int rsize = 3 * cnt * (in + 1) + 8;

    /* Blocking, nonblocking, then both again in the _c forms. */
    for (int round = 0; round < 4; round++) {
        int nb = round & 1, big = round >> 1;
        /* allgather: the same cnt ints to every destination. */
        for (int e = 0; e < cnt; e++)
            sbuf[e] = val(n.rank, -1, e);
        for (int x = 0; x < rsize; x++)
            rbuf[x] = SENTINEL;
        RUN_C(nb, big, allgather, sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, c);
        for (int i = 0; i < in; i++)
            for (int e = 0; e < cnt; e++) {
                int want =
                    n.src[i] == MPI_PROC_NULL ? SENTINEL : val(n.src[i], -1, e);
                if (rbuf[i * cnt + e] != want)
                    MT_FAIL("%s nb=%d allgather block %d (from %d) elem %d: "
                            "%d, want %d",
                            what, nb, i, n.src[i], e, rbuf[i * cnt + e], want);
            }

        /* allgatherv: 1 + rank % 3 ints, received in reverse block order
         * with a gap of one. */
        int mine = vcount(n.rank, 0);
        for (int e = 0; e < mine; e++)
            sbuf[e] = val(n.rank, -1, e);
        for (int i = in - 1, off = 0; i >= 0; i--) {
            rc[i] = n.src[i] == MPI_PROC_NULL ? 0 : vcount(n.src[i], 0);
            rd[i] = off;
            off += rc[i] + 1;
        }
        for (int x = 0; x < rsize; x++)
            rbuf[x] = SENTINEL;
        RUN(nb, allgatherv, sbuf, mine, MPI_INT, rbuf, rc, rd, MPI_INT, c);
        for (int i = 0; i < in; i++) {
            for (int e = 0; e < rc[i]; e++)
                MT_EQ(rbuf[rd[i] + e], val(n.src[i], -1, e), "allgatherv");
            MT_EQ(rbuf[rd[i] + rc[i]], SENTINEL, "allgatherv gap");
        }

        /* alltoall: block j for destination j. */
        for (int j = 0; j < out; j++)
            for (int e = 0; e < cnt; e++)
                sbuf[j * cnt + e] = val(n.rank, j, e);
        for (int x = 0; x < rsize; x++)
            rbuf[x] = SENTINEL;
        RUN_C(nb, big, alltoall, sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, c);
        for (int i = 0; i < in; i++) {
            int j = pair_index(&n, i);
            for (int e = 0; e < cnt; e++) {
                int want = j < 0 ? SENTINEL : val(n.src[i], j, e);
                if (rbuf[i * cnt + e] != want)
                    MT_FAIL("%s nb=%d alltoall block %d (from %d) elem %d: "
                            "%d, want %d",
                            what, nb, i, n.src[i], e, rbuf[i * cnt + e], want);
            }
        }

        /* alltoallv: vcount(rank, j) ints for destination j, packed in
         * reverse order; received with gaps. */
        for (int j = out - 1, off = 0; j >= 0; j--) {
            sc[j] = vcount(n.rank, j);
            sd[j] = off;
            for (int e = 0; e < sc[j]; e++)
                sbuf[off + e] = val(n.rank, j, e);
            off += sc[j];
        }
        for (int i = 0, off = 0; i < in; i++) {
            int j = pair_index(&n, i);
            rc[i] = j < 0 ? 0 : vcount(n.src[i], j);
            rd[i] = off;
            off += rc[i] + 1;
        }
        for (int x = 0; x < rsize; x++)
            rbuf[x] = SENTINEL;
        RUN(nb, alltoallv, sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, c);
        for (int i = 0; i < in; i++) {
            int j = pair_index(&n, i);
            for (int e = 0; e < rc[i]; e++)
                MT_EQ(rbuf[rd[i] + e], val(n.src[i], j, e), "alltoallv");
            MT_EQ(rbuf[rd[i] + rc[i]], SENTINEL, "alltoallv gap");
        }

        /* alltoallw: the same counts, byte displacements, and each
         * received block as one element of a contiguous type. */
        for (int j = 0; j < out; j++) {
            sdw[j] = (MPI_Aint)sd[j] * (MPI_Aint)sizeof(int);
            st[j] = MPI_INT;
        }
        for (int i = 0; i < in; i++) {
            rdw[i] = (MPI_Aint)rd[i] * (MPI_Aint)sizeof(int);
            if (rc[i] == 0) {
                rt[i] = MPI_DATATYPE_NULL; /* allowed with a zero count */
            } else {
                MT_MPI(MPI_Type_contiguous(rc[i], MPI_INT, &rt[i]));
                MT_MPI(MPI_Type_commit(&rt[i]));
            }
        }
        int *rc1 = mt_malloc(sizeof(int) * (size_t)(in + 1));
        for (int i = 0; i < in; i++)
            rc1[i] = rc[i] ? 1 : 0;
        for (int x = 0; x < rsize; x++)
            rbuf[x] = SENTINEL;
        RUN(nb, alltoallw, sbuf, sc, sdw, st, rbuf, rc1, rdw, rt, c);
        for (int i = 0; i < in; i++) {
            int j = pair_index(&n, i);
            for (int e = 0; e < rc[i]; e++)
                MT_EQ(rbuf[rd[i] + e], val(n.src[i], j, e), "alltoallw");
            MT_EQ(rbuf[rd[i] + rc[i]], SENTINEL, "alltoallw gap");
            if (rt[i] != MPI_DATATYPE_NULL)
                MT_MPI(MPI_Type_free(&rt[i]));
        }
        free(rc1);
    }
    free(sbuf);
    free(rbuf);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sdw);
    free(rdw);
    free(st);
    free(rt);
    nbrs_free(&n);
}

/* ---- graphs ----------------------------------------------------------- */

static void graph_ring(void)
{
    int n = mt_size;
    int *index = mt_malloc(sizeof(int) * (size_t)n);
    int *edges = mt_malloc(sizeof(int) * (size_t)(2 * n));
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + n) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
    MPI_Comm g;
    MT_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &g));
    int kind, nn, ne;
    MT_MPI(MPI_Topo_test(g, &kind));
    MT_EQ(kind, MPI_GRAPH, "ring Topo_test");
    MT_MPI(MPI_Graphdims_get(g, &nn, &ne));
    MT_EQ(nn, n, "ring nnodes");
    MT_EQ(ne, 2 * n, "ring nedges");
    int *gi = mt_malloc(sizeof(int) * (size_t)n);
    int *ge = mt_malloc(sizeof(int) * (size_t)(2 * n));
    MT_MPI(MPI_Graph_get(g, n, 2 * n, gi, ge));
    for (int i = 0; i < n; i++)
        MT_EQ(gi[i], index[i], "Graph_get index");
    for (int e = 0; e < 2 * n; e++)
        MT_EQ(ge[e], edges[e], "Graph_get edges");
    int cnt, nb[2];
    MT_MPI(MPI_Graph_neighbors_count(g, mt_rank, &cnt));
    MT_EQ(cnt, 2, "ring degree");
    MT_MPI(MPI_Graph_neighbors(g, mt_rank, 2, nb));
    MT_EQ(nb[0], (mt_rank - 1 + n) % n, "ring left");
    MT_EQ(nb[1], (mt_rank + 1) % n, "ring right");
    int nr;
    MT_MPI(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &nr));
    MT_EQ(nr, mt_rank, "Graph_map");
    check_colls(g, "ring");
    /* A duplicate keeps the graph. */
    MPI_Comm d;
    MT_MPI(MPI_Comm_dup(g, &d));
    MT_MPI(MPI_Topo_test(d, &kind));
    MT_EQ(kind, MPI_GRAPH, "dup Topo_test");
    check_colls(d, "ring dup");
    MT_MPI(MPI_Comm_free(&d));
    MT_MPI(MPI_Comm_free(&g));
    free(gi);
    free(ge);
    free(index);
    free(edges);
}

/* A star over all but the last rank (at 2 ranks: a single edge pair), so
 * one member gets MPI_COMM_NULL. */
static void graph_star(void)
{
    int n = mt_size > 2 ? mt_size - 1 : 2;
    int *index = mt_malloc(sizeof(int) * (size_t)n);
    int *edges = mt_malloc(sizeof(int) * (size_t)(2 * n));
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0)
            for (int j = 1; j < n; j++)
                edges[k++] = j;
        else
            edges[k++] = 0;
        index[i] = k;
    }
    MPI_Comm g;
    MT_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    if (mt_rank >= n) {
        MT_CHECK(g == MPI_COMM_NULL, "rank %d is outside the star", mt_rank);
        int nr;
        MT_MPI(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &nr));
        MT_EQ(nr, MPI_UNDEFINED, "Graph_map outside");
    } else {
        int cnt;
        MT_MPI(MPI_Graph_neighbors_count(g, 0, &cnt));
        MT_EQ(cnt, n - 1, "star centre degree");
        check_colls(g, "star");
        MT_MPI(MPI_Comm_free(&g));
    }
    free(index);
    free(edges);
}

/* ---- distributed graphs ------------------------------------------------ */

/* Rank r: out edges to r+1 twice (weights 1, 2) and to itself (3); in
 * edges from r-1 twice and from itself. */
static void dist_lists(int r, int *src, int *sw, int *dst, int *dw)
{
    int n = mt_size;
    dst[0] = dst[1] = (r + 1) % n;
    dst[2] = r;
    dw[0] = 10 * r + 1, dw[1] = 10 * r + 2, dw[2] = 10 * r + 3;
    int p = (r - 1 + n) % n;
    src[0] = src[1] = p;
    src[2] = r;
    sw[0] = 10 * p + 1, sw[1] = 10 * p + 2, sw[2] = 10 * r + 3;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0])
                        : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sorted (rank, weight) pairs of n edges. */
static void sort_pairs(int n, const int *ranks, const int *w, int *out)
{
    for (int i = 0; i < n; i++) {
        out[2 * i] = ranks[i];
        out[2 * i + 1] = w[i];
    }
    qsort(out, (size_t)n, 2 * sizeof(int), cmp_pair);
}

static void dist_graphs(void)
{
    int src[3], sw[3], dst[3], dw[3];
    dist_lists(mt_rank, src, sw, dst, dw);
    MPI_Comm a, g;
    MT_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, sw, 3, dst,
                                          dw, MPI_INFO_NULL, 1, &a));
    /* The general way: rank r gives the out edges of rank r + 1. */
    int owner = (mt_rank + 1) % mt_size;
    int os[3], osw[3], od[3], odw[3];
    dist_lists(owner, os, osw, od, odw);
    int deg = 3;
    MT_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &owner, &deg, od, odw,
                                 MPI_INFO_NULL, 0, &g));
    MPI_Comm cs[2] = {a, g};
    for (int k = 0; k < 2; k++) {
        int kind, in, out, w;
        MT_MPI(MPI_Topo_test(cs[k], &kind));
        MT_EQ(kind, MPI_DIST_GRAPH, "dist Topo_test");
        MT_MPI(MPI_Dist_graph_neighbors_count(cs[k], &in, &out, &w));
        MT_EQ(in, 3, "indegree");
        MT_EQ(out, 3, "outdegree");
        MT_EQ(w, 1, "weighted");
        int gs[3], gsw[3], gd[3], gdw[3];
        MT_MPI(MPI_Dist_graph_neighbors(cs[k], 3, gs, gsw, 3, gd, gdw));
        /* Out edges come in the order given, in edges in some order. */
        for (int i = 0; i < 3; i++) {
            MT_EQ(gd[i], dst[i], "destinations");
            MT_EQ(gdw[i], dw[i], "destweights");
        }
        int p1[6], p2[6];
        sort_pairs(3, gs, gsw, p1);
        sort_pairs(3, src, sw, p2);
        for (int i = 0; i < 6; i++)
            MT_EQ(p1[i], p2[i], "sources and weights (sorted)");
        check_colls(cs[k], k ? "dist general" : "dist adjacent");
    }
    MT_MPI(MPI_Comm_free(&a));
    MT_MPI(MPI_Comm_free(&g));

    /* Unweighted, and rank 0 gives every edge (a chain 0 -> 1 -> ...);
     * the others give none, with MPI_WEIGHTS_EMPTY or MPI_UNWEIGHTED. */
    int n = mt_size;
    int *s = mt_malloc(sizeof(int) * (size_t)n);
    int *dg = mt_malloc(sizeof(int) * (size_t)n);
    int *d = mt_malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n - 1; i++) {
        s[i] = i;
        dg[i] = 1;
        d[i] = i + 1;
    }
    MT_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, mt_rank == 0 ? n - 1 : 0, s,
                                 dg, d, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    int in, out, w;
    MT_MPI(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_EQ(w, 0, "unweighted");
    MT_EQ(in, mt_rank > 0, "chain indegree");
    MT_EQ(out, mt_rank < n - 1, "chain outdegree");
    check_colls(g, "dist chain");
    MT_MPI(MPI_Comm_free(&g));
    /* Weighted with no edges at all on some ranks. */
    int one = 1;
    if (mt_rank == 0)
        MT_MPI(MPI_Dist_graph_create_adjacent(
            MPI_COMM_WORLD, 0, MPI_WEIGHTS_EMPTY, MPI_WEIGHTS_EMPTY, 1, &one,
            &one, MPI_INFO_NULL, 0, &g));
    else if (mt_rank == 1)
        MT_MPI(MPI_Dist_graph_create_adjacent(
            MPI_COMM_WORLD, 1, (int[]){0}, &one, 0, MPI_WEIGHTS_EMPTY,
            MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    else
        MT_MPI(MPI_Dist_graph_create_adjacent(
            MPI_COMM_WORLD, 0, MPI_WEIGHTS_EMPTY, MPI_WEIGHTS_EMPTY, 0,
            MPI_WEIGHTS_EMPTY, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    MT_MPI(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_EQ(w, 1, "weighted, empty");
    check_colls(g, "dist single edge");
    MT_MPI(MPI_Comm_free(&g));
    free(s);
    free(dg);
    free(d);
}

/* ---- Cartesian grids --------------------------------------------------- */

static void carts(void)
{
    for (int per = 0; per < 2; per++) {
        int dims1[1] = {mt_size}, p1[1] = {per};
        MPI_Comm c;
        MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, p1, 0, &c));
        check_colls(c, per ? "ring grid" : "line grid");
        MT_MPI(MPI_Comm_free(&c));
        int dims2[2] = {0, 0}, p2[2] = {per, !per};
        MT_MPI(MPI_Dims_create(mt_size, 2, dims2));
        MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, p2, 1, &c));
        check_colls(c, "2-d grid");
        MT_MPI(MPI_Comm_free(&c));
        /* Size 1 dimensions: periodic makes a member its own neighbour. */
        int dims3[3] = {1, mt_size, 1}, p3[3] = {per, per, 1};
        MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 3, dims3, p3, 0, &c));
        check_colls(c, "3-d grid");
        int nr;
        MT_MPI(MPI_Cart_map(MPI_COMM_WORLD, 3, dims3, p3, &nr));
        MT_EQ(nr, mt_rank, "Cart_map");
        MT_MPI(MPI_Comm_free(&c));
    }
    /* The first non-periodic neighbour of rank 0 is MPI_PROC_NULL. */
    int dims[1] = {mt_size}, p[1] = {0};
    MPI_Comm c;
    MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, p, 0, &c));
    struct nbrs n;
    nbrs_get(c, &n);
    if (mt_rank == 0)
        MT_EQ(n.src[0], MPI_PROC_NULL, "left of rank 0");
    nbrs_free(&n);
    MT_MPI(MPI_Comm_free(&c));
}

/* ---- errors ------------------------------------------------------------ */

static void errors(void)
{
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[4] = {0}, y[4] = {0};
    MPI_Comm g = MPI_COMM_NULL;
    MPI_Request r;
    int kind;
    MT_MPI(MPI_Topo_test(MPI_COMM_WORLD, &kind));
    MT_EQ(kind, MPI_UNDEFINED, "world has no topology");
    MT_ERRCLASS(
        MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD),
        MPI_ERR_TOPOLOGY, "Neighbor_allgather without a topology");
    MT_ERRCLASS(MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT,
                                       MPI_COMM_WORLD, &r),
                MPI_ERR_TOPOLOGY, "Ineighbor_alltoall without a topology");
    MT_ERRCLASS(MPI_Graphdims_get(MPI_COMM_WORLD, x, y), MPI_ERR_TOPOLOGY,
                "Graphdims_get without a topology");
    MT_ERRCLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, x, y, x),
                MPI_ERR_TOPOLOGY, "Dist_graph_neighbors_count on world");

    /* Bad graphs: every rank makes the same mistake, so none blocks. */
    int index[2] = {1, 2}, edges[2] = {1, 5};
    MT_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &g),
                MPI_ERR_RANK, "Graph_create edge to node 5");
    MT_ERRCLASS(
        MPI_Graph_create(MPI_COMM_WORLD, mt_size + 1, index, edges, 0, &g),
        MPI_ERR_ARG, "Graph_create nnodes above the size");
    int bad_index[2] = {2, 1};
    edges[1] = 0;
    MT_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &g),
                MPI_ERR_ARG, "Graph_create decreasing index");
    int one = 1, big = mt_size, neg = -1;
    MT_ERRCLASS(MPI_Dist_graph_create_adjacent(
                    MPI_COMM_WORLD, 1, &big, MPI_UNWEIGHTED, 0, NULL,
                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK, "Dist_graph_create_adjacent source = size");
    MT_ERRCLASS(MPI_Dist_graph_create_adjacent(
                    MPI_COMM_WORLD, -1, NULL, MPI_UNWEIGHTED, 0, NULL,
                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "Dist_graph_create_adjacent indegree -1");
    MT_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &mt_rank, &neg, NULL,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "Dist_graph_create degree -1");
    MT_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &mt_rank, &one, &big,
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                MPI_ERR_RANK, "Dist_graph_create destination = size");
    MT_ERRCLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &mt_rank, &one,
                                      &mt_rank, NULL, MPI_INFO_NULL, 0, &g),
                MPI_ERR_ARG, "Dist_graph_create NULL weights");
    MT_CHECK(g == MPI_COMM_NULL, "no communicator after errors");
    /* A failed constructor sets its output to MPI_COMM_NULL (MPICH's
     * errors/topo/cartsmall). */
    int toobig[2] = {mt_size, mt_size + 1}, noper[2] = {0, 0};
    MPI_Comm cc = MPI_COMM_WORLD;
    MT_ERRCLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, toobig, noper, 0, &cc),
                MPI_ERR_DIMS, "Cart_create grid larger than the communicator");
    MT_CHECK(cc == MPI_COMM_NULL, "failed Cart_create leaves MPI_COMM_NULL");
    cc = MPI_COMM_WORLD;
    MT_ERRCLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &cc),
                MPI_ERR_ARG, "Graph_create decreasing index (output)");
    MT_CHECK(cc == MPI_COMM_NULL, "failed Graph_create leaves MPI_COMM_NULL");

    /* Wrong kind of topology, bad ranks and counts on real ones. */
    int dims[1] = {mt_size}, per[1] = {1};
    MPI_Comm c;
    MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c));
    MT_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MT_ERRCLASS(MPI_Graph_neighbors_count(c, 0, x), MPI_ERR_TOPOLOGY,
                "Graph_neighbors_count on a grid");
    MT_ERRCLASS(MPI_Dist_graph_neighbors(c, 0, x, x, 0, y, y), MPI_ERR_TOPOLOGY,
                "Dist_graph_neighbors on a grid");
    MT_ERRCLASS(MPI_Neighbor_alltoall(x, -1, MPI_INT, y, 1, MPI_INT, c),
                MPI_ERR_COUNT, "Neighbor_alltoall count -1");
    MT_ERRCLASS(
        MPI_Neighbor_alltoall(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, c),
        MPI_ERR_TYPE, "Neighbor_alltoall MPI_DATATYPE_NULL");
    MT_ERRCLASS(
        MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, c),
        MPI_ERR_BUFFER, "Neighbor_allgather MPI_IN_PLACE");
    MT_ERRCLASS(MPI_Ineighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, c, NULL),
                MPI_ERR_ARG, "Ineighbor_allgather NULL request");
    MT_ERRCLASS(MPI_Neighbor_allgatherv(x, 1, MPI_INT, y, NULL, x, MPI_INT, c),
                MPI_ERR_ARG, "Neighbor_allgatherv NULL recvcounts");
    MT_ERRCLASS(
        MPI_Neighbor_alltoallv(x, x, NULL, MPI_INT, y, y, y, MPI_INT, c),
        MPI_ERR_ARG, "Neighbor_alltoallv NULL sdispls");
    MT_ERRCLASS(MPI_Neighbor_alltoall(NULL, 1, MPI_INT, y, 1, MPI_INT, c),
                MPI_ERR_BUFFER, "Neighbor_alltoall NULL sendbuf");
    MT_MPI(MPI_Comm_free(&c));
    int gi[1] = {0};
    MT_MPI(MPI_Graph_create(MPI_COMM_WORLD, 1, gi, NULL, 0, &g));
    if (g != MPI_COMM_NULL) {
        MT_MPI(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
        MT_ERRCLASS(MPI_Graph_neighbors_count(g, 1, x), MPI_ERR_RANK,
                    "Graph_neighbors_count rank 1 of 1 node");
        MT_ERRCLASS(MPI_Cart_coords(g, 0, 1, x), MPI_ERR_TOPOLOGY,
                    "Cart_coords on a graph");
        MT_MPI(MPI_Comm_free(&g));
    }
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    graph_ring();
    graph_star();
    dist_graphs();
    carts();
    errors();
    return mt_finish("topo_graph");
}
