/* SPDX-License-Identifier: MIT */
/* Push-Pull messaging (seed 001), one code for its three settings:
 * the sender pushes the first BTP bytes of a message with its envelope and
 * the receiver pulls the rest; BTP = 0 is the plain rendezvous (Push-Zero,
 * FY_PROTO_RNDV), BTP = the whole message is Push-All.
 *
 * - The first packet, PUSH, carries the envelope, the message's size,
 *   address and the sender's cookie, and the first BTP(1) pushed bytes
 *   (at most a cell's payload). The other BTP(2) = BTP - BTP(1) pushed
 *   bytes follow at once in PUSH_DATA packets (seed §4.4: their copy
 *   overlaps the receiver's answer and pull). PUSH_DATA are matched-order
 *   packets: they follow their PUSH in the pair's order with nothing of
 *   the same sender between them, so the receiver knows which message
 *   they belong to (fy_peer.push_*), checked by cookie and offset.
 * - Receive posted (early receiver): pushed bytes land in the receive
 *   buffer at once; the rest [BTP, want) is pulled by the mechanism the
 *   rule table picks (one-sided read, or CTS for a two-sided mover that
 *   starts at offset BTP: proto/rndv.c).
 * - No receive yet (late receiver): the pushed bytes wait in the
 *   unexpected entry - the pushed buffer - within FERRY_PUSH_BUF bytes per
 *   rank; past that budget they are dropped and the whole message is
 *   pulled when it is received (the sender's buffer is still there: it
 *   waits for FIN).
 * - The sender's request completes on the receiver's FIN, which is sent
 *   once every pushed byte arrived and the pull is over - or, when the
 *   whole message was pushed and the send is not synchronous (Push-All),
 *   as soon as its last push packet left: such pushed bytes are never
 *   dropped. A send never completes while a push packet of it is still
 *   queued (it reads the user's buffer): fy_send_done.
 * - Nothing is written past a receive buffer: pushed bytes beyond the
 *   receive's capacity are skipped, the pull asks for min(size, capacity)
 *   only, and the status says MPI_ERR_TRUNCATE. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "util/copy.h"

/* PUSH's ctl.offset: bytes pushed in all, and whether the send is
 * synchronous (it then needs FIN whatever was pushed). */
#define PUSH_SYNC ((uint64_t)1 << 63)
#define PUSH_BYTES_MASK (PUSH_SYNC - 1)

/* auto: nonblocking sends to one peer pushed between its messages (so
 * at most this many times the push crossover of pushed bytes wait at a
 * receiver per sender between two of its replies). */
#define FY_PUSH_BURST 2
/* Nonblocking sends to another node pushed whole up to this size (and
 * FERRY_NET_PUSH_MAX): see fy_push_auto. */
#define FY_NET_PUSH_NB ((uint64_t)128 << 10)

static _Noreturn void bad_peer(int src, const char *what)
{
    fy_fatal(1, "malformed push packet from rank %d (%s)", src, what);
}

uint64_t fy_push_bytes(uint64_t bytes)
{
    const struct fy_p2p_state *s = &fy_p2p;
    switch (s->proto_mode) {
    case FY_MODE_PUSHALL:
        return bytes;
    case FY_MODE_PUSHPULL:
        return FY_MIN(bytes, s->btp);
    default:
        /* pushzero; auto pushes a message whole or not at all
         * (fy_push_auto), never part of it. */
        return 0;
    }
}

uint64_t fy_push_piece(int peer)
{
    uint64_t c = fy_chan_remote(peer) ? fy_chan.of[peer]->push_chunk : 0;
    return c ? c : fy_chan.cell_payload;
}

uint64_t fy_push_first(uint64_t pushed)
{
    /* A cell's payload across nodes too: the first packet is matched when
     * it arrives, so the network channel cannot read it straight into the
     * receive; the PUSH_DATA after it can be (bench/README.md, "Pushes
     * across nodes": a 256 KiB first packet made early receivers 2x
     * slower than the rendezvous, a 16 KiB one faster). */
    uint64_t cap = fy_chan.cell_payload;
    if (fy_p2p.btp1)
        cap = FY_MIN(cap, fy_p2p.btp1);
    return FY_MIN(pushed, cap);
}

/* What send r's receiver (local rank l) shows in its hint for r:
 * fy_chan_hint_waits_for_us's 0, 1 or 2. */
static int hint_for(const struct fy_req *r, int l)
{
    return fy_chan_hint_waits_for_us(
        l, r->ctx, r->tag, (uint32_t)fy_p2p.peers[r->wpeer].msgs_sent);
}

/* A reply: the peer's message that our last blocking receive waited for
 * came from a blocking send, most likely, and the peer now finishes that
 * send and posts its receive for our answer - a few hundred ns after we
 * sent it our FIN, about when we decide how to answer. Wait up to
 * FY_HINT_WAIT_NS for its hint before pushing: a ping-pong's reply then
 * takes the rendezvous too (bench/README.md, "Receive hints"). Bounded,
 * so nothing can hang on it; not when ranks share cores (the peer may not
 * be running), nor towards a peer whose last two replies waited in vain. */
#define FY_HINT_WAIT_NS 1500
static bool hint_soon(struct fy_peer *pe, int l, const struct fy_req *r)
{
    if (fy_chan.wake_peers || pe->hint_misses >= 2)
        return false;
    double until = fy_wtime() + FY_HINT_WAIT_NS * 1e-9;
    do {
        for (int i = 0; i < 16; i++)
            fy_cpu_relax();
        if (hint_for(r, l)) {
            pe->hint_misses = 0;
            return true;
        }
    } while (fy_wtime() < until);
    pe->hint_misses++;
    return false;
}

bool fy_p2p_receiver_present(const struct fy_req *r)
{
    struct fy_p2p_state *s = &fy_p2p;
    int l = fy_boot_local(r->wpeer);
    if (s->proto_mode != FY_MODE_AUTO || l < 0)
        return false;
    int k = hint_for(r, l);
    /* An exchange from our side too: the receiver most likely enters its
     * own send to us a moment from now; wait briefly for its hint, as the
     * push does (the offer then goes stale instead of two writes
     * crossing). */
    if (!k && s->xchg_to1 == (uint32_t)r->wpeer + 1 &&
        s->reply_to1 == s->xchg_to1) {
        s->reply_to1 = 0;
        if (hint_soon(&s->peers[r->wpeer], l, r))
            k = hint_for(r, l);
    }
    return k == 2;
}

bool fy_p2p_receiver_waiting(const struct fy_req *r)
{
    int l = fy_boot_local(r->wpeer);
    return l >= 0 && hint_for(r, l) == 1;
}

bool fy_p2p_sender_waits(int src)
{
    /* A blocking send to us with a receive from us posted (its hint), or
     * a large receive from us posted when it sent its message (its
     * "reading" word, rndv.c's fy_rndv_expect). */
    int l = fy_boot_local(src);
    return l >= 0 && (fy_chan_hint_in_send_to_us(l) || fy_chan_reading_ours(l));
}

bool fy_p2p_sender_busy(int src)
{
    /* It shows itself reading a large message of ours, or about to (an
     * exchange: both read at once), so it cannot help with its own, and
     * a copy cut into chunks for it costs a system call per chunk
     * (bench/README.md, "Exchanges"). Its doorbell is looked at only
     * while it has a message of ours to read: the load is a miss on the
     * ping-pong's path (0.1-0.2 us at 32 KiB). */
    int l;
    return fy_p2p.peers[src].rts_out != 0 && (l = fy_boot_local(src)) >= 0 &&
           fy_chan_reading_ours(l);
}

bool fy_push_auto(const struct fy_req *r)
{
    /* A blocking send would wait for its receiver under the rendezvous; a
     * late receiver can keep it waiting for a long time, and an early one
     * costs it the single-copy call's set-up: so a blocking standard send
     * that finds no offer is pushed whole up to FERRY_AUTO_PUSH_MAX, or up
     * to the push crossover (FERRY_PUSH_MAX, measured at start-up: two
     * memcpy's through cells beat the call up to there) where that is
     * larger, and completes at once. To a rank on another node up to
     * FERRY_NET_PUSH_MAX (1 MiB) where that is larger: the rendezvous
     * costs a round trip over the network, TCP reads pushed pieces
     * straight into a posted receive, so an early receiver loses nothing
     * and a late one stops holding its sender (bench/README.md, "Pushes
     * across nodes").
     *
     * A nonblocking one is pushed whole up to the crossover too while it
     * is one of the first FY_PUSH_BURST sends to its peer since that peer
     * last sent us a message: the request/reply shapes (a ping-pong, the
     * seed's early and late receivers) then move their message in two
     * memcpy's. A longer one-way stream keeps the rendezvous, which
     * bounds what a receiver must hold for one sender. A burst of 16
     * pushed windows of 4 sends 1.4-2.7x faster, but made the mixed
     * traffic 5-10 % slower at 4 and 8 ranks on 2 cores (bench/README.md,
     * "Unexpected pushed messages"), so it stays 2. To a rank on another
     * node every nonblocking send up to FY_NET_PUSH_NB is pushed whole:
     * there the rendezvous costs a round trip over the network, longer
     * than moving such a message (a stream of 64 KiB ones ran at half the
     * rate); larger ones keep it (one-sided puts of 1 MiB, whose bytes
     * then arrive before the target posts their receive, ran at half the
     * rate pushed; bench/README.md, "Between nodes"). */
    struct fy_p2p_state *s = &fy_p2p;
    if (r->mode != FY_SEND_STANDARD)
        return false;
    uint64_t n = (uint64_t)r->bytes;
    if (r->blocking) {
        uint64_t max = FY_MAX(s->auto_push_max, s->push_max);
        if (fy_chan_remote(r->wpeer))
            max = FY_MAX(max, s->net_push_max);
        if (n > max)
            return false;
        /* A receiver blocked in the receive this message will match reads
         * it at once: one copy, not two (p2p.c, "receive hints"). */
        int l = fy_boot_local(r->wpeer);
        if (l < 0)
            return true;
        struct fy_peer *pe = &s->peers[r->wpeer];
        bool reply = s->reply_to1 == (uint32_t)r->wpeer + 1;
        s->reply_to1 = 0;
        if (hint_for(r, l)) {
            if (reply)
                pe->hint_misses = 0;
            return false;
        }
        return !(reply && hint_soon(pe, l, r));
    }
    if (fy_chan_remote(r->wpeer) &&
        n <= FY_MIN(s->net_push_max, FY_NET_PUSH_NB))
        return true;
    struct fy_peer *pe = &s->peers[r->wpeer];
    if (pe->burst_seen != pe->msgs_seen) {
        pe->burst_seen = pe->msgs_seen;
        pe->burst = 0;
    }
    return pe->burst++ < FY_PUSH_BURST && n <= s->push_max;
}

int fy_proto_push_send(struct fy_req *r)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint64_t total = (uint64_t)r->bytes;
    uint64_t pushed =
        s->proto_mode == FY_MODE_AUTO ? total : fy_push_bytes(total);
    bool sync = r->mode == FY_SEND_SYNC;
    r->push_eager = pushed == total && !sync;
    uint64_t first = fy_push_first(pushed);
    uint64_t piece = fy_push_piece(r->wpeer);
    r->cookie = fy_cookie_new(r);
    r->push_pending = 1 + (uint32_t)((pushed - first + piece - 1) / piece);
    struct fy_ctl ctl = {.total = total,
                         .addr = (uint64_t)(uintptr_t)fy_req_data(r),
                         .cookie = r->cookie,
                         .offset = pushed | (sync ? PUSH_SYNC : 0)};
    int rc = fy_pkt_send(r->wpeer, FY_PKT_PUSH, r->tag, r->ctx, &ctl, r);
    /* PUSH_DATA: offset in the message, addr = bytes pushed in all. */
    for (uint64_t off = first; !rc && off < pushed; off += piece) {
        struct fy_ctl d = {
            .total = total, .addr = pushed, .cookie = r->cookie, .offset = off};
        rc = fy_pkt_send(r->wpeer, FY_PKT_PUSH_DATA, r->tag, r->ctx, &d, r);
    }
    if (rc)
        fy_fatal(1, "out of memory pushing a message to rank %d", r->wpeer);
    return 0;
}

void fy_push_sent(struct fy_req *r, uint32_t type)
{
    if (type == FY_PKT_PUSH)
        r->proto = FY_RP_RTS_SENT;
    if (--r->push_pending)
        return;
    if (r->push_eager) {
        /* Push-All: the receiver keeps every byte; no FIN comes. */
        fy_cookie_drop(r->cookie);
        fy_req_complete(r);
    } else if (r->done_pending) {
        fy_req_complete(r);
    }
}

void fy_send_done(struct fy_req *r)
{
    if (r->push_pending)
        r->done_pending = true;
    else
        fy_req_complete(r);
}

/* ---- receiving --------------------------------------------------------- */

static void check_push(const struct fy_pkt *p, const struct fy_ctl *ctl,
                       uint64_t have)
{
    uint64_t pushed = ctl->offset & PUSH_BYTES_MASK;
    if (p->src == fy_p2p.me)
        bad_peer(p->src, "push to self");
    if (pushed > ctl->total || have > pushed || have > fy_chan.cell_payload)
        bad_peer(p->src, "pushed length");
}

static void finish(struct fy_req *r)
{
    if (r->push_fin)
        fy_p2p_send_fin(r->xsrc, r->peer_cookie);
    r->push_fin = false;
    fy_recv_finish(r, (uint64_t)r->st_bytes, (uint64_t)r->st_bytes);
}

void fy_push_pull_done(struct fy_req *r)
{
    r->pull_done = true;
    if (!r->push_left)
        finish(r);
}

/* Start receive r on a pushed message: 'have' pushed bytes are at
 * 'data' (none if 'discard'), 'arrived' of them have come (more follow
 * as PUSH_DATA when fewer than pushed). */
static void start_rx(struct fy_req *r, int src, const struct fy_ctl *ctl,
                     const uint8_t *data, uint64_t have, uint64_t arrived,
                     bool discard)
{
    struct fy_peer *pe = &fy_p2p.peers[src];
    uint64_t total = ctl->total;
    uint64_t pushed = ctl->offset & PUSH_BYTES_MASK;
    bool sync = ctl->offset & PUSH_SYNC;
    uint64_t want = FY_MIN(total, fy_req_capacity(r));
    uint8_t *dest = fy_rndv_recv_dest(r, want);
    uint64_t n = FY_MIN(have, want);
    if (n)
        fy_copy(dest, data, n);
    r->push_rx = true;
    r->push_fin = !(pushed == total && !sync);
    r->push_left = pushed - arrived;
    r->push_discard = discard;
    r->pull_done = false;
    r->st_bytes = (MPI_Count)want;
    r->xsrc = src;
    r->peer_cookie = ctl->cookie;
    if (total > want)
        r->err = -EMSGSIZE;
    if (r->push_left) {
        pe->push_req = r;
        pe->push_unexp = NULL;
    }
    uint64_t from = discard ? 0 : FY_MIN(pushed, want);
    fy_proto_count(FY_STAT_PUSH, discard ? 0 : FY_MIN(pushed, want));
    if (from < want)
        fy_rndv_pull_rest(r, src, ctl, from, want, total);
    else
        fy_push_pull_done(r);
}

/* The pushed bytes of this message keep arriving after its PUSH. */
static void expect_more(struct fy_peer *pe, const struct fy_ctl *ctl,
                        uint64_t arrived)
{
    pe->push_active = true;
    pe->push_cookie = ctl->cookie;
    pe->push_next = arrived;
    pe->push_end = ctl->offset & PUSH_BYTES_MASK;
    pe->push_req = NULL;
    pe->push_unexp = NULL;
}

void fy_push_matched(struct fy_req *r, const struct fy_pkt *p)
{
    check_push(p, &p->ctl, p->len);
    struct fy_peer *pe = &fy_p2p.peers[p->src];
    if ((p->ctl.offset & PUSH_BYTES_MASK) > p->len)
        expect_more(pe, &p->ctl, p->len);
    r->st_source = fy_comm_rank_of(r->comm, p->src);
    r->st_tag = p->tag;
    start_rx(r, p->src, &p->ctl, p->data, p->len, p->len, false);
}

void fy_push_unexpected(const struct fy_pkt *p)
{
    struct fy_p2p_state *s = &fy_p2p;
    check_push(p, &p->ctl, p->len);
    uint64_t pushed = p->ctl.offset & PUSH_BYTES_MASK;
    bool must_keep = pushed == p->ctl.total && !(p->ctl.offset & PUSH_SYNC);
    /* Pushed bytes the sender may forget are kept whatever the budget;
     * others within FERRY_PUSH_BUF. */
    uint64_t kept =
        must_keep || s->push_used + pushed <= s->push_buf ? pushed : 0;
    struct fy_unexp *u = fy_p2p_unexp_new(p, kept, kept ? p->len : 0);
    u->kept = kept;
    u->pushing = pushed > p->len;
    s->push_used += kept;
    if (u->pushing) {
        struct fy_peer *pe = &s->peers[p->src];
        expect_more(pe, &p->ctl, p->len);
        pe->push_unexp = u;
    }
    fy_p2p_unexp_append(u);
}

void fy_push_matched_unexp(struct fy_req *r, struct fy_unexp *u)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_peer *pe = &s->peers[u->src];
    uint64_t pushed = u->ctl.offset & PUSH_BYTES_MASK;
    uint64_t arrived = pushed;
    if (u->pushing) {
        if (pe->push_unexp != u)
            fy_fatal(1, "internal: pushed message from rank %d lost", u->src);
        arrived = pe->push_next;
    }
    s->push_used -= u->kept;
    r->st_source = fy_comm_rank_of(r->comm, u->src);
    r->st_tag = u->tag;
    start_rx(r, u->src, &u->ctl, u->data, u->len, arrived, u->kept == 0);
    fy_p2p_unexp_free(u);
}

/* Whether PUSH_DATA p carries the next bytes of the message its sender
 * is pushing (its header only: also asked before the payload is read). */
static bool push_data_due(const struct fy_peer *pe, const struct fy_pkt *p)
{
    return pe->push_active && p->ctl.cookie == pe->push_cookie &&
           p->ctl.offset == pe->push_next && p->len != 0 &&
           p->len <= pe->push_end - pe->push_next;
}

uint8_t *fy_push_steer(const struct fy_pkt *p)
{
    const struct fy_peer *pe = &fy_p2p.peers[p->src];
    struct fy_req *r = pe->push_req;
    uint64_t off = p->ctl.offset;
    /* Only the whole piece inside a receive (else it takes the normal way
     * and is checked or cut there). */
    if (!r || r->push_discard || !push_data_due(pe, p))
        return NULL;
    uint64_t want = FY_MIN(p->ctl.total, fy_req_capacity(r));
    if (off > want || p->len > want - off)
        return NULL;
    return fy_req_data(r) + off;
}

void fy_push_on_data(const struct fy_pkt *p)
{
    struct fy_peer *pe = &fy_p2p.peers[p->src];
    uint64_t off = p->ctl.offset;
    if (!push_data_due(pe, p))
        bad_peer(p->src, "pushed bytes for no message being pushed");
    pe->push_next += p->len;
    bool last = pe->push_next == pe->push_end;
    struct fy_req *r = pe->push_req;
    struct fy_unexp *u = pe->push_unexp;
    if (last) {
        pe->push_active = false;
        pe->push_req = NULL;
        pe->push_unexp = NULL;
    }
    if (r) {
        uint64_t want = FY_MIN(p->ctl.total, fy_req_capacity(r));
        uint8_t *at = fy_req_data(r) + off;
        if (!r->push_discard && off < want && p->data != at)
            fy_copy(at, p->data, FY_MIN(p->len, want - off));
        r->push_left -= p->len;
        if (!r->push_left && r->pull_done)
            finish(r);
    } else if (u) {
        if (u->kept) {
            fy_copy(u->data + off, p->data, p->len);
            u->len += p->len;
        }
        if (last)
            u->pushing = false;
    }
}
