/* SPDX-License-Identifier: MIT */
/* Data movement collectives: gather, scatter, allgather and all-to-all in
 * their uniform, v and w shapes, as schedules. Linear at the root, a ring
 * for allgather, pairwise exchange for all-to-all; one builder per family,
 * the shape being described by a struct fy_coll_layout. */
#include "coll/coll_int.h"
#include "coll/shm.h"

#include <errno.h>
#include <stdlib.h>

/* Linear gather: the root posts every receive at once. */
static void fy_coll_build_gather(struct fy_sched *s, const void *sbuf,
                                 MPI_Count scount, struct fy_dtype *sdt,
                                 const struct fy_coll_layout *dst, int root)
{
    struct fy_comm *c = fy_sched_comm(s);
    int tag = FY_SCHED_TAG(s, 0);
    if (c->rank != root) {
        fy_sched_send(s, sbuf, scount, sdt, root, tag);
        return;
    }
    for (int i = 0; i < c->size; i++) {
        struct fy_coll_block b = fy_coll_layout_block(dst, i);
        if (i != root)
            fy_sched_recv(s, b.ptr, b.count, b.dt, i, tag);
        else if (sbuf != MPI_IN_PLACE)
            fy_sched_copy(s, sbuf, scount, sdt, b.ptr, b.count, b.dt);
    }
}

void fy_coll_build_scatter(struct fy_sched *s, const struct fy_coll_layout *src,
                           void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                           int root, int step)
{
    struct fy_comm *c = fy_sched_comm(s);
    int tag = FY_SCHED_TAG(s, step);
    if (c->rank != root) {
        fy_sched_recv(s, rbuf, rcount, rdt, root, tag);
        return;
    }
    for (int i = 0; i < c->size; i++) {
        struct fy_coll_block b = fy_coll_layout_block(src, i);
        if (i != root)
            fy_sched_send(s, b.ptr, b.count, b.dt, i, tag);
        else if (rbuf != MPI_IN_PLACE)
            fy_sched_copy(s, b.ptr, b.count, b.dt, rbuf, rcount, rdt);
    }
}

int fy_coll_gather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                   void *rbuf, MPI_Count rcount, struct fy_dtype *rdt, int root,
                   struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(c, fy_coll_shm_gather(sbuf, scount, sdt, rbuf,
                                                       rcount, rdt, root, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_igather(sbuf, scount, sdt, rbuf, rcount, rdt, root,
                                     c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    struct fy_coll_layout l = {.buf = rbuf, .count = rcount, .dt = rdt};
    fy_coll_build_gather(s, sbuf, scount, sdt, &l, root);
    return fy_sched_finish(s, nb);
}

int fy_coll_gatherv(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                    void *rbuf, struct fy_coll_vec rcounts,
                    struct fy_coll_vec displs, struct fy_dtype *rdt, int root,
                    struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(c, fy_coll_shm_gatherv(sbuf, scount, sdt, rbuf,
                                                        rcounts, displs, rdt,
                                                        root, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_igatherv(sbuf, scount, sdt, rbuf, rcounts, displs,
                                      rdt, root, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_coll_layout l = {
        .buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    fy_coll_build_gather(s, sbuf, scount, sdt, &l, root);
    return fy_sched_finish(s, nb);
}

int fy_coll_scatter(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                    void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                    int root, struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(c, fy_coll_shm_scatter(sbuf, scount, sdt, rbuf,
                                                        rcount, rdt, root, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_iscatter(sbuf, scount, sdt, rbuf, rcount, rdt,
                                      root, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    struct fy_coll_layout l = {.buf = sbuf, .count = scount, .dt = sdt};
    fy_coll_build_scatter(s, &l, rbuf, rcount, rdt, root, 0);
    return fy_sched_finish(s, nb);
}

int fy_coll_scatterv(const void *sbuf, struct fy_coll_vec scounts,
                     struct fy_coll_vec displs, struct fy_dtype *sdt,
                     void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                     int root, struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(c, fy_coll_shm_scatterv(sbuf, scounts, displs,
                                                         sdt, rbuf, rcount, rdt,
                                                         root, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_iscatterv(sbuf, scounts, displs, sdt, rbuf, rcount,
                                       rdt, root, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_coll_layout l = {
        .buf = sbuf, .counts = scounts, .displs = displs, .dt = sdt};
    fy_coll_build_scatter(s, &l, rbuf, rcount, rdt, root, 0);
    return fy_sched_finish(s, nb);
}

/* Ring allgather over any receive layout: our block goes in place first;
 * in step i we pass on the block that came from i ranks to our left. Each
 * block travels with the receive-side description, which every member
 * knows for every block. */
static void fy_coll_build_allgather(struct fy_sched *s, const void *sbuf,
                                    MPI_Count scount, struct fy_dtype *sdt,
                                    const struct fy_coll_layout *dst)
{
    struct fy_comm *c = fy_sched_comm(s);
    int size = c->size, rank = c->rank;
    int tag = FY_SCHED_TAG(s, 0);
    if (sbuf != MPI_IN_PLACE) {
        struct fy_coll_block b = fy_coll_layout_block(dst, rank);
        fy_sched_copy(s, sbuf, scount, sdt, b.ptr, b.count, b.dt);
    }
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int i = 0; i < size - 1; i++) {
        struct fy_coll_block out =
            fy_coll_layout_block(dst, (rank - i + size) % size);
        struct fy_coll_block in =
            fy_coll_layout_block(dst, (rank - i - 1 + size) % size);
        fy_sched_recv(s, in.ptr, in.count, in.dt, left, tag);
        fy_sched_send(s, out.ptr, out.count, out.dt, right, tag);
        fy_sched_wait(s);
    }
}

int fy_coll_allgather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                      void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                      struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(
            c, fy_coll_shm_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc =
            fy_coll_shm_iallgather(sbuf, scount, sdt, rbuf, rcount, rdt, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    struct fy_coll_layout l = {.buf = rbuf, .count = rcount, .dt = rdt};
    fy_coll_build_allgather(s, sbuf, scount, sdt, &l);
    return fy_sched_finish(s, nb);
}

int fy_coll_allgatherv(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                       void *rbuf, struct fy_coll_vec rcounts,
                       struct fy_coll_vec displs, struct fy_dtype *rdt,
                       struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc =
            FY_COLL_SHM_ONE(c, fy_coll_shm_allgatherv(sbuf, scount, sdt, rbuf,
                                                      rcounts, displs, rdt, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_iallgatherv(sbuf, scount, sdt, rbuf, rcounts,
                                         displs, rdt, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_coll_layout l = {
        .buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    fy_coll_build_allgather(s, sbuf, scount, sdt, &l);
    return fy_sched_finish(s, nb);
}

/* All-to-all, out of place: keep our own block locally, then in step i
 * send to the rank i to our right while receiving from the rank i to our
 * left, so every step pairs up and nobody waits on a cycle. */
static void fy_coll_build_alltoall(struct fy_sched *s,
                                   const struct fy_coll_layout *src,
                                   const struct fy_coll_layout *dst)
{
    struct fy_comm *c = fy_sched_comm(s);
    int size = c->size, rank = c->rank;
    int tag = FY_SCHED_TAG(s, 0);
    struct fy_coll_block out = fy_coll_layout_block(src, rank);
    struct fy_coll_block in = fy_coll_layout_block(dst, rank);
    fy_sched_copy(s, out.ptr, out.count, out.dt, in.ptr, in.count, in.dt);
    for (int i = 1; i < size; i++) {
        int to = (rank + i) % size, from = (rank - i + size) % size;
        out = fy_coll_layout_block(src, to);
        in = fy_coll_layout_block(dst, from);
        fy_sched_recv(s, in.ptr, in.count, in.dt, from, tag);
        fy_sched_send(s, out.ptr, out.count, out.dt, to, tag);
        fy_sched_wait(s);
    }
}

/* All-to-all in place: each pair of ranks swaps its two blocks through a
 * temporary. Every member walks the pairs (i, j), i < j, in the same
 * order and takes part in those that include it, so the earliest pending
 * pair always has both members waiting on it: no deadlock. */
static void fy_coll_build_alltoall_inplace(struct fy_sched *s,
                                           const struct fy_coll_layout *dst)
{
    struct fy_comm *c = fy_sched_comm(s);
    int size = c->size, rank = c->rank;
    int tag = FY_SCHED_TAG(s, 0);
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
            void *tmp = fy_sched_tmp(s, b.count, b.dt);
            fy_sched_copy(s, b.ptr, b.count, b.dt, tmp, b.count, b.dt);
            fy_sched_recv(s, b.ptr, b.count, b.dt, peer, tag);
            fy_sched_send(s, tmp, b.count, b.dt, peer, tag);
            fy_sched_wait(s);
        }
    }
}

int fy_coll_alltoall(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                     void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                     struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(
            c, fy_coll_shm_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc =
            fy_coll_shm_ialltoall(sbuf, scount, sdt, rbuf, rcount, rdt, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    struct fy_coll_layout dst = {.buf = rbuf, .count = rcount, .dt = rdt};
    if (sbuf == MPI_IN_PLACE) {
        fy_coll_build_alltoall_inplace(s, &dst);
    } else {
        struct fy_coll_layout src = {.buf = sbuf, .count = scount, .dt = sdt};
        fy_coll_build_alltoall(s, &src, &dst);
    }
    return fy_sched_finish(s, nb);
}

int fy_coll_alltoallv(const void *sbuf, struct fy_coll_vec scounts,
                      struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                      void *rbuf, struct fy_coll_vec rcounts,
                      struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                      struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(
            c, fy_coll_shm_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts,
                                     rdispls, rdt, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_ialltoallv(sbuf, scounts, sdispls, sdt, rbuf,
                                        rcounts, rdispls, rdt, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_coll_layout dst = {
        .buf = rbuf, .counts = rcounts, .displs = rdispls, .dt = rdt};
    if (sbuf == MPI_IN_PLACE) {
        fy_coll_build_alltoall_inplace(s, &dst);
    } else {
        struct fy_coll_layout src = {
            .buf = sbuf, .counts = scounts, .displs = sdispls, .dt = sdt};
        fy_coll_build_alltoall(s, &src, &dst);
    }
    return fy_sched_finish(s, nb);
}

int fy_coll_alltoallw(const void *sbuf, struct fy_coll_vec scounts,
                      struct fy_coll_vec sdispls, struct fy_dtype *const *sdts,
                      void *rbuf, struct fy_coll_vec rcounts,
                      struct fy_coll_vec rdispls, struct fy_dtype *const *rdts,
                      struct fy_comm *c, struct fy_sched **nb)
{
    int rc = nb ? fy_coll_shm_ialltoallw(sbuf, scounts, sdispls, sdts, rbuf,
                                         rcounts, rdispls, rdts, c, nb)
                : FY_COLL_SHM_ONE(c, fy_coll_shm_alltoallw(
                                         sbuf, scounts, sdispls, sdts, rbuf,
                                         rcounts, rdispls, rdts, c));
    if (rc != FY_COLL_SHM_NO)
        return rc;
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_coll_layout dst = {.buf = rbuf,
                                 .counts = rcounts,
                                 .displs = rdispls,
                                 .dt = rdts[0],
                                 .dts = rdts};
    if (sbuf == MPI_IN_PLACE) {
        fy_coll_build_alltoall_inplace(s, &dst);
    } else {
        struct fy_coll_layout src = {.buf = sbuf,
                                     .counts = scounts,
                                     .displs = sdispls,
                                     .dt = sdts[0],
                                     .dts = sdts};
        fy_coll_build_alltoall(s, &src, &dst);
    }
    return fy_sched_finish(s, nb);
}
