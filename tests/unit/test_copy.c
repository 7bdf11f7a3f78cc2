/* SPDX-License-Identifier: MIT */
/* Copies at slow distances (util/copy.h, xfer/cma.c), byte-exact with
 * guard bytes around every destination:
 * - fy_copy with its vector loop forced on, and fy_copy_stream (the
 *   non-temporal copy of shared-window puts and gets), at every distance modulo
 * 4096 of a set that covers the slow window and its edges, for sizes around the
 * loop's 64-byte step and the 1 KiB floor;
 * - the cma and procmem mechanisms with the bounce forced on: gets and
 *   puts of this process's own memory (process_vm_readv/writev, and
 *   /proc/self/mem) at slow and harmless distances and remote page
 *   offsets, for sizes around the 256 KiB bounce piece;
 * - FERRY_COPY_ALIAS parsing: on, off, auto and a malformed value. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/copy.h"
#include "util/util.h"
#include "xfer/xfer.h"

#define GUARD 64
#define GUARD_BYTE 0xA5

static unsigned char pat(unsigned seed, size_t i)
{
    return (unsigned char)(seed * 13u + i * 31u + (i >> 9) + 1u);
}

static bool fill_check(const unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pat(seed, i))
            return false;
    return true;
}

static bool guards_ok(const unsigned char *dst, size_t len)
{
    for (size_t i = 1; i <= GUARD; i++)
        if (dst[-(ptrdiff_t)i] != GUARD_BYTE || dst[len + i - 1] != GUARD_BYTE)
            return false;
    return true;
}

/* Destination and source with (dst - src) % 4096 == dist. */
static void place(unsigned char *sbase, unsigned char *dbase, size_t dist,
                  size_t soff, unsigned char **src, unsigned char **dst)
{
    *src = sbase + GUARD + soff;
    size_t want = ((uintptr_t)*src + dist) & 4095u;
    size_t at = ((uintptr_t)(dbase + GUARD) & ~(uintptr_t)4095) + 4096 + want;
    *dst = (unsigned char *)at;
}

static const size_t dists[] = {0,  1,  2,  7,  8,  15,   16,   17,   24,  30,
                               31, 32, 33, 63, 64, 2048, 4064, 4080, 4095};
#define NDISTS FY_ARRAY_LEN(dists)

static void part_fy_copy(unsigned char *sbase, unsigned char *dbase)
{
    static const size_t sizes[] = {0,    1,    63,   64,   65,    1023,
                                   1024, 1025, 4095, 4096, 65537, 300000};
    fy_copy_alias = true;
    for (size_t k = 0; k < FY_ARRAY_LEN(sizes); k++) {
        size_t len = sizes[k];
        int bad = 0;
        for (size_t j = 0; j < NDISTS; j++) {
            unsigned char *src, *dst;
            place(sbase, dbase, dists[j], (j * 5) % 64, &src, &dst);
            unsigned seed = (unsigned)(k * 100 + j);
            for (size_t i = 0; i < len; i++)
                src[i] = pat(seed, i);
            memset(dst - GUARD, GUARD_BYTE, len + 2 * GUARD);
            fy_copy(dst, src, len);
            if (!fill_check(dst, len, seed) || !guards_ok(dst, len)) {
                tap_diag("fy_copy %zu B at distance %zu: %s", len, dists[j],
                         guards_ok(dst, len) ? "wrong bytes" : "guards HIT");
                bad++;
            }
        }
        TAP_OK(bad == 0,
               "fy_copy, vector loop on: %zu B exact at %zu distances, guards "
               "intact",
               len, NDISTS);
    }
    /* The loop itself, whatever the distance and size. */
    unsigned char *src, *dst;
    place(sbase, dbase, 16, 3, &src, &dst);
    for (size_t i = 0; i < 100003; i++)
        src[i] = pat(9, i);
    memset(dst - GUARD, GUARD_BYTE, 100003 + 2 * GUARD);
    fy_copy_vec(dst, src, 100003);
    TAP_OK(fill_check(dst, 100003, 9) && guards_ok(dst, 100003),
           "fy_copy_vec: 100003 B at distance 16 exact, guards intact");
    /* Non-temporal stores: unaligned destinations, odd sizes. */
    static const size_t ssizes[] = {0, 5, 64, 100, 4099, (1 << 20) + 13};
    int sbad = 0;
    for (size_t k = 0; k < FY_ARRAY_LEN(ssizes); k++) {
        size_t len = ssizes[k];
        place(sbase, dbase, 2048 + k * 7, 1 + k, &src, &dst);
        for (size_t i = 0; i < len; i++)
            src[i] = pat(20 + (unsigned)k, i);
        memset(dst - GUARD, GUARD_BYTE, len + 2 * GUARD);
        fy_copy_stream(dst, src, len);
        if (!fill_check(dst, len, 20 + (unsigned)k) || !guards_ok(dst, len))
            sbad++;
    }
    TAP_OK(sbad == 0,
           "fy_copy_stream: %zu sizes to 0-1 MiB exact at "
           "unaligned destinations, guards intact",
           FY_ARRAY_LEN(ssizes));
    fy_copy_alias = false;
}

static void part_remote(const struct fy_xfer_ops *ops, unsigned char *sbase,
                        unsigned char *dbase)
{
    char why[256];
    if (!ops->probe(why, sizeof(why))) {
        char msg[300];
        snprintf(msg, sizeof(msg), "%s bounce: %s", ops->name, why);
        tap_skip(msg);
        return;
    }
    static const size_t sizes[] = {
        1024,   4101,          (256 << 10) - 1, 256 << 10, (256 << 10) + 1,
        600003, (1 << 20) + 17};
    static const size_t cdists[] = {0, 1, 16, 31, 32, 4080};
    /* Offsets of the source in its page: procmem is also slow when the
     * remote end starts 1-31 bytes before a page boundary. */
    static const size_t soffs[] = {0, 5, 4070, 4090, 2000, 4065};
    fy_copy_cma_alias = true;
    fy_copy_alias = true;
    pid_t self = getpid();
    for (size_t k = 0; k < FY_ARRAY_LEN(sizes); k++) {
        size_t len = sizes[k];
        int bad = 0;
        for (size_t j = 0; j < FY_ARRAY_LEN(cdists); j++) {
            for (int get = 0; get < 2; get++) {
                /* get: the remote source, our destination; put: our
                 * source, the remote destination. Either way the
                 * distance is destination minus source. */
                unsigned char *src, *dst;
                place(sbase, dbase, cdists[j], soffs[j], &src, &dst);
                unsigned seed = (unsigned)(k * 10 + j + 50 * get);
                for (size_t i = 0; i < len; i++)
                    src[i] = pat(seed, i);
                memset(dst - GUARD, GUARD_BYTE, len + 2 * GUARD);
                ssize_t n =
                    get ? ops->copy_remote(self, dst, (uint64_t)(uintptr_t)src,
                                           len, true)
                        : ops->copy_remote(self, src, (uint64_t)(uintptr_t)dst,
                                           len, false);
                if (n != (ssize_t)len || !fill_check(dst, len, seed) ||
                    !guards_ok(dst, len)) {
                    tap_diag("%s %s %zu B at distance %zu: returned %zd, %s",
                             ops->name, get ? "get" : "put", len, cdists[j], n,
                             guards_ok(dst, len) ? "bytes checked"
                                                 : "guards HIT");
                    bad++;
                }
            }
        }
        TAP_OK(bad == 0,
               "%s, bounce on: gets and puts of %zu B exact at %zu "
               "distances, guards intact",
               ops->name, len, FY_ARRAY_LEN(cdists));
    }
    /* An unmapped remote address is still an error through the bounce. */
    ssize_t n =
        fy_xfer_cma_ops.copy_remote(self, dbase + 4096 + 16, 4096, 8192, true);
    TAP_OK(n < 0,
           "cma, bounce on: an unmapped remote address is an error "
           "(%zd)",
           n);
    fy_copy_cma_alias = false;
    fy_copy_alias = false;
}

static void part_env(void)
{
    static const char *const good[] = {"on", "off", "auto"};
    for (size_t i = 0; i < FY_ARRAY_LEN(good); i++) {
        setenv("FERRY_COPY_ALIAS", good[i], 1);
        int rc = fy_env_load();
        if (!rc)
            rc = fy_copy_init();
        TAP_EQ_INT(rc, 0, "FERRY_COPY_ALIAS=%s accepted", good[i]);
        if (i == 0)
            TAP_OK(fy_copy_alias && fy_copy_cma_alias,
                   "FERRY_COPY_ALIAS=on turns both on");
        if (i == 1)
            TAP_OK(!fy_copy_alias && !fy_copy_cma_alias,
                   "FERRY_COPY_ALIAS=off turns both off");
        if (i == 2)
            tap_diag("auto here: memcpy 16 KiB %.2f us at distance 0, %.2f "
                     "at 16 (%s); cma %.2f / %.2f (%s)",
                     fy_copy_measured.memcpy_us[0],
                     fy_copy_measured.memcpy_us[1],
                     fy_copy_alias ? "slow: loop" : "fine",
                     fy_copy_measured.cma_us[0], fy_copy_measured.cma_us[1],
                     fy_copy_cma_alias ? "slow: bounce" : "fine");
    }
    setenv("FERRY_COPY_ALIAS", "sometimes", 1);
    int rc = fy_env_load();
    if (!rc)
        rc = fy_copy_init();
    TAP_EQ_INT(rc, -EINVAL, "FERRY_COPY_ALIAS=sometimes is an error");
    unsetenv("FERRY_COPY_ALIAS");
}

int main(void)
{
    size_t span = (2u << 20) + 4 * 4096;
    unsigned char *sbase = aligned_alloc(4096, span);
    unsigned char *dbase = aligned_alloc(4096, span);
    if (!sbase || !dbase)
        return 1;
    part_fy_copy(sbase, dbase);
    part_remote(&fy_xfer_cma_ops, sbase, dbase);
    part_remote(&fy_xfer_procmem_ops, sbase, dbase);
    part_env();
    free(sbase);
    free(dbase);
    return tap_done();
}
