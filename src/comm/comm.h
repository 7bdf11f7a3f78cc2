/* SPDX-License-Identifier: MIT */
/* Groups, communicators and error handlers. A communicator owns two
 * context ids: ctx for point-to-point and ctx+1 for collectives, so user
 * traffic can never match collective traffic. */
#ifndef FY_COMM_H
#define FY_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

struct fy_group {
    MPI_Group handle;
    int refcount;
    bool builtin;
    int size;
    int rank;     /* this process's rank in the group, or MPI_UNDEFINED */
    int *world;   /* group rank -> world rank */
};

struct fy_errhandler {
    MPI_Errhandler handle;
    int refcount;
    bool builtin;
    MPI_Comm_errhandler_function *fn; /* NULL for the predefined ones */
};

struct fy_comm {
    MPI_Comm handle;
    int refcount;
    bool builtin;
    uint32_t ctx;          /* point-to-point context; ctx+1 collectives */
    int rank, size;
    struct fy_group *group;
    MPI_Errhandler errhandler;
    uint32_t coll_seq;     /* collectives issued, for tags */
    char name[MPI_MAX_OBJECT_NAME];
};

#define FY_CTX_WORLD 0u
#define FY_CTX_SELF 2u
#define FY_CTX_MAX 4096u /* ctx values are < this and even */

/* Build MPI_COMM_WORLD / MPI_COMM_SELF; called from MPI_Init. */
int fy_comm_init(int world_rank, int world_size);
void fy_comm_finalize(void);

struct fy_comm *fy_comm_get(MPI_Comm h);     /* NULL if invalid/freed */
struct fy_group *fy_group_get(MPI_Group h);  /* NULL if invalid/freed */
struct fy_errhandler *fy_errhandler_get(MPI_Errhandler h);

static inline int fy_comm_world_rank(const struct fy_comm *c, int r)
{
    return c->group->world[r];
}

/* Collective over 'parent': agree on a fresh context id (all members must
 * call in the same order). Returns 0, or -ENOSPC when ids are exhausted. */
int fy_comm_ctx_alloc(struct fy_comm *parent, uint32_t *ctx_out);
/* Make a communicator of 'group' (member ranks given as world ranks) with
 * context 'ctx'; takes a reference on group. */
int fy_comm_create(struct fy_group *group, uint32_t ctx, struct fy_comm **out);
void fy_comm_release(struct fy_comm *c);

int fy_group_create(int size, const int *world_ranks, struct fy_group **out);
void fy_group_release(struct fy_group *g);

#endif /* FY_COMM_H */
