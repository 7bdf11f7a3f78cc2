/* SPDX-License-Identifier: MIT */
/* Graph and distributed-graph topologies, and the neighbour lists every
 * topology kind gives the neighbourhood collectives. No reordering: all
 * processes run on one node, so no placement is better than another, and
 * MPI lets reorder be ignored. */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

/* A communicator over the members of parent with color 0 (all of them
 * when 'member' is true everywhere), in parent's rank order, carrying t
 * (consumed, even on failure). Collective over parent. */
static int topo_attach(struct fy_comm *parent, bool member, struct fy_topo *t,
                       struct fy_comm **out)
{
    /* Even without memory this member must take part in the split. */
    struct fy_comm *c = NULL;
    int rc =
        fy_comm_split(parent, member ? 0 : MPI_UNDEFINED, parent->rank, &c);
    if (rc == 0 && c && !t) {
        fy_comm_free(c);
        rc = -ENOMEM;
    }
    if (rc != 0 || !c) {
        fy_topo_free(t);
        *out = NULL;
        return rc;
    }
    c->topo = t;
    *out = c;
    return 0;
}

int fy_graph_create(struct fy_comm *parent, int nnodes, const int *index,
                    const int *edges, struct fy_comm **out)
{
    struct fy_topo *t = calloc(1, sizeof(*t));
    if (t) {
        int nedges = nnodes ? index[nnodes - 1] : 0;
        t->kind = FY_TOPO_GRAPH;
        t->nnodes = nnodes;
        t->index = fy_topo_ints_dup(index, nnodes);
        t->edges = fy_topo_ints_dup(edges, nedges);
        if (!t->index || !t->edges) {
            fy_topo_free(t);
            t = NULL;
        }
    }
    return topo_attach(parent, parent->rank < nnodes, t, out);
}

/* n weights, or n ones when w is NULL. */
static int *weights_dup(const int *w, int n)
{
    if (w)
        return fy_topo_ints_dup(w, n);
    int *d = malloc((size_t)FY_MAX(n, 1) * sizeof(int));
    for (int i = 0; d && i < n; i++)
        d[i] = 1;
    return d;
}

/* A dist-graph topology owning copies of the lists; NULL: no memory. */
static struct fy_topo *dist_topo_new(int indegree, const int *sources,
                                     const int *sourceweights, int outdegree,
                                     const int *destinations,
                                     const int *destweights, bool weighted)
{
    struct fy_topo *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = FY_TOPO_DIST_GRAPH;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = fy_topo_ints_dup(sources, indegree);
    t->sourceweights = weights_dup(sourceweights, indegree);
    t->destinations = fy_topo_ints_dup(destinations, outdegree);
    t->destweights = weights_dup(destweights, outdegree);
    if (!t->sources || !t->sourceweights || !t->destinations ||
        !t->destweights) {
        fy_topo_free(t);
        return NULL;
    }
    return t;
}

int fy_dist_graph_create_adjacent(struct fy_comm *parent, int indegree,
                                  const int *sources, const int *sourceweights,
                                  int outdegree, const int *destinations,
                                  const int *destweights, bool weighted,
                                  struct fy_comm **out)
{
    struct fy_topo *t =
        dist_topo_new(indegree, sources, sourceweights, outdegree, destinations,
                      destweights, weighted);
    return topo_attach(parent, true, t, out);
}

/* ---- MPI_Dist_graph_create ----------------------------------------------
 * Each edge s -> d (weight w) given by any member becomes two records of
 * three ints: (FY_EDGE_OUT, d, w) for s and (FY_EDGE_IN, s, w) for d. An
 * all-to-all of the record counts, then an all-to-all-v of the records,
 * hands every member its own; it reads them in sender rank order, each
 * sender's in the order it gave its edges, which fixes the neighbour order
 * the same way on both ends of repeated edges. */

static int keep_err(int err, int rc)
{
    return err ? err : rc;
}

enum { FY_EDGE_IN = 0, FY_EDGE_OUT = 1, FY_EDGE_INTS = 3 };

int fy_dist_graph_create(struct fy_comm *parent, int n, const int *sources,
                         const int *degrees, const int *destinations,
                         const int *weights, bool weighted,
                         struct fy_comm **out)
{
    int size = parent->size;
    struct fy_dtype *ints = fy_dtype_get(MPI_INT);
    /* scounts, sdispls, rcounts, rdispls, fill cursor: size each. */
    int *counts = calloc((size_t)size * 5, sizeof(int));
    int *scounts = counts, *sdispls = counts + size,
        *rcounts = counts + 2 * size;
    int *rdispls = counts + 3 * size, *cur = counts + 4 * size;
    int *sbuf = NULL, *rbuf = NULL;
    if (!counts)
        return -ENOMEM; /* the others are left waiting: nothing better */
    int err = 0;
    long long total = 0;
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            scounts[sources[i]] += FY_EDGE_INTS;
            scounts[destinations[k]] += FY_EDGE_INTS;
        }
    for (int r = 0; r < size; r++) {
        sdispls[r] = (int)total;
        total += scounts[r];
    }
    if (total > INT32_MAX)
        err = -EOVERFLOW;
    if (!err && !(sbuf = malloc((size_t)FY_MAX(total, 1) * sizeof(int))))
        err = -ENOMEM;
    if (!err) {
        memcpy(cur, sdispls, (size_t)size * sizeof(int));
        for (int i = 0, k = 0; i < n; i++)
            for (int j = 0; j < degrees[i]; j++, k++) {
                int s = sources[i], d = destinations[k];
                int w = weights ? weights[k] : 1;
                int *o = sbuf + cur[s];
                o[0] = FY_EDGE_OUT, o[1] = d, o[2] = w;
                cur[s] += FY_EDGE_INTS;
                int *in = sbuf + cur[d];
                in[0] = FY_EDGE_IN, in[1] = s, in[2] = w;
                cur[d] += FY_EDGE_INTS;
            }
    }
    /* The others count on this member's part of the exchange: after a
     * local failure it still takes part, sending nothing. */
    if (err)
        memset(scounts, 0, (size_t)size * sizeof(int));
    int rc = fy_coll_alltoall(scounts, 1, ints, rcounts, 1, ints, parent, NULL);
    err = keep_err(err, rc);
    long long rtotal = 0;
    for (int r = 0; r < size; r++) {
        rdispls[r] = (int)rtotal;
        rtotal += rcounts[r];
    }
    if (rtotal > INT32_MAX)
        err = keep_err(err, -EOVERFLOW);
    else if (!(rbuf = malloc((size_t)FY_MAX(rtotal, 1) * sizeof(int))))
        err = keep_err(err, -ENOMEM);
    if (!rbuf) {
        memset(rcounts, 0, (size_t)size * sizeof(int));
        rtotal = 0;
    }
    int dummy = 0;
    rc = fy_coll_alltoallv(sbuf ? sbuf : &dummy, fy_vec_int(scounts),
                           fy_vec_int(sdispls), ints, rbuf ? rbuf : &dummy,
                           fy_vec_int(rcounts), fy_vec_int(rdispls), ints,
                           parent, NULL);
    err = keep_err(err, rc);

    struct fy_topo *t = NULL;
    if (!err) {
        int nin = 0, nout = 0;
        for (long long i = 0; i < rtotal; i += FY_EDGE_INTS) {
            if (rbuf[i] == FY_EDGE_IN)
                nin++;
            else
                nout++;
        }
        t = calloc(1, sizeof(*t));
        if (t) {
            t->kind = FY_TOPO_DIST_GRAPH;
            t->weighted = weighted;
            t->sources = malloc((size_t)FY_MAX(nin, 1) * sizeof(int));
            t->sourceweights = malloc((size_t)FY_MAX(nin, 1) * sizeof(int));
            t->destinations = malloc((size_t)FY_MAX(nout, 1) * sizeof(int));
            t->destweights = malloc((size_t)FY_MAX(nout, 1) * sizeof(int));
            if (!t->sources || !t->sourceweights || !t->destinations ||
                !t->destweights) {
                fy_topo_free(t);
                t = NULL;
            }
        }
        for (long long i = 0; t && i < rtotal; i += FY_EDGE_INTS) {
            if (rbuf[i] == FY_EDGE_IN) {
                t->sources[t->indegree] = rbuf[i + 1];
                t->sourceweights[t->indegree++] = rbuf[i + 2];
            } else {
                t->destinations[t->outdegree] = rbuf[i + 1];
                t->destweights[t->outdegree++] = rbuf[i + 2];
            }
        }
    }
    free(sbuf);
    free(rbuf);
    free(counts);
    if (err) {
        /* Still take part in the split below, then report. */
        struct fy_comm *junk = NULL;
        if (fy_comm_split(parent, MPI_UNDEFINED, 0, &junk) == 0 && junk)
            fy_comm_free(junk);
        return err;
    }
    return topo_attach(parent, true, t, out);
}

/* ---- neighbour lists ---------------------------------------------------- */

/* The rank 'disp' (+1 or -1) steps along dimension d from this member,
 * or MPI_PROC_NULL off a non-periodic edge. coords is this member's. */
static int cart_step(const struct fy_topo *t, int *coords, int d, int disp)
{
    int me = coords[d], n = t->dims[d], x = me + disp;
    if (t->periods[d])
        x = ((x % n) + n) % n;
    else if (x < 0 || x >= n)
        return MPI_PROC_NULL;
    coords[d] = x;
    int r = fy_cart_rank(t, coords);
    coords[d] = me;
    return r;
}

void fy_topo_degrees(const struct fy_comm *c, int *indegree_out,
                     int *outdegree_out)
{
    const struct fy_topo *t = c->topo;
    int in = 0, outd = 0;
    switch (t->kind) {
    case FY_TOPO_CART:
        in = outd = 2 * t->ndims;
        break;
    case FY_TOPO_GRAPH:
        in = outd = t->index[c->rank] - (c->rank ? t->index[c->rank - 1] : 0);
        break;
    case FY_TOPO_DIST_GRAPH:
        in = t->indegree;
        outd = t->outdegree;
        break;
    }
    *indegree_out = in;
    *outdegree_out = outd;
}

int fy_topo_nbrs_get(const struct fy_comm *c, struct fy_topo_nbrs *out)
{
    const struct fy_topo *t = c->topo;
    struct fy_topo_nbrs n = {0};
    fy_topo_degrees(c, &n.indegree, &n.outdegree);
    n.cart = t->kind == FY_TOPO_CART;
    n.sources = malloc((size_t)FY_MAX(n.indegree, 1) * sizeof(int));
    n.destinations = malloc((size_t)FY_MAX(n.outdegree, 1) * sizeof(int));
    int *coords =
        n.cart ? malloc((size_t)FY_MAX(t->ndims, 1) * sizeof(int)) : NULL;
    if (!n.sources || !n.destinations || (n.cart && !coords)) {
        free(coords);
        fy_topo_nbrs_free(&n);
        return -ENOMEM;
    }
    switch (t->kind) {
    case FY_TOPO_CART:
        fy_cart_coords(t, c->rank, coords);
        for (int d = 0; d < t->ndims; d++) {
            n.sources[2 * d] = n.destinations[2 * d] =
                cart_step(t, coords, d, -1);
            n.sources[2 * d + 1] = n.destinations[2 * d + 1] =
                cart_step(t, coords, d, +1);
        }
        break;
    case FY_TOPO_GRAPH: {
        const int *e = t->edges + (c->rank ? t->index[c->rank - 1] : 0);
        memcpy(n.sources, e, (size_t)n.indegree * sizeof(int));
        memcpy(n.destinations, e, (size_t)n.outdegree * sizeof(int));
        break;
    }
    case FY_TOPO_DIST_GRAPH:
        memcpy(n.sources, t->sources, (size_t)n.indegree * sizeof(int));
        memcpy(n.destinations, t->destinations,
               (size_t)n.outdegree * sizeof(int));
        break;
    }
    free(coords);
    *out = n;
    return 0;
}

void fy_topo_nbrs_free(struct fy_topo_nbrs *n)
{
    free(n->sources);
    free(n->destinations);
    n->sources = n->destinations = NULL;
}
