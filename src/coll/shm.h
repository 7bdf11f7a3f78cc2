/* SPDX-License-Identifier: MIT */
/* Node-level collectives over shared memory (coll/shm.c) and the layout of
 * each rank's collective area in the segment. */
#ifndef FY_COLL_SHM_H
#define FY_COLL_SHM_H

#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "coll/coll.h"
#include "dtype/dtype.h"
#include "shm/shm.h"
#include "util/util.h"

/* One publication of a rank to the members of a collective. */
#define FY_COLL_DATA 32768u
#define FY_COLL_CELLS 2u
#define FY_COLL_INLINE (FY_CACHELINE - 3 * sizeof(uint64_t))
/* Thread slots (coll/shm.c): under MPI_THREAD_MULTIPLE this many threads
 * of a rank may be in blocking collectives over shared memory at once,
 * each with FY_COLL_CELLS cells of its own (pages are touched only by the
 * slots used). At most 32 (a bit mask holds them). */
#define FY_COLL_TSLOTS 16u
struct fy_coll_cell {
    /* Written by the owner only; published by 'tag' (release). */
    alignas(FY_CACHELINE) _Atomic uint64_t tag; /* ctx+1 | seq | step; 0 none */
    uint64_t addr; /* owner's buffer, for single-copy readers */
    uint64_t len;  /* bytes readable there (a reader reads no more) */
    /* A publication of up to FY_COLL_INLINE bytes, in the line its
     * readers fetch for the tag anyway (coll/shm.c, payload()). */
    unsigned char inl[FY_COLL_INLINE];
    /* Set by the owner before it publishes; each reader decrements once. */
    alignas(FY_CACHELINE) _Atomic uint32_t readers;
    /* Set by the owner while it waits for readers == 0 (cleared when it
     * claims the cell again): only then does the last reader wake it. */
    _Atomic uint32_t owner_waits;
    alignas(FY_CACHELINE) unsigned char data[FY_COLL_DATA]; /* owner only */
};
static_assert(offsetof(struct fy_coll_cell, tag) == 0 &&
                  offsetof(struct fy_coll_cell, readers) == FY_CACHELINE &&
                  offsetof(struct fy_coll_cell, data) == 2 * FY_CACHELINE,
              "owner's line, readers' line, data");
static_assert(sizeof(struct fy_coll_cell) == 2 * FY_CACHELINE + FY_COLL_DATA,
              "cells are whole lines");

/* One publication of a rank in a nonblocking collective (shm_nb.c): each
 * rank has one slot per context (FY_CTX_MAX / 2 of them, the "ncoll"
 * region), so the collectives of different communicators never wait for
 * each other's room. Small data inline, larger read from the owner's
 * buffer at addr (single copy). Same protocol as the cells. Readers
 * follow addr (inline or not) and len (offsets of the blocks, what is
 * there), whatever their own counts say (shm_nb.c). */
#define FY_COLL_SLOT_DATA 384u
#define FY_COLL_SLOTS (FY_CTX_MAX / 2u)
struct fy_coll_slot {
    alignas(FY_CACHELINE) _Atomic uint64_t tag; /* ctx+1 | seq | step; 0 none */
    uint64_t addr; /* owner's image, read by address; 0: inline in data */
    /* The owner's byte count (of each block, in the P-block images of
     * scatter and all-to-all), which readers compare with theirs
     * (fy_coll_sig). */
    uint64_t len;
    alignas(FY_CACHELINE) _Atomic uint32_t readers;
    _Atomic uint32_t owner_waits; /* as in the cells */
    alignas(FY_CACHELINE) unsigned char data[FY_COLL_SLOT_DATA];
};
static_assert(sizeof(struct fy_coll_slot) ==
                  2 * FY_CACHELINE + FY_COLL_SLOT_DATA,
              "slots are whole lines");
#define FY_COLL_NB_REGION "ncoll"

/* The arrival counters of the barriers when ranks outnumber cores: one
 * line per local rank and context, used by the line of the
 * communicator's member 0 (the "cbar" region). Each member reads 'gen',
 * then counts itself into 'count'; the last to arrive sets count back to
 * 0 and advances gen, which releases the others: no member need run
 * between the last arrival and the release (fy_coll_bar_arrive). Index
 * FY_COLL_BAR_BLOCKING for MPI_Barrier, FY_COLL_BAR_NB for MPI_Ibarrier:
 * a blocking barrier may run while a nonblocking one is pending on the
 * same communicator, and the two must count apart. */
enum { FY_COLL_BAR_BLOCKING, FY_COLL_BAR_NB };
struct fy_coll_bar {
    alignas(FY_CACHELINE) _Atomic uint32_t count[2]; /* arrived so far */
    _Atomic uint32_t gen[2];                         /* barriers completed */
    /* In the line of context 0 only: how many thread slots this rank has
     * published in (the highest used + 1; 0 or 1: slot 0 only), so that
     * readers search those slots' cells (coll/shm.c). Written by the rank
     * only, and only upwards; readers bound it by FY_COLL_TSLOTS. */
    _Atomic uint32_t more_slots;
};
static_assert(FY_COLL_TSLOTS <= 32, "thread slots fit a 32-bit mask");
static_assert(sizeof(struct fy_coll_bar) == FY_CACHELINE &&
                  offsetof(struct fy_coll_bar, gen) == 8 &&
                  offsetof(struct fy_coll_bar, more_slots) == 16,
              "one line per pair of counters");
#define FY_COLL_BAR_REGION "cbar"

/* The flag lines of the lean collectives (coll/shm.c, "Lean
 * collectives"): with a core for every rank, a barrier and the
 * collectives of at most FY_COLL_FLAG_DATA bytes per member cross the
 * node once, through one line per rank and context (the "cflag" region;
 * contexts from FY_COLL_FLAG_CTXS on take the cells), and the
 * nonblocking ones (coll/shm_nb.c) through another. 'seq' counts the
 * rank's arrivals in the lean collectives of the context, 'done' those it
 * has finished (it reads nothing of that collective any more); both only
 * grow, over every communicator that ever has the context. The payload
 * of arrival v is data[v & 1]. Written by the owner only. */
#define FY_COLL_FLAG_CTXS 256u
#define FY_COLL_FLAG_DATA 24u
struct fy_coll_flag {
    alignas(FY_CACHELINE) _Atomic uint64_t seq;
    unsigned char data[2][FY_COLL_FLAG_DATA];
    /* The owner's byte count of payload v (len[v & 1]), which readers
     * compare with theirs (fy_coll_sig): the root's message, a
     * contribution, a block. */
    uint32_t len[2];
    /* Own line: written at the end of every collective, read only by a
     * member about to reuse a payload and by MPI_Comm_free. */
    alignas(FY_CACHELINE) _Atomic uint64_t done;
};
static_assert(offsetof(struct fy_coll_flag, data) == 8 &&
                  offsetof(struct fy_coll_flag, len) == 56 &&
                  offsetof(struct fy_coll_flag, done) == FY_CACHELINE &&
                  sizeof(struct fy_coll_flag) == 2 * FY_CACHELINE,
              "arrivals and payloads in one line, completions in the next");
#define FY_COLL_FLAG_REGION "cflag"
enum { FY_COLL_FLAG_BLOCKING, FY_COLL_FLAG_NB };

/* Communicators of at most this many members (a barrier reads P - 1
 * lines). */
#define FY_COLL_LEAN_MAX 8

/* Local rank 'local''s flag line of context index ctxi (c->ctx / 2,
 * below FY_COLL_FLAG_CTXS), for the blocking or nonblocking collectives. */
static inline struct fy_coll_flag *fy_coll_flag_of(int local, uint32_t ctxi,
                                                   int which);

/* Each local rank's collective area: the "coll" region, FY_COLL_CELLS
 * cells per thread slot, FY_COLL_TSLOTS slots per rank. fy_coll_shm_declare is
 * a fy_shm_declare_fn: MPI_Init hands it to fy_p2p_init, which lays the segment
 * out. Returns 0 or the allocator's negative errno. */
#define FY_COLL_REGION "coll"
struct fy_shm_layout;
int fy_coll_shm_declare(struct fy_shm_layout *lay);

struct fy_coll_shm {
    bool on; /* FERRY_COLL allows it and the node has a segment */
    struct fy_coll_cell *cells; /* "coll": [local][TSLOTS x CELLS] */
    struct fy_coll_slot *slots; /* "ncoll": [local][FY_COLL_SLOTS] */
    struct fy_coll_bar *bars;   /* "cbar": [local][FY_COLL_SLOTS] */
    struct fy_coll_flag *flags; /* "cflag": [local][FY_COLL_FLAG_CTXS][2] */
    bool cma;                   /* process_vm_readv works job-wide */
    uint64_t cma_min;   /* broadcasts from this size read the root's buffer */
    uint64_t slice_min; /* reductions from this size combine slices */
    /* reductions among more than two members from this size read the
     * members' buffers (reduce_direct) */
    uint64_t direct_min;
};
extern struct fy_coll_shm fy_coll_shm;

/* A receive buffer's address that a root publishes for the others to
 * write into (a reduce's result slices, a gather's blocks), in the 16
 * bytes at 'words' of its publication (a cell's inline bytes, a slot's
 * data), with a check word over the address, the tag and the
 * publication's address and length. The one thing read from shared
 * memory that steers a write into another process travels with it, so a
 * scribbled address (a stray write, not a forger that recomputes it)
 * ends the job as malformed instead. */
static inline uint64_t fy_coll_raddr_check(uint64_t raddr, uint64_t tag,
                                           uint64_t addr, uint64_t len)
{
    return FY_SHM_SIG(raddr, tag, addr, len, 0x5244u /* "RD" */);
}

/* The root's side, before it publishes. */
static inline void fy_coll_raddr_put(unsigned char *words, uint64_t tag,
                                     const void *rbuf, uint64_t addr,
                                     uint64_t len)
{
    uint64_t raddr = (uint64_t)(uintptr_t)rbuf;
    uint64_t chk = fy_coll_raddr_check(raddr, tag, addr, len);
    memcpy(words, &raddr, sizeof(raddr));
    memcpy(words + sizeof(raddr), &chk, sizeof(chk));
}

/* The others' side: the address, both words read once and checked
 * against the publication's address and length as read once by the
 * caller; a failed check ends the job ('what': the collective, 'root':
 * its world rank, for the message). */
static inline uint64_t fy_coll_raddr_take(const unsigned char *words,
                                          uint64_t tag, uint64_t addr,
                                          uint64_t len, const char *what,
                                          int root)
{
    uint64_t raddr, chk;
    memcpy(&raddr, words, sizeof(raddr));
    memcpy(&chk, words + sizeof(raddr), sizeof(chk));
    if (chk != fy_coll_raddr_check(raddr, tag, addr, len))
        fy_fatal(1,
                 "malformed %s publication from rank %d on the shared "
                 "segment (the address of its receive buffer fails its "
                 "check); a rank wrote over shared control data",
                 what, root);
    return raddr;
}

/* A gatherv root's ask, its receive type one run (coll/shm.c,
 * shm_nb.c): entry r of the table in its publication's data tells member
 * r where in the root's memory to write its block and how many bytes -
 * FY_COLL_VASK_ENT bytes: the address and check word of
 * fy_coll_raddr_put (over the member's index and the length), then the
 * length. fy_coll_gatherv_asks() says whether the root asks: its receive
 * type is one run, the table fits its publication (cap bytes), and some
 * block is beyond what a member publishes inline (the root's counts; a
 * member decides by its own, and the root follows each member's choice);
 * fy_coll_vask_fill() writes the table (tag: the ask's). */
#define FY_COLL_VASK_ENT 24
bool fy_coll_gatherv_asks(const struct fy_coll_layout *dst, int P, int me,
                          uint64_t cap);
void fy_coll_vask_fill(unsigned char *data, const struct fy_coll_layout *dst,
                       int P, uint64_t tag);

/* Member r's entry: the address (*len: the bytes), each word read once
 * and checked; a failed check ends the job (root: its world rank). */
static inline uint64_t fy_coll_vask_take(const unsigned char *data, int r,
                                         uint64_t tag, int root, uint64_t *len)
{
    const unsigned char *w = data + (size_t)r * FY_COLL_VASK_ENT;
    memcpy(len, w + 2 * sizeof(uint64_t), sizeof(*len));
    return fy_coll_raddr_take(w, tag, (uint64_t)r, *len, "gatherv", root);
}

static inline struct fy_coll_flag *fy_coll_flag_of(int local, uint32_t ctxi,
                                                   int which)
{
    return &fy_coll_shm.flags[((uint64_t)local * FY_COLL_FLAG_CTXS + ctxi) * 2 +
                              (unsigned)which];
}

/* The barrier counters' line of local rank 'local' for context index
 * ctxi (c->ctx / 2, below FY_COLL_SLOTS). */
static inline struct fy_coll_bar *fy_coll_bar_of(int local, uint32_t ctxi)
{
    return &fy_coll_shm.bars[(uint64_t)local * FY_COLL_SLOTS + ctxi];
}

/* Count this member into barrier counter 'which' of line b (P members,
 * world[] their world ranks, me ours), having read *gen from it first
 * (acquire). Returns true if we were the last: then the others are
 * released and woken. Else wait until b->gen[which] != *gen. A count
 * found at P or more (a scribbled segment) ends the job. */
bool fy_coll_bar_arrive(struct fy_coll_bar *b, int which, int P,
                        const int *world, int me, uint32_t gen);

/* MPI_THREAD_MULTIPLE: a blocking collective over shared memory keeps
 * its state (member tables, its cells, what a wait is for) in a thread
 * slot (coll/shm.c, struct coll_thread), and a waiting thread gives the
 * engine lock up, so other threads of the rank may run collectives on
 * other communicators meanwhile, from MPI calls or from inside the library
 * (Comm_split, Win_fence, ...). Every call of a blocking fy_coll_shm_*
 * goes through FY_COLL_SHM_ONE, which holds a slot for the call (a nested
 * call keeps its thread's); a thread finding all FY_COLL_TSLOTS slots
 * taken ends the job with a clear error. Below MULTIPLE, one load and a
 * predicted branch, and slot 0 serves everything. */
bool fy_coll_shm_enter(struct fy_comm *c);
void fy_coll_shm_leave(void);
#define FY_COLL_SHM_ONE(c, call)                                               \
    __extension__({                                                            \
        bool in_ = fy_coll_shm_enter(c);                                       \
        int rc1_ = (call);                                                     \
        if (in_)                                                               \
            fy_coll_shm_leave();                                               \
        rc1_;                                                                  \
    })

/* Once the segment and the mechanisms are up (MPI_Init). Returns 0,
 * -EINVAL for a malformed FERRY_COLL or -EPROTO when the segment has no
 * "coll" region (logged). */
int fy_coll_shm_init(void);
void fy_coll_shm_finalize(void);

/* Before c is freed: wait until our publications on c are read, so that
 * a later communicator with the same context never sees them. */
void fy_coll_shm_comm_free(struct fy_comm *c);
/* Whether c (all members on this node) may run lean collectives: no rank
 * sleeps, at most FY_COLL_LEAN_MAX members, a context with flag lines. */
bool fy_coll_lean_ok(const struct fy_comm *c);
/* What a member contributes to the base agreement: the larger of its
 * line's counts (a broadcast's receivers finish without arriving, so done
 * may be past seq; both must go on growing). */
static inline uint64_t fy_coll_lean_count(const struct fy_coll_flag *f)
{
    uint64_t s = atomic_load_explicit(&f->seq, memory_order_relaxed);
    uint64_t d = atomic_load_explicit(&f->done, memory_order_relaxed);
    return s > d ? s : d;
}
/* Start st from the agreed base (the members' largest count); one too
 * large to grow from can only come from a scribbled line: the job ends. */
void fy_coll_lean_start(struct fy_comm_lean *st, uint64_t base);
/* We saw every other member arrive at v: all are done with v - 1. */
static inline void fy_coll_lean_seen_all(struct fy_comm_lean *st, uint64_t v)
{
    if (st->known < v - 1)
        st->known = v - 1;
}
/* Before c is freed or its context reused: wait until every other member
 * has finished our last lean collective on c (st: c->flag with
 * FY_COLL_FLAG_BLOCKING, c->nbflag with FY_COLL_FLAG_NB). */
void fy_coll_lean_drain(struct fy_comm *c, const struct fy_comm_lean *st,
                        int which);
/* Free the nonblocking machines kept for reuse (fy_coll_caches_drain). */
void fy_coll_shm_nb_caches_drain(void);

/* Returned by the algorithms below when they do not apply (a member on
 * another node, a datatype they do not handle, FERRY_COLL=p2p): the
 * caller runs the point-to-point algorithm. Otherwise 0 or a negative
 * errno, as the fy_coll_* functions. Blocking collectives only. */
#define FY_COLL_SHM_NO 1
int fy_coll_shm_barrier(struct fy_comm *c);
int fy_coll_shm_bcast(void *buf, MPI_Count count, struct fy_dtype *dt, int root,
                      struct fy_comm *c);
int fy_coll_shm_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op, int root,
                       struct fy_comm *c);
int fy_coll_shm_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                          struct fy_dtype *dt, struct fy_op *op,
                          struct fy_comm *c);
/* Blocks of at most one cell (all-to-all, scatter: all blocks together);
 * larger ones take the point-to-point path. */
int fy_coll_shm_allgather(const void *sbuf, MPI_Count scount,
                          struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct fy_dtype *rdt, struct fy_comm *c);
int fy_coll_shm_alltoall(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct fy_dtype *rdt, struct fy_comm *c);
int fy_coll_shm_gather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                       void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                       int root, struct fy_comm *c);
int fy_coll_shm_scatter(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct fy_dtype *rdt, int root, struct fy_comm *c);

/* The v and w forms: every block goes through the publisher's cell when
 * it fits the room left there, else it is read from the publisher's
 * buffer with one process_vm_readv. Gatherv, scatterv, alltoallv and
 * alltoallw run here only with single copy (no member knows every block's
 * size), allgatherv also without when all blocks fit a cell. */
int fy_coll_shm_gatherv(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf,
                        struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                        struct fy_dtype *rdt, int root, struct fy_comm *c);
int fy_coll_shm_scatterv(const void *sbuf, struct fy_coll_vec scounts,
                         struct fy_coll_vec displs, struct fy_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                         int root, struct fy_comm *c);
int fy_coll_shm_allgatherv(const void *sbuf, MPI_Count scount,
                           struct fy_dtype *sdt, void *rbuf,
                           struct fy_coll_vec rcounts,
                           struct fy_coll_vec displs, struct fy_dtype *rdt,
                           struct fy_comm *c);
int fy_coll_shm_alltoallv(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                          void *rbuf, struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                          struct fy_comm *c);
int fy_coll_shm_alltoallw(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls,
                          struct fy_dtype *const *sdts, void *rbuf,
                          struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls,
                          struct fy_dtype *const *rdts, struct fy_comm *c);
/* Reduce-scatter and scans on contiguous types: rounds of one cell per
 * contribution, combined in rank order (non-commutative ops keep MPI's
 * order; every run gives the same bits). */
int fy_coll_shm_reduce_scatter_block(const void *sbuf, void *rbuf,
                                     MPI_Count count, struct fy_dtype *dt,
                                     struct fy_op *op, struct fy_comm *c);
int fy_coll_shm_reduce_scatter(const void *sbuf, void *rbuf,
                               struct fy_coll_vec rcounts, struct fy_dtype *dt,
                               struct fy_op *op, struct fy_comm *c);
int fy_coll_shm_scan(const void *sbuf, void *rbuf, MPI_Count count,
                     struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c);
int fy_coll_shm_exscan(const void *sbuf, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op,
                       struct fy_comm *c);

/* Nonblocking collectives over shared memory (shm_nb.c), started as a
 * schedule running a state machine (fy_sched_set_mach) that every test,
 * wait and progress pass advances without ever waiting for another rank.
 * Returns FY_COLL_SHM_NO when the collective takes the point-to-point
 * schedule (same rule as above: only what every member agrees on), else
 * 0 with *nb set, or a negative errno. */
int fy_coll_shm_ibarrier(struct fy_comm *c, struct fy_sched **nb);
int fy_coll_shm_ibcast(void *buf, MPI_Count count, struct fy_dtype *dt,
                       int root, struct fy_comm *c, struct fy_sched **nb);
/* root < 0: allreduce. */
int fy_coll_shm_ireduce(const void *sbuf, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op, int root,
                        struct fy_comm *c, struct fy_sched **nb);
int fy_coll_shm_iallgather(const void *sbuf, MPI_Count scount,
                           struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                           struct fy_dtype *rdt, struct fy_comm *c,
                           struct fy_sched **nb);
int fy_coll_shm_ialltoall(const void *sbuf, MPI_Count scount,
                          struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct fy_dtype *rdt, struct fy_comm *c,
                          struct fy_sched **nb);
/* Blocks up to a slot (scatter: all blocks together) inline, larger ones
 * by address. */
int fy_coll_shm_igather(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct fy_dtype *rdt, int root, struct fy_comm *c,
                        struct fy_sched **nb);
int fy_coll_shm_iscatter(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct fy_dtype *rdt, int root, struct fy_comm *c,
                         struct fy_sched **nb);
/* The v forms: a table of block descriptors in the slot, each block
 * inline after it while it fits, else by address (see shm_nb.c for when
 * they run here). */
int fy_coll_shm_igatherv(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf,
                         struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                         struct fy_dtype *rdt, int root, struct fy_comm *c,
                         struct fy_sched **nb);
int fy_coll_shm_iscatterv(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec displs, struct fy_dtype *sdt,
                          void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                          int root, struct fy_comm *c, struct fy_sched **nb);
int fy_coll_shm_iallgatherv(const void *sbuf, MPI_Count scount,
                            struct fy_dtype *sdt, void *rbuf,
                            struct fy_coll_vec rcounts,
                            struct fy_coll_vec displs, struct fy_dtype *rdt,
                            struct fy_comm *c, struct fy_sched **nb);
int fy_coll_shm_ialltoallv(const void *sbuf, struct fy_coll_vec scounts,
                           struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                           void *rbuf, struct fy_coll_vec rcounts,
                           struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                           struct fy_comm *c, struct fy_sched **nb);
/* Reduce-scatter (counts.p NULL: 'count' each, the _block form) of a
 * vector up to a slot, inline: every member publishes its whole vector
 * and combines its own block from all of them, in rank order. */
int fy_coll_shm_ireduce_scatter(const void *sbuf, void *rbuf,
                                struct fy_coll_vec counts, MPI_Count count,
                                struct fy_dtype *dt, struct fy_op *op,
                                struct fy_comm *c, struct fy_sched **nb);
int fy_coll_shm_ialltoallw(const void *sbuf, struct fy_coll_vec scounts,
                           struct fy_coll_vec sdispls,
                           struct fy_dtype *const *sdts, void *rbuf,
                           struct fy_coll_vec rcounts,
                           struct fy_coll_vec rdispls,
                           struct fy_dtype *const *rdts, struct fy_comm *c,
                           struct fy_sched **nb);
/* Scan (ex: exscan) of a vector up to a slot, inline. */
int fy_coll_shm_iscan(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op, bool ex,
                      struct fy_comm *c, struct fy_sched **nb);
/* From fy_coll_shm_comm_free: drain our slot of c's context if no
 * nonblocking collective of ours is still running there (else the last
 * one drains it when it is freed). */
void fy_coll_shm_nb_comm_free(struct fy_comm *c);

/* Blocks of a collective's buffers, shared by the blocking (shm.c) and
 * nonblocking (shm_nb.c) node-level algorithms. */

/* The v and w forms' publications start with a table of descriptors, one
 * per destination block (see shm.c). */
struct fy_coll_desc {
    uint64_t addr; /* owner's address of the block's bytes, or 0: inline */
    uint64_t off;  /* inline: offset in the publication's data */
    uint64_t len;  /* bytes published */
};
static_assert(sizeof(struct fy_coll_desc) == 24, "three words");

/* Mismatched counts (an erroneous program: MPI has the type signatures
 * of a collective agree on every member). Every publication carries its
 * owner's byte count - the root's message, a contribution, a block - and
 * a reader compares it with its own: 0 when they agree; -EMSGSIZE
 * (MPI_ERR_TRUNCATE) when more was published than the reader takes (it
 * takes what fits); -EBADMSG (MPI_ERR_COUNT) when less (it takes what is
 * there and leaves the rest of its buffer alone). Readers follow the
 * publisher's count for the shape of the collective (how many chunks,
 * where the bytes lie), so a mismatch ends the collective on every member
 * with the same steps taken. Counts on both sides of a size at which the
 * algorithm changes (FY_COLL_FLAG_DATA with a core per rank, a cell
 * between two ranks) are not caught: the members then run different
 * algorithms. */
static inline int fy_coll_sig(uint64_t theirs, uint64_t mine)
{
    return theirs == mine ? 0 : theirs > mine ? -EMSGSIZE : -EBADMSG;
}

/* Fill a publication's data (cap bytes at data) with the descriptors of
 * blocks 0..n-1 of l (block 'skip' left empty: nobody reads it). Blocks
 * go inline while they fit; the others by address when single copy works
 * (non-contiguous ones packed into *tmp_out, to free once the readers are
 * done), else they are published empty and -EMSGSIZE is returned (only
 * an erroneous program gets there: callers run here only when every
 * block fits or single copy works). *by_addr_out says whether a reader
 * will read our memory (then the publisher waits for its readers before
 * it finishes). Returns 0 or -EMSGSIZE; out of memory ends the job. */
int fy_coll_put_blocks(unsigned char *data, uint64_t cap,
                       const struct fy_coll_layout *l, int n, int skip,
                       void **tmp_out, bool *by_addr_out);
/* Read block i of the publication at data (cap bytes) of local rank
 * 'local' (world rank 'world') into count elements of dt at buf: what
 * its descriptor says was published, no more than our count. Returns 0,
 * -EMSGSIZE when more was published than we take (we take what fits, as
 * a message would be truncated), -EPROTO for a descriptor pointing
 * outside the publication, -ENOMEM. */
int fy_coll_take_block(int local, int world, const unsigned char *data,
                       uint64_t cap, int i, void *buf, MPI_Count count,
                       const struct fy_dtype *dt);

/* Pack count elements of dt at buf into dst (at most cap bytes): 0, or
 * -EMSGSIZE when they do not fit (what fits is packed, as a message would
 * deliver). */
static inline int fy_coll_put_block(void *dst, uint64_t cap, const void *buf,
                                    MPI_Count count, const struct fy_dtype *dt)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    uint64_t n = FY_MIN(bytes, cap);
    if (n > 0) {
        if (dt->contig)
            memcpy(dst, buf, (size_t)n);
        else
            fy_dtype_pack_range(buf, count, dt, 0, (MPI_Count)n, dst);
    }
    return bytes > cap ? -EMSGSIZE : 0;
}

/* Unpack the first n packed bytes at src (no more than count elements of
 * dt hold) into buf: what a reader takes of a shorter or longer
 * publication (fy_coll_sig). */
static inline void fy_coll_get_bytes(void *buf, MPI_Count count,
                                     const struct fy_dtype *dt, const void *src,
                                     uint64_t n)
{
    if (n == 0)
        return;
    if (dt->contig)
        memcpy(buf, src, (size_t)n);
    else
        fy_dtype_unpack(src, (MPI_Count)n, buf, count, dt);
}

/* Unpack count elements of dt from the packed bytes at src into buf. */
static inline void fy_coll_get_block(void *buf, MPI_Count count,
                                     const struct fy_dtype *dt, const void *src)
{
    fy_coll_get_bytes(buf, count, dt, src,
                      (uint64_t)count * (uint64_t)dt->size);
}

/* Block i of count elements of dt in buf. */
static inline char *fy_coll_block_at(const void *buf, int i, MPI_Count count,
                                     const struct fy_dtype *dt)
{
    return (char *)buf + (MPI_Aint)i * count * dt->extent;
}

/* An all-to-all's P blocks of ours packed back to back into out, block r
 * (for member r) at r * rbytes: from sbuf, or in place from rbuf with the
 * receive layout. 0, or the first block's -EMSGSIZE (what fits is packed,
 * as fy_coll_put_block does). */
static inline int fy_coll_put_alltoall(unsigned char *out, uint64_t rbytes,
                                       int P, const void *sbuf,
                                       MPI_Count scount,
                                       const struct fy_dtype *sdt,
                                       const void *rbuf, MPI_Count rcount,
                                       const struct fy_dtype *rdt)
{
    int err = 0;
    for (int r = 0; r < P; r++) {
        unsigned char *at = out + (uint64_t)r * rbytes;
        int rc = sbuf == MPI_IN_PLACE
                     ? fy_coll_put_block(at, rbytes,
                                         fy_coll_block_at(rbuf, r, rcount, rdt),
                                         rcount, rdt)
                     : fy_coll_put_block(at, rbytes,
                                         fy_coll_block_at(sbuf, r, scount, sdt),
                                         scount, sdt);
        if (!err)
            err = rc;
    }
    return err;
}

#endif /* FY_COLL_SHM_H */
