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
struct sh {
    _Atomic long arr[8][16];
    _Atomic long rel[16];
    _Atomic long cnt[16];
    _Atomic long gen[16];
};
int P = 4, N = 20000, alg;
static void waitv(_Atomic long *p, long v, int spin)
{
    int n = 0;
    while (atomic_load(p) < v) {
        if (++n > spin)
            sched_yield();
    }
}
int main(int argc, char **argv)
{
    alg = atoi(argv[1]);
    int spin = argc > 2 ? atoi(argv[2]) : 0;
    P = argc > 3 ? atoi(argv[3]) : 4;
    struct sh *s = mmap(0, sizeof *s, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int me = 0;
    for (int i = 1; i < P; i++)
        if (fork() == 0) {
            me = i;
            break;
        }
    double t0 = 0;
    for (long it = 1; it <= N; it++) {
        if (it == 1000)
            t0 = now();
        if (alg == 0) { /* gather at 0, release */
            if (me) {
                atomic_store(&s->arr[me][0], it);
                waitv(&s->rel[0], it, spin);
            } else {
                for (int r = 1; r < P; r++)
                    waitv(&s->arr[r][0], it, spin);
                atomic_store(&s->rel[0], it);
            }
        } else { /* counter, last arriver releases */
            long c = atomic_fetch_add(&s->cnt[0], 1) + 1;
            if (c == it * P)
                atomic_store(&s->gen[0], it);
            else
                waitv(&s->gen[0], it, spin);
        }
    }
    double t1 = now();
    if (me == 0) {
        for (int i = 1; i < P; i++)
            wait(0);
        printf("alg %d spin %d P %d: %.2f us\n", alg, spin, P,
               (t1 - t0) / (N - 1000) * 1e6);
    }
    return 0;
}
