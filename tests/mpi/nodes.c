/* SPDX-License-Identifier: MIT */
/* Several nodes (FERRY_NODES=<n> under Ferry's mpiexec; one node
 * otherwise, and under any other MPI): MPI_Comm_split_type(SHARED) gives
 * each rank its node, a contiguous block of ranks (the first size % n
 * blocks one larger); windows on a node communicator work, and on the
 * world across nodes (puts by fence, Fetch_and_op and an exclusive lock
 * on every rank's memory), while Win_allocate_shared across nodes fails
 * with MPI_ERR_RMA_SHARED (nothing hangs); collectives over the world and over
 * a communicator that mixes nodes agree with a reference; every pair exchanges
 * a message of each protocol's size (mailbox, cell, rendezvous, 3 MiB) both
 * ways, and a truncated rendezvous across nodes is MPI_ERR_TRUNCATE with
 * nothing written past the buffer. */
#include "mpitest.h"

static int nodes_of_env(void)
{
    const char *v = getenv("FERRY_NODES");
    int n = v && *v ? atoi(v) : 1;
    return mt_on_mpich() || n < 1 ? 1 : n;
}

static void check_node(int nodes)
{
    MPI_Comm node;
    MT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &node));
    int nsize, nrank;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_rank(node, &nrank);
    int base = mt_size / nodes, extra = mt_size % nodes;
    int big = extra * (base + 1);
    int me =
        mt_rank < big ? mt_rank / (base + 1) : extra + (mt_rank - big) / base;
    int first = me < extra ? me * (base + 1) : big + (me - extra) * base;
    MT_EQ(nsize, me < extra ? base + 1 : base, "node size");
    MT_EQ(nrank, mt_rank - first, "rank in the node");

    /* A window on the node works; and one on the world; a shared one on
     * the world only with one node. */
    MPI_Win w;
    int *mem;
    MT_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem,
                            &w));
    *mem = -1;
    MT_MPI(MPI_Win_fence(0, w));
    int v = mt_rank;
    MT_MPI(MPI_Put(&v, 1, MPI_INT, (nrank + 1) % nsize, 0, 1, MPI_INT, w));
    MT_MPI(MPI_Win_fence(0, w));
    MT_EQ(*mem, first + (nrank + nsize - 1) % nsize, "put within the node");
    MT_MPI(MPI_Win_free(&w));
    int *wm;
    MT_MPI(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &wm, &w));
    wm[0] = -1;
    wm[1] = 0;
    MT_MPI(MPI_Win_fence(0, w));
    MT_MPI(MPI_Put(&v, 1, MPI_INT, (mt_rank + 1) % mt_size, 0, 1, MPI_INT, w));
    MT_MPI(MPI_Win_fence(0, w));
    MT_EQ(wm[0], (mt_rank + mt_size - 1) % mt_size, "put across the world");
    /* Every rank adds its rank + 1 to every rank's counter, half of them
     * under an exclusive lock with a get and a put (read-modify-write that
     * only the lock makes safe), half by Fetch_and_op under a shared one. */
    for (int t = 0; t < mt_size; t++) {
        if (mt_rank % 2) {
            int cur = 0;
            MT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w));
            MT_MPI(MPI_Get(&cur, 1, MPI_INT, t, 1, 1, MPI_INT, w));
            MT_MPI(MPI_Win_flush(t, w));
            cur += mt_rank + 1;
            MT_MPI(MPI_Put(&cur, 1, MPI_INT, t, 1, 1, MPI_INT, w));
            MT_MPI(MPI_Win_unlock(t, w));
        } else {
            int add = mt_rank + 1, old;
            MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w));
            MT_MPI(MPI_Fetch_and_op(&add, &old, MPI_INT, t, 1, MPI_SUM, w));
            MT_MPI(MPI_Win_unlock(t, w));
        }
    }
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, w));
    MT_EQ(wm[1], mt_size * (mt_size + 1) / 2, "counter after every rank's add");
    MT_MPI(MPI_Win_unlock(mt_rank, w));
    MT_MPI(MPI_Win_free(&w));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &mem, &w);
    if (nodes > 1)
        MT_ERRCLASS(rc, MPI_ERR_RMA_SHARED, "Win_allocate_shared across nodes");
    else if (rc == MPI_SUCCESS)
        MT_MPI(MPI_Win_free(&w));

    /* Collectives on the node and on a communicator of every other rank
     * (which mixes nodes). */
    int sum = -1;
    MT_MPI(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, node));
    MT_EQ(sum, nsize * first + nsize * (nsize - 1) / 2, "node allreduce");
    MPI_Comm odd;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &odd));
    int osize;
    MPI_Comm_size(odd, &osize);
    int want = 0;
    for (int r = mt_rank % 2; r < mt_size; r += 2)
        want += r;
    MT_MPI(MPI_Allreduce(&mt_rank, &sum, 1, MPI_INT, MPI_SUM, odd));
    MT_EQ(sum, want, "allreduce of every other rank");
    size_t bn = 200000;
    uint8_t *b = mt_malloc(bn);
    if (mt_rank == mt_size - 1)
        mt_fill(b, bn, 77);
    MT_MPI(MPI_Bcast(b, (int)bn, MPI_BYTE, mt_size - 1, MPI_COMM_WORLD));
    MT_VERIFY(b, bn, 77, "bcast from the last rank");
    free(b);
    MPI_Comm_free(&odd);
    MPI_Comm_free(&node);
}

static void check_pairs(void)
{
    static const size_t sizes[] = {0, 8, 200, 3000, 70000, 3 * MT_MIB};
    size_t max = 3 * MT_MIB;
    uint8_t *s = mt_malloc(max), *r = mt_malloc(max + 64);
    for (int p = 0; p < mt_size; p++) {
        if (p == mt_rank)
            continue;
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            uint32_t seed = (uint32_t)(mt_rank * 100 + p * 10 + (int)i);
            mt_fill(s, sizes[i], seed);
            memset(r, 0xee, max + 64);
            MPI_Status st;
            MT_MPI(MPI_Sendrecv(s, (int)sizes[i], MPI_BYTE, p, (int)i, r,
                                (int)sizes[i], MPI_BYTE, p, (int)i,
                                MPI_COMM_WORLD, &st));
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MT_EQ(cnt, sizes[i], "received bytes");
            MT_VERIFY(r, sizes[i], (uint32_t)(p * 100 + mt_rank * 10 + (int)i),
                      "pair");
            MT_ALL(r + sizes[i], 64, 0xee, "past the message");
        }
    }
    /* Truncation of a rendezvous from the last rank (another node). */
    int last = mt_size - 1;
    if (mt_rank == last) {
        mt_fill(s, MT_MIB, 5);
        MT_MPI(MPI_Send(s, MT_MIB, MPI_BYTE, 0, 99, MPI_COMM_WORLD));
    } else if (mt_rank == 0) {
        memset(r, 0xee, max + 64);
        MPI_Status st;
        int rc = MPI_Recv(r, 100000, MPI_BYTE, last, 99, MPI_COMM_WORLD, &st);
        MT_ERRCLASS(rc, MPI_ERR_TRUNCATE, "1 MiB into 100000 bytes");
        MT_VERIFY(r, 100000, 5, "truncated message");
        MT_ALL(r + 100000, 64, 0xee, "past the receive buffer");
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    if (argc > 1 && !strcmp(argv[1], "--finalize")) {
        /* Only a barrier before MPI_Finalize: most pairs of nodes meet
         * first in the goodbyes (tests/scripts/nodes_finalize.sh). */
        MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        return mt_finish("nodes");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check_node(nodes_of_env());
    check_pairs();
    return mt_finish("nodes");
}
