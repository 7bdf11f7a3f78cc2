/* SPDX-License-Identifier: MIT */
/* The receiver-initiated write protocol (seed 002's "remote write"): a
 * receive posted before its message offers its buffer to the sender, and
 * a send that finds the offer writes its bytes straight into that buffer
 * with the one-sided mechanism (process_vm_writev, /proc/<pid>/mem) - or,
 * for a sender on another node, with an RDMA write of the network channel
 * (libfabric's fi_write; the channel registers the offered buffer and
 * carries its key) - and tells the receiver it is done (WDONE). No
 * intermediate buffer, no rendezvous round trip. FERRY_RECV_WRITE=0 turns
 * it off (the seed's NSR against SR).
 *
 * MPI's matching rules decide whether a send may use an offer; the
 * receiver and the sender each check their half:
 *
 * W1 Only a receive naming one source S (not MPI_ANY_SOURCE), contiguous,
 *    of at least FERRY_RECV_WRITE_MIN bytes (by default 64 KiB for a
 *    blocking receive, 256 KiB for MPI_Irecv: p2p_impl.h's
 *    FY_WRITE_NB_MIN), that matched no unexpected
 *    message when posted, is offered: if S is on this node, when the
 *    mechanism for that size is one-sided; if on another, when S's
 *    channel carries offers (RDMA writes).
 * W2 Both sides count the message packets of the pair (EAGER*, RTS, PUSH;
 *    writes excluded): the sender as it sends them (msgs_sent), the
 *    receiver as the channel hands them up, in pair order (msgs_seen). An
 *    offer carries msgs_seen at posting; the sender may use it only while
 *    msgs_sent is still that number. So no message of S was in flight when
 *    the receive was posted, and none has been sent normally since: the
 *    message that uses the offer is the next one S's stream would have
 *    matched against the receive. Any normal send to the receiver makes
 *    every offer the sender holds stale (they are dropped); an offer that
 *    arrives stale is dropped.
 * W3 Wildcard receives posted later do not matter (the older receive wins
 *    in MPI). A receive is offered only if every earlier posted receive
 *    that could take a message it could take (same context; source S or
 *    any; compatible tags) holds a valid offer itself - else that receive
 *    (say an earlier MPI_ANY_SOURCE one) must get the message first, and
 *    the receive is not offered.
 * W4 Offers travel in posting order (ordered packets) and the sender uses
 *    the oldest matching valid one: two offers for one tag are used in
 *    order, as two receives for one tag are matched in order.
 * W5 A message that matches an offered receive the normal way (it was
 *    sent before the offer reached the sender, or too small to write)
 *    finds the offer stale by W2: the receive is matched as usual and its
 *    offer forgotten (fy_p2p_posted_take).
 * W6 WDONE is an ordered packet in the sender's stream at the place of
 *    the message, so later messages of S arrive after it; it names the
 *    receive by cookie and the receiver checks the envelope, the count
 *    and the length before completing it.
 * W7 Truncation: the sender writes min(message, capacity) bytes - never
 *    past the buffer - and WDONE carries the message's size: the receive
 *    reports MPI_ERR_TRUNCATE.
 * W8 MPI_Cancel of a receive whose offer may still be used takes it off
 *    the posted list and sends REVOKE; the sender drops the offer if it
 *    still holds it and answers REVOKED (ordered: after any WDONE for
 *    it). REVOKED before WDONE: cancelled; WDONE first: the cancel failed
 *    and the receive completed with its data, as MPI allows.
 * W9 A write goes in pieces of FY_PULL_PIECE, the sender serving the
 *    channels between two (fy_progress_packets: no hook that could start
 *    a send, which would overtake the WDONE, W6). A REVOKE of the receive
 *    being written that arrives meanwhile is answered after the WDONE
 *    (W8: the cancel failed).
 * W10 Across nodes the receiver's channel registers the offered buffer
 *    when the OFFER leaves and keeps it until the offer ends
 *    (fy_write_offer_end: WDONE, REVOKED, or found stale); a sender that
 *    writes waits for the channel's completion, which orders the bytes
 *    before its WDONE. An offer whose buffer could not be registered
 *    (key 0: the pin-down budget was full) keeps its place in the
 *    sender's list but is never written into: a send it would be the
 *    oldest match for goes the normal way (so no younger offer is used
 *    before it, W3/W4), which makes every offer stale (W2). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "p2p/p2p_impl.h"
#include "proto/proto.h"

#define OFFER_SEEN_MASK (((uint64_t)1 << 56) - 1)

static _Noreturn void bad_peer(int src, const char *what)
{
    fy_fatal(1, "malformed write-protocol packet from rank %d (%s)", src, what);
}

static void send_ordered(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                         const struct fy_ctl *ctl)
{
    if (fy_pkt_send(peer, type, tag, ctx, ctl, NULL))
        fy_fatal(1, "out of memory sending a write-protocol packet to rank %d",
                 peer);
}

static bool tags_meet(int32_t a, int32_t b)
{
    return a == MPI_ANY_TAG || b == MPI_ANY_TAG || a == b;
}

/* Whether the offer receive q made is still usable by its sender (W2). */
static bool offer_valid(const struct fy_req *q)
{
    return q->offered && q->offer_seen == fy_p2p.peers[q->wpeer].msgs_seen;
}

void fy_write_posted(struct fy_req *r)
{
    struct fy_p2p_state *s = &fy_p2p;
    /* W1 */
    if (r->peer < 0 || r->wpeer == s->me || !r->dt->contig)
        return;
    uint64_t cap = fy_req_capacity(r);
    if (cap < (r->blocking ? s->write_min : s->write_min_nb))
        return;
    unsigned kind;
    if (fy_chan_remote(r->wpeer)) {
        const struct fy_chan_ops *ch = fy_chan.of[r->wpeer];
        if (!ch->offers || !ch->offers())
            return;
        kind = FY_WRITE_NET;
    } else {
        kind = (unsigned)fy_xfer_table_pick(&fy_xfer_active, cap);
        if (!fy_xfer_registry[kind]->one_sided)
            return;
    }
    /* W3 */
    for (struct fy_req *q = s->posted_head; q && q != r; q = q->next) {
        if (q->ctx != r->ctx || !tags_meet(q->tag, r->tag))
            continue;
        if (q->peer != MPI_ANY_SOURCE && q->wpeer != r->wpeer)
            continue;
        if (!offer_valid(q))
            return;
    }
    struct fy_peer *pe = &s->peers[r->wpeer];
    r->cookie = fy_cookie_new(r);
    r->offered = true;
    r->offer_seen = pe->msgs_seen;
    /* OFFER: total = capacity, addr = buffer, cookie = ours, offset =
     * msgs_seen | mechanism << 56; the receive's tag and context. */
    struct fy_ctl ctl = {.total = cap,
                         .addr = (uint64_t)(uintptr_t)r->buf,
                         .cookie = r->cookie,
                         .offset = pe->msgs_seen | (uint64_t)kind << 56};
    send_ordered(r->wpeer, FY_PKT_OFFER, r->tag, r->ctx, &ctl);
    fy_proto_stats.offers_sent++;
}

static void offer_free_all(struct fy_peer *pe)
{
    while (pe->offer_head) {
        struct fy_offer *o = pe->offer_head;
        pe->offer_head = o->next;
        free(o);
    }
    pe->offer_tail = NULL;
}

void fy_write_offers_drop(int peer)
{
    offer_free_all(&fy_p2p.peers[peer]);
}

void fy_write_on_offer(const struct fy_pkt *p)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_peer *pe = &s->peers[p->src];
    uint64_t seen = p->ctl.offset & OFFER_SEEN_MASK;
    uint64_t kind = p->ctl.offset >> 56;
    if (p->src == s->me)
        bad_peer(p->src, "offer from ourselves");
    if (seen > pe->msgs_sent)
        bad_peer(p->src, "offer counts messages never sent");
    if (fy_chan_remote(p->src)) {
        const struct fy_chan_ops *ch = fy_chan.of[p->src];
        if (kind != FY_WRITE_NET || !ch->offers || !ch->offers())
            bad_peer(p->src, "offer names a mechanism this job lacks");
    } else if (kind >= FY_XFER_NKINDS || !fy_xfer_registry[kind]->one_sided ||
               !(fy_xfer_avail & (1u << kind)) || p->key) {
        bad_peer(p->src, "offer names a mechanism this job lacks");
    }
    if (p->ctx >= FY_CTX_MAX)
        bad_peer(p->src, "context out of range");
    if (seen < pe->msgs_sent)
        return; /* W2: stale on arrival */
    struct fy_offer *o = malloc(sizeof(*o));
    if (!o)
        return; /* an offer is only a chance: the message goes normally */
    *o = (struct fy_offer){.tag = p->tag,
                           .ctx = p->ctx,
                           .kind = (uint32_t)kind,
                           .addr = p->ctl.addr,
                           .cap = p->ctl.total,
                           .cookie = p->ctl.cookie,
                           .key = p->key};
    if (pe->offer_tail)
        pe->offer_tail->next = o;
    else
        pe->offer_head = o;
    pe->offer_tail = o;
}

struct fy_offer *fy_write_offer_for(const struct fy_req *r)
{
    /* Messages the eager path carries whole stay eager: a system call
     * costs more than a cell's copies. Such a send makes the offers stale
     * (W2, W5). */
    if ((uint64_t)r->bytes <= fy_p2p.eager_max)
        return NULL;
    for (struct fy_offer *o = fy_p2p.peers[r->wpeer].offer_head; o; o = o->next)
        if (o->ctx == r->ctx && (o->tag == MPI_ANY_TAG || o->tag == r->tag))
            /* W4: the oldest; W10: one that cannot be written holds its
             * place */
            return o->kind == FY_WRITE_NET && !o->key ? NULL : o;
    return NULL;
}

static void offer_unlink(struct fy_peer *pe, struct fy_offer *o)
{
    struct fy_offer *prev = NULL;
    for (struct fy_offer *q = pe->offer_head; q; prev = q, q = q->next) {
        if (q != o)
            continue;
        if (prev)
            prev->next = q->next;
        else
            pe->offer_head = q->next;
        if (pe->offer_tail == q)
            pe->offer_tail = prev;
        return;
    }
}

/* The write in progress (one at a time: the send that makes it does not
 * return before it is done): its receiver and receive, and whether a
 * REVOKE for that receive came while packets were handled between two
 * pieces - its REVOKED must follow the WDONE (W8). */
static struct {
    bool on, revoked;
    int peer;
    uint64_t cookie;
} s_writing;

static _Noreturn void write_failed(const struct fy_req *r, uint64_t n,
                                   ssize_t k)
{
    if (k == -ESRCH)
        fy_fatal(1, "rank %d died while we wrote into its buffer", r->wpeer);
    fy_fatal(1,
             "writing %llu bytes into the buffer rank %d offered failed "
             "(%s): a malformed offer",
             (unsigned long long)n, r->wpeer, strerror(k < 0 ? (int)-k : EIO));
}

/* Bytes [off, off + len) of the message into the offered buffer. */
static void write_piece(const struct fy_req *r, const struct fy_offer *o,
                        uint64_t off, uint64_t len)
{
    const uint8_t *src = fy_req_data((struct fy_req *)r);
    if (o->kind == FY_WRITE_NET) {
        /* W10: placed before the WDONE when this returns. */
        ssize_t k = fy_chan.of[r->wpeer]->write(r->wpeer, src + off, o->addr,
                                                o->key, off, len);
        if (k != (ssize_t)len)
            write_failed(r, len, k);
        return;
    }
    if (o->kind == FY_XFER_CMA && fy_xfer_split_min &&
        len >= fy_xfer_split_min) {
        /* Large: the receiver, waiting for it, reads chunks while we
         * write others (the shared single copy, split.c). */
        ssize_t k = fy_split_put(r->wpeer, o->cookie, src, o->addr, off, len);
        if (k != (ssize_t)len)
            write_failed(r, len, k);
        return;
    }
    const struct fy_xfer_ops *ops = fy_xfer_registry[o->kind];
    pid_t pid = fy_shm.pid[fy_boot_local(r->wpeer)];
    for (uint64_t done = 0; done < len;) {
        ssize_t k = ops->copy_remote(pid, (uint8_t *)src + off + done,
                                     o->addr + off + done, len - done, false);
        if (k <= 0)
            write_failed(r, len, k);
        done += (uint64_t)k;
    }
}

int fy_proto_write_send(struct fy_req *r)
{
    struct fy_peer *pe = &fy_p2p.peers[r->wpeer];
    struct fy_offer *o = fy_write_offer_for(r);
    offer_unlink(pe, o);
    uint64_t n = FY_MIN((uint64_t)r->bytes, o->cap); /* W7 */
    /* In pieces, as a pull (FY_PULL_PIECE), with the channels served
     * between two of them - packets only: no hook may start a send that
     * would overtake this message's WDONE (W6). */
    s_writing.on = true;
    s_writing.revoked = false;
    s_writing.peer = r->wpeer;
    s_writing.cookie = o->cookie;
    for (uint64_t off = 0; off < n; off += FY_PULL_PIECE) {
        if (off)
            fy_progress_packets();
        write_piece(r, o, off, FY_MIN(FY_PULL_PIECE, n - off));
    }
    s_writing.on = false;
    /* WDONE: total = the message's size, cookie = the receive's, offset =
     * bytes written; the message's tag and context (W6). */
    struct fy_ctl ctl = {
        .total = (uint64_t)r->bytes, .cookie = o->cookie, .offset = n};
    send_ordered(r->wpeer, FY_PKT_WDONE, r->tag, r->ctx, &ctl);
    if (s_writing.revoked) {
        /* W8: after the WDONE, the cancel failed. */
        struct fy_ctl rv = {.cookie = o->cookie};
        send_ordered(r->wpeer, FY_PKT_REVOKED, 0, 0, &rv);
    }
    fy_proto_stats.writes_done++;
    free(o);
    /* The bytes are in the receive buffer: the send is complete, a
     * synchronous one too (its receive matched). */
    fy_req_complete(r);
    return 0;
}

void fy_write_on_wdone(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    if (!r || !r->offered || r->wpeer != p->src)
        bad_peer(p->src, "write into no offered receive");
    uint64_t cap = fy_req_capacity(r);
    uint64_t n = p->ctl.offset, total = p->ctl.total;
    if (!offer_valid(r) || r->ctx != p->ctx ||
        (r->tag != MPI_ANY_TAG && r->tag != p->tag))
        bad_peer(p->src, "write breaks the matching rules");
    if (n > cap || n > total || (n < total && n < cap))
        bad_peer(p->src, "write length");
    if (r->on_list)
        fy_p2p_posted_unlink(r);
    fy_write_offer_end(r);
    r->revoking = false;
    r->st_source = fy_comm_rank_of(r->comm, p->src);
    r->st_tag = p->tag;
    r->st_bytes = (MPI_Count)n;
    if (total > n)
        r->err = -EMSGSIZE;
    fy_proto_stats.offers_used++;
    fy_proto_stats.early_direct++;
    fy_proto_stats.early_direct_bytes += total;
    fy_proto_count(FY_STAT_WRITE, n);
    fy_p2p.peers[p->src].read_in = 0;
    fy_req_complete(r);
}

bool fy_write_cancel(struct fy_req *r)
{
    if (!r->offered)
        return false;
    if (!offer_valid(r)) {
        /* W2: the sender dropped it or will on arrival. */
        fy_write_offer_end(r);
        return false;
    }
    struct fy_ctl ctl = {.cookie = r->cookie};
    send_ordered(r->wpeer, FY_PKT_REVOKE, 0, 0, &ctl);
    r->revoking = true;
    return true;
}

void fy_write_on_revoke(const struct fy_pkt *p)
{
    if (s_writing.on && p->src == s_writing.peer &&
        p->ctl.cookie == s_writing.cookie) {
        /* We are writing into that receive: answered after the WDONE. */
        s_writing.revoked = true;
        return;
    }
    struct fy_peer *pe = &fy_p2p.peers[p->src];
    for (struct fy_offer *o = pe->offer_head; o; o = o->next) {
        if (o->cookie == p->ctl.cookie) {
            offer_unlink(pe, o);
            free(o);
            break;
        }
    }
    struct fy_ctl ctl = {.cookie = p->ctl.cookie};
    send_ordered(p->src, FY_PKT_REVOKED, 0, 0, &ctl);
}

void fy_write_on_revoked(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    if (!r)
        return; /* WDONE came first: the receive completed (W8) */
    if (!r->revoking || r->wpeer != p->src)
        bad_peer(p->src, "REVOKED for no cancelled receive");
    fy_write_offer_end(r);
    r->revoking = false;
    r->cancelled = true;
    r->st_source = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->st_bytes = 0;
    fy_req_complete(r);
}

void fy_write_offer_end(struct fy_req *r)
{
    const struct fy_chan_ops *ch = fy_chan.of[r->wpeer];
    if (ch->offer_end)
        ch->offer_end(r->wpeer, r->cookie); /* W10 */
    fy_cookie_drop(r->cookie);
    r->offered = false;
}

void fy_write_finalize(void)
{
    for (int p = 0; p < fy_p2p.P; p++)
        offer_free_all(&fy_p2p.peers[p]);
}
