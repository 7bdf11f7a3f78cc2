/* SPDX-License-Identifier: MIT */
/* Point-to-point MPI entry points: blocking and non-blocking sends and
 * receives, probes, the Wait/Test family, cancellation and persistent
 * requests. Each call checks its arguments and hands over to src/p2p;
 * MPI_Send and MPI_Recv go straight to the core's blocking calls without a
 * request or a handle. */
#include "mpi/request.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define FY_INLINE static inline __attribute__((always_inline))

/* ---- argument checks ------------------------------------------------- */

int fy_mpi_pt2pt_check(const char *fn, struct fy_comm *c, const void *buf,
                       MPI_Count count, struct fy_dtype **dtp,
                       MPI_Datatype dt_handle, int peer, int tag, bool is_recv)
{
    if (count < 0)
        return fy_mpi_err(c, MPI_ERR_COUNT, fn, "count %lld is negative",
                          (long long)count);
    /* Nothing to move: any datatype will do, even MPI_DATATYPE_NULL (as
     * MPICH and Open MPI accept; libraries pass it for empty parts). */
    if (count == 0 && dt_handle == MPI_DATATYPE_NULL)
        *dtp = fy_dtype_get(MPI_BYTE);
    const struct fy_dtype *dt = *dtp;
    if (dt == NULL)
        return fy_mpi_err(c, MPI_ERR_TYPE, fn,
                          "datatype 0x%x is not a valid datatype",
                          (unsigned)dt_handle);
    if (!dt->committed)
        return fy_mpi_err(c, MPI_ERR_TYPE, fn,
                          "datatype 0x%x has not been committed",
                          (unsigned)dt_handle);
    if (is_recv) {
        if (peer != MPI_ANY_SOURCE && peer != MPI_PROC_NULL &&
            (peer < 0 || peer >= c->p2p_group->size))
            return fy_mpi_err(c, MPI_ERR_RANK, fn,
                              "source rank %d is not in [0, %d) nor "
                              "MPI_ANY_SOURCE nor MPI_PROC_NULL",
                              peer, c->p2p_group->size);
        if (tag < 0 && tag != MPI_ANY_TAG)
            return fy_mpi_err(c, MPI_ERR_TAG, fn,
                              "tag %d is negative and not MPI_ANY_TAG", tag);
    } else {
        if (peer != MPI_PROC_NULL && (peer < 0 || peer >= c->p2p_group->size))
            return fy_mpi_err(c, MPI_ERR_RANK, fn,
                              "destination rank %d is not in [0, %d) nor "
                              "MPI_PROC_NULL",
                              peer, c->p2p_group->size);
        if (tag < 0)
            return fy_mpi_err(c, MPI_ERR_TAG, fn,
                              "tag %d is outside [0, MPI_TAG_UB=%d]", tag,
                              INT_MAX);
    }
    /* MPI_BOTTOM (NULL) is a legal buffer for a type built from absolute
     * addresses, so only a NULL buffer whose data would start at address
     * 0 is an error (what MPICH checks too). */
    if (buf == NULL && count > 0 && dt->size > 0 &&
        (dt->builtin || dt->true_lb == 0))
        return fy_mpi_err(c, MPI_ERR_BUFFER, fn,
                          "buffer is NULL for %lld elements of %lld bytes",
                          (long long)count, (long long)dt->size);
    return peer == MPI_PROC_NULL ? FY_PT2PT_PROC_NULL : 0;
}

/* Source and tag of a probe. */
static int probe_check(const char *fn, struct fy_comm *c, int src, int tag)
{
    if (src != MPI_ANY_SOURCE && src != MPI_PROC_NULL &&
        (src < 0 || src >= c->p2p_group->size))
        return fy_mpi_err(c, MPI_ERR_RANK, fn,
                          "source rank %d is not in [0, %d) nor "
                          "MPI_ANY_SOURCE nor MPI_PROC_NULL",
                          src, c->p2p_group->size);
    if (tag < 0 && tag != MPI_ANY_TAG)
        return fy_mpi_err(c, MPI_ERR_TAG, fn,
                          "tag %d is negative and not MPI_ANY_TAG", tag);
    return 0;
}

/* The class of a core error returned by a send or receive call. */
static int core_class(int err)
{
    return err == -EMSGSIZE ? MPI_ERR_TRUNCATE : fy_errno_to_class(err);
}

static int report_core_err(const char *fn, struct fy_comm *c, int err,
                           const char *what, int peer, int tag)
    __attribute__((cold, noinline));
static int report_core_err(const char *fn, struct fy_comm *c, int err,
                           const char *what, int peer, int tag)
{
    if (err == -EMSGSIZE)
        return fy_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                          "message (source %d, tag %d) is larger than the "
                          "receive buffer",
                          peer, tag);
    return fy_mpi_err(c, core_class(err), fn, "%s rank %d, tag %d: %s", what,
                      peer, tag, strerror(-err));
}

/* A request that completed with error class 'cls'. */
static int report_req_err(const char *fn, struct fy_comm *c, int cls, int index)
    __attribute__((cold, noinline));
static int report_req_err(const char *fn, struct fy_comm *c, int cls, int index)
{
    const char *why = cls == MPI_ERR_TRUNCATE
                          ? "the message was larger than the receive buffer"
                          : "the operation failed";
    if (index < 0)
        return fy_mpi_err(c, cls, fn, "request completed in error: %s", why);
    return fy_mpi_err(c, cls, fn, "request %d completed in error: %s", index,
                      why);
}

static int report_nomem(const char *fn, struct fy_comm *c)
{
    return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
}

/* ---- blocking send and receive (the hot paths) ------------------------ */

FY_INLINE int send_common(const char *fn, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, enum fy_send_mode mode)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    if (FY_UNLIKELY(!fy_pt2pt_send_ok(c, buf, count, dt, dest, tag))) {
        int rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype, dest, tag,
                                    false);
        if (rc)
            return rc == FY_PT2PT_PROC_NULL ? MPI_SUCCESS : rc;
    }
    int err = fy_p2p_send(buf, count, dt, dest, tag, c, c->ctx, mode);
    if (FY_UNLIKELY(err))
        return report_core_err(fn, c, err, "send to", dest, tag);
    return MPI_SUCCESS;
}

FY_API int PMPI_Send(const void *buf, int count, MPI_Datatype datatype,
                     int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    return send_common(__func__, buf, count, datatype, dest, tag, comm,
                       FY_SEND_STANDARD);
}
FY_ALIAS(MPI_Send)

FY_API int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    return send_common(__func__, buf, count, datatype, dest, tag, comm,
                       FY_SEND_STANDARD);
}
FY_ALIAS(MPI_Send_c)

FY_API int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    return send_common(__func__, buf, count, datatype, dest, tag, comm,
                       FY_SEND_SYNC);
}
FY_ALIAS(MPI_Ssend)

FY_API int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    return send_common(__func__, buf, count, datatype, dest, tag, comm,
                       FY_SEND_SYNC);
}
FY_ALIAS(MPI_Ssend_c)

FY_API int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    return send_common(__func__, buf, count, datatype, dest, tag, comm,
                       FY_SEND_READY);
}
FY_ALIAS(MPI_Rsend)

FY_API int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    return send_common(__func__, buf, count, datatype, dest, tag, comm,
                       FY_SEND_READY);
}
FY_ALIAS(MPI_Rsend_c)

FY_API int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    if (!fy_pt2pt_send_ok(c, buf, count, dt, dest, tag)) {
        int rc = fy_mpi_pt2pt_check(__func__, c, buf, count, &dt, datatype,
                                    dest, tag, false);
        if (rc)
            return rc == FY_PT2PT_PROC_NULL ? MPI_SUCCESS : rc;
    }
    return fy_bsend_start(__func__, buf, count, dt, dest, tag, c, NULL);
}
FY_ALIAS(MPI_Bsend)

FY_API int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    if (!fy_pt2pt_send_ok(c, buf, count, dt, dest, tag)) {
        int rc = fy_mpi_pt2pt_check(__func__, c, buf, count, &dt, datatype,
                                    dest, tag, false);
        if (rc)
            return rc == FY_PT2PT_PROC_NULL ? MPI_SUCCESS : rc;
    }
    return fy_bsend_start(__func__, buf, count, dt, dest, tag, c, NULL);
}
FY_ALIAS(MPI_Bsend_c)

FY_INLINE int recv_common(const char *fn, void *buf, MPI_Count count,
                          MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Status *status)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    if (FY_UNLIKELY(!fy_pt2pt_recv_ok(c, buf, count, dt, source, tag))) {
        int rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype, source,
                                    tag, true);
        if (rc == FY_PT2PT_PROC_NULL) {
            fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                                MPI_SUCCESS);
            return MPI_SUCCESS;
        }
        if (rc)
            return rc;
    }
    int src_out = source, tag_out = tag;
    MPI_Count bytes = 0;
    int err = fy_p2p_recv(buf, count, dt, source, tag, c, c->ctx, &src_out,
                          &tag_out, &bytes);
    if (FY_LIKELY(err == 0)) {
        fy_mreq_status_recv(status, src_out, tag_out, bytes, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    fy_mreq_status_recv(status, src_out, tag_out, bytes, false,
                        core_class(err));
    return report_core_err(fn, c, err, "receive from", src_out, tag_out);
}

FY_API int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source,
                     int tag, MPI_Comm comm, MPI_Status *status)
{
    FY_MT_ENTER();
    return recv_common(__func__, buf, count, datatype, source, tag, comm,
                       status);
}
FY_ALIAS(MPI_Recv)

FY_API int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                       int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    FY_MT_ENTER();
    return recv_common(__func__, buf, count, datatype, source, tag, comm,
                       status);
}
FY_ALIAS(MPI_Recv_c)

/* ---- non-blocking send and receive ------------------------------------ */

FY_INLINE int isend_common(const char *fn, const void *buf, MPI_Count count,
                           MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, enum fy_send_mode mode,
                           MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    if (FY_UNLIKELY(!fy_pt2pt_send_ok(c, buf, count, dt, dest, tag))) {
        int rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype, dest, tag,
                                    false);
        if (rc == FY_PT2PT_PROC_NULL) {
            if (fy_mreq_register(FY_MREQ_DONE_SEND, request))
                return report_nomem(fn, c);
            return MPI_SUCCESS;
        }
        if (rc)
            return rc;
    }
    struct fy_req *r;
    int err = fy_p2p_isend(buf, count, dt, dest, tag, c, c->ctx, mode, &r);
    if (FY_UNLIKELY(err))
        return report_core_err(fn, c, err, "send to", dest, tag);
    if (FY_UNLIKELY(fy_mreq_register((uintptr_t)r | FY_MREQ_SEND, request))) {
        /* No handle to give back: finish the send here so nothing is left
         * referring to the user's buffer. */
        (void)fy_req_wait(r);
        fy_req_free(r);
        return report_nomem(fn, c);
    }
    return MPI_SUCCESS;
}

FY_API int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isend_common(__func__, buf, count, datatype, dest, tag, comm,
                        FY_SEND_STANDARD, request);
}
FY_ALIAS(MPI_Isend)

FY_API int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isend_common(__func__, buf, count, datatype, dest, tag, comm,
                        FY_SEND_STANDARD, request);
}
FY_ALIAS(MPI_Isend_c)

FY_API int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isend_common(__func__, buf, count, datatype, dest, tag, comm,
                        FY_SEND_SYNC, request);
}
FY_ALIAS(MPI_Issend)

FY_API int PMPI_Issend_c(const void *buf, MPI_Count count,
                         MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isend_common(__func__, buf, count, datatype, dest, tag, comm,
                        FY_SEND_SYNC, request);
}
FY_ALIAS(MPI_Issend_c)

FY_API int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isend_common(__func__, buf, count, datatype, dest, tag, comm,
                        FY_SEND_READY, request);
}
FY_ALIAS(MPI_Irsend)

FY_API int PMPI_Irsend_c(const void *buf, MPI_Count count,
                         MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isend_common(__func__, buf, count, datatype, dest, tag, comm,
                        FY_SEND_READY, request);
}
FY_ALIAS(MPI_Irsend_c)

/* MPI_Ibsend completes as soon as the message sits in the attached buffer,
 * which happens before we return: the request is born complete (until
 * MPI_Cancel asks the message back: bsend.c). */
FY_INLINE int ibsend_common(const char *fn, const void *buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    int rc = MPI_SUCCESS;
    if (!fy_pt2pt_send_ok(c, buf, count, dt, dest, tag))
        rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype, dest, tag,
                                false);
    if (rc == FY_PT2PT_PROC_NULL) {
        if (fy_mreq_register(FY_MREQ_DONE_SEND, request))
            return report_nomem(fn, c);
        return MPI_SUCCESS;
    }
    uint64_t id = 0;
    if (rc == 0)
        rc = fy_bsend_start(fn, buf, count, dt, dest, tag, c, &id);
    if (rc)
        return rc;
    if (fy_bsend_request(id, c, request))
        return report_nomem(fn, c);
    return MPI_SUCCESS;
}

FY_API int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return ibsend_common(__func__, buf, count, datatype, dest, tag, comm,
                         request);
}
FY_ALIAS(MPI_Ibsend)

FY_API int PMPI_Ibsend_c(const void *buf, MPI_Count count,
                         MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return ibsend_common(__func__, buf, count, datatype, dest, tag, comm,
                         request);
}
FY_ALIAS(MPI_Ibsend_c)

FY_INLINE int irecv_common(const char *fn, void *buf, MPI_Count count,
                           MPI_Datatype datatype, int source, int tag,
                           MPI_Comm comm, MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    if (FY_UNLIKELY(!fy_pt2pt_recv_ok(c, buf, count, dt, source, tag))) {
        int rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype, source,
                                    tag, true);
        if (rc == FY_PT2PT_PROC_NULL) {
            if (fy_mreq_register(FY_MREQ_DONE_NULL, request))
                return report_nomem(fn, c);
            return MPI_SUCCESS;
        }
        if (rc)
            return rc;
    }
    struct fy_req *r;
    int err = fy_p2p_irecv(buf, count, dt, source, tag, c, c->ctx, &r);
    if (FY_UNLIKELY(err))
        return report_core_err(fn, c, err, "receive from", source, tag);
    if (FY_UNLIKELY(fy_mreq_register((uintptr_t)r | FY_MREQ_RECV, request))) {
        fy_p2p_cancel_recv(r);
        (void)fy_req_wait(r);
        fy_req_free(r);
        return report_nomem(fn, c);
    }
    return MPI_SUCCESS;
}

FY_API int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source,
                      int tag, MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return irecv_common(__func__, buf, count, datatype, source, tag, comm,
                        request);
}
FY_ALIAS(MPI_Irecv)

FY_API int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                        int source, int tag, MPI_Comm comm,
                        MPI_Request *request)
{
    FY_MT_ENTER();
    return irecv_common(__func__, buf, count, datatype, source, tag, comm,
                        request);
}
FY_ALIAS(MPI_Irecv_c)

/* ---- combined send and receive ---------------------------------------- */

/* Post the receive (unless from MPI_PROC_NULL), do the blocking send, then
 * finish the receive. Posting first is what makes a ring of Sendrecv calls
 * deadlock-free whatever protocol the send uses. */
static int sendrecv_run(const char *fn, struct fy_comm *c, const void *sbuf,
                        MPI_Count scount, struct fy_dtype *sdt, int dest,
                        int stag, void *rbuf, MPI_Count rcount,
                        struct fy_dtype *rdt, int source, int rtag,
                        MPI_Status *status)
{
    struct fy_req *rr = NULL;
    int err;
    if (source != MPI_PROC_NULL) {
        err = fy_p2p_irecv(rbuf, rcount, rdt, source, rtag, c, c->ctx, &rr);
        if (err)
            return report_core_err(fn, c, err, "receive from", source, rtag);
    }
    if (dest != MPI_PROC_NULL) {
        err = fy_p2p_send(sbuf, scount, sdt, dest, stag, c, c->ctx,
                          FY_SEND_STANDARD);
        if (err) {
            if (rr) {
                fy_p2p_cancel_recv(rr);
                (void)fy_req_wait(rr);
                fy_req_free(rr);
            }
            return report_core_err(fn, c, err, "send to", dest, stag);
        }
    }
    if (!rr) {
        fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    err = fy_req_wait(rr);
    int cls = err ? core_class(err) : MPI_SUCCESS;
    int src_out = rr->st_source, tag_out = rr->st_tag;
    fy_mreq_status_recv(status, src_out, tag_out, rr->st_bytes, rr->cancelled,
                        cls);
    fy_req_free(rr);
    if (err)
        return report_core_err(fn, c, err, "receive from", src_out, tag_out);
    return MPI_SUCCESS;
}

/* Check a Sendrecv's two halves; 0 when both are valid (either peer may be
 * MPI_PROC_NULL), else the error class already reported as 'fn'. */
static int sendrecv_check(const char *fn, struct fy_comm *c, const void *sbuf,
                          MPI_Count scount, struct fy_dtype **sdt,
                          MPI_Datatype stype, int dest, int stag,
                          const void *rbuf, MPI_Count rcount,
                          struct fy_dtype **rdt, MPI_Datatype rtype, int source,
                          int rtag)
{
    if (!fy_pt2pt_send_ok(c, sbuf, scount, *sdt, dest, stag)) {
        int rc = fy_mpi_pt2pt_check(fn, c, sbuf, scount, sdt, stype, dest, stag,
                                    false);
        if (rc > 0)
            return rc;
    }
    if (!fy_pt2pt_recv_ok(c, rbuf, rcount, *rdt, source, rtag)) {
        int rc = fy_mpi_pt2pt_check(fn, c, rbuf, rcount, rdt, rtype, source,
                                    rtag, true);
        if (rc > 0)
            return rc;
    }
    return 0;
}

static int sendrecv_common(const char *fn, const void *sendbuf,
                           MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                           int sendtag, void *recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, MPI_Status *status)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    struct fy_dtype *sdt = fy_dtype_get(sendtype);
    struct fy_dtype *rdt = fy_dtype_get(recvtype);
    int rc =
        sendrecv_check(fn, c, sendbuf, sendcount, &sdt, sendtype, dest, sendtag,
                       recvbuf, recvcount, &rdt, recvtype, source, recvtag);
    if (rc)
        return rc;
    return sendrecv_run(fn, c, sendbuf, sendcount, sdt, dest, sendtag, recvbuf,
                        recvcount, rdt, source, recvtag, status);
}

FY_API int PMPI_Sendrecv(const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, int dest, int sendtag,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int source, int recvtag, MPI_Comm comm,
                         MPI_Status *status)
{
    FY_MT_ENTER();
    return sendrecv_common(__func__, sendbuf, sendcount, sendtype, dest,
                           sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag, comm, status);
}
FY_ALIAS(MPI_Sendrecv)

FY_API int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, int dest, int sendtag,
                           void *recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, MPI_Status *status)
{
    FY_MT_ENTER();
    return sendrecv_common(__func__, sendbuf, sendcount, sendtype, dest,
                           sendtag, recvbuf, recvcount, recvtype, source,
                           recvtag, comm, status);
}
FY_ALIAS(MPI_Sendrecv_c)

/* The outgoing message of a Sendrecv_replace, packed into a temporary so
 * the incoming one may land in 'buf' while ours is still in flight. Returns
 * the temporary (NULL for nothing to send, 'small' when it fits there) or
 * reports MPI_ERR_NO_MEM as 'fn' and sets *rc_out. */
static void *replace_pack(const char *fn, struct fy_comm *c, const void *buf,
                          MPI_Count count, struct fy_dtype *dt, int dest,
                          void *small, size_t small_size, MPI_Count *bytes_out,
                          int *rc_out)
{
    MPI_Count bytes = dest == MPI_PROC_NULL ? 0 : count * dt->size;
    void *tmp = small;
    *rc_out = MPI_SUCCESS;
    if (bytes > (MPI_Count)small_size) {
        tmp = malloc((size_t)bytes);
        if (!tmp) {
            *rc_out = fy_mpi_err(c, MPI_ERR_NO_MEM, fn,
                                 "cannot allocate %lld bytes to hold the "
                                 "outgoing message",
                                 (long long)bytes);
            return NULL;
        }
    }
    if (bytes > 0)
        fy_dtype_pack(buf, count, dt, tmp);
    *bytes_out = bytes;
    return tmp;
}

static int sendrecv_replace_common(const char *fn, void *buf, MPI_Count count,
                                   MPI_Datatype datatype, int dest, int sendtag,
                                   int source, int recvtag, MPI_Comm comm,
                                   MPI_Status *status)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    int rc = sendrecv_check(fn, c, buf, count, &dt, datatype, dest, sendtag,
                            buf, count, &dt, datatype, source, recvtag);
    if (rc)
        return rc;
    unsigned char small[256];
    MPI_Count bytes = 0;
    void *tmp = replace_pack(fn, c, buf, count, dt, dest, small, sizeof(small),
                             &bytes, &rc);
    if (rc)
        return rc;
    rc = sendrecv_run(fn, c, tmp, bytes, fy_dtype_get(MPI_BYTE), dest, sendtag,
                      buf, count, dt, source, recvtag, status);
    if (tmp != small)
        free(tmp);
    return rc;
}

FY_API int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                                 int dest, int sendtag, int source, int recvtag,
                                 MPI_Comm comm, MPI_Status *status)
{
    FY_MT_ENTER();
    return sendrecv_replace_common(__func__, buf, count, datatype, dest,
                                   sendtag, source, recvtag, comm, status);
}
FY_ALIAS(MPI_Sendrecv_replace)

FY_API int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count,
                                   MPI_Datatype datatype, int dest, int sendtag,
                                   int source, int recvtag, MPI_Comm comm,
                                   MPI_Status *status)
{
    FY_MT_ENTER();
    return sendrecv_replace_common(__func__, buf, count, datatype, dest,
                                   sendtag, source, recvtag, comm, status);
}
FY_ALIAS(MPI_Sendrecv_replace_c)

/* ---- nonblocking combined send and receive (MPI-4) ---------------------
 * One request over a core send and a core receive (either absent for
 * MPI_PROC_NULL); complete when both are. Its status is the receive's, its
 * error the receive's, else the send's. The _replace forms send from a
 * packed copy the request owns. */

struct isendrecv {
    struct fy_mreq_ext ext; /* first: the request layer's view */
    struct fy_req *sr, *rr; /* NULL for MPI_PROC_NULL */
    void *tmp;              /* the packed outgoing message, or NULL */
};

static void isendrecv_progress(struct fy_mreq_ext *x)
{
    struct isendrecv *q = (struct isendrecv *)x;
    if ((q->sr && !q->sr->complete) || (q->rr && !q->rr->complete))
        return;
    if (q->rr) {
        x->err = q->rr->err;
        x->st_source = q->rr->st_source;
        x->st_tag = q->rr->st_tag;
        x->st_bytes = q->rr->st_bytes;
    } else {
        x->st_source = MPI_PROC_NULL;
        x->st_tag = MPI_ANY_TAG;
        x->st_bytes = 0;
    }
    if (x->err == 0 && q->sr && q->sr->err != -ECANCELED)
        x->err = q->sr->err;
    x->complete = true;
}

static int isendrecv_free(struct fy_mreq_ext *x)
{
    struct isendrecv *q = (struct isendrecv *)x;
    if (q->sr)
        fy_req_free(q->sr);
    if (q->rr)
        fy_req_free(q->rr);
    free(q->tmp);
    free(q);
    return MPI_SUCCESS;
}

static const struct fy_mreq_ext_ops isendrecv_ops = {
    .progress = isendrecv_progress,
    .free = isendrecv_free,
};

/* Start both halves (arguments already checked) and name the request. On
 * failure nothing is left in flight and 'tmp' is freed. */
static int isendrecv_start(const char *fn, struct fy_comm *c, const void *sbuf,
                           MPI_Count scount, struct fy_dtype *sdt, int dest,
                           int stag, void *rbuf, MPI_Count rcount,
                           struct fy_dtype *rdt, int source, int rtag,
                           void *tmp, MPI_Request *request)
{
    struct isendrecv *q = calloc(1, sizeof(*q));
    if (!q) {
        free(tmp);
        return report_nomem(fn, c);
    }
    q->ext.ops = &isendrecv_ops;
    q->ext.comm = c;
    q->tmp = tmp;
    int err;
    if (source != MPI_PROC_NULL) {
        err = fy_p2p_irecv(rbuf, rcount, rdt, source, rtag, c, c->ctx, &q->rr);
        if (err) {
            q->rr = NULL;
            (void)isendrecv_free(&q->ext);
            return report_core_err(fn, c, err, "receive from", source, rtag);
        }
    }
    if (dest != MPI_PROC_NULL) {
        err = fy_p2p_isend(sbuf, scount, sdt, dest, stag, c, c->ctx,
                           FY_SEND_STANDARD, &q->sr);
        if (err) {
            q->sr = NULL;
            if (q->rr) {
                fy_p2p_cancel_recv(q->rr);
                (void)fy_req_wait(q->rr);
            }
            (void)isendrecv_free(&q->ext);
            return report_core_err(fn, c, err, "send to", dest, stag);
        }
    }
    if (fy_mreq_ext_register(&q->ext, request)) {
        /* No handle to give back: finish here so nothing refers to the
         * user's buffers afterwards. */
        if (q->sr)
            (void)fy_req_wait(q->sr);
        if (q->rr)
            (void)fy_req_wait(q->rr);
        (void)isendrecv_free(&q->ext);
        return report_nomem(fn, c);
    }
    return MPI_SUCCESS;
}

static int isendrecv_common(const char *fn, const void *sendbuf,
                            MPI_Count sendcount, MPI_Datatype sendtype,
                            int dest, int sendtag, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype,
                            int source, int recvtag, MPI_Comm comm,
                            MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    struct fy_dtype *sdt = fy_dtype_get(sendtype);
    struct fy_dtype *rdt = fy_dtype_get(recvtype);
    int rc =
        sendrecv_check(fn, c, sendbuf, sendcount, &sdt, sendtype, dest, sendtag,
                       recvbuf, recvcount, &rdt, recvtype, source, recvtag);
    if (rc)
        return rc;
    return isendrecv_start(fn, c, sendbuf, sendcount, sdt, dest, sendtag,
                           recvbuf, recvcount, rdt, source, recvtag, NULL,
                           request);
}

FY_API int PMPI_Isendrecv(const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, int dest, int sendtag,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype,
                          int source, int recvtag, MPI_Comm comm,
                          MPI_Request *request)
{
    FY_MT_ENTER();
    return isendrecv_common(__func__, sendbuf, sendcount, sendtype, dest,
                            sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm, request);
}
FY_ALIAS(MPI_Isendrecv)

FY_API int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, int dest, int sendtag,
                            void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int source, int recvtag,
                            MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isendrecv_common(__func__, sendbuf, sendcount, sendtype, dest,
                            sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm, request);
}
FY_ALIAS(MPI_Isendrecv_c)

static int isendrecv_replace_common(const char *fn, void *buf, MPI_Count count,
                                    MPI_Datatype datatype, int dest,
                                    int sendtag, int source, int recvtag,
                                    MPI_Comm comm, MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    int rc = sendrecv_check(fn, c, buf, count, &dt, datatype, dest, sendtag,
                            buf, count, &dt, datatype, source, recvtag);
    if (rc)
        return rc;
    /* The copy outlives this call, so it is always on the heap. */
    MPI_Count bytes = 0;
    void *tmp = replace_pack(fn, c, buf, count, dt, dest, NULL, 0, &bytes, &rc);
    if (rc)
        return rc;
    return isendrecv_start(fn, c, tmp, bytes, fy_dtype_get(MPI_BYTE), dest,
                           sendtag, buf, count, dt, source, recvtag, tmp,
                           request);
}

FY_API int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype,
                                  int dest, int sendtag, int source,
                                  int recvtag, MPI_Comm comm,
                                  MPI_Request *request)
{
    FY_MT_ENTER();
    return isendrecv_replace_common(__func__, buf, count, datatype, dest,
                                    sendtag, source, recvtag, comm, request);
}
FY_ALIAS(MPI_Isendrecv_replace)

FY_API int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count,
                                    MPI_Datatype datatype, int dest,
                                    int sendtag, int source, int recvtag,
                                    MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return isendrecv_replace_common(__func__, buf, count, datatype, dest,
                                    sendtag, source, recvtag, comm, request);
}
FY_ALIAS(MPI_Isendrecv_replace_c)

/* ---- probes ----------------------------------------------------------- */

FY_API int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
                       MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    FY_CHECK(flag != NULL, c, MPI_ERR_ARG, __func__, "flag is NULL");
    int rc = probe_check(__func__, c, source, tag);
    if (rc)
        return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    bool found = false;
    int src_out, tag_out;
    MPI_Count bytes;
    int err = fy_p2p_iprobe(source, tag, c, c->ctx, &found, &src_out, &tag_out,
                            &bytes);
    if (err)
        return report_core_err(__func__, c, err, "probe for", source, tag);
    *flag = found;
    if (found)
        fy_mreq_status_recv(status, src_out, tag_out, bytes, false,
                            MPI_SUCCESS);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Iprobe)

FY_API int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_GET_COMM(c, comm, __func__);
    int rc = probe_check(__func__, c, source, tag);
    if (rc)
        return rc;
    if (source == MPI_PROC_NULL) {
        fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    int src_out, tag_out;
    MPI_Count bytes;
    int err = fy_p2p_probe(source, tag, c, c->ctx, &src_out, &tag_out, &bytes);
    if (err)
        return report_core_err(__func__, c, err, "probe for", source, tag);
    fy_mreq_status_recv(status, src_out, tag_out, bytes, false, MPI_SUCCESS);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Probe)

/* ---- completion: single request --------------------------------------- */

/* Resolve *request; 0 with *w_out = 0 means MPI_REQUEST_NULL. */
FY_INLINE int req_resolve(const char *fn, const MPI_Request *request,
                          uintptr_t *w_out)
{
    FY_CHECK(request != NULL, NULL, MPI_ERR_ARG, fn, "request pointer is NULL");
    MPI_Request h = *request;
    if (h == MPI_REQUEST_NULL) {
        *w_out = 0;
        return 0;
    }
    uintptr_t w = fy_mreq_lookup(h);
    FY_CHECK(w != 0, NULL, MPI_ERR_REQUEST, fn,
             "request 0x%x is not a valid request", (unsigned)h);
    *w_out = w;
    return 0;
}

FY_API int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    uintptr_t w = 0;
    int rc = req_resolve(__func__, request, &w);
    if (FY_UNLIKELY(rc))
        return rc;
    if (FY_UNLIKELY(w == 0)) {
        fy_mreq_status_empty(status);
        return MPI_SUCCESS;
    }
    fy_mreq_wait_done(w);
    fy_mreq_housekeep();
    struct fy_comm *c;
    int cls = fy_mreq_complete(request, w, status, &c);
    if (FY_UNLIKELY(cls))
        return report_req_err(__func__, c, cls, -1);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Wait)

FY_API int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(flag != NULL, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    uintptr_t w = 0;
    int rc = req_resolve(__func__, request, &w);
    if (FY_UNLIKELY(rc))
        return rc;
    if (FY_UNLIKELY(w == 0)) {
        *flag = 1;
        fy_mreq_status_empty(status);
        return MPI_SUCCESS;
    }
    fy_mreq_housekeep();
    if (!fy_mreq_poll(w)) {
        (void)fy_progress_poll();
        if (!fy_mreq_poll(w)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    struct fy_comm *c;
    int cls = fy_mreq_complete(request, w, status, &c);
    if (FY_UNLIKELY(cls))
        return report_req_err(__func__, c, cls, -1);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Test)

FY_API int PMPI_Request_get_status(MPI_Request request, int *flag,
                                   MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(flag != NULL, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    uintptr_t w = 0;
    int rc = req_resolve(__func__, &request, &w);
    if (rc)
        return rc;
    if (w == 0) {
        *flag = 1;
        fy_mreq_status_empty(status);
        return MPI_SUCCESS;
    }
    fy_mreq_housekeep();
    if (!fy_mreq_poll(w)) {
        (void)fy_progress_poll();
        if (!fy_mreq_poll(w)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    int cls = fy_mreq_peek(w, status);
    if (cls)
        return report_req_err(__func__, NULL, cls, -1);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Request_get_status)

FY_API int PMPI_Request_free(MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    uintptr_t w = 0;
    int rc = req_resolve(__func__, request, &w);
    if (rc)
        return rc;
    FY_CHECK(w != 0, NULL, MPI_ERR_REQUEST, __func__,
             "request is MPI_REQUEST_NULL");
    fy_mreq_free(request, w);
    fy_mreq_housekeep();
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Request_free)

/* Receives that have not matched are cancelled; sends are never cancelled
 * (MPI allows a cancel to fail): they complete normally and
 * MPI_Test_cancelled reports false. See fy_mreq_cancel(). */
FY_API int PMPI_Cancel(MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    uintptr_t w = 0;
    int rc = req_resolve(__func__, request, &w);
    if (rc)
        return rc;
    FY_CHECK(w != 0, NULL, MPI_ERR_REQUEST, __func__,
             "request is MPI_REQUEST_NULL");
    rc = fy_mreq_cancel(w);
    if (rc != MPI_SUCCESS) /* a generalized request's cancel_fn */
        return fy_mpi_err(NULL, rc, __func__,
                          "the generalized request's cancel_fn returned %d",
                          rc);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Cancel)

FY_API int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    FY_MT_NONE();
    FY_CHECK_INIT(__func__);
    FY_CHECK(status != NULL && status != MPI_STATUS_IGNORE, NULL, MPI_ERR_ARG,
             __func__, "status is NULL or MPI_STATUS_IGNORE");
    FY_CHECK(flag != NULL, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    /* MPICH's layout: the cancelled flag is bit 0 of count_hi_and_cancelled. */
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Test_cancelled)

/* ---- completion: arrays of requests ----------------------------------- */

/* Per-request scratch for the array calls: the resolved word (0 once done
 * or for MPI_REQUEST_NULL) and the error class it completed with. Small
 * arrays live on the stack. */
struct slot {
    uintptr_t w;
    int cls;
};
/* Applications test a few hundred requests at a time (16 bytes each). */
enum { SLOTS_ON_STACK = 256 };

/* Check count and array, resolve every handle. Returns 0 (with *slots_out
 * pointing at stack or heap) or an error class already reported. */
static int slots_resolve(const char *fn, int count, const MPI_Request reqs[],
                         struct slot *stack, struct slot **slots_out)
{
    FY_CHECK(count >= 0, NULL, MPI_ERR_COUNT, fn, "count %d is negative",
             count);
    FY_CHECK(count == 0 || reqs != NULL, NULL, MPI_ERR_ARG, fn,
             "array_of_requests is NULL");
    struct slot *s = stack;
    if (count > SLOTS_ON_STACK) {
        s = malloc((size_t)count * sizeof(*s));
        if (!s)
            return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn,
                              "out of memory for %d requests", count);
    }
    for (int i = 0; i < count; i++) {
        s[i].cls = MPI_SUCCESS;
        if (reqs[i] == MPI_REQUEST_NULL) {
            s[i].w = 0;
            continue;
        }
        s[i].w = fy_mreq_lookup(reqs[i]);
        if (!s[i].w) {
            if (s != stack)
                free(s);
            return fy_mpi_err(NULL, MPI_ERR_REQUEST, fn,
                              "array_of_requests[%d] = 0x%x is not a valid "
                              "request",
                              i, (unsigned)reqs[i]);
        }
    }
    *slots_out = s;
    return 0;
}

static void slots_release(struct slot *s, struct slot *stack)
{
    if (s != stack)
        free(s);
}

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    /* A NULL array is taken as MPI_STATUSES_IGNORE, not dereferenced. */
    if ((uintptr_t)statuses <= (uintptr_t)MPI_STATUSES_IGNORE)
        return MPI_STATUS_IGNORE;
    return &statuses[i];
}

/* One wait-loop pass found nothing: drive the engine, and if it did
 * nothing either, let the idle policy spin, yield or sleep. */
static void idle_pass(unsigned *spins)
{
    if (fy_progress() == 0)
        fy_progress_idle(spins);
    else
        *spins = 0;
}

/* MPI_ERR_IN_STATUS for the array calls: every status of the set gets its
 * own MPI_ERROR (MPI_SUCCESS or the failure's class). */
static int report_in_status(const char *fn, struct fy_comm *c, int first_bad,
                            int first_cls) __attribute__((cold, noinline));
static int report_in_status(const char *fn, struct fy_comm *c, int first_bad,
                            int first_cls)
{
    return fy_mpi_err(c, MPI_ERR_IN_STATUS, fn,
                      "request %d completed with %s%s", first_bad,
                      fy_errclass_name(first_cls),
                      first_cls == MPI_ERR_TRUNCATE
                          ? " (message larger than the receive buffer)"
                          : "");
}

FY_API int PMPI_Waitall(int count, MPI_Request array_of_requests[],
                        MPI_Status array_of_statuses[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    struct slot stack[SLOTS_ON_STACK], *s;
    int rc = slots_resolve(__func__, count, array_of_requests, stack, &s);
    if (FY_UNLIKELY(rc))
        return rc;
    int pending = 0;
    for (int i = 0; i < count; i++) {
        if (s[i].w)
            pending++;
        else
            fy_mreq_status_empty(status_at(array_of_statuses, i));
    }
    int first_bad = -1;
    struct fy_comm *bad_comm = NULL;
    unsigned spins = 0;
    for (;;) {
        for (int i = 0; i < count && pending; i++) {
            if (!s[i].w || !fy_mreq_poll(s[i].w))
                continue;
            struct fy_comm *c;
            s[i].cls = fy_mreq_complete(&array_of_requests[i], s[i].w,
                                        status_at(array_of_statuses, i), &c);
            s[i].w = 0;
            pending--;
            if (FY_UNLIKELY(s[i].cls) && first_bad < 0) {
                first_bad = i;
                bad_comm = c;
            }
        }
        if (!pending)
            break;
        idle_pass(&spins);
    }
    fy_mreq_housekeep();
    if (FY_LIKELY(first_bad < 0)) {
        slots_release(s, stack);
        return MPI_SUCCESS;
    }
    int first_cls = s[first_bad].cls;
    if ((uintptr_t)array_of_statuses > (uintptr_t)MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; i++)
            array_of_statuses[i].MPI_ERROR = s[i].cls;
    slots_release(s, stack);
    return report_in_status(__func__, bad_comm, first_bad, first_cls);
}
FY_ALIAS(MPI_Waitall)

FY_API int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                        MPI_Status array_of_statuses[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(flag != NULL, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    struct slot stack[SLOTS_ON_STACK], *s;
    int rc = slots_resolve(__func__, count, array_of_requests, stack, &s);
    if (rc)
        return rc;
    fy_mreq_housekeep();
    /* All or nothing: complete none unless every one is done. */
    bool all = true;
    for (int pass = 0; pass < 2; pass++) {
        all = true;
        for (int i = 0; i < count && all; i++)
            all = !s[i].w || fy_mreq_poll(s[i].w);
        if (all || pass == 1)
            break;
        (void)fy_progress_poll();
    }
    if (!all) {
        *flag = 0;
        slots_release(s, stack);
        return MPI_SUCCESS;
    }
    *flag = 1;
    int first_bad = -1;
    struct fy_comm *bad_comm = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = status_at(array_of_statuses, i);
        if (!s[i].w) {
            fy_mreq_status_empty(st);
            continue;
        }
        struct fy_comm *c;
        s[i].cls = fy_mreq_complete(&array_of_requests[i], s[i].w, st, &c);
        if (s[i].cls && first_bad < 0) {
            first_bad = i;
            bad_comm = c;
        }
    }
    if (first_bad < 0) {
        slots_release(s, stack);
        return MPI_SUCCESS;
    }
    int first_cls = s[first_bad].cls;
    if ((uintptr_t)array_of_statuses > (uintptr_t)MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; i++)
            array_of_statuses[i].MPI_ERROR = s[i].cls;
    slots_release(s, stack);
    return report_in_status(__func__, bad_comm, first_bad, first_cls);
}
FY_ALIAS(MPI_Testall)

/* Shared by Waitany/Testany: the index of a done active request, -1 if
 * none is done, or -2 if none is active at all. */
static int any_scan(int count, const struct slot *s)
{
    bool any_active = false;
    for (int i = 0; i < count; i++) {
        if (!s[i].w || !fy_mreq_active(s[i].w))
            continue;
        any_active = true;
        if (fy_mreq_poll(s[i].w))
            return i;
    }
    return any_active ? -1 : -2;
}

/* Complete request i of an 'any' call and report its error (not
 * MPI_ERR_IN_STATUS: a single status is returned). */
static int any_complete(const char *fn, MPI_Request reqs[], struct slot *s,
                        struct slot *stack, int i, int *index,
                        MPI_Status *status)
{
    struct fy_comm *c;
    int cls = fy_mreq_complete(&reqs[i], s[i].w, status, &c);
    slots_release(s, stack);
    *index = i;
    if (cls)
        return report_req_err(fn, c, cls, i);
    return MPI_SUCCESS;
}

FY_API int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index,
                        MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(index != NULL, NULL, MPI_ERR_ARG, __func__, "index is NULL");
    struct slot stack[SLOTS_ON_STACK], *s;
    int rc = slots_resolve(__func__, count, array_of_requests, stack, &s);
    if (rc)
        return rc;
    fy_mreq_housekeep();
    unsigned spins = 0;
    for (;;) {
        int i = any_scan(count, s);
        if (i >= 0)
            return any_complete(__func__, array_of_requests, s, stack, i, index,
                                status);
        if (i == -2) {
            slots_release(s, stack);
            *index = MPI_UNDEFINED;
            fy_mreq_status_empty(status);
            return MPI_SUCCESS;
        }
        idle_pass(&spins);
    }
}
FY_ALIAS(MPI_Waitany)

FY_API int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index,
                        int *flag, MPI_Status *status)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(index != NULL, NULL, MPI_ERR_ARG, __func__, "index is NULL");
    FY_CHECK(flag != NULL, NULL, MPI_ERR_ARG, __func__, "flag is NULL");
    struct slot stack[SLOTS_ON_STACK], *s;
    int rc = slots_resolve(__func__, count, array_of_requests, stack, &s);
    if (rc)
        return rc;
    fy_mreq_housekeep();
    int i = any_scan(count, s);
    if (i == -1) {
        (void)fy_progress_poll();
        i = any_scan(count, s);
    }
    if (i >= 0) {
        *flag = 1;
        return any_complete(__func__, array_of_requests, s, stack, i, index,
                            status);
    }
    slots_release(s, stack);
    *index = MPI_UNDEFINED;
    if (i == -2) { /* no active request: flag true, empty status */
        *flag = 1;
        fy_mreq_status_empty(status);
    } else {
        *flag = 0;
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Testany)

/* Shared by Waitsome/Testsome: complete every done active request. Returns
 * how many (or -1 if none is active), and reports errors in the statuses. */
static int some_collect(const char *fn, int count, MPI_Request reqs[],
                        struct slot *s, int indices[], MPI_Status statuses[],
                        int *rc_out)
{
    bool any_active = false;
    int n = 0, first_bad = -1, first_cls = 0;
    struct fy_comm *bad_comm = NULL;
    for (int i = 0; i < count; i++) {
        if (!s[i].w || !fy_mreq_active(s[i].w))
            continue;
        any_active = true;
        if (!fy_mreq_poll(s[i].w))
            continue;
        struct fy_comm *c;
        int cls =
            fy_mreq_complete(&reqs[i], s[i].w, status_at(statuses, n), &c);
        s[i].w = 0;
        s[n].cls = cls; /* slots below i are no longer read */
        if (cls && first_bad < 0) {
            first_bad = i;
            first_cls = cls;
            bad_comm = c;
        }
        indices[n++] = i;
    }
    *rc_out = MPI_SUCCESS;
    if (first_bad >= 0) {
        if ((uintptr_t)statuses > (uintptr_t)MPI_STATUSES_IGNORE)
            for (int k = 0; k < n; k++)
                statuses[k].MPI_ERROR = s[k].cls;
        *rc_out = report_in_status(fn, bad_comm, first_bad, first_cls);
    }
    return any_active ? n : -1;
}

static int some_check(const char *fn, int *outcount, int indices[], int incount)
{
    FY_CHECK(outcount != NULL, NULL, MPI_ERR_ARG, fn, "outcount is NULL");
    FY_CHECK(incount <= 0 || indices != NULL, NULL, MPI_ERR_ARG, fn,
             "array_of_indices is NULL");
    return 0;
}

FY_API int PMPI_Waitsome(int incount, MPI_Request array_of_requests[],
                         int *outcount, int array_of_indices[],
                         MPI_Status array_of_statuses[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    int rc = some_check(__func__, outcount, array_of_indices, incount);
    if (rc)
        return rc;
    struct slot stack[SLOTS_ON_STACK], *s;
    rc = slots_resolve(__func__, incount, array_of_requests, stack, &s);
    if (rc)
        return rc;
    fy_mreq_housekeep();
    unsigned spins = 0;
    int n;
    for (;;) {
        n = some_collect(__func__, incount, array_of_requests, s,
                         array_of_indices, array_of_statuses, &rc);
        if (n != 0)
            break;
        idle_pass(&spins);
    }
    slots_release(s, stack);
    *outcount = n < 0 ? MPI_UNDEFINED : n;
    return rc;
}
FY_ALIAS(MPI_Waitsome)

FY_API int PMPI_Testsome(int incount, MPI_Request array_of_requests[],
                         int *outcount, int array_of_indices[],
                         MPI_Status array_of_statuses[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    int rc = some_check(__func__, outcount, array_of_indices, incount);
    if (rc)
        return rc;
    struct slot stack[SLOTS_ON_STACK], *s;
    rc = slots_resolve(__func__, incount, array_of_requests, stack, &s);
    if (rc)
        return rc;
    fy_mreq_housekeep();
    (void)fy_progress_poll();
    int n = some_collect(__func__, incount, array_of_requests, s,
                         array_of_indices, array_of_statuses, &rc);
    slots_release(s, stack);
    *outcount = n < 0 ? MPI_UNDEFINED : n;
    return rc;
}
FY_ALIAS(MPI_Testsome)

/* ---- persistent requests ---------------------------------------------- */

int fy_preq_start(const char *fn, struct fy_preq *p)
{
    int err = 0;
    p->r = NULL;
    p->bwatch = (struct fy_bsend_watch){0};
    p->bsend_id = 0;
    if (p->coll)
        return fy_pcoll_start(fn, p);
    if (p->kind == FY_PREQ_PSEND || p->kind == FY_PREQ_PRECV)
        return fy_part_start(fn, p);
    if (p->peer == MPI_PROC_NULL) {
        p->active = true; /* completes at once */
        return MPI_SUCCESS;
    }
    switch (p->kind) {
    case FY_PREQ_SEND:
        err = fy_p2p_isend(p->buf, p->count, p->dt, p->peer, p->tag, p->comm,
                           p->comm->ctx, (enum fy_send_mode)p->mode, &p->r);
        break;
    case FY_PREQ_RECV:
        err = fy_p2p_irecv(p->buf, p->count, p->dt, p->peer, p->tag, p->comm,
                           p->comm->ctx, &p->r);
        break;
    case FY_PREQ_BSEND: {
        int cls = fy_bsend_start(fn, p->buf, p->count, p->dt, p->peer, p->tag,
                                 p->comm, &p->bsend_id);
        if (cls)
            return cls;
        break;
    }
    default:
        break;
    }
    if (err) {
        p->r = NULL;
        return report_core_err(fn, p->comm, err,
                               p->kind == FY_PREQ_RECV ? "receive from"
                                                       : "send to",
                               p->peer, p->tag);
    }
    p->active = true;
    return MPI_SUCCESS;
}

static int preq_init(const char *fn, enum fy_preq_kind kind,
                     enum fy_send_mode mode, const void *buf, MPI_Count count,
                     MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
                     MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    struct fy_dtype *dt = fy_dtype_get(datatype);
    bool is_recv = kind == FY_PREQ_RECV;
    bool ok = is_recv ? fy_pt2pt_recv_ok(c, buf, count, dt, peer, tag)
                      : fy_pt2pt_send_ok(c, buf, count, dt, peer, tag);
    if (!ok) {
        int rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype, peer, tag,
                                    is_recv);
        if (rc > 0)
            return rc;
    }
    if (fy_preq_create(kind, mode, buf, count, dt, peer, tag, c, request))
        return report_nomem(fn, c);
    return MPI_SUCCESS;
}

FY_API int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype,
                          int dest, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_SEND, FY_SEND_STANDARD, buf, count,
                     datatype, dest, tag, comm, request);
}
FY_ALIAS(MPI_Send_init)

FY_API int PMPI_Send_init_c(const void *buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_SEND, FY_SEND_STANDARD, buf, count,
                     datatype, dest, tag, comm, request);
}
FY_ALIAS(MPI_Send_init_c)

FY_API int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_SEND, FY_SEND_SYNC, buf, count, datatype,
                     dest, tag, comm, request);
}
FY_ALIAS(MPI_Ssend_init)

FY_API int PMPI_Ssend_init_c(const void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_SEND, FY_SEND_SYNC, buf, count, datatype,
                     dest, tag, comm, request);
}
FY_ALIAS(MPI_Ssend_init_c)

FY_API int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_SEND, FY_SEND_READY, buf, count,
                     datatype, dest, tag, comm, request);
}
FY_ALIAS(MPI_Rsend_init)

FY_API int PMPI_Rsend_init_c(const void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_SEND, FY_SEND_READY, buf, count,
                     datatype, dest, tag, comm, request);
}
FY_ALIAS(MPI_Rsend_init_c)

FY_API int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype,
                           int dest, int tag, MPI_Comm comm,
                           MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_BSEND, FY_SEND_STANDARD, buf, count,
                     datatype, dest, tag, comm, request);
}
FY_ALIAS(MPI_Bsend_init)

FY_API int PMPI_Bsend_init_c(const void *buf, MPI_Count count,
                             MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_BSEND, FY_SEND_STANDARD, buf, count,
                     datatype, dest, tag, comm, request);
}
FY_ALIAS(MPI_Bsend_init_c)

FY_API int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype,
                          int source, int tag, MPI_Comm comm,
                          MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_RECV, FY_SEND_STANDARD, buf, count,
                     datatype, source, tag, comm, request);
}
FY_ALIAS(MPI_Recv_init)

FY_API int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                            int source, int tag, MPI_Comm comm,
                            MPI_Request *request)
{
    FY_MT_ENTER();
    return preq_init(__func__, FY_PREQ_RECV, FY_SEND_STANDARD, buf, count,
                     datatype, source, tag, comm, request);
}
FY_ALIAS(MPI_Recv_init_c)

/* The persistent request behind a handle, checked to be startable. */
static int preq_resolve(const char *fn, MPI_Request h, int index,
                        struct fy_preq **p_out)
{
    uintptr_t w = h == MPI_REQUEST_NULL ? 0 : fy_mreq_lookup(h);
    if (!w || fy_mreq_tag(w) != FY_MREQ_PERSIST) {
        if (index < 0)
            return fy_mpi_err(NULL, MPI_ERR_REQUEST, fn,
                              "request 0x%x is not a persistent request",
                              (unsigned)h);
        return fy_mpi_err(NULL, MPI_ERR_REQUEST, fn,
                          "array_of_requests[%d] = 0x%x is not a persistent "
                          "request",
                          index, (unsigned)h);
    }
    struct fy_preq *p = fy_mreq_obj(w);
    if (p->active)
        return fy_mpi_err(p->comm, MPI_ERR_REQUEST, fn,
                          "request 0x%x is already active", (unsigned)h);
    *p_out = p;
    return 0;
}

FY_API int PMPI_Start(MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(request != NULL, NULL, MPI_ERR_ARG, __func__,
             "request pointer is NULL");
    struct fy_preq *p = NULL;
    int rc = preq_resolve(__func__, *request, -1, &p);
    if (rc)
        return rc;
    return fy_preq_start(__func__, p);
}
FY_ALIAS(MPI_Start)

FY_API int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    FY_MT_ENTER();
    FY_CHECK_INIT(__func__);
    FY_CHECK(count >= 0, NULL, MPI_ERR_COUNT, __func__, "count %d is negative",
             count);
    FY_CHECK(count == 0 || array_of_requests != NULL, NULL, MPI_ERR_ARG,
             __func__, "array_of_requests is NULL");
    /* Check all before starting any, so an error leaves none started. */
    for (int i = 0; i < count; i++) {
        struct fy_preq *p = NULL;
        int rc = preq_resolve(__func__, array_of_requests[i], i, &p);
        if (rc)
            return rc;
    }
    for (int i = 0; i < count; i++) {
        /* Resolved again: a handle listed twice is active the second time. */
        struct fy_preq *p = NULL;
        int rc = preq_resolve(__func__, array_of_requests[i], i, &p);
        if (rc == 0)
            rc = fy_preq_start(__func__, p);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Startall)

/* ---- matched probe and receive (MPI_Mprobe family) -------------------- */

/* A message taken off the unexpected queue by a matched probe; its handle
 * is a direct handle of this table (MPICH gives messages request-type
 * handles, so MPI_MESSAGE_NULL == MPI_REQUEST_NULL). */
struct fy_message {
    void *msg; /* the core's opaque message */
    struct fy_comm *comm;
};
static struct fy_handle_table messages = FY_HANDLE_TABLE_INIT(FY_HT_REQUEST);

static int improbe_common(const char *fn, int source, int tag, MPI_Comm comm,
                          bool block, int *flag, MPI_Message *message,
                          MPI_Status *status)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(message != NULL, c, MPI_ERR_ARG, fn, "message is NULL");
    FY_CHECK(block || flag != NULL, c, MPI_ERR_ARG, fn, "flag is NULL");
    int rc = probe_check(fn, c, source, tag);
    if (rc)
        return rc;
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    bool found = false;
    void *msg = NULL;
    int src_out = 0, tag_out = 0;
    MPI_Count bytes = 0;
    unsigned spins = 0;
    for (;;) {
        int err = fy_p2p_improbe(source, tag, c, c->ctx, &found, &msg, &src_out,
                                 &tag_out, &bytes);
        if (err)
            return report_core_err(fn, c, err, "probe for", source, tag);
        if (found || !block)
            break;
        fy_progress_idle(&spins);
    }
    if (flag)
        *flag = found;
    if (!found) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    struct fy_message *m = malloc(sizeof(*m));
    int h;
    if (!m || fy_handle_alloc(&messages, m, &h)) {
        /* Put nothing back silently: receive it into the void would lose
         * data, so this is fatal-class out of memory. */
        free(m);
        return report_nomem(fn, c);
    }
    *m = (struct fy_message){.msg = msg, .comm = c};
    c->refcount++;
    *message = h;
    fy_mreq_status_recv(status, src_out, tag_out, bytes, false, MPI_SUCCESS);
    return MPI_SUCCESS;
}

FY_API int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                        MPI_Message *message, MPI_Status *status)
{
    FY_MT_ENTER();
    return improbe_common(__func__, source, tag, comm, false, flag, message,
                          status);
}
FY_ALIAS(MPI_Improbe)

FY_API int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                       MPI_Status *status)
{
    FY_MT_ENTER();
    return improbe_common(__func__, source, tag, comm, true, NULL, message,
                          status);
}
FY_ALIAS(MPI_Mprobe)

/* Start the receive of a probed message; *r_out is NULL for NO_PROC. */
static int imrecv_start(const char *fn, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Message *message,
                        struct fy_req **r_out, struct fy_comm **c_out)
{
    FY_CHECK_INIT(fn);
    FY_CHECK(message != NULL, NULL, MPI_ERR_ARG, fn, "message is NULL");
    *r_out = NULL;
    *c_out = NULL;
    if (*message == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    struct fy_message *m = fy_handle_get(&messages, *message);
    FY_CHECK(m != NULL, NULL, MPI_ERR_REQUEST, fn,
             "message 0x%x is not a message from MPI_Mprobe/MPI_Improbe",
             (unsigned)*message);
    struct fy_comm *c = m->comm;
    struct fy_dtype *dt = fy_dtype_get(datatype);
    int rc = fy_mpi_pt2pt_check(fn, c, buf, count, &dt, datatype,
                                MPI_ANY_SOURCE, MPI_ANY_TAG, true);
    if (rc)
        return rc;
    int err = fy_p2p_imrecv(buf, count, dt, m->msg, c, r_out);
    if (err)
        return report_core_err(fn, c, err, "matched receive from", -1, -1);
    fy_handle_release(&messages, *message);
    free(m);
    *message = MPI_MESSAGE_NULL;
    *c_out = c;
    return MPI_SUCCESS;
}

FY_API int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype,
                      MPI_Message *message, MPI_Status *status)
{
    FY_MT_ENTER();
    struct fy_req *r;
    struct fy_comm *c;
    int rc = imrecv_start(__func__, buf, count, datatype, message, &r, &c);
    if (rc)
        return rc;
    if (!r) {
        fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    int err = fy_req_wait(r);
    int src = r->st_source, tag = r->st_tag;
    fy_mreq_status_recv(status, src, tag, r->st_bytes, false,
                        err ? core_class(err) : MPI_SUCCESS);
    fy_req_free(r);
    fy_comm_release(c);
    if (err)
        return report_core_err(__func__, c, err, "matched receive from", src,
                               tag);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Mrecv)

FY_API int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Message *message, MPI_Status *status)
{
    FY_MT_ENTER();
    struct fy_req *r;
    struct fy_comm *c;
    int rc = imrecv_start(__func__, buf, count, datatype, message, &r, &c);
    if (rc)
        return rc;
    if (!r) {
        fy_mreq_status_recv(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, false,
                            MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    int err = fy_req_wait(r);
    int src = r->st_source, tag = r->st_tag;
    fy_mreq_status_recv(status, src, tag, r->st_bytes, false,
                        err ? core_class(err) : MPI_SUCCESS);
    fy_req_free(r);
    fy_comm_release(c);
    if (err)
        return report_core_err(__func__, c, err, "matched receive from", src,
                               tag);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Mrecv_c)

FY_API int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype,
                       MPI_Message *message, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK(request != NULL, NULL, MPI_ERR_ARG, __func__, "request is NULL");
    struct fy_req *r;
    struct fy_comm *c;
    int rc = imrecv_start(__func__, buf, count, datatype, message, &r, &c);
    if (rc)
        return rc;
    if (!r)
        return fy_mreq_register(FY_MREQ_DONE_NULL, request)
                   ? report_nomem(__func__, NULL)
                   : MPI_SUCCESS;
    /* The request keeps the communicator alive through r->comm; drop the
     * message's reference once the request exists. */
    if (fy_mreq_register((uintptr_t)r | FY_MREQ_RECV, request)) {
        (void)fy_req_wait(r);
        fy_req_free(r);
        fy_comm_release(c);
        return report_nomem(__func__, c);
    }
    fy_comm_release(c);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Imrecv)

FY_API int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Message *message, MPI_Request *request)
{
    FY_MT_ENTER();
    FY_CHECK(request != NULL, NULL, MPI_ERR_ARG, __func__, "request is NULL");
    struct fy_req *r;
    struct fy_comm *c;
    int rc = imrecv_start(__func__, buf, count, datatype, message, &r, &c);
    if (rc)
        return rc;
    if (!r)
        return fy_mreq_register(FY_MREQ_DONE_NULL, request)
                   ? report_nomem(__func__, NULL)
                   : MPI_SUCCESS;
    /* The request keeps the communicator alive through r->comm; drop the
     * message's reference once the request exists. */
    if (fy_mreq_register((uintptr_t)r | FY_MREQ_RECV, request)) {
        (void)fy_req_wait(r);
        fy_req_free(r);
        fy_comm_release(c);
        return report_nomem(__func__, c);
    }
    fy_comm_release(c);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Imrecv_c)
