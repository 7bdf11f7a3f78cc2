/* SPDX-License-Identifier: MIT */
/* The measurements: seed-000 Tables II-V and Figs. 2-5, plus the
 * crossovers that --tune turns into a tuning file. Every function here is
 * run by both processes in the same order (lockstep); results land in
 * lab_res of P0, with P1's figures passed through the mailbox. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"

struct lab_results lab_res;

static int repeats(const struct lab *L)
{
    return L->opt.repeats;
}

const struct lab_fig *lab_bw_at(const struct lab *L, int mech, size_t bytes)
{
    for (int s = 0; s < lab_res.nsizes; s++)
        if (lab_res.sizes[s] == bytes && lab_res.bw[mech][s].nrep &&
            lab_res.bw[mech][s].valid)
            return &lab_res.bw[mech][s];
    (void)L;
    return NULL;
}

/* ---- the machine's own cache-line round trip, and the clock check -------- */

void lab_exp_clock(struct lab *L)
{
    int n = L->opt.quick ? 400 : 3000;
    if (n > (int)LAB_MBOX)
        n = LAB_MBOX;
    lab_progress(L, "clock: cache-line ping-pong");
    uint64_t *t0 = calloc((size_t)n, sizeof(*t0)),
             *t2 = calloc((size_t)n, sizeof(*t2));
    lab_barrier(L);
    for (int i = 0; i < n; i++) {
        if (L->me == 0) {
            t0[i] = lab_now_ns();
            lab_send_go(L, 0, 0);
            lab_wait_back(L);
            t2[i] = lab_now_ns();
        } else {
            lab_wait_go(L);
            L->h->mbox[i] = lab_now_ns();
            lab_send_back(L);
        }
    }
    lab_barrier(L);
    if (L->me == 0) {
        double *rtt = calloc((size_t)n, sizeof(double));
        double *skew = calloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; i++) {
            rtt[i] = (double)(t2[i] - t0[i]) / 1e3;
            /* If the clocks agree, P1's stamp sits halfway (the two legs
             * are symmetric); the residual is skew plus asymmetry. */
            skew[i] =
                ((double)L->h->mbox[i] - ((double)t0[i] + (double)t2[i]) / 2) /
                1e3;
        }
        lab_res.line_rtt_us = lab_median(rtt, n);
        lab_res.line_oneway_us = lab_res.line_rtt_us / 2;
        lab_res.skew_us = lab_median(skew, n);
        free(rtt);
        free(skew);
    }
    free(t0);
    free(t2);
    lab_barrier(L);
}

/* ---- Table II and Fig. 4
 * ---------------------------------------------------------- */

void lab_exp_latency(struct lab *L)
{
    int iters = L->opt.quick ? 400 : 2000;
    for (int i = 0; i < L->nmech; i++) {
        if (!L->mech[i].ok)
            continue;
        lab_progress(L, "latency: 1 byte, %s", L->mech[i].label);
        lab_res.lat[i] =
            lab_measure(L, &L->mech[i], 1, false, iters, repeats(L));
    }
}

void lab_exp_bandwidth(struct lab *L)
{
    int n = 0;
    /* 1 B to 16 MiB: every power of two (the seed's Fig. 4 axis), or
     * every other one for --quick. */
    for (size_t s = 1; s <= LAB_MAX_MSG; s *= L->opt.quick ? 4 : 2)
        lab_res.sizes[n++] = s;
    lab_res.nsizes = n;
    /* Size-major order: all mechanisms at one size before the next size,
     * so drift on a shared machine hits them alike. */
    for (int s = 0; s < n; s++) {
        size_t len = lab_res.sizes[s];
        char b[32];
        for (int i = 0; i < L->nmech; i++) {
            if (!L->mech[i].ok)
                continue;
            lab_progress(L, "bandwidth: %s, %s (%d/%d)",
                         lab_size_str(len, b, sizeof(b)), L->mech[i].label,
                         s + 1, n);
            lab_res.bw[i][s] = lab_measure(L, &L->mech[i], len, false,
                                           lab_iters_for(L, len), repeats(L));
        }
    }
}

/* ---- Table III
 * ------------------------------------------------------------------- */

static double median_of(double *v, int n)
{
    return lab_median(v, n);
}

static struct lab_setup_row *setup_row(const char *mech, const char *what)
{
    struct lab_setup_row *r = &lab_res.setup[lab_res.nsetup++];
    memset(r, 0, sizeof(*r));
    snprintf(r->mech, sizeof(r->mech), "%s", mech);
    snprintf(r->what, sizeof(r->what), "%s", what);
    r->setup_touch_us = -1;
    return r;
}

/* A shared segment as the library makes one: memfd, size, map (and, for
 * the "touched" figure, fault in every page as the first transfers do). */
static void time_segment(size_t bytes, int n, struct lab_setup_row *r)
{
    double *su = calloc((size_t)n, sizeof(double)),
           *td = calloc((size_t)n, sizeof(double));
    double *st = calloc((size_t)n, sizeof(double));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            uint64_t t0 = lab_now_ns();
            int fd = memfd_create("ferry-bench-setup", MFD_CLOEXEC);
            if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
                snprintf(r->note, sizeof(r->note), "memfd: %s",
                         strerror(errno));
                return;
            }
            void *p =
                mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED) {
                close(fd);
                snprintf(r->note, sizeof(r->note), "mmap: %s", strerror(errno));
                return;
            }
            if (pass == 1)
                for (size_t o = 0; o < bytes; o += 4096)
                    ((volatile uint8_t *)p)[o] = 1;
            uint64_t t1 = lab_now_ns();
            munmap(p, bytes);
            close(fd);
            uint64_t t2 = lab_now_ns();
            if (pass == 0) {
                su[i] = (double)(t1 - t0) / 1e3;
                td[i] = (double)(t2 - t1) / 1e3;
            } else {
                st[i] = (double)(t1 - t0) / 1e3;
            }
        }
    }
    r->setup_us = median_of(su, n);
    r->teardown_us = median_of(td, n);
    r->setup_touch_us = median_of(st, n);
    r->measured = true;
    free(su);
    free(td);
    free(st);
}

/* Record the medians of ok set-up/tear-down samples in r, then free the
 * sample arrays (shared by every set-up timer below). */
static void setup_record(struct lab_setup_row *r, double *su, double *td,
                         int ok)
{
    if (ok) {
        r->setup_us = median_of(su, ok);
        r->teardown_us = median_of(td, ok);
        r->measured = true;
    }
    free(su);
    free(td);
}

/* The seed's own way (Table III): a System V segment created, attached
 * and marked for removal; tear-down is the detach. */
static void time_sysv(size_t bytes, int n, struct lab_setup_row *r)
{
    double *su = calloc((size_t)n, sizeof(double)),
           *td = calloc((size_t)n, sizeof(double));
    int ok = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = lab_now_ns();
        int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
        if (id < 0) {
            snprintf(r->note, sizeof(r->note), "shmget: %s", strerror(errno));
            break;
        }
        void *p = shmat(id, NULL, 0);
        shmctl(id, IPC_RMID, NULL);
        uint64_t t1 = lab_now_ns();
        if (p == (void *)-1) {
            snprintf(r->note, sizeof(r->note), "shmat: %s", strerror(errno));
            break;
        }
        shmdt(p);
        uint64_t t2 = lab_now_ns();
        su[ok] = (double)(t1 - t0) / 1e3;
        td[ok] = (double)(t2 - t1) / 1e3;
        ok++;
    }
    setup_record(r, su, td, ok);
}

/* The seed's Ptrace set-up and tear-down, split: stop the peer (seize +
 * interrupt + wait for the stop) and let it go (detach). */
static void time_ptrace(struct lab *L, int n, struct lab_setup_row *r)
{
    double *su = calloc((size_t)n, sizeof(double)),
           *td = calloc((size_t)n, sizeof(double));
    int ok = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = lab_now_ns();
        if (ptrace(PTRACE_SEIZE, L->peer, NULL, NULL) != 0) {
            snprintf(r->note, sizeof(r->note), "PTRACE_SEIZE: %s",
                     strerror(errno));
            break;
        }
        if (ptrace(PTRACE_INTERRUPT, L->peer, NULL, NULL) != 0) {
            snprintf(r->note, sizeof(r->note), "PTRACE_INTERRUPT: %s",
                     strerror(errno));
            ptrace(PTRACE_DETACH, L->peer, NULL, NULL);
            break;
        }
        int st;
        while (waitpid(L->peer, &st, __WALL) < 0 && errno == EINTR)
            ;
        uint64_t t1 = lab_now_ns();
        ptrace(PTRACE_DETACH, L->peer, NULL, NULL);
        uint64_t t2 = lab_now_ns();
        su[ok] = (double)(t1 - t0) / 1e3;
        td[ok] = (double)(t2 - t1) / 1e3;
        ok++;
    }
    setup_record(r, su, td, ok);
}

static void time_procmem_open(struct lab *L, int n, struct lab_setup_row *r)
{
    double *su = calloc((size_t)n, sizeof(double)),
           *td = calloc((size_t)n, sizeof(double));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)L->peer);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = lab_now_ns();
        int fd = open(path, O_RDWR | O_CLOEXEC);
        uint64_t t1 = lab_now_ns();
        if (fd < 0) {
            snprintf(r->note, sizeof(r->note), "open %s: %s", path,
                     strerror(errno));
            break;
        }
        close(fd);
        uint64_t t2 = lab_now_ns();
        su[ok] = (double)(t1 - t0) / 1e3;
        td[ok] = (double)(t2 - t1) / 1e3;
        ok++;
    }
    setup_record(r, su, td, ok);
}

static void time_net(int n, struct lab_setup_row *r)
{
    double *su = calloc((size_t)n, sizeof(double)),
           *td = calloc((size_t)n, sizeof(double));
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int lfd = -1, c = -1, s = -1;
        uint16_t port;
        uint64_t t0 = lab_now_ns();
        int rc = fy_xfer_net_listen(&lfd, &port);
        if (!rc)
            rc = fy_xfer_net_connect(port, &c);
        if (!rc) {
            struct pollfd p = {.fd = lfd, .events = POLLIN};
            rc = poll(&p, 1, 2000) == 1 ? fy_xfer_net_accept(lfd, &s)
                                        : -ETIMEDOUT;
        }
        uint64_t t1 = lab_now_ns();
        if (lfd >= 0)
            close(lfd);
        if (c >= 0)
            close(c);
        if (s >= 0)
            close(s);
        uint64_t t2 = lab_now_ns();
        if (rc) {
            snprintf(r->note, sizeof(r->note), "loopback connect: %s",
                     strerror(-rc));
            break;
        }
        su[ok] = (double)(t1 - t0) / 1e3;
        td[ok] = (double)(t2 - t1) / 1e3;
        ok++;
    }
    setup_record(r, su, td, ok);
}

static bool mech_usable(const struct lab *L, int xkind)
{
    for (int i = 0; i < L->nmech; i++)
        if (L->mech[i].xkind == xkind && L->mech[i].ok)
            return true;
    return false;
}

static const char *mech_why(const struct lab *L, int xkind)
{
    for (int i = 0; i < L->nmech; i++)
        if (L->mech[i].xkind == xkind && L->mech[i].why[0])
            return L->mech[i].why;
    return "not usable here";
}

void lab_exp_setup(struct lab *L)
{
    int n = L->opt.quick ? 40 : 200;
    lab_progress(L, "setup: set-up and tear-down costs");
    lab_barrier(L);
    /* P0 measures; P1 idles in the next barrier (it is the peer that
     * ptrace stops and whose /proc/<pid>/mem is opened). */
    if (L->me == 0) {
        lab_res.nsetup = 0;
        for (int k = 0; k < FY_XFER_NKINDS; k++) {
            const struct fy_xfer_ops *ops = fy_xfer_registry[k];
            if (!ops)
                continue;
            struct lab_setup_row *r;
            bool usable = mech_usable(L, k);
            switch (k) {
            case FY_XFER_CMA: {
                r = setup_row(ops->name, "nothing: process_vm_readv/writev "
                                         "take a pid and addresses");
                r->nothing = true;
                uint64_t t0 = lab_now_ns();
                char why[128];
                if (ops->probe)
                    ops->probe(why, sizeof(why));
                snprintf(r->note, sizeof(r->note),
                         "the library probes it once at start-up (%.1f us)",
                         (double)(lab_now_ns() - t0) / 1e3);
                break;
            }
            case FY_XFER_PROCMEM:
                r = setup_row(ops->name, "open /proc/<pid>/mem once per peer "
                                         "/ close it");
                if (usable)
                    time_procmem_open(L, n, r);
                r = setup_row("ptrace-attach",
                              "stop the peer (PTRACE_SEIZE+INTERRUPT+wait) / "
                              "PTRACE_DETACH, around every transfer");
                if (usable)
                    time_ptrace(L, n, r);
                snprintf(r->note + strlen(r->note),
                         sizeof(r->note) - strlen(r->note),
                         "%sper transfer, not per region: the peer is frozen "
                         "in between",
                         r->note[0] ? "; " : "");
                break;
            case FY_XFER_SHMBUF: {
                size_t bytes =
                    2 * sizeof(struct fy_shmbuf_ctl) + 2 * L->lib_shmbuf;
                char what[112];
                snprintf(what, sizeof(what),
                         "memfd + ftruncate + mmap of one pair's double "
                         "buffer (%zu KiB) / munmap + close",
                         bytes >> 10);
                r = setup_row(ops->name, what);
                time_segment(bytes, n, r);
                /* The seed's System V path for the same segment, for a
                 * like-for-like comparison with its Table III. */
                struct lab_setup_row *v = setup_row(
                    "shmbuf (System V)", "shmget + shmat + IPC_RMID of the "
                                         "same double buffer / shmdt "
                                         "(the seed's method)");
                time_sysv(bytes, n, v);
                if (!v->note[0])
                    snprintf(v->note, sizeof(v->note),
                             "not what Ferry does: "
                             "for comparison with "
                             "the seed");
                break;
            }
            case FY_XFER_QUEUE: {
                size_t bytes = 2 * sizeof(struct lab_queues) +
                               2ull * LAB_NCELLS * L->lib_cell;
                char what[112];
                snprintf(what, sizeof(what),
                         "memfd + ftruncate + mmap of 2 ranks' queues and "
                         "%u cells each (%zu KiB) / munmap + close",
                         LAB_NCELLS, bytes >> 10);
                r = setup_row(ops->name, what);
                time_segment(bytes, n, r);
                break;
            }
            case FY_XFER_NET:
                r = setup_row(ops->name, "listen + connect + accept on "
                                         "127.0.0.1 / close the 3 sockets");
                if (usable)
                    time_net(n, r);
                break;
            default:
                r = setup_row(ops->name, "(no laboratory set-up probe)");
                break;
            }
            if (ops->register_mem) {
                r->region_specific = true;
                snprintf(r->note + strlen(r->note),
                         sizeof(r->note) - strlen(r->note),
                         "%sregister_mem per region", r->note[0] ? "; " : "");
            }
            if (!usable && !r->measured && !r->nothing)
                snprintf(r->note, sizeof(r->note), "not measured: %s",
                         mech_why(L, k));
        }
    }
    lab_barrier(L);
}

/* ---- Table IV and Fig. 5: cache disturbance
 * ------------------------------------ */

/* The user's data: a buffer of half the L2 whose lines form one random
 * cycle, so re-reading it is a chain of dependent loads that hardware
 * prefetchers cannot run ahead of: each line that is no longer in the L2
 * costs a full L3 (or memory) access, visible in the time. */
struct chase {
    void **buf;
    size_t lines;
};

static void chase_build(struct chase *c, size_t bytes, uint64_t seed)
{
    c->lines = bytes / FY_CACHELINE;
    c->buf = aligned_alloc(4096, bytes);
    size_t *perm = malloc(c->lines * sizeof(size_t));
    for (size_t i = 0; i < c->lines; i++)
        perm[i] = i;
    for (size_t i = c->lines - 1; i > 0; i--) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        size_t j = (size_t)(seed % (i + 1));
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    const size_t stride = FY_CACHELINE / sizeof(void *);
    for (size_t i = 0; i < c->lines; i++)
        c->buf[perm[i] * stride] = &c->buf[perm[(i + 1) % c->lines] * stride];
    free(perm);
}

static uint64_t chase_time(const struct chase *c)
{
    void **p = c->buf;
    uint64_t t0 = lab_now_ns();
    for (size_t i = 0; i < c->lines; i++)
        p = (void **)*p;
    uint64_t t1 = lab_now_ns();
    /* Keep the chain live. */
    __asm__ volatile("" : : "r"(p) : "memory");
    return t1 - t0;
}

/* Lower quartile: what disturbs these timings from outside (other
 * programs sharing the core, the host moving a vCPU) only adds time. */
static double lower_quartile(double *v, int n)
{
    lab_median(v, n); /* sorts */
    return v[n / 4];
}

/* Push the user buffer out of the L2 the way a transfer would: stream
 * through 8 x L2 of other data (region 1 of the pool). */
static void evict(struct lab *L)
{
    volatile uint8_t *p = L->pool + L->region_size;
    uint64_t sum = 0;
    for (size_t o = 0; o < 8 * L->l2; o += FY_CACHELINE)
        sum += p[o];
    __asm__ volatile("" : : "r"(sum));
}

/* Calibration, both processes at once (each on its own core): warm,
 * L3-cold and DRAM-cold re-reads interleaved so drift hits all three. */
static void cache_calibrate(struct lab *L, const struct chase *c)
{
    double warm[64], cold[64], dram[64];
    const int NC = 31;
    for (int i = 0; i < 3; i++)
        chase_time(c);
    for (int i = 0; i < NC; i++) {
        chase_time(c);
        warm[i] = (double)chase_time(c);
        evict(L);
        cold[i] = (double)chase_time(c);
        for (size_t l = 0; l < c->lines; l++)
            __builtin_ia32_clflush((const char *)c->buf + l * FY_CACHELINE);
        __builtin_ia32_mfence();
        dram[i] = (double)chase_time(c);
    }
    struct lab_cache_cal cal = {.warm_ns = lower_quartile(warm, NC),
                                .cold_ns = lower_quartile(cold, NC),
                                .dram_ns = lower_quartile(dram, NC),
                                .lines = (int)c->lines};
    cal.per_line_ns = (cal.cold_ns - cal.warm_ns) / (double)c->lines;
    lab_barrier(L);
    if (L->me == 1)
        memcpy(&L->h->mbox[0], &cal, sizeof(cal));
    lab_barrier(L);
    if (L->me == 0) {
        lab_res.cal[0] = cal;
        memcpy(&lab_res.cal[1], &L->h->mbox[0], sizeof(cal));
    }
    lab_barrier(L);
}

/* One cell of Table IV: R rounds, each a re-read after two barriers with
 * nothing between them (the reference) and a re-read after two barriers
 * around one transfer (m NULL: no transfer either time). Fills *out in P0
 * and returns there the cell's disturbance: how far its reference strays
 * from the warm calibration, in lines. */
static double cache_cell(struct lab *L, const struct chase *c,
                         const struct lab_mech *m, size_t bytes, int R,
                         struct lab_cache_res *out)
{
    double ref[2][LAB_MAX_REPEATS * 3], t[2][LAB_MAX_REPEATS * 3];
    for (int r = 0; r < R; r++) {
        for (int pass = 0; pass < 2; pass++) {
            chase_time(c); /* the application's data is hot */
            lab_barrier(L);
            uint64_t stamp;
            if (pass == 1 && m)
                lab_xfer_once(L, m, bytes, false, 0, &stamp);
            lab_barrier(L);
            double v = (double)chase_time(c);
            (pass ? t : ref)[0][r] = v;
            if (L->me == 1)
                L->h->mbox[256 + 2 * r + pass] = (uint64_t)v;
        }
    }
    lab_barrier(L);
    double noise = 0;
    if (L->me == 0) {
        for (int r = 0; r < R; r++) {
            ref[1][r] = (double)L->h->mbox[256 + 2 * r];
            t[1][r] = (double)L->h->mbox[256 + 2 * r + 1];
        }
        struct lab_cache_res res = {.valid = true};
        for (int side = 0; side < 2; side++) {
            const struct lab_cache_cal *k = &lab_res.cal[side];
            double rf = lower_quartile(ref[side], R);
            res.ns[side] = lower_quartile(t[side], R);
            res.ref_ns[side] = rf;
            if (k->per_line_ns > 0) {
                res.lines[side] = (res.ns[side] - rf) / k->per_line_ns;
                double d = (rf - k->warm_ns) / k->per_line_ns;
                d = d < 0 ? -d : d;
                noise = d > noise ? d : noise;
            }
            /* Slower than "all from L3": the transfer pushed user lines
             * out of the L3 as well. */
            if (res.ns[side] > k->cold_ns && k->dram_ns > k->cold_ns) {
                double sh =
                    (res.ns[side] - k->cold_ns) / (k->dram_ns - k->cold_ns);
                res.dram_share[side] = sh > 1 ? 1 : sh;
            }
        }
        res.noise = noise;
        *out = res;
    }
    lab_barrier(L);
    return noise;
}

/* Table IV / Fig. 5. The cache experiment is the one most exposed to the
 * machine's other users: on a VM, whatever runs on the same physical core
 * (another guest on the SMT sibling) shares its L2, and it comes and goes.
 * So every cell carries its own no-transfer reference, taken in the same
 * rounds; a cell whose reference strays from the warm calibration by more
 * than 10% of the buffer is measured again (up to 3 times, 2 with
 * --quick) and the least disturbed attempt is kept and flagged if still
 * above 10%. */
void lab_exp_cache(struct lab *L)
{
    static const size_t full[] = {16u << 10, 64u << 10, 256u << 10, 1u << 20,
                                  4u << 20};
    static const size_t quick[] = {64u << 10, 1u << 20};
    const size_t *sizes = L->opt.quick ? quick : full;
    int nsz = L->opt.quick ? (int)FY_ARRAY_LEN(quick) : (int)FY_ARRAY_LEN(full);
    int R = L->opt.quick ? 11 : 21;
    int max_attempts = L->opt.quick ? 2 : 3;
    struct chase c;
    chase_build(&c, L->l2 / 2, 0x9e3779b97f4a7c15ull + (uint64_t)L->me);
    lab_progress(L, "cache: calibrating the re-read of half the L2");
    cache_calibrate(L, &c);
    lab_res.ncache = nsz;
    for (int s = 0; s < nsz; s++)
        lab_res.cache_sizes[s] = sizes[s];
    lab_res.cache_attempts = 0;
    lab_res.cache_noise = 0;
    lab_res.cache_noisy_cells = 0;
    for (int i = -1; i < L->nmech; i++) {
        const struct lab_mech *m = i >= 0 ? &L->mech[i] : NULL;
        if (m && !m->ok)
            continue;
        for (int s = 0; s < (m ? nsz : 1); s++) {
            char b[32];
            struct lab_cache_res best = {0}, cur;
            double best_noise = 1e300;
            for (int attempt = 0;; attempt++) {
                lab_progress(L, "cache: %s, %s%s", m ? m->label : "no transfer",
                             lab_size_str(sizes[s], b, sizeof(b)),
                             attempt ? " (again: disturbed from outside)" : "");
                double noise = cache_cell(L, &c, m, sizes[s], R, &cur);
                if (L->me == 0) {
                    lab_res.cache_attempts++;
                    if (noise < best_noise) {
                        best_noise = noise;
                        best = cur;
                    }
                    L->h->go.aux = attempt + 1 < max_attempts &&
                                   best_noise > 0.10 * lab_res.cal[0].lines;
                }
                lab_barrier(L);
                bool again = L->h->go.aux != 0;
                lab_barrier(L);
                if (!again)
                    break;
            }
            if (L->me == 0) {
                if (m)
                    lab_res.cache[i][s] = best;
                else
                    lab_res.cache_none = best;
                if (best_noise > lab_res.cache_noise)
                    lab_res.cache_noise = best_noise;
                if (best_noise > 0.10 * lab_res.cal[0].lines)
                    lab_res.cache_noisy_cells++;
            }
        }
    }
    free(c.buf);
}

/* ---- Table V "can overlap computation"
 * ------------------------------------------ */

static uint64_t spin_work(uint64_t iters)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static double time_work(uint64_t iters)
{
    uint64_t t0 = lab_now_ns();
    uint64_t x = spin_work(iters);
    __asm__ volatile("" : : "r"(x));
    return (double)(lab_now_ns() - t0) / 1e3;
}

void lab_exp_overlap(struct lab *L)
{
    size_t bytes = L->opt.quick ? (1u << 20) : (4u << 20);
    int R = L->opt.quick ? 7 : 15;
    /* Compute rate of this core (iterations per us): the best of a few
     * tries, for the same reason. */
    double best_t = 1e300;
    for (int k = 0; k < 5; k++) {
        double tw = time_work(1 << 20);
        best_t = tw < best_t ? tw : best_t;
    }
    double rate = (double)(1 << 20) / best_t;
    for (int i = 0; i < L->nmech; i++) {
        struct lab_mech *m = &L->mech[i];
        if (!m->ok || !lab_mech_one_sided(m))
            continue;
        lab_progress(L, "overlap: %s", m->label);
        /* The passive side computes for about 3x the transfer (at least
         * 2 ms), so the transfer falls entirely inside the computation. */
        if (L->me == 0) {
            const struct lab_fig *f = lab_bw_at(L, i, bytes);
            double x = f ? f->value : 2000;
            double d = 3 * x > 2000 ? 3 * x : 2000;
            memcpy(&L->h->go.aux, &d, sizeof(d));
            lab_res.ovl[i].xfer_us = x;
        }
        lab_barrier(L);
        double d;
        memcpy(&d, &L->h->go.aux, sizeof(d));
        uint64_t iters = (uint64_t)(d * rate);
        int passive = m->kind == LAB_PUT ? 1 : 0;
        double alone[LAB_MAX_REPEATS], with[LAB_MAX_REPEATS];
        for (int r = 0; r < R; r++) {
            for (int pass = 0; pass < 2; pass++) {
                lab_barrier(L);
                uint64_t stamp;
                double t = 0;
                if (pass == 1)
                    lab_xfer_once(L, m, bytes, false, 0, &stamp);
                /* The initiator's lab_xfer_once did the transfer; the
                 * passive side's returned at once, and now computes. */
                if (L->me == passive)
                    t = time_work(iters);
                lab_barrier(L);
                if (L->me == passive && L->me == 1)
                    memcpy(&L->h->mbox[512 + 2 * r + pass], &t, sizeof(t));
                if (L->me == 0 && passive == 0)
                    (pass ? with : alone)[r] = t;
                lab_barrier(L);
                if (L->me == 0 && passive == 1)
                    memcpy(pass ? &with[r] : &alone[r],
                           &L->h->mbox[512 + 2 * r + pass], sizeof(double));
            }
        }
        if (L->me == 0) {
            struct lab_overlap *o = &lab_res.ovl[i];
            o->measured = true;
            o->bytes = bytes;
            /* Minima: anything else that steals the CPU (other programs
             * on a shared machine) only adds time, so the fastest run of
             * each kind is the one least disturbed by outsiders; a stop
             * caused by the transfer itself is in every "with" run. */
            double mw = with[0], ma = alone[0];
            for (int r = 1; r < R; r++) {
                mw = with[r] < mw ? with[r] : mw;
                ma = alone[r] < ma ? alone[r] : ma;
            }
            o->alone_us = ma;
            o->with_us = mw;
            o->lost_us = mw - ma;
        }
        lab_barrier(L);
    }
}

/* ---- Fig. 2: copy routines
 * --------------------------------------------------------- */

void lab_exp_memcpy(struct lab *L)
{
    int n = 0;
    for (size_t s = 8; s <= LAB_MAX_MSG; s *= L->opt.quick ? 4 : 2)
        lab_res.mc_sizes[n++] = s;
    lab_res.nmc = n;
    int R = repeats(L);
    lab_barrier(L);
    if (L->me == 0) {
        for (int v = 0; v < 3; v++) {
            if (!lab_copies[v].ok)
                continue;
            for (int s = 0; s < n; s++) {
                size_t len = lab_res.mc_sizes[s];
                char b[32];
                lab_progress(L, "memcpy: %s, %s", lab_copies[v].name,
                             lab_size_str(len, b, sizeof(b)));
                /* Batches of copies, each from a fresh (rotated) place,
                 * timed together: the clock costs ~20 ns a read. */
                size_t k = (L->opt.quick ? (4u << 20) : (32u << 20)) / len;
                if (k > 2000)
                    k = 2000;
                if (k < 4)
                    k = 4;
                double rep[LAB_MAX_REPEATS];
                for (int r = 0; r < R; r++) {
                    uint64_t t0 = lab_now_ns();
                    for (size_t j = 0; j < k; j++) {
                        size_t off = lab_rot_local(L, len);
                        lab_copies[v].fn(L->pool + L->region_size + off,
                                         L->pool + off, len);
                    }
                    rep[r] = (double)(lab_now_ns() - t0) / (double)k;
                }
                lab_res.mc_ns[v][s] = lab_median(rep, R);
            }
        }
    }
    lab_barrier(L);
}

/* ---- Fig. 3: buffer and cell size at 4 MiB
 * ---------------------------------------- */

static int find_kind(const struct lab *L, enum lab_kind kind)
{
    for (int i = 0; i < L->nmech; i++)
        if (L->mech[i].kind == kind && L->mech[i].ok)
            return i;
    return -1;
}

void lab_exp_sweeps(struct lab *L)
{
    size_t bytes = 4u << 20;
    lab_res.sweep_bytes = bytes;
    int iters = lab_iters_for(L, bytes), R = repeats(L);
    int sb = find_kind(L, LAB_SHMBUF), q = find_kind(L, LAB_QUEUE);
    char b[32];
    lab_res.nsb = lab_res.nq = 0;
    if (sb >= 0) {
        for (size_t half = 1024; half <= LAB_MAX_SHMBUF;
             half *= L->opt.quick ? 4 : 2) {
            lab_progress(L, "sweep: shmbuf halves of %s",
                         lab_size_str(half, b, sizeof(b)));
            lab_sb_config(L, half);
            struct lab_fig f =
                lab_measure(L, &L->mech[sb], bytes, false, iters, R);
            lab_res.sb_sizes[lab_res.nsb] = half;
            lab_res.sb_us[lab_res.nsb++] = f.valid ? f.value : -1;
        }
        lab_sb_config(L, L->lib_shmbuf);
    }
    if (q >= 0) {
        for (size_t cell = 1024; cell <= LAB_MAX_CELL;
             cell *= L->opt.quick ? 4 : 2) {
            lab_progress(L, "sweep: queue cells of %s",
                         lab_size_str(cell, b, sizeof(b)));
            lab_queue_config(L, (uint32_t)cell);
            struct lab_fig f =
                lab_measure(L, &L->mech[q], bytes, false, iters, R);
            lab_res.q_sizes[lab_res.nq] = cell;
            lab_res.q_us[lab_res.nq++] = f.valid ? f.value : -1;
        }
        lab_queue_config(L, (uint32_t)L->lib_cell);
    }
    /* The two-sided drivers with each copy routine (the seed used its
     * fastest one inside them). */
    lab_res.tsc_sizes[0] = 64u << 10;
    lab_res.tsc_sizes[1] = 4u << 20;
    for (int which = 0; which < 2; which++) {
        int mi = which ? q : sb;
        for (int v = 0; v < 3; v++)
            for (int s = 0; s < 2; s++) {
                lab_res.tsc_us[which][v][s] = -1;
                if (mi < 0 || !lab_copies[v].ok)
                    continue;
                lab_progress(L, "sweep: %s with %s, %s", L->mech[mi].label,
                             lab_copies[v].name,
                             lab_size_str(lab_res.tsc_sizes[s], b, sizeof(b)));
                L->copy_override = lab_copies[v].fn;
                struct lab_fig f =
                    lab_measure(L, &L->mech[mi], lab_res.tsc_sizes[s], false,
                                lab_iters_for(L, lab_res.tsc_sizes[s]), R);
                L->copy_override = NULL;
                lab_res.tsc_us[which][v][s] = f.valid ? f.value : -1;
            }
    }
}

/* ---- --tune: crossovers
 * ---------------------------------------------------------------- */

/* What one more range in the rule table must save, in summed relative
 * slowdown over the grid sizes it covers (see lab_exp_tune). */
#define LAB_RULE_PRICE 0.25

static bool tune_candidate(const struct lab_mech *m)
{
    /* What the library's rendezvous can use: receiver-get for one-sided
     * mechanisms, and the two-sided pipelines. */
    return m->ok && (m->kind == LAB_GET || m->kind == LAB_SPLIT ||
                     m->kind == LAB_SHMBUF || m->kind == LAB_QUEUE ||
                     m->kind == LAB_NET);
}

static uint64_t round_to(double x, uint64_t q)
{
    if (x < 0)
        x = 0;
    return ((uint64_t)x + q / 2) / q * q;
}

/* Where does the difference d (positive at a, negative at b) cross zero?
 * Linear in size between the two grid points. */
static double cross(double a, double b, double da, double db)
{
    if (da == db)
        return b;
    return a + (b - a) * da / (da - db);
}

void lab_exp_tune(struct lab *L)
{
    static const size_t full[] = {
        256,     512,     1024,     2048,    3072,    4096,    6144,
        8192,    10240,   12288,    14336,   16256,   24576,   32768,
        49152,   65536,   98304,    131072,  196608,  262144,  393216,
        524288,  786432,  1048576,  1572864, 2097152, 3145728, 4194304,
        6291456, 8388608, 12582912, 16777216};
    static const size_t quick[] = {1024,   4096,    8192,    16256,   65536,
                                   262144, 1048576, 4194304, 16777216};
    const size_t *grid = L->opt.quick ? quick : full;
    int ng = L->opt.quick ? (int)FY_ARRAY_LEN(quick) : (int)FY_ARRAY_LEN(full);
    struct lab_tune *t = &lab_res.tune;
    size_t payload = L->lib_cell - FY_CELL_HDR;
    int q = find_kind(L, LAB_QUEUE);
    int R = repeats(L);
    char b[32];

    t->nr = t->ne = 0;
    lab_queue_config(L, (uint32_t)L->lib_cell);
    lab_sb_config(L, L->lib_shmbuf);
    for (int g = 0; g < ng; g++) {
        size_t len = grid[g];
        t->r_sizes[t->nr] = len;
        /* Eager: one cell from the sender's free queue to the receiver's
         * queue, copied in and out; only sizes that fit one cell. */
        if (q >= 0 && len <= payload) {
            lab_progress(L, "tune: eager %s", lab_size_str(len, b, sizeof(b)));
            struct lab_fig f = lab_measure(L, &L->mech[q], len, false,
                                           lab_iters_for(L, len), R);
            t->e_sizes[t->ne] = len;
            t->eager_us[t->ne++] = f.valid ? f.value : -1;
        }
        for (int i = 0; i < L->nmech; i++) {
            if (!tune_candidate(&L->mech[i]))
                continue;
            t->r_used[i] = true;
            lab_progress(L, "tune: rendezvous %s, %s",
                         lab_size_str(len, b, sizeof(b)), L->mech[i].label);
            struct lab_fig f = lab_measure(L, &L->mech[i], len, true,
                                           lab_iters_for(L, len), R);
            t->rndv_us[i][t->nr] = f.valid ? f.value : 1e30;
        }
        t->nr++;
    }
    if (L->me != 0)
        return;

    /* Best rendezvous time at each grid point. */
    double best[LAB_MAX_TUNE];
    int who[LAB_MAX_TUNE];
    for (int g = 0; g < t->nr; g++) {
        best[g] = 1e30;
        who[g] = -1;
        for (int i = 0; i < L->nmech; i++)
            if (t->r_used[i] && t->rndv_us[i][g] < best[g]) {
                best[g] = t->rndv_us[i][g];
                who[g] = i;
            }
    }

    /* eager_max: the threshold k (eager for the first k+1 eager sizes,
     * the best rendezvous above) that minimises the summed relative
     * slowdown against the fastest choice at every eager size. Unlike
     * "the first size where eager loses", one noisy point or a local
     * blip cannot move it far. Ties go to the larger eager limit (eager
     * needs no handshake and lets the sender finish before the receiver
     * arrives). Between the chosen size and the next one, the limit is
     * put where the two curves cross if they do. */
    t->eager_max = payload;
    t->eager_limited = true;
    if (t->ne == 0) {
        t->eager_limited = false;
        t->eager_max = L->lib_eager;
    } else {
        double bst[LAB_MAX_TUNE];
        for (int e = 0; e < t->ne; e++) {
            int g = 0;
            while (g < t->nr && t->r_sizes[g] != t->e_sizes[e])
                g++;
            bst[e] = g < t->nr ? best[g] : 1e30;
        }
        int pick = -1;
        double pick_regret = 1e300;
        for (int k = -1; k < t->ne; k++) {
            double regret = 0;
            for (int e = 0; e < t->ne; e++) {
                double eg = t->eager_us[e] > 0 ? t->eager_us[e] : 1e30;
                double x = e <= k ? eg / bst[e] - 1 : bst[e] / eg - 1;
                regret += x > 0 ? x : 0;
            }
            if (regret <= pick_regret) {
                pick_regret = regret;
                pick = k;
            }
        }
        if (pick < t->ne - 1) {
            t->eager_limited = false;
            if (pick < 0) {
                t->eager_max = 0;
            } else {
                double da = bst[pick] - t->eager_us[pick];
                double db = bst[pick + 1] - t->eager_us[pick + 1];
                double at = da > 0 && db < 0
                                ? cross((double)t->e_sizes[pick],
                                        (double)t->e_sizes[pick + 1], da, db)
                                : (double)t->e_sizes[pick];
                t->eager_max = round_to(at, 64);
                if (t->eager_max < t->e_sizes[pick])
                    t->eager_max = t->e_sizes[pick];
                if (t->eager_max > payload)
                    t->eager_max = payload;
            }
        }
    }

    /* The shared single copy (cma split) is not a mechanism of its own
     * but how the library runs cma from split_min up: pick split_min as
     * the threshold over the rendezvous sizes above eager_max that
     * minimises the summed relative slowdown of "plain cma below, split
     * from here" against the faster of the two at each size, plus
     * LAB_RULE_PRICE for turning it on at all (a tie keeps it off: the
     * plain copy needs nothing from the sender). Then cma's curve for the
     * rules below is that combination, the one the library will run. */
    int first = 0;
    while (first < t->nr &&
           (t->r_sizes[first] <= t->eager_max || who[first] < 0))
        first++;
    static double rv[LAB_MAX_MECHS][LAB_MAX_TUNE];
    for (int i = 0; i < L->nmech; i++)
        for (int g = 0; g < t->nr; g++)
            rv[i][g] = t->rndv_us[i][g];
    int cg = -1, cs = -1;
    for (int i = 0; i < L->nmech; i++) {
        if (!t->r_used[i] || L->mech[i].xkind != FY_XFER_CMA)
            continue;
        if (L->mech[i].kind == LAB_GET)
            cg = i;
        else if (L->mech[i].kind == LAB_SPLIT)
            cs = i;
    }
    t->split_measured = cg >= 0 && cs >= 0 && first < t->nr;
    t->split_min = 0;
    if (t->split_measured) {
        int pick = t->nr; /* off */
        double pick_cost = 1e300;
        for (int k = t->nr; k >= first; k--) {
            double cost = k < t->nr ? LAB_RULE_PRICE : 0;
            for (int g = first; g < t->nr; g++) {
                double both = FY_MIN(rv[cg][g], rv[cs][g]);
                cost += (g >= k ? rv[cs][g] : rv[cg][g]) / both - 1;
            }
            if (cost < pick_cost) {
                pick_cost = cost;
                pick = k;
            }
        }
        if (pick < t->nr) {
            double x = (double)t->r_sizes[pick];
            if (pick > first) {
                double da = rv[cs][pick - 1] - rv[cg][pick - 1];
                double db = rv[cs][pick] - rv[cg][pick];
                if (da > 0 && db < 0)
                    x = cross((double)t->r_sizes[pick - 1],
                              (double)t->r_sizes[pick], da, db);
            }
            t->split_min = round_to(x, 64);
            if (pick > first && t->split_min <= t->r_sizes[pick - 1])
                t->split_min = t->r_sizes[pick];
            if (t->split_min == 0)
                t->split_min = 64;
            for (int g = pick; g < t->nr; g++)
                rv[cg][g] = rv[cs][g];
        }
        t->r_used[cs] = false; /* cma, as combined, stands for it below */
    }
    for (int g = 0; g < t->nr; g++) {
        best[g] = 1e30;
        for (int i = 0; i < L->nmech; i++)
            if (t->r_used[i] && rv[i][g] < best[g])
                best[g] = rv[i][g];
    }

    /* Rules above eager_max: split the sizes into ranges, one mechanism
     * each, minimising the summed relative slowdown against the fastest
     * mechanism at every size plus a fixed price per extra range
     * (dynamic programming over the grid). A switch must therefore buy
     * more than LAB_RULE_PRICE in total, e.g. 5% at five sizes: single
     * points and near-ties, which change from run to run, do not split
     * the table. Boundaries sit where the two curves cross between grid
     * points (if they do). */
    t->nrules = 0;
    int n = t->nr - first;
    if (n > 0) {
        int cand[LAB_MAX_MECHS], nc = 0;
        for (int i = 0; i < L->nmech; i++)
            if (t->r_used[i])
                cand[nc++] = i;
        static double cost[LAB_MAX_TUNE][LAB_MAX_MECHS];
        static int from[LAB_MAX_TUNE][LAB_MAX_MECHS];
        for (int g = 0; g < n; g++) {
            int gg = first + g;
            for (int c = 0; c < nc; c++) {
                double here = rv[cand[c]][gg] / best[gg] - 1;
                if (g == 0) {
                    cost[g][c] = here;
                    from[g][c] = -1;
                    continue;
                }
                double bc = 1e300;
                int bf = 0;
                for (int p = 0; p < nc; p++) {
                    double x = cost[g - 1][p] + (p == c ? 0 : LAB_RULE_PRICE);
                    if (x < bc) {
                        bc = x;
                        bf = p;
                    }
                }
                cost[g][c] = bc + here;
                from[g][c] = bf;
            }
        }
        int assign[LAB_MAX_TUNE];
        int bc = 0;
        for (int c = 1; c < nc; c++)
            if (cost[n - 1][c] < cost[n - 1][bc])
                bc = c;
        for (int g = n - 1; g >= 0; g--) {
            assign[g] = cand[bc];
            bc = g ? from[g][bc] : 0;
        }
        t->rules[0].min = 0;
        t->rules[0].mech = assign[0];
        t->nrules = 1;
        for (int g = 1; g < n && t->nrules < FY_XFER_RULES_MAX; g++) {
            if (assign[g] == assign[g - 1])
                continue;
            int a0 = assign[g - 1], b0 = assign[g], ga = first + g - 1,
                gb = first + g;
            double da = rv[b0][ga] - rv[a0][ga];
            double db = rv[b0][gb] - rv[a0][gb];
            double x = da > 0 && db < 0 ? cross((double)t->r_sizes[ga],
                                                (double)t->r_sizes[gb], da, db)
                                        : (double)t->r_sizes[gb];
            uint64_t at = round_to(x, 64);
            if (at <= t->rules[t->nrules - 1].min)
                at = t->r_sizes[gb];
            t->rules[t->nrules].min = at;
            t->rules[t->nrules].mech = b0;
            t->nrules++;
        }
    }
    if (t->split_measured)
        t->r_used[cs] = true; /* its raw curve still goes in the report */
    t->done = true;
}
