/* SPDX-License-Identifier: MIT */
/* Scratch buffers for the one-sided mechanisms' transfers at slow
 * distances (util/copy.h; used by cma.c and procmem.c): a few per
 * process, shared by its threads, each FY_XFER_BOUNCE_PIECE bytes plus a
 * page so a piece can start at any page offset. Mapped on first use and
 * kept for the process's life; when all are in use a transfer goes
 * direct (slow, never wrong). fy_xfer_bounced moves a transfer through
 * one. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "util/copy.h"
#include "xfer/xfer.h"

#define BOUNCE_BUFS 4

static _Atomic(uint8_t *) bounce_buf[BOUNCE_BUFS];
static atomic_bool bounce_busy[BOUNCE_BUFS];

/* A free scratch buffer, mapped on first use, and its slot; NULL when
 * all are in use. */
static uint8_t *bounce_take(int *slot)
{
    for (int i = 0; i < BOUNCE_BUFS; i++) {
        if (atomic_exchange_explicit(&bounce_busy[i], true,
                                     memory_order_acquire))
            continue;
        /* The busy flag's acquire orders this load after the store of
         * whoever mapped it (and released the flag). */
        uint8_t *p = atomic_load_explicit(&bounce_buf[i], memory_order_relaxed);
        if (!p) {
            void *m =
                mmap(NULL, FY_XFER_BOUNCE_PIECE + 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) {
                atomic_store_explicit(&bounce_busy[i], false,
                                      memory_order_release);
                return NULL;
            }
            p = m;
            atomic_store_explicit(&bounce_buf[i], p, memory_order_relaxed);
        }
        *slot = i;
        return p;
    }
    return NULL;
}

static void bounce_give(int slot)
{
    atomic_store_explicit(&bounce_busy[slot], false, memory_order_release);
}

ssize_t fy_xfer_bounced(fy_xfer_remote_fn *direct, pid_t peer, uint8_t *local,
                        uint64_t remote, size_t len, bool get,
                        bool at_remote_offset)
{
    int b;
    uint8_t *scratch = bounce_take(&b);
    if (!scratch) /* every scratch buffer in use: direct */
        return direct(peer, local, remote, len, get);
    size_t done = 0;
    ssize_t k = 0;
    while (done < len) {
        size_t n = FY_MIN(len - done, FY_XFER_BOUNCE_PIECE);
        uint64_t at = remote + done;
        uint8_t *tmp = scratch + (at_remote_offset ? (at & 4095) : 0);
        if (!get)
            fy_copy(tmp, local + done, n);
        k = direct(peer, tmp, at, n, get);
        if (k != (ssize_t)n)
            break;
        if (get)
            fy_copy(local + done, tmp, n);
        done += n;
    }
    bounce_give(b);
    if (done < len)
        return k < 0 ? k : -EFAULT;
    fy_copy_count(&fy_copy_counts.bounces, &fy_copy_counts.bounce_bytes, len);
    return (ssize_t)len;
}
