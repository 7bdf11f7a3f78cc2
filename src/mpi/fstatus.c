/* SPDX-License-Identifier: MIT */
/* MPI_Status_c2f / MPI_Status_f2c: a Fortran INTEGER status array has the
 * C MPI_Status layout (MPICH's), so conversion is a checked copy. */
#include <string.h>

#include "mpi/mpi_impl.h"

static int status_copy(const void *from, void *to, const char *fn)
{
    FY_CHECK(from != NULL && from != (const void *)MPI_STATUS_IGNORE, NULL,
             MPI_ERR_ARG, fn, "the source status is NULL or ignored");
    FY_CHECK(to != NULL && to != (void *)MPI_STATUS_IGNORE, NULL, MPI_ERR_ARG,
             fn, "the destination status is NULL or ignored");
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "a Fortran status is MPI_Status as MPI_F_STATUS_SIZE ints");

FY_API int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    return status_copy(c_status, f_status, __func__);
}
FY_ALIAS(MPI_Status_c2f)

FY_API int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    return status_copy(f_status, c_status, __func__);
}
FY_ALIAS(MPI_Status_f2c)
