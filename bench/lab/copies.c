/* SPDX-License-Identifier: MIT */
/* The copy routines compared in the seed's Fig. 2, rebuilt for a 2020s
 * x86-64: the C library's memcpy, the string instruction (rep movsb, fast
 * on CPUs with ERMS/FSRM), and AVX2 loads with non-temporal stores (the
 * seed's MMX non-temporal copy, one generation on). Chosen at run time
 * from the CPU's flags; absent ones are reported, not faked. */
#include <string.h>

#include "lab.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

/* CPUID leaf 7: EBX bit 9 is ERMS (enhanced rep movsb), EDX bit 4 FSRM. */
static bool cpu_has_erms(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return (b >> 9) & 1;
}

static void copy_movsb(void *dst, const void *src, size_t len)
{
    __asm__ volatile("rep movsb"
                     : "+D"(dst), "+S"(src), "+c"(len)
                     :
                     : "memory");
}

/* Non-temporal stores need 32-byte aligned destinations: the head up to
 * the first aligned address and the tail go through memcpy. Below 1 KiB
 * the set-up is not worth it and the line-fill avoidance does not matter. */
__attribute__((target("avx2"))) static void
copy_avx2_nt(void *dst, const void *src, size_t len)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (len < 1024) {
        memcpy(d, s, len);
        return;
    }
    size_t head = (32 - ((uintptr_t)d & 31)) & 31;
    memcpy(d, s, head);
    d += head;
    s += head;
    len -= head;
    for (; len >= 128; len -= 128, d += 128, s += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_stream_si256((__m256i *)d, a);
        _mm256_stream_si256((__m256i *)(d + 32), b);
        _mm256_stream_si256((__m256i *)(d + 64), c);
        _mm256_stream_si256((__m256i *)(d + 96), e);
    }
    /* Non-temporal stores are weakly ordered: fence before anyone (a flag
     * store that publishes the data) may observe the copy as done. */
    _mm_sfence();
    memcpy(d, s, len);
}
#endif

static void copy_libc(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

struct lab_copy lab_copies[3] = {
    {"libc memcpy", copy_libc, true, NULL},
    {"rep movsb", NULL, false, "not an x86-64 build"},
    {"avx2 nt", NULL, false, "not an x86-64 build"},
};

/* A routine that does not copy exactly is reported, never measured. */
static bool self_check(lab_copy_fn fn)
{
    enum { N = 100003 };
    static uint8_t src[N + 64], dst[N + 64];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)(i * 7 + 3);
    for (size_t so = 0; so < 3; so++)
        for (size_t d = 0; d < 3; d++) {
            memset(dst, 0xee, sizeof(dst));
            size_t len = N - so * 1000 - d;
            fn(dst + d * 13, src + so * 5, len);
            if (memcmp(dst + d * 13, src + so * 5, len) ||
                (d * 13 + len < sizeof(dst) && dst[d * 13 + len] != 0xee))
                return false;
        }
    return true;
}

void lab_copies_init(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    lab_copies[1].fn = copy_movsb;
    lab_copies[1].ok = true;
    lab_copies[1].why = cpu_has_erms()
                            ? NULL
                            : "works, but the CPU lacks ERMS (slow microcode)";
    if (__builtin_cpu_supports("avx2")) {
        lab_copies[2].fn = copy_avx2_nt;
        lab_copies[2].ok = true;
        lab_copies[2].why = NULL;
    } else {
        lab_copies[2].why = "the CPU has no AVX2";
    }
#endif
    for (int v = 0; v < 3; v++)
        if (lab_copies[v].ok && !self_check(lab_copies[v].fn)) {
            lab_copies[v].ok = false;
            lab_copies[v].why = "failed the self-check (copies wrongly)";
        }
}
