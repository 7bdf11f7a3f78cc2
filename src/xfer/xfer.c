/* SPDX-License-Identifier: MIT */
/* The mechanism registry, and the two-sided mechanisms' ops tables (their
 * data movement lives with the protocol in src/p2p/rndv.c). */
#include <errno.h>
#include <string.h>

#include "xfer/xfer.h"

static bool always_works(char *why, size_t whylen)
{
    if (why && whylen)
        why[0] = '\0';
    return true;
}

static void libc_copy(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

const struct fy_xfer_ops fy_xfer_shmbuf_ops = {
    .name = "shmbuf",
    .summary = "pipelined copy through a per-pair shared double buffer",
    .probe = always_works,
    .copy_local = libc_copy,
};

const struct fy_xfer_ops fy_xfer_queue_ops = {
    .name = "queue",
    .summary = "copy through lock-free per-receiver queues of cells",
    .probe = always_works,
    .copy_local = libc_copy,
};

const struct fy_xfer_ops *const fy_xfer_registry[FY_XFER_NKINDS] = {
    [FY_XFER_CMA] = &fy_xfer_cma_ops,
    [FY_XFER_SHMBUF] = &fy_xfer_shmbuf_ops,
    [FY_XFER_QUEUE] = &fy_xfer_queue_ops,
};

int fy_xfer_parse(const char *name)
{
    if (!name || !*name || !strcmp(name, "auto"))
        return -1;
    for (int k = 0; k < FY_XFER_NKINDS; k++)
        if (!strcmp(name, fy_xfer_registry[k]->name))
            return k;
    return -EINVAL;
}
