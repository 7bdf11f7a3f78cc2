/* SPDX-License-Identifier: MIT */
/* Entry points for graph and distributed-graph topologies and the topology
 * mapping queries: argument checks, then src/comm/graph.c. 'reorder' is
 * accepted and ignored everywhere (MPI allows it; all ranks share one
 * node, so no placement beats another): a new communicator keeps the ranks
 * of comm_old, and the map functions return the identity. The info
 * argument of the dist-graph constructors carries hints only and is not
 * read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

static int report(struct fy_comm *c, int rc, const char *fn)
    __attribute__((cold, noinline));
static int report(struct fy_comm *c, int rc, const char *fn)
{
    return fy_mpi_err(c, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
}

#define CHECK_PTR(p, c, fn)                                                    \
    FY_CHECK((p) != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", #p)

/* Resolve a communicator that must carry a topology of kind k. */
#define GET_TOPO(var, h, k, fn, what)                                          \
    FY_GET_COMM(var, h, fn);                                                   \
    FY_CHECK(var->topo != NULL && var->topo->kind == (k), var,                 \
             MPI_ERR_TOPOLOGY, fn, "communicator has no %s topology", what)

/* ---- graph topologies ------------------------------------------------- */

/* Check MPI_Graph_create's description of nnodes nodes against c. */
static int check_graph(struct fy_comm *c, int nnodes, const int *index,
                       const int *edges, const char *fn)
{
    FY_CHECK(nnodes >= 0 && nnodes <= c->size, c, MPI_ERR_ARG, fn,
             "nnodes %d is not in [0, %d]", nnodes, c->size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    CHECK_PTR(index, c, fn);
    for (int i = 0; i < nnodes; i++)
        FY_CHECK(index[i] >= (i ? index[i - 1] : 0), c, MPI_ERR_ARG, fn,
                 "index[%d] = %d is below the previous entry", i, index[i]);
    int nedges = index[nnodes - 1];
    FY_CHECK(nedges == 0 || edges, c, MPI_ERR_ARG, fn, "edges is NULL");
    for (int e = 0; e < nedges; e++)
        FY_CHECK(edges[e] >= 0 && edges[e] < nnodes, c, MPI_ERR_RANK, fn,
                 "edges[%d] = %d is not a node in [0, %d)", e, edges[e],
                 nnodes);
    return MPI_SUCCESS;
}

FY_API int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[],
                             const int edges[], int reorder,
                             MPI_Comm *comm_graph)
{
    FY_MT_ENTER();
    (void)reorder;
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm_old, __func__);
    CHECK_PTR(comm_graph, c, __func__);
    *comm_graph = MPI_COMM_NULL; /* what a failed call leaves */
    int rc = check_graph(c, nnodes, indx, edges, __func__);
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_comm *nc = NULL;
    rc = fy_graph_create(c, nnodes, indx, edges, &nc);
    if (rc != 0)
        return report(c, rc, __func__);
    *comm_graph = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Graph_create)

FY_API int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TOPO(c, comm, FY_TOPO_GRAPH, __func__, "graph");
    CHECK_PTR(nnodes, c, __func__);
    CHECK_PTR(nedges, c, __func__);
    const struct fy_topo *t = c->topo;
    *nnodes = t->nnodes;
    *nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Graphdims_get)

FY_API int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[],
                          int edges[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TOPO(c, comm, FY_TOPO_GRAPH, __func__, "graph");
    const struct fy_topo *t = c->topo;
    FY_CHECK(maxindex >= 0 && maxedges >= 0, c, MPI_ERR_ARG, __func__,
             "maxindex %d or maxedges %d is negative", maxindex, maxedges);
    int ni = FY_MIN(maxindex, t->nnodes);
    int ne = FY_MIN(maxedges, t->nnodes ? t->index[t->nnodes - 1] : 0);
    FY_CHECK(ni == 0 || indx, c, MPI_ERR_ARG, __func__, "indx is NULL");
    FY_CHECK(ne == 0 || edges, c, MPI_ERR_ARG, __func__, "edges is NULL");
    if (ni > 0)
        memcpy(indx, t->index, (size_t)ni * sizeof(int));
    if (ne > 0)
        memcpy(edges, t->edges, (size_t)ne * sizeof(int));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Graph_get)

FY_API int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TOPO(c, comm, FY_TOPO_GRAPH, __func__, "graph");
    CHECK_PTR(nneighbors, c, __func__);
    const struct fy_topo *t = c->topo;
    FY_CHECK(rank >= 0 && rank < t->nnodes, c, MPI_ERR_RANK, __func__,
             "rank %d is not in [0, %d)", rank, t->nnodes);
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Graph_neighbors_count)

FY_API int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
                                int neighbors[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TOPO(c, comm, FY_TOPO_GRAPH, __func__, "graph");
    const struct fy_topo *t = c->topo;
    FY_CHECK(rank >= 0 && rank < t->nnodes, c, MPI_ERR_RANK, __func__,
             "rank %d is not in [0, %d)", rank, t->nnodes);
    FY_CHECK(maxneighbors >= 0, c, MPI_ERR_ARG, __func__,
             "maxneighbors %d is negative", maxneighbors);
    int first = rank ? t->index[rank - 1] : 0;
    int n = FY_MIN(maxneighbors, t->index[rank] - first);
    FY_CHECK(n == 0 || neighbors, c, MPI_ERR_ARG, __func__,
             "neighbors is NULL");
    if (n > 0)
        memcpy(neighbors, t->edges + first, (size_t)n * sizeof(int));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Graph_neighbors)

FY_API int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int indx[],
                          const int edges[], int *newrank)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_PTR(newrank, c, __func__);
    FY_CHECK(nnodes > 0, c, MPI_ERR_ARG, __func__, "nnodes %d is not positive",
             nnodes);
    int rc = check_graph(c, nnodes, indx, edges, __func__);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Graph_map)

FY_API int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[],
                         const int periods[], int *newrank)
{
    FY_MT_ENTER();
    (void)periods; /* the identity mapping does not depend on them */
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_PTR(newrank, c, __func__);
    FY_CHECK(ndims >= 0, c, MPI_ERR_DIMS, __func__, "ndims %d is negative",
             ndims);
    FY_CHECK(ndims == 0 || dims, c, MPI_ERR_ARG, __func__, "dims is NULL");
    long long n = 1;
    for (int d = 0; d < ndims; d++) {
        FY_CHECK(dims[d] > 0, c, MPI_ERR_DIMS, __func__,
                 "dims[%d] = %d is not positive", d, dims[d]);
        n *= dims[d];
        FY_CHECK(n <= c->size, c, MPI_ERR_DIMS, __func__,
                 "the grid needs more than the %d processes of comm", c->size);
    }
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cart_map)

/* ---- distributed graphs ------------------------------------------------ */

/* Whether a weights argument means "weighted": MPI_UNWEIGHTED says no;
 * anything else, MPI_WEIGHTS_EMPTY included, says yes. */
static bool is_weighted(const int *w)
{
    return w != MPI_UNWEIGHTED;
}

/* The weights to store: NULL (all 1) for MPI_UNWEIGHTED and
 * MPI_WEIGHTS_EMPTY, which are never dereferenced. */
static const int *weights_arg(const int *w)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? NULL : w;
}

/* Check a list of n ranks of c and their weights. */
static int check_ranks(struct fy_comm *c, int n, const int *ranks,
                       const int *weights, const char *fn, const char *what,
                       const char *wwhat)
{
    FY_CHECK(n >= 0, c, MPI_ERR_ARG, fn, "the number of %s, %d, is negative",
             what, n);
    if (n == 0)
        return MPI_SUCCESS;
    FY_CHECK(ranks != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    FY_CHECK(weights != NULL && weights != MPI_WEIGHTS_EMPTY, c, MPI_ERR_ARG,
             fn, "%s is %s with %d edges", wwhat,
             weights ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    for (int i = 0; i < n; i++)
        FY_CHECK(ranks[i] >= 0 && ranks[i] < c->size, c, MPI_ERR_RANK, fn,
                 "%s[%d] = %d is not a rank of comm_old", what, i, ranks[i]);
    if (weights != MPI_UNWEIGHTED)
        for (int i = 0; i < n; i++)
            FY_CHECK(weights[i] >= 0, c, MPI_ERR_ARG, fn,
                     "%s[%d] = %d is negative", wwhat, i, weights[i]);
    return MPI_SUCCESS;
}

#define CHECK_RANKS(c, n, ranks, weights, fn, what, wwhat)                     \
    do {                                                                       \
        int rc_ = check_ranks(c, n, ranks, weights, fn, what, wwhat);          \
        if (rc_ != MPI_SUCCESS)                                                \
            return rc_;                                                        \
    } while (0)

FY_API int
PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                const int sources[], const int sourceweights[],
                                int outdegree, const int destinations[],
                                const int destweights[], MPI_Info info,
                                int reorder, MPI_Comm *comm_dist_graph)
{
    FY_MT_ENTER();
    (void)info;
    (void)reorder;
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm_old, fn);
    CHECK_PTR(comm_dist_graph, c, fn);
    *comm_dist_graph = MPI_COMM_NULL; /* what a failed call leaves */
    CHECK_RANKS(c, indegree, sources, sourceweights, fn, "sources",
                "sourceweights");
    CHECK_RANKS(c, outdegree, destinations, destweights, fn, "destinations",
                "destweights");
    struct fy_comm *nc = NULL;
    int rc = fy_dist_graph_create_adjacent(
        c, indegree, sources, weights_arg(sourceweights), outdegree,
        destinations, weights_arg(destweights),
        is_weighted(sourceweights) && is_weighted(destweights), &nc);
    if (rc != 0)
        return report(c, rc, fn);
    *comm_dist_graph = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Dist_graph_create_adjacent)

FY_API int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                  const int degrees[], const int destinations[],
                                  const int weights[], MPI_Info info,
                                  int reorder, MPI_Comm *comm_dist_graph)
{
    FY_MT_ENTER();
    (void)info;
    (void)reorder;
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm_old, fn);
    CHECK_PTR(comm_dist_graph, c, fn);
    *comm_dist_graph = MPI_COMM_NULL; /* what a failed call leaves */
    FY_CHECK(n >= 0, c, MPI_ERR_ARG, fn, "n %d is negative", n);
    FY_CHECK(n == 0 || (sources && degrees), c, MPI_ERR_ARG, fn, "%s is NULL",
             sources ? "degrees" : "sources");
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        FY_CHECK(sources[i] >= 0 && sources[i] < c->size, c, MPI_ERR_RANK, fn,
                 "sources[%d] = %d is not a rank of comm_old", i, sources[i]);
        FY_CHECK(degrees[i] >= 0, c, MPI_ERR_ARG, fn,
                 "degrees[%d] = %d is negative", i, degrees[i]);
        nedges += degrees[i];
        FY_CHECK(nedges <= INT32_MAX, c, MPI_ERR_ARG, fn, "more than %d edges",
                 INT32_MAX);
    }
    CHECK_RANKS(c, (int)nedges, destinations, weights, fn, "destinations",
                "weights");
    struct fy_comm *nc = NULL;
    int rc =
        fy_dist_graph_create(c, n, sources, degrees, destinations,
                             weights_arg(weights), is_weighted(weights), &nc);
    if (rc != 0)
        return report(c, rc, fn);
    *comm_dist_graph = nc->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Dist_graph_create)

FY_API int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree,
                                           int *outdegree, int *weighted)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TOPO(c, comm, FY_TOPO_DIST_GRAPH, __func__, "distributed graph");
    CHECK_PTR(indegree, c, __func__);
    CHECK_PTR(outdegree, c, __func__);
    CHECK_PTR(weighted, c, __func__);
    *indegree = c->topo->indegree;
    *outdegree = c->topo->outdegree;
    *weighted = c->topo->weighted;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Dist_graph_neighbors_count)

FY_API int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree,
                                     int sources[], int sourceweights[],
                                     int maxoutdegree, int destinations[],
                                     int destweights[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    GET_TOPO(c, comm, FY_TOPO_DIST_GRAPH, __func__, "distributed graph");
    const struct fy_topo *t = c->topo;
    FY_CHECK(maxindegree >= 0 && maxoutdegree >= 0, c, MPI_ERR_ARG, __func__,
             "maxindegree %d or maxoutdegree %d is negative", maxindegree,
             maxoutdegree);
    int ni = FY_MIN(maxindegree, t->indegree);
    int no = FY_MIN(maxoutdegree, t->outdegree);
    FY_CHECK(ni == 0 || sources, c, MPI_ERR_ARG, __func__, "sources is NULL");
    FY_CHECK(no == 0 || destinations, c, MPI_ERR_ARG, __func__,
             "destinations is NULL");
    if (ni > 0)
        memcpy(sources, t->sources, (size_t)ni * sizeof(int));
    if (no > 0)
        memcpy(destinations, t->destinations, (size_t)no * sizeof(int));
    /* Weights only for a weighted graph, and only into real arrays. */
    if (t->weighted && ni > 0 && weights_arg(sourceweights))
        memcpy(sourceweights, t->sourceweights, (size_t)ni * sizeof(int));
    if (t->weighted && no > 0 && weights_arg(destweights))
        memcpy(destweights, t->destweights, (size_t)no * sizeof(int));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Dist_graph_neighbors)
