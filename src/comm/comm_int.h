/* SPDX-License-Identifier: MIT */
/* State shared by the files of src/comm only. */
#ifndef FY_COMM_INT_H
#define FY_COMM_INT_H

#include "comm/comm.h"
#include "util/util.h"

/* This process's world rank and the world size, set by fy_comm_init. */
extern int fy_comm_wrank;
extern int fy_comm_wsize;

#endif /* FY_COMM_INT_H */
