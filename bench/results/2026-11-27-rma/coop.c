#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
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
struct ctl {
    _Atomic int go, ack, ready;
    char *abuf, *bbuf;
    pid_t apid;
    size_t n;
    double frac;
};
int main(int argc, char **argv)
{
    size_t n = (argc > 1 ? atol(argv[1]) : 1024) << 10;
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    struct ctl *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *a = malloc(n);
    memset(a, 1, n);
    c->abuf = a;
    c->apid = getpid();
    c->n = n;
    pid_t b = fork();
    if (b == 0) {
        char *bb = malloc(n);
        memset(bb, 2, n);
        c->bbuf = bb;
        atomic_store(&c->ready, 1);
        for (int k = 1;; k++) {
            while (atomic_load(&c->go) != k)
                ;
            size_t h = n / 2;
            struct iovec l = {bb + h, n - h}, r = {c->abuf + h, n - h};
            process_vm_readv(c->apid, &l, 1, &r, 1, 0);
            atomic_store(&c->ack, k);
        }
    }
    while (!atomic_load(&c->ready))
        ;
    int k = 0;
    for (int rep = 0; rep < 3; rep++)
        for (int mode = 0; mode < 3; mode++) {
            double t0 = now();
            for (int it = 0; it < iters; it++) {
                if (mode == 0) {
                    struct iovec l = {a, n}, r = {c->bbuf, n};
                    process_vm_writev(b, &l, 1, &r, 1, 0);
                } else if (mode == 1) {
                    k++;
                    atomic_store(&c->go, k);
                    struct iovec l = {a, n / 2}, r = {c->bbuf, n / 2};
                    process_vm_writev(b, &l, 1, &r, 1, 0);
                    while (atomic_load(&c->ack) != k)
                        ;
                } else {
                    struct iovec l = {a, n}, r = {c->bbuf, n};
                    process_vm_readv(b, &l, 1, &r, 1, 0);
                }
            }
            double t = now() - t0;
            printf("%s %zu KiB: %.0f MB/s\n",
                   mode == 1 ? "coop "
                   : mode    ? "read "
                             : "write",
                   n >> 10, (double)n * iters / t / 1e6);
        }
    kill(b, 9);
    wait(NULL);
    return 0;
}
