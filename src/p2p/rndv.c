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
 * The sender never needs the table: it does what the CTS says. The
 * receiver only ever asks for min(message, buffer) bytes, so nothing is
 * written past a receive buffer on any path; a longer message is reported
 * as truncated. RTS is a matched packet and keeps the pair's order; CTS,
 * DATA and FIN are control packets and may overtake, so data always names
 * the receive it is for (cookie) and is checked against it. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "p2p/p2p_impl.h"
#include "proto/proto.h"
#include "shm/cellq_inl.h"

static_assert(FY_SHM_XFER_RULES == FY_XFER_RULES_MAX,
              "the shared rank record holds a whole rule table");

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

static void *recv_dest(struct fy_req *r, uint64_t want)
{
    if (r->dt->contig || want == 0)
        return r->buf;
    r->pack = malloc(want);
    if (!r->pack)
        fy_fatal(1, "out of memory staging a %llu-byte receive",
                 (unsigned long long)want);
    return r->pack;
}

/* One-sided: read the next piece of the sender's buffer into r (the
 * whole message when it is one piece). Returns true when r is finished
 * (FIN sent, request complete). */
static bool pull_step(struct fy_req *r)
{
    const struct fy_xfer_ops *ops = fy_xfer_registry[r->xkind];
    uint64_t want = (uint64_t)r->total, off = (uint64_t)r->done;
    uint64_t n = FY_MIN(want - off, FY_PULL_PIECE);
    uint8_t *dest = fy_req_data(r);
    /* Large CMA reads are shared with the sender when it is in MPI. */
    bool split =
        r->xkind == FY_XFER_CMA && fy_p2p.split_min && n >= fy_p2p.split_min;
    fy_proto_stats.split += split;
    ssize_t got = split ? fy_split_get_piece(r->xsrc, r->peer_cookie, r->xaddr,
                                             dest, off / FY_PULL_PIECE, n)
                        : ops->copy_remote(fy_shm.pid[r->xsrc], dest + off,
                                           r->xaddr + off, n, true);
    if (got == -ESRCH)
        fy_peer_gone(r->xsrc);
    if (got != (ssize_t)n) {
        FY_ERROR("%s read of %llu bytes from rank %d failed: %s", ops->name,
                 (unsigned long long)n, r->xsrc,
                 strerror(got < 0 ? (int)-got : EIO));
        r->err = -EIO;
        r->done = r->total = 0;
    } else {
        r->done += (MPI_Count)n;
        if (r->done < r->total)
            return false;
    }
    struct fy_ctl fin = {.cookie = r->peer_cookie};
    send_ctl(r->xsrc, FY_PKT_FIN, &fin);
    fy_recv_finish(r, (uint64_t)r->done, (uint64_t)r->done);
    return true;
}

/* One-sided: read the sender's buffer, then FIN. A message of more than
 * one piece is finished by the progress engine, a piece per pass. */
static void rts_one_sided(struct fy_req *r, const struct fy_pkt *p, int kind,
                          uint64_t want, uint64_t total)
{
    recv_dest(r, want);
    if (total > want)
        r->err = -EMSGSIZE; /* reported when the transfer completes */
    r->xkind = (uint32_t)kind;
    r->xsrc = p->src;
    r->xaddr = p->ctl.addr;
    r->peer_cookie = p->ctl.cookie;
    if (pull_step(r))
        return;
    r->proto = FY_RP_PULL;
    fy_p2p.nrx++;
    fifo_push(&fy_p2p.pull_head, &fy_p2p.pull_tail, r);
}

/* The next piece of the oldest long one-sided receive. */
static int pull_progress(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_req *r = s->pull_head;
    if (!r)
        return 0;
    if (pull_step(r)) {
        fifo_pop(&s->pull_head, &s->pull_tail);
        s->nrx--;
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
                         .addr = FY_XFER_SHMBUF | (uint64_t)pad << 8,
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

void fy_rndv_on_rts(struct fy_req *r, const struct fy_pkt *p)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint64_t total = p->ctl.total;
    uint64_t want = FY_MIN(total, fy_req_capacity(r));
    r->st_source = fy_comm_rank_of(r->comm, p->src);
    r->st_tag = p->tag;
    r->total = (MPI_Count)want;
    r->done = 0;
    if (p->src == s->me)
        bad_peer(p->src, "rendezvous to self");
    int kind = fy_xfer_table_pick(&fy_xfer_active, want);
    fy_proto_count_xfer(kind, want);
    if (fy_xfer_registry[kind]->one_sided) {
        fy_proto_count(FY_PROTO_RNDV_GET, want);
        rts_one_sided(r, p, kind, want, total);
        return;
    }
    fy_proto_count(FY_PROTO_RNDV_PUT, want);
    recv_dest(r, want);
    /* CTS: total = bytes to send, addr = mechanism, cookie = the sender's,
     * offset = ours (data names it). */
    struct fy_ctl cts = {
        .total = want, .addr = (uint64_t)kind, .cookie = p->ctl.cookie};
    if (want == 0) {
        send_ctl(p->src, FY_PKT_CTS, &cts);
        fy_recv_finish(r, 0, total);
        return;
    }
    if (total > want)
        r->err = -EMSGSIZE; /* reported when the transfer completes */
    r->cookie = fy_cookie_new(r);
    r->peer_cookie = p->ctl.cookie;
    r->xsrc = p->src;
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
        struct fy_peer *pe = &s->peers[p->src];
        fifo_push(&pe->rx_head[kind], &pe->rx_tail[kind], r);
    }
    send_ctl(p->src, FY_PKT_CTS, &cts);
}

void fy_rndv_on_cts(const struct fy_pkt *p)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_SEND);
    if (!r || r->proto != FY_RP_RTS_SENT || r->wpeer != p->src)
        bad_peer(p->src, "CTS for no pending send");
    if (p->ctl.total > (uint64_t)r->bytes)
        bad_peer(p->src, "CTS asks for more than the message");
    uint64_t kind = p->ctl.addr & 0xff, pad = p->ctl.addr >> 8;
    if ((kind != FY_XFER_SHMBUF && kind != FY_XFER_QUEUE &&
         kind != FY_XFER_NET) ||
        !(fy_xfer_avail & (1u << kind)))
        bad_peer(p->src, "CTS names a mechanism this job does not have");
    if (kind == FY_XFER_SHMBUF ? pad >= fy_shm.lay.npads : pad != 0)
        bad_peer(p->src, "CTS names a double buffer the receiver lacks");
    r->xpad = (uint32_t)pad;
    r->xhalf = 0;
    r->total = (MPI_Count)p->ctl.total;
    r->peer_cookie = p->ctl.offset;
    r->done = 0;
    if (r->total == 0) {
        fy_cookie_drop(r->cookie);
        fy_req_complete(r);
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
    fy_cookie_drop(r->cookie);
    fy_req_complete(r);
}

static void rx_done(struct fy_req *r)
{
    fy_p2p.nrx--;
    fy_cookie_drop(r->cookie);
    fy_recv_finish(r, (uint64_t)r->done, (uint64_t)r->done);
}

void fy_rndv_on_data(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    if (!r || r->proto != FY_RP_RX)
        bad_peer(p->src, "DATA for no pending receive");
    if (p->ctl.offset != (uint64_t)r->done ||
        p->len > (uint64_t)(r->total - r->done))
        bad_peer(p->src, "DATA outside the receive");
    memcpy(fy_req_data(r) + r->done, p->data, p->len);
    r->done += (MPI_Count)p->len;
    if (r->done == r->total)
        rx_done(r);
}

/* ---- pipelined movers ---------------------------------------------------- */

static void tx_done(struct fy_peer *pe, int kind, struct fy_req *r)
{
    fifo_unlink(&pe->tx_head[kind], &pe->tx_tail[kind], r);
    fy_p2p.ntx--;
    fy_cookie_drop(r->cookie);
    fy_req_complete(r);
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
        .pad = fy_shmbuf_pad(receiver, r->xpad),
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
        int k = fy_xfer_shmbuf_push(&x, &r->xhalf, fy_req_data(r), &done);
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
        int k = fy_xfer_shmbuf_pull(&x, &r->xhalf, fy_req_data(r), &done);
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

static int tx_queue(int peer, struct fy_peer *pe)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = 0;
    while (pe->tx_head[FY_XFER_QUEUE]) {
        struct fy_req *r = pe->tx_head[FY_XFER_QUEUE];
        uint64_t off = fy_cell_get();
        if (!off)
            break;
        struct fy_cell *c = fy_shm_ptr(off);
        uint64_t chunk =
            FY_MIN(s->cell_payload, (uint64_t)(r->total - r->done));
        memcpy((uint8_t *)c + FY_CELL_HDR, fy_req_data(r) + r->done, chunk);
        c->src = (uint32_t)s->me;
        c->type = FY_PKT_DATA;
        c->seq = ++pe->sseq;
        c->tag = 0;
        c->ctx = 0;
        c->len = chunk;
        c->total = (uint64_t)r->total;
        c->addr = 0;
        c->cookie = r->peer_cookie;
        c->offset = (uint64_t)r->done;
        fy_cell_post(peer, off);
        r->done += (MPI_Count)chunk;
        n++;
        if (r->done == r->total)
            tx_done(pe, FY_XFER_QUEUE, r);
    }
    return n;
}

/* ---- net: per-pair TCP streams on loopback ----------------------------------
 * Each rank listens on an ephemeral 127.0.0.1 port (published in its rank
 * record with a random key). A sender connects to a receiver's listener the
 * first time a CTS puts a message on net, says who it is (hello: ranks,
 * the receiver's key, the job id), and from then on writes, for each
 * message in CTS arrival order, a header (receiver's cookie, length) and
 * exactly the bytes the CTS asked for. The receiver accepts only when it
 * has net receives pending, reads exactly one header, then exactly that
 * many bytes into the receive it names: the next message's bytes stay in
 * the socket. Every socket is non-blocking; partial reads and writes
 * resume on the next progress pass; after moving bytes either side rings
 * the other's doorbell, and a rank about to sleep polls its sockets. */

#define NET_PENDING_MAX 64

struct net_pending {
    int fd;
    uint32_t got; /* bytes of the hello read so far */
    struct fy_xfer_net_hello hello;
};

static int net_lfd = -1;
static uint64_t net_key;
static struct net_pending net_pend[NET_PENDING_MAX];
static int net_npend;
static bool net_need_accept; /* a net receive waits for its sender to connect */
static struct pollfd *net_pfds;

static _Noreturn void net_fail(int peer, const char *what, ssize_t err)
{
    if (err == -EPIPE || err == -ECONNRESET)
        fy_peer_gone(peer);
    fy_fatal(1, "%s rank %d over loopback TCP failed: %s", what, peer,
             strerror((int)-err));
}

static int tx_net(int peer, struct fy_peer *pe)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = 0;
    if (pe->net_out < 0) {
        uint32_t port = fy_shm.ranks[peer].net_port;
        int rc = port && port <= 65535
                     ? fy_xfer_net_connect((uint16_t)port, &pe->net_out)
                     : -ENOTCONN;
        if (rc)
            net_fail(peer, "connecting to", rc);
        pe->net_hello_sent = 0;
        n++;
    }
    struct fy_xfer_net_hello hello;
    fy_xfer_net_hello_make(&hello, (uint32_t)s->me, (uint32_t)peer,
                           fy_shm.ranks[peer].net_key, fy_boot.jobid);
    while (pe->net_hello_sent < sizeof(hello)) {
        struct iovec v = {(char *)&hello + pe->net_hello_sent,
                          sizeof(hello) - pe->net_hello_sent};
        ssize_t k = fy_xfer_net_send(pe->net_out, &v, 1);
        if (k == -EAGAIN)
            return n;
        if (k < 0)
            net_fail(peer, "sending to", k);
        pe->net_hello_sent += (uint32_t)k;
    }
    struct fy_req *r;
    while ((r = pe->tx_head[FY_XFER_NET])) {
        struct fy_net_hdr h = {.cookie = r->peer_cookie,
                               .len = (uint64_t)r->total};
        struct iovec v[2];
        int iv = 0;
        if (pe->net_hdr_sent < sizeof(h))
            v[iv++] = (struct iovec){(char *)&h + pe->net_hdr_sent,
                                     sizeof(h) - pe->net_hdr_sent};
        v[iv++] = (struct iovec){(void *)(fy_req_data(r) + r->done),
                                 (size_t)(r->total - r->done)};
        ssize_t k = fy_xfer_net_send(pe->net_out, v, iv);
        if (k == -EAGAIN)
            break;
        if (k < 0)
            net_fail(peer, "sending to", k);
        n++;
        if (pe->net_hdr_sent < sizeof(h)) {
            uint32_t hk =
                (uint32_t)FY_MIN((uint64_t)k, sizeof(h) - pe->net_hdr_sent);
            pe->net_hdr_sent += hk;
            k -= hk;
        }
        r->done += (MPI_Count)k;
        if (r->done == r->total) {
            pe->net_hdr_sent = 0;
            tx_done(pe, FY_XFER_NET, r);
        }
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
            ssize_t k = fy_xfer_net_recv(
                pe->net_in, (char *)&pe->net_hdr_in + pe->net_hdr_got,
                sizeof(pe->net_hdr_in) - pe->net_hdr_got);
            if (k == -EAGAIN)
                break;
            if (k < 0)
                net_fail(peer, "receiving from", k);
            n++;
            pe->net_hdr_got += (uint32_t)k;
            if (pe->net_hdr_got < sizeof(pe->net_hdr_in))
                continue;
            pe->net_hdr_got = 0;
            r = rx_find(pe, FY_XFER_NET, pe->net_hdr_in.cookie);
            if (!r || r->done != 0 || pe->net_hdr_in.len != (uint64_t)r->total)
                bad_peer(peer, "net stream header");
            pe->net_rx_cur = r;
        }
        ssize_t k = fy_xfer_net_recv(pe->net_in, fy_req_data(r) + r->done,
                                     (size_t)(r->total - r->done));
        if (k == -EAGAIN)
            break;
        if (k < 0)
            net_fail(peer, "receiving from", k);
        n++;
        r->done += (MPI_Count)k;
        if (r->done == r->total) {
            pe->net_rx_cur = NULL;
            rx_unlink(pe, FY_XFER_NET, r);
            rx_done(r);
        }
    }
    if (n)
        fy_wake(peer);
    return n;
}

static void net_pending_drop(int i)
{
    close(net_pend[i].fd);
    net_pend[i] = net_pend[--net_npend];
}

/* Take connections waiting on our listener and learn who they are. */
static int net_accept(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = 0, fd;
    while (fy_xfer_net_accept(net_lfd, &fd) == 0) {
        if (net_npend == NET_PENDING_MAX) {
            FY_WARN("too many unidentified loopback connections; dropping one");
            net_pending_drop(0);
        }
        net_pend[net_npend++] = (struct net_pending){.fd = fd};
        n++;
    }
    for (int i = 0; i < net_npend;) {
        struct net_pending *q = &net_pend[i];
        ssize_t k = fy_xfer_net_recv(q->fd, (char *)&q->hello + q->got,
                                     sizeof(q->hello) - q->got);
        if (k == -EAGAIN) {
            i++;
            continue;
        }
        if (k < 0) {
            net_pending_drop(i);
            continue;
        }
        n++;
        q->got += (uint32_t)k;
        if (q->got < sizeof(q->hello))
            continue;
        int src = fy_xfer_net_hello_check(
            &q->hello, (uint32_t)s->me, (uint32_t)s->P, net_key, fy_boot.jobid);
        if (src < 0 || s->peers[src].net_in >= 0) {
            FY_WARN("rejected a loopback connection that is not from a rank "
                    "of this job (%s)",
                    src == -EPROTO ? "not Ferry"
                    : src < 0      ? "wrong key or job"
                                   : "duplicate");
            net_pending_drop(i);
            continue;
        }
        s->peers[src].net_in = q->fd;
        net_pend[i] = net_pend[--net_npend];
    }
    return n;
}

/* Would a net step make progress now? Called before sleeping only. */
static bool net_visible(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    nfds_t n = 0;
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (pe->tx_head[FY_XFER_NET]) {
            if (pe->net_out < 0)
                return true; /* can connect right away */
            net_pfds[n++] =
                (struct pollfd){.fd = pe->net_out, .events = POLLOUT};
        }
        if (pe->rx_head[FY_XFER_NET] && pe->net_in >= 0)
            net_pfds[n++] = (struct pollfd){.fd = pe->net_in, .events = POLLIN};
    }
    for (int i = 0; i < net_npend; i++)
        net_pfds[n++] = (struct pollfd){.fd = net_pend[i].fd, .events = POLLIN};
    if (net_need_accept && net_lfd >= 0)
        net_pfds[n++] = (struct pollfd){.fd = net_lfd, .events = POLLIN};
    return n && poll(net_pfds, n, 0) > 0;
}

/* ---- progress ---------------------------------------------------------------
 */

int fy_rndv_progress(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = pull_progress();
    bool need_accept = false;
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
        if (pe->rx_head[FY_XFER_NET]) {
            if (pe->net_in >= 0)
                n += rx_net(p, pe);
            else
                need_accept = true;
        }
    }
    net_need_accept = need_accept;
    if (need_accept || net_npend) {
        int k = net_accept();
        n += k;
        if (k)
            for (int p = 0; p < s->P; p++)
                if (s->peers[p].rx_head[FY_XFER_NET] && s->peers[p].net_in >= 0)
                    n += rx_net(p, &s->peers[p]);
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
        if (pe->tx_head[FY_XFER_QUEUE] && fy_cellq_peek(s->free_tail))
            return true;
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
    return (fy_xfer_avail & (1u << FY_XFER_NET)) && net_visible();
}

/* ---- start-up and shut-down
 * -------------------------------------------------- */

/* Read the probe word of 'peer' through a one-sided mechanism. */
static bool probe_one_sided(const struct fy_xfer_ops *ops, int peer, char *why,
                            size_t whylen)
{
    if (!ops->probe(why, whylen))
        return false;
    uint64_t got = 0;
    const struct fy_shm_rank *pr = &fy_shm.ranks[peer];
    ssize_t n = ops->copy_remote(fy_shm.pid[peer], &got, pr->probe_addr,
                                 sizeof(got), true);
    if (n == (ssize_t)sizeof(got) && got == pr->probe_value)
        return true;
    snprintf(why, whylen, "reading rank %d's memory failed: %s%s", peer,
             strerror(n < 0 ? (int)-n : EIO),
             n == -EPERM || n == -EACCES
                 ? " (ptrace restrictions between sibling processes: yama "
                   "ptrace_scope, seccomp or container policy)"
                 : "");
    return false;
}

static uint64_t random_key(void)
{
    uint64_t k = 0;
    if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&k;
    }
    return k | 1; /* never 0 */
}

/* Check rank 0's published table before adopting it. */
static int adopt_rank0_table(struct fy_xfer_table *t)
{
    const struct fy_shm_rank *r0 = &fy_shm.ranks[0];
    if (r0->xfer_nrules < 1 || r0->xfer_nrules > FY_XFER_RULES_MAX ||
        r0->xfer_from > FY_XFER_FROM_TUNING) {
        FY_ERROR("rank 0's mechanism table in the shared segment is malformed");
        return -EPROTO;
    }
    t->from = r0->xfer_from;
    t->n = r0->xfer_nrules;
    for (uint32_t i = 0; i < t->n; i++) {
        t->rule[i].min_bytes = r0->xfer_rule_min[i];
        t->rule[i].kind = r0->xfer_rule_kind[i];
        if (t->rule[i].kind < FY_XFER_AUTO ||
            t->rule[i].kind >= FY_XFER_NKINDS ||
            (i > 0 && t->rule[i].min_bytes <= t->rule[i - 1].min_bytes)) {
            FY_ERROR(
                "rank 0's mechanism table in the shared segment is malformed");
            return -EPROTO;
        }
    }
    return 0;
}

int fy_rndv_init(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_xfer_table want;
    int rc = fy_xfer_table_request(&want);
    if (rc)
        return rc;
    for (int p = 0; p < s->P; p++)
        s->peers[p].net_in = s->peers[p].net_out = -1;
    s->pad_free = malloc(fy_shm.lay.npads * sizeof(*s->pad_free));
    if (!s->pad_free)
        return -ENOMEM;
    for (uint32_t i = 0; i < fy_shm.lay.npads; i++)
        s->pad_free[i] = fy_shm.lay.npads - 1 - i; /* pad 0 lent first */
    s->npad_free = fy_shm.lay.npads;
    if (s->me == 0) {
        s->my->xfer_from = want.from;
        s->my->xfer_nrules = want.n;
        for (uint32_t i = 0; i < want.n; i++) {
            s->my->xfer_rule_min[i] = want.rule[i].min_bytes;
            s->my->xfer_rule_kind[i] = want.rule[i].kind;
        }
    }

    /* What works, of what the rule table may use? (No idle machinery: a
     * mechanism the table never names is not probed, so no /proc/<pid>/mem
     * is opened and no loopback listener exists for nothing.) One-sided
     * mechanisms: everyone reads its right neighbour's probe word (between
     * sibling processes, as a real transfer would); a kind is used only if
     * every rank's probe worked. net: a loopback round trip, then our
     * listener. */
    unsigned needed = 1u << FY_XFER_SHMBUF | 1u << FY_XFER_QUEUE;
    for (uint32_t i = 0; i < want.n; i++)
        needed |= want.rule[i].kind == FY_XFER_AUTO
                      ? 1u << FY_XFER_CMA
                      : 1u << (unsigned)want.rule[i].kind;
    char why[FY_XFER_NKINDS][256] = {{0}};
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        if (!(needed & (1u << k)))
            snprintf(why[k], sizeof(why[0]), "not in this job's rule table");
    unsigned ok = 1u << FY_XFER_SHMBUF | 1u << FY_XFER_QUEUE;
    int peer = (s->me + 1) % s->P;
    if (!(needed & (1u << FY_XFER_CMA)))
        ;
    else if (fy_env_int(FY_ENV_NO_CMA))
        snprintf(why[FY_XFER_CMA], sizeof(why[0]), "disabled by FERRY_NO_CMA");
    else if (probe_one_sided(&fy_xfer_cma_ops, peer, why[FY_XFER_CMA],
                             sizeof(why[0])))
        ok |= 1u << FY_XFER_CMA;
    if ((needed & (1u << FY_XFER_PROCMEM)) &&
        probe_one_sided(&fy_xfer_procmem_ops, peer, why[FY_XFER_PROCMEM],
                        sizeof(why[0])))
        ok |= 1u << FY_XFER_PROCMEM;
    uint16_t port = 0;
    if ((needed & (1u << FY_XFER_NET)) &&
        fy_xfer_net_ops.probe(why[FY_XFER_NET], sizeof(why[0]))) {
        net_pfds = malloc(((size_t)2 * (size_t)s->P + NET_PENDING_MAX + 1) *
                          sizeof(*net_pfds));
        rc = net_pfds ? fy_xfer_net_listen(&net_lfd, &port) : -ENOMEM;
        if (rc == 0) {
            net_key = random_key();
            s->my->net_key = net_key;
            s->my->net_port = port;
            ok |= 1u << FY_XFER_NET;
        } else {
            snprintf(why[FY_XFER_NET], sizeof(why[0]),
                     "listening on 127.0.0.1 failed: %s", strerror(-rc));
        }
    }
    s->my->xfer_ok = ok;
    /* R10: pairs with A1 in the barrier: our probe results, net port and
     * key (and rank 0's table) are visible to everyone past it. */
    atomic_fetch_add_explicit(&fy_shm.hdr->probed, 1, memory_order_release);
    fy_shm_barrier_wait(&fy_shm.hdr->probed, (uint32_t)s->P);

    unsigned avail = ~0u;
    for (int p = 0; p < s->P; p++)
        avail &= fy_shm.ranks[p].xfer_ok;
    avail &= (1u << FY_XFER_NKINDS) - 1;
    struct fy_xfer_table t;
    rc = adopt_rank0_table(&t);
    if (rc)
        return rc;
    /* Say why a mechanism the table names is missing, where it failed.
     * Under FERRY_XFER_REQUIRE a missing one ends the job as a skip (77):
     * a test forced onto a mechanism must not pass on another one. */
    bool require = fy_env_int(FY_ENV_XFER_REQUIRE) != 0;
    for (uint32_t i = 0; i < t.n; i++) {
        int k = t.rule[i].kind;
        if (k < 0 || (avail & (1u << k)))
            continue;
        const char *reason =
            (ok & (1u << k)) ? "it failed on another rank" : why[k];
        if (require)
            fy_fatal(77,
                     "FERRY_XFER_REQUIRE: %s does not work here (%s); "
                     "not falling back",
                     fy_xfer_registry[k]->name, reason);
        if (!(ok & (1u << k)))
            FY_WARN("%s does not work here: %s", fy_xfer_registry[k]->name,
                    reason);
    }
    fy_xfer_table_resolve(&t, avail, s->me == 0);
    fy_xfer_active = t;
    fy_xfer_avail = avail;
    if (!(avail & (1u << FY_XFER_NET)) && net_lfd >= 0) {
        close(net_lfd); /* some rank has no listener: net is off job-wide */
        net_lfd = -1;
    }
    if (s->me == 0 && fy_log_threshold >= FY_LOG_INFO) {
        char line[256];
        size_t at = 0;
        for (uint32_t i = 0; i < t.n && at < sizeof(line); i++)
            at += (size_t)snprintf(line + at, sizeof(line) - at,
                                   "%s%s from %llu B", i ? ", " : "",
                                   fy_xfer_registry[t.rule[i].kind]->name,
                                   (unsigned long long)t.rule[i].min_bytes);
        FY_INFO("large messages (%s): %s", fy_xfer_from_name(t.from), line);
    }
    return 0;
}

void fy_rndv_finalize(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    for (int p = 0; s->peers && p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (pe->net_out >= 0)
            close(pe->net_out);
        if (pe->net_in >= 0)
            close(pe->net_in);
        pe->net_out = pe->net_in = -1;
    }
    while (net_npend)
        net_pending_drop(net_npend - 1);
    if (net_lfd >= 0)
        close(net_lfd);
    net_lfd = -1;
    free(net_pfds);
    net_pfds = NULL;
    free(s->pad_free);
    s->pad_free = NULL;
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        if (fy_xfer_registry[k]->finalize)
            fy_xfer_registry[k]->finalize(); /* e.g. procmem's open files */
    fy_xfer_avail = 0;
}
