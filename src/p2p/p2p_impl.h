/* SPDX-License-Identifier: MIT */
/* Internals shared by the point-to-point files: packet types, per-peer
 * state, matching queues, the rendezvous cookie table and wake-ups. */
#ifndef FY_P2P_IMPL_H
#define FY_P2P_IMPL_H

#include <stdatomic.h>

#include "chan/chan.h"
#include "p2p/p2p.h"
#include "shm/shm.h"
#include "xfer/shm_layout.h"
#include "xfer/xfer.h"

/* FERRY_RECV_WRITE_MIN's default is for a blocking receive, whose rank
 * waits for the message and helps its sender write it (a nonblocking send
 * then uses the offer too under auto: fy_proto_pick), and so is the
 * tuning file's (the laboratory measures blocking receives). An MPI_Irecv
 * below this size is offered only when FERRY_RECV_WRITE_MIN is set in the
 * environment or as a control variable: its rank is often busy elsewhere
 * (an exchange, where the offer goes stale at a cost of 0.1-0.2 us a
 * message at 64 KiB; bench/README.md, "The laboratory's interleaving"). */
#define FY_WRITE_NB_MIN ((uint64_t)256 << 10)

/* A packet that could not leave yet (no slot, no cell, or others ahead). */
struct fy_outpkt {
    struct fy_outpkt *next;
    uint32_t type;
    int32_t tag;
    uint32_t ctx;
    struct fy_ctl ctl;
    struct fy_req *req; /* EAGER*: the send whose data this is */
};

/* Process-local state for one peer (world rank) above the channel (whose
 * own per-peer state, the pair sequence included, is fy_chan.peers[]). */
/* fy_progress without the layers' hooks (collective schedules, one-sided
 * progress), which may start sends: the channels, deferred packets and
 * pipelined transfers only; nothing when called inside progress. For a
 * send that must not be overtaken by a later message of its own rank
 * while it works in pieces (the write protocol, write.c). */
int fy_progress_packets(void);

struct fy_peer {
    /* Packets the channel had no room for, in order. */
    struct fy_outpkt *out_head, *out_tail;
    /* Rendezvous sends to this peer that the receiver's CTS put on a
     * two-sided mechanism, one FIFO per kind (index enum fy_xfer_kind:
     * shmbuf, queue, net), in CTS arrival order. */
    struct fy_req *tx_head[FY_XFER_NKINDS], *tx_tail[FY_XFER_NKINDS];
    /* Receives from this peer waiting for shmbuf or net data, in the order
     * we sent CTS. Incoming data names its receive by cookie, so a CTS
     * that overtook another (control packets may) does no harm. */
    struct fy_req *rx_head[FY_XFER_NKINDS], *rx_tail[FY_XFER_NKINDS];
    /* net: the receive the peer's stream is filling (its connections and
     * stream state are xfer/net.c's). */
    struct fy_req *net_rx_cur;
    /* Message packets (EAGER*, RTS, PUSH) sent to / handed up from this
     * peer: an offer of the write protocol is valid only while the
     * sender's count equals the receiver's at offer time (write.c). */
    uint64_t msgs_sent, msgs_seen;
    /* auto's push of nonblocking sends (push.c): sends decided since
     * this peer's last message (msgs_seen was burst_seen then). */
    uint64_t burst_seen;
    uint32_t burst;
    /* Receive hints (push.c): replies to this peer that waited for its
     * hint in vain, in a row (from 2 on they no longer wait). */
    uint8_t hint_misses;
    /* Our rendezvous sends to this peer whose RTS left and whose FIN or
     * CTS has not come yet (fy_p2p_sender_busy looks at the peer's
     * doorbell only then). */
    uint32_t rts_out;
    /* Bytes of this peer's last large message to us that we read from
     * its buffer because our receive came late (0 once one was read for
     * a receive posted in time, or written into ours): auto lets a
     * nonblocking send write into its buffer only while both copies
     * together fit this core's cache (proto.c's copies_fit). */
    uint64_t read_in;
    /* Offers this peer made us (we are the sender), in posting order. */
    struct fy_offer *offer_head, *offer_tail;
    /* Push-Pull: the message whose pushed bytes are arriving from this
     * peer (push.c): into a matched receive or an unexpected entry. */
    bool push_active;
    uint64_t push_cookie, push_next, push_end;
    struct fy_req *push_req;
    struct fy_unexp *push_unexp;
};

/* An offer of the write protocol, held by the sender. */
struct fy_offer {
    struct fy_offer *next;
    int32_t tag; /* the receive's tag (may be MPI_ANY_TAG) */
    uint32_t ctx;
    uint32_t kind; /* one-sided mechanism the receiver allows, or
                    * FY_WRITE_NET: an RDMA write through the channel */
    uint64_t addr; /* receive buffer in the receiver's memory */
    uint64_t cap;  /* its size in bytes */
    uint64_t cookie;
    uint64_t key; /* FY_WRITE_NET: the buffer's remote key (0: none) */
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
    uint64_t msgno;           /* its number among the messages from src
                               * (fy_peer.msgs_seen when it came): what a
                               * CANCEL names (p2p/cancel.c) */
    uint64_t len;             /* bytes in data[] */
    uint64_t kept;            /* PUSH: room in data[] (0: pushed bytes are
                               * dropped and pulled again) */
    bool pushing;             /* PUSH: more pushed bytes are due */
    uint8_t pool;             /* p2p.c: 1 + its size class, 0: malloc'd */
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
     * fy_xfer_active (xfer.h) by the receiver; see proto/rndv.c. */
    bool wait_block; /* ranks may sleep on futexes: senders must wake */
    uint64_t eager_max;
    uint64_t shmbuf_size;
    long spin_limit; /* empty Test/Iprobe polls before yielding (when ranks
                      * share cores); with a core each, polls of a wait
                      * before it yields under MPI_THREAD_MULTIPLE */
    /* Yields before sleeping on the doorbell, when ranks outnumber cores
     * (they yield at the first empty poll then): 128, where 8 (after 20
     * polls) made ranks sleep that had to be rung and scheduled again
     * (4 ranks on 2 cores, interleaved: OSU 8 B Ialltoall 16.9 against
     * 22.4 us, a Bcast+Barrier loop 8.3 against 11.2; mixed traffic at 4
     * and 8 ranks 0.92-0.97x, the flood of two ranks into one 0.77-0.81x
     * over two sets of 15 and 21 rounds; bench/README "Waiting when ranks
     * outnumber cores"). */
    long yield_limit;
    struct fy_peer *peers;
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
    /* Protocol settings (proto/). */
    int proto_mode; /* enum fy_proto_mode */
    /* Receive hints: world rank + 1 of the peer whose message the last
     * blocking receive waited for with a hint (0: none since the last
     * blocking send); a blocking send to it soon after is likely a reply
     * (push.c). */
    uint32_t reply_to1;
    /* World rank + 1 of the peer this rank is in a blocking send to, with
     * a receive from it posted (an exchange from our side; 0: none). */
    uint32_t xchg_to1;
    uint64_t btp, btp1;     /* Push-Pull: bytes pushed, in the first packet */
    uint64_t auto_push_max; /* auto: blocking sends pushed whole up to */
    uint64_t net_push_max;  /* the same to ranks on other nodes */
    uint64_t push_max;      /* auto: blocking sends pushed whole up to, too */
    uint64_t push_cap;      /* auto: measure push_max up to (0: do not) */
    uint64_t push_buf;      /* pushed bytes kept for unexpected messages */
    uint64_t unexp_cache;   /* FERRY_UNEXP_CACHE: pooled entry bytes */
    uint64_t push_used;     /* of which in use */
    bool recv_write;        /* write protocol on */
    /* The receive fy_p2p_irecv just posted, while it drains what had
     * arrived before it (those messages count as unexpected). */
    struct fy_req *fresh_post;
    /* A receive is taking a message that arrived before it was posted
     * (set around the protocol's matched call: fy_peer.read_in). */
    bool matching_late;
    /* A one-sided read a receive matches now is queued for the progress
     * engine instead of done at once (rndv.c): FY_DEFER_ALL before a
     * large send goes out, FY_DEFER_WAITED inside MPI_Irecv (only when
     * the sender waits for a message of ours too). */
    uint8_t defer_pull;
    uint64_t write_min;    /* smallest buffer offered */
    uint64_t write_min_nb; /* the same for MPI_Irecv (fy_write_posted) */
    /* auto: a nonblocking send writes into a receive buffer only if
     * read_in + its bytes is below this (half this core's L2 cache;
     * proto.c's copies_fit). */
    uint64_t copy_pair_max;
    int nout; /* peers with deferred packets */
    int ntx;  /* pipelined sends in flight */
    int nrx;  /* pipelined receives in flight */
};

extern struct fy_p2p_state fy_p2p;
enum { FY_DEFER_NONE, FY_DEFER_ALL, FY_DEFER_WAITED };

/* Rendezvous cookies: index + generation, validated on every lookup so a
 * malformed peer header cannot steer us to a wrong request. */
uint64_t fy_cookie_new(struct fy_req *r);
struct fy_req *fy_cookie_find(uint64_t cookie, int kind);
void fy_cookie_drop(uint64_t cookie);

/* Packets out: returns 0 (sent or queued) or -ENOMEM. */
int fy_pkt_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                const struct fy_ctl *ctl, struct fy_req *req);

/* Rendezvous (proto/rndv.c). fy_rndv_init runs once every rank has published
 * its record (after the attach barrier): probes the mechanisms, opens the
 * net listener, waits at the probe barrier and installs rank 0's rule
 * table. Returns 0 or a negative errno after logging why. */
int fy_rndv_init(void);
void fy_rndv_finalize(void);
void fy_rndv_on_rts(struct fy_req *r, const struct fy_pkt *p);
void fy_rndv_on_cts(const struct fy_pkt *p);
void fy_rndv_on_data(const struct fy_pkt *p);
/* Where a DATA packet's payload belongs (fy_chan_steer_fn), or NULL. */
uint8_t *fy_rndv_steer(const struct fy_pkt *p);
void fy_rndv_on_fin(const struct fy_pkt *p);
/* Send r's receiver answered its RTS, PUSH or EAGER_SYNC for good (FIN, or
 * its message was cancelled): forget the cookie and the RTS owed. */
void fy_rndv_send_over(struct fy_req *r);
int fy_rndv_progress(void);
bool fy_rndv_work_visible(void);

/* Completing requests. */
void fy_req_complete(struct fy_req *r);
struct fy_req *fy_req_alloc(void);

/* Rank, as point-to-point names it (fy_comm_world_rank), of world rank
 * wrank: in the remote group for an intercommunicator. */
static inline int fy_comm_rank_of(const struct fy_comm *c, int wrank)
{
    const struct fy_group *g = c->p2p_group;
    if (wrank < g->size && g->world[wrank] == wrank)
        return wrank;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == wrank)
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

/* Matching services for the protocols (proto/). */
/* Take the oldest posted receive matching the envelope, or NULL. */
struct fy_req *fy_p2p_posted_take(int wsrc, int32_t tag, uint32_t ctx);
/* An unexpected entry for packet p with room for 'room' bytes, the first
 * 'len' of them copied from p's payload (out of memory is fatal). */
struct fy_unexp *fy_p2p_unexp_new(const struct fy_pkt *p, uint64_t room,
                                  uint64_t len);
/* An entry with room for 'room' bytes, not filled in but its pool field
 * (NULL when out of memory); fy_p2p_unexp_free gives it back. */
struct fy_unexp *fy_p2p_unexp_alloc(uint64_t room);
void fy_p2p_unexp_free(struct fy_unexp *u);
/* Queue a message no receive matched yet (takes ownership of u); it is
 * the latest message handed up from u->src (u->msgno is set here). */
void fy_p2p_unexp_append(struct fy_unexp *u);
/* Take u off the unexpected queue (the caller owns it then). */
void fy_p2p_unexp_unlink(struct fy_unexp *u);
/* A CANCEL packet (p2p/cancel.c). */
void fy_p2p_on_cancel(const struct fy_pkt *p);
/* Copy a whole message of 'len' bytes into matched receive r, set its
 * status (truncation included) and complete it. */
void fy_p2p_deliver_bytes(struct fy_req *r, int wsrc, int32_t tag,
                          const void *data, uint64_t len);
/* Tell 'peer' its synchronous send 'cookie' was matched. */
void fy_p2p_send_fin(int peer, uint64_t cookie);
/* Take a posted receive off the posted list (it matched by other means). */
void fy_p2p_posted_unlink(struct fy_req *r);
/* Whether posted receive r would match the envelope (wsrc, tag, ctx). */
bool fy_p2p_envelope_match(const struct fy_req *r, int wsrc, int32_t tag,
                           uint32_t ctx);

#endif /* FY_P2P_IMPL_H */
