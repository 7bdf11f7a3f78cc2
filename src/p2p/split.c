/* SPDX-License-Identifier: MIT */
/* Shared single copy: a large CMA transfer is cut into chunks that the
 * receiver (process_vm_readv from the sender) and the sender
 * (process_vm_writev into the receiver) claim from one shared counter, so
 * both cores copy at once when both processes are inside MPI, and the
 * receiver simply does every chunk itself when the sender is busy
 * elsewhere: the sender's help is never waited for, only its chunks
 * already under way.
 *
 * Invariants of the receiver's split control block (struct fy_split_ctl,
 * in its shared rank record):
 * - 'claim' is gen << 32 | next chunk index; only the receiver stores a new
 *   generation, and only after the previous transfer's chunks are all done.
 * - Anyone takes chunk i by a CAS from (gen, i) to (gen, i + 1): a stale
 *   helper (older gen) can never take a chunk of a newer transfer.
 * - 'done' counts finished chunks of the current generation; it is reset
 *   before the generation is published, and only a successful claimer adds
 *   to it, after its copy. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "p2p/p2p_impl.h"

static uint32_t split_gen;

static uint64_t chunk_size_for(uint64_t want)
{
    uint64_t c = FY_MAX(want / 4, (uint64_t)32 << 10);
    c = FY_MIN(c, (uint64_t)256 << 10);
    return FY_ALIGN_UP(c, (uint64_t)4096);
}

/* Take the next chunk of generation gen; returns its index or -1. */
static int64_t claim(struct fy_split_ctl *sc, uint32_t gen, uint64_t nchunks)
{
    uint64_t v = atomic_load_explicit(&sc->claim, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(v >> 32) != gen || (v & 0xffffffffu) >= nchunks)
            return -1;
        /* C1: acquire pairs with R10 (the generation's publication): the
         * reset 'done' and the transfer's parameters come before it. */
        if (atomic_compare_exchange_weak_explicit(&sc->claim, &v, v + 1,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire))
            return (int64_t)(v & 0xffffffffu);
    }
}

/* Claim and copy chunks of generation gen until none is left: the
 * receiver reads (get) into its buffer, the sender writes (put) from its
 * own; either way 'local' and 'remote' are the two buffers' starts. */
static void copy_chunks(struct fy_split_ctl *sc, uint32_t gen, uint64_t chunk,
                        uint64_t want, pid_t pid, uint8_t *local,
                        uint64_t remote, bool get)
{
    uint64_t nchunks = (want + chunk - 1) / chunk;
    int64_t i;
    while ((i = claim(sc, gen, nchunks)) >= 0) {
        uint64_t off = (uint64_t)i * chunk;
        uint64_t n = FY_MIN(chunk, want - off);
        ssize_t moved =
            fy_xfer_cma_ops.copy_remote(pid, local + off, remote + off, n, get);
        if (moved != (ssize_t)n)
            atomic_store_explicit(&sc->err, moved < 0 ? (uint32_t)-moved : EIO,
                                  memory_order_relaxed);
        /* R11: pairs with A12 in fy_split_get(): the chunk is in place. */
        atomic_fetch_add_explicit(&sc->done, 1, memory_order_release);
    }
}

ssize_t fy_split_get_piece(int src, uint64_t sender_cookie, uint64_t remote,
                           uint8_t *dest, uint64_t piece, uint64_t want)
{
    struct fy_p2p_state *s = &fy_p2p;
    struct fy_split_ctl *sc = &s->my->split;
    uint64_t chunk = chunk_size_for(want);
    uint64_t nchunks = (want + chunk - 1) / chunk;
    uint64_t off = piece * FY_PULL_PIECE;
    uint32_t gen = ++split_gen;
    if (gen == 0)
        gen = ++split_gen;
    atomic_store_explicit(&sc->done, 0, memory_order_relaxed);
    atomic_store_explicit(&sc->err, 0, memory_order_relaxed);
    /* R10: pairs with C1. */
    atomic_store_explicit(&sc->claim, (uint64_t)gen << 32,
                          memory_order_release);
    /* SPLIT: total = bytes of this piece, addr = our buffer's start,
     * offset = gen | chunk / 4 KiB << 32 | piece << 40. */
    struct fy_ctl ctl = {.total = want,
                         .addr = (uint64_t)(uintptr_t)dest,
                         .cookie = sender_cookie,
                         .offset =
                             (uint64_t)gen | (chunk >> 12) << 32 | piece << 40};
    if (fy_pkt_send(src, FY_PKT_SPLIT, 0, 0, &ctl, NULL))
        fy_fatal(1, "out of memory asking rank %d to share a copy", src);
    copy_chunks(sc, gen, chunk, want, fy_shm.pid[src], dest + off, remote + off,
                true);
    /* Wait for chunks the sender is copying right now (never for chunks it
     * has not claimed). A12: pairs with R11. */
    for (unsigned spin = 0;
         atomic_load_explicit(&sc->done, memory_order_acquire) < nchunks;
         spin++) {
        if (spin < 4096)
            fy_cpu_relax();
        else
            sched_yield();
    }
    uint32_t err = atomic_load_explicit(&sc->err, memory_order_relaxed);
    return err ? -(ssize_t)err : (ssize_t)want;
}

ssize_t fy_split_get(int src, uint64_t sender_cookie, uint64_t remote,
                     void *dest, uint64_t want)
{
    return fy_split_get_piece(src, sender_cookie, remote, dest, 0, want);
}

void fy_split_on_pkt(const struct fy_pkt *p)
{
    struct fy_req *r = fy_cookie_find(p->ctl.cookie, FY_REQ_SEND);
    /* A late request (its transfer already finished) is normal: ignore. */
    if (!r || r->wpeer != p->src || r->proto != FY_RP_RTS_SENT)
        return;
    uint64_t want = p->ctl.total;
    uint64_t chunk = ((p->ctl.offset >> 32) & 0xff) << 12;
    uint64_t off = (p->ctl.offset >> 40) * FY_PULL_PIECE;
    uint32_t gen = (uint32_t)p->ctl.offset;
    if (off > (uint64_t)r->bytes || want > (uint64_t)r->bytes - off ||
        chunk == 0)
        fy_fatal(1, "malformed shared-copy request from rank %d", p->src);
    copy_chunks(&fy_shm.ranks[p->src].split, gen, chunk, want,
                fy_shm.pid[p->src], fy_req_data(r) + off, p->ctl.addr + off,
                false);
}
