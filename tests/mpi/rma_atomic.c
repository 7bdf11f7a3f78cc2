/* SPDX-License-Identifier: MIT */
/* Atomics on a window: every rank does MPI_Fetch_and_op(+1) N times on one
 * counter (each fetched value unique across the job, the final value
 * exact), a compare-and-swap loop adding 1 to another counter, MPI_SUM
 * accumulates of an array from every rank, MPI_Get_accumulate with
 * MPI_NO_OP and MPI_REPLACE, MAX on doubles, accumulate into a derived
 * target type, and the request-based Rput/Rget/Raccumulate/
 * Rget_accumulate. Then, on allocated and on created windows, every rank
 * mixes operations on one counter of rank 0 - Fetch_and_op, a CAS loop,
 * Get_accumulate through a derived type, Accumulate, and MPI_REPLACE
 * against MPI_SUM - for long, int, short and double counters, aligned and
 * misaligned (which Ferry combines under its accumulate lock rather than
 * with one hardware atomic): every fetched value unique, the final value
 * exact. */
#include "mpitest.h"

#include <stdbool.h>

#define N 200
#define ARR 64
#define M 400 /* operations per rank on each mixed counter */

/* Buffers may be misaligned (the window counters are): memcpy. */
static void set_val(void *buf, MPI_Datatype t, long v)
{
    long l = v;
    int i = (int)v;
    short h = (short)v;
    double d = (double)v;
    if (t == MPI_LONG)
        memcpy(buf, &l, sizeof(l));
    else if (t == MPI_INT)
        memcpy(buf, &i, sizeof(i));
    else if (t == MPI_SHORT)
        memcpy(buf, &h, sizeof(h));
    else
        memcpy(buf, &d, sizeof(d));
}

static long get_val(const void *buf, MPI_Datatype t)
{
    long l;
    int i;
    short h;
    double d;
    if (t == MPI_LONG)
        return memcpy(&l, buf, sizeof(l)), l;
    if (t == MPI_INT)
        return memcpy(&i, buf, sizeof(i)), i;
    if (t == MPI_SHORT)
        return memcpy(&h, buf, sizeof(h)), h;
    memcpy(&d, buf, sizeof(d));
    return (long)d;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Every rank: M operations on the counter at byte 'disp' of rank 0's
 * window (disp_unit 1), 'replace' mixes Fetch_and_op SUM +1 with
 * MPI_REPLACE of values no SUM chain can reach; otherwise SUM +1 through
 * Fetch_and_op, a CAS loop (integers), Get_accumulate on a derived type and
 * Accumulate. 'mem' is this rank's window memory. */
static void mixed(MPI_Win win, char *mem, MPI_Aint disp, MPI_Datatype t,
                  bool replace, const char *what)
{
    int me = mt_rank, n = mt_size;
    char one[8], cur[8], want[8], old[8], res[8];
    set_val(one, t, 1);
    if (me == 0)
        memset(mem + disp, 0, 8);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Datatype one_t;
    MT_MPI(MPI_Type_contiguous(1, t, &one_t));
    MT_MPI(MPI_Type_commit(&one_t));
    long fetched[M];
    int nf = 0;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < M; i++) {
        int k = (i + me) % (replace ? 2 : 4);
        if (k == 1 && replace) {
            long rv = ((long)me * M + i + 1) << 20; /* chains stay apart */
            char v[8];
            set_val(v, t, rv);
            MT_MPI(MPI_Fetch_and_op(v, res, t, 0, disp, MPI_REPLACE, win));
            fetched[nf++] = get_val(res, t);
        } else if (k == 0 || (k == 1 && t == MPI_DOUBLE)) {
            MT_MPI(MPI_Fetch_and_op(one, res, t, 0, disp, MPI_SUM, win));
            fetched[nf++] = get_val(res, t);
        } else if (k == 1) {
            MT_MPI(MPI_Fetch_and_op(NULL, cur, t, 0, disp, MPI_NO_OP, win));
            MT_MPI(MPI_Win_flush(0, win));
            for (;;) {
                set_val(want, t, get_val(cur, t) + 1);
                MT_MPI(MPI_Compare_and_swap(want, cur, old, t, 0, disp, win));
                MT_MPI(MPI_Win_flush(0, win));
                if (get_val(old, t) == get_val(cur, t))
                    break;
                memcpy(cur, old, sizeof(cur));
            }
            fetched[nf++] = get_val(old, t);
        } else if (k == 2) {
            MT_MPI(MPI_Get_accumulate(one, 1, one_t, res, 1, one_t, 0, disp, 1,
                                      one_t, MPI_SUM, win));
            MT_MPI(MPI_Win_flush(0, win));
            fetched[nf++] = get_val(res, t);
        } else {
            MT_MPI(MPI_Accumulate(one, 1, t, 0, disp, 1, t, MPI_SUM, win));
        }
        MT_MPI(MPI_Win_flush(0, win));
    }
    MT_MPI(MPI_Win_unlock_all(win));
    MPI_Type_free(&one_t);
    for (int i = nf; i < M; i++)
        fetched[i] = -1; /* padding */
    long *all = mt_malloc(sizeof(long) * M * (size_t)n);
    MT_MPI(
        MPI_Gather(fetched, M, MPI_LONG, all, M, MPI_LONG, 0, MPI_COMM_WORLD));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every update is in */
    if (me == 0) {
        long fin = get_val(mem + disp, t);
        qsort(all, (size_t)M * (size_t)n, sizeof(long), cmp_long);
        for (int i = 1; i < M * n; i++)
            MT_CHECK(all[i] < 0 || all[i] != all[i - 1],
                     "%s: fetched value %ld twice", what, all[i]);
        if (replace) {
            /* The last value was produced and never fetched. */
            for (int i = 0; i < M * n; i++)
                MT_CHECK(all[i] != fin, "%s: final %ld was also fetched", what,
                         fin);
        } else {
            MT_EQ(fin, (long)M * n, what);
            for (int i = 0; i < M * n; i++)
                MT_CHECK(all[i] < (long)M * n, "%s: fetched %ld out of range",
                         what, all[i]);
        }
    }
    free(all);
}

/* Byte counters, which Ferry may combine eight at a time: every rank
 * alternates Accumulate and Get_accumulate of +1 on 16 bytes at 'disp' of
 * rank 0 with Fetch_and_op +1 on the sixth of them; each byte ends at
 * its number of increments modulo 256. */
static void bytes16(MPI_Win win, unsigned char *mem, MPI_Aint disp,
                    const char *what)
{
    int me = mt_rank;
    unsigned char one[16], res[16];
    memset(one, 1, sizeof(one));
    if (me == 0)
        memset(mem + disp, 0, 16);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long nfop = 0, total = 0;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < M; i++) {
        int k = (i + me) % 3;
        if (k == 0)
            MT_MPI(MPI_Accumulate(one, 16, MPI_UNSIGNED_CHAR, 0, disp, 16,
                                  MPI_UNSIGNED_CHAR, MPI_SUM, win));
        else if (k == 1)
            MT_MPI(MPI_Get_accumulate(one, 16, MPI_UNSIGNED_CHAR, res, 16,
                                      MPI_UNSIGNED_CHAR, 0, disp, 16,
                                      MPI_UNSIGNED_CHAR, MPI_SUM, win));
        else
            MT_MPI(MPI_Fetch_and_op(one, res, MPI_UNSIGNED_CHAR, 0, disp + 5,
                                    MPI_SUM, win));
        nfop += k == 2;
        MT_MPI(MPI_Win_flush(0, win));
    }
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Allreduce(MPI_IN_PLACE, &nfop, 1, MPI_LONG, MPI_SUM,
                         MPI_COMM_WORLD));
    total = (long)M * mt_size;
    if (me == 0)
        for (int b = 0; b < 16; b++) {
            long want = (b == 5 ? total : total - nfop) % 256;
            MT_CHECK(mem[disp + b] == want, "%s: byte %d is %d, expected %ld",
                     what, b, mem[disp + b], want);
        }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

/* The mixed counters on one window of byte displacements. */
static void mixed_all(MPI_Win win, char *mem, const char *flavor)
{
    static const struct {
        MPI_Aint disp;
        MPI_Datatype t;
        const char *what;
    } c[] = {
        {64, MPI_LONG, "long"},
        {128, MPI_INT, "int"},
        {160, MPI_SHORT, "short"},
        {192, MPI_DOUBLE, "double"},
        {257, MPI_LONG, "misaligned long"},
        {302, MPI_INT, "misaligned int"},
    };
    char what[96];
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        snprintf(what, sizeof(what), "%s window, %s counter", flavor,
                 c[i].what);
        mixed(win, mem, c[i].disp, c[i].t, false, what);
    }
    snprintf(what, sizeof(what), "%s window, 16 bytes", flavor);
    bytes16(win, (unsigned char *)mem, 320, what);
    snprintf(what, sizeof(what), "%s window, 16 bytes at an odd offset",
             flavor);
    bytes16(win, (unsigned char *)mem, 355, what);
    snprintf(what, sizeof(what), "%s window, REPLACE and SUM", flavor);
    mixed(win, mem, 64, MPI_LONG, true, what);
    snprintf(what, sizeof(what), "%s window, misaligned REPLACE and SUM",
             flavor);
    mixed(win, mem, 257, MPI_LONG, true, what);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    long *mem; /* [0] fetch-and-op counter, [1] CAS counter, [2..] array */
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)sizeof(long) * (2 + ARR + 64);
    MT_MPI(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &mem, &win));
    memset(mem, 0, (size_t)bytes);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* Fetch_and_op +1 on rank 0's counter, and the CAS loop. */
    long *fetched = mt_malloc(sizeof(long) * N);
    const long one = 1;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++) {
        MT_MPI(
            MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, 0, 0, MPI_SUM, win));
        long old, cur = 0, want;
        MT_MPI(MPI_Fetch_and_op(NULL, &cur, MPI_LONG, 0, 1, MPI_NO_OP, win));
        for (;;) {
            want = cur + 1;
            MT_MPI(
                MPI_Compare_and_swap(&want, &cur, &old, MPI_LONG, 0, 1, win));
            if (old == cur)
                break;
            cur = old;
        }
    }
    MT_MPI(MPI_Win_unlock_all(win));
    for (int i = 1; i < N; i++)
        MT_CHECK(fetched[i] > fetched[i - 1], "fetched values increase");
    long *all = mt_malloc(sizeof(long) * N * (size_t)n);
    MT_MPI(
        MPI_Allgather(fetched, N, MPI_LONG, all, N, MPI_LONG, MPI_COMM_WORLD));
    if (me == 0) {
        /* Every value 0..N*n-1 fetched exactly once. */
        char *seen = calloc((size_t)N * (size_t)n, 1);
        for (int i = 0; i < N * n; i++) {
            MT_CHECK(all[i] >= 0 && all[i] < (long)N * n && !seen[all[i]],
                     "fetched value %ld unique and in range", all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        MT_EQ(mem[0], (long)N * n, "fetch-and-op counter");
        MT_EQ(mem[1], (long)N * n, "compare-and-swap counter");
    }

    /* Accumulate SUM from every rank into every rank's array. */
    long contrib[ARR];
    for (int i = 0; i < ARR; i++)
        contrib[i] = (long)(me + 1) * (i + 1);
    MT_MPI(MPI_Win_fence(0, win));
    for (int t = 0; t < n; t++)
        for (int rep = 0; rep < 5; rep++)
            MT_MPI(MPI_Accumulate(contrib, ARR, MPI_LONG, t, 2, ARR, MPI_LONG,
                                  MPI_SUM, win));
    MT_MPI(MPI_Win_fence(0, win));
    long tri = (long)n * (n + 1) / 2;
    for (int i = 0; i < ARR; i++)
        MT_EQ(mem[2 + i], 5 * tri * (i + 1), "accumulated sum");

    /* Get_accumulate: NO_OP reads; REPLACE swaps. */
    long res[ARR], mine[ARR];
    for (int i = 0; i < ARR; i++)
        mine[i] = -(long)me;
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (me + 1) % n, 0, win));
    MT_MPI(MPI_Get_accumulate(NULL, 0, MPI_LONG, res, ARR, MPI_LONG,
                              (me + 1) % n, 2, ARR, MPI_LONG, MPI_NO_OP, win));
    for (int i = 0; i < ARR; i++)
        MT_EQ(res[i], 5 * tri * (i + 1), "get_accumulate NO_OP");
    MT_MPI(MPI_Win_unlock((me + 1) % n, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (me + 1) % n, 0, win));
    MT_MPI(MPI_Get_accumulate(mine, ARR, MPI_LONG, res, ARR, MPI_LONG,
                              (me + 1) % n, 2, ARR, MPI_LONG, MPI_REPLACE,
                              win));
    MT_MPI(MPI_Win_unlock((me + 1) % n, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < ARR; i++) {
        MT_EQ(res[i], 5 * tri * (i + 1), "get_accumulate REPLACE old");
        MT_EQ(mem[2 + i], -(long)((me + n - 1) % n), "REPLACE new");
    }

    /* MAX on doubles from every rank into rank 0, a vector target type
     * (holes untouched). */
    double *dm = (double *)(mem + 2 + ARR); /* 64 doubles */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 64; i++)
        dm[i] = -1.5;
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Datatype vec;
    MT_MPI(MPI_Type_vector(16, 1, 2, MPI_DOUBLE, &vec));
    MT_MPI(MPI_Type_commit(&vec));
    double dv[16];
    for (int i = 0; i < 16; i++)
        dv[i] = me * 10.0 + i;
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MT_MPI(MPI_Accumulate(dv, 16, MPI_DOUBLE, 0, (MPI_Aint)(2 + ARR), 1, vec,
                          MPI_MAX, win));
    MT_MPI(MPI_Win_unlock(0, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        for (int i = 0; i < 32; i++) {
            double want = i % 2 ? -1.5 : (n - 1) * 10.0 + i / 2;
            MT_CHECK(dm[i] == want, "MAX element %d: %g, expected %g", i, dm[i],
                     want);
        }
    MPI_Type_free(&vec);

    /* Request-based operations complete at Wait. */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request rq[4];
    long a = 100 + me, b = 0, c = 0, d = 0;
    int t = (me + 1) % n;
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MT_MPI(MPI_Rput(&a, 1, MPI_LONG, t, 0, 1, MPI_LONG, win, &rq[0]));
    MT_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MT_MPI(MPI_Rget(&b, 1, MPI_LONG, t, 0, 1, MPI_LONG, win, &rq[1]));
    MT_MPI(MPI_Raccumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, win,
                           &rq[2]));
    MT_MPI(MPI_Rget_accumulate(&one, 1, MPI_LONG, &c, 1, MPI_LONG, t, 0, 1,
                               MPI_LONG, MPI_SUM, win, &rq[3]));
    MT_MPI(MPI_Waitall(3, rq + 1, MPI_STATUSES_IGNORE));
    MT_MPI(MPI_Get(&d, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
    MT_MPI(MPI_Win_unlock(t, win));
    MT_EQ(b, 100 + me, "Rget");
    MT_EQ(c, 101 + me, "Rget_accumulate old value");
    MT_EQ(d, 102 + me, "after Raccumulate and Rget_accumulate");

    /* Errors: an op that is not predefined. */
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MT_ERRCLASS(
        MPI_Accumulate(&a, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_OP_NULL, win),
        MPI_ERR_OP, "MPI_OP_NULL");
    MT_ERRCLASS(
        MPI_Accumulate(&a, 1, MPI_LONG, t, bytes, 1, MPI_LONG, MPI_SUM, win),
        MPI_ERR_RMA_RANGE, "accumulate outside the window");
    /* The one-element path (a counter) reports the same errors and
     * touches nothing: outside the window, an op the type does not take,
     * no epoch. */
    long keep = -7;
    MT_ERRCLASS(MPI_Fetch_and_op(&a, &keep, MPI_LONG, t,
                                 (MPI_Aint)(bytes / (int)sizeof(long)), MPI_SUM,
                                 win),
                MPI_ERR_RMA_RANGE, "fetch_and_op outside the window");
    MT_ERRCLASS(MPI_Fetch_and_op(&a, &keep, MPI_LONG, t, -1, MPI_SUM, win),
                MPI_ERR_RMA_RANGE, "fetch_and_op before the window");
    double dx = 1.0, dold = -7.0;
    MT_ERRCLASS(MPI_Fetch_and_op(&dx, &dold, MPI_DOUBLE, t, 0, MPI_BAND, win),
                MPI_ERR_OP, "BAND on a double");
    MT_EQ(keep, -7, "result untouched by refused fetch_and_ops");
    MT_CHECK(dold == -7.0, "result untouched by a refused op");

    MT_MPI(MPI_Win_unlock(t, win));
    MT_MPI(MPI_Win_free(&win));

    /* Mixed operations on one counter, allocated and created windows. */
    char *bm;
    MT_MPI(MPI_Win_allocate(512, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &bm, &win));
    MT_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MT_ERRCLASS(MPI_Fetch_and_op(&a, &keep, MPI_LONG, t, 0, MPI_SUM, win),
                MPI_ERR_RMA_SYNC, "fetch_and_op outside an epoch");
    MT_EQ(keep, -7, "result untouched outside an epoch");
    mixed_all(win, bm, "allocated");
    MT_MPI(MPI_Win_free(&win));
    bm = mt_malloc(512);
    MT_MPI(MPI_Win_create(bm, 512, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    mixed_all(win, bm, "created");
    MT_MPI(MPI_Win_free(&win));
    free(bm);

    free(fetched);
    free(all);
    return mt_finish("rma_atomic");
}
