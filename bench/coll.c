/* SPDX-License-Identifier: MIT */
/* bench_coll: latency of one collective over sizes, for ferry-bench
 * --coll (bench/lab/coll.c), which runs it under mpiexec once per
 * algorithm setting (FERRY_COLL, FERRY_COLL_CMA_MIN,
 * FERRY_COLL_SLICE_MIN in the environment) and rank count.
 *
 *     bench_coll --op bcast|allreduce|reduce|ibcast|iallreduce
 *                [--sizes 8,1K,64K] [--quick]
 *
 * For each size (bytes; the reductions sum ints, so sizes are rounded
 * down to whole ints): a warm-up, then iterations timed on every rank,
 * the figure being the slowest rank's time per call. Before the timed
 * loop, one call's result is checked on every rank (broadcast bytes,
 * sums). Rank 0 prints one line per size:
 *
 *     coll,<op>,<size>,<iterations>,<us per call>,<1 if verified>
 *
 * Plain MPI: builds with any implementation's mpicc. */
#include "bench_common.h"

#include <stdint.h>

enum op { OP_BCAST, OP_ALLREDUCE, OP_REDUCE, OP_IBCAST, OP_IALLREDUCE };

static const char *const op_names[] = {"bcast", "allreduce", "reduce", "ibcast",
                                       "iallreduce"};

static int run_once(enum op op, char *buf, int *in, int *out, size_t size,
                    int root)
{
    int n = (int)(size / sizeof(int));
    MPI_Request r;
    switch (op) {
    case OP_BCAST:
        return MPI_Bcast(buf, (int)size, MPI_BYTE, root, MPI_COMM_WORLD);
    case OP_IBCAST:
        MPI_Ibcast(buf, (int)size, MPI_BYTE, root, MPI_COMM_WORLD, &r);
        return MPI_Wait(&r, MPI_STATUS_IGNORE);
    case OP_ALLREDUCE:
        return MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    case OP_IALLREDUCE:
        MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        return MPI_Wait(&r, MPI_STATUS_IGNORE);
    case OP_REDUCE:
        return MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    }
    return MPI_ERR_OTHER;
}

/* One checked call: 1 if this rank's result is right. */
static int verify(enum op op, char *buf, int *in, int *out, size_t size, int me,
                  int np)
{
    int n = (int)(size / sizeof(int));
    int root = np - 1;
    if (op == OP_BCAST || op == OP_IBCAST) {
        for (size_t i = 0; i < size; i++)
            buf[i] = me == root ? (char)(i * 7 + 3) : 0;
        run_once(op, buf, in, out, size, root);
        for (size_t i = 0; i < size; i++)
            if (buf[i] != (char)(i * 7 + 3))
                return 0;
        return 1;
    }
    for (int i = 0; i < n; i++) {
        in[i] = me * 1000 + i % 1000;
        out[i] = -1;
    }
    run_once(op, buf, in, out, size, root);
    if (op == OP_REDUCE && me != root)
        return 1;
    for (int i = 0; i < n; i++)
        if (out[i] != np * (np - 1) / 2 * 1000 + np * (i % 1000))
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int op = -1, quick = 0;
    size_t sizes[BENCH_MAX_SIZES];
    int nsizes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            i++;
            for (int k = 0; k < (int)(sizeof(op_names) / sizeof(*op_names));
                 k++)
                if (!strcmp(argv[i], op_names[k]))
                    op = k;
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *list = strdup(argv[++i]);
            for (char *save = NULL, *t = strtok_r(list, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                if (nsizes == BENCH_MAX_SIZES ||
                    bench_parse_size(t, &sizes[nsizes]) != 0) {
                    bench_complain(me == 0, "bench_coll: bad size '%s'\n", t);
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                nsizes++;
            }
            free(list);
        } else {
            bench_complain(me == 0,
                           "usage: bench_coll --op bcast|allreduce|reduce|"
                           "ibcast|iallreduce [--sizes LIST] [--quick]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (op < 0) {
        bench_complain(me == 0, "bench_coll: --op is required\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (nsizes == 0) {
        static const size_t def[] = {8, 1024, 16384, 65536, 1 << 20};
        for (size_t k = 0; k < sizeof(def) / sizeof(*def); k++)
            sizes[nsizes++] = def[k];
    }
    size_t max = 0;
    for (int k = 0; k < nsizes; k++)
        max = sizes[k] > max ? sizes[k] : max;
    char *buf = malloc(max + 1);
    int *in = malloc(max + sizeof(int)), *out = malloc(max + sizeof(int));
    if (!buf || !in || !out) {
        bench_complain(1, "bench_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 1, max + 1);
    for (size_t i = 0; i < max / sizeof(int) + 1; i++)
        in[i] = (int)i;
    for (int k = 0; k < nsizes; k++) {
        size_t size = sizes[k];
        /* About 8 MiB of data (quick: 2 MiB) per size, 10 to 1000
         * calls. */
        size_t budget = quick ? (2u << 20) : (8u << 20);
        int iters = size ? (int)(budget / size) : 1000;
        iters = iters < 10 ? 10 : iters > 1000 ? 1000 : iters;
        if (quick && iters > 200)
            iters = 200;
        int ok = verify((enum op)op, buf, in, out, size, me, np);
        for (int w = 0; w < iters / 10 + 1; w++)
            run_once((enum op)op, buf, in, out, size, w % np);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int it = 0; it < iters; it++)
            run_once((enum op)op, buf, in, out, size, it % np);
        double us = (MPI_Wtime() - t0) * 1e6 / iters, worst = 0;
        int all_ok = 0;
        MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
        if (me == 0)
            printf("coll,%s,%zu,%d,%.3f,%d\n", op_names[op], size, iters, worst,
                   all_ok);
    }
    fflush(stdout);
    free(buf);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
