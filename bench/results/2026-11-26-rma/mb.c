/* SPDX-License-Identifier: MIT */
/* Throwaway microbenchmark behind bench/README.md's 2026-11-26 one-sided notes
 * (not built by CMake): gcc -O2 mb.c. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
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
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(void)
{
    size_t max = 4u << 20;
    char *buf = aligned_alloc(4096, max);
    memset(buf, 1, max);
    char *loc = aligned_alloc(4096, max);
    memset(loc, 2, max);
    int p[2];
    pipe(p);
    pid_t c = fork();
    if (!c) {
        close(p[1]);
        char x;
        read(p[0], &x, 1);
        _exit(0);
    }
    char path[64];
    snprintf(path, 64, "/proc/%d/mem", c);
    int fd = open(path, O_RDWR);
    size_t sizes[] = {8,     64,    512,    4096,    6144,   8192,
                      16384, 65536, 262144, 1 << 20, 4 << 20};
    for (int si = 0; si < (int)(sizeof(sizes) / sizeof(sizes[0])); si++) {
        size_t s = sizes[si];
        int it = s <= 4096     ? 20000
                 : s <= 65536  ? 4000
                 : s <= 262144 ? 1000
                               : 200;
        double best[4] = {1e9, 1e9, 1e9, 1e9};
        for (int rep = 0; rep < 5; rep++)
            for (int m = 0; m < 4; m++) {
                double t0 = now();
                for (int i = 0; i < it; i++) {
                    struct iovec l = {loc, s}, r = {buf, s};
                    switch (m) {
                    case 0:
                        process_vm_writev(c, &l, 1, &r, 1, 0);
                        break;
                    case 1:
                        process_vm_readv(c, &l, 1, &r, 1, 0);
                        break;
                    case 2:
                        pwrite(fd, loc, s, (off_t)(uintptr_t)buf);
                        break;
                    case 3:
                        pread(fd, loc, s, (off_t)(uintptr_t)buf);
                        break;
                    }
                }
                double us = (now() - t0) / it * 1e6;
                if (us < best[m])
                    best[m] = us;
            }
        printf("%8zu  cma_w %8.3f us  cma_r %8.3f  pm_w %8.3f  pm_r %8.3f   "
               "(MB/s cma_w %.0f cma_r %.0f pm_w %.0f pm_r %.0f)\n",
               s, best[0], best[1], best[2], best[3], s / best[0], s / best[1],
               s / best[2], s / best[3]);
    }
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    return 0;
}
