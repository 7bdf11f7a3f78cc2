/* SPDX-License-Identifier: MIT */
/* Bootstrap: how a job starts, as an ops table. Each way of starting fills
 * one const struct fy_boot_ops (the embedded launcher's inherited memfd, a
 * singleton, the PMI-1 and PMI-2 wire clients, PMIx loaded at run time) and
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
    /* The launcher may not end the job when a rank aborts (Slurm without
     * --kill-on-bad-exit): the aborting rank ends this node's others. */
    bool abort_ends_node;
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
    /* Ask the launcher to end the whole job with 'code' (MPI_Abort, exit
     * without MPI_Finalize). May return; the caller then _exits. */
    void (*abort)(int code, const char *msg);
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
extern const struct fy_boot_ops fy_boot_pmi1_ops; /* boot/pmi.c */
extern const struct fy_boot_ops fy_boot_pmi2_ops;
extern const struct fy_boot_ops fy_boot_pmix_ops; /* boot/pmix.c */

/* ---- what launchers send, parsed without trusting it (boot/pmi_wire.c) */

#define FY_PMI_ATTRS 16     /* attributes of one message, cmd included */
#define FY_PMI_MSG_MAX 8192 /* bytes of one message, NUL included */
#define FY_PMI2_HDR 6       /* PMI-2's decimal length field */

/* A message: attribute i is key[i]=val[i], both pointing into buf;
 * key[0] is "cmd". */
struct fy_pmi_msg {
    int nattr;
    const char *key[FY_PMI_ATTRS], *val[FY_PMI_ATTRS];
    char buf[FY_PMI_MSG_MAX];
};

/* One PMI-1 line (without its newline): "cmd=x k=v ...". 0 or -EPROTO
 * (logged: too long, NUL byte, a word without '=', no leading cmd=). */
int fy_pmi1_parse(const char *line, size_t len, struct fy_pmi_msg *out);
/* A PMI-2 frame's length field: 0 or -EPROTO (not decimal, 0, too long). */
int fy_pmi2_frame_len(const char hdr[FY_PMI2_HDR], size_t *len_out);
/* A PMI-2 frame's body: "cmd=x;k=v;..." with ";;" for ';' in a value. */
int fy_pmi2_parse(const char *body, size_t len, struct fy_pmi_msg *out);
/* The value of 'key' in m, or NULL. */
const char *fy_pmi_msg_get(const struct fy_pmi_msg *m, const char *key);
/* PMI_process_mapping "(vector,(node,nodes,ppn),...)" for a job of 'size'
 * ranks: node_of[rank] (size entries) gets each rank's node id. 0 or
 * -EINVAL (logged, nothing promised about node_of). */
int fy_pmi_parse_mapping(const char *s, int size, int *node_of);

/* ---- shared by the launchers that are not Ferry's (boot/pmi.c) ---- */

/* Fill b's node map (rank and size set) from node_of[size]: this node's
 * ranks are those with our node id. 0, -ENOMEM or -EINVAL (logged). */
int fy_boot_node_from_map(struct fy_boot *b, const int *node_of);
/* The node's segment: its first local rank creates a memfd and publishes
 * "pid:fd" under key "shm" through ops' key-value space; after a fence the
 * others open /proc/<pid>/fd/<fd>. Sets b->shm_fd. Ranks on other nodes
 * are reached through the network channel (chan/tcp.c). 0 or a negative
 * errno (logged). */
int fy_boot_node_setup(struct fy_boot *b, const struct fy_boot_ops *ops);

/* Ask the launcher to end the job (MPI_Abort, exit without MPI_Finalize)
 * when it has a way; returns, and the caller _exits with 'code'. */
void fy_boot_abort(int code, const char *msg);

/* Find how this process was started and bring the bootstrap up: Ferry's
 * own mpiexec, a PMI-1 or PMI-2 launcher (Hydra, Slurm), PMIx, or nothing
 * at all (a singleton); FERRY_BOOT forces one. A launcher Ferry cannot
 * reach (its variables pointing to nothing, srun without PMI) is an error
 * with a clear message, never N singletons. Drops the launcher's variables from
 * the environment once read, so programs a rank starts are not ranks.
 * Returns 0 or a negative errno after logging why. */
int fy_boot_init(void);
/* Fill b's node map for a job whose ranks all share this node (rank and
 * size set): local ranks are world ranks. For launchers, and for tests
 * that set fy_boot up by hand. 0, -ENOMEM or -EINVAL (logged). */
int fy_boot_one_node(struct fy_boot *b);
/* Fill b->local_of from b->local_ranks (local_size, local_rank set) and
 * check the map holds distinct ranks, this one included. 0, -ENOMEM or
 * -EINVAL (logged). */
int fy_boot_index_local(struct fy_boot *b);
void fy_boot_finalize(void);

#endif /* FY_BOOT_H */
