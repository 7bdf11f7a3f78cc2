/* SPDX-License-Identifier: MIT */
/* The job's shared segment: one anonymous memfd created by mpiexec and
 * inherited by every rank, so nothing ever appears in /dev/shm and a
 * SIGKILL of anyone leaks nothing. Rank 0 sizes it and writes the header;
 * every other rank checks the magic and version before trusting it.
 *
 * Layout (every region page aligned):
 *   header | rank records [P] | fastboxes [P receivers][P senders][slots]
 *   | fastbox acks [P][P] | cells [P owners][ncells]
 *   | double-buffer pads [P receivers][npads]
 * Memory is O(P) per rank except the bounded per-pair mailboxes (2 KiB a
 * pair): double buffers belong to the receiver, which lends one of its
 * npads to a sender for one message at a time (see proto/rndv.c).
 *
 * Shared control data is never trusted: every rank computes the layout
 * itself from the parameters, keeps it in private memory (fy_shm.lay) and
 * never re-reads an offset or size from the segment; queue links are
 * validated before they are followed (cellq_inl.h), lengths before they
 * steer a copy, and peers' pids are copied once after the start-up
 * barrier. A rank that scribbles over the segment can make the job fail
 * ("malformed ... from rank N"), not make another rank write out of
 * bounds. */
#ifndef FY_SHM_H
#define FY_SHM_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

#define FY_SHM_MAGIC 0x46657272795f5348ull /* "Ferry_SH" */
#define FY_SHM_VERSION 5u

/* Every shared atomic is a plain lock-free word: a lock-based fallback
 * would put a process-private lock in shared memory. */
static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics are lock-free");
static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics are lock-free");

/* A node of an intrusive MPSC queue (Vyukov): offsets from the segment
 * base, 0 is null. The first member of every cell and of each queue's stub. */
struct fy_qnode {
    _Atomic uint64_t next;
};

/* Producers' side of one MPSC queue; the consumer's cursor lives in the
 * consumer's private memory (see cellq_inl.h). */
struct fy_cellq {
    alignas(FY_CACHELINE) _Atomic uint64_t head; /* last node; producers xchg */
    alignas(FY_CACHELINE) struct fy_qnode stub;  /* always-present dummy */
};
static_assert(sizeof(struct fy_qnode) == 8, "queue link is one word");
static_assert(sizeof(struct fy_cellq) == 2 * FY_CACHELINE, "head, stub lines");
static_assert(offsetof(struct fy_cellq, stub) == FY_CACHELINE, "stub line");

/* Number of size rules rank 0 publishes (FY_XFER_RULES_MAX in xfer.h). */
#define FY_SHM_XFER_RULES 32

/* A shared CMA copy in progress towards this rank (see xfer/split.c). */
struct fy_split_ctl {
    alignas(FY_CACHELINE) _Atomic uint64_t claim; /* gen << 32 | next chunk */
    alignas(FY_CACHELINE) _Atomic uint64_t done;  /* chunks finished */
    _Atomic uint32_t err;                         /* errno of a failed chunk */
};
static_assert(sizeof(struct fy_split_ctl) == 2 * FY_CACHELINE, "two lines");

/* Written by its owner at attach unless noted. */
struct fy_shm_rank {
    alignas(FY_CACHELINE) int32_t pid;
    uint32_t xfer_ok;     /* bit 1<<enum fy_xfer_kind: mechanisms that
                           * worked for this rank (one-sided ones
                           * against its probe peer), before the
                           * probe barrier */
    uint64_t probe_addr;  /* address of a word others may read */
    uint64_t probe_value; /* what that word holds */
    uint64_t net_key;     /* a connecting peer must present it (net) */
    uint32_t net_port;    /* loopback port listening for peers, 0 none */
    /* Rank 0's only: the rule table it asks for (enum fy_xfer_from, then
     * rules as in struct fy_xfer_rule); every rank adopts it after the
     * probe barrier, so the whole job agrees. */
    uint32_t xfer_from;
    uint32_t xfer_nrules;
    int32_t xfer_rule_kind[FY_SHM_XFER_RULES];
    uint64_t xfer_rule_min[FY_SHM_XFER_RULES];
    struct fy_cellq recvq; /* cells sent to this rank; many producers */
    struct fy_cellq freeq; /* this rank's free cells; receivers return */
    /* Waiting (see p2p wait): the owner sets 'sleeping' before it sleeps
     * on 'doorbell'; a sender that sees it set bumps and wakes. */
    alignas(FY_CACHELINE) _Atomic uint32_t doorbell;
    alignas(FY_CACHELINE) _Atomic uint32_t sleeping;
    alignas(FY_CACHELINE) _Atomic uint32_t finalized;
    struct fy_split_ctl split; /* owner resets; its senders help */
};
static_assert(offsetof(struct fy_shm_rank, recvq) % FY_CACHELINE == 0 &&
                  offsetof(struct fy_shm_rank, freeq) % FY_CACHELINE == 0 &&
                  offsetof(struct fy_shm_rank, doorbell) % FY_CACHELINE == 0 &&
                  offsetof(struct fy_shm_rank, split) % FY_CACHELINE == 0,
              "fields written by other ranks start their own lines");
static_assert(sizeof(struct fy_shm_rank) % FY_CACHELINE == 0,
              "rank records do not share lines");

/* One mailbox slot: the sequence number that publishes it sits in the same
 * cache line as the payload, so a small message is one line transfer. A
 * longer message continues in the following slots of the ring; those keep
 * seq 0 (never a valid sequence number) and carry FY_FBOX_CONT bytes. */
#define FY_FBOX_PAYLOAD 48
#define FY_FBOX_CONT 56
#define FY_FBOX_SLOTS 32
struct fy_fbox_slot {
    alignas(FY_CACHELINE) _Atomic uint64_t seq; /* pair sequence number */
    int32_t tag;
    uint16_t ctx_type; /* context (low 12 bits) | packet type << 12 */
    uint16_t len;      /* payload bytes, this slot and its continuations */
    uint8_t data[FY_FBOX_PAYLOAD];
};
static_assert(sizeof(struct fy_fbox_slot) == FY_CACHELINE, "slot is one line");
static_assert(offsetof(struct fy_fbox_slot, data) + FY_FBOX_PAYLOAD ==
                  FY_CACHELINE,
              "first-slot payload fills the line");

/* Slots a payload of len bytes occupies. */
static inline uint32_t fy_fbox_nslots(uint64_t len)
{
    return len <= FY_FBOX_PAYLOAD
               ? 1u
               : 1u + (uint32_t)((len - FY_FBOX_PAYLOAD + FY_FBOX_CONT - 1) /
                                 FY_FBOX_CONT);
}
/* Largest payload a ring of n slots can carry in one message. */
#define FY_FBOX_MAX_LEN(n) (FY_FBOX_PAYLOAD + ((n)-1) * FY_FBOX_CONT)

/* Receiver-owned counter of consumed slots of one sender's ring. */
struct fy_fbox_ack {
    alignas(FY_CACHELINE) _Atomic uint64_t consumed;
};
static_assert(sizeof(struct fy_fbox_ack) == FY_CACHELINE, "one line");

/* Header of a queue cell; the payload starts at the next cache line. */
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
static_assert(sizeof(struct fy_cell) <= FY_CELL_HDR, "cell header fits");

static_assert(offsetof(struct fy_cell, q) == 0, "link first");

/* Control line of one half of a double-buffer pad. */
struct fy_shmbuf_ctl {
    alignas(FY_CACHELINE) _Atomic uint32_t full; /* 1: sender filled it */
    uint32_t pad;
    uint64_t len;    /* bytes in this half; checked by the receiver */
    uint64_t cookie; /* the receive it is for; checked by the receiver */
};
static_assert(sizeof(struct fy_shmbuf_ctl) == FY_CACHELINE, "one line");
static_assert(offsetof(struct fy_shmbuf_ctl, len) == 8, "len after flag");

/* Bytes of each rank's collective area (src/coll/shm.c lays it out and
 * static_asserts that its struct fits). */
#define FY_SHM_COLL_BYTES (2u * (32768u + 128u))

/* Double-buffer pads each receiver owns (FERRY_SHMBUF_PADS bounds it). */
#define FY_SHMBUF_PADS_MAX 64

/* Where everything is, computed from struct fy_shm_params by every rank
 * for itself. Rank 0 also writes a copy into the header, which the others
 * compare with their own computation at attach and then never read. */
struct fy_shm_layout {
    uint32_t nranks;
    uint32_t fbox_slots;
    uint32_t cell_size;
    uint32_t ncells;
    uint64_t shmbuf_size;
    uint32_t npads;
    uint32_t pad0;
    uint64_t off_ranks, off_fbox, off_fack, off_cells, off_pads, off_coll;
    uint64_t cells_len; /* bytes of the cells region */
    uint64_t pad_len;   /* bytes of one pad: 2 control lines + 2 halves */
    uint64_t total;
};

struct fy_shm_hdr {
    uint64_t magic;
    uint32_t version;
    _Atomic uint32_t state; /* 0 fresh, 1 being laid out, 2 ready */
    struct fy_shm_layout lay;
    alignas(FY_CACHELINE) _Atomic uint32_t attached;  /* init barrier */
    alignas(FY_CACHELINE) _Atomic uint32_t probed;    /* CMA probe barrier */
    alignas(FY_CACHELINE) _Atomic uint32_t fin_count; /* finalize barrier */
};
static_assert(offsetof(struct fy_shm_hdr, lay) == 16, "layout after magic");
static_assert(offsetof(struct fy_shm_hdr, attached) % FY_CACHELINE == 0 &&
                  offsetof(struct fy_shm_hdr, probed) % FY_CACHELINE == 0 &&
                  offsetof(struct fy_shm_hdr, fin_count) % FY_CACHELINE == 0,
              "each barrier counter has its own line");

/* Process-private view of the segment. */
struct fy_shm {
    uint8_t *base;
    uint64_t size;
    struct fy_shm_hdr *hdr;
    struct fy_shm_rank *ranks;
    struct fy_shm_layout lay; /* private copy: the only one ever read */
    int32_t *pid;             /* peers' pids, copied after the barrier */
    int fd;
};

extern struct fy_shm fy_shm;

/* Layout parameters every rank must agree on (rank 0's win). */
struct fy_shm_params {
    uint32_t nranks, fbox_slots, cell_size, ncells;
    uint64_t shmbuf_size;
    uint32_t npads;
};

/* The layout for these parameters (pure; also for tools that report the
 * segment size for a rank count). */
void fy_shm_layout_compute(struct fy_shm_layout *out,
                           const struct fy_shm_params *p);

/* Attach to (rank 0: create the layout of) the segment behind fd. Returns
 * 0 or a negative errno after logging why. */
int fy_shm_attach(int fd, int rank, const struct fy_shm_params *want);
void fy_shm_detach(void);

/* Wait until 'counter' reaches 'target', yielding: used only at start-up
 * and shut-down, where latency does not matter. */
void fy_shm_barrier_wait(_Atomic uint32_t *counter, uint32_t target);

/* Copy every rank's pid into private memory (after the attach barrier,
 * once each rank wrote its own). Returns 0 or -ENOMEM / -EPROTO (a pid
 * that cannot be one, logged). */
int fy_shm_pids_snapshot(void);

static inline void *fy_shm_ptr(uint64_t off)
{
    return fy_shm.base + off;
}
static inline uint64_t fy_shm_off(const void *p)
{
    return (uint64_t)((const uint8_t *)p - fy_shm.base);
}

static inline struct fy_fbox_slot *fy_fbox_ring(int receiver, int sender)
{
    const struct fy_shm_layout *l = &fy_shm.lay;
    return (struct fy_fbox_slot *)(fy_shm.base + l->off_fbox +
                                   ((uint64_t)receiver * l->nranks +
                                    (uint64_t)sender) *
                                       l->fbox_slots *
                                       sizeof(struct fy_fbox_slot));
}

static inline struct fy_fbox_ack *fy_fbox_ack(int receiver, int sender)
{
    const struct fy_shm_layout *l = &fy_shm.lay;
    return (struct fy_fbox_ack *)(fy_shm.base + l->off_fack) +
           (uint64_t)receiver * l->nranks + (uint64_t)sender;
}

static inline uint64_t fy_cells_base(int owner)
{
    const struct fy_shm_layout *l = &fy_shm.lay;
    return l->off_cells + (uint64_t)owner * l->ncells * l->cell_size;
}

/* The owner of a cell offset, or -1 when 'off' is not the start of a cell
 * (a corrupted link or a malformed peer). */
static inline int fy_cell_owner(uint64_t off)
{
    const struct fy_shm_layout *l = &fy_shm.lay;
    uint64_t rel = off - l->off_cells;
    if (off < l->off_cells || rel >= l->cells_len || rel % l->cell_size)
        return -1;
    return (int)(rel / ((uint64_t)l->ncells * l->cell_size));
}

/* Pad 'pad' of receiver's double buffers: two control lines followed by
 * two halves of shmbuf_size bytes. */
static inline uint8_t *fy_shmbuf_pad(int receiver, uint32_t pad)
{
    const struct fy_shm_layout *l = &fy_shm.lay;
    return fy_shm.base + l->off_pads +
           ((uint64_t)receiver * l->npads + pad) * l->pad_len;
}

#endif /* FY_SHM_H */
