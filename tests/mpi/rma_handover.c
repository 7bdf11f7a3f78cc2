/* SPDX-License-Identifier: MIT */
/* The one-sided hand-over (src/rma/ho.c) on windows on user memory
 * (Win_create; `--dynamic`: Win_create_dynamic + Win_attach):
 * 1. passive target right after the target was inside MPI: rank 0 leaves
 *    a barrier (its beat fresh, so origins try to hand over first) and
 *    computes without calling MPI until every origin has put a value and
 *    a flag, read rank 0's answer back with MPI_Get, and put a second
 *    flag; so every put and get completed without the target's help;
 * 2. accumulate atomicity with both paths at once: every rank adds 1 to
 *    one counter of rank 0, K times - odd origins with Fetch_and_op
 *    (contiguous: by box when rank 0 is inside MPI, by single copy when it
 *    is not), even origins with Get_accumulate through a resized target
 *    type (never by box), every third operation an Accumulate without a
 *    result (posted, settled by the next operation or flush), and rank 0
 *    itself with Fetch_and_op on its own memory - while rank 0 alternates
 *    computing outside MPI and polling inside it (MPI_Iprobe). Every
 *    fetched value is unique, the final count exact;
 * 3. puts and gets of 1 B .. 16 KiB + 1 read back intact (guard bytes
 *    untouched) while rank 0 waits in MPI_Barrier. */
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "mpitest.h"

#define K 400      /* increments per rank */
#define BIG 16385  /* largest block of phase 3 (just past a box) */
#define NSLOTS 256 /* per-origin slots of phase 1 */

struct mem {
    long counter;
    long pad[7];
    long val[NSLOTS];
    long flag[NSLOTS];
    long answer[NSLOTS];
    unsigned char blocks[]; /* phase 3: per origin BIG + 2 guard bytes */
};

static long load(const long *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Outside MPI for 'us' microseconds (yielding: ranks may share cores). */
static void compute(double us)
{
    double end = now() + us * 1e-6;
    unsigned i = 0;
    while (now() < end)
        if (++i % 64 == 0)
            sched_yield();
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    /* Windows on user memory Ferry can move onto shared pages are reached
     * by loads and stores (src/rma/remap.c), never by the hand-over: keep
     * them on user memory unless the run asks otherwise (a variant runs
     * the checks on moved pages too). */
    setenv("FERRY_RMA_REMAP", "0", 0);
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    bool dynamic = argc > 1 && !strcmp(argv[1], "--dynamic");
    MT_CHECK(n <= NSLOTS, "at most %d ranks", NSLOTS);
    size_t bsz = BIG + 2;
    size_t bytes = sizeof(struct mem) + bsz * (size_t)n;
    struct mem *m = mt_malloc(bytes);
    memset(m, 0, bytes);
    MPI_Win win;
    MPI_Aint base = 0; /* rank 0's address (dynamic) */
    if (dynamic) {
        MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MT_MPI(MPI_Win_attach(win, m, (MPI_Aint)bytes));
        MT_MPI(MPI_Get_address(m, &base));
        MT_MPI(MPI_Bcast(&base, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    } else {
        MT_MPI(MPI_Win_create(m, (MPI_Aint)bytes, 1, MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
    }
#define AT(field) (base + (MPI_Aint)offsetof(struct mem, field))

    /* ---- 1. passive target, the target just out of MPI ---- */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        int done = 0;
        unsigned long spins = 0;
        while (done < n - 1) {
            done = 0;
            for (int r = 1; r < n; r++) {
                long f = load(&m->flag[r]);
                if (f >= 1 && load(&m->answer[r]) == 0) {
                    MT_EQ(load(&m->val[r]), 1000L + r, "value with its flag");
                    __atomic_store_n(&m->answer[r], 5000L + r,
                                     __ATOMIC_RELEASE);
                }
                done += f == 2;
            }
            if (++spins % 64 == 0)
                sched_yield();
        }
    } else {
        long v = 1000 + me, one = 1, two = 2, ans = 0;
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MT_MPI(MPI_Put(&v, 1, MPI_LONG, 0,
                       AT(val) + (MPI_Aint)sizeof(long) * me, 1, MPI_LONG,
                       win));
        MT_MPI(MPI_Win_flush(0, win));
        MT_MPI(MPI_Put(&one, 1, MPI_LONG, 0,
                       AT(flag) + (MPI_Aint)sizeof(long) * me, 1, MPI_LONG,
                       win));
        MT_MPI(MPI_Win_flush(0, win));
        while (ans == 0) {
            MT_MPI(MPI_Get(&ans, 1, MPI_LONG, 0,
                           AT(answer) + (MPI_Aint)sizeof(long) * me, 1,
                           MPI_LONG, win));
            MT_MPI(MPI_Win_flush(0, win));
        }
        MT_EQ(ans, 5000L + me, "answer read while the target computed");
        MT_MPI(MPI_Put(&two, 1, MPI_LONG, 0,
                       AT(flag) + (MPI_Aint)sizeof(long) * me, 1, MPI_LONG,
                       win));
        MT_MPI(MPI_Win_unlock(0, win));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    /* ---- 2. one counter, both paths ---- */
    long total = (long)K * n;
    long *got = mt_malloc(sizeof(long) * K);
    int nfetched = 0;
    MPI_Datatype spaced; /* one long, extent 16: not contiguous */
    MT_MPI(MPI_Type_create_resized(MPI_LONG, 0, 16, &spaced));
    MT_MPI(MPI_Type_commit(&spaced));
    MT_MPI(MPI_Win_lock_all(0, win));
    long one = 1;
    if (me == 0) {
        int mine = 0;
        int flag;
        while (mine < K || load(&m->counter) < total) {
            compute(50 + (mine % 7) * 30);
            double end = now() + 100e-6;
            while (now() < end)
                MT_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag,
                                  MPI_STATUS_IGNORE));
            for (int j = 0; j < 8 && mine < K; j++, mine++) {
                MT_MPI(MPI_Fetch_and_op(&one, &got[nfetched++], MPI_LONG, 0,
                                        AT(counter), MPI_SUM, win));
                MT_MPI(MPI_Win_flush(0, win));
            }
        }
    } else {
        for (int i = 0; i < K; i++) {
            if (i % 3 == 2) {
                MT_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, AT(counter), 1,
                                      MPI_LONG, MPI_SUM, win));
            } else if (me % 2) {
                MT_MPI(MPI_Fetch_and_op(&one, &got[nfetched++], MPI_LONG, 0,
                                        AT(counter), MPI_SUM, win));
            } else {
                MT_MPI(MPI_Get_accumulate(&one, 1, MPI_LONG, &got[nfetched++],
                                          1, MPI_LONG, 0, AT(counter), 1,
                                          spaced, MPI_SUM, win));
            }
            if (i % 5 == 4)
                MT_MPI(MPI_Win_flush(0, win));
        }
    }
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        MT_EQ(load(&m->counter), total, "final count");
    int *counts = me == 0 ? mt_malloc(sizeof(int) * (size_t)n) : NULL;
    MT_MPI(MPI_Gather(&nfetched, 1, MPI_INT, counts, 1, MPI_INT, 0,
                      MPI_COMM_WORLD));
    int *displs = me == 0 ? mt_malloc(sizeof(int) * (size_t)n) : NULL;
    int all = 0;
    if (me == 0)
        for (int r = 0; r < n; r++) {
            displs[r] = all;
            all += counts[r];
        }
    long *every = me == 0 ? mt_malloc(sizeof(long) * (size_t)(all + 1)) : NULL;
    MT_MPI(MPI_Gatherv(got, nfetched, MPI_LONG, every, counts, displs, MPI_LONG,
                       0, MPI_COMM_WORLD));
    if (me == 0) {
        qsort(every, (size_t)all, sizeof(long), cmp_long);
        for (int i = 0; i < all; i++) {
            MT_CHECK(every[i] >= 0 && every[i] < total,
                     "fetched value %ld outside [0, %ld)", every[i], total);
            MT_CHECK(i == 0 || every[i] != every[i - 1],
                     "fetched value %ld twice", every[i]);
        }
    }
    MT_MPI(MPI_Type_free(&spaced));

    /* ---- 3. sizes around the box, the target in MPI_Barrier ---- */
    unsigned char *buf = mt_malloc(BIG), *back = mt_malloc(BIG);
    MPI_Aint blk = AT(blocks) + (MPI_Aint)(bsz * (size_t)me);
    if (me != 0) {
        static const int sizes[] = {1, 8, 64, 1000, 4096, 16384, BIG};
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            int len = sizes[s];
            mt_fill(buf, (size_t)len, (uint32_t)(me * 100 + len));
            MT_MPI(MPI_Put(buf, len, MPI_BYTE, 0, blk + 1, len, MPI_BYTE, win));
            memset(back, 0, (size_t)len);
            MT_MPI(
                MPI_Get(back, len, MPI_BYTE, 0, blk + 1, len, MPI_BYTE, win));
            MT_MPI(MPI_Win_flush(0, win));
            MT_VERIFY(back, (size_t)len, (uint32_t)(me * 100 + len),
                      "block read back");
        }
        MT_MPI(MPI_Win_unlock(0, win));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        for (int r = 1; r < n; r++) {
            unsigned char *b = m->blocks + bsz * (size_t)r;
            MT_EQ((int)b[0], 0, "guard byte before");
            MT_VERIFY(b + 1, BIG, (uint32_t)(r * 100 + BIG), "last block");
            MT_EQ((int)b[BIG + 1], 0, "guard byte after");
        }

    if (dynamic)
        MT_MPI(MPI_Win_detach(win, m));
    MT_MPI(MPI_Win_free(&win));
    free(m);
    free(got);
    free(buf);
    free(back);
    free(counts);
    free(displs);
    free(every);
    return mt_finish("rma_handover");
}
