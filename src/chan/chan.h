/* SPDX-License-Identifier: MIT */
/* Packet channels: how a header and a small payload travel to a peer,
 * under matching and above the shared segment. A channel is an ops table
 * (send a packet to a peer, poll for what arrived, say whether anything is
 * waiting); every packet from one sender to one receiver carries the
 * pair's sequence number, and the receiver hands them up strictly in that
 * order, so MPI's non-overtaking rule holds whatever lane each took.
 *
 * Today: the shared-memory channel (chan/shm.c), with two lanes - a
 * per-pair mailbox ring for packets up to a few hundred bytes and the
 * per-receiver cell queues for the rest - that share the pair sequence. A
 * network channel for peers on other nodes plugs in as a second table
 * (fy_chan.of[peer]). Requests, matching and protocols are not known here:
 * packets go up through the deliver function given to fy_chan_init. */
#ifndef FY_CHAN_H
#define FY_CHAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "boot/boot.h"
#include "chan/shm_layout.h"

/* Packet types. Values travel in 4 bits of a mailbox slot. */
enum fy_pkt_type {
    FY_PKT_EAGER = 1,  /* whole message in the packet */
    FY_PKT_EAGER_SYNC, /* same, and the sender waits for FIN (Ssend) */
    FY_PKT_RTS,        /* large message: size, address, sender cookie */
    FY_PKT_CTS,        /* receiver matched an RTS; pipelined path go */
    FY_PKT_DATA,       /* pipelined chunk through queue cells */
    FY_PKT_FIN,        /* receiver is done with the sender's buffer */
    FY_PKT_SPLIT,      /* receiver: help copy chunks of a CMA transfer */
    FY_PKT_PUSH,       /* Push-Pull: envelope and the first pushed bytes */
    FY_PKT_PUSH_DATA,  /* Push-Pull: more pushed bytes of that message */
    FY_PKT_OFFER,      /* write protocol: receiver offers its buffer */
    FY_PKT_WDONE,      /* write protocol: sender wrote a message into it */
    FY_PKT_REVOKE,     /* write protocol: receiver withdraws an offer */
    FY_PKT_REVOKED,    /* write protocol: the sender will not use it */
    FY_PKT_WSPLIT,     /* write protocol: help copy chunks of the write */
    FY_PKT_CANCEL,     /* send cancellation: ask, and the answer (ctl.offset
                        * is enum fy_cancel_what; p2p/cancel.c) */
    FY_PKT_MAX
};
/* What a CANCEL packet says (its ctl.offset). */
enum fy_cancel_what { FY_CANCEL_ASK, FY_CANCEL_NO, FY_CANCEL_YES };
static_assert(FY_PKT_MAX <= 16, "packet type fits 4 bits of ctx_type");

/* Whether packets of this type carry a payload besides their control
 * fields (those always travel in a cell, except small EAGER ones). */
static inline bool fy_pkt_has_payload(uint32_t type)
{
    return type == FY_PKT_EAGER || type == FY_PKT_EAGER_SYNC ||
           type == FY_PKT_DATA || type == FY_PKT_PUSH ||
           type == FY_PKT_PUSH_DATA;
}

/* Control fields of RTS/CTS/FIN/EAGER_SYNC/SPLIT/PUSH/OFFER... packets. */
struct fy_ctl {
    uint64_t total;
    uint64_t addr;
    uint64_t cookie;
    uint64_t offset;
};

/* Which lane of a channel a packet took (for the protocol counters). */
enum fy_chan_lane {
    FY_LANE_MAILBOX,
    FY_LANE_CELLS,
    FY_LANE_NET, /* a network channel's stream */
};

/* An incoming packet, wherever it sits. 'data' points into the channel's
 * memory (or a private copy) and is valid only during the deliver call. */
struct fy_pkt {
    int src; /* world rank */
    uint32_t type;
    int32_t tag;
    uint32_t ctx;
    const uint8_t *data; /* payload in place */
    uint64_t len;
    struct fy_ctl ctl;
    /* OFFER through a network channel with RMA writes: the remote key of
     * the offered buffer, registered by the receiver's channel (0: it
     * could not be, the offer cannot be written into). 0 otherwise. */
    uint64_t key;
    uint8_t lane; /* enum fy_chan_lane */
};

struct fy_chan_counts;

/* One channel. */
struct fy_chan_ops {
    const char *name;
    /* Send one packet to world rank 'peer' now if the channel has room
     * (payload 'data' of 'len' bytes; 'ctl' may be NULL for EAGER).
     * Returns false when it has none: the caller keeps the packet and
     * tries again after a progress pass. Never blocks. */
    bool (*try_send)(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                     const struct fy_ctl *ctl, const void *data, uint64_t len);
    /* Hand every packet that is due (in pair order) to the deliver
     * function. Returns how many. */
    int (*poll)(void);
    /* Whether poll() would find something, without taking it. */
    bool (*visible)(void);
    /* Network channels only (NULL in the shared-memory one): */
    /* Whether try_send to 'peer' would take a packet now. */
    bool (*writable)(int peer);
    /* Sleep until a socket is ready or a rank of this node rings our
     * doorbell, unless 'more_work' or something is visible already. */
    void (*sleep)(bool (*more_work)(void));
    /* Shutdown: bye() says goodbye to every rank of other nodes (after our
     * last packet to each); quiet() is true once every one of them said
     * it to us and everything we queued is written. */
    void (*bye)(void);
    bool (*quiet)(void);
    /* Wake local rank 'local', asleep in this channel's sleep(). */
    void (*poke)(int local);
    /* Optional (NULL: none): one-sided read of bytes [off, off + len) of
     * the buffer a peer announced in an RTS whose ctl.offset, set by this
     * channel, is a nonzero key (0: no read, answer CTS). Waits; returns
     * len or a negative errno (logged). */
    ssize_t (*read)(int peer, uint8_t *dest, uint64_t addr, uint64_t key,
                    uint64_t off, uint64_t len);
    /* Optional (NULL: none): the receiver-initiated write protocol as an
     * RDMA write (proto/write.c). offers() says whether the channel
     * carries offers now. An OFFER sent through it has its buffer
     * [ctl.addr, + ctl.total) registered for the peer's remote writes by
     * the channel, which hands the key up with the packet on the other side
     * (fy_pkt.key, ctl.addr made what offsets add to) and holds the
     * registration until offer_end(peer, cookie) names the OFFER's cookie.
     * write() puts len bytes from src at bytes [off, off + len) of an
     * offered buffer (addr, key as delivered) and waits until they are
     * placed ahead of any packet sent to that peer after it returns.
     * Returns len or a negative errno (logged). */
    bool (*offers)(void);
    ssize_t (*write)(int peer, const uint8_t *src, uint64_t addr, uint64_t key,
                     uint64_t off, uint64_t len);
    void (*offer_end)(int peer, uint64_t cookie);
    /* Optional (NULL: none): hold small packets back while on, write them
     * together when taken off (nested; fy_chan_cork). */
    void (*cork)(bool on);
    /* Messages handed up by this channel (FERRY_STATS). */
    struct fy_chan_counts *counts;
    /* Largest payload of one DATA packet (rendezvous streaming). */
    uint64_t chunk;
    /* Largest payload of one PUSH_DATA packet (0: a cell's payload): the
     * piece size at which pushing over this channel runs fastest (TCP
     * reads such pieces straight into a posted receive). */
    uint64_t push_chunk;
};

extern const struct fy_chan_ops fy_chan_shm_ops;
extern const struct fy_chan_ops fy_chan_tcp_ops;
extern const struct fy_chan_ops fy_chan_ofi_ops;

/* Per channel: packets that opened a message (eager, RTS, PUSH) handed
 * up, and their message bytes (for FERRY_STATS). */
struct fy_chan_counts {
    uint64_t msgs, bytes;
};
extern struct fy_chan_counts fy_chan_tcp_counts;
extern struct fy_chan_counts fy_chan_ofi_counts;

/* A network channel counts each message once as it hands p up: at its
 * first packet (EAGER: the payload; RTS, PUSH: the whole message), or at
 * the WDONE of one written into our offered buffer (the bytes written). */
static inline void fy_chan_count(struct fy_chan_counts *c,
                                 const struct fy_pkt *p)
{
    switch (p->type) {
    case FY_PKT_EAGER:
    case FY_PKT_EAGER_SYNC:
        c->bytes += p->len;
        break;
    case FY_PKT_RTS:
    case FY_PKT_PUSH:
        c->bytes += p->ctl.total;
        break;
    case FY_PKT_WDONE:
        c->bytes += p->ctl.offset;
        break;
    default:
        return;
    }
    c->msgs++;
}

/* Per world peer: the pair sequence and the shared channel's cursors. */
struct fy_chan_peer {
    uint64_t sseq;     /* last pair sequence number sent to it */
    uint64_t rseq;     /* next pair sequence number expected from it */
    uint64_t fb_sent;  /* slots written into its ring for us */
    uint64_t fb_acked; /* cached copy of its consumed count */
    uint64_t fb_next;  /* slots of our ring for it consumed */
    struct fy_fbox_slot *ring_out; /* the peer's ring of slots from us */
    struct fy_fbox_slot *ring_in;  /* our ring of slots from the peer */
    struct fy_fbox_ack *ack_out;   /* peer's count of our slots consumed */
    struct fy_fbox_ack *ack_in;    /* our count of its slots consumed */
};

typedef void fy_chan_deliver_fn(const struct fy_pkt *p);
/* Where the payload of the DATA or PUSH_DATA packet p (header fields
 * only, p->data NULL) belongs when the layers above can say so now: a network
 * channel then reads it from the socket straight to that place, and hands the
 * packet up with p->data pointing there. NULL: no such place (the packet
 * takes the normal way and is checked there). */
typedef uint8_t *fy_chan_steer_fn(const struct fy_pkt *p);

struct fy_cellq; /* shm/cellq_inl.h */

struct fy_chan_state {
    int me, P;         /* world rank and size */
    int local_me;      /* our index in the node's segment */
    bool wake_peers;   /* peers may sleep on their doorbells: wake them */
    uint32_t slots;    /* mailbox ring length */
    uint32_t fbox_max; /* largest payload we put in a mailbox */
    uint32_t fbox_cap; /* largest a peer may put there (bounds check) */
    uint64_t cell_payload;
    struct fy_chan_bell *bells;    /* [local rank]: the "doorbell" region */
    struct fy_cellq *recvq;        /* our receive queue */
    struct fy_cellq *freeq;        /* our free-cell queue */
    uint64_t recv_tail;            /* consumer cursor of recvq */
    uint64_t free_tail;            /* consumer cursor of freeq */
    struct fy_chan_peer *peers;    /* [P] */
    const struct fy_chan_ops **of; /* [P]: the channel to each peer */
    const struct fy_chan_ops *net; /* to other nodes, NULL: one node */
    fy_chan_deliver_fn *deliver;
    fy_chan_steer_fn *steer; /* optional, set by the layer above */
    /* Sleeps on our doorbell; those its safety timeout ended rather than
     * a peer's wake-up (a peer kept us waiting that long, or a wake-up
     * was lost); and of those, the ones that found on waking what they
     * waited for already there, as far as the channels and the waiter's
     * own condition show: lost wake-ups (whoever made it hold should
     * have rung us; a lower bound, since a wait whose condition went
     * unregistered cannot tell). FERRY_STATS, MPI_T. Counted with atomic
     * adds (under MPI_THREAD_MULTIPLE several threads may sleep). */
    uint64_t sleeps, sleep_timeouts, lost_wakeups;
};

extern struct fy_chan_state fy_chan;

/* The segment index (local rank) of world rank 'world' on this node. */
static inline int fy_chan_local(int world)
{
    return fy_boot_local(world);
}

/* Bring the channels up once the segment is attached (before the attach
 * barrier: the free cells are pushed here): take the regions' addresses
 * from this process's layout (fy_cellq_attach included). fbox_max: largest
 * payload put in a mailbox; wake_peers: whether ranks may sleep. Returns 0,
 * -ENOMEM, -ENOTSUP (a peer on another node) or -EPROTO (a region
 * missing). */
int fy_chan_init(fy_chan_deliver_fn *deliver, uint32_t fbox_max,
                 bool wake_peers);
void fy_chan_finalize(void);

/* Send through the peer's channel; see fy_chan_ops.try_send. */
static inline bool fy_chan_try_send(int peer, uint32_t type, int32_t tag,
                                    uint32_t ctx, const struct fy_ctl *ctl,
                                    const void *data, uint64_t len)
{
    return fy_chan.of[peer]->try_send(peer, type, tag, ctx, ctl, data, len);
}

/* Whether world rank 'peer' is reached through the network channel. */
static inline bool fy_chan_remote(int peer)
{
    return fy_chan.of[peer] != &fy_chan_shm_ops;
}

/* Hold small packets to other nodes back from here to the matching
 * fy_chan_cork(false), which writes them together (fy_chan_ops.cork). */
static inline void fy_chan_cork(bool on)
{
    if (fy_chan.net && fy_chan.net->cork)
        fy_chan.net->cork(on);
}

/* The network channel's half of fy_chan_init/finalize (chan/tcp.c):
 * listen, publish our address through the bootstrap's key-value exchange
 * and fence, create the wake pipe whose number goes in our doorbell.
 * 0 or a negative errno (logged). */
int fy_chan_tcp_init(void);
void fy_chan_tcp_finalize(void);
/* Wake local rank 'local', asleep in its network channel's sleep(),
 * through its wake pipe (chan/tcp.c). */
/* Write a byte into local rank local's wake pipe (network channels' poke;
 * pokefd caches the opened fds, -1 for not yet). */
void fy_chan_poke_pipe(int *pokefd, int local);
void fy_chan_tcp_poke(int local);

/* The libfabric channel's (chan/ofi.c, FERRY_NET=ofi): the same, with
 * the endpoint's name published instead of a listener's address. */
int fy_chan_ofi_init(void);
void fy_chan_ofi_finalize(void);
void fy_chan_ofi_poke(int local);
/* For ferry-info: whether the ofi channel could start here. 0 with the
 * provider it would use in prov_out, or a negative errno with the reason
 * in why. Loads libfabric if it is not loaded. */
int fy_chan_ofi_probe(char *prov_out, size_t plen, char *why, size_t wlen);

/* Poll every channel; returns the packets handed up. */
int fy_chan_poll(void);
/* Whether any channel has something due. */
bool fy_chan_visible(void);

/* Sleep until a peer rings our doorbell, unless 'more_work' (the layers
 * above: pipelined transfers) or a channel already has something. A
 * timeout bounds the sleep as a safety net only. */
void fy_chan_sleep(bool (*more_work)(void));
/* The same with a timeout of timeout_ns (the one-sided progress thread,
 * whose origins ring it explicitly; sockets keep their own timeout). */
void fy_chan_sleep_for(bool (*more_work)(void), long timeout_ns);

/* Wake world rank 'peer' if it may be asleep (only when ranks can sleep). */
void fy_wake_slow(int peer);
static inline void fy_wake(int peer)
{
    if (FY_UNLIKELY(fy_chan.wake_peers))
        fy_wake_slow(peer);
}

/* The receive hint of this rank's doorbell (struct fy_chan_bell): blocked
 * in a receive from local rank src_local on context ctx with tag 'tag'
 * (flags FY_HINT_IN_SEND: in a blocking send to that rank, the receive
 * posted), 'seen' messages of that rank having arrived; src_local -1:
 * none. One writer, this rank (one thread: callers skip it under
 * MPI_THREAD_MULTIPLE). */
#define FY_HINT_IN_SEND 0x80000000u
static inline void fy_chan_hint_set(int src_local, uint32_t flags, uint32_t ctx,
                                    int tag, uint32_t seen)
{
    struct fy_chan_bell *b = &fy_chan.bells[fy_chan.local_me];
    uint32_t v = atomic_load_explicit(&b->ver, memory_order_relaxed);
    atomic_store_explicit(&b->ver, v + 1, memory_order_relaxed);
    /* Seqlock: the odd version is seen before any field changes. */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&b->src1, (uint32_t)(src_local + 1) | flags,
                          memory_order_relaxed);
    atomic_store_explicit(&b->ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&b->tag, tag, memory_order_relaxed);
    atomic_store_explicit(&b->seen, seen, memory_order_relaxed);
    atomic_store_explicit(&b->ver, v + 2, memory_order_release);
}

/* Whether local rank 'local' shows itself blocked in a receive from us on
 * context ctx that a message with tag 'tag' matches, with 'sent' of our
 * messages to it all arrived: 0 no (or any doubt: a hint being changed),
 * 1 waiting in that receive, 2 in a blocking send to us with that receive
 * posted. */
static inline int fy_chan_hint_waits_for_us(int local, uint32_t ctx, int tag,
                                            uint32_t sent)
{
    const struct fy_chan_bell *b = &fy_chan.bells[local];
    uint32_t v = atomic_load_explicit(&b->ver, memory_order_acquire);
    if (v & 1)
        return 0;
    uint32_t src1 = atomic_load_explicit(&b->src1, memory_order_relaxed);
    uint32_t hctx = atomic_load_explicit(&b->ctx, memory_order_relaxed);
    int32_t htag = atomic_load_explicit(&b->tag, memory_order_relaxed);
    uint32_t seen = atomic_load_explicit(&b->seen, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&b->ver, memory_order_relaxed) != v)
        return 0;
    if ((src1 & ~FY_HINT_IN_SEND) != (uint32_t)fy_chan.local_me + 1 ||
        hctx != ctx || (htag != tag && htag != -1 /* MPI_ANY_TAG */) ||
        seen != sent)
        return 0;
    return src1 & FY_HINT_IN_SEND ? 2 : 1;
}

/* Whether local rank 'local' shows itself in a blocking send to us with a
 * receive from us posted (any context, tag or count: for choosing when
 * to copy, never for whether a receive is there). */
static inline bool fy_chan_hint_in_send_to_us(int local)
{
    return atomic_load_explicit(&fy_chan.bells[local].src1,
                                memory_order_relaxed) ==
           (((uint32_t)fy_chan.local_me + 1) | FY_HINT_IN_SEND);
}

/* Say which local rank's large message we are reading (-1: none). */
static inline void fy_chan_reading_set(int src_local)
{
    atomic_store_explicit(&fy_chan.bells[fy_chan.local_me].reading1,
                          (uint32_t)(src_local + 1), memory_order_relaxed);
}

/* Whether local rank 'local' shows itself reading a large message of ours
 * (or about to: the read is queued). */
static inline bool fy_chan_reading_ours(int local)
{
    return atomic_load_explicit(&fy_chan.bells[local].reading1,
                                memory_order_relaxed) ==
           (uint32_t)fy_chan.local_me + 1;
}

/* Cells for movers that stream through the receiver's queue (xfer queue):
 * take a free cell of ours (0 if none); publish a filled one to 'peer'. */
uint64_t fy_cell_get(void);
void fy_cell_post(int peer, uint64_t off);

/* Report a packet that breaks the channel's rules and end the job. */
_Noreturn void fy_chan_bad_packet(int src, const char *what);

/* A peer's process is gone (its connection closed, its memory vanished):
 * wait for the launcher to end the job, so the job's status stays the
 * dead rank's; exit with an error if nobody does. */
_Noreturn void fy_chan_peer_gone(int src);

#endif /* FY_CHAN_H */
