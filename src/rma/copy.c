/* SPDX-License-Identifier: MIT */
/* The copy behind puts and gets on windows in shared memory: memcpy, and
 * from FERRY_RMA_NT_MIN bytes on x86-64 a copy with non-temporal stores.
 * Large one-sided transfers usually write memory that no cache holds (the
 * OSU bandwidth tests put 32 buffers of 1-4 MiB into a 32-128 MiB window):
 * streaming stores skip reading the destination lines in first and leave
 * the caches to the source. Measured on the development machine (see
 * bench/README.md, "One-sided"): twice memcpy's rate at 4 MiB into
 * destinations beyond the last-level cache, 0.8x memcpy's at 1 MiB into
 * one destination that stays cached. glibc has its own threshold for this
 * but sizes it from the shared cache size the CPU reports, which virtual
 * machines often overstate (here: 192 MiB, so never). */
#include <stdint.h>
#include <string.h>

#include "rma/rma.h"
#include "util/util.h"
#include "util/copy.h"

#if defined(__x86_64__)
#include <emmintrin.h>

/* dst is 16-byte aligned, n a multiple of 64. */
static void stream_copy(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i b =
            _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
        __m128i c =
            _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
        __m128i d =
            _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_stream_si128((__m128i *)(void *)(dst + i), a);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 48), d);
    }
    /* Streaming stores are weakly ordered: make them visible before
     * anything we do next (a flush's fence, an unlock's release). */
    _mm_sfence();
}
#endif

void fy_rma_copy_large(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    long long nt = fy_env_int(FY_ENV_RMA_NT_MIN);
    if (nt > 0 && n >= (size_t)nt && n >= FY_RMA_COPY_SMALL) {
        char *d = dst;
        const char *s = src;
        size_t head = (size_t)(-(uintptr_t)d & 15);
        memcpy(d, s, head);
        size_t body = (n - head) & ~(size_t)63;
        stream_copy(d + head, s + head, body);
        memcpy(d + head + body, s + head + body, n - head - body);
        return;
    }
#endif
    fy_copy(dst, src, n);
}
