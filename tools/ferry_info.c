/* SPDX-License-Identifier: MIT */
/* ferry-info: what Ferry can do on this machine and with what settings:
 * version, each transfer mechanism and whether it works here (and why not),
 * every FERRY_* variable with its default and current value, and the size
 * thresholds in force, the protocols and their settings; with --pvars,
 * the MPI_T performance variables; with --segment, the node segment's
 * regions. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chan/chan.h"
#include "coll/shm.h"
#include "comm/comm.h"
#include "p2p/p2p.h"
#include "proto/proto.h"
#include "rma/rma.h"
#include "shm/cellq_inl.h"
#include "shm/shm.h"
#include "util/copy.h"
#include "util/tuned.h"
#include "util/util.h"
#include "xfer/xfer.h"

/* "1 MiB" style sizes for the rule table. */
static void fmt_size(char *buf, size_t len, uint64_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && b >= 1024 && b % 1024 == 0) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu %s", (unsigned long long)b, unit[u]);
}

/* The rendezvous rule table a job started now would use (rank 0's view is
 * this process's: same environment, same machine), clipped to the sizes
 * that go by rendezvous at all (above the eager limit). */
static void print_rules(unsigned avail, uint64_t eager)
{
    /* The tuning file's rules, as fy_p2p_init would install them. */
    const char *path = NULL;
    const struct fy_tuning *tun = fy_tuned_file(&path);
    int trc = tun ? fy_xfer_rules_from_tuning(tun) : -ENOENT;
    struct fy_xfer_table t;
    if (fy_xfer_table_request(&t)) {
        printf("  rendezvous             FERRY_XFER is invalid (see above)\n");
        return;
    }
    struct fy_xfer_table asked = t;
    fy_xfer_table_resolve(&t, avail, false);
    printf("  rendezvous             > %llu B, mechanism by size (%s",
           (unsigned long long)eager, fy_xfer_from_name(t.from));
    if (t.from == FY_XFER_FROM_ENV)
        printf(" = %s", fy_env_str(FY_ENV_XFER));
    else if (t.from == FY_XFER_FROM_TUNING)
        printf(" %s", path);
    printf("):\n");
    if (trc && trc != -ENOENT)
        printf("    (tuning file %s not used: %s)\n", path, strerror(-trc));
    else if (trc == 0 && t.from == FY_XFER_FROM_ENV && tun->nrules)
        printf("    (FERRY_XFER overrides the tuning file's rules)\n");
    for (uint32_t i = 0; i < t.n; i++) {
        uint64_t lo = t.rule[i].min_bytes;
        uint64_t hi = i + 1 < t.n ? t.rule[i + 1].min_bytes : 0; /* 0: none */
        if (hi && hi <= eager + 1)
            continue; /* all of this range goes eagerly */
        if (lo <= eager)
            lo = eager + 1;
        char a[32], b[40] = "and up";
        fmt_size(a, sizeof(a), lo);
        if (hi) {
            char h[32];
            fmt_size(h, sizeof(h), hi);
            snprintf(b, sizeof(b), "below %s", h);
        }
        printf("    %10s %-16s %s\n", a, b,
               fy_xfer_registry[t.rule[i].kind]->name);
    }
    for (uint32_t i = 0; i < asked.n; i++) {
        int k = asked.rule[i].kind;
        if (k >= 0 && !(avail & (1u << k)))
            printf("    (%s was asked for but does not work here: replaced, "
                   "see above)\n",
                   fy_xfer_registry[k]->name);
    }
}

/* "3.0 MiB" style sizes for the segment table. */
static void fmt_bytes(char *buf, size_t len, uint64_t b)
{
    if (b < 1024)
        snprintf(buf, len, "%llu B", (unsigned long long)b);
    else if (b < 1024 * 1024)
        snprintf(buf, len, "%.1f KiB", (double)b / 1024);
    else
        snprintf(buf, len, "%.1f MiB", (double)b / (1024 * 1024));
}

/* The node segment for each rank count in 'list' (comma separated) at the
 * current settings, as a Markdown table: the whole segment, then every
 * region in the order of the segment. Returns the exit status. */
static int print_segment(const char *list)
{
    if (fy_env_load())
        return 1;
    uint32_t ranks[64];
    int n = 0;
    for (const char *p = list; *p;) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno || v < 1 || v > (1ul << 20) || n == 64 ||
            (*end && *end != ',')) {
            fprintf(stderr,
                    "ferry-info: --segment wants rank counts (1 to %lu) "
                    "separated by commas, not '%s'\n",
                    1ul << 20, list);
            return 2;
        }
        ranks[n++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "ferry-info: --segment wants rank counts\n");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        struct fy_p2p_seg_params pp;
        struct fy_shm_layout lay;
        if (fy_p2p_seg_params(ranks[i], &pp) ||
            fy_p2p_seg_layout(&pp, fy_coll_shm_declare, &lay))
            return 1;
        /* Regions in the order of the segment. */
        uint32_t order[FY_SHM_REGIONS_MAX];
        for (uint32_t r = 0; r < lay.nregions; r++) {
            uint32_t at = r;
            while (at > 0 &&
                   lay.region[order[at - 1]].off > lay.region[r].off) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = r;
        }
        if (i == 0) {
            printf("Shared segment per node (every region; %u cells of %u B "
                   "per rank, %u pads of 2 x %llu B per rank, %u mailbox "
                   "slots per pair):\n\n| ranks | segment |",
                   pp.ncells, pp.cell_size, pp.npads,
                   (unsigned long long)pp.shmbuf_size, pp.fbox_slots);
            for (uint32_t r = 0; r < lay.nregions; r++)
                printf(" %s |", lay.region[order[r]].name);
            printf("\n|---:|---:|");
            for (uint32_t r = 0; r < lay.nregions; r++)
                printf("---:|");
            printf("\n");
        }
        char b[32];
        fmt_bytes(b, sizeof(b), lay.total);
        printf("| %u | %s |", ranks[i], b);
        for (uint32_t r = 0; r < lay.nregions; r++) {
            fmt_bytes(b, sizeof(b), lay.region[order[r]].len);
            printf(" %s |", b);
        }
        printf("\n");
    }
    return 0;
}

/* Where a setting's value comes from, for the variables the tuning file
 * does not cover. */
static const char *env_source(enum fy_env_id id)
{
    return fy_env[id].from_env ? "environment" : "default";
}

/* A size setting: "16384 B (default)". */
static void print_size_setting(const char *label, enum fy_env_id id,
                               const char *what)
{
    const char *src;
    long long v = fy_tuned_value(id, &src);
    char b[48];
    snprintf(b, sizeof(b), "%lld B (%s)", v, src);
    printf("    %-20s %-26s %s\n", label, b, what);
}

/* FERRY_PUSH_MAX, and under auto the crossover measured here as
 * MPI_Init measures it (cma on our own memory against memcpy, both on evicted
 * buffers). */
static void print_push_max(const char *proto)
{
    const char *v = fy_env_str(FY_ENV_PUSH_MAX);
    printf("    %-20s %-26s %s\n", "FERRY_PUSH_MAX", v,
           "auto: sends pushed whole up to (nonblocking: 2 per reply)");
    if (strcmp(v, "auto") || strcmp(proto, "auto"))
        return;
    if (fy_env_int(FY_ENV_NO_CMA) || strcmp(fy_env_str(FY_ENV_XFER), "auto")) {
        printf("    %-20s %s\n", "",
               "not measured: FERRY_XFER or FERRY_NO_CMA chose the "
               "mechanism: 0");
        return;
    }
    uint64_t cap = fy_push_cap(
        (uint64_t)fy_env_int(FY_ENV_CELLS),
        (uint64_t)fy_tuned_value(FY_ENV_CELL_SIZE, NULL) - FY_CELL_HDR);
    struct fy_xfer_cross x;
    uint64_t n = fy_xfer_push_crossover(&fy_xfer_cma_ops, cap, &x);
    printf("    %-20s measured here: %llu B (cap %llu B, from a quarter "
           "of a rank's cells); cma call vs memcpy, cold, us:\n",
           "", (unsigned long long)n, (unsigned long long)cap);
    for (int i = 0; i < x.n; i++)
        printf("    %-20s %8llu B  cma %7.2f  memcpy %7.2f\n", "",
               (unsigned long long)x.bytes[i], x.mech_us[i], x.memcpy_us[i]);
}

/* Which protocol carries a message, by size, and the settings of each
 * (value and where it comes from). 'fbox' and 'eager' are the limits in
 * force, as the thresholds show them. */
static void print_protocols(long long fbox, long long eager)
{
    const char *src_fb, *src_eager;
    fy_tuned_value(FY_ENV_FASTBOX_MAX, &src_fb);
    fy_tuned_value(FY_ENV_EAGER_MAX, &src_eager);
    printf("Protocols (counted per rank as MPI_T performance variables: "
           "ferry-info --pvars):\n");
    printf("  eager, mailbox         0 .. %lld B (FERRY_FASTBOX_MAX, %s)\n",
           fbox, src_fb);
    printf("  eager, cells           .. %lld B (FERRY_EAGER_MAX, %s)\n", eager,
           src_eager);
    char above[32];
    snprintf(above, sizeof(above), "above %lld B", eager);
    const char *psrc;
    const char *proto = fy_tuned_str(FY_ENV_PROTO, &psrc);
    printf("  %-22s FERRY_PROTO = %s (%s): auto (write if offered to a "
           "blocking send, else "
           "rendezvous; blocking sends pushed whole up to the larger of "
           "FERRY_AUTO_PUSH_MAX and FERRY_PUSH_MAX - to another node up to "
           "FERRY_NET_PUSH_MAX where larger -, nonblocking ones up to "
           "FERRY_PUSH_MAX while among the first two to a peer since its "
           "last message - to another node every one up to 128 KiB -), "
           "pushpull, pushzero (rendezvous) or pushall\n",
           above, proto, psrc);
    print_push_max(proto);
    print_size_setting("FERRY_BTP", FY_ENV_BTP,
                       "Push-Pull: bytes pushed before the pull");
    print_size_setting("FERRY_BTP1", FY_ENV_BTP1,
                       "Push-Pull: of those, in the first packet (0: a cell)");
    print_size_setting("FERRY_PUSH_BUF", FY_ENV_PUSH_BUF,
                       "pushed bytes kept for messages not yet received");
    print_size_setting("FERRY_AUTO_PUSH_MAX", FY_ENV_AUTO_PUSH_MAX,
                       "auto: blocking sends pushed whole up to");
    print_size_setting("FERRY_NET_PUSH_MAX", FY_ENV_NET_PUSH_MAX,
                       "auto: the same to other nodes");
    printf("  %-22s %s (FERRY_RECV_WRITE, %s)\n", "receiver write",
           fy_env_int(FY_ENV_RECV_WRITE) ? "on" : "off",
           env_source(FY_ENV_RECV_WRITE));
    print_size_setting("FERRY_RECV_WRITE_MIN", FY_ENV_RECV_WRITE_MIN,
                       "smallest receive buffer offered to its sender");
    printf("  %-22s across nodes: an RDMA write where the network channel "
           "has one (FERRY_NET=ofi with FI_RMA and FERRY_OFI_RMA=1)\n",
           "");
}

/* The collectives' algorithm choices over shared memory and the
 * thresholds in force (environment, tuning file or default). */
static void print_collectives(void)
{
    const char *mode = fy_env_str(FY_ENV_COLL);
    printf("Collectives (FERRY_COLL = %s, %s; ferry-bench --coll measures "
           "the thresholds, --coll --tune writes them):\n",
           mode, env_source(FY_ENV_COLL));
    print_size_setting("FERRY_COLL_CMA_MIN", FY_ENV_COLL_CMA_MIN,
                       "broadcasts from here: single copy from the root");
    print_size_setting("FERRY_COLL_SLICE_MIN", FY_ENV_COLL_SLICE_MIN,
                       "reductions from here: a slice per member");
    print_size_setting("FERRY_COLL_DIRECT_MIN", FY_ENV_COLL_DIRECT_MIN,
                       "reductions of 3+ ranks from here: read from "
                       "buffers");
    printf("  nonblocking            over shared memory: inline up to %u B, "
           "then single copy (else point-to-point)\n",
           FY_COLL_SLOT_DATA);
    printf("  lean                   with a core per rank (no rank sleeps): "
           "Barrier, Ibarrier and Bcast, Reduce, Allreduce,\n"
           "                         Allgather, Alltoall (and their I forms) "
           "of up to %u B per member through one\n"
           "                         line per rank and context (first %u "
           "contexts, up to 8 members)\n",
           FY_COLL_FLAG_DATA, FY_COLL_FLAG_CTXS);
}

/* The MPI_T performance variables: name and description. */
static int print_pvars(void)
{
    const struct fy_pvar *t;
    int n = fy_proto_pvars(&t);
    printf("MPI_T performance variables (%d; per-rank unsigned 64-bit "
           "counters, category ferry_protocols):\n",
           n);
    for (int i = 0; i < n; i++)
        printf("  %-32s %s\n", t[i].name, t[i].desc);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ferry-info [--help] [--version] [--pvars] "
            "[--segment RANKS,...]\n"
            "Shows Ferry's version, transfer mechanisms and whether each "
            "works here,\nevery FERRY_* variable, the thresholds in force and "
            "the protocols.\n"
            "--pvars: the MPI_T performance variables (protocol counters) "
            "and what each counts.\n"
            "--segment: the shared segment of one node and each of its regions "
            "for\nthese numbers of ranks at the current FERRY_* settings (e.g. "
            "--segment 2,16,64,128).\n");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("Ferry %s\n", FERRY_VERSION_STRING);
            return 0;
        }
        if (!strcmp(argv[i], "--pvars"))
            return print_pvars();
        if (!strcmp(argv[i], "--segment"))
            return print_segment(i + 1 < argc ? argv[i + 1] : "");
        if (!strncmp(argv[i], "--segment=", 10))
            return print_segment(argv[i] + 10);
        fprintf(stderr, "ferry-info: unknown option '%s'\n", argv[i]);
        usage(stderr);
        return 2;
    }
    int env_rc = fy_env_load();
    printf("Ferry %s (MPICH ABI: libmpi.so.12 / libmpich.so.12)\n\n",
           FERRY_VERSION_STRING);

    /* Mechanisms, tested the way ranks use them: one-sided ones between
     * two sibling processes (what mpiexec starts), the rest in-process. */
    printf("Transfer mechanisms for large messages (FERRY_XFER):\n");
    unsigned avail = 0;
    for (int k = 0; k < FY_XFER_NKINDS; k++) {
        const struct fy_xfer_ops *ops = fy_xfer_registry[k];
        char why[256] = "";
        bool ok = fy_xfer_probe_siblings(k, why, sizeof(why));
        if (ok && k == FY_XFER_CMA && fy_env_int(FY_ENV_NO_CMA)) {
            ok = false;
            snprintf(why, sizeof(why), "disabled by FERRY_NO_CMA");
        }
        if (ok)
            avail |= 1u << k;
        printf("  %-8s %-4s %-10s %s%s%s\n", ops->name, ok ? "yes" : "NO",
               ops->one_sided ? "one-sided" : "two-sided", ops->summary,
               ok ? "" : "\n           why not: ", ok ? "" : why);
    }
    /* Copies at slow distances (util/copy.h), measured as MPI_Init does. */
    if (!env_rc && !fy_copy_init()) {
        const struct fy_copy_probe *m = &fy_copy_measured;
        printf("  copies whose destination is 1-31 bytes past the source "
               "modulo 4096 (FERRY_COPY_ALIAS=%s):\n"
               "           memcpy %s",
               fy_env_str(FY_ENV_COPY_ALIAS),
               fy_copy_alias ? "by a vector loop" : "as given");
        if (m->memcpy_us[0] > 0)
            printf(" (16 KiB here: %.2f us at distance 0, %.2f at 16)",
                   m->memcpy_us[0], m->memcpy_us[1]);
        printf(";\n           cma %s", fy_copy_cma_alias
                                           ? "bounced through a scratch buffer"
                                           : "direct");
        if (m->cma_us[0] > 0)
            printf(" (%.2f us / %.2f)", m->cma_us[0], m->cma_us[1]);
        printf("\n");
    }
    printf("\n");
    /* One-sided windows (src/rma/): what passive target needs here, per
     * window flavour and FERRY_XFER setting (src/rma/win.c remote_ops). */
    bool cma = avail & (1u << FY_XFER_CMA),
         pm = avail & (1u << FY_XFER_PROCMEM);
    long long pm_max = fy_env_int(FY_ENV_RMA_PROCMEM_MAX);
    char by_size[160];
    snprintf(by_size, sizeof(by_size),
             "procmem up to %lld bytes, cma above (FERRY_RMA_PROCMEM_MAX), "
             "no help from the target",
             pm_max);
    const char *single = cma && pm && pm_max > 0 ? by_size
                         : cma ? "cma (process_vm_readv/writev into the "
                                 "target's memory), no help from the target"
                         : pm  ? "procmem (/proc/<pid>/mem of the target), no "
                                 "help from the target"
                               : NULL;
    const char *thr = fy_env_str(FY_ENV_RMA_THREAD);
    char am[320];
    snprintf(am, sizeof(am),
             "active messages: the target applies each request in its "
             "progress engine, so passive target needs a progress thread "
             "(FERRY_RMA_THREAD=%s: %s)",
             thr,
             !strcmp(thr, "0")   ? "none; the target must call MPI"
             : !strcmp(thr, "1") ? "one per process with any window"
                                 : "one per process that has such a window");
    int forced = fy_xfer_parse(fy_env_str(FY_ENV_XFER));
    const char *in_force = forced == FY_XFER_CMA       ? (cma ? "cma" : NULL)
                           : forced == FY_XFER_PROCMEM ? (pm ? "procmem" : NULL)
                           : forced >= 0               ? NULL
                           : cma && pm && pm_max > 0   ? by_size
                           : cma                       ? "cma"
                           : pm                        ? "procmem"
                                                       : NULL;
    /* The hand-over (src/rma/ho.c): on top of the single-copy path. */
    long long am_max = fy_env_int(FY_ENV_RMA_AM_MAX);
    char handover[400];
    if (am_max <= 0)
        snprintf(handover, sizeof(handover),
                 "off: every operation by the mechanism above");
    else if (!in_force)
        snprintf(handover, sizeof(handover),
                 "not used (no single-copy mechanism to fall back on)");
    else
        snprintf(handover, sizeof(handover),
                 "operations up to %lld bytes go to a target that is inside "
                 "MPI (its progress\n"
                 "                         engine beats) through boxes in "
                 "the window's shared memory, served\n"
                 "                         by it with no system call; when it "
                 "is outside MPI, or does not\n"
                 "                         take one within 4 us, by the "
                 "mechanism above",
                 am_max > FY_RMA_HO_CAP ? (long long)FY_RMA_HO_CAP : am_max);
    /* Split copies (ho.c): large puts and gets, on top of the hand-over. */
    long long split_min = fy_env_int(FY_ENV_RMA_SPLIT_MIN);
    char splitdesc[300];
    if (am_max <= 0 || !in_force || split_min <= 0)
        snprintf(splitdesc, sizeof(splitdesc), "off");
    else
        snprintf(splitdesc, sizeof(splitdesc),
                 "contiguous puts and gets from %lld bytes are copied by "
                 "origin and target\n"
                 "                         together (each by the mechanism "
                 "above) while the target is inside MPI",
                 split_min);
    /* Win_create's memory moved onto shared pages (src/rma/remap.c). */
    bool remap = fy_env_int(FY_ENV_RMA_REMAP) && forced == FY_XFER_AUTO;
    printf("One-sided windows (passive target):\n"
           "  Win_allocate(_shared)  shared memory, no help from the target: "
           "puts and gets are memcpy\n"
           "                         (streaming stores from FERRY_RMA_NT_MIN "
           "bytes); accumulates,\n"
           "                         fetch-and-op and compare-and-swap one "
           "hardware atomic per\n"
           "                         element (1-8 byte aligned elements), the "
           "accumulate lock for the rest\n"
           "  Win_create             FERRY_RMA_REMAP=%lld, FERRY_XFER=%s: %s\n"
           "  Win_create, dynamic    FERRY_XFER=auto|cma|procmem: %s; "
           "accumulates: one read and one write under the accumulate lock\n"
           "                         FERRY_XFER=shmbuf|queue|net: %s\n"
           "                         in force here (FERRY_XFER=%s): %s\n"
           "                         hand-over (FERRY_RMA_AM_MAX=%lld): %s\n"
           "                         split copies (FERRY_RMA_SPLIT_MIN=%lld): "
           "%s\n"
           "  across nodes           any flavour but Win_allocate_shared "
           "(MPI_ERR_RMA_SHARED): ranks of the\n"
           "                         same node as above, ranks of other "
           "nodes by active messages over\n"
           "                         the network channel (PSCW asked of "
           "the target; a lock travels with the\n"
           "                         epoch's first packet to its target; "
           "contiguous puts from %d KiB and\n"
           "                         gets from %d KiB straight into and out "
           "of the window; puts, accumulates\n"
           "                         and gets of up to 16 KiB batched until "
           "the next request to their target\n"
           "                         or the next flush, a batch's answers "
           "in one write; gets return at\n"
           "                         once (not MPI_Rget's, a dynamic "
           "window's or under MPI_THREAD_MULTIPLE),\n"
           "                         their bytes awaited by the next flush, "
           "unlock, fence or complete)\n\n",
           fy_env_int(FY_ENV_RMA_REMAP), fy_env_str(FY_ENV_XFER),
           remap ? "each rank's window pages are moved onto shared memory "
                   "the others map\n"
                   "                         (contents and addresses "
                   "unchanged; private again at Win_free), so it is\n"
                   "                         reached like Win_allocate's "
                   "memory; where a rank cannot (several threads,\n"
                   "                         memory already shared, the "
                   "stack), the whole window takes the path below"
                 : "off: the path below",
           single ? single : am, am, fy_env_str(FY_ENV_XFER),
           in_force ? in_force : "active messages", am_max, handover, split_min,
           splitdesc, FY_RMA_AM_DIRECT_MIN / 1024,
           FY_RMA_AM_GET_DIRECT_MIN / 1024);

    /* MPI_Comm_split_type by hardware (src/comm/hw.c). */
    printf("Hardware split types (MPI_COMM_TYPE_HW_GUIDED/_UNGUIDED):\n");
    if (fy_hw_available()) {
        struct fy_hw_level lev[FY_HW_MAX_LEVELS];
        int n = fy_hw_levels(0, lev, FY_HW_MAX_LEVELS);
        printf("  hwloc                  levels here, top down:");
        for (int i = 0; i < n; i++)
            printf(" %s", fy_hw_type_name(lev[i].type));
        printf("\n\n");
    } else {
        printf("  hwloc                  NOT BUILT (no libhwloc-dev at build "
               "time): only mpi_shared_memory; HW_UNGUIDED gives "
               "MPI_COMM_NULL\n\n");
    }

    /* Channels to ranks on other nodes (FERRY_NET, src/chan/). */
    {
        char prov[128] = "", why[256] = "";
        int rc = fy_chan_ofi_probe(prov, sizeof(prov), why, sizeof(why));
        printf("Network channels to other nodes (FERRY_NET=%s):\n"
               "  tcp    yes  sockets under epoll, per-peer connections "
               "(auto)\n",
               fy_env_str(FY_ENV_NET));
        if (rc == 0)
            printf("  ofi    yes  libfabric, provider %s\n\n", prov);
        else
            printf("  ofi    NO   libfabric\n         why not: %s\n\n", why);
    }

    printf("Environment (FERRY_*):\n");
    for (int i = 0; i < FY_ENV_COUNT; i++) {
        const struct fy_env_var *v = &fy_env[i];
        const char *cur = getenv(v->name);
        printf("  %-18s default %-8s current %-8s %s\n", v->name,
               *v->def ? v->def : "''", cur ? cur : "(default)", v->help);
    }
    printf("  Set by mpiexec for each rank: FERRY_RANK, FERRY_SIZE, "
           "FERRY_SHM_FD, FERRY_NCPUS, FERRY_JOBID\n\n");
    if (env_rc) {
        printf("Thresholds: not shown, a FERRY_* value above is invalid.\n");
        return 1;
    }

    if (fy_tuned_load() != 0) {
        printf("Thresholds: not shown, the tuning file named by FERRY_TUNING "
               "is missing or invalid (see above).\n");
        return 1;
    }
    const char *src_fb, *src_eager, *src_cell, *src_sb;
    long long fbox = fy_tuned_value(FY_ENV_FASTBOX_MAX, &src_fb);
    long long cell = fy_tuned_value(FY_ENV_CELL_SIZE, &src_cell);
    long long sbuf = fy_tuned_value(FY_ENV_SHMBUF_SIZE, &src_sb);
    long long eager = FY_MIN(fy_tuned_value(FY_ENV_EAGER_MAX, &src_eager),
                             cell - (long long)FY_CELL_HDR);
    printf("Thresholds in force:\n");
    printf("  mailbox (fastbox)      0 .. %lld B (%s)\n", fbox, src_fb);
    printf("  eager through cells    .. %lld B (%s; cell %lld B (%s) x %lld "
           "per rank)\n",
           eager, src_eager, cell, src_cell, fy_env_int(FY_ENV_CELLS));
    print_rules(avail, (uint64_t)eager);
    printf("  double buffer halves   %lld B (%s)\n", sbuf, src_sb);
    const char *src_split;
    long long split = fy_tuned_value(FY_ENV_SPLIT_MIN, &src_split);
    if (split)
        printf("  shared cma copy        from %lld B (%s; sender and receiver "
               "copy chunks at once)\n",
               split, src_split);
    else
        printf("  shared cma copy        off (%s: split_min 0)\n", src_split);
    printf("  waiting                %s (when ranks outnumber %d CPUs: yield "
           "up to 128 times, then futex sleep; a Test/Iprobe loop yields after "
           "%lld empty polls)\n",
           fy_env_str(FY_ENV_WAIT), fy_online_cpus(), fy_env_int(FY_ENV_SPIN));
    printf("\n");
    print_protocols(fbox, eager);
    print_collectives();
    return 0;
}
