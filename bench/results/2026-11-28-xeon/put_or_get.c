/* SPDX-License-Identifier: MIT */
/* Who should copy a message between two cores, in the cache states an
 * application leaves: the sender has just filled its buffer (memset), the
 * receiver has just read its receive buffer. Mode 0: the receiver reads
 * with process_vm_readv; mode 1: the sender writes with process_vm_writev.
 * Two forked processes pinned to cores 0 and 1; prints the mean per copy.
 * Build: gcc -O2 -o put_or_get put_or_get.c; run: ./put_or_get SIZE ITERS
 * MODE (bench/README.md, "Mixed traffic at 8 ranks: knobs measured"). */
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
    void *src[2], *dst[2];
    pid_t pid[2];
};
int main(int argc, char **argv)
{
    size_t n = strtoul(argv[1], 0, 0);
    int iters = atoi(argv[2]);
    int mode = atoi(
        argv[3]); /* 0: rank1 reads from rank0 ; 1: rank0 writes into rank1 */
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
    s->src[me] = src;
    s->dst[me] = dst;
    s->pid[me] = getpid();
    atomic_fetch_add(&s->go[me], 1);
    while (atomic_load(&s->go[1 - me]) < 1)
        ;
    double t = 0;
    for (int it = 0; it < iters + 50; it++) {
        long base = 3L * it + 2;
        if (me == 0)
            memset(src, it, n);
        else {
            volatile long x = 0;
            for (size_t k = 0; k < n; k += 64)
                x += dst[k];
        }
        atomic_store(&s->go[me], base);
        while (atomic_load(&s->go[1 - me]) < base)
            ;
        double t0 = now();
        if (mode == 0 && me == 1) {
            struct iovec l = {dst, n}, r = {s->src[0], n};
            process_vm_readv(s->pid[0], &l, 1, &r, 1, 0);
        }
        if (mode == 1 && me == 0) {
            struct iovec l = {src, n}, r = {s->dst[1], n};
            process_vm_writev(s->pid[1], &l, 1, &r, 1, 0);
        }
        double t1 = now();
        if (it >= 50)
            t += t1 - t0;
        atomic_store(&s->go[me], base + 1);
        while (atomic_load(&s->go[1 - me]) < base + 1)
            ;
    }
    if ((mode == 0 && me == 1) || (mode == 1 && me == 0))
        printf("n=%zu mode=%s avg %.2f us\n", n,
               mode ? "sender writes" : "receiver reads", t / iters * 1e6);
    if (me == 0)
        wait(0);
    return 0;
}
