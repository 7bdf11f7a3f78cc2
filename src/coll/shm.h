/* SPDX-License-Identifier: MIT */
/* Node-level collectives over shared memory (coll/shm.c) and the layout of
 * each rank's collective area in the segment. */
#ifndef FY_COLL_SHM_H
#define FY_COLL_SHM_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "util/util.h"

/* One publication of a rank to the members of a collective. */
#define FY_COLL_DATA 32768u
#define FY_COLL_CELLS 2u
struct fy_coll_cell {
    /* Written by the owner only; published by 'tag' (release). */
    alignas(FY_CACHELINE) _Atomic uint64_t tag; /* ctx+1 | seq | step; 0 none */
    uint64_t addr; /* owner's buffer, for single-copy readers */
    uint64_t len;  /* bytes readable there (a reader reads no more) */
    /* Set by the owner before it publishes; each reader decrements once. */
    alignas(FY_CACHELINE) _Atomic uint32_t readers;
    alignas(FY_CACHELINE) unsigned char data[FY_COLL_DATA]; /* owner only */
};
static_assert(offsetof(struct fy_coll_cell, tag) == 0 &&
                  offsetof(struct fy_coll_cell, readers) == FY_CACHELINE &&
                  offsetof(struct fy_coll_cell, data) == 2 * FY_CACHELINE,
              "owner's line, readers' line, data");
static_assert(sizeof(struct fy_coll_cell) == 2 * FY_CACHELINE + FY_COLL_DATA,
              "cells are whole lines");

/* Each local rank's collective area: the "coll" region, FY_COLL_CELLS
 * cells per rank. fy_coll_shm_declare is a fy_shm_declare_fn: MPI_Init
 * hands it to fy_p2p_init, which lays the segment out. Returns 0 or the
 * allocator's negative errno. */
#define FY_COLL_REGION "coll"
struct fy_shm_layout;
int fy_coll_shm_declare(struct fy_shm_layout *lay);

struct fy_coll_shm {
    bool on; /* FERRY_COLL allows it and the node has a segment */
    struct fy_coll_cell *cells; /* the "coll" region: [local][FY_COLL_CELLS] */
    bool cma;                   /* process_vm_readv works job-wide */
    uint64_t cma_min; /* broadcasts from this size read the root's buffer */
    uint32_t next;    /* our next cell (round robin) */
};
extern struct fy_coll_shm fy_coll_shm;

/* Once the segment and the mechanisms are up (MPI_Init). Returns 0,
 * -EINVAL for a malformed FERRY_COLL or -EPROTO when the segment has no
 * "coll" region (logged). */
int fy_coll_shm_init(void);
void fy_coll_shm_finalize(void);

/* Before c is freed: wait until our publications on c are read, so that
 * a later communicator with the same context never sees them. */
void fy_coll_shm_comm_free(struct fy_comm *c);

/* Returned by the algorithms below when they do not apply (a member on
 * another node, a datatype they do not handle, FERRY_COLL=p2p): the
 * caller runs the point-to-point algorithm. Otherwise 0 or a negative
 * errno, as the fy_coll_* functions. Blocking collectives only. */
#define FY_COLL_SHM_NO 1
int fy_coll_shm_barrier(struct fy_comm *c);
int fy_coll_shm_bcast(void *buf, MPI_Count count, struct fy_dtype *dt, int root,
                      struct fy_comm *c);
int fy_coll_shm_reduce(const void *sbuf, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op, int root,
                       struct fy_comm *c);
int fy_coll_shm_allreduce(const void *sbuf, void *rbuf, MPI_Count count,
                          struct fy_dtype *dt, struct fy_op *op,
                          struct fy_comm *c);
/* Blocks of at most one cell (all-to-all, scatter: all blocks together);
 * larger ones take the point-to-point path. */
int fy_coll_shm_allgather(const void *sbuf, MPI_Count scount,
                          struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                          struct fy_dtype *rdt, struct fy_comm *c);
int fy_coll_shm_alltoall(const void *sbuf, MPI_Count scount,
                         struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                         struct fy_dtype *rdt, struct fy_comm *c);
int fy_coll_shm_gather(const void *sbuf, MPI_Count scount, struct fy_dtype *sdt,
                       void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                       int root, struct fy_comm *c);
int fy_coll_shm_scatter(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf, MPI_Count rcount,
                        struct fy_dtype *rdt, int root, struct fy_comm *c);

/* The v and w forms: every block goes through the publisher's cell when
 * it fits the room left there, else it is read from the publisher's
 * buffer with one process_vm_readv. Gatherv, scatterv, alltoallv and
 * alltoallw run here only with single copy (no member knows every block's
 * size), allgatherv also without when all blocks fit a cell. */
int fy_coll_shm_gatherv(const void *sbuf, MPI_Count scount,
                        struct fy_dtype *sdt, void *rbuf,
                        struct fy_coll_vec rcounts, struct fy_coll_vec displs,
                        struct fy_dtype *rdt, int root, struct fy_comm *c);
int fy_coll_shm_scatterv(const void *sbuf, struct fy_coll_vec scounts,
                         struct fy_coll_vec displs, struct fy_dtype *sdt,
                         void *rbuf, MPI_Count rcount, struct fy_dtype *rdt,
                         int root, struct fy_comm *c);
int fy_coll_shm_allgatherv(const void *sbuf, MPI_Count scount,
                           struct fy_dtype *sdt, void *rbuf,
                           struct fy_coll_vec rcounts,
                           struct fy_coll_vec displs, struct fy_dtype *rdt,
                           struct fy_comm *c);
int fy_coll_shm_alltoallv(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls, struct fy_dtype *sdt,
                          void *rbuf, struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls, struct fy_dtype *rdt,
                          struct fy_comm *c);
int fy_coll_shm_alltoallw(const void *sbuf, struct fy_coll_vec scounts,
                          struct fy_coll_vec sdispls,
                          struct fy_dtype *const *sdts, void *rbuf,
                          struct fy_coll_vec rcounts,
                          struct fy_coll_vec rdispls,
                          struct fy_dtype *const *rdts, struct fy_comm *c);
/* Reduce-scatter and scans on contiguous types: rounds of one cell per
 * contribution, combined in rank order (non-commutative ops keep MPI's
 * order; every run gives the same bits). */
int fy_coll_shm_reduce_scatter_block(const void *sbuf, void *rbuf,
                                     MPI_Count count, struct fy_dtype *dt,
                                     struct fy_op *op, struct fy_comm *c);
int fy_coll_shm_reduce_scatter(const void *sbuf, void *rbuf,
                               struct fy_coll_vec rcounts, struct fy_dtype *dt,
                               struct fy_op *op, struct fy_comm *c);
int fy_coll_shm_scan(const void *sbuf, void *rbuf, MPI_Count count,
                     struct fy_dtype *dt, struct fy_op *op, struct fy_comm *c);
int fy_coll_shm_exscan(const void *sbuf, void *rbuf, MPI_Count count,
                       struct fy_dtype *dt, struct fy_op *op,
                       struct fy_comm *c);

#endif /* FY_COLL_SHM_H */
