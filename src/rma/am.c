/* SPDX-License-Identifier: MIT */
/* One-sided operations by active messages, for windows on user memory
 * (MPI_Win_create, dynamic windows) when no single-copy mechanism reaches
 * the target (FERRY_XFER=shmbuf|queue|net, ptrace restrictions): the
 * origin sends request packets through point-to-point on the window's
 * private context, and the target applies them in its progress engine
 * (any MPI call, or the optional progress thread below), after checking
 * every field against its own window. Locks and PSCW counters stay in the
 * window's shared control block (win.c): they need no target. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "chan/chan.h"
#include "p2p/p2p.h"
#include "rma/rma.h"
#include "util/mt.h"
#include "util/util.h"

#define AM_PKT_MAX                                                             \
    (sizeof(struct fy_rma_am_hdr) +                                            \
     FY_RMA_AM_NSEG * sizeof(struct fy_rma_am_seg) + FY_RMA_AM_CHUNK)
#define AM_REPLY_MAX (sizeof(struct fy_rma_am_reply) + FY_RMA_AM_CHUNK)

/* A reply on its way (the target keeps its buffer until sent). */
struct am_send {
    struct fy_req *req;
    struct am_send *next;
    char buf[];
};

/* Invariants (one process; the library lock serialises the main thread
 * and the progress thread):
 * - rx is always a posted receive (ANY_SOURCE, FY_RMA_AM_TAG_REQ) into rxbuf,
 *   except while the hook handles what it delivered;
 * - err[o]: the first error of origin o's requests since the last reply
 *   to o (target side);
 * - dirty[t]: requests without a reply were sent to t since its last
 *   reply (origin side): flush must ask t. */
struct fy_rma_am {
    struct fy_rma_win *w;
    struct fy_req *rx;
    char *rxbuf;   /* AM_PKT_MAX */
    char *txbuf;   /* origin: packet being built, then the reply */
    char *scratch; /* target: the target's current bytes (FY_RMA_AM_CHUNK) */
    struct am_send *sends;
    int *err;
    bool *dirty;
    int origin_err; /* first error a reply brought back (origin side) */
    struct fy_rma_am *next;
};

static struct fy_rma_am *s_ams; /* every window served by active messages */
static bool s_in_hook;
static unsigned long s_handled; /* requests applied (progress thread) */

static void am_progress(void);

/* ---- the target --------------------------------------------------------- */

static int post_rx(struct fy_rma_am *am)
{
    struct fy_rma_win *w = am->w;
    return fy_p2p_irecv(am->rxbuf, (MPI_Count)AM_PKT_MAX,
                        fy_dtype_get(MPI_BYTE), MPI_ANY_SOURCE,
                        FY_RMA_AM_TAG_REQ, w->comm, w->comm->ctx, &am->rx);
}

/* Whether [addr, addr + len) lies inside this rank's window memory. */
static bool in_window(const struct fy_rma_win *w, uint64_t addr, uint64_t len)
{
    if (len == 0 || len > FY_RMA_AM_CHUNK)
        return false;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t base = (uint64_t)(uintptr_t)w->base;
        uint64_t size = (uint64_t)w->wsize;
        return addr >= base && len <= size && addr - base <= size - len;
    }
    const struct fy_rma_slot *s = &w->slot[w->rank]; /* ours: no seqlock */
    uint32_t n = FY_MIN(s->nattach, (uint32_t)FY_RMA_ATTACH_MAX);
    for (uint32_t i = 0; i < n; i++) {
        struct fy_rma_region r = s->attach[i];
        if (addr >= r.base && len <= r.size && addr - r.base <= r.size - len)
            return true;
    }
    return false;
}

static void gather(const struct fy_rma_am_seg *sg, uint32_t n, char *out)
{
    for (uint32_t i = 0; i < n; i++) {
        memcpy(out, (const void *)(uintptr_t)sg[i].addr, (size_t)sg[i].len);
        out += sg[i].len;
    }
}

static void scatter(const struct fy_rma_am_seg *sg, uint32_t n, const char *in)
{
    for (uint32_t i = 0; i < n; i++) {
        memcpy((void *)(uintptr_t)sg[i].addr, in, (size_t)sg[i].len);
        in += sg[i].len;
    }
}

/* Send a reply to origin o: err, o's pending error, then 'data' (bytes)
 * unless err. Failing to send is fatal for the pair (the origin
 * waits for it), so it ends the job like a lost peer would. */
static void reply(struct fy_rma_am *am, int o, int err, const void *data,
                  uint64_t bytes)
{
    struct am_send *s =
        malloc(sizeof(*s) + sizeof(struct fy_rma_am_reply) + bytes);
    if (!s)
        fy_fatal(1, "MPI one-sided: out of memory for a reply to rank %d", o);
    struct fy_rma_am_reply rp = {
        .err = err, .earlier = am->err[o], .bytes = err ? 0 : bytes};
    am->err[o] = 0;
    memcpy(s->buf, &rp, sizeof(rp));
    if (rp.bytes)
        memcpy(s->buf + sizeof(rp), data, (size_t)bytes);
    struct fy_rma_win *w = am->w;
    int rc = fy_p2p_isend(s->buf, (MPI_Count)(sizeof(rp) + rp.bytes),
                          fy_dtype_get(MPI_BYTE), o, FY_RMA_AM_TAG_REPLY,
                          w->comm, w->comm->ctx, FY_SEND_STANDARD, &s->req);
    if (rc)
        fy_fatal(1, "MPI one-sided: cannot reply to rank %d: %s", o,
                 strerror(-rc));
    s->next = am->sends;
    am->sends = s;
}

/* Combine one chunk: cur (the target's packed bytes) = data op cur,
 * element by element of the predefined type u. */
static int combine(struct fy_op *op, struct fy_dtype *u, const char *data,
                   char *cur, uint64_t bytes)
{
    MPI_Count k = (MPI_Count)(bytes / (uint64_t)u->size);
    if (u->contig)
        return fy_op_apply(op, data, cur, k, u);
    /* A value-index pair: packed pairs are tighter than the type's
     * layout, which the op expects. */
    size_t span = (size_t)(k * u->extent);
    char *in = malloc(span), *io = malloc(span);
    int rc = -ENOMEM;
    if (in && io) {
        fy_dtype_unpack(data, (MPI_Count)bytes, in, k, u);
        fy_dtype_unpack(cur, (MPI_Count)bytes, io, k, u);
        rc = fy_op_apply(op, in, io, k, u);
        if (!rc)
            fy_dtype_pack(io, k, u, cur);
    }
    free(in);
    free(io);
    return rc;
}

int fy_rma_am_serve(struct fy_rma_win *w, const void *pkt, uint64_t n,
                    char *scratch, uint32_t *kind_out, uint64_t *reply_out)
{
    struct fy_rma_am_hdr h;
    *kind_out = 0;
    *reply_out = 0;
    if (n < sizeof(h))
        return -EPROTO;
    memcpy(&h, pkt, sizeof(h));
    *kind_out = h.kind;
    int err = 0;
    const struct fy_rma_am_seg *sg =
        (const struct fy_rma_am_seg *)((const char *)pkt +
                                       sizeof(struct fy_rma_am_hdr));
    struct fy_op *op = NULL;
    struct fy_dtype *u = NULL;
    uint64_t dlen = 0;
    const char *data = NULL;
    if (h.kind < FY_RMA_AM_PUT || h.kind > FY_RMA_AM_FLUSH ||
        h.nseg > FY_RMA_AM_NSEG || h.bytes > FY_RMA_AM_CHUNK) {
        err = -EPROTO;
        goto done;
    }
    if (h.kind == FY_RMA_AM_FLUSH) {
        if (n != sizeof(h))
            err = -EPROTO;
        goto done;
    }
    if (h.kind == FY_RMA_AM_ACC || h.kind == FY_RMA_AM_GACC ||
        h.kind == FY_RMA_AM_CAS) {
        u = fy_dtype_get((MPI_Datatype)h.type);
        if (!u || !u->builtin || u->size <= 0 || h.bytes % (uint64_t)u->size) {
            err = -EINVAL;
            goto done;
        }
    }
    if (h.kind == FY_RMA_AM_ACC || h.kind == FY_RMA_AM_GACC) {
        op = fy_op_get((MPI_Op)h.op);
        if (!op || !fy_op_valid_for_accumulate(op, u)) {
            err = -EINVAL;
            goto done;
        }
    }
    if (h.kind == FY_RMA_AM_PUT || (op && op->handle != MPI_NO_OP))
        dlen = h.bytes;
    else if (h.kind == FY_RMA_AM_CAS)
        dlen = 2 * h.bytes;
    if (h.kind == FY_RMA_AM_CAS && (h.nseg != 1 || h.bytes > 16)) {
        err = -EPROTO;
        goto done;
    }
    if (n != sizeof(h) + h.nseg * sizeof(struct fy_rma_am_seg) + dlen) {
        err = -EPROTO;
        goto done;
    }
    data = (const char *)(sg + h.nseg);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h.nseg; i++) {
        if (!in_window(w, sg[i].addr, sg[i].len)) {
            err = -ERANGE; /* nothing of this request is applied */
            goto done;
        }
        sum += sg[i].len;
    }
    if (sum != h.bytes) {
        err = -EPROTO;
        goto done;
    }
    switch (h.kind) {
    case FY_RMA_AM_PUT:
        scatter(sg, h.nseg, data);
        break;
    case FY_RMA_AM_GET:
        gather(sg, h.nseg, scratch);
        break;
    case FY_RMA_AM_ACC:
    case FY_RMA_AM_GACC:
        if (op->handle == MPI_REPLACE && h.kind == FY_RMA_AM_ACC) {
            scatter(sg, h.nseg, data);
            break;
        }
        gather(sg, h.nseg, scratch);
        if (op->handle == MPI_NO_OP)
            break;
        if (h.kind == FY_RMA_AM_GACC) {
            /* The old contents go back: combine into a copy. */
            char *cur = malloc(h.bytes ? h.bytes : 1);
            if (!cur) {
                err = -ENOMEM;
                break;
            }
            memcpy(cur, scratch, h.bytes);
            err = op->handle == MPI_REPLACE
                      ? (memcpy(cur, data, h.bytes), 0)
                      : combine(op, u, data, cur, h.bytes);
            if (!err)
                scatter(sg, h.nseg, cur);
            free(cur);
        } else {
            err = combine(op, u, data, scratch, h.bytes);
            if (!err)
                scatter(sg, h.nseg, scratch);
        }
        break;
    case FY_RMA_AM_CAS: {
        void *t = (void *)(uintptr_t)sg[0].addr;
        memcpy(scratch, t, h.bytes);
        if (memcmp(scratch, data + h.bytes, h.bytes) == 0)
            memcpy(t, data, h.bytes);
        break;
    }
    }
done:
    *reply_out = h.kind == FY_RMA_AM_FLUSH || err ? 0 : h.bytes;
    return err;
}

/* Serve one request of origin o (n bytes in rxbuf) and answer it. */
static void handle(struct fy_rma_am *am, int o, uint64_t n)
{
    uint32_t kind;
    uint64_t rbytes;
    int err = fy_rma_am_serve(am->w, am->rxbuf, n, am->scratch, &kind, &rbytes);
    if (err && err != -ERANGE)
        FY_WARN("MPI one-sided: bad request from rank %d (kind %u, %llu "
                "bytes): %s",
                o, kind, (unsigned long long)n, strerror(-err));
    bool replies = kind == FY_RMA_AM_GET || kind == FY_RMA_AM_GACC ||
                   kind == FY_RMA_AM_CAS || kind == FY_RMA_AM_FLUSH;
    if (replies)
        reply(am, o, err, am->scratch, rbytes);
    else if (err && !am->err[o])
        am->err[o] = err;
    s_handled++;
}

static void reap_sends(struct fy_rma_am *am)
{
    for (struct am_send **pp = &am->sends; *pp;) {
        struct am_send *s = *pp;
        if (!s->req->complete) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        fy_req_free(s->req);
        free(s);
    }
}

/* The progress engine's hook: apply every request that arrived. Not
 * re-entered (replies are started from here). */
static void am_progress(void)
{
    if (s_in_hook)
        return;
    s_in_hook = true;
    for (struct fy_rma_am *am = s_ams; am; am = am->next) {
        if (am->sends)
            reap_sends(am);
        while (am->rx && am->rx->complete) {
            struct fy_req *r = am->rx;
            int src = r->st_source;
            uint64_t n = (uint64_t)r->st_bytes;
            int rerr = r->err;
            fy_req_free(r);
            am->rx = NULL;
            if (rerr) {
                /* Longer than any request: not ours to parse. */
                FY_WARN("MPI one-sided: oversized request from rank %d", src);
                if (src >= 0 && src < am->w->size && !am->err[src])
                    am->err[src] = -EPROTO;
            } else {
                handle(am, src, n);
            }
            int rc = post_rx(am);
            if (rc)
                fy_fatal(1, "MPI one-sided: cannot post a receive: %s",
                         strerror(-rc));
        }
    }
    s_in_hook = false;
}

/* ---- creation ------------------------------------------------------------ */

int fy_rma_am_init(struct fy_rma_win *w)
{
    struct fy_rma_am *am = calloc(1, sizeof(*am));
    if (!am)
        return -ENOMEM;
    am->w = w;
    am->rxbuf = malloc(AM_PKT_MAX);
    am->txbuf = malloc(AM_PKT_MAX);
    am->scratch = malloc(FY_RMA_AM_CHUNK);
    am->err = calloc((size_t)w->size, sizeof(int));
    am->dirty = calloc((size_t)w->size, sizeof(bool));
    int rc = -ENOMEM;
    if (am->rxbuf && am->txbuf && am->scratch && am->err && am->dirty)
        rc = post_rx(am);
    if (rc) {
        free(am->rxbuf);
        free(am->txbuf);
        free(am->scratch);
        free(am->err);
        free(am->dirty);
        free(am);
        return rc;
    }
    w->am = am;
    am->next = s_ams;
    s_ams = am;
    fy_p2p_rma_hook = am_progress;
    return 0;
}

void fy_rma_am_free(struct fy_rma_win *w)
{
    struct fy_rma_am *am = w->am;
    if (!am)
        return;
    for (struct fy_rma_am **pp = &s_ams; *pp; pp = &(*pp)->next)
        if (*pp == am) {
            *pp = am->next;
            break;
        }
    if (!s_ams)
        fy_p2p_rma_hook = NULL;
    if (am->rx) {
        /* A request that matched already (an erroneous program's, sent
         * after the window's last epoch) still lands in rxbuf: let it. */
        fy_p2p_cancel_recv(am->rx);
        fy_req_wait(am->rx);
        fy_req_free(am->rx);
    }
    /* Replies were received before their origins let the window go (the
     * window's free is collective); wait for the last sends to finish. */
    for (struct am_send *s = am->sends, *nx; s; s = nx) {
        nx = s->next;
        fy_req_wait(s->req);
        fy_req_free(s->req);
        free(s);
    }
    free(am->rxbuf);
    free(am->txbuf);
    free(am->scratch);
    free(am->err);
    free(am->dirty);
    free(am);
    w->am = NULL;
}

/* ---- the origin ---------------------------------------------------------- */

/* Describe packed bytes [done, done + limit) of tcount elements of tdt at
 * target address taddr as at most FY_RMA_AM_NSEG pieces, cut to a multiple of
 * 'elem' bytes. Returns the data bytes covered (> 0) or a negative errno. */
static int64_t pieces(uint64_t taddr, MPI_Count tcount,
                      const struct fy_dtype *tdt, MPI_Count done,
                      uint64_t limit, uint64_t elem, struct fy_rma_am_seg *sg,
                      uint32_t *nseg_out)
{
    struct iovec iov[FY_RMA_AM_NSEG];
    MPI_Count b = 0;
    int k = fy_dtype_iov((void *)(uintptr_t)taddr, tcount, tdt, done, iov,
                         FY_RMA_AM_NSEG, &b);
    if (k <= 0 || b <= 0)
        return -EIO;
    uint64_t total = 0;
    uint32_t n = 0;
    for (int i = 0; i < k && total < limit; i++) {
        uint64_t len = FY_MIN((uint64_t)iov[i].iov_len, limit - total);
        sg[n++] =
            (struct fy_rma_am_seg){(uint64_t)(uintptr_t)iov[i].iov_base, len};
        total += len;
    }
    uint64_t cut = total % elem;
    while (cut && n) {
        uint64_t d = FY_MIN(cut, sg[n - 1].len);
        sg[n - 1].len -= d;
        total -= d;
        cut -= d;
        if (!sg[n - 1].len)
            n--;
    }
    if (!total)
        return -EINVAL; /* an element wider than FY_RMA_AM_NSEG pieces */
    *nseg_out = n;
    return (int64_t)total;
}

static void note_err(struct fy_rma_am *am, int err)
{
    if (err && !am->origin_err)
        am->origin_err = err;
}

/* Send the request built in txbuf (hdr, segs, dlen data bytes), and ring
 * the target's doorbell: its progress thread may be asleep on it even when
 * ranks do not sleep (peers ring only sleeping ranks' bells then). A
 * request above AM_RING_EAGER may need the target before the send
 * completes, so it is rung first. */
#define AM_RING_EAGER 2048

static int send_req(struct fy_rma_am *am, int target,
                    const struct fy_rma_am_hdr *h, uint64_t dlen)
{
    memcpy(am->txbuf, h, sizeof(*h));
    uint64_t len = sizeof(*h) + h->nseg * sizeof(struct fy_rma_am_seg) + dlen;
    struct fy_rma_win *w = am->w;
    int world = w->peers[target].world;
    if (len <= AM_RING_EAGER) {
        int rc = fy_p2p_send(am->txbuf, (MPI_Count)len, fy_dtype_get(MPI_BYTE),
                             target, FY_RMA_AM_TAG_REQ, w->comm, w->comm->ctx,
                             FY_SEND_STANDARD);
        fy_wake_slow(world);
        return rc;
    }
    struct fy_req *r;
    int rc = fy_p2p_isend(am->txbuf, (MPI_Count)len, fy_dtype_get(MPI_BYTE),
                          target, FY_RMA_AM_TAG_REQ, w->comm, w->comm->ctx,
                          FY_SEND_STANDARD, &r);
    if (rc)
        return rc;
    fy_wake_slow(world);
    rc = fy_req_wait(r);
    fy_req_free(r);
    return rc;
}

/* Receive target's next reply into txbuf; returns its error or, for a
 * transport failure, a negative errno. Everything sent to target before
 * has been applied once a reply arrives. */
static int recv_reply(struct fy_rma_am *am, int target, uint64_t want,
                      const char **data_out)
{
    struct fy_rma_win *w = am->w;
    MPI_Count got = 0;
    int src, tag;
    int rc = fy_p2p_recv(am->txbuf, (MPI_Count)AM_REPLY_MAX,
                         fy_dtype_get(MPI_BYTE), target, FY_RMA_AM_TAG_REPLY,
                         w->comm, w->comm->ctx, &src, &tag, &got);
    if (rc)
        return rc;
    am->dirty[target] = false;
    struct fy_rma_am_reply rp;
    if ((uint64_t)got < sizeof(rp))
        return -EPROTO;
    memcpy(&rp, am->txbuf, sizeof(rp));
    if (rp.earlier)
        note_err(am, rp.earlier < 0 ? rp.earlier : -EPROTO);
    if (rp.err)
        return rp.err < 0 ? rp.err : -EPROTO;
    if (rp.bytes != want || (uint64_t)got != sizeof(rp) + want)
        return -EPROTO;
    *data_out = am->txbuf + sizeof(rp);
    return 0;
}

int fy_rma_am_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt)
{
    struct fy_rma_am *am = w->am;
    MPI_Count bytes = ocount * odt->size, done = 0;
    struct fy_rma_am_seg *sg =
        (struct fy_rma_am_seg *)(am->txbuf + sizeof(struct fy_rma_am_hdr));
    while (done < bytes) {
        struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_PUT};
        int64_t c =
            pieces(taddr, tcount, tdt, done, FY_RMA_AM_CHUNK, 1, sg, &h.nseg);
        if (c < 0)
            return (int)c;
        h.bytes = (uint64_t)c;
        fy_dtype_pack_range(obuf, ocount, odt, done, c, sg + h.nseg);
        am->dirty[target] = true;
        int rc = send_req(am, target, &h, h.bytes);
        if (rc)
            return rc;
        done += c;
    }
    return 0;
}

int fy_rma_am_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt)
{
    struct fy_rma_am *am = w->am;
    MPI_Count bytes = tcount * tdt->size, done = 0;
    struct fy_rma_am_seg *sg =
        (struct fy_rma_am_seg *)(am->txbuf + sizeof(struct fy_rma_am_hdr));
    while (done < bytes) {
        struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_GET};
        int64_t c =
            pieces(taddr, tcount, tdt, done, FY_RMA_AM_CHUNK, 1, sg, &h.nseg);
        if (c < 0)
            return (int)c;
        h.bytes = (uint64_t)c;
        const char *data;
        int rc = send_req(am, target, &h, 0);
        if (!rc)
            rc = recv_reply(am, target, h.bytes, &data);
        if (rc)
            return rc;
        fy_dtype_unpack_range(data, done, c, obuf, ocount, odt);
        done += c;
    }
    return 0;
}

int fy_rma_am_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                  struct fy_dtype *rdt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op)
{
    struct fy_rma_am *am = w->am;
    bool no_op = op->handle == MPI_NO_OP;
    if (no_op && !rbuf)
        return 0;
    struct fy_dtype *u = fy_dtype_elem_type(tdt);
    if (!u || u->size <= 0) {
        if (op->handle != MPI_REPLACE && !no_op)
            return -EINVAL;
        u = fy_dtype_get(MPI_BYTE); /* replacing bytes needs no type */
    }
    uint64_t es = (uint64_t)u->size;
    MPI_Count bytes = tcount * tdt->size, done = 0;
    struct fy_rma_am_seg *sg =
        (struct fy_rma_am_seg *)(am->txbuf + sizeof(struct fy_rma_am_hdr));
    while (done < bytes) {
        struct fy_rma_am_hdr h = {.kind = rbuf ? FY_RMA_AM_GACC : FY_RMA_AM_ACC,
                                  .op = (int32_t)op->handle,
                                  .type = (int32_t)u->handle};
        int64_t c = pieces(taddr, tcount, tdt, done, FY_RMA_AM_CHUNK / es * es,
                           es, sg, &h.nseg);
        if (c < 0)
            return (int)c;
        h.bytes = (uint64_t)c;
        if (!no_op)
            fy_dtype_pack_range(obuf, ocount, odt, done, c, sg + h.nseg);
        if (!rbuf)
            am->dirty[target] = true;
        int rc = send_req(am, target, &h, no_op ? 0 : h.bytes);
        if (!rc && rbuf) {
            const char *data;
            rc = recv_reply(am, target, h.bytes, &data);
            if (!rc)
                fy_dtype_unpack_range(data, done, c, rbuf, rcount, rdt);
        }
        if (rc)
            return rc;
        done += c;
    }
    return 0;
}

int fy_rma_am_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                  void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr)
{
    struct fy_rma_am *am = w->am;
    uint64_t n = (uint64_t)dt->size;
    struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_CAS,
                              .nseg = 1,
                              .bytes = n,
                              .type = (int32_t)dt->handle};
    struct fy_rma_am_seg sg = {taddr + (uint64_t)dt->true_lb, n};
    char *p = am->txbuf + sizeof(h);
    memcpy(p, &sg, sizeof(sg));
    memcpy(p + sizeof(sg), obuf, n);
    memcpy(p + sizeof(sg) + n, cbuf, n);
    const char *data;
    int rc = send_req(am, target, &h, 2 * n);
    if (!rc)
        rc = recv_reply(am, target, n, &data);
    if (!rc)
        memcpy(rbuf, data, n);
    return rc;
}

int fy_rma_am_flush(struct fy_rma_win *w, int target)
{
    struct fy_rma_am *am = w->am;
    if (!am)
        return 0;
    int first = 0;
    /* Ask every target first, then collect: the round trips overlap. */
    bool *asked = calloc((size_t)w->size, sizeof(bool));
    if (!asked)
        return -ENOMEM;
    for (int t = 0; t < w->size; t++) {
        if ((target >= 0 && t != target) || !am->dirty[t])
            continue;
        struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_FLUSH};
        int rc = send_req(am, t, &h, 0);
        if (rc) {
            first = first ? first : rc;
            continue;
        }
        asked[t] = true;
    }
    for (int t = 0; t < w->size; t++) {
        if (!asked[t])
            continue;
        const char *data;
        int rc = recv_reply(am, t, 0, &data);
        first = first ? first : rc;
    }
    free(asked);
    note_err(am, first);
    return am->origin_err;
}

int fy_rma_am_error(struct fy_rma_win *w)
{
    if (!w->am)
        return 0;
    int e = w->am->origin_err;
    w->am->origin_err = 0;
    return e;
}

/* ---- the progress thread --------------------------------------------------
 * FERRY_RMA_THREAD: 0 never, auto when this process has a window served by
 * active messages, 1 with its first window of any flavour. The thread
 * takes the library lock around each progress pass (the lock MPI calls
 * take once fy_mt_on is set, which the thread turns on for its lifetime),
 * and, when passes find nothing, yields a few times, then sleeps on the
 * rank's doorbell, which origins ring after each request (send_req); the
 * sleep's timeout grows from AM_NAP_MIN_US to AM_NAP_MAX_US (steps of a
 * large transfer after its request do not ring when ranks do not sleep).
 * Sleeping, not spinning, leaves the core to the rank's computation and
 * lets the scheduler favour the thread when it is woken. */
#define AM_NAP_MIN_US 50
#define AM_NAP_MAX_US 2000
#define AM_YIELDS 16

static pthread_t s_thread;
static bool s_thread_on, s_thread_wanted, s_mt_before;
static _Atomic bool s_thread_stop;

void fy_rma_thread_want(bool am_window)
{
    const char *m = fy_env_str(FY_ENV_RMA_THREAD);
    if (!strcmp(m, "0") || (!am_window && strcmp(m, "1") != 0))
        return;
    s_thread_wanted = true;
}

static void *thread_main(void *arg)
{
    (void)arg;
    unsigned empty = 0, nap = AM_NAP_MIN_US;
    fy_mt_lock();
    while (!atomic_load_explicit(&s_thread_stop, memory_order_relaxed)) {
        unsigned long before = s_handled;
        int n = fy_progress();
        if (n || s_handled != before) {
            empty = 0;
            nap = AM_NAP_MIN_US;
            /* Let the main thread in between passes. */
            fy_mt_unlock();
            sched_yield();
            fy_mt_lock();
            continue;
        }
        if (++empty < AM_YIELDS) {
            fy_mt_unlock();
            sched_yield();
            fy_mt_lock();
        } else {
            /* Gives the lock up while asleep. */
            fy_chan_sleep_for(NULL, (long)nap * 1000);
            nap = FY_MIN(nap * 2, (unsigned)AM_NAP_MAX_US);
        }
    }
    fy_mt_unlock();
    return NULL;
}

void fy_rma_thread_start(void)
{
    int locked = fy_mt_enter(); /* MULTIPLE: other threads may create too */
    if (s_thread_on || !s_thread_wanted) {
        fy_mt_leave(&locked);
        return;
    }
    /* Called between MPI calls of this thread (none holds the lock):
     * from now on every entry point takes it. */
    s_mt_before = fy_mt_on;
    fy_mt_on = true;
    atomic_store(&s_thread_stop, false);
    if (pthread_create(&s_thread, NULL, thread_main, NULL) != 0) {
        FY_WARN("MPI one-sided: cannot start the progress thread: %m; "
                "passive target waits for the target to call MPI");
        fy_mt_on = s_mt_before;
        s_thread_wanted = false;
        fy_mt_leave(&locked);
        return;
    }
    s_thread_on = true;
    FY_INFO("one-sided progress thread started (FERRY_RMA_THREAD)");
    fy_mt_leave(&locked);
}

bool fy_rma_thread_running(void)
{
    return s_thread_on;
}

void fy_rma_thread_stop(void)
{
    if (!s_thread_on)
        return;
    atomic_store(&s_thread_stop, true);
    fy_wake_slow(fy_world_rank); /* out of a doorbell sleep */
    int d = fy_mt_suspend();
    pthread_join(s_thread, NULL);
    if (d)
        fy_mt_resume(d);
    fy_mt_on = s_mt_before;
    s_thread_on = false;
    s_thread_wanted = false;
}
