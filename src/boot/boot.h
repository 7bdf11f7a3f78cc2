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
    int *local_ranks; /* [local_size]: local rank -> world rank */
    int *local_of;    /* [size]: world rank -> local rank, -1 elsewhere */
    int shm_fd;       /* the node's segment (a memfd), or -1 */
    int ncpus;        /* CPUs the job may use on this node (oversubscription) */
    int nodes, node;  /* nodes of the job, and ours (0 .. nodes-1) */
    bool virtual_nodes; /* FERRY_NODES: every node is on this machine */
    bool singleton;
    char jobid[64];
    const struct fy_boot_ops *ops; /* how this job started */
};

extern struct fy_boot fy_boot;

/* The local rank (index in the node's shared segment) of world rank
 * 'world', or -1 when it runs on another node. */
static inline int fy_boot_local(int world)
{
    return fy_boot.local_of[world];
}

/* FERRY_NODES' block mapping: the node of world rank 'rank' when 'size'
 * ranks are cut into 'nodes' contiguous blocks, the first size % nodes of
 * them one rank larger. Ferry's mpiexec and the library both use it. */
static inline int fy_boot_block_node(int rank, int size, int nodes)
{
    int base = size / nodes, extra = size % nodes;
    int big = extra * (base + 1); /* ranks in the larger blocks */
    return rank < big ? rank / (base + 1) : extra + (rank - big) / base;
}

/* One way of starting. Optional pointers are NULL where the launcher has
 * nothing to do there. */
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

/* Limits of the key-value exchange (boot/kvs.c, the table of launchers
 * whose ranks share one node). */
#define FY_BOOT_KEY_MAX 64     /* key bytes, NUL included */
#define FY_BOOT_VALUE_MAX 448  /* value bytes, NUL included */
#define FY_BOOT_KVS_ENTRIES 32 /* keys per rank */

/* The one-node table: map the inherited memfd 'fd' (closed once mapped)
 * as rank 'rank' of 'size'. 0 or a negative errno (logged). */
int fy_boot_kvs_attach(int fd, int rank, int size);
void fy_boot_kvs_detach(void);
/* Its ops: put 0, -E2BIG, -ENOSPC; get 0, -ENOENT, -ENOSPC (value_out too
 * small), -EINVAL (rank); fence 0 or -EPROTO. -ENOTSUP when no table. */
int fy_boot_kvs_put(const char *key, const char *value);
int fy_boot_kvs_get(int rank, const char *key, char *value_out, size_t len);
int fy_boot_kvs_fence(void);

extern const struct fy_boot_ops fy_boot_embedded_ops;
extern const struct fy_boot_ops fy_boot_singleton_ops;

/* Find how this process was started and bring the bootstrap up: Ferry's
 * own mpiexec, or nothing at all (a singleton). A launcher Ferry cannot
 * talk to (PMI, PMIx or Slurm variables without Ferry's) is an error with
 * a clear message, never N singletons. Drops the launcher's variables from
 * the environment once read, so programs a rank starts are not ranks.
 * Returns 0 or a negative errno after logging why. */
int fy_boot_init(void);
/* Fill b's node map for a job whose ranks all share this node (rank and
 * size set): local ranks are world ranks. For launchers, and for tests
 * that set fy_boot up by hand. 0, -ENOMEM or -EINVAL (logged). */
int fy_boot_one_node(struct fy_boot *b);
void fy_boot_finalize(void);

#endif /* FY_BOOT_H */
