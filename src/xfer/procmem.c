/* SPDX-License-Identifier: MIT */
/* The seed's "Ptrace" class: read or write a peer's memory through
 * /proc/<pid>/mem with pread/pwrite, one copy, no help from the peer.
 * Modern kernels allow this without stopping the peer (the same
 * ptrace-read permission check as process_vm_readv), so the library uses
 * the file directly; fy_xfer_procmem_attach_copy keeps the seed's
 * attach-stop-copy-detach sequence for the laboratory to show its cost. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/copy.h"
#include "xfer/xfer.h"

/* Open files of peers' memory, one per pid: opening costs a path lookup
 * and a permission check, a copy should not pay it every time. */
struct pm_file {
    pid_t pid;
    int fd;
};
static struct pm_file *pm_files;
static int pm_nfiles, pm_cap;

static int pm_fd(pid_t pid)
{
    for (int i = 0; i < pm_nfiles; i++)
        if (pm_files[i].pid == pid)
            return pm_files[i].fd;
    char path[32];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    if (pm_nfiles == pm_cap) {
        int cap = pm_cap ? 2 * pm_cap : 8;
        struct pm_file *n = realloc(pm_files, (size_t)cap * sizeof(*n));
        if (!n) {
            close(fd);
            return -ENOMEM;
        }
        pm_files = n;
        pm_cap = cap;
    }
    pm_files[pm_nfiles++] = (struct pm_file){pid, fd};
    return fd;
}

/* The process behind a cached file is gone (its pid may be reused by a
 * stranger later: never keep the file). */
static void pm_forget(pid_t pid)
{
    for (int i = 0; i < pm_nfiles; i++)
        if (pm_files[i].pid == pid) {
            close(pm_files[i].fd);
            pm_files[i] = pm_files[--pm_nfiles];
            return;
        }
}

static void pm_finalize(void)
{
    for (int i = 0; i < pm_nfiles; i++)
        close(pm_files[i].fd);
    free(pm_files);
    pm_files = NULL;
    pm_nfiles = pm_cap = 0;
}

static ssize_t pm_direct(pid_t peer, void *local, uint64_t remote, size_t len,
                         bool get)
{
    int fd = pm_fd(peer);
    if (fd < 0)
        return fd;
    size_t done = 0;
    while (done < len) {
        /* The file offset is the peer's virtual address. One call moves at
         * most ~2 GiB; a range the peer has not mapped ends the copy
         * short, and the next call reports EIO. */
        off_t at = (off_t)(remote + done);
        ssize_t n =
            get ? pread(fd, (char *)local + done, len - done, at)
                : pwrite(fd, (const char *)local + done, len - done, at);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0) {
            /* The peer's address space is gone: it exited. */
            pm_forget(peer);
            return -ESRCH;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* Slow distances (util/copy.h): the kernel copies through a page of its
 * own, page by page, so a read is slow when the local buffer starts 1-31
 * bytes into a page or the remote one 1-31 bytes before a page's end, and
 * a write the other way round. Then the first bytes up to the remote
 * page boundary go direct (at most a page), and the rest through a
 * page-aligned scratch buffer (xfer/bounce.c) - distance 0 for both of
 * the kernel's copies - with fy_copy between scratch and user buffer. */
static bool pm_slow(const void *local, uint64_t remote, size_t len, bool get)
{
    if (!fy_copy_cma_alias || len < FY_COPY_ALIAS_MIN)
        return false;
    const void *r = (const void *)(uintptr_t)remote;
    return get ? fy_copy_slow_distance(local, NULL) ||
                     fy_copy_slow_distance(NULL, r)
               : fy_copy_slow_distance(NULL, local) ||
                     fy_copy_slow_distance(r, NULL);
}

static ssize_t pm_copy(pid_t peer, void *local, uint64_t remote, size_t len,
                       bool get)
{
    if (!pm_slow(local, remote, len, get))
        return pm_direct(peer, local, remote, len, get);
    size_t head = FY_MIN((size_t)(-remote & 4095u), len);
    ssize_t k = head ? pm_direct(peer, local, remote, head, get) : 0;
    if (k != (ssize_t)head)
        return k < 0 ? k : -EFAULT;
    if (head == len)
        return (ssize_t)len;
    k = fy_xfer_bounced(pm_direct, peer, (uint8_t *)local + head, remote + head,
                        len - head, get, false);
    return k < 0 ? k : (ssize_t)len;
}

static uint64_t probe_word = 0x46657272792d504dull;

static bool pm_probe(char *why, size_t whylen)
{
    uint64_t got = 0;
    ssize_t n = pm_copy(getpid(), &got, (uint64_t)(uintptr_t)&probe_word,
                        sizeof(got), true);
    pm_forget(getpid()); /* a fork would inherit a file of the parent */
    if (n == (ssize_t)sizeof(got) && got == probe_word) {
        if (why && whylen)
            why[0] = '\0';
        return true;
    }
    if (why && whylen)
        snprintf(why, whylen, "reading /proc/self/mem failed: %s%s",
                 strerror(n < 0 ? (int)-n : EIO),
                 n == -EACCES || n == -EPERM
                     ? " (ptrace restrictions, seccomp or a read-only /proc)"
                 : n == -ENOENT ? " (/proc not mounted)"
                                : "");
    return false;
}

const struct fy_xfer_ops fy_xfer_procmem_ops = {
    .name = "procmem",
    .summary = "single copy with pread/pwrite on /proc/<pid>/mem "
               "(the seed's ptrace class)",
    .one_sided = true,
    .probe = pm_probe,
    .finalize = pm_finalize,
    .copy_local = fy_xfer_copy_libc,
    .copy_remote = pm_copy,
};

ssize_t fy_xfer_procmem_attach_copy(pid_t peer, void *local, uint64_t remote,
                                    size_t len, bool get)
{
    if (peer == getpid())
        return -EPERM; /* a process cannot trace itself */
    /* PTRACE_SEIZE + PTRACE_INTERRUPT rather than PTRACE_ATTACH: the stop
     * is the same, but ATTACH queues a SIGSTOP, and if another signal's
     * stop is reported first that SIGSTOP would stop the peer again after
     * we detach. */
    if (ptrace(PTRACE_SEIZE, peer, NULL, NULL) != 0)
        return errno == ESRCH ? -ESRCH : -errno;
    if (ptrace(PTRACE_INTERRUPT, peer, NULL, NULL) != 0) {
        int err = errno;
        ptrace(PTRACE_DETACH, peer, NULL, NULL);
        return -err;
    }
    int st = 0;
    for (;;) {
        pid_t w = waitpid(peer, &st, __WALL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            int err = errno;
            ptrace(PTRACE_DETACH, peer, NULL, NULL);
            return -err;
        }
        if (WIFEXITED(st) || WIFSIGNALED(st))
            return -ESRCH;
        if (WIFSTOPPED(st))
            break;
    }
    /* A stop for a real signal (not our interrupt) must hand the signal
     * back on detach, or the peer would never see it. */
    int sig = (st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP ? WSTOPSIG(st) : 0;
    ssize_t n = pm_copy(peer, local, remote, len, get);
    ptrace(PTRACE_DETACH, peer, NULL, (void *)(uintptr_t)sig);
    return n;
}
