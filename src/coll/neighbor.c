/* SPDX-License-Identifier: MIT */
/* Neighbourhood collectives: one schedule that posts a receive from every
 * source and a send to every destination of the communicator's topology,
 * then waits. Blocking and nonblocking calls share it.
 *
 * Pairing of repeated neighbours. The k-th send from A to B must land in
 * the block B reserved for the k-th time A appears among its sources.
 * - Graph and dist-graph topologies list both ends of every edge in the
 *   same relative order (MPI_Graph_create's adjacency; Dist_graph_create
 *   hands out edges in one global order), so one tag and MPI's
 *   non-overtaking rule pair them.
 * - Cartesian grids do not: along a periodic dimension of size 2 (or 1)
 *   the -1 and the +1 neighbour are the same rank, and what a member sends
 *   to its +1 neighbour is what that one receives from its -1 neighbour,
 *   i.e. the opposite order. So the message sent to destination j
 *   (dimension j / 2, direction j % 2) carries tag step j, and the one
 *   received from source i, sent in the opposite direction, step i ^ 1.
 *   Steps are 8 bits: beyond 128 dimensions they wrap, which only matters
 *   when a rank is a neighbour twice in dimensions 128 apart.
 * This is the MPI Forum's reading (mpi-forum/mpi-issues#153, which Open MPI
 * follows). MPICH 4.0.2 differs on both counts: it swaps the blocks of a
 * periodic dimension of size 1 or 2 in Neighbor_alltoallv, and pairs
 * repeated graph edges in another order, so tests/mpi/topo_graph fails
 * there on those cases. */
#include "coll/coll_int.h"

#include <errno.h>
#include <stdlib.h>

/* Where block i of b lives, and what it holds. */
static struct fy_coll_block nbr_block(const struct fy_coll_nbr_buf *b, int i)
{
    struct fy_coll_block k;
    if (b->same) {
        k.ptr = fy_coll_at(b->buf, 0);
        k.count = b->count;
        k.dt = b->dt;
    } else if (b->bdispls) {
        k.ptr = fy_coll_at(b->buf, b->bdispls[i]);
        k.count = fy_vec_at(b->counts, i);
        k.dt = b->dts[i];
    } else if (b->displs.p) {
        k.ptr = fy_coll_at(b->buf, fy_vec_at(b->displs, i) * b->dt->extent);
        k.count = fy_vec_at(b->counts, i);
        k.dt = b->dt;
    } else {
        k.ptr = fy_coll_at(b->buf, (MPI_Aint)i * b->count * b->dt->extent);
        k.count = b->count;
        k.dt = b->dt;
    }
    return k;
}

int fy_coll_neighbor(const struct fy_coll_nbr_buf *send,
                     const struct fy_coll_nbr_buf *recv, struct fy_comm *c,
                     struct fy_sched **nb)
{
    struct fy_topo_nbrs n;
    int rc = fy_topo_nbrs_get(c, &n);
    if (rc != 0)
        return rc;
    struct fy_sched *s;
    rc = fy_sched_create(c, nb != NULL, &s);
    if (rc != 0) {
        fy_topo_nbrs_free(&n);
        return rc;
    }
    /* Receives first, so that no send waits on an unposted receive. */
    for (int i = 0; i < n.indegree; i++) {
        struct fy_coll_block b = nbr_block(recv, i);
        int step = n.cart ? i ^ 1 : 0;
        fy_sched_recv(s, b.ptr, b.count, b.dt, n.sources[i],
                      FY_SCHED_TAG(s, step));
    }
    for (int j = 0; j < n.outdegree; j++) {
        struct fy_coll_block b = nbr_block(send, j);
        int step = n.cart ? j : 0;
        fy_sched_send(s, b.ptr, b.count, b.dt, n.destinations[j],
                      FY_SCHED_TAG(s, step));
    }
    fy_sched_wait(s);
    fy_topo_nbrs_free(&n);
    return fy_sched_finish(s, nb);
}
