/* SPDX-License-Identifier: MIT */
/* Large-message transfer mechanisms. Each fills one const struct
 * fy_xfer_ops; the seed-000 benchmark interface (init, finalize,
 * register_mem, deregister_mem, copy_local, copy_remote) is its core.
 * One-sided mechanisms (cma) read or write the peer's memory directly;
 * two-sided ones (shmbuf, queue) move bytes through the shared segment with
 * both processes copying, driven by the point-to-point protocol code. */
#ifndef FY_XFER_H
#define FY_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum fy_xfer_kind { FY_XFER_CMA, FY_XFER_SHMBUF, FY_XFER_QUEUE, FY_XFER_NKINDS };

struct fy_xfer_ops {
    const char *name;
    const char *summary;
    bool one_sided; /* copy_remote reaches the peer's memory directly */
    /* Whether the mechanism works on this machine; on failure writes a
     * reason into why (may be NULL). */
    bool (*probe)(char *why, size_t whylen);
    int (*init)(void);
    void (*finalize)(void);
    /* Optional: make a region usable for copy_remote (NULL: not needed). */
    int (*register_mem)(void *addr, size_t len);
    int (*deregister_mem)(void *addr, size_t len);
    /* Copy within this process (the mechanism's local copy routine). */
    void (*copy_local)(void *dst, const void *src, size_t len);
    /* One-sided only: move len bytes between local and the peer's remote
     * address; get=true reads the peer. Returns bytes moved or -errno. */
    ssize_t (*copy_remote)(pid_t peer, void *local, uint64_t remote,
                           size_t len, bool get);
};

extern const struct fy_xfer_ops fy_xfer_cma_ops;
extern const struct fy_xfer_ops fy_xfer_shmbuf_ops;
extern const struct fy_xfer_ops fy_xfer_queue_ops;

/* Registry in FY_XFER_* order. */
extern const struct fy_xfer_ops *const fy_xfer_registry[FY_XFER_NKINDS];

/* Parse a FERRY_XFER value: returns the kind, -1 for "auto", or -EINVAL. */
int fy_xfer_parse(const char *name);

#endif /* FY_XFER_H */
