/* SPDX-License-Identifier: MIT */
/* The job's mechanisms: which of them work between the ranks of this job
 * and which one serves each rendezvous size. Every rank probes the kinds
 * rank 0's rule table may use (and only those: no idle machinery), then
 * all meet at the probe barrier, keep the kinds that worked everywhere and
 * adopt rank 0's table, so the whole job agrees. Also brings the used
 * mechanisms' seed-000 init up and every finalize down. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/boot.h"
#include "shm/shm.h"
#include "util/tuned.h"
#include "util/util.h"
#include "xfer/xfer.h"

static_assert(FY_SHM_XFER_RULES == FY_XFER_RULES_MAX,
              "the shared rank record holds a whole rule table");

uint64_t fy_xfer_split_min;

/* Read the probe word of 'peer' through a one-sided mechanism. The
 * address and value come from the peer's record: a wrong address only
 * makes the probe fail (copy_remote checks it), never writes here. */
static bool probe_one_sided(const struct fy_xfer_ops *ops, int peer, char *why,
                            size_t whylen)
{
    if (!ops->probe(why, whylen))
        return false;
    uint64_t got = 0;
    const struct fy_shm_rank *pr = &fy_shm.ranks[fy_boot_local(peer)];
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

/* Check rank 0's published table before adopting it. */
static int adopt_rank0_table(struct fy_xfer_table *t)
{
    const struct fy_shm_rank *r0 = &fy_shm.ranks[0];
    uint32_t from = r0->xfer_from, n = r0->xfer_nrules;
    if (n < 1 || n > FY_XFER_RULES_MAX || from > FY_XFER_FROM_TUNING) {
        FY_ERROR("rank 0's mechanism table in the shared segment is malformed");
        return -EPROTO;
    }
    t->from = from;
    t->n = n;
    for (uint32_t i = 0; i < t->n; i++) {
        t->rule[i].min_bytes = r0->xfer_rule_min[i];
        t->rule[i].kind = r0->xfer_rule_kind[i];
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

static void publish_table(struct fy_shm_rank *my,
                          const struct fy_xfer_table *want)
{
    my->xfer_from = want->from;
    my->xfer_nrules = want->n;
    for (uint32_t i = 0; i < want->n; i++) {
        my->xfer_rule_min[i] = want->rule[i].min_bytes;
        my->xfer_rule_kind[i] = want->rule[i].kind;
    }
}

int fy_xfer_job_init(int me, int nranks, const char *jobid)
{
    struct fy_shm_rank *my = &fy_shm.ranks[fy_boot_local(me)];
    struct fy_xfer_table want;
    int rc = fy_xfer_table_request(&want);
    if (rc)
        return rc;
    if (me == 0)
        publish_table(my, &want);
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
    int peer = (me + 1) % nranks;
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
    my->xfer_ok = ok;
    /* R12: pairs with A1 in the barrier: our probe results, net port and
     * key (and rank 0's table) are visible to everyone past it. */
    atomic_fetch_add_explicit(&fy_shm.hdr->probed, 1, memory_order_release);
    fy_shm_barrier_wait(&fy_shm.hdr->probed, (uint32_t)fy_boot.local_size);

    unsigned avail = ~0u;
    for (int l = 0; l < fy_boot.local_size; l++)
        avail &= fy_shm.ranks[l].xfer_ok;
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
    fy_xfer_avail = avail;
    if (avail & (1u << FY_XFER_NET)) {
        /* Where every peer listens, read once: a port or key scribbled
         * later in the segment changes nothing. */
        for (int p = 0; p < nranks; p++) {
            const struct fy_shm_rank *pr = &fy_shm.ranks[fy_boot_local(p)];
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
