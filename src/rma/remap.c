/* SPDX-License-Identifier: MIT */
/* Windows on user memory made shared (MPI_Win_create): the pages that hold
 * a rank's window are moved, contents and addresses unchanged, onto a
 * memfd that the other ranks of the window map too. Their puts, gets and
 * accumulates then are loads, stores and atomics, as on MPI_Win_allocate's
 * memory (seed 003 §3.1: processes that share a data structure need no
 * copy): no system call, no help from the target.
 *
 * Invariants:
 * - M1 (eligible): only pages of private writable mappings that are not
 *   the stack, huge pages or a device, in a process with one thread (a
 *   store by another thread between the copy into the memfd and the
 *   mapping over it would be lost). Anything else keeps its memory as it
 *   is; the window then uses the single-copy mechanisms (win.c).
 * - M2 (nothing lost): a chunk is copied into the memfd before the memfd
 *   is mapped over it (MAP_FIXED); when a step fails, what was already
 *   moved is mapped back privately from the memfd, which holds it.
 * - M3 (restore, at Win_free once no member reaches in any more): pages
 *   wholly inside the window get private anonymous memory again, filled
 *   from the memfd at a scratch address and moved into place by one
 *   mremap per chunk (never a moment without the contents), the memfd's
 *   pages freed as it goes. The (at most two) edge pages, which may hold
 *   other data that another thread uses meanwhile, are replaced by one
 *   private mapping of the memfd each: copy-on-write of the same bytes,
 *   so no store to them is lost; they keep one page of the memfd each.
 * - M4: a window uses the mappings only when every member made and mapped
 *   them (win.c agrees): accumulate atomicity needs every origin to use
 *   the same discipline (atomic.c).
 * - M5 (fork): a child forked while such a window lives gets private
 *   anonymous copies of its pages (pthread_atfork), as fork gives it of
 *   any other memory: it never shares them with this process or the
 *   window's other ranks. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rma/rma.h"
#include "util/util.h"
#include "xfer/pin.h"

#define REMAP_CHUNK ((size_t)2 << 20)
#define REMAP_NAME "ferry-win-user"

/* Every range moved and not yet given back (M5), under s_lock; fork holds
 * the lock across (prepare / parent / child), so the child's list is
 * whole. */
static struct fy_rma_remap *s_moved;
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t s_atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&s_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&s_lock);
}

/* [at, at + n) of r's range given private anonymous memory holding the
 * same bytes: filled from the memfd at a scratch address, then moved over
 * the shared pages by one mremap (never a moment without the contents).
 * 0 or a negative errno (the pages then stay shared). */
static int move_private(const struct fy_rma_remap *r, uintptr_t at, size_t n)
{
    void *tmp = mmap(NULL, n, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp == MAP_FAILED)
        return -errno;
    int err = 0;
    if (pread(r->fd, tmp, n, (off_t)(at - r->lo)) != (ssize_t)n)
        err = -EIO;
    else if (mremap(tmp, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)at) ==
             MAP_FAILED)
        err = -errno;
    if (err)
        munmap(tmp, n);
    return err;
}

/* M5, in the child (one thread, so the edge pages too): each moved range
 * made private; the child forgets the memfd. One that fails stays shared:
 * nothing better to do there. */
static void fork_child(void)
{
    for (struct fy_rma_remap *r = s_moved; r; r = r->next)
        if (move_private(r, r->lo, r->len) == 0) {
            close(r->fd);
            r->fd = -1;
        }
    s_moved = NULL;
    pthread_mutex_unlock(&s_lock);
}

static void atfork_register(void)
{
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static size_t pg(void)
{
    static size_t p;
    if (!p)
        p = (size_t)sysconf(_SC_PAGESIZE);
    return p;
}

/* M1: the number of threads of this process is one. */
static bool single_threaded(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n == 1;
}

/* M1: [lo, hi) is covered, without a gap, by private writable mappings of
 * anonymous memory, the heap, a regular file's private copy (a program's
 * data) or an earlier window's memfd. */
static bool eligible(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    uintptr_t at = lo;
    bool ok = true;
    while (ok && at < hi && getline(&line, &cap, f) > 0) {
        uintptr_t s, e;
        char perms[8] = "";
        unsigned long long off, ino;
        unsigned maj, mnr;
        int path_at = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %x:%x %llu %n", &s,
                   &e, perms, &off, &maj, &mnr, &ino, &path_at) < 7) {
            ok = false;
            break;
        }
        if (e <= at)
            continue;
        if (s > at) {
            ok = false; /* a hole */
            break;
        }
        const char *path = line + path_at;
        ok = !strncmp(perms, "rw-p", 4) &&
             (!*path || *path == '\n' || !strncmp(path, "[heap]", 6) ||
              (*path == '/' && strncmp(path, "/dev/", 5) &&
               !strstr(path, "huge")));
        at = e;
    }
    free(line);
    fclose(f);
    return ok && at >= hi;
}

/* Map [addr, addr + len) privately from fd at off (M2, M3's edges). */
static int map_private(uintptr_t addr, size_t len, int fd, off_t off)
{
    void *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_FIXED, fd, off);
    return p == MAP_FAILED ? -errno : 0;
}

int fy_rma_remap_own(void *base, size_t size, struct fy_rma_remap *r)
{
    r->fd = -1;
    r->lo = r->len = 0;
    r->head = r->tail = 0;
    if (size == 0)
        return 0;
    uintptr_t b = (uintptr_t)base, p = pg();
    if (b > UINTPTR_MAX - size - p)
        return -EINVAL;
    uintptr_t lo = b & ~(p - 1), hi = (b + size + p - 1) & ~(p - 1);
    if (!single_threaded() || !eligible(lo, hi))
        return -ENOTSUP;
    size_t len = hi - lo;
    int fd = memfd_create(REMAP_NAME, MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (ftruncate(fd, (off_t)len) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    size_t done = 0;
    int err = 0;
    while (done < len) {
        size_t n = FY_MIN(REMAP_CHUNK, len - done);
        /* The raw system call: the pages hold other objects' bytes too
         * (a sanitizer's pwrite would refuse to read their red zones). */
        ssize_t w =
            syscall(SYS_pwrite64, fd, (void *)(lo + done), n, (off_t)done);
        if (w != (ssize_t)n) {
            err = w < 0 ? -errno : -EIO;
            break;
        }
        void *m = mmap((void *)(lo + done), n, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED, fd, (off_t)done);
        if (m == MAP_FAILED) {
            err = -errno;
            done += n; /* the chunk is in the memfd: map it back too */
            break;
        }
        done += n;
    }
    if (err) {
        /* M2: everything moved so far is in the memfd. */
        if (done && map_private(lo, done, fd, 0) != 0)
            FY_ERROR("MPI_Win_create: cannot put window memory back at %p "
                     "(%zu bytes): %m",
                     (void *)lo, done);
        close(fd);
        return err;
    }
    /* Registrations of the old pages are stale (pin.h). */
    fy_pin_invalidate((void *)lo, len);
    r->fd = fd;
    r->lo = lo;
    r->len = len;
    pthread_once(&s_atfork_once, atfork_register);
    pthread_mutex_lock(&s_lock);
    r->next = s_moved;
    s_moved = r;
    pthread_mutex_unlock(&s_lock);
    /* Edge pages: shared with memory outside the window. */
    r->head = b != lo ? p : 0;
    r->tail = (b + size) != hi && hi - p >= lo + r->head ? p : 0;
    return 0;
}

void fy_rma_remap_restore(struct fy_rma_remap *r)
{
    if (r->fd < 0)
        return;
    pthread_mutex_lock(&s_lock);
    for (struct fy_rma_remap **pp = &s_moved; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    pthread_mutex_unlock(&s_lock);
    uintptr_t lo = r->lo, hi = r->lo + r->len;
    uintptr_t ilo = lo + r->head, ihi = hi - r->tail;
    int err = 0;
    if (r->head)
        err = map_private(lo, r->head, r->fd, 0);
    if (!err && r->tail)
        err = map_private(ihi, r->tail, r->fd, (off_t)(ihi - lo));
    for (uintptr_t at = ilo; !err && at < ihi;) {
        size_t n = FY_MIN(REMAP_CHUNK, ihi - at);
        err = move_private(r, at, n);
        if (!err)
            (void)fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                            (off_t)(at - lo), (off_t)n);
        at += n;
    }
    if (err) {
        /* Whatever is left shared stays correct, just not private. */
        FY_WARN("MPI_Win_free: window memory at %p stays shared with the "
                "window's memfd: %s",
                (void *)lo, strerror(-err));
    } else {
        fy_pin_invalidate((void *)lo, r->len);
    }
    close(r->fd);
    r->fd = -1;
}

void *fy_rma_remap_peer(pid_t pid, int fd, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
    int f = open(path, O_RDWR | O_CLOEXEC);
    if (f < 0)
        return NULL;
    struct stat st;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size < (uint64_t)len) {
        close(f); /* not the memfd it said, or shorter */
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    close(f);
    return p == MAP_FAILED ? NULL : p;
}
