/* SPDX-License-Identifier: MIT */
/* OSU-style ping-pong latency between ranks 0 and 1 with MPI_Send/MPI_Recv,
 * in plain standard MPI so the same source builds against Ferry, MPICH and
 * Open MPI. Prints one-way latency (half the round trip) in microseconds;
 * with -x the time of one exchange instead (both ranks MPI_Irecv from the
 * other, MPI_Send to it, MPI_Wait: a halo exchange's shape), with -X the
 * same with MPI_Isend and MPI_Waitall. */
#define _GNU_SOURCE /* sched_setaffinity for -b; strtok_r */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench_common.h"

/* Defaults follow osu_latency: 10000 iterations (1000 warm-up) up to 8 KiB,
 * fewer above so a full sweep stays around a second on a laptop. */
#define LAT_ITERS_DEFAULT 10000
#define LAT_LARGE_FROM 8192
#define LAT_MIN_ITERS 50

struct lat_opts {
    size_t max_size;
    int iters;       /* for sizes <= LAT_LARGE_FROM; scaled down above */
    int warmup;      /* 0 = iters / 10 */
    int repeats;     /* per size; the median is printed */
    double min_time; /* seconds; > 0 repeats batches of iters until then */
    int bind;
    int dist;     /* receive buffers this many bytes past a page boundary */
    int exchange; /* -x (1): Irecv + Send + Wait on both ranks; -X (2):
                   * Irecv + Isend + Waitall */
    int nsizes;
    size_t sizes[BENCH_MAX_SIZES];
};

static void lat_usage(FILE *f)
{
    fprintf(f,
            "usage: bench_latency [-m MAX] [-s SIZE[,SIZE...]] [-i ITERS]"
            " [-w WARMUP] [-r REPEATS] [-t SECONDS] [-b] [-d DIST] [-x|-X]\n"
            "  -m MAX      largest size of the 0,1,2,4,... sweep (default "
            "4M; K/M suffixes)\n"
            "  -s SIZES    measure only these sizes (comma separated)\n"
            "  -i ITERS    round trips per size up to 8 KiB (default %d);"
            " scaled down above\n"
            "  -w WARMUP   untimed round trips first (default ITERS/10)\n"
            "  -r REPEATS  measure each size REPEATS times, print the median"
            " (default 1)\n"
            "  -t SECONDS  repeat batches of ITERS until at least SECONDS"
            " have been timed\n"
            "              (spans many scheduler slices when ranks outnumber"
            " cores)\n"
            "  -b          bind rank r to core r %% ncores (same placement"
            " under any launcher)\n"
            "  -d DIST     receive buffers DIST bytes (0-4095) past a page"
            " boundary, send\n"
            "              buffers at one: every copy's destination is DIST"
            " past its source\n"
            "              modulo 4096 (two malloc'd buffers: 16)\n"
            "  -x          exchanges instead of a ping-pong: both ranks"
            " MPI_Irecv from the\n"
            "              other, MPI_Send to it, MPI_Wait; prints the time"
            " of one exchange\n"
            "  -X          the same with MPI_Isend and MPI_Waitall instead of"
            " MPI_Send and\n"
            "              MPI_Wait\n"
            "Ranks >= 2 block in MPI_Recv from rank 0 until the end.\n"
            "Output: '#' comment lines, then 'size latency_us' rows.\n",
            LAT_ITERS_DEFAULT);
}

/* Returns 0, 1 for --help, or -1 on a bad option (explained on stderr if
 * loud: every rank parses the same argv, only rank 0 says why). */
static int lat_parse(int argc, char **argv, int loud, struct lat_opts *o)
{
    const char *list = NULL;
    o->max_size = BENCH_MAX_SIZE;
    o->iters = LAT_ITERS_DEFAULT;
    o->warmup = 0;
    o->repeats = 1;
    o->min_time = 0;
    o->bind = 0;
    o->dist = 0;
    o->exchange = 0;
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
        if (strcmp(a, "-x") == 0 || strcmp(a, "-X") == 0) {
            o->exchange = a[1] == 'x' ? 1 : 2;
            continue;
        }
        if (v == NULL) {
            bench_complain(loud, "bench_latency: %s needs a value\n", a);
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
        else if (strcmp(a, "-r") == 0)
            bad = bench_parse_int(v, &o->repeats);
        else if (strcmp(a, "-t") == 0)
            bad = bench_parse_seconds(v, &o->min_time);
        else if (strcmp(a, "-d") == 0)
            bad = strcmp(v, "0") != 0 &&
                  (bench_parse_int(v, &o->dist) || o->dist > 4095);
        else {
            bench_complain(loud, "bench_latency: unknown option %s\n", a);
            return -1;
        }
        if (bad) {
            bench_complain(loud, "bench_latency: bad value '%s' for %s\n", v,
                           a);
            return -1;
        }
        i++;
    }
    if (list != NULL) {
        o->nsizes = bench_parse_size_list(list, o->sizes, BENCH_MAX_SIZES);
        if (o->nsizes < 0) {
            bench_complain(loud, "bench_latency: bad size list '%s'\n", list);
            return -1;
        }
        o->max_size = 0;
        for (int k = 0; k < o->nsizes; k++)
            if (o->sizes[k] > o->max_size)
                o->max_size = o->sizes[k];
    } else {
        o->nsizes =
            bench_default_sizes(0, o->max_size, o->sizes, BENCH_MAX_SIZES);
    }
    return 0;
}

/* Keep the bytes moved per size roughly constant above 8 KiB, as OSU does
 * with its separate large-message iteration count. */
static int lat_iters_for(const struct lat_opts *o, size_t size)
{
    if (size <= LAT_LARGE_FROM)
        return o->iters;
    long long n = (long long)o->iters * LAT_LARGE_FROM / (long long)size;
    if (n < LAT_MIN_ITERS)
        n = LAT_MIN_ITERS < o->iters ? LAT_MIN_ITERS : o->iters;
    return (int)n;
}

/* Runs n round trips of 'size' bytes; returns the elapsed seconds (on
 * rank 0, meaningful; rank 1 returns its own, unused). */
static double lat_pingpong(int rank, char *sbuf, char *rbuf, size_t size, int n,
                           int exchange)
{
    int count = (int)size;
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (exchange == 2) {
            MPI_Request q[2];
            MPI_Irecv(rbuf, count, MPI_CHAR, 1 - rank, BENCH_TAG_DATA,
                      MPI_COMM_WORLD, &q[0]);
            MPI_Isend(sbuf, count, MPI_CHAR, 1 - rank, BENCH_TAG_DATA,
                      MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        } else if (exchange) {
            MPI_Request q;
            MPI_Irecv(rbuf, count, MPI_CHAR, 1 - rank, BENCH_TAG_DATA,
                      MPI_COMM_WORLD, &q);
            MPI_Send(sbuf, count, MPI_CHAR, 1 - rank, BENCH_TAG_DATA,
                     MPI_COMM_WORLD);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Send(sbuf, count, MPI_CHAR, 1, BENCH_TAG_DATA, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, MPI_CHAR, 1, BENCH_TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, count, MPI_CHAR, 0, BENCH_TAG_DATA, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(sbuf, count, MPI_CHAR, 0, BENCH_TAG_DATA, MPI_COMM_WORLD);
        }
    }
    return MPI_Wtime() - t0;
}

/* One measurement of n-round-trip batches: a single batch, or with -t as
 * many as fit in min_time. Rank 0 alone decides whether to go on and tells
 * rank 1 between batches (untimed), so both run the same count. Returns
 * the one-way latency in microseconds (meaningful on rank 0). */
static double lat_measure(int rank, const struct lat_opts *o, char *sbuf,
                          char *rbuf, size_t size, int n)
{
    double t = 0;
    long long total = 0;
    int more;
    do {
        t += lat_pingpong(rank, sbuf, rbuf, size, n, o->exchange);
        total += n;
        more = 0;
        if (o->min_time > 0) {
            if (rank == 0) {
                more = t < o->min_time;
                MPI_Send(&more, 1, MPI_INT, 1, BENCH_TAG_ACK, MPI_COMM_WORLD);
            } else {
                MPI_Recv(&more, 1, MPI_INT, 0, BENCH_TAG_ACK, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
        }
    } while (more);
    return t * 1e6 / ((o->exchange ? 1.0 : 2.0) * (double)total);
}

int main(int argc, char **argv)
{
    struct lat_opts o;
    int rank, nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    int pr = lat_parse(argc, argv, rank == 0, &o);
    if (pr != 0 || nranks < 2) {
        if (rank == 0) {
            if (nranks < 2 && pr == 0)
                fprintf(stderr, "bench_latency: needs at least 2 ranks\n");
            lat_usage(pr == 1 ? stdout : stderr);
        }
        MPI_Finalize();
        return pr == 1 ? 0 : 2;
    }
    if (o.bind && bench_bind_self(rank) != 0 && rank == 0)
        fprintf(stderr, "bench_latency: warning: -b: binding failed\n");

    char *sbuf = bench_alloc(o.max_size, 'a');
    char *rbase = bench_alloc(o.max_size + (size_t)o.dist, 'b');
    char *rbuf = rbase ? rbase + o.dist : NULL;
    double *samples = malloc(sizeof(double) * (size_t)o.repeats);
    if (sbuf == NULL || rbuf == NULL || samples == NULL) {
        fprintf(stderr, "bench_latency: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    int mpi_ver = 0, mpi_sub = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_version(&mpi_ver, &mpi_sub);
    bench_lib_version(lib);

    /* Everyone is up before anyone parks or starts timing. */
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank >= 2) {
        bench_park();
    } else {
        if (rank == 0) {
            printf("# bench_latency ranks=%d iters=%d repeats=%d"
                   " min_time=%g bind=%d exchange=%d mpi=%d.%d lib=%.60s\n",
                   nranks, o.iters, o.repeats, o.min_time, o.bind, o.exchange,
                   mpi_ver, mpi_sub, lib);
            if (o.dist)
                printf("# receive buffers %d bytes past a page boundary\n",
                       o.dist);
            printf(o.exchange ? "# size exchange_us\n" : "# size latency_us\n");
            fflush(stdout);
        }
        for (int k = 0; k < o.nsizes; k++) {
            size_t size = o.sizes[k];
            int n = lat_iters_for(&o, size);
            int w = o.warmup ? o.warmup : (n / 10 > 0 ? n / 10 : 1);
            lat_pingpong(rank, sbuf, rbuf, size, w, o.exchange);
            for (int r = 0; r < o.repeats; r++)
                samples[r] = lat_measure(rank, &o, sbuf, rbuf, size, n);
            if (rank == 0) {
                printf("%zu %.3f\n", size, bench_median(samples, o.repeats));
                fflush(stdout);
            }
        }
        if (rank == 0)
            bench_unpark_all(nranks);
    }

    free(samples);
    free(rbase);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
