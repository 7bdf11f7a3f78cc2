/* SPDX-License-Identifier: MIT */
/* Random collectives against an oracle of the test's own: each round
 * draws, from a seed every rank shares, a communicator (MPI_COMM_WORLD,
 * a split with random colours and keys, or a random subset through
 * MPI_Comm_create_group), a collective (Bcast, Gather, Scatter,
 * Allgather, Alltoall, Reduce, Allreduce, Reduce_scatter_block, Scan,
 * Exscan), how it is called (blocking, nonblocking + MPI_Wait, or
 * persistent: *_init, started and completed twice), a block of 0 ints to
 * a few hundred KiB, a random root, MPI_IN_PLACE sometimes, a reduction
 * op (MPI_SUM, MPI_MAX, MPI_MIN, MPI_BXOR) and, for every rank its own
 * send and receive layouts: contiguous ints or random derived datatypes
 * (tests/mpi/dtype_gen.h; a reduction's one datatype is the same on every
 * rank). Every int received is checked against the value its sender's
 * block holds there (a function of round, sender, receiver and index),
 * every reduction against the ops applied here in rank order, and every
 * hole of a receive layout and the guards around it must stay untouched.
 * --rounds N (default 120), --seed S; --derived-reductions: reductions
 * through derived datatypes too, each member's own (Ferry applies the
 * predefined ops to derived datatypes of one basic type; MPI and MPICH
 * do not). */
#include "dtype_gen.h"

enum {
    K_BCAST,
    K_GATHER,
    K_SCATTER,
    K_ALLGATHER,
    K_ALLTOALL,
    K_REDUCE,
    K_ALLREDUCE,
    K_RSB,
    K_SCAN,
    K_EXSCAN,
    NKINDS
};
enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT, NMODES };
static const char *const kind_name[NKINDS] = {
    "Bcast",    "Gather", "Scatter",   "Allgather",
    "Alltoall", "Reduce", "Allreduce", "Reduce_scatter_block",
    "Scan",     "Exscan"};
static const char *const mode_name[NMODES] = {"blocking", "nonblocking",
                                              "persistent"};
enum { TOTAL_INTS = 1 << 20 }; /* the most any rank sends or receives */

static uint64_t s_seed = 1;
static int s_rounds = 120;
static bool s_derived_red;

/* A layout: 'count' of 'type' (NULL: plain ints), holding 'blocks' blocks
 * of m ints; its ints' byte offsets and span. */
struct layout {
    struct dg_type *type;
    long count, n; /* count per block; ints in all */
    long *off, lo, hi;
};

static int32_t val(uint32_t round, int src, int dst, long i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ round * 40503u ^
                 (uint32_t)src * 0x9e3779b9u ^
                 (uint32_t)(dst + 1) * 0x85ebca6bu;
    return (int32_t)(x % 2001) - 1000; /* sums over 16 ranks stay small */
}

/* A layout for 'blocks' blocks of m ints: its own random type half the
 * time, when m ints fill whole instances and no two ints overlap;
 * otherwise plain ints. 'force' (a reduction's shared type) is used
 * as it is. */
static struct layout lay(long m, long blocks, struct dg_type *force, bool plain)
{
    struct layout L = {.type = NULL, .count = m, .n = m * blocks};
    struct dg_type *t = force;
    if (!t && m > 0 && dg_rnd(0, 1) && !plain)
        t = dg_gen((int)dg_rnd(1, DG_MAXDEPTH));
    if (t && m % t->n == 0) {
        long lo, hi, *off = dg_offsets(t, m / t->n * blocks, &lo, &hi);
        if (hi - lo <= 64L << 20 && dg_disjoint(off, m * blocks)) {
            L.type = t;
            L.count = m / t->n;
            L.off = off;
            L.lo = lo;
            L.hi = hi;
            return L;
        }
        free(off);
    }
    if (t && t != force)
        dg_free(t);
    L.off = mt_malloc(sizeof(long) * (size_t)(L.n ? L.n : 1));
    for (long i = 0; i < L.n; i++)
        L.off[i] = 4 * i;
    L.lo = 0;
    L.hi = 4 * L.n;
    return L;
}

static MPI_Datatype dt_of(const struct layout *L)
{
    return L->type ? L->type->dt : MPI_INT;
}

static void lay_free(struct layout *L, const struct dg_type *shared)
{
    if (L->type && L->type != shared)
        dg_free(L->type);
    free(L->off);
}

static struct dg_buf buf_of(const struct layout *L)
{
    return dg_buf_new(L->lo, L->hi);
}

static void put_int(struct dg_buf *b, const struct layout *L, long i, int32_t v)
{
    memcpy(b->base + L->off[i], &v, 4);
}

/* Ints [first, first + n) of L in b hold want(ix) for ix = 0..n-1 (and
 * are reset to 0xEE, so that a final sweep finds every other byte
 * untouched). */
#define CHECK_INTS(b, L, first, n, want, what, ...)                            \
    do {                                                                       \
        for (long ix = 0; ix < (n); ix++) {                                    \
            int32_t g_, w_ = (want);                                           \
            long i_ = (first) + ix;                                            \
            memcpy(&g_, (b)->base + (L)->off[i_], 4);                          \
            if (g_ != w_)                                                      \
                MT_FAIL("%s: int %ld of block: %d, expected %d (" what ")",    \
                        ctx, ix, g_, w_, __VA_ARGS__);                         \
            memset((b)->base + (L)->off[i_], 0xEE, 4);                         \
        }                                                                      \
    } while (0)

static int32_t op_apply(MPI_Op op, int32_t a, int32_t b)
{
    if (op == MPI_SUM)
        return a + b;
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    return a ^ b; /* MPI_BXOR */
}

/* The reduction over comm ranks [0, upto) of their contributions' int i
 * (block 'blk' of m ints). */
static int32_t reduced(uint32_t round, const int *world, int upto, MPI_Op op,
                       long m, int blk, long i)
{
    int32_t acc = val(round, world[0], 0, (long)blk * m + i);
    for (int r = 1; r < upto; r++)
        acc = op_apply(op, acc, val(round, world[r], 0, (long)blk * m + i));
    return acc;
}

/* Starts and completes a persistent request twice, or waits for a
 * nonblocking one. */
static void finish(MPI_Request *rq, int mode)
{
    if (mode == M_PERSISTENT) {
        MT_MPI(MPI_Start(rq));
        MT_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Start(rq));
        MT_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Request_free(rq));
    } else if (mode == M_NONBLOCKING) {
        MT_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
    }
}

static void one_round(uint32_t round)
{
    dg_rng = s_seed * 0x100000001b3ull ^ round;
    int P = mt_size;
    /* The communicator: every rank draws every rank's colour and key. */
    int how = (int)dg_rnd(0, 2);
    int *color = mt_malloc(sizeof(int) * (size_t)P);
    int *key = mt_malloc(sizeof(int) * (size_t)P);
    for (int w = 0; w < P; w++) {
        color[w] = how == 0 ? 0 : (int)dg_rnd(0, how == 1 ? 1 : 2);
        key[w] = (int)dg_rnd(0, 3) * (how != 0); /* a dup keeps the order */
    }
    if (how == 2) /* a subset: colour 0 is in, never empty */
        color[dg_rnd(0, P - 1)] = 0;
    /* Members of our colour in (key, world rank) order: comm rank -> world. */
    int *world = mt_malloc(sizeof(int) * (size_t)P), n = 0, me = -1;
    for (int k = 0; k < 4; k++)
        for (int w = 0; w < P; w++)
            if (color[w] == color[mt_rank] && key[w] == k) {
                if (w == mt_rank)
                    me = n;
                world[n++] = w;
            }
    bool member = how != 2 || color[mt_rank] == 0;
    MPI_Comm comm = MPI_COMM_NULL;
    if (how == 0) {
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    } else if (how == 1) {
        MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, color[mt_rank], key[mt_rank],
                              &comm));
    } else if (member) {
        MPI_Group wg, g;
        MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MT_MPI(MPI_Group_incl(wg, n, world, &g));
        MT_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, g, (int)round, &comm));
        MT_MPI(MPI_Group_free(&g));
        MT_MPI(MPI_Group_free(&wg));
    }
    /* The collective; the same draws on every rank (the members' group
     * size comes from the plan, not from the communicator). */
    int kind = (int)dg_rnd(0, NKINDS - 1), mode = (int)dg_rnd(0, NMODES - 1);
    int root = (int)dg_rnd(0, 1 << 20) % n;
    bool inplace = dg_rnd(0, 3) == 0;
    /* A persistent collective runs twice on the same buffers: in place,
     * a reduction or all-to-all would take its first result as input. */
    MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_BXOR};
    MPI_Op op = ops[dg_rnd(0, 3)];
    bool multi = kind == K_GATHER || kind == K_SCATTER || kind == K_ALLGATHER ||
                 kind == K_ALLTOALL || kind == K_RSB;
    long mmax = TOTAL_INTS / (multi ? n : 1);
    long m = dg_rnd(0, 3) ? dg_rnd(0, 64) : dg_rnd(0, mmax);
    bool reduction = kind >= K_REDUCE;
    /* Reductions over plain ints: MPI defines the predefined ops on
     * predefined datatypes only (MPICH refuses derived ones). With
     * --derived-reductions (Ferry allows them) each member reduces
     * through a random type of its own, the same for its send and
     * receive buffers (one datatype argument), others through plain
     * ints: the same signature, laid out differently. */
    struct dg_type *rtype = NULL; /* ours */
    /* Every member's send and receive layouts, drawn in comm rank order
     * (ours kept): send holds the blocks it sends, receive those it gets. */
    struct layout S = {0}, R = {0};
    for (int r = 0; r < n; r++) {
        long sb, rb;
        switch (kind) {
        case K_BCAST:
            sb = rb = 1;
            break;
        case K_GATHER:
            sb = 1;
            rb = r == root ? n : 0;
            break;
        case K_SCATTER:
            sb = r == root ? n : 0;
            rb = 1;
            break;
        case K_ALLGATHER:
            sb = 1;
            rb = n;
            break;
        case K_ALLTOALL:
            sb = rb = n;
            break;
        case K_RSB:
            sb = n;
            rb = 1;
            break;
        default: /* reduce, allreduce, scan, exscan */
            sb = rb = 1;
            break;
        }
        struct dg_type *rt = NULL;
        if (reduction && s_derived_red && m > 0 && dg_rnd(0, 1)) {
            rt = dg_gen((int)dg_rnd(1, DG_MAXDEPTH));
            long most = sb > rb ? sb : rb, lo, hi;
            bool ok = m % rt->n == 0;
            if (ok) { /* it must lay out both buffers */
                long *off = dg_offsets(rt, m / rt->n * most, &lo, &hi);
                ok = hi - lo <= 64L << 20 && dg_disjoint(off, m * most);
                free(off);
            }
            if (!ok) {
                dg_free(rt);
                rt = NULL;
            }
        }
        struct layout s = lay(m, sb, rt, reduction),
                      q = lay(m, rb, rt, reduction);
        if (r == me && member) {
            S = s;
            R = q;
            rtype = rt;
        } else {
            lay_free(&s, rt);
            lay_free(&q, rt);
            if (rt)
                dg_free(rt);
        }
    }
    free(color);
    free(key);
    if (!member) {
        if (rtype)
            dg_free(rtype);
        free(world);
        return;
    }
    int crank = -1, csize = -1;
    MT_MPI(MPI_Comm_rank(comm, &crank));
    MT_MPI(MPI_Comm_size(comm, &csize));
    MT_EQ(crank, me, "rank in the round's communicator");
    MT_EQ(csize, n, "size of the round's communicator");
    char ctx[200];
    snprintf(ctx, sizeof ctx,
             "round %u: %s %s of %ld ints on %d ranks (root %d%s%s%s%s)", round,
             mode_name[mode], kind_name[kind], m, n, root,
             inplace ? ", in place" : "", S.type ? ", send typed" : "",
             R.type ? ", receive typed" : "", rtype ? ", reduction typed" : "");

    /* Buffers: what we send, in our send layout; receive all 0xEE. */
    struct dg_buf sb = buf_of(&S), rb = buf_of(&R);
    for (long i = 0; i < S.n; i++) {
        long blk = m ? i / m : 0, j = m ? i % m : 0;
        int dst = kind == K_SCATTER || kind == K_ALLTOALL ? (int)blk : -1;
        long at = kind == K_RSB ? i : j;
        put_int(&sb, &S, i, val(round, mt_rank, reduction ? 0 : dst, at));
    }
    /* In place: the input where the receive buffer holds it. */
    bool ip = inplace &&
              !(mode == M_PERSISTENT && (reduction || kind == K_ALLTOALL)) &&
              (kind == K_ALLREDUCE || kind == K_SCAN || kind == K_ALLGATHER ||
               kind == K_ALLTOALL ||
               ((kind == K_REDUCE || kind == K_GATHER) && me == root));
    if (ip) {
        for (long j = 0; j < m; j++) {
            if (kind == K_ALLGATHER || kind == K_GATHER)
                put_int(&rb, &R, (long)me * m + j, val(round, mt_rank, -1, j));
            else if (kind != K_ALLTOALL)
                put_int(&rb, &R, j, val(round, mt_rank, 0, j));
        }
        if (kind == K_ALLTOALL)
            for (long i = 0; i < R.n; i++)
                put_int(&rb, &R, i, val(round, mt_rank, (int)(i / m), i % m));
    }
    const void *sp = ip ? MPI_IN_PLACE : sb.base;
    MPI_Datatype sdt = dt_of(&S), rdt = dt_of(&R);
    int sc = (int)S.count, rc = (int)R.count;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Request *q = mode == M_BLOCKING ? NULL : &rq;
    bool pers = mode == M_PERSISTENT;
    switch (kind) {
    case K_BCAST: {
        /* The root sends from its send layout; the others receive in
         * theirs. */
        struct dg_buf *b = me == root ? &sb : &rb;
        MPI_Datatype d = me == root ? sdt : rdt;
        int c = me == root ? sc : rc;
        if (!q)
            MT_MPI(MPI_Bcast(b->base, c, d, root, comm));
        else if (pers)
            MT_MPI(MPI_Bcast_init(b->base, c, d, root, comm, MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ibcast(b->base, c, d, root, comm, q));
        break;
    }
    case K_GATHER:
        if (!q)
            MT_MPI(MPI_Gather(sp, sc, sdt, rb.base, rc, rdt, root, comm));
        else if (pers)
            MT_MPI(MPI_Gather_init(sp, sc, sdt, rb.base, rc, rdt, root, comm,
                                   MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Igather(sp, sc, sdt, rb.base, rc, rdt, root, comm, q));
        break;
    case K_SCATTER:
        if (!q)
            MT_MPI(MPI_Scatter(sb.base, sc, sdt, rb.base, rc, rdt, root, comm));
        else if (pers)
            MT_MPI(MPI_Scatter_init(sb.base, sc, sdt, rb.base, rc, rdt, root,
                                    comm, MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Iscatter(sb.base, sc, sdt, rb.base, rc, rdt, root, comm,
                                q));
        break;
    case K_ALLGATHER:
        if (!q)
            MT_MPI(MPI_Allgather(sp, sc, sdt, rb.base, rc, rdt, comm));
        else if (pers)
            MT_MPI(MPI_Allgather_init(sp, sc, sdt, rb.base, rc, rdt, comm,
                                      MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Iallgather(sp, sc, sdt, rb.base, rc, rdt, comm, q));
        break;
    case K_ALLTOALL:
        if (!q)
            MT_MPI(MPI_Alltoall(sp, sc, sdt, rb.base, rc, rdt, comm));
        else if (pers)
            MT_MPI(MPI_Alltoall_init(sp, sc, sdt, rb.base, rc, rdt, comm,
                                     MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ialltoall(sp, sc, sdt, rb.base, rc, rdt, comm, q));
        break;
    case K_REDUCE:
        if (!q)
            MT_MPI(MPI_Reduce(sp, rb.base, sc, sdt, op, root, comm));
        else if (pers)
            MT_MPI(MPI_Reduce_init(sp, rb.base, sc, sdt, op, root, comm,
                                   MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ireduce(sp, rb.base, sc, sdt, op, root, comm, q));
        break;
    case K_ALLREDUCE:
        if (!q)
            MT_MPI(MPI_Allreduce(sp, rb.base, sc, sdt, op, comm));
        else if (pers)
            MT_MPI(MPI_Allreduce_init(sp, rb.base, sc, sdt, op, comm,
                                      MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Iallreduce(sp, rb.base, sc, sdt, op, comm, q));
        break;
    case K_RSB:
        if (!q)
            MT_MPI(
                MPI_Reduce_scatter_block(sb.base, rb.base, rc, rdt, op, comm));
        else if (pers)
            MT_MPI(MPI_Reduce_scatter_block_init(sb.base, rb.base, rc, rdt, op,
                                                 comm, MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Ireduce_scatter_block(sb.base, rb.base, rc, rdt, op,
                                             comm, q));
        break;
    case K_SCAN:
        if (!q)
            MT_MPI(MPI_Scan(sp, rb.base, sc, sdt, op, comm));
        else if (pers)
            MT_MPI(MPI_Scan_init(sp, rb.base, sc, sdt, op, comm, MPI_INFO_NULL,
                                 q));
        else
            MT_MPI(MPI_Iscan(sp, rb.base, sc, sdt, op, comm, q));
        break;
    default: /* K_EXSCAN */
        if (!q)
            MT_MPI(MPI_Exscan(sb.base, rb.base, sc, sdt, op, comm));
        else if (pers)
            MT_MPI(MPI_Exscan_init(sb.base, rb.base, sc, sdt, op, comm,
                                   MPI_INFO_NULL, q));
        else
            MT_MPI(MPI_Iexscan(sb.base, rb.base, sc, sdt, op, comm, q));
        break;
    }
    if (q)
        finish(q, mode); /* a persistent one runs twice on the same data */

    /* The oracle. */
    switch (kind) {
    case K_BCAST:
        if (me != root)
            CHECK_INTS(&rb, &R, 0, m, val(round, world[root], -1, ix),
                       "from root %d", root);
        break;
    case K_GATHER:
        if (me == root)
            for (int r = 0; r < n; r++)
                CHECK_INTS(&rb, &R, (long)r * m, m,
                           val(round, world[r], -1, ix), "block of rank %d", r);
        break;
    case K_SCATTER:
        CHECK_INTS(&rb, &R, 0, m, val(round, world[root], me, ix), "root %d",
                   root);
        break;
    case K_ALLGATHER:
        for (int r = 0; r < n; r++)
            CHECK_INTS(&rb, &R, (long)r * m, m, val(round, world[r], -1, ix),
                       "block of rank %d", r);
        break;
    case K_ALLTOALL:
        for (int r = 0; r < n; r++)
            CHECK_INTS(&rb, &R, (long)r * m, m, val(round, world[r], me, ix),
                       "block from rank %d", r);
        break;
    case K_REDUCE:
        if (me == root)
            CHECK_INTS(&rb, &R, 0, m, reduced(round, world, n, op, m, 0, ix),
                       "op %d", 0);
        break;
    case K_ALLREDUCE:
        CHECK_INTS(&rb, &R, 0, m, reduced(round, world, n, op, m, 0, ix),
                   "op %d", 0);
        break;
    case K_RSB:
        CHECK_INTS(&rb, &R, 0, m, reduced(round, world, n, op, m, me, ix),
                   "block %d", me);
        break;
    case K_SCAN:
        CHECK_INTS(&rb, &R, 0, m, reduced(round, world, me + 1, op, m, 0, ix),
                   "prefix of %d", me + 1);
        break;
    default: /* K_EXSCAN: rank 0's buffer is undefined */
        if (me > 0)
            CHECK_INTS(&rb, &R, 0, m, reduced(round, world, me, op, m, 0, ix),
                       "prefix of %d", me);
        else
            memset(rb.mem, 0xEE, rb.len);
        break;
    }
    if (!(kind == K_GATHER && me != root) && !(kind == K_REDUCE && me != root))
        MT_ALL(rb.mem, rb.len, 0xEE, ctx);
    free(sb.mem);
    free(rb.mem);
    lay_free(&S, rtype);
    lay_free(&R, rtype);
    if (rtype)
        dg_free(rtype);
    free(world);
    MT_MPI(MPI_Comm_free(&comm));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (dg_common_opt(argc, argv, &i, &s_rounds, &s_seed))
            continue;
        if (!strcmp(argv[i], "--derived-reductions"))
            s_derived_red = true;
        else
            MT_FAIL("usage: coll_random [--rounds N] [--seed S] "
                    "[--derived-reductions]");
    }
    for (int r = 0; r < s_rounds; r++)
        one_round((uint32_t)r);
    return mt_finish("coll_random");
}
