/* SPDX-License-Identifier: MIT */
/* Process groups: ordered lists of world ranks, reference counted, named by
 * direct handles (MPI_GROUP_EMPTY is the one builtin group). The set
 * operations are O(n + world size) through a world-rank lookup table. */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/handle.h"
#include "util/mt.h"

struct fy_group fy_group_empty = {
    .handle = MPI_GROUP_EMPTY,
    .refcount = 1,
    .builtin = true,
    .size = 0,
    .rank = MPI_UNDEFINED,
    .world = NULL,
};

static struct fy_handle_table s_groups = FY_HANDLE_TABLE_INIT(FY_HT_GROUP);

struct fy_group *fy_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &fy_group_empty;
    return fy_handle_get(&s_groups, h);
}

int fy_group_create(int size, const int *world_ranks, struct fy_group **out)
{
    if (size == 0) {
        fy_group_retain(&fy_group_empty);
        *out = &fy_group_empty;
        return 0;
    }
    struct fy_group *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    g->world = malloc((size_t)size * sizeof(int));
    if (!g->world)
        goto err_free_group;
    memcpy(g->world, world_ranks, (size_t)size * sizeof(int));
    g->size = size;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++) {
        if (world_ranks[i] == fy_comm_wrank) {
            g->rank = i;
            break;
        }
    }
    g->refcount = 1;
    if (fy_handle_alloc(&s_groups, g, &g->handle) != 0)
        goto err_free_world;
    *out = g;
    return 0;

err_free_world:
    free(g->world);
err_free_group:
    free(g);
    return -ENOMEM;
}

void fy_group_release(struct fy_group *g)
{
    if (!g || g->builtin)
        return;
    if (fy_mt_ref_dec(&g->refcount) > 0)
        return;
    fy_handle_release(&s_groups, g->handle);
    free(g->world);
    free(g);
}

/* world rank -> rank in g (MPI_UNDEFINED when absent), one int per world
 * rank. Caller frees. World ranks are < fy_comm_wsize by
 * construction. */
static int *fy_group_inverse(const struct fy_group *g)
{
    int *inv = malloc((size_t)fy_comm_wsize * sizeof(int));
    if (!inv)
        return NULL;
    for (int w = 0; w < fy_comm_wsize; w++)
        inv[w] = MPI_UNDEFINED;
    for (int i = 0; i < g->size; i++)
        inv[g->world[i]] = i;
    return inv;
}

int fy_group_rank_of_world(const struct fy_group *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

int fy_group_incl(struct fy_group *g, int n, const int *ranks,
                  struct fy_group **out)
{
    int *w = malloc((size_t)FY_MAX(n, 1) * sizeof(int));
    if (!w)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        w[i] = g->world[ranks[i]];
    int rc = fy_group_create(n, w, out);
    free(w);
    return rc;
}

int fy_group_excl(struct fy_group *g, int n, const int *ranks,
                  struct fy_group **out)
{
    bool *drop = calloc((size_t)FY_MAX(g->size, 1), sizeof(bool));
    int *w = malloc((size_t)FY_MAX(g->size, 1) * sizeof(int));
    int rc = -ENOMEM;
    if (!drop || !w)
        goto out_free;
    for (int i = 0; i < n; i++)
        drop[ranks[i]] = true;
    int m = 0;
    for (int i = 0; i < g->size; i++)
        if (!drop[i])
            w[m++] = g->world[i];
    rc = fy_group_create(m, w, out);
out_free:
    free(drop);
    free(w);
    return rc;
}

int fy_group_union(struct fy_group *a, struct fy_group *b,
                   struct fy_group **out)
{
    int *inv = fy_group_inverse(a);
    int *w = malloc((size_t)FY_MAX(a->size + b->size, 1) * sizeof(int));
    int rc = -ENOMEM;
    if (!inv || !w)
        goto out_free;
    int m = 0;
    for (int i = 0; i < a->size; i++)
        w[m++] = a->world[i];
    for (int i = 0; i < b->size; i++)
        if (inv[b->world[i]] == MPI_UNDEFINED)
            w[m++] = b->world[i];
    rc = fy_group_create(m, w, out);
out_free:
    free(inv);
    free(w);
    return rc;
}

/* Members of a, in a's order, that are (keep_common) or are not in b. */
static int fy_group_filter(struct fy_group *a, struct fy_group *b,
                           bool keep_common, struct fy_group **out)
{
    int *inv = fy_group_inverse(b);
    int *w = malloc((size_t)FY_MAX(a->size, 1) * sizeof(int));
    int rc = -ENOMEM;
    if (!inv || !w)
        goto out_free;
    int m = 0;
    for (int i = 0; i < a->size; i++) {
        bool in_b = inv[a->world[i]] != MPI_UNDEFINED;
        if (in_b == keep_common)
            w[m++] = a->world[i];
    }
    rc = fy_group_create(m, w, out);
out_free:
    free(inv);
    free(w);
    return rc;
}

int fy_group_intersection(struct fy_group *a, struct fy_group *b,
                          struct fy_group **out)
{
    return fy_group_filter(a, b, true, out);
}

int fy_group_difference(struct fy_group *a, struct fy_group *b,
                        struct fy_group **out)
{
    return fy_group_filter(a, b, false, out);
}

int fy_group_translate(struct fy_group *a, int n, const int *ranks_a,
                       struct fy_group *b, int *ranks_b)
{
    int *inv = fy_group_inverse(b);
    if (!inv)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        if (ranks_a[i] == MPI_PROC_NULL)
            ranks_b[i] = MPI_PROC_NULL;
        else
            ranks_b[i] = inv[a->world[ranks_a[i]]];
    }
    free(inv);
    return 0;
}

int fy_group_compare(const struct fy_group *a, const struct fy_group *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    if (a->size == 0 ||
        memcmp(a->world, b->world, (size_t)a->size * sizeof(int)) == 0)
        return MPI_IDENT;
    /* Same size, different order: similar iff every member of a is in b.
     * Members are distinct, so a membership count settles it. */
    int *inv = fy_group_inverse(b);
    if (!inv) {
        /* Without memory fall back to the quadratic scan. */
        for (int i = 0; i < a->size; i++)
            if (fy_group_rank_of_world(b, a->world[i]) == MPI_UNDEFINED)
                return MPI_UNEQUAL;
        return MPI_SIMILAR;
    }
    int res = MPI_SIMILAR;
    for (int i = 0; i < a->size; i++) {
        if (inv[a->world[i]] == MPI_UNDEFINED) {
            res = MPI_UNEQUAL;
            break;
        }
    }
    free(inv);
    return res;
}
