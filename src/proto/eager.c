/* SPDX-License-Identifier: MIT */
/* The eager protocol (the whole message travels in its first packet:
 * EAGER, or EAGER_SYNC when the sender must learn of the match) and the
 * self protocol (a rank to itself: matched at once or queued as a copy).
 * Entries of the table in proto.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "util/copy.h"

int fy_proto_eager_send(struct fy_req *r)
{
    if (r->mode == FY_SEND_SYNC) {
        /* The receiver answers FIN with our cookie once it matches. */
        r->cookie = fy_cookie_new(r);
        struct fy_ctl ctl = {.total = (uint64_t)r->bytes, .cookie = r->cookie};
        return fy_pkt_send(r->wpeer, FY_PKT_EAGER_SYNC, r->tag, r->ctx, &ctl,
                           r);
    }
    return fy_pkt_send(r->wpeer, FY_PKT_EAGER, r->tag, r->ctx, NULL, r);
}

void fy_proto_eager_matched(struct fy_req *r, const struct fy_pkt *p)
{
    fy_p2p_deliver_bytes(r, p->src, p->tag, p->data, p->len);
    if (p->type == FY_PKT_EAGER_SYNC)
        fy_p2p_send_fin(p->src, p->ctl.cookie);
}

int fy_proto_self_send(struct fy_req *sr)
{
    const void *data = fy_req_data(sr);
    fy_proto_count(FY_STAT_SELF, (uint64_t)sr->bytes);
    struct fy_req *r = fy_p2p_posted_take(fy_p2p.me, sr->tag, sr->ctx);
    if (r) {
        fy_p2p_deliver_bytes(r, fy_p2p.me, sr->tag, data, (uint64_t)sr->bytes);
        fy_req_complete(sr);
        return 0;
    }
    struct fy_unexp *u = fy_p2p_unexp_alloc((uint64_t)sr->bytes);
    if (!u)
        return -ENOMEM;
    *u = (struct fy_unexp){.src = fy_p2p.me,
                           .type = FY_PKT_EAGER,
                           .tag = sr->tag,
                           .ctx = sr->ctx,
                           .len = (uint64_t)sr->bytes,
                           .pool = u->pool};
    if (sr->bytes)
        fy_copy(u->data, data, (size_t)sr->bytes);
    if (sr->mode == FY_SEND_SYNC)
        u->self_sync = sr; /* completes when matched */
    else
        fy_req_complete(sr);
    /* Numbered like a peer's message, so MPI_Cancel can find it. */
    struct fy_peer *pe = &fy_p2p.peers[fy_p2p.me];
    sr->msgno = pe->msgs_seen = ++pe->msgs_sent;
    fy_p2p_unexp_append(u);
    return 0;
}
