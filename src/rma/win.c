/* SPDX-License-Identifier: MIT */
/* Windows: creation (a memfd made by the lowest rank of the window on each
 * node and opened by the node's others through /proc/<pid>/fd), the epochs
 * (fence, locks, PSCW) on the shared control block described in rma.h, and
 * the data movement: loads and stores for memory in the shared mapping,
 * the one-sided mechanism (CMA or /proc/<pid>/mem) for user memory, or
 * active messages (am.c) to ranks on other nodes and where no mechanism
 * reaches the other ranks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "boot/boot.h"
#include "chan/chan.h"
#include "coll/coll.h"
#include "p2p/p2p.h"
#include "rma/rma.h"
#include "util/handle.h"
#include "util/mt.h"
#include "util/util.h"
#include "xfer/xfer.h"

struct fy_handle_table fy_rma_win_table = FY_HANDLE_TABLE_INIT(FY_HT_WIN);
static struct fy_rma_win *s_live; /* every live window */
/* How user memory of other ranks is reached (Win_create, dynamic):
 * s_remote, and s_small for pieces up to s_small_max bytes (procmem's
 * pread/pwrite on a file opened once costs less per call than CMA, which
 * looks the peer up and checks ptrace access on every call; CMA moves
 * more bytes per second: bench/README.md, "One-sided"). */
static const struct fy_xfer_ops *s_remote, *s_small;
static size_t s_small_max;

/* Move one piece between our 'local' and the peer's 'remote'. */
static inline int remote_copy(const struct fy_rma_peer *p, void *local,
                              uint64_t remote, size_t len, bool get)
{
    const struct fy_xfer_ops *ops = len <= s_small_max ? s_small : s_remote;
    ssize_t n = ops->copy_remote(p->pid, local, remote, len, get);
    return n == (ssize_t)len ? 0 : n < 0 ? (int)n : -EIO;
}

int fy_rma_remote_copy(const struct fy_rma_win *w, int target, void *local,
                       uint64_t remote, size_t len, bool get)
{
    return remote_copy(&w->peers[target], local, remote, len, get);
}

/* ---- waiting ------------------------------------------------------------
 * Waits for a word another rank changes: progress everything else, spin,
 * yield, then sleep on our doorbell (fy_progress_idle_until); whoever
 * releases what we wait for rings every member (wake_all). */

static bool (*s_peek_fn)(void *);
static void *s_peek_arg;

static bool peek_thunk(void)
{
    return s_peek_fn(s_peek_arg);
}

/* Loop until take(arg) succeeds (it may acquire something); peek(arg)
 * says, without side effects, whether trying again may be worth it (the
 * idle step polls it while sleeping: it must not acquire). */
static void wait_until(bool (*take)(void *), bool (*peek)(void *), void *arg)
{
    if (take(arg))
        return;
    /* Progress needs the engine lock: accumulates come here holding only
     * their window's lock (util/mt.h: window -> engine is in order). */
    int locked = fy_mt_enter();
    unsigned spins = 0;
    while (!take(arg)) {
        if (fy_progress()) {
            spins = 0;
            continue;
        }
        s_peek_fn = peek;
        s_peek_arg = arg;
        fy_progress_idle_until(&spins, peek_thunk);
    }
    fy_mt_leave(&locked);
}

static void wake_all(const struct fy_rma_win *w)
{
    for (int i = 0; i < w->size; i++)
        if (i != w->rank)
            fy_wake(w->peers[i].world);
}

/* ---- creation ------------------------------------------------------------ */

struct member_info {
    uint64_t size;
    uint64_t base; /* user memory (create) */
    uint64_t ctl;  /* where this member mapped the control block */
    uint64_t rlo;  /* Win_create: the member's pages remap.c moved ... */
    uint64_t rlen;
    int32_t rfd;  /* ... onto this memfd of its (-1: none) */
    int32_t rerr; /* 0, or why it did not move them */
    int32_t disp_unit;
    int32_t pid;
};

struct creator_info {
    int32_t pid, fd, err;
};

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* The control block: header, slots, PSCW counters, then for windows on
 * user memory the hand-over beats and boxes (ho.c) from 'ho_off'. */
static size_t ctl_bytes(int n, bool ho, size_t *ho_off)
{
    size_t b = sizeof(struct fy_rma_slot) * (size_t)(n + 1) +
               2 * sizeof(uint32_t) * (size_t)n * (size_t)n;
    b = (b + 63) / 64 * 64;
    *ho_off = b;
    if (ho)
        b += sizeof(struct fy_rma_beat) * (size_t)n +
             sizeof(struct fy_rma_box) * (size_t)n * (size_t)n;
    return b;
}

/* Agree on the worst error of the members (errors are negative). */
static int agree(struct fy_comm *c, int err)
{
    int e = -err, worst = 0;
    int rc = fy_coll_allreduce(&e, &worst, 1, fy_dtype_get(MPI_INT),
                               fy_op_get(MPI_MAX), c, NULL);
    return rc ? rc : -worst;
}

/* The node's lowest rank of the window ('leader') makes the memfd; the
 * node's others open it through /proc (the same permission as reading its
 * memory: same user, not ptrace-protected). */
static int map_shared(struct fy_rma_win *w, size_t len, int leader)
{
    struct creator_info ci = {.pid = (int32_t)getpid(), .fd = -1, .err = 0};
    int fd = -1;
    if (w->rank == leader) {
        fd = memfd_create("ferry-win", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
            ci.err = -errno;
            FY_ERROR("MPI window: memfd of %zu bytes: %m", len);
        }
        ci.fd = fd;
    }
    int rc;
    if (!w->spans) {
        rc = fy_coll_bcast(&ci, sizeof(ci), fy_dtype_get(MPI_BYTE), 0, w->comm,
                           NULL);
    } else {
        /* Each node's leader: everyone's, ours picked out. */
        struct creator_info *all = calloc((size_t)w->size, sizeof(*all));
        rc = agree(w->comm, all ? 0 : -ENOMEM);
        if (!rc)
            rc = fy_coll_allgather(&ci, sizeof(ci), fy_dtype_get(MPI_BYTE), all,
                                   sizeof(ci), fy_dtype_get(MPI_BYTE), w->comm,
                                   NULL);
        if (!rc)
            ci = all[leader];
        free(all);
    }
    if (rc)
        goto close_fd;
    int err = ci.err;
    if (!err && w->rank != leader) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)ci.pid, (int)ci.fd);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            err = -errno;
            FY_ERROR("MPI window: cannot open rank %d's window memory %s: %m "
                     "(ptrace restrictions forbid sharing it)",
                     leader, path);
        }
    }
    if (!err) {
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            err = -errno;
            FY_ERROR("MPI window: mmap of %zu bytes: %m", len);
        } else {
            w->map = p;
            w->map_len = len;
        }
    }
    /* Every member has the memfd open (or failed) before rank 0 may close
     * it; a mapping outlives its descriptor. */
    rc = agree(w->comm, err);
close_fd:
    if (fd >= 0)
        close(fd);
    if (rc && w->map) {
        munmap(w->map, w->map_len);
        w->map = NULL;
    }
    return rc;
}

/* Pick the mechanism for user memory once: FERRY_XFER when it names a
 * one-sided one, else CMA (unless FERRY_NO_CMA), then /proc/<pid>/mem.
 * FERRY_XFER naming a two-sided mechanism allows none: NULL (the windows
 * then use active messages). */
static const struct fy_xfer_ops *remote_ops(void)
{
    if (s_remote)
        return s_remote;
    int forced = fy_xfer_parse(fy_env_str(FY_ENV_XFER));
    if (forced >= 0 && forced != FY_XFER_CMA && forced != FY_XFER_PROCMEM)
        return NULL;
    const struct fy_xfer_ops *cand[2] = {&fy_xfer_cma_ops,
                                         &fy_xfer_procmem_ops};
    for (int i = 0; i < 2; i++) {
        int kind = i == 0 ? FY_XFER_CMA : FY_XFER_PROCMEM;
        if (forced >= 0 &&
            (forced == FY_XFER_CMA || forced == FY_XFER_PROCMEM) &&
            forced != kind)
            continue;
        if (kind == FY_XFER_CMA && fy_env_int(FY_ENV_NO_CMA))
            continue;
        if (cand[i]->copy_remote && cand[i]->probe(NULL, 0)) {
            s_remote = s_small = cand[i];
            break;
        }
    }
    if (!s_remote)
        return NULL;
    long long small = fy_env_int(FY_ENV_RMA_PROCMEM_MAX);
    if (s_remote == &fy_xfer_cma_ops && forced != FY_XFER_CMA && small > 0 &&
        fy_xfer_procmem_ops.probe(NULL, 0)) {
        s_small = &fy_xfer_procmem_ops;
        s_small_max = (size_t)small;
    }
    FY_INFO("one-sided windows on user memory use %s, %s up to %zu bytes",
            s_remote->name, s_small->name, s_small_max);
    return s_remote;
}

/* Read every peer's control-block magic through the mechanism: proves it
 * reaches them (siblings may be ptrace-protected from each other). */
static int check_remote(struct fy_rma_win *w, const struct member_info *mi)
{
    const struct fy_xfer_ops *ops = remote_ops();
    if (!ops) {
        FY_ERROR("MPI_Win_create: neither CMA nor /proc/<pid>/mem works "
                 "here, so other ranks' memory cannot be reached");
        return -EPERM;
    }
    for (int i = 0; i < w->size; i++) {
        if (i == w->rank || w->peers[i].remote)
            continue;
        uint64_t magic = 0;
        if (s_small != ops &&
            (s_small->copy_remote((pid_t)mi[i].pid, &magic, mi[i].ctl,
                                  sizeof(magic), true) != sizeof(magic) ||
             magic != FY_RMA_MAGIC)) {
            /* Siblings may be reachable by one mechanism only. */
            FY_INFO("MPI_Win_create: %s cannot read rank %d, %s only",
                    s_small->name, i, ops->name);
            s_small = ops;
            s_small_max = 0;
        }
        magic = 0;
        ssize_t n = ops->copy_remote((pid_t)mi[i].pid, &magic, mi[i].ctl,
                                     sizeof(magic), true);
        if (n != (ssize_t)sizeof(magic) || magic != FY_RMA_MAGIC) {
            FY_INFO("MPI_Win_create: %s cannot read rank %d (pid %d): %s",
                    ops->name, i, (int)mi[i].pid,
                    n < 0 ? strerror((int)-n) : "bad control block");
            return n < 0 ? (int)n : -EPROTO;
        }
    }
    return 0;
}

/* Unmap our mappings of the peers' moved pages (remap.c). */
static void unmap_mirrors(struct fy_rma_win *w)
{
    for (int i = 0; w->peers && i < w->size; i++)
        if (w->peers[i].mirror) {
            munmap(w->peers[i].mirror, w->peers[i].mirror_len);
            w->peers[i].mirror = NULL;
        }
}

/* Whether Win_create moves window memory onto shared pages: FERRY_RMA_REMAP
 * and no mechanism forced (a forced one is what the job wants to use). */
static bool remap_wanted(void)
{
    return fy_env_int(FY_ENV_RMA_REMAP) &&
           fy_xfer_parse(fy_env_str(FY_ENV_XFER)) == FY_XFER_AUTO;
}

/* Win_create, after the members' remap results are gathered: map every
 * peer's moved pages (M4: all members or none, agreed). Sets w->in_map
 * and the mirrors, or undoes this rank's remap. */
static int share_user_memory(struct fy_rma_win *w, const struct member_info *mi)
{
    int err = 0;
    for (int i = 0; i < w->size && !err; i++) {
        const struct member_info *m = &mi[i];
        if (m->rerr)
            err = m->rerr < 0 ? m->rerr : -EPROTO;
        else if (m->size && (m->rfd < 0 || m->base < m->rlo ||
                             m->base - m->rlo > m->rlen ||
                             m->size > m->rlen - (m->base - m->rlo)))
            err = -EPROTO; /* a member's description does not add up */
    }
    bool all = !err; /* the same on every member: from the gathered data */
    for (int i = 0; all && !err && i < w->size; i++) {
        if (i == w->rank || !mi[i].size)
            continue;
        void *m =
            fy_rma_remap_peer((pid_t)mi[i].pid, mi[i].rfd, (size_t)mi[i].rlen);
        if (!m) {
            err = errno ? -errno : -EIO;
            FY_INFO("MPI_Win_create: cannot map rank %d's window memory: %s", i,
                    strerror(-err));
            break;
        }
        w->peers[i].mirror = m;
        w->peers[i].mirror_len = (size_t)mi[i].rlen;
    }
    int mine = err != 0, any = 1, rc = 0;
    if (all)
        rc = fy_coll_allreduce(&mine, &any, 1, fy_dtype_get(MPI_INT),
                               fy_op_get(MPI_MAX), w->comm, NULL);
    if (rc || any) {
        unmap_mirrors(w);
        fy_rma_remap_restore(&w->remap);
        return rc; /* not shared: the single-copy paths serve it */
    }
    w->in_map = true;
    return 0;
}

static void win_release(struct fy_rma_win *w)
{
    fy_rma_ho_free(w);
    fy_rma_am_free(w);
    unmap_mirrors(w);
    fy_rma_remap_restore(&w->remap);
    if (w->map)
        munmap(w->map, w->map_len);
    if (w->comm)
        fy_comm_free(w->comm);
    if (w->group)
        fy_group_release(w->group);
    for (int i = 0; w->peers && i < w->size; i++)
        free(w->peers[i].rtab);
    free(w->peers);
    free(w->regions);
    free(w->lockmode);
    free(w->nocheck);
    free(w->access);
    free(w->exposed);
    free(w->nstart);
    free(w->npost);
    if (w->handle)
        fy_handle_release(&fy_rma_win_table, w->handle);
    free(w);
}

int fy_rma_win_create(struct fy_comm *parent, int flavor, MPI_Aint size,
                      int disp_unit, bool noncontig, void *base,
                      struct fy_rma_win **out)
{
    /* Members on other nodes; this node's lowest rank of the window makes
     * its control block. The same answer on every member. */
    bool spans = false;
    int leader = -1;
    for (int i = 0; i < parent->size; i++) {
        if (fy_boot_local(fy_comm_world_rank(parent, i)) < 0)
            spans = true;
        else if (leader < 0)
            leader = i;
    }
    if (spans && flavor == MPI_WIN_FLAVOR_SHARED)
        return -ENOTSUP;
    struct fy_rma_win *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->flavor = flavor;
    w->spans = spans;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->remap.fd = -1;
    int rc = fy_comm_create_from_group(parent, parent->group, &w->comm);
    if (rc) {
        free(w);
        return rc;
    }
    w->group = parent->group;
    fy_group_retain(w->group);
    int n = w->size = parent->size;
    w->rank = parent->rank;
    w->disp_unit = disp_unit;
    w->wsize = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    w->peers = calloc((size_t)n, sizeof(*w->peers));
    w->lockmode = calloc((size_t)n, 1);
    w->nocheck = calloc((size_t)n, 1);
    w->access = calloc((size_t)n, sizeof(bool));
    w->exposed = calloc((size_t)n, sizeof(bool));
    w->nstart = calloc((size_t)n, sizeof(uint32_t));
    w->npost = calloc((size_t)n, sizeof(uint32_t));
    struct member_info *mi = calloc((size_t)n, sizeof(*mi));
    int err = 0;
    if (!w->peers || !w->lockmode || !w->nocheck || !w->access || !w->exposed ||
        !w->nstart || !w->npost || !mi)
        err = -ENOMEM;
    /* Sizes first: the layout of the shared memory depends on them. */
    struct member_info me = {.size = (uint64_t)w->wsize,
                             .base = (uint64_t)(uintptr_t)base,
                             .disp_unit = disp_unit,
                             .pid = (int32_t)getpid(),
                             .rfd = -1,
                             .rerr = -ENOTSUP};
    /* Win_create: our pages onto a memfd the others will map (remap.c);
     * not for windows that span nodes (nothing shared with the others). */
    if (!err && flavor == MPI_WIN_FLAVOR_CREATE && n > 1 && !spans &&
        remap_wanted()) {
        me.rerr = fy_rma_remap_own(base, (size_t)w->wsize, &w->remap);
        me.rfd = (int32_t)w->remap.fd;
        me.rlo = (uint64_t)w->remap.lo;
        me.rlen = (uint64_t)w->remap.len;
    }
    rc = agree(w->comm, err);
    if (!rc)
        rc = fy_coll_allgather(&me, sizeof(me), fy_dtype_get(MPI_BYTE), mi,
                               sizeof(me), fy_dtype_get(MPI_BYTE), w->comm,
                               NULL);
    if (rc)
        goto undo;

    if (flavor == MPI_WIN_FLAVOR_CREATE && n > 1 && !spans) {
        rc = share_user_memory(w, mi);
        if (rc)
            goto undo;
    }
    size_t pg = page_size();
    bool in_shm =
        flavor == MPI_WIN_FLAVOR_SHARED || flavor == MPI_WIN_FLAVOR_ALLOCATE;
    bool contig = flavor == MPI_WIN_FLAVOR_SHARED && !noncontig;
    if (in_shm)
        w->in_map = true;
    /* User memory some rank reaches by a mechanism: hand-over boxes. */
    bool user = !w->in_map && n > 1;
    /* Hand-over boxes (n x n of them) only where ho.c may use them: not
     * on windows that span nodes (active messages instead). */
    bool boxes = user && !spans;
    size_t ho_off;
    uint64_t off = round_up(ctl_bytes(n, boxes, &ho_off), pg);
    uint64_t *offs = NULL;
    if (in_shm) {
        offs = calloc((size_t)n, sizeof(*offs));
        if (!offs) {
            rc = -ENOMEM; /* same on every member in practice */
            goto undo;
        }
        for (int i = 0; i < n; i++) {
            if (fy_boot_local(fy_comm_world_rank(parent, i)) < 0)
                continue; /* its memory is on its node */
            if (!contig)
                off = round_up(off, pg);
            offs[i] = off;
            off += mi[i].size;
        }
    }
    rc = map_shared(w, round_up(off ? off : 1, pg), leader);
    if (rc) {
        free(offs);
        goto undo;
    }
    w->hdr = (struct fy_rma_hdr *)w->map;
    w->slot = (struct fy_rma_slot *)w->map + 1;
    w->posted = (_Atomic uint32_t *)(w->slot + n);
    w->done = w->posted + (size_t)n * (size_t)n;
    if (boxes) {
        w->beats = (struct fy_rma_beat *)(w->map + ho_off);
        w->boxes = (struct fy_rma_box *)(w->beats + n);
    }
    if (w->rank == leader) {
        w->hdr->magic = FY_RMA_MAGIC;
        w->hdr->nranks = (uint32_t)n;
    }
    for (int i = 0; i < n; i++) {
        struct fy_rma_peer *p = &w->peers[i];
        p->size = mi[i].size;
        p->disp_unit = mi[i].disp_unit;
        p->pid = mi[i].pid;
        p->world = fy_comm_world_rank(parent, i);
        p->remote = fy_boot_local(p->world) < 0;
        p->direct = (w->in_map && !p->remote) || i == w->rank;
        p->base = p->remote   ? mi[i].base /* its own address: below */
                  : in_shm    ? (uint64_t)(uintptr_t)(w->map + offs[i])
                  : p->mirror ? (uint64_t)(uintptr_t)p->mirror +
                                    (mi[i].base - mi[i].rlo)
                              : mi[i].base;
    }
    free(offs);
    w->base = flavor == MPI_WIN_FLAVOR_DYNAMIC
                  ? NULL
                  : (void *)(uintptr_t)w->peers[w->rank].base;
    /* The magic is written before the others read it: the allgather below
     * orders the leader's store before their copies. It also tells ranks
     * on other nodes where our window memory is in our address space. */
    me.ctl = (uint64_t)(uintptr_t)w->map;
    me.base = (uint64_t)(uintptr_t)w->base;
    rc = fy_coll_allgather(&me, sizeof(me), fy_dtype_get(MPI_BYTE), mi,
                           sizeof(me), fy_dtype_get(MPI_BYTE), w->comm, NULL);
    for (int i = 0; !rc && i < n; i++)
        if (w->peers[i].remote)
            w->peers[i].base = mi[i].base;
    bool all_am = false;
    if (!rc && user &&
        agree(w->comm, remote_ops() ? check_remote(w, mi) : -EPERM) != 0) {
        /* No single-copy mechanism reaches every member: the targets
         * serve requests themselves (active messages) - unless the job
         * was forced onto a one-sided mechanism (a test forced onto a
         * mechanism must not pass on another one). */
        int forced = fy_xfer_parse(fy_env_str(FY_ENV_XFER));
        if (fy_env_int(FY_ENV_XFER_REQUIRE) &&
            (forced == FY_XFER_CMA || forced == FY_XFER_PROCMEM))
            fy_fatal(77,
                     "FERRY_XFER_REQUIRE: %s does not reach the window's "
                     "ranks; not falling back to active messages",
                     fy_xfer_registry[forced]->name);
        all_am = true;
        FY_INFO("MPI window on user memory: active messages (no cma or "
                "procmem between its ranks)");
    }
    if (!rc && (all_am || spans)) {
        rc = agree(w->comm, fy_rma_am_init(w));
        if (!rc && spans)
            FY_INFO("MPI window spanning nodes: active messages to the ranks "
                    "on other nodes");
    }
    for (int i = 0; i < n; i++)
        w->peers[i].am = !w->peers[i].direct && (w->peers[i].remote || all_am);
    if (!rc && user && !w->am)
        rc = agree(w->comm, fy_rma_ho_init(w));
    if (rc)
        goto undo;
    fy_rma_thread_want(w->am != NULL);
    if (fy_handle_alloc(&fy_rma_win_table, w, &w->handle) != 0) {
        rc = -ENOMEM;
        goto undo;
    }
    free(mi);
    w->next = s_live;
    s_live = w;
    *out = w;
    return 0;
undo:
    free(mi);
    win_release(w);
    return rc;
}

int fy_rma_win_free(struct fy_rma_win *w)
{
    /* Nobody may still be reaching into our memory or control block. */
    fy_rma_ho_settle(w, -1);
    atomic_thread_fence(memory_order_seq_cst);
    int rc = fy_coll_barrier(w->comm, NULL);
    for (struct fy_rma_win **pp = &s_live; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    win_release(w);
    return rc;
}

void fy_rma_finalize(void)
{
    fy_rma_thread_stop();
    while (s_live) {
        struct fy_rma_win *w = s_live;
        s_live = w->next;
        win_release(w);
    }
}

/* ---- epochs -------------------------------------------------------------- */

int fy_rma_fence(struct fy_rma_win *w, int assert)
{
    /* Our stores to any window memory are visible before the barrier lets
     * anyone past; theirs are visible to us after it. */
    fy_rma_ho_settle(w, -1);
    atomic_thread_fence(memory_order_seq_cst);
    (void)fy_rma_am_flush(w, -1); /* errors: fy_rma_am_error */
    int rc = fy_coll_barrier(w->comm, NULL);
    atomic_thread_fence(memory_order_seq_cst);
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    return rc;
}

struct lock_try {
    _Atomic uint32_t *word;
    bool exclusive;
};

static bool lock_try(void *arg)
{
    struct lock_try *t = arg;
    uint32_t v = atomic_load_explicit(t->word, memory_order_relaxed);
    for (;;) {
        if (t->exclusive ? v != 0 : (v & FY_RMA_WRITER) != 0)
            return false;
        uint32_t nv = t->exclusive ? FY_RMA_WRITER : v + 1;
        /* L1: acquire pairs with U1 in unlock: the previous holder's
         * stores to the target are visible once we own the lock. */
        if (atomic_compare_exchange_weak_explicit(
                t->word, &v, nv, memory_order_acquire, memory_order_relaxed))
            return true;
    }
}

static bool lock_peek(void *arg)
{
    struct lock_try *t = arg;
    uint32_t v = atomic_load_explicit(t->word, memory_order_relaxed);
    return t->exclusive ? v == 0 : (v & FY_RMA_WRITER) == 0;
}

/* A target on another node takes and releases its lock for us (am.c). */
static void lock_one(struct fy_rma_win *w, int target, bool exclusive)
{
    if (w->peers[target].remote) {
        (void)fy_rma_am_lock(w, target, exclusive); /* errors: am_error */
        return;
    }
    struct lock_try t = {&w->slot[target].lock, exclusive};
    wait_until(lock_try, lock_peek, &t);
}

static void unlock_word(struct fy_rma_win *w, int target, bool exclusive)
{
    /* U1: release pairs with L1: our stores happen before the next
     * holder's accesses. */
    if (exclusive)
        atomic_store_explicit(&w->slot[target].lock, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(&w->slot[target].lock, 1,
                                  memory_order_release);
}

/* After every operation of the epoch was applied (flushed). */
static void unlock_one(struct fy_rma_win *w, int target, bool exclusive)
{
    if (w->peers[target].remote)
        (void)fy_rma_am_unlock(w, target, exclusive);
    else
        unlock_word(w, target, exclusive);
}

bool fy_rma_lock_try_local(struct fy_rma_win *w, bool exclusive)
{
    struct lock_try t = {&w->slot[w->rank].lock, exclusive};
    return lock_try(&t);
}

void fy_rma_unlock_local(struct fy_rma_win *w, bool exclusive)
{
    unlock_word(w, w->rank, exclusive);
    wake_all(w);
}

void fy_rma_lock(struct fy_rma_win *w, int type, int target, int assert)
{
    bool nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    if (!nocheck)
        lock_one(w, target, type == MPI_LOCK_EXCLUSIVE);
    w->lockmode[target] = (uint8_t)(type == MPI_LOCK_EXCLUSIVE ? 2 : 1);
    w->nocheck[target] = nocheck;
    w->nlocks++;
}

void fy_rma_unlock(struct fy_rma_win *w, int target)
{
    fy_rma_ho_settle(w, target);
    /* Applied before the lock goes (a remote target's unlock reply says
     * so by itself). */
    if (!w->peers[target].remote || w->nocheck[target])
        (void)fy_rma_am_flush(w, target);
    atomic_thread_fence(memory_order_seq_cst); /* the epoch's operations */
    if (!w->nocheck[target]) {
        unlock_one(w, target, w->lockmode[target] == 2);
        wake_all(w);
    }
    w->lockmode[target] = 0;
    w->nlocks--;
}

void fy_rma_lock_all(struct fy_rma_win *w, int assert)
{
    w->lock_all_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    if (!w->lock_all_nocheck)
        for (int t = 0; t < w->size; t++)
            lock_one(w, t, false);
    w->lock_all = true;
}

void fy_rma_unlock_all(struct fy_rma_win *w)
{
    fy_rma_ho_settle(w, -1);
    (void)fy_rma_am_flush(w, -1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!w->lock_all_nocheck) {
        /* Remote targets all at once (their round trips overlap). */
        if (w->spans)
            (void)fy_rma_am_unlock(w, -1, false); /* errors: am_error */
        for (int t = 0; t < w->size; t++)
            if (!w->peers[t].remote)
                unlock_word(w, t, false);
        wake_all(w);
    }
    w->lock_all = false;
}

void fy_rma_flush_pending(struct fy_rma_win *w)
{
    fy_rma_ho_settle(w, -1);
    (void)fy_rma_am_flush(w, -1);
}

/* PSCW. P1: the release increments pair with the acquire loads in the
 * waits: stores before MPI_Win_post / MPI_Win_complete are visible once
 * the other side sees the count. */
void fy_rma_post(struct fy_rma_win *w, int n, const int *ranks)
{
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < n; i++) {
        int o = ranks[i];
        w->exposed[o] = true;
        w->npost[o]++;
        if (w->peers[o].remote) {
            (void)fy_rma_am_signal(w, o, FY_RMA_AM_POST);
            continue;
        }
        atomic_fetch_add_explicit(&w->posted[(size_t)w->rank * w->size + o], 1,
                                  memory_order_release);
        fy_wake(w->peers[o].world);
    }
    w->posted_open = true;
}

struct count_wait {
    _Atomic uint32_t *word;
    uint32_t want;
};

static bool count_ready(void *arg)
{
    struct count_wait *c = arg;
    return (int32_t)(atomic_load_explicit(c->word, memory_order_acquire) -
                     c->want) >= 0;
}

void fy_rma_start(struct fy_rma_win *w, int n, const int *ranks)
{
    for (int i = 0; i < n; i++) {
        int t = ranks[i];
        w->access[t] = true;
        w->nstart[t]++;
        struct count_wait c = {&w->posted[(size_t)t * w->size + w->rank],
                               w->nstart[t]};
        wait_until(count_ready, count_ready, &c);
    }
    w->started = true;
}

void fy_rma_complete(struct fy_rma_win *w)
{
    for (int t = 0; t < w->size; t++)
        if (w->access[t]) {
            fy_rma_ho_settle(w, t);
            (void)fy_rma_am_flush(w, t);
        }
    atomic_thread_fence(memory_order_seq_cst);
    for (int t = 0; t < w->size; t++) {
        if (!w->access[t])
            continue;
        w->access[t] = false;
        if (w->peers[t].remote) {
            /* After the epoch's requests to t: applied before it counts. */
            (void)fy_rma_am_signal(w, t, FY_RMA_AM_DONE);
            continue;
        }
        atomic_fetch_add_explicit(&w->done[(size_t)t * w->size + w->rank], 1,
                                  memory_order_release);
        fy_wake(w->peers[t].world);
    }
    w->started = false;
}

bool fy_rma_wait(struct fy_rma_win *w, bool block)
{
    for (int o = 0; o < w->size; o++) {
        if (!w->exposed[o])
            continue;
        struct count_wait c = {&w->done[(size_t)w->rank * w->size + o],
                               w->npost[o]};
        if (!count_ready(&c)) {
            if (!block) {
                fy_progress_poll();
                return false;
            }
            wait_until(count_ready, count_ready, &c);
        }
    }
    for (int o = 0; o < w->size; o++)
        w->exposed[o] = false;
    w->posted_open = false;
    atomic_thread_fence(memory_order_seq_cst);
    return true;
}

/* ---- dynamic windows -----------------------------------------------------
 * Each rank keeps its attached regions in a private table sorted by base
 * then size (w->regions; those of non-zero size disjoint, so the region
 * holding an address is found by binary search). Its slot publishes the
 * table's address and length, and a copy of it while it is small, under
 * the seqlock 'aseq'. An origin checks a small table in the slot; a larger
 * one it copies from the target's memory through the one-sided mechanism
 * once per change of aseq and validates, then searches its copy. Origins
 * that reach the target only by active messages leave a large table's
 * check to the target, which checks every request (am.c). */

bool fy_rma_regions_cover(const struct fy_rma_region *tab, uint32_t n,
                          uint64_t lo, uint64_t hi)
{
    /* a: how many regions start at or below lo. */
    uint32_t a = 0, b = n;
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (tab[m].base <= lo)
            a = m + 1;
        else
            b = m;
    }
    /* The last of them with a size is the only one that may hold lo. */
    while (a > 0 && tab[a - 1].size == 0)
        a--;
    if (a == 0)
        return false;
    uint32_t i = a - 1;
    uint64_t end = tab[i].base + tab[i].size;
    if (end <= lo)
        return false;
    while (end < hi) { /* continued by the next region with a size? */
        for (i++; i < n && tab[i].size == 0; i++)
            ;
        if (i >= n || tab[i].base != end)
            return false;
        end = tab[i].base + tab[i].size;
    }
    return true;
}

/* Whether a table read from a peer keeps the invariants the search relies
 * on: no region wraps, sorted by (base, size) without duplicates, regions
 * with a size disjoint. */
static bool regions_valid(const struct fy_rma_region *tab, uint32_t n)
{
    uint64_t end = 0; /* of the last region with a size */
    for (uint32_t i = 0; i < n; i++) {
        const struct fy_rma_region *r = &tab[i];
        if (r->size > UINT64_MAX - r->base)
            return false;
        if (i > 0 &&
            (r->base < tab[i - 1].base ||
             (r->base == tab[i - 1].base && r->size <= tab[i - 1].size)))
            return false;
        if (r->size) {
            if (r->base < end)
                return false;
            end = r->base + r->size;
        }
    }
    return true;
}

/* Index of the first region ordered after (base, size). */
static uint32_t regions_upper(const struct fy_rma_region *tab, uint32_t n,
                              uint64_t base, uint64_t size)
{
    uint32_t a = 0, b = n;
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (tab[m].base < base || (tab[m].base == base && tab[m].size <= size))
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* Publish w->regions in our slot (A1: the seqlock writer's closing half;
 * the caller opened it). */
static void regions_publish(struct fy_rma_win *w, struct fy_rma_slot *s,
                            uint32_t q)
{
    s->nattach = w->nregions;
    s->table = (uint64_t)(uintptr_t)w->regions;
    if (w->nregions <= FY_RMA_ATTACH_INLINE && w->nregions)
        memcpy(s->attach, w->regions, sizeof(s->attach[0]) * w->nregions);
    atomic_store_explicit(&s->aseq, q + 2, memory_order_release);
}

/* A1: seqlock writer; readers retry while aseq is odd or changed. */
static uint32_t regions_edit(struct fy_rma_slot *s)
{
    uint32_t q = atomic_load_explicit(&s->aseq, memory_order_relaxed);
    atomic_store_explicit(&s->aseq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    return q;
}

int fy_rma_attach(struct fy_rma_win *w, void *base, MPI_Aint size)
{
    struct fy_rma_slot *s = &w->slot[w->rank];
    uint64_t b = (uint64_t)(uintptr_t)base, sz = (uint64_t)size;
    if (sz > UINT64_MAX - b)
        return -EOVERFLOW;
    uint32_t n = w->nregions;
    uint32_t at = regions_upper(w->regions, n, b, sz);
    if (at > 0 && w->regions[at - 1].base == b && w->regions[at - 1].size == sz)
        return -EEXIST;
    if (sz) {
        /* The region with a size starting last below our end must end at
         * or before our base (regions with a size are disjoint). */
        uint32_t j = regions_upper(w->regions, n, b + sz - 1, UINT64_MAX);
        while (j > 0 && w->regions[j - 1].size == 0)
            j--;
        if (j > 0 && w->regions[j - 1].base + w->regions[j - 1].size > b)
            return -EEXIST;
    }
    if (n >= FY_RMA_ATTACH_MAX)
        return -ENOSPC;
    struct fy_rma_region *t = w->regions, *old = NULL;
    uint32_t cap = w->regions_cap;
    if (n == cap) {
        /* A new table; readers may copy the old one until the edit below
         * retires it. */
        cap = n ? FY_MIN(2 * n, (uint32_t)FY_RMA_ATTACH_MAX) : 16;
        t = malloc(sizeof(*t) * cap);
        if (!t)
            return -ENOMEM;
        old = w->regions;
    }
    uint32_t q = regions_edit(s);
    if (old) {
        if (n) {
            memcpy(t, old, sizeof(*t) * at);
            memcpy(t + at + 1, old + at, sizeof(*t) * (n - at));
        }
    } else {
        memmove(t + at + 1, t + at, sizeof(*t) * (n - at));
    }
    t[at] = (struct fy_rma_region){b, sz};
    w->regions = t;
    w->regions_cap = cap;
    w->nregions = n + 1;
    regions_publish(w, s, q);
    free(old);
    return 0;
}

int fy_rma_detach(struct fy_rma_win *w, const void *base)
{
    struct fy_rma_slot *s = &w->slot[w->rank];
    uint64_t b = (uint64_t)(uintptr_t)base;
    uint32_t n = w->nregions;
    /* The first region at b: after every region ordered before (b, 0). */
    uint32_t at = b ? regions_upper(w->regions, n, b - 1, UINT64_MAX) : 0;
    if (at >= n || w->regions[at].base != b)
        return -ENOENT;
    uint32_t q = regions_edit(s);
    memmove(&w->regions[at], &w->regions[at + 1],
            sizeof(w->regions[0]) * (n - at - 1));
    w->nregions = n - 1;
    regions_publish(w, s, q);
    return 0;
}

/* Copy target's large region table into our cache (q: the aseq read
 * before). Returns 0, -EAGAIN (changed meanwhile: read again), -EPROTO
 * (malformed), or the mechanism's error. */
static int regions_fetch(const struct fy_rma_win *w, int target, uint32_t q,
                         uint32_t n, uint64_t addr)
{
    struct fy_rma_peer *p = &w->peers[target];
    if (n > FY_RMA_ATTACH_MAX)
        return -EPROTO;
    if (n > p->rtab_cap) {
        struct fy_rma_region *t = realloc(p->rtab, sizeof(*t) * n);
        if (!t)
            return -ENOMEM;
        p->rtab = t;
        p->rtab_cap = n;
    }
    p->rtab_ok = false;
    int rc = remote_copy(p, p->rtab, addr, sizeof(*p->rtab) * n, true);
    /* A2 (as below): the copy happened before the second read. */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&w->slot[target].aseq, memory_order_relaxed) != q)
        return -EAGAIN; /* edited, or freed, while we copied */
    if (rc)
        return rc;
    if (!regions_valid(p->rtab, n))
        return -EPROTO;
    p->rtab_n = n;
    p->rtab_seq = q;
    p->rtab_ok = true;
    return 0;
}

/* Whether [lo, hi) lies inside the regions target attached: 0 or -ERANGE,
 * or regions_fetch's errors. */
static int attached(const struct fy_rma_win *w, int target, uint64_t lo,
                    uint64_t hi)
{
    if (target == w->rank) {
        /* Our own table: attach (another thread) holds the engine lock. */
        int locked = fy_mt_enter();
        bool in = fy_rma_regions_cover(w->regions, w->nregions, lo, hi);
        fy_mt_leave(&locked);
        return in ? 0 : -ERANGE;
    }
    const struct fy_rma_peer *p = &w->peers[target];
    if (p->remote)
        return 0; /* its table is on its node: the target checks (am.c) */
    struct fy_rma_slot *s = &w->slot[target];
    for (;;) {
        /* A2: pairs with A1. */
        uint32_t q = atomic_load_explicit(&s->aseq, memory_order_acquire);
        if (q & 1) {
            fy_cpu_relax();
            continue;
        }
        uint32_t n = s->nattach;
        uint64_t table = s->table;
        bool found = false;
        if (n <= FY_RMA_ATTACH_INLINE) {
            found = fy_rma_regions_cover(s->attach, n, lo, hi);
        } else if (p->rtab_ok && p->rtab_seq == q) {
            return fy_rma_regions_cover(p->rtab, p->rtab_n, lo, hi) ? 0
                                                                    : -ERANGE;
        } else if (p->am) {
            return 0; /* unreadable from here: the target checks (am.c) */
        } else {
            int rc = regions_fetch(w, target, q, n, table);
            if (rc == -EAGAIN)
                continue;
            if (rc)
                return rc;
            return fy_rma_regions_cover(p->rtab, p->rtab_n, lo, hi) ? 0
                                                                    : -ERANGE;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->aseq, memory_order_relaxed) == q)
            return found ? 0 : -ERANGE;
    }
}

/* ---- data movement ------------------------------------------------------- */

/* fy_rma_target's cases that are not a range of a window of fixed size:
 * nothing to move, or a dynamic window's absolute address. */
int fy_rma_target_slow(const struct fy_rma_win *w, int target, MPI_Aint disp,
                       MPI_Count count, const struct fy_dtype *dt,
                       uint64_t *addr_out)
{
    const struct fy_rma_peer *p = &w->peers[target];
    bool dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    if (count == 0 || dt->size == 0) {
        *addr_out = dynamic ? (uint64_t)disp
                            : p->base + (uint64_t)(disp * p->disp_unit);
        return 0;
    }
    MPI_Aint lo, hi;
    fy_rma_span(count, dt, &lo, &hi);
    if ((MPI_Aint)(disp + lo) < 0)
        return -ERANGE;
    int rc = attached(w, target, (uint64_t)(disp + lo), (uint64_t)(disp + hi));
    if (rc)
        return rc;
    *addr_out = (uint64_t)disp;
    return 0;
}

/* Move packed bytes to/from count elements of dt at remote address taddr
 * of peer p, piece by piece (holes of the type are never touched). */
static int remote_io(const struct fy_rma_peer *p, uint64_t taddr,
                     MPI_Count count, const struct fy_dtype *dt, void *packed,
                     bool get)
{
    MPI_Count total = count * dt->size, done = 0;
    struct iovec iov[64];
    while (done < total) {
        MPI_Count bytes = 0;
        int k = fy_dtype_iov((void *)(uintptr_t)taddr, count, dt, done, iov, 64,
                             &bytes);
        if (k <= 0 || bytes <= 0)
            return -EIO;
        for (int i = 0; i < k; i++) {
            int rc = remote_copy(p, (char *)packed + done,
                                 (uint64_t)(uintptr_t)iov[i].iov_base,
                                 iov[i].iov_len, get);
            if (rc)
                return rc;
            done += (MPI_Count)iov[i].iov_len;
        }
    }
    return 0;
}

int fy_rma_put(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
               struct fy_dtype *odt, int target, uint64_t taddr,
               MPI_Count tcount, struct fy_dtype *tdt)
{
    const struct fy_rma_peer *p = &w->peers[target];
    MPI_Count bytes = ocount * odt->size;
    void *dst = (void *)(uintptr_t)taddr;
    if (p->am)
        return bytes ? fy_rma_am_put(w, obuf, ocount, odt, target, taddr,
                                     tcount, tdt)
                     : 0;
    if (bytes == 0)
        return 0;
    if (w->ho && !p->direct) {
        int rc =
            fy_rma_ho_put(w, obuf, ocount, odt, target, taddr, tcount, tdt);
        if (rc != -EAGAIN)
            return rc;
    }
    if (p->direct && odt->contig && tdt->contig) {
        fy_rma_copy((char *)dst + tdt->true_lb,
                    (const char *)obuf + odt->true_lb, (size_t)bytes);
        return 0;
    }
    if (!p->direct && odt->contig)
        /* Straight from the origin's buffer into the target's memory. */
        return remote_io(p, taddr, tcount, tdt,
                         (char *)(uintptr_t)obuf + odt->true_lb, false);
    void *packed = malloc((size_t)bytes);
    if (!packed)
        return -ENOMEM;
    fy_dtype_pack(obuf, ocount, odt, packed);
    int rc = 0;
    if (p->direct)
        fy_dtype_unpack(packed, bytes, dst, tcount, tdt);
    else
        rc = remote_io(p, taddr, tcount, tdt, packed, false);
    free(packed);
    return rc;
}

int fy_rma_get(struct fy_rma_win *w, void *obuf, MPI_Count ocount,
               struct fy_dtype *odt, int target, uint64_t taddr,
               MPI_Count tcount, struct fy_dtype *tdt)
{
    const struct fy_rma_peer *p = &w->peers[target];
    MPI_Count bytes = tcount * tdt->size;
    const void *src = (const void *)(uintptr_t)taddr;
    if (p->am)
        return bytes ? fy_rma_am_get(w, obuf, ocount, odt, target, taddr,
                                     tcount, tdt)
                     : 0;
    if (bytes == 0)
        return 0;
    if (w->ho && !p->direct) {
        int rc =
            fy_rma_ho_get(w, obuf, ocount, odt, target, taddr, tcount, tdt);
        if (rc != -EAGAIN)
            return rc;
    }
    if (p->direct && odt->contig && tdt->contig) {
        fy_rma_copy((char *)obuf + odt->true_lb,
                    (const char *)src + tdt->true_lb, (size_t)bytes);
        return 0;
    }
    if (!p->direct && odt->contig)
        /* Straight from the target's memory into the origin's buffer. */
        return remote_io(p, taddr, tcount, tdt, (char *)obuf + odt->true_lb,
                         true);
    void *packed = malloc((size_t)bytes);
    if (!packed)
        return -ENOMEM;
    int rc = 0;
    if (p->direct)
        fy_dtype_pack(src, tcount, tdt, packed);
    else
        rc = remote_io(p, taddr, tcount, tdt, packed, true);
    if (!rc)
        fy_dtype_unpack(packed, bytes, obuf, ocount, odt);
    free(packed);
    return rc;
}

static bool acc_try(void *arg)
{
    _Atomic uint32_t *word = arg;
    uint32_t zero = 0;
    /* C1: acquire pairs with C2: the previous accumulate's result is
     * visible to our read. */
    return atomic_load_explicit(word, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(
               word, &zero, 1, memory_order_acquire, memory_order_relaxed);
}

static bool acc_peek(void *arg)
{
    return atomic_load_explicit((_Atomic uint32_t *)arg,
                                memory_order_relaxed) == 0;
}

void fy_rma_acc_lock(struct fy_rma_win *w, int target)
{
    _Atomic uint32_t *word = &w->slot[target].acc;
    if (fy_rma_am_in_hook()) {
        /* Serving a request from the progress engine (am.c): no progress
         * from here. The holder is an origin of this node that holds the
         * lock only around copies and combines, never waiting on us. */
        while (!acc_try((void *)word))
            sched_yield();
        return;
    }
    wait_until(acc_try, acc_peek, (void *)word);
}

void fy_rma_acc_unlock(struct fy_rma_win *w, int target)
{
    /* C2: release pairs with C1. */
    atomic_store_explicit(&w->slot[target].acc, 0, memory_order_release);
    wake_all(w);
}

bool fy_rma_flat(MPI_Count count, const struct fy_dtype *dt, MPI_Count bytes)
{
    if (!dt->contig || count * dt->size != bytes)
        return false;
    MPI_Aint lo, hi;
    fy_rma_span(count, dt, &lo, &hi);
    return lo == 0 && hi == (MPI_Aint)bytes;
}

/* The common small case on a shared-memory window: a few contiguous
 * elements (a counter, Fetch_and_op), combined in place with no staging. */
#define ACC_SMALL 64

static int acc_small(struct fy_rma_win *w, const void *obuf, void *rbuf,
                     int target, uint64_t taddr, MPI_Count tcount,
                     struct fy_dtype *tdt, struct fy_op *op, MPI_Count bytes)
{
    char in[ACC_SMALL];
    bool no_op = op->handle == MPI_NO_OP;
    if (!no_op)
        memcpy(in, obuf, (size_t)bytes);
    char *tgt = (char *)(uintptr_t)taddr;
    fy_rma_acc_lock(w, target);
    if (rbuf)
        memcpy(rbuf, tgt, (size_t)bytes);
    int rc = no_op ? 0 : fy_op_apply(op, in, tgt, tcount, tdt);
    fy_rma_acc_unlock(w, target);
    return rc;
}

/* Accumulate on user memory of another rank, every buffer contiguous:
 * under the target's accumulate lock, one read of the target's bytes into
 * a local copy, the old values to rbuf, the combine, one write back (none
 * for MPI_NO_OP). */
static int acc_remote_flat(struct fy_rma_win *w, const void *obuf, void *rbuf,
                           int target, uint64_t taddr, MPI_Count tcount,
                           struct fy_dtype *tdt, struct fy_op *op,
                           MPI_Count bytes)
{
    const struct fy_rma_peer *p = &w->peers[target];
    alignas(16) char stack[256];
    char *cur =
        bytes <= (MPI_Count)sizeof(stack) ? stack : malloc((size_t)bytes);
    if (!cur)
        return -ENOMEM;
    bool no_op = op->handle == MPI_NO_OP;
    fy_rma_acc_lock(w, target);
    int rc = remote_copy(p, cur, taddr, (size_t)bytes, true);
    if (!rc && rbuf)
        memcpy(rbuf, cur, (size_t)bytes);
    if (!rc && !no_op) {
        rc = fy_op_apply(op, obuf, cur, tcount, tdt);
        if (!rc)
            rc = remote_copy(p, cur, taddr, (size_t)bytes, false);
    }
    fy_rma_acc_unlock(w, target);
    if (cur != stack)
        free(cur);
    return rc;
}

/* On a window served by active messages, remote accumulates are applied
 * by the progress engine under the engine lock (am.c), not under the
 * accumulate lock word; this rank's own accumulates on its window take the
 * engine lock too, so the two stay atomic with respect to each other under
 * MPI_THREAD_MULTIPLE's finer locks (the entry point holds only the window
 * lock; window -> engine is util/mt.h's order). */
#define AM_SELF_LOCK(w)                                                        \
    int am_self_guard_ __attribute__((cleanup(fy_mt_leave), unused)) =         \
        (w)->am ? fy_mt_enter() : FY_MT_NOLOCK

int fy_rma_acc(struct fy_rma_win *w, const void *obuf, MPI_Count ocount,
               struct fy_dtype *odt, void *rbuf, MPI_Count rcount,
               struct fy_dtype *rdt, int target, uint64_t taddr,
               MPI_Count tcount, struct fy_dtype *tdt, struct fy_op *op)
{
    AM_SELF_LOCK(w);
    const struct fy_rma_peer *p = &w->peers[target];
    MPI_Count bytes = tcount * tdt->size;
    if (bytes == 0)
        return 0;
    if (p->am)
        return fy_rma_am_acc(w, obuf, ocount, odt, rbuf, rcount, rdt, target,
                             taddr, tcount, tdt, op);
    if (fy_rma_acc_atomic(w) && !tdt->pair)
        return fy_rma_acc_shm(w, obuf, ocount, odt, rbuf, rcount, rdt, target,
                              taddr, tcount, tdt, op);
    if (w->ho && !p->direct) {
        int rc = fy_rma_ho_acc(w, obuf, ocount, odt, rbuf, rcount, rdt, target,
                               taddr, tcount, tdt, op);
        if (rc != -EAGAIN)
            return rc;
    }
    bool no_op = op->handle == MPI_NO_OP;
    if (p->direct && bytes <= ACC_SMALL && fy_rma_flat(tcount, tdt, bytes) &&
        (no_op || fy_rma_flat(ocount, odt, bytes)) &&
        (!rbuf || fy_rma_flat(rcount, rdt, bytes)))
        return acc_small(w, obuf, rbuf, target, taddr, tcount, tdt, op, bytes);
    if (!p->direct && fy_rma_flat(tcount, tdt, bytes) &&
        (no_op || fy_rma_flat(ocount, odt, bytes)) &&
        (!rbuf || fy_rma_flat(rcount, rdt, bytes)))
        return acc_remote_flat(w, obuf, rbuf, target, taddr, tcount, tdt, op,
                               bytes);
    /* The origin's data laid out as the target type (fy_op_apply combines
     * two buffers of one layout); for user memory the target's span is
     * read into a local copy of the same layout. */
    MPI_Aint lo, hi;
    fy_rma_span(tcount, tdt, &lo, &hi);
    size_t span = (size_t)(hi - lo);
    char *packed = malloc((size_t)bytes);
    char *in = malloc(span ? span : 1);
    char *cur = p->direct ? NULL : malloc(span ? span : 1);
    int rc = -ENOMEM;
    if (!packed || !in || (!p->direct && !cur))
        goto free_bufs;
    char *in_base = in - lo;
    if (!no_op) {
        fy_dtype_pack(obuf, ocount, odt, packed);
        fy_dtype_unpack(packed, bytes, in_base, tcount, tdt);
    }
    char *tgt = p->direct ? (char *)(uintptr_t)taddr : cur - lo;
    fy_rma_acc_lock(w, target);
    rc = 0;
    if (!p->direct) {
        rc = remote_io(p, taddr, tcount, tdt, packed, true);
        if (!rc)
            fy_dtype_unpack(packed, bytes, tgt, tcount, tdt);
    }
    if (!rc && rbuf) {
        fy_dtype_pack(tgt, tcount, tdt, packed);
        fy_dtype_unpack(packed, bytes, rbuf, rcount, rdt);
    }
    if (!rc && !no_op) {
        rc = fy_op_apply(op, in_base, tgt, tcount, tdt);
        if (!rc && !p->direct) {
            fy_dtype_pack(tgt, tcount, tdt, packed);
            rc = remote_io(p, taddr, tcount, tdt, packed, false);
        }
    }
    fy_rma_acc_unlock(w, target);
free_bufs:
    free(packed);
    free(in);
    free(cur);
    return rc;
}

int fy_rma_cas(struct fy_rma_win *w, const void *obuf, const void *cbuf,
               void *rbuf, struct fy_dtype *dt, int target, uint64_t taddr)
{
    AM_SELF_LOCK(w);
    const struct fy_rma_peer *p = &w->peers[target];
    size_t n = (size_t)dt->size;
    char old[64];
    if (n > sizeof(old))
        return -EINVAL;
    if (p->am)
        return fy_rma_am_cas(w, obuf, cbuf, rbuf, dt, target, taddr);
    if (fy_rma_acc_atomic(w)) {
        int rc = fy_rma_cas_shm(w, obuf, cbuf, rbuf, dt, target, taddr);
        if (rc != -EAGAIN)
            return rc;
    }
    if (w->ho && !p->direct) {
        int rc = fy_rma_ho_cas(w, obuf, cbuf, rbuf, dt, target, taddr);
        if (rc != -EAGAIN)
            return rc;
    }
    fy_rma_acc_lock(w, target);
    int rc = 0;
    if (p->direct) {
        memcpy(old, (void *)(uintptr_t)taddr, n);
        if (memcmp(old, cbuf, n) == 0)
            memcpy((void *)(uintptr_t)taddr, obuf, n);
    } else {
        rc = remote_copy(p, old, taddr, n, true);
        if (!rc && memcmp(old, cbuf, n) == 0)
            rc = remote_copy(p, (void *)obuf, taddr, n, false);
    }
    fy_rma_acc_unlock(w, target);
    if (!rc)
        memcpy(rbuf, old, n);
    return rc;
}
