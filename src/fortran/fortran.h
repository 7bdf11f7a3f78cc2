/* SPDX-License-Identifier: MIT */
/* Helpers shared by the generated Fortran wrappers (fortran_gen.c) and the
 * hand-written ones (fortran_special.c): special addresses, statuses,
 * ierror and CHARACTER arguments. */
#ifndef FY_FORTRAN_H
#define FY_FORTRAN_H

#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>

#include "fortran_have.h"

/* Every entry point is exported under several linker names; the others are
 * aliases of the gfortran one. */
#define FY_F_ALIAS(target, name)                                               \
    extern __typeof__(target) name                                             \
        __attribute__((alias(#target), visibility("default")));

/* MPICH's common blocks (same names and sizes), through which Fortran hands
 * over MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, ... as addresses.
 * A program's own common block of the same name (from MPICH's or Ferry's
 * mpif.h) resolves to these definitions, so the addresses agree. */
struct fy_f_priv1 {
    MPI_Fint bottom;
    MPI_Fint in_place;
    MPI_Fint status_ignore[MPI_F_STATUS_SIZE];
};
struct fy_f_priv2 {
    MPI_Fint statuses_ignore[MPI_F_STATUS_SIZE];
    MPI_Fint errcodes_ignore[1];
};
struct fy_f_privc {
    char argvs_null;
    char argv_null;
};
extern struct fy_f_priv1 mpipriv1_;
extern struct fy_f_priv2 mpipriv2_;
extern struct fy_f_privc mpiprivc_;
extern MPI_Fint mpifcmb5_; /* MPI_UNWEIGHTED */
extern MPI_Fint mpifcmb9_; /* MPI_WEIGHTS_EMPTY */

/* The same special values as mpi_f08 module variables (defined by the
 * module object when mpi_f08 is built, weak here so C-only builds link). */
extern MPI_Fint ferry_f08_bottom __attribute__((weak));
extern MPI_Fint ferry_f08_in_place __attribute__((weak));
extern MPI_Fint ferry_f08_status_ignore[MPI_F_STATUS_SIZE]
    __attribute__((weak));
extern MPI_Fint ferry_f08_statuses_ignore[MPI_F_STATUS_SIZE]
    __attribute__((weak));
extern MPI_Fint ferry_f08_errcodes_ignore[1] __attribute__((weak));

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE become the C values. */
static inline void *fy_f_buf(void *p)
{
    if (p == &mpipriv1_.bottom || p == &ferry_f08_bottom)
        return MPI_BOTTOM;
    if (p == &mpipriv1_.in_place || p == &ferry_f08_in_place)
        return MPI_IN_PLACE;
    return p;
}

/* A graph weights array: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (common
 * blocks in Fortran) become the C addresses. */
static inline int *fy_f_weights(int *p)
{
    if (p == &mpifcmb5_)
        return MPI_UNWEIGHTED;
    if (p == &mpifcmb9_)
        return MPI_WEIGHTS_EMPTY;
    return p;
}

/* INTEGER STATUS(MPI_STATUS_SIZE) has MPI_Status's layout (5 ints). */
static inline MPI_Status *fy_f_status(MPI_Fint *p)
{
    if (p == mpipriv1_.status_ignore || p == ferry_f08_status_ignore)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)p;
}

static inline MPI_Status *fy_f_statuses(MPI_Fint *p)
{
    if (p == mpipriv2_.statuses_ignore || p == ferry_f08_statuses_ignore)
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)p;
}

static inline int *fy_f_errcodes(int *p)
{
    if (p == mpipriv2_.errcodes_ignore || p == ferry_f08_errcodes_ignore)
        return MPI_ERRCODES_IGNORE;
    return p;
}

/* ierror is optional in mpi_f08 (absent: a null pointer). */
static inline void fy_f_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = rc;
}

/* A CHARACTER input argument as a C string without trailing blanks
 * (malloc'd; NULL when out of memory). */
char *fy_f_str_in(const char *s, size_t len);

/* A C buffer for a CHARACTER output argument of 'len' characters, big
 * enough for whatever MPI writes (malloc'd; NULL when out of memory). */
char *fy_f_str_tmp(size_t len);

/* Copy the C string 'c' into the blank-padded Fortran 'dst' (when rc is
 * MPI_SUCCESS) and free 'c'. */
void fy_f_str_out(char *dst, size_t len, char *c, int rc);

#endif /* FY_FORTRAN_H */
