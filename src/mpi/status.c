/* SPDX-License-Identifier: MIT */
/* Filling MPI_Status from the core's results (encoding in status.h). */
#include "mpi/status.h"

#include <string.h>

#include "mpi/mpi_impl.h"

void fy_status_set(MPI_Status *st, int source, int tag, int err,
                   MPI_Count bytes, bool cancelled)
{
    if (st == MPI_STATUS_IGNORE || st == NULL)
        return;
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = err;
    st->count_hi_and_cancelled = cancelled ? 1 : 0;
    fy_status_set_bytes(st, bytes);
}

/* ---- Fortran status arrays ----------------------------------------------
 * MPI_Status is MPI_F_STATUS_SIZE ints in Fortran's order, so conversion
 * copies the fields. The "ignore" objects are distinct addresses. */

static MPI_Fint s_f_status_ignore[MPI_F_STATUS_SIZE];
static MPI_Fint s_f_statuses_ignore[MPI_F_STATUS_SIZE];
FY_API MPI_Fint *MPI_F_STATUS_IGNORE = s_f_status_ignore;
FY_API MPI_Fint *MPI_F_STATUSES_IGNORE = s_f_statuses_ignore;

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "MPI_Status is MPI_F_STATUS_SIZE Fortran integers");

FY_API int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    FY_MT_ENTER();
    FY_CHECK(c_status != NULL && c_status != MPI_STATUS_IGNORE, NULL,
             MPI_ERR_ARG, __func__, "c_status is NULL or MPI_STATUS_IGNORE");
    FY_CHECK(f_status != NULL && f_status != MPI_F_STATUS_IGNORE &&
                 f_status != MPI_F_STATUSES_IGNORE,
             NULL, MPI_ERR_ARG, __func__,
             "f_status is NULL or MPI_F_STATUS_IGNORE");
    memcpy(f_status, c_status, sizeof(*c_status));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_c2f)

FY_API int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    FY_MT_ENTER();
    FY_CHECK(f_status != NULL && f_status != MPI_F_STATUS_IGNORE &&
                 f_status != MPI_F_STATUSES_IGNORE,
             NULL, MPI_ERR_ARG, __func__,
             "f_status is NULL or MPI_F_STATUS_IGNORE");
    FY_CHECK(c_status != NULL && c_status != MPI_STATUS_IGNORE, NULL,
             MPI_ERR_ARG, __func__, "c_status is NULL or MPI_STATUS_IGNORE");
    memcpy(c_status, f_status, sizeof(*c_status));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_f2c)
