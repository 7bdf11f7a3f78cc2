/* SPDX-License-Identifier: MIT */
/* Fast paths of the shared-memory channel, inlined into point-to-point's
 * request-free send and receive (p2p.c) and used by chan/shm.c itself.
 *
 * Mailbox invariants (one ring per ordered pair of local ranks, 'slots'
 * slots of one cache line each):
 * - Only the sender writes a ring's slots, only the receiver writes its
 *   'consumed' count (fy_fbox_ack). fb_sent - consumed <= slots always.
 * - A message takes fy_fbox_nslots(len) consecutive slots; the first holds
 *   the header and the pair sequence number, continuations hold seq 0. The
 *   first slot's seq is stored last with release (R6); a receiver that
 *   acquires the expected seq (A6) sees the header and every continuation.
 * - The receiver checks the length against fbox_cap before it copies, and
 *   reads each header field once: the sender owns the line.
 * - Consumed counts are published with release (R5) once the receiver has
 *   copied the payload out; the sender may overwrite a slot only after it
 *   acquires a count past it (A5). */
#ifndef FY_CHAN_SHM_INL_H
#define FY_CHAN_SHM_INL_H

#include <string.h>

#include "chan/chan.h"
#include "shm/cellq_inl.h"
#include "util/copy.h"

/* Put one packet into the peer's mailbox ring if it has room. */
static inline bool fy_chan_fbox_put(int peer, struct fy_chan_peer *pe,
                                    uint32_t type, int32_t tag, uint32_t ctx,
                                    const void *data, uint64_t len)
{
    const uint32_t slots = fy_chan.slots;
    uint32_t n = fy_fbox_nslots(len);
    if (pe->fb_sent + n - pe->fb_acked > slots) {
        /* A5: pairs with R5 in fy_chan_fbox_consume(): slots are free to
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

/* The slot holding the peer's next packet if it is due (seq acquired,
 * A6: pairs with R6), else NULL. */
static inline struct fy_fbox_slot *fy_chan_fbox_due(struct fy_chan_peer *pe)
{
    struct fy_fbox_slot *sl = &pe->ring_in[pe->fb_next % fy_chan.slots];
    if (atomic_load_explicit(&sl->seq, memory_order_acquire) != pe->rseq)
        return NULL;
    return sl;
}

/* Copy a due mailbox message's payload out of the ring (its length read
 * once and checked against fbox_cap by the caller). */
static inline void fy_chan_fbox_copy_out(const struct fy_chan_peer *pe,
                                         const struct fy_fbox_slot *sl,
                                         void *dst, uint64_t len)
{
    uint64_t first = FY_MIN(len, (uint64_t)FY_FBOX_PAYLOAD);
    uint64_t rest = len - first;
    /* Ask for every continuation line at once: the misses to the other
     * core's cache then overlap instead of queueing one by one. */
    for (uint64_t i = 1; i <= (rest + FY_FBOX_CONT - 1) / FY_FBOX_CONT; i++)
        __builtin_prefetch(&pe->ring_in[(pe->fb_next + i) % fy_chan.slots]);
    if (first)
        memcpy(dst, sl->data, first);
    uint8_t *c = (uint8_t *)dst + first;
    for (uint64_t i = 1; rest; i++) {
        const struct fy_fbox_slot *cs =
            &pe->ring_in[(pe->fb_next + i) % fy_chan.slots];
        uint64_t k = FY_MIN(rest, (uint64_t)FY_FBOX_CONT);
        memcpy(c, (const uint8_t *)cs + sizeof(cs->seq), k);
        c += k;
        rest -= k;
    }
}

/* Release the due message's slots (len bytes) and advance the pair
 * sequence. */
static inline void fy_chan_fbox_consume(struct fy_chan_peer *pe, uint64_t len)
{
    pe->fb_next += fy_fbox_nslots(len);
    pe->rseq++;
    /* R5: pairs with A5: the sender may reuse the slots once it sees this. */
    atomic_store_explicit(&pe->ack_in->consumed, pe->fb_next,
                          memory_order_release);
}

/* Put one packet into a free cell of ours and post it to the peer's
 * receive queue. Returns false when we have no free cell. */
static inline bool fy_chan_cell_put(int peer, struct fy_chan_peer *pe,
                                    uint32_t type, int32_t tag, uint32_t ctx,
                                    const struct fy_ctl *ctl, const void *data,
                                    uint64_t len)
{
    uint64_t off = fy_cell_get();
    if (!off)
        return false;
    struct fy_cell *c = fy_cell_at(off);
    c->src = (uint32_t)fy_chan.local_me;
    c->type = type;
    c->tag = tag;
    c->ctx = ctx;
    c->seq = ++pe->sseq;
    c->len = len;
    if (len)
        fy_copy((uint8_t *)c + FY_CELL_HDR, data, len);
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

/* Whether our receive queue has a cell waiting. */
static inline bool fy_chan_cell_waiting(void)
{
    return fy_cellq_peek(fy_chan.recv_tail);
}

/* Take our next cell, checked (owner, and the pair order: earlier
 * mailbox packets of its sender are handed up first). Returns its offset
 * and the sender's world rank in *src_out, or 0 when the queue is empty.
 * Its length is checked where it is read (fy_chan_cell_len): the sender,
 * or any rank, may write it again after the take. */
uint64_t fy_chan_cell_take(int *src_out);

/* The payload length of taken cell c from world rank src, read once:
 * more than a cell holds ends the job as malformed. Callers use this
 * value, never c->len again. */
static inline uint64_t fy_chan_cell_len(const struct fy_cell *c, int src)
{
    uint64_t len = c->len;
    if (len > fy_chan.cell_payload)
        fy_chan_bad_packet(src, "cell length");
    return len;
}
/* Hand a taken cell up and give it back to its owner. */
void fy_chan_cell_deliver(uint64_t off, int src);
/* Give a taken cell back to its owner without handing it up (the caller
 * consumed it). */
void fy_chan_cell_return(uint64_t off);

#endif /* FY_CHAN_SHM_INL_H */
