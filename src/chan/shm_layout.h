/* SPDX-License-Identifier: MIT */
/* What the shared-memory channel keeps in the node's segment: its regions,
 * the structs that live there and who writes each field. The fast paths
 * over them are shm_inl.h; the cell queues the channel also uses are
 * shm/cellq_inl.h (shared with xfer's cell-queue mechanism).
 *
 * Regions (declared by fy_chan_shm_declare, found by fy_chan_init):
 * - "fbox": per ordered pair [receiver][sender], a ring of 'slots'
 *   mailbox slots (struct fy_fbox_slot). Only the sender writes them.
 * - "fack": per ordered pair [receiver][sender], the count of that ring's
 *   slots the receiver consumed (struct fy_fbox_ack). Only the receiver
 *   writes it.
 * - "doorbell": per local rank, the words a sleeping rank waits on
 *   (struct fy_chan_bell). */
#ifndef FY_CHAN_SHM_LAYOUT_H
#define FY_CHAN_SHM_LAYOUT_H

#include "shm/shm.h"

/* One mailbox slot: the sequence number that publishes it sits in the same
 * cache line as the payload, so a small message is one line transfer. A
 * longer message continues in the following slots of the ring; those keep
 * seq 0 (never a valid sequence number) and carry FY_FBOX_CONT bytes from
 * offset 8. Every field is written by the ring's sender only, seq last
 * (R6 in shm_inl.h). */
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
static_assert(offsetof(struct fy_fbox_slot, tag) == 8 &&
                  offsetof(struct fy_fbox_slot, ctx_type) == 12 &&
                  offsetof(struct fy_fbox_slot, len) == 14 &&
                  offsetof(struct fy_fbox_slot, data) == 16,
              "header after seq");
static_assert(offsetof(struct fy_fbox_slot, data) + FY_FBOX_PAYLOAD ==
                  FY_CACHELINE,
              "first-slot payload fills the line");
static_assert(sizeof(uint64_t) + FY_FBOX_CONT == FY_CACHELINE,
              "a continuation fills the line after seq");

/* What the channel's packets mean beyond the slot's layout, in the
 * mailbox region's signature, so that builds that read them differently
 * refuse each other at attach: 2 since OFFER and SPLIT carry a check
 * word after their control fields (chan/shm.c, steers_write). */
#define FY_CHAN_WIRE_REV 2u

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

/* Count of one sender's ring slots the receiver consumed: written by the
 * receiver only (R5), read by the sender (A5). A line of its own, apart
 * from the ring the sender writes. */
struct fy_fbox_ack {
    alignas(FY_CACHELINE) _Atomic uint64_t consumed;
};
static_assert(sizeof(struct fy_fbox_ack) == FY_CACHELINE, "one line");

/* Waiting (see chan/shm.c): each of the owner's threads about to sleep on
 * 'doorbell' counts itself in 'sleeping' (F2); a sender that sees it
 * non-zero bumps the doorbell and wakes them all (F1). */
/* Added to 'sleeping' by a thread that sleeps in the network channel's
 * epoll (poked through its pipe); futex sleepers count in the low bits. */
#define FY_SLEEP_NET 0x10000u
struct fy_chan_bell {
    /* Senders bump it; the owner only reads it and futex-waits on it. */
    alignas(FY_CACHELINE) _Atomic uint32_t doorbell;
    /* Senders set it (sticky) when they could not open the owner's wake
     * pipe: the owner then bounds its sleeps in epoll by 1 ms. */
    _Atomic uint32_t nopoke;
    /* The owner only; senders read it. 0 awake, 1 asleep on the futex,
     * 2 asleep in the network channel's epoll (wake it by its pipe). */
    alignas(FY_CACHELINE) _Atomic uint32_t sleeping;
    /* The owner, before the attach barrier: its wake pipe's write end
     * plus one (0: none), opened by senders through /proc/<pid>/fd. */
    _Atomic uint32_t wake_fd;
    /* The receive the owner is blocked in (p2p/p2p.c, "receive hints"):
     * from local rank src1 - 1 (0: none; bit 31: the owner is in a
     * blocking send to that rank, the receive posted) on context ctx with
     * tag 'tag' (MPI_ANY_TAG included), waited for when 'seen' of that
     * rank's messages had arrived. The owner writes it under the seqlock 'ver'
     * (odd while the fields change); senders only read it, and use it only
     * to choose between two correct protocols. */
    alignas(FY_CACHELINE) _Atomic uint32_t ver;
    _Atomic uint32_t src1;
    _Atomic uint32_t ctx;
    _Atomic int32_t tag;
    _Atomic uint32_t seen;
    /* The owner only, outside the seqlock: local rank + 1 whose large
     * message the owner is reading or has queued a read of, or expects
     * (it sent that rank a message with a receive from it posted); 0:
     * none. That rank then does not ask the owner to share a copy, and
     * reads the owner's message after its own send (proto/rndv.c). A
     * choice between two correct orders, never trusted for more. */
    _Atomic uint32_t reading1;
};
static_assert(sizeof(struct fy_chan_bell) == 3 * FY_CACHELINE &&
                  offsetof(struct fy_chan_bell, sleeping) == FY_CACHELINE &&
                  offsetof(struct fy_chan_bell, ver) == 2 * FY_CACHELINE,
              "doorbell and sleeping are written by different ranks; the "
              "hint, read by senders of large messages only, apart");

#define FY_CHAN_FBOX_REGION "fbox"
#define FY_CHAN_FACK_REGION "fack"
#define FY_CHAN_BELL_REGION "doorbell"

/* Declare the channel's regions with rings of 'slots' slots (2 to
 * FY_FBOX_SLOTS). Returns 0 or the allocator's negative errno. */
int fy_chan_shm_declare(struct fy_shm_layout *lay, uint32_t slots);

#endif /* FY_CHAN_SHM_LAYOUT_H */
