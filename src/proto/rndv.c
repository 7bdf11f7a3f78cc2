/* SPDX-License-Identifier: MIT */
/* Rendezvous for messages above the eager limit. The sender announces the
 * message (RTS: size, address, cookie); the receiver, once a receive
 * matches it, picks the mechanism for this message from its rule table
 * (fy_xfer_active, by the bytes that will move) and:
 * - cma, procmem (one-sided): reads the sender's buffer straight into its
 *   own with one process_vm_readv / pread of /proc/<pid>/mem, answers FIN;
 * - shmbuf, queue, net (two-sided): answers CTS naming the mechanism, and
 *   the sender follows: it fills the two halves of the receiver's pad that
 *   the CTS lends it alternately (a receive waits for a free pad of its
 *   receiver before its CTS goes out; pads are per receiver, so memory
 *   stays O(P)),
 *   or streams DATA cells through the receiver's cell queue, or writes the
 *   bytes to its loopback TCP connection to the receiver.
 * This file drives the movers; each mechanism's data path, per-pair state
 * and connection set-up are its own (xfer/shmbuf.c, queue.c, net.c; the
 * shared single copy in xfer/split.c), and which mechanisms work job-wide
 * is decided in xfer/job.c. The sender never needs the table: it does what the
 * CTS says. The receiver only ever asks for min(message, buffer) bytes, so
 * nothing is written past a receive buffer on any path; a longer message is
 * reported as truncated. RTS is a matched packet and keeps the pair's order;
 * CTS, DATA and FIN are control packets and may overtake, so data always names
 * the receive it is for (cookie) and is checked against it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "chan/shm_inl.h"
#include "p2p/p2p_impl.h"
#include "proto/proto.h"

/* r->xkind of a one-sided pull through the network channel's read. */
#define FY_RNDV_NET_READ FY_XFER_NKINDS

static _Noreturn void bad_peer(int src, const char *what)
{
    fy_fatal(1, "malformed rendezvous packet from rank %d (%s)", src, what);
}

/* The sender's process is gone: the job is being torn down (mpiexec saw it
 * die and is killing the rest). Wait to be killed rather than exit with an
 * error of our own, so the job's status stays the dead rank's. */
static _Noreturn void fy_peer_gone(int src)
{
    FY_INFO("rank %d is gone; waiting for mpiexec to end the job", src);
    for (int i = 0; i < 100; i++)
        usleep(50 * 1000);
    fy_fatal(1, "rank %d died and the job was not ended; exiting", src);
}

/* Send r's RTS is answered (FIN or CTS). */
static void rts_answered(struct fy_req *r)
{
    if (r->rts_owed) {
        r->rts_owed = false;
        fy_p2p.peers[r->wpeer].rts_out--;
    }
}

static void fifo_push(struct fy_req **head, struct fy_req **tail,
                      struct fy_req *r)
{
    r->next = NULL;
    if (*tail)
        (*tail)->next = r;
    else
        *head = r;
    *tail = r;
}

static void fifo_pop(struct fy_req **head, struct fy_req **tail)
{
    *head = (*head)->next;
    if (!*head)
        *tail = NULL;
}

/* Receives waiting for two-sided data from one peer: find one by the
 * cookie the data names, take one out when complete. */
static struct fy_req *rx_find(struct fy_peer *pe, int kind, uint64_t cookie)
{
    for (struct fy_req *r = pe->rx_head[kind]; r; r = r->next)
        if (r->cookie == cookie)
            return r;
    return NULL;
}

static void fifo_unlink(struct fy_req **head, struct fy_req **tail,
                        struct fy_req *r)
{
    struct fy_req *prev = NULL;
    for (struct fy_req *q = *head; q; prev = q, q = q->next) {
        if (q != r)
            continue;
        if (prev)
            prev->next = q->next;
        else
            *head = q->next;
        if (*tail == q)
            *tail = prev;
        q->next = NULL;
        return;
    }
}

static void rx_unlink(struct fy_peer *pe, int kind, struct fy_req *r)
{
    fifo_unlink(&pe->rx_head[kind], &pe->rx_tail[kind], r);
}

static void send_ctl(int peer, uint32_t type, const struct fy_ctl *ctl)
{
    if (fy_pkt_send(peer, type, 0, 0, ctl, NULL))
        fy_fatal(1, "out of memory sending a rendezvous reply to rank %d",
                 peer);
}

uint8_t *fy_rndv_recv_dest(struct fy_req *r, uint64_t want)
{
    if (r->dt->contig || want == 0)
        return r->buf;
    r->pack = malloc(want);
    if (!r->pack)
        fy_fatal(1, "out of memory staging a %llu-byte receive",
                 (unsigned long long)want);
    return r->pack;
}

/* Whether r's read is one a sender would share with us (split.c): cma,
 * large enough. */
static bool big_cma_read(const struct fy_req *r)
{
    return r->xkind == FY_XFER_CMA && fy_xfer_split_min &&
           (uint64_t)(r->total - r->done) >= fy_xfer_split_min;
}

/* Our doorbell's "reading" word (fy_chan_reading_set): the sender of the
 * large cma read under way or first in line, or none. A sender that
 * reads a message of ours meanwhile then copies it alone, at once,
 * instead of cutting it into chunks for us (fy_p2p_sender_busy). */
static int reading_shown = -1;
static void reading_set(int l)
{
    if (l != reading_shown) {
        fy_chan_reading_set(l);
        reading_shown = l;
    }
}

static void reading_show(const struct fy_req *r)
{
    reading_set(r && big_cma_read(r) ? fy_boot_local(r->xsrc) : -1);
}

void fy_rndv_expect(int src)
{
    int l = fy_boot_local(src);
    if (l >= 0)
        reading_set(l);
}

void fy_rndv_expect_end(void)
{
    reading_show(fy_p2p.pull_head);
}

/* One-sided: read the next piece of the sender's buffer into r (the
 * whole message when it is one piece). Returns true when r is finished
 * (FIN sent, request complete). */
static bool pull_step(struct fy_req *r)
{
    uint64_t want = (uint64_t)r->total, off = (uint64_t)r->done;
    uint64_t n = FY_MIN(want - off, FY_PULL_PIECE);
    uint8_t *dest = fy_req_data(r);
    ssize_t got;
    const char *name = "network";
    if (r->xkind == FY_RNDV_NET_READ) {
        /* Another node: the network channel reads the sender's
         * registered buffer (key in xoff). */
        got = fy_chan.net->read(r->xsrc, dest + off, r->xaddr, r->xoff, off, n);
    } else {
        const struct fy_xfer_ops *ops = fy_xfer_registry[r->xkind];
        name = ops->name;
        /* Large CMA reads are shared with the sender when it is in MPI. */
        bool split = r->xkind == FY_XFER_CMA && fy_xfer_split_min &&
                     n >= fy_xfer_split_min && !fy_p2p_sender_busy(r->xsrc);
        fy_proto_stats.split += split;
        got = split ? fy_split_get_piece(r->xsrc, r->peer_cookie, r->xaddr,
                                         dest, off, n)
                    : ops->copy_remote(fy_shm.pid[fy_boot_local(r->xsrc)],
                                       dest + off, r->xaddr + off, n, true);
    }
    if (got == -ESRCH)
        fy_peer_gone(r->xsrc);
    if (got != (ssize_t)n) {
        FY_ERROR("%s read of %llu bytes from rank %d failed: %s", name,
                 (unsigned long long)n, r->xsrc,
                 strerror(got < 0 ? (int)-got : EIO));
        r->err = -EIO;
        r->done = r->total = 0;
        r->st_bytes = 0;
    } else {
        r->done += (MPI_Count)n;
        if (r->done < r->total)
            return false;
    }
    if (r->push_rx) {
        /* Push-Pull: the FIN waits for the pushed bytes too. */
        fy_push_pull_done(r);
        return true;
    }
    struct fy_ctl fin = {.cookie = r->peer_cookie};
    send_ctl(r->xsrc, FY_PKT_FIN, &fin);
    fy_recv_finish(r, (uint64_t)r->done, (uint64_t)r->done);
    return true;
}

/* One-sided: read the sender's buffer from r->done on, then FIN. A
 * message of more than one piece is finished by the progress engine, a
 * piece per pass. */
static void rts_one_sided(struct fy_req *r, int src, const struct fy_ctl *ctl,
                          int kind)
{
    r->xkind = (uint32_t)kind;
    r->xsrc = src;
    r->xaddr = ctl->addr;
    r->xoff = ctl->offset; /* FY_RNDV_NET_READ: the key */
    r->peer_cookie = ctl->cookie;
    /* Matched inside MPI_Irecv (an unexpected RTS, or one its drain took)
     * while the sender waits for a message of ours too (an exchange), or
     * just before a large send of ours goes out: the read waits for the
     * next progress pass, so our message goes out before our copy, not
     * after it, and the two reads overlap instead of following each other
     * (bench/README.md, "Exchanges"). A sender that only waits for us to
     * read (MPI_Irecv, then computing, then MPI_Wait) is read at once. */
    struct fy_p2p_state *s = &fy_p2p;
    if (!s->defer_pull ||
        (s->defer_pull == FY_DEFER_WAITED && !fy_p2p_sender_waits(src))) {
        reading_show(r);
        bool done = pull_step(r);
        if (done) {
            reading_show(s->pull_head);
            return;
        }
    }
    r->proto = FY_RP_PULL;
    s->nrx++;
    fifo_push(&s->pull_head, &s->pull_tail, r);
    reading_show(s->pull_head);
}

/* The next piece of the oldest long one-sided receive. */
static int pull_progress(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_req *r = s->pull_head;
    if (!r || s->defer_pull)
        return 0;
    if (pull_step(r)) {
        fifo_pop(&s->pull_head, &s->pull_tail);
        s->nrx--;
        reading_show(s->pull_head);
    }
    return 1;
}

/* Lend pad 'pad' to matched receive r and tell its sender (CTS: addr =
 * mechanism | pad << 8). Both halves of a free pad are empty. */
static void rx_shmbuf_start(struct fy_req *r, uint32_t pad)
{
    struct fy_peer *pe = &fy_p2p.peers[r->xsrc];
    r->xpad = pad;
    r->xhalf = 0;
    fifo_push(&pe->rx_head[FY_XFER_SHMBUF], &pe->rx_tail[FY_XFER_SHMBUF], r);
    struct fy_ctl cts = {.total = (uint64_t)r->total,
                         .addr = FY_XFER_SHMBUF | (uint64_t)pad << 8 |
                                 r->xoff << 16,
                         .cookie = r->peer_cookie,
                         .offset = r->cookie};
    send_ctl(r->xsrc, FY_PKT_CTS, &cts);
}

/* A shmbuf receive finished with its pad: lend it to the oldest receive
 * waiting for one, or put it back. */
static void rx_pad_release(uint32_t pad)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_req *w = s->pad_wait_head;
    if (w) {
        fifo_pop(&s->pad_wait_head, &s->pad_wait_tail);
        rx_shmbuf_start(w, pad);
        return;
    }
    s->pad_free[s->npad_free++] = pad;
}

int fy_proto_rndv_send(struct fy_req *r)
{
    r->cookie = fy_cookie_new(r);
    struct fy_ctl ctl = {.total = (uint64_t)r->bytes,
                         .addr = (uint64_t)(uintptr_t)fy_req_data(r),
                         .cookie = r->cookie};
    return fy_pkt_send(r->wpeer, FY_PKT_RTS, r->tag, r->ctx, &ctl, r);
}

void fy_rndv_on_rts(struct fy_req *r, const struct fy_pkt *p)
{
    uint64_t total = p->ctl.total;
    uint64_t want = FY_MIN(total, fy_req_capacity(r));
    r->st_source = fy_comm_rank_of(r->comm, p->src);
    r->st_tag = p->tag;
    if (p->src == fy_p2p.me)
        bad_peer(p->src, "rendezvous to self");
    fy_rndv_recv_dest(r, want);
    fy_rndv_pull_rest(r, p->src, &p->ctl, 0, want, total);
}

void fy_rndv_pull_rest(struct fy_req *r, int src, const struct fy_ctl *ctl,
                       uint64_t from, uint64_t want, uint64_t total)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint64_t n = want - from;
    bool push = r->push_rx;
    /* From another node: streamed through the network channel as DATA
     * packets (the queue mover's chunks), never a single-copy mechanism. */
    int kind = fy_chan_remote(src) ? FY_XFER_QUEUE
                                   : fy_xfer_table_pick(&fy_xfer_active, want);
    /* Unless the network channel can read the sender's buffer: its RTS
     * then carries a key (ctl.offset, set by the channel; PUSH has none). */
    bool net_read = fy_chan_remote(src) && !push && ctl->offset &&
                    fy_chan.net->read && from == 0;
    if (total > want)
        r->err = -EMSGSIZE; /* reported when the transfer completes */
    if (net_read) {
        fy_proto_count(FY_STAT_RNDV_GET, n);
        r->total = (MPI_Count)want;
        r->done = 0;
        rts_one_sided(r, src, ctl, FY_RNDV_NET_READ);
        return;
    }
    fy_proto_count_xfer(kind, n);
    if (fy_xfer_registry[kind]->one_sided) {
        fy_proto_count(push ? FY_STAT_PULL : FY_STAT_RNDV_GET, n);
        s->peers[src].read_in = s->matching_late ? want : 0;
        r->total = (MPI_Count)want;
        r->done = (MPI_Count)from;
        rts_one_sided(r, src, ctl, kind);
        return;
    }
    fy_proto_count(push ? FY_STAT_PULL : FY_STAT_RNDV_PUT, n);
    /* The sender's stream ends its send: no FIN. */
    r->push_fin = false;
    /* Two-sided: the mover moves bytes [from, want) as a message of its
     * own (r->xoff on both sides). CTS: total = bytes to send, addr =
     * mechanism | pad << 8 | from << 16, cookie = the sender's, offset =
     * ours (data names it). */
    r->xoff = from;
    r->total = (MPI_Count)n;
    r->done = 0;
    struct fy_ctl cts = {
        .total = n, .addr = (uint64_t)kind | from << 16, .cookie = ctl->cookie};
    if (n == 0) {
        send_ctl(src, FY_PKT_CTS, &cts);
        if (push)
            fy_push_pull_done(r);
        else
            fy_recv_finish(r, 0, total);
        return;
    }
    r->cookie = fy_cookie_new(r);
    r->peer_cookie = ctl->cookie;
    r->xsrc = src;
    r->proto = FY_RP_RX;
    s->nrx++;
    if (kind == FY_XFER_SHMBUF) {
        if (!s->npad_free) {
            /* Every pad is lent: the CTS waits for one (rx_pad_release). */
            fifo_push(&s->pad_wait_head, &s->pad_wait_tail, r);
            return;
        }
        rx_shmbuf_start(r, s->pad_free[--s->npad_free]);
        return;
    }
    cts.offset = r->cookie;
    if (kind != FY_XFER_QUEUE) {
        struct fy_peer *pe = &s->peers[src];
        fifo_push(&pe->rx_head[kind], &pe->rx_tail[kind], r);
    }
    send_ctl(src, FY_PKT_CTS, &cts);
}

void fy_rndv_on_cts(const struct fy_pkt *p)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_SEND);
    if (!r || r->proto != FY_RP_RTS_SENT || r->wpeer != p->src)
        bad_peer(p->src, "CTS for no pending send");
    rts_answered(r);
    if (p->ctl.total > (uint64_t)r->bytes)
        bad_peer(p->src, "CTS asks for more than the message");
    uint64_t kind = p->ctl.addr & 0xff, pad = (p->ctl.addr >> 8) & 0xff;
    uint64_t from = p->ctl.addr >> 16;
    if (from > (uint64_t)r->bytes || p->ctl.total > (uint64_t)r->bytes - from)
        bad_peer(p->src, "CTS asks for bytes past the message");
    if ((kind != FY_XFER_SHMBUF && kind != FY_XFER_QUEUE &&
         kind != FY_XFER_NET) ||
        !(fy_xfer_avail & (1u << kind)))
        bad_peer(p->src, "CTS names a mechanism this job does not have");
    if (kind == FY_XFER_SHMBUF ? pad >= fy_xfer_shm.npads : pad != 0)
        bad_peer(p->src, "CTS names a double buffer the receiver lacks");
    r->xpad = (uint32_t)pad;
    r->xhalf = 0;
    r->xoff = from;
    r->total = (MPI_Count)p->ctl.total;
    r->peer_cookie = p->ctl.offset;
    r->done = 0;
    if (r->total == 0) {
        fy_cookie_drop(r->cookie);
        fy_send_done(r);
        return;
    }
    r->proto = FY_RP_TX;
    struct fy_peer *pe = &s->peers[p->src];
    fifo_push(&pe->tx_head[kind], &pe->tx_tail[kind], r);
    s->ntx++;
}

void fy_rndv_on_fin(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_SEND);
    if (!r || r->wpeer != p->src ||
        (r->proto != FY_RP_RTS_SENT && r->proto != FY_RP_SYNC_WAIT))
        bad_peer(p->src, "FIN for no pending send");
    fy_rndv_send_over(r);
    fy_send_done(r);
}

void fy_rndv_send_over(struct fy_req *r)
{
    rts_answered(r);
    fy_cookie_drop(r->cookie);
}

static void rx_done(struct fy_req *r)
{
    fy_p2p.nrx--;
    fy_cookie_drop(r->cookie);
    if (r->push_rx)
        fy_push_pull_done(r);
    else
        fy_recv_finish(r, (uint64_t)r->done, (uint64_t)r->done);
}

/* Where a two-sided mover reads or writes r's bytes. */
static uint8_t *mover_data(const struct fy_req *r)
{
    return fy_req_data(r) + r->xoff;
}

/* Already in place (read there by the network channel: fy_rndv_steer). */
static void copy_none(void *dst, const void *src, size_t len)
{
    (void)dst;
    (void)src;
    (void)len;
}

uint8_t *fy_rndv_steer(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    uint64_t done = r ? (uint64_t)r->done : 0;
    if (!r || r->proto != FY_RP_RX || p->ctl.offset != done ||
        p->len > (uint64_t)r->total - done)
        return NULL; /* fy_rndv_on_data will say what is wrong */
    return mover_data(r) + done;
}

void fy_rndv_on_data(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    if (!r || r->proto != FY_RP_RX)
        bad_peer(p->src, "DATA for no pending receive");
    /* The queue mover's receiving half (xfer/queue.c) checks that the
     * cell holds the next bytes of this receive before copying. */
    struct fy_queue_xfer x = {
        .payload =
            fy_chan_remote(p->src) ? fy_chan.net->chunk : fy_chan.cell_payload,
        .len = (uint64_t)r->total,
        .cookie = r->cookie,
        .copy =
            p->data == mover_data(r) + r->done ? copy_none : fy_xfer_copy_libc};
    struct fy_queue_chunk ch = {.cookie = p->ctl.cookie,
                                .offset = p->ctl.offset,
                                .len = p->len,
                                .data = p->data};
    uint64_t done = (uint64_t)r->done;
    if (fy_xfer_queue_take(&x, &ch, mover_data(r), &done))
        bad_peer(p->src, "DATA outside the receive");
    r->done = (MPI_Count)done;
    if (r->done == r->total)
        rx_done(r);
}

/* ---- pipelined movers ---------------------------------------------------- */

static void tx_done(struct fy_peer *pe, int kind, struct fy_req *r)
{
    fifo_unlink(&pe->tx_head[kind], &pe->tx_tail[kind], r);
    fy_p2p.ntx--;
    fy_cookie_drop(r->cookie);
    fy_send_done(r);
}

/* The double-buffer transfer of rendezvous r through pad r->xpad of
 * 'receiver' (xfer/shmbuf.c moves the bytes). */
static struct fy_shmbuf_xfer sb_xfer(const struct fy_req *r, int receiver,
                                     uint64_t cookie)
{
    /* At least four chunks per message (down to 4 KiB) so a message that
     * fits one half still overlaps the sender's copy-in with the
     * receiver's copy-out. */
    uint64_t pipe = FY_MAX((uint64_t)r->total / 4, (uint64_t)4096);
    return (struct fy_shmbuf_xfer){
        .pad = fy_xfer_shmbuf_pad(fy_boot_local(receiver), r->xpad),
        .half_size = fy_p2p.shmbuf_size,
        .len = (uint64_t)r->total,
        .chunk = FY_MIN(fy_p2p.shmbuf_size, FY_ALIGN_UP(pipe, (uint64_t)64)),
        .cookie = cookie,
        .copy = fy_xfer_copy_libc};
}

/* Fill the free halves of every pad this peer lent us, one message per
 * pad, each in its own order. */
static int tx_shmbuf(int peer, struct fy_peer *pe)
{
    int n = 0;
    struct fy_req *next;
    for (struct fy_req *r = pe->tx_head[FY_XFER_SHMBUF]; r; r = next) {
        next = r->next;
        struct fy_shmbuf_xfer x = sb_xfer(r, peer, r->peer_cookie);
        uint64_t done = (uint64_t)r->done;
        int k = fy_xfer_shmbuf_push(&x, &r->xhalf, mover_data(r), &done);
        r->done = (MPI_Count)done;
        if (k) {
            fy_wake(peer);
            n += k;
        }
        if (r->done == r->total)
            tx_done(pe, FY_XFER_SHMBUF, r);
    }
    return n;
}

/* Drain the full halves of our pads lent to this peer. The length and the
 * cookie of each half are checked before a byte is copied. */
static int rx_shmbuf(int peer, struct fy_peer *pe)
{
    int n = 0;
    struct fy_req *next;
    for (struct fy_req *r = pe->rx_head[FY_XFER_SHMBUF]; r; r = next) {
        next = r->next;
        struct fy_shmbuf_xfer x = sb_xfer(r, fy_p2p.me, r->cookie);
        uint64_t done = (uint64_t)r->done;
        int k = fy_xfer_shmbuf_pull(&x, &r->xhalf, mover_data(r), &done);
        if (k < 0)
            bad_peer(peer, "double-buffer chunk");
        r->done = (MPI_Count)done;
        if (k) {
            fy_wake(peer);
            n += k;
        }
        if (r->done == r->total) {
            rx_unlink(pe, FY_XFER_SHMBUF, r);
            rx_pad_release(r->xpad);
            rx_done(r);
        }
    }
    return n;
}

static void wake_peer(int peer)
{
    fy_wake(peer);
}

/* The cell-queue transfer of rendezvous r to 'receiver' (xfer/queue.c
 * moves the bytes): DATA cells from our free queue, each taking the pair's
 * next sequence number, naming the receiver's cookie. */
static struct fy_queue_xfer q_xfer(const struct fy_req *r, int receiver,
                                   struct fy_peer *pe)
{
    struct fy_cellq *recvq = fy_cellq_recvq(fy_boot_local(receiver));
    return (struct fy_queue_xfer){.freeq = fy_chan.freeq,
                                  .free_tail = &fy_chan.free_tail,
                                  .recvq = recvq,
                                  .seq_io = &fy_chan.peers[receiver].sseq,
                                  .posted = wake_peer,
                                  .peer = receiver,
                                  .src = (uint32_t)fy_chan.local_me,
                                  .type = FY_PKT_DATA,
                                  .payload = fy_chan.cell_payload,
                                  .len = (uint64_t)r->total,
                                  .cookie = r->peer_cookie,
                                  .copy = fy_xfer_copy_libc};
}

/* The queue mover's chunks to a rank of another node: DATA packets
 * through the network channel, as many as it takes now. */
static int tx_chan(int peer, struct fy_peer *pe)
{
    int n = 0;
    struct fy_req *r;
    const struct fy_chan_ops *ch = fy_chan.of[peer];
    while ((r = pe->tx_head[FY_XFER_QUEUE])) {
        while (r->done < r->total) {
            uint64_t off = (uint64_t)r->done;
            uint64_t len = FY_MIN(ch->chunk, (uint64_t)r->total - off);
            struct fy_ctl ctl = {.total = (uint64_t)r->total,
                                 .cookie = r->peer_cookie,
                                 .offset = off};
            if (!ch->try_send(peer, FY_PKT_DATA, 0, 0, &ctl,
                              mover_data(r) + off, len))
                return n;
            r->done += (MPI_Count)len;
            n++;
        }
        tx_done(pe, FY_XFER_QUEUE, r);
    }
    return n;
}

static int tx_queue(int peer, struct fy_peer *pe)
{
    if (fy_chan_remote(peer))
        return tx_chan(peer, pe);
    int n = 0;
    struct fy_req *r;
    while ((r = pe->tx_head[FY_XFER_QUEUE])) {
        struct fy_queue_xfer x = q_xfer(r, peer, pe);
        uint64_t done = (uint64_t)r->done;
        int k = fy_xfer_queue_push(&x, mover_data(r), &done);
        r->done = (MPI_Count)done;
        n += k;
        if (r->done < r->total)
            break; /* out of cells */
        tx_done(pe, FY_XFER_QUEUE, r);
    }
    return n;
}

/* ---- net: per-pair TCP streams on loopback (xfer/net.c) --------------------
 * The sender writes each message in CTS arrival order; the stream names
 * the receive it is for by the receiver's cookie, checked here against the
 * receives waiting for net data from that peer. After moving bytes either
 * side rings the other's doorbell; a rank about to sleep asks whether a
 * socket is ready (fy_xfer_net_visible). */

static _Noreturn void net_fail(int peer, const char *what, int err)
{
    if (err == -EPIPE || err == -ECONNRESET)
        fy_peer_gone(peer);
    fy_fatal(1, "%s rank %d over loopback TCP failed: %s", what, peer,
             strerror(-err));
}

static int tx_net(int peer, struct fy_peer *pe)
{
    int n = 0;
    struct fy_req *r;
    while ((r = pe->tx_head[FY_XFER_NET])) {
        uint64_t done = (uint64_t)r->done;
        int k = fy_xfer_net_push(peer, r->peer_cookie, mover_data(r),
                                 (uint64_t)r->total, &done);
        if (k < 0)
            net_fail(peer, "sending to", k);
        r->done = (MPI_Count)done;
        n += k;
        if (r->done < r->total)
            break; /* the socket is full */
        tx_done(pe, FY_XFER_NET, r);
    }
    if (n)
        fy_wake(peer);
    return n;
}

static int rx_net(int peer, struct fy_peer *pe)
{
    int n = 0;
    while (pe->rx_head[FY_XFER_NET]) {
        struct fy_req *r = pe->net_rx_cur;
        if (!r) {
            uint64_t cookie, len;
            int k = fy_xfer_net_pull_hdr(peer, &cookie, &len);
            if (k < 0)
                net_fail(peer, "receiving from", k);
            if (k == 0)
                break;
            n++;
            r = rx_find(pe, FY_XFER_NET, cookie);
            if (!r || r->done != 0 || len != (uint64_t)r->total)
                bad_peer(peer, "net stream header");
            pe->net_rx_cur = r;
        }
        uint64_t done = (uint64_t)r->done;
        int k =
            fy_xfer_net_pull(peer, mover_data(r), (uint64_t)r->total, &done);
        if (k < 0)
            net_fail(peer, "receiving from", k);
        r->done = (MPI_Count)done;
        n += k;
        if (r->done < r->total)
            break;
        pe->net_rx_cur = NULL;
        rx_unlink(pe, FY_XFER_NET, r);
        rx_done(r);
    }
    if (n)
        fy_wake(peer);
    return n;
}

/* ---- progress ---------------------------------------------------------------
 */

int fy_rndv_progress(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = pull_progress();
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (pe->tx_head[FY_XFER_SHMBUF])
            n += tx_shmbuf(p, pe);
        if (pe->tx_head[FY_XFER_QUEUE])
            n += tx_queue(p, pe);
        if (pe->tx_head[FY_XFER_NET])
            n += tx_net(p, pe);
        if (pe->rx_head[FY_XFER_SHMBUF])
            n += rx_shmbuf(p, pe);
        if (pe->rx_head[FY_XFER_NET])
            n += rx_net(p, pe);
    }
    return n;
}

bool fy_rndv_work_visible(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    if (!s->ntx && !s->nrx)
        return false;
    if (s->pull_head)
        return true;
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (pe->tx_head[FY_XFER_QUEUE] && fy_chan_remote(p)) {
            if (fy_chan.of[p]->writable(p))
                return true;
        } else if (pe->tx_head[FY_XFER_QUEUE]) {
            struct fy_queue_xfer x = q_xfer(pe->tx_head[FY_XFER_QUEUE], p, pe);
            if (fy_xfer_queue_ready(&x))
                return true;
        }
        for (struct fy_req *r = pe->tx_head[FY_XFER_SHMBUF]; r; r = r->next) {
            struct fy_shmbuf_xfer x = sb_xfer(r, p, r->peer_cookie);
            if (fy_xfer_shmbuf_ready(&x, r->xhalf, true))
                return true;
        }
        for (struct fy_req *r = pe->rx_head[FY_XFER_SHMBUF]; r; r = r->next) {
            struct fy_shmbuf_xfer x = sb_xfer(r, s->me, r->cookie);
            if (fy_xfer_shmbuf_ready(&x, r->xhalf, false))
                return true;
        }
    }
    return (fy_xfer_avail & (1u << FY_XFER_NET)) && fy_xfer_net_visible();
}

/* ---- start-up and shut-down
 * -------------------------------------------------- */

int fy_rndv_init(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint32_t npads = fy_xfer_shm.npads;
    s->pad_free = malloc(npads * sizeof(*s->pad_free));
    if (!s->pad_free)
        return -ENOMEM;
    for (uint32_t i = 0; i < npads; i++)
        s->pad_free[i] = npads - 1 - i; /* pad 0 lent first */
    s->npad_free = npads;
    /* Which mechanisms work job-wide, and rank 0's rule table. */
    return fy_xfer_job_init(s->me, s->P, fy_boot.jobid, s->push_cap);
}

void fy_rndv_finalize(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    fy_xfer_job_finalize();
    free(s->pad_free);
    s->pad_free = NULL;
}
