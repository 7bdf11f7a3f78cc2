/* SPDX-License-Identifier: MIT */
/* Node-level collectives over shared memory: every member of a
 * communicator whose ranks all share this node publishes into its own
 * collective area and reads the others' directly, instead of passing
 * point-to-point messages along a tree. Small data goes through the
 * areas (written once, read by all); a large broadcast is read by every
 * receiver straight from the root's buffer with one kernel copy (seed
 * 003's design), or pipelined through the root's two cells where that is
 * not allowed. Reductions combine in rank order, the whole vector by
 * each member that needs it (small vectors; a reduce at 2 ranks or with
 * ranks outnumbering cores, at the root) or a slice each, then gathered;
 * reduce-scatter and the scans combine, in rank order, the pieces each
 * member needs, a cell per contribution and round. The v and w forms
 * describe their blocks at the head of the publication (inline, or at an
 * address in the owner's memory for single-copy readers).
 *
 * Invariants of the collective area (one per local rank, two cells each;
 * see struct fy_coll_cell):
 * - A cell holds one publication: 'tag' names it (communicator context,
 *   collective number, step), 'readers' counts the members still to read
 *   it. Only the owner writes data, addr, tag and sets readers; readers
 *   only decrement 'readers'.
 * - The owner reuses a cell only when readers == 0, so a reader that saw
 *   its tag may read the cell until it decrements: nothing changes under
 *   it. Tags of live publications are distinct (the collective number and
 *   step differ), so a reader never mistakes one publication for another.
 * - A finished publication (readers == 0) is never taken for a live one:
 *   a communicator created later may reuse the context id and restart the
 *   collective numbers, so MPI_Comm_free first drains the freeing rank's
 *   publications on that context (fy_coll_shm_comm_free).
 * - Whether a collective runs here, and by which path, depends only on
 *   what every member agrees on (sizes and type signatures, job-wide
 *   settings), never on one member's datatype or allocation luck: members
 *   on different paths would never meet.
 * - Nothing read from a cell steers a copy: lengths, counts and offsets
 *   are the reader's own (from its MPI arguments); a scribbled cell can
 *   only yield wrong values, and a scribbled address only a failed
 *   process_vm_readv of the owner's memory (reported, the job ends).
 *   The one address that steers a write, the root's receive buffer in
 *   a reduction shared between two ranks, carries a check word
 *   (reduce_share).
 * Blocking collectives only: the nonblocking ones run in shm_nb.c, in
 * slots of their own. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "boot/boot.h"
#include "chan/chan.h"
#include "coll/coll_int.h"
#include "coll/shm.h"
#include "shm/shm.h"
#include "util/copy.h"
#include "util/mt.h"
#include "util/tuned.h"
#include "xfer/xfer.h"

struct fy_coll_shm fy_coll_shm;

int fy_coll_shm_declare(struct fy_shm_layout *lay)
{
    int rc = fy_shm_region_add(
        lay, FY_COLL_REGION, FY_SHM_PER_RANK, sizeof(struct fy_coll_cell),
        FY_COLL_CELLS * FY_COLL_TSLOTS, FY_SHM_PAGE,
        FY_SHM_SIG(sizeof(struct fy_coll_cell),
                   offsetof(struct fy_coll_cell, addr),
                   offsetof(struct fy_coll_cell, len),
                   offsetof(struct fy_coll_cell, readers),
                   offsetof(struct fy_coll_cell, data)));
    if (rc < 0)
        return rc;
    rc = fy_shm_region_add(lay, FY_COLL_NB_REGION, FY_SHM_PER_RANK,
                           sizeof(struct fy_coll_slot), FY_COLL_SLOTS,
                           FY_SHM_PAGE,
                           FY_SHM_SIG(sizeof(struct fy_coll_slot),
                                      offsetof(struct fy_coll_slot, addr),
                                      offsetof(struct fy_coll_slot, len),
                                      offsetof(struct fy_coll_slot, readers),
                                      offsetof(struct fy_coll_slot, data)));
    if (rc < 0)
        return rc;
    rc = fy_shm_region_add(lay, FY_COLL_BAR_REGION, FY_SHM_PER_RANK,
                           sizeof(struct fy_coll_bar), FY_COLL_SLOTS,
                           FY_SHM_PAGE,
                           FY_SHM_SIG(sizeof(struct fy_coll_bar),
                                      offsetof(struct fy_coll_bar, gen[1])));
    if (rc < 0)
        return rc;
    rc = fy_shm_region_add(
        lay, FY_COLL_FLAG_REGION, FY_SHM_PER_RANK, sizeof(struct fy_coll_flag),
        FY_COLL_FLAG_CTXS * 2, FY_SHM_PAGE,
        FY_SHM_SIG(sizeof(struct fy_coll_flag),
                   offsetof(struct fy_coll_flag, done), FY_COLL_FLAG_DATA));
    return rc < 0 ? rc : 0;
}

/* What a blocking collective keeps while it runs, per thread slot: under
 * MPI_THREAD_MULTIPLE several threads of a rank may each be in one, on
 * different communicators (MPI forbids two at once on one), and a thread
 * that waits gives the engine up to the others. Each holds a slot from
 * fy_coll_shm_enter to fy_coll_shm_leave and publishes only in its slot's
 * FY_COLL_CELLS cells, so its claims wait only for readers of its own
 * collective, never for those of another thread's (which could wait for
 * us at another rank: a deadlock). Below MULTIPLE slot 0 serves all. */
struct coll_thread {
    /* Members of the running collective's communicator, as local ranks
     * (index in the segment) and world ranks (for wake-ups). */
    int *loc, *world;
    int cap;
    struct fy_coll_cell **x; /* the members' cells (reductions) */
    uint64_t *addr;          /* and their buffers' addresses, as read once */
    int xcap;
    char *scratch; /* combine_read's two chunks of REDUCE_READ_CHUNK */
    uint32_t next; /* our next cell, round robin within the slot */
    unsigned slot;
    unsigned depth; /* nested enters of the holding thread */
    /* What the current wait is for (read by the sleep check). */
    struct {
        struct fy_coll_cell *cell; /* wait for readers == 0 of this cell */
        int owner;                 /* or for a publication of this rank */
        uint64_t tag;
    } wait;
    struct {
        struct fy_coll_bar *bar;
        uint32_t gen;
    } bar;
    struct {
        _Atomic uint64_t *word; /* wait for *word >= v (flag lines) */
        uint64_t v;
    } flag;
};
static struct coll_thread s_th[FY_COLL_TSLOTS];
static _Atomic unsigned s_busy; /* slots held (under MULTIPLE) */
static _Thread_local struct coll_thread *t_th;

static inline struct coll_thread *T(void)
{
    if (FY_LIKELY(!fy_mt_on))
        return &s_th[0];
    if (FY_UNLIKELY(!t_th))
        fy_fatal(1, "internal: blocking collective outside its thread slot");
    return t_th;
}

int fy_coll_shm_init(void)
{
    const char *mode = fy_env_str(FY_ENV_COLL);
    if (strcmp(mode, "p2p") == 0) {
        fy_coll_shm.on = false;
        return 0;
    }
    if (strcmp(mode, "auto") != 0 && strcmp(mode, "shm") != 0) {
        FY_ERROR("FERRY_COLL=%s: expected auto, shm or p2p", mode);
        return -EINVAL;
    }
    fy_coll_shm.on = fy_shm.base != NULL && fy_boot.local_size > 1;
    if (fy_coll_shm.on &&
        (!(fy_coll_shm.cells = fy_shm_region_ptr(FY_COLL_REGION, NULL)) ||
         !(fy_coll_shm.slots = fy_shm_region_ptr(FY_COLL_NB_REGION, NULL)) ||
         !(fy_coll_shm.bars = fy_shm_region_ptr(FY_COLL_BAR_REGION, NULL)) ||
         !(fy_coll_shm.flags = fy_shm_region_ptr(FY_COLL_FLAG_REGION, NULL))))
        return -EPROTO;
    fy_coll_shm.cma = (fy_xfer_avail & (1u << FY_XFER_CMA)) != 0;
    /* Environment, else tuning file, else default: the same on every
     * member (one environment and one file per job and node), as the
     * choice of path requires. */
    fy_coll_shm.cma_min = (uint64_t)fy_tuned_value(FY_ENV_COLL_CMA_MIN, NULL);
    fy_coll_shm.slice_min =
        (uint64_t)fy_tuned_value(FY_ENV_COLL_SLICE_MIN, NULL);
    fy_coll_shm.direct_min =
        (uint64_t)fy_tuned_value(FY_ENV_COLL_DIRECT_MIN, NULL);
    for (unsigned i = 0; i < FY_COLL_TSLOTS; i++) {
        s_th[i].next = 0;
        s_th[i].slot = i;
    }
    return 0;
}

void fy_coll_shm_finalize(void)
{
    for (unsigned i = 0; i < FY_COLL_TSLOTS; i++) {
        struct coll_thread *t = &s_th[i];
        free(t->loc);
        free(t->world);
        free(t->x);
        free(t->addr);
        free(t->scratch);
        *t = (struct coll_thread){.slot = i};
    }
    fy_coll_shm.on = false;
}

/* Cell i of local rank 'local' (FY_COLL_CELLS per thread slot). */
static struct fy_coll_cell *cell_of(int local, unsigned i)
{
    return &fy_coll_shm
                .cells[(uint64_t)local * FY_COLL_CELLS * FY_COLL_TSLOTS + i];
}

/* Whether a blocking collective on c may run here: FERRY_COLL allowing,
 * an intracommunicator of two members or more, all on this node.
 * Intercommunicators never come here (their collectives are in inter.c);
 * this keeps it so should a caller slip. */
static bool all_here(struct fy_comm *c)
{
    if (!fy_coll_shm.on || c->size < 2 || c->inter)
        return false;
    for (int r = 0; r < c->size; r++)
        if (fy_boot_local(fy_comm_world_rank(c, r)) < 0)
            return false;
    return true;
}

/* Hold a thread slot (under MULTIPLE, for a thread holding none). */
static void slot_take(void)
{
    unsigned busy = atomic_load(&s_busy);
    for (;;) {
        unsigned i = 0;
        while (i < FY_COLL_TSLOTS && (busy & (1u << i)))
            i++;
        if (i == FY_COLL_TSLOTS)
            fy_fatal(1,
                     "MPI_THREAD_MULTIPLE: more than %u threads of this rank "
                     "in blocking collectives over shared memory at once "
                     "(FERRY_COLL=p2p has no such limit, nor have the "
                     "nonblocking collectives)",
                     FY_COLL_TSLOTS);
        if (atomic_compare_exchange_weak(&s_busy, &busy, busy | 1u << i)) {
            t_th = &s_th[i];
            t_th->depth = 1;
            /* M2: release pairs with M1 in find_pub(): readers search
             * our other slots' cells before we publish in one. */
            struct fy_coll_bar *b = fy_coll_bar_of(fy_boot.local_rank, 0);
            uint32_t used =
                atomic_load_explicit(&b->more_slots, memory_order_relaxed);
            while (used < i + 1 &&
                   !atomic_compare_exchange_weak_explicit(
                       &b->more_slots, &used, i + 1, memory_order_release,
                       memory_order_relaxed))
                ;
            return;
        }
    }
}

/* Hold this thread's slot (under MULTIPLE): one more level if it holds
 * one already (a collective inside one of ours), else take a free one.
 * fy_coll_shm_leave lets it go. */
static void slot_hold(void)
{
    if (t_th)
        t_th->depth++;
    else
        slot_take();
}

bool fy_coll_shm_enter(struct fy_comm *c)
{
    if (FY_LIKELY(!fy_mt_on) || !all_here(c))
        return false;
    slot_hold();
    return true;
}

void fy_coll_shm_leave(void)
{
    if (--t_th->depth)
        return;
    unsigned slot = t_th->slot;
    t_th = NULL;
    atomic_fetch_and(&s_busy, ~(1u << slot));
}

/* Whether this blocking collective on c may run here: all members on this
 * node. Fills the member tables. */
static bool members(struct fy_comm *c)
{
    if (!all_here(c))
        return false;
    struct coll_thread *t = T();
    if (c->size > t->cap) {
        int cap = c->size;
        int *l = realloc(t->loc, (size_t)cap * sizeof(int));
        if (l)
            t->loc = l;
        int *w = realloc(t->world, (size_t)cap * sizeof(int));
        if (w)
            t->world = w;
        /* Not a reason to take the point-to-point path: the other
         * members would not, and the collective would never meet. */
        if (!l || !w)
            fy_fatal(1, "collective: out of memory for %d members", c->size);
        t->cap = cap;
    }
    for (int r = 0; r < c->size; r++) {
        t->world[r] = fy_comm_world_rank(c, r);
        t->loc[r] = fy_boot_local(t->world[r]);
    }
    return true;
}

static uint64_t tag_of(struct fy_comm *c, uint32_t seq, uint32_t step)
{
    /* ctx + 1: never 0, which an unused cell holds. */
    return (uint64_t)(c->ctx + 1) << 48 | (uint64_t)seq << 16 |
           (step & 0xffffu);
}

/* ---- waiting ------------------------------------------------------------ */

static struct fy_coll_cell *find_pub(int owner, uint64_t tag)
{
    /* Slot 0's cells, and the others once the owner has used them (M1:
     * acquire pairs with M2 in fy_coll_shm_enter: its flag is up before
     * it publishes there). */
    uint32_t used = atomic_load_explicit(&fy_coll_bar_of(owner, 0)->more_slots,
                                         memory_order_acquire);
    unsigned n = FY_COLL_CELLS * (used < 1                ? 1u
                                  : used > FY_COLL_TSLOTS ? FY_COLL_TSLOTS
                                                          : used);
    for (unsigned i = 0; i < n; i++) {
        struct fy_coll_cell *x = cell_of(owner, i);
        /* A1: acquire pairs with R1 in publish(): the owner's data, addr
         * and readers are visible once we see its tag. A publication we
         * are to read counts us among its readers until we are done; one
         * with none left is a finished one of an earlier communicator
         * with this context (fy_coll_shm_comm_free drained it), which the
         * owner may be overwriting right now: A3 (pairs with R3) then
         * makes the second look at the tag see its invalidation. */
        if (atomic_load_explicit(&x->tag, memory_order_acquire) == tag &&
            atomic_load_explicit(&x->readers, memory_order_acquire) > 0 &&
            atomic_load_explicit(&x->tag, memory_order_acquire) == tag)
            return x;
    }
    return NULL;
}

static bool cell_free(void)
{
    struct fy_coll_cell *x = T()->wait.cell;
    /* A2: acquire pairs with R2 in done(): the readers' last reads of the
     * cell happened before we overwrite it. */
    if (atomic_load_explicit(&x->readers, memory_order_acquire) == 0)
        return true;
    /* W1: Dekker with W2 in done(): either we see the last reader's
     * decrement or it sees that we wait (and wakes us). */
    atomic_store_explicit(&x->owner_waits, 1, memory_order_seq_cst);
    return atomic_load_explicit(&x->readers, memory_order_seq_cst) == 0;
}

static bool pub_visible(void)
{
    const struct coll_thread *t = T();
    return find_pub(t->wait.owner, t->wait.tag) != NULL;
}

/* Drive the engine while waiting (a member may be blocked in a
 * point-to-point transfer that needs us), handing the core over when
 * ranks outnumber cores. */
static void wait_for(bool (*ready)(void))
{
    unsigned spins = 0;
    while (!ready()) {
        if (fy_progress() == 0)
            fy_progress_idle_until(&spins, ready);
        else
            spins = 0;
    }
}

/* Our next cell, once every reader of what it held is done. */
static struct fy_coll_cell *claim(void)
{
    struct coll_thread *t = T();
    struct fy_coll_cell *x =
        cell_of(fy_boot.local_rank,
                t->slot * FY_COLL_CELLS + t->next++ % FY_COLL_CELLS);
    t->wait.cell = x;
    if (!cell_free())
        wait_for(cell_free);
    /* Invalidate before the data changes (see A3 in find_pub). */
    atomic_store_explicit(&x->tag, 0, memory_order_relaxed);
    /* Nobody reads it now: the next publication's readers see this (it
     * precedes the publishing release). */
    atomic_store_explicit(&x->owner_waits, 0, memory_order_relaxed);
    return x;
}

/* Publish a claimed cell to 'nreaders' members, with 'len' bytes at 'addr'
 * for single-copy readers (NULL, 0: the data is in the cell); wake the
 * members that may be waiting for it: member 'only', or (only < 0) all
 * but us. */
static void publish(struct fy_comm *c, struct fy_coll_cell *x, uint64_t tag,
                    uint32_t nreaders, const void *addr, uint64_t len, int only)
{
    x->addr = (uint64_t)(uintptr_t)addr;
    x->len = len;
    /* R3: release pairs with A3 in find_pub(): whoever sees this count
     * sees the tag invalidated by claim(). */
    atomic_store_explicit(&x->readers, nreaders, memory_order_release);
    /* R1: release pairs with A1 in find_pub(). */
    atomic_store_explicit(&x->tag, tag, memory_order_release);
    if (only >= 0) {
        if (only != c->rank)
            fy_wake(T()->world[only]);
        return;
    }
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            fy_wake(T()->world[r]);
}

/* Until every reader of our cell x is done (our buffer is theirs to read
 * until then). */
static void wait_readers(struct fy_coll_cell *x)
{
    T()->wait.cell = x;
    if (!cell_free())
        wait_for(cell_free);
}

/* The publication 'tag' of member r, once it is there. */
static struct fy_coll_cell *await(int r, uint64_t tag)
{
    struct coll_thread *t = T();
    struct fy_coll_cell *x = find_pub(t->loc[r], tag);
    if (x)
        return x;
    t->wait.owner = t->loc[r];
    t->wait.tag = tag;
    wait_for(pub_visible);
    return find_pub(t->loc[r], tag);
}

/* We are done reading member r's cell x. Only the last reader wakes
 * its owner, and only if it waits for the cell (claim, wait_readers: for
 * readers == 0): with ranks sharing cores every other wake-up would be a
 * system call and a sleeper run for nothing. */
static void done(int r, struct fy_coll_cell *x)
{
    /* R2: release pairs with A2 in cell_free(); W2: seq_cst, Dekker with
     * W1 there. */
    if (atomic_fetch_sub_explicit(&x->readers, 1, memory_order_seq_cst) == 1 &&
        atomic_load_explicit(&x->owner_waits, memory_order_seq_cst))
        fy_wake(T()->world[r]);
}

/* The same without waking the owner, for a publication whose owner waits
 * next for something of ours published after this (its cell is free by
 * then): a barrier's arrivals, acknowledged before the release. */
static void done_quiet(struct fy_coll_cell *x)
{
    /* R2: release pairs with A2 in cell_free(). */
    atomic_fetch_sub_explicit(&x->readers, 1, memory_order_release);
}

/* ---- lean collectives -----------------------------------------------------
 * With a core for every rank (no member sleeps, so nobody needs waking), a
 * barrier and the collectives of at most FY_COLL_FLAG_DATA bytes per member
 * go through the members' flag lines (struct fy_coll_flag) instead of the
 * cells: a member writes its payload and its arrival into its own line,
 * and the others read that line once they see the arrival - one crossing
 * of the node, where a cell's claim, publication, search and readers'
 * count cost three or four.
 * Invariants:
 * - The k-th lean collective on a communicator is arrival base + k at
 *   every member. base is the largest 'seq' of the members' lines when the
 *   communicator runs its first one (agreed through the cells,
 *   lean_agree), so a value an earlier communicator with this context
 *   left is never taken for one of this one; seq and done only grow.
 * - A member writes payload v into data[v & 1] only once every other
 *   member is done with v - 2 (done >= v - 2), so a reader that saw
 *   arrival v reads data[v & 1] unchanged until its own done reaches v.
 *   c->flag.known bounds what is known of the others' done: after a
 *   collective in which we saw every member arrive at v, all are done
 *   with v - 1, so where every member reads every other the check costs
 *   nothing.
 * - MPI_Comm_free waits until every other member is done with our last
 *   arrival: no reader of our line is left when the context is reused.
 * - Whether a collective runs here depends only on what every member
 *   agrees on (sizes, the member count, fy_chan.wake_peers, the
 *   context), and nothing read from a line steers a copy: lengths are
 *   the reader's own, at most FY_COLL_FLAG_DATA. */

static struct fy_coll_flag *flag_of(int local, uint32_t ctx)
{
    return fy_coll_flag_of(local, ctx / 2, FY_COLL_FLAG_BLOCKING);
}

bool fy_coll_lean_ok(const struct fy_comm *c)
{
    return !fy_chan.wake_peers && c->size <= FY_COLL_LEAN_MAX &&
           c->ctx / 2 < FY_COLL_FLAG_CTXS;
}

void fy_coll_lean_start(struct fy_comm_lean *st, uint64_t base)
{
    if (base > UINT64_MAX / 4)
        fy_fatal(1,
                 "malformed collective flag line on the shared segment "
                 "(arrival count %llu)",
                 (unsigned long long)base);
    *st =
        (struct fy_comm_lean){.on = true, .base = base, .k = 0, .known = base};
}

static bool flag_reached(void)
{
    const struct coll_thread *t = T();
    /* F1: acquire pairs with F2/F3 (the owner's release stores): its
     * payload, or its last reads of ours, come before. */
    return atomic_load_explicit(t->flag.word, memory_order_acquire) >=
           t->flag.v;
}

static void flag_wait(_Atomic uint64_t *word, uint64_t v)
{
    struct coll_thread *t = T();
    t->flag.word = word;
    t->flag.v = v;
    if (!flag_reached())
        wait_for(flag_reached);
}

/* The first lean collective on c: every member's arrival count, through
 * the cells; the largest is the base. */
static void lean_agree(struct fy_comm *c)
{
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    uint64_t base = fy_coll_lean_count(flag_of(fy_boot.local_rank, c->ctx));
    struct fy_coll_cell *x = claim();
    memcpy(x->inl, &base, sizeof(base));
    publish(c, x, tag, (uint32_t)c->size - 1, NULL, 0, -1);
    for (int i = 1; i < c->size; i++) {
        int r = (c->rank + i) % c->size;
        struct fy_coll_cell *y = await(r, tag);
        uint64_t v;
        memcpy(&v, y->inl, sizeof(v));
        done(r, y);
        base = FY_MAX(base, v);
    }
    /* Every member computes the same maximum. */
    fy_coll_lean_start(&c->flag, base);
}

/* Our arrival value for the next lean collective on c. */
static uint64_t lean_begin(struct fy_comm *c)
{
    if (FY_UNLIKELY(!c->flag.on))
        lean_agree(c);
    return c->flag.base + ++c->flag.k;
}

/* Before we write payload v: every other member done with v - 2. */
static void lean_room(struct fy_comm *c, uint64_t v)
{
    if (c->flag.known + 2 >= v)
        return;
    const struct coll_thread *t = T();
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            flag_wait(&flag_of(t->loc[r], c->ctx)->done, v - 2);
    c->flag.known = v - 2;
}

/* Publish arrival v (its payload, if any, is in place). */
static void lean_arrive(struct fy_coll_flag *me, uint64_t v)
{
    /* F2: release pairs with F1: the payload comes first. */
    atomic_store_explicit(&me->seq, v, memory_order_release);
}

/* We read nothing of arrival v any more. */
static void lean_done(struct fy_coll_flag *me, uint64_t v)
{
    /* F3: release pairs with F1 in lean_room and the drain: our reads of
     * the others' payloads come first. */
    atomic_store_explicit(&me->done, v, memory_order_release);
}

/* Member r's line, once it has arrived at v. */
static struct fy_coll_flag *lean_await(const struct fy_comm *c, int r,
                                       uint64_t v)
{
    struct fy_coll_flag *f = flag_of(T()->loc[r], c->ctx);
    flag_wait(&f->seq, v);
    return f;
}

/* Every other member has arrived at v. */
static void lean_all_arrived(struct fy_comm *c, uint64_t v)
{
    for (int i = 1; i < c->size; i++)
        (void)lean_await(c, (c->rank + i) % c->size, v);
    fy_coll_lean_seen_all(&c->flag, v);
}

static void lean_barrier(struct fy_comm *c)
{
    uint64_t v = lean_begin(c);
    struct fy_coll_flag *me = flag_of(fy_boot.local_rank, c->ctx);
    lean_arrive(me, v);
    lean_all_arrived(c, v);
    lean_done(me, v);
}

static int lean_bcast(void *buf, MPI_Count count, struct fy_dtype *dt,
                      uint64_t bytes, int root, struct fy_comm *c)
{
    uint64_t v = lean_begin(c);
    struct fy_coll_flag *me = flag_of(fy_boot.local_rank, c->ctx);
    int err = 0;
    if (c->rank == root) {
        lean_room(c, v);
        (void)fy_coll_put_block(me->data[v & 1], bytes, buf, count, dt);
        me->len[v & 1] = (uint32_t)bytes;
        lean_arrive(me, v);
    } else {
        struct fy_coll_flag *f = lean_await(c, root, v);
        uint64_t sent = FY_MIN(f->len[v & 1], FY_COLL_FLAG_DATA);
        err = fy_coll_sig(sent, bytes);
        fy_coll_get_bytes(buf, count, dt, f->data[v & 1], FY_MIN(sent, bytes));
    }
    lean_done(me, v);
    return err;
}

/* Reduce (root >= 0) or allreduce (root < 0) of 'bytes' contiguous bytes:
 * each member that gets the result combines every contribution, in rank
 * order (the same bits everywhere). */
static int lean_reduce(const char *in, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op, uint64_t bytes,
                       int root, struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    uint64_t v = lean_begin(c);
    struct fy_coll_flag *mine = flag_of(fy_boot.local_rank, c->ctx);
    if (root < 0 || me != root) {
        lean_room(c, v);
        memcpy(mine->data[v & 1], in, (size_t)bytes);
        mine->len[v & 1] = (uint32_t)bytes;
        lean_arrive(mine, v);
    }
    int err = 0;
    if (root < 0 || me == root) {
        /* Ours from 'in' (unchanged until the end, even in place). A
         * contribution of another size (mismatched counts) is reported;
         * its payload's bytes are combined as ours are, within its line. */
        alignas(16) unsigned char acc[FY_COLL_FLAG_DATA];
        for (int r = 0; r < P; r++)
            if (r != me)
                err = fy_coll_keep(
                    err, fy_coll_sig(lean_await(c, r, v)->len[v & 1], bytes));
        memcpy(acc,
               P - 1 == me ? (const void *)in
                           : lean_await(c, P - 1, v)->data[v & 1],
               (size_t)bytes);
        for (int r = P - 2; r >= 0; r--) {
            const void *x =
                r == me ? (const void *)in : lean_await(c, r, v)->data[v & 1];
            err = fy_coll_keep(err, fy_op_apply(op, x, acc, count, dt));
        }
        fy_coll_lean_seen_all(&c->flag, v);
        memcpy(rbuf, acc, (size_t)bytes);
    }
    lean_done(mine, v);
    return err;
}

/* Allgather (alltoall false: our block, rbytes) or all-to-all (P blocks
 * of rbytes, ours for member r at r * rbytes). */
static int lean_exchange(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct fy_dtype *rdt, uint64_t rbytes, bool alltoall,
                         struct fy_comm *c)
{
    int P = c->size, me = c->rank, err = 0;
    uint64_t v = lean_begin(c);
    struct fy_coll_flag *mine = flag_of(fy_boot.local_rank, c->ctx);
    unsigned char *out = mine->data[v & 1];
    lean_room(c, v);
    bool inplace = sbuf == MPI_IN_PLACE;
    /* Our send block's size, for the readers to compare with theirs; our
     * own block gets what both sizes hold, as theirs. */
    uint64_t sbytes = inplace ? rbytes : (uint64_t)scount * (uint64_t)sdt->size;
    uint64_t own = FY_MIN(sbytes, rbytes);
    mine->len[v & 1] = (uint32_t)sbytes;
    if (!alltoall) {
        const void *in =
            inplace ? fy_coll_block_at(rbuf, me, rcount, rdt) : sbuf;
        err = fy_coll_put_block(out, rbytes, in, inplace ? rcount : scount,
                                inplace ? rdt : sdt);
        lean_arrive(mine, v);
        if (!inplace)
            fy_coll_get_bytes(fy_coll_block_at(rbuf, me, rcount, rdt), rcount,
                              rdt, out, own);
    } else {
        err = fy_coll_put_alltoall(out, rbytes, P, sbuf, scount, sdt, rbuf,
                                   rcount, rdt);
        lean_arrive(mine, v);
        fy_coll_get_bytes(fy_coll_block_at(rbuf, me, rcount, rdt), rcount, rdt,
                          out + (uint64_t)me * rbytes, own);
    }
    uint64_t at = alltoall ? (uint64_t)me * rbytes : 0;
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        struct fy_coll_flag *f = lean_await(c, r, v);
        uint64_t theirs = f->len[v & 1]; /* read once */
        err = fy_coll_keep(err, fy_coll_sig(theirs, rbytes));
        fy_coll_get_bytes(fy_coll_block_at(rbuf, r, rcount, rdt), rcount, rdt,
                          f->data[v & 1] + at, FY_MIN(theirs, rbytes));
    }
    fy_coll_lean_seen_all(&c->flag, v);
    lean_done(mine, v);
    return err;
}

void fy_coll_lean_drain(struct fy_comm *c, const struct fy_comm_lean *st,
                        int which)
{
    if (!st->on)
        return;
    uint64_t v = st->base + st->k;
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank)
            continue;
        _Atomic uint64_t *w =
            &fy_coll_flag_of(fy_boot_local(fy_comm_world_rank(c, r)),
                             c->ctx / 2, which)
                 ->done;
        /* No rank sleeps where lean collectives run: this spins (or
         * yields, under MULTIPLE), driving the engine. */
        unsigned spins = 0;
        while (atomic_load_explicit(w, memory_order_acquire) < v) {
            if (fy_progress() == 0)
                fy_progress_idle(&spins);
            else
                spins = 0;
        }
    }
}

void fy_coll_shm_comm_free(struct fy_comm *c)
{
    if (!fy_coll_shm.on)
        return;
    /* Any communicator (an intercommunicator's context may be one our
     * cells carry): its waits need a slot under MULTIPLE. */
    bool in = FY_UNLIKELY(fy_mt_on);
    if (in)
        slot_hold();
    for (unsigned i = 0; i < FY_COLL_CELLS * FY_COLL_TSLOTS; i++) {
        struct fy_coll_cell *x = cell_of(fy_boot.local_rank, i);
        uint64_t t = atomic_load_explicit(&x->tag, memory_order_relaxed);
        if (t >> 48 == (uint64_t)c->ctx + 1)
            wait_readers(x);
    }
    fy_coll_lean_drain(c, &c->flag, FY_COLL_FLAG_BLOCKING);
    if (in)
        fy_coll_shm_leave();
    fy_coll_shm_nb_comm_free(c);
}

/* ---- barrier ------------------------------------------------------------- */

/* With ranks outnumbering cores: a counter at member 0's line, released
 * by the last to arrive (struct fy_coll_bar). Gathering the arrivals at
 * member 0, which then releases everyone, needs member 0 to run between
 * the last arrival and the release: a hand-over of its core more per
 * barrier (a stand-alone model of both, 4 processes on 2 cores yielding
 * while they wait: 6.5-7.6 us against 3.7-5.1 per barrier).
 * - A member reads gen before it counts itself: gen changes only when
 *   all have counted themselves, so every member of one barrier reads the
 *   same gen, and a member released from the previous one has seen it.
 * - The last sets count to 0 before it advances gen (release), so a
 *   member released (acquire) counts itself into the next barrier after
 *   the reset. count is 0 between barriers, so a communicator created
 *   later with the same context starts from 0; gen is only compared with
 *   what a member read, never with a number of its own.
 * - A scribbled count (not below the communicator's size) ends the job;
 *   a scribbled gen can only release a barrier early or late. */
bool fy_coll_bar_arrive(struct fy_coll_bar *b, int which, int P,
                        const int *world, int me, uint32_t gen)
{
    uint32_t n =
        atomic_fetch_add_explicit(&b->count[which], 1, memory_order_acq_rel);
    if (n >= (uint32_t)P)
        fy_fatal(1,
                 "malformed barrier counter on the shared segment (%u "
                 "arrivals for %d members, line of rank %d)",
                 n + 1, P, world[0]);
    if (n + 1 < (uint32_t)P)
        return false;
    atomic_store_explicit(&b->count[which], 0, memory_order_relaxed);
    /* seq_cst: Dekker with a sleeper's announcement (F1 in fy_wake_slow
     * against F2 in fy_chan_sleep). */
    atomic_store_explicit(&b->gen[which], gen + 1, memory_order_seq_cst);
    for (int r = 0; r < P; r++)
        if (r != me)
            fy_wake(world[r]);
    return true;
}

static bool bar_released(void)
{
    const struct coll_thread *t = T();
    return atomic_load_explicit(&t->bar.bar->gen[FY_COLL_BAR_BLOCKING],
                                memory_order_acquire) != t->bar.gen;
}

static int counter_barrier(struct fy_comm *c)
{
    struct coll_thread *t = T();
    struct fy_coll_bar *b = fy_coll_bar_of(t->loc[0], c->ctx / 2);
    uint32_t gen = atomic_load_explicit(&b->gen[FY_COLL_BAR_BLOCKING],
                                        memory_order_acquire);
    if (fy_coll_bar_arrive(b, FY_COLL_BAR_BLOCKING, c->size, t->world, c->rank,
                           gen))
        return 0;
    t->bar.bar = b;
    t->bar.gen = gen;
    wait_for(bar_released);
    return 0;
}

int fy_coll_shm_barrier(struct fy_comm *c)
{
    if (!members(c))
        return FY_COLL_SHM_NO;
    if (fy_coll_lean_ok(c)) {
        lean_barrier(c);
        return 0;
    }
    uint32_t seq = fy_coll_begin(c);
    uint64_t arrive = tag_of(c, seq, 0), leave = tag_of(c, seq, 1);
    /* With a core each, everyone publishes and reads everyone's flag: one
     * crossing of the node. Else (ranks may sleep, or more than 8) the
     * counter that the last to arrive releases (P-1 wake-ups at most,
     * where all-to-all flags would need P(P-1)); for a context beyond the
     * counters' lines, arrivals gather at member 0, which then releases
     * everyone (2(P-1) wake-ups). */
    if (!fy_chan.wake_peers && c->size <= 8) {
        publish(c, claim(), arrive, (uint32_t)c->size - 1, NULL, 0, -1);
        for (int r = 0; r < c->size; r++)
            if (r != c->rank)
                done(r, await(r, arrive));
        return 0;
    }
    if (c->ctx < FY_CTX_MAX)
        return counter_barrier(c);
    if (c->rank != 0) {
        publish(c, claim(), arrive, 1, NULL, 0, 0);
        done(0, await(0, leave));
        return 0;
    }
    for (int r = 1; r < c->size; r++)
        done_quiet(await(r, arrive));
    publish(c, claim(), leave, (uint32_t)c->size - 1, NULL, 0, -1);
    return 0;
}

/* ---- broadcast ------------------------------------------------------------
 */

/* Move 'len' bytes between buf and 'remote' in local rank 'local''s
 * memory with the kernel's single copy (get: into buf), in pieces so the
 * engine keeps moving between them. Returns 0 or a negative errno. */
static int cma_move(int local, void *buf, uint64_t remote, uint64_t len,
                    bool get)
{
    const uint64_t piece = 1u << 20;
    for (uint64_t at = 0; at < len; at += piece) {
        uint64_t n = FY_MIN(piece, len - at);
        ssize_t got = fy_xfer_cma_ops.copy_remote(
            fy_shm.pid[local], (char *)buf + at, remote + at, (size_t)n, get);
        if (got != (ssize_t)n)
            return got < 0 ? (int)got : -EFAULT;
        if (at + piece < len)
            fy_progress();
    }
    return 0;
}

/* Read 'len' bytes at the root's address into buf. */
static int cma_read(int root_local, void *buf, uint64_t remote, uint64_t len)
{
    return cma_move(root_local, buf, remote, len, true);
}

/* ---- single copy of whole blocks (process_vm_readv) -------------------- */

/* A contiguous image of count elements of dt at buf: buf itself, or a
 * packed copy in *tmp_out (free it). NULL when out of memory. */
static const void *image_of(const void *buf, MPI_Count count,
                            const struct fy_dtype *dt, void **tmp_out)
{
    *tmp_out = NULL;
    if (dt->contig)
        return buf;
    size_t bytes = (size_t)(count * dt->size);
    void *t = malloc(bytes ? bytes : 1);
    if (!t)
        return NULL;
    fy_dtype_pack(buf, count, dt, t);
    *tmp_out = t;
    return t;
}

/* Read n bytes at addr in the memory of local rank 'local' (world rank
 * 'world') into count elements of dt at buf (n no more than they hold).
 * Returns 0 or -ENOMEM; a failed read ends the job (the owner's memory
 * went away under a collective it is in). */
static int read_mem_at(int local, int world, uint64_t addr, uint64_t n,
                       void *buf, MPI_Count count, const struct fy_dtype *dt)
{
    if (n == 0)
        return 0;
    void *dst = buf, *tmp = NULL;
    if (!dt->contig && !(dst = tmp = malloc((size_t)n)))
        return -ENOMEM;
    int rc = cma_read(local, dst, addr, n);
    if (rc)
        fy_fatal(1,
                 "collective: reading %llu bytes of rank %d's buffer "
                 "failed: %s",
                 (unsigned long long)n, world, strerror(-rc));
    if (tmp) {
        fy_dtype_unpack(tmp, (MPI_Count)n, buf, count, dt);
        free(tmp);
    }
    return 0;
}

/* The same from member r of the current blocking collective. */
static int read_mem(int r, uint64_t addr, uint64_t n, void *buf,
                    MPI_Count count, const struct fy_dtype *dt)
{
    return read_mem_at(T()->loc[r], T()->world[r], addr, n, buf, count, dt);
}

/* Where the cells are too small and the kernel's single copy works, every
 * member publishes its buffer's address and the others read from it. */
static bool single_copy(void)
{
    return fy_coll_shm.cma;
}

/* Where a publication of 'len' bytes (as every member reckons it) lies in
 * a cell: up to FY_COLL_INLINE in the tag's line, which a reader has
 * already fetched when it sees the tag (one line less to cross the node:
 * osu_bcast of 8 B between two ranks, median of six interleaved runs,
 * 0.285 -> 0.275 us); else the data lines. A member that reckons
 * otherwise (an erroneous program) reads other bytes of the same cell,
 * never past it. */
static unsigned char *payload(struct fy_coll_cell *x, uint64_t len)
{
    return len <= FY_COLL_INLINE ? x->inl : x->data;
}

/* Take our block of member r's publication x into count elements of dt
 * at buf. The publication holds 'nblocks' blocks of x->len / nblocks
 * bytes (its owner's block size: ours in a correct program), ours block
 * i; in the cell (where payload() puts x->len bytes) or, when x->addr is
 * set, in the owner's memory. What both sizes hold is taken, never more
 * than the cell holds. Returns 0, fy_coll_sig's error for another size,
 * or -ENOMEM. */
static int take_pub(int r, struct fy_coll_cell *x, int nblocks, int i,
                    void *buf, MPI_Count count, const struct fy_dtype *dt)
{
    uint64_t addr = x->addr, len = x->len; /* read once */
    uint64_t theirs = len / (uint64_t)nblocks;
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    uint64_t off = (uint64_t)i * theirs, n = FY_MIN(theirs, bytes);
    int err = fy_coll_sig(theirs, bytes);
    if (addr)
        return fy_coll_keep(read_mem(r, addr + off, n, buf, count, dt), err);
    uint64_t cap = len <= FY_COLL_INLINE ? FY_COLL_INLINE : FY_COLL_DATA;
    n = off < cap ? FY_MIN(n, cap - off) : 0;
    fy_coll_get_bytes(buf, count, dt, payload(x, len) + off, n);
    return err;
}

/* A receiver's side of a broadcast: it follows the root's publication
 * (its count, read from the root's buffer or in chunks through its
 * cells), whatever its own count says, and takes what fits. */
static int bcast_take(void *buf, MPI_Count count, struct fy_dtype *dt,
                      uint64_t bytes, int root, struct fy_comm *c, uint32_t seq)
{
    struct fy_coll_cell *x = await(root, tag_of(c, seq, 0));
    uint64_t addr = x->addr, sent = x->len; /* read once */
    int err = fy_coll_sig(sent, bytes);
    if (addr) {
        /* Every receiver reads the root's buffer (or a packed image). */
        int rc = read_mem(root, addr, FY_MIN(sent, bytes), buf, count, dt);
        done(root, x);
        return fy_coll_keep(err, rc);
    }
    /* Pipelined through the root's cells, one chunk per publication. */
    uint32_t step = 0;
    for (uint64_t at = 0; at < sent; at += FY_COLL_DATA, step++) {
        if (step)
            x = await(root, tag_of(c, seq, step));
        uint64_t len = FY_MIN((uint64_t)FY_COLL_DATA, sent - at);
        if (at < bytes) {
            uint64_t m = FY_MIN(len, bytes - at);
            if (dt->contig)
                fy_copy((char *)buf + at, payload(x, sent), m);
            else
                fy_dtype_unpack_range(payload(x, sent), (MPI_Count)at,
                                      (MPI_Count)m, buf, count, dt);
        }
        done(root, x);
    }
    return err;
}

int fy_coll_shm_bcast(void *buf, MPI_Count count, struct fy_dtype *dt, int root,
                      struct fy_comm *c)
{
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    if (bytes == 0 || !members(c))
        return FY_COLL_SHM_NO;
    /* Between two ranks a large broadcast is one message, and the
     * point-to-point rendezvous copies it with both ranks at once. */
    if (c->size == 2 && bytes > FY_COLL_DATA)
        return FY_COLL_SHM_NO;
    if (bytes <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c))
        return lean_bcast(buf, count, dt, bytes, root, c);
    uint32_t seq = fy_coll_begin(c);
    if (c->rank != root)
        return bcast_take(buf, count, dt, bytes, root, c, seq);
    uint32_t n = (uint32_t)c->size - 1;
    /* Decided on the root's message size only (the receivers follow the
     * publication): the members' datatypes may differ, only their
     * signatures must match. */
    if (fy_coll_shm.cma && bytes >= fy_coll_shm.cma_min) {
        /* Every receiver reads the root's buffer (or a packed image of
         * it); the root waits until all have, since it is theirs to read
         * until then. */
        void *tmp;
        const void *img = image_of(buf, count, dt, &tmp);
        if (!img)
            fy_fatal(1, "broadcast: out of memory packing %llu bytes",
                     (unsigned long long)bytes);
        struct fy_coll_cell *x = claim();
        publish(c, x, tag_of(c, seq, 0), n, img, bytes, -1);
        wait_readers(x);
        free(tmp);
        return 0;
    }
    /* Pipelined through our cells, one chunk per publication, each
     * carrying the whole message's size. */
    uint32_t step = 0;
    for (uint64_t at = 0; at < bytes; at += FY_COLL_DATA, step++) {
        uint64_t len = FY_MIN((uint64_t)FY_COLL_DATA, bytes - at);
        struct fy_coll_cell *x = claim();
        if (dt->contig)
            fy_copy(payload(x, bytes), (char *)buf + at, len);
        else
            fy_dtype_pack_range(buf, count, dt, (MPI_Count)at, (MPI_Count)len,
                                payload(x, bytes));
        publish(c, x, tag_of(c, seq, step), n, NULL, bytes, -1);
    }
    return 0;
}

/* ---- reductions -----------------------------------------------------------
 */

/* Elements of dt per cell. */
static MPI_Count cell_elems(const struct fy_dtype *dt)
{
    return (MPI_Count)(FY_COLL_DATA / (uint64_t)dt->size);
}

static bool reducible(MPI_Count count, const struct fy_dtype *dt)
{
    return count > 0 && dt->contig && dt->size > 0 &&
           (uint64_t)dt->size <= FY_COLL_DATA;
}

/* Below fy_coll_shm.slice_min bytes (FERRY_COLL_SLICE_MIN, default 2049,
 * or the tuning file), every member combines the whole vector itself (one
 * round); from there, each combines its slice (two rounds, 1/P of the
 * work each). */

/* out = c_0 op c_1 op ... op c_{P-1} over elements [e0, e0 + m) of the
 * contributions of 'len' bytes in the members' cells 'x' (rank order: the
 * MPI order, and the same bits on every member). out must not overlap the
 * cells. */
static int combine(struct fy_coll_cell *const *x, int P, uint64_t len,
                   MPI_Count e0, MPI_Count m, struct fy_dtype *dt,
                   struct fy_op *op, void *acc)
{
    size_t off = (size_t)e0 * (size_t)dt->size;
    fy_copy(acc, payload(x[P - 1], len) + off, (size_t)m * (size_t)dt->size);
    for (int r = P - 2; r >= 0; r--) {
        int rc = fy_op_apply(op, payload(x[r], len) + off, acc, m, dt);
        if (rc)
            return rc;
    }
    return 0;
}

static struct fy_coll_cell **cells_array(int P)
{
    struct coll_thread *t = T();
    if (P > t->xcap) {
        struct fy_coll_cell **x = realloc(t->x, (size_t)P * sizeof(*x));
        if (!x)
            return NULL;
        t->x = x;
        uint64_t *a = realloc(t->addr, (size_t)P * sizeof(*a));
        if (!a)
            return NULL;
        t->addr = a;
        t->xcap = P;
    }
    return t->x;
}

/* Reductions between two members from FERRY_COLL_CMA_MIN bytes: a member
 * reads the other's buffer with the single copy, a chunk at a time, and
 * combines each chunk while it is in the cache, instead of both copying
 * their contributions into their cells to be read back: the bytes cross
 * cores once, not twice. osu_reduce, 2 ranks, 64 KiB / 256 KiB / 1 MiB:
 * 8.1 / 31 / 124-133 us through the cells, 3.5 / 11.3 / 109-119 this way
 * with 256 KiB chunks (32 KiB ones: 4.5 / 16.8 / 127-132; bench/README.md,
 * "Reductions between two ranks by single copy"). */
#define REDUCE_READ_CHUNK ((size_t)256 << 10)

/* This thread slot's scratch for reductions by single copy: two chunks. */
static char *reduce_scratch(void)
{
    struct coll_thread *t = T();
    if (!t->scratch && !(t->scratch = malloc(2 * REDUCE_READ_CHUNK)))
        fy_fatal(1, "reduction: out of memory for %zu bytes",
                 2 * REDUCE_READ_CHUNK);
    return t->scratch;
}

/* Elements [e0, e1) of c_0 op c_1 into rbuf, we being member 'me' (our
 * contribution at 'in', the other's at 'addr' in its memory). The other's
 * publication x is done with (done()) right after its last byte is read,
 * so it may go on while we combine. Returns 0 or an error. */
static int combine_read(int me, const char *in, char *rbuf, uint64_t addr,
                        struct fy_coll_cell *x, MPI_Count e0, MPI_Count e1,
                        struct fy_dtype *dt, struct fy_op *op)
{
    int other = 1 - me;
    size_t esz = (size_t)dt->size;
    /* Our scratch: the chunk read from the other, and our own chunk when
     * the result overwrites it (in place) before it is combined. */
    char *tmp = reduce_scratch();
    MPI_Count per = (MPI_Count)(REDUCE_READ_CHUNK / esz);
    int err = 0;
    for (MPI_Count e = e0; e < e1; e += per) {
        MPI_Count m = FY_MIN(per, e1 - e);
        size_t off = (size_t)e * esz, n = (size_t)m * esz;
        char *acc = rbuf + off;
        const char *own = in + off;
        /* Rank order, as combine(): acc = c_1, then acc = c_0 op acc. */
        char *into = tmp; /* where the other's chunk is read */
        if (me == 0) {
            if (acc == own) { /* in place: keep c_0 before acc = c_1 */
                fy_copy(tmp + REDUCE_READ_CHUNK, own, n);
                own = tmp + REDUCE_READ_CHUNK;
            }
            into = acc;
        }
        int rc = read_mem(other, addr + off, n, into, m, dt);
        if (rc) {
            err = fy_coll_keep(err, rc);
            break;
        }
        if (e + per >= e1) {
            /* The other's bytes are read: it may go while we combine. */
            done(other, x);
            x = NULL;
        }
        if (me == 0) {
            err = fy_coll_keep(err, fy_op_apply(op, own, acc, m, dt));
        } else {
            if (acc != own)
                fy_copy(acc, own, n);
            err = fy_coll_keep(err, fy_op_apply(op, tmp, acc, m, dt));
        }
        if (e + per < e1)
            fy_progress();
    }
    if (x)
        done(other, x);
    return err;
}

/* The address in the other's publication x of its 'bytes' bytes, and in
 * *have how many of our elements it holds, both read once (another size
 * is a count that differs from ours: what both hold counts, and *err says
 * which way, fy_coll_sig); the length as read in *len_out unless NULL. */
static uint64_t pub_addr(const struct fy_coll_cell *x, uint64_t bytes,
                         size_t esz, MPI_Count *have, int *err,
                         uint64_t *len_out)
{
    uint64_t addr = x->addr, len = x->len; /* read once */
    *err = fy_coll_keep(*err, fy_coll_sig(len, bytes));
    *have = (MPI_Count)(FY_MIN(len, bytes) / esz);
    if (len_out)
        *len_out = len;
    return addr;
}

/* Write n bytes at buf into member r's memory at addr; a failed write
 * ends the job, as a failed read does (read_mem_at). */
static void write_mem(int r, uint64_t addr, uint64_t n, void *buf)
{
    int rc = cma_move(T()->loc[r], buf, addr, n, false);
    if (rc)
        fy_fatal(1,
                 "collective: writing %llu bytes into rank %d's buffer "
                 "failed: %s",
                 (unsigned long long)n, T()->world[r], strerror(-rc));
}

/* Reduce from FY_REDUCE_SHARE_MIN bytes: the root combines the first two
 * thirds of the vector (reading the other's), the other rank the rest,
 * reading the root's contribution and writing each chunk of the result
 * into the root's receive buffer - both cores combine, where the root
 * alone did every element (osu_reduce, 2 ranks, 512 KiB / 1 MiB / 4 MiB:
 * 26 / 99-106 / 478-547 us alone, 20 / 45-48 / 326-357 shared; halves
 * 29 / 70 / 376-398; bench/README.md, "Reductions between two ranks, both
 * combining"). The root's publication carries its contribution (addr,
 * len) and its receive buffer's address (inline); the other's carries its
 * contribution, and a second one says its third of the result is
 * written. The root's buffers are the other's to read and write until
 * then: the root waits for it. In place (the root's contribution is its
 * receive buffer) each chunk is read before the same bytes are
 * written.
 *
 * The receive buffer's address is the one thing read from a cell that
 * steers a write into another process, so it travels with a check word
 * over the publication (address, tag, contribution, length): a cell
 * scribbled by any rank (a stray write, not a forger that recomputes it)
 * ends the job as malformed before the other writes anything, where a
 * changed address would have had it write the result elsewhere in the
 * root's memory (tests/mpi/shm_scribble.c, mode "steer"). */
#define FY_REDUCE_SHARE_MIN ((uint64_t)384 << 10)

/* The root's side of reduce_share's check word: its receive buffer's
 * address in the inline bytes of its publication 'mine' (tag,
 * contribution in, bytes), before it publishes. */
static void raddr_put(struct fy_coll_cell *mine, uint64_t tag, const void *rbuf,
                      const void *in, uint64_t bytes)
{
    fy_coll_raddr_put(mine->inl, tag, rbuf, (uint64_t)(uintptr_t)in, bytes);
}

/* The other side: the address in the root's publication x, whose
 * contribution at addr of len bytes was read from it once. */
static uint64_t raddr_take(const struct fy_coll_cell *x, uint64_t tag,
                           uint64_t addr, uint64_t len, int root,
                           const char *what)
{
    return fy_coll_raddr_take(x->inl, tag, addr, len, what, T()->world[root]);
}

static int reduce_share(const char *in, void *rbuf, MPI_Count count,
                        struct fy_dtype *dt, struct fy_op *op, int root,
                        struct fy_comm *c, uint32_t seq)
{
    int me = c->rank, other = 1 - me;
    size_t esz = (size_t)dt->size;
    uint64_t bytes = (uint64_t)count * esz;
    /* The root's share: two thirds (the other reads, combines and writes
     * back each element, the root only reads and combines). */
    MPI_Count h = count - count / 3;
    uint64_t tag = tag_of(c, seq, 0);
    struct fy_coll_cell *mine = claim();
    if (me == root) {
        raddr_put(mine, tag, rbuf, in, bytes);
        publish(c, mine, tag, 1, in, bytes, other);
        struct fy_coll_cell *x = await(other, tag);
        int err = 0;
        MPI_Count have;
        uint64_t addr = pub_addr(x, bytes, esz, &have, &err, NULL);
        err = fy_coll_keep(err, combine_read(me, in, rbuf, addr, x, 0,
                                             FY_MIN(h, have), dt, op));
        done(other, await(other, tag_of(c, seq, 1)));
        return err;
    }
    publish(c, mine, tag, 1, in, bytes, root);
    struct fy_coll_cell *x = await(root, tag);
    int err = 0;
    MPI_Count have;
    uint64_t len;
    uint64_t addr = pub_addr(x, bytes, esz, &have, &err, &len);
    uint64_t raddr = raddr_take(x, tag, addr, len, root, "reduction");
    char *theirs = reduce_scratch(), *res = theirs + REDUCE_READ_CHUNK;
    MPI_Count per = (MPI_Count)(REDUCE_READ_CHUNK / esz);
    MPI_Count e1 = FY_MIN(count, have); /* within both vectors */
    for (MPI_Count e = h; e < e1; e += per) {
        MPI_Count m = FY_MIN(per, e1 - e);
        size_t off = (size_t)e * esz, n = (size_t)m * esz;
        read_mem(root, addr + off, n, theirs, m, dt);
        /* Rank order: c_0 op c_1, into the second argument. */
        const char *c0 = me == 0 ? in + off : theirs;
        fy_copy(res, me == 0 ? theirs : in + off, n);
        err = fy_coll_keep(err, fy_op_apply(op, c0, res, m, dt));
        write_mem(root, raddr + off, n, res);
        if (e + per < e1)
            fy_progress();
    }
    done(root, x);
    struct fy_coll_cell *fin = claim();
    publish(c, fin, tag_of(c, seq, 1), 1, NULL, 0, root);
    wait_readers(mine);
    return err;
}

/* Reduce: the root reads and combines everything; the other waits until
 * its buffer is read. */
static int reduce_read(const char *in, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op, int root,
                       struct fy_comm *c, uint32_t seq)
{
    int me = c->rank;
    size_t esz = (size_t)dt->size;
    uint64_t bytes = (uint64_t)count * esz;
    uint64_t tag = tag_of(c, seq, 0);
    if (me != root) {
        struct fy_coll_cell *x = claim();
        publish(c, x, tag, 1, in, bytes, root);
        wait_readers(x);
        return 0;
    }
    struct fy_coll_cell *x = await(1 - me, tag);
    int err = 0;
    MPI_Count have;
    uint64_t addr = pub_addr(x, bytes, esz, &have, &err, NULL);
    return fy_coll_keep(err,
                        combine_read(me, in, rbuf, addr, x, 0, have, dt, op));
}

/* Allreduce: each member combines its half of the vector from both
 * contributions (reading the other's half), then reads the other's half of
 * the result from the other's receive buffer. */
static int allreduce_read(const char *in, void *rbuf, MPI_Count count,
                          struct fy_dtype *dt, struct fy_op *op,
                          struct fy_comm *c, uint32_t seq)
{
    int me = c->rank, other = 1 - me;
    size_t esz = (size_t)dt->size;
    uint64_t bytes = (uint64_t)count * esz;
    MPI_Count h = count / 2;
    MPI_Count lo = me == 0 ? 0 : h, hi = me == 0 ? h : count;
    /* Round 1: our contribution, for the other to read its half of. */
    struct fy_coll_cell *mine = claim();
    publish(c, mine, tag_of(c, seq, 0), 1, in, bytes, other);
    struct fy_coll_cell *x = await(other, tag_of(c, seq, 0));
    int err = 0;
    MPI_Count have;
    uint64_t addr = pub_addr(x, bytes, esz, &have, &err, NULL);
    err = fy_coll_keep(
        err, combine_read(me, in, rbuf, addr, x, lo, FY_MIN(hi, have), dt, op));
    /* Round 2: our half of the result, for the other to read. The other
     * publishes its own once it has read our contribution: only then may
     * the other half of rbuf (in place: our contribution) be written. */
    struct fy_coll_cell *res = claim();
    publish(c, res, tag_of(c, seq, 1), 1, rbuf, bytes, other);
    struct fy_coll_cell *y = await(other, tag_of(c, seq, 1));
    MPI_Count rhave;
    int rerr = 0;
    uint64_t raddr = pub_addr(y, bytes, esz, &rhave, &rerr, NULL);
    MPI_Count o0 = me == 0 ? h : 0, o1 = FY_MIN(me == 0 ? count : h, rhave);
    if (o1 > o0) {
        size_t off = (size_t)o0 * esz;
        err = fy_coll_keep(err, read_mem(other, raddr + off,
                                         (uint64_t)(o1 - o0) * esz,
                                         (char *)rbuf + off, o1 - o0, dt));
    }
    done(other, y);
    /* Our contribution and our half of the result are the other's to read
     * until it is done with them. */
    wait_readers(mine);
    wait_readers(res);
    return fy_coll_keep(err, rerr);
}

/* Elements [e0, e1) of c_0 op c_1 op ... op c_{P-1} (the order of
 * combine()), chunk by chunk while each is in the cache, we being member
 * me: member r's contribution read from addr[r] in its memory, ours at
 * in. The result goes to out (element e0 first) or, with out NULL, each
 * chunk into member wroot's memory at waddr plus its offset in the
 * vector. out may be our contribution (in place): each chunk of it is
 * saved before it is overwritten. Returns 0 or the first error. */
static int combine_direct(const char *in, char *out, MPI_Count e0, MPI_Count e1,
                          const uint64_t *addr, int P, int me, int wroot,
                          uint64_t waddr, struct fy_dtype *dt, struct fy_op *op)
{
    size_t esz = (size_t)dt->size;
    char *tmp = reduce_scratch(), *keep = tmp + REDUCE_READ_CHUNK;
    MPI_Count per = (MPI_Count)(REDUCE_READ_CHUNK / esz);
    int err = 0;
    for (MPI_Count e = e0; e < e1; e += per) {
        MPI_Count m = FY_MIN(per, e1 - e);
        size_t off = (size_t)e * esz, n = (size_t)m * esz;
        const char *own = in + off;
        char *acc = out ? out + (size_t)(e - e0) * esz : keep;
        if (acc == own) { /* in place: keep c_me before acc changes */
            fy_copy(keep, own, n);
            own = keep;
        }
        if (me == P - 1) {
            if (acc != own)
                fy_copy(acc, own, n);
        } else {
            err = fy_coll_keep(
                err, read_mem(P - 1, addr[P - 1] + off, n, acc, m, dt));
        }
        for (int r = P - 2; r >= 0; r--) {
            const char *src = own;
            if (r != me) {
                err = fy_coll_keep(err,
                                   read_mem(r, addr[r] + off, n, tmp, m, dt));
                src = tmp;
            }
            err = fy_coll_keep(err, fy_op_apply(op, src, acc, m, dt));
        }
        if (!out)
            write_mem(wroot, waddr + off, n, acc);
        if (e + per < e1)
            fy_progress();
    }
    return err;
}

/* The other members' publications 'tag' of their contributions (ours
 * of 'bytes' bytes is published): their cells in T()->x and their
 * buffers' addresses in T()->addr, each read once, and member root's
 * receive buffer's address in *raddr (root < 0: none). Returns the
 * elements of esz bytes every member holds; another size goes to *err
 * (fy_coll_sig). */
static MPI_Count direct_addrs(struct fy_comm *c, uint64_t tag, uint64_t bytes,
                              size_t esz, int root, uint64_t *raddr, int *err)
{
    struct coll_thread *t = T();
    MPI_Count have = (MPI_Count)(bytes / esz);
    for (int r = 0; r < c->size; r++) {
        if (r == c->rank)
            continue;
        t->x[r] = await(r, tag);
        MPI_Count h;
        uint64_t len;
        t->addr[r] = pub_addr(t->x[r], bytes, esz, &h, err, &len);
        have = FY_MIN(have, h);
        if (r == root)
            *raddr =
                raddr_take(t->x[r], tag, t->addr[r], len, root, "reduction");
    }
    return have;
}

/* Reductions among more than two members from fy_coll_shm.direct_min
 * bytes (FERRY_COLL_DIRECT_MIN) where the kernel's single copy works:
 * each member combines its slice of the vector (elements [count * me / P,
 * count * (me + 1) / P)) by reading that slice of every other
 * contribution from its owner's buffer, a chunk at a time, then the
 * members of an allreduce read the others' slices of the result from
 * their receive buffers, and those of a reduce write theirs into the
 * root's (its address published with a check word, as in
 * reduce_share). Each member publishes twice in all, where the cells
 * need two publications of every member per 32 KiB round; with ranks
 * outnumbering cores each wait is a hand-over of a core. osu_allreduce
 * at 1 MiB on the 2 cores, three alternations each (us): 3 ranks
 * 403-682 against 937-1384 through the cells, 4 ranks 624-683 against
 * 1152-1290 (Open MPI 1241-1387), 8 ranks 1716-1772 against 3093-3111;
 * at 64 KiB the cells stay faster (66-98 against 65-68 at 4 ranks) and
 * 64 KiB chunks were slower than 256 KiB ones (bench/README.md,
 * "Reductions among three or more ranks by single copy").
 *
 * In place, a member's contribution is its receive buffer: it writes its
 * own slice there only after saving each chunk of its contribution, and
 * the other slices (allreduce) only once their owners have published
 * their results, i.e. read what they needed of ours; a reduce's root
 * has its slice r written by member r alone, chunk by chunk after
 * member r read the same chunk of it. */
static int reduce_direct(const char *in, void *rbuf, MPI_Count count,
                         struct fy_dtype *dt, struct fy_op *op, int root,
                         struct fy_comm *c, uint32_t seq)
{
    struct coll_thread *t = T();
    int P = c->size, me = c->rank;
    bool all = root < 0, into_rbuf = all || me == root;
    size_t esz = (size_t)dt->size;
    uint64_t bytes = (uint64_t)count * esz;
    uint64_t tag = tag_of(c, seq, 0), rtag = tag_of(c, seq, 1);
    struct fy_coll_cell **x = t->x, *mine = claim();
    uint64_t raddr = 0;
    if (!all && me == root)
        raddr_put(mine, tag, rbuf, in, bytes);
    publish(c, mine, tag, (uint32_t)P - 1, in, bytes, -1);
    int err = 0;
    MPI_Count have =
        direct_addrs(c, tag, bytes, esz, all ? -1 : root, &raddr, &err);
    MPI_Count s0 = FY_MIN(count * me / P, have);
    MPI_Count s1 = FY_MIN(count * (me + 1) / P, have);
    err = fy_coll_keep(
        err,
        combine_direct(in, into_rbuf ? (char *)rbuf + (size_t)s0 * esz : NULL,
                       s0, s1, t->addr, P, me, root, raddr, dt, op));
    for (int r = 0; r < P; r++)
        if (r != me)
            done(r, x[r]);
    if (!all) {
        if (me != root) {
            /* Our slice of the result is in the root's buffer. */
            publish(c, claim(), rtag, 1, NULL, 0, root);
        } else {
            for (int r = 0; r < P; r++)
                if (r != me)
                    done(r, await(r, rtag));
        }
        wait_readers(mine);
        return err;
    }
    /* Allreduce: the others' slices of the result, each from its owner's
     * receive buffer. */
    struct fy_coll_cell *res = claim();
    publish(c, res, rtag, (uint32_t)P - 1, rbuf, bytes, -1);
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        struct fy_coll_cell *y = await(r, rtag);
        MPI_Count rhave;
        uint64_t ra = pub_addr(y, bytes, esz, &rhave, &err, NULL);
        MPI_Count lim = FY_MIN(have, rhave);
        MPI_Count r0 = FY_MIN(count * r / P, lim);
        MPI_Count r1 = FY_MIN(count * (r + 1) / P, lim);
        if (r1 > r0) {
            size_t off = (size_t)r0 * esz;
            err = fy_coll_keep(err,
                               read_mem(r, ra + off, (uint64_t)(r1 - r0) * esz,
                                        (char *)rbuf + off, r1 - r0, dt));
        }
        done(r, y);
    }
    /* Our contribution and our slice of the result are the others' to
     * read until they are done with them. */
    wait_readers(mine);
    wait_readers(res);
    return err;
}

/* The members' contributions x[] (ours at me) against our 'total' bytes:
 * the first mismatch (fy_coll_sig). Their cells are combined as ours,
 * within each cell: a mismatch that changes the number of rounds is not
 * caught (coll/shm.h). */
static int sig_all(struct fy_coll_cell *const *x, int P, int me, uint64_t total)
{
    int err = 0;
    for (int r = 0; r < P; r++)
        if (r != me)
            err = fy_coll_keep(err, fy_coll_sig(x[r]->len, total));
    return err;
}

/* Reduce (root >= 0: only the root gets the result in rbuf) or allreduce
 * (root < 0). */
static int shm_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                      struct fy_dtype *dt, struct fy_op *op, int root,
                      struct fy_comm *c)
{
    if (!reducible(count, dt) || !members(c))
        return FY_COLL_SHM_NO;
    int P = c->size, me = c->rank;
    struct fy_coll_cell **x = cells_array(P);
    if (!x) /* as in members(): every member must take the same path */
        fy_fatal(1, "reduction: out of memory for %d members", P);
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool all = root < 0;
    bool get = all || me == root; /* we end with the result */
    size_t esz = (size_t)dt->size;
    if ((uint64_t)count * esz <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c))
        return lean_reduce(in, rbuf, count, dt, op, (uint64_t)count * esz, root,
                           c);
    uint32_t seq = fy_coll_begin(c);
    if (P == 2 && single_copy() && (uint64_t)count * esz >= fy_coll_shm.cma_min)
        return all ? allreduce_read(in, rbuf, count, dt, op, c, seq)
               : (uint64_t)count * esz >= FY_REDUCE_SHARE_MIN
                   ? reduce_share(in, rbuf, count, dt, op, root, c, seq)
                   : reduce_read(in, rbuf, count, dt, op, root, c, seq);
    if (P > 2 && single_copy() &&
        (uint64_t)count * esz >= fy_coll_shm.direct_min)
        return reduce_direct(in, rbuf, count, dt, op, root, c, seq);
    MPI_Count per = cell_elems(dt);
    uint64_t total = (uint64_t)count * esz; /* each round's cells say it */
    int err = 0;
    uint32_t step = 0;
    for (MPI_Count e = 0; e < count; e += per, step += 2) {
        MPI_Count m = FY_MIN(per, count - e);
        size_t len = (size_t)m * esz;
        uint64_t tag = tag_of(c, seq, step);
        /* Round 1: contributions. */
        struct fy_coll_cell *mine = claim();
        fy_copy(payload(mine, len), in + (size_t)e * esz, len);
        /* A reduce between two ranks is one combine at the root either
         * way; whole, the other rank only copies its part in. When ranks
         * outnumber cores the others copy in and go, while slices would
         * need every member on a core three times per cell (4 ranks on 2
         * cores, osu_reduce: 12 vs 61 us at 64 KiB, 0.42 vs 0.63-1.1 ms
         * at 1 MiB). An allreduce keeps its slices either way (every
         * member combining everything measured no faster). */
        bool whole = len < fy_coll_shm.slice_min ||
                     (!all && (P == 2 || fy_chan.wake_peers));
        /* Who reads our contribution: with the whole vector combined by
         * those who get the result, they; with slices, everyone. */
        uint32_t nread = whole ? (all ? (uint32_t)P - 1 : (me == root ? 0 : 1))
                               : (uint32_t)P - 1;
        publish(c, mine, tag, nread, NULL, total, whole && !all ? root : -1);
        if (whole) {
            if (get) {
                for (int r = 0; r < P; r++)
                    x[r] = r == me ? mine : await(r, tag);
                if (step == 0)
                    err = fy_coll_keep(err, sig_all(x, P, me, total));
                /* Our contribution is in our cell: rbuf may be written
                 * even in place. */
                err =
                    fy_coll_keep(err, combine(x, P, len, 0, m, dt, op,
                                              (char *)rbuf + (size_t)e * esz));
                for (int r = 0; r < P; r++)
                    if (r != me)
                        done(r, x[r]);
            }
            continue;
        }
        /* Round 2: our slice of every contribution, combined into our
         * other cell (or straight into rbuf at a reduce's root). */
        MPI_Count s0 = m * me / P, s1 = m * (me + 1) / P;
        for (int r = 0; r < P; r++)
            x[r] = r == me ? mine : await(r, tag);
        if (step == 0)
            err = fy_coll_keep(err, sig_all(x, P, me, total));
        uint64_t stag = tag_of(c, seq, step + 1);
        struct fy_coll_cell *slice = claim();
        if (s1 > s0)
            err = fy_coll_keep(err, combine(x, P, len, s0, s1 - s0, dt, op,
                                            slice->data + (size_t)s0 * esz));
        for (int r = 0; r < P; r++)
            if (r != me)
                done(r, x[r]);
        /* Round 3: gather the slices. */
        uint32_t sread = all ? (uint32_t)P - 1 : (me == root ? 0 : 1);
        publish(c, slice, stag, sread, NULL, 0, all ? -1 : root);
        if (!get)
            continue;
        char *out = (char *)rbuf + (size_t)e * esz;
        for (int r = 0; r < P; r++) {
            MPI_Count r0 = m * r / P, r1 = m * (r + 1) / P;
            struct fy_coll_cell *y = r == me ? slice : await(r, stag);
            fy_copy(out + (size_t)r0 * esz, y->data + (size_t)r0 * esz,
                    (size_t)(r1 - r0) * esz);
            if (r != me)
                done(r, y);
        }
    }
    return err;
}

int fy_coll_shm_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op, int root,
                       struct fy_comm *c)
{
    return shm_reduce(sbuf, rbuf, count, dt, op, root, c);
}

int fy_coll_shm_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                          struct fy_dtype *dt, struct fy_op *op,
                          struct fy_comm *c)
{
    return shm_reduce(sbuf, rbuf, count, dt, op, -1, c);
}

/* ---- gather, scatter, allgather, all-to-all (blocks that fit a cell) ----
 * Whether these run here depends only on arguments every member agrees on
 * (the receive block's size, the member count), never on one member's
 * send arguments, so no member can take the point-to-point path alone. A
 * member whose send block is larger than the receive block sends what
 * fits and reports the truncation, as a message would; every publication
 * carries its owner's block size, so a reader reports another size
 * (fy_coll_sig) and follows the publication's form (cell or buffer). */

/* Every other member's block 'tag' into its place in rbuf, from its cell
 * or its buffer. Starting at our right neighbour spreads the readers over
 * the owners. Returns 0 or the first error. */
static int collect_blocks(struct fy_comm *c, uint64_t tag, void *rbuf,
                          MPI_Count rcount, const struct fy_dtype *rdt)
{
    int P = c->size, me = c->rank, err = 0;
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        struct fy_coll_cell *x = await(r, tag);
        err = fy_coll_keep(err, take_pub(r, x, 1, 0,
                                         fy_coll_block_at(rbuf, r, rcount, rdt),
                                         rcount, rdt));
        done(r, x);
    }
    return err;
}

int fy_coll_shm_allgather(const void *sbuf, MPI_Count scount,
                          struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct fy_dtype *rdt, struct fy_comm *c)
{
    uint64_t rbytes = (uint64_t)rcount * (uint64_t)rdt->size;
    bool cells = rbytes <= FY_COLL_DATA;
    if (rbytes == 0 || (!cells && !single_copy()) || !members(c))
        return FY_COLL_SHM_NO;
    if (rbytes <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c))
        return lean_exchange(sbuf, scount, sdt, rbuf, rcount, rdt, rbytes,
                             false, c);
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    int P = c->size, me = c->rank;
    const void *in =
        sbuf == MPI_IN_PLACE ? fy_coll_block_at(rbuf, me, rcount, rdt) : sbuf;
    MPI_Count icount = sbuf == MPI_IN_PLACE ? rcount : scount;
    struct fy_dtype *idt = sbuf == MPI_IN_PLACE ? rdt : sdt;
    uint64_t ibytes = (uint64_t)icount * (uint64_t)idt->size;
    int err = ibytes > rbytes ? -EMSGSIZE : 0;
    struct fy_coll_cell *mine = claim();
    void *tmp = NULL;
    if (cells) {
        /* What fits our receive block, where payload() puts our size. */
        fy_coll_put_block(payload(mine, ibytes), rbytes, in, icount, idt);
        publish(c, mine, tag, (uint32_t)P - 1, NULL, ibytes, -1);
    } else {
        const void *img = image_of(in, icount, idt, &tmp);
        if (!img)
            fy_fatal(1, "allgather: out of memory packing %llu bytes",
                     (unsigned long long)ibytes);
        publish(c, mine, tag, (uint32_t)P - 1, img, ibytes, -1);
    }
    if (sbuf != MPI_IN_PLACE)
        err = fy_coll_keep(err,
                           fy_coll_copy(sbuf, scount, sdt,
                                        fy_coll_block_at(rbuf, me, rcount, rdt),
                                        rcount, rdt));
    err = fy_coll_keep(err, collect_blocks(c, tag, rbuf, rcount, rdt));
    if (!cells) {
        wait_readers(mine);
        free(tmp);
    }
    return err;
}

int fy_coll_shm_alltoall(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct fy_dtype *rdt, struct fy_comm *c)
{
    uint64_t rbytes = (uint64_t)rcount * (uint64_t)rdt->size;
    bool cells = rbytes * (uint64_t)c->size <= FY_COLL_DATA;
    /* In place, a large exchange would overwrite blocks others are still
     * reading: that one takes the point-to-point path (MPI has every
     * member pass MPI_IN_PLACE or none). */
    if (rbytes == 0 || (!cells && (!single_copy() || sbuf == MPI_IN_PLACE)) ||
        !members(c))
        return FY_COLL_SHM_NO;
    if (rbytes * (uint64_t)c->size <= FY_COLL_FLAG_DATA && fy_coll_lean_ok(c))
        return lean_exchange(sbuf, scount, sdt, rbuf, rcount, rdt, rbytes, true,
                             c);
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    int P = c->size, me = c->rank;
    struct fy_coll_cell *mine = claim();
    int err = 0;
    void *tmp = NULL;
    if (cells) {
        /* Our blocks for every member, packed back to back: block r at
         * r * rbytes (in place, they are in rbuf with the receive
         * layout). */
        unsigned char *blocks = payload(mine, rbytes * (uint64_t)P);
        err = fy_coll_keep(err,
                           fy_coll_put_alltoall(blocks, rbytes, P, sbuf, scount,
                                                sdt, rbuf, rcount, rdt));
        /* Our send block's size, for the readers to compare. */
        uint64_t sbytes = sbuf == MPI_IN_PLACE
                              ? rbytes
                              : (uint64_t)scount * (uint64_t)sdt->size;
        publish(c, mine, tag, (uint32_t)P - 1, NULL, sbytes, -1);
        fy_coll_get_block(fy_coll_block_at(rbuf, me, rcount, rdt), rcount, rdt,
                          blocks + (uint64_t)me * rbytes);
    } else {
        uint64_t sbytes = (uint64_t)scount * (uint64_t)sdt->size;
        if (sbytes > rbytes)
            err = -EMSGSIZE;
        /* Block r of our image is at r * sbytes; readers look for theirs
         * at r * rbytes (equal in a correct program; a short image only
         * makes them report truncation). */
        const void *img = image_of(sbuf, scount * P, sdt, &tmp);
        if (!img)
            fy_fatal(1, "alltoall: out of memory packing %llu bytes",
                     (unsigned long long)(sbytes * (uint64_t)P));
        publish(c, mine, tag, (uint32_t)P - 1, img, sbytes * (uint64_t)P, -1);
        err = fy_coll_keep(
            err,
            fy_coll_copy(fy_coll_block_at(sbuf, me, scount, sdt), scount, sdt,
                         fy_coll_block_at(rbuf, me, rcount, rdt), rcount, rdt));
    }
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        struct fy_coll_cell *x = await(r, tag);
        void *dst = fy_coll_block_at(rbuf, r, rcount, rdt);
        if (cells) {
            /* Blocks at our receive block's stride (agreed); the size
             * the owner sent each. */
            uint64_t theirs = x->len; /* read once */
            err = fy_coll_keep(err, fy_coll_sig(theirs, rbytes));
            fy_coll_get_bytes(dst, rcount, rdt,
                              payload(x, rbytes * (uint64_t)P) +
                                  (uint64_t)me * rbytes,
                              FY_MIN(theirs, rbytes));
        } else {
            err = fy_coll_keep(err, take_pub(r, x, P, me, dst, rcount, rdt));
        }
        done(r, x);
    }
    if (!cells) {
        wait_readers(mine);
        free(tmp);
    }
    return err;
}

/* Gather and scatter: every member's block size is the root's receive
 * (gather) or send (scatter) block and the others' send (receive) block,
 * equal in a correct program, so the choice of path agrees; a member
 * whose size says otherwise still publishes in a form the others follow.
 *
 * A gather beyond the cells: every other member publishes its block's
 * address and the root, where its receive type is one run (contig),
 * asks them to write instead (publication 1: its receive buffer's
 * address with the check word of raddr_put): each writes its block there
 * with process_vm_writev, so the copies run on every member's core at
 * once instead of one after the other on the root's (osu_gather 1 MiB,
 * 4 ranks on the 2 cores: 121-124 us against 226-265; 2 ranks 79-80
 * against 102-103). With another receive type the root reads each block
 * from its owner's buffer. A member whose block fits a cell publishes it
 * there and goes: the root takes it from the cell and counts it out of
 * the writers. */

/* A big member's wait: the root read its block (our cell is free) or
 * asks it to write (the root's publication 1 is there). */
static bool read_or_asked(void)
{
    return cell_free() || pub_visible();
}

/* A member of a gather(v) whose block went by address (publication
 * 'mine'): wait until the root read it or asked (publication 'ask' of
 * member root), and return the ask or NULL. The root publishes its ask
 * before it lets our publication go unread: seeing our cell free, we see
 * the ask if there is one. */
static struct fy_coll_cell *await_ask(struct fy_coll_cell *mine, int root,
                                      uint64_t ask)
{
    struct coll_thread *t = T();
    t->wait.cell = mine;
    t->wait.owner = t->loc[root];
    t->wait.tag = ask;
    if (!read_or_asked())
        wait_for(read_or_asked);
    return find_pub(t->loc[root], ask);
}

int fy_coll_shm_gather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                       void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                       int root, struct fy_comm *c)
{
    int me = c->rank;
    uint64_t bytes = me == root ? (uint64_t)rcount * (uint64_t)rdt->size
                                : (uint64_t)scount * (uint64_t)sdt->size;
    bool cells = bytes <= FY_COLL_DATA;
    if (bytes == 0 || (!cells && !single_copy()) || !members(c))
        return FY_COLL_SHM_NO;
    uint32_t seq = fy_coll_begin(c);
    uint64_t tag = tag_of(c, seq, 0), ask = tag_of(c, seq, 1);
    if (me != root) {
        struct fy_coll_cell *mine = claim();
        if (cells) {
            int err = fy_coll_put_block(payload(mine, bytes), bytes, sbuf,
                                        scount, sdt);
            publish(c, mine, tag, 1, NULL, bytes, root);
            return err;
        }
        void *tmp;
        const void *img = image_of(sbuf, scount, sdt, &tmp);
        if (!img)
            fy_fatal(1, "gather: out of memory packing %llu bytes",
                     (unsigned long long)bytes);
        publish(c, mine, tag, 1, img, bytes, root);
        struct fy_coll_cell *a = await_ask(mine, root, ask);
        if (a) {
            uint64_t addr = a->addr, len = a->len; /* read once */
            uint64_t raddr = raddr_take(a, ask, addr, len, root, "gather");
            write_mem(root, raddr + (uint64_t)me * len, FY_MIN(bytes, len),
                      (void *)(uintptr_t)img);
            done(root, a);
        }
        free(tmp);
        return 0;
    }
    int err = 0;
    struct fy_coll_cell *a = NULL;
    if (!cells && rdt->contig) {
        a = claim();
        raddr_put(a, ask, rbuf, rbuf, bytes);
        publish(c, a, ask, (uint32_t)c->size - 1, rbuf, bytes, -1);
    }
    if (sbuf != MPI_IN_PLACE)
        err =
            fy_coll_copy(sbuf, scount, sdt,
                         fy_coll_block_at(rbuf, me, rcount, rdt), rcount, rdt);
    if (!a)
        return fy_coll_keep(err, collect_blocks(c, tag, rbuf, rcount, rdt));
    for (int r = 0; r < c->size; r++) {
        if (r == me)
            continue;
        struct fy_coll_cell *x = await(r, tag);
        if (x->addr) {
            /* It writes (or wrote) its block; its size against ours. */
            err = fy_coll_keep(err, fy_coll_sig(x->len, bytes));
        } else {
            /* In its cell: it will not write. */
            err = fy_coll_keep(err,
                               take_pub(r, x, 1, 0,
                                        fy_coll_block_at(rbuf, r, rcount, rdt),
                                        rcount, rdt));
            done_quiet(a);
        }
        done(r, x);
    }
    wait_readers(a);
    return err;
}

int fy_coll_shm_scatter(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct fy_dtype *rdt, int root, struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    uint64_t bytes = me == root ? (uint64_t)scount * (uint64_t)sdt->size
                                : (uint64_t)rcount * (uint64_t)rdt->size;
    bool cells = bytes * (uint64_t)P <= FY_COLL_DATA;
    if (bytes == 0 || (!cells && !single_copy()) || !members(c))
        return FY_COLL_SHM_NO;
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    if (me == root) {
        struct fy_coll_cell *mine = claim();
        void *tmp = NULL;
        if (cells) {
            unsigned char *blocks = payload(mine, bytes * (uint64_t)P);
            for (int r = 0; r < P; r++)
                if (r != me)
                    fy_coll_put_block(blocks + (uint64_t)r * bytes, bytes,
                                      fy_coll_block_at(sbuf, r, scount, sdt),
                                      scount, sdt);
            publish(c, mine, tag, (uint32_t)P - 1, NULL, bytes * (uint64_t)P,
                    -1);
        } else {
            const void *img = image_of(sbuf, scount * P, sdt, &tmp);
            if (!img)
                fy_fatal(1, "scatter: out of memory packing %llu bytes",
                         (unsigned long long)(bytes * (uint64_t)P));
            publish(c, mine, tag, (uint32_t)P - 1, img, bytes * (uint64_t)P,
                    -1);
        }
        int err = rbuf == MPI_IN_PLACE
                      ? 0
                      : fy_coll_copy(fy_coll_block_at(sbuf, me, scount, sdt),
                                     scount, sdt, rbuf, rcount, rdt);
        if (!cells) {
            wait_readers(mine);
            free(tmp);
        }
        return err;
    }
    /* The root's blocks, in its cell or its buffer (its size decides). */
    struct fy_coll_cell *x = await(root, tag);
    int err = take_pub(root, x, P, me, rbuf, rcount, rdt);
    done(root, x);
    return err;
}

/* ---- the v and w forms: blocks described in the publication -------------
 * Here the members do not agree on the block sizes (a gatherv's counts
 * are the root's alone, an alltoallv's each member's own), so the path
 * cannot depend on them. Instead a publication starts with a table of
 * block descriptors, one per destination: each block is either in the
 * cell after the table (when it fits the room left) or at an address in
 * the owner's memory, for single-copy readers. The owner alone decides
 * which, and a reader follows the descriptor, so the only decision that
 * must agree is whether to run here at all: see each function. */

/* Whether a table of n descriptors leaves the cell any use. */
static bool table_fits(int n)
{
    return (uint64_t)n * sizeof(struct fy_coll_desc) <= FY_COLL_DATA / 2;
}

int fy_coll_put_blocks(unsigned char *data, uint64_t cap,
                       const struct fy_coll_layout *l, int n, int skip,
                       void **tmp_out, bool *by_addr_out)
{
    struct fy_coll_desc *d = (struct fy_coll_desc *)(uintptr_t)data;
    uint64_t used = (uint64_t)n * sizeof(*d);
    uint64_t packed = 0; /* non-contiguous blocks going by address */
    int err = 0;
    *tmp_out = NULL;
    *by_addr_out = false;
    /* Pass 1: inline what fits, in block order. */
    for (int i = 0; i < n; i++) {
        struct fy_coll_block b = fy_coll_layout_block(l, i);
        uint64_t bytes =
            i == skip ? 0 : (uint64_t)b.count * (uint64_t)b.dt->size;
        d[i].addr = 0;
        d[i].off = used;
        d[i].len = bytes;
        if (bytes == 0)
            continue;
        if (bytes <= cap - used) {
            fy_coll_put_block(data + used, bytes, b.ptr, b.count, b.dt);
            used += bytes;
        } else if (!single_copy()) {
            d[i].len = 0;
            err = -EMSGSIZE;
        } else if (b.dt->contig) {
            d[i].addr = (uint64_t)(uintptr_t)b.ptr;
            *by_addr_out = true;
        } else {
            d[i].addr = 1; /* packed below */
            packed += bytes;
        }
    }
    if (packed == 0)
        return err;
    /* Pass 2: pack the non-contiguous ones that go by address. */
    char *t = malloc((size_t)packed);
    if (!t) /* the readers are on this path already: they would hang */
        fy_fatal(1, "collective: out of memory packing %llu bytes",
                 (unsigned long long)packed);
    *tmp_out = t;
    *by_addr_out = true;
    for (int i = 0; i < n; i++) {
        if (d[i].addr != 1)
            continue;
        struct fy_coll_block b = fy_coll_layout_block(l, i);
        fy_dtype_pack(b.ptr, b.count, b.dt, t);
        d[i].addr = (uint64_t)(uintptr_t)t;
        t += d[i].len;
    }
    return err;
}

static int put_blocks(struct fy_coll_cell *x, const struct fy_coll_layout *l,
                      int n, int skip, void **tmp_out, bool *by_addr_out)
{
    return fy_coll_put_blocks(x->data, FY_COLL_DATA, l, n, skip, tmp_out,
                              by_addr_out);
}

int fy_coll_take_block(int local, int world, const unsigned char *data,
                       uint64_t cap, int i, void *buf, MPI_Count count,
                       const struct fy_dtype *dt)
{
    struct fy_coll_desc d =
        ((const struct fy_coll_desc *)(uintptr_t)data)[i]; /* read once */
    uint64_t bytes = (uint64_t)count * (uint64_t)dt->size;
    uint64_t n = FY_MIN(bytes, d.len);
    int err = d.len > bytes ? -EMSGSIZE : 0;
    if (n == 0)
        return err;
    if (d.addr == 0) {
        /* Inline: keep a scribbled offset inside the publication. */
        if (d.off > cap || n > cap - d.off)
            return -EPROTO;
        if (dt->contig)
            fy_copy(buf, data + d.off, (size_t)n);
        else
            fy_dtype_unpack(data + d.off, (MPI_Count)n, buf, count, dt);
        return err;
    }
    return fy_coll_keep(err,
                        read_mem_at(local, world, d.addr, n, buf, count, dt));
}

/* Block i of member r's publication x (see fy_coll_take_block). */
static int take_block(int r, const struct fy_coll_cell *x, int i, void *buf,
                      MPI_Count count, const struct fy_dtype *dt)
{
    return fy_coll_take_block(T()->loc[r], T()->world[r], x->data, FY_COLL_DATA,
                              i, buf, count, dt);
}

/* Gatherv and scatterv: only the root knows every block's size, so the
 * path cannot depend on sizes. They run here when single copy works (a
 * job-wide fact every member computed the same at MPI_Init) and the
 * member count leaves room for the table; else every member takes the
 * point-to-point path. Then every block fits somewhere: inline, or read
 * from its owner's memory. */
static bool v_here(struct fy_comm *c, int nblocks)
{
    return single_copy() && table_fits(nblocks) && members(c);
}

bool fy_coll_gatherv_asks(const struct fy_coll_layout *dst, int P, int me,
                          uint64_t cap)
{
    if (!dst->dt->contig || (uint64_t)P * FY_COLL_VASK_ENT > cap)
        return false;
    for (int r = 0; r < P; r++)
        if (r != me &&
            (uint64_t)fy_vec_at(dst->counts, r) * (uint64_t)dst->dt->size >
                cap - sizeof(struct fy_coll_desc))
            return true;
    return false;
}

void fy_coll_vask_fill(unsigned char *data, const struct fy_coll_layout *dst,
                       int P, uint64_t tag)
{
    for (int r = 0; r < P; r++) {
        struct fy_coll_block b = fy_coll_layout_block(dst, r);
        uint64_t len = (uint64_t)b.count * (uint64_t)b.dt->size;
        unsigned char *w = data + (size_t)r * FY_COLL_VASK_ENT;
        fy_coll_raddr_put(w, tag, b.ptr, (uint64_t)r, len);
        memcpy(w + 2 * sizeof(uint64_t), &len, sizeof(len));
    }
}

/* Gatherv: every other member publishes its block (one descriptor:
 * inline while it fits its cell, else by address) and the root reads
 * them into place - or, where fy_coll_gatherv_asks(), first publishes where
 * each block goes (fy_coll_vask_fill) and the members whose blocks are by
 * address write them there themselves, each on its own core, as in
 * fy_coll_shm_gather (bench/README.md, "Ireduce spread over the members;
 * Gatherv by the members' writes"). */
int fy_coll_shm_gatherv(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf,
                        struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                        struct fy_dtype *rdt, int root, struct fy_comm *c)
{
    if (!v_here(c, 1))
        return FY_COLL_SHM_NO;
    uint32_t seq = fy_coll_begin(c);
    uint64_t tag = tag_of(c, seq, 0), ask = tag_of(c, seq, 1);
    int P = c->size, me = c->rank;
    if (me != root) {
        struct fy_coll_cell *mine = claim();
        struct fy_coll_layout l = {.buf = sbuf, .count = scount, .dt = sdt};
        void *tmp;
        bool by_addr;
        int err = put_blocks(mine, &l, 1, -1, &tmp, &by_addr);
        publish(c, mine, tag, 1, NULL, 0, root);
        if (!by_addr)
            return err;
        struct fy_coll_cell *a = await_ask(mine, root, ask);
        if (a) {
            uint64_t len;
            uint64_t at =
                fy_coll_vask_take(a->data, me, ask, T()->world[root], &len);
            uint64_t bytes = (uint64_t)scount * (uint64_t)sdt->size;
            write_mem(root, at, FY_MIN(bytes, len), tmp ? tmp : (void *)sbuf);
            done(root, a);
        }
        free(tmp);
        return err;
    }
    struct fy_coll_layout dst = {
        .buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    int err = 0;
    struct fy_coll_cell *a = NULL;
    if (fy_coll_gatherv_asks(&dst, P, me, FY_COLL_DATA)) {
        a = claim();
        fy_coll_vask_fill(a->data, &dst, P, ask);
        publish(c, a, ask, (uint32_t)P - 1, NULL, 0, -1);
    }
    if (sbuf != MPI_IN_PLACE) {
        struct fy_coll_block b = fy_coll_layout_block(&dst, me);
        err = fy_coll_copy(sbuf, scount, sdt, b.ptr, b.count, b.dt);
    }
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        struct fy_coll_block b = fy_coll_layout_block(&dst, r);
        struct fy_coll_cell *x = await(r, tag);
        struct fy_coll_desc d;
        memcpy(&d, x->data, sizeof(d)); /* read once */
        if (a && d.addr != 0) {
            /* It writes (or wrote) what fits our block; more is cut, as
             * take_block() reports it. */
            if (d.len > (uint64_t)b.count * (uint64_t)rdt->size)
                err = fy_coll_keep(err, -EMSGSIZE);
        } else {
            err = fy_coll_keep(err, take_block(r, x, 0, b.ptr, b.count, b.dt));
            if (a) /* it will not write */
                done_quiet(a);
        }
        done(r, x);
    }
    if (a)
        wait_readers(a);
    return err;
}

int fy_coll_shm_scatterv(const void *sbuf, struct fy_coll_vec scounts,
                         struct fy_coll_vec displs, struct fy_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                         int root, struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    if (!v_here(c, P))
        return FY_COLL_SHM_NO;
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    if (me != root) {
        struct fy_coll_cell *x = await(root, tag);
        int err = take_block(root, x, me, rbuf, rcount, rdt);
        done(root, x);
        return err;
    }
    struct fy_coll_layout src = {
        .buf = sbuf, .counts = scounts, .displs = displs, .dt = sdt};
    struct fy_coll_cell *mine = claim();
    void *tmp;
    bool by_addr;
    int err = put_blocks(mine, &src, P, me, &tmp, &by_addr);
    publish(c, mine, tag, (uint32_t)P - 1, NULL, 0, -1);
    if (rbuf != MPI_IN_PLACE) {
        struct fy_coll_block b = fy_coll_layout_block(&src, me);
        err = fy_coll_keep(
            err, fy_coll_copy(b.ptr, b.count, b.dt, rbuf, rcount, rdt));
    }
    if (by_addr)
        wait_readers(mine);
    free(tmp);
    return err;
}

/* Allgatherv: rcounts and the receive type's size are the same on every
 * member (MPI requires it), so "every block fits a cell" agrees
 * everywhere; larger blocks need single copy (job-wide). A sender whose
 * block is larger than its receive block in a correct program cannot
 * be. */
int fy_coll_shm_allgatherv(const void *sbuf, MPI_Count scount,
                           struct fy_dtype *sdt, void *rbuf,
                           struct fy_coll_vec rcounts,
                           struct fy_coll_vec displs, struct fy_dtype *rdt,
                           struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    uint64_t room = FY_COLL_DATA - sizeof(struct fy_coll_desc);
    bool fit = true;
    for (int r = 0; r < P && fit; r++)
        fit = (uint64_t)fy_vec_at(rcounts, r) * (uint64_t)rdt->size <= room;
    if ((!fit && !single_copy()) || !members(c))
        return FY_COLL_SHM_NO;
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    struct fy_coll_layout dst = {
        .buf = rbuf, .counts = rcounts, .displs = displs, .dt = rdt};
    struct fy_coll_block own = fy_coll_layout_block(&dst, me);
    struct fy_coll_layout in = {.buf = sbuf, .count = scount, .dt = sdt};
    if (sbuf == MPI_IN_PLACE)
        in = (struct fy_coll_layout){
            .buf = own.ptr, .count = own.count, .dt = own.dt};
    struct fy_coll_cell *mine = claim();
    void *tmp;
    bool by_addr;
    int err = put_blocks(mine, &in, 1, -1, &tmp, &by_addr);
    publish(c, mine, tag, (uint32_t)P - 1, NULL, 0, -1);
    if (sbuf != MPI_IN_PLACE)
        err = fy_coll_keep(
            err, fy_coll_copy(sbuf, scount, sdt, own.ptr, own.count, own.dt));
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        struct fy_coll_block b = fy_coll_layout_block(&dst, r);
        struct fy_coll_cell *x = await(r, tag);
        err = fy_coll_keep(err, take_block(r, x, 0, b.ptr, b.count, b.dt));
        done(r, x);
    }
    if (by_addr)
        wait_readers(mine);
    free(tmp);
    return err;
}

/* Alltoallv and alltoallw: each member alone knows its blocks' sizes, so,
 * as for gatherv, they run here exactly when single copy works (job-wide)
 * and the table fits (member count). In place, a block read by address
 * could be overwritten by its owner's own receives while a peer still
 * reads it: every member passes MPI_IN_PLACE or none (MPI), so in place
 * takes the point-to-point path everywhere. */
static int shm_alltoallv(const struct fy_coll_layout *src,
                         const struct fy_coll_layout *dst, struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    if (src->buf == MPI_IN_PLACE || !v_here(c, P))
        return FY_COLL_SHM_NO;
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    struct fy_coll_cell *mine = claim();
    void *tmp;
    bool by_addr;
    int err = put_blocks(mine, src, P, me, &tmp, &by_addr);
    publish(c, mine, tag, (uint32_t)P - 1, NULL, 0, -1);
    struct fy_coll_block o = fy_coll_layout_block(src, me);
    struct fy_coll_block b = fy_coll_layout_block(dst, me);
    err = fy_coll_keep(
        err, fy_coll_copy(o.ptr, o.count, o.dt, b.ptr, b.count, b.dt));
    for (int i = 1; i < P; i++) {
        int r = (me + i) % P;
        b = fy_coll_layout_block(dst, r);
        struct fy_coll_cell *x = await(r, tag);
        err = fy_coll_keep(err, take_block(r, x, me, b.ptr, b.count, b.dt));
        done(r, x);
    }
    if (by_addr)
        wait_readers(mine);
    free(tmp);
    return err;
}

int fy_coll_shm_alltoallv(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                          void *rbuf, struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                          struct fy_comm *c)
{
    struct fy_coll_layout src = {
        .buf = sbuf, .counts = scounts, .displs = sdispls, .dt = sdt};
    struct fy_coll_layout dst = {
        .buf = rbuf, .counts = rcounts, .displs = rdispls, .dt = rdt};
    return shm_alltoallv(&src, &dst, c);
}

int fy_coll_shm_alltoallw(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls,
                          struct fy_dtype *const *sdts, void *rbuf,
                          struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls,
                          struct fy_dtype *const *rdts, struct fy_comm *c)
{
    if (sbuf == MPI_IN_PLACE) /* sdts may be anything then */
        return FY_COLL_SHM_NO;
    struct fy_coll_layout src = {.buf = sbuf,
                                 .counts = scounts,
                                 .displs = sdispls,
                                 .dt = sdts[0],
                                 .dts = sdts};
    struct fy_coll_layout dst = {.buf = rbuf,
                                 .counts = rcounts,
                                 .displs = rdispls,
                                 .dt = rdts[0],
                                 .dts = rdts};
    return shm_alltoallv(&src, &dst, c);
}

/* ---- reduce-scatter and scans (contiguous types, as the reductions) ---- */

/* Reduce-scatter from fy_coll_shm.direct_min bytes in all where the
 * kernel's single copy works, as the first half of reduce_direct: every
 * member publishes its contribution and combines its own block, reading
 * it from every other contribution, straight into its receive buffer.
 * In place (in == rbuf) our block of the result would overwrite the
 * start of our contribution while the others read it: it is combined
 * into a buffer of its own and copied into rbuf once they are done.
 * osu_reduce_scatter, 4 ranks on the 2 cores: see bench/README.md,
 * "Reductions among three or more ranks by single copy". */
static int reduce_scatter_direct(const char *in, void *rbuf,
                                 struct fy_coll_vec counts, MPI_Count count,
                                 MPI_Count total, struct fy_dtype *dt,
                                 struct fy_op *op, struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    size_t esz = (size_t)dt->size;
    uint64_t bytes = (uint64_t)total * esz, none = 0;
    uint64_t tag = tag_of(c, fy_coll_begin(c), 0);
    struct fy_coll_cell *mine = claim();
    publish(c, mine, tag, (uint32_t)P - 1, in, bytes, -1);
    int err = 0;
    MPI_Count have = direct_addrs(c, tag, bytes, esz, -1, &none, &err);
    MPI_Count start = 0;
    for (int j = 0; j < me; j++)
        start += counts.p ? fy_vec_at(counts, j) : count;
    MPI_Count n = counts.p ? fy_vec_at(counts, me) : count;
    MPI_Count e0 = FY_MIN(start, have), e1 = FY_MIN(start + n, have);
    size_t out_bytes = (size_t)(e1 - e0) * esz;
    char *out = rbuf;
    if (in == rbuf && out_bytes > 0 && !(out = malloc(out_bytes)))
        fy_fatal(1, "reduce-scatter: out of memory for %zu bytes", out_bytes);
    err = fy_coll_keep(
        err, combine_direct(in, out, e0, e1, T()->addr, P, me, -1, 0, dt, op));
    for (int r = 0; r < P; r++)
        if (r != me)
            done(r, T()->x[r]);
    wait_readers(mine);
    if (out != rbuf) {
        fy_copy(rbuf, out, out_bytes);
        free(out);
    }
    return err;
}

/* Reduce-scatter: member j gets elements [start_j, start_j + counts[j])
 * of the reduction (counts NULL: 'count' each). In each round every
 * member publishes one cell holding, for every member j, the next piece
 * of j's block from its contribution (at most q elements, at j * q), and
 * each member combines its pieces of all contributions in rank order.
 * The counts are the same on every member (MPI), so the number of rounds
 * and the path agree. In place, round k writes output elements below
 * (k + 1) q, and every later round reads input at or above that: the
 * input is published before the output overwrites it. */
static int shm_reduce_scatter(const void *sbuf, void *rbuf,
                              struct fy_coll_vec counts, MPI_Count count,
                              struct fy_dtype *dt, struct fy_op *op,
                              struct fy_comm *c)
{
    int P = c->size, me = c->rank;
    MPI_Count maxc = 0, total = 0;
    for (int j = 0; j < P; j++) {
        MPI_Count cj = counts.p ? fy_vec_at(counts, j) : count;
        maxc = FY_MAX(maxc, cj);
        total += cj;
    }
    if (!reducible(maxc, dt))
        return FY_COLL_SHM_NO;
    MPI_Count q = cell_elems(dt) / P;
    if (q == 0 || !members(c))
        return FY_COLL_SHM_NO;
    struct fy_coll_cell **x = cells_array(P);
    if (!x) /* as in members(): every member must take the same path */
        fy_fatal(1, "reduce-scatter: out of memory for %d members", P);
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t esz = (size_t)dt->size;
    if (single_copy() && (uint64_t)total * esz >= fy_coll_shm.direct_min)
        return reduce_scatter_direct(in, rbuf, counts, count, total, dt, op, c);
    uint32_t seq = fy_coll_begin(c);
    MPI_Count mine_n = counts.p ? fy_vec_at(counts, me) : count;
    int err = 0;
    uint32_t step = 0;
    for (MPI_Count lo = 0; lo < maxc; lo += q, step++) {
        uint64_t tag = tag_of(c, seq, step);
        struct fy_coll_cell *mine = claim();
        MPI_Count start = 0;
        for (int j = 0; j < P; j++) {
            MPI_Count cj = counts.p ? fy_vec_at(counts, j) : count;
            MPI_Count m = FY_MIN(q, FY_MAX(cj - lo, 0));
            fy_copy(mine->data + (size_t)(j * q) * esz,
                    in + (size_t)(start + lo) * esz, (size_t)m * esz);
            start += cj;
        }
        publish(c, mine, tag, (uint32_t)P - 1, NULL, 0, -1);
        for (int r = 0; r < P; r++)
            x[r] = r == me ? mine : await(r, tag);
        MPI_Count m = FY_MIN(q, FY_MAX(mine_n - lo, 0));
        if (m > 0)
            err =
                fy_coll_keep(err, combine(x, P, FY_COLL_DATA, me * q, m, dt, op,
                                          (char *)rbuf + (size_t)lo * esz));
        for (int r = 0; r < P; r++)
            if (r != me)
                done(r, x[r]);
    }
    return err;
}

int fy_coll_shm_reduce_scatter_block(const void *sbuf, void *rbuf,
                                     MPI_Count count, struct fy_dtype *dt,
                                     struct fy_op *op, struct fy_comm *c)
{
    return shm_reduce_scatter(sbuf, rbuf, FY_VEC_NONE, count, dt, op, c);
}

int fy_coll_shm_reduce_scatter(const void *sbuf, void *rbuf,
                               struct fy_coll_vec rcounts, struct fy_dtype *dt,
                               struct fy_op *op, struct fy_comm *c)
{
    return shm_reduce_scatter(sbuf, rbuf, rcounts, 0, dt, op, c);
}

/* Scan (ex false) and exscan: in rounds of one cell, every member
 * publishes its piece and member r combines the pieces of members 0..r
 * (0..r-1), in rank order, as combine() does for the reductions. count
 * is the same everywhere (MPI), so the rounds agree. Our piece is in our
 * cell before rbuf is written, so in place is fine. */
static int shm_scan(const void *sbuf, void *rbuf, MPI_Count count,
                    struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c,
                    bool ex)
{
    if (!reducible(count, dt) || !members(c))
        return FY_COLL_SHM_NO;
    int P = c->size, me = c->rank;
    struct fy_coll_cell **x = cells_array(P);
    if (!x) /* as in members(): every member must take the same path */
        fy_fatal(1, "scan: out of memory for %d members", P);
    int n = ex ? me : me + 1; /* contributions we combine */
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t esz = (size_t)dt->size;
    MPI_Count per = cell_elems(dt);
    uint32_t seq = fy_coll_begin(c);
    int err = 0;
    uint32_t step = 0;
    for (MPI_Count e = 0; e < count; e += per, step++) {
        MPI_Count m = FY_MIN(per, count - e);
        uint64_t tag = tag_of(c, seq, step);
        struct fy_coll_cell *mine = claim();
        fy_copy(payload(mine, (size_t)m * esz), in + (size_t)e * esz,
                (size_t)m * esz);
        /* Read by the members after us only: wake those (only = us
         * wakes nobody), and the last member publishes nothing. */
        if (me < P - 1) {
            publish(c, mine, tag, (uint32_t)(P - 1 - me), NULL, 0, me);
            for (int r = me + 1; r < P; r++)
                fy_wake(T()->world[r]);
        }
        if (n == 0)
            continue;
        for (int r = 0; r < n; r++)
            x[r] = r == me ? mine : await(r, tag);
        err = fy_coll_keep(err, combine(x, n, (size_t)m * esz, 0, m, dt, op,
                                        (char *)rbuf + (size_t)e * esz));
        for (int r = 0; r < n; r++)
            if (r != me)
                done(r, x[r]);
    }
    return err;
}

int fy_coll_shm_scan(const void *sbuf, void *rbuf, MPI_Count count,
                     struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c)
{
    return shm_scan(sbuf, rbuf, count, dt, op, c, false);
}

int fy_coll_shm_exscan(const void *sbuf, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c)
{
    return shm_scan(sbuf, rbuf, count, dt, op, c, true);
}
