/* SPDX-License-Identifier: MIT */
/* Passive target: rank 0 computes in a loop without calling MPI, watching
 * a flag in its own window memory; every other rank, under an exclusive
 * lock, puts a block and then the flag. Rank 0 checks the block the moment
 * it sees its flag, answers by storing into its window, and the origin
 * reads the answer with MPI_Get under a shared lock while rank 0 is still
 * outside MPI. So every put and get completed without the target's help. */
#include <sched.h>
#include <stddef.h>

#include "mpitest.h"

#define BLOCK 8192

struct slot {
    unsigned char data[BLOCK];
    int flag;   /* set by the origin's put */
    int answer; /* set by the target's own store */
};

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size;
    struct slot *mem;
    MPI_Win win;
    MPI_Aint bytes = me == 0 ? (MPI_Aint)(sizeof(struct slot) * (size_t)n) : 0;
    MT_MPI(
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    if (me == 0)
        memset(mem, 0, (size_t)bytes);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    if (me == 0) {
        /* No MPI call until every origin has been served. */
        int served = 0;
        unsigned long spins = 0;
        while (served < n - 1) {
            for (int r = 1; r < n; r++) {
                struct slot *s = &mem[r];
                if (__atomic_load_n(&s->flag, __ATOMIC_ACQUIRE) != 1)
                    continue;
                MT_VERIFY(s->data, BLOCK, (uint32_t)(500 + r),
                          "block seen with its flag");
                __atomic_store_n(&s->answer, 4200 + r, __ATOMIC_RELEASE);
                __atomic_store_n(&s->flag, 2, __ATOMIC_RELEASE);
                served++;
            }
            if (++spins % 64 == 0)
                sched_yield(); /* ranks may outnumber cores */
        }
    } else {
        unsigned char *buf = mt_malloc(BLOCK);
        mt_fill(buf, BLOCK, (uint32_t)(500 + me));
        MPI_Aint at = (MPI_Aint)(sizeof(struct slot) * (size_t)me);
        int one = 1;
        MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MT_MPI(MPI_Put(buf, BLOCK, MPI_BYTE, 0, at, BLOCK, MPI_BYTE, win));
        MT_MPI(MPI_Win_flush(0, win)); /* the data before the flag */
        MT_MPI(MPI_Put(&one, 1, MPI_INT, 0,
                       at + (MPI_Aint)offsetof(struct slot, flag), 1, MPI_INT,
                       win));
        MT_MPI(MPI_Win_unlock(0, win));
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
        free(buf);
    }
    MT_MPI(MPI_Win_free(&win));
    return mt_finish("rma_passive");
}
