/* SPDX-License-Identifier: MIT */
/* Hand-over: small one-sided operations on windows on user memory
 * (MPI_Win_create, dynamic) go to a target that is inside MPI as requests
 * in the window's shared boxes, which it serves from its progress engine
 * with plain loads and stores (no system call on either side); when the
 * target is not inside MPI, or does not take a request in time, the origin
 * takes it back and does it by single copy (CMA or /proc/<pid>/mem), so
 * passive target still completes while the target computes.
 *
 * Shared state (the window's memfd, rma.h): beats[r] and, for each pair,
 * boxes[t * n + o], the one box origin o uses for target t.
 *
 * Invariants:
 * - beats[r].beat is written only by rank r: incremented (relaxed) in every
 *   progress pass that runs ho_serve_all, i.e. whenever r is inside MPI
 *   and driving its engine. It carries no data: origins read it (relaxed)
 *   only to guess whether r will serve soon. A beat that has not moved for
 *   HO_STALE_NS means "not serving now".
 * - beats[t].hint: origins set it to 1 by exchange (H1, release) after
 *   posting to t; t takes it with an exchange to 0 (H2, acquire) before
 *   scanning its boxes. Both are read-modify-writes, so the release
 *   sequence of every origin's H1 reaches t's H2 and t sees each POSTED
 *   written before any H1 its H2 reads (a plain-store H1 by a second
 *   origin would end the first origin's release sequence).
 * - box state (enum fy_rma_ho_state): EMPTY, DONE and WITHDRAWN belong to
 *   the origin, which alone writes the box's fields then; POSTED is
 *   shared; TAKEN belongs to the target. Transitions:
 *     origin  (EMPTY|DONE|WITHDRAWN) -> POSTED   store, R1 (release)
 *     target  POSTED -> TAKEN                     CAS, A1 (acquire, pairs
 *                                                 with R1: fields and data)
 *     target  TAKEN -> DONE                       store, R2 (release)
 *     target  TAKEN -> POSTED                     store, R3 (release): put
 *                                                 back (accumulate lock busy)
 *     origin  POSTED -> WITHDRAWN                 CAS, A3 (acquire, pairs
 *                                                 with R3: nothing applied)
 *     origin  sees DONE                           load, A2 (acquire, pairs
 *                                                 with R2: results, and the
 *                                                 target's stores to its
 *                                                 memory, happen before)
 *   The two CASes from POSTED decide who applies a request: exactly one of
 *   target and origin does, once. Neither needs the beat to be right.
 * - each origin has at most one request per target in a box; any later
 *   operation of that origin to that target (by box or by single copy)
 *   first settles it (waits for DONE or withdraws and applies it), so one
 *   origin's operations reach one target in program order, and every
 *   synchronisation call (flush, unlock, fence, complete, free) settles
 *   every box first.
 * - accumulate atomicity (same op, same type, element-wise): every
 *   read-combine-write on user memory - an origin's single copy
 *   (win.c), a withdrawn request applied by its origin, a request served
 *   by the target, the target's own accumulates - runs under the target's
 *   accumulate lock word slot[t].acc (C1/C2 in win.c), which the server
 *   only try-locks (the progress engine must not wait on it: a request
 *   whose lock is busy is put back, R3, and retried next pass). So the two
 *   paths exclude each other at the target exactly as two single-copy
 *   origins do.
 * - a box's contents are checked after A1 against a private snapshot of
 *   its header (the origin cannot change it while TAKEN, but a faulty one
 *   could write anyway): a kind, size, type or op out of range, or an
 *   address outside the target's window, is refused with nothing written.
 *
 * Split copies: a contiguous put or get of at least FERRY_RMA_SPLIT_MIN
 * bytes to a target that is serving is copied by both ranks at once, each
 * by single copy (one kernel copy keeps one core busy; two move about
 * twice the bytes per second here): the origin between its buffer and the
 * target's window, the target between its window and the origin's
 * buffer. The box (kind FY_RMA_HO_SPLIT_PUT/GET) carries the target range
 * in its header and struct fy_rma_split in its data area. Invariants:
 * - S1: the bytes are handed out in chunks by a fetch-add on 'next'; a
 *   chunk is copied by whoever's fetch-add returned its offset, once. The
 *   target claims only after its A1 (TAKEN), so a request the origin
 *   withdraws while POSTED was the origin's alone.
 * - S2: the origin claims until 'next' passes the length, then settles
 *   at once (a split request never outlives its call): A3's CAS
 *   (POSTED -> WITHDRAWN), or waits for DONE (A2 pairs with R2: the
 *   target's chunks are in place, its verdict in err).
 * - S3: the target claims at most HO_HELP_MAX bytes of one request, so
 *   one progress pass stays bounded; the origin copies the rest.
 * - S4: the target checks each chunk's range against its window, and the
 *   chunk size, before copying; the origin's address is only ever used in
 *   the origin's own process (a wrong one fails there with EFAULT and is
 *   the request's error).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chan/chan.h"
#include "p2p/p2p.h"
#include "proto/proto.h"
#include "rma/rma.h"
#include "util/copy.h"
#include "util/mt.h"
#include "util/util.h"

/* A beat unchanged this long: the target is not serving (outside MPI,
 * asleep, or preempted). A few of its progress passes, well below one
 * system call's cost per operation times the operations a target that
 * left MPI would otherwise delay. */
#define HO_STALE_NS 4000
/* A request still POSTED this long is taken back even when the beat moves
 * (a target whose passes are long, or whose accumulate lock stays busy). */
#define HO_POSTED_MAX_NS 100000
/* Polls of the box between looks at the beat (and progress passes). */
#define HO_POLLS 32
/* Split copies: claim sizes, and the most one target copies of one
 * request (S3). */
#define HO_SPLIT_CHUNK_MIN ((uint64_t)64 << 10)
#define HO_SPLIT_CHUNK_MAX ((uint64_t)1 << 20)
#define HO_HELP_MAX ((uint64_t)16 << 20)

/* Origin side, private to this rank. */
struct fy_rma_ho {
    uint64_t max;    /* FERRY_RMA_AM_MAX, at most FY_RMA_HO_CAP */
    uint64_t split;  /* FERRY_RMA_SPLIT_MIN (0: never) */
    bool *pending;   /* [t]: our box of t may hold an unsettled request */
    bool *absent;    /* [t]: t was found not serving ... */
    uint32_t *seen;  /* [t]: ... at this beat of its */
    uint32_t mybeat; /* target side: our beat */
    bool rescan;     /* target side: a request was put back */
    int err;         /* first error settling found (fy_rma_ho_error) */
    struct fy_rma_ho *next;
    struct fy_rma_win *w;
};

static struct fy_rma_ho *s_hos; /* every window this rank serves boxes of */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct fy_rma_box *box_of(const struct fy_rma_win *w, int target,
                                 int origin)
{
    return &w->boxes[(size_t)target * (size_t)w->size + (size_t)origin];
}

/* ---- applying a request --------------------------------------------------
 * The same code applies a request at the target (memcpy into its own
 * memory) and at an origin that withdrew it (single copy). */

struct req {
    uint32_t kind;
    uint64_t addr, bytes;
    struct fy_op *op;
    struct fy_dtype *u;
};

static int rd(struct fy_rma_win *w, int t, bool remote, void *dst,
              uint64_t addr, size_t n)
{
    if (remote)
        return fy_rma_remote_copy(w, t, dst, addr, n, true);
    fy_copy(dst, (const void *)(uintptr_t)addr, n);
    return 0;
}

static int wr(struct fy_rma_win *w, int t, bool remote, uint64_t addr,
              const void *src, size_t n)
{
    if (remote)
        return fy_rma_remote_copy(w, t, (void *)(uintptr_t)src, addr, n, false);
    fy_copy((void *)(uintptr_t)addr, src, n);
    return 0;
}

/* Apply r to target t's memory with data in 'data' (results go there
 * too). Accumulate kinds: the caller holds t's accumulate lock. */
static int apply(struct fy_rma_win *w, int t, bool remote, const struct req *r,
                 unsigned char *data)
{
    size_t n = (size_t)r->bytes;
    alignas(16) unsigned char cur[FY_RMA_HO_CAP], old[FY_RMA_HO_CAP];
    int rc = 0;
    switch (r->kind) {
    case FY_RMA_AM_PUT:
        return wr(w, t, remote, r->addr, data, n);
    case FY_RMA_AM_GET:
        return rd(w, t, remote, data, r->addr, n);
    case FY_RMA_AM_CAS:
        rc = rd(w, t, remote, old, r->addr, n);
        if (!rc && memcmp(old, data + n, n) == 0)
            rc = wr(w, t, remote, r->addr, data, n);
        if (!rc)
            memcpy(data, old, n);
        return rc;
    default: /* ACC, GACC */
        break;
    }
    bool fetch = r->kind == FY_RMA_AM_GACC;
    MPI_Count k = (MPI_Count)(r->bytes / (uint64_t)r->u->size);
    if (r->op->handle == MPI_NO_OP)
        return fetch ? rd(w, t, remote, data, r->addr, n) : 0;
    if (r->op->handle == MPI_REPLACE) {
        if (fetch)
            rc = rd(w, t, remote, old, r->addr, n);
        if (!rc)
            rc = wr(w, t, remote, r->addr, data, n);
        if (!rc && fetch)
            memcpy(data, old, n);
        return rc;
    }
    if (!remote) {
        /* Our own memory: combine in place (as win.c's acc_small). */
        void *tgt = (void *)(uintptr_t)r->addr;
        if (fetch)
            memcpy(old, tgt, n);
        rc = fy_op_apply(r->op, data, tgt, k, r->u);
        if (!rc && fetch)
            memcpy(data, old, n);
        return rc;
    }
    rc = rd(w, t, true, cur, r->addr, n);
    if (rc)
        return rc;
    if (fetch)
        memcpy(old, cur, n);
    rc = fy_op_apply(r->op, data, cur, k, r->u);
    if (!rc)
        rc = wr(w, t, true, r->addr, cur, n);
    if (!rc && fetch)
        memcpy(data, old, n);
    return rc;
}

/* Check a snapshot of a box's header, and (w set) that its bytes lie in
 * this rank's window; fills r. */
static int check(const struct fy_rma_win *w, uint32_t kind, int32_t op,
                 int32_t type, uint64_t addr, uint64_t bytes, struct req *r)
{
    if (kind < FY_RMA_AM_PUT || kind > FY_RMA_AM_CAS || bytes == 0 ||
        bytes > FY_RMA_HO_CAP)
        return -EPROTO;
    *r = (struct req){.kind = kind, .addr = addr, .bytes = bytes};
    if (fy_rma_ho_locked_kind(kind)) {
        struct fy_dtype *u = fy_dtype_get((MPI_Datatype)type);
        if (!u || !u->builtin || u->pair || !u->contig || u->size <= 0 ||
            bytes % (uint64_t)u->size)
            return -EINVAL;
        if (kind == FY_RMA_AM_CAS && bytes != (uint64_t)u->size)
            return -EPROTO;
        if (kind == FY_RMA_AM_CAS && bytes > 16)
            return -EINVAL;
        r->u = u;
        if (kind != FY_RMA_AM_CAS) {
            struct fy_op *o = fy_op_get((MPI_Op)op);
            if (!o || !fy_op_valid_for_accumulate(o, u))
                return -EINVAL;
            r->op = o;
        }
    }
    if (w && !fy_rma_in_window(w, addr, bytes))
        return -ERANGE;
    return 0;
}

/* Target side of a split copy (S1, S3, S4): claim chunks of origin o's
 * request and copy them between our window and o's buffer. */
static int serve_split(struct fy_rma_win *w, int o, struct fy_rma_box *b,
                       uint32_t kind, uint64_t addr, uint64_t bytes)
{
    struct fy_rma_split *s = (struct fy_rma_split *)(void *)b->data;
    uint64_t chunk = s->chunk, oaddr = s->oaddr, helped = 0;
    if (o < 0 || o >= w->size || o == w->rank || chunk == 0 ||
        chunk > HO_SPLIT_CHUNK_MAX || bytes == 0)
        return -EPROTO;
    if (!fy_rma_in_window(w, addr, bytes))
        return -ERANGE;
    while (helped < HO_HELP_MAX) {
        uint64_t c =
            atomic_fetch_add_explicit(&s->next, chunk, memory_order_relaxed);
        if (c >= bytes)
            break;
        uint64_t n = FY_MIN(chunk, bytes - c);
        /* Ours: [addr + c, + n), inside the window checked above. */
        int rc =
            fy_rma_remote_copy(w, o, (void *)(uintptr_t)(addr + c), oaddr + c,
                               (size_t)n, kind == FY_RMA_HO_SPLIT_PUT);
        if (rc)
            return rc;
        helped += n;
    }
    fy_proto_stats.rma_helped_bytes += helped;
    return 0;
}

int fy_rma_ho_serve(struct fy_rma_win *w, int origin, struct fy_rma_box *b)
{
    uint32_t kind = b->kind;
    uint64_t addr = b->addr, bytes = b->bytes;
    if (kind == FY_RMA_HO_SPLIT_PUT || kind == FY_RMA_HO_SPLIT_GET)
        return serve_split(w, origin, b, kind, addr, bytes);
    struct req r;
    int err = check(w, kind, b->op, b->type, addr, bytes, &r);
    if (!err)
        err = apply(w, w->rank, false, &r, b->data);
    return err;
}

/* ---- the target ------------------------------------------------------- */

static bool acc_trylock(struct fy_rma_win *w)
{
    _Atomic uint32_t *word = &w->slot[w->rank].acc;
    uint32_t zero = 0;
    /* C1 of win.c: acquire pairs with the previous holder's release. */
    return atomic_load_explicit(word, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(
               word, &zero, 1, memory_order_acquire, memory_order_relaxed);
}

/* Serve the box of origin o if it holds a request. */
static void serve_one(struct fy_rma_win *w, struct fy_rma_ho *ho, int o)
{
    struct fy_rma_box *b = box_of(w, w->rank, o);
    uint32_t st = FY_RMA_HO_POSTED;
    if (atomic_load_explicit(&b->state, memory_order_relaxed) != st)
        return;
    /* A1: acquire pairs with R1: the origin's header and data. */
    if (!atomic_compare_exchange_strong_explicit(
            &b->state, &st, FY_RMA_HO_TAKEN, memory_order_acquire,
            memory_order_relaxed))
        return; /* withdrawn meanwhile */
    uint32_t kind = b->kind;
    bool lock = fy_rma_ho_locked_kind(kind);
    if (lock && !acc_trylock(w)) {
        /* R3: put back untouched; retried next pass, or withdrawn. */
        atomic_store_explicit(&b->state, FY_RMA_HO_POSTED,
                              memory_order_release);
        ho->rescan = true;
        return;
    }
    int err = fy_rma_ho_serve(w, o, b);
    if (lock)
        fy_rma_acc_unlock(w, w->rank); /* C2 */
    if (err && err != -ERANGE)
        FY_WARN("MPI one-sided: refused a request from rank %d in its box "
                "(kind %u, %llu bytes): %s",
                o, kind, (unsigned long long)b->bytes, strerror(-err));
    b->err = err;
    /* R2: release pairs with A2: results and our stores to the window. */
    atomic_store_explicit(&b->state, FY_RMA_HO_DONE, memory_order_release);
}

static void serve_all(void)
{
    for (struct fy_rma_ho *ho = s_hos; ho; ho = ho->next) {
        struct fy_rma_win *w = ho->w;
        struct fy_rma_beat *me = &w->beats[w->rank];
        /* No data rides on the beat: relaxed. */
        atomic_store_explicit(&me->beat, ++ho->mybeat, memory_order_relaxed);
        if (!ho->rescan &&
            !atomic_load_explicit(&me->hint, memory_order_relaxed))
            continue;
        /* H2: acquire pairs with every origin's H1 (see the invariants). */
        (void)atomic_exchange_explicit(&me->hint, 0, memory_order_acquire);
        ho->rescan = false;
        for (int o = 0; o < w->size; o++)
            if (o != w->rank)
                serve_one(w, ho, o);
    }
}

static bool s_in_hook;

/* The target's side: what it serves completes no request of its own, so
 * it counts as no work (FY_HOOK_RMA). */
static int rma_hook(void)
{
    if (s_in_hook)
        return 0;
    s_in_hook = true;
    if (s_hos)
        serve_all();
    s_in_hook = false;
    if (fy_rma_am_any())
        fy_rma_am_progress();
    return 0;
}

void fy_rma_hook_update(void)
{
    fy_p2p_hook_set(FY_HOOK_RMA, s_hos || fy_rma_am_any() ? rma_hook : NULL);
}

/* ---- set-up ------------------------------------------------------------- */

int fy_rma_ho_init(struct fy_rma_win *w)
{
    long long max = fy_env_int(FY_ENV_RMA_AM_MAX);
    if (max <= 0 || !w->boxes || w->am || w->size < 2)
        return 0;
    struct fy_rma_ho *ho = calloc(1, sizeof(*ho));
    if (!ho)
        return -ENOMEM;
    size_t n = (size_t)w->size;
    ho->pending = calloc(n, sizeof(bool));
    ho->absent = calloc(n, sizeof(bool));
    ho->seen = calloc(n, sizeof(uint32_t));
    if (!ho->pending || !ho->absent || !ho->seen) {
        free(ho->pending);
        free(ho->absent);
        free(ho->seen);
        free(ho);
        return -ENOMEM;
    }
    /* Until a target's beat moves it has not served: single copy. */
    for (size_t t = 0; t < n; t++)
        ho->absent[t] = true;
    ho->max = (uint64_t)FY_MIN(max, (long long)FY_RMA_HO_CAP);
    long long split = fy_env_int(FY_ENV_RMA_SPLIT_MIN);
    ho->split = split > 0 ? (uint64_t)split : 0;
    ho->w = w;
    ho->next = s_hos;
    s_hos = ho;
    w->ho = ho;
    fy_rma_hook_update();
    return 0;
}

void fy_rma_ho_free(struct fy_rma_win *w)
{
    struct fy_rma_ho *ho = w->ho;
    if (!ho)
        return;
    for (struct fy_rma_ho **pp = &s_hos; *pp; pp = &(*pp)->next)
        if (*pp == ho) {
            *pp = ho->next;
            break;
        }
    fy_rma_hook_update();
    free(ho->pending);
    free(ho->absent);
    free(ho->seen);
    free(ho);
    w->ho = NULL;
}

int fy_rma_ho_error(struct fy_rma_win *w)
{
    if (!w->ho)
        return 0;
    int e = w->ho->err;
    w->ho->err = 0;
    return e;
}

/* ---- the origin --------------------------------------------------------- */

/* Do our withdrawn request in box b to t by single copy. */
static int apply_withdrawn(struct fy_rma_win *w, int t, struct fy_rma_box *b)
{
    struct req r;
    /* Our own fields, the range checked by fy_rma_target before posting:
     * only op and type to resolve. */
    int rc = check(NULL, b->kind, b->op, b->type, b->addr, b->bytes, &r);
    if (rc)
        return rc;
    bool lock = fy_rma_ho_locked_kind(r.kind);
    if (lock)
        fy_rma_acc_lock(w, t);
    rc = apply(w, t, true, &r, b->data);
    if (lock)
        fy_rma_acc_unlock(w, t);
    return rc;
}

/* Wait for our request to t: served (its verdict), or withdrawn and done
 * here. Returns 0 or a negative errno. */
static int wait_box(struct fy_rma_win *w, int t)
{
    struct fy_rma_ho *ho = w->ho;
    struct fy_rma_box *b = box_of(w, t, w->rank);
    ho->pending[t] = false;
    int rc = 0;
    unsigned polls = 0;
    uint32_t st;
    /* A2: acquire pairs with R2. */
    while ((st = atomic_load_explicit(&b->state, memory_order_acquire)) !=
           FY_RMA_HO_DONE) {
        if (st != FY_RMA_HO_POSTED && st != FY_RMA_HO_TAKEN)
            return 0; /* nothing was pending */
        if (++polls < HO_POLLS) {
            fy_cpu_relax();
            continue;
        }
        break;
    }
    if (st == FY_RMA_HO_DONE)
        return b->err;
    /* Slow path: drive our own engine (the target may be waiting on us),
     * watch the target's beat. */
    int locked = fy_mt_enter();
    uint64_t t0 = now_ns(), since = t0;
    uint32_t beat =
        atomic_load_explicit(&w->beats[t].beat, memory_order_relaxed);
    for (polls = 0;; polls++) {
        st = atomic_load_explicit(&b->state, memory_order_acquire); /* A2 */
        if (st == FY_RMA_HO_DONE) {
            rc = b->err;
            break;
        }
        if (polls % HO_POLLS) {
            fy_cpu_relax();
            continue;
        }
        fy_progress();
        uint64_t now = now_ns();
        uint32_t bt =
            atomic_load_explicit(&w->beats[t].beat, memory_order_relaxed);
        if (bt != beat) {
            beat = bt;
            since = now;
        }
        bool stale = now - since >= HO_STALE_NS;
        if (!stale && now - t0 < HO_POSTED_MAX_NS)
            continue;
        uint32_t want = FY_RMA_HO_POSTED;
        /* A3: acquire pairs with R3 (a put-back request is untouched). */
        if (atomic_compare_exchange_strong_explicit(
                &b->state, &want, FY_RMA_HO_WITHDRAWN, memory_order_acquire,
                memory_order_acquire)) {
            if (stale) {
                ho->absent[t] = true;
                ho->seen[t] = bt;
            }
            rc = apply_withdrawn(w, t, b);
            break;
        }
        /* TAKEN: being served; let it run if it shares our core. */
        if (stale)
            sched_yield();
    }
    fy_mt_leave(&locked);
    return rc;
}

void fy_rma_ho_settle(struct fy_rma_win *w, int target)
{
    struct fy_rma_ho *ho = w->ho;
    if (!ho)
        return;
    for (int t = target < 0 ? 0 : target;
         t < (target < 0 ? w->size : target + 1); t++) {
        if (!ho->pending[t])
            continue;
        int rc = wait_box(w, t);
        if (rc && !ho->err)
            ho->err = rc;
    }
}

/* Whether t may be serving: not found absent since its beat last moved. */
static bool serving(struct fy_rma_win *w, int t)
{
    struct fy_rma_ho *ho = w->ho;
    if (ho->absent[t]) {
        uint32_t bt =
            atomic_load_explicit(&w->beats[t].beat, memory_order_relaxed);
        if (bt == ho->seen[t])
            return false; /* has not driven its engine since */
        ho->absent[t] = false;
    }
    return true;
}

/* Whether an operation of 'bytes' to t may go by box now; settles the
 * previous one first either way. */
static bool usable(struct fy_rma_win *w, int t, uint64_t bytes)
{
    fy_rma_ho_settle(w, t);
    return bytes > 0 && bytes <= w->ho->max && serving(w, t);
}

/* Our box to t, free to fill (settled by usable()). */
static struct fy_rma_box *fill(struct fy_rma_win *w, int t, uint32_t kind,
                               uint64_t addr, uint64_t bytes)
{
    struct fy_rma_box *b = box_of(w, t, w->rank);
    b->kind = kind;
    b->addr = addr;
    b->bytes = bytes;
    b->err = 0;
    return b;
}

static void post(struct fy_rma_win *w, int t, struct fy_rma_box *b)
{
    /* R1: release pairs with A1: fields and data before the state. */
    atomic_store_explicit(&b->state, FY_RMA_HO_POSTED, memory_order_release);
    /* H1 (see the invariants: a read-modify-write). */
    (void)atomic_exchange_explicit(&w->beats[t].hint, 1, memory_order_release);
    w->ho->pending[t] = true;
}

/* A put's or get's box towards target, filled but not posted, or NULL
 * (-EAGAIN: single copy) when the hand-over cannot carry it: a target
 * not serving, too many bytes, a non-contiguous target type, or origin
 * and target sizes that differ. *bytes_out: the bytes moved. */
static struct fy_rma_box *box_for(struct fy_rma_win *w, int target,
                                  uint32_t kind, MPI_Count ocount,
                                  struct fy_dtype *odt, uint64_t taddr,
                                  MPI_Count tcount, struct fy_dtype *tdt,
                                  uint64_t *bytes_out)
{
    uint64_t bytes = (uint64_t)(tcount * tdt->size);
    if (!usable(w, target, bytes) || !tdt->contig ||
        (uint64_t)(ocount * odt->size) != bytes)
        return NULL;
    *bytes_out = bytes;
    return fill(w, target, kind, taddr + (uint64_t)tdt->true_lb, bytes);
}

/* Origin side of a split copy (S1, S2): post, claim and copy chunks
 * until none is left, settle. -EAGAIN when it does not apply: too small,
 * not contiguous on both sides, a target not serving. */
static int split_copy(struct fy_rma_win *w, bool put, void *obuf,
                      MPI_Count ocount, struct fy_dtype *odt, int t,
                      uint64_t taddr, MPI_Count tcount, struct fy_dtype *tdt)
{
    struct fy_rma_ho *ho = w->ho;
    uint64_t bytes = (uint64_t)(tcount * tdt->size);
    if (!ho->split || bytes < ho->split || !odt->contig || !tdt->contig ||
        (uint64_t)(ocount * odt->size) != bytes)
        return -EAGAIN;
    fy_rma_ho_settle(w, t);
    if (!serving(w, t))
        return -EAGAIN;
    /* About eight claims a request: few system calls, and the side that
     * finishes first waits for at most one chunk of the other's. */
    uint64_t chunk = FY_MIN(
        FY_MAX(HO_SPLIT_CHUNK_MIN, ((bytes / 8) + 4095) & ~(uint64_t)4095),
        HO_SPLIT_CHUNK_MAX);
    char *local = (char *)obuf + odt->true_lb;
    uint64_t remote = taddr + (uint64_t)tdt->true_lb;
    struct fy_rma_box *b = fill(
        w, t, put ? FY_RMA_HO_SPLIT_PUT : FY_RMA_HO_SPLIT_GET, remote, bytes);
    struct fy_rma_split *s = (struct fy_rma_split *)(void *)b->data;
    s->oaddr = (uint64_t)(uintptr_t)local;
    s->chunk = chunk;
    atomic_store_explicit(&s->next, 0, memory_order_relaxed);
    post(w, t, b);
    ho->pending[t] = false; /* settled below, before we return */
    int rc = 0;
    for (;;) {
        uint64_t c =
            atomic_fetch_add_explicit(&s->next, chunk, memory_order_relaxed);
        if (c >= bytes)
            break;
        uint64_t n = FY_MIN(chunk, bytes - c);
        rc = fy_rma_remote_copy(w, t, local + c, remote + c, (size_t)n, !put);
        if (rc)
            break;
    }
    uint32_t st = FY_RMA_HO_POSTED;
    /* A3: the target never took it, so every chunk was ours (S1). */
    if (atomic_compare_exchange_strong_explicit(
            &b->state, &st, FY_RMA_HO_WITHDRAWN, memory_order_acquire,
            memory_order_acquire))
        return rc;
    /* TAKEN: the target copies its last chunk; it needs nothing from us. */
    unsigned polls = 0;
    while (atomic_load_explicit(&b->state, memory_order_acquire) != /* A2 */
           FY_RMA_HO_DONE) {
        if (++polls % 1024)
            fy_cpu_relax();
        else
            sched_yield(); /* it may share our core */
    }
    return rc ? rc : b->err;
}

int fy_rma_ho_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt)
{
    int rc = split_copy(w, true, (void *)(uintptr_t)obuf, ocount, odt, target,
                        taddr, tcount, tdt);
    if (rc != -EAGAIN)
        return rc;
    uint64_t bytes;
    struct fy_rma_box *b = box_for(w, target, FY_RMA_AM_PUT, ocount, odt, taddr,
                                   tcount, tdt, &bytes);
    if (!b)
        return -EAGAIN;
    if (odt->contig)
        fy_copy(b->data, (const char *)obuf + odt->true_lb, (size_t)bytes);
    else
        fy_dtype_pack(obuf, ocount, odt, b->data);
    post(w, target, b);
    return 0; /* completed by a later settle */
}

int fy_rma_ho_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt)
{
    int rc =
        split_copy(w, false, obuf, ocount, odt, target, taddr, tcount, tdt);
    if (rc != -EAGAIN)
        return rc;
    uint64_t bytes;
    struct fy_rma_box *b = box_for(w, target, FY_RMA_AM_GET, ocount, odt, taddr,
                                   tcount, tdt, &bytes);
    if (!b)
        return -EAGAIN;
    post(w, target, b);
    rc = wait_box(w, target);
    if (rc)
        return rc;
    if (odt->contig)
        fy_copy((char *)obuf + odt->true_lb, b->data, (size_t)bytes);
    else
        fy_dtype_unpack(b->data, (MPI_Count)bytes, obuf, ocount, odt);
    return 0;
}

int fy_rma_ho_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
                  struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
                  struct fy_dtype *rdt, int target, uint64_t taddr,
                  MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op)
{
    uint64_t bytes = (uint64_t)(tcount * tdt->size);
    bool no_op = op->handle == MPI_NO_OP;
    if (!usable(w, target, bytes))
        return -EAGAIN;
    struct fy_dtype *u = tdt->pair ? NULL : fy_dtype_elem_type(tdt);
    if (!u || !u->builtin || u->pair || !u->contig ||
        !fy_rma_flat(tcount, tdt, (MPI_Count)bytes) ||
        !fy_op_valid_for_accumulate(op, u) ||
        (!no_op && (uint64_t)(ocount * odt->size) != bytes) ||
        (rbuf && (uint64_t)(rcount * rdt->size) != bytes))
        return -EAGAIN;
    if (no_op && !rbuf)
        return 0;
    struct fy_rma_box *b =
        fill(w, target, rbuf ? FY_RMA_AM_GACC : FY_RMA_AM_ACC, taddr, bytes);
    b->op = (int32_t)op->handle;
    b->type = (int32_t)u->handle;
    /* A counter's one element: plain copies, not the type walk. */
    if (!no_op && fy_rma_flat(ocount, odt, (MPI_Count)bytes))
        fy_copy(b->data, obuf, (size_t)bytes);
    else if (!no_op)
        fy_dtype_pack(obuf, ocount, odt, b->data);
    post(w, target, b);
    if (!rbuf)
        return 0; /* completed by a later settle */
    int rc = wait_box(w, target);
    if (!rc && fy_rma_flat(rcount, rdt, (MPI_Count)bytes))
        fy_copy(rbuf, b->data, (size_t)bytes);
    else if (!rc)
        fy_dtype_unpack(b->data, (MPI_Count)bytes, rbuf, rcount, rdt);
    return rc;
}

int fy_rma_ho_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
                  void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr)
{
    uint64_t n = (uint64_t)dt->size;
    if (!usable(w, target, n) || n > 16 || !dt->builtin || dt->pair)
        return -EAGAIN;
    struct fy_rma_box *b = fill(w, target, FY_RMA_AM_CAS, taddr, n);
    b->type = (int32_t)dt->handle;
    fy_copy(b->data, obuf, n);
    fy_copy(b->data + n, cbuf, n);
    post(w, target, b);
    int rc = wait_box(w, target);
    if (!rc)
        fy_copy(rbuf, b->data, n);
    return rc;
}
