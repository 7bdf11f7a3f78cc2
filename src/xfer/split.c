/* SPDX-License-Identifier: MIT */
/* The shared single copy: one large cma transfer cut into chunks that the
 * receiver (process_vm_readv from the sender) and the sender
 * (process_vm_writev into the receiver) claim from one shared counter, so
 * both cores copy at once when both processes are at hand, and the
 * receiver simply does every chunk itself when the sender is busy
 * elsewhere: the sender's help is never waited for, only its chunks
 * already under way. This file owns that data path: the library's
 * rendezvous (p2p/split.c asks the sender to help with a packet) and the
 * laboratory's "cma split" (bench/lab) both copy with these functions, so
 * --tune measures the code the library runs.
 *
 * Invariants of the receiver's split control block (struct fy_split_ctl,
 * its element of the "split" region, shm_layout.h):
 * - 'claim' is gen << 32 | back << 16 | front: chunks [0, front) are taken
 *   from the front, the last 'back' chunks from the back, and front + back
 *   never passes the transfer's chunk count; only the owner stores a new
 *   generation (fy_xfer_split_open, both counts 0), and only after the
 *   previous transfer's chunks are all done (fy_xfer_split_wait
 *   returned).
 * - The owner takes chunk 'front' by a CAS from (gen, back, front) to
 *   (gen, back, front + 1), a helper chunk count - 1 - back by one to
 *   (gen, back + 1, front): a stale helper (older gen) can never take a
 *   chunk of a newer transfer, and no chunk is taken twice. Each side
 *   thus copies the same end of the buffers transfer after transfer: a
 *   ping-pong's two cores keep their halves in their own caches instead
 *   of trading lines chunk by chunk (one shared counter, chunks taken in
 *   turn: 1 MiB messages 15-25 % slower; bench/README.md, "Both ends of
 *   the shared copy"). A helper asked for more chunks than 16 bits count
 *   does not help (an owner's transfer is at most FY_PULL_PIECE in chunks
 *   of 32 KiB or more).
 * - 'done' counts finished chunks of the current generation; it is reset
 *   before the generation is published, and only a successful claimer adds
 *   to it, after its copy.
 * - A helper copies only inside its own buffer's [0, want) (its caller
 *   checked want against the message) at the chunk size the receiver
 *   chose; the receiver's buffer address is the receiver's own word.
 * - The owner (who opened the generation) takes one chunk, then, if no
 *   helper has claimed one yet, every chunk left in one CAS and one
 *   copy: a helper that is busy (an exchange, where it reads a message of
 *   ours) or computing then costs nothing - no system call per chunk, no
 *   wait for a late helper's chunk - while one that waits inside MPI has
 *   joined during the first chunk (bench/README.md, "Exchanges"). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

#include "xfer/shm_layout.h"
#include "xfer/xfer.h"

uint64_t fy_xfer_split_chunk(uint64_t want)
{
    uint64_t c = FY_MAX(want / 4, (uint64_t)32 << 10);
    c = FY_MIN(c, (uint64_t)256 << 10);
    return FY_ALIGN_UP(c, (uint64_t)4096);
}

uint32_t fy_xfer_split_open(struct fy_split_ctl *sc, uint32_t *gen_io)
{
    uint32_t gen = ++*gen_io;
    if (gen == 0)
        gen = ++*gen_io;
    atomic_store_explicit(&sc->done, 0, memory_order_relaxed);
    atomic_store_explicit(&sc->err, 0, memory_order_relaxed);
    /* R10: pairs with C1. */
    atomic_store_explicit(&sc->claim, (uint64_t)gen << 32,
                          memory_order_release);
    return gen;
}

/* The claim word: gen << 32 | taken from the back << 16 | next from the
 * front. */
#define SPLIT_FRONT(v) ((v)&0xffffu)
#define SPLIT_BACK(v) (((v) >> 16) & 0xffffu)
#define SPLIT_MAX_CHUNKS 0xffffu

/* Take the next chunk of generation gen - the owner from the front, a
 * helper from the back; returns its index or -1. */
static int64_t claim(struct fy_split_ctl *sc, uint32_t gen, uint64_t nchunks,
                     bool back)
{
    uint64_t v = atomic_load_explicit(&sc->claim, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(v >> 32) != gen ||
            SPLIT_FRONT(v) + SPLIT_BACK(v) >= nchunks)
            return -1;
        /* C1: acquire pairs with R10 (the generation's publication): the
         * reset 'done' and the transfer's parameters come before it. */
        if (atomic_compare_exchange_weak_explicit(
                &sc->claim, &v, v + (back ? (uint64_t)1 << 16 : 1),
                memory_order_acq_rel, memory_order_acquire))
            return back ? (int64_t)(nchunks - 1 - SPLIT_BACK(v))
                        : (int64_t)SPLIT_FRONT(v);
    }
}

/* The owner: take chunks [first, nchunks) of generation gen if the next
 * chunk is still 'first' and no helper has taken one; returns false if a
 * helper did. */
static bool claim_rest(struct fy_split_ctl *sc, uint32_t gen, uint64_t first,
                       uint64_t nchunks)
{
    uint64_t v = (uint64_t)gen << 32 | first;
    /* C1's pairing holds: the generation is ours. */
    return atomic_compare_exchange_strong_explicit(
        &sc->claim, &v, (uint64_t)gen << 32 | nchunks, memory_order_acq_rel,
        memory_order_acquire);
}

/* Copy bytes [off, off + len) of a transfer, which are 'took' chunks, and
 * count them done (an error in 'err'). */
static void copy_taken(struct fy_split_ctl *sc, pid_t pid, uint8_t *local,
                       uint64_t remote, uint64_t off, uint64_t len, bool get,
                       uint32_t took)
{
    ssize_t moved =
        fy_xfer_cma_ops.copy_remote(pid, local + off, remote + off, len, get);
    if (moved != (ssize_t)len)
        atomic_store_explicit(&sc->err, moved < 0 ? (uint32_t)-moved : EIO,
                              memory_order_relaxed);
    /* R11: pairs with A12 in fy_xfer_split_wait(): the chunks are in
     * place. */
    atomic_fetch_add_explicit(&sc->done, took, memory_order_release);
}

static int split_copy(struct fy_split_ctl *sc, uint32_t gen, uint64_t chunk,
                      uint64_t want, pid_t pid, uint8_t *local, uint64_t remote,
                      bool get, bool owner)
{
    if (chunk == 0)
        return 0;
    uint64_t nchunks = (want + chunk - 1) / chunk;
    /* An owner's transfer is a piece of at most FY_PULL_PIECE (4 MiB) in
     * chunks of 32 KiB or more: a helper asked for more chunks than the
     * claim word counts was not asked by this owner (a malformed packet):
     * it does not help. */
    if (nchunks > SPLIT_MAX_CHUNKS) {
        if (!owner)
            return 0;
        /* Not made by this library's callers (helpers of such a transfer
         * do not help, above): alone, in one copy. */
        copy_taken(sc, pid, local, remote, 0, want, get, (uint32_t)nchunks);
        return (int)nchunks;
    }
    int n = 0;
    int64_t i;
    while ((i = claim(sc, gen, nchunks, !owner)) >= 0) {
        uint64_t off = (uint64_t)i * chunk;
        uint64_t len = FY_MIN(chunk, want - off);
        uint32_t took = 1;
        if (owner && n > 0 && (uint64_t)i == (uint64_t)n &&
            (uint64_t)i + 1 < nchunks &&
            claim_rest(sc, gen, (uint64_t)i + 1, nchunks)) {
            /* Alone so far: this chunk and all after it in one copy. */
            len = want - off;
            took = (uint32_t)(nchunks - (uint64_t)i);
        }
        copy_taken(sc, pid, local, remote, off, len, get, took);
        n += (int)took;
    }
    return n;
}

int fy_xfer_split_copy(struct fy_split_ctl *sc, uint32_t gen, uint64_t chunk,
                       uint64_t want, pid_t pid, uint8_t *local,
                       uint64_t remote, bool get)
{
    return split_copy(sc, gen, chunk, want, pid, local, remote, get, false);
}

int fy_xfer_split_copy_own(struct fy_split_ctl *sc, uint32_t gen,
                           uint64_t chunk, uint64_t want, pid_t pid,
                           uint8_t *local, uint64_t remote, bool get)
{
    return split_copy(sc, gen, chunk, want, pid, local, remote, get, true);
}

ssize_t fy_xfer_split_wait(struct fy_split_ctl *sc, uint64_t chunk,
                           uint64_t want)
{
    uint64_t nchunks = (want + chunk - 1) / chunk;
    /* Wait for chunks the sender is copying right now (never for chunks it
     * has not claimed: ours took every one left). A12: pairs with R11. */
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
