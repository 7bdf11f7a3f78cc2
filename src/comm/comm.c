/* SPDX-License-Identifier: MIT */
/* Communicators: the builtin MPI_COMM_WORLD and MPI_COMM_SELF, user
 * communicators with direct handles, context-id agreement, and the
 * constructors (dup, split, create from a group). */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "util/handle.h"

int fy_comm_wrank = -1;
int fy_comm_wsize = 0;

static struct fy_comm s_world, s_self;
static bool s_up; /* between fy_comm_init and fy_comm_finalize */
static struct fy_handle_table s_comms = FY_HANDLE_TABLE_INIT(FY_HT_COMM);

static void fy_comm_fill(struct fy_comm *c, struct fy_group *g, uint32_t ctx)
{
    c->refcount = 1;
    c->ctx = ctx;
    c->group = g;
    c->p2p_group = g;
    c->inter = NULL;
    c->rank = g->rank;
    c->size = g->size;
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    c->coll_seq = 0;
    c->attrs = NULL;
    c->topo = NULL;
    fy_ctx_mark(ctx, false);
}

int fy_comm_create(struct fy_group *group, uint32_t ctx, struct fy_comm **out)
{
    struct fy_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (fy_handle_alloc(&s_comms, c, &c->handle) != 0) {
        free(c);
        return -ENOMEM;
    }
    fy_group_retain(group);
    fy_comm_fill(c, group, ctx);
    *out = c;
    return 0;
}

void fy_comm_release(struct fy_comm *c)
{
    if (!c || --c->refcount > 0)
        return;
    /* Only user communicators reach zero: builtins hold one reference
     * from fy_comm_init until fy_comm_finalize. */
    fy_ctx_mark(c->ctx, true);
    fy_topo_free(c->topo);
    c->topo = NULL;
    fy_inter_free(c->inter);
    c->inter = NULL;
    fy_group_release(c->group);
    fy_errhandler_release(fy_errhandler_get(c->errhandler));
    if (!c->builtin) {
        fy_handle_release(&s_comms, c->handle);
        free(c);
    }
}

struct fy_comm *fy_comm_get(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD)
        return s_up ? &s_world : NULL;
    if (h == MPI_COMM_SELF)
        return s_up ? &s_self : NULL;
    return fy_handle_get(&s_comms, h);
}

void fy_comm_set_errhandler(struct fy_comm *c, struct fy_errhandler *eh)
{
    fy_errhandler_retain(eh);
    fy_errhandler_release(fy_errhandler_get(c->errhandler));
    c->errhandler = eh->handle;
}

static int fy_comm_builtin_init(struct fy_comm *c, MPI_Comm h, int n,
                                const int *world, uint32_t ctx,
                                const char *name)
{
    struct fy_group *g;
    int rc = fy_group_create(n, world, &g);
    if (rc != 0)
        return rc;
    memset(c, 0, sizeof(*c));
    fy_comm_fill(c, g, ctx);
    c->handle = h;
    c->builtin = true;
    strncpy(c->name, name, sizeof(c->name) - 1);
    return 0;
}

int fy_comm_init(int world_rank, int world_size)
{
    fy_comm_wrank = world_rank;
    fy_comm_wsize = world_size;
    fy_ctx_init();
    fy_ctx_mark(FY_CTX_BRIDGE, false);

    int *all = malloc((size_t)world_size * sizeof(int));
    if (!all)
        return -ENOMEM;
    for (int i = 0; i < world_size; i++)
        all[i] = i;
    int rc = fy_comm_builtin_init(&s_world, MPI_COMM_WORLD, world_size, all,
                                  FY_CTX_WORLD, "MPI_COMM_WORLD");
    free(all);
    if (rc != 0)
        return rc;
    rc = fy_comm_builtin_init(&s_self, MPI_COMM_SELF, 1, &world_rank,
                              FY_CTX_SELF, "MPI_COMM_SELF");
    if (rc != 0) {
        fy_group_release(s_world.group);
        return rc;
    }
    s_up = true;
    return 0;
}

void fy_comm_finalize_attrs(void)
{
    if (!s_up)
        return;
    /* MPI: MPI_Finalize deletes MPI_COMM_SELF's attributes first, so
     * libraries can hook their own teardown on it. */
    fy_attr_delete_all(&s_self.attrs, s_self.handle);
    fy_attr_delete_all(&s_world.attrs, s_world.handle);
}

void fy_comm_finalize(void)
{
    if (!s_up)
        return;
    fy_comm_finalize_attrs(); /* nothing left if the caller ran it */
    fy_comm_release(&s_self);
    fy_comm_release(&s_world);
    fy_ctx_finalize();
    fy_hw_finalize();
    s_up = false;
}

/* Common tail of every constructor: members build the communicator on
 * the agreed context, inheriting the parent's error handler. */
static int fy_comm_make(struct fy_comm *parent, struct fy_group *g,
                        uint32_t ctx, struct fy_comm **out)
{
    struct fy_comm *c;
    int rc = fy_comm_create(g, ctx, &c);
    if (rc != 0)
        return rc;
    struct fy_errhandler *eh = fy_errhandler_get(parent->errhandler);
    if (eh)
        fy_comm_set_errhandler(c, eh);
    *out = c;
    return 0;
}

static int comm_dup(struct fy_comm *parent, bool attrs, struct fy_comm **out)
{
    struct fy_comm *c;
    int rc;
    if (parent->inter) {
        rc = fy_inter_dup(parent, &c);
        if (rc != 0)
            return rc;
    } else {
        uint32_t ctx;
        rc = fy_comm_ctx_alloc(parent, &ctx);
        if (rc != 0)
            return rc;
        rc = fy_comm_make(parent, parent->group, ctx, &c);
        if (rc != 0) {
            fy_ctx_mark(ctx, true);
            return rc;
        }
    }
    /* A duplicate keeps the topology (MPI 7.4). */
    if (parent->topo && !(c->topo = fy_topo_dup(parent->topo)))
        rc = -ENOMEM;
    else if (attrs)
        rc = fy_attr_copy_all(&parent->attrs, parent->handle, &c->attrs,
                              c->handle);
    if (rc != 0) {
        fy_attr_delete_all(&c->attrs, c->handle);
        fy_comm_release(c);
        /* -ENOMEM, or a copy callback failed: its MPI error code, as a
         * positive number, is what fy_attr_copy_all returned. */
        return rc;
    }
    *out = c;
    return 0;
}

int fy_comm_dup(struct fy_comm *parent, struct fy_comm **out)
{
    return comm_dup(parent, true, out);
}

int fy_comm_dup_private(struct fy_comm *parent, struct fy_comm **out)
{
    return comm_dup(parent, false, out);
}

int fy_comm_idup(struct fy_comm *parent, struct fy_comm **out,
                 struct fy_ctx_agree *agree_out[FY_IDUP_AGREES])
{
    /* MPI 4.0 7.4.2: as if MPI_Comm_dup ran at the time of the call, so
     * the communicator and its attributes are made now; only the context
     * ids come later. */
    struct fy_comm *c;
    int rc = parent->inter
                 ? fy_inter_dup_pending(parent, &c)
                 : fy_comm_make(parent, parent->group, FY_CTX_NONE, &c);
    if (rc != 0)
        return rc;
    if (parent->topo && !(c->topo = fy_topo_dup(parent->topo)))
        rc = -ENOMEM;
    else
        rc = fy_attr_copy_all(&parent->attrs, parent->handle, &c->attrs,
                              c->handle);
    /* Join the agreements even if the copy failed: the other members need
     * this one's contributions. */
    struct fy_ctx_agree *ag[FY_IDUP_AGREES] = {NULL, NULL};
    struct fy_comm *want = rc == 0 ? c : NULL;
    int arc = parent->inter ? fy_inter_agree_start(parent, want, ag)
                            : fy_ctx_agree_start(parent, true, want, &ag[0]);
    if (rc != 0 || arc != 0) {
        for (int i = 0; i < FY_IDUP_AGREES; i++)
            if (ag[i])
                fy_ctx_agree_orphan(ag[i]);
        fy_attr_delete_all(&c->attrs, c->handle);
        fy_comm_release(c);
        return rc != 0 ? rc : arc;
    }
    *out = c;
    for (int i = 0; i < FY_IDUP_AGREES; i++)
        agree_out[i] = ag[i];
    return 0;
}

bool fy_comm_idup_test(struct fy_comm *c,
                       struct fy_ctx_agree *const ag[FY_IDUP_AGREES],
                       int *err_out)
{
    int err = 0;
    /* Both must be over: the communicator's ids are set as they end, and
     * freeing it gives back whichever was agreed. */
    for (int i = 0; i < FY_IDUP_AGREES; i++) {
        int e;
        if (!ag[i])
            continue;
        if (!fy_ctx_agree_test(ag[i], &e, NULL))
            return false;
        err = err ? err : e;
    }
    if (err != 0 && c->handle != MPI_COMM_NULL)
        fy_comm_free(c); /* no id: the new communicator never came to be */
    *err_out = err;
    return true;
}

int fy_comm_create_from_group(struct fy_comm *parent, struct fy_group *group,
                              struct fy_comm **out)
{
    if (parent->inter) {
        /* MPI 4.0 7.4.2: each side gives a subgroup of its local group;
         * that is a split with one colour, ordered as the group is. */
        bool in = group->rank != MPI_UNDEFINED;
        return fy_inter_split(parent, in ? 0 : MPI_UNDEFINED,
                              in ? group->rank : 0, out);
    }
    uint32_t ctx;
    int rc = fy_comm_ctx_alloc(parent, &ctx);
    if (rc != 0)
        return rc;
    if (group->rank == MPI_UNDEFINED) {
        fy_ctx_mark(ctx, true); /* agreed for the members only */
        *out = NULL;
        return 0;
    }
    rc = fy_comm_make(parent, group, ctx, out);
    if (rc != 0)
        fy_ctx_mark(ctx, true);
    return rc;
}

int fy_comm_create_group(struct fy_comm *parent, struct fy_group *group,
                         int tag, struct fy_comm **out)
{
    /* Only the group's members take part, so the context agreement runs
     * on a stand-in communicator made of them. It talks on the parent's
     * collective context, with sequence numbers from the top half of the
     * space, picked by the user's tag: the parent's own collectives would
     * need 2^21 calls to get there, and concurrent calls with different
     * tags stay apart. */
    struct fy_comm tmp = {
        .handle = parent->handle,
        .refcount = 1,
        .ctx = parent->ctx,
        .rank = group->rank,
        .size = group->size,
        .group = group,
        .p2p_group = group,
        .errhandler = parent->errhandler,
        .coll_seq = 0x200000u | ((uint32_t)tag & 0x1fffffu),
    };
    uint32_t ctx;
    int rc = fy_comm_ctx_alloc(&tmp, &ctx);
    if (rc != 0)
        return rc;
    rc = fy_comm_make(parent, group, ctx, out);
    if (rc != 0)
        fy_ctx_mark(ctx, true);
    return rc;
}

struct fy_split_entry {
    int key;
    int rank; /* in the parent */
};

static int fy_split_cmp(const void *a, const void *b)
{
    const struct fy_split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int fy_comm_split(struct fy_comm *parent, int color, int key,
                  struct fy_comm **out)
{
    if (parent->inter)
        return fy_inter_split(parent, color, key, out);
    int n = parent->size;
    int mine[2] = {color, key};
    int *all = malloc((size_t)n * 2 * sizeof(int));
    struct fy_split_entry *ents = malloc((size_t)n * sizeof(*ents));
    int *world = malloc((size_t)n * sizeof(int));
    int rc = -ENOMEM;
    if (!all || !ents || !world)
        goto out_free;
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    rc = fy_coll_allgather(mine, 2, dint, all, 2, dint, parent, NULL);
    if (rc != 0)
        goto out_free;
    /* Every member takes part in the agreement, even those leaving with
     * MPI_UNDEFINED: the allreduce is collective over the parent. */
    uint32_t ctx;
    rc = fy_comm_ctx_alloc(parent, &ctx);
    if (rc != 0)
        goto out_free;
    if (color == MPI_UNDEFINED) {
        fy_ctx_mark(ctx, true); /* agreed for the members only */
        *out = NULL;
        goto out_free;
    }
    int m = 0;
    for (int r = 0; r < n; r++) {
        if (all[2 * r] == color) {
            ents[m].key = all[2 * r + 1];
            ents[m].rank = r;
            m++;
        }
    }
    /* Ties on key go by parent rank: the comparator includes it, so the
     * order does not depend on qsort's (in)stability. */
    qsort(ents, (size_t)m, sizeof(*ents), fy_split_cmp);
    for (int i = 0; i < m; i++)
        world[i] = parent->group->world[ents[i].rank];
    struct fy_group *g;
    rc = fy_group_create(m, world, &g);
    if (rc == 0) {
        rc = fy_comm_make(parent, g, ctx, out);
        fy_group_release(g); /* the communicator holds its own reference */
    }
    if (rc != 0)
        fy_ctx_mark(ctx, true);
out_free:
    free(all);
    free(ents);
    free(world);
    return rc;
}

int fy_comm_free(struct fy_comm *c)
{
    int rc = fy_attr_delete_all(&c->attrs, c->handle);
    if (rc != 0)
        return rc;
    /* The handle dies now (and may be reused at once), the object lives on
     * while references remain; clearing c->handle keeps the final release
     * from freeing a slot that belongs to someone else by then. */
    fy_handle_release(&s_comms, c->handle);
    c->handle = MPI_COMM_NULL;
    fy_comm_release(c);
    return 0;
}

int fy_comm_compare(const struct fy_comm *a, const struct fy_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    if (!a->inter != !b->inter)
        return MPI_UNEQUAL;
    int g = fy_group_compare(a->group, b->group);
    if (a->inter) {
        /* MPI 4.0 7.4.1: both the local and the remote groups decide. */
        int r = fy_group_compare(a->inter->remote, b->inter->remote);
        if (g == MPI_UNEQUAL || r == MPI_UNEQUAL)
            return MPI_UNEQUAL;
        if (g == MPI_IDENT && r == MPI_IDENT)
            return MPI_CONGRUENT;
        return MPI_SIMILAR;
    }
    if (g == MPI_IDENT)
        return MPI_CONGRUENT;
    return g; /* MPI_SIMILAR or MPI_UNEQUAL */
}
