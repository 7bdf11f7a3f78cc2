/* SPDX-License-Identifier: MIT */
/* Entry points for datatypes (constructors, queries, commit/free, names),
 * packing, addresses, status counts (MPI_Get_count and friends) and user
 * reduction ops. Arguments are checked here and translated into
 * src/dtype's byte-based calls. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "mpi/status.h"

/* ---- shared checks -------------------------------------------------- */

/* Resolve a datatype argument or report MPI_ERR_TYPE. */
#define GET_TYPE FY_GET_TYPE

#define CHECK_PTR(p, fn)                                                       \
    FY_CHECK((p) != NULL, NULL, MPI_ERR_ARG, fn, "%s is NULL", #p)

#define CHECK_COUNT(n, fn)                                                     \
    FY_CHECK((n) >= 0, NULL, MPI_ERR_COUNT, fn, "%s %lld is negative", #n,     \
             (long long)(n))

#define CHECK_STATUS(st, fn)                                                   \
    FY_CHECK((st) != NULL && (st) != MPI_STATUS_IGNORE, NULL, MPI_ERR_ARG, fn, \
             "status is NULL or MPI_STATUS_IGNORE")

/* Report a constructor's internal error. */
static int ctor_err(int rc, const char *fn)
{
    switch (rc) {
    case -EOVERFLOW:
        return fy_mpi_err(NULL, MPI_ERR_COUNT, fn,
                          "the new datatype's size overflows MPI_Count");
    case -ERANGE:
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn,
                          "the new datatype's bounds (displacements, strides "
                          "and extents combined) overflow MPI_Aint");
    case -EINVAL:
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid argument");
    default:
        return fy_mpi_err(NULL, fy_errno_to_class(rc), fn,
                          "cannot build the datatype (out of memory?)");
    }
}

/* Give a freshly built type a handle and store it in *out. */
static int publish(struct fy_dtype *dt, MPI_Datatype *out, const char *fn)
{
    int rc = fy_dtype_register(dt);
    if (rc) {
        fy_dtype_release(dt);
        return ctor_err(rc, fn);
    }
    *out = dt->handle;
    return MPI_SUCCESS;
}

/* A constructor's arguments, kept for MPI_Type_get_contents. The _c
 * constructors record theirs exactly as their int twins do when every
 * value fits an int (so MPI_Type_get_envelope works and the two agree),
 * and otherwise as MPI 4.0's large-count layout: every count,
 * block length, stride and displacement in the large counts, in
 * argument order (ni only for int-only arguments such as ndims). */
struct args {
    int combiner;
    int ni, na, nt;
    const int *ints;
    const MPI_Aint *aints;
    struct fy_dtype *const *types;
    int nc;
    const MPI_Count *counts;
};

/* The common tail of every constructor: record its arguments, publish. */
static int finish(int rc, struct fy_dtype *dt, const struct args *a,
                  MPI_Datatype *out, const char *fn)
{
    if (rc)
        return ctor_err(rc, fn);
    rc = fy_dtype_set_contents(dt, a->combiner, a->ni, a->ints, a->na, a->aints,
                               a->nc, a->counts, a->nt, a->types);
    if (rc) {
        fy_dtype_release(dt);
        return ctor_err(rc, fn);
    }
    return publish(dt, out, fn);
}

static bool fits_int(MPI_Count v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* An array argument of either width: int (classic) or MPI_Count/MPI_Aint
 * (_c); NULL when absent. */
struct ivec {
    const int *i;
    const MPI_Count *c;
};

static MPI_Count ivec_at(struct ivec v, MPI_Count k)
{
    return v.c ? v.c[k] : v.i[k];
}

static bool ivec_null(struct ivec v)
{
    return !v.i && !v.c;
}

static struct ivec vint(const int *a)
{
    return (struct ivec){.i = a, .c = NULL};
}

static struct ivec vbig(const MPI_Count *a)
{
    return (struct ivec){.i = NULL, .c = a};
}

/* The int counts of a constructor that takes at most INT_MAX blocks in
 * its int form: refuse more when the array layout needs an int count. */
#define CHECK_NBLOCKS(count, fn)                                               \
    FY_CHECK((count) <= INT_MAX, NULL, MPI_ERR_COUNT, fn,                      \
             "count %lld: Ferry builds at most INT_MAX blocks",                \
             (long long)(count))

/* ---- constructors ---------------------------------------------------- */

static int contiguous(MPI_Count count, MPI_Datatype oldtype,
                      MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_COUNT(count, fn);
    CHECK_PTR(newtype, fn);
    GET_TYPE(old, oldtype, fn);
    struct fy_dtype *dt = NULL;
    int rc = fy_dtype_contiguous(count, old, &dt);
    int n = (int)FY_MIN(count, (MPI_Count)INT_MAX);
    bool big = !fits_int(count);
    struct args a = {MPI_COMBINER_CONTIGUOUS,
                     big ? 0 : 1,
                     0,
                     1,
                     &n,
                     NULL,
                     &old,
                     big,
                     &count};
    return finish(rc, dt, &a, newtype, fn);
}

FY_API int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return contiguous(count, oldtype, newtype, __func__);
}
FY_ALIAS(MPI_Type_contiguous)

FY_API int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return contiguous(count, oldtype, newtype, __func__);
}
FY_ALIAS(MPI_Type_contiguous_c)

/* stride_in_bytes: hvector; otherwise the stride counts old extents. */
static int vector(MPI_Count count, MPI_Count blocklength, MPI_Aint stride,
                  bool stride_in_bytes, MPI_Datatype oldtype,
                  MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_COUNT(count, fn);
    FY_CHECK(blocklength >= 0, NULL, MPI_ERR_ARG, fn,
             "blocklength %lld is negative", (long long)blocklength);
    CHECK_PTR(newtype, fn);
    GET_TYPE(old, oldtype, fn);
    MPI_Aint bytes = stride;
    struct fy_dtype *dt = NULL;
    int combiner = stride_in_bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR;
    int rc =
        !stride_in_bytes && __builtin_mul_overflow(stride, old->extent, &bytes)
            ? -ERANGE
            : fy_dtype_vector(count, blocklength, bytes, old, combiner, &dt);
    bool big = !fits_int(count) || !fits_int(blocklength) ||
               (!stride_in_bytes && !fits_int(stride));
    int ints[3] = {(int)count, (int)blocklength, (int)stride};
    MPI_Count counts[3] = {count, blocklength, stride};
    struct args a = {combiner,
                     stride_in_bytes ? 2 : 3,
                     stride_in_bytes,
                     1,
                     ints,
                     &stride,
                     &old,
                     0,
                     NULL};
    if (big) /* MPI 4.0: the (h)vector_c stride is a large count too */
        a = (struct args){combiner, 0, 0, 1, NULL, NULL, &old, 3, counts};
    return finish(rc, dt, &a, newtype, fn);
}

FY_API int PMPI_Type_vector(int count, int blocklength, int stride,
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return vector(count, blocklength, stride, false, oldtype, newtype,
                  __func__);
}
FY_ALIAS(MPI_Type_vector)

FY_API int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength,
                              MPI_Count stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return vector(count, blocklength, stride, false, oldtype, newtype,
                  __func__);
}
FY_ALIAS(MPI_Type_vector_c)

FY_API int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return vector(count, blocklength, stride, true, oldtype, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_hvector)

FY_API int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength,
                                      MPI_Count stride, MPI_Datatype oldtype,
                                      MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return vector(count, blocklength, stride, true, oldtype, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_hvector_c)

FY_API int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return vector(count, blocklength, stride, true, oldtype, newtype, __func__);
}
FY_ALIAS(MPI_Type_hvector)

/* The indexed family: per-block lengths (or one shared 'blocklen' when
 * blocklens is NULL) and displacements in elements (idisps, scaled by the
 * old extent) or bytes (adisps). */
static int indexed(MPI_Count count, struct ivec blocklens, MPI_Count blocklen,
                   struct ivec idisps, struct ivec adisps, MPI_Datatype oldtype,
                   MPI_Datatype *newtype, int combiner, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_COUNT(count, fn);
    CHECK_NBLOCKS(count, fn);
    CHECK_PTR(newtype, fn);
    FY_CHECK(count == 0 || !ivec_null(idisps) || !ivec_null(adisps), NULL,
             MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    GET_TYPE(old, oldtype, fn);
    bool per_block = !ivec_null(blocklens), elems = !ivec_null(idisps);
    FY_CHECK(per_block || blocklen >= 0, NULL, MPI_ERR_ARG, fn,
             "blocklength %lld is negative", (long long)blocklen);
    size_t n = (size_t)count;
    MPI_Count *bl = malloc((n + 1) * sizeof(*bl));
    MPI_Aint *d = malloc((n + 1) * sizeof(*d));
    /* get_contents: count, the block length(s), the displacements, as
     * ints (with aints for bytes) or all as large counts. */
    int *ints = malloc((n * 2 + 2) * sizeof(*ints));
    MPI_Count *counts = malloc((n * 2 + 2) * sizeof(*counts));
    MPI_Aint *aints = malloc((n + 1) * sizeof(*aints));
    if (!bl || !d || !ints || !counts || !aints) {
        free(bl);
        free(d);
        free(ints);
        free(counts);
        free(aints);
        return fy_mpi_err(NULL, MPI_ERR_OTHER, fn, "out of memory");
    }
    int nc = 0;
    counts[nc++] = count;
    if (per_block)
        for (size_t i = 0; i < n; i++)
            counts[nc++] = ivec_at(blocklens, (MPI_Count)i);
    else
        counts[nc++] = blocklen;
    int nlens = nc; /* count and block lengths: ints in the int layout */
    for (size_t i = 0; i < n; i++)
        counts[nc++] = elems ? ivec_at(idisps, (MPI_Count)i)
                             : ivec_at(adisps, (MPI_Count)i);
    int err = MPI_SUCCESS;
    bool big = false;
    for (int k = 0; k < nc && !big; k++)
        big = !fits_int(counts[k]) && (k < nlens || elems);
    for (size_t i = 0; i < n && err == MPI_SUCCESS; i++) {
        MPI_Count b = counts[per_block ? 1 + i : 1];
        if (b < 0)
            err = fy_mpi_err(NULL, MPI_ERR_ARG, fn,
                             "blocklength %lld of block %zu is negative",
                             (long long)b, i);
        bl[i] = b;
        MPI_Count x = counts[nlens + i];
        if (!elems)
            d[i] = x;
        else if (__builtin_mul_overflow(x, old->extent, &d[i]) &&
                 err == MPI_SUCCESS)
            err = ctor_err(-ERANGE, fn);
        aints[i] = x;
    }
    for (int k = 0; k < nc; k++)
        ints[k] = (int)counts[k];
    struct fy_dtype *dt = NULL;
    if (err == MPI_SUCCESS) {
        int rc = fy_dtype_indexed(count, bl, d, old, combiner, &dt);
        struct args a = {combiner,
                         elems ? nc : nlens,
                         elems ? 0 : (int)n,
                         1,
                         ints,
                         aints,
                         &old,
                         0,
                         NULL};
        if (big)
            a = (struct args){combiner, 0, 0, 1, NULL, NULL, &old, nc, counts};
        err = finish(rc, dt, &a, newtype, fn);
    }
    free(bl);
    free(d);
    free(ints);
    free(counts);
    free(aints);
    return err;
}
FY_API int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                             const int array_of_displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK(count <= 0 || array_of_blocklengths, NULL, MPI_ERR_ARG, __func__,
             "array_of_blocklengths is NULL");
    return indexed(count, vint(array_of_blocklengths), 0,
                   vint(array_of_displacements), vint(NULL), oldtype, newtype,
                   MPI_COMBINER_INDEXED, __func__);
}
FY_ALIAS(MPI_Type_indexed)

FY_API int PMPI_Type_indexed_c(MPI_Count count,
                               const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[],
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK(count <= 0 || array_of_blocklengths, NULL, MPI_ERR_ARG, __func__,
             "array_of_blocklengths is NULL");
    return indexed(count, vbig(array_of_blocklengths), 0,
                   vbig(array_of_displacements), vbig(NULL), oldtype, newtype,
                   MPI_COMBINER_INDEXED, __func__);
}
FY_ALIAS(MPI_Type_indexed_c)

FY_API int PMPI_Type_create_hindexed(int count,
                                     const int array_of_blocklengths[],
                                     const MPI_Aint array_of_displacements[],
                                     MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK(count <= 0 || array_of_blocklengths, NULL, MPI_ERR_ARG, __func__,
             "array_of_blocklengths is NULL");
    return indexed(count, vint(array_of_blocklengths), 0, vint(NULL),
                   vbig(array_of_displacements), oldtype, newtype,
                   MPI_COMBINER_HINDEXED, __func__);
}
FY_ALIAS(MPI_Type_create_hindexed)

FY_API int PMPI_Type_create_hindexed_c(MPI_Count count,
                                       const MPI_Count array_of_blocklengths[],
                                       const MPI_Count array_of_displacements[],
                                       MPI_Datatype oldtype,
                                       MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK(count <= 0 || array_of_blocklengths, NULL, MPI_ERR_ARG, __func__,
             "array_of_blocklengths is NULL");
    return indexed(count, vbig(array_of_blocklengths), 0, vbig(NULL),
                   vbig(array_of_displacements), oldtype, newtype,
                   MPI_COMBINER_HINDEXED, __func__);
}
FY_ALIAS(MPI_Type_create_hindexed_c)

FY_API int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                              MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    FY_CHECK(count <= 0 || array_of_blocklengths, NULL, MPI_ERR_ARG, __func__,
             "array_of_blocklengths is NULL");
    return indexed(count, vint(array_of_blocklengths), 0, vint(NULL),
                   vbig(array_of_displacements), oldtype, newtype,
                   MPI_COMBINER_HINDEXED, __func__);
}
FY_ALIAS(MPI_Type_hindexed)

FY_API int PMPI_Type_create_indexed_block(int count, int blocklength,
                                          const int array_of_displacements[],
                                          MPI_Datatype oldtype,
                                          MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return indexed(count, vint(NULL), blocklength, vint(array_of_displacements),
                   vint(NULL), oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK,
                   __func__);
}
FY_ALIAS(MPI_Type_create_indexed_block)

FY_API int
PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                 const MPI_Count array_of_displacements[],
                                 MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return indexed(count, vint(NULL), blocklength, vbig(array_of_displacements),
                   vint(NULL), oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK,
                   __func__);
}
FY_ALIAS(MPI_Type_create_indexed_block_c)

FY_API int
PMPI_Type_create_hindexed_block(int count, int blocklength,
                                const MPI_Aint array_of_displacements[],
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return indexed(count, vint(NULL), blocklength, vint(NULL),
                   vbig(array_of_displacements), oldtype, newtype,
                   MPI_COMBINER_HINDEXED_BLOCK, __func__);
}
FY_ALIAS(MPI_Type_create_hindexed_block)

FY_API int
PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                  const MPI_Count array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return indexed(count, vint(NULL), blocklength, vint(NULL),
                   vbig(array_of_displacements), oldtype, newtype,
                   MPI_COMBINER_HINDEXED_BLOCK, __func__);
}
FY_ALIAS(MPI_Type_create_hindexed_block_c)

static int create_struct(MPI_Count count, struct ivec blocklens,
                         const MPI_Aint *disps, const MPI_Datatype *types,
                         MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_COUNT(count, fn);
    CHECK_NBLOCKS(count, fn);
    CHECK_PTR(newtype, fn);
    FY_CHECK(count == 0 || (!ivec_null(blocklens) && disps && types), NULL,
             MPI_ERR_ARG, fn, "an array argument is NULL");
    size_t n = (size_t)count;
    MPI_Count *bl = calloc(n + 1, sizeof(*bl));
    struct fy_dtype **ts = calloc(n + 1, sizeof(*ts));
    int *ints = malloc((n + 1) * sizeof(*ints));
    MPI_Count *counts = malloc((2 * n + 1) * sizeof(*counts));
    if (!bl || !ts || !ints || !counts) {
        free(bl);
        free(ts);
        free(ints);
        free(counts);
        return fy_mpi_err(NULL, MPI_ERR_OTHER, fn, "out of memory");
    }
    int err = MPI_SUCCESS;
    bool big = false;
    ints[0] = (int)count;
    counts[0] = count;
    for (size_t i = 0; i < n && err == MPI_SUCCESS; i++) {
        ts[i] = fy_dtype_get(types[i]);
        bl[i] = ivec_at(blocklens, (MPI_Count)i);
        big = big || !fits_int(bl[i]);
        ints[1 + i] = (int)bl[i];
        counts[1 + i] = bl[i];
        counts[1 + n + i] = disps[i];
        if (!ts[i])
            err = fy_mpi_err(NULL, MPI_ERR_TYPE, fn,
                             "array_of_types[%zu] 0x%x is not a datatype", i,
                             (unsigned)types[i]);
        else if (bl[i] < 0)
            err = fy_mpi_err(NULL, MPI_ERR_ARG, fn,
                             "blocklength %lld of block %zu is negative",
                             (long long)bl[i], i);
    }
    if (err == MPI_SUCCESS) {
        struct fy_dtype *dt = NULL;
        int rc = fy_dtype_struct(count, bl, disps, ts, &dt);
        int c = (int)count;
        struct args a = {
            MPI_COMBINER_STRUCT, c + 1, c, c, ints, disps, ts, 0, NULL};
        if (big)
            a = (struct args){MPI_COMBINER_STRUCT, 0,     0, c, NULL, NULL, ts,
                              2 * c + 1,           counts};
        err = finish(rc, dt, &a, newtype, fn);
    }
    free(bl);
    free(ts);
    free(ints);
    free(counts);
    return err;
}

FY_API int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[],
                                   const MPI_Datatype array_of_types[],
                                   MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return create_struct(count, vint(array_of_blocklengths),
                         array_of_displacements, array_of_types, newtype,
                         __func__);
}
FY_ALIAS(MPI_Type_create_struct)

FY_API int PMPI_Type_create_struct_c(MPI_Count count,
                                     const MPI_Count array_of_blocklengths[],
                                     const MPI_Count array_of_displacements[],
                                     const MPI_Datatype array_of_types[],
                                     MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return create_struct(count, vbig(array_of_blocklengths),
                         array_of_displacements, array_of_types, newtype,
                         __func__);
}
FY_ALIAS(MPI_Type_create_struct_c)

FY_API int PMPI_Type_struct(int count, int array_of_blocklengths[],
                            MPI_Aint array_of_displacements[],
                            MPI_Datatype array_of_types[],
                            MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return create_struct(count, vint(array_of_blocklengths),
                         array_of_displacements, array_of_types, newtype,
                         __func__);
}
FY_ALIAS(MPI_Type_struct)

/* Resized: lb and extent are addresses in the int form (aints); the _c
 * form records them as large counts (MPI 4.0) only when they do not fit
 * an int, as the other _c constructors do. */
static int resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                   MPI_Datatype *newtype, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_PTR(newtype, fn);
    GET_TYPE(old, oldtype, fn);
    struct fy_dtype *dt = NULL;
    int rc = fy_dtype_resized(old, lb, extent, &dt);
    MPI_Aint aints[2] = {lb, extent};
    struct args a = {MPI_COMBINER_RESIZED, 0, 2, 1, NULL, aints, &old, 0, NULL};
    return finish(rc, dt, &a, newtype, fn);
}

FY_API int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb,
                                    MPI_Aint extent, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return resized(oldtype, lb, extent, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_resized)

FY_API int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb,
                                      MPI_Count extent, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    return resized(oldtype, lb, extent, newtype, __func__);
}
FY_ALIAS(MPI_Type_create_resized_c)

FY_API int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(newtype, fn);
    GET_TYPE(old, oldtype, fn);
    struct fy_dtype *dt = NULL;
    int rc = fy_dtype_dup(old, &dt);
    struct args a = {MPI_COMBINER_DUP, 0, 0, 1, NULL, NULL, &old, 0, NULL};
    rc = finish(rc, dt, &a, newtype, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Attributes follow the copy callbacks (MPI 6.7.4). */
    rc = fy_attr_copy_all(&old->attrs, oldtype, &dt->attrs, *newtype);
    if (rc != 0) {
        (void)fy_attr_delete_all(&dt->attrs, *newtype);
        fy_dtype_free_handle(dt);
        *newtype = MPI_DATATYPE_NULL;
        return fy_mpi_err(NULL, rc, fn, "an attribute copy callback failed");
    }
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_dup)

FY_API int PMPI_Type_commit(MPI_Datatype *datatype)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(datatype, fn);
    GET_TYPE(dt, *datatype, fn);
    dt->committed = true; /* the type map is final from construction on */
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_commit)

FY_API int PMPI_Type_free(MPI_Datatype *datatype)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(datatype, fn);
    GET_TYPE(dt, *datatype, fn);
    FY_CHECK(!dt->builtin, NULL, MPI_ERR_TYPE, fn,
             "cannot free the predefined datatype %s", dt->name);
    /* Attributes go with the user's last handle to the type. */
    if (dt->user_refs <= 1) {
        int rc = fy_attr_delete_all(&dt->attrs, *datatype);
        if (rc != 0)
            return fy_mpi_err(NULL, rc, fn,
                              "an attribute delete callback returned %d", rc);
    }
    /* Pending operations hold their own references: they finish with the
     * type intact even though the handle dies now. */
    fy_dtype_free_handle(dt);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_free)

/* ---- queries --------------------------------------------------------- */

FY_API int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(size, fn);
    GET_TYPE(dt, datatype, fn);
    *size = dt->size > INT_MAX ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_size)

static int size_count(MPI_Datatype datatype, MPI_Count *size, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_PTR(size, fn);
    GET_TYPE(dt, datatype, fn);
    *size = dt->size;
    return MPI_SUCCESS;
}

FY_API int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    FY_MT_NONE();
    return size_count(datatype, size, __func__);
}
FY_ALIAS(MPI_Type_size_x)

FY_API int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    FY_MT_NONE();
    return size_count(datatype, size, __func__);
}
FY_ALIAS(MPI_Type_size_c)

FY_API int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb,
                                MPI_Aint *extent)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(lb, fn);
    CHECK_PTR(extent, fn);
    GET_TYPE(dt, datatype, fn);
    *lb = dt->lb;
    *extent = dt->extent;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_get_extent)

static int extent_count(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent,
                        bool true_extent, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_PTR(lb, fn);
    CHECK_PTR(extent, fn);
    GET_TYPE(dt, datatype, fn);
    if (true_extent) {
        *lb = dt->true_lb;
        *extent = dt->true_ub - dt->true_lb;
    } else {
        *lb = dt->lb;
        *extent = dt->extent;
    }
    return MPI_SUCCESS;
}

FY_API int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
                                  MPI_Count *extent)
{
    FY_MT_NONE();
    return extent_count(datatype, lb, extent, false, __func__);
}
FY_ALIAS(MPI_Type_get_extent_x)

FY_API int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb,
                                  MPI_Count *extent)
{
    FY_MT_NONE();
    return extent_count(datatype, lb, extent, false, __func__);
}
FY_ALIAS(MPI_Type_get_extent_c)

FY_API int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
                                     MPI_Aint *true_extent)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(true_lb, fn);
    CHECK_PTR(true_extent, fn);
    GET_TYPE(dt, datatype, fn);
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_get_true_extent)

FY_API int PMPI_Type_get_true_extent_x(MPI_Datatype datatype,
                                       MPI_Count *true_lb,
                                       MPI_Count *true_extent)
{
    FY_MT_NONE();
    return extent_count(datatype, true_lb, true_extent, true, __func__);
}
FY_ALIAS(MPI_Type_get_true_extent_x)

FY_API int PMPI_Type_get_true_extent_c(MPI_Datatype datatype,
                                       MPI_Count *true_lb,
                                       MPI_Count *true_extent)
{
    FY_MT_NONE();
    return extent_count(datatype, true_lb, true_extent, true, __func__);
}
FY_ALIAS(MPI_Type_get_true_extent_c)

/* MPI-1 forms, removed from the standard but still in MPICH's ABI. */
FY_API int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(extent, fn);
    GET_TYPE(dt, datatype, fn);
    *extent = dt->extent;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_extent)

FY_API int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(displacement, fn);
    GET_TYPE(dt, datatype, fn);
    *displacement = dt->lb;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_lb)

FY_API int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(displacement, fn);
    GET_TYPE(dt, datatype, fn);
    *displacement = dt->ub;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_ub)

FY_API int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name,
                              int *resultlen)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(type_name, fn);
    CHECK_PTR(resultlen, fn);
    GET_TYPE(dt, datatype, fn);
    size_t n = strnlen(dt->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, dt->name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_get_name)

FY_API int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(type_name, fn);
    GET_TYPE(dt, datatype, fn);
    /* Longer names are truncated, as MPI allows. */
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(dt->name, type_name, n);
    dt->name[n] = '\0';
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_set_name)

FY_API int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(datatype, fn);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        t = size == 1   ? MPI_SIGNED_CHAR
            : size == 2 ? MPI_SHORT
            : size == 4 ? MPI_INT
            : size == 8 ? MPI_LONG
                        : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_REAL:
        t = size == 4                          ? MPI_FLOAT
            : size == 8                        ? MPI_DOUBLE
            : size == (int)sizeof(long double) ? MPI_LONG_DOUBLE
                                               : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        t = size == 8    ? MPI_C_FLOAT_COMPLEX
            : size == 16 ? MPI_C_DOUBLE_COMPLEX
            : size == (int)sizeof(long double _Complex)
                ? MPI_C_LONG_DOUBLE_COMPLEX
                : MPI_DATATYPE_NULL;
        break;
    default:
        return fy_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid typeclass %d",
                          typeclass);
    }
    FY_CHECK(t != MPI_DATATYPE_NULL, NULL, MPI_ERR_ARG, fn,
             "no datatype of typeclass %d has size %d", typeclass, size);
    *datatype = t;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Type_match_size)

/* ---- addresses --------------------------------------------------------- */

FY_API int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    FY_MT_NONE();
    const char *fn = __func__;
    CHECK_PTR(address, fn);
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Get_address)

FY_API int PMPI_Address(void *location, MPI_Aint *address)
{
    FY_MT_NONE();
    return PMPI_Get_address(location, address);
}
FY_ALIAS(MPI_Address)

FY_API MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    FY_MT_NONE();
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
FY_ALIAS(MPI_Aint_add)

FY_API MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    FY_MT_NONE();
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
FY_ALIAS(MPI_Aint_diff)

/* ---- packing ------------------------------------------------------------ */

static int pack(const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                void *outbuf, MPI_Count outsize, MPI_Count *position,
                MPI_Comm comm, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(incount >= 0, c, MPI_ERR_COUNT, fn, "incount %lld is negative",
             (long long)incount);
    FY_CHECK(outsize >= 0, c, MPI_ERR_ARG, fn, "outsize %lld is negative",
             (long long)outsize);
    GET_TYPE(dt, datatype, fn);
    FY_CHECK(dt->committed, c, MPI_ERR_TYPE, fn,
             "datatype 0x%x has not been committed", (unsigned)datatype);
    FY_CHECK(position != NULL, c, MPI_ERR_ARG, fn, "position is NULL");
    FY_CHECK(*position >= 0 && *position <= outsize, c, MPI_ERR_ARG, fn,
             "position %lld is outside [0, %lld]", (long long)*position,
             (long long)outsize);
    MPI_Count need = incount * dt->size;
    FY_CHECK(need <= outsize - *position, c, MPI_ERR_TRUNCATE, fn,
             "%lld bytes do not fit in the %lld left in outbuf",
             (long long)need, (long long)(outsize - *position));
    FY_CHECK(need == 0 || outbuf != NULL, c, MPI_ERR_BUFFER, fn,
             "outbuf is NULL");
    if (need > 0)
        fy_dtype_pack(inbuf, incount, dt, (char *)outbuf + *position);
    *position += need;
    return MPI_SUCCESS;
}

static int unpack(const void *inbuf, MPI_Count insize, MPI_Count *position,
                  void *outbuf, MPI_Count outcount, MPI_Datatype datatype,
                  MPI_Comm comm, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(outcount >= 0, c, MPI_ERR_COUNT, fn, "outcount %lld is negative",
             (long long)outcount);
    FY_CHECK(insize >= 0, c, MPI_ERR_ARG, fn, "insize %lld is negative",
             (long long)insize);
    GET_TYPE(dt, datatype, fn);
    FY_CHECK(dt->committed, c, MPI_ERR_TYPE, fn,
             "datatype 0x%x has not been committed", (unsigned)datatype);
    FY_CHECK(position != NULL, c, MPI_ERR_ARG, fn, "position is NULL");
    FY_CHECK(*position >= 0 && *position <= insize, c, MPI_ERR_ARG, fn,
             "position %lld is outside [0, %lld]", (long long)*position,
             (long long)insize);
    MPI_Count need = outcount * dt->size;
    FY_CHECK(need <= insize - *position, c, MPI_ERR_TRUNCATE, fn,
             "%lld bytes wanted but only %lld left in inbuf", (long long)need,
             (long long)(insize - *position));
    FY_CHECK(need == 0 || inbuf != NULL, c, MPI_ERR_BUFFER, fn,
             "inbuf is NULL");
    if (need > 0)
        fy_dtype_unpack((const char *)inbuf + *position, need, outbuf, outcount,
                        dt);
    *position += need;
    return MPI_SUCCESS;
}

FY_API int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype,
                     void *outbuf, int outsize, int *position, MPI_Comm comm)
{
    FY_MT_NONE();
    FY_CHECK(position != NULL, NULL, MPI_ERR_ARG, __func__, "position is NULL");
    MPI_Count pos = *position;
    int rc =
        pack(inbuf, incount, datatype, outbuf, outsize, &pos, comm, __func__);
    if (rc == MPI_SUCCESS)
        *position = (int)pos; /* <= outsize, so it fits */
    return rc;
}
FY_ALIAS(MPI_Pack)

FY_API int PMPI_Pack_c(const void *inbuf, MPI_Count incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                       MPI_Count *position, MPI_Comm comm)
{
    FY_MT_NONE();
    return pack(inbuf, incount, datatype, outbuf, outsize, position, comm,
                __func__);
}
FY_ALIAS(MPI_Pack_c)

FY_API int PMPI_Unpack(const void *inbuf, int insize, int *position,
                       void *outbuf, int outcount, MPI_Datatype datatype,
                       MPI_Comm comm)
{
    FY_MT_NONE();
    FY_CHECK(position != NULL, NULL, MPI_ERR_ARG, __func__, "position is NULL");
    MPI_Count pos = *position;
    int rc =
        unpack(inbuf, insize, &pos, outbuf, outcount, datatype, comm, __func__);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
FY_ALIAS(MPI_Unpack)

FY_API int PMPI_Unpack_c(const void *inbuf, MPI_Count insize,
                         MPI_Count *position, void *outbuf, MPI_Count outcount,
                         MPI_Datatype datatype, MPI_Comm comm)
{
    FY_MT_NONE();
    return unpack(inbuf, insize, position, outbuf, outcount, datatype, comm,
                  __func__);
}
FY_ALIAS(MPI_Unpack_c)

static int pack_size(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                     MPI_Count *size, const char *fn)
{
    FY_CHECK_INIT(fn);
    FY_GET_COMM(c, comm, fn);
    FY_CHECK(incount >= 0, c, MPI_ERR_COUNT, fn, "incount %lld is negative",
             (long long)incount);
    FY_CHECK(size != NULL, c, MPI_ERR_ARG, fn, "size is NULL");
    GET_TYPE(dt, datatype, fn);
    FY_CHECK(dt->committed, c, MPI_ERR_TYPE, fn,
             "datatype 0x%x has not been committed", (unsigned)datatype);
    /* Ferry packs raw bytes with no header, so this is exact. */
    FY_CHECK(!__builtin_mul_overflow(incount, dt->size, size), c,
             MPI_ERR_VALUE_TOO_LARGE, fn, "packed size overflows");
    return MPI_SUCCESS;
}

FY_API int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
                          int *size)
{
    FY_MT_NONE();
    MPI_Count n = 0;
    FY_CHECK(size != NULL, NULL, MPI_ERR_ARG, __func__, "size is NULL");
    int rc = pack_size(incount, datatype, comm, &n, __func__);
    if (rc)
        return rc;
    FY_CHECK(n <= INT_MAX, NULL, MPI_ERR_VALUE_TOO_LARGE, __func__,
             "packed size %lld does not fit in an int (use MPI_Pack_size_c)",
             (long long)n);
    *size = (int)n;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Pack_size)

FY_API int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype,
                            MPI_Comm comm, MPI_Count *size)
{
    FY_MT_NONE();
    return pack_size(incount, datatype, comm, size, __func__);
}
FY_ALIAS(MPI_Pack_size_c)

/* ---- counts in a status ---------------------------------------------------
 */

/* Whole elements of dt in 'bytes', or MPI_UNDEFINED. */
static MPI_Count count_of(const struct fy_dtype *dt, MPI_Count bytes)
{
    if (dt->size == 0)
        return bytes == 0 ? 0 : MPI_UNDEFINED;
    if (bytes % dt->size != 0)
        return MPI_UNDEFINED;
    return bytes / dt->size;
}

static int get_count(const MPI_Status *status, MPI_Datatype datatype,
                     MPI_Count *count, bool elements, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_STATUS(status, fn);
    CHECK_PTR(count, fn);
    GET_TYPE(dt, datatype, fn);
    MPI_Count bytes = fy_status_bytes(status);
    if (elements) {
        MPI_Count n = fy_dtype_elements(dt, bytes);
        *count = n < 0 ? MPI_UNDEFINED : n;
    } else {
        *count = count_of(dt, bytes);
    }
    return MPI_SUCCESS;
}

/* The int forms report MPI_UNDEFINED when the value does not fit. */
static int get_count_int(const MPI_Status *status, MPI_Datatype datatype,
                         int *count, bool elements, const char *fn)
{
    MPI_Count n = 0;
    FY_CHECK(count != NULL, NULL, MPI_ERR_ARG, fn, "count is NULL");
    int rc = get_count(status, datatype, &n, elements, fn);
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}

FY_API int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype,
                          int *count)
{
    FY_MT_NONE();
    return get_count_int(status, datatype, count, false, __func__);
}
FY_ALIAS(MPI_Get_count)

FY_API int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype,
                            MPI_Count *count)
{
    FY_MT_NONE();
    return get_count(status, datatype, count, false, __func__);
}
FY_ALIAS(MPI_Get_count_c)

FY_API int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype,
                             int *count)
{
    FY_MT_NONE();
    return get_count_int(status, datatype, count, true, __func__);
}
FY_ALIAS(MPI_Get_elements)

FY_API int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype,
                               MPI_Count *count)
{
    FY_MT_NONE();
    return get_count(status, datatype, count, true, __func__);
}
FY_ALIAS(MPI_Get_elements_x)

FY_API int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype,
                               MPI_Count *count)
{
    FY_MT_NONE();
    return get_count(status, datatype, count, true, __func__);
}
FY_ALIAS(MPI_Get_elements_c)

static int set_elements(MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count count, const char *fn)
{
    FY_CHECK_INIT(fn);
    CHECK_STATUS(status, fn);
    CHECK_COUNT(count, fn);
    GET_TYPE(dt, datatype, fn);
    /* 'count' counts basic elements: record the bytes they occupy. */
    MPI_Count bytes = fy_dtype_element_bytes(dt, count);
    fy_status_set_bytes(status, bytes);
    return MPI_SUCCESS;
}

FY_API int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype,
                                    int count)
{
    FY_MT_NONE();
    return set_elements(status, datatype, count, __func__);
}
FY_ALIAS(MPI_Status_set_elements)

FY_API int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype,
                                      MPI_Count count)
{
    FY_MT_NONE();
    return set_elements(status, datatype, count, __func__);
}
FY_ALIAS(MPI_Status_set_elements_x)

FY_API int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype,
                                      MPI_Count count)
{
    FY_MT_NONE();
    return set_elements(status, datatype, count, __func__);
}
FY_ALIAS(MPI_Status_set_elements_c)

FY_API int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_STATUS(status, fn);
    fy_status_set_cancelled_flag(status, flag != 0);
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_set_cancelled)

/* ---- user reduction ops ----------------------------------------------------
 */

FY_API int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(user_fn, fn);
    CHECK_PTR(op, fn);
    struct fy_op *o;
    int rc = fy_op_create(user_fn, commute != 0, &o);
    if (rc)
        return fy_mpi_err(NULL, fy_errno_to_class(rc), fn,
                          "cannot create the op");
    *op = o->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Op_create)

FY_API int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute,
                            MPI_Op *op)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(user_fn, fn);
    CHECK_PTR(op, fn);
    struct fy_op *o;
    int rc = fy_op_create_c(user_fn, commute != 0, &o);
    if (rc)
        return fy_mpi_err(NULL, fy_errno_to_class(rc), fn,
                          "cannot create the op");
    *op = o->handle;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Op_create_c)

FY_API int PMPI_Op_free(MPI_Op *op)
{
    FY_MT_OBJ();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(op, fn);
    struct fy_op *o = fy_op_get(*op);
    FY_CHECK(o != NULL, NULL, MPI_ERR_OP, fn, "invalid op 0x%x", (unsigned)*op);
    FY_CHECK(!o->builtin, NULL, MPI_ERR_OP, fn, "cannot free a predefined op");
    fy_op_free_handle(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Op_free)

FY_API int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    FY_MT_NONE();
    const char *fn = __func__;
    FY_CHECK_INIT(fn);
    CHECK_PTR(commute, fn);
    struct fy_op *o = fy_op_get(op);
    FY_CHECK(o != NULL, NULL, MPI_ERR_OP, fn, "invalid op 0x%x", (unsigned)op);
    *commute = o->commute ? 1 : 0;
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Op_commutative)
