/* SPDX-License-Identifier: MIT */
/* The shared-memory channel: packets to ranks on this node through the
 * per-pair mailbox rings (small packets) and the per-receiver cell queues
 * (the rest, and when a ring is full), both in the job's segment and
 * indexed by local rank. The pair sequence orders the two lanes: a cell
 * that arrives ahead of mailbox packets its sender published before it
 * waits until those are handed up (fy_chan_cell_take). Invariants of the
 * mailbox are in shm_inl.h, of the queues in shm/cellq_inl.h; waiting on
 * the doorbell pairs F1 (fy_wake_slow) with F2 (fy_chan_sleep). The
 * channel's regions of the segment are described in shm_layout.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "chan/shm_inl.h"
#include "util/mt.h"

struct fy_chan_state fy_chan;

_Noreturn void fy_chan_bad_packet(int src, const char *what)
{
    fy_fatal(1, "malformed packet from rank %d (%s); %s corrupted?", src, what,
             fy_chan_remote(src) ? "its connection" : "shared memory");
}

/* ---- packets that steer a write ------------------------------------------
 * An OFFER names the receive buffer its sender (the receiver of the
 * message) wants written into, a SPLIT the buffer its sender wants
 * helped into: the packet's receiver then writes into the packet
 * sender's memory at that address (proto/write.c, proto/split.c). The
 * sender may name any address of its own, but while the packet waits in
 * a mailbox slot or a cell any rank can write over it, and a moved
 * address would have the receiver write elsewhere in the sender's memory.
 * So through shared memory these two carry a check word over every field
 * and the sender's local rank: a stray write into the packet (not a forger
 * that recomputes it) ends the job as malformed before anything is
 * written. In the mailbox the word follows the control fields (40 of the
 * first slot's 48 bytes); in a cell it is the payload. Other control
 * packets steer only reads of their sender's memory or copies bounded by
 * the receiver's own state. */
static inline bool steers_write(uint32_t type)
{
    return type == FY_PKT_OFFER || type == FY_PKT_SPLIT;
}

static uint64_t steer_check(uint32_t type, int32_t tag, uint32_t ctx,
                            const struct fy_ctl *c, int src_local)
{
    return FY_SHM_SIG(type, (uint32_t)tag, ctx, c->total, c->addr, c->cookie,
                      c->offset, (uint64_t)src_local, 0x5354u /* "ST" */);
}

/* Check a steering packet's check word (the 'len' bytes at w, which must
 * be one word, read once) against its fields as handed up. */
static void steer_verify(const struct fy_pkt *p, const void *w, uint64_t len)
{
    uint64_t got;
    if (len != sizeof(got))
        fy_chan_bad_packet(p->src, "check word length");
    memcpy(&got, w, sizeof(got));
    if (got !=
        steer_check(p->type, p->tag, p->ctx, &p->ctl, fy_chan_local(p->src)))
        fy_chan_bad_packet(p->src, "check word of an address to write at");
}

_Noreturn void fy_chan_peer_gone(int src)
{
    FY_INFO("rank %d is gone; waiting for mpiexec to end the job", src);
    for (int i = 0; i < 100; i++)
        usleep(50 * 1000);
    fy_fatal(1, "rank %d died and the job was not ended; exiting", src);
}

/* ---- waking and sleeping ---------------------------------------------- */

static long futex(_Atomic uint32_t *addr, int op, uint32_t val,
                  const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

void fy_wake_slow(int peer)
{
    int l = fy_chan_local(peer);
    if (l < 0)
        return; /* another node: its socket wakes it */
    struct fy_chan_bell *pr = &fy_chan.bells[l];
    /* F1: Dekker with F2 in fy_chan_sleep() (and the network channel's
     * sleep): our packet (stored before) or its count of sleepers - at
     * least one side sees the other's store. */
    atomic_thread_fence(memory_order_seq_cst);
    uint32_t how = atomic_load_explicit(&pr->sleeping, memory_order_relaxed);
    if (how) {
        atomic_fetch_add_explicit(&pr->doorbell, 1, memory_order_seq_cst);
        /* Futex sleepers are counted in the low bits (under
         * MPI_THREAD_MULTIPLE several threads of the peer may sleep on
         * its doorbell: wake them all); a sleeper in the network
         * channel's epoll adds FY_SLEEP_NET and is poked through its
         * pipe. */
        if (how & (FY_SLEEP_NET - 1))
            futex(&pr->doorbell, FUTEX_WAKE, INT32_MAX, NULL);
        if (how >= FY_SLEEP_NET && fy_chan.net)
            fy_chan.net->poke(l);
    }
}

/* The safety timeout of a sleep that waits for a wake-up. */
#define FY_CHAN_SAFETY_NS (20L * 1000 * 1000)

void fy_chan_sleep(bool (*more_work)(void))
{
    fy_chan_sleep_for(more_work, FY_CHAN_SAFETY_NS);
}

void fy_chan_sleep_for(bool (*more_work)(void), long timeout_ns)
{
    if (fy_chan.net) {
        /* Sockets and the doorbell together: see the network channel. */
        fy_chan.net->sleep(more_work);
        return;
    }
    struct fy_chan_bell *my = &fy_chan.bells[fy_chan.local_me];
    uint32_t v = atomic_load_explicit(&my->doorbell, memory_order_seq_cst);
    /* A count of sleepers, not a flag: under MPI_THREAD_MULTIPLE several
     * threads of this rank may sleep at once, and the first to wake must
     * not tell peers that nobody sleeps. */
    atomic_fetch_add_explicit(&my->sleeping, 1, memory_order_seq_cst);
    /* F2: pairs with F1. */
    atomic_thread_fence(memory_order_seq_cst);
    if (!fy_chan_visible() && !(more_work && more_work())) {
        /* The timeout is a safety net only; wake-ups are explicit. Other
         * threads may use the library meanwhile (MULTIPLE). */
        struct timespec ts = {timeout_ns / 1000000000L,
                              timeout_ns % 1000000000L};
        int d = fy_mt_wait_begin();
        long rc = futex(&my->doorbell, FUTEX_WAIT, v, &ts);
        bool timed_out = rc != 0 && errno == ETIMEDOUT;
        fy_mt_wait_end(d);
        __atomic_fetch_add(&fy_chan.sleeps, 1, __ATOMIC_RELAXED);
        /* Only the safety timeout says something: a shorter one is a nap
         * its caller chose (the one-sided progress thread's), which ends
         * with no wake-up by design. */
        if (timed_out && timeout_ns >= FY_CHAN_SAFETY_NS) {
            __atomic_fetch_add(&fy_chan.sleep_timeouts, 1, __ATOMIC_RELAXED);
            if (fy_chan_visible() || (more_work && more_work()))
                __atomic_fetch_add(&fy_chan.lost_wakeups, 1, __ATOMIC_RELAXED);
        }
    }
    atomic_fetch_sub_explicit(&my->sleeping, 1, memory_order_relaxed);
}

/* ---- cells ------------------------------------------------------------ */

uint64_t fy_cell_get(void)
{
    return fy_cellq_pop(fy_chan.freeq, &fy_chan.free_tail);
}

void fy_cell_post(int peer, uint64_t off)
{
    fy_cellq_push(fy_cellq_recvq(fy_chan_local(peer)), off);
    fy_wake(peer);
}

void fy_chan_cell_return(uint64_t off)
{
    int owner = fy_cell_owner(off); /* checked when the cell was taken */
    fy_cellq_push(fy_cellq_freeq(owner), off);
    fy_wake(fy_boot.local_ranks[owner]);
}

/* ---- receiving ---------------------------------------------------------- */

/* Hand up the next packet of world rank 'src' from its mailbox if it is
 * the one due. */
static bool poll_fastbox(int src)
{
    struct fy_chan_peer *pe = &fy_chan.peers[src];
    struct fy_fbox_slot *sl = fy_chan_fbox_due(pe);
    if (!sl)
        return false;
    /* Read the header once: the peer owns the line. */
    int32_t tag = sl->tag;
    uint16_t ct = sl->ctx_type;
    uint64_t len = sl->len;
    uint32_t type = ct >> 12;
    if (len > fy_chan.fbox_cap)
        fy_chan_bad_packet(src, "mailbox length");
    uint8_t copy[FY_FBOX_MAX_LEN(FY_FBOX_SLOTS)];
    fy_chan_fbox_copy_out(pe, sl, copy, len);
    struct fy_pkt p = {.src = src,
                       .type = type,
                       .tag = tag,
                       .ctx = ct & 0xfffu,
                       .data = copy,
                       .len = len,
                       .lane = FY_LANE_MAILBOX};
    if (type == FY_PKT_PUSH) {
        /* Control fields, then a few pushed bytes (seed 001's small
         * BTP(1) rides in the mailbox like an RTS). */
        if (len < sizeof(struct fy_ctl))
            fy_chan_bad_packet(src, "mailbox push length");
        memcpy(&p.ctl, copy, sizeof(p.ctl));
        p.data = copy + sizeof(p.ctl);
        p.len = len - sizeof(p.ctl);
    } else if (type != FY_PKT_EAGER) {
        uint64_t want =
            sizeof(struct fy_ctl) + (steers_write(type) ? sizeof(uint64_t) : 0);
        if (len != want)
            fy_chan_bad_packet(src, "mailbox control length");
        memcpy(&p.ctl, copy, sizeof(p.ctl));
        if (steers_write(type))
            steer_verify(&p, copy + sizeof(p.ctl), sizeof(uint64_t));
        p.len = 0;
    }
    fy_chan_fbox_consume(pe, len);
    fy_chan.deliver(&p);
    return true;
}

uint64_t fy_chan_cell_take(int *src_out)
{
    struct fy_chan_state *s = &fy_chan;
    uint64_t off = fy_cellq_pop(s->recvq, &s->recv_tail);
    if (!off)
        return 0;
    int owner = fy_cell_owner(off);
    if (owner < 0)
        fy_fatal(1, "malformed cell offset %#llx in receive queue",
                 (unsigned long long)off);
    int src = fy_boot.local_ranks[owner];
    struct fy_cell *c = fy_cell_at(off);
    if (c->src != (uint32_t)owner)
        fy_chan_bad_packet(src, "cell owner");
    struct fy_chan_peer *pe = &s->peers[src];
    /* Earlier packets of this sender that took its mailbox are already
     * visible (it published them before this cell): take them first. */
    while (pe->rseq != c->seq) {
        if ((int64_t)(c->seq - pe->rseq) < 0 || !poll_fastbox(src))
            fy_chan_bad_packet(src, "sequence");
    }
    pe->rseq++;
    *src_out = src;
    return off;
}

void fy_chan_cell_deliver(uint64_t off, int src)
{
    struct fy_cell *c = fy_cell_at(off);
    /* Every field read once. */
    struct fy_pkt p = {.src = src,
                       .type = c->type,
                       .tag = c->tag,
                       .ctx = c->ctx,
                       .data = (uint8_t *)c + FY_CELL_HDR,
                       .len = fy_chan_cell_len(c, src),
                       .ctl = {c->total, c->addr, c->cookie, c->offset},
                       .lane = FY_LANE_CELLS};
    if (steers_write(p.type)) {
        steer_verify(&p, p.data, p.len);
        p.data = NULL;
        p.len = 0;
    }
    fy_chan.deliver(&p);
    fy_chan_cell_return(off);
}

static int shm_poll(void)
{
    struct fy_chan_state *s = &fy_chan;
    int n = 0;
    for (int src = 0; src < s->P; src++)
        if (src != s->me && s->of[src] == &fy_chan_shm_ops)
            while (poll_fastbox(src))
                n++;
    int src;
    uint64_t off;
    while ((off = fy_chan_cell_take(&src))) {
        fy_chan_cell_deliver(off, src);
        n++;
    }
    return n;
}

static bool shm_visible(void)
{
    struct fy_chan_state *s = &fy_chan;
    for (int p = 0; p < s->P; p++) {
        struct fy_chan_peer *pe = &s->peers[p];
        if (p == s->me || s->of[p] != &fy_chan_shm_ops)
            continue;
        if (atomic_load_explicit(&pe->ring_in[pe->fb_next % s->slots].seq,
                                 memory_order_relaxed) == pe->rseq)
            return true;
    }
    return fy_chan_cell_waiting();
}

/* ---- sending ------------------------------------------------------------ */

static bool shm_try_send(int peer, uint32_t type, int32_t tag, uint32_t ctx,
                         const struct fy_ctl *ctl, const void *data,
                         uint64_t len)
{
    struct fy_chan_peer *pe = &fy_chan.peers[peer];
    /* Eager payloads up to fbox_max and control packets take the mailbox;
     * other packets with a payload (synchronous eager, pipelined and
     * pushed data) always take a cell (the mailbox slot has no room for
     * their control fields). */
    bool payload = fy_pkt_has_payload(type);
    if (type == FY_PKT_PUSH && sizeof(*ctl) + len <= fy_chan.fbox_max) {
        uint8_t box[FY_FBOX_MAX_LEN(FY_FBOX_SLOTS)];
        memcpy(box, ctl, sizeof(*ctl));
        if (len)
            memcpy(box + sizeof(*ctl), data, len);
        if (fy_chan_fbox_put(peer, pe, type, tag, ctx, box, sizeof(*ctl) + len))
            return true;
    } else if (FY_UNLIKELY(steers_write(type))) {
        /* The control fields and their check word (see steers_write). */
        uint8_t box[sizeof(*ctl) + sizeof(uint64_t)];
        uint64_t chk = steer_check(type, tag, ctx, ctl, fy_chan.local_me);
        memcpy(box, ctl, sizeof(*ctl));
        memcpy(box + sizeof(*ctl), &chk, sizeof(chk));
        return fy_chan_fbox_put(peer, pe, type, tag, ctx, box, sizeof(box)) ||
               fy_chan_cell_put(peer, pe, type, tag, ctx, ctl, &chk,
                                sizeof(chk));
    } else if (type == FY_PKT_EAGER ? len <= fy_chan.fbox_max : !payload) {
        const void *box = type == FY_PKT_EAGER ? data : (const void *)ctl;
        uint64_t boxlen = type == FY_PKT_EAGER ? len : sizeof(*ctl);
        if (fy_chan_fbox_put(peer, pe, type, tag, ctx, box, boxlen))
            return true;
    }
    return fy_chan_cell_put(peer, pe, type, tag, ctx, ctl,
                            payload ? data : NULL, payload ? len : 0);
}

const struct fy_chan_ops fy_chan_shm_ops = {
    .name = "shm",
    .try_send = shm_try_send,
    .poll = shm_poll,
    .visible = shm_visible,
};

/* ---- every channel ------------------------------------------------------ */

int fy_chan_poll(void)
{
    int n = shm_poll();
    if (fy_chan.net)
        n += fy_chan.net->poll();
    return n;
}

bool fy_chan_visible(void)
{
    return shm_visible() || (fy_chan.net && fy_chan.net->visible());
}

int fy_chan_shm_declare(struct fy_shm_layout *lay, uint32_t slots)
{
    if (slots < 1 || slots > FY_FBOX_SLOTS) {
        FY_ERROR("a mailbox ring of %u slots: must be 1 to %d", slots,
                 FY_FBOX_SLOTS);
        return -EINVAL;
    }
    int rc;
    if ((rc = fy_shm_region_add(
             lay, FY_CHAN_BELL_REGION, FY_SHM_PER_RANK,
             sizeof(struct fy_chan_bell), 1, FY_CACHELINE,
             FY_SHM_SIG(sizeof(struct fy_chan_bell),
                        offsetof(struct fy_chan_bell, nopoke),
                        offsetof(struct fy_chan_bell, sleeping),
                        offsetof(struct fy_chan_bell, wake_fd),
                        offsetof(struct fy_chan_bell, ver),
                        offsetof(struct fy_chan_bell, seen)))) < 0 ||
        (rc = fy_shm_region_add(
             lay, FY_CHAN_FBOX_REGION, FY_SHM_PER_PAIR,
             sizeof(struct fy_fbox_slot), slots, FY_SHM_PAGE,
             FY_SHM_SIG(sizeof(struct fy_fbox_slot),
                        offsetof(struct fy_fbox_slot, tag),
                        offsetof(struct fy_fbox_slot, ctx_type),
                        offsetof(struct fy_fbox_slot, len),
                        offsetof(struct fy_fbox_slot, data), FY_FBOX_PAYLOAD,
                        FY_FBOX_CONT, FY_CHAN_WIRE_REV))) < 0 ||
        (rc = fy_shm_region_add(lay, FY_CHAN_FACK_REGION, FY_SHM_PER_PAIR,
                                sizeof(struct fy_fbox_ack), 1, FY_SHM_PAGE,
                                FY_SHM_SIG(sizeof(struct fy_fbox_ack)))) < 0)
        return rc;
    return 0;
}

/* The mailbox of every peer on another node (never written: see
 * fy_chan_init). */
static struct fy_fbox_slot remote_ring[FY_FBOX_SLOTS];
static struct fy_fbox_ack remote_ack;

int fy_chan_init(fy_chan_deliver_fn *deliver, uint32_t fbox_max,
                 bool wake_peers)
{
    struct fy_chan_state *s = &fy_chan;
    s->me = fy_boot.rank;
    s->P = fy_boot.size;
    s->local_me = fy_boot.local_rank;
    s->wake_peers = wake_peers;
    s->deliver = deliver;
    /* Ranks of other nodes: FERRY_NET picks the network channel (p2p
     * checked the value); auto is TCP. */
    const struct fy_chan_ops *net = !strcmp(fy_env_str(FY_ENV_NET), "ofi")
                                        ? &fy_chan_ofi_ops
                                        : &fy_chan_tcp_ops;
    /* Our regions, from this process's own layout: every address below
     * is computed once here and kept privately. */
    const struct fy_shm_region *fbox =
        fy_shm_layout_find(&fy_shm.lay, FY_CHAN_FBOX_REGION);
    struct fy_fbox_slot *rings = fy_shm_region_ptr(FY_CHAN_FBOX_REGION, NULL);
    struct fy_fbox_ack *acks = fy_shm_region_ptr(FY_CHAN_FACK_REGION, NULL);
    s->bells = fy_shm_region_ptr(FY_CHAN_BELL_REGION, NULL);
    if (!fbox || !rings || !acks || !s->bells || fy_cellq_attach())
        return -EPROTO;
    uint64_t L = fy_shm.lay.nranks;
    s->slots = (uint32_t)fbox->count;
    s->cell_payload = fy_cells.cell_size - FY_CELL_HDR;
    s->fbox_max = fbox_max;
    /* What a peer may legitimately put in one mailbox message. */
    s->fbox_cap = FY_FBOX_MAX_LEN(s->slots);
    s->peers = calloc((size_t)s->P, sizeof(*s->peers));
    s->of = calloc((size_t)s->P, sizeof(*s->of));
    if (!s->peers || !s->of) {
        fy_chan_finalize();
        return -ENOMEM;
    }
    for (int p = 0; p < s->P; p++) {
        struct fy_chan_peer *pe = &s->peers[p];
        int l = fy_chan_local(p);
        pe->rseq = 1;
        if (l < 0) {
            /* Another node: the network channel. The mailbox cursors
             * point at a private ring that never holds a due packet and
             * never has room, so the request-free mailbox paths of p2p
             * fall through to the general path without a test of their
             * own. */
            s->of[p] = net;
            pe->ring_out = pe->ring_in = remote_ring;
            pe->ack_out = pe->ack_in = &remote_ack;
            pe->fb_sent = UINT64_MAX / 2;
            continue;
        }
        s->of[p] = &fy_chan_shm_ops;
        /* Pair [receiver][sender]: its ring and its ack. */
        uint64_t out = (uint64_t)l * L + (uint64_t)s->local_me;
        uint64_t in = (uint64_t)s->local_me * L + (uint64_t)l;
        pe->ring_out = rings + out * s->slots;
        pe->ring_in = rings + in * s->slots;
        pe->ack_out = acks + out;
        pe->ack_in = acks + in;
    }
    if (fy_boot.local_size < s->P) {
        /* Set first: fy_chan_finalize undoes a partial start too. */
        s->net = net;
        int rc =
            net == &fy_chan_ofi_ops ? fy_chan_ofi_init() : fy_chan_tcp_init();
        if (rc) {
            fy_chan_finalize();
            return rc;
        }
    }
    /* Our own queues and cells. */
    s->recvq = fy_cellq_recvq(s->local_me);
    s->freeq = fy_cellq_freeq(s->local_me);
    s->recv_tail = fy_cellq_init(s->recvq);
    s->free_tail = fy_cellq_init(s->freeq);
    uint64_t base = fy_cells_base(s->local_me);
    for (uint32_t i = 0; i < fy_cells.ncells; i++)
        fy_cellq_push(s->freeq, base + (uint64_t)i * fy_cells.cell_size);
    return 0;
}

void fy_chan_finalize(void)
{
    struct fy_chan_state *s = &fy_chan;
    if (s->net == &fy_chan_ofi_ops)
        fy_chan_ofi_finalize();
    else if (s->net)
        fy_chan_tcp_finalize();
    s->net = NULL;
    free(s->peers);
    free(s->of);
    s->peers = NULL;
    s->of = NULL;
}

/* A network channel's wake-up of a sleeping local rank: one byte into the
 * wake pipe that rank published (its fd, opened once through /proc and
 * cached in pokefd[local]; -2 once it cannot be opened, and the rank then
 * sleeps at most 1 ms at a time). */
/* One byte into a rank's wake pipe (EAGAIN: a byte waits already). A rank
 * that has exited (finalize races with a last wake-up) closed the read
 * end: the write then fails with EPIPE, and must not raise SIGPIPE in the
 * application - a program killed by it after printing its result. So
 * SIGPIPE is blocked in this thread for the write, and one it raised is
 * taken back unless it was pending before. */
static void poke_write(int fd)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigset_t pending;
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    char c = 1;
    ssize_t k = write(fd, &c, 1);
    if (k < 0 && errno == EPIPE && !was_pending) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void fy_chan_poke_pipe(int *pokefd, int local)
{
    int fd = pokefd[local];
    if (fd == -1) {
        struct fy_chan_bell *b = &fy_chan.bells[local];
        uint32_t w = atomic_load_explicit(&b->wake_fd, memory_order_relaxed);
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%u", (int)fy_shm.pid[local],
                 w - 1);
        fd = w ? open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1;
        if (fd < 0) {
            FY_INFO("cannot open local rank %d's wake pipe (%s): it sleeps "
                    "at most 1 ms at a time",
                    local, w ? strerror(errno) : "none");
            fd = -2;
            atomic_store_explicit(&b->nopoke, 1, memory_order_relaxed);
        }
        pokefd[local] = fd;
    }
    if (fd >= 0)
        poke_write(fd);
}
