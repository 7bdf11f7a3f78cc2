/* SPDX-License-Identifier: MIT */
/* The lock-free message queues (seed 000's second mechanism) as a
 * rendezvous mover: the sender cuts a message into cells taken from its own
 * free queue and posts them on the receiver's receive queue; the receiver
 * copies each cell out where its header says, then gives the cell back.
 * This file owns that data path: the library's rendezvous (proto/rndv.c)
 * and the laboratory (bench/lab) both fill cells with fy_xfer_queue_push
 * and empty them with fy_xfer_queue_take, so what the laboratory measures
 * is what runs in production. The queues themselves are shm/cellq_inl.h.
 *
 * Invariants of one message:
 * - Cells are filled in order: cell k carries bytes [offset, offset+len)
 *   with offset the sum of the earlier cells' lengths, and every cell but
 *   the last carries exactly 'payload' bytes.
 * - A cell's header and payload are written before fy_cellq_push makes it
 *   reachable (the queue's X1/R2 publish them with the link).
 * - The header is in shared memory and the sender can scribble over it:
 *   the receiver reads cookie, offset and length once, and copies only if
 *   they name the next bytes of this very message. */
#include <errno.h>

#include "shm/cellq_inl.h"
#include "xfer/xfer.h"

const struct fy_xfer_ops fy_xfer_queue_ops = {
    .name = "queue",
    .summary = "copy through lock-free per-receiver queues of cells",
    .probe = fy_xfer_probe_always,
    .copy_local = fy_xfer_copy_libc,
};

int fy_xfer_queue_push(const struct fy_queue_xfer *x, const uint8_t *src,
                       uint64_t *done_io)
{
    int n = 0;
    while (*done_io < x->len) {
        uint64_t off = fy_cellq_pop(x->freeq, x->free_tail);
        if (!off)
            break; /* every cell of ours is in flight: later */
        struct fy_cell *c = fy_shm_ptr(off);
        uint64_t chunk = FY_MIN(x->payload, x->len - *done_io);
        x->copy((uint8_t *)c + FY_CELL_HDR, src + *done_io, chunk);
        c->src = x->src;
        c->type = x->type;
        c->seq = x->seq_io ? ++*x->seq_io : 0;
        c->tag = 0;
        c->ctx = 0;
        c->len = chunk;
        c->total = x->len;
        c->addr = 0;
        c->cookie = x->cookie;
        c->offset = *done_io;
        fy_cellq_push(x->recvq, off);
        if (x->posted)
            x->posted(x->peer);
        *done_io += chunk;
        n++;
    }
    return n;
}

int fy_xfer_queue_take(const struct fy_queue_xfer *x,
                       const struct fy_queue_chunk *ch, uint8_t *dst,
                       uint64_t *done_io)
{
    if (ch->cookie != x->cookie || ch->offset != *done_io || ch->len == 0 ||
        ch->len > x->payload || ch->len > x->len - *done_io)
        return -EPROTO;
    x->copy(dst + *done_io, ch->data, ch->len);
    *done_io += ch->len;
    return 0;
}

struct fy_queue_chunk fy_xfer_queue_chunk(const struct fy_cell *c)
{
    /* Each field read once: the sender may still be scribbling. */
    return (struct fy_queue_chunk){.cookie = c->cookie,
                                   .offset = c->offset,
                                   .len = c->len,
                                   .data = (const uint8_t *)c + FY_CELL_HDR};
}

bool fy_xfer_queue_ready(const struct fy_queue_xfer *x)
{
    return fy_cellq_peek(*x->free_tail);
}
