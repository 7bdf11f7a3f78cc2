/* SPDX-License-Identifier: MIT */
/* Entry points of the collectives, blocking and nonblocking: argument
 * checks (naming the argument), MPI_IN_PLACE rules, then src/coll; internal
 * errors become MPI error classes here. Each collective has one coll_x()
 * that checks and runs it; request == NULL means blocking, and
 * FY_PCOLL_CHECK_ONLY only checks (the persistent _init calls, at the end
 * of this file, then describe the call to pcoll.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/coll_args.h"
#include "mpi/coll_inter.h"
#include "mpi/mpi_impl.h"
#include "mpi/pcoll.h"
#include "mpi/request.h"
#include "util/objcache.h"

#define CHECK_ROOT(root, c, fn)                                                \
    FY_CHECK((root) >= 0 && (root) < (c)->size, c, MPI_ERR_ROOT, fn,           \
             "root %d is not in [0, %d)", root, (c)->size)

/* NULL with elements to move is an error, unless the datatype is derived:
 * then NULL is MPI_BOTTOM and the type's displacements are addresses. */
#define CHECK_BUF(buf, n, dt, c, fn, what)                                     \
    FY_CHECK((buf) != NULL || (n) == 0 || !(dt)->builtin, c, MPI_ERR_BUFFER,   \
             fn, "%s is NULL but its count is %lld", what, (long long)(n))

#define CHECK_NOT_IN_PLACE(buf, c, fn, what)                                   \
    FY_CHECK((buf) != MPI_IN_PLACE, c, MPI_ERR_BUFFER, fn,                     \
             "MPI_IN_PLACE is not allowed as %s here", what)

#define CHECK_NO_ALIAS(sbuf, rbuf, n, c, fn)                                   \
    FY_CHECK((sbuf) != (rbuf) || (sbuf) == MPI_BOTTOM || (n) == 0, c,          \
             MPI_ERR_BUFFER, fn,                                               \
             "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)")

/* Whether a process's send data lies inside the block of the receive
 * buffer it would be written to: the own-block form of MPI_IN_PLACE
 * written without MPI_IN_PLACE, which the standard forbids (arguments may
 * not be aliased, MPI 4.0 2.5.1). 'rslot' is the start of this rank's
 * block of recvbuf. With contiguous types any overlap of the two byte
 * spans is aliasing; otherwise only a send buffer at the block's address
 * is flagged, as types with holes may legitimately interleave. */
static bool sends_into_own_block(const void *sbuf, MPI_Count scount,
                                 const struct fy_dtype *sdt, const char *rbuf,
                                 MPI_Count rcount, const struct fy_dtype *rdt,
                                 const char *rslot)
{
    /* MPI_BOTTOM: the data's addresses are in its datatype or
     * displacements, not comparable with another buffer's. */
    if (sbuf == MPI_IN_PLACE || sbuf == MPI_BOTTOM || scount == 0 ||
        rcount == 0)
        return false;
    if (sbuf == (const void *)rslot)
        return true;
    if (!sdt->contig || !rdt->contig || sdt->extent <= 0 || rdt->extent <= 0)
        return false;
    const char *s_lo = sbuf;
    const char *s_hi = s_lo + scount * sdt->extent;
    const char *r_hi = rbuf + rcount * rdt->extent;
    return s_lo < r_hi && rbuf < s_hi;
}

#define CHECK_NOT_OWN_BLOCK(sbuf, scount, sdt, rbuf, rcount, rdt, rslot, c,    \
                            fn)                                                \
    FY_CHECK(                                                                  \
        !sends_into_own_block(sbuf, scount, sdt, rbuf, rcount, rdt, rslot), c, \
        MPI_ERR_BUFFER, fn, "sendbuf overlaps recvbuf (use MPI_IN_PLACE)")

#define CHECK_PTR(p, c, fn)                                                    \
    FY_CHECK((p) != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", #p)

/* Whether this process is the root of a rooted collective: its rank on
 * an intracommunicator, MPI_ROOT on an intercommunicator. */
static bool pinit_is_root(const struct fy_comm *c, int root)
{
    return c->inter ? root == MPI_ROOT : c->rank == root;
}

/* Whether this process contributes a block to (gather) or gets one from
 * (scatter) the root: everyone on an intracommunicator, the other group
 * on an intercommunicator (whose root argument is then a rank). */
static bool pinit_is_leaf(const struct fy_comm *c, int root)
{
    return c->inter ? root >= 0 : true;
}

/* Entries of the per-peer arrays: one per member of the remote group on
 * an intercommunicator (p2p_group is the group itself otherwise). */
static int pinit_npeers(const struct fy_comm *c)
{
    return c->p2p_group->size;
}

static int report(struct fy_comm *c, int rc, const char *fn)
    __attribute__((cold, noinline));
static int report(struct fy_comm *c, int rc, const char *fn)
{
    if (rc == -EMSGSIZE)
        return fy_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                          "data larger than its receive buffer (do counts "
                          "and datatypes match on every process?)");
    if (rc == -EBADMSG)
        return fy_mpi_err(c, MPI_ERR_COUNT, fn,
                          "less data than the receive count (counts or "
                          "datatypes differ between processes)");
    return fy_mpi_err(c, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
}

/* A nonblocking collective's MPI request: the schedule behind an "ext"
 * request of the request layer, which advances it from MPI_Test/Wait. */
struct nbc_req {
    struct fy_mreq_ext ext;
    struct fy_sched *s;
};

static void nbc_progress(struct fy_mreq_ext *x)
{
    struct nbc_req *n = (struct nbc_req *)x;
    int err;
    if (fy_sched_test(n->s, &err)) {
        x->err = err;
        x->complete = true;
    }
}

static struct fy_objcache s_nbc_cache = {.size = sizeof(struct nbc_req)};

void fy_mpi_coll_finalize(void)
{
    fy_objcache_drain(&s_nbc_cache);
}

static int nbc_free(struct fy_mreq_ext *x)
{
    struct nbc_req *n = (struct nbc_req *)x;
    fy_sched_free(n->s);
    fy_objcache_put(&s_nbc_cache, n);
    return MPI_SUCCESS;
}

static const struct fy_mreq_ext_ops nbc_ops = {
    .progress = nbc_progress,
    .free = nbc_free,
    .cancel = NULL, /* MPI: collectives cannot be cancelled */
};

/* Finish an entry point: rc is the collective's result; for a
 * nonblocking call (request != NULL) s is the started schedule, named
 * here by a new request. */
static int coll_finish(struct fy_comm *c, int rc, struct fy_sched *s,
                       MPI_Request *request, const char *fn)
{
    if (rc != 0)
        return report(c, rc, fn);
    if (!request)
        return MPI_SUCCESS;
    struct nbc_req *n = fy_objcache_get(&s_nbc_cache);
    if (n) {
        n->ext.ops = &nbc_ops;
        n->ext.comm = c;
        n->ext.st_source = MPI_ANY_SOURCE; /* the empty status */
        n->ext.st_tag = MPI_ANY_TAG;
        n->s = s;
        if (fy_mreq_ext_register(&n->ext, request) == 0)
            return MPI_SUCCESS;
        fy_objcache_put(&s_nbc_cache, n);
    }
    /* The collective is under way and the others count on us: see it
     * through (freeing waits for it), then report. */
    fy_sched_free(s);
    return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
}

int fy_mpi_coll_finish(struct fy_comm *c, int rc, struct fy_sched *s,
                       MPI_Request *request, const char *fn)
{
    return coll_finish(c, rc, s, request, fn);
}

/* In a coll_x() body: the nonblocking output argument of fy_coll_x. */
#define NB(request) ((request) ? &s_ : NULL)
#define RUN_NB(c, fn, request, call)                                           \
    do {                                                                       \
        if ((request) == FY_PCOLL_CHECK_ONLY)                                  \
            return MPI_SUCCESS;                                                \
        struct fy_sched *s_ = NULL;                                            \
        int rc_ = (call);                                                      \
        return coll_finish(c, rc_, s_, request, fn);                           \
    } while (0)

/* Check a counts array of c->size entries. */
static int check_counts(struct fy_coll_vec counts, struct fy_comm *c,
                        const char *fn, const char *what)
{
    FY_CHECK(counts.p != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < c->size; i++)
        FY_CHECK(fy_vec_at(counts, i) >= 0, c, MPI_ERR_COUNT, fn,
                 "%s[%d] = %lld is negative", what, i,
                 (long long)fy_vec_at(counts, i));
    return MPI_SUCCESS;
}

/* A displacement array is there (its values may be anything). */
#define CHECK_VEC(v, c, fn)                                                    \
    FY_CHECK((v).p != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", #v)

/* Sum of a (checked) count array: zero means no data moves. */
static MPI_Count vec_total(struct fy_coll_vec counts, const struct fy_comm *c)
{
    MPI_Count total = 0;
    for (int i = 0; i < c->p2p_group->size; i++)
        total += fy_vec_at(counts, i);
    return total;
}

#define CHECK_COUNTS(counts, c, fn, what)                                      \
    do {                                                                       \
        int rc_ = check_counts(counts, c, fn, what);                           \
        if (rc_ != MPI_SUCCESS)                                                \
            return rc_;                                                        \
    } while (0)

static int coll_barrier(MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_barrier(c, request, fn);
    RUN_NB(c, fn, request, fy_coll_barrier(c, NB(request)));
}

FY_API int PMPI_Barrier(MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_barrier(comm, NULL, __func__);
}
FY_ALIAS(MPI_Barrier)

FY_API int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_barrier(comm, request, __func__);
}
FY_ALIAS(MPI_Ibarrier)

static int coll_bcast(void *buffer, MPI_Count count, MPI_Datatype datatype,
                      int root, MPI_Comm comm, MPI_Request *request,
                      const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_bcast(c, buffer, count, datatype, root, request,
                                  fn);
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    CHECK_ROOT(root, c, fn);
    CHECK_BUF(buffer, count, dt, c, fn, "buffer");
    CHECK_NOT_IN_PLACE(buffer, c, fn, "buffer");
    RUN_NB(c, fn, request,
           fy_coll_bcast(buffer, count, dt, root, c, NB(request)));
}

FY_API int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                      MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_bcast(buffer, count, datatype, root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Bcast)

FY_API int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype,
                        int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_bcast(buffer, count, datatype, root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Bcast_c)

FY_API int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
                       MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_bcast(buffer, count, datatype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Ibcast)

FY_API int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype,
                         int root, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_bcast(buffer, count, datatype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Ibcast_c)

static int coll_reduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_reduce(c, sendbuf, recvbuf, count, datatype, op,
                                   root, request, fn);
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_ROOT(root, c, fn);
    if (c->rank == root) {
        CHECK_BUF(recvbuf, count, dt, c, fn, "recvbuf");
        CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, fn);
    } else {
        CHECK_NOT_IN_PLACE(sendbuf, c, fn,
                           "sendbuf (only the root may pass it)");
    }
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, fn, "sendbuf");
    RUN_NB(
        c, fn, request,
        fy_coll_reduce(sendbuf, recvbuf, count, dt, o, root, c, NB(request)));
}

FY_API int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL,
                       __func__);
}
FY_ALIAS(MPI_Reduce)

FY_API int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, int root,
                         MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL,
                       __func__);
}
FY_ALIAS(MPI_Reduce_c)

FY_API int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, int root,
                        MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm,
                       request, __func__);
}
FY_ALIAS(MPI_Ireduce)

FY_API int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, int root,
                          MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm,
                       request, __func__);
}
FY_ALIAS(MPI_Ireduce_c)

static int coll_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_allreduce(c, sendbuf, recvbuf, count, datatype, op,
                                      request, fn);
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_BUF(recvbuf, count, dt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, fn);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, fn, "sendbuf");
    RUN_NB(c, fn, request,
           fy_coll_allreduce(sendbuf, recvbuf, count, dt, o, c, NB(request)));
}

FY_API int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                          __func__);
}
FY_ALIAS(MPI_Allreduce)

FY_API int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                          __func__);
}
FY_ALIAS(MPI_Allreduce_c)

FY_API int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                           MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, request,
                          __func__);
}
FY_ALIAS(MPI_Iallreduce)

FY_API int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf,
                             MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, request,
                          __func__);
}
FY_ALIAS(MPI_Iallreduce_c)

/* MPI_Reduce_local and its large-count form. */
static int reduce_local(const char *fn, const void *inbuf, void *inoutbuf,
                        MPI_Count count, MPI_Datatype datatype, MPI_Op op)
{
    FY_CHECK_INIT(fn);
    CHECK_COUNT(count, NULL, fn, "count");
    GET_DT(dt, datatype, NULL, fn, "datatype");
    GET_OP(o, op, dt, NULL, fn);
    CHECK_BUF(inbuf, count, dt, NULL, fn, "inbuf");
    CHECK_BUF(inoutbuf, count, dt, NULL, fn, "inoutbuf");
    /* MPI_Reduce_local has no in-place form (MPI 4.0 6.9.7), and its
     * inoutbuf is an output that may not alias inbuf. */
    CHECK_NOT_IN_PLACE(inbuf, NULL, fn, "inbuf");
    CHECK_NOT_IN_PLACE(inoutbuf, NULL, fn, "inoutbuf");
    CHECK_NO_ALIAS(inbuf, inoutbuf, count, NULL, fn);
    if (count == 0)
        return MPI_SUCCESS;
    int rc = fy_op_apply(o, inbuf, inoutbuf, count, dt);
    if (rc != 0)
        return fy_mpi_err(NULL, MPI_ERR_OP, fn,
                          "op 0x%x cannot be applied to datatype 0x%x",
                          (unsigned)op, (unsigned)datatype);
    return MPI_SUCCESS;
}

FY_API int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
                             MPI_Datatype datatype, MPI_Op op)
{
    FY_MT_ENTER();
    return reduce_local(__func__, inbuf, inoutbuf, count, datatype, op);
}
FY_ALIAS(MPI_Reduce_local)

FY_API int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf,
                               MPI_Count count, MPI_Datatype datatype,
                               MPI_Op op)
{
    FY_MT_ENTER();
    return reduce_local(__func__, inbuf, inoutbuf, count, datatype, op);
}
FY_ALIAS(MPI_Reduce_local_c)

static int coll_reduce_scatter_block(const void *sendbuf, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_reduce_scatter(c, sendbuf, recvbuf, recvcount,
                                           FY_VEC_NONE, datatype, op, request,
                                           fn);
    CHECK_COUNT(recvcount, c, fn, "recvcount");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_BUF(recvbuf, recvcount, dt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, fn);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, recvcount, dt, c, fn, "sendbuf");
    RUN_NB(c, fn, request,
           fy_coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, o, c,
                                        NB(request)));
}

FY_API int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                                     int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op,
                                     comm, NULL, __func__);
}
FY_ALIAS(MPI_Reduce_scatter_block)

FY_API int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                       MPI_Count recvcount,
                                       MPI_Datatype datatype, MPI_Op op,
                                       MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op,
                                     comm, NULL, __func__);
}
FY_ALIAS(MPI_Reduce_scatter_block_c)

FY_API int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
                                      int recvcount, MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm,
                                      MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op,
                                     comm, request, __func__);
}
FY_ALIAS(MPI_Ireduce_scatter_block)

FY_API int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf,
                                        MPI_Count recvcount,
                                        MPI_Datatype datatype, MPI_Op op,
                                        MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op,
                                     comm, request, __func__);
}
FY_ALIAS(MPI_Ireduce_scatter_block_c)

static int coll_reduce_scatter(const void *sendbuf, void *recvbuf,
                               struct fy_coll_vec recvcounts,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_reduce_scatter(c, sendbuf, recvbuf, 0, recvcounts,
                                           datatype, op, request, fn);
    CHECK_COUNTS(recvcounts, c, fn, "recvcounts");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    MPI_Count total = 0;
    for (int i = 0; i < c->size; i++)
        total += fy_vec_at(recvcounts, i);
    MPI_Count mine = fy_vec_at(recvcounts, c->rank);
    CHECK_BUF(recvbuf, mine, dt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, total, c, fn);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, total, dt, c, fn, "sendbuf");
    RUN_NB(c, fn, request,
           fy_coll_reduce_scatter(sendbuf, recvbuf, recvcounts, dt, o, c,
                                  NB(request)));
}

FY_API int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                               const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_reduce_scatter(sendbuf, recvbuf, fy_vec_int(recvcounts),
                               datatype, op, comm, NULL, __func__);
}
FY_ALIAS(MPI_Reduce_scatter)

FY_API int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf,
                                 const MPI_Count recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_reduce_scatter(sendbuf, recvbuf, fy_vec_wide(recvcounts),
                               datatype, op, comm, NULL, __func__);
}
FY_ALIAS(MPI_Reduce_scatter_c)

FY_API int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
                                const int recvcounts[], MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_reduce_scatter(sendbuf, recvbuf, fy_vec_int(recvcounts),
                               datatype, op, comm, request, __func__);
}
FY_ALIAS(MPI_Ireduce_scatter)

FY_API int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf,
                                  const MPI_Count recvcounts[],
                                  MPI_Datatype datatype, MPI_Op op,
                                  MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_reduce_scatter(sendbuf, recvbuf, fy_vec_wide(recvcounts),
                               datatype, op, comm, request, __func__);
}
FY_ALIAS(MPI_Ireduce_scatter_c)

static int coll_scan(const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    /* MPI 4.0 6.11: not defined on intercommunicators. */
    FY_CHECK_INTRA(c, fn);
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_BUF(recvbuf, count, dt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, fn);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, fn, "sendbuf");
    RUN_NB(c, fn, request,
           fy_coll_scan(sendbuf, recvbuf, count, dt, o, c, NB(request)));
}

FY_API int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_scan(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                     __func__);
}
FY_ALIAS(MPI_Scan)

FY_API int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_scan(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                     __func__);
}
FY_ALIAS(MPI_Scan_c)

FY_API int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_scan(sendbuf, recvbuf, count, datatype, op, comm, request,
                     __func__);
}
FY_ALIAS(MPI_Iscan)

FY_API int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_scan(sendbuf, recvbuf, count, datatype, op, comm, request,
                     __func__);
}
FY_ALIAS(MPI_Iscan_c)

static int coll_exscan(const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                       MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    /* MPI 4.0 6.11: not defined on intercommunicators. */
    FY_CHECK_INTRA(c, fn);
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_BUF(recvbuf, count, dt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, fn);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, fn, "sendbuf");
    RUN_NB(c, fn, request,
           fy_coll_exscan(sendbuf, recvbuf, count, dt, o, c, NB(request)));
}

FY_API int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_exscan(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                       __func__);
}
FY_ALIAS(MPI_Exscan)

FY_API int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_exscan(sendbuf, recvbuf, count, datatype, op, comm, NULL,
                       __func__);
}
FY_ALIAS(MPI_Exscan_c)

FY_API int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_exscan(sendbuf, recvbuf, count, datatype, op, comm, request,
                       __func__);
}
FY_ALIAS(MPI_Iexscan)

FY_API int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_exscan(sendbuf, recvbuf, count, datatype, op, comm, request,
                       __func__);
}
FY_ALIAS(MPI_Iexscan_c)

/* ---- gather / scatter ------------------------------------------------ */

static int coll_gather(const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_gather(c, sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, FY_VEC_NONE, FY_VEC_NONE,
                                   recvtype, root, request, fn);
    CHECK_ROOT(root, c, fn);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = pinit_is_root(c, root);
    if (sendbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(sendbuf, c, fn,
                           "sendbuf (only the root may pass it)");
        CHECK_COUNT(sendcount, c, fn, "sendcount");
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, fn, "sendbuf");
        sdt = s;
    }
    if (is_root) {
        CHECK_COUNT(recvcount, c, fn, "recvcount");
        GET_DT(r, recvtype, c, fn, "recvtype");
        CHECK_BUF(recvbuf, recvcount, r, c, fn, "recvbuf");
        CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, fn);
        CHECK_NOT_OWN_BLOCK(
            sendbuf, sendcount, sdt, recvbuf, recvcount * c->size, r,
            (char *)recvbuf + root * recvcount * r->extent, c, fn);
        rdt = r;
    }
    RUN_NB(c, fn, request,
           fy_coll_gather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                          root, c, NB(request)));
}

FY_API int PMPI_Gather(const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Gather)

FY_API int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Gather_c)

FY_API int PMPI_Igather(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Igather)

FY_API int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Igather_c)

static int coll_gatherv(const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        struct fy_coll_vec recvcounts,
                        struct fy_coll_vec displs, MPI_Datatype recvtype,
                        int root, MPI_Comm comm, MPI_Request *request,
                        const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_gather(c, sendbuf, sendcount, sendtype, recvbuf, 0,
                                   recvcounts, displs, recvtype, root, request,
                                   fn);
    CHECK_ROOT(root, c, fn);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = pinit_is_root(c, root);
    if (sendbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(sendbuf, c, fn,
                           "sendbuf (only the root may pass it)");
        CHECK_COUNT(sendcount, c, fn, "sendcount");
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, fn, "sendbuf");
        sdt = s;
    }
    if (is_root) {
        CHECK_COUNTS(recvcounts, c, fn, "recvcounts");
        CHECK_VEC(displs, c, fn);
        GET_DT(r, recvtype, c, fn, "recvtype");
        CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, vec_total(recvcounts, c), c, fn);
        char *slot = (char *)recvbuf + fy_vec_at(displs, root) * r->extent;
        CHECK_NOT_OWN_BLOCK(sendbuf, sendcount, sdt, slot,
                            fy_vec_at(recvcounts, root), r, slot, c, fn);
        rdt = r;
    }
    RUN_NB(c, fn, request,
           fy_coll_gatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs,
                           rdt, root, c, NB(request)));
}

FY_API int PMPI_Gatherv(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
                        fy_vec_int(recvcounts), fy_vec_int(displs), recvtype,
                        root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Gatherv)

FY_API int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint displs[],
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
                        fy_vec_wide(recvcounts), fy_vec_wide(displs), recvtype,
                        root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Gatherv_c)

FY_API int PMPI_Igatherv(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
                        fy_vec_int(recvcounts), fy_vec_int(displs), recvtype,
                        root, comm, request, __func__);
}
FY_ALIAS(MPI_Igatherv)

FY_API int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           const MPI_Count recvcounts[],
                           const MPI_Aint displs[], MPI_Datatype recvtype,
                           int root, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
                        fy_vec_wide(recvcounts), fy_vec_wide(displs), recvtype,
                        root, comm, request, __func__);
}
FY_ALIAS(MPI_Igatherv_c)

static int coll_scatter(const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_scatter(c, sendbuf, sendcount, FY_VEC_NONE,
                                    FY_VEC_NONE, sendtype, recvbuf, recvcount,
                                    recvtype, root, request, fn);
    CHECK_ROOT(root, c, fn);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = pinit_is_root(c, root);
    if (is_root) {
        CHECK_COUNT(sendcount, c, fn, "sendcount");
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, fn, "sendbuf");
        CHECK_NOT_IN_PLACE(sendbuf, c, fn, "sendbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, sendcount, c, fn);
        sdt = s;
    }
    if (recvbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(recvbuf, c, fn,
                           "recvbuf (only the root may pass it)");
        CHECK_COUNT(recvcount, c, fn, "recvcount");
        GET_DT(r, recvtype, c, fn, "recvtype");
        CHECK_BUF(recvbuf, recvcount, r, c, fn, "recvbuf");
        if (is_root)
            CHECK_NOT_OWN_BLOCK(
                recvbuf, recvcount, r, sendbuf, sendcount * c->size, sdt,
                (char *)sendbuf + root * sendcount * sdt->extent, c, fn);
        rdt = r;
    }
    RUN_NB(c, fn, request,
           fy_coll_scatter(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                           root, c, NB(request)));
}

FY_API int PMPI_Scatter(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Scatter)

FY_API int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, NULL, __func__);
}
FY_ALIAS(MPI_Scatter_c)

FY_API int PMPI_Iscatter(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Iscatter)

FY_API int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Iscatter_c)

static int coll_scatterv(const void *sendbuf, struct fy_coll_vec sendcounts,
                         struct fy_coll_vec displs, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_scatter(c, sendbuf, 0, sendcounts, displs, sendtype,
                                    recvbuf, recvcount, recvtype, root, request,
                                    fn);
    CHECK_ROOT(root, c, fn);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = pinit_is_root(c, root);
    if (is_root) {
        CHECK_COUNTS(sendcounts, c, fn, "sendcounts");
        CHECK_VEC(displs, c, fn);
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_NOT_IN_PLACE(sendbuf, c, fn, "sendbuf");
        sdt = s;
    }
    if (recvbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(recvbuf, c, fn,
                           "recvbuf (only the root may pass it)");
        CHECK_COUNT(recvcount, c, fn, "recvcount");
        GET_DT(r, recvtype, c, fn, "recvtype");
        CHECK_BUF(recvbuf, recvcount, r, c, fn, "recvbuf");
        if (is_root) {
            CHECK_NO_ALIAS(sendbuf, recvbuf, vec_total(sendcounts, c), c, fn);
            char *slot =
                (char *)sendbuf + fy_vec_at(displs, root) * sdt->extent;
            CHECK_NOT_OWN_BLOCK(recvbuf, recvcount, r, slot,
                                fy_vec_at(sendcounts, root), sdt, slot, c, fn);
        }
        rdt = r;
    }
    RUN_NB(c, fn, request,
           fy_coll_scatterv(sendbuf, sendcounts, displs, sdt, recvbuf,
                            recvcount, rdt, root, c, NB(request)));
}

FY_API int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
                         const int displs[], MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_scatterv(sendbuf, fy_vec_int(sendcounts), fy_vec_int(displs),
                         sendtype, recvbuf, recvcount, recvtype, root, comm,
                         NULL, __func__);
}
FY_ALIAS(MPI_Scatterv)

FY_API int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                           const MPI_Aint displs[], MPI_Datatype sendtype,
                           void *recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_scatterv(sendbuf, fy_vec_wide(sendcounts), fy_vec_wide(displs),
                         sendtype, recvbuf, recvcount, recvtype, root, comm,
                         NULL, __func__);
}
FY_ALIAS(MPI_Scatterv_c)

FY_API int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[],
                          const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          int root, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_scatterv(sendbuf, fy_vec_int(sendcounts), fy_vec_int(displs),
                         sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request, __func__);
}
FY_ALIAS(MPI_Iscatterv)

FY_API int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint displs[], MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_scatterv(sendbuf, fy_vec_wide(sendcounts), fy_vec_wide(displs),
                         sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request, __func__);
}
FY_ALIAS(MPI_Iscatterv_c)

/* ---- allgather / alltoall -------------------------------------------- */

static int coll_allgather(const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_allgather(c, sendbuf, sendcount, sendtype, recvbuf,
                                      recvcount, FY_VEC_NONE, FY_VEC_NONE,
                                      recvtype, request, fn);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNT(sendcount, c, fn, "sendcount");
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, fn, "sendbuf");
        sdt = s;
    }
    CHECK_COUNT(recvcount, c, fn, "recvcount");
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    CHECK_BUF(recvbuf, recvcount, rdt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, fn);
    CHECK_NOT_OWN_BLOCK(
        sendbuf, sendcount, sdt, recvbuf, recvcount * c->size, rdt,
        (char *)recvbuf + c->rank * recvcount * rdt->extent, c, fn);
    RUN_NB(c, fn, request,
           fy_coll_allgather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                             c, NB(request)));
}

FY_API int PMPI_Allgather(const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Allgather)

FY_API int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Allgather_c)

FY_API int PMPI_Iallgather(const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Iallgather)

FY_API int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Iallgather_c)

static int coll_allgatherv(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           struct fy_coll_vec recvcounts,
                           struct fy_coll_vec displs, MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_allgather(c, sendbuf, sendcount, sendtype, recvbuf,
                                      0, recvcounts, displs, recvtype, request,
                                      fn);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNT(sendcount, c, fn, "sendcount");
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, fn, "sendbuf");
        sdt = s;
    }
    CHECK_COUNTS(recvcounts, c, fn, "recvcounts");
    CHECK_VEC(displs, c, fn);
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    MPI_Count mine = fy_vec_at(recvcounts, c->rank);
    CHECK_NOT_OWN_BLOCK(
        sendbuf, sendcount, sdt,
        (char *)recvbuf + fy_vec_at(displs, c->rank) * rdt->extent, mine, rdt,
        (char *)recvbuf + fy_vec_at(displs, c->rank) * rdt->extent, c, fn);
    RUN_NB(c, fn, request,
           fy_coll_allgatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts,
                              displs, rdt, c, NB(request)));
}

FY_API int PMPI_Allgatherv(const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[],
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                           fy_vec_int(recvcounts), fy_vec_int(displs), recvtype,
                           comm, NULL, __func__);
}
FY_ALIAS(MPI_Allgatherv)

FY_API int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[],
                             const MPI_Aint displs[], MPI_Datatype recvtype,
                             MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                           fy_vec_wide(recvcounts), fy_vec_wide(displs),
                           recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Allgatherv_c)

FY_API int PMPI_Iallgatherv(const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                           fy_vec_int(recvcounts), fy_vec_int(displs), recvtype,
                           comm, request, __func__);
}
FY_ALIAS(MPI_Iallgatherv)

FY_API int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[],
                              const MPI_Aint displs[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                           fy_vec_wide(recvcounts), fy_vec_wide(displs),
                           recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Iallgatherv_c)

static int coll_alltoall(const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_alltoall(c, sendbuf, sendcount, FY_VEC_NONE,
                                     FY_VEC_NONE, sendtype, NULL, recvbuf,
                                     recvcount, FY_VEC_NONE, FY_VEC_NONE,
                                     recvtype, NULL, request, fn);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNT(sendcount, c, fn, "sendcount");
        GET_DT(s, sendtype, c, fn, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, fn, "sendbuf");
        sdt = s;
    }
    CHECK_COUNT(recvcount, c, fn, "recvcount");
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    CHECK_BUF(recvbuf, recvcount, rdt, c, fn, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, fn);
    RUN_NB(c, fn, request,
           fy_coll_alltoall(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c,
                            NB(request)));
}

FY_API int PMPI_Alltoall(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Alltoall)

FY_API int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Alltoall_c)

FY_API int PMPI_Ialltoall(const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Ialltoall)

FY_API int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Ialltoall_c)

static int coll_alltoallv(const void *sendbuf, struct fy_coll_vec sendcounts,
                          struct fy_coll_vec sdispls, MPI_Datatype sendtype,
                          void *recvbuf, struct fy_coll_vec recvcounts,
                          struct fy_coll_vec rdispls, MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_alltoall(c, sendbuf, 0, sendcounts, sdispls,
                                     sendtype, NULL, recvbuf, 0, recvcounts,
                                     rdispls, recvtype, NULL, request, fn);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNTS(sendcounts, c, fn, "sendcounts");
        CHECK_VEC(sdispls, c, fn);
        GET_DT(s, sendtype, c, fn, "sendtype");
        sdt = s;
    }
    CHECK_COUNTS(recvcounts, c, fn, "recvcounts");
    CHECK_VEC(rdispls, c, fn);
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, vec_total(recvcounts, c), c, fn);
    RUN_NB(c, fn, request,
           fy_coll_alltoallv(sendbuf, sendcounts, sdispls, sdt, recvbuf,
                             recvcounts, rdispls, rdt, c, NB(request)));
}

FY_API int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                          const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[],
                          const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_alltoallv(sendbuf, fy_vec_int(sendcounts), fy_vec_int(sdispls),
                          sendtype, recvbuf, fy_vec_int(recvcounts),
                          fy_vec_int(rdispls), recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Alltoallv)

FY_API int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_alltoallv(sendbuf, fy_vec_wide(sendcounts),
                          fy_vec_wide(sdispls), sendtype, recvbuf,
                          fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                          recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Alltoallv_c)

FY_API int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_alltoallv(sendbuf, fy_vec_int(sendcounts), fy_vec_int(sdispls),
                          sendtype, recvbuf, fy_vec_int(recvcounts),
                          fy_vec_int(rdispls), recvtype, comm, request,
                          __func__);
}
FY_ALIAS(MPI_Ialltoallv)

FY_API int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype,
                             void *recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_alltoallv(sendbuf, fy_vec_wide(sendcounts),
                          fy_vec_wide(sdispls), sendtype, recvbuf,
                          fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                          recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Ialltoallv_c)

/* Resolve an alltoallw type array; entries with a zero count may be any
 * handle (even MPI_DATATYPE_NULL) and are replaced by MPI_BYTE. */
static int get_types(const MPI_Datatype *types, struct fy_coll_vec counts,
                     struct fy_comm *c, const char *fn, const char *what,
                     struct fy_dtype **out)
{
    FY_CHECK(types != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    for (int i = 0; i < c->size; i++) {
        struct fy_dtype *dt = fy_dtype_get(types[i]);
        if (fy_vec_at(counts, i) == 0 && (!dt || !dt->committed)) {
            out[i] = byte;
            continue;
        }
        FY_CHECK(dt != NULL, c, MPI_ERR_TYPE, fn, "invalid %s[%d] 0x%x", what,
                 i, (unsigned)types[i]);
        FY_CHECK(dt->committed, c, MPI_ERR_TYPE, fn,
                 "%s[%d] 0x%x is not committed", what, i, (unsigned)types[i]);
        out[i] = dt;
    }
    return MPI_SUCCESS;
}

static int coll_alltoallw(const void *sendbuf, struct fy_coll_vec sendcounts,
                          struct fy_coll_vec sdispls,
                          const MPI_Datatype sendtypes[], void *recvbuf,
                          struct fy_coll_vec recvcounts,
                          struct fy_coll_vec rdispls,
                          const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request *request, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    if (FY_UNLIKELY(c->inter))
        return fy_mpi_inter_alltoall(c, sendbuf, 0, sendcounts, sdispls,
                                     MPI_DATATYPE_NULL, sendtypes, recvbuf, 0,
                                     recvcounts, rdispls, MPI_DATATYPE_NULL,
                                     recvtypes, request, fn);
    CHECK_COUNTS(recvcounts, c, fn, "recvcounts");
    CHECK_VEC(rdispls, c, fn);
    CHECK_NOT_IN_PLACE(recvbuf, c, fn, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, vec_total(recvcounts, c), c, fn);
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNTS(sendcounts, c, fn, "sendcounts");
        CHECK_VEC(sdispls, c, fn);
    }
    struct fy_dtype **dts = malloc(2 * (size_t)c->size * sizeof(*dts));
    if (!dts)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    struct fy_dtype **sdts = dts, **rdts = dts + c->size;
    int rc = get_types(recvtypes, recvcounts, c, fn, "recvtypes", rdts);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = get_types(sendtypes, sendcounts, c, fn, "sendtypes", sdts);
    if (rc == MPI_SUCCESS && request != FY_PCOLL_CHECK_ONLY) {
        struct fy_sched *s_ = NULL;
        int err = fy_coll_alltoallw(sendbuf, sendcounts, sdispls, sdts, recvbuf,
                                    recvcounts, rdispls, rdts, c,
                                    request ? &s_ : NULL);
        rc = coll_finish(c, err, s_, request, fn);
    }
    free(dts);
    return rc;
}

FY_API int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                          const int sdispls[], const MPI_Datatype sendtypes[],
                          void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[],
                          MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_alltoallw(sendbuf, fy_vec_int(sendcounts), fy_vec_int(sdispls),
                          sendtypes, recvbuf, fy_vec_int(recvcounts),
                          fy_vec_int(rdispls), recvtypes, comm, NULL, __func__);
}
FY_ALIAS(MPI_Alltoallw)

FY_API int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf,
                            const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FY_MT_ENTER();
    return coll_alltoallw(sendbuf, fy_vec_wide(sendcounts),
                          fy_vec_wide(sdispls), sendtypes, recvbuf,
                          fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                          recvtypes, comm, NULL, __func__);
}
FY_ALIAS(MPI_Alltoallw_c)

FY_API int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[],
                           const int sdispls[], const MPI_Datatype sendtypes[],
                           void *recvbuf, const int recvcounts[],
                           const int rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_alltoallw(sendbuf, fy_vec_int(sendcounts), fy_vec_int(sdispls),
                          sendtypes, recvbuf, fy_vec_int(recvcounts),
                          fy_vec_int(rdispls), recvtypes, comm, request,
                          __func__);
}
FY_ALIAS(MPI_Ialltoallw)

FY_API int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf,
                             const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, fy_comm_get(comm), MPI_ERR_ARG, __func__,
             "request is NULL");
    return coll_alltoallw(sendbuf, fy_vec_wide(sendcounts),
                          fy_vec_wide(sdispls), sendtypes, recvbuf,
                          fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                          recvtypes, comm, request, __func__);
}
FY_ALIAS(MPI_Ialltoallw_c)

/* ---- persistent collectives (MPI 4.0 6.13) ---------------------------- */

/* An _init call's checks: the request pointer, then every check of the
 * collective itself, by its coll_x() in check-only mode. The info
 * argument carries hints only; none is interpreted. */
#define PINIT_REQ(request, comm, fn)                                           \
    FY_CHECK_INIT(fn);                                                         \
    FY_CHECK((request) != NULL, fy_comm_get(comm), MPI_ERR_ARG, fn,            \
             "request is NULL")
#define PINIT_CHECK(request, comm, fn, check)                                  \
    PINIT_REQ(request, comm, fn);                                              \
    do {                                                                       \
        int rc_ = (check);                                                     \
        if (rc_ != MPI_SUCCESS)                                                \
            return rc_;                                                        \
    } while (0)

FY_API int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_barrier(comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_pcoll_args a = {.kind = FY_PCOLL_BARRIER};
    return fy_pcoll_create(fy_comm_get(comm), &a, request, __func__);
}
FY_ALIAS(MPI_Barrier_init)

static int bcast_init(void *buffer, MPI_Count count, MPI_Datatype datatype,
                      int root, MPI_Comm comm, MPI_Request *request,
                      const char *fn)
{
    PINIT_CHECK(request, comm, fn,
                coll_bcast(buffer, count, datatype, root, comm,
                           FY_PCOLL_CHECK_ONLY, fn));
    struct fy_pcoll_args a = {.kind = FY_PCOLL_BCAST,
                              .rbuf = buffer,
                              .rcount = count,
                              .rtype = datatype,
                              .root = root};
    return fy_pcoll_create(fy_comm_get(comm), &a, request, fn);
}

FY_API int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype,
                           int root, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    return bcast_init(buffer, count, datatype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Bcast_init)

FY_API int PMPI_Bcast_init_c(void *buffer, MPI_Count count,
                             MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    return bcast_init(buffer, count, datatype, root, comm, request, __func__);
}
FY_ALIAS(MPI_Bcast_init_c)

/* Reduce, allreduce, reduce_scatter_block, scan, exscan: one shape. The
 * root is ignored by all but reduce. */
static int reduction_init(enum fy_pcoll_kind kind, const void *sendbuf,
                          void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Op op, int root, MPI_Comm comm,
                          MPI_Request *request, const char *fn)
{
    PINIT_REQ(request, comm, fn);
    MPI_Request *chk = FY_PCOLL_CHECK_ONLY;
    int rc;
    switch (kind) {
    case FY_PCOLL_REDUCE:
        rc = coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, chk,
                         fn);
        break;
    case FY_PCOLL_ALLREDUCE:
        rc = coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, chk,
                            fn);
        break;
    case FY_PCOLL_REDUCE_SCATTER_BLOCK:
        rc = coll_reduce_scatter_block(sendbuf, recvbuf, count, datatype, op,
                                       comm, chk, fn);
        break;
    case FY_PCOLL_SCAN:
        rc = coll_scan(sendbuf, recvbuf, count, datatype, op, comm, chk, fn);
        break;
    default:
        rc = coll_exscan(sendbuf, recvbuf, count, datatype, op, comm, chk, fn);
        break;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_pcoll_args a = {.kind = kind,
                              .sbuf = sendbuf,
                              .rbuf = recvbuf,
                              .rcount = count,
                              .rtype = datatype,
                              .op = op,
                              .root = root};
    return fy_pcoll_create(fy_comm_get(comm), &a, request, fn);
}

FY_API int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    return reduction_init(FY_PCOLL_REDUCE, sendbuf, recvbuf, count, datatype,
                          op, root, comm, request, __func__);
}
FY_ALIAS(MPI_Reduce_init)

FY_API int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf,
                              MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    return reduction_init(FY_PCOLL_REDUCE, sendbuf, recvbuf, count, datatype,
                          op, root, comm, request, __func__);
}
FY_ALIAS(MPI_Reduce_init_c)

/* The entry points of the rootless reductions, int and large count. */
#define REDUCTION_INIT(name, kind, count_t)                                    \
    FY_API int PMPI_##name(const void *sendbuf, void *recvbuf, count_t count,  \
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,    \
                           MPI_Info info, MPI_Request *request)                \
    {                                                                          \
        FY_MT_ENTER();                                                         \
        (void)info;                                                            \
        return reduction_init(kind, sendbuf, recvbuf, count, datatype, op, 0,  \
                              comm, request, __func__);                        \
    }                                                                          \
    FY_ALIAS(MPI_##name)

REDUCTION_INIT(Allreduce_init, FY_PCOLL_ALLREDUCE, int)
REDUCTION_INIT(Allreduce_init_c, FY_PCOLL_ALLREDUCE, MPI_Count)
REDUCTION_INIT(Reduce_scatter_block_init, FY_PCOLL_REDUCE_SCATTER_BLOCK, int)
REDUCTION_INIT(Reduce_scatter_block_init_c, FY_PCOLL_REDUCE_SCATTER_BLOCK,
               MPI_Count)
REDUCTION_INIT(Scan_init, FY_PCOLL_SCAN, int)
REDUCTION_INIT(Scan_init_c, FY_PCOLL_SCAN, MPI_Count)
REDUCTION_INIT(Exscan_init, FY_PCOLL_EXSCAN, int)
REDUCTION_INIT(Exscan_init_c, FY_PCOLL_EXSCAN, MPI_Count)

FY_API int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf,
                                    const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_reduce_scatter(sendbuf, recvbuf, fy_vec_int(recvcounts),
                                    datatype, op, comm, FY_PCOLL_CHECK_ONLY,
                                    __func__));
    struct fy_comm *c = fy_comm_get(comm);
    struct fy_pcoll_args a = {.kind = FY_PCOLL_REDUCE_SCATTER,
                              .sbuf = sendbuf,
                              .rbuf = recvbuf,
                              .rtype = datatype,
                              .op = op,
                              .nr = c->size,
                              .rcounts = fy_vec_int(recvcounts)};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Reduce_scatter_init)

FY_API int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf,
                                      const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op,
                                      MPI_Comm comm, MPI_Info info,
                                      MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_reduce_scatter(sendbuf, recvbuf, fy_vec_wide(recvcounts),
                                    datatype, op, comm, FY_PCOLL_CHECK_ONLY,
                                    __func__));
    struct fy_comm *c = fy_comm_get(comm);
    struct fy_pcoll_args a = {.kind = FY_PCOLL_REDUCE_SCATTER,
                              .sbuf = sendbuf,
                              .rbuf = recvbuf,
                              .rtype = datatype,
                              .op = op,
                              .nr = c->size,
                              .rcounts = fy_vec_wide(recvcounts)};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Reduce_scatter_init_c)

/* Gather, scatter, allgather, alltoall: one shape. A non-root's receive
 * (gather) or send (scatter) side is not significant and not kept. */
static int block_init(enum fy_pcoll_kind kind, const void *sendbuf,
                      MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Request *request, const char *fn)
{
    PINIT_REQ(request, comm, fn);
    MPI_Request *chk = FY_PCOLL_CHECK_ONLY;
    int rc;
    switch (kind) {
    case FY_PCOLL_GATHER:
        rc = coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, root, comm, chk, fn);
        break;
    case FY_PCOLL_SCATTER:
        rc = coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                          recvtype, root, comm, chk, fn);
        break;
    case FY_PCOLL_ALLGATHER:
        rc = coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm, chk, fn);
        break;
    default:
        rc = coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                           recvtype, comm, chk, fn);
        break;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    struct fy_comm *c = fy_comm_get(comm);
    bool non_root = !pinit_is_root(c, root), leaf = pinit_is_leaf(c, root);
    struct fy_pcoll_args a = {.kind = kind,
                              .sbuf = sendbuf,
                              .scount = sendcount,
                              .stype = sendtype,
                              .rbuf = recvbuf,
                              .rcount = recvcount,
                              .rtype = recvtype,
                              .root = root};
    if (kind == FY_PCOLL_GATHER && non_root)
        a.rtype = MPI_DATATYPE_NULL;
    if (kind == FY_PCOLL_GATHER && !leaf)
        a.stype = MPI_DATATYPE_NULL;
    if (kind == FY_PCOLL_SCATTER && non_root)
        a.stype = MPI_DATATYPE_NULL;
    if (kind == FY_PCOLL_SCATTER && !leaf)
        a.rtype = MPI_DATATYPE_NULL;
    return fy_pcoll_create(c, &a, request, fn);
}

/* The entry points of the block-shaped collectives, int and large count;
 * root_param/root_val add the root to the rooted ones. */
#define BLOCK_INIT(name, kind, count_t, root_param, root_val)                  \
    FY_API int PMPI_##name(                                                    \
        const void *sendbuf, count_t sendcount, MPI_Datatype sendtype,         \
        void *recvbuf, count_t recvcount, MPI_Datatype recvtype,               \
        root_param MPI_Comm comm, MPI_Info info, MPI_Request *request)         \
    {                                                                          \
        FY_MT_ENTER();                                                         \
        (void)info;                                                            \
        return block_init(kind, sendbuf, sendcount, sendtype, recvbuf,         \
                          recvcount, recvtype, root_val, comm, request,        \
                          __func__);                                           \
    }                                                                          \
    FY_ALIAS(MPI_##name)

#define ROOT_PARAM int root,
#define NO_PARAM

BLOCK_INIT(Gather_init, FY_PCOLL_GATHER, int, ROOT_PARAM, root)
BLOCK_INIT(Gather_init_c, FY_PCOLL_GATHER, MPI_Count, ROOT_PARAM, root)
BLOCK_INIT(Scatter_init, FY_PCOLL_SCATTER, int, ROOT_PARAM, root)
BLOCK_INIT(Scatter_init_c, FY_PCOLL_SCATTER, MPI_Count, ROOT_PARAM, root)
BLOCK_INIT(Allgather_init, FY_PCOLL_ALLGATHER, int, NO_PARAM, 0)
BLOCK_INIT(Allgather_init_c, FY_PCOLL_ALLGATHER, MPI_Count, NO_PARAM, 0)
BLOCK_INIT(Alltoall_init, FY_PCOLL_ALLTOALL, int, NO_PARAM, 0)
BLOCK_INIT(Alltoall_init_c, FY_PCOLL_ALLTOALL, MPI_Count, NO_PARAM, 0)

FY_API int PMPI_Gatherv_init(const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
                             fy_vec_int(recvcounts), fy_vec_int(displs),
                             recvtype, root, comm, FY_PCOLL_CHECK_ONLY,
                             __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool is_root = pinit_is_root(c, root);
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_GATHERV,
        .sbuf = sendbuf,
        .scount = sendcount,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = is_root ? recvtype : MPI_DATATYPE_NULL,
        .root = root,
        .nr = pinit_npeers(c),
        .rcounts = is_root ? fy_vec_int(recvcounts) : FY_VEC_NONE,
        .rdispls = is_root ? fy_vec_int(displs) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Gatherv_init)

FY_API int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[],
                               const MPI_Aint displs[], MPI_Datatype recvtype,
                               int root, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_gatherv(sendbuf, sendcount, sendtype, recvbuf,
                             fy_vec_wide(recvcounts), fy_vec_wide(displs),
                             recvtype, root, comm, FY_PCOLL_CHECK_ONLY,
                             __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool is_root = pinit_is_root(c, root);
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_GATHERV,
        .sbuf = sendbuf,
        .scount = sendcount,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = is_root ? recvtype : MPI_DATATYPE_NULL,
        .root = root,
        .nr = pinit_npeers(c),
        .rcounts = is_root ? fy_vec_wide(recvcounts) : FY_VEC_NONE,
        .rdispls = is_root ? fy_vec_wide(displs) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Gatherv_init_c)

FY_API int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[],
                              const int displs[], MPI_Datatype sendtype,
                              void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_scatterv(sendbuf, fy_vec_int(sendcounts),
                              fy_vec_int(displs), sendtype, recvbuf, recvcount,
                              recvtype, root, comm, FY_PCOLL_CHECK_ONLY,
                              __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool is_root = pinit_is_root(c, root);
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_SCATTERV,
        .sbuf = sendbuf,
        .stype = is_root ? sendtype : MPI_DATATYPE_NULL,
        .rbuf = recvbuf,
        .rcount = recvcount,
        .rtype = recvtype,
        .root = root,
        .ns = pinit_npeers(c),
        .scounts = is_root ? fy_vec_int(sendcounts) : FY_VEC_NONE,
        .sdispls = is_root ? fy_vec_int(displs) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Scatterv_init)

FY_API int PMPI_Scatterv_init_c(const void *sendbuf,
                                const MPI_Count sendcounts[],
                                const MPI_Aint displs[], MPI_Datatype sendtype,
                                void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_scatterv(sendbuf, fy_vec_wide(sendcounts),
                              fy_vec_wide(displs), sendtype, recvbuf, recvcount,
                              recvtype, root, comm, FY_PCOLL_CHECK_ONLY,
                              __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool is_root = pinit_is_root(c, root);
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_SCATTERV,
        .sbuf = sendbuf,
        .stype = is_root ? sendtype : MPI_DATATYPE_NULL,
        .rbuf = recvbuf,
        .rcount = recvcount,
        .rtype = recvtype,
        .root = root,
        .ns = pinit_npeers(c),
        .scounts = is_root ? fy_vec_wide(sendcounts) : FY_VEC_NONE,
        .sdispls = is_root ? fy_vec_wide(displs) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Scatterv_init_c)

FY_API int PMPI_Allgatherv_init(const void *sendbuf, int sendcount,
                                MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                fy_vec_int(recvcounts), fy_vec_int(displs),
                                recvtype, comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_comm *c = fy_comm_get(comm);
    struct fy_pcoll_args a = {.kind = FY_PCOLL_ALLGATHERV,
                              .sbuf = sendbuf,
                              .scount = sendcount,
                              .stype = sendtype,
                              .rbuf = recvbuf,
                              .rtype = recvtype,
                              .nr = pinit_npeers(c),
                              .rcounts = fy_vec_int(recvcounts),
                              .rdispls = fy_vec_int(displs)};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Allgatherv_init)

FY_API int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[],
                                  const MPI_Aint displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                fy_vec_wide(recvcounts), fy_vec_wide(displs),
                                recvtype, comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_comm *c = fy_comm_get(comm);
    struct fy_pcoll_args a = {.kind = FY_PCOLL_ALLGATHERV,
                              .sbuf = sendbuf,
                              .scount = sendcount,
                              .stype = sendtype,
                              .rbuf = recvbuf,
                              .rtype = recvtype,
                              .nr = pinit_npeers(c),
                              .rcounts = fy_vec_wide(recvcounts),
                              .rdispls = fy_vec_wide(displs)};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Allgatherv_init_c)

FY_API int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_alltoallv(sendbuf, fy_vec_int(sendcounts),
                               fy_vec_int(sdispls), sendtype, recvbuf,
                               fy_vec_int(recvcounts), fy_vec_int(rdispls),
                               recvtype, comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool in_place = sendbuf == MPI_IN_PLACE;
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_ALLTOALLV,
        .sbuf = sendbuf,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = recvtype,
        .ns = pinit_npeers(c),
        .nr = pinit_npeers(c),
        .scounts = in_place ? FY_VEC_NONE : fy_vec_int(sendcounts),
        .sdispls = in_place ? FY_VEC_NONE : fy_vec_int(sdispls),
        .rcounts = fy_vec_int(recvcounts),
        .rdispls = fy_vec_int(rdispls)};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Alltoallv_init)

FY_API int
PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_alltoallv(sendbuf, fy_vec_wide(sendcounts),
                               fy_vec_wide(sdispls), sendtype, recvbuf,
                               fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                               recvtype, comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool in_place = sendbuf == MPI_IN_PLACE;
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_ALLTOALLV,
        .sbuf = sendbuf,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = recvtype,
        .ns = pinit_npeers(c),
        .nr = pinit_npeers(c),
        .scounts = in_place ? FY_VEC_NONE : fy_vec_wide(sendcounts),
        .sdispls = in_place ? FY_VEC_NONE : fy_vec_wide(sdispls),
        .rcounts = fy_vec_wide(recvcounts),
        .rdispls = fy_vec_wide(rdispls)};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Alltoallv_init_c)

FY_API int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[],
                               const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_alltoallw(sendbuf, fy_vec_int(sendcounts),
                               fy_vec_int(sdispls), sendtypes, recvbuf,
                               fy_vec_int(recvcounts), fy_vec_int(rdispls),
                               recvtypes, comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool in_place = sendbuf == MPI_IN_PLACE;
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_ALLTOALLW,
        .sbuf = sendbuf,
        .rbuf = recvbuf,
        .ns = pinit_npeers(c),
        .nr = pinit_npeers(c),
        .scounts = in_place ? FY_VEC_NONE : fy_vec_int(sendcounts),
        .sdispls = in_place ? FY_VEC_NONE : fy_vec_int(sdispls),
        .stypes = in_place ? NULL : sendtypes,
        .rcounts = fy_vec_int(recvcounts),
        .rdispls = fy_vec_int(rdispls),
        .rtypes = recvtypes};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Alltoallw_init)

FY_API int
PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                      void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    PINIT_CHECK(request, comm, __func__,
                coll_alltoallw(sendbuf, fy_vec_wide(sendcounts),
                               fy_vec_wide(sdispls), sendtypes, recvbuf,
                               fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                               recvtypes, comm, FY_PCOLL_CHECK_ONLY, __func__));
    struct fy_comm *c = fy_comm_get(comm);
    bool in_place = sendbuf == MPI_IN_PLACE;
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_ALLTOALLW,
        .sbuf = sendbuf,
        .rbuf = recvbuf,
        .ns = pinit_npeers(c),
        .nr = pinit_npeers(c),
        .scounts = in_place ? FY_VEC_NONE : fy_vec_wide(sendcounts),
        .sdispls = in_place ? FY_VEC_NONE : fy_vec_wide(sdispls),
        .stypes = in_place ? NULL : sendtypes,
        .rcounts = fy_vec_wide(recvcounts),
        .rdispls = fy_vec_wide(rdispls),
        .rtypes = recvtypes};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Alltoallw_init_c)
