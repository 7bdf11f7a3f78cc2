/* SPDX-License-Identifier: MIT */
/* Barrier, broadcast and the reductions (reduce, allreduce,
 * reduce-scatter, scans). Trees are binomial; values are combined in the
 * datatype's own layout, so user ops see what they expect. */
#include "coll/coll_int.h"

#include <errno.h>
#include <stdlib.h>

int fy_coll_barrier(struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    int err = 0;
    /* Dissemination: after round k every rank has (transitively) heard
     * from the 2^(k+1) ranks before it, so after ceil(log2 P) rounds from
     * all of them. */
    int step = 0;
    for (int k = 1; k < c->size; k <<= 1, step++) {
        int to = (c->rank + k) % c->size;
        int from = (c->rank - k + c->size) % c->size;
        err = fy_coll_keep(err, fy_coll_sendrecv(NULL, 0, byte, to, NULL, 0,
                                                 byte, from,
                                                 FY_COLL_TAG(seq, step), c));
    }
    return err;
}

int fy_coll_bcast_tree(void *buf, MPI_Count count, struct fy_dtype *dt,
                       int root, struct fy_comm *c, int tag)
{
    int size = c->size;
    int rel = (c->rank - root + size) % size;
    int err = 0;
    int mask = 1;
    /* Receive from the parent: the rank that differs in our lowest set
     * bit (relative to the root). */
    while (mask < size) {
        if (rel & mask) {
            int src = (rel - mask + root) % size;
            err = fy_coll_recv(buf, count, dt, src, tag, c);
            break;
        }
        mask <<= 1;
    }
    /* Forward to children below that bit, farthest subtree first. */
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < size) {
            int dst = (rel + mask + root) % size;
            err = fy_coll_keep(err, fy_coll_send(buf, count, dt, dst, tag, c));
        }
    }
    return err;
}

int fy_coll_bcast(void *buf, MPI_Count count, struct fy_dtype *dt, int root,
                  struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    if (c->size == 1 || count == 0)
        return 0;
    return fy_coll_bcast_tree(buf, count, dt, root, c, FY_COLL_TAG(seq, 0));
}

int fy_coll_reduce_tree(const void *in, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op, int root,
                        struct fy_comm *c, uint32_t seq)
{
    int size = c->size, rank = c->rank;
    int tag = FY_COLL_TAG(seq, 0);
    /* A commutative op may combine in any order, so the tree hangs from
     * the root itself. Otherwise it hangs from rank 0: the subtree of
     * relative rank r then covers ranks [r, r + 2^k) in order, and
     * combining "mine op child's" keeps the MPI-prescribed rank order. */
    int top = op->commute ? root : 0;
    int lrank = (rank - top + size) % size;
    void *acc_base = NULL, *tmp_base = NULL;
    void *acc = fy_coll_tmp_alloc(count, dt, &acc_base);
    if (!acc)
        return -ENOMEM;
    void *tmp = NULL;
    int err = fy_coll_copy(in, count, dt, acc, count, dt);

    for (int mask = 1; mask < size; mask <<= 1) {
        if (lrank & mask) {
            int parent = (lrank - mask + top) % size;
            err = fy_coll_keep(err, fy_coll_send(acc, count, dt, parent,
                                                 tag, c));
            break;
        }
        if (lrank + mask >= size)
            continue;
        if (!tmp) {
            tmp = fy_coll_tmp_alloc(count, dt, &tmp_base);
            if (!tmp) {
                /* Still drain the child, or it blocks forever in a large
                 * send: receive into the accumulator and give up on the
                 * value. */
                err = fy_coll_keep(err, -ENOMEM);
                fy_coll_recv(acc, count, dt, (lrank + mask + top) % size, tag,
                             c);
                continue;
            }
        }
        int child = (lrank + mask + top) % size;
        int rc = fy_coll_recv(tmp, count, dt, child, tag, c);
        if (rc == 0) {
            /* fy_op_apply computes inout = in op inout: with in = ours
             * (lower ranks) and inout = the child's, the result is in
             * tmp; swap so acc holds it. */
            rc = fy_op_apply(op, acc, tmp, count, dt);
            void *t = acc, *tb = acc_base;
            acc = tmp;
            acc_base = tmp_base;
            tmp = t;
            tmp_base = tb;
        }
        err = fy_coll_keep(err, rc);
    }

    if (rank == top) {
        if (top == root)
            err = fy_coll_keep(err, fy_coll_copy(acc, count, dt, rbuf, count,
                                                 dt));
        else
            err = fy_coll_keep(err, fy_coll_send(acc, count, dt, root,
                                                 FY_COLL_TAG(seq, 1), c));
    } else if (rank == root) {
        err = fy_coll_keep(err, fy_coll_recv(rbuf, count, dt, top,
                                             FY_COLL_TAG(seq, 1), c));
    }
    free(acc_base);
    free(tmp_base);
    return err;
}

int fy_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, int root,
                   struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0)
        return 0;
    if (c->size == 1)
        return in == rbuf ? 0 : fy_coll_copy(in, count, dt, rbuf, count, dt);
    return fy_coll_reduce_tree(in, rbuf, count, dt, op, root, c, seq);
}

int fy_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op,
                      struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0)
        return 0;
    if (c->size == 1)
        return in == rbuf ? 0 : fy_coll_copy(in, count, dt, rbuf, count, dt);
    /* Reduce to 0, then broadcast: every member ends with rank 0's bits,
     * which recursive doubling would not promise for floating point.
     * Steps 0-1 are the reduction's, 2 the broadcast's. */
    int err = fy_coll_reduce_tree(in, rbuf, count, dt, op, 0, c, seq);
    return fy_coll_keep(err, fy_coll_bcast_tree(rbuf, count, dt, 0, c,
                                                FY_COLL_TAG(seq, 2)));
}

/* Reduce 'total' elements to rank 0, then scatter 'counts' blocks. */
static int fy_coll_reduce_scatter_common(const void *sbuf, void *rbuf,
                                         MPI_Count total,
                                         const struct fy_coll_layout *blocks,
                                         MPI_Count mycount,
                                         struct fy_dtype *dt,
                                         struct fy_op *op, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (c->size == 1)
        return in == rbuf ? 0
                          : fy_coll_copy(in, mycount, dt, rbuf, mycount, dt);
    if (total == 0)
        return 0;
    void *tmp_base = NULL, *tmp = NULL;
    if (c->rank == 0) {
        tmp = fy_coll_tmp_alloc(total, dt, &tmp_base);
        if (!tmp)
            return -ENOMEM; /* fatal under the default error handler */
    }
    int err = fy_coll_reduce_tree(in, tmp, total, dt, op, 0, c, seq);
    struct fy_coll_layout l = *blocks;
    l.buf = tmp;
    err = fy_coll_keep(err, fy_coll_scatter_lin(&l, rbuf, mycount, dt, 0, c,
                                                FY_COLL_TAG(seq, 2)));
    free(tmp_base);
    return err;
}

int fy_coll_reduce_scatter_block(const void *sbuf, void *rbuf,
                                 MPI_Count count, struct fy_dtype *dt,
                                 struct fy_op *op, struct fy_comm *c)
{
    struct fy_coll_layout l = {.count = count, .dt = dt};
    return fy_coll_reduce_scatter_common(sbuf, rbuf, count * c->size, &l,
                                         count, dt, op, c);
}

int fy_coll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                           struct fy_dtype *dt, struct fy_op *op,
                           struct fy_comm *c)
{
    int *displs = malloc((size_t)c->size * sizeof(int));
    if (!displs) {
        /* Keep the sequence numbers in step with the other members even
         * though this one cannot take part. */
        fy_coll_begin(c);
        return -ENOMEM;
    }
    MPI_Count total = 0;
    for (int i = 0; i < c->size; i++) {
        displs[i] = (int)total;
        total += rcounts[i];
    }
    struct fy_coll_layout l = {.counts = rcounts, .displs = displs, .dt = dt};
    int rc = fy_coll_reduce_scatter_common(sbuf, rbuf, total, &l,
                                           rcounts[c->rank], dt, op, c);
    free(displs);
    return rc;
}

int fy_coll_scan(const void *sbuf, void *rbuf, MPI_Count count,
                 struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    int tag = FY_COLL_TAG(seq, 0);
    int err = 0;
    if (sbuf != MPI_IN_PLACE)
        err = fy_coll_copy(sbuf, count, dt, rbuf, count, dt);
    if (count == 0)
        return err;
    /* A chain: rank r receives the prefix of ranks < r, combines it in
     * front of its own value and passes the result on. */
    if (c->rank > 0) {
        void *tmp_base;
        void *tmp = fy_coll_tmp_alloc(count, dt, &tmp_base);
        if (!tmp) {
            err = -ENOMEM;
            /* Drain the predecessor into rbuf to keep the chain moving. */
            fy_coll_recv(rbuf, count, dt, c->rank - 1, tag, c);
        } else {
            int rc = fy_coll_recv(tmp, count, dt, c->rank - 1, tag, c);
            if (rc == 0)
                rc = fy_op_apply(op, tmp, rbuf, count, dt);
            err = fy_coll_keep(err, rc);
            free(tmp_base);
        }
    }
    if (c->rank + 1 < c->size)
        err = fy_coll_keep(err, fy_coll_send(rbuf, count, dt, c->rank + 1,
                                             tag, c));
    return err;
}

int fy_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c)
{
    uint32_t seq = fy_coll_begin(c);
    int tag = FY_COLL_TAG(seq, 0);
    if (count == 0 || c->size == 1)
        return 0;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool last = c->rank + 1 == c->size;
    if (c->rank == 0)
        return fy_coll_send(in, count, dt, 1, tag, c);

    /* Keep our own value aside when rbuf holds it (in place) and it is
     * still needed to extend the prefix for the successor. */
    void *own_base = NULL, *own = NULL;
    int err = 0;
    if (!last) {
        own = fy_coll_tmp_alloc(count, dt, &own_base);
        if (!own)
            err = -ENOMEM;
        else
            err = fy_coll_copy(in, count, dt, own, count, dt);
    }
    /* rbuf = op over ranks [0, rank): exactly our result. */
    err = fy_coll_keep(err, fy_coll_recv(rbuf, count, dt, c->rank - 1, tag,
                                         c));
    if (!last) {
        if (own) {
            /* own = prefix op own, sent on as the next prefix. */
            err = fy_coll_keep(err, fy_op_apply(op, rbuf, own, count, dt));
            err = fy_coll_keep(err, fy_coll_send(own, count, dt,
                                                 c->rank + 1, tag, c));
        } else {
            err = fy_coll_keep(err, fy_coll_send(rbuf, count, dt,
                                                 c->rank + 1, tag, c));
        }
    }
    free(own_base);
    return err;
}
