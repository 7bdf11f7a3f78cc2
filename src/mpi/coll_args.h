/* SPDX-License-Identifier: MIT */
/* Argument checks shared by the collective entry points (coll.c,
 * coll_inter.c, neighbor.c): each names the argument in its message and
 * reports through the communicator's error handler (FY_CHECK). */
#ifndef FY_MPI_COLL_ARGS_H
#define FY_MPI_COLL_ARGS_H

#include "mpi/mpi_impl.h"

/* Resolve a datatype argument: valid and committed. */
#define GET_DT(var, h, c, fn, what)                                            \
    struct fy_dtype *var = fy_dtype_get(h);                                    \
    FY_CHECK(var != NULL, c, MPI_ERR_TYPE, fn, "invalid %s 0x%x", what,        \
             (unsigned)(h));                                                   \
    FY_CHECK(var->committed, c, MPI_ERR_TYPE, fn, "%s 0x%x is not committed",  \
             what, (unsigned)(h))

/* Resolve an op argument, valid for the datatype. */
#define GET_OP(var, h, dt, c, fn)                                              \
    struct fy_op *var = fy_op_get(h);                                          \
    FY_CHECK(var != NULL, c, MPI_ERR_OP, fn, "invalid op 0x%x",                \
             (unsigned)(h));                                                   \
    FY_CHECK(fy_op_valid_for(var, dt), c, MPI_ERR_OP, fn,                      \
             "op 0x%x is not defined for datatype 0x%x", (unsigned)(h),        \
             (unsigned)(dt)->handle)

#define CHECK_COUNT(n, c, fn, what)                                            \
    FY_CHECK((n) >= 0, c, MPI_ERR_COUNT, fn, "%s %lld is negative", what,      \
             (long long)(n))

#endif /* FY_MPI_COLL_ARGS_H */
