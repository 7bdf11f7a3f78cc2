/* SPDX-License-Identifier: MIT */
/* Partitioned point-to-point (MPI 4.0 4.2): MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready(_range/_list), MPI_Parrived, as persistent requests of
 * request.h.
 *
 * Each activation moves the whole buffer as one message, sent when the
 * last partition is marked ready: on one node the message then takes the
 * single-copy protocols at full size, where one message per partition
 * would pay a protocol round per partition. The receiver sees every
 * partition arrive together, so MPI_Parrived answers for the whole
 * message; send and receive sides may partition differently as long as
 * the totals agree (as the standard allows).
 *
 * The messages travel on the communicator's collective context with tags
 * made negative (user tag | 2^31): no user receive (not even MPI_ANY_TAG
 * on the user context) and no collective (tags >= 0) can match them, and
 * partitioned operations pair in the order they are started, per
 * (communicator, peer, tag), as non-overtaking gives. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "mpi/request.h"

static int part_tag(int tag)
{
    return (int)(0x80000000u | (uint32_t)tag);
}

static int part_init(const char *fn, bool is_recv, const void *buf,
                     int partitions, MPI_Count count, MPI_Datatype datatype,
                     int peer, int tag, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK_REQ_PTR(request, c, fn);
    FY_CHECK(partitions >= 1, c, MPI_ERR_ARG, fn,
             "partitions = %d (at least 1)", partitions);
    FY_CHECK(count >= 0, c, MPI_ERR_COUNT, fn, "count %lld is negative",
             (long long)count);
    FY_CHECK(count <= LLONG_MAX / partitions, c, MPI_ERR_COUNT, fn,
             "partitions x count overflows");
    FY_CHECK(info == MPI_INFO_NULL || fy_info_get(info), c, MPI_ERR_INFO, fn,
             "invalid info 0x%x", (unsigned)info);
    /* MPI 4.0 4.2.2: no wildcards on either side. */
    FY_CHECK(peer != MPI_ANY_SOURCE, c, MPI_ERR_RANK, fn,
             "MPI_ANY_SOURCE is not allowed for partitioned communication");
    FY_CHECK(tag != MPI_ANY_TAG, c, MPI_ERR_TAG, fn,
             "MPI_ANY_TAG is not allowed for partitioned communication");
    struct fy_dtype *dt = fy_dtype_get(datatype);
    MPI_Count total = (MPI_Count)partitions * count;
    bool ok = is_recv ? fy_pt2pt_recv_ok(c, buf, total, dt, peer, tag)
                      : fy_pt2pt_send_ok(c, buf, total, dt, peer, tag);
    if (!ok) {
        int rc = fy_mpi_pt2pt_check(fn, c, buf, total, dt, datatype, peer, tag,
                                    is_recv);
        if (rc > 0)
            return rc;
    }
    uint8_t *ready = NULL;
    if (!is_recv && !(ready = calloc((size_t)partitions, 1)))
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn,
                          "out of memory for %d partitions", partitions);
    if (fy_preq_create(is_recv ? FY_PREQ_PRECV : FY_PREQ_PSEND,
                       FY_SEND_STANDARD, buf, total, dt, peer, tag, c,
                       request)) {
        free(ready);
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    }
    struct fy_preq *p = fy_mreq_obj(fy_mreq_lookup(*request));
    p->partitions = partitions;
    p->ready = ready;
    return MPI_SUCCESS;
}

FY_API int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count,
                           MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    return part_init(__func__, false, buf, partitions, count, datatype, dest,
                     tag, comm, info, request);
}
FY_ALIAS(MPI_Psend_init)

FY_API int PMPI_Precv_init(void *buf, int partitions, MPI_Count count,
                           MPI_Datatype datatype, int source, int tag,
                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    FY_MT_ENTER();
    return part_init(__func__, true, buf, partitions, count, datatype, source,
                     tag, comm, info, request);
}
FY_ALIAS(MPI_Precv_init)

/* Send the whole message now (every partition is ready). */
static int part_send(const char *fn, struct fy_preq *p)
{
    p->held = false;
    if (p->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int err = fy_p2p_isend(p->buf, p->count, p->dt, p->peer, part_tag(p->tag),
                           p->comm, p->comm->ctx + 1, FY_SEND_STANDARD, &p->r);
    if (err) {
        p->r = NULL;
        return fy_mpi_err(p->comm, fy_errno_to_class(err), fn,
                          "partitioned send to rank %d (tag %d) failed: %s",
                          p->peer, p->tag, strerror(-err));
    }
    return MPI_SUCCESS;
}

int fy_part_start(const char *fn, struct fy_preq *p)
{
    p->r = NULL;
    if (p->kind == FY_PREQ_PSEND) {
        memset(p->ready, 0, (size_t)p->partitions);
        p->nready = 0;
        p->held = true;
        p->active = true;
        return MPI_SUCCESS;
    }
    p->active = true;
    if (p->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int err = fy_p2p_irecv(p->buf, p->count, p->dt, p->peer, part_tag(p->tag),
                           p->comm, p->comm->ctx + 1, &p->r);
    if (err) {
        p->r = NULL;
        p->active = false;
        return fy_mpi_err(p->comm, fy_errno_to_class(err), fn,
                          "partitioned receive from rank %d (tag %d) failed: "
                          "%s",
                          p->peer, p->tag, strerror(-err));
    }
    return MPI_SUCCESS;
}

/* The partitioned request behind h, of the given kind and active, or
 * report why not. */
static int part_resolve(const char *fn, MPI_Request h, enum fy_preq_kind kind,
                        struct fy_preq **p_out)
{
    FY_CHECK_INIT(fn);
    uintptr_t w = h == MPI_REQUEST_NULL ? 0 : fy_mreq_lookup(h);
    struct fy_preq *p =
        w && fy_mreq_tag(w) == FY_MREQ_PERSIST ? fy_mreq_obj(w) : NULL;
    FY_CHECK(p && p->kind == kind, NULL, MPI_ERR_REQUEST, fn,
             "request 0x%x is not a partitioned %s request", (unsigned)h,
             kind == FY_PREQ_PSEND ? "send" : "receive");
    FY_CHECK(p->active, p->comm, MPI_ERR_REQUEST, fn,
             "request 0x%x is not active (call MPI_Start first)", (unsigned)h);
    *p_out = p;
    return 0;
}

/* Mark partition k ready (checked by the caller); the message leaves
 * with the last one. */
static int part_mark(const char *fn, struct fy_preq *p, int k)
{
    p->ready[k] = 1;
    if (++p->nready == p->partitions)
        return part_send(fn, p);
    return MPI_SUCCESS;
}

FY_API int PMPI_Pready(int partition, MPI_Request request)
{
    FY_MT_ENTER();
    struct fy_preq *p;
    int rc = part_resolve(__func__, request, FY_PREQ_PSEND, &p);
    if (rc)
        return rc;
    FY_CHECK(partition >= 0 && partition < p->partitions, p->comm, MPI_ERR_ARG,
             __func__, "partition %d is not in [0, %d)", partition,
             p->partitions);
    FY_CHECK(!p->ready[partition], p->comm, MPI_ERR_ARG, __func__,
             "partition %d is already marked ready in this activation",
             partition);
    return part_mark(__func__, p, partition);
}
FY_ALIAS(MPI_Pready)

FY_API int PMPI_Pready_range(int partition_low, int partition_high,
                             MPI_Request request)
{
    FY_MT_ENTER();
    struct fy_preq *p;
    int rc = part_resolve(__func__, request, FY_PREQ_PSEND, &p);
    if (rc)
        return rc;
    FY_CHECK(partition_low >= 0 && partition_low <= partition_high &&
                 partition_high < p->partitions,
             p->comm, MPI_ERR_ARG, __func__,
             "range [%d, %d] is not within [0, %d)", partition_low,
             partition_high, p->partitions);
    for (int k = partition_low; k <= partition_high; k++)
        FY_CHECK(!p->ready[k], p->comm, MPI_ERR_ARG, __func__,
                 "partition %d is already marked ready in this activation", k);
    for (int k = partition_low; k <= partition_high && !rc; k++)
        rc = part_mark(__func__, p, k);
    return rc;
}
FY_ALIAS(MPI_Pready_range)

FY_API int PMPI_Pready_list(int length, const int array_of_partitions[],
                            MPI_Request request)
{
    FY_MT_ENTER();
    struct fy_preq *p;
    int rc = part_resolve(__func__, request, FY_PREQ_PSEND, &p);
    if (rc)
        return rc;
    FY_CHECK(length >= 0, p->comm, MPI_ERR_ARG, __func__,
             "length %d is negative", length);
    FY_CHECK(length == 0 || array_of_partitions, p->comm, MPI_ERR_ARG, __func__,
             "array_of_partitions is NULL");
    /* Check the whole list first, so an error marks nothing: entries are
     * flagged 2 while checked (a duplicate finds its own flag) and the
     * flags are undone before any is counted. */
    int bad = -1;
    for (int i = 0; i < length && bad < 0; i++) {
        int k = array_of_partitions[i];
        if (k < 0 || k >= p->partitions || p->ready[k])
            bad = i;
        else
            p->ready[k] = 2;
    }
    for (int i = 0; i < (bad < 0 ? length : bad); i++)
        p->ready[array_of_partitions[i]] = 0;
    if (bad >= 0) {
        int k = array_of_partitions[bad];
        return fy_mpi_err(p->comm, MPI_ERR_ARG, __func__,
                          "array_of_partitions[%d] = %d is %s", bad, k,
                          k < 0 || k >= p->partitions
                              ? "not a partition of the request"
                              : "already marked ready (or listed twice)");
    }
    for (int i = 0; i < length && !rc; i++)
        rc = part_mark(__func__, p, array_of_partitions[i]);
    return rc;
}
FY_ALIAS(MPI_Pready_list)

FY_API int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    FY_MT_ENTER();
    struct fy_preq *p;
    int rc = part_resolve(__func__, request, FY_PREQ_PRECV, &p);
    if (rc)
        return rc;
    FY_CHECK(flag, p->comm, MPI_ERR_ARG, __func__, "flag is NULL");
    FY_CHECK(partition >= 0 && partition < p->partitions, p->comm, MPI_ERR_ARG,
             __func__, "partition %d is not in [0, %d)", partition,
             p->partitions);
    if (p->r && !p->r->complete)
        (void)fy_progress_poll();
    *flag = !p->r || p->r->complete;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Parrived)
