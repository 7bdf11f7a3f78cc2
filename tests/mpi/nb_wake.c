/* SPDX-License-Identifier: MIT */
/* No lost wake-ups in MPI_Wait on nonblocking collectives when ranks
 * outnumber cores (and so sleep on their doorbells). A nonblocking
 * collective often finishes inside the progress pass of the waiting
 * rank's own wait loop - the last publication it needed arrived during
 * its last yield - and that pass used to report no work, so the rank went
 * to sleep with its request already complete and nobody left to wake it:
 * the 20 ms safety timeout ended the sleep (30 times in 100 runs of OSU's
 * 4-rank i-benchmarks). Thousands of short Ibarrier, Iallgather,
 * Ialltoall and Ibcast calls, every result checked, then the
 * ferry_doorbell_lost_wakeups counter (MPI_T: sleeps that the safety
 * timeout ended and that found what they waited for already there) must
 * be 0; the old code lost 3-19 wake-ups per rank in a run of this test. A
 * timeout that found nothing (a peer a loaded machine kept off its core
 * for 20 ms) is not a lost wake-up and is only reported. */
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>

#ifndef NB_WAKE_ROUNDS
#define NB_WAKE_ROUNDS 10000
#endif

/* One member per round comes late by about 30 us (a busy loop), so the
 * others go through their spins and yields and sleep meanwhile. */
static void late(double us)
{
    double until = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < until)
        ;
}

static int pvar_index(const char *name)
{
    int i = -1;
    MT_MPI(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i));
    return i;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, p = mt_size, provided = 0;
    MT_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_T_pvar_session ses;
    MT_MPI(MPI_T_pvar_session_create(&ses));
    static const char *const names[3] = {"ferry_doorbell_sleeps",
                                         "ferry_doorbell_sleep_timeouts",
                                         "ferry_doorbell_lost_wakeups"};
    MPI_T_pvar_handle h[3];
    unsigned long long before[3], after[3];
    for (int k = 0; k < 3; k++) {
        int cnt = 0;
        MT_MPI(MPI_T_pvar_handle_alloc(ses, pvar_index(names[k]), NULL, &h[k],
                                       &cnt));
        MT_MPI(MPI_T_pvar_read(ses, h[k], &before[k]));
    }

    int64_t *all = mt_malloc(sizeof(*all) * (size_t)p);
    int64_t *out = mt_malloc(sizeof(*out) * (size_t)p);
    int64_t *in = mt_malloc(sizeof(*in) * (size_t)p);
    for (int round = 0; round < NB_WAKE_ROUNDS; round++) {
        MPI_Request rq;
        int64_t mine = (int64_t)round * 1000 + me;
        if (me == round % p)
            late(30);
        switch (round % 4) {
        case 0:
            MT_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            break;
        case 1:
            MT_MPI(MPI_Iallgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T,
                                  MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int r = 0; r < p; r++)
                MT_EQ(all[r], (int64_t)round * 1000 + r, "Iallgather block");
            break;
        case 2:
            for (int r = 0; r < p; r++)
                out[r] = ((int64_t)round * 1000 + me) * 100 + r;
            MT_MPI(MPI_Ialltoall(out, 1, MPI_INT64_T, in, 1, MPI_INT64_T,
                                 MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int r = 0; r < p; r++)
                MT_EQ(in[r], ((int64_t)round * 1000 + r) * 100 + me,
                      "Ialltoall block");
            break;
        default: {
            int root = (round / 4) % p;
            int64_t v = me == root ? round : -1;
            MT_MPI(MPI_Ibcast(&v, 1, MPI_INT64_T, root, MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MT_EQ(v, (int64_t)round, "Ibcast value");
            break;
        }
        }
        /* As OSU's i-benchmarks: a barrier between rounds. */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int k = 0; k < 3; k++) {
        MT_MPI(MPI_T_pvar_read(ses, h[k], &after[k]));
        MT_MPI(MPI_T_pvar_handle_free(ses, &h[k]));
    }
    MT_MPI(MPI_T_pvar_session_free(&ses));
    MT_CHECK(after[2] == before[2],
             "rank %d: %llu lost wake-ups (%llu of %llu doorbell sleeps "
             "ended by the safety timeout)",
             me, after[2] - before[2], after[1] - before[1],
             after[0] - before[0]);
    if (after[1] != before[1])
        fprintf(stderr,
                "nb_wake: rank %d: %llu sleeps ended by the safety timeout, "
                "none lost\n",
                me, after[1] - before[1]);
    free(all);
    free(out);
    free(in);
    MT_MPI(MPI_T_finalize());
    return mt_finish("nb_wake");
}
