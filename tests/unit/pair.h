/* SPDX-License-Identifier: MIT */
/* Two forked ranks running the point-to-point core over one segment, for
 * the unit tests that drive it without MPI_Init (test_p2p_fork,
 * test_proto_malformed, test_proto_fuzz). */
#ifndef FY_TEST_PAIR_H
#define FY_TEST_PAIR_H

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "boot/boot.h"
#include "p2p/p2p_impl.h"
#include "util/util.h"

/* Rank 'rank' of the two and a communicator of both (c). Keep it where
 * it outlives every request on c. */
struct fy_test_pair {
    int world[2];
    struct fy_group g;
    struct fy_comm c;
};

/* Start this process as rank 'rank' of two on the segment memfd 'fd'.
 * Returns 0, or -1 if the core cannot start here. */
static inline int fy_test_pair_start(int rank, int fd, struct fy_test_pair *p)
{
    fy_boot.rank = rank;
    fy_boot.size = 2;
    fy_boot.shm_fd = fd;
    fy_boot.ncpus = 2;
    if (fy_boot_one_node(&fy_boot))
        return -1;
    fy_log_rank = rank;
    if (fy_env_load() || fy_dtype_init() || fy_p2p_init(NULL))
        return -1;
    p->world[0] = 0;
    p->world[1] = 1;
    p->g = (struct fy_group){.size = 2, .rank = rank, .world = p->world};
    /* refcount 1: the caller holds it; requests take and drop more. */
    p->c = (struct fy_comm){.refcount = 1,
                            .ctx = 0,
                            .rank = rank,
                            .size = 2,
                            .group = &p->g,
                            .p2p_group = &p->g};
    return 0;
}

/* Fork ranks 0 and 1 of a pair on a new segment. Each child starts the
 * core (exit status 100 if it cannot) and exits with role(rank, &pair,
 * arg); the standard error of the ranks in 'err_ranks' (bit r for rank r)
 * goes into a pipe. Returns the pipe's read end, or -1. */
static inline int
fy_test_pair_spawn(const char *name, unsigned err_ranks,
                   int (*role)(int rank, struct fy_test_pair *p, void *arg),
                   void *arg, pid_t pid[2])
{
    int fd = memfd_create(name, 0);
    int errp[2];
    if (fd < 0 || pipe(errp))
        return -1;
    for (int r = 0; r < 2; r++) {
        if ((pid[r] = fork()) == 0) {
            if (err_ranks & (1u << r))
                dup2(errp[1], 2);
            close(errp[0]);
            close(errp[1]);
            struct fy_test_pair pr;
            if (fy_test_pair_start(r, fd, &pr))
                _exit(100);
            _exit(role(r, &pr, arg));
        }
    }
    close(fd);
    close(errp[1]);
    return errp[0];
}

/* What a child wrote into the pipe 'fd', up to cap - 1 bytes, as a
 * string. */
static inline void fy_test_read_all(int fd, char *out, size_t cap)
{
    ssize_t got = 0, m;
    while (got < (ssize_t)cap - 1 &&
           (m = read(fd, out + got, cap - 1 - (size_t)got)) > 0)
        got += m;
    out[got > 0 ? got : 0] = '\0';
}

#endif
