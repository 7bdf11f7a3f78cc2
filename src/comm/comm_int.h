/* SPDX-License-Identifier: MIT */
/* State shared by the files of src/comm only. */
#ifndef FY_COMM_INT_H
#define FY_COMM_INT_H

#include "comm/comm.h"
#include "util/util.h"

/* This process's world rank and the world size, set by fy_comm_init. */
extern int fy_comm_wrank;
extern int fy_comm_wsize;

/* Topology helpers for comm.c (topo.c). */
struct fy_topo *fy_topo_dup(const struct fy_topo *t); /* NULL: no memory */
void fy_topo_free(struct fy_topo *t);
/* A copy of n ints (never a zero-size allocation); NULL: no memory. */
int *fy_topo_ints_dup(const int *a, int n);

/* Context ids (ctx.c). */

/* Set every id free / forget pending agreements (fy_comm_init), and free
 * finished orphans (fy_comm_finalize). */
void fy_ctx_init(void);
void fy_ctx_finalize(void);
/* Mark ctx used (free_it false) or free here; FY_CTX_NONE is ignored. */
void fy_ctx_mark(uint32_t ctx, bool free_it);
/* Start agreeing on a new context id among the members of 'over' (a
 * collective over it: every member calls in the same order; 'over' may
 * be a stand-in such as MPI_Comm_create_group's). keep: take a reference
 * on 'over' until the agreement is freed (else the caller keeps it alive
 * and waits). newcomm (may be NULL, referenced meanwhile) gets the id as
 * soon as it is agreed. The id is marked used when agreed. Returns 0 with
 * *out (to test with fy_ctx_agree_test and free with fy_ctx_agree_free),
 * -ENOSPC, -ENOMEM or a p2p error; nothing started on error. */
int fy_ctx_agree_start(struct fy_comm *over, bool keep, struct fy_comm *newcomm,
                       struct fy_ctx_agree **out);
/* Nobody wants the id any more: the agreement runs to its end (the other
 * members need it), then gives the id back and frees itself. */
void fy_ctx_agree_orphan(struct fy_ctx_agree *ag);

#endif /* FY_COMM_INT_H */
