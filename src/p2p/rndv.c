/* SPDX-License-Identifier: MIT */
/* Rendezvous for messages above the eager limit. The sender announces the
 * message (RTS: size, address, cookie); once a receive matches it:
 * - cma: the receiver reads the sender's buffer with one process_vm_readv
 *   straight into its own buffer and answers FIN;
 * - shmbuf: the receiver answers CTS, the sender fills the pair's two
 *   shared halves alternately while the receiver drains them;
 * - queue: the receiver answers CTS, the sender streams DATA cells through
 *   the receiver's cell queue.
 * The receiver only ever asks for min(message, buffer) bytes, so nothing is
 * written past a receive buffer on any path; a longer message is reported
 * as truncated. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "p2p/p2p_impl.h"
#include "shm/cellq_inl.h"

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

static void fifo_push(struct fy_req **head, struct fy_req **tail, struct fy_req *r)
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

static void send_ctl(int peer, uint32_t type, const struct fy_ctl *ctl)
{
    if (fy_pkt_send(peer, type, 0, 0, ctl, NULL))
        fy_fatal(1, "out of memory sending a rendezvous reply to rank %d", peer);
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
    if (s->xfer == FY_XFER_CMA) {
        void *dest = recv_dest(r, want);
        if (want) {
            ssize_t n = fy_xfer_cma_ops.copy_remote(fy_shm.ranks[p->src].pid, dest,
                                                    p->ctl.addr, want, true);
            if (n == -ESRCH)
                fy_peer_gone(p->src);
            if (n != (ssize_t)want) {
                FY_ERROR("process_vm_readv of %llu bytes from rank %d failed: %s",
                         (unsigned long long)want, p->src,
                         strerror(n < 0 ? (int)-n : EIO));
                r->err = -EIO;
                want = 0;
            }
        }
        struct fy_ctl fin = {.cookie = p->ctl.cookie};
        send_ctl(p->src, FY_PKT_FIN, &fin);
        fy_recv_finish(r, want, r->err ? 0 : total);
        return;
    }
    recv_dest(r, want);
    struct fy_ctl cts = {.total = want, .cookie = p->ctl.cookie};
    if (want == 0) {
        send_ctl(p->src, FY_PKT_CTS, &cts);
        fy_recv_finish(r, 0, total);
        return;
    }
    if (total > want)
        r->err = -EMSGSIZE; /* reported when the transfer completes */
    r->cookie = fy_cookie_new(r);
    cts.offset = r->cookie;
    r->proto = FY_RP_RX;
    s->nrx++;
    if (s->xfer == FY_XFER_SHMBUF) {
        struct fy_peer *pe = &s->peers[p->src];
        fifo_push(&pe->rx_head, &pe->rx_tail, r);
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
    if (s->xfer == FY_XFER_CMA)
        bad_peer(p->src, "CTS while using cma");
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
    fifo_push(&pe->tx_head, &pe->tx_tail, r);
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

static inline uint8_t *rx_base(struct fy_req *r)
{
    return r->pack ? r->pack : r->buf;
}

void fy_rndv_on_data(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    if (!r || r->proto != FY_RP_RX)
        bad_peer(p->src, "DATA for no pending receive");
    if (p->ctl.offset != (uint64_t)r->done ||
        p->len > (uint64_t)(r->total - r->done))
        bad_peer(p->src, "DATA outside the receive");
    memcpy(rx_base(r) + r->done, p->data, p->len);
    r->done += (MPI_Count)p->len;
    if (r->done == r->total)
        rx_done(r);
}

/* ---- pipelined movers ---------------------------------------------------- */

static struct fy_shmbuf_ctl *sb_ctl(uint8_t *pair, uint32_t half)
{
    return (struct fy_shmbuf_ctl *)pair + half;
}

static uint8_t *sb_data(uint8_t *pair, uint32_t half)
{
    return pair + 2 * sizeof(struct fy_shmbuf_ctl) + half * fy_p2p.shmbuf_size;
}

static void tx_done(struct fy_peer *pe, struct fy_req *r)
{
    fifo_pop(&pe->tx_head, &pe->tx_tail);
    fy_p2p.ntx--;
    fy_cookie_drop(r->cookie);
    fy_req_complete(r);
}

static int tx_shmbuf(int peer, struct fy_peer *pe)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint8_t *pair = fy_shmbuf_pair(peer, s->me);
    int n = 0;
    while (pe->tx_head) {
        struct fy_req *r = pe->tx_head;
        struct fy_shmbuf_ctl *c = sb_ctl(pair, pe->tx_half);
        /* A8: pairs with R9: the receiver has finished reading this half. */
        if (atomic_load_explicit(&c->full, memory_order_acquire))
            break;
        uint64_t chunk = FY_MIN(s->shmbuf_size, (uint64_t)(r->total - r->done));
        const uint8_t *src = (const uint8_t *)(r->pack ? r->pack : r->buf);
        memcpy(sb_data(pair, pe->tx_half), src + r->done, chunk);
        c->len = chunk;
        c->cookie = r->peer_cookie;
        /* R8: pairs with A9: the chunk is visible with the flag. */
        atomic_store_explicit(&c->full, 1, memory_order_release);
        fy_wake(peer);
        pe->tx_half ^= 1;
        r->done += (MPI_Count)chunk;
        n++;
        if (r->done == r->total)
            tx_done(pe, r);
    }
    return n;
}

static int rx_shmbuf(int peer, struct fy_peer *pe)
{
    struct fy_p2p_state *s = &fy_p2p;
    uint8_t *pair = fy_shmbuf_pair(s->me, peer);
    int n = 0;
    while (pe->rx_head) {
        struct fy_req *r = pe->rx_head;
        struct fy_shmbuf_ctl *c = sb_ctl(pair, pe->rx_half);
        /* A9: pairs with R8. */
        if (!atomic_load_explicit(&c->full, memory_order_acquire))
            break;
        uint64_t len = c->len;
        if (c->cookie != r->cookie || len > s->shmbuf_size ||
            len > (uint64_t)(r->total - r->done) || len == 0)
            bad_peer(peer, "double-buffer chunk");
        memcpy(rx_base(r) + r->done, sb_data(pair, pe->rx_half), len);
        /* R9: pairs with A8: the half may be refilled. */
        atomic_store_explicit(&c->full, 0, memory_order_release);
        fy_wake(peer);
        pe->rx_half ^= 1;
        r->done += (MPI_Count)len;
        n++;
        if (r->done == r->total) {
            fifo_pop(&pe->rx_head, &pe->rx_tail);
            rx_done(r);
        }
    }
    return n;
}

static int tx_queue(int peer, struct fy_peer *pe)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = 0;
    while (pe->tx_head) {
        struct fy_req *r = pe->tx_head;
        uint64_t off = fy_cell_get();
        if (!off)
            break;
        struct fy_cell *c = fy_shm_ptr(off);
        uint64_t chunk = FY_MIN(s->cell_payload, (uint64_t)(r->total - r->done));
        const uint8_t *src = (const uint8_t *)(r->pack ? r->pack : r->buf);
        memcpy((uint8_t *)c + FY_CELL_HDR, src + r->done, chunk);
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
            tx_done(pe, r);
    }
    return n;
}

int fy_rndv_progress(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    int n = 0;
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (pe->tx_head)
            n += s->xfer == FY_XFER_QUEUE ? tx_queue(p, pe) : tx_shmbuf(p, pe);
        if (pe->rx_head)
            n += rx_shmbuf(p, pe);
    }
    return n;
}

bool fy_rndv_work_visible(void)
{
    struct fy_p2p_state *s = &fy_p2p;
    if (!s->ntx && !s->nrx)
        return false;
    for (int p = 0; p < s->P; p++) {
        struct fy_peer *pe = &s->peers[p];
        if (pe->tx_head) {
            if (s->xfer == FY_XFER_QUEUE)
                return fy_cellq_peek(s->free_tail);
            if (!atomic_load(&sb_ctl(fy_shmbuf_pair(p, s->me), pe->tx_half)->full))
                return true;
        }
        if (pe->rx_head &&
            atomic_load(&sb_ctl(fy_shmbuf_pair(s->me, p), pe->rx_half)->full))
            return true;
    }
    return false;
}
