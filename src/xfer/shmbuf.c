/* SPDX-License-Identifier: MIT */
/* The shared double buffer (seed 000's first mechanism): one "pad" is two
 * halves, each with a control line; the sender fills a half while the
 * receiver drains the other. This file owns the data path: the library's
 * rendezvous (proto/rndv.c) and the laboratory (bench/lab) both move bytes
 * with fy_xfer_shmbuf_push/pull, so what the laboratory measures is what
 * runs in production.
 *
 * Invariants of one pad (struct fy_shmbuf_ctl, shm_layout.h):
 * - 'full' is 0 when the half belongs to the sender, 1 when it belongs to
 *   the receiver; only the owner of a half touches its data, len, cookie.
 * - Halves are used alternately from half 0, one message at a time; a
 *   message ends with both halves empty, so the pad is clean for the next.
 * - The receiver checks len and cookie before copying: a half that claims
 *   more than the half size or than the message still owes is malformed. */
#include <errno.h>
#include <string.h>

#include "xfer/shm_layout.h"
#include "xfer/xfer.h"

const struct fy_xfer_ops fy_xfer_shmbuf_ops = {
    .name = "shmbuf",
    .summary = "pipelined copy through a receiver's shared double buffer",
    .probe = fy_xfer_probe_always,
    .copy_local = fy_xfer_copy_libc,
};

static struct fy_shmbuf_ctl *pad_ctl(uint8_t *pad, uint32_t half)
{
    return (struct fy_shmbuf_ctl *)pad + half;
}

static uint8_t *pad_data(uint8_t *pad, uint64_t half_size, uint32_t half)
{
    return pad + 2 * sizeof(struct fy_shmbuf_ctl) + half * half_size;
}

int fy_xfer_shmbuf_push(const struct fy_shmbuf_xfer *x, uint32_t *half_io,
                        const uint8_t *src, uint64_t *done_io)
{
    int n = 0;
    while (*done_io < x->len) {
        struct fy_shmbuf_ctl *c = pad_ctl(x->pad, *half_io);
        /* A8: pairs with R9: the receiver has finished reading this half. */
        if (atomic_load_explicit(&c->full, memory_order_acquire))
            break;
        uint64_t chunk = FY_MIN(x->chunk, x->len - *done_io);
        x->copy(pad_data(x->pad, x->half_size, *half_io), src + *done_io,
                chunk);
        c->len = chunk;
        c->cookie = x->cookie;
        /* R8: pairs with A9: the chunk is visible with the flag. */
        atomic_store_explicit(&c->full, 1, memory_order_release);
        *half_io ^= 1;
        *done_io += chunk;
        n++;
    }
    return n;
}

int fy_xfer_shmbuf_pull(const struct fy_shmbuf_xfer *x, uint32_t *half_io,
                        uint8_t *dst, uint64_t *done_io)
{
    int n = 0;
    while (*done_io < x->len) {
        struct fy_shmbuf_ctl *c = pad_ctl(x->pad, *half_io);
        /* A9: pairs with R8. */
        if (!atomic_load_explicit(&c->full, memory_order_acquire))
            break;
        uint64_t len = c->len;
        if (c->cookie != x->cookie || len == 0 || len > x->half_size ||
            len > x->len - *done_io)
            return -EPROTO;
        x->copy(dst + *done_io, pad_data(x->pad, x->half_size, *half_io), len);
        /* R9: pairs with A8: the half may be refilled. */
        atomic_store_explicit(&c->full, 0, memory_order_release);
        *half_io ^= 1;
        *done_io += len;
        n++;
    }
    return n;
}

bool fy_xfer_shmbuf_ready(const struct fy_shmbuf_xfer *x, uint32_t half,
                          bool sender)
{
    return atomic_load_explicit(&pad_ctl(x->pad, half)->full,
                                memory_order_relaxed) != sender;
}
