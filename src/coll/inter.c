/* SPDX-License-Identifier: MIT */
/* Collectives on intercommunicators (MPI 4.0 6.2.2): data moves between
 * the two groups by point-to-point over the intercommunicator's collective
 * context (a schedule on it, whose peers are remote ranks), and the local
 * halves (reduce before, broadcast or scatter after) run on the local
 * group's hidden intracommunicator. Every member of both groups builds one
 * schedule per collective, even an empty one, so that collective numbers
 * stay in step on both sides. Blocking only. */
#include "coll/coll_int.h"

#include <errno.h>
#include <stdlib.h>

static struct fy_comm *local_of(struct fy_comm *c)
{
    return c->inter->local;
}

int fy_coll_inter_barrier(struct fy_comm *c)
{
    /* Everyone here is in; the leaders swap nothing (each learns the
     * other group is in); the second local barrier lets nobody out
     * before its leader has heard from the other side. */
    int rc = fy_coll_barrier(local_of(c), NULL);
    FY_SCHED_BEGIN(s, c, NULL);
    if (c->rank == 0) {
        int tag = FY_SCHED_TAG(s, 0);
        struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
        fy_sched_send(s, NULL, 0, byte, 0, tag);
        fy_sched_recv(s, NULL, 0, byte, 0, tag);
    }
    rc = fy_coll_keep(rc, fy_sched_finish(s, NULL));
    return fy_coll_keep(rc, fy_coll_barrier(local_of(c), NULL));
}

int fy_coll_inter_bcast(void *buf, MPI_Count count, struct fy_dtype *dt,
                        int root, struct fy_comm *c)
{
    FY_SCHED_BEGIN(s, c, NULL);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT)
        fy_sched_send(s, buf, count, dt, 0, tag);
    else if (root != MPI_PROC_NULL && c->rank == 0)
        fy_sched_recv(s, buf, count, dt, root, tag);
    int rc = fy_sched_finish(s, NULL);
    if (root == MPI_ROOT || root == MPI_PROC_NULL)
        return rc;
    return fy_coll_keep(rc,
                        fy_coll_bcast(buf, count, dt, 0, local_of(c), NULL));
}

/* Reduce this group's data to its rank 0, into a temporary there
 * (*base_out to free; NULL elsewhere). */
static int reduce_to_leader(const void *sbuf, MPI_Count count,
                            struct fy_dtype *dt, struct fy_op *op,
                            struct fy_comm *c, void **tmp_out, void **base_out)
{
    void *tmp = NULL;
    *base_out = NULL;
    if (c->rank == 0 && !(tmp = fy_coll_tmp_alloc(count, dt, base_out)))
        fy_fatal(1, "collective: out of memory for %lld elements",
                 (long long)count); /* the others would wait for us */
    *tmp_out = tmp;
    return fy_coll_reduce(sbuf, tmp, count, dt, op, 0, local_of(c), NULL);
}

int fy_coll_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                         struct fy_dtype *dt, struct fy_op *op, int root,
                         struct fy_comm *c)
{
    void *tmp = NULL, *base = NULL;
    int rc = 0;
    if (root != MPI_ROOT && root != MPI_PROC_NULL)
        rc = reduce_to_leader(sbuf, count, dt, op, c, &tmp, &base);
    struct fy_sched *s;
    int src = fy_sched_create(c, false, &s);
    if (src != 0) {
        free(base);
        return src;
    }
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT)
        fy_sched_recv(s, rbuf, count, dt, 0, tag);
    else if (root != MPI_PROC_NULL && c->rank == 0)
        fy_sched_send(s, tmp, count, dt, root, tag);
    rc = fy_coll_keep(rc, fy_sched_finish(s, NULL));
    free(base);
    return rc;
}

int fy_coll_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                            struct fy_dtype *dt, struct fy_op *op,
                            struct fy_comm *c)
{
    void *tmp, *base;
    int rc = reduce_to_leader(sbuf, count, dt, op, c, &tmp, &base);
    struct fy_sched *s;
    int src = fy_sched_create(c, false, &s);
    if (src != 0) {
        free(base);
        return src;
    }
    if (c->rank == 0) {
        int tag = FY_SCHED_TAG(s, 0);
        fy_sched_send(s, tmp, count, dt, 0, tag);
        fy_sched_recv(s, rbuf, count, dt, 0, tag);
    }
    rc = fy_coll_keep(rc, fy_sched_finish(s, NULL));
    free(base);
    return fy_coll_keep(rc,
                        fy_coll_bcast(rbuf, count, dt, 0, local_of(c), NULL));
}

int fy_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, MPI_Count rcount,
                                 struct fy_coll_vec rcounts,
                                 struct fy_dtype *dt, struct fy_op *op,
                                 struct fy_comm *c)
{
    int n = c->size;
    MPI_Aint *displs = NULL;
    MPI_Count total = rcount * n;
    if (rcounts.p) {
        if (!(displs = malloc((size_t)n * sizeof(*displs))))
            fy_fatal(1, "collective: out of memory for %d counts", n);
        total = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = total;
            total += fy_vec_at(rcounts, i);
        }
    }
    /* This group's reduction goes to the other group, whose reduction
     * (the same length: MPI requires it) is scattered here. */
    void *mine, *mbase, *theirs = NULL, *tbase = NULL;
    int rc = reduce_to_leader(sbuf, total, dt, op, c, &mine, &mbase);
    if (c->rank == 0 && !(theirs = fy_coll_tmp_alloc(total, dt, &tbase)))
        fy_fatal(1, "collective: out of memory for %lld elements",
                 (long long)total);
    struct fy_sched *s;
    int src = fy_sched_create(c, false, &s);
    if (src != 0) {
        free(mbase);
        free(tbase);
        free(displs);
        return src;
    }
    if (c->rank == 0) {
        int tag = FY_SCHED_TAG(s, 0);
        fy_sched_send(s, mine, total, dt, 0, tag);
        fy_sched_recv(s, theirs, total, dt, 0, tag);
    }
    rc = fy_coll_keep(rc, fy_sched_finish(s, NULL));
    if (rcounts.p)
        rc = fy_coll_keep(rc, fy_coll_scatterv(theirs, rcounts,
                                               fy_vec_wide(displs), dt, rbuf,
                                               fy_vec_at(rcounts, c->rank), dt,
                                               0, local_of(c), NULL));
    else
        rc = fy_coll_keep(rc, fy_coll_scatter(theirs, rcount, dt, rbuf, rcount,
                                              dt, 0, local_of(c), NULL));
    free(mbase);
    free(tbase);
    free(displs);
    return rc;
}

int fy_coll_inter_gather(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, const struct fy_coll_layout *dst,
                         int root, struct fy_comm *c)
{
    FY_SCHED_BEGIN(s, c, NULL);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->p2p_group->size; i++) {
            struct fy_coll_block b = fy_coll_layout_block(dst, i);
            fy_sched_recv(s, b.ptr, b.count, b.dt, i, tag);
        }
    } else if (root != MPI_PROC_NULL) {
        fy_sched_send(s, sbuf, scount, sdt, root, tag);
    }
    return fy_sched_finish(s, NULL);
}

int fy_coll_inter_scatter(const struct fy_coll_layout *src, void *rbuf,
                          MPI_Count rcount, struct fy_dtype *rdt, int root,
                          struct fy_comm *c)
{
    FY_SCHED_BEGIN(s, c, NULL);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->p2p_group->size; i++) {
            struct fy_coll_block b = fy_coll_layout_block(src, i);
            fy_sched_send(s, b.ptr, b.count, b.dt, i, tag);
        }
    } else if (root != MPI_PROC_NULL) {
        fy_sched_recv(s, rbuf, rcount, rdt, root, tag);
    }
    return fy_sched_finish(s, NULL);
}

int fy_coll_inter_allgather(const void *sbuf, MPI_Count scount,
                            struct fy_dtype *sdt,
                            const struct fy_coll_layout *dst, struct fy_comm *c)
{
    /* Direct: one message per pair of members of different groups. */
    FY_SCHED_BEGIN(s, c, NULL);
    int tag = FY_SCHED_TAG(s, 0);
    for (int i = 0; i < c->p2p_group->size; i++) {
        struct fy_coll_block b = fy_coll_layout_block(dst, i);
        fy_sched_recv(s, b.ptr, b.count, b.dt, i, tag);
        fy_sched_send(s, sbuf, scount, sdt, i, tag);
    }
    return fy_sched_finish(s, NULL);
}

int fy_coll_inter_alltoall(const struct fy_coll_layout *src,
                           const struct fy_coll_layout *dst, struct fy_comm *c)
{
    FY_SCHED_BEGIN(s, c, NULL);
    int tag = FY_SCHED_TAG(s, 0);
    for (int i = 0; i < c->p2p_group->size; i++) {
        struct fy_coll_block r = fy_coll_layout_block(dst, i);
        struct fy_coll_block b = fy_coll_layout_block(src, i);
        fy_sched_recv(s, r.ptr, r.count, r.dt, i, tag);
        fy_sched_send(s, b.ptr, b.count, b.dt, i, tag);
    }
    return fy_sched_finish(s, NULL);
}
