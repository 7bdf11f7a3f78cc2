/* SPDX-License-Identifier: MIT */
/* Entry points for decoding datatypes (MPI_Type_get_envelope/contents),
 * the array constructors (subarray, darray) and the external32 packing
 * calls. Arguments are checked here; src/dtype does the work. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

#define GET_TYPE FY_GET_TYPE

#define CHECK_PTR(p, fn)                                                       \
    FY_CHECK((p) != NULL, NULL, MPI_ERR_ARG, fn, "%s is NULL", #p)

/* ---- decoding ---------------------------------------------------------- */

static int envelope(MPI_Datatype datatype, MPI_Count *ni, MPI_Count *na,
                    MPI_Count *nc, MPI_Count *nt, int *combiner, const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_TYPE(dt, datatype, fn);
    const struct fy_dtype_contents *c = dt->contents;
    if (!c) {
        *ni = *na = *nc = *nt = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    *ni = c->ni;
    *na = c->na;
    *nc = c->nc;
    *nt = c->nt;
    *combiner = c->combiner;
    return MPI_SUCCESS;
}

FY_API int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
                                  int *num_addresses, int *num_datatypes,
                                  int *combiner)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK(num_integers && num_addresses && num_datatypes && combiner, NULL,
             MPI_ERR_ARG, fn, "an output argument is NULL");
    MPI_Count ni = 0, na = 0, nc = 0, nt = 0;
    int rc = envelope(datatype, &ni, &na, &nc, &nt, combiner, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    FY_CHECK(nc == 0, NULL, MPI_ERR_TYPE, fn,
             "the type was built with a large count: use "
             "MPI_Type_get_envelope_c");
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nt;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_get_envelope)

FY_API int PMPI_Type_get_envelope_c(MPI_Datatype datatype,
                                    MPI_Count *num_integers,
                                    MPI_Count *num_addresses,
                                    MPI_Count *num_large_counts,
                                    MPI_Count *num_datatypes, int *combiner)
{
    FY_MT_OBJ();
    FY_CHECK(num_integers && num_addresses && num_large_counts &&
                 num_datatypes && combiner,
             NULL, MPI_ERR_ARG, __func__, "an output argument is NULL");
    return envelope(datatype, num_integers, num_addresses, num_large_counts,
                    num_datatypes, combiner, __func__);
}
FY_ALIAS(MPI_Type_get_envelope_c)

static int contents(MPI_Datatype datatype, MPI_Count max_ints,
                    MPI_Count max_aints, MPI_Count max_counts,
                    MPI_Count max_types, int ints[], MPI_Aint aints[],
                    MPI_Count counts[], MPI_Datatype types[], const char *fn)
{
    FY_CHECK_INIT(fn);
    GET_TYPE(dt, datatype, fn);
    const struct fy_dtype_contents *c = dt->contents;
    FY_CHECK(c != NULL, NULL, MPI_ERR_TYPE, fn,
             "datatype 0x%x is predefined (MPI_COMBINER_NAMED): it has no "
             "contents",
             (unsigned)datatype);
    FY_CHECK(max_ints >= c->ni && max_aints >= c->na && max_counts >= c->nc &&
                 max_types >= c->nt,
             NULL, MPI_ERR_ARG, fn,
             "arrays too small: the type needs %d integers, %d addresses, "
             "%d large counts and %d datatypes",
             c->ni, c->na, c->nc, c->nt);
    FY_CHECK((c->ni == 0 || ints) && (c->na == 0 || aints) &&
                 (c->nc == 0 || counts) && (c->nt == 0 || types),
             NULL, MPI_ERR_ARG, fn, "an output array is NULL");
    if (c->ni)
        memcpy(ints, c->ints, (size_t)c->ni * sizeof(*ints));
    if (c->na)
        memcpy(aints, c->aints, (size_t)c->na * sizeof(*aints));
    if (c->nc)
        memcpy(counts, c->counts, (size_t)c->nc * sizeof(*counts));
    /* Derived input types come back as handles the user must free. */
    for (int i = 0; i < c->nt; i++)
        types[i] = fy_dtype_hand_out(c->types[i]);
    return MPI_SUCCESS;
}

FY_API int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                                  int max_addresses, int max_datatypes,
                                  int array_of_integers[],
                                  MPI_Aint array_of_addresses[],
                                  MPI_Datatype array_of_datatypes[])
{
    FY_MT_OBJ();
    return contents(datatype, max_integers, max_addresses, 0, max_datatypes,
                    array_of_integers, array_of_addresses, NULL,
                    array_of_datatypes, __func__);
}
FY_ALIAS(MPI_Type_get_contents)

FY_API int PMPI_Type_get_contents_c(
    MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
    MPI_Count max_large_counts, MPI_Count max_datatypes,
    int array_of_integers[], MPI_Aint array_of_addresses[],
    MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    FY_MT_OBJ();
    return contents(datatype, max_integers, max_addresses, max_large_counts,
                    max_datatypes, array_of_integers, array_of_addresses,
                    array_of_large_counts, array_of_datatypes, __func__);
}
FY_ALIAS(MPI_Type_get_contents_c)

/* ---- subarray and darray ----------------------------------------------- */

/* Build the array type from per-dimension runs, record 'ints' as its
 * contents and publish it. Takes ownership of nothing. */
static int grid_finish(int ndims, const MPI_Count *gsizes,
                       const struct fy_dtype_runs *runs, int order,
                       struct fy_dtype *old, int combiner, const int *ints,
                       int ni, const MPI_Count *counts, int nc,
                       MPI_Datatype *newtype, const char *fn)
{
    struct fy_dtype *dt;
    int rc = fy_dtype_grid(ndims, gsizes, runs, order == MPI_ORDER_FORTRAN, old,
                           combiner, &dt);
    if (rc == 0) {
        rc = fy_dtype_set_contents(dt, combiner, ni, ints, 0, NULL, nc, counts,
                                   1, &old);
        if (rc == 0)
            rc = fy_dtype_register(dt);
        if (rc)
            fy_dtype_release(dt);
    }
    if (rc == -EOVERFLOW)
        return fy_mpi_err(NULL, MPI_ERR_COUNT, fn,
                          "the array's extent overflows MPI_Aint");
    if (rc)
        return fy_mpi_err(NULL, fy_errno_to_class(rc), fn,
                          "cannot build the datatype (out of memory?)");
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

/* Both subarray forms, with the three arrays as MPI_Count. 'large': called
 * as MPI_Type_create_subarray_c, whose contents become MPI 4.0's
 * large-count layout (ndims and order as integers, the arrays as large
 * counts) when a value does not fit an int; otherwise both forms record
 * the same integers. */
static int subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subs,
                    const MPI_Count *starts, int order, MPI_Datatype oldtype,
                    MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_PTR(newtype, fn);
    FY_CHECK(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, NULL,
             MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor _FORTRAN",
             order);
    GET_TYPE(old, oldtype, fn);
    bool big = false;
    for (int d = 0; d < ndims; d++) {
        MPI_Count n = sizes[d], sub = subs[d], st = starts[d];
        FY_CHECK(n > 0 && sub >= 0 && sub <= n && st >= 0 && st <= n - sub,
                 NULL, MPI_ERR_ARG, fn,
                 "dimension %d: size %lld, subsize %lld, start %lld do not "
                 "nest",
                 d, (long long)n, (long long)sub, (long long)st);
        big = big || n > INT_MAX;
    }
    size_t nd = (size_t)ndims;
    MPI_Count *v = malloc(3 * nd * sizeof(*v));
    struct fy_dtype_runs *runs = malloc(nd * sizeof(*runs));
    int *ints = malloc((3 * nd + 2) * sizeof(*ints));
    int rc;
    if (!v || !runs || !ints) {
        rc = fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    } else {
        MPI_Count *gs = v, *start = v + nd, *len = v + 2 * nd;
        for (size_t d = 0; d < nd; d++) {
            gs[d] = sizes[d];
            start[d] = starts[d];
            len[d] = subs[d];
            runs[d] = (struct fy_dtype_runs){1, &start[d], &len[d]};
        }
        if (big) {
            /* MPI 4.0: sizes, subsizes, starts in the large counts. */
            MPI_Count *c = malloc(3 * nd * sizeof(*c));
            if (c) {
                memcpy(c, gs, nd * sizeof(*c));
                memcpy(c + nd, len, nd * sizeof(*c));
                memcpy(c + 2 * nd, start, nd * sizeof(*c));
            }
            ints[0] = ndims;
            ints[1] = order;
            rc = c ? grid_finish(ndims, gs, runs, order, old,
                                 MPI_COMBINER_SUBARRAY, ints, 2, c,
                                 (int)(3 * nd), newtype, fn)
                   : fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
            free(c);
        } else {
            ints[0] = ndims;
            for (size_t d = 0; d < nd; d++) {
                ints[1 + d] = (int)sizes[d];
                ints[1 + nd + d] = (int)subs[d];
                ints[1 + 2 * nd + d] = (int)starts[d];
            }
            ints[1 + 3 * nd] = order;
            rc = grid_finish(ndims, gs, runs, order, old, MPI_COMBINER_SUBARRAY,
                             ints, (int)(3 * nd + 2), NULL, 0, newtype, fn);
        }
    }
    free(v);
    free(runs);
    free(ints);
    return rc;
}

/* ndims and the three arrays of either form, checked. */
#define SUBARRAY_ARGS_CHECK(fn)                                                \
    FY_CHECK_INIT(fn);                                                         \
    FY_CHECK(ndims > 0, NULL, MPI_ERR_DIMS, fn, "ndims %d is not positive",    \
             ndims);                                                           \
    FY_CHECK(array_of_sizes &&array_of_subsizes &&array_of_starts, NULL,       \
             MPI_ERR_ARG, fn, "an array argument is NULL")

FY_API int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                     const int array_of_subsizes[],
                                     const int array_of_starts[], int order,
                                     MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    SUBARRAY_ARGS_CHECK(__func__);
    size_t nd = (size_t)ndims;
    MPI_Count *v = malloc(3 * nd * sizeof(*v));
    if (!v)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
    for (size_t d = 0; d < nd; d++) {
        v[d] = array_of_sizes[d];
        v[nd + d] = array_of_subsizes[d];
        v[2 * nd + d] = array_of_starts[d];
    }
    int rc = subarray(ndims, v, v + nd, v + 2 * nd, order, oldtype, newtype,
                      __func__);
    free(v);
    return rc;
}
FY_ALIAS(MPI_Type_create_subarray)

FY_API int PMPI_Type_create_subarray_c(int ndims,
                                       const MPI_Count array_of_sizes[],
                                       const MPI_Count array_of_subsizes[],
                                       const MPI_Count array_of_starts[],
                                       int order, MPI_Datatype oldtype,
                                       MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    SUBARRAY_ARGS_CHECK(__func__);
    return subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts,
                    order, oldtype, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_subarray_c)

/* One dimension of a darray: the runs process 'coord' of 'np' owns among
 * 'gsize' elements, distributed as 'distrib' with argument 'darg'. Fills
 * start/len (capacity gsize) and returns the run count, or -1 if the
 * arguments are inconsistent. */
static int darray_dim(int gsize, int distrib, int darg, int np, int coord,
                      MPI_Count *start, MPI_Count *len)
{
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if (np != 1)
            return -1;
        start[0] = 0;
        len[0] = gsize;
        return 1;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        long b =
            darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + np - 1) / np : darg;
        if (b <= 0 || b * np < gsize)
            return -1;
        long lo = FY_MIN(b * coord, (long)gsize);
        long hi = FY_MIN(lo + b, (long)gsize);
        start[0] = lo;
        len[0] = hi - lo;
        return 1;
    }
    if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
        if (b <= 0)
            return -1;
        int n = 0;
        for (long lo = b * coord; lo < gsize; lo += b * np) {
            start[n] = lo;
            len[n] = FY_MIN(b, gsize - lo);
            n++;
        }
        return n;
    }
    return -1;
}

static int darray(int size, int rank, int ndims, const int array_of_gsizes[],
                  const int array_of_distribs[], const int array_of_dargs[],
                  const int array_of_psizes[], int order, MPI_Datatype oldtype,
                  MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_PTR(newtype, fn);
    FY_CHECK(size > 0 && rank >= 0 && rank < size, NULL, MPI_ERR_ARG, fn,
             "rank %d is not in a group of size %d", rank, size);
    FY_CHECK(ndims > 0, NULL, MPI_ERR_DIMS, fn, "ndims %d is not positive",
             ndims);
    FY_CHECK(array_of_gsizes && array_of_distribs && array_of_dargs &&
                 array_of_psizes,
             NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
    FY_CHECK(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, NULL,
             MPI_ERR_ARG, fn, "order %d is neither MPI_ORDER_C nor _FORTRAN",
             order);
    GET_TYPE(old, oldtype, fn);
    long nprocs = 1;
    MPI_Count total = 0;
    for (int d = 0; d < ndims; d++) {
        FY_CHECK(array_of_gsizes[d] > 0 && array_of_psizes[d] > 0, NULL,
                 MPI_ERR_ARG, fn, "dimension %d: gsize %d, psize %d", d,
                 array_of_gsizes[d], array_of_psizes[d]);
        nprocs *= array_of_psizes[d];
        FY_CHECK(nprocs <= size, NULL, MPI_ERR_ARG, fn,
                 "the process grid is larger than size %d", size);
        total += array_of_gsizes[d];
    }
    FY_CHECK(nprocs == size, NULL, MPI_ERR_ARG, fn,
             "the process grid has %ld processes, not size %d", nprocs, size);
    size_t nd = (size_t)ndims;
    MPI_Count *gs = malloc(nd * sizeof(*gs));
    MPI_Count *runv = malloc(2 * ((size_t)total + 1) * sizeof(*runv));
    struct fy_dtype_runs *runs = malloc(nd * sizeof(*runs));
    int *ints = malloc((4 * nd + 4) * sizeof(*ints));
    int rc = MPI_SUCCESS;
    if (!gs || !runv || !runs || !ints)
        rc = fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    /* The process grid is row-major whatever the array order. */
    int r = rank;
    MPI_Count *at = runv;
    for (int d = ndims - 1; d >= 0 && rc == MPI_SUCCESS; d--) {
        int coord = r % array_of_psizes[d];
        r /= array_of_psizes[d];
        gs[d] = array_of_gsizes[d];
        MPI_Count *start = at, *len = at + array_of_gsizes[d];
        at += 2 * (size_t)array_of_gsizes[d];
        int n = darray_dim(array_of_gsizes[d], array_of_distribs[d],
                           array_of_dargs[d], array_of_psizes[d], coord, start,
                           len);
        if (n < 0)
            rc = fy_mpi_err(NULL, MPI_ERR_ARG, fn,
                            "dimension %d: distribution %d with argument %d "
                            "cannot spread %d elements over %d processes",
                            d, array_of_distribs[d], array_of_dargs[d],
                            array_of_gsizes[d], array_of_psizes[d]);
        else
            runs[d] = (struct fy_dtype_runs){n, start, len};
    }
    if (rc == MPI_SUCCESS) {
        int ni = 0;
        ints[ni++] = size;
        ints[ni++] = rank;
        ints[ni++] = ndims;
        const int *arrays[] = {array_of_gsizes, array_of_distribs,
                               array_of_dargs, array_of_psizes};
        for (int k = 0; k < 4; k++)
            for (int d = 0; d < ndims; d++)
                ints[ni++] = arrays[k][d];
        ints[ni++] = order;
        rc = grid_finish(ndims, gs, runs, order, old, MPI_COMBINER_DARRAY, ints,
                         ni, NULL, 0, newtype, fn);
    }
    free(gs);
    free(runv);
    free(runs);
    free(ints);
    return rc;
}

FY_API int PMPI_Type_create_darray(int size, int rank, int ndims,
                                   const int array_of_gsizes[],
                                   const int array_of_distribs[],
                                   const int array_of_dargs[],
                                   const int array_of_psizes[], int order,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return darray(size, rank, ndims, array_of_gsizes, array_of_distribs,
                  array_of_dargs, array_of_psizes, order, oldtype, newtype,
                  __func__);
}
FY_ALIAS(MPI_Type_create_darray)

/* Darray's run lists hold up to one entry per global element, so Ferry
 * takes global sizes up to INT_MAX (MPI_ERR_COUNT beyond); within that
 * the _c form is the int form, contents included. */
FY_API int PMPI_Type_create_darray_c(int size, int rank, int ndims,
                                     const MPI_Count array_of_gsizes[],
                                     const int array_of_distribs[],
                                     const int array_of_dargs[],
                                     const int array_of_psizes[], int order,
                                     MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    FY_CHECK(ndims > 0, NULL, MPI_ERR_DIMS, fn, "ndims %d is not positive",
             ndims);
    FY_CHECK(array_of_gsizes != NULL, NULL, MPI_ERR_ARG, fn,
             "array_of_gsizes is NULL");
    int *gs = malloc((size_t)ndims * sizeof(*gs));
    if (!gs)
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int d = 0; d < ndims; d++) {
        if (array_of_gsizes[d] > INT_MAX) {
            free(gs);
            return fy_mpi_err(NULL, MPI_ERR_COUNT, fn,
                              "dimension %d: global size %lld; Ferry's "
                              "darray takes at most INT_MAX",
                              d, (long long)array_of_gsizes[d]);
        }
        gs[d] = (int)array_of_gsizes[d];
    }
    int rc = darray(size, rank, ndims, gs, array_of_distribs, array_of_dargs,
                    array_of_psizes, order, oldtype, newtype, fn);
    free(gs);
    return rc;
}
FY_ALIAS(MPI_Type_create_darray_c)

/* ---- external32 -------------------------------------------------------- */

static int check_datarep(const char *datarep, const char *fn)
{
    FY_CHECK(datarep != NULL, NULL, MPI_ERR_ARG, fn, "datarep is NULL");
    FY_CHECK(strcmp(datarep, "external32") == 0, NULL,
             MPI_ERR_UNSUPPORTED_DATAREP, fn,
             "data representation \"%s\" is not \"external32\"", datarep);
    return MPI_SUCCESS;
}

static int external_size(MPI_Count incount, const struct fy_dtype *dt,
                         MPI_Count *size, const char *fn)
{
    MPI_Count n = fy_dtype_external_size(dt, incount);
    FY_CHECK(n >= 0, NULL, MPI_ERR_TYPE, fn,
             "the datatype holds a type external32 does not define");
    *size = n;
    return MPI_SUCCESS;
}

static int pack_external(const char *datarep, const void *inbuf,
                         MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                         MPI_Aint outsize, MPI_Aint *position, bool unpack,
                         const char *fn)
{
    FY_CHECK_INIT(fn);
    int rc = check_datarep(datarep, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    FY_CHECK(incount >= 0, NULL, MPI_ERR_COUNT, fn, "count %lld is negative",
             (long long)incount);
    CHECK_PTR(position, fn);
    GET_TYPE(dt, datatype, fn);
    MPI_Count need = 0;
    rc = external_size(incount, dt, &need, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    FY_CHECK(*position >= 0 && *position <= outsize &&
                 need <= outsize - *position,
             NULL, unpack ? MPI_ERR_TRUNCATE : MPI_ERR_NO_SPACE, fn,
             "%lld bytes of external32 data at position %lld do not fit in "
             "%lld bytes",
             (long long)need, (long long)*position, (long long)outsize);
    if (need == 0)
        return MPI_SUCCESS;
    FY_CHECK(inbuf && outbuf, NULL, MPI_ERR_BUFFER, fn, "a buffer is NULL");
    /* 'outbuf' is the packed side for pack, the typed side for unpack. */
    if (unpack)
        rc = fy_dtype_unpack_external((const char *)inbuf + *position, incount,
                                      dt, outbuf);
    else
        rc = fy_dtype_pack_external(inbuf, incount, dt,
                                    (char *)outbuf + *position);
    if (rc == -ERANGE)
        return fy_mpi_err(NULL, MPI_ERR_CONVERSION, fn,
                          "a value does not fit its external32 size");
    if (rc)
        return fy_mpi_err(NULL, MPI_ERR_TYPE, fn,
                          "the datatype holds a type external32 does not "
                          "define");
    *position += need;
    return MPI_SUCCESS;
}

FY_API int PMPI_Pack_external(const char datarep[], const void *inbuf,
                              int incount, MPI_Datatype datatype, void *outbuf,
                              MPI_Aint outsize, MPI_Aint *position)
{
    FY_MT_OBJ();
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize,
                         position, false, __func__);
}
FY_ALIAS(MPI_Pack_external)

FY_API int PMPI_Pack_external_c(const char datarep[], const void *inbuf,
                                MPI_Count incount, MPI_Datatype datatype,
                                void *outbuf, MPI_Count outsize,
                                MPI_Count *position)
{
    FY_MT_OBJ();
    return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize,
                         position, false, __func__);
}
FY_ALIAS(MPI_Pack_external_c)

FY_API int PMPI_Unpack_external(const char datarep[], const void *inbuf,
                                MPI_Aint insize, MPI_Aint *position,
                                void *outbuf, int outcount,
                                MPI_Datatype datatype)
{
    FY_MT_OBJ();
    return pack_external(datarep, inbuf, outcount, datatype, outbuf, insize,
                         position, true, __func__);
}
FY_ALIAS(MPI_Unpack_external)

FY_API int PMPI_Unpack_external_c(const char datarep[], const void *inbuf,
                                  MPI_Count insize, MPI_Count *position,
                                  void *outbuf, MPI_Count outcount,
                                  MPI_Datatype datatype)
{
    FY_MT_OBJ();
    return pack_external(datarep, inbuf, outcount, datatype, outbuf, insize,
                         position, true, __func__);
}
FY_ALIAS(MPI_Unpack_external_c)

static int pack_external_size(const char *datarep, MPI_Count incount,
                              MPI_Datatype datatype, MPI_Count *size,
                              const char *fn)
{
    FY_CHECK_INIT(fn);
    int rc = check_datarep(datarep, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    FY_CHECK(incount >= 0, NULL, MPI_ERR_COUNT, fn, "count %lld is negative",
             (long long)incount);
    CHECK_PTR(size, fn);
    GET_TYPE(dt, datatype, fn);
    return external_size(incount, dt, size, fn);
}

FY_API int PMPI_Pack_external_size(const char datarep[], int incount,
                                   MPI_Datatype datatype, MPI_Aint *size)
{
    FY_MT_OBJ();
    return pack_external_size(datarep, incount, datatype, size, __func__);
}
FY_ALIAS(MPI_Pack_external_size)

FY_API int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount,
                                     MPI_Datatype datatype, MPI_Count *size)
{
    FY_MT_OBJ();
    return pack_external_size(datarep, incount, datatype, size, __func__);
}
FY_ALIAS(MPI_Pack_external_size_c)

/* ---- Fortran 90 parameterised types ---------------------------------------
 * MPI_Type_create_f90_*: the smallest Fortran kind with at least the asked
 * precision and range, as a type that decodes to MPI_COMBINER_F90_* with
 * (p, r). The same (combiner, p, r) gives the same handle every time, and
 * the type cannot be freed (MPI 19.1.9). */

struct f90_type {
    int combiner, p, r;
    MPI_Datatype handle;
    struct f90_type *next;
};
static struct f90_type *s_f90;

static int f90_type(int combiner, int p, int r, MPI_Datatype base,
                    MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK(newtype != NULL, NULL, MPI_ERR_ARG, fn, "newtype is NULL");
    FY_CHECK(base != MPI_DATATYPE_NULL, NULL, MPI_ERR_ARG, fn,
             "no Fortran kind has precision %d and range %d", p, r);
    for (struct f90_type *f = s_f90; f; f = f->next) {
        if (f->combiner == combiner && f->p == p && f->r == r &&
            fy_dtype_get(f->handle)) {
            *newtype = f->handle;
            return MPI_SUCCESS;
        }
    }
    struct fy_dtype *old = fy_dtype_get(base), *dt = NULL;
    struct f90_type *f = malloc(sizeof(*f));
    int ints[2] = {p, r}, ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    int rc = f ? fy_dtype_dup(old, &dt) : -ENOMEM;
    if (rc == 0) {
        rc = fy_dtype_set_contents(dt, combiner, ni, ni == 1 ? &r : ints, 0,
                                   NULL, 0, NULL, 0, NULL);
        if (rc == 0)
            rc = fy_dtype_register(dt);
        if (rc)
            fy_dtype_release(dt);
    }
    if (rc) {
        free(f);
        return fy_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    dt->builtin = true; /* predefined in all but name: never freed */
    *f = (struct f90_type){combiner, p, r, dt->handle, s_f90};
    s_f90 = f;
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

/* Whether a kind with precision kp and range kr satisfies (p, r);
 * MPI_UNDEFINED asks nothing. */
static bool f90_fits(int p, int r, int kp, int kr)
{
    return (p == MPI_UNDEFINED || p <= kp) && (r == MPI_UNDEFINED || r <= kr);
}

FY_API int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    /* gfortran's real(4) and real(8); real(16) is not a C type here. */
    MPI_Datatype t = f90_fits(p, r, 6, 37)     ? MPI_REAL4
                     : f90_fits(p, r, 15, 307) ? MPI_REAL8
                                               : MPI_DATATYPE_NULL;
    return f90_type(MPI_COMBINER_F90_REAL, p, r, t, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_f90_real)

FY_API int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    MPI_Datatype t = f90_fits(p, r, 6, 37)     ? MPI_COMPLEX8
                     : f90_fits(p, r, 15, 307) ? MPI_COMPLEX16
                                               : MPI_DATATYPE_NULL;
    return f90_type(MPI_COMBINER_F90_COMPLEX, p, r, t, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_f90_complex)

FY_API int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK_INIT(__func__);
    MPI_Datatype t = r <= 2    ? MPI_INTEGER1
                     : r <= 4  ? MPI_INTEGER2
                     : r <= 9  ? MPI_INTEGER4
                     : r <= 18 ? MPI_INTEGER8
                               : MPI_DATATYPE_NULL;
    return f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, t, newtype,
                    __func__);
}
FY_ALIAS(MPI_Type_create_f90_integer)
