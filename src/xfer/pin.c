/* SPDX-License-Identifier: MIT */
/* The pin-down (registration) cache of seed 004: registrations keyed by
 * page-aligned address range per direction, reused on a hit, released
 * lazily (unused ones evicted least recently released first), bounded by a
 * send and a receive budget, with a FIFO delayed queue per direction, and
 * invalidated when the memory under them goes away.
 *
 * How invalidation works (why interposition): a registration of memory
 * that was unmapped, and perhaps mapped again at the same address, must
 * never be handed out again. Linux tells user space nothing when memory is
 * unmapped (userfaultfd's unmap events need a monitor thread and block the
 * unmapping thread until it answers), glibc 2.36 has no malloc/morecore
 * hooks any more, and comparing a page's identity before reuse is unsound
 * for mlock: unlike a NIC registration it holds no page reference, so the
 * page allocator may hand the very same frame to a new mapping at the same
 * address. So libmpi exports interposers of the calls that take memory
 * away - munmap, mremap, madvise(DONTNEED/FREE/REMOVE), mmap(MAP_FIXED),
 * brk/sbrk, and free/realloc (glibc unmaps large blocks and trims its heap
 * internally, through calls no interposer sees) - which call
 * fy_pin_invalidate and then the real function (src/xfer/pin_hooks.c; the
 * version script exports them, see src/libmpi.map). Invalidating every
 * registration overlapping a freed block is enough for malloc memory:
 * glibc only gives back pages that hold no live block, and every page of a
 * registration holds part of a buffer it was made for, so such a page's
 * registration was invalidated when that buffer was freed.
 * The interposers reach the whole process only when libmpi comes before
 * libc in the global symbol scope (a program linked with it); when libmpi
 * is dlopen()ed (Python) or a sanitizer's runtime interposes first, they
 * do not, fy_pin_hooks_active() says so, and the cache then deregisters at
 * every release: never stale, never reused. Not covered (a registration
 * of such memory could go stale): unmaps made inside libc or ld.so
 * without a call through the global scope - the stacks of exited threads,
 * dlclose() of a library whose static data was registered - shmdt(), raw
 * syscalls, and an allocator linked into the program itself.
 *
 * Invariants (all under cache->lock):
 *  - an entry is in its direction's treap iff it is valid (not stale); only
 *    valid, registered entries with refs == 0 are on the LRU list;
 *  - pinned[d] counts the bytes of every entry of d that is registered,
 *    being registered, or being deregistered (so the budget bounds what the
 *    provider really holds: victims are deregistered before a new range is
 *    registered, and their bytes leave pinned[d] only after that);
 *  - a stale entry is off every list and is deregistered by whoever drops
 *    its last reference (release, or the invalidation if refs == 0);
 *  - ops are called without the lock; the thread-local depth pin_in_ops
 *    makes the interposers ignore what ops do themselves;
 *  - inside fy_pin_defer_begin/end (a provider call that may free memory
 *    under a lock of its own) an invalidation unlinks and marks its
 *    entries at once but queues the idle ones on the cache's deferred
 *    list, deregistered by the outermost fy_pin_defer_end of any thread
 *    or by fy_pin_cache_destroy. */
#define _GNU_SOURCE
#include "xfer/pin.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/util.h"

struct fy_pin_entry {
    struct fy_pin_entry *left, *right; /* direction's interval treap */
    uintptr_t maxend;                  /* largest end in this subtree */
    uint32_t prio;                     /* treap heap key (random) */
    struct fy_pin_entry *next; /* a collected set: drops, query results */
    struct fy_pin_entry *lru_prev, *lru_next; /* unused entries, oldest first */
    uintptr_t base;
    size_t len;
    void *handle;
    uint32_t refs;
    uint8_t dir;
    bool stale;       /* invalidated: never handed out again */
    bool registering; /* ops->reg in progress: not a hit yet */
};

struct fy_pin_dirstate {
    struct fy_pin_entry *root;                /* valid entries, by address */
    struct fy_pin_entry *lru_head, *lru_tail; /* unused valid entries */
    uint64_t max;                             /* 0: unbounded */
    uint64_t pinned, pinned_hw;
    uint64_t unused; /* bytes of the LRU list */
    struct fy_pin_waiter *wq_head, *wq_tail;
    bool kicking;    /* a thread runs this direction's retry loop */
    bool kick_again; /* budget freed while it ran: look once more */
};

struct fy_pin_cache {
    pthread_mutex_t lock;
    const struct fy_pin_ops *ops;
    void *ctx;
    bool caching; /* keep registrations after release */
    struct fy_pin_cache *gnext;
    struct fy_pin_dirstate d[FY_PIN_NDIRS];
    uint64_t hits, misses, evictions, invalidations, merges, delayed, again;
    uint64_t entries;
    uint32_t rng;                  /* treap priorities */
    struct fy_pin_entry *deferred; /* stale, idle, not yet deregistered */
};

/* Every live cache, for fy_pin_invalidate. pin_live counts entries of all
 * caches: the interposers' fast path reads it relaxed, which is enough:
 * memory one thread unmaps while another registers it is a data race of
 * the program, and within one thread the count is sequenced. */
/* A reader-preferring rwlock (glibc's default): invalidations read the
 * list of caches, so they never wait for one another. That matters when
 * an invalidation deregisters through a provider that holds a lock of its
 * own while another of its threads frees memory (a second invalidation):
 * a mutex here would deadlock them. Readers may nest (a waiter's done,
 * called back from an invalidation, may free memory); create and destroy
 * write (so a done callback must not destroy a cache). */
static pthread_rwlock_t pin_global = PTHREAD_RWLOCK_INITIALIZER;
static struct fy_pin_cache *pin_caches;
static _Atomic uint64_t pin_live;
/* The hull [pin_lo, pin_hi) of every range ever registered: a free or an
 * unmap outside it needs no lock. It only grows (shrinking it safely would
 * need the lock the fast path avoids); relaxed as pin_live. */
static _Atomic uintptr_t pin_lo = UINTPTR_MAX, pin_hi;
static _Thread_local int pin_in_ops;
static _Thread_local int pin_defer;
static _Atomic uint64_t pin_deferred; /* entries on deferred lists */

/* Defined by src/xfer/pin_hooks.c where it is linked (libmpi, the unit
 * test, ferry-bench); absent from the static archive other programs use. */
extern const int fy_pin_hooks_linked __attribute__((weak));
/* The interposer behind a name (its own address, not the global scope's). */
extern const void *fy_pin_hooks_self(const char *name) __attribute__((weak));

static size_t pin_page(void)
{
    /* Relaxed: every thread stores the same value. */
    static _Atomic size_t page;
    size_t p = atomic_load_explicit(&page, memory_order_relaxed);
    if (!p) {
        p = (size_t)sysconf(_SC_PAGESIZE);
        atomic_store_explicit(&page, p, memory_order_relaxed);
    }
    return p;
}

/* ---- lists --------------------------------------------------------------- */

/* An interval treap per direction: a binary search tree on (base, address
 * of the entry), heap-ordered on random priorities (expected depth
 * O(log n)), each node knowing the largest end in its subtree, so that the
 * entries overlapping a range are found in O(log n + k): lookups on every
 * acquire and on every interposed free stay cheap with thousands of
 * registrations cached. */
static bool t_less(const struct fy_pin_entry *x, const struct fy_pin_entry *y)
{
    return x->base < y->base || (x->base == y->base && x < y);
}

static void t_fix(struct fy_pin_entry *n)
{
    uintptr_t m = n->base + n->len;
    if (n->left && n->left->maxend > m)
        m = n->left->maxend;
    if (n->right && n->right->maxend > m)
        m = n->right->maxend;
    n->maxend = m;
}

static struct fy_pin_entry *t_insert(struct fy_pin_entry *root,
                                     struct fy_pin_entry *n)
{
    if (!root) {
        n->left = n->right = NULL;
        t_fix(n);
        return n;
    }
    if (t_less(n, root)) {
        root->left = t_insert(root->left, n);
        if (root->left->prio > root->prio) { /* rotate right */
            struct fy_pin_entry *l = root->left;
            root->left = l->right;
            t_fix(root);
            l->right = root;
            root = l;
        }
    } else {
        root->right = t_insert(root->right, n);
        if (root->right->prio > root->prio) { /* rotate left */
            struct fy_pin_entry *r = root->right;
            root->right = r->left;
            t_fix(root);
            r->left = root;
            root = r;
        }
    }
    t_fix(root);
    return root;
}

/* Join two treaps, every key of x below every key of y. */
static struct fy_pin_entry *t_join(struct fy_pin_entry *x,
                                   struct fy_pin_entry *y)
{
    if (!x)
        return y;
    if (!y)
        return x;
    if (x->prio > y->prio) {
        x->right = t_join(x->right, y);
        t_fix(x);
        return x;
    }
    y->left = t_join(x, y->left);
    t_fix(y);
    return y;
}

static struct fy_pin_entry *t_delete(struct fy_pin_entry *root,
                                     struct fy_pin_entry *n)
{
    if (!root)
        return NULL; /* not in the tree: cannot happen */
    if (root == n)
        return t_join(n->left, n->right);
    if (t_less(n, root))
        root->left = t_delete(root->left, n);
    else
        root->right = t_delete(root->right, n);
    t_fix(root);
    return root;
}

/* Push every entry overlapping [a, b) onto *list (through next). */
static void t_overlaps(struct fy_pin_entry *n, uintptr_t a, uintptr_t b,
                       struct fy_pin_entry **list)
{
    while (n && n->maxend > a) {
        t_overlaps(n->left, a, b, list);
        if (n->base >= b)
            return;
        if (n->base + n->len > a) {
            n->next = *list;
            *list = n;
        }
        n = n->right;
    }
}

static void list_add(struct fy_pin_cache *c, struct fy_pin_dirstate *ds,
                     struct fy_pin_entry *e)
{
    c->rng = c->rng * 1103515245u + 12345u;
    e->prio = c->rng ^ (uint32_t)((uintptr_t)e >> 4);
    e->next = NULL;
    ds->root = t_insert(ds->root, e);
    uintptr_t lo = atomic_load_explicit(&pin_lo, memory_order_relaxed);
    while (e->base < lo && !atomic_compare_exchange_weak_explicit(
                               &pin_lo, &lo, e->base, memory_order_relaxed,
                               memory_order_relaxed))
        ;
    uintptr_t hi = atomic_load_explicit(&pin_hi, memory_order_relaxed);
    while (e->base + e->len > hi &&
           !atomic_compare_exchange_weak_explicit(
               &pin_hi, &hi, e->base + e->len, memory_order_relaxed,
               memory_order_relaxed))
        ;
}

static void list_del(struct fy_pin_dirstate *ds, struct fy_pin_entry *e)
{
    ds->root = t_delete(ds->root, e);
    e->left = e->right = e->next = NULL;
}

static void lru_push(struct fy_pin_dirstate *ds, struct fy_pin_entry *e)
{
    e->lru_next = NULL;
    e->lru_prev = ds->lru_tail;
    if (ds->lru_tail)
        ds->lru_tail->lru_next = e;
    else
        ds->lru_head = e;
    ds->lru_tail = e;
    ds->unused += e->len;
}

static void lru_del(struct fy_pin_dirstate *ds, struct fy_pin_entry *e)
{
    if (e->lru_prev)
        e->lru_prev->lru_next = e->lru_next;
    else
        ds->lru_head = e->lru_next;
    if (e->lru_next)
        e->lru_next->lru_prev = e->lru_prev;
    else
        ds->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
    ds->unused -= e->len;
}

/* Take a valid entry off every list (the caller deregisters or marks it). */
static void entry_unlink(struct fy_pin_cache *c, struct fy_pin_entry *e)
{
    struct fy_pin_dirstate *ds = &c->d[e->dir];
    list_del(ds, e);
    if (e->refs == 0 && !e->registering)
        lru_del(ds, e);
}

/* ---- ops, called without the lock ---------------------------------------- */

static int ops_reg(struct fy_pin_cache *c, struct fy_pin_entry *e)
{
    pin_in_ops++;
    int rc = c->ops->reg(c->ctx, (void *)e->base, e->len,
                         (enum fy_pin_dir)e->dir, &e->handle);
    pin_in_ops--;
    return rc;
}

/* Deregister a chain (linked through next) of entries already off every
 * list, free them, and give their bytes back to the budget; then retry the
 * waiters of the directions that got room. */
static void pin_kick(struct fy_pin_cache *c, int dir);

static void drop_chain(struct fy_pin_cache *c, struct fy_pin_entry *chain)
{
    uint64_t freed[FY_PIN_NDIRS] = {0, 0};
    uint64_t n = 0;
    for (struct fy_pin_entry *e = chain, *nx; e; e = nx) {
        nx = e->next;
        pin_in_ops++;
        int rc = c->ops->dereg(c->ctx, (void *)e->base, e->len, e->handle);
        pin_in_ops--;
        if (rc < 0)
            FY_DEBUG("pin: %s dereg of %zu bytes at %#lx: %d", c->ops->name,
                     e->len, (unsigned long)e->base, rc);
        freed[e->dir] += e->len;
        n++;
        pin_in_ops++; /* our own free is no invalidation */
        free(e);
        pin_in_ops--;
    }
    if (!n)
        return;
    pthread_mutex_lock(&c->lock);
    for (int d = 0; d < FY_PIN_NDIRS; d++)
        c->d[d].pinned -= freed[d];
    c->entries -= n;
    pthread_mutex_unlock(&c->lock);
    atomic_fetch_sub_explicit(&pin_live, n, memory_order_relaxed);
    for (int d = 0; d < FY_PIN_NDIRS; d++)
        if (freed[d])
            pin_kick(c, d);
}

/* ---- the mlock pinner ---------------------------------------------------- */

static int mlock_reg(void *ctx, void *addr, size_t len, enum fy_pin_dir dir,
                     void **handle_out)
{
    (void)ctx;
    (void)dir;
    if (mlock(addr, len) != 0)
        return -errno;
    *handle_out = NULL;
    return 0;
}

static int mlock_dereg(void *ctx, void *addr, size_t len, void *handle)
{
    (void)ctx;
    (void)handle;
    return munlock(addr, len) != 0 ? -errno : 0;
}

const struct fy_pin_ops fy_pin_mlock_ops = {
    .name = "mlock",
    .reg = mlock_reg,
    .dereg = mlock_dereg,
};

/* ---- limits, hooks, create/destroy --------------------------------------- */

void fy_pin_limits_from_env(struct fy_pin_limits *out)
{
    long long all = fy_env_int(FY_ENV_PIN_MAX);
    long long half = all > 0 ? all / 2 : 0;
    if (all > 0 && half == 0)
        half = 1;
    out->max[FY_PIN_SEND] = fy_env[FY_ENV_PIN_SEND_MAX].from_env
                                ? (uint64_t)fy_env_int(FY_ENV_PIN_SEND_MAX)
                                : (uint64_t)half;
    out->max[FY_PIN_RECV] = fy_env[FY_ENV_PIN_RECV_MAX].from_env
                                ? (uint64_t)fy_env_int(FY_ENV_PIN_RECV_MAX)
                                : (uint64_t)half;
}

bool fy_pin_hooks_active(void)
{
    if (&fy_pin_hooks_linked == NULL || !fy_pin_hooks_self)
        return false;
    /* The interposers define these names; the process calls ours only if
     * the global scope resolves the names to them. */
    static const char *const names[] = {"munmap", "madvise", "free"};
    for (size_t i = 0; i < FY_ARRAY_LEN(names); i++) {
        const void *mine = fy_pin_hooks_self(names[i]);
        if (!mine && i == 2)
            break; /* a ThreadSanitizer build does not interpose free */
        if (!mine || dlsym(RTLD_DEFAULT, names[i]) != mine)
            return false;
    }
    return true;
}

int fy_pin_cache_create(const struct fy_pin_ops *ops, void *ctx,
                        const struct fy_pin_limits *lim,
                        struct fy_pin_cache **cache_out)
{
    if (!ops || !ops->reg || !ops->dereg || !cache_out)
        return -EINVAL;
    struct fy_pin_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    struct fy_pin_limits envlim;
    if (!lim) {
        fy_pin_limits_from_env(&envlim);
        lim = &envlim;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->ops = ops;
    c->ctx = ctx;
    for (int d = 0; d < FY_PIN_NDIRS; d++)
        c->d[d].max = lim->max[d];
    c->caching = fy_env_int(FY_ENV_PIN_CACHE) != 0 && fy_pin_hooks_active();
    if (!c->caching)
        FY_DEBUG("pin: %s cache deregisters at every release (%s)", ops->name,
                 fy_env_int(FY_ENV_PIN_CACHE) ? "invalidation hooks inactive"
                                              : "FERRY_PIN_CACHE=0");
    pthread_rwlock_wrlock(&pin_global);
    c->gnext = pin_caches;
    pin_caches = c;
    pthread_rwlock_unlock(&pin_global);
    *cache_out = c;
    return 0;
}

/* Take c's deferred entries (its lock held), to be dropped by the caller. */
static struct fy_pin_entry *deferred_take(struct fy_pin_cache *c)
{
    struct fy_pin_entry *chain = c->deferred;
    uint64_t n = 0;
    for (struct fy_pin_entry *e = chain; e; e = e->next)
        n++;
    c->deferred = NULL;
    atomic_fetch_sub_explicit(&pin_deferred, n, memory_order_relaxed);
    return chain;
}

void fy_pin_cache_destroy(struct fy_pin_cache *c)
{
    if (!c)
        return;
    pthread_rwlock_wrlock(&pin_global);
    for (struct fy_pin_cache **pp = &pin_caches; *pp; pp = &(*pp)->gnext)
        if (*pp == c) {
            *pp = c->gnext;
            break;
        }
    pthread_rwlock_unlock(&pin_global);
    struct fy_pin_entry *chain = NULL;
    pthread_mutex_lock(&c->lock);
    for (int d = 0; d < FY_PIN_NDIRS; d++) {
        struct fy_pin_dirstate *ds = &c->d[d];
        while (ds->root) {
            struct fy_pin_entry *e = ds->root;
            if (e->refs)
                FY_WARN("pin: %s cache destroyed with %zu bytes at %#lx "
                        "still acquired",
                        c->ops->name, e->len, (unsigned long)e->base);
            entry_unlink(c, e);
            e->next = chain;
            chain = e;
        }
        ds->wq_head = ds->wq_tail = NULL;
    }
    struct fy_pin_entry *deferred = deferred_take(c);
    pthread_mutex_unlock(&c->lock);
    drop_chain(c, chain);
    drop_chain(c, deferred);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- acquire ------------------------------------------------------------- */

static int range_of(const void *addr, size_t len, uintptr_t *a_out,
                    uintptr_t *b_out)
{
    uintptr_t p = (uintptr_t)addr, pg = pin_page();
    if (!addr || len == 0 || len > UINTPTR_MAX - p ||
        p + len > UINTPTR_MAX - pg)
        return -EINVAL;
    *a_out = p & ~(pg - 1);
    *b_out = (p + len + pg - 1) & ~(pg - 1);
    return 0;
}

static bool fits(const struct fy_pin_dirstate *ds, uint64_t need,
                 uint64_t freed)
{
    return ds->max == 0 || ds->pinned - freed + need <= ds->max;
}

/* The unused entries lying wholly inside [ua, ub), linked through next
 * into *covered_out; returns their bytes. */
static uint64_t collect_covered(struct fy_pin_dirstate *ds, uint64_t ua,
                                uint64_t ub, struct fy_pin_entry **covered_out)
{
    struct fy_pin_entry *cand = NULL, *covered = NULL;
    uint64_t merged = 0;
    t_overlaps(ds->root, ua, ub, &cand);
    for (struct fy_pin_entry *e = cand, *nx; e; e = nx) {
        nx = e->next;
        if (e->refs || e->registering || e->base < ua || e->base + e->len > ub)
            continue;
        e->next = covered;
        covered = e;
        merged += e->len;
    }
    *covered_out = covered;
    return merged;
}

/* The attempt itself. fifo: fail with -EAGAIN while waiters are queued
 * (new arrivals); the retry loop passes false for the queue's head.
 * Called and returns with the lock held; drops it around ops. */
static int acquire_locked(struct fy_pin_cache *c, uintptr_t a, uintptr_t b,
                          enum fy_pin_dir dir, bool fifo,
                          struct fy_pin_entry **entry_out)
{
    struct fy_pin_dirstate *ds = &c->d[dir];
    if (ds->max && b - a > ds->max)
        return -E2BIG;
    if (c->caching) {
        struct fy_pin_entry *cand = NULL;
        t_overlaps(ds->root, a, a + 1, &cand);
        for (struct fy_pin_entry *e = cand; e; e = e->next) {
            if (e->registering || e->base + e->len < b)
                continue;
            if (e->refs++ == 0)
                lru_del(ds, e);
            c->hits++;
            *entry_out = e;
            return 0;
        }
    }
    if (fifo && (ds->wq_head || ds->kicking)) {
        c->again++;
        return -EAGAIN;
    }
    /* Miss. Merge with unused registrations that overlap the range (share
     * a page), if the union still fits in the budget once they are gone.
     * Ranges that merely touch stay apart: a program walking consecutive
     * buffers would otherwise re-register an ever longer union. */
    uintptr_t ua = a, ub = b;
    if (c->caching) {
        struct fy_pin_entry *cand = NULL;
        t_overlaps(ds->root, a, b, &cand);
        for (struct fy_pin_entry *e = cand; e; e = e->next) {
            if (e->refs || e->registering)
                continue;
            uintptr_t na = FY_MIN(ua, e->base);
            uintptr_t nb = FY_MAX(ub, e->base + e->len);
            if (ds->max && nb - na > ds->max)
                continue;
            ua = na;
            ub = nb;
        }
    }
    uint64_t need = ub - ua;
    /* Every unused entry inside the range goes (the new one covers it). */
    struct fy_pin_entry *covered = NULL;
    uint64_t merged = 0;
    if (c->caching)
        merged = collect_covered(ds, ua, ub, &covered);
    /* Room: with every unused entry evicted at most; if the merged union
     * does not fit even so, try the range alone. */
    if (!fits(ds, need, ds->unused) && (ua != a || ub != b)) {
        ua = a;
        ub = b;
        need = b - a;
        merged = collect_covered(ds, ua, ub, &covered);
    }
    if (!fits(ds, need, ds->unused)) {
        c->again++;
        return -EAGAIN;
    }
    struct fy_pin_entry *ne = calloc(1, sizeof(*ne));
    if (!ne)
        return -ENOMEM;
    /* Victims: the covered entries (merged), then the least recently
     * released others until the new range fits. */
    struct fy_pin_entry *chain = NULL;
    for (struct fy_pin_entry *e = covered, *nx; e; e = nx) {
        nx = e->next;
        c->merges++;
        entry_unlink(c, e);
        e->next = chain;
        chain = e;
    }
    uint64_t freed = merged;
    while (!fits(ds, need, freed) && ds->lru_head) {
        struct fy_pin_entry *e = ds->lru_head;
        c->evictions++;
        freed += e->len;
        entry_unlink(c, e);
        e->next = chain;
        chain = e;
    }
    ne->base = ua;
    ne->len = need;
    ne->dir = (uint8_t)dir;
    ne->refs = 1;
    ne->registering = true;
    list_add(c, ds, ne);
    ds->pinned += need; /* victims still count until deregistered */
    c->entries++;
    c->misses++;
    atomic_fetch_add_explicit(&pin_live, 1, memory_order_relaxed);
    pthread_mutex_unlock(&c->lock);

    drop_chain(c, chain); /* victims go before the new range is pinned */
    int rc = ops_reg(c, ne);

    pthread_mutex_lock(&c->lock);
    ne->registering = false;
    if (rc < 0) {
        if (!ne->stale)
            list_del(ds, ne);
        ds->pinned -= need;
        c->entries--;
        atomic_fetch_sub_explicit(&pin_live, 1, memory_order_relaxed);
        pin_in_ops++;
        free(ne);
        pin_in_ops--;
        FY_DEBUG("pin: %s reg of %zu bytes at %#lx: %d", c->ops->name,
                 (size_t)need, (unsigned long)ua, rc);
        /* Give the budget back to waiters: done by the caller's kick. */
        return rc;
    }
    if (ds->pinned > ds->pinned_hw)
        ds->pinned_hw = ds->pinned;
    *entry_out = ne;
    return 0;
}

int fy_pin_cache_acquire(struct fy_pin_cache *c, const void *addr, size_t len,
                         enum fy_pin_dir dir, struct fy_pin_entry **entry_out)
{
    uintptr_t a, b;
    if (!c || !entry_out || (unsigned)dir >= FY_PIN_NDIRS ||
        range_of(addr, len, &a, &b) != 0)
        return -EINVAL;
    pthread_mutex_lock(&c->lock);
    int rc = acquire_locked(c, a, b, dir, true, entry_out);
    pthread_mutex_unlock(&c->lock);
    if (rc < 0 && rc != -EAGAIN && rc != -E2BIG && rc != -EINVAL)
        pin_kick(c, dir); /* a failed reg gave its reservation back */
    return rc;
}

int fy_pin_cache_acquire_wait(struct fy_pin_cache *c, const void *addr,
                              size_t len, enum fy_pin_dir dir,
                              struct fy_pin_waiter *w,
                              struct fy_pin_entry **entry_out)
{
    uintptr_t a, b;
    if (!c || !entry_out || !w || !w->done || (unsigned)dir >= FY_PIN_NDIRS ||
        range_of(addr, len, &a, &b) != 0)
        return -EINVAL;
    pthread_mutex_lock(&c->lock);
    if (w->queued) {
        pthread_mutex_unlock(&c->lock);
        return -EINVAL;
    }
    int rc = acquire_locked(c, a, b, dir, true, entry_out);
    if (rc == -EAGAIN) {
        struct fy_pin_dirstate *ds = &c->d[dir];
        w->addr = addr;
        w->len = len;
        w->dir = (uint32_t)dir;
        w->queued = true;
        w->next = NULL;
        if (ds->wq_tail)
            ds->wq_tail->next = w;
        else
            ds->wq_head = w;
        ds->wq_tail = w;
        c->delayed++;
        rc = -EINPROGRESS;
    }
    pthread_mutex_unlock(&c->lock);
    if (rc < 0 && rc != -EINPROGRESS && rc != -E2BIG && rc != -EINVAL)
        pin_kick(c, dir);
    return rc;
}

bool fy_pin_cache_cancel(struct fy_pin_cache *c, struct fy_pin_waiter *w)
{
    if (!c || !w)
        return false;
    bool found = false;
    pthread_mutex_lock(&c->lock);
    if (w->queued && w->dir < FY_PIN_NDIRS) {
        struct fy_pin_dirstate *ds = &c->d[w->dir];
        struct fy_pin_waiter *prev = NULL;
        for (struct fy_pin_waiter *x = ds->wq_head; x; prev = x, x = x->next) {
            if (x != w)
                continue;
            if (prev)
                prev->next = x->next;
            else
                ds->wq_head = x->next;
            if (ds->wq_tail == x)
                ds->wq_tail = prev;
            w->queued = false;
            w->next = NULL;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
    /* The next waiter may fit where this one did not. */
    if (found)
        pin_kick(c, (int)w->dir);
    return found;
}

/* Retry dir's queued acquires in order until the head does not fit. One
 * thread at a time runs the loop; another thread that frees budget
 * meanwhile sets kick_again, so the runner looks once more before it
 * stops and no wake-up is lost. */
static void pin_kick(struct fy_pin_cache *c, int dir)
{
    struct fy_pin_dirstate *ds = &c->d[dir];
    pthread_mutex_lock(&c->lock);
    if (ds->kicking) {
        ds->kick_again = true;
        pthread_mutex_unlock(&c->lock);
        return;
    }
    ds->kicking = true;
    for (;;) {
        struct fy_pin_waiter *w = ds->wq_head;
        if (!w) {
            ds->kick_again = false;
            break;
        }
        ds->kick_again = false;
        uintptr_t a, b;
        struct fy_pin_entry *e = NULL;
        int rc = range_of(w->addr, w->len, &a, &b);
        if (rc == 0)
            rc = acquire_locked(c, a, b, (enum fy_pin_dir)dir, false, &e);
        if (rc == -EAGAIN) {
            if (ds->kick_again)
                continue; /* budget freed while we tried */
            break;
        }
        /* The waiter may have been cancelled while the lock was dropped
         * inside acquire_locked (then done must not run). */
        if (!w->queued) {
            if (rc == 0) {
                pthread_mutex_unlock(&c->lock);
                fy_pin_cache_release(c, e);
                pthread_mutex_lock(&c->lock);
            }
            continue;
        }
        ds->wq_head = w->next;
        if (ds->wq_tail == w)
            ds->wq_tail = NULL;
        w->queued = false;
        w->next = NULL;
        pthread_mutex_unlock(&c->lock);
        w->done(w, rc == 0 ? e : NULL, rc);
        pthread_mutex_lock(&c->lock);
    }
    ds->kicking = false;
    pthread_mutex_unlock(&c->lock);
}

/* ---- release ------------------------------------------------------------- */

void fy_pin_cache_release(struct fy_pin_cache *c, struct fy_pin_entry *e)
{
    if (!c || !e)
        return;
    struct fy_pin_dirstate *ds = &c->d[e->dir];
    int dir = e->dir;
    pthread_mutex_lock(&c->lock);
    if (e->refs == 0) {
        pthread_mutex_unlock(&c->lock);
        FY_WARN("pin: release of an entry that is not acquired");
        return;
    }
    if (--e->refs > 0) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    if (!e->stale && c->caching) {
        lru_push(ds, e);
        pthread_mutex_unlock(&c->lock);
        pin_kick(c, dir); /* it is evictable now */
        return;
    }
    if (!e->stale)
        list_del(ds, e);
    pthread_mutex_unlock(&c->lock);
    e->next = NULL;
    drop_chain(c, e);
}

/* ---- accessors and counters ---------------------------------------------- */

void *fy_pin_entry_addr(const struct fy_pin_entry *e)
{
    return (void *)e->base;
}

size_t fy_pin_entry_len(const struct fy_pin_entry *e)
{
    return e->len;
}

void *fy_pin_entry_handle(const struct fy_pin_entry *e)
{
    return e->handle;
}

size_t fy_pin_cache_chunk_max(const struct fy_pin_cache *c, enum fy_pin_dir dir)
{
    if (!c || (unsigned)dir >= FY_PIN_NDIRS)
        return 0;
    uint64_t m = c->d[dir].max;
    return m == 0 || m > SIZE_MAX ? SIZE_MAX : (size_t)m;
}

void fy_pin_cache_stats(const struct fy_pin_cache *cc, struct fy_pin_stats *out)
{
    struct fy_pin_cache *c = (struct fy_pin_cache *)cc;
    memset(out, 0, sizeof(*out));
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    out->hits = c->hits;
    out->misses = c->misses;
    out->evictions = c->evictions;
    out->invalidations = c->invalidations;
    out->merges = c->merges;
    out->delayed = c->delayed;
    out->again = c->again;
    out->entries = c->entries;
    for (int d = 0; d < FY_PIN_NDIRS; d++) {
        out->pinned[d] = c->d[d].pinned;
        out->pinned_hw[d] = c->d[d].pinned_hw;
    }
    pthread_mutex_unlock(&c->lock);
}

void fy_pin_cache_stats_print(const struct fy_pin_cache *c, int rank)
{
    struct fy_pin_stats s;
    fy_pin_cache_stats(c, &s);
    if (!c || !fy_env_int(FY_ENV_STATS) || s.hits + s.misses == 0)
        return;
    fprintf(stderr,
            "ferry-stats rank=%d group=pin ops=%s hits=%llu misses=%llu "
            "evictions=%llu invalidations=%llu delayed=%llu "
            "pinned_send=%llu pinned_recv=%llu hw_send=%llu hw_recv=%llu\n",
            rank, c->ops->name, (unsigned long long)s.hits,
            (unsigned long long)s.misses, (unsigned long long)s.evictions,
            (unsigned long long)s.invalidations, (unsigned long long)s.delayed,
            (unsigned long long)s.pinned[FY_PIN_SEND],
            (unsigned long long)s.pinned[FY_PIN_RECV],
            (unsigned long long)s.pinned_hw[FY_PIN_SEND],
            (unsigned long long)s.pinned_hw[FY_PIN_RECV]);
}

/* ---- invalidation -------------------------------------------------------- */

/* Called by the interposed free, possibly inside a sanitizer's start-up
 * (its dlsym frees), before its shadow memory exists: not instrumented. */
__attribute__((no_sanitize("address", "thread"))) bool fy_pin_any_cached(void)
{
    return atomic_load_explicit(&pin_live, memory_order_relaxed) != 0;
}

void fy_pin_invalidate(const void *addr, size_t len)
{
    if (atomic_load_explicit(&pin_live, memory_order_relaxed) == 0 ||
        pin_in_ops || len == 0)
        return;
    uintptr_t a = (uintptr_t)addr;
    uintptr_t b = len > UINTPTR_MAX - a ? UINTPTR_MAX : a + len;
    if (b <= atomic_load_explicit(&pin_lo, memory_order_relaxed) ||
        a >= atomic_load_explicit(&pin_hi, memory_order_relaxed))
        return;
    pthread_rwlock_rdlock(&pin_global);
    for (struct fy_pin_cache *c = pin_caches; c; c = c->gnext) {
        struct fy_pin_entry *chain = NULL;
        pthread_mutex_lock(&c->lock);
        for (int d = 0; d < FY_PIN_NDIRS; d++) {
            struct fy_pin_dirstate *ds = &c->d[d];
            struct fy_pin_entry *hit = NULL;
            t_overlaps(ds->root, a, b, &hit);
            for (struct fy_pin_entry *e = hit, *nx; e; e = nx) {
                nx = e->next;
                bool idle = e->refs == 0 && !e->registering;
                entry_unlink(c, e);
                e->stale = true;
                c->invalidations++;
                if (idle) {
                    e->next = chain;
                    chain = e;
                }
            }
        }
        if (pin_defer && chain) {
            /* Inside a provider call: deregistered when it returned. */
            uint64_t n = 0;
            struct fy_pin_entry *last = chain;
            for (; last->next; last = last->next)
                n++;
            last->next = c->deferred;
            c->deferred = chain;
            atomic_fetch_add_explicit(&pin_deferred, n + 1,
                                      memory_order_relaxed);
            chain = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        /* Deregistered now, before the caller unmaps. */
        drop_chain(c, chain);
    }
    pthread_rwlock_unlock(&pin_global);
}

void fy_pin_defer_begin(void)
{
    pin_defer++;
}

void fy_pin_defer_end(void)
{
    if (--pin_defer ||
        !atomic_load_explicit(&pin_deferred, memory_order_relaxed))
        return;
    pthread_rwlock_rdlock(&pin_global);
    for (struct fy_pin_cache *c = pin_caches; c; c = c->gnext) {
        pthread_mutex_lock(&c->lock);
        struct fy_pin_entry *chain = deferred_take(c);
        pthread_mutex_unlock(&c->lock);
        drop_chain(c, chain);
    }
    pthread_rwlock_unlock(&pin_global);
}

void fy_pin_stats_print_all(int rank)
{
    pthread_rwlock_rdlock(&pin_global);
    for (struct fy_pin_cache *c = pin_caches; c; c = c->gnext)
        fy_pin_cache_stats_print(c, rank);
    pthread_rwlock_unlock(&pin_global);
}
