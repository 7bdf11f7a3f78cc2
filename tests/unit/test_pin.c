/* SPDX-License-Identifier: MIT */
/* The pin-down cache (src/xfer/pin.c): hits, misses, LRU eviction, the
 * per-direction budgets, merging of overlapping ranges, invalidation by
 * munmap/madvise/free/mmap(MAP_FIXED) (a new mapping at the same address is
 * a miss, never the stale registration), the delayed queue, bad arguments,
 * many threads whose transfers need more pinned memory than the budgets
 * hold (they complete through the delayed queue), and the real mlock
 * pinner. Most checks use a counting pinner, so budgets are logical. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"
#include "xfer/pin.h"

static size_t pg;

/* ---- a counting pinner --------------------------------------------------- */
struct fake {
    _Atomic int regs, deregs;
    _Atomic int dereg_unmapped; /* dereg of memory already gone: a bug */
    _Atomic uintptr_t next_handle;
    _Atomic uintptr_t last_dereg;
};

static int fake_reg(void *ctx, void *addr, size_t len, enum fy_pin_dir dir,
                    void **handle_out)
{
    (void)dir;
    struct fake *f = ctx;
    if ((uintptr_t)addr % pg || len % pg)
        return -EINVAL;
    f->regs++;
    *handle_out = (void *)(atomic_fetch_add(&f->next_handle, 1) + 1);
    return 0;
}

static int fake_dereg(void *ctx, void *addr, size_t len, void *handle)
{
    struct fake *f = ctx;
    (void)handle;
    /* Invalidation must deregister before the memory goes: mincore fails
     * with ENOMEM on an unmapped range. */
    unsigned char vec[64];
    size_t pages = len / pg;
    for (size_t i = 0; i < pages; i += 64) {
        size_t n = FY_MIN(64, pages - i);
        if (mincore((char *)addr + i * pg, n * pg, vec) != 0 && errno == ENOMEM)
            f->dereg_unmapped++;
    }
    f->deregs++;
    f->last_dereg = (uintptr_t)addr;
    return 0;
}

static const struct fy_pin_ops fake_ops = {"fake", fake_reg, fake_dereg};

static struct fy_pin_cache *mk(struct fake *f, uint64_t send, uint64_t recv)
{
    memset(f, 0, sizeof(*f));
    struct fy_pin_limits lim = {{send, recv}};
    struct fy_pin_cache *c = NULL;
    int rc = fy_pin_cache_create(&fake_ops, f, &lim, &c);
    if (rc != 0) {
        printf("# create: %d\n", rc);
        exit(1);
    }
    return c;
}

static char *map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

static struct fy_pin_stats st(struct fy_pin_cache *c)
{
    struct fy_pin_stats s;
    fy_pin_cache_stats(c, &s);
    return s;
}

/* ---- bad arguments ------------------------------------------------------- */
static void test_bad_args(void)
{
    struct fake f;
    struct fy_pin_cache *c = NULL;
    struct fy_pin_ops noreg = {"x", NULL, fake_dereg};
    TAP_EQ_INT(fy_pin_cache_create(NULL, NULL, NULL, &c), -EINVAL,
               "create without ops");
    TAP_EQ_INT(fy_pin_cache_create(&noreg, NULL, NULL, &c), -EINVAL,
               "create without reg");
    c = mk(&f, 4 * pg, 4 * pg);
    char *b = map(pg);
    struct fy_pin_entry *e = NULL;
    TAP_EQ_INT(fy_pin_cache_acquire(c, NULL, 10, FY_PIN_SEND, &e), -EINVAL,
               "acquire NULL addr");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, 0, FY_PIN_SEND, &e), -EINVAL,
               "acquire len 0");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, 10, (enum fy_pin_dir)7, &e), -EINVAL,
               "acquire bad dir");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, 10, FY_PIN_SEND, NULL), -EINVAL,
               "acquire NULL entry_out");
    TAP_EQ_INT(fy_pin_cache_acquire(c, (void *)(UINTPTR_MAX - 10), 100,
                                    FY_PIN_SEND, &e),
               -EINVAL, "acquire wrapping range");
    TAP_EQ_INT(fy_pin_cache_acquire(NULL, b, 10, FY_PIN_SEND, &e), -EINVAL,
               "acquire NULL cache");
    struct fy_pin_waiter w = {0};
    TAP_EQ_INT(fy_pin_cache_acquire_wait(c, b, 10, FY_PIN_SEND, &w, &e),
               -EINVAL, "acquire_wait without done");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, 5 * pg, FY_PIN_SEND, &e), -E2BIG,
               "larger than the whole budget: -E2BIG");
    TAP_EQ_SIZE(fy_pin_cache_chunk_max(c, FY_PIN_SEND), 4 * pg,
                "chunk_max is the budget");
    TAP_OK(!fy_pin_cache_cancel(c, &w), "cancel of a waiter never queued");
    fy_pin_cache_release(c, NULL); /* no-op */
    TAP_EQ_INT(f.regs, 0, "nothing registered by bad calls");
    fy_pin_cache_destroy(c);
    fy_pin_cache_destroy(NULL);
    munmap(b, pg);
}

/* ---- hits, misses, directions -------------------------------------------- */
static void test_hit_miss(void)
{
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 16 * pg, 16 * pg);
    char *b = map(8 * pg);
    struct fy_pin_entry *e1, *e2, *e3, *e4;
    TAP_EQ_INT(fy_pin_cache_acquire(c, b + 100, 2 * pg, FY_PIN_SEND, &e1), 0,
               "first acquire");
    TAP_OK(fy_pin_entry_addr(e1) == b && fy_pin_entry_len(e1) == 3 * pg,
           "registration is the page-rounded range");
    TAP_OK(fy_pin_entry_handle(e1) == (void *)1, "handle from reg");
    fy_pin_cache_release(c, e1);
    TAP_EQ_INT(f.deregs, 0, "release is lazy");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b + pg, pg, FY_PIN_SEND, &e2), 0,
               "acquire of a subrange");
    TAP_OK(e2 == e1, "subrange is a hit on the same registration");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, 3 * pg, FY_PIN_SEND, &e3), 0,
               "second holder of the same range");
    TAP_OK(e3 == e1, "held registrations are shared");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, pg, FY_PIN_RECV, &e4), 0,
               "same memory for receiving");
    TAP_OK(e4 != e1, "a send registration never serves a receive");
    struct fy_pin_stats s = st(c);
    TAP_EQ_INT((int)s.hits, 2, "hits");
    TAP_EQ_INT((int)s.misses, 2, "misses");
    TAP_EQ_INT((int)s.pinned[FY_PIN_SEND], (int)(3 * pg), "send bytes pinned");
    TAP_EQ_INT((int)s.pinned[FY_PIN_RECV], (int)pg, "recv bytes pinned");
    TAP_EQ_INT(f.regs, 2, "two registrations made");
    fy_pin_cache_release(c, e2);
    fy_pin_cache_release(c, e3);
    fy_pin_cache_release(c, e4);
    fy_pin_cache_destroy(c);
    TAP_EQ_INT(f.deregs, 2, "destroy deregisters everything");
    munmap(b, 8 * pg);
}

/* ---- LRU eviction and the budget ----------------------------------------- */
static void test_lru_budget(void)
{
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 4 * pg, 4 * pg);
    char *b = map(16 * pg);
    char *A = b, *B = b + 4 * pg, *C = b + 8 * pg, *D = b + 12 * pg;
    struct fy_pin_entry *ea, *eb, *ec, *ed, *x;
    fy_pin_cache_acquire(c, A, 2 * pg, FY_PIN_SEND, &ea);
    fy_pin_cache_release(c, ea);
    fy_pin_cache_acquire(c, B, 2 * pg, FY_PIN_SEND, &eb);
    fy_pin_cache_release(c, eb);
    /* A used again: B is now the least recently released. */
    fy_pin_cache_acquire(c, A, 2 * pg, FY_PIN_SEND, &x);
    TAP_OK(x == ea, "A is a hit");
    fy_pin_cache_release(c, x);
    TAP_EQ_INT(fy_pin_cache_acquire(c, C, 2 * pg, FY_PIN_SEND, &ec), 0,
               "C fits after an eviction");
    TAP_OK(f.last_dereg == (uintptr_t)B, "the LRU victim is B");
    struct fy_pin_stats s = st(c);
    TAP_EQ_INT((int)s.evictions, 1, "one eviction");
    TAP_OK(s.pinned[FY_PIN_SEND] <= 4 * pg, "within the send budget");
    /* A is unused, C held: D (3 pages) needs A gone and still does not fit
     * beside C; D of 2 pages does. */
    TAP_EQ_INT(fy_pin_cache_acquire(c, D, 3 * pg, FY_PIN_SEND, &ed), -EAGAIN,
               "no room while C is held: -EAGAIN");
    TAP_EQ_INT(f.deregs, 1, "a failed acquire evicts nothing");
    TAP_EQ_INT(fy_pin_cache_acquire(c, D, 2 * pg, FY_PIN_SEND, &ed), 0,
               "D of 2 pages fits after evicting A");
    TAP_EQ_INT((int)st(c).evictions, 2, "two evictions");
    TAP_EQ_INT(fy_pin_cache_acquire(c, B, pg, FY_PIN_RECV, &eb), 0,
               "the receive budget is separate");
    s = st(c);
    TAP_EQ_INT((int)s.pinned_hw[FY_PIN_SEND], (int)(4 * pg), "send high-water");
    TAP_EQ_INT((int)s.again, 1, "one -EAGAIN counted");
    fy_pin_cache_release(c, ec);
    fy_pin_cache_release(c, ed);
    fy_pin_cache_release(c, eb);
    fy_pin_cache_destroy(c);
    TAP_EQ_INT(f.regs, f.deregs, "every registration deregistered");
    munmap(b, 16 * pg);
}

/* ---- merge of overlapping and touching ranges ---------------------------- */
static void test_merge(void)
{
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 8 * pg, 8 * pg);
    char *b = map(8 * pg);
    struct fy_pin_entry *e1, *e2, *e3, *e4;
    fy_pin_cache_acquire(c, b, 2 * pg, FY_PIN_SEND, &e1);
    fy_pin_cache_release(c, e1);
    fy_pin_cache_acquire(c, b + 3 * pg, 2 * pg, FY_PIN_SEND, &e3);
    fy_pin_cache_release(c, e3);
    struct fy_pin_entry *et;
    fy_pin_cache_acquire(c, b + 5 * pg, pg, FY_PIN_SEND, &et);
    fy_pin_cache_release(c, et);
    TAP_EQ_INT(fy_pin_cache_acquire(c, b + pg, 3 * pg, FY_PIN_SEND, &e2), 0,
               "acquire overlapping two cached registrations");
    TAP_OK(fy_pin_entry_addr(e2) == b && fy_pin_entry_len(e2) == 5 * pg,
           "merged into their union");
    struct fy_pin_stats s = st(c);
    TAP_EQ_INT((int)s.merges, 2, "two merged");
    TAP_EQ_INT((int)s.entries, 2, "the touching one stays apart");
    TAP_EQ_INT((int)s.pinned[FY_PIN_SEND], (int)(6 * pg),
               "pinned counts the union once");
    fy_pin_cache_release(c, e2);
    TAP_EQ_INT(fy_pin_cache_acquire(c, b + 4 * pg, 100, FY_PIN_SEND, &e4), 0,
               "acquire inside the union");
    TAP_OK(e4 == e2, "is a hit");
    fy_pin_cache_release(c, e4);
    fy_pin_cache_destroy(c);
    munmap(b, 8 * pg);
}

/* ---- invalidation -------------------------------------------------------- */
static void test_invalidate(void)
{
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 0, 0); /* unbounded */
    TAP_OK(fy_pin_hooks_active(), "interposers active in this program");
    size_t len = 4 * pg;
    char *b = map(len);
    memset(b, 1, len);
    struct fy_pin_entry *e, *e2;
    fy_pin_cache_acquire(c, b, len, FY_PIN_SEND, &e);
    void *h1 = fy_pin_entry_handle(e);
    fy_pin_cache_release(c, e);
    TAP_EQ_INT(munmap(b, len), 0, "munmap works through the interposer");
    TAP_EQ_INT(f.deregs, 1, "munmap deregistered the cached registration");
    TAP_EQ_INT(f.dereg_unmapped, 0, "before the memory went away");
    char *n = mmap(b, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (!TAP_OK(n == b, "new mapping at the same address"))
        exit(1);
    uint64_t miss0 = st(c).misses;
    fy_pin_cache_acquire(c, b, len, FY_PIN_SEND, &e);
    TAP_EQ_INT((int)(st(c).misses - miss0), 1, "acquire again is a miss");
    TAP_OK(fy_pin_entry_handle(e) != h1, "never the stale registration");
    /* Held while unmapped (a program bug, but no reuse either). */
    TAP_EQ_INT(munmap(b, pg), 0, "munmap of part of a held registration");
    TAP_EQ_INT(f.deregs, 1, "a held registration is not deregistered yet");
    n = mmap(b, pg, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    TAP_OK(n == b, "remapped");
    fy_pin_cache_acquire(c, b, pg, FY_PIN_SEND, &e2);
    TAP_OK(e2 != e, "the stale held registration is not a hit");
    fy_pin_cache_release(c, e);
    TAP_EQ_INT(f.deregs, 2, "deregistered at its release");
    fy_pin_cache_release(c, e2);

    /* madvise(DONTNEED) and mmap(MAP_FIXED) over a registration. */
    uint64_t inv0 = st(c).invalidations;
    fy_pin_cache_acquire(c, b + pg, pg, FY_PIN_SEND, &e);
    fy_pin_cache_release(c, e);
    madvise(b + pg, pg, MADV_DONTNEED);
    TAP_EQ_INT((int)(st(c).invalidations - inv0), 1,
               "madvise(MADV_DONTNEED) invalidates");
    fy_pin_cache_acquire(c, b + 2 * pg, pg, FY_PIN_SEND, &e);
    fy_pin_cache_release(c, e);
    n = mmap(b + 2 * pg, pg, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    TAP_OK(n == b + 2 * pg, "mmap(MAP_FIXED) over it");
    TAP_EQ_INT((int)(st(c).invalidations - inv0), 2,
               "mmap(MAP_FIXED) invalidates");
    munmap(b, len);

#if defined(__SANITIZE_THREAD__)
    printf("# free and realloc not interposed in a ThreadSanitizer build\n");
#else
    /* free of a large (mmap-backed) malloc block, then malloc again. */
    size_t big = 1 << 20;
    char *m = malloc(big);
    TAP_OK(m != NULL, "malloc 1 MiB");
    memset(m, 2, big);
    fy_pin_cache_acquire(c, m, big, FY_PIN_RECV, &e);
    h1 = fy_pin_entry_handle(e);
    fy_pin_cache_release(c, e);
    inv0 = st(c).invalidations;
    free(m);
    TAP_EQ_INT((int)(st(c).invalidations - inv0), 1, "free invalidates");
    TAP_EQ_INT(f.dereg_unmapped, 0, "deregistered before free unmapped it");
    char *m2 = malloc(big);
    miss0 = st(c).misses;
    fy_pin_cache_acquire(c, m2, big, FY_PIN_RECV, &e);
    TAP_EQ_INT((int)(st(c).misses - miss0), 1,
               "new block (%s address) is a miss", m2 == m ? "same" : "other");
    TAP_OK(fy_pin_entry_handle(e) != h1, "never the freed registration");
    fy_pin_cache_release(c, e);
    /* realloc that moves the block. */
    inv0 = st(c).invalidations;
    m2 = realloc(m2, 4 * big);
    TAP_OK(m2 != NULL, "realloc");
    TAP_EQ_INT((int)(st(c).invalidations - inv0), 1, "realloc invalidates");
    fy_pin_cache_acquire(c, m2, 4 * big, FY_PIN_RECV, &e);
    fy_pin_cache_release(c, e);
    inv0 = st(c).invalidations;
    m2 = reallocarray(m2, 2, 4 * big);
    TAP_OK(m2 != NULL, "reallocarray");
    TAP_EQ_INT((int)(st(c).invalidations - inv0), 1,
               "reallocarray invalidates");
    free(m2);
#endif
    fy_pin_cache_destroy(c);
    TAP_EQ_INT(f.regs, f.deregs, "every registration deregistered");
    TAP_EQ_INT(f.dereg_unmapped, 0, "no deregistration after an unmap");
}

/* ---- the delayed queue --------------------------------------------------- */
struct op {
    struct fy_pin_waiter w;
    struct fy_pin_entry *e;
    int err, calls, order;
};
static int done_seq;

static void op_done(struct fy_pin_waiter *w, struct fy_pin_entry *e, int err)
{
    struct op *o = (struct op *)w;
    o->e = e;
    o->err = err;
    o->calls++;
    o->order = ++done_seq;
}

/* ---- invalidations inside a provider call are deregistered after it ------ */
static void test_defer(void)
{
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 0, 0);
    /* munmap: free is not interposed under ThreadSanitizer. */
    char *b = map(3 * pg);
    struct fy_pin_entry *e, *e2;
    fy_pin_cache_acquire(c, b, 3 * pg, FY_PIN_RECV, &e);
    fy_pin_cache_release(c, e);
    fy_pin_defer_begin();
    fy_pin_defer_begin(); /* nested */
    TAP_EQ_INT(munmap(b, 3 * pg), 0, "munmap inside a provider call");
    TAP_EQ_INT(f.deregs, 0, "not deregistered yet");
    TAP_EQ_INT((int)st(c).invalidations, 1, "but invalidated at once");
    char *m = map(pg);
    fy_pin_cache_acquire(c, m, pg, FY_PIN_RECV, &e2);
    TAP_OK(e2 != e, "other memory meanwhile: a new registration");
    fy_pin_cache_release(c, e2);
    fy_pin_defer_end();
    TAP_EQ_INT(f.deregs, 0, "still inside the outer call");
    fy_pin_defer_end();
    TAP_EQ_INT(f.deregs, 1, "deregistered when the outermost call returned");
    /* Still deferred when the cache goes: destroy deregisters it. */
    fy_pin_defer_begin();
    munmap(m, pg);
    fy_pin_cache_destroy(c);
    TAP_EQ_INT(f.deregs, 2, "destroy deregisters deferred entries");
    fy_pin_defer_end();
    TAP_EQ_INT(f.regs, f.deregs, "every registration deregistered once");
}

static void test_delayed(void)
{
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 2 * pg, 2 * pg);
    char *b = map(16 * pg);
    struct fy_pin_entry *ea, *x;
    struct op ob = {.w.done = op_done}, oc = {.w.done = op_done},
              od = {.w.done = op_done};
    fy_pin_cache_acquire(c, b, 2 * pg, FY_PIN_SEND, &ea);
    TAP_EQ_INT(fy_pin_cache_acquire_wait(c, b + 4 * pg, 2 * pg, FY_PIN_SEND,
                                         &ob.w, &x),
               -EINPROGRESS, "B queued behind A");
    TAP_EQ_INT(
        fy_pin_cache_acquire_wait(c, b + 8 * pg, pg, FY_PIN_SEND, &oc.w, &x),
        -EINPROGRESS, "C queued behind B");
    TAP_EQ_INT(
        fy_pin_cache_acquire_wait(c, b + 8 * pg, pg, FY_PIN_SEND, &oc.w, &x),
        -EINVAL, "a waiter queued twice");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b + 12 * pg, pg, FY_PIN_SEND, &x),
               -EAGAIN, "a new acquire does not overtake the queue");
    TAP_EQ_INT(
        fy_pin_cache_acquire_wait(c, b + 12 * pg, pg, FY_PIN_SEND, &od.w, &x),
        -EINPROGRESS, "D queued");
    TAP_OK(fy_pin_cache_cancel(c, &od.w), "D cancelled");
    TAP_EQ_INT(fy_pin_cache_acquire(c, b, pg, FY_PIN_RECV, &x), 0,
               "receives are not held up by queued sends");
    fy_pin_cache_release(c, x);
    TAP_EQ_INT((int)st(c).delayed, 3, "three delayed");
    fy_pin_cache_release(c, ea);
    TAP_OK(ob.calls == 1 && ob.err == 0 && ob.e, "B done at A's release");
    TAP_EQ_INT(oc.calls, 0, "C still waits (B holds the budget)");
    fy_pin_cache_release(c, ob.e);
    TAP_OK(oc.calls == 1 && oc.err == 0 && oc.order > ob.order,
           "C done after B, in order");
    TAP_EQ_INT(od.calls, 0, "a cancelled waiter is never called");
    fy_pin_cache_release(c, oc.e);
    fy_pin_cache_destroy(c);
    munmap(b, 16 * pg);
}

/* ---- deadlock freedom: more transfers than the budgets hold -------------- */
/* Each transfer pins its receive buffer, then (the receiver's "go") its send
 * buffer, copies, releases the send pin, then the receive pin: the send pin
 * is held only while data moves and waits for nothing, so sends always
 * drain, and each receive gets its send. Each pin is larger than half its
 * budget: one transfer at a time per direction. */
#define NXFER 8
struct xfer {
    pthread_t t;
    struct fy_pin_cache *c;
    char *src, *dst;
    size_t len;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct fy_pin_waiter w;
    struct fy_pin_entry *got;
    int err;
    bool ready;
    int ok;
};

static void xfer_done(struct fy_pin_waiter *w, struct fy_pin_entry *e, int err)
{
    struct xfer *x = w->arg;
    pthread_mutex_lock(&x->mu);
    x->got = e;
    x->err = err;
    x->ready = true;
    pthread_cond_signal(&x->cv);
    pthread_mutex_unlock(&x->mu);
}

static int pin_wait(struct xfer *x, const void *p, size_t len,
                    enum fy_pin_dir dir, struct fy_pin_entry **e_out)
{
    x->ready = false;
    x->w.done = xfer_done;
    x->w.arg = x;
    int rc = fy_pin_cache_acquire_wait(x->c, p, len, dir, &x->w, e_out);
    if (rc != -EINPROGRESS)
        return rc;
    pthread_mutex_lock(&x->mu);
    while (!x->ready)
        pthread_cond_wait(&x->cv, &x->mu);
    pthread_mutex_unlock(&x->mu);
    *e_out = x->got;
    return x->err;
}

static void *xfer_run(void *arg)
{
    struct xfer *x = arg;
    struct fy_pin_entry *re, *se;
    /* Pieces no larger than what one pin may hold (minus a page for an
     * unaligned start): a transfer larger than a budget moves in chunks. */
    size_t chunk = FY_MIN(fy_pin_cache_chunk_max(x->c, FY_PIN_RECV),
                          fy_pin_cache_chunk_max(x->c, FY_PIN_SEND)) -
                   pg;
    for (size_t off = 0; off < x->len; off += chunk) {
        size_t n = FY_MIN(chunk, x->len - off);
        if (pin_wait(x, x->dst + off, n, FY_PIN_RECV, &re) != 0)
            return NULL;
        if (pin_wait(x, x->src + off, n, FY_PIN_SEND, &se) != 0)
            return NULL;
        memcpy(x->dst + off, x->src + off, n);
        fy_pin_cache_release(x->c, se);
        fy_pin_cache_release(x->c, re);
    }
    x->ok = 1;
    return NULL;
}

static void test_no_deadlock(void)
{
    struct fake f;
    size_t budget = 256 * pg;
    struct fy_pin_cache *c = mk(&f, budget, budget);
    static struct xfer xs[NXFER];
    for (int i = 0; i < NXFER; i++) {
        struct xfer *x = &xs[i];
        memset(x, 0, sizeof(*x));
        x->c = c;
        /* > half a budget each; the last one is 3 budgets (chunked). */
        x->len = i == NXFER - 1 ? 3 * budget : budget / 2 + pg * (1 + i);
        x->src = malloc(x->len);
        x->dst = malloc(x->len);
        for (size_t k = 0; k < x->len; k++)
            x->src[k] = (char)(k * 7 + i);
        memset(x->dst, 0, x->len);
        pthread_mutex_init(&x->mu, NULL);
        pthread_cond_init(&x->cv, NULL);
    }
    /* Hold the whole receive budget until every transfer has queued its
     * first pin, so all of them go through the delayed queue. */
    char *hold = malloc(budget);
    struct fy_pin_entry *he;
    fy_pin_cache_acquire(c, hold, budget - pg, FY_PIN_RECV, &he);
    for (int i = 0; i < NXFER; i++)
        pthread_create(&xs[i].t, NULL, xfer_run, &xs[i]);
    while (st(c).delayed < NXFER)
        sched_yield();
    fy_pin_cache_release(c, he);
    int ok = 0;
    for (int i = 0; i < NXFER; i++) {
        pthread_join(xs[i].t, NULL);
        ok += xs[i].ok && !memcmp(xs[i].src, xs[i].dst, xs[i].len);
    }
    TAP_EQ_INT(ok, NXFER,
               "%d transfers, each pinning more than half of each budget, "
               "complete with data intact",
               NXFER);
    struct fy_pin_stats s = st(c);
    TAP_OK(s.pinned_hw[FY_PIN_SEND] <= budget &&
               s.pinned_hw[FY_PIN_RECV] <= budget,
           "pinned never exceeded the budgets (hw %llu/%llu of %zu)",
           (unsigned long long)s.pinned_hw[FY_PIN_SEND],
           (unsigned long long)s.pinned_hw[FY_PIN_RECV], budget);
    TAP_OK(s.delayed >= NXFER,
           "all went through the delayed queue "
           "(delayed=%llu evictions=%llu misses=%llu)",
           (unsigned long long)s.delayed, (unsigned long long)s.evictions,
           (unsigned long long)s.misses);
    free(hold);
    for (int i = 0; i < NXFER; i++) {
        free(xs[i].src);
        free(xs[i].dst);
        pthread_mutex_destroy(&xs[i].mu);
        pthread_cond_destroy(&xs[i].cv);
    }
    fy_pin_cache_destroy(c);
    TAP_EQ_INT(f.regs, f.deregs, "every registration deregistered");
}

/* ---- the seed's deadlock, and why separate budgets avoid it ------------ */
/* Two simulated processes exchange NSIM large messages each way at once,
 * the sender pinning first (then its request goes out), the receiver
 * pinning when the request arrives; data moves once both are pinned.
 * With one pool per process for both directions, each process fills its
 * pool with send pins that wait for receive pins the other cannot make:
 * no transfer ever completes. With the seed's separate send and receive
 * budgets the receive pins always find room and everything completes. */
#define NSIM 4
struct sim {
    struct fy_pin_waiter w;
    struct fy_pin_cache *snd, *rcv;
    enum fy_pin_dir sdir, rdir;
    char *src, *dst;
    size_t len;
    struct fy_pin_entry *se, *re;
    int state; /* 0 pin send, 1 waiting, 2 pin recv, 3 waiting, 4 move, 5 done
                */
};

static void sim_done(struct fy_pin_waiter *w, struct fy_pin_entry *e, int err)
{
    struct sim *t = w->arg;
    if (err)
        return;
    if (t->state == 1) {
        t->se = e;
        t->state = 2;
    } else if (t->state == 3) {
        t->re = e;
        t->state = 4;
    }
}

/* Returns the transfers completed when nothing can move any more. */
static int sim_run(bool separate, size_t pool, int *held_out)
{
    struct fake f0, f1;
    size_t budget = 8 * pg, pin = 5 * pg; /* one pin > half a budget */
    if (!separate)
        budget = pool;
    struct fy_pin_cache *c[2] = {mk(&f0, budget, separate ? budget : 0),
                                 mk(&f1, budget, separate ? budget : 0)};
    char *mem = map(4 * NSIM * 8 * pg);
    struct sim t[2 * NSIM];
    for (int i = 0; i < 2 * NSIM; i++) {
        int from = i % 2;
        memset(&t[i], 0, sizeof(t[i]));
        t[i].w.done = sim_done;
        t[i].w.arg = &t[i];
        t[i].snd = c[from];
        t[i].rcv = c[1 - from];
        t[i].sdir = FY_PIN_SEND;
        /* One pool: receives take the send budget too. */
        t[i].rdir = separate ? FY_PIN_RECV : FY_PIN_SEND;
        t[i].src = mem + (size_t)(2 * i) * 8 * pg;
        t[i].dst = mem + (size_t)(2 * i + 1) * 8 * pg;
        t[i].len = pin;
        memset(t[i].src, 'a' + i, pin);
    }
    int done = 0;
    for (bool moved = true; moved;) {
        moved = false;
        for (int i = 0; i < 2 * NSIM; i++) {
            struct sim *x = &t[i];
            int rc;
            switch (x->state) {
            case 0:
                rc = fy_pin_cache_acquire_wait(x->snd, x->src, x->len, x->sdir,
                                               &x->w, &x->se);
                x->state = rc == 0 ? 2 : 1;
                moved = true;
                break;
            case 2:
                rc = fy_pin_cache_acquire_wait(x->rcv, x->dst, x->len, x->rdir,
                                               &x->w, &x->re);
                x->state = rc == 0 ? 4 : 3;
                moved = true;
                break;
            case 4:
                memcpy(x->dst, x->src, x->len);
                fy_pin_cache_release(x->rcv, x->re);
                fy_pin_cache_release(x->snd, x->se);
                x->state = 5;
                done += memcmp(x->dst, x->src, x->len) == 0;
                moved = true;
                break;
            default:
                break;
            }
        }
    }
    /* Stalled or finished: count the send pins held, cancel every waiter
     * (so releases below grant nothing), then release. */
    int held = 0;
    for (int i = 0; i < 2 * NSIM; i++)
        held += t[i].state >= 2 && t[i].state <= 4;
    for (int i = 0; i < 2 * NSIM; i++)
        if (t[i].state == 1 || t[i].state == 3)
            fy_pin_cache_cancel(t[i].state == 1 ? t[i].snd : t[i].rcv, &t[i].w);
    for (int i = 0; i < 2 * NSIM; i++) {
        if (t[i].state >= 2 && t[i].state <= 4)
            fy_pin_cache_release(t[i].snd, t[i].se);
        if (t[i].state == 4)
            fy_pin_cache_release(t[i].rcv, t[i].re);
    }
    fy_pin_cache_destroy(c[0]);
    fy_pin_cache_destroy(c[1]);
    munmap(mem, 4 * NSIM * 8 * pg);
    *held_out = held;
    return done;
}

static void test_seed_deadlock(void)
{
    int held;
    int done = sim_run(false, 8 * pg, &held);
    TAP_OK(done == 0 && held == 2,
           "one pool per process: the exchange deadlocks (%d of %d done, "
           "%d send pins held waiting)",
           done, 2 * NSIM, held);
    done = sim_run(false, 16 * pg, &held);
    TAP_OK(done == 0 && held == 6,
           "one pool as large as both budgets together deadlocks too (%d "
           "done, %d send pins held)",
           done, held);
    done = sim_run(true, 0, &held);
    TAP_EQ_INT(done, 2 * NSIM,
               "separate send and receive budgets: every transfer completes");
}

/* ---- random operations against a model ----------------------------------- */
/* A pinner that remembers, per handle, the range and when it was
 * registered; the model remembers when each page was last invalidated. An
 * acquire must return a registration that covers the range, of its
 * direction, made after the last invalidation of each of its pages; the
 * budgets must hold; every registration is deregistered exactly once. */
#define RND_PAGES 96
#define RND_HANDLES 100000
struct rnd {
    uint64_t epoch;
    uint64_t inval[RND_PAGES];
    struct {
        uintptr_t base;
        size_t len;
        uint64_t epoch;
        int live;
    } h[RND_HANDLES];
    uintptr_t next;
    int bad;
};
static struct rnd rnd;

static int rnd_reg(void *ctx, void *addr, size_t len, enum fy_pin_dir dir,
                   void **handle_out)
{
    (void)dir;
    (void)ctx;
    uintptr_t h = ++rnd.next;
    if (h >= RND_HANDLES)
        return -ENOMEM;
    rnd.h[h].base = (uintptr_t)addr;
    rnd.h[h].len = len;
    rnd.h[h].epoch = ++rnd.epoch;
    rnd.h[h].live = 1;
    *handle_out = (void *)h;
    return 0;
}

static int rnd_dereg(void *ctx, void *addr, size_t len, void *handle)
{
    (void)ctx;
    uintptr_t h = (uintptr_t)handle;
    if (h == 0 || h >= RND_HANDLES || !rnd.h[h].live ||
        rnd.h[h].base != (uintptr_t)addr || rnd.h[h].len != len)
        rnd.bad++;
    else
        rnd.h[h].live = 0;
    return 0;
}

static const struct fy_pin_ops rnd_ops = {"rnd", rnd_reg, rnd_dereg};

static void test_random(void)
{
    memset(&rnd, 0, sizeof(rnd));
    char *arena = map(RND_PAGES * pg);
    struct fy_pin_limits lim = {{24 * pg, 16 * pg}};
    struct fy_pin_cache *c;
    fy_pin_cache_create(&rnd_ops, NULL, &lim, &c);
    struct {
        struct fy_pin_entry *e;
        int dir;
    } held[6] = {{0}};
    unsigned seed = 12345;
    int wrong = 0, acquired = 0, agains = 0, over = 0;
    for (int op = 0; op < 20000; op++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 8;
        int slot = (int)(r % 6);
        if (r % 10 == 0) { /* memory goes away */
            size_t p0 = (r >> 4) % RND_PAGES, np = 1 + (r >> 12) % 8;
            np = FY_MIN(np, RND_PAGES - p0);
            fy_pin_invalidate(arena + p0 * pg + (r >> 20) % 100, np * pg - 200);
            rnd.epoch++;
            size_t first = p0, last = p0 + np - 1;
            for (size_t q = first; q <= last; q++)
                rnd.inval[q] = rnd.epoch;
            continue;
        }
        if (held[slot].e) {
            fy_pin_cache_release(c, held[slot].e);
            held[slot].e = NULL;
            continue;
        }
        size_t off = (r >> 4) % (RND_PAGES * pg - 1);
        size_t len = 1 + (r >> 3) % (12 * pg);
        if (off + len > RND_PAGES * pg)
            len = RND_PAGES * pg - off;
        int dir = (int)((r >> 2) & 1);
        struct fy_pin_entry *e;
        int rc =
            fy_pin_cache_acquire(c, arena + off, len, (enum fy_pin_dir)dir, &e);
        if (rc == -EAGAIN) {
            agains++;
            continue;
        }
        if (rc != 0) {
            wrong++;
            continue;
        }
        acquired++;
        uintptr_t h = (uintptr_t)fy_pin_entry_handle(e);
        uintptr_t a = (uintptr_t)arena + off, b = a + len;
        if (h == 0 || h >= RND_HANDLES || !rnd.h[h].live || rnd.h[h].base > a ||
            rnd.h[h].base + rnd.h[h].len < b) {
            wrong++;
        } else {
            size_t p0 = (a - (uintptr_t)arena) / pg;
            size_t p1 = (b - 1 - (uintptr_t)arena) / pg;
            for (size_t q = p0; q <= p1; q++)
                if (rnd.inval[q] >= rnd.h[h].epoch)
                    wrong++; /* registered before an invalidation */
        }
        struct fy_pin_stats s = st(c);
        if (s.pinned[0] > lim.max[0] || s.pinned[1] > lim.max[1])
            over++;
        held[slot].e = e;
        held[slot].dir = dir;
    }
    for (int i = 0; i < 6; i++)
        if (held[i].e)
            fy_pin_cache_release(c, held[i].e);
    struct fy_pin_stats s = st(c);
    TAP_EQ_INT(wrong, 0,
               "20000 random operations: every acquire covered its range "
               "with a registration newer than the last invalidation "
               "(%d acquired, %d -EAGAIN, %llu hits, %llu merges)",
               acquired, agains, (unsigned long long)s.hits,
               (unsigned long long)s.merges);
    TAP_EQ_INT(over, 0, "budgets held");
    TAP_OK(s.hits > 0 && s.merges > 0 && s.evictions > 0 && s.invalidations > 0,
           "hits, merges, evictions and invalidations all happened");
    fy_pin_cache_destroy(c);
    int live = 0;
    for (uintptr_t h = 1; h <= rnd.next && h < RND_HANDLES; h++)
        live += rnd.h[h].live;
    TAP_EQ_INT(live, 0, "every registration deregistered");
    TAP_EQ_INT(rnd.bad, 0, "each once, with its own range");
    munmap(arena, RND_PAGES * pg);
}

/* ---- the real pinner: mlock ---------------------------------------------- */
static long vm_locked_kb(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (fp && fgets(line, sizeof(line), fp))
        if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
            break;
    if (fp)
        fclose(fp);
    return kb;
}

/* The sanitizers make mlock/munlock no-ops: VmLck is not checked. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOCK_SEEN 0
#else
#define LOCK_SEEN 1
#endif

static void check_locked(long before, long want_kb, const char *what)
{
    if (LOCK_SEEN)
        TAP_EQ_INT((int)(vm_locked_kb() - before), (int)want_kb, "%s", what);
    else
        printf("# not checked under a sanitizer (mlock is a no-op): "
               "%s\n",
               what);
}

static void test_mlock(void)
{
    struct fy_pin_limits lim = {{8u << 20, 8u << 20}};
    struct fy_pin_cache *c;
    TAP_EQ_INT(fy_pin_cache_create(&fy_pin_mlock_ops, NULL, &lim, &c), 0,
               "mlock cache");
    size_t len = 1 << 20;
    char *b = map(len);
    long before = vm_locked_kb();
    struct fy_pin_entry *e;
    int rc = fy_pin_cache_acquire(c, b, len, FY_PIN_SEND, &e);
    if (rc == -EPERM || rc == -ENOMEM || rc == -EAGAIN) {
        tap_skip("mlock not allowed here (RLIMIT_MEMLOCK)");
        fy_pin_cache_destroy(c);
        munmap(b, len);
        return;
    }
    TAP_EQ_INT(rc, 0, "mlock acquire");
    check_locked(before, (long)(len >> 10), "VmLck grew by the registration");
    fy_pin_cache_release(c, e);
    check_locked(before, (long)(len >> 10),
                 "still locked after release (cached)");
    munmap(b, len);
    check_locked(before, 0, "unlocked by munmap");
    TAP_EQ_INT((int)st(c).invalidations, 1, "and invalidated");
    b = mmap(b, len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    TAP_OK(b != MAP_FAILED, "remapped at the same address");
    uint64_t m0 = st(c).misses;
    fy_pin_cache_acquire(c, b, len, FY_PIN_SEND, &e);
    TAP_EQ_INT((int)(st(c).misses - m0), 1, "a miss: locked again");
    check_locked(before, (long)(len >> 10), "VmLck counts it again");
    fy_pin_cache_release(c, e);
    fy_pin_cache_destroy(c);
    check_locked(before, 0, "destroy unlocks");
    munmap(b, len);
}

/* ---- the FERRY_STATS line ------------------------------------------------ */
static void test_stats_line(void)
{
    struct fake f;
    setenv("FERRY_STATS", "1", 1);
    fy_env_load();
    struct fy_pin_cache *c = mk(&f, 8 * pg, 8 * pg);
    char *b = map(4 * pg);
    struct fy_pin_entry *e;
    fy_pin_cache_acquire(c, b, pg, FY_PIN_SEND, &e);
    fy_pin_cache_release(c, e);
    fy_pin_cache_acquire(c, b, pg, FY_PIN_SEND, &e);
    fy_pin_cache_release(c, e);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    fflush(stderr);
    dup2(fileno(tmp), 2);
    fy_pin_stats_print_all(5);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char line[512] = "";
    rewind(tmp);
    if (!fgets(line, sizeof(line), tmp))
        line[0] = '\0';
    fclose(tmp);
    line[strcspn(line, "\n")] = '\0';
    char want[256];
    snprintf(want, sizeof(want),
             "ferry-stats rank=5 group=pin ops=fake hits=1 misses=1 "
             "evictions=0 invalidations=0 delayed=0 pinned_send=%zu "
             "pinned_recv=0 hw_send=%zu hw_recv=0",
             pg, pg);
    TAP_EQ_STR(line, want, "the FERRY_STATS line");
    fy_pin_cache_destroy(c);
    munmap(b, 4 * pg);
    unsetenv("FERRY_STATS");
    fy_env_load();
}

/* ---- the environment: budgets, FERRY_PIN_CACHE=0 ------------------------ */
static void test_env(void)
{
    struct fy_pin_limits lim;
    setenv("FERRY_PIN_MAX", "1M", 1);
    fy_env_load();
    fy_pin_limits_from_env(&lim);
    TAP_OK(lim.max[FY_PIN_SEND] == 512 * 1024 &&
               lim.max[FY_PIN_RECV] == 512 * 1024,
           "FERRY_PIN_MAX=1M: half for each direction");
    setenv("FERRY_PIN_RECV_MAX", "100K", 1);
    fy_env_load();
    fy_pin_limits_from_env(&lim);
    TAP_OK(lim.max[FY_PIN_SEND] == 512 * 1024 &&
               lim.max[FY_PIN_RECV] == 100 * 1024,
           "FERRY_PIN_RECV_MAX overrides the receive half");
    setenv("FERRY_PIN_MAX", "lots", 1);
    TAP_EQ_INT(fy_env_load(), -EINVAL, "a malformed FERRY_PIN_MAX is refused");
    unsetenv("FERRY_PIN_MAX");
    unsetenv("FERRY_PIN_RECV_MAX");
    setenv("FERRY_PIN_CACHE", "0", 1);
    fy_env_load();
    struct fake f;
    struct fy_pin_cache *c = mk(&f, 8 * pg, 8 * pg);
    char *b = map(pg);
    struct fy_pin_entry *e;
    for (int i = 0; i < 2; i++) {
        fy_pin_cache_acquire(c, b, pg, FY_PIN_SEND, &e);
        fy_pin_cache_release(c, e);
    }
    TAP_OK(st(c).misses == 2 && st(c).hits == 0 && f.deregs == 2,
           "FERRY_PIN_CACHE=0: every release deregisters, no hits");
    fy_pin_cache_destroy(c);
    unsetenv("FERRY_PIN_CACHE");
    fy_env_load();
    /* Caching again: a released entry stays cached; releasing it once
     * more is a caller's bug, logged and otherwise ignored. */
    c = mk(&f, 8 * pg, 8 * pg);
    fy_pin_cache_acquire(c, b, pg, FY_PIN_SEND, &e);
    fy_pin_cache_release(c, e);
    fy_pin_cache_release(c, e);
    struct fy_pin_entry *e2;
    fy_pin_cache_acquire(c, b, pg, FY_PIN_SEND, &e2);
    TAP_OK(e2 == e && f.deregs == 0 && st(c).hits == 1,
           "a second release changes nothing");
    fy_pin_cache_release(c, e2);
    fy_pin_cache_destroy(c);
    munmap(b, pg);
}

int main(void)
{
    pg = (size_t)sysconf(_SC_PAGESIZE);
    if (fy_env_load() != 0)
        return 1;
    test_bad_args();
    test_hit_miss();
    test_lru_budget();
    test_merge();
    test_invalidate();
    test_defer();
    test_delayed();
    test_no_deadlock();
    test_seed_deadlock();
    test_random();
    test_stats_line();
    test_env();
    test_mlock();
    return tap_done();
}
