/* SPDX-License-Identifier: MIT */
/* One-sided operations by active messages, for targets on another node
 * (any flavour but shared), and for windows on user memory (MPI_Win_create,
 * dynamic windows) when no single-copy mechanism reaches the target
 * (FERRY_XFER=shmbuf|queue|net, ptrace restrictions): the
 * origin sends request packets through point-to-point on the window's
 * private context, and the target applies them in its progress engine
 * (any MPI call, or the optional progress thread below), after checking
 * every field against its own window. Locks and PSCW counters stay in the
 * window's shared control block (win.c): they need no target - but for
 * an origin on another node, which asks the target to act on its node's
 * block for it (FY_RMA_AM_LOCK, UNLOCK, POST, DONE). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "chan/chan.h"
#include "p2p/p2p.h"
#include "rma/rma.h"
#include "util/copy.h"
#include "util/mt.h"
#include "util/util.h"

#define AM_PKT_MAX                                                             \
    (sizeof(struct fy_rma_am_hdr) +                                            \
     FY_RMA_AM_NSEG * sizeof(struct fy_rma_am_seg) + FY_RMA_AM_CHUNK)
#define AM_REPLY_MAX (sizeof(struct fy_rma_am_reply) + FY_RMA_AM_CHUNK)

/* A packet on its way (the sender keeps its buffer until sent). */
struct am_send {
    struct fy_req *req;
    struct am_send *next;
    alignas(8) char buf[];
};

/* Invariants (one process; the engine lock of util/mt.h serialises the
 * main thread's origin operations (AM_ENGINE_LOCK), its own accumulates on
 * its window (win.c's AM_SELF_LOCK) and the progress thread's passes):
 * - rx is always a posted receive (ANY_SOURCE, FY_RMA_AM_TAG_REQ) into rxbuf,
 *   except while the hook handles what it delivered;
 * - err[o]: the first error of origin o's requests since the last reply
 *   to o (target side);
 * - held[o]: the lock on this rank's window that remote origin o took by
 *   FY_RMA_AM_LOCK and has not released (an UNLOCK must match it);
 * - origin side, per target t: nsent[t] counts the requests sent to t,
 *   nacked[t] the highest of those known applied (a reply to request k
 *   means t applied 1..k: it serves one origin in order); flush asks t
 *   only when nsent[t] > nacked[t];
 * - tx: this origin's requests still being sent (their buffers), at most
 *   AM_DEPTH;
 * - batch[t]: requests counted in nsent[t] but not sent yet; every
 *   request to t that is sent carries them first, in order. Only puts
 *   and accumulates wait there: each needs a later flush, unlock, fence
 *   or complete to complete, and each of those sends a request to t;
 * - lk[t] (origin, windows that span nodes): the lock this origin holds
 *   or is to take on remote target t (struct am_lock). MPI_Win_lock only
 *   notes it; the first request to t puts a LOCK item at the head of
 *   batch[t], and the packet that carries the batch out takes the lock:
 *   quietly when its last request has an answer (send_quiet; that answer
 *   means granted), else awaiting the LOCK's own answer (send_locked). A
 *   refused LOCK makes the target drop the rest of its packet, which the
 *   origin sends again after a pause. No other request goes to t before
 *   the grant is known (lock_settle). An epoch that sent nothing never
 *   reaches the target; a lock_all reaches only the targets it uses. The
 *   LOCK item is not counted in nsent[t] (a flush has nothing to ask);
 * - gets: direct gets (16 KiB or more, into a flat origin buffer) and
 *   small ones (one request; any origin datatype, retained) to a window
 *   whose ranges the origin checked (not dynamic) return once asked for;
 *   their bytes are awaited by the next flush or unlock (to any target:
 *   flush_gets), by MPI_Win_free, or when AM_GETS_MAX are in flight.
 *   Request-based gets (local_done) and MPI_THREAD_MULTIPLE wait at once
 *   (several threads must not await one get). getseq[t] is the number of
 *   the last small get asked of t: while it is the last request sent to t
 *   and in flight, its answer will say that t applied everything before
 *   it, so a flush need not ask t;
 * - data_rx: while set, rx is not posted: requests are served in the
 *   order they came, so an origin's flush, unlock or complete after a
 *   PUT_DIRECT is answered only once its bytes are in the window;
 * - every reply comes back with the tag its request named (a fresh one
 *   per request), so replies never depend on the order receives were
 *   posted in (threads of a MULTIPLE program may interleave). */
struct fy_rma_am {
    struct fy_rma_win *w;
    struct fy_req *rx;
    char *rxbuf;   /* AM_PKT_MAX */
    char *scratch; /* target: the target's current bytes (FY_RMA_AM_CHUNK) */
    struct am_send *sends; /* target: replies on their way */
    int *err;
    uint8_t *held; /* target: [o] lock remote origin o holds (1 shared, 2) */
    uint64_t *nsent, *nacked, *getseq;
    struct am_send *tx;
    int ntx;
    /* origin: per target on another node, small one-way requests held
     * back (batch[t], batch_len[t] bytes of batch_n[t] items) until the
     * next request to t, which carries them (send_req). */
    char **batch;
    uint32_t *batch_len, *batch_cap, *batch_n;
    struct am_lock *lk; /* origin: [t] */
    /* origin: gets whose bytes are still on their way (oldest first),
     * ngets of them. */
    struct am_get *gets, **gets_tail;
    int ngets;
    /* target: a PUT_DIRECT's data receive into the window (or swallowing
     * a refused one's bytes); no request is served until it completes. */
    struct fy_req *data_rx;
    int data_src, data_err;
    int tag;        /* last reply tag handed out */
    int origin_err; /* first error a reply brought back (origin side) */
    struct fy_rma_am *next;
};

/* The origin's lock on a remote target (lk[t]). */
enum am_lk_state {
    LK_NONE,
    LK_SHARED,  /* noted by MPI_Win_lock, nothing sent yet */
    LK_EXCL,    /* the same, exclusive */
    LK_QUEUED,  /* the LOCK item heads batch[t] */
    LK_SENDING, /* a packet with the LOCK is out, its answer awaited */
    LK_PENDING, /* a packet with a quiet LOCK is out (am_lock) */
    LK_HELD
};

/* A lock on its way to a remote target. A packet whose last request has
 * an answer asks for the lock quietly (FY_RMA_AM_LOCK_QUIET): the target
 * answers the LOCK only to refuse it, so a granted lock costs no message
 * of its own; the answer to the last request (r) says it was granted. */
struct am_lock {
    uint8_t st;        /* enum am_lk_state */
    struct fy_req *rx; /* LK_PENDING: the receive of a refusal */
    struct fy_req *r;  /* LK_PENDING: the last request's answer */
    char *pkt;         /* LK_PENDING: the packet, to send again */
    uint64_t len, nap; /* its length; the next pause */
    alignas(8) char rxbuf[sizeof(struct fy_rma_am_reply)];
};

/* A get in flight. Direct (odt NULL): its bytes arrive on rd straight
 * into the origin's buffer, or its refusal on rs, into st. Small (one
 * request, odt retained): its answer, header and bytes, arrives on rd into
 * st and is unpacked into obuf when awaited. */
struct am_get {
    struct am_get *next;
    struct fy_req *rd, *rs;
    MPI_Count bytes;
    void *obuf;
    MPI_Count ocount;
    struct fy_dtype *odt;
    uint64_t seq;
    int target;
    alignas(8) char st[]; /* a reply's header (+ a small get's bytes) */
};

/* Origin-side operations run under the engine lock: the entry point's
 * window-lock guard (FY_MT_WIN) does not cover point-to-point, and window
 * -> engine is the lock order of util/mt.h. */
#define AM_ENGINE_LOCK() FY_MT_ENTER()

static struct fy_rma_am *s_ams; /* every window served by active messages */
/* The progress thread (below): running; wanted; fy_mt_on before it
 * started (whether the program's own threads may call MPI at once). */
static bool s_thread_on, s_thread_wanted, s_mt_before;
static bool s_in_hook;
static unsigned long s_handled; /* requests applied (progress thread) */

/* ---- the target --------------------------------------------------------- */

static int post_rx(struct fy_rma_am *am)
{
    struct fy_rma_win *w = am->w;
    return fy_p2p_irecv(am->rxbuf, (MPI_Count)AM_PKT_MAX,
                        fy_dtype_get(MPI_BYTE), MPI_ANY_SOURCE,
                        FY_RMA_AM_TAG_REQ, w->comm, w->comm->ctx, &am->rx);
}

/* Whether [addr, addr + len) lies inside this rank's window memory. */
bool fy_rma_in_window(const struct fy_rma_win *w, uint64_t addr, uint64_t len)
{
    if (len == 0)
        return false;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        uint64_t base = (uint64_t)(uintptr_t)w->base;
        uint64_t size = (uint64_t)w->wsize;
        return addr >= base && len <= size && addr - base <= size - len;
    }
    /* Ours: the caller holds the engine lock, as attach and detach do. */
    return len <= UINT64_MAX - addr &&
           fy_rma_regions_cover(w->regions, w->nregions, addr, addr + len);
}

static void gather(const struct fy_rma_am_seg *sg, uint32_t n, char *out)
{
    for (uint32_t i = 0; i < n; i++) {
        fy_copy(out, (const void *)(uintptr_t)sg[i].addr, (size_t)sg[i].len);
        out += sg[i].len;
    }
}

static void scatter(const struct fy_rma_am_seg *sg, uint32_t n, const char *in)
{
    for (uint32_t i = 0; i < n; i++) {
        fy_copy((void *)(uintptr_t)sg[i].addr, in, (size_t)sg[i].len);
        in += sg[i].len;
    }
}

/* Send a reply to origin o: err, o's pending error, then 'data' (bytes)
 * unless err. Failing to send is fatal for the pair (the origin
 * waits for it), so it ends the job like a lost peer would. */
static void reply(struct fy_rma_am *am, int o, int tag, int err,
                  const void *data, uint64_t bytes)
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
        fy_copy(s->buf + sizeof(rp), data, (size_t)bytes);
    struct fy_rma_win *w = am->w;
    int rc = fy_p2p_isend(s->buf, (MPI_Count)(sizeof(rp) + rp.bytes),
                          fy_dtype_get(MPI_BYTE), o, tag, w->comm, w->comm->ctx,
                          FY_SEND_STANDARD, &s->req);
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

/* An accumulate (ACC, GACC) or CAS on a window that spans nodes, by the
 * discipline of atomic.c when the memory is in the shared mapping; -EAGAIN
 * when the caller must apply it under the accumulate lock instead. The
 * pieces were checked against the window. */
static int spanning_acc(struct fy_rma_win *w, const struct fy_rma_am_hdr *h,
                        const struct fy_rma_am_seg *sg, const char *data,
                        char *scratch, struct fy_op *op, struct fy_dtype *u)
{
    if (!fy_rma_acc_atomic(w) || u->pair)
        return -EAGAIN;
    if (h->kind == FY_RMA_AM_CAS) /* -EAGAIN: an A2 element */
        return fy_rma_cas_shm(w, data, data + h->bytes, scratch, u, w->rank,
                              sg[0].addr);
    for (uint32_t i = 0; i < h->nseg; i++)
        if (sg[i].len % (uint64_t)u->size)
            return -EPROTO; /* a piece that splits an element */
    bool no_op = op->handle == MPI_NO_OP;
    bool gacc = h->kind == FY_RMA_AM_GACC;
    uint64_t off = 0;
    for (uint32_t i = 0; i < h->nseg; i++) {
        MPI_Count k = (MPI_Count)(sg[i].len / (uint64_t)u->size);
        int rc = fy_rma_acc_shm(w, no_op ? NULL : data + off, k, u,
                                gacc ? scratch + off : NULL, k, u, w->rank,
                                sg[i].addr, k, u, op);
        if (rc)
            return rc;
        off += sg[i].len;
    }
    return 0;
}

/* Whether a request names a tag an origin hands out (replies, data). */
static bool tag_ok(uint32_t tag)
{
    return tag >= FY_RMA_AM_TAG_REPLY && tag <= FY_RMA_AM_TAG_MAX;
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
    if ((h.kind == FY_RMA_AM_GET || h.kind == FY_RMA_AM_GACC ||
         h.kind == FY_RMA_AM_CAS || h.kind == FY_RMA_AM_FLUSH) &&
        !tag_ok(h.tag)) {
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
        /* Bounded pieces: the sum below cannot wrap. */
        if (sg[i].len > FY_RMA_AM_CHUNK ||
            !fy_rma_in_window(w, sg[i].addr, sg[i].len)) {
            err = -ERANGE; /* nothing of this request is applied */
            goto done;
        }
        sum += sg[i].len;
    }
    if (sum != h.bytes) {
        err = -EPROTO;
        goto done;
    }
    /* A window that spans nodes has origins on this node too, which
     * combine elements of our memory themselves under atomic.c's
     * discipline: follow it (A1 by hardware atomics in shared mappings,
     * A2 under our accumulate lock). Elsewhere every origin of ours comes
     * here, serialised by the engine lock. */
    bool acc_locked = false;
    if (w->spans && u) {
        err = spanning_acc(w, &h, sg, data, scratch, op, u);
        if (err != -EAGAIN)
            goto done;
        err = 0;
        fy_rma_acc_lock(w, w->rank);
        acc_locked = true;
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
            fy_copy(cur, scratch, h.bytes);
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
        fy_copy(scratch, t, h.bytes);
        if (memcmp(scratch, data + h.bytes, h.bytes) == 0)
            fy_copy(t, data, h.bytes);
        break;
    }
    }
    if (acc_locked)
        fy_rma_acc_unlock(w, w->rank);
done:
    *reply_out = h.kind == FY_RMA_AM_FLUSH || err ? 0 : h.bytes;
    return err;
}

/* A synchronisation request of remote origin o (n bytes, header h) on a
 * window that spans nodes: act on this node's control block for it.
 * Returns 0, -EBUSY (LOCK: held by others; the origin asks again) or
 * -EPROTO. */
static int serve_sync(struct fy_rma_am *am, int o,
                      const struct fy_rma_am_hdr *h, uint64_t n)
{
    struct fy_rma_win *w = am->w;
    if (n != sizeof(*h) || !w->spans || o == w->rank || h->nseg || h->bytes)
        return -EPROTO;
    size_t size = (size_t)w->size;
    switch (h->kind) {
    case FY_RMA_AM_LOCK: {
        bool excl = (h->op & 1) != 0;
        if ((h->op & ~(1 | FY_RMA_AM_LOCK_QUIET)) || am->held[o])
            return -EPROTO;
        if (!fy_rma_lock_try_local(w, excl))
            return -EBUSY;
        am->held[o] = (uint8_t)(excl ? 2 : 1);
        return 0;
    }
    case FY_RMA_AM_UNLOCK:
        if ((h->op != 0 && h->op != 1) || am->held[o] != (h->op == 1 ? 2 : 1))
            return -EPROTO; /* not the lock it holds */
        am->held[o] = 0;
        fy_rma_unlock_local(w, h->op == 1);
        return 0;
    case FY_RMA_AM_POST: /* P1 of win.c, for a target on another node */
        atomic_fetch_add_explicit(
            &w->posted[(size_t)o * size + (size_t)w->rank], 1,
            memory_order_release);
        return 0;
    default: /* FY_RMA_AM_DONE */
        atomic_fetch_add_explicit(&w->done[(size_t)w->rank * size + (size_t)o],
                                  1, memory_order_release);
        return 0;
    }
}

static bool sync_kind(uint32_t kind)
{
    return kind >= FY_RMA_AM_LOCK && kind <= FY_RMA_AM_GET_DIRECT;
}

/* PUT_DIRECT / GET_DIRECT of origin o (n bytes, header h): check the one
 * piece against the window, then receive the bytes into it or send them
 * from it. A refused put's bytes are swallowed (a receive of 0 bytes);
 * a refused get is answered on its status tag. Returns 0 or the error
 * (the caller keeps it for o's next reply). */
int fy_rma_am_direct_check(const struct fy_rma_win *w, const void *pkt,
                           uint64_t n, struct fy_rma_am_seg *sg_out)
{
    struct fy_rma_am_hdr h;
    struct fy_rma_am_seg sg;
    if (n != sizeof(h) + sizeof(sg))
        return -EPROTO;
    memcpy(&h, pkt, sizeof(h));
    memcpy(&sg, (const char *)pkt + sizeof(h), sizeof(sg));
    bool get = h.kind == FY_RMA_AM_GET_DIRECT;
    if ((!get && h.kind != FY_RMA_AM_PUT_DIRECT) || h.nseg != 1 ||
        !tag_ok(h.tag) ||
        (get ? !tag_ok((uint32_t)h.op) || h.tag >= FY_RMA_AM_TAG_DATA
             : h.tag < FY_RMA_AM_TAG_DATA) ||
        sg.len != h.bytes || sg.len > (uint64_t)INT64_MAX)
        return -EPROTO;
    if (!fy_rma_in_window(w, sg.addr, sg.len))
        return -ERANGE;
    *sg_out = sg;
    return 0;
}

static int serve_direct(struct fy_rma_am *am, int o, const char *pkt,
                        const struct fy_rma_am_hdr *h, uint64_t n)
{
    struct fy_rma_win *w = am->w;
    struct fy_rma_am_seg sg = {0, 0};
    bool get = h->kind == FY_RMA_AM_GET_DIRECT;
    int err = fy_rma_am_direct_check(w, pkt, n, &sg);
    if (get) {
        if (err) {
            if (tag_ok((uint32_t)h->op))
                reply(am, o, h->op, err, NULL, 0);
            return err == -EPROTO && !tag_ok((uint32_t)h->op) ? err : 0;
        }
        struct am_send *s = malloc(sizeof(*s));
        int rc =
            s ? fy_p2p_isend((void *)(uintptr_t)sg.addr, (MPI_Count)sg.len,
                             fy_dtype_get(MPI_BYTE), o, (int)h->tag, w->comm,
                             w->comm->ctx, FY_SEND_STANDARD, &s->req)
              : -ENOMEM;
        if (rc)
            fy_fatal(1,
                     "MPI one-sided: cannot send a get's data to rank %d: %s",
                     o, strerror(-rc));
        s->next = am->sends;
        am->sends = s;
        return 0;
    }
    if (err && (!tag_ok(h->tag) || h->tag < FY_RMA_AM_TAG_DATA))
        return err; /* no data message can be told apart: nothing to swallow */
    int rc = fy_p2p_irecv(err ? am->scratch : (void *)(uintptr_t)sg.addr,
                          err ? 0 : (MPI_Count)sg.len, fy_dtype_get(MPI_BYTE),
                          o, (int)h->tag, w->comm, w->comm->ctx, &am->data_rx);
    if (rc)
        fy_fatal(1, "MPI one-sided: cannot receive a put from rank %d: %s", o,
                 strerror(-rc));
    am->data_src = o;
    am->data_err = err;
    return err;
}

/* Serve one request of origin o (n bytes at pkt, 8-aligned) and answer
 * it. */
static int handle_one(struct fy_rma_am *am, int o, const char *pkt, uint64_t n)
{
    uint32_t kind = 0;
    uint64_t rbytes = 0;
    struct fy_rma_am_hdr h = {0};
    if (n >= sizeof(h))
        memcpy(&h, pkt, sizeof(h));
    int err;
    if (n >= sizeof(h) && sync_kind(h.kind)) {
        kind = h.kind;
        err = kind >= FY_RMA_AM_PUT_DIRECT ? serve_direct(am, o, pkt, &h, n)
                                           : serve_sync(am, o, &h, n);
    } else {
        err = fy_rma_am_serve(am->w, pkt, n, am->scratch, &kind, &rbytes);
    }
    if (err && err != -ERANGE && err != -EBUSY)
        FY_WARN("MPI one-sided: bad request from rank %d (kind %u, %llu "
                "bytes): %s",
                o, kind, (unsigned long long)n, strerror(-err));
    bool replies = kind == FY_RMA_AM_GET || kind == FY_RMA_AM_GACC ||
                   kind == FY_RMA_AM_CAS || kind == FY_RMA_AM_FLUSH ||
                   kind == FY_RMA_AM_LOCK || kind == FY_RMA_AM_UNLOCK;
    /* A quiet LOCK is answered only when refused (am_lock). */
    if (kind == FY_RMA_AM_LOCK && (h.op & FY_RMA_AM_LOCK_QUIET) && !err)
        replies = false;
    if (replies && tag_ok(h.tag))
        reply(am, o, (int)h.tag, err, am->scratch, rbytes);
    else if (err && !am->err[o])
        am->err[o] = err;
    s_handled++;
    return kind == FY_RMA_AM_LOCK ? err : 0;
}

/* The packet of n bytes in rxbuf from origin o: one request, or a batch
 * of them served in order. A malformed batch is refused from the first
 * item that does not add up (those before it were served); so is an item
 * after one that started a direct put's receive (the origin sends that
 * request last). */
int fy_rma_am_batch_item(const void *pkt, uint64_t n, uint64_t *off,
                         const void **item, uint64_t *len)
{
    const char *p = pkt;
    if (*off == n)
        return 0;
    if (*off > n || n - *off < 8)
        return -EPROTO;
    uint32_t l;
    memcpy(&l, p + *off, sizeof(l));
    uint64_t at = *off + 8;
    uint64_t padded = ((uint64_t)l + 7) & ~(uint64_t)7;
    struct fy_rma_am_hdr ih;
    if (l < sizeof(ih) || padded > n - at)
        return -EPROTO;
    memcpy(&ih, p + at, sizeof(ih));
    if (ih.kind == FY_RMA_AM_BATCH)
        return -EPROTO;
    *item = p + at;
    *len = l;
    *off = at + padded;
    return 1;
}

static void handle(struct fy_rma_am *am, int o, uint64_t n)
{
    struct fy_rma_am_hdr h = {0};
    if (n >= sizeof(h))
        memcpy(&h, am->rxbuf, sizeof(h));
    if (n < sizeof(h) || h.kind != FY_RMA_AM_BATCH) {
        (void)handle_one(am, o, am->rxbuf, n);
        return;
    }
    int err = h.bytes != n - sizeof(h) || h.nseg == 0 ? -EPROTO : 0;
    uint64_t off = sizeof(h);
    uint32_t served = 0;
    /* The answers to the batch's gets go out in one write. */
    fy_chan_cork(true);
    while (!err) {
        const void *item;
        uint64_t len;
        int rc = fy_rma_am_batch_item(am->rxbuf, n, &off, &item, &len);
        if (rc <= 0) {
            err = rc < 0 || served != h.nseg ? -EPROTO : 0;
            break;
        }
        if (am->data_rx || served == h.nseg) {
            err = -EPROTO;
            break;
        }
        /* A LOCK refused while others hold the lock: nothing after it
         * is applied; the origin sends the batch again (am_lk). */
        if (handle_one(am, o, item, len) == -EBUSY)
            break;
        served++;
    }
    fy_chan_cork(false);
    if (err) {
        FY_WARN("MPI one-sided: bad request batch from rank %d (%llu bytes)", o,
                (unsigned long long)n);
        if (!am->err[o])
            am->err[o] = err;
    }
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

bool fy_rma_am_any(void)
{
    return s_ams != NULL;
}

bool fy_rma_am_in_hook(void)
{
    return s_in_hook;
}

/* From the progress engine's hook (ho.c): apply every request that
 * arrived. Not re-entered (replies are started from here). */
void fy_rma_am_progress(void)
{
    if (s_in_hook)
        return;
    s_in_hook = true;
    for (struct fy_rma_am *am = s_ams; am; am = am->next) {
        if (am->sends)
            reap_sends(am);
        for (;;) {
            if (am->data_rx) {
                if (!am->data_rx->complete)
                    break; /* nothing else until the put's bytes are in */
                int o = am->data_src;
                /* A refused put's swallowing receive truncates: its error
                 * was kept when the request was refused. */
                if (am->data_rx->err && !am->data_err && !am->err[o])
                    am->err[o] = am->data_rx->err;
                fy_req_free(am->data_rx);
                am->data_rx = NULL;
                int rc = post_rx(am);
                if (rc)
                    fy_fatal(1, "MPI one-sided: cannot post a receive: %s",
                             strerror(-rc));
            }
            if (!am->rx || !am->rx->complete)
                break;
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
            if (am->data_rx)
                continue; /* rx is posted once the put's bytes are in */
            int rc = post_rx(am);
            if (rc)
                fy_fatal(1, "MPI one-sided: cannot post a receive: %s",
                         strerror(-rc));
        }
    }
    s_in_hook = false;
}

/* ---- creation ------------------------------------------------------------ */

/* Free am and its buffers (any may be NULL). */
static void am_release(struct fy_rma_am *am)
{
    free(am->rxbuf);
    free(am->scratch);
    free(am->err);
    free(am->held);
    for (int t = 0; am->batch && t < am->w->size; t++)
        free(am->batch[t]);
    free(am->batch);
    free(am->batch_len);
    free(am->batch_cap);
    free(am->batch_n);
    free(am->lk);
    free(am->nsent);
    free(am->nacked);
    free(am->getseq);
    free(am);
}

int fy_rma_am_init(struct fy_rma_win *w)
{
    struct fy_rma_am *am = calloc(1, sizeof(*am));
    if (!am)
        return -ENOMEM;
    am->w = w;
    am->rxbuf = malloc(AM_PKT_MAX);
    am->scratch = malloc(FY_RMA_AM_CHUNK);
    am->err = calloc((size_t)w->size, sizeof(int));
    am->held = calloc((size_t)w->size, 1);
    am->nsent = calloc((size_t)w->size, sizeof(uint64_t));
    am->nacked = calloc((size_t)w->size, sizeof(uint64_t));
    am->getseq = calloc((size_t)w->size, sizeof(uint64_t));
    am->tag = FY_RMA_AM_TAG_REPLY;
    am->gets_tail = &am->gets;
    int rc = -ENOMEM;
    if (w->spans) {
        am->batch = calloc((size_t)w->size, sizeof(char *));
        am->batch_len = calloc((size_t)w->size, sizeof(uint32_t));
        am->batch_cap = calloc((size_t)w->size, sizeof(uint32_t));
        am->batch_n = calloc((size_t)w->size, sizeof(uint32_t));
        am->lk = calloc((size_t)w->size, sizeof(struct am_lock));
    }
    bool batch_ok = !w->spans || (am->batch && am->batch_len && am->batch_cap &&
                                  am->batch_n && am->lk);
    if (am->rxbuf && am->scratch && am->err && am->held && am->nsent &&
        am->nacked && am->getseq && batch_ok)
        rc = post_rx(am);
    if (rc) {
        am_release(am);
        return rc;
    }
    w->am = am;
    am->next = s_ams;
    s_ams = am;
    fy_rma_hook_update();
    return 0;
}

static void flush_gets(struct fy_rma_am *am);

void fy_rma_am_free(struct fy_rma_win *w)
{
    struct fy_rma_am *am = w->am;
    if (!am)
        return;
    flush_gets(am); /* an erroneous program's gets after its last epoch */
    for (struct fy_rma_am **pp = &s_ams; *pp; pp = &(*pp)->next)
        if (*pp == am) {
            *pp = am->next;
            break;
        }
    fy_rma_hook_update();
    for (int k = 0; k < 2; k++) {
        struct fy_req **rp = k ? &am->data_rx : &am->rx;
        if (!*rp)
            continue;
        /* A request that matched already (an erroneous program's, sent
         * after the window's last epoch) still lands in rxbuf: let it. */
        fy_p2p_cancel_recv(*rp);
        fy_req_wait(*rp);
        fy_req_free(*rp);
        *rp = NULL;
    }
    /* Replies were received before their origins let the window go (the
     * window's free is collective); wait for the last sends to finish. */
    for (int k = 0; k < 2; k++)
        for (struct am_send *s = k ? am->tx : am->sends, *nx; s; s = nx) {
            nx = s->next;
            fy_req_wait(s->req);
            fy_req_free(s->req);
            free(s);
        }
    am_release(am);
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

/* Requests up to this size are sent from the stack with the blocking
 * fast path; larger ones from a heap buffer, asynchronously. */
#define AM_SMALL 2048
/* Asynchronous requests of one origin in flight at most. */
#define AM_DEPTH 4
/* Get chunks whose replies are awaited at once. */
#define AM_GET_DEPTH 4

static int next_tag(struct fy_rma_am *am)
{
    am->tag = am->tag >= FY_RMA_AM_TAG_DATA - 1 ? FY_RMA_AM_TAG_REPLY + 1
                                                : am->tag + 1;
    return am->tag;
}

/* Free the asynchronous requests that went out; with 'all', wait for
 * every one first. */
static void reap_tx(struct fy_rma_am *am, bool all)
{
    for (struct am_send **pp = &am->tx; *pp;) {
        struct am_send *s = *pp;
        if (!s->req->complete && !all) {
            pp = &s->next;
            continue;
        }
        fy_req_wait(s->req);
        *pp = s->next;
        fy_req_free(s->req);
        free(s);
        am->ntx--;
    }
}

/* Ring target's doorbell: its progress thread may sleep on it even when
 * ranks do not sleep (peers ring only sleeping ranks' bells then). */
static void ring(struct fy_rma_am *am, int target)
{
    fy_wake_slow(am->w->peers[target].world);
}

/* One step of a wait that polls its own condition: progress, or idle. */
static void progress_step(unsigned *spins)
{
    if (fy_progress())
        *spins = 0;
    else
        fy_progress_idle(spins);
}

/* Take back a posted receive that is not complete (and may never be):
 * cancel it, let a match already under way finish, free it. */
static void drop_recv(struct fy_req *r)
{
    if (!r->complete) {
        fy_p2p_cancel_recv(r);
        fy_req_wait(r);
    }
    fy_req_free(r);
}

/* Progress until fewer than AM_DEPTH of ours are on their way (not
 * fy_req_wait on one of them: under MULTIPLE another thread may reap it
 * meanwhile). */
static void tx_slot(struct fy_rma_am *am)
{
    unsigned spins = 0;
    for (reap_tx(am, false); am->ntx >= AM_DEPTH; reap_tx(am, false))
        progress_step(&spins);
}

/* Batches: requests of up to AM_BATCH_ITEM bytes wait in batch[t], at
 * most AM_BATCH bytes of items; a request of up to AM_SMALL bytes takes
 * them along in its packet (larger ones send them first on their own).
 * batch[t] holds batch_cap[t] bytes, from AM_BATCH_MIN doubling as
 * needed: a program that puts a little to each of many ranks keeps 4
 * KiB per target, not 64. */
#define AM_BATCH 65536
#define AM_BATCH_MIN 4096
#define AM_BATCH_ITEM (16384 + 128)

static uint32_t item_bytes(uint64_t len)
{
    return 8 + (uint32_t)((len + 7) & ~(uint64_t)7);
}

/* Room in batch[t] for 'more' bytes beyond those in it (the caller has
 * checked they stay within AM_BATCH). 0 or -ENOMEM. */
static int batch_room(struct fy_rma_am *am, int t, uint32_t more)
{
    uint32_t need = am->batch_len[t] + more, cap = am->batch_cap[t];
    if (am->batch[t] && need <= cap)
        return 0;
    while (cap < need)
        cap = cap ? 2 * cap : AM_BATCH_MIN;
    char *b = realloc(am->batch[t], FY_MIN(cap, (uint32_t)AM_BATCH));
    if (!b)
        return -ENOMEM;
    am->batch[t] = b;
    am->batch_cap[t] = FY_MIN(cap, (uint32_t)AM_BATCH);
    return 0;
}

static bool batchable(const struct fy_rma_am *am, int target, const char *pkt,
                      uint64_t len, bool later)
{
    uint32_t kind;
    memcpy(&kind, pkt, sizeof(kind));
    return am->batch && am->w->peers[target].remote && len <= AM_BATCH_ITEM &&
           (kind == FY_RMA_AM_PUT || kind == FY_RMA_AM_ACC ||
            (kind == FY_RMA_AM_GET && later));
}

/* The requests waiting in batch[t] that are counted in nsent[t] (all
 * but a LOCK at its head). */
static uint32_t batch_counted(const struct fy_rma_am *am, int t)
{
    return am->batch_n[t] && am->lk[t].st == LK_QUEUED ? am->batch_n[t] - 1
                                                       : am->batch_n[t];
}

static void batch_add(char *b, uint32_t *blen, const char *pkt, uint64_t len)
{
    uint32_t l = (uint32_t)len;
    memset(b + *blen, 0, item_bytes(len));
    memcpy(b + *blen, &l, sizeof(l));
    memcpy(b + *blen + 8, pkt, (size_t)len);
    *blen += item_bytes(len);
}

/* The batch to target t plus, if pkt, that request: one packet
 * (malloc'd, *len_out bytes); the batch is empty afterwards. NULL when
 * out of memory. */
static char *batch_packet(struct fy_rma_am *am, int t, const char *pkt,
                          uint64_t len, uint64_t *len_out)
{
    uint32_t blen = am->batch_len[t] + (pkt ? item_bytes(len) : 0);
    char *p = malloc(sizeof(struct fy_rma_am_hdr) + blen);
    if (!p)
        return NULL;
    struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_BATCH,
                              .nseg = am->batch_n[t] + (pkt ? 1 : 0),
                              .bytes = blen};
    memcpy(p, &h, sizeof(h));
    memcpy(p + sizeof(h), am->batch[t], am->batch_len[t]);
    uint32_t at = am->batch_len[t];
    if (pkt)
        batch_add(p + sizeof(h), &at, pkt, len);
    am->batch_len[t] = am->batch_n[t] = 0;
    *len_out = sizeof(h) + blen;
    return p;
}

static int send_one(struct fy_rma_am *am, int target, char *pkt, uint64_t len,
                    struct am_send *heap);
static int post_reply(struct fy_rma_am *am, int target, int tag, char *buf,
                      uint64_t cap, struct fy_req **out);
static int await_reply(struct fy_rma_am *am, int target, struct fy_req *r,
                       const char *buf, uint64_t want, uint64_t seq,
                       const char **data_out);

/* A remote origin cannot reach the target's lock word: the target takes
 * it (FY_RMA_AM_LOCK), and while others hold it the origin asks again
 * after a pause that grows from LOCK_NAP_MIN_NS to LOCK_NAP_MAX_NS,
 * progressing (serving requests to itself) meanwhile. */
#define LOCK_NAP_MIN_NS 2000
#define LOCK_NAP_MAX_NS 1000000

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void lock_nap(uint64_t *nap)
{
    uint64_t until = now_ns() + *nap;
    do {
        if (!fy_progress())
            sched_yield();
    } while (now_ns() < until);
    *nap = FY_MIN(*nap * 2, (uint64_t)LOCK_NAP_MAX_NS);
}

/* The lock noted for target t goes at the head of its batch (am_lk). */
static int lock_queue(struct fy_rma_am *am, int t)
{
    uint32_t need = item_bytes(sizeof(struct fy_rma_am_hdr));
    if (am->batch_len[t] + need > AM_BATCH)
        return -ENOBUFS; /* puts before MPI_Win_lock (see MPI layer) */
    if (batch_room(am, t, need))
        return -ENOMEM;
    memmove(am->batch[t] + need, am->batch[t], am->batch_len[t]);
    struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_LOCK,
                              .op = am->lk[t].st == LK_EXCL};
    uint32_t at = 0;
    batch_add(am->batch[t], &at, (const char *)&h, sizeof(h));
    am->batch_len[t] += need;
    am->batch_n[t]++;
    am->lk[t].st = LK_QUEUED;
    return 0;
}

/* Send packet p (len bytes) to t with the LOCK item at its head given a
 * fresh answer tag, quiet or not; *rx receives that answer into rbuf
 * (sizeof(struct fy_rma_am_reply) bytes). Returns 0 or the error (*rx
 * taken back). */
static int lock_send(struct fy_rma_am *am, int t, char *p, uint64_t len,
                     bool quiet, char *rbuf, struct fy_req **rx)
{
    char *item = p + sizeof(struct fy_rma_am_hdr) + 8;
    struct fy_rma_am_hdr h;
    memcpy(&h, item, sizeof(h));
    h.tag = (uint32_t)next_tag(am);
    h.op = (h.op & 1) | (quiet ? FY_RMA_AM_LOCK_QUIET : 0);
    memcpy(item, &h, sizeof(h));
    int rc =
        post_reply(am, t, (int)h.tag, rbuf, sizeof(struct fy_rma_am_reply), rx);
    if (!rc && (rc = send_one(am, t, p, len, NULL)))
        drop_recv(*rx);
    return rc;
}

/* Send a batch packet p (len bytes) whose first item is a queued LOCK:
 * again, with a fresh answer tag, until the target grants the lock. */
static int send_locked(struct fy_rma_am *am, int t, char *p, uint64_t len)
{
    uint64_t nap = LOCK_NAP_MIN_NS;
    am->lk[t].st = LK_SENDING;
    for (;;) {
        alignas(8) char rbuf[sizeof(struct fy_rma_am_reply)];
        struct fy_req *r;
        int rc = lock_send(am, t, p, len, false, rbuf, &r);
        if (rc) {
            am->lk[t].st = LK_HELD; /* the epoch goes on; the error is kept */
            return rc;
        }
        const char *data;
        rc = await_reply(am, t, r, rbuf, 0, 0, &data);
        if (rc != -EBUSY) {
            /* Another error: the target went on with the batch. */
            am->lk[t].st = LK_HELD;
            note_err(am, rc);
            return 0;
        }
        lock_nap(&nap);
    }
}

/* Send packet p (len bytes, malloc'd: kept until the lock is known) with a
 * quiet LOCK at its head; r awaits the answer to its last request. */
static int send_quiet(struct fy_rma_am *am, int t, char *p, uint64_t len,
                      struct fy_req *r)
{
    struct am_lock *l = &am->lk[t];
    int rc = lock_send(am, t, p, len, true, l->rxbuf, &l->rx);
    if (rc) {
        free(p);
        l->st = LK_HELD; /* the epoch goes on; the error is kept */
        return rc;
    }
    l->st = LK_PENDING;
    l->r = r;
    l->pkt = p;
    l->len = len;
    l->nap = LOCK_NAP_MIN_NS;
    return 0;
}

/* The lock to t is held: forget the packet that asked for it. */
static void lock_held(struct fy_rma_am *am, int t)
{
    struct am_lock *l = &am->lk[t];
    if (l->rx->complete) {
        /* A LOCK refused for another reason than a holder: the target
         * went on with the packet; keep the error. */
        struct fy_rma_am_reply rp;
        memcpy(&rp, l->rxbuf, sizeof(rp));
        note_err(am, l->rx->err ? l->rx->err : rp.err ? rp.err : -EPROTO);
    }
    drop_recv(l->rx);
    free(l->pkt);
    l->rx = l->r = NULL;
    l->pkt = NULL;
    l->st = LK_HELD;
}

/* One step towards knowing whether the quiet LOCK to t was granted: its
 * refusal came (send the packet again after a pause), the last request's
 * answer came (granted), or neither yet (progress). */
static void lock_step(struct fy_rma_am *am, int t, unsigned *spins)
{
    struct am_lock *l = &am->lk[t];
    if (l->rx->complete) {
        struct fy_rma_am_reply rp;
        memcpy(&rp, l->rxbuf, sizeof(rp));
        if (l->rx->err || rp.err != -EBUSY) {
            lock_held(am, t);
            return;
        }
        if (rp.earlier)
            note_err(am, rp.earlier < 0 ? rp.earlier : -EPROTO);
        fy_req_free(l->rx);
        l->rx = NULL;
        lock_nap(&l->nap);
        int rc = lock_send(am, t, l->pkt, l->len, true, l->rxbuf, &l->rx);
        if (rc) /* the packet's last request is awaited: it cannot go on */
            fy_fatal(1, "MPI one-sided: cannot ask rank %d for its lock: %s", t,
                     strerror(-rc));
        return;
    }
    if (l->r->complete) {
        lock_held(am, t);
        return;
    }
    progress_step(spins);
}

/* Until no packet of ours to t waits to learn about its lock: one with
 * a quiet LOCK, or ('sending') one that send_locked awaits (another
 * thread's, under MPI_THREAD_MULTIPLE). */
static void lock_settle(struct fy_rma_am *am, int t, bool sending)
{
    unsigned spins = 0;
    for (;;) {
        uint8_t st = am->lk ? am->lk[t].st : LK_NONE;
        if (st == LK_PENDING)
            lock_step(am, t, &spins);
        else if (st == LK_SENDING && sending)
            progress_step(&spins);
        else
            return;
    }
}

/* A batch packet p of len bytes to target t on its way (p is freed here);
 * r: the answer to its last request, if it has one. */
static int send_batch_pkt(struct fy_rma_am *am, int t, char *p, uint64_t len,
                          struct fy_req *r)
{
    if (am->lk[t].st == LK_QUEUED && r)
        return send_quiet(am, t, p, len, r);
    int rc = am->lk[t].st == LK_QUEUED ? send_locked(am, t, p, len)
                                       : send_one(am, t, p, len, NULL);
    free(p);
    return rc;
}

/* The answer to the last request waiting in target's batch, when that
 * is a small get (whose answer then says a quiet LOCK was granted). */
static struct fy_req *batch_answer(struct fy_rma_am *am, int target)
{
    if (!batch_counted(am, target) || am->getseq[target] != am->nsent[target])
        return NULL;
    for (struct am_get *g = am->gets; g; g = g->next)
        if (g->odt && g->target == target && g->seq == am->getseq[target])
            return g->rd;
    return NULL;
}

/* Send what waits in target's batch, alone. */
static int batch_send(struct fy_rma_am *am, int target)
{
    uint64_t len;
    struct fy_req *r = batch_answer(am, target);
    char *p = batch_packet(am, target, NULL, 0, &len);
    if (!p)
        return -ENOMEM;
    return send_batch_pkt(am, target, p, len, r);
}

/* Send a request of len bytes at pkt (its header already in place).
 * Small ones go at once from the caller's buffer; 'heap' ones (an
 * am_send whose buf is pkt) go asynchronously and are owned by am->tx
 * from here on. Counts the request: *seq_out gets its number. r: the
 * answer to it, if it has one; 'later': a get whose answer is awaited
 * later (get_small), which may wait in the batch like a put. */
static int send_req_r(struct fy_rma_am *am, int target, char *pkt, uint64_t len,
                      struct am_send *heap, uint64_t *seq_out, struct fy_req *r,
                      bool later)
{
    int rc = 0;
    lock_settle(am, target, true);
    if (am->lk &&
        (am->lk[target].st == LK_SHARED || am->lk[target].st == LK_EXCL) &&
        (rc = lock_queue(am, target))) {
        free(heap);
        return rc;
    }
    if (batchable(am, target, pkt, len, later)) {
        if (am->batch_len[target] + item_bytes(len) > AM_BATCH)
            rc = batch_send(am, target);
        if (!rc)
            rc = batch_room(am, target, item_bytes(len));
        if (!rc)
            batch_add(am->batch[target], &am->batch_len[target], pkt, len);
        free(heap); /* (pkt may be its buffer) */
        if (rc)
            return rc;
        am->batch_n[target]++;
        *seq_out = ++am->nsent[target];
        return 0;
    }
    if (am->batch && am->batch_len[target]) {
        if (len <= AM_SMALL) {
            /* This request and those waiting: one packet. */
            uint64_t blen;
            char *p = batch_packet(am, target, pkt, len, &blen);
            rc = p ? send_batch_pkt(am, target, p, blen, r) : -ENOMEM;
            free(heap);
            if (!rc)
                *seq_out = ++am->nsent[target];
            return rc;
        }
        rc = batch_send(am, target);
        if (rc) {
            free(heap);
            return rc;
        }
    }
    rc = send_one(am, target, pkt, len, heap);
    if (!rc)
        *seq_out = ++am->nsent[target];
    return rc;
}

static int send_req(struct fy_rma_am *am, int target, char *pkt, uint64_t len,
                    struct am_send *heap, uint64_t *seq_out)
{
    return send_req_r(am, target, pkt, len, heap, seq_out, NULL, false);
}

/* Put one packet on its way: at once from the caller's buffer, or
 * asynchronously from 'heap' (then owned by am->tx). Rings the target. */
static int send_one(struct fy_rma_am *am, int target, char *pkt, uint64_t len,
                    struct am_send *heap)
{
    struct fy_rma_win *w = am->w;
    int rc;
    if (!heap) {
        rc = fy_p2p_send(pkt, (MPI_Count)len, fy_dtype_get(MPI_BYTE), target,
                         FY_RMA_AM_TAG_REQ, w->comm, w->comm->ctx,
                         FY_SEND_STANDARD);
    } else {
        tx_slot(am);
        rc = fy_p2p_isend(pkt, (MPI_Count)len, fy_dtype_get(MPI_BYTE), target,
                          FY_RMA_AM_TAG_REQ, w->comm, w->comm->ctx,
                          FY_SEND_STANDARD, &heap->req);
        if (rc) {
            free(heap);
        } else {
            heap->next = am->tx;
            am->tx = heap;
            am->ntx++;
        }
    }
    ring(am, target);
    return rc;
}

/* A packet buffer for a request of up to len bytes: the stack one when
 * it fits, else a new am_send (*heap_out; freed by send_req or the
 * caller on error). NULL when out of memory. */
static char *pkt_buf(uint64_t len, char *small, struct am_send **heap_out)
{
    *heap_out = NULL;
    if (len <= AM_SMALL)
        return small;
    struct am_send *h = malloc(sizeof(*h) + len);
    if (!h)
        return NULL;
    *heap_out = h;
    return h->buf;
}

/* Post the receive of the reply with 'tag' into buf (cap bytes). */
static int post_reply(struct fy_rma_am *am, int target, int tag, char *buf,
                      uint64_t cap, struct fy_req **out)
{
    struct fy_rma_win *w = am->w;
    return fy_p2p_irecv(buf, (MPI_Count)cap, fy_dtype_get(MPI_BYTE), target,
                        tag, w->comm, w->comm->ctx, out);
}

/* Wait for a reply posted with post_reply (request number seq) and check
 * it: returns its error or a transport one; *data_out points at its want
 * data bytes in buf. Frees r. */
static int await_reply(struct fy_rma_am *am, int target, struct fy_req *r,
                       const char *buf, uint64_t want, uint64_t seq,
                       const char **data_out)
{
    /* A quiet LOCK's answer (or this one) tells first whether the packet
     * was applied or must go again. */
    lock_settle(am, target, false);
    int rc = fy_req_wait(r);
    uint64_t got = (uint64_t)r->st_bytes;
    fy_req_free(r);
    if (rc)
        return rc;
    if (seq > am->nacked[target])
        am->nacked[target] = seq;
    struct fy_rma_am_reply rp;
    if (got < sizeof(rp))
        return -EPROTO;
    memcpy(&rp, buf, sizeof(rp));
    if (rp.earlier)
        note_err(am, rp.earlier < 0 ? rp.earlier : -EPROTO);
    if (rp.err)
        return rp.err < 0 ? rp.err : -EPROTO;
    if (rp.bytes != want || got != sizeof(rp) + want)
        return -EPROTO;
    *data_out = buf + sizeof(rp);
    return 0;
}

/* Ask a request with a reply of 'want' data bytes: the packet at pkt
 * (len bytes, header in place; its tag is set here), the reply into rbuf
 * (sizeof(reply) + want bytes) by *r, to await with await_reply(*seq);
 * 'later' as for send_req_r. */
static int ask(struct fy_rma_am *am, int target, char *pkt, uint64_t len,
               struct am_send *heap, char *rbuf, uint64_t want,
               struct fy_req **r, uint64_t *seq, bool later)
{
    struct fy_rma_am_hdr h;
    memcpy(&h, pkt, sizeof(h));
    h.tag = (uint32_t)next_tag(am);
    memcpy(pkt, &h, sizeof(h));
    /* Posted first: the reply may come while a large request is sent. */
    int rc = post_reply(am, target, (int)h.tag, rbuf,
                        sizeof(struct fy_rma_am_reply) + want, r);
    if (rc) {
        free(heap);
        return rc;
    }
    *seq = 0;
    rc = send_req_r(am, target, pkt, len, heap, seq, *r, later);
    if (rc)
        drop_recv(*r);
    return rc;
}

/* One request with a reply (ask), awaited. */
static int roundtrip(struct fy_rma_am *am, int target, char *pkt, uint64_t len,
                     struct am_send *heap, char *rbuf, uint64_t want,
                     const char **data_out)
{
    struct fy_req *r;
    uint64_t seq;
    int rc = ask(am, target, pkt, len, heap, rbuf, want, &r, &seq, false);
    return rc ? rc : await_reply(am, target, r, rbuf, want, seq, data_out);
}

/* Put and accumulate: requests without a reply, chunk by chunk. */
static int send_data(struct fy_rma_win *w, uint32_t kind, int32_t op,
                     int32_t type, uint64_t es, const void *obuf,
                     MPI_Count ocount, struct fy_dtype *odt, bool with_data,
                     int target, uint64_t taddr, MPI_Count tcount,
                     struct fy_dtype *tdt)
{
    struct fy_rma_am *am = w->am;
    MPI_Count bytes = tcount * tdt->size, done = 0;
    reap_tx(am, false);
    while (done < bytes) {
        struct fy_rma_am_seg sg[FY_RMA_AM_NSEG];
        struct fy_rma_am_hdr h = {.kind = kind, .op = op, .type = type};
        int64_t c = pieces(taddr, tcount, tdt, done, FY_RMA_AM_CHUNK / es * es,
                           es, sg, &h.nseg);
        if (c < 0)
            return (int)c;
        h.bytes = (uint64_t)c;
        uint64_t segb = h.nseg * sizeof(struct fy_rma_am_seg);
        uint64_t len = sizeof(h) + segb + (with_data ? h.bytes : 0);
        alignas(8) char small[AM_SMALL];
        struct am_send *heap;
        char *pkt = pkt_buf(len, small, &heap);
        if (!pkt)
            return -ENOMEM;
        memcpy(pkt, &h, sizeof(h));
        memcpy(pkt + sizeof(h), sg, segb);
        if (with_data)
            fy_dtype_pack_range(obuf, ocount, odt, done, c,
                                pkt + sizeof(h) + segb);
        uint64_t seq;
        int rc = send_req(am, target, pkt, len, heap, &seq);
        if (rc)
            return rc;
        done += c;
    }
    return 0;
}

/* Whether a put or get of tcount elements of tdt goes direct: a target
 * on another node, at least 'min' bytes (FY_RMA_AM_DIRECT_MIN,
 * FY_RMA_AM_GET_DIRECT_MIN), one contiguous range there. */
static bool direct_ok(const struct fy_rma_win *w, int target, MPI_Count tcount,
                      const struct fy_dtype *tdt, MPI_Count min)
{
    MPI_Count bytes = tcount * tdt->size;
    return w->peers[target].remote && bytes >= min &&
           fy_rma_flat(tcount, tdt, bytes);
}

/* The request of a direct put or get: one piece, the data's tag, and for
 * a get the tag of a refusal. */
static int direct_req(struct fy_rma_am *am, int target, uint32_t kind,
                      uint64_t taddr, uint64_t bytes, int tag, int status)
{
    alignas(8) char
        pkt[sizeof(struct fy_rma_am_hdr) + sizeof(struct fy_rma_am_seg)];
    struct fy_rma_am_hdr h = {.kind = kind,
                              .nseg = 1,
                              .bytes = bytes,
                              .op = status,
                              .tag = (uint32_t)tag};
    struct fy_rma_am_seg sg = {taddr, bytes};
    memcpy(pkt, &h, sizeof(h));
    memcpy(pkt + sizeof(h), &sg, sizeof(sg));
    uint64_t seq;
    return send_req(am, target, pkt, sizeof(pkt), NULL, &seq);
}

/* A direct put: the request, then the bytes as a message of their own,
 * from the origin's buffer when it is laid out flat, else packed. Bytes
 * sent from the origin's buffer may be read until the next flush (which
 * the target answers only once they are in: MPI lets the buffer be reused
 * only then), but for request-based puts (w->local_done), which wait. */
static int put_direct(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                      struct fy_dtype *odt, int target, uint64_t taddr,
                      MPI_Count bytes)
{
    struct fy_rma_am *am = w->am;
    bool flat = fy_rma_flat(ocount, odt, bytes);
    struct am_send *s = malloc(sizeof(*s) + (flat ? 0 : (size_t)bytes));
    if (!s)
        return -ENOMEM;
    const void *src = obuf;
    if (!flat) {
        fy_dtype_pack(obuf, ocount, odt, s->buf);
        src = s->buf;
    }
    int tag = FY_RMA_AM_TAG_DATA + next_tag(am);
    int rc = direct_req(am, target, FY_RMA_AM_PUT_DIRECT, taddr,
                        (uint64_t)bytes, tag, 0);
    if (!rc) {
        tx_slot(am);
        rc = fy_p2p_isend(src, bytes, fy_dtype_get(MPI_BYTE), target, tag,
                          w->comm, w->comm->ctx, FY_SEND_STANDARD, &s->req);
    }
    if (rc) /* the target waits for these bytes: the pair cannot go on */
        fy_fatal(1, "MPI one-sided: cannot send a put to rank %d: %s", target,
                 strerror(-rc));
    if (flat && w->local_done) {
        rc = fy_req_wait(s->req);
        fy_req_free(s->req);
        free(s);
        if (rc)
            fy_fatal(1, "MPI one-sided: cannot send a put to rank %d: %s",
                     target, strerror(-rc));
        return 0;
    }
    s->next = am->tx;
    am->tx = s;
    am->ntx++;
    return 0;
}

/* Direct gets in flight at most (each a posted receive into the user's
 * buffer); the oldest is awaited before another is asked. */
#define AM_GETS_MAX 64

/* Await get g's bytes or its refusal (a small get's bytes go into the
 * origin's buffer here); frees g. Returns 0 or the error. */
static int get_end(struct fy_rma_am *am, struct am_get *g)
{
    unsigned spins = 0;
    int rc = 0;
    if (g->odt) {
        int t = g->target;
        if (am->batch && g->seq > am->nsent[t] - batch_counted(am, t))
            note_err(am, batch_send(am, t)); /* it waits there still */
        const char *data;
        rc = await_reply(am, g->target, g->rd, g->st, (uint64_t)g->bytes,
                         g->seq, &data);
        if (!rc)
            fy_dtype_unpack_range(data, 0, g->bytes, g->obuf, g->ocount,
                                  g->odt);
        fy_dtype_release(g->odt);
        free(g);
        return rc;
    }
    if (g->rs) {
        while (!g->rd->complete && !g->rs->complete)
            progress_step(&spins);
        if (g->rd->complete) {
            rc = g->rd->err                    ? g->rd->err
                 : g->rd->st_bytes != g->bytes ? -EPROTO
                                               : 0;
        } else {
            struct fy_rma_am_reply rp;
            memcpy(&rp, g->st, sizeof(rp));
            if (rp.earlier)
                note_err(am, rp.earlier < 0 ? rp.earlier : -EPROTO);
            rc = g->rs->err ? g->rs->err : rp.err < 0 ? rp.err : -EPROTO;
        }
    }
    if (g->rd)
        drop_recv(g->rd);
    if (g->rs)
        drop_recv(g->rs);
    free(g);
    return rc;
}

/* Await the oldest direct get in flight (its error is kept for the next
 * synchronisation to report). */
static void oldest_get_end(struct fy_rma_am *am)
{
    struct am_get *g = am->gets;
    am->gets = g->next;
    if (!am->gets)
        am->gets_tail = &am->gets;
    am->ngets--;
    note_err(am, get_end(am, g));
}

/* Await every get in flight. */
static void flush_gets(struct fy_rma_am *am)
{
    while (am->gets)
        oldest_get_end(am);
}

/* Whether a get of w may return before its bytes are in (am->gets):
 * not a request-based one, not in a program whose threads call MPI at
 * once, not to a dynamic window (the target checks its ranges, and the
 * get itself reports their error). Makes room in am->gets if so. */
static bool get_later(struct fy_rma_win *w)
{
    bool user_threads = s_thread_on ? s_mt_before : fy_mt_on;
    if (w->local_done || user_threads || w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return false;
    if (w->am->ngets >= AM_GETS_MAX)
        oldest_get_end(w->am);
    return true;
}

/* g joins the gets in flight. */
static void get_queue(struct fy_rma_am *am, struct am_get *g)
{
    *am->gets_tail = g;
    am->gets_tail = &g->next;
    am->ngets++;
}

/* A direct get: the bytes into the origin's buffer when it is flat (else
 * a temporary), or a refusal on the status tag. Into a flat buffer, it
 * returns once asked for where get_later allows. */
static int get_direct(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
                      struct fy_dtype *odt, int target, uint64_t taddr,
                      MPI_Count bytes)
{
    struct fy_rma_am *am = w->am;
    bool flat = fy_rma_flat(ocount, odt, bytes);
    bool later = flat && get_later(w);
    struct am_get *g = calloc(1, sizeof(*g) + sizeof(struct fy_rma_am_reply));
    char *dst = flat ? obuf : malloc((size_t)bytes);
    if (!g || !dst) {
        free(g);
        if (!flat)
            free(dst);
        return -ENOMEM;
    }
    g->bytes = bytes;
    int tag = next_tag(am), status = next_tag(am);
    int rc = fy_p2p_irecv(dst, bytes, fy_dtype_get(MPI_BYTE), target, tag,
                          w->comm, w->comm->ctx, &g->rd);
    if (!rc)
        rc = post_reply(am, target, status, g->st,
                        sizeof(struct fy_rma_am_reply), &g->rs);
    if (!rc)
        rc = direct_req(am, target, FY_RMA_AM_GET_DIRECT, taddr,
                        (uint64_t)bytes, tag, status);
    if (rc) {
        if (g->rs) {
            drop_recv(g->rs);
            g->rs = NULL;
        }
        (void)get_end(am, g); /* takes back the data receive */
    } else if (later) {
        get_queue(am, g);
        return 0;
    } else {
        rc = get_end(am, g);
    }
    if (!flat) {
        if (!rc)
            fy_dtype_unpack(dst, bytes, obuf, ocount, odt);
        free(dst);
    }
    return rc;
}

int fy_rma_am_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt)
{
    AM_ENGINE_LOCK();
    if (direct_ok(w, target, tcount, tdt, FY_RMA_AM_DIRECT_MIN))
        return put_direct(w, obuf, ocount, odt, target, taddr,
                          tcount * tdt->size);
    return send_data(w, FY_RMA_AM_PUT, 0, 0, 1, obuf, ocount, odt, true, target,
                     taddr, tcount, tdt);
}

/* A get chunk whose reply is awaited. */
struct get_chunk {
    struct fy_req *r;
    char *buf;
    MPI_Count off, len;
    uint64_t seq;
};

#define GET_PKT_MAX                                                            \
    (sizeof(struct fy_rma_am_hdr) +                                            \
     FY_RMA_AM_NSEG * sizeof(struct fy_rma_am_seg))

/* The request (into pkt, GET_PKT_MAX bytes; *len its length) for the
 * chunk of the packed bytes of tcount elements of tdt at taddr that
 * starts at 'sent'. Returns the chunk's bytes or a negative errno. */
static int64_t get_pkt(char *pkt, uint64_t taddr, MPI_Count tcount,
                       const struct fy_dtype *tdt, MPI_Count sent,
                       uint64_t *len)
{
    struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_GET};
    struct fy_rma_am_seg *sg = (struct fy_rma_am_seg *)(pkt + sizeof(h));
    int64_t c =
        pieces(taddr, tcount, tdt, sent, FY_RMA_AM_CHUNK, 1, sg, &h.nseg);
    if (c < 0)
        return c;
    h.bytes = (uint64_t)c;
    memcpy(pkt, &h, sizeof(h));
    *len = sizeof(h) + h.nseg * sizeof(*sg);
    return c;
}

/* A get that one request covers, returned once asked for (am->gets; its
 * bytes unpacked into obuf by get_end). Returns 1, having asked nothing,
 * when it needs more than one request. */
static int get_small(struct fy_rma_am *am, void *obuf, MPI_Count ocount,
                     struct fy_dtype *odt, int target, uint64_t taddr,
                     MPI_Count tcount, struct fy_dtype *tdt)
{
    alignas(8) char pkt[GET_PKT_MAX];
    uint64_t len;
    int64_t c = get_pkt(pkt, taddr, tcount, tdt, 0, &len);
    if (c < 0)
        return (int)c;
    if (c != tcount * tdt->size)
        return 1;
    struct am_get *g =
        calloc(1, sizeof(*g) + sizeof(struct fy_rma_am_reply) + (size_t)c);
    if (!g)
        return -ENOMEM;
    int rc = ask(am, target, pkt, len, NULL, g->st, (uint64_t)c, &g->rd,
                 &g->seq, true);
    if (rc) {
        free(g);
        return rc;
    }
    g->bytes = c;
    g->obuf = obuf;
    g->ocount = ocount;
    g->odt = odt;
    g->target = target;
    fy_dtype_retain(odt);
    am->getseq[target] = g->seq;
    get_queue(am, g);
    return 0;
}

int fy_rma_am_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt)
{
    AM_ENGINE_LOCK();
    if (direct_ok(w, target, tcount, tdt, FY_RMA_AM_GET_DIRECT_MIN))
        return get_direct(w, obuf, ocount, odt, target, taddr,
                          tcount * tdt->size);
    struct fy_rma_am *am = w->am;
    MPI_Count bytes = tcount * tdt->size, sent = 0;
    if (bytes <= FY_RMA_AM_CHUNK && get_later(w)) {
        int rc = get_small(am, obuf, ocount, odt, target, taddr, tcount, tdt);
        if (rc <= 0)
            return rc;
    }
    struct get_chunk q[AM_GET_DEPTH];
    int head = 0, n = 0, rc = 0;
    /* Keep up to AM_GET_DEPTH chunks asked for, the oldest awaited. */
    while ((sent < bytes && !rc) || n) {
        if (sent < bytes && !rc && n < AM_GET_DEPTH) {
            struct get_chunk *g = &q[(head + n) % AM_GET_DEPTH];
            alignas(8) char pkt[GET_PKT_MAX];
            uint64_t len;
            int64_t c = get_pkt(pkt, taddr, tcount, tdt, sent, &len);
            g->buf = c > 0 ? malloc(sizeof(struct fy_rma_am_reply) + (size_t)c)
                           : NULL;
            if (c < 0 || !g->buf) {
                rc = c < 0 ? (int)c : -ENOMEM;
                continue;
            }
            rc = ask(am, target, pkt, len, NULL, g->buf, (uint64_t)c, &g->r,
                     &g->seq, false);
            if (rc) {
                free(g->buf);
                continue;
            }
            g->off = sent;
            g->len = c;
            sent += c;
            n++;
            continue;
        }
        struct get_chunk *g = &q[head];
        const char *data;
        int e = await_reply(am, target, g->r, g->buf, (uint64_t)g->len, g->seq,
                            &data);
        if (!e && !rc)
            fy_dtype_unpack_range(data, g->off, g->len, obuf, ocount, odt);
        rc = rc ? rc : e;
        free(g->buf);
        head = (head + 1) % AM_GET_DEPTH;
        n--;
    }
    return rc;
}

int fy_rma_am_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                  struct fy_dtype *rdt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op)
{
    AM_ENGINE_LOCK();
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
    if (!rbuf)
        return send_data(w, FY_RMA_AM_ACC, (int32_t)op->handle,
                         (int32_t)u->handle, es, obuf, ocount, odt, true,
                         target, taddr, tcount, tdt);
    /* Get-accumulate: one chunk at a time, each answered. */
    MPI_Count bytes = tcount * tdt->size, done = 0;
    reap_tx(am, false);
    while (done < bytes) {
        struct fy_rma_am_seg sg[FY_RMA_AM_NSEG];
        struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_GACC,
                                  .op = (int32_t)op->handle,
                                  .type = (int32_t)u->handle};
        int64_t c = pieces(taddr, tcount, tdt, done, FY_RMA_AM_CHUNK / es * es,
                           es, sg, &h.nseg);
        if (c < 0)
            return (int)c;
        h.bytes = (uint64_t)c;
        uint64_t segb = h.nseg * sizeof(struct fy_rma_am_seg);
        uint64_t len = sizeof(h) + segb + (no_op ? 0 : h.bytes);
        alignas(8) char small[AM_SMALL];
        struct am_send *heap;
        char *pkt = pkt_buf(len, small, &heap);
        char *reply = malloc(sizeof(struct fy_rma_am_reply) + h.bytes);
        if (!pkt || !reply) {
            free(heap);
            free(reply);
            return -ENOMEM;
        }
        memcpy(pkt, &h, sizeof(h));
        memcpy(pkt + sizeof(h), sg, segb);
        if (!no_op)
            fy_dtype_pack_range(obuf, ocount, odt, done, c,
                                pkt + sizeof(h) + segb);
        const char *data;
        int rc = roundtrip(am, target, pkt, len, heap, reply, h.bytes, &data);
        if (!rc)
            fy_dtype_unpack_range(data, done, c, rbuf, rcount, rdt);
        free(reply);
        if (rc)
            return rc;
        done += c;
    }
    return 0;
}

int fy_rma_am_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                  void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr)
{
    AM_ENGINE_LOCK();
    struct fy_rma_am *am = w->am;
    uint64_t n = (uint64_t)dt->size;
    if (n > 16)
        return -EINVAL;
    struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_CAS,
                              .nseg = 1,
                              .bytes = n,
                              .type = (int32_t)dt->handle};
    struct fy_rma_am_seg sg = {taddr + (uint64_t)dt->true_lb, n};
    alignas(8) char pkt[sizeof(h) + sizeof(sg) + 32];
    alignas(8) char reply[sizeof(struct fy_rma_am_reply) + 16];
    memcpy(pkt, &h, sizeof(h));
    memcpy(pkt + sizeof(h), &sg, sizeof(sg));
    memcpy(pkt + sizeof(h) + sizeof(sg), obuf, n);
    memcpy(pkt + sizeof(h) + sizeof(sg) + n, cbuf, n);
    const char *data;
    int rc = roundtrip(am, target, pkt, sizeof(h) + sizeof(sg) + 2 * n, NULL,
                       reply, n, &data);
    if (!rc)
        memcpy(rbuf, data, n);
    return rc;
}

/* A request without data whose answer is collected later (flush,
 * unlock: asked of every target first, then awaited). */
struct reply_wait {
    struct fy_req *r;
    uint64_t seq;
    int t;
    alignas(8) char buf[sizeof(struct fy_rma_am_reply)];
};

/* Send the bare request h (its tag set) to t; u awaits its answer. */
static int reply_ask(struct fy_rma_am *am, int t, struct fy_rma_am_hdr *h,
                     struct reply_wait *u)
{
    int rc = post_reply(am, t, (int)h->tag, u->buf, sizeof(u->buf), &u->r);
    if (rc)
        return rc;
    rc = send_req_r(am, t, (char *)h, sizeof(*h), NULL, &u->seq, u->r, false);
    if (rc)
        drop_recv(u->r);
    u->t = t;
    return rc;
}

/* Await the answers of the nt requests asked (unlocks: the lock is gone
 * then). Returns first, else the first error. */
static int replies_collect(struct fy_rma_am *am, struct reply_wait *u, int nt,
                           bool unlocks, int first)
{
    for (int i = 0; i < nt; i++) {
        const char *data;
        int rc = await_reply(am, u[i].t, u[i].r, u[i].buf, 0, u[i].seq, &data);
        if (unlocks)
            am->lk[u[i].t].st = LK_NONE;
        first = first ? first : rc;
    }
    return first;
}

int fy_rma_am_flush(struct fy_rma_win *w, int target)
{
    AM_ENGINE_LOCK();
    struct fy_rma_am *am = w->am;
    if (!am)
        return 0;
    int first = 0, nt = 0;
    /* Ask every target first, then collect: the round trips overlap. */
    struct reply_wait *fw = calloc((size_t)w->size, sizeof(*fw));
    if (!fw)
        return -ENOMEM;
    for (int t = 0; t < w->size; t++) {
        if ((target >= 0 && t != target) || am->nsent[t] <= am->nacked[t])
            continue;
        /* A small get as t's last request answers for all (sent now if
         * it waits in the batch: its answer is awaited below). */
        if (am->getseq[t] == am->nsent[t]) {
            if (am->batch && batch_counted(am, t))
                note_err(am, batch_send(am, t));
            continue;
        }
        struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_FLUSH,
                                  .tag = (uint32_t)next_tag(am)};
        int rc = reply_ask(am, t, &h, &fw[nt]);
        if (rc) {
            first = first ? first : rc;
            continue;
        }
        nt++;
    }
    first = replies_collect(am, fw, nt, false, first);
    free(fw);
    flush_gets(am);
    reap_tx(am, false);
    note_err(am, first);
    return am->origin_err;
}

/* ---- synchronisation across nodes ----------------------------------------
 * Locks of remote targets: see am_lk (taken with the first request). */

int fy_rma_am_lock(struct fy_rma_win *w, int target, bool exclusive)
{
    AM_ENGINE_LOCK();
    struct fy_rma_am *am = w->am;
    if (am->lk[target].st != LK_NONE) /* the MPI layer refuses a 2nd lock */
        return -EPROTO;
    am->lk[target].st = exclusive ? LK_EXCL : LK_SHARED;
    return 0;
}

int fy_rma_am_unlock(struct fy_rma_win *w, int target, bool exclusive)
{
    AM_ENGINE_LOCK();
    struct fy_rma_am *am = w->am;
    int lo = target < 0 ? 0 : target, hi = target < 0 ? w->size : target + 1;
    struct reply_wait one,
        *uw = target < 0 ? calloc((size_t)w->size, sizeof(*uw)) : &one;
    if (!uw)
        return -ENOMEM;
    int first = 0, nt = 0;
    /* Ask every target first, then collect: the round trips overlap. */
    for (int t = lo; t < hi; t++) {
        if (!w->peers[t].remote)
            continue;
        lock_settle(am, t, true);
        uint8_t st = am->lk[t].st;
        if (st != LK_QUEUED && st != LK_HELD) {
            am->lk[t].st = LK_NONE; /* nothing went to t under it */
            continue;
        }
        /* (A queued lock goes along with the UNLOCK.) */
        struct fy_rma_am_hdr h = {.kind = FY_RMA_AM_UNLOCK,
                                  .op = exclusive,
                                  .tag = (uint32_t)next_tag(am)};
        int rc = reply_ask(am, t, &h, &uw[nt]);
        if (rc) {
            am->lk[t].st = LK_NONE;
            first = first ? first : rc;
            continue;
        }
        nt++;
    }
    first = replies_collect(am, uw, nt, true, first);
    if (uw != &one)
        free(uw);
    flush_gets(am);
    reap_tx(am, false);
    note_err(am, first);
    return first;
}

int fy_rma_am_signal(struct fy_rma_win *w, int target, uint32_t kind)
{
    AM_ENGINE_LOCK();
    struct fy_rma_am *am = w->am;
    alignas(8) struct fy_rma_am_hdr h = {.kind = kind};
    uint64_t seq;
    int rc = send_req(am, target, (char *)&h, sizeof(h), NULL, &seq);
    note_err(am, rc);
    return rc;
}

int fy_rma_am_error(struct fy_rma_win *w)
{
    int ho = fy_rma_ho_error(w);
    if (!w->am)
        return ho;
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
    /* Under MULTIPLE other threads may create windows too. */
    bool locked = fy_mt_on;
    if (locked)
        fy_mt_lock();
    if (s_thread_on || !s_thread_wanted) {
        if (locked)
            fy_mt_unlock();
        return;
    }
    /* The creating call's last action (rma.h): from now on every entry
     * point takes the lock. */
    s_mt_before = fy_mt_on;
    fy_mt_on = true;
    atomic_store(&s_thread_stop, false);
    if (pthread_create(&s_thread, NULL, thread_main, NULL) != 0) {
        FY_WARN("MPI one-sided: cannot start the progress thread: %m; "
                "passive target waits for the target to call MPI");
        fy_mt_on = s_mt_before;
        s_thread_wanted = false;
        if (locked)
            fy_mt_unlock();
        return;
    }
    s_thread_on = true;
    FY_INFO("one-sided progress thread started (FERRY_RMA_THREAD)");
    if (locked)
        fy_mt_unlock();
}

void fy_rma_thread_stop(void)
{
    if (!s_thread_on)
        return;
    atomic_store(&s_thread_stop, true);
    fy_wake_slow(fy_world_rank); /* out of a doorbell sleep */
    int d = fy_mt_wait_begin();  /* the thread needs the lock to see it */
    pthread_join(s_thread, NULL);
    fy_mt_wait_end(d);
    fy_mt_on = s_mt_before;
    s_thread_on = false;
    s_thread_wanted = false;
}
