/* SPDX-License-Identifier: MIT */
/* Buffered sends: MPI_Buffer_attach/detach and the pool behind MPI_Bsend
 * and MPI_Ibsend. Each message is packed into a block carved first-fit out
 * of the user's buffer and sent from there with an ordinary isend; the block
 * comes back once that send completes, which we notice when polling from
 * every bsend, detach and completion call. */
#include "mpi/request.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A block header, stored in the user's buffer just before the packed
 * message. Blocks are kept in address order, so the free space is exactly
 * the gaps between them and after the last one. */
struct bblock {
    struct bblock *next;
    struct fy_req *req;           /* the isend of the data that follows */
    size_t size;                  /* of the whole block, header included */
    uint64_t id;                  /* names it to MPI_Cancel (fy_bsend_cancel) */
    struct fy_bsend_watch *watch; /* a cancel waiting for it, or NULL */
    size_t pad_;
};

/* Data start and block sizes are 16-byte aligned (memcpy-friendly). The
 * worst case per message is the header plus 15 bytes of rounding, plus 15
 * bytes once for aligning the user's buffer: within MPI_BSEND_OVERHEAD,
 * so a buffer sized by the standard's rule always fits its messages. */
#define BS_ALIGN ((size_t)16)
_Static_assert(sizeof(struct bblock) % 16 == 0, "header keeps alignment");
_Static_assert(sizeof(struct bblock) + 2 * (BS_ALIGN - 1) <= MPI_BSEND_OVERHEAD,
               "header and padding fit in MPI_BSEND_OVERHEAD");

static uint64_t last_id;

static struct {
    void *user; /* what the user attached, returned by detach */
    size_t user_size;
    char *base;  /* first aligned byte of it */
    size_t size; /* usable bytes from base, multiple of BS_ALIGN */
    size_t used; /* bytes held by blocks */
    struct bblock *head;
} bs;

unsigned fy_bsend_npending;

void fy_bsend_poll(void)
{
    struct bblock **link = &bs.head;
    while (*link) {
        struct bblock *b = *link;
        if (b->req->complete) {
            /* The send's error (if any) has nowhere to go: the user's
             * Bsend already returned. Log it. */
            if (b->req->err && b->req->err != -ECANCELED)
                FY_WARN("buffered send to rank %d failed: %s", b->req->peer,
                        strerror(-b->req->err));
            if (b->watch) {
                b->watch->cancelled = b->req->cancelled;
                b->watch->pending = false;
            }
            fy_req_free(b->req);
            *link = b->next;
            bs.used -= b->size;
            fy_bsend_npending--;
        } else {
            link = &b->next;
        }
    }
}

/* First fit: the lowest gap that holds 'need' bytes. */
static struct bblock *block_alloc(size_t need)
{
    struct bblock **link = &bs.head;
    size_t start = 0;
    for (;;) {
        struct bblock *b = *link;
        size_t end = b ? (size_t)((char *)b - bs.base) : bs.size;
        if (end - start >= need) {
            struct bblock *nb = (struct bblock *)(bs.base + start);
            nb->next = b;
            nb->req = NULL;
            nb->size = need;
            nb->id = ++last_id;
            nb->watch = NULL;
            *link = nb;
            bs.used += need;
            return nb;
        }
        if (!b)
            return NULL;
        start = end + b->size;
        link = &b->next;
    }
}

static void block_unlink(struct bblock *nb)
{
    for (struct bblock **link = &bs.head; *link; link = &(*link)->next) {
        if (*link == nb) {
            *link = nb->next;
            bs.used -= nb->size;
            return;
        }
    }
}

int fy_bsend_start(const char *fn, const void *buf, MPI_Count count,
                   struct fy_dtype *dt, int dest, int tag, struct fy_comm *comm,
                   uint64_t *id_out)
{
    MPI_Count bytes = count * dt->size;
    if (!bs.base)
        return fy_mpi_err(comm, MPI_ERR_BUFFER, fn,
                          "no buffer attached with MPI_Buffer_attach for a "
                          "buffered send of %lld bytes",
                          (long long)bytes);
    fy_bsend_poll();
    size_t need = FY_ALIGN_UP(sizeof(struct bblock) + (size_t)bytes, BS_ALIGN);
    struct bblock *b = (size_t)bytes <= bs.size ? block_alloc(need) : NULL;
    if (!b && fy_bsend_npending) {
        /* Sends may have finished since the last pass: one progress pass
         * before we give up, as the space may be just about to return. */
        (void)fy_progress();
        fy_bsend_poll();
        if ((size_t)bytes <= bs.size)
            b = block_alloc(need);
    }
    if (!b)
        return fy_mpi_err(comm, MPI_ERR_BUFFER, fn,
                          "attached buffer too small: this message needs "
                          "%lld bytes plus MPI_BSEND_OVERHEAD (%d); %zu of "
                          "the buffer's %zu bytes are in use",
                          (long long)bytes, MPI_BSEND_OVERHEAD, bs.used,
                          bs.user_size);
    void *data = b + 1;
    if (bytes > 0)
        fy_dtype_pack(buf, count, dt, data);
    int err = fy_p2p_isend(data, bytes, fy_dtype_get(MPI_BYTE), dest, tag, comm,
                           comm->ctx, FY_SEND_STANDARD, &b->req);
    if (err) {
        block_unlink(b);
        return fy_mpi_err(comm, fy_errno_to_class(err), fn,
                          "buffered send to rank %d, tag %d: %s", dest, tag,
                          strerror(-err));
    }
    fy_bsend_npending++;
    if (id_out)
        *id_out = b->id;
    return MPI_SUCCESS;
}

bool fy_bsend_cancel(uint64_t id, struct fy_bsend_watch *w)
{
    for (struct bblock *b = bs.head; b; b = b->next)
        if (b->id == id) {
            if (b->watch)
                return false; /* asked already; a block whose answer came
                               * is reaped before anyone asks again */
            b->watch = w;
            w->pending = true;
            w->cancelled = false;
            fy_p2p_cancel_send(b->req);
            return true;
        }
    return false; /* gone: sent and received */
}

void fy_bsend_forget(struct fy_bsend_watch *w)
{
    for (struct bblock *b = bs.head; b; b = b->next)
        if (b->watch == w)
            b->watch = NULL;
    w->pending = false;
}

/* MPI_Ibsend's request: complete from the start; MPI_Cancel makes it wait
 * for the receiver's answer. */
struct bsend_req {
    struct fy_mreq_ext x;
    uint64_t id;
    struct fy_bsend_watch w;
};

static void breq_progress(struct fy_mreq_ext *x)
{
    struct bsend_req *q = (struct bsend_req *)x;
    fy_bsend_poll();
    if (!q->w.pending) {
        x->cancelled = q->w.cancelled;
        x->complete = true;
    }
}

static int breq_free(struct fy_mreq_ext *x)
{
    free(x);
    return MPI_SUCCESS;
}

static int breq_cancel(struct fy_mreq_ext *x)
{
    struct bsend_req *q = (struct bsend_req *)x;
    if (fy_bsend_cancel(q->id, &q->w))
        x->complete = false;
    return MPI_SUCCESS;
}

static int breq_query(struct fy_mreq_ext *x, MPI_Status *st)
{
    fy_mreq_status_send(st, x->cancelled, MPI_SUCCESS);
    return MPI_SUCCESS;
}

static const struct fy_mreq_ext_ops breq_ops = {.progress = breq_progress,
                                                .free = breq_free,
                                                .cancel = breq_cancel,
                                                .query = breq_query};

int fy_bsend_request(uint64_t id, struct fy_comm *comm, MPI_Request *out)
{
    struct bsend_req *q = calloc(1, sizeof(*q));
    if (!q)
        return -ENOMEM;
    q->x.ops = &breq_ops;
    q->x.comm = comm;
    q->x.complete = true;
    q->id = id;
    if (fy_mreq_ext_register(&q->x, out)) {
        free(q);
        return -ENOMEM;
    }
    return 0;
}

void fy_bsend_flush(void)
{
    unsigned spins = 0;
    for (;;) {
        fy_bsend_poll();
        if (!fy_bsend_npending)
            return;
        if (fy_progress() == 0)
            fy_progress_idle(&spins);
        else
            spins = 0;
    }
}

static int buffer_attach(const char *fn, void *buffer, MPI_Count size)
{
    FY_CHECK_INIT(fn);
    FY_CHECK(size >= 0, NULL, MPI_ERR_ARG, fn, "size %lld is negative",
             (long long)size);
    FY_CHECK(buffer != NULL || size == 0, NULL, MPI_ERR_BUFFER, fn,
             "buffer is NULL with size %lld", (long long)size);
    FY_CHECK(bs.user == NULL, NULL, MPI_ERR_BUFFER, fn,
             "a buffer (%p, %zu bytes) is already attached; detach it "
             "first",
             bs.user, bs.user_size);
    char *base = (char *)FY_ALIGN_UP((uintptr_t)buffer, BS_ALIGN);
    size_t lost = (size_t)(base - (char *)buffer);
    size_t usable = (size_t)size > lost ? (size_t)size - lost : 0;
    bs.user = buffer;
    bs.user_size = (size_t)size;
    bs.base = base;
    bs.size = usable & ~(BS_ALIGN - 1);
    bs.used = 0;
    bs.head = NULL;
    /* A zero-sized attach is legal; keep a non-NULL marker so a second
     * attach is still refused and Bsend reports "too small". */
    if (!bs.user)
        bs.user = bs.base = (char *)&bs;
    return MPI_SUCCESS;
}

FY_API int PMPI_Buffer_attach(void *buffer, int size)
{
    FY_MT_ENTER();
    return buffer_attach(__func__, buffer, size);
}
FY_ALIAS(MPI_Buffer_attach)

FY_API int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    FY_MT_ENTER();
    return buffer_attach(__func__, buffer, size);
}
FY_ALIAS(MPI_Buffer_attach_c)

/* Waits for every pending buffered send, then hands the buffer back. The
 * int form refuses (MPI_ERR_COUNT, buffer still attached) a buffer
 * attached by Buffer_attach_c whose size an int cannot hold. */
static int buffer_detach(const char *fn, void *buffer_addr, MPI_Count *size,
                         bool int_size)
{
    FY_CHECK_INIT(fn);
    FY_CHECK(buffer_addr != NULL, NULL, MPI_ERR_ARG, fn, "buffer_addr is NULL");
    FY_CHECK(!int_size || bs.user_size <= INT_MAX, NULL, MPI_ERR_COUNT, fn,
             "the attached buffer's size %zu does not fit an int: detach "
             "it with MPI_Buffer_detach_c",
             bs.user_size);
    fy_bsend_flush();
    void *user = bs.user == (void *)&bs ? NULL : bs.user;
    memcpy(buffer_addr, &user, sizeof(user)); /* it is really a void ** */
    *size = (MPI_Count)bs.user_size;
    memset(&bs, 0, sizeof(bs));
    return MPI_SUCCESS;
}

FY_API int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    FY_MT_ENTER();
    FY_CHECK(size != NULL, NULL, MPI_ERR_ARG, __func__, "size is NULL");
    MPI_Count n;
    int rc = buffer_detach(__func__, buffer_addr, &n, true);
    if (rc == MPI_SUCCESS)
        *size = (int)n;
    return rc;
}
FY_ALIAS(MPI_Buffer_detach)

FY_API int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    FY_MT_ENTER();
    FY_CHECK(size != NULL, NULL, MPI_ERR_ARG, __func__, "size is NULL");
    return buffer_detach(__func__, buffer_addr, size, false);
}
FY_ALIAS(MPI_Buffer_detach_c)
