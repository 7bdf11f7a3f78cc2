#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
    int n = 200000;
    int pin = argc > 1 ? atoi(argv[1]) : 1;
    _Atomic long *c = mmap(0, 4096, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    *c = 0;
    pid_t p = fork();
    int me = p == 0;
    if (pin) {
        cpu_set_t s;
        CPU_ZERO(&s);
        CPU_SET(0, &s);
        sched_setaffinity(0, sizeof s, &s);
    }
    double t0 = now();
    for (long i = 0; i < n; i++) {
        long want = 2 * i + me;
        while (atomic_load(c) != want)
            sched_yield();
        atomic_store(c, want + 1);
    }
    double t1 = now();
    if (!me) {
        wait(0);
        printf("per handoff %.3f us\n", (t1 - t0) / (2.0 * n) * 1e6);
    }
    return 0;
}
