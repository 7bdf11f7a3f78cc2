/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE: MPI_Init_thread gives MULTIPLE (and
 * MPI_Query_thread agrees); then four threads per rank use MPI at once,
 * each in its own way, around the ring of ranks:
 *   0: blocking MPI_Sendrecv and MPI_Ssend/MPI_Recv, 0 B to 256 KiB
 *      (eager and rendezvous), every byte checked;
 *   1: MPI_Isend, then MPI_Probe / MPI_Iprobe(MPI_ANY_SOURCE) and a
 *      receive of exactly the probed size, and MPI_Improbe + MPI_Mrecv;
 *   2: eight MPI_Irecv completed by MPI_Waitall / MPI_Testsome loops;
 *   3: collectives (Allreduce, Bcast, Barrier) on a communicator of its
 *      own, duplicated before the threads start.
 * Each thread has its tags, so whatever the interleaving, every message
 * goes where it belongs; a thread blocked in a receive must not keep the
 * others (and through them the other ranks) from progressing. Safe with
 * more ranks than cores: waiting threads give the lock and the core up. */
#include <pthread.h>

#include "mpitest.h"

enum { NTHREADS = 4, ITERS = 40, MAXLEN = 256 * 1024 };

static int right, left;
static MPI_Comm tcomm; /* thread 3's communicator */

static size_t len_of(int t, int i)
{
    static const size_t sizes[] = {0, 8, 100, 4000, 20000, 70000, MAXLEN};
    return sizes[(size_t)(i + t) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static uint32_t seed_of(int src, int t, int i)
{
    return (uint32_t)(src * 100000 + t * 1000 + i);
}

static void *thread0(void *arg)
{
    (void)arg;
    int main_flag = 1;
    MT_MPI(MPI_Is_thread_main(&main_flag));
    MT_EQ(main_flag, 0, "MPI_Is_thread_main in another thread");
    unsigned char *out = malloc(MAXLEN), *in = malloc(MAXLEN);
    MT_CHECK(out && in, "malloc");
    for (int i = 0; i < ITERS; i++) {
        size_t n = len_of(0, i);
        mt_fill(out, n, seed_of(mt_rank, 0, i));
        MPI_Status st;
        if (i % 2 == 0 || mt_size == 1) { /* Ssend to oneself: no */
            MT_MPI(MPI_Sendrecv(out, (int)n, MPI_BYTE, right, 10, in, MAXLEN,
                                MPI_BYTE, left, 10, MPI_COMM_WORLD, &st));
        } else if (mt_rank % 2 == 0) {
            MT_MPI(MPI_Ssend(out, (int)n, MPI_BYTE, right, 10, MPI_COMM_WORLD));
            MT_MPI(
                MPI_Recv(in, MAXLEN, MPI_BYTE, left, 10, MPI_COMM_WORLD, &st));
        } else {
            MT_MPI(
                MPI_Recv(in, MAXLEN, MPI_BYTE, left, 10, MPI_COMM_WORLD, &st));
            MT_MPI(MPI_Ssend(out, (int)n, MPI_BYTE, right, 10, MPI_COMM_WORLD));
        }
        int count = -1;
        MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        MT_EQ(count, len_of(0, i), "thread 0 length");
        MT_VERIFY(in, n, seed_of(left, 0, i), "thread 0 message");
    }
    free(out);
    free(in);
    return NULL;
}

static void *thread1(void *arg)
{
    (void)arg;
    unsigned char *out = malloc(MAXLEN), *in = malloc(MAXLEN);
    MT_CHECK(out && in, "malloc");
    for (int i = 0; i < ITERS; i++) {
        size_t n = len_of(1, i);
        mt_fill(out, n, seed_of(mt_rank, 1, i));
        MPI_Request r;
        MT_MPI(MPI_Isend(out, (int)n, MPI_BYTE, right, 11, MPI_COMM_WORLD, &r));
        MPI_Status st;
        int count = -1;
        switch (i % 3) {
        case 0:
            MT_MPI(MPI_Probe(left, 11, MPI_COMM_WORLD, &st));
            break;
        case 1: {
            int flag = 0;
            while (!flag)
                MT_MPI(
                    MPI_Iprobe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &flag, &st));
            break;
        }
        default: {
            MPI_Message m;
            int flag = 0;
            while (!flag)
                MT_MPI(MPI_Improbe(left, 11, MPI_COMM_WORLD, &flag, &m, &st));
            MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
            MT_MPI(MPI_Mrecv(in, count, MPI_BYTE, &m, &st));
            break;
        }
        }
        MT_EQ(st.MPI_SOURCE, left, "thread 1 source");
        MT_MPI(MPI_Get_count(&st, MPI_BYTE, &count));
        MT_EQ(count, n, "thread 1 probed length");
        if (i % 3 != 2)
            MT_MPI(MPI_Recv(in, count, MPI_BYTE, left, 11, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        MT_VERIFY(in, n, seed_of(left, 1, i), "thread 1 message");
        MT_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    free(out);
    free(in);
    return NULL;
}

enum { BATCH = 8 };

static void *thread2(void *arg)
{
    (void)arg;
    unsigned char *out = malloc((size_t)BATCH * 20000);
    unsigned char *in = malloc((size_t)BATCH * 20000);
    MT_CHECK(out && in, "malloc");
    for (int i = 0; i < ITERS / 4; i++) {
        MPI_Request rr[BATCH], sr[BATCH];
        for (int k = 0; k < BATCH; k++)
            MT_MPI(MPI_Irecv(in + (size_t)k * 20000, 20000, MPI_BYTE, left, 12,
                             MPI_COMM_WORLD, &rr[k]));
        for (int k = 0; k < BATCH; k++) {
            size_t n = (size_t)(k + 1) * 2000;
            mt_fill(out + (size_t)k * 20000, n, seed_of(mt_rank, 2, i * 8 + k));
            MT_MPI(MPI_Isend(out + (size_t)k * 20000, (int)n, MPI_BYTE, right,
                             12, MPI_COMM_WORLD, &sr[k]));
        }
        if (i % 2 == 0) {
            MT_MPI(MPI_Waitall(BATCH, rr, MPI_STATUSES_IGNORE));
        } else {
            int left_ = BATCH;
            while (left_ > 0) {
                int outc = 0, idx[BATCH];
                MT_MPI(
                    MPI_Testsome(BATCH, rr, &outc, idx, MPI_STATUSES_IGNORE));
                if (outc != MPI_UNDEFINED)
                    left_ -= outc;
            }
        }
        MT_MPI(MPI_Waitall(BATCH, sr, MPI_STATUSES_IGNORE));
        for (int k = 0; k < BATCH; k++)
            MT_VERIFY(in + (size_t)k * 20000, (size_t)(k + 1) * 2000,
                      seed_of(left, 2, i * 8 + k), "thread 2 message");
    }
    free(out);
    free(in);
    return NULL;
}

static void *thread3(void *arg)
{
    (void)arg;
    int n = mt_size;
    for (int i = 0; i < ITERS; i++) {
        int v = mt_rank + i, sum = -1;
        MT_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, tcomm));
        MT_EQ(sum, n * (n - 1) / 2 + n * i, "thread 3 Allreduce");
        double b[512];
        int root = i % n;
        if (mt_rank == root)
            for (int k = 0; k < 512; k++)
                b[k] = i * 1000.0 + k;
        MT_MPI(MPI_Bcast(b, 512, MPI_DOUBLE, root, tcomm));
        for (int k = 0; k < 512; k++)
            MT_CHECK(b[k] == i * 1000.0 + k, "thread 3 Bcast element %d", k);
        if (i % 8 == 0)
            MT_MPI(MPI_Barrier(tcomm));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1, q = -1, main_flag = 0;
    MT_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_EQ(provided, MPI_THREAD_MULTIPLE, "provided thread level");
    MT_MPI(MPI_Query_thread(&q));
    MT_EQ(q, MPI_THREAD_MULTIPLE, "MPI_Query_thread");
    MT_MPI(MPI_Is_thread_main(&main_flag));
    MT_EQ(main_flag, 1, "MPI_Is_thread_main in the main thread");
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm));

    void *(*fns[NTHREADS])(void *) = {thread0, thread1, thread2, thread3};
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        MT_CHECK(pthread_create(&th[t], NULL, fns[t], NULL) == 0,
                 "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);

    MT_MPI(MPI_Comm_free(&tcomm));
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("thread_multiple: OK (%d ranks)\n", mt_size);
    MT_MPI(MPI_Finalize());
    return 0;
}
