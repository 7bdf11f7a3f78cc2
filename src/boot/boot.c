/* SPDX-License-Identifier: MIT */
/* Bootstrap from the launcher's environment (see tools/mpiexec.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boot/boot.h"
#include "util/util.h"

struct fy_boot fy_boot = {.shm_fd = -1};

static int env_int(const char *name, long lo, long hi, int *out)
{
    const char *s = getenv(name);
    if (!s)
        return -ENOENT;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) {
        FY_ERROR("%s='%s' is invalid (expected an integer in [%ld, %ld]); "
                 "was this program started by Ferry's mpiexec?",
                 name, s, lo, hi);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

int fy_boot_init(void)
{
    int rc = env_int("FERRY_SIZE", 1, 1 << 20, &fy_boot.size);
    if (rc == -ENOENT) {
        /* Singleton: our own segment, for uniformity of the code paths. */
        fy_boot.singleton = true;
        fy_boot.rank = 0;
        fy_boot.size = 1;
        fy_boot.ncpus = fy_online_cpus();
        fy_boot.shm_fd = memfd_create("ferry-singleton", MFD_CLOEXEC);
        if (fy_boot.shm_fd < 0) {
            FY_ERROR("memfd_create failed: %m");
            return -errno;
        }
        snprintf(fy_boot.jobid, sizeof(fy_boot.jobid), "singleton-%d",
                 getpid());
        fy_log_rank = 0;
        return 0;
    }
    if (rc)
        return rc;
    if ((rc = env_int("FERRY_RANK", 0, fy_boot.size - 1, &fy_boot.rank)))
        return rc == -ENOENT
                   ? (FY_ERROR("FERRY_SIZE is set but FERRY_RANK is not"),
                      -EINVAL)
                   : rc;
    fy_log_rank = fy_boot.rank;
    if ((rc = env_int("FERRY_SHM_FD", 0, INT_MAX, &fy_boot.shm_fd)))
        return rc == -ENOENT ? (FY_ERROR("FERRY_SHM_FD is not set"), -EINVAL)
                             : rc;
    if (fcntl(fy_boot.shm_fd, F_GETFD) < 0) {
        FY_ERROR("FERRY_SHM_FD=%d is not an open descriptor: %m",
                 fy_boot.shm_fd);
        return -EBADF;
    }
    /* Keep it from leaking into programs the rank may exec. */
    fcntl(fy_boot.shm_fd, F_SETFD, FD_CLOEXEC);
    if (env_int("FERRY_NCPUS", 1, 1 << 20, &fy_boot.ncpus))
        fy_boot.ncpus = fy_online_cpus();
    const char *job = getenv("FERRY_JOBID");
    snprintf(fy_boot.jobid, sizeof(fy_boot.jobid), "%s", job ? job : "?");
    /* A program this rank starts (system(), fork+exec) is not a rank: it
     * must not find our bootstrap and attach to the job's segment. */
    static const char *const boot_vars[] = {"FERRY_RANK", "FERRY_SIZE",
                                            "FERRY_SHM_FD", "FERRY_NCPUS",
                                            "FERRY_JOBID"};
    for (size_t i = 0; i < sizeof(boot_vars) / sizeof(boot_vars[0]); i++)
        unsetenv(boot_vars[i]);
    return 0;
}
