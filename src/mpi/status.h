/* SPDX-License-Identifier: MIT */
/* MPI_Status byte counts as MPICH encodes them: count_lo holds the low 32
 * bits of the byte count, count_hi_and_cancelled the bits above, shifted
 * left by one, with the cancelled flag in bit 0. Binaries built against
 * MPICH read and write these fields through Ferry's calls, so the encoding
 * must match bit for bit. (fy_status_set itself is declared in
 * mpi_impl.h.) */
#ifndef FY_MPI_STATUS_H
#define FY_MPI_STATUS_H

#include <mpi.h>
#include <stdbool.h>

/* Bytes recorded in a status. */
static inline MPI_Count fy_status_bytes(const MPI_Status *st)
{
    return (MPI_Count)(unsigned)st->count_lo |
           ((MPI_Count)((unsigned)st->count_hi_and_cancelled >> 1) << 32);
}

/* Record 'bytes' in a status, keeping its cancelled flag. */
static inline void fy_status_set_bytes(MPI_Status *st, MPI_Count bytes)
{
    unsigned long long b = (unsigned long long)bytes;
    st->count_lo = (int)(unsigned)(b & 0xffffffffu);
    st->count_hi_and_cancelled =
        (int)(((unsigned)(b >> 32) << 1) |
              ((unsigned)st->count_hi_and_cancelled & 1u));
}

static inline bool fy_status_cancelled(const MPI_Status *st)
{
    return ((unsigned)st->count_hi_and_cancelled & 1u) != 0;
}

static inline void fy_status_set_cancelled_flag(MPI_Status *st, bool on)
{
    unsigned hi = (unsigned)st->count_hi_and_cancelled & ~1u;
    st->count_hi_and_cancelled = (int)(hi | (on ? 1u : 0u));
}

#endif /* FY_MPI_STATUS_H */
