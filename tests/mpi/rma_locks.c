/* SPDX-License-Identifier: MIT */
/* Passive-target locks under contention, on Win_allocate and Win_create
 * windows, with the first and the last rank as targets (under FERRY_NODES
 * a target has origins on its own node and on the other one; a lock to
 * another node is taken with the first request of the epoch):
 * - counter: every rank K times takes an exclusive lock, reads the
 *   target's counter (Get, flush), writes it back plus one (Put) and
 *   unlocks: the counter ends at exactly K * size;
 * - exclusive blocks: every rank K times puts its stamp into one shared
 *   block int by int under an exclusive lock, flushes and reads the block
 *   back: every int is its own stamp (nobody wrote between);
 * - accumulates and fetch-and-op under shared locks: exact sums, every
 *   fetched value seen once;
 * - epochs that send nothing (lock and unlock alone, lock_all with a flush
 *   and no operation), a lock_all that uses one target, and one that
 *   accumulates to every rank (unlock_all releases them all at once). */
#include "mpitest.h"

#define K 40
#define BLOCK 64
#define WINTS (4 + BLOCK + 4 * 1024)
/* Window layout, ints: [0] counter, [1] accumulate sum, [2] fetch-and-op
 * counter, [4..4+BLOCK) the shared block, then the rank's own values. */
#define AT_COUNT 0
#define AT_SUM 1
#define AT_FOP 2
#define AT_BLOCK 4
#define AT_OWN (4 + BLOCK)

static int me, np;

static void counter(MPI_Win win, int *mem, int t)
{
    for (int k = 0; k < K; k++) {
        int v = -1;
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MT_MPI(MPI_Get(&v, 1, MPI_INT, t, AT_COUNT, 1, MPI_INT, win));
        MT_MPI(MPI_Win_flush(t, win));
        MT_CHECK(v >= 0 && v < K * np, "counter read %d", v);
        v++;
        MT_MPI(MPI_Put(&v, 1, MPI_INT, t, AT_COUNT, 1, MPI_INT, win));
        MT_MPI(MPI_Win_unlock(t, win));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == t) {
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MT_EQ(mem[AT_COUNT], K * np, "counter after every increment");
        MT_MPI(MPI_Win_unlock(t, win));
    }
}

static void blocks(MPI_Win win, int t)
{
    int got[BLOCK];
    for (int k = 0; k < K; k++) {
        int stamp = me * 1000 + k;
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        for (int i = 0; i < BLOCK; i++)
            MT_MPI(
                MPI_Put(&stamp, 1, MPI_INT, t, AT_BLOCK + i, 1, MPI_INT, win));
        MT_MPI(MPI_Win_flush(t, win));
        MT_MPI(MPI_Get(got, BLOCK, MPI_INT, t, AT_BLOCK, BLOCK, MPI_INT, win));
        MT_MPI(MPI_Win_unlock(t, win));
        for (int i = 0; i < BLOCK; i++)
            MT_EQ(got[i], stamp, "block int under an exclusive lock");
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void shared_ops(MPI_Win win, int *mem, int t)
{
    char *seen = mt_malloc((size_t)(K * np));
    memset(seen, 0, (size_t)(K * np));
    int one = 1, *fetched = mt_malloc(sizeof(int) * K);
    for (int k = 0; k < K; k++) {
        int add = me + 1;
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MT_MPI(MPI_Accumulate(&add, 1, MPI_INT, t, AT_SUM, 1, MPI_INT, MPI_SUM,
                              win));
        MT_MPI(MPI_Fetch_and_op(&one, &fetched[k], MPI_INT, t, AT_FOP, MPI_SUM,
                                win));
        MT_MPI(MPI_Win_unlock(t, win));
    }
    /* Every fetched value 0..K*np-1 exactly once across the ranks. */
    int *all = mt_malloc(sizeof(int) * (size_t)(K * np));
    MT_MPI(MPI_Allgather(fetched, K, MPI_INT, all, K, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < K * np; i++) {
        MT_CHECK(all[i] >= 0 && all[i] < K * np, "fetched %d", all[i]);
        MT_CHECK(!seen[all[i]], "value %d fetched twice", all[i]);
        seen[all[i]] = 1;
    }
    if (me == t) {
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MT_EQ(mem[AT_SUM], K * np * (np + 1) / 2, "accumulated sum");
        MT_EQ(mem[AT_FOP], K * np, "fetch-and-op counter");
        MT_MPI(MPI_Win_unlock(t, win));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    free(seen);
    free(fetched);
    free(all);
}

/* Epochs that send nothing, and a lock_all that reads one target. */
static void quiet_epochs(MPI_Win win, const int *mem)
{
    for (int t = 0; t < np; t++) {
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MT_MPI(MPI_Win_unlock(t, win));
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MT_MPI(MPI_Win_flush(t, win));
        MT_MPI(MPI_Win_unlock(t, win));
    }
    MT_MPI(MPI_Win_lock_all(0, win));
    MT_MPI(MPI_Win_flush_all(win));
    MT_MPI(MPI_Win_unlock_all(win));
    int next = (me + 1) % np, vals[16];
    MT_MPI(MPI_Win_lock_all(0, win));
    MT_MPI(MPI_Get(vals, 16, MPI_INT, next, AT_OWN, 16, MPI_INT, win));
    MT_MPI(MPI_Win_unlock_all(win));
    for (int i = 0; i < 16; i++)
        MT_EQ(vals[i], next * 100 + i, "lock_all read of the next rank");
    /* A lock_all whose unlock_all releases every target at once, each
     * lock travelling with the accumulate it carries. */
    int one = 1;
    MT_MPI(MPI_Win_lock_all(0, win));
    for (int t = 0; t < np; t++)
        MT_MPI(MPI_Accumulate(&one, 1, MPI_INT, t, AT_OWN + 16, 1, MPI_INT,
                              MPI_SUM, win));
    MT_MPI(MPI_Win_unlock_all(win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    MT_EQ(mem[AT_OWN + 16], np, "one accumulate from every rank");
    MT_MPI(MPI_Win_unlock(me, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void run(int *mem, MPI_Win win)
{
    MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    memset(mem, 0, sizeof(int) * WINTS);
    for (int i = 0; i < 16; i++)
        mem[AT_OWN + i] = me * 100 + i;
    MT_MPI(MPI_Win_unlock(me, win));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int targets[2] = {0, np - 1};
    for (int i = 0; i < (np > 1 ? 2 : 1); i++) {
        counter(win, mem, targets[i]);
        blocks(win, targets[i]);
        shared_ops(win, mem, targets[i]);
    }
    quiet_epochs(win, mem);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    me = mt_rank;
    np = mt_size;
    MPI_Aint bytes = (MPI_Aint)(sizeof(int) * WINTS);
    int *mem;
    MPI_Win win;
    MT_MPI(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &mem, &win));
    run(mem, win);
    MT_MPI(MPI_Win_free(&win));

    int *own = mt_malloc((size_t)bytes);
    MT_MPI(MPI_Win_create(own, bytes, sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    run(own, win);
    MT_MPI(MPI_Win_free(&win));
    free(own);
    return mt_finish("rma_locks");
}
