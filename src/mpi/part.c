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
 * Matching (MPI 4.0 4.2.2) pairs the k-th MPI_Psend_init with the k-th
 * matching MPI_Precv_init, in initialization order, whatever order the
 * requests are later started or readied in. So each receive takes an id
 * (rid) at MPI_Precv_init and announces {tag, rid} to its source; the
 * source's partitioned sends claim announcements in their own
 * initialization order (claims and offers below), and every activation's
 * data then travels under a tag naming the rid, straight into the
 * receive's buffer. A send fully ready before its announcement has
 * arrived stays held until fy_part_poll() finds it.
 *
 * All of it travels on the communicator's collective context with
 * negative tags: collectives use tags >= 0 and no user receive sees that
 * context. PART_ANN_TAG carries announcements, part_data_tag() the data;
 * -1 (MPI_ANY_TAG) is never used. */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "mpi/request.h"

#define PART_ANN_TAG INT_MIN
#define PART_RID_MAX (INT_MAX - 2) /* part_data_tag() stays <= -2 */

static int part_data_tag(int32_t rid)
{
    return INT_MIN + 1 + rid;
}

/* A partitioned send not yet matched, in MPI_Psend_init order. p is NULL
 * once the request is freed: the claim still consumes its announcement,
 * so later sends keep their pairing. */
struct fy_part_claim {
    struct fy_part_claim *next;
    struct fy_comm *comm; /* referenced while p is NULL */
    int peer, tag;
    struct fy_preq *p;
};

/* An announcement received but not yet claimed, in arrival order (the
 * order the peer initialized its receives, by non-overtaking). */
struct part_offer {
    struct part_offer *next;
    struct fy_comm *comm; /* referenced */
    int peer, tag;
    int32_t rid;
};

static struct fy_part_claim *claims_head, **claims_tail = &claims_head;
static struct part_offer *offers_head, **offers_tail = &offers_head;
static int32_t next_rid;

/* Take every announcement that (comm, peer) has sent us off the queue. */
static void part_offers_drain(struct fy_comm *c, int peer)
{
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    for (;;) {
        bool flag = false;
        int src, rtag;
        MPI_Count bytes;
        if (fy_p2p_iprobe(peer, PART_ANN_TAG, c, c->ctx + 1, &flag, &src, &rtag,
                          &bytes) ||
            !flag)
            return;
        struct part_offer *o = malloc(sizeof(*o));
        if (!o)
            return; /* left queued: a later poll takes it */
        int32_t ann[2];
        if (fy_p2p_recv(ann, 2, dint, peer, PART_ANN_TAG, c, c->ctx + 1, &src,
                        &rtag, &bytes) ||
            bytes != (MPI_Count)sizeof(ann)) {
            free(o);
            return;
        }
        *o = (struct part_offer){
            .comm = c, .peer = peer, .tag = ann[0], .rid = ann[1]};
        if (!c->builtin)
            fy_comm_retain(c);
        *offers_tail = o;
        offers_tail = &o->next;
    }
}

/* Pair the claims on (comm, peer) with the offers, oldest first. */
static void part_match(struct fy_comm *c, int peer)
{
    part_offers_drain(c, peer);
    struct fy_part_claim **cp = &claims_head, *cl;
    while ((cl = *cp)) {
        struct part_offer **op = &offers_head, *o = NULL;
        if (cl->comm == c && cl->peer == peer)
            for (; (o = *op); op = &o->next)
                if (o->comm == c && o->peer == peer && o->tag == cl->tag)
                    break;
        if (!o) {
            cp = &cl->next;
            continue;
        }
        if (!(*op = o->next))
            offers_tail = op;
        if (!(*cp = cl->next))
            claims_tail = cp;
        if (cl->p) {
            cl->p->part_rid = o->rid;
            cl->p->part_cl = NULL;
        } else if (!c->builtin) {
            fy_comm_release(c); /* the ghost's reference */
        }
        if (!c->builtin)
            fy_comm_release(c); /* the offer's */
        free(o);
        free(cl);
    }
}

/* Receive side of MPI_Precv_init: take an id and tell the source. */
static int part_announce(struct fy_preq *p)
{
    static_assert(sizeof(int32_t) == sizeof(int), "MPI_INT carries int32");
    p->part_rid = next_rid;
    next_rid = next_rid == PART_RID_MAX ? 0 : next_rid + 1;
    /* The payload must outlive the send: it lives in the request, and
     * fy_part_release() waits for the send before the request goes. */
    p->part_annv[0] = p->tag;
    p->part_annv[1] = p->part_rid;
    return fy_p2p_isend(p->part_annv, 2, fy_dtype_get(MPI_INT), p->peer,
                        PART_ANN_TAG, p->comm, p->comm->ctx + 1,
                        FY_SEND_STANDARD, &p->part_ann);
}

/* Send side of MPI_Psend_init: queue up for an announcement. */
static int part_claim(struct fy_preq *p)
{
    struct fy_part_claim *cl = malloc(sizeof(*cl));
    if (!cl)
        return -ENOMEM;
    *cl = (struct fy_part_claim){
        .comm = p->comm, .peer = p->peer, .tag = p->tag, .p = p};
    p->part_cl = cl;
    *claims_tail = cl;
    claims_tail = &cl->next;
    part_match(p->comm, p->peer);
    return 0;
}

void fy_part_release(struct fy_preq *p)
{
    if (p->part_ann) {
        (void)fy_req_wait(p->part_ann); /* a small eager message */
        fy_req_free(p->part_ann);
        p->part_ann = NULL;
    }
    if (p->part_cl) {
        p->part_cl->p = NULL;
        if (!p->comm->builtin)
            fy_comm_retain(p->comm);
        p->part_cl = NULL;
    }
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
        int rc = fy_mpi_pt2pt_check(fn, c, buf, total, &dt, datatype, peer, tag,
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
    p->part_rid = -1;
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int err = is_recv ? part_announce(p) : part_claim(p);
    if (err) {
        MPI_Request h = *request;
        fy_mreq_free(&h, fy_mreq_lookup(h));
        *request = MPI_REQUEST_NULL;
        return fy_mpi_err(c, fy_errno_to_class(err), fn,
                          "partitioned %s with rank %d (tag %d): %s",
                          is_recv ? "receive" : "send", peer, tag,
                          strerror(-err));
    }
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

static int part_progress(void);

/* Every partition is ready: send the whole message, once the receive it
 * goes to is known (else it stays held for fy_part_poll). Returns 0 or a
 * negative errno. */
static int part_send(struct fy_preq *p)
{
    if (p->peer != MPI_PROC_NULL && p->part_rid < 0) {
        part_match(p->comm, p->peer);
        /* part_match progresses, and part_progress() may have sent the
         * message meanwhile. */
        if (!p->held)
            return 0;
        if (p->part_rid < 0) {
            /* MPI's progress rule: the message must leave while the
             * program waits on anything, so the engine looks too. */
            fy_p2p_hook_set(FY_HOOK_PART, part_progress);
            return 0;
        }
    }
    p->held = false;
    if (p->peer == MPI_PROC_NULL)
        return 0;
    int err = fy_p2p_isend(p->buf, p->count, p->dt, p->peer,
                           part_data_tag(p->part_rid), p->comm,
                           p->comm->ctx + 1, FY_SEND_STANDARD, &p->r);
    if (err)
        p->r = NULL;
    return err;
}

bool fy_part_poll(struct fy_preq *p)
{
    if (p->held && p->nready == p->partitions) {
        int err = part_send(p);
        if (err) {
            /* Reported by the completion call (request.c). */
            p->part_err = err;
            p->held = false;
        }
    }
    return !p->held && (p->r == NULL || p->r->complete);
}

/* The progress engine's hook while a send waits for its receive's
 * announcement: send those whose receive is now known. Returns how many
 * left; uninstalls itself once none waits. */
static int part_progress(void)
{
    static bool running; /* the probes below progress, and so call us */
    if (running)
        return 0;
    running = true;
    int sent = 0;
    bool waiting = false;
    struct fy_part_claim *cl = claims_head;
    while (cl) {
        struct fy_preq *p = cl->p;
        if (!p || !p->held || p->nready != p->partitions) {
            cl = cl->next;
            continue;
        }
        /* fy_part_poll may free cl (and others) when p gets matched. */
        (void)fy_part_poll(p);
        if (p->held) {
            waiting = true;
            cl = cl->next;
        } else {
            sent++;
            cl = claims_head;
        }
    }
    if (!waiting)
        fy_p2p_hook_set(FY_HOOK_PART, NULL);
    running = false;
    return sent;
}

int fy_part_start(const char *fn, struct fy_preq *p)
{
    p->r = NULL;
    p->part_err = 0;
    if (p->part_ann && p->part_ann->complete) {
        fy_req_free(p->part_ann);
        p->part_ann = NULL;
    }
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
    int err = fy_p2p_irecv(p->buf, p->count, p->dt, p->peer,
                           part_data_tag(p->part_rid), p->comm,
                           p->comm->ctx + 1, &p->r);
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
    if (++p->nready < p->partitions)
        return MPI_SUCCESS;
    int err = part_send(p);
    if (err)
        return fy_mpi_err(p->comm, fy_errno_to_class(err), fn,
                          "partitioned send to rank %d (tag %d) failed: %s",
                          p->peer, p->tag, strerror(-err));
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
