/* SPDX-License-Identifier: MIT */
/* Cartesian process topologies: a grid shape stored on a communicator,
 * row-major rank/coordinate mapping, sub-grids and MPI_Dims_create. All
 * processes run on one node today, so no reordering is ever worth it. */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fy_topo_free(struct fy_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t);
}

static struct fy_topo *fy_topo_new(int ndims, const int *dims,
                                   const bool *periods)
{
    struct fy_topo *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->dims = malloc((size_t)FY_MAX(ndims, 1) * sizeof(int));
    t->periods = malloc((size_t)FY_MAX(ndims, 1) * sizeof(bool));
    if (!t->dims || !t->periods) {
        fy_topo_free(t);
        return NULL;
    }
    if (ndims > 0) {
        memcpy(t->dims, dims, (size_t)ndims * sizeof(int));
        memcpy(t->periods, periods, (size_t)ndims * sizeof(bool));
    }
    return t;
}

struct fy_topo *fy_topo_dup(const struct fy_topo *t)
{
    return t ? fy_topo_new(t->ndims, t->dims, t->periods) : NULL;
}

void fy_cart_coords(const struct fy_topo *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

int fy_cart_rank(const struct fy_topo *t, const int *coords)
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++)
        rank = rank * t->dims[d] + coords[d];
    return rank;
}

int fy_cart_create(struct fy_comm *parent, int ndims, const int *dims,
                   const int *periods, struct fy_comm **out)
{
    int n = 1;
    for (int d = 0; d < ndims; d++)
        n *= dims[d];
    bool *per = malloc((size_t)FY_MAX(ndims, 1) * sizeof(bool));
    if (!per)
        return -ENOMEM;
    for (int d = 0; d < ndims; d++)
        per[d] = periods[d] != 0;
    struct fy_topo *t = fy_topo_new(ndims, dims, per);
    free(per);
    /* Even without memory this member must take part in the split. */
    struct fy_comm *c = NULL;
    int rc = fy_comm_split(parent, parent->rank < n ? 0 : MPI_UNDEFINED,
                           parent->rank, &c);
    if (rc == 0 && c && !t) {
        fy_comm_free(c);
        rc = -ENOMEM;
    }
    if (rc != 0 || !c) {
        fy_topo_free(t);
        return rc;
    }
    c->topo = t;
    *out = c;
    return 0;
}

int fy_cart_sub(struct fy_comm *c, const int *remain_dims, struct fy_comm **out)
{
    const struct fy_topo *t = c->topo;
    int *coords = malloc((size_t)FY_MAX(t->ndims, 1) * sizeof(int));
    int *kept_dims = malloc((size_t)FY_MAX(t->ndims, 1) * sizeof(int));
    bool *nper = malloc((size_t)FY_MAX(t->ndims, 1) * sizeof(bool));
    int rc = -ENOMEM;
    if (!coords || !kept_dims || !nper) {
        /* Take part anyway so the others are not left waiting. */
        struct fy_comm *junk = NULL;
        if (fy_comm_split(c, MPI_UNDEFINED, 0, &junk) == 0 && junk)
            fy_comm_free(junk);
        goto out_free;
    }
    fy_cart_coords(t, c->rank, coords);
    /* Members agreeing on every dropped coordinate form one sub-grid;
     * ordering by the old rank keeps row-major order among the kept
     * coordinates. */
    int color = 0, k = 0;
    for (int d = 0; d < t->ndims; d++) {
        if (remain_dims[d]) {
            kept_dims[k] = t->dims[d];
            nper[k] = t->periods[d];
            k++;
        } else {
            color = color * t->dims[d] + coords[d];
        }
    }
    struct fy_comm *nc = NULL;
    rc = fy_comm_split(c, color, c->rank, &nc);
    if (rc != 0)
        goto out_free;
    /* MPI: keeping no dimension gives a 0-dimensional grid of one. */
    nc->topo = fy_topo_new(k, kept_dims, nper);
    if (!nc->topo) {
        fy_comm_free(nc);
        rc = -ENOMEM;
        goto out_free;
    }
    *out = nc;
out_free:
    free(coords);
    free(kept_dims);
    free(nper);
    return rc;
}

int fy_dims_create(int nnodes, int ndims, int *dims)
{
    int fixed = 1, nfree = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] > 0)
            fixed *= dims[d];
        else
            nfree++;
    }
    if (fixed <= 0 || nnodes % fixed != 0)
        return -EINVAL;
    int rest = nnodes / fixed;
    if (nfree == 0)
        return rest == 1 ? 0 : -EINVAL;
    int *f = calloc((size_t)nfree, sizeof(int));
    if (!f)
        return -ENOMEM;
    for (int i = 0; i < nfree; i++)
        f[i] = 1;
    /* Prime factors, largest first, each to the smallest free dimension:
     * as square as the factors allow. */
    int primes[32], np = 0;
    for (int p = 2; (long long)p * p <= rest; p++)
        while (rest % p == 0) {
            primes[np++] = p;
            rest /= p;
        }
    if (rest > 1)
        primes[np++] = rest;
    for (int i = np - 1; i >= 0; i--) {
        int m = 0;
        for (int j = 1; j < nfree; j++)
            if (f[j] < f[m])
                m = j;
        f[m] *= primes[i];
    }
    /* MPI wants the free dimensions in non-increasing order. */
    for (int i = 0; i < nfree; i++)
        for (int j = i + 1; j < nfree; j++)
            if (f[j] > f[i]) {
                int tmp = f[i];
                f[i] = f[j];
                f[j] = tmp;
            }
    for (int d = 0, i = 0; d < ndims; d++)
        if (dims[d] == 0)
            dims[d] = f[i++];
    free(f);
    return 0;
}
