/* SPDX-License-Identifier: MIT */
/* Groups, communicators and error handlers. A communicator owns two
 * context ids: ctx for point-to-point and ctx+1 for collectives, so user
 * traffic can never match collective traffic. */
#ifndef FY_COMM_H
#define FY_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/mt.h"

struct fy_group {
    MPI_Group handle;
    int refcount;
    bool builtin;
    int size;
    int rank;   /* this process's rank in the group, or MPI_UNDEFINED */
    int *world; /* group rank -> world rank */
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
    uint32_t ctx;           /* point-to-point context; ctx+1 collectives */
    int rank, size;         /* in the (local) group */
    struct fy_group *group; /* the local group */
    /* Whom point-to-point ranks name: 'group' for an intracommunicator,
     * the remote group for an intercommunicator. The p2p paths read it
     * without testing which kind the communicator is. */
    struct fy_group *p2p_group;
    struct fy_inter *inter; /* NULL for an intracommunicator */
    MPI_Errhandler errhandler;
    uint32_t coll_seq; /* collectives issued, for tags */
    /* The lean collectives over shared memory (coll/shm.c), blocking
     * (flag) and nonblocking (nbflag, coll/shm_nb.c): whether the members
     * agreed on a base, the base, how many have run since, and what every
     * other member is known to have finished (a bound). */
    struct fy_comm_lean {
        bool on;
        uint64_t base, k, known;
    } flag, nbflag;
    char name[MPI_MAX_OBJECT_NAME];
    struct fy_attr *attrs; /* cached attributes, newest first */
    struct fy_topo *topo;  /* Cartesian topology, or NULL */
};

#define FY_CTX_WORLD 0u
#define FY_CTX_SELF 2u
/* Reserved for the context-id agreement of MPI_Intercomm_create, which
 * runs over both groups before they share any communicator. */
#define FY_CTX_BRIDGE 4u
#define FY_CTX_MAX 4096u /* ctx values are < this and even */

/* Build MPI_COMM_WORLD / MPI_COMM_SELF; called from MPI_Init. */
int fy_comm_init(int world_rank, int world_size);
/* MPI_Finalize's first step: delete MPI_COMM_SELF's attributes, then
 * MPI_COMM_WORLD's (their callbacks may still communicate). Both
 * communicators stay usable until fy_comm_finalize, which runs this step
 * itself if the caller has not. */
void fy_comm_finalize_attrs(void);
void fy_comm_finalize(void);

struct fy_comm *fy_comm_get(MPI_Comm h);    /* NULL if invalid/freed */
struct fy_group *fy_group_get(MPI_Group h); /* NULL if invalid/freed */
struct fy_errhandler *fy_errhandler_get(MPI_Errhandler h);

/* An intercommunicator's own parts (src/comm/inter.c). Its context id is
 * free at every member of both groups, so its messages can never mix with
 * another communicator's; the hidden local intracommunicator has its own
 * id and runs the local halves of the collectives. */
struct fy_inter {
    struct fy_group *remote;
    /* Both groups, the one whose rank 0 has the lower world rank first:
     * the same list at every member, over which context ids of derived
     * communicators are agreed (on the intercommunicator's context). */
    struct fy_group *all;
    bool first;            /* the local group comes first in 'all' */
    struct fy_comm *local; /* the local group's intracommunicator */
    uint32_t all_seq;      /* agreements run over 'all' so far */
};

/* World rank of rank r as point-to-point names it: of the group for an
 * intracommunicator, of the remote group for an intercommunicator. */
static inline int fy_comm_world_rank(const struct fy_comm *c, int r)
{
    return c->p2p_group->world[r];
}

static inline bool fy_comm_is_inter(const struct fy_comm *c)
{
    return c->inter != NULL;
}

/* A communicator whose context id is still being agreed on. */
#define FY_CTX_NONE FY_CTX_MAX

/* Collective over 'parent': agree on a fresh context id (all members must
 * call in the same order; blocks until agreed, progressing everything
 * else meanwhile). The id comes back marked used here: the caller makes a
 * communicator on it (fy_comm_create) or gives it back by releasing one
 * made on it. Returns 0, or -ENOSPC when ids are exhausted, -ENOMEM, or a
 * p2p error. */
int fy_comm_ctx_alloc(struct fy_comm *parent, uint32_t *ctx_out);

/* A context-id agreement in progress (src/comm/ctx.c). */
struct fy_ctx_agree;
/* Whether it finished: *err_out 0 or a negative errno, and the agreed id
 * in *ctx_out (may be NULL). Advanced by the progress engine, not here. */
bool fy_ctx_agree_test(struct fy_ctx_agree *ag, int *err_out,
                       uint32_t *ctx_out);
/* Release a finished agreement (one still running is waited for). */
void fy_ctx_agree_free(struct fy_ctx_agree *ag);
/* Make a communicator of 'group' (member ranks given as world ranks) with
 * context 'ctx'; takes a reference on group. */
int fy_comm_create(struct fy_group *group, uint32_t ctx, struct fy_comm **out);
void fy_comm_release(struct fy_comm *c);

int fy_group_create(int size, const int *world_ranks, struct fy_group **out);
void fy_group_release(struct fy_group *g);

/* ---- additions: groups ----------------------------------------------
 * The group operations below assume arguments were validated by the MPI
 * layer (ranks in range, no duplicates). Each returns 0 or -ENOMEM and
 * hands the caller one reference on *out; an empty result is the builtin
 * MPI_GROUP_EMPTY object. */

extern struct fy_group fy_group_empty;

static inline void fy_group_retain(struct fy_group *g)
{
    if (!g->builtin) /* never freed (fy_group_release ignores them) */
        fy_mt_ref_inc(&g->refcount);
}
int fy_group_incl(struct fy_group *g, int n, const int *ranks,
                  struct fy_group **out);
int fy_group_excl(struct fy_group *g, int n, const int *ranks,
                  struct fy_group **out);
int fy_group_union(struct fy_group *a, struct fy_group *b,
                   struct fy_group **out);
int fy_group_intersection(struct fy_group *a, struct fy_group *b,
                          struct fy_group **out);
int fy_group_difference(struct fy_group *a, struct fy_group *b,
                        struct fy_group **out);
/* ranks_b[i] = rank in b of a's rank ranks_a[i] (MPI_UNDEFINED if absent;
 * MPI_PROC_NULL maps to itself). Returns 0 or -ENOMEM. */
int fy_group_translate(struct fy_group *a, int n, const int *ranks_a,
                       struct fy_group *b, int *ranks_b);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int fy_group_compare(const struct fy_group *a, const struct fy_group *b);
/* Rank in g of world rank w, or MPI_UNDEFINED. */
int fy_group_rank_of_world(const struct fy_group *g, int w);

/* ---- additions: communicators ----------------------------------------
 * Every constructor is collective over 'parent' and returns 0 or a negative
 * errno (-ENOSPC: context ids exhausted, -ENOMEM, or an error from the
 * collective traffic). A process that ends up outside the new communicator
 * gets *out == NULL. The new communicator inherits the parent's error
 * handler. Lifetime: a communicator lives until its reference count drops
 * to zero; the handle is forgotten as soon as MPI_Comm_free is called, the
 * object (and its context id) only at the last release. Point-to-point
 * requests do not take references today, so a communicator freed with
 * operations pending must not be reused for new ones (MPI forbids it). */

/* The largest tag a user may pass (MPI_TAG_UB): the p2p envelope carries
 * an int32 tag, and collectives live in their own context, so every
 * non-negative int is available to users. */
#define FY_TAG_UB 0x7fffffff

static inline void fy_comm_retain(struct fy_comm *c)
{
    c->refcount++;
}
/* Also runs attribute copy callbacks: if one fails, the new communicator
 * is dropped and that callback's MPI error code is returned as a POSITIVE
 * number (negative values are errnos as usual). */
int fy_comm_dup(struct fy_comm *parent, struct fy_comm **out);
/* A duplicate for the library's own use (a persistent collective's
 * traffic): same group, topology and error handler, a context of its
 * own, no attributes. Collective over parent like fy_comm_dup. Released
 * with fy_comm_release. */
int fy_comm_dup_private(struct fy_comm *parent, struct fy_comm **out);
/* MPI_Comm_idup: the duplicate is made at once (attributes copied, as MPI
 * 4.0 asks, at the time of the call) with context FY_CTX_NONE, and *out is
 * returned with it; the context agreements run as nonblocking schedules
 * (agree_out[0], and for an intercommunicator agree_out[1], the id of its
 * local intracommunicator; else NULL). The communicator must not be used
 * until fy_comm_idup_test() says the agreements finished; if one failed,
 * the communicator has been freed (its handle is invalid) and the error is
 * returned then. Returns 0, or what the attribute copy or the agreement
 * start returned (nothing to test then). */
#define FY_IDUP_AGREES 2
int fy_comm_idup(struct fy_comm *parent, struct fy_comm **out,
                 struct fy_ctx_agree *agree_out[FY_IDUP_AGREES]);
bool fy_comm_idup_test(struct fy_comm *c,
                       struct fy_ctx_agree *const ag[FY_IDUP_AGREES],
                       int *err_out);
int fy_comm_split(struct fy_comm *parent, int color, int key,
                  struct fy_comm **out);
/* 'group' must be a subset of parent's group (checked by the caller). */
int fy_comm_create_from_group(struct fy_comm *parent, struct fy_group *group,
                              struct fy_comm **out);
/* MPI_Comm_create_group: collective over the members of 'group' only (a
 * subset of parent's group containing this process); 'tag' tells
 * concurrent calls apart. */
int fy_comm_create_group(struct fy_comm *parent, struct fy_group *group,
                         int tag, struct fy_comm **out);
/* MPI_Comm_free: run attribute delete callbacks, forget the handle, drop
 * the user's reference. Returns 0 or the (MPI) error code a delete
 * callback returned, as a positive number. */
int fy_comm_free(struct fy_comm *c);
/* MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR or MPI_UNEQUAL. */
int fy_comm_compare(const struct fy_comm *a, const struct fy_comm *b);
/* Replace c's error handler (takes a reference on the new one). */
void fy_comm_set_errhandler(struct fy_comm *c, struct fy_errhandler *eh);

/* ---- additions: intercommunicators (inter.c) ---------------------------
 * Same conventions as the constructors above. Errors particular to them:
 * -ERANGE the remote leader is not a rank of peer_comm (at either
 * leader: every member of both groups learns it), -EXDEV the two groups
 * overlap. */

/* MPI_Intercomm_create: collective over 'local' (an intracommunicator);
 * 'peer' and 'remote_leader' matter at the local leader only, where they
 * have been checked to be valid handles. */
int fy_intercomm_create(struct fy_comm *local, int local_leader,
                        struct fy_comm *peer, int remote_leader, int tag,
                        struct fy_comm **out);
/* MPI_Intercomm_merge: the group whose members said high == false comes
 * first; equal flags, the group whose rank 0 has the lower world rank. */
int fy_intercomm_merge(struct fy_comm *c, bool high, struct fy_comm **out);
/* Duplicate / split / create on an intercommunicator: the result is an
 * intercommunicator (NULL where the local or the remote part is empty). */
int fy_inter_dup(struct fy_comm *c, struct fy_comm **out);
/* MPI_Comm_idup's parts: the duplicate, made at once with both context
 * ids FY_CTX_NONE; then the two nonblocking agreements that give them
 * (ag_out[0] over both groups, for newcomm's id; ag_out[1] over the local
 * group, for its local intracommunicator's). newcomm NULL: join the
 * agreements, keep no id. The caller keeps c alive until both are freed.
 * Returns 0, or an error with nothing started. */
int fy_inter_dup_pending(struct fy_comm *c, struct fy_comm **out);
struct fy_ctx_agree;
int fy_inter_agree_start(struct fy_comm *c, struct fy_comm *newcomm,
                         struct fy_ctx_agree *ag_out[2]);
int fy_inter_split(struct fy_comm *c, int color, int key, struct fy_comm **out);
/* Release the intercommunicator parts (from fy_comm_release). */
void fy_inter_free(struct fy_inter *in);

/* ---- additions: hardware levels (hw.c, hwloc) -------------------------
 * For MPI_COMM_TYPE_HW_GUIDED / _HW_UNGUIDED. A colour names an object
 * of the hardware tree that contains this process's CPU binding (the
 * whole machine when unbound): node (the job's node number, 0..32767),
 * level and hwloc logical index, so processes agree on it across nodes.
 * Without hwloc at build time nothing is known (fy_hw_available false). */
struct fy_hw_level {
    int type;  /* hwloc object type */
    int color; /* >= 0, or MPI_UNDEFINED: the binding spans several */
};
#define FY_HW_MAX_LEVELS 24
bool fy_hw_available(void);
/* Colour for resource type 'name' (an hwloc type name as
 * hwloc_type_sscanf reads it, optionally prefixed "hwloc://"): 0 with
 * *color_out >= 0 or MPI_UNDEFINED (no such object here, or the binding
 * is not inside one), -ENOENT for a name that is no type, -ENOTSUP
 * without hwloc, -ENOMEM. */
int fy_hw_guided_color(const char *name, int node, int *color_out);
/* This process's levels, the whole machine first, down to PUs (NUMA nodes
 * below their parent level): how many were written (0 without hwloc). */
int fy_hw_levels(int node, struct fy_hw_level *out, int max);
/* hwloc's name of a level's type ("Package", "L3Cache", "Core", ...). */
const char *fy_hw_type_name(int type);
/* Drop the topology (from fy_comm_finalize). */
void fy_hw_finalize(void);

/* ---- additions: error handlers ---------------------------------------- */

/* Builtin handlers: MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN and
 * MPI_ERRORS_ABORT resolve to these. */
int fy_errhandler_create(MPI_Comm_errhandler_function *fn,
                         struct fy_errhandler **out);
static inline void fy_errhandler_retain(struct fy_errhandler *eh)
{
    if (!eh->builtin) /* never freed (fy_errhandler_release ignores them) */
        fy_mt_ref_inc(&eh->refcount);
}
void fy_errhandler_release(struct fy_errhandler *eh);

/* ---- additions: process topologies ------------------------------------ */

/* Which topology a communicator carries; the values are MPI_Topo_test's. */
enum fy_topo_kind {
    FY_TOPO_GRAPH = MPI_GRAPH,
    FY_TOPO_CART = MPI_CART,
    FY_TOPO_DIST_GRAPH = MPI_DIST_GRAPH,
};

struct fy_topo {
    enum fy_topo_kind kind;
    /* FY_TOPO_CART */
    int ndims;
    int *dims; /* processes along each dimension */
    bool *periods;
    /* FY_TOPO_GRAPH: MPI_Graph_create's arrays as given (every member
     * keeps the whole graph, as MPI_Graph_get must return it) */
    int nnodes;
    int *index; /* nnodes cumulative degrees */
    int *edges; /* index[nnodes - 1] neighbours */
    /* FY_TOPO_DIST_GRAPH: this member's own edges, in the order
     * MPI_Dist_graph_neighbors returns them */
    int indegree, outdegree;
    int *sources, *sourceweights;
    int *destinations, *destweights;
    bool weighted; /* false: created with MPI_UNWEIGHTED */
};

/* MPI_Cart_create: the first prod(dims) members of parent, in rank order
 * (no reordering), get a communicator with this topology; the others get
 * NULL. Collective over parent; 0 or a negative errno. */
int fy_cart_create(struct fy_comm *parent, int ndims, const int *dims,
                   const int *periods, struct fy_comm **out);
/* MPI_Cart_sub: collective over c (which has a topology). */
int fy_cart_sub(struct fy_comm *c, const int *remain_dims,
                struct fy_comm **out);
/* Row-major rank <-> coordinates (coordinates already wrapped/valid). */
void fy_cart_coords(const struct fy_topo *t, int rank, int *coords);
int fy_cart_rank(const struct fy_topo *t, const int *coords);
/* MPI_Dims_create: fill the zero entries of dims[0..ndims) so that the
 * product of all entries is nnodes, the filled ones non-increasing and as
 * close to each other as possible (smallest largest-minus-smallest; ties
 * to the smallest sum of squares, then lexicographically smallest). The
 * positive entries are kept. Returns 0, -EINVAL if nnodes is not positive,
 * an entry is negative, or nnodes is not a multiple of the product of the
 * positive entries (equal to it when none is zero), or -ENOMEM. */
int fy_dims_create(int nnodes, int ndims, int *dims);

/* MPI_Graph_create: the first nnodes members of parent, in rank order (no
 * reordering), get a communicator carrying the graph (index/edges already
 * checked); the others get NULL. Collective over parent; 0 or -errno. */
int fy_graph_create(struct fy_comm *parent, int nnodes, const int *index,
                    const int *edges, struct fy_comm **out);
/* MPI_Dist_graph_create_adjacent: every member of parent gets a
 * communicator (same ranks) carrying its own in and out edges. Weights may
 * be NULL (then all 1; 'weighted' says what the program asked for).
 * Collective over parent; 0 or -errno. */
int fy_dist_graph_create_adjacent(struct fy_comm *parent, int indegree,
                                  const int *sources, const int *sourceweights,
                                  int outdegree, const int *destinations,
                                  const int *destweights, bool weighted,
                                  struct fy_comm **out);
/* MPI_Dist_graph_create: each member gives any edges (n sources, degrees[i]
 * destinations of sources[i], weights in the same order or NULL); the edges
 * are exchanged (an all-to-all of counts, then of the edges) so that each
 * member learns its in and out edges: out edges in the order the members
 * gave them, member by member in rank order, and the same for in edges.
 * Collective over parent; 0 or -errno. */
int fy_dist_graph_create(struct fy_comm *parent, int n, const int *sources,
                         const int *degrees, const int *destinations,
                         const int *weights, bool weighted,
                         struct fy_comm **out);

/* The neighbours of this member of c (which carries a topology) in MPI's
 * order: Cartesian, dimension by dimension the -1 then the +1 neighbour
 * (MPI_PROC_NULL off a non-periodic edge) as sources and destinations;
 * graph, MPI_Graph_neighbors as both; dist graph, its sources and
 * destinations. The arrays are owned by the struct (fy_topo_nbrs_free). */
struct fy_topo_nbrs {
    int indegree, outdegree;
    int *sources, *destinations;
    bool cart; /* neighbours pair by direction, see src/coll/neighbor.c */
};
int fy_topo_nbrs_get(const struct fy_comm *c, struct fy_topo_nbrs *out);
void fy_topo_nbrs_free(struct fy_topo_nbrs *n);
/* Neighbour counts only (no allocation): the same numbers. */
void fy_topo_degrees(const struct fy_comm *c, int *indegree_out,
                     int *outdegree_out);

/* ---- additions: attributes --------------------------------------------
 * One engine for communicators, datatypes and windows: the object holds a
 * 'struct fy_attr *' list and passes its own handle as 'obj' (callbacks get
 * it). Copy and delete callbacks of the three kinds have the same shape
 * (handles are ints), so one pair of function types serves all three. */

enum fy_attr_kind { FY_ATTR_COMM, FY_ATTR_TYPE, FY_ATTR_WIN };

typedef int fy_attr_copy_fn(int obj, int keyval, void *extra_state,
                            void *val_in, void *val_out, int *flag);
typedef int fy_attr_delete_fn(int obj, int keyval, void *val,
                              void *extra_state);

struct fy_keyval {
    int handle;
    enum fy_attr_kind kind;
    bool freed;   /* the user freed it; attributes may still use it */
    int refcount; /* the user's handle + one per attribute using it */
    fy_attr_copy_fn *copy_fn;     /* NULL: not copied on dup */
    fy_attr_delete_fn *delete_fn; /* NULL: nothing to run */
    void *extra_state;
};

struct fy_attr {
    struct fy_keyval *kv;
    void *val;
    struct fy_attr *next;
};

/* A live keyval of that kind, or NULL if invalid, freed or of another
 * kind. A freed keyval keeps its handle (callbacks still receive it) until
 * the last attribute using it is deleted, so the handle never names
 * another keyval meanwhile. */
struct fy_keyval *fy_keyval_get(int handle, enum fy_attr_kind kind);
/* The same, freed ones included while attributes still use them: MPI lets
 * a program get and delete those attributes (and free the key again, a
 * no-op) with the freed key's value (MPI 4.0, 7.7.2). */
struct fy_keyval *fy_keyval_find(int handle, enum fy_attr_kind kind);
int fy_keyval_create(enum fy_attr_kind kind, fy_attr_copy_fn *copy_fn,
                     fy_attr_delete_fn *delete_fn, void *extra_state,
                     struct fy_keyval **out);
/* Drop the user's reference (MPI_*_free_keyval) unless already dropped;
 * attributes already set keep the key alive. */
void fy_keyval_free(struct fy_keyval *kv);
/* Predefined keyvals (MPI_TAG_UB, ...): a pointer to the static int that
 * holds the value, or NULL if 'keyval' is not predefined. */
int *fy_attr_predefined(int keyval);
/* Set (replacing, after running the old value's delete callback), get and
 * delete. Unlike the rest of Ferry these return 0 or a POSITIVE MPI error
 * code: the one a user callback returned, or MPI_ERR_NO_MEM. Callbacks may
 * set, get and delete attributes of the same object (no list pointer is
 * held across a callback). Not thread-safe: callers serialise. */
int fy_attr_set(struct fy_attr **list, int obj, struct fy_keyval *kv,
                void *val);
bool fy_attr_get(struct fy_attr *const *list, const struct fy_keyval *kv,
                 void **val_out);
int fy_attr_delete(struct fy_attr **list, int obj, struct fy_keyval *kv,
                   bool *found_out);
/* Run copy callbacks from one object's list onto another's (dup). */
int fy_attr_copy_all(struct fy_attr *const *from, int from_obj,
                     struct fy_attr **to, int to_obj);
/* Run delete callbacks and drop every attribute, newest first. */
int fy_attr_delete_all(struct fy_attr **list, int obj);

#endif /* FY_COMM_H */
