/* SPDX-License-Identifier: MIT */
/* Handle tables: index allocation with a free stack. */
#include "util/handle.h"

#include <errno.h>
#include <stdlib.h>

int fy_handle_alloc(struct fy_handle_table *t, void *obj, int *handle_out)
{
    uint32_t idx;
    if (t->nfree > 0) {
        idx = t->free[--t->nfree];
    } else {
        if (t->used == t->cap) {
            uint32_t ncap = t->cap ? t->cap * 2 : 64;
            if (ncap > FY_HANDLE_INDEX_MASK + 1u)
                return -ENOMEM;
            void **nobjs = realloc(t->objs, ncap * sizeof(*nobjs));
            if (!nobjs)
                return -ENOMEM;
            uint32_t *nfree = realloc(t->free, ncap * sizeof(*nfree));
            if (!nfree) {
                t->objs = nobjs;
                return -ENOMEM;
            }
            t->objs = nobjs;
            t->free = nfree;
            t->cap = ncap;
        }
        idx = t->used++;
    }
    t->objs[idx] = obj;
    *handle_out =
        (int)(FY_HANDLE_KIND_DIRECT | ((uint32_t)t->type << 26) | idx);
    return 0;
}

void fy_handle_release(struct fy_handle_table *t, int handle)
{
    uint32_t idx = fy_handle_index(handle);
    if (fy_handle_get(t, handle) == NULL)
        return;
    t->objs[idx] = NULL;
    t->free[t->nfree++] = idx;
}
