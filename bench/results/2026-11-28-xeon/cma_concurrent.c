/* SPDX-License-Identifier: MIT */
/* Two processes (fork), each pinned to its core, read each other's buffer
 * with process_vm_readv at the same moment (mode 0) or only one reads (mode
 * 2), synchronised by a shared counter; prints the mean time per read.
 * Build: gcc -O2 -o cma_concurrent cma_concurrent.c
 * Run: ./cma_concurrent SIZE ITERS MODE (bench/README.md, "Exchanges, both
 * ways at once"). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
struct sh {
    _Atomic long go[2];
    void *buf[2];
    pid_t pid[2];
};
int main(int argc, char **argv)
{
    size_t n = strtoul(argv[1], 0, 0);
    int iters = atoi(argv[2]);
    int mode = atoi(argv[3]); /* 0 concurrent, 1 alternating */
    struct sh *s = mmap(0, 4096, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int me = fork() == 0 ? 1 : 0;
    cpu_set_t c;
    CPU_ZERO(&c);
    CPU_SET(me, &c);
    sched_setaffinity(0, sizeof c, &c);
    char *src = aligned_alloc(4096, n), *dst = aligned_alloc(4096, n);
    memset(src, me + 1, n);
    memset(dst, 0, n);
    s->buf[me] = src;
    s->pid[me] = getpid();
    atomic_fetch_add(&s->go[me], 1);
    while (atomic_load(&s->go[1 - me]) < 1)
        ;
    double t = 0;
    for (int it = 0; it < iters + 100; it++) {
        /* barrier: round it */
        long target = it + 2;
        atomic_store(&s->go[me], target);
        while (atomic_load(&s->go[1 - me]) < target)
            ;
        if (mode == 1 && me == 1) { /* wait for rank 0 to finish its read */
            while (atomic_load(&s->go[0]) < target + 0)
                ;
        }
        double t0 = now();
        if (mode == 0 || mode == 1 || me == 0) {
            struct iovec l = {dst, n}, r = {s->buf[1 - me], n};
            if (process_vm_readv(s->pid[1 - me], &l, 1, &r, 1, 0) !=
                (ssize_t)n) {
                perror("readv");
                return 1;
            }
            memcpy(src, dst, 64); /* touch */
        }
        double t1 = now();
        if (it >= 100)
            t += t1 - t0;
    }
    printf("rank %d n=%zu mode=%d avg %.2f us\n", me, n, mode, t / iters * 1e6);
    if (me == 0)
        wait(0);
    return 0;
}
