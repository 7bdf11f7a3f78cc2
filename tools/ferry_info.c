/* SPDX-License-Identifier: MIT */
/* ferry-info: what Ferry can do on this machine and with what settings:
 * version, each transfer mechanism and whether it works here (and why not),
 * every FERRY_* variable with its default and current value, and the size
 * thresholds in force. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/cellq_inl.h"
#include "shm/shm.h"
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

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: ferry-info [--help] [--version]\n"
        "Shows Ferry's version, transfer mechanisms and whether each "
        "works here,\nevery FERRY_* variable and the thresholds in force.\n");
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
    printf("\n");

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
    printf(
        "  waiting                %s (spin %lld polls, then yield, then futex "
        "sleep when ranks outnumber %d CPUs)\n",
        fy_env_str(FY_ENV_WAIT), fy_env_int(FY_ENV_SPIN), fy_online_cpus());
    return 0;
}
