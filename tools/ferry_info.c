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

#include "shm/shm.h"
#include "util/util.h"
#include "xfer/xfer.h"

static volatile uint64_t sibling_word = 0x46657272792d4f4bull;

/* Can one child read a sibling's memory? That is what ranks do (mpiexec
 * forks them as siblings); yama ptrace_scope=1 allows only ancestors. */
static bool cma_between_siblings(char *why, size_t whylen)
{
    int hold[2];
    if (pipe(hold) != 0) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        return false;
    }
    pid_t a = fork();
    if (a == 0) {
        char c;
        close(hold[1]);
        ssize_t n = read(hold[0], &c, 1); /* wait until the parent says */
        _exit(n < 0);
    }
    pid_t b = fork();
    if (b == 0) {
        close(hold[0]);
        close(hold[1]);
        uint64_t got = 0;
        ssize_t n = fy_xfer_cma_ops.copy_remote(a, &got,
                                                (uint64_t)(uintptr_t)&sibling_word,
                                                sizeof(got), true);
        _exit(n == (ssize_t)sizeof(got) && got == sibling_word ? 0
              : n == -EPERM                                    ? 2
                                                               : 3);
    }
    int st = 0;
    waitpid(b, &st, 0);
    close(hold[0]);
    close(hold[1]);
    waitpid(a, NULL, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return true;
    snprintf(why, whylen, "%s",
             WIFEXITED(st) && WEXITSTATUS(st) == 2
                 ? "process_vm_readv between sibling processes: permission "
                   "denied (ptrace scope, seccomp or container policy)"
                 : "process_vm_readv between sibling processes failed");
    return false;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ferry-info [--help] [--version]\n"
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
    printf("Ferry %s (MPICH ABI: libmpi.so.12 / libmpich.so.12)\n\n", FERRY_VERSION_STRING);

    printf("Transfer mechanisms for large messages (FERRY_XFER):\n");
    bool cma_ok = false;
    for (int k = 0; k < FY_XFER_NKINDS; k++) {
        const struct fy_xfer_ops *ops = fy_xfer_registry[k];
        char why[256] = "";
        bool ok = ops->probe(why, sizeof(why));
        if (ok && k == FY_XFER_CMA)
            ok = cma_between_siblings(why, sizeof(why));
        if (k == FY_XFER_CMA)
            cma_ok = ok;
        printf("  %-7s %-4s %s%s%s\n", ops->name, ok ? "yes" : "NO", ops->summary,
               ok ? "" : "\n          why not: ", ok ? "" : why);
    }
    printf("  (net: not built yet)\n\n");

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

    long long cell = fy_env_int(FY_ENV_CELL_SIZE);
    long long eager = FY_MIN(fy_env_int(FY_ENV_EAGER_MAX), cell - (long long)FY_CELL_HDR);
    const char *xfer = fy_env_str(FY_ENV_XFER);
    const char *src_of[2] = {"default", "environment"};
    printf("Thresholds in force:\n");
    printf("  mailbox (fastbox)      0 .. %lld B            (%s)\n",
           fy_env_int(FY_ENV_FASTBOX_MAX), src_of[fy_env[FY_ENV_FASTBOX_MAX].from_env]);
    printf("  eager through cells    .. %lld B             (%s; cell %lld B x %lld per rank)\n",
           eager, src_of[fy_env[FY_ENV_EAGER_MAX].from_env], cell, fy_env_int(FY_ENV_CELLS));
    printf("  rendezvous             > %lld B by %s\n", eager,
           strcmp(xfer, "auto") ? xfer : cma_ok ? "cma (auto)" : "shmbuf (auto: cma unavailable)");
    printf("  double buffer halves   %lld B\n", fy_env_int(FY_ENV_SHMBUF_SIZE));
    printf("  waiting                %s (spin %lld polls, then yield, then futex "
           "sleep when ranks outnumber %d CPUs)\n",
           fy_env_str(FY_ENV_WAIT), fy_env_int(FY_ENV_SPIN), fy_online_cpus());
    return 0;
}
