/* SPDX-License-Identifier: MIT */
/* Cancelling sends (MPI 4.0 3.8.4): either the message is received or the
 * send is cancelled, never both, and a wait on a send marked for
 * cancellation returns.
 *
 * Only the receiver knows whether a message matched, so the sender asks
 * it: a CANCEL packet (ctl.offset FY_CANCEL_ASK) naming the message by
 * its number among those the sender opened to that receiver the ordinary
 * way (fy_req.msgno = fy_peer.msgs_sent, counted by both sides in pair
 * order as fy_peer.msgs_seen) and carrying a cookie for the answer.
 *
 * C1 The CANCEL keeps its place in the pair's order behind every packet
 *    sent before it (p2p.c's is_ordered), so it reaches the receiver after
 *    the message's first packet and after all its pushed bytes (push.c
 *    queues every PUSH_DATA at send time). The message is then either
 *    still on the unexpected queue, where nothing but its entry holds it,
 *    or it matched (a receive took it, or MPI_Improbe did).
 * C2 The receiver, from its progress engine whatever MPI call it is in,
 *    drops an unmatched entry (its pushed bytes released) and answers
 *    FY_CANCEL_YES; for a matched message, or none it knows, it answers
 *    FY_CANCEL_NO and the protocol runs on as if no cancel had come.
 *    An answer echoes the ask's cookie and ctl.addr (the message's own
 *    cookie, which a network channel uses to release a registration made
 *    for its RTS).
 * C3 The sender's request is not complete between its ask and the answer,
 *    even if its protocol finished it meanwhile (fy_req_complete records
 *    that in cancel_done): YES completes it cancelled, after forgetting
 *    the protocol's state (cookie, RTS owed) when the protocol had not
 *    finished; NO completes it if the protocol had, else the protocol
 *    will. A YES is accepted only where no receiver can still be moving
 *    the message's bytes (the first packet left and nothing answered it
 *    but this), else it is a malformed answer.
 * C4 No ordinary message (msgno 0: a write into the receiver's offered
 *    buffer, which is matched by construction, a self-send matched at
 *    once, MPI_PROC_NULL) cannot be cancelled; the request completes as
 *    it would have. A send to ourselves is settled without packets. */
#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "util/util.h"

/* Take message number n from world rank src off the unexpected queue if
 * it is there and nothing else refers to it; returns the entry (the
 * caller frees it) or NULL. */
static struct fy_unexp *retract(int src, uint64_t n)
{
    for (struct fy_unexp *u = fy_p2p.unexp_head; u; u = u->next) {
        if (u->src != src || u->msgno != n)
            continue;
        /* Pushed bytes still due (cannot be, by C1, from a sound peer)
         * would land in it later: leave it to be received. */
        if (u->pushing)
            return NULL;
        fy_p2p_unexp_unlink(u);
        if (u->type == FY_PKT_PUSH)
            fy_p2p.push_used -= u->kept;
        return u;
    }
    return NULL;
}

static void cancel_self(struct fy_req *r)
{
    struct fy_unexp *u = retract(fy_p2p.me, r->msgno);
    if (!u)
        return;
    fy_p2p_unexp_free(u);
    r->cancelled = true;
    r->complete = true; /* a synchronous one was waiting for its match */
}

void fy_p2p_cancel_send(struct fy_req *r)
{
    if (r->kind != FY_REQ_SEND || r->cancel_asked || r->err)
        return;
    r->cancel_asked = true;
    if (!r->msgno)
        return; /* C4 */
    if (r->wpeer == fy_p2p.me) {
        cancel_self(r);
        return;
    }
    r->ccookie = fy_cookie_new(r);
    r->cancel_wait = true;
    if (r->complete) {
        r->complete = false;
        r->cancel_done = true;
    }
    struct fy_ctl ctl = {.total = r->msgno,
                         .addr = r->cookie,
                         .cookie = r->ccookie,
                         .offset = FY_CANCEL_ASK};
    if (fy_pkt_send(r->wpeer, FY_PKT_CANCEL, 0, 0, &ctl, NULL))
        fy_fatal(1, "out of memory cancelling a send to rank %d", r->wpeer);
}

static void on_ask(const struct fy_pkt *p)
{
    uint64_t n = p->ctl.total;
    if (n == 0 || n > fy_p2p.peers[p->src].msgs_seen)
        fy_chan_bad_packet(p->src, "cancel of a message not received");
    struct fy_unexp *u = retract(p->src, n);
    if (u)
        fy_p2p_unexp_free(u);
    struct fy_ctl ctl = {.total = n,
                         .addr = p->ctl.addr,
                         .cookie = p->ctl.cookie,
                         .offset = u ? FY_CANCEL_YES : FY_CANCEL_NO};
    if (fy_pkt_send(p->src, FY_PKT_CANCEL, 0, 0, &ctl, NULL))
        fy_fatal(1, "out of memory answering a cancel from rank %d", p->src);
}

static void on_answer(const struct fy_pkt *p, bool yes)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_SEND);
    if (!r || r->wpeer != p->src || !r->cancel_wait || p->ctl.total != r->msgno)
        fy_chan_bad_packet(p->src, "cancel answer for no cancelled send");
    if (yes && !r->cancel_done &&
        ((r->proto != FY_RP_RTS_SENT && r->proto != FY_RP_SYNC_WAIT) ||
         r->push_pending))
        fy_chan_bad_packet(p->src, "cancel granted for a matched message");
    fy_cookie_drop(r->ccookie);
    r->cancel_wait = false;
    if (yes) {
        if (!r->cancel_done)
            fy_rndv_send_over(r);
        r->cancelled = true;
        r->complete = true;
    } else if (r->cancel_done) {
        r->complete = true;
    }
}

void fy_p2p_on_cancel(const struct fy_pkt *p)
{
    switch (p->ctl.offset) {
    case FY_CANCEL_ASK:
        on_ask(p);
        break;
    case FY_CANCEL_NO:
    case FY_CANCEL_YES:
        on_answer(p, p->ctl.offset == FY_CANCEL_YES);
        break;
    default:
        fy_chan_bad_packet(p->src, "cancel packet");
    }
}
