/* SPDX-License-Identifier: MIT */
/* Internals shared by the point-to-point files: packet types, per-peer
 * state, matching queues, the rendezvous cookie table and wake-ups. */
#ifndef FY_P2P_IMPL_H
#define FY_P2P_IMPL_H

#include <stdatomic.h>

#include "p2p/p2p.h"
#include "shm/shm.h"
#include "xfer/xfer.h"

/* Packet types, in fastbox slots and cells alike. */
enum fy_pkt_type {
    FY_PKT_EAGER = 1,  /* whole message in the packet */
    FY_PKT_EAGER_SYNC, /* same, and the sender waits for FIN (Ssend) */
    FY_PKT_RTS,        /* large message: size, address, sender cookie */
    FY_PKT_CTS,        /* receiver matched an RTS; pipelined path go */
    FY_PKT_DATA,       /* pipelined chunk through queue cells */
    FY_PKT_FIN,        /* receiver is done with the sender's buffer */
    FY_PKT_SPLIT,      /* receiver: help copy chunks of a CMA transfer */
    FY_PKT_MAX
};

/* Control fields of RTS/CTS/FIN/EAGER_SYNC carried in a fastbox payload
 * (a cell has them in its header). */
struct fy_ctl {
    uint64_t total;
    uint64_t addr;
    uint64_t cookie;
    uint64_t offset;
};

/* An incoming packet, wherever it sits (fastbox slot or cell). */
struct fy_pkt {
    int src; /* world rank */
    uint32_t type;
    int32_t tag;
    uint32_t ctx;
    const uint8_t *data; /* payload in place */
    uint64_t len;
    struct fy_ctl ctl;
};

/* A packet that could not leave yet (no slot, no cell, or others ahead). */
struct fy_outpkt {
    struct fy_outpkt *next;
    uint32_t type;
    int32_t tag;
    uint32_t ctx;
    struct fy_ctl ctl;
    struct fy_req *req; /* EAGER*: the send whose data this is */
};

/* Precedes each message on a net stream: the receive it is for and its
 * length, which must be exactly what that receive's CTS asked for. */
struct fy_net_hdr {
    uint64_t cookie; /* the receiver's cookie (CTS offset field) */
    uint64_t len;
};

/* Process-local state for one peer (world rank). */
struct fy_peer {
    uint64_t sseq;     /* last pair sequence number sent to it */
    uint64_t rseq;     /* next pair sequence number expected from it */
    uint64_t fb_sent;  /* slots written into its ring for us */
    uint64_t fb_acked; /* cached copy of its consumed count */
    uint64_t fb_next;  /* slots of our ring for it consumed */
    struct fy_fbox_slot *ring_out; /* the peer's ring of slots from us */
    struct fy_fbox_slot *ring_in;  /* our ring of slots from the peer */
    struct fy_fbox_ack *ack_out;   /* peer's count of our slots consumed */
    struct fy_fbox_ack *ack_in;    /* our count of its slots consumed */
    struct fy_outpkt *out_head, *out_tail;
    /* Rendezvous sends to this peer that the receiver's CTS put on a
     * two-sided mechanism, one FIFO per kind (index enum fy_xfer_kind:
     * shmbuf, queue, net), in CTS arrival order. */
    struct fy_req *tx_head[FY_XFER_NKINDS], *tx_tail[FY_XFER_NKINDS];
    /* Receives from this peer waiting for shmbuf or net data, in the order
     * we sent CTS. Incoming data names its receive by cookie, so a CTS
     * that overtook another (control packets may) does no harm. */
    struct fy_req *rx_head[FY_XFER_NKINDS], *rx_tail[FY_XFER_NKINDS];
    /* net: our connection to the peer's listener (we send on it) and the
     * one it opened to ours (we receive on it); -1 until first use. */
    int net_out, net_in;
    uint32_t net_hello_sent; /* bytes of our hello written to net_out */
    uint32_t net_hdr_sent;   /* bytes of tx_head[NET]'s header written */
    uint32_t net_hdr_got;    /* bytes of the incoming header read */
    struct fy_net_hdr net_hdr_in;
    struct fy_req *net_rx_cur; /* receive the incoming stream is filling */
};

/* Unexpected message (arrived before its receive was posted). */
struct fy_unexp {
    struct fy_unexp *next, *prev;
    int src; /* world rank */
    uint32_t type;
    int32_t tag;
    uint32_t ctx;
    struct fy_ctl ctl;
    struct fy_req *self_sync; /* self-send Ssend waiting for the match */
    uint64_t len;             /* bytes in data[] */
    uint8_t data[];
};

/* Request protocol states (fy_req.proto). */
enum {
    FY_RP_NONE,
    FY_RP_RTS_SENT,  /* sender: waiting for FIN (one-sided) or CTS */
    FY_RP_TX,        /* sender: pushing through shmbuf/queue/net */
    FY_RP_RX,        /* receiver: CTS sent, data arriving */
    FY_RP_SYNC_WAIT, /* sender: eager-sync sent, waiting for FIN */
    FY_RP_DEFERRED,  /* sender: packet waits in the peer's out queue */
    FY_RP_PULL,      /* receiver: reading the sender's buffer piece by piece */
};

struct fy_p2p_state {
    int me, P;
    /* The mechanism of each rendezvous is picked per message from
     * fy_xfer_active (xfer.h) by the receiver; see rndv.c. */
    bool wait_block;    /* ranks may sleep on futexes: senders must wake */
    uint32_t slots;     /* fastbox ring length */
    uint32_t fbox_max;  /* largest payload we put in a mailbox */
    uint32_t fbox_cap;  /* largest a peer may put there (bounds check) */
    uint64_t split_min; /* CMA transfers from this size are shared; 0 off */
    uint64_t eager_max;
    uint64_t cell_payload;
    uint64_t shmbuf_size;
    long spin_limit;  /* polls before yielding (when ranks share cores) */
    long yield_limit; /* yields before sleeping on the doorbell */
    struct fy_peer *peers;
    struct fy_shm_rank *my;
    uint64_t recv_tail; /* consumer cursor of my receive queue */
    uint64_t free_tail; /* consumer cursor of my free-cell queue */
    /* Matching queues (posted receives, unexpected messages), in order. */
    struct fy_req *posted_head, *posted_tail;
    struct fy_unexp *unexp_head, *unexp_tail;
    /* Our double-buffer pads (shmbuf): a stack of free ones, and the
     * receives waiting for one, in match order (their CTS goes out when a
     * pad frees). */
    uint32_t *pad_free;
    uint32_t npad_free;
    struct fy_req *pad_wait_head, *pad_wait_tail;
    /* One-sided receives longer than one piece (FY_PULL_PIECE), read a
     * piece per progress pass so no copy holds other traffic for long. */
    struct fy_req *pull_head, *pull_tail;
    /* Work that needs progress besides polling. */
    int nout; /* peers with deferred packets */
    int ntx;  /* pipelined sends in flight */
    int nrx;  /* pipelined receives in flight */
};

extern struct fy_p2p_state fy_p2p;

/* Rendezvous cookies: index + generation, validated on every lookup so a
 * malformed peer header cannot steer us to a wrong request. */
uint64_t fy_cookie_new(struct fy_req *r);
struct fy_req *fy_cookie_find(uint64_t cookie, int kind);
void fy_cookie_drop(uint64_t cookie);

/* Wake 'peer' if it may be asleep (only when ranks can sleep). */
void fy_wake_slow(int peer);
static inline void fy_wake(int peer)
{
    if (FY_UNLIKELY(fy_p2p.wait_block))
        fy_wake_slow(peer);
}

/* Packets out: returns 0 (sent or queued) or -ENOMEM. */
int fy_pkt_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                const struct fy_ctl *ctl, struct fy_req *req);
/* Try to take a free cell of ours; 0 if none. */
uint64_t fy_cell_get(void);
/* Publish a filled cell to peer's receive queue. */
void fy_cell_post(int peer, uint64_t off);

/* Shared single copy (split.c): receiver side copies want bytes from the
 * sender's remote address into dest with the sender's help; returns want or
 * a negative errno. The sender side handles FY_PKT_SPLIT. */
ssize_t fy_split_get(int src, uint64_t sender_cookie, uint64_t remote,
                     void *dest, uint64_t want);
/* Pieces of a long one-sided receive: each is read (or split) in one go,
 * with a whole progress pass between two pieces. A multiple of 4 KiB; the
 * shared copy names a piece by its index (split.c). */
#define FY_PULL_PIECE ((uint64_t)4 << 20)
/* The same for piece 'piece' (offset piece * FY_PULL_PIECE of both
 * buffers; 'remote' and 'dest' are the buffers' starts). */
ssize_t fy_split_get_piece(int src, uint64_t sender_cookie, uint64_t remote,
                           uint8_t *dest, uint64_t piece, uint64_t len);
void fy_split_on_pkt(const struct fy_pkt *p);

/* Rendezvous (rndv.c). fy_rndv_init runs once every rank has published
 * its record (after the attach barrier): probes the mechanisms, opens the
 * net listener, waits at the probe barrier and installs rank 0's rule
 * table. Returns 0 or a negative errno after logging why. */
int fy_rndv_init(void);
void fy_rndv_finalize(void);
void fy_rndv_on_rts(struct fy_req *r, const struct fy_pkt *p);
void fy_rndv_on_cts(const struct fy_pkt *p);
void fy_rndv_on_data(const struct fy_pkt *p);
void fy_rndv_on_fin(const struct fy_pkt *p);
int fy_rndv_progress(void);
bool fy_rndv_work_visible(void);

/* Completing requests. */
void fy_req_complete(struct fy_req *r);
struct fy_req *fy_req_alloc(void);

static inline int fy_comm_rank_of(const struct fy_comm *c, int wrank)
{
    if (wrank < c->size && c->group->world[wrank] == wrank)
        return wrank;
    for (int i = 0; i < c->size; i++)
        if (c->group->world[i] == wrank)
            return i;
    return MPI_UNDEFINED;
}

/* Where a request's bytes are, packed: its staging copy when the datatype
 * is not contiguous, else the user's buffer. */
static inline uint8_t *fy_req_data(const struct fy_req *r)
{
    return (uint8_t *)(r->pack ? r->pack : r->buf);
}

/* Receive capacity of a request in bytes. */
static inline uint64_t fy_req_capacity(const struct fy_req *r)
{
    return (uint64_t)r->count * (uint64_t)r->dt->size;
}

/* Where received bytes go: the user buffer if contiguous, else r->pack. */
void fy_recv_finish(struct fy_req *r, uint64_t got, uint64_t total);

#endif /* FY_P2P_IMPL_H */
