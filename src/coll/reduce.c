/* SPDX-License-Identifier: MIT */
/* Barrier, broadcast and the reductions (reduce, allreduce,
 * reduce-scatter, scans), as schedules. Trees are binomial; values are
 * combined in the datatype's own layout, so user ops see what they
 * expect. */
#include "coll/coll_int.h"
#include "coll/shm.h"

#include <errno.h>
#include <stdlib.h>

int fy_coll_barrier(struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(c, fy_coll_shm_barrier(c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_ibarrier(c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    /* Empty messages, but from a real address: transports may memcpy
     * zero bytes from it, and memcpy(NULL) is undefined even then. */
    static char dummy;
    /* Dissemination: after round k every rank has (transitively) heard
     * from the 2^(k+1) ranks before it, so after ceil(log2 P) rounds from
     * all of them. */
    int step = 0;
    for (int k = 1; k < c->size; k <<= 1, step++) {
        int to = (c->rank + k) % c->size;
        int from = (c->rank - k + c->size) % c->size;
        fy_sched_recv(s, &dummy, 0, byte, from, FY_SCHED_TAG(s, step));
        fy_sched_send(s, &dummy, 0, byte, to, FY_SCHED_TAG(s, step));
        fy_sched_wait(s);
    }
    return fy_sched_finish(s, nb);
}

void fy_coll_build_bcast(struct fy_sched *s, void *buf, MPI_Count count,
                         struct fy_dtype *dt, int root, int step)
{
    struct fy_comm *c = fy_sched_comm(s);
    int size = c->size;
    int rel = (c->rank - root + size) % size;
    int tag = FY_SCHED_TAG(s, step);
    int mask = 1;
    /* Receive from the parent: the rank that differs in our lowest set
     * bit (relative to the root). */
    while (mask < size) {
        if (rel & mask) {
            fy_sched_recv(s, buf, count, dt, (rel - mask + root) % size, tag);
            fy_sched_wait(s);
            break;
        }
        mask <<= 1;
    }
    /* Forward to children below that bit, largest subtree first; the
     * sends run concurrently. */
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < size)
            fy_sched_send(s, buf, count, dt, (rel + mask + root) % size, tag);
    fy_sched_wait(s);
}

int fy_coll_bcast(void *buf, MPI_Count count, struct fy_dtype *dt, int root,
                  struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(c, fy_coll_shm_bcast(buf, count, dt, root, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_ibcast(buf, count, dt, root, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    if (c->size > 1 && count > 0)
        fy_coll_build_bcast(s, buf, count, dt, root, 0);
    return fy_sched_finish(s, nb);
}

void fy_coll_build_reduce(struct fy_sched *s, const void *in, void *rbuf,
                          MPI_Count count, struct fy_dtype *dt,
                          struct fy_op *op, int root)
{
    struct fy_comm *c = fy_sched_comm(s);
    int size = c->size, rank = c->rank;
    int tag = FY_SCHED_TAG(s, 0);
    /* A commutative op may combine in any order, so the tree hangs from
     * the root itself. Otherwise it hangs from rank 0: the subtree of
     * relative rank r then covers ranks [r, r + 2^k) in order, and
     * combining "ours op child's" keeps the MPI-prescribed rank order. */
    int top = op->commute ? root : 0;
    int lrank = (rank - top + size) % size;
    void *acc = fy_sched_tmp(s, count, dt);
    void *tmp = NULL;
    fy_sched_copy(s, in, count, dt, acc, count, dt);

    for (int mask = 1; mask < size; mask <<= 1) {
        if (lrank & mask) {
            fy_sched_send(s, acc, count, dt, (lrank - mask + top) % size, tag);
            fy_sched_wait(s);
            break;
        }
        if (lrank + mask >= size)
            continue;
        if (!tmp)
            tmp = fy_sched_tmp(s, count, dt);
        fy_sched_recv(s, tmp, count, dt, (lrank + mask + top) % size, tag);
        fy_sched_wait(s);
        /* inout = in op inout: with in = ours (lower ranks) and inout =
         * the child's, the result lands in tmp, which becomes acc. */
        fy_sched_reduce(s, acc, tmp, count, dt, op);
        void *t = acc;
        acc = tmp;
        tmp = t;
    }

    int rtag = FY_SCHED_TAG(s, 1);
    if (rank == top) {
        if (top == root)
            fy_sched_copy(s, acc, count, dt, rbuf, count, dt);
        else
            fy_sched_send(s, acc, count, dt, root, rtag);
    } else if (rank == root) {
        fy_sched_recv(s, rbuf, count, dt, top, rtag);
    }
    fy_sched_wait(s);
}

static int reduce_given(const void *sbuf, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op, int root,
                        struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(
            c, fy_coll_shm_reduce(sbuf, rbuf, count, dt, op, root, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_ireduce(sbuf, rbuf, count, dt, op, root, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0) {
        /* nothing to do */
    } else if (c->size == 1) {
        if (in != rbuf)
            fy_sched_copy(s, in, count, dt, rbuf, count, dt);
    } else {
        fy_coll_build_reduce(s, in, rbuf, count, dt, op, root);
    }
    return fy_sched_finish(s, nb);
}

static int allreduce_given(const void *sbuf, void *rbuf, MPI_Count count,
                           struct fy_dtype *dt, struct fy_op *op,
                           struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(
            c, fy_coll_shm_allreduce(sbuf, rbuf, count, dt, op, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_ireduce(sbuf, rbuf, count, dt, op, -1, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (count == 0) {
        /* nothing to do */
    } else if (c->size == 1) {
        if (in != rbuf)
            fy_sched_copy(s, in, count, dt, rbuf, count, dt);
    } else {
        /* Reduce to 0, then broadcast: every member ends with rank 0's
         * bits, which recursive doubling would not promise for floating
         * point. The reduction takes tag steps 0-1, the broadcast 2. */
        fy_coll_build_reduce(s, in, rbuf, count, dt, op, 0);
        fy_coll_build_bcast(s, rbuf, count, dt, 0, 2);
    }
    return fy_sched_finish(s, nb);
}

/* Reduce 'total' elements to rank 0, then scatter 'blocks' of it. */
static int fy_coll_reduce_scatter_common(const void *sbuf, void *rbuf,
                                         MPI_Count total,
                                         const struct fy_coll_layout *blocks,
                                         MPI_Count mycount, struct fy_dtype *dt,
                                         struct fy_op *op, struct fy_comm *c,
                                         struct fy_sched **nb)
{
    FY_SCHED_BEGIN(s, c, nb);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (c->size == 1) {
        if (in != rbuf)
            fy_sched_copy(s, in, mycount, dt, rbuf, mycount, dt);
    } else if (total > 0) {
        void *tmp = c->rank == 0 ? fy_sched_tmp(s, total, dt) : NULL;
        fy_coll_build_reduce(s, in, tmp, total, dt, op, 0);
        struct fy_coll_layout l = *blocks;
        l.buf = tmp;
        fy_coll_build_scatter(s, &l, rbuf, mycount, dt, 0, 2);
    }
    return fy_sched_finish(s, nb);
}

static int reduce_scatter_block_given(const void *sbuf, void *rbuf,
                                      MPI_Count count, struct fy_dtype *dt,
                                      struct fy_op *op, struct fy_comm *c,
                                      struct fy_sched **nb)
{
    int rc = nb ? fy_coll_shm_ireduce_scatter(sbuf, rbuf, FY_VEC_NONE, count,
                                              dt, op, c, nb)
                : FY_COLL_SHM_ONE(c, fy_coll_shm_reduce_scatter_block(
                                         sbuf, rbuf, count, dt, op, c));
    if (rc != FY_COLL_SHM_NO)
        return rc;
    struct fy_coll_layout l = {.count = count, .dt = dt};
    return fy_coll_reduce_scatter_common(sbuf, rbuf, count * c->size, &l, count,
                                         dt, op, c, nb);
}

static int reduce_scatter_given(const void *sbuf, void *rbuf,
                                struct fy_coll_vec rcounts, struct fy_dtype *dt,
                                struct fy_op *op, struct fy_comm *c,
                                struct fy_sched **nb)
{
    int rc =
        nb ? fy_coll_shm_ireduce_scatter(sbuf, rbuf, rcounts, 0, dt, op, c, nb)
           : FY_COLL_SHM_ONE(
                 c, fy_coll_shm_reduce_scatter(sbuf, rbuf, rcounts, dt, op, c));
    if (rc != FY_COLL_SHM_NO)
        return rc;
    /* Only needed while building: block addresses are fixed then. */
    MPI_Aint *displs = malloc((size_t)c->size * sizeof(*displs));
    if (!displs) {
        /* Keep the sequence numbers in step with the other members even
         * though this one cannot take part. */
        fy_coll_begin(c);
        return -ENOMEM;
    }
    MPI_Count total = 0;
    for (int i = 0; i < c->size; i++) {
        displs[i] = total;
        total += fy_vec_at(rcounts, i);
    }
    struct fy_coll_layout l = {
        .counts = rcounts, .displs = fy_vec_wide(displs), .dt = dt};
    rc = fy_coll_reduce_scatter_common(
        sbuf, rbuf, total, &l, fy_vec_at(rcounts, c->rank), dt, op, c, nb);
    free(displs);
    return rc;
}

static int scan_given(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                      struct fy_sched **nb)
{
    if (!nb) {
        int rc =
            FY_COLL_SHM_ONE(c, fy_coll_shm_scan(sbuf, rbuf, count, dt, op, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_iscan(sbuf, rbuf, count, dt, op, false, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    int tag = FY_SCHED_TAG(s, 0);
    if (sbuf != MPI_IN_PLACE)
        fy_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (count > 0) {
        /* A chain: rank r receives the prefix of ranks < r, combines it
         * in front of its own value and passes the result on. */
        if (c->rank > 0) {
            void *tmp = fy_sched_tmp(s, count, dt);
            fy_sched_recv(s, tmp, count, dt, c->rank - 1, tag);
            fy_sched_wait(s);
            fy_sched_reduce(s, tmp, rbuf, count, dt, op);
        }
        if (c->rank + 1 < c->size)
            fy_sched_send(s, rbuf, count, dt, c->rank + 1, tag);
    }
    return fy_sched_finish(s, nb);
}

static int exscan_given(const void *sbuf, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op,
                        struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb) {
        int rc = FY_COLL_SHM_ONE(
            c, fy_coll_shm_exscan(sbuf, rbuf, count, dt, op, c));
        if (rc != FY_COLL_SHM_NO)
            return rc;
    } else {
        int rc = fy_coll_shm_iscan(sbuf, rbuf, count, dt, op, true, c, nb);
        if (rc != FY_COLL_SHM_NO)
            return rc;
    }
    FY_SCHED_BEGIN(s, c, nb);
    fy_sched_exact(s);
    int tag = FY_SCHED_TAG(s, 0);
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool last = c->rank + 1 == c->size;
    if (count == 0 || c->size == 1) {
        /* rank 0's rbuf is left alone: nothing to do */
    } else if (c->rank == 0) {
        fy_sched_send(s, in, count, dt, 1, tag);
    } else {
        /* Our own value goes aside first when the successor needs it
         * (rbuf may hold it, in place); rbuf then receives the prefix of
         * ranks [0, rank), which is exactly our result. */
        void *own = NULL;
        if (!last) {
            own = fy_sched_tmp(s, count, dt);
            fy_sched_copy(s, in, count, dt, own, count, dt);
        }
        fy_sched_recv(s, rbuf, count, dt, c->rank - 1, tag);
        fy_sched_wait(s);
        if (!last) {
            /* own = prefix op own: the successor's prefix. */
            fy_sched_reduce(s, rbuf, own, count, dt, op);
            fy_sched_send(s, own, count, dt, c->rank + 1, tag);
        }
    }
    return fy_sched_finish(s, nb);
}

/* A predefined op over a derived datatype of one basic type (allowed
 * here; MPI defines the predefined ops on predefined types): members may
 * lay the same signature out differently (one a vector, another plain
 * ints), while the algorithms choose by layout (contiguous or not, the
 * element's size) and so would part ways and wait for each other for
 * ever. Each member reduces the stream of basic elements instead: a
 * contiguous layout where it is, any other packed into a temporary and
 * the result unpacked when the collective ends. */
struct red_norm {
    struct fy_dtype *dt; /* the basic type */
    MPI_Count scale;     /* its elements in one of the user's */
    const void *sbuf;    /* what the algorithm gets */
    void *rbuf;
    void *tin, *tout; /* packed input and output, or NULL */
};

/* False: reduce (nin elements in, nout out) as given. */
static bool red_norm_begin(struct red_norm *n, const void *sbuf, void *rbuf,
                           MPI_Count nin, MPI_Count nout, struct fy_dtype *dt,
                           const struct fy_op *op)
{
    n->dt = op->builtin && !dt->builtin ? fy_dtype_single_basic(dt) : NULL;
    if (!n->dt || dt->size <= 0)
        return false;
    n->scale = dt->size / n->dt->size;
    n->tin = n->tout = NULL;
    if (dt->contig) {
        n->sbuf = sbuf;
        n->rbuf = rbuf;
        return true;
    }
    size_t sz = (size_t)dt->size;
    n->tin = malloc(nin > 0 ? (size_t)nin * sz : 1);
    n->tout = malloc(nout > 0 ? (size_t)nout * sz : 1);
    if (!n->tin || !n->tout)
        fy_fatal(1,
                 "reduction: out of memory packing %lld elements of a "
                 "derived datatype",
                 (long long)(nin > nout ? nin : nout));
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (nin > 0)
        fy_dtype_pack(in, nin, dt, n->tin);
    n->sbuf = n->tin;
    n->rbuf = n->tout;
    return true;
}

/* After the algorithm: the result into rbuf (nout elements, when 'out'),
 * now or when the nonblocking collective ends. */
static int red_norm_end(struct red_norm *n, int rc, void *rbuf, MPI_Count nout,
                        struct fy_dtype *dt, bool out, struct fy_sched **nb)
{
    if (!n->tin)
        return rc;
    MPI_Count bytes = nout * dt->size;
    if (nb && rc == 0) {
        if (out && nout > 0)
            fy_sched_unpack_after(*nb, n->tout, bytes, rbuf, nout, dt);
        fy_sched_adopt(*nb, n->tin);
        fy_sched_adopt(*nb, n->tout);
        return rc;
    }
    if (rc == 0 && out && nout > 0)
        fy_dtype_unpack(n->tout, bytes, rbuf, nout, dt);
    free(n->tin);
    free(n->tout);
    return rc;
}

/* Allreduce, Reduce_scatter_block, Scan and Exscan, which share a
 * signature: 'nin' elements in, 'count' out (into rbuf when 'out'). */
typedef int red_fn(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                   struct fy_sched **nb);

static int red_uniform(red_fn *fn, const void *sbuf, void *rbuf,
                       MPI_Count count, MPI_Count nin, struct fy_dtype *dt,
                       struct fy_op *op, struct fy_comm *c,
                       struct fy_sched **nb, bool out)
{
    struct red_norm n;
    if (!red_norm_begin(&n, sbuf, rbuf, nin, count, dt, op))
        return fn(sbuf, rbuf, count, dt, op, c, nb);
    int rc = fn(n.sbuf, n.rbuf, count * n.scale, n.dt, op, c, nb);
    return red_norm_end(&n, rc, rbuf, count, dt, out, nb);
}

int fy_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, int root,
                   struct fy_comm *c, struct fy_sched **nb)
{
    struct red_norm n;
    bool out = c->rank == root;
    if (!red_norm_begin(&n, sbuf, rbuf, count, out ? count : 0, dt, op))
        return reduce_given(sbuf, rbuf, count, dt, op, root, c, nb);
    int rc =
        reduce_given(n.sbuf, n.rbuf, count * n.scale, n.dt, op, root, c, nb);
    return red_norm_end(&n, rc, rbuf, count, dt, out, nb);
}

int fy_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                      struct fy_sched **nb)
{
    return red_uniform(allreduce_given, sbuf, rbuf, count, count, dt, op, c, nb,
                       true);
}

int fy_coll_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count count,
                                 struct fy_dtype *dt, struct fy_op *op,
                                 struct fy_comm *c, struct fy_sched **nb)
{
    return red_uniform(reduce_scatter_block_given, sbuf, rbuf, count,
                       count * c->size, dt, op, c, nb, true);
}

int fy_coll_reduce_scatter(const void *sbuf, void *rbuf,
                           struct fy_coll_vec rcounts, struct fy_dtype *dt,
                           struct fy_op *op, struct fy_comm *c,
                           struct fy_sched **nb)
{
    MPI_Count total = 0, mine = fy_vec_at(rcounts, c->rank);
    for (int i = 0; i < c->size; i++)
        total += fy_vec_at(rcounts, i);
    struct red_norm n;
    if (!red_norm_begin(&n, sbuf, rbuf, total, mine, dt, op))
        return reduce_scatter_given(sbuf, rbuf, rcounts, dt, op, c, nb);
    /* The counts in basic elements (read while the collective is built). */
    MPI_Aint *scaled = malloc((size_t)c->size * sizeof(*scaled));
    if (!scaled)
        fy_fatal(1, "reduce_scatter: out of memory for %d counts", c->size);
    for (int i = 0; i < c->size; i++)
        scaled[i] = fy_vec_at(rcounts, i) * (MPI_Aint)n.scale;
    int rc = reduce_scatter_given(n.sbuf, n.rbuf, fy_vec_wide(scaled), n.dt, op,
                                  c, nb);
    free(scaled);
    return red_norm_end(&n, rc, rbuf, mine, dt, true, nb);
}

int fy_coll_scan(const void *sbuf, void *rbuf, MPI_Count count,
                 struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                 struct fy_sched **nb)
{
    return red_uniform(scan_given, sbuf, rbuf, count, count, dt, op, c, nb,
                       true);
}

int fy_coll_exscan(const void *sbuf, void *rbuf, MPI_Count count,
                   struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                   struct fy_sched **nb)
{
    /* Rank 0's receive buffer is left alone (MPI leaves it undefined). */
    return red_uniform(exscan_given, sbuf, rbuf, count, count, dt, op, c, nb,
                       c->rank > 0);
}
