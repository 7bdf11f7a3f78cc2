/* SPDX-License-Identifier: MIT */
/* Message protocols: how a message travels, as one table indexed by enum
 * fy_proto (fy_protos[]): the sender picks the entry for each message
 * (fy_proto_pick), starts it with the entry's send, and the message's
 * first packet names the entry the receiver runs when a receive matches
 * it. A new protocol (Push-Pull, the receiver-initiated write) is a new
 * entry and a new file here, not surgery in p2p.
 *
 * Per-rank counters (the seed-002 Table 2 figures): the receiver counts
 * each message once, when it is delivered, under the way it travelled
 * (enum fy_proto_stat: eager through the mailbox or a cell, rendezvous
 * get or put); rendezvous messages are also counted under the mechanism
 * that moved their bytes. FERRY_STATS=1 prints them at MPI_Finalize. Not
 * thread safe (one thread per process drives p2p). */
#ifndef FY_PROTO_H
#define FY_PROTO_H

#include <stdint.h>
#include <sys/types.h>

#include "chan/chan.h"
#include "xfer/xfer.h"

struct fy_req;
struct fy_unexp;

/* The table. */
enum fy_proto {
    FY_PROTO_SELF,  /* a rank to itself: matched or queued at once */
    FY_PROTO_EAGER, /* whole message in one packet (EAGER, EAGER_SYNC) */
    FY_PROTO_RNDV,  /* RTS; the receiver gets the bytes or the sender puts
                     * them after CTS, by the mechanism table (rndv.c) */
    FY_PROTO_PUSH,  /* Push-Pull (seed 001): PUSH with the first BTP bytes,
                     * the receiver pulls the rest (push.c) */
    FY_PROTO_WRITE, /* receiver-initiated write (seed 002): the receiver
                     * offered its buffer; we write into it (write.c) */
    FY_PROTO_COUNT
};

/* FERRY_PROTO: what carries a message above the eager limit. */
enum fy_proto_mode {
    FY_MODE_AUTO,     /* the measured default (proto.c) */
    FY_MODE_PUSHPULL, /* push FERRY_BTP bytes, pull the rest */
    FY_MODE_PUSHZERO, /* plain rendezvous (BTP = 0) */
    FY_MODE_PUSHALL,  /* push everything (BTP = the message) */
};
/* Parse FERRY_PROTO; -1 if unknown. */
int fy_proto_mode_parse(const char *s);
extern const char *const fy_proto_mode_names[4];

struct fy_proto_ops {
    const char *name;
    /* Start send r (packed, peer and size set). 0 or a negative errno. */
    int (*send)(struct fy_req *r);
    /* Receive r matched the message whose first packet is p (from a
     * channel, or rebuilt from the unexpected queue). */
    void (*matched)(struct fy_req *r, const struct fy_pkt *p);
};

extern const struct fy_proto_ops fy_protos[FY_PROTO_COUNT];

/* Which protocol carries send r (peer, envelope and packed size set). */
enum fy_proto fy_proto_pick(struct fy_req *r);

/* Which protocol a message's first packet belongs to; -1 if the type
 * opens no message (control packets). */
static inline int fy_proto_of_pkt(uint32_t type)
{
    switch (type) {
    case FY_PKT_EAGER:
    case FY_PKT_EAGER_SYNC:
        return FY_PROTO_EAGER;
    case FY_PKT_RTS:
        return FY_PROTO_RNDV;
    case FY_PKT_PUSH:
        return FY_PROTO_PUSH;
    default:
        return -1;
    }
}

/* The shared single copy (proto/split.c), the rendezvous get for cma: receiver
 * side copies want bytes from the sender's remote address into dest with the
 * sender's help; returns want or a negative errno. The sender side handles
 * FY_PKT_SPLIT. */
ssize_t fy_split_get(int src, uint64_t sender_cookie, uint64_t remote,
                     void *dest, uint64_t want);
/* Pieces of a long one-sided receive: each is read (or split) in one go,
 * with a whole progress pass between two pieces. A multiple of 4 KiB; the
 * shared copy names a piece by its index (split.c). */
#define FY_PULL_PIECE ((uint64_t)4 << 20)
/* The same for the piece at byte 'off' of both buffers ('remote' and
 * 'dest' are the buffers' starts). */
ssize_t fy_split_get_piece(int src, uint64_t sender_cookie, uint64_t remote,
                           uint8_t *dest, uint64_t off, uint64_t len);
void fy_split_on_pkt(const struct fy_pkt *p);
/* The shared single copy the other way, for the write protocol: the sender
 * writes the 'want' bytes at 'off' of src into the same place of the
 * receiver's offered buffer 'remote' (both the buffers' starts) and asks
 * the receiver (WSPLIT, naming its receive by cookie) to read chunks of
 * them at the same time, through the sender's control block. Returns want
 * or a negative errno. */
ssize_t fy_split_put(int dst, uint64_t recv_cookie, const uint8_t *src,
                     uint64_t remote, uint64_t off, uint64_t want);
void fy_split_on_wsplit(const struct fy_pkt *p);

/* Counters: how each message travelled. */
enum fy_proto_stat {
    FY_STAT_EAGER_MAILBOX, /* whole message in the pair's mailbox ring */
    FY_STAT_EAGER_CELLS,   /* whole message in a queue cell */
    FY_STAT_RNDV_GET,      /* receiver reads the sender's buffer (one-sided) */
    FY_STAT_RNDV_PUT,      /* sender streams after CTS (two-sided) */
    FY_STAT_SELF,          /* a rank to itself */
    FY_STAT_PUSH,          /* Push-Pull/Push-All: bytes pushed with it */
    FY_STAT_PULL,          /* Push-Pull: bytes pulled after the push */
    FY_STAT_WRITE,         /* receiver-initiated write into our buffer */
    FY_STAT_COUNT
};

/* Entries' functions (eager.c, proto/rndv.c). */
int fy_proto_self_send(struct fy_req *r);
int fy_proto_eager_send(struct fy_req *r);
void fy_proto_eager_matched(struct fy_req *r, const struct fy_pkt *p);
int fy_proto_rndv_send(struct fy_req *r);
void fy_rndv_on_rts(struct fy_req *r, const struct fy_pkt *p);

/* Push-Pull (push.c). */
int fy_proto_push_send(struct fy_req *r);
void fy_push_matched(struct fy_req *r, const struct fy_pkt *p);
/* A PUSH no receive matched: queue it, keeping its pushed bytes within
 * FERRY_PUSH_BUF. */
void fy_push_unexpected(const struct fy_pkt *p);
/* A receive matched the queued PUSH u (frees u). */
void fy_push_matched_unexp(struct fy_req *r, struct fy_unexp *u);
void fy_push_on_data(const struct fy_pkt *p);
/* Receive r's pull part is over: finish it once its pushed bytes are in. */
void fy_push_pull_done(struct fy_req *r);
/* A send's push packet left (sent_hook). */
void fy_push_sent(struct fy_req *r, uint32_t type);
/* How many bytes of a message of 'bytes' the sender pushes, and of those
 * how many travel in the first packet (BTP(1)). */
uint64_t fy_push_bytes(uint64_t bytes);
/* FERRY_PROTO=auto: whether send r (no offer waiting) is pushed whole
 * (counts r in its peer's burst of nonblocking sends). */
bool fy_push_auto(const struct fy_req *r);
/* FERRY_PROTO=auto: whether send r's receiver, on this node, shows itself
 * in a blocking send to us with the receive for this very message posted
 * (an exchange: a receive hint, p2p.c). */
bool fy_p2p_receiver_present(const struct fy_req *r);
/* Whether send r's receiver, on this node, shows itself blocked in the
 * receive for this very message (its receive hint, not in a send). */
bool fy_p2p_receiver_waiting(const struct fy_req *r);
/* Whether sender src (on this node) shows itself reading a large message
 * of ours, or about to (an exchange): a large read from it is not shared
 * with it then. */
bool fy_p2p_sender_busy(int src);
/* Whether sender src (on this node) shows that it waits for a message of
 * ours too (an exchange): a read of its message matched inside MPI_Irecv
 * then waits for the next progress pass. */
bool fy_p2p_sender_waits(int src);
/* FERRY_PUSH_MAX=auto measures up to a quarter of a rank's cells rounded
 * down to a power of two (128 KiB with the default cells: at most 1/8 of
 * them held by one message, whose pushes other messages queue behind). */
static inline uint64_t fy_push_cap(uint64_t ncells, uint64_t cell_payload)
{
    uint64_t cap = ncells * cell_payload / 4;
    while (cap & (cap - 1))
        cap &= cap - 1;
    return cap;
}
uint64_t fy_push_first(uint64_t pushed);
/* Pushed bytes per PUSH_DATA packet to 'peer': a cell's payload, or the
 * network channel's push_chunk where it has one. */
uint64_t fy_push_piece(int peer);
/* Where the PUSH_DATA packet p (header only) belongs when its receive is
 * posted: the network channel reads it there (fy_chan_steer_fn). */
uint8_t *fy_push_steer(const struct fy_pkt *p);
/* Where receive r's bytes land (its buffer, or a staging copy of 'want'
 * bytes for a non-contiguous datatype). */
uint8_t *fy_rndv_recv_dest(struct fy_req *r, uint64_t want);

/* Pulling the rest of a message from offset 'from' (rndv.c): one-sided
 * read or CTS for a two-sided mover; r->total = want and the status are
 * set by the caller; ctl is the message's RTS/PUSH control block. */
/* We are about to send src a message above the eager limit with a receive
 * from src above it posted: show src that we will be reading its message
 * (our doorbell's "reading" word, until our next one-sided read or
 * blocking send ends), so src does not ask us to share its copy of ours
 * and reads ours after its own send. */
void fy_rndv_expect(int src);
/* A blocking send is over: the word shows our reads again (the expected
 * message may have come by another protocol, or not yet). */
void fy_rndv_expect_end(void);
void fy_rndv_pull_rest(struct fy_req *r, int src, const struct fy_ctl *ctl,
                       uint64_t from, uint64_t want, uint64_t total);
/* The request-completion rule of a sender whose push packets may still be
 * queued: complete now, or once the last one left. */
void fy_send_done(struct fy_req *r);

/* Receiver-initiated write (write.c). */
/* Receive r was just posted: offer its buffer to its sender if the
 * matching rules allow (see write.c). */
void fy_write_posted(struct fy_req *r);
/* A valid offer of r's peer that r's envelope matches, oldest first. */
struct fy_offer *fy_write_offer_for(const struct fy_req *r);
int fy_proto_write_send(struct fy_req *r);
void fy_write_on_offer(const struct fy_pkt *p);
void fy_write_on_wdone(const struct fy_pkt *p);
void fy_write_on_revoke(const struct fy_pkt *p);
void fy_write_on_revoked(const struct fy_pkt *p);
/* A normal message (not a write) left for 'peer': its offers are stale. */
void fy_write_offers_drop(int peer);
/* An offered receive is being matched by a normal message or cancelled:
 * returns true if the cancel must wait for the sender (REVOKE sent). */
bool fy_write_cancel(struct fy_req *r);
/* Receive r's offer is over (written into, revoked, or matched the normal
 * way): forget its cookie and release what the channel holds for it. */
void fy_write_offer_end(struct fy_req *r);
/* Free every offer held (finalize). */
void fy_write_finalize(void);
/* The mechanism number of an offer to a rank on another node: the bytes
 * go by the network channel's RDMA write (fy_chan_ops.write). */
#define FY_WRITE_NET 0xffu

struct fy_proto_counter {
    uint64_t msgs, bytes;
};

struct fy_proto_stats {
    struct fy_proto_counter proto[FY_STAT_COUNT]; /* enum fy_proto_stat */
    struct fy_proto_counter xfer[FY_XFER_NKINDS]; /* rendezvous, by kind */
    uint64_t split;      /* rendezvous pieces shared with the sender */
    uint64_t unexpected; /* messages that arrived before their receive */
    /* Receives naming one source that were waiting when their message
     * arrived, and that message's bytes: what the receiver-initiated write
     * protocol could have carried (seed 002's "Remote Write availability",
     * by bytes). Counted when the message matches. */
    uint64_t early_direct, early_direct_bytes;
    /* The write protocol: buffers we offered to a sender, offers a sender
     * used (messages written straight into our buffer), and offers we
     * were given and used as a sender. */
    uint64_t offers_sent, offers_used, writes_done;
    /* One-sided split copies (rma/ho.c): bytes of other ranks' puts and
     * gets this rank copied as their target. */
    uint64_t rma_helped_bytes;
};

extern struct fy_proto_stats fy_proto_stats;

/* The counter's name, as FERRY_STATS prints it. */
const char *fy_proto_stat_name(enum fy_proto_stat p);

static inline void fy_proto_count(enum fy_proto_stat p, uint64_t bytes)
{
    fy_proto_stats.proto[p].msgs++;
    fy_proto_stats.proto[p].bytes += bytes;
}

static inline void fy_proto_count_xfer(int kind, uint64_t bytes)
{
    fy_proto_stats.xfer[kind].msgs++;
    fy_proto_stats.xfer[kind].bytes += bytes;
}

/* The counters as MPI_T performance variables: every one is a per-rank
 * unsigned 64-bit COUNTER with no object binding, named "ferry_..." and
 * read live from fy_proto_stats. */
struct fy_pvar {
    const char *name;
    const char *desc;
    const uint64_t *value;
};
/* The table (built once; stable for the life of the process). */
int fy_proto_pvars(const struct fy_pvar **out);

/* Print one line per counter with traffic (and the others that are always
 * shown), "ferry-stats rank=<r> <group>=<name> msgs=<n> bytes=<n>", to
 * stderr. */
void fy_proto_stats_print(int rank);

/* MPI_T control variables a running program may write (FERRY_PROTO,
 * FERRY_BTP, FERRY_RECV_WRITE, FERRY_RECV_WRITE_MIN; ids are enum
 * fy_env_id): whether id is one; its value in force (a string for
 * FERRY_PROTO, else *num); set it (checked: -EINVAL when out of range,
 * nothing changed). A change applies to sends and receives started after
 * it. Only between MPI_Init and MPI_Finalize. */
bool fy_proto_setting_writable(int id);
int fy_proto_setting_read(int id, long long *num, const char **str);
int fy_proto_setting_write(int id, long long num, const char *str);

#endif /* FY_PROTO_H */
