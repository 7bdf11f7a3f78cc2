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
#include "util/copy.h"
#include "util/util.h"

void fy_rma_copy_large(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    long long nt = fy_env_int(FY_ENV_RMA_NT_MIN);
    if (nt > 0 && n >= (size_t)nt && n >= FY_RMA_COPY_SMALL) {
        fy_copy_stream(dst, src, n);
        return;
    }
#endif
    fy_copy(dst, src, n);
}
