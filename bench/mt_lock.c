/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE locking cost: one or two ranks, two threads each.
 * Thread A ping-pongs 8 bytes with the other rank (blocking MPI_Send/
 * MPI_Recv), or on one rank sends them to itself (MPI_Sendrecv: all CPU
 * inside the library, no waiting, so with one lock the threads' calls
 * serialise and with finer locks they overlap); thread B meanwhile loops
 * over other MPI work that needs no message:
 *   dtype  - MPI_Type_vector + MPI_Type_commit + MPI_Type_free
 *   rma    - MPI_Put + MPI_Win_flush of 8 bytes to the other rank's window
 *   query  - MPI_Comm_rank + MPI_Type_size + MPI_Error_string
 *   none   - nothing (thread B exits at once)
 * Prints the ping-pong's one-way latency (median of the repeats; on one
 * rank half the Sendrecv time, for symmetry) and
 * thread B's calls per second. Run it with FERRY_MT_LOCKS=global (one lock
 * for every call) and fine (the default) to see what the finer locks buy.
 * Standard MPI only. Usage: mpiexec -n 1|2 mt_lock [dtype|rma|query|none]
 * [ITERS] [REPEATS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int rank, peer, iters = 20000, repeats = 5;
static const char *work = "dtype";
static MPI_Win win;
static atomic_int stop;
static long long b_calls;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *thread_b(void *arg)
{
    (void)arg;
    long long n = 0;
    int64_t v = rank;
    char s[MPI_MAX_ERROR_STRING];
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        if (!strcmp(work, "dtype")) {
            MPI_Datatype t;
            MPI_Type_vector(4, 2, 3, MPI_INT, &t);
            MPI_Type_commit(&t);
            MPI_Type_free(&t);
        } else if (!strcmp(work, "rma")) {
            MPI_Put(&v, 1, MPI_INT64_T, peer, 0, 1, MPI_INT64_T, win);
            MPI_Win_flush(peer, win);
        } else if (!strcmp(work, "query")) {
            int r, sz, len;
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
            MPI_Type_size(MPI_DOUBLE, &sz);
            MPI_Error_string(MPI_ERR_TRUNCATE, s, &len);
        } else {
            break;
        }
        n++;
    }
    b_calls = n;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        work = argv[1];
    if (argc > 2)
        iters = atoi(argv[2]);
    if (argc > 3)
        repeats = atoi(argv[3]);
    if (size > 2 || provided != MPI_THREAD_MULTIPLE || iters < 1 ||
        repeats < 1 || repeats > 99 ||
        (strcmp(work, "dtype") && strcmp(work, "rma") &&
         strcmp(work, "query") && strcmp(work, "none"))) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiexec -n 1|2 mt_lock [dtype|rma|query|none] "
                    "[ITERS] [REPEATS] (needs MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return 2;
    }
    peer = size - 1 - rank;
    int64_t *base;
    MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);

    pthread_t b;
    pthread_create(&b, NULL, thread_b, NULL);
    double lat[99];
    char msg[8] = {0};
    double t_all = MPI_Wtime();
    for (int r = 0; r < repeats; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            int rc;
            if (size == 1) {
                rc = MPI_Sendrecv(msg, 8, MPI_BYTE, 0, 1, msg, 8, MPI_BYTE, 0,
                                  1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 0) {
                rc = MPI_Send(msg, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                rc |= MPI_Recv(msg, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE);
            } else {
                rc = MPI_Recv(msg, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE);
                rc |= MPI_Send(msg, 8, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
            if (rc != MPI_SUCCESS) {
                fprintf(stderr, "mt_lock: ping-pong failed (%d)\n", rc);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        lat[r] = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    }
    t_all = MPI_Wtime() - t_all;
    atomic_store(&stop, 1);
    pthread_join(b, NULL);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);

    qsort(lat, (size_t)repeats, sizeof(double), cmp_double);
    long long calls[2] = {b_calls, b_calls};
    if (size == 2 && rank == 0)
        MPI_Recv(&calls[1], 1, MPI_LONG_LONG, 1, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    else if (size == 2)
        MPI_Send(&b_calls, 1, MPI_LONG_LONG, 0, 2, MPI_COMM_WORLD);
    if (rank == 0) {
        const char *mode = getenv("FERRY_MT_LOCKS");
        printf("mt_lock ranks=%d work=%s locks=%s latency_us=%.3f "
               "b_calls_per_s=%.0f\n",
               size, work, mode ? mode : "fine", lat[repeats / 2],
               (double)(calls[0] + calls[1]) / 2.0 / t_all);
    }
    MPI_Finalize();
    return 0;
}
