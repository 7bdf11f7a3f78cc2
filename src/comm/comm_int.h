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

#endif /* FY_COMM_INT_H */
