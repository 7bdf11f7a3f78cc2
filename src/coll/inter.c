/* SPDX-License-Identifier: MIT */
/* Collectives on intercommunicators (MPI 4.0 6.2.2), each one schedule:
 * data moves between the two groups by point-to-point over the
 * intercommunicator's collective context (steps whose peers are remote
 * ranks), and the local halves (reduce before, broadcast or scatter
 * after) are steps on the local group's hidden intracommunicator
 * (fy_sched_on). So the blocking form runs the schedule to its end, and
 * the nonblocking and persistent forms hand it to the progress engine:
 * nothing waits for the other group in the starting call. Every member of
 * both groups builds one schedule per collective, even an empty one, so
 * that collective numbers stay in step on both sides; all members of a
 * group make the same switches to the local communicator. */
#include "coll/coll_int.h"

#include <errno.h>
#include <stdlib.h>

/* Empty messages, but from a real address (memcpy(NULL, 0) is
 * undefined). */
static char s_dummy;

static struct fy_comm *local_of(struct fy_comm *c)
{
    return c->inter->local;
}

/* On the local communicator: zero-byte messages up a binomial tree to
 * rank 0, which has then heard (transitively) from every member. */
static void build_fanin(struct fy_sched *s)
{
    struct fy_comm *l = fy_sched_comm(s);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    int tag = FY_SCHED_TAG(s, 0);
    for (int mask = 1; mask < l->size; mask <<= 1) {
        if (l->rank & mask) {
            fy_sched_send(s, &s_dummy, 0, byte, l->rank - mask, tag);
            break;
        }
        if (l->rank + mask < l->size)
            fy_sched_recv(s, &s_dummy, 0, byte, l->rank + mask, tag);
        fy_sched_wait(s); /* a child's subtree is in before we report */
    }
    fy_sched_wait(s);
}

int fy_coll_inter_barrier(struct fy_comm *c, struct fy_sched **nb)
{
    /* Everyone here reports to the leader; the leaders swap empty
     * messages (each learns the other group is in); then the leader
     * lets its group go. */
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    fy_sched_on(s, local_of(c));
    build_fanin(s);
    fy_sched_on(s, c);
    if (c->rank == 0) {
        int tag = FY_SCHED_TAG(s, 0);
        fy_sched_send(s, &s_dummy, 0, byte, 0, tag);
        fy_sched_recv(s, &s_dummy, 0, byte, 0, tag);
        fy_sched_wait(s);
    }
    fy_sched_on(s, local_of(c));
    if (c->size > 1)
        fy_coll_build_bcast(s, &s_dummy, 0, byte, 0, 0);
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_bcast(void *buf, MPI_Count count, struct fy_dtype *dt,
                        int root, struct fy_comm *c, struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT) {
        fy_sched_send(s, buf, count, dt, 0, tag);
    } else if (root != MPI_PROC_NULL) {
        if (c->rank == 0) {
            fy_sched_recv(s, buf, count, dt, root, tag);
            fy_sched_wait(s);
        }
        fy_sched_on(s, local_of(c));
        if (c->size > 1 && count > 0)
            fy_coll_build_bcast(s, buf, count, dt, 0, 0);
    }
    return fy_sched_finish(s, nb);
}

/* Steps reducing this group's data to its rank 0, into a temporary there
 * (returned; NULL elsewhere). Leaves s on c. */
static void *build_reduce_to_leader(struct fy_sched *s, const void *sbuf,
                                    MPI_Count count, struct fy_dtype *dt,
                                    struct fy_op *op, struct fy_comm *c)
{
    void *tmp = c->rank == 0 ? fy_sched_tmp(s, count, dt) : NULL;
    fy_sched_on(s, local_of(c));
    fy_coll_build_reduce(s, sbuf, tmp, count, dt, op, 0);
    fy_sched_on(s, c);
    return tmp;
}

int fy_coll_inter_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                         struct fy_dtype *dt, struct fy_op *op, int root,
                         struct fy_comm *c, struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT) {
        fy_sched_recv(s, rbuf, count, dt, 0, tag);
    } else if (root != MPI_PROC_NULL) {
        void *tmp = build_reduce_to_leader(s, sbuf, count, dt, op, c);
        if (c->rank == 0)
            fy_sched_send(s, tmp, count, dt, root, tag);
    }
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                            struct fy_dtype *dt, struct fy_op *op,
                            struct fy_comm *c, struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    void *tmp = build_reduce_to_leader(s, sbuf, count, dt, op, c);
    if (c->rank == 0) {
        fy_sched_send(s, tmp, count, dt, 0, tag);
        fy_sched_recv(s, rbuf, count, dt, 0, tag);
        fy_sched_wait(s);
    }
    fy_sched_on(s, local_of(c));
    if (c->size > 1 && count > 0)
        fy_coll_build_bcast(s, rbuf, count, dt, 0, 0);
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, MPI_Count rcount,
                                 struct fy_coll_vec rcounts,
                                 struct fy_dtype *dt, struct fy_op *op,
                                 struct fy_comm *c, struct fy_sched **nb)
{
    int n = c->size;
    MPI_Aint *displs = NULL;
    MPI_Count total = rcount * n;
    if (rcounts.p) {
        /* Read at build time only: freed below. */
        if (!(displs = malloc((size_t)n * sizeof(*displs))))
            fy_fatal(1, "collective: out of memory for %d counts", n);
        total = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = total;
            total += fy_vec_at(rcounts, i);
        }
    }
    struct fy_sched *s;
    int rc = fy_sched_create(c, nb != NULL, &s);
    if (rc != 0) {
        free(displs);
        return rc;
    }
    /* This group's reduction goes to the other group, whose reduction
     * (the same length: MPI requires it) is scattered here. */
    int tag = FY_SCHED_TAG(s, 0);
    void *mine = build_reduce_to_leader(s, sbuf, total, dt, op, c);
    void *theirs = NULL;
    if (c->rank == 0) {
        theirs = fy_sched_tmp(s, total, dt);
        fy_sched_send(s, mine, total, dt, 0, tag);
        fy_sched_recv(s, theirs, total, dt, 0, tag);
        fy_sched_wait(s);
    }
    fy_sched_on(s, local_of(c));
    struct fy_coll_layout src = {.buf = theirs, .count = rcount, .dt = dt};
    MPI_Count mycount = rcount;
    if (rcounts.p) {
        src.counts = rcounts;
        src.displs = fy_vec_wide(displs);
        mycount = fy_vec_at(rcounts, c->rank);
    }
    fy_coll_build_scatter(s, &src, rbuf, mycount, dt, 0, 0);
    free(displs);
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_gather(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, const struct fy_coll_layout *dst,
                         int root, struct fy_comm *c, struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->p2p_group->size; i++) {
            struct fy_coll_block b = fy_coll_layout_block(dst, i);
            fy_sched_recv(s, b.ptr, b.count, b.dt, i, tag);
        }
    } else if (root != MPI_PROC_NULL) {
        fy_sched_send(s, sbuf, scount, sdt, root, tag);
    }
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_scatter(const struct fy_coll_layout *src, void *rbuf,
                          MPI_Count rcount, struct fy_dtype *rdt, int root,
                          struct fy_comm *c, struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->p2p_group->size; i++) {
            struct fy_coll_block b = fy_coll_layout_block(src, i);
            fy_sched_send(s, b.ptr, b.count, b.dt, i, tag);
        }
    } else if (root != MPI_PROC_NULL) {
        fy_sched_recv(s, rbuf, rcount, rdt, root, tag);
    }
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_allgather(const void *sbuf, MPI_Count scount,
                            struct fy_dtype *sdt,
                            const struct fy_coll_layout *dst, struct fy_comm *c,
                            struct fy_sched **nb)
{
    /* Direct: one message per pair of members of different groups. */
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    for (int i = 0; i < c->p2p_group->size; i++) {
        struct fy_coll_block b = fy_coll_layout_block(dst, i);
        fy_sched_recv(s, b.ptr, b.count, b.dt, i, tag);
        fy_sched_send(s, sbuf, scount, sdt, i, tag);
    }
    return fy_sched_finish(s, nb);
}

int fy_coll_inter_alltoall(const struct fy_coll_layout *src,
                           const struct fy_coll_layout *dst, struct fy_comm *c,
                           struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    int tag = FY_SCHED_TAG(s, 0);
    for (int i = 0; i < c->p2p_group->size; i++) {
        struct fy_coll_block r = fy_coll_layout_block(dst, i);
        struct fy_coll_block b = fy_coll_layout_block(src, i);
        fy_sched_recv(s, r.ptr, r.count, r.dt, i, tag);
        fy_sched_send(s, b.ptr, b.count, b.dt, i, tag);
    }
    return fy_sched_finish(s, nb);
}
