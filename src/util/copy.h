/* SPDX-License-Identifier: MIT */
/* Copies that avoid this CPU's slow distances.
 *
 * On some x86-64 processors (the AMD EPYC of the development machine, in
 * its virtual machine) `rep movsb` - what glibc's memcpy uses from about
 * 2 KiB to a few hundred KiB, and what the kernel's copies to and from
 * user memory use, process_vm_readv/writev included - runs 4-20x slower
 * when the destination is 1 to 31 bytes ahead of the source modulo 4096
 * (measured: memcpy of 4-256 KiB 2-3 GB/s instead of 40-90, cma 2.1
 * GB/s instead of 9.2; bench/README.md, "Copy distance"). Two buffers
 * of a program that differ only by a malloc header (16 bytes) land there
 * every time, on both sides of a message.
 *
 * fy_copy is memcpy, except at such a distance on a CPU where it was
 * measured slow at start-up (fy_copy_init): a forward loop of 16-byte
 * vector moves, which runs at full speed at any distance. The kernel's
 * copies cannot be changed: the cma mechanism bounces such transfers
 * through a scratch buffer at a harmless distance instead (xfer/cma.c,
 * fy_copy_cma_slow). FERRY_COPY_ALIAS=auto|on|off. */
#ifndef FY_UTIL_COPY_H
#define FY_UTIL_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/util.h"

/* Distances (destination minus source, modulo 4096) that are slow, and
 * the smallest copy that pays for them (glibc copies less with vector
 * moves; the kernel copies page by page, so any size). */
#define FY_COPY_ALIAS_LO 1u
#define FY_COPY_ALIAS_HI 31u
#define FY_COPY_ALIAS_MIN 1024u
/* glibc stops using rep movsb somewhere above this (512 KiB and 1 MiB
 * copies ran at full speed at every distance here): memcpy from there. */
#define FY_COPY_ALIAS_MAX ((size_t)512 << 10)

/* What start-up found (or FERRY_COPY_ALIAS forced): memcpy, and the
 * kernel's copies, slow at those distances on this CPU. */
extern bool fy_copy_alias;
extern bool fy_copy_cma_alias;

/* What fy_copy_init measured, for ferry-info and the laboratory: the best
 * of three 16 KiB copies at distance 0 and 16, in microseconds (0: not
 * measured). */
struct fy_copy_probe {
    double memcpy_us[2];
    double cma_us[2];
};
extern struct fy_copy_probe fy_copy_measured;

/* How often this process took the remedies: copies by the vector loop,
 * transfers bounced through scratch (MPI_T pvars ferry_copy_*, FERRY_STATS
 * lines "copy=loop", "copy=bounced"). Relaxed atomic adds; read as
 * snapshots. */
struct fy_copy_counts {
    uint64_t loops, loop_bytes;
    uint64_t bounces, bounce_bytes;
};
extern struct fy_copy_counts fy_copy_counts;

static inline void fy_copy_count(uint64_t *n, uint64_t *bytes, size_t len)
{
    __atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(bytes, (uint64_t)len, __ATOMIC_RELAXED);
}

static inline bool fy_copy_slow_distance(const void *dst, const void *src)
{
    uint32_t d = (uint32_t)(((uintptr_t)dst - (uintptr_t)src) & 4095u);
    return d - FY_COPY_ALIAS_LO <= FY_COPY_ALIAS_HI - FY_COPY_ALIAS_LO;
}

/* The vector loop (any distance, any alignment; no overlap). */
void fy_copy_vec(void *dst, const void *src, size_t n);
/* The same, counted: fy_copy's slow-distance branch. */
void fy_copy_slow(void *dst, const void *src, size_t n);
/* The same with non-temporal stores (on x86-64; memcpy elsewhere): for
 * large copies into memory no cache holds (rma/copy.c). */
void fy_copy_stream(void *dst, const void *src, size_t n);

static inline void fy_copy(void *dst, const void *src, size_t n)
{
    if (FY_UNLIKELY(fy_copy_alias) && n >= FY_COPY_ALIAS_MIN &&
        n < FY_COPY_ALIAS_MAX && fy_copy_slow_distance(dst, src))
        fy_copy_slow(dst, src, n);
    else
        memcpy(dst, src, n);
}

/* Whether a kernel copy of n bytes from src to dst (addresses in either
 * process) should be bounced. */
static inline bool fy_copy_cma_slow(uint64_t dst, uint64_t src, size_t n)
{
    return FY_UNLIKELY(fy_copy_cma_alias) && n >= FY_COPY_ALIAS_MIN &&
           fy_copy_slow_distance((const void *)(uintptr_t)dst,
                                 (const void *)(uintptr_t)src);
}

/* Read FERRY_COPY_ALIAS and, under auto, time memcpy and a
 * process_vm_readv of this process at distances 0 and 16 (about 0.1 ms).
 * Needs fy_env_load(). Returns 0 or -EINVAL (logged). */
int fy_copy_init(void);

#endif
