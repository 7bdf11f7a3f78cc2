/* SPDX-License-Identifier: MIT */
/* Data movement collectives: gather, scatter, allgather and all-to-all in
 * their uniform, v and w shapes. Linear at the root, a ring for allgather,
 * pairwise exchange for all-to-all; one code path per family, the shape
 * being described by a struct fy_coll_layout. */
#include "coll/coll_int.h"

#include <errno.h>
#include <stdlib.h>

/* Linear gather: the root posts every receive at once, then waits. */
static int fy_coll_gather_lin(const void *sbuf, MPI_Count scount,
                              struct fy_dtype *sdt,
                              const struct fy_coll_layout *dst, int root,
                              struct fy_comm *c, int tag)
{
    if (c->rank != root)
        return fy_coll_send(sbuf, scount, sdt, root, tag, c);
    struct fy_req **reqs = calloc((size_t)c->size, sizeof(*reqs));
    if (!reqs)
        return -ENOMEM;
    int err = 0;
    for (int i = 0; i < c->size; i++) {
        struct fy_coll_block b = fy_coll_layout_block(dst, i);
        if (i == root) {
            if (sbuf != MPI_IN_PLACE)
                err = fy_coll_keep(err, fy_coll_copy(sbuf, scount, sdt, b.ptr,
                                                     b.count, b.dt));
            continue;
        }
        err = fy_coll_keep(err, fy_p2p_irecv(b.ptr, b.count, b.dt, i, tag, c,
                                             c->ctx + 1, &reqs[i]));
    }
    err = fy_coll_keep(err, fy_coll_waitall(reqs, c->size));
    free(reqs);
    return err;
}

int fy_coll_scatter_lin(const struct fy_coll_layout *src, void *rbuf,
                        MPI_Count rcount, struct fy_dtype *rdt, int root,
                        struct fy_comm *c, int tag)
{
    if (c->rank != root)
        return fy_coll_recv(rbuf, rcount, rdt, root, tag, c);
    struct fy_req **reqs = calloc((size_t)c->size, sizeof(*reqs));
    if (!reqs)
        return -ENOMEM;
    int err = 0;
    for (int i = 0; i < c->size; i++) {
        struct fy_coll_block b = fy_coll_layout_block(src, i);
        if (i == root) {
            if (rbuf != MPI_IN_PLACE)
                err = fy_coll_keep(err, fy_coll_copy(b.ptr, b.count, b.dt,
                                                     rbuf, rcount, rdt));
            continue;
        }
        err = fy_coll_keep(err, fy_p2p_isend(b.ptr, b.count, b.dt, i, tag, c,
                                             c->ctx + 1, FY_SEND_STANDARD,
                                             &reqs[i]));
    }
    err = fy_coll_keep(err, fy_coll_waitall(reqs, c->size));
    free(reqs);
    return err;
}

int fy_coll_gather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                   void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                   int root, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout l = {.buf = rbuf, .count = rcount, .dt = rdt};
    return fy_coll_gather_lin(sbuf, scount, sdt, &l, root, c,
                              FY_COLL_TAG(seq, 0));
}

int fy_coll_gatherv(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                    void *rbuf, const int *rcounts, const int *displs,
                    struct fy_dtype *rdt, int root, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout l = {
        .buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    return fy_coll_gather_lin(sbuf, scount, sdt, &l, root, c,
                              FY_COLL_TAG(seq, 0));
}

int fy_coll_scatter(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                    void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                    int root, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout l = {.buf = sbuf, .count = scount, .dt = sdt};
    return fy_coll_scatter_lin(&l, rbuf, rcount, rdt, root, c,
                               FY_COLL_TAG(seq, 0));
}

int fy_coll_scatterv(const void *sbuf, const int *scounts, const int *displs,
                     struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                     struct fy_dtype *rdt, int root, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout l = {
        .buf = sbuf, .counts = scounts, .displs = displs, .dt = sdt};
    return fy_coll_scatter_lin(&l, rbuf, rcount, rdt, root, c,
                               FY_COLL_TAG(seq, 0));
}

/* Ring allgather over any receive layout: our block goes in place first;
 * in step i we pass on the block that came from i ranks to our left. Each
 * block travels with the receive-side description, which every member
 * knows for every block. */
static int fy_coll_allgather_ring(const void *sbuf, MPI_Count scount,
                                  struct fy_dtype *sdt,
                                  const struct fy_coll_layout *dst,
                                  struct fy_comm *c, int tag)
{
    int size = c->size, rank = c->rank;
    int err = 0;
    if (sbuf != MPI_IN_PLACE) {
        struct fy_coll_block b = fy_coll_layout_block(dst, rank);
        err = fy_coll_copy(sbuf, scount, sdt, b.ptr, b.count, b.dt);
    }
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; i < size - 1; i++) {
        struct fy_coll_block s =
            fy_coll_layout_block(dst, (rank - i + size) % size);
        struct fy_coll_block r =
            fy_coll_layout_block(dst, (rank - i - 1 + size) % size);
        err = fy_coll_keep(err, fy_coll_sendrecv(s.ptr, s.count, s.dt, right,
                                                 r.ptr, r.count, r.dt, left,
                                                 tag, c));
    }
    return err;
}

int fy_coll_allgather(const void *sbuf, MPI_Count scount,
                      struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                      struct fy_dtype *rdt, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout l = {.buf = rbuf, .count = rcount, .dt = rdt};
    return fy_coll_allgather_ring(sbuf, scount, sdt, &l, c,
                                  FY_COLL_TAG(seq, 0));
}

int fy_coll_allgatherv(const void *sbuf, MPI_Count scount,
                       struct fy_dtype *sdt, void *rbuf, const int *rcounts,
                       const int *displs, struct fy_dtype *rdt,
                       struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout l = {
        .buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    return fy_coll_allgather_ring(sbuf, scount, sdt, &l, c,
                                  FY_COLL_TAG(seq, 0));
}

/* All-to-all, out of place: keep our own block locally, then in step i
 * send to the rank i to our right while receiving from the rank i to our
 * left, so every step pairs up and nobody waits on a cycle. */
static int fy_coll_alltoall_pairwise(const struct fy_coll_layout *src,
                                     const struct fy_coll_layout *dst,
                                     struct fy_comm *c, int tag)
{
    int size = c->size, rank = c->rank;
    struct fy_coll_block s = fy_coll_layout_block(src, rank);
    struct fy_coll_block r = fy_coll_layout_block(dst, rank);
    int err = fy_coll_copy(s.ptr, s.count, s.dt, r.ptr, r.count, r.dt);
    for (int i = 1; i < size; i++) {
        int to = (rank + i) % size, from = (rank - i + size) % size;
        s = fy_coll_layout_block(src, to);
        r = fy_coll_layout_block(dst, from);
        err = fy_coll_keep(err, fy_coll_sendrecv(s.ptr, s.count, s.dt, to,
                                                 r.ptr, r.count, r.dt, from,
                                                 tag, c));
    }
    return err;
}

/* All-to-all in place: each pair of ranks swaps its two blocks through a
 * temporary. Every member walks the pairs (i, j), i < j, in the same
 * order and takes part in those that include it, so the earliest pending
 * pair always has both members waiting on it: no deadlock. */
static int fy_coll_alltoall_inplace(const struct fy_coll_layout *dst,
                                    struct fy_comm *c, int tag)
{
    int size = c->size, rank = c->rank;
    int err = 0;
    for (int i = 0; i < size; i++) {
        for (int j = i + 1; j < size; j++) {
            int peer;
            if (rank == i)
                peer = j;
            else if (rank == j)
                peer = i;
            else
                continue;
            struct fy_coll_block b = fy_coll_layout_block(dst, peer);
            void *tmp_base = NULL;
            void *tmp = fy_coll_tmp_alloc(b.count, b.dt, &tmp_base);
            if (!tmp) {
                /* Keep the pairing going: receive without sending ours. */
                err = fy_coll_keep(err, -ENOMEM);
                fy_coll_sendrecv(NULL, 0, b.dt, peer, b.ptr, b.count, b.dt,
                                 peer, tag, c);
                continue;
            }
            int rc = fy_coll_copy(b.ptr, b.count, b.dt, tmp, b.count, b.dt);
            rc = fy_coll_keep(rc, fy_coll_sendrecv(tmp, b.count, b.dt, peer,
                                                   b.ptr, b.count, b.dt, peer,
                                                   tag, c));
            err = fy_coll_keep(err, rc);
            free(tmp_base);
        }
    }
    return err;
}

int fy_coll_alltoall(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                     void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                     struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout dst = {.buf = rbuf, .count = rcount, .dt = rdt};
    if (sbuf == MPI_IN_PLACE)
        return fy_coll_alltoall_inplace(&dst, c, FY_COLL_TAG(seq, 0));
    struct fy_coll_layout src = {.buf = sbuf, .count = scount, .dt = sdt};
    return fy_coll_alltoall_pairwise(&src, &dst, c, FY_COLL_TAG(seq, 0));
}

int fy_coll_alltoallv(const void *sbuf, const int *scounts,
                      const int *sdispls, struct fy_dtype *sdt, void *rbuf,
                      const int *rcounts, const int *rdispls,
                      struct fy_dtype *rdt, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout dst = {
        .buf = rbuf, .counts = rcounts, .displs = rdispls, .dt = rdt};
    if (sbuf == MPI_IN_PLACE)
        return fy_coll_alltoall_inplace(&dst, c, FY_COLL_TAG(seq, 0));
    struct fy_coll_layout src = {
        .buf = sbuf, .counts = scounts, .displs = sdispls, .dt = sdt};
    return fy_coll_alltoall_pairwise(&src, &dst, c, FY_COLL_TAG(seq, 0));
}

int fy_coll_alltoallw(const void *sbuf, const int *scounts,
                      const int *sdispls, struct fy_dtype *const *sdts,
                      void *rbuf, const int *rcounts, const int *rdispls,
                      struct fy_dtype *const *rdts, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_coll_layout dst = {.buf = rbuf, .counts = rcounts,
                                 .displs = rdispls, .dt = rdts[0],
                                 .dts = rdts};
    if (sbuf == MPI_IN_PLACE)
        return fy_coll_alltoall_inplace(&dst, c, FY_COLL_TAG(seq, 0));
    struct fy_coll_layout src = {.buf = sbuf, .counts = scounts,
                                 .displs = sdispls, .dt = sdts[0],
                                 .dts = sdts};
    return fy_coll_alltoall_pairwise(&src, &dst, c, FY_COLL_TAG(seq, 0));
}
