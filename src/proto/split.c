/* SPDX-License-Identifier: MIT */
/* Shared single copy, the protocol half: a large cma read of the receiver
 * asks its sender (a SPLIT packet: generation, chunk size, where the
 * receiver's buffer is) to help, then both copy chunks with the shared
 * single copy's data path (xfer/split.c, where the invariants of the
 * control block are). The sender's help is never waited for, only its
 * chunks already under way. */
#include "boot/boot.h"
#include "p2p/p2p_impl.h"
#include "proto/proto.h"

static uint32_t split_gen;

ssize_t fy_split_get_piece(int src, uint64_t sender_cookie, uint64_t remote,
                           uint8_t *dest, uint64_t off, uint64_t want)
{
    struct fy_split_ctl *sc = fy_xfer_split_ctl(fy_boot.local_rank);
    uint64_t chunk = fy_xfer_split_chunk(want);
    uint32_t gen = fy_xfer_split_open(sc, &split_gen);
    /* SPLIT: total = bytes of this piece, addr = our buffer's start,
     * offset = gen | chunk / 4 KiB << 32 | (off / piece size) << 40, tag =
     * off % piece size (a pull after pushed bytes starts anywhere). */
    struct fy_ctl ctl = {.total = want,
                         .addr = (uint64_t)(uintptr_t)dest,
                         .cookie = sender_cookie,
                         .offset = (uint64_t)gen | (chunk >> 12) << 32 |
                                   (off / FY_PULL_PIECE) << 40};
    if (fy_pkt_send(src, FY_PKT_SPLIT, (int32_t)(off % FY_PULL_PIECE), 0, &ctl,
                    NULL))
        fy_fatal(1, "out of memory asking rank %d to share a copy", src);
    fy_xfer_split_copy_own(sc, gen, chunk, want, fy_shm.pid[fy_boot_local(src)],
                           dest + off, remote + off, true);
    return fy_xfer_split_wait(sc, chunk, want);
}

ssize_t fy_split_get(int src, uint64_t sender_cookie, uint64_t remote,
                     void *dest, uint64_t want)
{
    return fy_split_get_piece(src, sender_cookie, remote, dest, 0, want);
}

ssize_t fy_split_put(int dst, uint64_t recv_cookie, const uint8_t *src,
                     uint64_t remote, uint64_t off, uint64_t want)
{
    /* Our own control block: a process opens it for one transfer at a
     * time (this one, or a rendezvous read of ours), each synchronous. */
    struct fy_split_ctl *sc = fy_xfer_split_ctl(fy_boot.local_rank);
    uint64_t chunk = fy_xfer_split_chunk(want);
    uint32_t gen = fy_xfer_split_open(sc, &split_gen);
    /* WSPLIT: total = bytes of this piece, addr = our buffer's start,
     * cookie = the receive's, offset = gen | chunk / 4 KiB << 32 | (off /
     * piece size) << 40, tag = off % piece size, as SPLIT. */
    struct fy_ctl ctl = {.total = want,
                         .addr = (uint64_t)(uintptr_t)src,
                         .cookie = recv_cookie,
                         .offset = (uint64_t)gen | (chunk >> 12) << 32 |
                                   (off / FY_PULL_PIECE) << 40};
    if (fy_pkt_send(dst, FY_PKT_WSPLIT, (int32_t)(off % FY_PULL_PIECE), 0, &ctl,
                    NULL))
        fy_fatal(1, "out of memory asking rank %d to share a copy", dst);
    fy_xfer_split_copy_own(sc, gen, chunk, want, fy_shm.pid[fy_boot_local(dst)],
                           (uint8_t *)src + off, remote + off, false);
    return fy_xfer_split_wait(sc, chunk, want);
}

void fy_split_on_wsplit(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_RECV);
    /* The write may be over already (WDONE can come first): ignore. */
    if (!r || !r->offered || r->wpeer != p->src)
        return;
    uint64_t want = p->ctl.total, cap = fy_req_capacity(r);
    uint64_t chunk = ((p->ctl.offset >> 32) & 0xff) << 12;
    uint32_t gen = (uint32_t)p->ctl.offset;
    if (p->tag < 0 || (uint64_t)p->tag >= FY_PULL_PIECE)
        fy_fatal(1, "malformed shared-write request from rank %d", p->src);
    uint64_t off = (p->ctl.offset >> 40) * FY_PULL_PIECE + (uint64_t)p->tag;
    if (off > cap || want > cap - off || chunk == 0)
        fy_fatal(1, "malformed shared-write request from rank %d", p->src);
    fy_xfer_split_copy(fy_xfer_split_ctl(fy_boot_local(p->src)), gen, chunk,
                       want, fy_shm.pid[fy_boot_local(p->src)],
                       (uint8_t *)r->buf + off, p->ctl.addr + off, true);
}

void fy_split_on_pkt(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_SEND);
    /* A late request (its transfer already finished) is normal: ignore. */
    if (!r || r->wpeer != p->src || r->proto != FY_RP_RTS_SENT)
        return;
    uint64_t want = p->ctl.total;
    uint64_t chunk = ((p->ctl.offset >> 32) & 0xff) << 12;
    if (p->tag < 0 || (uint64_t)p->tag >= FY_PULL_PIECE)
        fy_fatal(1, "malformed shared-copy request from rank %d", p->src);
    uint64_t off = (p->ctl.offset >> 40) * FY_PULL_PIECE + (uint64_t)p->tag;
    uint32_t gen = (uint32_t)p->ctl.offset;
    if (off > (uint64_t)r->bytes || want > (uint64_t)r->bytes - off ||
        chunk == 0)
        fy_fatal(1, "malformed shared-copy request from rank %d", p->src);
    fy_xfer_split_copy(fy_xfer_split_ctl(fy_boot_local(p->src)), gen, chunk,
                       want, fy_shm.pid[fy_boot_local(p->src)],
                       fy_req_data(r) + off, p->ctl.addr + off, false);
}
