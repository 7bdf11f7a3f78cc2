/* SPDX-License-Identifier: MIT */
/* The intercommunicator branch of the collective entry points: argument
 * checks by MPI 4.0 6.2.2 (which group sends, which receives, what the
 * root argument may be) and the call into src/coll/inter.c, blocking,
 * nonblocking (request set) or check-only (FY_PCOLL_CHECK_ONLY, the
 * persistent _init calls). */
#include "mpi/coll_inter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/coll_args.h"
#include "mpi/pcoll.h"

/* After the checks: return for an _init call's check, else run 'call'
 * (which names the nonblocking output NB(request)) and report. */
#define NB(request) ((request) ? &s_ : NULL)
#define RUN(c, fn, request, call)                                              \
    do {                                                                       \
        if ((request) == FY_PCOLL_CHECK_ONLY)                                  \
            return MPI_SUCCESS;                                                \
        struct fy_sched *s_ = NULL;                                            \
        int rc_ = (call);                                                      \
        return fy_mpi_coll_finish(c, rc_, s_, request, fn);                    \
    } while (0)

#define CHECK_NOT_IN_PLACE(buf, c, fn, what)                                   \
    FY_CHECK((buf) != MPI_IN_PLACE, c, MPI_ERR_BUFFER, fn,                     \
             "MPI_IN_PLACE is not allowed as %s on an intercommunicator",      \
             what)

/* MPI 4.0 6.2.2: the root itself passes MPI_ROOT, its group mates
 * MPI_PROC_NULL, the other group the root's rank there. */
#define CHECK_ROOT(root, c, fn)                                                \
    FY_CHECK((root) == MPI_ROOT || (root) == MPI_PROC_NULL ||                  \
                 ((root) >= 0 && (root) < (c)->p2p_group->size),               \
             c, MPI_ERR_ROOT, fn,                                              \
             "root %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the "   \
             "remote group [0, %d)",                                           \
             root, (c)->p2p_group->size)

static int check_counts(struct fy_coll_vec counts, int n, struct fy_comm *c,
                        const char *fn, const char *what)
{
    FY_CHECK(counts.p != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        FY_CHECK(fy_vec_at(counts, i) >= 0, c, MPI_ERR_COUNT, fn,
                 "%s[%d] = %lld is negative", what, i,
                 (long long)fy_vec_at(counts, i));
    return MPI_SUCCESS;
}

#define CHECK_COUNTS(counts, n, c, fn, what)                                   \
    do {                                                                       \
        int rc_ = check_counts(counts, n, c, fn, what);                        \
        if (rc_ != MPI_SUCCESS)                                                \
            return rc_;                                                        \
    } while (0)

int fy_mpi_inter_barrier(struct fy_comm *c, MPI_Request *request,
                         const char *fn)
{
    RUN(c, fn, request, fy_coll_inter_barrier(c, NB(request)));
}

int fy_mpi_inter_bcast(struct fy_comm *c, void *buf, MPI_Count count,
                       MPI_Datatype datatype, int root, MPI_Request *request,
                       const char *fn)
{
    CHECK_ROOT(root, c, fn);
    if (root == MPI_PROC_NULL)
        RUN(c, fn, request,
            fy_coll_inter_bcast(NULL, 0, NULL, root, c, NB(request)));
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    CHECK_NOT_IN_PLACE(buf, c, fn, "buffer");
    RUN(c, fn, request,
        fy_coll_inter_bcast(buf, count, dt, root, c, NB(request)));
}

int fy_mpi_inter_reduce(struct fy_comm *c, const void *sbuf, void *rbuf,
                        MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        int root, MPI_Request *request, const char *fn)
{
    CHECK_ROOT(root, c, fn);
    if (root == MPI_PROC_NULL)
        RUN(c, fn, request,
            fy_coll_inter_reduce(NULL, NULL, 0, NULL, NULL, root, c,
                                 NB(request)));
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    if (root == MPI_ROOT)
        CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
    else
        CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
    RUN(c, fn, request,
        fy_coll_inter_reduce(sbuf, rbuf, count, dt, o, root, c, NB(request)));
}

int fy_mpi_inter_allreduce(struct fy_comm *c, const void *sbuf, void *rbuf,
                           MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Request *request, const char *fn)
{
    CHECK_COUNT(count, c, fn, "count");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
    CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
    RUN(c, fn, request,
        fy_coll_inter_allreduce(sbuf, rbuf, count, dt, o, c, NB(request)));
}

int fy_mpi_inter_reduce_scatter(struct fy_comm *c, const void *sbuf, void *rbuf,
                                MPI_Count rcount, struct fy_coll_vec rcounts,
                                MPI_Datatype datatype, MPI_Op op,
                                MPI_Request *request, const char *fn)
{
    if (rcounts.p)
        CHECK_COUNTS(rcounts, c->size, c, fn, "recvcounts");
    else
        CHECK_COUNT(rcount, c, fn, "recvcount");
    GET_DT(dt, datatype, c, fn, "datatype");
    GET_OP(o, op, dt, c, fn);
    CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
    CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
    RUN(c, fn, request,
        fy_coll_inter_reduce_scatter(sbuf, rbuf, rcount, rcounts, dt, o, c,
                                     NB(request)));
}

int fy_mpi_inter_gather(struct fy_comm *c, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                        MPI_Datatype rtype, int root, MPI_Request *request,
                        const char *fn)
{
    CHECK_ROOT(root, c, fn);
    struct fy_coll_layout l = {.buf = NULL};
    struct fy_dtype *sdt = NULL;
    if (root == MPI_ROOT) {
        GET_DT(r, rtype, c, fn, "recvtype");
        CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
        if (rcounts.p) {
            CHECK_COUNTS(rcounts, c->p2p_group->size, c, fn, "recvcounts");
            FY_CHECK(displs.p != NULL, c, MPI_ERR_ARG, fn, "displs is NULL");
        } else {
            CHECK_COUNT(rcount, c, fn, "recvcount");
        }
        l = (struct fy_coll_layout){.buf = rbuf,
                                    .count = rcount,
                                    .counts = rcounts,
                                    .displs = displs,
                                    .dt = r};
    } else if (root != MPI_PROC_NULL) {
        CHECK_COUNT(scount, c, fn, "sendcount");
        GET_DT(s, stype, c, fn, "sendtype");
        CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
        sdt = s;
    }
    RUN(c, fn, request,
        fy_coll_inter_gather(sbuf, scount, sdt, &l, root, c, NB(request)));
}

int fy_mpi_inter_scatter(struct fy_comm *c, const void *sbuf, MPI_Count scount,
                         struct fy_coll_vec scounts, struct fy_coll_vec displs,
                         MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                         MPI_Datatype rtype, int root, MPI_Request *request,
                         const char *fn)
{
    CHECK_ROOT(root, c, fn);
    struct fy_coll_layout l = {.buf = NULL};
    struct fy_dtype *rdt = NULL;
    if (root == MPI_ROOT) {
        GET_DT(s, stype, c, fn, "sendtype");
        CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
        if (scounts.p) {
            CHECK_COUNTS(scounts, c->p2p_group->size, c, fn, "sendcounts");
            FY_CHECK(displs.p != NULL, c, MPI_ERR_ARG, fn, "displs is NULL");
        } else {
            CHECK_COUNT(scount, c, fn, "sendcount");
        }
        l = (struct fy_coll_layout){.buf = sbuf,
                                    .count = scount,
                                    .counts = scounts,
                                    .displs = displs,
                                    .dt = s};
    } else if (root != MPI_PROC_NULL) {
        CHECK_COUNT(rcount, c, fn, "recvcount");
        GET_DT(r, rtype, c, fn, "recvtype");
        CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
        rdt = r;
    }
    RUN(c, fn, request,
        fy_coll_inter_scatter(&l, rbuf, rcount, rdt, root, c, NB(request)));
}

int fy_mpi_inter_allgather(struct fy_comm *c, const void *sbuf,
                           MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           MPI_Count rcount, struct fy_coll_vec rcounts,
                           struct fy_coll_vec displs, MPI_Datatype rtype,
                           MPI_Request *request, const char *fn)
{
    CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
    CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
    CHECK_COUNT(scount, c, fn, "sendcount");
    GET_DT(sdt, stype, c, fn, "sendtype");
    GET_DT(rdt, rtype, c, fn, "recvtype");
    if (rcounts.p) {
        CHECK_COUNTS(rcounts, c->p2p_group->size, c, fn, "recvcounts");
        FY_CHECK(displs.p != NULL, c, MPI_ERR_ARG, fn, "displs is NULL");
    } else {
        CHECK_COUNT(rcount, c, fn, "recvcount");
    }
    struct fy_coll_layout l = {.buf = rbuf,
                               .count = rcount,
                               .counts = rcounts,
                               .displs = displs,
                               .dt = rdt};
    RUN(c, fn, request,
        fy_coll_inter_allgather(sbuf, scount, sdt, &l, c, NB(request)));
}

/* Resolve a w-form type array of n entries (zero-count entries may be any
 * handle, as for intracommunicators). */
static int get_types(const MPI_Datatype *types, struct fy_coll_vec counts,
                     int n, struct fy_comm *c, const char *fn, const char *what,
                     struct fy_dtype **out)
{
    FY_CHECK(types != NULL, c, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++) {
        struct fy_dtype *dt = fy_dtype_get(types[i]);
        if (fy_vec_at(counts, i) == 0 && (!dt || !dt->committed)) {
            out[i] = fy_dtype_get(MPI_BYTE);
            continue;
        }
        FY_CHECK(dt != NULL && dt->committed, c, MPI_ERR_TYPE, fn,
                 "invalid or uncommitted %s[%d] 0x%x", what, i,
                 (unsigned)types[i]);
        out[i] = dt;
    }
    return MPI_SUCCESS;
}

int fy_mpi_inter_alltoall(struct fy_comm *c, const void *sbuf, MPI_Count scount,
                          struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls, MPI_Datatype stype,
                          const MPI_Datatype *stypes, void *rbuf,
                          MPI_Count rcount, struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls, MPI_Datatype rtype,
                          const MPI_Datatype *rtypes, MPI_Request *request,
                          const char *fn)
{
    CHECK_NOT_IN_PLACE(sbuf, c, fn, "sendbuf");
    CHECK_NOT_IN_PLACE(rbuf, c, fn, "recvbuf");
    int n = c->p2p_group->size;
    struct fy_coll_layout sl = {.buf = sbuf, .count = scount},
                          rl = {.buf = rbuf, .count = rcount};
    if (scounts.p) {
        CHECK_COUNTS(scounts, n, c, fn, "sendcounts");
        CHECK_COUNTS(rcounts, n, c, fn, "recvcounts");
        FY_CHECK(sdispls.p != NULL && rdispls.p != NULL, c, MPI_ERR_ARG, fn,
                 "a displacement array is NULL");
        sl.counts = scounts;
        sl.displs = sdispls;
        rl.counts = rcounts;
        rl.displs = rdispls;
    } else {
        CHECK_COUNT(scount, c, fn, "sendcount");
        CHECK_COUNT(rcount, c, fn, "recvcount");
    }
    if (!stypes) {
        GET_DT(sdt, stype, c, fn, "sendtype");
        GET_DT(rdt, rtype, c, fn, "recvtype");
        sl.dt = sdt;
        rl.dt = rdt;
        RUN(c, fn, request, fy_coll_inter_alltoall(&sl, &rl, c, NB(request)));
    }
    struct fy_dtype **dts = malloc(2 * (size_t)n * sizeof(*dts) + 1);
    if (!dts)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    int rc = get_types(stypes, scounts, n, c, fn, "sendtypes", dts);
    if (rc == MPI_SUCCESS)
        rc = get_types(rtypes, rcounts, n, c, fn, "recvtypes", dts + n);
    if (rc == MPI_SUCCESS && request != FY_PCOLL_CHECK_ONLY) {
        /* The type array is read while building only (each step holds
         * its datatype), so it goes away at once. */
        sl.dts = dts;
        rl.dts = dts + n;
        struct fy_sched *s_ = NULL;
        int crc = fy_coll_inter_alltoall(&sl, &rl, c, NB(request));
        rc = fy_mpi_coll_finish(c, crc, s_, request, fn);
    }
    free(dts);
    return rc;
}
