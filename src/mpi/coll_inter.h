/* SPDX-License-Identifier: MIT */
/* Collective entry points' intercommunicator branch (coll_inter.c): each
 * coll_x() in coll.c hands an intercommunicator over to one of these,
 * which check the arguments by MPI 4.0 6.2.2's rules (root MPI_ROOT,
 * MPI_PROC_NULL or a remote rank; no MPI_IN_PLACE) and run the schedule
 * of src/coll/inter.c: request NULL runs it to the end (blocking), another
 * request names it started (nonblocking), FY_PCOLL_CHECK_ONLY only checks
 * (the persistent _init calls; MPI_Start then runs pcoll.c's launch). */
#ifndef FY_MPI_COLL_INTER_H
#define FY_MPI_COLL_INTER_H

#include "coll/coll.h"
#include "mpi/mpi_impl.h"

int fy_mpi_inter_barrier(struct fy_comm *c, MPI_Request *request,
                         const char *fn);
int fy_mpi_inter_bcast(struct fy_comm *c, void *buf, MPI_Count count,
                       MPI_Datatype datatype, int root, MPI_Request *request,
                       const char *fn);
int fy_mpi_inter_reduce(struct fy_comm *c, const void *sbuf, void *rbuf,
                        MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                        int root, MPI_Request *request, const char *fn);
int fy_mpi_inter_allreduce(struct fy_comm *c, const void *sbuf, void *rbuf,
                           MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Request *request, const char *fn);
/* rcounts NULL: the _block form with rcount. */
int fy_mpi_inter_reduce_scatter(struct fy_comm *c, const void *sbuf, void *rbuf,
                                MPI_Count rcount, struct fy_coll_vec rcounts,
                                MPI_Datatype datatype, MPI_Op op,
                                MPI_Request *request, const char *fn);
/* rcounts NULL: uniform rcount; else rcounts/displs (v). */
int fy_mpi_inter_gather(struct fy_comm *c, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                        struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                        MPI_Datatype rtype, int root, MPI_Request *request,
                        const char *fn);
int fy_mpi_inter_scatter(struct fy_comm *c, const void *sbuf, MPI_Count scount,
                         struct fy_coll_vec scounts, struct fy_coll_vec displs,
                         MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                         MPI_Datatype rtype, int root, MPI_Request *request,
                         const char *fn);
int fy_mpi_inter_allgather(struct fy_comm *c, const void *sbuf,
                           MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           MPI_Count rcount, struct fy_coll_vec rcounts,
                           struct fy_coll_vec displs, MPI_Datatype rtype,
                           MPI_Request *request, const char *fn);
/* Uniform (counts NULL), v (counts, displs, one type) or w (types
 * arrays set: displs in bytes). */
int fy_mpi_inter_alltoall(struct fy_comm *c, const void *sbuf, MPI_Count scount,
                          struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls, MPI_Datatype stype,
                          const MPI_Datatype *stypes, void *rbuf,
                          MPI_Count rcount, struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls, MPI_Datatype rtype,
                          const MPI_Datatype *rtypes, MPI_Request *request,
                          const char *fn);

#endif /* FY_MPI_COLL_INTER_H */
