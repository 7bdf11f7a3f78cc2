/* SPDX-License-Identifier: MIT */
/* Bootstrap: how a job starts, as an ops table. Each way of starting fills
 * one const struct fy_boot_ops (the embedded launcher's inherited memfd, a
 * singleton; PMI-1/PMI-2 wire clients and PMIx plug in here next) and
 * gives world size and rank, which ranks share this node, and a key-value
 * exchange with a fence. Nothing above this layer knows which launcher
 * ran. */
#ifndef FY_BOOT_H
#define FY_BOOT_H

#include <stdbool.h>
#include <stddef.h>

struct fy_boot {
    int rank, size;
    /* This node: its ranks (world ranks, ascending) and our index among
     * them. Shared memory is indexed by local rank. */
    int local_rank, local_size;
    int *local_ranks;
    int shm_fd; /* the node's segment (a memfd), or -1 */
    int ncpus;  /* CPUs the job may use on this node (oversubscription) */
    bool singleton;
    char jobid[64];
    const struct fy_boot_ops *ops; /* how this job started */
};

extern struct fy_boot fy_boot;

/* One way of starting. Optional pointers are NULL where the launcher has
 * nothing to do there (e.g. the embedded launcher needs no key-value
 * exchange: every rank is on one node and inherits the segment). */
struct fy_boot_ops {
    const char *name;
    /* Whether this launcher started the process (environment only). */
    bool (*detect)(void);
    /* Fill fy_boot. Returns 0 or a negative errno after logging why. */
    int (*init)(struct fy_boot *b);
    /* Publish key=value for the others; visible to them after fence(). */
    int (*kvs_put)(const char *key, const char *value);
    /* Read what 'rank' published under key. -ENOENT when it did not. */
    int (*kvs_get)(int rank, const char *key, char *value_out, size_t len);
    /* Collective over the job: everything put before it is visible. */
    int (*fence)(void);
    void (*finalize)(void);
};

extern const struct fy_boot_ops fy_boot_embedded_ops;
extern const struct fy_boot_ops fy_boot_singleton_ops;

/* Find how this process was started and bring the bootstrap up: Ferry's
 * own mpiexec, or nothing at all (a singleton). A launcher Ferry cannot
 * talk to (PMI, PMIx or Slurm variables without Ferry's) is an error with
 * a clear message, never N singletons. Drops the launcher's variables from
 * the environment once read, so programs a rank starts are not ranks.
 * Returns 0 or a negative errno after logging why. */
int fy_boot_init(void);
void fy_boot_finalize(void);

#endif /* FY_BOOT_H */
