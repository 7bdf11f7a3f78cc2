/* SPDX-License-Identifier: MIT */
/* The large-count (MPI-4 "_c") collectives with one count per call, blocking
 * and nonblocking: Bcast, Reduce, Allreduce, Reduce_local,
 * Reduce_scatter_block, Scan, Exscan, Gather, Scatter, Allgather, Alltoall.
 * Counts are MPI_Count (modest values: the memory of a count beyond
 * INT_MAX is not for a test machine), results exact, MPI_IN_PLACE where
 * allowed, and a negative count is MPI_ERR_COUNT. */
#include "mpitest.h"

enum { N = 1000 }; /* elements per rank and per block */

static long val(int rank, MPI_Count i)
{
    return (long)rank * 1000003L + (long)i * 7L + 1;
}

static void bcast_and_reductions(int nb)
{
    long *buf = mt_malloc(N * sizeof(long));
    long *out = mt_malloc(N * sizeof(long));
    MPI_Request rq;
    for (int root = 0; root < mt_size; root++) {
        for (MPI_Count i = 0; i < N; i++)
            buf[i] = mt_rank == root ? val(root, i) : -1;
        if (nb) {
            MT_MPI(MPI_Ibcast_c(buf, N, MPI_LONG, root, MPI_COMM_WORLD, &rq));
            MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MT_MPI(MPI_Bcast_c(buf, N, MPI_LONG, root, MPI_COMM_WORLD));
        }
        for (MPI_Count i = 0; i < N; i++)
            MT_CHECK(buf[i] == val(root, i), "Bcast_c root %d elem %lld", root,
                     (long long)i);
    }

    /* sum over ranks r of val(r, i) */
    long rsum_base = 0;
    for (int r = 0; r < mt_size; r++)
        rsum_base += (long)r * 1000003L;
    for (MPI_Count i = 0; i < N; i++)
        buf[i] = val(mt_rank, i);
    int root = mt_size - 1;
    memset(out, 0, N * sizeof(long));
    if (nb) {
        MT_MPI(MPI_Ireduce_c(buf, out, N, MPI_LONG, MPI_SUM, root,
                             MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(
            MPI_Reduce_c(buf, out, N, MPI_LONG, MPI_SUM, root, MPI_COMM_WORLD));
    }
    if (mt_rank == root)
        for (MPI_Count i = 0; i < N; i++)
            MT_CHECK(out[i] == rsum_base + mt_size * ((long)i * 7L + 1),
                     "Reduce_c elem %lld", (long long)i);

    /* Allreduce in place, MAX */
    for (MPI_Count i = 0; i < N; i++)
        out[i] = val(mt_rank, i);
    if (nb) {
        MT_MPI(MPI_Iallreduce_c(MPI_IN_PLACE, out, N, MPI_LONG, MPI_MAX,
                                MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Allreduce_c(MPI_IN_PLACE, out, N, MPI_LONG, MPI_MAX,
                               MPI_COMM_WORLD));
    }
    for (MPI_Count i = 0; i < N; i++)
        MT_CHECK(out[i] == val(mt_size - 1, i), "Allreduce_c elem %lld",
                 (long long)i);

    /* Scan and Exscan: prefix sums of (rank + 1) */
    long one = mt_rank + 1, pre = -5;
    if (nb) {
        MT_MPI(
            MPI_Iscan_c(&one, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Scan_c(&one, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    }
    MT_EQ(pre, (long)(mt_rank + 1) * (mt_rank + 2) / 2, "Scan_c");
    pre = -5;
    if (nb) {
        MT_MPI(MPI_Iexscan_c(&one, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD,
                             &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Exscan_c(&one, &pre, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    }
    if (mt_rank > 0)
        MT_EQ(pre, (long)mt_rank * (mt_rank + 1) / 2, "Exscan_c");

    /* Reduce_scatter_block: block b of every rank's contribution summed
     * arrives at rank b. */
    long *contrib = mt_malloc((size_t)mt_size * N * sizeof(long));
    for (int b = 0; b < mt_size; b++)
        for (MPI_Count i = 0; i < N; i++)
            contrib[b * N + i] = val(mt_rank, b * N + i);
    if (nb) {
        MT_MPI(MPI_Ireduce_scatter_block_c(contrib, out, N, MPI_LONG, MPI_SUM,
                                           MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Reduce_scatter_block_c(contrib, out, N, MPI_LONG, MPI_SUM,
                                          MPI_COMM_WORLD));
    }
    for (MPI_Count i = 0; i < N; i++) {
        MPI_Count g = (MPI_Count)mt_rank * N + i;
        MT_CHECK(out[i] == rsum_base + mt_size * ((long)g * 7L + 1),
                 "Reduce_scatter_block_c elem %lld", (long long)i);
    }
    free(contrib);
    free(buf);
    free(out);
}

static void data_movement(int nb)
{
    size_t all = (size_t)mt_size * N;
    long *mine = mt_malloc(N * sizeof(long));
    long *gath = mt_malloc(all * sizeof(long));
    long *blocks = mt_malloc(all * sizeof(long));
    MPI_Request rq;
    for (MPI_Count i = 0; i < N; i++)
        mine[i] = val(mt_rank, i);

    int root = mt_size > 1 ? 1 : 0;
    memset(gath, 0, all * sizeof(long));
    if (nb) {
        MT_MPI(MPI_Igather_c(mine, N, MPI_LONG, gath, N, MPI_LONG, root,
                             MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Gather_c(mine, N, MPI_LONG, gath, N, MPI_LONG, root,
                            MPI_COMM_WORLD));
    }
    if (mt_rank == root)
        for (int r = 0; r < mt_size; r++)
            for (MPI_Count i = 0; i < N; i++)
                MT_CHECK(gath[r * N + i] == val(r, i), "Gather_c %d/%lld", r,
                         (long long)i);

    /* Scatter: the root's block r goes to rank r. */
    for (int r = 0; r < mt_size; r++)
        for (MPI_Count i = 0; i < N; i++)
            blocks[r * N + i] = val(100 + r, i);
    memset(mine, 0, N * sizeof(long));
    if (nb) {
        MT_MPI(MPI_Iscatter_c(blocks, N, MPI_LONG, mine, N, MPI_LONG, 0,
                              MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Scatter_c(blocks, N, MPI_LONG, mine, N, MPI_LONG, 0,
                             MPI_COMM_WORLD));
    }
    for (MPI_Count i = 0; i < N; i++)
        MT_CHECK(mine[i] == val(100 + mt_rank, i), "Scatter_c elem %lld",
                 (long long)i);

    for (MPI_Count i = 0; i < N; i++)
        mine[i] = val(mt_rank, i);
    memset(gath, 0, all * sizeof(long));
    if (nb) {
        MT_MPI(MPI_Iallgather_c(mine, N, MPI_LONG, gath, N, MPI_LONG,
                                MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Allgather_c(mine, N, MPI_LONG, gath, N, MPI_LONG,
                               MPI_COMM_WORLD));
    }
    for (int r = 0; r < mt_size; r++)
        for (MPI_Count i = 0; i < N; i++)
            MT_CHECK(gath[r * N + i] == val(r, i), "Allgather_c %d/%lld", r,
                     (long long)i);

    /* Alltoall: block d of rank s is val(s * 64 + d, i). */
    for (int d = 0; d < mt_size; d++)
        for (MPI_Count i = 0; i < N; i++)
            blocks[d * N + i] = val(mt_rank * 64 + d, i);
    memset(gath, 0, all * sizeof(long));
    if (nb) {
        MT_MPI(MPI_Ialltoall_c(blocks, N, MPI_LONG, gath, N, MPI_LONG,
                               MPI_COMM_WORLD, &rq));
        MT_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Alltoall_c(blocks, N, MPI_LONG, gath, N, MPI_LONG,
                              MPI_COMM_WORLD));
    }
    for (int s = 0; s < mt_size; s++)
        for (MPI_Count i = 0; i < N; i++)
            MT_CHECK(gath[s * N + i] == val(s * 64 + mt_rank, i),
                     "Alltoall_c from %d elem %lld", s, (long long)i);
    free(mine);
    free(gath);
    free(blocks);
}

static void local_and_errors(void)
{
    long in[4] = {1, 2, 3, 4}, io[4] = {10, 20, 30, 40};
    MT_MPI(MPI_Reduce_local_c(in, io, 4, MPI_LONG, MPI_PROD));
    MT_CHECK(io[0] == 10 && io[1] == 40 && io[2] == 90 && io[3] == 160,
             "Reduce_local_c");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_ERRCLASS(MPI_Bcast_c(in, -1, MPI_LONG, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
                "Bcast_c negative count");
    MT_ERRCLASS(MPI_Allreduce_c(in, io, (MPI_Count)-3, MPI_LONG, MPI_SUM,
                                MPI_COMM_WORLD),
                MPI_ERR_COUNT, "Allreduce_c negative count");
    MT_ERRCLASS(
        MPI_Gather_c(in, 1, MPI_LONG, io, 1, MPI_LONG, mt_size, MPI_COMM_WORLD),
        MPI_ERR_ROOT, "Gather_c bad root");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    bcast_and_reductions(0);
    bcast_and_reductions(1);
    data_movement(0);
    data_movement(1);
    local_and_errors();
    return mt_finish("coll_c");
}
