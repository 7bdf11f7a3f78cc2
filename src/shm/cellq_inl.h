/* SPDX-License-Identifier: MIT */
/* Lock-free multi-producer single-consumer queue of cells in the shared
 * segment (intrusive, after Vyukov's MPSC design), linked by segment offsets
 * because every process maps the segment at its own address.
 *
 * Invariants:
 * - q->head is the last node; producers swap themselves in with an atomic
 *   exchange, then link the previous last node's 'next' to themselves.
 * - The consumer owns its cursor 'tail' (private memory): the node before
 *   the first unconsumed one. It starts at the stub and never passes a node
 *   whose 'next' is still 0.
 * - Between a producer's exchange and its link store the queue looks empty
 *   past that point; the consumer then reports "empty for now" and retries
 *   later, so a preempted producer never blocks the consumer.
 * - A node returned by pop is out of the queue: nobody else touches it.
 * - Links live in shared memory, which any rank can scribble over: every
 *   offset read from the segment (a 'next', the previous head) is checked
 *   to be a cell or a queue stub before it is dereferenced or written
 *   through; anything else ends the job with "malformed queue link". */
#ifndef FY_CELLQ_INL_H
#define FY_CELLQ_INL_H

#include "shm/shm.h"

static inline struct fy_qnode *fy_qnode_at(uint64_t off)
{
    return (struct fy_qnode *)fy_shm_ptr(off);
}

_Noreturn void fy_cellq_bad_link(uint64_t off);

/* Whether 'off' can be a queue node: the start of a cell, or the stub of a
 * rank's receive or free queue. */
static inline bool fy_qnode_valid(uint64_t off)
{
    if (FY_LIKELY(fy_cell_owner(off) >= 0))
        return true;
    const struct fy_shm_layout *l = &fy_shm.lay;
    uint64_t rel = off - l->off_ranks;
    if (off < l->off_ranks ||
        rel >= (uint64_t)l->nranks * sizeof(struct fy_shm_rank))
        return false;
    uint64_t in = rel % sizeof(struct fy_shm_rank);
    return in == offsetof(struct fy_shm_rank, recvq.stub) ||
           in == offsetof(struct fy_shm_rank, freeq.stub);
}

static inline uint64_t fy_qnode_check(uint64_t off)
{
    if (FY_UNLIKELY(!fy_qnode_valid(off)))
        fy_cellq_bad_link(off);
    return off;
}

/* Set up an empty queue (its owner does this before the start-up barrier)
 * and return the consumer's initial cursor. */
static inline uint64_t fy_cellq_init(struct fy_cellq *q)
{
    uint64_t stub = fy_shm_off(&q->stub);
    atomic_store_explicit(&q->stub.next, 0, memory_order_relaxed);
    atomic_store_explicit(&q->head, stub, memory_order_relaxed);
    return stub;
}

static inline void fy_cellq_push(struct fy_cellq *q, uint64_t node)
{
    atomic_store_explicit(&fy_qnode_at(node)->next, 0, memory_order_relaxed);
    /* X1: acq_rel exchange: release orders our cell's contents before it
     * becomes reachable; acquire pairs with the previous producer's X1 so
     * its node is ours to link. */
    uint64_t prev = fy_qnode_check(
        atomic_exchange_explicit(&q->head, node, memory_order_acq_rel));
    /* R2: pairs with A3 in pop(): the consumer that sees this link sees the
     * whole cell. */
    atomic_store_explicit(&fy_qnode_at(prev)->next, node, memory_order_release);
}

/* Whether pop() would (probably) return a node: one load. */
static inline bool fy_cellq_peek(uint64_t tail)
{
    return atomic_load_explicit(&fy_qnode_at(tail)->next,
                                memory_order_relaxed) != 0;
}

/* Take the first node, or 0 if the queue is (for now) empty. */
static inline uint64_t fy_cellq_pop(struct fy_cellq *q, uint64_t *tail_io)
{
    uint64_t stub = fy_shm_off(&q->stub);
    uint64_t tail = *tail_io;
    /* A3: pairs with R2. */
    uint64_t next =
        atomic_load_explicit(&fy_qnode_at(tail)->next, memory_order_acquire);
    if (tail == stub) {
        if (next == 0)
            return 0;
        *tail_io = tail = fy_qnode_check(next);
        next = atomic_load_explicit(&fy_qnode_at(tail)->next,
                                    memory_order_acquire);
    }
    if (next != 0) {
        *tail_io = fy_qnode_check(next);
        return tail;
    }
    /* 'tail' looks last. If a producer has already swapped in after it, it
     * is about to link: come back later. A4: pairs with X1. */
    if (atomic_load_explicit(&q->head, memory_order_acquire) != tail)
        return 0;
    /* Put the stub behind it so 'tail' can leave without emptying q. */
    fy_cellq_push(q, stub);
    next = atomic_load_explicit(&fy_qnode_at(tail)->next, memory_order_acquire);
    if (next != 0) {
        *tail_io = fy_qnode_check(next);
        return tail;
    }
    return 0;
}

#endif /* FY_CELLQ_INL_H */
