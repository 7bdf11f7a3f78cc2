/* SPDX-License-Identifier: MIT */
/* Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, and dup,
 * split and create on an intercommunicator. An intercommunicator is a
 * communicator whose point-to-point ranks name its remote group
 * (fy_comm.p2p_group); its context id is agreed over both groups, so it
 * is free at every member, and it carries a hidden intracommunicator of
 * its local group for the local halves of collectives. */
#include "comm/comm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_int.h"
#include "p2p/p2p.h"

void fy_inter_free(struct fy_inter *in)
{
    if (!in)
        return;
    fy_comm_release(in->local);
    fy_group_release(in->remote);
    fy_group_release(in->all);
    free(in);
}

/* Agree on a context id free at every member of 'all' (this process is
 * one), talking on context 'ctx' + 1, which must name nothing else
 * between any two of them; *seq numbers the agreements run that way. */
static int agree_over(struct fy_group *all, uint32_t ctx, uint32_t *seq,
                      const struct fy_comm *like, uint32_t *ctx_out)
{
    struct fy_comm tmp = {
        .handle = like->handle,
        .refcount = 1,
        .ctx = ctx,
        .rank = all->rank,
        .size = all->size,
        .group = all,
        .p2p_group = all,
        .errhandler = like->errhandler,
        .coll_seq = *seq,
    };
    int rc = fy_comm_ctx_alloc(&tmp, ctx_out);
    *seq = tmp.coll_seq;
    return rc;
}

/* Build the intercommunicator of local group lg and remote group rg on
 * context ctx, its local intracommunicator on lctx (both already marked
 * used here; given back on error). Takes its own references on the
 * groups. */
static int inter_make(const struct fy_comm *like, struct fy_group *lg,
                      struct fy_group *rg, uint32_t ctx, uint32_t lctx,
                      struct fy_comm **out)
{
    int n = lg->size + rg->size;
    int *w = malloc((size_t)n * sizeof(int));
    struct fy_inter *in = calloc(1, sizeof(*in));
    struct fy_comm *c = NULL, *lc = NULL;
    int rc = -ENOMEM;
    if (!w || !in)
        goto err;
    in->first = lg->world[0] < rg->world[0];
    struct fy_group *a = in->first ? lg : rg, *b = in->first ? rg : lg;
    memcpy(w, a->world, (size_t)a->size * sizeof(int));
    memcpy(w + a->size, b->world, (size_t)b->size * sizeof(int));
    rc = fy_group_create(n, w, &in->all);
    if (rc != 0)
        goto err;
    rc = fy_comm_create(lg, lctx, &lc);
    if (rc != 0)
        goto err;
    lctx = FY_CTX_NONE; /* lc owns it now */
    strncpy(lc->name, "(intercommunicator's local part)", sizeof(lc->name) - 1);
    rc = fy_comm_create(lg, ctx, &c);
    if (rc != 0)
        goto err;
    struct fy_errhandler *eh = fy_errhandler_get(like->errhandler);
    if (eh)
        fy_comm_set_errhandler(c, eh);
    fy_group_retain(rg);
    in->remote = rg;
    in->local = lc;
    c->inter = in;
    c->p2p_group = rg;
    free(w);
    *out = c;
    return 0;
err:
    free(w);
    if (in && in->all)
        fy_group_release(in->all);
    free(in);
    if (lc)
        fy_comm_release(lc);
    fy_ctx_mark(ctx, true);
    fy_ctx_mark(lctx, true);
    return rc;
}

/* The two leaders (local rank 0 of each group) swap scount and rcount
 * ints over c's collective context (step 'step' of collective 'seq'). */
static int leaders_swap(struct fy_comm *c, uint32_t seq, int step,
                        const int *sbuf, int scount, int *rbuf, int rcount)
{
    if (c->rank != 0)
        return 0;
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    int tag = FY_COLL_TAG(seq, step);
    struct fy_req *r;
    int rc = fy_p2p_isend(sbuf, scount, dint, 0, tag, c, c->ctx + 1,
                          FY_SEND_STANDARD, &r);
    if (rc != 0)
        return rc;
    int src, rtag;
    MPI_Count bytes;
    rc = fy_p2p_recv(rbuf, rcount, dint, 0, tag, c, c->ctx + 1, &src, &rtag,
                     &bytes);
    int wrc = fy_req_wait(r);
    fy_req_free(r);
    return rc != 0 ? rc : wrc;
}

/* The local leader's half of MPI_Intercomm_create: swap group sizes and
 * member lists with the remote leader over peer. Returns the remote
 * list in *rworld_out (malloc'd) and its size, or a negative errno. */
static int leader_exchange(struct fy_comm *local, struct fy_comm *peer,
                           int remote_leader, int tag, int **rworld_out,
                           int *rsize_out)
{
    /* Reported by the MPI layer, at every member. */
    if (remote_leader < 0 || remote_leader >= peer->p2p_group->size)
        return -ERANGE;
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    struct fy_req *r1, *r2;
    int rc = fy_p2p_isend(&local->size, 1, dint, remote_leader, tag, peer,
                          peer->ctx, FY_SEND_STANDARD, &r1);
    if (rc != 0)
        return rc;
    rc = fy_p2p_isend(local->group->world, local->size, dint, remote_leader,
                      tag, peer, peer->ctx, FY_SEND_STANDARD, &r2);
    if (rc != 0) {
        fy_req_wait(r1);
        fy_req_free(r1);
        return rc;
    }
    int rsize = 0, src, rtag;
    MPI_Count bytes;
    int *rworld = NULL;
    rc = fy_p2p_recv(&rsize, 1, dint, remote_leader, tag, peer, peer->ctx, &src,
                     &rtag, &bytes);
    if (rc == 0 && rsize <= 0)
        rc = -EPROTO;
    if (rc == 0 && !(rworld = malloc((size_t)rsize * sizeof(int))))
        rc = -ENOMEM;
    if (rc == 0)
        rc = fy_p2p_recv(rworld, rsize, dint, remote_leader, tag, peer,
                         peer->ctx, &src, &rtag, &bytes);
    rc = fy_coll_keep(rc, fy_req_wait(r1));
    rc = fy_coll_keep(rc, fy_req_wait(r2));
    fy_req_free(r1);
    fy_req_free(r2);
    if (rc != 0) {
        free(rworld);
        return rc;
    }
    *rworld_out = rworld;
    *rsize_out = rsize;
    return 0;
}

int fy_intercomm_create(struct fy_comm *local, int local_leader,
                        struct fy_comm *peer, int remote_leader, int tag,
                        struct fy_comm **out)
{
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    int hdr[2] = {0, 0}; /* leader's result, remote group size */
    int *rworld = NULL;
    if (local->rank == local_leader) {
        int rc =
            leader_exchange(local, peer, remote_leader, tag, &rworld, &hdr[1]);
        hdr[0] = rc;
    }
    /* Every member learns the leader's outcome, so all return alike. */
    int rc = fy_coll_bcast(hdr, 2, dint, local_leader, local, NULL);
    if (rc == 0 && hdr[0] != 0)
        rc = hdr[0];
    if (rc != 0) {
        free(rworld);
        return rc;
    }
    /* Not a reason to stop here: the others would wait in the bcast. */
    if (!rworld && !(rworld = malloc((size_t)hdr[1] * sizeof(int))))
        fy_fatal(1, "MPI_Intercomm_create: out of memory for %d ranks", hdr[1]);
    rc = fy_coll_bcast(rworld, hdr[1], dint, local_leader, local, NULL);
    if (rc != 0) {
        free(rworld);
        return rc;
    }
    int rsize = hdr[1];
    for (int i = 0; i < rsize; i++) {
        if (fy_group_rank_of_world(local->group, rworld[i]) != MPI_UNDEFINED) {
            free(rworld);
            return -EXDEV; /* every member sees the same lists */
        }
    }
    struct fy_group *rg;
    rc = fy_group_create(rsize, rworld, &rg);
    free(rworld);
    if (rc != 0)
        return rc;
    /* The union, ordered as every member of both groups orders it. */
    int n = local->size + rsize;
    int *w = malloc((size_t)n * sizeof(int));
    if (!w) {
        fy_group_release(rg);
        return -ENOMEM;
    }
    bool first = local->group->world[0] < rg->world[0];
    struct fy_group *a = first ? local->group : rg;
    struct fy_group *b = first ? rg : local->group;
    memcpy(w, a->world, (size_t)a->size * sizeof(int));
    memcpy(w + a->size, b->world, (size_t)b->size * sizeof(int));
    struct fy_group *all;
    rc = fy_group_create(n, w, &all);
    free(w);
    if (rc != 0) {
        fy_group_release(rg);
        return rc;
    }
    /* No communicator spans both groups yet: this agreement talks on the
     * reserved bridge context, its collective number picked by the
     * user's tag (concurrent creations must use different tags, as MPI
     * asks of them on peer_comm). */
    uint32_t seq = 0x200000u | ((uint32_t)tag & 0x1fffffu);
    uint32_t ctx, lctx;
    rc = agree_over(all, FY_CTX_BRIDGE, &seq, local, &ctx);
    fy_group_release(all);
    if (rc == 0) {
        rc = fy_comm_ctx_alloc(local, &lctx);
        if (rc != 0)
            fy_ctx_mark(ctx, true);
    }
    if (rc == 0)
        rc = inter_make(local, local->group, rg, ctx, lctx, out);
    fy_group_release(rg);
    return rc;
}

int fy_inter_dup(struct fy_comm *c, struct fy_comm **out)
{
    struct fy_inter *in = c->inter;
    uint32_t ctx, lctx;
    int rc = agree_over(in->all, c->ctx, &in->all_seq, c, &ctx);
    if (rc != 0)
        return rc;
    rc = fy_comm_ctx_alloc(in->local, &lctx);
    if (rc != 0) {
        fy_ctx_mark(ctx, true);
        return rc;
    }
    return inter_make(c, c->group, in->remote, ctx, lctx, out);
}

int fy_inter_dup_pending(struct fy_comm *c, struct fy_comm **out)
{
    return inter_make(c, c->group, c->inter->remote, FY_CTX_NONE, FY_CTX_NONE,
                      out);
}

int fy_inter_agree_start(struct fy_comm *c, struct fy_comm *newcomm,
                         struct fy_ctx_agree *ag_out[2])
{
    struct fy_inter *in = c->inter;
    /* Over both groups on c's context, numbered by all_seq as the blocking
     * constructors' agreements (agree_over); the agreement keeps a copy
     * of this stand-in, whose groups c owns. */
    struct fy_comm over = {
        .handle = c->handle,
        .refcount = 1,
        .ctx = c->ctx,
        .rank = in->all->rank,
        .size = in->all->size,
        .group = in->all,
        .p2p_group = in->all,
        .errhandler = c->errhandler,
        .coll_seq = in->all_seq,
    };
    struct fy_ctx_agree *a, *b;
    int rc = fy_ctx_agree_start(&over, false, newcomm, &a);
    in->all_seq = over.coll_seq;
    if (rc != 0)
        return rc;
    rc = fy_ctx_agree_start(in->local, true,
                            newcomm ? newcomm->inter->local : NULL, &b);
    if (rc != 0) {
        fy_ctx_agree_orphan(a); /* the other members still need it */
        return rc;
    }
    ag_out[0] = a;
    ag_out[1] = b;
    return 0;
}

int fy_intercomm_merge(struct fy_comm *c, bool high, struct fy_comm **out)
{
    struct fy_inter *in = c->inter;
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    uint32_t seq = fy_coll_begin(c);
    int mine = high, theirs = 0;
    int rc = leaders_swap(c, seq, 0, &mine, 1, &theirs, 1);
    rc = fy_coll_keep(rc, fy_coll_bcast(&theirs, 1, dint, 0, in->local, NULL));
    if (rc != 0)
        return rc;
    bool local_first = mine != theirs ? !high : in->first;
    struct fy_group *a = local_first ? c->group : in->remote;
    struct fy_group *b = local_first ? in->remote : c->group;
    int n = a->size + b->size;
    int *w = malloc((size_t)n * sizeof(int));
    uint32_t ctx;
    rc = agree_over(in->all, c->ctx, &in->all_seq, c, &ctx);
    if (rc != 0 || !w) {
        if (rc == 0)
            fy_ctx_mark(ctx, true);
        free(w);
        return rc != 0 ? rc : -ENOMEM;
    }
    memcpy(w, a->world, (size_t)a->size * sizeof(int));
    memcpy(w + a->size, b->world, (size_t)b->size * sizeof(int));
    struct fy_group *g;
    rc = fy_group_create(n, w, &g);
    free(w);
    if (rc == 0) {
        rc = fy_comm_create(g, ctx, out);
        fy_group_release(g);
    }
    if (rc != 0) {
        fy_ctx_mark(ctx, true);
        return rc;
    }
    struct fy_errhandler *eh = fy_errhandler_get(c->errhandler);
    if (eh)
        fy_comm_set_errhandler(*out, eh);
    return 0;
}

struct split_ent {
    int key, rank;
};

static int split_cmp(const void *x, const void *y)
{
    const struct split_ent *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The members of 'g' whose (colour, key) pair in cv has 'color', sorted
 * by key then rank, as a new group (the empty group if none). */
static int split_group(struct fy_group *g, const int *cv, int color,
                       struct fy_group **out)
{
    struct split_ent *e = malloc((size_t)g->size * sizeof(*e));
    int *w = malloc((size_t)g->size * sizeof(int));
    int rc = -ENOMEM;
    if (e && w) {
        int m = 0;
        for (int r = 0; r < g->size; r++)
            if (cv[2 * r] == color)
                e[m++] = (struct split_ent){cv[2 * r + 1], r};
        qsort(e, (size_t)m, sizeof(*e), split_cmp);
        for (int i = 0; i < m; i++)
            w[i] = g->world[e[i].rank];
        rc = fy_group_create(m, w, out);
    }
    free(e);
    free(w);
    return rc;
}

int fy_inter_split(struct fy_comm *c, int color, int key, struct fy_comm **out)
{
    struct fy_inter *in = c->inter;
    struct fy_dtype *dint = fy_dtype_get(MPI_INT);
    int lsize = c->size, rsize = in->remote->size;
    int mine[2] = {color, key};
    int *lcv = malloc((size_t)lsize * 2 * sizeof(int));
    int *rcv = malloc((size_t)rsize * 2 * sizeof(int));
    /* Not a reason to stop here: the others would wait for us. */
    if (!lcv || !rcv)
        fy_fatal(1, "MPI_Comm_split: out of memory for %d ranks",
                 lsize + rsize);
    uint32_t seq = fy_coll_begin(c);
    int rc = fy_coll_allgather(mine, 2, dint, lcv, 2, dint, in->local, NULL);
    rc = fy_coll_keep(rc,
                      leaders_swap(c, seq, 0, lcv, 2 * lsize, rcv, 2 * rsize));
    rc = fy_coll_keep(rc,
                      fy_coll_bcast(rcv, 2 * rsize, dint, 0, in->local, NULL));
    /* Both agreements are collective over everyone, colour or not; the
     * ids serve every colour (their members are disjoint). */
    uint32_t ctx = FY_CTX_NONE, lctx = FY_CTX_NONE;
    int arc = agree_over(in->all, c->ctx, &in->all_seq, c, &ctx);
    if (arc == 0)
        arc = fy_comm_ctx_alloc(in->local, &lctx);
    rc = fy_coll_keep(rc, arc);
    struct fy_group *lg = NULL, *rg = NULL;
    if (rc == 0 && color != MPI_UNDEFINED) {
        rc = split_group(c->group, lcv, color, &lg);
        if (rc == 0)
            rc = split_group(in->remote, rcv, color, &rg);
    }
    free(lcv);
    free(rcv);
    if (rc != 0 || color == MPI_UNDEFINED || rg->size == 0) {
        /* No communicator here (MPI: MPI_COMM_NULL when either side of
         * the colour is empty). */
        fy_ctx_mark(ctx, true);
        fy_ctx_mark(lctx, true);
        if (lg)
            fy_group_release(lg);
        if (rg)
            fy_group_release(rg);
        if (rc == 0)
            *out = NULL;
        return rc;
    }
    rc = inter_make(c, lg, rg, ctx, lctx, out);
    fy_group_release(lg);
    fy_group_release(rg);
    return rc;
}
