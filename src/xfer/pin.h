/* SPDX-License-Identifier: MIT */
/* The pin-down (registration) cache of seed 004: memory registered for a
 * network or any mechanism that pins is cached by address range and reused,
 * released lazily, bounded by separate send and receive budgets, with a
 * delayed queue for operations that cannot pin now; registrations of memory
 * that is unmapped or freed are invalidated (see pin.c's header for how). */
#ifndef FY_XFER_PIN_H
#define FY_XFER_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which budget a registration counts against. A registration serves only
 * acquires of its own direction: a send never holds receive budget and the
 * reverse (the seed's separate control of send and receive pin-down areas,
 * which keeps one send and one receive pinnable whatever the other side
 * holds). */
enum fy_pin_dir {
    FY_PIN_SEND,
    FY_PIN_RECV,
    FY_PIN_NDIRS,
};

/* How a user of the cache pins memory. reg pins [addr, addr+len) (always
 * page-aligned here) for the uses of direction dir (a network channel
 * grants its peers remote reads of send registrations and remote writes
 * into receive ones, never both) and stores the provider's handle (e.g. a
 * struct fid_mr *); dereg undoes it. Both return 0 or -errno. They are called
 * with no cache lock held, possibly from the thread that calls munmap/free (an
 * invalidation) or from release; they must not call back into the cache.
 * Allocations and unmaps they make themselves are not treated as
 * invalidations. */
struct fy_pin_ops {
    const char *name; /* for logs and FERRY_STATS */
    int (*reg)(void *ctx, void *addr, size_t len, enum fy_pin_dir dir,
               void **handle_out);
    int (*dereg)(void *ctx, void *addr, size_t len, void *handle);
};

/* The laboratory's and tests' pinner: mlock/munlock (real pinning on this
 * machine: it faults the pages in and counts against RLIMIT_MEMLOCK; the
 * handle is unused). ctx is unused. mlock does not nest: munlock of a range
 * that another registration also covers unlocks it for both; the cache's
 * budget counts registrations, an upper bound of what is really locked. */
extern const struct fy_pin_ops fy_pin_mlock_ops;

/* Budgets in bytes of registered (page-rounded) memory per direction;
 * 0 means unbounded. */
struct fy_pin_limits {
    uint64_t max[FY_PIN_NDIRS];
};

/* FERRY_PIN_SEND_MAX / FERRY_PIN_RECV_MAX when set, else half of
 * FERRY_PIN_MAX each (default 64M: 32 MiB per direction). Needs
 * fy_env_load(). */
void fy_pin_limits_from_env(struct fy_pin_limits *out);

struct fy_pin_cache;
struct fy_pin_entry; /* one registration; opaque, see the accessors */

/* Create a cache over ops/ctx with these budgets (NULL: from the
 * environment). Returns 0, -EINVAL (ops without reg/dereg) or -ENOMEM.
 * The cache caches registrations only when invalidation works in this
 * process (fy_pin_hooks_active); otherwise every release deregisters at
 * once (always sound, never reused), as FERRY_PIN_CACHE=0 asks too. */
int fy_pin_cache_create(const struct fy_pin_ops *ops, void *ctx,
                        const struct fy_pin_limits *lim,
                        struct fy_pin_cache **cache_out);
/* Calls into a provider that may free or unmap memory while it holds a
 * lock of its own (libfabric's progress inside fi_cq_read) go between
 * these: an invalidation they cause takes its registrations out of the
 * cache at once (never found again) but deregisters them at the outermost
 * fy_pin_defer_end, once the provider returned - deregistering inside
 * would take that lock again and hang. They nest (per thread). */
void fy_pin_defer_begin(void);
void fy_pin_defer_end(void);

/* Deregister every registration and free the cache. Entries still
 * acquired are deregistered too (logged: a caller bug); waiters still
 * queued are dropped (done never called). NULL is a no-op. */
void fy_pin_cache_destroy(struct fy_pin_cache *cache);

/* Get a registration of direction dir covering [addr, addr+len), len > 0:
 *  - hit: a valid cached registration of that direction covers the range;
 *  - miss: register the page-rounded range, merged with unused cached
 *    registrations of that direction it overlaps (shares a page with), evicting
 *    unused registrations least recently released first when the budget
 *    needs room.
 * Returns 0 and *entry_out (hold it until release), or
 *  -EAGAIN  the direction's budget is held by acquired registrations, or
 *           waiters of this direction are already queued (FIFO: a new
 *           acquire does not overtake them): retry later, or use
 *           fy_pin_cache_acquire_wait, which queues instead;
 *  -E2BIG   the page-rounded range exceeds the direction's whole budget
 *           (it could never succeed): pin and move it in pieces of at most
 *           fy_pin_cache_chunk_max bytes;
 *  -EINVAL  NULL cache/addr/entry_out, len 0, bad dir, address overflow;
 *  -errno   from ops->reg (e.g. -ENOMEM, -EPERM from mlock).
 * Thread safe. */
int fy_pin_cache_acquire(struct fy_pin_cache *cache, const void *addr,
                         size_t len, enum fy_pin_dir dir,
                         struct fy_pin_entry **entry_out);
/* Done with an acquired registration. It stays registered and cached
 * (lazy) until evicted or invalidated; if it was invalidated meanwhile it
 * is deregistered now. Then queued waiters of its direction are retried
 * (their done called in this thread, after the cache lock is dropped).
 * Thread safe. */
void fy_pin_cache_release(struct fy_pin_cache *cache,
                          struct fy_pin_entry *entry);

/* What an acquired entry is: the registered (page-aligned) range, which
 * covers what was asked, and the handle ops->reg stored. Valid until
 * release. */
void *fy_pin_entry_addr(const struct fy_pin_entry *entry);
size_t fy_pin_entry_len(const struct fy_pin_entry *entry);
void *fy_pin_entry_handle(const struct fy_pin_entry *entry);

/* The largest len an acquire of dir can ever satisfy (at a page-aligned
 * address; one page less otherwise): the budget, or SIZE_MAX unbounded. */
size_t fy_pin_cache_chunk_max(const struct fy_pin_cache *cache,
                              enum fy_pin_dir dir);

/* ---- the delayed queue ---------------------------------------------------
 * An operation that may have to wait for budget embeds a waiter and asks
 * with fy_pin_cache_acquire_wait: either it gets its registration now, or
 * the waiter is queued (FIFO per direction, checked and queued in the same
 * critical section as the failed attempt, so no wake-up is lost). Whenever
 * budget of a direction may have become available (a release, an
 * invalidation, an eviction), the cache retries the queued acquires itself
 * in order, outside its lock, in the thread that freed the budget, and
 * calls each waiter's done exactly once with the entry (err 0) or the
 * error (never -EAGAIN); the head that still does not fit keeps its place.
 * done may acquire, release or queue again (not cancel itself, nor
 * destroy the cache). */
struct fy_pin_waiter;
typedef void (*fy_pin_done_fn)(struct fy_pin_waiter *w,
                               struct fy_pin_entry *entry, int err);
struct fy_pin_waiter {
    fy_pin_done_fn done; /* set by the caller */
    void *arg;           /* for the caller */
    /* Owned by the cache while queued (set by acquire_wait): */
    struct fy_pin_waiter *next;
    const void *addr;
    size_t len;
    uint32_t dir;
    bool queued;
};
/* As fy_pin_cache_acquire, but instead of -EAGAIN queues w (w->done set)
 * and returns -EINPROGRESS; counts a delayed operation. w must stay valid
 * until done is called or fy_pin_cache_cancel removed it. Other errors are
 * returned at once and w is not queued. Thread safe. */
int fy_pin_cache_acquire_wait(struct fy_pin_cache *cache, const void *addr,
                              size_t len, enum fy_pin_dir dir,
                              struct fy_pin_waiter *w,
                              struct fy_pin_entry **entry_out);
/* Remove w if still queued (done is then never called); returns whether
 * it was. Thread safe. */
bool fy_pin_cache_cancel(struct fy_pin_cache *cache, struct fy_pin_waiter *w);

/* ---- counters ------------------------------------------------------------ */
struct fy_pin_stats {
    uint64_t hits, misses;         /* acquires served from the cache / not */
    uint64_t evictions;            /* unused registrations dropped for room */
    uint64_t invalidations;        /* registrations dropped: memory went away */
    uint64_t merges;               /* cached registrations folded into a miss */
    uint64_t delayed;              /* acquires queued by acquire_wait */
    uint64_t again;                /* acquires that returned -EAGAIN */
    uint64_t pinned[FY_PIN_NDIRS]; /* bytes registered now */
    uint64_t pinned_hw[FY_PIN_NDIRS]; /* high-water of pinned */
    uint64_t entries;                 /* registrations now (used or not) */
};
void fy_pin_cache_stats(const struct fy_pin_cache *cache,
                        struct fy_pin_stats *out);
/* One "ferry-stats rank=<r> group=pin ..." line on stderr for a cache that
 * was used (any acquire), under FERRY_STATS. */
void fy_pin_cache_stats_print(const struct fy_pin_cache *cache, int rank);
/* The same line for every live cache that was used (the library's
 * FERRY_STATS output calls it before the channels finalize). */
void fy_pin_stats_print_all(int rank);

/* ---- invalidation ----------------------------------------------------------
 * Drop every cached registration (of every cache) overlapping
 * [addr, addr+len): unused ones are deregistered now, acquired ones are
 * never handed out again and deregistered at their release. Called by the
 * interposed munmap/mremap/madvise/brk/sbrk/mmap(MAP_FIXED)/free/realloc
 * (src/xfer/pin_hooks.c) before the memory goes away, and usable by a
 * provider's own memory notifier. Async-signal-unsafe; thread safe. */
void fy_pin_invalidate(const void *addr, size_t len);

/* Whether any registration is cached in this process (one relaxed load):
 * the interposers' fast path, before they look at the memory at all. */
bool fy_pin_any_cached(void);

/* Whether the interposed functions are the ones the whole process calls
 * (libmpi linked by the program, not dlopen()ed after libc): only then can
 * the cache keep registrations after release. */
bool fy_pin_hooks_active(void);

#endif /* FY_XFER_PIN_H */
