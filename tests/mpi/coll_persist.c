/* SPDX-License-Identifier: MIT */
/* The MPI-4 persistent collectives (MPI_Bcast_init and the rest, including
 * the neighbourhood ones on a cartesian topology): each is initialised
 * once and started several times with new buffer contents, every result
 * checked element by element; MPI_Startall of several different ones;
 * MPI_Test driving one; freeing inactive requests; a datatype and a
 * communicator freed while a request uses them; MPI_Start on an active
 * request is MPI_ERR_REQUEST; requests started in a different order on
 * every rank, with blocking and nonblocking collectives of the same
 * communicator between start and wait (MPI 4.0 6.13: the _init calls
 * match, the starts may come in any order). */
#include "mpitest.h"

enum { B = 37, ITERS = 4 };

/* Element i sent by 'rank' in iteration 'it' (towards peer 'to'). */
static long v(int it, int rank, int to, int i)
{
    return (long)it * 100000007L + (long)rank * 1000003L + (long)to * 1009L +
           (long)i * 7L + 1;
}

static long *lalloc(size_t n)
{
    long *p = mt_malloc(n * sizeof(long));
    for (size_t i = 0; i < n; i++)
        p[i] = -1;
    return p;
}

static void lset(long *p, size_t n, long x)
{
    for (size_t i = 0; i < n; i++)
        p[i] = x;
}

#define EXPECT(got, want, ...)                                                 \
    do {                                                                       \
        long g_ = (got), w_ = (want);                                          \
        if (g_ != w_) {                                                        \
            fprintf(stderr, "rank %d: got %ld, expected %ld\n", mt_rank, g_,   \
                    w_);                                                       \
            MT_FAIL(__VA_ARGS__);                                              \
        }                                                                      \
    } while (0)

static void run(MPI_Request *rq)
{
    MT_MPI(MPI_Start(rq));
    MT_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
    MT_CHECK(*rq != MPI_REQUEST_NULL, "a persistent request survives Wait");
}

static void test_rooted(void)
{
    int n = mt_size, me = mt_rank;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    long *sb = lalloc((size_t)n * B * 2), *rb = lalloc((size_t)n * B * 2);
    int *cnt = mt_malloc((size_t)n * sizeof(int));
    int *dsp = mt_malloc((size_t)n * sizeof(int));
    int tot = 0;
    for (int r = 0; r < n; r++) {
        tot += r; /* a gap of r elements before each block */
        cnt[r] = r + 1;
        dsp[r] = tot;
        tot += cnt[r];
    }
    MPI_Request bar, bc, ga, gv, sc, sv;
    int root = n - 1, vroot = 1 % n;
    MT_MPI(MPI_Barrier_init(w, ni, &bar));
    MT_MPI(MPI_Bcast_init(rb, B, MPI_LONG, root, w, ni, &bc));
    MT_MPI(MPI_Gather_init(sb, B, MPI_LONG, rb, B, MPI_LONG, 0, w, ni, &ga));
    MT_MPI(MPI_Gatherv_init(sb, me + 1, MPI_LONG, rb, cnt, dsp, MPI_LONG, vroot,
                            w, ni, &gv));
    MT_MPI(MPI_Scatter_init(sb, B, MPI_LONG, rb, B, MPI_LONG, 0, w, ni, &sc));
    MT_MPI(MPI_Scatterv_init(sb, cnt, dsp, MPI_LONG, rb, me + 1, MPI_LONG,
                             vroot, w, ni, &sv));
    /* The arrays were copied: scribbling on them must not matter. */
    int *keep_cnt = mt_malloc((size_t)n * sizeof(int));
    memcpy(keep_cnt, cnt, (size_t)n * sizeof(int));
    lset((long *)cnt, (size_t)n / 2, -7);
    lset((long *)dsp, (size_t)n / 2, -7);
    for (int it = 0; it < ITERS; it++) {
        run(&bar);

        lset(rb, B, -1);
        if (me == root)
            for (int i = 0; i < B; i++)
                rb[i] = v(it, root, 0, i);
        run(&bc);
        for (int i = 0; i < B; i++)
            EXPECT(rb[i], v(it, root, 0, i), "bcast it %d elem %d", it, i);

        lset(rb, (size_t)n * B, -1);
        for (int i = 0; i < B; i++)
            sb[i] = v(it, me, 0, i);
        run(&ga);
        if (me == 0)
            for (int r = 0; r < n; r++)
                for (int i = 0; i < B; i++)
                    EXPECT(rb[r * B + i], v(it, r, 0, i), "gather it %d r %d",
                           it, r);

        lset(rb, (size_t)tot, -1);
        run(&gv);
        if (me == vroot) {
            int pos = 0;
            for (int r = 0; r < n; r++) {
                for (int g = 0; g < r; g++, pos++)
                    EXPECT(rb[pos], -1, "gatherv gap it %d r %d", it, r);
                for (int i = 0; i < keep_cnt[r]; i++, pos++)
                    EXPECT(rb[pos], v(it, r, 0, i), "gatherv it %d r %d", it,
                           r);
            }
        }

        if (me == 0)
            for (int r = 0; r < n; r++)
                for (int i = 0; i < B; i++)
                    sb[r * B + i] = v(it, 0, r, i);
        lset(rb, B, -1);
        run(&sc);
        for (int i = 0; i < B; i++)
            EXPECT(rb[i], v(it, 0, me, i), "scatter it %d elem %d", it, i);

        if (me == vroot) {
            lset(sb, (size_t)tot, -1);
            int pos = 0;
            for (int r = 0; r < n; r++) {
                pos += r;
                for (int i = 0; i < keep_cnt[r]; i++)
                    sb[pos++] = v(it, vroot, r, i);
            }
        }
        lset(rb, B, -1);
        run(&sv);
        for (int i = 0; i < me + 1; i++)
            EXPECT(rb[i], v(it, vroot, me, i), "scatterv it %d elem %d", it, i);
        EXPECT(rb[me + 1], -1, "scatterv wrote past its count");
    }
    MPI_Request all[] = {bar, bc, ga, gv, sc, sv};
    for (int k = 0; k < 6; k++) {
        MT_MPI(MPI_Request_free(&all[k]));
        MT_CHECK(all[k] == MPI_REQUEST_NULL, "freed request %d is null", k);
    }
    free(sb), free(rb), free(cnt), free(dsp), free(keep_cnt);
}

static void test_all(void)
{
    int n = mt_size, me = mt_rank;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    size_t cap = (size_t)n * B * 4;
    long *sb = lalloc(cap), *rb = lalloc(cap);
    int *cnt = mt_malloc((size_t)n * sizeof(int));
    int *dsp = mt_malloc((size_t)n * sizeof(int));
    int *scnt = mt_malloc((size_t)n * sizeof(int));
    int *sdsp = mt_malloc((size_t)n * sizeof(int));
    int *rcnt = mt_malloc((size_t)n * sizeof(int));
    int *rdsp = mt_malloc((size_t)n * sizeof(int));
    int *sbd = mt_malloc((size_t)n * sizeof(int));
    int *rbd = mt_malloc((size_t)n * sizeof(int));
    MPI_Datatype *ty = mt_malloc((size_t)n * sizeof(MPI_Datatype));
    int tot = 0;
    for (int r = 0; r < n; r++) {
        cnt[r] = r + 1;
        dsp[r] = tot;
        tot += r + 1;
        ty[r] = MPI_LONG;
    }
    /* alltoallv/w: me sends (me + j) % 3 + 1 elements to j. */
    int so = 0, ro = 0;
    for (int j = 0; j < n; j++) {
        scnt[j] = (me + j) % 3 + 1;
        rcnt[j] = (j + me) % 3 + 1;
        sdsp[j] = so + 1; /* one-element gaps */
        rdsp[j] = ro + 1;
        so += scnt[j] + 1;
        ro += rcnt[j] + 1;
        sbd[j] = sdsp[j] * (int)sizeof(long);
        rbd[j] = rdsp[j] * (int)sizeof(long);
    }
    MPI_Request ag, agv, a2a, a2av, a2aw;
    MT_MPI(MPI_Allgather_init(sb, B, MPI_LONG, rb, B, MPI_LONG, w, ni, &ag));
    MT_MPI(MPI_Allgatherv_init(sb, me + 1, MPI_LONG, rb, cnt, dsp, MPI_LONG, w,
                               ni, &agv));
    MT_MPI(MPI_Alltoall_init(sb, B, MPI_LONG, rb, B, MPI_LONG, w, ni, &a2a));
    MT_MPI(MPI_Alltoallv_init(sb, scnt, sdsp, MPI_LONG, rb, rcnt, rdsp,
                              MPI_LONG, w, ni, &a2av));
    MT_MPI(
        MPI_Alltoallw_init(sb, scnt, sbd, ty, rb, rcnt, rbd, ty, w, ni, &a2aw));
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < B; i++)
            sb[i] = v(it, me, 0, i);
        lset(rb, cap, -1);
        run(&ag);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < B; i++)
                EXPECT(rb[r * B + i], v(it, r, 0, i), "allgather it %d r %d",
                       it, r);
        lset(rb, cap, -1);
        run(&agv);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < r + 1; i++)
                EXPECT(rb[dsp[r] + i], v(it, r, 0, i), "allgatherv it %d r %d",
                       it, r);

        for (int j = 0; j < n; j++)
            for (int i = 0; i < B; i++)
                sb[j * B + i] = v(it, me, j, i);
        lset(rb, cap, -1);
        run(&a2a);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < B; i++)
                EXPECT(rb[r * B + i], v(it, r, me, i), "alltoall it %d r %d",
                       it, r);

        for (int k = 0; k < 2; k++) { /* v, then w: the same layout */
            lset(sb, cap, -3);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < scnt[j]; i++)
                    sb[sdsp[j] + i] = v(it + k, me, j, i);
            lset(rb, cap, -1);
            run(k ? &a2aw : &a2av);
            for (int r = 0; r < n; r++) {
                EXPECT(rb[rdsp[r] - 1], -1, "alltoall%c gap", k ? 'w' : 'v');
                for (int i = 0; i < rcnt[r]; i++)
                    EXPECT(rb[rdsp[r] + i], v(it + k, r, me, i),
                           "alltoall%c it %d r %d elem %d", k ? 'w' : 'v', it,
                           r, i);
            }
        }
    }
    MT_MPI(MPI_Request_free(&ag));
    MT_MPI(MPI_Request_free(&agv));
    MT_MPI(MPI_Request_free(&a2a));
    MT_MPI(MPI_Request_free(&a2av));
    MT_MPI(MPI_Request_free(&a2aw));
    free(sb), free(rb), free(cnt), free(dsp), free(scnt), free(sdsp);
    free(rcnt), free(rdsp), free(sbd), free(rbd), free(ty);
}

static long sum_to(int it, int upto, int i) /* ranks [0, upto) */
{
    long s = 0;
    for (int r = 0; r < upto; r++)
        s += v(it, r, 0, i);
    return s;
}

static void test_reductions(void)
{
    int n = mt_size, me = mt_rank;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    size_t cap = (size_t)n * B;
    long *sb = lalloc(cap), *rb = lalloc(cap), *ip = lalloc(B);
    int *cnt = mt_malloc((size_t)n * sizeof(int));
    int off = 0, tot = 0;
    for (int r = 0; r < n; r++) {
        cnt[r] = r + 1;
        if (r < me)
            off += r + 1;
        tot += r + 1;
    }
    MPI_Request re, ar, arip, rs, rsb, sc, ex;
    int root = n - 1;
    MT_MPI(MPI_Reduce_init(sb, rb, B, MPI_LONG, MPI_SUM, root, w, ni, &re));
    MT_MPI(MPI_Allreduce_init(sb, rb, B, MPI_LONG, MPI_SUM, w, ni, &ar));
    MT_MPI(MPI_Allreduce_init(MPI_IN_PLACE, ip, B, MPI_LONG, MPI_SUM, w, ni,
                              &arip));
    MT_MPI(MPI_Reduce_scatter_init(sb, rb, cnt, MPI_LONG, MPI_SUM, w, ni, &rs));
    MT_MPI(MPI_Reduce_scatter_block_init(sb, rb, B, MPI_LONG, MPI_SUM, w, ni,
                                         &rsb));
    MT_MPI(MPI_Scan_init(sb, rb, B, MPI_LONG, MPI_SUM, w, ni, &sc));
    MT_MPI(MPI_Exscan_init(sb, rb, B, MPI_LONG, MPI_SUM, w, ni, &ex));
    for (int it = 0; it < ITERS; it++) {
        for (size_t i = 0; i < cap; i++)
            sb[i] = v(it, me, 0, (int)i);
        lset(rb, cap, -1);
        run(&re);
        if (me == root)
            for (int i = 0; i < B; i++)
                EXPECT(rb[i], sum_to(it, n, i), "reduce it %d elem %d", it, i);
        lset(rb, cap, -1);
        run(&ar);
        for (int i = 0; i < B; i++)
            EXPECT(rb[i], sum_to(it, n, i), "allreduce it %d elem %d", it, i);
        for (int i = 0; i < B; i++)
            ip[i] = v(it, me, 0, i);
        run(&arip);
        for (int i = 0; i < B; i++)
            EXPECT(ip[i], sum_to(it, n, i), "allreduce in place it %d", it);
        lset(rb, cap, -1);
        run(&rs);
        for (int i = 0; i < me + 1; i++)
            EXPECT(rb[i], sum_to(it, n, off + i), "reduce_scatter it %d", it);
        EXPECT(rb[me + 1], -1, "reduce_scatter wrote past its block");
        lset(rb, cap, -1);
        run(&rsb);
        for (int i = 0; i < B; i++)
            EXPECT(rb[i], sum_to(it, n, me * B + i), "reduce_scatter_block");
        lset(rb, cap, -1);
        run(&sc);
        for (int i = 0; i < B; i++)
            EXPECT(rb[i], sum_to(it, me + 1, i), "scan it %d elem %d", it, i);
        lset(rb, cap, -1);
        run(&ex);
        for (int i = 0; i < B; i++)
            EXPECT(rb[i], me ? sum_to(it, me, i) : -1, "exscan it %d", it);
    }
    MPI_Request all[] = {re, ar, arip, rs, rsb, sc, ex};
    for (int k = 0; k < 7; k++)
        MT_MPI(MPI_Request_free(&all[k]));
    (void)tot;
    free(sb), free(rb), free(ip), free(cnt);
}

/* Neighbourhood collectives on a non-periodic ring (a line): neighbour 0
 * is me - 1, neighbour 1 is me + 1, MPI_PROC_NULL at the ends. */
static void test_neighbor(void)
{
    int n = mt_size, me = mt_rank;
    int dims[1] = {n}, periods[1] = {0};
    MPI_Comm cart;
    MT_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int nb[2] = {me > 0 ? me - 1 : MPI_PROC_NULL,
                 me < n - 1 ? me + 1 : MPI_PROC_NULL};
    MPI_Info ni = MPI_INFO_NULL;
    long *sb = lalloc(4 * B), *rb = lalloc(4 * B);
    int agcnt[2] = {B, B / 2}, agdsp[2] = {0, B + 3};
    /* v/w: I send c[k] to neighbour k; from neighbour 0 (whose neighbour
     * 1 I am) I receive c[1]. */
    int scnt[2] = {3, 5}, sdsp[2] = {0, 10}, rcnt[2] = {5, 3}, rdsp[2] = {0, 8};
    MPI_Aint sbd[2] = {0, 10 * sizeof(long)}, rbd[2] = {0, 8 * sizeof(long)};
    MPI_Datatype ty[2] = {MPI_LONG, MPI_LONG};
    MPI_Request ag, agv, a2a, a2av, a2aw;
    MT_MPI(MPI_Neighbor_allgather_init(sb, B, MPI_LONG, rb, B, MPI_LONG, cart,
                                       ni, &ag));
    MT_MPI(MPI_Neighbor_allgatherv_init(sb, B / 2, MPI_LONG, rb, agcnt, agdsp,
                                        MPI_LONG, cart, ni, &agv));
    MT_MPI(MPI_Neighbor_alltoall_init(sb, B, MPI_LONG, rb, B, MPI_LONG, cart,
                                      ni, &a2a));
    MT_MPI(MPI_Neighbor_alltoallv_init(sb, scnt, sdsp, MPI_LONG, rb, rcnt, rdsp,
                                       MPI_LONG, cart, ni, &a2av));
    MT_MPI(MPI_Neighbor_alltoallw_init(sb, scnt, sbd, ty, rb, rcnt, rbd, ty,
                                       cart, ni, &a2aw));
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < B; i++)
            sb[i] = v(it, me, 0, i);
        lset(rb, 4 * B, -1);
        run(&ag);
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < B; i++)
                EXPECT(rb[k * B + i],
                       nb[k] == MPI_PROC_NULL ? -1 : v(it, nb[k], 0, i),
                       "neighbor_allgather it %d nbr %d", it, k);
        lset(rb, 4 * B, -1);
        run(&agv);
        int want_agv = me < n - 1; /* only a right neighbour's block is short */
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < agcnt[k]; i++)
                EXPECT(rb[agdsp[k] + i],
                       nb[k] == MPI_PROC_NULL || (k == 1 && !want_agv) ||
                               i >= B / 2
                           ? -1
                           : v(it, nb[k], 0, i),
                       "neighbor_allgatherv it %d nbr %d elem %d", it, k, i);
        /* Block 1 asks for B/2 and neighbour 1 sends B/2; block 0 asks
         * for B and gets B/2 (a shorter message is fine). */

        for (int k = 0; k < 2; k++)
            for (int i = 0; i < B; i++)
                sb[k * B + i] = v(it, me, k, i);
        lset(rb, 4 * B, -1);
        run(&a2a);
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < B; i++)
                EXPECT(rb[k * B + i],
                       nb[k] == MPI_PROC_NULL ? -1 : v(it, nb[k], 1 - k, i),
                       "neighbor_alltoall it %d nbr %d", it, k);

        for (int m = 0; m < 2; m++) { /* v, then w */
            lset(sb, 4 * B, -3);
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < scnt[k]; i++)
                    sb[sdsp[k] + i] = v(it + m, me, k, i);
            lset(rb, 4 * B, -1);
            run(m ? &a2aw : &a2av);
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < rcnt[k]; i++)
                    EXPECT(rb[rdsp[k] + i],
                           nb[k] == MPI_PROC_NULL ? -1
                                                  : v(it + m, nb[k], 1 - k, i),
                           "neighbor_alltoall%c it %d nbr %d", m ? 'w' : 'v',
                           it, k);
        }
    }
    MPI_Request all[] = {ag, agv, a2a, a2av, a2aw};
    for (int k = 0; k < 5; k++)
        MT_MPI(MPI_Request_free(&all[k]));
    MT_MPI(MPI_Comm_free(&cart));
    free(sb), free(rb);
}

/* Several different persistent collectives started together, one driven
 * by MPI_Test; objects freed while requests use them; errors. */
static void test_startall_and_errors(void)
{
    int n = mt_size, me = mt_rank;
    MPI_Info ni = MPI_INFO_NULL;
    MPI_Comm dup;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Datatype pair;
    MT_MPI(MPI_Type_contiguous(2, MPI_LONG, &pair));
    MT_MPI(MPI_Type_commit(&pair));
    long *bb = lalloc(2 * B), *s = lalloc(B), *r = lalloc(B);
    long *as = lalloc((size_t)n * B), *ar = lalloc((size_t)n * B);
    MPI_Request rq[3];
    MT_MPI(MPI_Bcast_init(bb, B, pair, 0, MPI_COMM_WORLD, ni, &rq[0]));
    MT_MPI(MPI_Allreduce_init(s, r, B, MPI_LONG, MPI_MAX, dup, ni, &rq[1]));
    MT_MPI(MPI_Alltoall_init(as, B, MPI_LONG, ar, B, MPI_LONG, MPI_COMM_WORLD,
                             ni, &rq[2]));
    /* The requests keep both alive. */
    MT_MPI(MPI_Type_free(&pair));
    MT_MPI(MPI_Comm_free(&dup));
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < 2 * B; i++)
            bb[i] = me == 0 ? v(it, 0, 0, i) : -1;
        for (int i = 0; i < B; i++)
            s[i] = v(it, me, 0, i) * (me % 2 ? -1 : 1);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < B; i++)
                as[j * B + i] = v(it, me, j, i);
        lset(r, B, -1);
        lset(ar, (size_t)n * B, -1);
        MT_MPI(MPI_Startall(3, rq));
        if (it % 2) {
            int done = 0;
            while (!done)
                MT_MPI(MPI_Testall(3, rq, &done, MPI_STATUSES_IGNORE));
        } else {
            MPI_Status st[3];
            MT_MPI(MPI_Waitall(3, rq, st));
            for (int k = 0; k < 3; k++)
                MT_EQ(st[k].MPI_SOURCE, MPI_ANY_SOURCE, "empty status source");
        }
        for (int i = 0; i < 2 * B; i++)
            EXPECT(bb[i], v(it, 0, 0, i), "startall bcast it %d", it);
        for (int i = 0; i < B; i++) {
            long mx = v(it, 0, 0, i);
            for (int q = 2; q < n; q += 2)
                if (v(it, q, 0, i) > mx)
                    mx = v(it, q, 0, i);
            EXPECT(r[i], mx, "startall allreduce it %d", it);
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < B; i++)
                EXPECT(ar[j * B + i], v(it, j, me, i), "startall alltoall");
    }

    /* Starting an active request is MPI_ERR_REQUEST; so is freeing...
     * nothing: an inactive one frees fine, even one never started. */
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request bar, never;
    MT_MPI(MPI_Barrier_init(MPI_COMM_WORLD, ni, &bar));
    MT_MPI(MPI_Start(&bar));
    MT_ERRCLASS(MPI_Start(&bar), MPI_ERR_REQUEST, "MPI_Start on active");
    MT_ERRCLASS(MPI_Startall(1, &bar), MPI_ERR_REQUEST,
                "MPI_Startall on active");
    MT_MPI(MPI_Wait(&bar, MPI_STATUS_IGNORE));
    run(&bar); /* usable again */
    MT_ERRCLASS(MPI_Bcast_init(bb, -1, MPI_LONG, 0, MPI_COMM_WORLD, ni, &never),
                MPI_ERR_COUNT, "Bcast_init with a negative count");
    MT_ERRCLASS(MPI_Reduce_init(s, r, B, MPI_LONG, MPI_SUM, n, MPI_COMM_WORLD,
                                ni, &never),
                MPI_ERR_ROOT, "Reduce_init with a bad root");
    MT_ERRCLASS(MPI_Neighbor_alltoall_init(as, 1, MPI_LONG, ar, 1, MPI_LONG,
                                           MPI_COMM_WORLD, ni, &never),
                MPI_ERR_TOPOLOGY, "Neighbor_alltoall_init without topology");
    MT_MPI(MPI_Reduce_init(s, r, B, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD, ni,
                           &never));
    MT_MPI(MPI_Request_free(&never));
    MT_CHECK(never == MPI_REQUEST_NULL, "freed request is null");
    MT_MPI(MPI_Request_free(&bar));
    for (int k = 0; k < 3; k++)
        MT_MPI(MPI_Request_free(&rq[k]));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(bb), free(s), free(r), free(as), free(ar);
}

static void test_any_start_order(void)
{
    int n = mt_size, me = mt_rank;
    enum { K = 4 };
    MPI_Request rq[K];
    long bc = -1, sum = -1, one = 0, *ag = lalloc((size_t)n);
    MT_MPI(MPI_Bcast_init(&bc, 1, MPI_LONG, n - 1, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &rq[0]));
    MT_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    MT_MPI(MPI_Allreduce_init(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &rq[2]));
    MT_MPI(MPI_Allgather_init(&one, 1, MPI_LONG, ag, 1, MPI_LONG,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &rq[3]));
    for (int it = 0; it < 6; it++) {
        bc = me == n - 1 ? v(it, me, 0, 0) : -1;
        one = v(it, me, 1, 0);
        /* Each rank starts the four in its own rotation, and runs other
         * collectives of the communicator before waiting. */
        for (int k = 0; k < K; k++)
            MT_MPI(MPI_Start(&rq[(k + me + it) % K]));
        long x = me, xs = -1;
        MPI_Request ir;
        MT_MPI(
            MPI_Iallreduce(&x, &xs, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &ir));
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        MT_MPI(MPI_Wait(&ir, MPI_STATUS_IGNORE));
        EXPECT(xs, (long)n * (n - 1) / 2, "Iallreduce between start and wait");
        if (me % 2)
            MT_MPI(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        else
            for (int k = K - 1; k >= 0; k--)
                MT_MPI(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
        EXPECT(bc, v(it, n - 1, 0, 0), "bcast started out of order, it %d", it);
        long want = 0;
        for (int q = 0; q < n; q++) {
            want += v(it, q, 1, 0);
            EXPECT(ag[q], v(it, q, 1, 0), "allgather out of order, it %d", it);
        }
        EXPECT(sum, want, "allreduce started out of order, it %d", it);
    }
    for (int k = 0; k < K; k++)
        MT_MPI(MPI_Request_free(&rq[k]));
    free(ag);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_any_start_order();
    test_rooted();
    test_all();
    test_reductions();
    test_neighbor();
    test_startall_and_errors();
    return mt_finish("coll_persist");
}
