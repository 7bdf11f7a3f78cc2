/* SPDX-License-Identifier: MIT */
/* Lock-free multi-producer single-consumer queue of cells in the shared
 * segment (intrusive, after Vyukov's MPSC design), linked by segment offsets
 * because every process maps the segment at its own address. The queues and
 * the cells are used by two siblings, the shared-memory channel (chan/) and
 * the cell-queue mechanism (xfer/queue.c), so they live below both, here.
 *
 * Regions (declared by fy_cellq_declare, found by fy_cellq_attach):
 * - "cellq": per local rank, its receive queue and its free-cell queue
 *   (struct fy_cellq_pair).
 * - "cells": per local rank, ncells cells of cell_size bytes (a struct
 *   fy_cell header, the payload from FY_CELL_HDR). A cell belongs to the
 *   rank whose part of the region it is in; it is lent to a receiver
 *   through the receiver's receive queue and comes back through its
 *   owner's free queue.
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
 *   through; anything else ends the job with "malformed queue link". The
 *   check uses this process's own copy of where cells and stubs are
 *   (fy_cells), never a size or offset read from the segment. */
#ifndef FY_CELLQ_INL_H
#define FY_CELLQ_INL_H

#include "shm/shm.h"

/* ---- shared layout ------------------------------------------------------- */

/* A node of an intrusive MPSC queue: offsets from the segment base, 0 is
 * null. The first member of every cell and of each queue's stub. 'next' is
 * written by the producer that links behind the node (R2) and reset by
 * whoever pushes the node. */
struct fy_qnode {
    _Atomic uint64_t next;
};
static_assert(sizeof(struct fy_qnode) == 8, "queue link is one word");

/* Producers' side of one MPSC queue; the consumer's cursor lives in the
 * consumer's private memory. */
struct fy_cellq {
    /* The last node: every producer exchanges itself in (X1). */
    alignas(FY_CACHELINE) _Atomic uint64_t head;
    /* Always-present dummy: its 'next' is written by producers (R2) and
     * by the consumer when it re-pushes the stub. */
    alignas(FY_CACHELINE) struct fy_qnode stub;
};
static_assert(sizeof(struct fy_cellq) == 2 * FY_CACHELINE, "head, stub lines");
static_assert(offsetof(struct fy_cellq, stub) == FY_CACHELINE,
              "head and stub are written by different ranks: own lines");

/* One element of the "cellq" region: a local rank's two queues. The rank
 * initialises both before the attach barrier and is their only consumer. */
struct fy_cellq_pair {
    struct fy_cellq recvq; /* cells sent to this rank; senders push */
    struct fy_cellq freeq; /* this rank's free cells; receivers push back */
};
static_assert(sizeof(struct fy_cellq_pair) == 4 * FY_CACHELINE &&
                  offsetof(struct fy_cellq_pair, freeq) == 2 * FY_CACHELINE,
              "each queue's lines to itself");

/* Header of a queue cell; the payload starts at FY_CELL_HDR. Written only
 * by the cell's current holder: its owner (or the sender it is lent to)
 * before fy_cellq_push, the receiver reads it after pop (A3). */
struct fy_cell {
    struct fy_qnode q; /* queue link */
    uint32_t src;      /* sender's local rank (its index in the segment) */
    uint32_t type;     /* enum fy_pkt_type */
    uint64_t seq;      /* pair sequence number (0: not ordered) */
    int32_t tag;
    uint32_t ctx;
    uint64_t len;    /* payload bytes in this cell */
    uint64_t total;  /* message size (EAGER/RTS) */
    uint64_t addr;   /* RTS: sender's buffer address */
    uint64_t cookie; /* rendezvous: the request this refers to */
    uint64_t offset; /* DATA: where this chunk goes */
};
#define FY_CELL_HDR 128u
static_assert(offsetof(struct fy_cell, q) == 0, "link first");
static_assert(sizeof(struct fy_cell) == 72 && FY_CELL_HDR % FY_CACHELINE == 0,
              "header fits before the payload's first line");

/* Region names (fy_shm_region_add, fy_shm_region_ptr). */
#define FY_CELLQ_REGION "cellq"
#define FY_CELLS_REGION "cells"

/* Declare the "cellq" and "cells" regions: ncells cells of cell_size bytes
 * (a multiple of FY_CACHELINE, above FY_CELL_HDR) per local rank. Returns
 * 0 or the allocator's negative errno. */
int fy_cellq_declare(struct fy_shm_layout *lay, uint32_t cell_size,
                     uint32_t ncells);

/* ---- this process's view ------------------------------------------------- */

/* Where the queues and cells are, copied from this process's own layout
 * once at attach (fy_cellq_attach; the laboratory fills it for its own
 * segment). */
struct fy_cells {
    struct fy_cellq_pair *pairs; /* [nranks] */
    uint64_t pairs_off;          /* segment offset of pairs[0] */
    uint64_t cells_off;          /* segment offset of rank 0's first cell */
    uint64_t cells_len;          /* bytes of every rank's cells */
    uint64_t owner_len;          /* bytes of one rank's cells */
    uint32_t cell_size;
    uint32_t ncells; /* per rank */
    uint32_t nranks;
};
extern struct fy_cells fy_cells;

/* Fill fy_cells from the attached segment. Returns 0 or -EPROTO (the
 * regions were not declared). */
int fy_cellq_attach(void);

static inline struct fy_cellq *fy_cellq_recvq(int local)
{
    return &fy_cells.pairs[local].recvq;
}
static inline struct fy_cellq *fy_cellq_freeq(int local)
{
    return &fy_cells.pairs[local].freeq;
}

/* Segment offset of the first cell 'owner' owns. */
static inline uint64_t fy_cells_base(int owner)
{
    return fy_cells.cells_off + (uint64_t)owner * fy_cells.owner_len;
}

static inline struct fy_cell *fy_cell_at(uint64_t off)
{
    return (struct fy_cell *)fy_shm_ptr(off);
}

/* The owner of a cell offset, or -1 when 'off' is not the start of a cell
 * (a corrupted link or a malformed peer). */
static inline int fy_cell_owner(uint64_t off)
{
    const struct fy_cells *g = &fy_cells;
    uint64_t rel = off - g->cells_off;
    if (off < g->cells_off || rel >= g->cells_len || rel % g->cell_size)
        return -1;
    return (int)(rel / g->owner_len);
}

/* ---- the queue ----------------------------------------------------------- */

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
    const struct fy_cells *g = &fy_cells;
    uint64_t rel = off - g->pairs_off;
    if (off < g->pairs_off ||
        rel >= (uint64_t)g->nranks * sizeof(struct fy_cellq_pair))
        return false;
    uint64_t in = rel % sizeof(struct fy_cellq_pair);
    return in == offsetof(struct fy_cellq_pair, recvq.stub) ||
           in == offsetof(struct fy_cellq_pair, freeq.stub);
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
