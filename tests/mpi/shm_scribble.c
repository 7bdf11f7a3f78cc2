/* SPDX-License-Identifier: MIT */
/* Helper for script.shm_scribble.* (tests/scripts/shm_scribble.sh): a rank
 * that scribbles over the shared segment while the others run
 * collectives and large point-to-point messages with it and among
 * themselves. The others may get wrong values (nothing can stop a rank
 * from writing garbage into what it publishes), may stall, or may end the
 * job with a clear error; they may never crash or write outside their
 * buffers.
 *
 * Usage: shm_scribble MARKER SEED MODE (P ranks; the last one scribbles)
 * MODE: "none" - no scribbles (the workload itself must complete);
 *       "own"  - the scribbler's own part of the collective regions
 *                (what it publishes: tags, addresses, lengths, payloads,
 *                flags, barrier counters);
 *       "any"  - any rank's part of the collective regions, the split
 *                copy's control blocks and the packet cells (a stray
 *                write of one rank into what another publishes);
 *       "all"  - any byte of any region of the segment, and of the
 *                windows' control blocks (and an allocated window's
 *                memory);
 *       "steer" - directed (3 ranks or more): while rank 0, the root of
 *                a 1 MiB reduce on the communicator of the others (ranks
 *                0 and 1: two members share the combining; 0, 1 and 2:
 *                each combines a slice, reduce_direct), waits for them,
 *                the scribbler moves the receive-buffer address rank 0
 *                published 64 bytes on; they must refuse the publication
 *                ("malformed reduction publication") instead of writing
 *                the result over rank 0's guard;
 *       "steer_ireduce" - the same for a 1 MiB MPI_Ireduce (4 ranks or
 *                more: three members, each writing its slice of the
 *                result at the address rank 0 published in its slot);
 *       "steer_gather" - the same for a 1 MiB gather to rank 0, whose
 *                receive-buffer address the others write their blocks at
 *                ("malformed gather publication");
 *       "steer_gatherv" - the same for a 1 MiB gatherv, the address of
 *                the last member's block in rank 0's table of where the
 *                members write ("malformed gatherv publication");
 *                "steer_igatherv" for MPI_Igatherv (the table in rank 0's
 *                nonblocking slot);
 *       "offer" - directed (3 ranks): rank 0 posts a 1 MiB receive from
 *                rank 1, which offers its buffer to rank 1 (the write
 *                protocol); before rank 1 looks, the scribbler moves the
 *                address in the offer waiting in rank 1's mailbox by 64
 *                bytes; rank 1 must refuse the packet ("check word")
 *                instead of writing the message 64 bytes off in rank 0's
 *                buffer (rank 0 checks every byte it received).
 *                In these six modes MT_SCRIBBLE_DRY=1 finds the word and
 *                leaves it (the job must then finish).
 * A thread of the last rank finds the segment among its mappings (by its
 * magic), reads the region table from the header, and writes 1 to 24
 * values - boundary values, the old value plus or minus a little, a bit
 * flipped, random - at random places and times during the workload.
 * The workload, the same sequence on every rank (from SEED): broadcast,
 * reduce (also in place, two ranks sharing the work above 384 KiB),
 * allreduce, allgather, alltoall, gather, scatter, reduce-scatter, scan,
 * barrier, Ibcast, Iallreduce, Ialltoall and Ireduce, on the world and on the
 * communicator of the others (where the scribbler is not a member), plus
 * 1 MiB messages between ranks (rendezvous, the shared copy, the write
 * protocol), plus one-sided steps on three windows of the world (an
 * allocated one under locks, one created over a buffer of each rank
 * under fences, a dynamic one under lock_all: put, get, accumulate).
 * Every receive buffer, and the memory of the last two windows, lies
 * between two 64-byte guards.
 *
 * Exit statuses: 0 done; 3 stalled (no step finished for
 * SCRIBBLE_STALL_S seconds); 4 a victim's buffer written where it should
 * not be (a guard overwritten; in mode offer also a byte out of place:
 * the failure this test exists to catch); 5 an MPI call returned an
 * error (printed); 6 a guard of the scribbler's own buffer (which the
 * others write into at addresses it published); 7 a directed mode did
 * not find the word it moves (the layout it relies on changed). The
 * library itself ends the job with status 1 and a message for what it
 * refuses. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

enum {
    SCRIBBLE_STEPS = 100,
    SCRIBBLE_STALL_S = 2,
    SCRIBBLE_GUARD = 64,
    SCRIBBLE_GUARD_BYTE = 0xa5,
    SCRIBBLE_MAX_WRITES = 24,
};

/* The segment header's facts this test relies on (src/shm/shm.h: magic
 * at 0, the layout at 16; a region is one 64-byte line). */
#define SEG_MAGIC 0x46657272795f5348ull
struct seg_region {
    char name[16];
    uint32_t per, align;
    uint64_t elem, count, sig, off, len;
};
struct seg_layout {
    uint32_t nranks, nregions;
    uint64_t total;
    struct seg_region region[16];
};

/* ---- the scribbler ------------------------------------------------------ */

struct target {
    unsigned char *p;
    unsigned char *seen; /* what the last look found there */
    int hits;            /* writes made here */
    uint64_t len, elem;
    char name[17];
};
static struct target targets[64];
static int ntargets;
static const char *mode;
static uint64_t seed;
static _Atomic int writes_done;

static bool named(const struct seg_region *r, const char *const *names)
{
    for (; *names; names++)
        if (strncmp(r->name, *names, 16) == 0)
            return true;
    return false;
}

static void add_target(unsigned char *p, uint64_t len, uint64_t elem,
                       const char *name)
{
    if (len < 8 || ntargets == (int)(sizeof targets / sizeof *targets))
        return;
    struct target *t = &targets[ntargets++];
    t->p = p;
    t->len = len;
    t->elem = elem && elem <= len ? elem : len;
    t->seen = malloc(len);
    MT_CHECK(t->seen, "malloc %llu", (unsigned long long)len);
    memcpy(t->seen, p, len);
    snprintf(t->name, sizeof t->name, "%.16s", name);
}

/* A shared, writable mapping of a memfd the library made whose name
 * starts with 'prefix' ("memfd:ferry-..." ; not "ferry-win-user", user
 * memory a window moved onto a memfd, whose first bytes may be an
 * allocator's red zone): its bounds in *lo, *hi. Reads the next line of
 * maps file f; false at its end. */
static bool next_mapping(FILE *f, const char *prefix, unsigned long *lo,
                         unsigned long *hi, bool *match)
{
    char line[512], perms[8], path[256] = "";
    if (!fgets(line, sizeof line, f))
        return false;
    *match = false;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", lo, hi, perms, path) <
            3 ||
        strncmp(perms, "rw-s", 4) != 0)
        return true;
    *match = strncmp(path, prefix, strlen(prefix)) == 0 &&
             strncmp(path, "/memfd:ferry-win-user", 21) != 0;
    return true;
}

/* The segment's base among our mappings: a memfd of the library starting
 * with the magic. */
static unsigned char *find_segment(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    MT_CHECK(f, "open /proc/self/maps");
    unsigned char *found = NULL;
    unsigned long lo, hi;
    bool match;
    while (!found && next_mapping(f, "/memfd:ferry-", &lo, &hi, &match))
        if (match && hi - lo >= 4096 && *(const uint64_t *)lo == SEG_MAGIC)
            found = (unsigned char *)lo;
    fclose(f);
    return found;
}

/* Every window's control block (src/rma/rma.h: FY_RMA_MAGIC at offset 0
 * of the window's memfd, its data after it for MPI_Win_allocate): the
 * shared mappings that start with it. */
#define WIN_MAGIC 0x31304e4957524659ull
static void add_windows(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    MT_CHECK(f, "open /proc/self/maps");
    unsigned long lo, hi;
    bool match;
    while (next_mapping(f, "/memfd:ferry-win", &lo, &hi, &match))
        if (match && *(const uint64_t *)lo == WIN_MAGIC)
            add_target((unsigned char *)lo, hi - lo, 64, "window");
    fclose(f);
}

static void find_targets(int me, int P)
{
    static const char *const coll[] = {"coll", "ncoll", "cbar", "cflag", NULL};
    static const char *const shared[] = {"coll",  "ncoll", "cbar",  "cflag",
                                         "split", "cells", "cellq", NULL};
    unsigned char *base = find_segment();
    MT_CHECK(base, "no mapping starts with the segment's magic");
    const struct seg_layout *lay = (const void *)(base + 16);
    MT_CHECK(lay->nregions <= 16 && (int)lay->nranks == P,
             "segment layout: %u regions, %u ranks", lay->nregions,
             lay->nranks);
    for (uint32_t i = 0; i < lay->nregions; i++) {
        const struct seg_region *r = &lay->region[i];
        MT_CHECK(r->off + r->len <= lay->total, "region %.16s out of bounds",
                 r->name);
        if (strcmp(mode, "offer") == 0) {
            if (strncmp(r->name, "fbox", 16) == 0)
                add_target(base + r->off, r->len, r->elem, r->name);
        } else if (strncmp(mode, "steer", 5) == 0) {
            /* Rank 0's collective cells, and its nonblocking slots. */
            if (strncmp(r->name, "coll", 16) == 0 ||
                strncmp(r->name, "ncoll", 16) == 0)
                add_target(base + r->off, r->count * r->elem, r->elem, r->name);
        } else if (strcmp(mode, "own") == 0) {
            if (!named(r, coll))
                continue;
            MT_CHECK(r->per == 1, "region %.16s is not per rank", r->name);
            uint64_t part = r->count * r->elem; /* [local rank][count] */
            add_target(base + r->off + (uint64_t)me * part, part, r->elem,
                       r->name);
        } else if (strcmp(mode, "any") == 0) {
            if (named(r, shared))
                add_target(base + r->off, r->len, r->elem, r->name);
        } else {
            add_target(base + r->off, r->len, r->elem, r->name);
        }
    }
    if (strcmp(mode, "all") == 0)
        add_windows();
    MT_CHECK(ntargets > 0, "mode %s: no region to scribble on", mode);
}

static uint64_t new_value(uint64_t old, uint64_t *s)
{
    static const uint64_t special[] = {0,
                                       1,
                                       ~0ull,
                                       1ull << 63,
                                       0xffffffffull,
                                       1ull << 32,
                                       24,
                                       40,
                                       41,
                                       32768,
                                       32769,
                                       393216,
                                       1ull << 20,
                                       (1ull << 20) + 1,
                                       1ull << 40};
    switch (mt_splitmix(s) % 6) {
    case 0:
        return special[mt_splitmix(s) % (sizeof special / sizeof *special)];
    case 1:
        return old + 8 * (1 + mt_splitmix(s) % 512);
    case 2:
        return old - 8 * (1 + mt_splitmix(s) % 512);
    case 3:
        return old ^ 1ull << (mt_splitmix(s) % 64);
    case 4:
        return old + 1;
    default:
        return mt_splitmix(s);
    }
}

/* The offset of a word of t that changed since the last look (from a
 * random place on, wrapping), or ~0 if none did; the look is kept. */
static uint64_t live_word(struct target *t, uint64_t *s)
{
    uint64_t words = t->len / 8, start = mt_splitmix(s) % words, hit = ~0ull;
    for (uint64_t i = 0; i < words && hit == ~0ull; i++) {
        uint64_t off = (start + i) % words * 8;
        if (memcmp(t->p + off, t->seen + off, 8) != 0)
            hit = off;
    }
    memcpy(t->seen, t->p, t->len);
    return hit;
}

/* One write: mostly at a word the library wrote lately (a tag, a length,
 * an address, a counter, a link), else into the first 256 bytes of an
 * element (headers), else anywhere in the region. */
static void scribble_once(uint64_t *s)
{
    struct target *t = &targets[mt_splitmix(s) % (uint64_t)ntargets];
    uint64_t off = mt_splitmix(s) % 4 != 0 ? live_word(t, s) : ~0ull;
    if (off != ~0ull) {
        /* the live word */
    } else if (mt_splitmix(s) % 2 != 0) {
        uint64_t nelem = t->len / t->elem;
        uint64_t head = t->elem < 256 ? t->elem : 256;
        off = (mt_splitmix(s) % nelem) * t->elem + mt_splitmix(s) % head;
    } else {
        off = mt_splitmix(s) % t->len;
    }
    off &= ~7ull;
    if (off + 8 > t->len)
        return;
    _Atomic uint64_t *w = (_Atomic uint64_t *)(void *)(t->p + off);
    uint64_t old = atomic_load_explicit(w, memory_order_relaxed);
    if (mt_splitmix(s) % 3 == 0) {
        /* A 32-bit field: one half of the word. */
        _Atomic uint32_t *h =
            (_Atomic uint32_t *)(void *)(t->p + off + 4 * (mt_splitmix(s) % 2));
        atomic_store_explicit(h, (uint32_t)new_value(atomic_load(h), s),
                              memory_order_relaxed);
    } else {
        atomic_store_explicit(w, new_value(old, s), memory_order_relaxed);
    }
    t->hits++;
    atomic_fetch_add(&writes_done, 1);
}

static void *scribbler(void *arg)
{
    (void)arg;
    uint64_t s = seed * 7919 + 17;
    int n = 1 + (int)(mt_splitmix(&s) % SCRIBBLE_MAX_WRITES);
    for (int i = 0; i < n; i++) {
        /* 0 to 3 ms apart: some land early, some in the middle of a
         * collective, a few after the workload. */
        struct timespec ts = {0, (long)(mt_splitmix(&s) % 3000) * 1000};
        nanosleep(&ts, NULL);
        scribble_once(&s);
    }
    return NULL;
}

/* ---- the workload ------------------------------------------------------- */

static int me, P;
static bool is_scribbler;

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "shm_scribble: stalled\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(3);
}

struct gbuf {
    unsigned char *raw;
    size_t n;
};

static void *gbuf_new(struct gbuf *g, size_t n)
{
    g->n = n;
    g->raw = malloc(n + 2 * SCRIBBLE_GUARD);
    MT_CHECK(g->raw, "malloc %zu", n);
    memset(g->raw, SCRIBBLE_GUARD_BYTE, SCRIBBLE_GUARD);
    memset(g->raw + SCRIBBLE_GUARD + n, SCRIBBLE_GUARD_BYTE, SCRIBBLE_GUARD);
    memset(g->raw + SCRIBBLE_GUARD, 0, n);
    return g->raw + SCRIBBLE_GUARD;
}

/* Both guards of g intact, or the job ends (exit 4, or 6 for the
 * scribbler's own). */
static void gbuf_check(const struct gbuf *g, const char *what)
{
    for (size_t i = 0; i < SCRIBBLE_GUARD; i++)
        if (g->raw[i] != SCRIBBLE_GUARD_BYTE ||
            g->raw[SCRIBBLE_GUARD + g->n + i] != SCRIBBLE_GUARD_BYTE) {
            fprintf(stderr,
                    "rank %d: %s: the guard %s a %zu-byte buffer was "
                    "overwritten (byte %zu)\n",
                    me, what,
                    g->raw[i] != SCRIBBLE_GUARD_BYTE ? "before" : "after", g->n,
                    i);
            _exit(is_scribbler ? 6 : 4);
        }
}

static void gbuf_check_free(struct gbuf *g, const char *what)
{
    gbuf_check(g, what);
    free(g->raw);
}

static void check_rc(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int l = 0;
    MPI_Error_string(rc, s, &l);
    fprintf(stderr, "rank %d: %s returned an error: %s\n", me, what, s);
    _exit(5);
}

/* A non-commutative op on ints: a o b = 2a + b (rank order matters). */
static void lin(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = 2 * a[i] + b[i];
}

/* Three windows on the world, made before the scribbling starts:
 * allocated (its memory on the window's memfd), created over a guarded
 * buffer of ours (others' puts reach it by CMA or /proc/<pid>/mem), and
 * dynamic with a guarded buffer of ours attached (dyn_at[r]: its address
 * in rank r). Others write into the last two, so their guards are
 * checked after every step. */
enum { WIN_BYTES = 256 << 10 };
static MPI_Win win_alloc, win_create, win_dyn;
static struct gbuf wc_buf, wd_buf;
static MPI_Aint *dyn_at;

static void windows_open(void)
{
    void *base;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Win_allocate(WIN_BYTES, 1, info, MPI_COMM_WORLD, &base, &win_alloc);
    void *wc = gbuf_new(&wc_buf, WIN_BYTES);
    MPI_Win_create(wc, WIN_BYTES, 1, info, MPI_COMM_WORLD, &win_create);
    MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win_dyn);
    void *wd = gbuf_new(&wd_buf, WIN_BYTES);
    MPI_Win_attach(win_dyn, wd, WIN_BYTES);
    MPI_Info_free(&info);
    dyn_at = malloc(sizeof(*dyn_at) * (size_t)P);
    MT_CHECK(dyn_at, "malloc");
    MPI_Aint mine;
    MPI_Get_address(wd, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, dyn_at, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(win_alloc, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(win_create, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(win_dyn, MPI_ERRORS_RETURN);
}

static void windows_close(void)
{
    MPI_Win_free(&win_alloc);
    MPI_Win_free(&win_create);
    MPI_Win_detach(win_dyn, wd_buf.raw + SCRIBBLE_GUARD);
    MPI_Win_free(&win_dyn);
    gbuf_check_free(&wc_buf, "Win_create window");
    gbuf_check_free(&wd_buf, "dynamic window");
    free(dyn_at);
}

/* One step of one-sided traffic on the world: n bytes at displacement
 * 'disp' of rank 'target', by kind 0 (allocated window, a lock of either
 * kind, put, get, accumulate), 1 (created window, fence epochs,
 * accumulate and get) or 2 (dynamic window, lock_all, put, flush, get). */
static void rma_step(int kind, int target, size_t n, size_t disp,
                     unsigned char *sb, unsigned char *rb, bool excl)
{
    int ints = (int)(n / sizeof(int));
    switch (kind) {
    case 0:
        check_rc(MPI_Win_lock(excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED,
                              target, 0, win_alloc),
                 "MPI_Win_lock");
        check_rc(MPI_Put(sb, (int)n, MPI_BYTE, target, (MPI_Aint)disp, (int)n,
                         MPI_BYTE, win_alloc),
                 "MPI_Put");
        check_rc(MPI_Get(rb, (int)n, MPI_BYTE, target, (MPI_Aint)disp, (int)n,
                         MPI_BYTE, win_alloc),
                 "MPI_Get");
        check_rc(MPI_Accumulate(sb, ints, MPI_INT, target, (MPI_Aint)disp, ints,
                                MPI_INT, MPI_SUM, win_alloc),
                 "MPI_Accumulate");
        check_rc(MPI_Win_unlock(target, win_alloc), "MPI_Win_unlock");
        break;
    case 1:
        check_rc(MPI_Win_fence(0, win_create), "MPI_Win_fence");
        check_rc(MPI_Accumulate(sb, ints, MPI_INT, target, (MPI_Aint)disp, ints,
                                MPI_INT, MPI_SUM, win_create),
                 "MPI_Accumulate");
        check_rc(MPI_Get(rb, (int)n, MPI_BYTE, (target + 1) % P, (MPI_Aint)disp,
                         (int)n, MPI_BYTE, win_create),
                 "MPI_Get");
        check_rc(MPI_Win_fence(0, win_create), "MPI_Win_fence");
        break;
    default:
        check_rc(MPI_Win_lock_all(0, win_dyn), "MPI_Win_lock_all");
        check_rc(MPI_Put(sb, (int)n, MPI_BYTE, target,
                         dyn_at[target] + (MPI_Aint)disp, (int)n, MPI_BYTE,
                         win_dyn),
                 "MPI_Put");
        check_rc(MPI_Win_flush(target, win_dyn), "MPI_Win_flush");
        check_rc(MPI_Get(rb, (int)n, MPI_BYTE, target,
                         dyn_at[target] + (MPI_Aint)disp, (int)n, MPI_BYTE,
                         win_dyn),
                 "MPI_Get");
        check_rc(MPI_Win_unlock_all(win_dyn), "MPI_Win_unlock_all");
        break;
    }
    gbuf_check(&wc_buf, "Win_create window");
    gbuf_check(&wd_buf, "dynamic window");
}

static const size_t sizes[] = {0,      1,      7,     24,     40,
                               41,     1000,   32768, 32769,  100003,
                               393216, 400000, 65536, 1 << 20};

/* One step of the workload on communicator c (this rank is a member). */
static void step(MPI_Comm c, uint64_t *s, MPI_Op noncomm)
{
    int cr, cs;
    MPI_Comm_rank(c, &cr);
    MPI_Comm_size(c, &cs);
    size_t bytes = sizes[mt_splitmix(s) % (sizeof sizes / sizeof *sizes)];
    int root = (int)(mt_splitmix(s) % (uint64_t)cs);
    int which = (int)(mt_splitmix(s) % 19);
    bool dbl = mt_splitmix(s) % 2;
    MPI_Datatype dt = dbl ? MPI_DOUBLE : MPI_INT;
    size_t esz = dbl ? sizeof(double) : sizeof(int);
    int count = (int)(bytes / esz);
    MPI_Op op = mt_splitmix(s) % 3 == 0 ? (dbl ? MPI_MAX : noncomm) : MPI_SUM;
    bool in_place = mt_splitmix(s) % 4 == 0;
    struct gbuf gs, gr;
    size_t per = bytes / (size_t)cs / esz * esz; /* a block per member */
    int pc = (int)(per / esz);
    unsigned char *sb = gbuf_new(&gs, bytes);
    unsigned char *rb = gbuf_new(&gr, bytes);
    mt_fill(sb, bytes, (uint32_t)(me + 1));
    MPI_Request req;
    switch (which) {
    case 0:
        mt_fill(rb, bytes, 7);
        check_rc(MPI_Bcast(rb, (int)bytes, MPI_BYTE, root, c), "MPI_Bcast");
        break;
    case 1:
        if (in_place && cr == root) {
            memcpy(rb, sb, bytes);
            check_rc(MPI_Reduce(MPI_IN_PLACE, rb, count, dt, op, root, c),
                     "MPI_Reduce");
        } else {
            check_rc(MPI_Reduce(sb, rb, count, dt, op, root, c), "MPI_Reduce");
        }
        break;
    case 2:
        check_rc(MPI_Allreduce(sb, rb, count, dt, op, c), "MPI_Allreduce");
        break;
    case 3:
        check_rc(MPI_Allgather(sb, pc, dt, rb, pc, dt, c), "MPI_Allgather");
        break;
    case 4:
        check_rc(MPI_Alltoall(sb, pc, dt, rb, pc, dt, c), "MPI_Alltoall");
        break;
    case 5:
        check_rc(MPI_Gather(sb, pc, dt, rb, pc, dt, root, c), "MPI_Gather");
        break;
    case 6:
        check_rc(MPI_Scatter(sb, pc, dt, rb, pc, dt, root, c), "MPI_Scatter");
        break;
    case 7:
        check_rc(MPI_Reduce_scatter_block(sb, rb, pc, dt, op, c),
                 "MPI_Reduce_scatter_block");
        break;
    case 8:
        check_rc(MPI_Scan(sb, rb, count, dt, op, c), "MPI_Scan");
        break;
    case 9:
        check_rc(MPI_Barrier(c), "MPI_Barrier");
        break;
    case 10:
        check_rc(MPI_Ibcast(rb, (int)bytes, MPI_BYTE, root, c, &req),
                 "MPI_Ibcast");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(Ibcast)");
        break;
    case 11:
        check_rc(MPI_Iallreduce(sb, rb, count, dt, op, c, &req),
                 "MPI_Iallreduce");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(Iallreduce)");
        break;
    case 12:
        check_rc(MPI_Ialltoall(sb, pc, dt, rb, pc, dt, c, &req),
                 "MPI_Ialltoall");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(Ialltoall)");
        break;
    case 13:
        check_rc(MPI_Ireduce(sb, rb, count, dt, op, root, c, &req),
                 "MPI_Ireduce");
        check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(Ireduce)");
        break;
    case 16:
    case 17:
    case 18:
        if (c == MPI_COMM_WORLD) {
            /* One-sided, the windows being the world's. */
            size_t n = bytes < WIN_BYTES / 2 ? bytes : WIN_BYTES / 2;
            size_t disp =
                (size_t)(mt_splitmix(s) % (WIN_BYTES - n + 1)) & ~(size_t)3;
            rma_step(which - 16, root, n, disp, sb, rb, mt_splitmix(s) % 2);
        } else {
            check_rc(MPI_Barrier(c), "MPI_Barrier");
        }
        break;
    default: {
        /* A message from member 'root' to the next: eager, rendezvous,
         * shared copy or write protocol by size; a wildcard receive every
         * other time. */
        int to = (root + 1) % cs;
        if (cs < 2)
            break;
        if (cr == root) {
            check_rc(MPI_Send(sb, (int)bytes, MPI_BYTE, to, which, c),
                     "MPI_Send");
        } else if (cr == to) {
            int src = which == 14 ? root : MPI_ANY_SOURCE;
            check_rc(MPI_Recv(rb, (int)bytes, MPI_BYTE, src, which, c,
                              MPI_STATUS_IGNORE),
                     "MPI_Recv");
        }
        break;
    }
    }
    gbuf_check_free(&gs, "send buffer");
    gbuf_check_free(&gr, "receive buffer");
}

/* ---- mode steer -----------------------------------------------------------
 */

/* The facts of struct fy_coll_cell (src/coll/shm.h) the directed scribble
 * relies on: the inline payload at byte 24 of a cell, where a reduction
 * by single copy (two ranks sharing the combining, or reduce_direct)
 * puts the root's receive-buffer address; the first two cells of a rank
 * are its blocking collectives'. */
enum { CELL_INL = 24, STEER_BYTES = 1 << 20, STEER_SHIFT = 64 };
/* And of struct fy_coll_slot: its data from byte 128, where a spread
 * MPI_Ireduce's root puts its receive-buffer address first; a rank's
 * slots lie back to back, one per context. */
enum { SLOT_DATA = 128 };
/* And of a cell: its data from byte 128, where a gatherv's root puts
 * its table of 24-byte entries, member r's address first in entry r. */
enum { CELL_DATA = 128, VASK_ENT = 24 };

static struct target *target_named(const char *name)
{
    for (int i = 0; i < ntargets; i++)
        if (strcmp(targets[i].name, name) == 0)
            return &targets[i];
    return NULL;
}

static void steer(MPI_Comm others)
{
    int count = STEER_BYTES / (int)sizeof(int);
    if (is_scribbler) {
        bool nb = strcmp(mode, "steer_ireduce") == 0 ||
                  strcmp(mode, "steer_igatherv") == 0;
        bool gv = strstr(mode, "gatherv") != NULL;
        struct target *coll = target_named(nb ? "ncoll" : "coll");
        /* gatherv: the last member's entry (members 0..P-2) */
        size_t at = (nb ? SLOT_DATA : CELL_DATA) +
                    (gv ? (size_t)(P - 2) * VASK_ENT : 0);
        if (!nb && !gv)
            at = CELL_INL;
        MT_CHECK(coll && coll->elem >= at + 16, "no collective cells");
        uint64_t want;
        MPI_Recv(&want, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        /* Rank 0's part of the region: the first two of its cells, or
         * every slot (its context's is one of them). */
        unsigned char *cells = coll->p;
        size_t ncells = nb ? coll->len / coll->elem : 2;
        _Atomic uint64_t *hit = NULL;
        double t0 = MPI_Wtime();
        while (!hit && MPI_Wtime() - t0 < 5)
            for (size_t i = 0; i < ncells && !hit; i++) {
                _Atomic uint64_t *w =
                    (_Atomic uint64_t *)(void *)(cells + i * coll->elem + at);
                if (atomic_load(w) == want)
                    hit = w;
            }
        if (!hit) {
            fprintf(stderr, "steer: rank 0's publication never showed its "
                            "receive buffer's address\n");
            _exit(7);
        }
        if (!getenv("MT_SCRIBBLE_DRY")) {
            atomic_store(hit, want + STEER_SHIFT);
            atomic_fetch_add(&writes_done, 1);
        }
        int go = 1;
        for (int r = 1; r < P - 1; r++)
            MPI_Send(&go, 1, MPI_INT, r, 2, MPI_COMM_WORLD);
        return;
    }
    struct gbuf gs, gr;
    int *sb = gbuf_new(&gs, STEER_BYTES), *rb = gbuf_new(&gr, STEER_BYTES);
    for (int i = 0; i < count; i++)
        sb[i] = i + me;
    int members;
    MPI_Comm_size(others, &members);
    int per = count / members;
    if (me == 0) {
        uint64_t a = (uint64_t)(uintptr_t)rb;
        if (strstr(mode, "gatherv")) /* the last block's */
            a += (uint64_t)(members - 1) * (uint64_t)per * sizeof(int);
        MPI_Send(&a, 1, MPI_UINT64_T, P - 1, 1, MPI_COMM_WORLD);
    } else {
        int go;
        MPI_Recv(&go, 1, MPI_INT, P - 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (strcmp(mode, "steer") == 0) {
        check_rc(MPI_Reduce(sb, rb, count, MPI_INT, MPI_SUM, 0, others),
                 "MPI_Reduce");
    } else if (strcmp(mode, "steer_ireduce") == 0) {
        MPI_Request rq;
        check_rc(MPI_Ireduce(sb, rb, count, MPI_INT, MPI_SUM, 0, others, &rq),
                 "MPI_Ireduce");
        check_rc(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
    } else if (strstr(mode, "gatherv")) {
        /* Blocks back to back that fill rb but for the remainder: the
         * moved entry would put the last one 64 bytes further. */
        int counts[64], displs[64];
        for (int r = 0; r < members; r++) {
            counts[r] = per;
            displs[r] = r * per;
        }
        if (strcmp(mode, "steer_gatherv") == 0) {
            check_rc(MPI_Gatherv(sb, per, MPI_INT, rb, counts, displs, MPI_INT,
                                 0, others),
                     "MPI_Gatherv");
        } else {
            MPI_Request rq;
            check_rc(MPI_Igatherv(sb, per, MPI_INT, rb, counts, displs, MPI_INT,
                                  0, others, &rq),
                     "MPI_Igatherv");
            check_rc(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
        }
    } else {
        /* A gather of blocks that fill rb: the moved address would put
         * the last block 64 bytes over rb's end. */
        check_rc(MPI_Gather(sb, per, MPI_INT, rb, per, MPI_INT, 0, others),
                 "MPI_Gather");
    }
    gbuf_check_free(&gs, "send buffer");
    gbuf_check_free(&gr, "receive buffer");
}

/* The mailbox slot's facts (src/chan/shm_layout.h): 64-byte slots, the
 * control fields from byte 16, their address second. */
enum { SLOT = 64, SLOT_ADDR = 24 };

/* Wait (outside MPI) up to 10 s for file 'path', then remove it. */
static void await_file(const char *path)
{
    for (int i = 0; i < 2000 && access(path, F_OK) != 0; i++)
        usleep(5000);
    unlink(path);
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    MT_CHECK(f, "create %s", path);
    fclose(f);
}

static void offer(const char *marker)
{
    char flag[256], out[256];
    snprintf(flag, sizeof flag, "/tmp/%s.go", marker);
    snprintf(out, sizeof out, "/tmp/%s.out", marker);
    if (me == 2) {
        struct target *fbox = target_named("fbox");
        MT_CHECK(fbox, "no mailbox region");
        uint64_t want;
        MPI_Recv(&want, 1, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        _Atomic uint64_t *hit = NULL;
        for (uint64_t off = SLOT_ADDR; !hit && off + 8 <= fbox->len;
             off += SLOT) {
            _Atomic uint64_t *w = (_Atomic uint64_t *)(void *)(fbox->p + off);
            if (atomic_load(w) == want)
                hit = w;
        }
        if (hit && !getenv("MT_SCRIBBLE_DRY")) {
            atomic_store(hit, want + STEER_SHIFT);
            atomic_fetch_add(&writes_done, 1);
        }
        touch(flag);
        if (!hit) {
            fprintf(stderr, "offer: no mailbox slot holds rank 0's receive "
                            "buffer's address\n");
            _exit(7);
        }
        return;
    }
    struct gbuf g;
    unsigned char *b = gbuf_new(&g, STEER_BYTES);
    if (me == 0) {
        /* Only once rank 1 has left MPI, so that it cannot take the
         * offer out of its mailbox before the scribbler moves it. */
        await_file(out);
        MPI_Request r;
        check_rc(MPI_Irecv(b, STEER_BYTES, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r),
                 "MPI_Irecv");
        uint64_t a = (uint64_t)(uintptr_t)b;
        MPI_Send(&a, 1, MPI_UINT64_T, 2, 1, MPI_COMM_WORLD);
        check_rc(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        /* Rank 1 writes the front chunks, this rank (helping) the back
         * ones: a moved address shows inside the buffer, not only at its
         * guard. */
        size_t bad = mt_find_bad(b, STEER_BYTES, 3);
        if (bad != STEER_BYTES) {
            fprintf(stderr,
                    "rank 0: the message was written elsewhere in its "
                    "buffer (first wrong byte at %zu)\n",
                    bad);
            _exit(4);
        }
    } else {
        /* Outside MPI until the scribbler is done: the offer stays in
         * our mailbox. */
        touch(out);
        await_file(flag);
        mt_fill(b, STEER_BYTES, 3);
        check_rc(MPI_Send(b, STEER_BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD),
                 "MPI_Send");
    }
    gbuf_check_free(&g, "message buffer");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    mt_rank = me;
    if (argc < 4 || P < 2) {
        fprintf(stderr, "usage: shm_scribble MARKER SEED none|own|any|all "
                        "(2 or more ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    seed = strtoull(argv[2], NULL, 10);
    mode = argv[3];
    is_scribbler = me == P - 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm others;
    MPI_Comm_split(MPI_COMM_WORLD, is_scribbler ? MPI_UNDEFINED : 0, me,
                   &others);
    if (others != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(others, MPI_ERRORS_RETURN);
    MPI_Op noncomm;
    MPI_Op_create(lin, 0, &noncomm);
    signal(SIGALRM, on_alarm);

    if (strcmp(mode, "steer") == 0 || strcmp(mode, "steer_gather") == 0 ||
        strcmp(mode, "steer_gatherv") == 0 ||
        strcmp(mode, "steer_igatherv") == 0 ||
        strcmp(mode, "steer_ireduce") == 0 || strcmp(mode, "offer") == 0) {
        int least = strcmp(mode, "steer_ireduce") == 0 ? 4 : 3;
        if (mode[0] == 's' ? P < least : P != 3) {
            fprintf(stderr, "shm_scribble: mode %s takes %d%s ranks\n", mode,
                    least, mode[0] == 's' ? " or more" : "");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (is_scribbler)
            find_targets(me, P);
        alarm(SCRIBBLE_STALL_S + 10);
        if (mode[0] == 's')
            steer(others);
        else
            offer(argv[1]);
        alarm(0);
        if (is_scribbler)
            printf("shm_scribble: %s: the address moved, no refusal\n", mode);
        if (others != MPI_COMM_NULL)
            MPI_Comm_free(&others);
        MPI_Finalize();
        return 0;
    }
    windows_open();
    pthread_t th;
    bool scribbling = is_scribbler && strcmp(mode, "none") != 0;
    if (scribbling) {
        find_targets(me, P);
        MT_CHECK(pthread_create(&th, NULL, scribbler, NULL) == 0,
                 "pthread_create");
    }
    uint64_t s = seed;
    for (int i = 0; i < SCRIBBLE_STEPS; i++) {
        alarm(SCRIBBLE_STALL_S);
        /* Same draws on every rank: which communicator, then the step. */
        bool world = P == 2 || mt_splitmix(&s) % 2;
        uint64_t sub = mt_splitmix(&s);
        if (world)
            step(MPI_COMM_WORLD, &sub, noncomm);
        else if (others != MPI_COMM_NULL)
            step(others, &sub, noncomm);
    }
    if (scribbling) {
        pthread_join(th, NULL);
        printf("shm_scribble: seed %llu mode %s: %d writes, workload done; "
               "scribbled on:",
               (unsigned long long)seed, mode, atomic_load(&writes_done));
        for (int i = 0; i < ntargets; i++)
            printf(" %s%s", targets[i].name, targets[i].hits ? "*" : "");
        printf("\n");
    }
    alarm(SCRIBBLE_STALL_S);
    windows_close();
    MPI_Op_free(&noncomm);
    if (others != MPI_COMM_NULL)
        MPI_Comm_free(&others);
    MPI_Finalize();
    alarm(0);
    return 0;
}
