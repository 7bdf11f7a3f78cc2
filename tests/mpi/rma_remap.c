/* SPDX-License-Identifier: MIT */
/* Windows on user memory that Ferry moves onto shared pages
 * (src/rma/remap.c; FERRY_RMA_REMAP, only with FERRY_XFER=auto):
 * 1. every rank's window starts and ends inside pages it shares with other
 *    data (a block from mmap, window at offset 100): on Ferry with
 *    FERRY_XFER unset the window's pages are shared (a memfd mapping in
 *    /proc/self/maps) and not with a forced mechanism;
 * 2. under lock_all every rank puts a block into every other rank's
 *    window and adds 1 to a counter of each, while the owner changes the
 *    bytes around its window; a value the owner stores itself is read back
 *    by the others with MPI_Get. Every block, counter and neighbour byte
 *    is checked;
 * 3. after MPI_Win_free the memory holds the same bytes, the pages wholly
 *    inside the window are private anonymous memory again, and writes to
 *    every byte stay this process's own;
 * 4. 30 create/put/free rounds on the same memory (as OSU's benchmarks
 *    do): contents right each time, no descriptor left open;
 * 5. a window created on memory of an MPI_Win_allocate_shared window
 *    (already shared) keeps that sharing: a put through it is seen through
 *    the shared window's pointer by every rank;
 * 6. a window on the stack (never moved) works as before;
 * 8. (run before 7) a child forked while a window lives sees its bytes
 *    and writes over them without the parent or the peers seeing it;
 * 7. two windows on the same buffer at once (the second finds the pages
 *    already shared and keeps them as they are): puts through either are
 *    seen through the other, also after the first is freed.
 * Open MPI 4.1.4 passes it; MPICH 4.0.2 fails phase 2 (its Get returns
 * the bytes from before the owner's store, and puts issued right after
 * the window's creation are lost, as the one-sided issue found). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mpitest.h"

#define OFF 100 /* window start inside its first page */

static size_t page;

/* Whether addr lies in a shared mapping of Ferry's window memfd (want
 * shared) or in a private anonymous one (want !shared). */
static bool mapped_as(const void *addr, bool shared)
{
    FILE *f = fopen("/proc/self/maps", "r");
    MT_CHECK(f != NULL, "cannot read /proc/self/maps");
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        uintptr_t s, e;
        char perms[8];
        unsigned long long ino;
        int at = 0;
        if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %llu %n", &s, &e, perms, &ino,
                   &at) < 4)
            continue;
        if ((uintptr_t)addr < s || (uintptr_t)addr >= e)
            continue;
        found = true;
        const char *path = line + at;
        if (shared)
            found = perms[3] == 's' && strstr(path, "ferry-win-user") != NULL;
        else
            found = perms[3] == 'p' && ino == 0;
    }
    fclose(f);
    return found;
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    MT_CHECK(d != NULL, "cannot list /proc/self/fd");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Whether this run should move window memory: Ferry, mechanism auto. */
static bool remap_expected(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    const char *x = getenv("FERRY_XFER"), *rm = getenv("FERRY_RMA_REMAP");
    return !strncmp(v, "Ferry", 5) && (!x || !*x || !strcmp(x, "auto")) &&
           (!rm || strcmp(rm, "0"));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t slot = 1000, wsize = 12 + (size_t)n * slot + 37;
    const size_t area_len = (OFF + wsize + page) / page * page + page;
    unsigned char *area = mmap(NULL, area_len, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MT_CHECK(area != MAP_FAILED, "mmap of %zu bytes failed", area_len);
    unsigned char *win_mem = area + OFF;
    size_t after = area_len - OFF - wsize;
    mt_fill(area, OFF, 10u + (uint32_t)me);
    mt_fill(win_mem + wsize, after, 20u + (uint32_t)me);
    memset(win_mem, 0, wsize);
    bool expect = remap_expected();

    /* ---- 1. the window's pages shared, or not ---- */
    MPI_Win win;
    MT_MPI(MPI_Win_create(win_mem, (MPI_Aint)wsize, 1, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    bool moved = n > 1 && mapped_as(win_mem + wsize / 2, true);
    if (n > 1 && expect)
        MT_CHECK(moved, "rank %d: window memory not in a shared mapping", me);
    if (!expect)
        MT_CHECK(!moved, "rank %d: window memory moved though FERRY_XFER=%s",
                 me, getenv("FERRY_XFER") ? getenv("FERRY_XFER") : "");
    MT_VERIFY(area, OFF, 10u + (uint32_t)me, "bytes before the window");
    MT_VERIFY(win_mem + wsize, after, 20u + (uint32_t)me,
              "bytes after the window");

    /* ---- 2. puts, accumulates, the owner's neighbours and own store ---- */
    unsigned char *blk = mt_malloc(slot);
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < n; t++) {
        mt_fill(blk, slot, (uint32_t)(1000 * t + me));
        MT_MPI(MPI_Put(blk, (int)slot, MPI_BYTE, t,
                       (MPI_Aint)(12 + (size_t)me * slot), (int)slot, MPI_BYTE,
                       win));
        long one = 1;
        /* Window offset 4: the counter sits at area + 104, 8-aligned. */
        MT_MPI(
            MPI_Accumulate(&one, 1, MPI_LONG, t, 4, 1, MPI_LONG, MPI_SUM, win));
        MT_MPI(MPI_Win_flush(t, win));
    }
    /* The owner rewrites its neighbours while the others reach in. */
    mt_fill(area, OFF, 30u + (uint32_t)me);
    mt_fill(win_mem + wsize, after, 40u + (uint32_t)me);
    /* Its own store into the window's last 37 bytes. */
    mt_fill(win_mem + 12 + (size_t)n * slot, 37, 50u + (uint32_t)me);
    MT_MPI(MPI_Win_sync(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_sync(win));
    unsigned char tail[37];
    int peer = (me + 1) % n;
    MT_MPI(MPI_Get(tail, 37, MPI_BYTE, peer, (MPI_Aint)(12 + (size_t)n * slot),
                   37, MPI_BYTE, win));
    MT_MPI(MPI_Win_flush(peer, win));
    MT_VERIFY(tail, 37, 50u + (uint32_t)peer, "the owner's own store, by Get");
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int o = 0; o < n; o++)
        MT_VERIFY(win_mem + 12 + (size_t)o * slot, slot,
                  (uint32_t)(1000 * me + o), "a put block");
    long count;
    memcpy(&count, win_mem + 4, sizeof(count));
    MT_EQ(count, (long)n, "the counter");

    /* ---- 3. after free: same bytes, private again ---- */
    unsigned char *copy = mt_malloc(area_len);
    memcpy(copy, area, area_len);
    MT_MPI(MPI_Win_free(&win));
    MT_CHECK(memcmp(copy, area, area_len) == 0,
             "rank %d: memory changed by MPI_Win_free", me);
    MT_VERIFY(area, OFF, 30u + (uint32_t)me, "bytes before, after free");
    MT_VERIFY(win_mem + wsize, after, 40u + (uint32_t)me,
              "bytes after, after free");
    /* The pages wholly inside the window. */
    uintptr_t ilo = ((uintptr_t)win_mem + page - 1) / page * page;
    if (moved && ilo + page <= (uintptr_t)win_mem + wsize)
        MT_CHECK(mapped_as((void *)ilo, false),
                 "rank %d: window pages not private after MPI_Win_free", me);
    mt_fill(area, area_len, 60u + (uint32_t)me);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_VERIFY(area, area_len, 60u + (uint32_t)me, "memory after free, own");

    /* ---- 4. create / put / free rounds on the same memory ---- */
    int fds = open_fds();
    for (int round = 0; round < 30; round++) {
        MT_MPI(MPI_Win_create(win_mem, (MPI_Aint)wsize, 1, MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
        MT_MPI(MPI_Win_fence(0, win));
        mt_fill(blk, slot, (uint32_t)(round * 7 + me));
        MT_MPI(MPI_Put(blk, (int)slot, MPI_BYTE, peer,
                       (MPI_Aint)(12 + (size_t)me * slot), (int)slot, MPI_BYTE,
                       win));
        MT_MPI(MPI_Win_fence(0, win));
        int from = (me + n - 1) % n;
        MT_VERIFY(win_mem + 12 + (size_t)from * slot, slot,
                  (uint32_t)(round * 7 + from), "a round's block");
        MT_MPI(MPI_Win_free(&win));
    }
    MT_EQ(open_fds(), fds, "open descriptors after 30 windows");
    MT_VERIFY(area, OFF, 60u + (uint32_t)me, "bytes before, after rounds");

    /* ---- 5. a window on memory that is already shared ---- */
    MPI_Comm node;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    int nme, nn;
    MPI_Comm_rank(node, &nme);
    MPI_Comm_size(node, &nn);
    MPI_Win sh, over;
    long *mine;
    MT_MPI(MPI_Win_allocate_shared((MPI_Aint)page, 1, MPI_INFO_NULL, node,
                                   &mine, &sh));
    mine[0] = 0;
    MT_MPI(MPI_Win_create(mine, (MPI_Aint)page, 1, MPI_INFO_NULL, node, &over));
    MT_MPI(MPI_Win_fence(0, over));
    long v = 7000 + nme;
    MT_MPI(MPI_Put(&v, 1, MPI_LONG, (nme + 1) % nn, 0, 1, MPI_LONG, over));
    MT_MPI(MPI_Win_fence(0, over));
    MT_MPI(MPI_Win_free(&over));
    MT_MPI(MPI_Win_sync(sh));
    MT_MPI(MPI_Barrier(node));
    MT_MPI(MPI_Win_sync(sh));
    for (int r = 0; r < nn; r++) {
        MPI_Aint sz;
        int du;
        long *p;
        MT_MPI(MPI_Win_shared_query(sh, r, &sz, &du, &p));
        MT_EQ(p[0], (long)(7000 + (r + nn - 1) % nn),
              "a put through a window on shared memory, seen by another rank");
    }
    MT_MPI(MPI_Barrier(node));
    MT_MPI(MPI_Win_free(&sh));
    MT_MPI(MPI_Comm_free(&node));

    /* ---- 6. a window on the stack ---- */
    unsigned char stack[3000];
    memset(stack, 0, sizeof(stack));
    MT_MPI(MPI_Win_create(stack, sizeof(stack), 1, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    MT_MPI(MPI_Win_fence(0, win));
    mt_fill(blk, 500, 90u + (uint32_t)me);
    MT_MPI(MPI_Put(blk, 500, MPI_BYTE, peer, 1000, 500, MPI_BYTE, win));
    MT_MPI(MPI_Win_fence(0, win));
    MT_VERIFY(stack + 1000, 500, 90u + (uint32_t)((me + n - 1) % n),
              "a put into a window on the stack");
    MT_MPI(MPI_Win_free(&win));

    /* ---- 8. a child forked while the window lives ---- */
    MT_MPI(MPI_Win_create(win_mem, (MPI_Aint)wsize, 1, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    mt_fill(win_mem, wsize, 130u + (uint32_t)me);
    pid_t child = fork();
    MT_CHECK(child >= 0, "fork failed");
    if (child == 0) {
        /* It sees the window's bytes as they were, and its stores stay
         * its own (the parent checks). No MPI here. */
        int bad = mt_find_bad(win_mem, wsize, 130u + (uint32_t)me) != wsize;
        memset(win_mem, 0xee, wsize);
        _exit(bad ? 3 : 0);
    }
    int status = 0;
    MT_CHECK(waitpid(child, &status, 0) == child, "waitpid failed");
    MT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "rank %d: the forked child saw other bytes (status 0x%x)", me,
             status);
    MT_VERIFY(win_mem, wsize, 130u + (uint32_t)me,
              "the window after a child wrote over its copy");
    /* The peers' view is the parent's: a get reads the parent's bytes. */
    MT_MPI(MPI_Win_fence(0, win));
    unsigned char far[64];
    MT_MPI(MPI_Get(far, 64, MPI_BYTE, peer, 0, 64, MPI_BYTE, win));
    MT_MPI(MPI_Win_fence(0, win));
    MT_VERIFY(far, 64, 130u + (uint32_t)peer, "a peer's window after its fork");
    MT_MPI(MPI_Win_free(&win));

    /* ---- 7. two windows on the same memory at once ---- */
    MPI_Win w2;
    memset(win_mem, 0, wsize);
    MT_MPI(MPI_Win_create(win_mem, (MPI_Aint)wsize, 1, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    MT_MPI(MPI_Win_create(win_mem + 8, (MPI_Aint)(wsize - 8), 1, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &w2));
    MT_MPI(MPI_Win_fence(0, win));
    MT_MPI(MPI_Win_fence(0, w2));
    mt_fill(blk, 500, 110u + (uint32_t)me);
    MT_MPI(MPI_Put(blk, 500, MPI_BYTE, peer, 100, 500, MPI_BYTE, win));
    mt_fill(blk + 500, 300, 120u + (uint32_t)me);
    MT_MPI(
        MPI_Put(blk + 500, 300, MPI_BYTE, peer, 1000 - 8, 300, MPI_BYTE, w2));
    MT_MPI(MPI_Win_fence(0, win));
    MT_MPI(MPI_Win_fence(0, w2));
    int from = (me + n - 1) % n;
    MT_VERIFY(win_mem + 100, 500, 110u + (uint32_t)from,
              "a put through the first of two windows on one buffer");
    MT_VERIFY(win_mem + 1000, 300, 120u + (uint32_t)from,
              "a put through the second of two windows on one buffer");
    /* Read back through the other window: both reach the same memory. */
    unsigned char back[300];
    MT_MPI(MPI_Get(back, 300, MPI_BYTE, peer, 1000, 300, MPI_BYTE, win));
    MT_MPI(MPI_Win_fence(0, win));
    MT_VERIFY(back, 300, 120u + (uint32_t)me,
              "bytes put through one window, read through the other");
    MT_MPI(MPI_Win_free(&win)); /* the first freed first */
    MT_MPI(MPI_Win_fence(0, w2));
    MT_MPI(MPI_Get(back, 300, MPI_BYTE, peer, 1000 - 8, 300, MPI_BYTE, w2));
    MT_MPI(MPI_Win_fence(0, w2));
    MT_VERIFY(back, 300, 120u + (uint32_t)me,
              "the second window after the first was freed");
    MT_MPI(MPI_Win_free(&w2));
    MT_VERIFY(win_mem + 1000, 300, 120u + (uint32_t)from,
              "the buffer after both windows");

    free(copy);
    free(blk);
    munmap(area, area_len);
    return mt_finish("rma_remap");
}
