/* SPDX-License-Identifier: MIT */
/* OSU-style windowed bandwidth from rank 0 to rank 1: a window of
 * MPI_Isend/MPI_Irecv, MPI_Waitall, then a 1-byte ack back. Plain standard
 * MPI so the same source builds against Ferry, MPICH and Open MPI. Prints
 * MB/s (10^6 bytes per second). */
#define _GNU_SOURCE /* sched_setaffinity for -b; strtok_r */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench_common.h"

/* Defaults follow osu_bw: window 64, 100 iterations (10 warm-up) for small
 * messages, fewer for large ones (see bw_iters_for). */
#define BW_WINDOW_DEFAULT 64
#define BW_WINDOW_MAX 1024
#define BW_ITERS_DEFAULT 100
#define BW_MIN_ITERS 10
/* Above this many bytes per window the iteration count is scaled down. */
#define BW_BYTES_PER_SIZE ((long long)512 << 20)

struct bw_opts {
    size_t max_size;
    int iters;
    int warmup;
    int repeats;
    int window;
    int bind;
    int nsizes;
    size_t sizes[BENCH_MAX_SIZES];
};

static void bw_usage(FILE *f)
{
    fprintf(f,
            "usage: bench_bw [-m MAX] [-s SIZE[,SIZE...]] [-i ITERS]"
            " [-w WARMUP] [-W WINDOW] [-r REPEATS] [-b]\n"
            "  -m MAX      largest size of the 1,2,4,... sweep (default 4M;"
            " K/M suffixes)\n"
            "  -s SIZES    measure only these sizes (comma separated)\n"
            "  -i ITERS    windows per size (default %d; scaled down so a"
            " size moves ~512 MiB)\n"
            "  -w WARMUP   untimed windows first (default ITERS/10, >= 2)\n"
            "  -W WINDOW   messages in flight per window (default %d)\n"
            "  -r REPEATS  measure each size REPEATS times, print the median"
            " (default 1)\n"
            "  -b          bind rank r to core r %% ncores (same placement"
            " under any launcher)\n"
            "Every receive of a window has its own buffer (no overlapping"
            " receives).\n"
            "Ranks >= 2 block in MPI_Recv from rank 0 until the end.\n"
            "Output: '#' comment lines, then 'size bandwidth_MBps' rows.\n",
            BW_ITERS_DEFAULT, BW_WINDOW_DEFAULT);
}

/* Returns 0, 1 for --help, or -1 on a bad option (explained on stderr if
 * loud: every rank parses the same argv, only rank 0 says why). */
static int bw_parse(int argc, char **argv, int loud, struct bw_opts *o)
{
    const char *list = NULL;
    o->max_size = BENCH_MAX_SIZE;
    o->iters = BW_ITERS_DEFAULT;
    o->warmup = 0;
    o->repeats = 1;
    o->window = BW_WINDOW_DEFAULT;
    o->bind = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (strcmp(a, "-b") == 0) {
            o->bind = 1;
            continue;
        }
        if (v == NULL) {
            bench_complain(loud, "bench_bw: %s needs a value\n", a);
            return -1;
        }
        if (strcmp(a, "-m") == 0)
            bad = bench_parse_size(v, &o->max_size);
        else if (strcmp(a, "-s") == 0)
            list = v;
        else if (strcmp(a, "-i") == 0)
            bad = bench_parse_int(v, &o->iters);
        else if (strcmp(a, "-w") == 0)
            bad = bench_parse_int(v, &o->warmup);
        else if (strcmp(a, "-W") == 0)
            bad = bench_parse_int(v, &o->window) || o->window > BW_WINDOW_MAX;
        else if (strcmp(a, "-r") == 0)
            bad = bench_parse_int(v, &o->repeats);
        else {
            bench_complain(loud, "bench_bw: unknown option %s\n", a);
            return -1;
        }
        if (bad) {
            bench_complain(loud, "bench_bw: bad value '%s' for %s\n", v, a);
            return -1;
        }
        i++;
    }
    if (list != NULL) {
        o->nsizes = bench_parse_size_list(list, o->sizes, BENCH_MAX_SIZES);
        if (o->nsizes < 0) {
            bench_complain(loud, "bench_bw: bad size list '%s'\n", list);
            return -1;
        }
        o->max_size = 0;
        for (int k = 0; k < o->nsizes; k++)
            if (o->sizes[k] > o->max_size)
                o->max_size = o->sizes[k];
    } else {
        o->nsizes =
            bench_default_sizes(1, o->max_size, o->sizes, BENCH_MAX_SIZES);
    }
    return 0;
}

/* Bounded bytes per size: a 4 MiB window of 64 is 256 MiB, so large sizes
 * get ~2 windows' worth of the small-size budget rather than 100. */
static int bw_iters_for(const struct bw_opts *o, size_t size)
{
    long long per_window = (long long)size * o->window;
    if (per_window == 0)
        return o->iters;
    long long n = BW_BYTES_PER_SIZE / per_window;
    if (n > o->iters)
        n = o->iters;
    if (n < BW_MIN_ITERS)
        n = BW_MIN_ITERS < o->iters ? BW_MIN_ITERS : o->iters;
    return (int)n;
}

/* n windows of 'size' bytes from 0 to 1; returns elapsed seconds as seen
 * by rank 0 (from the first send to the last ack). */
static double bw_run(int rank, const struct bw_opts *o, char *sbuf, char *rbuf,
                     size_t rstride, MPI_Request *reqs, MPI_Status *stats,
                     size_t size, int n)
{
    int count = (int)size;
    char ack = 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (rank == 0) {
            /* All sends read the same buffer: allowed since MPI-3.0.
             * Waitall fills real statuses, as osu_bw does. */
            for (int j = 0; j < o->window; j++)
                MPI_Isend(sbuf, count, MPI_CHAR, 1, BENCH_TAG_DATA,
                          MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(o->window, reqs, stats);
            MPI_Recv(&ack, 1, MPI_CHAR, 1, BENCH_TAG_ACK, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < o->window; j++)
                MPI_Irecv(rbuf + (size_t)j * rstride, count, MPI_CHAR, 0,
                          BENCH_TAG_DATA, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(o->window, reqs, stats);
            MPI_Send(&ack, 1, MPI_CHAR, 0, BENCH_TAG_ACK, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    struct bw_opts o;
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    int pr = bw_parse(argc, argv, rank == 0, &o);
    if (pr != 0 || nranks < 2) {
        if (rank == 0) {
            if (nranks < 2 && pr == 0)
                fprintf(stderr, "bench_bw: needs at least 2 ranks\n");
            bw_usage(pr == 1 ? stdout : stderr);
        }
        MPI_Finalize();
        return pr == 1 ? 0 : 2;
    }
    if (o.bind && bench_bind_self(rank) != 0 && rank == 0)
        fprintf(stderr, "bench_bw: warning: -b: binding failed\n");

    /* Receive slots are page-aligned and distinct, so overlapping receive
     * buffers (erroneous in MPI) never happen; rank 1 holds window*max. */
    size_t rstride = (o.max_size + 4095) / 4096 * 4096;
    if (rstride == 0)
        rstride = 4096;
    char *sbuf = NULL, *rbuf = NULL;
    if (rank == 0)
        sbuf = bench_alloc(o.max_size, 'a');
    else if (rank == 1)
        rbuf = bench_alloc(rstride * (size_t)o.window, 'b');
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)o.window);
    MPI_Status *stats = malloc(sizeof(MPI_Status) * (size_t)o.window);
    double *samples = malloc(sizeof(double) * (size_t)o.repeats);
    if ((rank == 0 && sbuf == NULL) || (rank == 1 && rbuf == NULL) ||
        reqs == NULL || stats == NULL || samples == NULL) {
        fprintf(stderr, "bench_bw: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    int mpi_ver = 0, mpi_sub = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_version(&mpi_ver, &mpi_sub);
    bench_lib_version(lib);

    MPI_Barrier(MPI_COMM_WORLD);

    if (rank >= 2) {
        bench_park();
    } else {
        if (rank == 0) {
            printf("# bench_bw ranks=%d window=%d iters=%d repeats=%d"
                   " bind=%d mpi=%d.%d lib=%.60s\n",
                   nranks, o.window, o.iters, o.repeats, o.bind, mpi_ver,
                   mpi_sub, lib);
            printf("# size bandwidth_MBps\n");
            fflush(stdout);
        }
        for (int k = 0; k < o.nsizes; k++) {
            size_t size = o.sizes[k];
            int n = bw_iters_for(&o, size);
            int w = o.warmup ? o.warmup : (n / 10 > 2 ? n / 10 : 2);
            bw_run(rank, &o, sbuf, rbuf, rstride, reqs, stats, size, w);
            for (int r = 0; r < o.repeats; r++) {
                double t =
                    bw_run(rank, &o, sbuf, rbuf, rstride, reqs, stats, size, n);
                samples[r] =
                    (double)size * o.window * n / (t > 0 ? t : 1e-9) / 1e6;
            }
            if (rank == 0) {
                printf("%zu %.2f\n", size, bench_median(samples, o.repeats));
                fflush(stdout);
            }
        }
        if (rank == 0)
            bench_unpark_all(nranks);
    }

    free(samples);
    free(stats);
    free(reqs);
    free(rbuf);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
