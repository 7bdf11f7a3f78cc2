/* SPDX-License-Identifier: MIT */
/* Atomics on a window: every rank does MPI_Fetch_and_op(+1) N times on one
 * counter (each fetched value unique across the job, the final value
 * exact), a compare-and-swap loop adding 1 to another counter, MPI_SUM
 * accumulates of an array from every rank, MPI_Get_accumulate with
 * MPI_NO_OP and MPI_REPLACE, MAX on doubles, accumulate into a derived
 * target type, and the request-based Rput/Rget/Raccumulate/
 * Rget_accumulate. */
#include "mpitest.h"

#define N 200
#define ARR 64

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
    MT_MPI(MPI_Win_unlock(t, win));

    MT_MPI(MPI_Win_free(&win));
    free(fetched);
    free(all);
    return mt_finish("rma_atomic");
}
