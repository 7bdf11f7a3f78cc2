/* SPDX-License-Identifier: MIT */
/* Copies that avoid this CPU's slow distances (copy.h says why). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/copy.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

bool fy_copy_alias;
bool fy_copy_cma_alias;
struct fy_copy_probe fy_copy_measured;
struct fy_copy_counts fy_copy_counts;

#if defined(__x86_64__)
/* 64 bytes: four loads, then four stores (plain or streaming), so a store
 * never waits for a load of the same step, whatever the two addresses
 * share. */
static inline void copy64(char *d, const char *s, bool stream)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
    if (stream) {
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    } else {
        _mm_storeu_si128((__m128i *)(void *)d, a);
        _mm_storeu_si128((__m128i *)(void *)(d + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(d + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(d + 48), e);
    }
}
#endif

void fy_copy_vec(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t i = 0;
#if defined(__x86_64__)
    for (; i + 64 <= n; i += 64)
        copy64(d + i, s + i, false);
#endif
    /* The tail (below 64 bytes: no rep movsb), or everything elsewhere. */
    memcpy(d + i, s + i, n - i);
}

void fy_copy_slow(void *dst, const void *src, size_t n)
{
    fy_copy_count(&fy_copy_counts.loops, &fy_copy_counts.loop_bytes, n);
    fy_copy_vec(dst, src, n);
}

void fy_copy_stream(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t i = 0;
#if defined(__x86_64__)
    /* Streaming stores want 16-byte aligned destinations. */
    size_t head = FY_MIN((size_t)(-(uintptr_t)d & 15), n);
    fy_copy(d, s, head);
    i = head;
    for (; i + 64 <= n; i += 64)
        copy64(d + i, s + i, true);
    /* Streaming stores are weakly ordered: make them visible before
     * anything we do next (a flush's fence, an unlock's release). */
    _mm_sfence();
#endif
    fy_copy(d + i, s + i, n - i);
}

/* ---- start-up measurement ---------------------------------------------- */

#define PROBE_BYTES 16384u
#define PROBE_REPS 3
/* Slow means this many times the time at distance 0. */
#define PROBE_RATIO 2.0

static double best_memcpy(char *dst, const char *src)
{
    double best = 1e9;
    for (int r = 0; r < PROBE_REPS; r++) {
        double t0 = fy_wtime();
        memcpy(dst, src, PROBE_BYTES);
        __asm__ volatile("" ::: "memory"); /* the copy happens here */
        best = FY_MIN(best, fy_wtime() - t0);
    }
    return best * 1e6;
}

/* A process_vm_readv of our own memory; 0 if the call is refused. */
static double best_cma(char *dst, const char *src)
{
    double best = 1e9;
    for (int r = 0; r < PROBE_REPS; r++) {
        struct iovec l = {dst, PROBE_BYTES};
        struct iovec rv = {(void *)(uintptr_t)src, PROBE_BYTES};
        double t0 = fy_wtime();
        ssize_t n = process_vm_readv(getpid(), &l, 1, &rv, 1, 0);
        double t = fy_wtime() - t0;
        if (n != (ssize_t)PROBE_BYTES)
            return 0;
        best = FY_MIN(best, t);
    }
    return best * 1e6;
}

static void measure(bool cma)
{
    /* Source at a page boundary plus 1 KiB, destinations 32 KiB on at
     * the same offset and 16 bytes past it (about 0.1 ms in all: it runs
     * in every rank's MPI_Init). */
    size_t len = 3 * 32768;
    char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return;
    memset(buf, 0x5a, len); /* no page faults in the timed copies */
    char *src = buf + 1024, *near = buf + 32768 + 1024, *far = near + 16;
    struct fy_copy_probe *m = &fy_copy_measured;
    m->memcpy_us[0] = best_memcpy(near, src);
    m->memcpy_us[1] = best_memcpy(far, src);
    fy_copy_alias = m->memcpy_us[1] > PROBE_RATIO * m->memcpy_us[0];
    if (cma) {
        m->cma_us[0] = best_cma(near, src);
        m->cma_us[1] = best_cma(far, src);
        fy_copy_cma_alias =
            m->cma_us[0] > 0 && m->cma_us[1] > PROBE_RATIO * m->cma_us[0];
    }
    munmap(buf, len);
}

int fy_copy_init(void)
{
    const char *v = fy_env_str(FY_ENV_COPY_ALIAS);
    fy_copy_measured = (struct fy_copy_probe){0};
    if (!strcmp(v, "on")) {
        fy_copy_alias = fy_copy_cma_alias = true;
    } else if (!strcmp(v, "off")) {
        fy_copy_alias = fy_copy_cma_alias = false;
    } else if (!strcmp(v, "auto")) {
        fy_copy_alias = fy_copy_cma_alias = false;
        measure(!fy_env_int(FY_ENV_NO_CMA));
    } else {
        FY_ERROR("FERRY_COPY_ALIAS='%s' is not one of auto, on, off", v);
        return -EINVAL;
    }
    return 0;
}
