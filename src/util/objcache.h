/* SPDX-License-Identifier: MIT */
/* A few freed objects of one size kept for the next allocation: the
 * nonblocking collectives allocate and free three or four small objects
 * per call, and glibc's free of one next to the heap top consolidates the
 * fast bins every time (perf of osu_ibcast at 8 B between two ranks: 7 %
 * of the samples in malloc_consolidate, _int_free and _int_malloc). Only
 * below MPI_THREAD_MULTIPLE, where one thread is in the library; under
 * MULTIPLE, plain calloc and free. */
#ifndef FY_OBJCACHE_H
#define FY_OBJCACHE_H

#include <stdlib.h>
#include <string.h>

#include "util/mt.h"

#define FY_OBJCACHE_N 8

struct fy_objcache {
    size_t size;
    unsigned n;
    void *items[FY_OBJCACHE_N];
};

/* A zeroed object of c->size bytes, or NULL. */
static inline void *fy_objcache_get(struct fy_objcache *c)
{
    if (!fy_mt_on && c->n > 0) {
        void *p = c->items[--c->n];
        memset(p, 0, c->size);
        return p;
    }
    return calloc(1, c->size);
}

static inline void fy_objcache_put(struct fy_objcache *c, void *p)
{
    if (p && !fy_mt_on && c->n < FY_OBJCACHE_N)
        c->items[c->n++] = p;
    else
        free(p);
}

/* Free what is kept (MPI_Finalize). */
static inline void fy_objcache_drain(struct fy_objcache *c)
{
    while (c->n > 0)
        free(c->items[--c->n]);
}

#endif /* FY_OBJCACHE_H */
