/* SPDX-License-Identifier: MIT */
/* Point-to-point messaging: requests, MPI matching (posted and unexpected
 * queues, wildcards, non-overtaking per sender and context whatever the
 * protocol), and the progress engine that drives every transport.
 * Single-threaded: the MPI layer serialises calls. */
#ifndef FY_P2P_H
#define FY_P2P_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "comm/comm.h"
#include "dtype/dtype.h"

enum fy_req_kind { FY_REQ_SEND, FY_REQ_RECV, FY_REQ_DONE };

enum fy_send_mode {
    FY_SEND_STANDARD,
    FY_SEND_SYNC,  /* completes only once matched */
    FY_SEND_READY, /* like standard (a matching receive must be posted) */
};

struct fy_req {
    MPI_Request handle; /* MPI_REQUEST_NULL until the MPI layer names it */
    uint8_t kind;       /* enum fy_req_kind */
    bool complete;      /* set by progress; read by wait/test */
    bool cancelled;
    bool on_list; /* linked on the posted-receive list */
    int err;      /* 0, or -EMSGSIZE (truncated), -ECANCELED, ... */
    /* What MPI_Status reports once complete. */
    int st_source; /* comm rank of the sender */
    int st_tag;
    MPI_Count st_bytes; /* bytes delivered into the buffer */

    /* The operation. */
    void *buf;
    MPI_Count count;
    struct fy_dtype *dt;
    struct fy_comm *comm;
    uint32_t ctx;
    int peer;      /* comm rank, or MPI_ANY_SOURCE */
    int tag;       /* or MPI_ANY_TAG */
    int wpeer;     /* world rank of peer (-1 for any) */
    uint8_t mode;  /* enum fy_send_mode */
    bool blocking; /* a send the caller waits for (MPI_Send): see
                    * fy_proto_pick's auto rule; a blocking receive
                    * (MPI_Recv): see fy_write_posted */
    bool rts_owed; /* counted in its peer's rts_out (p2p_impl.h) */

    /* Protocol state, owned by src/p2p and src/xfer. */
    void *pack;           /* packed copy of a non-contiguous buffer, or NULL */
    MPI_Count bytes;      /* packed size of the operation */
    MPI_Count done;       /* bytes moved so far (pipelined protocols) */
    uint64_t msgno;       /* sender: this message's number among those
                           * opened to its peer the ordinary way
                           * (fy_peer.msgs_sent), 0: none (a write into an
                           * offer, a self-send matched at once) */
    uint32_t proto;       /* protocol/state word */
    uint64_t cookie;      /* identifies a rendezvous across processes */
    uint64_t peer_cookie; /* the other side's cookie (pipelined paths) */
    MPI_Count total;      /* rendezvous: bytes that will really move */
    int32_t xsrc;         /* receiver: world rank of the matched sender */
    uint32_t xpad;        /* shmbuf: the receiver's pad this message uses */
    uint32_t xhalf;       /* shmbuf: next half of the pad to fill/drain */
    uint32_t xkind;       /* one-sided pull: the mechanism (xfer kind) */
    uint64_t xaddr;       /* one-sided pull: the sender's buffer address */
    uint64_t xoff;        /* two-sided: where in the message the mover
                           * starts (after Push-Pull's pushed bytes);
                           * network read: the sender's key */
    /* Push-Pull (proto/push.c). Receiver: pushed bytes still to arrive,
     * and whether the pull part is over. Sender: push packets not yet on
     * the wire (the buffer is read until they are). */
    uint64_t push_left;
    uint32_t push_pending;
    bool pull_done;
    bool push_rx;      /* receiver: a pushed message (push.c finishes it) */
    bool push_fin;     /* receiver: answer FIN once everything arrived */
    bool push_discard; /* receiver: pushed bytes arriving are not kept */
    bool done_pending; /* sender: complete once push_pending is 0 */
    bool push_eager;   /* sender: all pushed, no FIN (Push-All) */
    /* Write protocol (proto/write.c), receiver: the buffer was offered to
     * the sender, when it had seen 'offer_seen' messages from it. */
    bool offered;
    bool offer_later; /* a blocking receive: offered once it has waited
                       * FY_OFFER_WAIT_NS (fy_req_wait) */
    bool revoking;    /* cancelled; waiting for the sender's REVOKED */
    /* Send cancellation (p2p/cancel.c), sender: MPI_Cancel was called;
     * its CANCEL is out and the receiver's answer not yet in (the request
     * is not complete meanwhile); the protocol finished the send in that
     * time (it completes with the answer); the answer's cookie. */
    bool cancel_asked;
    bool cancel_wait;
    bool cancel_done;
    uint64_t ccookie;
    uint64_t offer_seen;
    struct fy_req *next, *prev;
};

/* World state every module may read. */
extern int fy_world_rank;
extern int fy_world_size;

struct fy_shm_layout;
typedef int fy_shm_declare_fn(struct fy_shm_layout *lay); /* shm/shm.h */

/* Bring up / tear down transports after bootstrap. 'above' declares the
 * segment regions of the layers above point-to-point (MPI_Init passes the
 * collectives' fy_coll_shm_declare), NULL for none: see
 * fy_p2p_seg_layout. */
int fy_p2p_init(fy_shm_declare_fn *above);
void fy_p2p_finalize(void);

/* What sizes the node's shared segment. Every rank of a node must use the
 * same values (the launcher gives them one environment; attach refuses a
 * rank that computed another layout). */
struct fy_p2p_seg_params {
    uint32_t nranks;      /* local ranks */
    uint32_t fbox_slots;  /* mailbox ring slots per ordered pair */
    uint32_t cell_size;   /* FERRY_CELL_SIZE (tuned) */
    uint32_t ncells;      /* FERRY_CELLS, per rank */
    uint64_t shmbuf_size; /* FERRY_SHMBUF_SIZE (tuned): one pad half */
    uint32_t npads;       /* FERRY_SHMBUF_PADS, per receiver */
};

/* Check the FERRY_* settings point-to-point uses (loading the tuning file)
 * and derive the segment's parameters for nranks local ranks. Needs
 * fy_env_load(). Returns 0 or a negative errno after logging which
 * setting is wrong. */
int fy_p2p_seg_params(uint32_t nranks, struct fy_p2p_seg_params *out);

/* The node segment's layout for these parameters: every module's regions
 * in one fixed order - shm's, the cell queues', the channel's, the
 * mechanisms', then what 'above' (may be NULL) declares for the layers
 * above point-to-point. Pure, so every rank computes the same one, and
 * tools can report sizes for any rank count (passing what MPI_Init
 * passes to fy_p2p_init). Returns 0 or a negative errno (logged). */
int fy_p2p_seg_layout(const struct fy_p2p_seg_params *p,
                      fy_shm_declare_fn *above, struct fy_shm_layout *out);

/* Start a send of count elements of dt to comm rank 'dest' (or
 * MPI_PROC_NULL) with 'tag' on context 'ctx' (comm->ctx for user traffic,
 * comm->ctx + 1 for collectives). The request is owned by the caller until
 * fy_req_free. Returns 0 or a negative errno. */
int fy_p2p_isend(const void *buf, MPI_Count count, struct fy_dtype *dt,
                 int dest, int tag, struct fy_comm *comm, uint32_t ctx,
                 enum fy_send_mode mode, struct fy_req **req_out);
/* Start a receive; 'src' may be MPI_ANY_SOURCE or MPI_PROC_NULL, 'tag'
 * MPI_ANY_TAG. */
int fy_p2p_irecv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                 int tag, struct fy_comm *comm, uint32_t ctx,
                 struct fy_req **req_out);

/* Blocking forms with a fast path for small messages. On return the
 * operation is complete; *req-style results go to the out parameters.
 * Return 0, -EMSGSIZE on truncation, or another negative errno. */
int fy_p2p_send(const void *buf, MPI_Count count, struct fy_dtype *dt, int dest,
                int tag, struct fy_comm *comm, uint32_t ctx,
                enum fy_send_mode mode);
int fy_p2p_recv(void *buf, MPI_Count count, struct fy_dtype *dt, int src,
                int tag, struct fy_comm *comm, uint32_t ctx, int *source_out,
                int *tag_out, MPI_Count *bytes_out);

/* Look for a matching message without receiving it. *flag_out tells
 * whether one is there; if so its source/tag/size are returned. */
int fy_p2p_iprobe(int src, int tag, struct fy_comm *comm, uint32_t ctx,
                  bool *flag_out, int *source_out, int *tag_out,
                  MPI_Count *bytes_out);
int fy_p2p_probe(int src, int tag, struct fy_comm *comm, uint32_t ctx,
                 int *source_out, int *tag_out, MPI_Count *bytes_out);

/* Matched probe (MPI_Improbe): take the first matching message off the
 * unexpected queue, so no other receive can match it; *msg_out is an opaque
 * message for fy_p2p_imrecv, which must eventually receive it. */
int fy_p2p_improbe(int src, int tag, struct fy_comm *comm, uint32_t ctx,
                   bool *flag_out, void **msg_out, int *source_out,
                   int *tag_out, MPI_Count *bytes_out);
/* Receive a message taken by fy_p2p_improbe into buf (MPI_Imrecv). */
int fy_p2p_imrecv(void *buf, MPI_Count count, struct fy_dtype *dt, void *msg,
                  struct fy_comm *comm, struct fy_req **req_out);

/* Cancel a receive that has not matched yet (sets r->cancelled and
 * completes it); a matched one is left alone. */
void fy_p2p_cancel_recv(struct fy_req *r);
/* MPI_Cancel of send r (started, complete or not, not yet freed): if its
 * message is still unmatched at the receiver, the receiver drops it and r
 * completes with r->cancelled set; otherwise r completes as it would have.
 * Either way r is complete only once the receiver answered (it answers
 * from its own progress engine, whatever MPI call it is in). A self-send
 * is settled at once. A second call does nothing. */
void fy_p2p_cancel_send(struct fy_req *r);

/* Progress hooks: the layers above p2p (which it does not call by name)
 * advance their own state at the end of every progress pass, in this
 * order, while their hook is set. A hook returns how many of its
 * operations it finished, which the pass counts as work done: a waiter
 * whose request a hook completed must look again before it idles, since
 * nobody will ring it for a completion made here.
 * - FY_HOOK_COLL: nonblocking collectives' schedules (src/coll/sched.c);
 * - FY_HOOK_PART: partitioned sends waiting for their receive to be
 *   known (src/mpi/part.c), set only while one waits;
 * - FY_HOOK_RMA: windows served by the target's engine (src/rma/ho.c,
 *   active messages), set while there are any.
 * No hook set costs fy_progress one predicted branch. */
enum fy_p2p_hook { FY_HOOK_COLL, FY_HOOK_PART, FY_HOOK_RMA, FY_HOOK_COUNT };
/* Set (fn) or clear (NULL) one hook. */
void fy_p2p_hook_set(enum fy_p2p_hook which, int (*fn)(void));
/* Asked by a rank about to sleep, when set: whether something a layer
 * above waits for, and no channel shows, is already there (a nonblocking
 * collective's publication in shared memory), so the rank must not
 * sleep. Whoever makes it hold must fy_wake() the waiter. */
extern bool (*fy_p2p_visible_hook)(void);

/* Drive all transports once. Returns how many events completed. */
int fy_progress(void);
/* One progress pass on behalf of a nonblocking call (Test*, Iprobe): when
 * ranks outnumber cores and the pass found nothing, give the core away
 * (sched_yield), so a program polling in a loop lets the rank it waits
 * for run instead of spinning out its time slice. Returns as fy_progress. */
int fy_progress_poll(void);
/* Progress until r->complete, waiting politely when oversubscribed.
 * Returns r->err. */
int fy_req_wait(struct fy_req *r);
/* One progress pass, then whether r is complete. */
bool fy_req_test(struct fy_req *r);
/* Return a (complete or never started) request to the pool. */
void fy_req_free(struct fy_req *r);

/* Waiting helper for loops that wait on several requests: call once per
 * idle iteration; spins, then yields, then sleeps on this rank's doorbell
 * when ranks outnumber cores. */
void fy_progress_idle(unsigned *spins);
/* The same for a wait on a condition no channel shows (the collectives'
 * shared flags): a sleep ends early when ready() holds, and whoever makes
 * it hold must fy_wake() the waiter. */
void fy_progress_idle_until(unsigned *spins, bool (*ready)(void));

#endif /* FY_P2P_H */
