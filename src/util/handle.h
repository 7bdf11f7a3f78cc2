/* SPDX-License-Identifier: MIT */
/* Handle tables: MPI handles are ints laid out as MPICH lays them out
 * (kind in bits 30-31, object type in bits 26-29, index below), so values
 * compiled into MPICH binaries keep their meaning. Predefined objects are
 * "builtin" handles (kind 01) resolved by each module; objects created at run
 * time get "direct" handles (kind 10) from these tables.
 *
 * Thread safety (MPI_THREAD_MULTIPLE, see util/mt.h): lookups take no
 * lock and may run beside alloc/release in other threads, because slots
 * live in chunks that never move (chunk k holds 1024 << k slots, allocated
 * when first needed) and slots and the high-water mark are read and
 * written atomically. Alloc and release serialise on the table's own
 * mutex (a leaf lock: nothing else is taken under it).
 * Invariants: chunks[k] is written once (NULL -> chunk, release R1) before
 * 'used' grows past its first index (release R2); a lookup that sees idx
 * < used (acquire A2) sees the chunk (A1) and the slot's object, stored
 * with release R3 after the caller initialised it (A3). */
#ifndef FY_HANDLE_H
#define FY_HANDLE_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FY_HANDLE_KIND_MASK 0xc0000000u
#define FY_HANDLE_KIND_INVALID 0x00000000u
#define FY_HANDLE_KIND_BUILTIN 0x40000000u
#define FY_HANDLE_KIND_DIRECT 0x80000000u
#define FY_HANDLE_TYPE_MASK 0x3c000000u
#define FY_HANDLE_INDEX_MASK 0x03ffffffu

/* MPICH object type numbers (bits 26-29). */
enum fy_handle_type {
    FY_HT_COMM = 0x1,
    FY_HT_GROUP = 0x2,
    FY_HT_DATATYPE = 0x3,
    FY_HT_FILE = 0x4,
    FY_HT_ERRHANDLER = 0x5,
    FY_HT_OP = 0x6,
    FY_HT_INFO = 0x7,
    FY_HT_WIN = 0x8,
    FY_HT_KEYVAL = 0x9,
    FY_HT_ATTR = 0xa,
    FY_HT_REQUEST = 0xb,
    FY_HT_SESSION = 0xe,
};

static inline uint32_t fy_handle_kind(int h)
{
    return (uint32_t)h & FY_HANDLE_KIND_MASK;
}
static inline enum fy_handle_type fy_handle_type(int h)
{
    return (enum fy_handle_type)(((uint32_t)h & FY_HANDLE_TYPE_MASK) >> 26);
}
static inline uint32_t fy_handle_index(int h)
{
    return (uint32_t)h & FY_HANDLE_INDEX_MASK;
}

#define FY_HANDLE_LIKELY(x) __builtin_expect(!!(x), 1)
#define FY_HANDLE_CHUNK0 64u /* slots in chunk 0 */
#define FY_HANDLE_NCHUNKS 21 /* 64 * (2^21 - 1) > FY_HANDLE_INDEX_MASK */

struct fy_handle_table {
    /* Own cache lines: allocation in one thread must not slow lookups of
     * the data next to the table in another. */
    alignas(64) enum fy_handle_type type;
    void **chunks[FY_HANDLE_NCHUNKS]; /* chunk k: 1024 << k slots, or NULL */
    uint32_t used;                    /* high-water mark (atomic) */
    uint32_t *free;                   /* stack of freed indices */
    uint32_t nfree, free_cap;
    pthread_mutex_t lock; /* alloc/release under MPI_THREAD_MULTIPLE */
};

#define FY_HANDLE_TABLE_INIT(t)                                                \
    {                                                                          \
        .type = (t), .lock = PTHREAD_MUTEX_INITIALIZER                         \
    }

/* Store obj and return its new direct handle in *handle_out. Returns 0 or
 * -ENOMEM. */
int fy_handle_alloc(struct fy_handle_table *t, void *obj, int *handle_out);

/* The slot of index idx (idx < used): chunk and offset. */
static inline void **fy_handle_slot_(const struct fy_handle_table *t,
                                     uint32_t idx)
{
    if (FY_HANDLE_LIKELY(idx < FY_HANDLE_CHUNK0)) /* the usual case */
        return &__atomic_load_n(&t->chunks[0], __ATOMIC_ACQUIRE)[idx]; /* A1 */
    uint32_t q = idx / FY_HANDLE_CHUNK0 + 1;
    int k = 31 - __builtin_clz(q);
    void **chunk = __atomic_load_n(&t->chunks[k], __ATOMIC_ACQUIRE); /* A1 */
    return &chunk[idx - FY_HANDLE_CHUNK0 * ((1u << k) - 1u)];
}

/* Slots in use or once used (indices 0 .. count-1), for walks at
 * finalize. */
static inline uint32_t fy_handle_count(const struct fy_handle_table *t)
{
    return __atomic_load_n(&t->used, __ATOMIC_ACQUIRE); /* A2 */
}
/* The object in slot idx (< fy_handle_count), or NULL. */
static inline void *fy_handle_at(const struct fy_handle_table *t, uint32_t idx)
{
    return __atomic_load_n(fy_handle_slot_(t, idx), __ATOMIC_ACQUIRE); /* A3 */
}

/* The object behind a direct handle of this table's type, or NULL. */
static inline void *fy_handle_get(const struct fy_handle_table *t, int handle)
{
    if (fy_handle_kind(handle) != FY_HANDLE_KIND_DIRECT ||
        fy_handle_type(handle) != t->type)
        return NULL;
    uint32_t idx = fy_handle_index(handle);
    if (idx >= fy_handle_count(t))
        return NULL;
    return fy_handle_at(t, idx);
}
/* Forget a handle (the object itself is the caller's to free). */
void fy_handle_release(struct fy_handle_table *t, int handle);
/* Free the table's memory and make it empty again (MPI_Finalize; no
 * other thread uses it). The objects are the caller's. */
void fy_handle_table_reset(struct fy_handle_table *t);

#endif /* FY_HANDLE_H */
