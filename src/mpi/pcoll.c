/* SPDX-License-Identifier: MIT */
/* Persistent collective requests (MPI 4.0 6.13): a checked description of
 * the _init call, with its own copies of the arrays and references on the
 * objects, that each MPI_Start turns into a nonblocking collective
 * schedule of src/coll. The _init calls are collective and ordered, but
 * the requests "can be started in any order and the order can differ
 * among processes" (MPI 4.0 6.13): so each request runs on a private
 * duplicate of its communicator, made by the _init call, whose only
 * collectives are that request's activations (one at a time). Its
 * schedules' tags and shared-memory slot (one per context) are then the
 * request's own, whatever else is started on the communicator meanwhile.
 * The price is one context id per live request (2047 in all): an _init
 * that finds none left fails with MPI_ERR_INTERN and says so. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/pcoll.h"

MPI_Request fy_pcoll_check_only;

/* The object behind a persistent collective request. Owned by its
 * fy_preq; 'a' holds the arguments with arrays pointing at our copies. */
struct fy_pcoll {
    struct fy_pcoll_args a;
    struct fy_comm *c;          /* the fy_preq holds the reference */
    struct fy_comm *run;        /* the private duplicate it runs on */
    struct fy_dtype *sdt, *rdt; /* NULL when not significant */
    struct fy_op *op;
    struct fy_dtype **sdts, **rdts; /* alltoallw: ns and nr entries */
    struct fy_sched *s;             /* the running activation, or NULL */
    int err;                        /* its result once done: 0 or -errno */
};

static void dt_hold(struct fy_dtype *dt)
{
    if (dt && !dt->builtin)
        fy_dtype_retain(dt);
}

static void dt_drop(struct fy_dtype *dt)
{
    if (dt && !dt->builtin)
        fy_dtype_release(dt);
}

/* Copy n elements of size sz; NULL stays NULL. False when out of memory. */
static bool dup_array(const void **p, int n, size_t sz)
{
    if (!*p)
        return true;
    void *d = malloc((size_t)FY_MAX(n, 1) * sz);
    if (!d) {
        *p = NULL;
        return false;
    }
    memcpy(d, *p, (size_t)n * sz);
    *p = d;
    return true;
}

/* Copy the n entries of *v as 64-bit values, whatever their width; no
 * array stays no array. False when out of memory (*v is then none). */
static bool dup_vec(struct fy_coll_vec *v, int n)
{
    if (!v->p)
        return true;
    MPI_Aint *d = malloc((size_t)FY_MAX(n, 1) * sizeof(*d));
    if (!d) {
        *v = FY_VEC_NONE;
        return false;
    }
    for (int i = 0; i < n; i++)
        d[i] = fy_vec_at(*v, i);
    *v = fy_vec_wide(d);
    return true;
}

/* Resolve a type array as the alltoallw checks did: an entry with a zero
 * count may be any handle and stands for MPI_BYTE. */
static struct fy_dtype **types_resolve(const MPI_Datatype *types,
                                       struct fy_coll_vec counts, int n)
{
    if (!types)
        return NULL;
    struct fy_dtype **out = malloc((size_t)FY_MAX(n, 1) * sizeof(*out));
    if (!out)
        return NULL;
    for (int i = 0; i < n; i++) {
        struct fy_dtype *dt = fy_dtype_get(types[i]);
        if (fy_vec_at(counts, i) == 0 && (!dt || !dt->committed))
            dt = fy_dtype_get(MPI_BYTE);
        dt_hold(dt);
        out[i] = dt;
    }
    return out;
}

static void types_drop(struct fy_dtype **dts, int n)
{
    if (!dts)
        return;
    for (int i = 0; i < n; i++)
        dt_drop(dts[i]);
    free(dts);
}

void fy_pcoll_destroy(struct fy_pcoll *pc)
{
    if (pc->s) /* freed while active (erroneous): see it through */
        fy_sched_free(pc->s);
    if (pc->run)
        fy_comm_release(pc->run);
    dt_drop(pc->sdt);
    dt_drop(pc->rdt);
    if (pc->op && !pc->op->builtin)
        fy_op_release(pc->op);
    types_drop(pc->sdts, pc->a.ns);
    types_drop(pc->rdts, pc->a.nr);
    free((void *)pc->a.scounts.p);
    free((void *)pc->a.sdispls.p);
    free((void *)pc->a.rcounts.p);
    free((void *)pc->a.rdispls.p);
    free((void *)pc->a.sbdispls);
    free((void *)pc->a.rbdispls);
    free(pc);
}

int fy_pcoll_create(struct fy_comm *c, const struct fy_pcoll_args *a,
                    MPI_Request *request, const char *fn)
{
    struct fy_pcoll *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    pc->a = *a;
    pc->c = c;
    /* Type arrays are resolved here, not kept: their handles may be freed
     * while the request lives. */
    pc->a.stypes = pc->a.rtypes = NULL;
    bool ok =
        dup_vec(&pc->a.scounts, a->ns) & dup_vec(&pc->a.sdispls, a->ns) &
        dup_vec(&pc->a.rcounts, a->nr) & dup_vec(&pc->a.rdispls, a->nr) &
        dup_array((const void **)&pc->a.sbdispls, a->ns, sizeof(MPI_Aint)) &
        dup_array((const void **)&pc->a.rbdispls, a->nr, sizeof(MPI_Aint));
    if (ok && a->stypes && a->sbuf != MPI_IN_PLACE) {
        pc->sdts = types_resolve(a->stypes, a->scounts, a->ns);
        ok = pc->sdts != NULL;
    }
    if (ok && a->rtypes) {
        pc->rdts = types_resolve(a->rtypes, a->rcounts, a->nr);
        ok = pc->rdts != NULL;
    }
    /* Collective: every member makes its duplicate, even if it ran out of
     * memory above, so that none is left waiting in the agreement. */
    int drc = fy_comm_dup_private(c, &pc->run);
    if (drc != 0)
        pc->run = NULL;
    if (!ok) {
        fy_pcoll_destroy(pc);
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    if (drc != 0) {
        fy_pcoll_destroy(pc);
        if (drc == -ENOSPC)
            return fy_mpi_err(c, MPI_ERR_INTERN, fn,
                              "no context id left for the request's private "
                              "communicator (one per live persistent "
                              "collective; free requests or communicators)");
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn,
                          "out of memory for the request's communicator");
    }
    /* Handles that were not checked because they are not significant
     * here resolve to NULL or to a type the schedule never reads. */
    bool scatter = a->kind == FY_PCOLL_SCATTER || a->kind == FY_PCOLL_SCATTERV;
    if (a->sbuf != MPI_IN_PLACE)
        pc->sdt = fy_dtype_get(a->stype);
    if (a->rbuf != MPI_IN_PLACE || !scatter) /* only scatter's may be */
        pc->rdt = fy_dtype_get(a->rtype);
    dt_hold(pc->sdt);
    dt_hold(pc->rdt);
    if (a->kind >= FY_PCOLL_REDUCE && a->kind <= FY_PCOLL_EXSCAN) {
        pc->op = fy_op_get(a->op);
        if (pc->op && !pc->op->builtin)
            fy_op_retain(pc->op);
    }
    if (fy_preq_create_coll(pc, c, request)) {
        fy_pcoll_destroy(pc);
        return fy_mpi_err(c, MPI_ERR_NO_MEM, fn,
                          "out of memory for a request handle");
    }
    return MPI_SUCCESS;
}

/* Stands in for the arrays of a neighbourhood collective without
 * neighbours on that side (never read). */
static const MPI_Aint s_none_aint[1];

static int launch_neighbor(struct fy_pcoll *pc, struct fy_sched **s)
{
    const struct fy_pcoll_args *a = &pc->a;
    struct fy_coll_nbr_buf snd = {
        .buf = a->sbuf, .count = a->scount, .dt = pc->sdt};
    struct fy_coll_nbr_buf rcv = {
        .buf = a->rbuf, .count = a->rcount, .dt = pc->rdt};
    switch (a->kind) {
    case FY_PCOLL_NBR_ALLGATHERV:
        snd.same = true;
        rcv.counts = a->rcounts.p ? a->rcounts : fy_vec_wide(s_none_aint);
        rcv.displs = a->rdispls.p ? a->rdispls : fy_vec_wide(s_none_aint);
        break;
    case FY_PCOLL_NBR_ALLGATHER:
        snd.same = true;
        break;
    case FY_PCOLL_NBR_ALLTOALLV:
        snd.counts = a->scounts.p ? a->scounts : fy_vec_wide(s_none_aint);
        snd.displs = a->sdispls.p ? a->sdispls : fy_vec_wide(s_none_aint);
        rcv.counts = a->rcounts.p ? a->rcounts : fy_vec_wide(s_none_aint);
        rcv.displs = a->rdispls.p ? a->rdispls : fy_vec_wide(s_none_aint);
        break;
    case FY_PCOLL_NBR_ALLTOALLW:
        snd.counts = a->scounts.p ? a->scounts : fy_vec_wide(s_none_aint);
        snd.bdispls = a->sbdispls ? a->sbdispls : s_none_aint;
        snd.dts = pc->sdts;
        rcv.counts = a->rcounts.p ? a->rcounts : fy_vec_wide(s_none_aint);
        rcv.bdispls = a->rbdispls ? a->rbdispls : s_none_aint;
        rcv.dts = pc->rdts;
        break;
    default: /* FY_PCOLL_NBR_ALLTOALL */
        break;
    }
    return fy_coll_neighbor(&snd, &rcv, pc->run, s);
}

/* The intercommunicator forms (MPI 4.0 6.2.2): no scans, no neighbours
 * (the _init checks refused them), roots MPI_ROOT/MPI_PROC_NULL/remote. */
static int launch_inter(struct fy_pcoll *pc, struct fy_sched **s)
{
    const struct fy_pcoll_args *a = &pc->a;
    struct fy_comm *c = pc->run;
    struct fy_dtype *sdt = pc->sdt, *rdt = pc->rdt;
    struct fy_coll_layout sl = {.buf = a->sbuf,
                                .count = a->scount,
                                .counts = a->scounts,
                                .displs = a->sdispls,
                                .dt = sdt,
                                .dts = pc->sdts};
    struct fy_coll_layout rl = {.buf = a->rbuf,
                                .count = a->rcount,
                                .counts = a->rcounts,
                                .displs = a->rdispls,
                                .dt = rdt,
                                .dts = pc->rdts};
    switch (a->kind) {
    case FY_PCOLL_BARRIER:
        return fy_coll_inter_barrier(c, s);
    case FY_PCOLL_BCAST:
        return fy_coll_inter_bcast(a->rbuf, a->rcount, rdt, a->root, c, s);
    case FY_PCOLL_GATHER:
    case FY_PCOLL_GATHERV:
        return fy_coll_inter_gather(a->sbuf, a->scount, sdt, &rl, a->root, c,
                                    s);
    case FY_PCOLL_SCATTER:
    case FY_PCOLL_SCATTERV:
        return fy_coll_inter_scatter(&sl, a->rbuf, a->rcount, rdt, a->root, c,
                                     s);
    case FY_PCOLL_ALLGATHER:
    case FY_PCOLL_ALLGATHERV:
        return fy_coll_inter_allgather(a->sbuf, a->scount, sdt, &rl, c, s);
    case FY_PCOLL_ALLTOALL:
    case FY_PCOLL_ALLTOALLV:
        return fy_coll_inter_alltoall(&sl, &rl, c, s);
    case FY_PCOLL_ALLTOALLW:
        /* Displacements in bytes: the w layout is told by dts. */
        return fy_coll_inter_alltoall(&sl, &rl, c, s);
    case FY_PCOLL_REDUCE:
        return fy_coll_inter_reduce(a->sbuf, a->rbuf, a->rcount, rdt, pc->op,
                                    a->root, c, s);
    case FY_PCOLL_ALLREDUCE:
        return fy_coll_inter_allreduce(a->sbuf, a->rbuf, a->rcount, rdt, pc->op,
                                       c, s);
    case FY_PCOLL_REDUCE_SCATTER:
        return fy_coll_inter_reduce_scatter(a->sbuf, a->rbuf, 0, a->rcounts,
                                            rdt, pc->op, c, s);
    case FY_PCOLL_REDUCE_SCATTER_BLOCK:
        return fy_coll_inter_reduce_scatter(a->sbuf, a->rbuf, a->rcount,
                                            FY_VEC_NONE, rdt, pc->op, c, s);
    default:
        return -EINVAL; /* refused by the _init checks */
    }
}

/* Start the collective described by pc: 0 or a negative errno. */
static int launch(struct fy_pcoll *pc, struct fy_sched **s)
{
    const struct fy_pcoll_args *a = &pc->a;
    struct fy_comm *c = pc->run;
    struct fy_dtype *sdt = pc->sdt, *rdt = pc->rdt;
    if (c->inter)
        return launch_inter(pc, s);
    switch (a->kind) {
    case FY_PCOLL_BARRIER:
        return fy_coll_barrier(c, s);
    case FY_PCOLL_BCAST:
        return fy_coll_bcast(a->rbuf, a->rcount, rdt, a->root, c, s);
    case FY_PCOLL_GATHER:
        return fy_coll_gather(a->sbuf, a->scount, sdt, a->rbuf, a->rcount, rdt,
                              a->root, c, s);
    case FY_PCOLL_GATHERV:
        return fy_coll_gatherv(a->sbuf, a->scount, sdt, a->rbuf, a->rcounts,
                               a->rdispls, rdt, a->root, c, s);
    case FY_PCOLL_SCATTER:
        return fy_coll_scatter(a->sbuf, a->scount, sdt, a->rbuf, a->rcount, rdt,
                               a->root, c, s);
    case FY_PCOLL_SCATTERV:
        return fy_coll_scatterv(a->sbuf, a->scounts, a->sdispls, sdt, a->rbuf,
                                a->rcount, rdt, a->root, c, s);
    case FY_PCOLL_ALLGATHER:
        return fy_coll_allgather(a->sbuf, a->scount, sdt, a->rbuf, a->rcount,
                                 rdt, c, s);
    case FY_PCOLL_ALLGATHERV:
        return fy_coll_allgatherv(a->sbuf, a->scount, sdt, a->rbuf, a->rcounts,
                                  a->rdispls, rdt, c, s);
    case FY_PCOLL_ALLTOALL:
        return fy_coll_alltoall(a->sbuf, a->scount, sdt, a->rbuf, a->rcount,
                                rdt, c, s);
    case FY_PCOLL_ALLTOALLV:
        return fy_coll_alltoallv(a->sbuf, a->scounts, a->sdispls, sdt, a->rbuf,
                                 a->rcounts, a->rdispls, rdt, c, s);
    case FY_PCOLL_ALLTOALLW:
        return fy_coll_alltoallw(a->sbuf, a->scounts, a->sdispls, pc->sdts,
                                 a->rbuf, a->rcounts, a->rdispls, pc->rdts, c,
                                 s);
    case FY_PCOLL_REDUCE:
        return fy_coll_reduce(a->sbuf, a->rbuf, a->rcount, rdt, pc->op, a->root,
                              c, s);
    case FY_PCOLL_ALLREDUCE:
        return fy_coll_allreduce(a->sbuf, a->rbuf, a->rcount, rdt, pc->op, c,
                                 s);
    case FY_PCOLL_REDUCE_SCATTER:
        return fy_coll_reduce_scatter(a->sbuf, a->rbuf, a->rcounts, rdt, pc->op,
                                      c, s);
    case FY_PCOLL_REDUCE_SCATTER_BLOCK:
        return fy_coll_reduce_scatter_block(a->sbuf, a->rbuf, a->rcount, rdt,
                                            pc->op, c, s);
    case FY_PCOLL_SCAN:
        return fy_coll_scan(a->sbuf, a->rbuf, a->rcount, rdt, pc->op, c, s);
    case FY_PCOLL_EXSCAN:
        return fy_coll_exscan(a->sbuf, a->rbuf, a->rcount, rdt, pc->op, c, s);
    default:
        return launch_neighbor(pc, s);
    }
}

int fy_pcoll_start(const char *fn, struct fy_preq *p)
{
    struct fy_pcoll *pc = p->coll;
    struct fy_sched *s = NULL;
    int rc = launch(pc, &s);
    if (rc != 0) /* reports it; the schedule saw itself through */
        return fy_mpi_coll_finish(pc->c, rc, NULL, NULL, fn);
    pc->s = s;
    pc->err = 0;
    p->active = true;
    return MPI_SUCCESS;
}

bool fy_pcoll_test(struct fy_pcoll *pc)
{
    if (!pc->s)
        return true;
    int err;
    if (!fy_sched_test(pc->s, &err))
        return false;
    /* Release the schedule at once: the request keeps only the result. */
    fy_sched_free(pc->s);
    pc->s = NULL;
    pc->err = err;
    return true;
}

int fy_pcoll_err(const struct fy_pcoll *pc)
{
    return pc->err;
}
