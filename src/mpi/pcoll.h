/* SPDX-License-Identifier: MIT */
/* Persistent collectives (MPI 4.0 6.13) as the entry points of coll.c and
 * neighbor.c see them: a check-only mode of their shared checking code,
 * and the description of a call that becomes a persistent request. */
#ifndef FY_MPI_PCOLL_H
#define FY_MPI_PCOLL_H

#include "coll/coll.h"
#include "mpi/request.h"

/* Passed as the 'request' of a coll_x()/nbr_x() checking function: check
 * every argument exactly as the blocking and nonblocking calls do, then
 * return MPI_SUCCESS without running anything (the _init calls). */
extern MPI_Request fy_pcoll_check_only;
#define FY_PCOLL_CHECK_ONLY (&fy_pcoll_check_only)

enum fy_pcoll_kind {
    FY_PCOLL_BARRIER,
    FY_PCOLL_BCAST,
    FY_PCOLL_GATHER,
    FY_PCOLL_GATHERV,
    FY_PCOLL_SCATTER,
    FY_PCOLL_SCATTERV,
    FY_PCOLL_ALLGATHER,
    FY_PCOLL_ALLGATHERV,
    FY_PCOLL_ALLTOALL,
    FY_PCOLL_ALLTOALLV,
    FY_PCOLL_ALLTOALLW,
    FY_PCOLL_REDUCE, /* REDUCE..EXSCAN: the reductions, in one range */
    FY_PCOLL_ALLREDUCE,
    FY_PCOLL_REDUCE_SCATTER,
    FY_PCOLL_REDUCE_SCATTER_BLOCK,
    FY_PCOLL_SCAN,
    FY_PCOLL_EXSCAN,
    FY_PCOLL_NBR_ALLGATHER,
    FY_PCOLL_NBR_ALLGATHERV,
    FY_PCOLL_NBR_ALLTOALL,
    FY_PCOLL_NBR_ALLTOALLV,
    FY_PCOLL_NBR_ALLTOALLW,
};

/* An _init call's arguments as the program passed them, already checked.
 * Bcast and the reductions keep their buffer (recvbuf), count and
 * datatype in rbuf, rcount and rtype. Arrays that are not significant on
 * this process are NULL; the others have ns (send side) or nr (receive
 * side) entries and are copied (as 64-bit arrays, whatever their width).
 * Datatype handles that are not significant (MPI_IN_PLACE, a non-root's receive
 * side) may be anything. */
struct fy_pcoll_args {
    enum fy_pcoll_kind kind;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    int root;
    int ns, nr;
    struct fy_coll_vec scounts, sdispls, rcounts, rdispls;
    const MPI_Aint *sbdispls, *rbdispls; /* neighbor_alltoallw */
    const MPI_Datatype *stypes, *rtypes; /* the two alltoallw */
};

/* Make *request an inactive persistent request running 'a' on c at each
 * MPI_Start. Takes references on c and every datatype and op involved.
 * Returns MPI_SUCCESS or an error class reported as fn. */
int fy_pcoll_create(struct fy_comm *c, const struct fy_pcoll_args *a,
                    MPI_Request *request, const char *fn);

#endif /* FY_MPI_PCOLL_H */
