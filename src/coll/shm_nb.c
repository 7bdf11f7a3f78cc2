/* SPDX-License-Identifier: MIT */
/* Nonblocking collectives over shared memory: MPI_Ibarrier, Ibcast,
 * Ireduce, Iallreduce, Iallgather, Ialltoall, Igather, Iscatter, Igatherv,
 * Iscatterv, Iallgatherv, Ialltoallv, Ialltoallw, Ireduce_scatter(_block),
 * Iscan and Iexscan (and the persistent forms, which start them) on a
 * communicator whose members all share this node run the node-level
 * algorithms of shm.c as state machines, advanced by every test, wait and
 * progress pass and never waiting for another rank inside one.
 * Small data goes through the publisher's slot (written once, read by all);
 * large data (from FERRY_COLL_CMA_MIN) is read by each reader straight from
 * the publisher's buffer with one process_vm_readv (single copy), and the
 * large reductions combine a slice each, in rank order. Sizes between take
 * the point-to-point schedules (by_addr()). The v forms describe their
 * blocks at the head of the slot, as shm.c's do in a cell.
 *
 * Invariants (besides those of shm.c's cells, which the slots share:
 * owner-only writes, reuse at readers == 0, distinct live tags; what is
 * read from a slot or flag line steers a copy only within the reader's
 * buffer and the slot or line, see below):
 * - Every rank has one slot per context (struct fy_coll_slot), used only
 *   by the nonblocking collectives of the communicator holding that
 *   context. The blocking ones use the cells: a blocking collective never
 *   waits for room a nonblocking one holds, and collectives of different
 *   communicators (which MPI lets ranks start in different orders) never
 *   wait for each other.
 * - On one communicator the nonblocking collectives run one at a time in
 *   the order they were started (a ticket per context): every member
 *   starts them in the same order (MPI), so the one running here is the
 *   one running, or next to run, everywhere, and the slot holds one
 *   publication at a time. A collective finishes only once it needs
 *   nothing more from anyone; a publication others read by address is
 *   drained before it finishes (the buffer is the program's again), an
 *   inline one at the next publication, at MPI_Comm_free or when the last
 *   reference to the communicator goes with the collective's schedule.
 * - The path (here or the point-to-point schedule; inline or by address;
 *   whole or slices) depends only on what every member agrees on: member
 *   count and places, the data's size in bytes (the receive side's where
 *   they may differ), MPI_IN_PLACE (all or none) and the job-wide
 *   settings (FERRY_COLL, single copy).
 * - One rank, one thread (the MPI layer serialises calls): the tickets
 *   and machines are this process's only.
 * - Mismatched counts (coll/shm.h, fy_coll_sig): every publication says
 *   its owner's byte count - the slot's len (per block for the P-block
 *   images of scatter and all-to-all), a flag line's len[v & 1] - and
 *   addr says where the bytes lie (0: inline in the slot). A reader takes
 *   what both its count and the publication hold, where the owner put it
 *   (inline or by address as the owner chose, blocks at the owner's
 *   stride), never past the slot or line, and keeps fy_coll_sig of the
 *   two counts as its error. Reductions combine the elements every
 *   contribution holds (the rest of the result is left alone). No step
 *   depends on what was read, so every member takes the same steps and
 *   the communicator goes on; only counts on both sides of a size where
 *   the path changes (lean, inline, by address, point-to-point, whole or
 *   sliced) are not caught. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "chan/chan.h"
#include "coll/coll_int.h"
#include "coll/shm.h"
#include "shm/shm.h"
#include "util/copy.h"
#include "util/objcache.h"
#include "xfer/xfer.h"

enum nb_kind {
    NB_BARRIER,
    NB_BCAST,
    NB_REDUCE,
    NB_ALLGATHER,
    NB_ALLTOALL,
    NB_GATHER,
    NB_SCATTER,
    NB_GATHERV,
    NB_SCATTERV,
    NB_ALLGATHERV,
    NB_ALLTOALLV,
    NB_SCAN
};

struct nb {
    enum nb_kind kind;
    struct fy_comm *c; /* the schedule holds the reference */
    uint32_t seq;      /* collective number on c */
    uint32_t ctxi;     /* slot index: c->ctx / 2 */
    uint32_t ticket;   /* our turn among c's nonblocking collectives */
    bool turned;       /* our turn came (tickets advance once) */
    bool ended;        /* the ticket was handed on */
    int P, me, root;   /* root < 0: all members get the result */
    int *loc, *world;  /* members as local and world ranks */
    int pc;            /* where the machine resumes */
    int i;             /* loop index across resumptions */
    int err;           /* first error */
    bool inl;          /* our data inline in our slot (else by address) */
    bool whole;        /* allreduce by address: whole vectors, no slices */
    bool spread;       /* reduce by address: a slice per member, written
                          into the root's rbuf (run_reduce_large) */
    bool rscat;        /* reduce-scatter by address: our block [blk0,
                          blk1) of every input (run_reduce_large) */
    bool ask;          /* gather's root: the others write their blocks */
    bool ex;           /* exclusive scan */
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    struct fy_dtype *sdt, *rdt;
    struct fy_op *op;
    uint64_t bytes; /* per publication's block */
    MPI_Count m;    /* reductions: elements every contribution so far holds */
    /* Sliced allreduce: the count the slices are cut from (member P-1's),
     * and the least count of any member (ours and those published). */
    MPI_Count cut, least;
    void *tmp, *acc, *part;           /* temporaries */
    const struct fy_coll_slot **pubs; /* small reductions: by rank */
    /* The v forms: layouts of the blocks published (src) and read (dst),
     * their counts and displacements copied into vec. */
    struct fy_coll_layout src, dst;
    MPI_Aint *vec;
    /* Ialltoallw: every block's datatype, the send side's then the
     * receive side's (2P, retained while the collective runs). */
    struct fy_dtype **dts;
    /* What the last step stopped at, for nb_visible(): a publication
     * (tag wtag) in slot wslot, or (wtag 0) our slot wslot drained;
     * NULL: nothing another rank sets (our turn on c). */
    const struct fy_coll_slot *wslot;
    uint64_t wtag;
    /* And, waiting for that publication, our slot drained too (a gather's
     * member: its block read, or the root asks it to write; NULL: no). */
    const struct fy_coll_slot *wdrain;
    /* Or the barrier counters' line whose nonblocking gen we wait to
     * move from wgen (NULL: not waiting there). */
    const struct fy_coll_bar *wbar;
    uint32_t wgen;
    /* Lean collectives: this one is (its arrival v; agree: the count
     * agreed so far at the first on c), and the flag word we wait to reach
     * wv (NULL: not waiting there). */
    bool lean;
    uint64_t v, agree;
    _Atomic uint64_t *wflag;
    uint64_t wv;
    int loc_small[16];        /* loc and world for up to 8 members */
    size_t acc_cap, part_cap; /* acc and part from scratch_get() */
    /* A spread reduce's member: the root's publication of its input,
     * held (not done) until our slice is written into its rbuf at raddr,
     * whose bytes (rlen, as checked) bound the write. */
    const struct fy_coll_slot *rpub;
    uint64_t raddr, rlen;
    MPI_Count blk0, blk1; /* rscat: our block of the vector */
};

/* Allreduces by address of this many bytes and more combine a slice per
 * member. Below, every member combining everything costs one round of
 * publications instead of two, which is what counts when ranks share
 * cores (bench_coll, 4 ranks on 2 cores, 4 KiB: slices took 2-3x the
 * point-to-point schedule's time). */
#define FY_COLL_NB_SLICE_MIN (64u << 10)

/* Machines kept for reuse (util/objcache.h). */
static struct fy_objcache s_nb_cache = {.size = sizeof(struct nb)};

static void scratch_drain(void);

void fy_coll_shm_nb_caches_drain(void)
{
    fy_objcache_drain(&s_nb_cache);
    scratch_drain();
}

/* Nonblocking collectives started and finished per context. */
static uint32_t s_issued[FY_COLL_SLOTS], s_finished[FY_COLL_SLOTS];

static struct fy_coll_slot *slot_of(int local, uint32_t ctxi)
{
    return &fy_coll_shm.slots[(uint64_t)local * FY_COLL_SLOTS + ctxi];
}

static struct fy_coll_slot *mine(const struct nb *n)
{
    return slot_of(fy_boot.local_rank, n->ctxi);
}

static uint64_t ntag(const struct nb *n, uint32_t step)
{
    return (uint64_t)(n->c->ctx + 1) << 48 | (uint64_t)n->seq << 16 |
           (step & 0xffffu);
}

static bool slot_free(const struct fy_coll_slot *x)
{
    /* A2: acquire pairs with R2 in nb_done(): the readers' last reads of
     * the slot (and of our buffer through it) happened before. */
    return atomic_load_explicit(&x->readers, memory_order_acquire) == 0;
}

/* Our turn on c (the earlier nonblocking collectives on c finished). */
static bool turn(struct nb *n)
{
    if (!n->turned && s_finished[n->ctxi] == n->ticket)
        n->turned = true;
    return n->turned;
}

/* Whether our slot x is drained; if not, say we wait for it (W1), so
 * that its last reader wakes us. */
static bool slot_drained(struct fy_coll_slot *x)
{
    if (slot_free(x))
        return true;
    /* W1: Dekker with W2 in nb_done(): either we see the last reader's
     * decrement or it sees that we wait (and wakes us). */
    atomic_store_explicit(&x->owner_waits, 1, memory_order_seq_cst);
    return atomic_load_explicit(&x->readers, memory_order_seq_cst) == 0;
}

/* Our slot drained (else remembered as what we wait for). */
static bool mine_free(struct nb *n)
{
    struct fy_coll_slot *x = mine(n);
    if (slot_drained(x))
        return true;
    n->wslot = x;
    n->wtag = 0;
    return false;
}

/* Our turn, and our slot free for a publication. */
static bool ready(struct nb *n)
{
    return turn(n) && mine_free(n);
}

/* Publish in our slot (free: ready() held) to nreaders members: our
 * byte count 'len' (of each block, for P-block images), the data at
 * 'addr' for readers by address (NULL: inline in the slot); wake member
 * 'only', or (only < 0) every other member. */
static void nb_publish(struct nb *n, uint32_t step, uint32_t nreaders,
                       const void *addr, uint64_t len, int only)
{
    struct fy_coll_slot *x = mine(n);
    x->addr = (uint64_t)(uintptr_t)addr;
    x->len = len;
    /* R3: release pairs with A3 in nb_find(): whoever sees this count
     * sees the tag invalidated by nb_claim(). */
    atomic_store_explicit(&x->readers, nreaders, memory_order_release);
    /* R1: release pairs with A1 in nb_find(). */
    atomic_store_explicit(&x->tag, ntag(n, step), memory_order_release);
    for (int r = 0; r < n->P; r++)
        if (r != n->me && (only < 0 || r == only))
            fy_wake(n->world[r]);
}

/* Before writing our slot's data: make its old tag unfindable. */
static struct fy_coll_slot *nb_claim(struct nb *n)
{
    struct fy_coll_slot *x = mine(n);
    atomic_store_explicit(&x->tag, 0, memory_order_relaxed);
    /* Drained (ready() held): the next readers see this, which precedes
     * the publishing release. */
    atomic_store_explicit(&x->owner_waits, 0, memory_order_relaxed);
    return x;
}

/* Whether slot x holds the live publication 'tag'. */
static bool slot_has(const struct fy_coll_slot *x, uint64_t tag)
{
    /* A1 pairs with R1, A3 with R3 (see find_pub in shm.c: a drained
     * publication of an earlier communicator with this context is never
     * taken for a live one). */
    return atomic_load_explicit(&x->tag, memory_order_acquire) == tag &&
           atomic_load_explicit(&x->readers, memory_order_acquire) > 0 &&
           atomic_load_explicit(&x->tag, memory_order_acquire) == tag;
}

/* Member r's publication 'step' of this collective, or NULL (then
 * remembered as what we wait for). */
static const struct fy_coll_slot *nb_find(struct nb *n, int r, uint32_t step)
{
    struct fy_coll_slot *x = slot_of(n->loc[r], n->ctxi);
    uint64_t tag = ntag(n, step);
    if (slot_has(x, tag))
        return x;
    n->wslot = x;
    n->wtag = tag;
    return NULL;
}

/* We are done reading member r's publication x. Only the last reader
 * wakes its owner, and only if it waits for its slot (readers == 0). */
static void nb_done(const struct nb *n, int r, const struct fy_coll_slot *x)
{
    struct fy_coll_slot *w = (struct fy_coll_slot *)x;
    /* R2: release pairs with A2 in slot_free(); W2: seq_cst, Dekker with
     * W1 in slot_drained(). */
    if (atomic_fetch_sub_explicit(&w->readers, 1, memory_order_seq_cst) == 1 &&
        atomic_load_explicit(&w->owner_waits, memory_order_seq_cst))
        fy_wake(n->world[r]);
}

/* Move len bytes between buf and addr in member r's memory (get: from
 * it). A failed move ends the job, as in shm.c: the owner's memory went
 * away under a collective it is in. */
static void nb_move(const struct nb *n, int r, void *buf, uint64_t addr,
                    uint64_t len, bool get)
{
    ssize_t got = fy_xfer_cma_ops.copy_remote(fy_shm.pid[n->loc[r]], buf, addr,
                                              (size_t)len, get);
    if (got != (ssize_t)len)
        fy_fatal(1, "collective: %s %llu bytes %s rank %d's buffer failed: %s",
                 get ? "reading" : "writing", (unsigned long long)len,
                 get ? "of" : "into", n->world[r],
                 strerror(got < 0 ? (int)-got : EFAULT));
}

/* Read n bytes at addr in member r's memory into count elements of dt at
 * buf (n no more than they hold). */
static void nb_read(const struct nb *n, int r, uint64_t addr, uint64_t len,
                    void *buf, MPI_Count count, const struct fy_dtype *dt)
{
    if (len == 0)
        return;
    void *dst = buf, *tmp = NULL;
    if (!dt->contig && !(dst = tmp = malloc((size_t)len)))
        fy_fatal(1, "collective: out of memory for %llu bytes",
                 (unsigned long long)len);
    nb_move(n, r, dst, addr, len, true);
    if (tmp) {
        fy_dtype_unpack(tmp, (MPI_Count)len, buf, count, dt);
        free(tmp);
    }
}

/* From member r's publication x, the bytes at 'off' of its image (of
 * which 'avail' are the block's) into count elements of dt at buf: what
 * both hold. Inline or by address as the owner published it (x->addr 0:
 * inline), whatever our own path; inline, never past the slot, whatever
 * a count says. Returns the bytes taken. */
static uint64_t nb_take_at(const struct nb *n, int r,
                           const struct fy_coll_slot *x, uint64_t off,
                           uint64_t avail, void *buf, MPI_Count count,
                           const struct fy_dtype *dt)
{
    uint64_t m = FY_MIN(avail, (uint64_t)count * (uint64_t)dt->size);
    uint64_t addr = x->addr; /* read once */
    if (addr == 0) {
        m = off < FY_COLL_SLOT_DATA ? FY_MIN(m, FY_COLL_SLOT_DATA - off) : 0;
        fy_coll_get_bytes(buf, count, dt, x->data + off, m);
    } else {
        nb_read(n, r, addr + off, m, buf, count, dt);
    }
    return m;
}

/* The stride of a P-block image of blocks of 'len' bytes: inline, the
 * owner clips every block to its share of the room (cap bytes; only a
 * mismatched count needs it); by address, the blocks lie back to back. */
static uint64_t nb_stride(uint64_t len, int P, bool inl, uint64_t cap)
{
    return inl ? FY_MIN(len, cap / (uint64_t)P) : len;
}

/* nb_take()'s other case: the owner's count (len) or path (addr) differs
 * from ours. Kept out of line, off the path of correct programs. */
static __attribute__((noinline, cold)) int
nb_take_other(const struct nb *n, int r, const struct fy_coll_slot *x,
              uint64_t len, uint64_t addr, int i, void *buf, MPI_Count count,
              const struct fy_dtype *dt)
{
    uint64_t stride =
        i < 0 ? len : nb_stride(len, n->P, addr == 0, FY_COLL_SLOT_DATA);
    uint64_t off = i < 0 ? 0 : (uint64_t)i * stride;
    nb_take_at(n, r, x, off, stride, buf, count, dt);
    return fy_coll_sig(len, (uint64_t)count * (uint64_t)dt->size);
}

/* Member r's block (i < 0), or block i of its P-block image (scatter,
 * all-to-all), from its publication x into count elements of dt at buf:
 * fy_coll_sig of its count (x->len) and ours. When both counts and paths
 * agree (n->inl: ours), the copy our own count and path describe (its
 * bounds are ours: inline, they fit the slot); else nb_take_other(). */
static int nb_take(const struct nb *n, int r, const struct fy_coll_slot *x,
                   int i, void *buf, MPI_Count count, const struct fy_dtype *dt)
{
    uint64_t len = x->len, addr = x->addr; /* read once */
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    if (FY_UNLIKELY(len != bytes || (addr == 0) != n->inl))
        return nb_take_other(n, r, x, len, addr, i, buf, count, dt);
    uint64_t off = i < 0 ? 0 : (uint64_t)i * bytes;
    if (addr == 0)
        fy_coll_get_block(buf, count, dt, x->data + off);
    else
        nb_read(n, r, addr + off, bytes, buf, count, dt);
    return 0;
}

/* A contiguous image of count elements of dt at buf: buf itself or a
 * packed copy in *tmp (free it). */
static const void *nb_image(const void *buf, MPI_Count count,
                            const struct fy_dtype *dt, void **tmp)
{
    *tmp = NULL;
    if (dt->contig)
        return buf;
    size_t bytes = (size_t)(count * dt->size);
    if (!(*tmp = malloc(bytes ? bytes : 1)))
        fy_fatal(1, "collective: out of memory packing %zu bytes", bytes);
    fy_dtype_pack(buf, count, dt, *tmp);
    return *tmp;
}

/* The large reductions' temporaries (acc, part; from NB_SCRATCH_MIN
 * bytes) are kept for the next collective, up to NB_SCRATCH_KEEP blocks
 * of at most NB_SCRATCH_MAX: glibc gives a freed block next to the heap
 * top back to the kernel once the top passes its trim threshold, and the
 * next collective faulted the pages of its megabyte in again (a change of
 * the heap's layout took osu_iallreduce at 1 MiB between two ranks from
 * 320 to 900 us). Below MPI_THREAD_MULTIPLE only (one thread in here). */
#define NB_SCRATCH_MIN ((size_t)64 << 10)
#define NB_SCRATCH_MAX ((size_t)8 << 20)
#define NB_SCRATCH_KEEP 4
static struct {
    void *p;
    size_t cap;
} s_scratch[NB_SCRATCH_KEEP];

static void *nb_alloc(size_t bytes);

/* A block of at least 'bytes' (its capacity in *cap). */
static void *scratch_get(size_t bytes, size_t *cap)
{
    if (bytes >= NB_SCRATCH_MIN && !fy_mt_on)
        for (int i = 0; i < NB_SCRATCH_KEEP; i++)
            if (s_scratch[i].p && s_scratch[i].cap >= bytes) {
                void *p = s_scratch[i].p;
                *cap = s_scratch[i].cap;
                s_scratch[i].p = NULL;
                return p;
            }
    *cap = bytes;
    return nb_alloc(bytes);
}

static void scratch_put(void *p, size_t cap)
{
    if (p && cap >= NB_SCRATCH_MIN && cap <= NB_SCRATCH_MAX && !fy_mt_on) {
        /* An empty place, else the smallest kept if smaller than this. */
        int at = -1;
        for (int i = 0; i < NB_SCRATCH_KEEP; i++)
            if (!s_scratch[i].p) {
                at = i;
                break;
            } else if (s_scratch[i].cap < cap &&
                       (at < 0 || s_scratch[i].cap < s_scratch[at].cap)) {
                at = i;
            }
        if (at >= 0) {
            free(s_scratch[at].p);
            s_scratch[at].p = p;
            s_scratch[at].cap = cap;
            return;
        }
    }
    free(p);
}

static void scratch_drain(void)
{
    for (int i = 0; i < NB_SCRATCH_KEEP; i++) {
        free(s_scratch[i].p);
        s_scratch[i].p = NULL;
    }
}

static void *nb_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fy_fatal(1, "collective: out of memory for %zu bytes", bytes);
    return p;
}

/* ---- resumable machines --------------------------------------------------
 * A machine is a function of its struct nb that runs until it must wait
 * for something and then returns false; the next call resumes at that
 * wait (n->pc, the line of the wait). Nothing on the C stack survives a
 * wait: state that does lives in n. */
#define NB_BEGIN(n)                                                            \
    switch ((n)->pc) {                                                         \
    case 0:
#define NB_WAIT(n, cond)                                                       \
    do {                                                                       \
        (n)->pc = __LINE__;                                                    \
        __attribute__((fallthrough));                                          \
    case __LINE__:                                                             \
        if (!(cond))                                                           \
            return false;                                                      \
    } while (0)
#define NB_END(n)                                                              \
    default:                                                                   \
        break;                                                                 \
        }                                                                      \
        return true

static bool bar_moved(const struct nb *n)
{
    return atomic_load_explicit(&n->wbar->gen[FY_COLL_BAR_NB],
                                memory_order_acquire) != n->wgen;
}

static bool run_barrier(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    if (fy_chan.wake_peers) {
        /* When ranks may sleep (they outnumber cores): the counter at
         * member 0's line that the last to arrive releases, as the
         * blocking barrier's (shm.c, fy_coll_bar_arrive). Its turn is
         * all it needs: it publishes nothing in our slot. */
        NB_WAIT(n, turn(n));
        struct fy_coll_bar *b = fy_coll_bar_of(n->loc[0], n->ctxi);
        n->wgen =
            atomic_load_explicit(&b->gen[FY_COLL_BAR_NB], memory_order_acquire);
        if (fy_coll_bar_arrive(b, FY_COLL_BAR_NB, n->P, n->world, n->me,
                               n->wgen))
            goto end;
        n->wbar = b;
        NB_WAIT(n, bar_moved(n));
        n->wbar = NULL;
        goto end;
    }
    /* With a core each: everyone's arrival flag, read by everyone, one
     * crossing. */
    NB_WAIT(n, ready(n));
    nb_claim(n);
    nb_publish(n, 0, (uint32_t)n->P - 1, NULL, 0, -1);
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        nb_done(n, (n->me + n->i) % n->P, x);
    }
end:
    NB_END(n);
}

static bool run_bcast(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    if (n->me == n->root) {
        NB_WAIT(n, ready(n));
        struct fy_coll_slot *w = nb_claim(n);
        if (n->inl) {
            fy_coll_put_block(w->data, FY_COLL_SLOT_DATA, n->rbuf, n->rcount,
                              n->rdt);
            nb_publish(n, 0, (uint32_t)n->P - 1, NULL, n->bytes, -1);
        } else {
            const void *img = nb_image(n->rbuf, n->rcount, n->rdt, &n->tmp);
            nb_publish(n, 0, (uint32_t)n->P - 1, img, n->bytes, -1);
            /* Our buffer is the readers' until they are done. */
            NB_WAIT(n, mine_free(n));
        }
    } else {
        /* The root's message, inline or by address as it published it. */
        NB_WAIT(n, turn(n) && (x = nb_find(n, n->root, 0)) != NULL);
        n->err = nb_take(n, n->root, x, -1, n->rbuf, n->rcount, n->rdt);
        nb_done(n, n->root, x);
    }
    NB_END(n);
}

/* Combine, in rank order (MPI's, and the same bits everywhere), m
 * elements at element e0 of every member's contribution: src[r] for
 * r = P-1 down to 0 into acc (acc = src[r] op acc). */
static int combine(const void *const *src, int P, MPI_Count m,
                   struct fy_dtype *dt, struct fy_op *op, void *acc)
{
    fy_copy(acc, src[P - 1], (size_t)m * (size_t)dt->size);
    for (int r = P - 2; r >= 0; r--) {
        int rc = fy_op_apply(op, src[r], acc, m, dt);
        if (rc)
            return rc;
    }
    return 0;
}

/* Reduce, allreduce and reduce-scatter up to a slot: every contributor
 * publishes its vector inline, those who get a result combine their part
 * of it (reduce-scatter: n->rcount elements from element n->scount; else
 * all of it, scount 0) from all the vectors: as much of it as every
 * vector holds (one published by address, from a count on the other side
 * of the path's size, holds none here). */
static bool run_reduce_small(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    bool get = n->root < 0 || n->me == n->root;
    const char *in = n->sbuf == MPI_IN_PLACE ? n->rbuf : n->sbuf;
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    if (n->root < 0 || n->me != n->root) {
        struct fy_coll_slot *w = nb_claim(n);
        fy_copy(w->data, in, (size_t)n->bytes);
        nb_publish(n, 0, n->root < 0 ? (uint32_t)n->P - 1 : 1, NULL, n->bytes,
                   n->root);
    }
    if (!get)
        goto end;
    for (n->i = 0; n->i < n->P; n->i++) {
        if (n->i == n->me)
            continue;
        NB_WAIT(n, (x = nb_find(n, n->i, 0)) != NULL);
        n->pubs[n->i] = x;
    }
    {
        const void **src = (const void **)n->part;
        size_t esz = (size_t)n->rdt->size;
        uint64_t from = (uint64_t)n->scount, m = (uint64_t)n->rcount;
        for (int r = 0; r < n->P; r++) {
            if (r == n->me) {
                src[r] = in + from * esz;
                continue;
            }
            const struct fy_coll_slot *p = n->pubs[r];
            uint64_t len = p->len; /* read once */
            if (FY_UNLIKELY(len != n->bytes || p->addr)) {
                uint64_t have =
                    p->addr ? 0
                            : FY_MIN(len, FY_COLL_SLOT_DATA) / (uint64_t)esz;
                n->err = fy_coll_keep(n->err, fy_coll_sig(len, n->bytes));
                m = have > from ? FY_MIN(m, have - from) : 0;
            }
            src[r] = (const char *)p->data + from * esz;
        }
        if (m > 0) {
            n->err = fy_coll_keep(n->err, combine(src, n->P, (MPI_Count)m,
                                                  n->rdt, n->op, n->acc));
            fy_copy(n->rbuf, n->acc, (size_t)m * esz);
        }
        for (int r = 0; r < n->P; r++)
            if (r != n->me)
                nb_done(n, r, n->pubs[r]);
    }
end:
    NB_END(n);
}

/* Element range [lo, hi) of member j's slice of n->cut elements, within
 * the first 'upto'. */
static void slice(const struct nb *n, int j, MPI_Count upto, MPI_Count *lo,
                  MPI_Count *hi)
{
    uint64_t cut = (uint64_t)n->cut, P = (uint64_t)n->P;
    *hi = (MPI_Count)FY_MIN(cut * (uint64_t)(j + 1) / P, (uint64_t)upto);
    *lo = (MPI_Count)FY_MIN(cut * (uint64_t)j / P, (uint64_t)*hi);
}

/* Our part of a large reduction's result: [lo, hi) of our vector. */
static void own_part(const struct nb *n, MPI_Count *lo, MPI_Count *hi)
{
    if (n->rscat)
        *lo = n->blk0, *hi = n->blk1;
    else if ((n->root < 0 && !n->whole) || n->spread)
        slice(n, n->me, n->rcount, lo, hi);
    else
        *lo = 0, *hi = n->rcount;
}

/* Room for 'bytes' in acc and part (a slice cut from another member's
 * count may be longer than ours would be). */
static void nb_room(struct nb *n, size_t bytes)
{
    if (bytes > n->acc_cap) {
        scratch_put(n->acc, n->acc_cap);
        n->acc = scratch_get(bytes, &n->acc_cap);
    }
    if (bytes > n->part_cap) {
        scratch_put(n->part, n->part_cap);
        n->part = scratch_get(bytes, &n->part_cap);
    }
}

/* Fold member i's elements [lo, hi) (its publication x, or our own
 * input) into n->acc: acc = c_i op acc, the first (i = P-1) a copy. Of a
 * shorter contribution, what it holds: n->m, the elements every
 * contribution so far held, is what acc holds combined. */
static void take_part(struct nb *n, const struct fy_coll_slot *x,
                      const char *in, MPI_Count lo, MPI_Count hi)
{
    size_t esz = (size_t)n->rdt->size;
    void *dst = n->i == n->P - 1 ? n->acc : n->part;
    MPI_Count k = hi - lo;
    if (n->i == n->me) {
        fy_copy(dst, in + (size_t)lo * esz, (size_t)k * esz);
    } else {
        uint64_t len = x->len; /* read once */
        uint64_t have = len / esz, from = (uint64_t)lo;
        uint64_t want = have > from ? FY_MIN(have - from, (uint64_t)k) : 0;
        n->least = (MPI_Count)FY_MIN((uint64_t)n->least, have);
        k = (MPI_Count)(nb_take_at(n, n->i, x, from * esz, want * esz, dst,
                                   hi - lo, n->rdt) /
                        esz);
        n->err = fy_coll_keep(n->err, fy_coll_sig(len, n->bytes));
        if (n->spread && n->i == n->root)
            n->rpub = x; /* done once our slice is written (rput()) */
        else
            nb_done(n, n->i, x);
    }
    if (k < n->m)
        n->m = k;
    if (n->i != n->P - 1 && n->m > 0)
        n->err = fy_coll_keep(
            n->err, fy_op_apply(n->op, n->part, n->acc, n->m, n->rdt));
}

/* A spread reduce's member: the root's receive buffer from its
 * publication x of its input (the address with its check word,
 * fy_coll_raddr_take; the length as checked bounds our write). */
static void raddr_of_root(struct nb *n, const struct fy_coll_slot *x)
{
    uint64_t addr = x->addr, len = x->len; /* read once */
    n->raddr = fy_coll_raddr_take(x->data, ntag(n, 0), addr, len, "reduction",
                                  n->world[n->root]);
    n->rlen = len;
}

/* And our slice of the result, elements [lo, lo + n->m), written there
 * (within the root's count), then the root's publication let go: the
 * root's wait for its readers is its wait for our write. */
static void rput(struct nb *n, MPI_Count lo)
{
    uint64_t esz = (uint64_t)n->rdt->size, off = (uint64_t)lo * esz;
    uint64_t len = (uint64_t)n->m * esz;
    if (off < n->rlen && len > 0)
        nb_move(n, n->root, n->acc, n->raddr + off, FY_MIN(len, n->rlen - off),
                false);
    if (n->rpub)
        nb_done(n, n->root, n->rpub);
    n->rpub = NULL;
}

/* Member r's combined slice (publication x) into our rbuf: what every
 * member's vector holds of it (the slices tile the vector: all are cut
 * from the same count). */
static void take_slice(struct nb *n, int r, const struct fy_coll_slot *x)
{
    uint64_t esz = (uint64_t)n->rdt->size;
    MPI_Count a, b;
    slice(n, r, n->least, &a, &b);
    if (b > a)
        nb_take_at(n, r, x, (uint64_t)a * esz, (uint64_t)(b - a) * esz,
                   (char *)n->rbuf + (uint64_t)a * esz, b - a, n->rdt);
}

/* Larger reductions, by address: every member publishes its input; an
 * allreduce's members each read their slice of every input, combine it
 * in rank order, then read the others' combined slices from their rbuf;
 * a reduce's root reads and combines the whole vectors - or, spread
 * (three or more members, from FERRY_COLL_DIRECT_MIN), each member its
 * slice, which it writes into the root's rbuf (the address published
 * with the root's input under a check word, fy_coll_raddr_put; the
 * root's publication is let go only once the write is done); a
 * reduce-scatter's (rscat) each its own block of every input, written
 * at the start of its rbuf once its input is read. In place, a
 * member writes its own slice of its rbuf only once the others read its
 * input (its slot drained), and a slice j of it only after member j
 * published its result, which it does once it has read every input.
 * Every member reads every count: where they differ, all combine the
 * elements [0, least) and leave the rest alone. */
static bool run_reduce_large(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    const char *in = n->sbuf == MPI_IN_PLACE ? n->rbuf : n->sbuf;
    size_t esz = (size_t)n->rdt->size;
    MPI_Count lo, hi;
    own_part(n, &lo, &hi);
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    if (n->root >= 0 && n->me != n->root && !n->spread) {
        nb_claim(n);
        nb_publish(n, 0, 1, in, n->bytes, n->root);
        NB_WAIT(n, mine_free(n));
        goto end;
    }
    if (n->root < 0 || n->spread) {
        struct fy_coll_slot *w = nb_claim(n);
        if (n->spread && n->me == n->root)
            fy_coll_raddr_put(w->data, ntag(n, 0), n->rbuf,
                              (uint64_t)(uintptr_t)in, n->bytes);
        nb_publish(n, 0, (uint32_t)n->P - 1, in, n->bytes, -1);
    }
    n->least = n->rcount;
    if ((n->root < 0 || n->spread) && !n->whole && !n->rscat &&
        n->me != n->P - 1) {
        /* The slices are cut from member P-1's count, the first input
         * every member reads: the same cut everywhere, whatever the
         * counts (in a correct program, everyone's). */
        NB_WAIT(n, (x = nb_find(n, n->P - 1, 0)) != NULL);
        n->cut = (MPI_Count)FY_MIN(x->len / esz, (uint64_t)INT64_MAX);
        own_part(n, &lo, &hi);
        nb_room(n, (size_t)(hi - lo) * esz);
    }
    /* Our part of the result, contributions from the last member down. */
    n->m = hi - lo;
    for (n->i = n->P - 1; hi > lo && n->i >= 0; n->i--) {
        if (n->i != n->me)
            NB_WAIT(n, (x = nb_find(n, n->i, 0)) != NULL);
        if (n->spread && n->i == n->root && n->i != n->me)
            raddr_of_root(n, x);
        take_part(n, x, in, lo, hi);
    }
    /* With nothing to combine (more members than elements), still
     * compare counts and release the others' publications we were counted
     * as reading. */
    for (n->i = 0; hi == lo && n->i < n->P; n->i++) {
        if (n->i == n->me)
            continue;
        NB_WAIT(n, (x = nb_find(n, n->i, 0)) != NULL);
        {
            uint64_t len = x->len; /* read once */
            n->err = fy_coll_keep(n->err, fy_coll_sig(len, n->bytes));
            n->least = (MPI_Count)FY_MIN((uint64_t)n->least, len / esz);
        }
        nb_done(n, n->i, x);
    }
    if (n->rscat) {
        /* Our block of the result: in place over the start of our input,
         * so only once the others have read their blocks of it. */
        NB_WAIT(n, mine_free(n));
        if (n->m > 0)
            fy_copy(n->rbuf, n->acc, (size_t)n->m * esz);
        goto end;
    }
    if (n->spread) {
        /* Slice j of the root's rbuf is written by member j alone, after
         * it read slice j of every input (in place, the root's too). */
        if (n->me != n->root)
            rput(n, lo);
        else if (n->m > 0)
            fy_copy((char *)n->rbuf + (size_t)lo * esz, n->acc,
                    (size_t)n->m * esz);
        /* Ours read by everyone; at the root, every slice written. */
        NB_WAIT(n, mine_free(n));
        goto end;
    }
    if (n->root >= 0) {
        fy_copy(n->rbuf, n->acc, (size_t)n->m * esz);
        goto end;
    }
    /* In place, the others may still be reading our input in rbuf. */
    NB_WAIT(n, mine_free(n));
    if (n->m > 0)
        fy_copy((char *)n->rbuf + (size_t)lo * esz, n->acc, (size_t)n->m * esz);
    if (n->whole)
        goto end;
    /* Everyone read its slice of our input: publish our result slice. */
    nb_claim(n);
    nb_publish(n, 1, (uint32_t)n->P - 1, n->rbuf, n->bytes, -1);
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 1)) != NULL);
        take_slice(n, (n->me + n->i) % n->P, x);
        nb_done(n, (n->me + n->i) % n->P, x);
    }
    NB_WAIT(n, mine_free(n));
end:
    NB_END(n);
}

static bool run_allgather(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    bool inplace = n->sbuf == MPI_IN_PLACE;
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    {
        const void *in =
            inplace ? fy_coll_block_at(n->rbuf, n->me, n->rcount, n->rdt)
                    : n->sbuf;
        MPI_Count icount = inplace ? n->rcount : n->scount;
        struct fy_dtype *idt = inplace ? n->rdt : n->sdt;
        uint64_t ibytes = (uint64_t)icount * (uint64_t)idt->size;
        struct fy_coll_slot *w = nb_claim(n);
        if (n->inl) {
            fy_coll_put_block(w->data, FY_COLL_SLOT_DATA, in, icount, idt);
            nb_publish(n, 0, (uint32_t)n->P - 1, NULL, ibytes, -1);
        } else {
            const void *img = nb_image(in, icount, idt, &n->tmp);
            nb_publish(n, 0, (uint32_t)n->P - 1, img, ibytes, -1);
        }
        /* Our own block: truncated as the others take it. */
        if (!inplace)
            n->err = fy_coll_keep(
                n->err, fy_coll_copy(
                            n->sbuf, n->scount, n->sdt,
                            fy_coll_block_at(n->rbuf, n->me, n->rcount, n->rdt),
                            n->rcount, n->rdt));
    }
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        {
            int r = (n->me + n->i) % n->P;
            n->err = fy_coll_keep(
                n->err, nb_take(n, r, x, -1,
                                fy_coll_block_at(n->rbuf, r, n->rcount, n->rdt),
                                n->rcount, n->rdt));
            nb_done(n, r, x);
        }
    }
    if (!n->inl)
        NB_WAIT(n, mine_free(n));
    NB_END(n);
}

/* All-to-all: every member publishes its P send blocks (block r for
 * member r, at r times the stride: nb_stride() of its send count),
 * every member reads its block of the others'. */
static bool run_alltoall(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    {
        struct fy_coll_slot *w = nb_claim(n);
        /* In place, our blocks are in rbuf with the receive layout. */
        uint64_t sbytes = n->sbuf == MPI_IN_PLACE
                              ? n->bytes
                              : (uint64_t)n->scount * (uint64_t)n->sdt->size;
        if (n->inl) {
            uint64_t stride = nb_stride(sbytes, n->P, true, FY_COLL_SLOT_DATA);
            fy_coll_put_alltoall(w->data, stride, n->P, n->sbuf, n->scount,
                                 n->sdt, n->rbuf, n->rcount, n->rdt);
            nb_publish(n, 0, (uint32_t)n->P - 1, NULL, sbytes, -1);
        } else {
            const void *img =
                nb_image(n->sbuf, n->scount * n->P, n->sdt, &n->tmp);
            nb_publish(n, 0, (uint32_t)n->P - 1, img, sbytes, -1);
        }
        /* Our own block, truncated as the others take theirs (in place,
         * it is there). */
        if (n->sbuf != MPI_IN_PLACE)
            n->err = fy_coll_keep(
                n->err, fy_coll_copy(
                            fy_coll_block_at(n->sbuf, n->me, n->scount, n->sdt),
                            n->scount, n->sdt,
                            fy_coll_block_at(n->rbuf, n->me, n->rcount, n->rdt),
                            n->rcount, n->rdt));
    }
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        {
            int r = (n->me + n->i) % n->P;
            n->err = fy_coll_keep(
                n->err, nb_take(n, r, x, n->me,
                                fy_coll_block_at(n->rbuf, r, n->rcount, n->rdt),
                                n->rcount, n->rdt));
            nb_done(n, r, x);
        }
    }
    if (!n->inl)
        NB_WAIT(n, mine_free(n));
    NB_END(n);
}

/* Gather: every other member publishes its block (its send count;
 * inline, up to a slot of it, when its count fits a slot) to the root,
 * which reads them into place - or, beyond a slot and where its receive
 * type is one run, asks them (its publication 1: its receive buffer's
 * address with the check word, fy_coll_raddr_put) to write their
 * blocks there themselves, each on its own core, as the blocking gather
 * does. A member that published inline never reads the ask: the root
 * takes its block from the slot and counts it out of the writers. */

/* A member's wait beyond a slot: our block read (our slot drained) or
 * the root's ask there (then in *ask). */
static bool read_or_asked(struct nb *n, const struct fy_coll_slot **ask)
{
    n->wdrain = NULL;
    if (slot_drained(mine(n)))
        return true;
    if ((*ask = nb_find(n, n->root, 1)) != NULL)
        return true;
    n->wdrain = mine(n); /* slot_drained() asked its last reader to wake us */
    return false;
}

/* The member's write into the root's buffer, as the ask x says. */
static void gather_write(struct nb *n, const struct fy_coll_slot *x)
{
    uint64_t addr = x->addr, len = x->len; /* read once */
    uint64_t raddr = fy_coll_raddr_take(x->data, ntag(n, 1), addr, len,
                                        "gather", n->world[n->root]);
    const void *img = n->tmp ? n->tmp : n->sbuf;
    nb_move(n, n->root, (void *)(uintptr_t)img, raddr + (uint64_t)n->me * len,
            FY_MIN(n->bytes, len), false);
}

static bool run_gather(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    if (n->me != n->root) {
        NB_WAIT(n, ready(n));
        {
            struct fy_coll_slot *w = nb_claim(n);
            if (n->inl) {
                fy_coll_put_block(w->data, FY_COLL_SLOT_DATA, n->sbuf,
                                  n->scount, n->sdt);
                nb_publish(n, 0, 1, NULL, n->bytes, n->root);
            } else {
                const void *img = nb_image(n->sbuf, n->scount, n->sdt, &n->tmp);
                nb_publish(n, 0, 1, img, n->bytes, n->root);
            }
        }
        if (n->inl)
            goto end;
        NB_WAIT(n, read_or_asked(n, &x));
        n->wdrain = NULL;
        /* The root publishes its ask before it lets our publication go
         * unread: with our slot drained, the ask is there if there is
         * one. */
        if (!x)
            x = nb_find(n, n->root, 1);
        if (x) {
            gather_write(n, x);
            nb_done(n, n->root, x);
        }
        goto end;
    }
    NB_WAIT(n, turn(n));
    n->ask = !n->inl && n->rdt->contig;
    if (n->ask) {
        NB_WAIT(n, ready(n));
        {
            struct fy_coll_slot *w = nb_claim(n);
            fy_coll_raddr_put(w->data, ntag(n, 1), n->rbuf,
                              (uint64_t)(uintptr_t)n->rbuf, n->bytes);
            nb_publish(n, 1, (uint32_t)n->P - 1, n->rbuf, n->bytes, -1);
        }
    }
    if (n->sbuf != MPI_IN_PLACE)
        n->err =
            fy_coll_copy(n->sbuf, n->scount, n->sdt,
                         fy_coll_block_at(n->rbuf, n->me, n->rcount, n->rdt),
                         n->rcount, n->rdt);
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        {
            int r = (n->me + n->i) % n->P;
            void *blk = fy_coll_block_at(n->rbuf, r, n->rcount, n->rdt);
            if (!n->ask) {
                n->err = fy_coll_keep(
                    n->err, nb_take(n, r, x, -1, blk, n->rcount, n->rdt));
            } else if (x->addr) {
                /* It writes (or wrote) its block; its size against ours. */
                n->err = fy_coll_keep(n->err, fy_coll_sig(x->len, n->bytes));
            } else {
                /* Inline: it will not write. */
                n->err = fy_coll_keep(
                    n->err, nb_take(n, r, x, -1, blk, n->rcount, n->rdt));
                atomic_fetch_sub_explicit(&mine(n)->readers, 1,
                                          memory_order_release);
            }
            nb_done(n, r, x);
        }
    }
    if (n->ask)
        NB_WAIT(n, mine_free(n));
end:
    NB_END(n);
}

/* Scatter: the root publishes every block (its send count; at the
 * stride nb_stride() gives), each member reads its own. */
static bool run_scatter(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    if (n->me == n->root) {
        NB_WAIT(n, ready(n));
        {
            struct fy_coll_slot *w = nb_claim(n);
            if (n->inl) {
                uint64_t stride =
                    nb_stride(n->bytes, n->P, true, FY_COLL_SLOT_DATA);
                for (int r = 0; r < n->P; r++)
                    if (r != n->me)
                        fy_coll_put_block(
                            w->data + (uint64_t)r * stride, stride,
                            fy_coll_block_at(n->sbuf, r, n->scount, n->sdt),
                            n->scount, n->sdt);
                nb_publish(n, 0, (uint32_t)n->P - 1, NULL, n->bytes, -1);
            } else {
                const void *img =
                    nb_image(n->sbuf, n->scount * n->P, n->sdt, &n->tmp);
                nb_publish(n, 0, (uint32_t)n->P - 1, img, n->bytes, -1);
            }
            if (n->rbuf != MPI_IN_PLACE)
                n->err = fy_coll_keep(
                    n->err,
                    fy_coll_copy(
                        fy_coll_block_at(n->sbuf, n->me, n->scount, n->sdt),
                        n->scount, n->sdt, n->rbuf, n->rcount, n->rdt));
        }
        if (!n->inl)
            NB_WAIT(n, mine_free(n));
        goto end;
    }
    NB_WAIT(n, turn(n) && (x = nb_find(n, n->root, 0)) != NULL);
    n->err = nb_take(n, n->root, x, n->me, n->rbuf, n->rcount, n->rdt);
    nb_done(n, n->root, x);
end:
    NB_END(n);
}

/* ---- the v forms ----------------------------------------------------------
 * As the blocking ones (shm.c): a publication starts with a table of
 * block descriptors, each block inline after the table while it fits the
 * slot, else read from its owner's buffer (single copy). The owner alone
 * decides which and the readers follow the descriptors, so only whether
 * to run here at all must agree (nb_v_here). */

/* Member r's block i of its publication x into count elements of dt. */
static int nb_take_v(const struct nb *n, int r, const struct fy_coll_slot *x,
                     int i, void *buf, MPI_Count count,
                     const struct fy_dtype *dt)
{
    return fy_coll_take_block(n->loc[r], n->world[r], x->data,
                              FY_COLL_SLOT_DATA, i, buf, count, dt);
}

/* Publish blocks 0..nblocks-1 of l (but 'skip') to nreaders members
 * (wake 'only', or everyone); n->inl says whether all went inline. */
static void nb_put_blocks(struct nb *n, const struct fy_coll_layout *l,
                          int nblocks, int skip, uint32_t nreaders, int only)
{
    struct fy_coll_slot *w = nb_claim(n);
    bool by_addr;
    n->err = fy_coll_keep(n->err,
                          fy_coll_put_blocks(w->data, FY_COLL_SLOT_DATA, l,
                                             nblocks, skip, &n->tmp, &by_addr));
    n->inl = !by_addr;
    nb_publish(n, 0, nreaders, NULL, 0, only);
}

/* Take block i of the publication x of member r = me + n->i into block
 * r of n->dst, and let it go. */
static void nb_take_next(struct nb *n, const struct fy_coll_slot *x, int i)
{
    int r = (n->me + n->i) % n->P;
    struct fy_coll_block b = fy_coll_layout_block(&n->dst, r);
    n->err = fy_coll_keep(n->err, nb_take_v(n, r, x, i, b.ptr, b.count, b.dt));
    nb_done(n, r, x);
}

/* Igatherv: as the blocking one (shm.c) - every other member publishes
 * its block, inline or by address, and the root reads them, or, where
 * fy_coll_gatherv_asks(), publishes the table of where each block goes
 * (its publication 1) and the members whose blocks are by address write
 * them there, as Igather's do. */
static bool run_gatherv(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    if (n->me != n->root) {
        NB_WAIT(n, ready(n));
        nb_put_blocks(n, &n->src, 1, -1, 1, n->root);
        if (n->inl)
            goto end;
        NB_WAIT(n, read_or_asked(n, &x));
        n->wdrain = NULL;
        /* As in run_gather: with our slot drained, an ask is there. */
        if (!x)
            x = nb_find(n, n->root, 1);
        if (x) {
            uint64_t len;
            uint64_t at = fy_coll_vask_take(x->data, n->me, ntag(n, 1),
                                            n->world[n->root], &len);
            uint64_t bytes = (uint64_t)n->scount * (uint64_t)n->sdt->size;
            nb_move(n, n->root, n->tmp ? n->tmp : (void *)n->sbuf, at,
                    FY_MIN(bytes, len), false);
            nb_done(n, n->root, x);
        }
        goto end;
    }
    NB_WAIT(n, turn(n));
    n->ask = fy_coll_gatherv_asks(&n->dst, n->P, n->me, FY_COLL_SLOT_DATA);
    if (n->ask) {
        NB_WAIT(n, ready(n));
        fy_coll_vask_fill(nb_claim(n)->data, &n->dst, n->P, ntag(n, 1));
        nb_publish(n, 1, (uint32_t)n->P - 1, NULL, 0, -1);
    }
    if (n->sbuf != MPI_IN_PLACE) {
        struct fy_coll_block b = fy_coll_layout_block(&n->dst, n->me);
        n->err = fy_coll_copy(n->sbuf, n->scount, n->sdt, b.ptr, b.count, b.dt);
    }
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        {
            struct fy_coll_desc d;
            memcpy(&d, x->data, sizeof(d)); /* read once */
            if (!n->ask || d.addr == 0) {
                nb_take_next(n, x, 0);
                if (n->ask) /* it will not write */
                    atomic_fetch_sub_explicit(&mine(n)->readers, 1,
                                              memory_order_release);
            } else {
                /* It writes (or wrote) what fits its block; more is cut,
                 * as fy_coll_take_block() reports it. */
                int r = (n->me + n->i) % n->P;
                struct fy_coll_block b = fy_coll_layout_block(&n->dst, r);
                if (d.len > (uint64_t)b.count * (uint64_t)b.dt->size)
                    n->err = fy_coll_keep(n->err, -EMSGSIZE);
                nb_done(n, r, x);
            }
        }
    }
    if (n->ask)
        NB_WAIT(n, mine_free(n));
end:
    NB_END(n);
}

static bool run_scatterv(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    if (n->me == n->root) {
        NB_WAIT(n, ready(n));
        nb_put_blocks(n, &n->src, n->P, n->me, (uint32_t)n->P - 1, -1);
        if (n->rbuf != MPI_IN_PLACE) {
            struct fy_coll_block b = fy_coll_layout_block(&n->src, n->me);
            n->err =
                fy_coll_keep(n->err, fy_coll_copy(b.ptr, b.count, b.dt, n->rbuf,
                                                  n->rcount, n->rdt));
        }
        if (!n->inl)
            NB_WAIT(n, mine_free(n));
        goto end;
    }
    NB_WAIT(n, turn(n) && (x = nb_find(n, n->root, 0)) != NULL);
    n->err = nb_take_v(n, n->root, x, n->me, n->rbuf, n->rcount, n->rdt);
    nb_done(n, n->root, x);
end:
    NB_END(n);
}

static bool run_allgatherv(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    {
        struct fy_coll_block own = fy_coll_layout_block(&n->dst, n->me);
        struct fy_coll_layout in = {
            .buf = n->sbuf, .count = n->scount, .dt = n->sdt};
        if (n->sbuf == MPI_IN_PLACE)
            in = (struct fy_coll_layout){
                .buf = own.ptr, .count = own.count, .dt = own.dt};
        nb_put_blocks(n, &in, 1, -1, (uint32_t)n->P - 1, -1);
        if (n->sbuf != MPI_IN_PLACE)
            n->err =
                fy_coll_keep(n->err, fy_coll_copy(n->sbuf, n->scount, n->sdt,
                                                  own.ptr, own.count, own.dt));
    }
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        nb_take_next(n, x, 0);
    }
    if (!n->inl)
        NB_WAIT(n, mine_free(n));
    NB_END(n);
}

static bool run_alltoallv(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    nb_put_blocks(n, &n->src, n->P, n->me, (uint32_t)n->P - 1, -1);
    {
        struct fy_coll_block o = fy_coll_layout_block(&n->src, n->me);
        struct fy_coll_block b = fy_coll_layout_block(&n->dst, n->me);
        n->err = fy_coll_keep(
            n->err, fy_coll_copy(o.ptr, o.count, o.dt, b.ptr, b.count, b.dt));
    }
    for (n->i = 1; n->i < n->P; n->i++) {
        NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
        nb_take_next(n, x, n->me);
    }
    if (!n->inl)
        NB_WAIT(n, mine_free(n));
    NB_END(n);
}

/* Scan and exscan up to a slot: every member but the last publishes its
 * input inline to the members after it; member r combines those of
 * members 0..r (exscan: 0..r-1) in rank order. */
static bool run_scan(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    const char *in = n->sbuf == MPI_IN_PLACE ? n->rbuf : n->sbuf;
    int upto = n->ex ? n->me : n->me + 1; /* contributions combined */
    NB_BEGIN(n);
    NB_WAIT(n, ready(n));
    if (n->me < n->P - 1) {
        struct fy_coll_slot *w = nb_claim(n);
        fy_copy(w->data, in, (size_t)n->bytes);
        /* Read by the members after us only: wake those. */
        nb_publish(n, 0, (uint32_t)(n->P - 1 - n->me), NULL, n->bytes, n->me);
        for (int r = n->me + 1; r < n->P; r++)
            fy_wake(n->world[r]);
    }
    for (n->i = 0; n->i < n->me; n->i++) {
        NB_WAIT(n, (x = nb_find(n, n->i, 0)) != NULL);
        n->pubs[n->i] = x;
    }
    if (upto > 0) {
        /* As much as every vector holds (see run_reduce_small). */
        const void **src = (const void **)n->part;
        uint64_t m = (uint64_t)n->rcount, esz = (uint64_t)n->rdt->size;
        for (int r = 0; r < upto; r++) {
            if (r == n->me) {
                src[r] = in;
                continue;
            }
            uint64_t len = n->pubs[r]->len; /* read once */
            if (FY_UNLIKELY(len != n->bytes || n->pubs[r]->addr)) {
                n->err = fy_coll_keep(n->err, fy_coll_sig(len, n->bytes));
                m = FY_MIN(m, n->pubs[r]->addr
                                  ? 0
                                  : FY_MIN(len, FY_COLL_SLOT_DATA) / esz);
            }
            src[r] = n->pubs[r]->data;
        }
        if (m > 0) {
            n->err = fy_coll_keep(n->err, combine(src, upto, (MPI_Count)m,
                                                  n->rdt, n->op, n->acc));
            fy_copy(n->rbuf, n->acc, (size_t)(m * esz));
        }
    }
    for (int r = 0; r < n->me; r++)
        nb_done(n, r, n->pubs[r]);
    NB_END(n);
}

/* ---- lean collectives ------------------------------------------------------
 * With a core for every rank, Ibarrier and the Ibcast, Ireduce,
 * Iallreduce, Iallgather and Ialltoall of at most FY_COLL_FLAG_DATA bytes
 * per member go through the members' nonblocking flag lines, with the
 * invariants of shm.c's lean collectives (its "Lean collectives"): the
 * k-th on a communicator is arrival base + k everywhere, base agreed at
 * the first (here through the slots, as a step of that collective), and
 * a payload rewritten only once every other member is done with the one
 * two before it. They run one at a time in their order, as all of this
 * file's. */

static struct fy_coll_flag *nb_line(const struct nb *n, int r)
{
    return fy_coll_flag_of(n->loc[r], n->ctxi, FY_COLL_FLAG_NB);
}

/* *w >= v (acquire: the owner's payload, or its last reads of ours, come
 * first); else remembered as what we wait for. */
static bool nb_reached(struct nb *n, _Atomic uint64_t *w, uint64_t v)
{
    if (atomic_load_explicit(w, memory_order_acquire) >= v)
        return true;
    n->wflag = w;
    n->wv = v;
    return false;
}

/* Whether member r's payload is read here, and whether ours is written. */
static bool lean_reads(const struct nb *n, int r)
{
    switch (n->kind) {
    case NB_BCAST:
        return r == n->root;
    case NB_REDUCE:
        return n->root < 0 || n->me == n->root;
    default:
        return true;
    }
}

/* Whether we read every other member's arrival (then, once we have, all
 * of them are done with the collective before). */
static bool lean_reads_all(const struct nb *n)
{
    return n->kind != NB_BCAST &&
           (n->kind != NB_REDUCE || n->root < 0 || n->me == n->root);
}

static bool lean_writes(const struct nb *n)
{
    switch (n->kind) {
    case NB_BARRIER:
        return false;
    case NB_BCAST:
        return n->me == n->root;
    case NB_REDUCE:
        return n->root < 0 || n->me != n->root;
    default:
        return true;
    }
}

/* Our payload of arrival v into 'out', and our byte count of it (a
 * flag line's len, 32 bits: a larger count saturates, still larger than
 * any reader's). */
static uint32_t lean_put(struct nb *n, unsigned char *out)
{
    bool inplace = n->sbuf == MPI_IN_PLACE;
    uint64_t len = 0;
    switch (n->kind) {
    case NB_BCAST:
        fy_coll_put_block(out, FY_COLL_FLAG_DATA, n->rbuf, n->rcount, n->rdt);
        len = n->bytes;
        break;
    case NB_REDUCE:
        memcpy(out, inplace ? n->rbuf : n->sbuf, (size_t)n->bytes);
        len = n->bytes;
        break;
    case NB_ALLGATHER: {
        const void *in =
            inplace ? fy_coll_block_at(n->rbuf, n->me, n->rcount, n->rdt)
                    : n->sbuf;
        MPI_Count icount = inplace ? n->rcount : n->scount;
        const struct fy_dtype *idt = inplace ? n->rdt : n->sdt;
        fy_coll_put_block(out, FY_COLL_FLAG_DATA, in, icount, idt);
        len = (uint64_t)icount * (uint64_t)idt->size;
        break;
    }
    case NB_ALLTOALL:
        len = inplace ? n->bytes : (uint64_t)n->scount * (uint64_t)n->sdt->size;
        fy_coll_put_alltoall(out, nb_stride(len, n->P, true, FY_COLL_FLAG_DATA),
                             n->P, n->sbuf, n->scount, n->sdt, n->rbuf,
                             n->rcount, n->rdt);
        break;
    default:
        break;
    }
    return (uint32_t)FY_MIN(len, UINT32_MAX);
}

/* Member r's block of its payload 'data' whose count len differs from
 * ours, into rbuf (bcast) or block r of it (allgather; all-to-all: ours
 * of its P, at its stride): what both hold. Never past the line: a
 * block of at most FY_COLL_FLAG_DATA bytes, P blocks at a stride of at
 * most FY_COLL_FLAG_DATA / P. Off the path of correct programs. */
static __attribute__((noinline, cold)) void
lean_block_other(struct nb *n, int r, const unsigned char *data, uint64_t len)
{
    uint64_t have = FY_MIN(len, FY_COLL_FLAG_DATA), off = 0;
    void *buf = n->kind == NB_BCAST
                    ? n->rbuf
                    : fy_coll_block_at(n->rbuf, r, n->rcount, n->rdt);
    if (n->kind == NB_ALLTOALL) {
        have = nb_stride(len, n->P, true, FY_COLL_FLAG_DATA);
        off = (uint64_t)n->me * have;
    }
    fy_coll_get_bytes(
        buf, n->rcount, n->rdt, data + off,
        FY_MIN(have, (uint64_t)n->rcount * (uint64_t)n->rdt->size));
}

/* Our own block into rbuf (allgather, all-to-all; in place it is
 * there), from our payload out (of our count len), truncated as a copy
 * would be. */
static void lean_own(struct nb *n, const unsigned char *out, uint64_t len)
{
    if (n->sbuf == MPI_IN_PLACE ||
        (n->kind != NB_ALLGATHER && n->kind != NB_ALLTOALL))
        return;
    if (FY_UNLIKELY(len != n->bytes)) {
        lean_block_other(n, n->me, out, len);
        if (len > n->bytes)
            n->err = fy_coll_keep(n->err, -EMSGSIZE);
        return;
    }
    fy_coll_get_block(
        fy_coll_block_at(n->rbuf, n->me, n->rcount, n->rdt), n->rcount, n->rdt,
        n->kind == NB_ALLTOALL ? out + (uint64_t)n->me * n->bytes : out);
}

/* Member r's payload (arrived; its owner's byte count len): into rbuf,
 * or kept for the combine (n->m: the elements every contribution
 * holds); fy_coll_sig of the counts. */
static void lean_take(struct nb *n, int r, const unsigned char *data,
                      uint64_t len)
{
    if (n->kind == NB_BARRIER)
        return;
    if (FY_UNLIKELY(len != n->bytes)) {
        n->err = fy_coll_keep(n->err, fy_coll_sig(len, n->bytes));
        if (n->kind != NB_REDUCE) {
            lean_block_other(n, r, data, len);
            return;
        }
        n->m = FY_MIN(n->m, (MPI_Count)(FY_MIN(len, FY_COLL_FLAG_DATA) /
                                        (uint64_t)n->rdt->size));
    }
    switch (n->kind) {
    case NB_BCAST:
        fy_coll_get_block(n->rbuf, n->rcount, n->rdt, data);
        break;
    case NB_REDUCE:
        ((const void **)n->part)[r] = data;
        break;
    case NB_ALLGATHER:
        fy_coll_get_block(fy_coll_block_at(n->rbuf, r, n->rcount, n->rdt),
                          n->rcount, n->rdt, data);
        break;
    case NB_ALLTOALL:
        fy_coll_get_block(fy_coll_block_at(n->rbuf, r, n->rcount, n->rdt),
                          n->rcount, n->rdt, data + (uint64_t)n->me * n->bytes);
        break;
    default:
        break;
    }
}

static bool run_lean(struct nb *n)
{
    const struct fy_coll_slot *x = NULL;
    struct fy_comm_lean *fs = &n->c->nbflag;
    struct fy_coll_flag *me = nb_line(n, n->me);
    NB_BEGIN(n);
    NB_WAIT(n, turn(n));
    if (!fs->on) {
        /* The first on c: every member's count, through the slots. */
        NB_WAIT(n, mine_free(n));
        n->agree = fy_coll_lean_count(me);
        memcpy(nb_claim(n)->data, &n->agree, sizeof(n->agree));
        nb_publish(n, 0, (uint32_t)n->P - 1, NULL, sizeof(n->agree), -1);
        for (n->i = 1; n->i < n->P; n->i++) {
            NB_WAIT(n, (x = nb_find(n, (n->me + n->i) % n->P, 0)) != NULL);
            {
                uint64_t v;
                memcpy(&v, x->data, sizeof(v));
                n->agree = FY_MAX(n->agree, v);
                nb_done(n, (n->me + n->i) % n->P, x);
            }
        }
        fy_coll_lean_start(fs, n->agree);
    }
    n->v = fs->base + ++fs->k;
    n->m = n->rcount;
    if (lean_writes(n) && fs->known + 2 < n->v) {
        for (n->i = 0; n->i < n->P; n->i++)
            if (n->i != n->me)
                NB_WAIT(n, nb_reached(n, &nb_line(n, n->i)->done, n->v - 2));
        fs->known = n->v - 2;
    }
    if (lean_writes(n)) {
        uint32_t len = lean_put(n, me->data[n->v & 1]);
        me->len[n->v & 1] = len;
        /* Release: the payload and its count come first (pairs with
         * nb_reached). */
        atomic_store_explicit(&me->seq, n->v, memory_order_release);
        lean_own(n, me->data[n->v & 1], len);
    } else if (n->kind == NB_BARRIER) {
        /* An arrival only: a barrier did not wait for the readers of the
         * payload (and count) two arrivals before. */
        atomic_store_explicit(&me->seq, n->v, memory_order_release);
    }
    for (n->i = 1; n->i < n->P; n->i++) {
        if (!lean_reads(n, (n->me + n->i) % n->P))
            continue;
        NB_WAIT(n,
                nb_reached(n, &nb_line(n, (n->me + n->i) % n->P)->seq, n->v));
        {
            const struct fy_coll_flag *f = nb_line(n, (n->me + n->i) % n->P);
            lean_take(n, (n->me + n->i) % n->P, f->data[n->v & 1],
                      f->len[n->v & 1]);
        }
    }
    if (n->kind == NB_REDUCE && lean_reads(n, n->me) && n->m > 0) {
        const void **src = (const void **)n->part;
        src[n->me] = n->sbuf == MPI_IN_PLACE ? n->rbuf : n->sbuf;
        n->err = fy_coll_keep(n->err,
                              combine(src, n->P, n->m, n->rdt, n->op, n->acc));
        fy_copy(n->rbuf, n->acc, (size_t)n->m * (size_t)n->rdt->size);
    }
    if (lean_reads_all(n))
        fy_coll_lean_seen_all(fs, n->v);
    /* Release: our reads of the others' payloads come first. */
    atomic_store_explicit(&me->done, n->v, memory_order_release);
    NB_END(n);
}

/* ---- the machine as a schedule ------------------------------------------ */

static bool nb_step(void *st, int *err)
{
    struct nb *n = st;
    bool fin = false;
    n->wslot = NULL;
    n->wflag = NULL;
    switch (n->lean ? NB_SCAN + 1 : (int)n->kind) {
    case NB_SCAN + 1:
        fin = run_lean(n);
        break;
    case NB_BARRIER:
        fin = run_barrier(n);
        break;
    case NB_BCAST:
        fin = run_bcast(n);
        break;
    case NB_REDUCE:
        fin = n->inl ? run_reduce_small(n) : run_reduce_large(n);
        break;
    case NB_ALLGATHER:
        fin = run_allgather(n);
        break;
    case NB_ALLTOALL:
        fin = run_alltoall(n);
        break;
    case NB_GATHER:
        fin = run_gather(n);
        break;
    case NB_SCATTER:
        fin = run_scatter(n);
        break;
    case NB_GATHERV:
        fin = run_gatherv(n);
        break;
    case NB_SCATTERV:
        fin = run_scatterv(n);
        break;
    case NB_ALLGATHERV:
        fin = run_allgatherv(n);
        break;
    case NB_ALLTOALLV:
        fin = run_alltoallv(n);
        break;
    case NB_SCAN:
        fin = run_scan(n);
        break;
    }
    if (!fin)
        return false;
    if (!n->ended) {
        /* The next nonblocking collective on c may go. */
        n->ended = true;
        s_finished[n->ctxi]++;
    }
    *err = n->err;
    return true;
}

/* Until our slot of c's context is drained. */
static struct fy_coll_slot *s_draining;

static bool drained(void)
{
    return slot_drained(s_draining);
}

static void drain(uint32_t ctxi)
{
    unsigned spins = 0;
    s_draining = slot_of(fy_boot.local_rank, ctxi);
    while (!drained()) {
        if (fy_progress() == 0)
            fy_progress_idle_until(&spins, drained);
        else
            spins = 0;
    }
}

static void nb_free(void *st)
{
    struct nb *n = st;
    /* The communicator goes with this schedule's reference: no later
     * communicator with its context may find our publication. */
    if (n->c->refcount == 1 && s_issued[n->ctxi] == s_finished[n->ctxi]) {
        drain(n->ctxi);
        fy_coll_lean_drain(n->c, &n->c->nbflag, FY_COLL_FLAG_NB);
    }
    if (n->sdt && !n->sdt->builtin)
        fy_dtype_release(n->sdt);
    if (n->rdt && !n->rdt->builtin)
        fy_dtype_release(n->rdt);
    if (n->op && !n->op->builtin)
        fy_op_release(n->op);
    for (int i = 0; n->dts && i < 2 * n->P; i++)
        if (!n->dts[i]->builtin)
            fy_dtype_release(n->dts[i]);
    free(n->dts);
    free(n->tmp);
    scratch_put(n->acc, n->acc_cap);
    scratch_put(n->part, n->part_cap);
    free(n->pubs);
    free(n->vec);
    if (n->loc != n->loc_small)
        free(n->loc);
    fy_objcache_put(&s_nb_cache, n);
}

/* Whether what the machine stopped at holds now (read-only). */
static bool nb_visible(const void *st)
{
    const struct nb *n = st;
    if (n->wbar)
        return bar_moved(n);
    if (n->wflag)
        return atomic_load_explicit(n->wflag, memory_order_acquire) >= n->wv;
    if (n->wdrain && slot_free(n->wdrain))
        return true;
    if (!n->wslot)
        return false;
    if (n->wtag == 0)
        return slot_free(n->wslot);
    return slot_has(n->wslot, n->wtag);
}

static const struct fy_sched_mach nb_mach = {
    .step = nb_step, .free = nb_free, .visible = nb_visible};

void fy_coll_shm_nb_comm_free(struct fy_comm *c)
{
    if (!fy_coll_shm.on || !fy_coll_shm.slots || c->ctx >= FY_CTX_MAX)
        return;
    uint32_t ctxi = c->ctx / 2;
    if (s_issued[ctxi] == s_finished[ctxi]) {
        drain(ctxi);
        fy_coll_lean_drain(c, &c->nbflag, FY_COLL_FLAG_NB);
    }
}

/* Whether data of this many bytes (a block) beyond a slot is read from
 * its owner's buffer: with single copy, from FERRY_COLL_CMA_MIN (or the
 * tuning file's coll_cma_min) up. Below, the point-to-point schedule's
 * eager messages let a sender finish without waiting for its readers,
 * which a publication by address cannot (bench_coll, 4 ranks on 2
 * cores, 4 KiB Ibcast: 26-77 us point-to-point, 57-186 us by address).
 * Job-wide settings: every member decides alike. */
static bool by_addr(uint64_t bytes)
{
    return fy_coll_shm.cma && bytes >= fy_coll_shm.cma_min;
}

/* Whether c's members all share this node (FERRY_COLL allowing). */
static bool nb_here(struct fy_comm *c)
{
    if (!fy_coll_shm.on || !fy_coll_shm.slots || c->size < 2 || c->inter ||
        c->ctx >= FY_CTX_MAX)
        return false;
    for (int r = 0; r < c->size; r++)
        if (fy_boot_local(fy_comm_world_rank(c, r)) < 0)
            return false;
    return true;
}

/* Start collective 'n' (filled but for the bookkeeping) on c. */
static int nb_start(struct nb *n, struct fy_comm *c, struct fy_sched **nb)
{
    struct fy_sched *s;
    int rc = fy_sched_create(c, true, &s);
    if (rc) {
        free(n->vec);
        free(n->dts);
        free(n);
        return rc;
    }
    int P = c->size;
    n->c = c;
    n->seq = fy_sched_seq(s);
    n->ctxi = c->ctx / 2;
    n->P = P;
    n->me = c->rank;
    n->loc = 2 * P <= (int)(sizeof(n->loc_small) / sizeof(int))
                 ? n->loc_small
                 : nb_alloc((size_t)P * 2 * sizeof(int));
    n->world = n->loc + P;
    for (int r = 0; r < P; r++) {
        n->world[r] = fy_comm_world_rank(c, r);
        n->loc[r] = fy_boot_local(n->world[r]);
    }
    if (n->sdt && !n->sdt->builtin)
        fy_dtype_retain(n->sdt);
    if (n->rdt && !n->rdt->builtin)
        fy_dtype_retain(n->rdt);
    if (n->op && !n->op->builtin)
        fy_op_retain(n->op);
    for (int i = 0; n->dts && i < 2 * P; i++)
        if (!n->dts[i]->builtin)
            fy_dtype_retain(n->dts[i]);
    n->ticket = s_issued[n->ctxi]++;
    fy_sched_set_mach(s, &nb_mach, n);
    return fy_sched_finish(s, nb);
}

static struct nb *nb_new(enum nb_kind kind)
{
    struct nb *n = fy_objcache_get(&s_nb_cache);
    if (n)
        n->kind = kind;
    return n;
}

int fy_coll_shm_ibarrier(struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_BARRIER);
    if (!n)
        return -ENOMEM;
    n->lean = fy_coll_lean_ok(c);
    return nb_start(n, c, nb);
}

int fy_coll_shm_ibcast(void *buf, MPI_Count count, struct fy_dtype *dt,
                       int root, struct fy_comm *c, struct fy_sched **nb)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    bool inl = bytes <= FY_COLL_SLOT_DATA;
    /* Between two ranks a broadcast beyond a slot is one message, as in
     * the blocking one: the point-to-point transfer lets the root finish
     * without waiting for the reader to have read its buffer
     * (bench_coll, 2 ranks, 64 KiB: 7-12 us against 350-990 us by
     * address on a loaded host). */
    if (bytes == 0 || (!inl && (!by_addr(bytes) || c->size == 2)) ||
        !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_BCAST);
    if (!n)
        return -ENOMEM;
    n->rbuf = buf;
    n->rcount = count;
    n->rdt = dt;
    n->root = root;
    n->bytes = bytes;
    n->inl = inl;
    n->lean = bytes <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c);
    return nb_start(n, c, nb);
}

int fy_coll_shm_ireduce(const void *sbuf, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op, int root,
                        struct fy_comm *c, struct fy_sched **nb)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    bool inl = bytes <= FY_COLL_SLOT_DATA;
    if (count <= 0 || !dt->contig || dt->size <= 0 ||
        (!inl && !by_addr(bytes)) || !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_REDUCE);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->rbuf = rbuf;
    n->rcount = count;
    n->rdt = dt;
    n->op = op;
    n->root = root;
    n->bytes = bytes;
    n->inl = inl;
    n->lean = bytes <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c);
    /* An allreduce by address below FY_COLL_NB_SLICE_MIN: every member
     * reads and combines the whole vectors (one round), above, a slice
     * each and then the others' slices (two rounds, 1/P of the work). */
    n->whole = !inl && root < 0 && bytes < FY_COLL_NB_SLICE_MIN;
    /* A reduce among three or more members from FERRY_COLL_DIRECT_MIN
     * (as the blocking one, reduce_direct in shm.c): a slice each,
     * written into the root's rbuf, where the root alone combined every
     * vector (4 ranks on the 2 cores, 1 MiB, MPI_Ireduce + MPI_Wait:
     * the root's 386-392 us against 228-300 for MPI_Reduce). */
    n->spread =
        !inl && root >= 0 && c->size > 2 && bytes >= fy_coll_shm.direct_min;
    n->cut = count;
    bool get = root < 0 || c->rank == root || n->spread;
    if (get) {
        /* Whole vectors at a reduce's root or inline; else a slice. */
        size_t part = (root >= 0 && !n->spread) || inl || n->whole
                          ? (size_t)bytes
                          : (size_t)((count + c->size - 1) / c->size + 1) *
                                (size_t)dt->size;
        n->acc = scratch_get(part, &n->acc_cap);
        n->part = scratch_get(inl ? (size_t)c->size * sizeof(void *) : part,
                              &n->part_cap);
        if (inl)
            n->pubs = nb_alloc((size_t)c->size * sizeof(*n->pubs));
    }
    return nb_start(n, c, nb);
}

/* The machine of an inline reduction (reduce-scatter, scans): 'count'
 * elements of contiguous dt published by every member, fitting a slot;
 * 'out' elements of result combined here. NULL with *rc: FY_COLL_SHM_NO
 * (not here) or -ENOMEM. */
static struct nb *nb_inline_reduction(enum nb_kind kind, const void *sbuf,
                                      void *rbuf, MPI_Count count,
                                      MPI_Count out, struct fy_dtype *dt,
                                      struct fy_op *op, struct fy_comm *c,
                                      int *rc)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    *rc = FY_COLL_SHM_NO;
    if (count <= 0 || !dt->contig || dt->size <= 0 ||
        bytes > FY_COLL_SLOT_DATA || !nb_here(c))
        return NULL;
    struct nb *n = nb_new(kind);
    if (!n) {
        *rc = -ENOMEM;
        return NULL;
    }
    n->sbuf = sbuf;
    n->rbuf = rbuf;
    n->rcount = out;
    n->rdt = dt;
    n->op = op;
    n->bytes = bytes;
    n->inl = true;
    n->acc = nb_alloc((size_t)out * (size_t)dt->size);
    n->part = nb_alloc((size_t)c->size * sizeof(void *));
    n->pubs = nb_alloc((size_t)c->size * sizeof(*n->pubs));
    return n;
}

int fy_coll_shm_ireduce_scatter(const void *sbuf, void *rbuf,
                                struct fy_coll_vec counts, MPI_Count count,
                                struct fy_dtype *dt, struct fy_op *op,
                                struct fy_comm *c, struct fy_sched **nb)
{
    /* The counts are the same on every member (MPI): so are the total,
     * the path and every member's block. */
    MPI_Count total = 0, start = 0;
    for (int j = 0; j < c->size; j++) {
        MPI_Count cj = counts.p ? fy_vec_at(counts, j) : count;
        start += j < c->rank ? cj : 0;
        total += cj;
    }
    MPI_Count mine = counts.p ? fy_vec_at(counts, c->rank) : count;
    uint64_t bytes = (uint64_t)total * (uint64_t)dt->size;
    if (total > 0 && dt->contig && dt->size > 0 && bytes > FY_COLL_SLOT_DATA &&
        by_addr(bytes) && nb_here(c)) {
        /* By address (run_reduce_large): every member publishes its
         * input, each combines its block of all of them in rank order
         * (the point-to-point schedule took 1.2 ms for 1 MiB between two
         * ranks, the blocking reduce-scatter 68 us). */
        struct nb *n = nb_new(NB_REDUCE);
        if (!n)
            return -ENOMEM;
        n->sbuf = sbuf;
        n->rbuf = rbuf;
        n->rcount = total;
        n->rdt = dt;
        n->op = op;
        n->root = -1;
        n->bytes = bytes;
        n->rscat = true;
        n->cut = total;
        n->blk0 = start;
        n->blk1 = start + mine;
        size_t part = (size_t)mine * (size_t)dt->size;
        n->acc = scratch_get(part, &n->acc_cap);
        n->part = scratch_get(part, &n->part_cap);
        return nb_start(n, c, nb);
    }
    int rc;
    struct nb *n =
        nb_inline_reduction(NB_REDUCE, sbuf, rbuf, total, mine, dt, op, c, &rc);
    if (!n)
        return rc;
    n->scount = start;
    n->root = -1;
    return nb_start(n, c, nb);
}

int fy_coll_shm_iallgather(const void *sbuf, MPI_Count scount,
                           struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                           struct fy_dtype *rdt, struct fy_comm *c,
                           struct fy_sched **nb)
{
    uint64_t rbytes = (uint64_t)rcount * (uint64_t)rdt->size;
    bool inl = rbytes <= FY_COLL_SLOT_DATA;
    if (rbytes == 0 || (!inl && !by_addr(rbytes)) || !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_ALLGATHER);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->scount = scount;
    n->sdt = sbuf == MPI_IN_PLACE ? NULL : sdt;
    n->rbuf = rbuf;
    n->rcount = rcount;
    n->rdt = rdt;
    n->bytes = rbytes;
    n->inl = inl;
    n->lean = rbytes <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c);
    return nb_start(n, c, nb);
}

int fy_coll_shm_ialltoall(const void *sbuf, MPI_Count scount,
                          struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct fy_dtype *rdt, struct fy_comm *c,
                          struct fy_sched **nb)
{
    uint64_t rbytes = (uint64_t)rcount * (uint64_t)rdt->size;
    bool inl = rbytes * (uint64_t)c->size <= FY_COLL_SLOT_DATA;
    /* In place and too large for a slot, a member would overwrite blocks
     * others still read from its buffer: the point-to-point schedule. */
    if (rbytes == 0 || (!inl && (!by_addr(rbytes) || sbuf == MPI_IN_PLACE)) ||
        !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_ALLTOALL);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->scount = scount;
    n->sdt = sbuf == MPI_IN_PLACE ? NULL : sdt;
    n->rbuf = rbuf;
    n->rcount = rcount;
    n->rdt = rdt;
    n->bytes = rbytes;
    n->inl = inl;
    n->lean =
        rbytes * (uint64_t)c->size <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c);
    return nb_start(n, c, nb);
}

/* The block size is the receive side's at the root and the send side's
 * elsewhere: equal in a correct program, so every member takes the same
 * path. Where they differ (on the same side of the path's sizes), the
 * root compares every block's count with its own (fy_coll_sig). */
int fy_coll_shm_igather(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct fy_dtype *rdt, int root, struct fy_comm *c,
                        struct fy_sched **nb)
{
    bool is_root = c->rank == root;
    uint64_t bytes = is_root ? (uint64_t)rcount * (uint64_t)rdt->size
                             : (uint64_t)scount * (uint64_t)sdt->size;
    bool inl = bytes <= FY_COLL_SLOT_DATA;
    if (bytes == 0 || (!inl && !by_addr(bytes)) || !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_GATHER);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->scount = scount;
    n->sdt = sbuf == MPI_IN_PLACE ? NULL : sdt;
    n->rbuf = rbuf;
    n->rcount = rcount;
    n->rdt = is_root ? rdt : NULL; /* the others' may be anything */
    n->root = root;
    n->bytes = bytes;
    n->inl = inl;
    return nb_start(n, c, nb);
}

int fy_coll_shm_iscatter(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct fy_dtype *rdt, int root, struct fy_comm *c,
                         struct fy_sched **nb)
{
    bool is_root = c->rank == root;
    uint64_t bytes = is_root ? (uint64_t)scount * (uint64_t)sdt->size
                             : (uint64_t)rcount * (uint64_t)rdt->size;
    bool inl = bytes * (uint64_t)c->size <= FY_COLL_SLOT_DATA;
    if (bytes == 0 || (!inl && !by_addr(bytes)) || !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_SCATTER);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->scount = scount;
    n->sdt = is_root ? sdt : NULL;
    n->rbuf = rbuf;
    n->rcount = rcount;
    n->rdt = rbuf == MPI_IN_PLACE ? NULL : rdt;
    n->root = root;
    n->bytes = bytes;
    n->inl = inl;
    return nb_start(n, c, nb);
}

/* ---- the v forms' entry points -------------------------------------------
 * Only the root of a gatherv or scatterv knows every block's size, and
 * only its owner an alltoallv's send block: they run here when single
 * copy works (a job-wide fact) and the descriptor table fits the slot
 * (member count), so that every block fits somewhere, inline or by
 * address. An allgatherv's counts are everyone's: it also runs here
 * without single copy when every block fits the slot after its
 * descriptor. In-place alltoallv takes the point-to-point schedule (a
 * block read by address could be overwritten by its owner's receives). */

static bool nb_v_here(struct fy_comm *c, int nblocks)
{
    return fy_coll_shm.cma &&
           (uint64_t)nblocks * sizeof(struct fy_coll_desc) <=
               FY_COLL_SLOT_DATA &&
           nb_here(c);
}

/* Copy the P counts and displacements into n->vec (pair k: counts at
 * 2kP, displacements after) and point the layout l at the copies. */
static void nb_keep_vec(struct nb *n, int k, int P, struct fy_coll_vec counts,
                        struct fy_coll_vec displs, struct fy_coll_layout *l)
{
    if (!n->vec)
        n->vec = nb_alloc((size_t)P * 4 * sizeof(MPI_Aint));
    MPI_Aint *cv = n->vec + (size_t)k * 2 * (size_t)P, *dv = cv + P;
    for (int r = 0; r < P; r++) {
        cv[r] = fy_vec_at(counts, r);
        dv[r] = fy_vec_at(displs, r);
    }
    l->counts = fy_vec_wide(cv);
    l->displs = fy_vec_wide(dv);
}

int fy_coll_shm_igatherv(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf,
                         struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                         struct fy_dtype *rdt, int root, struct fy_comm *c,
                         struct fy_sched **nb)
{
    if (!nb_v_here(c, 1))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_GATHERV);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->scount = scount;
    n->sdt = sbuf == MPI_IN_PLACE ? NULL : sdt;
    n->src = (struct fy_coll_layout){.buf = sbuf, .count = scount, .dt = sdt};
    if (c->rank == root) {
        n->rdt = rdt;
        n->dst = (struct fy_coll_layout){.buf = rbuf, .dt = rdt};
        nb_keep_vec(n, 0, c->size, rcounts, displs, &n->dst);
    }
    n->root = root;
    return nb_start(n, c, nb);
}

int fy_coll_shm_iscatterv(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec displs, struct fy_dtype *sdt,
                          void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                          int root, struct fy_comm *c, struct fy_sched **nb)
{
    if (!nb_v_here(c, c->size))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_SCATTERV);
    if (!n)
        return -ENOMEM;
    if (c->rank == root) {
        n->sdt = sdt;
        n->src = (struct fy_coll_layout){.buf = sbuf, .dt = sdt};
        nb_keep_vec(n, 0, c->size, scounts, displs, &n->src);
    }
    n->rbuf = rbuf;
    n->rcount = rcount;
    n->rdt = rbuf == MPI_IN_PLACE ? NULL : rdt;
    n->root = root;
    return nb_start(n, c, nb);
}

int fy_coll_shm_iallgatherv(const void *sbuf, MPI_Count scount,
                            struct fy_dtype *sdt, void *rbuf,
                            struct fy_coll_vec rcounts,
                            struct fy_coll_vec displs, struct fy_dtype *rdt,
                            struct fy_comm *c, struct fy_sched **nb)
{
    uint64_t room = FY_COLL_SLOT_DATA - sizeof(struct fy_coll_desc);
    bool fit = true;
    for (int r = 0; r < c->size && fit; r++)
        fit = (uint64_t)fy_vec_at(rcounts, r) * (uint64_t)rdt->size <= room;
    if ((!fit && !fy_coll_shm.cma) || !nb_here(c))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_ALLGATHERV);
    if (!n)
        return -ENOMEM;
    n->sbuf = sbuf;
    n->scount = scount;
    n->sdt = sbuf == MPI_IN_PLACE ? NULL : sdt;
    n->rdt = rdt;
    n->dst = (struct fy_coll_layout){.buf = rbuf, .dt = rdt};
    nb_keep_vec(n, 0, c->size, rcounts, displs, &n->dst);
    return nb_start(n, c, nb);
}

int fy_coll_shm_ialltoallv(const void *sbuf, struct fy_coll_vec scounts,
                           struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                           void *rbuf, struct fy_coll_vec rcounts,
                           struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                           struct fy_comm *c, struct fy_sched **nb)
{
    if (sbuf == MPI_IN_PLACE || !nb_v_here(c, c->size))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_ALLTOALLV);
    if (!n)
        return -ENOMEM;
    n->sdt = sdt;
    n->rdt = rdt;
    n->src = (struct fy_coll_layout){.buf = sbuf, .dt = sdt};
    n->dst = (struct fy_coll_layout){.buf = rbuf, .dt = rdt};
    nb_keep_vec(n, 0, c->size, scounts, sdispls, &n->src);
    nb_keep_vec(n, 1, c->size, rcounts, rdispls, &n->dst);
    return nb_start(n, c, nb);
}

/* Alltoallw: Ialltoallv's machine over layouts with a datatype per block
 * (byte displacements); the types are kept while it runs, as MPI lets
 * the program free them once the call returned. */
int fy_coll_shm_ialltoallw(const void *sbuf, struct fy_coll_vec scounts,
                           struct fy_coll_vec sdispls,
                           struct fy_dtype *const *sdts, void *rbuf,
                           struct fy_coll_vec rcounts,
                           struct fy_coll_vec rdispls,
                           struct fy_dtype *const *rdts, struct fy_comm *c,
                           struct fy_sched **nb)
{
    if (sbuf == MPI_IN_PLACE || !nb_v_here(c, c->size))
        return FY_COLL_SHM_NO;
    struct nb *n = nb_new(NB_ALLTOALLV);
    if (!n)
        return -ENOMEM;
    int P = c->size;
    n->dts = nb_alloc((size_t)P * 2 * sizeof(*n->dts));
    for (int r = 0; r < P; r++) {
        n->dts[r] = sdts[r];
        n->dts[P + r] = rdts[r];
    }
    n->src =
        (struct fy_coll_layout){.buf = sbuf, .dt = n->dts[0], .dts = n->dts};
    n->dst = (struct fy_coll_layout){
        .buf = rbuf, .dt = n->dts[P], .dts = n->dts + P};
    nb_keep_vec(n, 0, P, scounts, sdispls, &n->src);
    nb_keep_vec(n, 1, P, rcounts, rdispls, &n->dst);
    return nb_start(n, c, nb);
}

/* Scan and exscan when the vector fits a slot (count and type size are
 * the same on every member); larger ones take the point-to-point
 * schedule. */
int fy_coll_shm_iscan(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op, bool ex,
                      struct fy_comm *c, struct fy_sched **nb)
{
    int rc;
    struct nb *n =
        nb_inline_reduction(NB_SCAN, sbuf, rbuf, count, count, dt, op, c, &rc);
    if (!n)
        return rc;
    n->ex = ex;
    return nb_start(n, c, nb);
}
