/* SPDX-License-Identifier: MIT */
/* Conformance of every transfer mechanism, byte-exact with guard bytes
 * around every destination (nothing may be written outside it):
 * - the one-sided ops (cma, procmem, and procmem's attach-stop variant)
 *   reading and writing a forked process's private memory, at unaligned
 *   offsets on both sides, plus their errors (bad address, peer gone);
 * - the p2p core under FERRY_XFER=<each kind> and under a mixed per-size
 *   table, four forked ranks as two concurrent pairs exchanging both ways,
 *   with the eager path switched off so every size from 1 byte goes
 *   through the mechanism, plus truncation.
 * A mechanism this machine forbids is skipped with the reason. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "harness.h"
#include "p2p/p2p.h"
#include "util/util.h"
#include "xfer/xfer.h"

static const size_t sizes[] = {
    0, 1, 63, 64, 65, 4095, 4097, 65535, 65536, 65537, (1 << 20) + 3, 16 << 20};
#define NSIZES FY_ARRAY_LEN(sizes)
#define MAXSIZE ((size_t)16 << 20)
#define GUARD 64 /* guard bytes on each side, besides the offset */
#define GUARD_BYTE 0xA5

static unsigned char pat(unsigned seed, size_t i)
{
    return (unsigned char)(seed * 17u + i * 29u + (i >> 11) + 3u);
}

/* Unaligned offsets in 1..63 that vary with the case. */
static size_t offset_of(size_t a, size_t b)
{
    return 1 + (a * 7 + b * 29) % 63;
}

/* First index where buf differs from pat(seed, base + i), or -1. */
static long check_pat(const unsigned char *buf, size_t len, unsigned seed,
                      size_t base)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pat(seed, base + i))
            return (long)i;
    return -1;
}

static bool guards_ok(const unsigned char *buf, size_t before, size_t after_at,
                      size_t after)
{
    for (size_t i = 0; i < before; i++)
        if (buf[i] != GUARD_BYTE)
            return false;
    for (size_t i = 0; i < after; i++)
        if (buf[after_at + i] != GUARD_BYTE)
            return false;
    return true;
}

/* ---- part A: one-sided ops against a forked target ---------------------- */

/* The target's region: pat(TARGET_SEED, i) everywhere; a put case writes
 * pat(seed, i) at [off, off+len) and asks the target to check the bytes
 * and the guards around, then restore. */
#define TARGET_SEED 77u
#define REGION (MAXSIZE + 4 * GUARD + 64)

struct cmd {
    uint32_t op; /* 1: check a put; 0: exit */
    uint32_t seed;
    uint64_t off, len;
};

static _Noreturn void target_main(int rd, int wr)
{
    unsigned char *r = aligned_alloc(64, REGION);
    if (!r)
        _exit(2);
    for (size_t i = 0; i < REGION; i++)
        r[i] = pat(TARGET_SEED, i);
    uint64_t addr = (uint64_t)(uintptr_t)r;
    if (write(wr, &addr, sizeof(addr)) != (ssize_t)sizeof(addr))
        _exit(3);
    struct cmd c;
    while (read(rd, &c, sizeof(c)) == (ssize_t)sizeof(c) && c.op == 1) {
        int bad = 0;
        size_t lo = c.off >= GUARD ? c.off - GUARD : 0;
        size_t hi = FY_MIN(c.off + c.len + GUARD, REGION);
        for (size_t i = lo; i < hi; i++) {
            bool inside = i >= c.off && i < c.off + c.len;
            unsigned char want =
                inside ? pat(c.seed, i - c.off) : pat(TARGET_SEED, i);
            if (r[i] != want) {
                bad = inside ? 1 : 2; /* 2: written outside */
                break;
            }
        }
        for (size_t i = c.off; i < c.off + c.len; i++)
            r[i] = pat(TARGET_SEED, i);
        if (write(wr, &bad, sizeof(bad)) != (ssize_t)sizeof(bad))
            _exit(4);
    }
    _exit(0);
}

struct target {
    pid_t pid;
    int to, from;
    uint64_t region;
};

static int target_start(struct target *t)
{
    int a[2], b[2];
    if (pipe(a) || pipe(b))
        return -1;
    fflush(stdout);
    t->pid = fork();
    if (t->pid == 0) {
        close(a[1]);
        close(b[0]);
        target_main(a[0], b[1]);
    }
    close(a[0]);
    close(b[1]);
    t->to = a[1];
    t->from = b[0];
    return read(t->from, &t->region, sizeof(t->region)) ==
                   (ssize_t)sizeof(t->region)
               ? 0
               : -1;
}

static int target_check_put(struct target *t, uint64_t off, uint64_t len,
                            unsigned seed)
{
    struct cmd c = {.op = 1, .seed = seed, .off = off, .len = len};
    int bad = -1;
    if (write(t->to, &c, sizeof(c)) != (ssize_t)sizeof(c) ||
        read(t->from, &bad, sizeof(bad)) != (ssize_t)sizeof(bad))
        return -1;
    return bad;
}

static void target_stop(struct target *t)
{
    struct cmd c = {0};
    if (write(t->to, &c, sizeof(c)) < 0)
        kill(t->pid, SIGKILL);
    close(t->to);
    close(t->from);
    waitpid(t->pid, NULL, 0);
}

typedef ssize_t (*copy_fn)(pid_t, void *, uint64_t, size_t, bool);

/* One get and one put of 'len' bytes; returns true if both were exact. */
static bool one_sided_case(struct target *t, copy_fn copy, size_t m, size_t len,
                           unsigned char *local, const char *name)
{
    size_t lo = offset_of(m, 1), ro = offset_of(m, 2);
    uint64_t roff = 2 * GUARD + ro; /* in the target's region */
    /* get: the target's bytes land at local + GUARD + lo, nothing else. */
    memset(local, GUARD_BYTE, len + 2 * GUARD + 64);
    ssize_t n = copy(t->pid, local + GUARD + lo, t->region + roff, len, true);
    long at = check_pat(local + GUARD + lo, len, TARGET_SEED, roff);
    bool get_ok = n == (ssize_t)len && at < 0 &&
                  guards_ok(local, GUARD + lo, GUARD + lo + len, GUARD);
    if (!get_ok)
        tap_diag("%s get %zu B: returned %zd, first wrong byte %ld, guards %s",
                 name, len, n, at,
                 guards_ok(local, GUARD + lo, GUARD + lo + len, GUARD)
                     ? "intact"
                     : "HIT");
    /* put: pattern from an unaligned local source into the target. */
    unsigned seed = (unsigned)(m + 5);
    for (size_t i = 0; i < len; i++)
        local[lo + i] = pat(seed, i);
    n = copy(t->pid, local + lo, t->region + roff, len, false);
    int bad = target_check_put(t, roff, len, seed);
    bool put_ok = n == (ssize_t)len && bad == 0;
    if (!put_ok)
        tap_diag("%s put %zu B: returned %zd, target says %s", name, len, n,
                 bad == 0   ? "exact"
                 : bad == 2 ? "written OUTSIDE"
                            : "wrong bytes");
    return get_ok && put_ok;
}

static void part_one_sided(int kind, unsigned char *local)
{
    const struct fy_xfer_ops *ops = fy_xfer_registry[kind];
    char why[256];
    if (!fy_xfer_probe_siblings(kind, why, sizeof(why))) {
        char msg[320];
        snprintf(msg, sizeof(msg), "%s ops: %s", ops->name, why);
        tap_skip(msg);
        return;
    }
    struct target t;
    if (!TAP_OK(target_start(&t) == 0, "%s ops: target process started",
                ops->name))
        return;
    for (size_t m = 0; m < NSIZES; m++)
        TAP_OK(
            one_sided_case(&t, ops->copy_remote, m, sizes[m], local, ops->name),
            "%s ops: get and put of %zu B at offsets (%zu, %zu), guards intact",
            ops->name, sizes[m], offset_of(m, 1), offset_of(m, 2));
    if (kind == FY_XFER_PROCMEM) {
        /* The seed's attach-stop-copy-detach: same bytes, and the target
         * runs again afterwards (it answers the put check). */
        const size_t att[] = {1, 4097, (1 << 20) + 3};
        for (size_t i = 0; i < FY_ARRAY_LEN(att); i++)
            TAP_OK(
                one_sided_case(&t, fy_xfer_procmem_attach_copy, i + 3, att[i],
                               local, "procmem-attach"),
                "procmem attach-stop-copy-detach: %zu B exact, target resumed",
                att[i]);
    }
    uint64_t word = 0;
    ssize_t n = ops->copy_remote(t.pid, &word, 4096, sizeof(word), true);
    TAP_OK(n < 0 && n != -ESRCH,
           "%s ops: an unmapped remote address is an error (%zd)", ops->name,
           n);
    pid_t pid = t.pid;
    target_stop(&t);
    n = ops->copy_remote(pid, &word, t.region, sizeof(word), true);
    TAP_EQ_INT((int)n, -ESRCH, "%s ops: a peer that is gone is -ESRCH",
               ops->name);
}

/* ---- part B: the p2p core, four ranks, two pairs ---------------------------
 */

#define NRANKS 4
#define ITERS 2 /* offset combinations per size (16 MiB: one) */

/* Failures per rank and size (and one slot for truncation), in memory the
 * ranks share with the parent. */
struct results {
    int fails[NRANKS][NSIZES + 1];
    int kind_ok[NRANKS]; /* the table in force is the one asked for */
};

static int rank_main(int rank, int fd, struct results *res, int want_kind)
{
    alarm(60);
    fy_boot.rank = rank;
    fy_boot.size = NRANKS;
    fy_boot.shm_fd = fd;
    fy_boot.ncpus = 2; /* four ranks on two CPUs: they sleep and wake */
    if (fy_boot_one_node(&fy_boot))
        return 100;
    snprintf(fy_boot.jobid, sizeof(fy_boot.jobid), "conformance-%d",
             (int)getppid());
    fy_log_rank = rank;
    if (fy_env_load() || fy_dtype_init() || fy_p2p_init(NULL))
        return 100;
    /* Single-kind runs must really be using that kind. */
    res->kind_ok[rank] =
        want_kind < 0 ||
        (fy_xfer_active.n == 1 && fy_xfer_active.rule[0].kind == want_kind);
    int world[NRANKS] = {0, 1, 2, 3};
    struct fy_group g = {.size = NRANKS, .rank = rank, .world = world};
    /* refcount 1: this frame holds it; requests take and drop more. */
    struct fy_comm c = {.refcount = 1,
                        .ctx = 0,
                        .rank = rank,
                        .size = NRANKS,
                        .group = &g,
                        .p2p_group = &g};
    struct fy_dtype *byte = fy_dtype_get(MPI_BYTE);
    int partner = rank ^ 1;
    size_t span = MAXSIZE + 2 * GUARD + 128;
    unsigned char *sbuf = aligned_alloc(64, span);
    unsigned char *rbuf = aligned_alloc(64, span);
    if (!sbuf || !rbuf)
        return 101;
    for (size_t m = 0; m < NSIZES; m++) {
        size_t len = sizes[m];
        int iters = len >= MAXSIZE ? 1 : ITERS;
        for (int it = 0; it < iters; it++) {
            size_t so = offset_of(m + (size_t)rank, (size_t)it);
            size_t ro = offset_of(m + (size_t)partner + 9, (size_t)it + 3);
            unsigned seed_out = (unsigned)(rank * 1000 + (int)m * 10 + it);
            unsigned seed_in = (unsigned)(partner * 1000 + (int)m * 10 + it);
            for (size_t i = 0; i < len; i++)
                sbuf[so + i] = pat(seed_out, i);
            memset(rbuf, GUARD_BYTE, len + 2 * GUARD + 64);
            unsigned char *dst = rbuf + GUARD + ro;
            struct fy_req *rr = NULL, *sr = NULL;
            int tag = (int)(m * 4 + (size_t)it);
            int rc1, rc2;
            /* Both orders: the receive is posted before the RTS arrives
             * on one side and after it on the other. */
            if ((it + rank) % 2 == 0) {
                rc1 = fy_p2p_irecv(dst, (MPI_Count)len, byte, partner, tag, &c,
                                   0, &rr);
                rc2 = fy_p2p_isend(sbuf + so, (MPI_Count)len, byte, partner,
                                   tag, &c, 0, FY_SEND_STANDARD, &sr);
            } else {
                rc2 = fy_p2p_isend(sbuf + so, (MPI_Count)len, byte, partner,
                                   tag, &c, 0, FY_SEND_STANDARD, &sr);
                rc1 = fy_p2p_irecv(dst, (MPI_Count)len, byte, partner, tag, &c,
                                   0, &rr);
            }
            if (rc1 || rc2 || !rr || !sr) {
                res->fails[rank][m]++;
                continue;
            }
            int wr = fy_req_wait(rr), ws = fy_req_wait(sr);
            long at = check_pat(dst, len, seed_in, 0);
            bool guards = guards_ok(rbuf, GUARD + ro, GUARD + ro + len, GUARD);
            if (wr || ws || rr->st_bytes != (MPI_Count)len ||
                rr->st_source != partner || rr->st_tag != tag || at >= 0 ||
                !guards) {
                fprintf(
                    stderr,
                    "rank %d: %zu B (offsets %zu/%zu): recv rc %d send rc %d "
                    "bytes %lld src %d tag %d first wrong byte %ld guards %s\n",
                    rank, len, so, ro, wr, ws, (long long)rr->st_bytes,
                    rr->st_source, rr->st_tag, at, guards ? "intact" : "HIT");
                res->fails[rank][m]++;
            }
            fy_req_free(rr);
            fy_req_free(sr);
        }
    }
    /* Truncation: a message one byte longer than the buffer, on each
     * mechanism's path (sizes chosen to span several chunks). */
    const size_t tl[] = {65537, (1 << 20) + 3};
    for (size_t k = 0; k < FY_ARRAY_LEN(tl); k++) {
        size_t len = tl[k];
        unsigned seed = (unsigned)(rank * 7 + (int)k);
        for (size_t i = 0; i < len; i++)
            sbuf[1 + i] = pat(seed, i);
        memset(rbuf, GUARD_BYTE, len + 2 * GUARD + 64);
        unsigned char *dst = rbuf + GUARD + 5;
        struct fy_req *rr = NULL, *sr = NULL;
        int tag = 9000 + (int)k;
        fy_p2p_irecv(dst, (MPI_Count)(len - 1), byte, partner, tag, &c, 0, &rr);
        fy_p2p_isend(sbuf + 1, (MPI_Count)len, byte, partner, tag, &c, 0,
                     FY_SEND_STANDARD, &sr);
        int wr = rr ? fy_req_wait(rr) : -1, ws = sr ? fy_req_wait(sr) : -1;
        long at = check_pat(dst, len - 1, (unsigned)(partner * 7 + (int)k), 0);
        bool guards = guards_ok(rbuf, GUARD + 5, GUARD + 5 + len - 1, GUARD);
        if (wr != -EMSGSIZE || ws != 0 || at >= 0 || !guards) {
            fprintf(stderr,
                    "rank %d: truncation of %zu B: recv rc %d send rc %d "
                    "first wrong byte %ld guards %s\n",
                    rank, len, wr, ws, at, guards ? "intact" : "HIT");
            res->fails[rank][NSIZES]++;
        }
        fy_req_free(rr);
        fy_req_free(sr);
    }
    fy_p2p_finalize();
    free(sbuf);
    free(rbuf);
    return 0;
}

/* Why a table cannot be tested here (NULL: it can). */
static const char *table_unusable(const char *xfer, char *why, size_t whylen)
{
    struct fy_xfer_table t;
    if (fy_xfer_rules_parse(xfer, &t, why, whylen))
        return why;
    for (uint32_t i = 0; i < t.n; i++) {
        int k = t.rule[i].kind;
        if (k >= 0 && !fy_xfer_probe_siblings(k, why, whylen))
            return why;
    }
    return NULL;
}

static void part_p2p(const char *xfer, int want_kind, struct results *res)
{
    char why[256];
    if (table_unusable(xfer, why, sizeof(why))) {
        char msg[320];
        snprintf(msg, sizeof(msg), "p2p FERRY_XFER=%s: %s", xfer, why);
        tap_skip(msg);
        return;
    }
    setenv("FERRY_XFER", xfer, 1);
    memset(res, 0, sizeof(*res));
    int fd = memfd_create("ferry-test-conformance", MFD_CLOEXEC);
    pid_t pid[NRANKS];
    fflush(stdout);
    for (int r = 0; r < NRANKS; r++)
        if ((pid[r] = fork()) == 0)
            _exit(rank_main(r, fd, res, want_kind));
    close(fd);
    bool exited = true;
    int status[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        waitpid(pid[r], &status[r], 0);
        if (!WIFEXITED(status[r]) || WEXITSTATUS(status[r]) != 0) {
            tap_diag("FERRY_XFER=%s rank %d: %s %d", xfer, r,
                     WIFEXITED(status[r]) ? "exit status" : "killed by signal",
                     WIFEXITED(status[r]) ? WEXITSTATUS(status[r])
                                          : WTERMSIG(status[r]));
            exited = false;
        }
    }
    bool kind_ok = true;
    for (int r = 0; r < NRANKS; r++)
        kind_ok = kind_ok && res->kind_ok[r];
    TAP_OK(exited && kind_ok, "p2p FERRY_XFER=%s: 4 ranks ran to the end%s",
           xfer,
           kind_ok ? ""
                   : " (but the mechanism in force is not the one asked for)");
    for (size_t m = 0; m <= NSIZES; m++) {
        int f = 0;
        for (int r = 0; r < NRANKS; r++)
            f += res->fails[r][m];
        if (m < NSIZES)
            TAP_OK(
                exited && f == 0,
                "p2p FERRY_XFER=%s: %zu B both ways in two pairs, unaligned, "
                "guards intact (%d failures)",
                xfer, sizes[m], f);
        else
            TAP_OK(exited && f == 0,
                   "p2p FERRY_XFER=%s: truncation reported, nothing written "
                   "past the buffer (%d failures)",
                   xfer, f);
    }
}

int main(void)
{
    alarm(110);
    unsetenv("FERRY_NO_CMA");
    setenv("FERRY_EAGER_MAX", "0", 1); /* every size >= 1 B by rendezvous */
    setenv("FERRY_FASTBOX_MAX", "0", 1);
    setenv("FERRY_CELLS", "16", 1); /* queue: cells run out and recycle */
    setenv("FERRY_SHMBUF_SIZE", "16384",
           1); /* shmbuf: many halves per message */

    unsigned char *local = aligned_alloc(64, MAXSIZE + 4 * GUARD + 64);
    if (!local)
        tap_skip_all("out of memory");
    part_one_sided(FY_XFER_CMA, local);
    part_one_sided(FY_XFER_PROCMEM, local);
    free(local);

    struct results *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (res == MAP_FAILED)
        tap_skip_all("cannot map shared memory");
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        part_p2p(fy_xfer_registry[k]->name, k, res);
    /* Per-size selection: five mechanisms at once between the same pairs. */
    part_p2p("queue,4K:net,64K:procmem,1M:shmbuf,4M:cma", -1, res);
    return tap_done();
}
