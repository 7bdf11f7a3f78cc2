/* SPDX-License-Identifier: MIT */
/* Collective operations built on the point-to-point core. All traffic uses
 * the communicator's collective context (comm->ctx + 1) and tags derived
 * from comm->coll_seq, so user messages never match collective ones and
 * back-to-back collectives never confuse theirs. The algorithms are the
 * simple deadlock-free ones (binomial trees, dissemination, rings,
 * pairwise exchange); speed is a later concern.
 *
 * Conventions for every collective here:
 * - collective over 'c': every member calls, in the same order (blocking
 *   and nonblocking ones alike);
 * - the last argument 'nb': NULL runs the collective to completion before
 *   returning; otherwise the collective is started, *nb receives it, and
 *   the caller drives it with fy_sched_test() and releases it with
 *   fy_sched_free() (the buffers must stay untouched until it is done);
 * - arguments were validated by the MPI layer (valid datatypes, counts,
 *   root, op defined on the datatype);
 * - MPI_IN_PLACE is accepted where MPI allows it, as noted;
 * - returns 0 or a negative errno: -ENOMEM, -EMSGSIZE when a receive (or a
 *   local copy) would be truncated, or what the p2p layer returned. After
 *   an error the call still runs to the end of its communication pattern
 *   where it can, so that the other members are not left hanging;
 * - count/displacement arrays (struct fy_coll_vec, int or 64-bit) are in
 *   elements of the datatype (displacements in multiples of its extent),
 *   as in the MPI bindings;
 * - derived datatypes are fine everywhere; reductions combine values in
 *   the datatype's own layout, in temporaries of extent-sized elements, as
 *   user-defined ops expect. Datatypes with a negative extent are not
 *   supported by the reduction temporaries.
 * Not thread safe (the MPI layer serialises calls). */
#ifndef FY_COLL_H
#define FY_COLL_H

#include <mpi.h>

#include "comm/comm.h"
#include "dtype/dtype.h"

/* A started nonblocking collective (src/coll/sched.c). */
struct fy_sched;

/* An array of counts or displacements exactly as the program passed it:
 * int elements from the classic bindings, 64-bit ones (MPI_Count and
 * MPI_Aint, both long) from the large-count _c bindings. Never converted:
 * the int forms keep their cost (one predictable branch per element read)
 * and a nonblocking call needs no copy. p NULL means "no array". */
struct fy_coll_vec {
    const void *p;
    bool wide;
};

static inline struct fy_coll_vec fy_vec_int(const int *a)
{
    return (struct fy_coll_vec){.p = a, .wide = false};
}

static inline struct fy_coll_vec fy_vec_wide(const MPI_Aint *a)
{
    return (struct fy_coll_vec){.p = a, .wide = true};
}

#define FY_VEC_NONE ((struct fy_coll_vec){.p = NULL, .wide = false})

/* Element i of v (v.p not NULL). */
static inline MPI_Aint fy_vec_at(struct fy_coll_vec v, int i)
{
    return v.wide ? ((const MPI_Aint *)v.p)[i] : ((const int *)v.p)[i];
}

int fy_coll_barrier(struct fy_comm *c, struct fy_sched **nb);
int fy_coll_bcast(void *buf, MPI_Count count, struct fy_dtype *dt, int root,
                  struct fy_comm *c, struct fy_sched **nb);

/* sbuf may be MPI_IN_PLACE at the root (the input is then in rbuf). A
 * non-commutative op combines in rank order. */
int fy_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, int root,
                   struct fy_comm *c, struct fy_sched **nb);
/* sbuf may be MPI_IN_PLACE everywhere. Every member gets the same bits. */
int fy_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                      struct fy_sched **nb);

/* sbuf may be MPI_IN_PLACE at the root (its block is already in rbuf).
 * rbuf/rcount/rdt matter only at the root. */
int fy_coll_gather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                   void *rbuf, MPI_Count rcount, struct fy_dtype *rdt, int root,
                   struct fy_comm *c, struct fy_sched **nb);
int fy_coll_gatherv(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                    void *rbuf, struct fy_coll_vec rcounts,
                    struct fy_coll_vec displs, struct fy_dtype *rdt, int root,
                    struct fy_comm *c, struct fy_sched **nb);
/* rbuf may be MPI_IN_PLACE at the root (its block stays where it is). */
int fy_coll_scatter(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                    void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                    int root, struct fy_comm *c, struct fy_sched **nb);
int fy_coll_scatterv(const void *sbuf, struct fy_coll_vec scounts,
                     struct fy_coll_vec displs, struct fy_dtype *sdt,
                     void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                     int root, struct fy_comm *c, struct fy_sched **nb);
/* sbuf may be MPI_IN_PLACE (each member's block is already in rbuf). */
int fy_coll_allgather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                      void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                      struct fy_comm *c, struct fy_sched **nb);
int fy_coll_allgatherv(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                       void *rbuf, struct fy_coll_vec rcounts,
                       struct fy_coll_vec displs, struct fy_dtype *rdt,
                       struct fy_comm *c, struct fy_sched **nb);
/* sbuf may be MPI_IN_PLACE (data to send is in rbuf, laid out as the
 * receive arguments describe; send arguments are then ignored). */
int fy_coll_alltoall(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                     void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                     struct fy_comm *c, struct fy_sched **nb);
int fy_coll_alltoallv(const void *sbuf, struct fy_coll_vec scounts,
                      struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                      void *rbuf, struct fy_coll_vec rcounts,
                      struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                      struct fy_comm *c, struct fy_sched **nb);
/* Displacements in bytes, one datatype per peer. */
int fy_coll_alltoallw(const void *sbuf, struct fy_coll_vec scounts,
                      struct fy_coll_vec sdispls, struct fy_dtype *const *sdts,
                      void *rbuf, struct fy_coll_vec rcounts,
                      struct fy_coll_vec rdispls, struct fy_dtype *const *rdts,
                      struct fy_comm *c, struct fy_sched **nb);

/* sbuf (count * size elements) may be MPI_IN_PLACE: input in rbuf. */
int fy_coll_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count count,
                                 struct fy_dtype *dt, struct fy_op *op,
                                 struct fy_comm *c, struct fy_sched **nb);
int fy_coll_reduce_scatter(const void *sbuf, void *rbuf,
                           struct fy_coll_vec rcounts, struct fy_dtype *dt,
                           struct fy_op *op, struct fy_comm *c,
                           struct fy_sched **nb);
/* Inclusive and exclusive prefix reductions; sbuf may be MPI_IN_PLACE.
 * Exscan leaves rank 0's rbuf untouched. */
int fy_coll_scan(const void *sbuf, void *rbuf, MPI_Count count,
                 struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                 struct fy_sched **nb);
int fy_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                   struct fy_sched **nb);

/* Neighbourhood collectives (neighbor.c) on a communicator carrying a
 * topology: block i of 'recv' comes from the i-th source, block j of
 * 'send' goes to the j-th destination (fy_topo_nbrs_get's order);
 * MPI_PROC_NULL neighbours move nothing. The five MPI shapes are
 * descriptions of the per-neighbour blocks of a buffer:
 * - 'same' set: the one block of 'count' elements of dt at buf for every
 *   neighbour (neighbor_allgather's send side);
 * - counts NULL: 'count' elements of dt at i * count extents;
 * - displs set: counts[i] elements of dt at displs[i] extents (v);
 * - bdispls set: counts[i] elements of dts[i] at bdispls[i] bytes (w).
 * MPI_IN_PLACE is not allowed. */
struct fy_coll_nbr_buf {
    const void *buf;
    MPI_Count count;
    bool same;
    struct fy_coll_vec counts;
    struct fy_coll_vec displs;
    const MPI_Aint *bdispls;
    struct fy_dtype *dt;
    struct fy_dtype *const *dts;
};
int fy_coll_neighbor(const struct fy_coll_nbr_buf *send,
                     const struct fy_coll_nbr_buf *recv, struct fy_comm *c,
                     struct fy_sched **nb);

/* Where block i of a gather/scatter/all-to-all buffer lives. One struct
 * covers the three MPI shapes: uniform (counts == NULL: 'count' elements
 * at i * count extents), v (counts[i] at displs[i] extents) and w
 * (counts[i] of dts[i] at displs[i] bytes). */
struct fy_coll_layout {
    const void *buf;
    MPI_Count count;
    struct fy_coll_vec counts;
    struct fy_coll_vec displs;
    struct fy_dtype *dt;
    struct fy_dtype *const *dts; /* w shape only */
};

/* Collectives on an intercommunicator (inter.c). 'root' is MPI_ROOT
 * (this process is the root), MPI_PROC_NULL (another member of the root's
 * group) or the root's rank in the remote group. Data blocks are indexed
 * by remote rank. Each is one schedule of point-to-point steps over c's
 * collective context and the local group's intracommunicator (never the
 * node-level shared-memory algorithms), blocking or nonblocking by 'nb'
 * as every collective above: a nonblocking one never waits for the other
 * group before it returns. Counts are what MPI 4.0 6.2.2 and each call's
 * section require (equal totals on both sides for the reduce-scatters).
 * Layouts and count arrays are read while building only; buffers must
 * stay until the end. Returns 0 or a negative errno as above. */
int fy_coll_inter_barrier(struct fy_comm *c, struct fy_sched **nb);
int fy_coll_inter_bcast(void *buf, MPI_Count count, struct fy_dtype *dt,
                        int root, struct fy_comm *c, struct fy_sched **nb);
int fy_coll_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                         struct fy_dtype *dt, struct fy_op *op, int root,
                         struct fy_comm *c, struct fy_sched **nb);
/* Each group gets the reduction of the other group's data. */
int fy_coll_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                            struct fy_dtype *dt, struct fy_op *op,
                            struct fy_comm *c, struct fy_sched **nb);
/* rcounts NULL: rcount to every local member (the _block form). */
int fy_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, MPI_Count rcount,
                                 struct fy_coll_vec rcounts,
                                 struct fy_dtype *dt, struct fy_op *op,
                                 struct fy_comm *c, struct fy_sched **nb);
/* Gather: the root receives block i of 'dst' from remote rank i. */
int fy_coll_inter_gather(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, const struct fy_coll_layout *dst,
                         int root, struct fy_comm *c, struct fy_sched **nb);
int fy_coll_inter_scatter(const struct fy_coll_layout *src, void *rbuf,
                          MPI_Count rcount, struct fy_dtype *rdt, int root,
                          struct fy_comm *c, struct fy_sched **nb);
/* Every member's send block goes to every remote member. */
int fy_coll_inter_allgather(const void *sbuf, MPI_Count scount,
                            struct fy_dtype *sdt,
                            const struct fy_coll_layout *dst, struct fy_comm *c,
                            struct fy_sched **nb);
/* Block i of src to remote rank i, block i of dst from it. */
int fy_coll_inter_alltoall(const struct fy_coll_layout *src,
                           const struct fy_coll_layout *dst, struct fy_comm *c,
                           struct fy_sched **nb);

/* Advance a started nonblocking collective; true once it is done, with
 * its result (0 or a negative errno) in *err_out. */
bool fy_sched_test(struct fy_sched *s, int *err_out);
/* Release a collective (one still running is first waited for). */
void fy_sched_free(struct fy_sched *s);
/* Free the schedules and machines kept for reuse (MPI_Finalize). */
void fy_coll_caches_drain(void);
/* Advance every started nonblocking collective: meant to be called by the
 * progress engine after each pass when fy_coll_nactive != 0, so that
 * nonblocking collectives move on while the program blocks in some other
 * call. Not re-entrant (it guards itself). Returns how many finished in
 * this pass (the engine counts them as work: see fy_p2p_hook_set). */
extern unsigned fy_coll_nactive;
int fy_coll_progress(void);
/* Whether a started nonblocking collective could move on now (the flag
 * it waits for is set): asked by a rank about to sleep. */
bool fy_coll_visible(void);

/* Local helpers shared with other modules. */

/* Copy scount elements of sdt at src into rcount elements of rdt at dst
 * (type signatures must match as for a message). Returns 0, or -EMSGSIZE
 * after copying what fits when the source is larger, or -ENOMEM. */
int fy_coll_copy(const void *src, MPI_Count scount, struct fy_dtype *sdt,
                 void *dst, MPI_Count rcount, struct fy_dtype *rdt);

#endif /* FY_COLL_H */
