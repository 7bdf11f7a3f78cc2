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
    FY_MT_NONE();
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
    FY_MT_NONE();
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

/* ---- mpi_f08 statuses ---------------------------------------------------
 * MPI_F08_status has MPI_Status's five integers in the same order, so each
 * conversion is a copy of five integers; the ignore objects are distinct
 * addresses, refused like the others. */

_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status),
               "MPI_F08_status and MPI_Status have the same five integers");

static MPI_F08_status s_f08_status_ignore;
static MPI_F08_status s_f08_statuses_ignore[1];
FY_API MPI_F08_status *MPI_F08_STATUS_IGNORE = &s_f08_status_ignore;
FY_API MPI_F08_status *MPI_F08_STATUSES_IGNORE = s_f08_statuses_ignore;

static bool f08_ok(const MPI_F08_status *s)
{
    return s != NULL && s != MPI_F08_STATUS_IGNORE &&
           s != MPI_F08_STATUSES_IGNORE;
}

static bool f_ok(const MPI_Fint *s)
{
    return s != NULL && s != MPI_F_STATUS_IGNORE && s != MPI_F_STATUSES_IGNORE;
}

static bool c_ok(const MPI_Status *s)
{
    return s != NULL && s != MPI_STATUS_IGNORE;
}

FY_API int PMPI_Status_c2f08(const MPI_Status *c_status,
                             MPI_F08_status *f08_status)
{
    FY_MT_NONE();
    FY_CHECK(c_ok(c_status), NULL, MPI_ERR_ARG, __func__,
             "c_status is NULL or MPI_STATUS_IGNORE");
    FY_CHECK(f08_ok(f08_status), NULL, MPI_ERR_ARG, __func__,
             "f08_status is NULL or MPI_F08_STATUS(ES)_IGNORE");
    memcpy(f08_status, c_status, sizeof(*f08_status));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_c2f08)

FY_API int PMPI_Status_f082c(const MPI_F08_status *f08_status,
                             MPI_Status *c_status)
{
    FY_MT_NONE();
    FY_CHECK(f08_ok(f08_status), NULL, MPI_ERR_ARG, __func__,
             "f08_status is NULL or MPI_F08_STATUS(ES)_IGNORE");
    FY_CHECK(c_ok(c_status), NULL, MPI_ERR_ARG, __func__,
             "c_status is NULL or MPI_STATUS_IGNORE");
    memcpy(c_status, f08_status, sizeof(*c_status));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_f082c)

FY_API int PMPI_Status_f082f(const MPI_F08_status *f08_status,
                             MPI_Fint *f_status)
{
    FY_MT_NONE();
    FY_CHECK(f08_ok(f08_status), NULL, MPI_ERR_ARG, __func__,
             "f08_status is NULL or MPI_F08_STATUS(ES)_IGNORE");
    FY_CHECK(f_ok(f_status), NULL, MPI_ERR_ARG, __func__,
             "f_status is NULL or MPI_F_STATUS(ES)_IGNORE");
    memcpy(f_status, f08_status, sizeof(*f08_status));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_f082f)

FY_API int PMPI_Status_f2f08(const MPI_Fint *f_status,
                             MPI_F08_status *f08_status)
{
    FY_MT_NONE();
    FY_CHECK(f_ok(f_status), NULL, MPI_ERR_ARG, __func__,
             "f_status is NULL or MPI_F_STATUS(ES)_IGNORE");
    FY_CHECK(f08_ok(f08_status), NULL, MPI_ERR_ARG, __func__,
             "f08_status is NULL or MPI_F08_STATUS(ES)_IGNORE");
    memcpy(f08_status, f_status, sizeof(*f08_status));
    return MPI_SUCCESS;
}
FY_ALIAS(MPI_Status_f2f08)
