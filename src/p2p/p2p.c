/* SPDX-License-Identifier: MIT */
/* Point-to-point core: per-peer mailboxes (fastboxes) and per-receiver
 * lock-free cell queues move packets; every packet from one sender to one
 * receiver carries a pair sequence number, and the receiver consumes them
 * strictly in that order whatever channel each took, so MPI's
 * non-overtaking rule holds across eager, sync and rendezvous messages.
 * Matching follows MPI: posted receives and unexpected messages in order,
 * wildcards on source and tag, contexts never mix. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "shm/cellq_inl.h"
#include "util/tuned.h"

int fy_world_rank;
int fy_world_size;
struct fy_p2p_state fy_p2p;

/* ---- requests ---------------------------------------------------------- */

static struct fy_req *req_free_list;

struct fy_req *fy_req_alloc(void)
{
    struct fy_req *r = req_free_list;
    if (r) {
        req_free_list = r->next;
    } else {
        r = malloc(sizeof(*r));
        if (!r)
            return NULL;
    }
    memset(r, 0, sizeof(*r));
    r->handle = MPI_REQUEST_NULL;
    return r;
}

void fy_req_free(struct fy_req *r)
{
    if (!r)
        return;
    free(r->pack);
    r->pack = NULL;
    if (r->dt)
        fy_dtype_release(r->dt);
    r->dt = NULL;
    if (r->comm)
        fy_comm_release(r->comm);
    r->comm = NULL;
    r->kind = FY_REQ_DONE;
    r->next = req_free_list;
    req_free_list = r;
}

void fy_req_complete(struct fy_req *r)
{
    r->complete = true;
}

/* ---- rendezvous cookies ----------------------------------------------- */

struct cookie_slot {
    struct fy_req *req;
    uint32_t gen;
    uint32_t next_free;
};
static struct cookie_slot *cookies;
static uint32_t ncookies, cookie_free = UINT32_MAX;

uint64_t fy_cookie_new(struct fy_req *r)
{
    uint32_t idx;
    if (cookie_free != UINT32_MAX) {
        idx = cookie_free;
        cookie_free = cookies[idx].next_free;
    } else {
        struct cookie_slot *n = realloc(cookies, (ncookies + 64) * sizeof(*n));
        if (!n)
            fy_fatal(1, "out of memory for rendezvous bookkeeping");
        cookies = n;
        for (uint32_t i = ncookies; i < ncookies + 64; i++)
            cookies[i] = (struct cookie_slot){
                NULL, 1, i + 1 < ncookies + 64 ? i + 1 : UINT32_MAX};
        idx = ncookies;
        cookie_free = idx + 1;
        ncookies += 64;
    }
    cookies[idx].req = r;
    return ((uint64_t)cookies[idx].gen << 32) | idx;
}

struct fy_req *fy_cookie_find(uint64_t cookie, int kind)
{
    uint32_t idx = (uint32_t)cookie;
    if (idx >= ncookies || cookies[idx].gen != (uint32_t)(cookie >> 32) ||
        !cookies[idx].req || cookies[idx].req->kind != kind)
        return NULL;
    return cookies[idx].req;
}

void fy_cookie_drop(uint64_t cookie)
{
    uint32_t idx = (uint32_t)cookie;
    if (idx >= ncookies || cookies[idx].gen != (uint32_t)(cookie >> 32))
        return;
    cookies[idx].req = NULL;
    cookies[idx].gen++;
    cookies[idx].next_free = cookie_free;
    cookie_free = idx;
}

/* ---- waking and sleeping ---------------------------------------------- */

static long futex(_Atomic uint32_t *addr, int op, uint32_t val,
                  const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void fy_wake_slow(int peer)
{
    struct fy_shm_rank *pr = &fy_shm.ranks[peer];
    /* F1: Dekker with F2 in sleep(): our packet (stored before) or its
     * 'sleeping' flag - at least one side sees the other's store. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&pr->sleeping, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&pr->doorbell, 1, memory_order_seq_cst);
        futex(&pr->doorbell, FUTEX_WAKE, 1, NULL);
    }
}

/* Anything that a progress pass would act on, without acting. */
static bool work_visible(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (p == s->me)
            continue;
        if (atomic_load_explicit(&pe->ring_in[pe->fb_next % s->slots].seq,
                                 memory_order_relaxed) == pe->rseq)
            return true;
    }
    if (fy_cellq_peek(s->recv_tail))
        return true;
    if (s->nout && fy_cellq_peek(s->free_tail))
        return true;
    return fy_rndv_work_visible();
}

static void sleep_on_doorbell(void)
{
    struct fy_shm_rank *my = fy_p2p.my;
    uint32_t v = atomic_load_explicit(&my->doorbell, memory_order_seq_cst);
    atomic_store_explicit(&my->sleeping, 1, memory_order_seq_cst);
    /* F2: pairs with F1. */
    atomic_thread_fence(memory_order_seq_cst);
    if (!work_visible()) {
        /* The timeout is a safety net only; wake-ups are explicit. */
        struct timespec ts = {0, 20 * 1000 * 1000};
        futex(&my->doorbell, FUTEX_WAIT, v, &ts);
    }
    atomic_store_explicit(&my->sleeping, 0, memory_order_relaxed);
}

void fy_progress_idle(unsigned *spins)
{
    unsigned n = ++*spins;
    if (!fy_p2p.wait_block || n < (unsigned)fy_p2p.spin_limit) {
        fy_cpu_relax();
        return;
    }
    if (n < (unsigned)fy_p2p.spin_limit + fy_p2p.yield_limit) {
        sched_yield();
        return;
    }
    sleep_on_doorbell();
}

/* ---- outgoing packets ------------------------------------------------- */

uint64_t fy_cell_get(void)
{
    return fy_cellq_pop(&fy_p2p.my->freeq, &fy_p2p.free_tail);
}

void fy_cell_post(int peer, uint64_t off)
{
    fy_cellq_push(&fy_shm.ranks[peer].recvq, off);
    fy_wake(peer);
}

static inline struct fy_cell *cell_at(uint64_t off)
{
    return (struct fy_cell *)fy_shm_ptr(off);
}

static inline bool is_eager(uint32_t type)
{
    return type == FY_PKT_EAGER || type == FY_PKT_EAGER_SYNC;
}

/* Put one packet into the peer's mailbox ring if it has room: the first
 * slot carries the header and FY_FBOX_PAYLOAD bytes, continuation slots
 * FY_FBOX_CONT bytes each after a zero seq. The first slot's seq is stored
 * last, with release, so its reader sees the whole message. */
static inline bool fbox_put(int peer, struct fy_peer *pe, uint32_t type,
                            int32_t tag, uint32_t ctx, const void *data,
                            uint64_t len)
{
    const uint32_t slots = fy_p2p.slots;
    uint32_t n = fy_fbox_nslots(len);
    if (pe->fb_sent + n - pe->fb_acked > slots) {
        /* A5: pairs with R5 in consume_slots(): slots are free to
         * overwrite once we see them consumed. */
        pe->fb_acked =
            atomic_load_explicit(&pe->ack_out->consumed, memory_order_acquire);
        if (pe->fb_sent + n - pe->fb_acked > slots)
            return false;
    }
    const uint8_t *d = data;
    uint64_t first = FY_MIN(len, (uint64_t)FY_FBOX_PAYLOAD);
    struct fy_fbox_slot *sl = &pe->ring_out[pe->fb_sent % slots];
    if (FY_UNLIKELY(n > 1)) {
        uint64_t rest = len - first;
        const uint8_t *c = d + first;
        for (uint32_t i = 1; i < n; i++) {
            struct fy_fbox_slot *cs = &pe->ring_out[(pe->fb_sent + i) % slots];
            uint64_t k = FY_MIN(rest, (uint64_t)FY_FBOX_CONT);
            atomic_store_explicit(&cs->seq, 0, memory_order_relaxed);
            memcpy((uint8_t *)cs + sizeof(cs->seq), c, k);
            c += k;
            rest -= k;
        }
    }
    sl->tag = tag;
    sl->ctx_type = (uint16_t)(ctx | type << 12);
    sl->len = (uint16_t)len;
    if (first)
        memcpy(sl->data, d, first);
    pe->fb_sent += n;
    /* R6: pairs with A6 in the readers: the payload (continuations
     * included) is visible to whoever sees the new sequence number. */
    atomic_store_explicit(&sl->seq, ++pe->sseq, memory_order_release);
    fy_wake(peer);
    return true;
}

/* Copy a mailbox message's payload out of the ring (after its seq was
 * acquired and its length checked). */
static inline void fbox_copy_out(const struct fy_peer *pe,
                                 const struct fy_fbox_slot *sl, void *dst,
                                 uint64_t len)
{
    uint64_t first = FY_MIN(len, (uint64_t)FY_FBOX_PAYLOAD);
    uint64_t rest = len - first;
    /* Ask for every continuation line at once: the misses to the other
     * core's cache then overlap instead of queueing one by one. */
    for (uint64_t i = 1; i <= (rest + FY_FBOX_CONT - 1) / FY_FBOX_CONT; i++)
        __builtin_prefetch(&pe->ring_in[(pe->fb_next + i) % fy_p2p.slots]);
    if (first)
        memcpy(dst, sl->data, first);
    uint8_t *c = (uint8_t *)dst + first;
    for (uint64_t i = 1; rest; i++) {
        const struct fy_fbox_slot *cs =
            &pe->ring_in[(pe->fb_next + i) % fy_p2p.slots];
        uint64_t k = FY_MIN(rest, (uint64_t)FY_FBOX_CONT);
        memcpy(c, (const uint8_t *)cs + sizeof(cs->seq), k);
        c += k;
        rest -= k;
    }
}

/* Put one packet into a free cell of ours and post it to the peer's
 * receive queue. Returns false when we have no free cell. */
static bool cell_put(int peer, struct fy_peer *pe, uint32_t type, int32_t tag,
                     uint32_t ctx, const struct fy_ctl *ctl, const void *data,
                     uint64_t len)
{
    uint64_t off = fy_cell_get();
    if (!off)
        return false;
    struct fy_cell *c = cell_at(off);
    c->src = (uint32_t)fy_p2p.me;
    c->type = type;
    c->tag = tag;
    c->ctx = ctx;
    c->seq = ++pe->sseq;
    c->len = len;
    if (len)
        memcpy((uint8_t *)c + FY_CELL_HDR, data, len);
    if (ctl) {
        c->total = ctl->total;
        c->addr = ctl->addr;
        c->cookie = ctl->cookie;
        c->offset = ctl->offset;
    } else {
        c->total = len;
    }
    fy_cell_post(peer, off);
    return true;
}

/* Try to put one packet on the wire now. Returns true if sent. */
static bool pkt_try(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                    const struct fy_ctl *ctl, struct fy_req *req)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_peer *pe = &s->peers[peer];
    uint64_t len = type == FY_PKT_EAGER        ? (uint64_t)req->bytes
                   : type == FY_PKT_EAGER_SYNC ? (uint64_t)req->bytes
                                               : sizeof(struct fy_ctl);
    bool fits_box = type == FY_PKT_EAGER
                        ? len <= s->fbox_max
                        : type != FY_PKT_EAGER_SYNC && type != FY_PKT_DATA;
    if (fits_box) {
        const void *data =
            type == FY_PKT_EAGER ? fy_req_data(req) : (const void *)ctl;
        if (fbox_put(peer, pe, type, tag, ctx, data, len))
            return true;
    }
    const void *data = is_eager(type) ? fy_req_data(req) : NULL;
    return cell_put(peer, pe, type, tag, ctx, ctl, data,
                    is_eager(type) ? len : 0);
}

/* What happens to a send request once its first packet has left. */
static void sent_hook(struct fy_req *req, uint32_t type)
{
    if (!req)
        return;
    if (type == FY_PKT_EAGER) {
        fy_req_complete(req);
    } else if (type == FY_PKT_EAGER_SYNC) {
        req->proto = FY_RP_SYNC_WAIT;
    } else if (type == FY_PKT_RTS) {
        req->proto = FY_RP_RTS_SENT;
    }
}

int fy_pkt_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                const struct fy_ctl *ctl, struct fy_req *req)
{
    struct fy_peer *pe = &fy_p2p.peers[peer];
    bool ordered =
        type == FY_PKT_EAGER || type == FY_PKT_EAGER_SYNC || type == FY_PKT_RTS;
    /* Matched packets keep their order behind any deferred ones; control
     * packets may overtake (they are not matched). */
    if ((!ordered || !pe->out_head) &&
        pkt_try(peer, type, tag, ctx, ctl, req)) {
        sent_hook(req, type);
        return 0;
    }
    struct fy_outpkt *o = malloc(sizeof(*o));
    if (!o)
        return -ENOMEM;
    *o = (struct fy_outpkt){.type = type, .tag = tag, .ctx = ctx, .req = req};
    if (ctl)
        o->ctl = *ctl;
    if (req)
        req->proto = FY_RP_DEFERRED;
    if (!pe->out_head)
        fy_p2p.nout++;
    if (pe->out_tail)
        pe->out_tail->next = o;
    else
        pe->out_head = o;
    pe->out_tail = o;
    return 0;
}

static int flush_out(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    int done = 0;
    for (int p = 0; p < s->P && s->nout; p++) {
        struct fy_peer *pe = &s->peers[p];
        while (pe->out_head) {
            struct fy_outpkt *o = pe->out_head;
            if (!pkt_try(p, o->type, o->tag, o->ctx, &o->ctl, o->req))
                break;
            pe->out_head = o->next;
            if (!pe->out_head) {
                pe->out_tail = NULL;
                s->nout--;
            }
            sent_hook(o->req, o->type);
            free(o);
            done++;
        }
    }
    return done;
}

/* ---- matching ---------------------------------------------------------- */

static inline bool envelope_match(const struct fy_req *r, int wsrc, int32_t tag,
                                  uint32_t ctx)
{
    return r->ctx == ctx && (r->wpeer == wsrc || r->peer == MPI_ANY_SOURCE) &&
           (r->tag == tag || r->tag == MPI_ANY_TAG);
}

static void posted_unlink(struct fy_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        fy_p2p.posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        fy_p2p.posted_tail = r->prev;
    r->on_list = false;
    r->next = r->prev = NULL;
}

static struct fy_req *posted_take(int wsrc, int32_t tag, uint32_t ctx)
{
    for (struct fy_req *r = fy_p2p.posted_head; r; r = r->next) {
        if (envelope_match(r, wsrc, tag, ctx)) {
            posted_unlink(r);
            return r;
        }
    }
    return NULL;
}

static void posted_append(struct fy_req *r)
{
    r->next = NULL;
    r->prev = fy_p2p.posted_tail;
    if (fy_p2p.posted_tail)
        fy_p2p.posted_tail->next = r;
    else
        fy_p2p.posted_head = r;
    fy_p2p.posted_tail = r;
    r->on_list = true;
}

static void unexp_append(struct fy_unexp *u)
{
    u->next = NULL;
    u->prev = fy_p2p.unexp_tail;
    if (fy_p2p.unexp_tail)
        fy_p2p.unexp_tail->next = u;
    else
        fy_p2p.unexp_head = u;
    fy_p2p.unexp_tail = u;
}

static void unexp_unlink(struct fy_unexp *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        fy_p2p.unexp_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        fy_p2p.unexp_tail = u->prev;
}

static struct fy_unexp *unexp_find(int wsrc, int anysrc, int32_t tag,
                                   uint32_t ctx)
{
    for (struct fy_unexp *u = fy_p2p.unexp_head; u; u = u->next)
        if (u->ctx == ctx && (anysrc || u->src == wsrc) &&
            (tag == MPI_ANY_TAG || u->tag == tag))
            return u;
    return NULL;
}

/* Copy 'len' bytes of a whole message into a matched receive. */
static void deliver_bytes(struct fy_req *r, int wsrc, int32_t tag,
                          const void *data, uint64_t len)
{
    uint64_t cap = fy_req_capacity(r);
    uint64_t n = FY_MIN(len, cap);
    if (n) {
        if (r->dt->contig)
            memcpy(r->buf, data, n);
        else
            fy_dtype_unpack(data, (MPI_Count)n, r->buf, r->count, r->dt);
    }
    r->st_source = fy_comm_rank_of(r->comm, wsrc);
    r->st_tag = tag;
    r->st_bytes = (MPI_Count)n;
    if (len > cap)
        r->err = -EMSGSIZE;
    fy_req_complete(r);
}

void fy_recv_finish(struct fy_req *r, uint64_t got, uint64_t total)
{
    if (r->pack) {
        fy_dtype_unpack(r->pack, (MPI_Count)got, r->buf, r->count, r->dt);
        free(r->pack);
        r->pack = NULL;
    }
    r->st_bytes = (MPI_Count)got;
    if (total > got && !r->err)
        r->err = -EMSGSIZE;
    fy_req_complete(r);
}

static void send_fin(int peer, uint64_t cookie)
{
    struct fy_ctl ctl = {.cookie = cookie};
    if (fy_pkt_send(peer, FY_PKT_FIN, 0, 0, &ctl, NULL))
        fy_fatal(1, "out of memory sending an acknowledgement to rank %d",
                 peer);
}

/* A matched (or to-be-queued) message packet from a peer. */
static void on_message(const struct fy_pkt *p)
{
    struct fy_req *r = posted_take(p->src, p->tag, p->ctx);
    if (r) {
        if (p->type == FY_PKT_RTS) {
            fy_rndv_on_rts(r, p);
            return;
        }
        deliver_bytes(r, p->src, p->tag, p->data, p->len);
        if (p->type == FY_PKT_EAGER_SYNC)
            send_fin(p->src, p->ctl.cookie);
        return;
    }
    fy_proto_stats.unexpected++;
    uint64_t keep = p->type == FY_PKT_RTS ? 0 : p->len;
    struct fy_unexp *u = malloc(sizeof(*u) + keep);
    if (!u)
        fy_fatal(1,
                 "out of memory queueing an unexpected message of %llu "
                 "bytes from rank %d",
                 (unsigned long long)keep, p->src);
    *u = (struct fy_unexp){.src = p->src,
                           .type = p->type,
                           .tag = p->tag,
                           .ctx = p->ctx,
                           .ctl = p->ctl,
                           .len = keep};
    if (keep)
        memcpy(u->data, p->data, keep);
    unexp_append(u);
}

static _Noreturn void bad_packet(int src, const char *what)
{
    fy_fatal(1, "malformed packet from rank %d (%s); shared memory corrupted?",
             src, what);
}

static void handle_pkt(const struct fy_pkt *p)
{
    switch (p->type) {
    case FY_PKT_EAGER:
    case FY_PKT_EAGER_SYNC:
    case FY_PKT_RTS:
        if (p->ctx >= FY_CTX_MAX)
            bad_packet(p->src, "context out of range");
        on_message(p);
        break;
    case FY_PKT_CTS:
        fy_rndv_on_cts(p);
        break;
    case FY_PKT_DATA:
        fy_rndv_on_data(p);
        break;
    case FY_PKT_FIN:
        fy_rndv_on_fin(p);
        break;
    case FY_PKT_SPLIT:
        fy_split_on_pkt(p);
        break;
    default:
        bad_packet(p->src, "unknown type");
    }
}

/* ---- incoming: fastboxes and the cell queue ---------------------------- */

static inline void consume_slots(struct fy_peer *pe, uint32_t n)
{
    pe->fb_next += n;
    pe->rseq++;
    /* R5: pairs with A5: the sender may reuse the slot once it sees this. */
    atomic_store_explicit(&pe->ack_in->consumed, pe->fb_next,
                          memory_order_release);
}

/* Take the next packet of 'src' from its fastbox if it is the one due. */
static bool poll_fastbox(int src)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_peer *pe = &s->peers[src];
    struct fy_fbox_slot *sl = &pe->ring_in[pe->fb_next % s->slots];
    /* A6: pairs with R6. */
    if (atomic_load_explicit(&sl->seq, memory_order_acquire) != pe->rseq)
        return false;
    /* Read the header once: the peer owns the line. */
    int32_t tag = sl->tag;
    uint16_t ct = sl->ctx_type;
    uint64_t len = sl->len;
    uint32_t type = ct >> 12;
    if (len > s->fbox_cap)
        bad_packet(src, "mailbox length");
    uint8_t copy[FY_FBOX_MAX_LEN(FY_FBOX_SLOTS)];
    fbox_copy_out(pe, sl, copy, len);
    struct fy_pkt p = {.src = src,
                       .type = type,
                       .tag = tag,
                       .ctx = ct & 0xfffu,
                       .data = copy,
                       .len = len};
    if (type != FY_PKT_EAGER) {
        if (len != sizeof(struct fy_ctl))
            bad_packet(src, "mailbox control length");
        memcpy(&p.ctl, copy, sizeof(p.ctl));
        p.len = 0;
    } else {
        fy_proto_count(FY_PROTO_EAGER_MAILBOX, len);
    }
    consume_slots(pe, fy_fbox_nslots(len));
    handle_pkt(&p);
    return true;
}

static void return_cell(uint64_t off)
{
    int owner = fy_cell_owner(off); /* checked when the cell was taken */
    fy_cellq_push(&fy_shm.ranks[owner].freeq, off);
    fy_wake(owner);
}

/* Pop our next cell and check it names a real cell of its sender; 0 if
 * the queue is (for now) empty. *src_out is the sender. */
static uint64_t cell_take(int *src_out)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint64_t off = fy_cellq_pop(&s->my->recvq, &s->recv_tail);
    if (!off)
        return 0;
    int src = fy_cell_owner(off);
    if (src < 0)
        fy_fatal(1, "malformed cell offset %#llx in receive queue",
                 (unsigned long long)off);
    struct fy_cell *c = cell_at(off);
    if (c->src != (uint32_t)src)
        bad_packet(src, "cell owner");
    if (c->len > s->cell_payload)
        bad_packet(src, "cell length");
    struct fy_peer *pe = &s->peers[src];
    /* Earlier packets of this sender that took its mailbox are already
     * visible (it published them before this cell): take them first. */
    while (pe->rseq != c->seq) {
        if ((int64_t)(c->seq - pe->rseq) < 0 || !poll_fastbox(src))
            bad_packet(src, "sequence");
    }
    pe->rseq++;
    *src_out = src;
    return off;
}

/* Handle a taken cell and give it back to its owner. */
static void cell_handle(uint64_t off, int src)
{
    struct fy_cell *c = cell_at(off);
    if (c->type == FY_PKT_EAGER || c->type == FY_PKT_EAGER_SYNC)
        fy_proto_count(FY_PROTO_EAGER_CELLS, c->len);
    struct fy_pkt p = {.src = src,
                       .type = c->type,
                       .tag = c->tag,
                       .ctx = c->ctx,
                       .data = (uint8_t *)c + FY_CELL_HDR,
                       .len = c->len,
                       .ctl = {c->total, c->addr, c->cookie, c->offset}};
    handle_pkt(&p);
    return_cell(off);
}

static bool poll_cells(void)
{
    int src;
    uint64_t off = cell_take(&src);
    if (!off)
        return false;
    cell_handle(off, src);
    return true;
}

static int poll_all(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = 0;
    for (int src = 0; src < s->P; src++)
        if (src != s->me)
            while (poll_fastbox(src))
                n++;
    while (poll_cells())
        n++;
    return n;
}

void (*fy_p2p_progress_hook)(void);

int fy_progress(void)
{
    int n = poll_all();
    if (fy_p2p.nout)
        n += flush_out();
    if (fy_p2p.ntx || fy_p2p.nrx)
        n += fy_rndv_progress();
    if (FY_UNLIKELY(fy_p2p_progress_hook != NULL))
        fy_p2p_progress_hook();
    return n;
}

int fy_progress_poll(void)
{
    int n = fy_progress();
    if (n == 0 && FY_UNLIKELY(fy_p2p.wait_block))
        sched_yield();
    return n;
}

int fy_req_wait(struct fy_req *r)
{
    unsigned spins = 0;
    while (!r->complete) {
        if (fy_progress())
            spins = 0;
        else
            fy_progress_idle(&spins);
    }
    return r->err;
}

bool fy_req_test(struct fy_req *r)
{
    if (!r->complete)
        fy_progress_poll();
    return r->complete;
}

/* ---- sends -------------------------------------------------------------- */

/* Deliver a send to ourselves: match now or queue a copy. */
static int self_send(struct fy_req *sr)
{
    const void *data = fy_req_data(sr);
    fy_proto_count(FY_PROTO_SELF, (uint64_t)sr->bytes);
    struct fy_req *r = posted_take(fy_p2p.me, sr->tag, sr->ctx);
    if (r) {
        deliver_bytes(r, fy_p2p.me, sr->tag, data, (uint64_t)sr->bytes);
        fy_req_complete(sr);
        return 0;
    }
    struct fy_unexp *u = malloc(sizeof(*u) + (size_t)sr->bytes);
    if (!u)
        return -ENOMEM;
    *u = (struct fy_unexp){.src = fy_p2p.me,
                           .type = FY_PKT_EAGER,
                           .tag = sr->tag,
                           .ctx = sr->ctx,
                           .len = (uint64_t)sr->bytes};
    if (sr->bytes)
        memcpy(u->data, data, (size_t)sr->bytes);
    if (sr->mode == FY_SEND_SYNC)
        u->self_sync = sr; /* completes when matched */
    else
        fy_req_complete(sr);
    unexp_append(u);
    return 0;
}

static int send_start(struct fy_req *r)
{
    struct fy_p2p_state *s = &fy_p2p;
    if (!r->dt->contig && r->bytes > 0) {
        r->pack = malloc((size_t)r->bytes);
        if (!r->pack)
            return -ENOMEM;
        fy_dtype_pack(r->buf, r->count, r->dt, r->pack);
    }
    if (r->wpeer == s->me)
        return self_send(r);
    if ((uint64_t)r->bytes <= s->eager_max) {
        if (r->mode == FY_SEND_SYNC) {
            r->cookie = fy_cookie_new(r);
            struct fy_ctl ctl = {.total = (uint64_t)r->bytes,
                                 .cookie = r->cookie};
            return fy_pkt_send(r->wpeer, FY_PKT_EAGER_SYNC, r->tag, r->ctx,
                               &ctl, r);
        }
        return fy_pkt_send(r->wpeer, FY_PKT_EAGER, r->tag, r->ctx, NULL, r);
    }
    r->cookie = fy_cookie_new(r);
    struct fy_ctl ctl = {.total = (uint64_t)r->bytes,
                         .addr = (uint64_t)(uintptr_t)fy_req_data(r),
                         .cookie = r->cookie};
    return fy_pkt_send(r->wpeer, FY_PKT_RTS, r->tag, r->ctx, &ctl, r);
}

static struct fy_req *req_init(int kind, void *buf, MPI_Count count,
                               struct fy_dtype *dt, int peer, int tag,
                               struct fy_comm *comm, uint32_t ctx)
{
    struct fy_req *r = fy_req_alloc();
    if (!r)
        return NULL;
    r->kind = (uint8_t)kind;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    dt->refcount++;
    /* MPI lets a communicator be freed while operations on it are pending:
     * the request keeps it (and its context id) alive until it is freed. */
    r->comm = comm;
    comm->refcount++;
    r->ctx = ctx;
    r->peer = peer;
    r->tag = tag;
    r->wpeer = peer >= 0 ? fy_comm_world_rank(comm, peer) : -1;
    r->bytes = count * dt->size;
    return r;
}

static void complete_proc_null(struct fy_req *r)
{
    r->st_source = MPI_PROC_NULL;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    fy_req_complete(r);
}

int fy_p2p_isend(const void *buf, MPI_Count count, struct fy_dtype *dt,
                 int dest, int tag, struct fy_comm *comm, uint32_t ctx,
                 enum fy_send_mode mode, struct fy_req **req_out)
{
    struct fy_req *r =
        req_init(FY_REQ_SEND, (void *)buf, count, dt, dest, tag, comm, ctx);
    if (!r)
        return -ENOMEM;
    r->mode = (uint8_t)mode;
    if (dest == MPI_PROC_NULL) {
        complete_proc_null(r);
    } else {
        int rc = send_start(r);
        if (rc) {
            fy_req_free(r);
            return rc;
        }
    }
    *req_out = r;
    return 0;
}

int fy_p2p_send(const void *buf, MPI_Count count, struct fy_dtype *dt, int dest,
                int tag, struct fy_comm *comm, uint32_t ctx,
                enum fy_send_mode mode)
{
    struct fy_p2p_state *s = &fy_p2p;
    if (dest == MPI_PROC_NULL)
        return 0;
    uint64_t len = (uint64_t)(count * dt->size);
    int w = fy_comm_world_rank(comm, dest);
    /* Fast path: straight into the peer's mailbox, no request. */
    if (FY_LIKELY(len <= s->fbox_max && dt->contig && mode != FY_SEND_SYNC &&
                  w != s->me)) {
        struct fy_peer *pe = &s->peers[w];
        if (FY_LIKELY(!pe->out_head) &&
            FY_LIKELY(fbox_put(w, pe, FY_PKT_EAGER, tag, ctx, buf, len)))
            return 0;
    } else if (len <= s->eager_max && dt->contig && mode != FY_SEND_SYNC &&
               w != s->me) {
        /* Eager through a cell, still without a request. */
        struct fy_peer *pe = &s->peers[w];
        if (!pe->out_head &&
            cell_put(w, pe, FY_PKT_EAGER, tag, ctx, NULL, buf, len))
            return 0;
    }
    struct fy_req *r;
    int rc = fy_p2p_isend(buf, count, dt, dest, tag, comm, ctx, mode, &r);
    if (rc)
        return rc;
    rc = fy_req_wait(r);
    fy_req_free(r);
    return rc;
}

/* ---- receives ----------------------------------------------------------- */

/* Hand an unexpected message to the receive r that matched it. */
static void deliver_unexp(struct fy_req *r, struct fy_unexp *u)
{
    if (u->type == FY_PKT_RTS) {
        struct fy_pkt p = {.src = u->src,
                           .type = u->type,
                           .tag = u->tag,
                           .ctx = u->ctx,
                           .ctl = u->ctl};
        fy_rndv_on_rts(r, &p);
    } else {
        deliver_bytes(r, u->src, u->tag, u->data, u->len);
        if (u->self_sync)
            fy_req_complete(u->self_sync);
        else if (u->type == FY_PKT_EAGER_SYNC)
            send_fin(u->src, u->ctl.cookie);
    }
    free(u);
}

/* Take a matching unexpected message for r, if any. Returns true if r was
 * matched (it may still be in progress for a rendezvous). */
static bool match_unexpected(struct fy_req *r)
{
    struct fy_unexp *u =
        unexp_find(r->wpeer, r->peer == MPI_ANY_SOURCE, r->tag, r->ctx);
    if (!u)
        return false;
    unexp_unlink(u);
    deliver_unexp(r, u);
    return true;
}

int fy_p2p_irecv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                 int tag, struct fy_comm *comm, uint32_t ctx,
                 struct fy_req **req_out)
{
    struct fy_req *r =
        req_init(FY_REQ_RECV, buf, count, dt, src, tag, comm, ctx);
    if (!r)
        return -ENOMEM;
    *req_out = r;
    if (src == MPI_PROC_NULL) {
        complete_proc_null(r);
        return 0;
    }
    /* Drain what has arrived first, so the unexpected queue is current and
     * order with respect to earlier arrivals is kept. */
    fy_progress();
    if (!match_unexpected(r)) {
        if (src >= 0)
            fy_proto_stats.early_direct++;
        posted_append(r);
    }
    return 0;
}

int fy_p2p_recv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                int tag, struct fy_comm *comm, uint32_t ctx, int *source_out,
                int *tag_out, MPI_Count *bytes_out)
{
    struct fy_p2p_state *s = &fy_p2p;
    /* Fast path: nothing queued either way, a specific remote source, a
     * contiguous buffer: spin on that peer's mailbox and copy straight from
     * the slot into the user's buffer. */
    if (src >= 0 && !s->unexp_head && !s->posted_head && dt->contig &&
        !s->nout && !s->ntx && !s->nrx) {
        int w = fy_comm_world_rank(comm, src);
        if (w != s->me) {
            struct fy_peer *pe = &s->peers[w];
            uint64_t cap = (uint64_t)(count * dt->size);
            unsigned spins = 0;
            for (;;) {
                struct fy_fbox_slot *sl = &pe->ring_in[pe->fb_next % s->slots];
                /* A6 (as in poll_fastbox). */
                if (atomic_load_explicit(&sl->seq, memory_order_acquire) ==
                    pe->rseq) {
                    uint16_t ct = sl->ctx_type;
                    uint64_t len = sl->len;
                    int32_t t = sl->tag;
                    if (ct == (uint16_t)(ctx | FY_PKT_EAGER << 12) &&
                        (t == tag || tag == MPI_ANY_TAG) && len <= cap &&
                        len <= s->fbox_cap) {
                        fbox_copy_out(pe, sl, buf, len);
                        consume_slots(pe, fy_fbox_nslots(len));
                        fy_proto_count(FY_PROTO_EAGER_MAILBOX, len);
                        *source_out = src;
                        *tag_out = t;
                        *bytes_out = (MPI_Count)len;
                        return 0;
                    }
                    break;
                }
                if (fy_cellq_peek(s->recv_tail)) {
                    /* A cell: if it is our message, copy it straight out;
                     * anything else goes the general way. */
                    int csrc;
                    uint64_t off = cell_take(&csrc);
                    if (!off)
                        break;
                    struct fy_cell *c = cell_at(off);
                    if (csrc == w && c->type == FY_PKT_EAGER && c->ctx == ctx &&
                        (c->tag == tag || tag == MPI_ANY_TAG) &&
                        c->len <= cap && !s->unexp_head && !s->posted_head) {
                        if (c->len)
                            memcpy(buf, (uint8_t *)c + FY_CELL_HDR, c->len);
                        fy_proto_count(FY_PROTO_EAGER_CELLS, c->len);
                        *source_out = src;
                        *tag_out = c->tag;
                        *bytes_out = (MPI_Count)c->len;
                        return_cell(off);
                        return 0;
                    }
                    cell_handle(off, csrc);
                    break;
                }
                if (++spins > 1024)
                    break; /* let the general path handle others' traffic */
                fy_cpu_relax();
            }
        }
    }
    struct fy_req *r;
    int rc = fy_p2p_irecv(buf, count, dt, src, tag, comm, ctx, &r);
    if (rc)
        return rc;
    rc = fy_req_wait(r);
    *source_out = r->st_source;
    *tag_out = r->st_tag;
    *bytes_out = r->st_bytes;
    fy_req_free(r);
    return rc;
}

int fy_p2p_iprobe(int src, int tag, struct fy_comm *comm, uint32_t ctx,
                  bool *flag_out, int *source_out, int *tag_out,
                  MPI_Count *bytes_out)
{
    *flag_out = false;
    if (src == MPI_PROC_NULL) {
        *flag_out = true;
        *source_out = MPI_PROC_NULL;
        *tag_out = MPI_ANY_TAG;
        *bytes_out = 0;
        return 0;
    }
    fy_progress_poll();
    int w = src >= 0 ? fy_comm_world_rank(comm, src) : -1;
    struct fy_unexp *u = unexp_find(w, src == MPI_ANY_SOURCE, tag, ctx);
    if (u) {
        *flag_out = true;
        *source_out = fy_comm_rank_of(comm, u->src);
        *tag_out = u->tag;
        *bytes_out = (MPI_Count)(u->type == FY_PKT_RTS ? u->ctl.total : u->len);
    }
    return 0;
}

int fy_p2p_improbe(int src, int tag, struct fy_comm *comm, uint32_t ctx,
                   bool *flag_out, void **msg_out, int *source_out,
                   int *tag_out, MPI_Count *bytes_out)
{
    *flag_out = false;
    fy_progress_poll();
    int w = src >= 0 ? fy_comm_world_rank(comm, src) : -1;
    struct fy_unexp *u = unexp_find(w, src == MPI_ANY_SOURCE, tag, ctx);
    if (!u)
        return 0;
    unexp_unlink(u);
    *flag_out = true;
    *msg_out = u;
    *source_out = fy_comm_rank_of(comm, u->src);
    *tag_out = u->tag;
    *bytes_out = (MPI_Count)(u->type == FY_PKT_RTS ? u->ctl.total : u->len);
    return 0;
}

int fy_p2p_imrecv(void *buf, MPI_Count count, struct fy_dtype *dt, void *msg,
                  struct fy_comm *comm, struct fy_req **req_out)
{
    struct fy_unexp *u = msg;
    struct fy_req *r =
        req_init(FY_REQ_RECV, buf, count, dt, fy_comm_rank_of(comm, u->src),
                 u->tag, comm, u->ctx);
    if (!r)
        return -ENOMEM;
    deliver_unexp(r, u);
    *req_out = r;
    return 0;
}

int fy_p2p_probe(int src, int tag, struct fy_comm *comm, uint32_t ctx,
                 int *source_out, int *tag_out, MPI_Count *bytes_out)
{
    unsigned spins = 0;
    for (;;) {
        bool flag;
        fy_p2p_iprobe(src, tag, comm, ctx, &flag, source_out, tag_out,
                      bytes_out);
        if (flag)
            return 0;
        fy_progress_idle(&spins);
    }
}

void fy_p2p_cancel_recv(struct fy_req *r)
{
    if (r->kind != FY_REQ_RECV || r->complete || !r->on_list)
        return;
    posted_unlink(r);
    r->cancelled = true;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    fy_req_complete(r);
}

/* ---- start-up and shut-down ---------------------------------------------- */

static uint64_t cma_probe_word;

static int check_params(struct fy_shm_params *pp)
{
    int rc = fy_tuned_load();
    if (rc)
        return rc;
    long long cell = fy_tuned_value(FY_ENV_CELL_SIZE, NULL);
    long long ncells = fy_env_int(FY_ENV_CELLS);
    long long sb = fy_tuned_value(FY_ENV_SHMBUF_SIZE, NULL);
    long long fb = fy_tuned_value(FY_ENV_FASTBOX_MAX, NULL);
    long long eager = fy_tuned_value(FY_ENV_EAGER_MAX, NULL);
    long long spin = fy_env_int(FY_ENV_SPIN);
    long long pads = fy_env_int(FY_ENV_SHMBUF_PADS);
    if (pads < 1 || pads > FY_SHMBUF_PADS_MAX) {
        FY_ERROR("FERRY_SHMBUF_PADS=%lld must be in [1, %d]", pads,
                 FY_SHMBUF_PADS_MAX);
        return -EINVAL;
    }
    if (cell < 1024 || cell > (1 << 20) || cell % 64) {
        FY_ERROR(
            "FERRY_CELL_SIZE=%lld must be 1 KiB..1 MiB and a multiple of 64",
            cell);
        return -EINVAL;
    }
    if (ncells < 8 || ncells > 65536) {
        FY_ERROR("FERRY_CELLS=%lld must be in [8, 65536]", ncells);
        return -EINVAL;
    }
    if (sb < 4096 || sb > (16 << 20) || sb % 64) {
        FY_ERROR(
            "FERRY_SHMBUF_SIZE=%lld must be 4 KiB..16 MiB and a multiple of 64",
            sb);
        return -EINVAL;
    }
    if (fb < 0 || fb > FY_FBOX_MAX_LEN(FY_FBOX_SLOTS)) {
        FY_ERROR("FERRY_FASTBOX_MAX=%lld must be in [0, %d]", fb,
                 FY_FBOX_MAX_LEN(FY_FBOX_SLOTS));
        return -EINVAL;
    }
    if (eager < 0) {
        FY_ERROR("FERRY_EAGER_MAX=%lld must not be negative", eager);
        return -EINVAL;
    }
    if (spin < 0) {
        FY_ERROR("FERRY_SPIN=%lld must not be negative", spin);
        return -EINVAL;
    }
    const char *wait = fy_env_str(FY_ENV_WAIT);
    if (strcmp(wait, "auto") && strcmp(wait, "spin") && strcmp(wait, "block")) {
        FY_ERROR("FERRY_WAIT='%s' is not one of auto, spin, block", wait);
        return -EINVAL;
    }
    *pp = (struct fy_shm_params){.nranks = (uint32_t)fy_boot.size,
                                 .fbox_slots = FY_FBOX_SLOTS,
                                 .cell_size = (uint32_t)cell,
                                 .ncells = (uint32_t)ncells,
                                 .shmbuf_size = (uint64_t)sb,
                                 .npads = (uint32_t)pads};
    return 0;
}

int fy_p2p_init(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_shm_params pp;
    int rc = check_params(&pp);
    if (rc)
        return rc;
    rc = fy_shm_attach(fy_boot.shm_fd, fy_boot.rank, &pp);
    if (rc)
        return rc;
    const struct fy_shm_layout *lay = &fy_shm.lay;
    fy_world_rank = s->me = fy_boot.rank;
    fy_world_size = s->P = fy_boot.size;
    s->slots = lay->fbox_slots;
    s->cell_payload = lay->cell_size - FY_CELL_HDR;
    s->fbox_max = (uint32_t)fy_tuned_value(FY_ENV_FASTBOX_MAX, NULL);
    /* What a peer may legitimately put in one mailbox message. */
    s->fbox_cap = FY_FBOX_MAX_LEN(s->slots);
    s->split_min = (uint64_t)fy_env_int(FY_ENV_SPLIT_MIN);
    s->eager_max = FY_MIN((uint64_t)fy_tuned_value(FY_ENV_EAGER_MAX, NULL),
                          s->cell_payload);
    s->shmbuf_size = lay->shmbuf_size;
    s->spin_limit = (long)fy_env_int(FY_ENV_SPIN);
    s->yield_limit = 8;
    const char *wait = fy_env_str(FY_ENV_WAIT);
    s->wait_block = !strcmp(wait, "block") ||
                    (!strcmp(wait, "auto") && fy_boot.size > fy_boot.ncpus);
    s->peers = calloc((size_t)s->P, sizeof(*s->peers));
    if (!s->peers)
        return -ENOMEM;
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        pe->ring_out = fy_fbox_ring(p, s->me);
        pe->ring_in = fy_fbox_ring(s->me, p);
        pe->ack_out = fy_fbox_ack(p, s->me);
        pe->ack_in = fy_fbox_ack(s->me, p);
        pe->rseq = 1;
    }
    /* Our own part of the segment: rank record, queues, cells. */
    s->my = &fy_shm.ranks[s->me];
    s->my->pid = getpid();
    cma_probe_word = 0x5eedf00d00000000ull | (uint64_t)s->me;
    s->my->probe_addr = (uint64_t)(uintptr_t)&cma_probe_word;
    s->my->probe_value = cma_probe_word;
    s->recv_tail = fy_cellq_init(&s->my->recvq);
    s->free_tail = fy_cellq_init(&s->my->freeq);
    uint64_t base = fy_cells_base(s->me);
    for (uint32_t i = 0; i < lay->ncells; i++)
        fy_cellq_push(&s->my->freeq, base + (uint64_t)i * lay->cell_size);
    /* R7: pairs with A1 in the barrier: everything above is visible to the
     * others once they pass it. */
    atomic_fetch_add_explicit(&fy_shm.hdr->attached, 1, memory_order_release);
    fy_shm_barrier_wait(&fy_shm.hdr->attached, (uint32_t)s->P);
    if ((rc = fy_shm_pids_snapshot()))
        return rc;

    /* Mechanisms: probes, the net listener, the job's rule table. */
    /* Rank 0's rules are the job's (fy_rndv_init publishes them). */
    const struct fy_tuning *tf = fy_tuned_file(NULL);
    if (tf && s->me == 0 && (rc = fy_xfer_rules_from_tuning(tf)))
        return rc;
    rc = fy_rndv_init();
    if (rc)
        return rc;
    FY_INFO("rank %d/%d: eager up to %llu B, %s waiting", s->me, s->P,
            (unsigned long long)s->eager_max,
            s->wait_block ? "sleeping" : "spinning");
    return 0;
}

void fy_p2p_finalize(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    if (!fy_shm.base)
        return;
    /* Finish what others may still need from us (deferred packets, data
     * they are pulling), then wait for everyone while still progressing. */
    unsigned spins = 0;
    while (s->nout || s->ntx || s->nrx) {
        if (!fy_progress())
            fy_progress_idle(&spins);
    }
    atomic_fetch_add_explicit(&fy_shm.hdr->fin_count, 1, memory_order_acq_rel);
    for (int p = 0; p < s->P; p++)
        if (p != s->me)
            fy_wake(p);
    spins = 0;
    while (atomic_load_explicit(&fy_shm.hdr->fin_count, memory_order_acquire) <
           (uint32_t)s->P) {
        if (!fy_progress())
            fy_progress_idle(&spins);
    }
    if (fy_env_int(FY_ENV_STATS))
        fy_proto_stats_print(s->me);
    fy_rndv_finalize();
    fy_shm_detach();
    free(s->peers);
    s->peers = NULL;
    while (s->unexp_head) {
        struct fy_unexp *u = s->unexp_head;
        s->unexp_head = u->next;
        free(u);
    }
}
