/* SPDX-License-Identifier: MIT */
/* Passive target on user memory (MPI_Win_create, then a dynamic window):
 * rank 0 computes in a loop without calling MPI, watching a flag in its
 * own window memory; every other rank locks, puts a block, flushes, puts
 * the flag, fetch-and-adds a shared counter, unlocks, then reads rank 0's
 * answer with MPI_Get under shared locks while rank 0 is still outside
 * MPI. Rank 0 checks each block the moment it sees its flag and leaves
 * its loop only once every origin has been served and has set its 'done'
 * mark by a last put (so they all finished before it came back), then
 * checks the counter. With cma or procmem the origins reach rank 0's
 * memory themselves; with FERRY_XFER=shmbuf|queue|net the requests are
 * served by rank 0's progress thread (FERRY_RMA_THREAD=auto): without
 * one this program would wait for rank 0 forever. */
#include <sched.h>
#include <stddef.h>

#include "mpitest.h"

#define BLOCK 8192

struct slot {
    unsigned char data[BLOCK];
    int flag;   /* set by the origin's put */
    int answer; /* set by the target's own store */
    int done;   /* set by the origin's last put */
};

struct hdr {
    long long counter; /* fetch-and-add by every origin */
};

static void one_round(int dynamic)
{
    int me = mt_rank, n = mt_size;
    size_t bytes = sizeof(struct hdr) + sizeof(struct slot) * (size_t)n;
    unsigned char *mem = mt_malloc(bytes);
    memset(mem, 0, bytes);
    struct hdr *h = (struct hdr *)mem;
    struct slot *sl = (struct slot *)(mem + sizeof(struct hdr));
    MPI_Win win;
    MPI_Aint base0 = 0;
    if (dynamic) {
        MT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MT_MPI(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
        MPI_Aint mine;
        MT_MPI(MPI_Get_address(mem, &mine));
        base0 = mine;
        MT_MPI(MPI_Bcast(&base0, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    } else {
        MT_MPI(MPI_Win_create(mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    if (me == 0) {
        /* No MPI call until every origin has been served and is done. */
        int served = 0, done = 0;
        unsigned long spins = 0;
        while (served < n - 1 || done < n - 1) {
            done = 0;
            for (int r = 1; r < n; r++) {
                struct slot *s = &sl[r];
                if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) == 1)
                    done++;
                if (__atomic_load_n(&s->flag, __ATOMIC_ACQUIRE) != 1)
                    continue;
                MT_VERIFY(s->data, BLOCK, (uint32_t)(700 + r),
                          "block seen with its flag");
                __atomic_store_n(&s->answer, 4200 + r, __ATOMIC_RELEASE);
                __atomic_store_n(&s->flag, 2, __ATOMIC_RELEASE);
                served++;
            }
            if (++spins % 64 == 0)
                sched_yield(); /* ranks may outnumber cores */
        }
        /* Back in MPI only now: every origin finished without us. */
        MT_EQ(__atomic_load_n(&h->counter, __ATOMIC_ACQUIRE), n - 1,
              "counter fetch-and-added by every origin");
    } else {
        unsigned char *buf = mt_malloc(BLOCK);
        mt_fill(buf, BLOCK, (uint32_t)(700 + me));
        MPI_Aint at = base0 + (MPI_Aint)sizeof(struct hdr) +
                      (MPI_Aint)(sizeof(struct slot) * (size_t)me);
        int one = 1;
        long long inc = 1, old = -1;
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MT_MPI(MPI_Put(buf, BLOCK, MPI_BYTE, 0, at, BLOCK, MPI_BYTE, win));
        MT_MPI(MPI_Win_flush(0, win)); /* the data before the flag */
        MT_MPI(MPI_Put(&one, 1, MPI_INT, 0,
                       at + (MPI_Aint)offsetof(struct slot, flag), 1, MPI_INT,
                       win));
        MT_MPI(MPI_Win_unlock(0, win));
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MT_MPI(MPI_Fetch_and_op(&inc, &old, MPI_LONG_LONG, 0, base0, MPI_SUM,
                                win));
        MT_MPI(MPI_Win_unlock(0, win));
        MT_CHECK(old >= 0 && old < n - 1, "fetched counter %lld", old);
        int vals[2] = {0, 0};
        unsigned spins = 0;
        do {
            MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            MT_MPI(MPI_Get(vals, 2, MPI_INT, 0,
                           at + (MPI_Aint)offsetof(struct slot, flag), 2,
                           MPI_INT, win));
            MT_MPI(MPI_Win_unlock(0, win));
            if (++spins % 16 == 0)
                sched_yield();
        } while (vals[0] != 2);
        MT_EQ(vals[1], 4200 + me, "answer read while the target computes");
        MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MT_MPI(MPI_Put(&one, 1, MPI_INT, 0,
                       at + (MPI_Aint)offsetof(struct slot, done), 1, MPI_INT,
                       win));
        MT_MPI(MPI_Win_unlock(0, win));
        free(buf);
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (dynamic)
        MT_MPI(MPI_Win_detach(win, mem));
    MT_MPI(MPI_Win_free(&win));
    free(mem);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    one_round(0);
    one_round(1);
    return mt_finish("rma_am_passive");
}
