/* SPDX-License-Identifier: MIT */
/* Throwaway microbenchmark behind bench/README.md's 2026-11-26 one-sided notes
 * (not built by CMake): gcc -O2 nt.c. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void nt_copy(void *d, const void *s, size_t n)
{
    __m128i *dd = d;
    const __m128i *ss = s;
    for (size_t i = 0; i < n / 16; i += 4) {
        __m128i a = _mm_loadu_si128(ss + i), b = _mm_loadu_si128(ss + i + 1),
                c = _mm_loadu_si128(ss + i + 2),
                e = _mm_loadu_si128(ss + i + 3);
        _mm_stream_si128(dd + i, a);
        _mm_stream_si128(dd + i + 1, b);
        _mm_stream_si128(dd + i + 2, c);
        _mm_stream_si128(dd + i + 3, e);
    }
    _mm_sfence();
}
int main(void)
{
    size_t sizes[] = {1 << 20, 4 << 20};
    char *s = aligned_alloc(4096, 64 << 20), *d = aligned_alloc(4096, 64 << 20);
    memset(s, 1, 64 << 20);
    memset(d, 2, 64 << 20);
    for (int si = 0; si < 2; si++) {
        size_t n = sizes[si];
        for (int win = 0; win < 2; win++) { /* win=1: 16 different dst buffers
                                               like a window of puts */
            double best[2] = {1e9, 1e9};
            for (int rep = 0; rep < 7; rep++)
                for (int m = 0; m < 2; m++) {
                    double t0 = cpu();
                    for (int i = 0; i < 32; i++) {
                        char *dst = d + (win ? (i % 8) * n : 0);
                        if (m)
                            nt_copy(dst, s, n);
                        else
                            memcpy(dst, s, n);
                    }
                    double t = (cpu() - t0) / 32;
                    if (t < best[m])
                        best[m] = t;
                }
            printf("%zu KiB %s: memcpy %.0f MB/s  nt %.0f MB/s\n", n >> 10,
                   win ? "8 dsts" : "1 dst", n / best[0] / 1e6,
                   n / best[1] / 1e6);
        }
    }
}
