/* SPDX-License-Identifier: MIT */
/* The laboratory's two processes and what they share: standalone (fork a
 * destination process, own memfd) or under Ferry's mpiexec -n 2 (the
 * launcher's FERRY_RANK/FERRY_SIZE/FERRY_SHM_FD), the segment layout, the
 * two-party barrier, the rotating buffer pool and the progress line. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"

static struct lab *lab_self; /* for lab_die from signal-free contexts */

uint64_t lab_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

_Noreturn void lab_die(struct lab *L, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nferry-bench[%s]: ", L && L->me ? "P1" : "P0");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (L && L->h) {
        atomic_store(&L->h->abort_flag, 1);
        if (L->standalone && L->me == 0 && L->peer > 0) {
            kill(L->peer, SIGKILL);
            waitpid(L->peer, NULL, 0);
        }
    }
    exit(1);
}

/* Called every few thousand spins: leave if the other side gave up or
 * died, and stop hogging the CPU when the peer is clearly not running
 * (a loaded machine), so it gets the core back. */
static void spin_check(struct lab *L, uint64_t since, unsigned *rounds)
{
    if (atomic_load_explicit(&L->h->abort_flag, memory_order_relaxed)) {
        if (L->me == 0 && L->standalone)
            waitpid(L->peer, NULL, 0);
        exit(1);
    }
    if (L->standalone && L->me == 0) {
        int st;
        if (waitpid(L->peer, &st, WNOHANG) == L->peer)
            lab_die(L, "the destination process died (status %#x)", st);
    } else if (kill(L->peer, 0) != 0 && errno == ESRCH) {
        lab_die(L, "the peer process is gone");
    }
    if (++*rounds > 64)
        sched_yield();
    if (lab_now_ns() - since > 300ull * 1000000000ull)
        lab_die(L, "the peer has not answered for 300 s");
}

#define LAB_SPIN_UNTIL(L, cond)                                                \
    do {                                                                       \
        struct lab_wait w_ = {0};                                              \
        while (!(cond))                                                        \
            lab_wait_step((L), &w_);                                           \
    } while (0)

void lab_barrier(struct lab *L)
{
    uint64_t e = ++L->epoch;
    /* R1: release: everything we wrote is visible to the peer once it
     * sees our epoch. */
    atomic_store_explicit(&L->h->ep[L->me][0], e, memory_order_release);
    /* A1: pairs with the peer's R1. */
    LAB_SPIN_UNTIL(L, atomic_load_explicit(&L->h->ep[1 - L->me][0],
                                           memory_order_acquire) >= e);
}

void lab_wait_check(struct lab *L, struct lab_wait *w)
{
    if (!w->since)
        w->since = lab_now_ns();
    spin_check(L, w->since, &w->rounds);
}

/* Spin until a line's sequence number reaches 'want' (used by drivers). */
void lab_wait_seq(struct lab *L, _Atomic uint64_t *seq, uint64_t want)
{
    /* A2: pairs with the writer's release store of seq (drivers.c R2). */
    LAB_SPIN_UNTIL(L, atomic_load_explicit(seq, memory_order_acquire) >= want);
}

/* Wait for a 32-bit flag to take a value (shmbuf full/empty). */
void lab_wait_u32(struct lab *L, _Atomic uint32_t *p, uint32_t want)
{
    LAB_SPIN_UNTIL(L, atomic_load_explicit(p, memory_order_acquire) == want);
}

size_t lab_rot_next(struct lab *L, size_t len)
{
    /* The seed's rule: each transfer's buffers start a cache line past the
     * previous ones, and a buffer is reused only after more than 8x the L2
     * size has been touched since (region_size = 8 x L2 + largest message,
     * so the wrap-around comes after at least 8 x L2 bytes). */
    size_t step = FY_ALIGN_UP(len, (size_t)FY_CACHELINE) + FY_CACHELINE;
    if (L->rot + len > L->region_size)
        L->rot = 0;
    size_t off = L->rot;
    L->rot += step;
    return off;
}

size_t lab_rot_local(struct lab *L, size_t len)
{
    size_t step = FY_ALIGN_UP(len, (size_t)FY_CACHELINE) + FY_CACHELINE;
    if (L->rot_local + len > L->region_size)
        L->rot_local = 0;
    size_t off = L->rot_local;
    L->rot_local += step;
    return off;
}

static size_t read_cache(int index_level, const char *type)
{
    for (int i = 0; i < 8; i++) {
        char p[128], buf[64];
        snprintf(p, sizeof(p),
                 "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(p, "r");
        if (!f)
            break;
        int lvl = 0;
        if (fscanf(f, "%d", &lvl) != 1)
            lvl = 0;
        fclose(f);
        snprintf(p, sizeof(p),
                 "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        f = fopen(p, "r");
        if (!f || !fgets(buf, sizeof(buf), f)) {
            if (f)
                fclose(f);
            continue;
        }
        fclose(f);
        if (lvl != index_level || strncmp(buf, type, strlen(type)))
            continue;
        snprintf(p, sizeof(p),
                 "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(p, "r");
        if (!f)
            continue;
        unsigned long v = 0;
        char unit = 0;
        int n = fscanf(f, "%lu%c", &v, &unit);
        fclose(f);
        if (n >= 1)
            return v * (unit == 'K' ? 1024ul : unit == 'M' ? 1048576ul : 1ul);
    }
    return 0;
}

static void read_caches(struct lab *L)
{
    L->l1 = read_cache(1, "Data");
    L->l2 = read_cache(2, "Unified");
    L->l3 = read_cache(3, "Unified");
    long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    L->line = line > 0 ? (size_t)line : 64;
    if (!L->l2) {
        /* No sysfs cache information (some containers): assume 1 MiB and
         * say so in the report via l2 = 0 -> the value used. */
        fprintf(stderr, "ferry-bench: L2 size not in sysfs; assuming 1 MiB\n");
        L->l2 = 1u << 20;
    }
}

void lab_bind_cpu(int idx)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return;
    int n = CPU_COUNT(&allowed);
    if (n < 2)
        return; /* one CPU: nothing to choose (results will say so) */
    int want = idx % n, seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &allowed))
            continue;
        if (seen++ == want) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            sched_setaffinity(0, sizeof(one), &one);
            return;
        }
    }
}

static uint64_t seg_layout(struct lab_hdr *h)
{
    uint64_t off = FY_ALIGN_UP((uint64_t)sizeof(struct lab_hdr), 4096ull);
    h->off_q = off;
    off = FY_ALIGN_UP(off + sizeof(struct lab_queues), 4096ull);
    h->off_sb = off;
    off = FY_ALIGN_UP(off + 2 * sizeof(struct fy_shmbuf_ctl) +
                          2ull * LAB_MAX_SHMBUF,
                      4096ull);
    h->off_cells = off;
    off += 2ull * LAB_NCELLS * LAB_MAX_CELL;
    return off;
}

static int env_int(const char *name, int *out)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -ENOENT;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1 << 30)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

int lab_setup(struct lab *L, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    lab_self = L;
    L->fd = -1;
    L->net_up = false;
    L->t_start = (double)lab_now_ns() / 1e9;
    read_caches(L);
    L->region_size = 8 * L->l2 + LAB_MAX_MSG + 4096;

    int size = 0, rank = 0, fd = -1;
    if (env_int("FERRY_SIZE", &size) == 0) {
        if (size != 2 || env_int("FERRY_RANK", &rank) || rank > 1 ||
            env_int("FERRY_SHM_FD", &fd)) {
            fprintf(stderr, "ferry-bench: under mpiexec it needs exactly 2 "
                            "ranks (-n 2) and the launcher's FERRY_RANK and "
                            "FERRY_SHM_FD\n");
            return -EINVAL;
        }
        L->standalone = false;
        L->me = rank;
    } else {
        L->standalone = true;
        L->me = 0;
        fd = memfd_create("ferry-bench", MFD_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "ferry-bench: memfd_create: %s\n", strerror(errno));
            return -errno;
        }
    }
    L->fd = fd;

    struct lab_hdr probe;
    memset(&probe, 0, sizeof(probe));
    uint64_t total = seg_layout(&probe);
    if (L->me == 0) {
        if (ftruncate(fd, (off_t)total) != 0) {
            fprintf(stderr, "ferry-bench: cannot size the segment: %s\n",
                    strerror(errno));
            return -errno;
        }
    } else {
        /* Wait for P0 to size and lay out the segment. */
        struct stat st;
        for (int i = 0;; i++) {
            if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= total)
                break;
            if (i > 200000) {
                fprintf(stderr,
                        "ferry-bench: rank 0 never sized the segment\n");
                return -ETIMEDOUT;
            }
            usleep(50);
        }
    }
    void *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        fprintf(stderr, "ferry-bench: mmap of the segment: %s\n",
                strerror(errno));
        return -errno;
    }
    L->base = base;
    L->h = base;
    if (L->me == 0) {
        struct lab_hdr *h = L->h;
        h->off_q = probe.off_q;
        h->off_sb = probe.off_sb;
        h->off_cells = probe.off_cells;
        h->total = total;
        h->magic = LAB_MAGIC;
        h->version = LAB_VERSION;
        for (int i = 0; i < LAB_MAX_MECHS; i++)
            atomic_store(&h->mech_ok[i], 1);
        h->pid[0] = getpid();
        /* R3: pairs with A3: the layout is visible with state 2. */
        atomic_store_explicit(&h->state, 2, memory_order_release);
    } else {
        for (int i = 0;; i++) {
            /* A3: pairs with R3. */
            if (atomic_load_explicit(&L->h->state, memory_order_acquire) == 2)
                break;
            if (i > 200000) {
                fprintf(stderr, "ferry-bench: rank 0 never initialised the "
                                "segment\n");
                return -ETIMEDOUT;
            }
            usleep(50);
        }
        if (L->h->magic != LAB_MAGIC || L->h->version != LAB_VERSION ||
            L->h->total != total) {
            fprintf(stderr, "ferry-bench: the segment is not a laboratory "
                            "segment of this version\n");
            return -EPROTO;
        }
    }
    /* The cell queues compute addresses from fy_shm.base (segment
     * offsets), so point it at our segment. */
    fy_shm.base = L->base;
    fy_shm.size = total;
    L->q = (struct lab_queues *)(L->base + L->h->off_q);
    /* ... and describe where cells and queue stubs are, as the library's
     * fy_cellq_attach does, for its link validation (cellq_inl.h). Each
     * process owns LAB_NCELLS cells of up to LAB_MAX_CELL bytes;
     * lab_queue_config sets the cell size of a sweep. */
    fy_cells =
        (struct fy_cells){.pairs = L->q->rank,
                          .pairs_off = L->h->off_q,
                          .cells_off = L->h->off_cells,
                          .cells_len = 2ull * LAB_NCELLS * LAB_MAX_CELL,
                          .owner_len = (uint64_t)LAB_NCELLS * LAB_MAX_CELL,
                          .cell_size = LAB_MAX_CELL,
                          .ncells = LAB_NCELLS,
                          .nranks = 2};

    if (L->standalone) {
        fflush(NULL);
        pid_t parent = getpid();
        pid_t c = fork();
        if (c < 0) {
            fprintf(stderr, "ferry-bench: fork: %s\n", strerror(errno));
            return -errno;
        }
        if (c == 0) {
            L->me = 1;
            L->peer = parent;
            /* Die with the source process, whatever kills it. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
        } else {
            L->peer = c;
        }
    }
    L->h->pid[L->me] = getpid();
    lab_bind_cpu(L->me);

    /* The pool: faulted in now so that no page fault lands in a timing. */
    size_t poolsz = 2 * L->region_size;
    void *pool = mmap(NULL, poolsz, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (pool == MAP_FAILED)
        lab_die(L, "cannot allocate the %zu-byte buffer pool: %s", poolsz,
                strerror(errno));
    memset(pool, 0x5a, poolsz);
    L->pool = pool;
    L->h->pool[L->me] = (uint64_t)(uintptr_t)pool;
    /* Under mpiexec, both ranks must have written their pid before the
     * first barrier, whose spin loop checks the peer is alive. */
    if (!L->standalone) {
        for (int i = 0; !L->h->pid[1 - L->me]; i++) {
            if (i > 2000000)
                lab_die(L, "the other rank never arrived");
            usleep(10);
        }
        L->peer = L->h->pid[1 - L->me];
    }
    lab_barrier(L);
    L->peer_pool = L->h->pool[1 - L->me];
    return 0;
}

void lab_finish(struct lab *L)
{
    lab_barrier(L);
    lab_net_close(L);
    if (L->me == 1) {
        fflush(NULL);
        _exit(0);
    }
    if (L->standalone) {
        int st = 0;
        waitpid(L->peer, &st, 0);
    }
}

void lab_progress(struct lab *L, const char *fmt, ...)
{
    if (L->me != 0)
        return;
    static uint64_t last;
    static char last_phase[32];
    static int tty = -1;
    if (tty < 0)
        tty = isatty(2);
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    uint64_t now = lab_now_ns();
    /* A new phase (first word) is always shown; within a phase the line is
     * refreshed at most 10 times a second (once every 5 s without a tty). */
    char phase[32];
    snprintf(phase, sizeof(phase), "%.*s", (int)strcspn(msg, " "), msg);
    bool newphase = strcmp(phase, last_phase) != 0;
    uint64_t gap = tty ? 100000000ull : 5000000000ull;
    if (!newphase && now - last < gap)
        return;
    last = now;
    snprintf(last_phase, sizeof(last_phase), "%s", phase);
    double el = (double)now / 1e9 - L->t_start;
    if (tty)
        fprintf(stderr, "\r\033[K[ferry-bench %4.0fs] %s", el, msg);
    else
        fprintf(stderr, "[ferry-bench %4.0fs] %s\n", el, msg);
}

void lab_progress_done(struct lab *L)
{
    if (L->me == 0 && isatty(2))
        fprintf(stderr, "\r\033[K");
}
