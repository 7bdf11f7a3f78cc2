/* SPDX-License-Identifier: MIT */
/* Filling MPI_Status from the core's results (encoding in status.h). */
#include "mpi/status.h"
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
