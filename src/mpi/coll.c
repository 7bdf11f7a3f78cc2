/* SPDX-License-Identifier: MIT */
/* Entry points of the blocking collectives: argument checks (naming the
 * argument), MPI_IN_PLACE rules, then src/coll; internal errors become MPI
 * error classes here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/mpi_impl.h"

/* Resolve a datatype argument: valid and committed. */
#define GET_DT(var, h, c, fn, what)                                           \
    struct fy_dtype *var = fy_dtype_get(h);                                   \
    FY_CHECK(var != NULL, c, MPI_ERR_TYPE, fn, "invalid %s 0x%x", what,       \
             (unsigned)(h));                                                  \
    FY_CHECK(var->committed, c, MPI_ERR_TYPE, fn,                             \
             "%s 0x%x is not committed", what, (unsigned)(h))

#define GET_OP(var, h, dt, c, fn)                                             \
    struct fy_op *var = fy_op_get(h);                                         \
    FY_CHECK(var != NULL, c, MPI_ERR_OP, fn, "invalid op 0x%x",               \
             (unsigned)(h));                                                  \
    FY_CHECK(fy_op_valid_for(var, dt), c, MPI_ERR_OP, fn,                     \
             "op 0x%x is not defined for datatype 0x%x", (unsigned)(h),       \
             (unsigned)(dt)->handle)

#define CHECK_COUNT(n, c, fn, what)                                           \
    FY_CHECK((n) >= 0, c, MPI_ERR_COUNT, fn, "%s %d is negative", what,       \
             (int)(n))

#define CHECK_ROOT(root, c, fn)                                               \
    FY_CHECK((root) >= 0 && (root) < (c)->size, c, MPI_ERR_ROOT, fn,          \
             "root %d is not in [0, %d)", root, (c)->size)

/* NULL with elements to move is an error, unless the datatype is derived:
 * then NULL is MPI_BOTTOM and the type's displacements are addresses. */
#define CHECK_BUF(buf, n, dt, c, fn, what)                                    \
    FY_CHECK((buf) != NULL || (n) == 0 || !(dt)->builtin, c, MPI_ERR_BUFFER,  \
             fn, "%s is NULL but its count is %lld", what, (long long)(n))

#define CHECK_NOT_IN_PLACE(buf, c, fn, what)                                  \
    FY_CHECK((buf) != MPI_IN_PLACE, c, MPI_ERR_BUFFER, fn,                    \
             "MPI_IN_PLACE is not allowed as %s here", what)

#define CHECK_NO_ALIAS(sbuf, rbuf, n, c, fn)                                  \
    FY_CHECK((sbuf) != (rbuf) || (n) == 0, c, MPI_ERR_BUFFER, fn,             \
             "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)")

#define CHECK_PTR(p, c, fn)                                                   \
    FY_CHECK((p) != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", #p)

static int report(struct fy_comm *c, int rc, const char *fn)
    __attribute__((cold, noinline));
static int report(struct fy_comm *c, int rc, const char *fn)
{
    if (rc == -EMSGSIZE)
        return fy_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                          "data larger than its receive buffer (do counts "
                          "and datatypes match on every process?)");
    return fy_mpi_err(c, fy_errno_to_class(rc), fn, "%s", strerror(-rc));
}

#define RUN(call, c, fn)                                                      \
    do {                                                                      \
        int rc_ = (call);                                                     \
        return rc_ == 0 ? MPI_SUCCESS : report(c, rc_, fn);                   \
    } while (0)

/* Check a counts array of c->size entries. */
static int check_counts(const int *counts, struct fy_comm *c, const char *fn,
                        const char *what)
{
    FY_CHECK(counts != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < c->size; i++)
        FY_CHECK(counts[i] >= 0, c, MPI_ERR_COUNT, fn,
                 "%s[%d] = %d is negative", what, i, counts[i]);
    return MPI_SUCCESS;
}

#define CHECK_COUNTS(counts, c, fn, what)                                     \
    do {                                                                      \
        int rc_ = check_counts(counts, c, fn, what);                          \
        if (rc_ != MPI_SUCCESS)                                               \
            return rc_;                                                       \
    } while (0)

FY_API int PMPI_Barrier(MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    RUN(fy_coll_barrier(c), c, __func__);
}
FY_ALIAS(MPI_Barrier)

FY_API int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype,
                      int root, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNT(count, c, __func__, "count");
    GET_DT(dt, datatype, c, __func__, "datatype");
    CHECK_ROOT(root, c, __func__);
    CHECK_BUF(buffer, count, dt, c, __func__, "buffer");
    CHECK_NOT_IN_PLACE(buffer, c, __func__, "buffer");
    RUN(fy_coll_bcast(buffer, count, dt, root, c), c, __func__);
}
FY_ALIAS(MPI_Bcast)

FY_API int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, int root,
                       MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNT(count, c, __func__, "count");
    GET_DT(dt, datatype, c, __func__, "datatype");
    GET_OP(o, op, dt, c, __func__);
    CHECK_ROOT(root, c, __func__);
    if (c->rank == root) {
        CHECK_BUF(recvbuf, count, dt, c, __func__, "recvbuf");
        CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, __func__);
    } else {
        CHECK_NOT_IN_PLACE(sendbuf, c, __func__,
                           "sendbuf (only the root may pass it)");
    }
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, __func__, "sendbuf");
    RUN(fy_coll_reduce(sendbuf, recvbuf, count, dt, o, root, c), c,
        __func__);
}
FY_ALIAS(MPI_Reduce)

FY_API int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNT(count, c, __func__, "count");
    GET_DT(dt, datatype, c, __func__, "datatype");
    GET_OP(o, op, dt, c, __func__);
    CHECK_BUF(recvbuf, count, dt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, __func__);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, __func__, "sendbuf");
    RUN(fy_coll_allreduce(sendbuf, recvbuf, count, dt, o, c), c, __func__);
}
FY_ALIAS(MPI_Allreduce)

FY_API int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
                             MPI_Datatype datatype, MPI_Op op)
{
    FY_CHECK_INIT(__func__);
    CHECK_COUNT(count, NULL, __func__, "count");
    GET_DT(dt, datatype, NULL, __func__, "datatype");
    GET_OP(o, op, dt, NULL, __func__);
    CHECK_BUF(inbuf, count, dt, NULL, __func__, "inbuf");
    CHECK_BUF(inoutbuf, count, dt, NULL, __func__, "inoutbuf");
    if (count == 0)
        return MPI_SUCCESS;
    int rc = fy_op_apply(o, inbuf, inoutbuf, count, dt);
    if (rc != 0)
        return fy_mpi_err(NULL, MPI_ERR_OP, __func__,
                          "op 0x%x cannot be applied to datatype 0x%x",
                          (unsigned)op, (unsigned)datatype);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Reduce_local)

FY_API int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
                                     int recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNT(recvcount, c, __func__, "recvcount");
    GET_DT(dt, datatype, c, __func__, "datatype");
    GET_OP(o, op, dt, c, __func__);
    CHECK_BUF(recvbuf, recvcount, dt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, __func__);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, recvcount, dt, c, __func__, "sendbuf");
    RUN(fy_coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, o, c),
        c, __func__);
}
FY_ALIAS(MPI_Reduce_scatter_block)

FY_API int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
                               const int recvcounts[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNTS(recvcounts, c, __func__, "recvcounts");
    GET_DT(dt, datatype, c, __func__, "datatype");
    GET_OP(o, op, dt, c, __func__);
    long long total = 0;
    for (int i = 0; i < c->size; i++)
        total += recvcounts[i];
    FY_CHECK(total <= 0x7fffffff, c, MPI_ERR_COUNT, __func__,
             "recvcounts add up to %lld, more than an int", total);
    int mine = recvcounts[c->rank];
    CHECK_BUF(recvbuf, mine, dt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, total, c, __func__);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, total, dt, c, __func__, "sendbuf");
    RUN(fy_coll_reduce_scatter(sendbuf, recvbuf, recvcounts, dt, o, c), c,
        __func__);
}
FY_ALIAS(MPI_Reduce_scatter)

FY_API int PMPI_Scan(const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNT(count, c, __func__, "count");
    GET_DT(dt, datatype, c, __func__, "datatype");
    GET_OP(o, op, dt, c, __func__);
    CHECK_BUF(recvbuf, count, dt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, __func__);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, __func__, "sendbuf");
    RUN(fy_coll_scan(sendbuf, recvbuf, count, dt, o, c), c, __func__);
}
FY_ALIAS(MPI_Scan)

FY_API int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNT(count, c, __func__, "count");
    GET_DT(dt, datatype, c, __func__, "datatype");
    GET_OP(o, op, dt, c, __func__);
    CHECK_BUF(recvbuf, count, dt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, count, c, __func__);
    if (sendbuf != MPI_IN_PLACE)
        CHECK_BUF(sendbuf, count, dt, c, __func__, "sendbuf");
    RUN(fy_coll_exscan(sendbuf, recvbuf, count, dt, o, c), c, __func__);
}
FY_ALIAS(MPI_Exscan)

/* ---- gather / scatter ------------------------------------------------ */

FY_API int PMPI_Gather(const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_ROOT(root, c, __func__);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = c->rank == root;
    if (sendbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(sendbuf, c, __func__,
                           "sendbuf (only the root may pass it)");
        CHECK_COUNT(sendcount, c, __func__, "sendcount");
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, __func__, "sendbuf");
        sdt = s;
    }
    if (is_root) {
        CHECK_COUNT(recvcount, c, __func__, "recvcount");
        GET_DT(r, recvtype, c, __func__, "recvtype");
        CHECK_BUF(recvbuf, recvcount, r, c, __func__, "recvbuf");
        CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, __func__);
        rdt = r;
    }
    RUN(fy_coll_gather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                       root, c),
        c, __func__);
}
FY_ALIAS(MPI_Gather)

FY_API int PMPI_Gatherv(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_ROOT(root, c, __func__);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = c->rank == root;
    if (sendbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(sendbuf, c, __func__,
                           "sendbuf (only the root may pass it)");
        CHECK_COUNT(sendcount, c, __func__, "sendcount");
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, __func__, "sendbuf");
        sdt = s;
    }
    if (is_root) {
        CHECK_COUNTS(recvcounts, c, __func__, "recvcounts");
        CHECK_PTR(displs, c, __func__);
        GET_DT(r, recvtype, c, __func__, "recvtype");
        CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
        rdt = r;
    }
    RUN(fy_coll_gatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts, displs,
                        rdt, root, c),
        c, __func__);
}
FY_ALIAS(MPI_Gatherv)

FY_API int PMPI_Scatter(const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_ROOT(root, c, __func__);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = c->rank == root;
    if (is_root) {
        CHECK_COUNT(sendcount, c, __func__, "sendcount");
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, __func__, "sendbuf");
        CHECK_NOT_IN_PLACE(sendbuf, c, __func__, "sendbuf");
        CHECK_NO_ALIAS(sendbuf, recvbuf, sendcount, c, __func__);
        sdt = s;
    }
    if (recvbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(recvbuf, c, __func__,
                           "recvbuf (only the root may pass it)");
        CHECK_COUNT(recvcount, c, __func__, "recvcount");
        GET_DT(r, recvtype, c, __func__, "recvtype");
        CHECK_BUF(recvbuf, recvcount, r, c, __func__, "recvbuf");
        rdt = r;
    }
    RUN(fy_coll_scatter(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                        root, c),
        c, __func__);
}
FY_ALIAS(MPI_Scatter)

FY_API int PMPI_Scatterv(const void *sendbuf, const int sendcounts[],
                         const int displs[], MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int root, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_ROOT(root, c, __func__);
    struct fy_dtype *sdt = NULL, *rdt = NULL;
    bool is_root = c->rank == root;
    if (is_root) {
        CHECK_COUNTS(sendcounts, c, __func__, "sendcounts");
        CHECK_PTR(displs, c, __func__);
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_NOT_IN_PLACE(sendbuf, c, __func__, "sendbuf");
        sdt = s;
    }
    if (recvbuf != MPI_IN_PLACE || !is_root) {
        CHECK_NOT_IN_PLACE(recvbuf, c, __func__,
                           "recvbuf (only the root may pass it)");
        CHECK_COUNT(recvcount, c, __func__, "recvcount");
        GET_DT(r, recvtype, c, __func__, "recvtype");
        CHECK_BUF(recvbuf, recvcount, r, c, __func__, "recvbuf");
        rdt = r;
    }
    RUN(fy_coll_scatterv(sendbuf, sendcounts, displs, sdt, recvbuf,
                         recvcount, rdt, root, c),
        c, __func__);
}
FY_ALIAS(MPI_Scatterv)

/* ---- allgather / alltoall -------------------------------------------- */

FY_API int PMPI_Allgather(const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNT(sendcount, c, __func__, "sendcount");
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, __func__, "sendbuf");
        sdt = s;
    }
    CHECK_COUNT(recvcount, c, __func__, "recvcount");
    GET_DT(rdt, recvtype, c, __func__, "recvtype");
    CHECK_BUF(recvbuf, recvcount, rdt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, __func__);
    RUN(fy_coll_allgather(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt,
                          c),
        c, __func__);
}
FY_ALIAS(MPI_Allgather)

FY_API int PMPI_Allgatherv(const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[],
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNT(sendcount, c, __func__, "sendcount");
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, __func__, "sendbuf");
        sdt = s;
    }
    CHECK_COUNTS(recvcounts, c, __func__, "recvcounts");
    CHECK_PTR(displs, c, __func__);
    GET_DT(rdt, recvtype, c, __func__, "recvtype");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    RUN(fy_coll_allgatherv(sendbuf, sendcount, sdt, recvbuf, recvcounts,
                           displs, rdt, c),
        c, __func__);
}
FY_ALIAS(MPI_Allgatherv)

FY_API int PMPI_Alltoall(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNT(sendcount, c, __func__, "sendcount");
        GET_DT(s, sendtype, c, __func__, "sendtype");
        CHECK_BUF(sendbuf, sendcount, s, c, __func__, "sendbuf");
        sdt = s;
    }
    CHECK_COUNT(recvcount, c, __func__, "recvcount");
    GET_DT(rdt, recvtype, c, __func__, "recvtype");
    CHECK_BUF(recvbuf, recvcount, rdt, c, __func__, "recvbuf");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    CHECK_NO_ALIAS(sendbuf, recvbuf, recvcount, c, __func__);
    RUN(fy_coll_alltoall(sendbuf, sendcount, sdt, recvbuf, recvcount, rdt, c),
        c, __func__);
}
FY_ALIAS(MPI_Alltoall)

FY_API int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[],
                          const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[],
                          const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_dtype *sdt = NULL;
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNTS(sendcounts, c, __func__, "sendcounts");
        CHECK_PTR(sdispls, c, __func__);
        GET_DT(s, sendtype, c, __func__, "sendtype");
        sdt = s;
    }
    CHECK_COUNTS(recvcounts, c, __func__, "recvcounts");
    CHECK_PTR(rdispls, c, __func__);
    GET_DT(rdt, recvtype, c, __func__, "recvtype");
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    RUN(fy_coll_alltoallv(sendbuf, sendcounts, sdispls, sdt, recvbuf,
                          recvcounts, rdispls, rdt, c),
        c, __func__);
}
FY_ALIAS(MPI_Alltoallv)

/* Resolve an alltoallw type array; entries with a zero count may be any
 * handle (even MPI_DATATYPE_NULL) and are replaced by MPI_BYTE. */
static int get_types(const MPI_Datatype *types, const int *counts,
                     struct fy_comm *c, const char *fn, const char *what,
                     struct fy_dtype **out)
{
    FY_CHECK(types != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    for (int i = 0; i < c->size; i++) {
        struct fy_dtype *dt = fy_dtype_get(types[i]);
        if (counts[i] == 0 && (!dt || !dt->committed)) {
            out[i] = byte;
            continue;
        }
        FY_CHECK(dt != NULL, c, MPI_ERR_TYPE, fn, "invalid %s[%d] 0x%x", what,
                 i, (unsigned)types[i]);
        FY_CHECK(dt->committed, c, MPI_ERR_TYPE, fn,
                 "%s[%d] 0x%x is not committed", what, i,
                 (unsigned)types[i]);
        out[i] = dt;
    }
    return MPI_SUCCESS;
}

FY_API int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[],
                          const int sdispls[], const MPI_Datatype sendtypes[],
                          void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[],
                          MPI_Comm comm)
{
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    CHECK_COUNTS(recvcounts, c, __func__, "recvcounts");
    CHECK_PTR(rdispls, c, __func__);
    CHECK_NOT_IN_PLACE(recvbuf, c, __func__, "recvbuf");
    if (sendbuf != MPI_IN_PLACE) {
        CHECK_COUNTS(sendcounts, c, __func__, "sendcounts");
        CHECK_PTR(sdispls, c, __func__);
    }
    struct fy_dtype **dts = malloc(2 * (size_t)c->size * sizeof(*dts));
    if (!dts)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, __func__, "out of memory");
    struct fy_dtype **sdts = dts, **rdts = dts + c->size;
    int rc = get_types(recvtypes, recvcounts, c, __func__, "recvtypes", rdts);
    if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        rc = get_types(sendtypes, sendcounts, c, __func__, "sendtypes", sdts);
    if (rc == MPI_SUCCESS) {
        int err = fy_coll_alltoallw(sendbuf, sendcounts, sdispls, sdts,
                                    recvbuf, recvcounts, rdispls, rdts, c);
        rc = err == 0 ? MPI_SUCCESS : report(c, err, __func__);
    }
    free(dts);
    return rc;
}
FY_ALIAS(MPI_Alltoallw)
