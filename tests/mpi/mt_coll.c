/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE: two threads per rank (--threads N: 2 to 16) run
 * collectives at once, each on a communicator of its own (Allreduce of
 * 1-300 ints, Bcast from a rotating root, Barrier), every result checked:
 * the blocking collectives over shared memory, each thread in a slot of
 * its own (coll/shm.c), or with FERRY_COLL=p2p the point-to-point ones.
 * With --nb they use MPI_Iallreduce, MPI_Ibcast and MPI_Ibarrier +
 * MPI_Wait. With --split thread 1 splits and frees communicators instead
 * (collectives the library runs inside MPI_Comm_split). First, Allgathers
 * over intercommunicators freed under MULTIPLE. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { ITERS = 600, MAXN = 300 };

enum { MAXT = 16 }; /* the library's thread slots (FY_COLL_TSLOTS) */
static MPI_Comm s_comm[MAXT];
static int s_threads = 2;
static int s_nb;

static void allreduce(int *v, int *s, int n, MPI_Comm c)
{
    if (!s_nb) {
        MT_MPI(MPI_Allreduce(v, s, n, MPI_INT, MPI_SUM, c));
        return;
    }
    MPI_Request rq;
    MT_MPI(MPI_Iallreduce(v, s, n, MPI_INT, MPI_SUM, c, &rq));
    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void bcast(int *b, int root, MPI_Comm c)
{
    if (!s_nb) {
        MT_MPI(MPI_Bcast(b, 1, MPI_INT, root, c));
        return;
    }
    MPI_Request rq;
    MT_MPI(MPI_Ibcast(b, 1, MPI_INT, root, c, &rq));
    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void barrier(MPI_Comm c)
{
    if (!s_nb) {
        MT_MPI(MPI_Barrier(c));
        return;
    }
    MPI_Request rq;
    MT_MPI(MPI_Ibarrier(c, &rq));
    MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

/* --split: thread 1 splits and frees communicators instead (collectives
 * inside the library) while thread 0 runs its collectives. */
static int s_split;

static void split_loop(void)
{
    for (int i = 0; i < ITERS / 4; i++) {
        MPI_Comm c;
        MT_MPI(MPI_Comm_split(s_comm[1], mt_rank % 2, -mt_rank, &c));
        int n = 0;
        MT_MPI(MPI_Comm_size(c, &n));
        MT_EQ(n, (mt_size + (mt_rank % 2 == 0)) / 2, "split size");
        MT_MPI(MPI_Comm_free(&c));
    }
}

static void *run(void *arg)
{
    int t = (int)(long)arg, me = mt_rank, p = mt_size;
    if (t == 1 && s_split) {
        split_loop();
        return NULL;
    }
    int v[MAXN], s[MAXN];
    for (int i = 0; i < ITERS; i++) {
        int n = 1 + (i * 7 + t) % MAXN;
        for (int k = 0; k < n; k++)
            v[k] = me * 1000 + i + k + t;
        allreduce(v, s, n, s_comm[t]);
        for (int k = 0; k < n; k++) {
            int want = 1000 * p * (p - 1) / 2 + p * (i + k + t);
            if (s[k] != want)
                MT_FAIL("thread %d iteration %d: element %d is %d, not %d", t,
                        i, k, s[k], want);
        }
        int b = me == i % p ? i * 3 + t : -1;
        bcast(&b, i % p, s_comm[t]);
        MT_EQ(b, i * 3 + t, "broadcast value");
        if (i % 10 == 0)
            barrier(s_comm[t]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MT_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--nb") == 0)
            s_nb = 1;
        else if (strcmp(argv[i], "--split") == 0)
            s_split = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            s_threads = atoi(argv[++i]);
    MT_CHECK(s_threads >= 2 && s_threads <= MAXT, "--threads 2 to %d", MAXT);
    if (getenv("MT_COLL_SPLIT")) /* for scripts that pass no arguments */
        s_split = 1;
    /* Intercommunicators' collectives and frees under MULTIPLE, whose
     * contexts were just those of intracommunicators with publications
     * in our collective cells (freeing one checks the cells). */
    for (int round = 0; round < 4; round++) {
        MPI_Comm d, half, inter;
        int one = 1, sum = 0;
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MT_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
        MT_EQ(sum, mt_size, "allreduce before the intercommunicator");
        MT_MPI(MPI_Comm_free(&d));
        int color = mt_rank % 2;
        MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &half));
        MT_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7,
                                    &inter));
        int rs = 0, v = mt_rank, all[64];
        MT_MPI(MPI_Comm_remote_size(inter, &rs));
        MT_CHECK(rs <= 64, "remote size");
        MT_MPI(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, inter));
        for (int k = 0; k < rs; k++)
            MT_EQ(all[k], 2 * k + 1 - color, "intercommunicator allgather");
        MT_MPI(MPI_Comm_free(&inter));
        MT_MPI(MPI_Comm_free(&half));
    }
    for (int t = 0; t < s_threads; t++)
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &s_comm[t]));
    pthread_t th[MAXT];
    for (long t = 0; t < s_threads; t++)
        MT_CHECK(pthread_create(&th[t], NULL, run, (void *)t) == 0,
                 "pthread_create");
    for (int t = 0; t < s_threads; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < s_threads; t++)
        MT_MPI(MPI_Comm_free(&s_comm[t]));
    return mt_finish("mt_coll");
}
