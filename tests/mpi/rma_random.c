/* SPDX-License-Identifier: MIT */
/* Random one-sided traffic against a model of every window: each round
 * makes a window of W ints per rank (Win_allocate, Win_create,
 * Win_create_dynamic with attached memory, Win_allocate_shared where all
 * ranks share the node) and runs EPOCHS epochs under one synchronisation
 * (fence; lock/unlock per operation, shared or exclusive; lock_all with
 * flushes and request-based Rput/Rget; post/start/complete/wait), the
 * sixteen combinations in turn. In each epoch every rank issues up to
 * four operations (4 T with --threads T) to random targets (itself too): Put,
 * Get, Accumulate (MPI_SUM, MPI_REPLACE), Get_accumulate (MPI_SUM),
 * Fetch_and_op, Compare_and_swap (matching or not), with random derived
 * datatypes on both sides (tests/mpi/dtype_gen.h; contiguous ints half the
 * time), from one int to hundreds of KiB. The plan is a function of the seed,
 * so every rank knows every operation; an operation whose target ints would
 * make the epoch's outcome depend on timing (a write beside any other
 * access; a read beside a write; MPI_SUM accumulates may share ints) is
 * left out. After each epoch every rank compares its window memory with
 * the model, int for int, and every origin its fetched values (Get into
 * its datatype's ints, with the holes and guards untouched; the results
 * of Get_accumulate, Fetch_and_op and Compare_and_swap) with the values
 * before the epoch. --rounds N (default 16), --seed S; --threads T
 * (MPI_THREAD_MULTIPLE): each rank's operations of an epoch are issued by
 * T threads at once, between the synchronisation calls of the main one. */
#include <pthread.h>
#include <stdatomic.h>

#include "dtype_gen.h"

enum { W = 1 << 17, EPOCHS = 3, MAXOPS = 4, ORIGIN_SPAN = 8 << 20 };
enum { MAXT = 8, MAXPLAN = 512 };
enum { OP_PUT, OP_GET, OP_SUM, OP_REPLACE, OP_GACC, OP_FOP, OP_CAS, NOPS };
enum { S_FENCE, S_LOCK, S_LOCKALL, S_PSCW, NSYNC };
enum { F_ALLOCATE, F_CREATE, F_DYNAMIC, F_SHARED, NFLAV };
/* How an operation uses its target ints, for the conflict rules. */
enum { U_NONE, U_READ, U_SUM, U_WRITE };

static const char *const op_name[NOPS] = {"Put",
                                          "Get",
                                          "Accumulate(SUM)",
                                          "Accumulate(REPLACE)",
                                          "Get_accumulate",
                                          "Fetch_and_op",
                                          "Compare_and_swap"};
static const char *const sync_name[NSYNC] = {"fence", "lock", "lock_all",
                                             "pscw"};
static const char *const flav_name[NFLAV] = {"allocate", "create", "dynamic",
                                             "shared"};

static uint64_t s_seed = 1;
static int s_rounds = 16;
static int s_threads = 1;
static atomic_long s_nops, s_ints, s_typed; /* issued by this rank */

struct op {
    int kind, origin, target, excl, flush, request, cas_hit;
    long disp; /* of the target type, in ints from the window's start */
    struct dg_type *ta, *tb; /* origin and target types; NULL: ints */
    long ca, cb, m;          /* counts; ints moved */
    long *tidx;              /* the target ints, in type order */
    long *ooff, olo, ohi;    /* origin ints' byte offsets and span */
    int32_t *before;         /* target ints before the epoch */
    int32_t *val;            /* what the origin sends, in type order */
    struct dg_buf obuf;      /* origin's buffer (the origin only) */
    int32_t *res;            /* Get_accumulate/Fetch_and_op/CAS results */
    int32_t one[2];          /* Fetch_and_op/CAS operand and compare */
    MPI_Request rq;
};

static int32_t *model;     /* [rank * W + i] */
static unsigned char *use; /* this epoch's use of each int, U_* */

static int32_t small(uint64_t x) /* values whose sums never overflow */
{
    return (int32_t)(x % 2001) - 1000;
}

static void free_types(struct op *o)
{
    if (o->ta)
        dg_free(o->ta);
    if (o->tb)
        dg_free(o->tb);
    o->ta = o->tb = NULL;
}

/* Plans one operation of 'origin'; false when it is left out. */
static bool plan_op(struct op *o, int origin, int sync)
{
    memset(o, 0, sizeof(*o));
    o->origin = origin;
    o->target = (int)dg_rnd(0, mt_size - 1);
    o->kind = (int)dg_rnd(0, NOPS - 1);
    o->excl = (int)dg_rnd(0, 1);
    o->flush = (int)dg_rnd(0, 2);
    o->request = sync == S_LOCKALL && (o->kind == OP_PUT || o->kind == OP_GET)
                     ? (int)dg_rnd(0, 1)
                     : 0;
    o->cas_hit = (int)dg_rnd(0, 1);
    int use_of = o->kind == OP_GET   ? U_READ
                 : o->kind == OP_SUM ? U_SUM
                                     : U_WRITE;
    long tlo = 0, thi = 0, *toff = NULL;
    if (o->kind == OP_FOP || o->kind == OP_CAS) {
        o->cb = o->ca = o->m = 1;
        toff = mt_malloc(sizeof(long));
        toff[0] = 0;
        thi = 4;
    } else if (dg_rnd(0, 2) == 0) { /* plain ints: small or large */
        o->m = o->cb = dg_rnd(0, 1) ? dg_rnd(0, 64) : dg_rnd(0, W);
        toff = mt_malloc(sizeof(long) * (size_t)(o->m ? o->m : 1));
        for (long i = 0; i < o->m; i++)
            toff[i] = 4 * i;
        thi = 4 * o->m;
    } else {
        o->tb = dg_gen((int)dg_rnd(1, DG_MAXDEPTH));
        long ext = o->tb->ub - o->tb->lb;
        long lim = ext > 0 ? 4L * W / ext : 1;
        o->cb = dg_rnd(0, 1) ? dg_rnd(1, 3) : dg_rnd(1, lim > 1 ? lim : 1);
        toff = dg_offsets(o->tb, o->cb, &tlo, &thi);
        o->m = o->tb->n * o->cb;
        if (thi - tlo > 4L * W || !dg_disjoint(toff, o->m)) {
            free(toff);
            free_types(o);
            return false;
        }
    }
    /* Where the target type starts: every int inside the window. */
    long dlo = (-tlo + 3) / 4, dhi = (4L * W - thi) / 4;
    if (dhi < dlo) {
        free(toff);
        free_types(o);
        return false;
    }
    o->disp = dg_rnd(dlo, dhi);
    o->tidx = mt_malloc(sizeof(long) * (size_t)(o->m ? o->m : 1));
    for (long i = 0; i < o->m; i++)
        o->tidx[i] = o->disp + toff[i] / 4;
    free(toff);
    /* The origin's layout: its own type half the time, when the ints
     * fit it whole (and, where the origin is written, do not overlap). */
    bool owritten = o->kind == OP_GET;
    if (o->m > 0 && o->kind != OP_FOP && o->kind != OP_CAS && dg_rnd(0, 1)) {
        struct dg_type *a = dg_gen((int)dg_rnd(1, DG_MAXDEPTH));
        if (o->m % a->n == 0) {
            long lo, hi, *off = dg_offsets(a, o->m / a->n, &lo, &hi);
            if (hi - lo <= ORIGIN_SPAN &&
                (!owritten || dg_disjoint(off, o->m))) {
                o->ta = a;
                o->ca = o->m / a->n;
                o->ooff = off;
                o->olo = lo;
                o->ohi = hi;
                a = NULL;
            } else {
                free(off);
            }
        }
        if (a)
            dg_free(a);
    }
    if (!o->ta) {
        o->ca = o->m;
        o->ooff = mt_malloc(sizeof(long) * (size_t)(o->m ? o->m : 1));
        for (long i = 0; i < o->m; i++)
            o->ooff[i] = 4 * i;
        o->olo = 0;
        o->ohi = 4 * o->m;
    }
    /* Left out if its ints meet another operation's in a way whose
     * outcome would depend on timing. */
    unsigned char *u = use + (size_t)o->target * W;
    for (long i = 0; i < o->m; i++) {
        int e = u[o->tidx[i]];
        if (e != U_NONE && !(e == use_of && use_of != U_WRITE)) {
            free(o->tidx);
            free(o->ooff);
            free_types(o);
            return false;
        }
    }
    for (long i = 0; i < o->m; i++)
        u[o->tidx[i]] = (unsigned char)use_of;
    return true;
}

static int32_t oval(uint64_t seed, long i)
{
    return small(seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 2654435761u);
}

/* The origin's buffer: int i of its type written in turn with value i
 * of the operation (where the origin type's ints overlap, the later
 * value is what all of them send). */
static struct dg_buf origin_buffer(const struct op *o, uint64_t vseed)
{
    struct dg_buf b = dg_buf_new(o->olo, o->ohi);
    if (o->kind != OP_GET)
        for (long i = 0; i < o->m; i++) {
            int32_t v = oval(vseed, i);
            memcpy(b.base + o->ooff[i], &v, 4);
        }
    return b;
}

/* The origin's part: its buffer (and the operation issued, in 'win'). */
static void issue(struct op *o, MPI_Win win, const MPI_Aint *dbase, int flav,
                  uint64_t vseed)
{
    MPI_Datatype adt = o->ta ? o->ta->dt : MPI_INT;
    MPI_Datatype bdt = o->tb ? o->tb->dt : MPI_INT;
    MPI_Aint disp =
        flav == F_DYNAMIC ? dbase[o->target] + 4 * o->disp : (MPI_Aint)o->disp;
    o->obuf = origin_buffer(o, vseed);
    o->res = mt_malloc(sizeof(int32_t) * (size_t)(o->m ? o->m : 1));
    int t = o->target;
    switch (o->kind) {
    case OP_PUT:
        if (o->request)
            MT_MPI(MPI_Rput(o->obuf.base, (int)o->ca, adt, t, disp, (int)o->cb,
                            bdt, win, &o->rq));
        else
            MT_MPI(MPI_Put(o->obuf.base, (int)o->ca, adt, t, disp, (int)o->cb,
                           bdt, win));
        break;
    case OP_GET:
        if (o->request)
            MT_MPI(MPI_Rget(o->obuf.base, (int)o->ca, adt, t, disp, (int)o->cb,
                            bdt, win, &o->rq));
        else
            MT_MPI(MPI_Get(o->obuf.base, (int)o->ca, adt, t, disp, (int)o->cb,
                           bdt, win));
        break;
    case OP_SUM:
    case OP_REPLACE:
        MT_MPI(MPI_Accumulate(o->obuf.base, (int)o->ca, adt, t, disp,
                              (int)o->cb, bdt,
                              o->kind == OP_SUM ? MPI_SUM : MPI_REPLACE, win));
        break;
    case OP_GACC:
        MT_MPI(MPI_Get_accumulate(o->obuf.base, (int)o->ca, adt, o->res,
                                  (int)o->m, MPI_INT, t, disp, (int)o->cb, bdt,
                                  MPI_SUM, win));
        break;
    case OP_FOP:
        o->one[0] = oval(vseed, 0);
        MT_MPI(MPI_Fetch_and_op(&o->one[0], o->res, MPI_INT, t, disp, MPI_SUM,
                                win));
        break;
    default: /* OP_CAS: compare with the value before, or one that is not */
        o->one[0] = oval(vseed, 0);
        o->one[1] = o->before[0] + (o->cas_hit ? 0 : 1);
        MT_MPI(MPI_Compare_and_swap(&o->one[0], &o->one[1], o->res, MPI_INT, t,
                                    disp, win));
        break;
    }
}

/* One thread's share of this rank's operations in an epoch: with
 * --threads T, thread k issues those of index k mod T (under per-operation
 * locks, those to targets k mod T: a process holds one lock per target,
 * so one thread locks a target at a time). */
struct issuer {
    struct op *ops;
    const int *mine;
    int nmine, k, sync, flav;
    MPI_Win win;
    const MPI_Aint *dbase;
    uint64_t vbase;
};

static void *issuer_main(void *arg)
{
    struct issuer *c = arg;
    for (int j = 0; j < c->nmine; j++) {
        struct op *o = &c->ops[c->mine[j]];
        if ((c->sync == S_LOCK ? o->target : j) % s_threads != c->k)
            continue;
        if (c->sync == S_LOCK)
            MT_MPI(MPI_Win_lock(o->excl ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED,
                                o->target, 0, c->win));
        issue(o, c->win, c->dbase, c->flav, c->vbase + (uint64_t)c->mine[j]);
        atomic_fetch_add(&s_nops, 1);
        atomic_fetch_add(&s_ints, o->m);
        atomic_fetch_add(&s_typed, o->ta || o->tb);
        if (c->sync == S_LOCK)
            MT_MPI(MPI_Win_unlock(o->target, c->win));
        else if (c->sync == S_LOCKALL) {
            if (o->request)
                MT_MPI(MPI_Wait(&o->rq, MPI_STATUS_IGNORE));
            if (o->flush == 1)
                MT_MPI(MPI_Win_flush(o->target, c->win));
            else if (o->flush == 2)
                MT_MPI(MPI_Win_flush_local(o->target, c->win));
        }
    }
    return NULL;
}

/* The model after the epoch's operations (in any order: what they touch
 * is disjoint but for MPI_SUM, which commutes). */
static void apply(const struct op *o)
{
    int32_t *tm = model + (size_t)o->target * W;
    for (long i = 0; i < o->m; i++) {
        int32_t *x = &tm[o->tidx[i]], v = o->val[i];
        switch (o->kind) {
        case OP_PUT:
        case OP_REPLACE:
            *x = v;
            break;
        case OP_SUM:
        case OP_GACC:
        case OP_FOP:
            *x += v;
            break;
        case OP_CAS:
            if (o->cas_hit)
                *x = v;
            break;
        default:
            break;
        }
    }
}

/* The origin's results: fetched values are the target's before. */
static void check_origin(const struct op *o, int round, int epoch)
{
    char what[160];
    snprintf(what, sizeof what,
             "round %d epoch %d: %s of %ld ints from rank %d at %ld%s%s", round,
             epoch, op_name[o->kind], o->m, o->target, o->disp,
             o->ta ? ", origin typed" : "", o->tb ? ", target typed" : "");
    if (o->kind == OP_GET) {
        for (long i = 0; i < o->m; i++) {
            int32_t v;
            memcpy(&v, o->obuf.base + o->ooff[i], 4);
            if (v != o->before[i])
                MT_FAIL("%s: int %ld (target int %ld) is %d, expected %d", what,
                        i, o->tidx[i], v, o->before[i]);
            memset(o->obuf.base + o->ooff[i], 0xEE, 4);
        }
        MT_ALL(o->obuf.mem, o->obuf.len, 0xEE, what);
    } else if (o->kind == OP_GACC || o->kind == OP_FOP || o->kind == OP_CAS) {
        for (long i = 0; i < o->m; i++)
            if (o->res[i] != o->before[i])
                MT_FAIL("%s: result %ld is %d, expected %d", what, i, o->res[i],
                        o->before[i]);
    }
}

static MPI_Group group_of(const int *ranks, int n)
{
    MPI_Group world, g;
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MT_MPI(MPI_Group_incl(world, n, ranks, &g));
    MT_MPI(MPI_Group_free(&world));
    return g;
}

static void one_round(int round, bool node_shared)
{
    int flav = round % NFLAV, sync = (round / NFLAV) % NSYNC;
    if (flav == F_SHARED && !node_shared)
        flav = F_ALLOCATE;
    int32_t *mem = NULL;
    MPI_Win win;
    MPI_Aint *dbase = mt_malloc(sizeof(MPI_Aint) * (size_t)mt_size);
    size_t bytes = (size_t)W * 4;
    if (flav == F_ALLOCATE)
        MT_MPI(MPI_Win_allocate((MPI_Aint)bytes, 4, MPI_INFO_NULL,
                                MPI_COMM_WORLD, &mem, &win));
    else if (flav == F_SHARED)
        MT_MPI(MPI_Win_allocate_shared((MPI_Aint)bytes, 4, MPI_INFO_NULL,
                                       MPI_COMM_WORLD, &mem, &win));
    else {
        mem = mt_malloc(bytes);
        if (flav == F_CREATE)
            MT_MPI(MPI_Win_create(mem, (MPI_Aint)bytes, 4, MPI_INFO_NULL,
                                  MPI_COMM_WORLD, &win));
        else {
            MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            MT_MPI(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
            MPI_Aint a;
            MT_MPI(MPI_Get_address(mem, &a));
            MT_MPI(MPI_Allgather(&a, 1, MPI_AINT, dbase, 1, MPI_AINT,
                                 MPI_COMM_WORLD));
        }
    }
    /* Every rank's memory as the model says (the model is every rank's). */
    for (long i = 0; i < (long)mt_size * W; i++)
        model[i] = small((uint64_t)(round * 7919 + i));
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
    memcpy(mem, model + (size_t)mt_rank * W, bytes);
    MT_MPI(MPI_Win_unlock(mt_rank, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        /* The plan, the same on every rank. */
        dg_rng = s_seed * 0x100000001b3ull ^ (uint64_t)(round * 64 + epoch);
        memset(use, 0, (size_t)mt_size * W);
        uint64_t vbase = s_seed ^ (uint64_t)(round * 1000 + epoch * 64);
        static struct op ops[MAXPLAN];
        int nops = 0, mine[MAXPLAN], nmine = 0;
        for (int r = 0; r < mt_size; r++)
            for (int k = (int)dg_rnd(0, MAXOPS * s_threads);
                 k > 0 && nops < MAXPLAN; k--)
                if (plan_op(&ops[nops], r, sync))
                    nops++;
        for (int j = 0; j < nops; j++) {
            struct op *o = &ops[j];
            o->before = mt_malloc(sizeof(int32_t) * (size_t)(o->m ? o->m : 1));
            for (long i = 0; i < o->m; i++)
                o->before[i] = model[(size_t)o->target * W + o->tidx[i]];
            /* What it sends, as every rank works it out. */
            struct dg_buf b = origin_buffer(o, vbase + (uint64_t)j);
            o->val = mt_malloc(sizeof(int32_t) * (size_t)(o->m ? o->m : 1));
            for (long i = 0; i < o->m; i++)
                memcpy(&o->val[i], b.base + o->ooff[i], 4);
            free(b.mem);
            if (o->origin == mt_rank)
                mine[nmine++] = j;
        }
        /* Who this rank reaches, who reaches it (post/start/complete/wait). */
        int *to = mt_malloc(sizeof(int) * (size_t)mt_size), nto = 0;
        int *from = mt_malloc(sizeof(int) * (size_t)mt_size), nfrom = 0;
        for (int r = 0; r < mt_size; r++) {
            bool t = false, f = false;
            for (int j = 0; j < nops; j++) {
                t |= ops[j].origin == mt_rank && ops[j].target == r;
                f |= ops[j].origin == r && ops[j].target == mt_rank;
            }
            if (t)
                to[nto++] = r;
            if (f)
                from[nfrom++] = r;
        }
        MPI_Group gto = group_of(to, nto), gfrom = group_of(from, nfrom);

        if (sync == S_FENCE)
            MT_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        else if (sync == S_LOCKALL)
            MT_MPI(MPI_Win_lock_all(0, win));
        else if (sync == S_PSCW) {
            MT_MPI(MPI_Win_post(gfrom, 0, win));
            MT_MPI(MPI_Win_start(gto, 0, win));
        }
        struct issuer is[MAXT];
        pthread_t th[MAXT];
        for (int k = 0; k < s_threads; k++) {
            is[k] = (struct issuer){.ops = ops,
                                    .mine = mine,
                                    .nmine = nmine,
                                    .k = k,
                                    .sync = sync,
                                    .flav = flav,
                                    .win = win,
                                    .dbase = dbase,
                                    .vbase = vbase};
            if (k > 0)
                MT_CHECK(pthread_create(&th[k], NULL, issuer_main, &is[k]) == 0,
                         "pthread_create");
        }
        issuer_main(&is[0]);
        for (int k = 1; k < s_threads; k++)
            pthread_join(th[k], NULL);
        if (sync == S_FENCE)
            MT_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        else if (sync == S_LOCKALL)
            MT_MPI(MPI_Win_unlock_all(win));
        else if (sync == S_PSCW) {
            MT_MPI(MPI_Win_complete(win));
            MT_MPI(MPI_Win_wait(win));
        }
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

        /* Results: the model moves on; memory and fetched values match. */
        for (int j = 0; j < nops; j++)
            apply(&ops[j]);
        for (int k = 0; k < nmine; k++)
            check_origin(&ops[mine[k]], round, epoch);
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
        const int32_t *want = model + (size_t)mt_rank * W;
        for (long i = 0; i < W; i++)
            if (mem[i] != want[i])
                MT_FAIL("round %d epoch %d (%s window, %s): int %ld of the "
                        "window is %d, expected %d",
                        round, epoch, flav_name[flav], sync_name[sync], i,
                        mem[i], want[i]);
        MT_MPI(MPI_Win_unlock(mt_rank, win));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int j = 0; j < nops; j++) {
            struct op *o = &ops[j];
            free(o->tidx);
            free(o->ooff);
            free(o->before);
            free(o->val);
            free(o->obuf.mem);
            free(o->res);
            free_types(o);
        }
        MT_MPI(MPI_Group_free(&gto));
        MT_MPI(MPI_Group_free(&gfrom));
        free(to);
        free(from);
    }
    if (flav == F_DYNAMIC)
        MT_MPI(MPI_Win_detach(win, mem));
    MT_MPI(MPI_Win_free(&win));
    if (flav == F_CREATE || flav == F_DYNAMIC)
        free(mem);
    free(dbase);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (dg_common_opt(argc, argv, &i, &s_rounds, &s_seed))
            continue;
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            s_threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: rma_random [--rounds N] [--seed S] "
                            "[--threads 1-8]\n");
            return 2;
        }
    }
    if (s_threads < 1 || s_threads > MAXT) {
        fprintf(stderr, "rma_random: --threads takes 1 to %d\n", MAXT);
        return 2;
    }
    int provided = -1;
    MT_MPI(MPI_Init_thread(
        &argc, &argv, s_threads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
        &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    if (s_threads > 1)
        MT_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");
    /* Win_allocate_shared where every rank shares the node. */
    int all = mt_node_size() == mt_size;
    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND,
                         MPI_COMM_WORLD));
    bool node_shared = all;
    model = mt_malloc(sizeof(int32_t) * (size_t)mt_size * W);
    use = mt_malloc((size_t)mt_size * W);
    for (int r = 0; r < s_rounds; r++)
        one_round(r, node_shared);
    free(model);
    free(use);
    long mine[3] = {atomic_load(&s_nops), atomic_load(&s_ints),
                    atomic_load(&s_typed)},
         tot[3];
    MT_MPI(MPI_Reduce(mine, tot, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("# %d rounds, %d thread(s) per rank: %ld operations (%ld with "
               "a derived datatype), %ld ints\n",
               s_rounds, s_threads, tot[0], tot[2], tot[1]);
    return mt_finish("rma_random");
}
