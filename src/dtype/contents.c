/* SPDX-License-Identifier: MIT */
/* What MPI_Type_get_envelope/get_contents decode: the combiner and the
 * constructor arguments of a derived type, kept with references to its
 * input types, and the array constructors (subarray, darray) built from
 * per-dimension runs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtype/dtype.h"

int fy_dtype_set_contents(struct fy_dtype *dt, int combiner, int ni,
                          const int *ints, int na, const MPI_Aint *aints,
                          int nc, const MPI_Count *counts, int nt,
                          struct fy_dtype *const *types)
{
    struct fy_dtype_contents *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->combiner = combiner;
    c->ints = malloc(((size_t)ni + 1) * sizeof(*c->ints));
    c->aints = malloc(((size_t)na + 1) * sizeof(*c->aints));
    c->counts = malloc(((size_t)nc + 1) * sizeof(*c->counts));
    c->types = malloc(((size_t)nt + 1) * sizeof(*c->types));
    if (!c->ints || !c->aints || !c->counts || !c->types) {
        free(c->ints);
        free(c->aints);
        free(c->counts);
        free(c->types);
        free(c);
        return -ENOMEM;
    }
    c->ni = ni;
    c->na = na;
    c->nc = nc;
    c->nt = nt;
    if (ni)
        memcpy(c->ints, ints, (size_t)ni * sizeof(*ints));
    if (na)
        memcpy(c->aints, aints, (size_t)na * sizeof(*aints));
    if (nc)
        memcpy(c->counts, counts, (size_t)nc * sizeof(*counts));
    for (int i = 0; i < nt; i++) {
        c->types[i] = types[i];
        fy_dtype_retain(types[i]); /* a no-op for predefined types */
    }
    fy_dtype_contents_free(dt);
    dt->contents = c;
    dt->combiner = combiner;
    return 0;
}

void fy_dtype_contents_free(struct fy_dtype *dt)
{
    struct fy_dtype_contents *c = dt->contents;
    if (!c)
        return;
    dt->contents = NULL;
    for (int i = 0; i < c->nt; i++)
        fy_dtype_release(c->types[i]);
    free(c->ints);
    free(c->aints);
    free(c->counts);
    free(c->types);
    free(c);
}

MPI_Datatype fy_dtype_hand_out(struct fy_dtype *dt)
{
    if (dt->builtin)
        return dt->handle;
    fy_dtype_retain(dt);
    if (dt->freed) {
        /* The user freed it, but we kept it (and its handle) alive. */
        dt->freed = false;
        dt->user_refs = 1;
    } else {
        dt->user_refs++;
    }
    return dt->handle;
}

/* ---- arrays ----------------------------------------------------------- */

int fy_dtype_grid(int ndims, const MPI_Count *gsizes,
                  const struct fy_dtype_runs *runs, bool fortran_order,
                  struct fy_dtype *old, int combiner, struct fy_dtype **out)
{
    if (ndims <= 0 || !old)
        return -EINVAL;
    struct fy_dtype *t = old;
    fy_dtype_retain(t);
    MPI_Aint stride = old->extent; /* bytes between neighbours along d */
    int rc = 0;
    for (int k = 0; k < ndims && rc == 0; k++) {
        int d = fortran_order ? k : ndims - 1 - k; /* fastest first */
        const struct fy_dtype_runs *r = &runs[d];
        struct fy_dtype *elem = t, *sized = NULL, *next = NULL;
        if (k > 0) {
            /* Inner dimensions' type, one "row" of this dimension apart. */
            rc = fy_dtype_resized(t, 0, stride, &sized);
            if (rc)
                break;
            elem = sized;
        }
        MPI_Aint *disps = malloc(((size_t)r->n + 1) * sizeof(*disps));
        if (!disps) {
            rc = -ENOMEM;
        } else {
            for (int i = 0; i < r->n; i++)
                disps[i] = (MPI_Aint)r->start[i] * stride;
            rc = fy_dtype_indexed(r->n, r->len, disps, elem,
                                  MPI_COMBINER_HINDEXED, &next);
            free(disps);
        }
        if (sized)
            fy_dtype_release(sized);
        fy_dtype_release(t);
        t = next;
        MPI_Aint s;
        if (rc == 0 && __builtin_mul_overflow(stride, gsizes[d], &s))
            rc = -EOVERFLOW;
        stride = s;
    }
    if (rc) {
        if (t)
            fy_dtype_release(t);
        return rc;
    }
    /* The whole global array is one element's extent (MPI 5.1.3). */
    struct fy_dtype *dt;
    rc = fy_dtype_resized(t, 0, stride, &dt);
    fy_dtype_release(t);
    if (rc)
        return rc;
    dt->combiner = combiner;
    *out = dt;
    return 0;
}
