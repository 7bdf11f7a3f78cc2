/* SPDX-License-Identifier: MIT */
/* Every one-sided operation on windows of user memory (MPI_Win_create and
 * dynamic windows) under fence, PSCW and lock epochs, the target always in
 * MPI: contiguous and derived types on both sides (holes untouched), large
 * transfers cut into many requests, accumulates with several ops
 * (MINLOC/MAXLOC on pair types too), Get_accumulate, Fetch_and_op,
 * Compare_and_swap, the request-based forms; a Fetch_and_op stress on one
 * counter (every fetched value unique, final value exact); accesses
 * outside the window are MPI_ERR_RMA_RANGE and write nothing. Under
 * FERRY_XFER=shmbuf|queue|net the data moves by active messages
 * (src/rma/am.c), with or without the progress thread; otherwise by cma
 * or procmem. --multiple: under MPI_THREAD_MULTIPLE, with three threads
 * per rank putting, getting and fetch-and-adding at once. */
#include <pthread.h>

#include "mpitest.h"

#define NI 4096          /* ints in the small area */
#define BIG (300 * 1024) /* bytes in the large area */
#define GUARD 256        /* bytes after the large area, never written */
#define MEM (NI * 4 + BIG + GUARD)

/* Regions of the small area (int indices). */
#define R_PUT 0     /* contiguous put, 100 ints */
#define R_VPUT 200  /* vector put: 10 x 3 every 5 */
#define R_OVPUT 300 /* put from an origin vector, 30 ints */
#define R_GET 400   /* read-only during the epoch, 100 ints */
#define R_ACC 600   /* SUM from the left neighbour, 100 ints */
#define R_CNT 800   /* SUM 1 from every rank, on rank 0 */
#define R_MAX 900   /* MAX on doubles (as ints: 2 each), 16 doubles */
#define R_XOR 1000  /* BXOR on unsigned, 16 */
#define R_MINL 1100 /* MINLOC on MPI_2INT, 8 pairs */
#define R_MAXL 1200 /* MAXLOC on MPI_DOUBLE_INT, 8 pairs (16 bytes each) */
#define R_GACC 1300 /* Get_accumulate SUM, 50 ints */
#define R_FOP 1400  /* Fetch_and_op on a long long (2 ints) */
#define R_CAS 1500  /* Compare_and_swap, 2 ints */
#define R_REPV 1600 /* REPLACE through a vector type: 10 x 3 every 5 */
#define R_REQ 2000  /* request-based forms, 4 x 64 ints */
#define R_STRESS 3000
#define R_THR 3100 /* --multiple: 3 threads x 64 ints, then a counter */
#define NTHR 3
#define KTHR 40

enum sync { FENCE, PSCW, LOCK };
static const char *sync_name[] = {"fence", "pscw", "lock"};

static unsigned char *mem; /* this rank's window memory */
static MPI_Aint *bases;    /* dynamic: every rank's base address */
static int dyn;
static int me, n, right, left;
static MPI_Group g_left, g_right;

static MPI_Aint D(int t, MPI_Aint byte_off)
{
    return dyn ? bases[t] + byte_off : byte_off;
}
#define DI(t, i) D(t, (MPI_Aint)(i)*4)

static int *I(void)
{
    return (int *)mem;
}

static void prefill(void)
{
    int *m = I();
    for (int i = 0; i < NI; i++)
        m[i] = -1;
    for (int i = 0; i < 100; i++) {
        m[R_GET + i] = me * 7 + i;
        m[R_ACC + i] = i;
    }
    m[R_CNT] = 0;
    double *md = (double *)&m[R_MAX];
    for (int i = 0; i < 16; i++)
        md[i] = (double)(i * 3 - 20);
    for (int i = 0; i < 16; i++)
        m[R_XOR + i] = (int)(0x5a5a0000u | (unsigned)i);
    for (int i = 0; i < 8; i++) {
        m[R_MINL + 2 * i] = 50; /* value */
        m[R_MINL + 2 * i + 1] = 999;
    }
    struct di {
        double v;
        int i;
    } *dp = (struct di *)&m[R_MAXL];
    for (int i = 0; i < 8; i++) {
        dp[i].v = 10.0;
        dp[i].i = 999;
    }
    for (int i = 0; i < 50; i++)
        m[R_GACC + i] = 1000 + i;
    long long fop = 5;
    memcpy(&m[R_FOP], &fop, sizeof(fop));
    m[R_CAS] = 77;
    m[R_CAS + 1] = 88;
    for (int i = 0; i < 256; i++)
        m[R_REQ + i] = 3 * i;
    mt_fill(mem + NI * 4, BIG, (uint32_t)(me + 500));
    memset(mem + NI * 4 + BIG, 0x5a, GUARD);
}

static void begin(enum sync s, MPI_Win win)
{
    if (s == FENCE)
        MT_MPI(MPI_Win_fence(0, win));
    else if (s == PSCW) {
        MT_MPI(MPI_Win_post(g_left, 0, win));
        MT_MPI(MPI_Win_start(g_right, 0, win));
    } else
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
}

static void end(enum sync s, MPI_Win win)
{
    if (s == FENCE)
        MT_MPI(MPI_Win_fence(0, win));
    else if (s == PSCW) {
        MT_MPI(MPI_Win_complete(win));
        MT_MPI(MPI_Win_wait(win));
    } else
        MT_MPI(MPI_Win_unlock(right, win));
}

static void round_ops(enum sync s, MPI_Win win, MPI_Datatype vec,
                      MPI_Datatype ovec)
{
    const char *sn = sync_name[s];
    int src[100], got[100], vgot[30], gacc[50];
    for (int i = 0; i < 100; i++)
        src[i] = me * 1000 + i;
    int osrc[150]; /* origin vector: 30 ints at every 5th */
    for (int i = 0; i < 150; i++)
        osrc[i] = -7;
    for (int i = 0; i < 30; i++)
        osrc[i * 5] = me * 100 + i;
    memset(got, 0, sizeof(got));
    memset(vgot, 0, sizeof(vgot));
    unsigned char *big_out = mt_malloc(BIG), *big_in = mt_malloc(BIG);
    mt_fill(big_out, BIG, (uint32_t)(me + 9000));
    memset(big_in, 0, BIG);
    /* Every second int of the large area's first 16000 bytes. */
    MPI_Datatype strided;
    MT_MPI(MPI_Type_vector(2000, 1, 2, MPI_INT, &strided));
    MT_MPI(MPI_Type_commit(&strided));
    int *sv = mt_malloc(2000 * sizeof(int));
    for (int i = 0; i < 2000; i++)
        sv[i] = me * 100000 + i;

    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    begin(s, win);
    MT_MPI(
        MPI_Put(src, 100, MPI_INT, right, DI(right, R_PUT), 100, MPI_INT, win));
    MT_MPI(MPI_Put(src, 30, MPI_INT, right, DI(right, R_VPUT), 1, vec, win));
    MT_MPI(MPI_Put(osrc, 1, ovec, right, DI(right, R_OVPUT), 30, MPI_INT, win));
    MT_MPI(
        MPI_Get(got, 100, MPI_INT, right, DI(right, R_GET), 100, MPI_INT, win));
    MT_MPI(MPI_Get(vgot, 30, MPI_INT, right, DI(right, R_GET), 1, vec, win));
    int add[100];
    for (int i = 0; i < 100; i++)
        add[i] = me + 1;
    MT_MPI(MPI_Accumulate(add, 100, MPI_INT, right, DI(right, R_ACC), 100,
                          MPI_INT, MPI_SUM, win));
    if (s == FENCE) {
        /* Contention on rank 0's counter from every rank. */
        int one = 1;
        MT_MPI(MPI_Accumulate(&one, 1, MPI_INT, 0, DI(0, R_CNT), 1, MPI_INT,
                              MPI_SUM, win));
    }
    double dv[16];
    for (int i = 0; i < 16; i++)
        dv[i] = (double)(i % 2 ? 100 + me : -100);
    MT_MPI(MPI_Accumulate(dv, 16, MPI_DOUBLE, right, DI(right, R_MAX), 16,
                          MPI_DOUBLE, MPI_MAX, win));
    unsigned xv[16];
    for (int i = 0; i < 16; i++)
        xv[i] = 0xffu << (i % 24);
    MT_MPI(MPI_Accumulate(xv, 16, MPI_UNSIGNED, right, DI(right, R_XOR), 16,
                          MPI_UNSIGNED, MPI_BXOR, win));
    int ml[16];
    for (int i = 0; i < 8; i++) {
        ml[2 * i] = i % 2 ? 10 : 60; /* odd pairs win */
        ml[2 * i + 1] = me;
    }
    MT_MPI(MPI_Accumulate(ml, 8, MPI_2INT, right, DI(right, R_MINL), 8,
                          MPI_2INT, MPI_MINLOC, win));
    struct {
        double v;
        int i;
    } mx[8];
    for (int i = 0; i < 8; i++) {
        mx[i].v = i % 2 ? 20.0 : 5.0;
        mx[i].i = me;
    }
    MT_MPI(MPI_Accumulate(mx, 8, MPI_DOUBLE_INT, right, DI(right, R_MAXL), 8,
                          MPI_DOUBLE_INT, MPI_MAXLOC, win));
    int gadd[50];
    for (int i = 0; i < 50; i++)
        gadd[i] = 2;
    MT_MPI(MPI_Get_accumulate(gadd, 50, MPI_INT, gacc, 50, MPI_INT, right,
                              DI(right, R_GACC), 50, MPI_INT, MPI_SUM, win));
    int nop[10];
    long long fnop = -1;
    MT_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, nop, 10, MPI_INT, right,
                              DI(right, R_GET), 10, MPI_INT, MPI_NO_OP, win));
    MT_MPI(MPI_Fetch_and_op(NULL, &fnop, MPI_LONG_LONG, right, DI(right, R_GET),
                            MPI_NO_OP, win));
    long long finc = 10, fold = -1;
    MT_MPI(MPI_Fetch_and_op(&finc, &fold, MPI_LONG_LONG, right,
                            DI(right, R_FOP), MPI_SUM, win));
    int cnew = 5, ccmp = 77, cold = 0, cnew2 = 6, ccmp2 = 12345, cold2 = 0;
    MT_MPI(MPI_Compare_and_swap(&cnew, &ccmp, &cold, MPI_INT, right,
                                DI(right, R_CAS), win));
    MT_MPI(MPI_Compare_and_swap(&cnew2, &ccmp2, &cold2, MPI_INT, right,
                                DI(right, R_CAS + 1), win));
    int rep[30];
    for (int i = 0; i < 30; i++)
        rep[i] = -(me * 100 + i) - 2;
    MT_MPI(MPI_Accumulate(rep, 30, MPI_INT, right, DI(right, R_REPV), 1, vec,
                          MPI_REPLACE, win));
    MT_MPI(MPI_Put(big_out, BIG, MPI_BYTE, right, D(right, NI * 4), BIG,
                   MPI_BYTE, win));
    end(s, win);
    /* A second epoch: the large get and the strided put (many pieces). */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    begin(s, win);
    MT_MPI(MPI_Get(big_in, BIG - 40000, MPI_BYTE, right,
                   D(right, NI * 4 + 40000), BIG - 40000, MPI_BYTE, win));
    MT_MPI(MPI_Put(sv, 2000, MPI_INT, right, D(right, NI * 4 + 20000), 1,
                   strided, win));
    end(s, win);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* Origin side. */
    for (int i = 0; i < 100; i++)
        MT_EQ(got[i], right * 7 + i, sn);
    for (int b = 0; b < 10; b++)
        for (int k = 0; k < 3; k++)
            MT_EQ(vgot[b * 3 + k], right * 7 + b * 5 + k, sn);
    for (int i = 0; i < 50; i++)
        MT_EQ(gacc[i], 1000 + i, sn);
    MT_EQ(fold, 5, sn);
    for (int i = 0; i < 10; i++)
        MT_EQ(nop[i], right * 7 + i, "get_accumulate with MPI_NO_OP");
    long long wantnop;
    int pair[2] = {right * 7, right * 7 + 1};
    memcpy(&wantnop, pair, sizeof(wantnop));
    MT_EQ(fnop, wantnop, "fetch_and_op with MPI_NO_OP");
    MT_EQ(cold, 77, sn);
    MT_EQ(cold2, 88, sn);
    for (size_t j = 0; j < BIG - 40000; j++)
        if (big_in[j] != mt_byte((uint32_t)(me + 9000), 40000 + j))
            MT_FAIL("%s: large get: byte %zu differs", sn, j);

    /* Target side: what the left neighbour did to us. */
    int *m = I();
    for (int i = 0; i < 100; i++)
        MT_EQ(m[R_PUT + i], left * 1000 + i, sn);
    for (int i = 0; i < 50; i++) {
        int b = i / 5, k = i % 5;
        MT_EQ(m[R_VPUT + i], k < 3 ? left * 1000 + b * 3 + k : -1,
              "vector put (holes untouched)");
    }
    for (int i = 0; i < 30; i++)
        MT_EQ(m[R_OVPUT + i], left * 100 + i, "put from origin vector");
    MT_EQ(m[R_OVPUT + 30], -1, "after origin-vector put");
    for (int i = 0; i < 100; i++)
        MT_EQ(m[R_ACC + i], i + left + 1, "accumulate sum");
    if (me == 0 && s == FENCE)
        MT_EQ(m[R_CNT], n, "counter summed by every rank");
    double *md = (double *)&m[R_MAX];
    for (int i = 0; i < 16; i++) {
        double want = i % 2 ? 100 + left : (double)(i * 3 - 20);
        if (want < (double)(i * 3 - 20))
            want = (double)(i * 3 - 20);
        MT_CHECK(md[i] == want, "%s MAX[%d]: %g, want %g", sn, i, md[i], want);
    }
    for (int i = 0; i < 16; i++)
        MT_EQ((unsigned)m[R_XOR + i], (0x5a5a0000u | (unsigned)i) ^ xv[i],
              "bxor");
    for (int i = 0; i < 8; i++) {
        MT_EQ(m[R_MINL + 2 * i], i % 2 ? 10 : 50, "minloc value");
        MT_EQ(m[R_MINL + 2 * i + 1], i % 2 ? left : 999, "minloc index");
    }
    struct di {
        double v;
        int i;
    } *dp = (struct di *)&m[R_MAXL];
    for (int i = 0; i < 8; i++) {
        MT_CHECK(dp[i].v == (i % 2 ? 20.0 : 10.0), "maxloc value %g", dp[i].v);
        MT_EQ(dp[i].i, i % 2 ? left : 999, "maxloc index");
    }
    for (int i = 0; i < 50; i++)
        MT_EQ(m[R_GACC + i], 1002 + i, "get_accumulate result at target");
    long long fop;
    memcpy(&fop, &m[R_FOP], sizeof(fop));
    MT_EQ(fop, 15, "fetch_and_op at target");
    MT_EQ(m[R_CAS], 5, "compare_and_swap (equal)");
    MT_EQ(m[R_CAS + 1], 88, "compare_and_swap (different)");
    for (int i = 0; i < 50; i++) {
        int b = i / 5, k = i % 5;
        MT_EQ(m[R_REPV + i], k < 3 ? -(left * 100 + b * 3 + k) - 2 : -1,
              "replace through a vector");
    }
    /* Large put, then the strided put over its first bytes. */
    unsigned char *bigm = mem + NI * 4;
    int *st = (int *)(bigm + 20000);
    for (int i = 0; i < 4000; i++) {
        if (i % 2 == 0) {
            MT_EQ(st[i], left * 100000 + i / 2, "strided put");
        } else {
            int want;
            unsigned char wb[4];
            for (int k = 0; k < 4; k++)
                wb[k] = mt_byte((uint32_t)(left + 9000),
                                (size_t)(20000 + i * 4 + k));
            memcpy(&want, wb, 4);
            MT_EQ(st[i], want, "strided put hole");
        }
    }
    MT_VERIFY(bigm, 20000, (uint32_t)(left + 9000), "large put");
    MT_ALL(bigm + BIG, GUARD, 0x5a, "guard after the window's data");
    MPI_Type_free(&strided);
    free(sv);
    free(big_out);
    free(big_in);
}

/* Request-based forms (passive target only). */
static void req_ops(MPI_Win win)
{
    int src[64], got[64], res[64], acc[64];
    for (int i = 0; i < 64; i++) {
        src[i] = me * 10 + i;
        acc[i] = 1;
    }
    MPI_Request rq[4];
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_MPI(MPI_Rput(src, 64, MPI_INT, right, DI(right, R_REQ), 64, MPI_INT, win,
                    &rq[0]));
    MT_MPI(MPI_Rget(got, 64, MPI_INT, right, DI(right, R_REQ + 64), 64, MPI_INT,
                    win, &rq[1]));
    MT_MPI(MPI_Raccumulate(acc, 64, MPI_INT, right, DI(right, R_REQ + 128), 64,
                           MPI_INT, MPI_SUM, win, &rq[2]));
    MT_MPI(MPI_Rget_accumulate(acc, 64, MPI_INT, res, 64, MPI_INT, right,
                               DI(right, R_REQ + 192), 64, MPI_INT, MPI_SUM,
                               win, &rq[3]));
    MT_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    /* A completed Rget / Rget_accumulate has its data already. */
    for (int i = 0; i < 64; i++) {
        MT_EQ(got[i], 3 * (64 + i), "rget");
        MT_EQ(res[i], 3 * (192 + i), "rget_accumulate result");
    }
    MT_MPI(MPI_Win_unlock(right, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int *m = I();
    for (int i = 0; i < 64; i++) {
        MT_EQ(m[R_REQ + i], left * 10 + i, "rput");
        MT_EQ(m[R_REQ + 128 + i], 3 * (128 + i) + 1, "raccumulate");
        MT_EQ(m[R_REQ + 192 + i], 3 * (192 + i) + 1, "rget_accumulate");
    }
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* Every rank Fetch_and_op's one counter on rank 0. */
static void stress(MPI_Win win)
{
    enum { K = 60 };
    long long *c = (long long *)&I()[R_STRESS];
    *c = 0;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long long mine[K], one = 1;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; k++) {
        MT_MPI(MPI_Fetch_and_op(&one, &mine[k], MPI_LONG_LONG, 0,
                                DI(0, R_STRESS), MPI_SUM, win));
        if (k % 7 == 0)
            MT_MPI(MPI_Win_flush(0, win));
    }
    MT_MPI(MPI_Win_unlock_all(win));
    long long *all = me == 0 ? mt_malloc(sizeof(long long) * K * n) : NULL;
    MT_MPI(MPI_Gather(mine, K, MPI_LONG_LONG, all, K, MPI_LONG_LONG, 0,
                      MPI_COMM_WORLD));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        qsort(all, (size_t)K * n, sizeof(long long), cmp_ll);
        for (int i = 0; i < K * n; i++)
            MT_EQ(all[i], i, "fetched values are 0 .. K*n-1, each once");
        MT_EQ(*c, (long long)K * n, "final counter");
        free(all);
    }
}

/* Outside the window: MPI_ERR_RMA_RANGE, nothing written. A target on
 * another node checks a dynamic window's accesses itself: a put's or an
 * accumulate's verdict may come with the unlock instead (a get's comes
 * with its reply). */
static int late_ok, late_seen;
#define RANGE_ERR(call, what)                                                  \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (late_ok && rc_ == MPI_SUCCESS)                                     \
            late_seen = 1;                                                     \
        else                                                                   \
            MT_ERRCLASS(rc_, MPI_ERR_RMA_RANGE, what);                         \
    } while (0)

static void range(MPI_Win win)
{
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[8];
    late_ok = dyn && !mt_same_node(right);
    late_seen = 0;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_Aint end = D(right, MEM);
    RANGE_ERR(MPI_Put(v, 8, MPI_INT, right, end - 16, 8, MPI_INT, win),
              "put across the end");
    MT_ERRCLASS(MPI_Get(r, 8, MPI_INT, right, end, 8, MPI_INT, win),
                MPI_ERR_RMA_RANGE, "get after the end");
    RANGE_ERR(
        MPI_Accumulate(v, 8, MPI_INT, right, end - 4, 8, MPI_INT, MPI_SUM, win),
        "accumulate across the end");
    if (!dyn)
        RANGE_ERR(MPI_Put(v, 1, MPI_INT, right, -4, 1, MPI_INT, win),
                  "put before the start");
    else
        RANGE_ERR(
            MPI_Put(v, 1, MPI_INT, right, bases[right] - 64, 1, MPI_INT, win),
            "put before the attached region");
    /* Large ones (straight into and out of the window between nodes):
     * 128 KiB from 64 KiB before the end. */
    const int LN = 32 * 1024;
    int *lv = mt_malloc(sizeof(int) * LN);
    for (int i = 0; i < LN; i++)
        lv[i] = 0x77;
    RANGE_ERR(MPI_Put(lv, LN, MPI_INT, right, end - LN * 2, LN, MPI_INT, win),
              "large put across the end");
    MT_ERRCLASS(MPI_Get(lv, LN, MPI_INT, right, end - LN * 2, LN, MPI_INT, win),
                MPI_ERR_RMA_RANGE, "large get across the end");
    for (int i = 0; i < LN; i++)
        MT_EQ(lv[i], 0x77, "a refused large get leaves the buffer alone");
    free(lv);
    if (late_seen)
        MT_ERRCLASS(MPI_Win_unlock(right, win), MPI_ERR_RMA_RANGE,
                    "unlock after refused puts to another node");
    else
        MT_MPI(MPI_Win_unlock(right, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_ALL(mem + NI * 4 + BIG, GUARD, 0x5a, "guard after a refused put");
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
}

/* --multiple: threads of every rank use the window at once (one
 * lock_all epoch of the process): each puts and reads back its own block
 * at the right neighbour, and fetch-and-adds rank 0's counter. */
struct thr_arg {
    MPI_Win win;
    int tid;
    long long fetched[KTHR];
};

static void *thr_main(void *p)
{
    struct thr_arg *a = p;
    int blk[64], back[64];
    MPI_Aint at = DI(right, R_THR + 64 * a->tid);
    for (int k = 0; k < KTHR; k++) {
        for (int i = 0; i < 64; i++)
            blk[i] = me * 1000000 + a->tid * 10000 + k * 100 + i;
        MT_MPI(MPI_Put(blk, 64, MPI_INT, right, at, 64, MPI_INT, a->win));
        MT_MPI(MPI_Win_flush(right, a->win));
        MT_MPI(MPI_Get(back, 64, MPI_INT, right, at, 64, MPI_INT, a->win));
        MT_MPI(MPI_Win_flush(right, a->win));
        for (int i = 0; i < 64; i++)
            MT_EQ(back[i], blk[i], "thread reads back its own block");
        long long one = 1;
        MT_MPI(MPI_Fetch_and_op(&one, &a->fetched[k], MPI_LONG_LONG, 0,
                                DI(0, R_THR + 64 * NTHR), MPI_SUM, a->win));
    }
    return NULL;
}

static void threads(MPI_Win win)
{
    long long *c = (long long *)&I()[R_THR + 64 * NTHR];
    *c = 0;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock_all(0, win));
    pthread_t th[NTHR];
    struct thr_arg a[NTHR];
    for (int t = 0; t < NTHR; t++) {
        a[t].win = win;
        a[t].tid = t;
        MT_CHECK(pthread_create(&th[t], NULL, thr_main, &a[t]) == 0,
                 "pthread_create");
    }
    for (int t = 0; t < NTHR; t++)
        pthread_join(th[t], NULL);
    MT_MPI(MPI_Win_unlock_all(win));
    long long mine[NTHR * KTHR];
    for (int t = 0; t < NTHR; t++)
        memcpy(&mine[t * KTHR], a[t].fetched, sizeof(a[t].fetched));
    long long *all = me == 0 ? mt_malloc(sizeof(mine) * (size_t)n) : NULL;
    MT_MPI(MPI_Gather(mine, NTHR * KTHR, MPI_LONG_LONG, all, NTHR * KTHR,
                      MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        qsort(all, (size_t)(NTHR * KTHR * n), sizeof(long long), cmp_ll);
        for (int i = 0; i < NTHR * KTHR * n; i++)
            MT_EQ(all[i], i, "threads' fetched values unique");
        MT_EQ(*c, (long long)NTHR * KTHR * n, "threads' final counter");
        free(all);
    }
}

static int multiple;

static void run(MPI_Win win, MPI_Datatype vec, MPI_Datatype ovec)
{
    for (int s = FENCE; s <= LOCK; s++) {
        prefill();
        if (s == FENCE)
            MT_MPI(MPI_Win_fence(0, win)); /* the first epoch's opening */
        round_ops((enum sync)s, win, vec, ovec);
        if (s == FENCE)
            MT_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    }
    prefill();
    req_ops(win);
    stress(win);
    if (multiple)
        threads(win);
    range(win);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--multiple")) {
        /* The progress thread beside a program that asked for MULTIPLE. */
        int prov = 0;
        MT_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov));
        MT_EQ(prov, MPI_THREAD_MULTIPLE, "thread level provided");
        multiple = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    } else {
        mt_init(&argc, &argv);
    }
    me = mt_rank;
    n = mt_size;
    right = (me + 1) % n;
    left = (me + n - 1) % n;
    MPI_Group world;
    MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MT_MPI(MPI_Group_incl(world, 1, &left, &g_left));
    MT_MPI(MPI_Group_incl(world, 1, &right, &g_right));
    MPI_Datatype vec, ovec;
    MT_MPI(MPI_Type_vector(10, 3, 5, MPI_INT, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    MT_MPI(MPI_Type_vector(30, 1, 5, MPI_INT, &ovec));
    MT_MPI(MPI_Type_commit(&ovec));
    mem = mt_malloc(MEM);
    bases = mt_malloc(sizeof(MPI_Aint) * (size_t)n);

    MPI_Win win;
    MT_MPI(MPI_Win_create(mem, MEM, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    run(win, vec, ovec);
    MT_MPI(MPI_Win_free(&win));

    dyn = 1;
    MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_MPI(MPI_Win_attach(win, mem, MEM));
    MPI_Aint mine;
    MT_MPI(MPI_Get_address(mem, &mine));
    MT_MPI(
        MPI_Allgather(&mine, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD));
    run(win, vec, ovec);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_detach(win, mem));
    MT_MPI(MPI_Win_free(&win));

    MPI_Type_free(&vec);
    MPI_Type_free(&ovec);
    MPI_Group_free(&g_left);
    MPI_Group_free(&g_right);
    MPI_Group_free(&world);
    free(mem);
    free(bases);
    return mt_finish("rma_am");
}
