/* SPDX-License-Identifier: MIT */
/* One-sided communication: windows and RMA operations. Every window has a
 * control block in a memfd that all its ranks of one node map (locks, the
 * accumulate lock, PSCW counters, attached regions); window memory of
 * MPI_Win_allocate(_shared) lives in the same memfd, so origins on the
 * node reach it with loads and stores. User memory (MPI_Win_create,
 * dynamic windows) is reached through the one-sided mechanism (CMA, then
 * /proc/<pid>/mem), or, for small operations to a target that is inside
 * MPI, handed over to it (ho.c). A window whose ranks are on several
 * nodes has one control block per node (made by the node's lowest rank
 * of the window); ranks on other nodes are reached by active messages
 * (am.c), which also carry their lock requests and PSCW signals: the
 * target acts on its node's control block for them. Arguments are validated by
 * the MPI layer; functions return 0 or a negative errno. Not thread safe (the
 * MPI layer serialises calls). */
#ifndef FY_RMA_H
#define FY_RMA_H

#include <assert.h>
#include <errno.h>
#include <mpi.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "comm/comm.h"
#include "dtype/dtype.h"
#include "util/handle.h"

#define FY_RMA_MAGIC 0x31304e4957524659ull /* "FYRWIN01" */
/* Dynamic windows: a slot carries its rank's region table itself up to
 * FY_RMA_ATTACH_INLINE regions; beyond, origins read it from the rank's
 * memory (win.c, "dynamic windows"). A table is at most FY_RMA_ATTACH_MAX
 * regions (256 MiB): more is refused by attach and by the readers. */
#define FY_RMA_ATTACH_INLINE 64
#define FY_RMA_ATTACH_MAX (1u << 24)
#define FY_RMA_WRITER 0x80000000u /* lock word: exclusive holder */

/* Shared control block, at offset 0 of the window's memfd (one per node
 * the window spans; a slot or counter is meaningful only in the block of
 * the node that acts on it, as said below).
 * Invariants:
 * - hdr is written by the creator (comm rank 0) before any rank maps it
 *   (ftruncate zero-fills the rest), read-only afterwards;
 * - slot[t].lock: bit 31 is an exclusive holder, bits 0-30 the count of
 *   shared holders; any origin may CAS it (acquire on success, release on
 *   unlock);
 * - slot[t].acc: 0 free, 1 held around one accumulate's
 *   read-combine-write on target t (acquire / release), for the elements
 *   that are not combined by hardware atomics (atomic.c's A1/A2);
 * - slot[t].nattach, table and attach[]: written only by rank t (a
 *   seqlock in 'aseq': odd while t edits), read by every origin; 'table'
 *   is the address, in rank t, of its sorted table of nattach regions
 *   (rank t frees a table only after the edit that retired it), attach[]
 *   a copy of it when nattach <= FY_RMA_ATTACH_INLINE;
 * - the PSCW counters after the slots: posted[t * n + o] counts the
 *   exposure epochs target t opened to origin o (written by t), and
 *   done[t * n + o] the access epochs o completed at t (written by o);
 *   each side compares with its own private count of how many it
 *   expects. Release on increment, acquire on the waiting load.
 * - across nodes: slot[t] lives in t's node's block; a remote origin's
 *   lock requests are applied to it by t (am.c, FY_RMA_AM_LOCK/UNLOCK).
 *   posted[t * n + o] lives in o's node's block and done[t * n + o] in
 *   t's: a remote increment is a message (FY_RMA_AM_POST/DONE) that the
 *   waiting rank applies to its own block. */
struct fy_rma_hdr {
    uint64_t magic;
    uint32_t nranks;
    uint32_t pad;
};

struct fy_rma_region {
    uint64_t base, size;
};

struct fy_rma_slot {
    alignas(64) _Atomic uint32_t lock;
    _Atomic uint32_t acc;
    _Atomic uint32_t aseq;
    uint32_t nattach;
    uint64_t table;
    struct fy_rma_region attach[FY_RMA_ATTACH_INLINE];
};
static_assert(sizeof(struct fy_rma_slot) % 64 == 0, "slots own their lines");

/* What a process knows of one member of the window. */
struct fy_rma_peer {
    uint64_t base; /* direct: address in our mapping; else in the peer */
    uint64_t size;
    int disp_unit;
    pid_t pid;
    int world; /* world rank (wake-ups) */
    bool direct;
    bool remote;  /* on another node: nothing shared with it */
    bool am;      /* reached by active messages (remote, or no mechanism) */
    void *mirror; /* remap.c: our mapping of the peer's remapped pages */
    size_t mirror_len;
    /* Dynamic windows: our copy of the peer's region table when it has
     * more than the slot carries, valid while its aseq is rtab_seq. */
    struct fy_rma_region *rtab;
    uint32_t rtab_n, rtab_cap, rtab_seq;
    bool rtab_ok;
};

/* A rank's own window memory moved onto a memfd (remap.c). */
struct fy_rma_remap {
    int fd;            /* -1: nothing moved */
    uintptr_t lo;      /* page-aligned start of the moved pages */
    size_t len;        /* their bytes */
    size_t head, tail; /* edge pages shared with memory outside the window */
    struct fy_rma_remap *next; /* remap.c: every moved range, for fork */
};

/* Hand-over mailboxes (ho.c; its invariants block describes them):
 * windows on user memory have, after the PSCW counters, one fy_rma_beat
 * per rank and one fy_rma_box per (target, origin) pair. */
#define FY_RMA_HO_CAP 16384 /* largest payload a box carries */

struct fy_rma_beat {
    alignas(64) _Atomic uint32_t beat; /* the rank's progress passes */
    _Atomic uint32_t hint;             /* 1: a box of this target posted */
};
static_assert(sizeof(struct fy_rma_beat) == 64, "a beat owns its line");

struct fy_rma_box {
    alignas(64) _Atomic uint32_t state; /* enum fy_rma_ho_state */
    uint32_t kind;                      /* FY_RMA_AM_PUT .. FY_RMA_AM_CAS */
    int32_t op;                         /* MPI_Op (ACC, GACC) */
    int32_t type;                       /* predefined MPI_Datatype */
    int32_t err;                        /* the server's verdict */
    uint32_t pad;
    uint64_t addr;  /* absolute address in the target */
    uint64_t bytes; /* 1 .. FY_RMA_HO_CAP (CAS: 2 x bytes of data) */
    /* In: put/accumulate data, CAS new value then compare value; out:
     * get data, old contents (GACC, CAS). Shares the state's line for
     * small operations. */
    alignas(16) unsigned char data[FY_RMA_HO_CAP + 16];
};
static_assert(offsetof(struct fy_rma_box, data) == 48, "box header layout");
static_assert(sizeof(struct fy_rma_box) % 64 == 0, "boxes own their lines");

struct fy_info;
struct fy_rma_am;
struct fy_rma_ho;

struct fy_rma_win {
    MPI_Win handle;
    int flavor;             /* MPI_WIN_FLAVOR_* */
    struct fy_comm *comm;   /* private: the window's own context */
    struct fy_group *group; /* the user communicator's group */
    int rank, size;
    void *base; /* this rank's window memory (MPI_WIN_BASE) */
    MPI_Aint wsize;
    int disp_unit;
    struct fy_rma_peer *peers;
    /* The shared mapping: control block, then window memory. */
    uint8_t *map;
    size_t map_len;
    struct fy_rma_hdr *hdr;
    struct fy_rma_slot *slot;
    _Atomic uint32_t *posted, *done;
    /* Hand-over (ho.c), windows on user memory: beats[rank],
     * boxes[target * size + origin]; NULL for the other flavours. */
    struct fy_rma_beat *beats;
    struct fy_rma_box *boxes;
    struct fy_rma_ho *ho; /* set when this rank hands operations over */
    /* Epochs of this process. */
    bool fence;        /* between fences (no MPI_MODE_NOSUCCEED) */
    bool lock_all;     /* MPI_Win_lock_all held */
    uint8_t *lockmode; /* [target]: 0, or MPI_LOCK_SHARED/EXCLUSIVE */
    uint8_t *nocheck;  /* [target]: locked with MPI_MODE_NOCHECK */
    bool lock_all_nocheck;
    int nlocks;   /* targets locked one by one */
    bool *access; /* [target]: in the started PSCW access group */
    bool started;
    bool *exposed; /* [origin]: in the posted PSCW exposure group */
    bool posted_open;
    uint32_t *nstart; /* [target]: access epochs started to it */
    uint32_t *npost;  /* [origin]: exposure epochs opened to it */
    /* MPI-layer state. */
    char name[MPI_MAX_OBJECT_NAME];
    struct fy_attr *attrs;
    MPI_Errhandler errhandler;
    struct fy_info *info;
    /* Set when some member is reached by active messages (am.c): it is
     * on another node (spans), or no single-copy mechanism reaches the
     * others' user memory (then every peer is). peers[].am says which. */
    struct fy_rma_am *am;
    bool spans; /* members on more than one node */
    /* The put or get in progress must be complete at the origin when it
     * returns (MPI_Rput, MPI_Rget); otherwise a put's buffer may be read,
     * and a get's filled, until the next flush or unlock. */
    bool local_done;
    /* Every member's window memory is in mappings all members share
     * (allocate, shared, or Win_create memory remap.c moved). */
    bool in_map;
    struct fy_rma_remap remap; /* this rank's, Win_create */
    /* Dynamic windows: this rank's attached regions, sorted by base then
     * size, regions of non-zero size disjoint (slot[rank].table). */
    struct fy_rma_region *regions;
    uint32_t nregions, regions_cap;
    struct fy_rma_win *next; /* every live window, for MPI_Finalize */
};

/* remap.c (its header has the invariants M1-M4). Move the pages holding
 * [base, base + size) onto a new memfd, contents and addresses unchanged:
 * 0 (r->fd -1 for size 0), -ENOTSUP when not eligible, or a negative
 * errno with the memory as it was. */
int fy_rma_remap_own(void *base, size_t size, struct fy_rma_remap *r);
/* Give the pages back to private memory (M3); closes the memfd. */
void fy_rma_remap_restore(struct fy_rma_remap *r);
/* Map len bytes of process pid's memfd fd here; NULL on failure. */
void *fy_rma_remap_peer(pid_t pid, int fd, size_t len);

/* The window behind a handle, or NULL (inline: every RMA call looks it
 * up; the table is win.c's). */
extern struct fy_handle_table fy_rma_win_table;
static inline struct fy_rma_win *fy_rma_win_get(MPI_Win h)
{
    return (struct fy_rma_win *)fy_handle_get(&fy_rma_win_table, h);
}

/* Collective over 'parent': make a window of 'flavor'.
 * - MPI_WIN_FLAVOR_SHARED / ALLOCATE: 'size' bytes are allocated in
 *   shared memory (contiguous across ranks for SHARED unless 'noncontig';
 *   page-aligned per rank otherwise) and returned in w->base;
 * - MPI_WIN_FLAVOR_CREATE: 'base' (size bytes of user memory) is exposed;
 * - MPI_WIN_FLAVOR_DYNAMIC: no memory until fy_rma_attach.
 * Members on other nodes are reached by active messages (not for
 * SHARED). Returns 0, -ENOTSUP (SHARED, a member on another node), -EPERM
 * (this machine
 * lets neither the memfd be shared nor the peers' memory be reached;
 * logged), -ENOMEM, or a collective's error. All members get the same
 * result. */
int fy_rma_win_create(struct fy_comm *parent, int flavor, MPI_Aint size,
                      int disp_unit, bool noncontig, void *base,
                      struct fy_rma_win **out);
/* Collective: wait for every member, then release everything (attributes
 * are the MPI layer's to delete first). */
int fy_rma_win_free(struct fy_rma_win *w);
/* MPI_Finalize: unmap windows the program never freed. */
void fy_rma_finalize(void);

/* Synchronisation. */
int fy_rma_fence(struct fy_rma_win *w, int assert);
/* Blocks until granted, progressing everything else meanwhile. */
void fy_rma_lock(struct fy_rma_win *w, int type, int target, int assert);
void fy_rma_unlock(struct fy_rma_win *w, int target);
void fy_rma_lock_all(struct fy_rma_win *w, int assert);
void fy_rma_unlock_all(struct fy_rma_win *w);
/* Every operation of this process is complete: requests handed over or
 * sent as active messages are settled (fy_rma_flush_pending), loads and
 * stores went straight to the target; then a full memory fence. */
void fy_rma_flush_pending(struct fy_rma_win *w);
static inline void fy_rma_flush(struct fy_rma_win *w)
{
    if (w->ho || w->am)
        fy_rma_flush_pending(w);
    atomic_thread_fence(memory_order_seq_cst);
}
/* PSCW: group ranks are ranks of the window's communicator. */
void fy_rma_post(struct fy_rma_win *w, int n, const int *ranks);
void fy_rma_start(struct fy_rma_win *w, int n, const int *ranks);
void fy_rma_complete(struct fy_rma_win *w);
/* Wait (block) or test for the completes of the posted group. */
bool fy_rma_wait(struct fy_rma_win *w, bool block);

/* Whether an access epoch to 'target' is open here. */
static inline bool fy_rma_in_epoch(const struct fy_rma_win *w, int target)
{
    return w->fence || w->lock_all || w->lockmode[target] || w->access[target];
}

/* Attach / detach memory of a dynamic window (local; the caller holds
 * the engine lock: the progress engine reads the table). Attach returns
 * 0, -EEXIST (overlaps an attached region), -EOVERFLOW (wraps around the
 * address space), -ENOSPC (FY_RMA_ATTACH_MAX regions) or -ENOMEM; detach
 * 0 or -ENOENT when base is not attached. */
int fy_rma_attach(struct fy_rma_win *w, void *base, MPI_Aint size);
int fy_rma_detach(struct fy_rma_win *w, const void *base);

/* The target address of 'count' elements of dt at displacement 'disp' of
 * target's window, or -ERANGE if any byte lies outside the window (outside
 * the attached regions for dynamic windows; an access may span regions
 * that adjoin). Dynamic windows may also fail with the errno of reading
 * the target's region table, or -EPROTO when that table is malformed. */
int fy_rma_target_slow(const struct fy_rma_win *w, int target, MPI_Aint disp,
                       MPI_Count count, const struct fy_dtype *dt,
                       uint64_t *addr_out);
/* Byte span [lo, hi) of count (> 0) elements of dt relative to the
 * buffer. */
static inline void fy_rma_span(MPI_Count count, const struct fy_dtype *dt,
                               MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint last = (MPI_Aint)(count - 1) * dt->extent;
    *lo = last < 0 ? last + dt->true_lb : dt->true_lb;
    *hi = last > 0 ? last + dt->true_ub : dt->true_ub;
}
static inline int fy_rma_target(const struct fy_rma_win *w, int target,
                                MPI_Aint disp, MPI_Count count,
                                const struct fy_dtype *dt, uint64_t *addr_out)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || count == 0 || dt->size == 0)
        return fy_rma_target_slow(w, target, disp, count, dt, addr_out);
    const struct fy_rma_peer *p = &w->peers[target];
    MPI_Aint lo, hi;
    fy_rma_span(count, dt, &lo, &hi);
    MPI_Aint off = disp * (MPI_Aint)p->disp_unit;
    if (disp < 0 || off + lo < 0 || (uint64_t)(off + hi) > p->size)
        return -ERANGE;
    *addr_out = p->base + (uint64_t)off;
    return 0;
}

/* Data movement to/from target address 'taddr' (from fy_rma_target). */
int fy_rma_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
               struct fy_dtype *odt, int target, uint64_t taddr,
               MPI_Count tcount, struct fy_dtype *tdt);
int fy_rma_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
               struct fy_dtype *odt, int target, uint64_t taddr,
               MPI_Count tcount, struct fy_dtype *tdt);
/* Accumulate, atomically per element against other accumulates to the
 * same target: when rbuf is set, the target's old contents go there first
 * (Get_accumulate, Fetch_and_op); op may be MPI_REPLACE or MPI_NO_OP
 * (then obuf is unused). Returns 0, -ENOMEM or -EINVAL (op on type). */
int fy_rma_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
               struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
               struct fy_dtype *rdt, int target, uint64_t taddr,
               MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op);
/* One element of a predefined type: old value to rbuf; obuf replaces it
 * when it equals cbuf. */
int fy_rma_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
               void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr);

/* ---- active messages (am.c) ----------------------------------------------
 * For windows on user memory when no single-copy mechanism reaches the
 * other ranks: the origin sends requests through point-to-point on the
 * window's context, the target checks each against its window and applies
 * it in its progress engine. Puts and accumulates return once their
 * requests are handed to point-to-point (four large ones in flight at
 * most); gets (several chunks asked ahead), get-accumulates and
 * compare-and-swap return with the reply's data; a reply means every
 * earlier request of this origin to that target was applied. Not thread
 * safe by itself: callers hold the library lock (MPI layer, or the
 * progress thread) whenever fy_mt_on is set. */

/* Packets. A request is one message (MPI_BYTE) on the window's p2p
 * context with tag FY_RMA_AM_TAG_REQ: a fy_rma_am_hdr, nseg fy_rma_am_seg
 * (absolute addresses in the target, in packed order), then the data.
 * Replies (GET, GACC, CAS, FLUSH) go back: a
 * fy_rma_am_reply, then data, with the tag the request named. The target
 * handles one origin's requests in the order sent (MPI's non-overtaking
 * order on one context), so a reply means every earlier request of that
 * origin was applied. A large operation is cut into
 * chunks of at most FY_RMA_AM_CHUNK data bytes and FY_RMA_AM_NSEG pieces,
 * each its own request. Every field is checked by the target
 * (fy_rma_am_serve) before it steers a copy. */
#define FY_RMA_AM_TAG_REQ 1
#define FY_RMA_AM_TAG_REPLY 2 /* replies: tags 2 .. TAG_MAX */
#define FY_RMA_AM_TAG_MAX (1 << 30)
/* Tags an origin hands out come from its own sequence, 2 .. TAG_DATA - 1
 * (replies, a direct get's bytes and refusal); a direct put's bytes go
 * with TAG_DATA + such a tag: the same pair carries, the other way, the
 * replies to the target's own requests, whose tags follow the target's
 * sequence and could equal it. */
#define FY_RMA_AM_TAG_DATA (1 << 29)
#define FY_RMA_AM_CHUNK (64 * 1024)
#define FY_RMA_AM_NSEG 64

enum fy_rma_am_kind {
    FY_RMA_AM_PUT = 1,
    FY_RMA_AM_GET,
    FY_RMA_AM_ACC,  /* accumulate, no reply */
    FY_RMA_AM_GACC, /* get-accumulate and fetch-and-op: old contents replied */
    FY_RMA_AM_CAS,
    FY_RMA_AM_FLUSH, /* reply once everything before it is applied */
    /* Synchronisation with a target on another node (windows that span
     * nodes; no data, no pieces; handled before fy_rma_am_serve): */
    /* op bit 0: exclusive (else shared); FY_RMA_AM_LOCK_QUIET: answered
     * only when refused. Reply 0 or -EBUSY (refused: held by others; in a
     * batch, nothing after it is applied). */
    FY_RMA_AM_LOCK,
    FY_RMA_AM_UNLOCK, /* op as the lock's; reply once released */
    FY_RMA_AM_POST,   /* the origin opened an exposure epoch to us */
    FY_RMA_AM_DONE,   /* the origin completed an access epoch at us */
    /* Large contiguous puts and gets to a target on another node: one
     * piece, no data in the request; the bytes travel as one message of
     * their own with tag 'tag', received straight into the window (PUT)
     * or sent straight from it (GET; a refusal is a reply with tag 'op'
     * instead). Handled before fy_rma_am_serve. */
    FY_RMA_AM_PUT_DIRECT,
    FY_RMA_AM_GET_DIRECT,
    /* Several requests in one packet (to a target on another node, small
     * puts and accumulates held back until the next request to it): nseg
     * items, 'bytes' of them after the header, each a uint32_t length, 4
     * bytes of padding, the request, padding to 8 bytes. */
    FY_RMA_AM_BATCH,
};
#define FY_RMA_AM_LOCK_QUIET 2
/* Contiguous puts from this size go direct to a remote target, gets from
 * FY_RMA_AM_GET_DIRECT_MIN: a put carried in its request costs one copy
 * more and no second message, and at 16-64 KiB ran up to 2.7x faster
 * (bench/README.md, "Small gets and puts between nodes"); a get's answer
 * sent from the window and received into the origin's buffer saves two
 * copies against one from the target's scratch into a reply. */
#define FY_RMA_AM_DIRECT_MIN (64 * 1024)
#define FY_RMA_AM_GET_DIRECT_MIN (16 * 1024)

struct fy_rma_am_hdr {
    uint32_t kind;  /* enum fy_rma_am_kind */
    uint32_t nseg;  /* <= FY_RMA_AM_NSEG */
    uint64_t bytes; /* data bytes the pieces cover */
    int32_t op;     /* MPI_Op (predefined) for ACC/GACC */
    int32_t type;   /* predefined element type for ACC/GACC/CAS */
    uint32_t tag;   /* the reply's tag (GET, GACC, CAS, FLUSH) */
    uint32_t pad;
};

struct fy_rma_am_seg {
    uint64_t addr, len;
};

struct fy_rma_am_reply {
    int32_t err;     /* 0, or why the request it answers was refused */
    int32_t earlier; /* the first error of earlier requests without a reply */
    uint64_t bytes;  /* data bytes following */
};
static_assert(sizeof(struct fy_rma_am_hdr) == 32, "request header layout");
static_assert(sizeof(struct fy_rma_am_seg) == 16, "piece layout");
static_assert(sizeof(struct fy_rma_am_reply) == 16, "reply header layout");

/* Check one request (n bytes at pkt) against this rank's window w and, if
 * every field is valid, apply it; memory outside the window (or its
 * attached regions) is never touched, and a refused request writes
 * nothing. 'scratch' (FY_RMA_AM_CHUNK bytes) receives the reply's data.
 * Returns 0, -ERANGE (a piece outside the window), -EINVAL (type or op),
 * -EPROTO (malformed) or -ENOMEM; *kind_out gets the request's kind (0 if
 * too short to have one), *reply_out the reply's data bytes. */
int fy_rma_am_serve(struct fy_rma_win *w, const void *pkt, uint64_t n,
                    char *scratch, uint32_t *kind_out, uint64_t *reply_out);

/* A PUT_DIRECT or GET_DIRECT request (n bytes at pkt) checked against
 * this rank's window w: 0 with its piece in *sg_out, -ERANGE (outside the
 * window) or -EPROTO (malformed: length, piece count, byte total, a tag
 * outside its range). */
int fy_rma_am_direct_check(const struct fy_rma_win *w, const void *pkt,
                           uint64_t n, struct fy_rma_am_seg *sg_out);
/* The next item of a FY_RMA_AM_BATCH packet of n bytes at pkt; *off is
 * where its length word is (sizeof(struct fy_rma_am_hdr) for the first).
 * Returns 1 with the item (8-aligned in an 8-aligned packet) and its
 * length, *off moved past it; 0 at the end (*off == n); -EPROTO when the
 * item does not fit, is shorter than a request header, or is a batch. */
int fy_rma_am_batch_item(const void *pkt, uint64_t n, uint64_t *off,
                         const void **item, uint64_t *len);

/* Post the window's request receive and hook the progress engine (local).
 * Returns 0 or -ENOMEM. */
int fy_rma_am_init(struct fy_rma_win *w);
/* After the window's closing barrier: drop its receive and replies. */
void fy_rma_am_free(struct fy_rma_win *w);
/* As fy_rma_put/get/acc/cas, for a target reached by active messages.
 * Return 0 or a negative errno; -ERANGE when the target found the access
 * outside its window (nothing written). */
int fy_rma_am_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt);
int fy_rma_am_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt);
int fy_rma_am_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                  struct fy_dtype *rdt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op);
int fy_rma_am_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                  void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr);
/* Windows that span nodes: note a lock on target's window (the target
 * takes it with the epoch's first request to it, am.c's am_lock), release
 * it by request (target < 0: every remote target's, MPI_Win_unlock_all's
 * shared ones, the round trips overlapping), and signal a PSCW post or
 * complete (FY_RMA_AM_POST / FY_RMA_AM_DONE). The unlock's reply also
 * means every earlier request was applied. Return 0 or a negative errno
 * (also kept for fy_rma_am_error). */
int fy_rma_am_lock(struct fy_rma_win *w, int target, bool exclusive);
int fy_rma_am_unlock(struct fy_rma_win *w, int target, bool exclusive);
int fy_rma_am_signal(struct fy_rma_win *w, int target, uint32_t kind);
/* Target side of the lock requests (win.c): try to take this rank's
 * window lock for a remote origin / release it (waking local waiters). */
bool fy_rma_lock_try_local(struct fy_rma_win *w, bool exclusive);
void fy_rma_unlock_local(struct fy_rma_win *w, bool exclusive);
/* Whether the caller is inside the active-message hook (serving a
 * request): waits there must not progress (fy_rma_acc_lock spins). */
bool fy_rma_am_in_hook(void);
/* Wait until 'target' (-1: every target) has applied and acknowledged
 * every request this process sent it. Returns 0 or the first error
 * reported (also kept for fy_rma_am_error). No-op on other windows. */
int fy_rma_am_flush(struct fy_rma_win *w, int target);
/* The first error a flush found since the last call (0 if none); clears
 * it. For synchronisation calls that return nothing. */
int fy_rma_am_error(struct fy_rma_win *w);

/* The optional progress thread (FERRY_RMA_THREAD). want: a window was made
 * (am_window: one served by active messages); start: starts the thread if
 * wanted, turning fy_mt_on on for its lifetime - the window-creating
 * entry point calls it as its last action, so when the call did not take
 * the library lock (fy_mt_on was off) nothing of it runs beside the
 * thread; stop: at finalize, before the core goes down. */
void fy_rma_thread_want(bool am_window);
void fy_rma_thread_start(void);
void fy_rma_thread_stop(void);
/* ---- hand-over (ho.c) -----------------------------------------------------
 * On windows on user memory reached by single copy, operations of up to
 * FERRY_RMA_AM_MAX bytes go to a target that is inside MPI (its progress
 * engine beats) as requests in the window's shared boxes, which it serves
 * from its progress engine; a request it does not take in time is
 * withdrawn and done by single copy. Not thread safe by itself: the
 * window's lock (origin side) and the engine lock (serving) cover it. */
enum fy_rma_ho_state {
    FY_RMA_HO_EMPTY = 0, /* origin's: never used */
    FY_RMA_HO_POSTED,    /* either side's: a request waits */
    FY_RMA_HO_TAKEN,     /* target's: being served */
    FY_RMA_HO_DONE,      /* origin's: served, verdict in err */
    FY_RMA_HO_WITHDRAWN, /* origin's: taken back, done by single copy */
};
/* Set up hand-over on a new window on user memory (local): w->ho when
 * FERRY_RMA_AM_MAX > 0. Returns 0 or -ENOMEM. */
int fy_rma_ho_init(struct fy_rma_win *w);
void fy_rma_ho_free(struct fy_rma_win *w);
/* Complete this origin's request to 'target' (-1: every target); an
 * error goes to fy_rma_ho_error. */
void fy_rma_ho_settle(struct fy_rma_win *w, int target);
/* The first error settling found since the last call (0 if none). */
int fy_rma_ho_error(struct fy_rma_win *w);
/* As fy_rma_put/get/acc/cas for a target on w reached by single copy.
 * Each first settles the origin's previous request to target; then
 * returns -EAGAIN when the operation is not handed over (too large, a
 * layout the boxes do not carry, target outside MPI): the caller does it
 * by single copy. Otherwise 0 or a negative errno (puts and accumulates
 * return once posted; their errors come with the next settle). */
int fy_rma_ho_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt);
int fy_rma_ho_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt);
int fy_rma_ho_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                  struct fy_dtype *rdt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op);
int fy_rma_ho_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                  void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr);
/* Target side: validate the request in box b against this rank's window
 * and apply it (the caller holds the accumulate lock for ACC, GACC and
 * CAS); results go to b->data. Memory outside the window is never
 * touched and a refused request writes nothing. Returns 0, -ERANGE,
 * -EINVAL (type or op) or -EPROTO (malformed). */
int fy_rma_ho_serve(struct fy_rma_win *w, int origin, struct fy_rma_box *b);
/* Box-only kinds: a put or get that origin and target copy together
 * (ho.c, "split copies"); the box carries no data, struct fy_rma_split in
 * its data area says where and how. */
enum { FY_RMA_HO_SPLIT_PUT = 16, FY_RMA_HO_SPLIT_GET };
struct fy_rma_split {
    _Atomic uint64_t next; /* claim cursor: bytes handed out so far */
    uint64_t oaddr;        /* the origin's buffer */
    uint64_t chunk;        /* bytes per claim */
};
/* Whether a request of this kind needs the accumulate lock. */
static inline bool fy_rma_ho_locked_kind(uint32_t kind)
{
    return kind >= FY_RMA_AM_ACC && kind <= FY_RMA_AM_CAS;
}
/* The progress engine's hook for rma (am.c's requests, ho.c's boxes). */
void fy_rma_hook_update(void);
bool fy_rma_am_any(void);
void fy_rma_am_progress(void);
/* Whether [addr, addr + len) lies inside this rank's window memory
 * (attached regions, adjoining ones together, for dynamic windows); false
 * for len 0. */
bool fy_rma_in_window(const struct fy_rma_win *w, uint64_t addr, uint64_t len);
/* Whether [lo, hi) (lo < hi) lies inside the regions tab[0..n) (sorted by
 * base then size, those of non-zero size disjoint): the region holding lo
 * and those that continue it without a gap. O(log n) plus the regions
 * spanned. */
bool fy_rma_regions_cover(const struct fy_rma_region *tab, uint32_t n,
                          uint64_t lo, uint64_t hi);
/* One piece between our 'local' and target's 'remote' by single copy
 * (win.c). Returns 0 or a negative errno. */
int fy_rma_remote_copy(const struct fy_rma_win *w, int target, void *local,
                       uint64_t remote, size_t len, bool get);

/* Copy n bytes to or from window memory in the shared mapping (copy.c):
 * memcpy, or streaming stores from FERRY_RMA_NT_MIN bytes (never below
 * FY_RMA_COPY_SMALL: inline here). */
#define FY_RMA_COPY_SMALL 128
void fy_rma_copy_large(void *dst, const void *src, size_t n);
static inline void fy_rma_copy(void *dst, const void *src, size_t n)
{
    if (n < FY_RMA_COPY_SMALL)
        memcpy(dst, src, n);
    else
        fy_rma_copy_large(dst, src, n);
}

/* ---- the accumulate discipline (atomic.c) -------------------------------
 * Whether w's accumulates use per-element hardware atomics (memory in the
 * shared mapping) rather than the accumulate lock for every element. */
static inline bool fy_rma_acc_atomic(const struct fy_rma_win *w)
{
    return w->in_map;
}
/* count contiguous elements of predefined type dt at taddr of such a
 * window, each combined by hardware atomics (old values to rbuf if set);
 * -EAGAIN when they are not (atomic.c's A1): use fy_rma_acc. */
int fy_rma_acc_flat_shm(const void *obuf, void *rbuf, uint64_t taddr,
                        MPI_Count count, const struct fy_dtype *dt,
                        const struct fy_op *op);
/* fy_rma_acc on such a window, for a target type that is not a pair type:
 * one atomic per eligible element, the accumulate lock for the others.
 * Returns 0 or -ENOMEM. */
int fy_rma_acc_shm(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                   struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                   struct fy_dtype *rdt, int target, uint64_t taddr,
                   MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op);
/* fy_rma_cas on such a window: 0, or -EAGAIN when the element is one the
 * accumulate lock protects (the caller then takes it). */
int fy_rma_cas_shm(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                   void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr);
/* The target's accumulate lock (slot[target].acc); blocks, progressing. */
void fy_rma_acc_lock(struct fy_rma_win *w, int target);
void fy_rma_acc_unlock(struct fy_rma_win *w, int target);
/* Whether count elements of dt are 'bytes' contiguous bytes from the
 * buffer's start (no gaps, no offset): usable as packed data. */
bool fy_rma_flat(MPI_Count count, const struct fy_dtype *dt, MPI_Count bytes);

#endif /* FY_RMA_H */
