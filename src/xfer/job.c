/* SPDX-License-Identifier: MIT */
/* The job's mechanisms: which of them work between the ranks of this job
 * and which one serves each rendezvous size. Every rank probes the kinds
 * rank 0's rule table may use (and only those: no idle machinery), then
 * all meet at the probe barrier, keep the kinds that worked everywhere and
 * adopt rank 0's table, so the whole job agrees. Also brings the used
 * mechanisms' seed-000 init up and every finalize down, and places the
 * mechanisms' regions in the node's segment (shm_layout.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boot/boot.h"
#include "util/tuned.h"
#include "util/util.h"
#include "xfer/shm_layout.h"
#include "xfer/xfer.h"

uint64_t fy_xfer_split_min;
uint64_t fy_xfer_push_max;
struct fy_xfer_shm fy_xfer_shm;

/* The word the one-sided probes of the other ranks read. */
static uint64_t probe_word;

/* ---- the regions --------------------------------------------------------- */

int fy_xfer_shm_declare(struct fy_shm_layout *lay, uint64_t half_size,
                        uint32_t npads)
{
    if (half_size == 0 || half_size % FY_CACHELINE || npads < 1 ||
        npads > FY_SHMBUF_PADS_MAX) {
        FY_ERROR("%u double-buffer pads of 2 x %llu bytes: not a layout", npads,
                 (unsigned long long)half_size);
        return -EINVAL;
    }
    int rc;
    if ((rc = fy_shm_region_add(
             lay, FY_XFER_JOB_REGION, FY_SHM_PER_JOB,
             sizeof(struct fy_xfer_job_shm), 1, FY_CACHELINE,
             FY_SHM_SIG(sizeof(struct fy_xfer_job_shm),
                        offsetof(struct fy_xfer_job_shm, from),
                        offsetof(struct fy_xfer_job_shm, nrules),
                        offsetof(struct fy_xfer_job_shm, rule_kind),
                        offsetof(struct fy_xfer_job_shm, rule_min),
                        offsetof(struct fy_xfer_job_shm, push_max),
                        FY_XFER_RULES_MAX, FY_XFER_NKINDS))) < 0 ||
        (rc = fy_shm_region_add(
             lay, FY_XFER_RANK_REGION, FY_SHM_PER_RANK,
             sizeof(struct fy_xfer_rank_shm), 1, FY_CACHELINE,
             FY_SHM_SIG(sizeof(struct fy_xfer_rank_shm),
                        offsetof(struct fy_xfer_rank_shm, probe_value),
                        offsetof(struct fy_xfer_rank_shm, net_key),
                        offsetof(struct fy_xfer_rank_shm, net_port),
                        offsetof(struct fy_xfer_rank_shm, ok)))) < 0 ||
        (rc = fy_shm_region_add(lay, FY_XFER_SPLIT_REGION, FY_SHM_PER_RANK,
                                sizeof(struct fy_split_ctl), 1, FY_CACHELINE,
                                FY_SHM_SIG(sizeof(struct fy_split_ctl),
                                           offsetof(struct fy_split_ctl, done),
                                           offsetof(struct fy_split_ctl, err),
                                           FY_SPLIT_CLAIM_REV))) < 0 ||
        (rc = fy_shm_region_add(
             lay, FY_XFER_PADS_REGION, FY_SHM_PER_RANK,
             2 * sizeof(struct fy_shmbuf_ctl) + 2 * half_size, npads,
             FY_SHM_PAGE,
             FY_SHM_SIG(sizeof(struct fy_shmbuf_ctl),
                        offsetof(struct fy_shmbuf_ctl, len),
                        offsetof(struct fy_shmbuf_ctl, cookie)))) < 0)
        return rc;
    return 0;
}

int fy_xfer_shm_attach(int me, int local)
{
    struct fy_xfer_shm *x = &fy_xfer_shm;
    const struct fy_shm_region *pads =
        fy_shm_layout_find(&fy_shm.lay, FY_XFER_PADS_REGION);
    x->job = fy_shm_region_ptr(FY_XFER_JOB_REGION, NULL);
    x->rank = fy_shm_region_ptr(FY_XFER_RANK_REGION, NULL);
    x->split = fy_shm_region_ptr(FY_XFER_SPLIT_REGION, NULL);
    x->pads = fy_shm_region_ptr(FY_XFER_PADS_REGION, NULL);
    if (!pads || !x->job || !x->rank || !x->split || !x->pads)
        return -EPROTO;
    x->pad_len = pads->elem;
    x->npads = (uint32_t)pads->count;
    x->half_size = (pads->elem - 2 * sizeof(struct fy_shmbuf_ctl)) / 2;
    /* Our probe word: the others read it between the attach and the
     * probe barriers (probe_one_sided). */
    probe_word = 0x5eedf00d00000000ull | (uint64_t)me;
    x->rank[local].probe_addr = (uint64_t)(uintptr_t)&probe_word;
    x->rank[local].probe_value = probe_word;
    return 0;
}

/* ---- the job's mechanisms ------------------------------------------------ */

/* Read the probe word of 'peer' through a one-sided mechanism. The
 * address and value come from the peer's record: a wrong address only
 * makes the probe fail (copy_remote checks it), never writes here. */
static bool probe_one_sided(const struct fy_xfer_ops *ops, int peer, char *why,
                            size_t whylen)
{
    if (!ops->probe(why, whylen))
        return false;
    uint64_t got = 0;
    const struct fy_xfer_rank_shm *pr = &fy_xfer_shm.rank[fy_boot_local(peer)];
    uint64_t addr = pr->probe_addr, value = pr->probe_value;
    ssize_t n = ops->copy_remote(fy_shm.pid[fy_boot_local(peer)], &got, addr,
                                 sizeof(got), true);
    if (n == (ssize_t)sizeof(got) && got == value)
        return true;
    snprintf(why, whylen, "reading rank %d's memory failed: %s%s", peer,
             strerror(n < 0 ? (int)-n : EIO),
             n == -EPERM || n == -EACCES
                 ? " (ptrace restrictions between sibling processes: yama "
                   "ptrace_scope, seccomp or container policy)"
                 : "");
    return false;
}

/* ---- the push crossover ------------------------------------------------- */

/* Evict [p, p + n) from every level of this core's caches. A message
 * between two ranks crosses cores: the pushed bytes are written into cells
 * the receiver's core last read and read from cells the sender's core
 * wrote, and a single copy reads a buffer the sender's core holds. So
 * both sides of the crossover are timed on memory no cache of ours holds,
 * not on warm buffers (where memcpy moves 100+ GB/s and the push looked
 * good to 32 KiB on a host where the rendezvous won from 8 KiB,
 * bench/README.md "The push crossover, timed cold"). Elsewhere than x86
 * and arm64 the figures stay warm ones. */
static void evict(const uint8_t *p, size_t n)
{
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
    for (size_t o = 0; o < n; o += 64)
        __builtin_ia32_clflush(p + o);
    __builtin_ia32_mfence();
#elif defined(__aarch64__)
    for (size_t o = 0; o < n; o += 64)
        __asm__ volatile("dc civac, %0" ::"r"(p + o) : "memory");
    __asm__ volatile("dsb ish" ::: "memory");
#else
    (void)p;
    (void)n;
#endif
}

/* Timed copies per size; the fastest counts (a preempted one is noise). */
#define CROSS_REPS 5
/* A push moves the bytes twice (into cells, out of them) and pays a
 * packet per cell; the single copy pays the call and the rendezvous
 * notifications instead. Two copies plus a quarter for the cells must cost
 * no more than one call for the push to win. */
#define CROSS_COPIES_X4 10 /* 2.5 copies, in quarters */

uint64_t fy_xfer_push_crossover(const struct fy_xfer_ops *ops, uint64_t cap,
                                struct fy_xfer_cross *out)
{
    if (out)
        *out = (struct fy_xfer_cross){0};
    if (!ops || !ops->one_sided || !ops->copy_remote || cap < FY_XFER_CROSS_MIN)
        return 0;
    size_t len = (size_t)cap;
    uint8_t *buf = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return 0;
    memset(buf, 0x5a, 2 * len); /* no page faults in the timed copies */
    uint8_t *src = buf, *dst = buf + len;
    pid_t self = getpid();
    uint64_t best = 0;
    int i = 0;
    for (uint64_t n = FY_XFER_CROSS_MIN; n <= cap; n *= 2, i++) {
        double one = 1e9, two = 1e9;
        for (int rep = 0; rep < CROSS_REPS; rep++) {
            evict(src, (size_t)n);
            evict(dst, (size_t)n);
            double t0 = fy_wtime();
            ssize_t got = ops->copy_remote(self, dst, (uint64_t)(uintptr_t)src,
                                           (size_t)n, true);
            double t1 = fy_wtime();
            evict(src, (size_t)n);
            evict(dst, (size_t)n);
            double t2 = fy_wtime();
            memcpy(dst, src, (size_t)n);
            __asm__ volatile("" ::: "memory"); /* the copy happens here */
            double t3 = fy_wtime();
            if (got != (ssize_t)n)
                goto unmap; /* the mechanism does not work on us: no push */
            one = FY_MIN(one, t1 - t0);
            two = FY_MIN(two, t3 - t2);
        }
        if (out && i < FY_XFER_CROSS_SIZES) {
            out->bytes[i] = n;
            out->mech_us[i] = one * 1e6;
            out->memcpy_us[i] = two * 1e6;
            out->n = i + 1;
        }
        if (CROSS_COPIES_X4 * two > 4 * one)
            break;
        best = n;
    }
unmap:
    munmap(buf, 2 * len);
    return best;
}

/* Check rank 0's published table before adopting it. */
static int adopt_rank0_table(struct fy_xfer_table *t)
{
    const struct fy_xfer_job_shm *j = fy_xfer_shm.job;
    uint32_t from = j->from, n = j->nrules;
    if (n < 1 || n > FY_XFER_RULES_MAX || from > FY_XFER_FROM_TUNING) {
        FY_ERROR("rank 0's mechanism table in the shared segment is malformed");
        return -EPROTO;
    }
    t->from = from;
    t->n = n;
    for (uint32_t i = 0; i < t->n; i++) {
        t->rule[i].min_bytes = j->rule_min[i];
        t->rule[i].kind = j->rule_kind[i];
        if (t->rule[i].kind < FY_XFER_AUTO ||
            t->rule[i].kind >= FY_XFER_NKINDS ||
            (i > 0 && t->rule[i].min_bytes <= t->rule[i - 1].min_bytes)) {
            FY_ERROR(
                "rank 0's mechanism table in the shared segment is malformed");
            return -EPROTO;
        }
    }
    return 0;
}

static void publish_table(struct fy_xfer_job_shm *j,
                          const struct fy_xfer_table *want)
{
    j->from = want->from;
    j->nrules = want->n;
    for (uint32_t i = 0; i < want->n; i++) {
        j->rule_min[i] = want->rule[i].min_bytes;
        j->rule_kind[i] = want->rule[i].kind;
    }
}

int fy_xfer_job_init(int me, int nranks, const char *jobid, uint64_t push_cap)
{
    struct fy_xfer_rank_shm *my = &fy_xfer_shm.rank[fy_boot_local(me)];
    struct fy_xfer_table want;
    int rc = fy_xfer_table_request(&want);
    if (rc)
        return rc;
    /* The node's first rank publishes the table in the node's segment
     * (every node computes the same one from the same settings). */
    if (fy_boot.local_rank == 0)
        publish_table(fy_xfer_shm.job, &want);
    fy_xfer_split_min = (uint64_t)fy_tuned_value(FY_ENV_SPLIT_MIN, NULL);

    /* What works, of what the rule table may use? (No idle machinery: a
     * mechanism the table never names is not probed, so no /proc/<pid>/mem
     * is opened and no loopback listener exists for nothing.) Each used
     * kind's init runs first. One-sided mechanisms: everyone reads its
     * right neighbour's probe word (between sibling processes, as a real
     * transfer would); a kind is used only if every rank's probe worked.
     * net: a loopback round trip, then our endpoint (its listener). */
    unsigned needed = 1u << FY_XFER_SHMBUF | 1u << FY_XFER_QUEUE;
    for (uint32_t i = 0; i < want.n; i++)
        needed |= want.rule[i].kind == FY_XFER_AUTO
                      ? 1u << FY_XFER_CMA
                      : 1u << (unsigned)want.rule[i].kind;
    char why[FY_XFER_NKINDS][256] = {{0}};
    unsigned tried = 0;
    for (int k = 0; k < FY_XFER_NKINDS; k++) {
        const struct fy_xfer_ops *ops = fy_xfer_registry[k];
        if (!(needed & (1u << k))) {
            snprintf(why[k], sizeof(why[0]), "not in this job's rule table");
        } else if (k == FY_XFER_CMA && fy_env_int(FY_ENV_NO_CMA)) {
            snprintf(why[k], sizeof(why[0]), "disabled by FERRY_NO_CMA");
        } else if (ops->init && (rc = ops->init()) != 0) {
            snprintf(why[k], sizeof(why[0]), "its init failed: %s",
                     strerror(-rc));
        } else {
            tried |= 1u << k;
        }
    }
    unsigned ok = tried & (1u << FY_XFER_SHMBUF | 1u << FY_XFER_QUEUE);
    /* The right neighbour on this node: single-copy mechanisms are only
     * ever used within a node. */
    int peer =
        fy_boot.local_ranks[(fy_boot.local_rank + 1) % fy_boot.local_size];
    for (int k = 0; k < FY_XFER_NKINDS; k++) {
        const struct fy_xfer_ops *ops = fy_xfer_registry[k];
        if ((tried & (1u << k)) && ops->one_sided &&
            probe_one_sided(ops, peer, why[k], sizeof(why[0])))
            ok |= 1u << k;
    }
    if ((tried & (1u << FY_XFER_NET)) &&
        fy_xfer_net_ops.probe(why[FY_XFER_NET], sizeof(why[0]))) {
        uint16_t port = 0;
        uint64_t key = 0;
        rc = fy_xfer_net_open(me, nranks, jobid, &port, &key);
        if (rc == 0) {
            my->net_key = key;
            my->net_port = port;
            ok |= 1u << FY_XFER_NET;
        } else {
            snprintf(why[FY_XFER_NET], sizeof(why[0]),
                     "listening on 127.0.0.1 failed: %s", strerror(-rc));
        }
    }
    my->ok = ok;
    /* The push crossover, measured once per node (by its first rank) on
     * cma, unless FERRY_XFER named the mechanisms: a mechanism the user
     * chose gets every rendezvous-sized message. */
    if (fy_boot.local_rank == 0)
        fy_xfer_shm.job->push_max =
            push_cap && want.from != FY_XFER_FROM_ENV &&
                    (tried & (1u << FY_XFER_CMA))
                ? fy_xfer_push_crossover(fy_xfer_registry[FY_XFER_CMA],
                                         push_cap, NULL)
                : 0;
    /* R12: pairs with A1 in the barrier: our probe results, net port and
     * key (and rank 0's table) are visible to everyone past it. */
    atomic_fetch_add_explicit(&fy_xfer_shm.job->probed, 1,
                              memory_order_release);
    fy_shm_barrier_wait(&fy_xfer_shm.job->probed, (uint32_t)fy_boot.local_size);

    unsigned avail = ~0u;
    for (int l = 0; l < fy_boot.local_size; l++)
        avail &= fy_xfer_shm.rank[l].ok;
    avail &= (1u << FY_XFER_NKINDS) - 1;
    struct fy_xfer_table t;
    rc = adopt_rank0_table(&t);
    if (rc)
        return rc;
    /* Say why a mechanism the table names is missing, where it failed.
     * Under FERRY_XFER_REQUIRE a missing one ends the job as a skip (77):
     * a test forced onto a mechanism must not pass on another one. */
    bool require = fy_env_int(FY_ENV_XFER_REQUIRE) != 0;
    for (uint32_t i = 0; i < t.n; i++) {
        int k = t.rule[i].kind;
        if (k < 0 || (avail & (1u << k)))
            continue;
        const char *reason =
            (ok & (1u << k)) ? "it failed on another rank" : why[k];
        if (require)
            fy_fatal(77,
                     "FERRY_XFER_REQUIRE: %s does not work here (%s); "
                     "not falling back",
                     fy_xfer_registry[k]->name, reason);
        if (!(ok & (1u << k)))
            FY_WARN("%s does not work here: %s", fy_xfer_registry[k]->name,
                    reason);
    }
    fy_xfer_table_resolve(&t, avail, me == 0);
    fy_xfer_active = t;
    /* Read once; a value past what we asked for is not rank 0's. */
    uint64_t push_max = fy_xfer_shm.job->push_max;
    if (push_max > push_cap) {
        FY_ERROR("rank 0's push crossover in the shared segment is malformed");
        return -EPROTO;
    }
    fy_xfer_push_max = push_max;
    fy_xfer_avail = avail;
    if (avail & (1u << FY_XFER_NET)) {
        /* Where every peer listens, read once: a port or key scribbled
         * later in the segment changes nothing. */
        for (int p = 0; p < nranks; p++) {
            if (fy_boot_local(p) < 0)
                continue; /* another node: never a single-node mover */
            const struct fy_xfer_rank_shm *pr =
                &fy_xfer_shm.rank[fy_boot_local(p)];
            uint32_t port = pr->net_port;
            if (p != me)
                fy_xfer_net_peer(p, port <= 65535 ? (uint16_t)port : 0,
                                 pr->net_key);
        }
    } else {
        fy_xfer_net_close(); /* some rank has no listener: net is off */
    }
    if (me == 0 && fy_log_threshold >= FY_LOG_INFO) {
        char line[256];
        size_t at = 0;
        for (uint32_t i = 0; i < t.n && at < sizeof(line); i++)
            at += (size_t)snprintf(line + at, sizeof(line) - at,
                                   "%s%s from %llu B", i ? ", " : "",
                                   fy_xfer_registry[t.rule[i].kind]->name,
                                   (unsigned long long)t.rule[i].min_bytes);
        FY_INFO("large messages (%s): %s", fy_xfer_from_name(t.from), line);
    }
    return 0;
}

void fy_xfer_job_finalize(void)
{
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        if (fy_xfer_registry[k]->finalize)
            fy_xfer_registry[k]->finalize(); /* procmem's files, net's
                                              * sockets */
    fy_xfer_avail = 0;
}
