/* SPDX-License-Identifier: MIT */
/* Kernel-assisted single copy with process_vm_readv/writev: the receiver
 * reads the sender's buffer straight into its own (one copy, no shared
 * staging). Needs ptrace-read permission on the peer. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/copy.h"
#include "xfer/xfer.h"

/* The kernel moves at most this much per call on some versions; loop. */
static ssize_t cma_direct(pid_t peer, void *local, uint64_t remote, size_t len,
                          bool get)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(char *)local + done, len - done};
        struct iovec r = {(void *)(uintptr_t)(remote + done), len - done};
        ssize_t n = get ? process_vm_readv(peer, &l, 1, &r, 1, 0)
                        : process_vm_writev(peer, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EFAULT;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* Where the kernel's copy is slow at this transfer's distance (util/copy.h:
 * destination 1-31 bytes past the source modulo 4096), it goes through a
 * scratch buffer placed at the remote address's page offset - distance 0
 * for the kernel - and between scratch and user buffer by fy_copy, which
 * is fast at any distance: an extra copy of a piece that stays in the
 * cache, 3.5x faster than the direct call here at 64 KiB-1 MiB
 * (bench/README.md, "Copy distance"; xfer/bounce.c). */
static ssize_t cma_copy(pid_t peer, void *local, uint64_t remote, size_t len,
                        bool get)
{
    uint64_t here = (uint64_t)(uintptr_t)local;
    if (!fy_copy_cma_slow(get ? here : remote, get ? remote : here, len))
        return cma_direct(peer, local, remote, len, get);
    return fy_xfer_bounced(cma_direct, peer, local, remote, len, get, true);
}

static uint64_t probe_word = 0x46657272794f4b21ull;

static bool cma_probe(char *why, size_t whylen)
{
    uint64_t got = 0;
    ssize_t n = cma_copy(getpid(), &got, (uint64_t)(uintptr_t)&probe_word,
                         sizeof(got), true);
    if (n == (ssize_t)sizeof(got) && got == probe_word) {
        if (why && whylen)
            why[0] = '\0';
        return true;
    }
    if (why && whylen)
        snprintf(why, whylen, "process_vm_readv failed: %s%s",
                 strerror(n < 0 ? (int)-n : EIO),
                 n == -EPERM    ? " (ptrace restrictions: see "
                                  "/proc/sys/kernel/yama/ptrace_scope, "
                                  "seccomp or container policy)"
                 : n == -ENOSYS ? " (kernel without CONFIG_CROSS_MEMORY_ATTACH)"
                                : "");
    return false;
}

const struct fy_xfer_ops fy_xfer_cma_ops = {
    .name = "cma",
    .summary = "single copy with process_vm_readv/process_vm_writev",
    .one_sided = true,
    .probe = cma_probe,
    .copy_local = fy_xfer_copy_libc,
    .copy_remote = cma_copy,
};
