/* SPDX-License-Identifier: MIT */
/* Large-message transfer mechanisms: the seed-000 five, each filling one
 * const struct fy_xfer_ops whose core is that paper's benchmark interface
 * (Table I). One-sided mechanisms (cma, procmem) read or write the peer's
 * memory from one process; two-sided ones (shmbuf, queue, net) need both
 * processes to copy. Each mechanism owns its data path and per-pair state
 * (shmbuf.c, queue.c, net.c; the shared single copy in split.c), which the
 * rendezvous protocol (src/proto/rndv.c) and the laboratory (bench/lab)
 * both drive. Also: the per-size rule table that picks a mechanism for
 * each message, and the job-wide probe (job.c). */
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

/* A one-sided transfer at a slow distance through one of bounce.c's
 * scratch buffers (page-aligned, FY_XFER_BOUNCE_PIECE bytes and a page
 * more), a piece at a time, each piece moved by 'direct' between the peer
 * and the scratch buffer (placed at the remote address's page offset, or
 * at the buffer's start) and by fy_copy between it and 'local'; counted
 * in fy_copy_counts. Direct when no buffer is free. Returns len or a
 * negative errno, as copy_remote. */
#define FY_XFER_BOUNCE_PIECE ((size_t)256 << 10)
typedef ssize_t fy_xfer_remote_fn(pid_t peer, void *local, uint64_t remote,
                                  size_t len, bool get);
ssize_t fy_xfer_bounced(fy_xfer_remote_fn *direct, pid_t peer, uint8_t *local,
                        uint64_t remote, size_t len, bool get,
                        bool at_remote_offset);
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
 * half_size bytes; xfer/shm_layout.h). Both functions move what they can now
 * and return at once: how many halves they filled or drained (0: the other side
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

/* ---- queue: the cell queue's data path (xfer/queue.c) ----------------------
 * One message cut into cells (shm/cellq_inl.h struct fy_cell): push takes cells
 * from the sender's free queue, fills header and payload and posts them on
 * the receiver's receive queue, as many as are free now; it returns how
 * many it posted (0: none free, try later), *done_io being the caller's
 * cursor (start at 0). The receiver pops a cell wherever its packets
 * arrive, and take copies one cell's bytes after checking that cookie,
 * offset and length name the next bytes of this message (-EPROTO if not;
 * the caller then gives up on the peer). Used by the library's rendezvous
 * and by the laboratory. Struct fy_cell and struct fy_cellq:
 * shm/cellq_inl.h. */
struct fy_cell;
struct fy_cellq;
typedef void (*fy_xfer_posted_fn)(int peer);
struct fy_queue_xfer {
    struct fy_cellq *freeq;   /* sender: its queue of free cells */
    uint64_t *free_tail;      /* sender: its consumer cursor of freeq */
    struct fy_cellq *recvq;   /* the receiver's receive queue */
    uint64_t *seq_io;         /* pair sequence: a cell takes ++*seq_io (NULL:
                               * cells carry 0) */
    fy_xfer_posted_fn posted; /* after each post (wake peer); may be NULL */
    int peer;                 /* receiver, passed to posted */
    uint32_t src;             /* the sender's rank, as cells name it */
    uint32_t type;            /* packet type the cells carry */
    uint64_t payload;         /* bytes per cell after its header */
    uint64_t len;             /* bytes of the message */
    uint64_t cookie;          /* names the receive in every cell */
    fy_copy_fn copy;          /* the copy routine (memcpy, or a lab variant) */
};
/* One cell's data as the receiver saw it (each field read once). */
struct fy_queue_chunk {
    uint64_t cookie, offset, len;
    const uint8_t *data;
};
int fy_xfer_queue_push(const struct fy_queue_xfer *x, const uint8_t *src,
                       uint64_t *done_io);
int fy_xfer_queue_take(const struct fy_queue_xfer *x,
                       const struct fy_queue_chunk *ch, uint8_t *dst,
                       uint64_t *done_io);
/* A popped cell's chunk (for receivers that pop cells themselves). */
struct fy_queue_chunk fy_xfer_queue_chunk(const struct fy_cell *c);
/* Whether push could take a free cell now. */
bool fy_xfer_queue_ready(const struct fy_queue_xfer *x);

/* ---- the shared single copy's data path (xfer/split.c) --------------------
 * One cma transfer of want bytes between the receiver's buffer and the
 * sender's, cut into chunks both processes claim from the receiver's
 * control block (struct fy_split_ctl, xfer/shm_layout.h). The receiver opens a
 * generation, tells the sender (gen, chunk size, its buffer's address) by
 * whatever channel it has, copies chunks itself (get) and waits only for
 * chunks the sender already claimed; the sender, when told, copies chunks
 * of that generation (put) until none is left. Used by the library's
 * rendezvous (p2p/split.c) and by the laboratory ("cma split"). */
struct fy_split_ctl;
/* The chunk size for a transfer of want bytes: a quarter, 32-256 KiB,
 * a multiple of 4 KiB. */
uint64_t fy_xfer_split_chunk(uint64_t want);
/* Receiver: start a transfer on its own control block; *gen_io is its
 * private generation counter. Returns the generation (never 0). */
uint32_t fy_xfer_split_open(struct fy_split_ctl *sc, uint32_t *gen_io);
/* Either side: claim and copy chunks of generation gen until none is left
 * (get: the receiver reads 'remote' of pid into local; put: the sender
 * writes local into 'remote' of pid; both are the buffers' starts). A
 * failed chunk is recorded for the receiver. Returns chunks copied;
 * 0 also when chunk is 0 or gen is stale. */
int fy_xfer_split_copy(struct fy_split_ctl *sc, uint32_t gen, uint64_t chunk,
                       uint64_t want, pid_t pid, uint8_t *local,
                       uint64_t remote, bool get);
/* The same for the side that opened generation gen: after its first
 * chunk, if no helper has taken one, it takes all the rest in one copy
 * (split.c's invariants). */
int fy_xfer_split_copy_own(struct fy_split_ctl *sc, uint32_t gen,
                           uint64_t chunk, uint64_t want, pid_t pid,
                           uint8_t *local, uint64_t remote, bool get);
/* Receiver, after its own copy: wait for the chunks the sender is still
 * copying; returns want, or -errno of a failed chunk. */
ssize_t fy_xfer_split_wait(struct fy_split_ctl *sc, uint64_t chunk,
                           uint64_t want);

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

/* The per-pair streams (see net.c for the wire format and invariants).
 * One endpoint per process; not thread safe. */

/* Open this process' endpoint: state for nranks peers and a listener;
 * writes the port and key that peers need (publish both). jobid goes into
 * every hello. Returns 0, -EINVAL (already open, bad ranks), -ENOMEM or
 * the listener's -errno. */
int fy_xfer_net_open(int me, int nranks, const char *jobid, uint16_t *port_out,
                     uint64_t *key_out);
/* Where 'peer' listens (its published port and key), before pushing to it. */
void fy_xfer_net_peer(int peer, uint16_t port, uint64_t key);
/* Close every connection and the listener, free the endpoint (also the
 * ops table's finalize). Safe when not open. */
void fy_xfer_net_close(void);
bool fy_xfer_net_is_open(void);
/* Sender: move message 'cookie' (len bytes at src) to 'peer' as far as the
 * socket takes it now; *done_io is the caller's cursor (start at 0). The
 * first push to a peer connects and sends the hello. Messages to one peer
 * go one after another: push the next only once this one's *done_io ==
 * len. Returns how many sends moved bytes (0: try later), or -errno
 * (-ENOTCONN: no port known; -EPIPE/-ECONNRESET: the peer is gone). */
int fy_xfer_net_push(int peer, uint64_t cookie, const uint8_t *src,
                     uint64_t len, uint64_t *done_io);
/* Receiver: the next message's header from 'peer' (accepting its
 * connection first if needed): 1 and *cookie_out, *len_out when complete,
 * 0 when not here yet, or -errno. The caller checks both before pulling. */
int fy_xfer_net_pull_hdr(int peer, uint64_t *cookie_out, uint64_t *len_out);
/* Receiver: read that message's bytes into dst up to len; *done_io is the
 * caller's cursor. Never reads past len (the next message stays in the
 * socket). Returns how many reads moved bytes (0: try later), or -errno. */
int fy_xfer_net_pull(int peer, uint8_t *dst, uint64_t len, uint64_t *done_io);
/* Before sleeping: would a push or pull that is waiting on a socket (or an
 * accept a pull waits for) make progress now? One poll(2), no wait. */
bool fy_xfer_net_visible(void);
/* Whether a loopback stream is under way (bytes left to send or to
 * receive, a connection pending): its sockets become ready when the
 * kernel says so - a window update after the peer's read - which rings no
 * doorbell, so a rank waiting on one must not sleep for long. */
bool fy_xfer_net_busy(void);

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

/* ---- the job's mechanisms (xfer/job.c) ----------------------------------- */

/* Run once every rank has published its record (after the attach
 * barrier), by every rank: publishes rank 0's requested table, runs the
 * init of each kind the table may use, probes them between the ranks
 * (one-sided: read the right neighbour's probe word; net: open the
 * endpoint), waits at the probe barrier and sets fy_xfer_active,
 * fy_xfer_avail, fy_xfer_split_min and fy_xfer_push_max (measured up to
 * push_cap by the node's first rank when the table is the default one and
 * cma works; 0: do not measure). jobid goes into net hellos.
 * Returns 0 or a negative errno after logging why; ends the job (77) under
 * FERRY_XFER_REQUIRE when a forced kind does not work. */
int fy_xfer_job_init(int me, int nranks, const char *jobid, uint64_t push_cap);
/* Every mechanism's finalize (procmem's files, net's sockets). */
void fy_xfer_job_finalize(void);

/* One-sided cma receives from this size are shared with the sender (the
 * shared single copy, xfer/split.c); 0: never. FERRY_SPLIT_MIN, else the
 * tuning file's split_min, else the default; set by fy_xfer_job_init. */
extern uint64_t fy_xfer_split_min;

/* The push crossover: the largest power of two from FY_XFER_CROSS_MIN up
 * to cap at which two memcpy's (plus a quarter, for the cells' packets)
 * take no longer than one copy_remote call of ops on this process' own
 * memory, both timed with source and destination evicted from the caches
 * (as a message between cores finds them), each the fastest of a few; 0
 * where even the first size loses or ops cannot copy. About 0.5 ms for a
 * 128 KiB cap on the 2026-11-27 Xeon VM, most of it faulting in the
 * buffers. out (optional) gets the timings. The job's value, measured by
 * the node's first rank in fy_xfer_job_init, is fy_xfer_push_max (0: not
 * measured). */
#define FY_XFER_CROSS_MIN 8192
#define FY_XFER_CROSS_SIZES 16
struct fy_xfer_cross {
    int n;
    uint64_t bytes[FY_XFER_CROSS_SIZES];
    double mech_us[FY_XFER_CROSS_SIZES], memcpy_us[FY_XFER_CROSS_SIZES];
};
uint64_t fy_xfer_push_crossover(const struct fy_xfer_ops *ops, uint64_t cap,
                                struct fy_xfer_cross *out);
extern uint64_t fy_xfer_push_max;

#endif /* FY_XFER_H */
