/* SPDX-License-Identifier: MIT */
/* Process topologies on a communicator: their storage (every kind), then
 * Cartesian grids: row-major rank/coordinate mapping, sub-grids and
 * MPI_Dims_create. Graphs are in graph.c. All processes run on one node
 * today, so no reordering is ever worth it. */
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
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sourceweights);
    free(t->destinations);
    free(t->destweights);
    free(t);
}

static struct fy_topo *fy_topo_new(int ndims, const int *dims,
                                   const bool *periods)
{
    struct fy_topo *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->kind = FY_TOPO_CART;
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

int *fy_topo_ints_dup(const int *a, int n)
{
    int *d = malloc((size_t)FY_MAX(n, 1) * sizeof(int));
    if (d && n > 0)
        memcpy(d, a, (size_t)n * sizeof(int));
    return d;
}

struct fy_topo *fy_topo_dup(const struct fy_topo *t)
{
    if (!t)
        return NULL;
    if (t->kind == FY_TOPO_CART)
        return fy_topo_new(t->ndims, t->dims, t->periods);
    struct fy_topo *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    *d = *t;
    d->dims = NULL;
    d->periods = NULL;
    d->index = d->edges = d->sources = d->sourceweights = NULL;
    d->destinations = d->destweights = NULL;
    bool ok = true;
    if (t->kind == FY_TOPO_GRAPH) {
        int nedges = t->nnodes ? t->index[t->nnodes - 1] : 0;
        ok = (d->index = fy_topo_ints_dup(t->index, t->nnodes)) &&
             (d->edges = fy_topo_ints_dup(t->edges, nedges));
    } else {
        ok = (d->sources = fy_topo_ints_dup(t->sources, t->indegree)) &&
             (d->sourceweights =
                  fy_topo_ints_dup(t->sourceweights, t->indegree)) &&
             (d->destinations =
                  fy_topo_ints_dup(t->destinations, t->outdegree)) &&
             (d->destweights = fy_topo_ints_dup(t->destweights, t->outdegree));
    }
    if (!ok) {
        fy_topo_free(d);
        return NULL;
    }
    return d;
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

/* ---- MPI_Dims_create ------------------------------------------------
 * MPI asks for dimensions "as close to each other as possible", in
 * non-increasing order. Ferry reads that as Traeff and Luebbe do
 * ("Specification Guideline Violations by MPI_Dims_create", EuroMPI'15),
 * as MPICH does: the free dimensions d0 >= d1 >= ... >= dk-1 minimise
 * d0 - dk-1. Several factorisations can tie (360 in 3: 10x6x6 and 9x8x5);
 * of those the one with the smallest sum of squares wins (9x8x5: the
 * inner dimensions are closer too), then the lexicographically smallest.
 * A greedy split of the prime factors does not find it (72 in 2 gave
 * 12x6, not 9x8), so this is a branch-and-bound search over the
 * divisors. */

/* Every dimension above 1 is at least 2 and their product is an int. */
#define FY_DIMS_MAX_BIG 32

struct dims_search {
    int k;           /* free dimensions */
    const int *divs; /* divisors of the number to factor, ascending */
    int ndivs;
    int cur[FY_DIMS_MAX_BIG];  /* the dimensions chosen so far */
    int best[FY_DIMS_MAX_BIG]; /* the best factorisation's dims above 1 */
    int best_len;
    long long best_spread; /* -1 until one is found */
    unsigned long long best_sq;
};

/* Whether x^r >= n (x >= 1, r >= 1, n >= 1). */
static bool dims_pow_ge(long long x, int r, long long n)
{
    if (x <= 1)
        return n <= 1;
    if (r >= 31)
        return true; /* 2^31 > INT_MAX >= n */
    long long p = 1;
    for (int i = 0; i < r; i++) {
        p *= x;
        if (p >= n)
            return true;
    }
    return p >= n;
}

/* The largest x with x^r <= n (n >= 1, r >= 1). */
static int dims_iroot(int n, int r)
{
    if (r == 1)
        return n;
    int lo = 1, hi = 46341; /* > sqrt(INT_MAX) */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (dims_pow_ge(mid, r, (long long)n + 1))
            hi = mid; /* mid^r > n */
        else
            lo = mid;
    }
    return lo;
}

/* Dimension i is next: cur[0..i-1] are chosen (non-increasing), 'rest'
 * is left to split into k - i dimensions, none above 'maxd'; 'sq' is the
 * sum of squares so far. */
static void dims_search(struct dims_search *s, int i, int rest, int maxd,
                        unsigned long long sq)
{
    int left = s->k - i;
    if (rest == 1 || left == 1) {
        int len = i;
        if (rest > 1) {
            if (rest > maxd)
                return; /* would break the non-increasing order */
            s->cur[len++] = rest;
            sq += (unsigned long long)rest * (unsigned long long)rest;
        }
        sq += (unsigned long long)(s->k - len); /* the dimensions of 1 */
        int top = len ? s->cur[0] : 1, bottom = len < s->k ? 1 : rest;
        long long spread = (long long)top - bottom;
        if (s->best_spread < 0 || spread < s->best_spread ||
            (spread == s->best_spread && sq < s->best_sq)) {
            s->best_spread = spread;
            s->best_sq = sq;
            s->best_len = len;
            memcpy(s->best, s->cur, (size_t)len * sizeof(int));
        }
        return;
    }
    /* Each of the 'left' dimensions is at most d, so d^left >= rest. */
    int lo = dims_iroot(rest, left);
    if (!dims_pow_ge(lo, left, rest))
        lo++;
    for (int j = 0; j < s->ndivs; j++) {
        int d = s->divs[j];
        if (d > maxd || d > rest)
            break;
        if (d < lo || rest % d != 0)
            continue;
        /* The smallest dimension will be at most the (left-1)-th root of
         * what d leaves; that bound only grows with d, so once it cannot
         * beat the best spread, no larger d can. */
        int top = i == 0 ? d : s->cur[0];
        if (s->best_spread >= 0 &&
            (long long)top - dims_iroot(rest / d, left - 1) > s->best_spread)
            break;
        s->cur[i] = d;
        dims_search(s, i + 1, rest / d, d,
                    sq + (unsigned long long)d * (unsigned long long)d);
    }
}

int fy_dims_create(int nnodes, int ndims, int *dims)
{
    long long fixed = 1;
    int nfree = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return -EINVAL;
        if (dims[d] == 0) {
            nfree++;
        } else if (fixed <= nnodes) {
            fixed *= dims[d]; /* stops growing once past nnodes */
        }
    }
    if (nnodes <= 0 || fixed > nnodes || nnodes % fixed != 0)
        return -EINVAL;
    int rest = (int)(nnodes / fixed);
    if (nfree == 0)
        return rest == 1 ? 0 : -EINVAL;

    /* The divisors of rest, ascending (at most 1600 for an int): those up
     * to its square root, then their cofactors. */
    int nsmall = 0, ndivs = 0;
    for (int q = 1; (long long)q * q <= rest; q++)
        if (rest % q == 0)
            nsmall++;
    int *divs = malloc((size_t)nsmall * 2 * sizeof(int));
    if (!divs)
        return -ENOMEM;
    for (int q = 1; (long long)q * q <= rest; q++)
        if (rest % q == 0)
            divs[ndivs++] = q;
    for (int j = nsmall - 1; j >= 0; j--)
        if (divs[j] != rest / divs[j])
            divs[ndivs++] = rest / divs[j];

    struct dims_search s = {
        .k = nfree, .divs = divs, .ndivs = ndivs, .best_spread = -1};
    dims_search(&s, 0, rest, rest, 0);
    free(divs);
    for (int d = 0, i = 0; d < ndims; d++)
        if (dims[d] == 0) {
            dims[d] = i < s.best_len ? s.best[i] : 1;
            i++;
        }
    return 0;
}
