/* SPDX-License-Identifier: MIT */
/* The key-value exchange of the launchers whose ranks share one node
 * (Ferry's mpiexec, the singleton): a table in a memfd the launcher
 * creates and every rank inherits (FERRY_KVS_FD), sized by the ranks
 * themselves (each truncates it to the same length, so a fresh memfd of
 * zeros is a valid empty table), with a fence that is a barrier.
 *
 * Invariants:
 * - Rank r alone writes entry[r][*] and count[r]; it stores count[r] with
 *   release after the entries (KR1), a reader acquires it (KA1) before it
 *   reads entries below it. fence() orders everyone's puts before every
 *   get after it.
 * - The fence is a generation barrier: the last of 'size' arrivals resets
 *   'arrived' and bumps 'gen' with release (KR2); the others wait until
 *   they acquire a new gen (KA2). Each waits for its own generation only,
 *   so back-to-back fences cannot mix.
 * - Nothing read from the table is trusted: count is clamped to the table,
 *   keys and values are read into private memory with bounded lengths. */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "util/util.h"

struct kvs_entry {
    char key[FY_BOOT_KEY_MAX];
    char value[FY_BOOT_VALUE_MAX];
};

struct kvs_rank {
    alignas(FY_CACHELINE) _Atomic uint32_t count; /* entries published */
    alignas(FY_CACHELINE) struct kvs_entry entry[FY_BOOT_KVS_ENTRIES];
};

struct kvs_hdr {
    alignas(FY_CACHELINE) _Atomic uint32_t arrived; /* at the fence */
    alignas(FY_CACHELINE) _Atomic uint32_t gen;     /* fences completed */
};
static_assert(sizeof(struct kvs_hdr) == 2 * FY_CACHELINE, "two lines");
static_assert(sizeof(struct kvs_entry) == FY_BOOT_KEY_MAX + FY_BOOT_VALUE_MAX,
              "entries are packed strings");
static_assert(offsetof(struct kvs_rank, entry) == FY_CACHELINE,
              "entries after the count's line");

static struct {
    struct kvs_hdr *hdr;
    struct kvs_rank *ranks;
    size_t len;
    int rank, size;
    uint32_t mine; /* our entries, private copy of count[rank] */
} kvs;

static size_t kvs_size(int size)
{
    return sizeof(struct kvs_hdr) + (size_t)size * sizeof(struct kvs_rank);
}

int fy_boot_kvs_attach(int fd, int rank, int size)
{
    size_t len = kvs_size(size);
    /* Everyone truncates to the same length: the first grows the file,
     * the others change nothing; the zeros are an empty table. */
    if (ftruncate(fd, (off_t)len) < 0) {
        int err = errno;
        FY_ERROR("cannot size the launcher's key-value table (%zu bytes): %m",
                 len);
        return -err;
    }
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int err = errno;
        FY_ERROR("cannot map the launcher's key-value table: %m");
        return -err;
    }
    close(fd);
    kvs.hdr = base;
    kvs.ranks = (struct kvs_rank *)((char *)base + sizeof(struct kvs_hdr));
    kvs.len = len;
    kvs.rank = rank;
    kvs.size = size;
    kvs.mine = 0;
    return 0;
}

void fy_boot_kvs_detach(void)
{
    if (kvs.hdr)
        munmap(kvs.hdr, kvs.len);
    kvs.hdr = NULL;
    kvs.ranks = NULL;
}

int fy_boot_kvs_put(const char *key, const char *value)
{
    if (!kvs.hdr)
        return -ENOTSUP;
    size_t kl = strlen(key), vl = strlen(value);
    if (kl == 0 || kl >= FY_BOOT_KEY_MAX || vl >= FY_BOOT_VALUE_MAX) {
        FY_ERROR("key-value pair '%.32s': the key must have 1 to %d bytes "
                 "and the value at most %d",
                 key, FY_BOOT_KEY_MAX - 1, FY_BOOT_VALUE_MAX - 1);
        return -E2BIG;
    }
    struct kvs_rank *me = &kvs.ranks[kvs.rank];
    struct kvs_entry *e = NULL;
    for (uint32_t i = 0; i < kvs.mine; i++)
        if (!strcmp(me->entry[i].key, key))
            e = &me->entry[i]; /* overwrite: visible after the next fence */
    if (!e) {
        if (kvs.mine == FY_BOOT_KVS_ENTRIES) {
            FY_ERROR("key-value table full (%d entries per rank)",
                     FY_BOOT_KVS_ENTRIES);
            return -ENOSPC;
        }
        e = &me->entry[kvs.mine];
    }
    memset(e, 0, sizeof(*e));
    memcpy(e->key, key, kl);
    memcpy(e->value, value, vl);
    if (e == &me->entry[kvs.mine])
        kvs.mine++;
    /* KR1: pairs with KA1 in get: the entries are visible with the count. */
    atomic_store_explicit(&me->count, kvs.mine, memory_order_release);
    return 0;
}

int fy_boot_kvs_get(int rank, const char *key, char *value_out, size_t len)
{
    if (!kvs.hdr)
        return -ENOTSUP;
    if (rank < 0 || rank >= kvs.size)
        return -EINVAL;
    const struct kvs_rank *r = &kvs.ranks[rank];
    /* KA1: pairs with KR1. */
    uint32_t n = atomic_load_explicit(&r->count, memory_order_acquire);
    if (n > FY_BOOT_KVS_ENTRIES)
        n = FY_BOOT_KVS_ENTRIES; /* never trust the table */
    for (uint32_t i = 0; i < n; i++) {
        struct kvs_entry e;
        memcpy(&e, &r->entry[i], sizeof(e));
        e.key[FY_BOOT_KEY_MAX - 1] = '\0';
        e.value[FY_BOOT_VALUE_MAX - 1] = '\0';
        if (strcmp(e.key, key))
            continue;
        size_t vl = strlen(e.value);
        if (vl >= len)
            return -ENOSPC;
        memcpy(value_out, e.value, vl + 1);
        return 0;
    }
    return -ENOENT;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val,
                  const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

int fy_boot_kvs_fence(void)
{
    if (!kvs.hdr)
        return -ENOTSUP;
    struct kvs_hdr *h = kvs.hdr;
    uint32_t gen = atomic_load_explicit(&h->gen, memory_order_acquire);
    uint32_t arrived =
        atomic_fetch_add_explicit(&h->arrived, 1, memory_order_acq_rel) + 1;
    if (arrived > (uint32_t)kvs.size) {
        FY_ERROR("key-value fence: %u arrivals for %d ranks (table corrupted)",
                 arrived, kvs.size);
        return -EPROTO;
    }
    if (arrived == (uint32_t)kvs.size) {
        atomic_store_explicit(&h->arrived, 0, memory_order_relaxed);
        /* KR2: pairs with KA2: every rank's puts before its arrival (acq_rel
         * above) are visible to whoever sees the new generation. */
        atomic_store_explicit(&h->gen, gen + 1, memory_order_release);
        futex(&h->gen, FUTEX_WAKE, INT32_MAX, NULL);
        return 0;
    }
    /* KA2: pairs with KR2. */
    while (atomic_load_explicit(&h->gen, memory_order_acquire) == gen) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        futex(&h->gen, FUTEX_WAIT, gen, &ts);
    }
    return 0;
}
