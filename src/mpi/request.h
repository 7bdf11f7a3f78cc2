/* SPDX-License-Identifier: MIT */
/* MPI_Request handles: the MPI layer's names for point-to-point requests of
 * src/p2p, persistent requests, requests that complete at once, and requests
 * other modules implement (non-blocking collectives). Also the small helpers
 * the completion calls share (status filling, argument checks, the buffered
 * send pool). Single-threaded like the rest of the MPI layer. */
#ifndef FY_MPI_REQUEST_H
#define FY_MPI_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "mpi/mpi_impl.h"
#include "util/handle.h"

/* A request handle's table slot holds a tagged word: the low 3 bits say
 * what the rest is. Objects are at least 8-byte aligned (they hold
 * pointers), so the tag costs no allocation and the lookup stays one load.
 * The two "done" tags carry no object at all: an MPI_Isend to MPI_PROC_NULL
 * or an MPI_Ibsend allocates nothing but its handle. */
enum fy_mreq_tag {
    FY_MREQ_SEND = 0,      /* struct fy_req * of src/p2p, a send */
    FY_MREQ_RECV = 1,      /* struct fy_req * of src/p2p, a receive */
    FY_MREQ_PERSIST = 2,   /* struct fy_preq * (MPI_*_init) */
    FY_MREQ_EXT = 3,       /* struct fy_mreq_ext * (other modules) */
    FY_MREQ_DONE_SEND = 4, /* no object: a send already complete */
    FY_MREQ_DONE_NULL = 5, /* no object: a receive from MPI_PROC_NULL */
};
#define FY_MREQ_TAG_MASK ((uintptr_t)7)

static inline enum fy_mreq_tag fy_mreq_tag(uintptr_t w)
{
    return (enum fy_mreq_tag)(w & FY_MREQ_TAG_MASK);
}
static inline void *fy_mreq_obj(uintptr_t w)
{
    return (void *)(w & ~FY_MREQ_TAG_MASK);
}

/* A persistent request (MPI_Send_init and friends): the arguments, and the
 * core request of the current activation. */
enum fy_preq_kind {
    FY_PREQ_SEND,
    FY_PREQ_BSEND,
    FY_PREQ_RECV,
    FY_PREQ_COLL,
    FY_PREQ_PSEND, /* partitioned send (part.c) */
    FY_PREQ_PRECV, /* partitioned receive (part.c) */
};

/* A buffered send being cancelled (bsend.c). */
struct fy_bsend_watch {
    bool pending;   /* the receiver's answer is not in yet */
    bool cancelled; /* the outcome, once not pending */
};
void fy_bsend_poll(void);

/* A persistent collective (pcoll.c); only its functions look inside. */
struct fy_pcoll;
/* A partitioned send waiting to be matched (part.c). */
struct fy_part_claim;

struct fy_preq {
    uint8_t kind;     /* enum fy_preq_kind */
    uint8_t mode;     /* enum fy_send_mode for FY_PREQ_SEND */
    bool active;      /* started and not yet completed by Wait/Test */
    struct fy_req *r; /* the activation's core request; NULL when active
                         means it completed at once (MPI_PROC_NULL, bsend) */
    void *buf;
    MPI_Count count;
    struct fy_dtype *dt; /* referenced while the request exists; NULL for
                            FY_PREQ_COLL */
    struct fy_comm *comm;
    int peer, tag;
    struct fy_pcoll *coll; /* FY_PREQ_COLL: the collective, owned */
    /* Partitioned requests: 'count' is the whole message's element count
     * (partitions x count per partition). A partitioned send is 'held'
     * from MPI_Start until its last partition is marked ready; only then
     * does the message leave (one message, part.c). */
    int partitions;
    bool held;
    int nready;
    uint8_t *ready; /* [partitions] for a partitioned send */
    /* Partitioned matching (part.c): the receive's id, which names the
     * data messages; a send learns it from the receiver's announcement
     * (-1 until then, and the message waits, held, until it is known). */
    int32_t part_rid;
    struct fy_req *part_ann;       /* a receive's announcement, in flight */
    struct fy_part_claim *part_cl; /* a send's place in the match queue */
    int part_err;                  /* a deferred send's failure, or 0 */
    /* FY_PREQ_BSEND: the activation's message in the buffer, and its
     * cancellation (fy_bsend_cancel). */
    uint64_t bsend_id;
    struct fy_bsend_watch bwatch;
    int32_t part_annv[2]; /* the announcement: {tag, rid} */
};

static inline bool fy_preq_is_recv(const struct fy_preq *p)
{
    return p->kind == FY_PREQ_RECV || p->kind == FY_PREQ_PRECV;
}

/* Partitioned requests (part.c): start an activation (MPI_SUCCESS or an
 * error class reported as fn). */
int fy_part_start(const char *fn, struct fy_preq *p);
/* A held partitioned send (started, message not yet sent): send it if every
 * partition is ready and its receive is known. Returns whether the
 * activation is over. */
bool fy_part_poll(struct fy_preq *p);
/* Release what a partitioned request holds in part.c before it is freed
 * (waits for a receive's announcement to leave). */
void fy_part_release(struct fy_preq *p);

/* Persistent collectives (pcoll.c). Start: launch the collective and mark
 * p active; MPI_SUCCESS or an error class reported as fn. Test: whether
 * the activation is over (drives it; true when none is running). Err: the
 * last activation's result, 0 or a negative errno. Destroy: release
 * everything (waits for a running activation). */
int fy_pcoll_start(const char *fn, struct fy_preq *p);
bool fy_pcoll_test(struct fy_pcoll *pc);
int fy_pcoll_err(const struct fy_pcoll *pc);
void fy_pcoll_destroy(struct fy_pcoll *pc);

/* A request implemented by another module (e.g. a non-blocking collective
 * schedule). The owner embeds this struct in its object, fills ops and
 * comm, and calls fy_mreq_ext_register(). Completion calls invoke
 * ops->progress after each fy_progress() pass until 'complete' is set; then
 * they read the st_* fields and 'err' (or call ops->query), and call
 * ops->free. */
struct fy_mreq_ext;
struct fy_mreq_ext_ops {
    void (*progress)(struct fy_mreq_ext *x); /* advance; may set complete */
    /* Release the object; returns MPI_SUCCESS or the MPI error code the
     * release produced (a generalized request's free_fn). */
    int (*free)(struct fy_mreq_ext *x);
    /* Optional (NULL: no cancel); also called once complete. Returns
     * MPI_SUCCESS or the error MPI_Cancel reports (a generalized
     * request's cancel_fn result). */
    int (*cancel)(struct fy_mreq_ext *x);
    /* Optional: fill the whole status of a complete request (never
     * MPI_STATUS_IGNORE) and return an MPI error class, instead of the
     * st_* fields being used. Generalized requests need it. */
    int (*query)(struct fy_mreq_ext *x, MPI_Status *st);
};
struct fy_mreq_ext {
    const struct fy_mreq_ext_ops *ops;
    struct fy_comm *comm; /* whose error handler reports its errors */
    bool complete;
    bool cancelled;
    int err; /* 0 or a negative errno */
    int st_source, st_tag;
    MPI_Count st_bytes;
    MPI_Request handle; /* set by fy_mreq_ext_register */
};

/* Give a started request a handle. The word is obj | tag (the tag says
 * whether a core request is a send or a receive, so completion never needs
 * to ask the core). Returns 0 or -ENOMEM. */
int fy_mreq_register(uintptr_t word, MPI_Request *handle_out);
/* Name an ext request: returns 0 or -ENOMEM; *handle_out on success. */
int fy_mreq_ext_register(struct fy_mreq_ext *x, MPI_Request *handle_out);

extern struct fy_handle_table fy_mreq_table;

/* The tagged word behind a handle, or 0 for MPI_REQUEST_NULL or an invalid
 * handle. O(1), inline: the array completion calls resolve every handle
 * on every call. */
static inline uintptr_t fy_mreq_lookup(MPI_Request h)
{
    return (uintptr_t)fy_handle_get(&fy_mreq_table, h);
}

/* Whether the request named by w has nothing left to do (complete, or an
 * inactive persistent request). Does not drive the core engine, but gives
 * an ext request one progress call. */
static inline bool fy_mreq_poll(uintptr_t w)
{
    void *o = fy_mreq_obj(w);
    switch (fy_mreq_tag(w)) {
    case FY_MREQ_SEND:
    case FY_MREQ_RECV:
        return ((struct fy_req *)o)->complete;
    case FY_MREQ_PERSIST: {
        struct fy_preq *p = o;
        if (p->coll)
            return !p->active || fy_pcoll_test(p->coll);
        if (FY_UNLIKELY(p->held))
            return fy_part_poll(p);
        if (FY_UNLIKELY(p->bwatch.pending)) {
            fy_bsend_poll();
            return !p->bwatch.pending;
        }
        return !p->active || p->r == NULL || p->r->complete;
    }
    case FY_MREQ_EXT: {
        struct fy_mreq_ext *x = o;
        if (!x->complete)
            x->ops->progress(x);
        return x->complete;
    }
    default:
        return true;
    }
}

/* Whether w is active (MPI's sense: not an inactive persistent request). */
static inline bool fy_mreq_active(uintptr_t w)
{
    if (fy_mreq_tag(w) == FY_MREQ_PERSIST)
        return ((struct fy_preq *)fy_mreq_obj(w))->active;
    return true;
}

/* Complete the done request behind *h (word w): fill *st (MPI_ERROR left
 * alone unless the request failed), then free it and set *h to
 * MPI_REQUEST_NULL, or deactivate it if persistent. Returns MPI_SUCCESS or
 * the request's error class; *comm_out is the communicator whose handler
 * reports that error. */
int fy_mreq_complete(MPI_Request *h, uintptr_t w, MPI_Status *st,
                     struct fy_comm **comm_out);
/* Fill *st for the done request w without freeing it
 * (MPI_Request_get_status). Returns MPI_SUCCESS or its error class. */
int fy_mreq_peek(uintptr_t w, MPI_Status *st);
/* Block until w is done, waiting politely. */
void fy_mreq_wait_done(uintptr_t w);

/* Persistent requests: create (takes references on dt and comm) and start.
 * fy_preq_start returns MPI_SUCCESS or an error class reported as 'fn'. */
int fy_preq_create(enum fy_preq_kind kind, enum fy_send_mode mode,
                   const void *buf, MPI_Count count, struct fy_dtype *dt,
                   int peer, int tag, struct fy_comm *comm,
                   MPI_Request *handle_out);
int fy_preq_start(const char *fn, struct fy_preq *p);
/* A persistent collective's request: takes ownership of pc and a reference
 * on comm. Returns 0 or -ENOMEM (pc then still belongs to the caller). */
int fy_preq_create_coll(struct fy_pcoll *pc, struct fy_comm *comm,
                        MPI_Request *handle_out);

/* MPI_Request_free: free now if done, else orphan it so its resources are
 * reclaimed when it completes. */
void fy_mreq_free(MPI_Request *h, uintptr_t w);
/* MPI_Cancel on the request w (sends are never cancelled, see pt2pt.c).
 * Returns MPI_SUCCESS or the error an ext request's cancel gave. */
int fy_mreq_cancel(uintptr_t w);

/* Requests freed by the user while still active, and buffered sends still
 * in flight: polled from every completion call so their memory comes back
 * without a hook in the core. */
extern unsigned fy_mreq_norphans;
extern unsigned fy_bsend_npending;
void fy_mreq_orphans_poll(void);
void fy_bsend_poll(void);

static inline void fy_mreq_housekeep(void)
{
    if (FY_UNLIKELY(fy_mreq_norphans))
        fy_mreq_orphans_poll();
    if (FY_UNLIKELY(fy_bsend_npending))
        fy_bsend_poll();
}

/* Called from MPI_Finalize: waits for orphaned active sends and pending
 * buffered sends to complete, completes the orphaned receives whose
 * messages were sent and cancels the others, then frees every request
 * state of this file. 'world': MPI_Finalize of the world model, collective
 * over MPI_COMM_WORLD, which lets the ranks agree that every message has
 * arrived (without it, orphaned receives not yet matched are cancelled). */
void fy_mpi_requests_finalize(bool world);

/* ---- status ---------------------------------------------------------- */

/* The empty status (MPI 3.7.3): source MPI_ANY_SOURCE, tag MPI_ANY_TAG,
 * count 0, not cancelled. MPI_ERROR is left alone. */
void fy_mreq_status_empty(MPI_Status *st);
/* A completed receive's status. MPI_ERROR is set only when errclass is not
 * MPI_SUCCESS: MPICH keeps the caller's value otherwise, and programs that
 * preset it rely on that. */
static inline void fy_mreq_status_recv(MPI_Status *st, int source, int tag,
                                       MPI_Count bytes, bool cancelled,
                                       int errclass)
{
    /* MPI_STATUS_IGNORE is (MPI_Status *)1; a NULL status is treated the
     * same way rather than crashing. One compare covers both. */
    if ((uintptr_t)st <= (uintptr_t)MPI_STATUS_IGNORE)
        return;
    int keep = st->MPI_ERROR;
    fy_status_set(st, source, tag, errclass, bytes, cancelled);
    if (errclass == MPI_SUCCESS)
        st->MPI_ERROR = keep;
}
/* A completed send's status: only the cancelled bit and a zero count are
 * meaningful (MPI leaves source and tag undefined; we keep them). */
void fy_mreq_status_send(MPI_Status *st, bool cancelled, int errclass);

/* ---- argument checks shared by the point-to-point entry points ---------
 *
 * The fast check is one predicted branch over every argument; anything odd
 * (including MPI_PROC_NULL and MPI_BOTTOM with an absolute-address type)
 * goes to fy_mpi_pt2pt_check(), which either finds it valid or reports it. */

#define FY_PT2PT_PROC_NULL (-1) /* check result: peer is MPI_PROC_NULL */

/* Full check of a send (is_recv false) or receive's arguments. Returns 0
 * when valid, FY_PT2PT_PROC_NULL when the peer is MPI_PROC_NULL (and the
 * rest is valid), or the error class after reporting it via fy_mpi_err.
 * MPI_DATATYPE_NULL with count 0 is valid: *dtp becomes MPI_BYTE's. */
int fy_mpi_pt2pt_check(const char *fn, struct fy_comm *c, const void *buf,
                       MPI_Count count, struct fy_dtype **dtp,
                       MPI_Datatype dt_handle, int peer, int tag, bool is_recv)
    __attribute__((cold, noinline));

static inline bool fy_pt2pt_send_ok(const struct fy_comm *c, const void *buf,
                                    MPI_Count count, const struct fy_dtype *dt,
                                    int dest, int tag)
{
    if (FY_UNLIKELY(dt == NULL))
        return false;
    /* Non-short-circuit '|': one branch instead of five. */
    bool bad = (count < 0) | !dt->committed |
               ((unsigned)dest >= (unsigned)c->size) | (tag < 0) |
               ((buf == NULL) & (count != 0));
    return !bad;
}

static inline bool fy_pt2pt_recv_ok(const struct fy_comm *c, const void *buf,
                                    MPI_Count count, const struct fy_dtype *dt,
                                    int src, int tag)
{
    if (FY_UNLIKELY(dt == NULL))
        return false;
    /* Valid sources are [0,size) and MPI_ANY_SOURCE (-2); MPI_PROC_NULL
     * (-1) is valid but takes the slow path, which handles it. Valid tags
     * are >= 0 and MPI_ANY_TAG (-1). */
    bool bad_src =
        ((unsigned)src >= (unsigned)c->size) & (src != MPI_ANY_SOURCE);
    bool bad = (count < 0) | !dt->committed | bad_src | (tag < MPI_ANY_TAG) |
               ((buf == NULL) & (count != 0));
    return !bad;
}

/* Whether a request pointer argument is usable. */
#define FY_CHECK_REQ_PTR(p, comm, fn)                                          \
    FY_CHECK((p) != NULL, comm, MPI_ERR_ARG, fn, "request pointer is NULL")

/* ---- buffered sends (bsend.c) ---------------------------------------- */

/* Copy the message into the attached buffer and start sending it from
 * there. Arguments are already checked; dest is not MPI_PROC_NULL. Returns
 * MPI_SUCCESS or an error class after reporting it as 'fn'. */
int fy_bsend_start(const char *fn, const void *buf, MPI_Count count,
                   struct fy_dtype *dt, int dest, int tag, struct fy_comm *comm,
                   uint64_t *id_out);
/* MPI_Cancel of a buffered send: its message (id_out of fy_bsend_start)
 * is asked back from the receiver (p2p/cancel.c) if it is still in the
 * buffer. Returns true if so: w->pending is then true until the answer is
 * in (fy_bsend_poll clears it), w->cancelled tells the outcome. */
bool fy_bsend_cancel(uint64_t id, struct fy_bsend_watch *w);
/* The watch w is going away (its persistent request is freed while the
 * answer is still out): the cancel's outcome is no longer reported. */
void fy_bsend_forget(struct fy_bsend_watch *w);
/* The MPI request of an MPI_Ibsend (born complete; cancellable). Returns
 * 0 or -ENOMEM. */
int fy_bsend_request(uint64_t id, struct fy_comm *comm, MPI_Request *out);
/* Wait for every pending buffered send (MPI_Finalize, detach). */
void fy_bsend_flush(void);

#endif /* FY_MPI_REQUEST_H */
