/* SPDX-License-Identifier: MIT */
/* Handle tables: index allocation with a free stack, slots in chunks that
 * never move (see handle.h for the invariants). */
#include "util/handle.h"

#include <errno.h>
#include <stdlib.h>

#include "util/mt.h"

/* Lock the table under MPI_THREAD_MULTIPLE; returns whether it locked
 * (fy_mt_on is read once: it only turns on before other threads call). */
static bool table_lock(struct fy_handle_table *t)
{
    if (FY_LIKELY(!fy_mt_on))
        return false;
    pthread_mutex_lock(&t->lock);
    return true;
}

static void table_unlock(struct fy_handle_table *t, bool locked)
{
    if (FY_UNLIKELY(locked))
        pthread_mutex_unlock(&t->lock);
}

/* Make sure slot idx exists. Returns 0 or -ENOMEM. */
static int table_grow(struct fy_handle_table *t, uint32_t idx)
{
    uint32_t q = idx / FY_HANDLE_CHUNK0 + 1;
    int k = 31 - __builtin_clz(q);
    if (t->chunks[k])
        return 0;
    void **chunk = calloc((size_t)FY_HANDLE_CHUNK0 << k, sizeof(*chunk));
    if (!chunk)
        return -ENOMEM;
    /* R1: pairs with A1 in fy_handle_slot_(). */
    __atomic_store_n(&t->chunks[k], chunk, __ATOMIC_RELEASE);
    return 0;
}

int fy_handle_alloc(struct fy_handle_table *t, void *obj, int *handle_out)
{
    bool locked = table_lock(t);
    uint32_t idx;
    if (t->nfree > 0) {
        idx = t->free[--t->nfree];
    } else {
        idx = t->used;
        if (idx > FY_HANDLE_INDEX_MASK || table_grow(t, idx) != 0) {
            table_unlock(t, locked);
            return -ENOMEM;
        }
        if (t->free_cap <= idx) {
            /* Room to push back every index ever handed out, so a
             * release never fails. */
            uint32_t ncap = t->free_cap ? t->free_cap * 2 : 64;
            uint32_t *nfree = realloc(t->free, ncap * sizeof(*nfree));
            if (!nfree) {
                table_unlock(t, locked);
                return -ENOMEM;
            }
            t->free = nfree;
            t->free_cap = ncap;
        }
    }
    /* R3: pairs with A3 in fy_handle_at(): the caller initialised obj. */
    __atomic_store_n(fy_handle_slot_(t, idx), obj, __ATOMIC_RELEASE);
    if (idx == t->used) /* R2: pairs with A2 in fy_handle_count() */
        __atomic_store_n(&t->used, idx + 1, __ATOMIC_RELEASE);
    table_unlock(t, locked);
    *handle_out =
        (int)(FY_HANDLE_KIND_DIRECT | ((uint32_t)t->type << 26) | idx);
    return 0;
}

void fy_handle_release(struct fy_handle_table *t, int handle)
{
    if (fy_handle_kind(handle) != FY_HANDLE_KIND_DIRECT ||
        fy_handle_type(handle) != t->type)
        return;
    uint32_t idx = fy_handle_index(handle);
    bool locked = table_lock(t);
    if (idx < t->used) {
        void **slot = fy_handle_slot_(t, idx);
        if (*slot) {
            __atomic_store_n(slot, NULL, __ATOMIC_RELEASE);
            t->free[t->nfree++] = idx;
        }
    }
    table_unlock(t, locked);
}

void fy_handle_table_reset(struct fy_handle_table *t)
{
    for (int k = 0; k < FY_HANDLE_NCHUNKS; k++) {
        free(t->chunks[k]);
        t->chunks[k] = NULL;
    }
    free(t->free);
    t->free = NULL;
    t->nfree = t->free_cap = 0;
    t->used = 0;
}
