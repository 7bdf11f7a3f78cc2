/* SPDX-License-Identifier: MIT */
/* The large-count (MPI-4 "_c") one-sided calls: Win_create_c,
 * Win_allocate_c, Win_allocate_shared_c with Win_shared_query_c, and
 * Put_c, Get_c, Accumulate_c, Get_accumulate_c (fence epochs) and Rput_c,
 * Rget_c, Raccumulate_c, Rget_accumulate_c (passive target), each run on
 * a window of its own next to the same operations through the int forms:
 * the two windows, origin and result buffers must end byte for byte equal
 * and hold the expected values. A disp_unit beyond INT_MAX is
 * MPI_ERR_DISP. */
#include "mpitest.h"

#include <limits.h>
#include <stdbool.h>

enum { K = 8 }; /* ints per rank slot */

static int P, R, left, right;

static int v(int src, int i)
{
    return src * 1000 + i + 1;
}

/* Run the sequence on win (memory mem of P * K ints) through the _c
 * forms (wide) or the int ones; results land in got (3 * K ints). */
static void run(MPI_Win win, int *mem, bool wide, int *got)
{
    int src[K];
    for (int i = 0; i < K; i++)
        src[i] = v(R, i);
    for (int i = 0; i < P * K; i++)
        mem[i] = 0;
    for (int i = 0; i < 3 * K; i++)
        got[i] = -1;
    MT_MPI(MPI_Win_fence(0, win));
    /* Slot R at the right neighbour: Put then Accumulate (x2). */
    if (wide) {
        MT_MPI(MPI_Put_c(src, K, MPI_INT, right, (MPI_Aint)R * K, K, MPI_INT,
                         win));
    } else {
        MT_MPI(
            MPI_Put(src, K, MPI_INT, right, (MPI_Aint)R * K, K, MPI_INT, win));
    }
    MT_MPI(MPI_Win_fence(0, win));
    if (wide)
        MT_MPI(MPI_Accumulate_c(src, K, MPI_INT, right, (MPI_Aint)R * K, K,
                                MPI_INT, MPI_SUM, win));
    else
        MT_MPI(MPI_Accumulate(src, K, MPI_INT, right, (MPI_Aint)R * K, K,
                              MPI_INT, MPI_SUM, win));
    MT_MPI(MPI_Win_fence(0, win));
    /* Read back what the left neighbour put here, from its own slot on us
     * (Get) and fetch-and-add it (Get_accumulate). */
    if (wide) {
        MT_MPI(
            MPI_Get_c(got, K, MPI_INT, R, (MPI_Aint)left * K, K, MPI_INT, win));
    } else {
        MT_MPI(
            MPI_Get(got, K, MPI_INT, R, (MPI_Aint)left * K, K, MPI_INT, win));
    }
    MT_MPI(MPI_Win_fence(0, win));
    if (wide)
        MT_MPI(MPI_Get_accumulate_c(src, K, MPI_INT, got + K, K, MPI_INT, right,
                                    (MPI_Aint)R * K, K, MPI_INT, MPI_SUM, win));
    else
        MT_MPI(MPI_Get_accumulate(src, K, MPI_INT, got + K, K, MPI_INT, right,
                                  (MPI_Aint)R * K, K, MPI_INT, MPI_SUM, win));
    MT_MPI(MPI_Win_fence(0, win));

    /* Passive target: request-based forms. */
    MT_MPI(MPI_Win_lock_all(0, win));
    MPI_Request rq[2];
    if (wide) {
        MT_MPI(MPI_Raccumulate_c(src, K, MPI_INT, right, (MPI_Aint)R * K, K,
                                 MPI_INT, MPI_SUM, win, &rq[0]));
    } else {
        MT_MPI(MPI_Raccumulate(src, K, MPI_INT, right, (MPI_Aint)R * K, K,
                               MPI_INT, MPI_SUM, win, &rq[0]));
    }
    MT_MPI(MPI_Waitall(1, rq, MPI_STATUSES_IGNORE));
    MT_MPI(MPI_Win_flush_all(win));
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock_all(0, win));
    if (wide) {
        MT_MPI(MPI_Rget_c(got + 2 * K, K, MPI_INT, right, (MPI_Aint)R * K, K,
                          MPI_INT, win, &rq[0]));
        MT_MPI(MPI_Rget_accumulate_c(NULL, 0, MPI_INT, mem + 0, 0, MPI_INT,
                                     right, 0, 0, MPI_INT, MPI_NO_OP, win,
                                     &rq[1]));
    } else {
        MT_MPI(MPI_Rget(got + 2 * K, K, MPI_INT, right, (MPI_Aint)R * K, K,
                        MPI_INT, win, &rq[0]));
        MT_MPI(MPI_Rget_accumulate(NULL, 0, MPI_INT, mem + 0, 0, MPI_INT, right,
                                   0, 0, MPI_INT, MPI_NO_OP, win, &rq[1]));
    }
    MT_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    /* Rput_c of the final value, seen by the target after the barrier. */
    MT_MPI(MPI_Win_lock_all(0, win));
    int five[K];
    for (int i = 0; i < K; i++)
        five[i] = 5 * v(R, i);
    if (wide)
        MT_MPI(MPI_Rput_c(five, K, MPI_INT, right, (MPI_Aint)R * K, K, MPI_INT,
                          win, &rq[0]));
    else
        MT_MPI(MPI_Rput(five, K, MPI_INT, right, (MPI_Aint)R * K, K, MPI_INT,
                        win, &rq[0]));
    MT_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_sync(win));
}

static void check(const int *mem, const int *got, const char *what)
{
    for (int i = 0; i < K; i++) {
        MT_EQ(got[i], 2 * v(left, i), what);            /* put + accumulate */
        MT_EQ(got[K + i], 2 * v(R, i), what);           /* at the right one */
        MT_EQ(got[2 * K + i], 4 * v(R, i), what);       /* + get_acc + racc */
        MT_EQ(mem[left * K + i], 5 * v(left, i), what); /* Rput */
    }
}

static void ops(void)
{
    int *mem[2], got[2][3 * K];
    MPI_Win win[2];
    MT_MPI(MPI_Win_allocate(P * K * (MPI_Aint)sizeof(int), sizeof(int),
                            MPI_INFO_NULL, MPI_COMM_WORLD, &mem[0], &win[0]));
    MT_MPI(MPI_Win_allocate_c(P * K * (MPI_Aint)sizeof(int),
                              (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &mem[1], &win[1]));
    for (int w = 0; w < 2; w++) {
        run(win[w], mem[w], w, got[w]);
        check(mem[w], got[w], w ? "_c window" : "int window");
    }
    MT_CHECK(memcmp(got[0], got[1], sizeof(got[0])) == 0,
             "results differ between the int and _c forms");
    MT_CHECK(memcmp(mem[0], mem[1], (size_t)P * K * sizeof(int)) == 0,
             "windows differ between the int and _c forms");
    int *u = mt_malloc((size_t)P * K * sizeof(int));
    MPI_Win wc;
    MT_MPI(MPI_Win_create_c(u, P * K * (MPI_Aint)sizeof(int),
                            (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &wc));
    int gu[3 * K];
    run(wc, u, true, gu);
    check(u, gu, "Win_create_c window");
    MT_CHECK(memcmp(u, mem[0], (size_t)P * K * sizeof(int)) == 0,
             "Win_create_c window differs");
    int *du, flag;
    MT_MPI(MPI_Win_get_attr(wc, MPI_WIN_DISP_UNIT, &du, &flag));
    MT_CHECK(flag && *du == (int)sizeof(int), "MPI_WIN_DISP_UNIT");
    MT_MPI(MPI_Win_free(&wc));
    free(u);
    MT_MPI(MPI_Win_free(&win[0]));
    MT_MPI(MPI_Win_free(&win[1]));
}

static void shared(void)
{
    int *base;
    MPI_Win w;
    MT_MPI(MPI_Win_allocate_shared_c((R + 1) * (MPI_Aint)sizeof(long),
                                     (MPI_Aint)sizeof(long), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &base, &w));
    for (int r = 0; r < P; r++) {
        MPI_Aint sz, szc, duc;
        int du;
        void *p, *pc;
        MT_MPI(MPI_Win_shared_query(w, r, &sz, &du, &p));
        MT_MPI(MPI_Win_shared_query_c(w, r, &szc, &duc, &pc));
        MT_EQ(sz, (r + 1) * (MPI_Aint)sizeof(long), "shared_query size");
        MT_EQ(szc, sz, "Win_shared_query_c size");
        MT_EQ(du, (int)sizeof(long), "shared_query disp_unit");
        MT_EQ(duc, du, "Win_shared_query_c disp_unit");
        MT_CHECK(p == pc, "Win_shared_query_c base");
        if (r == R)
            MT_CHECK(pc == base, "own base");
    }
    MT_MPI(MPI_Win_free(&w));
}

static void errors(void)
{
    MPI_Win w;
    int x;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_ERRCLASS(MPI_Win_create_c(&x, sizeof(x), (MPI_Aint)INT_MAX + 1,
                                 MPI_INFO_NULL, MPI_COMM_WORLD, &w),
                MPI_ERR_DISP, "Win_create_c with disp_unit beyond INT_MAX");
    MT_ERRCLASS(
        MPI_Win_allocate_c(sizeof(x), 0, MPI_INFO_NULL, MPI_COMM_WORLD, &x, &w),
        MPI_ERR_DISP, "Win_allocate_c with disp_unit 0");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    P = mt_size;
    R = mt_rank;
    right = (R + 1) % P;
    left = (R + P - 1) % P;
    ops();
    shared();
    errors();
    return mt_finish("rma_c");
}
