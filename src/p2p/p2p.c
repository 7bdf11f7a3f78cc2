/* SPDX-License-Identifier: MIT */
/* Point-to-point: requests, matching, progress and waiting. Packets travel
 * through the channels (chan/), which hand them up in pair order; the
 * protocols are in proto/ (eager.c, rndv.c, split.c).
 *
 * Matching invariants:
 * - posted_head..tail holds every posted, unmatched receive in the order
 *   it was posted; unexp_head..tail every message that arrived before a
 *   receive for it, in arrival order (pair order within one sender, as the
 *   channels deliver it).
 * - An arriving message is matched against the posted list first (oldest
 *   first); only if none matches is it queued as unexpected. A new
 *   receive first drains the channels (fy_progress), then takes the oldest
 *   matching unexpected message, else is posted. So the pair of a send and
 *   a receive MPI's non-overtaking rule asks for is the one made.
 * - Contexts never mix (envelope_match compares ctx first); a context id
 *   from a peer is checked against FY_CTX_MAX before it is used.
 * - A request is on at most one of: the posted list, a pipelined FIFO, the
 *   pad wait list, the pull list (proto/rndv.c); on_list says the posted list.
 * - The request-free fast paths (fy_p2p_send/recv) run only when nothing is
 *   queued that could have to match first (no posted or unexpected
 *   entries, no deferred packets), so they keep the same order. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "chan/shm_inl.h"
#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "shm/cellq_inl.h"
#include "util/copy.h"
#include "util/mt.h"
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
    /* A send whose cancel is out completes with the receiver's answer
     * (p2p/cancel.c). */
    if (FY_UNLIKELY(r->cancel_wait)) {
        r->cancel_done = true;
        return;
    }
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

bool (*fy_p2p_visible_hook)(void);

/* Work besides the channels that a progress pass would act on: deferred
 * packets that a returned cell lets go, pipelined transfers, what a layer
 * above waits for (fy_p2p_visible_hook). */
static bool more_work_visible(void)
{
    if (fy_p2p.nout && fy_cellq_peek(fy_chan.free_tail))
        return true;
    if (FY_UNLIKELY(fy_p2p_visible_hook != NULL) && fy_p2p_visible_hook())
        return true;
    return fy_rndv_work_visible();
}

/* Spin, then yield, then sleep until a peer rings or more() holds. Under
 * MPI_THREAD_MULTIPLE the library lock is given up for the pause (the
 * sleep gives it up inside fy_chan_sleep, once it has checked the
 * channels), so other threads of this process can run MPI meanwhile. */
static void idle_step(unsigned *spins, bool (*more)(void))
{
    unsigned n = ++*spins;
    if (FY_LIKELY(!fy_p2p.wait_block)) {
        /* A core each: spin. Under MULTIPLE yield after spin_limit polls:
         * the rank's threads share its cores, and the one that holds
         * what we wait for may be among them. Peers do not ring such
         * ranks, so they never sleep. */
        int d = fy_mt_wait_begin();
        if (FY_LIKELY(!fy_mt_on) || n < (unsigned)fy_p2p.spin_limit)
            fy_cpu_relax();
        else
            sched_yield();
        fy_mt_wait_end(d);
        return;
    }
    /* Ranks outnumber cores: the rank we wait for may need our core, so
     * hand it over at the first empty poll, and yield up to yield_limit
     * times before sleeping (a sleeper must be rung and scheduled again,
     * which costs more than the yields that let the others run). */
    if (n < (unsigned)fy_p2p.yield_limit) {
        int d = fy_mt_wait_begin();
        sched_yield();
        fy_mt_wait_end(d);
        return;
    }
    /* A loopback stream (FERRY_XFER=net) turns ready without a ring (its
     * socket's window reopens when the kernel processes the peer's read):
     * nap 1 ms rather than sleep until the 20 ms safety timeout. */
    if ((fy_xfer_avail & (1u << FY_XFER_NET)) && fy_xfer_net_busy())
        fy_chan_sleep_for(more, 1000 * 1000);
    else
        fy_chan_sleep(more);
}

void fy_progress_idle(unsigned *spins)
{
    idle_step(spins, more_work_visible);
}

/* The condition of the current fy_progress_idle_until, per thread (under
 * MPI_THREAD_MULTIPLE several threads may be waiting at once). */
static _Thread_local bool (*idle_ready)(void);

static bool more_work_or_ready(void)
{
    return idle_ready() || more_work_visible();
}

void fy_progress_idle_until(unsigned *spins, bool (*ready)(void))
{
    idle_ready = ready;
    idle_step(spins, more_work_or_ready);
    idle_ready = NULL;
}

/* ---- outgoing packets ------------------------------------------------- */

static inline bool is_eager(uint32_t type)
{
    return type == FY_PKT_EAGER || type == FY_PKT_EAGER_SYNC;
}

/* Packets that open a message (matched against receives). */
static inline bool opens_message(uint32_t type)
{
    return is_eager(type) || type == FY_PKT_RTS || type == FY_PKT_PUSH;
}

/* Packets that keep their place in the pair's order behind deferred ones:
 * message packets, pushed bytes (they follow their PUSH), and the write
 * protocol's (write.c's W4, W6, W8), and CANCEL (it must reach the
 * receiver after the message it names: cancel.c). The others (CTS, DATA,
 * FIN, SPLIT) may overtake. */
static inline bool is_ordered(uint32_t type)
{
    return opens_message(type) || type == FY_PKT_PUSH_DATA ||
           type == FY_PKT_OFFER || type == FY_PKT_WDONE ||
           type == FY_PKT_REVOKE || type == FY_PKT_REVOKED ||
           type == FY_PKT_CANCEL;
}

/* Try to put one packet on the wire now. Returns true if sent. */
static bool pkt_try(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                    const struct fy_ctl *ctl, struct fy_req *req)
{
    if (is_eager(type))
        return fy_chan_try_send(peer, type, tag, ctx, ctl, fy_req_data(req),
                                (uint64_t)req->bytes);
    if (type == FY_PKT_PUSH)
        return fy_chan_try_send(peer, type, tag, ctx, ctl, fy_req_data(req),
                                fy_push_first(ctl->offset << 1 >> 1));
    if (type == FY_PKT_PUSH_DATA)
        return fy_chan_try_send(
            peer, type, tag, ctx, ctl, fy_req_data(req) + ctl->offset,
            FY_MIN(fy_push_piece(peer), ctl->addr - ctl->offset));
    return fy_chan_try_send(peer, type, tag, ctx, ctl, NULL, 0);
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
        req->rts_owed = true;
        fy_p2p.peers[req->wpeer].rts_out++;
    } else if (type == FY_PKT_PUSH || type == FY_PKT_PUSH_DATA) {
        fy_push_sent(req, type);
    }
}

int fy_pkt_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                const struct fy_ctl *ctl, struct fy_req *req)
{
    struct fy_peer *pe = &fy_p2p.peers[peer];
    bool ordered = is_ordered(type);
    if (opens_message(type)) {
        /* A message sent the normal way: offers are stale (write.c W2). */
        pe->msgs_sent++;
        if (req)
            req->msgno = pe->msgs_sent;
        if (FY_UNLIKELY(pe->offer_head != NULL))
            fy_write_offers_drop(peer);
    }
    /* Ordered packets keep their order behind any deferred ones; control
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
    if (req && opens_message(type))
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

bool fy_p2p_envelope_match(const struct fy_req *r, int wsrc, int32_t tag,
                           uint32_t ctx)
{
    return r->ctx == ctx && (r->wpeer == wsrc || r->peer == MPI_ANY_SOURCE) &&
           (r->tag == tag || r->tag == MPI_ANY_TAG);
}

void fy_p2p_posted_unlink(struct fy_req *r)
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

struct fy_req *fy_p2p_posted_take(int wsrc, int32_t tag, uint32_t ctx)
{
    for (struct fy_req *r = fy_p2p.posted_head; r; r = r->next) {
        if (fy_p2p_envelope_match(r, wsrc, tag, ctx)) {
            fy_p2p_posted_unlink(r);
            if (FY_UNLIKELY(r->offered))
                fy_write_offer_end(r); /* matched the normal way: its
                                        * offer is stale (write.c W5) */
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

/* ---- the memory of unexpected entries ----------------------------------
 * An entry with room for more than a page (a pushed message nobody has
 * asked for yet) comes from size classes of four per octave, and goes back
 * to its class's free list after use while the lists hold at most
 * FERRY_UNEXP_CACHE bytes. glibc hands large freed blocks back to the
 * kernel (it trims the heap, or munmaps), so a stream of such messages had
 * every page of every entry faulted in and zeroed again: 64 nonblocking
 * 64 KiB sends in flight, pushed, moved 2.2-2.8 GB/s, 13-21 GB/s with the
 * blocks kept (bench/README.md, "Unexpected pushed messages"). Used under
 * the engine lock, like the unexpected list. */
#define UNEXP_POOL_MIN ((size_t)4096) /* larger rooms are pooled */
#define UNEXP_OCTAVE_MIN 12           /* the first class is (4 KiB, 5 KiB] */
#define UNEXP_NCLASS (4 * (31 - UNEXP_OCTAVE_MIN)) /* up to 2 GiB */
static struct {
    struct fy_unexp *free[UNEXP_NCLASS]; /* linked through ->next */
    uint64_t bytes;                      /* held in the lists */
} s_upool;

/* Class c's block size: 2^k + j 2^k / 4 for k = 12 + c / 4, j = 1 + c % 4. */
static size_t unexp_class_size(int c)
{
    size_t base = (size_t)1 << (UNEXP_OCTAVE_MIN + c / 4);
    return base + (size_t)(c % 4 + 1) * (base / 4);
}

/* The smallest class whose blocks hold 'need' bytes; -1: none. */
static int unexp_class(size_t need)
{
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)need - 1);
    if (k < UNEXP_OCTAVE_MIN)
        k = UNEXP_OCTAVE_MIN; /* 2^k < need <= 2^(k+1), or need <= 8 KiB */
    size_t base = (size_t)1 << k, step = base / 4;
    size_t j = need <= base ? 1 : (need - base + step - 1) / step; /* 1..4 */
    int c = (int)(k - UNEXP_OCTAVE_MIN) * 4 + (int)j - 1;
    return c < UNEXP_NCLASS ? c : -1;
}

struct fy_unexp *fy_p2p_unexp_alloc(uint64_t room)
{
    int c = room > UNEXP_POOL_MIN && room < ((uint64_t)1 << 31)
                ? unexp_class(sizeof(struct fy_unexp) + (size_t)room)
                : -1;
    struct fy_unexp *u;
    if (c < 0) {
        u = malloc(sizeof(*u) + room);
    } else if ((u = s_upool.free[c]) != NULL) {
        s_upool.free[c] = u->next;
        s_upool.bytes -= unexp_class_size(c);
    } else {
        u = malloc(unexp_class_size(c));
    }
    if (u)
        u->pool = (uint8_t)(c + 1);
    return u;
}

void fy_p2p_unexp_free(struct fy_unexp *u)
{
    int c = (int)u->pool - 1;
    size_t size = c >= 0 ? unexp_class_size(c) : 0;
    if (c < 0 || s_upool.bytes + size > fy_p2p.unexp_cache) {
        free(u);
        return;
    }
    u->next = s_upool.free[c];
    s_upool.free[c] = u;
    s_upool.bytes += size;
}

static void unexp_pool_drain(void)
{
    for (int c = 0; c < UNEXP_NCLASS; c++)
        while (s_upool.free[c]) {
            struct fy_unexp *u = s_upool.free[c];
            s_upool.free[c] = u->next;
            free(u);
        }
    s_upool.bytes = 0;
}

struct fy_unexp *fy_p2p_unexp_new(const struct fy_pkt *p, uint64_t room,
                                  uint64_t len)
{
    struct fy_unexp *u = fy_p2p_unexp_alloc(room);
    if (!u)
        fy_fatal(1,
                 "out of memory queueing an unexpected message (%llu bytes "
                 "kept) from rank %d",
                 (unsigned long long)room, p->src);
    *u = (struct fy_unexp){.src = p->src,
                           .type = p->type,
                           .tag = p->tag,
                           .ctx = p->ctx,
                           .ctl = p->ctl,
                           .len = len,
                           .pool = u->pool};
    if (len)
        fy_copy(u->data, p->data, len);
    return u;
}

void fy_p2p_unexp_append(struct fy_unexp *u)
{
    u->msgno = fy_p2p.peers[u->src].msgs_seen;
    u->next = NULL;
    u->prev = fy_p2p.unexp_tail;
    if (fy_p2p.unexp_tail)
        fy_p2p.unexp_tail->next = u;
    else
        fy_p2p.unexp_head = u;
    fy_p2p.unexp_tail = u;
}

void fy_p2p_unexp_unlink(struct fy_unexp *u)
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

void fy_p2p_deliver_bytes(struct fy_req *r, int wsrc, int32_t tag,
                          const void *data, uint64_t len)
{
    uint64_t cap = fy_req_capacity(r);
    uint64_t n = FY_MIN(len, cap);
    if (n) {
        if (r->dt->contig)
            fy_copy(r->buf, data, n);
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

void fy_p2p_send_fin(int peer, uint64_t cookie)
{
    struct fy_ctl ctl = {.cookie = cookie};
    if (fy_pkt_send(peer, FY_PKT_FIN, 0, 0, &ctl, NULL))
        fy_fatal(1, "out of memory sending an acknowledgement to rank %d",
                 peer);
}

/* A matched (or to-be-queued) message packet from a peer. */
static void on_message(const struct fy_pkt *p)
{
    struct fy_req *r = fy_p2p_posted_take(p->src, p->tag, p->ctx);
    if (r && r == fy_p2p.fresh_post) {
        /* It arrived before its receive was posted (fy_p2p_irecv), though
         * it was handed up after: unexpected, straight into the buffer. */
        fy_proto_stats.unexpected++;
        fy_p2p.matching_late = true;
        fy_protos[fy_proto_of_pkt(p->type)].matched(r, p);
        fy_p2p.matching_late = false;
        return;
    }
    if (r) {
        if (r->peer >= 0) {
            fy_proto_stats.early_direct++;
            fy_proto_stats.early_direct_bytes +=
                is_eager(p->type) ? p->len : p->ctl.total;
        }
        fy_protos[fy_proto_of_pkt(p->type)].matched(r, p);
        return;
    }
    fy_proto_stats.unexpected++;
    if (p->type == FY_PKT_PUSH) {
        fy_push_unexpected(p);
        return;
    }
    uint64_t keep = p->type == FY_PKT_RTS ? 0 : p->len;
    fy_p2p_unexp_append(fy_p2p_unexp_new(p, keep, keep));
}

/* A network channel asks where a large packet's payload belongs (see
 * fy_chan_steer_fn): a rendezvous chunk or a pushed piece. */
static uint8_t *steer_pkt(const struct fy_pkt *p)
{
    return p->type == FY_PKT_PUSH_DATA ? fy_push_steer(p) : fy_rndv_steer(p);
}

/* Everything the channels hand up (fy_chan_init's deliver function). */
static void handle_pkt(const struct fy_pkt *p)
{
    switch (p->type) {
    case FY_PKT_EAGER:
    case FY_PKT_EAGER_SYNC:
        fy_proto_count(p->lane == FY_LANE_MAILBOX ? FY_STAT_EAGER_MAILBOX
                                                  : FY_STAT_EAGER_CELLS,
                       p->len);
        /* fall through */
    case FY_PKT_RTS:
    case FY_PKT_PUSH:
        if (p->ctx >= FY_CTX_MAX)
            fy_chan_bad_packet(p->src, "context out of range");
        /* A sender sends every pushed piece of a message before its next
         * message (they are ordered): one that does not has lost track,
         * and its pushed bytes must not be taken for another's. */
        if (FY_UNLIKELY(fy_p2p.peers[p->src].push_active))
            fy_chan_bad_packet(p->src,
                               "a message before the pushed bytes of the last");
        fy_p2p.peers[p->src].msgs_seen++;
        on_message(p);
        break;
    case FY_PKT_PUSH_DATA:
        fy_push_on_data(p);
        break;
    case FY_PKT_OFFER:
        fy_write_on_offer(p);
        break;
    case FY_PKT_WDONE:
        fy_write_on_wdone(p);
        break;
    case FY_PKT_REVOKE:
        fy_write_on_revoke(p);
        break;
    case FY_PKT_REVOKED:
        fy_write_on_revoked(p);
        break;
    case FY_PKT_WSPLIT:
        fy_split_on_wsplit(p);
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
    case FY_PKT_CANCEL:
        fy_p2p_on_cancel(p);
        break;
    default:
        fy_chan_bad_packet(p->src, "unknown type");
    }
}

static int (*s_hooks[FY_HOOK_COUNT])(void);
static unsigned s_hook_mask; /* bit i: s_hooks[i] is set */

void fy_p2p_hook_set(enum fy_p2p_hook which, int (*fn)(void))
{
    s_hooks[which] = fn;
    if (fn)
        s_hook_mask |= 1u << which;
    else
        s_hook_mask &= ~(1u << which);
}

static int run_hooks(void)
{
    int n = 0;
    for (unsigned i = 0; i < FY_HOOK_COUNT; i++)
        if (s_hook_mask & 1u << i)
            n += s_hooks[i]();
    return n;
}

/* Nesting depth of fy_progress (a send started from a progress hook must
 * not progress again). */
static int progress_depth;

/* The channels, deferred packets and pipelined transfers. */
static int progress_packets(void)
{
    int n = fy_chan_poll();
    if (fy_p2p.nout)
        n += flush_out();
    if (fy_p2p.ntx || fy_p2p.nrx)
        n += fy_rndv_progress();
    return n;
}

int fy_progress(void)
{
    progress_depth++;
    int n = progress_packets();
    if (FY_UNLIKELY(s_hook_mask))
        n += run_hooks();
    progress_depth--;
    return n;
}

int fy_progress_packets(void)
{
    if (progress_depth)
        return 0;
    progress_depth++;
    int n = progress_packets();
    progress_depth--;
    return n;
}

int fy_progress_poll(void)
{
    /* Polls in a row that found nothing, across calls: a program looping
     * on Test or Iprobe is waiting, and when ranks share cores it should
     * hand the core over - but not on every empty poll, which costs a
     * system call each time and sends a receiver that is simply ahead of
     * its senders to the back of the run queue (a flood of sends to one
     * rank took 2.5x longer). As in fy_progress_idle: spin_limit polls,
     * then yield. */
    static unsigned empty;
    int n = fy_progress();
    if (n) {
        empty = 0;
    } else if (FY_UNLIKELY(fy_p2p.wait_block) &&
               ++empty >= (unsigned)fy_p2p.spin_limit) {
        empty = 0;
        sched_yield();
    }
    return n;
}

/* ---- receive hints ------------------------------------------------------
 * A rank blocked in a receive from one rank of its node, large enough for
 * a message above the eager limit, says so in its doorbell's hint line
 * (fy_chan_hint_set): FERRY_PROTO=auto's blocking sender then sends by
 * the rendezvous, which the waiting receiver reads at once with one copy,
 * instead of pushing the message whole through cells (two copies) in case
 * the receiver is late (fy_push_auto). A ping-pong's early receiver at
 * 16-64 KiB took 2.1-2.4x the rendezvous' time pushed (bench/README.md,
 * "Receive hints").
 * The sender trusts the hint only when its message is certain to find a
 * posted receive: its context and a matching tag, and 'seen' equal to its
 * own count of messages sent to us (write.c's W2: none in flight). Such a
 * receive cannot complete before that message arrives, so we stay in the
 * wait and read it; an unsafe program that counts on a blocking send
 * being buffered loses nothing. The hint is set only where no unexpected
 * message can satisfy the receive (it is posted, or the blocking fast
 * path found no queue at all), and cleared when the wait ends. Not when
 * ranks outnumber cores: a blocked receiver may then be off its core, and
 * a rendezvous would hold the sender until it runs again, where a push
 * lets it go (bench_mixed, 4 ranks on 2 cores: 0.052 against 0.048 s with
 * hints, 32 of 78 pushes turned into rendezvous). */
static bool s_hinted;

static bool hint_on(int w, uint32_t flags, uint32_t ctx, int tag, uint64_t cap)
{
    struct fy_p2p_state *s = &fy_p2p;
    if (FY_UNLIKELY(fy_mt_on) || s_hinted || cap <= s->eager_max || w < 0 ||
        w == s->me || s->proto_mode != FY_MODE_AUTO || fy_chan.wake_peers)
        return false;
    int l = fy_boot_local(w);
    if (l < 0)
        return false;
    fy_chan_hint_set(l, flags, ctx, tag, (uint32_t)s->peers[w].msgs_seen);
    s_hinted = true;
    return true;
}

static void hint_off(void)
{
    fy_chan_hint_set(-1, 0, 0, 0, 0);
    s_hinted = false;
}

/* Our oldest posted receive naming w among the first few, or NULL. */
static struct fy_req *posted_from(int w)
{
    int k = 0;
    for (struct fy_req *q = fy_p2p.posted_head; q && k < 8; q = q->next, k++)
        if (q->wpeer == w)
            return q;
    return NULL;
}

/* In a blocking send to w: hint at our oldest posted receive from w, if
 * any among the first few (an exchange: Irecv from w, Send to w, Wait).
 * The same rules hold - the receive is posted, so w's next message that
 * matches it will find it - and we progress until our send is done,
 * then most likely wait for that receive. */
static bool hint_send(int w)
{
    struct fy_req *q = posted_from(w);
    return q && hint_on(w, FY_HINT_IN_SEND, q->ctx, q->tag, fy_req_capacity(q));
}

/* Whether we are reading a message of w's: its receive matched it, the
 * read waits for progress (MPI_Irecv defers it) or is under way. */
static bool pulling_from(int w)
{
    int k = 0;
    for (struct fy_req *q = fy_p2p.pull_head; q && k < 8; q = q->next, k++)
        if (q->xsrc == w)
            return true;
    return false;
}

/* How long a blocking receive waits before it offers its buffer to the
 * write protocol: an early receiver waits longer (its sender is still
 * computing) and gains 10-35 % from 64 KiB by the write; a ping-pong's
 * reply comes sooner, and its offer would go stale at the cost of a
 * packet each way (bench/README.md, "The laboratory's interleaving"). */
#define FY_OFFER_WAIT_NS 4000

int fy_req_wait(struct fy_req *r)
{
    unsigned spins = 0, polls = 0;
    bool hinted = !r->complete && r->kind == FY_REQ_RECV && r->on_list &&
                  hint_on(r->wpeer, 0, r->ctx, r->tag, fy_req_capacity(r));
    double offer_at = r->offer_later ? fy_wtime() + FY_OFFER_WAIT_NS * 1e-9 : 0;
    while (!r->complete) {
        if (fy_progress())
            spins = 0;
        else
            fy_progress_idle(&spins);
        if (FY_UNLIKELY(r->offer_later) && !r->complete &&
            (++polls & 15) == 0 && fy_wtime() >= offer_at) {
            r->offer_later = false;
            if (r->on_list && fy_p2p.recv_write)
                fy_write_posted(r);
        }
    }
    r->offer_later = false;
    if (hinted) {
        hint_off();
        fy_p2p.reply_to1 = (uint32_t)r->wpeer + 1;
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

/* A send above the eager limit to w: if a receive from w above it is
 * posted (an exchange), say we will be reading w's message (rndv.c), so
 * w reads ours alone at once instead of asking us to help, and, should
 * its MPI_Irecv match our message, reads it after its own send. */
static void expect_from(int w)
{
    struct fy_req *q = posted_from(w);
    if (q && fy_req_capacity(q) > fy_p2p.eager_max)
        fy_rndv_expect(w);
}

static int send_start(struct fy_req *r)
{
    /* Above the eager limit the protocol depends on whether the receiver
     * offered its buffer: take what has arrived first (an offer sits in
     * the channel while this rank computed). No read of ours starts here:
     * this message goes out first, so its receiver can copy it while we
     * copy (an exchange; rndv.c). */
    if (fy_p2p.recv_write && (uint64_t)r->bytes > fy_p2p.eager_max &&
        !progress_depth && r->wpeer != fy_p2p.me) {
        uint8_t d = fy_p2p.defer_pull;
        fy_p2p.defer_pull = FY_DEFER_ALL;
        fy_progress();
        fy_p2p.defer_pull = d;
    }
    if ((uint64_t)r->bytes > fy_p2p.eager_max && fy_p2p.posted_head &&
        r->wpeer != fy_p2p.me)
        expect_from(r->wpeer);
    if (!r->dt->contig && r->bytes > 0) {
        r->pack = malloc((size_t)r->bytes);
        if (!r->pack)
            return -ENOMEM;
        fy_dtype_pack(r->buf, r->count, r->dt, r->pack);
    }
    return fy_protos[fy_proto_pick(r)].send(r);
}

/* Always inlined: on the send and receive fast paths (the MULTIPLE
 * reference count below made GCC stop inlining it on its own). */
static inline __attribute__((always_inline)) struct fy_req *
req_init(int kind, void *buf, MPI_Count count, struct fy_dtype *dt, int peer,
         int tag, struct fy_comm *comm, uint32_t ctx)
{
    struct fy_req *r = fy_req_alloc();
    if (!r)
        return NULL;
    r->kind = (uint8_t)kind;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    if (!dt->builtin) /* predefined types are never freed: no count */
        fy_mt_ref_inc(&dt->refcount);
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

static int isend_common(const void *buf, MPI_Count count, struct fy_dtype *dt,
                        int dest, int tag, struct fy_comm *comm, uint32_t ctx,
                        enum fy_send_mode mode, bool blocking,
                        struct fy_req **req_out)
{
    struct fy_req *r =
        req_init(FY_REQ_SEND, (void *)buf, count, dt, dest, tag, comm, ctx);
    if (!r)
        return -ENOMEM;
    r->mode = (uint8_t)mode;
    r->blocking = blocking;
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

int fy_p2p_isend(const void *buf, MPI_Count count, struct fy_dtype *dt,
                 int dest, int tag, struct fy_comm *comm, uint32_t ctx,
                 enum fy_send_mode mode, struct fy_req **req_out)
{
    return isend_common(buf, count, dt, dest, tag, comm, ctx, mode, false,
                        req_out);
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
    /* Fast path: straight into the peer's mailbox, no request. Peers
     * holding offers go the general way (they become stale). */
    if (FY_LIKELY(len <= fy_chan.fbox_max && dt->contig &&
                  mode != FY_SEND_SYNC && w != s->me)) {
        struct fy_peer *pe = &s->peers[w];
        if (FY_LIKELY(!pe->out_head && !pe->offer_head) &&
            FY_LIKELY(fy_chan_fbox_put(w, &fy_chan.peers[w], FY_PKT_EAGER, tag,
                                       ctx, buf, len))) {
            pe->msgs_sent++;
            return 0;
        }
    } else if (len <= s->eager_max && dt->contig && mode != FY_SEND_SYNC &&
               w != s->me && !fy_chan_remote(w)) {
        /* Eager through a cell, still without a request. */
        struct fy_peer *pe = &s->peers[w];
        if (!pe->out_head && !pe->offer_head &&
            fy_chan_cell_put(w, &fy_chan.peers[w], FY_PKT_EAGER, tag, ctx, NULL,
                             buf, len)) {
            pe->msgs_sent++;
            return 0;
        }
    }
    struct fy_req *r;
    bool hinted = s->posted_head && hint_send(w);
    /* An exchange from our side (a blocking send to w, a receive from w
     * posted or being read): w most likely does the same a moment from
     * now, so the push or a write into w's offered buffer waits briefly
     * for w's hint, as a reply does (push.c, hint_soon). */
    bool xchg = hinted || (s->pull_head && pulling_from(w));
    if (xchg)
        s->reply_to1 = s->xchg_to1 = (uint32_t)w + 1;
    int rc = isend_common(buf, count, dt, dest, tag, comm, ctx, mode, true, &r);
    if (!rc) {
        rc = fy_req_wait(r);
        fy_req_free(r);
    }
    if (hinted)
        hint_off();
    s->xchg_to1 = 0;
    if ((uint64_t)len > s->eager_max)
        fy_rndv_expect_end();
    return rc;
}

/* ---- receives ----------------------------------------------------------- */

/* Hand an unexpected message to the receive r that matched it. */
static void deliver_unexp_now(struct fy_req *r, struct fy_unexp *u)
{
    if (u->self_sync) {
        /* A synchronous send to ourselves completes when matched. */
        fy_p2p_deliver_bytes(r, u->src, u->tag, u->data, u->len);
        fy_req_complete(u->self_sync);
    } else if (u->type == FY_PKT_PUSH) {
        fy_push_matched_unexp(r, u); /* frees u */
        return;
    } else {
        struct fy_pkt p = {.src = u->src,
                           .type = u->type,
                           .tag = u->tag,
                           .ctx = u->ctx,
                           .data = u->data,
                           .len = u->len,
                           .ctl = u->ctl};
        fy_protos[fy_proto_of_pkt(u->type)].matched(r, &p);
    }
    fy_p2p_unexp_free(u);
}

static void deliver_unexp(struct fy_req *r, struct fy_unexp *u)
{
    fy_p2p.matching_late = true;
    deliver_unexp_now(r, u);
    fy_p2p.matching_late = false;
}

/* Take a matching unexpected message for r, if any. Returns true if r was
 * matched (it may still be in progress for a rendezvous). */
static bool match_unexpected(struct fy_req *r)
{
    struct fy_unexp *u =
        unexp_find(r->wpeer, r->peer == MPI_ANY_SOURCE, r->tag, r->ctx);
    if (!u)
        return false;
    fy_p2p_unexp_unlink(u);
    deliver_unexp(r, u);
    return true;
}

/* Start receive r: messages already handed up are older than those still
 * in the channel (pair order), so match those first; else post r and take
 * what has arrived - first 'held', a cell already taken from the channel
 * (0: none; handed up either way, after r is matched or posted): a
 * message still in the channel that matches r goes straight into r's
 * buffer (a pushed or eager one without the copy through an unexpected
 * entry), as MPI allows - r is the oldest posted receive it matches. */
static void recv_start(struct fy_req *r, uint64_t held, int held_src)
{
    struct fy_req *outer = fy_p2p.fresh_post;
    bool posted = !match_unexpected(r);
    if (posted) {
        posted_append(r);
        /* A blocking receive offers once it has waited a while
         * (fy_req_wait): one whose message comes at once (a ping-pong's
         * reply) would send an offer that only goes stale. Only one
         * large enough waits for the moment (the rest of W1 is checked
         * then, in fy_write_posted). */
        if (fy_p2p.recv_write && r->blocking)
            r->offer_later =
                r->peer >= 0 && fy_req_capacity(r) >= fy_p2p.write_min;
        else if (fy_p2p.recv_write)
            fy_write_posted(r);
        fy_p2p.fresh_post = r;
    }
    if (held)
        fy_chan_cell_deliver(held, held_src);
    fy_progress();
    fy_p2p.fresh_post = outer;
}

/* defer: FY_DEFER_WAITED for MPI_Irecv, FY_DEFER_NONE for a blocking
 * receive, which waits for the read at once anyway (and would pay a load
 * of the sender's doorbell to decide). */
static int irecv_common(void *buf, MPI_Count count, struct fy_dtype *dt,
                        int src, int tag, struct fy_comm *comm, uint32_t ctx,
                        struct fy_req **req_out, uint8_t defer)
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
    r->blocking = defer == FY_DEFER_NONE; /* fy_p2p_recv's */
    uint8_t d = fy_p2p.defer_pull;
    if (!d)
        fy_p2p.defer_pull = defer;
    recv_start(r, 0, -1);
    fy_p2p.defer_pull = d;
    return 0;
}

int fy_p2p_irecv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                 int tag, struct fy_comm *comm, uint32_t ctx,
                 struct fy_req **req_out)
{
    return irecv_common(buf, count, dt, src, tag, comm, ctx, req_out,
                        FY_DEFER_WAITED);
}

int fy_p2p_recv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                int tag, struct fy_comm *comm, uint32_t ctx, int *source_out,
                int *tag_out, MPI_Count *bytes_out)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint64_t held = 0; /* a cell the fast path took but did not consume */
    int held_src = -1;
    /* Fast path: nothing queued either way, a specific remote source, a
     * contiguous buffer: spin on that peer's mailbox and copy straight from
     * the slot into the user's buffer. A receive large enough to offer
     * its buffer to the write protocol spins here first too: a small
     * message into a large buffer would otherwise pay for an offer it
     * cannot use (an 8-byte ping-pong into 128 KiB buffers took 0.30 us
     * against 0.15); a receiver still waiting after the spins is early,
     * and posts (and offers) below. */
    if (src >= 0 && !s->unexp_head && !s->posted_head && dt->contig &&
        !s->nout && !s->ntx && !s->nrx) {
        int w = fy_comm_world_rank(comm, src);
        if (w != s->me && !fy_chan_remote(w)) {
            struct fy_chan_peer *pe = &fy_chan.peers[w];
            uint64_t cap = (uint64_t)(count * dt->size);
            unsigned spins = 0;
            bool hinted = hint_on(w, 0, ctx, tag, cap);
            for (;;) {
                struct fy_fbox_slot *sl = fy_chan_fbox_due(pe);
                if (sl) {
                    /* Read the header once: the peer owns the line. */
                    uint16_t ct = sl->ctx_type;
                    uint64_t len = sl->len;
                    int32_t t = sl->tag;
                    if (ct == (uint16_t)(ctx | FY_PKT_EAGER << 12) &&
                        (t == tag || tag == MPI_ANY_TAG) && len <= cap &&
                        len <= fy_chan.fbox_cap) {
                        if (hinted)
                            hint_off();
                        fy_chan_fbox_copy_out(pe, sl, buf, len);
                        fy_chan_fbox_consume(pe, len);
                        s->peers[w].msgs_seen++;
                        fy_proto_count(FY_STAT_EAGER_MAILBOX, len);
                        if (spins) {
                            /* We were waiting when it came. */
                            fy_proto_stats.early_direct++;
                            fy_proto_stats.early_direct_bytes += len;
                        }
                        *source_out = src;
                        *tag_out = t;
                        *bytes_out = (MPI_Count)len;
                        return 0;
                    }
                    break;
                }
                if (fy_chan_cell_waiting()) {
                    /* A cell: if it is our message, copy it straight out;
                     * anything else goes the general way. */
                    int csrc;
                    uint64_t off = fy_chan_cell_take(&csrc);
                    if (!off)
                        break;
                    struct fy_cell *c = fy_cell_at(off);
                    /* Read the header once, as the mailbox's above. */
                    uint32_t ctype = c->type, cctx = c->ctx;
                    int32_t t = c->tag;
                    uint64_t len = fy_chan_cell_len(c, csrc);
                    if (csrc == w && ctype == FY_PKT_EAGER && cctx == ctx &&
                        (t == tag || tag == MPI_ANY_TAG) && len <= cap &&
                        !s->unexp_head && !s->posted_head) {
                        if (hinted)
                            hint_off();
                        if (len)
                            fy_copy(buf, (uint8_t *)c + FY_CELL_HDR, len);
                        s->peers[w].msgs_seen++;
                        fy_proto_count(FY_STAT_EAGER_CELLS, len);
                        if (spins) {
                            fy_proto_stats.early_direct++;
                            fy_proto_stats.early_direct_bytes += len;
                        }
                        *source_out = src;
                        *tag_out = t;
                        *bytes_out = (MPI_Count)len;
                        fy_chan_cell_return(off);
                        return 0;
                    }
                    held = off;
                    held_src = csrc;
                    break;
                }
                if (++spins > 1024)
                    break; /* let the general path handle others' traffic */
                fy_cpu_relax();
            }
            if (hinted) {
                hint_off(); /* fy_req_wait sets it again once posted */
                /* The receive completes below (no blocking send of ours
                 * comes first): a send to w after it is likely a reply,
                 * as after fy_req_wait's own hint. */
                s->reply_to1 = (uint32_t)w + 1;
            }
        }
    }
    struct fy_req *r;
    int rc;
    if (held) {
        /* The cell taken is some other packet - perhaps the PUSH or RTS
         * of the message this receive wants: start the receive before it
         * is handed up, so a pushed message lands straight in the user's
         * buffer instead of being copied through an unexpected entry.
         * (Taking the cell handed up its sender's earlier mailbox packets,
         * as unexpected ones: recv_start matches those first.) */
        r = req_init(FY_REQ_RECV, buf, count, dt, src, tag, comm, ctx);
        if (!r) {
            fy_chan_cell_deliver(held, held_src);
            return -ENOMEM;
        }
        r->blocking = true;
        recv_start(r, held, held_src);
    } else if ((rc = irecv_common(buf, count, dt, src, tag, comm, ctx, &r,
                                  FY_DEFER_NONE))) {
        return rc;
    }
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
        *bytes_out = (MPI_Count)(is_eager(u->type) ? u->len : u->ctl.total);
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
    fy_p2p_unexp_unlink(u);
    *flag_out = true;
    *msg_out = u;
    *source_out = fy_comm_rank_of(comm, u->src);
    *tag_out = u->tag;
    *bytes_out = (MPI_Count)(is_eager(u->type) ? u->len : u->ctl.total);
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
    fy_p2p_posted_unlink(r);
    if (FY_UNLIKELY(r->offered) && fy_write_cancel(r))
        return; /* completes when the sender answers (write.c W8) */
    r->cancelled = true;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    fy_req_complete(r);
}

/* ---- start-up and shut-down ---------------------------------------------- */

int fy_p2p_seg_params(uint32_t nranks, struct fy_p2p_seg_params *out)
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
    const char *net = fy_env_str(FY_ENV_NET);
    if (strcmp(net, "auto") && strcmp(net, "tcp") && strcmp(net, "ofi")) {
        FY_ERROR("FERRY_NET='%s' is not one of auto, tcp, ofi", net);
        return -EINVAL;
    }
    const char *ow = fy_env_str(FY_ENV_OFI_WAIT);
    if (strcmp(ow, "auto") && strcmp(ow, "fd") && strcmp(ow, "poll")) {
        FY_ERROR("FERRY_OFI_WAIT='%s' is not one of auto, fd, poll", ow);
        return -EINVAL;
    }
    const char *mtl = fy_env_str(FY_ENV_MT_LOCKS);
    if (strcmp(mtl, "fine") && strcmp(mtl, "global")) {
        FY_ERROR("FERRY_MT_LOCKS='%s' is not one of fine, global", mtl);
        return -EINVAL;
    }
    const char *proto = fy_tuned_str(FY_ENV_PROTO, NULL);
    if (fy_proto_mode_parse(proto) < 0) {
        FY_ERROR("FERRY_PROTO='%s' is not one of auto, pushpull, pushzero, "
                 "pushall",
                 proto);
        return -EINVAL;
    }
    *out = (struct fy_p2p_seg_params){.nranks = nranks,
                                      .fbox_slots = FY_FBOX_SLOTS,
                                      .cell_size = (uint32_t)cell,
                                      .ncells = (uint32_t)ncells,
                                      .shmbuf_size = (uint64_t)sb,
                                      .npads = (uint32_t)pads};
    return 0;
}

int fy_p2p_seg_layout(const struct fy_p2p_seg_params *p,
                      fy_shm_declare_fn *above, struct fy_shm_layout *out)
{
    /* The order of the segment: shm's own region (fy_shm_layout_init),
     * then each module's from the bottom layer up. */
    struct fy_shm_layout lay;
    fy_shm_layout_init(&lay, p->nranks);
    int rc;
    if ((rc = fy_cellq_declare(&lay, p->cell_size, p->ncells)) ||
        (rc = fy_chan_shm_declare(&lay, p->fbox_slots)) ||
        (rc = fy_xfer_shm_declare(&lay, p->shmbuf_size, p->npads)) ||
        (above && (rc = above(&lay))) || (rc = fy_shm_layout_compute(&lay)))
        return rc;
    *out = lay;
    return 0;
}

/* FERRY_PUSH_MAX: a size, or auto: measured at the job's start, up to
 * fy_push_cap. Only FERRY_PROTO=auto pushes by it. */
static int push_max_setting(const struct fy_p2p_seg_params *pp,
                            struct fy_p2p_state *s)
{
    const char *v = fy_env_str(FY_ENV_PUSH_MAX);
    s->push_max = s->push_cap = 0;
    if (!strcmp(v, "auto")) {
        if (s->proto_mode == FY_MODE_AUTO)
            s->push_cap = fy_push_cap(pp->ncells, fy_chan.cell_payload);
        return 0;
    }
    long long n;
    if (fy_parse_size(v, &n) || n < 0) {
        FY_ERROR("FERRY_PUSH_MAX='%s': expected auto or a size (e.g. 64K)", v);
        return -EINVAL;
    }
    s->push_max = (uint64_t)n;
    return 0;
}

/* Half this core's L2 cache (the C library reads it from the CPU), 1 MiB
 * when it cannot say. */
static uint64_t copy_pair_max(void)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? (uint64_t)l2 / 2 : (uint64_t)1 << 20;
}

int fy_p2p_init(fy_shm_declare_fn *above)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_p2p_seg_params pp;
    struct fy_shm_layout lay;
    int rc = fy_p2p_seg_params((uint32_t)fy_boot.local_size, &pp);
    if (rc || (rc = fy_p2p_seg_layout(&pp, above, &lay)))
        return rc;
    /* The segment holds this node's ranks, by local rank. */
    rc = fy_shm_attach(fy_boot.shm_fd, fy_boot.local_rank, &lay);
    if (rc)
        return rc;
    fy_world_rank = s->me = fy_boot.rank;
    fy_world_size = s->P = fy_boot.size;
    const char *wait = fy_env_str(FY_ENV_WAIT);
    s->wait_block =
        !strcmp(wait, "block") ||
        (!strcmp(wait, "auto") && fy_boot.local_size > fy_boot.ncpus);
    rc = fy_chan_init(handle_pkt,
                      (uint32_t)fy_tuned_value(FY_ENV_FASTBOX_MAX, NULL),
                      s->wait_block);
    if (rc)
        return rc;
    fy_chan.steer = steer_pkt;
    s->eager_max = FY_MIN((uint64_t)fy_tuned_value(FY_ENV_EAGER_MAX, NULL),
                          fy_chan.cell_payload);
    s->shmbuf_size = pp.shmbuf_size;
    s->spin_limit = (long)fy_env_int(FY_ENV_SPIN);
    s->yield_limit = 128;
    s->proto_mode = fy_proto_mode_parse(fy_tuned_str(FY_ENV_PROTO, NULL));
    s->btp = (uint64_t)fy_tuned_value(FY_ENV_BTP, NULL);
    s->btp1 = (uint64_t)fy_tuned_value(FY_ENV_BTP1, NULL);
    s->push_buf = (uint64_t)fy_env_int(FY_ENV_PUSH_BUF);
    s->unexp_cache = (uint64_t)fy_env_int(FY_ENV_UNEXP_CACHE);
    s->auto_push_max = (uint64_t)fy_env_int(FY_ENV_AUTO_PUSH_MAX);
    s->net_push_max = (uint64_t)fy_env_int(FY_ENV_NET_PUSH_MAX);
    if ((rc = push_max_setting(&pp, s)))
        return rc;
    s->recv_write = fy_tuned_value(FY_ENV_RECV_WRITE, NULL) != 0;
    const char *wsrc = NULL;
    s->write_min = (uint64_t)fy_tuned_value(FY_ENV_RECV_WRITE_MIN, &wsrc);
    /* The default and the tuning file's value (the laboratory measures
     * blocking receives) are for blocking receives; one set by the user
     * is for every receive. */
    s->write_min_nb = wsrc && !strcmp(wsrc, "environment")
                          ? s->write_min
                          : FY_MAX(s->write_min, FY_WRITE_NB_MIN);
    s->copy_pair_max = copy_pair_max();
    s->peers = calloc((size_t)s->P, sizeof(*s->peers));
    if (!s->peers)
        return -ENOMEM;
    /* The mechanisms' regions, and our probe word in our record. */
    if ((rc = fy_xfer_shm_attach(s->me, fy_boot.local_rank)))
        return rc;
    /* R7: pairs with A1 in the barrier: everything above is visible to the
     * others once they pass it. */
    atomic_fetch_add_explicit(&fy_shm.hdr->attached, 1, memory_order_release);
    fy_shm_barrier_wait(&fy_shm.hdr->attached, (uint32_t)fy_boot.local_size);
    if ((rc = fy_shm_pids_snapshot()))
        return rc;

    /* Mechanisms: probes, the net listener, the job's rule table. */
    /* Rank 0's rules are the job's (fy_rndv_init publishes them). */
    const struct fy_tuning *tf = fy_tuned_file(NULL);
    if (tf && fy_boot.local_rank == 0 && (rc = fy_xfer_rules_from_tuning(tf)))
        return rc;
    rc = fy_rndv_init();
    if (rc)
        return rc;
    if (s->push_cap)
        s->push_max = fy_xfer_push_max;
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
        if (p != s->me && fy_boot_local(p) >= 0)
            fy_wake(p);
    spins = 0;
    while (atomic_load_explicit(&fy_shm.hdr->fin_count, memory_order_acquire) <
           (uint32_t)fy_boot.local_size) {
        if (!fy_progress())
            fy_progress_idle(&spins);
    }
    if (fy_chan.net) {
        /* Other nodes: after our last packet to each, a goodbye; we are
         * done once every one of them said it to us (nothing more can
         * come) and our queues are written. */
        fy_chan.net->bye();
        spins = 0;
        while (!fy_chan.net->quiet()) {
            if (!fy_progress())
                fy_progress_idle(&spins);
        }
    }
    if (fy_env_int(FY_ENV_STATS))
        fy_proto_stats_print(s->me);
    fy_write_finalize();
    fy_rndv_finalize();
    fy_chan_finalize();
    fy_shm_detach();
    free(s->peers);
    s->peers = NULL;
    while (s->unexp_head) {
        struct fy_unexp *u = s->unexp_head;
        s->unexp_head = u->next;
        fy_p2p_unexp_free(u);
    }
    unexp_pool_drain();
}
