/* SPDX-License-Identifier: MIT */
/* Entry points of the neighbourhood collectives, blocking and nonblocking:
 * the communicator must carry a topology (else MPI_ERR_TOPOLOGY), count
 * and displacement arrays have one entry per source or destination, and
 * MPI_IN_PLACE is not allowed; then src/coll/neighbor.c. request == NULL
 * means blocking, FY_PCOLL_CHECK_ONLY only checks (the persistent _init
 * calls at the end of this file). */
#include <errno.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "mpi/coll_args.h"
#include "mpi/mpi_impl.h"
#include "mpi/pcoll.h"

/* NULL with elements to move is an error, unless the datatype is derived:
 * then NULL is MPI_BOTTOM and the type's displacements are addresses. */
#define CHECK_BUF(buf, n, dt, c, fn, what)                                     \
    FY_CHECK((buf) != NULL || (n) == 0 || !(dt)->builtin, c, MPI_ERR_BUFFER,   \
             fn, "%s is NULL but its count is %lld", what, (long long)(n))

#define CHECK_BUFS(sbuf, rbuf, c, fn)                                          \
    FY_CHECK((sbuf) != MPI_IN_PLACE && (rbuf) != MPI_IN_PLACE, c,              \
             MPI_ERR_BUFFER, fn,                                               \
             "MPI_IN_PLACE is not allowed in neighbourhood collectives")

/* Resolve the communicator, which must carry a topology, and its degrees. */
#define GET_NBR_COMM(var, h, fn, indeg, outdeg)                                \
    FY_CHECK_INIT(fn);                                                         \
    FY_GET_COMM(var, h, fn);                                                   \
    FY_CHECK(var->topo != NULL, var, MPI_ERR_TOPOLOGY, fn,                     \
             "communicator has no process topology");                          \
    int indeg, outdeg;                                                         \
    fy_topo_degrees(var, &indeg, &outdeg)

#define CHECK_REQUEST(request, comm, fn)                                       \
    FY_CHECK_INIT(fn);                                                         \
    FY_CHECK((request) != NULL, fy_comm_get(comm), MPI_ERR_ARG, fn,            \
             "request is NULL")

/* Check n counts (and that the displacements exist). */
static int check_counts(struct fy_comm *c, int n, struct fy_coll_vec counts,
                        const void *displs, const char *fn, const char *what,
                        const char *dwhat)
{
    if (n == 0)
        return MPI_SUCCESS;
    FY_CHECK(counts.p != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    FY_CHECK(displs != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", dwhat);
    for (int i = 0; i < n; i++)
        FY_CHECK(fy_vec_at(counts, i) >= 0, c, MPI_ERR_COUNT, fn,
                 "%s[%d] = %lld is negative", what, i,
                 (long long)fy_vec_at(counts, i));
    return MPI_SUCCESS;
}

#define CHECK_COUNTS(c, n, counts, displs, fn, what, dwhat)                    \
    do {                                                                       \
        int rc_ = check_counts(c, n, counts, displs, fn, what, dwhat);         \
        if (rc_ != MPI_SUCCESS)                                                \
            return rc_;                                                        \
    } while (0)

static int nbr_run(struct fy_comm *c, const struct fy_coll_nbr_buf *snd,
                   const struct fy_coll_nbr_buf *rcv, MPI_Request *request,
                   const char *fn)
{
    if (request == FY_PCOLL_CHECK_ONLY)
        return MPI_SUCCESS;
    struct fy_sched *s = NULL;
    int rc = fy_coll_neighbor(snd, rcv, c, request ? &s : NULL);
    return fy_mpi_coll_finish(c, rc, s, request, fn);
}

/* ---- allgather(v) ------------------------------------------------------ */

/* Stands in for count and displacement arrays that a call without
 * neighbours may pass as NULL (never read then). */
static const MPI_Aint s_none[1];

static int nbr_allgather(const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, bool v,
                         struct fy_coll_vec recvcounts,
                         struct fy_coll_vec displs, MPI_Comm comm,
                         MPI_Request *request, const char *fn)
{
    GET_NBR_COMM(c, comm, fn, indeg, outdeg);
    CHECK_BUFS(sendbuf, recvbuf, c, fn);
    CHECK_COUNT(sendcount, c, fn, "sendcount");
    GET_DT(sdt, sendtype, c, fn, "sendtype");
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    struct fy_coll_nbr_buf snd = {
        .buf = sendbuf, .count = sendcount, .same = true, .dt = sdt};
    CHECK_BUF(sendbuf, outdeg ? sendcount : 0, sdt, c, fn, "sendbuf");
    struct fy_coll_nbr_buf rcv = {.buf = recvbuf, .dt = rdt};
    if (v) {
        CHECK_COUNTS(c, indeg, recvcounts, displs.p, fn, "recvcounts",
                     "displs");
        rcv.counts = recvcounts.p ? recvcounts : fy_vec_wide(s_none);
        rcv.displs = displs.p ? displs : fy_vec_wide(s_none);
    } else {
        CHECK_COUNT(recvcount, c, fn, "recvcount");
        CHECK_BUF(recvbuf, indeg ? recvcount : 0, rdt, c, fn, "recvbuf");
        rcv.count = recvcount;
    }
    return nbr_run(c, &snd, &rcv, request, fn);
}

FY_API int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, false, FY_VEC_NONE, FY_VEC_NONE, comm, NULL,
                         __func__);
}
FY_ALIAS(MPI_Neighbor_allgather)

FY_API int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, false, FY_VEC_NONE, FY_VEC_NONE, comm,
                         request, __func__);
}
FY_ALIAS(MPI_Ineighbor_allgather)

FY_API int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, false, FY_VEC_NONE, FY_VEC_NONE, comm, NULL,
                         __func__);
}
FY_ALIAS(MPI_Neighbor_allgather_c)

FY_API int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf,
                                      MPI_Count recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm,
                                      MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                         recvtype, false, FY_VEC_NONE, FY_VEC_NONE, comm,
                         request, __func__);
}
FY_ALIAS(MPI_Ineighbor_allgather_c)

FY_API int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
                         true, fy_vec_int(recvcounts), fy_vec_int(displs), comm,
                         NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_allgatherv)

FY_API int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf,
                                      const MPI_Count recvcounts[],
                                      const MPI_Aint displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
                         true, fy_vec_wide(recvcounts), fy_vec_wide(displs),
                         comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_allgatherv_c)

FY_API int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
                                     MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
                         true, fy_vec_int(recvcounts), fy_vec_int(displs), comm,
                         request, __func__);
}
FY_ALIAS(MPI_Ineighbor_allgatherv)

FY_API int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, void *recvbuf,
                                       const MPI_Count recvcounts[],
                                       const MPI_Aint displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm,
                                       MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
                         true, fy_vec_wide(recvcounts), fy_vec_wide(displs),
                         comm, request, __func__);
}
FY_ALIAS(MPI_Ineighbor_allgatherv_c)

/* ---- alltoall(v) ------------------------------------------------------- */

static int nbr_alltoall(const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Request *request, const char *fn)
{
    GET_NBR_COMM(c, comm, fn, indeg, outdeg);
    CHECK_BUFS(sendbuf, recvbuf, c, fn);
    CHECK_COUNT(sendcount, c, fn, "sendcount");
    CHECK_COUNT(recvcount, c, fn, "recvcount");
    GET_DT(sdt, sendtype, c, fn, "sendtype");
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    CHECK_BUF(sendbuf, outdeg ? sendcount : 0, sdt, c, fn, "sendbuf");
    CHECK_BUF(recvbuf, indeg ? recvcount : 0, rdt, c, fn, "recvbuf");
    struct fy_coll_nbr_buf snd = {
        .buf = sendbuf, .count = sendcount, .dt = sdt};
    struct fy_coll_nbr_buf rcv = {
        .buf = recvbuf, .count = recvcount, .dt = rdt};
    return nbr_run(c, &snd, &rcv, request, fn);
}

FY_API int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoall)

FY_API int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Ineighbor_alltoall)

FY_API int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoall_c)

FY_API int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                        recvtype, comm, request, __func__);
}
FY_ALIAS(MPI_Ineighbor_alltoall_c)

static int nbr_alltoallv(const void *sendbuf, struct fy_coll_vec sendcounts,
                         struct fy_coll_vec sdispls, MPI_Datatype sendtype,
                         void *recvbuf, struct fy_coll_vec recvcounts,
                         struct fy_coll_vec rdispls, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *request, const char *fn)
{
    GET_NBR_COMM(c, comm, fn, indeg, outdeg);
    CHECK_BUFS(sendbuf, recvbuf, c, fn);
    CHECK_COUNTS(c, outdeg, sendcounts, sdispls.p, fn, "sendcounts", "sdispls");
    CHECK_COUNTS(c, indeg, recvcounts, rdispls.p, fn, "recvcounts", "rdispls");
    GET_DT(sdt, sendtype, c, fn, "sendtype");
    GET_DT(rdt, recvtype, c, fn, "recvtype");
    struct fy_coll_nbr_buf snd = {
        .buf = sendbuf,
        .counts = sendcounts.p ? sendcounts : fy_vec_wide(s_none),
        .displs = sdispls.p ? sdispls : fy_vec_wide(s_none),
        .dt = sdt};
    struct fy_coll_nbr_buf rcv = {
        .buf = recvbuf,
        .counts = recvcounts.p ? recvcounts : fy_vec_wide(s_none),
        .displs = rdispls.p ? rdispls : fy_vec_wide(s_none),
        .dt = rdt};
    return nbr_run(c, &snd, &rcv, request, fn);
}

FY_API int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype,
                                   void *recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype,
                                   MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_alltoallv(sendbuf, fy_vec_int(sendcounts), fy_vec_int(sdispls),
                         sendtype, recvbuf, fy_vec_int(recvcounts),
                         fy_vec_int(rdispls), recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallv)

FY_API int PMPI_Neighbor_alltoallv_c(
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_alltoallv(sendbuf, fy_vec_wide(sendcounts), fy_vec_wide(sdispls),
                         sendtype, recvbuf, fy_vec_wide(recvcounts),
                         fy_vec_wide(rdispls), recvtype, comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallv_c)

FY_API int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[],
                                    const int rdispls[], MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_alltoallv(sendbuf, fy_vec_int(sendcounts), fy_vec_int(sdispls),
                         sendtype, recvbuf, fy_vec_int(recvcounts),
                         fy_vec_int(rdispls), recvtype, comm, request,
                         __func__);
}
FY_ALIAS(MPI_Ineighbor_alltoallv)

FY_API int
PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                           const MPI_Aint sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_alltoallv(sendbuf, fy_vec_wide(sendcounts), fy_vec_wide(sdispls),
                         sendtype, recvbuf, fy_vec_wide(recvcounts),
                         fy_vec_wide(rdispls), recvtype, comm, request,
                         __func__);
}
FY_ALIAS(MPI_Ineighbor_alltoallv_c)

/* ---- alltoallw --------------------------------------------------------- */

/* Resolve n datatypes; entries with a zero count may be any handle (even
 * MPI_DATATYPE_NULL) and become MPI_BYTE. */
static int get_types(struct fy_comm *c, int n, const MPI_Datatype *types,
                     struct fy_coll_vec counts, const char *fn,
                     const char *what, struct fy_dtype **out)
{
    if (n == 0)
        return MPI_SUCCESS;
    FY_CHECK(types != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++) {
        struct fy_dtype *dt = fy_dtype_get(types[i]);
        if (fy_vec_at(counts, i) == 0 && (!dt || !dt->committed)) {
            out[i] = fy_dtype_get(MPI_BYTE);
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

static int nbr_alltoallw(const void *sendbuf, struct fy_coll_vec sendcounts,
                         const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf,
                         struct fy_coll_vec recvcounts,
                         const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm,
                         MPI_Request *request, const char *fn)
{
    GET_NBR_COMM(c, comm, fn, indeg, outdeg);
    CHECK_BUFS(sendbuf, recvbuf, c, fn);
    CHECK_COUNTS(c, outdeg, sendcounts, sdispls, fn, "sendcounts", "sdispls");
    CHECK_COUNTS(c, indeg, recvcounts, rdispls, fn, "recvcounts", "rdispls");
    struct fy_dtype **dts =
        malloc((size_t)FY_MAX(indeg + outdeg, 1) * sizeof(*dts));
    if (!dts)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    int rc = get_types(c, outdeg, sendtypes, sendcounts, fn, "sendtypes", dts);
    if (rc == MPI_SUCCESS)
        rc = get_types(c, indeg, recvtypes, recvcounts, fn, "recvtypes",
                       dts + outdeg);
    if (rc == MPI_SUCCESS) {
        static const MPI_Aint none[1];
        struct fy_coll_nbr_buf snd = {
            .buf = sendbuf,
            .counts = sendcounts.p ? sendcounts : fy_vec_wide(s_none),
            .bdispls = sdispls ? sdispls : none,
            .dts = dts};
        struct fy_coll_nbr_buf rcv = {
            .buf = recvbuf,
            .counts = recvcounts.p ? recvcounts : fy_vec_wide(s_none),
            .bdispls = rdispls ? rdispls : none,
            .dts = dts + outdeg};
        rc = nbr_run(c, &snd, &rcv, request, fn);
    }
    free(dts);
    return rc;
}

FY_API int PMPI_Neighbor_alltoallw(
    const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_alltoallw(sendbuf, fy_vec_int(sendcounts), sdispls, sendtypes,
                         recvbuf, fy_vec_int(recvcounts), rdispls, recvtypes,
                         comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallw)

FY_API int PMPI_Neighbor_alltoallw_c(
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    FY_MT_ENTER();
    return nbr_alltoallw(sendbuf, fy_vec_wide(sendcounts), sdispls, sendtypes,
                         recvbuf, fy_vec_wide(recvcounts), rdispls, recvtypes,
                         comm, NULL, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallw_c)

FY_API int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                    const MPI_Aint sdispls[],
                                    const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[],
                                    const MPI_Datatype recvtypes[],
                                    MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_alltoallw(sendbuf, fy_vec_int(sendcounts), sdispls, sendtypes,
                         recvbuf, fy_vec_int(recvcounts), rdispls, recvtypes,
                         comm, request, __func__);
}
FY_ALIAS(MPI_Ineighbor_alltoallw)

FY_API int PMPI_Ineighbor_alltoallw_c(
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Request *request)
{
    FY_MT_ENTER();
    CHECK_REQUEST(request, comm, __func__);
    return nbr_alltoallw(sendbuf, fy_vec_wide(sendcounts), sdispls, sendtypes,
                         recvbuf, fy_vec_wide(recvcounts), rdispls, recvtypes,
                         comm, request, __func__);
}
FY_ALIAS(MPI_Ineighbor_alltoallw_c)

/* ---- persistent neighbourhood collectives (MPI 4.0 6.13) -------------- */

/* An _init call's checks: the request pointer, then every check of the
 * collective itself in check-only mode; *c_out is the communicator and
 * indeg/outdeg its degrees. The info argument is not interpreted. */
static int nbr_init_check(MPI_Comm comm, int check, struct fy_comm **c_out,
                          int *indeg, int *outdeg)
{
    if (check != MPI_SUCCESS)
        return check;
    *c_out = fy_comm_get(comm);
    fy_topo_degrees(*c_out, indeg, outdeg);
    return MPI_SUCCESS;
}

#define NBR_INIT_CHECK(request, comm, fn, check)                               \
    CHECK_REQUEST(request, comm, fn);                                          \
    struct fy_comm *c;                                                         \
    int indeg, outdeg;                                                         \
    do {                                                                       \
        int rc_ = nbr_init_check(comm, check, &c, &indeg, &outdeg);            \
        if (rc_ != MPI_SUCCESS)                                                \
            return rc_;                                                        \
    } while (0)

/* Allgather and alltoall: one shape. */
static int nbr_block_init(enum fy_pcoll_kind kind, const void *sendbuf,
                          MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request, const char *fn)
{
    MPI_Request *chk = FY_PCOLL_CHECK_ONLY;
    NBR_INIT_CHECK(request, comm, fn,
                   kind == FY_PCOLL_NBR_ALLGATHER
                       ? nbr_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                       recvcount, recvtype, false, FY_VEC_NONE,
                                       FY_VEC_NONE, comm, chk, fn)
                       : nbr_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                      recvcount, recvtype, comm, chk, fn));
    struct fy_pcoll_args a = {.kind = kind,
                              .sbuf = sendbuf,
                              .scount = sendcount,
                              .stype = sendtype,
                              .rbuf = recvbuf,
                              .rcount = recvcount,
                              .rtype = recvtype,
                              .ns = outdeg,
                              .nr = indeg};
    return fy_pcoll_create(c, &a, request, fn);
}

#define NBR_BLOCK_INIT(name, kind, count_t)                                    \
    FY_API int PMPI_##name(const void *sendbuf, count_t sendcount,             \
                           MPI_Datatype sendtype, void *recvbuf,               \
                           count_t recvcount, MPI_Datatype recvtype,           \
                           MPI_Comm comm, MPI_Info info, MPI_Request *request) \
    {                                                                          \
        FY_MT_ENTER();                                                         \
        (void)info;                                                            \
        return nbr_block_init(kind, sendbuf, sendcount, sendtype, recvbuf,     \
                              recvcount, recvtype, comm, request, __func__);   \
    }                                                                          \
    FY_ALIAS(MPI_##name)

NBR_BLOCK_INIT(Neighbor_allgather_init, FY_PCOLL_NBR_ALLGATHER, int)
NBR_BLOCK_INIT(Neighbor_allgather_init_c, FY_PCOLL_NBR_ALLGATHER, MPI_Count)
NBR_BLOCK_INIT(Neighbor_alltoall_init, FY_PCOLL_NBR_ALLTOALL, int)
NBR_BLOCK_INIT(Neighbor_alltoall_init_c, FY_PCOLL_NBR_ALLTOALL, MPI_Count)

FY_API int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[],
                                         const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm,
                                         MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    NBR_INIT_CHECK(request, comm, __func__,
                   nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, 0,
                                 recvtype, true, fy_vec_int(recvcounts),
                                 fy_vec_int(displs), comm, FY_PCOLL_CHECK_ONLY,
                                 __func__));
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_NBR_ALLGATHERV,
        .sbuf = sendbuf,
        .scount = sendcount,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = recvtype,
        .ns = outdeg,
        .nr = indeg,
        .rcounts = indeg ? fy_vec_int(recvcounts) : FY_VEC_NONE,
        .rdispls = indeg ? fy_vec_int(displs) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Neighbor_allgatherv_init)

FY_API int PMPI_Neighbor_allgatherv_init_c(
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
    void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    NBR_INIT_CHECK(request, comm, __func__,
                   nbr_allgather(sendbuf, sendcount, sendtype, recvbuf, 0,
                                 recvtype, true, fy_vec_wide(recvcounts),
                                 fy_vec_wide(displs), comm, FY_PCOLL_CHECK_ONLY,
                                 __func__));
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_NBR_ALLGATHERV,
        .sbuf = sendbuf,
        .scount = sendcount,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = recvtype,
        .ns = outdeg,
        .nr = indeg,
        .rcounts = indeg ? fy_vec_wide(recvcounts) : FY_VEC_NONE,
        .rdispls = indeg ? fy_vec_wide(displs) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Neighbor_allgatherv_init_c)

FY_API int
PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                             const int sdispls[], MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    NBR_INIT_CHECK(request, comm, __func__,
                   nbr_alltoallv(sendbuf, fy_vec_int(sendcounts),
                                 fy_vec_int(sdispls), sendtype, recvbuf,
                                 fy_vec_int(recvcounts), fy_vec_int(rdispls),
                                 recvtype, comm, FY_PCOLL_CHECK_ONLY,
                                 __func__));
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_NBR_ALLTOALLV,
        .sbuf = sendbuf,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = recvtype,
        .ns = outdeg,
        .nr = indeg,
        .scounts = outdeg ? fy_vec_int(sendcounts) : FY_VEC_NONE,
        .sdispls = outdeg ? fy_vec_int(sdispls) : FY_VEC_NONE,
        .rcounts = indeg ? fy_vec_int(recvcounts) : FY_VEC_NONE,
        .rdispls = indeg ? fy_vec_int(rdispls) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallv_init)

FY_API int PMPI_Neighbor_alltoallv_init_c(
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    NBR_INIT_CHECK(request, comm, __func__,
                   nbr_alltoallv(sendbuf, fy_vec_wide(sendcounts),
                                 fy_vec_wide(sdispls), sendtype, recvbuf,
                                 fy_vec_wide(recvcounts), fy_vec_wide(rdispls),
                                 recvtype, comm, FY_PCOLL_CHECK_ONLY,
                                 __func__));
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_NBR_ALLTOALLV,
        .sbuf = sendbuf,
        .stype = sendtype,
        .rbuf = recvbuf,
        .rtype = recvtype,
        .ns = outdeg,
        .nr = indeg,
        .scounts = outdeg ? fy_vec_wide(sendcounts) : FY_VEC_NONE,
        .sdispls = outdeg ? fy_vec_wide(sdispls) : FY_VEC_NONE,
        .rcounts = indeg ? fy_vec_wide(recvcounts) : FY_VEC_NONE,
        .rdispls = indeg ? fy_vec_wide(rdispls) : FY_VEC_NONE};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallv_init_c)

FY_API int PMPI_Neighbor_alltoallw_init(
    const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    NBR_INIT_CHECK(request, comm, __func__,
                   nbr_alltoallw(sendbuf, fy_vec_int(sendcounts), sdispls,
                                 sendtypes, recvbuf, fy_vec_int(recvcounts),
                                 rdispls, recvtypes, comm, FY_PCOLL_CHECK_ONLY,
                                 __func__));
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_NBR_ALLTOALLW,
        .sbuf = sendbuf,
        .rbuf = recvbuf,
        .ns = outdeg,
        .nr = indeg,
        .scounts = outdeg ? fy_vec_int(sendcounts) : FY_VEC_NONE,
        .sbdispls = outdeg ? sdispls : NULL,
        .stypes = outdeg ? sendtypes : NULL,
        .rcounts = indeg ? fy_vec_int(recvcounts) : FY_VEC_NONE,
        .rbdispls = indeg ? rdispls : NULL,
        .rtypes = indeg ? recvtypes : NULL};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallw_init)

FY_API int PMPI_Neighbor_alltoallw_init_c(
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    (void)info;
    NBR_INIT_CHECK(request, comm, __func__,
                   nbr_alltoallw(sendbuf, fy_vec_wide(sendcounts), sdispls,
                                 sendtypes, recvbuf, fy_vec_wide(recvcounts),
                                 rdispls, recvtypes, comm, FY_PCOLL_CHECK_ONLY,
                                 __func__));
    struct fy_pcoll_args a = {
        .kind = FY_PCOLL_NBR_ALLTOALLW,
        .sbuf = sendbuf,
        .rbuf = recvbuf,
        .ns = outdeg,
        .nr = indeg,
        .scounts = outdeg ? fy_vec_wide(sendcounts) : FY_VEC_NONE,
        .sbdispls = outdeg ? sdispls : NULL,
        .stypes = outdeg ? sendtypes : NULL,
        .rcounts = indeg ? fy_vec_wide(recvcounts) : FY_VEC_NONE,
        .rbdispls = indeg ? rdispls : NULL,
        .rtypes = indeg ? recvtypes : NULL};
    return fy_pcoll_create(c, &a, request, __func__);
}
FY_ALIAS(MPI_Neighbor_alltoallw_init_c)
