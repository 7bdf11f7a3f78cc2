/* SPDX-License-Identifier: MIT */
/* Large-message transfer mechanisms: the seed-000 five, each filling one
 * const struct fy_xfer_ops whose core is that paper's benchmark interface
 * (Table I). One-sided mechanisms (cma, procmem) read or write the peer's
 * memory from one process; two-sided ones (shmbuf, queue, net) need both
 * processes to copy, and their data movement is driven by the rendezvous
 * protocol (src/p2p/rndv.c). Also: the per-size rule table that picks a
 * mechanism for each message, and the helpers of the socket mechanism. */
#ifndef FY_XFER_H
#define FY_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Values are stable (tables, tuning files and the laboratory index by
 * them): new mechanisms are appended. */
enum fy_xfer_kind {
    FY_XFER_CMA,     /* one-sided: process_vm_readv/writev (seed: "Kaput") */
    FY_XFER_SHMBUF,  /* two-sided: per-pair shared double buffer */
    FY_XFER_QUEUE,   /* two-sided: per-receiver lock-free cell queues */
    FY_XFER_PROCMEM, /* one-sided: /proc/<pid>/mem (seed: "Ptrace") */
    FY_XFER_NET,     /* two-sided: TCP on loopback (seed: "NIC copy") */
    FY_XFER_NKINDS
};

/* ---- the ops table (seed-000 Table I) ------------------------------------
 *
 * Table I of the seed    this table      what it is here
 * init / finalize        init/finalize   per-process set-up and tear-down;
 *                                         NULL: nothing to do
 * register_mem /         register_mem/   make a region usable by the peer;
 *  deregister_mem         deregister_mem  NULL for all five (none pins)
 * copy_local             copy_local      the copy routine this process
 *                                         runs on its own side: memcpy
 *                                         out of the staging area for
 *                                         shmbuf/queue/net's receiver
 * copy_remote            copy_remote     one-sided only: one call moves
 *                                         the bytes between this process
 *                                         and the peer's memory; NULL for
 *                                         the two-sided kinds, whose
 *                                         "remote" half is the peer's own
 *                                         copy into the staging area
 *
 * Every pointer except probe may be NULL and callers check; no stubs.
 * Not thread safe: one thread per process uses a mechanism at a time. */
struct fy_xfer_ops {
    const char *name;    /* FERRY_XFER value */
    const char *summary; /* one line for ferry-info and reports */
    bool one_sided;      /* copy_remote reaches the peer's memory directly */
    /* Whether the mechanism works for this process on this machine (a
     * self-test; see fy_xfer_probe_siblings for the stricter check that
     * mpiexec's sibling ranks need). On failure writes a reason into why
     * (may be NULL). */
    bool (*probe)(char *why, size_t whylen);
    int (*init)(void);
    void (*finalize)(void);
    /* Optional: make a region usable for copy_remote. 0 or -errno. */
    int (*register_mem)(void *addr, size_t len);
    int (*deregister_mem)(void *addr, size_t len);
    /* Copy within this process (the mechanism's local copy routine). */
    void (*copy_local)(void *dst, const void *src, size_t len);
    /* One-sided only: move len bytes between 'local' and address 'remote'
     * of process 'peer'; get=true reads the peer, false writes it. Returns
     * len, or -errno: -ESRCH when the peer is gone, -EPERM when the
     * kernel forbids it, -EFAULT/-EIO for an address the peer has not
     * mapped. Does not stop the peer. */
    ssize_t (*copy_remote)(pid_t peer, void *local, uint64_t remote, size_t len,
                           bool get);
};

/* Shared by the ops tables: the plain libc copy (copy_local of every
 * mechanism but the laboratory's variants) and the probe of mechanisms
 * that work wherever shared memory does. */
void fy_xfer_copy_libc(void *dst, const void *src, size_t len);
bool fy_xfer_probe_always(char *why, size_t whylen);

extern const struct fy_xfer_ops fy_xfer_cma_ops;
extern const struct fy_xfer_ops fy_xfer_shmbuf_ops;
extern const struct fy_xfer_ops fy_xfer_queue_ops;
extern const struct fy_xfer_ops fy_xfer_procmem_ops;
extern const struct fy_xfer_ops fy_xfer_net_ops;

/* Registry in FY_XFER_* order. */
extern const struct fy_xfer_ops *const fy_xfer_registry[FY_XFER_NKINDS];

/* Parse one mechanism name: returns the kind, -1 for "auto", or -EINVAL. */
int fy_xfer_parse(const char *name);

/* Whether a one-sided mechanism works between two sibling processes (how
 * mpiexec starts ranks; yama ptrace_scope=1 allows only ancestors): forks
 * two children, one reads the other. For the other kinds this is probe().
 * For tools and tests only, never inside an MPI process (it forks). */
bool fy_xfer_probe_siblings(int kind, char *why, size_t whylen);

/* ---- shmbuf: the double buffer's data path (xfer/shmbuf.c) ----------------
 * One message through one pad (two control lines, then two halves of
 * half_size bytes; shm/shm.h). Both functions move what they can now and
 * return at once: how many halves they filled or drained (0: the other side
 * has not caught up), or -EPROTO (pull) for a half whose length or cookie
 * is not this message's. *half_io and *done_io are the caller's cursor
 * (start at 0). Used by the library's rendezvous and by the laboratory. */
typedef void (*fy_copy_fn)(void *dst, const void *src, size_t len);
struct fy_shmbuf_xfer {
    uint8_t *pad;
    uint64_t half_size;
    uint64_t len;    /* bytes of the message */
    uint64_t chunk;  /* bytes per half the sender fills (<= half_size) */
    uint64_t cookie; /* names the message in every half */
    fy_copy_fn copy; /* the copy routine (memcpy, or a lab variant) */
};
int fy_xfer_shmbuf_push(const struct fy_shmbuf_xfer *x, uint32_t *half_io,
                        const uint8_t *src, uint64_t *done_io);
int fy_xfer_shmbuf_pull(const struct fy_shmbuf_xfer *x, uint32_t *half_io,
                        uint8_t *dst, uint64_t *done_io);
/* Whether push (sender) or pull (receiver) could move a half now. */
bool fy_xfer_shmbuf_ready(const struct fy_shmbuf_xfer *x, uint32_t half,
                          bool sender);

/* ---- procmem extras ------------------------------------------------------ */

/* The seed's Ptrace mechanism as published, for the laboratory only (the
 * library never stops a peer): stop 'peer' with ptrace (PTRACE_SEIZE +
 * PTRACE_INTERRUPT, which stops it like PTRACE_ATTACH's SIGSTOP but leaves
 * no stray SIGSTOP behind), wait for the stop, copy through
 * /proc/<peer>/mem, PTRACE_DETACH. The peer is frozen for the whole call.
 * Same return values as copy_remote; -EPERM also when the caller may not
 * trace the peer (it cannot be the caller itself). Not thread safe. */
ssize_t fy_xfer_procmem_attach_copy(pid_t peer, void *local, uint64_t remote,
                                    size_t len, bool get);

/* ---- net: sockets on 127.0.0.1 -------------------------------------------
 * All sockets are non-blocking and close-on-exec; data sockets have
 * TCP_NODELAY. Functions return 0 / a byte count, or -errno (-EAGAIN: try
 * again later). */

/* Listen on an ephemeral loopback port. */
int fy_xfer_net_listen(int *fd_out, uint16_t *port_out);
/* Start connecting to a loopback port; the connection may still be in
 * progress on return (sends then fail with -EAGAIN until it is up). */
int fy_xfer_net_connect(uint16_t port, int *fd_out);
/* Accept one pending connection; -EAGAIN when none is waiting. */
int fy_xfer_net_accept(int lfd, int *fd_out);
/* Send as much of iov as the socket takes now (never SIGPIPE). */
ssize_t fy_xfer_net_send(int fd, const struct iovec *iov, int iovcnt);
/* Receive at most len bytes now; a closed connection is -ECONNRESET. */
ssize_t fy_xfer_net_recv(int fd, void *buf, size_t len);
/* Blocking forms (poll on -EAGAIN) for tools, tests and the laboratory. */
int fy_xfer_net_send_all(int fd, const void *buf, size_t len);
int fy_xfer_net_recv_all(int fd, void *buf, size_t len);

/* First bytes on every library connection: who connects to whom, proved by
 * the listener's key (random, published only in the job's private shared
 * segment) and the job id, so no foreign process can inject data. */
struct fy_xfer_net_hello {
    char magic[8];    /* "FerryNet" */
    uint32_t version; /* FY_XFER_NET_VERSION */
    uint32_t src;     /* connecting (sending) world rank */
    uint32_t dst;     /* listening (receiving) world rank */
    uint32_t pad;
    uint64_t key;   /* the listener's key */
    char jobid[64]; /* FERRY_JOBID, NUL-padded */
};
#define FY_XFER_NET_VERSION 1u
void fy_xfer_net_hello_make(struct fy_xfer_net_hello *h, uint32_t src,
                            uint32_t dst, uint64_t key, const char *jobid);
/* Checks a received hello against what this listener expects; returns the
 * sender's rank, or -EACCES (a stranger) / -EPROTO (not ours at all). */
int fy_xfer_net_hello_check(const struct fy_xfer_net_hello *h, uint32_t me,
                            uint32_t nranks, uint64_t key, const char *jobid);

/* ---- per-size selection --------------------------------------------------
 * A rule table maps a rendezvous message size (the bytes that will really
 * move: min(message, receive buffer)) to a mechanism: rule i covers sizes
 * from rule[i].min_bytes up to rule[i+1].min_bytes - 1 (the rule with the
 * largest min_bytes <= size, as in the tuning file); sizes below the first
 * rule's min_bytes get FY_XFER_AUTO. The receiver decides when it matches
 * an RTS, so only the receiver's table counts for a message. */
struct fy_xfer_rule {
    uint64_t min_bytes;
    int kind; /* enum fy_xfer_kind; FY_XFER_AUTO only in requests */
};
#define FY_XFER_AUTO (-1)    /* cma when it works here, else shmbuf */
#define FY_XFER_RULES_MAX 32 /* as FY_TUNING_MAX_RULES */

enum fy_xfer_from {
    FY_XFER_FROM_DEFAULT, /* nothing asked: auto for every size */
    FY_XFER_FROM_ENV,     /* FERRY_XFER */
    FY_XFER_FROM_TUNING,  /* fy_xfer_rules_set (the tuning file) */
};

struct fy_xfer_table {
    uint32_t from; /* enum fy_xfer_from */
    uint32_t n;    /* rules in use, 1..FY_XFER_RULES_MAX */
    struct fy_xfer_rule rule[FY_XFER_RULES_MAX];
};

/* Install measured rules (sorted by strictly increasing min_bytes, kinds
 * valid or FY_XFER_AUTO, 1..FY_XFER_RULES_MAX of them, one fewer if the
 * first does not start at 0). FERRY_XFER, when set, still wins.
 * Call it before the p2p transports come up (fy_p2p_init) so that rank 0's
 * table rules the whole job; called later it changes only this rank's
 * receive decisions (safe, since the receiver decides). A kind that does
 * not work here is replaced with a warning. Returns 0 or -EINVAL. */
int fy_xfer_rules_set(const struct fy_xfer_rule *rules, int n);
/* Forget rules installed by fy_xfer_rules_set. */
void fy_xfer_rules_clear(void);

/* Install the xfer.* rules of a loaded tuning file (util/tuning.h) with
 * fy_xfer_rules_set. A mechanism name this Ferry does not know (a file
 * from a newer version) gets FY_XFER_AUTO for its range, with a warning;
 * a file without xfer rules changes nothing. Returns 0 or -EINVAL (too
 * many rules, logged). */
struct fy_tuning;
int fy_xfer_rules_from_tuning(const struct fy_tuning *t);

/* Parse "name" or "name,SIZE:name,..." (sizes as fy_parse_size: 64K, 1M)
 * into a table; e.g. "shmbuf,1M:cma" is shmbuf below 1 MiB, cma from it.
 * Returns 0 or -EINVAL (after writing why, if why is not NULL). */
int fy_xfer_rules_parse(const char *text, struct fy_xfer_table *out, char *why,
                        size_t whylen);

/* What this process asks for: FERRY_XFER if set (not "auto"), else the
 * rules given to fy_xfer_rules_set, else the default (auto: cma where it
 * works, else shmbuf, for every size). Needs fy_env_load(). Returns 0 or
 * -EINVAL (FERRY_XFER malformed, logged). */
int fy_xfer_table_request(struct fy_xfer_table *out);
/* Make a requested table usable where the kinds in 'avail' (bit 1<<kind)
 * work: sizes below the first rule get an explicit AUTO rule from 0, AUTO
 * becomes cma or shmbuf, an unavailable kind becomes what AUTO would be
 * (with a warning when warn is set), adjacent equal rules merge. The
 * result starts at 0 and names only kinds in avail. */
void fy_xfer_table_resolve(struct fy_xfer_table *t, unsigned avail, bool warn);

/* The table in force in this process and the kinds that work job-wide
 * (0 until the p2p layer is up). Written by the p2p layer at init. */
extern struct fy_xfer_table fy_xfer_active;
extern unsigned fy_xfer_avail;

static inline int fy_xfer_table_pick(const struct fy_xfer_table *t,
                                     uint64_t bytes)
{
    uint32_t i = t->n - 1;
    while (i > 0 && bytes < t->rule[i].min_bytes)
        i--;
    return t->rule[i].kind;
}

const char *fy_xfer_from_name(uint32_t from);

#endif /* FY_XFER_H */
