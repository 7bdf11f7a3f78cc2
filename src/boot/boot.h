/* SPDX-License-Identifier: MIT */
/* Bootstrap: learn rank, size and the shared segment from the environment
 * mpiexec prepared, or become a singleton when started without it. */
#ifndef FY_BOOT_H
#define FY_BOOT_H

#include <stdbool.h>

struct fy_boot {
    int rank, size;
    int shm_fd; /* the job's memfd */
    int ncpus;  /* CPUs the job may use (oversubscription test) */
    bool singleton;
    char jobid[64];
};

extern struct fy_boot fy_boot;

/* Read FERRY_RANK, FERRY_SIZE, FERRY_SHM_FD, FERRY_NCPUS, FERRY_JOBID.
 * Returns 0, or -EINVAL after logging which variable is malformed. */
int fy_boot_init(void);

#endif /* FY_BOOT_H */
